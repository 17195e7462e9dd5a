//! `/v1/batches` and `/api/batches`: a ZIP of documents taken as it arrives and answered at
//! once (202); progress, the documents' outcomes page by page, and all results as NDJSON.
//! The work is [`crate::batches`]'s; the handlers read and answer.

use axum::body::Body;
use axum::extract::{Path, Query, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Principal;
use crate::batches::{self, BatchDocument, Intake, IntakeError, Mode, NewBatch};
use crate::problem::Problem;
use crate::state::AppState;
use crate::store::BatchRecord;

/// Content types of an upload: a ZIP, or an NDJSON feed of JSON invoices (what it is, is
/// read from its first bytes, so `application/octet-stream` serves both).
const UPLOAD_TYPES: &[&str] = &[
    "application/zip",
    "application/x-zip-compressed",
    "application/octet-stream",
    "application/x-ndjson",
    "application/jsonl",
];

/// The bytes of a ZIP or an NDJSON feed, for the OpenAPI description (sent as
/// `application/octet-stream`, or as `application/zip` / `application/x-ndjson`, which the
/// server takes too but not every client generator knows).
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary)]
pub struct BatchUpload(pub Vec<u8>);

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct BatchQuery {
    /// What is done with each document: `validate` (the default), each UBL 2.1 invoice or
    /// credit note (or JSON invoice) validated as by `POST /v1/invoice/validate`; `convert`,
    /// each PDF, workbook, CSV or JSON invoice (`.json`) converted as by `POST
    /// /v1/invoice/convert`, review gate included (the conversions are listed by `GET
    /// /v1/conversions?batch_id=` with the batch's id); `send`, each UBL invoice or JSON
    /// invoice sent as by `POST /v1/invoice/send` (validation, review gate and duplicate
    /// check included), but only once the identifiers (electronic addresses, VAT ids,
    /// IBANs) of every document have passed their checks: when any fails, the batch is
    /// `refused`, nothing of it is sent, and its documents list each failure
    /// (`outcome=refused`). Needs an activated connection.
    pub mode: Option<Mode>,
    /// Profile `id` or `id@version` for every document; detected per document when absent.
    pub profile: Option<String>,
    /// The day whose rules apply (`YYYY-MM-DD`, default today).
    #[param(value_type = Option<String>, format = Date, example = "2027-01-15")]
    pub at: Option<NaiveDate>,
}

/// A batch and its progress.
#[derive(Debug, Serialize, ToSchema)]
pub struct BatchView {
    pub id: String,
    /// `uploading` (the upload is still arriving), `received` (stored, not yet split),
    /// `checking` (mode `send`: every document's identifiers are checked before any is
    /// sent), `processing`, `completed`, `refused` (mode `send`: identifiers failed, nothing
    /// was sent; `error` says how many, the documents with outcome `refused` which), or
    /// `failed` (the upload could not be read; `error` says why).
    pub status: String,
    pub mode: String,
    pub profile: Option<String>,
    /// The day whose rules apply.
    pub rules_at: String,
    /// SHA-256 of the upload.
    pub input_sha256: String,
    pub input_bytes: i64,
    /// Documents in the upload (known once split).
    pub documents: i64,
    /// Documents with an outcome (while `checking`: documents checked).
    pub done: i64,
    /// Documents by outcome: `valid`, `invalid` (mode `validate`); `ready`, `needs_review`
    /// (`convert`); `queued`, `remediation_required`, `refused`, `withheld` (`send`);
    /// `failed` (could not be processed).
    pub counts: std::collections::BTreeMap<String, i64>,
    /// Documents per second since processing began.
    pub rate_per_second: Option<f64>,
    /// When the last document should be done at that rate (RFC 3339).
    pub estimated_finish: Option<String>,
    pub error: Option<String>,
    pub environment: String,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    #[schema(value_type = Object)]
    pub links: serde_json::Value,
}

