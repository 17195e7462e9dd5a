//! Sending: idempotent, validate-first, asynchronous delivery through the tenant's
//! activated connection to a delivery partner.
//!
//! A send request is claimed under its `Idempotency-Key`, validated, and then either stored
//! as `remediation_required` (fatal findings: never sent) or stored and queued in the
//! outbox in one transaction; the [`worker`] delivers queued invoices in the background.

pub mod artifacts;
pub mod config;
pub mod connections;
pub mod document;
pub mod evidence;
pub mod identifiers;
pub mod partner;
pub mod states;
pub mod timeline;
pub mod worker;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use chrono::{SecondsFormat, Utc};
use serde::Serialize;
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use crate::auth::{Family, Principal};
use crate::problem::Problem;
use crate::state::AppState;
use crate::store::{self, IdempotencyClaim, InvoiceRecord};
use crate::validation;
use states::Status;

/// How long an idempotency key is remembered (published in the OpenAPI description).
pub const IDEMPOTENCY_KEY_HOURS: i64 = 24;
/// Longest accepted Idempotency-Key.
const MAX_KEY_LEN: usize = 255;

/// A send request, from either route family.
pub struct SendRequest {
    pub idempotency_key: Option<String>,
    pub profile: Option<String>,
    pub file_name: Option<String>,
    pub scenario: Option<String>,
    pub resubmission_of: Option<String>,
    /// A deliberate re-send of a document already queued, in flight or delivered: without
    /// it such a send is refused (409 `duplicate-document`).
    pub allow_duplicate: bool,
    /// The route family the request came in on: links in the answer point into it.
    pub family: Family,
    pub bytes: Bytes,
    /// What the request says `bytes` are (a JSON invoice is sent as its UBL).
    pub declared: validation::Declared,
}

/// The validation of a sent invoice (named apart from the validation list's summary).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = InvoiceValidationSummary)]
pub struct ValidationSummary {
    /// `GET /v1/validations/{id}`.
    pub id: String,
    pub verdict: String,
    pub profile: String,
    /// How the profile was detected, when the caller named none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detection: Option<String>,
    /// Which version of the named profile was in force and why, when the caller named it
    /// without a version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<String>,
    pub rules_version: Vec<String>,
    pub fatal: usize,
    pub warnings: usize,
    /// Identifiers that failed their checks (electronic addresses, VAT ids, IBANs); any one
    /// keeps the invoice from being sent, as a fatal finding does.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub identifiers: Vec<identifiers::IdentifierFault>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct InvoiceLinks {
    /// The invoice: `/v1/invoices/{id}`; for `/api` callers its timeline, the `/api`
    /// family's view of an invoice.
    #[serde(rename = "self")]
    pub self_: String,
    pub messages: String,
    pub evidence: String,
    pub validation: String,
}

impl InvoiceLinks {
    /// Links into the route family the caller used, so that the caller's key works on each.
    pub fn new(family: Family, id: &str, validation_id: &str) -> InvoiceLinks {
        match family {
            Family::Api => InvoiceLinks {
                self_: format!("/api/messages/{id}"),
                messages: format!("/api/messages/{id}"),
                evidence: format!("/api/evidence/{id}"),
                validation: format!("/v1/validations/{validation_id}"),
            },
            Family::Versioned => InvoiceLinks {
                self_: format!("/v1/invoices/{id}"),
                messages: format!("/v1/invoices/{id}/messages"),
                evidence: format!("/v1/invoices/{id}/evidence"),
                validation: format!("/v1/validations/{validation_id}"),
            },
        }
    }
}

/// The answer to an accepted send (202): the invoice is queued for delivery.
#[derive(Debug, Serialize, ToSchema)]
pub struct SendAccepted {
    pub id: String,
    pub status: Status,
    pub connection_id: String,
    pub document_id: Option<String>,
    pub validation: ValidationSummary,
    /// Things worth a look about an accepted send (a number sent before, ...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<SendWarning>,
    pub links: InvoiceLinks,
    pub environment: String,
}

