//! Offline validation of EU VAT numbers.
//!
//! Checks what can be checked without asking VIES: the two-letter VIES
//! country prefix, each member state's format and its check digits. A number
//! that passes may still be unregistered; one that fails can never be valid,
//! so the caller can reject it without a network round trip.
//!
//! The per-country rules follow python-stdnum (the `stdnum.eu.vat` module and
//! the national modules it delegates to; XI uses `stdnum.gb.vat`). The
//! fixture table `tests/data/vat-numbers.csv` was generated with stdnum
//! (`tools/scripts/gen_vat_table.py`) and is asserted by the tests below.
//!
//! Deliberate differences from stdnum:
//! - Greece must use the VIES prefix EL; stdnum also accepts GR.
//! - Slovakia requires the IČ DPH form (see `slovakia`); stdnum also
//!   accepts any valid birth number.
//! - Input is cleaned the same way for every country (whitespace, dots and
//!   dashes removed); stdnum's per-country separator sets differ slightly
//!   (e.g. it keeps dots in Czech numbers but drops colons in Italian ones).
//! - The EU OSS prefixes EU and IM are not member states and are rejected.

use serde::Serialize;

/// Result of the offline check of one VAT number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalCheck {
    /// Compact form: VIES prefix followed by the national number, e.g.
    /// `SK2022749619`. Some countries pad short legacy forms (BE, EL, NL).
    pub normalized: String,
    /// The two-letter VIES prefix, when it names a supported country.
    pub country: Option<String>,
    pub outcome: Result<(), LocalFault>,
}

impl LocalCheck {
    pub fn is_valid(&self) -> bool {
        self.outcome.is_ok()
    }
}

