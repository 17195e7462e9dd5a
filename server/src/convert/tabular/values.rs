//! Numbers and dates as people and spreadsheets write them, with a note of how sure the
//! reading is: a separator or a day/month order that could be read two ways is chosen by
//! the mapping's hints and marked ambiguous.

use chrono::NaiveDate;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// Confidence of a value read without any interpretation.
pub const CLEAN: f32 = 0.98;
/// Confidence of a value that needed a documented, unambiguous interpretation
/// (a unit abbreviation, a two-digit year, an Excel serial number in a date column).
pub const INTERPRETED: f32 = 0.85;
/// Confidence of a value that could be read two ways (the mapping's hint decided).
pub const AMBIGUOUS: f32 = 0.55;

/// How much interpretation a reading needed.
#[derive(Clone, Debug, PartialEq)]
pub enum Doubt {
    None,
    /// Unambiguous but not literal; the text says what was done.
    Interpreted(String),
    /// Could be read another way; the text says which reading was chosen and why.
    Ambiguous(String),
}

impl Doubt {
    pub fn confidence(&self) -> f32 {
        match self {
            Doubt::None => CLEAN,
            Doubt::Interpreted(_) => INTERPRETED,
            Doubt::Ambiguous(_) => AMBIGUOUS,
        }
    }

    /// Keep the stronger doubt of two.
    pub fn and(self, other: Doubt) -> Doubt {
        match (&self, &other) {
            (Doubt::Ambiguous(_), _) => self,
            (_, Doubt::Ambiguous(_)) => other,
            (Doubt::Interpreted(_), _) => self,
            _ => other,
        }
    }
}

/// A value and how it was read.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed<T> {
    pub value: T,
    pub doubt: Doubt,
}

impl<T> Parsed<T> {
    pub fn clean(value: T) -> Self {
        Parsed {
            value,
            doubt: Doubt::None,
        }
    }
}

/// Which order `03/04/2027` is read in when both numbers could be the month.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DateOrder {
    /// Day first (Slovakia, most of Europe).
    #[default]
    Dmy,
    /// Month first (United States).
    Mdy,
}

/// Read a number written with any common decimal and thousands separators
/// (`1 234,50`, `1.234,50`, `1,234.50`, `1234.5`, no-break spaces, a leading sign,
/// a trailing `%` or `€`). `decimal` is the mapping's decimal separator, used only when a
/// single separator followed by three digits could be either.
pub fn parse_number(raw: &str, decimal: char) -> Result<Parsed<Decimal>, String> {
    let compact: String = raw
        .chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '\'' | '\u{2019}'))
        .collect();
    let mut s = compact.as_str();
    for suffix in ['%', '€'] {
        s = s.strip_suffix(suffix).unwrap_or(s);
    }
    let s = s.strip_suffix("EUR").unwrap_or(s);
    let (negative, body) = if let Some(rest) = s.strip_prefix(['-', '\u{2212}']) {
        (true, rest)
    } else if let Some(rest) = s.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
        // Accounting notation for negative amounts.
        (true, rest)
    } else {
        (false, s.strip_prefix('+').unwrap_or(s))
    };
    let not_a_number = || format!("`{}` is not a number", raw.trim());
    if body.is_empty()
        || !body.bytes().any(|b| b.is_ascii_digit())
        || !body
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b',')
        || body.ends_with(['.', ','])
    {
        return Err(not_a_number());
    }
    let dots = body.matches('.').count();
    let commas = body.matches(',').count();
    let (plain, doubt) = match (dots, commas) {
        (0, 0) => (body.to_string(), Doubt::None),
        (d, c) if d > 0 && c > 0 => {
            // Both present: the last one is the decimal separator.
            let last = body.rfind(['.', ',']).ok_or_else(not_a_number)?;
            let dec = body[last..].chars().next().ok_or_else(not_a_number)?;
            let thousands = if dec == '.' { ',' } else { '.' };
            let (int, frac) = body.split_at(last);
            if frac[1..].contains(thousands) || int.contains(dec) {
                return Err(not_a_number());
            }
            (
                format!(
                    "{}.{}",
                    ungroup(int, thousands).ok_or_else(not_a_number)?,
                    &frac[1..]
                ),
                Doubt::None,
            )
        }
        (n, 0) | (0, n) if n > 1 => {
            // The same separator several times can only group thousands.
            let sep = if dots > 0 { '.' } else { ',' };
            (ungroup(body, sep).ok_or_else(not_a_number)?, Doubt::None)
        }
        _ => {
            let sep = if dots > 0 { '.' } else { ',' };
            let (int, frac) = body.split_once(sep).ok_or_else(not_a_number)?;
            let could_group =
                frac.len() == 3 && (1..=3).contains(&int.len()) && !int.starts_with('0');
            if !could_group {
                (format!("{int}.{frac}"), Doubt::None)
            } else if sep == decimal {
                let reading = format!("{int}.{frac}");
                let note = format!(
                    "`{}` could be {reading} or {int}{frac}; read as {reading} because the \
                     mapping's decimal separator is `{decimal}`",
                    raw.trim()
                );
                (reading, Doubt::Ambiguous(note))
            } else {
                let reading = format!("{int}{frac}");
                let note = format!(
                    "`{}` could be {reading} or {int}.{frac}; read as {reading} because the \
                     mapping's decimal separator is `{decimal}`",
                    raw.trim()
                );
                (reading, Doubt::Ambiguous(note))
            }
        }
    };
    let plain = if plain.starts_with('.') {
        format!("0{plain}")
    } else {
        plain
    };
    let value = Decimal::from_str(&plain)
        .map_err(|_| format!("`{}` is too large or has too many decimals", raw.trim()))?;
    Ok(Parsed {
        value: if negative { -value } else { value },
        doubt,
    })
}

