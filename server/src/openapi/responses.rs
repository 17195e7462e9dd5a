//! The error answers of every operation. Handlers describe the answers that are theirs
//! (a 409 of the review gate, a 422 with findings); the answers that layers in front of
//! every handler give (authentication, roles, rate limits, body limits and timeouts, the
//! worker pool) are added here from the route table, so that the description lists every
//! status an operation can return and a generated client knows each one's shape.

use serde_json::{json, Map, Value};

use crate::auth::roles::ALL_ROLES;
use crate::auth::Access;
use crate::problem::PROBLEM_JSON;
use crate::routes::Endpoint;

/// Routes whose heavy work is admitted to the worker pool: they can answer 503 `server-busy`.
const ADMITTED: [&str; 6] = [
    "/v1/invoice/validate",
    "/api/validate",
    "/v1/invoice/send",
    "/api/send",
    "/v1/invoice/convert",
    "/api/convert",
];

/// Routes whose 202 names the queued invoice in `Location`.
const SENDS: [&str; 2] = ["/v1/invoice/send", "/api/send"];

/// Fill in `operation`'s error answers: every 4xx/5xx as `application/problem+json`, and the
/// statuses the layers in front of the handler can answer.
pub fn complete(endpoint: &Endpoint, operation: &mut Value) {
    let has_body = operation.get("requestBody").is_some();
    let has_params = operation
        .get("parameters")
        .and_then(Value::as_array)
        .is_some_and(|p| !p.is_empty());
    let Some(responses) = operation
        .get_mut("responses")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    for (status, response) in responses.iter_mut() {
        // A created resource's address, and an accepted send's invoice.
        if status == "201" || (status == "202" && SENDS.contains(&endpoint.path)) {
            response["headers"]["Location"] = json!({
                "description": "The path of the created resource (for a send: the queued \
                                invoice, in the caller's route family)",
                "required": true,
                "schema": { "type": "string" }
            });
        }
        // Downloads (ZIP, PDF, XML, CSV, workbooks, metrics text) are bytes: say so, so that
        // a generated client returns them rather than leaving the answer out.
        if status.starts_with('2') {
            if let Some(content) = response.get_mut("content").and_then(Value::as_object_mut) {
                for (media_type, entry) in content.iter_mut() {
                    if entry.get("schema").is_none() && !media_type.ends_with("json") {
                        entry["schema"] = if media_type.starts_with("text/") {
                            json!({ "type": "string" })
                        } else {
                            json!({ "type": "string", "format": "binary" })
                        };
                    }
                }
            }
        }
        if status.starts_with('4') || status.starts_with('5') {
            as_problem(response);
        }
    }
    let public = matches!(endpoint.access, Access::Public);
    let restricted = endpoint.access.roles().len() < ALL_ROLES.len();
    let mut add = |status: &str, description: &str, retry_after: bool| {
        responses
            .entry(status.to_string())
            .or_insert_with(|| problem(description, retry_after));
    };
    if has_params || has_body {
        add(
            "400",
            "A parameter or the body is not what the operation takes (`bad-request`, \
             `invalid-field` naming the `field`)",
            false,
        );
    }
    if has_params || has_body {
        add(
            "422",
            "A field's value is not one the operation takes (`invalid-field`, naming the \
             `field`), or the document or body cannot be processed",
            false,
        );
    }
    if !public {
        add(
            "401",
            "No key, an unknown or revoked key, or the header of the other route family \
             (`unauthorized`, `wrong-auth-header`)",
            false,
        );
        add(
            "429",
            "Over the key's request rate, or too many failed authentications from this \
             address or key prefix (`rate-limited`, `too-many-failed-authentications`); \
             retry after `Retry-After` seconds",
            true,
        );
    }
    if !public && restricted {
        add(
            "403",
            "The key's role may not call this operation (`forbidden`, with `allowed_roles`)",
            false,
        );
    }
    if endpoint.path.contains('{') {
        add(
            "404",
            "No such resource in the caller's tenant (`not-found`)",
            false,
        );
    }
    if has_body {
        add(
            "408",
            "The body did not arrive within the body timeouts (`body-timeout`)",
            false,
        );
        add(
            "413",
            "The body is over `max_body_bytes`, or the request needs more than the in-flight \
             budget (`too-large`, with `limit` and `limit_value`)",
            false,
        );
        add(
            "415",
            "The body's Content-Type is not one the operation takes (`unsupported-media-type`)",
            false,
        );
    }
    if ADMITTED.contains(&endpoint.path) {
        add(
            "503",
            "The worker pool and its queue are full (`server-busy`); retry after `Retry-After` \
             seconds",
            true,
        );
    }
}

/// A response described with the problem schema, as the server sends it.
fn problem(description: &str, retry_after: bool) -> Value {
    let mut response = json!({
        "description": description,
        "content": {
            PROBLEM_JSON: { "schema": { "$ref": "#/components/schemas/ProblemBody" } }
        }
    });
    if retry_after {
        response["headers"] = json!({
            "Retry-After": {
                "description": "Seconds to wait before retrying",
                "schema": { "type": "integer", "minimum": 0 }
            }
        });
    }
    response
}

/// Error answers are `application/problem+json` (RFC 9457), whatever the handler's
/// annotation said: the server sends nothing else for them.
fn as_problem(response: &mut Value) {
    let Some(content) = response.get_mut("content").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(schema) = content.remove("application/json") {
        content.insert(PROBLEM_JSON.to_string(), schema);
    }
    if content.is_empty() {
        let mut problem = Map::new();
        problem.insert(
            "schema".into(),
            json!({ "$ref": "#/components/schemas/ProblemBody" }),
        );
        content.insert(PROBLEM_JSON.to_string(), Value::Object(problem));
    }
}