/// Why a VAT number failed the offline check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LocalFault {
    /// Nothing left after removing spaces, dots and dashes.
    Empty,
    /// The first two characters are not a supported VIES prefix.
    UnknownCountry { prefix: String },
    /// Greece written with its ISO code GR instead of the VIES prefix EL.
    GreekPrefix,
    /// Wrong length or characters for the country.
    Format { expected: &'static str },
    /// The check digit (or check letter) does not match the number.
    CheckDigit,
    /// A national numbering rule is broken (e.g. Slovak third digit).
    Syntax { reason: &'static str },
}

impl LocalFault {
    /// A sentence for API users explaining the fault.
    pub fn reason(&self) -> String {
        match self {
            LocalFault::Empty => "The VAT number is empty.".to_string(),
            LocalFault::UnknownCountry { prefix } if prefix == "GB" => {
                "GB VAT numbers are not EU VAT numbers; only Northern Ireland \
                 traders have EU VAT numbers, with the prefix XI."
                    .to_string()
            }
            LocalFault::UnknownCountry { prefix } => format!(
                "\"{prefix}\" is not an EU VAT country prefix; a VAT number must \
                 start with the two-letter VIES country code, e.g. DE or FR."
            ),
            LocalFault::GreekPrefix => "Greek VAT numbers use the VIES prefix EL, not \
                 the ISO country code GR: write EL followed by the 9 digits."
                .to_string(),
            LocalFault::Format { expected } => {
                format!("The VAT number does not have the expected format: {expected}.")
            }
            LocalFault::CheckDigit => "The check digit does not match; the VAT number \
                 contains a typo or was never issued."
                .to_string(),
            LocalFault::Syntax { reason } => {
                format!("The VAT number breaks a national numbering rule: {reason}.")
            }
        }
    }
}

/// Check a VAT number as typed by a user, e.g. `"sk 2022 749 619"`.
pub fn check(input: &str) -> LocalCheck {
    let cleaned = normalize(input);
    if cleaned.is_empty() {
        return rejected(cleaned, LocalFault::Empty);
    }
    let prefix: String = cleaned.chars().take(2).collect();
    if prefix == "GR" {
        return rejected(cleaned, LocalFault::GreekPrefix);
    }
    let Some(country) = COUNTRIES.iter().find(|c| c.prefix == prefix) else {
        return rejected(cleaned, LocalFault::UnknownCountry { prefix });
    };
    // The prefix matched an ASCII table entry, so it is exactly two bytes.
    let body = compact_body(country.prefix, cleaned.get(2..).unwrap_or_default());
    let outcome = if body.is_ascii() {
        (country.validate)(body.as_bytes())
    } else {
        Err(Fault::Format)
    };
    LocalCheck {
        normalized: format!("{}{}", country.prefix, body),
        country: Some(country.prefix.to_string()),
        outcome: outcome.map_err(|fault| fault.into_local(country)),
    }
}

fn rejected(normalized: String, fault: LocalFault) -> LocalCheck {
    LocalCheck {
        normalized,
        country: None,
        outcome: Err(fault),
    }
}

/// Trim, drop the separators people type (spaces, dots, dashes) and
/// uppercase.
fn normalize(input: &str) -> String {
    input
        .chars()
        .filter(|c| !c.is_whitespace() && !is_separator(*c))
        .flat_map(char::to_uppercase)
        .collect()
}

fn is_separator(c: char) -> bool {
    // ASCII dot and hyphen plus the Unicode dashes that word processors
    // substitute for them.
    matches!(c, '.' | '-' | '\u{2010}'..='\u{2015}' | '\u{2212}')
}

/// Country-specific rewriting of legacy short forms, as stdnum's `compact`.
fn compact_body(prefix: &str, body: &str) -> String {
    match prefix {
        "BE" => compact_be(body),
        "EL" if body.chars().count() == 8 => format!("0{body}"),
        "NL" => compact_nl(body),
        _ => body.to_string(),
    }
}

/// Belgian numbers were 9 digits before 2005 and are sometimes written with
/// a leading "(0)".
fn compact_be(body: &str) -> String {
    let body = match body.strip_prefix("(0)") {
        Some(rest) => format!("0{rest}"),
        None => body.to_string(),
    };
    if body.chars().count() == 9 {
        format!("0{body}")
    } else {
        body
    }
}

/// Dutch numbers are often written without leading zeros before "B01".
fn compact_nl(body: &str) -> String {
    let chars: Vec<char> = body.chars().collect();
    let split = chars.len().saturating_sub(3);
    let (head, tail) = chars.split_at(split);
    let padding = 9usize.saturating_sub(head.len());
    std::iter::repeat_n('0', padding)
        .chain(head.iter().copied())
        .chain(tail.iter().copied())
        .collect()
}

/// Fault found by a country rule; the country adds the format description.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    Format,
    CheckDigit,
    Rule(&'static str),
}

impl Fault {
    fn into_local(self, country: &Country) -> LocalFault {
        match self {
            Fault::Format => LocalFault::Format {
                expected: country.expected,
            },
            Fault::CheckDigit => LocalFault::CheckDigit,
            Fault::Rule(reason) => LocalFault::Syntax { reason },
        }
    }
}

type Verdict = Result<(), Fault>;

struct Country {
    prefix: &'static str,
    expected: &'static str,
    /// Validates the national part (without prefix), ASCII only.
    validate: fn(&[u8]) -> Verdict,
}

const COUNTRIES: [Country; 28] = [
    Country {
        prefix: "AT",
        expected: "ATU followed by 8 digits",
        validate: austria,
    },
    Country {
        prefix: "BE",
        expected: "BE followed by 10 digits",
        validate: belgium,
    },
    Country {
        prefix: "BG",
        expected: "BG followed by 9 or 10 digits",
        validate: bulgaria,
    },
    Country {
        prefix: "CY",
        expected: "CY followed by 8 digits and a check letter",
        validate: cyprus,
    },
    Country {
        prefix: "CZ",
        expected: "CZ followed by 8, 9 or 10 digits",
        validate: czechia,
    },
    Country {
        prefix: "DE",
        expected: "DE followed by 9 digits, the first not 0",
        validate: germany,
    },
    Country {
        prefix: "DK",
        expected: "DK followed by 8 digits, the first not 0",
        validate: denmark,
    },
    Country {
        prefix: "EE",
        expected: "EE followed by 9 digits",
        validate: estonia,
    },
    Country {
        prefix: "EL",
        expected: "EL followed by 9 digits",
        validate: greece,
    },
    Country {
        prefix: "ES",
        expected: "ES followed by 9 characters: a letter or digit, 7 digits, and a letter or digit",
        validate: spain,
    },
    Country {
        prefix: "FI",
        expected: "FI followed by 8 digits",
        validate: finland,
    },
    Country {
        prefix: "FR",
        expected: "FR followed by 2 check characters (digits or letters except I and O) and the 9-digit SIREN",
        validate: france,
    },
    Country {
        prefix: "HR",
        expected: "HR followed by 11 digits",
        validate: croatia,
    },
    Country {
        prefix: "HU",
        expected: "HU followed by 8 digits",
        validate: hungary,
    },
    Country {
        prefix: "IE",
        expected: "IE followed by 7 digits and 1 or 2 letters (or the old form: digit, letter, 5 digits, letter)",
        validate: ireland,
    },
    Country {
        prefix: "IT",
        expected: "IT followed by 11 digits",
        validate: italy,
    },
    Country {
        prefix: "LT",
        expected: "LT followed by 9 or 12 digits",
        validate: lithuania,
    },
    Country {
        prefix: "LU",
        expected: "LU followed by 8 digits",
        validate: luxembourg,
    },
    Country {
        prefix: "LV",
        expected: "LV followed by 11 digits",
        validate: latvia,
    },
    Country {
        prefix: "MT",
        expected: "MT followed by 8 digits, the first not 0",
        validate: malta,
    },
    Country {
        prefix: "NL",
        expected: "NL followed by 9 digits, the letter B and 2 digits (not 00)",
        validate: netherlands,
    },
    Country {
        prefix: "PL",
        expected: "PL followed by 10 digits",
        validate: poland,
    },
    Country {
        prefix: "PT",
        expected: "PT followed by 9 digits, the first not 0",
        validate: portugal,
    },
    Country {
        prefix: "RO",
        expected: "RO followed by 2 to 10 digits (the first not 0) or a 13-digit personal code",
        validate: romania,
    },
    Country {
        prefix: "SE",
        expected: "SE followed by 10 digits and 01",
        validate: sweden,
    },
    Country {
        prefix: "SI",
        expected: "SI followed by 8 digits, the first not 0",
        validate: slovenia,
    },
    Country {
        prefix: "SK",
        expected: "SK followed by 10 digits",
        validate: slovakia,
    },
    Country {
        prefix: "XI",
        expected: "XI followed by 9 or 12 digits, or GD or HA and 3 digits",
        validate: northern_ireland,
    },
];

// ---------------------------------------------------------------------------
// Shared arithmetic. Rules are written against byte slices; the helpers
// below mirror Python's slicing (clamped) so that each rule can be checked
// in the same order as stdnum without risking an out-of-bounds panic.

/// `s[from..to]` clamped to the slice, like Python's `s[from:to]`.
fn part(s: &[u8], from: usize, to: usize) -> &[u8] {
    let to = to.min(s.len());
    s.get(from.min(to)..to).unwrap_or_default()
}

/// Non-empty and only ASCII digits (stdnum's `isdigits`).
fn all_digits(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(u8::is_ascii_digit)
}

fn has_nonzero(s: &[u8]) -> bool {
    s.iter().any(|&b| b != b'0')
}

fn digit(b: u8) -> u64 {
    u64::from(b.wrapping_sub(b'0'))
}

/// Value of a digit string; only called on short, all-digit slices.
fn value(s: &[u8]) -> u64 {
    s.iter().fold(0, |acc, &b| acc * 10 + digit(b))
}

fn last(s: &[u8]) -> u8 {
    s.last().copied().unwrap_or_default()
}

fn weighted_sum(s: &[u8], weights: &[u64]) -> u64 {
    s.iter().zip(weights).map(|(&b, w)| digit(b) * w).sum()
}

/// Like [`weighted_sum`] but allowing negative weights (Polish NIP).
fn signed_weighted_sum(s: &[u8], weights: &[i64]) -> i64 {
    s.iter()
        .zip(weights)
        .map(|(&b, w)| i64::from(b.wrapping_sub(b'0')) * w)
        .sum()
}

/// Sum with weights `first, first - 1, ...` (a common descending scheme).
fn descending_sum(s: &[u8], first: u64) -> u64 {
    s.iter()
        .zip((0..=first).rev())
        .map(|(&b, w)| digit(b) * w)
        .sum()
}

fn ascii_digit(n: u64) -> u8 {
    // n < 10 at every call site; the modulo keeps it a digit regardless.
    b'0' + (n % 10) as u8
}

/// Luhn checksum; a number including its check digit has checksum 0.
fn luhn_checksum(s: &[u8]) -> u64 {
    s.iter()
        .rev()
        .enumerate()
        .map(|(i, &b)| {
            let d = digit(b);
            if i.is_multiple_of(2) {
                d
            } else {
                (d * 2) / 10 + (d * 2) % 10
            }
        })
        .sum::<u64>()
        % 10
}

/// The Luhn check digit to append to `s`.
fn luhn_check_digit(s: &[u8]) -> u64 {
    let mut extended = s.to_vec();
    extended.push(b'0');
    (10 - luhn_checksum(&extended)) % 10
}

/// ISO 7064 MOD 11,10 (German USt-IdNr, Croatian OIB).
fn mod_11_10_is_valid(s: &[u8]) -> bool {
    let check = s.iter().fold(5, |check, &b| {
        let carried = if check == 0 { 10 } else { check };
        ((carried * 2) % 11 + digit(b)) % 10
    });
    check == 1
}

/// ISO 7064 MOD 97-10 over digits and letters (letters count as 10..35).
fn mod_97_10_is_valid(s: &[u8]) -> bool {
    let remainder = s.iter().fold(0u64, |r, &b| {
        if b.is_ascii_digit() {
            (r * 10 + digit(b)) % 97
        } else {
            let letter = u64::from(b.to_ascii_uppercase().wrapping_sub(b'A')) + 10;
            (r * 100 + letter) % 97
        }
    });
    remainder == 1
}

fn is_leap_year(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// Whether year-month-day exists in the Gregorian calendar.
fn is_real_date(year: i64, month: u64, day: u64) -> bool {
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => return false,
    };
    (1..=9999).contains(&year) && (1..=days_in_month).contains(&day)
}

fn require(condition: bool, fault: Fault) -> Verdict {
    if condition {
        Ok(())
    } else {
        Err(fault)
    }
}

// ---------------------------------------------------------------------------
// Member states, in VIES prefix order. Each follows the stdnum module named
// in its comment, checking in the same order so faults are classified alike.

/// Austria, UID (stdnum.at.uid): U + 7 digits + Luhn-derived check digit.
fn austria(n: &[u8]) -> Verdict {
    require(
        n.first() == Some(&b'U') && all_digits(part(n, 1, n.len())),
        Fault::Format,
    )?;
    require(n.len() == 9, Fault::Format)?;
    let check = (16 - luhn_checksum(part(n, 1, 8))) % 10;
    require(ascii_digit(check) == last(n), Fault::CheckDigit)
}

/// Belgium, BTW/TVA (stdnum.be.vat): 10 digits, mod 97 over the first 8.
fn belgium(n: &[u8]) -> Verdict {
    require(all_digits(n) && has_nonzero(n), Fault::Format)?;
    require(n.len() == 10, Fault::Format)?;
    require(
        matches!(n.first(), Some(b'0' | b'1')),
        Fault::Rule("Belgian enterprise numbers start with 0 or 1"),
    )?;
    require(
        (value(part(n, 0, 8)) + value(part(n, 8, 10))).is_multiple_of(97),
        Fault::CheckDigit,
    )
}

/// Bulgaria, ДДС (stdnum.bg.vat): 9 digits for companies, 10 digits for
/// persons (EGN), foreigners (PNF) or others.
fn bulgaria(n: &[u8]) -> Verdict {
    require(all_digits(n), Fault::Format)?;
    let body = part(n, 0, n.len() - 1);
    let valid = match n.len() {
        9 => ascii_digit(bulgarian_legal_check(body)) == last(n),
        10 => {
            bulgarian_egn_is_valid(n)
                || bulgarian_pnf_is_valid(n)
                || bulgarian_other_check(body) == Some(last(n))
        }
        _ => return Err(Fault::Format),
    };
    require(valid, Fault::CheckDigit)
}

fn bulgarian_legal_check(body: &[u8]) -> u64 {
    let check = ascending_sum(body, 1) % 11;
    // a remainder of 10 is retried with weights shifted by two
    let check = if check == 10 {
        ascending_sum(body, 3) % 11
    } else {
        check
    };
    check % 10
}

/// Sum with ascending weights `first, first + 1, ...`.
fn ascending_sum(s: &[u8], first: u64) -> u64 {
    s.iter().zip(first..).map(|(&b, w)| digit(b) * w).sum()
}

/// Personal number (ЕГН): birth date with the century folded into the month.
fn bulgarian_egn_is_valid(n: &[u8]) -> bool {
    let mut year = 1900 + value(part(n, 0, 2)) as i64;
    let mut month = value(part(n, 2, 4));
    if month > 40 {
        year += 100;
        month -= 40;
    } else if month > 20 {
        year -= 100;
        month -= 20;
    }
    let check = weighted_sum(n, &[2, 4, 8, 5, 10, 9, 7, 3, 6]) % 11 % 10;
    is_real_date(year, month, value(part(n, 4, 6))) && ascii_digit(check) == last(n)
}

/// Personal number of a foreigner (ЛНЧ).
fn bulgarian_pnf_is_valid(n: &[u8]) -> bool {
    let check = weighted_sum(n, &[21, 19, 17, 13, 11, 9, 7, 3, 1]) % 10;
    ascii_digit(check) == last(n)
}

/// Other 10-digit numbers; a check value of 10 can never match.
fn bulgarian_other_check(body: &[u8]) -> Option<u8> {
    let sum = weighted_sum(body, &[4, 3, 2, 7, 6, 5, 4, 3, 2]);
    let check = (11 - sum % 11) % 11;
    (check < 10).then(|| ascii_digit(check))
}

/// Cyprus, ΦΠΑ (stdnum.cy.vat): 8 digits and a check letter.
fn cyprus(n: &[u8]) -> Verdict {
    require(
        all_digits(part(n, 0, n.len().saturating_sub(1))),
        Fault::Format,
    )?;
    require(n.len() == 9, Fault::Format)?;
    require(
        part(n, 0, 2) != b"12",
        Fault::Rule("Cypriot VAT numbers cannot start with 12"),
    )?;
    require(
        cypriot_check_letter(part(n, 0, 8)) == last(n),
        Fault::CheckDigit,
    )
}

fn cypriot_check_letter(body: &[u8]) -> u8 {
    // digits in even positions are recoded before summing
    const EVEN: [u64; 10] = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21];
    let sum: u64 = body
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            let d = digit(b);
            if i.is_multiple_of(2) {
                EVEN.get(d as usize).copied().unwrap_or_default()
            } else {
                d
            }
        })
        .sum();
    b'A' + (sum % 26) as u8
}

