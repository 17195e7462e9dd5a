use super::*;

const UBL_INVOICE: &str = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2";
const UBL_CBC: &str = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2";

/// The EN 16931 examples of the conformance corpus (`INVEX_CONFORMANCE`, else
/// `../shared/conformance` next to the repository, where build.rs looked for it).
fn corpus_examples() -> std::path::PathBuf {
    let root = match std::env::var_os("INVEX_CONFORMANCE") {
        Some(dir) if !dir.is_empty() => std::path::PathBuf::from(dir),
        _ => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance"),
    };
    root.join("corpus/en16931/examples")
}

// ----- helpers ---------------------------------------------------------------------------

fn parse(s: &str) -> Document {
    match Document::parse(s.as_bytes()) {
        Ok(d) => {
            check_invariants(&d);
            d
        }
        Err(e) => panic!("parse failed: {e}\n--- input ---\n{s}"),
    }
}

fn parse_err(s: impl AsRef<[u8]>) -> ParseError {
    match Document::parse(s.as_ref()) {
        Ok(_) => panic!(
            "expected an error for {:?}",
            String::from_utf8_lossy(s.as_ref())
        ),
        Err(e) => e,
    }
}

/// Asserts a `Malformed` error at (line, column) whose message contains `needle`.
#[track_caller]
fn assert_malformed(input: impl AsRef<[u8]>, line: u32, column: u32, needle: &str) {
    match parse_err(input.as_ref()) {
        ParseError::Malformed {
            line: l,
            column: c,
            message,
        } => {
            assert_eq!(
                (l, c),
                (line, column),
                "wrong position for {:?}: {message}",
                String::from_utf8_lossy(input.as_ref())
            );
            assert!(
                message.contains(needle),
                "message {message:?} does not contain {needle:?}"
            );
        }
        other => panic!(
            "expected Malformed for {:?}, got {other:?}",
            String::from_utf8_lossy(input.as_ref())
        ),
    }
}

fn name_of(d: &Document, n: NodeId) -> &QName {
    d.qname(d.name(n).expect("node has a name"))
}

fn local(d: &Document, n: NodeId) -> &str {
    &name_of(d, n).local
}

fn first_elem(d: &Document, ns: &str, local: &str) -> NodeId {
    let name = d
        .lookup_name(ns, local)
        .unwrap_or_else(|| panic!("no name {{{ns}}}{local}"));
    d.elements_named(name)[0]
}

fn kids(d: &Document, n: NodeId) -> Vec<NodeId> {
    d.children(n).collect()
}

/// Structural consistency of the arena; used on every successfully parsed document.
fn check_invariants(d: &Document) {
    let root = d.root();
    assert_eq!(d.kind(root), NodeKind::Document);
    assert_eq!(d.parent(root), None);
    assert_eq!(d.depth(root), 0);
    assert_eq!(d.subtree_end(root).0 as usize, d.len());
    assert!(!d.is_empty());
    let de = d.document_element();
    assert_eq!(d.kind(de), NodeKind::Element);
    assert_eq!(d.parent(de), Some(root));
    let mut element_count = 0;
    let mut attribute_count = 0;
    for i in 0..d.len() as u32 {
        let n = NodeId(i);
        let kind = d.kind(n);
        // The walk array (`links`) agrees with the arena.
        assert_eq!(kind, d.nodes[i as usize].kind());
        let element_name = if kind == NodeKind::Element {
            d.name(n)
        } else {
            None
        };
        assert_eq!(d.element_name(n), element_name);
        let end = d.subtree_end(n);
        assert!(end.0 > i && end.0 as usize <= d.len());
        match kind {
            NodeKind::Document => assert_eq!(i, 0),
            NodeKind::Element => {
                element_count += 1;
                let attrs = d.attributes(n);
                assert_eq!(attrs.start, i + 1);
                assert!(attrs.end <= end.0);
                match d.first_child(n) {
                    Some(c) => assert_eq!(c.0, attrs.end),
                    None => {
                        assert_eq!(attrs.end, end.0);
                        assert_eq!(d.last_child(n), None);
                    }
                }
                assert!(d.name(n).is_some());
                assert_eq!(d.text(n), "");
            }
            NodeKind::Attribute => {
                attribute_count += 1;
                assert_eq!(end.0, i + 1);
            }
            NodeKind::Text => {
                assert!(!d.text(n).is_empty(), "empty text node {i}");
                assert_eq!(d.name(n), None);
            }
            NodeKind::Comment => assert_eq!(d.name(n), None),
            NodeKind::ProcessingInstruction => {
                assert!(d.name(n).is_some());
                assert_eq!(name_of(d, n).namespace, "");
            }
        }
        if kind != NodeKind::Element && kind != NodeKind::Document {
            assert_eq!(d.first_child(n), None);
            assert_eq!(d.last_child(n), None);
            assert_eq!(end.0, i + 1);
        }
        if i == 0 {
            continue;
        }
        let p = d.parent(n).expect("non-root node has a parent");
        assert!(p.0 < i && i < d.subtree_end(p).0);
        assert_eq!(d.depth(n), d.depth(p) + 1);
        if kind == NodeKind::Attribute {
            assert!(d.attributes(p).contains(&i));
            assert_eq!(d.next_sibling(n), None);
            assert_eq!(d.prev_sibling(n), None);
            assert_eq!(d.attribute(p, d.name(n).unwrap()), Some(n));
            continue;
        }
        assert!(!d.attributes(p).contains(&i));
        match d.next_sibling(n) {
            Some(s) => {
                assert_eq!(s, end, "next sibling follows the subtree");
                assert_eq!(d.prev_sibling(s), Some(n));
                assert_eq!(d.parent(s), Some(p));
                assert!(
                    !(kind == NodeKind::Text && d.kind(s) == NodeKind::Text),
                    "adjacent text nodes were not merged"
                );
            }
            None => assert_eq!(d.last_child(p), Some(n)),
        }
        match d.prev_sibling(n) {
            Some(s) => assert_eq!(d.next_sibling(s), Some(n)),
            None => assert_eq!(d.first_child(p), Some(n)),
        }
        let (line, column) = d.line_column(n);
        assert!(line >= 1 && column >= 1);
    }
    // The name index covers every element/attribute exactly once, in document order.
    let mut indexed_elements = 0;
    let mut indexed_attributes = 0;
    for name in 0..d.name_count() as u32 {
        let name = NameId(name);
        for (list, kind) in [
            (d.elements_named(name), NodeKind::Element),
            (d.attributes_named(name), NodeKind::Attribute),
        ] {
            assert!(list.windows(2).all(|w| w[0] < w[1]));
            for &n in list {
                assert_eq!(d.kind(n), kind);
                assert_eq!(d.name(n), Some(name));
            }
        }
        indexed_elements += d.elements_named(name).len();
        indexed_attributes += d.attributes_named(name).len();
        let q = d.qname(name);
        assert_eq!(d.lookup_name(&q.namespace, &q.local), Some(name));
    }
    assert_eq!(indexed_elements, element_count);
    assert_eq!(indexed_attributes, attribute_count);
}

// ----- basics ----------------------------------------------------------------------------

#[test]
fn document_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Document>();
    assert_send_sync::<ParseError>();
}

#[test]
fn default_limits() {
    let l = Limits::default();
    assert_eq!(l.max_bytes, 64 * 1024 * 1024);
    assert_eq!(l.max_depth, 256);
}