/// `1.234.567` → `1234567` when every group after the first has three digits.
fn ungroup(int: &str, sep: char) -> Option<String> {
    let mut groups = int.split(sep);
    let first = groups.next()?;
    if first.is_empty() || first.len() > 3 {
        return None;
    }
    let mut out = first.to_string();
    for g in groups {
        if g.len() != 3 {
            return None;
        }
        out.push_str(g);
    }
    Some(out)
}

/// A spreadsheet number cell as a decimal. Binary floats carry noise such as
/// `0.30000000000000004`; ten decimals are more than any invoice amount needs.
pub fn number_from_f64(f: f64) -> Result<Decimal, String> {
    if !f.is_finite() {
        return Err("the cell holds no finite number".into());
    }
    Decimal::from_str(&format!("{f:.10}"))
        .map(|d| d.normalize())
        .map_err(|_| format!("{f} is too large for an amount"))
}

/// The day an Excel serial number stands for (1900 date system), within years a
/// document date can plausibly have (1954 – 2201).
pub fn date_from_serial(serial: f64) -> Option<NaiveDate> {
    if !(20_000.0..=110_000.0).contains(&serial) {
        return None;
    }
    let epoch = NaiveDate::from_ymd_opt(1899, 12, 30)?;
    epoch.checked_add_days(chrono::Days::new(serial.trunc() as u64))
}

