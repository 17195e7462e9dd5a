//! The `invex` binary as a user runs it: exit codes, output formats, errors.

use std::path::PathBuf;
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn invex(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_invex"))
        .current_dir(repo())
        .env_remove("INVEX_RULEPACKS")
        .args(args)
        .output()
        .expect("invex runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

const FAILING: &str = "rulepacks/en16931-ubl/1.3.16/fixtures/BR-01.xml";

#[test]
fn valid_example_exits_zero_with_a_json_report() {
    let o = invex(&["validate", "examples/invoice-sk.xml"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON report");
    assert_eq!(report["verdict"], "valid");
    // A Peppol BIS 3 invoice between two Slovak parties: the Slovak profile is detected
    // and the report says why.
    assert_eq!(report["profile"], "peppol-bis3-sk@2027.2");
    assert!(report["detection"]
        .as_str()
        .unwrap()
        .contains("seller country (BT-40) SK and buyer country (BT-55) SK"));
    assert_eq!(report["rules_version"][0], "ubl-2.1-xsd@2.1");
    assert_eq!(report["rules_version"][1], "en16931-ubl@1.3.16");
    assert_eq!(report["rules_version"][3], "sk-national@2027.2");
}

#[test]
fn an_explicit_profile_is_used_as_named() {
    let o = invex(&[
        "validate",
        "--profile",
        "en16931-ubl",
        "examples/invoice-sk.xml",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON report");
    assert_eq!(report["profile"], "en16931-ubl@1.3.16");
    assert!(report.get("detection").is_none());
}

#[test]
fn invalid_document_exits_one_and_names_the_rule() {
    let o = invex(&["validate", FAILING]);
    assert_eq!(o.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON report");
    assert_eq!(report["verdict"], "invalid");
    let findings = report["findings"].as_array().expect("findings");
    let br01 = findings
        .iter()
        .find(|f| f["rule_id"] == "BR-01")
        .expect("BR-01 fires");
    assert_eq!(br01["severity"], "fatal");
    assert!(br01["location"]["path"]
        .as_str()
        .unwrap()
        .starts_with("/ubl:Invoice"));
    assert!(br01["location"]["line"].as_u64().unwrap() > 0);
    assert!(!br01["remediation"].as_str().unwrap().is_empty());
}

#[test]
fn several_files_give_json_lines_with_a_file_member() {
    let o = invex(&["validate", "examples/invoice-sk.xml", FAILING]);
    assert_eq!(o.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["file"], "examples/invoice-sk.xml");
    assert_eq!(lines[0]["verdict"], "valid");
    assert_eq!(lines[1]["verdict"], "invalid");
}

#[test]
fn svrl_and_text_formats() {
    let o = invex(&["validate", "--format", "svrl", FAILING]);
    let svrl = stdout(&o);
    assert!(svrl.contains("schematron-output"), "{svrl}");
    assert!(svrl.contains("failed-assert") && svrl.contains("BR-01"));
    let o = invex(&["validate", "--format", "text", FAILING]);
    let text = stdout(&o);
    assert!(text.contains("BR-01") && text.contains("fatal"), "{text}");
}

#[test]
fn usage_io_and_parse_errors_exit_two() {
    assert_eq!(invex(&["validate"]).status.code(), Some(2));
    assert_eq!(
        invex(&["validate", "no/such/file.xml"]).status.code(),
        Some(2)
    );
    let dir = std::env::temp_dir().join(format!("invex-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let doctype = dir.join("doctype.xml");
    std::fs::write(
        &doctype,
        "<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY a \"b\">]><x>&a;</x>",
    )
    .unwrap();
    let o = invex(&["validate", doctype.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr)
        .to_lowercase()
        .contains("doctype"));
    let unknown = invex(&["validate", "--profile", "nope", "examples/invoice-sk.xml"]);
    assert_eq!(unknown.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn rules_commands_on_the_shipped_packs() {
    let lint = invex(&["rules", "lint"]);
    assert_eq!(lint.status.code(), Some(0), "{}", stdout(&lint));
    assert!(stdout(&lint).contains("0 error(s)"));
    let test = invex(&["rules", "test"]);
    assert_eq!(test.status.code(), Some(0), "{}", stdout(&test));
    let snap = invex(&["rules", "snapshot"]);
    assert!(stdout(&snap).contains("id: BR-01"));
}

/// A small but real package: two chained timeline entries over an invoice record.
fn evidence_package(meaning_after_hashing: Option<&str>) -> Vec<u8> {
    use invex_server::sending::evidence::{to_zip, EvidencePackage};
    use invex_server::sending::timeline::TimelineEntry;
    use invex_server::store::{entry_hash, InvoiceRecord, NewEvent, GENESIS_HASH};
    let payload = std::fs::read_to_string(repo().join("examples/invoice-sk.xml")).unwrap();
    let sha = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(payload.as_bytes()))
    };
    let mut timeline = Vec::new();
    let mut prev = GENESIS_HASH.to_string();
    for (seq, code) in [(1, "received"), (2, "validated")] {
        let e = NewEvent {
            at: "2026-11-24T10:00:00.000000Z".into(),
            source: "invex".into(),
            code: code.into(),
            status: Some(code.into()),
            meaning: format!("{code} for the test"),
            correlation_id: "inv_test".into(),
            detail: None,
        };
        let hash = entry_hash(&prev, seq, &e);
        timeline.push(TimelineEntry {
            seq,
            at: e.at,
            source: e.source,
            code: e.code,
            status: e.status,
            meaning: e.meaning,
            correlation_id: e.correlation_id,
            detail: None,
            prev_hash: prev.clone(),
            hash: hash.clone(),
        });
        prev = hash;
    }
    if let Some(m) = meaning_after_hashing {
        timeline[0].meaning = m.to_string();
    }
    let invoice = InvoiceRecord {
        id: "inv_test".into(),
        tenant_id: "ten_x".into(),
        connection_id: None,
        status: "validated".into(),
        document_id: Some("INV-1".into()),
        buyer_endpoint: None,
        sha256: sha,
        payload,
        validation_id: "val_x".into(),
        profile: "peppol-bis3-sk@2027.1".into(),
        rules_version: "en16931-ubl@1.3.16,peppol-bis3@2026.5".into(),
        summary: "{}".into(),
        findings: "[]".into(),
        scenario: None,
        transmission_id: None,
        resubmission_of: None,
        environment: "sandbox".into(),
        created_at: "2026-11-24T10:00:00Z".into(),
        updated_at: "2026-11-24T10:00:00Z".into(),
        issue_date: Some("2026-11-24".into()),
        seller_ids: "SK2022749619".into(),
    };
    let package = EvidencePackage::build(&invoice, timeline, "2026-11-24T10:00:01Z".into());
    to_zip(&package).unwrap()
}

#[test]
fn evidence_verify_accepts_an_intact_package_and_names_what_was_changed() {
    let dir = tempfile::tempdir().unwrap();
    let intact = dir.path().join("intact.zip");
    std::fs::write(&intact, evidence_package(None)).unwrap();
    let o = invex(&["evidence", "verify", intact.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).starts_with("intact: invoice inv_test"));

    // A timeline entry edited after it was hashed (and the manifest recomputed with it,
    // as a forger would): the chain exposes it.
    let forged = dir.path().join("forged.zip");
    std::fs::write(&forged, evidence_package(Some("nothing happened"))).unwrap();
    let o = invex(&["evidence", "verify", forged.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("entry 1 (received) was changed"),
        "{}",
        stdout(&o)
    );

    let missing = invex(&["evidence", "verify", "no/such/file.zip"]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn convert_writes_ready_xml_and_holds_uncertain_invoices_for_review() {
    let dir = tempfile::tempdir().expect("tempdir");
    let template = invex_server::convert::tabular::template_csv();
    let good = dir.path().join("good.csv");
    std::fs::write(&good, &template).expect("write");
    let out = dir.path().join("out");
    let o = invex(&[
        "convert",
        good.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let table = stdout(&o);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{table}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(table.contains("ready"), "{table}");
    let written: Vec<_> = std::fs::read_dir(&out)
        .expect("out dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !written.is_empty()
            && written
                .iter()
                .all(|n| n.ends_with(".xml") && !n.contains("needs-review")),
        "{written:?}"
    );
    // The XML the CLI wrote validates without fatal findings.
    let first = out.join(&written[0]);
    let v = invex(&[
        "validate",
        "--profile",
        "peppol-bis3",
        first.to_str().unwrap(),
    ]);
    assert_eq!(v.status.code(), Some(0), "{}", stdout(&v));

    // A broken IBAN: exit 1, the XML is written as needs-review with its reasons beside it.
    let text = String::from_utf8(template).expect("utf8");
    let iban = "SK2411000000002612345678";
    assert!(text.contains(iban), "the template's IBAN changed");
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, text.replace(iban, "SK2411000000002612345679")).expect("write");
    let held = dir.path().join("held");
    let o = invex(&[
        "convert",
        bad.to_str().unwrap(),
        "-o",
        held.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("needs_review"));
    let names: Vec<String> = std::fs::read_dir(&held)
        .expect("held dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    let review = names
        .iter()
        .find(|n| n.ends_with(".needs-review.review.json"))
        .unwrap_or_else(|| panic!("{names:?}"));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(held.join(review)).expect("read")).expect("json");
    assert!(json["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["field"] == "payment.iban"));

    // A file that is no invoice at all: exit 2, named in the table.
    let junk = dir.path().join("junk.xml");
    std::fs::write(&junk, "<x/>").expect("write");
    let o = invex(&[
        "convert",
        junk.to_str().unwrap(),
        "--out",
        held.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("junk.xml"));
}

/// A JSON invoice file (`.json`) converts to the UBL it stands for, which validates.
#[test]
fn convert_takes_a_json_invoice_by_its_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let xml = std::fs::read(repo.join("examples/invoice-sk.xml")).expect("example");
    let view = invex_server::invoice::read(&xml).expect("the example reads");
    let json = dir.path().join("export.json");
    std::fs::write(&json, invex_server::invoice::json::to_string(&view)).expect("write");
    let out = dir.path().join("out");
    let o = invex(&[
        "convert",
        json.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("ready"), "{}", stdout(&o));
    let written: Vec<_> = std::fs::read_dir(&out)
        .expect("out dir")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(written.len(), 1, "{written:?}");
    let back = invex_server::invoice::read(&std::fs::read(&written[0]).expect("read"))
        .expect("the written UBL reads");
    assert_eq!(back.number, view.number);
    assert_eq!(back.totals, view.totals);
    let v = invex(&["validate", written[0].to_str().unwrap()]);
    assert_eq!(v.status.code(), Some(0), "{}", stdout(&v));
}

/// A JSON invoice is validated as the UBL it stands for; a JSON file that is no invoice
/// gets an error naming it, not a verdict.
#[test]
fn validate_takes_a_json_invoice() {
    let dir = tempfile::tempdir().expect("tempdir");
    let xml = std::fs::read(repo().join("examples/invoice-sk.xml")).expect("example");
    let mut view = invex_server::invoice::read(&xml).expect("the example reads");
    let good = dir.path().join("good.json");
    std::fs::write(&good, invex_server::invoice::json::to_string(&view)).expect("write");
    let o = invex(&["validate", good.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON report");
    assert_eq!(report["verdict"], "valid");
    assert_eq!(report["profile"], "peppol-bis3-sk@2027.2");
    // Without lines the invoice breaks BR-16: the verdict is the UBL's.
    view.lines.clear();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, invex_server::invoice::json::to_string(&view)).expect("write");
    let o = invex(&["validate", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("BR-16"), "{}", stdout(&o));
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, r#"{"numbr": "1"}"#).expect("write");
    let o = invex(&["validate", junk.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not a JSON invoice"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The bootstrap key is shown once when invex generates it, and never when it comes from
/// the environment (a secret its owner already has, which logs must not capture).
#[test]
fn serve_shows_a_generated_bootstrap_key_and_never_a_configured_one() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let start = |configured: Option<&str>| -> String {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("port");
        let mut command = Command::new(env!("CARGO_BIN_EXE_invex"));
        command
            .arg("serve")
            .env("INVEX_BIND", format!("127.0.0.1:{port}"))
            .env("INVEX_SFTP_BIND", "127.0.0.1:0")
            .env(
                "INVEX_DATABASE_URL",
                format!("sqlite://{}?mode=rwc", dir.path().join("db").display()),
            )
            .env("INVEX_RULEPACKS", repo().join("rulepacks"))
            .env("INVEX_WATCH_RULEPACKS", "false")
            .env_remove("INVEX_BOOTSTRAP_KEY")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(key) = configured {
            command.env("INVEX_BOOTSTRAP_KEY", key);
        }
        let mut child = command.spawn().expect("serve starts");
        let stderr = child.stderr.take().expect("stderr");
        let mut said = String::new();
        for line in BufReader::new(stderr).lines() {
            let line = line.expect("line");
            said.push_str(&line);
            said.push('\n');
            if line.contains("listening on") {
                break;
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        said
    };
    let secret = "configured-bootstrap-secret-0001";
    let configured = start(Some(secret));
    assert!(!configured.contains(secret), "{configured}");
    assert!(
        configured.contains("from INVEX_BOOTSTRAP_KEY"),
        "{configured}"
    );
    let generated = start(None);
    assert!(generated.contains("shown once"), "{generated}");
}

/// The schema layer's findings in each output format (issue 17).
#[test]
fn schema_findings_in_every_format() {
    let file = "rulepacks/ubl-2.1-xsd/2.1/fixtures/unexpected-misspelt-element.xml";
    let expected =
        "expected cbc:CopyIndicator | cbc:UUID | cbc:IssueDate after cbc:ID, found cbc:IssueDat";

    let o = invex(&[
        "validate",
        "--profile",
        "peppol-bis3-sk",
        "--format",
        "text",
        file,
    ]);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    // After the line saying which profile version the bare name took.
    assert!(
        text.starts_with(&format!("{file}: profile peppol-bis3-sk@")),
        "{text}"
    );
    let first = text.lines().nth(1).unwrap_or_default();
    assert_eq!(
        first,
        format!("{file}:8:3: fatal UBL-XSD-UNEXPECTED {expected}")
    );
    assert!(
        text.contains("rules ubl-2.1-xsd@2.1, en16931-ubl@1.3.16"),
        "{text}"
    );

    let o = invex(&[
        "validate",
        "--profile",
        "peppol-bis3-sk",
        "--format",
        "json",
        file,
    ]);
    assert_eq!(o.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON report");
    assert_eq!(report["findings"][0]["rule_id"], "UBL-XSD-UNEXPECTED");
    assert_eq!(report["findings"][0]["layer"], "schema");
    assert_eq!(report["findings"][0]["message"], expected);
    // The rules still ran: the issue date is missing for them too.
    assert!(report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["rule_id"] == "BR-03" && f["layer"] == "rules"));

    let o = invex(&[
        "validate",
        "--profile",
        "peppol-bis3-sk",
        "--format",
        "svrl",
        file,
    ]);
    assert_eq!(o.status.code(), Some(1));
    let svrl = stdout(&o);
    assert!(
        svrl.contains(r#"<svrl:failed-assert id="UBL-XSD-UNEXPECTED" flag="fatal" location="/ubl:Invoice/cbc:IssueDat" test="">"#),
        "{svrl}"
    );
}

/// `--at` picks the profile version in force on a day; `id@version` always that version.
#[test]
fn at_picks_the_profile_version_in_force() {
    let file = "rulepacks/peppol-bis3/2026.11/fixtures/sk-384.xml";
    let o = invex(&["validate", "--at", "2027-01-15", file]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON report");
    assert_eq!(report["profile"], "peppol-bis3-sk@2027.2");

    let o = invex(&[
        "validate",
        "--profile",
        "peppol-bis3",
        "--at",
        "2026-09-01",
        file,
    ]);
    assert_eq!(o.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON report");
    assert_eq!(report["profile"], "peppol-bis3@2026.5");
    assert!(report["resolution"].as_str().unwrap().starts_with(
        "peppol-bis3@2026.5: the newest version of peppol-bis3 in force on 2026-09-01"
    ));

    let o = invex(&[
        "validate",
        "--profile",
        "peppol-bis3",
        "--at",
        "2026-01-01",
        file,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no version is in force on 2026-01-01"));

    let o = invex(&["validate", "--at", "15.01.2027", file]);
    assert_eq!(o.status.code(), Some(2));
}

/// `invex rules diff` between two releases of the Peppol pack, as text and JSON.
#[test]
fn rules_diff_lists_what_changed_between_releases() {
    let o = invex(&["rules", "diff", "peppol-bis3@2026.5", "peppol-bis3@2026.11"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = stdout(&o);
    assert!(
        text.starts_with(
            "peppol-bis3@2026.5 -> peppol-bis3@2026.11: 9 added, 1 removed, 7 changed"
        ),
        "{text}"
    );
    assert!(
        text.contains("removed  GR-R-001-5 (fatal, peppol-bis3@2026.5)"),
        "{text}"
    );

    let o = invex(&[
        "rules",
        "diff",
        "--format",
        "json",
        "peppol-bis3@2026.5",
        "peppol-bis3@2026.11",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let d: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(d["added"].as_array().unwrap().len(), 9);
    assert_eq!(d["changed"][0]["id"], "PEPPOL-COMMON-R054");
    assert_eq!(d["changed"][0]["changes"][0]["from"], "warning");
    assert_eq!(d["changed"][0]["changes"][0]["to"], "fatal");

    let o = invex(&["rules", "diff", "peppol-bis3@2026.5", "nope@1"]);
    assert_eq!(o.status.code(), Some(2));
}

/// A POHODA export converts on the command line as over HTTP: one UBL file per issued
/// invoice, all ready.
#[test]
fn convert_takes_a_pohoda_export() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let o = invex(&[
        "convert",
        "server/tests/data/pohoda/sk-2025.xml",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let mut written: Vec<String> = std::fs::read_dir(&out)
        .expect("out dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    assert_eq!(
        written,
        [
            "DB2025001.xml",
            "FV2025001.xml",
            "FV2025002.xml",
            "FV2025003.xml",
            "OD2025001.xml",
            "VB2025001.xml",
            "ZF2025001.xml"
        ]
    );
}

/// From an empty directory, with an empty cache: `invex validate` uses the packs embedded in
/// the binary (written out once into the cache), and `rules lock` without a directory
/// refuses to write into that copy.
#[test]
fn the_embedded_packs_work_from_an_empty_directory() {
    let empty = tempfile::tempdir().expect("tempdir");
    let cache = tempfile::tempdir().expect("tempdir");
    let invoice = repo().join("examples/invoice-sk.xml");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_invex"))
            .current_dir(empty.path())
            .env("INVEX_CACHE_DIR", cache.path())
            .env_remove("INVEX_RULEPACKS")
            .args(args)
            .output()
            .expect("invex runs")
    };
    let o = run(&[
        "validate",
        "--profile",
        "peppol-bis3-sk",
        invoice.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report");
    assert_eq!(report["verdict"], "valid");
    assert!(cache
        .path()
        .join("rulepacks")
        .join(invex_tools::embedded::DIGEST)
        .join("profiles.yaml")
        .is_file());
    // Nothing was written where the command ran.
    assert_eq!(std::fs::read_dir(empty.path()).expect("list").count(), 0);

    let o = run(&["rules", "lock"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("name the directory"));
    let o = run(&["rules", "lock", "--check"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// `invex completions SHELL` prints a completion script and `invex man` a man page, both
/// generated from the same command definition (so they know every subcommand).
#[test]
fn completions_and_man_page() {
    let o = invex(&["completions", "bash"]);
    assert!(o.status.success());
    let script = stdout(&o);
    assert!(
        script.contains("complete") && script.contains("invex"),
        "{script}"
    );
    assert!(script.contains("validate") && script.contains("completions"));
    let o = invex(&["completions", "zsh"]);
    assert!(o.status.success() && stdout(&o).starts_with("#compdef invex"));
    let o = invex(&["man"]);
    assert!(o.status.success());
    let page = stdout(&o);
    assert!(
        page.starts_with(".ie") || page.contains(".TH invex"),
        "{page}"
    );
    assert!(page.contains("validate") && page.contains("serve"));
}
