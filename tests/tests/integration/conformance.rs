//! The shipped packs against the official artefacts (../shared/conformance): the VEFA unit
//! tests and document agreement, per profile (CONFORMANCE.md lists the intended
//! differences this test allows, and nothing else).

use invex_engine::registry::Catalog;
use invex_tests::{conformance, rulepacks};
use invex_tools::conformance::{
    self as conformance_tools, measure, Corpus, ProfileConformance, Target, TARGETS,
};

/// The corpus was found when the tests were built (tests/build.rs; else every test here is
/// ignored), so its absence now fails.
fn corpus() -> Corpus {
    let c = Corpus::new(conformance());
    assert!(
        c.exists(),
        "the conformance corpus is missing at {}, though it was found when the tests were built",
        conformance().display()
    );
    c
}

fn run(profile: &str, only: &[&str]) -> ProfileConformance {
    let corpus = corpus();
    let catalog = Catalog::load(&rulepacks()).expect("shipped packs compile");
    let target: &Target = TARGETS
        .iter()
        .find(|t| t.is_named(profile))
        .expect("a conformance target");
    let ruleset = catalog.ruleset(target.profile).expect("profile is shipped");
    let only: Vec<String> = only.iter().map(|s| s.to_string()).collect();
    let m = measure(&corpus, &ruleset, target, &only).expect("corpus readable");
    println!("{}", m.render());
    m
}

fn path_rate(m: &ProfileConformance) -> f64 {
    let a = &m.agreement;
    if a.paths_compared == 0 {
        1.0
    } else {
        a.paths_matching as f64 / a.paths_compared as f64
    }
}

/// Issue 2: every VEFA unit test of the EN 16931 core rules (BR-nn, BR-CO-nn) passes.
#[test]
#[cfg_attr(
    invex_no_corpus,
    ignore = "no conformance corpus: set INVEX_CONFORMANCE or provide ../shared/conformance (.ci/run requires it)"
)]
fn en16931_core_rule_unit_tests_all_pass() {
    let m = run(
        "en16931-ubl",
        &[
            "BR-0", "BR-1", "BR-2", "BR-3", "BR-4", "BR-5", "BR-6", "BR-CO-",
        ],
    );
    assert!(
        m.unit.len() > 400,
        "expected the BR/BR-CO unit tests, found {}",
        m.unit.len()
    );
    assert_eq!(m.unit_passed(), m.unit.len());
}

/// `en16931-ubl`: all 1,131 unit tests, all 1,749 documents, every location path.
#[test]
#[cfg_attr(
    invex_no_corpus,
    ignore = "no conformance corpus: set INVEX_CONFORMANCE or provide ../shared/conformance (.ci/run requires it)"
)]
fn en16931_profile_agrees_with_the_official_artefacts() {
    let m = run("en16931-ubl", &[]);
    assert_eq!(m.unit.len(), 1131);
    assert_eq!(m.unit_passed(), 1131, "unit tests failed");
    assert_eq!(m.agreement.documents, 1749);
    assert!(m.agreement.disagreements.is_empty(), "documents disagree");
    assert!(path_rate(&m) >= 0.99, "location paths {:.4}", path_rate(&m));
}

/// `peppol-bis3`: full marks on the unit tests (the three DK-R-003 tests of release 3.0.19
/// expect the old flag) and agreement everywhere but the two documents where the official
/// stylesheet aborts (CONFORMANCE.md).
#[test]
#[cfg_attr(
    invex_no_corpus,
    ignore = "no conformance corpus: set INVEX_CONFORMANCE or provide ../shared/conformance (.ci/run requires it)"
)]
fn peppol_profile_agrees_with_the_official_artefacts() {
    let m = run("peppol-bis3", &[]);
    let failed: Vec<&str> = m
        .unit
        .iter()
        .filter(|u| !u.passed)
        .map(|u| u.file.as_str())
        .collect();
    assert_eq!(m.unit.len(), 543);
    assert!(
        failed.iter().all(|f| f.contains("DK_Validation_DKR003__1")) && failed.len() <= 3,
        "unexpected unit-test failures: {failed:?}"
    );
    let disagreeing: Vec<&str> = m
        .agreement
        .disagreements
        .iter()
        .map(|d| d.file.as_str())
        .collect();
    assert!(
        disagreeing
            .iter()
            .all(|f| f.ends_with("BR-CL-23__01.xml") || f.ends_with("BR-CL-23__02.xml")),
        "unexpected disagreements: {disagreeing:?}"
    );
    for d in &m.agreement.disagreements {
        // where the official stylesheet aborted, invex reports findings and engine errors,
        // and never misses one the official artefacts report
        assert!(d.missing.is_empty(), "{}: missing {:?}", d.file, d.missing);
    }
    assert!(path_rate(&m) >= 0.99, "location paths {:.4}", path_rate(&m));
}

/// `peppol-bis3@2026.11` (3.0.22) against the 3.0.21 artefacts of the corpus: wherever
/// 3.0.22 changed nothing (every rule `invex rules diff` does not list), the unit tests and
/// the documents agree exactly as `peppol-bis3@2026.5` does. (No official 3.0.22 findings
/// are in the corpus; the changed rules are checked by their fixtures.)
#[test]
#[cfg_attr(
    invex_no_corpus,
    ignore = "no conformance corpus: set INVEX_CONFORMANCE or provide ../shared/conformance (.ci/run requires it)"
)]
fn peppol_2026_11_agrees_wherever_3_0_22_changed_nothing() {
    let corpus = corpus();
    let dir = rulepacks();
    let catalog = Catalog::load(&dir).expect("shipped packs compile");
    let d = invex_tools::diff::diff(&catalog, "peppol-bis3@2026.5", "peppol-bis3@2026.11")
        .expect("both versions are shipped");
    let changed: Vec<String> = d
        .added
        .iter()
        .chain(&d.removed)
        .map(|r| r.id.clone())
        .chain(d.changed.iter().map(|c| c.id.clone()))
        .collect();
    assert_eq!(changed.len(), 17, "{}", d.text());
    let unchanged = |id: &str| !changed.iter().any(|c| c == id);
    let target: &Target = TARGETS
        .iter()
        .find(|t| t.is_named("peppol-bis3@2026.5"))
        .expect("a conformance target");
    let ruleset = catalog
        .ruleset("peppol-bis3@2026.11")
        .expect("profile is shipped");

    let unit = conformance_tools::run_unit_tests(&corpus, &ruleset, |t| {
        t.configuration
            .as_deref()
            .is_some_and(|c| target.configurations.contains(&c))
            && t.expect.scope.iter().all(|id| unchanged(id))
    })
    .expect("corpus readable");
    let failed: Vec<&str> = unit
        .iter()
        .filter(|u| !u.passed)
        .map(|u| u.file.as_str())
        .collect();
    assert!(unit.len() > 500, "{} unit tests", unit.len());
    assert!(
        failed.iter().all(|f| f.contains("DK_Validation_DKR003__1")) && failed.len() <= 3,
        "unexpected unit-test failures: {failed:?}"
    );

    let expected = corpus.expected(target.expected).expect("expected findings");
    let a = conformance_tools::agreement(&corpus, &ruleset, &expected, unchanged);
    let disagreeing: Vec<&str> = a.disagreements.iter().map(|d| d.file.as_str()).collect();
    assert!(
        disagreeing
            .iter()
            .all(|f| f.ends_with("BR-CL-23__01.xml") || f.ends_with("BR-CL-23__02.xml")),
        "unexpected disagreements: {disagreeing:?}"
    );
}
