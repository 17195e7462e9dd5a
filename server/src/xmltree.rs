//! An owned element tree for code that reads a document by names: the invoice view (the
//! PDF rendition, identifier checks, a sent invoice's identity) and SMP answers.
//!
//! The tree is built from the engine's parsed [`Document`], never by a parser of its own:
//! that parser is linear in the input (attributes and namespace declarations included),
//! refuses DTDs and entities, and enforces size and depth limits. One parse then serves
//! validation and every reader of the same request.

use invex_engine::document::{Document, Limits, NodeId, NodeKind, ParseError};

#[derive(Debug, Default)]
pub struct Element {
    /// Namespace URI (empty when unqualified).
    pub ns: String,
    /// Local name.
    pub name: String,
    /// Attributes by local name.
    attrs: Vec<(String, String)>,
    /// Text directly inside this element (not its descendants'), as written.
    text: String,
    pub children: Vec<Element>,
}

/// Parse `bytes` (with `limits`) into the document element's tree.
pub fn parse(bytes: &[u8], limits: &Limits) -> Result<Element, ParseError> {
    Document::parse_with_limits(bytes, limits).map(|doc| from_document(&doc))
}

/// The tree of `doc`'s document element. Built without recursion, so depth costs no stack.
pub fn from_document(doc: &Document) -> Element {
    let root = doc.document_element();
    let mut open: Vec<(Element, Option<NodeId>)> =
        vec![(element(doc, root), doc.first_child(root))];
    loop {
        let Some((_, next)) = open.last_mut() else {
            // Unreachable: the loop returns when the root closes.
            return Element::default();
        };
        match *next {
            Some(child) => {
                *next = doc.next_sibling(child);
                match doc.kind(child) {
                    NodeKind::Element => open.push((element(doc, child), doc.first_child(child))),
                    NodeKind::Text => {
                        if let Some((parent, _)) = open.last_mut() {
                            parent.text.push_str(doc.text(child));
                        }
                    }
                    _ => {}
                }
            }
            None => {
                let Some((done, _)) = open.pop() else {
                    return Element::default();
                };
                match open.last_mut() {
                    Some((parent, _)) => parent.children.push(done),
                    None => return done,
                }
            }
        }
    }
}

/// Dropped without recursion: a derived drop would recurse once per level, and a deep
/// document would overflow the stack.
impl Drop for Element {
    fn drop(&mut self) {
        let mut pending = std::mem::take(&mut self.children);
        while let Some(mut el) = pending.pop() {
            pending.append(&mut el.children);
        }
    }
}

fn element(doc: &Document, n: NodeId) -> Element {
    let (ns, name) = match doc.element_name(n) {
        Some(id) => {
            let q = doc.qname(id);
            (q.namespace.clone(), q.local.clone())
        }
        None => (String::new(), String::new()),
    };
    let attrs = doc
        .attributes(n)
        .map(NodeId)
        .filter_map(|a| {
            let q = doc.qname(doc.name(a)?);
            Some((q.local.clone(), doc.text(a).to_string()))
        })
        .collect();
    Element {
        ns,
        name,
        attrs,
        text: String::new(),
        children: Vec::new(),
    }
}

impl Element {
    /// The first child with this local name (any namespace: UBL prefixes vary between
    /// senders, and the paths readers use are unambiguous within UBL).
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    /// All children with this local name.
    pub fn children<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    /// The first child with local name `name` in one of `namespaces`.
    pub fn child_in(&self, namespaces: &[&str], name: &str) -> Option<&Element> {
        self.children
            .iter()
            .find(|c| c.name == name && namespaces.contains(&c.ns.as_str()))
    }

