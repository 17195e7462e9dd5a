//! Several instances on one database: each reports itself and the rule packs it serves, and
//! a rule-pack reload on one instance reaches every other.
//!
//! Why a generation row polled every second rather than PostgreSQL's LISTEN/NOTIFY: it works
//! the same on SQLite (two processes on one file), needs no connection held outside the pool,
//! and a notification missed while an instance restarts or loses its connection is not lost
//! — the number is still there to compare. One small query a second is the price.
//!
//! An instance announces a reload when its registry's last attempt advanced and succeeded
//! for a reason of its own (`POST /v1/rulepacks/reload` or its file watcher); the others
//! reload their own source when they see the number grow. A reload caused by an
//! announcement is not announced again, so two instances never echo each other.

use std::sync::Arc;
use std::time::Duration;

use invex_engine::registry::Registry;
use tokio::sync::watch;

use crate::store::{InstanceRow, Store};

/// This process among the instances sharing the database.
#[derive(Clone, Debug)]
pub struct Instance {
    pub id: String,
    pub host: String,
    pub started_at: String,
}

impl Instance {
    pub fn new() -> Instance {
        Instance {
            id: crate::ids::new_id("ins"),
            host: host_name(),
            started_at: crate::clock::now(),
        }
    }
}

impl Default for Instance {
    fn default() -> Self {
        Instance::new()
    }
}

/// The machine's name, for telling instances apart in `/ready`.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// How often an instance looks for announcements and reports itself.
pub const DEFAULT_POLL: Duration = Duration::from_secs(1);
/// An instance not seen for this long is not listed in `/ready`.
pub fn stale_after(poll: Duration) -> Duration {
    (poll * 5).max(Duration::from_secs(15))
}
/// Rows of instances not seen for this long (killed, never stopped cleanly) are removed.
pub const FORGET_AFTER: Duration = Duration::from_secs(24 * 3600);
/// How often an instance removes such rows.
const PRUNE_EVERY: Duration = Duration::from_secs(60);

/// The instance's row as it stands now.
fn row(instance: &Instance, registry: &Registry) -> InstanceRow {
    InstanceRow {
        id: instance.id.clone(),
        host: instance.host.clone(),
        started_at: instance.started_at.clone(),
        seen_at: crate::clock::now(),
        rulepacks: serde_json::to_string(&registry.current().versions())
            .unwrap_or_else(|_| "[]".into()),
        rulepack_set: rulepack_set(registry).into(),
    }
}

/// `current` when the last load attempt went live, `last-good` when a newer set was refused.
pub fn rulepack_set(registry: &Registry) -> &'static str {
    if registry.status().ok {
        "current"
    } else {
        "last-good"
    }
}

/// The background task; it ends (removing the instance's row) when `stop` turns true.
pub fn spawn(
    instance: Instance,
    store: Store,
    registry: Arc<Registry>,
    poll: Duration,
    stop: watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(run(instance, store, registry, poll, stop))
}

async fn run(
    instance: Instance,
    store: Store,
    registry: Arc<Registry>,
    poll: Duration,
    mut stop: watch::Receiver<bool>,
) {
    // What this instance has already acted on: announcements up to `known`, its own load
    // attempts up to `attempt`.
    let mut known = match store.rulepack_generation().await {
        Ok(g) => g.generation,
        Err(e) => {
            tracing::warn!(error = %e, "instances: cannot read the rule-pack generation");
            0
        }
    };
    let mut attempt = registry.status().attempt;
    // Rows of killed instances are removed here, once a minute, not by every `/ready`
    // (which load balancers call often and which only reads).
    let mut pruned: Option<std::time::Instant> = None;
    let mut tick = tokio::time::interval(poll.max(Duration::from_millis(50)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.wait_for(|s| *s) => break,
        }
        if let Err(e) = step(&instance, &store, &registry, &mut known, &mut attempt).await {
            tracing::warn!(error = %e, "instances: rule-pack synchronisation failed; retrying");
        }
        if pruned.is_none_or(|at| at.elapsed() >= PRUNE_EVERY) {
            pruned = Some(std::time::Instant::now());
            let before = chrono::Utc::now()
                - chrono::Duration::from_std(FORGET_AFTER).unwrap_or(chrono::Duration::zero());
            if let Err(e) = store.forget_instances(&crate::clock::format(before)).await {
                tracing::debug!(error = %e, "instances: old rows not removed; next time");
            }
        }
    }
    if let Err(e) = store.instance_gone(&instance.id).await {
        tracing::debug!(error = %e, "instances: the row of this instance stays until it ages out");
    }
}

async fn step(
    instance: &Instance,
    store: &Store,
    registry: &Arc<Registry>,
    known: &mut i64,
    attempt: &mut u64,
) -> Result<(), crate::store::StoreError> {
    // A reload of this instance's own (API, watcher): tell the others.
    let status = registry.status();
    if status.attempt > *attempt {
        if status.ok {
            let versions = serde_json::to_string(&status.versions).unwrap_or_default();
            // Marked done only once written: when the database does not answer, the
            // announcement is made at the next step.
            let generation = store
                .announce_rulepacks(&instance.id, &versions, &crate::clock::now())
                .await?;
            tracing::info!(
                generation,
                "rule-pack reload announced to the other instances"
            );
            *known = generation;
        }
        *attempt = status.attempt;
    }
    // Another instance's announcement: reload this instance's own source.
    let latest = store.rulepack_generation().await?;
    if latest.generation > *known {
        *known = latest.generation;
        if latest.instance_id.as_deref() != Some(instance.id.as_str()) {
            let reloading = registry.clone();
            let outcome = tokio::task::spawn_blocking(move || reloading.reload()).await;
            match outcome {
                Ok(Ok(o)) => tracing::info!(
                    from = ?latest.instance_id,
                    versions = %o.versions.join(", "),
                    "rule packs reloaded after another instance's reload"
                ),
                Ok(Err(e)) => tracing::warn!(
                    from = ?latest.instance_id,
                    error = %e,
                    "another instance reloaded its rule packs; this instance's do not pass the gate and the last good set stays"
                ),
                Err(e) => tracing::error!(error = %e, "the rule-pack reload task failed"),
            }
            // Not announced again.
            *attempt = registry.status().attempt;
        }
    }
    store.instance_seen(&row(instance, registry)).await
}
