//! `invex rules diff A B`: what changed between two versions of a pack or of a profile.
//!
//! A pack (`id@version`) is compared by its own rules: every assert, report and schema
//! rule with the flag it declares. A profile (`id@version`, or a bare id: the version in
//! force today) is compared by the rules it runs: every rule of its packs with the flag the
//! profile gives it (overrides applied; rules disabled or replaced by a higher pack left
//! out). Rules are matched by id; for each rule present on both sides the fields that
//! differ are named: flag, test, context, message, remediation, pattern, business terms,
//! owner. Which pack version carries a rule is not a change by itself.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use invex_engine::catalogue::{changes, layer_rules, pack_rules, FieldChange, RuleVersion};
use invex_engine::registry::Catalog;
use serde::Serialize;

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
    pub added: Vec<RuleVersion>,
    pub removed: Vec<RuleVersion>,
    pub changed: Vec<Changed>,
    /// Rules present on both sides without any change.
    pub unchanged: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error("`{0}` is neither a pack nor a profile of this rule-pack directory (name packs and profiles as id@version)")]
    Unknown(String),
}

/// The rules `name` stands for in `catalog` (a pack version first, then a profile), and
/// its exact name.
fn rules_of(catalog: &Catalog, name: &str) -> Result<(String, Vec<RuleVersion>), DiffError> {
    if let Some(pack) = catalog.packs.iter().find(|p| p.reference() == name) {
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

/// Compare `from` with `to` (pack versions or profiles of the catalogue).
pub fn diff(catalog: &Catalog, from: &str, to: &str) -> Result<RuleDiff, DiffError> {
    let (from_name, a) = rules_of(catalog, from)?;
    let (to_name, b) = rules_of(catalog, to)?;
    // By id; within a profile a later (higher) pack's rule of the same id wins.
    let a: BTreeMap<String, RuleVersion> = a.into_iter().map(|r| (r.id.clone(), r)).collect();
    let b: BTreeMap<String, RuleVersion> = b.into_iter().map(|r| (r.id.clone(), r)).collect();
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
                let changes = changes(old, new);
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

    use super::*;

    fn shipped() -> Catalog {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../rulepacks");
        Catalog::load(&dir).expect("the shipped packs load")
    }

    fn ids(rules: &[RuleVersion]) -> Vec<&str> {
        rules.iter().map(|r| r.id.as_str()).collect()
    }

    #[test]
    fn peppol_3_0_21_to_3_0_22_lists_exactly_the_changed_rules() {
        let cat = shipped();
        let d = diff(&cat, "peppol-bis3@2026.5", "peppol-bis3@2026.11").unwrap();
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
                    vec!["test", "message", "remediation", "business_terms"]
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
        let cat = shipped();
        // The Slovak profile of 3.0.21 already ran the 3.0.22 Slovak rules (through
        // sk-national@2027.1) and its P0112; between the two versions only the Peppol
        // release changes, and the SK rules move to the Peppol pack.
        let d = diff(&cat, "peppol-bis3-sk@2027.1", "peppol-bis3-sk@2027.2").unwrap();
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
            diff(&cat, "peppol-bis3@2026.5", "nope@1"),
            Err(DiffError::Unknown(_))
        ));
    }

    /// Release notes embed `invex rules diff` output after a marker
    /// `<!-- invex rules diff A B -->`: each block must be what the command prints today.
    #[test]
    fn release_notes_are_the_diff_output() {
        let cat = shipped();
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/releases");
        let mut checked = 0;
        for entry in std::fs::read_dir(&dir).expect("docs/releases") {
            let path = entry.expect("entry").path();
            let text = std::fs::read_to_string(&path).expect("release notes");
            let mut rest = text.as_str();
            while let Some(at) = rest.find("<!-- invex rules diff ") {
                rest = &rest[at + "<!-- invex rules diff ".len()..];
                let (args, after) = rest.split_once(" -->").expect("marker end");
                let (from, to) = args.split_once(' ').expect("two versions");
                let block = after
                    .split_once("```text\n")
                    .and_then(|(_, b)| b.split_once("```"))
                    .map(|(b, _)| b)
                    .expect("a text block after the marker");
                let d = diff(&cat, from, to).expect("both versions are shipped");
                assert_eq!(
                    block,
                    d.text(),
                    "{}: the block after `invex rules diff {from} {to}` differs from the \
                     command's output; regenerate it",
                    path.display()
                );
                checked += 1;
            }
        }
        assert!(checked >= 2, "release notes with diff blocks: {checked}");
    }
}
