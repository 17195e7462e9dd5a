//! `invex rules snapshot`: the rule catalogue as stable YAML (for insta snapshot tests).
//!
//! Per pack: id, version, title, overrides; per assert or report: id, kind, flag,
//! pattern, context and the SHA-256 of its test text (trimmed); per schema rule the same,
//! with the SHA-256 over the schema files. Then the profiles.

use std::path::Path;

use invex_engine::pack::{load_dir, LoadError, OverrideAction, PackSource, Severity};
use serde::Serialize;
use sha2::{Digest, Sha256};

#[derive(Debug, Serialize)]
pub struct Catalogue {
    pub packs: Vec<PackEntry>,
    pub profiles: Vec<ProfileEntry>,
}

#[derive(Debug, Serialize)]
pub struct PackEntry {
    pub pack: String,
    pub version: String,
    pub title: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<OverrideEntry>,
    pub rules: Vec<RuleEntry>,
}

#[derive(Debug, Serialize)]
pub struct OverrideEntry {
    pub rule: String,
    pub action: OverrideAction,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flag: Option<Severity>,
}

#[derive(Debug, Serialize)]
pub struct RuleEntry {
    pub id: String,
    /// `assert`, `report`, or `schema` (a schema pack's rule).
    pub kind: &'static str,
    pub flag: Severity,
    pub pattern: String,
    pub context: String,
    pub test_sha256: String,
}

#[derive(Debug, Serialize)]
pub struct ProfileEntry {
    pub id: String,
    pub version: String,
    pub packs: Vec<String>,
}

/// SHA-256 (hex) of a test's text, surrounding whitespace removed.
pub fn test_hash(test: &str) -> String {
    hex::encode(Sha256::digest(test.trim().as_bytes()))
}

/// A schema pack's rules: kind `schema`, pattern `schema`, context `/`, and for the test
/// hash the SHA-256 over the schema files read (path and digest, in reading order), so
/// that a change to any schema file shows in the snapshot of every rule it feeds.
fn schema_rules(p: &PackSource) -> Vec<RuleEntry> {
    let (Some(def), Some(loaded)) = (&p.pack.def.schema, &p.schema) else {
        return Vec::new();
    };
    let mut listing = String::new();
    for (path, sha256) in &loaded.files {
        listing.push_str(&format!("{sha256}  {path}\n"));
    }
    let schema_hash = test_hash(&listing);
    def.rules
        .iter()
        .map(|r| RuleEntry {
            id: r.id.clone(),
            kind: "schema",
            flag: Severity::Fatal,
            pattern: "schema".to_string(),
            context: "/".to_string(),
            test_sha256: schema_hash.clone(),
        })
        .collect()
}

/// Build the catalogue of the rule-pack directory `dir`.
pub fn catalogue(dir: &Path) -> Result<Catalogue, LoadError> {
    let (tree, diagnostics) = load_dir(dir);
    if !diagnostics.is_empty() {
        return Err(LoadError { diagnostics });
    }
    let packs = tree
        .packs
        .iter()
        .map(|p| PackEntry {
            pack: p.pack.def.pack.clone(),
            version: p.pack.def.version.clone(),
            title: p.pack.def.title.clone(),
            overrides: p
                .pack
                .def
                .overrides
                .iter()
                .map(|o| OverrideEntry {
                    rule: o.rule.clone(),
                    action: o.action,
                    flag: o.flag,
                })
                .collect(),
            rules: schema_rules(p)
                .into_iter()
                .chain(p.checks().into_iter().map(|(at, c)| {
                    let pattern = &p.patterns[at.pattern].def;
                    RuleEntry {
                        id: c.id.clone(),
                        kind: if at.kind == "reports" {
                            "report"
                        } else {
                            "assert"
                        },
                        flag: c.flag,
                        pattern: pattern.pattern.clone(),
                        context: pattern.rules[at.rule].context.trim().to_string(),
                        test_sha256: test_hash(&c.test),
                    }
                }))
                .collect(),
        })
        .collect();
    let profiles = tree
        .profiles
        .map(|p| {
            p.def
                .profiles
                .into_iter()
                .map(|p| ProfileEntry {
                    id: p.id,
                    version: p.version,
                    packs: p.packs,
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Catalogue { packs, profiles })
}

/// The catalogue of `dir` as YAML.
pub fn snapshot(dir: &Path) -> Result<String, LoadError> {
    let c = catalogue(dir)?;
    // Plain structs of strings and enums: serialization cannot fail.
    Ok(invex_engine::yaml::to_string(&c).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{tree, write};

    #[test]
    fn snapshot_is_stable_yaml() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let a = snapshot(dir.path()).unwrap();
        let b = snapshot(dir.path()).unwrap();
        assert_eq!(a, b);
        let expected = format!(
            "packs:
- pack: p
  version: '1.0'
  title: Test pack
  rules:
  - id: T-01
    kind: assert
    flag: fatal
    pattern: main
    context: /t:Doc
    test_sha256: {}
  - id: T-02
    kind: assert
    flag: warning
    pattern: main
    context: /t:Doc
    test_sha256: {}
profiles:
- id: prof
  version: '1'
  packs:
  - p@1.0
",
            test_hash("exists(t:Line)"),
            test_hash("count(t:Line) < 5")
        );
        assert_eq!(a, expected);
    }

    #[test]
    fn broken_tree_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        write(dir.path(), "p/1.0/pack.yaml", "pack: p\n");
        let e = snapshot(dir.path()).unwrap_err();
        assert!(e.to_string().contains("pack.yaml"), "{e}");
    }
}
