use std::path::Path;

use super::*;
use crate::pack::tests::{pack_yaml, profiles_yaml, write};
use crate::registry::Catalog;
use crate::report::{to_svrl, to_text, Report};
use crate::rules::RuleSet;

const CII: &str = "<rsm:CrossIndustryInvoice \
    xmlns:rsm='urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100'>\n\
    <rsm:ExchangedDocument/></rsm:CrossIndustryInvoice>";
const UBL_INVOICE: &str = "{urn:oasis:names:specification:ubl:schema:xsd:Invoice-2}Invoice";

/// A profile `prof` taking `{urn:test:doc}Doc` over a pack whose rule fires on a `t:Doc`
/// without lines: on a document of another type it finds nothing to check.
fn tree(root: &Path) {
    write(
        root,
        "p/1/pack.yaml",
        &pack_yaml("p", "1", &["patterns/main.yaml"], ""),
    );
    write(
        root,
        "p/1/patterns/main.yaml",
        "pattern: main
rules:
  - context: /t:Doc
    asserts:
      - id: T-1
        flag: fatal
        test: exists(t:Line)
        message: A document has lines.
",
    );
    write(
        root,
        "profiles.yaml",
        &profiles_yaml(&[("prof", "1", &["p@1"])]),
    );
}

fn shipped() -> Catalog {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rulepacks");
    Catalog::load(&dir).expect("the shipped packs load")
}

fn only_doctype(r: &Report) -> &Finding {
    assert_eq!(r.findings.len(), 1, "{r:#?}");
    let f = &r.findings[0];
    assert_eq!(f.rule_id, DOCTYPE_RULE);
    assert_eq!(f.severity, Severity::Fatal);
    assert_eq!(f.location.path, "/");
    assert!(!r.is_valid());
    f
}

#[test]
fn a_profile_validates_only_its_document_types() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let cat = Catalog::load(dir.path()).unwrap();
    let rules = cat.ruleset("prof").unwrap();

    let r = rules
        .validate_bytes(b"<html><body>hello</body></html>")
        .unwrap();
    let f = only_doctype(&r);
    assert_eq!((f.location.line, f.location.column), (1, 1));
    assert_eq!(
        f.message,
        "The document element html (no namespace) is not a document type profile prof@1 \
         validates; it takes: {urn:test:doc}Doc (Test document). The rules were not run."
    );
    assert_eq!(
        f.remediation,
        "Send the invoice as a Test document; an invoice in another format must be converted first."
    );
    assert_eq!(f.pack, "prof@1");
    assert_eq!(r.profile, "prof@1");
    assert_eq!(r.rules_version, ["p@1"]);

    let r = rules.validate_bytes(b"\n\n  <a/>").unwrap();
    let f = only_doctype(&r);
    assert_eq!((f.location.line, f.location.column), (3, 3));
    assert!(
        f.message.contains("element a (no namespace)"),
        "{}",
        f.message
    );

    // The right element in another namespace is another document type.
    let r = rules.validate_bytes(b"<Doc xmlns='urn:other'/>").unwrap();
    assert!(only_doctype(&r).message.contains("{urn:other}Doc is not"));

    // Its own documents get its rules, and nothing else.
    let r = rules
        .validate_bytes(b"<Doc xmlns='urn:test:doc'/>")
        .unwrap();
    assert_eq!(r.findings.len(), 1);
    assert_eq!(r.findings[0].rule_id, "T-1");
    let r = rules
        .validate_bytes(b"<Doc xmlns='urn:test:doc'><Line/></Doc>")
        .unwrap();
    assert!(r.is_valid() && r.findings.is_empty(), "{r:#?}");
}

#[test]
fn a_packs_own_rule_set_has_no_gate() {
    // Fixtures run a pack alone: its rules decide.
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let cat = Catalog::load(dir.path()).unwrap();
    let rules = RuleSet::single(cat.packs[0].clone());
    assert!(rules.gate().is_none());
    assert!(rules.validate_bytes(b"<a/>").unwrap().is_valid());
}

#[test]
fn documents_no_shipped_profile_takes_are_refused_in_every_rendering() {
    let cat = shipped();
    for (xml, named) in [
        ("<html><body>hello</body></html>", "html (no namespace)"),
        ("<a/>", "a (no namespace)"),
        (
            CII,
            "{urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100}CrossIndustryInvoice \
             (UN/CEFACT Cross Industry Invoice (CII))",
        ),
    ] {
        let doc = Document::parse(xml.as_bytes()).unwrap();
        let (rules, note) = cat.detected_ruleset(&doc).unwrap();
        assert!(
            note.starts_with("no installed profile takes the document element"),
            "{note}"
        );
        let r = rules.validate(&doc);
        assert_eq!(r.profile, NO_PROFILE);
        assert!(r.rules_version.is_empty());
        let f = only_doctype(&r);
        assert!(
            f.message.starts_with(&format!(
                "The document element {named} is not a document type any installed profile \
                 validates; they take: {UBL_INVOICE} (UBL 2.1 Invoice), \
                 {{urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2}}CreditNote"
            )),
            "{}",
            f.message
        );
        assert_eq!(f.pack, NO_PROFILE);
        assert_eq!(
            f.remediation,
            "Send the invoice as a UBL 2.1 Invoice or UBL 2.1 CreditNote; an invoice in \
             another format must be converted first."
        );
        let text = to_text(&r);
        assert!(
            text.starts_with("fatal INVEX-DOCTYPE at / (1:1): The document element"),
            "{text}"
        );
        let svrl = to_svrl(&r, Some(&rules));
        assert!(
            svrl.contains(r#"<svrl:failed-assert id="INVEX-DOCTYPE" flag="fatal" location="/""#),
            "{svrl}"
        );
    }
}

#[test]
fn cii_is_recognised_and_not_supported_yet() {
    let cat = shipped();
    let doc = Document::parse(CII.as_bytes()).unwrap();
    for rules in [
        cat.detected_ruleset(&doc).unwrap().0,
        cat.ruleset("peppol-bis3").unwrap(),
        cat.ruleset("en16931-ubl@1.3.16").unwrap(),
    ] {
        let r = rules.validate(&doc);
        let f = only_doctype(&r);
        assert!(
            f.message.ends_with(
                "The rules were not run. CII is recognised but not supported yet: send the \
                 invoice as UBL 2.1 (Invoice or CreditNote)."
            ),
            "{}",
            f.message
        );
    }
    let r = cat.ruleset("peppol-bis3@2026.5").unwrap().validate(&doc);
    let f = only_doctype(&r);
    assert!(
        f.message
            .contains("profile peppol-bis3@2026.5 validates; it takes: "),
        "{}",
        f.message
    );
    assert_eq!(f.pack, "peppol-bis3@2026.5");
    assert_eq!(r.profile, "peppol-bis3@2026.5");
}

#[test]
fn ubl_documents_pass_the_gate_of_every_shipped_profile() {
    let cat = shipped();
    let invoice =
        include_str!("../../../rulepacks/en16931-ubl/1.3.16/fixtures/invoice-minimal.xml");
    let doc = Document::parse(invoice.as_bytes()).unwrap();
    for p in cat.profiles() {
        let gate = p.rules.gate().expect("profiles have a gate");
        assert!(gate.admits(&doc), "{}", p.def.reference());
        let r = p.rules.validate(&doc);
        assert!(
            r.findings.iter().all(|f| f.rule_id != DOCTYPE_RULE),
            "{}",
            p.def.reference()
        );
    }
}
