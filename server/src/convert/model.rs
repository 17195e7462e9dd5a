//! The invoice draft every extractor fills in (CSV, Excel, PDF, embedded XML) and the UBL
//! writer reads. Each value remembers how sure we are of it and where it came from, so the
//! review gate can hold uncertain drafts and a reviewer can see why.
//!
//! Fields are addressed by a stable path (`number`, `seller.vat_id`, `lines[2].quantity`)
//! for corrections; each path names its EN 16931 business term.

use chrono::NaiveDate;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::str::FromStr;
use utoipa::ToSchema;

/// Where a value was found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// A cell of a CSV file or a worksheet; `row` is 1-based as spreadsheets show it,
    /// `column` the header name (or letter when there is no header).
    Cell {
        #[serde(skip_serializing_if = "Option::is_none")]
        sheet: Option<String>,
        row: u32,
        column: String,
    },
    /// Text of a PDF page; `method` says how (e.g. `label "Invoice number"`, `pattern IBAN`).
    Pdf { page: u32, method: String },
    /// An invoice XML embedded in the input (UBL in a PDF attachment).
    Embedded { name: String },
    /// Read literally from a structured export (`isdoc`, `json`).
    Structured { format: String },
    /// Derived from other values (e.g. a line amount from quantity × price).
    Computed { from: String },
    /// Not in the input; a documented default (e.g. currency EUR for Slovak parties).
    Default { reason: String },
    /// Set by a reviewer.
    Review { by: String },
}

/// One extracted value with its confidence (0.0 – 1.0) and origin.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Field<T> {
    pub value: T,
    pub confidence: f32,
    pub source: Source,
}

impl<T> Field<T> {
    pub fn new(value: T, confidence: f32, source: Source) -> Self {
        Field {
            value,
            confidence: confidence.clamp(0.0, 1.0),
            source,
        }
    }
}

