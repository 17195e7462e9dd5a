//! ISO Schematron validation report language (SVRL) rendering of a report.

use std::fmt::Write;

use super::{Finding, FindingLayer, Report, ENGINE_ERROR};
use crate::rules::RuleSet;

const SVRL_NS: &str = "http://purl.oclc.org/dsdl/svrl";

/// Render `report` as SVRL. With the rule set that produced it, findings are grouped
/// under their pattern (`svrl:active-pattern`, one per pattern of every pack) and rule
/// (`svrl:fired-rule` with the rule's context), and asserts carry their test. Without
/// it, findings are grouped by pack.
pub fn to_svrl(report: &Report, rules: Option<&RuleSet>) -> String {
    let mut out = String::new();
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<svrl:schematron-output xmlns:svrl=\"{SVRL_NS}\" title=\"{}\" schemaVersion=\"{}\">",
        attr(&format!("invex {}", report.profile)),
        attr(&report.rules_version.join(" "))
    );
    let _ = writeln!(
        out,
        "  <svrl:text>{}: {} fatal, {} warning, {} information</svrl:text>",
        report.verdict.as_str(),
        report.counts.fatal,
        report.counts.warning,
        report.counts.information
    );
    match rules {
        Some(rules) => write_with_rules(&mut out, report, rules),
        None => write_by_pack(&mut out, report),
    }
    out.push_str("</svrl:schematron-output>\n");
    out
}

fn write_with_rules(out: &mut String, report: &Report, rules: &RuleSet) {
    let mut seen_prefixes = std::collections::HashSet::new();
    for layer in rules.packs() {
        for (prefix, uri) in &layer.namespaces {
            if seen_prefixes.insert(prefix.clone()) {
                let _ = writeln!(
                    out,
                    "  <svrl:ns-prefix-in-attribute-values prefix=\"{}\" uri=\"{}\"/>",
                    attr(prefix),
                    attr(uri)
                );
            }
        }
    }
    let mut placed = vec![false; report.findings.len()];
    for pack in rules.packs() {
        let pack_ref = pack.reference();
        if pack.schema.is_some() {
            // A schema pack: one pattern for the schema layer; its findings carry no test
            // (the schema's content models are not XPath).
            let _ = writeln!(
                out,
                "  <svrl:active-pattern id=\"{}\" name=\"{}\"/>",
                attr(&pattern_id(&pack_ref)),
                attr(&pack.title)
            );
            let mut fired = false;
            for (i, f) in report.findings.iter().enumerate() {
                if placed[i] || f.pack != pack_ref || f.layer != FindingLayer::Schema {
                    continue;
                }
                if !fired {
                    let _ = writeln!(out, "  <svrl:fired-rule context=\"/\"/>");
                    fired = true;
                }
                write_finding(out, f, false, "");
                placed[i] = true;
            }
        }
        for pattern in &pack.patterns {
            let _ = write!(out, "  <svrl:active-pattern id=\"{}\"", attr(&pattern.id));
            if let Some(title) = &pattern.title {
                let _ = write!(out, " name=\"{}\"", attr(title));
            }
            out.push_str("/>\n");
            for rule in &pattern.rules {
                let mut fired = false;
                for (i, f) in report.findings.iter().enumerate() {
                    if placed[i] || f.pack != pack_ref {
                        continue;
                    }
                    let id = if f.rule_id == ENGINE_ERROR {
                        f.about_rule.as_deref().unwrap_or("")
                    } else {
                        f.rule_id.as_str()
                    };
                    let Some(check) = rule.checks.iter().find(|c| c.id == id) else {
                        continue;
                    };
                    if !fired {
                        let _ = writeln!(
                            out,
                            "  <svrl:fired-rule context=\"{}\"/>",
                            attr(&rule.context_source)
                        );
                        fired = true;
                    }
                    let is_report =
                        f.rule_id != ENGINE_ERROR && check.kind == crate::rules::CheckKind::Report;
                    let test = if f.rule_id == ENGINE_ERROR {
                        ""
                    } else {
                        check.test.source()
                    };
                    write_finding(out, f, is_report, test);
                    placed[i] = true;
                }
            }
        }
    }
    if placed.iter().any(|p| !p) {
        let _ = writeln!(
            out,
            "  <svrl:active-pattern id=\"invex-engine\" name=\"Findings outside any rule\"/>"
        );
        let _ = writeln!(out, "  <svrl:fired-rule context=\"/\"/>");
        for (i, f) in report.findings.iter().enumerate() {
            if !placed[i] {
                write_finding(out, f, false, "");
            }
        }
    }
}

