//! The admission of a heavy request, as a typed extractor: it takes the request's share of
//! the in-flight budget (its declared length, or the body limit when it declares none)
//! before the body is read, and holds it until the answer is sent.

use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;

use crate::admission::Ticket;
use crate::problem::Problem;
use crate::state::AppState;

pub struct Admitted(pub Ticket);

impl FromRequestParts<AppState> for Admitted {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Problem> {
        let limit = state.config.limits.max_body_bytes;
        let declared = parts
            .headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<usize>().ok());
        if let Some(n) = declared.filter(|n| *n > limit) {
            return Err(Problem::too_large(
                "max_body_bytes",
                limit,
                format!("the request body ({n} bytes) is larger than the limit of {limit} bytes"),
            ));
        }
        let ticket = state.admission.admit(declared.unwrap_or(limit)).await?;
        Ok(Admitted(ticket))
    }
}
