//! Conversion routes: `POST /v1/invoice/convert` (PDF, Excel or CSV → UBL with confidences
//! and a review gate), `POST /api/convert` (ZIP of XML files or a batch report), the
//! template and mapping downloads, and the review queue.

use axum::body::Body;
use axum::extract::{FromRequest, Multipart, Path, Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::admission::Ticket;
use crate::auth::Principal;
use crate::convert::review::{self, ConversionStatus, ConversionView, Correction, ReviewError};
use crate::convert::{self, extract};
use crate::invoice::json::Declared;
use crate::problem::Problem;
use crate::routes::admit::Admitted;
use crate::routes::created::Created;
use crate::routes::form::Form;
use crate::routes::page;
use crate::state::AppState;
use crate::store::{ConversionRecord, InputRecord};

/// What a convert request carried.
struct Upload {
    files: Vec<(Option<String>, Bytes, Declared)>,
    mapping: Option<String>,
    profile: Option<String>,
}

async fn read_upload(state: &AppState, request: Request<Body>) -> Result<Upload, Problem> {
    let multipart = Multipart::from_request(request, state)
        .await
        .map_err(|e| Problem::bad_request(e.body_text()))?;
    let mut form = Form::new(multipart, state.config.limits.max_body_bytes);
    let mut upload = Upload {
        files: Vec::new(),
        mapping: None,
        profile: None,
    };
    while let Some(part) = form.next().await? {
        match part.name.as_str() {
            "file" | "files[]" | "files" => {
                if upload.files.len() >= state.config.limits.max_files {
                    return Err(Problem::too_large(
                        "max_files",
                        state.config.limits.max_files,
                        format!(
                            "at most {} files per request",
                            state.config.limits.max_files
                        ),
                    ));
                }
                let file_name = part.file_name.clone();
                let declared =
                    Declared::of_part(part.content_type.as_deref(), file_name.as_deref());
                upload
                    .files
                    .push((file_name, part.bytes().await?, declared));
            }
            "mapping" => upload.mapping = part.text().await?,
            "profile" => upload.profile = part.text().await?,
            _ => {
                let other = part.name;
                return Err(Problem::bad_request(format!(
                    "unexpected multipart field `{other}`; send `file` (one or more), and \
                     optionally `mapping` (a mapping id or a mapping JSON) and `profile`"
                ))
                .with("field", other));
            }
        }
    }
    if upload.files.is_empty() {
        return Err(Problem::bad_request(
            "no `file` field: send the PDF, Excel workbook or CSV file as multipart field `file`",
        ));
    }
    Ok(upload)
}

fn review_problem(e: ReviewError) -> Problem {
    match e {
        ReviewError::Field(f) => Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid-correction",
            "A correction cannot be applied",
            f.to_string(),
        ),
        ReviewError::Final(_) | ReviewError::Embedded => {
            Problem::conflict("conversion-final", e.to_string())
        }
        ReviewError::FatalFindings(n) => {
            Problem::conflict("conversion-has-fatal-findings", e.to_string()).with("fatal", n)
        }
        ReviewError::Validation(_) | ReviewError::Damaged(_) => Problem::internal(e.to_string()),
    }
}

/// An upload may hold up to `max_invoices` invoices: its share of the in-flight documents.
async fn hold_invoices(state: &AppState, ticket: &mut Ticket) -> Result<(), Problem> {
    let n = state
        .config
        .convert
        .max_invoices
        .min(state.config.admission.inflight_documents);
    Ok(state.admission.hold_documents(ticket, n).await?)
}

