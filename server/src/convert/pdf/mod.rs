//! The PDF extractor: text with positions from the content streams (our own interpreter on
//! `lopdf`), reading order rebuilt from positions, then invoice fields found by labels,
//! patterns and table layout, each with a confidence that cross-checks raise or lower.
//! Invoice XML attached to the PDF (UBL, Factur-X/ZUGFeRD) is reported alongside.
//!
//! Image-only scans are refused: no OCR is performed.

mod cmap;
mod embedded;
mod encoding;
mod fields;
mod fonts;
mod interp;
mod layout;
mod load;
mod text;

#[cfg(test)]
mod testpdf;
#[cfg(test)]
mod tests;

pub use embedded::{flavour as xml_flavour, EmbeddedXml, XmlFlavour};

use super::model::Draft;

/// Resource limits for one PDF.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    pub max_pages: u32,
    /// Largest decompressed size of any one stream.
    pub max_stream_bytes: usize,
    /// Largest decompressed size of all streams we read, together.
    pub max_total_bytes: usize,
    /// Most glyphs (shown characters) the document may show, all pages together.
    pub max_glyphs: usize,
    /// Most bytes of text those glyphs may carry.
    pub max_text_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_pages: 1000,
            max_stream_bytes: 32 * 1024 * 1024,
            max_total_bytes: 128 * 1024 * 1024,
            max_glyphs: 1_000_000,
            max_text_bytes: 8 * 1024 * 1024,
        }
    }
}

/// A consistency test between extracted values (e.g. line amounts against the net total);
/// the same record the review gate keeps.
pub use crate::convert::gate::CrossCheck;

/// One invoice found in the PDF.
#[derive(Clone, Debug, PartialEq)]
pub struct PdfInvoice {
    pub draft: Draft,
    pub cross_checks: Vec<CrossCheck>,
    /// What could not be found or read, for the reviewer.
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PdfExtraction {
    pub pages: u32,
    /// Normally one; several when pages start invoices with different numbers.
    pub drafts: Vec<PdfInvoice>,
    pub embedded: Vec<EmbeddedXml>,
    /// The text in reading order (pages separated by a form feed line), for diagnostics.
    pub text: String,
    /// Every page with its text where it stands, for showing a page beside the values.
    pub layout: Vec<PageLayout>,
}

/// A page as laid out: its visible area and the text on it, in PDF space (points, y up).
#[derive(Clone, Debug, PartialEq)]
pub struct PageLayout {
    /// 1-based.
    pub number: u32,
    /// The `MediaBox`: lower left corner and size.
    pub x0: f32,
    pub y0: f32,
    pub width: f32,
    pub height: f32,
    /// Runs of text as the field finders read them (words closer than a column gap).
    pub texts: Vec<PlacedText>,
}

/// A run of text where it stands on its page.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacedText {
    pub text: String,
    /// Left end and baseline.
    pub x: f32,
    pub baseline: f32,
    pub width: f32,
    /// Font size (the line's largest).
    pub size: f32,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PdfError {
    #[error("the file is not a PDF (no %PDF- header)")]
    NotPdf,
    #[error("the PDF is encrypted with a password; remove the protection and upload it again")]
    Encrypted,
    #[error(
        "the PDF has no text layer ({pages} page(s){}); it looks like a scanned image. \
         OCR is not performed, so the invoice needs manual entry",
        if *images > 0 { ", images only" } else { "" }
    )]
    NoText { pages: u32, images: usize },
    #[error("the PDF is damaged: {0}")]
    Damaged(String),
    #[error("the PDF has more than {max} pages, more than an invoice needs")]
    TooManyPages { max: u32 },
    #[error("the PDF's compressed data expands beyond {limit} bytes ({what}); refused as a decompression bomb")]
    TooLarge { what: &'static str, limit: usize },
    #[error("the PDF shows more than {limit} {what}, more than invoices hold")]
    TooMuchText { what: &'static str, limit: usize },
}

/// Extract invoices from a PDF with the default [`Limits`].
pub fn extract(bytes: &[u8]) -> Result<PdfExtraction, PdfError> {
    extract_with(bytes, &Limits::default())
}

/// Extract invoices from a PDF.
pub fn extract_with(bytes: &[u8], limits: &Limits) -> Result<PdfExtraction, PdfError> {
    // lopdf is third-party code fed with untrusted bytes: a panic inside it must become
    // an error for this upload, not a crashed request handler.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(bytes, limits))).unwrap_or_else(
        |_| {
            Err(PdfError::Damaged(
                "the PDF parser failed on malformed data".into(),
            ))
        },
    )
}

fn run(bytes: &[u8], limits: &Limits) -> Result<PdfExtraction, PdfError> {
    let opened = load::open(bytes, limits)?;
    let mut budget = load::Budget::new(limits);
    let embedded = embedded::find(&opened.doc, &opened.pages, &mut budget)?;
    let mut lines = Vec::new();
    let mut boxes = Vec::with_capacity(opened.pages.len());
    let mut images = 0;
    let mut problems = Vec::new();
    for (index, &page) in opened.pages.iter().enumerate() {
        let number = index as u32 + 1;
        let scan = interp::scan_page(&opened.doc, page, &mut budget)?;
        boxes.push(load::media_box(&opened.doc, page));
        images += scan.images;
        problems.extend(
            scan.problems
                .into_iter()
                .map(|p| format!("page {number}: {p}")),
        );
        lines.extend(layout::lines(number, scan.glyphs));
    }
    let pages = opened.pages.len() as u32;
    let text = reading_text(&lines);
    let layout = page_layout(&boxes, &lines);
    if text.trim().is_empty() {
        if embedded.is_empty() {
            return Err(PdfError::NoText { pages, images });
        }
        return Ok(PdfExtraction {
            pages,
            drafts: Vec::new(),
            embedded,
            text,
            layout,
        });
    }
    let mut drafts = fields::invoices(&lines);
    for d in &mut drafts {
        d.notes.extend(problems.iter().cloned());
    }
    Ok(PdfExtraction {
        pages,
        drafts,
        embedded,
        text,
        layout,
    })
}

/// Each page's box with the segments of its lines.
fn page_layout(boxes: &[[f32; 4]], lines: &[layout::Line]) -> Vec<PageLayout> {
    let mut pages: Vec<PageLayout> = boxes
        .iter()
        .enumerate()
        .map(|(i, b)| PageLayout {
            number: i as u32 + 1,
            x0: b[0],
            y0: b[1],
            width: b[2] - b[0],
            height: b[3] - b[1],
            texts: Vec::new(),
        })
        .collect();
    for line in lines {
        let Some(page) = (line.page as usize)
            .checked_sub(1)
            .and_then(|i| pages.get_mut(i))
        else {
            continue;
        };
        page.texts.extend(line.segments.iter().map(|s| PlacedText {
            text: s.text.clone(),
            x: s.x0,
            baseline: line.y,
            width: (s.x1 - s.x0).max(0.0),
            size: line.size,
        }));
    }
    pages
}

fn reading_text(lines: &[layout::Line]) -> String {
    let mut out = String::new();
    let mut page = lines.first().map_or(1, |l| l.page);
    for line in lines {
        if line.page != page {
            out.push_str("\u{c}\n");
            page = line.page;
        }
        out.push_str(&line.text());
        out.push('\n');
    }
    out
}
