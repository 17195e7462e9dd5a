//! Draft field paths as a mapping names them (`number`, `seller.vat_id`, `lines.quantity`,
//! `kind`), what type each holds, and typed write access to the draft.

use super::codes::TextKind;
use crate::convert::model::{DocumentKind, Draft, Field, Source};
use chrono::NaiveDate;
use rust_decimal::Decimal;

/// The document type (BT-3); not a [`Field`] in the draft, so not a [`Draft`] path.
pub const KIND_PATH: &str = "kind";
/// Prefix of line paths in a mapping: each row is one line, so there is no index.
pub const LINE_PREFIX: &str = "lines.";

/// The type of value a path holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    Text(TextKind),
    Amount,
    /// A VAT rate in percent; a fraction like 0.23 (an Excel percentage cell) means 23.
    Rate,
    Date,
    DocKind,
}

/// Check a mapping path and return its business term, or a hint why it is refused.
pub fn business_term(path: &str) -> Result<&'static str, String> {
    if path == KIND_PATH {
        return Ok("BT-3");
    }
    if let Some(suffix) = path.strip_prefix(LINE_PREFIX) {
        return Draft::business_term(&format!("lines[0].{suffix}")).ok_or_else(|| {
            "; line fields are lines.id, lines.name, lines.quantity, lines.unit, \
             lines.unit_price, lines.net_amount, lines.vat_category, lines.vat_rate"
                .to_string()
        });
    }
    if path.starts_with("lines[") {
        return Err("; a row is one line, so write lines.<field> without an index".into());
    }
    if path.starts_with("vat_breakdown") {
        return Err(
            "; the VAT breakdown is computed from the lines: map lines.vat_rate and \
             lines.vat_category instead"
                .into(),
        );
    }
    Draft::business_term(path).ok_or_else(String::new)
}

/// The type of a path accepted by [`business_term`].
pub fn kind_of(path: &str) -> FieldKind {
    if path == KIND_PATH {
        return FieldKind::DocKind;
    }
    match path {
        "issue_date" | "due_date" | "tax_point_date" => return FieldKind::Date,
        "lines.vat_rate" => return FieldKind::Rate,
        "lines.quantity" | "lines.unit_price" | "lines.net_amount" => return FieldKind::Amount,
        p if p.starts_with("totals.") => return FieldKind::Amount,
        _ => {}
    }
    let last = path.rsplit('.').next().unwrap_or(path);
    FieldKind::Text(match last {
        "ico" => TextKind::Ico,
        "dic" => TextKind::Dic,
        "vat_id" => TextKind::VatId,
        "endpoint" => TextKind::Endpoint,
        "iban" => TextKind::Iban,
        "bic" => TextKind::Bic,
        "country" => TextKind::Country,
        "currency" => TextKind::Currency,
        "email" => TextKind::Email,
        "unit" => TextKind::Unit,
        "vat_category" => TextKind::VatCategory,
        "means_code" => TextKind::MeansCode,
        _ => TextKind::Plain,
    })
}

/// A typed value ready to be stored.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Text(String),
    Amount(Decimal),
    Date(NaiveDate),
    /// The document type; stored on the draft itself, not in a field.
    Kind(DocumentKind),
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Text(t) => f.write_str(t),
            Value::Amount(a) => write!(f, "{a}"),
            Value::Date(d) => write!(f, "{d}"),
            Value::Kind(DocumentKind::Invoice) => f.write_str("invoice (380)"),
            Value::Kind(DocumentKind::CreditNote) => f.write_str("credit note (381)"),
        }
    }
}

pub use crate::convert::model::Slot;

/// Store a value in a slot; a value of another type than the slot's is ignored (paths and
/// value types come from the same table, so that does not happen).
pub fn put(slot: Slot<'_>, value: Value, confidence: f32, source: Source) {
    match (slot, value) {
        (Slot::Text(f), Value::Text(v)) => *f = Some(Field::new(v, confidence, source)),
        (Slot::Amount(f), Value::Amount(v)) => *f = Some(Field::new(v, confidence, source)),
        (Slot::Date(f), Value::Date(v)) => *f = Some(Field::new(v, confidence, source)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_accepted_path_has_a_slot_of_its_kind() {
        let headers = [
            "number",
            "issue_date",
            "due_date",
            "tax_point_date",
            "currency",
            "buyer_reference",
            "order_reference",
            "preceding_invoice",
            "note",
            "payment.means_code",
            "payment.iban",
            "payment.bic",
            "payment.reference",
            "totals.line_total",
            "totals.tax_exclusive",
            "totals.tax",
            "totals.tax_inclusive",
            "totals.payable",
        ];
        let mut d = Draft::default();
        for role in ["seller", "buyer"] {
            for s in [
                "name",
                "ico",
                "dic",
                "vat_id",
                "endpoint",
                "address.street",
                "address.city",
                "address.postcode",
                "address.country",
                "email",
            ] {
                let p = format!("{role}.{s}");
                assert!(business_term(&p).is_ok(), "{p}");
                assert!(matches!(d.slot(&p), Some(Slot::Text(_))));
            }
        }
        for p in headers {
            assert!(business_term(p).is_ok(), "{p}");
            let slot = d.slot(p);
            match kind_of(p) {
                FieldKind::Text(_) => assert!(matches!(slot, Some(Slot::Text(_))), "{p}"),
                FieldKind::Amount => assert!(matches!(slot, Some(Slot::Amount(_))), "{p}"),
                FieldKind::Date => assert!(matches!(slot, Some(Slot::Date(_))), "{p}"),
                other => panic!("{p}: {other:?}"),
            }
        }
        let mut l = crate::convert::model::Line::default();
        for s in [
            "id",
            "name",
            "quantity",
            "unit",
            "unit_price",
            "net_amount",
            "vat_category",
            "vat_rate",
        ] {
            let p = format!("lines.{s}");
            assert!(business_term(&p).is_ok(), "{p}");
            let slot = l.slot(s);
            match kind_of(&p) {
                FieldKind::Text(_) => assert!(matches!(slot, Some(Slot::Text(_))), "{p}"),
                FieldKind::Amount | FieldKind::Rate => {
                    assert!(matches!(slot, Some(Slot::Amount(_))), "{p}")
                }
                other => panic!("{p}: {other:?}"),
            }
        }
        assert_eq!(business_term("kind"), Ok("BT-3"));
        assert!(business_term("lines[0].name")
            .unwrap_err()
            .contains("without an index"));
        assert!(business_term("vat_breakdown.rate")
            .unwrap_err()
            .contains("computed"));
        assert!(business_term("seller.shoe_size").is_err());
    }
}