fn write_by_pack(out: &mut String, report: &Report) {
    let mut packs: Vec<&str> = Vec::new();
    for f in &report.findings {
        if !packs.contains(&f.pack.as_str()) {
            packs.push(&f.pack);
        }
    }
    if packs.is_empty() {
        for p in &report.rules_version {
            let _ = writeln!(
                out,
                "  <svrl:active-pattern id=\"{}\" name=\"{}\"/>",
                attr(&pattern_id(p)),
                attr(p)
            );
        }
        return;
    }
    for p in packs {
        let _ = writeln!(
            out,
            "  <svrl:active-pattern id=\"{}\" name=\"{}\"/>",
            attr(&pattern_id(p)),
            attr(p)
        );
        let _ = writeln!(out, "  <svrl:fired-rule context=\"/\"/>");
        for f in report.findings.iter().filter(|f| f.pack == p) {
            write_finding(out, f, false, "");
        }
    }
}

/// A pack reference as an xs:ID-like token (`en16931-ubl@1.3.16` → `en16931-ubl_1.3.16`).
fn pattern_id(pack: &str) -> String {
    pack.replace('@', "_")
}

fn write_finding(out: &mut String, f: &Finding, is_report: bool, test: &str) {
    let element = if is_report {
        "svrl:successful-report"
    } else {
        "svrl:failed-assert"
    };
    let _ = writeln!(
        out,
        "  <{element} id=\"{}\" flag=\"{}\" location=\"{}\" test=\"{}\">",
        attr(&f.rule_id),
        f.severity.as_str(),
        attr(&f.location.path),
        attr(test)
    );
    if !f.remediation.is_empty() {
        let _ = writeln!(
            out,
            "    <svrl:diagnostic-reference diagnostic=\"remediation\"><svrl:text>{}</svrl:text></svrl:diagnostic-reference>",
            text(&f.remediation)
        );
    }
    for bt in &f.business_terms {
        let _ = writeln!(
            out,
            "    <svrl:property-reference property=\"business-term\"><svrl:text>{}</svrl:text></svrl:property-reference>",
            text(bt)
        );
    }
    let _ = writeln!(out, "    <svrl:text>{}</svrl:text>", text(&f.message));
    let _ = writeln!(out, "  </{element}>");
}

/// Characters XML 1.0 cannot carry at all become U+FFFD.
fn xml_char(c: char) -> char {
    match c {
        '\t' | '\n' | '\r' => c,
        c if (c as u32) < 0x20 => '\u{FFFD}',
        '\u{FFFE}' | '\u{FFFF}' => '\u{FFFD}',
        c => c,
    }
}

fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars().map(xml_char) {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#13;"),
            c => out.push(c),
        }
    }
    out
}

fn attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars().map(xml_char) {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Location, Severity};

    fn tricky() -> Report {
        Report::new(
            "p@1".into(),
            vec!["a@1".into()],
            vec![Finding {
                rule_id: "BR-01".into(),
                severity: Severity::Fatal,
                location: Location {
                    path: "/ubl:Invoice/cbc:ID[2]".into(),
                    line: 3,
                    column: 4,
                },
                message: "Amount < 0 & \"quoted\" ]]> \u{1} end".into(),
                remediation: "Fix <it>".into(),
                business_terms: vec!["BT-1".into()],
                pack: "a@1".into(),
                owner: None,
                about_rule: None,
                layer: FindingLayer::Rules,
            }],
            1,
        )
    }

    #[test]
    fn svrl_without_rules_is_well_formed() {
        let xml = to_svrl(&tricky(), None);
        let mut reader = quick_xml::Reader::from_str(&xml);
        let mut failed = 0;
        let mut texts = Vec::new();
        loop {
            match reader.read_event().expect("well-formed SVRL") {
                quick_xml::events::Event::Eof => break,
                quick_xml::events::Event::Start(e)
                    if e.name().as_ref() == b"svrl:failed-assert" =>
                {
                    failed += 1;
                    let loc = e
                        .try_get_attribute("location")
                        .unwrap()
                        .unwrap()
                        .unescape_value()
                        .unwrap()
                        .into_owned();
                    assert_eq!(loc, "/ubl:Invoice/cbc:ID[2]");
                }
                quick_xml::events::Event::Text(t) => texts.push(t.unescape().unwrap().into_owned()),
                _ => {}
            }
        }
        assert_eq!(failed, 1);
        assert!(texts
            .iter()
            .any(|t| t == "Amount < 0 & \"quoted\" ]]> \u{FFFD} end"));
        assert!(texts.iter().any(|t| t == "Fix <it>"));
    }
}
