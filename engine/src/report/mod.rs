//! Findings and validation reports, and their renderings: JSON (serde), SVRL and text.

mod path;
mod svrl;
mod text;

pub use path::{PathBuilder, PrefixMap};
pub use svrl::to_svrl;
pub use text::to_text;

use serde::{Deserialize, Serialize};

/// The rule id of findings that report a dynamic error inside a rule.
pub const ENGINE_ERROR: &str = "engine-error";

/// A finding's severity (a rule's `flag`).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Information,
    Warning,
    Fatal,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Fatal => "fatal",
            Severity::Warning => "warning",
            Severity::Information => "information",
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a finding is: a readable XPath to the node and the node's line and column.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    /// e.g. `/ubl:Invoice/cac:InvoiceLine[2]/cbc:ID`, `/ubl:Invoice/cbc:Amount/@currencyID`.
    pub path: String,
    pub line: u32,
    pub column: u32,
}

/// Which layer of validation a finding comes from.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FindingLayer {
    /// The document-type gate: the profile does not take this kind of document.
    Document,
    /// An XML Schema (a schema pack): the document's structure and lexical values.
    Schema,
    /// The rules of a pack's patterns (Schematron semantics), and engine errors in them.
    /// Reports stored before layers existed read as this.
    #[default]
    Rules,
}

/// One fired assert or report (or an engine error inside a rule, a schema violation, or
/// the document-type gate's refusal).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub rule_id: String,
    pub severity: Severity,
    pub location: Location,
    pub message: String,
    pub remediation: String,
    pub business_terms: Vec<String>,
    /// The pack that supplied the rule, `id@version`.
    pub pack: String,
    /// Who fixes the fault (`sender-mapping`, `seller-master-data`, ...).
    #[serde(default)]
    pub owner: Option<String>,
    /// For `engine-error` findings: the rule that could not be evaluated.
    #[serde(default)]
    pub about_rule: Option<String>,
    /// `schema` for the schema layer, `rules` for a pack's rules, `document` for the
    /// document-type gate.
    #[serde(default)]
    pub layer: FindingLayer,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Valid,
    Invalid,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Valid => "valid",
            Verdict::Invalid => "invalid",
        }
    }
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub fatal: usize,
    pub warning: usize,
    pub information: usize,
}

impl Counts {
    pub fn of(findings: &[Finding]) -> Counts {
        let mut c = Counts::default();
        for f in findings {
            c.add(f.severity);
        }
        c
    }

    pub fn add(&mut self, severity: Severity) {
        match severity {
            Severity::Fatal => self.fatal += 1,
            Severity::Warning => self.warning += 1,
            Severity::Information => self.information += 1,
        }
    }

    pub fn total(&self) -> usize {
        self.fatal + self.warning + self.information
    }

    pub fn is_zero(&self) -> bool {
        self.total() == 0
    }
}

/// The result of validating one document against one profile.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// `invalid` iff any finding is fatal.
    pub verdict: Verdict,
    /// The profile, `id@version`.
    pub profile: String,
    /// How the profile was chosen when the client named none (detection from the document),
    /// e.g. `detected peppol-bis3-sk: ...`. Absent when the client named the profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detection: Option<String>,
    /// Which version of the profile was chosen and why, when the client named the profile
    /// without a version (or none): the newest version in force on the day asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<String>,
    /// Every pack used, `id@version`, lowest layer first.
    pub rules_version: Vec<String>,
    /// Every finding counted, listed or not.
    pub counts: Counts,
    pub findings: Vec<Finding>,
    /// Findings counted but not listed, because the report reached its limit of listed
    /// findings (a document broken in the same way a million times needs no million
    /// entries). Absent when every finding is listed.
    #[serde(default, skip_serializing_if = "Counts::is_zero")]
    pub omitted: Counts,
    pub duration_us: u64,
}

impl Report {
    /// A report over `findings`, with verdict and counts derived from them.
    pub fn new(
        profile: String,
        rules_version: Vec<String>,
        findings: Vec<Finding>,
        duration_us: u64,
    ) -> Report {
        let counts = Counts::of(&findings);
        let verdict = if counts.fatal > 0 {
            Verdict::Invalid
        } else {
            Verdict::Valid
        };
        Report {
            verdict,
            profile,
            detection: None,
            resolution: None,
            rules_version,
            counts,
            findings,
            omitted: Counts::default(),
            duration_us,
        }
    }

    /// The report with `omitted` findings counted (and judged) beside the listed ones.
    pub fn with_omitted(mut self, omitted: Counts) -> Report {
        self.counts.fatal += omitted.fatal;
        self.counts.warning += omitted.warning;
        self.counts.information += omitted.information;
        self.omitted = omitted;
        if self.counts.fatal > 0 {
            self.verdict = Verdict::Invalid;
        }
        self
    }

    pub fn is_valid(&self) -> bool {
        self.verdict == Verdict::Valid
    }

    /// Compact JSON.
    pub fn to_json(&self) -> String {
        // Serializing these plain structs cannot fail (string keys, no non-finite floats).
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Indented JSON.
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn finding(rule: &str, sev: Severity) -> Finding {
        Finding {
            rule_id: rule.into(),
            severity: sev,
            location: Location {
                path: "/ubl:Invoice".into(),
                line: 1,
                column: 1,
            },
            message: "m".into(),
            remediation: "r".into(),
            business_terms: vec!["BT-1".into()],
            pack: "p@1".into(),
            owner: None,
            about_rule: None,
            layer: FindingLayer::Rules,
        }
    }

    #[test]
    fn verdict_and_counts() {
        let r = Report::new(
            "x@1".into(),
            vec!["p@1".into()],
            vec![
                finding("A", Severity::Warning),
                finding("B", Severity::Information),
            ],
            5,
        );
        assert_eq!(r.verdict, Verdict::Valid);
        assert_eq!(
            r.counts,
            Counts {
                fatal: 0,
                warning: 1,
                information: 1
            }
        );
        let r = Report::new("x@1".into(), vec![], vec![finding("A", Severity::Fatal)], 5);
        assert_eq!(r.verdict, Verdict::Invalid);
    }

    #[test]
    fn json_shape() {
        let r = Report::new(
            "x@1".into(),
            vec!["p@1".into()],
            vec![finding("A", Severity::Fatal)],
            7,
        );
        let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(v["verdict"], "invalid");
        assert_eq!(v["profile"], "x@1");
        assert_eq!(v["rules_version"][0], "p@1");
        assert_eq!(v["counts"]["fatal"], 1);
        assert_eq!(v["findings"][0]["severity"], "fatal");
        assert_eq!(v["findings"][0]["location"]["path"], "/ubl:Invoice");
        assert_eq!(v["duration_us"], 7);
        assert!(v["findings"][0]["about_rule"].is_null());
        let back: Report = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(back, r);
    }
}
