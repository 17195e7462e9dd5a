//! The review gate: decides whether a converted invoice may go out as it is (`ready`) or
//! must be looked at by a person first (`needs_review`), and says why.
//!
//! Any one of these holds a conversion: a field under the confidence threshold, a fatal
//! validation finding, a failed cross-check (line sums against stated totals, VAT per
//! rate), an identifier that fails its own check (IČO, DIČ, IČ DPH, IBAN, Peppol id), or an
//! issue the extractor raised about the input (a cell it could not read).

use invex_engine::checks;
use invex_engine::report::{Report, Severity};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::model::{Draft, Field, Source};
use super::ubl::{self, Computed};
use crate::peppol::identifier::ParticipantId;

/// Allowed difference between a stated amount and the one computed from the lines.
const TOLERANCE: Decimal = Decimal::from_parts(1, 0, 0, false, 2);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReasonKind {
    LowConfidence,
    FatalFinding,
    FailedCrossCheck,
    InvalidIdentifier,
    InputIssue,
}

/// Why a conversion needs review.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ReviewReason {
    pub kind: ReasonKind,
    /// The draft field concerned, e.g. `payment.iban`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// Where in the input: `row 3, column "IBAN"`, `page 1`, or a rule id for findings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    pub message: String,
}

/// A comparison of stated and computed amounts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CrossCheck {
    pub name: String,
    pub passed: bool,
    pub detail: String,
}

/// Where a value came from, as a reviewer reads it.
pub fn describe(source: &Source) -> String {
    match source {
        Source::Cell { sheet, row, column } => match sheet {
            Some(s) => format!("sheet \"{s}\", row {row}, column \"{column}\""),
            None => format!("row {row}, column \"{column}\""),
        },
        Source::Pdf { page, method } => format!("page {page} ({method})"),
        Source::Embedded { name } => format!("embedded file \"{name}\""),
        Source::Structured { format } => format!("the {format} file, as written"),
        Source::Computed { from } => format!("computed from {from}"),
        Source::Default { reason } => format!("default: {reason}"),
        Source::Review { by } => format!("corrected by {by}"),
    }
}

fn identifier_reason(path: &str, field: &Field<String>, what: &str, why: String) -> ReviewReason {
    ReviewReason {
        kind: ReasonKind::InvalidIdentifier,
        field: Some(path.to_string()),
        location: Some(describe(&field.source)),
        message: format!("{what} `{}` is not valid: {why}", field.value),
    }
}

/// Check every identifier of the draft against its own rules.
pub fn check_identifiers(draft: &Draft) -> Vec<ReviewReason> {
    let mut out = Vec::new();
    for (role, party) in [("seller", &draft.seller), ("buyer", &draft.buyer)] {
        let country = party.address.country.as_ref();
        let slovak_party = country.is_none_or(|c| c.value.eq_ignore_ascii_case("SK"));
        if let (Some(f), true) = (&party.ico, slovak_party) {
            if let Err(e) = checks::ico_sk_check(f.value.trim()) {
                out.push(identifier_reason(
                    &format!("{role}.ico"),
                    f,
                    "IČO",
                    e.to_string(),
                ));
            }
        }
        if let (Some(f), true) = (&party.dic, slovak_party) {
            if let Err(e) = checks::dic_sk_check(f.value.trim()) {
                out.push(identifier_reason(
                    &format!("{role}.dic"),
                    f,
                    "DIČ",
                    e.to_string(),
                ));
            }
        }
        if let Some(f) = &party.vat_id {
            let value = f.value.trim().replace(' ', "");
            let result = if value.to_ascii_uppercase().starts_with("SK") {
                checks::ic_dph_sk_check(&value).map_err(|e| e.to_string())
            } else if value.len() >= 4
                && value[..2].bytes().all(|b| b.is_ascii_uppercase())
                && value[2..].bytes().all(|b| b.is_ascii_alphanumeric())
            {
                Ok(())
            } else {
                Err("a VAT identifier starts with the two-letter country prefix".to_string())
            };
            if let Err(e) = result {
                out.push(identifier_reason(
                    &format!("{role}.vat_id"),
                    f,
                    "VAT identifier",
                    e,
                ));
            }
        }
        if let Some(f) = &party.endpoint {
            if let Err(e) = ParticipantId::parse(f.value.trim()) {
                out.push(identifier_reason(
                    &format!("{role}.endpoint"),
                    f,
                    "Peppol participant id",
                    e.to_string(),
                ));
            }
        }
    }
    if let Some(f) = &draft.payment.iban {
        if let Err(e) = checks::iban_check(f.value.trim()) {
            out.push(identifier_reason("payment.iban", f, "IBAN", e.to_string()));
        }
    }
    out
}

fn compare(name: &str, stated: Option<Decimal>, computed: Decimal) -> Option<CrossCheck> {
    let stated = stated?;
    let diff = (stated - computed).abs();
    Some(CrossCheck {
        name: name.to_string(),
        passed: diff <= TOLERANCE,
        detail: format!("stated {stated}, computed from the lines {computed}"),
    })
}

