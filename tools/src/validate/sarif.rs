//! `--format sarif`: one SARIF 2.1.0 log with one run. `tool.driver` is invex with its
//! version and, as reporting descriptors, the rules that fired (id, message as the short
//! description, remediation as help, default level, pack and owner); each finding is a
//! result with its rule, level (fatal → error, warning → warning, information → note),
//! message and location: the file as a URI reference and the line and column of the node,
//! with the node's XPath as a logical location. Documents that could not be validated
//! are tool execution notifications of the run's invocation.
//!
//! Written with serde_json, which escapes every string; file paths are percent-encoded
//! into URI references (`file://` URIs for absolute paths).

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

use invex_engine::report::{Finding, Report, Severity};
use invex_engine::rules::RuleSet;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::{json, Value};

use super::{one_line, Document, Sink, Summary};

/// The schema a log names (the OASIS errata 01 schema of SARIF 2.1.0).
pub const SARIF_SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// What stays as it is in a path segment of a URI reference: RFC 3986 unreserved.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

#[derive(Default)]
pub struct Sarif {
    /// Rule id → its descriptor and its index in `rules`.
    rules: BTreeMap<String, usize>,
    descriptors: Vec<Value>,
    results: Vec<Value>,
    notifications: Vec<Value>,
}

/// A document name as a URI reference: each path segment percent-encoded, `/` kept; an
/// absolute path as a `file://` URI.
pub fn uri(name: &str) -> String {
    let path = Path::new(name);
    let encoded: Vec<String> = name
        .split('/')
        .map(|segment| utf8_percent_encode(segment, SEGMENT).to_string())
        .collect();
    let joined = encoded.join("/");
    if path.is_absolute() {
        format!("file://{joined}")
    } else {
        joined
    }
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Fatal => "error",
        Severity::Warning => "warning",
        Severity::Information => "note",
    }
}

impl Sarif {
    pub fn new() -> Sarif {
        Sarif::default()
    }

    /// The index of `f`'s rule among the descriptors, added on first sight from the rule
    /// set's definition (else from the finding).
    fn rule_index(&mut self, f: &Finding, rules: &RuleSet) -> usize {
        if let Some(i) = self.rules.get(&f.rule_id) {
            return *i;
        }
        let pack = rules.packs().find(|p| p.reference() == f.pack);
        let check = pack.and_then(|p| p.check(&f.rule_id));
        let schema_rule = pack
            .and_then(|p| p.schema.as_ref())
            .and_then(|s| s.rule(&f.rule_id));
        let (short, help) = match (check, schema_rule) {
            (Some(c), _) => (
                one_line(&c.message),
                c.remediation
                    .as_deref()
                    .map(one_line)
                    .unwrap_or_else(|| one_line(&f.remediation)),
            ),
            (None, Some(s)) => (one_line(&s.title), one_line(&s.remediation)),
            (None, None) => (one_line(&f.message), one_line(&f.remediation)),
        };
        let mut descriptor = json!({
            "id": f.rule_id,
            "shortDescription": { "text": if short.is_empty() { f.rule_id.clone() } else { short } },
            "defaultConfiguration": {
                "level": level(check.map_or(f.severity, |c| c.flag))
            },
            "properties": {
                "pack": f.pack,
                "layer": f.layer,
            },
        });
        if !help.is_empty() {
            descriptor["help"] = json!({ "text": help });
        }
        if let Some(owner) = &f.owner {
            descriptor["properties"]["owner"] = json!(owner);
        }
        if !f.business_terms.is_empty() {
            descriptor["properties"]["businessTerms"] = json!(f.business_terms);
        }
        let index = self.descriptors.len();
        self.descriptors.push(descriptor);
        self.rules.insert(f.rule_id.clone(), index);
        index
    }

    fn result(&mut self, uri: &str, report: &Report, rules: &RuleSet, f: &Finding) -> Value {
        let index = self.rule_index(f, rules);
        let mut physical = json!({ "artifactLocation": { "uri": uri } });
        if f.location.line > 0 {
            physical["region"] = json!({
                "startLine": f.location.line,
                "startColumn": f.location.column.max(1),
            });
        }
        let mut message = one_line(&f.message);
        if let Some(about) = &f.about_rule {
            message.push_str(&format!(" [rule {}]", one_line(about)));
        }
        json!({
            "ruleId": f.rule_id,
            "ruleIndex": index,
            "level": level(f.severity),
            "message": { "text": message },
            "locations": [{
                "physicalLocation": physical,
                "logicalLocations": [{
                    "fullyQualifiedName": f.location.path,
                    "kind": "element",
                }],
            }],
            "properties": {
                "profile": report.profile,
                "pack": f.pack,
            },
        })
    }
}

impl Sink for Sarif {
    fn document(&mut self, _out: &mut dyn Write, doc: &Document<'_>) -> io::Result<()> {
        let uri = uri(doc.name);
        match doc.result {
            Ok((report, rules)) => {
                for f in &report.findings {
                    let result = self.result(&uri, report, rules, f);
                    self.results.push(result);
                }
                if !report.omitted.is_zero() {
                    self.notifications.push(json!({
                        "level": "warning",
                        "message": { "text": format!(
                            "{}: {} more finding(s) counted but not listed",
                            doc.name,
                            report.omitted.total()
                        ) },
                        "locations": [{ "physicalLocation": { "artifactLocation": { "uri": uri } } }],
                    }));
                }
            }
            Err(e) => self.notifications.push(json!({
                "level": "error",
                "message": { "text": format!("{}: not validated: {}", doc.name, one_line(e)) },
                "locations": [{ "physicalLocation": { "artifactLocation": { "uri": uri } } }],
            })),
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut dyn Write, summary: &Summary) -> io::Result<()> {
        let log = json!({
            "$schema": SARIF_SCHEMA,
            "version": "2.1.0",
            "runs": [{
                "tool": {
                    "driver": {
                        "name": "invex",
                        "version": env!("CARGO_PKG_VERSION"),
                        "rules": std::mem::take(&mut self.descriptors),
                    }
                },
                "invocations": [{
                    "executionSuccessful": summary.errors == 0,
                    "toolExecutionNotifications": std::mem::take(&mut self.notifications),
                }],
                "results": std::mem::take(&mut self.results),
            }],
        });
        serde_json::to_writer_pretty(&mut *out, &log).map_err(io::Error::other)?;
        writeln!(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_uri_references() {
        assert_eq!(uri("in/a b%.xml"), "in/a%20b%25.xml");
        assert_eq!(uri("/tmp/x/ž.xml"), "file:///tmp/x/%C5%BE.xml");
        assert_eq!(uri("<stdin>"), "%3Cstdin%3E");
        assert_eq!(uri("a:b.xml"), "a%3Ab.xml");
    }
}
