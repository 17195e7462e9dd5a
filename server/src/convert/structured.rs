//! The review draft of a document read from a structured export (ISDOC, a JSON invoice):
//! every value as the file states it, with the confidence of a value read literally, so
//! that reviewers see the same fields, sources and confidences as for a PDF or a sheet, and
//! the gate checks the same identifiers. The UBL is written from the full EN 16931 model
//! (see [`crate::invoice`]); this draft mirrors the part of it a reviewer checks.

use std::str::FromStr;

use chrono::NaiveDate;
use rust_decimal::Decimal;

use super::model::{self as draft, Draft, Field, Source};
use crate::invoice::model::{self as en, InvoiceView};

/// The confidence of a value read literally from a structured file.
pub const LITERAL: f32 = 0.99;

struct Reading<'a> {
    format: &'a str,
}

impl Reading<'_> {
    fn source(&self) -> Source {
        Source::Structured {
            format: self.format.to_string(),
        }
    }

    fn text(&self, v: &Option<String>) -> draft::Text {
        v.as_ref()
            .map(|s| Field::new(s.clone(), LITERAL, self.source()))
    }

    fn amount(&self, v: &Option<String>) -> draft::Amount {
        v.as_deref()
            .and_then(|s| Decimal::from_str(s).ok())
            .map(|d| Field::new(d, LITERAL, self.source()))
    }

    fn date(&self, v: &Option<String>) -> draft::Date {
        v.as_deref()
            .and_then(|s| NaiveDate::parse_from_str(s, "%Y-%m-%d").ok())
            .map(|d| Field::new(d, LITERAL, self.source()))
    }

    fn party(&self, p: &en::Party) -> draft::Party {
        draft::Party {
            name: self.text(&p.name),
            ico: self.text(&p.legal_id.as_ref().map(|i| i.value.clone())),
            dic: self.text(&p.tax_id),
            vat_id: self.text(&p.vat_id),
            endpoint: self.text(&p.endpoint.as_ref().map(|e| match &e.scheme {
                Some(s) => format!("{s}:{}", e.value),
                None => e.value.clone(),
            })),
            address: draft::Address {
                street: self.text(&p.address.street),
                city: self.text(&p.address.city),
                postcode: self.text(&p.address.postcode),
                country: self.text(&p.address.country),
            },
            email: self.text(&p.contact.email),
        }
    }
}

/// The draft of `view`, read from a file of `format` (`isdoc`, `json`, ...). Values the
/// reader derived rather than read are marked by [`derived`] afterwards.
pub fn draft_of(view: &InvoiceView, format: &str) -> Draft {
    let r = Reading { format };
    let payment = view.payment_means.first();
    Draft {
        kind: match view.kind {
            en::DocumentKind::Invoice => draft::DocumentKind::Invoice,
            en::DocumentKind::CreditNote => draft::DocumentKind::CreditNote,
        },
        number: r.text(&view.number),
        issue_date: r.date(&view.issue_date),
        due_date: r.date(&view.due_date),
        tax_point_date: r.date(&view.tax_point_date),
        currency: r.text(&view.currency),
        buyer_reference: r.text(&view.references.buyer_reference),
        order_reference: r.text(&view.references.order),
        preceding_invoice: r.text(
            &view
                .references
                .preceding_invoices
                .first()
                .map(|p| p.id.clone()),
        ),
        note: r.text(&(!view.notes.is_empty()).then(|| view.notes.join("\n"))),
        seller: r.party(&view.seller),
        buyer: r.party(&view.buyer),
        payment: draft::Payment {
            means_code: r.text(&payment.and_then(|p| p.code.clone())),
            iban: r.text(&payment.and_then(|p| p.account_id.clone())),
            bic: r.text(&payment.and_then(|p| p.bic.clone())),
            reference: r.text(&payment.and_then(|p| p.payment_id.clone())),
        },
        lines: view
            .lines
            .iter()
            .map(|l| draft::Line {
                id: r.text(&l.id),
                name: r.text(&l.name),
                quantity: r.amount(&l.quantity),
                unit: r.text(&l.unit),
                unit_price: r.amount(&l.unit_price),
                net_amount: r.amount(&l.net_amount),
                vat_category: r.text(&l.vat_category),
                vat_rate: r.amount(&l.vat_rate),
            })
            .collect(),
        vat_breakdown: view
            .vat_breakdown
            .iter()
            .map(|v| draft::VatRow {
                category: r.text(&v.category),
                rate: r.amount(&v.rate),
                taxable: r.amount(&v.taxable),
                tax: r.amount(&v.tax),
            })
            .collect(),
        totals: draft::Totals {
            line_total: r.amount(&view.totals.line_total),
            tax_exclusive: r.amount(&view.totals.tax_exclusive),
            tax: r.amount(&view.vat_total),
            tax_inclusive: r.amount(&view.totals.tax_inclusive),
            payable: r.amount(&view.totals.payable),
        },
    }
}

