//! The request context: request id (accepted from `X-Request-Id` or generated), a tracing
//! span around the request, metrics, the sandbox marker header, and the guarantee that every
//! error answer is problem+json (layers and extractors answer some errors with plain text or
//! an empty body; they are rewritten here).

use std::time::Instant;

use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, HeaderName, HeaderValue, Response};
use axum::middleware::Next;
use axum::response::IntoResponse;
use tracing::Instrument;

use crate::problem::{Problem, PROBLEM_JSON};
use crate::settings::Mode;
use crate::state::AppState;

pub static X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
pub static INVEX_ENVIRONMENT: HeaderName = HeaderName::from_static("invex-environment");

/// What the code answering a request may need to know about it.
#[derive(Clone, Debug)]
pub struct RequestContext {
    pub id: String,
    pub path: String,
}

tokio::task_local! {
    static CONTEXT: RequestContext;
}

/// The context of the request this task is answering, if any.
pub fn current() -> Option<RequestContext> {
    CONTEXT.try_with(|c| c.clone()).ok()
}

/// A client's request id is kept when it is short and plain (it goes into logs and headers).
fn accepted_request_id(value: Option<&HeaderValue>) -> Option<String> {
    let v = value?.to_str().ok()?;
    let plain = !v.is_empty()
        && v.len() <= 128
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b));
    plain.then(|| v.to_string())
}

/// Largest error body rewritten into a problem; bigger ones are summarised by status.
const MAX_REWRITTEN_BODY: usize = 64 * 1024;

pub async fn observe(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response<Body> {
    let start = Instant::now();
    let id = accepted_request_id(request.headers().get(&X_REQUEST_ID))
        .unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|m| m.as_str().to_string())
        .unwrap_or_else(|| "unmatched".to_string());
    let method = request.method().clone();
    let ctx = RequestContext {
        id: id.clone(),
        path: request.uri().path().to_string(),
    };
    let span = tracing::info_span!("request", request_id = %id, method = %method, route = %route);

    let response = CONTEXT
        .scope(ctx.clone(), next.run(request).instrument(span.clone()))
        .await;
    let mut response = CONTEXT.scope(ctx, as_problem(response)).await;

    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&id) {
        headers.insert(X_REQUEST_ID.clone(), v);
    }
    if state.config.mode == Mode::Sandbox {
        headers.insert(
            INVEX_ENVIRONMENT.clone(),
            HeaderValue::from_static("sandbox"),
        );
    }
    let status = response.status();
    let elapsed = start.elapsed();
    state
        .metrics
        .observe_request(&method, &route, status, elapsed);
    span.in_scope(|| {
        tracing::info!(
            status = status.as_u16(),
            duration_us = elapsed.as_micros() as u64,
            "request finished"
        )
    });
    response
}

/// Rewrite an error answer that is not problem+json into one, keeping its status, its
/// headers (`Allow`, `Retry-After`, ...) and its text as the detail.
async fn as_problem(response: Response<Body>) -> Response<Body> {
    let status = response.status();
    let is_problem = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with(PROBLEM_JSON) || v.starts_with("text/html"));
    // Console pages answer their errors as pages, for people.
    if !(status.is_client_error() || status.is_server_error()) || is_problem {
        return response;
    }
    let (parts, body) = response.into_parts();
    let detail = match axum::body::to_bytes(body, MAX_REWRITTEN_BODY).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).trim().to_string(),
        Err(_) => String::new(),
    };
    let mut problem = Problem::from_status(status, detail);
    if status == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        problem = problem.with("limit", "max_body_bytes");
    }
    let mut rewritten = problem.into_response();
    for (name, value) in parts.headers.iter() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            rewritten.headers_mut().insert(name.clone(), value.clone());
        }
    }
    rewritten
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_request_ids_are_kept_others_replaced() {
        let ok = HeaderValue::from_static("req-42.a:b_c");
        assert_eq!(
            accepted_request_id(Some(&ok)).as_deref(),
            Some("req-42.a:b_c")
        );
        let spaced = HeaderValue::from_static("two words");
        assert_eq!(accepted_request_id(Some(&spaced)), None);
        let long = HeaderValue::from_str(&"x".repeat(129)).expect("header");
        assert_eq!(accepted_request_id(Some(&long)), None);
        assert_eq!(accepted_request_id(None), None);
    }
}
