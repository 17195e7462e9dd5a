//! Profile detection: which installed profile a document asks to be validated with, read
//! from the document itself (no XPath) and the profiles' declarations in `profiles.yaml`.
//!
//! The decision, in order:
//! 1. Only profiles whose `documents` include the document element are candidates; when
//!    none does, there is no profile ([`Detected::Uncovered`]): detection never falls back
//!    to a profile for another document type.
//! 2. The specification identifier `cbc:CustomizationID` (BT-24, whitespace-normalised) is
//!    matched against each candidate's `customization_ids` (equal, or starting with one);
//!    the longest matching identifier wins (a CIUS over the norm it builds on).
//! 3. Among the profiles with that identifier, those whose `detection` country conditions
//!    (seller BT-40, buyer BT-55, case-insensitive) the document meets; the one with most
//!    conditions wins (`peppol-bis3-sk` for two Slovak parties, `peppol-bis3` otherwise).
//!    Profiles with `auto: false` are never chosen.
//! 4. No identifier, or none any candidate lists: the default profile [`EN16931_UBL`] when
//!    it takes the document, and the reason says so; otherwise
//!    [`Detected::Undecided`].

use crate::doctype::{clark, root_name};
use crate::document::{Document, NodeId, NodeKind};
use crate::pack::{DocumentTypeDef, ProfileDef};

/// Namespace of the UBL basic components (`cbc:`).
pub const CBC_NS: &str = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2";
/// Namespace of the UBL aggregate components (`cac:`).
pub const CAC_NS: &str = "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2";

/// The profile detection picks when the document's identifier selects none.
pub const EN16931_UBL: &str = "en16931-ubl";

/// The profile a document asks for, and why.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Detection {
    /// A profile id (no version), e.g. `peppol-bis3-sk`.
    pub profile: String,
    /// One sentence saying which facts of the document led to the profile.
    pub reason: String,
}

/// What detection concluded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Detected {
    /// A profile that takes the document.
    Profile(Detection),
    /// No candidate profile takes the document element; why (naming it).
    Uncovered(String),
    /// Candidates take the document element but none is for its identifier, and the
    /// default profile is not among them; why.
    Undecided(String),
}

/// The facts of a document detection reads.
struct Facts {
    customization: Option<String>,
    seller: Option<String>,
    buyer: Option<String>,
}

/// Detect the profile of `doc` among `candidates` (one version of each profile), whose
/// document type ids `types` resolves. See the module documentation.
pub fn detect_profile(
    doc: &Document,
    candidates: &[&ProfileDef],
    types: &[DocumentTypeDef],
) -> Detected {
    let (namespace, local) = root_name(doc);
    let found = clark(namespace, local);
    let doc_type = types
        .iter()
        .find(|t| t.namespace == namespace && t.root == local);
    let covering: Vec<&ProfileDef> = match doc_type {
        Some(t) => candidates
            .iter()
            .copied()
            .filter(|p| p.documents.contains(&t.id))
            .collect(),
        None => Vec::new(),
    };
    if covering.is_empty() {
        let what = match doc_type {
            Some(t) => format!("{found} ({})", t.title),
            None => found,
        };
        return Detected::Uncovered(format!(
            "no installed profile takes the document element {what}"
        ));
    }
    let root = doc.document_element();
    let facts = Facts {
        customization: child(doc, root, CBC_NS, "CustomizationID").map(|n| normalized(doc, n)),
        seller: country(doc, root, "AccountingSupplierParty"),
        buyer: country(doc, root, "AccountingCustomerParty"),
    };
    if let Some(d) = by_identifier(&covering, &facts) {
        return Detected::Profile(d);
    }
    let why = match facts.customization.as_deref() {
        None => {
            "the document has no specification identifier (BT-24, cbc:CustomizationID)".to_string()
        }
        Some("") => "the specification identifier (BT-24) is empty".to_string(),
        Some(id) => match covering.iter().find(|p| matching_prefix(p, id).is_some()) {
            Some(_) => format!(
                "the specification identifier (BT-24) {id} belongs to profiles whose country \
                 conditions the document does not meet (seller country (BT-40) {}, buyer \
                 country (BT-55) {})",
                show(&facts.seller),
                show(&facts.buyer)
            ),
            None => format!(
                "the specification identifier (BT-24) {id} is unknown to the installed profiles"
            ),
        },
    };
    if covering.iter().any(|p| p.id == EN16931_UBL) {
        return Detected::Profile(Detection {
            profile: EN16931_UBL.to_string(),
            reason: format!("{why}, so the default profile {EN16931_UBL} applies"),
        });
    }
    Detected::Undecided(format!(
        "{why}, and the default profile {EN16931_UBL} is not installed for {}",
        clark(namespace, local)
    ))
}

