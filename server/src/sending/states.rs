//! The invoice life cycle. The interface names no states; these are ours, and every change
//! of status goes through [`Status::can_move_to`], so an illegal transition is refused (and
//! logged by the caller) instead of silently rewriting history.
//!
//! ```text
//! received ─► validated ─► queued ─► sending ─► transmitted ─► delivered (MLS AB)
//!    │                        ▲         │            │             │
//!    └► remediation_required  └─retry───┘            └► failed     ├► in_process (IP)
//!                                                                  ├► under_query (UQ) ─┐
//!                                                                  ├► conditionally_accepted (CA)
//!                                                                  ├► accepted (AP) ─► paid (PD)
//!                                                                  └► rejected (RE)
//! accepted / paid / rejected / conditionally_accepted / failed / remediation_required ─► archived
//! ```
//! An MLS AB (delivered) is never business acceptance: the workflow waits for a further event.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Accepted by invex, not yet validated.
    Received,
    /// Validated without fatal findings.
    Validated,
    /// Fatal findings: stored, not sent; the source system fixes and resubmits.
    RemediationRequired,
    /// Waiting in the outbox for the delivery worker.
    Queued,
    /// Handed to the delivery partner; no answer yet.
    Sending,
    /// The partner accepted it for transmission (a transmission id exists).
    Transmitted,
    /// The receiver's access point has it (MLS AB); not business acceptance.
    Delivered,
    /// The buyer is processing it (invoice response IP).
    InProcess,
    /// The buyer has a question; processing halts until the seller answers (UQ).
    UnderQuery,
    /// Accepted with conditions (CA).
    ConditionallyAccepted,
    /// Accepted; next step payment (AP).
    Accepted,
    /// Rejected by the network (MLS RE) or the buyer (invoice response RE).
    Rejected,
    /// Paid (PD).
    Paid,
    /// Could not be delivered (delivery failure, partner refusal).
    Failed,
    /// Closed; the evidence package is final.
    Archived,
}

impl Status {
    /// Whether an invoice in this status was handed on for delivery and not refused: queued,
    /// in flight, delivered, or any answer of the buyer but a rejection. A second send of
    /// the same document is then a duplicate.
    pub fn went_out(self) -> bool {
        !matches!(
            self,
            Status::Received
                | Status::Validated
                | Status::RemediationRequired
                | Status::Rejected
                | Status::Failed
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Received => "received",
            Status::Validated => "validated",
            Status::RemediationRequired => "remediation_required",
            Status::Queued => "queued",
            Status::Sending => "sending",
            Status::Transmitted => "transmitted",
            Status::Delivered => "delivered",
            Status::InProcess => "in_process",
            Status::UnderQuery => "under_query",
            Status::ConditionallyAccepted => "conditionally_accepted",
            Status::Accepted => "accepted",
            Status::Rejected => "rejected",
            Status::Paid => "paid",
            Status::Failed => "failed",
            Status::Archived => "archived",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        ALL.iter().copied().find(|v| v.as_str() == s)
    }

    /// Whether the life cycle allows moving from `self` to `next`.
    pub fn can_move_to(self, next: Status) -> bool {
        use Status::*;
        // Buyer responses may follow one another (IP then UQ then AP ...).
        let responded = [InProcess, UnderQuery, ConditionallyAccepted];
        match (self, next) {
            (Received, Validated | RemediationRequired) => true,
            (Validated, Queued) => true,
            (Queued, Sending) => true,
            // A failed attempt goes back to the queue for a retry.
            (Sending, Transmitted | Queued | Failed | Rejected) => true,
            (Transmitted, Delivered | Rejected | Failed) => true,
            (Delivered, InProcess | UnderQuery | ConditionallyAccepted | Accepted | Rejected) => {
                true
            }
            (from, InProcess | UnderQuery | ConditionallyAccepted | Accepted | Rejected)
                if responded.contains(&from) && from != next =>
            {
                true
            }
            (Accepted, Paid) => true,
            (
                Accepted | Paid | Rejected | ConditionallyAccepted | Failed | RemediationRequired,
                Archived,
            ) => true,
            _ => false,
        }
    }
}

pub const ALL: [Status; 15] = [
    Status::Received,
    Status::Validated,
    Status::RemediationRequired,
    Status::Queued,
    Status::Sending,
    Status::Transmitted,
    Status::Delivered,
    Status::InProcess,
    Status::UnderQuery,
    Status::ConditionallyAccepted,
    Status::Accepted,
    Status::Rejected,
    Status::Paid,
    Status::Failed,
    Status::Archived,
];

#[cfg(test)]
mod tests {
    use super::Status::*;
    use super::*;

    #[test]
    fn the_happy_path_is_allowed_and_history_cannot_be_rewritten() {
        let path = [
            Received,
            Validated,
            Queued,
            Sending,
            Transmitted,
            Delivered,
            Accepted,
            Paid,
            Archived,
        ];
        for w in path.windows(2) {
            assert!(w[0].can_move_to(w[1]), "{:?} -> {:?}", w[0], w[1]);
        }
        // Backwards or skipping steps is refused.
        assert!(!Delivered.can_move_to(Queued));
        assert!(!Queued.can_move_to(Delivered));
        assert!(!RemediationRequired.can_move_to(Queued));
        assert!(!Archived.can_move_to(Accepted));
        assert!(!Paid.can_move_to(Rejected));
        // An ACK (delivered) is not acceptance, and acceptance needs delivery first.
        assert!(!Transmitted.can_move_to(Accepted));
    }

    #[test]
    fn buyer_responses_may_follow_one_another() {
        assert!(Delivered.can_move_to(UnderQuery));
        assert!(UnderQuery.can_move_to(Accepted));
        assert!(InProcess.can_move_to(Rejected));
        assert!(!UnderQuery.can_move_to(UnderQuery));
    }

    #[test]
    fn names_round_trip() {
        for s in ALL {
            assert_eq!(Status::parse(s.as_str()), Some(s));
            assert_eq!(
                serde_json::to_value(s).ok(),
                Some(serde_json::Value::String(s.as_str().into()))
            );
        }
    }
}
