//! Validation routes: `POST /api/validate` (multipart, several files), `POST
//! /v1/invoice/validate` (raw XML or multipart, one file), and the stored results.

use axum::body::Body;
use axum::extract::{FromRequest, Multipart, Path, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use bytes::Bytes;
use chrono::NaiveDate;
use invex_engine::report::{to_svrl, Report};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Principal;
use crate::problem::Problem;
use crate::routes::admit::Admitted;
use crate::routes::form::Form;
use crate::routes::page::{self, PageQuery};
use crate::state::AppState;
use crate::store::ValidationRecord;
use crate::validation::{self, Declared, ValidationResult};

pub const SVRL: &str = "application/svrl+xml";
const JSON: &str = "application/json";

/// Multipart fields that carry a document.
const FILE_FIELDS: &[&str] = &["files[]", "files", "file", "xml_file"];
/// Content types taken as a raw XML body.
const XML_TYPES: &[&str] = &["application/xml", "text/xml"];
/// Content types taken as a JSON invoice (validated as the UBL it is written as).
const JSON_TYPES: &[&str] = &[crate::invoice::json::MEDIA_TYPE, "application/json"];

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ValidateQuery {
    /// Profile id (`peppol-bis3-sk`) or `id@version`; detected from the document when
    /// absent (the result's `detection` says which and why).
    pub profile: Option<String>,
    /// The day whose rules apply (`YYYY-MM-DD`, default today): a bare profile name, and
    /// detection, take the newest profile version in force on that day (the result's
    /// `resolution` or `detection` says which); `id@version` always names that version.
    #[param(value_type = Option<String>, format = Date, example = "2027-01-15")]
    pub at: Option<NaiveDate>,
}

impl ValidateQuery {
    fn day(&self) -> NaiveDate {
        self.at.unwrap_or_else(invex_engine::registry::today)
    }
}

/// The answer format a request asks for in `Accept`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wanted {
    Json,
    Svrl,
}

fn wanted(headers: &HeaderMap) -> Result<Wanted, Problem> {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return Ok(Wanted::Json);
    };
    for range in accept.split(',') {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let refused = parts.any(|p| {
            let p = p.trim().replace(' ', "");
            p == "q=0" || p == "q=0.0" || p == "q=0.00" || p == "q=0.000"
        });
        if refused {
            continue;
        }
        match media.as_str() {
            SVRL => return Ok(Wanted::Svrl),
            JSON | "application/*" | "*/*" | "application/problem+json" => return Ok(Wanted::Json),
            _ => {}
        }
    }
    Err(Problem::new(
        StatusCode::NOT_ACCEPTABLE,
        "not-acceptable",
        "Not acceptable",
        format!("cannot answer `{accept}`; results are {JSON} or {SVRL}"),
    )
    .with("available", [JSON, SVRL]))
}

/// The media type of a request, lowercase, without parameters (empty when absent).
pub(crate) fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default()
}

/// One uploaded document.
struct Upload {
    file_name: Option<String>,
    bytes: Bytes,
    declared: Declared,
}

/// The problem for a request body that could not be read: too slow (408), over the limit
/// (413), or broken off or malformed (400).
pub(crate) fn body_problem(
    error: &(dyn std::error::Error + 'static),
    status: StatusCode,
    text: String,
    limit: usize,
) -> Problem {
    if crate::listener::is_body_timeout(error) {
        return Problem::new(
            StatusCode::REQUEST_TIMEOUT,
            "body-timeout",
            "Request body too slow",
            format!("the request body could not be read: {text}"),
        )
        .with("limit", "body_timeout_ms");
    }
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        Problem::too_large(
            "max_body_bytes",
            limit,
            format!("the request body is larger than the limit of {limit} bytes"),
        )
    } else {
        Problem::bad_request(format!("the request body cannot be read: {text}"))
    }
}

/// The documents of a multipart body; at most `max_files`.
async fn read_multipart(
    state: &AppState,
    multipart: Multipart,
) -> Result<(Vec<Upload>, Option<String>), Problem> {
    let limits = &state.config.limits;
    let mut uploads = Vec::new();
    let mut profile = None;
    let mut form = Form::new(multipart, limits.max_body_bytes);
    while let Some(part) = form.next().await? {
        if part.name == "profile" {
            profile = part.text().await?;
            continue;
        }
        if !FILE_FIELDS.contains(&part.name.as_str()) {
            let name = part.name;
            return Err(Problem::bad_request(format!(
                "unknown multipart field `{name}`; send documents as `files[]` (and optionally a `profile` field)"
            ))
            .with("field", name));
        }
        if uploads.len() == limits.max_files {
            return Err(Problem::too_large(
                "max_files",
                limits.max_files,
                format!(
                    "a request may carry at most {} files; send the rest in further requests",
                    limits.max_files
                ),
            ));
        }
        let file_name = part.file_name.clone();
        let declared = Declared::of_part(part.content_type.as_deref(), file_name.as_deref());
        let bytes = part.bytes().await?;
        uploads.push(Upload {
            file_name,
            bytes,
            declared,
        });
    }
    if uploads.is_empty() {
        return Err(Problem::bad_request(
            "the multipart body has no document; send XML files in the `files[]` field",
        ));
    }
    Ok((uploads, profile))
}