/// The webhook events a timeline entry calls for (status changes the source system acts
/// on), with their data. Delivery also returns the artifacts (final XML and PDF).
pub fn notices_for(invoice: &InvoiceRecord, event: &store::NewEvent) -> Vec<store::Notice> {
    use crate::webhooks::events::EventType;
    let Some(status) = event.status.as_deref().and_then(Status::parse) else {
        return Vec::new();
    };
    let event_type = match status {
        Status::Delivered => EventType::InvoiceDelivered,
        Status::InProcess => EventType::InvoiceInProcess,
        Status::Accepted => EventType::InvoiceAccepted,
        Status::Paid => EventType::InvoicePaid,
        Status::Rejected => EventType::InvoiceRejected,
        Status::ConditionallyAccepted | Status::UnderQuery => EventType::InvoiceAttentionNeeded,
        Status::Failed => EventType::InvoiceFailed,
        Status::RemediationRequired => EventType::InvoiceRemediationRequired,
        Status::Archived => EventType::InvoiceArchived,
        _ => return Vec::new(),
    };
    let mut out = vec![notice(invoice, event_type, event)];
    match status {
        Status::Delivered => {
            let mut ready = notice(invoice, EventType::InvoiceArtifactsReady, event);
            ready.data["artifacts"] = serde_json::json!(artifacts::all(invoice));
            out.push(ready);
        }
        // A rejection opens the remediation flow: the source system corrects the document
        // and resubmits it naming this invoice (`resubmission_of`). The rejection's code and
        // reason are the remediation's reasons.
        Status::Rejected => {
            let mut remediation = notice(invoice, EventType::InvoiceRemediationRequired, event);
            remediation.data["reason"] = serde_json::json!({
                "code": event.code,
                "detail": event.detail,
            });
            out.push(remediation);
        }
        _ => {}
    }
    out
}

/// What the source system must fix in a refused document: its fatal findings (rule id,
/// severity, path, line, message, remediation hint, who fixes it) and the identifiers that
/// failed their checks, from what was stored with the invoice.
fn remediation_data(invoice: &InvoiceRecord) -> (serde_json::Value, serde_json::Value) {
    let findings: Vec<invex_engine::report::Finding> =
        serde_json::from_str(&invoice.findings).unwrap_or_default();
    let findings: Vec<serde_json::Value> = findings
        .iter()
        .filter(|f| f.severity == invex_engine::report::Severity::Fatal)
        .map(crate::webhooks::events::finding_data)
        .collect();
    let summary: serde_json::Value = serde_json::from_str(&invoice.summary).unwrap_or_default();
    let identifiers = summary
        .get("identifiers")
        .cloned()
        .unwrap_or_else(|| serde_json::json!([]));
    (serde_json::json!(findings), identifiers)
}

/// A webhook event about `invoice`, reporting timeline entry `event`. The status is the
/// one the entry moved the invoice to, else the invoice's own.
pub fn notice(
    invoice: &InvoiceRecord,
    event_type: crate::webhooks::events::EventType,
    event: &store::NewEvent,
) -> store::Notice {
    let mut data = serde_json::json!({
        "invoice_id": invoice.id,
        "document_id": invoice.document_id,
        "status": event.status.as_deref().unwrap_or(&invoice.status),
        "code": event.code,
        "meaning": event.meaning,
        "detail": event.detail,
        "correlation_id": event.correlation_id,
        "resubmission_of": invoice.resubmission_of,
        "environment": invoice.environment,
        "links": {
            "self": format!("/v1/invoices/{}", invoice.id),
            "messages": format!("/v1/invoices/{}/messages", invoice.id),
            "evidence": format!("/v1/invoices/{}/evidence", invoice.id),
        },
    });
    if event_type == crate::webhooks::events::EventType::InvoiceRemediationRequired {
        let (findings, identifiers) = remediation_data(invoice);
        data["findings"] = findings;
        data["identifiers"] = identifiers;
    }
    store::Notice { event_type, data }
}