/// Czechia, DIČ (stdnum.cz.dic): 8 digits for companies, 9 digits starting
/// with 6 for special cases, otherwise a birth number (rodné číslo).
fn czechia(n: &[u8]) -> Verdict {
    require(all_digits(n), Fault::Format)?;
    match n.len() {
        8 => {
            require(
                n.first() != Some(&b'9'),
                Fault::Rule("8-digit Czech VAT numbers cannot start with 9"),
            )?;
            require(
                czech_legal_check(part(n, 0, 7)) == last(n),
                Fault::CheckDigit,
            )
        }
        9 if n.first() == Some(&b'6') => require(
            czech_special_check(part(n, 1, 8)) == last(n),
            Fault::CheckDigit,
        ),
        9 | 10 => birth_number(n),
        _ => Err(Fault::Format),
    }
}

fn czech_legal_check(body: &[u8]) -> u8 {
    let check = (11 - descending_sum(body, 8) % 11) % 11;
    ascii_digit(if check == 0 { 1 } else { check })
}

fn czech_special_check(body: &[u8]) -> u8 {
    let sum = descending_sum(body, 8) % 11;
    // (8 - (10 - sum)) mod 10, kept non-negative
    ascii_digit((sum + 8) % 10)
}

/// Czech and Slovak birth number (stdnum.cz.rc): YYMMDD + serial, where
/// women add 50 to the month and overflowing serials add 20.
fn birth_number(n: &[u8]) -> Verdict {
    let mut year = 1900 + value(part(n, 0, 2)) as i64;
    let month = value(part(n, 2, 4)) % 50 % 20;
    let day = value(part(n, 4, 6));
    if n.len() == 9 {
        if year >= 1980 {
            year -= 100;
        }
        require(
            year <= 1953,
            Fault::Rule("9-digit birth numbers were only issued until 1953"),
        )?;
    } else if year < 1954 {
        year += 100;
    }
    require(
        is_real_date(year, month, day),
        Fault::Rule("the birth date in the number does not exist"),
    )?;
    if n.len() == 10 {
        let check = value(part(n, 0, 9)) % 11 % 10;
        require(ascii_digit(check) == last(n), Fault::CheckDigit)?;
    }
    Ok(())
}

