//! Passwords: Argon2id with the parameters OWASP recommends (19 MiB, 2 passes, one lane),
//! stored as PHC strings that name their parameters, so stronger ones can come later
//! without invalidating old hashes. Hashing takes tens of milliseconds of CPU: callers run
//! it off the async workers.

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};

/// Shortest password accepted, in characters.
pub const MIN_CHARS: usize = 12;
/// Longest password accepted, in bytes: Argon2 reads all of it, so it is bounded.
pub const MAX_BYTES: usize = 1024;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PasswordError {
    #[error("a password needs at least {MIN_CHARS} characters")]
    TooShort,
    #[error("a password may have at most {MAX_BYTES} bytes")]
    TooLong,
    #[error("the password could not be hashed: {0}")]
    Hash(String),
}

fn argon2() -> Argon2<'static> {
    // 19 MiB, t = 2, p = 1: OWASP's first Argon2id configuration. The constants are valid
    // Argon2 parameters; `default()` is the fallback should a future crate refuse them.
    let params = Params::new(19 * 1024, 2, 1, None).unwrap_or_default();
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// Whether a new password is acceptable.
pub fn check_new(password: &str) -> Result<(), PasswordError> {
    if password.len() > MAX_BYTES {
        return Err(PasswordError::TooLong);
    }
    if password.chars().count() < MIN_CHARS {
        return Err(PasswordError::TooShort);
    }
    Ok(())
}

/// Hash a new password (after [`check_new`]).
pub fn hash(password: &str) -> Result<String, PasswordError> {
    check_new(password)?;
    let salt = SaltString::generate(&mut OsRng);
    argon2()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| PasswordError::Hash(e.to_string()))
}

/// Whether `password` matches the stored hash (constant time within Argon2). A malformed
/// stored hash matches nothing.
pub fn verify(password: &str, stored: &str) -> bool {
    if password.len() > MAX_BYTES {
        return false;
    }
    match PasswordHash::new(stored) {
        Ok(parsed) => argon2()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    }
}

/// Spend the time a verification takes, for a sign-in with an unknown address or an
/// account without a password: the answer's timing does not tell which addresses exist.
pub fn verify_nothing(password: &str) {
    static DUMMY: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    if let Some(stored) = DUMMY.get_or_init(|| hash("not a password of anyone").ok()) {
        let _ = verify(password, stored);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_its_password_only() {
        let stored = hash("correct horse battery").unwrap();
        assert!(
            stored.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "{stored}"
        );
        assert!(verify("correct horse battery", &stored));
        assert!(!verify("correct horse batterY", &stored));
        assert!(!verify("correct horse battery", "not a hash"));
        // Salted: the same password hashes differently.
        assert_ne!(stored, hash("correct horse battery").unwrap());
    }

    #[test]
    fn new_passwords_are_bounded() {
        assert_eq!(check_new("short"), Err(PasswordError::TooShort));
        // Characters, not bytes: twelve Slovak letters are enough.
        assert!(check_new("ľščťžýáíéúäô").is_ok());
        assert_eq!(
            check_new(&"x".repeat(MAX_BYTES + 1)),
            Err(PasswordError::TooLong)
        );
        assert!(!verify(
            &"x".repeat(MAX_BYTES + 1),
            "$argon2id$v=19$m=19456,t=2,p=1$x$y"
        ));
    }
}
