//! Artifacts returned for a sent invoice: a PDF rendition of its UBL XML.
//!
//! [`render_pdf`] reads the printed business terms ([`crate::invoice::read`]), lays them out
//! on A4 pages and writes a PDF with the vendored DejaVu Sans embedded as a subset with a
//! ToUnicode map, so the text extracts exactly. The output is deterministic: the same XML
//! gives the same bytes. See `docs/artifacts.md`.

mod document;
mod font;
mod format;
mod layout;
mod pdf;

#[cfg(test)]
mod tests;

pub use crate::invoice::InvoiceView;

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error(transparent)]
    Read(#[from] crate::invoice::ReadError),
    #[error("font {font}: {message}")]
    Font { font: &'static str, message: String },
    #[error("the rendition is too large for a PDF")]
    TooLarge,
}

/// What every page of a rendition made in the sandbox says, in both languages: such a
/// PDF must never pass for a real invoice once it leaves the API.
pub const SANDBOX_MARK: &str =
    "SANDBOX – nie je produkčný doklad / SANDBOX – not a production document";

/// Renders the UBL Invoice or CreditNote `xml` as an A4 PDF.
pub fn render_pdf(xml: &[u8]) -> Result<Vec<u8>, RenderError> {
    render_pdf_marked(xml, None)
}

/// As [`render_pdf`], with `mark` (e.g. [`SANDBOX_MARK`]) at the top of every page.
pub fn render_pdf_marked(xml: &[u8], mark: Option<&str>) -> Result<Vec<u8>, RenderError> {
    let view = crate::invoice::read(xml)?;
    let fonts = font::Fonts::load()?;
    let pages = document::compose(&view, layout::Layout::new(&fonts), mark);
    let meta = pdf::Meta {
        title: document::title(&view),
        date: view
            .issue_date
            .as_deref()
            .and_then(|d| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").ok()),
        fingerprint: xml.to_vec(),
    };
    pdf::write(&pages, &fonts, &meta)
}
