//! Sending settings.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SendingConfig {
    /// Run the delivery worker in this instance. Several instances may run workers on one
    /// PostgreSQL database; API-only instances turn it off.
    pub worker: bool,
    /// How often the worker looks for due deliveries besides being woken by new ones, in
    /// milliseconds (retries and other instances' invoices are found this way).
    pub poll_ms: u64,
    /// How long after delivery (MLS AB) without any further response the invoice is
    /// reported as needing attention (`response_timeout` event, `invoice.attention_needed`),
    /// in seconds.
    pub response_timeout_secs: u64,
    /// Sandbox partner: how long after delivery the simulated buyer's Invoice Response
    /// (accepted, rejected, under query, conditionally accepted) arrives, in milliseconds.
    pub sandbox_response_delay_ms: u64,
    /// A send still running after this many seconds is taken to belong to a server that
    /// died: a retry with its Idempotency-Key takes the key over. Safe at any value: the
    /// old request, should it still be alive, can no longer store anything for the key.
    pub abandoned_after_secs: u64,
}

impl Default for SendingConfig {
    fn default() -> Self {
        SendingConfig {
            worker: true,
            poll_ms: 500,
            response_timeout_secs: 5 * 24 * 3600,
            sandbox_response_delay_ms: 2000,
            abandoned_after_secs: 60,
        }
    }
}
