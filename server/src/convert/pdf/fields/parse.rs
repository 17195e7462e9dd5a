//! Values as invoices print them: amounts with decimal commas or periods and thousands
//! separators, dates in the common European forms, percentages, units, countries.

use super::super::text::fold_string;
use chrono::NaiveDate;
use regex::Regex;
use rust_decimal::Decimal;
use std::str::FromStr;
use std::sync::LazyLock;

/// A number as printed, with where it sits in the text (char positions).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct NumToken {
    pub raw: String,
    pub start: usize,
    pub end: usize,
    /// Followed by `%` (rates).
    pub percent: bool,
}

fn is_space(c: char) -> bool {
    c == ' ' || c == '\u{a0}' || c == '\u{202f}' || c == '\u{2009}'
}

/// Numbers in `s`. A space continues a number only before a group of exactly three digits
/// (`1 234,56`), so adjacent cells like `2 120,00` in one segment stay two numbers only
/// when the layout split them; this is the usual reading of printed amounts.
pub(super) fn numbers(s: &str) -> Vec<NumToken> {
    let c: Vec<char> = s.chars().collect();
    let digit = |i: usize| c.get(i).is_some_and(char::is_ascii_digit);
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let negative =
            (c[i] == '-' || c[i] == '−') && digit(i + 1) && (i == 0 || !c[i - 1].is_alphanumeric());
        if !(digit(i) || negative) || (i > 0 && (c[i - 1].is_alphanumeric())) {
            i += 1;
            continue;
        }
        let start = i;
        let mut j = if negative { i + 1 } else { i };
        while digit(j) {
            j += 1;
        }
        loop {
            match c.get(j) {
                Some('.' | ',' | '\'') if digit(j + 1) => {
                    j += 1;
                    while digit(j) {
                        j += 1;
                    }
                }
                Some(&sp)
                    if is_space(sp)
                        && digit(j + 1)
                        && digit(j + 2)
                        && digit(j + 3)
                        && !digit(j + 4) =>
                {
                    j += 4;
                }
                _ => break,
            }
        }
        // A trailing letter makes it an identifier (`2027A`), not a number.
        if c.get(j).is_some_and(|x| x.is_alphabetic() && *x != 'x') {
            while c.get(j).is_some_and(|x| x.is_alphanumeric()) {
                j += 1;
            }
            i = j;
            continue;
        }
        let mut k = j;
        while c.get(k).is_some_and(|x| is_space(*x)) {
            k += 1;
        }
        out.push(NumToken {
            raw: c[start..j].iter().collect(),
            start,
            end: j,
            percent: c.get(k) == Some(&'%'),
        });
        i = j;
    }
    out
}

/// A printed number as a decimal. `decimal` is the document's usual decimal separator,
/// used only when a separator is followed by exactly three digits (`1,000`).
pub(super) fn to_decimal(raw: &str, decimal: char) -> Option<Decimal> {
    let negative = raw.starts_with('-') || raw.starts_with('−');
    let body: String = raw
        .chars()
        .filter(|c| !(is_space(*c) || *c == '\'' || *c == '-' || *c == '−'))
        .collect();
    let last_sep = body.rfind(['.', ',']);
    let mut plain = String::new();
    match last_sep {
        Some(p) => {
            let sep = body[p..].chars().next()?;
            let after = body.len() - p - 1;
            let is_decimal = after != 3 || sep == decimal;
            let int_part: String = body[..p].chars().filter(char::is_ascii_digit).collect();
            let frac = &body[p + 1..];
            if is_decimal {
                // Mixed separators before the decimal one must all be the other kind.
                if body[..p].contains(sep) {
                    return None;
                }
                plain.push_str(&int_part);
                plain.push('.');
                plain.push_str(frac);
            } else {
                plain.push_str(&int_part);
                plain.push_str(frac);
            }
        }
        None => plain = body,
    }
    let d = Decimal::from_str(&plain).ok()?;
    Some(if negative { -d } else { d })
}

/// The first amount in a value text.
pub(super) fn amount(s: &str, decimal: char) -> Option<Decimal> {
    numbers(s)
        .into_iter()
        .find_map(|t| to_decimal(&t.raw, decimal))
}

