//! One test per XPath feature the official rule sets use (domain.md), against the native
//! evaluator on a small invoice.

use super::*;
use crate::document::Document;

const DOC: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
         xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
         xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
  <cbc:ID>INV-1</cbc:ID>
  <cbc:IssueDate>2026-11-02</cbc:IssueDate>
  <cbc:DocumentCurrencyCode>EUR</cbc:DocumentCurrencyCode>
  <cac:TaxTotal>
    <cbc:TaxAmount currencyID="EUR">46.00</cbc:TaxAmount>
  </cac:TaxTotal>
  <cac:InvoiceLine>
    <cbc:ID>1</cbc:ID>
    <cbc:LineExtensionAmount currencyID="EUR">100.10</cbc:LineExtensionAmount>
    <cac:Item><cbc:Name>  Paper   A4 </cbc:Name></cac:Item>
  </cac:InvoiceLine>
  <cac:InvoiceLine>
    <cbc:ID>2</cbc:ID>
    <cbc:LineExtensionAmount currencyID="EUR">99.90</cbc:LineExtensionAmount>
    <cac:Item><cbc:Name>Toner</cbc:Name></cac:Item>
  </cac:InvoiceLine>
  <cac:LegalMonetaryTotal>
    <cbc:LineExtensionAmount currencyID="EUR">200.00</cbc:LineExtensionAmount>
    <cbc:PayableAmount currencyID="EUR">246.00</cbc:PayableAmount>
  </cac:LegalMonetaryTotal>
</Invoice>"#;

fn sc() -> StaticContext {
    let mut sc = StaticContext::new();
    sc.add_namespace(
        "ubl",
        "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2",
    );
    sc.add_namespace(
        "cac",
        "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
    );
    sc.add_namespace(
        "cbc",
        "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
    );
    sc
}

fn doc() -> Document {
    Document::parse(DOC.as_bytes()).expect("test document parses")
}

/// Evaluate at the document element and render the result as a string.
fn s(expr: &str) -> String {
    let d = doc();
    let e = compile(expr, &sc()).unwrap_or_else(|e| panic!("{expr}: {e}"));
    assert!(e.is_native(), "{expr} fell back: {:?}", e.fallback_reason());
    let mut ev = Evaluator::new(&d, 0);
    ev.eval_string(&e, d.document_element())
        .unwrap_or_else(|e| panic!("{expr}: {e}"))
}

fn t(expr: &str) -> bool {
    let d = doc();
    let e = compile(expr, &sc()).unwrap_or_else(|e| panic!("{expr}: {e}"));
    assert!(e.is_native(), "{expr} fell back: {:?}", e.fallback_reason());
    let mut ev = Evaluator::new(&d, 0);
    ev.eval_boolean(&e, d.document_element())
        .unwrap_or_else(|e| panic!("{expr}: {e}"))
}

fn error_code(expr: &str) -> String {
    let d = doc();
    let e = compile(expr, &sc()).unwrap();
    let mut ev = Evaluator::new(&d, 0);
    ev.eval(&e, d.document_element()).unwrap_err().code
}

#[test]
fn exists_not_count_boolean() {
    assert!(t("exists(cbc:ID)"));
    assert!(!t("exists(cbc:Note)"));
    assert!(t("not(cbc:Note)"));
    assert_eq!(s("count(cac:InvoiceLine)"), "2");
    assert!(t("boolean(cac:InvoiceLine)"));
    assert!(!t("boolean('')"));
}

#[test]
fn sum_is_exact_with_xs_decimal_and_double_without() {
    assert_eq!(
        s("sum(cac:InvoiceLine/xs:decimal(cbc:LineExtensionAmount))"),
        "200"
    );
    // untyped values sum as xs:double
    assert_eq!(s("sum(cac:InvoiceLine/cbc:LineExtensionAmount)"), "200");
    assert_eq!(s("sum(())"), "0");
    assert_eq!(s("sum((0.1, 0.2))"), "0.3");
    assert_eq!(s("sum((xs:double('0.1'), 0.2))"), "0.30000000000000004");
}

