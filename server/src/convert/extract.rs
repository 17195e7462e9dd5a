//! One entry for every input kind: recognise the file by its bytes, run the matching
//! extractor, and hand over one [`Candidate`] per invoice found.

use super::gate::{ReasonKind, ReviewReason};
use super::model::{DocumentKind, Draft, Field};
use super::pdf::{self, PdfError, XmlFlavour};
use super::review::Candidate;
use super::tabular::{self, CellIssue, Mapping, Severity, TabularError};
use crate::invoice::json::Declared;
use rust_decimal::Decimal;

#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    #[error("{0}")]
    Unsupported(String),
    #[error(transparent)]
    Tabular(#[from] TabularError),
    #[error(transparent)]
    Pdf(#[from] PdfError),
    #[error("unknown mapping `{0}`; GET /v1/invoice/convert/mappings lists the shipped ones, or send a mapping JSON")]
    UnknownMapping(String),
    #[error("no invoice found in the file")]
    NoInvoices,
    #[error(transparent)]
    Json(#[from] crate::invoice::json::JsonError),
}

/// The limits of every extractor. `tabular.max_invoices` bounds the invoices of a PDF too.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Limits {
    pub tabular: tabular::Limits,
    pub pdf: pdf::Limits,
}

impl ExtractError {
    /// The problem type slug (docs/problems.md).
    pub fn slug(&self) -> &'static str {
        match self {
            ExtractError::Unsupported(_) => "unsupported-input",
            ExtractError::Tabular(
                TabularError::MappingJson(_)
                | TabularError::UnknownPath { .. }
                | TabularError::BadDefault { .. }
                | TabularError::BadMapping(_),
            )
            | ExtractError::UnknownMapping(_) => "invalid-mapping",
            ExtractError::Tabular(TabularError::UnsupportedFormat(_)) => "unsupported-input",
            ExtractError::Tabular(_) => "unreadable-spreadsheet",
            ExtractError::Pdf(_) => "unreadable-pdf",
            ExtractError::NoInvoices => "no-invoices-found",
            ExtractError::Json(_) => "invalid-invoice-json",
        }
    }

    /// The file holds more invoices than the upload may (413, `max_invoices`).
    pub fn too_many_invoices(&self) -> bool {
        matches!(
            self,
            ExtractError::Tabular(TabularError::TooManyInvoices { .. })
        )
    }

    /// The limit a refusal broke, with its value (for the problem's `limit` members).
    pub fn limit(&self) -> Option<(&'static str, u64)> {
        match self {
            ExtractError::Tabular(TabularError::Limit { limit, value, .. }) => {
                Some((limit, *value))
            }
            ExtractError::Tabular(TabularError::TooManyInvoices { limit }) => {
                Some(("max_invoices", *limit as u64))
            }
            ExtractError::Pdf(PdfError::TooManyPages { max }) => {
                Some(("pdf_max_pages", u64::from(*max)))
            }
            ExtractError::Pdf(PdfError::TooMuchText { what, limit }) => Some((
                if *what == "glyphs" {
                    "pdf_max_glyphs"
                } else {
                    "pdf_max_text_bytes"
                },
                *limit as u64,
            )),
            ExtractError::Pdf(PdfError::TooLarge { what, limit }) => Some((
                if *what == "one stream" {
                    "pdf_max_stream_bytes"
                } else {
                    "pdf_max_total_bytes"
                },
                *limit as u64,
            )),
            _ => None,
        }
    }
}

/// What one file gave.
pub struct Extracted {
    /// `pdf`, `csv`, `xlsx`, `ods`.
    pub format: &'static str,
    pub candidates: Vec<Candidate>,
}

/// A mapping named by a request: a shipped mapping id, or a mapping as JSON.
pub fn mapping_choice(text: &str) -> Result<Mapping, ExtractError> {
    let text = text.trim();
    if text.starts_with('{') {
        return Ok(Mapping::from_json(text.as_bytes())?);
    }
    tabular::mapping(text).ok_or_else(|| ExtractError::UnknownMapping(text.to_string()))
}

fn input_issue(field: Option<String>, location: Option<String>, message: String) -> ReviewReason {
    ReviewReason {
        kind: ReasonKind::InputIssue,
        field,
        location,
        message,
    }
}