/// A page of a batch's documents.
#[derive(Debug, Serialize, ToSchema)]
pub struct BatchDocumentPage {
    pub documents: Vec<BatchDocument>,
    /// Pass as `after` for the next page; absent on the last one.
    pub next_after: Option<i64>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DocumentsQuery {
    /// Documents after this sequence number (0: from the start).
    pub after: Option<i64>,
    /// At most this many (1–1000, default 100).
    pub limit: Option<i64>,
    /// Only documents with this outcome.
    pub outcome: Option<String>,
}

fn view(b: &BatchRecord, counts: Vec<(String, i64)>) -> BatchView {
    let started = b
        .started_at
        .as_deref()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok());
    let end = b
        .finished_at
        .as_deref()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&chrono::Utc))
        .unwrap_or_else(chrono::Utc::now);
    let rate = started.and_then(|s| {
        let secs = (end - s.with_timezone(&chrono::Utc)).num_milliseconds() as f64 / 1000.0;
        (secs > 0.0 && b.done > 0).then(|| b.done as f64 / secs)
    });
    let estimated_finish = match (rate, b.status.as_str()) {
        (Some(r), "processing") if r > 0.0 => {
            let left = (b.documents - b.done).max(0) as f64 / r;
            Some(crate::clock::format(
                chrono::Utc::now() + chrono::Duration::milliseconds((left * 1000.0) as i64),
            ))
        }
        _ => None,
    };
    BatchView {
        id: b.id.clone(),
        status: b.status.clone(),
        mode: b.mode.clone(),
        profile: b.profile.clone(),
        rules_at: b.rules_at.clone(),
        input_sha256: b.input_sha256.clone(),
        input_bytes: b.input_bytes,
        documents: b.documents,
        done: b.done,
        counts: counts.into_iter().collect(),
        rate_per_second: rate.map(|r| (r * 10.0).round() / 10.0),
        estimated_finish,
        error: b.error.clone(),
        environment: b.environment.clone(),
        created_at: b.created_at.clone(),
        started_at: b.started_at.clone(),
        finished_at: b.finished_at.clone(),
        links: batches::process::links(&b.id, None),
    }
}

async fn batch_of(
    state: &AppState,
    principal: &Principal,
    id: &str,
) -> Result<BatchRecord, Problem> {
    state
        .store
        .batch(&principal.tenant_id, id)
        .await?
        .ok_or_else(|| Problem::not_found(format!("no batch `{id}` in this tenant")))
}

async fn submit(
    state: &AppState,
    principal: &Principal,
    query: BatchQuery,
    request: Request,
) -> Result<Response, Problem> {
    let headers = request.headers();
    let kind = crate::routes::validate::content_type(headers);
    if !UPLOAD_TYPES.contains(&kind.as_str()) {
        return Err(Problem::unsupported_media_type(&kind, UPLOAD_TYPES));
    }
    let limit = state.config.batches.max_bytes;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(too_large(limit));
    }
    let rules_at = query.at.unwrap_or_else(invex_engine::registry::today);
    if let Some(p) = &query.profile {
        // Resolved now as each document will be: an unknown profile is refused before the
        // upload is read.
        let catalog = state.registry.current();
        if let Err(e) = catalog.resolve(p, rules_at) {
            return Err(crate::validation::profile_problem(&catalog, p, &e));
        }
    }
    let mode = query.mode.unwrap_or(Mode::Validate);
    if mode == Mode::Send
        && state
            .store
            .active_connection(&principal.tenant_id)
            .await?
            .is_none()
    {
        return Err(crate::sending::no_active_connection());
    }
    let new = NewBatch {
        tenant_id: principal.tenant_id.clone(),
        environment: state.environment().to_string(),
        mode,
        profile: query.profile,
        rules_at,
        idempotency_key: crate::routes::sending::idempotency_key(headers)?,
        input_name: None,
        input_kind: None,
        keep_input: false,
    };
    let body = request.into_body().into_data_stream();
    match batches::receive(&state.store, &state.config.batches, new, body).await {
        Ok(Intake::Created(b)) => {
            tracing::info!(batch = %b.id, bytes = b.input_bytes, "batch received");
            Ok(answer(StatusCode::ACCEPTED, view(&b, Vec::new())))
        }
        Ok(Intake::Existing(b)) => {
            let counts = state.store.batch_outcomes(&b.id).await?;
            Ok(answer(StatusCode::OK, view(&b, counts)))
        }
        Err(IntakeError::TooLarge { limit }) => Err(too_large(limit)),
        Err(IntakeError::Empty) => Err(Problem::bad_request(
            "the upload is empty: send a ZIP of documents or an NDJSON feed",
        )),
        Err(IntakeError::Body(e)) => Err(Problem::bad_request(format!(
            "the upload did not arrive whole: {e}"
        ))),
        Err(IntakeError::Store(e)) => Err(e.into()),
    }
}

/// Whether `Accept` asks for the ZIP (before NDJSON, if it names both).
fn wants_zip(headers: &axum::http::HeaderMap) -> bool {
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let zip = accept.find("application/zip");
    let ndjson = accept.find("application/x-ndjson");
    match (zip, ndjson) {
        (Some(z), Some(n)) => z < n,
        (Some(_), None) => true,
        _ => false,
    }
}

fn too_large(limit: u64) -> Problem {
    Problem::too_large(
        "max_bytes",
        limit as usize,
        format!("a batch upload is at most {limit} bytes (INVEX_BATCHES_MAX_BYTES)"),
    )
}