/// The document's decimal separator: whichever is more often followed by exactly two
/// digits at the end of a number.
pub(super) fn decimal_separator(text: &str) -> char {
    let (mut comma, mut period) = (0, 0);
    for t in numbers(text) {
        let r = t.raw.as_bytes();
        if r.len() >= 3 && r[r.len() - 3] == b',' {
            comma += 1;
        } else if r.len() >= 3 && r[r.len() - 3] == b'.' {
            period += 1;
        }
    }
    if period > comma {
        '.'
    } else {
        ','
    }
}

static DMY_DOTS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(\d{1,2})\.\s?(\d{1,2})\.\s?(\d{4})\b").unwrap_or_else(|_| unreachable!())
});
static ISO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b").unwrap_or_else(|_| unreachable!())
});
static DMY_SLASH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b").unwrap_or_else(|_| unreachable!())
});
static D_MONTH_Y: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(\d{1,2})\.?\s+([a-z]{3,})\.?,?\s+(\d{4})\b").unwrap_or_else(|_| unreachable!())
});
static MONTH_D_Y: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b([a-z]{3,})\.?\s+(\d{1,2}),?\s+(\d{4})\b").unwrap_or_else(|_| unreachable!())
});

/// Month by the first letters of its English, Slovak or German name (folded).
fn month(name: &str) -> Option<u32> {
    const PREFIXES: [(&str, u32); 15] = [
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("maj", 5),
        ("mai", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("okt", 10),
        ("nov", 11),
        ("dec", 12),
    ];
    let key = name.get(..3)?;
    PREFIXES
        .iter()
        .find(|(p, _)| *p == key)
        .map(|(_, m)| *m)
        .or((key == "dez").then_some(12))
}

fn ymd(y: &str, m: u32, d: &str) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(y.parse().ok()?, m, d.parse().ok()?)
}

/// The first date in a value text: `dd.mm.yyyy`, `d. m. yyyy`, ISO, `dd/mm/yyyy`,
/// `15 January 2027`, `January 15, 2027`, `15. januára 2027`.
pub(super) fn date(s: &str) -> Option<NaiveDate> {
    let folded = fold_string(s);
    let mut found: Vec<(usize, NaiveDate)> = Vec::new();
    for (re, order) in [(&*DMY_DOTS, 0), (&*ISO, 1), (&*DMY_SLASH, 0)] {
        if let Some(c) = re.captures(&folded) {
            let (y, m, d) = if order == 1 {
                (&c[1], &c[2], &c[3])
            } else {
                (&c[3], &c[2], &c[1])
            };
            if let Some(date) = m.parse().ok().and_then(|m| ymd(y, m, d)) {
                found.push((c.get(0).map_or(0, |m| m.start()), date));
            }
        }
    }
    if let Some(c) = D_MONTH_Y.captures(&folded) {
        if let Some(date) = month(&c[2]).and_then(|m| ymd(&c[3], m, &c[1])) {
            found.push((c.get(0).map_or(0, |m| m.start()), date));
        }
    }
    if let Some(c) = MONTH_D_Y.captures(&folded) {
        if let Some(date) = month(&c[1]).and_then(|m| ymd(&c[3], m, &c[2])) {
            found.push((c.get(0).map_or(0, |m| m.start()), date));
        }
    }
    found
        .into_iter()
        .min_by_key(|(pos, _)| *pos)
        .map(|(_, d)| d)
}

/// UN/ECE Recommendation 20 code for a printed unit.
pub(super) fn unit_code(unit: &str) -> Option<&'static str> {
    let u = fold_string(unit.trim().trim_end_matches('.'));
    Some(match u.as_str() {
        "ks" | "kus" | "kusy" | "kusov" | "pcs" | "pc" | "piece" | "pieces" | "stk" | "stuck"
        | "x" | "unit" | "units" | "ea" | "each" => "C62",
        "hod" | "h" | "hr" | "hrs" | "hour" | "hours" | "std" | "stunden" | "hodina" | "hodiny"
        | "hodin" => "HUR",
        "kg" => "KGM",
        "g" => "GRM",
        "t" => "TNE",
        "m" => "MTR",
        "km" => "KMT",
        "m2" | "m²" => "MTK",
        "m3" | "m³" => "MTQ",
        "l" | "ltr" | "liter" => "LTR",
        "den" | "dni" | "day" | "days" | "tag" | "tage" => "DAY",
        "mes" | "mesiac" | "mesiace" | "month" | "months" | "monat" => "MON",
        "rok" | "year" | "years" | "jahr" => "ANN",
        "kwh" => "KWH",
        "bal" | "balenie" | "pack" | "pkg" => "XPK",
        "set" | "sada" => "SET",
        _ => return None,
    })
}

