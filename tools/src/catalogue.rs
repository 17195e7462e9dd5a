//! `invex rules catalogue`: the error catalogue of a rule-pack directory, the same the
//! server answers at `GET /v1/rules` and `GET /v1/rules/{id}`.

use std::fmt::Write as _;

use invex_engine::catalogue::{Catalogue, Filter, RuleEntry};
use serde::Serialize;

/// One line per rule matching `filter`: id, flag, owner, the pack versions carrying it and
/// the message of the newest matching one; then a count.
pub fn list_text(catalogue: &Catalogue, filter: &Filter) -> String {
    let page = catalogue.search(filter, None, usize::MAX);
    let width = page
        .hits
        .iter()
        .map(|h| h.entry.id.len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for hit in &page.hits {
        let r = &hit.version.rule;
        let _ = writeln!(
            out,
            "{:width$}  {:<11}  {:<18}  {:<24}  {}",
            hit.entry.id,
            r.flag.as_str(),
            r.owner.as_deref().unwrap_or("-"),
            carried_in(hit.entry),
            r.message,
        );
    }
    let _ = writeln!(out, "{} rules", page.total);
    out
}

/// The pack versions carrying a rule, shortened: `peppol-bis3@2026.5,2026.11`.
fn carried_in(entry: &RuleEntry) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut last_pack = "";
    for v in &entry.versions {
        let (pack, version) = v.rule.pack.split_once('@').unwrap_or((&v.rule.pack, ""));
        if pack == last_pack {
            if let Some(l) = out.last_mut() {
                l.push(',');
                l.push_str(version);
            }
        } else {
            out.push(v.rule.pack.clone());
        }
        last_pack = pack;
    }
    out.join(" ")
}

/// Every rule matching `filter` with all it carries, as JSON (an array).
pub fn list_json(catalogue: &Catalogue, filter: &Filter) -> serde_json::Result<String> {
    let page = catalogue.search(filter, None, usize::MAX);
    let entries: Vec<&RuleEntry> = page.hits.iter().map(|h| h.entry).collect();
    serde_json::to_string_pretty(&entries)
}

/// One rule in full: its newest definition, then each pack version carrying it with its
/// profiles and what changed from the previous version.
pub fn show_text(entry: &RuleEntry) -> String {
    let r = entry.latest();
    let mut out = String::new();
    let _ = writeln!(out, "{} ({}, {})", entry.id, r.flag, r.pack);
    let _ = writeln!(out, "  message:        {}", r.message);
    if !r.remediation.is_empty() {
        let _ = writeln!(out, "  remediation:    {}", r.remediation);
    }
    let _ = writeln!(
        out,
        "  owner:          {}",
        r.owner.as_deref().unwrap_or("-")
    );
    if !r.business_terms.is_empty() {
        let _ = writeln!(out, "  business terms: {}", r.business_terms.join(", "));
    }
    let _ = writeln!(out, "  context:        {}", r.context);
    if !r.test.is_empty() {
        let _ = writeln!(out, "  test:           {}", r.test);
    }
    let _ = writeln!(out, "  versions:");
    for v in &entry.versions {
        let profiles: Vec<String> = v
            .profiles
            .iter()
            .map(|p| format!("{} ({})", p.profile, p.flag))
            .collect();
        let _ = writeln!(
            out,
            "    {} {}: run by {}",
            v.rule.pack,
            v.rule.flag,
            if profiles.is_empty() {
                "no installed profile".to_string()
            } else {
                profiles.join(", ")
            }
        );
        if let Some(prev) = &v.previous {
            if v.changes.is_empty() {
                let _ = writeln!(out, "      unchanged since {prev}");
            }
            for c in &v.changes {
                let _ = writeln!(
                    out,
                    "      {} changed since {prev}: {:?} -> {:?}",
                    c.field, c.from, c.to
                );
            }
        }
    }
    for gone in &entry.removed_in {
        let _ = writeln!(out, "    removed in {gone}");
    }
    out
}

/// One rule as JSON.
pub fn show_json(entry: &RuleEntry) -> serde_json::Result<String> {
    #[derive(Serialize)]
    struct Shown<'a> {
        #[serde(flatten)]
        entry: &'a RuleEntry,
    }
    serde_json::to_string_pretty(&Shown { entry })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use invex_engine::pack::Severity;
    use invex_engine::registry::Catalog;

    use super::*;

    fn shipped() -> Catalogue {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../rulepacks");
        Catalogue::of(&Catalog::load(&dir).expect("the shipped packs load"))
    }

    #[test]
    fn lists_and_shows_what_the_catalogue_holds() {
        let c = shipped();
        let filter = Filter {
            text: Some("PEPPOL-COMMON-R05".into()),
            severity: Some(Severity::Fatal),
            ..Filter::default()
        };
        let text = list_text(&c, &filter);
        let lines: Vec<&str> = text.lines().collect();
        let r054 = lines
            .iter()
            .find(|l| l.starts_with("PEPPOL-COMMON-R054 "))
            .expect("R054 is listed");
        assert!(r054.contains("fatal"), "{text}");
        assert!(r054.contains("peppol-bis3@2026.5,2026.11"), "{text}");
        assert!(
            lines.iter().all(|l| !l.starts_with("PEPPOL-COMMON-R04")),
            "{text}"
        );
        assert_eq!(
            lines.last(),
            Some(&format!("{} rules", lines.len() - 1).as_str())
        );
        let json: serde_json::Value =
            serde_json::from_str(&list_json(&c, &filter).expect("json")).expect("parses");
        assert_eq!(json.as_array().map(Vec::len), Some(lines.len() - 1));

        let shown = show_text(c.get("PEPPOL-COMMON-R054").expect("R054"));
        assert!(
            shown.contains("flag changed since peppol-bis3@2026.5: \"warning\" -> \"fatal\""),
            "{shown}"
        );
        let gone = show_text(c.get("GR-R-001-5").expect("GR-R-001-5"));
        assert!(gone.contains("removed in peppol-bis3@2026.11"), "{gone}");
        let json: serde_json::Value =
            serde_json::from_str(&show_json(c.get("SK-R-001").expect("SK-R-001")).expect("json"))
                .expect("parses");
        assert_eq!(json["id"], "SK-R-001");
        assert_eq!(json["versions"][0]["pack"], "peppol-bis3@2026.11");
    }
}
