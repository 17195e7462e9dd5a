//! Webhook endpoints, events, the delivery queue and the attempt log.

use sqlx::any::AnyRow;
use sqlx::{Any, AnyConnection, Row};

use super::{opt_text, text, Backend, Store, StoreError};

/// An endpoint as stored, secrets included (never answered as such).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointRecord {
    pub id: String,
    pub tenant_id: String,
    pub url: String,
    pub description: Option<String>,
    pub event_types: Vec<String>,
    pub enabled: bool,
    pub disabled_reason: Option<String>,
    /// `whsec_...` in clear: signing needs it (see the migration).
    pub secret: String,
    pub previous_secret: Option<String>,
    pub previous_expires_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl EndpointRecord {
    pub fn subscribes_to(&self, event_type: &str) -> bool {
        self.event_types.iter().any(|t| t == event_type)
    }

    fn from_row(row: &AnyRow) -> Result<EndpointRecord, sqlx::Error> {
        let types = text(row, "event_types")?;
        Ok(EndpointRecord {
            id: text(row, "id")?,
            tenant_id: text(row, "tenant_id")?,
            url: text(row, "url")?,
            description: opt_text(row, "description")?,
            // Written by this module as a JSON array; a damaged value subscribes to nothing.
            event_types: serde_json::from_str(&types).unwrap_or_default(),
            enabled: row.try_get::<i64, _>("enabled")? != 0,
            disabled_reason: opt_text(row, "disabled_reason")?,
            secret: text(row, "secret")?,
            previous_secret: opt_text(row, "previous_secret")?,
            previous_expires_at: opt_text(row, "previous_expires_at")?,
            created_at: text(row, "created_at")?,
            updated_at: text(row, "updated_at")?,
        })
    }
}

const ENDPOINT_COLUMNS: &str = "id, tenant_id, url, description, event_types, enabled, \
     disabled_reason, secret, previous_secret, previous_expires_at, created_at, updated_at";

/// A delivery claimed by a worker, with what it needs to send it.
#[derive(Clone, Debug)]
pub struct DueDelivery {
    pub id: String,
    pub event_id: String,
    pub endpoint_id: String,
    pub tenant_id: String,
    /// Attempts made before this one.
    pub attempts: i64,
    pub event_type: String,
    pub correlation_id: Option<String>,
    pub payload: String,
    pub url: String,
    pub secret: String,
    pub previous_secret: Option<String>,
    pub previous_expires_at: Option<String>,
}

/// One attempt, as logged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptRecord {
    pub id: String,
    pub delivery_id: String,
    pub endpoint_id: String,
    pub tenant_id: String,
    pub event_id: String,
    pub event_type: String,
    pub attempt: i64,
    pub http_status: Option<i64>,
    pub error: Option<String>,
    pub duration_ms: i64,
    pub correlation_id: Option<String>,
    pub attempted_at: String,
    /// The delivery's status now (`pending`, `delivered`, `failed`, `cancelled`).
    pub delivery_status: String,
    /// When the delivery's next attempt is due, while it is `pending`.
    pub next_attempt_at: Option<String>,
}

/// Where a delivery goes after an attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NextStep {
    Delivered,
    /// Retry at this time (RFC 3339).
    RetryAt(String),
    Failed,
}

