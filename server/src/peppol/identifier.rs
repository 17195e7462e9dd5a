//! Peppol participant identifiers: `iso6523-actorid-upis::{icd}:{value}`.
//!
//! Everything here answers locally and at once: an identifier that breaks its scheme's
//! syntax or check digits cannot be registered, so asking the SML about it would only cost
//! time. Check-digit helpers come from the engine (`invex_engine::checks`) and the VAT
//! module, so the server, the rule packs and the VAT route agree on what is valid.

use invex_engine::checks;

use super::icd::{self, SchemeState};

/// The only participant identifier scheme Peppol uses.
pub const SCHEME: &str = "iso6523-actorid-upis";

/// Longest accepted `{icd}:{value}`.
pub const MAX_LEN: usize = 130;

/// A participant identifier that passed the local checks.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ParticipantId {
    /// The four-digit ICD, e.g. `0245`.
    pub icd: &'static str,
    /// The Peppol scheme id of the ICD, e.g. `SK:DIC`.
    pub scheme_id: &'static str,
    /// The value after the ICD, normalised (VAT prefixes upper case).
    pub value: String,
}

/// Why an identifier was refused, in words an API user can act on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("the participant identifier is empty")]
    Empty,
    #[error("the participant identifier has {len} characters; at most {MAX_LEN} are allowed")]
    TooLong { len: usize },
    #[error("`{0}` is not a participant identifier scheme; Peppol uses `{SCHEME}`")]
    WrongScheme(String),
    #[error("expected `<icd>:<identifier>` (e.g. `0245:2022749619`), got `{0}`")]
    NoSeparator(String),
    #[error("the ICD `{0}` is not four digits")]
    IcdFormat(String),
    #[error("the ICD `{0}` is not in the Peppol code list of participant identifier schemes")]
    UnknownIcd(String),
    #[error("the ICD {icd} ({scheme_id}) was removed from the Peppol code list; no participant can be registered under it")]
    RemovedIcd {
        icd: &'static str,
        scheme_id: &'static str,
    },
    #[error("the identifier after `{icd}:` is empty")]
    EmptyValue { icd: &'static str },
    #[error("the identifier contains {found}; only printable ASCII without spaces is allowed")]
    Character { found: String },
    #[error("{value} is not a valid {scheme_id} identifier (ICD {icd}): {reason}")]
    Value {
        icd: &'static str,
        scheme_id: &'static str,
        value: String,
        reason: String,
    },
}

impl IdError {
    /// Which part of the identifier is at fault: `scheme`, `icd` or `id`.
    pub fn part(&self) -> &'static str {
        match self {
            IdError::Empty | IdError::TooLong { .. } | IdError::NoSeparator(_) => "participant_id",
            IdError::WrongScheme(_) => "scheme",
            IdError::IcdFormat(_) | IdError::UnknownIcd(_) | IdError::RemovedIcd { .. } => "icd",
            IdError::EmptyValue { .. } | IdError::Character { .. } | IdError::Value { .. } => "id",
        }
    }
}

