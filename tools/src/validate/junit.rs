//! `--format junit`: JUnit XML, as CI systems read test results. The run is one
//! `<testsuite>` (inside `<testsuites>`), each document a `<testcase>` named by its path:
//! a document with findings at or above `--fail-on` has a `<failure>` listing them, one
//! that could not be validated an `<error>`, a passing one neither. Every document's
//! profile and its findings below the threshold are in its `<system-out>`.
//!
//! Written with quick-xml, which escapes markup in text and attributes; characters XML 1.0
//! does not allow (control characters from a file name or document) become U+FFFD.

use std::io::{self, Write};

use invex_engine::report::{Finding, Report};
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;

use super::{one_line, xml_char, Document, FailOn, Sink, Summary};

/// The `name` of the suite and of the `classname` of every test case.
const SUITE: &str = "invex validate";
const CLASSNAME: &str = "invex.validate";

pub struct Junit {
    fail_on: FailOn,
    cases: Vec<Case>,
}

/// One document's test case, kept until the counts of the suite are known.
struct Case {
    name: String,
    seconds: f64,
    outcome: CaseOutcome,
    /// The profile and the findings that do not fail.
    out: String,
}

enum CaseOutcome {
    Passed,
    Failed {
        message: String,
        kind: String,
        body: String,
    },
    Error {
        message: String,
    },
}

impl Junit {
    pub fn new(fail_on: FailOn) -> Junit {
        Junit {
            fail_on,
            cases: Vec::new(),
        }
    }

    fn case(&self, name: &str, report: &Report) -> Case {
        let line = |f: &Finding| {
            let mut s = format!(
                "{name}:{}:{}: {} {} {}",
                f.location.line.max(1),
                f.location.column.max(1),
                f.severity,
                f.rule_id,
                one_line(&f.message)
            );
            if !f.remediation.is_empty() {
                s.push_str(&format!("\n    remediation: {}", one_line(&f.remediation)));
            }
            s.push('\n');
            s
        };
        let (failing, passing): (Vec<&Finding>, Vec<&Finding>) = report
            .findings
            .iter()
            .partition(|f| self.fail_on.fails(f.severity));
        let mut out = format!("profile {}", report.profile);
        if let Some(d) = &report.detection {
            out.push_str(&format!(", {}", one_line(d)));
        }
        if let Some(r) = &report.resolution {
            out.push_str(&format!("; {}", one_line(r)));
        }
        out.push_str(&format!(
            "\nverdict {}: {} fatal, {} warning, {} information\n",
            report.verdict.as_str(),
            report.counts.fatal,
            report.counts.warning,
            report.counts.information
        ));
        for f in &passing {
            out.push_str(&line(f));
        }
        let outcome = if self.fail_on.report_fails(report) {
            let worst = failing
                .iter()
                .map(|f| f.severity)
                .max()
                .unwrap_or(self.fail_on.threshold());
            let message = match failing.first() {
                Some(first) => format!(
                    "{} finding(s) at or above {}, first {}: {}",
                    failing.len(),
                    self.fail_on.threshold(),
                    first.rule_id,
                    one_line(&first.message)
                ),
                None => format!(
                    "findings at or above {} (not listed)",
                    self.fail_on.threshold()
                ),
            };
            let mut body: String = failing.iter().map(|f| line(f)).collect();
            if !report.omitted.is_zero() {
                body.push_str(&format!(
                    "{} more finding(s) counted but not listed\n",
                    report.omitted.total()
                ));
            }
            CaseOutcome::Failed {
                message,
                kind: worst.to_string(),
                body,
            }
        } else {
            CaseOutcome::Passed
        };
        Case {
            name: name.to_string(),
            seconds: report.duration_us as f64 / 1e6,
            outcome,
            out,
        }
    }
}

/// `s` with every character XML 1.0 does not allow replaced.
fn clean(s: &str) -> String {
    s.chars().map(xml_char).collect()
}

fn seconds(s: f64) -> String {
    format!("{s:.6}")
}

impl Sink for Junit {
    fn document(&mut self, _out: &mut dyn Write, doc: &Document<'_>) -> io::Result<()> {
        let case = match doc.result {
            Ok((report, _)) => self.case(doc.name, report),
            Err(e) => Case {
                name: doc.name.to_string(),
                seconds: 0.0,
                outcome: CaseOutcome::Error {
                    message: one_line(e),
                },
                out: String::new(),
            },
        };
        self.cases.push(case);
        Ok(())
    }

    fn finish(&mut self, out: &mut dyn Write, summary: &Summary) -> io::Result<()> {
        let failures = self
            .cases
            .iter()
            .filter(|c| matches!(c.outcome, CaseOutcome::Failed { .. }))
            .count();
        let errors = self
            .cases
            .iter()
            .filter(|c| matches!(c.outcome, CaseOutcome::Error { .. }))
            .count();
        let total: f64 = self.cases.iter().map(|c| c.seconds).sum();
        let (tests, failures, errors, time) = (
            self.cases.len().to_string(),
            failures.to_string(),
            errors.to_string(),
            seconds(total),
        );
        let mut w = Writer::new_with_indent(out, b' ', 2);
        w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
        let counts = [
            ("tests", tests.as_str()),
            ("failures", failures.as_str()),
            ("errors", errors.as_str()),
            ("time", time.as_str()),
        ];
        w.write_event(Event::Start(
            BytesStart::new("testsuites")
                .with_attributes([("name", SUITE)])
                .with_attributes(counts),
        ))?;
        w.write_event(Event::Start(
            BytesStart::new("testsuite")
                .with_attributes([("name", SUITE)])
                .with_attributes(counts)
                .with_attributes([("skipped", "0")]),
        ))?;
        w.write_event(Event::Start(BytesStart::new("properties")))?;
        let fail_on = summary.fail_on.threshold().to_string();
        w.write_event(Event::Empty(
            BytesStart::new("property")
                .with_attributes([("name", "fail-on"), ("value", &*fail_on)]),
        ))?;
        w.write_event(Event::End(BytesEnd::new("properties")))?;
        for case in &self.cases {
            let name = clean(&case.name);
            let time = seconds(case.seconds);
            w.write_event(Event::Start(BytesStart::new("testcase").with_attributes([
                ("name", name.as_str()),
                ("classname", CLASSNAME),
                ("time", time.as_str()),
            ])))?;
            match &case.outcome {
                CaseOutcome::Passed => {}
                CaseOutcome::Failed {
                    message,
                    kind,
                    body,
                } => {
                    let message = clean(message);
                    w.write_event(Event::Start(BytesStart::new("failure").with_attributes([
                        ("message", message.as_str()),
                        ("type", kind.as_str()),
                    ])))?;
                    w.write_event(Event::Text(BytesText::new(&clean(body))))?;
                    w.write_event(Event::End(BytesEnd::new("failure")))?;
                }
                CaseOutcome::Error { message } => {
                    let message = clean(message);
                    w.write_event(Event::Empty(
                        BytesStart::new("error")
                            .with_attributes([("message", message.as_str()), ("type", "error")]),
                    ))?;
                }
            }
            if !case.out.is_empty() {
                w.write_event(Event::Start(BytesStart::new("system-out")))?;
                w.write_event(Event::Text(BytesText::new(&clean(&case.out))))?;
                w.write_event(Event::End(BytesEnd::new("system-out")))?;
            }
            w.write_event(Event::End(BytesEnd::new("testcase")))?;
        }
        w.write_event(Event::End(BytesEnd::new("testsuite")))?;
        w.write_event(Event::End(BytesEnd::new("testsuites")))?;
        let out = w.into_inner();
        writeln!(out)
    }
}