/// Read a date: first the mapping's own formats (trusted), then ISO `2027-01-31`,
/// `31.1.2027`, `31/01/2027` (day/month order from `order` when unclear), two-digit years,
/// `20270131` and Excel serial numbers. A time of day after the date is ignored.
pub fn parse_date(
    raw: &str,
    formats: &[String],
    order: DateOrder,
) -> Result<Parsed<NaiveDate>, String> {
    let trimmed = raw.trim();
    let date_part = match trimmed.find(':') {
        Some(colon) => trimmed[..colon]
            .rfind([' ', 'T'])
            .map_or(trimmed, |cut| &trimmed[..cut]),
        None => trimmed,
    };
    // Slovak typography puts spaces after the dots: `15. 1. 2027`.
    let s: String = date_part.chars().filter(|c| !c.is_whitespace()).collect();
    let s = s.strip_suffix('.').unwrap_or(&s);
    let not_a_date = || format!("`{trimmed}` is not a date; write it as 2027-01-31 or 31.01.2027");
    if s.is_empty() {
        return Err(not_a_date());
    }
    for format in formats {
        if let Ok(d) = NaiveDate::parse_from_str(s, format) {
            return Ok(Parsed::clean(d));
        }
    }
    if s.bytes().all(|b| b.is_ascii_digit() || b == b'.') && s.matches('.').count() <= 1 {
        if s.len() == 8 && !s.contains('.') {
            let d = ymd(&s[..4], &s[4..6], &s[6..]).ok_or_else(not_a_date)?;
            let note = format!("`{trimmed}` read as the compact date {d}");
            return Ok(Parsed {
                value: d,
                doubt: Doubt::Interpreted(note),
            });
        }
        let serial: f64 = s.parse().map_err(|_| not_a_date())?;
        let d = date_from_serial(serial).ok_or_else(not_a_date)?;
        let note = format!("`{trimmed}` read as an Excel serial date ({d})");
        return Ok(Parsed {
            value: d,
            doubt: Doubt::Interpreted(note),
        });
    }
    let sep = s
        .chars()
        .find(|c| matches!(c, '.' | '/' | '-'))
        .ok_or_else(not_a_date)?;
    let parts: Vec<&str> = s.split(sep).collect();
    if parts.len() != 3
        || parts
            .iter()
            .any(|p| p.is_empty() || p.len() > 4 || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(not_a_date());
    }
    if parts[0].len() == 4 {
        let d = ymd(parts[0], parts[1], parts[2]).ok_or_else(not_a_date)?;
        return Ok(Parsed::clean(d));
    }
    let (year, mut doubt) = match parts[2].len() {
        4 => (parts[2].to_string(), Doubt::None),
        2 => (
            format!("20{}", parts[2]),
            Doubt::Interpreted(format!(
                "two-digit year in `{trimmed}` read as 20{}",
                parts[2]
            )),
        ),
        _ => return Err(not_a_date()),
    };
    let a: u32 = parts[0].parse().map_err(|_| not_a_date())?;
    let b: u32 = parts[1].parse().map_err(|_| not_a_date())?;
    let day_first = if sep == '.' {
        // Dotted dates are day-first wherever they are used.
        true
    } else if a > 12 || b > 12 || a == b {
        a > 12 || a == b
    } else {
        let chosen = order == DateOrder::Dmy;
        let (day, month) = if chosen { (a, b) } else { (b, a) };
        let y: i32 = year.parse().map_err(|_| not_a_date())?;
        let d = NaiveDate::from_ymd_opt(y, month, day).ok_or_else(not_a_date)?;
        doubt = doubt.and(Doubt::Ambiguous(format!(
            "`{trimmed}` could be {day} {} or {month} {}; read as {d} (the mapping's date order is {})",
            month_name(month),
            month_name(day),
            if chosen { "day/month" } else { "month/day" }
        )));
        chosen
    };
    let (day, month) = if day_first {
        (parts[0], parts[1])
    } else {
        (parts[1], parts[0])
    };
    let d = ymd(&year, month, day).ok_or_else(not_a_date)?;
    Ok(Parsed { value: d, doubt })
}

fn ymd(y: &str, m: &str, d: &str) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(y.parse().ok()?, m.parse().ok()?, d.parse().ok()?)
}

