//! The JSON invoice: [`InvoiceView`] as a JSON object, accepted wherever a UBL document
//! is (validation, sending, batches, feeds) and turned into Peppol BIS 3.0 UBL on arrival.
//! Its JSON Schema is [`schema_document`]; docs/integration.md describes it.

use std::borrow::Cow;

use axum::http::StatusCode;
use serde_json::{json, Value};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

use super::model::InvoiceView;
use crate::problem::Problem;

/// The media type of a JSON invoice; `application/json` is taken as well.
pub const MEDIA_TYPE: &str = "application/vnd.invex.invoice+json";

/// Where the JSON Schema is served, and its `$id` below the server's public URL.
pub const SCHEMA_PATH: &str = "/v1/schemas/invoice.json";

/// A JSON invoice that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct JsonError {
    pub message: String,
    /// JSON path of the offending member (`lines[2].quantity`), when known.
    pub path: Option<String>,
    pub line: usize,
    pub column: usize,
}

impl JsonError {
    pub fn problem(&self) -> Problem {
        let mut p = Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid-invoice-json",
            "The JSON invoice cannot be read",
            self.message.clone(),
        )
        .with("line", self.line)
        .with("column", self.column);
        if let Some(path) = &self.path {
            p = p.with("path", path.clone());
        }
        p
    }
}

/// What a document is said to be, by the request that brought it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Declared {
    /// XML (UBL): parsed as XML whatever it looks like.
    Xml,
    /// A JSON invoice.
    Json,
    /// Nothing said (a ZIP member, a body without a content type): told by its first byte.
    ByContent,
}

impl Declared {
    /// A part of a multipart form: a JSON invoice when its content type says JSON or its
    /// file name ends in `.json`, else XML. A form part's content type is often left out,
    /// so XML stays the default: a part that merely looks like JSON is not taken as one.
    pub fn of_part(content_type: Option<&str>, file_name: Option<&str>) -> Declared {
        let json_type = content_type.is_some_and(is_json_type);
        let json_name = file_name.is_some_and(|n| {
            n.rsplit_once('.')
                .is_some_and(|(_, ext)| ext.eq_ignore_ascii_case("json"))
        });
        if json_type || json_name {
            Declared::Json
        } else {
            Declared::Xml
        }
    }

    /// A raw request body with this (lowercase, parameterless) content type; empty when
    /// absent.
    pub fn of_body(content_type: &str) -> Declared {
        if content_type.is_empty() {
            Declared::ByContent
        } else if is_json_type(content_type) {
            Declared::Json
        } else {
            Declared::Xml
        }
    }
}

/// `application/json`, the JSON invoice's own type, or another `+json` type.
pub fn is_json_type(content_type: &str) -> bool {
    let t = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    t == "application/json" || t.ends_with("+json")
}

/// Whether `bytes` look like a JSON object (its first non-blank byte, after a BOM, is `{`)
/// rather than XML, whose first is `<`.
pub fn is_json(bytes: &[u8]) -> bool {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    bytes
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'{')
}

/// Read a JSON invoice. serde_json bounds nesting (128 levels), so a hostile document
/// costs its length and no more.
pub fn parse(bytes: &[u8]) -> Result<InvoiceView, JsonError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let view: InvoiceView = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        JsonError {
            message: inner.to_string(),
            path: (path != ".").then_some(path),
            line: inner.line(),
            column: inner.column(),
        }
    })?;
    de.end().map_err(|e| JsonError {
        message: format!("after the invoice object: {e}"),
        path: None,
        line: e.line(),
        column: e.column(),
    })?;
    // serde takes a struct from an array of its fields in order as well as from an object;
    // the JSON invoice is objects only (as its schema says), so an array where the model
    // has an object is refused. Found by reading what was parsed back: where the model
    // writes an object, the input must have had one.
    let input: Value = serde_json::from_slice(bytes).map_err(|e| JsonError {
        message: e.to_string(),
        path: None,
        line: e.line(),
        column: e.column(),
    })?;
    let model = serde_json::to_value(&view).unwrap_or(Value::Null);
    if let Some(path) = array_for_object(&input, &model, String::new()) {
        return Err(JsonError {
            message: format!("`{path}` must be an object, not an array"),
            path: Some(path),
            line: 1,
            column: 1,
        });
    }
    Ok(view)
}

