//! Readable XPath locations for findings: `/ubl:Invoice/cac:InvoiceLine[2]/cbc:ID`.

use std::collections::{HashMap, HashSet};

use crate::document::{Document, NameId, NodeId, NodeKind};

use super::Location;

/// Namespace URI → the prefix a pack uses for it (the first one it declares).
#[derive(Clone, Debug, Default)]
pub struct PrefixMap {
    by_uri: HashMap<String, String>,
}

const XML_NS: &str = "http://www.w3.org/XML/1998/namespace";

impl PrefixMap {
    /// Build from `(prefix, uri)` pairs in declaration order; the first prefix of a URI wins.
    pub fn new<'a>(namespaces: impl IntoIterator<Item = (&'a str, &'a str)>) -> PrefixMap {
        let mut by_uri = HashMap::new();
        by_uri.insert(XML_NS.to_string(), "xml".to_string());
        for (prefix, uri) in namespaces {
            by_uri
                .entry(uri.to_string())
                .or_insert_with(|| prefix.to_string());
        }
        PrefixMap { by_uri }
    }

    pub fn prefix_for(&self, uri: &str) -> Option<&str> {
        self.by_uri.get(uri).map(String::as_str)
    }
}

/// Builds location paths for nodes of one document. Keeps an index of same-named
/// siblings so that locating many findings under a large parent stays linear.
pub struct PathBuilder<'d> {
    doc: &'d Document,
    indexed_parents: HashSet<NodeId>,
    same_named: HashMap<(NodeId, NameId), Vec<NodeId>>,
}

impl<'d> PathBuilder<'d> {
    pub fn new(doc: &'d Document) -> PathBuilder<'d> {
        PathBuilder {
            doc,
            indexed_parents: HashSet::new(),
            same_named: HashMap::new(),
        }
    }

    pub fn location(&mut self, node: NodeId, prefixes: &PrefixMap) -> Location {
        let (line, column) = self.doc.line_column(node);
        Location {
            path: self.path(node, prefixes),
            line,
            column,
        }
    }

    /// The readable XPath of `node`.
    pub fn path(&mut self, node: NodeId, prefixes: &PrefixMap) -> String {
        let mut chain = Vec::new();
        let mut cur = Some(node);
        while let Some(n) = cur {
            if self.doc.kind(n) == NodeKind::Document {
                break;
            }
            chain.push(n);
            cur = self.doc.parent(n);
        }
        if chain.is_empty() {
            return "/".to_string();
        }
        let mut out = String::new();
        for &n in chain.iter().rev() {
            out.push('/');
            self.step(n, prefixes, &mut out);
        }
        out
    }

    fn step(&mut self, n: NodeId, prefixes: &PrefixMap, out: &mut String) {
        let doc = self.doc;
        match doc.kind(n) {
            NodeKind::Element => {
                if let Some(name) = doc.name(n) {
                    push_name(doc, name, prefixes, out);
                    let k = self.element_position(n, name);
                    if k > 1 {
                        out.push_str(&format!("[{k}]"));
                    }
                }
            }
            NodeKind::Attribute => {
                out.push('@');
                if let Some(name) = doc.name(n) {
                    push_name(doc, name, prefixes, out);
                }
            }
            NodeKind::Text => {
                out.push_str("text()");
                push_index(self.kind_position(n, NodeKind::Text), out);
            }
            NodeKind::Comment => {
                out.push_str("comment()");
                push_index(self.kind_position(n, NodeKind::Comment), out);
            }
            NodeKind::ProcessingInstruction => {
                let target = doc
                    .name(n)
                    .map(|name| doc.qname(name).local.clone())
                    .unwrap_or_default();
                out.push_str(&format!("processing-instruction({target})"));
            }
            NodeKind::Document => {}
        }
    }

    /// 1-based position of element `n` among its same-named siblings.
    fn element_position(&mut self, n: NodeId, name: NameId) -> usize {
        let Some(parent) = self.doc.parent(n) else {
            return 1;
        };
        if self.indexed_parents.insert(parent) {
            let mut child = self.doc.first_child(parent);
            while let Some(c) = child {
                if self.doc.kind(c) == NodeKind::Element {
                    if let Some(cn) = self.doc.name(c) {
                        self.same_named.entry((parent, cn)).or_default().push(c);
                    }
                }
                child = self.doc.next_sibling(c);
            }
        }
        match self.same_named.get(&(parent, name)) {
            Some(list) => list.binary_search(&n).map(|i| i + 1).unwrap_or(1),
            None => 1,
        }
    }

    fn kind_position(&self, n: NodeId, kind: NodeKind) -> usize {
        let mut k = 1;
        let mut cur = self.doc.prev_sibling(n);
        while let Some(c) = cur {
            if self.doc.kind(c) == kind {
                k += 1;
            }
            cur = self.doc.prev_sibling(c);
        }
        k
    }
}

fn push_index(k: usize, out: &mut String) {
    if k > 1 {
        out.push_str(&format!("[{k}]"));
    }
}

fn push_name(doc: &Document, name: NameId, prefixes: &PrefixMap, out: &mut String) {
    let q = doc.qname(name);
    if q.namespace.is_empty() {
        out.push_str(&q.local);
        return;
    }
    let prefix = prefixes
        .prefix_for(&q.namespace)
        .filter(|p| !p.is_empty())
        .unwrap_or(if q.prefix.is_empty() { "*" } else { &q.prefix });
    out.push_str(prefix);
    out.push(':');
    out.push_str(&q.local);
}

#[cfg(test)]
mod tests {
    use super::*;

