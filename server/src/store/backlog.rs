//! Work waiting across all tenants, for the operator's metrics: invoices by status, the
//! sending outbox, conversions by status and pending webhook deliveries. Aggregates only:
//! no tenant data leaves here.

use sqlx::Row;

use super::{Store, StoreError};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Backlog {
    /// (status, invoices)
    pub invoices: Vec<(String, i64)>,
    /// Invoices waiting in the outbox for the delivery worker.
    pub outbox_pending: i64,
    /// When the oldest of them was received (RFC 3339), if any.
    pub outbox_oldest: Option<String>,
    /// (status, conversions)
    pub conversions: Vec<(String, i64)>,
    /// Webhook deliveries not yet delivered, failed or cancelled.
    pub webhooks_pending: i64,
    /// When the oldest of them was queued (RFC 3339), if any.
    pub webhooks_oldest: Option<String>,
}

impl Store {
    pub async fn backlog(&self) -> Result<Backlog, StoreError> {
        let by_status = |table: &str| {
            format!("SELECT status, COUNT(*) AS n FROM {table} GROUP BY status ORDER BY status")
        };
        let counts = |rows: Vec<sqlx::any::AnyRow>| -> Result<Vec<(String, i64)>, sqlx::Error> {
            rows.iter()
                .map(|r| Ok((r.try_get::<String, _>("status")?, r.try_get::<i64, _>("n")?)))
                .collect()
        };
        let invoices = counts(
            sqlx::query(&by_status("invoices"))
                .fetch_all(self.pool())
                .await?,
        )?;
        let conversions = counts(
            sqlx::query(&by_status("conversions"))
                .fetch_all(self.pool())
                .await?,
        )?;
        let outbox = sqlx::query(
            "SELECT COUNT(*) AS n, MIN(i.created_at) AS oldest FROM outbox o \
             JOIN invoices i ON i.id = o.invoice_id WHERE o.done_at IS NULL",
        )
        .fetch_one(self.pool())
        .await?;
        let webhooks = sqlx::query(
            "SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM webhook_deliveries \
             WHERE status = 'pending'",
        )
        .fetch_one(self.pool())
        .await?;
        Ok(Backlog {
            invoices,
            outbox_pending: outbox.try_get::<i64, _>("n")?,
            outbox_oldest: outbox.try_get::<Option<String>, _>("oldest")?,
            conversions,
            webhooks_pending: webhooks.try_get::<i64, _>("n")?,
            webhooks_oldest: webhooks.try_get::<Option<String>, _>("oldest")?,
        })
    }
}
