//! Liveness, readiness and metrics: no key needed.

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::Json;
use invex_engine::registry::ReloadStatus;
use serde::Serialize;
use utoipa::ToSchema;

use crate::problem::Problem;
use crate::state::AppState;

#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// Always `ok` while the process answers.
    pub status: String,
    pub version: String,
    /// `sandbox` or `production`.
    pub mode: String,
}

#[utoipa::path(get, path = "/health", tag = "operations", operation_id = "health",
    responses((status = 200, description = "The process is up", body = Health)))]
pub async fn health(State(state): State<AppState>) -> Json<Health> {
    Json(Health {
        status: "ok".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        mode: state.environment().into(),
    })
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Ready {
    /// `ready`.
    pub status: String,
    /// Packs in force, `id@version`.
    pub rulepacks: Vec<String>,
    /// `current`: the last load attempt went live. `last-good`: a newer pack set was
    /// refused (`last_reload` says why) and the packs in force are the last set that
    /// passed.
    pub rulepack_set: String,
    /// The last load attempt (start, watcher or API).
    pub last_reload: ReloadStatus,
    /// This instance's id (as listed in `instances`).
    pub instance: String,
    /// Every instance sharing the database seen in the last seconds, this one included,
    /// with the packs each serves: after a reload they should all agree.
    pub instances: Vec<InstanceView>,
}

/// One instance sharing the database, as it last reported itself.
#[derive(Debug, Serialize, ToSchema)]
pub struct InstanceView {
    pub id: String,
    /// The machine it runs on.
    pub host: String,
    pub started_at: String,
    /// When it last reported itself (about every second).
    pub seen_at: String,
    /// Packs in force there, `id@version`.
    pub rulepacks: Vec<String>,
    /// `current` or `last-good`, as `rulepack_set` above.
    pub rulepack_set: String,
}

#[utoipa::path(get, path = "/ready", tag = "operations", operation_id = "ready",
    responses((status = 200, description = "Database reachable and rule packs loaded", body = Ready),
              (status = 503, description = "Not ready (the problem says why)", body = crate::problem::ProblemBody)))]
pub async fn ready(State(state): State<AppState>) -> Result<Json<Ready>, Problem> {
    if let Err(e) = state.store.ping().await {
        tracing::warn!(error = %e, "readiness: database unreachable");
        return Err(Problem::unavailable("the database does not answer"));
    }
    let catalog = state.registry.current();
    if catalog.profiles().is_empty() {
        return Err(Problem::unavailable(
            "no rule packs are loaded; see GET /v1/rulepacks for the last load error",
        ));
    }
    let last_reload = state.registry.status();
    let instances = instances(&state).await?;
    Ok(Json(Ready {
        status: "ready".into(),
        rulepacks: catalog.versions(),
        rulepack_set: crate::fleet::rulepack_set(&state.registry).into(),
        last_reload,
        instance: state.instance.id.clone(),
        instances,
    }))
}

/// The instances seen lately; this one always among them, as it is now (its own row may
/// not be written yet right after the start).
async fn instances(state: &AppState) -> Result<Vec<InstanceView>, Problem> {
    use crate::fleet::stale_after;
    let poll = std::time::Duration::from_millis(state.config.instance_poll_ms);
    let ago = |d: std::time::Duration| {
        crate::clock::format(
            chrono::Utc::now() - chrono::Duration::from_std(d).unwrap_or(chrono::Duration::zero()),
        )
    };
    let rows = state
        .store
        .instances(&ago(stale_after(poll)))
        .await
        .map_err(|e| {
            tracing::warn!(error = %e, "readiness: instances unreadable");
            Problem::unavailable("the database does not answer")
        })?;
    let mut views: Vec<InstanceView> = rows
        .into_iter()
        .filter(|r| r.id != state.instance.id)
        .map(|r| InstanceView {
            rulepacks: serde_json::from_str(&r.rulepacks).unwrap_or_default(),
            id: r.id,
            host: r.host,
            started_at: r.started_at,
            seen_at: r.seen_at,
            rulepack_set: r.rulepack_set,
        })
        .collect();
    let me = &state.instance;
    views.push(InstanceView {
        id: me.id.clone(),
        host: me.host.clone(),
        started_at: me.started_at.clone(),
        seen_at: crate::clock::now(),
        rulepacks: state.registry.current().versions(),
        rulepack_set: crate::fleet::rulepack_set(&state.registry).into(),
    });
    views.sort_by(|a, b| (&a.started_at, &a.id).cmp(&(&b.started_at, &b.id)));
    Ok(views)
}

#[utoipa::path(get, path = "/metrics", tag = "operations", operation_id = "metrics",
    responses((status = 200, description = "Prometheus text exposition", content_type = "text/plain")))]
pub async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    use std::sync::atomic::Ordering::Relaxed;
    if state.metrics.backlog_due() {
        match state.store.backlog().await {
            Ok(backlog) => state.metrics.set_backlog(&backlog),
            // The gauges keep their last values; the error is the store's, and /ready says it.
            Err(e) => tracing::warn!(error = %e, "the backlog for /metrics could not be read"),
        }
    }
    let (workers_busy, workers_waiting) = state.admission.load();
    let load = crate::metrics::Load {
        workers_busy,
        workers_waiting,
        admission_refused: state.admission.refusals(),
        connections_open: state.connections.open.load(Relaxed),
        connections_evicted: state.connections.evicted.load(Relaxed),
        connections_refused: state.connections.refused.load(Relaxed),
    };
    let body = state
        .metrics
        .render(&state.registry.current(), &state.registry.status(), &load);
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        body,
    )
}
