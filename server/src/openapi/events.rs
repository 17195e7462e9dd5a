//! The `webhooks` section: one entry per event type, each the POST invex makes to a
//! subscribed endpoint, with the payload's schema. Written from [`EventType::ALL`], so an
//! event type cannot be added without being described.

use serde_json::{json, Map, Value};

use crate::webhooks::events::EventType;

/// What each event means and which `data` it carries.
fn about(event: EventType) -> (&'static str, &'static str) {
    match event {
        EventType::InvoiceDelivered => (
            "Delivery confirmed",
            "The transport layer confirmed delivery to the network or the recipient (MLS AB or \
             AP). Not business acceptance: wait for `invoice.accepted`.",
        ),
        EventType::InvoiceInProcess => (
            "In process at the buyer",
            "The buyer is processing the invoice (invoice response IP).",
        ),
        EventType::InvoiceAccepted => (
            "Accepted by the buyer",
            "The buyer accepted the invoice (invoice response AP); next step payment.",
        ),
        EventType::InvoicePaid => (
            "Paid",
            "The buyer reports the invoice paid (invoice response PD).",
        ),
        EventType::InvoiceRejected => (
            "Rejected",
            "A transport (MLS RE) or business (invoice response RE) rejection; `code` and \
             `detail` carry the response code and reason. Followed by \
             `invoice.remediation_required`.",
        ),
        EventType::InvoiceAttentionNeeded => (
            "Attention needed",
            "Conditional acceptance (CA), a query (UQ), a timeout or conflicting workflow data: \
             `code` says which.",
        ),
        EventType::InvoiceArchived => (
            "Archived with evidence",
            "The invoice is closed and marked for archiving; its evidence package is final \
             (`links.evidence`).",
        ),
        EventType::InvoiceArtifactsReady => (
            "Artifacts ready",
            "The final XML and PDF are ready to be fetched back into the archive or billing \
             system (`artifacts`).",
        ),
        EventType::InvoiceRemediationRequired => (
            "Remediation required",
            "The document must be corrected and resubmitted (a new send with \
             `resubmission_of`): `findings` (rule id, severity, path, message, remediation, \
             owner) and `identifiers` that failed their checks, or after a rejection its \
             `reason`.",
        ),
        EventType::InvoiceFailed => (
            "Failed",
            "Delivery failed permanently or on the service's side; `detail` says why.",
        ),
        EventType::WebhookTest => (
            "Test",
            "Sent by `POST /v1/webhooks/{id}/test` to check a receiver.",
        ),
        EventType::BatchCompleted => (
            "Batch completed",
            "Every document of a batch has its outcome (`status` `completed`, with `counts` \
             by outcome), or the batch could not be read (`status` `failed`, `error`). \
             Results: `links.documents`, `links.results`.",
        ),
        EventType::BatchRemediationRequired => (
            "Batch document needs remediation",
            "A document of a batch is invalid or could not be read: `document` (its sequence \
             number and name in the upload) and its fatal `findings`, or the `problem`. Correct \
             it and submit it again.",
        ),
    }
}

/// The schema name of an event's payload, e.g. `WebhookInvoiceAccepted`.
fn schema_name(event: EventType) -> String {
    let camel: String = event
        .as_str()
        .split(['.', '_'])
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect();
    format!("Webhook{camel}")
}

/// The `webhooks` object of the description.
pub fn described() -> Value {
    let mut out = Map::new();
    for event in EventType::ALL {
        let (summary, description) = about(event);
        out.insert(
            event.as_str().to_string(),
            json!({
                "post": {
                    "operationId": format!("on_{}", event.as_str().replace('.', "_")),
                    "summary": summary,
                    "description": format!(
                        "{description}\n\nHeaders: `webhook-id` (the event id, the same on \
                         every retry: deduplicate on it), `webhook-timestamp`, \
                         `webhook-signature` (Standard Webhooks), `invex-correlation-id`."
                    ),
                    "tags": ["webhooks"],
                    "requestBody": {
                        "required": true,
                        "content": {
                            "application/json": {
                                "schema": { "$ref": format!("#/components/schemas/{}", schema_name(event)) }
                            }
                        }
                    },
                    "responses": {
                        "2XX": { "description": "Delivered" },
                        "410": { "description": "Disable this endpoint" },
                        "default": { "description": "Retried later with backoff" }
                    }
                }
            }),
        );
    }
    Value::Object(out)
}

