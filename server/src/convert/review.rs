//! A conversion's life: evaluated (XML written, validated, gated) when it is created,
//! corrected by reviewers (XML rewritten and revalidated every time), approved or rejected,
//! finally sent. Nothing under the threshold leaves without an approval: the send path
//! asks [`may_send`] for every document that a conversion produced.

use invex_engine::document::Document;
use invex_engine::registry::Catalog;
use invex_engine::report::Report;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use super::gate::{self, CrossCheck, ReviewReason};
use super::model::{Draft, FieldError, FieldView, Source};
use super::ubl;
use crate::store::ConversionRecord;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConversionStatus {
    /// Passed the gate: may be sent as it is.
    Ready,
    /// Held by the gate (see `reasons`); needs corrections and/or an approval.
    NeedsReview,
    /// A reviewer approved it: may be sent.
    Approved,
    /// A reviewer rejected it: never sent.
    Rejected,
    /// Sent (see `invoice_id`).
    Sent,
}

impl ConversionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ConversionStatus::Ready => "ready",
            ConversionStatus::NeedsReview => "needs_review",
            ConversionStatus::Approved => "approved",
            ConversionStatus::Rejected => "rejected",
            ConversionStatus::Sent => "sent",
        }
    }

    pub fn parse(s: &str) -> Option<ConversionStatus> {
        Some(match s {
            "ready" => ConversionStatus::Ready,
            "needs_review" => ConversionStatus::NeedsReview,
            "approved" => ConversionStatus::Approved,
            "rejected" => ConversionStatus::Rejected,
            "sent" => ConversionStatus::Sent,
            _ => return None,
        })
    }
}

/// What an extractor hands over for one invoice.
#[derive(Clone, Debug, Default)]
pub struct Candidate {
    pub draft: Draft,
    /// Problems the extractor found in the input (unreadable cells, conflicting rows).
    pub issues: Vec<ReviewReason>,
    /// The extractor's own cross-checks (e.g. totals printed on a PDF).
    pub cross_checks: Vec<CrossCheck>,
    /// An invoice XML found inside the input (UBL in a PDF): used as the document.
    pub embedded_xml: Option<Vec<u8>>,
    /// What the input holds that the UBL does not carry, and values derived by a rule
    /// (a structured export's reader says so); shown to reviewers, never a reason to hold.
    pub notes: Vec<String>,
}

/// One correction, as kept in the review trail.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Change {
    pub at: String,
    /// The key id of the reviewer.
    pub by: String,
    pub path: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error(transparent)]
    Field(#[from] FieldError),
    #[error("the conversion is {0} and can no longer change")]
    Final(&'static str),
    #[error("the generated document cannot be validated: {0}")]
    Validation(String),
    #[error("stored conversion data is damaged: {0}")]
    Damaged(String),
    #[error("{0} fatal finding(s) remain; correct them before approving")]
    FatalFindings(usize),
    #[error("the document came embedded in the input and is used unchanged; it cannot be corrected field by field")]
    Embedded,
}

/// The XML, its validation and the gate's verdict for a draft.
pub struct Evaluation {
    pub xml: Vec<u8>,
    pub report: Report,
    pub cross_checks: Vec<CrossCheck>,
    pub reasons: Vec<ReviewReason>,
    pub confidence: f32,
}

/// Write (unless a document came embedded), validate and gate.
pub fn evaluate(
    catalog: &Catalog,
    profile: Option<&str>,
    candidate: &Candidate,
    threshold: f32,
) -> Result<Evaluation, ReviewError> {
    let xml = match &candidate.embedded_xml {
        Some(xml) => xml.clone(),
        None => ubl::write(&candidate.draft),
    };
    let doc = Document::parse(&xml).map_err(|e| ReviewError::Validation(e.to_string()))?;
    let rules = match profile {
        Some(p) => catalog
            .ruleset(p)
            .ok_or_else(|| ReviewError::Validation(format!("no profile `{p}` is installed")))?,
        None => {
            catalog
                .detected_ruleset(&doc)
                .map_err(|why| {
                    ReviewError::Validation(format!("no profile could be detected: {why}"))
                })?
                .0
        }
    };
    let report = rules.validate(&doc);
    let mut cross_checks = candidate.cross_checks.clone();
    if candidate.embedded_xml.is_none() {
        cross_checks.extend(gate::cross_checks(
            &candidate.draft,
            &ubl::compute(&candidate.draft),
        ));
    }
    let reasons = gate::reasons(
        &candidate.draft,
        &report,
        &cross_checks,
        &candidate.issues,
        threshold,
    );
    Ok(Evaluation {
        xml,
        report,
        cross_checks,
        reasons,
        confidence: candidate.draft.overall_confidence(),
    })
}

pub fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Metadata of one upload, shared by its conversions.
pub struct Upload<'a> {
    pub tenant_id: &'a str,
    pub batch_id: &'a str,
    pub file_name: Option<&'a str>,
    pub input_format: &'a str,
    pub input_sha256: &'a str,
    pub environment: &'a str,
    pub now: &'a str,
}

fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}

/// The stored record of a freshly evaluated candidate.
pub fn record(
    upload: &Upload<'_>,
    position: usize,
    candidate: &Candidate,
    evaluation: Evaluation,
) -> ConversionRecord {
    let held = !evaluation.reasons.is_empty();
    let identity = crate::sending::document::identity(&evaluation.xml);
    ConversionRecord {
        id: crate::ids::new_id("conv"),
        tenant_id: upload.tenant_id.to_string(),
        batch_id: upload.batch_id.to_string(),
        position: position as i64,
        status: if held {
            ConversionStatus::NeedsReview
        } else {
            ConversionStatus::Ready
        }
        .as_str()
        .to_string(),
        file_name: upload.file_name.map(str::to_string),
        input_format: upload.input_format.to_string(),
        input_sha256: upload.input_sha256.to_string(),
        seller_ids: identity.stored_seller_ids(),
        document_id: identity.document_id,
        issue_date: identity.issue_date,
        draft: json(&StoredDraft {
            draft: candidate.draft.clone(),
            issues: candidate.issues.clone(),
            extractor_checks: candidate.cross_checks.clone(),
            embedded: candidate.embedded_xml.is_some(),
            notes: candidate.notes.clone(),
        }),
        xml_sha256: sha256(&evaluation.xml),
        xml: String::from_utf8_lossy(&evaluation.xml).into_owned(),
        report: json(&evaluation.report),
        confidence: f64::from(evaluation.confidence),
        reasons: json(&evaluation.reasons),
        cross_checks: json(&evaluation.cross_checks),
        changes: "[]".into(),
        needed_review: held,
        approved_by: None,
        approved_at: None,
        review_note: None,
        invoice_id: None,
        environment: upload.environment.to_string(),
        created_at: upload.now.to_string(),
        updated_at: upload.now.to_string(),
    }
}

/// What the `draft` column holds: the draft and what the extractor said about the input
/// (kept so a re-evaluation after corrections still knows them).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StoredDraft {
    pub draft: Draft,
    #[serde(default)]
    pub issues: Vec<ReviewReason>,
    #[serde(default)]
    pub extractor_checks: Vec<CrossCheck>,
    #[serde(default)]
    pub embedded: bool,
    #[serde(default)]
    pub notes: Vec<String>,
}

pub fn stored_draft(record: &ConversionRecord) -> Result<StoredDraft, ReviewError> {
    serde_json::from_str(&record.draft).map_err(|e| ReviewError::Damaged(e.to_string()))
}

fn status(record: &ConversionRecord) -> Result<ConversionStatus, ReviewError> {
    ConversionStatus::parse(&record.status)
        .ok_or_else(|| ReviewError::Damaged(format!("status `{}`", record.status)))
}

/// One requested correction: a field path and its new text (empty clears it).
#[derive(Clone, Debug, Deserialize, ToSchema)]
pub struct Correction {
    pub path: String,
    pub value: String,
}

