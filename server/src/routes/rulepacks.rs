//! Rule packs in force, and reloading them without a restart.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use invex_engine::registry::{PackInfo, ProfileInfo, ReloadError, ReloadOutcome, ReloadStatus};
use serde::Serialize;
use utoipa::ToSchema;

use crate::problem::Problem;
use crate::state::AppState;

#[derive(Debug, Serialize, ToSchema)]
pub struct RulepackList {
    pub profiles: Vec<ProfileInfo>,
    pub packs: Vec<PackInfo>,
    /// When the packs in force were compiled.
    pub loaded_at: String,
    /// The last load attempt (start, watcher or API), successful or not.
    pub last_reload: ReloadStatus,
    /// Whether file changes reload the packs.
    pub watching: bool,
}

#[utoipa::path(get, path = "/v1/rulepacks", tag = "rulepacks", operation_id = "list_rulepacks",
    responses((status = 200, description = "Profiles and pack versions in force, and the last reload", body = RulepackList)))]
pub async fn list(State(state): State<AppState>) -> Json<RulepackList> {
    let catalog = state.registry.current();
    Json(RulepackList {
        profiles: catalog.profile_infos(),
        packs: catalog.pack_infos(),
        loaded_at: catalog.loaded_at.clone(),
        last_reload: state.registry.status(),
        watching: state.watching,
    })
}

#[utoipa::path(post, path = "/v1/rulepacks/reload", tag = "rulepacks", operation_id = "reload_rulepacks",
    responses(
        (status = 200, description = "Reloaded: versions before and after, and the packs whose fixtures ran", body = ReloadOutcome),
        (status = 422, description = "Refused: the packs on disk do not load (`rulepack-load-failed`), or do not match their locks or fail their fixtures (`rulepack-reload-refused`, per-pack reasons in `packs`); the last good set stays in force", body = crate::problem::ProblemBody)))]
pub async fn reload(State(state): State<AppState>) -> Result<Json<ReloadOutcome>, Problem> {
    let registry = state.registry.clone();
    // Compiling every pack and running the fixtures of changed ones takes CPU time: off
    // the async workers.
    let outcome = tokio::task::spawn_blocking(move || registry.reload())
        .await
        .map_err(|e| Problem::internal(format!("the reload task failed: {e}")))?;
    let active = || state.registry.current().versions();
    match outcome {
        Ok(outcome) => Ok(Json(outcome)),
        Err(ReloadError::Load(errors)) => Err(Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "rulepack-load-failed",
            "Rule packs failed to load",
            "the rule packs on disk do not load; the running version stays in force",
        )
        .with("errors", errors.to_string())
        .with("active_versions", active())),
        Err(ReloadError::Refused(refusal)) => Err(Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "rulepack-reload-refused",
            "Rule-pack reload refused",
            format!(
                "{} of the rule packs on disk did not pass the reload gate (lock files, \
                 fixtures); the last good set stays in force",
                refusal.packs.len()
            ),
        )
        .with("errors", refusal.to_string())
        .with("packs", &refusal.packs)
        .with("active_versions", active())),
    }
}
