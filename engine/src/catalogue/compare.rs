//! What differs between two definitions of one rule.

use serde::Serialize;

use super::RuleVersion;

/// A field of a rule that differs, with both values.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldChange {
    /// `flag`, `test`, `context`, `message`, `remediation`, `pattern`, `business_terms`
    /// or `owner`.
    pub field: &'static str,
    pub from: String,
    pub to: String,
}

/// The fields that differ from `old` to `new`, in a fixed order. Which pack version
/// carries the rule is not a change by itself.
pub fn changes(old: &RuleVersion, new: &RuleVersion) -> Vec<FieldChange> {
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
    field(
        "business_terms",
        &old.business_terms.join(" "),
        &new.business_terms.join(" "),
    );
    field(
        "owner",
        old.owner.as_deref().unwrap_or(""),
        new.owner.as_deref().unwrap_or(""),
    );
    out
}
