//! The parsed XML document: an immutable, `Send + Sync` arena of nodes in document order.
//!
//! CONTRACT (filled in by the document module's author; the XPath evaluator codes against it):
//! - Nodes live in one `Vec` in document order (pre-order): the document node is `NodeId(0)`,
//!   an element is followed by its attribute nodes, then its children (recursively).
//!   Hence `NodeId` ordering IS document order, and the subtree of `n` (attributes included)
//!   is the half-open range `n.0 + 1 .. subtree_end(n).0`.
//! - Names are interned per document: `NameId` → (namespace URI, local name, prefix as written).
//! - Text of text/attribute/comment/PI nodes is stored unescaped (entities and char refs
//!   resolved; CDATA becomes text; adjacent text+CDATA are merged into ONE text node).
//! - Whitespace-only text nodes are kept (XPath string values need them).
//! - Namespace declarations (`xmlns`, `xmlns:p`) are NOT attribute nodes.
//! - A DOCTYPE anywhere is refused (`ParseError::Doctype`), never expanded.
//!
//! Implementation notes (beyond the contract):
//! - Input must be UTF-8 (a UTF-8 byte-order mark is skipped; other encodings are refused
//!   with `Malformed`). Line endings are normalised as XML requires (`\r\n` and a lone `\r`
//!   become `\n`), and attribute values get XML attribute-value normalisation (literal tab,
//!   newline and carriage return become a space; character references are kept verbatim).
//! - Only the five predefined entities and numeric character references are resolved;
//!   any other entity reference is `Malformed`.
//! - Text outside the document element must be whitespace and is not stored.
//! - A document without a root element yields `ParseError::NoRootElement`.
//! - Node accessors take ids handed out by the same document; a foreign or out-of-range id
//!   panics (an indexing error), exactly like indexing a slice. Parsing never panics.
//! - Name strings that many documents use live once in a bounded process-wide table
//!   (`shared.rs`); a document refers to them, and keeps its own copies of the others.
//! - Memory: the document keeps one copy of the source text (text spans point into it when
//!   no unescaping was needed) plus ~36 bytes per node.

use std::borrow::Cow;
use std::sync::OnceLock;

mod lines;
mod names;
mod parse;
mod shared;
#[cfg(test)]
mod tests;

/// Index of a node in the document arena; ordering is document order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

/// Interned expanded name within one document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NameId(pub u32);

/// The interned names of one namespace of a document (see [`Document::namespace_names`]).
#[derive(Clone, Copy)]
pub struct NamespaceNames<'d>(names::Namespace<'d>);

impl NamespaceNames<'_> {
    /// The id of `{namespace}local`, if some node has that name.
    pub fn lookup(self, local: &str) -> Option<NameId> {
        self.0.lookup(local).map(NameId)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Document,
    Element,
    Attribute,
    Text,
    Comment,
    ProcessingInstruction,
}

/// An expanded name plus the prefix it was written with (for readable paths).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QName {
    pub namespace: String,
    pub local: String,
    pub prefix: String,
}

/// Parser limits; defaults suit invoices (large ones included).
#[derive(Clone, Debug)]
pub struct Limits {
    /// Maximum input size in bytes (default 64 MiB).
    pub max_bytes: usize,
    /// Maximum element nesting depth (default 256).
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 64 * 1024 * 1024,
            max_depth: 256,
        }
    }
}

#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum ParseError {
    #[error("line {line}, column {column}: {message}")]
    Malformed {
        line: u32,
        column: u32,
        message: String,
    },
    #[error("line {line}, column {column}: DOCTYPE declarations are not accepted (no DTDs or entity declarations)")]
    Doctype { line: u32, column: u32 },
    #[error("document is {size} bytes, over the limit of {limit} bytes")]
    TooLarge { size: usize, limit: usize },
    #[error("line {line}, column {column}: element nesting deeper than the limit of {limit}")]
    TooDeep {
        line: u32,
        column: u32,
        limit: usize,
    },
    #[error("the document has no root element")]
    NoRootElement,
}

/// "No node" marker in the compact node links.
const NONE: u32 = u32::MAX;

/// One node of the arena (36 bytes). Field use by kind:
/// - `a`: text/attribute/comment/PI: start of the text span in `Document::text`;
///   element/document: index of the first node after the attributes (= first child if
///   `a < end`).
/// - `b`: text-like: length of the text span; element/document: last child (or `NONE`).
#[derive(Clone, Copy, Debug)]
struct Node {
    /// `NodeKind` in the top 8 bits, depth in the low 24 bits.
    kind_depth: u32,
    name: u32,
    parent: u32,
    next: u32,
    prev: u32,
    end: u32,
    offset: u32,
    a: u32,
    b: u32,
}

