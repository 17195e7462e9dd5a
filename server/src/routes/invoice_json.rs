//! The JSON invoice: its JSON Schema, and UBL read as JSON (`POST /v1/invoice/json`).
//! Validation, sending and batches take the JSON itself (see their routes).

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::invoice::{self, json, ReadError};
use crate::problem::Problem;
use crate::routes::admit::Admitted;
use crate::routes::validate::read_raw;
use crate::state::AppState;
use crate::validation;

#[utoipa::path(get, path = "/v1/schemas/invoice.json", tag = "validation", operation_id = "invoice_json_schema",
    responses((status = 200, description = "The JSON Schema (2020-12) of the JSON invoice: EN 16931 business terms as members (the `JsonInvoice` schema of this description, standalone)",
        content((Object = "application/schema+json")))))]
pub async fn schema(State(state): State<AppState>) -> Response {
    let doc = json::schema_document(state.config.public_base());
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "application/schema+json"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        doc.to_string(),
    )
        .into_response()
}

#[utoipa::path(post, path = "/v1/invoice/json", tag = "validation", operation_id = "invoice_as_json",
    request_body(content = String, content_type = "application/xml", description = "A UBL 2.1 invoice or credit note"),
    responses(
        (status = 200, description = "Its business terms as a JSON invoice; sent back to `/v1/invoice/validate` or `/v1/invoice/send` it is written as UBL with the same terms",
         content((crate::invoice::InvoiceView = "application/vnd.invex.invoice+json"))),
        (status = 408, description = "The body did not arrive within the body timeouts", body = crate::problem::ProblemBody),
        (status = 413, description = "Body over `max_body_bytes`", body = crate::problem::ProblemBody),
        (status = 415, description = "Not XML", body = crate::problem::ProblemBody),
        (status = 422, description = "Not well-formed XML, DOCTYPE, nesting over `max_xml_depth`, or not a UBL Invoice or CreditNote (`not-an-invoice`)", body = crate::problem::ProblemBody),
        (status = 503, description = "The server is at its limit of heavy work (`server-busy`, `Retry-After`)", body = crate::problem::ProblemBody)))]
pub async fn to_json(
    State(state): State<AppState>,
    _admitted: Admitted,
    request: Request<Body>,
) -> Result<Response, Problem> {
    let kind = crate::routes::validate::content_type(request.headers());
    if !(kind.is_empty()
        || kind == "application/xml"
        || kind == "text/xml"
        || kind.ends_with("+xml"))
    {
        return Err(Problem::unsupported_media_type(
            &kind,
            &["application/xml", "text/xml"],
        ));
    }
    let bytes = read_raw(&state, request.into_body()).await?;
    let limits = validation::parse_limits(&state);
    let text = state
        .admission
        .run(move || {
            let doc = validation::parse(&bytes, &limits)?;
            let view = invoice::from_document(&doc).map_err(|e| match e {
                ReadError::Xml(e) => validation::parse_problem(e),
                ReadError::NotUbl(root) => Problem::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "not-an-invoice",
                    "Not a UBL invoice",
                    format!("the root element is <{root}>; a UBL Invoice or CreditNote is read"),
                ),
            })?;
            Ok::<_, Problem>(json::to_string(&view))
        })
        .await??;
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, json::MEDIA_TYPE)],
        text,
    )
        .into_response())
}
