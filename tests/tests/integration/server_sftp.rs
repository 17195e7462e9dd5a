//! SFTP drop folders with the real OpenSSH client (`sftp`, `ssh-keygen` from Debian's
//! openssh-client) against the running server: accounts made through the API, files put
//! into `inbox/`, outcomes read from `outbox/`, the input in `archive/`; a faulty file's
//! errors and its corrected resubmission; key-based sign-in only; each account's folders
//! its own (another tenant's out of sight); an auditor reads and cannot deliver.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::{example, invalid_invoice, numbered, zip_of, JsonBody, TestServer, BOOTSTRAP};
use reqwest::Method;
use serde_json::{json, Value};

/// An ed25519 key pair made by `ssh-keygen` in `dir`: the private key's path and the
/// public key line.
async fn keypair(dir: &Path, name: &str) -> (PathBuf, String) {
    let path = dir.join(name);
    let out = tokio::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&path)
        .output()
        .await
        .expect("ssh-keygen (Debian's openssh-client) must be installed");
    assert!(out.status.success(), "{out:?}");
    let public = std::fs::read_to_string(path.with_extension("pub")).unwrap();
    (path, public.trim().to_string())
}

struct Account {
    user: String,
    port: u16,
    key: PathBuf,
}

async fn account(
    s: &TestServer,
    admin: &str,
    role: &str,
    public_key: &str,
    key: PathBuf,
) -> Account {
    let body = json!({"name": "ERP export", "role": role, "public_keys": [public_key]});
    account_of(s, admin, body, key).await
}

/// An account made of `body` (`POST /v1/sftp/accounts`) by `admin`, signing in with `key`.
async fn account_of(s: &TestServer, admin: &str, body: Value, key: PathBuf) -> Account {
    let r = s
        .v1(Method::POST, "/v1/sftp/accounts", admin)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let a: Value = r.json().await.unwrap();
    let address = a["server"]["address"].as_str().unwrap();
    Account {
        user: a["username"].as_str().unwrap().to_string(),
        port: address.rsplit(':').next().unwrap().parse().unwrap(),
        key,
    }
}

