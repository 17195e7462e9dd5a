//! Sending routes: connections to delivery partners, `POST /v1/invoice/send` (XML body),
//! `POST /api/send` (multipart `xml_file`), invoices and their message timelines.

use axum::body::Body;
use axum::extract::{FromRequest, Multipart, Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::{Family, Principal};
use crate::problem::Problem;
use crate::routes::admit::Admitted;
use crate::routes::created::Created;
use crate::routes::form::Form;
use crate::routes::page::{self, PageQuery};
use crate::routes::validate::read_raw;
use crate::sending::connections::{self, Activation, ConnectionError, NewConnection};
use crate::sending::timeline::TimelineEntry;
use crate::sending::{self, partner, SendRequest};
use crate::settings::Mode;
use crate::state::AppState;
use crate::store::{self, ConnectionRecord};
use crate::validation::Declared;

// ---- connections -------------------------------------------------------------------

#[derive(Debug, Deserialize, ToSchema)]
pub struct CreateConnection {
    /// The delivery partner adapter: `http` (a certified access point's REST API) or
    /// `sandbox` (simulated; sandbox mode only).
    pub partner: String,
    pub name: Option<String>,
    /// `http`: the partner's API root (https; http only to loopback in the sandbox).
    pub base_url: Option<String>,
    /// `http`: the key invex presents to the partner.
    pub api_key: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Connection {
    pub id: String,
    pub partner: String,
    pub name: String,
    /// `pending` until activated, then `active`; sending needs an active connection.
    pub status: String,
    pub created_at: String,
    pub activated_at: Option<String>,
    /// `http`: where the partner posts status callbacks, signed (Standard Webhooks) with
    /// `callback_secret`.
    pub callback_url: Option<String>,
    /// Shown once, when the connection is created.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callback_secret: Option<String>,
    /// `sandbox` or `production`: a sandbox connection never reaches the real network.
    pub environment: String,
}

impl Connection {
    fn of(c: ConnectionRecord, environment: &str) -> Connection {
        Connection {
            environment: environment.to_string(),
            callback_url: (c.partner == "http").then(|| format!("/v1/partner/callbacks/{}", c.id)),
            callback_secret: None,
            id: c.id,
            partner: c.partner,
            name: c.name,
            status: c.status,
            created_at: c.created_at,
            activated_at: c.activated_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ConnectionList {
    /// Newest first.
    pub connections: Vec<Connection>,
    /// Pass as `before` for the next (older) page; absent on the last page.
    pub next: Option<String>,
}

/// Partners available in each mode.
#[utoipa::path(post, path = "/v1/connections", tag = "sending", operation_id = "create_connection",
    request_body = CreateConnection,
    responses(
        (status = 201, description = "Created, `pending`: activate it to send", body = Connection),
        (status = 422, description = "Unknown or unavailable partner", body = crate::problem::ProblemBody)))]
pub async fn create_connection(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Json(body): Json<CreateConnection>,
) -> Result<Created<Connection>, Problem> {
    let record = connections::create(
        &state.store,
        state.config.mode,
        state.environment(),
        &principal.tenant_id,
        NewConnection {
            partner: body.partner,
            name: body.name,
            base_url: body.base_url,
            api_key: body.api_key,
        },
    )
    .await
    .map_err(connection_problem)?;
    let callback_secret = record.callback_secret.clone();
    let mut answer = Connection::of(record, state.environment());
    answer.callback_secret = callback_secret;
    Ok(Created::at(
        format!("/v1/connections/{}", answer.id),
        answer,
    ))
}

/// The problem for a connection that cannot be made, naming the field at fault.
fn connection_problem(e: ConnectionError) -> Problem {
    match (e.field(), e) {
        (Some(field), e) => Problem::invalid_field(field, e.to_string()),
        (None, ConnectionError::Store(s)) => s.into(),
        (None, other) => Problem::internal(other.to_string()),
    }
}

#[utoipa::path(get, path = "/v1/connections", tag = "sending", operation_id = "list_connections",
    params(PageQuery),
    responses((status = 200, description = "The tenant's connections, newest first", body = ConnectionList)))]
pub async fn list_connections(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Query(query): Query<PageQuery>,
) -> Result<Json<ConnectionList>, Problem> {
    let size = query.size()?;
    let rows = state
        .store
        .connections(&principal.tenant_id, query.before.as_deref(), size + 1)
        .await?;
    let (list, next) = page::cut(rows, size, |c| &c.id);
    Ok(Json(ConnectionList {
        connections: list
            .into_iter()
            .map(|c| Connection::of(c, state.environment()))
            .collect(),
        next,
    }))
}

#[utoipa::path(get, path = "/v1/connections/{id}", tag = "sending", operation_id = "get_connection",
    params(("id" = String, Path, description = "Connection id (`con_...`)")),
    responses(
        (status = 200, description = "The connection (never its secrets)", body = Connection),
        (status = 404, description = "No such connection in this tenant", body = crate::problem::ProblemBody)))]
