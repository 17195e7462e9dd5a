//! Hot reload through the API and by the file watcher, on a small pack of the test's own
//! and on a copy of the shipped packs: a pack set goes live only when it matches its lock
//! files and the fixtures of its new or changed packs pass; otherwise the last good set
//! stays and the reload answer, `/ready` and `/v1/rulepacks` say why.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::{problem, JsonBody, TestServer, BOOTSTRAP};
use invex_engine::lock::write_locks;
use invex_engine::pack::PatternDef;
use reqwest::Method;
use serde_json::Value;

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const UBL_TYPES: &str = "document_types:\n  - id: ubl-invoice\n    \
    namespace: urn:oasis:names:specification:ubl:schema:xsd:Invoice-2\n    root: Invoice\n    \
    title: UBL 2.1 Invoice\n";

/// The files of a one-rule pack `tiny@{version}` (the invoice must have an ID starting
/// with `{prefix}`, a fixture of each kind) and its profile, without lock files. Returns
/// them as (relative path, text), in the order they are written.
fn tiny_files(version: &str, prefix: &str) -> Vec<(String, String)> {
    let invoice = |id: &str| {
        format!(
            "<Invoice xmlns='urn:oasis:names:specification:ubl:schema:xsd:Invoice-2' \
             xmlns:cbc='urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2'>\
             <cbc:ID>{id}</cbc:ID></Invoice>"
        )
    };
    vec![
        (
            format!("tiny/{version}/patterns/p.yaml"),
            format!(
                "pattern: p\nrules:\n  - context: /ubl:Invoice\n    asserts:\n      - id: TINY-1\n        \
                 flag: fatal\n        test: starts-with(cbc:ID, '{prefix}')\n        \
                 message: The invoice number (BT-1) must start with {prefix}.\n        \
                 remediation: Number invoices with the prefix {prefix}.\n        \
                 business_terms: [BT-1]\n        fixtures:\n          pass: [ok.xml]\n          \
                 fail: [bad.xml]\n"
            ),
        ),
        (
            format!("tiny/{version}/fixtures/ok.xml"),
            invoice(&format!("{prefix}-1")),
        ),
        (
            format!("tiny/{version}/fixtures/bad.xml"),
            invoice("ZZZ-1"),
        ),
        (
            format!("tiny/{version}/pack.yaml"),
            format!("pack: tiny\nversion: '{version}'\ntitle: Tiny\nnamespaces:\n  ubl: urn:oasis:names:specification:ubl:schema:xsd:Invoice-2\n  cbc: urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2\npatterns:\n  - patterns/p.yaml\n"),
        ),
        (
            "profiles.yaml".to_string(),
            format!(
                "{UBL_TYPES}profiles:\n  - id: tiny\n    version: '{version}'\n    \
                 packs: [tiny@{version}]\n    documents: [ubl-invoice]\n"
            ),
        ),
    ]
}

/// Replace the `tiny` pack by `tiny@{version}` and lock it (as `invex rules lock` does).
fn tiny_pack(root: &Path, version: &str, prefix: &str) {
    let _ = std::fs::remove_dir_all(root.join("tiny"));
    for (rel, text) in tiny_files(version, prefix) {
        write(root, &rel, &text);
    }
    write_locks(root).unwrap();
}

/// A server on `tiny@1.0` (prefix INV), not watching.
async fn tiny_server() -> (TestServer, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let packs = dir.path().join("packs");
    tiny_pack(&packs, "1.0", "INV");
    let mut c = crate::support::config(dir.path());
    c.rulepacks = Some(packs.clone());
    (TestServer::launch(c, None, dir).await, packs)
}

