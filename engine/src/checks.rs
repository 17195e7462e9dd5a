//! Identifier check functions (check digits, lengths, prefixes).
//!
//! Two families live here:
//!
//! * **Strict checks** (top level of this module): `gln`, `mod11_no`, `mod97_be`,
//!   `iban`, `ico_sk`, `ic_dph_sk`, `dic_sk`, `abn_au`, `se_orgnr`, `it_*`, `gr_tin`,
//!   `slack`. They accept exactly the canonical electronic form of an identifier
//!   (ASCII digits / letters, no spaces, no separators) and are what the server uses for
//!   VAT / Peppol look-ups. Where a caller wants to know *why* a value was rejected there
//!   is a `*_check` variant returning [`CheckError`].
//! * **Peppol-compatible helpers** ([`peppol`]): behave like the XSLT helper functions
//!   of the official Peppol BIS Billing 3.0 schematron (`u:gln`, `u:mod11`,
//!   `u:mod97-0208`, `u:abn`, `u:checkCF`, `u:checkPIVAseIT`, `u:checkCodiceIPA`,
//!   `u:TinVerification`, `u:checkSEOrgnr`, `u:slack`), including their treatment of
//!   odd input (non-digits, wrong length), so a rule pack that binds them as native
//!   helpers reports exactly what the reference implementation reports.
//!
//! Every function here is total: it never panics, whatever the input.

use rust_decimal::Decimal;

/// Why a strict identifier check rejected a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// The value is empty.
    #[error("value is empty")]
    Empty,
    /// The value has the wrong number of characters.
    #[error("wrong length: expected {expected} characters, got {actual}")]
    Length {
        /// Human-readable expected length, e.g. `"8"` or `"15..=34"`.
        expected: &'static str,
        /// Actual length in characters.
        actual: usize,
    },
    /// A character that is not allowed at this position (0-based character index).
    #[error("invalid character {ch:?} at position {position}")]
    InvalidChar {
        /// 0-based character index.
        position: usize,
        /// The offending character.
        ch: char,
    },
    /// The value does not start with the required prefix.
    #[error("must start with {expected:?}")]
    Prefix {
        /// The required prefix.
        expected: &'static str,
    },
    /// IBAN country code not in the registry table.
    #[error("unknown IBAN country code {0:?}")]
    UnknownCountry(String),
    /// Structural rule violated (message says which).
    #[error("invalid format: {0}")]
    Format(&'static str),
    /// All structural rules hold but the check digit(s) do not match.
    #[error("check digit mismatch")]
    Checksum,
}

// ---------------------------------------------------------------------------
// small private helpers
// ---------------------------------------------------------------------------

/// ASCII digit value of `c`, if it is `0`..`9`.
fn digit(c: char) -> Option<u32> {
    c.to_digit(10).filter(|_| c.is_ascii_digit())
}

/// All characters of `s` as ASCII digit values; `None` if any is not `0`..`9`.
fn ascii_digits(s: &str) -> Option<Vec<u32>> {
    s.chars().map(digit).collect()
}

/// Exactly `n` ASCII digits, with a reason on failure.
fn exact_digits(s: &str, n: usize, expected: &'static str) -> Result<Vec<u32>, CheckError> {
    if s.is_empty() {
        return Err(CheckError::Empty);
    }
    let mut out = Vec::with_capacity(n);
    for (position, ch) in s.chars().enumerate() {
        match digit(ch) {
            Some(d) => out.push(d),
            None => return Err(CheckError::InvalidChar { position, ch }),
        }
    }
    if out.len() != n {
        return Err(CheckError::Length {
            expected,
            actual: out.len(),
        });
    }
    Ok(out)
}

/// GS1 check digit for a body of digits: weights 3,1,3,1,… starting from the
/// rightmost body digit; check = (10 − sum mod 10) mod 10.
fn gs1_compute(body: &[u32]) -> u32 {
    let sum: u32 = body
        .iter()
        .rev()
        .enumerate()
        .map(|(i, d)| d * if i % 2 == 0 { 3 } else { 1 })
        .fold(0u32, u32::wrapping_add);
    (10 - sum % 10) % 10
}

/// Luhn checksum over all digits (rightmost digit is the check digit): true when the
/// Luhn sum is divisible by 10.
fn luhn_valid(digits: &[u32]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 1 {
                let x = d * 2;
                if x > 9 {
                    x - 9
                } else {
                    x
                }
            } else {
                d
            }
        })
        .fold(0u32, u32::wrapping_add);
    sum.is_multiple_of(10)
}

/// Remainder of the decimal number formed by `digits` modulo `m`.
fn digits_mod(digits: &[u32], m: u64) -> u64 {
    digits
        .iter()
        .fold(0u64, |acc, &d| (acc * 10 + u64::from(d)) % m)
}

// ---------------------------------------------------------------------------
// GS1 / GLN
// ---------------------------------------------------------------------------

/// GS1 check digit (any GS1 key length: GTIN-8/12/13/14, GLN, SSCC, …).
///
/// Algorithm: the last character is the check digit; the remaining digits are weighted
/// 3, 1, 3, 1, … starting from the digit immediately left of the check digit; the check
/// digit must equal `(10 − (weighted sum mod 10)) mod 10`.
///
/// The value must be non-empty and consist only of ASCII digits. A single digit has an
/// empty body (sum 0) and is therefore valid only if it is `"0"` — the same answer the
/// Peppol `u:gln` helper gives.
pub fn gs1_check_digit_valid(s: &str) -> bool {
    match ascii_digits(s) {
        Some(d) if !d.is_empty() => {
            let (body, check) = d.split_at(d.len() - 1);
            gs1_compute(body) == check[0]
        }
        _ => false,
    }
}

/// Global Location Number (ICD 0088): exactly 13 ASCII digits with a valid GS1 check
/// digit (see [`gs1_check_digit_valid`]).
pub fn gln(s: &str) -> bool {
    s.len() == 13 && gs1_check_digit_valid(s)
}

// ---------------------------------------------------------------------------
// Norway
// ---------------------------------------------------------------------------

/// Norwegian organisation number (ICD 0192, also the core of `NO…MVA` VAT numbers).
///
/// Exactly 9 ASCII digits. The first 8 are weighted 3,2,7,6,5,4,3,2; with
/// `c = 11 − (sum mod 11)`, a `c` of 11 means check digit 0 and a `c` of 10 means the
/// number is invalid (no such organisation number is issued). Like the Peppol `u:mod11`
/// helper, the all-zero number is rejected (its numeric value must be > 0).
pub fn mod11_no(s: &str) -> bool {
    let Some(d) = ascii_digits(s) else {
        return false;
    };
    if d.len() != 9 || d.iter().all(|&x| x == 0) {
        return false;
    }
    const W: [u32; 8] = [3, 2, 7, 6, 5, 4, 3, 2];
    let sum: u32 = d.iter().zip(W).map(|(a, b)| a * b).sum();
    match 11 - sum % 11 {
        11 => d[8] == 0,
        10 => false,
        c => d[8] == c,
    }
}