/// The path of the first place where `input` has an array and `model` an object.
fn array_for_object(input: &Value, model: &Value, at: String) -> Option<String> {
    match (input, model) {
        (Value::Array(_), Value::Object(_)) => Some(at),
        (Value::Array(a), Value::Array(b)) => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| array_for_object(x, y, format!("{at}[{i}]"))),
        (Value::Object(a), Value::Object(b)) => a.iter().find_map(|(k, x)| {
            let at = if at.is_empty() {
                k.clone()
            } else {
                format!("{at}.{k}")
            };
            b.get(k).and_then(|y| array_for_object(x, y, at))
        }),
        _ => None,
    }
}

/// `bytes` as XML: a JSON invoice (declared, or by its content) is written as UBL, anything
/// else is passed on as it is (to be parsed, and refused if it is not XML, by the caller).
pub fn to_xml(bytes: &[u8], declared: Declared) -> Result<Cow<'_, [u8]>, JsonError> {
    let json = match declared {
        Declared::Xml => false,
        Declared::Json => true,
        Declared::ByContent => is_json(bytes),
    };
    if json {
        Ok(Cow::Owned(super::write(&parse(bytes)?)))
    } else {
        Ok(Cow::Borrowed(bytes))
    }
}

/// The JSON of an invoice.
pub fn to_string(view: &InvoiceView) -> String {
    serde_json::to_string(view).unwrap_or_else(|_| "{}".into())
}

/// The JSON Schema (2020-12) of the JSON invoice, made from the same types the OpenAPI
/// description shows, with `$ref`s pointing into its own `$defs`.
/// `$id` is the schema's address under `public_url`, when the server knows its own.
pub fn schema_document(public_url: Option<&str>) -> Value {
    let mut defs = Vec::new();
    InvoiceView::schemas(&mut defs);
    let mut defs: serde_json::Map<String, Value> = defs
        .into_iter()
        .map(|(name, s)| (name, to_value(&s)))
        .collect();
    let root = to_value(&<InvoiceView as PartialSchema>::schema());
    defs.insert(InvoiceView::name().into_owned(), root.clone());
    let mut doc = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "invex JSON invoice (EN 16931 business terms)",
        "description": "An invoice or credit note, business term by business term (BT-n in each description). Amounts, quantities and rates are decimal strings; dates are YYYY-MM-DD. invex writes it as Peppol BIS Billing 3.0 UBL. See docs/integration.md.",
        "$ref": format!("#/$defs/{}", InvoiceView::name()),
        "$defs": defs,
    });
    rewrite_refs(&mut doc);
    drop_reference_defaults(&mut doc);
    if let (Some(url), Some(map)) = (public_url, doc.as_object_mut()) {
        let id = format!("{}{SCHEMA_PATH}", url.trim_end_matches('/'));
        map.insert("$id".into(), Value::String(id));
    }
    doc
}

fn to_value(s: &RefOr<utoipa::openapi::schema::Schema>) -> Value {
    serde_json::to_value(s).unwrap_or(Value::Null)
}

/// A member whose schema is another schema (`$ref`, or utoipa's `oneOf` of one) gets a
/// `default` from serde's `default` (an empty object): it says nothing an absent member does
/// not, and client generators refuse a default on an object property. Dropped.
pub fn drop_reference_defaults(v: &mut Value) {
    match v {
        Value::Object(map) => {
            let reference = map.contains_key("$ref")
                || map
                    .get("oneOf")
                    .and_then(Value::as_array)
                    .is_some_and(|alts| alts.iter().any(|a| a.get("$ref").is_some()));
            if reference {
                map.remove("default");
            }
            map.values_mut().for_each(drop_reference_defaults);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_reference_defaults),
        _ => {}
    }
}

/// `#/components/schemas/X` (OpenAPI) → `#/$defs/X` (a standalone JSON Schema).
fn rewrite_refs(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, child) in map.iter_mut() {
                if k == "$ref" {
                    if let Value::String(s) = child {
                        if let Some(name) = s.strip_prefix("#/components/schemas/") {
                            *s = format!("#/$defs/{name}");
                        }
                    }
                } else {
                    rewrite_refs(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
}