/// Run `commands` (an sftp batch; a leading `-` lets a command fail) in `cwd`; the exit
/// status and what was printed.
async fn sftp(a: &Account, cwd: &Path, commands: &str) -> (bool, String) {
    let batch = cwd.join("batch.txt");
    std::fs::write(&batch, commands).unwrap();
    let out = tokio::process::Command::new("sftp")
        .current_dir(cwd)
        .args(["-b"])
        .arg(&batch)
        .args(["-i"])
        .arg(&a.key)
        .args([
            "-P",
            &a.port.to_string(),
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "BatchMode=yes",
            "-o",
            "LogLevel=ERROR",
            &format!("{}@127.0.0.1", a.user),
        ])
        .output()
        .await
        .expect("sftp (Debian's openssh-client) must be installed");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The names in a folder.
async fn ls(a: &Account, cwd: &Path, folder: &str) -> Vec<String> {
    let (ok, text) = sftp(a, cwd, &format!("ls -1 {folder}\n")).await;
    assert!(ok, "{text}");
    text.lines()
        .filter(|l| !l.starts_with("sftp>"))
        .map(|l| l.trim().rsplit('/').next().unwrap_or("").to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// Wait until `outbox/` holds every name of `want`.
async fn outbox_with(a: &Account, cwd: &Path, want: &[&str]) -> Vec<String> {
    let start = Instant::now();
    loop {
        let names = ls(a, cwd, "outbox").await;
        if want.iter().all(|w| names.iter().any(|n| n == w)) {
            return names;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "outbox: {names:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn get_json(a: &Account, cwd: &Path, remote: &str) -> Value {
    let local = cwd.join("got.json");
    let _ = std::fs::remove_file(&local);
    let (ok, text) = sftp(a, cwd, &format!("get {remote} got.json\n")).await;
    assert!(ok, "{text}");
    serde_json::from_slice(&std::fs::read(&local).unwrap()).unwrap()
}

/// OpenSSH's client tools were found when the tests were built (tests/build.rs; else the
/// tests that call this are ignored), so their absence now fails.
fn require_openssh_client() {
    for tool in ["sftp", "ssh-keygen"] {
        assert!(
            std::process::Command::new(tool).arg("-?").output().is_ok(),
            "{tool} does not run, though it was found when the tests were built \
             (Debian: apt-get install openssh-client)"
        );
    }
}

fn fast(c: &mut invex_server::config::Config) {
    c.batches.poll_ms = 20;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    invex_no_sftp,
    ignore = "OpenSSH's sftp / ssh-keygen not installed (Debian: openssh-client; .ci/run requires them)"
)]
async fn a_file_put_into_inbox_gets_its_outcome_in_outbox_and_a_correction_its_own() {
    require_openssh_client();
    let s = TestServer::with(fast).await;
    let dir = tempfile::tempdir().unwrap();
    let (key, public) = keypair(dir.path(), "erp").await;
    let a = account(&s, BOOTSTRAP, "accountant", &public, key).await;
    let cwd = dir.path();
    std::fs::write(
        cwd.join("FV-1.xml"),
        numbered(example("invoice-sk.xml"), "FV-1"),
    )
    .unwrap();
    std::fs::write(cwd.join("FV-2.xml"), invalid_invoice()).unwrap();

    // One closed under its name; one written under a temporary name and renamed.
    let (ok, text) = sftp(
        &a,
        cwd,
        "ls\nput FV-1.xml inbox/FV-1.xml\nput FV-2.xml inbox/FV-2.xml.part\n\
         rename inbox/FV-2.xml.part inbox/FV-2.xml\n",
    )
    .await;
    assert!(ok, "{text}");
    for folder in ["inbox", "outbox", "archive"] {
        assert!(text.contains(folder), "{text}");
    }
    outbox_with(&a, cwd, &["FV-1.xml.report.json", "FV-2.xml.errors.json"]).await;
    let report = get_json(&a, cwd, "outbox/FV-1.xml.report.json").await;
    assert_eq!(report["outcome"], "valid", "{report}");
    assert_eq!(report["result"]["verdict"], "valid");
    let errors = get_json(&a, cwd, "outbox/FV-2.xml.errors.json").await;
    assert_eq!(errors["outcome"], "invalid");
    let findings = errors["result"]["findings"].as_array().unwrap();
    assert!(
        findings.iter().any(|f| f["severity"] == "fatal"),
        "{errors}"
    );

    // The input, as it was delivered.
    assert_eq!(ls(&a, cwd, "archive").await, ["FV-1.xml", "FV-2.xml"]);
    let (ok, text) = sftp(&a, cwd, "get archive/FV-1.xml back.xml\n").await;
    assert!(ok, "{text}");
    assert_eq!(
        std::fs::read(cwd.join("back.xml")).unwrap(),
        numbered(example("invoice-sk.xml"), "FV-1")
    );

    // The corrected file under the same name: its own outcome, the first kept beside it.
    std::fs::write(
        cwd.join("FV-2.xml"),
        numbered(example("invoice-sk.xml"), "FV-2"),
    )
    .unwrap();
    let (ok, text) = sftp(&a, cwd, "put FV-2.xml inbox/FV-2.xml\n").await;
    assert!(ok, "{text}");
    let names = outbox_with(&a, cwd, &["FV-2.xml.report.json", "FV-2.xml.1.errors.json"]).await;
    assert_eq!(names.len(), 3, "{names:?}");
    // The same bytes again are the same delivery: nothing new.
    let (ok, text) = sftp(&a, cwd, "put FV-2.xml inbox/FV-2.xml\n").await;
    assert!(ok, "{text}");
    assert_eq!(ls(&a, cwd, "archive").await.len(), 3);

    // Results and archived files stay; the folders are fixed.
    let (ok, _) = sftp(&a, cwd, "rm outbox/FV-1.xml.report.json\n").await;
    assert!(!ok);
    let (ok, _) = sftp(&a, cwd, "put FV-1.xml archive/x.xml\n").await;
    assert!(!ok);
    let (ok, _) = sftp(&a, cwd, "mkdir inbox/sub\n").await;
    assert!(!ok);

    // The batches are the tenant's like any other.
    let list: Value = s
        .v1(Method::GET, "/v1/sftp/accounts", BOOTSTRAP)
        .value()
        .await;
    assert_eq!(list["accounts"][0]["username"], a.user.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    invex_no_sftp,
    ignore = "OpenSSH's sftp / ssh-keygen not installed (Debian: openssh-client; .ci/run requires them)"
)]
async fn only_the_accounts_keys_sign_in_and_each_tenant_sees_its_own_files() {
    require_openssh_client();
    let s = TestServer::with(fast).await;
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path();
    let (key, public) = keypair(cwd, "mine").await;
    let (stranger, _) = keypair(cwd, "stranger").await;
    let mine = account(&s, BOOTSTRAP, "developer", &public, key).await;
    std::fs::write(cwd.join("a.xml"), example("invoice-sk.xml")).unwrap();
    let (ok, text) = sftp(&mine, cwd, "put a.xml inbox/a.xml\n").await;
    assert!(ok, "{text}");
    outbox_with(&mine, cwd, &["a.xml.report.json"]).await;

    // A key that is not the account's.
    let imposter = Account {
        user: mine.user.clone(),
        port: mine.port,
        key: stranger,
    };
    let (ok, text) = sftp(&imposter, cwd, "ls\n").await;
    assert!(!ok, "{text}");
    assert!(text.contains("Permission denied"), "{text}");

    // Another tenant's account: its own, empty folders.
    let tenant: Value = s
        .v1(Method::POST, "/v1/tenants", BOOTSTRAP)
        .json(&json!({"name": "Iná firma"}))
        .value()
        .await;
    let other_admin = tenant["admin_key"]["key"].as_str().unwrap();
    let (other_key, other_public) = keypair(cwd, "other").await;
    let other = account(&s, other_admin, "admin", &other_public, other_key).await;
    assert!(ls(&other, cwd, "outbox").await.is_empty());
    assert!(ls(&other, cwd, "archive").await.is_empty());
    let (ok, _) = sftp(&other, cwd, "get outbox/a.xml.report.json x.json\n").await;
    assert!(!ok);

    // Each account has folders of its own; an auditor's are read-only.
    let (audit_key, audit_public) = keypair(cwd, "audit").await;
    let auditor = account(&s, BOOTSTRAP, "auditor", &audit_public, audit_key).await;
    assert!(ls(&auditor, cwd, "outbox").await.is_empty());
    let (ok, text) = sftp(&auditor, cwd, "put a.xml inbox/b.xml\n").await;
    assert!(!ok, "{text}");

    // A revoked account signs in no more.
    let r = s
        .v1(
            Method::DELETE,
            &format!("/v1/sftp/accounts/{}", auditor.user),
            BOOTSTRAP,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let (ok, _) = sftp(&auditor, cwd, "ls\n").await;
    assert!(!ok);

    // Keys are checked when the account is made.
    let r = s
        .v1(Method::POST, "/v1/sftp/accounts", BOOTSTRAP)
        .json(&json!({"name": "x", "role": "developer", "public_keys": ["ssh-rsa nonsense"]}))
        .send()
        .await
        .unwrap();
    let p = crate::support::problem(r, 422).await;
    assert_eq!(p["field"], "public_keys");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    invex_no_sftp,
    ignore = "OpenSSH's sftp / ssh-keygen not installed (Debian: openssh-client; .ci/run requires them)"
)]
async fn a_zip_and_a_json_feed_are_batches_with_a_results_file() {
    require_openssh_client();
    let s = TestServer::with(fast).await;
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path();
    let (key, public) = keypair(cwd, "erp").await;
    let a = account(&s, BOOTSTRAP, "developer", &public, key).await;
    let zip = zip_of(&[
        ("one.xml".into(), numbered(example("invoice-sk.xml"), "Z-1")),
        ("two.xml".into(), invalid_invoice()),
    ]);
    std::fs::write(cwd.join("export.zip"), zip).unwrap();
    let invoice: Value = s
        .v1(Method::POST, "/v1/invoice/json", BOOTSTRAP)
        .header("Content-Type", "application/xml")
        .body(example("invoice-sk.xml"))
        .value()
        .await;
    std::fs::write(cwd.join("feed.ndjson"), format!("{invoice}\n{invoice}\n")).unwrap();
    let (ok, text) = sftp(&a, cwd, "put export.zip inbox/\nput feed.ndjson inbox/\n").await;
    assert!(ok, "{text}");
    outbox_with(
        &a,
        cwd,
        &["export.zip.results.ndjson", "feed.ndjson.results.ndjson"],
    )
    .await;
    let (ok, text) = sftp(&a, cwd, "get outbox/export.zip.results.ndjson r.ndjson\n").await;
    assert!(ok, "{text}");
    let lines: Vec<Value> = std::fs::read_to_string(cwd.join("r.ndjson"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let outcomes: Vec<(&str, &str)> = lines
        .iter()
        .map(|l| (l["name"].as_str().unwrap(), l["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(outcomes, [("one.xml", "valid"), ("two.xml", "invalid")]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    invex_no_sftp,
    ignore = "OpenSSH's sftp / ssh-keygen not installed (Debian: openssh-client; .ci/run requires them)"
)]
async fn an_account_that_sends_gets_the_sent_ubl_and_a_refused_zip_its_failures() {
    require_openssh_client();
    let s = TestServer::with(fast).await;
    s.sandbox_connection().await;
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path();
    let (key, public) = keypair(cwd, "erp").await;
    // A profile that does not exist is refused when the account is made.
    let r = s
        .v1(Method::POST, "/v1/sftp/accounts", BOOTSTRAP)
        .json(
            &json!({"name": "ERP", "role": "developer", "public_keys": [public],
                      "mode": "send", "profile": "no-such-profile"}),
        )
        .send()
        .await
        .unwrap();
    crate::support::problem(r, 400).await;
    let body = json!({"name": "ERP", "role": "developer", "public_keys": [public], "mode": "send"});
    let a = account_of(&s, BOOTSTRAP, body, key).await;
    let listed: Value = s
        .v1(
            Method::GET,
            &format!("/v1/sftp/accounts/{}", a.user),
            BOOTSTRAP,
        )
        .value()
        .await;
    assert_eq!(listed["mode"], "send");

    std::fs::write(
        cwd.join("FV-S-1.xml"),
        numbered(example("invoice-sk.xml"), "FV-S-1"),
    )
    .unwrap();
    let good = numbered(example("invoice-sk.xml"), "FV-S-2");
    let bad = String::from_utf8(numbered(example("invoice-sk.xml"), "FV-S-3"))
        .unwrap()
        .replace("SK3112000000198742637541", "SK3112000000198742637542")
        .into_bytes();
    std::fs::write(
        cwd.join("run.zip"),
        zip_of(&[("good.xml".into(), good), ("bad.xml".into(), bad)]),
    )
    .unwrap();
    let (ok, text) = sftp(&a, cwd, "put FV-S-1.xml inbox/\nput run.zip inbox/\n").await;
    assert!(ok, "{text}");
    let names = outbox_with(&a, cwd, &["FV-S-1.xml.report.json", "run.zip.results.zip"]).await;
    // The single file was sent: its answer, and the UBL of its invoice.
    let report = get_json(&a, cwd, "outbox/FV-S-1.xml.report.json").await;
    assert_eq!(report["outcome"], "queued", "{report}");
    let invoice = report["result"]["id"].as_str().unwrap();
    let ubl = format!("FV-S-1.xml.{invoice}.xml");
    assert!(names.contains(&ubl), "{names:?}");
    let (ok, text) = sftp(&a, cwd, &format!("get outbox/{ubl} sent.xml\n")).await;
    assert!(ok, "{text}");
    let sent = std::fs::read_to_string(cwd.join("sent.xml")).unwrap();
    assert!(sent.contains("<cbc:ID>FV-S-1</cbc:ID>"), "{sent}");

    // The ZIP was refused whole: its results say which document failed and why.
    let (ok, text) = sftp(&a, cwd, "get outbox/run.zip.results.zip r.zip\n").await;
    assert!(ok, "{text}");
    let bytes = std::fs::read(cwd.join("r.zip")).unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut zip.by_name("batch.json").unwrap(), &mut text).unwrap();
    let batch: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(batch["status"], "refused", "{batch}");
    assert_eq!(batch["counts"], json!({"refused": 1, "withheld": 1}));
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut zip.by_name("000002_bad.xml.errors.json").unwrap(),
        &mut text,
    )
    .unwrap();
    let bad: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        bad["result"]["identifiers"][0]["business_term"], "BT-84",
        "{bad}"
    );
    let invoices: Value = s.v1(Method::GET, "/v1/invoices", BOOTSTRAP).value().await;
    assert_eq!(invoices["invoices"].as_array().unwrap().len(), 1);
}
