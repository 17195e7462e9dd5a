//! Identifiers and code values of one cell: normalised, checked with the engine's and the
//! server's own check functions (so the converter agrees with validation and lookups), and
//! common spellings translated to codes (`ks` → `H87`, `Slovensko` → `SK`).

use super::values::{Doubt, Parsed};
use crate::convert::model::DocumentKind;
use crate::peppol::ParticipantId;
use invex_engine::checks;

/// A text value after its check: kept even when the check fails, so a reviewer sees what
/// the file said; `problem` then says what is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    pub value: String,
    pub doubt: Doubt,
    pub problem: Option<String>,
}

impl Checked {
    fn ok(value: String) -> Self {
        Checked {
            value,
            doubt: Doubt::None,
            problem: None,
        }
    }

    fn interpreted(value: String, note: String) -> Self {
        Checked {
            value,
            doubt: Doubt::Interpreted(note),
            problem: None,
        }
    }

    fn bad(value: String, problem: String) -> Self {
        Checked {
            value,
            doubt: Doubt::None,
            problem: Some(problem),
        }
    }
}

/// What kind of text a field holds, which decides its check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextKind {
    Plain,
    Ico,
    Dic,
    VatId,
    Endpoint,
    Iban,
    Bic,
    Country,
    Currency,
    Email,
    Unit,
    VatCategory,
    MeansCode,
}

/// Check one non-empty cell text of the given kind.
pub fn check(kind: TextKind, raw: &str) -> Checked {
    let raw = raw.trim();
    match kind {
        TextKind::Plain => Checked::ok(raw.to_string()),
        TextKind::Ico => ico(raw),
        TextKind::Dic => dic(raw),
        TextKind::VatId => vat_id(raw),
        TextKind::Endpoint => endpoint(raw),
        TextKind::Iban => iban(raw),
        TextKind::Bic => bic(raw),
        TextKind::Country => country(raw),
        TextKind::Currency => currency(raw),
        TextKind::Email => email(raw),
        TextKind::Unit => unit(raw),
        TextKind::VatCategory => vat_category(raw),
        TextKind::MeansCode => means_code(raw),
    }
}

fn without_spaces(raw: &str) -> String {
    raw.chars().filter(|c| !c.is_whitespace()).collect()
}

fn ico(raw: &str) -> Checked {
    let digits = without_spaces(raw);
    let (value, padded) = match digits.len() {
        // Spreadsheets drop the leading zeros of old six-digit IČO stored as numbers.
        6 | 7 if digits.bytes().all(|b| b.is_ascii_digit()) => (format!("{digits:0>8}"), true),
        _ => (digits, false),
    };
    match checks::ico_sk_check(&value) {
        Err(e) => Checked::bad(value, format!("not a valid Slovak IČO: {e}")),
        Ok(()) if padded => {
            let note = format!("IČO `{raw}` completed with leading zeros to {value}");
            Checked::interpreted(value, note)
        }
        Ok(()) => Checked::ok(value),
    }
}

fn dic(raw: &str) -> Checked {
    let compact = without_spaces(raw).to_ascii_uppercase();
    // People paste the IČ DPH (SK + DIČ) into the DIČ column.
    let (value, from_vat) = match compact.strip_prefix("SK") {
        Some(rest) => (rest.to_string(), true),
        None => (compact, false),
    };
    match checks::dic_sk_check(&value) {
        Err(e) => Checked::bad(value, format!("not a valid Slovak DIČ: {e}")),
        Ok(()) if from_vat => {
            let note = format!("DIČ taken from `{raw}` without the SK prefix");
            Checked::interpreted(value, note)
        }
        Ok(()) => Checked::ok(value),
    }
}

fn vat_id(raw: &str) -> Checked {
    let local = crate::vat::local::check(raw);
    match local.outcome {
        Ok(()) => Checked::ok(local.normalized),
        Err(_)
            if local.normalized.len() == 10
                && local.normalized.bytes().all(|b| b.is_ascii_digit()) =>
        {
            let with_prefix = format!("SK{}", local.normalized);
            if checks::ic_dph_sk(&with_prefix) {
                let note = format!("IČ DPH `{raw}` written without its SK prefix");
                Checked::interpreted(with_prefix, note)
            } else {
                Checked::bad(
                    local.normalized,
                    "not a VAT identifier: it needs a country prefix (SK…) and, \
                     for Slovakia, 10 digits divisible by 11"
                        .into(),
                )
            }
        }
        Err(fault) => Checked::bad(local.normalized, fault.reason()),
    }
}

