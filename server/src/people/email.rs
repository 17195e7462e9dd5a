//! E-mail addresses as sign-in names: trimmed, lowercase, one `@` with something on both
//! sides, no spaces or controls, at most 254 bytes (the longest an SMTP path allows).
//! Deliverability is the invitation's business, not the parser's.

/// Why an address is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not an e-mail address")]
pub struct NotAnEmail(pub String);

/// The address in the form accounts are kept under.
pub fn normalise(raw: &str) -> Result<String, NotAnEmail> {
    let email = raw.trim().to_lowercase();
    let refuse = || NotAnEmail(raw.chars().take(100).collect());
    if email.len() > 254 || email.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(refuse());
    }
    match email.split_once('@') {
        Some((local, domain))
            if !local.is_empty()
                && !domain.is_empty()
                && !domain.contains('@')
                && !domain.starts_with('.')
                && !domain.ends_with('.') =>
        {
            Ok(email)
        }
        _ => Err(refuse()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_lowercased_and_checked() {
        assert_eq!(
            normalise("  Jana.Novak@Firma.SK ").unwrap(),
            "jana.novak@firma.sk"
        );
        for bad in [
            "",
            "jana",
            "@firma.sk",
            "jana@",
            "a@b@c",
            "ja na@firma.sk",
            "j@.sk",
            "j@sk.",
        ] {
            assert!(normalise(bad).is_err(), "{bad}");
        }
        assert!(normalise(&format!("{}@x.sk", "a".repeat(250))).is_err());
    }
}
