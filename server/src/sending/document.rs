//! What the send pipeline reads from a document beside validation: its business identity
//! (seller, number BT-1, issue date BT-2), used to match it with a held conversion and with
//! invoices already sent, and the buyer's electronic address (BT-49) for support searches.

use crate::invoice::{self, InvoiceView, Party};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Identity {
    pub document_id: Option<String>,
    /// `scheme:value`, e.g. `0245:2022749619`.
    pub buyer_endpoint: Option<String>,
    /// BT-2 as written (`YYYY-MM-DD` in a valid document).
    pub issue_date: Option<String>,
    /// Every identifier the document gives its seller (VAT id, legal id, electronic
    /// address, other ids), normalised: two documents of the same seller share at least one.
    pub seller_ids: Vec<String>,
}

/// Upper case without whitespace, so `sk 2022749619` and `SK2022749619` are one seller.
fn normalise(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_uppercase)
        .collect()
}

fn seller_ids(p: &Party) -> Vec<String> {
    let with_scheme = |scheme: &Option<String>, value: &str| match scheme {
        Some(s) => format!("{}:{}", normalise(s), normalise(value)),
        None => normalise(value),
    };
    let mut ids: Vec<String> = p
        .vat_id
        .iter()
        .map(|v| normalise(v))
        .chain(p.legal_id.iter().map(|i| with_scheme(&i.scheme, &i.value)))
        .chain(p.endpoint.iter().map(|i| with_scheme(&i.scheme, &i.value)))
        .chain(
            p.identifiers
                .iter()
                .map(|i| with_scheme(&i.scheme, &i.value)),
        )
        .filter(|s| !s.is_empty() && !s.ends_with(':'))
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// The identity of a document already read into its business terms.
pub fn of_view(view: &InvoiceView) -> Identity {
    Identity {
        document_id: view.number.clone(),
        buyer_endpoint: view.buyer.endpoint.as_ref().map(|e| match &e.scheme {
            Some(s) => format!("{s}:{}", e.value),
            None => e.value.clone(),
        }),
        issue_date: view.issue_date.clone(),
        seller_ids: seller_ids(&view.seller),
    }
}

/// The identity of a document; anything unreadable just leaves fields empty.
pub fn identity(xml: &[u8]) -> Identity {
    invoice::read(xml).map(|v| of_view(&v)).unwrap_or_default()
}

impl Identity {
    /// Whether `self` and a stored document (number, issue date, seller ids as stored) are
    /// the same business document: same number and issue date, and a seller identifier in
    /// common.
    pub fn same_document(
        &self,
        document_id: Option<&str>,
        issue_date: Option<&str>,
        seller_ids: &str,
    ) -> bool {
        let (Some(number), Some(date)) = (&self.document_id, &self.issue_date) else {
            return false;
        };
        document_id == Some(number.as_str())
            && issue_date == Some(date.as_str())
            && seller_ids
                .split(' ')
                .any(|s| !s.is_empty() && self.seller_ids.iter().any(|own| own == s))
    }

    /// The seller ids as stored: space-separated (normalised ids contain no whitespace).
    pub fn stored_seller_ids(&self) -> String {
        self.seller_ids.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const XML: &str = r#"<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2" xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"><cbc:ID>INV-7</cbc:ID><cbc:IssueDate>2026-11-02</cbc:IssueDate>
            <cac:AccountingSupplierParty><cac:Party><cbc:EndpointID schemeID="0245">111</cbc:EndpointID><cac:PartyTaxScheme><cbc:CompanyID>sk 2022749619</cbc:CompanyID><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:PartyTaxScheme></cac:Party></cac:AccountingSupplierParty>
            <cac:AccountingCustomerParty><cac:Party><cbc:EndpointID schemeID="0245">2022749619</cbc:EndpointID></cac:Party></cac:AccountingCustomerParty></Invoice>"#;

    #[test]
    fn reads_the_number_date_seller_and_buyer_address() {
        let id = identity(XML.as_bytes());
        assert_eq!(id.document_id.as_deref(), Some("INV-7"));
        assert_eq!(id.issue_date.as_deref(), Some("2026-11-02"));
        assert_eq!(id.buyer_endpoint.as_deref(), Some("0245:2022749619"));
        assert_eq!(id.seller_ids, ["0245:111", "SK2022749619"]);
    }

    #[test]
    fn the_same_document_shares_number_date_and_a_seller_id() {
        let id = identity(XML.as_bytes());
        assert!(id.same_document(Some("INV-7"), Some("2026-11-02"), "X SK2022749619"));
        assert!(!id.same_document(Some("INV-8"), Some("2026-11-02"), "SK2022749619"));
        assert!(!id.same_document(Some("INV-7"), Some("2026-11-03"), "SK2022749619"));
        assert!(!id.same_document(Some("INV-7"), Some("2026-11-02"), "SK1"));
        assert!(!Identity::default().same_document(None, None, ""));
    }
}
