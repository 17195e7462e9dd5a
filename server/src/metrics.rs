//! Prometheus metrics: requests and latency per route, validations by verdict, and the
//! rule-pack versions in force.
//!
//! Every label takes a bounded set of values, whatever clients send: each distinct value
//! is a new series kept for the life of the process, so a label fed from a request (a
//! method, a path) would let anyone grow `/metrics` and the server's memory without end.
//! Methods outside the standard ones are `other`, routes are the route table's templates
//! (or `unmatched`), statuses are the server's own, and values read from data (profiles,
//! event types) are checked against what exists, with `other` beyond a fixed number.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

use axum::http::{Method, StatusCode};
use invex_engine::report::Verdict;

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
    auth_throttled: IntCounterVec,
    workers_busy: IntGauge,
    workers_waiting: IntGauge,
    admission_refused: IntCounterVec,
    connections_open: IntGauge,
    connections_closed: IntCounterVec,
    profiles: BoundedLabel,
    backlog: BacklogGauges,
}

/// The work waiting in the database (all tenants), read at most every
/// [`BACKLOG_MAX_AGE`]: a scrape, or many, never costs more than one set of aggregate
/// queries per interval.
struct BacklogGauges {
    invoices: IntGaugeVec,
    outbox_pending: IntGauge,
    outbox_oldest_age: IntGauge,
    conversions: IntGaugeVec,
    webhooks_pending: IntGauge,
    webhooks_oldest_age: IntGauge,
    read_at: std::sync::Mutex<Option<std::time::Instant>>,
}

/// How long a read of the backlog serves scrapes.
pub const BACKLOG_MAX_AGE: Duration = Duration::from_secs(5);

/// The statuses counted under their own name (the rest under `other`).
const INVOICE_STATUSES: [&str; 15] = [
    "received",
    "validated",
    "remediation_required",
    "queued",
    "sending",
    "transmitted",
    "delivered",
    "in_process",
    "under_query",
    "conditionally_accepted",
    "accepted",
    "rejected",
    "paid",
    "failed",
    "archived",
];
const CONVERSION_STATUSES: [&str; 5] = ["ready", "needs_review", "approved", "rejected", "sent"];

/// Seconds from `oldest` (RFC 3339) to now; 0 when there is none.
fn age_seconds(oldest: Option<&str>) -> i64 {
    oldest
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|t| {
            (chrono::Utc::now() - t.with_timezone(&chrono::Utc))
                .num_seconds()
                .max(0)
        })
        .unwrap_or(0)
}

impl BacklogGauges {
    fn new(registry: &Registry) -> Result<BacklogGauges, prometheus::Error> {
        let invoices = IntGaugeVec::new(
            Opts::new(
                "invex_invoices",
                "Invoices by status, all tenants (sent: accepted, delivered, failed, ...)",
            ),
            &["status"],
        )?;
        let conversions = IntGaugeVec::new(
            Opts::new(
                "invex_conversions",
                "Conversions by status (outcome), all tenants",
            ),
            &["status"],
        )?;
        let outbox_pending = IntGauge::new(
            "invex_outbox_pending",
            "Invoices waiting in the sending outbox for the delivery worker",
        )?;
        let outbox_oldest_age = IntGauge::new(
            "invex_outbox_oldest_age_seconds",
            "Age of the oldest invoice waiting in the outbox (0 when none)",
        )?;
        let webhooks_pending = IntGauge::new(
            "invex_webhook_deliveries_pending",
            "Webhook deliveries not yet delivered, failed or cancelled",
        )?;
        let webhooks_oldest_age = IntGauge::new(
            "invex_webhook_oldest_pending_age_seconds",
            "Age of the oldest pending webhook delivery (0 when none)",
        )?;
        registry.register(Box::new(invoices.clone()))?;
        registry.register(Box::new(conversions.clone()))?;
        for g in [
            &outbox_pending,
            &outbox_oldest_age,
            &webhooks_pending,
            &webhooks_oldest_age,
        ] {
            registry.register(Box::new(g.clone()))?;
        }
        Ok(BacklogGauges {
            invoices,
            outbox_pending,
            outbox_oldest_age,
            conversions,
            webhooks_pending,
            webhooks_oldest_age,
            read_at: std::sync::Mutex::new(None),
        })
    }

    fn set(&self, b: &crate::store::Backlog) {
        let by_status = |gauge: &IntGaugeVec, known: &[&str], counts: &[(String, i64)]| {
            gauge.reset();
            for status in known {
                gauge.with_label_values(&[*status]).set(0);
            }
            for (status, n) in counts {
                let label = known
                    .iter()
                    .find(|k| **k == status.as_str())
                    .copied()
                    .unwrap_or(OTHER);
                gauge.with_label_values(&[label]).add(*n);
            }
        };
        by_status(&self.invoices, &INVOICE_STATUSES, &b.invoices);
        by_status(&self.conversions, &CONVERSION_STATUSES, &b.conversions);
        self.outbox_pending.set(b.outbox_pending);
        self.outbox_oldest_age
            .set(age_seconds(b.outbox_oldest.as_deref()));
        self.webhooks_pending.set(b.webhooks_pending);
        self.webhooks_oldest_age
            .set(age_seconds(b.webhooks_oldest.as_deref()));
    }
}

