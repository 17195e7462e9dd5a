//! The schema layer as a pack (issue 17): `ubl-2.1-xsd@2.1` is the first pack of every
//! shipped profile, its findings are fatal rules with layer `schema`, the rules above it
//! still run on a schema-invalid document unless its root is refused, findings stay within
//! the listing bound, and a schema pack is loaded, locked and tested like any other.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use invex_engine::document::Document;
use invex_engine::fixtures;
use invex_engine::registry::Catalog;
use invex_engine::report::{to_svrl, to_text, FindingLayer, Severity, Verdict};
use invex_engine::rules::{build_ruleset, compile_dir};

const XSD_PACK: &str = "ubl-2.1-xsd@2.1";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rulepacks() -> PathBuf {
    repo().join("rulepacks")
}

fn fixture(name: &str) -> Vec<u8> {
    let path = rulepacks().join("ubl-2.1-xsd/2.1/fixtures").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn catalog() -> Catalog {
    Catalog::load(&rulepacks()).expect("the shipped rule packs load")
}

#[test]
fn every_shipped_profile_starts_with_the_schema_layer() {
    let catalog = catalog();
    assert!(!catalog.profiles().is_empty());
    for p in catalog.profiles() {
        let versions = p.rules.rules_version();
        assert_eq!(versions[0], XSD_PACK, "{}: {versions:?}", p.def.reference());
    }
    let info = catalog
        .pack_infos()
        .into_iter()
        .find(|p| p.id == "ubl-2.1-xsd")
        .expect("the schema pack is listed");
    assert_eq!(info.rules, 5, "one rule per kind of schema finding");
}

#[test]
fn schema_findings_come_first_and_the_rules_still_run() {
    let rules = catalog().ruleset("peppol-bis3-sk").expect("profile");
    let report = rules
        .validate_bytes(&fixture("missing-id.xml"))
        .expect("well-formed");
    assert_eq!(report.verdict, Verdict::Invalid);
    let first = &report.findings[0];
    assert_eq!(first.rule_id, "UBL-XSD-MISSING");
    assert_eq!(first.layer, FindingLayer::Schema);
    assert_eq!(first.severity, Severity::Fatal);
    assert_eq!(first.pack, XSD_PACK);
    assert_eq!(
        first.message,
        "expected cbc:ID after cbc:CustomizationID, found cbc:IssueDate"
    );
    assert_eq!(first.location.path, "/ubl:Invoice/cbc:IssueDate");
    assert_eq!((first.location.line, first.location.column), (7, 3));
    assert!(first.remediation.starts_with("Add the mandatory element"));
    assert_eq!(first.owner.as_deref(), Some("sender-mapping"));
    // The same fact from the EN 16931 rules, with its own id and layer.
    let br02 = report
        .findings
        .iter()
        .find(|f| f.rule_id == "BR-02")
        .expect("BR-02 still runs on a schema-invalid document");
    assert_eq!(br02.layer, FindingLayer::Rules);
    assert_eq!(br02.pack, "en16931-ubl@1.3.16");
    assert_eq!(
        report
            .findings
            .iter()
            .filter(|f| f.layer == FindingLayer::Schema)
            .count(),
        1
    );
}

#[test]
fn a_schema_valid_invoice_has_no_schema_finding() {
    let rules = catalog().ruleset("peppol-bis3-sk").expect("profile");
    for name in ["invoice-valid.xml", "credit-note-valid.xml"] {
        let report = rules.validate_bytes(&fixture(name)).expect("well-formed");
        let schema: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.layer == FindingLayer::Schema)
            .collect();
        assert!(schema.is_empty(), "{name}: {schema:?}");
    }
}