/// Germany, USt-IdNr (stdnum.de.vat): 9 digits, ISO 7064 MOD 11,10.
fn germany(n: &[u8]) -> Verdict {
    require(all_digits(n) && n.first() != Some(&b'0'), Fault::Format)?;
    require(n.len() == 9, Fault::Format)?;
    require(mod_11_10_is_valid(n), Fault::CheckDigit)
}

/// Denmark, CVR (stdnum.dk.cvr): 8 digits, weighted sum divisible by 11.
fn denmark(n: &[u8]) -> Verdict {
    require(all_digits(n) && n.first() != Some(&b'0'), Fault::Format)?;
    require(n.len() == 8, Fault::Format)?;
    require(
        weighted_sum(n, &[2, 7, 6, 5, 4, 3, 2, 1]).is_multiple_of(11),
        Fault::CheckDigit,
    )
}

/// Estonia, KMKR (stdnum.ee.kmkr): 9 digits, weighted sum divisible by 10.
fn estonia(n: &[u8]) -> Verdict {
    require(all_digits(n), Fault::Format)?;
    require(n.len() == 9, Fault::Format)?;
    require(
        weighted_sum(n, &[3, 7, 1, 3, 7, 1, 3, 7, 1]).is_multiple_of(10),
        Fault::CheckDigit,
    )
}

/// Greece, ΑΦΜ (stdnum.gr.vat): 9 digits, powers-of-two weights mod 11.
fn greece(n: &[u8]) -> Verdict {
    require(all_digits(n), Fault::Format)?;
    require(n.len() == 9, Fault::Format)?;
    let doubled = part(n, 0, 8).iter().fold(0, |acc, &b| acc * 2 + digit(b));
    require(
        ascii_digit(doubled * 2 % 11 % 10) == last(n),
        Fault::CheckDigit,
    )
}

/// Spain, NIF (stdnum.es.nif): DNI for residents, NIE for foreigners,
/// K/L/M for special persons and CIF for organisations.
fn spain(n: &[u8]) -> Verdict {
    require(
        all_digits(part(n, 1, n.len().saturating_sub(1))),
        Fault::Format,
    )?;
    require(n.len() == 9, Fault::Format)?;
    let first = n.first().copied().unwrap_or_default();
    let body = part(n, 1, 8);
    match first {
        b'K' | b'L' | b'M' => require(dni_letter(value(body)) == last(n), Fault::CheckDigit),
        b'0'..=b'9' => require(
            dni_letter(value(part(n, 0, 8))) == last(n),
            Fault::CheckDigit,
        ),
        b'X' | b'Y' | b'Z' => {
            // NIE: the letter stands for a leading 0, 1 or 2
            let lead = u64::from(first - b'X') * 10_000_000;
            require(dni_letter(lead + value(body)) == last(n), Fault::CheckDigit)
        }
        _ => spanish_cif(first, body, last(n)),
    }
}

