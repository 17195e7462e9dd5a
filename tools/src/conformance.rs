//! Conformance against the official artefacts: the VEFA unit tests and document agreement
//! over the corpus in `../shared/conformance` (see its README for the layout).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use invex_engine::report::{Finding, FindingLayer, Severity, ENGINE_ERROR};
use invex_engine::rules::RuleSet;
use rayon::prelude::*;
use serde::Deserialize;

#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
}

/// One VEFA unit test: which rules it is about and what they must do.
#[derive(Clone, Debug, Deserialize)]
pub struct UnitTest {
    pub file: String,
    #[serde(default)]
    pub configuration: Option<String>,
    /// Absent for documents that are not unit tests (examples, test files).
    #[serde(default)]
    pub expect: Expectation,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct Expectation {
    #[serde(default)]
    pub scope: Vec<String>,
    #[serde(default)]
    pub success: Vec<String>,
    #[serde(default)]
    pub error: BTreeMap<String, usize>,
    #[serde(default)]
    pub warning: BTreeMap<String, usize>,
    #[serde(default)]
    pub fatal: BTreeMap<String, usize>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct ExpectedFinding {
    pub id: String,
    pub flag: String,
    #[serde(default)]
    pub path: String,
}

#[derive(Clone, Debug, Deserialize)]
pub struct ExpectedDocument {
    #[serde(default)]
    pub failed: Vec<ExpectedFinding>,
    #[serde(default)]
    pub aborted: bool,
}

#[derive(Debug, Deserialize)]
struct ExpectedFile {
    documents: BTreeMap<String, ExpectedDocument>,
}

/// The corpus directory (`.../shared/conformance`).
#[derive(Clone, Debug)]
pub struct Corpus {
    root: PathBuf,
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, CorpusError> {
    let text = std::fs::read_to_string(path).map_err(|source| CorpusError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| CorpusError::Json {
        path: path.to_path_buf(),
        source,
    })
}

impl Corpus {
    pub fn new(root: impl Into<PathBuf>) -> Corpus {
        Corpus { root: root.into() }
    }

    /// Whether the corpus is present (tests skip, loudly, when it is not).
    pub fn exists(&self) -> bool {
        self.root
            .join("expected/unit-test-expectations.json")
            .is_file()
    }

    pub fn unit_tests(&self) -> Result<Vec<UnitTest>, CorpusError> {
        read_json(&self.root.join("expected/unit-test-expectations.json"))
    }

    /// `expected/<name>.json`: official findings per document.
    pub fn expected(&self, name: &str) -> Result<BTreeMap<String, ExpectedDocument>, CorpusError> {
        let f: ExpectedFile = read_json(&self.root.join("expected").join(format!("{name}.json")))?;
        Ok(f.documents)
    }

    pub fn document_path(&self, file: &str) -> PathBuf {
        self.root.join("corpus").join(file)
    }

    /// The findings of the rule layers: the official artefacts are Schematron, so the
    /// schema layer's findings are left out of every comparison here (the schema layer is
    /// measured against xmllint by engine/tests/xsd_differential.rs).
    fn validate(&self, ruleset: &RuleSet, file: &str) -> Result<Vec<Finding>, String> {
        let path = self.document_path(file);
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        ruleset
            .validate_bytes(&bytes)
            .map(|r| {
                r.findings
                    .into_iter()
                    .filter(|f| f.layer != FindingLayer::Schema)
                    .collect()
            })
            .map_err(|e| format!("{file}: {e}"))
    }
}

/// The outcome of one unit test.
#[derive(Clone, Debug)]
pub struct UnitOutcome {
    pub file: String,
    pub passed: bool,
    /// What went wrong, one line per rule.
    pub problems: Vec<String>,
}

fn count(findings: &[Finding], id: &str, severity: Option<Severity>) -> usize {
    findings
        .iter()
        .filter(|f| f.rule_id == id && severity.is_none_or(|s| f.severity == s))
        .count()
}

/// Judge one unit test's expectation against the findings (VEFA semantics: rules outside
/// the scope are ignored).
pub fn judge(expect: &Expectation, findings: &[Finding]) -> Vec<String> {
    let mut problems = Vec::new();
    for id in &expect.success {
        let n = count(findings, id, None);
        if n > 0 {
            problems.push(format!("{id}: expected success, fired {n} time(s)"));
        }
    }
    let fatal = expect.error.iter().chain(expect.fatal.iter());
    for (id, want) in fatal {
        let n = count(findings, id, Some(Severity::Fatal));
        if n != *want {
            problems.push(format!("{id}: expected {want} fatal, got {n}"));
        }
    }
    for (id, want) in &expect.warning {
        let n = count(findings, id, Some(Severity::Warning));
        if n != *want {
            problems.push(format!("{id}: expected {want} warning, got {n}"));
        }
    }
    for f in findings {
        if f.rule_id == ENGINE_ERROR
            && f.about_rule
                .as_ref()
                .is_some_and(|r| expect.scope.contains(r))
        {
            problems.push(format!(
                "{}: engine error: {}",
                f.about_rule.as_deref().unwrap_or_default(),
                f.message
            ));
        }
    }
    problems
}

/// Run the unit tests selected by `select` with `ruleset`, in parallel.
pub fn run_unit_tests(
    corpus: &Corpus,
    ruleset: &RuleSet,
    select: impl Fn(&UnitTest) -> bool + Sync,
) -> Result<Vec<UnitOutcome>, CorpusError> {
    let tests: Vec<UnitTest> = corpus
        .unit_tests()?
        .into_iter()
        .filter(|t| select(t))
        .collect();
    Ok(tests
        .par_iter()
        .map(|t| match corpus.validate(ruleset, &t.file) {
            Ok(findings) => {
                let problems = judge(&t.expect, &findings);
                UnitOutcome {
                    file: t.file.clone(),
                    passed: problems.is_empty(),
                    problems,
                }
            }
            Err(e) => UnitOutcome {
                file: t.file.clone(),
                passed: false,
                problems: vec![e],
            },
        })
        .collect())
}

/// A document where invex and the official artefacts disagree.
#[derive(Clone, Debug)]
pub struct Disagreement {
    pub file: String,
    /// (rule id, flag) the official artefacts report and invex does not (with multiplicity).
    pub missing: Vec<(String, String)>,
    /// (rule id, flag) invex reports and the official artefacts do not.
    pub extra: Vec<(String, String)>,
}

#[derive(Clone, Debug, Default)]
pub struct Agreement {
    pub documents: usize,
    pub agreeing: usize,
    pub disagreements: Vec<Disagreement>,
    /// Findings whose location path matched the official one (after normalisation).
    pub paths_compared: usize,
    pub paths_matching: usize,
}

impl Agreement {
    pub fn rate(&self) -> f64 {
        if self.documents == 0 {
            return 1.0;
        }
        self.agreeing as f64 / self.documents as f64
    }
}

/// Official paths index every step and name the root with the stylesheet's prefix:
/// drop `[1]` and unify the root prefix before comparing.
pub fn normalize_path(p: &str) -> String {
    let p = p.replace("[1]", "");
    let mut out = String::new();
    for (i, step) in p.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        if i == 1 {
            let local = step.rsplit(':').next().unwrap_or(step);
            out.push_str(local);
        } else {
            out.push_str(step);
        }
    }
    out
}

/// Compare the multiset of (rule id, flag) per document with `expected`, restricted to
/// rule ids accepted by `ids`.
pub fn agreement(
    corpus: &Corpus,
    ruleset: &RuleSet,
    expected: &BTreeMap<String, ExpectedDocument>,
    ids: impl Fn(&str) -> bool + Sync,
) -> Agreement {
    let results: Vec<(Option<Disagreement>, usize, usize)> = expected
        .par_iter()
        .map(|(file, exp)| {
            let findings = match corpus.validate(ruleset, file) {
                Ok(f) => f,
                Err(e) => {
                    return (
                        Some(Disagreement {
                            file: file.clone(),
                            missing: vec![],
                            extra: vec![(format!("error: {e}"), String::new())],
                        }),
                        0,
                        0,
                    )
                }
            };
            let mut want: HashMap<(String, String), usize> = HashMap::new();
            let mut want_paths: HashMap<String, Vec<String>> = HashMap::new();
            for f in exp.failed.iter().filter(|f| ids(&f.id)) {
                *want.entry((f.id.clone(), f.flag.clone())).or_default() += 1;
                want_paths
                    .entry(f.id.clone())
                    .or_default()
                    .push(normalize_path(&f.path));
            }
            let mut got: HashMap<(String, String), usize> = HashMap::new();
            let (mut compared, mut matching) = (0, 0);
            for f in findings.iter().filter(|f| ids(&f.rule_id)) {
                *got.entry((f.rule_id.clone(), f.severity.as_str().to_string()))
                    .or_default() += 1;
                if let Some(paths) = want_paths.get_mut(&f.rule_id) {
                    compared += 1;
                    let mine = normalize_path(&f.location.path);
                    if let Some(i) = paths.iter().position(|p| *p == mine) {
                        paths.swap_remove(i);
                        matching += 1;
                    }
                }
            }
            let diff = |a: &HashMap<(String, String), usize>,
                        b: &HashMap<(String, String), usize>| {
                let mut out = Vec::new();
                for (k, n) in a {
                    let m = b.get(k).copied().unwrap_or(0);
                    for _ in m..*n {
                        out.push(k.clone());
                    }
                }
                out.sort();
                out
            };
            let missing = diff(&want, &got);
            let extra = diff(&got, &want);
            let d = if missing.is_empty() && extra.is_empty() {
                None
            } else {
                Some(Disagreement {
                    file: file.clone(),
                    missing,
                    extra,
                })
            };
            (d, compared, matching)
        })
        .collect();
    let mut a = Agreement {
        documents: results.len(),
        ..Default::default()
    };
    for (d, c, m) in results {
        a.paths_compared += c;
        a.paths_matching += m;
        match d {
            None => a.agreeing += 1,
            Some(d) => a.disagreements.push(d),
        }
    }
    a.disagreements.sort_by(|x, y| x.file.cmp(&y.file));
    a
}

/// What a profile is measured against: the expected findings file and the unit-test
/// configurations that belong to it.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// The exact profile version (`id@version`) the artefacts describe.
    pub profile: &'static str,
    pub expected: &'static str,
    pub configurations: &'static [&'static str],
}

