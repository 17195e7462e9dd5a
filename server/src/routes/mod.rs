//! The route table: every endpoint with its method, path and who may call it. The router,
//! the authentication layers, the OpenAPI permission notes and the role-matrix tests are
//! all built from this one list.

pub mod admit;
pub mod batches;
pub mod company;
pub mod console;
pub mod convert;
pub mod created;
pub mod form;
pub mod health;
pub mod invoice_json;
pub mod keys;
pub mod page;
pub mod peppol;
pub mod rulepacks;
pub mod rules;
pub mod sandbox;
pub mod sending;
pub mod sftp;
pub mod tenants;
pub mod usage;
pub mod validate;
pub mod vat;
pub mod webhooks;

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderValue, Method};
use axum::middleware::{from_fn_with_state, map_response};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, delete, get, patch, post, MethodRouter};
use axum::Router;
use tower_http::catch_panic::CatchPanicLayer;

use crate::auth::roles::allow;
use crate::auth::{self, Access, Family, Gate};
use crate::context;
use crate::problem::Problem;
use crate::settings::Mode;
use crate::state::AppState;

/// One endpoint: method, path (axum syntax) and access.
#[derive(Clone, Debug)]
pub struct Endpoint {
    pub method: Method,
    pub path: &'static str,
    pub access: Access,
}

impl Endpoint {
    pub fn family(&self) -> Option<Family> {
        family_of(self.path)
    }
}

fn family_of(path: &str) -> Option<Family> {
    if path.starts_with("/api/") {
        Some(Family::Api)
    } else if path.starts_with("/v1/") || path.starts_with("/v2/") {
        Some(Family::Versioned)
    } else {
        None
    }
}