    /// Every child with local name `name` in one of `namespaces`.
    pub fn children_in<'a>(
        &'a self,
        namespaces: &'a [&'a str],
        name: &'a str,
    ) -> impl Iterator<Item = &'a Element> + 'a {
        self.children
            .iter()
            .filter(move |c| c.name == name && namespaces.contains(&c.ns.as_str()))
    }

    /// The first element along a `/`-separated path of local names.
    pub fn at(&self, path: &str) -> Option<&Element> {
        path.split('/').try_fold(self, |el, step| el.child(step))
    }

    /// All elements reached by a path (every match at every step).
    pub fn all<'a>(&'a self, path: &str) -> Vec<&'a Element> {
        let mut current = vec![self];
        for step in path.split('/') {
            current = current
                .into_iter()
                .flat_map(|el| el.children.iter().filter(|c| c.name == step))
                .collect();
        }
        current
    }

    /// The trimmed text at a path, if present and not blank.
    pub fn text_at(&self, path: &str) -> Option<String> {
        self.at(path).and_then(Element::value)
    }

    /// This element's trimmed text, if not blank.
    pub fn value(&self) -> Option<String> {
        self.text().map(str::to_string)
    }

    /// This element's trimmed text, if not blank.
    pub fn text(&self) -> Option<&str> {
        Some(self.text.trim()).filter(|t| !t.is_empty())
    }

    /// The trimmed value of the attribute with this local name, if not blank.
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn tree(xml: &str) -> Element {
        parse(xml.as_bytes(), &Limits::default()).expect("parses")
    }

    #[test]
    fn names_namespaces_text_and_attributes() {
        let root = tree(
            r#"<?xml version="1.0"?><a:Root xmlns:a="urn:a" xmlns="urn:b"><Item k=" v &amp; w ">x &lt; y</Item><a:Empty/><![CDATA[z]]><!-- c --></a:Root>"#,
        );
        assert_eq!((root.ns.as_str(), root.name.as_str()), ("urn:a", "Root"));
        let item = root.child_in(&["urn:b"], "Item").expect("item");
        assert_eq!(item.attribute("k"), Some("v & w"));
        assert_eq!(item.text(), Some("x < y"));
        assert!(root.child_in(&["urn:a"], "Item").is_none());
        assert!(root.child_in(&["urn:a"], "Empty").is_some());
        assert_eq!(root.text(), Some("z"));
        assert_eq!(
            root.at("Item").and_then(Element::value).as_deref(),
            Some("x < y")
        );
        assert_eq!(root.all("Empty").len(), 1);
    }

    #[test]
    fn doctypes_and_broken_documents_are_refused() {
        let limits = Limits::default();
        assert!(matches!(
            parse(br#"<!DOCTYPE x [<!ENTITY e "boom">]><x>&e;</x>"#, &limits),
            Err(ParseError::Doctype { .. })
        ));
        assert!(parse(b"<a><b></a>", &limits).is_err());
        assert!(parse(b"", &limits).is_err());
        let deep = format!("{}{}", "<a>".repeat(40), "</a>".repeat(40));
        let shallow = Limits {
            max_depth: 32,
            ..Limits::default()
        };
        assert!(matches!(
            parse(deep.as_bytes(), &shallow),
            Err(ParseError::TooDeep { .. })
        ));
    }

    #[test]
    fn deep_documents_build_without_recursion() {
        let depth = 100_000;
        let xml = format!("{}{}", "<a>".repeat(depth), "</a>".repeat(depth));
        let limits = Limits {
            max_depth: depth + 1,
            ..Limits::default()
        };
        let mut el = &parse(xml.as_bytes(), &limits).expect("parses");
        let mut n = 1;
        while let Some(c) = el.child("a") {
            el = c;
            n += 1;
        }
        assert_eq!(n, depth);
    }

    /// Many attributes on one element cost time in proportion to their number (the quick-xml
    /// reader this replaced checked each attribute against all earlier ones).
    #[test]
    fn many_attributes_take_linear_time() {
        let doc = |n: usize| {
            let mut s = String::from("<Invoice");
            for i in 0..n {
                s.push_str(&format!(" a{i}=\"value of attribute {i}\""));
            }
            s.push_str("><ID>1</ID></Invoice>");
            s
        };
        let time = |n: usize| {
            let xml = doc(n);
            let start = Instant::now();
            let root = tree(&xml);
            let last = format!("value of attribute {}", n - 1);
            assert_eq!(root.attribute(&format!("a{}", n - 1)), Some(last.as_str()));
            start.elapsed()
        };
        time(1_000);
        let small = time(20_000).as_secs_f64();
        let large = time(80_000).as_secs_f64();
        // Four times the attributes; quadratic work would be sixteen times the time.
        assert!(
            large < small * 8.0 + 0.05,
            "20k: {small:.3}s, 80k: {large:.3}s"
        );
    }
}