pub(crate) async fn read_raw(state: &AppState, body: Body) -> Result<Bytes, Problem> {
    let limit = state.config.limits.max_body_bytes;
    let bytes = axum::body::to_bytes(body, limit).await.map_err(|e| {
        let over = std::error::Error::source(&e)
            .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
        let status = if over {
            StatusCode::PAYLOAD_TOO_LARGE
        } else {
            StatusCode::BAD_REQUEST
        };
        let text = e.to_string();
        body_problem(&e, status, text, limit)
    })?;
    if bytes.is_empty() {
        return Err(Problem::bad_request(
            "the request body is empty; send the invoice XML",
        ));
    }
    Ok(bytes)
}

/// What every validation request checks first: the answer format and the content type
/// (returned). The declared length was checked by the `Admitted` extractor already.
fn preflight(headers: &HeaderMap) -> Result<(Wanted, String), Problem> {
    let format = wanted(headers)?;
    Ok((format, content_type(headers)))
}

/// The documents (and `profile` field) of a multipart request.
async fn multipart_uploads(
    state: &AppState,
    request: Request,
) -> Result<(Vec<Upload>, Option<String>), Problem> {
    let multipart = Multipart::from_request(request, state)
        .await
        .map_err(|e| Problem::bad_request(e.body_text()))?;
    read_multipart(state, multipart).await
}

fn result_headers(response: &mut Response, id: &str) {
    let h = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&format!("/v1/validations/{id}")) {
        h.insert(header::CONTENT_LOCATION, v);
    }
    if let Ok(v) = HeaderValue::from_str(id) {
        h.insert("invex-validation-id", v);
    }
}

fn json_response(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, JSON)], body).into_response()
}

/// Validate and store one document; the answer in the wanted format.
async fn validate_one(
    state: &AppState,
    principal: &Principal,
    profile: Option<String>,
    at: NaiveDate,
    upload: Upload,
    format: Wanted,
) -> Result<Response, Problem> {
    let validated = validation::validate(
        state,
        profile,
        at,
        upload.file_name,
        upload.bytes,
        upload.declared,
    )
    .await?;
    let record = validation::record(principal, &validated.result);
    let json = record.result.clone();
    state.store.insert_validations(vec![record]).await?;
    let mut response = match format {
        Wanted::Json => json_response(StatusCode::OK, json),
        Wanted::Svrl => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, SVRL)],
            to_svrl(&validated.result.report, Some(&validated.rules)),
        )
            .into_response(),
    };
    result_headers(&mut response, &validated.result.id);
    Ok(response)
}

#[utoipa::path(post, path = "/v1/invoice/validate", tag = "validation", operation_id = "validate_invoice_v1",
    params(ValidateQuery),
    request_body(description = "UBL 2.1 invoice or credit note: raw XML (`application/xml`), a JSON invoice (validated as the UBL it is written as; findings point into that UBL; see the `JsonInvoice` schema and docs/integration.md), or multipart with one file of either kind",
        content((String = "application/xml"), (crate::invoice::InvoiceView = "application/vnd.invex.invoice+json"), (crate::invoice::InvoiceView = "application/json"), ("multipart/form-data"))),
    responses(
        (status = 200, description = "The validation result (stored; see Content-Location)",
         content((ValidationResult = "application/json"), (String = "application/svrl+xml"))),
        (status = 400, description = "Unknown profile or bad request", body = crate::problem::ProblemBody),
        (status = 408, description = "The body did not arrive within the body timeouts", body = crate::problem::ProblemBody),
        (status = 413, description = "Body over `max_body_bytes`", body = crate::problem::ProblemBody),
        (status = 415, description = "Not XML, a JSON invoice or multipart", body = crate::problem::ProblemBody),
        (status = 503, description = "The server is at its limit of heavy work (`server-busy`, `Retry-After`)", body = crate::problem::ProblemBody),
        (status = 422, description = "Not well-formed XML (line and column), DOCTYPE, nesting over `max_xml_depth`, or a JSON invoice that cannot be read (`invalid-invoice-json` with line, column and path)", body = crate::problem::ProblemBody)))]