#[test]
fn navigation_and_arena_layout() {
    let d = parse(r#"<r a="1" b="2"><x>t1</x><!--c--><y z="3"/>tail<?pi data?></r>"#);
    // 0 doc, 1 r, 2 @a, 3 @b, 4 x, 5 "t1", 6 comment, 7 y, 8 @z, 9 "tail", 10 PI
    assert_eq!(d.len(), 11);
    let kinds: Vec<NodeKind> = (0..11).map(|i| d.kind(NodeId(i))).collect();
    use NodeKind::*;
    assert_eq!(
        kinds,
        [
            Document,
            Element,
            Attribute,
            Attribute,
            Element,
            Text,
            Comment,
            Element,
            Attribute,
            Text,
            ProcessingInstruction
        ]
    );
    let n = NodeId;
    assert_eq!(d.root(), n(0));
    assert_eq!(d.document_element(), n(1));
    assert_eq!(kids(&d, n(0)), [n(1)]);
    assert_eq!(kids(&d, n(1)), [n(4), n(6), n(7), n(9), n(10)]);
    assert_eq!(d.first_child(n(1)), Some(n(4)));
    assert_eq!(d.last_child(n(1)), Some(n(10)));
    assert_eq!(d.attributes(n(1)), 2..4);
    assert_eq!(d.attributes(n(7)), 8..9);
    assert!(d.attributes(n(4)).is_empty());
    assert!(d.attributes(n(5)).is_empty());
    assert!(d.attributes(n(0)).is_empty());
    for a in [2, 3] {
        assert_eq!(d.parent(n(a)), Some(n(1)));
        assert_eq!(d.next_sibling(n(a)), None);
        assert_eq!(d.prev_sibling(n(a)), None);
    }
    assert_eq!(d.parent(n(5)), Some(n(4)));
    assert_eq!(d.parent(n(8)), Some(n(7)));
    assert_eq!(d.next_sibling(n(4)), Some(n(6)));
    assert_eq!(d.next_sibling(n(6)), Some(n(7)));
    assert_eq!(d.next_sibling(n(7)), Some(n(9)));
    assert_eq!(d.next_sibling(n(10)), None);
    assert_eq!(d.prev_sibling(n(9)), Some(n(7)));
    assert_eq!(d.prev_sibling(n(4)), None);
    assert_eq!(d.first_child(n(7)), None);
    assert_eq!(d.last_child(n(7)), None);
    assert_eq!(d.first_child(n(4)), Some(n(5)));
    assert_eq!(d.subtree_end(n(0)), n(11));
    assert_eq!(d.subtree_end(n(1)), n(11));
    assert_eq!(d.subtree_end(n(2)), n(3));
    assert_eq!(d.subtree_end(n(4)), n(6));
    assert_eq!(d.subtree_end(n(7)), n(9));
    assert_eq!(d.depth(n(1)), 1);
    assert_eq!(d.depth(n(2)), 2);
    assert_eq!(d.depth(n(5)), 3);
    assert_eq!(d.depth(n(8)), 3);
    assert_eq!(d.text(n(2)), "1");
    assert_eq!(d.text(n(5)), "t1");
    assert_eq!(d.text(n(6)), "c");
    assert_eq!(d.text(n(9)), "tail");
    assert_eq!(d.text(n(10)), "data");
    assert_eq!(d.text(n(1)), "");
    assert_eq!(local(&d, n(10)), "pi");
    assert_eq!(d.name(n(5)), None);
    assert_eq!(d.name(n(6)), None);
    assert_eq!(d.name(n(0)), None);
    let b = d.lookup_name("", "b").unwrap();
    assert_eq!(d.attribute(n(1), b), Some(n(3)));
    assert_eq!(d.attribute(n(7), b), None);
    assert_eq!(d.attribute(n(5), b), None);
}

#[test]
fn prolog_and_epilog_comments_and_pis_are_document_children() {
    let d = parse(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!--before-->\n<?style x?>\n<r/>\n<!--after-->\n\n",
    );
    let c = kids(&d, d.root());
    assert_eq!(c.len(), 4);
    assert_eq!(d.kind(c[0]), NodeKind::Comment);
    assert_eq!(d.text(c[0]), "before");
    assert_eq!(d.kind(c[1]), NodeKind::ProcessingInstruction);
    assert_eq!(c[2], d.document_element());
    assert_eq!(d.text(c[3]), "after");
    assert_eq!(d.depth(c[0]), 1);
    assert_eq!(d.len(), 5); // no XML declaration node, no whitespace outside the root
}

#[test]
fn comments_and_processing_instructions() {
    let d = parse("<r><!-- hi & <b> --><?target   some data ?><?empty?><!----></r>");
    let c = kids(&d, d.document_element());
    assert_eq!(c.len(), 4);
    assert_eq!(d.text(c[0]), " hi & <b> ");
    assert_eq!(d.kind(c[1]), NodeKind::ProcessingInstruction);
    let q = name_of(&d, c[1]);
    assert_eq!(
        (q.namespace.as_str(), q.local.as_str(), q.prefix.as_str()),
        ("", "target", "")
    );
    assert_eq!(d.text(c[1]), "some data ");
    assert_eq!(d.string_value(c[1]), "some data ");
    assert_eq!(local(&d, c[2]), "empty");
    assert_eq!(d.text(c[2]), "");
    assert_eq!(d.kind(c[3]), NodeKind::Comment);
    assert_eq!(d.text(c[3]), "");
    // A PI name is not an element name.
    let pi = d.lookup_name("", "target").unwrap();
    assert!(d.elements_named(pi).is_empty());
    assert!(d.attributes_named(pi).is_empty());
    assert_eq!(d.string_value(d.document_element()), "");
}

// ----- names and namespaces --------------------------------------------------------------

#[test]
fn namespaces_default_prefixed_and_scoped() {
    let d = parse(
        r#"<r xmlns="urn:d" xmlns:p="urn:p" a="1" p:b="2" xml:lang="en">
  <p:c xmlns:p="urn:p2"><p:d/></p:c>
  <p:h/>
  <e xmlns=""><f a="x"/></e>
  <q:g xmlns:q="urn:d"/>
  <k/>
</r>"#,
    );
    let r = d.document_element();
    let q = name_of(&d, r);
    assert_eq!((q.namespace.as_str(), q.local.as_str()), ("urn:d", "r"));
    assert_eq!(q.prefix, "");
    // Namespace declarations are not attributes; the default namespace does not apply
    // to unprefixed attributes.
    let attrs: Vec<&QName> = d.attributes(r).map(|a| name_of(&d, NodeId(a))).collect();
    assert_eq!(attrs.len(), 3);
    assert_eq!(
        (attrs[0].namespace.as_str(), attrs[0].local.as_str()),
        ("", "a")
    );
    assert_eq!(
        (
            attrs[1].namespace.as_str(),
            attrs[1].local.as_str(),
            attrs[1].prefix.as_str()
        ),
        ("urn:p", "b", "p")
    );
    assert_eq!(attrs[2].namespace, names::XML_NS);
    assert_eq!(attrs[2].local, "lang");
    assert_eq!(d.lookup_name("", "xmlns"), None);
    assert_eq!(d.lookup_name("", "p"), None);
    // Redeclared prefix in a nested scope, then restored.
    assert_eq!(name_of(&d, first_elem(&d, "urn:p2", "c")).prefix, "p");
    let pd = first_elem(&d, "urn:p2", "d");
    assert_eq!(d.parent(pd), Some(first_elem(&d, "urn:p2", "c")));
    assert_eq!(d.lookup_name("urn:p", "c"), None);
    assert_eq!(d.lookup_name("urn:p", "d"), None);
    let h = first_elem(&d, "urn:p", "h");
    assert_eq!(d.parent(h), Some(r));
    // Default namespace undeclared with xmlns="" and restored afterwards.
    let e = first_elem(&d, "", "e");
    let f = first_elem(&d, "", "f");
    assert_eq!(d.parent(f), Some(e));
    assert_eq!(d.lookup_name("urn:d", "f"), None);
    let k = first_elem(&d, "urn:d", "k");
    assert_eq!(d.parent(k), Some(r));
    // A prefixed name bound to the default namespace URI shares the expanded name space.
    let g = first_elem(&d, "urn:d", "g");
    assert_eq!(name_of(&d, g).prefix, "q");
    // Attribute `a` on r and on f have the same expanded name ("", "a").
    let a = d.lookup_name("", "a").unwrap();
    assert_eq!(d.attributes_named(a).len(), 2);
}

#[test]
fn same_expanded_name_with_different_prefixes_is_one_name() {
    let d = parse(r#"<r xmlns="urn:d"><x/><a:x xmlns:a="urn:d"/><b:x xmlns:b="urn:d"/></r>"#);
    let x = d.lookup_name("urn:d", "x").unwrap();
    let xs = d.elements_named(x);
    assert_eq!(xs.len(), 3);
    assert_eq!(d.name(xs[1]), Some(x));
    // The prefix first written is the one kept.
    assert_eq!(d.qname(x).prefix, "");
}

#[test]
fn prefix_cache_respects_scope_changes() {
    // The same raw name `p:x` means different things in different scopes.
    let d = parse(
        r#"<r xmlns:p="urn:1"><p:x/><s xmlns:p="urn:2"><p:x/><t xmlns:p="urn:3"><p:x/></t><p:x/></s><p:x/></r>"#,
    );
    let count = |ns| d.elements_named(d.lookup_name(ns, "x").unwrap()).len();
    assert_eq!(count("urn:1"), 2);
    assert_eq!(count("urn:2"), 2);
    assert_eq!(count("urn:3"), 1);
    // Same for attributes and the empty-element scope.
    let d = parse(r#"<r xmlns:p="urn:1" p:a="1"><s xmlns:p="urn:2" p:a="2"/><t p:a="3"/></r>"#);
    let a1 = d.lookup_name("urn:1", "a").unwrap();
    let a2 = d.lookup_name("urn:2", "a").unwrap();
    let vals =
        |n: NameId| -> Vec<&str> { d.attributes_named(n).iter().map(|&a| d.text(a)).collect() };
    assert_eq!(vals(a1), ["1", "3"]);
    assert_eq!(vals(a2), ["2"]);
}

#[test]
fn many_prefixes_in_scope_resolve_to_the_innermost_binding() {
    // More bindings than the parser scans linearly, with redeclarations.
    let decls: String = (0..12)
        .map(|i| format!(r#" xmlns:p{i}="urn:{i}""#))
        .collect();
    let d = parse(&format!(
        r#"<r{decls}><p3:a/><s xmlns:p3="urn:x" xmlns:p11="urn:y"><p3:a/><p11:a/><p0:a/></s><p3:a/><p11:a/></r>"#
    ));
    let count = |ns| {
        d.lookup_name(ns, "a")
            .map_or(0, |n| d.elements_named(n).len())
    };
    assert_eq!(count("urn:3"), 2);
    assert_eq!(count("urn:x"), 1);
    assert_eq!(count("urn:y"), 1);
    assert_eq!(count("urn:0"), 1);
    assert_eq!(count("urn:11"), 1);
    assert_malformed(
        format!("<r{decls}><q:a/></r>"),
        1,
        5 + decls.len() as u32,
        "namespace prefix `q` of element `q:a` is not declared",
    );
}

#[test]
fn similar_raw_names_are_told_apart() {
    // Same length, first and last 8 bytes (only the middle differs), short names that
    // differ in one byte, and one raw name as element and as attribute.
    let d = parse(
        r#"<r xmlns="urn:d"><abcdefgh_1_ijklmnop/><abcdefgh_2_ijklmnop/><abcdefgh_1_ijklmnop/><abc/><aXc/><ab/><ba/><abc abc="1" ab="2"/><b/></r>"#,
    );
    let count = |ns, local| d.elements_named(d.lookup_name(ns, local).unwrap()).len();
    assert_eq!(count("urn:d", "abcdefgh_1_ijklmnop"), 2);
    assert_eq!(count("urn:d", "abcdefgh_2_ijklmnop"), 1);
    assert_eq!(count("urn:d", "abc"), 2);
    for local in ["aXc", "ab", "ba", "b"] {
        assert_eq!(count("urn:d", local), 1, "{local}");
    }
    assert_eq!(
        d.lookup_name("", "abc")
            .map(|n| d.attributes_named(n).len()),
        Some(1)
    );
    assert_eq!(
        d.lookup_name("urn:d", "abc")
            .map(|n| d.attributes_named(n).len()),
        Some(0)
    );
}

#[test]
fn xml_prefix_is_predeclared_and_may_be_declared_correctly() {
    let d = parse(r#"<r xmlns:xml="http://www.w3.org/XML/1998/namespace" xml:space="preserve"/>"#);
    let r = d.document_element();
    assert_eq!(d.attributes(r).len(), 1);
    let sp = d
        .lookup_name("http://www.w3.org/XML/1998/namespace", "space")
        .unwrap();
    assert_eq!(d.text(d.attribute(r, sp).unwrap()), "preserve");
}

#[test]
fn namespace_uri_with_entity_is_unescaped() {
    let d = parse(r#"<p:r xmlns:p="urn:a&amp;b"/>"#);
    assert!(d.lookup_name("urn:a&b", "r").is_some());
}

// ----- text, entities, CDATA -------------------------------------------------------------

#[test]
fn entities_char_refs_and_cdata_merge_into_one_text_node() {
    let d = parse(concat!(
        r#"<r a="x &amp; &lt;&gt;&quot;&apos; &#65;&#x42;&#x1F600;">"#,
        "a &amp; b &#x41;&#66; <![CDATA[<x> & ]]> tail &lt;end&gt;</r>"
    ));
    let r = d.document_element();
    let c = kids(&d, r);
    assert_eq!(c.len(), 1, "text, CDATA and references form one text node");
    assert_eq!(d.kind(c[0]), NodeKind::Text);
    assert_eq!(d.text(c[0]), "a & b AB <x> &  tail <end>");
    assert_eq!(d.text(NodeId(r.0 + 1)), "x & <>\"' AB\u{1F600}");
    assert_eq!(d.string_value(r), "a & b AB <x> &  tail <end>");
}

#[test]
fn consecutive_cdata_sections_and_text_merge() {
    let d = parse("<r><![CDATA[a]]><![CDATA[b]]>c<![CDATA[]]>d</r>");
    let c = kids(&d, d.document_element());
    assert_eq!(c.len(), 1);
    assert_eq!(d.text(c[0]), "abcd");
    // Starting with text that needs no unescaping, then a CDATA section.
    let d = parse("<r>plain<![CDATA[&raw;]]></r>");
    let c = kids(&d, d.document_element());
    assert_eq!(c.len(), 1);
    assert_eq!(d.text(c[0]), "plain&raw;");
    // An empty CDATA section alone gives no text node.
    let d = parse("<r><![CDATA[]]></r>");
    assert_eq!(d.first_child(d.document_element()), None);
}

#[test]
fn comments_and_elements_separate_text_nodes() {
    let d = parse("<r>a<!--c-->b<x/>c</r>");
    let c = kids(&d, d.document_element());
    let kinds: Vec<NodeKind> = c.iter().map(|&n| d.kind(n)).collect();
    use NodeKind::*;
    assert_eq!(kinds, [Text, Comment, Text, Element, Text]);
    assert_eq!(d.string_value(d.document_element()), "abc");
}

#[test]
fn whitespace_only_text_nodes_are_kept() {
    let d = parse("<r>\n  <a/>\n  <b> </b>\n</r>");
    let r = d.document_element();
    let c = kids(&d, r);
    assert_eq!(c.len(), 5);
    assert_eq!(d.text(c[0]), "\n  ");
    assert_eq!(d.text(c[4]), "\n");
    assert_eq!(d.string_value(c[3]), " ");
    assert_eq!(d.string_value(r), "\n  \n   \n");
}

#[test]
fn line_ends_and_attribute_values_are_normalised() {
    let d = parse("<r a='x\r\ny\tz\nw\rv' b=\"&#10;&#9;&#13;\">l1\r\nl2\rl3<![CDATA[c\r\nd]]><!--e\r\nf--></r>");
    let r = d.document_element();
    assert_eq!(d.text(NodeId(r.0 + 1)), "x y z w v");
    assert_eq!(
        d.text(NodeId(r.0 + 2)),
        "\n\t\r",
        "character references are kept"
    );
    let c = kids(&d, r);
    assert_eq!(d.text(c[0]), "l1\nl2\nl3c\nd");
    assert_eq!(d.text(c[1]), "e\nf");
}

#[test]
fn numeric_references_with_leading_zeros_and_astral_chars() {
    let d = parse("<r>&#0065;&#x00042;&#x10FFFF;&#xE000;</r>");
    assert_eq!(d.string_value(d.document_element()), "AB\u{10FFFF}\u{E000}");
}

#[test]
fn utf8_bom_is_skipped() {
    let d = parse("\u{FEFF}<?xml version=\"1.0\"?><r>é</r>");
    assert_eq!(d.string_value(d.root()), "é");
    assert_eq!(d.line_column(d.document_element()), (1, 22));
}

// ----- string values ---------------------------------------------------------------------

#[test]
fn string_value_concatenates_descendant_text_only() {
    let d = parse(r#"<r>a<b>b<!--no-->c<?pi no?></b><c x="attr">d</c></r>"#);
    let r = d.document_element();
    assert_eq!(d.string_value(r), "abcd");
    assert!(matches!(d.string_value(r), Cow::Owned(_)));
    assert_eq!(d.string_value(d.root()), "abcd");
    let b = first_elem(&d, "", "b");
    assert_eq!(d.string_value(b), "bc");
    let c = first_elem(&d, "", "c");
    assert_eq!(d.string_value(c), "d");
    let x = d.attributes(c).start;
    assert_eq!(d.string_value(NodeId(x)), "attr");
}

#[test]
fn string_value_is_borrowed_for_single_text_descendant() {
    let d = parse("<r><b>only</b><e/><n><m>deep</m></n><u>a&amp;b</u></r>");
    let b = first_elem(&d, "", "b");
    assert!(matches!(d.string_value(b), Cow::Borrowed("only")));
    let e = first_elem(&d, "", "e");
    assert!(matches!(d.string_value(e), Cow::Borrowed("")));
    let n = first_elem(&d, "", "n");
    assert!(matches!(d.string_value(n), Cow::Borrowed("deep")));
    let u = first_elem(&d, "", "u");
    assert!(matches!(d.string_value(u), Cow::Borrowed("a&b")));
    let t = d.first_child(b).unwrap();
    assert!(matches!(d.string_value(t), Cow::Borrowed("only")));
}

// ----- name index ------------------------------------------------------------------------

#[test]
fn elements_and_attributes_named_in_document_order() {
    let d = parse(r#"<r><a i="1"><a i="2"/></a><b><a i="3"/></b><a i="4"/><b i="5"/></r>"#);
    let a = d.lookup_name("", "a").unwrap();
    let i = d.lookup_name("", "i").unwrap();
    let vals: Vec<&str> = d
        .elements_named(a)
        .iter()
        .map(|&e| d.text(d.attribute(e, i).unwrap()))
        .collect();
    assert_eq!(vals, ["1", "2", "3", "4"]);
    let attr_vals: Vec<&str> = d.attributes_named(i).iter().map(|&n| d.text(n)).collect();
    assert_eq!(attr_vals, ["1", "2", "3", "4", "5"]);
    assert!(d.elements_named(i).is_empty());
    assert!(d.attributes_named(a).is_empty());
    assert_eq!(d.lookup_name("", "zzz"), None);
    assert_eq!(d.lookup_name("urn:x", "a"), None);
    // Out-of-range ids give empty lists rather than panicking.
    assert!(d.elements_named(NameId(9999)).is_empty());
    assert!(d.attributes_named(NameId(9999)).is_empty());
}

// ----- line and column -------------------------------------------------------------------

#[test]
fn line_column_of_elements_attributes_and_text() {
    let src =
        "<?xml version=\"1.0\"?>\n<r>\n  <a x=\"1\"\n     y=\"2\"/>\n  <ü>é<b/></ü><!--c-->\n</r>";
    let d = parse(src);
    let r = d.document_element();
    assert_eq!(d.line_column(d.root()), (1, 1));
    assert_eq!(d.line_column(r), (2, 1));
    let a = first_elem(&d, "", "a");
    assert_eq!(d.line_column(a), (3, 3));
    let x = d.lookup_name("", "x").unwrap();
    let y = d.lookup_name("", "y").unwrap();
    assert_eq!(d.line_column(d.attribute(a, x).unwrap()), (3, 6));
    assert_eq!(d.line_column(d.attribute(a, y).unwrap()), (4, 6));
    let u = first_elem(&d, "", "ü");
    assert_eq!(d.line_column(u), (5, 3));
    let text = d.first_child(u).unwrap();
    assert_eq!(d.line_column(text), (5, 6));
    // Columns count characters, not bytes: "  <ü>é" is 6 characters (8 bytes).
    let b = first_elem(&d, "", "b");
    assert_eq!(d.line_column(b), (5, 7));
    assert_eq!(d.byte_offset(b), src.find("<b/>").unwrap());
    let comment = d.next_sibling(u).unwrap();
    assert_eq!(d.line_column(comment), (5, 15));
    let first_text = d.first_child(r).unwrap();
    assert_eq!(d.line_column(first_text), (2, 4));
}

#[test]
fn line_column_with_crlf_and_lone_cr() {
    let d = parse("<r>\r\n<a/>\r\n  <b/>\r<c/></r>");
    assert_eq!(d.line_column(first_elem(&d, "", "a")), (2, 1));
    assert_eq!(d.line_column(first_elem(&d, "", "b")), (3, 3));
    assert_eq!(d.line_column(first_elem(&d, "", "c")), (4, 1));
}

#[test]
fn line_column_of_multiline_attribute_values_and_cdata() {
    let d = parse("<r a=\"1\n2\"\n b='3'><![CDATA[x\ny]]><e/></r>");
    let r = d.document_element();
    assert_eq!(d.line_column(NodeId(r.0 + 2)), (3, 2));
    let cdata_text = d.first_child(r).unwrap();
    assert_eq!(d.line_column(cdata_text), (3, 8));
    assert_eq!(d.line_column(first_elem(&d, "", "e")), (4, 5));
}

#[test]
fn line_table_agrees_with_scanning() {
    let mut rng = Rng(7);
    let alphabet = ["a", "é", "\n", "\r", "\r\n", "€", " ", "\u{1D11E}", "<x>"];
    for _ in 0..60 {
        let len = rng.below(1500);
        let s: String = (0..len)
            .map(|_| alphabet[rng.below(alphabet.len())])
            .collect();
        let b = s.as_bytes();
        let index = lines::LineIndex::new(b);
        for off in (0..=b.len()).filter(|&o| s.is_char_boundary(o)) {
            assert_eq!(
                index.line_column(b, off),
                lines::line_column_scan(b, off),
                "offset {off} in {s:?}"
            );
        }
    }
}

// ----- DOCTYPE ---------------------------------------------------------------------------

#[test]
fn doctype_is_refused() {
    assert_eq!(
        parse_err("<!DOCTYPE r><r/>"),
        ParseError::Doctype { line: 1, column: 1 }
    );
    assert_eq!(
        parse_err("<?xml version=\"1.0\"?>\n  <!DOCTYPE r SYSTEM \"file:///etc/passwd\"><r/>"),
        ParseError::Doctype { line: 2, column: 3 }
    );
    assert_eq!(
        parse_err("<?xml version=\"1.0\"?>\n<!DOCTYPE r [\n<!ENTITY e \"x\">\n]>\n<r>&e;</r>"),
        ParseError::Doctype { line: 2, column: 1 }
    );
    // Anywhere, also after or inside the root element, and when not even closed.
    assert_eq!(
        parse_err("<r/>\n<!DOCTYPE r>"),
        ParseError::Doctype { line: 2, column: 1 }
    );
    assert_eq!(
        parse_err("<r><!DOCTYPE r></r>"),
        ParseError::Doctype { line: 1, column: 4 }
    );
    assert_eq!(
        parse_err("<!DOCTYPE r [ <!ENTITY a \"b\">"),
        ParseError::Doctype { line: 1, column: 1 }
    );
    assert_eq!(
        parse_err("<!doctype r><r/>"),
        ParseError::Doctype { line: 1, column: 1 }
    );
    let msg = parse_err("<!DOCTYPE r><r/>").to_string();
    assert!(msg.starts_with("line 1, column 1: DOCTYPE"), "{msg}");
}

#[test]
fn billion_laughs_is_refused_without_expansion() {
    let bomb = r#"<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ELEMENT lolz (#PCDATA)>
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<lolz>&lol9;</lolz>"#;
    assert_eq!(parse_err(bomb), ParseError::Doctype { line: 2, column: 1 });
}

#[test]
fn undeclared_entities_are_errors_not_expansions() {
    assert_malformed("<r>&lol9;</r>", 1, 4, "undefined entity `&lol9;`");
    assert_malformed("<r>\n x &foo; y</r>", 2, 4, "undefined entity");
    assert_malformed("<r a=\"&bar;\"/>", 1, 7, "undefined entity `&bar;`");
}

// ----- limits ----------------------------------------------------------------------------

#[test]
fn max_bytes_limit() {
    let limits = Limits {
        max_bytes: 10,
        max_depth: 256,
    };
    assert!(Document::parse_with_limits(b"<r>abc</r>", &limits).is_ok());
    assert_eq!(
        Document::parse_with_limits(b"<r>abcd</r>", &limits).err(),
        Some(ParseError::TooLarge {
            size: 11,
            limit: 10
        })
    );
    // Checked before parsing: even garbage over the limit is TooLarge.
    assert!(matches!(
        Document::parse_with_limits(&[0xFF; 11], &limits),
        Err(ParseError::TooLarge { .. })
    ));
}

#[test]
fn max_depth_limit() {
    let limits = Limits {
        max_bytes: 1 << 20,
        max_depth: 3,
    };
    assert!(Document::parse_with_limits(b"<a><b><c>x</c></b></a>", &limits).is_ok());
    assert_eq!(
        Document::parse_with_limits(b"<a><b><c><d/></c></b></a>", &limits).err(),
        Some(ParseError::TooDeep {
            line: 1,
            column: 10,
            limit: 3
        })
    );
    // A limit of 0 refuses the root element; one of 1 then a second root is the other error.
    for (max_depth, input, expected) in [
        (0, "<a/>", "TooDeep { line: 1, column: 1, limit: 0 }"),
        (0, "<a><b/></a>", "TooDeep { line: 1, column: 1, limit: 0 }"),
        (1, "<a/><b/>", "only one root element"),
        (1, "<a><b/></a>", "TooDeep { line: 1, column: 4, limit: 1 }"),
    ] {
        let limits = Limits {
            max_bytes: 1 << 20,
            max_depth,
        };
        let e = Document::parse_with_limits(input.as_bytes(), &limits).unwrap_err();
        assert!(format!("{e:?}").contains(expected), "{input}: {e:?}");
    }
    // Default limit: 256 levels pass, 257 fail.
    let nest = |n: usize| "<a>".repeat(n) + &"</a>".repeat(n);
    assert!(Document::parse(nest(256).as_bytes()).is_ok());
    assert!(matches!(
        Document::parse(nest(257).as_bytes()),
        Err(ParseError::TooDeep {
            line: 1,
            column: 769,
            limit: 256
        })
    ));
    // Very deep input is refused early without recursion.
    let deep = "<a>".repeat(200_000);
    assert!(matches!(
        Document::parse(deep.as_bytes()),
        Err(ParseError::TooDeep { .. })
    ));
    // A large limit also works (no recursion anywhere).
    let limits = Limits {
        max_bytes: 1 << 24,
        max_depth: 100_000,
    };
    let d = Document::parse_with_limits(nest(50_000).as_bytes(), &limits).unwrap();
    assert_eq!(d.depth(NodeId(50_000)), 50_000);
    assert_eq!(d.string_value(d.root()), "");
}

#[test]
fn many_distinct_names_with_a_long_namespace_are_refused() {
    // 5000 names each holding a 10 KB namespace URI would keep ~50 MB of name strings
    // alive for a ~60 KB input.
    let uri = format!("urn:{}", "x".repeat(10_000));
    let mut s = format!("<r xmlns=\"{uri}\">");
    for i in 0..5000 {
        s += &format!("<a{i}/>");
    }
    s += "</r>";
    match parse_err(&s) {
        ParseError::Malformed { message, .. } => {
            assert!(message.contains("too many distinct names"), "{message}")
        }
        other => panic!("unexpected {other:?}"),
    }
    // Many distinct short names are fine.
    let mut s = String::from("<r>");
    for i in 0..5000 {
        s += &format!("<a{i}/>");
    }
    s += "</r>";
    assert_eq!(parse(&s).name_count(), 5001);
}

/// Every node's name as (namespace, local, prefix), for comparing documents.
fn all_names(d: &Document) -> Vec<Option<(String, String, String)>> {
    (0..d.len() as u32)
        .map(|i| {
            d.name(NodeId(i)).map(|n| {
                let q = d.qname(n);
                (q.namespace.clone(), q.local.clone(), q.prefix.clone())
            })
        })
        .collect()
}

#[test]
fn names_shared_between_documents_keep_each_documents_first_prefix() {
    // Both spellings of {urn:s}x end up in the process-wide table; each document still
    // keeps the prefix it wrote first, and one id per expanded name.
    let first = r#"<a:r xmlns:a="urn:s" a:k="1"><a:x/><b:x xmlns:b="urn:s" b:k="2"/></a:r>"#;
    let second = r#"<b:r xmlns:b="urn:s" b:k="1"><b:x/><a:x xmlns:a="urn:s" a:k="2"/></b:r>"#;
    for _ in 0..2 {
        for (src, prefix) in [(first, "a"), (second, "b")] {
            let d = parse(src);
            let x = d.lookup_name("urn:s", "x").unwrap();
            assert_eq!(d.qname(x).prefix, prefix);
            assert_eq!(d.elements_named(x).len(), 2);
            let k = d.lookup_name("urn:s", "k").unwrap();
            assert_eq!(d.qname(k).prefix, prefix);
            assert_eq!(d.attributes_named(k).len(), 2);
            assert_eq!(d.name_count(), 3);
        }
    }
    // A raw name too long to be shared and a short one for the same expanded name, in
    // either order, are still one name.
    let long = "p".repeat(200);
    for (first, second) in [("a", long.as_str()), (long.as_str(), "a")] {
        let d = parse(&format!(
            r#"<r xmlns:a="urn:long" xmlns:{long}="urn:long"><{first}:x {first}:k="1"/><{second}:x {second}:k="2"/></r>"#
        ));
        let x = d.lookup_name("urn:long", "x").unwrap();
        assert_eq!(d.elements_named(x).len(), 2);
        assert_eq!(d.qname(x).prefix, first);
        let k = d.lookup_name("urn:long", "k").unwrap();
        assert_eq!(d.attributes_named(k).len(), 2);
        assert_eq!(d.name_count(), 3);
    }
    // A shared name is only found under its own namespace: here `a:x` means {urn:t}x.
    let d = parse(r#"<a:r xmlns:a="urn:t"><a:x/></a:r>"#);
    assert!(d.lookup_name("urn:s", "x").is_none());
    assert_eq!(d.qname(d.lookup_name("urn:t", "x").unwrap()).prefix, "a");
}

#[test]
fn documents_parsed_concurrently_match_serial_parses() {
    let docs: Vec<String> = (0..6)
        .map(|k| {
            let mut s = format!(r#"<r xmlns="urn:c{}" xmlns:q="urn:q">"#, k % 3);
            for i in 0..40 {
                s += &format!(
                    r#"<e{} q:a{}="v"><q:f{}/></e{}>"#,
                    i % 7 + k,
                    i % 5,
                    i % 9,
                    i % 7 + k
                );
            }
            s + "</r>"
        })
        .collect();
    let expected: Vec<_> = docs.iter().map(|d| all_names(&parse(d))).collect();
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let docs = docs.clone();
            std::thread::spawn(move || {
                (0..30)
                    .map(|i| all_names(&parse(&docs[(i + t) % docs.len()])))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for (t, h) in handles.into_iter().enumerate() {
        for (i, names) in h.join().unwrap().into_iter().enumerate() {
            assert_eq!(names, expected[(i + t) % docs.len()]);
        }
    }
}

#[test]
fn the_process_wide_name_table_stays_bounded() {
    // Many distinct names, namespaces and long names: the documents parse as before, and
    // the shared table stops growing at its limits.
    let long = "L".repeat(300);
    let mut s = String::from("<r>");
    for i in 0..6000 {
        s += &format!(
            "<p:n{i} xmlns:p=\"urn:bound{}\" a{i}=\"1\"/><{long}{i}/>\n",
            i % 200
        );
    }
    s += "</r>";
    let d = Document::parse(s.as_bytes()).unwrap();
    assert_eq!(d.name_count(), 1 + 3 * 6000);
    let n = d.lookup_name("urn:bound7", "n5807").unwrap();
    assert_eq!(d.qname(n).prefix, "p");
    assert_eq!(d.elements_named(n).len(), 1);
    let (namespaces, names, bytes) = super::shared::shared().usage();
    let (max_namespaces, max_names, max_bytes) = super::shared::LIMITS;
    assert!(namespaces <= max_namespaces, "{namespaces} namespaces");
    assert!(names <= max_names, "{names} names");
    assert!(bytes <= max_bytes, "{bytes} bytes");
    // Parsing works the same once the table is full.
    let again = Document::parse(s.as_bytes()).unwrap();
    assert_eq!(all_names(&again), all_names(&d));
}

// ----- malformed input -------------------------------------------------------------------

#[test]
fn malformed_unclosed_and_mismatched_tags() {
    assert_malformed(
        "<r>\n  <a>\n</r>",
        3,
        1,
        "`</r>` does not match the start tag `<a>` at line 2, column 3",
    );
    assert_malformed("<r><a></b></r>", 1, 7, "does not match");
    assert_malformed(
        "<r>\n<a></a>",
        2,
        8,
        "element `<r>` opened at line 1, column 1 is not closed",
    );
    assert_malformed("<r/></r>", 1, 5, "no matching start tag");
    assert_malformed("<r>text</r", 1, 8, "`>` not found");
    assert_malformed("<r>\n<a", 2, 1, "`>` not found");
    assert_malformed("<r><!-- x", 1, 4, "comment not closed");
    assert_malformed("<r><![CDATA[x", 1, 4, "CDATA section not closed");
    assert_malformed("<r><?pi x", 1, 4, "processing instruction not closed");
    assert_malformed("<r><!ELEMENT x></r>", 1, 4, "invalid markup after `<!`");
}

#[test]
fn malformed_attributes() {
    assert_malformed("<r a=1/>", 1, 6, "must be enclosed in quotes");
    assert_malformed("<r a/>", 1, 4, "attribute `a` has no value");
    assert_malformed(
        "<r a=\"1\"b=\"2\"/>",
        1,
        9,
        "expected whitespace between attributes",
    );
    assert_malformed("<r =\"1\"/>", 1, 4, "expected an attribute name");
    assert_malformed("<r a=\"1/>", 1, 1, "`>` not found");
    assert_malformed("<r\n a=\"1\"\n a=\"2\"/>", 3, 2, "duplicate attribute `a`");
    assert_malformed(
        r#"<r xmlns:p="urn:u" xmlns:q="urn:u" p:a="1" q:a="2"/>"#,
        1,
        44,
        "duplicate attribute `q:a`",
    );
    assert_malformed(
        r#"<r xmlns:p="urn:u" xmlns:p="urn:v"/>"#,
        1,
        20,
        "duplicate namespace declaration",
    );
    assert_malformed(
        "<r a=\"<\"/>",
        1,
        7,
        "`<` is not allowed in attribute values",
    );
    assert_malformed("<r 1a=\"x\"/>", 1, 4, "`1a` is not a valid attribute name");
}

#[test]
fn malformed_names_and_namespaces() {
    assert_malformed(
        "<r>\n <p:a/></r>",
        2,
        3,
        "namespace prefix `p` of element `p:a` is not declared",
    );
    assert_malformed(
        "<r p:a=\"1\"/>",
        1,
        4,
        "namespace prefix `p` of attribute `p:a`",
    );
    assert_malformed("<1r/>", 1, 2, "`1r` is not a valid element name");
    assert_malformed("<a:b:c xmlns:a=\"u\"/>", 1, 2, "not a valid element name");
    assert_malformed("< r/>", 1, 2, "expected an element name");
    assert_malformed("<>", 1, 2, "expected an element name");
    assert_malformed("<r xmlns:p=\"\"/>", 1, 4, "cannot be undeclared");
    assert_malformed("<xmlns:r/>", 1, 2, "prefix `xmlns`");
    assert_malformed(
        "<r xmlns:xml=\"urn:x\"/>",
        1,
        4,
        "prefix `xml` can only be bound",
    );
    assert_malformed(
        "<r xmlns:x=\"http://www.w3.org/XML/1998/namespace\"/>",
        1,
        4,
        "cannot be bound",
    );
    assert_malformed("<r xmlns:xmlns=\"urn:x\"/>", 1, 4, "must not be declared");
    assert_malformed("<r xmlns:1=\"urn:x\"/>", 1, 4, "invalid namespace prefix");
}

#[test]
fn malformed_document_structure() {
    assert_malformed(
        "<r/>\nx",
        2,
        1,
        "text is not allowed after the root element",
    );
    assert_malformed(
        "  x<r/>",
        1,
        3,
        "text is not allowed before the root element",
    );
    assert_malformed("<r/>&amp;", 1, 5, "after the root element");
    assert_malformed(
        "<![CDATA[x]]><r/>",
        1,
        1,
        "CDATA section is not allowed outside",
    );
    assert_malformed("<r/>\n<s/>", 2, 1, "only one root element");
    assert_malformed(" <?xml version=\"1.0\"?><r/>", 1, 2, "XML declaration");
    assert_malformed("<r><?xml version=\"1.0\"?></r>", 1, 4, "XML declaration");
    assert_malformed("<r><?XML x?></r>", 1, 6, "reserved");
    assert_malformed(
        "<r><!-- a -- b --></r>",
        1,
        11,
        "`--` is not allowed inside a comment",
    );
    assert_eq!(parse_err(""), ParseError::NoRootElement);
    assert_eq!(parse_err("  \n "), ParseError::NoRootElement);
    assert_eq!(
        parse_err("<?xml version=\"1.0\"?>\n<!-- only a comment -->\n"),
        ParseError::NoRootElement
    );
}

#[test]
fn xml_declaration_is_checked() {
    for ok in [
        "<?xml version=\"1.0\"?><r/>",
        "<?xml version='1.1' encoding='utf-8' standalone='yes' ?><r/>",
        "<?xml version=\"1.0\" encoding=\"UTF8\"?><r/>",
        // ASCII-compatible encodings are accepted for pure-ASCII documents.
        "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><r>abc</r>",
        "<?xml\tversion = \"1.0\"\nencoding=\"UTF-8\"?><r/>",
    ] {
        parse(ok);
    }
    assert_malformed("<?xml?><r/>", 1, 3, "must contain `version`");
    assert_malformed("<?xml encoding=\"UTF-8\"?><r/>", 1, 7, "expected `version`");
    assert_malformed(
        "<?xml version=\"2.0\"?><r/>",
        1,
        16,
        "invalid version `2.0`",
    );
    assert_malformed(
        "<?xml version=\"1.0\"encoding=\"UTF-8\"?><r/>",
        1,
        20,
        "expected whitespace",
    );
    assert_malformed(
        "<?xml version=\"1.0\" standalone=\"maybe\"?><r/>",
        1,
        33,
        "invalid standalone",
    );
    assert_malformed(
        "<?xml version=\"1.0\" standalone=\"no\" encoding=\"UTF-8\"?><r/>",
        1,
        37,
        "expected `version`",
    );
    assert_malformed(
        "<?xml version=\"1.0\" foo=\"bar\"?><r/>",
        1,
        21,
        "expected `version`",
    );
    assert_malformed("<?xml version=1.0?><r/>", 1, 15, "expected a quoted value");
    assert_malformed(
        "<?xml version=\"1.0\" encoding=\"UTF-16\"?><r/>",
        1,
        31,
        "unsupported encoding `UTF-16`",
    );
    assert_malformed(
        "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><r>é</r>",
        1,
        31,
        "unsupported encoding",
    );
}

#[test]
fn malformed_text_content() {
    assert_malformed(
        "<r>a & b</r>",
        1,
        6,
        "`&` must start an entity or character reference",
    );
    assert_malformed("<r>&#65</r>", 1, 4, "malformed character reference");
    assert_malformed("<r>&#12a;</r>", 1, 4, "malformed character reference");
    assert_malformed("<r>&#X41;</r>", 1, 4, "malformed character reference");
    assert_malformed("<r>&#;</r>", 1, 4, "malformed character reference");
    assert_malformed("<r>&#0;</r>", 1, 4, "does not denote a character allowed");
    assert_malformed("<r>&#xD800;</r>", 1, 4, "does not denote");
    assert_malformed("<r>&#x110000;</r>", 1, 4, "does not denote");
    assert_malformed("<r>&#99999999999999999999;</r>", 1, 4, "does not denote");
    assert_malformed("<r>&#xFFFE;</r>", 1, 4, "does not denote");
    assert_malformed("<r>ok ]]> no</r>", 1, 7, "`]]>` is not allowed");
    assert_malformed("<r>\u{1}</r>", 1, 4, "control character U+0001");
    assert_malformed("<r a=\"\u{0}\"/>", 1, 7, "control character U+0000");
    assert_malformed("<r><!--\u{8}--></r>", 1, 8, "control character");
    // A `>` alone is fine in text.
    assert_eq!(parse("<r>a > b</r>").string_value(NodeId(0)), "a > b");
}

#[test]
fn special_bytes_are_found_at_any_position_in_text() {
    // The scanners check runs of bytes several at a time; put the byte everywhere.
    for k in 0..24 {
        let pad = "x".repeat(k);
        let col = 4 + k as u32;
        // (document, element text, attribute value)
        let cases = [
            (
                format!("<r a=\"{pad}&amp;{pad}\">{pad}&lt;{pad}\r\n</r>"),
                format!("{pad}<{pad}\n"),
                format!("{pad}&{pad}"),
            ),
            (
                format!("<r a=\"{pad}\t{pad}\">{pad}>{pad}</r>"),
                format!("{pad}>{pad}"),
                format!("{pad} {pad}"),
            ),
        ];
        for (xml, text, attribute) in cases {
            let d = parse(&xml);
            let r = d.document_element();
            assert_eq!(d.string_value(r), text);
            assert_eq!(d.text(NodeId(d.attributes(r).start)), attribute);
        }
        assert_malformed(format!("<r>{pad}\u{1}{pad}</r>"), 1, col, "U+0001");
        assert_malformed(format!("<r>{pad}]]>{pad}</r>"), 1, col, "`]]>`");
        assert_malformed(format!("<r>{pad}&{pad}</r>"), 1, col, "`&` must start");
        assert_malformed(
            format!("<r a='{pad}<'/>"),
            1,
            7 + k as u32,
            "`<` is not allowed",
        );
    }
}

#[test]
fn malformed_encoding() {
    assert_malformed(b"<r>\n  \xFF</r>".as_slice(), 2, 3, "invalid UTF-8");
    assert_malformed(b"<r>\xC3</r>".as_slice(), 1, 4, "invalid UTF-8");
    assert_malformed(b"\xFF\xFE<\x00r\x00/\x00>\x00".as_slice(), 1, 1, "UTF-16");
    assert_malformed(b"<\x00r\x00/\x00>\x00".as_slice(), 1, 1, "UTF-16");
    assert_malformed("\u{FEFF}\u{FEFF}<r/>", 1, 1, "byte order mark");
}

#[test]
fn error_display_includes_position() {
    let e = parse_err("<r>\n<a></b></r>");
    assert_eq!(
        e.to_string(),
        "line 2, column 4: closing tag `</b>` does not match the start tag `<a>` at line 2, \
         column 1"
    );
    let long = format!("<r>&{};</r>", "x".repeat(5000));
    let msg = parse_err(long).to_string();
    assert!(
        msg.len() < 300,
        "long names are shortened in messages: {msg}"
    );
}

// ----- robustness ------------------------------------------------------------------------

/// A small document exercising most constructs, used for mutation testing.
const SAMPLE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!-- sample -->
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
    xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
    xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
  <cbc:ID>INV-1 &amp; &#x41;</cbc:ID>
  <cbc:Note xml:lang="de">Grüße <![CDATA[<raw> & ]]>ok</cbc:Note>
  <?pi data?>
  <cac:InvoiceLine>
    <cbc:LineExtensionAmount currencyID="EUR">19.90</cbc:LineExtensionAmount>
    <cac:Item a='1' b="&quot;2&quot;"><cbc:Name>Frites</cbc:Name></cac:Item>
    <x:Ext xmlns:x="urn:x" xmlns=""><y/></x:Ext>
  </cac:InvoiceLine>
</Invoice>
"#;

#[test]
fn sample_parses() {
    let d = parse(SAMPLE);
    let id = first_elem(&d, UBL_CBC, "ID");
    assert_eq!(d.string_value(id), "INV-1 & A");
    assert_eq!(d.line_column(id), (6, 3));
    let y = first_elem(&d, "", "y");
    assert_eq!(d.depth(y), 4);
}

/// Deterministic xorshift PRNG (no dependency).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn parse_no_panic(bytes: &[u8]) {
    if let Ok(d) = Document::parse(bytes) {
        check_invariants(&d);
        let _ = d.string_value(d.root());
    }
    let tight = Limits {
        max_bytes: 1 << 20,
        max_depth: 3,
    };
    let _ = Document::parse_with_limits(bytes, &tight);
}

#[test]
fn every_prefix_of_a_document_parses_or_fails_cleanly() {
    let bytes = SAMPLE.as_bytes();
    for i in 0..=bytes.len() {
        parse_no_panic(&bytes[..i]);
        parse_no_panic(&bytes[i..]);
    }
    // Only the complete document (up to trailing whitespace) is well-formed.
    let end = SAMPLE.trim_end().len();
    for i in 0..end {
        assert!(Document::parse(&bytes[..i]).is_err(), "prefix {i} parsed");
    }
}

#[test]
fn random_mutations_never_panic() {
    const SPECIAL: &[u8] = b"<>&;/\"'=:![]?-#x \n\r\t\0\xC3\xA9\xFF";
    let base = SAMPLE.as_bytes();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut ok = 0;
    for _ in 0..6000 {
        let mut m = base.to_vec();
        for _ in 0..1 + rng.below(4) {
            let len = m.len();
            if len == 0 {
                break;
            }
            let at = rng.below(len);
            match rng.below(6) {
                0 => m[at] = rng.next() as u8,
                1 => m[at] = SPECIAL[rng.below(SPECIAL.len())],
                2 => {
                    m.remove(at);
                }
                3 => m.insert(at, SPECIAL[rng.below(SPECIAL.len())]),
                4 => {
                    // Duplicate a random slice (e.g. repeats tags or attributes).
                    let to = (at + rng.below(40)).min(len);
                    let piece = m[at..to].to_vec();
                    let dest = rng.below(m.len());
                    m.splice(dest..dest, piece);
                }
                _ => {
                    let to = (at + rng.below(40)).min(len);
                    m.drain(at..to);
                }
            }
        }
        if Document::parse(&m).is_ok() {
            ok += 1;
        }
        parse_no_panic(&m);
    }
    // Sanity: the mutations are not all fatal (some land in text), nor all harmless.
    assert!(ok > 100 && ok < 5900, "ok = {ok}");
}

#[test]
#[cfg_attr(
    invex_no_corpus,
    ignore = "no conformance corpus: set INVEX_CONFORMANCE or provide ../shared/conformance (.ci/run requires it)"
)]
fn corpus_mutations_never_panic() {
    let path = corpus_examples().join("ubl-tc434-example1.xml");
    // The corpus was there when the tests were built (else this test is ignored).
    let bytes = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (the conformance corpus was found when the tests were built)",
            path.display()
        )
    });
    for i in (0..bytes.len()).step_by(97) {
        parse_no_panic(&bytes[..i]);
    }
    let mut rng = Rng(42);
    for _ in 0..300 {
        let mut m = bytes.clone();
        for _ in 0..3 {
            let at = rng.below(m.len());
            m[at] = rng.next() as u8;
        }
        parse_no_panic(&m);
    }
}

// ----- real invoices ---------------------------------------------------------------------

#[test]
#[cfg_attr(
    invex_no_corpus,
    ignore = "no conformance corpus: set INVEX_CONFORMANCE or provide ../shared/conformance (.ci/run requires it)"
)]
fn corpus_documents_parse() {
    let dir = corpus_examples();
    // The corpus was there when the tests were built (else this test is ignored).
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (the conformance corpus was found when the tests were built)",
            dir.display()
        )
    });
    let mut parsed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        let is_xml = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("xml"));
        if !is_xml {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let d = Document::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        check_invariants(&d);
        assert!(d.len() > 20, "{}", path.display());
        parsed += 1;
    }
    assert!(parsed > 0, "no XML files in {}", dir.display());

    let guide = dir.join("guide-example1.xml");
    if let Ok(bytes) = std::fs::read(guide) {
        let d = Document::parse(&bytes).unwrap();
        let inv = d.document_element();
        assert_eq!(name_of(&d, inv).namespace, UBL_INVOICE);
        assert_eq!(name_of(&d, inv).local, "Invoice");
        assert_eq!(d.line_column(inv), (7, 1));
        let id = d
            .children(inv)
            .find(|&c| d.kind(c) == NodeKind::Element && name_of(&d, c).local == "ID")
            .unwrap();
        assert_eq!(name_of(&d, id).namespace, UBL_CBC);
        assert_eq!(name_of(&d, id).prefix, "cbc");
        assert_eq!(d.string_value(id), "12115118");
        assert_eq!(d.line_column(id), (14, 5));
        // The prolog comment is a child of the document node.
        assert_eq!(d.kind(d.first_child(d.root()).unwrap()), NodeKind::Comment);
    }
}

#[test]
fn documents_can_be_shared_across_threads() {
    let d = std::sync::Arc::new(parse(SAMPLE));
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let d = d.clone();
            std::thread::spawn(move || d.line_column(d.document_element()))
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), (3, 1));
    }
}