/// The official artefacts each shipped profile must agree with.
pub const TARGETS: &[Target] = &[
    Target {
        profile: "en16931-ubl@1.3.16",
        expected: "en16931-ubl-1.3.16",
        configurations: &["tc434-ubl"],
    },
    Target {
        profile: "peppol-bis3@2026.5",
        expected: "peppol-bis3-2026.5",
        configurations: &[
            "peppolbis-en16931-base-3.0-ubl",
            "peppolbis-en16931-01-3.0-ubl-invoice",
        ],
    },
];

impl Target {
    /// Whether `name` (`id` or `id@version`) names this target's profile.
    pub fn is_named(&self, name: &str) -> bool {
        name == self.profile || self.profile.split('@').next() == Some(name)
    }
}

/// Conformance figures of one profile.
#[derive(Debug)]
pub struct ProfileConformance {
    pub profile: String,
    pub unit: Vec<UnitOutcome>,
    pub agreement: Agreement,
}

impl ProfileConformance {
    pub fn unit_passed(&self) -> usize {
        self.unit.iter().filter(|u| u.passed).count()
    }

    /// Human-readable summary and every disagreement.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let total = self.unit.len();
        let passed = self.unit_passed();
        let pct = |a: usize, b: usize| {
            if b == 0 {
                100.0
            } else {
                a as f64 * 100.0 / b as f64
            }
        };
        out.push_str(&format!(
            "profile {}\n  unit tests: {passed}/{total} passed ({:.2}%)\n  agreement: {}/{} documents ({:.2}%)\n  location paths: {}/{} findings ({:.2}%)\n",
            self.profile,
            pct(passed, total),
            self.agreement.agreeing,
            self.agreement.documents,
            self.agreement.rate() * 100.0,
            self.agreement.paths_matching,
            self.agreement.paths_compared,
            pct(self.agreement.paths_matching, self.agreement.paths_compared),
        ));
        for u in self.unit.iter().filter(|u| !u.passed) {
            out.push_str(&format!(
                "  unit FAIL {}: {}\n",
                u.file,
                u.problems.join("; ")
            ));
        }
        for d in &self.agreement.disagreements {
            out.push_str(&format!("  disagree {}:", d.file));
            if !d.missing.is_empty() {
                out.push_str(&format!(" missing {}", pairs(&d.missing)));
            }
            if !d.extra.is_empty() {
                out.push_str(&format!(" extra {}", pairs(&d.extra)));
            }
            out.push('\n');
        }
        out
    }
}