/// Apply corrections, rewrite and revalidate. Corrected values carry confidence 1.0 and
/// the reviewer's key as source; issues the extractor raised about a corrected field are
/// settled by the correction. An approved conversion goes back to review: its XML changed.
#[allow(clippy::too_many_arguments)]
pub fn correct(
    record: &mut ConversionRecord,
    catalog: &Catalog,
    corrections: &[Correction],
    remove_lines: &[usize],
    by: &str,
    now: &str,
    threshold: f32,
) -> Result<(), ReviewError> {
    match status(record)? {
        ConversionStatus::Rejected => return Err(ReviewError::Final("rejected")),
        ConversionStatus::Sent => return Err(ReviewError::Final("sent")),
        _ => {}
    }
    let mut stored = stored_draft(record)?;
    if stored.embedded {
        return Err(ReviewError::Embedded);
    }
    let mut changes: Vec<Change> =
        serde_json::from_str(&record.changes).map_err(|e| ReviewError::Damaged(e.to_string()))?;
    let before: std::collections::HashMap<String, String> = stored
        .draft
        .fields()
        .into_iter()
        .map(|f| (f.path, f.value))
        .collect();
    let mut lines_removed = remove_lines.to_vec();
    // Highest first, so earlier indexes stay valid while removing.
    lines_removed.sort_unstable_by(|a, b| b.cmp(a));
    lines_removed.dedup();
    for index in lines_removed {
        stored.draft.remove_line(index)?;
        changes.push(Change {
            at: now.into(),
            by: by.into(),
            path: format!("lines[{index}]"),
            old: Some("(line)".into()),
            new: None,
        });
    }
    for c in corrections {
        stored
            .draft
            .set(&c.path, &c.value, Source::Review { by: by.into() })?;
        let new = Some(c.value.trim().to_string()).filter(|v| !v.is_empty());
        changes.push(Change {
            at: now.into(),
            by: by.into(),
            path: c.path.clone(),
            old: before.get(&c.path).cloned(),
            new,
        });
        stored
            .issues
            .retain(|i| i.field.as_deref() != Some(c.path.as_str()));
    }
    // The extractor's own cross-checks described the input as it was; after corrections the
    // draft's own arithmetic is what counts.
    stored.extractor_checks.clear();
    let candidate = Candidate {
        draft: stored.draft.clone(),
        issues: stored.issues.clone(),
        cross_checks: Vec::new(),
        embedded_xml: None,
        notes: stored.notes.clone(),
    };
    let evaluation = evaluate(catalog, None, &candidate, threshold)?;
    let held = !evaluation.reasons.is_empty();
    let next = if record.needed_review || held {
        ConversionStatus::NeedsReview
    } else {
        ConversionStatus::Ready
    };
    record.status = next.as_str().into();
    record.approved_by = None;
    record.approved_at = None;
    let identity = crate::sending::document::identity(&evaluation.xml);
    record.seller_ids = identity.stored_seller_ids();
    record.issue_date = identity.issue_date;
    record.document_id = identity.document_id;
    record.xml_sha256 = sha256(&evaluation.xml);
    record.xml = String::from_utf8_lossy(&evaluation.xml).into_owned();
    record.report = json(&evaluation.report);
    record.confidence = f64::from(evaluation.confidence);
    record.reasons = json(&evaluation.reasons);
    record.cross_checks = json(&evaluation.cross_checks);
    record.changes = json(&changes);
    record.draft = json(&stored);
    record.updated_at = now.into();
    Ok(())
}

fn fatal_count(record: &ConversionRecord) -> Result<usize, ReviewError> {
    let report: Report =
        serde_json::from_str(&record.report).map_err(|e| ReviewError::Damaged(e.to_string()))?;
    Ok(report.counts.fatal)
}

/// Approve: the reviewer vouches for every value, including those under the threshold.
/// Fatal findings cannot be approved away: the document would not pass validation.
pub fn approve(
    record: &mut ConversionRecord,
    by: &str,
    note: Option<String>,
    now: &str,
) -> Result<(), ReviewError> {
    match status(record)? {
        ConversionStatus::Rejected => return Err(ReviewError::Final("rejected")),
        ConversionStatus::Sent => return Err(ReviewError::Final("sent")),
        _ => {}
    }
    let fatal = fatal_count(record)?;
    if fatal > 0 {
        return Err(ReviewError::FatalFindings(fatal));
    }
    record.status = ConversionStatus::Approved.as_str().into();
    record.approved_by = Some(by.into());
    record.approved_at = Some(now.into());
    record.review_note = note;
    record.updated_at = now.into();
    Ok(())
}

pub fn reject(
    record: &mut ConversionRecord,
    by: &str,
    reason: String,
    now: &str,
) -> Result<(), ReviewError> {
    if let ConversionStatus::Sent = status(record)? {
        return Err(ReviewError::Final("sent"));
    }
    record.status = ConversionStatus::Rejected.as_str().into();
    record.approved_by = None;
    record.approved_at = None;
    record.review_note = Some(format!("rejected by {by}: {reason}"));
    record.updated_at = now.into();
    Ok(())
}

/// Whether the document a conversion produced may be sent; `Err` says why not.
pub fn may_send(record: &ConversionRecord) -> Result<(), String> {
    match ConversionStatus::parse(&record.status) {
        Some(ConversionStatus::Ready | ConversionStatus::Approved | ConversionStatus::Sent) => {
            Ok(())
        }
        Some(ConversionStatus::NeedsReview) => Err(format!(
            "this document is conversion {} which needs review and is not approved; correct it \
             and approve it (POST /v1/conversions/{}/approve) before sending",
            record.id, record.id
        )),
        Some(ConversionStatus::Rejected) => Err(format!(
            "this document is conversion {} which a reviewer rejected; it is never sent",
            record.id
        )),
        None => Err(format!("conversion {} has an unknown status", record.id)),
    }
}