/// The label of values outside a label's known set.
pub const OTHER: &str = "other";

/// The methods counted under their own name.
const METHODS: [Method; 9] = [
    Method::GET,
    Method::HEAD,
    Method::POST,
    Method::PUT,
    Method::DELETE,
    Method::PATCH,
    Method::OPTIONS,
    Method::CONNECT,
    Method::TRACE,
];

/// The `method` label: a standard method's name, else `other` (a method is any token a
/// client chooses).
pub fn method_label(method: &Method) -> &'static str {
    METHODS
        .iter()
        .find(|m| *m == method)
        .map(Method::as_str)
        .unwrap_or(OTHER)
}

/// The `status` label: the three digits of a status of the standard range, else `other`.
pub fn status_label(status: &StatusCode) -> &str {
    if (100..600).contains(&status.as_u16()) {
        status.as_str()
    } else {
        OTHER
    }
}

/// The `event_type` label: a known event type, else `other` (the type is read back from
/// the database).
pub fn event_type_label(event_type: &str) -> &'static str {
    crate::webhooks::EventType::parse(event_type)
        .map(crate::webhooks::EventType::as_str)
        .unwrap_or(OTHER)
}

/// A label whose values come from configuration that may change while the server runs
/// (profile names across rule-pack reloads): the first `cap` distinct values keep their
/// name, later ones are `other`.
struct BoundedLabel {
    seen: Mutex<HashSet<String>>,
    cap: usize,
}

impl BoundedLabel {
    fn new(cap: usize) -> BoundedLabel {
        BoundedLabel {
            seen: Mutex::new(HashSet::new()),
            cap,
        }
    }

    fn label(&self, value: &str) -> String {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if seen.contains(value) {
            return value.to_string();
        }
        if seen.len() < self.cap {
            seen.insert(value.to_string());
            return value.to_string();
        }
        OTHER.to_string()
    }
}

/// Distinct profile names counted under their own name (the shipped rule packs have four).
const MAX_PROFILE_LABELS: usize = 32;

