//! Reading multipart bodies: each part as bytes or as trimmed text, every read error a
//! problem that names the size limit when that is what failed.

use axum::extract::multipart::Field;
use axum::extract::Multipart;
use bytes::Bytes;

use crate::problem::Problem;
use crate::routes::validate::body_problem;

pub(crate) struct Form {
    inner: Multipart,
    limit: usize,
}

/// One part of a form.
pub(crate) struct Part<'a> {
    pub name: String,
    pub file_name: Option<String>,
    pub content_type: Option<String>,
    field: Field<'a>,
    limit: usize,
}

impl Form {
    /// `limit` is the body limit the problems name.
    pub fn new(inner: Multipart, limit: usize) -> Form {
        Form { inner, limit }
    }

    pub async fn next(&mut self) -> Result<Option<Part<'_>>, Problem> {
        let limit = self.limit;
        let field = self
            .inner
            .next_field()
            .await
            .map_err(|e| body_problem(&e, e.status(), e.body_text(), limit))?;
        Ok(field.map(|field| Part {
            name: field.name().unwrap_or("").to_string(),
            file_name: field.file_name().map(str::to_string),
            content_type: field.content_type().map(str::to_string),
            field,
            limit,
        }))
    }
}

impl Part<'_> {
    pub async fn bytes(self) -> Result<Bytes, Problem> {
        let limit = self.limit;
        self.field
            .bytes()
            .await
            .map_err(|e| body_problem(&e, e.status(), e.body_text(), limit))
    }

    /// The text, trimmed; None when empty.
    pub async fn text(self) -> Result<Option<String>, Problem> {
        let limit = self.limit;
        let text = self
            .field
            .text()
            .await
            .map_err(|e| body_problem(&e, e.status(), e.body_text(), limit))?;
        Ok(Some(text.trim().to_string()).filter(|t| !t.is_empty()))
    }
}

/// One part of a form as read: its field name, file name and contents.
pub struct ReadPart {
    pub name: String,
    pub file_name: Option<String>,
    pub bytes: Bytes,
}

/// Read every part of a multipart request the way the upload routes do (the same reader,
/// the same limit and the same problems). For the fuzzer and tests: the routes read
/// part by part, deciding as they go.
pub async fn read_all(
    request: axum::extract::Request,
    limit: usize,
) -> Result<Vec<ReadPart>, Problem> {
    use axum::extract::FromRequest;
    let multipart = Multipart::from_request(request, &())
        .await
        .map_err(|e| Problem::bad_request(e.body_text()))?;
    let mut form = Form::new(multipart, limit);
    let mut parts = Vec::new();
    while let Some(part) = form.next().await? {
        let (name, file_name) = (part.name.clone(), part.file_name.clone());
        let bytes = part.bytes().await?;
        parts.push(ReadPart {
            name,
            file_name,
            bytes,
        });
    }
    Ok(parts)
}
