//! How values are printed: plain decimals with a period (no grouping), amounts with at
//! least two decimals, ISO dates as stated, and bilingual names of the common code values.
//! Values that do not parse are printed exactly as the document states them.

use rust_decimal::Decimal;
use std::str::FromStr;

/// An amount with at least two decimals (`1234.5` → `1234.50`); more decimals, as unit
/// prices may carry, are kept.
pub fn amount(raw: &str) -> String {
    match Decimal::from_str(raw.trim()) {
        Ok(d) => {
            let mut d = d.normalize();
            if d.scale() < 2 {
                d.rescale(2);
            }
            d.to_string()
        }
        Err(_) => raw.trim().to_string(),
    }
}

/// An amount followed by its currency code.
pub fn money(raw: &str, currency: Option<&str>) -> String {
    match currency {
        Some(c) => format!("{} {c}", amount(raw)),
        None => amount(raw),
    }
}

/// A quantity or percentage without insignificant zeros (`23.00` → `23`).
pub fn number(raw: &str) -> String {
    match Decimal::from_str(raw.trim()) {
        Ok(d) => d.normalize().to_string(),
        Err(_) => raw.trim().to_string(),
    }
}

/// An identifier with its scheme, as `scheme:value` (the form the draft model uses for
/// electronic addresses).
pub fn scheme_value(scheme: Option<&str>, value: &str) -> String {
    match scheme {
        Some(s) => format!("{s}:{value}"),
        None => value.to_string(),
    }
}

/// A period as `start – end`; an open end is left blank.
pub fn period(start: Option<&str>, end: Option<&str>) -> String {
    format!("{} – {}", start.unwrap_or(""), end.unwrap_or(""))
        .trim()
        .to_string()
}

/// UNCL 1001 document types used in Peppol BIS Billing.
pub fn document_type(code: &str) -> Option<&'static str> {
    Some(match code {
        "380" => "faktúra / commercial invoice",
        "381" => "dobropis / credit note",
        "383" => "ťarchopis / debit note",
        "384" => "opravná faktúra / corrected invoice",
        "386" => "zálohová faktúra / prepayment invoice",
        "389" => "samofaktúra / self-billed invoice",
        "326" => "čiastková faktúra / partial invoice",
        "261" => "samofakturačný dobropis / self-billed credit note",
        "751" => "faktúra na účtovné účely / invoice information for accounting purposes",
        _ => return None,
    })
}

/// UNCL 5305 VAT categories.
pub fn vat_category(code: &str) -> Option<&'static str> {
    Some(match code {
        "S" => "štandardná sadzba / standard rate",
        "Z" => "nulová sadzba / zero rated",
        "E" => "oslobodené od dane / exempt from VAT",
        "AE" => "prenesenie daňovej povinnosti / reverse charge",
        "K" => "dodanie v rámci EÚ / intra-community supply",
        "G" => "vývoz mimo EÚ / export outside the EU",
        "O" => "nepodlieha DPH / not subject to VAT",
        "L" => "Kanárske ostrovy / Canary Islands (IGIC)",
        "M" => "Ceuta a Melilla / Ceuta and Melilla (IPSI)",
        _ => return None,
    })
}

/// UNCL 4461 payment means.
pub fn payment_means(code: &str) -> Option<&'static str> {
    Some(match code {
        "1" => "nešpecifikované / instrument not defined",
        "10" => "v hotovosti / in cash",
        "30" => "prevodom / credit transfer",
        "31" => "debetný prevod / debit transfer",
        "42" => "na bankový účet / payment to bank account",
        "48" => "platobnou kartou / bank card",
        "49" => "inkasom / direct debit",
        "54" => "kreditnou kartou / credit card",
        "55" => "debetnou kartou / debit card",
        "57" => "trvalým príkazom / standing agreement",
        "58" => "prevodom SEPA / SEPA credit transfer",
        "59" => "inkasom SEPA / SEPA direct debit",
        "97" => "zápočtom / clearing between partners",
        "ZZZ" => "dohodnuté / mutually defined",
        _ => return None,
    })
}

/// Whether an account identifier has the shape of an IBAN (country, check digits, 11–30
/// alphanumerics), so it can be labelled as one.
pub fn looks_like_iban(account: &str) -> bool {
    let compact: Vec<char> = account.chars().filter(|c| !c.is_whitespace()).collect();
    (15..=34).contains(&compact.len())
        && compact[..2].iter().all(char::is_ascii_uppercase)
        && compact[2..4].iter().all(char::is_ascii_digit)
        && compact[4..].iter().all(char::is_ascii_alphanumeric)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_have_two_decimals_at_least() {
        assert_eq!(amount("16.4"), "16.40");
        assert_eq!(amount("100"), "100.00");
        assert_eq!(amount("1.3750"), "1.375");
        assert_eq!(amount("0.00"), "0.00");
        assert_eq!(amount("-5"), "-5.00");
        assert_eq!(amount("n/a"), "n/a");
        assert_eq!(money("20.17", Some("EUR")), "20.17 EUR");
    }

    #[test]
    fn numbers_drop_insignificant_zeros() {
        assert_eq!(number("23.00"), "23");
        assert_eq!(number("1.50"), "1.5");
        assert_eq!(number("10"), "10");
    }

    #[test]
    fn iban_shape() {
        assert!(looks_like_iban("SK3112000000198742637541"));
        assert!(looks_like_iban("NO93 8601 1117 947"));
        assert!(!looks_like_iban("IBAN32423940"));
        assert!(!looks_like_iban("1234567890"));
    }
}
