//! VAT verification settings: cache ages and the circuit breaker.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VatConfig {
    /// How long a "valid" register answer is served from the cache, in seconds.
    pub cache_valid_secs: u64,
    /// How long an "invalid" register answer is served from the cache, in seconds
    /// (shorter: a number may be registered tomorrow).
    pub cache_invalid_secs: u64,
    /// How long past its age an answer is kept to be served, marked stale, while the
    /// register is down, in seconds.
    pub stale_max_secs: u64,
    /// Most answers kept in the cache.
    pub cache_capacity: u64,
    /// Consecutive outages of one member state's register that open its circuit.
    pub breaker_failures: u32,
    /// How long an open circuit sends no request to that member state, in seconds.
    pub breaker_open_secs: u64,
    /// Most numbers checked concurrently for one batch request.
    pub batch_concurrency: usize,
}

impl Default for VatConfig {
    fn default() -> Self {
        VatConfig {
            cache_valid_secs: 24 * 3600,
            cache_invalid_secs: 3600,
            stale_max_secs: 7 * 24 * 3600,
            cache_capacity: 200_000,
            breaker_failures: 5,
            breaker_open_secs: 30,
            batch_concurrency: 16,
        }
    }
}