#[test]
fn round_abs_number_mod_div() {
    assert_eq!(s("round(2.5)"), "3");
    assert_eq!(s("round(-2.5)"), "-2");
    assert_eq!(s("round(1.005 * 100) div 100"), "1.01");
    assert_eq!(s("abs(-3.5)"), "3.5");
    assert_eq!(s("number('12.5')"), "12.5");
    assert_eq!(s("number('x')"), "NaN");
    assert_eq!(s("number(())"), "NaN");
    assert_eq!(error_code("number((1, 2))"), "XPTY0004");
    assert_eq!(s("10 mod 3"), "1");
    assert_eq!(s("1 div 4"), "0.25");
    assert_eq!(s("7 idiv 2"), "3");
}

#[test]
fn string_functions() {
    assert_eq!(
        s("normalize-space(cac:InvoiceLine[1]/cac:Item/cbc:Name)"),
        "Paper A4"
    );
    assert_eq!(s("upper-case('abc')"), "ABC");
    assert!(t("contains('abcdef', 'cd')"));
    assert!(t("starts-with(cbc:ID, 'INV')"));
    assert!(t("ends-with(cbc:ID, '-1')"));
    assert_eq!(s("substring('12345', 2, 3)"), "234");
    assert_eq!(s("substring('12345', 0)"), "12345");
    assert_eq!(s("substring-before('a-b-c', '-')"), "a");
    assert_eq!(s("substring-after('a-b-c', '-')"), "b-c");
    assert_eq!(s("string-length('žltý')"), "4");
    assert_eq!(s("concat('a', 1, ())"), "a1");
    assert_eq!(s("string-join(('a','b','c'), ',')"), "a,b,c");
    assert_eq!(s("translate('abc', 'abc', 'AB')"), "AB");
    assert_eq!(s("string(cbc:ID)"), "INV-1");
    assert_eq!(s("string-to-codepoints('AB')"), "65 66");
    assert_eq!(s("codepoints-to-string((65, 66))"), "AB");
}

#[test]
fn zero_argument_forms_use_the_context_node() {
    let d = doc();
    let e = compile(
        "normalize-space() = 'Paper A4' and string-length() = 13",
        &sc(),
    )
    .unwrap();
    let name = d.elements_named(
        d.lookup_name(
            "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
            "Name",
        )
        .unwrap(),
    )[0];
    assert!(Evaluator::new(&d, 0).eval_boolean(&e, name).unwrap());
}

#[test]
fn regular_expressions() {
    assert!(t("matches(cbc:IssueDate, '^[0-9]{4}-[0-9]{2}-[0-9]{2}$')"));
    assert!(!t("matches('abc', '^B', '')"));
    assert!(t("matches('abc', '^A', 'i')"));
    assert_eq!(s("replace('a1b22', '[0-9]+', '#')"), "a#b#");
    assert_eq!(s("tokenize('a, b,c', ',\\s*')"), "a b c");
    assert_eq!(s("count(tokenize('a b  c'))"), "3");
    assert_eq!(error_code("replace('abc', 'x*', 'y')"), "FORX0003");
}

#[test]
fn reverse_last_position_and_names() {
    assert_eq!(s("reverse((1, 2, 3))"), "3 2 1");
    assert_eq!(s("cac:InvoiceLine[last()]/cbc:ID"), "2");
    assert_eq!(s("cac:InvoiceLine[position() = 1]/cbc:ID"), "1");
    assert_eq!(s("local-name(cac:TaxTotal)"), "TaxTotal");
    assert_eq!(s("name(cac:TaxTotal)"), "cac:TaxTotal");
    assert_eq!(s("local-name()"), "Invoice");
}