fn routes() -> Vec<(Endpoint, MethodRouter<AppState>)> {
    use Access::{Public, Roles, SandboxOpen};
    let e = |method: Method, path: &'static str, access: Access| Endpoint {
        method,
        path,
        access,
    };
    vec![
        (e(Method::GET, "/health", Public), get(health::health)),
        (e(Method::GET, "/ready", Public), get(health::ready)),
        (e(Method::GET, "/metrics", Public), get(health::metrics)),
        (
            e(Method::POST, "/api/validate", Roles(allow::INVOICE_WORK)),
            post(validate::validate_api),
        ),
        (
            e(
                Method::POST,
                "/v1/invoice/validate",
                Roles(allow::INVOICE_WORK),
            ),
            post(validate::validate_v1),
        ),
        (
            e(Method::POST, "/v1/invoice/json", Roles(allow::INVOICE_WORK)),
            post(invoice_json::to_json),
        ),
        (
            e(Method::GET, "/v1/schemas/invoice.json", Public),
            get(invoice_json::schema),
        ),
        (
            e(Method::POST, "/v1/sftp/accounts", Roles(allow::INTEGRATION)),
            post(sftp::create),
        ),
        (
            e(Method::GET, "/v1/sftp/accounts", Roles(allow::INTEGRATION)),
            get(sftp::list),
        ),
        (
            e(
                Method::GET,
                "/v1/sftp/accounts/{id}",
                Roles(allow::INTEGRATION),
            ),
            get(sftp::get_one),
        ),
        (
            e(
                Method::DELETE,
                "/v1/sftp/accounts/{id}",
                Roles(allow::INTEGRATION),
            ),
            delete(sftp::revoke),
        ),
        (
            e(Method::GET, "/v1/validations", Roles(allow::READ)),
            get(validate::list_validations),
        ),
        (
            e(Method::GET, "/v1/validations/{id}", Roles(allow::READ)),
            get(validate::get_validation),
        ),
        (
            e(
                Method::POST,
                "/v1/invoice/convert",
                Roles(allow::INVOICE_WORK),
            ),
            post(convert::convert_v1),
        ),
        (
            e(Method::POST, "/api/convert", Roles(allow::INVOICE_WORK)),
            post(convert::convert_api),
        ),
        (
            e(
                Method::GET,
                "/v1/invoice/convert/template.csv",
                Roles(allow::READ),
            ),
            get(convert::template_csv),
        ),
        (
            e(
                Method::GET,
                "/v1/invoice/convert/template.xlsx",
                Roles(allow::READ),
            ),
            get(convert::template_xlsx),
        ),
        (
            e(
                Method::GET,
                "/v1/invoice/convert/mappings",
                Roles(allow::READ),
            ),
            get(convert::mappings),
        ),
        (
            e(Method::GET, "/v1/conversions", Roles(allow::READ)),
            get(convert::list),
        ),
        (
            e(Method::GET, "/v1/conversions/{id}", Roles(allow::READ)),
            get(convert::get_one),
        ),
        (
            e(Method::PATCH, "/v1/conversions/{id}", Roles(allow::REVIEW)),
            patch(convert::correct),
        ),
        (
            e(Method::GET, "/v1/conversions/{id}/xml", Roles(allow::READ)),
            get(convert::xml),
        ),
        (
            e(
                Method::POST,
                "/v1/conversions/{id}/approve",
                Roles(allow::REVIEW),
            ),
            post(convert::approve),
        ),
        (
            e(
                Method::POST,
                "/v1/conversions/{id}/reject",
                Roles(allow::REVIEW),
            ),
            post(convert::reject),
        ),
        (
            e(Method::GET, "/v1/vat/verify", SandboxOpen(allow::READ)),
            get(vat::verify),
        ),
        (
            e(Method::POST, "/v1/vat/verify", SandboxOpen(allow::READ)),
            post(vat::verify_batch),
        ),
        (
            e(Method::GET, "/v1/usage", Roles(allow::READ)),
            get(usage::usage),
        ),
        (
            e(
                Method::GET,
                "/v1/company/sk/{ico}",
                SandboxOpen(allow::READ),
            ),
            get(company::lookup),
        ),
        (
            e(Method::GET, "/v1/peppol/lookup", SandboxOpen(allow::READ)),
            get(peppol::lookup_v1),
        ),
        (
            e(
                Method::GET,
                "/api/peppol-lookup/{participantId}",
                Roles(allow::READ),
            ),
            get(peppol::lookup_api),
        ),
        (
            e(Method::POST, "/v1/connections", Roles(allow::ADMIN)),
            post(sending::create_connection),
        ),
        (
            e(Method::GET, "/v1/connections", Roles(allow::READ)),
            get(sending::list_connections),
        ),
        (
            e(Method::GET, "/v1/connections/{id}", Roles(allow::READ)),
            get(sending::get_connection),
        ),
        (
            e(
                Method::POST,
                "/v1/connections/{id}/activate",
                Roles(allow::ADMIN),
            ),
            post(sending::activate_connection),
        ),
        (
            e(Method::POST, "/v1/invoice/send", Roles(allow::INVOICE_WORK)),
            post(sending::send_v1),
        ),
        (
            e(Method::POST, "/api/send", Roles(allow::INVOICE_WORK)),
            post(sending::send_api),
        ),
        (
            e(Method::GET, "/v1/sandbox", SandboxOpen(allow::READ)),
            get(sandbox::catalogue),
        ),
        (
            e(Method::GET, "/v1/invoices", Roles(allow::READ)),
            get(sending::list_invoices),
        ),
        (
            e(Method::GET, "/v1/invoices/{id}", Roles(allow::READ)),
            get(sending::get_invoice),
        ),
        (
            e(
                Method::GET,
                "/v1/invoices/{id}/messages",
                Roles(allow::READ),
            ),
            get(sending::messages_v1),
        ),
        (
            e(
                Method::GET,
                "/v1/invoices/{id}/evidence",
                Roles(allow::AUDIT),
            ),
            get(sending::evidence_v1),
        ),
        (
            e(
                Method::GET,
                "/v1/invoices/{id}/artifacts/{kind}",
                Roles(allow::READ),
            ),
            get(sending::artifact),
        ),
        (
            e(Method::GET, "/api/messages/{invoiceId}", Roles(allow::READ)),
            get(sending::messages),
        ),
        (
            e(
                Method::POST,
                "/v1/invoices/{id}/archive",
                Roles(allow::INVOICE_WORK),
            ),
            post(sending::archive_invoice),
        ),
        (
            e(Method::POST, "/v1/partner/callbacks/{connection}", Public),
            post(sending::partner_callback),
        ),
        (
            e(
                Method::GET,
                "/api/evidence/{invoiceId}",
                Roles(allow::AUDIT),
            ),
            get(sending::evidence),
        ),
        (
            e(Method::POST, "/v1/batches", Roles(allow::INVOICE_WORK)),
            post(batches::submit_v1),
        ),
        (
            e(Method::POST, "/api/batches", Roles(allow::INVOICE_WORK)),
            post(batches::submit_api),
        ),
        (
            e(Method::GET, "/v1/batches/{id}", Roles(allow::READ)),
            get(batches::get_v1),
        ),
        (
            e(Method::GET, "/api/batches/{id}", Roles(allow::READ)),
            get(batches::get_api),
        ),
        (
            e(
                Method::GET,
                "/v1/batches/{id}/documents",
                Roles(allow::READ),
            ),
            get(batches::documents),
        ),
        (
            e(
                Method::GET,
                "/v1/batches/{id}/documents/{seq}",
                Roles(allow::READ),
            ),
            get(batches::document_one),
        ),
        (
            e(Method::GET, "/v1/batches/{id}/results", Roles(allow::READ)),
            get(batches::results),
        ),
        (
            e(Method::GET, "/v1/rulepacks", Roles(allow::READ)),
            get(rulepacks::list),
        ),
        (
            e(Method::POST, "/v1/rulepacks/reload", Roles(allow::ADMIN)),
            post(rulepacks::reload),
        ),
        (
            e(Method::GET, "/v1/rules", Roles(allow::READ)),
            get(rules::list),
        ),
        (
            e(Method::GET, "/v1/rules/profiles", Roles(allow::READ)),
            get(rules::profiles),
        ),
        (
            e(Method::GET, "/v1/rules/{id}", Roles(allow::READ)),
            get(rules::get_one),
        ),
        (
            e(Method::POST, "/v1/keys", Roles(allow::ADMIN)),
            post(keys::create),
        ),
        (
            e(Method::GET, "/v1/keys", Roles(allow::ADMIN)),
            get(keys::list),
        ),
        (
            e(Method::GET, "/v1/keys/{id}", Roles(allow::ADMIN)),
            get(keys::get_one),
        ),
        (
            e(Method::DELETE, "/v1/keys/{id}", Roles(allow::ADMIN)),
            delete(keys::revoke),
        ),
        (
            e(Method::POST, "/v1/tenants", Roles(allow::ADMIN)),
            post(tenants::create),
        ),
        (
            e(Method::GET, "/v1/tenants", Roles(allow::ADMIN)),
            get(tenants::list),
        ),
        (
            e(Method::GET, "/v1/tenants/{id}", Roles(allow::ADMIN)),
            get(tenants::get_one),
        ),
        (
            e(Method::POST, "/v1/webhooks", Roles(allow::INTEGRATION)),
            post(webhooks::create),
        ),
        (
            e(Method::GET, "/v1/webhooks", Roles(allow::INTEGRATION)),
            get(webhooks::list),
        ),
        (
            e(Method::GET, "/v1/webhooks/{id}", Roles(allow::INTEGRATION)),
            get(webhooks::get_one),
        ),
        (
            e(
                Method::PATCH,
                "/v1/webhooks/{id}",
                Roles(allow::INTEGRATION),
            ),
            patch(webhooks::update),
        ),
        (
            e(
                Method::DELETE,
                "/v1/webhooks/{id}",
                Roles(allow::INTEGRATION),
            ),
            delete(webhooks::remove),
        ),
        (
            e(
                Method::POST,
                "/v1/webhooks/{id}/rotate-secret",
                Roles(allow::INTEGRATION),
            ),
            post(webhooks::rotate_secret),
        ),
        (
            e(
                Method::POST,
                "/v1/webhooks/{id}/test",
                Roles(allow::INTEGRATION),
            ),
            post(webhooks::test),
        ),
        (
            e(
                Method::GET,
                "/v1/webhooks/{id}/deliveries",
                Roles(allow::INTEGRATION),
            ),
            get(webhooks::deliveries),
        ),
        (
            e(
                Method::POST,
                "/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver",
                Roles(allow::INTEGRATION),
            ),
            post(webhooks::redeliver),
        ),
    ]
}