pub async fn get_connection(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<Connection>, Problem> {
    let connection = state
        .store
        .connection(&principal.tenant_id, &id)
        .await?
        .ok_or_else(|| Problem::not_found(format!("no connection `{id}` in this tenant")))?;
    Ok(Json(Connection::of(connection, state.environment())))
}

#[utoipa::path(post, path = "/v1/connections/{id}/activate", tag = "sending", operation_id = "activate_connection",
    params(("id" = String, Path, description = "Connection id (`con_...`)")),
    responses(
        (status = 200, description = "Active: sends go through it", body = Connection),
        (status = 404, description = "No such connection in this tenant", body = crate::problem::ProblemBody),
        (status = 409, description = "Already active", body = crate::problem::ProblemBody)))]
pub async fn activate_connection(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<Connection>, Problem> {
    match connections::activate(&state.store, &principal.tenant_id, &id).await? {
        Activation::Activated(c) => Ok(Json(Connection::of(c, state.environment()))),
        Activation::AlreadyActive(_) => Err(Problem::conflict(
            "connection-already-active",
            format!("connection `{id}` is already active"),
        )),
        Activation::NotFound => Err(Problem::not_found(format!(
            "no connection `{id}` in this tenant"
        ))),
    }
}

// ---- send ---------------------------------------------------------------------------

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SendQuery {
    /// Profile to validate against; detected from the document when absent.
    pub profile: Option<String>,
    /// The invoice (`inv_...`) this one corrects, after a remediation.
    pub resubmission_of: Option<String>,
    /// Send the document a conversion produced (`conv_...`) instead of a body; refused with
    /// 409 while the conversion needs review and is not approved.
    pub conversion_id: Option<String>,
    /// `true` to send on purpose a document whose seller, number and issue date match an
    /// invoice already queued, in flight or delivered (otherwise 409 `duplicate-document`).
    #[serde(default)]
    pub allow_duplicate: bool,
}

fn header_text(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// The Idempotency-Key header: absent (None), or printable ASCII as the IETF draft's
/// structured-field string says; anything else is refused rather than taken for absent.
pub(crate) fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, Problem> {
    let Some(value) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let printable = value.as_bytes().iter().all(|b| (0x20..0x7f).contains(b));
    if !printable {
        return Err(Problem::invalid_field(
            "Idempotency-Key",
            "the key must be printable ASCII (letters, digits, punctuation, spaces), e.g. a UUID",
        ));
    }
    Ok(header_text(headers, "idempotency-key"))
}

/// Content types a send takes as the raw document: UBL, or a JSON invoice.
const DOCUMENT_TYPES: &[&str] = &[
    "application/xml",
    "text/xml",
    crate::invoice::json::MEDIA_TYPE,
    "application/json",
];

fn document_content_type(headers: &HeaderMap) -> Result<(), Problem> {
    let kind = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default();
    if kind.is_empty() || DOCUMENT_TYPES.contains(&kind.as_str()) || kind.ends_with("+xml") {
        Ok(())
    } else {
        Err(Problem::unsupported_media_type(&kind, DOCUMENT_TYPES))
    }
}

fn scenario(state: &AppState, headers: &HeaderMap) -> Option<String> {
    // Scenarios steer the simulated partner only; production ignores the header.
    (state.config.mode == Mode::Sandbox)
        .then(|| header_text(headers, "invex-sandbox-scenario"))
        .flatten()
}

#[utoipa::path(post, path = "/v1/invoice/send", tag = "sending", operation_id = "send_invoice_v1",
    params(SendQuery,
        ("Idempotency-Key" = String, Header, description = "Required. A retry with the same key and document replays the first answer; kept 24 h"),
        ("Invex-Sandbox-Scenario" = Option<String>, Header, description = "Sandbox only: accepted (default), rejected, under_query, conditionally_accepted, transport_rejection, delivery_failure, no_response. Without the header the buyer's electronic address chooses: 0245:9999000001 rejected, …002 under_query, …003 conditionally_accepted, …004 transport_rejection, …005 delivery_failure, …006 no_response; any other: accepted")),
    request_body(description = "The UBL invoice or credit note, or the same as a JSON invoice (sent as the UBL it is written as; see the `JsonInvoice` schema and docs/integration.md)",
        content((String = "application/xml"), (crate::invoice::InvoiceView = "application/vnd.invex.invoice+json"), (crate::invoice::InvoiceView = "application/json"))),
    responses(
        (status = 202, description = "Validated, stored and queued; delivery follows asynchronously (see `links.messages`)", body = sending::SendAccepted),
        (status = 400, description = "No Idempotency-Key, or one that is not printable ASCII", body = crate::problem::ProblemBody),
        (status = 408, description = "The body did not arrive within the body timeouts", body = crate::problem::ProblemBody),
        (status = 413, description = "Body over `max_body_bytes`, or over the in-flight budget", body = crate::problem::ProblemBody),
        (status = 415, description = "A body that is neither XML nor a JSON invoice", body = crate::problem::ProblemBody),
        (status = 503, description = "The server is at its limit of heavy work (`server-busy`, `Retry-After`)", body = crate::problem::ProblemBody),
        (status = 404, description = "`conversion_id` names no conversion of the tenant", body = crate::problem::ProblemBody),
        (status = 409, description = "No activated connection, the same key still running, a conversion held for review, or the same document already queued, in flight or delivered (`duplicate-document` naming the first invoice; `allow_duplicate=true` sends it anyway)", body = crate::problem::ProblemBody),
        (status = 422, description = "Fatal findings (`remediation-required`: stored, not sent; `findings`, `invoice_id`), or the key reused with another request", body = crate::problem::ProblemBody)))]
