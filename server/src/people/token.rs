//! Random tokens for cookies, links and forms. The holder gets the token; storage gets its
//! SHA-256, so a copy of the database opens no session and uses no link.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rand::RngCore;
use sha2::{Digest, Sha256};

/// 32 random bytes (256 bits) from the thread's cryptographic generator (seeded by the
/// operating system, as API keys are), URL-safe base64.
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// What storage keeps of a token: its SHA-256, lowercase hex.
pub fn digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Whether a token has the shape [`new_token`] gives (43 URL-safe base64 characters):
/// anything else is refused before any lookup.
pub fn well_formed(token: &str) -> bool {
    token.len() == 43
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Compare two tokens in constant time (for the CSRF token of a form).
pub fn same(a: &str, b: &str) -> bool {
    use subtle::ConstantTimeEq;
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_well_formed_and_stored_as_digests() {
        let a = new_token();
        let b = new_token();
        assert_ne!(a, b);
        assert!(well_formed(&a) && well_formed(&b));
        assert!(!well_formed("short") && !well_formed(&format!("{}=", &a[..42])));
        assert_eq!(digest(&a).len(), 64);
        assert_ne!(digest(&a), digest(&b));
        assert!(same(&a, &a.clone()));
        assert!(!same(&a, &b));
        assert!(!same(&a, &a[..42]));
    }
}
