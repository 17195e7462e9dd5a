//! Artifact return: the final XML of a delivered invoice and its PDF rendition, for the
//! client's archive or billing system — downloadable, and pushed with the
//! `invoice.artifacts_ready` webhook when the invoice is delivered.

use base64::Engine as _;
use serde::Serialize;
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use crate::store::InvoiceRecord;

/// The kinds of artifact, as they appear in URLs.
pub const KINDS: [&str; 2] = ["xml", "pdf"];

/// One artifact as the webhook announces it.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct Artifact {
    /// `xml` (the document exactly as sent) or `pdf` (its rendition).
    pub kind: String,
    pub media_type: String,
    pub file_name: String,
    /// `GET` it with a key of the tenant.
    pub url: String,
    pub sha256: String,
    pub size_bytes: usize,
    /// The file itself, so an archive receives it without a second request.
    pub content_base64: String,
}

fn base_name(invoice: &InvoiceRecord) -> String {
    crate::convert::archive::file_stem(
        invoice.document_id.as_deref().unwrap_or(&invoice.id),
        &invoice.id,
    )
}

/// The bytes, media type and file name of one artifact.
pub fn render(
    invoice: &InvoiceRecord,
    kind: &str,
) -> Result<(Vec<u8>, &'static str, String), crate::artifacts::RenderError> {
    let name = base_name(invoice);
    match kind {
        "pdf" => Ok((
            crate::artifacts::render_pdf_marked(
                invoice.payload.as_bytes(),
                (invoice.environment == "sandbox").then_some(crate::artifacts::SANDBOX_MARK),
            )?,
            "application/pdf",
            format!("{name}.pdf"),
        )),
        _ => Ok((
            invoice.payload.as_bytes().to_vec(),
            "application/xml",
            format!("{name}.xml"),
        )),
    }
}

/// Both artifacts, for the webhook. A rendition that fails (it never should for a
/// validated document) leaves the XML alone and says why in the log.
pub fn all(invoice: &InvoiceRecord) -> Vec<Artifact> {
    let mut out = Vec::new();
    for kind in KINDS {
        match render(invoice, kind) {
            Ok((bytes, media_type, file_name)) => out.push(Artifact {
                kind: kind.to_string(),
                media_type: media_type.to_string(),
                file_name,
                url: format!("/v1/invoices/{}/artifacts/{kind}", invoice.id),
                sha256: hex::encode(Sha256::digest(&bytes)),
                size_bytes: bytes.len(),
                content_base64: base64::engine::general_purpose::STANDARD.encode(&bytes),
            }),
            Err(e) => {
                tracing::error!(invoice = %invoice.id, error = %e, "the PDF rendition failed");
            }
        }
    }
    out
}
