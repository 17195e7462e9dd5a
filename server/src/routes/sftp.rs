//! SFTP accounts of the caller's tenant: created with their public keys, listed, revoked.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth::{Principal, Role};
use crate::batches::Mode;
use crate::problem::Problem;
use crate::routes::created::Created;
use crate::sftp::accounts::{self, AccountError, NewAccount};
use crate::state::AppState;
use crate::store::SftpAccountRecord;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSftpAccount {
    /// What the account is for (1–100 characters), e.g. `ERP nightly export`.
    pub name: String,
    /// As an API key's: `auditor` reads `outbox/` and `archive/`; the others also deliver.
    pub role: Role,
    /// OpenSSH public keys (`ssh-ed25519 AAAA... comment`), 1 to 10; RSA at least 2048 bits.
    pub public_keys: Vec<String>,
    /// What each delivered file becomes: a batch of this mode (as `POST /v1/batches?mode=`:
    /// `validate`, the default; `convert`; `send`, which needs an activated connection when
    /// the files arrive).
    #[serde(default)]
    pub mode: Option<Mode>,
    /// The profile (`id` or `id@version`) of those batches; detected per document when
    /// absent.
    #[serde(default)]
    pub profile: Option<String>,
}

/// An SFTP account and how to reach it.
#[derive(Debug, Serialize, ToSchema)]
pub struct SftpAccountView {
    pub id: String,
    /// The SSH user name (the same as `id`).
    pub username: String,
    pub name: String,
    pub role: String,
    /// What each delivered file becomes: a batch of this mode.
    pub mode: String,
    pub profile: Option<String>,
    /// `SHA256:...` of each public key, as `ssh-keygen -l` prints them.
    pub key_fingerprints: Vec<String>,
    /// Where the SFTP server listens (`host:port`) and its host key's fingerprint, when it
    /// runs in this instance.
    pub server: Option<SftpServerView>,
    pub created_at: String,
    pub revoked_at: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SftpServerView {
    pub address: String,
    pub host_key_fingerprint: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SftpAccountList {
    /// Oldest first, revoked ones included.
    pub accounts: Vec<SftpAccountView>,
}

fn view(state: &AppState, r: SftpAccountRecord) -> SftpAccountView {
    SftpAccountView {
        username: r.id.clone(),
        key_fingerprints: accounts::fingerprints(&r.public_keys),
        server: state.sftp.get().map(|s| SftpServerView {
            address: s.0.to_string(),
            host_key_fingerprint: s.1.clone(),
        }),
        id: r.id,
        name: r.name,
        role: r.role,
        mode: r.mode,
        profile: r.profile,
        created_at: r.created_at,
        revoked_at: r.revoked_at,
    }
}

fn account_problem(e: AccountError) -> Problem {
    match e {
        AccountError::Store(e) => e.into(),
        AccountError::BadName => Problem::invalid_field("name", e.to_string()),
        e => Problem::invalid_field("public_keys", e.to_string()),
    }
}

#[utoipa::path(post, path = "/v1/sftp/accounts", tag = "batches", operation_id = "create_sftp_account",
    request_body = CreateSftpAccount,
    responses((status = 201, description = "The account: sign in as `username` with one of the keys", body = SftpAccountView),
              (status = 400, description = "Unknown profile", body = crate::problem::ProblemBody),
              (status = 422, description = "Bad name, role, mode or public key", body = crate::problem::ProblemBody)))]
pub async fn create(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Json(body): Json<CreateSftpAccount>,
) -> Result<Created<SftpAccountView>, Problem> {
    if let Some(p) = &body.profile {
        let catalog = state.registry.current();
        if let Err(e) = catalog.resolve(p, invex_engine::registry::today()) {
            return Err(crate::validation::profile_problem(&catalog, p, &e));
        }
    }
    let new = NewAccount {
        name: body.name,
        role: body.role,
        public_keys: body.public_keys,
        mode: body.mode.unwrap_or(Mode::Validate),
        profile: body.profile,
    };
    let record = accounts::create(&state.store, &principal.tenant_id, new)
        .await
        .map_err(account_problem)?;
    tracing::info!(account = %record.id, role = %record.role, "sftp account created");
    Ok(Created::at(
        format!("/v1/sftp/accounts/{}", record.id),
        view(&state, record),
    ))
}

#[utoipa::path(get, path = "/v1/sftp/accounts", tag = "batches", operation_id = "list_sftp_accounts",
    responses((status = 200, description = "The tenant's SFTP accounts", body = SftpAccountList)))]
pub async fn list(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
) -> Result<Json<SftpAccountList>, Problem> {
    let rows = state.store.sftp_accounts(&principal.tenant_id).await?;
    Ok(Json(SftpAccountList {
        accounts: rows.into_iter().map(|r| view(&state, r)).collect(),
    }))
}

async fn tenant_account(
    state: &AppState,
    principal: &Principal,
    id: &str,
) -> Result<SftpAccountRecord, Problem> {
    state
        .store
        .sftp_account(id)
        .await?
        .filter(|a| a.tenant_id == principal.tenant_id)
        .ok_or_else(|| Problem::not_found(format!("no SFTP account `{id}` in this tenant")))
}

#[utoipa::path(get, path = "/v1/sftp/accounts/{id}", tag = "batches", operation_id = "get_sftp_account",
    params(("id" = String, Path, description = "Account id (its user name, `sftp...`)")),
    responses((status = 200, description = "The account", body = SftpAccountView),
              (status = 404, description = "No such account in this tenant", body = crate::problem::ProblemBody)))]
pub async fn get_one(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<SftpAccountView>, Problem> {
    let account = tenant_account(&state, &principal, &id).await?;
    Ok(Json(view(&state, account)))
}

#[utoipa::path(delete, path = "/v1/sftp/accounts/{id}", tag = "batches", operation_id = "revoke_sftp_account",
    params(("id" = String, Path, description = "Account id")),
    responses((status = 204, description = "Revoked: its keys sign in no more (what it delivered stays)"),
              (status = 404, description = "No such account in this tenant", body = crate::problem::ProblemBody),
              (status = 409, description = "Already revoked", body = crate::problem::ProblemBody)))]
pub async fn revoke(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<StatusCode, Problem> {
    tenant_account(&state, &principal, &id).await?;
    let now = crate::clock::now();
    if state
        .store
        .revoke_sftp_account(&principal.tenant_id, &id, &now)
        .await?
    {
        tracing::info!(account = %id, "sftp account revoked");
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(Problem::conflict(
            "already-revoked",
            format!("SFTP account `{id}` was already revoked"),
        ))
    }
}