fn pairs(v: &[(String, String)]) -> String {
    v.iter()
        .map(|(id, flag)| format!("{id}/{flag}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Measure `target`'s profile from `catalog`, restricted to rule ids starting with one of
/// `only` (all rules when empty).
pub fn measure(
    corpus: &Corpus,
    ruleset: &RuleSet,
    target: &Target,
    only: &[String],
) -> Result<ProfileConformance, CorpusError> {
    let selected = |id: &str| only.is_empty() || only.iter().any(|p| id.starts_with(p.as_str()));
    let unit = run_unit_tests(corpus, ruleset, |t| {
        t.configuration
            .as_deref()
            .is_some_and(|c| target.configurations.contains(&c))
            && t.expect.scope.iter().any(|id| selected(id))
    })?;
    let expected = corpus.expected(target.expected)?;
    let agreement = agreement(corpus, ruleset, &expected, selected);
    Ok(ProfileConformance {
        profile: ruleset.profile().to_string(),
        unit,
        agreement,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn official_paths_normalise_like_ours() {
        assert_eq!(
            normalize_path("/ubl-invoice:Invoice[1]/cac:InvoiceLine[2]/cbc:ID[1]"),
            normalize_path("/ubl:Invoice/cac:InvoiceLine[2]/cbc:ID")
        );
        assert_ne!(
            normalize_path("/ubl:Invoice/cac:InvoiceLine[2]"),
            normalize_path("/ubl:Invoice/cac:InvoiceLine[3]")
        );
    }
}
