//! Values of a JSON invoice checked as they are read, so that the JSON Schema's patterns
//! hold for what invex takes: an amount is a decimal string, a date is `YYYY-MM-DD`. A
//! value that is not is refused with its path (`lines[0].quantity`) instead of reaching the
//! rules as text they cannot read.

use serde::de::Error;
use serde::{Deserialize, Deserializer};

/// Optional sign, digits, optional fraction: what the schema's pattern says.
pub fn is_decimal(s: &str) -> bool {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (whole, fraction) = match digits.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (digits, None),
    };
    let all_digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    all_digits(whole) && fraction.is_none_or(all_digits)
}

/// `YYYY-MM-DD` and a day that exists.
pub fn is_date(s: &str) -> bool {
    s.len() == 10 && chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok()
}

fn check<E: Error>(value: &str, ok: fn(&str) -> bool, what: &str) -> Result<(), E> {
    if ok(value) {
        Ok(())
    } else {
        Err(E::custom(format!("`{value}` is not {what}")))
    }
}

const DECIMAL: &str =
    "a decimal (a string of digits with an optional sign and fraction: \"1250.00\")";
const DATE: &str = "a date (\"YYYY-MM-DD\")";

pub fn decimal<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let v = Option::<String>::deserialize(d)?;
    if let Some(s) = &v {
        check(s, is_decimal, DECIMAL)?;
    }
    Ok(v)
}

pub fn decimal_text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    check(&s, is_decimal, DECIMAL)?;
    Ok(s)
}

pub fn date<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let v = Option::<String>::deserialize(d)?;
    if let Some(s) = &v {
        check(s, is_date, DATE)?;
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_and_dates_are_what_the_schema_says() {
        for ok in ["0", "1250.00", "-3.5", "+7", "007.10"] {
            assert!(is_decimal(ok), "{ok}");
        }
        for bad in [
            "", "12,50", "1.", ".5", "1e3", "−1", "1 000", "NaN", "+", "1.2.3",
        ] {
            assert!(!is_decimal(bad), "{bad}");
        }
        assert!(is_date("2027-01-15"));
        for bad in [
            "2027-1-15",
            "2027-02-30",
            "15.01.2027",
            "2027-01-15T00:00:00",
        ] {
            assert!(!is_date(bad), "{bad}");
        }
    }
}