pub async fn send_v1(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    _admitted: Admitted,
    Query(query): Query<SendQuery>,
    request: Request,
) -> Result<Response, Problem> {
    let headers = request.headers().clone();
    let idempotency_key = idempotency_key(&headers)?;
    let mut declared = Declared::Xml;
    let bytes = match &query.conversion_id {
        None => {
            document_content_type(&headers)?;
            declared = Declared::of_body(&crate::routes::validate::content_type(&headers));
            read_raw(&state, request.into_body()).await?
        }
        Some(conversion_id) => {
            let body = axum::body::to_bytes(request.into_body(), 64 * 1024)
                .await
                .map_err(|_| {
                    Problem::bad_request(
                        "send either a document in the body or a conversion_id, not both",
                    )
                })?;
            if !body.iter().all(u8::is_ascii_whitespace) {
                return Err(Problem::bad_request(
                    "send either a document in the body or a conversion_id, not both",
                ));
            }
            let conversion = state
                .store
                .conversion(&principal.tenant_id, conversion_id)
                .await?
                .ok_or_else(|| Problem::not_found(format!("no conversion `{conversion_id}`")))?;
            bytes::Bytes::from(conversion.xml.into_bytes())
        }
    };
    let send = SendRequest {
        idempotency_key,
        profile: query.profile,
        file_name: None,
        scenario: scenario(&state, &headers),
        resubmission_of: query.resubmission_of,
        allow_duplicate: query.allow_duplicate,
        family: Family::Versioned,
        bytes,
        declared,
    };
    Ok(sending::send(&state, &principal, send).await)
}

