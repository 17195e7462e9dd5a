//! Lexical forms of XML Schema atomic types, as XPath 2.0 casting needs them
//! (`xs:string` → `xs:decimal` / `xs:integer` / `xs:double` / `xs:date` /
//! `xs:boolean`, and the canonical string forms back).
//!
//! All parsers first apply the XSD `whiteSpace="collapse"` facet as far as it matters
//! for these types, i.e. they trim leading and trailing `' '`, `'\t'`, `'\r'`, `'\n'`
//! (inner whitespace is always invalid for them). Digits are ASCII `0`–`9` only, as in
//! XSD. Nothing here panics on any input.

use std::cmp::Ordering;
use std::fmt;

use chrono::{Datelike, NaiveDate};
use rust_decimal::Decimal;

/// Trims the XML whitespace characters (space, tab, CR, LF) from both ends.
pub fn xml_trim(s: &str) -> &str {
    s.trim_matches([' ', '\t', '\r', '\n'])
}

/// Splits an optional leading `+`/`-`; returns (negative, rest).
fn split_sign(t: &str) -> (bool, &str) {
    if let Some(r) = t.strip_prefix('-') {
        (true, r)
    } else if let Some(r) = t.strip_prefix('+') {
        (false, r)
    } else {
        (false, t)
    }
}

fn all_ascii_digits(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit())
}

// ---------------------------------------------------------------------------
// xs:decimal
// ---------------------------------------------------------------------------

/// Largest mantissa a `Decimal` can hold (2^96 − 1).
const DECIMAL_MAX_MANTISSA: u128 = (1u128 << 96) - 1;