/// Every endpoint (the `/v1` ones also answer under `/v2` in the sandbox).
pub fn table() -> Vec<Endpoint> {
    routes().into_iter().map(|(e, _)| e).collect()
}

/// The application: every route, its authentication, limits and the request context.
pub fn router(state: AppState) -> Router {
    let sandbox = state.config.mode == Mode::Sandbox;
    let mut router = Router::new();
    for (endpoint, handler) in routes() {
        if sandbox && endpoint.path.starts_with("/v1/") {
            let path = format!("/v2{}", &endpoint.path[3..]);
            let beta =
                guarded(&state, &endpoint, &path, handler.clone()).layer(map_response(mark_beta));
            router = router.route(&path, beta);
        }
        let path = endpoint.path;
        router = router.route(path, guarded(&state, &endpoint, path, handler));
    }
    if !sandbox {
        router = router
            .route("/v2", any(v2_not_here))
            .route("/v2/{*rest}", any(v2_not_here));
    }
    let router = router
        .merge(crate::openapi::routes(&state))
        .merge(console::routes(&state))
        .fallback(not_found);
    // In production over HTTPS (served here, or by the proxy in front of the public
    // address), browsers are told to use nothing else, for the API as for the console.
    let https = state.config.tls.is_some()
        || state
            .config
            .public_base()
            .is_some_and(|u| u.starts_with("https://"));
    let router = if https && state.config.mode == crate::settings::Mode::Production {
        router.layer(map_response(strict_transport))
    } else {
        router
    };
    router
        .layer(DefaultBodyLimit::max(state.config.limits.max_body_bytes))
        .layer(CatchPanicLayer::custom(panic_problem))
        .layer(from_fn_with_state(state.clone(), context::observe))
        .with_state(state)
}