// ---------------------------------------------------------------------------
// Belgium
// ---------------------------------------------------------------------------

/// Belgian enterprise number (ICD 0208, KBO/BCE number, also the digits of a `BE` VAT
/// number).
///
/// Exactly 10 ASCII digits; with `n` the number formed by the first 8 digits, the last
/// two digits must equal `97 − (n mod 97)` (so they are `01`..`97`). As in the Peppol
/// `u:mod97-0208` helper the leading digit (0 or 1 in practice) is not checked.
pub fn mod97_be(s: &str) -> bool {
    let Some(d) = ascii_digits(s) else {
        return false;
    };
    if d.len() != 10 {
        return false;
    }
    let n = digits_mod(&d[..8], 97);
    let check = u64::from(d[8] * 10 + d[9]);
    97 - n == check
}

// ---------------------------------------------------------------------------
// ISO 7064 MOD 97-10 and IBAN
// ---------------------------------------------------------------------------

/// Generic ISO 7064 MOD 97-10 check (as used by IBAN, LEI, RF creditor references).
///
/// Every character is converted to a number — digits to 0..9, letters to 10..35
/// (`A`/`a` = 10 … `Z`/`z` = 35; letters are case-insensitive here) — the numbers are
/// concatenated as decimal strings and the resulting (arbitrarily long) integer must be
/// ≡ 1 (mod 97). The computation is done incrementally, so any length is fine. Empty
/// input or any character that is not an ASCII letter or digit gives `false`.
pub fn iso7064_mod97_10(s: &str) -> bool {
    if s.is_empty() {
        return false;
    }
    let mut rem: u32 = 0;
    for c in s.chars() {
        let Some(v) = c.to_digit(36).filter(|_| c.is_ascii_alphanumeric()) else {
            return false;
        };
        rem = if v >= 10 {
            (rem * 100 + v) % 97
        } else {
            (rem * 10 + v) % 97
        };
    }
    rem == 1
}

/// IBAN length per country, from the ISO 13616 IBAN registry (SWIFT), covering all
/// EU/EEA countries, CH, GB and the other registered countries.
const IBAN_LENGTHS: &[(&str, usize)] = &[
    ("AD", 24),
    ("AE", 23),
    ("AL", 28),
    ("AT", 20),
    ("AZ", 28),
    ("BA", 20),
    ("BE", 16),
    ("BG", 22),
    ("BH", 22),
    ("BI", 27),
    ("BR", 29),
    ("BY", 28),
    ("CH", 21),
    ("CR", 22),
    ("CY", 28),
    ("CZ", 24),
    ("DE", 22),
    ("DJ", 27),
    ("DK", 18),
    ("DO", 28),
    ("EE", 20),
    ("EG", 29),
    ("ES", 24),
    ("FI", 18),
    ("FK", 18),
    ("FO", 18),
    ("FR", 27),
    ("GB", 22),
    ("GE", 22),
    ("GI", 23),
    ("GL", 18),
    ("GR", 27),
    ("GT", 28),
    ("HN", 28),
    ("HR", 21),
    ("HU", 28),
    ("IE", 22),
    ("IL", 23),
    ("IQ", 23),
    ("IS", 26),
    ("IT", 27),
    ("JO", 30),
    ("KW", 30),
    ("KZ", 20),
    ("LB", 28),
    ("LC", 32),
    ("LI", 21),
    ("LT", 20),
    ("LU", 20),
    ("LV", 21),
    ("LY", 25),
    ("MC", 27),
    ("MD", 24),
    ("ME", 22),
    ("MK", 19),
    ("MN", 20),
    ("MR", 27),
    ("MT", 31),
    ("MU", 30),
    ("NI", 28),
    ("NL", 18),
    ("NO", 15),
    ("OM", 23),
    ("PK", 24),
    ("PL", 28),
    ("PS", 29),
    ("PT", 25),
    ("QA", 29),
    ("RO", 24),
    ("RS", 22),
    ("RU", 33),
    ("SA", 24),
    ("SC", 31),
    ("SD", 18),
    ("SE", 24),
    ("SI", 19),
    ("SK", 24),
    ("SM", 27),
    ("SO", 23),
    ("ST", 25),
    ("SV", 28),
    ("TL", 23),
    ("TN", 24),
    ("TR", 26),
    ("UA", 29),
    ("VA", 22),
    ("VG", 24),
    ("XK", 20),
    ("YE", 30),
];

/// Registered IBAN length for a two-letter (upper-case) country code, if known.
pub fn iban_length(country: &str) -> Option<usize> {
    IBAN_LENGTHS
        .iter()
        .find(|(c, _)| *c == country)
        .map(|&(_, n)| n)
}

/// Turn a human-written IBAN (print format, e.g. `"de89 3704 0044 0532 0130 00"`) into
/// the electronic format the strict [`iban`] check expects: removes all whitespace
/// (including no-break spaces) and upper-cases ASCII letters. Nothing else is changed,
/// so invalid characters stay and are reported by [`iban_check`].
pub fn iban_normalize(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

/// Strict IBAN check (electronic format), with the reason for a rejection.
///
/// * only `A`–`Z` and `0`–`9` (upper case, **no spaces**: use [`iban_normalize`] first
///   for print-format input);
/// * two-letter country code present in the registry table (see [`iban_length`]);
/// * two check digits;
/// * total length equal to the registered length for that country;
/// * ISO 7064 MOD 97-10: moving the first four characters to the end and converting
///   letters to 10..35, the number is ≡ 1 (mod 97).
///
/// The country-specific BBAN structure (which positions are letters/digits, national
/// check digits) is not checked.
pub fn iban_check(s: &str) -> Result<(), CheckError> {
    if s.is_empty() {
        return Err(CheckError::Empty);
    }
    let chars: Vec<char> = s.chars().collect();
    for (position, &ch) in chars.iter().enumerate() {
        if !(ch.is_ascii_uppercase() || ch.is_ascii_digit()) {
            return Err(CheckError::InvalidChar { position, ch });
        }
    }
    if chars.len() < 5 {
        return Err(CheckError::Length {
            expected: "15..=34",
            actual: chars.len(),
        });
    }
    if !(chars[0].is_ascii_uppercase() && chars[1].is_ascii_uppercase()) {
        return Err(CheckError::Format(
            "IBAN must start with a two-letter country code",
        ));
    }
    if !(chars[2].is_ascii_digit() && chars[3].is_ascii_digit()) {
        return Err(CheckError::Format(
            "IBAN check digits (characters 3-4) must be digits",
        ));
    }
    // All characters are ASCII here, so byte slicing is safe.
    let country = &s[..2];
    let Some(len) = iban_length(country) else {
        return Err(CheckError::UnknownCountry(country.to_string()));
    };
    if chars.len() != len {
        return Err(CheckError::Length {
            expected: iban_length_str(len),
            actual: chars.len(),
        });
    }
    let rearranged = format!("{}{}", &s[4..], &s[..4]);
    if iso7064_mod97_10(&rearranged) {
        Ok(())
    } else {
        Err(CheckError::Checksum)
    }
}

/// `&'static str` for the lengths in the IBAN table (for [`CheckError::Length`]).
fn iban_length_str(n: usize) -> &'static str {
    const NAMES: [&str; 35] = [
        "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16",
        "17", "18", "19", "20", "21", "22", "23", "24", "25", "26", "27", "28", "29", "30", "31",
        "32", "33", "34",
    ];
    NAMES.get(n).copied().unwrap_or("15..=34")
}

