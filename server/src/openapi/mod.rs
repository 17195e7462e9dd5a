//! The OpenAPI 3.1 description, generated from the handlers (utoipa), with the permission
//! matrix and the security scheme of each operation taken from the route table, the error
//! answers every operation can give (`responses`), and the webhook events (`webhooks`).

mod events;
mod examples;
mod forms;
mod responses;

use axum::http::header;
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use serde_json::{json, Value};
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::SecurityRequirement;
use utoipa::OpenApi;
use utoipa_swagger_ui::SwaggerUi;

use crate::auth::{Access, Family};
use crate::limits::Limits;
use crate::routes::{
    self, batches, company, convert, health, invoice_json, keys, peppol, rulepacks, rules, sending,
    sftp, tenants, usage, validate, vat, webhooks,
};
use crate::state::AppState;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "invex",
        description = "Verification and exchange of e-invoices (EN 16931, Peppol BIS Billing 3.0, Slovak national rules).\n\n\
Two route families: `/api/*` takes `Authorization: Bearer <key>`, `/v1/*` takes `X-API-Key: <key>`. \
`/v2/*` mirrors `/v1/*` as a beta in the sandbox only (answers carry `Invex-Api-Stability: beta`); in production it answers 404.\n\n\
Every error is an RFC 9457 `application/problem+json` document whose `type` links to its entry in docs/problems.md. \
Every answer carries `X-Request-Id` (sent by the client or generated). Sandbox answers carry `Invex-Environment: sandbox` \
and results say `\"environment\": \"sandbox\"`: they are never production results.\n\n\
Each operation lists the roles that may call it in `x-invex-roles` (admin, accountant, developer, auditor).\n\n\
The interface control document (channels, limits, what to retry with which key after which answer, the outcome events): \
<https://github.com/invex/invex/blob/main/docs/integration.md>."
    ),
    paths(
        health::health, health::ready, health::metrics,
        validate::validate_api, validate::validate_v1, validate::get_validation, validate::list_validations,
        invoice_json::schema, invoice_json::to_json,
        vat::verify, vat::verify_batch,
        company::lookup,
        peppol::lookup_v1, peppol::lookup_api,
        usage::usage, routes::sandbox::catalogue,
        convert::convert_v1, convert::convert_api, convert::template_csv, convert::template_xlsx, convert::mappings,
        convert::list, convert::get_one, convert::xml, convert::correct, convert::approve, convert::reject,
        sending::create_connection, sending::list_connections, sending::get_connection, sending::activate_connection,
        sending::send_v1, sending::send_api, sending::list_invoices, sending::get_invoice, sending::messages, sending::messages_v1, sending::evidence, sending::evidence_v1, sending::partner_callback, sending::archive_invoice, sending::artifact,
        rulepacks::list, rulepacks::reload, rules::list, rules::profiles, rules::get_one,
        keys::create, keys::list, keys::get_one, keys::revoke,
        tenants::create, tenants::list, tenants::get_one,
        webhooks::create, webhooks::list, webhooks::get_one, webhooks::update, webhooks::remove,
        webhooks::rotate_secret, webhooks::test, webhooks::deliveries, webhooks::redeliver,
        batches::submit_v1, batches::submit_api, batches::get_v1, batches::get_api, batches::documents,
        batches::document_one, batches::results,
        sftp::create, sftp::list, sftp::get_one, sftp::revoke,
    ),
    components(schemas(crate::problem::ProblemBody, crate::sending::states::Status, crate::batches::Mode)),
    tags(
        (name = "validation", description = "Validate UBL invoices and credit notes; results are stored"),
        (name = "lookups", description = "VAT numbers, Peppol participants and Slovak company data"),
        (name = "rulepacks", description = "Rule packs and profiles in force"),
        (name = "keys", description = "API keys of the caller's tenant"),
        (name = "sending", description = "Connections to delivery partners, idempotent validate-first sending, invoices and their message timelines. \
Invoice statuses: received → validated → queued → sending → transmitted → delivered (MLS AB: not business acceptance) → in_process / under_query / conditionally_accepted / accepted → paid; \
rejected and failed end a delivery; remediation_required (fatal findings: stored, not sent); archived closes an invoice. Illegal transitions are refused. \
Idempotency keys are kept 24 hours."),
        (name = "conversion", description = "PDF, Excel and CSV invoices converted into Peppol BIS 3.0 UBL. Every extracted value has a confidence (0–1) and a source (cell, PDF page and method, default, computed, reviewer). \
The review gate holds a conversion (`needs_review`) when a field is under the confidence threshold (INVEX_CONVERT_CONFIDENCE_THRESHOLD, default 0.8), a fatal finding, a failed cross-check or a failed identifier check (IČO, DIČ, IČ DPH, IBAN, Peppol id) remains; \
otherwise it is `ready`. Reviewers (admin, accountant) correct fields (the XML is regenerated and revalidated), approve (key, time and corrections are recorded and travel into the evidence package) or reject. \
Statuses: ready | needs_review → approved | rejected; ready | approved → sent. Sending refuses (409) any document of a conversion that needs review and is not approved."),
        (name = "account", description = "Metered usage and its price"),
        (name = "tenants", description = "Tenants (operator admins)"),
        (name = "webhooks", description = "Webhook endpoints (Standard Webhooks). Each event is POSTed as JSON `{\"type\": \"invoice.delivered\", \"timestamp\": \"<RFC 3339>\", \"data\": {...}}` with headers `webhook-id` (the event id, the same on every retry: deduplicate on it), `webhook-timestamp` (unix seconds of the attempt), `webhook-signature` (`v1,<base64 HMAC-SHA256>` of `{webhook-id}.{webhook-timestamp}.{body}` keyed with the base64-decoded part of the secret after `whsec_`; space-separated signatures during a secret rotation's 24 hours) and `invex-correlation-id`. Event types: `invoice.delivered` (transport confirmed delivery), `invoice.rejected` (transport or business rejection), `invoice.attention_needed` (conditional acceptance, timeout, workflow conflict), `invoice.archived` (closed, evidence package ready), `invoice.artifacts_ready` (final XML and PDF ready), `invoice.remediation_required` (correct and resubmit), `invoice.failed`, `webhook.test`, `batch.remediation_required` (a document of a batch to correct), `batch.completed` (every document of a batch has its outcome). A 2xx answer delivers; 410 disables the endpoint; anything else (or no answer within the timeout, 10 s by default) is retried with ±20 % jitter after about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, then the delivery fails. At-least-once; per endpoint, first attempts follow event order, retries may overtake. Every attempt is in the delivery log."),
        (name = "batches", description = "Large uploads: a ZIP of documents (up to `batches.max_documents`, 100,000 by default) stored as it arrives and answered at once (202), then split and processed in the background by workers of any instance (claims with leases: a crash resumes, nothing is done twice). \
Progress (counts by outcome, rate, estimated finish), the documents page by page, every result as NDJSON. Events: `batch.remediation_required` for each document to correct, `batch.completed` at the end. Mode `validate`: each document validated as by `POST /v1/invoice/validate`; `convert`: converted as by `POST /v1/invoice/convert`, review gate included; `send`: sent as by `POST /v1/invoice/send`, once the identifiers of every document have passed their checks (else the batch is `refused` and nothing is sent). The interface control document, docs/integration.md, has the channels, mappings, limits and retry rules."),
        (name = "operations", description = "Health, readiness, metrics"),
    )
)]
struct ApiDoc;

