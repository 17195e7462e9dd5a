//! Webhook endpoints of the caller's tenant: register, list, change, delete, rotate the
//! secret, send a test event, read the delivery log and redeliver.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Principal;
use crate::problem::Problem;
use crate::routes::created::Created;
use crate::routes::page::{self, PageQuery};
use crate::state::AppState;
use crate::store::webhooks::{AttemptRecord, EndpointRecord};
use crate::webhooks::{self, signing, EventType};

/// How long a rotated-out secret keeps signing beside the new one.
pub use crate::webhooks::manage::ROTATION_OVERLAP_HOURS;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateWebhook {
    /// Where to POST events: `https://...` (`http://` only to loopback hosts in the sandbox,
    /// or when the server sets `webhooks.allow_http`), at a public host: loopback, private
    /// and other special-purpose addresses and internal names are refused, here and when
    /// the name is resolved at delivery.
    pub url: String,
    /// Event types to receive (at least one), e.g. `["invoice.delivered", "invoice.rejected"]`.
    #[schema(value_type = Vec<EventType>)]
    pub event_types: Vec<String>,
    /// What the endpoint is for (at most 200 characters).
    pub description: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateWebhook {
    pub url: Option<String>,
    #[schema(value_type = Option<Vec<EventType>>)]
    pub event_types: Option<Vec<String>>,
    /// `false` stops deliveries (pending ones are cancelled); `true` resumes new ones.
    pub enabled: Option<bool>,
    /// An empty string removes the description.
    pub description: Option<String>,
}

/// An endpoint as shown: never its secret.
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookView {
    /// `whe_...`
    pub id: String,
    pub url: String,
    pub description: Option<String>,
    #[schema(value_type = Vec<EventType>)]
    pub event_types: Vec<String>,
    pub enabled: bool,
    /// Why the server disabled the endpoint (e.g. its receiver answered 410 Gone).
    pub disabled_reason: Option<String>,
    /// Until when the secret before the last rotation still signs (beside the new one).
    pub previous_secret_expires_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<EndpointRecord> for WebhookView {
    fn from(r: EndpointRecord) -> WebhookView {
        let now = crate::clock::now();
        WebhookView {
            id: r.id,
            url: r.url,
            description: r.description,
            event_types: r.event_types,
            enabled: r.enabled,
            disabled_reason: r.disabled_reason,
            previous_secret_expires_at: r.previous_expires_at.filter(|t| *t > now),
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

/// An endpoint with its signing secret: shown only when created or rotated.
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookWithSecret {
    #[serde(flatten)]
    pub webhook: WebhookView,
    /// `whsec_` + base64 of 32 random bytes. Store it now: it is not shown again. Verify
    /// `webhook-signature` with it: `v1,` + base64 HMAC-SHA256(base64-decoded part after
    /// `whsec_`, `{webhook-id}.{webhook-timestamp}.{body}`).
    pub secret: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookList {
    /// Newest first.
    pub webhooks: Vec<WebhookView>,
    /// Pass as `before` for the next (older) page; absent on the last page.
    pub next: Option<String>,
}

/// A queued event (test event or redelivery).
#[derive(Debug, Serialize, ToSchema)]
pub struct Queued {
    /// The event id, sent as `webhook-id`.
    pub event_id: String,
    pub delivery_id: String,
}

/// One delivery attempt.
#[derive(Debug, Serialize, ToSchema)]
pub struct AttemptView {
    /// `wat_...`
    pub id: String,
    /// `dlv_...`: redeliver with `POST .../deliveries/{delivery_id}/redeliver`.
    pub delivery_id: String,
    /// The delivery now: `pending`, `delivered`, `failed` or `cancelled`.
    pub delivery_status: String,
    pub event_id: String,
    pub event_type: String,
    /// 1 for the first attempt of a delivery.
    pub attempt: i64,
    /// The receiver's HTTP status, when it answered.
    pub http_status: Option<i64>,
    /// Why no answer came (timeout, connection failed, ...).
    pub error: Option<String>,
    pub duration_ms: i64,
    pub correlation_id: Option<String>,
    pub attempted_at: String,
    /// When the delivery will be tried next (RFC 3339), while it is `pending`; null once
    /// it is delivered, failed or cancelled.
    pub next_attempt_at: Option<String>,
}

impl From<AttemptRecord> for AttemptView {
    fn from(a: AttemptRecord) -> AttemptView {
        AttemptView {
            id: a.id,
            delivery_id: a.delivery_id,
            delivery_status: a.delivery_status,
            event_id: a.event_id,
            event_type: a.event_type,
            attempt: a.attempt,
            http_status: a.http_status,
            error: a.error,
            duration_ms: a.duration_ms,
            correlation_id: a.correlation_id,
            attempted_at: a.attempted_at,
            next_attempt_at: a.next_attempt_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AttemptPage {
    /// Newest first.
    pub attempts: Vec<AttemptView>,
    /// Pass as `before` for the next (older) page; absent on the last page.
    pub next: Option<String>,
    /// The same as `next`, under its name before every list was paged alike.
    #[schema(deprecated)]
    pub next_cursor: Option<String>,
}

/// The delivery log's page: `before` and `limit` like every list, and the former name of
/// `before`, still read (`/v1` changes are additive).
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeliveryPageQuery {
    /// Only attempts older than this id: the `next` of the previous page.
    pub before: Option<String>,
    /// Page size, 1–200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<i64>,
    /// Deprecated: the former name of `before`.
    pub cursor: Option<String>,
}

fn check_url(state: &AppState, url: &str) -> Result<String, Problem> {
    let policy = webhooks::TargetPolicy::from_config(state.config.mode, &state.config.webhooks);
    policy.check_url(url).map_err(|e| {
        Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "webhook-url-not-allowed",
            "The webhook URL is not accepted",
            e.to_string(),
        )
        .with("field", "url")
    })
}

fn check_event_types(names: &[String]) -> Result<Vec<String>, Problem> {
    if names.is_empty() {
        return Err(Problem::invalid_field(
            "event_types",
            "`event_types` must name at least one event type",
        ));
    }
    let unknown: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| EventType::parse(n).is_none())
        .collect();
    if !unknown.is_empty() {
        return Err(Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "unknown-event-type",
            "Unknown event type",
            format!("unknown event types: {}", unknown.join(", ")),
        )
        .with("field", "event_types")
        .with("unknown", &unknown)
        .with("known_event_types", EventType::names()));
    }
    // Stored in the canonical order, once each.
    Ok(EventType::ALL
        .into_iter()
        .map(EventType::as_str)
        .filter(|t| names.iter().any(|n| n == t))
        .map(str::to_string)
        .collect())
}

fn check_description(d: Option<String>) -> Result<Option<String>, Problem> {
    let d = d.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    if d.as_ref().is_some_and(|s| s.chars().count() > 200) {
        return Err(Problem::invalid_field(
            "description",
            "`description` must be at most 200 characters",
        ));
    }
    Ok(d)
}

async fn find(
    state: &AppState,
    principal: &Principal,
    id: &str,
) -> Result<EndpointRecord, Problem> {
    state
        .store
        .webhook_endpoint(&principal.tenant_id, id)
        .await?
        .ok_or_else(|| Problem::not_found(format!("no webhook endpoint `{id}` in this tenant")))
}

fn disabled(id: &str) -> Problem {
    Problem::conflict(
        "webhook-disabled",
        format!("webhook endpoint `{id}` is disabled; enable it with PATCH first"),
    )
}

fn no_delivery(id: &str, delivery_id: &str) -> Problem {
    Problem::not_found(format!(
        "no delivery `{delivery_id}` of webhook endpoint `{id}`"
    ))
}

fn correlation_id() -> Option<String> {
    crate::context::current().map(|c| c.id)
}

#[utoipa::path(post, path = "/v1/webhooks", tag = "webhooks", operation_id = "create_webhook",
    request_body = CreateWebhook,
    responses((status = 201, description = "The endpoint and its secret, shown once", body = WebhookWithSecret),
              (status = 409, description = "The tenant has as many endpoints as the server allows", body = crate::problem::ProblemBody),
              (status = 422, description = "URL not accepted, unknown or no event types", body = crate::problem::ProblemBody)))]
pub async fn create(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Json(body): Json<CreateWebhook>,
) -> Result<Created<WebhookWithSecret>, Problem> {
    let url = check_url(&state, &body.url)?;
    let event_types = check_event_types(&body.event_types)?;
    let description = check_description(body.description)?;
    let now = crate::clock::now();
    let record = EndpointRecord {
        id: crate::ids::new_id("whe"),
        tenant_id: principal.tenant_id.clone(),
        url,
        description,
        event_types,
        enabled: true,
        disabled_reason: None,
        secret: signing::generate_secret(),
        previous_secret: None,
        previous_expires_at: None,
        created_at: now.clone(),
        updated_at: now,
    };
    let cap = state.config.webhooks.max_endpoints_per_tenant;
    if !state.store.insert_webhook_endpoint(&record, cap).await? {
        return Err(Problem::new(
            StatusCode::CONFLICT,
            "webhook-endpoint-limit",
            "Too many webhook endpoints",
            format!(
                "this tenant has {cap} webhook endpoints, the most the server allows; \
                 delete one (or send several event types to one endpoint) first"
            ),
        )
        .with("limit", "max_endpoints_per_tenant")
        .with("limit_value", cap));
    }
    tracing::info!(webhook_id = %record.id, "webhook endpoint created");
    let secret = record.secret.clone();
    Ok(Created::at(
        format!("/v1/webhooks/{}", record.id),
        WebhookWithSecret {
            webhook: record.into(),
            secret,
        },
    ))
}

#[utoipa::path(get, path = "/v1/webhooks", tag = "webhooks", operation_id = "list_webhooks",
    params(PageQuery),
    responses((status = 200, description = "The tenant's endpoints, newest first (no secrets)", body = WebhookList)))]
pub async fn list(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Query(query): Query<PageQuery>,
) -> Result<Json<WebhookList>, Problem> {
    let size = query.size()?;
    let rows = state
        .store
        .webhook_endpoints(&principal.tenant_id, query.before.as_deref(), size + 1)
        .await?;
    let (list, next) = page::cut(rows, size, |e| &e.id);
    Ok(Json(WebhookList {
        webhooks: list.into_iter().map(WebhookView::from).collect(),
        next,
    }))
}

#[utoipa::path(get, path = "/v1/webhooks/{id}", tag = "webhooks", operation_id = "get_webhook",
    params(("id" = String, Path, description = "Endpoint id (`whe_...`)")),
    responses((status = 200, description = "The endpoint (no secret)", body = WebhookView),
              (status = 404, description = "No such endpoint in this tenant", body = crate::problem::ProblemBody)))]