    const XML: &str = r#"<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
  xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"
  xmlns:c="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
  xmlns:x="urn:other">
  <cbc:ID>1</cbc:ID>
  <c:InvoiceLine><cbc:ID>a</cbc:ID></c:InvoiceLine>
  <c:InvoiceLine><cbc:Note>n</cbc:Note><cbc:ID>b</cbc:ID><cbc:Amount currencyID="EUR">1</cbc:Amount></c:InvoiceLine>
  <x:Ext/><x:Ext/>
  <plain xmlns=""/>
</Invoice>"#;

    fn prefixes() -> PrefixMap {
        PrefixMap::new([
            (
                "ubl",
                "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2",
            ),
            (
                "cbc",
                "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2",
            ),
            (
                "cac",
                "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
            ),
            (
                "other",
                "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
            ),
        ])
    }

    fn find(doc: &Document, ns: &str, local: &str, nth: usize) -> NodeId {
        let name = doc.lookup_name(ns, local).expect("name");
        doc.elements_named(name)[nth]
    }

    #[test]
    fn paths_with_indexes_prefixes_and_attributes() {
        let doc = Document::parse(XML.as_bytes()).unwrap();
        let p = prefixes();
        let mut b = PathBuilder::new(&doc);
        let cbc = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2";
        let cac = "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2";
        assert_eq!(b.path(doc.document_element(), &p), "/ubl:Invoice");
        assert_eq!(b.path(doc.root(), &p), "/");
        // cbc:ID of the invoice, of line 1, of line 2.
        assert_eq!(b.path(find(&doc, cbc, "ID", 0), &p), "/ubl:Invoice/cbc:ID");
        assert_eq!(
            b.path(find(&doc, cbc, "ID", 1), &p),
            "/ubl:Invoice/cac:InvoiceLine/cbc:ID"
        );
        assert_eq!(
            b.path(find(&doc, cbc, "ID", 2), &p),
            "/ubl:Invoice/cac:InvoiceLine[2]/cbc:ID"
        );
        assert_eq!(
            b.path(find(&doc, cac, "InvoiceLine", 1), &p),
            "/ubl:Invoice/cac:InvoiceLine[2]"
        );
        let amount = find(&doc, cbc, "Amount", 0);
        let attr = doc.attributes(amount).next().map(NodeId).unwrap();
        assert_eq!(
            b.path(attr, &p),
            "/ubl:Invoice/cac:InvoiceLine[2]/cbc:Amount/@currencyID"
        );
        // Unknown to the pack: the document's prefix; no namespace: the bare name.
        assert_eq!(
            b.path(find(&doc, "urn:other", "Ext", 1), &p),
            "/ubl:Invoice/x:Ext[2]"
        );
        assert_eq!(b.path(find(&doc, "", "plain", 0), &p), "/ubl:Invoice/plain");
        let loc = b.location(attr, &p);
        assert_eq!(loc.line, 7);
    }

    #[test]
    fn default_namespace_unknown_to_the_pack() {
        let doc = Document::parse(b"<a xmlns='urn:q'><b/><b/></a>").unwrap();
        let mut b = PathBuilder::new(&doc);
        let second = find(&doc, "urn:q", "b", 1);
        assert_eq!(b.path(second, &PrefixMap::default()), "/*:a/*:b[2]");
    }
}
