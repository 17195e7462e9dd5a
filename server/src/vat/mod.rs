//! EU VAT number verification: local format and check digits first (answered at once, never
//! sent upstream), then a register — VIES in production, a built-in register in the sandbox.

pub mod breaker;
pub mod cache;
pub mod config;
pub mod local;
pub mod sandbox;
pub mod service;
pub mod sk_lists;
pub mod vies;

use serde::Serialize;
use utoipa::ToSchema;

/// What a register said about a number that passed the local checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegisterAnswer {
    Known {
        valid: bool,
        name: Option<String>,
        address: Option<String>,
    },
    /// The register (or the member state's system behind it) cannot answer now.
    Unavailable {
        reason: String,
        retry_after_secs: u64,
    },
    /// The register refused the request as malformed (final, not retried).
    Rejected { reason: String },
}

/// A VAT verification result (interface spec 2.1, plus `status`, `cached`, `environment`).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct VatResult {
    /// The number checked, normalised: country prefix followed by the national number.
    pub vat: String,
    pub valid: bool,
    /// `valid`, `invalid` (the register does not know it) or `invalid_format` (failed the
    /// local format or check-digit checks; no register was asked).
    pub status: String,
    pub name: Option<String>,
    pub address: Option<String>,
    /// The register that answered (`local-checks`, `VIES`, `sandbox`).
    pub source: String,
    /// When the register gave this answer, ISO 8601 UTC (for a cached answer: when it
    /// was first given).
    pub checked_at: String,
    /// Why the number is invalid, when it is.
    pub reason: Option<String>,
    /// Served from the cache rather than asked now.
    pub cached: bool,
    /// Age of a cached answer in seconds.
    pub cache_age_seconds: Option<u64>,
    /// The register is down and this is an older answer past its cache age (see
    /// `warnings`); the verdict is the register's last known one.
    pub stale: bool,
    /// Things to know beside the verdict (stale answer; for SK numbers, grounds for
    /// cancelling the VAT registration).
    pub warnings: Vec<String>,
    /// SK numbers: whether the Financial Administration lists grounds for cancelling this
    /// VAT registration (open-data list `ds_dphz`); null when the list was not consulted
    /// (other countries, or no FS key configured).
    pub sk_cancellation_grounds: Option<bool>,
    /// `sandbox` answers are never production results.
    pub environment: String,
}
