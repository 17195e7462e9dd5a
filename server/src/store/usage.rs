//! Metered call counts: added by upsert (several instances may add at once), read per
//! tenant and month.

use sqlx::Row;

use super::{Store, StoreError};

/// Calls to add to one counter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageDelta {
    pub tenant_id: String,
    pub period: String,
    pub meter: String,
    pub calls: i64,
}

impl Store {
    /// Add every delta in one transaction.
    pub async fn add_usage(&self, deltas: &[UsageDelta]) -> Result<(), StoreError> {
        let mut tx = self.pool().begin().await?;
        for d in deltas {
            sqlx::query(
                "INSERT INTO usage_counters (tenant_id, period, meter, calls) \
                 VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (tenant_id, period, meter) \
                 DO UPDATE SET calls = usage_counters.calls + excluded.calls",
            )
            .bind(&d.tenant_id)
            .bind(&d.period)
            .bind(&d.meter)
            .bind(d.calls)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The stored count of one counter (0 when none).
    pub async fn usage_calls(
        &self,
        tenant_id: &str,
        period: &str,
        meter: &str,
    ) -> Result<i64, StoreError> {
        let row = sqlx::query(
            "SELECT calls FROM usage_counters WHERE tenant_id = $1 AND period = $2 AND meter = $3",
        )
        .bind(tenant_id)
        .bind(period)
        .bind(meter)
        .fetch_optional(self.pool())
        .await?;
        Ok(match row {
            Some(r) => r.try_get::<i64, _>("calls")?,
            None => 0,
        })
    }
}