fn endpoint(raw: &str) -> Checked {
    let compact = without_spaces(raw);
    if !compact.contains(':') {
        // A bare Slovak identifier: DIČ registers under 0245, IČ DPH under 9950.
        let upper = compact.to_ascii_uppercase();
        let icd = if upper.len() == 10 && upper.bytes().all(|b| b.is_ascii_digit()) {
            Some("0245")
        } else if upper.starts_with("SK") && upper.len() == 12 {
            Some("9950")
        } else {
            None
        };
        if let Some(icd) = icd {
            if let Ok(id) = ParticipantId::parse(&format!("{icd}:{upper}")) {
                let value = format!("{}:{}", id.icd, id.value);
                let note = format!("endpoint `{raw}` has no scheme; read as {value}");
                return Checked::interpreted(value, note);
            }
        }
    }
    match ParticipantId::parse(&compact) {
        Ok(id) => Checked::ok(format!("{}:{}", id.icd, id.value)),
        Err(e) => Checked::bad(compact, format!("not a Peppol endpoint: {e}")),
    }
}

fn iban(raw: &str) -> Checked {
    let value = checks::iban_normalize(raw);
    match checks::iban_check(&value) {
        Ok(()) => Checked::ok(value),
        Err(e) => Checked::bad(value, format!("not a valid IBAN: {e}")),
    }
}

fn bic(raw: &str) -> Checked {
    let value = without_spaces(raw).to_ascii_uppercase();
    let shape_ok = (value.len() == 8 || value.len() == 11)
        && value.bytes().all(|b| b.is_ascii_alphanumeric())
        && value.bytes().take(6).all(|b| b.is_ascii_uppercase());
    if shape_ok {
        Checked::ok(value)
    } else {
        Checked::bad(
            value,
            "not a BIC: 8 or 11 letters and digits, the first six letters".into(),
        )
    }
}

/// Lower case, no diacritics, words separated by single spaces: how headers and code
/// words are compared, so `IČO odberateľa` matches `ICO odberatela`.
pub fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars().flat_map(char::to_lowercase) {
        let base = match c {
            'á' | 'ä' | 'à' | 'â' | 'ã' | 'å' | 'ą' => 'a',
            'č' | 'ć' | 'ç' => 'c',
            'ď' => 'd',
            'é' | 'ě' | 'ë' | 'è' | 'ê' | 'ę' => 'e',
            'í' | 'î' | 'ì' | 'ï' => 'i',
            'ĺ' | 'ľ' | 'ł' => 'l',
            'ň' | 'ń' | 'ñ' => 'n',
            'ó' | 'ô' | 'ö' | 'ò' | 'õ' | 'ő' => 'o',
            'ŕ' | 'ř' => 'r',
            'š' | 'ś' | 'ş' => 's',
            'ť' | 'ţ' => 't',
            'ú' | 'ů' | 'ü' | 'ù' | 'û' | 'ű' => 'u',
            'ý' | 'ÿ' => 'y',
            'ž' | 'ź' | 'ż' => 'z',
            '²' => '2',
            '³' => '3',
            c => c,
        };
        if base.is_alphanumeric() {
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            out.push(base);
        } else {
            space = true;
        }
    }
    out
}

const COUNTRY_NAMES: [(&str, &str); 16] = [
    ("slovensko", "SK"),
    ("slovenska republika", "SK"),
    ("slovakia", "SK"),
    ("sr", "SK"),
    ("cesko", "CZ"),
    ("ceska republika", "CZ"),
    ("czechia", "CZ"),
    ("czech republic", "CZ"),
    ("madarsko", "HU"),
    ("hungary", "HU"),
    ("rakusko", "AT"),
    ("austria", "AT"),
    ("polsko", "PL"),
    ("poland", "PL"),
    ("nemecko", "DE"),
    ("germany", "DE"),
];

fn country(raw: &str) -> Checked {
    let folded = fold(raw);
    if let Some((_, code)) = COUNTRY_NAMES.iter().find(|(name, _)| *name == folded) {
        let note = format!("country `{raw}` read as {code}");
        return Checked::interpreted((*code).to_string(), note);
    }
    if raw.len() == 2 && raw.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Checked::ok(raw.to_ascii_uppercase());
    }
    Checked::bad(
        raw.to_string(),
        "not a country code: use the ISO 3166-1 two-letter code, e.g. SK".into(),
    )
}

