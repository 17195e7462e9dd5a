//! Metering: calls counted per tenant per calendar month (UTC). Counting happens in
//! memory on the request path and is written to the database about once a second, so a
//! metered call costs no database round trip; a crash loses at most the last second.

use std::collections::HashMap;
use std::sync::{Mutex, Weak};
use std::time::Duration;

use serde::Serialize;
use utoipa::ToSchema;

use crate::store::{Store, StoreError, UsageDelta};

/// The VAT verification meter: one call per number checked.
pub const VAT_VERIFY: &str = "vat_verify";
/// Free VAT verification calls per tenant per month (interface spec 8).
pub const VAT_FREE_CALLS: u64 = 1000;
/// Price per VAT verification call beyond the free ones, in thousandths of a euro.
pub const VAT_PRICE_MILLI_EUR: u64 = 4;

type Key = (String, String, &'static str);

pub struct Meter {
    store: Store,
    pending: Mutex<HashMap<Key, u64>>,
}

/// `YYYY-MM` of now, UTC.
pub fn current_period() -> String {
    chrono::Utc::now().format("%Y-%m").to_string()
}

impl Meter {
    pub fn new(store: Store) -> Meter {
        Meter {
            store,
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// Count `calls` for `tenant` in this month.
    pub fn record(&self, tenant: &str, meter: &'static str, calls: u64) {
        if calls == 0 {
            return;
        }
        let key = (tenant.to_string(), current_period(), meter);
        *self.lock().entry(key).or_insert(0) += calls;
    }

    /// Write the counts gathered so far. On a database error they are kept for the
    /// next attempt, never dropped.
    pub async fn flush(&self) -> Result<(), StoreError> {
        let taken = std::mem::take(&mut *self.lock());
        if taken.is_empty() {
            return Ok(());
        }
        let deltas: Vec<UsageDelta> = taken
            .iter()
            .map(|((tenant, period, meter), calls)| UsageDelta {
                tenant_id: tenant.clone(),
                period: period.clone(),
                meter: (*meter).to_string(),
                calls: i64::try_from(*calls).unwrap_or(i64::MAX),
            })
            .collect();
        if let Err(e) = self.store.add_usage(&deltas).await {
            let mut pending = self.lock();
            for (key, calls) in taken {
                *pending.entry(key).or_insert(0) += calls;
            }
            return Err(e);
        }
        Ok(())
    }

    /// Calls of `tenant` in `period`: stored plus not yet written.
    pub async fn calls(
        &self,
        tenant: &str,
        period: &str,
        meter: &'static str,
    ) -> Result<u64, StoreError> {
        let pending = self
            .lock()
            .get(&(tenant.to_string(), period.to_string(), meter))
            .copied()
            .unwrap_or(0);
        let stored = self.store.usage_calls(tenant, period, meter).await?;
        Ok(u64::try_from(stored).unwrap_or(0) + pending)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, u64>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Write pending counts every `every` until the meter is dropped.
pub async fn flush_periodically(meter: Weak<Meter>, every: Duration) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(m) = meter.upgrade() else { return };
        if let Err(e) = m.flush().await {
            tracing::warn!(error = %e, "cannot write usage counts; kept for the next attempt");
        }
    }
}

/// A tenant's VAT verification usage in one month and what it costs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct VatUsage {
    /// Numbers checked (each number of a batch counts as one call).
    pub calls: u64,
    pub free_calls: u64,
    pub free_remaining: u64,
    pub billable_calls: u64,
    /// Price per billable call in EUR, as a decimal string.
    pub unit_price_eur: String,
    /// What the billable calls cost in EUR, as a decimal string (exact, 3 decimals).
    pub amount_eur: String,
}

impl VatUsage {
    pub fn from_calls(calls: u64) -> VatUsage {
        let billable = calls.saturating_sub(VAT_FREE_CALLS);
        VatUsage {
            calls,
            free_calls: VAT_FREE_CALLS,
            free_remaining: VAT_FREE_CALLS.saturating_sub(calls),
            billable_calls: billable,
            unit_price_eur: vat_unit_price_eur(),
            amount_eur: milli_eur(billable.saturating_mul(VAT_PRICE_MILLI_EUR)),
        }
    }
}

/// The price per billable VAT verification call, e.g. "0.004".
pub fn vat_unit_price_eur() -> String {
    milli_eur(VAT_PRICE_MILLI_EUR)
}

/// Thousandths of a euro as a decimal string: 4 → "0.004", 12345 → "12.345".
fn milli_eur(milli: u64) -> String {
    format!("{}.{:03}", milli / 1000, milli % 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_thousand_calls_are_free_then_four_tenths_of_a_cent_each() {
        let u = VatUsage::from_calls(999);
        assert_eq!((u.free_remaining, u.billable_calls), (1, 0));
        assert_eq!(u.amount_eur, "0.000");
        let u = VatUsage::from_calls(1000);
        assert_eq!((u.free_remaining, u.billable_calls), (0, 0));
        let u = VatUsage::from_calls(1001);
        assert_eq!((u.billable_calls, u.amount_eur.as_str()), (1, "0.004"));
        let u = VatUsage::from_calls(1_000 + 3_086_250);
        assert_eq!(u.amount_eur, "12345.000");
        assert_eq!(u.unit_price_eur, "0.004");
    }
}