pub async fn get_one(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<WebhookView>, Problem> {
    Ok(Json(find(&state, &principal, &id).await?.into()))
}

#[utoipa::path(patch, path = "/v1/webhooks/{id}", tag = "webhooks", operation_id = "update_webhook",
    params(("id" = String, Path, description = "Endpoint id (`whe_...`)")),
    request_body = UpdateWebhook,
    responses((status = 200, description = "The endpoint as changed", body = WebhookView),
              (status = 404, description = "No such endpoint in this tenant", body = crate::problem::ProblemBody),
              (status = 422, description = "URL not accepted, unknown or no event types", body = crate::problem::ProblemBody)))]
pub async fn update(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    Json(body): Json<UpdateWebhook>,
) -> Result<Json<WebhookView>, Problem> {
    let mut record = find(&state, &principal, &id).await?;
    if let Some(url) = body.url {
        record.url = check_url(&state, &url)?;
    }
    if let Some(types) = body.event_types {
        record.event_types = check_event_types(&types)?;
    }
    if body.description.is_some() {
        record.description = check_description(body.description)?;
    }
    if let Some(enabled) = body.enabled {
        if enabled && !record.enabled {
            record.disabled_reason = None;
        }
        if !enabled && record.enabled {
            record.disabled_reason = Some("disabled through the API".into());
        }
        record.enabled = enabled;
    }
    record.updated_at = crate::clock::now();
    state.store.update_webhook_endpoint(&record).await?;
    Ok(Json(record.into()))
}