fn dni_letter(number: u64) -> u8 {
    const LETTERS: &[u8; 23] = b"TRWAGMYFPDXBNJZSQVHLCKE";
    LETTERS
        .get((number % 23) as usize)
        .copied()
        .unwrap_or_default()
}

/// CIF: organisation letter, 7 digits, then a Luhn digit or its letter
/// (stdnum accepts either form for every organisation type).
fn spanish_cif(first: u8, body: &[u8], check: u8) -> Verdict {
    require(
        b"ABCDEFGHJNPQRSUVW".contains(&first),
        Fault::Rule("the first letter is not a Spanish organisation type"),
    )?;
    let digit = luhn_check_digit(body);
    let letter = b"JABCDEFGHI"
        .get(digit as usize)
        .copied()
        .unwrap_or_default();
    require(
        check == ascii_digit(digit) || check == letter,
        Fault::CheckDigit,
    )
}

/// Finland, ALV (stdnum.fi.alv): 8 digits, weighted sum divisible by 11.
fn finland(n: &[u8]) -> Verdict {
    require(all_digits(n), Fault::Format)?;
    require(n.len() == 8, Fault::Format)?;
    require(
        weighted_sum(n, &[7, 9, 10, 5, 8, 4, 2, 1]).is_multiple_of(11),
        Fault::CheckDigit,
    )
}

const FRENCH_KEY_ALPHABET: &[u8] = b"0123456789ABCDEFGHJKLMNPQRSTUVWXYZ";

/// France, TVA (stdnum.fr.tva): 2-character key + SIREN. Monaco numbers
/// (SIREN part starting 000) have no SIREN check digit.
fn france(n: &[u8]) -> Verdict {
    let key = part(n, 0, 2);
    require(
        key.iter().all(|b| FRENCH_KEY_ALPHABET.contains(b)),
        Fault::Format,
    )?;
    require(all_digits(part(n, 2, n.len())), Fault::Format)?;
    require(n.len() == 11, Fault::Format)?;
    let siren = part(n, 2, 11);
    if part(siren, 0, 3) != b"000" {
        require(luhn_checksum(siren) == 0, Fault::CheckDigit)?;
    }
    require(french_key_matches(key, value(siren)), Fault::CheckDigit)
}

fn french_key_matches(key: &[u8], siren: u64) -> bool {
    if all_digits(key) {
        return value(key) == (siren * 100 + 12) % 97;
    }
    // newer alphanumeric keys
    let index = |b: Option<&u8>| {
        b.and_then(|b| FRENCH_KEY_ALPHABET.iter().position(|c| c == b))
            .unwrap_or_default() as u64
    };
    let (first, second) = (index(key.first()), index(key.get(1)));
    // first >= 10 or second >= 10 here, so neither subtraction underflows
    let check = if first < 10 {
        first * 24 + second - 10
    } else {
        first * 34 + second - 100
    };
    (siren + 1 + check / 11) % 11 == check % 11
}

/// Croatia, OIB (stdnum.hr.oib): 11 digits, ISO 7064 MOD 11,10.
fn croatia(n: &[u8]) -> Verdict {
    require(all_digits(n), Fault::Format)?;
    require(n.len() == 11, Fault::Format)?;
    require(mod_11_10_is_valid(n), Fault::CheckDigit)
}

/// Hungary, ANUM (stdnum.hu.anum): 8 digits, weights 9-7-3-1.
fn hungary(n: &[u8]) -> Verdict {
    require(all_digits(n), Fault::Format)?;
    require(n.len() == 8, Fault::Format)?;
    require(
        weighted_sum(n, &[9, 7, 3, 1, 9, 7, 3, 1]).is_multiple_of(10),
        Fault::CheckDigit,
    )
}

const IRISH_ALPHABET: &[u8] = b"WABCDEFGHIJKLMNOPQRSTUV";

/// Ireland (stdnum.ie.vat): 7 digits + check letter (+ optional second
/// letter), or the old form digit, letter or + or *, 5 digits, check letter.
fn ireland(n: &[u8]) -> Verdict {
    require(all_digits(part(n, 0, 1)), Fault::Format)?;
    require(all_digits(part(n, 2, 7)), Fault::Format)?;
    require(
        part(n, 7, n.len())
            .iter()
            .all(|b| IRISH_ALPHABET.contains(b)),
        Fault::Format,
    )?;
    require(matches!(n.len(), 8 | 9), Fault::Format)?;
    let check = n.get(7).copied().unwrap_or_default();
    if all_digits(part(n, 0, 7)) {
        return require(
            irish_check_letter(part(n, 0, 7), part(n, 8, 9)) == check,
            Fault::CheckDigit,
        );
    }
    let second = n.get(1).copied().unwrap_or_default();
    require(
        second.is_ascii_uppercase() || second == b'+' || second == b'*',
        Fault::Format,
    )?;
    // old form: the leading digit moves behind the five digits
    let mut digits = vec![b'0'];
    digits.extend_from_slice(part(n, 2, 7));
    digits.extend_from_slice(part(n, 0, 1));
    require(irish_check_letter(&digits, b"") == check, Fault::CheckDigit)
}

fn irish_check_letter(digits: &[u8], suffix: &[u8]) -> u8 {
    let suffix_value = suffix
        .first()
        .and_then(|b| IRISH_ALPHABET.iter().position(|c| c == b))
        .unwrap_or_default() as u64;
    let sum = descending_sum(digits, 8) + 9 * suffix_value;
    IRISH_ALPHABET
        .get((sum % 23) as usize)
        .copied()
        .unwrap_or_default()
}

/// Italy, Partita IVA (stdnum.it.iva): 7 digits, province office, Luhn.
fn italy(n: &[u8]) -> Verdict {
    require(all_digits(n) && has_nonzero(part(n, 0, 7)), Fault::Format)?;
    require(n.len() == 11, Fault::Format)?;
    let office = value(part(n, 7, 10));
    require(
        (1..=100).contains(&office) || matches!(office, 120 | 121 | 888 | 999),
        Fault::Rule("digits 8 to 10 are not an Italian tax office code"),
    )?;
    require(luhn_checksum(n) == 0, Fault::CheckDigit)
}

