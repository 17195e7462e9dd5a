//! Profile detection: which profile a document asks to be validated with, read from the
//! document itself (no XPath).
//!
//! The decision, in order:
//! 1. The document element must be a UBL 2.1 `Invoice` or `CreditNote`; anything else gets
//!    the default profile [`EN16931_UBL`].
//! 2. `cbc:CustomizationID` (BT-24, whitespace-normalised) starting with the Peppol BIS
//!    Billing 3.0 identifier ([`PEPPOL_BIS3_ID`], the test of PEPPOL-EN16931-R004) selects
//!    [`PEPPOL_BIS3`], or [`PEPPOL_BIS3_SK`] when the seller country code (BT-40) and the
//!    buyer country code (BT-55) are both `SK` (case-insensitive).
//! 3. Any other identifier of EN 16931 ([`EN16931_ID`] itself, or a CIUS or extension of
//!    it such as XRechnung) selects [`EN16931_UBL`].
//! 4. No identifier, or one that is not EN 16931 based: [`EN16931_UBL`], and the reason
//!    says so.
//!
//! Detection names a profile id only; whether the catalog has it is the caller's business
//! (`invex validate` falls back to `en16931-ubl`).

use crate::document::{Document, NodeId, NodeKind};

/// Namespace of UBL 2.1 invoices.
pub const UBL_INVOICE_NS: &str = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2";
/// Namespace of UBL 2.1 credit notes.
pub const UBL_CREDIT_NOTE_NS: &str = "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2";
/// Namespace of the UBL basic components (`cbc:`).
pub const CBC_NS: &str = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2";
/// Namespace of the UBL aggregate components (`cac:`).
pub const CAC_NS: &str = "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2";

/// Specification identifier (BT-24) of EN 16931 itself.
pub const EN16931_ID: &str = "urn:cen.eu:en16931:2017";
/// Specification identifier (BT-24) of Peppol BIS Billing 3.0; Peppol documents start with it.
pub const PEPPOL_BIS3_ID: &str =
    "urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0";

/// Profile ids detection chooses from.
pub const EN16931_UBL: &str = "en16931-ubl";
pub const PEPPOL_BIS3: &str = "peppol-bis3";
pub const PEPPOL_BIS3_SK: &str = "peppol-bis3-sk";

/// The profile a document asks for, and why.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Detection {
    /// A profile id (no version), e.g. `peppol-bis3-sk`.
    pub profile: String,
    /// One sentence saying which facts of the document led to the profile.
    pub reason: String,
}

impl Detection {
    fn new(profile: &str, reason: String) -> Detection {
        Detection {
            profile: profile.to_string(),
            reason,
        }
    }
}

/// Detect the profile of `doc` from its specification identifier (BT-24) and the seller
/// and buyer country codes (BT-40, BT-55). See the module documentation.
pub fn detect_profile(doc: &Document) -> Detection {
    let root = doc.document_element();
    let (namespace, local) = match doc.name(root).map(|n| doc.qname(n)) {
        Some(q) => (q.namespace.as_str(), q.local.as_str()),
        None => ("", ""),
    };
    let is_ubl = matches!(
        (namespace, local),
        (UBL_INVOICE_NS, "Invoice") | (UBL_CREDIT_NOTE_NS, "CreditNote")
    );
    if !is_ubl {
        let name = if namespace.is_empty() {
            local.to_string()
        } else {
            format!("{{{namespace}}}{local}")
        };
        return Detection::new(
            EN16931_UBL,
            format!(
                "the document element {name} is not a UBL 2.1 Invoice or CreditNote, \
                 so the default profile {EN16931_UBL} applies"
            ),
        );
    }
    let Some(id) = child(doc, root, CBC_NS, "CustomizationID").map(|n| normalized(doc, n)) else {
        return Detection::new(
            EN16931_UBL,
            format!(
                "the document has no specification identifier (BT-24, cbc:CustomizationID), \
                 so the default profile {EN16931_UBL} applies"
            ),
        );
    };
    if id.starts_with(PEPPOL_BIS3_ID) {
        let seller = country(doc, root, "AccountingSupplierParty");
        let buyer = country(doc, root, "AccountingCustomerParty");
        let show = |c: &Option<String>| c.clone().unwrap_or_else(|| "not given".to_string());
        if seller.as_deref() == Some("SK") && buyer.as_deref() == Some("SK") {
            return Detection::new(
                PEPPOL_BIS3_SK,
                "the specification identifier (BT-24) is Peppol BIS Billing 3.0 and seller \
                 and buyer are both in Slovakia (BT-40 and BT-55 = SK)"
                    .to_string(),
            );
        }
        return Detection::new(
            PEPPOL_BIS3,
            format!(
                "the specification identifier (BT-24) is Peppol BIS Billing 3.0; seller country \
                 (BT-40) {}, buyer country (BT-55) {}: not a Slovak domestic document",
                show(&seller),
                show(&buyer)
            ),
        );
    }
    if id == EN16931_ID {
        return Detection::new(
            EN16931_UBL,
            format!("the specification identifier (BT-24) is EN 16931 itself ({EN16931_ID})"),
        );
    }
    if id.starts_with(EN16931_ID) {
        return Detection::new(
            EN16931_UBL,
            format!(
                "the specification identifier (BT-24) {id} builds on EN 16931 but has no profile \
                 of its own here, so the EN 16931 rules apply"
            ),
        );
    }
    let what = if id.is_empty() {
        "is empty".to_string()
    } else {
        format!("{id} is unknown")
    };
    Detection::new(
        EN16931_UBL,
        format!(
            "the specification identifier (BT-24) {what}, so the default profile \
             {EN16931_UBL} applies"
        ),
    )
}

