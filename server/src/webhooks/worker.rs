//! The delivery worker: claims due deliveries from the database, sends them signed, logs
//! every attempt and schedules retries.
//!
//! Guarantees: at-least-once (an instance that dies after the receiver answered but before
//! the attempt was written sends again once its lease expires; receivers deduplicate on
//! `webhook-id`). Ordering: deliveries of one endpoint are claimed in queue (event) order
//! and sent one after another within a batch, so first attempts arrive in event order; a
//! retried delivery waits for its backoff while later events go on, so ordering is not
//! guaranteed across retries, nor across instances (two workers may each hold one event of
//! the same endpoint). Receivers order by the payload's `timestamp` (docs/webhooks.md).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::Rng;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::config::WebhooksConfig;
use super::signing;
use super::target::{refusal_in, CheckedResolver, Refused, TargetPolicy};
use crate::metrics::Metrics;
use crate::settings::Mode;
use crate::store::webhooks::{AttemptRecord, DueDelivery, NextStep};
use crate::store::{Store, StoreError};

/// Wakes the workers of this process when something was queued, so that a delivery does
/// not wait for the next poll. Process-wide: a spurious wake-up only costs one poll.
static WAKE: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Tell the workers of this process that deliveries were queued (call after the commit).
pub fn wake() {
    WAKE.notify_waiters();
}

/// How often the delivery log is pruned.
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// The header carrying the correlation id of the event (for support).
pub const CORRELATION_HEADER: &str = "invex-correlation-id";