/// Lithuania, PVM (stdnum.lt.pvm): 9 digits (companies) or 12 digits
/// (persons), with a 1 right before the check digit.
fn lithuania(n: &[u8]) -> Verdict {
    require(all_digits(n), Fault::Format)?;
    let marker = match n.len() {
        9 => 7,
        12 => 10,
        _ => return Err(Fault::Format),
    };
    require(
        n.get(marker) == Some(&b'1'),
        Fault::Rule("the digit before the check digit must be 1"),
    )?;
    require(
        lithuanian_check(part(n, 0, n.len() - 1)) == last(n),
        Fault::CheckDigit,
    )
}

fn lithuanian_check(body: &[u8]) -> u8 {
    let sum_with = |shift: u64| -> u64 {
        body.iter()
            .zip(shift..)
            .map(|(&b, i)| digit(b) * (1 + i % 9))
            .sum()
    };
    let check = sum_with(0) % 11;
    // a remainder of 10 is retried with weights shifted by two
    let check = if check == 10 { sum_with(2) } else { check };
    ascii_digit(check % 11 % 10)
}

/// Luxembourg, TVA (stdnum.lu.tva): 6 digits + (those 6 mod 89).
fn luxembourg(n: &[u8]) -> Verdict {
    require(all_digits(n), Fault::Format)?;
    require(n.len() == 8, Fault::Format)?;
    require(
        value(part(n, 0, 6)) % 89 == value(part(n, 6, 8)),
        Fault::CheckDigit,
    )
}

/// Latvia, PVN (stdnum.lv.pvn): 11 digits; companies start above 3,
/// persons with a birth date DDMMYY or with 32.
fn latvia(n: &[u8]) -> Verdict {
    require(all_digits(n), Fault::Format)?;
    require(n.len() == 11, Fault::Format)?;
    if n.first().is_some_and(|&b| b > b'3') {
        let sum = weighted_sum(n, &[9, 1, 4, 8, 3, 10, 2, 5, 7, 6, 1]);
        return require(sum % 11 == 3, Fault::CheckDigit);
    }
    if !n.starts_with(b"32") {
        let year = 1800 + 100 * value(part(n, 6, 7)) + value(part(n, 4, 6));
        require(
            is_real_date(year as i64, value(part(n, 2, 4)), value(part(n, 0, 2))),
            Fault::Rule("the birth date in the number does not exist"),
        )?;
    }
    let sum = 1 + weighted_sum(n, &[10, 5, 8, 4, 2, 1, 6, 3, 7, 9]);
    require(ascii_digit(sum % 11 % 10) == last(n), Fault::CheckDigit)
}

/// Malta (stdnum.mt.vat): 8 digits, weighted sum divisible by 37.
fn malta(n: &[u8]) -> Verdict {
    require(all_digits(n) && n.first() != Some(&b'0'), Fault::Format)?;
    require(n.len() == 8, Fault::Format)?;
    require(
        weighted_sum(n, &[3, 4, 6, 7, 8, 9, 10, 1]).is_multiple_of(37),
        Fault::CheckDigit,
    )
}

/// Netherlands, btw-id (stdnum.nl.btw): 9 digits, B, 2 digits. Valid if the
/// 9 digits are a BSN/RSIN (eleven test) or, for sole proprietors since
/// 2020, if the whole number passes ISO 7064 MOD 97-10.
fn netherlands(n: &[u8]) -> Verdict {
    let number = part(n, 0, 9);
    require(all_digits(number) && has_nonzero(number), Fault::Format)?;
    let suffix = part(n, 10, n.len());
    require(all_digits(suffix) && has_nonzero(suffix), Fault::Format)?;
    require(n.len() == 12, Fault::Format)?;
    require(n.get(9) == Some(&b'B'), Fault::Format)?;
    let mut whole = b"NL".to_vec();
    whole.extend_from_slice(n);
    require(
        eleven_test(number) || mod_97_10_is_valid(&whole),
        Fault::CheckDigit,
    )
}

/// Dutch BSN/RSIN "elfproef": the last digit counts with weight -1.
fn eleven_test(number: &[u8]) -> bool {
    let sum = descending_sum(part(number, 0, 8), 9) as i64;
    (sum - digit(last(number)) as i64).rem_euclid(11) == 0
}

/// Poland, NIP (stdnum.pl.nip): 10 digits, weighted sum divisible by 11.
fn poland(n: &[u8]) -> Verdict {
    require(all_digits(n), Fault::Format)?;
    require(n.len() == 10, Fault::Format)?;
    let sum = signed_weighted_sum(n, &[6, 5, 7, 2, 3, 4, 5, 6, 7, -1]);
    require(sum.rem_euclid(11) == 0, Fault::CheckDigit)
}

/// Portugal, NIF (stdnum.pt.nif): 9 digits, descending weights mod 11.
fn portugal(n: &[u8]) -> Verdict {
    require(all_digits(n) && n.first() != Some(&b'0'), Fault::Format)?;
    require(n.len() == 9, Fault::Format)?;
    let sum = descending_sum(part(n, 0, 8), 9);
    let check = (11 - sum % 11) % 11 % 10;
    require(ascii_digit(check) == last(n), Fault::CheckDigit)
}

/// Romania, CIF (stdnum.ro.cf): a company code (CUI, 2 to 10 digits) or a
/// personal code (CNP, 13 digits).
fn romania(n: &[u8]) -> Verdict {
    match n.len() {
        13 => romanian_cnp(n),
        2..=10 => romanian_cui(n),
        _ => Err(Fault::Format),
    }
}