#[utoipa::path(post, path = "/api/send", tag = "sending", operation_id = "send_invoice_api",
    params(
        ("Idempotency-Key" = String, Header, description = "Required; see POST /v1/invoice/send"),
        ("Invex-Sandbox-Scenario" = Option<String>, Header, description = "Sandbox only; see POST /v1/invoice/send")),
    request_body(content_type = "multipart/form-data", description = "`xml_file`: the document; optional `profile`, `resubmission_of` and `allow_duplicate` (`true` or `false`) fields"),
    responses(
        (status = 202, description = "Validated, stored and queued", body = sending::SendAccepted),
        (status = 400, description = "No Idempotency-Key, no `xml_file` or more than one", body = crate::problem::ProblemBody),
        (status = 408, description = "The body did not arrive within the body timeouts", body = crate::problem::ProblemBody),
        (status = 503, description = "The server is at its limit of heavy work (`server-busy`, `Retry-After`)", body = crate::problem::ProblemBody),
        (status = 409, description = "No activated connection, the same key still running, a conversion held for review, or the same document already queued, in flight or delivered (`duplicate-document` naming the first invoice; `allow_duplicate=true` sends it anyway)", body = crate::problem::ProblemBody),
        (status = 422, description = "Fatal findings (`remediation-required`), or the key reused with another request", body = crate::problem::ProblemBody)))]
pub async fn send_api(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    _admitted: Admitted,
    request: Request<Body>,
) -> Result<Response, Problem> {
    let headers = request.headers().clone();
    let idempotency_key = idempotency_key(&headers)?;
    let multipart = Multipart::from_request(request, &state)
        .await
        .map_err(|e| Problem::bad_request(e.body_text()))?;
    let mut form = Form::new(multipart, state.config.limits.max_body_bytes);
    let (mut file, mut file_name, mut profile, mut resubmission_of) = (None, None, None, None);
    let mut allow_duplicate = false;
    let mut declared = Declared::Xml;
    while let Some(part) = form.next().await? {
        match part.name.as_str() {
            "xml_file" if file.is_some() => {
                return Err(Problem::bad_request(
                    "the multipart body has more than one `xml_file`; a send takes one document \
                     (send each in its own request, each with its own Idempotency-Key)",
                )
                .with("field", "xml_file"));
            }
            "xml_file" => {
                file_name = part.file_name.clone();
                declared = Declared::of_part(part.content_type.as_deref(), file_name.as_deref());
                file = Some(part.bytes().await?);
            }
            "profile" => profile = part.text().await?,
            "resubmission_of" => resubmission_of = part.text().await?,
            "allow_duplicate" => {
                let text = part.text().await?.unwrap_or_default();
                allow_duplicate = match text.trim() {
                    "true" => true,
                    "false" | "" => false,
                    other => {
                        return Err(Problem::invalid_field(
                            "allow_duplicate",
                            format!("`{other}` is not a boolean; send true or false"),
                        ))
                    }
                };
            }
            _ => {
                let other = part.name;
                return Err(Problem::bad_request(format!(
                    "unknown multipart field `{other}`; send the document as `xml_file`"
                ))
                .with("field", other));
            }
        }
    }
    let bytes = file.ok_or_else(|| {
        Problem::bad_request("the multipart body has no `xml_file` field with the document")
    })?;
    let send = SendRequest {
        idempotency_key,
        profile,
        file_name,
        scenario: scenario(&state, &headers),
        resubmission_of,
        allow_duplicate,
        family: Family::Api,
        bytes,
        declared,
    };
    Ok(sending::send(&state, &principal, send).await)
}

// ---- invoices and timelines ---------------------------------------------------------

