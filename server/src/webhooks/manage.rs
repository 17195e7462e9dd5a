//! What a tenant does to its endpoints besides registering them: rotate the secret, send a
//! test event, redeliver an event. One implementation for the API and the console.

use crate::store::webhooks::EndpointRecord;
use crate::store::{Store, StoreError};

use super::{events, signing, worker, EventType};

/// How long the old secret keeps signing after a rotation (both signatures are sent).
pub const ROTATION_OVERLAP_HOURS: i64 = 24;

/// A queued event and its delivery to the endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Queued {
    pub event_id: String,
    pub delivery_id: String,
}

/// Give `record` a new secret, the old one signing alongside for
/// [`ROTATION_OVERLAP_HOURS`]; returns the endpoint as stored (with the new secret, which
/// the caller shows once).
pub async fn rotate_secret(
    store: &Store,
    mut record: EndpointRecord,
) -> Result<EndpointRecord, StoreError> {
    let expires = chrono::Utc::now() + chrono::Duration::hours(ROTATION_OVERLAP_HOURS);
    record.previous_secret = Some(std::mem::replace(
        &mut record.secret,
        signing::generate_secret(),
    ));
    record.previous_expires_at = Some(expires.to_rfc3339_opts(chrono::SecondsFormat::Micros, true));
    record.updated_at = crate::clock::now();
    store.update_webhook_endpoint(&record).await?;
    tracing::info!(webhook_id = %record.id, "webhook secret rotated");
    Ok(record)
}

/// Queue a `webhook.test` event to the endpoint alone. `None`: nothing was queued (the
/// endpoint was disabled or deleted since it was read), and nothing is kept.
pub async fn send_test(
    store: &Store,
    tenant_id: &str,
    endpoint_id: &str,
    environment: &str,
    correlation_id: Option<&str>,
) -> Result<Option<Queued>, StoreError> {
    let mut tx = store.pool().begin().await?;
    let emitted = events::emit_to(
        &mut tx,
        tenant_id,
        EventType::WebhookTest,
        correlation_id,
        serde_json::json!({
            "webhook_id": endpoint_id,
            "message": "a test event sent on request; no invoice is concerned",
            "environment": environment,
        }),
        Some(endpoint_id),
    )
    .await?;
    let Some(delivery_id) = emitted.delivery_ids.into_iter().next() else {
        tx.rollback().await?;
        return Ok(None);
    };
    tx.commit().await?;
    worker::wake();
    Ok(Some(Queued {
        event_id: emitted.event_id,
        delivery_id,
    }))
}

/// Queue the event of an earlier delivery to the endpoint again (same `webhook-id`, a new
/// delivery). `None`: the endpoint has no such delivery in this tenant.
pub async fn redeliver(
    store: &Store,
    tenant_id: &str,
    endpoint_id: &str,
    delivery_id: &str,
) -> Result<Option<Queued>, StoreError> {
    let Some(event_id) = store
        .webhook_delivery_event(tenant_id, endpoint_id, delivery_id)
        .await?
    else {
        return Ok(None);
    };
    let new_id = store
        .requeue_webhook_event(&event_id, endpoint_id, tenant_id)
        .await?;
    worker::wake();
    Ok(Some(Queued {
        event_id,
        delivery_id: new_id,
    }))
}
