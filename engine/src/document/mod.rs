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

use std::borrow::Cow;

/// Index of a node in the document arena; ordering is document order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

/// Interned expanded name within one document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NameId(pub u32);

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

#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum ParseError {
    #[error("line {line}, column {column}: {message}")]
    Malformed { line: u32, column: u32, message: String },
    #[error("line {line}, column {column}: DOCTYPE declarations are not accepted (no DTDs or entity declarations)")]
    Doctype { line: u32, column: u32 },
    #[error("document is {size} bytes, over the limit of {limit} bytes")]
    TooLarge { size: usize, limit: usize },
    #[error("line {line}, column {column}: element nesting deeper than the limit of {limit}")]
    TooDeep { line: u32, column: u32, limit: usize },
    #[error("the document has no root element")]
    NoRootElement,
}

pub struct Document { /* private */ }

impl Document {
    pub fn parse(bytes: &[u8]) -> Result<Document, ParseError> { todo!() }
    pub fn parse_with_limits(bytes: &[u8], limits: &Limits) -> Result<Document, ParseError> { todo!() }
    /// The document node (always NodeId(0)).
    pub fn root(&self) -> NodeId { NodeId(0) }
    pub fn document_element(&self) -> NodeId { todo!() }
    pub fn len(&self) -> usize { todo!() }
    pub fn kind(&self, n: NodeId) -> NodeKind { todo!() }
    /// Element/attribute/PI name (PI: local = target, namespace empty); None for others.
    pub fn name(&self, n: NodeId) -> Option<NameId> { todo!() }
    pub fn qname(&self, name: NameId) -> &QName { todo!() }
    /// Look up an interned name by namespace URI and local name (None: no node has it).
    pub fn lookup_name(&self, namespace: &str, local: &str) -> Option<NameId> { todo!() }
    pub fn parent(&self, n: NodeId) -> Option<NodeId> { todo!() }
    /// First child (elements, text, comments, PIs — never attributes).
    pub fn first_child(&self, n: NodeId) -> Option<NodeId> { todo!() }
    pub fn last_child(&self, n: NodeId) -> Option<NodeId> { todo!() }
    pub fn next_sibling(&self, n: NodeId) -> Option<NodeId> { todo!() }
    pub fn prev_sibling(&self, n: NodeId) -> Option<NodeId> { todo!() }
    /// Attribute nodes of an element, in document order (empty for non-elements).
    pub fn attributes(&self, n: NodeId) -> std::ops::Range<u32> { todo!() }
    pub fn attribute(&self, element: NodeId, name: NameId) -> Option<NodeId> { todo!() }
    /// One past the last node of n's subtree (attributes included).
    pub fn subtree_end(&self, n: NodeId) -> NodeId { todo!() }
    /// Text of a text, attribute, comment or PI node ("" for others).
    pub fn text(&self, n: NodeId) -> &str { todo!() }
    /// XPath string value: concatenated descendant text for document/element nodes.
    pub fn string_value(&self, n: NodeId) -> Cow<'_, str> { todo!() }
    /// All ELEMENTS with this name, in document order.
    pub fn elements_named(&self, name: NameId) -> &[NodeId] { todo!() }
    /// All ATTRIBUTES with this name, in document order.
    pub fn attributes_named(&self, name: NameId) -> &[NodeId] { todo!() }
    /// 1-based line and column of the node's start (element: its `<`; attribute: its name).
    pub fn line_column(&self, n: NodeId) -> (u32, u32) { todo!() }
    /// Depth (document node 0, document element 1, ...).
    pub fn depth(&self, n: NodeId) -> u32 { todo!() }
}