/// The approval metadata evidence packages carry.
pub fn approval(record: &ConversionRecord) -> Option<crate::sending::evidence::Approval> {
    let (by, at) = (record.approved_by.as_ref()?, record.approved_at.as_ref()?);
    let changes: Vec<Change> = serde_json::from_str(&record.changes).unwrap_or_default();
    let mut what = format!(
        "conversion {} of {} ({}) approved",
        record.id,
        record.file_name.as_deref().unwrap_or("an upload"),
        record.input_format
    );
    if changes.is_empty() {
        what.push_str(" without corrections");
    } else {
        what.push_str(&format!(" with {} correction(s): ", changes.len()));
        let list: Vec<String> = changes
            .iter()
            .map(|c| {
                format!(
                    "{} {} → {} (by {} at {})",
                    c.path,
                    c.old.as_deref().unwrap_or("∅"),
                    c.new.as_deref().unwrap_or("∅"),
                    c.by,
                    c.at
                )
            })
            .collect();
        what.push_str(&list.join("; "));
    }
    if let Some(note) = &record.review_note {
        what.push_str(&format!("; note: {note}"));
    }
    Some(crate::sending::evidence::Approval {
        approved_by: by.clone(),
        approved_at: at.clone(),
        what,
    })
}

/// The answer for one conversion.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ConversionView {
    pub id: String,
    pub batch_id: String,
    pub status: ConversionStatus,
    pub file_name: Option<String>,
    pub input_format: String,
    /// BT-1 of the generated document.
    pub document_id: Option<String>,
    /// The weakest field's confidence.
    pub confidence: f64,
    /// Why the conversion is held; empty when ready.
    pub reasons: Vec<ReviewReason>,
    /// What the input held that the UBL does not carry, and values derived by a rule (an
    /// ISDOC file's constant symbol, a Peppol address from a DIČ); never a reason to hold
    /// (not in lists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<Vec<String>>,
    /// Every extracted value with its confidence and origin (not in lists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fields: Option<Vec<FieldView>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cross_checks: Option<Vec<CrossCheck>>,
    /// The validation report of the generated XML (not in lists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validation: Option<Report>,
    /// The generated Peppol BIS 3.0 UBL (not in lists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xml: Option<String>,
    pub xml_sha256: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<Vec<Change>>,
    pub approved_by: Option<String>,
    pub approved_at: Option<String>,
    pub review_note: Option<String>,
    pub invoice_id: Option<String>,
    pub environment: String,
    pub created_at: String,
    pub updated_at: String,
    pub links: ConversionLinks,
}

#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ConversionLinks {
    #[serde(rename = "self")]
    pub self_: String,
    pub xml: String,
    /// Where a reviewer corrects (PATCH), approves and rejects (POST …/approve, …/reject).
    pub review: String,
    /// `POST /v1/invoice/send?conversion_id=…` sends the generated document.
    pub send: String,
}