/// `declared` says whether the file is a JSON invoice; anything else is told by its bytes.
pub fn extract(
    bytes: &[u8],
    file_name: Option<&str>,
    declared: Declared,
    mapping: Option<&Mapping>,
    limits: &Limits,
) -> Result<Extracted, ExtractError> {
    if declared == Declared::Json {
        return from_json(bytes);
    }
    let head = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map_or(&[][..], |i| &bytes[i..]);
    if head.starts_with(b"{") {
        return Err(ExtractError::Unsupported(
            "this looks like JSON: a JSON invoice is converted when the upload says it is one \
             (the part's Content-Type application/json or application/vnd.invex.invoice+json, \
             or a file name ending in .json)"
                .into(),
        ));
    }
    // An ISDOC package (`.isdocx`): the ISDOC document its manifest names.
    if head.starts_with(b"PK\x03\x04") {
        if let Some(doc) = super::isdoc::unpack(bytes) {
            let doc = doc.map_err(|e| ExtractError::Unsupported(e.to_string()))?;
            let mut extracted = from_isdoc(&doc)?;
            for c in &mut extracted.candidates {
                c.notes.push(
                    "read from an ISDOC package: its attachments are not carried over".into(),
                );
            }
            return Ok(extracted);
        }
    }
    if head.starts_with(b"%PDF-") {
        return from_pdf(bytes, limits);
    }
    if head.starts_with(b"<") && super::isdoc::looks_like_isdoc(head) {
        return from_isdoc(bytes);
    }
    if head.starts_with(b"<") && super::pohoda::looks_like_pohoda(head) {
        return from_pohoda(bytes, limits);
    }
    if head.starts_with(b"<") {
        return Err(ExtractError::Unsupported(
            "this is XML, not a PDF, spreadsheet or CSV: an invoice XML needs no conversion \
             (validate it with POST /v1/invoice/validate, send it with POST /v1/invoice/send)"
                .into(),
        ));
    }
    let extraction = tabular::extract(bytes, file_name, mapping, &limits.tabular)?;
    // Rows that belong to no invoice concern the whole upload: the first invoice carries
    // them so a reviewer sees them.
    let mut orphans: Vec<CellIssue> = extraction.issues;
    let candidates: Vec<Candidate> = extraction
        .invoices
        .into_iter()
        .map(|inv| {
            let mut draft = inv.draft;
            credit_note_signs(&mut draft);
            let issues = inv
                .issues
                .into_iter()
                .chain(std::mem::take(&mut orphans))
                // Warnings explain a lowered confidence, which the gate already weighs.
                .filter(|i| i.severity == Severity::Error)
                .map(|i| {
                    input_issue(
                        Some(i.field).filter(|f| !f.is_empty()),
                        Some(format!("row {}, column \"{}\"", i.row, i.column)),
                        i.message,
                    )
                })
                .collect();
            Candidate {
                draft,
                issues,
                cross_checks: Vec::new(),
                embedded_xml: None,
                notes: Vec::new(),
            }
        })
        .collect();
    if candidates.is_empty() {
        return Err(ExtractError::NoInvoices);
    }
    Ok(Extracted {
        format: extraction.format.as_str(),
        candidates,
    })
}

/// A JSON invoice states its business terms exactly: the UBL written from it is the
/// document, as a UBL invoice embedded in a PDF is, and nothing is guessed.
fn from_json(bytes: &[u8]) -> Result<Extracted, ExtractError> {
    let view = crate::invoice::json::parse(bytes)?;
    Ok(Extracted {
        format: "json",
        candidates: vec![Candidate {
            draft: Draft::default(),
            issues: Vec::new(),
            cross_checks: Vec::new(),
            embedded_xml: Some(crate::invoice::write(&view)),
            notes: Vec::new(),
        }],
    })
}

/// An ISDOC file states its business terms exactly: its UBL is written from them (the
/// document, as a JSON invoice's is), and the review draft mirrors them as read, with the
/// values derived by a rule (the Peppol address from a Slovak DIČ) marked so.
fn from_isdoc(bytes: &[u8]) -> Result<Extracted, ExtractError> {
    let read = super::isdoc::read(bytes).map_err(|e| ExtractError::Unsupported(e.to_string()))?;
    let mut draft = super::structured::draft_of(&read.view, "isdoc");
    for (party, role) in [(&mut draft.seller, "seller"), (&mut draft.buyer, "buyer")] {
        super::structured::derived(
            &mut party.endpoint,
            0.8,
            &format!("{role}.dic (Slovak parties register under scheme 0245)"),
        );
    }
    Ok(Extracted {
        format: "isdoc",
        candidates: vec![Candidate {
            draft,
            issues: Vec::new(),
            cross_checks: Vec::new(),
            embedded_xml: Some(crate::invoice::write(&read.view)),
            notes: read.notes,
        }],
    })
}

