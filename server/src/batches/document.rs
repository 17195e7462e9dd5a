//! A document of a batch as shown to the source system (the routes' answers, the SFTP
//! outbox): its place, name, outcome and result.

use serde::Serialize;
use utoipa::ToSchema;

use crate::store::DocumentRow;

/// A document of a batch and its outcome.
#[derive(Debug, Serialize, ToSchema)]
pub struct BatchDocument {
    /// Its place in the upload (1, 2, ...; folders are not counted).
    pub seq: i64,
    /// Its name in the ZIP (`line N` in a JSON feed; the file name of a single document).
    pub name: String,
    pub size_bytes: i64,
    pub sha256: String,
    /// `valid`, `invalid` (mode `validate`); `ready`, `needs_review` (`convert`); `queued`,
    /// `remediation_required`, `refused`, `withheld` (`send`); `failed`; absent while
    /// pending.
    pub outcome: Option<String>,
    /// The validation report (as `POST /v1/invoice/validate` answers it), the conversions
    /// made (`{"conversions": [...]}`), the send's answer (with the invoice's `id`), the
    /// failed identifiers (`{"identifiers": [...]}`), or `{"problem": ...}` for a document
    /// that could not be processed. Only in a single document's answer and in the results.
    #[schema(value_type = Option<Object>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
    pub finished_at: Option<String>,
}

impl From<DocumentRow> for BatchDocument {
    fn from(d: DocumentRow) -> Self {
        BatchDocument {
            seq: d.seq,
            name: d.name,
            size_bytes: d.size_bytes,
            sha256: d.sha256,
            outcome: d.outcome,
            result: d.result.and_then(|r| serde_json::from_str(&r).ok()),
            finished_at: d.finished_at,
        }
    }
}
