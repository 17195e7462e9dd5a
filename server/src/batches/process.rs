//! One document of a batch: validated as `POST /v1/invoice/validate` would (the batch's
//! profile or the detected one, the rules in force on the batch's day), its outcome, the
//! result kept for the source system, and, for a document to correct, the event that says so.

use std::time::Instant;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chrono::NaiveDate;
use invex_engine::document::Limits as ParseLimits;
use invex_engine::registry::Catalog;
use invex_engine::report::{Report, Severity, Verdict};
use serde_json::{json, Value};

use crate::problem::Problem;
use crate::store::{
    BatchRecord, CheckFailure, ClaimedDocument, DocumentCheck, DocumentResult, Notice,
};
use crate::webhooks::events::EventType;

/// Fatal findings carried by a `batch.remediation_required` event.
const FINDINGS_IN_EVENT: usize = 50;
/// Documents whose identifiers failed listed in a refused batch's `batch.completed` (each
/// also has its own `batch.remediation_required`, and the documents' list has them all).
const FAILURES_IN_EVENT: usize = 100;

/// The outcome of `doc`. CPU work: call it on a worker of the pool.
pub fn process(
    catalog: &Catalog,
    limits: &ParseLimits,
    max_findings: usize,
    doc: &ClaimedDocument,
) -> DocumentResult {
    let start = Instant::now();
    let checked = STANDARD
        .decode(&doc.content)
        .map_err(|e| Problem::internal(format!("the stored document is damaged: {e}")))
        .and_then(|bytes| {
            // A ZIP member or a feed line says nothing of itself: its first byte does.
            let xml = crate::validation::to_xml(&bytes, crate::validation::Declared::ByContent)?;
            let parsed = crate::validation::parse(&xml, limits)?;
            let at = NaiveDate::parse_from_str(&doc.rules_at, "%Y-%m-%d")
                .unwrap_or_else(|_| chrono::Utc::now().date_naive());
            crate::validation::check(
                catalog,
                doc.profile.as_deref(),
                at,
                &parsed,
                &bytes,
                start,
                max_findings,
            )
        });
    match checked {
        Ok(c) => {
            let outcome = match c.report.verdict {
                Verdict::Valid => "valid",
                Verdict::Invalid => "invalid",
            };
            let notices = if outcome == "invalid" {
                vec![remediation(
                    doc,
                    outcome,
                    json!({ "findings": fatal(&c.report) }),
                )]
            } else {
                Vec::new()
            };
            DocumentResult {
                batch_id: doc.batch_id.clone(),
                seq: doc.seq,
                outcome: outcome.into(),
                result: serde_json::to_string(&c.report).unwrap_or_else(|_| "{}".into()),
                notices,
                conversions: Vec::new(),
                inputs: Vec::new(),
            }
        }
        Err(problem) => {
            let body = problem.body();
            DocumentResult {
                batch_id: doc.batch_id.clone(),
                seq: doc.seq,
                outcome: "failed".into(),
                result: json!({ "problem": body }).to_string(),
                notices: vec![remediation(doc, "failed", json!({ "problem": body }))],
                conversions: Vec::new(),
                inputs: Vec::new(),
            }
        }
    }
}