#[test]
fn a_refused_document_element_stops_the_rules() {
    // Without a document-type gate (a pack set as a release pipeline may stack it), the
    // schema's own root check decides: the rules above it would only add noise.
    let c = compile_dir(&rulepacks());
    assert!(c.is_ok(), "{:#?}", c.diagnostics);
    let packs = vec![
        c.pack(XSD_PACK).expect("schema pack").clone(),
        c.pack("en16931-ubl@1.3.16").expect("en16931").clone(),
    ];
    let rules = build_ruleset("t@1".into(), None, packs, None).expect("ruleset");
    let report = rules
        .validate_bytes(&fixture("root-misspelt.xml"))
        .expect("well-formed");
    let ids: Vec<&str> = report.findings.iter().map(|f| f.rule_id.as_str()).collect();
    assert_eq!(ids, ["UBL-XSD-ROOT"]);
    assert!(
        report.findings[0]
            .message
            .contains("expected ubl:Invoice or cn:CreditNote"),
        "{}",
        report.findings[0].message
    );
    // A document the schema takes runs both layers.
    let report = rules
        .validate_bytes(&fixture("missing-id.xml"))
        .expect("well-formed");
    let ids: Vec<&str> = report.findings.iter().map(|f| f.rule_id.as_str()).collect();
    assert_eq!(ids, ["UBL-XSD-MISSING", "BR-02"]);
}

/// An invoice with `lines` lines, each with a quantity that is not a decimal.
fn broken_lines(lines: usize) -> String {
    let base = String::from_utf8(fixture("invoice-valid.xml")).expect("utf-8");
    let start = base.find("<cac:InvoiceLine>").expect("a line");
    let end = base.find("</cac:InvoiceLine>").expect("its end") + "</cac:InvoiceLine>".len();
    let line =
        base[start..end].replace(">4</cbc:InvoicedQuantity>", ">four</cbc:InvoicedQuantity>");
    assert!(line.contains("four"));
    let mut out = String::with_capacity(base.len() + lines * line.len());
    out.push_str(&base[..start]);
    for _ in 0..lines {
        out.push_str(&line);
    }
    out.push_str(&base[end..]);
    out
}

#[test]
fn schema_findings_stay_within_the_listing_bound() {
    let rules = catalog().ruleset("en16931-ubl").expect("profile");
    let xml = broken_lines(3_000);
    let doc = Document::parse(xml.as_bytes()).expect("well-formed");
    let report = rules.validate_listing(&doc, 100);
    assert_eq!(report.findings.len(), 100);
    // Every bad quantity counts, listed or not.
    assert!(report.counts.fatal >= 3_000, "{:?}", report.counts);
    assert_eq!(report.verdict, Verdict::Invalid);
    let full = rules.validate(&doc);
    let values = full
        .findings
        .iter()
        .filter(|f| f.rule_id == "UBL-XSD-VALUE")
        .count();
    assert_eq!(values, 3_000);
}

#[test]
fn text_and_svrl_show_schema_findings() {
    let rules = catalog().ruleset("peppol-bis3-sk").expect("profile");
    let report = rules
        .validate_bytes(&fixture("attribute-missing-currency.xml"))
        .expect("well-formed");
    let text = to_text(&report);
    assert!(
        text.contains(
            "fatal UBL-XSD-ATTRIBUTE at /ubl:Invoice/cac:LegalMonetaryTotal/cbc:PayableAmount"
        ),
        "{text}"
    );
    let svrl = to_svrl(&report, Some(&rules));
    let pattern = svrl
        .find("<svrl:active-pattern id=\"ubl-2.1-xsd_2.1\"")
        .expect("the schema layer's pattern");
    let assert_at = svrl
        .find("<svrl:failed-assert id=\"UBL-XSD-ATTRIBUTE\"")
        .expect("the schema finding");
    let next_pattern = svrl[pattern + 1..]
        .find("<svrl:active-pattern")
        .map(|i| i + pattern + 1)
        .expect("the rule patterns follow");
    assert!(pattern < assert_at && assert_at < next_pattern, "{svrl}");
    let json = serde_json::to_value(&report).expect("json");
    assert_eq!(json["findings"][0]["layer"], "schema");
    assert_eq!(json["rules_version"][0], XSD_PACK);
}

/// Copy the shipped schema pack into `root`, then let `edit` change its `pack.yaml`.
fn schema_pack_copy(root: &Path, edit: impl Fn(String) -> String) -> PathBuf {
    let from = rulepacks().join("ubl-2.1-xsd/2.1");
    let to = root.join("ubl-2.1-xsd/2.1");
    copy_dir(&from, &to);
    let yaml = std::fs::read_to_string(to.join("pack.yaml")).expect("pack.yaml");
    std::fs::write(to.join("pack.yaml"), edit(yaml)).expect("write pack.yaml");
    to
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            copy_dir(&path, &to.join(entry.file_name()));
        } else {
            std::fs::copy(&path, to.join(entry.file_name())).expect("copy");
        }
    }
}

