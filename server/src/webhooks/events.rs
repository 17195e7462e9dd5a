//! Event types and emission: an event is a row, and emitting it queues one delivery row per
//! enabled endpoint of the tenant subscribed to its type. The queue is the database, so
//! events survive restarts and can be emitted in the same transaction as the business
//! change they announce (the event exists exactly when the change was committed).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::AnyConnection;
use utoipa::ToSchema;

use crate::store::{self, StoreError};

/// What happened. The names are part of the API: they are stable, dotted, lowercase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
pub enum EventType {
    /// The transport layer confirmed delivery to the network or to the recipient.
    #[serde(rename = "invoice.delivered")]
    InvoiceDelivered,
    /// The buyer is processing the invoice (invoice response IP).
    #[serde(rename = "invoice.in_process")]
    InvoiceInProcess,
    /// The buyer accepted the invoice; next step payment (invoice response AP). Business
    /// acceptance, unlike `invoice.delivered`.
    #[serde(rename = "invoice.accepted")]
    InvoiceAccepted,
    /// The buyer reports the invoice paid (invoice response PD).
    #[serde(rename = "invoice.paid")]
    InvoicePaid,
    /// A transport or business rejection; followed by `invoice.remediation_required`.
    #[serde(rename = "invoice.rejected")]
    InvoiceRejected,
    /// Conditional acceptance, a timeout, or conflicting workflow data: a person should look.
    #[serde(rename = "invoice.attention_needed")]
    InvoiceAttentionNeeded,
    /// The document is closed and marked for archiving; its evidence package is ready.
    #[serde(rename = "invoice.archived")]
    InvoiceArchived,
    /// The final XML and PDF are ready to be fetched back into the archive or billing system.
    #[serde(rename = "invoice.artifacts_ready")]
    InvoiceArtifactsReady,
    /// The source system must correct the document and resubmit (reasons, rule ids, paths).
    #[serde(rename = "invoice.remediation_required")]
    InvoiceRemediationRequired,
    /// Processing failed on the service's side or permanently; the reason is in `data`.
    #[serde(rename = "invoice.failed")]
    InvoiceFailed,
    /// Sent by `POST /v1/webhooks/{id}/test` to check a receiver.
    #[serde(rename = "webhook.test")]
    WebhookTest,
    /// Every document of a batch has its outcome (or the batch failed as a whole).
    #[serde(rename = "batch.completed")]
    BatchCompleted,
    /// A document of a batch must be corrected and submitted again (its findings).
    #[serde(rename = "batch.remediation_required")]
    BatchRemediationRequired,
}

impl EventType {
    pub const ALL: [EventType; 13] = [
        EventType::InvoiceDelivered,
        EventType::InvoiceInProcess,
        EventType::InvoiceAccepted,
        EventType::InvoicePaid,
        EventType::InvoiceRejected,
        EventType::InvoiceAttentionNeeded,
        EventType::InvoiceArchived,
        EventType::InvoiceArtifactsReady,
        EventType::InvoiceRemediationRequired,
        EventType::InvoiceFailed,
        EventType::WebhookTest,
        EventType::BatchCompleted,
        EventType::BatchRemediationRequired,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventType::InvoiceDelivered => "invoice.delivered",
            EventType::InvoiceInProcess => "invoice.in_process",
            EventType::InvoiceAccepted => "invoice.accepted",
            EventType::InvoicePaid => "invoice.paid",
            EventType::InvoiceRejected => "invoice.rejected",
            EventType::InvoiceAttentionNeeded => "invoice.attention_needed",
            EventType::InvoiceArchived => "invoice.archived",
            EventType::InvoiceArtifactsReady => "invoice.artifacts_ready",
            EventType::InvoiceRemediationRequired => "invoice.remediation_required",
            EventType::InvoiceFailed => "invoice.failed",
            EventType::WebhookTest => "webhook.test",
            EventType::BatchCompleted => "batch.completed",
            EventType::BatchRemediationRequired => "batch.remediation_required",
        }
    }

    pub fn parse(s: &str) -> Option<EventType> {
        EventType::ALL.into_iter().find(|t| t.as_str() == s)
    }

    pub fn names() -> Vec<&'static str> {
        EventType::ALL.into_iter().map(EventType::as_str).collect()
    }
}

/// An emitted event and the deliveries queued for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Emitted {
    /// `msg_...`, sent as `webhook-id`.
    pub event_id: String,
    pub delivery_ids: Vec<String>,
}

/// A finding as remediation events carry it: what the source system needs to fix it.
pub fn finding_data(f: &invex_engine::report::Finding) -> Value {
    serde_json::json!({
        "rule_id": f.rule_id,
        "severity": f.severity,
        "path": f.location.path,
        "line": f.location.line,
        "message": f.message,
        "remediation": f.remediation,
        "owner": f.owner,
        "business_terms": f.business_terms,
    })
}

/// The body every attempt sends: `{"type", "timestamp", "data"}`.
pub fn payload(event_type: EventType, timestamp: &str, data: Value) -> String {
    serde_json::json!({
        "type": event_type.as_str(),
        "timestamp": timestamp,
        "data": data,
    })
    .to_string()
}

/// Emit `event_type` for `tenant_id`: store the event and queue a delivery to every
/// enabled endpoint of the tenant subscribed to it. Returns at once; the worker sends.
///
/// `conn` may be a pooled connection or a transaction (`&mut *tx`): inside the caller's
/// transaction the event is queued only if the transaction commits. `correlation_id` is
/// sent as `invex-correlation-id` and shown in the delivery log, for support. Call
/// [`super::worker::wake`] after the commit so delivery starts before the next poll.
/// Emits write first (the event row), so the transaction takes SQLite's write lock at once.
pub async fn emit(
    conn: &mut AnyConnection,
    tenant_id: &str,
    event_type: EventType,
    correlation_id: Option<&str>,
    data: Value,
) -> Result<Emitted, StoreError> {
    emit_to(conn, tenant_id, event_type, correlation_id, data, None).await
}

/// As [`emit`]; with `only` set, to that endpoint alone, whatever its subscriptions.
pub(crate) async fn emit_to(
    conn: &mut AnyConnection,
    tenant_id: &str,
    event_type: EventType,
    correlation_id: Option<&str>,
    data: Value,
    only: Option<&str>,
) -> Result<Emitted, StoreError> {
    let event_id = crate::ids::new_id("msg");
    let now = crate::clock::now();
    let body = payload(event_type, &now, data);
    store::webhooks::insert_event(
        &mut *conn,
        &event_id,
        tenant_id,
        event_type.as_str(),
        correlation_id,
        &body,
        &now,
    )
    .await?;
    let endpoints = store::webhooks::enabled_endpoints(&mut *conn, tenant_id).await?;
    let mut delivery_ids = Vec::new();
    for endpoint in endpoints {
        let wanted = match only {
            Some(id) => endpoint.id == id,
            None => endpoint.subscribes_to(event_type.as_str()),
        };
        if wanted {
            let id =
                store::webhooks::queue_delivery(&mut *conn, &event_id, &endpoint.id, tenant_id)
                    .await?;
            delivery_ids.push(id);
        }
    }
    Ok(Emitted {
        event_id,
        delivery_ids,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_serde() {
        for t in EventType::ALL {
            assert_eq!(EventType::parse(t.as_str()), Some(t));
            assert_eq!(
                serde_json::to_value(t).expect("json"),
                Value::String(t.as_str().into())
            );
        }
        assert_eq!(EventType::parse("invoice.sent"), None);
    }
}