fn romanian_cui(n: &[u8]) -> Verdict {
    require(all_digits(n) && n.first() != Some(&b'0'), Fault::Format)?;
    // weights align to the right: the body is zero-padded to 9 digits
    let body = part(n, 0, n.len() - 1);
    let weights = [7, 5, 3, 2, 1, 7, 5, 3, 2];
    let skip = weights.len().saturating_sub(body.len());
    let sum = weighted_sum(body, weights.get(skip..).unwrap_or_default());
    require(
        ascii_digit(10 * sum % 11 % 10) == last(n),
        Fault::CheckDigit,
    )
}

/// Counties (județe) allowed in digits 8-9 of a CNP.
const ROMANIAN_COUNTIES: &[u64] = &[
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,
    27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 51, 52,
    70, 80, 81, 82, 83,
];

fn romanian_cnp(n: &[u8]) -> Verdict {
    require(all_digits(n), Fault::Format)?;
    require(
        n.first() != Some(&b'0'),
        Fault::Rule("a Romanian personal code cannot start with 0"),
    )?;
    let century = match n.first() {
        Some(b'3' | b'4') => 1800,
        Some(b'5' | b'6') => 2000,
        _ => 1900,
    };
    let year = century + value(part(n, 1, 3)) as i64;
    require(
        is_real_date(year, value(part(n, 3, 5)), value(part(n, 5, 7))),
        Fault::Rule("the birth date in the personal code does not exist"),
    )?;
    require(
        ROMANIAN_COUNTIES.contains(&value(part(n, 7, 9))),
        Fault::Rule("digits 8 and 9 are not a Romanian county code"),
    )?;
    let sum = weighted_sum(n, &[2, 7, 9, 1, 4, 6, 3, 5, 8, 2, 7, 9]) % 11;
    let check = if sum == 10 { 1 } else { sum };
    require(ascii_digit(check) == last(n), Fault::CheckDigit)
}

/// Sweden, momsregistreringsnummer (stdnum.se.vat): organisation number
/// (10 digits, Luhn) followed by 01.
fn sweden(n: &[u8]) -> Verdict {
    require(all_digits(n) && n.ends_with(b"01"), Fault::Format)?;
    let organisation = part(n, 0, n.len() - 2);
    require(all_digits(organisation), Fault::Format)?;
    require(organisation.len() == 10, Fault::Format)?;
    require(luhn_checksum(organisation) == 0, Fault::CheckDigit)
}

/// Slovenia, ID za DDV (stdnum.si.ddv): 8 digits, descending weights mod 11.
fn slovenia(n: &[u8]) -> Verdict {
    require(all_digits(n) && n.first() != Some(&b'0'), Fault::Format)?;
    require(n.len() == 8, Fault::Format)?;
    let check = 11 - descending_sum(part(n, 0, 7), 8) % 11;
    // 10 becomes 0; 11 cannot be written as one digit, so never matches
    let check = if check == 10 { 0 } else { check };
    require(
        check < 10 && ascii_digit(check) == last(n),
        Fault::CheckDigit,
    )
}

/// Slovakia, IČ DPH (stdnum.sk.dph): 10 digits, first not 0, third digit
/// in {2, 3, 4, 7, 8, 9}, the whole number divisible by 11.
///
/// Deliberately stricter than stdnum, which also accepts any valid birth
/// number (rodné číslo); the Slovak financial administration issues IČ DPH
/// only in the form above.
fn slovakia(n: &[u8]) -> Verdict {
    require(all_digits(n), Fault::Format)?;
    require(n.len() == 10, Fault::Format)?;
    require(
        n.first() != Some(&b'0'),
        Fault::Rule("a Slovak IČ DPH cannot start with 0"),
    )?;
    require(
        matches!(n.get(2), Some(b'2' | b'3' | b'4' | b'7' | b'8' | b'9')),
        Fault::Rule("the third digit of a Slovak IČ DPH must be 2, 3, 4, 7, 8 or 9"),
    )?;
    require(value(n).is_multiple_of(11), Fault::CheckDigit)
}

/// Northern Ireland (stdnum.gb.vat): UK VAT number formats — standard
/// 9 digits, branch traders 12 digits, government departments GD000-GD499,
/// health authorities HA500-HA999.
fn northern_ireland(n: &[u8]) -> Verdict {
    match n.len() {
        5 => uk_authority(part(n, 0, 2), part(n, 2, 5)),
        11 if matches!(part(n, 0, 6), b"GD8888" | b"HA8888") => {
            require(all_digits(part(n, 6, 11)), Fault::Format)?;
            uk_authority(part(n, 0, 2), part(n, 6, 9))?;
            require(
                value(part(n, 6, 9)) % 97 == value(part(n, 9, 11)),
                Fault::CheckDigit,
            )
        }
        9 | 12 => {
            require(all_digits(n), Fault::Format)?;
            uk_standard_check(part(n, 0, 9))
        }
        _ => Err(Fault::Format),
    }
}

/// Government departments are numbered below 500, health authorities from 500.
fn uk_authority(kind: &[u8], number: &[u8]) -> Verdict {
    require(all_digits(number), Fault::Format)?;
    let number = value(number);
    require(
        (kind == b"GD" && number < 500) || (kind == b"HA" && number >= 500),
        Fault::Rule("GD numbers must be below 500 and HA numbers 500 or above"),
    )
}

