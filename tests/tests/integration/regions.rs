//! Large documents are validated region by region (a cache-friendly order); the report
//! must be exactly the one rule-by-rule evaluation gives. Tiny regions (one node, a few
//! dozen nodes) cut every rule's context list, every pattern's first-match claims and
//! every run of findings at as many places as possible.

use invex_benches::generate_invoice;
use invex_engine::document::Document;
use invex_engine::registry::Catalog;
use invex_engine::rules::RuleSet;
use invex_tests::{conformance, rulepacks};
use invex_tools::conformance::Corpus;

/// Larger than any document here: one region, rule by rule over the whole document.
const WHOLE: usize = usize::MAX;

fn assert_same(rules: &RuleSet, name: &str, bytes: &[u8], regions: &[usize]) -> usize {
    let doc = match Document::parse(bytes) {
        Ok(doc) => doc,
        // Not well-formed: nothing to evaluate.
        Err(_) => return 0,
    };
    let whole = rules.validate_in_regions(&doc, WHOLE);
    for &r in regions {
        let tiled = rules.validate_in_regions(&doc, r);
        assert_eq!(
            tiled, whole,
            "{name}: regions of {r} nodes give another report than one region"
        );
    }
    whole.findings.len()
}

/// A generated invoice, broken in several lines so that line rules of several patterns
/// fire in many regions, with findings interleaved across rules.
fn broken_invoice(lines: usize) -> String {
    let mut text = generate_invoice(lines);
    let mut from = 0;
    let mut n = 0;
    while let Some(at) = text[from..].find("<cbc:LineExtensionAmount") {
        let at = from + at;
        n += 1;
        // Every third line loses its net amount (BR-24 and the sums), every fifth gets an
        // empty element (the Peppol empty-element rule).
        if n % 3 == 0 {
            let end = at
                + text[at..].find("</cbc:LineExtensionAmount>").unwrap()
                + "</cbc:LineExtensionAmount>".len();
            text.replace_range(at..end, "");
        } else if n % 5 == 0 {
            text.insert_str(at, "<cbc:AccountingCost></cbc:AccountingCost>");
            from = at + 60;
            continue;
        }
        from = at + 1;
    }
    text
}

#[test]
fn large_invoices_get_the_same_report_in_any_region_size() {
    let catalog = Catalog::load(&rulepacks()).expect("shipped packs");
    for profile in ["en16931-ubl", "peppol-bis3-sk"] {
        let rules = catalog.ruleset(profile).expect("profile");
        let valid = generate_invoice(60);
        assert_eq!(
            assert_same(&rules, "valid", valid.as_bytes(), &[1, 50, 977]),
            0
        );
        let broken = broken_invoice(60);
        let found = assert_same(&rules, "broken", broken.as_bytes(), &[1, 50, 977]);
        // The mutations must make rules fire in many regions, or the test proves little.
        assert!(
            found > 15,
            "{profile}: only {found} findings on the broken invoice"
        );
    }
}

#[test]
#[cfg_attr(
    invex_no_corpus,
    ignore = "no conformance corpus: set INVEX_CONFORMANCE or provide ../shared/conformance (.ci/run requires it)"
)]
fn corpus_documents_get_the_same_report_in_any_region_size() {
    let corpus = Corpus::new(conformance());
    // Found when the tests were built (tests/build.rs; else this test is ignored).
    assert!(
        corpus.exists(),
        "the conformance corpus is missing at {}, though it was found when the tests were built",
        conformance().display()
    );
    let catalog = Catalog::load(&rulepacks()).expect("shipped packs");
    let rules = catalog.ruleset("peppol-bis3-sk").expect("profile");
    let documents = corpus
        .expected("peppol-bis3-2026.5")
        .expect("expected findings");
    let mut with_findings = 0;
    for (i, file) in documents.keys().enumerate() {
        let bytes = std::fs::read(corpus.document_path(file)).expect("document");
        // Every document in single-node regions; every seventh also in regions of 29.
        let regions: &[usize] = if i % 7 == 0 { &[1, 29] } else { &[1] };
        if assert_same(&rules, file, &bytes, regions) > 0 {
            with_findings += 1;
        }
    }
    assert!(
        with_findings > 1000,
        "{with_findings} documents with findings"
    );
}
