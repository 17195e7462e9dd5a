//! Hot reload through the API and by the file watcher, on a small pack of the test's own.

mod support;

use std::path::Path;
use std::time::Duration;

use reqwest::Method;
use serde_json::Value;
use support::{problem, TestServer, BOOTSTRAP};

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A one-rule pack `tiny@{version}`: the invoice must have an ID starting with `{prefix}`.
fn tiny_pack(root: &Path, version: &str, prefix: &str) {
    let _ = std::fs::remove_dir_all(root.join("tiny"));
    write(
        root,
        "profiles.yaml",
        &format!(
            "profiles:\n  - id: tiny\n    version: '{version}'\n    packs: [tiny@{version}]\n"
        ),
    );
    write(root, &format!("tiny/{version}/pack.yaml"), &format!(
        "pack: tiny\nversion: '{version}'\ntitle: Tiny\nnamespaces:\n  ubl: urn:oasis:names:specification:ubl:schema:xsd:Invoice-2\n  cbc: urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2\npatterns:\n  - patterns/p.yaml\n"));
    write(root, &format!("tiny/{version}/patterns/p.yaml"), &format!(
        "pattern: p\nrules:\n  - context: /ubl:Invoice\n    asserts:\n      - id: TINY-1\n        flag: fatal\n        test: starts-with(cbc:ID, '{prefix}')\n        message: The invoice number (BT-1) must start with {prefix}.\n        remediation: Number invoices with the prefix {prefix}.\n        business_terms: [BT-1]\n"));
}

async fn tiny_server(watch: bool) -> (TestServer, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let packs = dir.path().join("packs");
    tiny_pack(&packs, "1.0", "INV");
    let mut c = support::config(dir.path());
    c.rulepacks = packs.clone();
    c.watch_rulepacks = watch;
    (TestServer::launch(c, None, dir).await, packs)
}

async fn verdict(s: &TestServer) -> (String, String) {
    let r = s
        .v1(Method::POST, "/v1/invoice/validate?profile=tiny", BOOTSTRAP)
        .header("Content-Type", "application/xml")
        .body(support::example("invoice-sk.xml"))
        .send()
        .await
        .unwrap();
    let body: Value = r.json().await.unwrap();
    (
        body["verdict"].as_str().unwrap().to_string(),
        body["profile"].as_str().unwrap().to_string(),
    )
}

#[tokio::test]
async fn reload_through_the_api_swaps_packs_and_keeps_them_when_broken() {
    let (s, packs) = tiny_server(false).await;
    let id = String::from_utf8(support::example("invoice-sk.xml")).unwrap();
    let first_id = id
        .split("<cbc:ID>")
        .nth(1)
        .unwrap()
        .split('<')
        .next()
        .unwrap()
        .to_string();
    tiny_pack(&packs, "1.0", &first_id[..2]);
    // Not reloaded yet: the running version still applies (prefix INV fails).
    assert_eq!(verdict(&s).await, ("invalid".into(), "tiny@1.0".into()));

    tiny_pack(&packs, "1.1", &first_id[..2]);
    let r = s
        .v1(Method::POST, "/v1/rulepacks/reload", BOOTSTRAP)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let outcome: Value = r.json().await.unwrap();
    assert_eq!(outcome["previous"], serde_json::json!(["tiny@1.0"]));
    assert_eq!(outcome["versions"], serde_json::json!(["tiny@1.1"]));
    assert_eq!(verdict(&s).await, ("valid".into(), "tiny@1.1".into()));

    // A broken pack: 422 with the errors, the running version stays.
    write(
        &packs,
        "tiny/1.1/patterns/p.yaml",
        "pattern: p\nrules:\n  - context: /ubl:Invoice[\n",
    );
    let p = problem(
        s.v1(Method::POST, "/v1/rulepacks/reload", BOOTSTRAP)
            .send()
            .await
            .unwrap(),
        422,
    )
    .await;
    assert!(p["errors"].as_str().unwrap().contains("p.yaml"), "{p}");
    assert_eq!(p["active_versions"], serde_json::json!(["tiny@1.1"]));
    assert_eq!(verdict(&s).await, ("valid".into(), "tiny@1.1".into()));
    let list: Value = s
        .v1(Method::GET, "/v1/rulepacks", BOOTSTRAP)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["last_reload"]["ok"], false);
    assert_eq!(list["packs"][0]["version"], "1.1");
    assert_eq!(list["profiles"][0]["id"], "tiny");
}

#[tokio::test]
async fn the_file_watcher_reloads_on_change() {
    let (s, packs) = tiny_server(true).await;
    let list: Value = s
        .v1(Method::GET, "/v1/rulepacks", BOOTSTRAP)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["watching"], true);
    tiny_pack(&packs, "2.0", "INV");
    let mut seen = String::new();
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let list: Value = s
            .v1(Method::GET, "/v1/rulepacks", BOOTSTRAP)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        seen = list["packs"][0]["version"]
            .as_str()
            .unwrap_or("")
            .to_string();
        if seen == "2.0" {
            break;
        }
    }
    assert_eq!(seen, "2.0");
}
