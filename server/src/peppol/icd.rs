//! The Peppol code list "Participant identifier schemes" (ISO 6523 ICD values used in
//! Peppol participant identifiers), as published by OpenPeppol (code list 9.x, 2026).
//!
//! Kept as data so the check "is this an ICD Peppol knows" answers locally, without asking
//! the SML about identifiers that cannot exist.

/// Whether a scheme may be used for new registrations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemeState {
    Active,
    /// Still resolvable, but no new registrations should use it.
    Deprecated,
    /// Withdrawn from the code list: no participant can be registered under it.
    Removed,
}

/// One row of the code list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scheme {
    /// The four-digit ICD, e.g. `0245`.
    pub icd: &'static str,
    /// The Peppol scheme id, e.g. `SK:DIC`.
    pub scheme_id: &'static str,
    /// ISO 3166 country of the issuing agency; empty for international schemes.
    pub country: &'static str,
    pub state: SchemeState,
}

const fn icd(
    icd: &'static str,
    scheme_id: &'static str,
    country: &'static str,
    state: SchemeState,
) -> Scheme {
    Scheme {
        icd,
        scheme_id,
        country,
        state,
    }
}

use SchemeState::{Active, Deprecated, Removed};

/// Every scheme of the code list, by ICD.
pub const SCHEMES: &[Scheme] = &[
    icd("0002", "FR:SIRENE", "FR", Active),
    icd("0007", "SE:ORGNR", "SE", Active),
    icd("0009", "FR:SIRET", "FR", Active),
    icd("0037", "FI:OVT", "FI", Removed),
    icd("0060", "DUNS", "", Active),
    icd("0088", "GLN", "", Active),
    icd("0096", "DK:P", "DK", Active),
    icd("0097", "IT:FTI", "IT", Active),
    icd("0106", "NL:KVK", "NL", Active),
    icd("0130", "EU:NAL", "", Active),
    icd("0135", "IT:SIA", "IT", Active),
    icd("0142", "IT:SECETI", "IT", Active),
    icd("0151", "AU:ABN", "AU", Active),
    icd("0158", "SK:ICO", "SK", Active),
    icd("0183", "CH:UIDB", "CH", Active),
    icd("0184", "DK:DIGST", "DK", Active),
    icd("0188", "JP:SST", "JP", Active),
    icd("0190", "NL:OINO", "NL", Active),
    icd("0191", "EE:CC", "EE", Active),
    icd("0192", "NO:ORG", "NO", Active),
    icd("0193", "UBLBE", "BE", Deprecated),
    icd("0195", "SG:UEN", "SG", Active),
    icd("0196", "IS:KTNR", "IS", Active),
    icd("0198", "DK:ERST", "DK", Active),
    icd("0199", "LEI", "", Active),
    icd("0200", "LT:LEC", "LT", Active),
    icd("0201", "IT:CUUO", "IT", Active),
    icd("0204", "DE:LWID", "DE", Active),
    icd("0205", "IT:COD", "IT", Active),
    icd("0208", "BE:EN", "BE", Active),
    icd("0209", "GS1", "", Active),
    icd("0210", "IT:CFI", "IT", Active),
    icd("0211", "IT:IVA", "IT", Active),
    icd("0212", "FI:ORG", "FI", Removed),
    icd("0213", "FI:VAT", "FI", Removed),
    icd("0215", "FI:NSI", "FI", Removed),
    icd("0216", "FI:OVT2", "FI", Active),
    icd("0218", "LV:URN", "LV", Active),
    icd("0221", "JP:IIN", "JP", Active),
    icd("0225", "FR:CTC", "FR", Active),
    icd("0230", "MY:EIF", "MY", Active),
    icd("0235", "AE:TIN", "AE", Active),
    icd("0240", "LU:MAT", "LU", Active),
    icd("0242", "SPIS", "", Active),
    icd("0244", "NG:TID", "NG", Active),
    icd("0245", "SK:DIC", "SK", Active),
    icd("0246", "DE:GEBA", "DE", Active),
    icd("0248", "OM:VAT", "OM", Active),
    icd("9901", "DK:CPR", "DK", Removed),
    icd("9902", "DK:CVR", "DK", Removed),
    icd("9904", "DK:SE", "DK", Removed),
    icd("9905", "DK:VANS", "DK", Removed),
    icd("9906", "IT:VAT", "IT", Removed),
    icd("9907", "IT:CF", "IT", Removed),
    icd("9908", "NO:ORGNR", "NO", Removed),
    icd("9909", "NO:VAT", "NO", Deprecated),
    icd("9910", "HU:VAT", "HU", Active),
    icd("9912", "EU:VAT", "", Deprecated),
    icd("9913", "EU:REID", "", Active),
    icd("9914", "AT:VAT", "AT", Active),
    icd("9915", "AT:GOV", "AT", Active),
    icd("9916", "AT:CID", "AT", Deprecated),
    icd("9917", "IS:KT", "IS", Deprecated),
    icd("9918", "IBAN", "", Active),
    icd("9919", "AT:KUR", "AT", Active),
    icd("9920", "ES:VAT", "ES", Active),
    icd("9921", "IT:IPA", "IT", Removed),
    icd("9922", "AD:VAT", "AD", Active),
    icd("9923", "AL:VAT", "AL", Active),
    icd("9924", "BA:VAT", "BA", Active),
    icd("9925", "BE:VAT", "BE", Active),
    icd("9926", "BG:VAT", "BG", Active),
    icd("9927", "CH:VAT", "CH", Active),
    icd("9928", "CY:VAT", "CY", Active),
    icd("9929", "CZ:VAT", "CZ", Active),
    icd("9930", "DE:VAT", "DE", Active),
    icd("9931", "EE:VAT", "EE", Active),
    icd("9932", "GB:VAT", "GB", Active),
    icd("9933", "GR:VAT", "GR", Active),
    icd("9934", "HR:VAT", "HR", Active),
    icd("9935", "IE:VAT", "IE", Active),
    icd("9936", "LI:VAT", "LI", Active),
    icd("9937", "LT:VAT", "LT", Active),
    icd("9938", "LU:VAT", "LU", Active),
    icd("9939", "LV:VAT", "LV", Active),
    icd("9940", "MC:VAT", "MC", Active),
    icd("9941", "ME:VAT", "ME", Active),
    icd("9942", "MK:VAT", "MK", Active),
    icd("9943", "MT:VAT", "MT", Active),
    icd("9944", "NL:VAT", "NL", Active),
    icd("9945", "PL:VAT", "PL", Active),
    icd("9946", "PT:VAT", "PT", Active),
    icd("9947", "RO:VAT", "RO", Active),
    icd("9948", "RS:VAT", "RS", Active),
    icd("9949", "SI:VAT", "SI", Active),
    icd("9950", "SK:VAT", "SK", Active),
    icd("9951", "SM:VAT", "SM", Active),
    icd("9952", "TR:VAT", "TR", Active),
    icd("9953", "VA:VAT", "VA", Active),
    icd("9954", "NL:OIN", "NL", Removed),
    icd("9955", "SE:VAT", "SE", Removed),
    icd("9956", "BE:CBE", "BE", Removed),
    icd("9957", "FR:VAT", "FR", Active),
    icd("9958", "DE:LID", "DE", Removed),
    icd("9959", "US:EIN", "US", Active),
];

/// The code-list row of `icd`, if Peppol has one.
pub fn find(icd: &str) -> Option<&'static Scheme> {
    SCHEMES.iter().find(|s| s.icd == icd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_sorted_and_has_the_schemes_we_check() {
        assert!(SCHEMES.windows(2).all(|w| w[0].icd < w[1].icd));
        assert!(SCHEMES
            .iter()
            .all(|s| s.icd.len() == 4 && s.icd.bytes().all(|b| b.is_ascii_digit())));
        for code in [
            "0007", "0009", "0088", "0106", "0151", "0192", "0204", "0208", "0245", "9925", "9930",
            "9950",
        ] {
            assert_eq!(find(code).map(|s| s.state), Some(Active), "{code}");
        }
        assert_eq!(find("0245").map(|s| s.scheme_id), Some("SK:DIC"));
        assert_eq!(find("9958").map(|s| s.state), Some(Removed));
        assert_eq!(find("0193").map(|s| s.state), Some(Deprecated));
        assert!(find("0001").is_none());
    }
}
