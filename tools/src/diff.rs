//! `invex rules diff A B`: what changed between two versions of a pack or of a profile.
//!
//! A pack (`id@version`) is compared by its own rules: every assert, report and schema
//! rule with the flag it declares. A profile (`id@version`, or a bare id: the version in
//! force today) is compared by the rules it runs: every rule of its packs with the flag the
//! profile gives it (overrides applied; rules disabled or replaced by a higher pack left
//! out). Rules are matched by id; for each rule present on both sides the fields that
//! differ are named: flag, test, context, message, remediation, pattern. Which pack
//! version carries a rule is not a change by itself.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use invex_engine::pack::Severity;
use invex_engine::registry::Catalog;
use invex_engine::rules::{Compilation, CompiledPack, Layer};
use serde::Serialize;

/// One rule as a diff sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RuleView {
    pub id: String,
    /// `id@version` of the pack that defines it.
    pub pack: String,
    pub flag: Severity,
    pub pattern: String,
    pub context: String,
    pub test: String,
    pub message: String,
    pub remediation: String,
}

/// A field of a rule that differs, with both values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldChange {
    pub field: &'static str,
    pub from: String,
    pub to: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Changed {
    pub id: String,
    pub changes: Vec<FieldChange>,
}

/// The difference between two rule sets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RuleDiff {
    pub from: String,
    pub to: String,
    pub added: Vec<RuleView>,
    pub removed: Vec<RuleView>,
    pub changed: Vec<Changed>,
    /// Rules present on both sides without any change.
    pub unchanged: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error("`{0}` is neither a pack nor a profile of this rule-pack directory (name packs and profiles as id@version)")]
    Unknown(String),
}

/// The rules of a pack, each with its own flag.
fn pack_rules(pack: &CompiledPack) -> Vec<RuleView> {
    let reference = pack.reference();
    let mut out: Vec<RuleView> = pack
        .schema
        .iter()
        .flat_map(|s| &s.rules)
        .map(|r| RuleView {
            id: r.id.clone(),
            pack: reference.clone(),
            flag: Severity::Fatal,
            pattern: "schema".to_string(),
            context: "/".to_string(),
            test: String::new(),
            message: r.title.clone(),
            remediation: r.remediation.clone(),
        })
        .collect();
    out.extend(pack.checks().map(|(p, r, c)| RuleView {
        id: c.id.clone(),
        pack: reference.clone(),
        flag: c.flag,
        pattern: p.id.clone(),
        context: one_line(&r.context_source),
        test: one_line(c.test.source()),
        message: c.message.clone(),
        remediation: c.remediation.clone().unwrap_or_default(),
    }));
    out
}

/// The rules a profile's layer runs, with the flags the profile gives them.
fn layer_rules(layer: &Layer) -> Vec<RuleView> {
    let mut rules = pack_rules(&layer.pack);
    let checks: Vec<_> = layer.pack.checks().map(|(_, _, c)| c).collect();
    let schema_rules = rules.len() - checks.len();
    let mut keep = Vec::with_capacity(rules.len());
    for (i, mut r) in rules.drain(..).enumerate() {
        if i < schema_rules {
            keep.push(r);
            continue;
        }
        let c = checks[i - schema_rules];
        if let Some(flag) = layer.effective.get(c.index).copied().flatten() {
            r.flag = flag;
            keep.push(r);
        }
    }
    keep
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The rules `name` stands for in `compilation` (a pack first, then a profile), and its
/// exact name.
fn rules_of(
    compilation: &Compilation,
    catalog: &Catalog,
    name: &str,
) -> Result<(String, Vec<RuleView>), DiffError> {
    if let Some(pack) = compilation.pack(name) {
        return Ok((pack.reference(), pack_rules(pack)));
    }
    let profile = catalog
        .profile(name)
        .ok_or_else(|| DiffError::Unknown(name.to_string()))?;
    let rules = profile
        .rules
        .layers()
        .iter()
        .flat_map(layer_rules)
        .collect();
    Ok((profile.def.reference(), rules))
}

/// Compare `from` with `to` (packs or profiles of the compiled directory).
pub fn diff(
    compilation: &Compilation,
    catalog: &Catalog,
    from: &str,
    to: &str,
) -> Result<RuleDiff, DiffError> {
    let (from_name, a) = rules_of(compilation, catalog, from)?;
    let (to_name, b) = rules_of(compilation, catalog, to)?;
    // By id; within a profile a later (higher) pack's rule of the same id wins.
    let a: BTreeMap<String, RuleView> = a.into_iter().map(|r| (r.id.clone(), r)).collect();
    let b: BTreeMap<String, RuleView> = b.into_iter().map(|r| (r.id.clone(), r)).collect();
    let mut out = RuleDiff {
        from: from_name,
        to: to_name,
        added: Vec::new(),
        removed: Vec::new(),
        changed: Vec::new(),
        unchanged: 0,
    };
    for (id, old) in &a {
        match b.get(id) {
            None => out.removed.push(old.clone()),
            Some(new) => {
                let changes = field_changes(old, new);
                if changes.is_empty() {
                    out.unchanged += 1;
                } else {
                    out.changed.push(Changed {
                        id: id.clone(),
                        changes,
                    });
                }
            }
        }
    }
    out.added = b
        .iter()
        .filter(|(id, _)| !a.contains_key(*id))
        .map(|(_, r)| r.clone())
        .collect();
    Ok(out)
}

fn field_changes(old: &RuleView, new: &RuleView) -> Vec<FieldChange> {
    let mut out = Vec::new();
    let mut field = |name: &'static str, a: &str, b: &str| {
        if a != b {
            out.push(FieldChange {
                field: name,
                from: a.to_string(),
                to: b.to_string(),
            });
        }
    };
    field("flag", old.flag.as_str(), new.flag.as_str());
    field("test", &old.test, &new.test);
    field("context", &old.context, &new.context);
    field("message", &old.message, &new.message);
    field("remediation", &old.remediation, &new.remediation);
    field("pattern", &old.pattern, &new.pattern);
    out
}