#[test]
fn constructors_and_castable() {
    assert_eq!(s("xs:decimal('1.50') + 1"), "2.5");
    assert_eq!(s("xs:integer('42') * 2"), "84");
    assert!(t("xs:date(cbc:IssueDate) > xs:date('2026-01-01')"));
    assert_eq!(s("xs:string(12)"), "12");
    assert!(t("'12.5' castable as xs:decimal"));
    assert!(!t("'12,5' castable as xs:decimal"));
    assert!(!t("'' castable as xs:decimal"));
    assert!(t("() castable as xs:decimal?"));
    assert_eq!(error_code("xs:decimal('')"), "FORG0001");
    // a double converts with its exact binary value, as Saxon does
    assert!(!t("xs:decimal(xs:double('0.1')) = 0.1"));
    assert!(t("xs:decimal(xs:double('0.5')) = 0.5"));
}

#[test]
fn quantified_for_if_and_ranges() {
    assert!(t("every $l in cac:InvoiceLine satisfies exists($l/cbc:ID)"));
    assert!(t("some $l in cac:InvoiceLine satisfies $l/cbc:ID = '2'"));
    assert!(!t("some $l in cac:InvoiceLine satisfies $l/cbc:ID = '3'"));
    assert_eq!(
        s("for $l in cac:InvoiceLine return xs:decimal($l/cbc:LineExtensionAmount) * 2"),
        "200.2 199.8"
    );
    assert_eq!(s("if (cac:InvoiceLine) then 'yes' else 'no'"), "yes");
    assert_eq!(s("sum(1 to 4)"), "10");
    assert_eq!(s("for $i in 1 to 3 return $i * $i"), "1 4 9");
}

#[test]
fn general_versus_value_comparisons() {
    // general: existential over sequences
    assert!(t("cac:InvoiceLine/cbc:ID = '2'"));
    assert!(t("cac:InvoiceLine/cbc:ID != '2'"));
    // untyped against a number compares numerically
    assert!(t("cac:LegalMonetaryTotal/cbc:PayableAmount = 246"));
    // value comparison: untyped becomes a string; more than one item is an error
    assert!(t("cbc:ID eq 'INV-1'"));
    assert_eq!(error_code("cac:InvoiceLine/cbc:ID eq '1'"), "XPTY0004");
    assert!(!t("cbc:Note eq 'x'"));
}

#[test]
fn axes() {
    assert_eq!(
        s("cac:InvoiceLine[2]/preceding-sibling::cac:InvoiceLine/cbc:ID"),
        "1"
    );
    assert_eq!(
        s("cac:InvoiceLine[1]/following-sibling::cac:InvoiceLine/cbc:ID"),
        "2"
    );
    assert_eq!(s("count(cac:InvoiceLine[1]/cbc:ID/ancestor::*)"), "2");
    assert_eq!(
        s("local-name(cac:InvoiceLine[1]/cbc:ID/parent::*)"),
        "InvoiceLine"
    );
    assert_eq!(s("count(cac:InvoiceLine/self::cac:InvoiceLine)"), "2");
    assert_eq!(s("count(cac:TaxTotal/preceding::cbc:ID)"), "1");
    assert_eq!(s("count(.//cbc:ID)"), "3");
    assert_eq!(s("count(//cbc:LineExtensionAmount)"), "3");
    assert_eq!(
        s("count(//cbc:LineExtensionAmount[@currencyID = 'EUR'])"),
        "3"
    );
    assert_eq!(s("//cac:InvoiceLine[1]/cbc:ID"), "1");
    assert_eq!(s("count(//@currencyID)"), "5");
    assert_eq!(s("cac:TaxTotal/cbc:TaxAmount/@currencyID"), "EUR");
    assert_eq!(s("count(/ubl:Invoice/cac:InvoiceLine)"), "2");
}

