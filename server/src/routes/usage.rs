//! `GET /v1/usage`: a tenant's metered calls this month (or another) and their price.

use axum::extract::{Query, State};
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Principal;
use crate::problem::Problem;
use crate::state::AppState;
use crate::store::TenantKind;
use crate::usage::{current_period, VatUsage, VAT_VERIFY};

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UsageQuery {
    /// Calendar month `YYYY-MM` (UTC); the current month when absent.
    pub period: Option<String>,
    /// Another tenant's id (operator keys only).
    pub tenant: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Usage {
    pub tenant_id: String,
    /// `YYYY-MM`, UTC.
    pub period: String,
    pub vat_verification: VatUsage,
    pub environment: String,
}

#[utoipa::path(get, path = "/v1/usage", tag = "account", operation_id = "get_usage",
    params(UsageQuery),
    responses(
        (status = 200, description = "Calls, free calls remaining and the amount due for the month", body = Usage),
        (status = 403, description = "`tenant` given by a customer key", body = crate::problem::ProblemBody),
        (status = 422, description = "`period` is not `YYYY-MM`", body = crate::problem::ProblemBody)))]
pub async fn usage(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Query(query): Query<UsageQuery>,
) -> Result<Json<Usage>, Problem> {
    let period = match query.period {
        Some(p) if valid_period(&p) => p,
        Some(p) => {
            return Err(Problem::invalid_field(
                "period",
                format!("`{p}` is not a calendar month written YYYY-MM"),
            ))
        }
        None => current_period(),
    };
    let tenant = match query.tenant {
        Some(t) if t != principal.tenant_id => {
            if principal.tenant_kind != TenantKind::Operator {
                return Err(Problem::forbidden(
                    "only the operator's keys may read another tenant's usage",
                ));
            }
            t
        }
        _ => principal.tenant_id.clone(),
    };
    let calls = state
        .meter
        .calls(&tenant, &period, VAT_VERIFY)
        .await
        .map_err(|e| Problem::internal(format!("reading usage: {e}")))?;
    Ok(Json(Usage {
        tenant_id: tenant,
        period,
        vat_verification: VatUsage::from_calls(calls),
        environment: state.environment().to_string(),
    }))
}

fn valid_period(p: &str) -> bool {
    chrono::NaiveDate::parse_from_str(&format!("{p}-01"), "%Y-%m-%d").is_ok() && p.len() == 7
}
