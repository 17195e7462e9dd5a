//! RFC 9457 problem details: every error the server answers is `application/problem+json`.

use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::context;

mod wording;

pub const PROBLEM_JSON: &str = "application/problem+json";

/// Problem `type` URIs point at the catalogue in `docs/problems.md`, one anchor per slug.
pub const TYPE_BASE: &str = "https://github.com/invex/invex/blob/main/docs/problems.md#";

/// An error answer: status, a stable `type` slug, a human title and detail, and extension
/// members (`findings`, `limit`, `errors`, ...).
#[derive(Debug, Clone)]
pub struct Problem {
    pub status: StatusCode,
    pub slug: &'static str,
    pub title: &'static str,
    pub detail: String,
    pub extensions: Map<String, Value>,
    /// Boxed: problems travel in `Result`s and should stay small.
    pub headers: Box<HeaderMap>,
}

/// The JSON shape of a problem, for the OpenAPI description.
#[derive(Serialize, ToSchema)]
pub struct ProblemBody {
    /// URI of the problem type (`.../docs/problems.md#<slug>`).
    #[serde(rename = "type")]
    pub type_: String,
    pub title: String,
    pub status: u16,
    pub detail: String,
    /// The request path that failed.
    pub instance: String,
    /// The request id (also in the `X-Request-Id` header and every log line).
    pub request_id: String,
    /// Extension: the findings that decided the answer (a send refused for fatal findings).
    #[schema(value_type = Option<Vec<Object>>)]
    pub findings: Option<Vec<serde_json::Value>>,
    /// Extension: the identifiers that failed their check (`invalid-identifiers`), each with
    /// its field, value and reason.
    #[schema(value_type = Option<Vec<Object>>)]
    pub identifiers: Option<Vec<serde_json::Value>>,
    /// Extension: the limit that was broken (`max_body_bytes`, `max_files`, `max_invoices`,
    /// `max_columns`, `inflight_bytes`, ...).
    pub limit: Option<String>,
    /// Extension: the value of that limit.
    pub limit_value: Option<u64>,
    /// Extension: where a document is not well-formed, 1-based.
    pub line: Option<u64>,
    /// Extension: the column of `line`, 1-based.
    pub column: Option<u64>,
    /// Extension: the request field at fault (a query parameter, a JSON member, a header).
    pub field: Option<String>,
    /// Extension: one entry per invalid member of a JSON body.
    #[schema(value_type = Option<Vec<Object>>)]
    pub errors: Option<Vec<serde_json::Value>>,
    /// Extension: the files of a batch that could not be processed, each with its problem.
    #[schema(value_type = Option<Vec<Object>>)]
    pub rejected: Option<Vec<serde_json::Value>>,
    /// Extension: seconds to wait before retrying (as `Retry-After`).
    pub retry_after_seconds: Option<u64>,
    /// Extension: the profiles the server offers (an unknown profile was asked for).
    pub available_profiles: Option<Vec<String>>,
    /// Extension: the roles that may call the operation (`forbidden`).
    pub allowed_roles: Option<Vec<String>>,
    /// Extension: the invoice an answer is about (`duplicate-document`, a review gate).
    pub invoice_id: Option<String>,
    /// Extension: the conversion holding a document for review (`review-required`).
    pub conversion_id: Option<String>,
}

impl Problem {
    pub fn new(
        status: StatusCode,
        slug: &'static str,
        title: &'static str,
        detail: impl Into<String>,
    ) -> Problem {
        Problem {
            status,
            slug,
            title,
            detail: detail.into(),
            extensions: Map::new(),
            headers: Box::default(),
        }
    }

    /// Add an extension member.
    pub fn with(mut self, key: &str, value: impl Serialize) -> Problem {
        let value = serde_json::to_value(value).unwrap_or(Value::Null);
        self.extensions.insert(key.to_string(), value);
        self
    }

    /// Add a response header (values that are not valid header text are dropped).
    pub fn header(mut self, name: HeaderName, value: &str) -> Problem {
        if let Ok(v) = HeaderValue::from_str(value) {
            self.headers.insert(name, v);
        }
        self
    }

    pub fn bad_request(detail: impl Into<String>) -> Problem {
        Problem::new(
            StatusCode::BAD_REQUEST,
            "bad-request",
            "Bad request",
            detail,
        )
    }

