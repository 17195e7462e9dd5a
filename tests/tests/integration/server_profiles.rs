//! Date-effective profiles over HTTP (issue 18): a bare profile name, and detection, take
//! the newest profile version in force on the day asked for (`at`, default today); an
//! exact `id@version` always names that version; the report says which and why.

use crate::support::{problem, TestServer, BOOTSTRAP};
use reqwest::Method;
use serde_json::Value;

/// A corrected invoice (type 384) between two Slovak parties: allowed by Peppol BIS 3.0.22
/// (P0112), refused by 3.0.21.
fn slovak_384() -> Vec<u8> {
    std::fs::read(crate::support::repo().join("rulepacks/peppol-bis3/2026.11/fixtures/sk-384.xml"))
        .expect("fixture")
}

async fn validate(s: &TestServer, query: &str) -> reqwest::Response {
    s.v1(
        Method::POST,
        &format!("/v1/invoice/validate{query}"),
        BOOTSTRAP,
    )
    .header("Content-Type", "application/xml")
    .body(slovak_384())
    .send()
    .await
    .unwrap()
}

fn fatal_ids(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "fatal")
        .map(|f| f["rule_id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn the_version_in_force_on_the_day_is_used_and_named() {
    let s = TestServer::start().await;

    // Detected, as of 2027-01-15: the 3.0.22 Slovak profile, which allows 384.
    let report: Value = validate(&s, "?at=2027-01-15").await.json().await.unwrap();
    assert_eq!(report["verdict"], "valid", "{report}");
    assert_eq!(report["profile"], "peppol-bis3-sk@2027.2");
    let detection = report["detection"].as_str().unwrap();
    assert!(
        detection.ends_with("version 2027.2 (in force from 2026-11-23) as of 2027-01-15"),
        "{detection}"
    );

    // Named without a version: the newest in force, and why.
    let report: Value = validate(&s, "?profile=peppol-bis3-sk&at=2027-01-15")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(report["verdict"], "valid", "{report}");
    assert_eq!(report["profile"], "peppol-bis3-sk@2027.2");
    assert!(report["resolution"].as_str().unwrap().starts_with(
        "peppol-bis3-sk@2027.2: the newest version of peppol-bis3-sk in force on 2027-01-15"
    ));

    // The May 2026 release, named exactly, still refuses a Slovak 384.
    let report: Value = validate(&s, "?profile=peppol-bis3@2026.5")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(report["profile"], "peppol-bis3@2026.5");
    assert_eq!(fatal_ids(&report), ["PEPPOL-EN16931-P0112"]);
    assert!(report.get("resolution").is_none(), "{report}");

    // Before 3.0.22 was published, the bare name is 3.0.21.
    let report: Value = validate(&s, "?profile=peppol-bis3&at=2026-09-01")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(report["profile"], "peppol-bis3@2026.5");
    assert_eq!(fatal_ids(&report), ["PEPPOL-EN16931-P0112"]);
}

#[tokio::test]
async fn days_without_a_version_in_force_and_bad_dates_are_refused() {
    let s = TestServer::start().await;
    let p = problem(
        validate(&s, "?profile=peppol-bis3&at=2026-01-01").await,
        400,
    )
    .await;
    let detail = p["detail"].as_str().unwrap();
    assert!(
        detail.contains("no version is in force on 2026-01-01")
            && detail.contains("peppol-bis3@2026.5 2026-08-24 to 2027-02-23"),
        "{p}"
    );
    let r = validate(&s, "?at=15.01.2027").await;
    assert_eq!(r.status(), 400);
}