/// The description, with limits, security, roles, error answers, servers and webhooks
/// filled in.
pub fn document(limits: &Limits) -> Value {
    let mut doc = ApiDoc::openapi();
    let components = doc.components.get_or_insert_with(Default::default);
    components.add_security_scheme(
        "bearer",
        SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
    );
    components.add_security_scheme(
        "api_key",
        SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new("X-API-Key"))),
    );
    if let Some(description) = doc.info.description.as_mut() {
        description.push_str(&format!(
            "\n\nLimits: request body {} bytes (`max_body_bytes`), {} files per request (`max_files`), \
XML nesting depth {} (`max_xml_depth`), {} requests per second per key with bursts of {} \
(429 with `Retry-After` beyond), {} failed authentications per minute per client address and \
per key prefix (`auth_failures_per_minute`; 429 `too-many-failed-authentications` beyond), \
{} VAT numbers per batch verification (`vat_batch_size`).\n\n\
VAT verification is metered per tenant and calendar month (UTC): every number answered \
(including numbers rejected by the local checks; not answers of `unavailable`) is one call; \
the first {} calls are free, then {} EUR each (`GET /v1/usage`).",
            limits.max_body_bytes,
            limits.max_files,
            limits.max_xml_depth,
            limits.rate_per_second,
            limits.rate_burst,
            limits.auth_failures_per_minute,
            routes::vat::MAX_BATCH,
            crate::usage::VAT_FREE_CALLS,
            crate::usage::vat_unit_price_eur(),
        ));
    }
    for endpoint in routes::table() {
        let Some(item) = doc.paths.paths.get_mut(endpoint.path) else {
            continue;
        };
        let operation = match endpoint.method.as_str() {
            "GET" => item.get.as_mut(),
            "POST" => item.post.as_mut(),
            "DELETE" => item.delete.as_mut(),
            "PUT" => item.put.as_mut(),
            "PATCH" => item.patch.as_mut(),
            _ => None,
        };
        let Some(operation) = operation else { continue };
        let roles: Vec<&str> = endpoint.access.roles().iter().map(|r| r.as_str()).collect();
        let scheme = match endpoint.family() {
            Some(Family::Api) => Some("bearer"),
            Some(Family::Versioned) => Some("api_key"),
            None => None,
        };
        if let (Some(scheme), false) = (scheme, matches!(endpoint.access, Access::Public)) {
            operation.security = Some(vec![SecurityRequirement::new::<_, _, &str>(scheme, [])]);
        }
        let note = match endpoint.access {
            Access::Public => "No key needed.".to_string(),
            Access::Roles(_) => format!("Roles: {}.", roles.join(", ")),
            Access::SandboxOpen(_) => format!(
                "Roles: {}. In the sandbox also without a key or with the placeholder key `sandbox`.",
                roles.join(", ")
            ),
        };
        let description = operation.description.get_or_insert_with(String::new);
        if !description.is_empty() {
            description.push_str("\n\n");
        }
        description.push_str(&note);
        let extensions = ExtensionsBuilder::new()
            .add("x-invex-roles", serde_json::json!(roles))
            .build();
        match operation.extensions.as_mut() {
            Some(existing) => existing.merge(extensions),
            None => operation.extensions = Some(extensions),
        }
    }
    let mut json = serde_json::to_value(&doc).unwrap_or(Value::Null);
    for endpoint in routes::table() {
        let method = endpoint.method.as_str().to_ascii_lowercase();
        if let Some(operation) = json["paths"][endpoint.path].get_mut(&method) {
            forms::describe(endpoint.path, operation);
            examples::add(operation);
            responses::complete(&endpoint, operation);
        }
    }
    json["servers"] = json!([{
        "url": "/",
        "description": "This server (the sandbox or a production instance: answers say which in `environment`)"
    }]);
    json["webhooks"] = events::described();
    if let Some(schemas) = json["components"]["schemas"].as_object_mut() {
        schemas.extend(events::schemas());
        for schema in schemas.values_mut() {
            crate::invoice::json::drop_reference_defaults(schema);
        }
        // utoipa inlines the generic `data: Option<T>` of a company group as T's object and
        // drops its nullability; the register groups answer `null` unless `status` is ok.
        for (name, schema) in schemas.iter_mut() {
            if name.starts_with("Group_") {
                if let Some(data) = schema["properties"].get_mut("data") {
                    if data["type"] == "object" {
                        data["type"] = json!(["object", "null"]);
                    }
                }
            }
        }
    }
    json
}