#[test]
fn code_lists_are_set_lookups_with_contains_semantics() {
    assert!(t(
        "contains(' EUR USD CZK ', concat(' ', cbc:DocumentCurrencyCode, ' '))"
    ));
    assert!(!t(
        "contains(' USD CZK ', concat(' ', cbc:DocumentCurrencyCode, ' '))"
    ));
    // a value with a space still behaves as contains() would
    assert!(t("contains(' EUR USD CZK ', concat(' ', 'EUR USD', ' '))"));
    assert!(!t("contains(' EUR USD ', concat(' ', '', ' '))"));
}

#[test]
fn helper_functions() {
    assert!(t("invex:gln('5790000435975')"));
    assert!(t("invex:ico-sk('31322832')"));
    assert!(t("invex:ic-dph-sk('SK2022749619')"));
    assert!(!t("invex:ic-dph-sk('SK2020123456')"));
    assert!(t("invex:iban('SK3112000000198742637541')"));
    assert!(t("invex:slack(100, 100.01, 0.02)"));
    assert!(!t("invex:slack(100, 100.03, 0.02)"));
}

#[test]
fn variables_from_the_static_context() {
    let d = doc();
    let mut c = sc();
    let slot = c.declare_variable("total");
    let e = compile("$total * 2", &c).unwrap();
    let mut ev = Evaluator::new(&d, c.variable_count());
    ev.set_variable(slot, vec![Item::Atomic(Atomic::Integer(21))]);
    assert_eq!(ev.eval_string(&e, d.root()).unwrap(), "42");
    assert!(compile("$undeclared", &c).is_err());
}

#[test]
fn patterns_select_matching_nodes_anywhere() {
    let d = doc();
    let c = sc();
    let p = compile_pattern("cac:InvoiceLine | /ubl:Invoice", &c).unwrap();
    let nodes = Evaluator::new(&d, 0).select_nodes(&p, d.root()).unwrap();
    assert_eq!(nodes.len(), 3);
    let p = compile_pattern("cbc:LineExtensionAmount[@currencyID]", &c).unwrap();
    assert_eq!(
        Evaluator::new(&d, 0)
            .select_nodes(&p, d.root())
            .unwrap()
            .len(),
        3
    );
    let p = compile_pattern("@currencyID", &c).unwrap();
    assert_eq!(
        Evaluator::new(&d, 0)
            .select_nodes(&p, d.root())
            .unwrap()
            .len(),
        5
    );
}

#[test]
fn syntax_errors_are_compile_errors() {
    let e = compile("exists(cbc:ID", &sc()).unwrap_err();
    assert!(e.message.contains("syntax"), "{}", e.message);
    let e = compile("nope:thing", &sc()).unwrap_err();
    assert!(e.message.contains("nope"), "{}", e.message);
    // functions the native compiler lacks run on the fallback evaluator, and say why
    #[cfg(feature = "xpath-fallback")]
    {
        let e = compile("fn:format-number(1, '0')", &sc()).unwrap();
        assert!(!e.is_native());
        assert!(e.fallback_reason().unwrap().contains("format-number"));
    }
    // without it, they do not compile, and say why
    #[cfg(not(feature = "xpath-fallback"))]
    {
        let e = compile("fn:format-number(1, '0')", &sc()).unwrap_err();
        assert!(e.message.contains("format-number"), "{}", e.message);
        assert!(e.message.contains("xpath-fallback"), "{}", e.message);
    }
}

#[test]
fn root_paths_are_cached_per_document() {
    let d = doc();
    let e = compile(
        "count(/ubl:Invoice/cac:InvoiceLine) + count(/ubl:Invoice/cac:InvoiceLine)",
        &sc(),
    )
    .unwrap();
    let mut ev = Evaluator::new(&d, 0);
    assert_eq!(ev.eval_string(&e, d.root()).unwrap(), "4");
    // a second document gets its own cache: one line fewer, so 2 + 2
    let one_line_less = DOC
        .replacen("<cac:InvoiceLine>", "<cac:Other>", 1)
        .replacen("</cac:InvoiceLine>", "</cac:Other>", 1);
    let d2 = Document::parse(one_line_less.as_bytes()).unwrap();
    let mut ev2 = Evaluator::new(&d2, 0);
    assert_eq!(ev2.eval_string(&e, d2.root()).unwrap(), "2");
}

