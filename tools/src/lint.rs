//! `invex rules lint`: schema and compile errors, unknown functions, fallback rules, rules
//! without fixtures.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use invex_engine::pack::{Diagnostic, KNOWN_OWNERS, PROFILES_FILE};
use invex_engine::rules::{compile_dir, CheckKind};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Warning,
    Error,
}

/// One lint finding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LintItem {
    pub level: Level,
    /// `schema` (YAML, structure, references), `xpath`, `unknown-function`, `fallback`,
    /// `fixtures`, `owner`, `remediation`, `profiles`.
    pub code: &'static str,
    pub file: PathBuf,
    /// 1-based; 0 when the item concerns a whole file.
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl std::fmt::Display for LintItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let level = match self.level {
            Level::Error => "error",
            Level::Warning => "warning",
        };
        if self.line == 0 {
            write!(f, "{}: ", self.file.display())?;
        } else {
            write!(f, "{}:{}:{}: ", self.file.display(), self.line, self.column)?;
        }
        write!(f, "{level}[{}]: {}", self.code, self.message)
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct LintReport {
    pub items: Vec<LintItem>,
    pub packs: usize,
    pub rules: usize,
}

impl LintReport {
    pub fn errors(&self) -> usize {
        self.items
            .iter()
            .filter(|i| i.level == Level::Error)
            .count()
    }

    pub fn warnings(&self) -> usize {
        self.items
            .iter()
            .filter(|i| i.level == Level::Warning)
            .count()
    }

    /// Whether the lint fails: any error, or with `strict` any warning.
    pub fn failed(&self, strict: bool) -> bool {
        self.errors() > 0 || (strict && self.warnings() > 0)
    }

    /// One line per item, then a summary line.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for i in &self.items {
            let _ = writeln!(out, "{i}");
        }
        let _ = writeln!(
            out,
            "{} error(s), {} warning(s) in {} pack(s), {} rule(s)",
            self.errors(),
            self.warnings(),
            self.packs,
            self.rules
        );
        out
    }
}

fn classify(d: &Diagnostic) -> &'static str {
    let m = d.message.as_str();
    if m.starts_with("invalid XPath") {
        if m.contains("unknown") && m.contains("function") {
            "unknown-function"
        } else {
            "xpath"
        }
    } else {
        "schema"
    }
}

fn item(
    level: Level,
    code: &'static str,
    file: &Path,
    line: usize,
    column: usize,
    message: String,
) -> LintItem {
    LintItem {
        level,
        code,
        file: file.to_path_buf(),
        line,
        column,
        message,
    }
}

