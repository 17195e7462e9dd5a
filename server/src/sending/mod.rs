//! Sending: idempotent, validate-first, asynchronous delivery through the tenant's
//! activated connection to a delivery partner.
//!
//! A send request is claimed under its `Idempotency-Key`, validated, and then either stored
//! as `remediation_required` (fatal findings: never sent) or stored and queued in the
//! outbox in one transaction; the [`worker`] delivers queued invoices in the background.

pub mod artifacts;
pub mod config;
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

use crate::auth::Principal;
use crate::problem::Problem;
use crate::state::AppState;
use crate::store::{self, IdempotencyClaim, InvoiceRecord};
use crate::validation;
use states::Status;

/// How long an idempotency key is remembered (published in the OpenAPI description).
pub const IDEMPOTENCY_KEY_HOURS: i64 = 24;
/// A key whose request has been running this long is taken to belong to a dead server.
const ABANDONED_AFTER_SECS: i64 = 120;
/// Longest accepted Idempotency-Key.
const MAX_KEY_LEN: usize = 255;

/// A send request, from either route family.
pub struct SendRequest {
    pub idempotency_key: Option<String>,
    pub profile: Option<String>,
    pub file_name: Option<String>,
    pub scenario: Option<String>,
    pub resubmission_of: Option<String>,
    pub bytes: Bytes,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ValidationSummary {
    /// `GET /v1/validations/{id}`.
    pub id: String,
    pub verdict: String,
    pub profile: String,
    pub rules_version: Vec<String>,
    pub fatal: usize,
    pub warnings: usize,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct InvoiceLinks {
    #[serde(rename = "self")]
    pub self_: String,
    pub messages: String,
    pub validation: String,
}

/// The answer to an accepted send (202): the invoice is queued for delivery.
#[derive(Debug, Serialize, ToSchema)]
pub struct SendAccepted {
    pub id: String,
    pub status: Status,
    pub connection_id: String,
    pub document_id: Option<String>,
    pub validation: ValidationSummary,
    pub links: InvoiceLinks,
    pub environment: String,
}

fn links(id: &str, validation_id: &str) -> InvoiceLinks {
    InvoiceLinks {
        self_: format!("/v1/invoices/{id}"),
        messages: format!("/api/messages/{id}"),
        validation: format!("/v1/validations/{validation_id}"),
    }
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
        Status::Rejected => EventType::InvoiceRejected,
        Status::ConditionallyAccepted | Status::UnderQuery => EventType::InvoiceAttentionNeeded,
        Status::Failed => EventType::InvoiceFailed,
        Status::RemediationRequired => EventType::InvoiceRemediationRequired,
        Status::Archived => EventType::InvoiceArchived,
        _ => return Vec::new(),
    };
    let mut out = vec![notice(invoice, event_type, event)];
    if status == Status::Delivered {
        let mut ready = notice(invoice, EventType::InvoiceArtifactsReady, event);
        ready.data["artifacts"] = serde_json::json!(artifacts::all(invoice));
        out.push(ready);
    }
    out
}

/// A webhook event about `invoice`, reporting timeline entry `event`. The status is the
/// one the entry moved the invoice to, else the invoice's own.
pub fn notice(
    invoice: &InvoiceRecord,
    event_type: crate::webhooks::events::EventType,
    event: &store::NewEvent,
) -> store::Notice {
    store::Notice {
        event_type,
        data: serde_json::json!({
            "invoice_id": invoice.id,
            "document_id": invoice.document_id,
            "status": event.status.as_deref().unwrap_or(&invoice.status),
            "code": event.code,
            "meaning": event.meaning,
            "detail": event.detail,
            "correlation_id": event.correlation_id,
            "links": {
                "self": format!("/v1/invoices/{}", invoice.id),
                "messages": format!("/api/messages/{}", invoice.id),
                "evidence": format!("/api/evidence/{}", invoice.id),
            },
        }),
    }
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
        at: store::now(),
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
    let Some(key) = request
        .idempotency_key
        .clone()
        .filter(|k| !k.trim().is_empty())
    else {
        return Problem::new(
            StatusCode::BAD_REQUEST,
            "idempotency-key-missing",
            "Idempotency-Key required",
            "a send request must carry an Idempotency-Key header (any unique string up to 255 \
             characters, e.g. a UUID); a retry with the same key never sends twice",
        )
        .into_response();
    };
    if key.len() > MAX_KEY_LEN {
        return Problem::invalid_field(
            "Idempotency-Key",
            format!(
                "the key is {} characters long; at most {MAX_KEY_LEN}",
                key.len()
            ),
        )
        .into_response();
    }
    let fingerprint = request_hash(&request);
    let claim = state
        .store
        .claim_idempotency_key(
            &principal.tenant_id,
            &key,
            &fingerprint,
            &offset(0),
            &offset(IDEMPOTENCY_KEY_HOURS * 3600),
            &offset(-ABANDONED_AFTER_SECS),
        )
        .await;
    match claim {
        Err(e) => Problem::from(e).into_response(),
        Ok(IdempotencyClaim::Mismatch) => Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "idempotency-key-reused",
            "Idempotency-Key reused with a different request",
            "this Idempotency-Key was already used for a different document or parameters; use a \
             new key for a new request",
        )
        .into_response(),
        Ok(IdempotencyClaim::Running) => Problem::conflict(
            "idempotency-request-in-progress",
            "a request with this Idempotency-Key is still being processed; retry shortly to get its answer",
        )
        .header(header::RETRY_AFTER, "1")
        .into_response(),
        Ok(IdempotencyClaim::Completed {
            status,
            content_type,
            body,
        }) => {
            let mut response = (
                StatusCode::from_u16(status).unwrap_or(StatusCode::OK),
                [(header::CONTENT_TYPE, content_type)],
                body,
            )
                .into_response();
            response
                .headers_mut()
                .insert("idempotent-replayed", HeaderValue::from_static("true"));
            response
        }
        Ok(IdempotencyClaim::New) => {
            let outcome = run(state, principal, request).await;
            finish(state, principal, &key, outcome).await
        }
    }
}