fn currency(raw: &str) -> Checked {
    if raw == "€" {
        return Checked::interpreted("EUR".into(), "currency `€` read as EUR".into());
    }
    if raw.len() == 3 && raw.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Checked::ok(raw.to_ascii_uppercase());
    }
    Checked::bad(
        raw.to_string(),
        "not a currency code: use the ISO 4217 three-letter code, e.g. EUR".into(),
    )
}

fn email(raw: &str) -> Checked {
    let shape_ok = matches!(raw.split_once('@'), Some((local, domain))
        if !local.is_empty() && domain.contains('.') && !domain.contains('@'))
        && !raw.chars().any(char::is_whitespace);
    if shape_ok {
        Checked::ok(raw.to_string())
    } else {
        Checked::bad(raw.to_string(), "not an e-mail address".into())
    }
}

/// Unit abbreviations common on Slovak and English invoices (folded) → UN/ECE Rec 20.
const UNITS: [(&str, &str); 43] = [
    ("ks", "H87"),
    ("kus", "H87"),
    ("kusy", "H87"),
    ("kusov", "H87"),
    ("pc", "H87"),
    ("pcs", "H87"),
    ("piece", "H87"),
    ("pieces", "H87"),
    ("h", "HUR"),
    ("hod", "HUR"),
    ("hodina", "HUR"),
    ("hodiny", "HUR"),
    ("hour", "HUR"),
    ("hours", "HUR"),
    ("min", "MIN"),
    ("d", "DAY"),
    ("den", "DAY"),
    ("dni", "DAY"),
    ("day", "DAY"),
    ("days", "DAY"),
    ("mes", "MON"),
    ("mesiac", "MON"),
    ("month", "MON"),
    ("rok", "ANN"),
    ("year", "ANN"),
    ("kg", "KGM"),
    ("g", "GRM"),
    ("t", "TNE"),
    ("m", "MTR"),
    ("bm", "MTR"),
    ("km", "KMT"),
    ("cm", "CMT"),
    ("m2", "MTK"),
    ("m3", "MTQ"),
    ("l", "LTR"),
    ("ml", "MLT"),
    ("kwh", "KWH"),
    ("mwh", "MWH"),
    ("bal", "XPK"),
    ("balenie", "XPK"),
    ("sada", "SET"),
    ("pausal", "LS"),
    ("lump sum", "LS"),
];

fn unit(raw: &str) -> Checked {
    let folded = fold(raw.trim_end_matches('.'));
    if let Some((_, code)) = UNITS.iter().find(|(word, _)| *word == folded) {
        if *code == raw {
            return Checked::ok(raw.to_string());
        }
        let note = format!("unit `{raw}` read as the UN/ECE code {code}");
        return Checked::interpreted((*code).to_string(), note);
    }
    let is_code = (2..=3).contains(&raw.len())
        && raw
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
    if is_code {
        Checked::ok(raw.to_string())
    } else {
        Checked::bad(
            raw.to_string(),
            "not a UN/ECE Recommendation 20 unit code (e.g. C62, H87, HUR, KGM)".into(),
        )
    }
}

const VAT_CATEGORIES: [&str; 9] = ["S", "Z", "E", "AE", "K", "G", "O", "L", "M"];

fn vat_category(raw: &str) -> Checked {
    let value = raw.to_ascii_uppercase();
    if VAT_CATEGORIES.contains(&value.as_str()) {
        Checked::ok(value)
    } else {
        Checked::bad(
            value,
            "not a VAT category code: one of S, Z, E, AE, K, G, O, L, M".into(),
        )
    }
}

/// Payment means as Slovak exports name them (folded) → UNCL 4461.
const MEANS: [(&str, &str); 9] = [
    ("prevod", "30"),
    ("prevodom", "30"),
    ("bankovy prevod", "30"),
    ("prevodny prikaz", "30"),
    ("credit transfer", "30"),
    ("hotovost", "10"),
    ("cash", "10"),
    ("karta", "48"),
    ("card", "48"),
];

fn means_code(raw: &str) -> Checked {
    if (1..=3).contains(&raw.len()) && raw.bytes().all(|b| b.is_ascii_digit()) {
        return Checked::ok(raw.to_string());
    }
    let folded = fold(raw);
    match MEANS.iter().find(|(word, _)| *word == folded) {
        Some((_, code)) => {
            let note = format!("payment means `{raw}` read as the UNCL 4461 code {code}");
            Checked::interpreted((*code).to_string(), note)
        }
        None => Checked::bad(
            raw.to_string(),
            "not a payment means code (UNCL 4461, e.g. 30 credit transfer, 58 SEPA)".into(),
        ),
    }
}

