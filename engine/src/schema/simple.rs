//! The XSD 1.0 built-in simple types UBL 2.1 uses, as lexical checks on a value.
//!
//! UBL 2.1's Invoice and CreditNote schemas define no simple types of their own (no facets,
//! no lists or unions): every value is one of these built-ins, through the CCTS and
//! unqualified data types. Each check is one linear pass over the value.

/// A built-in simple type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Builtin {
    String,
    NormalizedString,
    Token,
    Decimal,
    Integer,
    Boolean,
    Date,
    Time,
    DateTime,
    Base64Binary,
    AnyUri,
    Language,
}

impl Builtin {
    /// The built-in named `local` in the XML Schema namespace (None: not supported).
    pub(crate) fn by_name(local: &str) -> Option<Builtin> {
        Some(match local {
            "string" => Builtin::String,
            "normalizedString" => Builtin::NormalizedString,
            "token" => Builtin::Token,
            "decimal" => Builtin::Decimal,
            "integer" => Builtin::Integer,
            "boolean" => Builtin::Boolean,
            "date" => Builtin::Date,
            "time" => Builtin::Time,
            "dateTime" => Builtin::DateTime,
            "base64Binary" => Builtin::Base64Binary,
            "anyURI" => Builtin::AnyUri,
            "language" => Builtin::Language,
            _ => return None,
        })
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Builtin::String => "xs:string",
            Builtin::NormalizedString => "xs:normalizedString",
            Builtin::Token => "xs:token",
            Builtin::Decimal => "xs:decimal",
            Builtin::Integer => "xs:integer",
            Builtin::Boolean => "xs:boolean",
            Builtin::Date => "xs:date",
            Builtin::Time => "xs:time",
            Builtin::DateTime => "xs:dateTime",
            Builtin::Base64Binary => "xs:base64Binary",
            Builtin::AnyUri => "xs:anyURI",
            Builtin::Language => "xs:language",
        }
    }

    /// Whether `value` (as written, before white-space processing) is in the lexical space.
    pub(crate) fn accepts(self, value: &str) -> bool {
        match self {
            // Any string; the string-derived types only normalise white space.
            Builtin::String | Builtin::NormalizedString | Builtin::Token | Builtin::AnyUri => true,
            Builtin::Decimal => is_decimal(collapse(value)),
            Builtin::Integer => is_integer(collapse(value)),
            Builtin::Boolean => matches!(collapse(value), "true" | "false" | "1" | "0"),
            Builtin::Date => is_date(collapse(value)),
            Builtin::Time => is_time(collapse(value)),
            Builtin::DateTime => is_date_time(collapse(value)),
            Builtin::Base64Binary => is_base64(value),
            Builtin::Language => is_language(collapse(value)),
        }
    }
}

fn is_xml_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// The value with leading and trailing white space removed. For the types above that
/// collapse, inner white space makes the value invalid anyway, so trimming is enough.
fn collapse(value: &str) -> &str {
    value.trim_matches(is_xml_space)
}

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn unsigned(s: &str) -> &str {
    s.strip_prefix(['+', '-']).unwrap_or(s)
}

fn is_integer(s: &str) -> bool {
    digits(unsigned(s))
}

fn is_decimal(s: &str) -> bool {
    let s = unsigned(s);
    match s.split_once('.') {
        None => digits(s),
        Some((a, b)) => {
            (a.is_empty() || digits(a))
                && (b.is_empty() || digits(b))
                && !(a.is_empty() && b.is_empty())
        }
    }
}

fn two(s: &str) -> Option<u32> {
    if s.len() == 2 && digits(s) {
        s.parse().ok()
    } else {
        None
    }
}

/// `Z`, `+hh:mm`, `-hh:mm` (hh ≤ 14, 14 only with 00 minutes) or nothing.
fn is_timezone(tz: &str) -> bool {
    if tz.is_empty() || tz == "Z" {
        return true;
    }
    let Some(rest) = tz.strip_prefix(['+', '-']) else {
        return false;
    };
    let Some((h, m)) = rest.split_once(':') else {
        return false;
    };
    match (two(h), two(m)) {
        (Some(h), Some(m)) => m <= 59 && (h < 14 || (h == 14 && m == 0)),
        _ => false,
    }
}

/// Where a time zone starts in the tail of a date or time (`Z`, `+`, `-`), if any.
fn split_timezone(s: &str) -> (&str, &str) {
    match s.find(['Z', '+', '-']) {
        Some(i) => s.split_at(i),
        None => (s, ""),
    }
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 => {
            // Proleptic Gregorian calendar; XSD 1.0 has no year 0, so year -1 is 1 BCE.
            let y = if year < 0 { year + 1 } else { year };
            if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 {
                29
            } else {
                28
            }
        }
        _ => 31,
    }
}