impl ParticipantId {
    /// Parse `0245:2022749619` or `iso6523-actorid-upis::0245:2022749619`.
    pub fn parse(input: &str) -> Result<ParticipantId, IdError> {
        let input = input.trim();
        if input.is_empty() {
            return Err(IdError::Empty);
        }
        let bare = match input.split_once("::") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case(SCHEME) => rest,
            Some((scheme, _)) => return Err(IdError::WrongScheme(scheme.to_string())),
            None => input,
        };
        let Some((icd, value)) = bare.split_once(':') else {
            return Err(IdError::NoSeparator(bare.to_string()));
        };
        ParticipantId::from_parts(icd, value)
    }

    /// Check an ICD and a value given separately (`?icd=0245&id=2022749619`).
    pub fn from_parts(icd: &str, value: &str) -> Result<ParticipantId, IdError> {
        let icd = icd.trim();
        let value = value.trim();
        let len = icd.chars().count() + 1 + value.chars().count();
        if len > MAX_LEN {
            return Err(IdError::TooLong { len });
        }
        if icd.len() != 4 || !icd.bytes().all(|b| b.is_ascii_digit()) {
            return Err(IdError::IcdFormat(icd.to_string()));
        }
        let scheme = icd::find(icd).ok_or_else(|| IdError::UnknownIcd(icd.to_string()))?;
        if scheme.state == SchemeState::Removed {
            return Err(IdError::RemovedIcd {
                icd: scheme.icd,
                scheme_id: scheme.scheme_id,
            });
        }
        if value.is_empty() {
            return Err(IdError::EmptyValue { icd: scheme.icd });
        }
        if let Some(c) = value.chars().find(|c| !c.is_ascii_graphic()) {
            let found = if c == ' ' {
                "a space".to_string()
            } else {
                format!("the character {c:?}")
            };
            return Err(IdError::Character { found });
        }
        let value = check_value(scheme.icd, value).map_err(|reason| IdError::Value {
            icd: scheme.icd,
            scheme_id: scheme.scheme_id,
            value: value.to_string(),
            reason,
        })?;
        Ok(ParticipantId {
            icd: scheme.icd,
            scheme_id: scheme.scheme_id,
            value,
        })
    }

    /// `{icd}:{value}`, the form of interface spec 2.2.
    pub fn id(&self) -> String {
        format!("{}:{}", self.icd, self.value)
    }

    /// `iso6523-actorid-upis::{icd}:{value}`, the form SMPs and the Directory take.
    pub fn uri(&self) -> String {
        format!("{SCHEME}::{}", self.id())
    }

    /// The key for caches and DNS hashing: identifiers are case-insensitive.
    pub fn key(&self) -> String {
        self.id().to_ascii_lowercase()
    }
}

/// Scheme-specific syntax and check digits; returns the normalised value.
fn check_value(icd: &str, value: &str) -> Result<String, String> {
    let digits = |n: usize, what: &str| -> Result<(), String> {
        if value.len() == n && value.bytes().all(|b| b.is_ascii_digit()) {
            Ok(())
        } else {
            Err(format!("{what} is exactly {n} digits"))
        }
    };
    let checked = |ok: bool, what: &str| -> Result<(), String> {
        if ok {
            Ok(())
        } else {
            Err(format!("the {what} check digit does not match"))
        }
    };
    match icd {
        // FR SIREN (9 digits) or SIRET (14), both Luhn.
        "0002" => {
            if !(value.len() == 9 || value.len() == 14)
                || !value.bytes().all(|b| b.is_ascii_digit())
            {
                return Err("a SIREN is 9 digits (or a SIRET 14 digits)".into());
            }
            checked(siret_luhn(value), "Luhn")?;
        }
        "0007" => {
            digits(10, "a Swedish organisation number (without the hyphen)")?;
            checked(checks::se_orgnr(value), "Luhn")?;
        }
        "0009" => {
            digits(14, "a SIRET")?;
            checked(siret_luhn(value), "Luhn")?;
        }
        "0088" => {
            digits(13, "a GLN")?;
            checked(checks::gln(value), "GS1 (mod 10)")?;
        }
        "0106" => digits(8, "a KVK number")?,
        "0151" => {
            digits(11, "an ABN")?;
            checked(checks::abn_au(value), "ABN (mod 89)")?;
        }
        "0158" => checks::ico_sk_check(value).map_err(|e| format!("Slovak IČO: {e}"))?,
        "0192" => {
            digits(9, "a Norwegian organisation number")?;
            checked(checks::mod11_no(value), "mod 11")?;
        }
        "0204" => leitweg(value)?,
        "0208" => {
            digits(10, "a Belgian enterprise number")?;
            checked(checks::mod97_be(value), "mod 97")?;
        }
        "0245" => {
            digits(10, "a Slovak DIČ")?;
            checks::dic_sk_check(value).map_err(|e| format!("Slovak DIČ: {e}"))?;
        }
        "9925" => return vat(value, "BE"),
        "9930" => return vat(value, "DE"),
        "9950" => {
            let upper = value.to_ascii_uppercase();
            checks::ic_dph_sk_check(&upper).map_err(|e| format!("Slovak IČ DPH: {e}"))?;
            return Ok(upper);
        }
        _ => {}
    }
    Ok(value.to_string())
}