/// Strict IBAN check; see [`iban_check`] for the exact rules. Spaces are *not*
/// accepted — call [`iban_normalize`] first for print-format input.
pub fn iban(s: &str) -> bool {
    iban_check(s).is_ok()
}

// ---------------------------------------------------------------------------
// Slovakia
// ---------------------------------------------------------------------------

/// Slovak IČO (organisation identification number), with the reason for a rejection.
///
/// Exactly 8 ASCII digits. The first 7 digits are weighted 8,7,6,5,4,3,2; with
/// `r = sum mod 11` the check digit (8th) is 1 when `r = 0`, 0 when `r = 1`, otherwise
/// `11 − r`. Legacy 6-digit IČO are **not** accepted: left-pad them with `00` before
/// calling (that is how they are written in the registers today).
pub fn ico_sk_check(s: &str) -> Result<(), CheckError> {
    let d = exact_digits(s, 8, "8")?;
    let sum: u32 = d[..7]
        .iter()
        .zip([8u32, 7, 6, 5, 4, 3, 2])
        .map(|(a, b)| a * b)
        .sum();
    let check = match sum % 11 {
        0 => 1,
        1 => 0,
        r => 11 - r,
    };
    if d[7] == check {
        Ok(())
    } else {
        Err(CheckError::Checksum)
    }
}

/// Slovak IČO; see [`ico_sk_check`].
pub fn ico_sk(s: &str) -> bool {
    ico_sk_check(s).is_ok()
}

/// Slovak DIČ (tax identification number), with the reason for a rejection:
/// exactly 10 ASCII digits, the first not `0`. No check digit is verified here; the
/// divisibility-by-11 and third-digit rules are applied only to IČ DPH, see
/// [`ic_dph_sk_check`].
pub fn dic_sk_check(s: &str) -> Result<(), CheckError> {
    let d = exact_digits(s, 10, "10")?;
    if d[0] == 0 {
        return Err(CheckError::Format("first digit must not be 0"));
    }
    Ok(())
}

/// Slovak DIČ; see [`dic_sk_check`].
pub fn dic_sk(s: &str) -> bool {
    dic_sk_check(s).is_ok()
}

/// Slovak VAT identification number (IČ DPH), with the reason for a rejection.
///
/// `"SK"` (upper case) followed by exactly 10 ASCII digits, where the first digit is not
/// 0, the third digit is one of 2, 3, 4, 7, 8, 9, and the 10-digit number is divisible
/// by 11.
pub fn ic_dph_sk_check(s: &str) -> Result<(), CheckError> {
    let Some(rest) = s.strip_prefix("SK") else {
        return Err(if s.is_empty() {
            CheckError::Empty
        } else {
            CheckError::Prefix { expected: "SK" }
        });
    };
    let d = match exact_digits(rest, 10, "10") {
        Ok(d) => d,
        // report positions relative to the whole value and the whole length
        Err(CheckError::InvalidChar { position, ch }) => {
            return Err(CheckError::InvalidChar {
                position: position + 2,
                ch,
            })
        }
        Err(CheckError::Length { actual, .. }) => {
            return Err(CheckError::Length {
                expected: "12",
                actual: actual + 2,
            })
        }
        Err(CheckError::Empty) => {
            return Err(CheckError::Length {
                expected: "12",
                actual: 2,
            })
        }
        Err(e) => return Err(e),
    };
    if d[0] == 0 {
        return Err(CheckError::Format("first digit after SK must not be 0"));
    }
    if ![2, 3, 4, 7, 8, 9].contains(&d[2]) {
        return Err(CheckError::Format(
            "third digit after SK must be one of 2, 3, 4, 7, 8, 9",
        ));
    }
    if digits_mod(&d, 11) != 0 {
        return Err(CheckError::Checksum);
    }
    Ok(())
}

/// Slovak IČ DPH; see [`ic_dph_sk_check`].
pub fn ic_dph_sk(s: &str) -> bool {
    ic_dph_sk_check(s).is_ok()
}

// ---------------------------------------------------------------------------
// Australia
// ---------------------------------------------------------------------------

/// Australian Business Number (ICD 0151).
///
/// Exactly 11 ASCII digits. Subtract 1 from the first digit, weight the digits
/// 10,1,3,5,7,9,11,13,15,17,19 and require the weighted sum to be divisible by 89.
/// (A leading 0 gives −1 × 10, as in the Peppol `u:abn` helper; no issued ABN starts
/// with 0.)
pub fn abn_au(s: &str) -> bool {
    let Some(d) = ascii_digits(s) else {
        return false;
    };
    if d.len() != 11 {
        return false;
    }
    const W: [i64; 11] = [10, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19];
    let sum: i64 = d
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let v = i64::from(x) - i64::from(i == 0);
            v * W[i]
        })
        .sum();
    sum % 89 == 0
}

// ---------------------------------------------------------------------------
// Sweden
// ---------------------------------------------------------------------------

/// Swedish organisation number (ICD 0007), electronic form without the hyphen.
///
/// Exactly 10 ASCII digits whose last digit is the Luhn check digit over the first
/// nine (i.e. the Luhn sum over all ten digits is divisible by 10).
pub fn se_orgnr(s: &str) -> bool {
    match ascii_digits(s) {
        Some(d) if d.len() == 10 => luhn_valid(&d),
        _ => false,
    }
}

// ---------------------------------------------------------------------------
// Italy
// ---------------------------------------------------------------------------

/// Italian Partita IVA (VAT number without the `IT` prefix, ICD 0211 digits).
///
/// Exactly 11 ASCII digits. Digits in odd positions (1st, 3rd, …, 11th) count as is;
/// digits in even positions are doubled and 9 is subtracted when the result exceeds 9.
/// The total must be divisible by 10 (this is the Luhn check over the 11 digits).
pub fn it_partita_iva(s: &str) -> bool {
    match ascii_digits(s) {
        Some(d) if d.len() == 11 => luhn_valid(&d),
        _ => false,
    }
}

/// Value of a character in an *odd* position (1st, 3rd, …) of a codice fiscale.
fn cf_odd_value(c: char) -> Option<u32> {
    const ODD: [u32; 26] = [
        1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24,
        23,
    ];
    if let Some(d) = digit(c) {
        return ODD.get(d as usize).copied();
    }
    if c.is_ascii_uppercase() {
        return ODD.get((c as u32 - 'A' as u32) as usize).copied();
    }
    None
}