fn answer(status: StatusCode, v: BatchView) -> Response {
    let location = format!("/v1/batches/{}", v.id);
    let mut r = (status, Json(v)).into_response();
    if let Ok(l) = HeaderValue::from_str(&location) {
        r.headers_mut().insert(header::LOCATION, l);
    }
    r
}

#[utoipa::path(post, path = "/v1/batches", tag = "batches", operation_id = "submit_batch_v1",
    params(BatchQuery, ("Idempotency-Key" = Option<String>, Header, description = "The same key answers the batch it made (200) instead of taking the upload again")),
    request_body(description = "A ZIP of documents (UBL 2.1 invoices and credit notes, or JSON invoices; folders and `__MACOSX/` are skipped), or a JSON feed: NDJSON, one JSON invoice per line (`line N` names each). Sent as `application/octet-stream`, `application/zip` or `application/x-ndjson`: what it is, is read from its first bytes",
        content = BatchUpload, content_type = "application/octet-stream"),
    responses(
        (status = 202, description = "Stored whole; it is split and processed in the background (`Location`: its progress)", body = BatchView),
        (status = 200, description = "The batch this Idempotency-Key made before", body = BatchView),
        (status = 400, description = "Empty or broken upload, bad profile or key", body = crate::problem::ProblemBody),
        (status = 409, description = "Mode `send` without an activated connection (`no-active-connection`)", body = crate::problem::ProblemBody),
        (status = 413, description = "Over `batches.max_bytes`", body = crate::problem::ProblemBody),
        (status = 415, description = "Not a ZIP or NDJSON content type", body = crate::problem::ProblemBody)))]
pub async fn submit_v1(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Query(query): Query<BatchQuery>,
    request: Request,
) -> Result<Response, Problem> {
    submit(&state, &principal, query, request).await
}

#[utoipa::path(post, path = "/api/batches", tag = "batches", operation_id = "submit_batch_api",
    params(BatchQuery, ("Idempotency-Key" = Option<String>, Header, description = "The same key answers the batch it made (200) instead of taking the upload again")),
    request_body(description = "A ZIP of UBL 2.1 invoices and credit notes or JSON invoices, or an NDJSON feed of JSON invoices; sent as `application/octet-stream`, `application/zip` or `application/x-ndjson`",
        content = BatchUpload, content_type = "application/octet-stream"),
    responses(
        (status = 202, description = "Stored whole; processed in the background", body = BatchView),
        (status = 200, description = "The batch this Idempotency-Key made before", body = BatchView),
        (status = 400, description = "Empty or broken upload, bad profile or key", body = crate::problem::ProblemBody),
        (status = 409, description = "Mode `send` without an activated connection (`no-active-connection`)", body = crate::problem::ProblemBody),
        (status = 413, description = "Over `batches.max_bytes`", body = crate::problem::ProblemBody),
        (status = 415, description = "Not a ZIP or NDJSON content type", body = crate::problem::ProblemBody)))]
pub async fn submit_api(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Query(query): Query<BatchQuery>,
    request: Request,
) -> Result<Response, Problem> {
    submit(&state, &principal, query, request).await
}

async fn progress(
    state: &AppState,
    principal: &Principal,
    id: &str,
) -> Result<Json<BatchView>, Problem> {
    let b = batch_of(state, principal, id).await?;
    let counts = state.store.batch_outcomes(&b.id).await?;
    Ok(Json(view(&b, counts)))
}

#[utoipa::path(get, path = "/v1/batches/{id}", tag = "batches", operation_id = "get_batch_v1",
    params(("id" = String, Path, description = "Batch id (`batch_...`)")),
    responses(
        (status = 200, description = "The batch and its progress", body = BatchView),
        (status = 404, description = "No such batch in this tenant", body = crate::problem::ProblemBody)))]
pub async fn get_v1(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<BatchView>, Problem> {
    progress(&state, &principal, &id).await
}

#[utoipa::path(get, path = "/api/batches/{id}", tag = "batches", operation_id = "get_batch_api",
    params(("id" = String, Path, description = "Batch id (`batch_...`)")),
    responses(
        (status = 200, description = "The batch and its progress", body = BatchView),
        (status = 404, description = "No such batch in this tenant", body = crate::problem::ProblemBody)))]
pub async fn get_api(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<BatchView>, Problem> {
    progress(&state, &principal, &id).await
}

#[utoipa::path(get, path = "/v1/batches/{id}/documents", tag = "batches", operation_id = "list_batch_documents",
    params(("id" = String, Path, description = "Batch id"), DocumentsQuery),
    responses(
        (status = 200, description = "Documents in upload order with their outcomes", body = BatchDocumentPage),
        (status = 400, description = "A bad `limit` or `outcome`", body = crate::problem::ProblemBody),
        (status = 404, description = "No such batch in this tenant", body = crate::problem::ProblemBody)))]
