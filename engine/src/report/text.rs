//! Human-readable rendering: one line per finding plus its remediation, then a summary.

use std::fmt::Write;

use super::Report;

/// `severity rule_id at path (line:col): message`, an indented remediation line, and a
/// closing summary line.
pub fn to_text(report: &Report) -> String {
    let mut out = String::new();
    for f in &report.findings {
        let _ = write!(
            out,
            "{} {} at {} ({}:{}): {}",
            f.severity,
            f.rule_id,
            f.location.path,
            f.location.line,
            f.location.column,
            one_line(&f.message)
        );
        if let Some(about) = &f.about_rule {
            let _ = write!(out, " [rule {about}]");
        }
        out.push('\n');
        if !f.remediation.is_empty() {
            let _ = writeln!(out, "    remediation: {}", one_line(&f.remediation));
        }
    }
    let _ = writeln!(
        out,
        "{}: {} fatal, {} warning, {} information (profile {}; rules {}; {} µs)",
        report.verdict.as_str(),
        report.counts.fatal,
        report.counts.warning,
        report.counts.information,
        report.profile,
        report.rules_version.join(", "),
        report.duration_us
    );
    out
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Finding, Location, Severity};

    #[test]
    fn lines_and_summary() {
        let r = Report::new(
            "en@1".into(),
            vec!["en@1".into()],
            vec![Finding {
                rule_id: "BR-01".into(),
                severity: Severity::Fatal,
                location: Location {
                    path: "/ubl:Invoice".into(),
                    line: 2,
                    column: 1,
                },
                message: "Missing\n  id.".into(),
                remediation: "Add it.".into(),
                business_terms: vec![],
                pack: "en@1".into(),
                owner: None,
                about_rule: None,
                layer: crate::report::FindingLayer::Rules,
            }],
            12,
        );
        let t = to_text(&r);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "fatal BR-01 at /ubl:Invoice (2:1): Missing id.");
        assert_eq!(lines[1], "    remediation: Add it.");
        assert_eq!(
            lines[2],
            "invalid: 1 fatal, 0 warning, 0 information (profile en@1; rules en@1; 12 µs)"
        );
    }
}
