//! `GET /v1/vat/verify?vat=SK2022749619`: local checks, then the register.

use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::Json;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::config::Mode;
use crate::problem::Problem;
use crate::state::AppState;
use crate::store;
use crate::vat::{local, sandbox, RegisterAnswer, VatResult};

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct VerifyQuery {
    /// Country prefix and number, e.g. `SK2022749619` (spaces, dots and dashes ignored).
    pub vat: String,
}

#[utoipa::path(get, path = "/v1/vat/verify", tag = "lookups",
    params(VerifyQuery),
    responses(
        (status = 200, description = "The verdict: valid, invalid (not registered) or invalid_format (failed local checks; no register asked)", body = VatResult),
        (status = 503, description = "The register cannot answer now (never reported as invalid); `Retry-After` says when to retry", body = crate::problem::ProblemBody)))]
pub async fn verify(
    State(state): State<AppState>,
    Query(query): Query<VerifyQuery>,
) -> Result<Json<VatResult>, Problem> {
    let checked = local::check(&query.vat);
    let environment = state.environment().to_string();
    let result = |valid: bool, status: &str, source: &str| VatResult {
        vat: checked.normalized.clone(),
        valid,
        status: status.to_string(),
        name: None,
        address: None,
        source: source.to_string(),
        checked_at: store::now(),
        reason: None,
        cached: false,
        environment: environment.clone(),
    };
    if let Err(fault) = &checked.outcome {
        return Ok(Json(VatResult {
            reason: Some(fault.reason()),
            ..result(false, "invalid_format", "local-checks")
        }));
    }
    let (answer, source) = match (&state.vies, state.config.mode) {
        (Some(vies), Mode::Production) => (vies.check(&checked.normalized).await, "VIES"),
        _ => (sandbox::lookup(&checked.normalized), "sandbox"),
    };
    match answer {
        RegisterAnswer::Known {
            valid,
            name,
            address,
        } => Ok(Json(VatResult {
            name,
            address,
            reason: (!valid).then(|| {
                format!("{source} does not know this number as an active VAT registration")
            }),
            ..result(valid, if valid { "valid" } else { "invalid" }, source)
        })),
        RegisterAnswer::Rejected { reason } => Ok(Json(VatResult {
            reason: Some(reason),
            ..result(false, "invalid_format", source)
        })),
        RegisterAnswer::Unavailable {
            reason,
            retry_after_secs,
        } => Err(Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "register-unavailable",
            "The VAT register cannot answer now",
            format!("{reason}; the number is not known to be invalid, retry later"),
        )
        .with("vat", &checked.normalized)
        .with("retry_after_seconds", retry_after_secs)
        .header(header::RETRY_AFTER, &retry_after_secs.to_string())),
    }
}