pub async fn documents(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    Query(q): Query<DocumentsQuery>,
) -> Result<Json<BatchDocumentPage>, Problem> {
    let b = batch_of(&state, &principal, &id).await?;
    let limit = q.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(Problem::invalid_field("limit", "between 1 and 1000"));
    }
    if let Some(o) = &q.outcome {
        if !batches::OUTCOMES.contains(&o.as_str()) {
            return Err(Problem::invalid_field(
                "outcome",
                format!("one of {}", batches::OUTCOMES.join(", ")),
            ));
        }
    }
    let rows = state
        .store
        .batch_documents(
            &b.id,
            q.after.unwrap_or(0).max(0),
            limit,
            q.outcome.as_deref(),
            false,
        )
        .await?;
    let next_after = (rows.len() as i64 == limit)
        .then(|| rows.last().map(|r| r.seq))
        .flatten();
    Ok(Json(BatchDocumentPage {
        documents: rows.into_iter().map(BatchDocument::from).collect(),
        next_after,
    }))
}

#[utoipa::path(get, path = "/v1/batches/{id}/documents/{seq}", tag = "batches", operation_id = "get_batch_document",
    params(("id" = String, Path, description = "Batch id"), ("seq" = i64, Path, description = "The document's place in the upload")),
    responses(
        (status = 200, description = "The document, with its result once it has one", body = BatchDocument),
        (status = 404, description = "No such batch or document", body = crate::problem::ProblemBody)))]
pub async fn document_one(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path((id, seq)): Path<(String, i64)>,
) -> Result<Json<BatchDocument>, Problem> {
    let b = batch_of(&state, &principal, &id).await?;
    let row = state
        .store
        .batch_documents(&b.id, seq.saturating_sub(1), 1, None, true)
        .await?
        .into_iter()
        .find(|r| r.seq == seq)
        .ok_or_else(|| Problem::not_found(format!("batch `{id}` has no document {seq}")))?;
    Ok(Json(BatchDocument::from(row)))
}

#[utoipa::path(get, path = "/v1/batches/{id}/results", tag = "batches", operation_id = "get_batch_results",
    params(("id" = String, Path, description = "Batch id"),
        ("Accept" = Option<String>, Header, description = "`application/zip`: one file per document (`NNNNNN_NAME.report.json` when valid, `.errors.json` otherwise) and `batch.json`; otherwise NDJSON")),
    responses(
        (status = 200, description = "One JSON line per document with an outcome, in upload order (`seq`, `name`, `sha256`, `outcome`, `result`): read page by page from the store as it is sent; or, asked for, the same as a ZIP",
         content((String = "application/x-ndjson"), (BatchUpload = "application/zip"))),
        (status = 404, description = "No such batch in this tenant", body = crate::problem::ProblemBody)))]
pub async fn results(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    headers: axum::http::HeaderMap,
) -> Result<Response, Problem> {
    let b = batch_of(&state, &principal, &id).await?;
    if wants_zip(&headers) {
        let counts = state.store.batch_outcomes(&b.id).await?;
        let summary = serde_json::to_value(view(&b, counts)).unwrap_or_default();
        let file = batches::results::archive(&state.store, &b.tenant_id, &b.id, summary)
            .await
            .map_err(|e| match e {
                batches::results::ResultsError::Store(e) => Problem::from(e),
                e => Problem::internal(e.to_string()),
            })?;
        let stream = tokio_util::io::ReaderStream::new(tokio::fs::File::from_std(file));
        let disposition = format!("attachment; filename=\"{}-results.zip\"", b.id);
        return Ok((
            [
                (header::CONTENT_TYPE, "application/zip".to_string()),
                (header::CONTENT_DISPOSITION, disposition),
            ],
            Body::from_stream(stream),
        )
            .into_response());
    }
    let store = state.store.clone();
    // Pages of 200 documents, one line each, as the client reads: never all in memory.
    let lines = futures_util::stream::try_unfold(0i64, move |after| {
        let store = store.clone();
        let batch = b.id.clone();
        async move {
            let rows = store
                .batch_documents(&batch, after, 200, None, true)
                .await?;
            let Some(last) = rows.last().map(|r| r.seq) else {
                return Ok::<_, crate::store::StoreError>(None);
            };
            let mut page = String::new();
            for r in rows.into_iter().filter(|r| r.outcome.is_some()) {
                let line = serde_json::to_string(&BatchDocument::from(r)).unwrap_or_default();
                page.push_str(&line);
                page.push('\n');
            }
            Ok(Some((bytes::Bytes::from(page), last)))
        }
    });
    Ok((
        [(header::CONTENT_TYPE, "application/x-ndjson")],
        Body::from_stream(lines),
    )
        .into_response())
}
