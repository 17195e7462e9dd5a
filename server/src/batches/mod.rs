//! Batches: a large upload (a ZIP of UBL documents) taken in whole, stored as it arrives,
//! answered at once, then split into its documents and validated by workers in the
//! background (any instance sharing the database), with progress, paged results, and webhook
//! events: `batch.remediation_required` per document to correct, `batch.completed` at the end.
//!
//! - [`intake`]: the upload into the store, in pieces, with its limits;
//! - [`split`]: a received upload into its documents (resumable: documents are keyed by their
//!   place in the upload);
//! - [`process`]: one document's outcome (validated, converted, or, mode `send`, its
//!   identifiers checked before any document is sent, then sent);
//! - [`worker`]: the loop that claims work with leases and records outcomes exactly once.
//!
//! It knows no HTTP: the routes hand it a body stream and read its records.

pub mod config;
pub mod document;
pub mod intake;
pub mod process;
pub mod results;
pub mod split;
pub mod worker;

pub use config::BatchesConfig;
pub use document::BatchDocument;
pub use intake::{receive, InputKind, Intake, IntakeError, NewBatch};

/// What is done with each document of a batch.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Validate each document (UBL 2.1 invoice or credit note, or a JSON invoice) against
    /// its profile: outcome `valid`, `invalid` or `failed`.
    Validate,
    /// Convert each document (PDF, XLSX, ODS, CSV, or a JSON invoice) as `POST
    /// /v1/invoice/convert` does, review gate included: outcome `ready` (every invoice of
    /// it), `needs_review` (one or more held) or `failed` (not readable).
    Convert,
    /// Send each document (UBL 2.1 invoice or credit note, or a JSON invoice) as `POST
    /// /v1/invoice/send` does, validation and review gate included, once the identifiers of
    /// every document have passed their checks (status `checking`); when any fails, the
    /// batch is `refused` and nothing of it is sent. Outcome `queued` (accepted for
    /// delivery), `remediation_required` (fatal findings: kept in the remediation flow, not
    /// sent), or `failed` (not sent: unreadable, held for review, a duplicate); in a refused
    /// batch `refused` (its identifiers failed) or `withheld` (fine, but not sent).
    Send,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Validate => "validate",
            Mode::Convert => "convert",
            Mode::Send => "send",
        }
    }

    pub fn parse(s: &str) -> Option<Mode> {
        match s {
            "validate" => Some(Mode::Validate),
            "convert" => Some(Mode::Convert),
            "send" => Some(Mode::Send),
            _ => None,
        }
    }
}

/// The outcomes a document can have.
pub const OUTCOMES: [&str; 9] = [
    "valid",
    "invalid",
    "ready",
    "needs_review",
    "queued",
    "remediation_required",
    "refused",
    "withheld",
    "failed",
];
