//! The multipart bodies of the upload routes, typed field by field. The handlers read
//! multipart streams part by part (with limits while reading), so there is no struct for
//! utoipa to describe them from: they are written here, beside the description they fill.

use serde_json::{json, Value};

fn binary(description: &str) -> Value {
    json!({ "type": "string", "format": "binary", "description": description })
}

fn text(description: &str) -> Value {
    json!({ "type": "string", "description": description })
}

/// The multipart schema of `path`'s body, if it takes one.
pub fn schema(path: &str) -> Option<Value> {
    let profile = text("Profile to validate against (e.g. `peppol-bis3-sk`); detected when absent");
    match path {
        "/api/validate" => Some(json!({
            "type": "object",
            "required": ["files[]"],
            "properties": {
                "files[]": {
                    "type": "array",
                    "minItems": 1,
                    "description": "The XML documents, one part each (at most `max_files`)",
                    "items": binary("A UBL 2.1 invoice or credit note")
                },
                "profile": profile
            }
        })),
        "/v1/invoice/validate" => Some(json!({
            "type": "object",
            "required": ["file"],
            "properties": {
                "file": binary("The UBL 2.1 invoice or credit note"),
                "profile": profile
            }
        })),
        "/api/send" => Some(json!({
            "type": "object",
            "required": ["xml_file"],
            "properties": {
                "xml_file": binary("The UBL 2.1 invoice or credit note to send"),
                "profile": profile,
                "resubmission_of": text("The invoice (`inv_...`) this one corrects"),
                "allow_duplicate": {
                    "type": "string",
                    "enum": ["true", "false"],
                    "description": "`true` sends a document already queued, in flight or delivered again on purpose"
                }
            }
        })),
        "/api/convert" | "/v1/invoice/convert" => Some(json!({
            "type": "object",
            "required": ["file"],
            "properties": {
                "file": binary("A PDF, Excel workbook (.xlsx, .ods) or CSV file with one or more invoices"),
                "mapping": text("A shipped mapping id, or a mapping as JSON; detected from the columns when absent"),
                "profile": profile
            }
        })),
        _ => None,
    }
}

/// Put the schema of `path`'s multipart body into `operation`'s request body.
pub fn describe(path: &str, operation: &mut Value) {
    let Some(schema) = schema(path) else { return };
    let Some(content) = operation
        .get_mut("requestBody")
        .and_then(|b| b.get_mut("content"))
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let entry = content
        .entry("multipart/form-data")
        .or_insert_with(|| json!({}));
    entry["schema"] = schema;
}