/// The payload schemas, one per event type, and the invoice event data they share.
pub fn schemas() -> Map<String, Value> {
    let mut out = Map::new();
    out.insert(
        "WebhookInvoiceData".into(),
        json!({
            "type": "object",
            "description": "What an invoice event is about: the invoice, the timeline entry that caused the event, and links (X-API-Key)",
            "required": ["invoice_id", "status", "environment", "links"],
            "properties": {
                "invoice_id": { "type": "string" },
                "document_id": { "type": ["string", "null"], "description": "The document's number (BT-1)" },
                "status": { "type": "string", "description": "The invoice's status after the event" },
                "code": { "type": ["string", "null"], "description": "The response code, e.g. `IR:AP`, `MLS:RE`" },
                "meaning": { "type": ["string", "null"] },
                "detail": { "type": ["string", "null"], "description": "The partner's or buyer's reason" },
                "correlation_id": { "type": ["string", "null"] },
                "resubmission_of": { "type": ["string", "null"], "description": "The invoice this one corrects" },
                "environment": { "type": "string", "enum": ["sandbox", "production"] },
                "links": {
                    "type": "object",
                    "properties": {
                        "self": { "type": "string" },
                        "messages": { "type": "string" },
                        "evidence": { "type": "string" }
                    }
                },
                "findings": {
                    "type": "array",
                    "description": "`invoice.remediation_required`: the fatal findings",
                    "items": {
                        "type": "object",
                        "properties": {
                            "rule_id": { "type": "string" },
                            "severity": { "type": "string" },
                            "path": { "type": "string" },
                            "line": { "type": "integer" },
                            "message": { "type": "string" },
                            "remediation": { "type": "string" },
                            "owner": { "type": ["string", "null"] },
                            "business_terms": { "type": "array", "items": { "type": "string" } }
                        }
                    }
                },
                "identifiers": {
                    "type": "array",
                    "description": "`invoice.remediation_required`: identifiers that failed their checks",
                    "items": {
                        "type": "object",
                        "properties": {
                            "business_term": { "type": "string" },
                            "what": { "type": "string" },
                            "value": { "type": "string" },
                            "reason": { "type": "string" }
                        }
                    }
                },
                "reason": {
                    "type": "object",
                    "description": "`invoice.remediation_required` after a rejection: its code and reason",
                    "properties": {
                        "code": { "type": ["string", "null"] },
                        "detail": { "type": ["string", "null"] }
                    }
                },
                "artifacts": {
                    "type": "array",
                    "description": "`invoice.artifacts_ready`: the final XML and PDF",
                    "items": { "type": "object" }
                }
            }
        }),
    );
    out.insert(
        "WebhookBatchData".into(),
        json!({
            "type": "object",
            "description": "What a batch event is about: the batch, and for a document's event the document (X-API-Key links)",
            "required": ["batch_id", "status", "environment", "links"],
            "properties": {
                "batch_id": { "type": "string" },
                "status": { "type": "string", "description": "The batch's status: `processing`, `completed`, `refused` (mode `send`: identifiers failed, nothing sent) or `failed`" },
                "mode": { "type": "string" },
                "documents": { "type": "integer", "description": "Documents in the batch" },
                "counts": { "type": "object", "additionalProperties": { "type": "integer" }, "description": "`batch.completed`: documents by outcome" },
                "error": { "type": ["string", "null"], "description": "`batch.completed` of a failed batch: why it could not be read; of a refused one: how many documents failed" },
                "failures": {
                    "type": "array",
                    "description": "`batch.completed` of a refused batch: the documents whose identifiers failed (at most 100; `failures_total` counts them all), each `seq`, `name` and `identifiers`",
                    "items": { "type": "object" }
                },
                "failures_total": { "type": "integer" },
                "identifiers": {
                    "type": "array",
                    "description": "`batch.remediation_required` of a refused document: its failed identifiers (`business_term`, `what`, `value`, `reason`)",
                    "items": { "type": "object" }
                },
                "document": {
                    "type": "object",
                    "description": "`batch.remediation_required`: the document",
                    "properties": {
                        "seq": { "type": "integer" },
                        "name": { "type": "string" },
                        "outcome": { "type": "string" }
                    }
                },
                "findings": {
                    "type": "array",
                    "description": "`batch.remediation_required`: the fatal findings (at most 50)",
                    "items": { "type": "object" }
                },
                "problem": { "type": ["object", "null"], "description": "`batch.remediation_required` of a document that could not be validated: the problem" },
                "environment": { "type": "string", "enum": ["sandbox", "production"] },
                "links": {
                    "type": "object",
                    "properties": {
                        "self": { "type": "string" },
                        "documents": { "type": "string" },
                        "results": { "type": "string" },
                        "document": { "type": "string" }
                    }
                }
            }
        }),
    );
    for event in EventType::ALL {
        let data = match event {
            EventType::WebhookTest => json!({ "type": "object" }),
            EventType::BatchCompleted | EventType::BatchRemediationRequired => {
                json!({ "$ref": "#/components/schemas/WebhookBatchData" })
            }
            _ => json!({ "$ref": "#/components/schemas/WebhookInvoiceData" }),
        };
        out.insert(
            schema_name(event),
            json!({
                "type": "object",
                "required": ["type", "timestamp", "data"],
                "properties": {
                    "type": { "type": "string", "const": event.as_str() },
                    "timestamp": { "type": "string", "format": "date-time" },
                    "data": data
                }
            }),
        );
    }
    out
}