fn uk_standard_check(number: &[u8]) -> Verdict {
    let sum = weighted_sum(number, &[8, 7, 6, 5, 4, 3, 2, 10, 1]) % 97;
    // numbers from 100 on may also use the newer "mod 9755" scheme
    let accepted = if value(part(number, 0, 3)) >= 100 {
        matches!(sum, 0 | 42 | 55)
    } else {
        sum == 0
    };
    require(accepted, Fault::CheckDigit)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = include_str!("../../../tests/data/vat-numbers.csv");

    struct Row<'a> {
        vat: &'a str,
        valid: bool,
        reason: &'a str,
    }

    fn rows() -> Vec<Row<'static>> {
        TABLE
            .lines()
            .skip(1)
            .filter(|line| !line.is_empty())
            .map(|line| {
                let fields: Vec<&str> = line.split(',').collect();
                assert_eq!(fields.len(), 3, "malformed row {line:?}");
                Row {
                    vat: fields[0],
                    valid: match fields[1] {
                        "true" => true,
                        "false" => false,
                        other => panic!("bad valid column {other:?} in {line:?}"),
                    },
                    reason: fields[2],
                }
            })
            .collect()
    }

    #[test]
    fn table_covers_every_country() {
        let rows = rows();
        for country in &COUNTRIES {
            let of_country = |valid: bool| {
                rows.iter()
                    .filter(|r| r.vat.starts_with(country.prefix) && r.valid == valid)
                    .count()
            };
            assert!(of_country(true) >= 4, "{} valid rows", country.prefix);
            assert!(of_country(false) >= 4, "{} invalid rows", country.prefix);
        }
    }

    #[test]
    fn table_verdicts_match_stdnum() {
        let mut failures = Vec::new();
        for row in rows() {
            let result = check(row.vat);
            if result.is_valid() != row.valid {
                failures.push(format!(
                    "{}: expected valid={} ({}), got {:?}",
                    row.vat, row.valid, row.reason, result.outcome
                ));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn table_faults_match_reasons() {
        for row in rows().iter().filter(|r| !r.valid) {
            let result = check(row.vat);
            assert_eq!(result.country.as_deref(), row.vat.get(..2), "{}", row.vat);
            match (row.reason, &result.outcome) {
                ("check digit", Err(LocalFault::CheckDigit)) => {}
                ("length" | "characters", Err(LocalFault::Format { .. })) => {}
                ("check digit" | "length" | "characters", other) => {
                    panic!("{} ({}): got {other:?}", row.vat, row.reason)
                }
                (_, outcome) => assert!(outcome.is_err(), "{}", row.vat),
            }
        }
    }

    #[test]
    fn table_valid_numbers_are_already_normalized() {
        for row in rows().iter().filter(|r| r.valid) {
            let result = check(row.vat);
            assert_eq!(result.normalized, row.vat);
            assert_eq!(result.country.as_deref(), row.vat.get(..2));
        }
    }

    #[test]
    fn normalizes_separators_case_and_whitespace() {
        let result = check("  sk 2022.749-619\t");
        assert_eq!(result.normalized, "SK2022749619");
        assert_eq!(result.country.as_deref(), Some("SK"));
        assert_eq!(result.outcome, Ok(()));
        assert!(check("de\u{a0}136\u{2013}695\u{2013}976").is_valid());
    }

    #[test]
    fn slovak_rules() {
        assert!(check("SK2022749619").is_valid());
        assert_eq!(check("SK2020123456").outcome, Err(LocalFault::CheckDigit));
        assert!(matches!(
            check("SK2052749619").outcome,
            Err(LocalFault::Syntax { .. })
        ));
        assert!(matches!(
            check("SK0222749619").outcome,
            Err(LocalFault::Syntax { .. })
        ));
        // A valid birth number that stdnum accepts, but IČ DPH never has a
        // third digit of 0.
        assert!(matches!(
            check("SK7103192745").outcome,
            Err(LocalFault::Syntax { .. })
        ));
    }

    #[test]
    fn greece_uses_el_not_gr() {
        assert!(check("EL094259216").is_valid());
        // legacy 8-digit form gets its leading zero back
        assert_eq!(check("el 94259216").normalized, "EL094259216");
        let gr = check("GR094259216");
        assert_eq!(gr.outcome, Err(LocalFault::GreekPrefix));
        assert_eq!(gr.country, None);
        assert!(gr.outcome.unwrap_err().reason().contains("EL"));
    }

    #[test]
    fn northern_ireland_uses_uk_rules() {
        assert!(check("XI 980 7806 84").is_valid());
        assert!(check("XIGD001").is_valid());
        assert_eq!(check("XI980780685").outcome, Err(LocalFault::CheckDigit));
        let gb = check("GB980780684").outcome.unwrap_err();
        assert_eq!(
            gb,
            LocalFault::UnknownCountry {
                prefix: "GB".into()
            }
        );
        assert!(gb.reason().contains("XI"));
    }

    #[test]
    fn empty_and_unknown_inputs() {
        assert_eq!(check("").outcome, Err(LocalFault::Empty));
        assert_eq!(check(" .- ").outcome, Err(LocalFault::Empty));
        assert_eq!(
            check("2022749619").outcome,
            Err(LocalFault::UnknownCountry {
                prefix: "20".into()
            })
        );
        assert_eq!(
            check("X").outcome,
            Err(LocalFault::UnknownCountry { prefix: "X".into() })
        );
        assert!(matches!(
            check("SK").outcome,
            Err(LocalFault::Format { .. })
        ));
    }

    #[test]
    fn legacy_short_forms_are_padded() {
        assert_eq!(check("BE 428759497").normalized, "BE0428759497");
        assert_eq!(check("BE(0)428759497").normalized, "BE0428759497");
        assert_eq!(check("NL4495445B01").normalized, "NL004495445B01");
        assert!(check("NL4495445B01").is_valid());
    }

    #[test]
    fn non_ascii_input_is_a_format_fault() {
        let result = check("DE١٣٦٦٩٥٩٧٦");
        assert!(matches!(result.outcome, Err(LocalFault::Format { .. })));
        assert!(matches!(
            check("FRÉ0123456789").outcome,
            Err(LocalFault::Format { .. })
        ));
    }

    #[test]
    fn every_fault_has_a_sentence() {
        let faults = [
            LocalFault::Empty,
            LocalFault::UnknownCountry {
                prefix: "ZZ".into(),
            },
            LocalFault::GreekPrefix,
            LocalFault::Format {
                expected: "SK followed by 10 digits",
            },
            LocalFault::CheckDigit,
            LocalFault::Syntax { reason: "a rule" },
        ];
        for fault in faults {
            let reason = fault.reason();
            assert!(reason.ends_with('.'), "{reason}");
            assert!(reason.starts_with(|c: char| c.is_uppercase() || c == '"'));
        }
        assert!(LocalFault::Format {
            expected: "SK followed by 10 digits"
        }
        .reason()
        .contains("SK followed by 10 digits"));
    }
}