/// Extract, write, validate and gate every invoice of every file; store them all.
async fn convert_upload(
    state: &AppState,
    principal: &Principal,
    upload: Upload,
) -> Result<Vec<ConversionRecord>, Problem> {
    let mapping = match &upload.mapping {
        Some(m) => Some(
            extract::mapping_choice(m)
                .map_err(|e| extract_problem(e, state.config.convert.max_invoices))?,
        ),
        None => None,
    };
    let catalog = state.registry.current();
    if catalog.profiles().is_empty() {
        return Err(Problem::unavailable(
            "no rule packs are loaded; see GET /v1/rulepacks for the last load error",
        ));
    }
    if let Some(p) = &upload.profile {
        if catalog.ruleset(p).is_none() {
            return Err(Problem::invalid_field(
                "profile",
                format!("no profile `{p}` is installed"),
            ));
        }
    }
    let threshold = state.config.convert.confidence_threshold;
    let max_invoices = state.config.convert.max_invoices;
    let limits = state.config.convert.limits();
    let environment = state.environment().to_string();
    let tenant = principal.tenant_id.clone();
    let profile = upload.profile.clone();
    // Extraction and validation are CPU work: on the admission pool.
    let records = state
        .admission
        .run(move || {
            let batch_id = crate::ids::new_id("batch");
            let now = crate::clock::now();
            let mut records = Vec::new();
            let mut inputs = Vec::new();
            for (file_name, bytes, declared) in &upload.files {
                // The invoices the upload may still hold bound this file's reading.
                let mut left = limits.clone();
                left.tabular.max_invoices = max_invoices.saturating_sub(records.len());
                let extracted = extract::extract(
                    bytes,
                    file_name.as_deref(),
                    *declared,
                    mapping.as_ref(),
                    &left,
                )
                .map_err(|e| {
                    extract_problem(e, max_invoices)
                        .with("file_name", file_name.as_deref().unwrap_or(""))
                })?;
                let input_sha256 = review::sha256(bytes);
                let meta = review::Upload {
                    tenant_id: &tenant,
                    batch_id: &batch_id,
                    file_name: file_name.as_deref(),
                    input_format: extracted.format,
                    input_sha256: &input_sha256,
                    environment: &environment,
                    now: &now,
                };
                for candidate in &extracted.candidates {
                    let evaluation =
                        review::evaluate(&catalog, profile.as_deref(), candidate, threshold)
                            .map_err(review_problem)?;
                    records.push(review::record(&meta, records.len(), candidate, evaluation));
                }
                // Kept for the reviewer, who sees each value beside where it was read.
                inputs.push(InputRecord {
                    tenant_id: tenant.clone(),
                    sha256: input_sha256,
                    file_name: file_name.clone(),
                    format: extracted.format.to_string(),
                    content: bytes.to_vec(),
                    created_at: now.clone(),
                });
            }
            Ok::<_, Problem>((records, inputs))
        })
        .await??;
    let (records, inputs) = records;
    state.store.insert_conversions(&records, &inputs).await?;
    Ok(records)
}

/// The problem for a file that cannot be converted; a broken limit is named with its
/// value (`limit`, `limit_value`). `max_invoices` is the upload's, not what was left of it.
fn extract_problem(e: extract::ExtractError, max_invoices: usize) -> Problem {
    if e.too_many_invoices() {
        return Problem::too_large(
            "max_invoices",
            max_invoices,
            format!(
                "at most {max_invoices} invoices per upload (INVEX_CONVERT_MAX_INVOICES); \
                 the reading stopped at the first invoice beyond it"
            ),
        );
    }
    let status = match &e {
        extract::ExtractError::Unsupported(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        extract::ExtractError::Tabular(convert::tabular::TabularError::UnsupportedFormat(_)) => {
            StatusCode::UNSUPPORTED_MEDIA_TYPE
        }
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    };
    let limit = e.limit();
    let problem = Problem::new(
        status,
        e.slug(),
        "The file cannot be converted",
        e.to_string(),
    );
    match limit {
        Some((name, value)) => problem.with("limit", name).with("limit_value", value),
        None => problem,
    }
}

fn views(records: &[ConversionRecord], full: bool) -> Result<Vec<ConversionView>, Problem> {
    records
        .iter()
        .map(|r| ConversionView::from_record(r, full).map_err(review_problem))
        .collect()
}

/// The answer of `POST /v1/invoice/convert`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ConvertResult {
    pub batch_id: String,
    /// How many conversions are `ready` and how many `needs_review`.
    pub ready: usize,
    pub needs_review: usize,
    /// One per invoice found, in input order.
    pub conversions: Vec<ConversionView>,
    pub environment: String,
}

fn result(
    state: &AppState,
    records: &[ConversionRecord],
    full: bool,
) -> Result<ConvertResult, Problem> {
    let conversions = views(records, full)?;
    let ready = conversions
        .iter()
        .filter(|c| c.status == ConversionStatus::Ready)
        .count();
    Ok(ConvertResult {
        batch_id: records
            .first()
            .map(|r| r.batch_id.clone())
            .unwrap_or_default(),
        ready,
        needs_review: conversions.len() - ready,
        conversions,
        environment: state.environment().to_string(),
    })
}

/// A conversion's address, or for an upload of several invoices the list of its batch.
fn created(result: ConvertResult) -> Created<ConvertResult> {
    let location = match result.conversions.as_slice() {
        [one] => format!("/v1/conversions/{}", one.id),
        _ => format!("/v1/conversions?batch_id={}", result.batch_id),
    };
    Created::at(location, result)
}