/// What running a send produced: a stored answer (replayed for the key) or a refusal
/// before anything was stored (the key is released so a corrected retry can run).
enum Outcome {
    Stored(StatusCode, String, String),
    Refused(Problem),
}

async fn finish(state: &AppState, principal: &Principal, key: &str, outcome: Outcome) -> Response {
    match outcome {
        Outcome::Stored(status, content_type, body) => {
            if let Err(e) = state
                .store
                .complete_idempotency_key(
                    &principal.tenant_id,
                    key,
                    status.as_u16(),
                    &content_type,
                    &body,
                )
                .await
            {
                tracing::error!(error = %e, "the answer of a send could not be kept for its idempotency key");
            }
            (status, [(header::CONTENT_TYPE, content_type)], body).into_response()
        }
        Outcome::Refused(problem) => {
            if let Err(e) = state
                .store
                .release_idempotency_key(&principal.tenant_id, key)
                .await
            {
                tracing::error!(error = %e, "an idempotency key could not be released");
            }
            problem.into_response()
        }
    }
}

fn request_hash(r: &SendRequest) -> String {
    let mut h = Sha256::new();
    for part in [
        "send",
        r.profile.as_deref().unwrap_or(""),
        r.scenario.as_deref().unwrap_or(""),
        r.resubmission_of.as_deref().unwrap_or(""),
    ] {
        h.update(part.as_bytes());
        h.update(b"\n");
    }
    h.update(&r.bytes);
    hex::encode(h.finalize())
}

async fn run(state: &AppState, principal: &Principal, request: SendRequest) -> Outcome {
    match try_run(state, principal, request).await {
        Ok(outcome) => outcome,
        Err(problem) => Outcome::Refused(problem),
    }
}

