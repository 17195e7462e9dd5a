//! `invex rules test`: run every fixture of every pack.
//!
//! Each pack is validated alone (its overrides concern lower packs). A `pass` fixture must
//! not make its rule fire (nor raise an engine error in it); a `fail` fixture must make it
//! fire at least once with the rule's flag.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use invex_engine::fixtures::{fixture_files, judge_pack, validate_fixture, FixtureResult};
pub use invex_engine::fixtures::{Expectation, FixtureFailure};
use invex_engine::pack::Diagnostic;
use invex_engine::rules::{compile_dir, Compilation, RuleSet};
use rayon::prelude::*;
use serde::Serialize;

#[derive(Clone, Debug, Default, Serialize)]
pub struct FixtureReport {
    /// Fixture checks run (one per rule and fixture).
    pub checks: usize,
    pub failures: Vec<FixtureFailure>,
    /// Packs that could not be loaded or compiled (their fixtures did not run).
    pub errors: Vec<Diagnostic>,
}

impl FixtureReport {
    pub fn passed(&self) -> usize {
        self.checks - self.failures.len()
    }

    pub fn ok(&self) -> bool {
        self.failures.is_empty() && self.errors.is_empty()
    }

    /// Errors, failures, then `fixtures: N passed, M failed`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for e in &self.errors {
            let _ = writeln!(out, "error: {e}");
        }
        for f in &self.failures {
            let _ = writeln!(out, "{f}");
        }
        let _ = writeln!(
            out,
            "fixtures: {} passed, {} failed",
            self.passed(),
            self.failures.len()
        );
        out
    }
}

/// Run every fixture under the rule-pack directory `dir`.
pub fn run_fixtures(dir: &Path) -> FixtureReport {
    run_compiled(&compile_dir(dir))
}

/// Run the fixtures of every pack of `compilation` that compiled.
pub fn run_compiled(compilation: &Compilation) -> FixtureReport {
    let mut report = FixtureReport {
        errors: compilation.diagnostics.clone(),
        ..FixtureReport::default()
    };
    for pack in &compilation.packs {
        let rules = RuleSet::single(Arc::clone(pack));
        // Each fixture file validated once, in parallel; judged by the engine's runner.
        let results: HashMap<PathBuf, FixtureResult> = fixture_files(pack)
            .into_par_iter()
            .map(|f| {
                let r = validate_fixture(&rules, &f);
                (f, r)
            })
            .collect();
        let judged = judge_pack(pack, &results);
        report.checks += judged.checks;
        report.failures.extend(judged.failures);
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{tree, write, BAD_DOC, OK_DOC};

    #[test]
    fn good_fixtures_pass() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let r = run_fixtures(dir.path());
        assert!(r.ok(), "{}", r.render());
        assert_eq!(r.checks, 2);
        assert!(r.render().ends_with("fixtures: 2 passed, 0 failed\n"));
    }

    #[test]
    fn swapped_fixtures_fail_both_ways() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        write(dir.path(), "p/1.0/fixtures/ok.xml", BAD_DOC);
        write(dir.path(), "p/1.0/fixtures/bad.xml", OK_DOC);
        let r = run_fixtures(dir.path());
        assert_eq!(r.failures.len(), 2, "{}", r.render());
        assert_eq!(r.failures[0].expectation, Expectation::Pass);
        assert!(r.failures[0].detail.contains("fired 1 time"));
        assert_eq!(r.failures[1].expectation, Expectation::Fail);
        assert!(r.render().contains("FAIL p@1.0 T-01 (fail fixture"));
        assert!(!r.ok());
    }

    #[test]
    fn malformed_fixture_is_a_failure() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        write(dir.path(), "p/1.0/fixtures/bad.xml", "<Doc");
        let r = run_fixtures(dir.path());
        assert_eq!(r.failures.len(), 1, "{}", r.render());
        assert!(r.failures[0].detail.contains("not well-formed"));
    }
}