pub async fn validate_v1(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    _admitted: Admitted,
    Query(query): Query<ValidateQuery>,
    request: Request,
) -> Result<Response, Problem> {
    let (format, kind) = preflight(request.headers())?;
    let (upload, form_profile) = if kind == "multipart/form-data" {
        let (mut uploads, profile) = multipart_uploads(&state, request).await?;
        if uploads.len() > 1 {
            return Err(Problem::bad_request(
                "POST /v1/invoice/validate takes one document; use POST /api/validate for several",
            ));
        }
        (uploads.remove(0), profile)
    } else if kind.is_empty()
        || XML_TYPES.contains(&kind.as_str())
        || kind.ends_with("+xml")
        || JSON_TYPES.contains(&kind.as_str())
    {
        let bytes = read_raw(&state, request.into_body()).await?;
        (
            Upload {
                file_name: None,
                bytes,
                declared: Declared::of_body(&kind),
            },
            None,
        )
    } else {
        return Err(Problem::unsupported_media_type(
            &kind,
            &[
                "application/xml",
                "text/xml",
                crate::invoice::json::MEDIA_TYPE,
                "application/json",
                "multipart/form-data",
            ],
        ));
    };
    let at = query.day();
    validate_one(
        &state,
        &principal,
        query.profile.or(form_profile),
        at,
        upload,
        format,
    )
    .await
}

/// One file of a multi-file request that could not be validated.
#[derive(Debug, Serialize, ToSchema)]
pub struct Rejected {
    /// Position of the file in the request, from 0.
    pub index: usize,
    pub file_name: Option<String>,
    /// The problem (as RFC 9457 members), e.g. not well-formed with line and column.
    #[schema(value_type = Object)]
    pub problem: serde_json::Value,
}

/// The shape of `POST /api/validate` answers, for the OpenAPI description.
#[derive(Debug, Serialize, ToSchema)]
pub struct BatchResult {
    /// One result per validated file, in request order.
    pub results: Vec<ValidationResult>,
    /// Files that could not be validated.
    pub rejected: Vec<Rejected>,
}

#[utoipa::path(post, path = "/api/validate", tag = "validation", operation_id = "validate_invoices_api",
    params(ValidateQuery),
    request_body(description = "Multipart: one or several documents in `files[]` (at most `max_files`), each UBL XML or a JSON invoice",
        content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "Always the batch shape: one result per validated file and the files that could not be validated, for one file as for several. `Accept: application/svrl+xml` with one file answers its SVRL report instead",
         content((BatchResult = "application/json"), (String = "application/svrl+xml"))),
        (status = 413, description = "Body over `max_body_bytes` or more than `max_files` files", body = crate::problem::ProblemBody),
        (status = 415, description = "Not multipart", body = crate::problem::ProblemBody),
        (status = 422, description = "No file is well-formed XML", body = crate::problem::ProblemBody)))]
pub async fn validate_api(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Admitted(mut ticket): Admitted,
    Query(query): Query<ValidateQuery>,
    request: Request,
) -> Result<Response, Problem> {
    let (format, kind) = preflight(request.headers())?;
    if kind != "multipart/form-data" {
        return Err(Problem::unsupported_media_type(
            &kind,
            &["multipart/form-data"],
        ));
    }
    let (mut uploads, form_profile) = multipart_uploads(&state, request).await?;
    state
        .admission
        .hold_documents(&mut ticket, uploads.len())
        .await?;
    let at = query.day();
    let profile = query.profile.or(form_profile);
    // One shape per route: JSON answers are always the batch, one file or several. SVRL is a
    // report per document, so it is negotiated only for a single file.
    if format == Wanted::Svrl {
        if uploads.len() == 1 {
            return validate_one(&state, &principal, profile, at, uploads.remove(0), format).await;
        }
        return Err(Problem::new(
            StatusCode::NOT_ACCEPTABLE,
            "not-acceptable",
            "Not acceptable",
            "SVRL is one report per document; send one file, or ask for application/json",
        ));
    }
    let mut records: Vec<ValidationRecord> = Vec::with_capacity(uploads.len());
    let mut rejected = Vec::new();
    let mut first_problem = None;
    for (index, upload) in uploads.into_iter().enumerate() {
        let file_name = upload.file_name.clone();
        let validated = validation::validate(
            &state,
            profile.clone(),
            at,
            upload.file_name,
            upload.bytes,
            upload.declared,
        )
        .await;
        match validated {
            Ok(v) => records.push(validation::record(&principal, &v.result)),
            Err(problem) if problem.status.is_client_error() => {
                rejected.push(Rejected {
                    index,
                    file_name,
                    problem: problem.body(),
                });
                first_problem.get_or_insert(problem);
            }
            Err(problem) => return Err(problem),
        }
    }
    if records.is_empty() {
        let detail = "no file could be validated; each file's problem is under `rejected`";
        let status = first_problem
            .map(|p| p.status)
            .unwrap_or(StatusCode::UNPROCESSABLE_ENTITY);
        return Err(Problem::new(
            status,
            "no-document-validated",
            "No document validated",
            detail,
        )
        .with("rejected", &rejected));
    }
    let results: Vec<&str> = records.iter().map(|r| r.result.as_str()).collect();
    let body = format!(
        "{{\"results\":[{}],\"rejected\":{}}}",
        results.join(","),
        serde_json::to_string(&rejected).unwrap_or_else(|_| "[]".into())
    );
    state.store.insert_validations(records).await?;
    Ok(json_response(StatusCode::OK, body))
}

