//! Timeline entries: our own events and the partner's response codes, each with its
//! business meaning in plain words and the status it moves the invoice to.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::states::Status;
use crate::store::{self, EventRecord, NewEvent, GENESIS_HASH};

/// Where an event came from.
pub const INVEX: &str = "invex";

/// A response code from the network (MLS) or the buyer (Invoice Response).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Response {
    /// Message Level Status.
    Mls(&'static str),
    /// Invoice Response (buyer, business level).
    Invoice(&'static str),
}

impl Response {
    pub fn code(self) -> String {
        match self {
            Response::Mls(c) => format!("MLS:{c}"),
            Response::Invoice(c) => format!("IR:{c}"),
        }
    }

    /// What the code means for the sender, and the status it leads to (None: no change).
    /// `reason` is the MLS reason code or the buyer's clarification.
    pub fn meaning(self, reason: Option<&str>) -> (String, Option<Status>) {
        let why = reason.map(|r| format!(" ({r})")).unwrap_or_default();
        match self {
            Response::Mls("AB") => (
                "delivered to the receiver's access point, not yet confirmed by the receiving \
                 system; this is not business acceptance — wait for a further response"
                    .into(),
                Some(Status::Delivered),
            ),
            Response::Mls("AP") => (
                "delivered and accepted by the receiving system (technical acceptance)".into(),
                None,
            ),
            Response::Mls("RE") if reason.is_some_and(|r| r.starts_with("FD")) => (
                format!("delivery failed{why}; the receiver never got the invoice"),
                Some(Status::Failed),
            ),
            Response::Mls("RE") => (
                format!(
                    "rejected by the receiving access point{why}: fix the document and send a \
                     corrected one"
                ),
                Some(Status::Rejected),
            ),
            Response::Invoice("AB") => (
                "the buyer received the invoice and can read it".into(),
                None,
            ),
            Response::Invoice("IP") => (
                "the buyer is processing the invoice".into(),
                Some(Status::InProcess),
            ),
            Response::Invoice("UQ") => (
                format!("the buyer has a question{why}; processing is halted until you answer"),
                Some(Status::UnderQuery),
            ),
            Response::Invoice("CA") => (
                format!("the buyer accepted the invoice with conditions{why}"),
                Some(Status::ConditionallyAccepted),
            ),
            Response::Invoice("RE") => (
                format!("the buyer rejected the invoice{why}; it will not be paid as sent"),
                Some(Status::Rejected),
            ),
            Response::Invoice("AP") => (
                "the buyer accepted the invoice; the next step is payment".into(),
                Some(Status::Accepted),
            ),
            Response::Invoice("PD") => (
                "the buyer reports the invoice paid".into(),
                Some(Status::Paid),
            ),
            other => (format!("response {}{why}", other.code()), None),
        }
    }
}

/// One of our own events, moving the invoice to `status`.
pub fn own(code: &str, status: Status, meaning: String, correlation_id: &str) -> NewEvent {
    NewEvent {
        at: crate::clock::now(),
        source: INVEX.to_string(),
        code: code.to_string(),
        status: Some(status.as_str().to_string()),
        meaning,
        correlation_id: correlation_id.to_string(),
        detail: None,
    }
}

/// One entry of a message timeline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TimelineEntry {
    /// Position in the timeline, from 1.
    pub seq: i64,
    pub at: String,
    /// `invex` for our own events, else the delivery partner.
    pub source: String,
    /// Our event (`received`, `validated`, `queued`, `sending`, `transmitted`, `failed` …) or
    /// a response code: `MLS:AB|AP|RE` (network), `IR:AB|IP|UQ|CA|RE|AP|PD` (buyer).
    pub code: String,
    /// The status the event moved the invoice to, when it moved it.
    pub status: Option<String>,
    /// What it means, in plain words.
    pub meaning: String,
    /// Invoice id for our events, transmission id for the partner's.
    pub correlation_id: String,
    /// Reason code or clarification, when the event carries one.
    pub detail: Option<String>,
    /// SHA-256 chain: each entry's hash covers the previous hash and the entry.
    pub prev_hash: String,
    pub hash: String,
}

/// An invoice of a tenant with its whole timeline.
pub struct InvoiceTimeline {
    pub invoice: store::InvoiceRecord,
    /// The status the events say (the last one an event set), else the stored one.
    pub status: String,
    pub entries: Vec<TimelineEntry>,
    /// The last entry's hash (the chain head).
    pub chain_head: String,
}

/// The invoice `invoice_id` of `tenant_id` with its events; `None` when the tenant has no
/// such invoice.
pub async fn of(
    store: &store::Store,
    tenant_id: &str,
    invoice_id: &str,
) -> Result<Option<InvoiceTimeline>, store::StoreError> {
    // Events first, then the invoice: a delivery committing in between can only make the
    // invoice row newer than the events read, and the status is taken from the events, so
    // the answer is always one consistent timeline.
    let events = store.invoice_events(invoice_id).await?;
    let Some(invoice) = store.invoice(tenant_id, invoice_id).await? else {
        return Ok(None);
    };
    let status = events
        .iter()
        .rev()
        .find_map(|e| e.status.clone())
        .unwrap_or_else(|| invoice.status.clone());
    let chain_head = events
        .last()
        .map(|e| e.hash.clone())
        .unwrap_or_else(|| GENESIS_HASH.to_string());
    Ok(Some(InvoiceTimeline {
        invoice,
        status,
        entries: events.into_iter().map(TimelineEntry::from).collect(),
        chain_head,
    }))
}

impl From<EventRecord> for TimelineEntry {
    fn from(e: EventRecord) -> TimelineEntry {
        TimelineEntry {
            seq: e.seq,
            at: e.at,
            source: e.source,
            code: e.code,
            status: e.status,
            meaning: e.meaning,
            correlation_id: e.correlation_id,
            detail: e.detail,
            prev_hash: e.prev_hash,
            hash: e.hash,
        }
    }
}

/// Check a timeline's hash chain; its head, or what is wrong (the first broken entry).
pub fn verify_chain(entries: &[TimelineEntry]) -> Result<String, String> {
    let mut prev = GENESIS_HASH.to_string();
    for (i, e) in entries.iter().enumerate() {
        let expected_seq = i as i64 + 1;
        if e.seq != expected_seq {
            return Err(format!("entry {expected_seq} is numbered {}", e.seq));
        }
        if e.prev_hash != prev {
            return Err(format!(
                "entry {} does not follow entry {}: its prev_hash differs",
                e.seq,
                e.seq - 1
            ));
        }
        let fields = NewEvent {
            at: e.at.clone(),
            source: e.source.clone(),
            code: e.code.clone(),
            status: e.status.clone(),
            meaning: e.meaning.clone(),
            correlation_id: e.correlation_id.clone(),
            detail: e.detail.clone(),
        };
        let hash = store::entry_hash(&prev, e.seq, &fields);
        if hash != e.hash {
            return Err(format!(
                "entry {} ({}) was changed: its hash does not match its content",
                e.seq, e.code
            ));
        }
        prev = hash;
    }
    Ok(prev)
}
