//! The identifiers of a document checked before it is accepted for sending: the parties'
//! Peppol electronic addresses (scheme and check digits), EU VAT identifiers (country
//! format and check digits) and IBANs of credit transfers (ISO 13616 mod 97). A document
//! with a wrong one would be routed, taxed or paid wrongly even when every rule passes.

use serde::Serialize;
use utoipa::ToSchema;

use crate::invoice::{self, Identifier, InvoiceView, Party};
use crate::peppol::identifier::ParticipantId;
use crate::vat::local::{self, LocalFault};

/// One identifier that failed its check.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct IdentifierFault {
    /// Business term, e.g. `BT-34`.
    pub business_term: &'static str,
    /// What it is, e.g. `seller electronic address`.
    pub what: &'static str,
    pub value: String,
    pub reason: String,
}

fn endpoint(out: &mut Vec<IdentifierFault>, id: &Identifier, bt: &'static str, what: &'static str) {
    let Some(scheme) = id.scheme.as_deref() else {
        // A missing scheme is a rule finding (BR-62/BR-63), not an identifier check.
        return;
    };
    if let Err(e) = ParticipantId::from_parts(scheme.trim(), id.value.trim()) {
        out.push(IdentifierFault {
            business_term: bt,
            what,
            value: format!("{scheme}:{}", id.value),
            reason: e.to_string(),
        });
    }
}

fn vat_id(out: &mut Vec<IdentifierFault>, value: &str, bt: &'static str, what: &'static str) {
    let check = local::check(value);
    match check.outcome {
        // Only EU VAT identifiers have rules we know; others (NO, CH, GB, AU…) pass here.
        Err(LocalFault::UnknownCountry { .. }) | Ok(()) => {}
        Err(fault) => out.push(IdentifierFault {
            business_term: bt,
            what,
            value: value.to_string(),
            reason: fault.reason(),
        }),
    }
}

fn party(out: &mut Vec<IdentifierFault>, p: &Party, seller: bool) {
    let (ep_bt, ep_what, vat_bt, vat_what) = if seller {
        (
            "BT-34",
            "seller electronic address",
            "BT-31",
            "seller VAT identifier",
        )
    } else {
        (
            "BT-49",
            "buyer electronic address",
            "BT-48",
            "buyer VAT identifier",
        )
    };
    if let Some(id) = &p.endpoint {
        endpoint(out, id, ep_bt, ep_what);
    }
    if let Some(v) = &p.vat_id {
        vat_id(out, v, vat_bt, vat_what);
    }
}

/// An account id shaped like an IBAN (two letters, two check digits, at least 15
/// characters): national account numbers are not IBANs and are not checked.
fn looks_like_iban(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 15
        && b[..2].iter().all(u8::is_ascii_uppercase)
        && b[2..4].iter().all(u8::is_ascii_digit)
}

pub fn check_view(view: &InvoiceView) -> Vec<IdentifierFault> {
    let mut out = Vec::new();
    party(&mut out, &view.seller, true);
    party(&mut out, &view.buyer, false);
    for means in &view.payment_means {
        let Some(account) = means.account_id.as_deref() else {
            continue;
        };
        let compact: String = account.chars().filter(|c| !c.is_whitespace()).collect();
        if !looks_like_iban(&compact) {
            continue;
        }
        if let Err(e) = invex_engine::checks::iban_check(&compact) {
            out.push(IdentifierFault {
                business_term: "BT-84",
                what: "payment account (IBAN)",
                value: account.to_string(),
                reason: e.to_string(),
            });
        }
    }
    out
}

/// Check a document's identifiers; a document that cannot be read has none to check
/// (validation reports why it cannot be read).
pub fn check(xml: &[u8]) -> Vec<IdentifierFault> {
    invoice::read(xml)
        .map(|v| check_view(&v))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(seller_ep: &str, buyer_vat: &str, iban: &str) -> String {
        format!(
            r#"<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
 xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
 xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
<cbc:ID>1</cbc:ID>
<cac:AccountingSupplierParty><cac:Party><cbc:EndpointID schemeID="0245">{seller_ep}</cbc:EndpointID>
<cac:PartyTaxScheme><cbc:CompanyID>SK2022749619</cbc:CompanyID><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:PartyTaxScheme>
</cac:Party></cac:AccountingSupplierParty>
<cac:AccountingCustomerParty><cac:Party><cbc:EndpointID schemeID="0088">7300010000001</cbc:EndpointID>
<cac:PartyTaxScheme><cbc:CompanyID>{buyer_vat}</cbc:CompanyID><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:PartyTaxScheme>
</cac:Party></cac:AccountingCustomerParty>
<cac:PaymentMeans><cbc:PaymentMeansCode>58</cbc:PaymentMeansCode>
<cac:PayeeFinancialAccount><cbc:ID>{iban}</cbc:ID></cac:PayeeFinancialAccount></cac:PaymentMeans>
</Invoice>"#
        )
    }

    #[test]
    fn good_identifiers_pass_and_foreign_vat_ids_are_not_judged() {
        let xml = doc("2022749619", "NO999999999MVA", "SK3112000000198742637541");
        assert_eq!(check(xml.as_bytes()), vec![]);
        // A national account number is not an IBAN.
        let xml = doc("2022749619", "SK2020317068", "1234567890");
        assert_eq!(check(xml.as_bytes()), vec![]);
    }

    #[test]
    fn each_bad_identifier_is_named_with_its_business_term() {
        let xml = doc("20227496", "SK2020123456", "SK3112000000198742637542");
        let faults: Vec<&str> = check(xml.as_bytes())
            .iter()
            .map(|f| f.business_term)
            .collect();
        assert_eq!(faults, ["BT-34", "BT-48", "BT-84"]);
    }
}