impl ConversionView {
    /// `full` adds fields, cross-checks, validation, XML and changes.
    pub fn from_record(r: &ConversionRecord, full: bool) -> Result<ConversionView, ReviewError> {
        let damaged = |e: serde_json::Error| ReviewError::Damaged(e.to_string());
        let (fields, notes, cross_checks, validation, xml, changes) = if full {
            let stored = stored_draft(r)?;
            (
                Some(stored.draft.fields()),
                Some(stored.notes),
                Some(serde_json::from_str(&r.cross_checks).map_err(damaged)?),
                Some(serde_json::from_str(&r.report).map_err(damaged)?),
                Some(r.xml.clone()),
                Some(serde_json::from_str(&r.changes).map_err(damaged)?),
            )
        } else {
            (None, None, None, None, None, None)
        };
        Ok(ConversionView {
            id: r.id.clone(),
            batch_id: r.batch_id.clone(),
            status: status(r)?,
            file_name: r.file_name.clone(),
            input_format: r.input_format.clone(),
            document_id: r.document_id.clone(),
            confidence: (r.confidence * 1000.0).round() / 1000.0,
            reasons: serde_json::from_str(&r.reasons).map_err(damaged)?,
            notes,
            fields,
            cross_checks,
            validation,
            xml,
            xml_sha256: r.xml_sha256.clone(),
            changes,
            approved_by: r.approved_by.clone(),
            approved_at: r.approved_at.clone(),
            review_note: r.review_note.clone(),
            invoice_id: r.invoice_id.clone(),
            environment: r.environment.clone(),
            created_at: r.created_at.clone(),
            updated_at: r.updated_at.clone(),
            links: ConversionLinks {
                self_: format!("/v1/conversions/{}", r.id),
                xml: format!("/v1/conversions/{}/xml", r.id),
                review: format!("/v1/conversions/{}", r.id),
                send: format!("/v1/invoice/send?conversion_id={}", r.id),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::model::Field;
    use crate::convert::ubl::tests::{catalog, slovak_draft};

    fn upload() -> Upload<'static> {
        Upload {
            tenant_id: "ten_1",
            batch_id: "batch_1",
            file_name: Some("in.csv"),
            input_format: "csv",
            input_sha256: "00",
            environment: "sandbox",
            now: "2027-01-01T00:00:00Z",
        }
    }

    fn convert(draft: Draft) -> ConversionRecord {
        let candidate = Candidate {
            draft,
            ..Candidate::default()
        };
        let evaluation = evaluate(catalog(), None, &candidate, 0.8).unwrap();
        record(&upload(), 0, &candidate, evaluation)
    }

    #[test]
    fn a_certain_valid_draft_is_ready_and_may_be_sent() {
        let r = convert(slovak_draft());
        assert_eq!(r.status, "ready", "{}", r.reasons);
        assert_eq!(r.document_id.as_deref(), Some("FV-2027-0001"));
        assert!(may_send(&r).is_ok());
    }

    #[test]
    fn an_uncertain_field_holds_the_conversion_until_corrected_and_approved() {
        let mut d = slovak_draft();
        d.payment.iban = Some(Field::new(
            "SK3112000000198742637541".into(),
            0.5,
            Source::Pdf {
                page: 1,
                method: "pattern IBAN".into(),
            },
        ));
        let mut r = convert(d);
        assert_eq!(r.status, "needs_review");
        assert!(r.reasons.contains("payment.iban"), "{}", r.reasons);
        assert!(may_send(&r).is_err());

        let fix = Correction {
            path: "payment.iban".into(),
            value: "SK3112000000198742637541".into(),
        };
        correct(&mut r, catalog(), &[fix], &[], "key_rev", "t1", 0.8).unwrap();
        // Corrected, but it needed review: still held until someone approves.
        assert_eq!(r.status, "needs_review");
        assert_eq!(r.reasons, "[]");
        assert!(may_send(&r).is_err());
        approve(
            &mut r,
            "key_rev",
            Some("checked against the bank letter".into()),
            "t2",
        )
        .unwrap();
        assert_eq!(r.status, "approved");
        assert!(may_send(&r).is_ok());
        let a = approval(&r).unwrap();
        assert_eq!(a.approved_by, "key_rev");
        assert!(a.what.contains("payment.iban"), "{}", a.what);

        // A later correction withdraws the approval: the document changed.
        let fix = Correction {
            path: "note".into(),
            value: "Ďakujeme".into(),
        };
        correct(&mut r, catalog(), &[fix], &[], "key_rev", "t3", 0.8).unwrap();
        assert_eq!(r.status, "needs_review");
        assert!(r.approved_by.is_none());
    }

    #[test]
    fn fatal_findings_cannot_be_approved_and_rejected_conversions_never_send() {
        let mut d = slovak_draft();
        d.number = None;
        let mut r = convert(d);
        assert_eq!(r.status, "needs_review");
        assert!(matches!(
            approve(&mut r, "k", None, "t"),
            Err(ReviewError::FatalFindings(n)) if n > 0
        ));
        reject(&mut r, "k", "duplicate of FV-1".into(), "t").unwrap();
        assert!(may_send(&r).unwrap_err().contains("rejected"));
        assert!(matches!(
            correct(&mut r, catalog(), &[], &[], "k", "t", 0.8),
            Err(ReviewError::Final("rejected"))
        ));
    }

    #[test]
    fn the_view_lists_fields_with_their_sources() {
        let r = convert(slovak_draft());
        let v = ConversionView::from_record(&r, true).unwrap();
        let fields = v.fields.unwrap();
        assert!(fields
            .iter()
            .any(|f| f.path == "seller.ico" && f.value == "31322832"));
        assert!(v.xml.unwrap().contains("FV-2027-0001"));
        assert_eq!(v.validation.unwrap().counts.fatal, 0);
        let list = ConversionView::from_record(&r, false).unwrap();
        assert!(list.fields.is_none() && list.xml.is_none());
    }
}
