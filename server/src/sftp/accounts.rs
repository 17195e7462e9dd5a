//! SFTP accounts: who may sign in to a tenant's drop folder, with which public keys, and in
//! which role (as an API key has one: an auditor reads, the others also deliver).

use russh::keys::ssh_key::{Algorithm, HashAlg, PublicKey};

use crate::auth::Role;
use crate::store::{SftpAccountRecord, Store, StoreError};

/// Keys an account may have.
pub const MAX_KEYS: usize = 10;
/// The longest key line taken (an RSA 16384 key is about 2.8 KB).
const MAX_KEY_LINE: usize = 8 * 1024;
/// RSA keys shorter than this are refused.
const MIN_RSA_BITS: usize = 2048;

#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    #[error("an account needs at least one public key")]
    NoKey,
    #[error("at most {MAX_KEYS} public keys per account")]
    TooManyKeys,
    #[error("public key {index}: {reason}")]
    BadKey { index: usize, reason: String },
    #[error("the name must be 1 to 100 printable characters")]
    BadName,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// An account to create.
pub struct NewAccount {
    pub name: String,
    pub role: Role,
    /// OpenSSH public key lines (`ssh-ed25519 AAAA... comment`).
    pub public_keys: Vec<String>,
    /// What its deliveries become (see [`crate::batches::Mode`]).
    pub mode: crate::batches::Mode,
    /// Their profile (checked by the caller); detected per document when absent.
    pub profile: Option<String>,
}

/// Parse one OpenSSH public key line, refusing what is too weak to sign in with.
pub fn parse_key(line: &str) -> Result<PublicKey, String> {
    let line = line.trim();
    if line.len() > MAX_KEY_LINE {
        return Err(format!("longer than {MAX_KEY_LINE} bytes"));
    }
    let key = PublicKey::from_openssh(line)
        .map_err(|e| format!("not an OpenSSH public key line ({e})"))?;
    match key.algorithm() {
        Algorithm::Ed25519 | Algorithm::Ecdsa { .. } => Ok(key),
        Algorithm::Rsa { .. } => {
            let bits = key.key_data().rsa().map_or(0, |k| k.key_size() as usize);
            if bits < MIN_RSA_BITS {
                Err(format!(
                    "an RSA key of {bits} bits; at least {MIN_RSA_BITS}"
                ))
            } else {
                Ok(key)
            }
        }
        other => Err(format!(
            "{other} keys are not taken; use ed25519, ECDSA or RSA"
        )),
    }
}

/// `SHA256:...` fingerprints of the stored key lines, as `ssh-keygen -l` prints them.
pub fn fingerprints(public_keys: &str) -> Vec<String> {
    public_keys
        .lines()
        .filter_map(|l| PublicKey::from_openssh(l.trim()).ok())
        .map(|k| k.fingerprint(HashAlg::Sha256).to_string())
        .collect()
}

/// Whether `offered` is one of the account's keys.
pub fn has_key(account: &SftpAccountRecord, offered: &PublicKey) -> bool {
    account
        .public_keys
        .lines()
        .filter_map(|l| PublicKey::from_openssh(l.trim()).ok())
        .any(|k| k.key_data() == offered.key_data())
}

/// Create an account of `tenant_id`; its id is its SSH user name.
pub async fn create(
    store: &Store,
    tenant_id: &str,
    new: NewAccount,
) -> Result<SftpAccountRecord, AccountError> {
    let name = new.name.trim();
    if name.is_empty() || name.chars().count() > 100 || name.chars().any(char::is_control) {
        return Err(AccountError::BadName);
    }
    if new.public_keys.is_empty() {
        return Err(AccountError::NoKey);
    }
    if new.public_keys.len() > MAX_KEYS {
        return Err(AccountError::TooManyKeys);
    }
    let mut lines = Vec::with_capacity(new.public_keys.len());
    for (index, line) in new.public_keys.iter().enumerate() {
        let key = parse_key(line).map_err(|reason| AccountError::BadKey { index, reason })?;
        // Stored without the comment: it is the client's, and may say more than needed.
        let mut bare = key.clone();
        bare.set_comment("");
        lines.push(bare.to_openssh().map_err(|e| AccountError::BadKey {
            index,
            reason: e.to_string(),
        })?);
    }
    let record = SftpAccountRecord {
        // Lowercase letters and digits: a user name every SSH client takes as it is.
        id: format!("sftp{}", uuid::Uuid::now_v7().simple()),
        tenant_id: tenant_id.to_string(),
        name: name.to_string(),
        role: new.role.as_str().to_string(),
        public_keys: lines.join("\n"),
        created_at: crate::clock::now(),
        revoked_at: None,
        mode: new.mode.as_str().to_string(),
        profile: new.profile,
    };
    store.insert_sftp_account(&record).await?;
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Made with `ssh-keygen -t ed25519` and `ssh-keygen -t rsa -b 1024` for this test.
    const ED25519: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAHwbsQZjrparwwyEfOGAUR6/yM7L2mZb1v8VP9A4YnK me@host";
    const RSA_1024: &str = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQDiCzRfEmmJ4ILLKdIbYoNQTiZ4wuK238SK3L5Ux02AJ5hcqNAY6tH+FKb+5CDsUMuG+Qj748HFSlI09x5FcwdGEw51rntD9jK0SXE1xBePO/ljvUP76EEnoR/MybM3rbuGc/L+8tfNlKUfXn5fa8RhBoyxn/P5pnKDgs4NlpV2dw==";

    #[test]
    fn keys_are_parsed_fingerprinted_and_weak_ones_refused() {
        let key = parse_key(ED25519).unwrap();
        assert_eq!(key.algorithm(), Algorithm::Ed25519);
        let fp = fingerprints(ED25519);
        // As `ssh-keygen -lf` prints it for the same key.
        assert_eq!(fp, ["SHA256:rPYorQo6TxLur2QmpjchfCn3kDSAgAc7mS58a2qAwwY"]);
        assert!(parse_key("ssh-ed25519 not-base64").is_err());
        assert!(parse_key("").is_err());
        assert!(parse_key(&"x".repeat(MAX_KEY_LINE + 1)).is_err());
        // Refused for its size (or, by the key library, as too short to read).
        assert!(parse_key(RSA_1024).is_err());
    }
}