/// The caller's invoice `id`, or 404.
async fn tenant_invoice(
    state: &AppState,
    principal: &Principal,
    id: &str,
) -> Result<store::InvoiceRecord, Problem> {
    state
        .store
        .invoice(&principal.tenant_id, id)
        .await?
        .ok_or_else(|| Problem::not_found(format!("no invoice `{id}` in this tenant")))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Invoice {
    pub id: String,
    pub status: String,
    pub document_id: Option<String>,
    /// Issue date of the document, `YYYY-MM-DD`.
    pub issue_date: Option<String>,
    pub buyer_endpoint: Option<String>,
    pub connection_id: Option<String>,
    pub transmission_id: Option<String>,
    /// The invoice this one corrects.
    pub resubmission_of: Option<String>,
    /// The invoices that correct this one, oldest first (absent in lists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resubmitted_as: Option<Vec<String>>,
    /// SHA-256 of the document as received.
    pub sha256: String,
    #[schema(value_type = Object)]
    pub validation: serde_json::Value,
    pub created_at: String,
    pub updated_at: String,
    pub environment: String,
    pub links: sending::InvoiceLinks,
}

impl Invoice {
    fn of(inv: store::InvoiceRecord, resubmitted_as: Option<Vec<String>>) -> Invoice {
        Invoice {
            links: sending::InvoiceLinks::new(Family::Versioned, &inv.id, &inv.validation_id),
            validation: serde_json::from_str(&inv.summary).unwrap_or_default(),
            id: inv.id,
            status: inv.status,
            document_id: inv.document_id,
            issue_date: inv.issue_date,
            buyer_endpoint: inv.buyer_endpoint,
            connection_id: inv.connection_id,
            transmission_id: inv.transmission_id,
            resubmission_of: inv.resubmission_of,
            resubmitted_as,
            sha256: inv.sha256,
            created_at: inv.created_at,
            updated_at: inv.updated_at,
            environment: inv.environment,
        }
    }
}

#[utoipa::path(get, path = "/v1/invoices/{id}", tag = "sending", operation_id = "get_invoice",
    params(("id" = String, Path, description = "Invoice id (`inv_...`)")),
    responses(
        (status = 200, description = "The invoice and its current status", body = Invoice),
        (status = 404, description = "No such invoice in this tenant", body = crate::problem::ProblemBody)))]
pub async fn get_invoice(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<Invoice>, Problem> {
    let inv = tenant_invoice(&state, &principal, &id).await?;
    let resubmitted_as = state
        .store
        .resubmissions(&principal.tenant_id, &inv.id)
        .await?;
    Ok(Json(Invoice::of(inv, Some(resubmitted_as))))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct InvoiceQuery {
    /// Only invoices in this status (`queued`, `delivered`, `accepted`, `rejected`, ...).
    pub status: Option<String>,
    /// Only invoices whose document has this number (BT-1).
    pub document_id: Option<String>,
    /// Only invoices to this buyer electronic address, `scheme:value` (e.g. `0245:1234567890`).
    pub counterparty: Option<String>,
    /// Issued on or after this date, `YYYY-MM-DD`.
    pub issued_from: Option<String>,
    /// Issued on or before this date, `YYYY-MM-DD`.
    pub issued_to: Option<String>,
    /// Changed at or after this time (RFC 3339): what happened since the last webhook seen.
    pub updated_since: Option<String>,
    /// Only invoices older than this id: the `next` of the previous page.
    pub before: Option<String>,
    /// Page size, 1–200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct InvoiceList {
    /// Newest first.
    pub invoices: Vec<Invoice>,
    /// Pass as `before` for the next page; absent on the last page.
    pub next: Option<String>,
}

#[utoipa::path(get, path = "/v1/invoices", tag = "sending", operation_id = "list_invoices",
    params(InvoiceQuery),
    responses(
        (status = 200, description = "The tenant's invoices, newest first: find the ones whose webhooks were missed", body = InvoiceList),
        (status = 400, description = "A filter that is not a status, a date or a time", body = crate::problem::ProblemBody)))]