#[utoipa::path(post, path = "/v1/invoice/convert", tag = "conversion", operation_id = "convert_invoice_v1",
    request_body(content_type = "multipart/form-data", description = "`file`: a PDF, a workbook (xlsx, ods; not the legacy xls / xlsb), a CSV file, or a JSON invoice (a part whose Content-Type is JSON or whose file name ends in `.json`: its UBL is the document, `ready` when valid) (one or more `file` fields); \
optional `mapping`: a shipped mapping id (GET /v1/invoice/convert/mappings) or a mapping JSON; optional `profile` to validate against (else detected)"),
    responses(
        (status = 201, description = "One conversion per invoice found: generated UBL, fields with confidence and source, validation report, status `ready` or `needs_review` with reasons", body = ConvertResult),
        (status = 400, description = "No file", body = crate::problem::ProblemBody),
        (status = 413, description = "Too large, too many files or invoices", body = crate::problem::ProblemBody),
        (status = 415, description = "Not a PDF, spreadsheet, CSV or JSON invoice (JSON must say it is: Content-Type or `.json` name)", body = crate::problem::ProblemBody),
        (status = 422, description = "The file cannot be read (damaged, no text layer, columns missing, bad mapping)", body = crate::problem::ProblemBody)))]
pub async fn convert_v1(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Admitted(mut ticket): Admitted,
    request: Request<Body>,
) -> Result<Response, Problem> {
    hold_invoices(&state, &mut ticket).await?;
    let upload = read_upload(&state, request).await?;
    let records = convert_upload(&state, &principal, upload).await?;
    Ok(created(result(&state, &records, true)?).into_response())
}

#[utoipa::path(post, path = "/api/convert", tag = "conversion", operation_id = "convert_invoices_api",
    params(("Accept" = Option<String>, Header, description = "`application/zip`: the XML files, only when every invoice is ready (else 422 with the batch report); `application/json`: always the batch report; absent or `*/*`: ZIP when everything is ready, else the report")),
    request_body(content_type = "multipart/form-data", description = "`file` (or `files[]`): Excel, CSV or prepared exports; optional `mapping`, `profile`"),
    responses(
        (status = 200, description = "ZIP of the generated XML files, one per invoice (`{document id}.xml`)", content_type = "application/zip"),
        (status = 201, description = "Batch report (JSON): per invoice status, confidence, reasons, findings, review link", body = ConvertResult),
        (status = 422, description = "ZIP asked for but some invoices need review (the report is in `batch`), or the file cannot be read", body = crate::problem::ProblemBody)))]
pub async fn convert_api(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Admitted(mut ticket): Admitted,
    headers: HeaderMap,
    request: Request<Body>,
) -> Result<Response, Problem> {
    hold_invoices(&state, &mut ticket).await?;
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("*/*")
        .to_ascii_lowercase();
    let wants_zip = accept.contains("application/zip");
    let wants_json = accept.contains("application/json") && !wants_zip;
    let upload = read_upload(&state, request).await?;
    let records = convert_upload(&state, &principal, upload).await?;
    let all_ready = records
        .iter()
        .all(|r| r.status == ConversionStatus::Ready.as_str());
    if wants_json || (!all_ready && !wants_zip) {
        return Ok(created(result(&state, &records, false)?).into_response());
    }
    if !all_ready {
        let report = result(&state, &records, false)?;
        return Err(Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "conversion-needs-review",
            "Some invoices need review",
            format!(
                "{} of {} invoice(s) need review; the ZIP is only produced when every invoice is \
                 ready. Review them (GET /v1/conversions?status=needs_review) or ask for the JSON \
                 report",
                report.needs_review,
                records.len()
            ),
        )
        .with("batch", report));
    }
    let zip = convert::archive::xml_zip(&records)
        .map_err(|e| Problem::internal(format!("building the ZIP: {e}")))?;
    let batch = records
        .first()
        .map(|r| r.batch_id.as_str())
        .unwrap_or("batch");
    Ok((
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "application/zip".to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{batch}.zip\""),
            ),
            (
                header::HeaderName::from_static("invex-environment"),
                state.environment().to_string(),
            ),
        ],
        zip,
    )
        .into_response())
}

#[utoipa::path(get, path = "/v1/invoice/convert/template.csv", tag = "conversion", operation_id = "get_csv_template",
    responses((status = 200, description = "The CSV template (UTF-8, one row per invoice line; see docs/conversion-template.md)", content_type = "text/csv")))]