/// Value of a character in an *even* position (2nd, 4th, …) of a codice fiscale.
fn cf_even_value(c: char) -> Option<u32> {
    if let Some(d) = digit(c) {
        return Some(d);
    }
    if c.is_ascii_uppercase() {
        return Some(c as u32 - 'A' as u32);
    }
    None
}

/// A digit position of a personal codice fiscale: an ASCII digit or, for omocodia
/// (homocode) variants, one of the letters `LMNPQRSTUV` standing for 0..9.
fn cf_digit(c: char) -> Option<u32> {
    digit(c).or_else(|| "LMNPQRSTUV".find(c).map(|i| i as u32))
}

/// Italian codice fiscale (ICD 0210 / 9907), strict.
///
/// Accepted forms:
/// * **11 digits** — the codice fiscale of a legal person, which is numerically a
///   Partita IVA: validated with [`it_partita_iva`] (check digit included);
/// * **16 characters** — the codice fiscale of a natural person (ASCII letters are
///   accepted in either case and compared upper-cased):
///   positions 1–6 letters (surname, name), 7–8 year digits, 9 month letter
///   (`ABCDEHLMPRST`), 10–11 day digits (01–31, or 41–71 for women), 12 letter and
///   13–15 digits (municipality code), 16 check letter. Digit positions may carry the
///   omocodia letters `LMNPQRSTUV` (= 0..9). Check letter: characters in odd positions
///   1,3,…,15 map through the official odd table (0/A=1, 1/B=0, 2/C=5, 3/D=7, 4/E=9,
///   5/F=13, 6/G=15, 7/H=17, 8/I=19, 9/J=21, K=2, L=4, M=18, N=20, O=11, P=3, Q=6,
///   R=8, S=12, T=14, U=16, V=10, W=22, X=25, Y=24, Z=23), characters in even positions
///   map 0..9 → 0..9 and A..Z → 0..25; the check letter is `'A' + (sum mod 26)`.
///
/// Note the Peppol schematron (`u:checkCF`, see [`peppol::check_cf`]) only checks the
/// shape of the 16-character form and accepts any 11-character integer.
pub fn it_codice_fiscale(s: &str) -> bool {
    let n = s.chars().count();
    if n == 11 {
        return it_partita_iva(s);
    }
    if n != 16 {
        return false;
    }
    let c: Vec<char> = s.chars().map(|c| c.to_ascii_uppercase()).collect();
    let letter = |i: usize| c[i].is_ascii_uppercase();
    if !(0..6).all(letter) || !letter(11) || !letter(15) {
        return false;
    }
    if !"ABCDEHLMPRST".contains(c[8]) {
        return false;
    }
    for i in [6, 7, 9, 10, 12, 13, 14] {
        if cf_digit(c[i]).is_none() {
            return false;
        }
    }
    let day = match (cf_digit(c[9]), cf_digit(c[10])) {
        (Some(a), Some(b)) => a * 10 + b,
        _ => return false,
    };
    if !((1..=31).contains(&day) || (41..=71).contains(&day)) {
        return false;
    }
    let mut sum = 0u32;
    for (i, &ch) in c[..15].iter().enumerate() {
        // i is 0-based: i even ⇔ odd (1-based) position
        let v = if i % 2 == 0 {
            cf_odd_value(ch)
        } else {
            cf_even_value(ch)
        };
        match v {
            Some(v) => sum += v,
            None => return false,
        }
    }
    let expected = char::from(b'A' + (sum % 26) as u8);
    c[15] == expected
}

/// Italian IPA code (Codice Univoco Ufficio, ICD 0201): exactly 6 ASCII letters or
/// digits (either case, as in the Peppol `u:checkCodiceIPA` helper).
pub fn it_ipa(s: &str) -> bool {
    s.len() == 6 && s.chars().all(|c| c.is_ascii_alphanumeric())
}

// ---------------------------------------------------------------------------
// Greece
// ---------------------------------------------------------------------------

/// Greek tax identification number (AFM, ICD 9933), strict: exactly 9 ASCII digits;
/// with `d1..d9` the digits, `((Σ_{k=1..8} d_k · 2^(9−k)) mod 11) mod 10` must equal
/// `d9`.
pub fn gr_tin(s: &str) -> bool {
    match ascii_digits(s) {
        Some(d) if d.len() == 9 => gr_tin_digits(&d),
        _ => false,
    }
}

fn gr_tin_digits(d: &[u32]) -> bool {
    if d.len() < 9 {
        return false;
    }
    let sum: u32 = d[..8].iter().enumerate().map(|(i, &x)| x << (8 - i)).sum();
    (sum % 11) % 10 == d[8]
}

// ---------------------------------------------------------------------------
// amounts
// ---------------------------------------------------------------------------

/// Amount comparison with tolerance: `|expected − actual| <= tolerance`.
///
/// Evaluated as the Peppol `u:slack` helper does, as two comparisons
/// `expected + tolerance >= actual` and `expected − tolerance <= actual`, so it never
/// overflows: a bound that does not fit in a `Decimal` lies beyond every `Decimal` and
/// the corresponding comparison holds. A negative tolerance is never satisfied.
pub fn slack(expected: Decimal, actual: Decimal, tolerance: Decimal) -> bool {
    if tolerance.is_sign_negative() && !tolerance.is_zero() {
        return false;
    }
    let upper_ok = match expected.checked_add(tolerance) {
        Some(u) => u >= actual,
        None => true,
    };
    let lower_ok = match expected.checked_sub(tolerance) {
        Some(l) => l <= actual,
        None => true,
    };
    upper_ok && lower_ok
}

// ---------------------------------------------------------------------------
// Peppol-compatible helpers
// ---------------------------------------------------------------------------

/// Native equivalents of the XSLT helper functions declared in the Peppol BIS
/// Billing 3.0 schematron (`PEPPOL-EN16931-UBL.sch` / `-CII.sch`, namespace `utils`,
/// prefix `u`).
///
/// They reproduce the reference behaviour for *any* string, including the quirks
/// (codepoint arithmetic on non-digits, characters beyond the expected length being
/// ignored, `number()`/`castable as xs:integer` semantics). Where the XSLT version would
/// raise a dynamic error (e.g. `xs:integer('+')`) these return `false`.
/// The schematron usually guards the calls with a format test such as
/// `matches(normalize-space(), '^[0-9]{9}$')`; that test stays in the rule.
pub mod peppol {
    use rust_decimal::Decimal;
    use std::sync::OnceLock;

    /// Characters XSD whitespace-collapsing trims.
    fn is_xml_ws(c: char) -> bool {
        matches!(c, ' ' | '\t' | '\r' | '\n')
    }

    /// `$s castable as xs:integer`: after trimming XML whitespace, `[+-]?[0-9]+`.
    fn castable_as_integer(s: &str) -> bool {
        let t = s.trim_matches(is_xml_ws);
        let t = t.strip_prefix(['+', '-']).unwrap_or(t);
        !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
    }