pub type Text = Option<Field<String>>;
pub type Amount = Option<Field<Decimal>>;
pub type Date = Option<Field<NaiveDate>>;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DocumentKind {
    #[default]
    Invoice,
    CreditNote,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Address {
    /// BT-35 / BT-50
    pub street: Text,
    /// BT-37 / BT-52
    pub city: Text,
    /// BT-38 / BT-53
    pub postcode: Text,
    /// BT-40 / BT-55, ISO 3166-1 alpha-2
    pub country: Text,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Party {
    /// BT-27 / BT-44
    pub name: Text,
    /// IČO: legal registration id, BT-30 / BT-47 (scheme 0245 for Slovak IČO… see writer).
    pub ico: Text,
    /// DIČ: tax registration id, BT-32 (seller only in EN 16931).
    pub dic: Text,
    /// IČ DPH: VAT identifier, BT-31 / BT-48.
    pub vat_id: Text,
    /// Electronic address BT-34 / BT-49 as `scheme:value` (e.g. `0245:2022749619`).
    pub endpoint: Text,
    pub address: Address,
    /// BT-43 / BT-58
    pub email: Text,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Line {
    /// BT-126
    pub id: Text,
    /// BT-153
    pub name: Text,
    /// BT-129
    pub quantity: Amount,
    /// BT-130, UN/ECE Rec 20 (e.g. `C62`, `HUR`, `KGM`)
    pub unit: Text,
    /// BT-146, net price per unit
    pub unit_price: Amount,
    /// BT-131, net line amount
    pub net_amount: Amount,
    /// BT-151, UNCL 5305 (S, Z, E, AE, K, G, O, L, M)
    pub vat_category: Text,
    /// BT-152, percent
    pub vat_rate: Amount,
}

/// One VAT breakdown row as the input states it (BG-23). The writer computes its own from
/// the lines; these are kept to cross-check.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VatRow {
    /// BT-118
    pub category: Text,
    /// BT-119
    pub rate: Amount,
    /// BT-116
    pub taxable: Amount,
    /// BT-117
    pub tax: Amount,
}

/// Document totals as the input states them (BG-22), for cross-checks.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// BT-106
    pub line_total: Amount,
    /// BT-109
    pub tax_exclusive: Amount,
    /// BT-110
    pub tax: Amount,
    /// BT-112
    pub tax_inclusive: Amount,
    /// BT-115
    pub payable: Amount,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Payment {
    /// BT-81, UNCL 4461 (30 credit transfer, 58 SEPA credit transfer, …)
    pub means_code: Text,
    /// BT-84
    pub iban: Text,
    /// BT-86
    pub bic: Text,
    /// BT-83 (Slovak variable symbol goes here)
    pub reference: Text,
}

/// Everything a converter extracted for one invoice.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Draft {
    pub kind: DocumentKind,
    /// BT-1
    pub number: Text,
    /// BT-2
    pub issue_date: Date,
    /// BT-9
    pub due_date: Date,
    /// BT-7
    pub tax_point_date: Date,
    /// BT-5, ISO 4217
    pub currency: Text,
    /// BT-10
    pub buyer_reference: Text,
    /// BT-13
    pub order_reference: Text,
    /// BT-25, the invoice a credit note corrects
    pub preceding_invoice: Text,
    /// BT-22
    pub note: Text,
    pub seller: Party,
    pub buyer: Party,
    pub payment: Payment,
    pub lines: Vec<Line>,
    pub vat_breakdown: Vec<VatRow>,
    pub totals: Totals,
}

/// A flat view of one field for review screens and corrections.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct FieldView {
    /// Stable address, e.g. `seller.vat_id`, `lines[2].quantity`.
    pub path: String,
    /// EN 16931 business term, e.g. `BT-31`.
    pub business_term: String,
    /// The value as text (dates ISO 8601, amounts as plain decimals).
    pub value: String,
    pub confidence: f32,
    pub source: Source,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FieldError {
    #[error("unknown field path `{0}`")]
    UnknownPath(String),
    #[error("line {0} does not exist (the draft has {1} lines; use lines[{1}] to add one)")]
    NoSuchLine(usize, usize),
    #[error("`{path}`: {reason}")]
    BadValue { path: String, reason: String },
}

/// Typed write access to one draft field: corrections and extractors store values
/// through the same path tables.
pub enum Slot<'a> {
    Text(&'a mut Text),
    Amount(&'a mut Amount),
    Date(&'a mut Date),
}

impl Slot<'_> {
    /// Lower the confidence of a present value (never raises it).
    pub fn cap(self, confidence: f32) {
        let c = |x: &mut f32| *x = x.min(confidence);
        match self {
            Slot::Text(Some(f)) => c(&mut f.confidence),
            Slot::Amount(Some(f)) => c(&mut f.confidence),
            Slot::Date(Some(f)) => c(&mut f.confidence),
            _ => {}
        }
    }

    pub fn is_set(&self) -> bool {
        match self {
            Slot::Text(f) => f.is_some(),
            Slot::Amount(f) => f.is_some(),
            Slot::Date(f) => f.is_some(),
        }
    }
}

/// What the review shows as the term of `buyer.dic`.
pub const BUYER_DIC_TERM: &str = "SK-DIČ (no EN 16931 term; gives BT-49 with scheme 0245)";

const PARTY_FIELDS: [(&str, &str, &str); 10] = [
    // (suffix, seller BT, buyer BT)
    ("name", "BT-27", "BT-44"),
    ("ico", "BT-30", "BT-47"),
    // The buyer's DIČ has no EN 16931 term (BT-32 is the seller's tax registration): it is
    // Slovak master data that gives the buyer's electronic address under scheme 0245.
    ("dic", "BT-32", BUYER_DIC_TERM),
    ("vat_id", "BT-31", "BT-48"),
    ("endpoint", "BT-34", "BT-49"),
    ("address.street", "BT-35", "BT-50"),
    ("address.city", "BT-37", "BT-52"),
    ("address.postcode", "BT-38", "BT-53"),
    ("address.country", "BT-40", "BT-55"),
    ("email", "BT-43", "BT-58"),
];

const LINE_FIELDS: [(&str, &str); 8] = [
    ("id", "BT-126"),
    ("name", "BT-153"),
    ("quantity", "BT-129"),
    ("unit", "BT-130"),
    ("unit_price", "BT-146"),
    ("net_amount", "BT-131"),
    ("vat_category", "BT-151"),
    ("vat_rate", "BT-152"),
];

const VAT_FIELDS: [(&str, &str); 4] = [
    ("category", "BT-118"),
    ("rate", "BT-119"),
    ("taxable", "BT-116"),
    ("tax", "BT-117"),
];

const HEADER_FIELDS: [(&str, &str); 18] = [
    ("number", "BT-1"),
    ("issue_date", "BT-2"),
    ("due_date", "BT-9"),
    ("tax_point_date", "BT-7"),
    ("currency", "BT-5"),
    ("buyer_reference", "BT-10"),
    ("order_reference", "BT-13"),
    ("preceding_invoice", "BT-25"),
    ("note", "BT-22"),
    ("payment.means_code", "BT-81"),
    ("payment.iban", "BT-84"),
    ("payment.bic", "BT-86"),
    ("payment.reference", "BT-83"),
    ("totals.line_total", "BT-106"),
    ("totals.tax_exclusive", "BT-109"),
    ("totals.tax", "BT-110"),
    ("totals.tax_inclusive", "BT-112"),
    ("totals.payable", "BT-115"),
];

/// Values at or under this confidence failed their own check (both extractors mark a
/// failed identifier this way): nothing is derived from them.
pub const FAILED_CHECK: f32 = 0.3;

impl Party {
    /// A Slovak IČ DPH is `SK` + DIČ, and Slovak parties receive Peppol invoices under their
    /// DIČ (scheme 0245): fill the DIČ and the electronic address from what is there.
    /// `role` is `seller` or `buyer`, for the sources.
    pub fn derive_slovak_ids(&mut self, role: &str) {
        if self.dic.is_none() {
            if let Some(vat) = &self.vat_id {
                if let Some(dic) = vat
                    .value
                    .strip_prefix("SK")
                    .filter(|_| vat.confidence > FAILED_CHECK)
                {
                    self.dic = Some(Field::new(
                        dic.to_string(),
                        vat.confidence.min(0.9),
                        Source::Computed {
                            from: format!("{role}.vat_id"),
                        },
                    ));
                }
            }
        }
        if self.endpoint.is_none() {
            if let Some(dic) = self.dic.as_ref().filter(|d| d.confidence > FAILED_CHECK) {
                self.endpoint = Some(Field::new(
                    format!("0245:{}", dic.value),
                    dic.confidence.min(0.8),
                    Source::Computed {
                        from: format!("{role}.dic (Slovak parties register under scheme 0245)"),
                    },
                ));
            }
        }
    }

    /// The field named by a party path suffix (`name`, `address.city`, …).
    pub fn slot(&mut self, suffix: &str) -> Option<Slot<'_>> {
        Some(Slot::Text(match suffix {
            "name" => &mut self.name,
            "ico" => &mut self.ico,
            "dic" => &mut self.dic,
            "vat_id" => &mut self.vat_id,
            "endpoint" => &mut self.endpoint,
            "address.street" => &mut self.address.street,
            "address.city" => &mut self.address.city,
            "address.postcode" => &mut self.address.postcode,
            "address.country" => &mut self.address.country,
            "email" => &mut self.email,
            _ => return None,
        }))
    }
}

impl Line {
    /// The field named by a line path suffix (`quantity` for `lines[0].quantity`).
    pub fn slot(&mut self, suffix: &str) -> Option<Slot<'_>> {
        Some(match suffix {
            "id" => Slot::Text(&mut self.id),
            "name" => Slot::Text(&mut self.name),
            "quantity" => Slot::Amount(&mut self.quantity),
            "unit" => Slot::Text(&mut self.unit),
            "unit_price" => Slot::Amount(&mut self.unit_price),
            "net_amount" => Slot::Amount(&mut self.net_amount),
            "vat_category" => Slot::Text(&mut self.vat_category),
            "vat_rate" => Slot::Amount(&mut self.vat_rate),
            _ => return None,
        })
    }
}