#[test]
fn absent_name_guards_keep_values() {
    assert!(t("not(cac:Delivery/cbc:ID)"));
    assert!(t("not(cac:Delivery | //cbc:Note)"));
    assert!(!t("exists(//cac:Delivery/@schemeID)"));
    assert!(t("count(cac:Delivery/cbc:ID) <= 1"));
    assert!(!t("count(cac:Delivery) gt 0"));
    assert!(t("not(cac:Delivery) or xs:integer('x') = 1"));
    assert!(!t("cac:Delivery and xs:integer('x') = 1"));
    // The absent name decides nothing when a present operand is evaluated first.
    assert_eq!(
        error_code("cbc:ID = xs:integer('x') or not(cac:Delivery)"),
        "FORG0001"
    );
}

#[test]
fn name_only_predicates_and_string_comparisons() {
    let d = doc();
    let amounts = "/descendant::*[ends-with(local-name(), 'Amount') and not(ends-with(local-name(), 'PayableAmount'))]";
    let e = compile_pattern(amounts, &sc()).expect("compiles");
    let mut ev = Evaluator::new(&d, 0);
    let native = ev.select_nodes(&e, d.root()).expect("selects");
    let reference = reference_eval(&d, amounts, &sc(), d.root()).expect("reference");
    let reference: Vec<_> = reference
        .iter()
        .map(|i| match i {
            Item::Node(n) => *n,
            Item::Atomic(_) => panic!("a node"),
        })
        .collect();
    assert_eq!(native, reference);
    assert_eq!(native.len(), 4);
    assert_eq!(s("count(//*[empty(*)][normalize-space(.) = ''])"), "0");
    assert_eq!(s("count(//*[exists(*)])"), "7");
    assert!(t(
        "cac:InvoiceLine[1]/cac:Item/normalize-space(cbc:Name) = 'Paper A4'"
    ));
    assert!(t(
        "normalize-space(cac:InvoiceLine[1]/cac:Item/cbc:Name) != ''"
    ));
    assert!(t("upper-case(cbc:DocumentCurrencyCode) = 'EUR'"));
    assert!(t("normalize-space(' ') = ''"));
    assert_eq!(s("normalize-space('  a \t b\n')"), "a b");
    assert_eq!(s("normalize-space('a b')"), "a b");
}

/// The XPath parser's time grows exponentially with bracket nesting (fuzzing found an
/// 800-byte expression that took minutes): deeper nesting than any rule needs is refused
/// before parsing, at once, with the place named.
#[test]
fn deeply_nested_expressions_are_refused_before_parsing() {
    let sc = StaticContext::new();
    let nested =
        |open: &str, close: &str, n: usize| format!("{}1{}", open.repeat(n), close.repeat(n));
    assert!(compile(&nested("(", ")", 12), &sc).is_ok());
    let start = std::time::Instant::now();
    // The offset is the thirteenth opening bracket's.
    for (src, offset) in [
        (nested("(", ")", 40), 12),
        (format!(".{}", "[".repeat(40)), 13),
        (nested("f(", ")", 40), 25),
    ] {
        let e = compile(&src, &sc).expect_err("too deep");
        assert!(e.message.contains("nest more than 12"), "{e}");
        assert_eq!(e.offset, Some(offset), "{src}");
    }
    assert!(start.elapsed() < std::time::Duration::from_secs(1));
    // Brackets inside string literals are text.
    let quoted = format!("concat('{}', \"{}\")", "(".repeat(40), "[".repeat(40));
    assert!(compile(&quoted, &sc).is_ok());
    let long = format!("'{}'", "x".repeat(70 * 1024));
    assert!(compile(&long, &sc)
        .expect_err("long")
        .message
        .contains("bytes long"));
}