const KIND_SHIFT: u32 = 24;
/// Largest depth representable in `Node::kind_depth`.
const MAX_REPRESENTABLE_DEPTH: usize = (1 << KIND_SHIFT) - 1;

impl Node {
    #[inline]
    fn kind(&self) -> NodeKind {
        match self.kind_depth >> KIND_SHIFT {
            0 => NodeKind::Document,
            1 => NodeKind::Element,
            2 => NodeKind::Attribute,
            3 => NodeKind::Text,
            4 => NodeKind::Comment,
            _ => NodeKind::ProcessingInstruction,
        }
    }

    #[inline]
    fn pack(kind: NodeKind, depth: u32) -> u32 {
        let k = match kind {
            NodeKind::Document => 0,
            NodeKind::Element => 1,
            NodeKind::Attribute => 2,
            NodeKind::Text => 3,
            NodeKind::Comment => 4,
            NodeKind::ProcessingInstruction => 5,
        };
        (k << KIND_SHIFT) | (depth & ((1 << KIND_SHIFT) - 1))
    }

    #[inline]
    fn is_container(&self) -> bool {
        self.kind_depth >> KIND_SHIFT <= 1
    }
}

#[inline]
fn opt(v: u32) -> Option<NodeId> {
    if v == NONE {
        None
    } else {
        Some(NodeId(v))
    }
}

/// The part of a node that tree walks read, kept apart from [`Node`] (12 bytes instead of
/// 36): the child and descendant steps of rules touch only this array, so a walk over
/// the lines of a large invoice streams a third of the memory, and the walked array of a
/// 10,000-line invoice (about 9 MB) stays in the last-level cache.
#[derive(Clone, Copy, Debug)]
struct Link {
    /// An element's `NameId`; other kinds: `TAG_BASE` + the kind's code.
    tag: u32,
    /// Next sibling (or `NONE`).
    next: u32,
    /// First child (or `NONE`).
    first: u32,
}

/// Tags at or above this mark non-element nodes. Name ids stay below it: a document has
/// fewer names than bytes, and its size is a `u32`.
const TAG_BASE: u32 = u32::MAX - 7;

impl Link {
    fn of(node: &Node) -> Link {
        let code = node.kind_depth >> KIND_SHIFT;
        Link {
            tag: if code == 1 {
                node.name
            } else {
                TAG_BASE + code
            },
            next: node.next,
            first: if node.is_container() && node.a < node.end {
                node.a
            } else {
                NONE
            },
        }
    }

    #[inline]
    fn kind(self) -> NodeKind {
        if self.tag < TAG_BASE {
            return NodeKind::Element;
        }
        match self.tag - TAG_BASE {
            0 => NodeKind::Document,
            2 => NodeKind::Attribute,
            3 => NodeKind::Text,
            4 => NodeKind::Comment,
            _ => NodeKind::ProcessingInstruction,
        }
    }
}

pub struct Document {
    nodes: Vec<Node>,
    /// The walk-relevant part of each node, same index as `nodes`.
    links: Vec<Link>,
    /// The source text (without BOM) followed by text that needed unescaping or merging.
    text: String,
    /// Length of the source part of `text`.
    src_len: u32,
    names: names::NameTable,
    elements_by_name: ByName,
    attributes_by_name: ByName,
    document_element: u32,
    /// Line starts and character counts, built on the first `line_column` call.
    line_index: OnceLock<lines::LineIndex>,
    /// The document element's child elements by name, built on first use: rules look
    /// up `/ubl:Invoice/cbc:X` constantly, and an invoice root has thousands of children.
    root_children: OnceLock<Vec<Vec<NodeId>>>,
}