/// The longest of `p`'s identifiers that `id` equals or starts with.
fn matching_prefix<'p>(p: &'p ProfileDef, id: &str) -> Option<&'p str> {
    p.customization_ids
        .iter()
        .filter(|c| id.starts_with(c.as_str()))
        .max_by_key(|c| c.len())
        .map(String::as_str)
}

fn show(c: &Option<String>) -> String {
    c.clone().unwrap_or_else(|| "not given".to_string())
}

/// The profile the identifier and the countries select, if any.
fn by_identifier(covering: &[&ProfileDef], facts: &Facts) -> Option<Detection> {
    let id = facts.customization.as_deref().filter(|id| !id.is_empty())?;
    let meets = |p: &ProfileDef| {
        let d = &p.detection;
        let holds = |want: &Option<String>, got: &Option<String>| {
            want.as_ref()
                .is_none_or(|w| got.as_ref().is_some_and(|g| g.eq_ignore_ascii_case(w)))
        };
        holds(&d.seller_country, &facts.seller) && holds(&d.buyer_country, &facts.buyer)
    };
    // (identifier length, conditions) orders the choice; ties go to the first profile id.
    let best = covering
        .iter()
        .filter(|p| p.detection.auto && meets(p))
        .filter_map(|p| matching_prefix(p, id).map(|c| (*p, c)))
        .min_by(|(a, ca), (b, cb)| {
            cb.len()
                .cmp(&ca.len())
                .then(b.detection.conditions().cmp(&a.detection.conditions()))
                .then(a.id.cmp(&b.id))
        })?;
    let (p, prefix) = best;
    let what = if prefix == id {
        format!("the specification identifier (BT-24) is {id}")
    } else {
        format!("the specification identifier (BT-24) {id} starts with {prefix}")
    };
    let reason = match (&p.detection.seller_country, &p.detection.buyer_country) {
        (None, None) => format!("{what}, which {} is for", p.id),
        _ => format!(
            "{what}, which {} is for, and seller country (BT-40) {} and buyer country (BT-55) {} \
             meet its conditions",
            p.id,
            show(&facts.seller),
            show(&facts.buyer)
        ),
    };
    Some(Detection {
        profile: p.id.clone(),
        reason,
    })
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
    use crate::pack::ProfilesDef;

    const UBL_INVOICE_NS: &str = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2";
    const UBL_CREDIT_NOTE_NS: &str = "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2";
    const EN16931_ID: &str = "urn:cen.eu:en16931:2017";
    const PEPPOL_BIS3_ID: &str =
        "urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0";
    const PEPPOL_BIS3: &str = "peppol-bis3";
    const PEPPOL_BIS3_SK: &str = "peppol-bis3-sk";

    /// The shipped declarations.
    fn shipped() -> ProfilesDef {
        crate::yaml::from_str(include_str!("../../rulepacks/profiles.yaml"))
            .expect("the shipped profiles.yaml")
    }

    fn detect_among(xml: &str, defs: &ProfilesDef, ids: &[&str]) -> Detected {
        let doc = Document::parse(xml.as_bytes()).expect("well-formed test document");
        let candidates: Vec<&ProfileDef> = defs
            .profiles
            .iter()
            .filter(|p| ids.is_empty() || ids.contains(&p.id.as_str()))
            .collect();
        detect_profile(&doc, &candidates, &defs.document_types)
    }

    /// Detection among every shipped profile; the test fails unless a profile is chosen.
    fn detect(xml: &str) -> Detection {
        match detect_among(xml, &shipped(), &[]) {
            Detected::Profile(d) => d,
            other => panic!("no profile detected: {other:?}"),
        }
    }

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

    #[test]
    fn peppol_between_slovak_parties_is_peppol_bis3_sk() {
        let d = detect(&ubl("Invoice", Some(PEPPOL_BIS3_ID), Some("SK"), "SK"));
        assert_eq!(d.profile, PEPPOL_BIS3_SK);
        assert!(d.reason.contains(PEPPOL_BIS3_ID), "{}", d.reason);
        assert!(
            d.reason
                .contains("seller country (BT-40) SK and buyer country (BT-55) SK meet"),
            "{}",
            d.reason
        );
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
            d.reason.ends_with("which peppol-bis3 is for"),
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
        assert!(
            d.reason
                .contains(&format!("(BT-24) is {EN16931_ID}, which en16931-ubl")),
            "{}",
            d.reason
        );
    }

    #[test]
    fn other_cius_is_en16931_ubl() {
        let id = "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0";
        let d = detect(&ubl("Invoice", Some(id), Some("DE"), "DE"));
        assert_eq!(d.profile, EN16931_UBL);
        assert!(
            d.reason.contains(&format!("starts with {EN16931_ID}")),
            "{}",
            d.reason
        );
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
    fn documents_no_profile_takes_are_uncovered() {
        let defs = shipped();
        for (xml, named) in [
            ("<html><body>hello</body></html>", "html"),
            ("<a/>", "a"),
            ("<Doc xmlns='urn:test:doc'/>", "{urn:test:doc}Doc"),
            (
                "<rsm:CrossIndustryInvoice xmlns:rsm='urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100'/>",
                "{urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100}CrossIndustryInvoice (UN/CEFACT",
            ),
            // An Invoice element outside the UBL namespace is not a UBL invoice.
            ("<Invoice/>", "Invoice"),
        ] {
            match detect_among(xml, &defs, &[]) {
                Detected::Uncovered(why) => {
                    assert!(why.contains(&format!("takes the document element {named}")), "{why}")
                }
                other => panic!("{xml}: {other:?}"),
            }
        }
    }

    #[test]
    fn detection_never_falls_back_to_a_profile_for_other_documents() {
        // A profile set that takes credit notes only: an invoice finds no profile, even
        // though en16931-ubl is the default.
        let mut defs = shipped();
        for p in &mut defs.profiles {
            p.documents.retain(|d| d == "ubl-credit-note");
        }
        let xml = ubl("Invoice", Some(EN16931_ID), Some("SK"), "SK");
        assert!(matches!(
            detect_among(&xml, &defs, &[]),
            Detected::Uncovered(_)
        ));
        let xml = ubl("CreditNote", Some(EN16931_ID), Some("SK"), "SK");
        assert!(
            matches!(detect_among(&xml, &defs, &[]), Detected::Profile(d) if d.profile == "en16931-ubl")
        );
    }

    #[test]
    fn the_identifier_picks_among_installed_profiles_only() {
        let defs = shipped();
        // Peppol, Slovak to Czech, without peppol-bis3: the Slovak profile's conditions do
        // not hold, so the EN 16931 identifier it starts with decides.
        let xml = ubl("Invoice", Some(PEPPOL_BIS3_ID), Some("SK"), "CZ");
        match detect_among(&xml, &defs, &["en16931-ubl", "peppol-bis3-sk"]) {
            Detected::Profile(d) => {
                assert_eq!(d.profile, "en16931-ubl");
                assert!(
                    d.reason.contains(&format!("starts with {EN16931_ID}")),
                    "{}",
                    d.reason
                );
            }
            other => panic!("{other:?}"),
        }
        // Without the default profile, an unknown identifier cannot be placed.
        let xml = ubl("Invoice", Some("urn:example:custom:1.0"), Some("SK"), "SK");
        match detect_among(&xml, &defs, &["peppol-bis3", "peppol-bis3-sk"]) {
            Detected::Undecided(why) => {
                assert!(why.contains("urn:example:custom:1.0 is unknown"), "{why}");
                assert!(why.contains("en16931-ubl is not installed"), "{why}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn profiles_with_auto_false_are_never_detected() {
        let defs = shipped();
        let strict = defs
            .profiles
            .iter()
            .find(|p| p.id == "peppol-bis3-sk-strict")
            .unwrap();
        assert!(!strict.detection.auto);
        let xml = ubl("Invoice", Some(PEPPOL_BIS3_ID), Some("SK"), "SK");
        match detect_among(&xml, &defs, &["en16931-ubl", "peppol-bis3-sk-strict"]) {
            Detected::Profile(d) => assert_eq!(d.profile, "en16931-ubl"),
            other => panic!("{other:?}"),
        }
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
