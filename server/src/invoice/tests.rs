//! UBL → JSON → UBL keeps every business term of the model, on every UBL document of the
//! conformance corpus; the written UBL keeps a valid example valid; JSON that cannot be
//! read is refused with where and why.

use std::path::{Path, PathBuf};

use invex_engine::document::Document;
use invex_engine::schema::Schema;

use super::json;
use super::*;
use crate::convert::roundtrip::corpus;
use crate::convert::ubl::tests::fatals;

/// Every UBL file under `dir` (examples and test documents alike).
fn ubl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            ubl_files(&path, out);
        } else if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("xml"))
        {
            out.push(path);
        }
    }
}

/// The corpus and every UBL file in it (the tests that call this are ignored when the
/// corpus was missing at build time).
fn corpus_documents() -> (PathBuf, Vec<PathBuf>) {
    let corpus = corpus();
    let mut files = Vec::new();
    ubl_files(&corpus, &mut files);
    files.sort();
    assert!(!files.is_empty(), "no UBL under {}", corpus.display());
    (corpus, files)
}

/// The UBL 2.1 Invoice and CreditNote schemas shipped with the rule packs.
fn ubl_schema() -> &'static Schema {
    static SCHEMA: std::sync::OnceLock<Schema> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rulepacks/ubl-2.1-xsd/2.1/xsd");
        Schema::ubl_2_1(&dir).expect("the UBL 2.1 schemas compile")
    })
}

fn schema_clean(xml: &[u8]) -> bool {
    Document::parse(xml).is_ok_and(|doc| ubl_schema().check(&doc).is_empty())
}

/// `view` with what the writer states when a view does not: the Peppol specification and
/// process, and the type code of the kind of document.
fn stated(mut view: InvoiceView) -> InvoiceView {
    view.customization_id
        .get_or_insert_with(|| write::CUSTOMIZATION_ID.into());
    view.profile_id
        .get_or_insert_with(|| write::PROFILE_ID.into());
    let type_code = match view.kind {
        DocumentKind::Invoice => "380",
        DocumentKind::CreditNote => "381",
    };
    view.type_code.get_or_insert_with(|| type_code.into());
    view
}

/// The members where two JSON values differ, as `path: want → got`.
fn differences(at: &str, want: &serde_json::Value, got: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value;
    match (want, got) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let (x, y) = (&a.get(k), &b.get(k));
                let (x, y) = (x.unwrap_or(&Value::Null), y.unwrap_or(&Value::Null));
                differences(&format!("{at}.{k}"), x, y, out);
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                differences(&format!("{at}[{i}]"), x, y, out);
            }
        }
        (a, b) if a != b => out.push(format!("{at}: {a} → {b}")),
        _ => {}
    }
}

#[test]
#[cfg_attr(
    invex_no_corpus,
    ignore = "no conformance corpus: set INVEX_CONFORMANCE or provide ../shared/conformance (.ci/run requires it)"
)]
fn every_corpus_document_survives_ubl_json_ubl() {
    let (corpus, files) = corpus_documents();
    let mut read_count = 0;
    let mut failures = Vec::new();
    let mut refused = Vec::new();
    let mut clean = 0;
    for path in &files {
        let name = path.strip_prefix(&corpus).unwrap_or(path).display();
        let xml = std::fs::read(path).unwrap();
        // Test documents that are not UBL invoices (other roots) have no terms to carry.
        let Ok(view) = read(&xml) else { continue };
        read_count += 1;
        let text = json::to_string(&view);
        // Test documents with a value that is no amount or date (`123` as an issue date)
        // have no JSON invoice: it refuses such values, naming them.
        let from_json = match json::parse(text.as_bytes()) {
            Ok(v) => v,
            Err(e) if e.message.contains("is not a d") => {
                refused.push(format!("{name}: {}", e.message));
                continue;
            }
            Err(e) => panic!("{name}: {e}"),
        };
        if from_json != view {
            failures.push(format!("{name}: JSON changes the terms\n{text}"));
            continue;
        }
        let written = write(&from_json);
        // Where the source meets the UBL 2.1 schema, so does what invex writes (element
        // order, nesting, required children).
        let source_clean = schema_clean(&xml);
        clean += usize::from(source_clean);
        if source_clean && !schema_clean(&written) {
            let doc = Document::parse(&written).unwrap();
            let found: Vec<String> = ubl_schema()
                .check(&doc)
                .iter()
                .map(|f| format!("{f:?}"))
                .collect();
            failures.push(format!(
                "{name}: the written UBL breaks the schema: {found:#?}"
            ));
            continue;
        }
        let again = read(&written).unwrap_or_else(|e| panic!("{name}: {e}"));
        let view = stated(view);
        if again != view {
            let mut diff = Vec::new();
            differences(
                "",
                &serde_json::to_value(&view).unwrap(),
                &serde_json::to_value(&again).unwrap(),
                &mut diff,
            );
            failures.push(format!("{name}: UBL changes {}", diff.join("; ")));
        }
    }
    assert!(read_count > 50, "only {read_count} UBL invoices were read");
    assert!(clean > 50, "only {clean} sources meet the schema");
    eprintln!(
        "{read_count} documents; {} refused as JSON for a value that is no amount or date:\n{}",
        refused.len(),
        refused.join("\n")
    );
    assert!(
        refused.iter().all(|r| r.contains("/unit/")),
        "only unit test documents may hold such values: {refused:#?}"
    );
    assert!(
        failures.is_empty(),
        "{} of {read_count} documents differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
#[cfg_attr(
    invex_no_corpus,
    ignore = "no conformance corpus: set INVEX_CONFORMANCE or provide ../shared/conformance (.ci/run requires it)"
)]
fn a_valid_corpus_example_written_from_its_json_stays_valid() {
    let (corpus, files) = corpus_documents();
    let mut checked = 0;
    let mut failures = Vec::new();
    for path in files.iter().filter(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.contains("example"))
    }) {
        let name = path.strip_prefix(&corpus).unwrap_or(path).display();
        let xml = std::fs::read(path).unwrap();
        let Ok(view) = read(&xml) else { continue };
        let profile = "en16931-ubl";
        if !fatals(&xml, profile).is_empty() {
            continue;
        }
        checked += 1;
        let written = write(&json::parse(json::to_string(&view).as_bytes()).unwrap());
        let fatal = fatals(&written, profile);
        if !fatal.is_empty() {
            failures.push(format!("{name}: {fatal:#?}"));
        }
    }
    assert!(checked > 10, "only {checked} valid examples");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A Slovak invoice as an integrator would send it.