#[utoipa::path(delete, path = "/v1/webhooks/{id}", tag = "webhooks", operation_id = "delete_webhook",
    params(("id" = String, Path, description = "Endpoint id (`whe_...`)")),
    responses((status = 204, description = "Deleted, with its pending deliveries and its log"),
              (status = 404, description = "No such endpoint in this tenant", body = crate::problem::ProblemBody)))]
pub async fn remove(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<StatusCode, Problem> {
    if state
        .store
        .delete_webhook_endpoint(&principal.tenant_id, &id)
        .await?
    {
        tracing::info!(webhook_id = %id, "webhook endpoint deleted");
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(Problem::not_found(format!(
            "no webhook endpoint `{id}` in this tenant"
        )))
    }
}

#[utoipa::path(post, path = "/v1/webhooks/{id}/rotate-secret", tag = "webhooks", operation_id = "rotate_webhook_secret",
    params(("id" = String, Path, description = "Endpoint id (`whe_...`)")),
    responses((status = 200, description = "The new secret, shown once. For 24 hours the old secret signs too: \
`webhook-signature` carries both signatures, space-separated", body = WebhookWithSecret),
              (status = 404, description = "No such endpoint in this tenant", body = crate::problem::ProblemBody)))]
pub async fn rotate_secret(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<WebhookWithSecret>, Problem> {
    let record = find(&state, &principal, &id).await?;
    let record = webhooks::manage::rotate_secret(&state.store, record).await?;
    let secret = record.secret.clone();
    Ok(Json(WebhookWithSecret {
        webhook: record.into(),
        secret,
    }))
}

#[utoipa::path(post, path = "/v1/webhooks/{id}/test", tag = "webhooks", operation_id = "test_webhook",
    params(("id" = String, Path, description = "Endpoint id (`whe_...`)")),
    responses((status = 202, description = "A `webhook.test` event is queued to this endpoint", body = Queued),
              (status = 404, description = "No such endpoint in this tenant", body = crate::problem::ProblemBody),
              (status = 409, description = "The endpoint is disabled", body = crate::problem::ProblemBody)))]
