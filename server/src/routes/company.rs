//! `GET /v1/company/sk/{ico}`: the IČO's check digit first (answered at once, never sent
//! upstream), then the four registers concurrently within the time budget.

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::Json;

use crate::company::{ico, CompanyAnswer};
use crate::problem::Problem;
use crate::state::AppState;

/// Seconds a client should wait before asking again when no register answered.
const RETRY_AFTER_SECS: u64 = 60;

#[utoipa::path(get, path = "/v1/company/sk/{ico}", tag = "lookups", operation_id = "lookup_slovak_company",
    params(("ico" = String, Path, description = "Slovak IČO: 8 digits with a valid check digit (a legacy 6-digit IČO is read left-padded with `00`)", example = "31322832")),
    description = "Slovak company data in four groups: `commercial_register` (RPO), `debtors` (Financial Administration tax debtors; social and health insurers are not covered and the answer says so), `financial_results` (RÚZ) and `public_sector_partners` (RPVS). Each group has `source`, `source_url`, `fetched_at`, `status` (`ok`, `not_found`, `unavailable`), `cached`, `data` (null unless `ok`) and `detail`. The registers are asked concurrently within the configured time budget; a register that fails or is slow makes its group `unavailable` and the answer `partial`, still with status 200. Only when no register answers at all is the answer 503.",
    responses(
        (status = 200, description = "What the registers said; `partial` when at least one group is unavailable", body = CompanyAnswer),
        (status = 400, description = "Not an IČO (`invalid-ico`: length, characters or check digit); no register was asked", body = crate::problem::ProblemBody),
        (status = 503, description = "No register answered (`company-registers-unavailable`); `Retry-After` says when to retry", body = crate::problem::ProblemBody)))]
pub async fn lookup(
    State(state): State<AppState>,
    Path(raw): Path<String>,
) -> Result<Json<CompanyAnswer>, Problem> {
    let ico = ico::parse(&raw).map_err(|fault| {
        Problem::new(
            StatusCode::BAD_REQUEST,
            "invalid-ico",
            "Not a valid Slovak IČO",
            fault.to_string(),
        )
        .with("ico", raw.trim())
        .with("fault", fault.code())
    })?;
    let answer = state.company.lookup(&ico).await;
    if answer.all_unavailable() {
        let unavailable: serde_json::Map<String, serde_json::Value> = answer
            .unavailable()
            .into_iter()
            .map(|(group, detail)| (group.to_string(), serde_json::Value::String(detail)))
            .collect();
        return Err(Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "company-registers-unavailable",
            "No company register can answer now",
            format!("none of the four registers answered for IČO {ico}; nothing is known about it either way, retry later"),
        )
        .with("ico", &ico)
        .with("unavailable", unavailable)
        .with("retry_after_seconds", RETRY_AFTER_SECS)
        .header(header::RETRY_AFTER, &RETRY_AFTER_SECS.to_string()));
    }
    Ok(Json(answer))
}
