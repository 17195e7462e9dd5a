//! The error catalogue and the profile families over HTTP (issue 18): `GET /v1/rules`
//! searches every rule of every installed pack version, `GET /v1/rules/{id}` shows one with
//! the versions carrying it and what changed, `GET /v1/rules/profiles` the versions and
//! windows of each profile and the one in force on a day.

use crate::support::{problem, TestServer, BOOTSTRAP};
use reqwest::Method;
use serde_json::Value;

async fn get(s: &TestServer, path: &str) -> reqwest::Response {
    s.v1(Method::GET, path, BOOTSTRAP).send().await.unwrap()
}

async fn json(s: &TestServer, path: &str) -> Value {
    let r = get(s, path).await;
    assert_eq!(r.status(), 200, "{path}");
    r.json().await.unwrap()
}

fn ids(list: &Value) -> Vec<String> {
    list["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn the_catalogue_is_searched_and_paged_by_id() {
    let s = TestServer::start().await;

    // The Slovak rules of Peppol BIS 3.0.22.
    let list = json(&s, "/v1/rules?q=sk-r-00&pack=peppol-bis3@2026.11").await;
    assert_eq!(
        ids(&list),
        ["SK-R-001", "SK-R-002", "SK-R-003", "SK-R-004", "SK-R-005", "SK-R-006", "SK-R-007"]
    );
    assert_eq!(list["total"], 7);
    assert!(list["next"].is_null());
    let first = &list["rules"][0];
    assert_eq!(first["pack"], "peppol-bis3@2026.11");
    assert_eq!(first["flag"], "warning");
    assert_eq!(first["owner"], "document-settings");
    assert_eq!(
        first["versions"],
        serde_json::json!(["peppol-bis3@2026.11", "sk-national@2027.1"])
    );
    assert!(!first["remediation"].as_str().unwrap().is_empty());

    // Every filter holds for the version shown.
    let list = json(
        &s,
        "/v1/rules?owner=buyer-master-data&business_term=BT-44&limit=200",
    )
    .await;
    assert!(list["total"].as_u64().unwrap() > 0, "{list}");
    for r in list["rules"].as_array().unwrap() {
        assert_eq!(r["owner"], "buyer-master-data", "{r}");
        assert!(
            r["business_terms"]
                .as_array()
                .unwrap()
                .contains(&"BT-44".into()),
            "{r}"
        );
    }
    // R054 was a warning in 3.0.21 and is fatal in 3.0.22.
    let q = "/v1/rules?q=PEPPOL-COMMON-R054&pack=peppol-bis3@2026.5";
    assert_eq!(json(&s, &format!("{q}&severity=fatal")).await["total"], 0);
    assert_eq!(json(&s, &format!("{q}&severity=warning")).await["total"], 1);

    // Paging by id walks every rule once, in order.
    let all = json(&s, "/v1/rules?limit=200").await;
    let total = all["total"].as_u64().unwrap() as usize;
    assert!(total > 1000, "{total}");
    let mut walked: Vec<String> = Vec::new();
    let mut path = "/v1/rules?limit=200".to_string();
    loop {
        let page = json(&s, &path).await;
        walked.extend(ids(&page));
        match page["next"].as_str() {
            Some(next) => path = format!("/v1/rules?limit=200&after={next}"),
            None => break,
        }
    }
    assert_eq!(walked.len(), total);
    assert!(walked.windows(2).all(|w| w[0] < w[1]));

    // Out of range: problems, not empty lists.
    let p = problem(get(&s, "/v1/rules?limit=0").await, 422).await;
    assert_eq!(p["field"], "limit", "{p}");
    problem(get(&s, "/v1/rules?severity=critical").await, 400).await;
    // A key is needed.
    let r = reqwest::get(s.url("/v1/rules")).await.unwrap();
    assert_eq!(r.status(), 401);
}

#[tokio::test]
async fn one_rule_names_the_versions_carrying_it_and_what_changed() {
    let s = TestServer::start().await;

    let rule = json(&s, "/v1/rules/PEPPOL-COMMON-R054").await;
    assert_eq!(rule["id"], "PEPPOL-COMMON-R054");
    let versions = rule["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 2);
    assert_eq!(versions[0]["pack"], "peppol-bis3@2026.5");
    assert_eq!(versions[0]["flag"], "warning");
    assert!(versions[0]["previous"].is_null());
    assert_eq!(versions[1]["pack"], "peppol-bis3@2026.11");
    assert_eq!(versions[1]["previous"], "peppol-bis3@2026.5");
    assert_eq!(
        versions[1]["changes"],
        serde_json::json!([{"field": "flag", "from": "warning", "to": "fatal"}])
    );
    // The profiles that run it, with their flags.
    let runs: Vec<&str> = versions[1]["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["profile"].as_str().unwrap())
        .collect();
    assert!(runs.contains(&"peppol-bis3-sk@2027.2"), "{runs:?}");

    let gone = json(&s, "/v1/rules/GR-R-001-5").await;
    assert_eq!(
        gone["removed_in"],
        serde_json::json!(["peppol-bis3@2026.11"])
    );

    // A schema rule: the XML Schema layer's kinds of findings are in the catalogue too.
    let xsd = json(&s, "/v1/rules/UBL-XSD-MISSING").await;
    assert_eq!(xsd["versions"][0]["kind"], "schema");
    assert_eq!(xsd["versions"][0]["flag"], "fatal");

    let p = problem(get(&s, "/v1/rules/NO-SUCH-RULE").await, 404).await;
    assert!(
        p["detail"].as_str().unwrap().contains("NO-SUCH-RULE"),
        "{p}"
    );
}

#[tokio::test]
async fn profile_families_name_the_version_in_force_on_the_day() {
    let s = TestServer::start().await;
    let family = |list: &Value, id: &str| -> Value {
        list["families"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no family {id} in {list}"))
    };

    let list = json(&s, "/v1/rules/profiles?at=2027-01-15").await;
    assert_eq!(list["at"], "2027-01-15");
    let sk = family(&list, "peppol-bis3-sk");
    assert_eq!(sk["in_force"], "2027.2");
    assert!(sk["reason"]
        .as_str()
        .unwrap()
        .contains("in force on 2027-01-15"));
    let versions: Vec<&str> = sk["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["2027.1", "2027.2"]);
    assert_eq!(sk["versions"][0]["valid_until"], "2027-02-23");
    assert_eq!(sk["versions"][1]["valid_from"], "2026-11-23");

    // Before 3.0.22, the 3.0.21 release.
    let list = json(&s, "/v1/rules/profiles?at=2026-09-01").await;
    assert_eq!(family(&list, "peppol-bis3")["in_force"], "2026.5");
    // After 3.0.21's window: only 3.0.22.
    let list = json(&s, "/v1/rules/profiles?at=2027-03-01").await;
    assert_eq!(family(&list, "peppol-bis3")["in_force"], "2026.11");
    // A profile with one undated version is in force on any day, and needs no reason.
    let en = family(&list, "en16931-ubl");
    assert_eq!(en["in_force"], "1.3.16");
    assert!(en["reason"].is_null(), "{en}");

    let p = problem(get(&s, "/v1/rules/profiles?at=15.1.2027").await, 400).await;
    assert!(p["detail"].is_string(), "{p}");
}