pub async fn template_csv() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
            (
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"invex-invoice-template.csv\"",
            ),
        ],
        convert::tabular::template_csv(),
    )
        .into_response()
}

#[utoipa::path(get, path = "/v1/invoice/convert/template.xlsx", tag = "conversion", operation_id = "get_xlsx_template",
    responses((status = 200, description = "The Excel template", content_type = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")))]
pub async fn template_xlsx() -> Result<Response, Problem> {
    let bytes = convert::tabular::template_xlsx()
        .map_err(|e| Problem::internal(format!("building the template: {e}")))?;
    Ok((
        [
            (
                header::CONTENT_TYPE,
                "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            ),
            (
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"invex-invoice-template.xlsx\"",
            ),
        ],
        bytes,
    )
        .into_response())
}

#[utoipa::path(get, path = "/v1/invoice/convert/mappings", tag = "conversion", operation_id = "list_conversion_mappings",
    responses((status = 200, description = "The shipped mapping profiles (column → business term), usable by id in `mapping`", body = Object)))]
pub async fn mappings() -> Json<serde_json::Value> {
    Json(serde_json::json!({ "mappings": convert::tabular::mappings() }))
}

// ---- review -------------------------------------------------------------------------

#[derive(Debug, Deserialize, IntoParams)]
pub struct ListQuery {
    /// `ready`, `needs_review` (the review queue), `approved`, `rejected` or `sent`.
    pub status: Option<String>,
    /// Only the conversions of one upload (`batch_id` of its answer).
    pub batch_id: Option<String>,
    /// Only conversions older than this id: the `next` of the previous page.
    pub before: Option<String>,
    /// Page size, 1–200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ConversionList {
    /// Newest first.
    pub conversions: Vec<ConversionView>,
    /// Pass as `before` for the next (older) page; absent on the last page.
    pub next: Option<String>,
}

#[utoipa::path(get, path = "/v1/conversions", tag = "conversion", operation_id = "list_conversions", params(ListQuery),
    responses((status = 200, description = "Conversions, newest first; `status=needs_review` is the review queue", body = ConversionList)))]
pub async fn list(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Query(q): Query<ListQuery>,
) -> Result<Json<ConversionList>, Problem> {
    if let Some(s) = &q.status {
        if ConversionStatus::parse(s).is_none() {
            return Err(Problem::invalid_field(
                "status",
                "one of ready, needs_review, approved, rejected, sent",
            ));
        }
    }
    let size = page::size(q.limit)?;
    let rows = state
        .store
        .conversions(
            &principal.tenant_id,
            q.status.as_deref(),
            q.batch_id.as_deref(),
            q.before.as_deref(),
            size + 1,
        )
        .await?;
    let (records, next) = page::cut(rows, size, |r| &r.id);
    Ok(Json(ConversionList {
        conversions: views(&records, false)?,
        next,
    }))
}

async fn tenant_conversion(
    state: &AppState,
    principal: &Principal,
    id: &str,
) -> Result<ConversionRecord, Problem> {
    state
        .store
        .conversion(&principal.tenant_id, id)
        .await?
        .ok_or_else(|| Problem::not_found(format!("no conversion `{id}`")))
}

#[utoipa::path(get, path = "/v1/conversions/{id}", tag = "conversion", operation_id = "get_conversion",
    params(("id" = String, Path, description = "Conversion id")),
    responses(
        (status = 200, description = "The conversion with every field (value, confidence, source), cross-checks, validation, XML and review trail", body = ConversionView),
        (status = 404, description = "No such conversion in this tenant", body = crate::problem::ProblemBody)))]
pub async fn get_one(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<ConversionView>, Problem> {
    let record = tenant_conversion(&state, &principal, &id).await?;
    Ok(Json(
        ConversionView::from_record(&record, true).map_err(review_problem)?,
    ))
}

#[utoipa::path(get, path = "/v1/conversions/{id}/xml", tag = "conversion", operation_id = "get_conversion_xml",
    params(("id" = String, Path, description = "Conversion id")),
    responses((status = 200, description = "The generated UBL", content_type = "application/xml")))]
pub async fn xml(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let record = tenant_conversion(&state, &principal, &id).await?;
    Ok((
        [(header::CONTENT_TYPE, "application/xml; charset=utf-8")],
        record.xml,
    )
        .into_response())
}

/// Corrections to a conversion.
#[derive(Debug, Deserialize, ToSchema)]
pub struct Corrections {
    /// Field paths as listed in `fields` (e.g. `seller.vat_id`, `lines[1].quantity`) with
    /// their new text; an empty value clears a field; `lines[n]` with n = the number of lines
    /// adds a line.
    #[serde(default)]
    pub corrections: Vec<Correction>,
    /// Line indexes (0-based) to delete.
    #[serde(default)]
    pub remove_lines: Vec<usize>,
}