/// ISO 3166 code for a country name line.
pub(super) fn country_code(line: &str) -> Option<&'static str> {
    let f = fold_string(line.trim().trim_end_matches('.'));
    Some(match f.as_str() {
        "slovensko"
        | "slovenska republika"
        | "slovakia"
        | "slovak republic"
        | "sk"
        | "slowakei" => "SK",
        "cesko" | "ceska republika" | "czech republic" | "czechia" | "cz" | "tschechien" => "CZ",
        "deutschland" | "germany" | "nemecko" | "de" => "DE",
        "osterreich" | "austria" | "rakusko" | "at" => "AT",
        "magyarorszag" | "hungary" | "madarsko" | "hu" | "ungarn" => "HU",
        "polska" | "poland" | "polsko" | "pl" | "polen" => "PL",
        "france" | "francuzsko" | "fr" | "frankreich" => "FR",
        "italia" | "italy" | "taliansko" | "it" | "italien" => "IT",
        "nederland" | "netherlands" | "holandsko" | "nl" | "niederlande" => "NL",
        "belgium" | "belgicko" | "be" | "belgien" => "BE",
        "united kingdom" | "uk" | "gb" | "great britain" => "GB",
        "ireland" | "irsko" | "ie" => "IE",
        "slovenia" | "slovinsko" | "si" => "SI",
        _ => return None,
    })
}

/// Currency code for a printed code or symbol.
pub(super) fn currency(s: &str) -> Option<&'static str> {
    const CODES: [&str; 10] = [
        "EUR", "CZK", "USD", "GBP", "CHF", "PLN", "HUF", "SEK", "NOK", "DKK",
    ];
    let t = s.trim();
    if let Some(code) = CODES
        .iter()
        .find(|c| t.split(|ch: char| !ch.is_alphabetic()).any(|w| w == **c))
    {
        return Some(code);
    }
    if t.contains('€') {
        Some("EUR")
    } else if t.contains("Kč") {
        Some("CZK")
    } else if t.contains('£') {
        Some("GBP")
    } else if t.contains('$') {
        Some("USD")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    #[test]
    fn amounts_in_both_conventions() {
        assert_eq!(amount("1 234,56 €", ','), Some(dec("1234.56")));
        assert_eq!(amount("EUR 1,234.56", ','), Some(dec("1234.56")));
        assert_eq!(amount("1.234,56", '.'), Some(dec("1234.56")));
        assert_eq!(amount("1,000", ','), Some(dec("1.000")));
        assert_eq!(amount("1,000", '.'), Some(dec("1000")));
        assert_eq!(amount("-12,5", ','), Some(dec("-12.5")));
        assert_eq!(amount("12 345 678,00", ','), Some(dec("12345678.00")));
        assert_eq!(amount("1'234.50 CHF", '.'), Some(dec("1234.50")));
        assert_eq!(amount("INV2027", ','), None);
        let toks = numbers("20 %  740,00");
        assert_eq!(toks.len(), 2);
        assert!(toks[0].percent);
    }

    #[test]
    fn dates_in_common_forms() {
        let d = NaiveDate::from_ymd_opt(2027, 1, 5).unwrap();
        for s in [
            "05.01.2027",
            "5. 1. 2027",
            "2027-01-05",
            "05/01/2027",
            "5 January 2027",
            "January 5, 2027",
            "5. januára 2027",
        ] {
            assert_eq!(date(s), Some(d), "{s}");
        }
        assert_eq!(date("31.02.2027"), None);
    }

    #[test]
    fn decimal_separator_by_majority() {
        assert_eq!(decimal_separator("100,00 20,00 1.000"), ',');
        assert_eq!(decimal_separator("1,234.50 20.00"), '.');
    }
}