    /// `xs:integer($s)` for values that fit in i64; `None` when not castable (a dynamic
    /// error in XSLT) or out of range.
    fn to_integer(s: &str) -> Option<i64> {
        if !castable_as_integer(s) {
            return None;
        }
        s.trim_matches(is_xml_ws).parse::<i64>().ok()
    }

    /// XPath `number($s)`: the xs:double lexical space (optional sign, digits with
    /// optional fraction, optional exponent, `INF`/`-INF`, `NaN`) after trimming XML
    /// whitespace; anything else is NaN.
    fn number(s: &str) -> f64 {
        crate::xpath::lexical::parse_double(s).unwrap_or(f64::NAN)
    }

    /// Shared body of `u:gln` and `u:mod11`: all characters but the last are turned into
    /// `codepoint − 48` and weighted from the right (`weight(i)`, i = 0 for the
    /// character just left of the last one); returns the weighted sum and the last
    /// character, or `None` for the empty string.
    fn weighted_from_right(val: &str, weight: impl Fn(usize) -> i64) -> Option<(i64, char)> {
        let chars: Vec<char> = val.chars().collect();
        let (&last, body) = chars.split_last()?;
        let sum = body
            .iter()
            .rev()
            .enumerate()
            .map(|(i, &c)| (i64::from(u32::from(c)) - 48).wrapping_mul(weight(i)))
            .fold(0i64, i64::wrapping_add);
        Some((sum, last))
    }

    /// `number()` of a single character: its digit value for `0`..`9`, else NaN.
    fn char_number(c: char) -> f64 {
        match super::digit(c) {
            Some(d) => f64::from(d),
            None => f64::NAN,
        }
    }

    /// `u:gln($val)`: GS1 check digit over a string of any length (weights 3,1,… from
    /// the right of the body). Non-digits in the body take part as `codepoint − 48`; the
    /// last character must be a digit equal to the computed check digit. `""` → false,
    /// `"0"` → true.
    pub fn gln(val: &str) -> bool {
        let Some((sum, last)) = weighted_from_right(val, |i| if i % 2 == 0 { 3 } else { 1 }) else {
            return false;
        };
        let check = (10 - sum % 10) % 10;
        check as f64 == char_number(last)
    }

    /// `u:mod11($val)`: weights 2,3,4,5,6,7,2,3,… from the right of the body,
    /// check = `(11 − sum mod 11) mod 11` must equal the last character (so a remainder
    /// giving 10 never matches), and `number($val) > 0`.
    pub fn mod11(val: &str) -> bool {
        let Some((sum, last)) = weighted_from_right(val, |i| (i % 6) as i64 + 2) else {
            return false;
        };
        let check = (11 - sum % 11) % 11;
        number(val) > 0.0 && check as f64 == char_number(last)
    }

    /// `u:mod97-0208($val)`: `number(substring($val, 9, 2)) =
    /// number(string(97 − (xs:integer(substring($val, 1, 8)) mod 97)))`. Characters past
    /// the 10th are ignored; a non-integer first part (a dynamic error in XSLT) → false.
    pub fn mod97_0208(val: &str) -> bool {
        let chars: Vec<char> = val.chars().collect();
        let first: String = chars.iter().take(8).collect();
        let check: String = chars.iter().skip(8).take(2).collect();
        let Some(n) = to_integer(&first) else {
            return false;
        };
        let calculated = 97 - n % 97;
        number(&check) == calculated as f64
    }

    /// `u:checkCodiceIPA($arg)`: exactly 6 characters, all ASCII letters or digits.
    pub fn check_codice_ipa(arg: &str) -> bool {
        super::it_ipa(arg)
    }

    /// `u:checkCF($arg)`: 16 characters → [`check_cf16`]; 11 characters → castable as
    /// `xs:integer`; otherwise false. No check character / digit is verified.
    pub fn check_cf(arg: &str) -> bool {
        match arg.chars().count() {
            16 => check_cf16(arg),
            11 => castable_as_integer(arg),
            _ => false,
        }
    }

    /// `u:checkCF16($arg)`: shape of a 16-character codice fiscale — characters 1–6 and
    /// 9 and 16 ASCII letters (either case), 7–8, 10–11 and 15 castable as `xs:integer`,
    /// 12–14 anything.
    pub fn check_cf16(arg: &str) -> bool {
        let c: Vec<char> = arg.chars().collect();
        let part = |from: usize, len: usize| -> String { c.iter().skip(from).take(len).collect() };
        let letters = |from: usize, len: usize| {
            c.iter()
                .skip(from)
                .take(len)
                .all(|ch| ch.is_ascii_alphabetic())
        };
        letters(0, 6)
            && castable_as_integer(&part(6, 2))
            && letters(8, 1)
            && castable_as_integer(&part(9, 2))
            && castable_as_integer(&part(14, 1))
            && letters(15, 1)
    }

    /// `u:checkPIVA($arg)`: 1 when `$arg` is not castable as `xs:integer`, otherwise the
    /// Partita IVA sum (odd positions as is, even positions through `0246813579`) mod
    /// 10 — 0 means valid. `None` where the XSLT would raise a dynamic error (e.g. a
    /// leading sign or space).
    pub fn check_piva(arg: &str) -> Option<i64> {
        if !castable_as_integer(arg) {
            return Some(1);
        }
        // `u:addPIVA` recurses on substring($arg, 2) while the rest is castable as an
        // integer, converting the first character with xs:integer(). For a castable
        // string that starts with a digit (a leading sign or space is a dynamic error
        // on that first conversion) this means: all leading ASCII digits take part,
        // alternating "as is" / doubled, and trailing whitespace ends the recursion.
        const DOUBLED: [i64; 10] = [0, 2, 4, 6, 8, 1, 3, 5, 7, 9];
        super::digit(arg.chars().next()?)?;
        let total: i64 = arg
            .chars()
            .map_while(super::digit)
            .enumerate()
            .map(|(i, d)| {
                let d = d as usize;
                if i % 2 == 1 {
                    DOUBLED[d]
                } else {
                    d as i64
                }
            })
            .sum();
        Some(total % 10)
    }

    /// `u:checkPIVAseIT($arg)`: if the first two characters are `IT` or `it`, the rest
    /// must be 11 characters with [`check_piva`] = 0; any other prefix → **true**.
    pub fn check_piva_se_it(arg: &str) -> bool {
        let prefix: String = arg.chars().take(2).collect();
        if prefix != "IT" && prefix != "it" {
            return true;
        }
        let code: String = arg.chars().skip(2).collect();
        code.chars().count() == 11 && check_piva(&code) == Some(0)
    }

