//! The run's totals, the `--fail-on` threshold and the closing summary line.

use invex_engine::report::{Counts, Report, Severity, Verdict};

/// From which severity on a finding makes a document (and the run) fail.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FailOn {
    /// Fatal findings fail (the verdict `invalid`); warnings and information do not.
    #[default]
    Fatal,
    /// Fatal findings and warnings fail.
    Warning,
}

impl FailOn {
    /// The lowest severity that fails.
    pub fn threshold(self) -> Severity {
        match self {
            FailOn::Fatal => Severity::Fatal,
            FailOn::Warning => Severity::Warning,
        }
    }

    /// Whether a finding of `severity` fails.
    pub fn fails(self, severity: Severity) -> bool {
        severity >= self.threshold()
    }

    /// Whether a report (every finding counted, listed or not) fails.
    pub fn report_fails(self, report: &Report) -> bool {
        let c = &report.counts;
        match self {
            FailOn::Fatal => c.fatal > 0,
            FailOn::Warning => c.fatal + c.warning > 0,
        }
    }
}

/// What a run found, over every document.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub files: usize,
    /// Documents with the verdict `valid` (no fatal finding).
    pub valid: usize,
    /// Documents with the verdict `invalid`.
    pub invalid: usize,
    /// Documents that could not be read or parsed, or for which no profile was found.
    pub errors: usize,
    /// Documents with a finding at or above the `--fail-on` severity.
    pub failing: usize,
    /// Findings of every document by severity (listed or not).
    pub findings: Counts,
    pub fail_on: FailOn,
}

impl Summary {
    pub fn new(fail_on: FailOn) -> Summary {
        Summary {
            fail_on,
            ..Summary::default()
        }
    }

    /// Count one document.
    pub fn add(&mut self, result: Result<&Report, &str>) {
        self.files += 1;
        match result {
            Ok(report) => {
                match report.verdict {
                    Verdict::Valid => self.valid += 1,
                    Verdict::Invalid => self.invalid += 1,
                }
                if self.fail_on.report_fails(report) {
                    self.failing += 1;
                }
                self.findings.fatal += report.counts.fatal;
                self.findings.warning += report.counts.warning;
                self.findings.information += report.counts.information;
            }
            Err(_) => self.errors += 1,
        }
    }

    /// 0: nothing failed; 1: a document has a finding at or above `--fail-on`; 2: a
    /// document could not be validated at all.
    pub fn exit_code(&self) -> u8 {
        if self.errors > 0 {
            2
        } else if self.failing > 0 {
            1
        } else {
            0
        }
    }

    /// `invex: 3 files: 1 valid, 1 invalid, 1 error(s); findings: 4 fatal, 2 warning, 0
    /// information`, and with `--fail-on warning` `; 2 failing at warning`.
    pub fn line(&self) -> String {
        let mut line = format!(
            "invex: {} file{}: {} valid, {} invalid, {} error(s); findings: {} fatal, {} warning, {} information",
            self.files,
            if self.files == 1 { "" } else { "s" },
            self.valid,
            self.invalid,
            self.errors,
            self.findings.fatal,
            self.findings.warning,
            self.findings.information
        );
        if self.fail_on == FailOn::Warning {
            line.push_str(&format!("; {} failing at warning", self.failing));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use invex_engine::report::{Finding, FindingLayer, Location};

    fn report(severities: &[Severity]) -> Report {
        let findings = severities
            .iter()
            .map(|s| Finding {
                rule_id: "R".into(),
                severity: *s,
                location: Location {
                    path: "/x".into(),
                    line: 1,
                    column: 1,
                },
                message: "m".into(),
                remediation: String::new(),
                business_terms: vec![],
                pack: "p@1".into(),
                owner: None,
                about_rule: None,
                layer: FindingLayer::Rules,
            })
            .collect();
        Report::new("p@1".into(), vec!["p@1".into()], findings, 1)
    }

    #[test]
    fn fail_on_decides_the_exit_code() {
        let warned = report(&[Severity::Warning, Severity::Information]);
        let mut fatal_only = Summary::new(FailOn::Fatal);
        fatal_only.add(Ok(&warned));
        assert_eq!(fatal_only.exit_code(), 0);
        let mut strict = Summary::new(FailOn::Warning);
        strict.add(Ok(&warned));
        assert_eq!(strict.exit_code(), 1);
        let info = report(&[Severity::Information]);
        let mut strict = Summary::new(FailOn::Warning);
        strict.add(Ok(&info));
        assert_eq!(strict.exit_code(), 0);
        strict.add(Ok(&report(&[Severity::Fatal])));
        assert_eq!(strict.exit_code(), 1);
        strict.add(Err("cannot read"));
        assert_eq!(strict.exit_code(), 2);
    }

    #[test]
    fn the_line_counts_documents_and_findings() {
        let mut s = Summary::new(FailOn::Fatal);
        s.add(Ok(&report(&[])));
        s.add(Ok(&report(&[
            Severity::Fatal,
            Severity::Fatal,
            Severity::Warning,
        ])));
        s.add(Err("no"));
        assert_eq!(
            s.line(),
            "invex: 3 files: 1 valid, 1 invalid, 1 error(s); findings: 2 fatal, 1 warning, 0 information"
        );
        let mut s = Summary::new(FailOn::Warning);
        s.add(Ok(&report(&[Severity::Warning])));
        assert_eq!(
            s.line(),
            "invex: 1 file: 1 valid, 0 invalid, 0 error(s); findings: 0 fatal, 1 warning, 0 information; 1 failing at warning"
        );
    }
}