fn reviewer(principal: &Principal) -> String {
    principal
        .key_id
        .clone()
        .unwrap_or_else(|| "sandbox-anonymous".into())
}

async fn save(state: &AppState, record: &ConversionRecord, expected: &str) -> Result<(), Problem> {
    if !state.store.update_conversion(record, expected).await? {
        return Err(Problem::conflict(
            "conversion-changed",
            "another reviewer changed this conversion meanwhile; fetch it again and retry",
        ));
    }
    Ok(())
}

#[utoipa::path(patch, path = "/v1/conversions/{id}", tag = "conversion", operation_id = "correct_conversion",
    params(("id" = String, Path, description = "Conversion id")),
    request_body = Corrections,
    responses(
        (status = 200, description = "Corrected: the XML is regenerated and revalidated, the gate runs again; an approval is withdrawn", body = ConversionView),
        (status = 409, description = "Rejected, sent, embedded document, or changed meanwhile", body = crate::problem::ProblemBody),
        (status = 422, description = "Unknown field path or a value of the wrong form", body = crate::problem::ProblemBody)))]
pub async fn correct(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    Json(body): Json<Corrections>,
) -> Result<Json<ConversionView>, Problem> {
    let mut record = tenant_conversion(&state, &principal, &id).await?;
    let expected = record.updated_at.clone();
    let catalog = state.registry.current();
    let (by, now) = (reviewer(&principal), crate::clock::now());
    let threshold = state.config.convert.confidence_threshold;
    // The XML is written and validated again: CPU work, on the admission pool.
    let record = state
        .admission
        .run(move || {
            review::correct(
                &mut record,
                &catalog,
                &body.corrections,
                &body.remove_lines,
                &by,
                &now,
                threshold,
            )
            .map(|()| record)
        })
        .await?
        .map_err(review_problem)?;
    save(&state, &record, &expected).await?;
    Ok(Json(
        ConversionView::from_record(&record, true).map_err(review_problem)?,
    ))
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct ApproveBody {
    /// Why the reviewer vouches for the values (kept in the evidence package).
    pub note: Option<String>,
}

#[utoipa::path(post, path = "/v1/conversions/{id}/approve", tag = "conversion", operation_id = "approve_conversion",
    params(("id" = String, Path, description = "Conversion id")),
    request_body(content = Option<ApproveBody>, description = "Optional note"),
    responses(
        (status = 200, description = "Approved: records the approver's key, the time and the corrections (carried by the evidence package); the document may now be sent", body = ConversionView),
        (status = 409, description = "Fatal findings remain, or rejected / sent", body = crate::problem::ProblemBody)))]
pub async fn approve(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    body: Option<Json<ApproveBody>>,
) -> Result<Json<ConversionView>, Problem> {
    let mut record = tenant_conversion(&state, &principal, &id).await?;
    let expected = record.updated_at.clone();
    let note = body.and_then(|b| b.0.note);
    review::approve(
        &mut record,
        &reviewer(&principal),
        note,
        &crate::clock::now(),
    )
    .map_err(review_problem)?;
    save(&state, &record, &expected).await?;
    Ok(Json(
        ConversionView::from_record(&record, true).map_err(review_problem)?,
    ))
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct RejectBody {
    pub reason: String,
}

#[utoipa::path(post, path = "/v1/conversions/{id}/reject", tag = "conversion", operation_id = "reject_conversion",
    params(("id" = String, Path, description = "Conversion id")),
    request_body = RejectBody,
    responses(
        (status = 200, description = "Rejected: it is never sent", body = ConversionView),
        (status = 409, description = "Already sent", body = crate::problem::ProblemBody)))]
pub async fn reject(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    Json(body): Json<RejectBody>,
) -> Result<Json<ConversionView>, Problem> {
    if body.reason.trim().is_empty() {
        return Err(Problem::invalid_field(
            "reason",
            "say why the conversion is rejected",
        ));
    }
    let mut record = tenant_conversion(&state, &principal, &id).await?;
    let expected = record.updated_at.clone();
    review::reject(
        &mut record,
        &reviewer(&principal),
        body.reason.trim().to_string(),
        &crate::clock::now(),
    )
    .map_err(review_problem)?;
    save(&state, &record, &expected).await?;
    Ok(Json(
        ConversionView::from_record(&record, true).map_err(review_problem)?,
    ))
}
