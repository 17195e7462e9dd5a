//! `GET /v1/vat/verify?vat=SK2022749619` and the batch form `POST /v1/vat/verify`.

use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::{Extension, Json};
use futures_util::stream::{self, StreamExt};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Principal;
use crate::problem::Problem;
use crate::state::AppState;
use crate::usage::VAT_VERIFY;
use crate::vat::service::Unavailable;
use crate::vat::VatResult;

/// Most numbers in one batch request.
pub const MAX_BATCH: usize = 100;

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct VerifyQuery {
    /// Country prefix and number, e.g. `SK2022749619` (spaces, dots and dashes ignored).
    pub vat: String,
}

#[utoipa::path(get, path = "/v1/vat/verify", tag = "lookups", operation_id = "verify_vat_number",
    params(VerifyQuery),
    responses(
        (status = 200, description = "The verdict: valid, invalid (not registered) or invalid_format (failed local checks; no register asked). Cached answers say so (`cached`, `cache_age_seconds`); while the register is down an older answer may be served with `stale: true` and a warning", body = VatResult),
        (status = 503, description = "The register cannot answer now and no earlier answer is known (never reported as invalid); `Retry-After` says when to retry", body = crate::problem::ProblemBody)))]
pub async fn verify(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Query(query): Query<VerifyQuery>,
) -> Result<Json<VatResult>, Problem> {
    let answer = state.vat.verify(&query.vat).await;
    if answer.is_ok() {
        state.meter.record(&principal.tenant_id, VAT_VERIFY, 1);
    }
    answer.map(Json).map_err(unavailable_problem)
}

fn unavailable_problem(u: Unavailable) -> Problem {
    Problem::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "register-unavailable",
        "The VAT register cannot answer now",
        format!(
            "{}; the number is not known to be invalid, retry later",
            u.reason
        ),
    )
    .with("vat", &u.vat)
    .with("retry_after_seconds", u.retry_after_secs)
    .header(header::RETRY_AFTER, &u.retry_after_secs.to_string())
}

/// A batch: a JSON array of numbers, or an object with the array under `vat`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum BatchRequest {
    List(Vec<String>),
    Object { vat: Vec<String> },
}

impl BatchRequest {
    fn into_numbers(self) -> Vec<String> {
        match self {
            BatchRequest::List(v) | BatchRequest::Object { vat: v } => v,
        }
    }
}

/// One number of a batch, in the order sent.
#[derive(Debug, Serialize, ToSchema)]
pub struct BatchItem {
    /// Position in the request, from 0.
    pub index: usize,
    /// The number as sent.
    pub input: String,
    /// `valid`, `invalid`, `invalid_format` or `unavailable` (the register cannot answer
    /// now: not known to be invalid; see `unavailable`).
    pub status: String,
    /// The answer, as `GET /v1/vat/verify` gives it; absent when unavailable.
    pub result: Option<VatResult>,
    pub unavailable: Option<BatchUnavailable>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BatchUnavailable {
    pub reason: String,
    pub retry_after_seconds: u64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BatchSummary {
    pub valid: usize,
    pub invalid: usize,
    pub invalid_format: usize,
    pub unavailable: usize,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BatchResponse {
    pub count: usize,
    pub summary: BatchSummary,
    /// One item per number sent, in the same order.
    pub results: Vec<BatchItem>,
    pub environment: String,
}

#[utoipa::path(post, path = "/v1/vat/verify", tag = "lookups", operation_id = "verify_vat_numbers",
    request_body(content = BatchRequest, description = "Up to 100 VAT numbers: `[\"SK2022749619\", \"DE129273398\"]` or `{\"vat\": [...]}`"),
    responses(
        (status = 200, description = "One result per number, in order; numbers are checked concurrently. A register outage affects only its items (`status: unavailable`)", body = BatchResponse),
        (status = 413, description = "More than 100 numbers", body = crate::problem::ProblemBody),
        (status = 422, description = "Empty list or not a list of strings", body = crate::problem::ProblemBody)))]
pub async fn verify_batch(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Json(body): Json<BatchRequest>,
) -> Result<Json<BatchResponse>, Problem> {
    let numbers = body.into_numbers();
    if numbers.len() > MAX_BATCH {
        return Err(Problem::too_large(
            "vat_batch_size",
            MAX_BATCH,
            format!(
                "{} VAT numbers sent; a batch holds at most {MAX_BATCH}: split it",
                numbers.len()
            ),
        ));
    }
    if numbers.is_empty() {
        return Err(Problem::invalid_field(
            "vat",
            "the list of VAT numbers is empty",
        ));
    }
    let service = state.vat.clone();
    // `buffered` keeps the request's order while running several checks at once.
    let results: Vec<BatchItem> = stream::iter(numbers.into_iter().enumerate())
        .map(|(index, input)| {
            let service = service.clone();
            async move {
                let answer = service.verify(&input).await;
                batch_item(index, input, answer)
            }
        })
        .buffered(service.batch_concurrency())
        .collect()
        .await;
    let count = |status: &str| results.iter().filter(|r| r.status == status).count();
    let summary = BatchSummary {
        valid: count("valid"),
        invalid: count("invalid"),
        invalid_format: count("invalid_format"),
        unavailable: count("unavailable"),
    };
    let answered = results.len() - summary.unavailable;
    state
        .meter
        .record(&principal.tenant_id, VAT_VERIFY, answered as u64);
    Ok(Json(BatchResponse {
        count: results.len(),
        summary,
        results,
        environment: state.environment().to_string(),
    }))
}

fn batch_item(index: usize, input: String, answer: Result<VatResult, Unavailable>) -> BatchItem {
    match answer {
        Ok(result) => BatchItem {
            index,
            input,
            status: result.status.clone(),
            result: Some(result),
            unavailable: None,
        },
        Err(u) => BatchItem {
            index,
            input,
            status: "unavailable".to_string(),
            result: None,
            unavailable: Some(BatchUnavailable {
                reason: u.reason,
                retry_after_seconds: u.retry_after_secs,
            }),
        },
    }
}