    /// `u:abn($val)`: on the first 11 characters, `(cp1 − 49)·10 + Σ (cp_k − 48)·w_k`
    /// with w = 1,3,5,…,19 must be divisible by 89 (cp = codepoint). Fewer than 11
    /// characters → false; characters after the 11th are ignored.
    pub fn abn(val: &str) -> bool {
        let cps: Vec<i64> = val
            .chars()
            .take(11)
            .map(|c| i64::from(u32::from(c)))
            .collect();
        if cps.len() < 11 {
            return false;
        }
        const W: [i64; 11] = [10, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19];
        let sum = cps
            .iter()
            .enumerate()
            .map(|(i, &cp)| (cp - if i == 0 { 49 } else { 48 }).wrapping_mul(W[i]))
            .fold(0i64, i64::wrapping_add);
        sum % 89 == 0
    }

    /// `u:TinVerification($val)`: the first 9 characters must be digits and
    /// `((Σ_{k=1..8} d_k·2^(9−k)) mod 11) mod 10 = d9`; characters after the 9th are
    /// ignored (the schematron tests the length separately where it matters).
    pub fn tin_verification(val: &str) -> bool {
        let d: Option<Vec<u32>> = val.chars().take(9).map(super::digit).collect();
        match d {
            Some(d) if d.len() == 9 => super::gr_tin_digits(&d),
            _ => false,
        }
    }

    /// `u:checkSEOrgnr($number)`: the whole string must match `^\d+$` (Unicode decimal
    /// digits) and the first 10 characters must be ASCII digits passing Luhn (check
    /// digit = 10th); characters after the 10th are ignored.
    pub fn check_se_orgnr(number: &str) -> bool {
        static ALL_DIGITS: OnceLock<Option<regex::Regex>> = OnceLock::new();
        let all_nd = ALL_DIGITS
            .get_or_init(|| regex::Regex::new(r"^\d+$").ok())
            .as_ref()
            .map(|re| re.is_match(number))
            .unwrap_or_else(|| number.chars().all(|c| c.is_ascii_digit()));
        if number.is_empty() || !all_nd {
            return false;
        }
        let d: Option<Vec<u32>> = number.chars().take(10).map(super::digit).collect();
        match d {
            Some(d) if d.len() == 10 => super::luhn_valid(&d),
            _ => false,
        }
    }

