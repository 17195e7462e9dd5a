//! Running a pack's fixtures: every rule's `pass` documents must not make it fire (nor
//! raise an engine error in it), its `fail` documents must make it fire at least once
//! with the rule's flag. The pack runs alone (its overrides concern lower packs).
//!
//! Used by the registry's reload gate and by `invex rules test`, which validates the
//! files in parallel and judges them here ([`fixture_files`], [`judge_pack`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::report::{Report, Severity, ENGINE_ERROR};
use crate::rules::{CompiledPack, RuleSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Expectation {
    Pass,
    Fail,
}

impl Expectation {
    pub fn as_str(self) -> &'static str {
        match self {
            Expectation::Pass => "pass",
            Expectation::Fail => "fail",
        }
    }
}

/// A fixture that did not meet its expectation.
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
        write!(
            f,
            "FAIL {} {} ({} fixture {}): {}",
            self.pack,
            self.rule,
            self.expectation.as_str(),
            self.fixture.display(),
            self.detail
        )
    }
}

/// The fixtures of one pack: how many rule-and-fixture checks ran, and the failures.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PackFixtures {
    pub checks: usize,
    pub failures: Vec<FixtureFailure>,
}

/// The result of validating one fixture file with the pack alone.
pub type FixtureResult = Result<Report, String>;

/// Every fixture file of `pack`, each once, sorted.
pub fn fixture_files(pack: &CompiledPack) -> Vec<PathBuf> {
    let schema_rules = pack.schema.iter().flat_map(|s| &s.rules);
    let mut files: Vec<PathBuf> = pack
        .checks()
        .flat_map(|(_, _, c)| c.fixtures_pass.iter().chain(&c.fixtures_fail))
        .chain(schema_rules.flat_map(|r| r.fixtures_pass.iter().chain(&r.fixtures_fail)))
        .cloned()
        .collect();
    files.sort();
    files.dedup();
    files
}

/// Validate one fixture file with `rules` (the pack's own rule set).
pub fn validate_fixture(rules: &RuleSet, file: &Path) -> FixtureResult {
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read the fixture: {e}"))?;
    rules.validate_bytes(&bytes).map_err(|e| e.to_string())
}

/// Run every fixture of `pack`, one file after the other.
pub fn run_pack(pack: &Arc<CompiledPack>) -> PackFixtures {
    let rules = RuleSet::single(Arc::clone(pack));
    let results: HashMap<PathBuf, FixtureResult> = fixture_files(pack)
        .into_iter()
        .map(|f| {
            let r = validate_fixture(&rules, &f);
            (f, r)
        })
        .collect();
    judge_pack(pack, &results)
}

/// Judge every rule of `pack` against the validated fixture files.
pub fn judge_pack(pack: &CompiledPack, results: &HashMap<PathBuf, FixtureResult>) -> PackFixtures {
    let reference = pack.reference();
    let mut out = PackFixtures::default();
    // Every rule with its flag and fixtures: the schema layer's first (fatal), then the
    // patterns' checks.
    let schema_rules = pack
        .schema
        .iter()
        .flat_map(|s| &s.rules)
        .map(|r| (&r.id, Severity::Fatal, &r.fixtures_pass, &r.fixtures_fail));
    let checks = pack
        .checks()
        .map(|(_, _, c)| (&c.id, c.flag, &c.fixtures_pass, &c.fixtures_fail));
    for (id, flag, pass, fail) in schema_rules.chain(checks) {
        for (expectation, list) in [(Expectation::Pass, pass), (Expectation::Fail, fail)] {
            for fixture in list {
                out.checks += 1;
                let detail = match results.get(fixture) {
                    None => Some("the fixture was not run".to_string()),
                    Some(Err(e)) => Some(e.clone()),
                    Some(Ok(r)) => judge(r, id, flag, expectation),
                };
                if let Some(detail) = detail {
                    out.failures.push(FixtureFailure {
                        pack: reference.clone(),
                        rule: id.clone(),
                        fixture: fixture.clone(),
                        expectation,
                        detail,
                    });
                }
            }
        }
    }
    out
}

/// None when the report meets the expectation, else why not.
fn judge(r: &Report, id: &str, flag: Severity, expectation: Expectation) -> Option<String> {
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