impl RuleDiff {
    /// One line per rule: `added`, `removed`, or `changed` with the fields, and for a
    /// changed flag its old and new value.
    pub fn text(&self) -> String {
        let mut s = format!(
            "{} -> {}: {} added, {} removed, {} changed, {} unchanged\n",
            self.from,
            self.to,
            self.added.len(),
            self.removed.len(),
            self.changed.len(),
            self.unchanged
        );
        for r in &self.added {
            let _ = writeln!(
                s,
                "added    {} ({}, {}): {}",
                r.id, r.flag, r.pack, r.message
            );
        }
        for r in &self.removed {
            let _ = writeln!(s, "removed  {} ({}, {})", r.id, r.flag, r.pack);
        }
        for c in &self.changed {
            let fields: Vec<String> = c
                .changes
                .iter()
                .map(|f| match f.field {
                    "flag" => format!("flag {} -> {}", f.from, f.to),
                    other => other.to_string(),
                })
                .collect();
            let _ = writeln!(s, "changed  {}: {}", c.id, fields.join(", "));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use invex_engine::rules::compile_dir;

    use super::*;

    fn shipped() -> (Compilation, Catalog) {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../rulepacks");
        let catalog = Catalog::load(&dir).expect("the shipped packs load");
        (compile_dir(&dir), catalog)
    }

    fn ids(rules: &[RuleView]) -> Vec<&str> {
        rules.iter().map(|r| r.id.as_str()).collect()
    }

    #[test]
    fn peppol_3_0_21_to_3_0_22_lists_exactly_the_changed_rules() {
        let (c, cat) = shipped();
        let d = diff(&c, &cat, "peppol-bis3@2026.5", "peppol-bis3@2026.11").unwrap();
        assert_eq!(
            ids(&d.added),
            [
                "PEPPOL-COMMON-R058",
                "PEPPOL-COMMON-R059",
                "SK-R-001",
                "SK-R-002",
                "SK-R-003",
                "SK-R-004",
                "SK-R-005",
                "SK-R-006",
                "SK-R-007"
            ]
        );
        assert_eq!(ids(&d.removed), ["GR-R-001-5"]);
        let changed: Vec<(&str, Vec<&str>)> = d
            .changed
            .iter()
            .map(|c| (c.id.as_str(), c.changes.iter().map(|f| f.field).collect()))
            .collect();
        assert_eq!(
            changed,
            [
                ("PEPPOL-COMMON-R054", vec!["flag"]),
                ("PEPPOL-COMMON-R055", vec!["flag"]),
                ("PEPPOL-COMMON-R056-1", vec!["flag"]),
                ("PEPPOL-COMMON-R056-2", vec!["flag"]),
                ("PEPPOL-COMMON-R057", vec!["flag"]),
                ("PEPPOL-EN16931-P0100", vec!["test"]),
                (
                    "PEPPOL-EN16931-P0112",
                    vec!["test", "message", "remediation"]
                ),
            ]
        );
        let text = d.text();
        assert!(
            text.starts_with(
                "peppol-bis3@2026.5 -> peppol-bis3@2026.11: 9 added, 1 removed, 7 changed, "
            ),
            "{text}"
        );
        assert!(text.contains("changed  PEPPOL-COMMON-R054: flag warning -> fatal\n"));
    }

    #[test]
    fn profiles_compare_the_rules_they_run() {
        let (c, cat) = shipped();
        // The Slovak profile of 3.0.21 already ran the 3.0.22 Slovak rules (through
        // sk-national@2027.1) and its P0112; between the two versions only the Peppol
        // release changes, and the SK rules move to the Peppol pack.
        let d = diff(&c, &cat, "peppol-bis3-sk@2027.1", "peppol-bis3-sk@2027.2").unwrap();
        assert_eq!(
            ids(&d.added),
            ["PEPPOL-COMMON-R058", "PEPPOL-COMMON-R059"],
            "{}",
            d.text()
        );
        assert_eq!(ids(&d.removed), ["GR-R-001-5"], "{}", d.text());
        // SK-R-001 keeps its flag, test and message; it moved to another pattern, and its
        // context names the Peppol pack's country variables.
        let sk = d.changed.iter().find(|c| c.id == "SK-R-001").expect("{}");
        let fields: Vec<&str> = sk.changes.iter().map(|f| f.field).collect();
        assert_eq!(fields, ["context", "pattern"], "{}", d.text());
        assert!(matches!(
            diff(&c, &cat, "peppol-bis3@2026.5", "nope@1"),
            Err(DiffError::Unknown(_))
        ));
    }
}
