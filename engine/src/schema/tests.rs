use std::path::PathBuf;
use std::sync::OnceLock;

use super::*;
use crate::document::Document;

pub(crate) fn xsd_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../rulepacks/ubl-2.1-xsd/2.1/xsd")
}

fn ubl() -> &'static Schema {
    static S: OnceLock<Schema> = OnceLock::new();
    S.get_or_init(|| match Schema::ubl_2_1(&xsd_dir()) {
        Ok(s) => s,
        Err(e) => panic!("the UBL 2.1 schemas do not compile: {e}"),
    })
}

const HEAD: &str = r#"<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
 xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
 xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"
 xmlns:ext="urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2">"#;

/// A minimal schema-valid invoice with `body` in place of the parts after cbc:IssueDate.
fn invoice(before_date: &str, date: &str, after_date: &str) -> String {
    format!(
        "{HEAD}{before_date}<cbc:ID>1</cbc:ID>{date}{after_date}\
<cac:AccountingSupplierParty><cac:Party/></cac:AccountingSupplierParty>\
<cac:AccountingCustomerParty><cac:Party/></cac:AccountingCustomerParty>\
<cac:LegalMonetaryTotal><cbc:PayableAmount currencyID=\"EUR\">10.00</cbc:PayableAmount></cac:LegalMonetaryTotal>\
<cac:InvoiceLine><cbc:ID>1</cbc:ID><cbc:LineExtensionAmount currencyID=\"EUR\">10</cbc:LineExtensionAmount>\
<cac:Item/></cac:InvoiceLine></Invoice>"
    )
}

fn check(xml: &str) -> Vec<SchemaFinding> {
    let doc = Document::parse(xml.as_bytes()).expect("well-formed");
    ubl().check(&doc)
}

fn classes(xml: &str) -> Vec<(Class, String)> {
    check(xml)
        .into_iter()
        .map(|f| (f.class, f.message))
        .collect()
}

const DATE: &str = "<cbc:IssueDate>2024-02-29</cbc:IssueDate>";

#[test]
fn the_ubl_schemas_compile_without_the_signature_schemas() {
    assert!(ubl().type_count() > 900, "{}", ubl().type_count());
}

#[test]
fn a_minimal_invoice_is_valid() {
    assert_eq!(classes(&invoice("", DATE, "")), vec![]);
}

#[test]
fn a_wrong_root_is_one_finding() {
    let f = classes(r#"<Invoice xmlns="urn:x"><ID/></Invoice>"#);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].0, Class::Root);
    assert!(
        f[0].1.contains("ubl:Invoice or cn:CreditNote"),
        "{}",
        f[0].1
    );
}

#[test]
fn a_misspelt_element_names_what_was_expected() {
    let xml = invoice("", "<cbc:IssueDat>2024-01-01</cbc:IssueDat>", "");
    let f = check(&xml);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].class, Class::Unexpected);
    // The optional elements that may come between, then the mandatory one.
    assert_eq!(
        f[0].message,
        "expected cbc:CopyIndicator | cbc:UUID | cbc:IssueDate after cbc:ID, found cbc:IssueDat"
    );
}

#[test]
fn a_missing_mandatory_element_before_a_later_one() {
    // cbc:IssueDate is mandatory; cbc:DueDate comes after it.
    let f = classes(&invoice("", "<cbc:DueDate>2024-01-01</cbc:DueDate>", ""));
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].0, Class::Missing);
    assert_eq!(
        f[0].1,
        "expected cbc:IssueDate after cbc:ID, found cbc:DueDate"
    );
}

#[test]
fn a_missing_trailing_element_is_reported_on_the_parent() {
    let xml = format!("{HEAD}<cbc:ID>1</cbc:ID>{DATE}</Invoice>");
    let f = check(&xml);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].class, Class::Missing);
    assert!(
        f[0].message.contains("cac:AccountingSupplierParty"),
        "{}",
        f[0].message
    );
}

#[test]
fn order_and_repetition() {
    // Swapped siblings.
    let f = classes(
        &invoice("", "", DATE).replace("<cbc:ID>1</cbc:ID><cbc:IssueDate", "<cbc:IssueDate"),
    );
    assert!(!f.is_empty());
    let swapped = format!("{HEAD}{DATE}<cbc:ID>1</cbc:ID></Invoice>");
    let f = classes(&swapped);
    assert_eq!(f[0].0, Class::Missing, "{f:?}");
    // A single element twice.
    let f = classes(&invoice("", &format!("{DATE}{DATE}"), ""));
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].0, Class::Unexpected);
    assert!(
        f[0].1
            .starts_with("cbc:IssueDate is not expected after cbc:IssueDate"),
        "{}",
        f[0].1
    );
}

#[test]
fn foreign_elements_and_text() {
    let f = classes(&invoice("", DATE, "<x:Foo xmlns:x=\"urn:x\"/>"));
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].0, Class::Unexpected);
    assert!(f[0].1.ends_with("found {urn:x}Foo"), "{}", f[0].1);
    let f = classes(&invoice("", DATE, "stray"));
    assert_eq!(f[0].0, Class::Unexpected);
}

#[test]
fn values() {
    for bad in ["2023-02-29", "29.02.2024", ""] {
        let f = classes(&invoice(
            "",
            &format!("<cbc:IssueDate>{bad}</cbc:IssueDate>"),
            "",
        ));
        assert_eq!(f.len(), 1, "{bad}: {f:?}");
        assert_eq!(f[0].0, Class::Value);
        assert!(f[0].1.contains("xs:date"), "{}", f[0].1);
    }
    let f = classes(&invoice("", DATE, "").replace(">10.00<", ">10,00<"));
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].0, Class::Value);
    assert!(f[0].1.contains("xs:decimal"));
}