/// Record a response event a partner reported after the submission (a callback). A
/// repeated callback (same code and reason as an entry already in the timeline) changes
/// nothing; an event the life cycle does not allow from the current status is kept in the
/// timeline without changing the status, and logged.
pub async fn apply_partner_event(
    state: &AppState,
    invoice: &InvoiceRecord,
    response: timeline::Response,
    reason: Option<String>,
) -> Result<(), Problem> {
    apply_response(&state.store, invoice, response, reason, "http-partner").await?;
    Ok(())
}

/// [`apply_partner_event`] on the store alone (the delivery worker applies the sandbox's
/// later events this way); `source` is the partner's name for the timeline.
pub async fn apply_response(
    store: &store::Store,
    invoice: &InvoiceRecord,
    response: timeline::Response,
    reason: Option<String>,
    source: &str,
) -> Result<(), store::StoreError> {
    let code = response.code();
    let seen = store.invoice_events(&invoice.id).await?;
    if seen.iter().any(|e| e.code == code && e.detail == reason) {
        return Ok(());
    }
    let (meaning, next) = response.meaning(reason.as_deref());
    let current = Status::parse(&invoice.status).unwrap_or(Status::Received);
    let moved = next.filter(|n| current.can_move_to(*n));
    if let (Some(n), None) = (next, moved) {
        tracing::warn!(invoice = %invoice.id, from = current.as_str(), to = n.as_str(),
            "a partner event asked for an illegal status transition; kept in the timeline, status unchanged");
    }
    let event = store::NewEvent {
        at: crate::clock::now(),
        source: source.to_string(),
        code,
        status: moved.map(|s| s.as_str().to_string()),
        meaning,
        correlation_id: invoice
            .transmission_id
            .clone()
            .unwrap_or_else(|| invoice.id.clone()),
        detail: reason,
    };
    let notices = notices_for(invoice, &event);
    store
        .append_invoice_events(
            &invoice.tenant_id,
            &invoice.id,
            moved.map(Status::as_str),
            &[event],
            &notices,
        )
        .await
}

/// Close an invoice whose workflow has ended: status `archived`, the evidence package final,
/// `invoice.archived` to subscribed endpoints. Refused (409) from a status still in flight.
pub async fn archive(
    state: &AppState,
    invoice: &InvoiceRecord,
    by: &Principal,
) -> Result<(), Problem> {
    let current = Status::parse(&invoice.status).unwrap_or(Status::Received);
    if !current.can_move_to(Status::Archived) {
        tracing::warn!(invoice = %invoice.id, from = current.as_str(), "archive refused: illegal transition");
        return Err(Problem::conflict(
            "illegal-transition",
            format!(
                "an invoice that is `{}` cannot be archived; only finished ones can (accepted, \
                 paid, rejected, conditionally_accepted, failed, remediation_required)",
                current.as_str()
            ),
        )
        .with("invoice_status", current));
    }
    let event = timeline::own(
        "archived",
        Status::Archived,
        "closed and archived: the evidence package is final".to_string(),
        &invoice.id,
    );
    let event = store::NewEvent {
        detail: Some(format!(
            "archived by key {}",
            by.key_id.as_deref().unwrap_or("-")
        )),
        ..event
    };
    let notices = notices_for(invoice, &event);
    state
        .store
        .append_invoice_events(
            &invoice.tenant_id,
            &invoice.id,
            Some(Status::Archived.as_str()),
            &[event],
            &notices,
        )
        .await?;
    Ok(())
}