async fn verdict(s: &TestServer) -> (String, String) {
    let r = s
        .v1(Method::POST, "/v1/invoice/validate?profile=tiny", BOOTSTRAP)
        .header("Content-Type", "application/xml")
        .body(crate::support::example("invoice-sk.xml"))
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
    let (s, packs) = tiny_server().await;
    let id = String::from_utf8(crate::support::example("invoice-sk.xml")).unwrap();
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

async fn reload(s: &TestServer) -> reqwest::Response {
    s.v1(Method::POST, "/v1/rulepacks/reload", BOOTSTRAP)
        .send()
        .await
        .unwrap()
}

async fn rulepacks(s: &TestServer) -> Value {
    s.v1(Method::GET, "/v1/rulepacks", BOOTSTRAP).value().await
}

async fn ready(s: &TestServer) -> Value {
    let r = s.client.get(s.url("/ready")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    r.json().await.unwrap()
}

/// The reasons a refusal gives for `pack`.
fn reasons(refused: &Value, pack: &str) -> Vec<String> {
    refused
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["pack"] == pack)
        .unwrap_or_else(|| panic!("no refusal for {pack}: {refused}"))["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// A server on a copy of the shipped packs (with their lock files).
async fn shipped_copy_server() -> (TestServer, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let packs = dir.path().join("packs");
    copy_dir(&crate::support::repo().join("rulepacks"), &packs);
    let mut c = crate::support::config(dir.path());
    c.rulepacks = Some(packs.clone());
    (TestServer::launch(c, None, dir).await, packs)
}

fn pack_rules(list: &Value, pack: &str) -> u64 {
    list["packs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == pack)
        .unwrap()["rules"]
        .as_u64()
        .unwrap()
}

#[tokio::test]
async fn a_truncated_pattern_file_that_is_still_yaml_is_refused_and_the_last_good_set_stays() {
    let (s, packs) = shipped_copy_server().await;
    let model = packs.join("en16931-ubl/1.3.16/patterns/model.yaml");
    let text = std::fs::read_to_string(&model).unwrap();
    let full: PatternDef = invex_engine::yaml::from_str(&text).unwrap();
    // Cut at the start of a rule: what is left is valid YAML and a valid pattern.
    let marker = "\n  - context: cac:AccountingSupplierParty\n";
    let cut = text.find(marker).unwrap() + 1;
    let kept: PatternDef =
        invex_engine::yaml::from_str(&text[..cut]).expect("still a pattern file");
    let dropped = &full.rules[kept.rules.len()..];
    let dropped_checks: usize = dropped
        .iter()
        .map(|r| r.asserts.len() + r.reports.len())
        .sum();
    assert!(dropped_checks > 50, "{dropped_checks}");
    // A dropped rule and a document that must fail it.
    let (rule, fixture) = dropped
        .iter()
        .flat_map(|r| &r.asserts)
        .find(|c| !c.fixtures.fail.is_empty())
        .map(|c| (c.id.clone(), c.fixtures.fail[0].clone()))
        .unwrap();
    let fixture = std::fs::read(packs.join("en16931-ubl/1.3.16/fixtures").join(&fixture)).unwrap();
    let fires = |report: &Value| {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule_id"] == rule.as_str())
    };
    let validate = |xml: Vec<u8>| {
        s.v1(
            Method::POST,
            "/v1/invoice/validate?profile=en16931-ubl",
            BOOTSTRAP,
        )
        .header("Content-Type", "application/xml")
        .body(xml)
        .value()
    };
    let before = validate(fixture.clone()).await;
    assert!(fires(&before), "{rule}: {before}");
    let rules_before = pack_rules(&rulepacks(&s).await, "en16931-ubl");

    std::fs::write(&model, &text[..cut]).unwrap();
    let p = problem(reload(&s).await, 422).await;
    assert!(
        p["type"]
            .as_str()
            .unwrap()
            .ends_with("#rulepack-reload-refused"),
        "{p}"
    );
    let why = reasons(&p["packs"], "en16931-ubl@1.3.16");
    assert!(
        why.iter()
            .any(|r| r.starts_with("patterns/model.yaml differs from pack.lock (sha256 ")),
        "{why:?}"
    );
    let count = format!(
        "the pack compiles to {} rules, pack.lock says {rules_before}",
        rules_before as usize - dropped_checks
    );
    assert!(why.contains(&count), "{why:?}");
    assert!(p["errors"]
        .as_str()
        .unwrap()
        .contains("en16931-ubl@1.3.16: patterns/model.yaml differs"));

    // The last good set stays: same rule count, the dropped rule still fires.
    let list = rulepacks(&s).await;
    assert_eq!(pack_rules(&list, "en16931-ubl"), rules_before);
    assert_eq!(list["last_reload"]["ok"], false);
    assert_eq!(list["last_reload"]["attempt"], 2);
    let after = validate(fixture).await;
    assert_eq!(after["verdict"], "invalid");
    assert!(fires(&after), "{rule}: {after}");
    let r = ready(&s).await;
    assert_eq!(r["status"], "ready");
    assert_eq!(r["rulepack_set"], "last-good");
    assert_eq!(
        reasons(&r["last_reload"]["refused"], "en16931-ubl@1.3.16"),
        why
    );
}

#[tokio::test]
async fn a_pack_that_does_not_match_its_lock_is_refused_until_locked() {
    let (s, packs) = tiny_server().await;
    assert_eq!(ready(&s).await["rulepack_set"], "current");
    // Edited in place (the rule and its pass fixture), not locked again.
    for (rel, text) in tiny_files("1.0", "FA") {
        write(&packs, &rel, &text);
    }
    let p = problem(reload(&s).await, 422).await;
    let why = reasons(&p["packs"], "tiny@1.0");
    assert_eq!(why.len(), 2, "{why:?}");
    assert!(
        why[0].starts_with("fixtures/ok.xml differs from pack.lock (sha256 "),
        "{why:?}"
    );
    assert!(
        why[1].starts_with("patterns/p.yaml differs from pack.lock (sha256 "),
        "{why:?}"
    );
    assert_eq!(p["active_versions"], serde_json::json!(["tiny@1.0"]));
    // Still the rule of the running set (prefix INV; the example's number is FA...).
    assert_eq!(verdict(&s).await, ("invalid".into(), "tiny@1.0".into()));
    let r = ready(&s).await;
    assert_eq!(r["rulepack_set"], "last-good");
    assert!(r["last_reload"]["error"]
        .as_str()
        .unwrap()
        .contains("tiny@1.0: fixtures/ok.xml differs"));

    // Vouched for: it goes live, and its fixtures ran.
    write_locks(&packs).unwrap();
    let r = reload(&s).await;
    assert_eq!(r.status(), 200);
    let outcome: Value = r.json().await.unwrap();
    assert_eq!(outcome["fixtures_run"], serde_json::json!(["tiny@1.0"]));
    assert_eq!(verdict(&s).await, ("valid".into(), "tiny@1.0".into()));
    assert_eq!(ready(&s).await["rulepack_set"], "current");
}

#[tokio::test]
async fn a_changed_pack_whose_fixtures_fail_is_refused() {
    let (s, packs) = tiny_server().await;
    // A new version whose rule never fires, locked without running its fixtures.
    for (rel, text) in tiny_files("1.1", "INV") {
        write(
            &packs,
            &rel,
            &text.replace("starts-with(cbc:ID, 'INV')", "true()"),
        );
    }
    write_locks(&packs).unwrap();
    let p = problem(reload(&s).await, 422).await;
    assert_eq!(
        reasons(&p["packs"], "tiny@1.1"),
        ["fixture fixtures/bad.xml (TINY-1 fail) fails: expected the rule to fire, it did not"]
    );
    assert_eq!(p["active_versions"], serde_json::json!(["tiny@1.0"]));
    assert_eq!(verdict(&s).await, ("invalid".into(), "tiny@1.0".into()));
}

#[tokio::test]
async fn a_settled_multi_step_write_goes_live_once() {
    let dir = tempfile::tempdir().unwrap();
    let packs = dir.path().join("packs");
    tiny_pack(&packs, "1.0", "INV");
    let mut c = crate::support::config(dir.path());
    c.rulepacks = Some(packs.clone());
    c.watch_rulepacks = true;
    c.rulepacks_quiet_ms = 600;
    let s = TestServer::launch(c, None, dir).await;
    let list = rulepacks(&s).await;
    assert_eq!(list["watching"], true);
    assert_eq!(list["last_reload"]["attempt"], 1);

    // tiny@2.0 written file by file, the lock files last, with short pauses.
    let staging = tempfile::tempdir().unwrap();
    tiny_pack(staging.path(), "2.0", "INV");
    let mut files: Vec<(String, String)> = tiny_files("2.0", "INV");
    files.push(("tiny/2.0/pack.lock".to_string(), String::new()));
    files.push(("profiles.lock".to_string(), String::new()));
    for (rel, _) in files {
        let text = std::fs::read_to_string(staging.path().join(&rel)).unwrap();
        write(&packs, &rel, &text);
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    let mut seen = Value::Null;
    for _ in 0..200 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        seen = rulepacks(&s).await;
        if seen["last_reload"]["attempt"] != 1 {
            break;
        }
    }
    // Quiet from now on: no further reload.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let list = rulepacks(&s).await;
    assert_eq!(list["last_reload"]["attempt"], 2, "{seen}");
    assert_eq!(list["last_reload"]["ok"], true, "{list}");
    assert_eq!(
        list["last_reload"]["versions"],
        serde_json::json!(["tiny@1.0", "tiny@2.0"])
    );
    assert_eq!(verdict(&s).await, ("invalid".into(), "tiny@2.0".into()));
}

/// Two instances on one database with the same rule-pack directory, not watching: a reload
/// through one is in force on the other within 5 seconds, and `/ready` on either lists both
/// instances with the packs each serves.
async fn a_reload_on_one_instance_reaches_the_other(database_url: Option<String>) {
    let dir = tempfile::tempdir().unwrap();
    let packs = dir.path().join("packs");
    tiny_pack(&packs, "1.0", "INV");
    let instance = |dir: &Path| {
        let mut c = crate::support::config(dir);
        if let Some(url) = &database_url {
            c.database_url = url.clone();
        } else {
            // The second instance opens the first one's SQLite file.
            c.database_url = format!("sqlite://{}?mode=rwc", packs.join("../shared.db").display());
        }
        c.rulepacks = Some(packs.clone());
        c.instance_poll_ms = 200;
        c
    };
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = TestServer::launch(instance(dir_a.path()), None, dir_a).await;
    let b = TestServer::launch(instance(dir_b.path()), None, dir_b).await;

    let listed = |ready: &Value| -> Vec<(String, Value)> {
        ready["instances"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                (
                    i["id"].as_str().unwrap().to_string(),
                    i["rulepacks"].clone(),
                )
            })
            .collect()
    };
    // Both report themselves.
    let mut both = Vec::new();
    for _ in 0..50 {
        both = listed(&ready(&a).await);
        if both.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(both.len(), 2, "{both:?}");
    let (id_a, id_b) = (
        ready(&a).await["instance"].as_str().unwrap().to_string(),
        ready(&b).await["instance"].as_str().unwrap().to_string(),
    );
    assert_ne!(id_a, id_b);

    tiny_pack(&packs, "1.1", "INV");
    let started = std::time::Instant::now();
    let r = reload(&a).await;
    assert_eq!(r.status(), 200);
    let mut on_b = Value::Null;
    while started.elapsed() < Duration::from_secs(5) {
        on_b = rulepacks(&b).await;
        if on_b["packs"][0]["version"] == "1.1" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        on_b["packs"][0]["version"], "1.1",
        "the other instance still serves {on_b} after 5 s"
    );
    assert_eq!(verdict(&b).await.1, "tiny@1.1");
    // B's reload was caused by the announcement: it is not announced back (A reloads once).
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(rulepacks(&a).await["last_reload"]["attempt"], 2);
    assert_eq!(rulepacks(&b).await["last_reload"]["attempt"], 2);

    // /ready on either lists both with the new version.
    let mut agreed = Vec::new();
    for _ in 0..50 {
        agreed = listed(&ready(&b).await);
        if agreed
            .iter()
            .all(|(_, v)| v == &serde_json::json!(["tiny@1.1"]))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let ids: Vec<&str> = agreed.iter().map(|(id, _)| id.as_str()).collect();
    assert!(
        ids.contains(&id_a.as_str()) && ids.contains(&id_b.as_str()),
        "{agreed:?}"
    );
    assert!(
        agreed
            .iter()
            .all(|(_, v)| v == &serde_json::json!(["tiny@1.1"])),
        "{agreed:?}"
    );

    // An instance that stops leaves the list.
    let mut b = b;
    b.running.take().unwrap().shutdown().await.unwrap();
    let left = listed(&ready(&a).await);
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].0, id_a);
}

#[tokio::test]
async fn a_reload_on_one_instance_reaches_another_on_the_same_sqlite_file() {
    a_reload_on_one_instance_reaches_the_other(None).await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL: INVEX_TEST_POSTGRES_URL=postgres://... and `-- --ignored` (.ci/run runs it)"]
async fn a_reload_on_one_instance_reaches_another_on_postgres() {
    let (url, _) = crate::support::postgres_schema().await;
    a_reload_on_one_instance_reaches_the_other(Some(url)).await;
}