pub async fn list_invoices(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Query(query): Query<InvoiceQuery>,
) -> Result<Json<InvoiceList>, Problem> {
    let limit = page::size(query.limit)?;
    if let Some(status) = &query.status {
        if sending::states::Status::parse(status).is_none() {
            return Err(Problem::invalid_field(
                "status",
                format!("`{status}` is not an invoice status"),
            ));
        }
    }
    for (field, value) in [
        ("issued_from", &query.issued_from),
        ("issued_to", &query.issued_to),
    ] {
        if let Some(v) = value {
            if chrono::NaiveDate::parse_from_str(v, "%Y-%m-%d").is_err() {
                return Err(Problem::invalid_field(
                    field,
                    format!("`{v}` is not a date; write YYYY-MM-DD"),
                ));
            }
        }
    }
    // Stored times are UTC RFC 3339 with milliseconds: compare in that form.
    let updated_since = match &query.updated_since {
        None => None,
        Some(v) => Some(
            chrono::DateTime::parse_from_rfc3339(v)
                .map_err(|_| {
                    Problem::invalid_field(
                        "updated_since",
                        format!("`{v}` is not an RFC 3339 time, e.g. 2027-01-15T08:00:00Z"),
                    )
                })?
                .with_timezone(&chrono::Utc)
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        ),
    };
    // One row more than the page: `next` only when there is a next page.
    let filter = store::InvoiceFilter {
        tenant_id: &principal.tenant_id,
        before: query.before.as_deref(),
        limit: limit + 1,
        status: query.status.as_deref(),
        document_id: query.document_id.as_deref(),
        counterparty: query.counterparty.as_deref(),
        issued_from: query.issued_from.as_deref(),
        issued_to: query.issued_to.as_deref(),
        updated_since: updated_since.as_deref(),
    };
    let (records, next) = page::cut(state.store.invoices(&filter).await?, limit, |r| &r.id);
    Ok(Json(InvoiceList {
        invoices: records.into_iter().map(|r| Invoice::of(r, None)).collect(),
        next,
    }))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Timeline {
    pub invoice_id: String,
    pub status: String,
    pub transmission_id: Option<String>,
    pub events: Vec<TimelineEntry>,
    /// The last entry's hash (the chain head).
    pub chain_head: String,
    pub environment: String,
}

#[utoipa::path(get, path = "/api/messages/{invoiceId}", tag = "sending", operation_id = "list_invoice_messages_api",
    params(("invoiceId" = String, Path, description = "Invoice id (`inv_...`)")),
    responses(
        (status = 200, description = "Every event in time order: ours and the partner's (ACK is never acceptance)", body = Timeline),
        (status = 404, description = "No such invoice in this tenant", body = crate::problem::ProblemBody)))]
pub async fn messages(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(invoice_id): Path<String>,
) -> Result<Json<Timeline>, Problem> {
    timeline(&state, &principal, &invoice_id).await.map(Json)
}

#[utoipa::path(get, path = "/v1/invoices/{id}/messages", tag = "sending", operation_id = "list_invoice_messages",
    params(("id" = String, Path, description = "Invoice id (`inv_...`)")),
    responses(
        (status = 200, description = "Every event in time order: ours and the partner's (ACK is never acceptance); the same as `GET /api/messages/{invoiceId}`", body = Timeline),
        (status = 404, description = "No such invoice in this tenant", body = crate::problem::ProblemBody)))]
