//! Shared helpers of the end-to-end tests.

use std::path::PathBuf;

pub mod smtp;

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The shipped rule packs.
pub fn rulepacks() -> PathBuf {
    repo().join("rulepacks")
}

/// The official conformance corpus, `../shared/conformance` relative to the repository
/// (override with `INVEX_CONFORMANCE`).
pub fn conformance() -> PathBuf {
    std::env::var_os("INVEX_CONFORMANCE")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("../shared/conformance"))
}