pub async fn test(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<Queued>), Problem> {
    let record = find(&state, &principal, &id).await?;
    if !record.enabled {
        return Err(disabled(&id));
    }
    let queued = webhooks::manage::send_test(
        &state.store,
        &principal.tenant_id,
        &id,
        state.environment(),
        correlation_id().as_deref(),
    )
    .await?
    // Disabled (or deleted) since it was read: nothing was queued, and nothing kept.
    .ok_or_else(|| disabled(&id))?;
    Ok((
        StatusCode::ACCEPTED,
        Json(Queued {
            event_id: queued.event_id,
            delivery_id: queued.delivery_id,
        }),
    ))
}

#[utoipa::path(get, path = "/v1/webhooks/{id}/deliveries", tag = "webhooks", operation_id = "list_webhook_deliveries",
    params(("id" = String, Path, description = "Endpoint id (`whe_...`)"), DeliveryPageQuery),
    responses((status = 200, description = "Delivery attempts, newest first", body = AttemptPage),
              (status = 404, description = "No such endpoint in this tenant", body = crate::problem::ProblemBody)))]
pub async fn deliveries(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    Query(query): Query<DeliveryPageQuery>,
) -> Result<Json<AttemptPage>, Problem> {
    find(&state, &principal, &id).await?;
    let size = page::size(query.limit)?;
    let before = query.before.as_deref().or(query.cursor.as_deref());
    let rows = state
        .store
        .webhook_attempts(&principal.tenant_id, &id, before, size + 1)
        .await?;
    let (rows, next) = page::cut(rows, size, |r| &r.id);
    Ok(Json(AttemptPage {
        attempts: rows.into_iter().map(AttemptView::from).collect(),
        next_cursor: next.clone(),
        next,
    }))
}

#[utoipa::path(post, path = "/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver", tag = "webhooks", operation_id = "redeliver_webhook_delivery",
    params(("id" = String, Path, description = "Endpoint id (`whe_...`)"),
           ("delivery_id" = String, Path, description = "Delivery id (`dlv_...`)")),
    responses((status = 202, description = "The same event (same `webhook-id`) is queued again as a new delivery", body = Queued),
              (status = 404, description = "No such endpoint or delivery in this tenant", body = crate::problem::ProblemBody),
              (status = 409, description = "The endpoint is disabled", body = crate::problem::ProblemBody)))]
pub async fn redeliver(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path((id, delivery_id)): Path<(String, String)>,
) -> Result<(StatusCode, Json<Queued>), Problem> {
    let record = find(&state, &principal, &id).await?;
    if !record.enabled {
        // An unknown delivery is still not found, before the endpoint's state matters.
        if state
            .store
            .webhook_delivery_event(&principal.tenant_id, &id, &delivery_id)
            .await?
            .is_none()
        {
            return Err(no_delivery(&id, &delivery_id));
        }
        return Err(disabled(&id));
    }
    let queued = webhooks::manage::redeliver(&state.store, &principal.tenant_id, &id, &delivery_id)
        .await?
        .ok_or_else(|| no_delivery(&id, &delivery_id))?;
    Ok((
        StatusCode::ACCEPTED,
        Json(Queued {
            event_id: queued.event_id,
            delivery_id: queued.delivery_id,
        }),
    ))
}