pub async fn messages_v1(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<Timeline>, Problem> {
    timeline(&state, &principal, &id).await.map(Json)
}

async fn timeline(
    state: &AppState,
    principal: &Principal,
    invoice_id: &str,
) -> Result<Timeline, Problem> {
    let t = sending::timeline::of(&state.store, &principal.tenant_id, invoice_id)
        .await?
        .ok_or_else(|| Problem::not_found(format!("no invoice `{invoice_id}` in this tenant")))?;
    Ok(Timeline {
        invoice_id: t.invoice.id,
        status: t.status,
        transmission_id: t.invoice.transmission_id,
        events: t.entries,
        chain_head: t.chain_head,
        environment: t.invoice.environment,
    })
}

#[utoipa::path(get, path = "/api/evidence/{invoiceId}", tag = "sending", operation_id = "get_invoice_evidence_api",
    params(("invoiceId" = String, Path, description = "Invoice id (`inv_...`)")),
    responses(
        (status = 200, description = "The evidence package: JSON, or with `Accept: application/zip` a ZIP (`invoice.xml`, `evidence.json`, `manifest.json` with SHA-256 of each file and the timeline's chain head; check it offline with `invex evidence verify FILE.zip`)",
         content((sending::evidence::EvidencePackage = "application/json"), (Vec<u8> = "application/zip"))),
        (status = 404, description = "No such invoice in this tenant", body = crate::problem::ProblemBody)))]
pub async fn evidence(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(invoice_id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    evidence_package(&state, &principal, &invoice_id, &headers).await
}

#[utoipa::path(get, path = "/v1/invoices/{id}/evidence", tag = "sending", operation_id = "get_invoice_evidence",
    params(("id" = String, Path, description = "Invoice id (`inv_...`)")),
    responses(
        (status = 200, description = "The evidence package, as `GET /api/evidence/{invoiceId}`: JSON, or with `Accept: application/zip` a ZIP",
         content((sending::evidence::EvidencePackage = "application/json"), (Vec<u8> = "application/zip"))),
        (status = 404, description = "No such invoice in this tenant", body = crate::problem::ProblemBody)))]
pub async fn evidence_v1(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    evidence_package(&state, &principal, &id, &headers).await
}

async fn evidence_package(
    state: &AppState,
    principal: &Principal,
    invoice_id: &str,
    headers: &HeaderMap,
) -> Result<Response, Problem> {
    use axum::http::header;
    use axum::response::IntoResponse;
    let package = sending::evidence::assemble(
        &state.store,
        &principal.tenant_id,
        invoice_id,
        crate::clock::now(),
    )
    .await?
    .ok_or_else(|| Problem::not_found(format!("no invoice `{invoice_id}` in this tenant")))?;
    let wants_zip = header_text(headers, "accept").is_some_and(|a| a.contains("application/zip"));
    if !wants_zip {
        return Ok(Json(package).into_response());
    }
    let bytes = sending::evidence::to_zip(&package)
        .map_err(|e| Problem::internal(format!("building the evidence ZIP: {e}")))?;
    Ok((
        [
            (header::CONTENT_TYPE, "application/zip".to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!(
                    "attachment; filename=\"evidence-{}.zip\"",
                    package.invoice_id
                ),
            ),
        ],
        bytes,
    )
        .into_response())
}

#[utoipa::path(post, path = "/v1/partner/callbacks/{connection}", tag = "sending", operation_id = "receive_partner_callback",
    params(("connection" = String, Path, description = "Connection id (`con_...`)"),
        ("webhook-id" = String, Header, description = "Standard Webhooks message id"),
        ("webhook-timestamp" = String, Header, description = "Unix seconds; within 5 minutes of now"),
        ("webhook-signature" = String, Header, description = "`v1,<base64 HMAC-SHA256>` with the connection's callback secret")),
    request_body = PartnerCallback,
    security(()),
    responses(
        (status = 204, description = "Recorded (or already recorded)"),
        (status = 401, description = "Missing, stale or wrong signature", body = crate::problem::ProblemBody),
        (status = 404, description = "Unknown connection or transmission", body = crate::problem::ProblemBody),
        (status = 422, description = "Unknown event kind or code", body = crate::problem::ProblemBody)))]