/// Compare what the input stated (totals, VAT rows, line amounts) with what the lines add
/// up to.
pub fn cross_checks(draft: &Draft, computed: &Computed) -> Vec<CrossCheck> {
    let value = |f: &Option<Field<Decimal>>| f.as_ref().map(|f| f.value);
    let mut out = Vec::new();
    for (i, line) in draft.lines.iter().enumerate() {
        if let (Some(net), Some(q), Some(p)) = (
            value(&line.net_amount),
            value(&line.quantity),
            value(&line.unit_price),
        ) {
            out.extend(compare(
                &format!("line {} amount = quantity × price", i + 1),
                Some(net),
                ubl::money(q * p),
            ));
        }
    }
    let t = &draft.totals;
    out.extend(compare(
        "sum of line amounts (BT-106)",
        value(&t.line_total),
        computed.line_total,
    ));
    out.extend(compare(
        "total without VAT (BT-109)",
        value(&t.tax_exclusive),
        computed.line_total,
    ));
    out.extend(compare(
        "VAT total (BT-110)",
        value(&t.tax),
        computed.tax_total,
    ));
    out.extend(compare(
        "total with VAT (BT-112)",
        value(&t.tax_inclusive),
        computed.tax_inclusive,
    ));
    out.extend(compare(
        "amount due (BT-115)",
        value(&t.payable),
        computed.tax_inclusive,
    ));
    for row in &draft.vat_breakdown {
        let rate = value(&row.rate).map(|r| r.normalize());
        let group = computed.vat.iter().find(|g| {
            g.rate == rate
                && row
                    .category
                    .as_ref()
                    .is_none_or(|c| c.value.eq_ignore_ascii_case(&g.category))
        });
        let label = rate.map_or("?".to_string(), |r| format!("{r} %"));
        match group {
            Some(g) => {
                out.extend(compare(
                    &format!("VAT {label}: taxable amount (BT-116)"),
                    value(&row.taxable),
                    g.taxable,
                ));
                out.extend(compare(
                    &format!("VAT {label}: VAT amount (BT-117)"),
                    value(&row.tax),
                    g.tax,
                ));
            }
            None => out.push(CrossCheck {
                name: format!("VAT {label}: rate present in the lines"),
                passed: false,
                detail: format!("the input states a VAT row at {label} that no line carries"),
            }),
        }
    }
    out
}

/// Every reason to hold a conversion; empty means `ready`.
pub fn reasons(
    draft: &Draft,
    report: &Report,
    cross_checks: &[CrossCheck],
    input_issues: &[ReviewReason],
    threshold: f32,
) -> Vec<ReviewReason> {
    let mut out: Vec<ReviewReason> = input_issues.to_vec();
    for f in draft.fields() {
        if f.confidence < threshold {
            out.push(ReviewReason {
                kind: ReasonKind::LowConfidence,
                location: Some(describe(&f.source)),
                message: format!(
                    "{} ({}) `{}` has confidence {:.2}, under the threshold {threshold:.2}",
                    f.path, f.business_term, f.value, f.confidence
                ),
                field: Some(f.path),
            });
        }
    }
    out.extend(check_identifiers(draft));
    for c in cross_checks.iter().filter(|c| !c.passed) {
        out.push(ReviewReason {
            kind: ReasonKind::FailedCrossCheck,
            field: None,
            location: None,
            message: format!("{}: {}", c.name, c.detail),
        });
    }
    for f in report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Fatal)
    {
        out.push(ReviewReason {
            kind: ReasonKind::FatalFinding,
            field: None,
            location: Some(f.rule_id.clone()),
            message: f.message.clone(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::ubl::tests::slovak_draft;

    fn review() -> Source {
        Source::Review { by: "test".into() }
    }

    #[test]
    fn a_clean_draft_has_no_identifier_problems_and_passing_cross_checks() {
        let mut d = slovak_draft();
        d.set("totals.payable", "600.57", review()).unwrap();
        d.set("vat_breakdown[0].rate", "23", review()).unwrap();
        d.set("vat_breakdown[0].tax", "104.65", review()).unwrap();
        assert_eq!(check_identifiers(&d), vec![]);
        let checks = cross_checks(&d, &ubl::compute(&d));
        assert_eq!(checks.len(), 2);
        assert!(checks.iter().all(|c| c.passed), "{checks:?}");
    }

    #[test]
    fn bad_identifiers_point_at_their_cells() {
        let mut d = slovak_draft();
        let cell = Source::Cell {
            sheet: None,
            row: 4,
            column: "IBAN".into(),
        };
        d.set("payment.iban", "SK3112000000198742637542", cell)
            .unwrap();
        d.set("seller.ico", "31322833", review()).unwrap();
        d.set("buyer.vat_id", "SK2020123456", review()).unwrap();
        d.set("buyer.endpoint", "9999:123", review()).unwrap();
        let found = check_identifiers(&d);
        let fields: Vec<_> = found.iter().filter_map(|r| r.field.as_deref()).collect();
        assert_eq!(
            fields,
            [
                "seller.ico",
                "buyer.vat_id",
                "buyer.endpoint",
                "payment.iban"
            ]
        );
        let iban = found.last().unwrap();
        assert_eq!(iban.location.as_deref(), Some("row 4, column \"IBAN\""));
    }

    #[test]
    fn stated_totals_that_do_not_add_up_fail_the_cross_check() {
        let mut d = slovak_draft();
        d.set("totals.payable", "700.00", review()).unwrap();
        d.set("lines[0].net_amount", "450.00", review()).unwrap();
        let failed: Vec<_> = cross_checks(&d, &ubl::compute(&d))
            .into_iter()
            .filter(|c| !c.passed)
            .map(|c| c.name)
            .collect();
        assert_eq!(
            failed,
            ["line 1 amount = quantity × price", "amount due (BT-115)"]
        );
    }
}
