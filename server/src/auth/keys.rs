//! API key material: generation, the lookup prefix, hashing and constant-time comparison.
//!
//! A generated key reads `inx_<12 hex>_<43 base64url>`: the first part is the lookup
//! prefix (stored in clear, shown in listings), the rest 256 random bits. Only the SHA-256
//! of the whole key is stored: keys are high-entropy, so a fast hash is enough and no
//! password KDF is needed.

use base64::Engine;
use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

const SCHEME: &str = "inx_";
const PREFIX_HEX: usize = 12;

/// Shortest key accepted from configuration (`INVEX_BOOTSTRAP_KEY`).
pub const MIN_CONFIGURED_KEY_LEN: usize = 16;

/// A new random key.
pub fn generate() -> String {
    let mut rng = rand::rng();
    let mut prefix = [0u8; PREFIX_HEX / 2];
    let mut secret = [0u8; 32];
    rng.fill_bytes(&mut prefix);
    rng.fill_bytes(&mut secret);
    format!(
        "{SCHEME}{}_{}",
        hex::encode(prefix),
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret)
    )
}

/// The prefix a key is looked up by: `inx_<12 hex>` for generated keys; for a configured
/// key of another shape, `h_` and the start of its hash (nothing of the key itself).
pub fn lookup_prefix(key: &str) -> String {
    let generated = key
        .strip_prefix(SCHEME)
        .and_then(|rest| rest.get(..PREFIX_HEX + 1))
        .filter(|p| p.ends_with('_') && p[..PREFIX_HEX].bytes().all(|b| b.is_ascii_hexdigit()));
    match generated {
        Some(p) => format!("{SCHEME}{}", &p[..PREFIX_HEX]),
        None => format!("h_{}", &hash(key)[..16]),
    }
}

/// Lowercase hex SHA-256 of the key.
pub fn hash(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// Whether `key` hashes to `stored`, compared in constant time.
pub fn matches(key: &str, stored: &str) -> bool {
    hash(key).as_bytes().ct_eq(stored.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_are_unique_and_carry_their_prefix() {
        let a = generate();
        let b = generate();
        assert_ne!(a, b);
        assert!(a.starts_with("inx_") && a.len() == 4 + 12 + 1 + 43, "{a}");
        assert_eq!(lookup_prefix(&a), a[..16].to_string());
    }

    #[test]
    fn configured_keys_get_a_hash_prefix() {
        let p = lookup_prefix("my-own-bootstrap-key-1234");
        assert!(p.starts_with("h_") && p.len() == 18, "{p}");
        assert!(!p.contains("my-own"));
        // A look-alike of the generated shape that is not hex falls back to the hash.
        assert!(lookup_prefix("inx_zzzzzzzzzzzz_secret").starts_with("h_"));
    }

    #[test]
    fn matching_is_exact() {
        let k = generate();
        let h = hash(&k);
        assert!(matches(&k, &h));
        assert!(!matches(&format!("{k}x"), &h));
        assert!(!matches(&k, &h[..63]));
    }
}