/// The outcome of converting `doc` (mode `convert`) as `POST /v1/invoice/convert` would: its
/// invoices written as UBL, validated and gated, as conversions of the batch (listed by
/// `GET /v1/conversions?batch_id=`), stored with the result. CPU work: on a pool worker.
pub fn convert(
    catalog: &Catalog,
    config: &crate::convert::config::ConvertConfig,
    doc: &ClaimedDocument,
) -> DocumentResult {
    use crate::convert::{extract, review};
    let failed = |problem: Problem| {
        let body = problem.body();
        DocumentResult {
            batch_id: doc.batch_id.clone(),
            seq: doc.seq,
            outcome: "failed".into(),
            result: json!({ "problem": body }).to_string(),
            notices: vec![remediation(doc, "failed", json!({ "problem": body }))],
            conversions: Vec::new(),
            inputs: Vec::new(),
        }
    };
    let bytes = match STANDARD.decode(&doc.content) {
        Ok(b) => b,
        Err(e) => {
            return failed(Problem::internal(format!(
                "the stored document is damaged: {e}"
            )))
        }
    };
    // A member's name says whether it is a JSON invoice, as a form part's does.
    let declared = crate::invoice::json::Declared::of_part(None, Some(&doc.name));
    let extracted =
        match extract::extract(&bytes, Some(&doc.name), declared, None, &config.limits()) {
            Ok(x) => x,
            Err(e) => {
                let problem = Problem::new(
                    axum::http::StatusCode::UNPROCESSABLE_ENTITY,
                    e.slug(),
                    "The file cannot be converted",
                    e.to_string(),
                );
                return failed(problem);
            }
        };
    let now = crate::clock::now();
    let input_sha256 = review::sha256(&bytes);
    let meta = review::Upload {
        tenant_id: &doc.tenant_id,
        batch_id: &doc.batch_id,
        file_name: Some(&doc.name),
        input_format: extracted.format,
        input_sha256: &input_sha256,
        environment: &doc.environment,
        now: &now,
    };
    let mut records = Vec::new();
    for candidate in &extracted.candidates {
        match review::evaluate(
            catalog,
            doc.profile.as_deref(),
            candidate,
            config.confidence_threshold,
        ) {
            Ok(evaluation) => {
                records.push(review::record(&meta, records.len(), candidate, evaluation))
            }
            Err(e) => {
                // The only way a written document cannot be validated: no profile for it.
                return failed(Problem::new(
                    axum::http::StatusCode::BAD_REQUEST,
                    "unknown-profile",
                    "Unknown profile",
                    e.to_string(),
                ));
            }
        }
    }
    let held = records.iter().any(|r| r.status == "needs_review");
    let outcome = if held { "needs_review" } else { "ready" };
    let listed: Vec<Value> = records
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "status": r.status,
                "document_id": r.document_id,
                "links": { "self": format!("/v1/conversions/{}", r.id) },
            })
        })
        .collect();
    let result = json!({ "conversions": listed });
    let notices = if held {
        vec![remediation(doc, outcome, result.clone())]
    } else {
        Vec::new()
    };
    DocumentResult {
        batch_id: doc.batch_id.clone(),
        seq: doc.seq,
        outcome: outcome.into(),
        result: result.to_string(),
        notices,
        inputs: vec![crate::store::InputRecord {
            tenant_id: doc.tenant_id.clone(),
            sha256: input_sha256.clone(),
            file_name: Some(doc.name.clone()),
            format: extracted.format.to_string(),
            content: bytes,
            created_at: now.clone(),
        }],
        conversions: records,
    }
}

/// The identifiers of `doc` checked (mode `send`, before anything of the batch is sent),
/// as a single send checks them. A document that cannot be read has none to check: its
/// send fails with the reason. CPU work: on a pool worker.
pub fn check(doc: &ClaimedDocument) -> DocumentCheck {
    let faults = STANDARD
        .decode(&doc.content)
        .ok()
        .and_then(|bytes| {
            crate::validation::to_xml(&bytes, crate::validation::Declared::ByContent)
                .ok()
                .map(|xml| crate::sending::identifiers::check(&xml))
        })
        .unwrap_or_default();
    DocumentCheck {
        batch_id: doc.batch_id.clone(),
        seq: doc.seq,
        faults: serde_json::to_string(&faults).unwrap_or_else(|_| "[]".into()),
    }
}

/// Send `doc` (mode `send`) as `POST /v1/invoice/send` does, under an idempotency key of
/// its own (`invex-batch:<batch>:<seq>`): a document whose first worker died after sending
/// it gets the stored answer again and is never sent twice. None: a passing condition (the
/// pool is full, the key's first run is still going); the document is claimed again when
/// its claim runs out.
pub async fn send(state: &crate::state::AppState, doc: &ClaimedDocument) -> Option<DocumentResult> {
    use axum::http::StatusCode;
    let bytes = match STANDARD.decode(&doc.content) {
        Ok(b) => bytes::Bytes::from(b),
        Err(e) => {
            let problem = Problem::internal(format!("the stored document is damaged: {e}"));
            return Some(outcome(
                doc,
                "failed",
                json!({ "problem": problem.body() }),
                true,
            ));
        }
    };
    // The batch is the request: made by its tenant, with no key of its own.
    let principal = crate::auth::Principal {
        tenant_id: doc.tenant_id.clone(),
        tenant_kind: if doc.tenant_id == crate::store::OPERATOR_TENANT_ID {
            crate::store::TenantKind::Operator
        } else {
            crate::store::TenantKind::Customer
        },
        role: crate::auth::Role::Developer,
        key_id: None,
    };
    let request = crate::sending::SendRequest {
        idempotency_key: Some(format!("invex-batch:{}:{}", doc.batch_id, doc.seq)),
        profile: doc.profile.clone(),
        file_name: Some(doc.name.clone()),
        scenario: None,
        resubmission_of: None,
        allow_duplicate: false,
        family: crate::auth::Family::Versioned,
        bytes,
        declared: crate::validation::Declared::ByContent,
    };
    match crate::sending::answer(state, &principal, request).await {
        Ok(a) => {
            let body: Value = serde_json::from_str(&a.body).unwrap_or(Value::Null);
            Some(match a.status {
                StatusCode::ACCEPTED => outcome(doc, "queued", body, false),
                StatusCode::UNPROCESSABLE_ENTITY => outcome(
                    doc,
                    "remediation_required",
                    json!({ "problem": body }),
                    true,
                ),
                _ => outcome(doc, "failed", json!({ "problem": body }), true),
            })
        }
        Err(p)
            if p.status == StatusCode::SERVICE_UNAVAILABLE
                || p.slug == "idempotency-request-in-progress" =>
        {
            None
        }
        Err(p) => Some(outcome(doc, "failed", json!({ "problem": p.body() }), true)),
    }
}