/// `Strict-Transport-Security` on every answer (one year, subdomains too).
async fn strict_transport(mut response: axum::response::Response) -> axum::response::Response {
    response
        .headers_mut()
        .entry(axum::http::header::STRICT_TRANSPORT_SECURITY)
        .or_insert(axum::http::HeaderValue::from_static(
            "max-age=31536000; includeSubDomains",
        ));
    response
}

/// The handler behind its authentication layer (public routes have none).
fn guarded(
    state: &AppState,
    endpoint: &Endpoint,
    path: &str,
    handler: MethodRouter<AppState>,
) -> MethodRouter<AppState> {
    let Some(family) = family_of(path) else {
        return handler;
    };
    // Public routes in a family authenticate themselves (partner callbacks: signatures).
    if matches!(endpoint.access, Access::Public) {
        return handler;
    }
    let gate = Gate {
        state: state.clone(),
        family,
        access: endpoint.access,
        method: endpoint.method.clone(),
        path: Arc::from(path),
    };
    handler.route_layer(from_fn_with_state(gate, auth::authenticate))
}

async fn mark_beta(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert("invex-api-stability", HeaderValue::from_static("beta"));
    response
}

async fn v2_not_here() -> Problem {
    Problem::new(
        axum::http::StatusCode::NOT_FOUND,
        "v2-sandbox-only",
        "API v2 is a sandbox beta",
        "the /v2 routes are in beta and answer only in the sandbox; use /v1 in production",
    )
}

async fn not_found(method: Method, uri: axum::http::Uri) -> Problem {
    Problem::not_found(format!("no route {method} {}", uri.path()))
}

fn panic_problem(_panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    tracing::error!("a request handler panicked");
    Problem::internal("the request failed inside the server; it has been logged").into_response()
}
