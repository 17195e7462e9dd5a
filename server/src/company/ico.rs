//! Reading an IČO from a path: spaces are ignored, a legacy 6-digit IČO is left-padded with
//! `00` (that is how the registers write those numbers today, e.g. `151742` → `00151742`),
//! then the check digit is verified by the engine's `ico_sk_check`. A number that fails
//! is never sent to a register.

use invex_engine::checks::{ico_sk_check, CheckError};

/// Why a path segment is not a usable IČO.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IcoFault {
    #[error("an IČO has 8 digits (or 6 for a legacy number); `{given}` has {digits} characters")]
    Length { given: String, digits: usize },
    #[error("an IČO has only digits; `{given}` has `{ch}` at position {position}")]
    NotDigit {
        given: String,
        ch: char,
        position: usize,
    },
    #[error("the check digit of `{given}` is wrong (weights 8,7,6,5,4,3,2 on the first 7 digits, mod 11)")]
    CheckDigit { given: String },
}

impl IcoFault {
    /// A short machine-readable name of the fault, for the problem's `fault` member.
    pub fn code(&self) -> &'static str {
        match self {
            IcoFault::Length { .. } => "length",
            IcoFault::NotDigit { .. } => "not-digit",
            IcoFault::CheckDigit { .. } => "check-digit",
        }
    }
}

/// The 8-digit IČO for `raw`, or why it is not one.
pub fn parse(raw: &str) -> Result<String, IcoFault> {
    let compact: String = raw.chars().filter(|c| !c.is_whitespace()).collect();
    if let Some((position, ch)) = compact
        .chars()
        .enumerate()
        .find(|(_, c)| !c.is_ascii_digit())
    {
        return Err(IcoFault::NotDigit {
            given: compact.clone(),
            ch,
            position,
        });
    }
    let padded = match compact.len() {
        8 => compact.clone(),
        6 => format!("00{compact}"),
        n => {
            return Err(IcoFault::Length {
                given: compact,
                digits: n,
            })
        }
    };
    match ico_sk_check(&padded) {
        Ok(()) => Ok(padded),
        Err(CheckError::Checksum) => Err(IcoFault::CheckDigit { given: compact }),
        // Digits and length were checked above; anything else is still a malformed number.
        Err(_) => Err(IcoFault::Length {
            digits: compact.len(),
            given: compact,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_legacy_and_faulty_numbers() {
        assert_eq!(parse("31322832").as_deref(), Ok("31322832"));
        assert_eq!(parse(" 313 228 32 ").as_deref(), Ok("31322832"));
        assert_eq!(parse("151742").as_deref(), Ok("00151742"));
        assert_eq!(parse("31322833").unwrap_err().code(), "check-digit");
        assert_eq!(parse("3132283").unwrap_err().code(), "length");
        assert_eq!(parse("").unwrap_err().code(), "length");
        assert_eq!(parse("3132283A").unwrap_err().code(), "not-digit");
    }
}
