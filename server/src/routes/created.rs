//! `201 Created`: the new resource in the body and its address in `Location` (RFC 9110
//! §15.3.2), so that a client can find it again without knowing how its URLs are built.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

/// A created resource: its path (e.g. `/v1/keys/key_…`) and the answer's body.
pub struct Created<T> {
    pub location: String,
    pub body: T,
}

impl<T> Created<T> {
    pub fn at(location: impl Into<String>, body: T) -> Created<T> {
        Created {
            location: location.into(),
            body,
        }
    }
}

impl<T: Serialize> IntoResponse for Created<T> {
    fn into_response(self) -> Response {
        let mut response = (StatusCode::CREATED, Json(self.body)).into_response();
        // Paths are built from ids the server made (ASCII); a value that is not a valid
        // header is left out rather than failing an answer whose work is done.
        if let Ok(location) = HeaderValue::from_str(&self.location) {
            response.headers_mut().insert(header::LOCATION, location);
        }
        response
    }
}
