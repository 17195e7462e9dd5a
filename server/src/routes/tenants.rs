//! Tenants: the operator's admins create them, each with a first admin key.

use axum::extract::{Path, Query, State};
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::keys::{issue_key, validate_name, CreatedKey};
use crate::auth::{Principal, Role};
use crate::problem::Problem;
use crate::routes::created::Created;
use crate::routes::page::{self, PageQuery};
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
    /// Newest first.
    pub tenants: Vec<TenantView>,
    /// Pass as `before` for the next (older) page; absent on the last page.
    pub next: Option<String>,
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
) -> Result<Created<CreatedTenant>, Problem> {
    operator_only(&principal)?;
    let name = validate_name("name", &body.name)?;
    let tenant = state.store.create_tenant(&name).await?;
    let admin_key = issue_key(&state, &tenant.id, Role::Admin, "first admin key".into()).await?;
    tracing::info!(tenant_id = %tenant.id, "tenant created");
    Ok(Created::at(
        format!("/v1/tenants/{}", tenant.id),
        CreatedTenant {
            tenant: tenant.into(),
            admin_key,
        },
    ))
}

#[utoipa::path(get, path = "/v1/tenants/{id}", tag = "tenants", operation_id = "get_tenant",
    params(("id" = String, Path, description = "Tenant id (`ten_...`)")),
    responses((status = 200, description = "The tenant", body = TenantView),
              (status = 403, description = "Not an admin of the operator tenant", body = crate::problem::ProblemBody),
              (status = 404, description = "No such tenant", body = crate::problem::ProblemBody)))]
pub async fn get_one(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<TenantView>, Problem> {
    operator_only(&principal)?;
    let tenant = state
        .store
        .tenant(&id)
        .await?
        .ok_or_else(|| Problem::not_found(format!("no tenant `{id}`")))?;
    Ok(Json(tenant.into()))
}

#[utoipa::path(get, path = "/v1/tenants", tag = "tenants", operation_id = "list_tenants",
    params(PageQuery),
    responses((status = 200, description = "Every tenant", body = TenantList),
              (status = 403, description = "Not an admin of the operator tenant", body = crate::problem::ProblemBody)))]
pub async fn list(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Query(query): Query<PageQuery>,
) -> Result<Json<TenantList>, Problem> {
    operator_only(&principal)?;
    let size = query.size()?;
    let rows = state
        .store
        .tenants(query.before.as_deref(), size + 1)
        .await?;
    let (tenants, next) = page::cut(rows, size, |t| &t.id);
    Ok(Json(TenantList {
        tenants: tenants.into_iter().map(TenantView::from).collect(),
        next,
    }))
}