/// Parses the `xs:decimal` lexical form `[+-]?(\d+(\.\d*)?|\.\d+)` (after trimming XML
/// whitespace). No exponent, no `INF`/`NaN`.
///
/// `rust_decimal::Decimal` holds a 96-bit mantissa with up to 28 fractional digits.
/// A value with more digits than that is **rounded** (half to even) to the most
/// fractional digits that still fit — i.e. to 28/29 significant digits, or to 28
/// decimal places for tiny values (which may round to 0) — instead of failing. Only an
/// integer part larger than `Decimal::MAX` gives `None`. Trailing fractional zeros are
/// dropped (the value space has no precision), and `-0` parses as `0`.
pub fn parse_decimal(s: &str) -> Option<Decimal> {
    let (negative, body) = split_sign(xml_trim(s));
    let (int_part, frac_part) = match body.split_once('.') {
        Some((i, f)) => (i, f),
        None => (body, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    if !all_ascii_digits(int_part) || !all_ascii_digits(frac_part) {
        return None;
    }
    let int_digits = int_part.trim_start_matches('0').as_bytes();
    let frac_digits = frac_part.trim_end_matches('0').as_bytes();
    if int_digits.len() > 29 {
        return None;
    }
    let max_frac = frac_digits.len().min(28).min(29 - int_digits.len());
    for frac_keep in (0..=max_frac).rev() {
        let mut mantissa: u128 = 0;
        for &b in int_digits.iter().chain(&frac_digits[..frac_keep]) {
            mantissa = mantissa * 10 + u128::from(b - b'0');
        }
        if round_half_even_up(&frac_digits[frac_keep..], mantissa) {
            mantissa += 1;
        }
        if mantissa <= DECIMAL_MAX_MANTISSA {
            let lo = mantissa as u32;
            let mid = (mantissa >> 32) as u32;
            let hi = (mantissa >> 64) as u32;
            // frac_keep <= 28, so the scale is always in range.
            return Some(Decimal::from_parts(
                lo,
                mid,
                hi,
                negative && mantissa != 0,
                frac_keep as u32,
            ));
        }
    }
    None
}

/// Whether dropping the digits `rest` (ASCII, no trailing zeros) from a number whose
/// kept part is `kept` should round the kept part up, rounding half to even.
fn round_half_even_up(rest: &[u8], kept: u128) -> bool {
    match rest.first() {
        None => false,
        Some(&d) if d > b'5' => true,
        Some(&d) if d < b'5' => false,
        // exactly '5' followed by nothing (trailing zeros were stripped) is a tie
        Some(_) => rest.len() > 1 || kept % 2 == 1,
    }
}

/// Canonical `xs:decimal` string: no exponent, no trailing fractional zeros, no
/// trailing `.`, no leading zeros (except the single `0` before `.`), `-0` → `0`.
/// Examples: `1.50` → `"1.5"`, `100.00` → `"100"`, `-0.0` → `"0"`, `0.5` → `"0.5"`.
pub fn format_decimal(d: Decimal) -> String {
    if d.is_zero() {
        return "0".to_string();
    }
    d.normalize().to_string()
}

// ---------------------------------------------------------------------------
// xs:integer
// ---------------------------------------------------------------------------

/// Parses the `xs:integer` lexical form `[+-]?\d+` (after trimming XML whitespace).
/// `xs:integer` is unbounded; values outside `i64` give `None` (callers that need them
/// can fall back to [`parse_decimal`]).
pub fn parse_integer(s: &str) -> Option<i64> {
    let t = xml_trim(s);
    let (_, digits) = split_sign(t);
    if digits.is_empty() || !all_ascii_digits(digits) {
        return None;
    }
    // `i64::from_str` accepts exactly one optional sign followed by ASCII digits.
    t.parse::<i64>().ok()
}

// ---------------------------------------------------------------------------
// xs:double
// ---------------------------------------------------------------------------

/// Parses the `xs:double` lexical form (after trimming XML whitespace):
/// `[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?`, or `INF`, `+INF`, `-INF`, `NaN`
/// (case-sensitive).
///
/// Rejects spellings Rust's `f64::from_str` would accept but XSD does not (`inf`,
/// `infinity`, `nan`, `-NaN`, …) as well as `1e`, `e5`, `.`, `0x10`, and leading or
/// trailing junk. Values beyond the `f64` range become ±INF, tiny ones ±0 (IEEE
/// rounding), as XSD 1.1 specifies.
pub fn parse_double(s: &str) -> Option<f64> {
    let t = xml_trim(s);
    match t {
        "INF" | "+INF" => return Some(f64::INFINITY),
        "-INF" => return Some(f64::NEG_INFINITY),
        "NaN" => return Some(f64::NAN),
        _ => {}
    }
    let b = t.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut mantissa_digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let frac_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        mantissa_digits += i - frac_start;
    }
    if mantissa_digits == 0 {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let exp_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == exp_start {
            return None;
        }
    }
    if i != b.len() {
        return None;
    }
    // The grammar validated above is a subset of Rust's float grammar.
    t.parse::<f64>().ok()
}

/// Canonical XPath 2.0 cast of `xs:double` to `xs:string`.
///
/// * NaN → `"NaN"`, +∞ → `"INF"`, −∞ → `"-INF"`, +0 → `"0"`, −0 → `"-0"`;
/// * `1e-6 <= |f| < 1e6`: plain decimal notation with the shortest digits that
///   round-trip, no exponent, no trailing zeros or point (`1.5`, `100`,
///   `0.30000000000000004`, `0.000001`);
/// * otherwise scientific notation with the shortest round-trip mantissa, which always
///   contains a `.` and at least one digit after it, and an exponent without `+` or
///   leading zeros: `1.0E6`, `1.2345E-7`, `-3.0E20`.
pub fn format_double(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { "INF" } else { "-INF" }.to_string();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let a = f.abs();
    if (1e-6..1e6).contains(&a) {
        // Rust's Display for f64 is the shortest round-trip form without exponent.
        return format!("{f}");
    }
    // LowerExp gives the shortest round-trip mantissa, e.g. "1e6", "-1.2345e-7".
    let s = format!("{f:e}");
    let (mantissa, exponent) = s.split_once('e').unwrap_or((s.as_str(), "0"));
    if mantissa.contains('.') {
        format!("{mantissa}E{exponent}")
    } else {
        format!("{mantissa}.0E{exponent}")
    }
}

// ---------------------------------------------------------------------------
// xs:boolean
// ---------------------------------------------------------------------------

/// Parses `xs:boolean`: `true`, `false`, `1`, `0` (after trimming XML whitespace;
/// case-sensitive).
pub fn parse_boolean(s: &str) -> Option<bool> {
    match xml_trim(s) {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// xs:date
// ---------------------------------------------------------------------------

/// An `xs:date` value: a calendar date plus an optional timezone offset in minutes
/// (−840..=840, i.e. −14:00..+14:00).
///
/// Years follow XSD 1.1 / ISO 8601 numbering, like chrono: year 0 is 1 BCE and `0000`
/// is accepted. Years outside chrono's range (about ±262 000) are rejected.
///
/// Equality and ordering ([`XsDate::compare`], and the `PartialEq`/`Ord` impls, which
/// use it) follow XPath `op:date-equal` / `op:date-less-than`: each date is taken as
/// the instant at the start of its day in its timezone; a date **without** timezone
/// uses the implicit timezone, which invex fixes to **UTC**. So
/// `2020-01-01+01:00` < `2020-01-01Z` = `2020-01-01`, and `2020-01-01+10:00` =
/// `2019-12-31-14:00` (both start at 2019-12-31T14:00Z). `==` therefore compares
/// instants, not fields; compare the public fields to compare representations.
#[derive(Debug, Clone, Copy)]
pub struct XsDate {
    /// The calendar date (proleptic Gregorian).
    pub date: NaiveDate,
    /// Timezone offset from UTC in minutes, `None` if the lexical form had none.
    pub tz_minutes: Option<i16>,
}

/// Reads exactly `n` ASCII digits at `*i`, advancing it.
fn fixed_digits(b: &[u8], i: &mut usize, n: usize) -> Option<u32> {
    let end = i.checked_add(n)?;
    let slice = b.get(*i..end)?;
    if !slice.iter().all(u8::is_ascii_digit) {
        return None;
    }
    *i = end;
    Some(
        slice
            .iter()
            .fold(0u32, |acc, &d| acc * 10 + u32::from(d - b'0')),
    )
}

/// Parses a timezone suffix (`Z` or `±hh:mm`, hh ≤ 14, mm ≤ 59, `14:00` at most)
/// that must span the rest of `b` from `i`. Empty rest → `Some(None)`.
fn parse_tz(b: &[u8], mut i: usize) -> Option<Option<i16>> {
    match b.get(i) {
        None => Some(None),
        Some(b'Z') if i + 1 == b.len() => Some(Some(0)),
        Some(&sign @ (b'+' | b'-')) => {
            i += 1;
            let hh = fixed_digits(b, &mut i, 2)?;
            if b.get(i) != Some(&b':') {
                return None;
            }
            i += 1;
            let mm = fixed_digits(b, &mut i, 2)?;
            if i != b.len() || mm > 59 || hh > 14 || (hh == 14 && mm != 0) {
                return None;
            }
            let total = (hh * 60 + mm) as i16;
            Some(Some(if sign == b'-' { -total } else { total }))
        }
        _ => None,
    }
}

/// Parses the `xs:date` lexical form `-?YYYY-MM-DD` with an optional timezone `Z` or
/// `±hh:mm` (after trimming XML whitespace).
///
/// The year has at least four digits, and no leading zero when it has more than four;
/// month and day exactly two digits; the day must exist in that month (leap years
/// included). Rejects e.g. `2020-2-1`, `2020-02-30`, `2020-02-01T00:00`, `02020-01-01`,
/// `2020-01-01+15:00`.
pub fn parse_date(s: &str) -> Option<XsDate> {
    let b = xml_trim(s).as_bytes();
    let mut i = 0;
    let negative = b.first() == Some(&b'-');
    if negative {
        i += 1;
    }
    let year_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let year_digits = &b[year_start..i];
    if year_digits.len() < 4 || (year_digits.len() > 4 && year_digits[0] == b'0') {
        return None;
    }
    if year_digits.len() > 9 {
        return None; // far beyond chrono's range; avoids i32 overflow
    }
    let year_abs = year_digits
        .iter()
        .fold(0i32, |acc, &d| acc * 10 + i32::from(d - b'0'));
    let year = if negative { -year_abs } else { year_abs };
    if b.get(i) != Some(&b'-') {
        return None;
    }
    i += 1;
    let month = fixed_digits(b, &mut i, 2)?;
    if b.get(i) != Some(&b'-') {
        return None;
    }
    i += 1;
    let day = fixed_digits(b, &mut i, 2)?;
    let tz_minutes = parse_tz(b, i)?;
    let date = NaiveDate::from_ymd_opt(year, month, day)?;
    Some(XsDate { date, tz_minutes })
}

impl XsDate {
    /// Days since 0001-01-01 (day 1), for compact encodings.
    pub fn days_from_ce(&self) -> i32 {
        self.date.num_days_from_ce()
    }

    /// The inverse of [`XsDate::days_from_ce`]; `None` outside chrono's range.
    pub fn from_days_from_ce(days: i32, tz_minutes: Option<i16>) -> Option<XsDate> {
        Some(XsDate {
            date: NaiveDate::from_num_days_from_ce_opt(days)?,
            tz_minutes,
        })
    }

    /// Canonical lexical form: `YYYY-MM-DD` (year zero-padded to at least 4 digits,
    /// `-` for negative years), then `Z` for a zero offset or `±hh:mm`, nothing when
    /// there is no timezone.
    pub fn format(&self) -> String {
        let y = self.date.year();
        let mut out = if y < 0 {
            format!("-{:04}", -i64::from(y))
        } else {
            format!("{y:04}")
        };
        out.push_str(&format!("-{:02}-{:02}", self.date.month(), self.date.day()));
        match self.tz_minutes {
            None => {}
            Some(0) => out.push('Z'),
            Some(m) => {
                let sign = if m < 0 { '-' } else { '+' };
                let a = i32::from(m).abs();
                out.push_str(&format!("{sign}{:02}:{:02}", a / 60, a % 60));
            }
        }
        out
    }

    /// Start of the day as minutes since 0001-01-01T00:00Z (implicit timezone UTC).
    fn instant_minutes(&self) -> i64 {
        i64::from(self.date.num_days_from_ce()) * 1440 - i64::from(self.tz_minutes.unwrap_or(0))
    }

    /// XPath ordering of two dates (see the type documentation): compares the instants
    /// at the start of each day, treating a missing timezone as UTC.
    pub fn compare(&self, other: &XsDate) -> Ordering {
        self.instant_minutes().cmp(&other.instant_minutes())
    }
}

impl PartialEq for XsDate {
    fn eq(&self, other: &Self) -> bool {
        self.compare(other) == Ordering::Equal
    }
}

impl Eq for XsDate {}

impl PartialOrd for XsDate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for XsDate {
    fn cmp(&self, other: &Self) -> Ordering {
        self.compare(other)
    }
}

impl fmt::Display for XsDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.format())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn dec(s: &str) -> Decimal {
        Decimal::from_str(s).expect("test literal")
    }

    #[test]
    fn decimal_valid_forms() {
        assert_eq!(parse_decimal("1"), Some(dec("1")));
        assert_eq!(parse_decimal("  -1.50 \n"), Some(dec("-1.5")));
        assert_eq!(parse_decimal("+.5"), Some(dec("0.5")));
        assert_eq!(parse_decimal("5."), Some(dec("5")));
        assert_eq!(parse_decimal("007.250"), Some(dec("7.25")));
        assert_eq!(parse_decimal("0"), Some(Decimal::ZERO));
        assert_eq!(parse_decimal("\t0.000\r"), Some(Decimal::ZERO));
        let neg_zero = parse_decimal("-0.0").expect("valid");
        assert!(neg_zero.is_zero() && !neg_zero.is_sign_negative());
        assert_eq!(
            parse_decimal("79228162514264337593543950335"),
            Some(Decimal::MAX)
        );
        assert_eq!(
            parse_decimal("-79228162514264337593543950335"),
            Some(Decimal::MIN)
        );
        assert_eq!(
            parse_decimal("0.0000000000000000000000000001"),
            Some(Decimal::new(1, 28))
        );
    }

    #[test]
    fn decimal_invalid_forms() {
        for bad in [
            "", " ", ".", "+", "-", "+-1", "1e5", "1E5", "INF", "NaN", "1,5", "1.2.3", "0x10",
            "1 2", "١", "--1", "1-", "abc", "1.5a", "∞",
        ] {
            assert_eq!(parse_decimal(bad), None, "{bad:?}");
        }
        // integer part beyond Decimal::MAX
        assert_eq!(parse_decimal("79228162514264337593543950336"), None);
        assert_eq!(parse_decimal("100000000000000000000000000000"), None);
    }

    #[test]
    fn decimal_rounding() {
        // 30 significant digits → rounded to what fits (28 fractional digits here)
        assert_eq!(
            parse_decimal("0.123456789012345678901234567891"),
            Some(dec("0.1234567890123456789012345679"))
        );
        // 1/3 with many digits
        let third = parse_decimal("0.33333333333333333333333333333333333333333").expect("fits");
        assert_eq!(third, dec("0.3333333333333333333333333333"));
        // big integer part + long fraction: keep as many fractional digits as fit
        let v = parse_decimal("12345678901234567890.123456789012345").expect("fits");
        assert_eq!(v.trunc(), dec("12345678901234567890"));
        assert!(v.scale() <= 9);
        assert_eq!(v, dec("12345678901234567890.123456789"));
        // half to even
        assert_eq!(
            parse_decimal("0.00000000000000000000000000025"),
            Some(dec("0.0000000000000000000000000002"))
        );
        assert_eq!(
            parse_decimal("0.00000000000000000000000000035"),
            Some(dec("0.0000000000000000000000000004"))
        );
        assert_eq!(
            parse_decimal("0.000000000000000000000000000251"),
            Some(dec("0.0000000000000000000000000003"))
        );
        // tiny value rounds to zero
        assert_eq!(
            parse_decimal("0.00000000000000000000000000000001"),
            Some(Decimal::ZERO)
        );
        // 29-digit integer with fraction that rounds up past MAX → None
        assert_eq!(parse_decimal("79228162514264337593543950335.9"), None);
        assert_eq!(
            parse_decimal("79228162514264337593543950334.9"),
            Some(Decimal::MAX)
        );
        // very long input is fine
        let long = format!("1.{}", "0".repeat(10_000));
        assert_eq!(parse_decimal(&long), Some(dec("1")));
    }

    #[test]
    fn decimal_format() {
        assert_eq!(format_decimal(dec("1.50")), "1.5");
        assert_eq!(format_decimal(dec("100.00")), "100");
        assert_eq!(format_decimal(dec("100")), "100");
        assert_eq!(format_decimal(dec("-0.0")), "0");
        assert_eq!(format_decimal(Decimal::ZERO), "0");
        assert_eq!(format_decimal(dec("0.5")), "0.5");
        assert_eq!(format_decimal(dec("-12.340")), "-12.34");
        assert_eq!(
            format_decimal(Decimal::new(1, 28)),
            "0.0000000000000000000000000001"
        );
        assert_eq!(
            format_decimal(Decimal::MAX),
            "79228162514264337593543950335"
        );
        for s in ["1.5", "-3", "0.001", "123456.789"] {
            assert_eq!(format_decimal(parse_decimal(s).expect("valid")), s);
        }
    }

    #[test]
    fn integers() {
        assert_eq!(parse_integer("42"), Some(42));
        assert_eq!(parse_integer(" +42\n"), Some(42));
        assert_eq!(parse_integer("-0042"), Some(-42));
        assert_eq!(parse_integer("9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_integer("-9223372036854775808"), Some(i64::MIN));
        for bad in [
            "",
            "+",
            "-",
            "1.0",
            "1e3",
            "9223372036854775808",
            "1 000",
            "0x1",
            "+-1",
            "١",
            "12a",
        ] {
            assert_eq!(parse_integer(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn doubles_parse() {
        assert_eq!(parse_double("1"), Some(1.0));
        assert_eq!(parse_double(" -1.5E3 "), Some(-1500.0));
        assert_eq!(parse_double(".5e-1"), Some(0.05));
        assert_eq!(parse_double("5."), Some(5.0));
        assert_eq!(parse_double("+1e+2"), Some(100.0));
        assert_eq!(parse_double("INF"), Some(f64::INFINITY));
        assert_eq!(parse_double("+INF"), Some(f64::INFINITY));
        assert_eq!(parse_double("-INF"), Some(f64::NEG_INFINITY));
        assert!(parse_double("NaN").is_some_and(f64::is_nan));
        assert_eq!(parse_double("1e400"), Some(f64::INFINITY));
        assert_eq!(parse_double("-0"), Some(-0.0));
        assert!(parse_double("-0").is_some_and(|f| f.is_sign_negative()));
        for bad in [
            "",
            "inf",
            "Inf",
            "infinity",
            "-infinity",
            "nan",
            "-NaN",
            "+NaN",
            "1e",
            "e5",
            ".",
            ".e1",
            "0x10",
            "1.5f",
            "1 ",
            "1 e5",
            "1e5.5",
            "1d5",
            "--1",
            "١",
        ] {
            if bad == "1 " {
                assert_eq!(parse_double(bad), Some(1.0)); // trailing XML space is trimmed
                continue;
            }
            assert_eq!(parse_double(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn doubles_format() {
        assert_eq!(format_double(f64::NAN), "NaN");
        assert_eq!(format_double(f64::INFINITY), "INF");
        assert_eq!(format_double(f64::NEG_INFINITY), "-INF");
        assert_eq!(format_double(0.0), "0");
        assert_eq!(format_double(-0.0), "-0");
        assert_eq!(format_double(1.5), "1.5");
        assert_eq!(format_double(100.0), "100");
        assert_eq!(format_double(-100.0), "-100");
        assert_eq!(format_double(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(format_double(1e-6), "0.000001");
        assert_eq!(format_double(999999.0), "999999");
        assert_eq!(format_double(999999.5), "999999.5");
        assert_eq!(format_double(1e6), "1.0E6");
        assert_eq!(format_double(1.2345e-7), "1.2345E-7");
        assert_eq!(format_double(-3e20), "-3.0E20");
        assert_eq!(format_double(1.5e300), "1.5E300");
        assert_eq!(format_double(f64::MAX), "1.7976931348623157E308");
        assert_eq!(format_double(5e-324), "5.0E-324");
        assert_eq!(format_double(9.999999e-7), "9.999999E-7");
        // round trip through the parser
        for f in [1.5, 1e6, 1.2345e-7, -3e20, 0.1 + 0.2, 123456.789, 5e-324] {
            assert_eq!(parse_double(&format_double(f)), Some(f));
        }
    }

    #[test]
    fn booleans() {
        assert_eq!(parse_boolean("true"), Some(true));
        assert_eq!(parse_boolean(" 1 "), Some(true));
        assert_eq!(parse_boolean("false"), Some(false));
        assert_eq!(parse_boolean("\n0\t"), Some(false));
        for bad in ["", "TRUE", "True", "yes", "01", "t", "-0", "+1"] {
            assert_eq!(parse_boolean(bad), None, "{bad:?}");
        }
    }

    fn d(s: &str) -> XsDate {
        parse_date(s).unwrap_or_else(|| panic!("{s} should parse"))
    }

    #[test]
    fn date_parse_valid() {
        let x = d("2020-02-29");
        assert_eq!(x.date, NaiveDate::from_ymd_opt(2020, 2, 29).expect("valid"));
        assert_eq!(x.tz_minutes, None);
        assert_eq!(d("2020-01-01Z").tz_minutes, Some(0));
        assert_eq!(d("2020-01-01+01:30").tz_minutes, Some(90));
        assert_eq!(d("2020-01-01-05:00").tz_minutes, Some(-300));
        assert_eq!(d("2020-01-01-00:00").tz_minutes, Some(0));
        assert_eq!(d("2020-01-01+14:00").tz_minutes, Some(840));
        assert_eq!(d(" 2020-01-01\n").tz_minutes, None);
        assert_eq!(d("2000-02-29").date.day(), 29);
        assert_eq!(d("12020-01-01").date.year(), 12020);
        assert_eq!(d("-0044-03-15").date.year(), -44);
        assert_eq!(d("0000-01-01").date.year(), 0);
    }

    #[test]
    fn date_parse_invalid() {
        for bad in [
            "",
            "2020-2-1",
            "2020-02-30",
            "2019-02-29",
            "1900-02-29",
            "2020-02-01T00:00",
            "2020-02-01T00:00:00Z",
            "2020-13-01",
            "2020-00-01",
            "2020-01-00",
            "2020-01-32",
            "20-01-01",
            "020-01-01",
            "02020-01-01",
            "+2020-01-01",
            "2020-01-01z",
            "2020-01-01+1:00",
            "2020-01-01+01:60",
            "2020-01-01+15:00",
            "2020-01-01+14:01",
            "2020-01-01+0100",
            "2020-01-01 Z",
            "2020/01/01",
            "2020-01-01Z ",
            "99999999999-01-01",
            "2020-01-01+",
            "2020-01-0１",
        ] {
            if bad == "2020-01-01Z " {
                assert!(parse_date(bad).is_some(), "trailing XML space is trimmed");
                continue;
            }
            assert!(parse_date(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn date_format() {
        for s in [
            "2020-02-29",
            "2020-01-01Z",
            "2020-01-01+01:30",
            "2020-01-01-05:00",
            "12020-01-01",
            "-0044-03-15",
            "0001-01-01+14:00",
        ] {
            assert_eq!(d(s).format(), s);
            assert_eq!(d(s).to_string(), s);
        }
        assert_eq!(d("2020-01-01-00:00").format(), "2020-01-01Z");
        assert_eq!(d("2020-01-01+00:00").format(), "2020-01-01Z");
    }

    #[test]
    fn date_compare() {
        assert_eq!(d("2020-01-01").compare(&d("2020-01-02")), Ordering::Less);
        assert_eq!(d("2020-01-02").compare(&d("2020-01-01")), Ordering::Greater);
        assert_eq!(d("2020-01-01").compare(&d("2020-01-01Z")), Ordering::Equal);
        assert_eq!(
            d("2020-01-01Z").compare(&d("2020-01-01+00:00")),
            Ordering::Equal
        );
        // start of 2020-01-01 in +01:00 is 2019-12-31T23:00Z
        assert_eq!(
            d("2020-01-01+01:00").compare(&d("2020-01-01Z")),
            Ordering::Less
        );
        assert_eq!(
            d("2020-01-01+01:00").compare(&d("2019-12-31Z")),
            Ordering::Greater
        );
        // 2020-01-02+14:00 starts at 2020-01-01T10:00Z; 2020-01-01-12:00 at 12:00Z
        assert_eq!(
            d("2020-01-02+14:00").compare(&d("2020-01-01-12:00")),
            Ordering::Less
        );
        // both start at 2019-12-31T14:00Z
        assert_eq!(
            d("2020-01-01+10:00").compare(&d("2019-12-31-14:00")),
            Ordering::Equal
        );
        assert!(d("2020-01-01") == d("2020-01-01Z"));
        assert!(d("2020-01-01") < d("2020-01-01-01:00"));
        let mut v = [d("2021-01-01"), d("2019-06-30Z"), d("2020-03-01+05:00")];
        v.sort();
        assert_eq!(
            v.iter().map(XsDate::format).collect::<Vec<_>>(),
            ["2019-06-30Z", "2020-03-01+05:00", "2021-01-01"]
        );
        assert_eq!(d("-0001-12-31").compare(&d("0000-01-01")), Ordering::Less);
    }

    #[test]
    fn trim_helper() {
        assert_eq!(xml_trim(" \t\r\nx y\n"), "x y");
        assert_eq!(xml_trim("\u{a0}x"), "\u{a0}x");
    }
}