/// A POHODA file's issued invoices, each read as written (as ISDOC's), each its own
/// candidate; at most as many as an upload may hold.
fn from_pohoda(bytes: &[u8], limits: &Limits) -> Result<Extracted, ExtractError> {
    let read = super::pohoda::read(bytes).map_err(|e| ExtractError::Unsupported(e.to_string()))?;
    if read.len() > limits.tabular.max_invoices {
        return Err(ExtractError::Tabular(TabularError::TooManyInvoices {
            limit: limits.tabular.max_invoices,
        }));
    }
    let candidates = read
        .into_iter()
        .map(|r| {
            let mut draft = super::structured::draft_of(&r.view, "pohoda");
            for (party, role) in [(&mut draft.seller, "seller"), (&mut draft.buyer, "buyer")] {
                super::structured::derived(
                    &mut party.endpoint,
                    0.8,
                    &format!("{role}.dic (Slovak parties register under scheme 0245)"),
                );
            }
            Candidate {
                draft,
                issues: Vec::new(),
                cross_checks: Vec::new(),
                embedded_xml: Some(crate::invoice::write(&r.view)),
                notes: r.notes,
            }
        })
        .collect();
    Ok(Extracted {
        format: "pohoda",
        candidates,
    })
}

/// Accounting exports often write credit notes with negative quantities and amounts; a
/// UBL credit note states them positive (the document type says it is a credit).
fn credit_note_signs(draft: &mut Draft) {
    if draft.kind != DocumentKind::CreditNote {
        return;
    }
    let negative = draft.lines.iter().any(|l| {
        [&l.quantity, &l.net_amount]
            .into_iter()
            .flatten()
            .any(|f| f.value.is_sign_negative())
    });
    if !negative {
        return;
    }
    let flip = |f: &mut Option<Field<Decimal>>| {
        if let Some(f) = f {
            f.value = f.value.abs();
        }
    };
    for line in &mut draft.lines {
        flip(&mut line.quantity);
        flip(&mut line.net_amount);
    }
    for row in &mut draft.vat_breakdown {
        flip(&mut row.taxable);
        flip(&mut row.tax);
    }
    let t = &mut draft.totals;
    for f in [
        &mut t.line_total,
        &mut t.tax_exclusive,
        &mut t.tax,
        &mut t.tax_inclusive,
        &mut t.payable,
    ] {
        flip(f);
    }
}

fn from_pdf(bytes: &[u8], limits: &Limits) -> Result<Extracted, ExtractError> {
    let extraction = pdf::extract_with(bytes, &limits.pdf)?;
    if extraction.drafts.len() > limits.tabular.max_invoices {
        return Err(ExtractError::Tabular(TabularError::TooManyInvoices {
            limit: limits.tabular.max_invoices,
        }));
    }
    // A UBL invoice inside the PDF is the document itself: no text extraction can be more
    // faithful than the sender's own XML.
    if let Some(ubl) = extraction
        .embedded
        .iter()
        .find(|e| e.flavour == XmlFlavour::Ubl)
    {
        return Ok(Extracted {
            format: "pdf",
            candidates: vec![Candidate {
                draft: Draft::default(),
                issues: Vec::new(),
                cross_checks: Vec::new(),
                embedded_xml: Some(ubl.bytes.clone()),
                notes: Vec::new(),
            }],
        });
    }
    let other: Vec<String> = extraction
        .embedded
        .iter()
        .map(|e| format!("`{}` ({})", e.name, e.flavour.as_str()))
        .collect();
    let candidates: Vec<Candidate> = extraction
        .drafts
        .into_iter()
        .map(|inv| {
            let mut draft = inv.draft;
            draft.seller.derive_slovak_ids("seller");
            draft.buyer.derive_slovak_ids("buyer");
            let mut issues = Vec::new();
            if !other.is_empty() {
                issues.push(input_issue(
                    None,
                    None,
                    format!(
                        "the PDF embeds invoice data {} that is not UBL; invex converted the \
                         printed text, so compare it with the embedded data",
                        other.join(", ")
                    ),
                ));
            }
            Candidate {
                draft,
                issues,
                cross_checks: inv.cross_checks,
                embedded_xml: None,
                notes: Vec::new(),
            }
        })
        .collect();
    if candidates.is_empty() {
        return Err(ExtractError::NoInvoices);
    }
    Ok(Extracted {
        format: "pdf",
        candidates,
    })
}
