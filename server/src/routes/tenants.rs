//! Tenants: the operator's admins create them, each with a first admin key.

use axum::extract::State;
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::keys::{issue_key, validate_name, CreatedKey};
use crate::auth::{Principal, Role};
use crate::problem::Problem;
use crate::state::AppState;
use crate::store::{Tenant, TenantKind};

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTenant {
    /// The customer's name (1–100 characters).
    pub name: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TenantView {
    pub id: String,
    pub name: String,
    /// `operator` or `customer`.
    pub kind: String,
    pub created_at: String,
}

impl From<Tenant> for TenantView {
    fn from(t: Tenant) -> TenantView {
        TenantView {
            id: t.id,
            name: t.name,
            kind: t.kind.as_str().to_string(),
            created_at: t.created_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedTenant {
    pub tenant: TenantView,
    /// The tenant's first admin key, shown once.
    pub admin_key: CreatedKey,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TenantList {
    pub tenants: Vec<TenantView>,
}

fn operator_only(principal: &Principal) -> Result<(), Problem> {
    if principal.tenant_kind == TenantKind::Operator {
        Ok(())
    } else {
        Err(Problem::forbidden(
            "only admins of the operator tenant manage tenants",
        ))
    }
}

#[utoipa::path(post, path = "/v1/tenants", tag = "tenants", operation_id = "create_tenant",
    request_body = CreateTenant,
    responses((status = 201, description = "The tenant and its first admin key (shown once)", body = CreatedTenant),
              (status = 403, description = "Not an admin of the operator tenant", body = crate::problem::ProblemBody)))]
pub async fn create(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Json(body): Json<CreateTenant>,
) -> Result<(StatusCode, Json<CreatedTenant>), Problem> {
    operator_only(&principal)?;
    let name = validate_name("name", &body.name)?;
    let tenant = state.store.create_tenant(&name).await?;
    let admin_key = issue_key(&state, &tenant.id, Role::Admin, "first admin key".into()).await?;
    tracing::info!(tenant_id = %tenant.id, "tenant created");
    Ok((
        StatusCode::CREATED,
        Json(CreatedTenant {
            tenant: tenant.into(),
            admin_key,
        }),
    ))
}

#[utoipa::path(get, path = "/v1/tenants", tag = "tenants", operation_id = "list_tenants",
    responses((status = 200, description = "Every tenant", body = TenantList),
              (status = 403, description = "Not an admin of the operator tenant", body = crate::problem::ProblemBody)))]
pub async fn list(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
) -> Result<Json<TenantList>, Problem> {
    operator_only(&principal)?;
    let tenants = state.store.tenants().await?;
    Ok(Json(TenantList {
        tenants: tenants.into_iter().map(TenantView::from).collect(),
    }))
}
