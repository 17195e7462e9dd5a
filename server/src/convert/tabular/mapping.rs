//! Mapping profiles: which column header fills which draft field, and how the file writes
//! numbers and dates. Shipped profiles live in `convert/mappings/*.json`; clients may send
//! their own in the same JSON shape.

use super::codes::{self, fold};
use super::fields::{self, FieldKind, LINE_PREFIX};
use super::values::{self, DateOrder};
use super::TabularError;
use chrono::format::{Item, StrftimeItems};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Confidence of a value taken from a mapping's `defaults` when no weight is given.
pub const DEFAULT_CONFIDENCE: f32 = 0.9;

/// Fields every file must have a column for; an inner list is satisfied by any of its
/// paths (a line needs a unit price or a net amount).
pub const REQUIRED: [&[&str]; 4] = [
    &["number"],
    &["issue_date"],
    &["lines.name"],
    &["lines.unit_price", "lines.net_amount"],
];

/// A mapping profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mapping {
    /// Stable identifier, e.g. `generic`; `[a-z0-9_-]`, at most 64 characters.
    pub id: String,
    /// Human-readable name for pickers.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Column header → draft path (`number`, `seller.vat_id`, `lines.quantity`, `kind`).
    /// Several headers may name the same path (spellings of one column); headers are
    /// compared without case, accents and punctuation.
    pub columns: BTreeMap<String, String>,
    /// CSV delimiter; detected from the file when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delimiter: Option<char>,
    /// `.` or `,`: decides numbers like `1,234` that could be read either way.
    #[serde(default = "default_decimal")]
    pub decimal_separator: char,
    /// Day/month order for dates like `03/04/2027` that could be read either way.
    #[serde(default)]
    pub date_order: DateOrder,
    /// chrono formats (`%d.%m.%Y`) this export uses; a date matching one is trusted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub date_formats: Vec<String>,
    /// Values for fields the file does not carry (path → value), e.g. the seller of an
    /// export that only lists buyers.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub defaults: BTreeMap<String, DefaultValue>,
    /// Worksheet to read; the best-matching sheet when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sheet: Option<String>,
}

fn default_decimal() -> char {
    '.'
}

/// A default as text, as a JSON number (`"lines.vat_rate": 23`), or with the confidence
/// the value deserves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum DefaultValue {
    Text(String),
    Number(serde_json::Number),
    Weighted { value: String, confidence: f32 },
}

impl DefaultValue {
    /// The value as the text a cell would hold.
    pub fn value(&self) -> String {
        match self {
            DefaultValue::Text(v) | DefaultValue::Weighted { value: v, .. } => v.clone(),
            DefaultValue::Number(n) => n.to_string(),
        }
    }

    pub fn confidence(&self) -> f32 {
        match self {
            DefaultValue::Text(_) | DefaultValue::Number(_) => DEFAULT_CONFIDENCE,
            DefaultValue::Weighted { confidence, .. } => *confidence,
        }
    }
}

const SHIPPED: [&str; 2] = [
    include_str!("../mappings/generic.json"),
    include_str!("../mappings/sk-accounting.json"),
];

/// The shipped mappings, the template's (`generic`) first.
pub fn mappings() -> Vec<Mapping> {
    // The shipped files are checked by the tests, so none is dropped in practice.
    SHIPPED
        .iter()
        .filter_map(|json| Mapping::from_json(json.as_bytes()).ok())
        .collect()
}

/// A shipped mapping by id.
pub fn mapping(id: &str) -> Option<Mapping> {
    mappings().into_iter().find(|m| m.id == id)
}

/// How a header row lines up with a mapping.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    /// Per column of the row: the draft path it fills.
    pub columns: Vec<Option<String>>,
    /// Non-empty headers the mapping does not use (or that repeat a mapped path).
    pub unmapped: Vec<String>,
    /// Required fields without a column, as the headers the mapping expects.
    pub missing: Vec<String>,
}

impl Resolved {
    pub fn matched(&self) -> usize {
        self.columns.iter().flatten().count()
    }
}

impl Mapping {
    /// Parse and check a mapping sent by a client (or shipped).
    pub fn from_json(bytes: &[u8]) -> Result<Mapping, TabularError> {
        let mapping: Mapping =
            serde_json::from_slice(bytes).map_err(|e| TabularError::MappingJson(e.to_string()))?;
        mapping.check()?;
        Ok(mapping)
    }