impl Document {
    pub fn parse(bytes: &[u8]) -> Result<Document, ParseError> {
        parse::parse(bytes, &Limits::default())
    }
    pub fn parse_with_limits(bytes: &[u8], limits: &Limits) -> Result<Document, ParseError> {
        parse::parse(bytes, limits)
    }
    /// The document node (always NodeId(0)).
    pub fn root(&self) -> NodeId {
        NodeId(0)
    }
    pub fn document_element(&self) -> NodeId {
        NodeId(self.document_element)
    }
    pub fn len(&self) -> usize {
        self.nodes.len()
    }
    /// Always false: a parsed document has at least the document node and its element.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
    #[inline]
    pub fn kind(&self, n: NodeId) -> NodeKind {
        self.links[n.0 as usize].kind()
    }
    /// An element's name; None for every other kind of node (one load from the walk array).
    #[inline]
    pub fn element_name(&self, n: NodeId) -> Option<NameId> {
        let tag = self.links[n.0 as usize].tag;
        (tag < TAG_BASE).then_some(NameId(tag))
    }
    /// Element/attribute/PI name (PI: local = target, namespace empty); None for others.
    pub fn name(&self, n: NodeId) -> Option<NameId> {
        let v = self.nodes[n.0 as usize].name;
        if v == NONE {
            None
        } else {
            Some(NameId(v))
        }
    }
    /// Whether `n` is an element named `name` (one load, for child scans).
    #[inline]
    pub fn is_element_named(&self, n: NodeId, name: NameId) -> bool {
        self.links[n.0 as usize].tag == name.0
    }
    pub fn qname(&self, name: NameId) -> &QName {
        self.names.get(name.0)
    }
    /// Look up an interned name by namespace URI and local name (None: no node has it).
    pub fn lookup_name(&self, namespace: &str, local: &str) -> Option<NameId> {
        self.names.lookup(namespace, local).map(NameId)
    }
    /// The names of one namespace, for resolving many names of it without hashing the
    /// namespace URI each time (None: no node's name is in that namespace).
    pub fn namespace_names(&self, namespace: &str) -> Option<NamespaceNames<'_>> {
        self.names.namespace(namespace).map(NamespaceNames)
    }
    /// Number of distinct interned names (valid `NameId`s are `0..name_count()`).
    pub fn name_count(&self) -> usize {
        self.names.len()
    }
    pub fn parent(&self, n: NodeId) -> Option<NodeId> {
        opt(self.nodes[n.0 as usize].parent)
    }
    /// First child (elements, text, comments, PIs — never attributes).
    #[inline]
    pub fn first_child(&self, n: NodeId) -> Option<NodeId> {
        opt(self.links[n.0 as usize].first)
    }
    pub fn last_child(&self, n: NodeId) -> Option<NodeId> {
        let node = &self.nodes[n.0 as usize];
        if node.is_container() {
            opt(node.b)
        } else {
            None
        }
    }
    #[inline]
    pub fn next_sibling(&self, n: NodeId) -> Option<NodeId> {
        opt(self.links[n.0 as usize].next)
    }
    pub fn prev_sibling(&self, n: NodeId) -> Option<NodeId> {
        opt(self.nodes[n.0 as usize].prev)
    }
    /// Attribute nodes of an element, in document order (empty for non-elements).
    pub fn attributes(&self, n: NodeId) -> std::ops::Range<u32> {
        let node = &self.nodes[n.0 as usize];
        if node.kind() == NodeKind::Element {
            n.0 + 1..node.a
        } else {
            n.0 + 1..n.0 + 1
        }
    }
    pub fn attribute(&self, element: NodeId, name: NameId) -> Option<NodeId> {
        self.attributes(element)
            .find(|&a| self.nodes[a as usize].name == name.0)
            .map(NodeId)
    }
    /// One past the last node of n's subtree (attributes included).
    pub fn subtree_end(&self, n: NodeId) -> NodeId {
        NodeId(self.nodes[n.0 as usize].end)
    }
    /// Text of a text, attribute, comment or PI node ("" for others).
    pub fn text(&self, n: NodeId) -> &str {
        let node = &self.nodes[n.0 as usize];
        if node.is_container() {
            ""
        } else {
            self.span(node)
        }
    }
    /// XPath string value: concatenated descendant text for document/element nodes.
    pub fn string_value(&self, n: NodeId) -> Cow<'_, str> {
        let node = &self.nodes[n.0 as usize];
        if !node.is_container() {
            return Cow::Borrowed(self.span(node));
        }
        let (a, end) = (node.a as usize, node.end as usize);
        let text_tag = TAG_BASE + 3;
        let mut texts = self.links[a..end]
            .iter()
            .zip(&self.nodes[a..end])
            .filter(|(l, _)| l.tag == text_tag)
            .map(|(_, d)| d);
        let Some(first) = texts.next() else {
            return Cow::Borrowed("");
        };
        let Some(second) = texts.next() else {
            return Cow::Borrowed(self.span(first));
        };
        let mut s = String::with_capacity(first.b as usize + second.b as usize + 16);
        s.push_str(self.span(first));
        s.push_str(self.span(second));
        for t in texts {
            s.push_str(self.span(t));
        }
        Cow::Owned(s)
    }
    /// All ELEMENTS with this name, in document order.
    pub fn elements_named(&self, name: NameId) -> &[NodeId] {
        self.elements_by_name.get(name)
    }
    /// Child elements of the document element with this name, in document order.
    pub fn document_element_children_named(&self, name: NameId) -> &[NodeId] {
        let index = self.root_children.get_or_init(|| {
            let mut by_name: Vec<Vec<NodeId>> = vec![Vec::new(); self.names.len()];
            for c in self.children(self.document_element()) {
                if let (NodeKind::Element, Some(id)) = (self.kind(c), self.name(c)) {
                    if let Some(v) = by_name.get_mut(id.0 as usize) {
                        v.push(c);
                    }
                }
            }
            by_name
        });
        index.get(name.0 as usize).map_or(&[], |v| v.as_slice())
    }
    /// All ATTRIBUTES with this name, in document order.
    pub fn attributes_named(&self, name: NameId) -> &[NodeId] {
        self.attributes_by_name.get(name)
    }
    /// 1-based line and column of the node's start (element: its `<`; attribute: its name).
    pub fn line_column(&self, n: NodeId) -> (u32, u32) {
        let offset = self.byte_offset(n);
        let src = &self.text.as_bytes()[..self.src_len as usize];
        self.line_index
            .get_or_init(|| lines::LineIndex::new(src))
            .line_column(src, offset)
    }
    /// Depth (document node 0, document element 1, ...).
    pub fn depth(&self, n: NodeId) -> u32 {
        self.nodes[n.0 as usize].kind_depth & ((1 << KIND_SHIFT) - 1)
    }
    /// Byte offset of the node's start in the parsed source (after a UTF-8 BOM, if any).
    /// Text nodes start at their first character (a CDATA section at its `<`).
    pub fn byte_offset(&self, n: NodeId) -> usize {
        self.nodes[n.0 as usize].offset as usize
    }
    /// Read the nodes `range` and the source text they cover once, front to back, so that
    /// the CPU's prefetchers bring them into the cache at full memory bandwidth before
    /// rules walk them in tree order (see `rules::REGION_NODES`). Returns a checksum only
    /// so that the reads are not optimised away.
    pub fn warm(&self, range: std::ops::Range<usize>) -> u64 {
        let end = range.end.min(self.nodes.len());
        let start = range.start.min(end);
        let mut sum = 0u64;
        // One read per 64-byte cache line is enough.
        for l in self.links[start..end].iter().step_by(5) {
            sum = sum.wrapping_add(u64::from(l.tag));
        }
        for n in self.nodes[start..end].iter().step_by(2) {
            sum = sum.wrapping_add(u64::from(n.parent));
        }
        let from = self.nodes.get(start).map_or(0, |n| n.offset as usize);
        let to = self
            .nodes
            .get(end)
            .map_or(self.src_len as usize, |n| n.offset as usize);
        let bytes = self.text.as_bytes();
        if let Some(src) = bytes.get(from..to.max(from)) {
            for b in src.iter().step_by(64) {
                sum = sum.wrapping_add(u64::from(*b));
            }
        }
        sum
    }
    /// Child nodes of `n` in document order (never attributes).
    pub fn children(&self, n: NodeId) -> Children<'_> {
        Children {
            doc: self,
            next: self.first_child(n).map_or(NONE, |c| c.0),
        }
    }

    #[inline]
    fn span(&self, node: &Node) -> &str {
        let start = node.a as usize;
        self.text.get(start..start + node.b as usize).unwrap_or("")
    }
}

/// Node ids grouped by name, in document order within a group: the group of name `n` is
/// `ids[starts[n]..starts[n + 1]]` (two allocations instead of one vector per name).
struct ByName {
    ids: Vec<NodeId>,
    starts: Vec<u32>,
}

impl ByName {
    #[inline]
    fn get(&self, name: NameId) -> &[NodeId] {
        let i = name.0 as usize;
        match self.starts.get(i..i + 2) {
            Some(&[a, b]) => self.ids.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }
}

/// Iterator over the children of a node, see [`Document::children`].
#[derive(Clone)]
pub struct Children<'d> {
    doc: &'d Document,
    next: u32,
}

impl Iterator for Children<'_> {
    type Item = NodeId;
    fn next(&mut self) -> Option<NodeId> {
        let cur = opt(self.next)?;
        self.next = self.doc.links[cur.0 as usize].next;
        Some(cur)
    }
}

impl std::fmt::Debug for Document {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Document")
            .field("nodes", &self.nodes.len())
            .field("names", &self.names.len())
            .field("source_bytes", &self.src_len)
            .finish()
    }
}
