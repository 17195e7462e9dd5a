//! Timeline entries: our own events and the partner's response codes, each with its
//! business meaning in plain words and the status it moves the invoice to.

use super::states::Status;
use crate::store::{self, NewEvent};

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
        at: store::now(),
        source: INVEX.to_string(),
        code: code.to_string(),
        status: Some(status.as_str().to_string()),
        meaning,
        correlation_id: correlation_id.to_string(),
        detail: None,
    }
}