    /// Every path known, every required field mapped, options in range, defaults parseable.
    pub fn check(&self) -> Result<(), TabularError> {
        let bad = |m: String| Err(TabularError::BadMapping(m));
        let id_ok = !self.id.is_empty()
            && self.id.len() <= 64
            && self
                .id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if !id_ok {
            return bad(format!(
                "id `{}` must be 1 to 64 characters of a-z, 0-9, `-` and `_`",
                self.id
            ));
        }
        let mut folded: BTreeMap<String, (&str, &str)> = BTreeMap::new();
        for (header, path) in &self.columns {
            fields::business_term(path).map_err(|hint| TabularError::UnknownPath {
                column: header.clone(),
                path: path.clone(),
                hint,
            })?;
            let key = fold(header);
            if key.is_empty() {
                return bad(format!("column header `{header}` has no letters or digits"));
            }
            if let Some((other, other_path)) = folded.insert(key, (header, path)) {
                if other_path != path {
                    return bad(format!(
                        "columns `{other}` and `{header}` are the same header once case and \
                         accents are ignored, but map to `{other_path}` and `{path}`"
                    ));
                }
            }
        }
        for group in REQUIRED {
            if !group.iter().any(|p| self.columns.values().any(|v| v == p)) {
                return bad(format!(
                    "no column maps to {}, which every invoice needs",
                    group
                        .iter()
                        .map(|p| format!("`{p}`"))
                        .collect::<Vec<_>>()
                        .join(" or ")
                ));
            }
        }
        if !matches!(self.decimal_separator, '.' | ',') {
            return bad(format!(
                "decimal_separator `{}` must be `.` or `,`",
                self.decimal_separator
            ));
        }
        if let Some(d) = self.delimiter {
            if !matches!(d, ',' | ';' | '\t' | '|') {
                return bad(format!("delimiter {d:?} must be `,`, `;`, a tab or `|`"));
            }
        }
        for format in &self.date_formats {
            let items: Vec<Item> = StrftimeItems::new(format).collect();
            if items.iter().any(|i| matches!(i, Item::Error)) {
                return bad(format!(
                    "date format `{format}` is not a valid chrono format"
                ));
            }
        }
        for (path, default) in &self.defaults {
            self.check_default(path, default)?;
        }
        Ok(())
    }

    fn check_default(&self, path: &str, default: &DefaultValue) -> Result<(), TabularError> {
        let bad = |reason: String| {
            Err(TabularError::BadDefault {
                path: path.to_string(),
                reason,
            })
        };
        if let Err(hint) = fields::business_term(path) {
            return bad(format!("not a draft field path{hint}"));
        }
        if !(0.0..=1.0).contains(&default.confidence()) {
            return bad("confidence must be between 0 and 1".into());
        }
        let value = default.value();
        let value = value.as_str();
        if value.trim().is_empty() {
            return bad("the value is empty".into());
        }
        let parsed = match fields::kind_of(path) {
            FieldKind::Text(kind) => match codes::check(kind, value).problem {
                Some(problem) => Err(problem),
                None => Ok(()),
            },
            FieldKind::Amount | FieldKind::Rate => {
                // JSON numbers always use a decimal point.
                let decimal = match default {
                    DefaultValue::Number(_) => '.',
                    _ => self.decimal_separator,
                };
                values::parse_number(value, decimal).map(|_| ())
            }
            FieldKind::Date => {
                values::parse_date(value, &self.date_formats, self.date_order).map(|_| ())
            }
            FieldKind::DocKind => codes::kind(value).map(|_| ()),
        };
        match parsed {
            Ok(()) => Ok(()),
            Err(reason) => bad(reason),
        }
    }

    /// Line a header row up with this mapping.
    pub fn resolve(&self, headers: &[String]) -> Resolved {
        let lookup: BTreeMap<String, &str> = self
            .columns
            .iter()
            .map(|(h, p)| (fold(h), p.as_str()))
            .collect();
        let mut columns = Vec::with_capacity(headers.len());
        let mut unmapped = Vec::new();
        for header in headers {
            let path = lookup.get(&fold(header)).copied();
            match path {
                Some(p) if !columns.iter().flatten().any(|seen: &String| seen == p) => {
                    columns.push(Some(p.to_string()));
                }
                _ => {
                    columns.push(None);
                    if !header.trim().is_empty() {
                        unmapped.push(header.clone());
                    }
                }
            }
        }
        let missing = REQUIRED
            .iter()
            .filter(|group| {
                !group
                    .iter()
                    .any(|p| columns.iter().flatten().any(|c| c == p))
            })
            .map(|group| self.expected_headers(group))
            .collect();
        Resolved {
            columns,
            unmapped,
            missing,
        }
    }

    /// `Unit price` or `Line net amount`: the headers this mapping expects for any of
    /// `paths`, for error messages.
    fn expected_headers(&self, paths: &[&str]) -> String {
        paths
            .iter()
            .map(|p| {
                let headers: Vec<String> = self
                    .columns
                    .iter()
                    .filter(|(_, v)| v == p)
                    .map(|(h, _)| format!("`{h}`"))
                    .collect();
                if headers.is_empty() {
                    format!("`{p}`")
                } else {
                    headers.join(" / ")
                }
            })
            .collect::<Vec<_>>()
            .join(" or ")
    }