#[test]
fn attributes() {
    let f = classes(&invoice("", DATE, "").replace(" currencyID=\"EUR\">10.00", ">10.00"));
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].0, Class::Attribute);
    assert_eq!(
        f[0].1,
        "cbc:PayableAmount requires the attribute currencyID"
    );
    let f = classes(&invoice("", DATE, "").replace(
        "<cbc:ID>1</cbc:ID><cbc:Issue",
        "<cbc:ID foo=\"1\">1</cbc:ID><cbc:Issue",
    ));
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].0, Class::Attribute);
    assert!(f[0].1.contains("foo"));
    // Declared attributes in their lexical space; xsi:schemaLocation is always allowed.
    let ok = invoice("", DATE, "")
        .replace("<cbc:ID>1</cbc:ID><cbc:Issue", "<cbc:ID schemeID=\"0088\">1</cbc:ID><cbc:Issue")
        .replace(
            "<Invoice ",
            "<Invoice xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:schemaLocation=\"a b\" ",
        );
    assert_eq!(classes(&ok), vec![]);
}

#[test]
fn extension_content_is_not_validated() {
    let ext = "<ext:UBLExtensions><ext:UBLExtension><ext:ExtensionContent>\
<x:Anything xmlns:x=\"urn:x\"><x:Whatever>1</x:Whatever></x:Anything>\
</ext:ExtensionContent></ext:UBLExtension></ext:UBLExtensions>";
    assert_eq!(classes(&invoice(ext, DATE, "")), vec![]);
    // The wrapper itself is checked: ExtensionContent needs one element of another namespace.
    let empty = "<ext:UBLExtensions><ext:UBLExtension><ext:ExtensionContent/></ext:UBLExtension></ext:UBLExtensions>";
    let f = classes(&invoice(empty, DATE, ""));
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].0, Class::Missing);
}

struct Mem(&'static str);

impl SchemaSource for Mem {
    fn read(&self, _: &std::path::Path) -> std::io::Result<Vec<u8>> {
        Ok(self.0.as_bytes().to_vec())
    }
}

#[test]
fn empty_content_local_elements_and_optional_attributes() {
    let xsd = r#"<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:t" xmlns:t="urn:t" elementFormDefault="qualified">
<xsd:element name="R" type="t:RT"/>
<xsd:complexType name="RT"><xsd:sequence>
  <xsd:element name="E" type="t:ET" minOccurs="0" maxOccurs="2"/>
  <xsd:element name="N" type="xsd:integer"/>
</xsd:sequence></xsd:complexType>
<xsd:complexType name="ET"><xsd:attribute name="flag" type="xsd:boolean"/></xsd:complexType>
</xsd:schema>"#;
    let schema = compile(&Mem(xsd), &[std::path::Path::new("t.xsd")]).expect("compiles");
    let run = |body: &str| {
        let xml = format!(r#"<t:R xmlns:t="urn:t">{body}</t:R>"#);
        let doc = Document::parse(xml.as_bytes()).unwrap();
        schema
            .check(&doc)
            .into_iter()
            .map(|f| (f.class, f.message))
            .collect::<Vec<_>>()
    };
    assert_eq!(run(r#"<t:E flag="true"/><t:E/><t:N>7</t:N>"#), vec![]);
    let f = run("<t:E>x</t:E><t:N>7</t:N>");
    assert_eq!(
        f,
        vec![(
            Class::Unexpected,
            "text is not expected: {urn:t}E has no content".to_string()
        )]
    );
    let f = run(r#"<t:E flag="maybe"/><t:N>7.5</t:N>"#);
    assert_eq!(
        f.iter().map(|x| x.0).collect::<Vec<_>>(),
        vec![Class::Value, Class::Value]
    );
    let f = run("<t:E/><t:E/><t:E/><t:N>1</t:N>");
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].1
            .starts_with("{urn:t}E is not expected after {urn:t}E: expected {urn:t}N"),
        "{}",
        f[0].1
    );
}

#[test]
fn unsupported_constructs_are_refused_when_compiling() {
    let xsd = r#"<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:t" xmlns="urn:t" elementFormDefault="qualified">
<xsd:element name="A" type="AT"/><xsd:complexType name="AT"><xsd:choice><xsd:element ref="A"/></xsd:choice></xsd:complexType></xsd:schema>"#;
    let err = compile(&Mem(xsd), &[std::path::Path::new("t.xsd")]).unwrap_err();
    assert!(matches!(err, SchemaError::Unsupported { .. }), "{err}");
    assert!(err.to_string().contains("xsd:choice"), "{err}");
}

#[test]
fn nesting_beyond_the_walk_limit_is_a_finding_not_a_stack_overflow() {
    // cac:AgentParty is of type PartyType and may occur in it: a schema-valid chain of any
    // depth, which a caller's parser limits may let through.
    let depth = 400;
    let mut inner = String::new();
    for _ in 0..depth {
        inner.push_str("<cac:AgentParty>");
    }
    for _ in 0..depth {
        inner.push_str("</cac:AgentParty>");
    }
    let xml = invoice("", DATE, "").replacen(
        "<cac:AccountingSupplierParty><cac:Party/>",
        &format!("<cac:AccountingSupplierParty><cac:Party>{inner}</cac:Party>"),
        1,
    );
    let limits = crate::document::Limits {
        max_depth: 5000,
        ..Default::default()
    };
    let doc = Document::parse_with_limits(xml.as_bytes(), &limits).expect("well-formed");
    let f = ubl().check(&doc);
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].message.contains("nested more than 256 levels"),
        "{}",
        f[0].message
    );
}