/// An EU VAT number of one country, checked like `/v1/vat/verify` does.
fn vat(value: &str, country: &str) -> Result<String, String> {
    let upper = value.to_ascii_uppercase();
    if !upper.starts_with(country) {
        return Err(format!("a {country} VAT number starts with `{country}`"));
    }
    if !upper.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err("write the VAT number without spaces, dots or dashes".into());
    }
    let local = crate::vat::local::check(&upper);
    match local.outcome {
        Ok(()) if local.normalized == upper => Ok(upper),
        Ok(()) => Err(format!("write it in full as {}", local.normalized)),
        Err(fault) => Err(fault.reason()),
    }
}

/// Luhn over all digits; La Poste establishments (SIREN 356000000) use a digit sum
/// divisible by 5 instead.
fn siret_luhn(value: &str) -> bool {
    let digits: Vec<u32> = value.chars().filter_map(|c| c.to_digit(10)).collect();
    if value.len() == 14 && value.starts_with("356000000") {
        return digits.iter().sum::<u32>().is_multiple_of(5);
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| match (i % 2 == 1, d * 2) {
            (true, x) if x > 9 => x - 9,
            (true, x) => x,
            (false, _) => d,
        })
        .sum();
    sum.is_multiple_of(10)
}

/// Leitweg-ID: coarse address (2–12 digits), optional fine address (1–30 letters or
/// digits), two check digits; ISO 7064 MOD 97-10 over the whole id without hyphens.
fn leitweg(value: &str) -> Result<(), String> {
    const SHAPE: &str = "a Leitweg-ID is <2-12 digits>[-<1-30 letters or digits>]-<2 check digits>";
    let parts: Vec<&str> = value.split('-').collect();
    let (coarse, fine, check) = match parts.as_slice() {
        [coarse, check] => (*coarse, None, *check),
        [coarse, fine, check] => (*coarse, Some(*fine), *check),
        _ => return Err(SHAPE.into()),
    };
    let coarse_ok = (2..=12).contains(&coarse.len()) && coarse.bytes().all(|b| b.is_ascii_digit());
    let fine_ok = fine.is_none_or(|f| {
        (1..=30).contains(&f.len()) && f.bytes().all(|b| b.is_ascii_alphanumeric())
    });
    let check_ok = check.len() == 2 && check.bytes().all(|b| b.is_ascii_digit());
    if !(coarse_ok && fine_ok && check_ok) {
        return Err(SHAPE.into());
    }
    let compact: String = value.chars().filter(|c| *c != '-').collect();
    if checks::iso7064_mod97_10(&compact) {
        Ok(())
    } else {
        Err("the ISO 7064 MOD 97-10 check digits do not match".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(input: &str) -> ParticipantId {
        ParticipantId::parse(input).unwrap_or_else(|e| panic!("{input}: {e}"))
    }

    fn fault(input: &str) -> IdError {
        match ParticipantId::parse(input) {
            Ok(id) => panic!("{input} accepted as {id:?}"),
            Err(e) => e,
        }
    }

    fn value_fault(input: &str) -> String {
        match fault(input) {
            IdError::Value { reason, .. } => reason,
            other => panic!("{input}: not a value fault: {other}"),
        }
    }

    #[test]
    fn both_forms_parse_to_the_same_identifier() {
        let short = ok("0245:2022749619");
        let long = ok("iso6523-actorid-upis::0245:2022749619");
        let upper = ok("ISO6523-ACTORID-UPIS::0245:2022749619");
        assert_eq!(short, long);
        assert_eq!(short, upper);
        assert_eq!(short.scheme_id, "SK:DIC");
        assert_eq!(short.id(), "0245:2022749619");
        assert_eq!(short.uri(), "iso6523-actorid-upis::0245:2022749619");
        // Values are case-insensitive: VAT prefixes are normalised, keys are lower case.
        let vat = ok("9950:sk2022749619");
        assert_eq!(vat.id(), "9950:SK2022749619");
        assert_eq!(vat.key(), "9950:sk2022749619");
    }

    #[test]
    fn valid_identifiers_of_every_checked_scheme() {
        for id in [
            "0002:784301772",
            "0007:5560360793",
            "0009:73282932000074",
            "0009:35600000049837",
            "0088:5790000435968",
            "0106:17024560",
            "0151:51824753556",
            "0158:31322832",
            "0192:974760673",
            "0204:991-12345-73",
            "0204:04011000-1234512345-06",
            "0208:0403170701",
            "0245:2022749619",
            "9925:BE0403170701",
            "9930:DE129273398",
            "9950:SK2022749619",
            "9950:SK1020304758",
            // Schemes without a published check: syntax only.
            "0060:812810734",
            "9959:12-3456789",
        ] {
            ok(id);
        }
    }

    #[test]
    fn invalid_values_name_the_rule() {
        assert!(value_fault("0088:5790000435969").contains("GS1"));
        assert!(value_fault("0088:579000043596").contains("13 digits"));
        assert!(value_fault("0245:202274961").contains("10 digits"));
        assert!(value_fault("0245:0022749619").contains("first digit"));
        // The published example that fails the IČ DPH check.
        assert!(value_fault("9950:SK2020123456").contains("check digit"));
        assert!(value_fault("9950:SK2012345678").contains("third digit"));
        assert!(value_fault("9950:2022749619").contains("SK"));
        assert!(value_fault("0192:974760674").contains("mod 11"));
        assert!(value_fault("0208:0403170702").contains("mod 97"));
        assert!(value_fault("9925:BE0403170702").contains("check digit"));
        assert!(value_fault("9925:0403170701").contains("starts with `BE`"));
        assert!(value_fault("9930:DE129273399").contains("check digit"));
        assert!(value_fault("9930:DE12927339").contains("format"));
        assert!(value_fault("0007:5560360794").contains("Luhn"));
        assert!(value_fault("0009:73282932000075").contains("Luhn"));
        assert!(value_fault("0009:7328293200007").contains("14 digits"));
        assert!(value_fault("0106:1702456").contains("8 digits"));
        assert!(value_fault("0151:51824753557").contains("mod 89"));
        assert!(value_fault("0204:991-12345-74").contains("MOD 97-10"));
        assert!(value_fault("0204:991_12345-73").contains("Leitweg-ID is"));
        assert!(value_fault("0204:1-12345-73").contains("Leitweg-ID is"));
    }

    #[test]
    fn structural_faults_are_named() {
        assert_eq!(fault(""), IdError::Empty);
        assert_eq!(
            fault("2022749619"),
            IdError::NoSeparator("2022749619".into())
        );
        assert_eq!(fault("245:2022749619"), IdError::IcdFormat("245".into()));
        assert_eq!(fault("02a5:2022749619"), IdError::IcdFormat("02a5".into()));
        assert_eq!(fault("0001:2022749619"), IdError::UnknownIcd("0001".into()));
        assert!(matches!(
            fault("9958:991-12345-73"),
            IdError::RemovedIcd { icd: "9958", .. }
        ));
        assert_eq!(fault("0245:"), IdError::EmptyValue { icd: "0245" });
        assert!(matches!(
            fault("0060:8128 10734"),
            IdError::Character { .. }
        ));
        assert!(matches!(fault("0060:81281073č"), IdError::Character { .. }));
        assert_eq!(
            fault("busdox-actorid-upis::0245:2022749619").part(),
            "scheme"
        );
        let long = format!("0060:{}", "1".repeat(126));
        assert_eq!(fault(&long), IdError::TooLong { len: 131 });
        ok(&format!("0060:{}", "1".repeat(125)));
    }
}
