//! Prometheus metrics: requests and latency per route, validations by verdict, and the
//! rule-pack versions in force.

use std::time::Duration;

use invex_engine::registry::{Catalog, ReloadStatus};
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry,
    TextEncoder,
};

pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    validations: IntCounterVec,
    rulepacks: IntGaugeVec,
    reload_ok: IntGauge,
    webhook_attempts: IntCounterVec,
    webhook_latency: HistogramVec,
}

/// Latency buckets in seconds: validations of typical invoices take well under a
/// millisecond, 10,000-line invoices about half a second.
const BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

impl Metrics {
    pub fn new() -> Result<Metrics, prometheus::Error> {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new("invex_http_requests_total", "HTTP requests answered"),
            &["method", "route", "status"],
        )?;
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "invex_http_request_duration_seconds",
                "Time to answer an HTTP request",
            )
            .buckets(BUCKETS.to_vec()),
            &["method", "route"],
        )?;
        let validations = IntCounterVec::new(
            Opts::new("invex_validations_total", "Documents validated"),
            &["profile", "verdict"],
        )?;
        let rulepacks = IntGaugeVec::new(
            Opts::new(
                "invex_rulepack_info",
                "Rule packs in force (1 per pack id and version)",
            ),
            &["pack", "version"],
        )?;
        let reload_ok = IntGauge::new(
            "invex_rulepack_last_reload_ok",
            "1 when the last rule-pack load succeeded",
        )?;
        let webhook_attempts = IntCounterVec::new(
            Opts::new(
                "invex_webhook_attempts_total",
                "Webhook delivery attempts by event type and outcome (delivered, retry, failed)",
            ),
            &["event_type", "outcome"],
        )?;
        let webhook_latency = HistogramVec::new(
            HistogramOpts::new(
                "invex_webhook_attempt_duration_seconds",
                "Time a receiver took to answer a webhook attempt",
            )
            .buckets(BUCKETS.to_vec()),
            &["event_type"],
        )?;
        registry.register(Box::new(webhook_attempts.clone()))?;
        registry.register(Box::new(webhook_latency.clone()))?;
        registry.register(Box::new(requests.clone()))?;
        registry.register(Box::new(latency.clone()))?;
        registry.register(Box::new(validations.clone()))?;
        registry.register(Box::new(rulepacks.clone()))?;
        registry.register(Box::new(reload_ok.clone()))?;
        Ok(Metrics {
            registry,
            requests,
            latency,
            validations,
            rulepacks,
            reload_ok,
            webhook_attempts,
            webhook_latency,
        })
    }

    /// One webhook attempt: `outcome` is `delivered`, `retry` or `failed`.
    pub fn webhook_attempt(&self, event_type: &str, outcome: &str, elapsed: Duration) {
        self.webhook_attempts
            .with_label_values(&[event_type, outcome])
            .inc();
        self.webhook_latency
            .with_label_values(&[event_type])
            .observe(elapsed.as_secs_f64());
    }

    pub fn observe_request(&self, method: &str, route: &str, status: &str, elapsed: Duration) {
        self.requests
            .with_label_values(&[method, route, status])
            .inc();
        self.latency
            .with_label_values(&[method, route])
            .observe(elapsed.as_secs_f64());
    }

    pub fn validation(&self, profile: &str, verdict: &str) {
        self.validations
            .with_label_values(&[profile, verdict])
            .inc();
    }

    /// The exposition text, with the rule-pack gauges set from `catalog` first.
    pub fn render(&self, catalog: &Catalog, status: &ReloadStatus) -> String {
        self.rulepacks.reset();
        for pack in catalog.pack_infos() {
            self.rulepacks
                .with_label_values(&[pack.id.as_str(), pack.version.as_str()])
                .set(1);
        }
        self.reload_ok.set(i64::from(status.ok));
        let mut out = Vec::new();
        // Encoding into a Vec cannot fail for text; an error would leave the body partial.
        if let Err(e) = TextEncoder::new().encode(&self.registry.gather(), &mut out) {
            tracing::error!(error = %e, "metrics encoding failed");
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}
