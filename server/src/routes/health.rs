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
    Ok(Json(Ready {
        status: "ready".into(),
        rulepacks: catalog.versions(),
        rulepack_set: if last_reload.ok {
            "current"
        } else {
            "last-good"
        }
        .into(),
        last_reload,
    }))
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
