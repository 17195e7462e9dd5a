//! The bodies of the upload routes: multipart bodies typed field by field, raw XML bodies as
//! bytes. The handlers read multipart streams part by part (with limits while reading), so
//! there is no struct for utoipa to describe them from: they are written here, beside the
//! description they fill.

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

/// Put the schema of `path`'s multipart body into `operation`'s request body, and declare
/// its raw XML bodies as bytes.
pub fn describe(path: &str, operation: &mut Value) {
    let Some(content) = operation
        .get_mut("requestBody")
        .and_then(|b| b.get_mut("content"))
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    // A raw XML body is the document's bytes, sent as they are (any encoding its XML
    // declaration names): without a schema, or as a bare string, generated clients either
    // leave the operation out or cannot send a file.
    for (media_type, entry) in content.iter_mut() {
        if media_type.ends_with("/xml") {
            entry["schema"] = json!({
                "type": "string",
                "format": "binary",
                "contentMediaType": media_type,
                "description": "The XML document's bytes"
            });
        }
    }
    // A send of a conversion (`?conversion_id=`) has no body: the document is the
    // conversion's.
    if path == "/v1/invoice/send" {
        operation["requestBody"]["required"] = json!(false);
        operation["requestBody"]["description"] = json!(
            "The UBL invoice or credit note; no body when `conversion_id` names a conversion"
        );
        return;
    }
    let Some(schema) = schema(path) else { return };
    let entry = content
        .entry("multipart/form-data")
        .or_insert_with(|| json!({}));
    entry["schema"] = schema;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_xml_bodies_are_bytes_and_multipart_bodies_are_typed() {
        let mut validate = json!({"requestBody": {"content": {
            "application/xml": {},
            "multipart/form-data": {}
        }}});
        describe("/v1/invoice/validate", &mut validate);
        let content = &validate["requestBody"]["content"];
        assert_eq!(content["application/xml"]["schema"]["type"], "string");
        assert_eq!(content["application/xml"]["schema"]["format"], "binary");
        assert_eq!(
            content["multipart/form-data"]["schema"]["required"],
            json!(["file"])
        );
        let mut send = json!({"requestBody": {"content": {"application/xml": {"schema": {"type": "string"}}}}});
        describe("/v1/invoice/send", &mut send);
        assert_eq!(
            send["requestBody"]["content"]["application/xml"]["schema"]["format"],
            "binary"
        );
    }
}