fn offset(secs: i64) -> String {
    (Utc::now() + chrono::Duration::seconds(secs)).to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// Run a send request under its idempotency key and answer it (or replay the first
/// answer for that key).
pub async fn send(state: &AppState, principal: &Principal, request: SendRequest) -> Response {
    match answer(state, principal, request).await {
        Ok(answered) => answered.into_response(),
        Err(problem) => problem.into_response(),
    }
}

/// The answer stored under a send's idempotency key: the first run's, or its replay.
#[derive(Debug)]
pub struct Answered {
    pub status: StatusCode,
    pub content_type: String,
    pub body: String,
    /// Answered before: this is the stored answer again.
    pub replayed: bool,
}

impl IntoResponse for Answered {
    fn into_response(self) -> Response {
        let location = location(self.status, &self.body);
        let mut response = (
            self.status,
            [(header::CONTENT_TYPE, self.content_type)],
            self.body,
        )
            .into_response();
        let headers = response.headers_mut();
        if self.replayed {
            headers.insert("idempotent-replayed", HeaderValue::from_static("true"));
        }
        if let Some(location) = location {
            headers.insert(header::LOCATION, location);
        }
        response
    }
}

/// [`send`] without HTTP: the stored answer, or the problem of a request that stored
/// nothing (the key is free again for a corrected retry).
pub async fn answer(
    state: &AppState,
    principal: &Principal,
    mut request: SendRequest,
) -> Result<Answered, Problem> {
    let Some(key) = request
        .idempotency_key
        .clone()
        .filter(|k| !k.trim().is_empty())
    else {
        return Err(Problem::new(
            StatusCode::BAD_REQUEST,
            "idempotency-key-missing",
            "Idempotency-Key required",
            "a send request must carry an Idempotency-Key header (any unique string up to 255 \
             characters, e.g. a UUID); a retry with the same key never sends twice",
        ));
    };
    if key.len() > MAX_KEY_LEN {
        return Err(Problem::invalid_field(
            "Idempotency-Key",
            format!(
                "the key is {} characters long; at most {MAX_KEY_LEN}",
                key.len()
            ),
        ));
    }
    // A JSON invoice is sent as the UBL it stands for: everything from here on (the
    // idempotency fingerprint, validation, the stored payload) sees that UBL, which the
    // writer makes the same for the same JSON.
    let json = match request.declared {
        validation::Declared::Xml => false,
        validation::Declared::Json => true,
        validation::Declared::ByContent => crate::invoice::json::is_json(&request.bytes),
    };
    if json {
        let bytes = request.bytes.clone();
        let written = state
            .admission
            .run(move || {
                validation::to_xml(&bytes, validation::Declared::Json)
                    .map(|x| Bytes::from(x.into_owned()))
            })
            .await??;
        request.bytes = written;
    }
    let document_sha = digest(state, &request.bytes).await?;
    let fingerprint = request_hash(&request, &document_sha);
    let token = crate::ids::new_id("claim");
    let claim = state
        .store
        .claim_idempotency_key(
            &principal.tenant_id,
            &key,
            &fingerprint,
            &token,
            &offset(0),
            &offset(IDEMPOTENCY_KEY_HOURS * 3600),
            &offset(-(state.config.sending.abandoned_after_secs as i64)),
        )
        .await?;
    match claim {
        IdempotencyClaim::Mismatch => Err(Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "idempotency-key-reused",
            "Idempotency-Key reused with a different request",
            "this Idempotency-Key was already used for a different document or parameters; use a \
             new key for a new request",
        )),
        IdempotencyClaim::Running => Err(in_progress()),
        IdempotencyClaim::Completed {
            status,
            content_type,
            body,
        } => Ok(Answered {
            status: StatusCode::from_u16(status).unwrap_or(StatusCode::OK),
            content_type,
            body,
            replayed: true,
        }),
        IdempotencyClaim::New { token } => {
            let claim = Claim {
                key: &key,
                token: &token,
            };
            match run(state, principal, request, document_sha, &claim).await {
                Ok((status, content_type, body)) => Ok(Answered {
                    status,
                    content_type,
                    body,
                    replayed: false,
                }),
                Err(problem) => {
                    // Nothing was stored: give the key up so a corrected retry can run.
                    if let Err(e) = state
                        .store
                        .release_idempotency_key(&principal.tenant_id, &key, &token)
                        .await
                    {
                        tracing::error!(error = %e, "an idempotency key could not be released");
                    }
                    Err(problem)
                }
            }
        }
    }
}

/// Bodies up to this size are hashed on the request's task (tens of microseconds, less
/// than a hand-over to a worker); larger ones on a worker.
const INLINE_DIGEST_BYTES: usize = 64 * 1024;

