//! `invex rules test`: run every fixture of every pack.
//!
//! Each pack is validated alone (its overrides concern lower packs). A `pass` fixture must
//! not make its rule fire (nor raise an engine error in it); a `fail` fixture must make it
//! fire at least once with the rule's flag.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use invex_engine::pack::Diagnostic;
use invex_engine::report::{Report, ENGINE_ERROR};
use invex_engine::rules::{compile_dir, RuleSet};
use rayon::prelude::*;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Expectation {
    Pass,
    Fail,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FixtureFailure {
    /// `id@version`.
    pub pack: String,
    pub rule: String,
    pub fixture: PathBuf,
    pub expectation: Expectation,
    pub detail: String,
}

impl std::fmt::Display for FixtureFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.expectation {
            Expectation::Pass => "pass",
            Expectation::Fail => "fail",
        };
        write!(
            f,
            "FAIL {} {} ({kind} fixture {}): {}",
            self.pack,
            self.rule,
            self.fixture.display(),
            self.detail
        )
    }
}

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
    let compilation = compile_dir(dir);
    let mut report = FixtureReport {
        errors: compilation.diagnostics.clone(),
        ..FixtureReport::default()
    };
    for pack in &compilation.packs {
        let reference = pack.reference();
        let rules = RuleSet::single(Arc::clone(pack));
        // Validate each fixture file once.
        let mut files: Vec<&PathBuf> = pack
            .checks()
            .flat_map(|(_, _, c)| c.fixtures_pass.iter().chain(&c.fixtures_fail))
            .collect();
        files.sort();
        files.dedup();
        let results: HashMap<&PathBuf, Result<Report, String>> = files
            .par_iter()
            .map(|f| {
                let r = std::fs::read(f)
                    .map_err(|e| format!("cannot read the fixture: {e}"))
                    .and_then(|bytes| rules.validate_bytes(&bytes).map_err(|e| e.to_string()));
                (*f, r)
            })
            .collect();
        for (_, _, c) in pack.checks() {
            for (expectation, list) in [
                (Expectation::Pass, &c.fixtures_pass),
                (Expectation::Fail, &c.fixtures_fail),
            ] {
                for fixture in list {
                    report.checks += 1;
                    let detail = match results.get(fixture) {
                        None => Some("the fixture was not run".to_string()),
                        Some(Err(e)) => Some(e.clone()),
                        Some(Ok(r)) => judge(r, &c.id, c.flag, expectation),
                    };
                    if let Some(detail) = detail {
                        report.failures.push(FixtureFailure {
                            pack: reference.clone(),
                            rule: c.id.clone(),
                            fixture: fixture.clone(),
                            expectation,
                            detail,
                        });
                    }
                }
            }
        }
    }
    report
}

/// None when the report meets the expectation, else why not.
fn judge(
    r: &Report,
    id: &str,
    flag: invex_engine::report::Severity,
    expectation: Expectation,
) -> Option<String> {
    let fired: Vec<_> = r.findings.iter().filter(|f| f.rule_id == id).collect();
    let errors: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.rule_id == ENGINE_ERROR && f.about_rule.as_deref() == Some(id))
        .collect();
    if let Some(e) = errors.first() {
        return Some(format!(
            "engine error at {} ({}:{}): {}",
            e.location.path, e.location.line, e.location.column, e.message
        ));
    }
    match expectation {
        Expectation::Pass => fired.first().map(|f| {
            format!(
                "expected no finding, the rule fired {} time(s), first at {} ({}:{})",
                fired.len(),
                f.location.path,
                f.location.line,
                f.location.column
            )
        }),
        Expectation::Fail => {
            if fired.is_empty() {
                Some("expected the rule to fire, it did not".to_string())
            } else if !fired.iter().any(|f| f.severity == flag) {
                Some(format!(
                    "the rule fired, but as {} instead of {flag}",
                    fired[0].severity
                ))
            } else {
                None
            }
        }
    }
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