#[utoipa::path(get, path = "/v1/validations/{id}", tag = "validation", operation_id = "get_validation",
    params(("id" = String, Path, description = "Validation id (`val_...`)")),
    responses(
        (status = 200, description = "The stored result, as first answered (JSON or SVRL)",
         content((ValidationResult = "application/json"), (String = "application/svrl+xml"))),
        (status = 404, description = "No such result in this tenant", body = crate::problem::ProblemBody)))]
pub async fn get_validation(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    let format = wanted(&headers)?;
    let Some(record) = state.store.validation(&principal.tenant_id, &id).await? else {
        return Err(Problem::not_found(format!(
            "no validation `{id}` in this tenant"
        )));
    };
    let response = match format {
        Wanted::Json => json_response(StatusCode::OK, record.result),
        Wanted::Svrl => {
            let report: Report = serde_json::from_str(&record.result)
                .map_err(|e| Problem::internal(format!("stored result unreadable: {e}")))?;
            (
                StatusCode::OK,
                [(header::CONTENT_TYPE, SVRL)],
                to_svrl(&report, None),
            )
                .into_response()
        }
    };
    Ok(response)
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ValidationSummary {
    pub id: String,
    pub created_at: String,
    pub file_name: Option<String>,
    pub sha256: String,
    pub size_bytes: i64,
    pub profile: String,
    pub verdict: String,
    pub rules_version: Vec<String>,
    pub environment: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ValidationList {
    /// Newest first.
    pub validations: Vec<ValidationSummary>,
    /// Pass as `before` for the next page; absent on the last page.
    pub next: Option<String>,
}

#[utoipa::path(get, path = "/v1/validations", tag = "validation", operation_id = "list_validations",
    params(PageQuery),
    responses((status = 200, description = "The tenant's stored results, newest first", body = ValidationList)))]
pub async fn list_validations(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Query(query): Query<PageQuery>,
) -> Result<Json<ValidationList>, Problem> {
    let size = query.size()?;
    let rows = state
        .store
        .validations(&principal.tenant_id, query.before.as_deref(), size + 1)
        .await?;
    // A full last page used to name a `next` that led to an empty page.
    let (records, next) = page::cut(rows, size, |r| &r.id);
    Ok(Json(ValidationList {
        validations: records
            .into_iter()
            .map(|r| ValidationSummary {
                id: r.id,
                created_at: r.created_at,
                file_name: r.file_name,
                sha256: r.sha256,
                size_bytes: r.size_bytes,
                profile: r.profile,
                verdict: r.verdict,
                rules_version: r.rules_version.split(',').map(str::to_string).collect(),
                environment: r.environment,
            })
            .collect(),
        next,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(v: &'static str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT, HeaderValue::from_static(v));
        h
    }

    #[test]
    fn accept_chooses_json_or_svrl() {
        assert_eq!(wanted(&HeaderMap::new()).expect("none"), Wanted::Json);
        assert_eq!(
            wanted(&accept("application/svrl+xml")).expect("svrl"),
            Wanted::Svrl
        );
        assert_eq!(wanted(&accept("*/*")).expect("any"), Wanted::Json);
        assert_eq!(
            wanted(&accept("application/svrl+xml;q=0, application/json")).expect("json"),
            Wanted::Json
        );
        assert_eq!(
            wanted(&accept("text/html")).expect_err("html").status,
            StatusCode::NOT_ACCEPTABLE
        );
    }
}