/// The document's SHA-256, lowercase hex.
async fn digest(state: &AppState, bytes: &Bytes) -> Result<String, crate::admission::Busy> {
    if bytes.len() <= INLINE_DIGEST_BYTES {
        return Ok(hex::encode(Sha256::digest(bytes)));
    }
    let bytes = bytes.clone();
    state
        .admission
        .run(move || hex::encode(Sha256::digest(&bytes)))
        .await
}

/// Sending, of one invoice or of a batch, needs an activated connection.
pub fn no_active_connection() -> Problem {
    Problem::conflict(
        "no-active-connection",
        "sending needs an activated connection to a delivery partner: create one with \
         POST /v1/connections and activate it with POST /v1/connections/{id}/activate",
    )
}

fn in_progress() -> Problem {
    Problem::conflict(
        "idempotency-request-in-progress",
        "a request with this Idempotency-Key is still being processed; retry shortly to get its answer",
    )
    .header(header::RETRY_AFTER, "1")
}

/// `Location` of an accepted send: the queued invoice (`links.self`, in the caller's route
/// family). Read from the answer's body, which a replay has stored as it was first sent.
fn location(status: StatusCode, body: &str) -> Option<HeaderValue> {
    if status != StatusCode::ACCEPTED {
        return None;
    }
    let answer: serde_json::Value = serde_json::from_str(body).ok()?;
    HeaderValue::from_str(answer.pointer("/links/self")?.as_str()?).ok()
}

/// The idempotency key a send runs under, and the token that proves it still holds it.
struct Claim<'a> {
    key: &'a str,
    token: &'a str,
}

/// The request's fingerprint: its parameters and the document's SHA-256.
fn request_hash(r: &SendRequest, document_sha: &str) -> String {
    let mut h = Sha256::new();
    for part in [
        "send",
        r.profile.as_deref().unwrap_or(""),
        r.scenario.as_deref().unwrap_or(""),
        r.resubmission_of.as_deref().unwrap_or(""),
        if r.allow_duplicate {
            "allow_duplicate"
        } else {
            ""
        },
        document_sha,
    ] {
        h.update(part.as_bytes());
        h.update(b"\n");
    }
    hex::encode(h.finalize())
}

/// What one worker job reads from a document to be sent, from a single parse.
struct Examined {
    identity: document::Identity,
    faults: Vec<identifiers::IdentifierFault>,
    checked: validation::Checked,
}

fn examine(
    catalog: &invex_engine::registry::Catalog,
    profile: Option<&str>,
    bytes: &[u8],
    limits: &invex_engine::document::Limits,
    max_findings: usize,
) -> Result<Examined, Problem> {
    let start = std::time::Instant::now();
    let doc = validation::parse(bytes, limits)?;
    // A document that is not a UBL invoice has no identifiers to check; the rules say
    // what is wrong with it.
    let view = crate::invoice::from_document(&doc).ok();
    let identity = view.as_ref().map(document::of_view).unwrap_or_default();
    let faults = view
        .as_ref()
        .map(identifiers::check_view)
        .unwrap_or_default();
    // The rules run even when identifiers fail: a refused document is stored with
    // everything that is wrong with it, so that one correction fixes all of it.
    // An invoice is sent now: the rules in force today apply.
    let checked = validation::check(
        catalog,
        profile,
        invex_engine::registry::today(),
        &doc,
        bytes,
        start,
        max_findings,
    )?;
    Ok(Examined {
        identity,
        faults,
        checked,
    })
}

/// The conversion the document came from, if any: by its exact bytes, else by its
/// business identity (the newest conversion of the same number, date and seller), so that
/// an edited copy of a held conversion is held too.
async fn source_conversion(
    state: &AppState,
    tenant_id: &str,
    document_sha: &str,
    identity: &document::Identity,
) -> Result<Option<store::ConversionRecord>, Problem> {
    if let Some(c) = state
        .store
        .conversion_by_xml(tenant_id, document_sha)
        .await?
    {
        return Ok(Some(c));
    }
    let (Some(number), Some(date)) = (&identity.document_id, &identity.issue_date) else {
        return Ok(None);
    };
    Ok(state
        .store
        .conversions_by_number(tenant_id, number, date)
        .await?
        .into_iter()
        .find(|c| {
            identity.same_document(
                c.document_id.as_deref(),
                c.issue_date.as_deref(),
                &c.seller_ids,
            )
        }))
}