/// The member states of the European Union (ISO 3166-1 alpha-2; Greece as GR).
const EU: [&str; 27] = [
    "AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GR", "HR", "HU", "IE", "IT",
    "LT", "LU", "LV", "MT", "NL", "PL", "PT", "RO", "SE", "SI", "SK",
];

/// What an export says about a line's or a breakdown row's VAT, from which its category
/// follows (exports state rates, not categories).
pub struct VatFacts<'a> {
    pub rate: Option<Decimal>,
    pub reverse_charge: bool,
    /// The line is marked as not subject to VAT within a document that is.
    pub exempt: bool,
    /// The whole document is outside VAT (the seller is no VAT payer).
    pub outside_vat: bool,
    pub seller_country: Option<&'a str>,
    pub buyer_country: Option<&'a str>,
}

/// The VAT category (UNCL 5305) the facts call for, first rule first: `O` outside VAT,
/// `AE` reverse charge, `E` exempt, `S` a positive rate, and at 0 % `K` for a buyer in
/// another EU state, `G` for one outside the EU, else `E`.
pub fn vat_category(f: &VatFacts<'_>) -> &'static str {
    if f.outside_vat {
        return "O";
    }
    if f.reverse_charge {
        return "AE";
    }
    if f.exempt {
        return "E";
    }
    match f.rate {
        Some(r) if r > Decimal::ZERO => "S",
        _ => match f.buyer_country {
            Some(c) if Some(c) != f.seller_country && EU.contains(&c) => "K",
            Some(c) if !EU.contains(&c) => "G",
            _ => "E",
        },
    }
}

/// The exemption reason code (VATEX) and text EN 16931 asks for with `category`.
pub fn exemption(category: &str) -> (Option<&'static str>, Option<&'static str>) {
    match category {
        "E" => (None, Some("Exempt from VAT")),
        "O" => (Some("VATEX-EU-O"), Some("Not subject to VAT")),
        "AE" => (Some("VATEX-EU-AE"), Some("Reverse charge")),
        "K" => (Some("VATEX-EU-IC"), Some("Intra-community supply")),
        "G" => (Some("VATEX-EU-G"), Some("Export outside the EU")),
        _ => (None, None),
    }
}

/// A unit as accounting programs write it (free text, often Czech or Slovak) as a UN/ECE Rec 20 code;
/// an unknown or empty one is `C62` (one).
pub fn unit_code(written: Option<&str>) -> &'static str {
    let Some(w) = written.map(|w| w.trim().trim_end_matches('.').to_lowercase()) else {
        return "C62";
    };
    match w.as_str() {
        "ks" | "kus" | "kusy" | "pc" | "pcs" | "h87" => "H87",
        "kg" | "kgm" => "KGM",
        "g" | "grm" => "GRM",
        "t" | "tne" => "TNE",
        "l" | "ltr" => "LTR",
        "ml" | "mlt" => "MLT",
        "m" | "mtr" => "MTR",
        "km" | "kmt" => "KMT",
        "m2" | "m²" | "mtk" => "MTK",
        "m3" | "m³" | "mtq" => "MTQ",
        "hod" | "h" | "hur" => "HUR",
        "min" => "MIN",
        "den" | "dni" | "day" => "DAY",
        "měs" | "mes" | "mesiac" | "mon" => "MON",
        "rok" | "ann" => "ANN",
        "bal" | "xpk" => "XPK",
        "pár" | "par" | "pr" => "PR",
        "sada" | "set" => "SET",
        "kwh" => "KWH",
        "mwh" => "MWH",
        "c62" => "C62",
        _ => "C62",
    }
}

/// Mark `field` as derived by a stated rule, with the confidence such derivations have in
/// every converter.
pub fn derived(field: &mut draft::Text, confidence: f32, from: &str) {
    if let Some(f) = field {
        f.confidence = confidence;
        f.source = Source::Computed { from: from.into() };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_become_rec20_codes() {
        assert_eq!(unit_code(Some("Ks")), "H87");
        assert_eq!(unit_code(Some("hod.")), "HUR");
        assert_eq!(unit_code(Some("m²")), "MTK");
        assert_eq!(unit_code(Some("bedna")), "C62");
        assert_eq!(unit_code(None), "C62");
    }

    #[test]
    fn categories_follow_the_stated_facts() {
        let facts = |rate: i64, buyer: &'static str| VatFacts {
            rate: Some(Decimal::from(rate)),
            reverse_charge: false,
            exempt: false,
            outside_vat: false,
            seller_country: Some("SK"),
            buyer_country: Some(buyer),
        };
        assert_eq!(vat_category(&facts(23, "SK")), "S");
        assert_eq!(vat_category(&facts(0, "SK")), "E");
        assert_eq!(vat_category(&facts(0, "CZ")), "K");
        assert_eq!(vat_category(&facts(0, "US")), "G");
        let reverse = VatFacts {
            reverse_charge: true,
            ..facts(23, "SK")
        };
        assert_eq!(vat_category(&reverse), "AE");
        let outside = VatFacts {
            outside_vat: true,
            ..facts(23, "SK")
        };
        assert_eq!(vat_category(&outside), "O");
    }
}