async fn try_run(
    state: &AppState,
    principal: &Principal,
    request: SendRequest,
) -> Result<Outcome, Problem> {
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
        return Err(Problem::conflict(
            "no-active-connection",
            "sending needs an activated connection to a delivery partner: create one with \
             POST /v1/connections and activate it with POST /v1/connections/{id}/activate",
        ));
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
    // A document a conversion produced goes out only when the review gate lets it: this
    // holds however it arrives (by conversion id or uploaded as XML).
    let conversion = state
        .store
        .conversion_by_xml(
            &principal.tenant_id,
            &hex::encode(Sha256::digest(&request.bytes)),
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
    let faults = identifiers::check(&request.bytes);
    if !faults.is_empty() {
        let list: Vec<String> = faults
            .iter()
            .map(|f| format!("{} ({}) `{}`", f.what, f.business_term, f.value))
            .collect();
        return Err(Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid-identifiers",
            "Identifiers in the document fail their checks",
            format!(
                "not accepted for sending: {}; correct them and send again",
                list.join(", ")
            ),
        )
        .with("identifiers", faults));
    }
    let validated = validation::validate(
        state,
        request.profile.clone(),
        request.file_name.clone(),
        request.bytes.clone(),
    )
    .await?;
    let result = &validated.result;
    state
        .store
        .insert_validations(vec![validation::record(principal, result)])
        .await?;
    let payload = String::from_utf8(request.bytes.to_vec())
        .map_err(|_| Problem::bad_request("the document is not UTF-8 text"))?;
    let identity = document::identity(&request.bytes);
    let report = &result.report;
    let id = store::new_id("inv");
    let fatal = report.counts.fatal;
    let summary = ValidationSummary {
        id: result.id.clone(),
        verdict: report.verdict.as_str().to_string(),
        profile: report.profile.clone(),
        rules_version: report.rules_version.clone(),
        fatal,
        warnings: report.counts.warning,
    };
    let now = store::now();
    let status = if fatal > 0 {
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
        buyer_endpoint: identity.buyer_endpoint,
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
    if fatal > 0 {
        let events = [
            received,
            timeline::own(
                "remediation_required",
                Status::RemediationRequired,
                format!(
                    "{fatal} fatal finding(s) against {}: not sent; fix the document and resubmit \
                     (a new send with resubmission_of={id})",
                    report.profile
                ),
                &id,
            ),
        ];
        let notices: Vec<_> = events
            .iter()
            .flat_map(|e| notices_for(&record, e))
            .collect();
        state
            .store
            .insert_invoice(&record, &events, None, &notices)
            .await?;
        let fatal_findings: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.severity == invex_engine::report::Severity::Fatal)
            .collect();
        let problem = Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "remediation-required",
            "The invoice has fatal findings and was not sent",
            format!(
                "{fatal} fatal finding(s); the invoice {id} is kept in the remediation flow: fix \
                 the document and send it again with resubmission_of={id}"
            ),
        )
        .with("invoice_id", &id)
        .with("invoice_status", Status::RemediationRequired)
        .with("findings", fatal_findings)
        .with("validation", &summary)
        .with("links", links(&id, &result.id));
        let body = serde_json::to_string(&problem.body()).unwrap_or_default();
        return Ok(Outcome::Stored(
            StatusCode::UNPROCESSABLE_ENTITY,
            "application/problem+json".to_string(),
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
    state
        .store
        .insert_invoice(&record, &events, Some(&store::now()), &[])
        .await?;
    state.outbox_wake.notify_one();
    if let Some(c) = &conversion {
        if let Err(e) = state
            .store
            .mark_conversion_sent(&principal.tenant_id, &c.id, &id, &store::now())
            .await
        {
            // The invoice is queued; only the conversion's back link is missing.
            tracing::error!(error = %e, conversion = %c.id, invoice = %id, "could not mark a conversion as sent");
        }
    }
    let accepted = SendAccepted {
        links: links(&id, &result.id),
        id,
        status,
        connection_id: connection.id,
        document_id: identity.document_id,
        validation: summary,
        environment: state.environment().to_string(),
    };
    Ok(Outcome::Stored(
        StatusCode::ACCEPTED,
        "application/json".to_string(),
        serde_json::to_string(&accepted).unwrap_or_default(),
    ))
}
