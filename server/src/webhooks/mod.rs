//! Webhooks (Standard Webhooks): tenants register endpoints for event types; the server
//! emits events into a durable queue in the database and a background worker delivers
//! them signed, retrying with backoff and logging every attempt.
//!
//! To emit from elsewhere in the server (inside the business transaction when there is
//! one): `webhooks::emit(&mut *tx, tenant_id, EventType::InvoiceDelivered, Some(corr), data)`,
//! or [`emit_now`] with the store outside a transaction. After committing a transaction
//! that emitted, call [`worker::wake`] so delivery starts at once rather than at the next
//! poll.

pub mod config;
pub mod events;
pub mod manage;
pub mod signing;
pub mod target;
pub mod worker;

pub use config::WebhooksConfig;
pub use events::{emit, Emitted, EventType};
pub use target::{TargetPolicy, UrlError, MAX_URL_LEN};
pub use worker::WorkerHandle;

use crate::store::{Store, StoreError};

/// [`emit`] in a transaction of its own.
pub async fn emit_now(
    store: &Store,
    tenant_id: &str,
    event_type: EventType,
    correlation_id: Option<&str>,
    data: serde_json::Value,
) -> Result<Emitted, StoreError> {
    let mut tx = store.pool().begin().await?;
    let emitted = emit(&mut tx, tenant_id, event_type, correlation_id, data).await?;
    tx.commit().await?;
    worker::wake();
    Ok(emitted)
}
