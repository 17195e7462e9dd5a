//! The shipped packs against the official artefacts (../shared/conformance).

use invex_engine::registry::Catalog;
use invex_tests::{conformance, rulepacks};
use invex_tools::conformance::{agreement, run_unit_tests, Corpus};

fn corpus() -> Option<Corpus> {
    let c = Corpus::new(conformance());
    if c.exists() {
        Some(c)
    } else {
        eprintln!(
            "SKIPPED: conformance corpus not found at {} (set INVEX_CONFORMANCE)",
            conformance().display()
        );
        None
    }
}

fn is_core_rule(id: &str) -> bool {
    (id.starts_with("BR-")
        && !id.starts_with("BR-DEC-")
        && !id.starts_with("BR-CL-")
        && id[3..].chars().next().is_some_and(|c| c.is_ascii_digit()))
        || id.starts_with("BR-CO-")
}

/// Issue 2: every VEFA unit test of the EN 16931 core rules (BR-nn, BR-CO-nn) passes
/// with the `en16931-ubl` profile.
#[test]
fn en16931_core_rule_unit_tests_all_pass() {
    let Some(corpus) = corpus() else { return };
    let catalog = Catalog::load(&rulepacks()).expect("shipped packs compile");
    let ruleset = catalog.ruleset("en16931-ubl").expect("profile en16931-ubl");
    let outcomes = run_unit_tests(&corpus, &ruleset, |t| {
        t.configuration.as_deref() == Some("tc434-ubl")
            && !t.expect.scope.is_empty()
            && t.expect.scope.iter().all(|id| is_core_rule(id))
    })
    .expect("corpus readable");
    let failed: Vec<_> = outcomes.iter().filter(|o| !o.passed).collect();
    println!(
        "EN 16931 core-rule unit tests: {}/{} passed",
        outcomes.len() - failed.len(),
        outcomes.len()
    );
    for f in &failed {
        println!("  FAIL {}: {}", f.file, f.problems.join("; "));
    }
    assert!(
        outcomes.len() > 300,
        "expected the BR/BR-CO unit tests, found {}",
        outcomes.len()
    );
    assert!(failed.is_empty(), "{} unit tests failed", failed.len());
}

/// Over every corpus document, the core rules report the same (rule id, flag) multiset as
/// the official EN 16931 1.3.16 artefacts.
#[test]
fn en16931_core_rules_agree_with_the_official_artefacts() {
    let Some(corpus) = corpus() else { return };
    let catalog = Catalog::load(&rulepacks()).expect("shipped packs compile");
    let ruleset = catalog.ruleset("en16931-ubl").expect("profile en16931-ubl");
    let expected = corpus
        .expected("en16931-ubl-1.3.16")
        .expect("expected findings");
    let a = agreement(&corpus, &ruleset, &expected, is_core_rule);
    println!(
        "EN 16931 core rules: {}/{} documents agree ({:.2}%), paths {}/{}",
        a.agreeing,
        a.documents,
        a.rate() * 100.0,
        a.paths_matching,
        a.paths_compared
    );
    for d in a.disagreements.iter().take(40) {
        println!("  {}: missing {:?} extra {:?}", d.file, d.missing, d.extra);
    }
    assert_eq!(a.documents, 1749);
    assert!(
        a.disagreements.is_empty(),
        "{} documents disagree",
        a.disagreements.len()
    );
}