pub(crate) const SLOVAK_JSON: &str = r#"{
  "number": "FV-2027-0042",
  "issue_date": "2027-01-15",
  "due_date": "2027-01-29",
  "currency": "EUR",
  "references": { "buyer_reference": "OBJ-7", "order": "PO-88" },
  "seller": {
    "name": "Dodávateľ s.r.o.",
    "endpoint": { "scheme": "0245", "value": "2022749619" },
    "legal_id": { "scheme": "0158", "value": "36421928" },
    "vat_id": "SK2022749619",
    "tax_id": "2022749619",
    "address": { "street": "Hlavná 1", "city": "Bratislava", "postcode": "81101", "country": "SK" },
    "contact": { "email": "fakturacia@dodavatel.sk" }
  },
  "buyer": {
    "name": "Odberateľ a.s.",
    "endpoint": { "scheme": "0245", "value": "2020317068" },
    "legal_id": { "scheme": "0158", "value": "35763469" },
    "vat_id": "SK2020317068",
    "address": { "street": "Mlynská 9", "city": "Košice", "postcode": "04001", "country": "SK" }
  },
  "payment_means": [{ "code": "58", "payment_id": "2027000042", "account_id": "SK3112000000198742637541" }],
  "lines": [
    { "id": "1", "name": "Konzultácie", "quantity": "10", "unit": "HUR", "unit_price": "80.00",
      "net_amount": "800.00", "vat_category": "S", "vat_rate": "23" }
  ],
  "vat_breakdown": [{ "category": "S", "rate": "23", "taxable": "800.00", "tax": "184.00" }],
  "vat_total": "184.00",
  "totals": { "line_total": "800.00", "tax_exclusive": "800.00", "tax_inclusive": "984.00", "payable": "984.00" }
}"#;

#[test]
fn a_json_invoice_becomes_valid_peppol_ubl() {
    let xml = json::to_xml(SLOVAK_JSON.as_bytes(), json::Declared::ByContent).unwrap();
    assert!(
        schema_clean(&xml),
        "the UBL 2.1 schema refuses the written invoice"
    );
    for profile in ["en16931-ubl", "peppol-bis3", "peppol-bis3-sk"] {
        let fatal = fatals(&xml, profile);
        assert!(fatal.is_empty(), "{profile}: {fatal:#?}");
    }
    let text = String::from_utf8(xml.into_owned()).unwrap();
    assert!(text.contains("<cbc:CustomizationID>urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0</cbc:CustomizationID>"));
    assert!(text.contains("<cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>"));
    assert!(
        text.contains("<cbc:Name>Odberateľ a.s.</cbc:Name>")
            || text.contains("<cbc:RegistrationName>Odberateľ a.s.</cbc:RegistrationName>")
    );
}

