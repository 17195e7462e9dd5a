//! Examples for the operations an integrator starts with: a request body that works as
//! written (against the sandbox identities of `GET /v1/sandbox`), and example values for
//! the query parameters that name things. They are set here, after the description is
//! built, because utoipa's attribute examples cannot carry an XML document or a request
//! body of another type's shape.

use serde_json::{json, Value};

/// The README's example invoice: valid under peppol-bis3-sk, seller and buyer in the
/// sandbox's registers.
const INVOICE: &str = include_str!("../../../examples/invoice-sk.xml");

/// JSON request bodies by operation id.
fn json_body(operation_id: &str) -> Option<Value> {
    Some(match operation_id {
        "create_key" => json!({"role": "developer", "name": "ERP integration"}),
        "create_tenant" => json!({"name": "Dodávateľ s.r.o."}),
        "create_webhook" => json!({
            "url": "https://erp.example.com/invex/events",
            "event_types": ["invoice.delivered", "invoice.accepted", "invoice.rejected",
                            "invoice.remediation_required"],
            "description": "ERP production"
        }),
        "update_webhook" => json!({"enabled": false}),
        "create_connection" => json!({"partner": "sandbox", "name": "Sandbox delivery partner"}),
        "verify_vat_numbers" => json!({"vat": ["SK2022749619", "SK2120345678"]}),
        "correct_conversion" => json!({
            "corrections": [{"path": "buyer.vat_id", "value": "SK2120345678"}],
            "remove_lines": []
        }),
        "reject_conversion" => json!({"reason": "Duplicate of invoice FV-2027-0001"}),
        _ => return None,
    })
}

/// Example values of query and path parameters, by operation and name.
fn parameter(operation_id: &str, name: &str) -> Option<Value> {
    Some(match name {
        "id" if operation_id == "lookup_peppol_participant_v1" => json!("SK2120345678"),
        "vat" => json!("SK2022749619"),
        "participant" | "participantId" => json!("9950:SK2120345678"),
        "icd" => json!("9950"),
        "ico" => json!("31322832"),
        "profile" => json!("peppol-bis3-sk"),
        "issued_from" => json!("2027-01-01"),
        "issued_to" => json!("2027-01-31"),
        "updated_since" => json!("2027-01-15T08:00:00Z"),
        "limit" => json!(50),
        _ => return None,
    })
}

/// Add the examples to one operation of the serialised description.
pub fn add(operation: &mut Value) {
    let id = operation["operationId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if let Some(content) = operation
        .pointer_mut("/requestBody/content")
        .and_then(Value::as_object_mut)
    {
        if let Some(example) = json_body(&id) {
            if let Some(media) = content.get_mut("application/json") {
                media["example"] = example;
            }
        }
        if matches!(id.as_str(), "validate_invoice_v1" | "send_invoice_v1") {
            if let Some(media) = content.get_mut("application/xml") {
                media["example"] = json!(INVOICE);
            }
        }
    }
    if let Some(parameters) = operation
        .get_mut("parameters")
        .and_then(Value::as_array_mut)
    {
        for p in parameters {
            let name = p["name"].as_str().unwrap_or_default().to_string();
            if p.get("example").is_none() {
                if let Some(example) = parameter(&id, &name) {
                    p["example"] = example;
                }
            }
        }
    }
}