#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("webhook HTTP client: {0}")]
    Client(#[from] reqwest::Error),
    #[error("webhook DNS resolver: {0}")]
    Resolver(#[from] hickory_resolver::ResolveError),
}

/// The running worker; stopped by [`WorkerHandle::stop`] at shutdown.
pub struct WorkerHandle {
    stop: watch::Sender<bool>,
    task: Mutex<Option<JoinHandle<()>>>,
    grace: Duration,
    store: Store,
    token: String,
}

impl WorkerHandle {
    /// Ask the worker to stop and wait for its current batch (at most one receive timeout
    /// and a second). A batch cut short gives its claims back, so the rows are due again
    /// (at-least-once: a request already answered may be sent again).
    pub async fn stop(&self) {
        let _ = self.stop.send(true);
        let task = self.task.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(mut task) = task {
            if tokio::time::timeout(self.grace, &mut task).await.is_err() {
                task.abort();
                // Hand the unfinished rows back now rather than when their lease expires.
                if let Err(e) = self.store.release_webhook_claims(&self.token).await {
                    tracing::warn!(error = %e, "webhook claims stay until their lease expires");
                }
            }
        }
    }
}

/// Start the worker (when `config.worker` is set).
pub fn spawn(
    store: Store,
    mode: Mode,
    config: &WebhooksConfig,
    metrics: Arc<Metrics>,
) -> Result<Option<WorkerHandle>, WorkerError> {
    if !config.worker {
        return Ok(None);
    }
    let timeout = Duration::from_millis(config.timeout_ms.max(1));
    let policy = Arc::new(TargetPolicy::from_config(mode, config));
    let resolver = CheckedResolver::new(config.dns_server, timeout, policy.clone())?;
    let client = reqwest::Client::builder()
        .timeout(timeout)
        // A redirect is an answer of the receiver, not a place to send signed data to
        // (nor a way around the target checks).
        .redirect(reqwest::redirect::Policy::none())
        // Every connection goes to an address the resolver checked: no proxy resolves
        // names on the client's behalf.
        .no_proxy()
        .dns_resolver(Arc::new(resolver))
        .user_agent(concat!("invex-webhooks/", env!("CARGO_PKG_VERSION")))
        .build()?;
    let (tx, rx) = watch::channel(false);
    // One token per worker, so that its claims can be given back at stop.
    let token = crate::ids::new_id("wkr");
    let worker = Worker {
        store: store.clone(),
        client,
        config: config.clone(),
        timeout,
        token: token.clone(),
        polls: std::sync::atomic::AtomicU64::new(0),
        metrics,
        policy,
    };
    let task = tokio::spawn(worker.run(rx));
    Ok(Some(WorkerHandle {
        stop: tx,
        task: Mutex::new(Some(task)),
        grace: timeout + Duration::from_secs(1),
        store,
        token,
    }))
}

struct Worker {
    store: Store,
    client: reqwest::Client,
    config: WebhooksConfig,
    timeout: Duration,
    /// This worker's claims are `{token}.{poll number}`.
    token: String,
    polls: std::sync::atomic::AtomicU64,
    metrics: Arc<Metrics>,
    policy: Arc<TargetPolicy>,
}

/// What one attempt came to.
struct Outcome {
    http_status: Option<u16>,
    error: Option<String>,
    duration: Duration,
}

impl Worker {
    async fn run(self, mut stop: watch::Receiver<bool>) {
        let every = Duration::from_millis(self.config.poll_interval_ms.max(1));
        let mut pruned: Option<Instant> = None;
        loop {
            if *stop.borrow() {
                return;
            }
            if pruned.is_none_or(|at| at.elapsed() >= PRUNE_EVERY) {
                pruned = Some(Instant::now());
                self.prune().await;
            }
            let full = match self.poll().await {
                Ok(n) => n >= self.config.batch_size as usize,
                Err(e) => {
                    tracing::warn!(error = %e, "webhook worker cannot read the delivery queue");
                    false
                }
            };
            // A full batch suggests more are due: go on at once.
            if full {
                continue;
            }
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = WAKE.notified() => {}
                _ = stop.changed() => return,
            }
        }
    }

    /// Drop the log older than the retention period (every instance may do it; the
    /// deletes are idempotent).
    async fn prune(&self) {
        if self.config.retention_days == 0 {
            return;
        }
        let cutoff =
            chrono::Utc::now() - chrono::Duration::days(i64::from(self.config.retention_days));
        match self.store.prune_webhooks(&rfc3339(cutoff)).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(attempts = n, "old webhook delivery log removed"),
            Err(e) => tracing::warn!(error = %e, "cannot prune the webhook delivery log"),
        }
    }

    /// Claim and send one batch; returns how many were claimed.
    async fn poll(&self) -> Result<usize, StoreError> {
        // A token per poll: a row whose attempt could not be recorded keeps its claim until
        // the lease runs out instead of being sent again by the very next poll.
        let polls = self
            .polls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let token = format!("{}.{polls}", self.token);
        let token = token.as_str();
        let now = chrono::Utc::now();
        // The lease outlasts one attempt of every delivery of an endpoint in the batch
        // being sent one after another, with a margin.
        let lease = self.timeout * (self.config.batch_size.max(1)) + Duration::from_secs(30);
        let due = self
            .store
            .claim_webhook_deliveries(
                token,
                &rfc3339(now),
                &rfc3339(now + chrono::Duration::from_std(lease).unwrap_or_default()),
                self.config.batch_size.max(1),
            )
            .await?;
        let count = due.len();
        // One endpoint's deliveries go one after another, in queue order; endpoints in
        // parallel, so a slow receiver holds back only its own events.
        let mut by_endpoint: HashMap<String, Vec<DueDelivery>> = HashMap::new();
        for d in due {
            by_endpoint
                .entry(d.endpoint_id.clone())
                .or_default()
                .push(d);
        }
        futures_util::future::join_all(by_endpoint.into_values().map(|list| async move {
            for delivery in list {
                if let Err(e) = self.deliver(&delivery, token).await {
                    tracing::error!(error = %e, delivery_id = %delivery.id, "cannot record a webhook attempt");
                }
            }
        }))
        .await;
        Ok(count)
    }

    async fn deliver(&self, d: &DueDelivery, token: &str) -> Result<(), StoreError> {
        let attempt_no = d.attempts + 1;
        let outcome = self.send(d).await;
        let attempted_at = crate::clock::now();
        let next = match outcome.http_status {
            Some(s) if (200..300).contains(&s) => NextStep::Delivered,
            // 410 Gone: the receiver asks us to stop for good.
            Some(410) => NextStep::Failed,
            _ => match retry_delay(&self.config.retry_schedule_ms, attempt_no) {
                Some(delay) => NextStep::RetryAt(rfc3339(
                    chrono::Utc::now() + chrono::Duration::from_std(delay).unwrap_or_default(),
                )),
                None => NextStep::Failed,
            },
        };
        let record = AttemptRecord {
            id: crate::ids::new_id("wat"),
            delivery_id: d.id.clone(),
            endpoint_id: d.endpoint_id.clone(),
            tenant_id: d.tenant_id.clone(),
            event_id: d.event_id.clone(),
            event_type: d.event_type.clone(),
            attempt: attempt_no,
            http_status: outcome.http_status.map(i64::from),
            error: outcome.error.clone(),
            duration_ms: i64::try_from(outcome.duration.as_millis()).unwrap_or(i64::MAX),
            correlation_id: d.correlation_id.clone(),
            attempted_at,
            delivery_status: String::new(),
            next_attempt_at: match &next {
                NextStep::RetryAt(at) => Some(at.clone()),
                _ => None,
            },
        };
        // 410 Gone: the receiver asks us to stop for good (disabled with the attempt's record).
        let gone = outcome.http_status == Some(410);
        let disable = gone.then_some("the receiver answered 410 Gone");
        self.store
            .record_webhook_attempt(&record, token, &next, disable)
            .await?;
        let label = match next {
            NextStep::Delivered => "delivered",
            NextStep::RetryAt(_) => "retry",
            NextStep::Failed => "failed",
        };
        self.metrics
            .webhook_attempt(&d.event_type, label, outcome.duration);
        tracing::info!(
            delivery_id = %d.id, event_id = %d.event_id, endpoint_id = %d.endpoint_id,
            attempt = attempt_no, status = ?outcome.http_status, error = ?outcome.error,
            next = ?next, "webhook attempt"
        );
        if gone {
            tracing::warn!(endpoint_id = %d.endpoint_id, "webhook endpoint disabled: 410 Gone");
        }
        Ok(())
    }

    async fn send(&self, d: &DueDelivery) -> Outcome {
        let started = Instant::now();
        let failed = |error: String| Outcome {
            http_status: None,
            error: Some(error),
            duration: started.elapsed(),
        };
        let refused = |why: &Refused| {
            tracing::warn!(
                delivery_id = %d.id, endpoint_id = %d.endpoint_id, reason = %why,
                "webhook delivery refused: the target is not a public address; nothing was sent"
            );
            failed(format!("refused: {why}"))
        };
        if let Err(why) = self.policy.check_delivery(&d.url) {
            return refused(&why);
        }
        let timestamp = chrono::Utc::now().timestamp();
        let mut secrets = vec![d.secret.as_str()];
        if let (Some(previous), Some(until)) = (&d.previous_secret, &d.previous_expires_at) {
            if *until > crate::clock::now() {
                secrets.push(previous.as_str());
            }
        }
        let signature =
            match signing::header(&secrets, &d.event_id, timestamp, d.payload.as_bytes()) {
                Ok(s) => s,
                Err(e) => return failed(e.to_string()),
            };
        let mut request = self
            .client
            .post(&d.url)
            .header("content-type", "application/json")
            .header("webhook-id", &d.event_id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature);
        if let Some(c) = &d.correlation_id {
            request = request.header(CORRELATION_HEADER, c);
        }
        match request.body(d.payload.clone()).send().await {
            Ok(response) => Outcome {
                http_status: Some(response.status().as_u16()),
                error: None,
                duration: started.elapsed(),
            },
            Err(e) => match refusal_in(&e) {
                Some(why) => refused(why),
                None if e.is_timeout() => {
                    failed(format!("no answer within {} ms", self.timeout.as_millis()))
                }
                None if e.is_connect() => failed(connect_failure(&e)),
                None => failed(format!("request failed: {e}")),
            },
        }
    }
}