    pub fn invalid_field(field: &str, detail: impl Into<String>) -> Problem {
        Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid-field",
            "A request field is invalid",
            detail,
        )
        .with("field", field)
    }

    pub fn not_found(detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::NOT_FOUND, "not-found", "Not found", detail)
    }

    pub fn forbidden(detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::FORBIDDEN, "forbidden", "Forbidden", detail)
    }

    pub fn conflict(slug: &'static str, detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::CONFLICT, slug, "Conflict", detail)
    }

    /// 413 naming the limit and its value.
    pub fn too_large(limit: &str, value: usize, detail: impl Into<String>) -> Problem {
        Problem::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too-large",
            "Request too large",
            detail,
        )
        .with("limit", limit)
        .with("limit_value", value)
    }

    pub fn unsupported_media_type(got: &str, accepted: &[&str]) -> Problem {
        Problem::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported-media-type",
            "Unsupported media type",
            format!(
                "content type `{got}` is not accepted here; send one of: {}",
                accepted.join(", ")
            ),
        )
        .with("accepted", accepted)
    }

    pub fn internal(detail: impl Into<String>) -> Problem {
        Problem::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "Internal server error",
            detail,
        )
    }

    pub fn unavailable(detail: impl Into<String>) -> Problem {
        Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            "Service unavailable",
            detail,
        )
    }

    /// A problem for a status answered by a layer or extractor with no body of our own.
    pub fn from_status(status: StatusCode, detail: String) -> Problem {
        let (slug, title) = match status {
            StatusCode::BAD_REQUEST => ("bad-request", "Bad request"),
            StatusCode::UNAUTHORIZED => ("unauthorized", "Unauthorized"),
            StatusCode::FORBIDDEN => ("forbidden", "Forbidden"),
            StatusCode::NOT_FOUND => ("not-found", "Not found"),
            StatusCode::METHOD_NOT_ALLOWED => ("method-not-allowed", "Method not allowed"),
            StatusCode::NOT_ACCEPTABLE => ("not-acceptable", "Not acceptable"),
            StatusCode::CONFLICT => ("conflict", "Conflict"),
            StatusCode::PAYLOAD_TOO_LARGE => ("too-large", "Request too large"),
            StatusCode::UNSUPPORTED_MEDIA_TYPE => {
                ("unsupported-media-type", "Unsupported media type")
            }
            StatusCode::UNPROCESSABLE_ENTITY => ("invalid-body", "Unprocessable request body"),
            StatusCode::TOO_MANY_REQUESTS => ("rate-limited", "Too many requests"),
            StatusCode::SERVICE_UNAVAILABLE => ("unavailable", "Service unavailable"),
            s if s.is_client_error() => ("client-error", "Client error"),
            _ => ("internal", "Internal server error"),
        };
        if detail.trim().is_empty() {
            let detail = status.canonical_reason().unwrap_or("error").to_string();
            return Problem::new(status, slug, title, detail);
        }
        let (detail, field) = wording::own_words(&detail);
        let problem = Problem::new(status, slug, title, detail);
        match field {
            Some(field) => problem.with("field", field),
            None => problem,
        }
    }

    /// The JSON body, with `instance` and `request_id` from the request being answered.
    pub fn body(&self) -> Value {
        let mut body = Map::new();
        body.insert(
            "type".into(),
            Value::String(format!("{TYPE_BASE}{}", self.slug)),
        );
        body.insert("title".into(), Value::String(self.title.to_string()));
        body.insert("status".into(), Value::from(self.status.as_u16()));
        body.insert("detail".into(), Value::String(self.detail.clone()));
        if let Some(ctx) = context::current() {
            body.insert("instance".into(), Value::String(ctx.path.clone()));
            body.insert("request_id".into(), Value::String(ctx.id.clone()));
        }
        for (k, v) in &self.extensions {
            body.insert(k.clone(), v.clone());
        }
        Value::Object(body)
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.status.as_u16(), self.slug, self.detail)
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let body = self.body().to_string();
        let mut response = (self.status, body).into_response();
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        for (name, value) in self.headers.iter() {
            response.headers_mut().insert(name.clone(), value.clone());
        }
        response
    }
}

/// A request the server cannot take now: 503 with `Retry-After` when the workers or the
/// in-flight budget are taken (it may succeed shortly), 413 when it needs more than the
/// whole budget (it never will), 500 when the job itself failed.
impl From<crate::admission::Busy> for Problem {
    fn from(e: crate::admission::Busy) -> Problem {
        use crate::admission::Busy;
        match e {
            Busy::Saturated {
                resource,
                waited_ms,
            } => Problem::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "server-busy",
                "Server busy",
                format!(
                    "the server is at its limit of {} and none was free within {waited_ms} ms; \
                     retry after the time in Retry-After",
                    resource.as_str()
                ),
            )
            .with("limit", resource.as_str())
            .header(header::RETRY_AFTER, "1"),
            Busy::OverBudget {
                resource,
                needed,
                budget,
            } => Problem::too_large(
                resource.as_str(),
                budget,
                format!(
                    "the request needs {needed} of {}, more than the server admits at once \
                     ({budget}); split it",
                    resource.as_str()
                ),
            ),
            Busy::Failed(why) => {
                tracing::error!(error = %why, "a worker job failed");
                Problem::internal("the request failed inside the server; it has been logged")
            }
        }
    }
}

/// Storage failures reach clients as a 500 problem without internals; the log has them.
impl From<crate::store::StoreError> for Problem {
    fn from(e: crate::store::StoreError) -> Problem {
        tracing::error!(error = %e, "storage error");
        Problem::internal("the request could not be completed because storage failed; retry later")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_has_the_rfc_9457_members_and_extensions() {
        let p = Problem::too_large("max_files", 3, "too many files").with("files", 5);
        let b = p.body();
        assert_eq!(b["status"], 413);
        assert_eq!(b["type"], format!("{TYPE_BASE}too-large"));
        assert_eq!(b["title"], "Request too large");
        assert_eq!(b["detail"], "too many files");
        assert_eq!(b["limit"], "max_files");
        assert_eq!(b["limit_value"], 3);
        assert_eq!(b["files"], 5);
    }

    #[test]
    fn bodiless_statuses_get_a_reason() {
        let p = Problem::from_status(StatusCode::METHOD_NOT_ALLOWED, String::new());
        assert_eq!(p.slug, "method-not-allowed");
        assert_eq!(p.detail, "Method Not Allowed");
    }
}