/// Latency buckets in seconds: validations of typical invoices take well under a
/// millisecond, 10,000-line invoices about half a second.
const BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Load figures kept by the admission pool and the listener, read when metrics are rendered.
#[derive(Debug)]
pub struct Load {
    pub workers_busy: usize,
    pub workers_waiting: usize,
    pub admission_refused: [(crate::admission::Resource, u64); 3],
    pub connections_open: usize,
    pub connections_evicted: u64,
    pub connections_refused: u64,
}

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
        let auth_throttled = IntCounterVec::new(
            Opts::new(
                "invex_auth_throttled_total",
                "Requests refused with 429 because their client address or key prefix spent its budget of failed authentications",
            ),
            &["scope"],
        )?;
        let workers_busy = IntGauge::new(
            "invex_workers_busy",
            "Heavy jobs (parse, validate, convert, render) running on the worker pool",
        )?;
        let workers_waiting = IntGauge::new(
            "invex_workers_waiting",
            "Requests waiting for a worker of the pool",
        )?;
        let admission_refused = IntCounterVec::new(
            Opts::new(
                "invex_admission_refused_total",
                "Heavy requests refused (503 server-busy or 413) by the limit they met",
            ),
            &["limit"],
        )?;
        let connections_open = IntGauge::new("invex_connections_open", "Open client connections")?;
        let connections_closed = IntCounterVec::new(
            Opts::new(
                "invex_connections_shed_total",
                "Connections closed to keep to the connection cap: `evicted` (idle, to make room) or `refused` (every connection was in a request)",
            ),
            &["reason"],
        )?;
        for c in [&workers_busy, &workers_waiting, &connections_open] {
            registry.register(Box::new(c.clone()))?;
        }
        registry.register(Box::new(admission_refused.clone()))?;
        registry.register(Box::new(connections_closed.clone()))?;
        registry.register(Box::new(auth_throttled.clone()))?;
        registry.register(Box::new(webhook_attempts.clone()))?;
        registry.register(Box::new(webhook_latency.clone()))?;
        registry.register(Box::new(requests.clone()))?;
        registry.register(Box::new(latency.clone()))?;
        registry.register(Box::new(validations.clone()))?;
        registry.register(Box::new(rulepacks.clone()))?;
        registry.register(Box::new(reload_ok.clone()))?;
        Ok(Metrics {
            requests,
            latency,
            validations,
            rulepacks,
            reload_ok,
            webhook_attempts,
            webhook_latency,
            auth_throttled,
            workers_busy,
            workers_waiting,
            admission_refused,
            connections_open,
            connections_closed,
            profiles: BoundedLabel::new(MAX_PROFILE_LABELS),
            backlog: BacklogGauges::new(&registry)?,
            registry,
        })
    }

    /// Whether the backlog gauges are older than [`BACKLOG_MAX_AGE`] (then the caller reads
    /// the store and calls [`Metrics::set_backlog`]). Claims the refresh: concurrent
    /// scrapes do not all query.
    pub fn backlog_due(&self) -> bool {
        let mut read_at = self
            .backlog
            .read_at
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let due = read_at.is_none_or(|t| t.elapsed() >= BACKLOG_MAX_AGE);
        if due {
            *read_at = Some(std::time::Instant::now());
        }
        due
    }

    pub fn set_backlog(&self, backlog: &crate::store::Backlog) {
        self.backlog.set(backlog);
    }

    /// One webhook attempt: `outcome` is `delivered`, `retry` or `failed`.
    pub fn webhook_attempt(&self, event_type: &str, outcome: &'static str, elapsed: Duration) {
        let event_type = event_type_label(event_type);
        self.webhook_attempts
            .with_label_values(&[event_type, outcome])
            .inc();
        self.webhook_latency
            .with_label_values(&[event_type])
            .observe(elapsed.as_secs_f64());
    }

    /// A request refused by the failed-authentication throttle; `scope` is `address` or
    /// `key_prefix`.
    pub fn auth_throttled(&self, scope: &'static str) {
        self.auth_throttled.with_label_values(&[scope]).inc();
    }

    /// One answered request. `route` is the matched route's template or `unmatched`, never
    /// the path itself.
    pub fn observe_request(
        &self,
        method: &Method,
        route: &str,
        status: StatusCode,
        elapsed: Duration,
    ) {
        let method = method_label(method);
        self.requests
            .with_label_values(&[method, route, status_label(&status)])
            .inc();
        self.latency
            .with_label_values(&[method, route])
            .observe(elapsed.as_secs_f64());
    }

    pub fn validation(&self, profile: &str, verdict: Verdict) {
        let profile = self.profiles.label(profile);
        self.validations
            .with_label_values(&[profile.as_str(), verdict.as_str()])
            .inc();
    }

    /// The exposition text, with the rule-pack gauges set from `catalog` and the load
    /// figures from `load` first.
    pub fn render(&self, catalog: &Catalog, status: &ReloadStatus, load: &Load) -> String {
        self.workers_busy.set(load.workers_busy as i64);
        self.workers_waiting.set(load.workers_waiting as i64);
        for (resource, n) in load.admission_refused {
            let c = self
                .admission_refused
                .with_label_values(&[resource.as_str()]);
            c.reset();
            c.inc_by(n);
        }
        self.connections_open.set(load.connections_open as i64);
        for (reason, n) in [
            ("evicted", load.connections_evicted),
            ("refused", load.connections_refused),
        ] {
            let c = self.connections_closed.with_label_values(&[reason]);
            c.reset();
            c.inc_by(n);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_from_requests_and_data_have_bounded_values() {
        assert_eq!(method_label(&Method::GET), "GET");
        assert_eq!(method_label(&Method::PATCH), "PATCH");
        let made_up = Method::from_bytes(b"M000001X").expect("token");
        assert_eq!(method_label(&made_up), OTHER);
        assert_eq!(status_label(&StatusCode::NOT_FOUND), "404");
        let odd = StatusCode::from_u16(799).expect("status");
        assert_eq!(status_label(&odd), OTHER);
        assert_eq!(event_type_label("invoice.delivered"), "invoice.delivered");
        assert_eq!(event_type_label("invoice.whatever"), OTHER);
        let profiles = BoundedLabel::new(2);
        assert_eq!(profiles.label("a"), "a");
        assert_eq!(profiles.label("b"), "b");
        assert_eq!(profiles.label("c"), OTHER);
        assert_eq!(profiles.label("a"), "a");
    }

    #[test]
    fn made_up_methods_share_one_series() {
        let metrics = Metrics::new().expect("metrics");
        for n in 0..1000 {
            let method = Method::from_bytes(format!("M{n:06}X").as_bytes()).expect("token");
            metrics.observe_request(
                &method,
                "/health",
                StatusCode::METHOD_NOT_ALLOWED,
                Duration::from_micros(10),
            );
        }
        let families = metrics.registry.gather();
        let requests = families
            .iter()
            .find(|f| f.name() == "invex_http_requests_total")
            .expect("family");
        assert_eq!(requests.get_metric().len(), 1);
    }
}