/// Invoices of the same business identity that are queued, in flight or delivered (not
/// counting the one this send corrects, nor invoices that were never sent or that the
/// network or the buyer refused): a send of the same document again is a duplicate.
async fn sent_before(
    state: &AppState,
    tenant_id: &str,
    identity: &document::Identity,
    resubmission_of: Option<&str>,
) -> Result<Vec<String>, Problem> {
    let (Some(number), Some(date)) = (&identity.document_id, &identity.issue_date) else {
        return Ok(Vec::new());
    };
    Ok(state
        .store
        .invoices_by_number(tenant_id, number, date)
        .await?
        .into_iter()
        .filter(|i| {
            identity.same_document(
                i.document_id.as_deref(),
                i.issue_date.as_deref(),
                &i.seller_ids,
            ) && Some(i.id.as_str()) != resubmission_of
                && Status::parse(&i.status).is_some_and(Status::went_out)
        })
        .map(|i| i.id)
        .collect())
}

/// A warning on an accepted send: the invoice went out, but something deserves a look.
#[derive(Debug, Serialize, ToSchema)]
pub struct SendWarning {
    /// `duplicate-document`: an invoice with the same seller, number and issue date was
    /// sent before.
    pub code: String,
    pub detail: String,
    /// The earlier invoices (`inv_...`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub invoices: Vec<String>,
}

