//! Key management: admins create, list and revoke their tenant's keys.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth::{keys, Principal, Role};
use crate::problem::Problem;
use crate::routes::created::Created;
use crate::routes::page::{self, PageQuery};
use crate::state::AppState;
use crate::store::{KeyRecord, RevokeOutcome};

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateKey {
    pub role: Role,
    /// What the key is for (1–100 characters), e.g. `ERP production`.
    pub name: String,
}

/// A key as listed: never the key itself, only its lookup prefix.
#[derive(Debug, Serialize, ToSchema)]
pub struct KeyView {
    pub id: String,
    pub name: String,
    pub role: String,
    /// The start of the key, to recognise it.
    pub prefix: String,
    pub tenant_id: String,
    pub created_at: String,
    pub revoked_at: Option<String>,
}

impl From<KeyRecord> for KeyView {
    fn from(r: KeyRecord) -> KeyView {
        KeyView {
            id: r.id,
            name: r.name,
            role: r.role,
            prefix: r.prefix,
            tenant_id: r.tenant_id,
            created_at: r.created_at,
            revoked_at: r.revoked_at,
        }
    }
}

/// A new key: the only time the key is shown.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedKey {
    #[serde(flatten)]
    pub view: KeyView,
    /// The key. Store it now: it is not shown again.
    pub key: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct KeyList {
    /// Newest first, revoked keys included.
    pub keys: Vec<KeyView>,
    /// Pass as `before` for the next (older) page; absent on the last page.
    pub next: Option<String>,
}

pub fn validate_name(field: &str, name: &str) -> Result<String, Problem> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(Problem::invalid_field(
            field,
            format!("`{field}` must be 1 to 100 characters"),
        ));
    }
    Ok(name.to_string())
}

/// Create and store a key of `role` in `tenant_id`; the key itself is returned once.
pub async fn issue_key(
    state: &AppState,
    tenant_id: &str,
    role: Role,
    name: String,
) -> Result<CreatedKey, Problem> {
    let key = keys::generate();
    let record = KeyRecord {
        id: crate::ids::new_id("key"),
        tenant_id: tenant_id.to_string(),
        name,
        role: role.as_str().to_string(),
        prefix: keys::lookup_prefix(&key),
        hash: keys::hash(&key),
        created_at: crate::clock::now(),
        revoked_at: None,
    };
    state.store.insert_key(&record).await?;
    // Known from its first use: not counted against the client's failure budget.
    state.auth.remember(record.clone());
    Ok(CreatedKey {
        view: record.into(),
        key,
    })
}

#[utoipa::path(post, path = "/v1/keys", tag = "keys", operation_id = "create_key",
    request_body = CreateKey,
    responses((status = 201, description = "The key, shown once", body = CreatedKey),
              (status = 422, description = "Unknown role or bad name", body = crate::problem::ProblemBody)))]
pub async fn create(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Json(body): Json<CreateKey>,
) -> Result<Created<CreatedKey>, Problem> {
    let name = validate_name("name", &body.name)?;
    let created = issue_key(&state, &principal.tenant_id, body.role, name).await?;
    tracing::info!(key_id = %created.view.id, role = body.role.as_str(), "API key created");
    Ok(Created::at(
        format!("/v1/keys/{}", created.view.id),
        created,
    ))
}

#[utoipa::path(get, path = "/v1/keys", tag = "keys", operation_id = "list_keys",
    params(PageQuery),
    responses((status = 200, description = "The tenant's keys, newest first, revoked ones included", body = KeyList)))]
pub async fn list(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Query(query): Query<PageQuery>,
) -> Result<Json<KeyList>, Problem> {
    let size = query.size()?;
    let rows = state
        .store
        .keys(&principal.tenant_id, query.before.as_deref(), size + 1)
        .await?;
    let (keys, next) = page::cut(rows, size, |k| &k.id);
    Ok(Json(KeyList {
        keys: keys.into_iter().map(KeyView::from).collect(),
        next,
    }))
}

#[utoipa::path(get, path = "/v1/keys/{id}", tag = "keys", operation_id = "get_key",
    params(("id" = String, Path, description = "Key id (`key_...`)")),
    responses((status = 200, description = "The key (never the secret)", body = KeyView),
              (status = 404, description = "No such key in this tenant", body = crate::problem::ProblemBody)))]
pub async fn get_one(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<KeyView>, Problem> {
    let key = state
        .store
        .key(&principal.tenant_id, &id)
        .await?
        .ok_or_else(|| Problem::not_found(format!("no key `{id}` in this tenant")))?;
    Ok(Json(key.into()))
}

#[utoipa::path(delete, path = "/v1/keys/{id}", tag = "keys", operation_id = "revoke_key",
    params(("id" = String, Path, description = "Key id (`key_...`)")),
    responses((status = 204, description = "Revoked"),
              (status = 404, description = "No such key in this tenant", body = crate::problem::ProblemBody),
              (status = 409, description = "Already revoked, or the tenant's last admin key", body = crate::problem::ProblemBody)))]
pub async fn revoke(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<StatusCode, Problem> {
    match state.store.revoke_key(&principal.tenant_id, &id).await? {
        RevokeOutcome::Now => {
            state.auth.forget(&id);
            tracing::info!(key_id = %id, "API key revoked");
            Ok(StatusCode::NO_CONTENT)
        }
        RevokeOutcome::Already => Err(Problem::conflict(
            "already-revoked",
            format!("key `{id}` was already revoked"),
        )),
        RevokeOutcome::NotFound => Err(Problem::not_found(format!("no key `{id}` in this tenant"))),
        RevokeOutcome::LastAdmin => Err(Problem::conflict(
            "last-admin-key",
            "this is the tenant's last active admin key; create another admin key first",
        )),
    }
}