#[test]
fn a_json_credit_note_puts_its_due_date_and_project_where_ubl_wants_them() {
    let mut v: InvoiceView = json::parse(SLOVAK_JSON.as_bytes()).unwrap();
    v.kind = DocumentKind::CreditNote;
    v.references.project = Some("PRJ-1".into());
    v.tax_point_date = Some("2027-01-10".into());
    let xml = String::from_utf8(write(&v)).unwrap();
    assert!(xml.contains("<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>"));
    assert!(!xml.contains("<cbc:DueDate>"));
    assert!(xml.contains("<cbc:PaymentDueDate>2027-01-29</cbc:PaymentDueDate>"));
    assert!(!xml.contains("ProjectReference"));
    let tax_point = xml.find("<cbc:TaxPointDate>").unwrap();
    assert!(tax_point < xml.find("<cbc:CreditNoteTypeCode>").unwrap());
    assert_eq!(read(xml.as_bytes()).unwrap(), stated(v));
    assert!(
        schema_clean(xml.as_bytes()),
        "the UBL 2.1 schema refuses the credit note"
    );
    let fatal = fatals(xml.as_bytes(), "peppol-bis3");
    assert!(fatal.is_empty(), "{fatal:#?}");
}

#[test]
fn text_is_escaped_not_interpreted() {
    let mut v = InvoiceView {
        number: Some("</cbc:ID><cbc:ID>2".into()),
        notes: vec!["A & B <![CDATA[x]]> \"q\"".into()],
        ..InvoiceView::default()
    };
    v.seller.endpoint = Some(Identifier {
        scheme: Some("0245\" evil=\"1".into()),
        value: "1".into(),
    });
    let xml = write(&v);
    assert_eq!(read(&xml).unwrap(), stated(v));
}

#[test]
fn json_that_cannot_be_read_says_where_and_why() {
    let e =
        json::parse(br#"{"number": "1", "lines": [{"id": "1"}, {"quantity": 5}]}"#).unwrap_err();
    assert_eq!(e.path.as_deref(), Some("lines[1].quantity"));
    assert!(e.message.contains("expected a string"), "{}", e.message);
    let e = json::parse(br#"{"numbr": "1"}"#).unwrap_err();
    assert!(e.message.contains("unknown field `numbr`"), "{}", e.message);
    assert_eq!(e.line, 1);
    let e = json::parse(br#"{"number": "1"} {"number": "2"}"#).unwrap_err();
    assert!(
        e.message.contains("after the invoice object"),
        "{}",
        e.message
    );
    let e = json::parse(br#"{"vat_breakdown": [["S", "23"]]}"#).unwrap_err();
    assert_eq!(e.path.as_deref(), Some("vat_breakdown[0]"));
    assert!(e.message.contains("must be an object"), "{}", e.message);
    assert!(json::parse(br#"{"seller": []}"#).is_err());
    let deep = format!(
        "{{\"notes\": {}{}}}",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    assert!(json::parse(deep.as_bytes()).is_err());
    let problem = json::parse(b"{\"kind\": \"receipt\"}")
        .unwrap_err()
        .problem();
    assert_eq!(problem.status.as_u16(), 422);
}

#[test]
fn json_is_told_from_xml_by_its_first_byte() {
    assert!(json::is_json(b"  \n{\"number\":\"1\"}"));
    assert!(json::is_json(b"\xEF\xBB\xBF{}"));
    assert!(!json::is_json(b"<?xml version=\"1.0\"?><Invoice/>"));
    assert!(!json::is_json(b""));
    let xml = b"<Invoice/>";
    let by_content = json::to_xml(xml, json::Declared::ByContent);
    assert!(matches!(by_content, Ok(std::borrow::Cow::Borrowed(b)) if b == xml));
    // What is declared is taken at its word.
    let object = b"{}";
    let as_xml = json::to_xml(object, json::Declared::Xml);
    assert!(matches!(as_xml, Ok(std::borrow::Cow::Borrowed(b)) if b == object));
    assert!(json::to_xml(xml, json::Declared::Json).is_err());
    assert_eq!(
        json::Declared::of_part(None, Some("a.JSON")),
        json::Declared::Json
    );
    assert_eq!(
        json::Declared::of_part(Some("application/vnd.invex.invoice+json"), None),
        json::Declared::Json
    );
    assert_eq!(json::Declared::of_part(None, None), json::Declared::Xml);
    assert_eq!(json::Declared::of_body(""), json::Declared::ByContent);
    assert_eq!(json::Declared::of_body("text/xml"), json::Declared::Xml);
}

#[test]
fn the_published_json_schema_is_the_one_the_types_make() {
    let schema = json::schema_document(None);
    let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/invoice.schema.json");
    if std::env::var_os("INVEX_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "docs/invoice.schema.json is stale: run `INVEX_UPDATE_SCHEMA=1 cargo test -p invex-server \
         the_published_json_schema` and commit it"
    );
    // Every reference resolves inside the document.
    let refs = text.matches("\"$ref\": \"#/$defs/").count();
    assert!(refs > 10);
    for name in [
        "JsonInvoice",
        "InvoiceParty",
        "InvoiceLine",
        "VatBreakdown",
        "PaymentMeans",
    ] {
        assert!(schema["$defs"][name].is_object(), "{name} missing");
    }
    assert!(!text.contains("#/components/"));
}