/// A document's result, with its `batch.remediation_required` when it needs correcting.
fn outcome(doc: &ClaimedDocument, outcome: &str, result: Value, remedy: bool) -> DocumentResult {
    DocumentResult {
        batch_id: doc.batch_id.clone(),
        seq: doc.seq,
        outcome: outcome.into(),
        notices: if remedy {
            vec![remediation(doc, outcome, result.clone())]
        } else {
            Vec::new()
        },
        result: result.to_string(),
        conversions: Vec::new(),
        inputs: Vec::new(),
    }
}

/// The events of a batch refused for failed identifiers: a `batch.remediation_required`
/// per document to correct, and `batch.completed` with status `refused` listing them.
pub fn refused(
    batch: &BatchRecord,
    failures: &[CheckFailure],
    counts: &[(String, i64)],
) -> Vec<Notice> {
    let mut notices: Vec<Notice> = failures
        .iter()
        .map(|f| Notice {
            event_type: EventType::BatchRemediationRequired,
            data: json!({
                "batch_id": batch.id,
                "status": "refused",
                "mode": batch.mode,
                "environment": batch.environment,
                "document": { "seq": f.seq, "name": f.name, "outcome": "refused" },
                "identifiers": f.identifiers,
                "links": links(&batch.id, Some(f.seq)),
            }),
        })
        .collect();
    let counts: serde_json::Map<String, Value> =
        counts.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    let listed: Vec<Value> = failures
        .iter()
        .take(FAILURES_IN_EVENT)
        .map(|f| json!({ "seq": f.seq, "name": f.name, "identifiers": f.identifiers }))
        .collect();
    notices.push(Notice {
        event_type: EventType::BatchCompleted,
        data: json!({
            "batch_id": batch.id,
            "status": "refused",
            "mode": batch.mode,
            "documents": batch.documents,
            "counts": counts,
            "error": batch.error,
            "failures": listed,
            "failures_total": failures.len(),
            "environment": batch.environment,
            "links": links(&batch.id, None),
        }),
    });
    notices
}

/// The fatal findings of a report, as events carry them.
fn fatal(report: &Report) -> Vec<Value> {
    report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Fatal)
        .take(FINDINGS_IN_EVENT)
        .map(crate::webhooks::events::finding_data)
        .collect()
}

fn remediation(doc: &ClaimedDocument, outcome: &str, what: Value) -> Notice {
    let mut data = json!({
        "batch_id": doc.batch_id,
        "status": "processing",
        "mode": doc.mode,
        "environment": doc.environment,
        "document": { "seq": doc.seq, "name": doc.name, "outcome": outcome },
        "links": links(&doc.batch_id, Some(doc.seq)),
    });
    if let (Some(d), Some(w)) = (data.as_object_mut(), what.as_object()) {
        d.extend(w.clone());
    }
    Notice {
        event_type: EventType::BatchRemediationRequired,
        data,
    }
}

/// The links of a batch (and of one of its documents), for the `/v1` routes.
pub fn links(batch_id: &str, seq: Option<i64>) -> Value {
    let base = format!("/v1/batches/{batch_id}");
    let mut l = json!({
        "self": base,
        "documents": format!("{base}/documents"),
        "results": format!("{base}/results"),
    });
    if let (Some(seq), Some(o)) = (seq, l.as_object_mut()) {
        o.insert("document".into(), json!(format!("{base}/documents/{seq}")));
    }
    l
}