/// The first child element of `parent` named `{namespace}local`.
fn child(doc: &Document, parent: NodeId, namespace: &str, local: &str) -> Option<NodeId> {
    let name = doc.lookup_name(namespace, local)?;
    doc.children(parent)
        .find(|&c| doc.kind(c) == NodeKind::Element && doc.name(c) == Some(name))
}

/// The string value of `n` with whitespace normalised (XPath `normalize-space`).
fn normalized(doc: &Document, n: NodeId) -> String {
    doc.string_value(n)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The country code (upper-cased) of `cac:{party}/cac:Party/cac:PostalAddress/cac:Country/
/// cbc:IdentificationCode`, if given and not blank.
fn country(doc: &Document, root: NodeId, party: &str) -> Option<String> {
    let mut n = child(doc, root, CAC_NS, party)?;
    for step in ["Party", "PostalAddress", "Country"] {
        n = child(doc, n, CAC_NS, step)?;
    }
    let code = normalized(doc, child(doc, n, CBC_NS, "IdentificationCode")?);
    (!code.is_empty()).then(|| code.to_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A UBL document with the given root, customization element and country codes.
    fn ubl(root: &str, customization: Option<&str>, seller: Option<&str>, buyer: &str) -> String {
        let ns = if root == "Invoice" {
            UBL_INVOICE_NS
        } else {
            UBL_CREDIT_NOTE_NS
        };
        let cust = customization
            .map(|c| format!("<cbc:CustomizationID>{c}</cbc:CustomizationID>"))
            .unwrap_or_default();
        let addr = |c: Option<&str>| {
            match c {
            Some(c) => format!(
                "<cac:PostalAddress><cac:Country><cbc:IdentificationCode>{c}</cbc:IdentificationCode>\
                 </cac:Country></cac:PostalAddress>"
            ),
            None => String::new(),
        }
        };
        format!(
            "<{root} xmlns='{ns}' xmlns:cac='{CAC_NS}' xmlns:cbc='{CBC_NS}'>{cust}\
             <cbc:ID>1</cbc:ID>\
             <cac:AccountingSupplierParty><cac:Party>{}</cac:Party></cac:AccountingSupplierParty>\
             <cac:AccountingCustomerParty><cac:Party>{}</cac:Party></cac:AccountingCustomerParty>\
             </{root}>",
            addr(seller),
            addr(Some(buyer)),
        )
    }

    fn detect(xml: &str) -> Detection {
        detect_profile(&Document::parse(xml.as_bytes()).expect("well-formed test document"))
    }

    #[test]
    fn peppol_between_slovak_parties_is_peppol_bis3_sk() {
        let d = detect(&ubl("Invoice", Some(PEPPOL_BIS3_ID), Some("SK"), "SK"));
        assert_eq!(d.profile, PEPPOL_BIS3_SK);
        assert!(d.reason.contains("Peppol BIS Billing 3.0"), "{}", d.reason);
        assert!(d.reason.contains("BT-40 and BT-55 = SK"), "{}", d.reason);
    }

    #[test]
    fn slovak_credit_note_is_detected_too() {
        let d = detect(&ubl("CreditNote", Some(PEPPOL_BIS3_ID), Some("SK"), "SK"));
        assert_eq!(d.profile, PEPPOL_BIS3_SK);
    }

    #[test]
    fn countries_are_trimmed_and_case_insensitive() {
        let id = format!("\n   {PEPPOL_BIS3_ID}  ");
        let d = detect(&ubl("Invoice", Some(&id), Some(" sk "), "Sk"));
        assert_eq!(d.profile, PEPPOL_BIS3_SK, "{}", d.reason);
    }

    #[test]
    fn peppol_cross_border_is_peppol_bis3() {
        let d = detect(&ubl("Invoice", Some(PEPPOL_BIS3_ID), Some("SK"), "CZ"));
        assert_eq!(d.profile, PEPPOL_BIS3);
        assert!(
            d.reason.contains("seller country (BT-40) SK"),
            "{}",
            d.reason
        );
        assert!(
            d.reason.contains("buyer country (BT-55) CZ"),
            "{}",
            d.reason
        );
        let d = detect(&ubl("Invoice", Some(PEPPOL_BIS3_ID), Some("DE"), "DE"));
        assert_eq!(d.profile, PEPPOL_BIS3);
    }

    #[test]
    fn peppol_without_seller_country_is_peppol_bis3() {
        let d = detect(&ubl("Invoice", Some(PEPPOL_BIS3_ID), None, "SK"));
        assert_eq!(d.profile, PEPPOL_BIS3);
        assert!(d.reason.contains("(BT-40) not given"), "{}", d.reason);
    }

    #[test]
    fn peppol_identifier_with_an_extension_is_still_peppol() {
        let id = format!("{PEPPOL_BIS3_ID}#conformant#urn:example:extension");
        let d = detect(&ubl("Invoice", Some(&id), Some("SK"), "SK"));
        assert_eq!(d.profile, PEPPOL_BIS3_SK);
    }

    #[test]
    fn plain_en16931_is_en16931_ubl() {
        let d = detect(&ubl("Invoice", Some(EN16931_ID), Some("SK"), "SK"));
        assert_eq!(d.profile, EN16931_UBL);
        assert!(d.reason.contains("EN 16931 itself"), "{}", d.reason);
    }

    #[test]
    fn other_cius_is_en16931_ubl() {
        let id = "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0";
        let d = detect(&ubl("Invoice", Some(id), Some("DE"), "DE"));
        assert_eq!(d.profile, EN16931_UBL);
        assert!(d.reason.contains("builds on EN 16931"), "{}", d.reason);
        assert!(d.reason.contains("xrechnung_3.0"), "{}", d.reason);
    }

    #[test]
    fn peppol_self_billing_is_not_taken_for_billing() {
        let id = "urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:selfbilling:3.0";
        let d = detect(&ubl("Invoice", Some(id), Some("SK"), "SK"));
        assert_eq!(d.profile, EN16931_UBL);
    }

    #[test]
    fn unknown_identifier_falls_back_with_a_reason() {
        let d = detect(&ubl(
            "Invoice",
            Some("urn:example:custom:1.0"),
            Some("SK"),
            "SK",
        ));
        assert_eq!(d.profile, EN16931_UBL);
        assert!(d.reason.contains("urn:example:custom:1.0"), "{}", d.reason);
        assert!(d.reason.contains("unknown"), "{}", d.reason);
        let d = detect(&ubl("Invoice", Some("  "), Some("SK"), "SK"));
        assert_eq!(d.profile, EN16931_UBL);
        assert!(d.reason.contains("(BT-24) is empty, so"), "{}", d.reason);
    }

    #[test]
    fn missing_identifier_falls_back_with_a_reason() {
        let d = detect(&ubl("Invoice", None, Some("SK"), "SK"));
        assert_eq!(d.profile, EN16931_UBL);
        assert!(
            d.reason.contains("no specification identifier"),
            "{}",
            d.reason
        );
    }

    #[test]
    fn customization_in_another_namespace_does_not_count() {
        let xml = format!(
            "<Invoice xmlns='{UBL_INVOICE_NS}'><CustomizationID>{PEPPOL_BIS3_ID}</CustomizationID></Invoice>"
        );
        let d = detect(&xml);
        assert_eq!(d.profile, EN16931_UBL);
        assert!(
            d.reason.contains("no specification identifier"),
            "{}",
            d.reason
        );
    }

    #[test]
    fn non_ubl_documents_get_the_default() {
        let d = detect("<Doc xmlns='urn:test:doc'/>");
        assert_eq!(d.profile, EN16931_UBL);
        assert!(d.reason.contains("{urn:test:doc}Doc"), "{}", d.reason);
        assert!(d.reason.contains("not a UBL 2.1 Invoice"), "{}", d.reason);
        let d = detect("<Invoice/>");
        assert_eq!(d.profile, EN16931_UBL);
        assert!(d.reason.contains("Invoice is not"), "{}", d.reason);
    }

    #[test]
    fn real_fixture_is_detected() {
        let xml = include_str!("../../rulepacks/sk-national/2027.1/fixtures/sk-invoice.xml");
        assert_eq!(detect(xml).profile, PEPPOL_BIS3_SK);
        let xml = include_str!("../../rulepacks/sk-national/2027.1/fixtures/sk-to-cz.xml");
        assert_eq!(detect(xml).profile, PEPPOL_BIS3);
        let xml = include_str!("../../rulepacks/en16931-ubl/1.3.16/fixtures/invoice-minimal.xml");
        assert_eq!(detect(xml).profile, EN16931_UBL);
    }
}