#[test]
fn the_schema_packs_fixtures_run_and_can_fail() {
    let c = compile_dir(&rulepacks());
    let pack = c.pack(XSD_PACK).expect("schema pack").clone();
    let result = fixtures::run_pack(&pack);
    assert!(result.failures.is_empty(), "{:?}", result.failures);
    // 5 rules × 2 pass fixtures + 7 fail fixtures.
    assert_eq!(result.checks, 17);

    // A valid document listed as a failing fixture of UBL-XSD-VALUE is caught.
    let dir = tempfile::tempdir().expect("tempdir");
    schema_pack_copy(dir.path(), |y| {
        y.replace(
            "fail: [value-date.xml, value-decimal.xml]",
            "fail: [value-date.xml, value-decimal.xml, invoice-valid.xml]",
        )
    });
    let c = compile_dir(dir.path());
    assert!(c.is_ok(), "{:#?}", c.diagnostics);
    let result = fixtures::run_pack(&Arc::clone(c.pack(XSD_PACK).expect("pack")));
    assert_eq!(result.failures.len(), 1, "{:?}", result.failures);
    assert_eq!(result.failures[0].rule, "UBL-XSD-VALUE");
    assert!(result.failures[0].fixture.ends_with("invoice-valid.xml"));
}

fn diagnostics(root: &Path) -> Vec<String> {
    compile_dir(root)
        .diagnostics
        .iter()
        .map(|d| d.to_string())
        .collect()
}

#[test]
fn a_schema_pack_declares_exactly_the_validators_rules() {
    let dir = tempfile::tempdir().expect("tempdir");
    schema_pack_copy(dir.path(), |y| {
        y.replace("id: UBL-XSD-VALUE", "id: UBL-XSD-VALUES")
    });
    let d = diagnostics(dir.path());
    assert!(
        d.iter().any(|m| m.contains("pack.yaml:")
            && m.contains("`UBL-XSD-VALUES` is not a kind of schema finding")),
        "{d:#?}"
    );
    assert!(
        d.iter().any(|m| m.contains("must declare `UBL-XSD-VALUE`")),
        "{d:#?}"
    );
}

#[test]
fn schema_files_must_stay_inside_the_pack() {
    // A document path that climbs out of the pack.
    let dir = tempfile::tempdir().expect("tempdir");
    schema_pack_copy(dir.path(), |y| {
        y.replace("- xsd/maindoc/UBL-CreditNote-2.1.xsd", "- ../outside.xsd")
    });
    let d = diagnostics(dir.path());
    assert!(
        d.iter()
            .any(|m| m
                .contains("`../outside.xsd` must be a relative path inside the pack directory")),
        "{d:#?}"
    );

    // A schemaLocation that climbs out of the pack: the file is never read.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("outside.xsd"),
        r#"<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:x" elementFormDefault="qualified"/>"#,
    )
    .expect("write");
    let pack = schema_pack_copy(dir.path(), |y| {
        y.replace("- xsd/maindoc/UBL-CreditNote-2.1.xsd", "- xsd/escape.xsd")
    });
    std::fs::write(
        pack.join("xsd/escape.xsd"),
        r#"<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:x" elementFormDefault="qualified">
  <xsd:include schemaLocation="../../../outside.xsd"/>
</xsd:schema>"#,
    )
    .expect("write");
    let d = diagnostics(dir.path());
    assert!(
        d.iter().any(|m| m.contains("the schema does not compile")
            && m.contains("outside the pack directory")),
        "{d:#?}"
    );
}

#[test]
fn the_lock_matches_whatever_path_names_the_directory() {
    // A rule-pack directory named through `..` (as a test binary's manifest dir does):
    // the schema files read must still be named relative to the pack.
    let roundabout = repo().join("engine/../rulepacks");
    let c = compile_dir(&roundabout);
    assert!(c.is_ok(), "{:#?}", c.diagnostics);
    let locks = invex_engine::lock::Locks::of(&c).expect("locks");
    for (dir, actual) in &locks.packs {
        let locked = invex_engine::lock::PackLock::read(dir)
            .expect("readable")
            .expect("a committed lock");
        let differences = locked.differences(actual);
        assert!(
            differences.is_empty(),
            "{}: {differences:?}",
            actual.reference()
        );
    }
}
