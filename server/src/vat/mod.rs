//! EU VAT number verification: local format and check digits first (answered at once, never
//! sent upstream), then a register — VIES in production, a built-in register in the sandbox.

pub mod local;
pub mod sandbox;
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
    /// ISO 8601 UTC.
    pub checked_at: String,
    /// Why the number is invalid, when it is.
    pub reason: Option<String>,
    pub cached: bool,
    /// `sandbox` answers are never production results.
    pub environment: String,
}