pub(crate) async fn insert_event(
    conn: &mut AnyConnection,
    id: &str,
    tenant_id: &str,
    event_type: &str,
    correlation_id: Option<&str>,
    payload: &str,
    created_at: &str,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO webhook_events (id, tenant_id, event_type, correlation_id, payload, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(id)
    .bind(tenant_id)
    .bind(event_type)
    .bind(correlation_id)
    .bind(payload)
    .bind(created_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub(crate) async fn enabled_endpoints(
    conn: &mut AnyConnection,
    tenant_id: &str,
) -> Result<Vec<EndpointRecord>, StoreError> {
    let rows = sqlx::query(&format!(
        "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints \
         WHERE tenant_id = $1 AND enabled = 1 ORDER BY created_at, id"
    ))
    .bind(tenant_id)
    .fetch_all(conn)
    .await?;
    Ok(rows
        .iter()
        .map(EndpointRecord::from_row)
        .collect::<Result<_, _>>()?)
}

/// Queue a delivery of `event_id` to `endpoint_id`, due now; returns its id.
pub(crate) async fn queue_delivery<'c, E>(
    executor: E,
    event_id: &str,
    endpoint_id: &str,
    tenant_id: &str,
) -> Result<String, StoreError>
where
    E: sqlx::Executor<'c, Database = Any>,
{
    let id = crate::ids::new_id("dlv");
    let now = crate::clock::now();
    sqlx::query(
        "INSERT INTO webhook_deliveries (id, event_id, endpoint_id, tenant_id, status, attempts, \
         next_attempt_at, claimed_until, claimed_by, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, 'pending', 0, $5, NULL, NULL, $5, $5)",
    )
    .bind(&id)
    .bind(event_id)
    .bind(endpoint_id)
    .bind(tenant_id)
    .bind(&now)
    .execute(executor)
    .await?;
    Ok(id)
}

/// Disable an endpoint on the server's own decision and stop its pending deliveries.
async fn disable_endpoint(
    tx: &mut sqlx::Transaction<'_, Any>,
    id: &str,
    reason: &str,
) -> Result<(), StoreError> {
    let now = crate::clock::now();
    sqlx::query(
        "UPDATE webhook_endpoints SET enabled = 0, disabled_reason = $1, updated_at = $2 \
         WHERE id = $3",
    )
    .bind(reason)
    .bind(&now)
    .bind(id)
    .execute(&mut **tx)
    .await?;
    cancel_pending(&mut **tx, id, &now).await?;
    Ok(())
}

/// Stop the pending deliveries of an endpoint (it was disabled).
async fn cancel_pending<'c, E>(executor: E, endpoint_id: &str, now: &str) -> Result<(), StoreError>
where
    E: sqlx::Executor<'c, Database = Any>,
{
    sqlx::query(
        "UPDATE webhook_deliveries SET status = 'cancelled', claimed_until = NULL, \
         claimed_by = NULL, updated_at = $1 WHERE endpoint_id = $2 AND status = 'pending'",
    )
    .bind(now)
    .bind(endpoint_id)
    .execute(executor)
    .await?;
    Ok(())
}

impl Store {
    /// Store a new endpoint unless its tenant has `max_per_tenant` already; whether it was
    /// stored. Counted and inserted under the tenant's lock, so concurrent registrations
    /// (on any instance) cannot pass the cap together.
    pub async fn insert_webhook_endpoint(
        &self,
        e: &EndpointRecord,
        max_per_tenant: u32,
    ) -> Result<bool, StoreError> {
        let mut tx = self.tenant_transaction(&e.tenant_id).await?;
        let existing: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM webhook_endpoints WHERE tenant_id = $1")
                .bind(&e.tenant_id)
                .fetch_one(&mut *tx)
                .await?;
        if existing >= i64::from(max_per_tenant) {
            return Ok(false);
        }
        sqlx::query(&format!(
            "INSERT INTO webhook_endpoints ({ENDPOINT_COLUMNS}) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
        ))
        .bind(&e.id)
        .bind(&e.tenant_id)
        .bind(&e.url)
        .bind(e.description.as_deref())
        .bind(serde_json::to_string(&e.event_types).unwrap_or_else(|_| "[]".into()))
        .bind(i64::from(e.enabled))
        .bind(e.disabled_reason.as_deref())
        .bind(&e.secret)
        .bind(e.previous_secret.as_deref())
        .bind(e.previous_expires_at.as_deref())
        .bind(&e.created_at)
        .bind(&e.updated_at)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// A tenant's endpoints, oldest first.
    /// A page of the tenant's endpoints, newest first: at most `limit`, older than `before`.
    pub async fn webhook_endpoints(
        &self,
        tenant_id: &str,
        before: Option<&str>,
        limit: i64,
    ) -> Result<Vec<EndpointRecord>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE tenant_id = $1 AND id < $2 \
             ORDER BY id DESC LIMIT $3"
        ))
        .bind(tenant_id)
        .bind(before.unwrap_or("~"))
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .iter()
            .map(EndpointRecord::from_row)
            .collect::<Result<_, _>>()?)
    }

    /// The endpoint `id` of `tenant_id` (other tenants' endpoints are not found).
    pub async fn webhook_endpoint(
        &self,
        tenant_id: &str,
        id: &str,
    ) -> Result<Option<EndpointRecord>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE tenant_id = $1 AND id = $2"
        ))
        .bind(tenant_id)
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.as_ref().map(EndpointRecord::from_row).transpose()?)
    }

    /// Write an endpoint's changeable fields; disabling it cancels its pending deliveries.
    pub async fn update_webhook_endpoint(&self, e: &EndpointRecord) -> Result<(), StoreError> {
        let mut tx = self.pool().begin().await?;
        sqlx::query(
            "UPDATE webhook_endpoints SET url = $1, description = $2, event_types = $3, \
             enabled = $4, disabled_reason = $5, secret = $6, previous_secret = $7, \
             previous_expires_at = $8, updated_at = $9 WHERE tenant_id = $10 AND id = $11",
        )
        .bind(&e.url)
        .bind(e.description.as_deref())
        .bind(serde_json::to_string(&e.event_types).unwrap_or_else(|_| "[]".into()))
        .bind(i64::from(e.enabled))
        .bind(e.disabled_reason.as_deref())
        .bind(&e.secret)
        .bind(e.previous_secret.as_deref())
        .bind(e.previous_expires_at.as_deref())
        .bind(&e.updated_at)
        .bind(&e.tenant_id)
        .bind(&e.id)
        .execute(&mut *tx)
        .await?;
        if !e.enabled {
            cancel_pending(&mut *tx, &e.id, &e.updated_at).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Delete an endpoint with its deliveries and their log; false when not found.
    pub async fn delete_webhook_endpoint(
        &self,
        tenant_id: &str,
        id: &str,
    ) -> Result<bool, StoreError> {
        // Writes only (see `record_webhook_attempt`), each limited to the tenant's rows.
        let mut tx = self.pool().begin().await?;
        for table in ["webhook_attempts", "webhook_deliveries"] {
            sqlx::query(&format!(
                "DELETE FROM {table} WHERE tenant_id = $1 AND endpoint_id = $2"
            ))
            .bind(tenant_id)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        }
        let found = sqlx::query("DELETE FROM webhook_endpoints WHERE tenant_id = $1 AND id = $2")
            .bind(tenant_id)
            .bind(id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if found == 0 {
            // Nothing of this tenant was there; nothing was removed.
            tx.rollback().await?;
            return Ok(false);
        }
        tx.commit().await?;
        Ok(true)
    }

    /// Queue `event_id` again to `endpoint_id` (a redelivery); returns the new delivery id.
    pub async fn requeue_webhook_event(
        &self,
        event_id: &str,
        endpoint_id: &str,
        tenant_id: &str,
    ) -> Result<String, StoreError> {
        queue_delivery(self.pool(), event_id, endpoint_id, tenant_id).await
    }

    /// The event of delivery `delivery_id` of endpoint `endpoint_id` in `tenant_id`.
    pub async fn webhook_delivery_event(
        &self,
        tenant_id: &str,
        endpoint_id: &str,
        delivery_id: &str,
    ) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT event_id FROM webhook_deliveries WHERE tenant_id = $1 AND endpoint_id = $2 \
             AND id = $3",
        )
        .bind(tenant_id)
        .bind(endpoint_id)
        .bind(delivery_id)
        .fetch_optional(self.pool())
        .await?)
    }

    /// Claim up to `limit` due deliveries for `token` (one poll of one worker) until
    /// `lease_until`, and return them in queue order. On PostgreSQL, `FOR UPDATE SKIP LOCKED` keeps concurrent workers off
    /// each other's rows; SQLite runs one writer at a time, so the single UPDATE is atomic.
    /// Rows whose lease ran out (a worker died mid-attempt) are due again.
    pub async fn claim_webhook_deliveries(
        &self,
        token: &str,
        now: &str,
        lease_until: &str,
        limit: u32,
    ) -> Result<Vec<DueDelivery>, StoreError> {
        let lock = match self.backend() {
            Backend::Postgres => " FOR UPDATE SKIP LOCKED",
            Backend::Sqlite => "",
        };
        sqlx::query(&format!(
            "UPDATE webhook_deliveries SET claimed_by = $1, claimed_until = $2 \
             WHERE id IN (SELECT id FROM webhook_deliveries WHERE status = 'pending' \
             AND next_attempt_at <= $3 AND (claimed_until IS NULL OR claimed_until < $3) \
             ORDER BY next_attempt_at, id LIMIT $4{lock})"
        ))
        .bind(token)
        .bind(lease_until)
        .bind(now)
        .bind(i64::from(limit))
        .execute(self.pool())
        .await?;
        let rows = sqlx::query(
            "SELECT d.id, d.event_id, d.endpoint_id, d.tenant_id, d.attempts, e.event_type, \
             e.correlation_id, e.payload, p.url, p.secret, p.previous_secret, p.previous_expires_at \
             FROM webhook_deliveries d \
             JOIN webhook_events e ON e.id = d.event_id \
             JOIN webhook_endpoints p ON p.id = d.endpoint_id \
             WHERE d.claimed_by = $1 AND d.status = 'pending' ORDER BY d.id",
        )
        .bind(token)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(DueDelivery {
                    id: text(row, "id")?,
                    event_id: text(row, "event_id")?,
                    endpoint_id: text(row, "endpoint_id")?,
                    tenant_id: text(row, "tenant_id")?,
                    attempts: row.try_get("attempts")?,
                    event_type: text(row, "event_type")?,
                    correlation_id: opt_text(row, "correlation_id")?,
                    payload: text(row, "payload")?,
                    url: text(row, "url")?,
                    secret: text(row, "secret")?,
                    previous_secret: opt_text(row, "previous_secret")?,
                    previous_expires_at: opt_text(row, "previous_expires_at")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)
    }

    /// Give back the pending rows claimed by the polls of worker `token` (`{token}.{n}`),
    /// when it stops mid-batch.
    pub async fn release_webhook_claims(&self, token: &str) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE webhook_deliveries SET claimed_until = NULL, claimed_by = NULL \
             WHERE claimed_by LIKE $1 AND status = 'pending'",
        )
        .bind(format!("{token}.%"))
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Log an attempt and move its delivery on, releasing the claim of `token`; with
    /// `disable` (the receiver answered 410), disable the endpoint in the same transaction,
    /// with that reason.
    pub async fn record_webhook_attempt(
        &self,
        attempt: &AttemptRecord,
        token: &str,
        next: &NextStep,
        disable: Option<&str>,
    ) -> Result<(), StoreError> {
        let (status, next_at) = match next {
            NextStep::Delivered => ("delivered", attempt.attempted_at.as_str()),
            NextStep::RetryAt(at) => ("pending", at.as_str()),
            NextStep::Failed => ("failed", attempt.attempted_at.as_str()),
        };
        // Transactions here write first: on SQLite (WAL) a transaction that reads and then
        // writes fails at once with SQLITE_BUSY when another writer committed in between.
        let mut tx = self.pool().begin().await?;
        // The endpoint may have been deleted, with its deliveries, while the request was
        // out: then there is nothing left to log the attempt against.
        sqlx::query(
            "INSERT INTO webhook_attempts (id, delivery_id, endpoint_id, tenant_id, event_id, \
             event_type, attempt, http_status, error, duration_ms, correlation_id, attempted_at) \
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 \
             WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE id = $2)",
        )
        .bind(&attempt.id)
        .bind(&attempt.delivery_id)
        .bind(&attempt.endpoint_id)
        .bind(&attempt.tenant_id)
        .bind(&attempt.event_id)
        .bind(&attempt.event_type)
        .bind(attempt.attempt)
        .bind(attempt.http_status)
        .bind(attempt.error.as_deref())
        .bind(attempt.duration_ms)
        .bind(attempt.correlation_id.as_deref())
        .bind(&attempt.attempted_at)
        .execute(&mut *tx)
        .await?;
        // Only the claim holder moves the row on: after a lost lease another worker owns it.
        sqlx::query(
            "UPDATE webhook_deliveries SET status = $1, attempts = $2, next_attempt_at = $3, \
             claimed_until = NULL, claimed_by = NULL, updated_at = $4 \
             WHERE id = $5 AND claimed_by = $6 AND status = 'pending'",
        )
        .bind(status)
        .bind(attempt.attempt)
        .bind(next_at)
        .bind(crate::clock::now())
        .bind(&attempt.delivery_id)
        .bind(token)
        .execute(&mut *tx)
        .await?;
        if let Some(reason) = disable {
            disable_endpoint(&mut tx, &attempt.endpoint_id, reason).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Forget what finished before `cutoff` (RFC 3339): attempts, then deliveries no longer
    /// pending with no attempt left, then events with no delivery left. Returns the
    /// attempts removed.
    pub async fn prune_webhooks(&self, cutoff: &str) -> Result<u64, StoreError> {
        let mut tx = self.pool().begin().await?;
        let attempts = sqlx::query("DELETE FROM webhook_attempts WHERE attempted_at < $1")
            .bind(cutoff)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        sqlx::query(
            "DELETE FROM webhook_deliveries WHERE status <> 'pending' AND updated_at < $1 \
             AND NOT EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.delivery_id = webhook_deliveries.id)",
        )
        .bind(cutoff)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "DELETE FROM webhook_events WHERE created_at < $1 \
             AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)",
        )
        .bind(cutoff)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(attempts)
    }

    /// The attempt log of an endpoint, newest first, after `before` (an attempt id).
    pub async fn webhook_attempts(
        &self,
        tenant_id: &str,
        endpoint_id: &str,
        before: Option<&str>,
        limit: i64,
    ) -> Result<Vec<AttemptRecord>, StoreError> {
        let rows = sqlx::query(
            "SELECT a.id, a.delivery_id, a.endpoint_id, a.tenant_id, a.event_id, a.event_type, \
             a.attempt, a.http_status, a.error, a.duration_ms, a.correlation_id, a.attempted_at, \
             d.status AS delivery_status, \
             CASE WHEN d.status = 'pending' THEN d.next_attempt_at END AS next_attempt_at \
             FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id \
             WHERE a.tenant_id = $1 AND a.endpoint_id = $2 AND ($3 = '' OR a.id < $3) \
             ORDER BY a.id DESC LIMIT $4",
        )
        .bind(tenant_id)
        .bind(endpoint_id)
        .bind(before.unwrap_or(""))
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|row| {
                Ok(AttemptRecord {
                    id: text(row, "id")?,
                    delivery_id: text(row, "delivery_id")?,
                    endpoint_id: text(row, "endpoint_id")?,
                    tenant_id: text(row, "tenant_id")?,
                    event_id: text(row, "event_id")?,
                    event_type: text(row, "event_type")?,
                    attempt: row.try_get("attempt")?,
                    http_status: row.try_get("http_status")?,
                    error: opt_text(row, "error")?,
                    duration_ms: row.try_get("duration_ms")?,
                    correlation_id: opt_text(row, "correlation_id")?,
                    attempted_at: text(row, "attempted_at")?,
                    delivery_status: text(row, "delivery_status")?,
                    next_attempt_at: opt_text(row, "next_attempt_at")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)
    }
}