impl VatRow {
    fn slot(&mut self, suffix: &str) -> Option<Slot<'_>> {
        Some(match suffix {
            "category" => Slot::Text(&mut self.category),
            "rate" => Slot::Amount(&mut self.rate),
            "taxable" => Slot::Amount(&mut self.taxable),
            "tax" => Slot::Amount(&mut self.tax),
            _ => return None,
        })
    }
}

/// Split `lines[2].quantity` into ("lines", 2, "quantity").
fn indexed(path: &str) -> Option<(&str, usize, &str)> {
    let (head, rest) = path.split_once('[')?;
    let (index, rest) = rest.split_once("].")?;
    Some((head, index.parse().ok()?, rest))
}

fn view<T: ToString>(out: &mut Vec<FieldView>, path: String, term: &str, field: &Option<Field<T>>) {
    if let Some(f) = field {
        out.push(FieldView {
            path,
            business_term: term.to_string(),
            value: f.value.to_string(),
            confidence: f.confidence,
            source: f.source.clone(),
        });
    }
}

impl Draft {
    /// The field of an invoice-level path, parties included (`number`, `seller.vat_id`);
    /// indexed paths (`lines[0].…`) are reached through [`Line::slot`].
    pub fn slot(&mut self, path: &str) -> Option<Slot<'_>> {
        if let Some(suffix) = path.strip_prefix("seller.") {
            return self.seller.slot(suffix);
        }
        if let Some(suffix) = path.strip_prefix("buyer.") {
            return self.buyer.slot(suffix);
        }
        self.header_slot(path)
    }

    fn header_slot(&mut self, path: &str) -> Option<Slot<'_>> {
        Some(match path {
            "number" => Slot::Text(&mut self.number),
            "issue_date" => Slot::Date(&mut self.issue_date),
            "due_date" => Slot::Date(&mut self.due_date),
            "tax_point_date" => Slot::Date(&mut self.tax_point_date),
            "currency" => Slot::Text(&mut self.currency),
            "buyer_reference" => Slot::Text(&mut self.buyer_reference),
            "order_reference" => Slot::Text(&mut self.order_reference),
            "preceding_invoice" => Slot::Text(&mut self.preceding_invoice),
            "note" => Slot::Text(&mut self.note),
            "payment.means_code" => Slot::Text(&mut self.payment.means_code),
            "payment.iban" => Slot::Text(&mut self.payment.iban),
            "payment.bic" => Slot::Text(&mut self.payment.bic),
            "payment.reference" => Slot::Text(&mut self.payment.reference),
            "totals.line_total" => Slot::Amount(&mut self.totals.line_total),
            "totals.tax_exclusive" => Slot::Amount(&mut self.totals.tax_exclusive),
            "totals.tax" => Slot::Amount(&mut self.totals.tax),
            "totals.tax_inclusive" => Slot::Amount(&mut self.totals.tax_inclusive),
            "totals.payable" => Slot::Amount(&mut self.totals.payable),
            _ => return None,
        })
    }

    /// Every present field, in a stable order (header, seller, buyer, lines, VAT rows).
    pub fn fields(&self) -> Vec<FieldView> {
        let mut out = Vec::new();
        let mut copy = self.clone();
        for (path, term) in HEADER_FIELDS {
            match copy.header_slot(path) {
                Some(Slot::Text(f)) => view(&mut out, path.into(), term, f),
                Some(Slot::Amount(f)) => view(&mut out, path.into(), term, f),
                Some(Slot::Date(f)) => view(&mut out, path.into(), term, f),
                None => {}
            }
        }
        for (role, party) in [("seller", &mut copy.seller), ("buyer", &mut copy.buyer)] {
            for (suffix, seller_bt, buyer_bt) in PARTY_FIELDS {
                let term = if role == "seller" {
                    seller_bt
                } else {
                    buyer_bt
                };
                if let Some(Slot::Text(f)) = party.slot(suffix) {
                    view(&mut out, format!("{role}.{suffix}"), term, f);
                }
            }
        }
        for (i, line) in copy.lines.iter_mut().enumerate() {
            for (suffix, term) in LINE_FIELDS {
                let path = format!("lines[{i}].{suffix}");
                match line.slot(suffix) {
                    Some(Slot::Text(f)) => view(&mut out, path, term, f),
                    Some(Slot::Amount(f)) => view(&mut out, path, term, f),
                    Some(Slot::Date(f)) => view(&mut out, path, term, f),
                    None => {}
                }
            }
        }
        for (i, row) in copy.vat_breakdown.iter_mut().enumerate() {
            for (suffix, term) in VAT_FIELDS {
                let path = format!("vat_breakdown[{i}].{suffix}");
                match row.slot(suffix) {
                    Some(Slot::Text(f)) => view(&mut out, path, term, f),
                    Some(Slot::Amount(f)) => view(&mut out, path, term, f),
                    Some(Slot::Date(f)) => view(&mut out, path, term, f),
                    None => {}
                }
            }
        }
        out
    }

    /// The business term a path names, if the path is known.
    pub fn business_term(path: &str) -> Option<&'static str> {
        if let Some((_, term)) = HEADER_FIELDS.iter().find(|(p, _)| *p == path) {
            return Some(term);
        }
        for (role, pick_seller) in [("seller.", true), ("buyer.", false)] {
            if let Some(suffix) = path.strip_prefix(role) {
                return PARTY_FIELDS
                    .iter()
                    .find(|(s, _, _)| *s == suffix)
                    .map(|(_, s, b)| if pick_seller { *s } else { *b });
            }
        }
        let (head, _, suffix) = indexed(path)?;
        let table: &[(&str, &'static str)] = match head {
            "lines" => &LINE_FIELDS,
            "vat_breakdown" => &VAT_FIELDS,
            _ => return None,
        };
        table.iter().find(|(s, _)| *s == suffix).map(|(_, t)| *t)
    }

    /// Set a field from text (a reviewer's correction). An empty value clears the field.
    /// `lines[n]` with n equal to the number of lines appends a line.
    pub fn set(&mut self, path: &str, value: &str, source: Source) -> Result<(), FieldError> {
        let value = value.trim();
        let slot = if let Some(slot) = self.header_slot(path) {
            slot
        } else if let Some(suffix) = path.strip_prefix("seller.") {
            self.seller
                .slot(suffix)
                .ok_or_else(|| FieldError::UnknownPath(path.into()))?
        } else if let Some(suffix) = path.strip_prefix("buyer.") {
            self.buyer
                .slot(suffix)
                .ok_or_else(|| FieldError::UnknownPath(path.into()))?
        } else if let Some((head, index, suffix)) = indexed(path) {
            match head {
                "lines" => {
                    let count = self.lines.len();
                    if index == count {
                        self.lines.push(Line::default());
                    } else if index > count {
                        return Err(FieldError::NoSuchLine(index, count));
                    }
                    self.lines[index]
                        .slot(suffix)
                        .ok_or_else(|| FieldError::UnknownPath(path.into()))?
                }
                "vat_breakdown" => {
                    let count = self.vat_breakdown.len();
                    if index == count {
                        self.vat_breakdown.push(VatRow::default());
                    } else if index > count {
                        return Err(FieldError::UnknownPath(path.into()));
                    }
                    self.vat_breakdown[index]
                        .slot(suffix)
                        .ok_or_else(|| FieldError::UnknownPath(path.into()))?
                }
                _ => return Err(FieldError::UnknownPath(path.into())),
            }
        } else {
            return Err(FieldError::UnknownPath(path.into()));
        };
        let bad = |reason: String| FieldError::BadValue {
            path: path.into(),
            reason,
        };
        match slot {
            Slot::Text(f) => {
                *f = (!value.is_empty()).then(|| Field::new(value.to_string(), 1.0, source));
            }
            Slot::Amount(f) => {
                *f = if value.is_empty() {
                    None
                } else {
                    let d = Decimal::from_str(value).map_err(|_| {
                        bad(format!("`{value}` is not a decimal number like 12.50"))
                    })?;
                    Some(Field::new(d, 1.0, source))
                };
            }
            Slot::Date(f) => {
                *f = if value.is_empty() {
                    None
                } else {
                    let d = NaiveDate::parse_from_str(value, "%Y-%m-%d")
                        .map_err(|_| bad(format!("`{value}` is not a date like 2027-01-31")))?;
                    Some(Field::new(d, 1.0, source))
                };
            }
        }
        Ok(())
    }

    /// Remove a line (reviewers delete lines an extractor invented).
    pub fn remove_line(&mut self, index: usize) -> Result<(), FieldError> {
        if index >= self.lines.len() {
            return Err(FieldError::NoSuchLine(index, self.lines.len()));
        }
        self.lines.remove(index);
        Ok(())
    }

    /// The lowest confidence of any present field (1.0 for an empty draft). One uncertain
    /// value is enough to make a whole invoice uncertain.
    pub fn overall_confidence(&self) -> f32 {
        self.fields()
            .iter()
            .map(|f| f.confidence)
            .fold(1.0, f32::min)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(row: u32) -> Source {
        Source::Cell {
            sheet: None,
            row,
            column: "A".into(),
        }
    }

    #[test]
    fn fields_list_present_values_with_their_business_terms() {
        let mut d = Draft::default();
        d.set("number", "INV-1", cell(2)).unwrap();
        d.set("seller.vat_id", "SK2022749619", cell(2)).unwrap();
        d.set("buyer.vat_id", "SK2020317068", cell(2)).unwrap();
        d.set("lines[0].quantity", "2.5", cell(2)).unwrap();
        let fields = d.fields();
        let terms: Vec<(&str, &str)> = fields
            .iter()
            .map(|f| (f.path.as_str(), f.business_term.as_str()))
            .collect();
        assert_eq!(
            terms,
            [
                ("number", "BT-1"),
                ("seller.vat_id", "BT-31"),
                ("buyer.vat_id", "BT-48"),
                ("lines[0].quantity", "BT-129")
            ]
        );
        assert_eq!(Draft::business_term("lines[7].unit_price"), Some("BT-146"));
        assert_eq!(Draft::business_term("buyer.name"), Some("BT-44"));
        assert_eq!(Draft::business_term("nonsense"), None);
    }

    #[test]
    fn set_parses_typed_values_and_refuses_bad_ones() {
        let mut d = Draft::default();
        let review = Source::Review { by: "k1".into() };
        d.set("issue_date", "2027-01-15", review.clone()).unwrap();
        assert_eq!(
            d.issue_date.as_ref().map(|f| f.value),
            NaiveDate::from_ymd_opt(2027, 1, 15)
        );
        assert!(matches!(
            d.set("issue_date", "15.1.2027", review.clone()),
            Err(FieldError::BadValue { .. })
        ));
        assert!(matches!(
            d.set("lines[0].unit_price", "abc", review.clone()),
            Err(FieldError::BadValue { .. })
        ));
        assert_eq!(
            d.set("lines[3].name", "x", review.clone()),
            Err(FieldError::NoSuchLine(3, 1))
        );
        assert!(matches!(
            d.set("seller.shoe_size", "44", review.clone()),
            Err(FieldError::UnknownPath(_))
        ));
        d.set("issue_date", "", review).unwrap();
        assert!(d.issue_date.is_none());
    }

    #[test]
    fn overall_confidence_is_the_weakest_field() {
        let mut d = Draft::default();
        assert_eq!(d.overall_confidence(), 1.0);
        d.number = Some(Field::new("1".into(), 0.9, cell(2)));
        d.currency = Some(Field::new("EUR".into(), 0.4, cell(2)));
        assert!((d.overall_confidence() - 0.4).abs() < 1e-6);
    }
}