/// `/openapi.json` and the interactive reference at `/docs`.
/// The description is built once, here, and served as the same bytes on every request.
/// `/docs` is Swagger UI, whose assets come vendored in the `utoipa-swagger-ui` crate (no
/// CDN: the page works offline and behind strict firewalls).
pub fn routes(state: &AppState) -> Router<AppState> {
    let doc = document(&state.config.limits);
    let json = Bytes::from(serde_json::to_vec(&doc).unwrap_or_default());
    let docs: Router<AppState> = SwaggerUi::new("/docs")
        .config(utoipa_swagger_ui::Config::from("/openapi.json"))
        .into();
    Router::new()
        .route(
            "/openapi.json",
            get(move || {
                let json = json.clone();
                async move { ([(header::CONTENT_TYPE, "application/json")], json) }
            }),
        )
        .merge(docs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_route_is_described_with_its_roles() {
        let json = document(&Limits::default());
        assert_eq!(json["openapi"], "3.1.0");
        for endpoint in routes::table() {
            let op = &json["paths"][endpoint.path][endpoint.method.as_str().to_ascii_lowercase()];
            assert!(
                op.is_object(),
                "{} {} not described",
                endpoint.method,
                endpoint.path
            );
            let roles: Vec<&str> = endpoint.access.roles().iter().map(|r| r.as_str()).collect();
            assert_eq!(
                op["x-invex-roles"],
                serde_json::json!(roles),
                "{}",
                endpoint.path
            );
        }
    }

    /// A generated client names its methods after operationIds: they must be unique.
    #[test]
    fn operation_ids_are_unique() {
        let json = document(&Limits::default());
        let mut seen = std::collections::HashMap::new();
        for (path, item) in json["paths"].as_object().expect("paths") {
            for (method, op) in item.as_object().expect("item") {
                let id = op["operationId"].as_str().expect("operationId").to_string();
                if let Some(other) = seen.insert(id.clone(), format!("{method} {path}")) {
                    panic!("operationId `{id}` of {method} {path} repeats {other}");
                }
            }
        }
    }

    /// Errors are declared as the server sends them, and every layer's status is listed.
    #[test]
    fn errors_are_problem_json_and_complete() {
        let json = document(&Limits::default());
        for endpoint in routes::table() {
            let op = &json["paths"][endpoint.path][endpoint.method.as_str().to_ascii_lowercase()];
            let responses = op["responses"].as_object().expect("responses");
            for (status, response) in responses {
                if status.starts_with('4') || status.starts_with('5') {
                    assert!(
                        response["content"]["application/problem+json"].is_object(),
                        "{} {} {status} is not problem+json: {response}",
                        endpoint.method,
                        endpoint.path
                    );
                    assert!(response["content"]["application/json"].is_null());
                }
            }
            if !matches!(endpoint.access, Access::Public) {
                for status in ["401", "429"] {
                    assert!(
                        responses.contains_key(status),
                        "{} {} lacks {status}",
                        endpoint.method,
                        endpoint.path
                    );
                }
            }
        }
        let problem = &json["components"]["schemas"]["ProblemBody"]["properties"];
        for member in [
            "findings",
            "limit",
            "limit_value",
            "identifiers",
            "line",
            "field",
        ] {
            assert!(problem[member].is_object(), "ProblemBody lacks `{member}`");
        }
        assert!(json["servers"][0]["url"].is_string());
        // Every answer has a schema, downloads too.
        for (path, item) in json["paths"].as_object().expect("paths") {
            for (method, op) in item.as_object().expect("item") {
                for (status, response) in op["responses"].as_object().expect("responses") {
                    for (media, entry) in response["content"].as_object().into_iter().flatten() {
                        assert!(
                            entry["schema"].is_object(),
                            "{method} {path} {status} {media} has no schema"
                        );
                    }
                }
            }
        }
    }

    /// One shape for every list, and a `Location` on every creation.
    #[test]
    fn lists_page_alike_and_creations_name_their_location() {
        let json = document(&Limits::default());
        let schemas = &json["components"]["schemas"];
        let mut lists = 0;
        for (path, item) in json["paths"].as_object().expect("paths") {
            for (method, op) in item.as_object().expect("item") {
                for (status, response) in op["responses"].as_object().expect("responses") {
                    if status == "201" {
                        assert_eq!(
                            response["headers"]["Location"]["required"], true,
                            "{method} {path}: 201 without Location"
                        );
                    }
                }
                let Some(schema) = op
                    .pointer("/responses/200/content/application~1json/schema/$ref")
                    .and_then(Value::as_str)
                else {
                    continue;
                };
                let name = schema.trim_start_matches("#/components/schemas/");
                let properties = &schemas[name]["properties"];
                let arrays = properties
                    .as_object()
                    .map(|p| p.values().filter(|v| v["type"] == "array").count())
                    .unwrap_or(0);
                // A list answer: an object whose only array is the page of items.
                if method != "get" || arrays != 1 || properties["next"].is_null() {
                    continue;
                }
                lists += 1;
                let names: Vec<&str> = op["parameters"]
                    .as_array()
                    .map(|p| p.iter().filter_map(|p| p["name"].as_str()).collect())
                    .unwrap_or_default();
                assert!(names.contains(&"limit"), "{path} lacks `limit`");
                // Newest-first lists continue `before` the last id; the rule catalogue,
                // sorted by rule id, `after` it.
                let cursor = if path == "/v1/rules" {
                    "after"
                } else {
                    "before"
                };
                assert!(names.contains(&cursor), "{path} lacks `{cursor}`");
            }
        }
        // validations, conversions, invoices, keys, webhooks, deliveries, connections,
        // tenants, rules
        assert_eq!(lists, 9);
    }

    /// The operations an integrator starts with carry examples.
    #[test]
    fn first_steps_have_examples() {
        let json = document(&Limits::default());
        let body = |path: &str, method: &str, media: &str| {
            json["paths"][path][method]["requestBody"]["content"][media]["example"].clone()
        };
        assert_eq!(
            body("/v1/keys", "post", "application/json")["role"],
            "developer"
        );
        assert!(body("/v1/webhooks", "post", "application/json")["event_types"].is_array());
        assert!(body("/v1/invoice/send", "post", "application/xml")
            .as_str()
            .is_some_and(|x| x.contains("<Invoice")));
        let vat = &json["paths"]["/v1/vat/verify"]["get"]["parameters"][0];
        assert_eq!(vat["example"], "SK2022749619");
    }

    #[test]
    fn every_event_type_is_a_described_webhook() {
        let json = document(&Limits::default());
        for event in crate::webhooks::events::EventType::ALL {
            let hook = &json["webhooks"][event.as_str()]["post"];
            let schema = hook["requestBody"]["content"]["application/json"]["schema"]["$ref"]
                .as_str()
                .unwrap_or_else(|| panic!("{} is not described", event.as_str()));
            let name = schema.rsplit('/').next().expect("name");
            assert_eq!(
                json["components"]["schemas"][name]["properties"]["type"]["const"],
                event.as_str()
            );
        }
    }
}