fn month_name(m: u32) -> &'static str {
    const NAMES: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    NAMES
        .get(m.saturating_sub(1) as usize)
        .copied()
        .unwrap_or("?")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(s: &str, dec: char) -> (String, bool) {
        let p = parse_number(s, dec).unwrap();
        (p.value.to_string(), matches!(p.doubt, Doubt::Ambiguous(_)))
    }

    #[test]
    fn numbers_with_every_common_separator() {
        assert_eq!(num("1 234,50", ','), ("1234.50".into(), false));
        assert_eq!(num("1\u{a0}234,50", '.'), ("1234.50".into(), false));
        assert_eq!(num("1\u{202f}234.5", '.'), ("1234.5".into(), false));
        assert_eq!(num("1.234,50", ','), ("1234.50".into(), false));
        assert_eq!(num("1,234.50", ','), ("1234.50".into(), false));
        assert_eq!(num("1234.5", ','), ("1234.5".into(), false));
        assert_eq!(num("1234,5", '.'), ("1234.5".into(), false));
        assert_eq!(num("1.234.567", ','), ("1234567".into(), false));
        assert_eq!(num("0,125", '.'), ("0.125".into(), false));
        assert_eq!(num("-12,5", ','), ("-12.5".into(), false));
        assert_eq!(num("(12.50)", '.'), ("-12.50".into(), false));
        assert_eq!(num("23 %", ','), ("23".into(), false));
        assert_eq!(num("99,90 €", ','), ("99.90".into(), false));
        assert_eq!(num(",5", ','), ("0.5".into(), false));
    }

    #[test]
    fn a_lone_separator_before_three_digits_follows_the_mapping() {
        assert_eq!(num("1,234", ','), ("1.234".into(), true));
        assert_eq!(num("1,234", '.'), ("1234".into(), true));
        assert_eq!(num("1.234", '.'), ("1.234".into(), true));
        assert_eq!(num("1.234", ','), ("1234".into(), true));
    }

    #[test]
    fn non_numbers_are_refused() {
        for s in [
            "",
            "abc",
            "1.2.3,4,5",
            "12,",
            "1,23,456.7",
            "1.2,3.4",
            "-",
            "12a",
        ] {
            assert!(parse_number(s, ',').is_err(), "{s}");
        }
    }

    #[test]
    fn floats_lose_their_binary_noise() {
        assert_eq!(number_from_f64(0.1 + 0.2).unwrap().to_string(), "0.3");
        assert_eq!(number_from_f64(1234.5).unwrap().to_string(), "1234.5");
        assert!(number_from_f64(f64::NAN).is_err());
    }

    fn date(s: &str, order: DateOrder) -> (String, Doubt) {
        let p = parse_date(s, &[], order).unwrap();
        (p.value.to_string(), p.doubt)
    }

    #[test]
    fn dates_in_common_formats() {
        assert_eq!(
            date("2027-01-15", DateOrder::Dmy),
            ("2027-01-15".into(), Doubt::None)
        );
        assert_eq!(
            date("15.01.2027", DateOrder::Mdy),
            ("2027-01-15".into(), Doubt::None)
        );
        assert_eq!(
            date("5.1.2027", DateOrder::Dmy),
            ("2027-01-05".into(), Doubt::None)
        );
        assert_eq!(
            date("15. 1. 2027", DateOrder::Dmy),
            ("2027-01-15".into(), Doubt::None)
        );
        assert_eq!(
            date("15/01/2027", DateOrder::Mdy),
            ("2027-01-15".into(), Doubt::None)
        );
        assert_eq!(
            date("01/15/2027", DateOrder::Dmy),
            ("2027-01-15".into(), Doubt::None)
        );
        assert_eq!(
            date("04/04/2027", DateOrder::Mdy),
            ("2027-04-04".into(), Doubt::None)
        );
        assert_eq!(
            date("2027-01-15 00:00:00", DateOrder::Dmy),
            ("2027-01-15".into(), Doubt::None)
        );
        assert_eq!(date("2027-01-15T10:30", DateOrder::Dmy).0, "2027-01-15");
        assert_eq!(date("46402", DateOrder::Dmy).0, "2027-01-15");
        assert_eq!(date("20270115", DateOrder::Dmy).0, "2027-01-15");
        assert!(
            matches!(date("15.1.27", DateOrder::Dmy), (d, Doubt::Interpreted(_)) if d == "2027-01-15")
        );
    }

    #[test]
    fn unclear_day_month_order_is_ambiguous_and_follows_the_hint() {
        let (d, doubt) = date("03/04/2027", DateOrder::Dmy);
        assert_eq!(d, "2027-04-03");
        assert!(matches!(doubt, Doubt::Ambiguous(ref m) if m.contains("3 April or 4 March")));
        assert_eq!(date("03/04/2027", DateOrder::Mdy).0, "2027-03-04");
        assert!(doubt.confidence() <= 0.6);
    }

    #[test]
    fn trusted_formats_come_first_and_bad_dates_fail() {
        let p = parse_date("03/04/2027", &["%m/%d/%Y".into()], DateOrder::Dmy).unwrap();
        assert_eq!(
            (p.value.to_string(), p.doubt),
            ("2027-03-04".into(), Doubt::None)
        );
        for s in ["31.02.2027", "yesterday", "1/2", "12345", "2027-13-01", ""] {
            assert!(parse_date(s, &[], DateOrder::Dmy).is_err(), "{s}");
        }
    }
}