    /// `u:slack($exp, $val, $slack)`; same as [`super::slack`].
    pub fn slack(exp: Decimal, val: Decimal, slack: Decimal) -> bool {
        super::slack(exp, val, slack)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn number_semantics() {
            assert_eq!(number("12"), 12.0);
            assert_eq!(number(" 1.5e1 "), 15.0);
            assert_eq!(number(".5"), 0.5);
            assert_eq!(number("-.5"), -0.5);
            assert_eq!(number("1."), 1.0);
            assert_eq!(number("INF"), f64::INFINITY);
            assert!(number("").is_nan());
            assert!(number(".").is_nan());
            assert!(number("1e").is_nan());
            assert!(number("inf").is_nan());
            assert!(number("0x10").is_nan());
            assert!(number("1 2").is_nan());
        }

        #[test]
        fn castable() {
            assert!(castable_as_integer("12"));
            assert!(castable_as_integer(" +1 "));
            assert!(castable_as_integer("-0"));
            assert!(!castable_as_integer("+"));
            assert!(!castable_as_integer(""));
            assert!(!castable_as_integer("1.0"));
            assert!(!castable_as_integer("١٢"));
        }

        #[test]
        fn peppol_gln() {
            assert!(gln("5790000435975"));
            assert!(!gln("5790000435976"));
            assert!(gln("73513537")); // GTIN-8
            assert!(gln("0"));
            assert!(!gln("1"));
            assert!(!gln(""));
            assert!(!gln("579000043597X"));
            // non-digits in the body take part as codepoint − 48 ('A' = 17)
            assert!(!gln("A0"));
            assert!(gln("A9")); // 17·3 = 51 → (10 − 1) mod 10 = 9
        }

        #[test]
        fn peppol_mod11() {
            assert!(mod11("974760673"));
            assert!(mod11("923609016"));
            assert!(!mod11("974760674"));
            assert!(!mod11("000000000"));
            assert!(!mod11(""));
            // any length
            assert!(mod11("0019")); // body 001: 1·2 = 2 → 9
        }

        #[test]
        fn peppol_mod97() {
            assert!(mod97_0208("0403170701"));
            assert!(mod97_0208("0417497106"));
            assert!(!mod97_0208("0403170702"));
            assert!(!mod97_0208("04031707"));
            assert!(!mod97_0208("ABCDEFGH01"));
            // extra characters ignored, like substring()
            assert!(mod97_0208("0403170701XYZ"));
            // n mod 97 = 0 → 97
            assert!(mod97_0208("0000009797"));
        }

        #[test]
        fn peppol_italy() {
            assert!(check_codice_ipa("UF12Ab"));
            assert!(!check_codice_ipa("UF12A"));
            assert!(!check_codice_ipa("UF12A_"));
            assert!(check_cf("RSSMRA85T10A562S"));
            assert!(check_cf("rssmra85t10a562x")); // check letter not verified
            assert!(!check_cf("RSSMRA8ST10A562S"));
            assert!(check_cf("12345678901"));
            assert!(check_cf("+1234567890"));
            assert!(!check_cf("1234567890A"));
            assert!(!check_cf("123"));
            assert!(check_piva_se_it("IT00743110157"));
            assert!(check_piva_se_it("it12345678903"));
            assert!(!check_piva_se_it("IT00743110158"));
            assert!(!check_piva_se_it("IT0074311015"));
            assert!(!check_piva_se_it("ITABCDEFGHIJK"));
            assert!(check_piva_se_it("DE123"));
            assert!(check_piva_se_it(""));
            // only "IT" and "it" count as Italian; anything else is accepted
            assert!(check_piva_se_it("It00743110158"));
            assert!(!check_piva_se_it("IT00743110157 "));
            assert_eq!(
                check_piva("0074311015 "),
                Some(check_piva("0074311015").unwrap_or(9))
            );
            assert_eq!(check_piva("00743110157"), Some(0));
            assert_eq!(check_piva("X"), Some(1));
            assert_eq!(check_piva("+0743110157"), None);
        }

        #[test]
        fn peppol_abn() {
            assert!(abn("51824753556"));
            assert!(abn("53004085616"));
            assert!(!abn("51824753557"));
            assert!(!abn("5182475355"));
            assert!(abn("51824753556999")); // trailing characters ignored
        }

        #[test]
        fn peppol_tin() {
            assert!(tin_verification("094259216"));
            assert!(tin_verification("997001671"));
            assert!(!tin_verification("123456789"));
            assert!(!tin_verification("09425921"));
            assert!(!tin_verification("09425921X"));
            assert!(tin_verification("094259216-extra"));
        }

        #[test]
        fn peppol_se() {
            assert!(check_se_orgnr("5560360793"));
            assert!(check_se_orgnr("2021005489"));
            assert!(!check_se_orgnr("5560360794"));
            assert!(!check_se_orgnr("556036079"));
            assert!(!check_se_orgnr("556036-0793"));
            assert!(!check_se_orgnr(""));
            assert!(check_se_orgnr("556036079312")); // only the first 10 are used
            assert!(check_se_orgnr("5560360793١")); // \d is Unicode Nd
        }

        #[test]
        fn peppol_slack() {
            assert!(slack(
                Decimal::new(100, 2),
                Decimal::new(102, 2),
                Decimal::new(2, 2)
            ));
            assert!(!slack(
                Decimal::new(100, 2),
                Decimal::new(103, 2),
                Decimal::new(2, 2)
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gs1_and_gln() {
        for ok in [
            "5790000435975",
            "4000001123452",
            "7300010000001",
            "4006381333931",
            "0000000000000",
        ] {
            assert!(gln(ok), "{ok}");
        }
        for bad in [
            "5790000435976",
            "579000043597",
            "57900004359750",
            "579000043597A",
            " 5790000435975",
            "",
            "٥790000435975",
        ] {
            assert!(!gln(bad), "{bad:?}");
        }
        assert!(gs1_check_digit_valid("73513537"));
        assert!(gs1_check_digit_valid("036000291452"));
        assert!(gs1_check_digit_valid("0"));
        assert!(!gs1_check_digit_valid("7"));
        assert!(!gs1_check_digit_valid(""));
        assert!(!gs1_check_digit_valid("7351353X"));
    }

    #[test]
    fn norway() {
        assert!(mod11_no("974760673"));
        assert!(mod11_no("923609016"));
        assert!(mod11_no("983887457"));
        assert!(!mod11_no("974760674"));
        assert!(!mod11_no("97476067"));
        assert!(!mod11_no("9747606730"));
        assert!(!mod11_no("97476067A"));
        assert!(!mod11_no("000000000"));
        assert!(!mod11_no(""));
        // body 4,0,…: sum 4·3 = 12 ≡ 1 (mod 11) → c = 10 → invalid whatever the last digit
        for last in 0..=9 {
            assert!(!mod11_no(&format!("40000000{last}")));
        }
        // body 0,0,0,0,0,1,1,2: sum 1·4 + 1·3 + 2·2 = 11 ≡ 0 → c = 11 → check digit 0
        assert!(mod11_no("000001120"));
        assert!(!mod11_no("000001121"));
    }

    #[test]
    fn belgium() {
        assert!(mod97_be("0403170701"));
        assert!(mod97_be("0417497106"));
        assert!(mod97_be("0202239951"));
        assert!(!mod97_be("0403170702"));
        assert!(!mod97_be("403170701"));
        assert!(!mod97_be("BE0403170701"));
        assert!(!mod97_be("0403.170.701"));
        assert!(mod97_be("0000009797"));
        assert!(!mod97_be("0000009700"));
    }

    #[test]
    fn mod97_10() {
        // DE89370400440532013000 rearranged (BBAN + country + check digits)
        assert!(iso7064_mod97_10("370400440532013000DE89"));
        assert!(iso7064_mod97_10("370400440532013000de89"));
        assert!(!iso7064_mod97_10("370400440532013000DE88"));
        assert!(!iso7064_mod97_10(""));
        assert!(!iso7064_mod97_10("12 3"));
        assert!(iso7064_mod97_10("1"));
        assert!(iso7064_mod97_10("98")); // 98 mod 97 = 1
                                         // LEI example (ISO 17442 uses MOD 97-10 over the whole code)
        assert!(iso7064_mod97_10("5493001KJTIIGC8Y1R12"));
    }

    #[test]
    fn ibans() {
        for ok in [
            "SK3112000000198742637541",
            "DE89370400440532013000",
            "GB82WEST12345698765432",
            "NO9386011117947",
            "BE68539007547034",
            "FR1420041010050500013M02606",
            "MT84MALT011000012345MTLCAST001S",
            "NL91ABNA0417164300",
            "CH9300762011623852957",
            "AT611904300234573201",
            "LC55HEMM000100010012001200023015",
            "RU0304452522540817810538091310419",
        ] {
            assert_eq!(iban_check(ok), Ok(()), "{ok}");
        }
        assert_eq!(iban_check(""), Err(CheckError::Empty));
        assert_eq!(
            iban_check("SK3112000000198742637542"),
            Err(CheckError::Checksum)
        );
        assert_eq!(
            iban_check("SK311200000019874263754"),
            Err(CheckError::Length {
                expected: "24",
                actual: 23
            })
        );
        assert!(matches!(
            iban_check("SK31 1200 0000 1987 4263 7541"),
            Err(CheckError::InvalidChar {
                position: 4,
                ch: ' '
            })
        ));
        assert!(matches!(
            iban_check("de89370400440532013000"),
            Err(CheckError::InvalidChar { position: 0, .. })
        ));
        assert_eq!(
            iban_check("XX89370400440532013000"),
            Err(CheckError::UnknownCountry("XX".into()))
        );
        assert!(matches!(
            iban_check("1289370400440532013000"),
            Err(CheckError::Format(_))
        ));
        assert!(matches!(
            iban_check("DEA9370400440532013000"),
            Err(CheckError::Format(_))
        ));
        assert!(matches!(iban_check("DE89"), Err(CheckError::Length { .. })));
        assert!(!iban("DÉ89370400440532013000"));
        assert!(iban(&iban_normalize(
            " sk31 1200 0000 1987 4263 7541\u{a0}"
        )));
        assert_eq!(iban_normalize("de89 3704"), "DE893704");
        // every EU/EEA country + CH, GB is in the table
        for c in [
            "AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE",
            "IT", "LV", "LT", "LU", "MT", "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE", "IS",
            "LI", "NO", "CH", "GB",
        ] {
            assert!(iban_length(c).is_some(), "{c}");
        }
        assert_eq!(iban_length("SK"), Some(24));
        assert_eq!(iban_length("sk"), None);
        for (_, n) in IBAN_LENGTHS {
            assert!((15..=34).contains(n));
            assert_eq!(iban_length_str(*n), n.to_string());
        }
    }

    #[test]
    fn slovakia() {
        for ok in ["31322832", "35763469", "00151742", "17321204", "36421928"] {
            assert!(ico_sk(ok), "{ok}");
        }
        assert_eq!(ico_sk_check("31322833"), Err(CheckError::Checksum));
        assert!(matches!(
            ico_sk_check("151742"),
            Err(CheckError::Length { actual: 6, .. })
        ));
        assert!(matches!(
            ico_sk_check("3132283A"),
            Err(CheckError::InvalidChar { position: 7, .. })
        ));
        assert_eq!(ico_sk_check(""), Err(CheckError::Empty));

        assert!(ic_dph_sk("SK2022749619"));
        assert_eq!(ic_dph_sk_check("SK2020123456"), Err(CheckError::Checksum));
        assert_eq!(
            ic_dph_sk_check("2022749619"),
            Err(CheckError::Prefix { expected: "SK" })
        );
        assert!(!ic_dph_sk("sk2022749619"));
        assert_eq!(
            ic_dph_sk_check("SK202274961"),
            Err(CheckError::Length {
                expected: "12",
                actual: 11
            })
        );
        assert_eq!(
            ic_dph_sk_check("SK"),
            Err(CheckError::Length {
                expected: "12",
                actual: 2
            })
        );
        assert!(matches!(
            ic_dph_sk_check("SK20227496X9"),
            Err(CheckError::InvalidChar { position: 10, .. })
        ));
        // 0 first digit: 0123456789 is not divisible by 11 anyway; use one that is
        // 0110000000 = 11·10000000
        assert!(matches!(
            ic_dph_sk_check("SK0110000000"),
            Err(CheckError::Format(_))
        ));
        // third digit 0/1/5/6 not allowed: 1100000000 = 11·100000000
        assert!(matches!(
            ic_dph_sk_check("SK1100000000"),
            Err(CheckError::Format(_))
        ));

        assert!(dic_sk("2022749619"));
        assert!(dic_sk("1020123456"));
        assert!(!dic_sk("0022749619"));
        assert!(!dic_sk("202274961"));
        assert!(!dic_sk("SK2022749619"));
    }

    #[test]
    fn australia() {
        assert!(abn_au("51824753556"));
        assert!(abn_au("53004085616"));
        assert!(abn_au("83914571673"));
        assert!(!abn_au("51824753557"));
        assert!(!abn_au("5182475355"));
        assert!(!abn_au("518247535560"));
        assert!(!abn_au("51 824 753 556"));
    }

    #[test]
    fn sweden() {
        for ok in ["5560360793", "5560125790", "2021005489", "2120000142"] {
            assert!(se_orgnr(ok), "{ok}");
        }
        assert!(!se_orgnr("5560360794"));
        assert!(!se_orgnr("556036-0793"));
        assert!(!se_orgnr("556036079"));
        assert!(!se_orgnr("55603607930"));
    }

    #[test]
    fn italy() {
        for ok in ["00743110157", "12345678903", "07643520567", "01114601006"] {
            assert!(it_partita_iva(ok), "{ok}");
        }
        assert!(!it_partita_iva("02345678901"));
        assert!(!it_partita_iva("0074311015"));
        assert!(!it_partita_iva("IT00743110157"));

        assert!(it_codice_fiscale("RSSMRA85T10A562S"));
        assert!(it_codice_fiscale("rssmra85t10a562s"));
        assert!(it_codice_fiscale("MRARSS80A01H501T"));
        assert!(it_codice_fiscale("BNCGNN70A41F205Y")); // woman: day 41
        assert!(!it_codice_fiscale("RSSMRA85T10A562T")); // wrong check letter
        assert!(!it_codice_fiscale("RSSMRA85F10A562S")); // F is not a month letter
        assert!(!it_codice_fiscale("RSSMRA85T35A562S")); // day 35
        assert!(!it_codice_fiscale("RSSMR185T10A562S"));
        assert!(!it_codice_fiscale("RSSMRA85T10A562"));
        assert!(it_codice_fiscale("00743110157"));
        assert!(!it_codice_fiscale("00743110158"));
        // omocodia: the last digit 2 replaced by its letter N; recompute the check
        let base = "RSSMRA85T10A56N";
        let letter = (b'A'..=b'Z')
            .map(char::from)
            .find(|l| it_codice_fiscale(&format!("{base}{l}")));
        assert!(letter.is_some());
        assert!(!it_codice_fiscale("RSSMRA85T10A56ÑS"));

        assert!(it_ipa("UFABCD"));
        assert!(it_ipa("uf12ab"));
        assert!(!it_ipa("UFABC"));
        assert!(!it_ipa("UF-ABC"));
        assert!(!it_ipa("UFABCÉ"));
    }

    #[test]
    fn greece() {
        for ok in ["094259216", "094019245", "997001671", "090000045"] {
            assert!(gr_tin(ok), "{ok}");
        }
        assert!(!gr_tin("123456789"));
        assert!(!gr_tin("09425921"));
        assert!(!gr_tin("0942592160"));
        assert!(!gr_tin("EL094259216"));
    }

    #[test]
    fn slack_tolerance() {
        let d = |m: i64, s: u32| Decimal::new(m, s);
        assert!(slack(d(10000, 2), d(10002, 2), d(2, 2)));
        assert!(slack(d(10000, 2), d(9998, 2), d(2, 2)));
        assert!(!slack(d(10000, 2), d(10003, 2), d(2, 2)));
        assert!(!slack(d(10000, 2), d(9997, 2), d(2, 2)));
        assert!(slack(d(5, 0), d(5, 0), Decimal::ZERO));
        assert!(!slack(d(5, 0), d(5, 0), d(-1, 2)));
        assert!(slack(Decimal::MAX, Decimal::MAX, d(1, 0)));
        assert!(slack(Decimal::MIN, Decimal::MIN, d(1, 0)));
        assert!(!slack(Decimal::MAX, Decimal::MIN, d(1, 0)));
        assert!(!slack(Decimal::MAX, Decimal::MIN, Decimal::MAX));
        assert!(slack(Decimal::ZERO, Decimal::MIN, Decimal::MAX));
        assert!(slack(Decimal::ZERO, Decimal::MAX, Decimal::MAX));
        assert!(slack(Decimal::MAX, Decimal::ZERO, Decimal::MAX));
    }

    #[test]
    fn error_messages() {
        assert_eq!(CheckError::Checksum.to_string(), "check digit mismatch");
        assert_eq!(
            CheckError::Length {
                expected: "8",
                actual: 6
            }
            .to_string(),
            "wrong length: expected 8 characters, got 6"
        );
    }

    #[test]
    fn never_panics_on_odd_input() {
        let samples = [
            "",
            " ",
            "\u{0}",
            "💶💶💶💶💶💶💶💶💶💶💶💶💶",
            "SK",
            "SK💶",
            "IT",
            "99999999999999999999999999999999999999",
            "-1",
            "+1",
            "١٢٣٤٥٦٧٨٩٠١٢٣",
        ];
        for s in samples {
            let _ = (
                gln(s),
                gs1_check_digit_valid(s),
                mod11_no(s),
                mod97_be(s),
                iso7064_mod97_10(s),
                iban(s),
                iban_normalize(s),
                ico_sk(s),
                ic_dph_sk(s),
                dic_sk(s),
                abn_au(s),
                se_orgnr(s),
                it_codice_fiscale(s),
                it_partita_iva(s),
                it_ipa(s),
                gr_tin(s),
            );
            let _ = (
                peppol::gln(s),
                peppol::mod11(s),
                peppol::mod97_0208(s),
                peppol::check_codice_ipa(s),
                peppol::check_cf(s),
                peppol::check_piva_se_it(s),
                peppol::abn(s),
                peppol::tin_verification(s),
                peppol::check_se_orgnr(s),
            );
        }
    }
}