/// Lint the rule-pack directory `dir`.
pub fn lint(dir: &Path) -> LintReport {
    let compilation = compile_dir(dir);
    let mut report = LintReport {
        packs: compilation.sources.packs.len(),
        rules: compilation
            .sources
            .packs
            .iter()
            .map(|p| p.checks().len() + p.pack.def.schema.as_ref().map_or(0, |s| s.rules.len()))
            .sum(),
        ..LintReport::default()
    };
    for d in &compilation.diagnostics {
        report.items.push(item(
            Level::Error,
            classify(d),
            &d.file,
            d.line,
            d.column,
            d.message.clone(),
        ));
    }
    if dir.is_dir() && compilation.sources.profiles.is_none() && !dir.join(PROFILES_FILE).exists() {
        report.items.push(item(
            Level::Warning,
            "profiles",
            &dir.join(PROFILES_FILE),
            0,
            0,
            "no profiles.yaml: no profile can use these packs".into(),
        ));
    }
    for pack in &compilation.packs {
        let reference = pack.reference();
        for (label, pos, expr) in pack.expressions() {
            if !expr.is_native() {
                report.items.push(item(
                    Level::Warning,
                    "fallback",
                    &pos.file,
                    pos.line,
                    pos.column,
                    format!(
                        "{label} of {reference} runs on the xee-xpath fallback: {}",
                        expr.fallback_reason().unwrap_or("not supported natively")
                    ),
                ));
            }
        }
        for r in pack.schema.iter().flat_map(|s| &s.rules) {
            if r.fixtures_pass.is_empty() || r.fixtures_fail.is_empty() {
                report.items.push(item(
                    Level::Warning,
                    "fixtures",
                    &r.pos.file,
                    r.pos.line,
                    r.pos.column,
                    format!(
                        "schema rule {} of {reference} needs a pass and a fail fixture",
                        r.id
                    ),
                ));
            }
        }
        for (_, _, c) in pack.checks() {
            let missing = match (c.fixtures_pass.is_empty(), c.fixtures_fail.is_empty()) {
                (true, true) => Some("no pass and no fail fixture"),
                (true, false) => Some("no pass fixture"),
                (false, true) => Some("no fail fixture"),
                (false, false) => None,
            };
            if let Some(missing) = missing {
                report.items.push(item(
                    Level::Warning,
                    "fixtures",
                    &c.pos.file,
                    c.pos.line,
                    c.pos.column,
                    format!("{} {} of {reference} has {missing}", c.kind.as_str(), c.id),
                ));
            }
            match &c.owner {
                Some(owner) if !KNOWN_OWNERS.contains(&owner.as_str()) => report.items.push(item(
                    Level::Warning,
                    "owner",
                    &c.pos.file,
                    c.pos.line,
                    c.pos.column,
                    format!(
                        "{} has owner `{owner}`, not one of {}",
                        c.id,
                        KNOWN_OWNERS.join(", ")
                    ),
                )),
                None if c.kind == CheckKind::Assert => report.items.push(item(
                    Level::Warning,
                    "owner",
                    &c.pos.file,
                    c.pos.line,
                    c.pos.column,
                    format!("{} has no owner", c.id),
                )),
                _ => {}
            }
            if c.remediation.as_deref().unwrap_or("").is_empty() {
                report.items.push(item(
                    Level::Warning,
                    "remediation",
                    &c.pos.file,
                    c.pos.line,
                    c.pos.column,
                    format!("{} has no remediation hint", c.id),
                ));
            }
        }
    }
    report
        .items
        .sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{tree, write};

    #[test]
    fn clean_tree_has_only_the_fixture_warning() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let r = lint(dir.path());
        assert_eq!(r.errors(), 0, "{}", r.render());
        assert_eq!(r.packs, 1);
        assert_eq!(r.rules, 2);
        let codes: Vec<&str> = r.items.iter().map(|i| i.code).collect();
        assert_eq!(codes, ["fixtures"], "{}", r.render());
        assert!(r.items[0].message.contains("T-02"));
        assert_eq!(r.items[0].line, 14);
        assert!(!r.failed(false));
        assert!(r.failed(true));
    }

    #[test]
    fn errors_are_located_and_classified() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let text = std::fs::read_to_string(dir.path().join("p/1.0/patterns/main.yaml")).unwrap();
        let text = text
            .replace("test: exists(t:Line)", "test: invex:no-such-helper(t:Line)")
            .replace("test: count(t:Line) < 5", "test: count(t:Line <")
            .replace(
                "owner: line-items\n        fixtures",
                "owner: somebody\n        fixtures",
            );
        write(dir.path(), "p/1.0/patterns/main.yaml", &text);
        let r = lint(dir.path());
        let got: Vec<(Level, &str, usize)> =
            r.items.iter().map(|i| (i.level, i.code, i.line)).collect();
        assert_eq!(
            got,
            [
                (Level::Error, "unknown-function", 7),
                (Level::Error, "xpath", 16)
            ],
            "{}",
            r.render()
        );
        assert!(r.failed(false));
        let shown = r.render();
        assert!(
            shown.contains("main.yaml:7:9: error[unknown-function]"),
            "{shown}"
        );
    }

    #[test]
    fn schema_errors_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        write(
            dir.path(),
            "p/1.0/patterns/main.yaml",
            "pattern: main\nrule: []\n",
        );
        let r = lint(dir.path());
        assert_eq!(r.errors(), 1, "{}", r.render());
        assert_eq!(r.items[0].code, "schema");
        assert_eq!(r.items[0].line, 2);
    }
}