async fn run(
    state: &AppState,
    principal: &Principal,
    request: SendRequest,
    document_sha: String,
    claim: &Claim<'_>,
) -> Result<(StatusCode, String, String), Problem> {
    if let Some(s) = &request.scenario {
        if !partner::SCENARIOS.contains(&s.as_str()) {
            return Err(Problem::invalid_field(
                "Invex-Sandbox-Scenario",
                format!(
                    "unknown scenario `{s}`; one of: {}",
                    partner::SCENARIOS.join(", ")
                ),
            ));
        }
    }
    let Some(connection) = state.store.active_connection(&principal.tenant_id).await? else {
        return Err(no_active_connection());
    };
    if let Some(previous) = &request.resubmission_of {
        if state
            .store
            .invoice(&principal.tenant_id, previous)
            .await?
            .is_none()
        {
            return Err(Problem::invalid_field(
                "resubmission_of",
                format!("no invoice `{previous}` in this tenant"),
            ));
        }
    }
    let catalog = state.registry.current();
    let limits = validation::parse_limits(state);
    let (bytes, profile) = (request.bytes.clone(), request.profile.clone());
    let max_findings = state.config.limits.max_findings;
    let examined = state
        .admission
        .run(move || examine(&catalog, profile.as_deref(), &bytes, &limits, max_findings))
        .await??;
    // A document a conversion produced goes out only when the review gate lets it: this
    // holds however it arrives (by conversion id, as the same bytes, or edited).
    let conversion = source_conversion(
        state,
        &principal.tenant_id,
        &document_sha,
        &examined.identity,
    )
    .await?;
    if let Some(c) = &conversion {
        if let Err(why) = crate::convert::review::may_send(c) {
            return Err(Problem::conflict("conversion-not-approved", why)
                .with("conversion_id", &c.id)
                .with("conversion_status", &c.status)
                .with("review", format!("/v1/conversions/{}", c.id)));
        }
    }
    // The same document (seller, number, issue date) already went out: a second invoice
    // of it is refused unless the caller says it is deliberate. Retries of this request
    // are governed by its Idempotency-Key, and never reach here twice.
    let earlier = sent_before(
        state,
        &principal.tenant_id,
        &examined.identity,
        request.resubmission_of.as_deref(),
    )
    .await?;
    if !earlier.is_empty() && !request.allow_duplicate {
        return Err(Problem::conflict(
            "duplicate-document",
            format!(
                "an invoice with the same seller, number `{}` and issue date is already queued, \
                 in flight or delivered ({}); to send it again on purpose add \
                 allow_duplicate=true, to correct a refused or rejected invoice name it with \
                 resubmission_of",
                examined.identity.document_id.as_deref().unwrap_or(""),
                earlier.join(", ")
            ),
        )
        .with("invoice_id", &earlier[0])
        .with("invoices", &earlier)
        .with(
            "links",
            serde_json::json!({ "first": format!("/v1/invoices/{}", earlier[0]) }),
        ));
    }
    let faults = examined.faults;
    let checked = examined.checked;
    let identity = examined.identity;
    let validated = validation::finish(state, request.file_name.clone(), checked);
    let result = &validated.result;
    state
        .store
        .insert_validations(vec![validation::record(principal, result)])
        .await?;
    let family = request.family;
    let payload = String::from_utf8(request.bytes.to_vec())
        .map_err(|_| Problem::bad_request("the document is not UTF-8 text"))?;
    let report = &result.report;
    let id = crate::ids::new_id("inv");
    let fatal = report.counts.fatal;
    let summary = ValidationSummary {
        id: result.id.clone(),
        verdict: report.verdict.as_str().to_string(),
        profile: report.profile.clone(),
        detection: report.detection.clone(),
        resolution: report.resolution.clone(),
        rules_version: report.rules_version.clone(),
        fatal,
        warnings: report.counts.warning,
        identifiers: faults,
    };
    // Fatal findings and failed identifier checks take the same path: the invoice is stored
    // in the remediation flow, with its timeline and a webhook, and not sent.
    let refused = fatal > 0 || !summary.identifiers.is_empty();
    let now = crate::clock::now();
    let status = if refused {
        Status::RemediationRequired
    } else {
        Status::Queued
    };
    let record = InvoiceRecord {
        id: id.clone(),
        tenant_id: principal.tenant_id.clone(),
        connection_id: Some(connection.id.clone()),
        status: status.as_str().to_string(),
        document_id: identity.document_id.clone(),
        buyer_endpoint: identity.buyer_endpoint.clone(),
        sha256: result.document.sha256.clone(),
        payload,
        validation_id: result.id.clone(),
        profile: report.profile.clone(),
        rules_version: report.rules_version.join(","),
        summary: serde_json::to_string(&summary).unwrap_or_default(),
        findings: serde_json::to_string(&report.findings).unwrap_or_default(),
        scenario: request.scenario.clone(),
        transmission_id: None,
        resubmission_of: request.resubmission_of.clone(),
        environment: state.environment().to_string(),
        created_at: now.clone(),
        updated_at: now,
        issue_date: identity.issue_date.clone(),
        seller_ids: identity.stored_seller_ids(),
    };
    let received = timeline::own(
        "received",
        Status::Received,
        match &request.resubmission_of {
            Some(p) => format!("received, as a corrected resubmission of {p}"),
            None => "received for sending".to_string(),
        },
        &id,
    );
    if refused {
        let failed_ids: Vec<String> = summary
            .identifiers
            .iter()
            .map(|f| format!("{} ({}) `{}`", f.what, f.business_term, f.value))
            .collect();
        let why = match (fatal, failed_ids.is_empty()) {
            (0, _) => format!("identifiers fail their checks: {}", failed_ids.join(", ")),
            (n, true) => format!("{n} fatal finding(s) against {}", report.profile),
            (n, false) => format!(
                "{n} fatal finding(s) against {}, and identifiers fail their checks: {}",
                report.profile,
                failed_ids.join(", ")
            ),
        };
        let events = [
            received,
            timeline::own(
                "remediation_required",
                Status::RemediationRequired,
                format!(
                    "{why}: not sent; fix the document and resubmit (a new send with \
                     resubmission_of={id})"
                ),
                &id,
            ),
        ];
        let notices: Vec<_> = events
            .iter()
            .flat_map(|e| notices_for(&record, e))
            .collect();
        let fatal_findings: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.severity == invex_engine::report::Severity::Fatal)
            .collect();
        let problem = if summary.identifiers.is_empty() {
            Problem::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "remediation-required",
                "The invoice has fatal findings and was not sent",
                format!(
                    "{why}; the invoice {id} is kept in the remediation flow: fix the document \
                     and send it again with resubmission_of={id}"
                ),
            )
        } else {
            Problem::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid-identifiers",
                "Identifiers in the document fail their checks",
                format!(
                    "not accepted for sending: {why}; the invoice {id} is kept in the \
                     remediation flow: correct the document and send it again with \
                     resubmission_of={id}"
                ),
            )
            .with("identifiers", &summary.identifiers)
        };
        let problem = problem
            .with("invoice_id", &id)
            .with("invoice_status", Status::RemediationRequired)
            .with("findings", fatal_findings)
            .with("validation", &summary)
            .with("links", InvoiceLinks::new(family, &id, &result.id));
        let body = serde_json::to_string(&problem.body()).unwrap_or_default();
        let content_type = crate::problem::PROBLEM_JSON;
        store_invoice(
            state,
            store::NewInvoice {
                invoice: &record,
                events: &events,
                queue_at: None,
                notices: &notices,
                conversion_id: None,
                completion: completion(
                    claim,
                    StatusCode::UNPROCESSABLE_ENTITY,
                    content_type,
                    &body,
                ),
            },
        )
        .await?;
        return Ok((
            StatusCode::UNPROCESSABLE_ENTITY,
            content_type.to_string(),
            body,
        ));
    }
    let events = [
        received,
        timeline::own(
            "validated",
            Status::Validated,
            format!(
                "validated against {} without fatal findings",
                report.profile
            ),
            &id,
        ),
        timeline::own(
            "queued",
            Status::Queued,
            format!(
                "queued for delivery through connection {} ({})",
                connection.name, connection.id
            ),
            &id,
        ),
    ];
    let mut warnings = Vec::new();
    if !earlier.is_empty() {
        warnings.push(SendWarning {
            code: "duplicate-document".to_string(),
            detail: format!(
                "an invoice with the same seller, number `{}` and issue date was sent before ({}); \
                 this one is sent too, as allow_duplicate asked",
                identity.document_id.as_deref().unwrap_or(""),
                earlier.join(", ")
            ),
            invoices: earlier,
        });
    }
    let accepted = SendAccepted {
        links: InvoiceLinks::new(family, &id, &result.id),
        id: id.clone(),
        status,
        connection_id: connection.id,
        document_id: identity.document_id,
        validation: summary,
        warnings,
        environment: state.environment().to_string(),
    };
    let body = serde_json::to_string(&accepted).unwrap_or_default();
    let content_type = "application/json";
    let now = crate::clock::now();
    store_invoice(
        state,
        store::NewInvoice {
            invoice: &record,
            events: &events,
            queue_at: Some(&now),
            notices: &[],
            conversion_id: conversion.as_ref().map(|c| c.id.as_str()),
            completion: completion(claim, StatusCode::ACCEPTED, content_type, &body),
        },
    )
    .await?;
    state.outbox_wake.notify_one();
    Ok((StatusCode::ACCEPTED, content_type.to_string(), body))
}

fn completion<'a>(
    claim: &Claim<'a>,
    status: StatusCode,
    content_type: &'a str,
    body: &'a str,
) -> store::KeyCompletion<'a> {
    store::KeyCompletion {
        key: claim.key,
        token: claim.token,
        status: status.as_u16(),
        content_type,
        body,
    }
}

/// Store the invoice with the key's answer in one transaction. When the key was taken over
/// meanwhile, this request stored nothing and the request that took it answers.
async fn store_invoice(state: &AppState, new: store::NewInvoice<'_>) -> Result<(), Problem> {
    match state.store.insert_invoice(new).await {
        Ok(()) => Ok(()),
        Err(store::StoreError::ClaimLost) => Err(Problem::conflict(
            "idempotency-request-in-progress",
            "another request with this Idempotency-Key took it over (this one ran too long); \
             retry shortly to get its answer",
        )
        .header(header::RETRY_AFTER, "1")),
        Err(e) => Err(e.into()),
    }
}