pub async fn partner_callback(
    State(state): State<AppState>,
    Path(connection_id): Path<String>,
    headers: HeaderMap,
    body: bytes::Bytes,
) -> Result<StatusCode, Problem> {
    let connection = state
        .store
        .connection_by_id(&connection_id)
        .await?
        .filter(|c| c.partner == "http")
        .ok_or_else(|| {
            Problem::not_found(format!("no http partner connection `{connection_id}`"))
        })?;
    let secret = connection.callback_secret.clone().unwrap_or_default();
    crate::webhooks::signing::verify(
        &secret,
        header_text(&headers, "webhook-id").as_deref(),
        header_text(&headers, "webhook-timestamp").as_deref(),
        header_text(&headers, "webhook-signature").as_deref(),
        &body,
        chrono::Utc::now().timestamp(),
        300,
    )
    .map_err(|e| {
        Problem::new(
            StatusCode::UNAUTHORIZED,
            "invalid-signature",
            "The callback signature does not verify",
            e.to_string(),
        )
    })?;
    let callback: PartnerCallback = serde_json::from_slice(&body).map_err(|e| {
        Problem::bad_request(format!("the callback body is not a partner event: {e}"))
    })?;
    let response = callback.event.response().ok_or_else(|| {
        Problem::invalid_field(
            "event",
            format!(
                "unknown event {}:{}",
                callback.event.kind, callback.event.code
            ),
        )
    })?;
    let invoice = state
        .store
        .invoice_by_transmission(&connection.id, &callback.transmission_id)
        .await?
        .ok_or_else(|| {
            Problem::not_found(format!(
                "no invoice with transmission `{}` on this connection",
                callback.transmission_id
            ))
        })?;
    sending::apply_partner_event(&state, &invoice, response, callback.event.reason).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A status callback from an HTTP partner.
#[derive(Debug, Deserialize, ToSchema)]
pub struct PartnerCallback {
    pub transmission_id: String,
    pub event: partner::PartnerEventBody,
}

#[utoipa::path(post, path = "/v1/invoices/{id}/archive", tag = "sending", operation_id = "archive_invoice",
    params(("id" = String, Path, description = "Invoice id (`inv_...`)")),
    responses(
        (status = 200, description = "Archived; `invoice.archived` goes to subscribed endpoints", body = Invoice),
        (status = 404, description = "No such invoice in this tenant", body = crate::problem::ProblemBody),
        (status = 409, description = "The invoice's workflow has not ended (`illegal-transition`)", body = crate::problem::ProblemBody)))]
pub async fn archive_invoice(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<Invoice>, Problem> {
    let inv = tenant_invoice(&state, &principal, &id).await?;
    sending::archive(&state, &inv, &principal).await?;
    get_invoice(State(state), Extension(principal), Path(id)).await
}

#[utoipa::path(get, path = "/v1/invoices/{id}/artifacts/{kind}", tag = "sending", operation_id = "get_invoice_artifact",
    params(
        ("id" = String, Path, description = "Invoice id"),
        ("kind" = String, Path, description = "`xml`: the document exactly as sent; `pdf`: its rendition (parties, lines, VAT breakdown, totals; deterministic)")),
    responses(
        (status = 200, description = "The artifact (also pushed with `invoice.artifacts_ready` when the invoice is delivered)", content_type = "application/pdf"),
        (status = 404, description = "No such invoice in this tenant, or an unknown kind", body = crate::problem::ProblemBody)))]
pub async fn artifact(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path((invoice_id, kind)): Path<(String, String)>,
) -> Result<Response, Problem> {
    use axum::http::header;
    use axum::response::IntoResponse;
    if !sending::artifacts::KINDS.contains(&kind.as_str()) {
        return Err(Problem::not_found(format!(
            "no artifact `{kind}`; one of: {}",
            sending::artifacts::KINDS.join(", ")
        )));
    }
    let inv = tenant_invoice(&state, &principal, &invoice_id).await?;
    let (bytes, media_type, file_name) = state
        .admission
        .run(move || sending::artifacts::render(&inv, &kind))
        .await?
        .map_err(|e| Problem::internal(format!("rendering the artifact: {e}")))?;
    Ok((
        [
            (header::CONTENT_TYPE, media_type.to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{file_name}\""),
            ),
        ],
        bytes,
    )
        .into_response())
}