    /// The default for a path, if the mapping has one.
    pub fn default_for(&self, path: &str) -> Option<&DefaultValue> {
        self.defaults.get(path)
    }

    /// Line-level defaults (`lines.*`), as (suffix, default).
    pub fn line_defaults(&self) -> impl Iterator<Item = (&str, &DefaultValue)> {
        self.defaults
            .iter()
            .filter_map(|(p, d)| p.strip_prefix(LINE_PREFIX).map(|s| (s, d)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_mappings_parse_and_are_found_by_id() {
        assert_eq!(mappings().len(), SHIPPED.len());
        for json in SHIPPED {
            Mapping::from_json(json.as_bytes()).unwrap();
        }
        let sk = mapping("sk-accounting").unwrap();
        assert_eq!(sk.decimal_separator, ',');
        assert_eq!(sk.delimiter, Some(';'));
        assert!(mapping("generic").is_some());
        assert!(mapping("nope").is_none());
    }

    #[test]
    fn client_mappings_get_clear_errors() {
        let err = |json: &str| Mapping::from_json(json.as_bytes()).unwrap_err().to_string();
        let base =
            r#""Nr":"number","Date":"issue_date","Item":"lines.name","Price":"lines.unit_price""#;
        let ok = format!(r#"{{"id":"mine","columns":{{{base}}}}}"#);
        let m = Mapping::from_json(ok.as_bytes()).unwrap();
        assert_eq!((m.decimal_separator, m.date_order), ('.', DateOrder::Dmy));

        let e = err(&format!(
            r#"{{"id":"mine","columns":{{{base},"Colour":"seller.colour"}}}}"#
        ));
        assert!(
            e.contains("`Colour`") && e.contains("`seller.colour`"),
            "{e}"
        );
        let e = err(&format!(
            r#"{{"id":"mine","columns":{{{base},"Qty":"lines[0].quantity"}}}}"#
        ));
        assert!(e.contains("without an index"), "{e}");
        let e = err(r#"{"id":"mine","columns":{"Nr":"number"}}"#);
        assert!(e.contains("`issue_date`"), "{e}");
        let e = err(&format!(r#"{{"id":"mine","colums":{{{base}}}}}"#));
        assert!(e.contains("colums"), "{e}");
        let e = err(&format!(r#"{{"id":"Mine!","columns":{{{base}}}}}"#));
        assert!(e.contains("id `Mine!`"), "{e}");
        let e = err(&format!(
            r#"{{"id":"m","decimal_separator":";","columns":{{{base}}}}}"#
        ));
        assert!(e.contains("decimal_separator"), "{e}");
        let e = err(&format!(
            r#"{{"id":"m","date_formats":["%Q"],"columns":{{{base}}}}}"#
        ));
        assert!(e.contains("%Q"), "{e}");
        let e = err(&format!(
            r#"{{"id":"m","columns":{{{base}}},"defaults":{{"seller.vat_id":"SK123"}}}}"#
        ));
        assert!(e.contains("seller.vat_id"), "{e}");
        let e = err(&format!(
            r#"{{"id":"m","columns":{{{base},"nr.":"note"}}}}"#
        ));
        assert!(e.contains("same header"), "{e}");
        let with_defaults = format!(
            r#"{{"id":"m","columns":{{{base}}},"defaults":{{"seller.vat_id":"SK2121234577",
            "currency":{{"value":"EUR","confidence":0.8}},"kind":"381","lines.unit":"HUR",
            "lines.vat_rate":23}}}}"#
        );
        let m = Mapping::from_json(with_defaults.as_bytes()).unwrap();
        assert_eq!(
            m.default_for("currency").map(DefaultValue::confidence),
            Some(0.8)
        );
        assert_eq!(m.line_defaults().count(), 2);
        assert_eq!(
            m.default_for("lines.vat_rate")
                .map(DefaultValue::value)
                .as_deref(),
            Some("23")
        );
    }

    #[test]
    fn headers_resolve_without_case_and_accents() {
        let sk = mapping("sk-accounting").unwrap();
        let headers: Vec<String> = [
            "cislo faktury",
            "Dátum vystavenia",
            "POLOŽKA",
            "Cena za MJ bez DPH",
            "Farba",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let r = sk.resolve(&headers);
        assert_eq!(r.missing, Vec::<String>::new());
        assert_eq!(r.columns[0].as_deref(), Some("number"));
        assert_eq!(r.unmapped, ["Farba"]);
        let r = sk.resolve(&headers[..2]);
        assert_eq!(r.missing.len(), 2);
        assert!(
            r.missing[1].contains("`Cena za MJ bez DPH`"),
            "{:?}",
            r.missing
        );
    }
}