/// Why a connection failed, for the attempt log: a DNS failure says so (the receiver's
/// name did not resolve), other failures are "connection failed".
fn connect_failure(e: &reqwest::Error) -> String {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = current {
        if let Some(super::target::ResolveFailure::Dns(dns)) =
            err.downcast_ref::<super::target::ResolveFailure>()
        {
            return format!("connection failed: DNS: {dns}");
        }
        current = err.source();
    }
    "connection failed".to_string()
}

/// The delay before the retry after failed attempt `attempt` (1-based), jittered by ±20 %
/// so that receivers coming back after an outage are not hit by every retry at once;
/// `None` when the schedule is used up.
pub fn retry_delay(schedule_ms: &[u64], attempt: i64) -> Option<Duration> {
    let index = usize::try_from(attempt).ok()?.checked_sub(1)?;
    let base = *schedule_ms.get(index)? as f64;
    let factor: f64 = rand::rng().random_range(0.8..=1.2);
    Some(Duration::from_millis((base * factor).round() as u64))
}

fn rfc3339(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_follow_the_schedule_with_jitter_then_stop() {
        let schedule = [5_000, 300_000];
        for _ in 0..50 {
            let d = retry_delay(&schedule, 1).expect("first retry").as_millis();
            assert!((4_000..=6_000).contains(&d), "{d}");
        }
        let d = retry_delay(&schedule, 2).expect("second retry").as_millis();
        assert!((240_000..=360_000).contains(&d), "{d}");
        assert_eq!(retry_delay(&schedule, 3), None);
        assert_eq!(retry_delay(&schedule, 0), None);
    }
}