/// The document type (BT-3) from a code or a word.
pub fn kind(raw: &str) -> Result<Parsed<DocumentKind>, String> {
    let folded = fold(raw);
    let (kind, literal) = match folded.as_str() {
        "380" => (DocumentKind::Invoice, true),
        "381" => (DocumentKind::CreditNote, true),
        "invoice" | "faktura" | "fa" | "fv" => (DocumentKind::Invoice, false),
        "credit note" | "creditnote" | "dobropis" | "db" | "opravna faktura" => {
            (DocumentKind::CreditNote, false)
        }
        _ => {
            return Err(format!(
                "`{raw}` is not a document type: use 380 (invoice) or 381 (credit note)"
            ))
        }
    };
    let doubt = if literal {
        Doubt::None
    } else {
        Doubt::Interpreted(format!("document type `{raw}` read as {kind:?}"))
    };
    Ok(Parsed { value: kind, doubt })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slovak_identifiers_are_checked_with_the_shared_functions() {
        assert_eq!(
            check(TextKind::Ico, "12 345 679"),
            Checked::ok("12345679".into())
        );
        assert!(check(TextKind::Ico, "12345678").problem.is_some());
        let padded = check(TextKind::Ico, "345687");
        assert_eq!(padded.value, "00345687");
        assert!(matches!(padded.doubt, Doubt::Interpreted(_)));
        assert_eq!(check(TextKind::Dic, "2121234577").problem, None);
        assert_eq!(check(TextKind::Dic, "SK2121234577").value, "2121234577");
        assert!(check(TextKind::Dic, "212123457").problem.is_some());
        assert_eq!(
            check(TextKind::VatId, "sk 2121234577").value,
            "SK2121234577"
        );
        assert!(check(TextKind::VatId, "SK2121234578").problem.is_some());
        let bare = check(TextKind::VatId, "2121234577");
        assert_eq!(bare.value, "SK2121234577");
        assert!(matches!(bare.doubt, Doubt::Interpreted(_)));
    }

    #[test]
    fn iban_and_endpoints() {
        assert_eq!(
            check(TextKind::Iban, "SK24 1100 0000 0026 1234 5678"),
            Checked::ok("SK2411000000002612345678".into())
        );
        let bad = check(TextKind::Iban, "SK2511000000002612345678");
        assert!(bad.problem.unwrap().contains("IBAN"));
        assert_eq!(
            check(TextKind::Endpoint, "0245:2121234577"),
            Checked::ok("0245:2121234577".into())
        );
        assert_eq!(
            check(TextKind::Endpoint, "9950:sk2121234577").value,
            "9950:SK2121234577"
        );
        let bare = check(TextKind::Endpoint, "2121234577");
        assert_eq!(bare.value, "0245:2121234577");
        assert!(matches!(bare.doubt, Doubt::Interpreted(_)));
        assert!(check(TextKind::Endpoint, "1234:abc").problem.is_some());
        assert!(check(TextKind::Endpoint, "9950:SK2121234578")
            .problem
            .is_some());
    }

    #[test]
    fn codes_from_words() {
        assert_eq!(check(TextKind::Unit, "ks").value, "H87");
        assert_eq!(check(TextKind::Unit, "hod.").value, "HUR");
        assert_eq!(check(TextKind::Unit, "m²").value, "MTK");
        assert_eq!(check(TextKind::Unit, "C62"), Checked::ok("C62".into()));
        assert!(check(TextKind::Unit, "krabica").problem.is_some());
        assert_eq!(check(TextKind::Country, "Slovensko").value, "SK");
        assert_eq!(check(TextKind::Country, "sk"), Checked::ok("SK".into()));
        assert_eq!(check(TextKind::Currency, "€").value, "EUR");
        assert_eq!(check(TextKind::MeansCode, "Bankový prevod").value, "30");
        assert!(check(TextKind::VatCategory, "X").problem.is_some());
        assert_eq!(
            kind("Dobropis").map(|p| p.value),
            Ok(DocumentKind::CreditNote)
        );
        assert!(kind("proforma").is_err());
        assert_eq!(fold("  IČ DPH  odberateľa "), "ic dph odberatela");
        assert_eq!(fold("E-mail"), "e mail");
    }
}