/// `-?YYYY-MM-DD` without a time zone: at least four year digits, no leading zero
/// beyond four, no year 0000.
fn is_date_part(s: &str) -> bool {
    let (negative, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let mut parts = s.splitn(3, '-');
    let (Some(y), Some(m), Some(d)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    if y.len() < 4 || !digits(y) || (y.len() > 4 && y.starts_with('0')) {
        return false;
    }
    let Ok(year) = y.parse::<i64>() else {
        return false;
    };
    if year == 0 {
        return false;
    }
    let year = if negative { -year } else { year };
    match (two(m), two(d)) {
        (Some(m), Some(d)) => (1..=12).contains(&m) && d >= 1 && d <= days_in_month(year, m),
        _ => false,
    }
}

fn is_date(s: &str) -> bool {
    // The date's own '-' signs come before the day; a zone starts after the 10th char
    // of the unsigned date, so split the zone off after the day.
    let body_start = usize::from(s.starts_with('-'));
    let Some(rest) = s.get(body_start..) else {
        return false;
    };
    // Year digits run to the first '-', then "-MM-DD" (6 bytes).
    let Some(year_end) = rest.find('-') else {
        return false;
    };
    let date_end = body_start + year_end + 6;
    let (Some(date), Some(tz)) = (s.get(..date_end), s.get(date_end..)) else {
        return false;
    };
    is_date_part(date) && is_timezone(tz)
}

/// `hh:mm:ss(.s+)?`, hh 00–23 (or 24:00:00 exactly).
fn is_time_part(s: &str) -> bool {
    let (main, frac) = match s.split_once('.') {
        Some((m, f)) => (m, Some(f)),
        None => (s, None),
    };
    if let Some(f) = frac {
        if !digits(f) {
            return false;
        }
    }
    let mut parts = main.splitn(3, ':');
    let (Some(h), Some(m), Some(sec)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    match (two(h), two(m), two(sec)) {
        (Some(24), Some(0), Some(0)) => frac.is_none_or(|f| f.bytes().all(|b| b == b'0')),
        (Some(h), Some(m), Some(sec)) => h <= 23 && m <= 59 && sec <= 59,
        _ => false,
    }
}

fn is_time(s: &str) -> bool {
    let (t, tz) = split_timezone(s);
    is_time_part(t) && is_timezone(tz)
}

fn is_date_time(s: &str) -> bool {
    let Some((d, t)) = s.split_once('T') else {
        return false;
    };
    is_date_part(d) && is_time(t)
}

fn is_base64_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'+' || b == b'/'
}

/// Base64 as XSD 1.0 defines it: groups of four characters (white space allowed between
/// them), with `=` padding only at the end and only after suitable characters.
fn is_base64(s: &str) -> bool {
    let chars: Vec<u8> = s
        .bytes()
        .filter(|&b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        .collect();
    if !chars.len().is_multiple_of(4) {
        return false;
    }
    let pad = chars.iter().rev().take_while(|&&b| b == b'=').count();
    if pad > 2 {
        return false;
    }
    let body = &chars[..chars.len() - pad];
    if !body.iter().all(|&b| is_base64_char(b)) {
        return false;
    }
    // The last data character before padding must leave the unused bits zero.
    match (pad, body.last()) {
        (1, Some(&c)) => b"AEIMQUYcgkosw048".contains(&c),
        (2, Some(&c)) => b"AQgw".contains(&c),
        _ => true,
    }
}

/// `[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*`.
fn is_language(s: &str) -> bool {
    let mut parts = s.split('-');
    let first_ok = parts
        .next()
        .is_some_and(|p| (1..=8).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_alphabetic()));
    first_ok
        && parts.all(|p| (1..=8).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_alphanumeric()))
}

#[cfg(test)]
mod tests {
    use super::Builtin::*;

    #[test]
    fn decimals() {
        for ok in ["1", "-1.5", "+.5", "5.", " 12.30\n", "0001"] {
            assert!(Decimal.accepts(ok), "{ok}");
        }
        for bad in ["", ".", "1,5", "1e3", "abc", "1 000", "--1", "NaN"] {
            assert!(!Decimal.accepts(bad), "{bad}");
        }
    }

    #[test]
    fn dates_and_times() {
        for ok in [
            "2024-02-29",
            "2023-12-31Z",
            "2023-01-01+01:00",
            "-0044-03-15",
            "12024-01-01",
        ] {
            assert!(Date.accepts(ok), "{ok}");
        }
        for bad in [
            "2023-02-29",
            "2023-13-01",
            "2023-1-01",
            "0000-01-01",
            "2023-01-01T00:00:00",
            "01-01-2023",
            "2023-01-32",
            "2023-01-01+15:00",
            "02024-01-01",
        ] {
            assert!(!Date.accepts(bad), "{bad}");
        }
        for ok in [
            "12:00:00",
            "23:59:59.123",
            "24:00:00",
            "10:00:00Z",
            "10:00:00-05:00",
        ] {
            assert!(Time.accepts(ok), "{ok}");
        }
        for bad in ["24:00:01", "12:60:00", "1:00:00", "12:00", "12:00:00+5"] {
            assert!(!Time.accepts(bad), "{bad}");
        }
        // whiteSpace="collapse": surrounding white space is no error (XSD 1.0, Xerces;
        // libxml2 refuses it, see engine/tests/xsd_differential.rs).
        assert!(Date.accepts(" 2024-06-01\n") && Time.accepts(" 10:00:00 "));
        assert!(DateTime.accepts("2023-01-01T12:00:00Z"));
        assert!(!DateTime.accepts("2023-01-01 12:00:00"));
    }

    #[test]
    fn booleans_base64_language() {
        for ok in ["true", "false", "0", "1", " true "] {
            assert!(Boolean.accepts(ok));
        }
        for bad in ["TRUE", "yes", "", "2"] {
            assert!(!Boolean.accepts(bad));
        }
        for ok in ["", "QQ==", "QUI=", "QUJD", "QUJD\nREVG"] {
            assert!(Base64Binary.accepts(ok), "{ok}");
        }
        for bad in ["Q", "QR==", "QUJ", "Q===", "QU=D", "QUJ!"] {
            assert!(!Base64Binary.accepts(bad), "{bad}");
        }
        assert!(Language.accepts("en-GB"));
        assert!(!Language.accepts("notalanguage"));
        assert!(Integer.accepts("-12") && !Integer.accepts("1.0"));
    }
}
