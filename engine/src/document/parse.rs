//! Builds a [`Document`] from bytes: quick-xml tokenizes; this module checks
//! well-formedness, resolves namespaces, unescapes text and lays out the node arena.

use std::borrow::Cow;

use quick_xml::errors::{Error as XmlError, IllFormedError, SyntaxError};
use quick_xml::events::Event;
use quick_xml::Reader;

use super::names::{self, FastMap, NameTable, SeededState, XMLNS_NS, XML_NS};
use super::shared::{self, SharedNames};
use super::{
    lines, ByName, Document, Limits, Link, Node, NodeId, NodeKind, ParseError, KIND_SHIFT,
    MAX_REPRESENTABLE_DEPTH, NONE,
};

/// Hard cap whatever the limits say: offsets are `u32`, and the text buffer (source plus
/// unescaped text) can grow to about twice the input.
const MAX_SUPPORTED_BYTES: usize = (u32::MAX / 2 - 16) as usize;

type PResult<T> = Result<T, ParseError>;

pub(super) fn parse(bytes: &[u8], limits: &Limits) -> PResult<Document> {
    let limit = limits.max_bytes.min(MAX_SUPPORTED_BYTES);
    if bytes.len() > limit {
        return Err(ParseError::TooLarge {
            size: bytes.len(),
            limit,
        });
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        // quick-xml would silently skip it too, shifting all positions.
        return Err(ParseError::Malformed {
            line: 1,
            column: 1,
            message: "unexpected second byte order mark (U+FEFF) before the root element".into(),
        });
    }
    if bytes.starts_with(&[0xFE, 0xFF])
        || bytes.starts_with(&[0xFF, 0xFE])
        || (bytes.len() >= 2 && (bytes[0] == 0 || bytes[1] == 0))
    {
        return Err(ParseError::Malformed {
            line: 1,
            column: 1,
            message: "the document looks UTF-16 encoded; only UTF-8 is supported".into(),
        });
    }
    let src = match std::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            let (line, column) = lines::line_column_scan(bytes, e.valid_up_to());
            return Err(ParseError::Malformed {
                line,
                column,
                message: "invalid UTF-8 byte sequence (only UTF-8 encoded documents are \
                          supported)"
                    .into(),
            });
        }
    };
    Builder::new(src, limits).run()
}

#[inline]
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Shortens user-provided text quoted in error messages.
fn short(s: &str) -> Cow<'_, str> {
    const MAX: usize = 60;
    if s.len() <= MAX {
        return Cow::Borrowed(s);
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}…", &s[..end]))
}

fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

// Byte classes for the text scanners.
const C_AMP: u8 = 1;
const C_CR: u8 = 2;
const C_WS: u8 = 3;
const C_LT: u8 = 4;
const C_GT: u8 = 5;
const C_CTRL: u8 = 6;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Character data: references resolved, `]]>` refused.
    Text,
    /// Attribute value: references resolved, whitespace normalised, `<` refused.
    Attr,
    /// CDATA, comment and PI content: only line ends normalised.
    Raw,
}

const fn class_table(mode: Mode) -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = C_CTRL;
        i += 1;
    }
    t[b'\t' as usize] = 0;
    t[b'\n' as usize] = 0;
    t[b'\r' as usize] = C_CR;
    match mode {
        Mode::Text => {
            t[b'&' as usize] = C_AMP;
            t[b'>' as usize] = C_GT;
        }
        Mode::Attr => {
            t[b'&' as usize] = C_AMP;
            t[b'<' as usize] = C_LT;
            t[b'\t' as usize] = C_WS;
            t[b'\n' as usize] = C_WS;
        }
        Mode::Raw => {}
    }
    t
}

static TEXT_CLASSES: [u8; 256] = class_table(Mode::Text);
static ATTR_CLASSES: [u8; 256] = class_table(Mode::Attr);
static RAW_CLASSES: [u8; 256] = class_table(Mode::Raw);

#[inline]
fn classes(mode: Mode) -> &'static [u8; 256] {
    match mode {
        Mode::Text => &TEXT_CLASSES,
        Mode::Attr => &ATTR_CLASSES,
        Mode::Raw => &RAW_CLASSES,
    }
}

/// Index of the first byte at or after `from` whose class is not 0. Runs of ordinary bytes
/// are the common case, so they are checked eight, then four at a time.
#[inline]
fn skip_plain(table: &[u8; 256], raw: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while let Some(chunk) = raw.get(i..i + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        if w.iter().fold(0, |acc, &b| acc | table[b as usize]) != 0 {
            break;
        }
        i += 8;
    }
    if let Some(chunk) = raw.get(i..i + 4) {
        let mut w = [0u8; 4];
        w.copy_from_slice(chunk);
        if w.iter().fold(0, |acc, &b| acc | table[b as usize]) == 0 {
            i += 4;
        }
    }
    let rest = raw.get(i..)?;
    rest.iter()
        .position(|&b| table[b as usize] != 0)
        .map(|p| i + p)
}

struct Binding<'s> {
    prefix: &'s str,
    uri: Cow<'s, str>,
    /// Index of the binding of the same prefix that this one shadows (or `NONE`).
    prev: u32,
    ids: NsIds,
}

/// "Not looked up yet" in [`NsIds`].
const UNSET: u32 = u32::MAX - 1;

/// A namespace's index in the shared table, looked up on first use (`NONE`: not shared;
/// `uri`, the shared copy of the URI, is then `None`).
#[derive(Clone, Copy)]
struct NsIds {
    shared: u32,
    uri: Option<&'static str>,
}

impl NsIds {
    const UNSET: NsIds = NsIds {
        shared: UNSET,
        uri: None,
    };
}

/// Where the namespace of a name comes from.
#[derive(Clone, Copy)]
enum Scope {
    NoNamespace,
    Xml,
    Binding(u32),
}

struct Frame<'s> {
    node: u32,
    raw_name: &'s str,
    bindings_len: usize,
}

/// log2 of the number of slots of [`RawCache`].
const RAW_CACHE_BITS: u32 = 9;

/// Raw QName → name, direct-mapped and valid while the scope generation is unchanged.
/// Cheaper than a hash map for the few hundred names of a document; a conflict (even a
/// contrived one) only costs a look-up in the name tables.
struct RawCache {
    slots: Vec<RawSlot>,
}

/// A raw name is known by its first and last 8 bytes (fewer when shorter: see [`raw_words`])
/// and its length, which together are the whole name up to 16 bytes; longer names are also
/// compared in the middle, against the source at `off`.
#[derive(Clone, Copy, Default)]
struct RawSlot {
    w0: u64,
    w1: u64,
    /// Length << 1 | 1 for element names (0 for an empty slot: names are never empty).
    key_len: u32,
    off: u32,
    generation: u32,
    id: u32,
}

/// The first and last 8 bytes of a name (for shorter names: 4 and 4, or three of them),
/// which together with the length identify names of up to 16 bytes.
#[inline]
fn raw_words(b: &[u8]) -> (u64, u64) {
    let n = b.len();
    if n >= 8 {
        let (mut w0, mut w1) = ([0u8; 8], [0u8; 8]);
        w0.copy_from_slice(&b[..8]);
        w1.copy_from_slice(&b[n - 8..]);
        (u64::from_le_bytes(w0), u64::from_le_bytes(w1))
    } else if n >= 4 {
        let (mut w0, mut w1) = ([0u8; 4], [0u8; 4]);
        w0.copy_from_slice(&b[..4]);
        w1.copy_from_slice(&b[n - 4..]);
        (u32::from_le_bytes(w0) as u64, u32::from_le_bytes(w1) as u64)
    } else if n > 0 {
        let w = b[0] as u64 | (b[n / 2] as u64) << 8 | (b[n - 1] as u64) << 16;
        (w, 0)
    } else {
        (0, 0)
    }
}

impl RawCache {
    fn new() -> Self {
        RawCache {
            slots: vec![RawSlot::default(); 1 << RAW_CACHE_BITS],
        }
    }

    #[inline]
    fn index(w0: u64, w1: u64, key_len: u32) -> usize {
        let h = (w0 ^ w1.rotate_left(29) ^ key_len as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h >> (64 - RAW_CACHE_BITS)) as usize
    }
}

struct RawAttr<'s> {
    name: &'s str,
    name_off: usize,
    value: &'s str,
    value_off: usize,
}

/// Per-name counters kept while parsing.
#[derive(Clone, Copy)]
struct PerName {
    elements: u32,
    attributes: u32,
    /// The last element that had an attribute with this name (duplicate detection).
    attr_seen: u32,
}

struct Builder<'s> {
    src: &'s str,
    nodes: Vec<Node>,
    text: String,
    names: NameTable,
    shared: &'static SharedNames,
    /// Ids of the empty namespace and of the `xml` prefix's (other namespaces keep theirs
    /// in their bindings).
    no_ns: NsIds,
    xml_ns: NsIds,
    per_name: Vec<PerName>,
    raw_cache: RawCache,
    /// Bumped whenever namespace bindings change.
    scope_gen: u32,
    bindings: Vec<Binding<'s>>,
    /// Prefix ("" = default namespace) → index of its innermost binding.
    ns_map: FastMap<&'s str, u32>,
    stack: Vec<Frame<'s>>,
    /// The node of the innermost open element (the document node when none is open).
    parent: u32,
    attrs: Vec<RawAttr<'s>>,
    /// Text node that the next text/CDATA piece merges into (or `NONE`).
    pending_text: u32,
    document_element: u32,
    max_depth: usize,
    /// Bytes held by the strings of interned names, and the budgets for names (so that
    /// many distinct names, e.g. each in a long namespace URI, cannot multiply memory).
    name_bytes: usize,
    max_name_bytes: usize,
    max_names: usize,
}

impl<'s> Builder<'s> {
    fn new(src: &'s str, limits: &Limits) -> Self {
        // Pretty-printed invoices average ~17 source bytes per node; over-reserving only costs
        // address space (untouched pages), and the vector is shrunk at the end.
        let mut nodes = Vec::with_capacity(src.len() / 12 + 8);
        nodes.push(Node {
            kind_depth: Node::pack(NodeKind::Document, 0),
            name: NONE,
            parent: NONE,
            next: NONE,
            prev: NONE,
            end: 1,
            offset: 0,
            a: 1,
            b: NONE,
        });
        // Expected distinct names: an invoice uses about one new name per 64 bytes of a
        // small document and at most a few hundred in all; the tables start with that
        // room instead of regrowing several times per document.
        let names_hint = (src.len() / 64).clamp(16, 256);
        let mut text = String::with_capacity(src.len() + src.len() / 32 + 64);
        text.push_str(src);
        // One draw of hash keys serves all maps of the document.
        let state = SeededState::new();
        let shared = shared::shared();
        Builder {
            src,
            nodes,
            text,
            names: NameTable::with_capacity(names_hint, state.clone(), shared),
            shared,
            no_ns: NsIds::UNSET,
            xml_ns: NsIds::UNSET,
            per_name: Vec::with_capacity(names_hint),
            raw_cache: RawCache::new(),
            scope_gen: 0,
            bindings: Vec::new(),
            ns_map: FastMap::with_hasher(state),
            // Invoices nest about ten levels deep: no regrowing for typical documents.
            stack: Vec::with_capacity(16),
            parent: 0,
            attrs: Vec::with_capacity(8),
            pending_text: NONE,
            document_element: NONE,
            max_depth: limits.max_depth.min(MAX_REPRESENTABLE_DEPTH - 1),
            name_bytes: 0,
            max_name_bytes: src.len() + (1 << 20),
            max_names: src.len() / 16 + 4096,
        }
    }

    fn err(&self, offset: usize, message: impl Into<String>) -> ParseError {
        let (line, column) = lines::line_column_scan(self.src.as_bytes(), offset);
        ParseError::Malformed {
            line,
            column,
            message: message.into(),
        }
    }

    fn line_col(&self, offset: usize) -> (u32, u32) {
        lines::line_column_scan(self.src.as_bytes(), offset)
    }

    /// The source slice `off..off + len` (positions always fall on ASCII delimiters).
    fn slice(&self, off: usize, len: usize) -> PResult<&'s str> {
        let src: &'s str = self.src;
        src.get(off..off + len)
            .ok_or_else(|| self.err(off, "internal error: inconsistent tokenizer position"))
    }

    fn run(mut self) -> PResult<Document> {
        let mut reader = Reader::from_str(self.src);
        {
            let cfg = reader.config_mut();
            cfg.check_end_names = false; // checked here, against our own stack
            cfg.allow_unmatched_ends = true; // idem
            cfg.check_comments = true;
            cfg.expand_empty_elements = false;
            cfg.trim_text(false);
        }
        loop {
            let pos = reader.buffer_position() as usize;
            let event = match reader.read_event() {
                Ok(ev) => ev,
                Err(e) => return Err(self.tokenizer_error(&e, reader.error_position() as usize)),
            };
            match event {
                Event::Start(e) => {
                    let content = self.slice(pos + 1, e.len())?;
                    debug_assert_eq!(content.as_bytes(), &*e);
                    self.start(pos, content, e.name().as_ref().len(), false)?;
                }
                Event::Empty(e) => {
                    let content = self.slice(pos + 1, e.len())?;
                    debug_assert_eq!(content.as_bytes(), &*e);
                    self.start(pos, content, e.name().as_ref().len(), true)?;
                }
                Event::End(e) => {
                    let name = self.slice(pos + 2, e.len())?;
                    debug_assert_eq!(name.as_bytes(), &*e);
                    self.end(pos, name)?;
                }
                Event::Text(e) => {
                    let raw = self.slice(pos, e.len())?;
                    debug_assert_eq!(raw.as_bytes(), &*e);
                    self.text_piece(pos, raw, pos, Mode::Text)?;
                }
                Event::CData(e) => {
                    let raw = self.slice(pos + 9, e.len())?;
                    debug_assert_eq!(raw.as_bytes(), &*e);
                    self.text_piece(pos, raw, pos + 9, Mode::Raw)?;
                }
                Event::Comment(e) => {
                    let raw = self.slice(pos + 4, e.len())?;
                    debug_assert_eq!(raw.as_bytes(), &*e);
                    self.comment(pos, raw)?;
                }
                Event::PI(e) => {
                    let raw = self.slice(pos + 2, e.len())?;
                    debug_assert_eq!(raw.as_bytes(), &*e);
                    self.processing_instruction(pos, raw)?;
                }
                Event::Decl(e) => {
                    if pos != 0 {
                        return Err(self.err(
                            pos,
                            "the XML declaration `<?xml ...?>` is only allowed at the very \
                             start of the document",
                        ));
                    }
                    let raw = self.slice(pos + 2, e.len())?;
                    debug_assert_eq!(raw.as_bytes(), &*e);
                    self.xml_declaration(raw)?;
                }
                Event::DocType(_) => {
                    let (line, column) = self.line_col(pos);
                    return Err(ParseError::Doctype { line, column });
                }
                Event::Eof => break,
            }
        }
        self.finish()
    }

    /// Checks `<?xml version="1.x" encoding="..." standalone="yes|no"?>` (`raw` is the
    /// text between `<?` and `?>`, starting at offset 2). Only UTF-8 (or, for pure-ASCII
    /// documents, an ASCII-compatible encoding) is accepted.
    fn xml_declaration(&self, raw: &'s str) -> PResult<()> {
        let b = raw.as_bytes();
        let n = b.len();
        let mut i = 3; // after "xml"
        let mut seen = 0; // 1: version, 2: encoding, 3: standalone
        loop {
            let ws_start = i;
            while i < n && is_ws(b[i]) {
                i += 1;
            }
            if i >= n {
                break;
            }
            if i == ws_start {
                return Err(self.err(2 + i, "expected whitespace in the XML declaration"));
            }
            let name_start = i;
            while i < n && b[i].is_ascii_alphabetic() {
                i += 1;
            }
            let name = &raw[name_start..i];
            let order = match name {
                "version" => 1,
                "encoding" => 2,
                "standalone" => 3,
                _ => 0,
            };
            if order <= seen || (seen == 0 && order != 1) {
                return Err(self.err(
                    2 + name_start,
                    "malformed XML declaration (expected `version`, then optionally \
                     `encoding` and `standalone`)",
                ));
            }
            seen = order;
            while i < n && is_ws(b[i]) {
                i += 1;
            }
            if b.get(i) != Some(&b'=') {
                return Err(self.err(2 + i, "expected `=` in the XML declaration"));
            }
            i += 1;
            while i < n && is_ws(b[i]) {
                i += 1;
            }
            let quote = match b.get(i) {
                Some(&q @ (b'"' | b'\'')) => q,
                _ => return Err(self.err(2 + i, "expected a quoted value in the XML declaration")),
            };
            let value_start = i + 1;
            let Some(len) = b[value_start..].iter().position(|&c| c == quote) else {
                return Err(self.err(2 + i, "unterminated value in the XML declaration"));
            };
            let value = &raw[value_start..value_start + len];
            i = value_start + len + 1;
            let valid = match order {
                1 => {
                    value.len() > 2
                        && value.starts_with("1.")
                        && value[2..].bytes().all(|c| c.is_ascii_digit())
                }
                2 => {
                    value
                        .bytes()
                        .next()
                        .is_some_and(|c| c.is_ascii_alphabetic())
                        && value
                            .bytes()
                            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
                }
                _ => value == "yes" || value == "no",
            };
            if !valid {
                return Err(self.err(
                    2 + value_start,
                    format!("invalid {name} `{}` in the XML declaration", short(value)),
                ));
            }
            if order == 2
                && !value.eq_ignore_ascii_case("UTF-8")
                && !value.eq_ignore_ascii_case("UTF8")
            {
                let upper = value.to_ascii_uppercase();
                let ascii_compatible = !(upper.starts_with("UTF-16")
                    || upper.starts_with("UTF-32")
                    || upper.starts_with("UCS")
                    || upper.contains("EBCDIC")
                    || upper.starts_with("IBM")
                    || upper.starts_with("CP0"));
                if !(ascii_compatible && self.src.is_ascii()) {
                    return Err(self.err(
                        2 + value_start,
                        format!(
                            "unsupported encoding `{}`: documents must be UTF-8",
                            short(value)
                        ),
                    ));
                }
            }
        }
        if seen == 0 {
            return Err(self.err(2, "the XML declaration must contain `version`"));
        }
        Ok(())
    }

    fn tokenizer_error(&self, e: &XmlError, offset: usize) -> ParseError {
        let message: Cow<'static, str> = match e {
            XmlError::Syntax(SyntaxError::UnclosedDoctype)
            | XmlError::IllFormed(IllFormedError::MissingDoctypeName) => {
                let (line, column) = self.line_col(offset);
                return ParseError::Doctype { line, column };
            }
            XmlError::Syntax(SyntaxError::InvalidBangMarkup) => {
                "invalid markup after `<!` (expected a comment `<!--` or a CDATA section \
                 `<![CDATA[`)"
                    .into()
            }
            XmlError::Syntax(SyntaxError::UnclosedTag) => {
                "tag not closed: `>` not found before the end of the document".into()
            }
            XmlError::Syntax(SyntaxError::UnclosedComment) => {
                "comment not closed: `-->` not found before the end of the document".into()
            }
            XmlError::Syntax(SyntaxError::UnclosedCData) => {
                "CDATA section not closed: `]]>` not found before the end of the document".into()
            }
            XmlError::Syntax(SyntaxError::UnclosedPIOrXmlDecl) => {
                "processing instruction not closed: `?>` not found before the end of the \
                 document"
                    .into()
            }
            XmlError::IllFormed(IllFormedError::DoubleHyphenInComment) => {
                "`--` is not allowed inside a comment".into()
            }
            other => other.to_string().into(),
        };
        self.err(offset, message)
    }

    // ----- arena helpers -------------------------------------------------------------

    /// Appends a child (not an attribute) of the current parent and links it.
    #[inline]
    fn add_child(&mut self, kind: NodeKind, name: u32, offset: usize, a: u32, b: u32) -> u32 {
        let id = self.nodes.len() as u32;
        let parent = self.parent;
        let depth = self.stack.len() as u32 + 1;
        let prev = self.nodes[parent as usize].b;
        if prev != NONE {
            self.nodes[prev as usize].next = id;
        }
        self.nodes[parent as usize].b = id;
        self.nodes.push(Node {
            kind_depth: Node::pack(kind, depth),
            name,
            parent,
            next: NONE,
            prev,
            end: id + 1,
            offset: offset as u32,
            a,
            b,
        });
        id
    }

    // ----- elements ------------------------------------------------------------------

    /// A start tag: `content` lies between `<` and `>` (or `/>`), and its first `name_len`
    /// bytes are the name (the tokenizer has measured it already).
    #[inline(always)]
    fn start(&mut self, pos: usize, content: &'s str, name_len: usize, empty: bool) -> PResult<()> {
        self.pending_text = NONE;
        let depth = self.stack.len() + 1;
        if (depth == 1 && self.document_element != NONE) || depth > self.max_depth {
            return Err(self.start_refused(pos, depth));
        }
        debug_assert!(name_len <= content.len());
        debug_assert_eq!(
            name_len,
            content.bytes().position(is_ws).unwrap_or(content.len())
        );
        if name_len == content.len() && name_len > 0 {
            return self.element_without_attrs(pos, content, empty, depth);
        }
        self.start_with_attrs(pos, content, name_len, empty, depth)
    }

    #[cold]
    fn start_refused(&self, pos: usize, depth: usize) -> ParseError {
        if depth == 1 && self.document_element != NONE {
            return self.err(
                pos,
                "only one root element is allowed; found another element after it",
            );
        }
        let (line, column) = self.line_col(pos);
        ParseError::TooDeep {
            line,
            column,
            limit: self.max_depth,
        }
    }

    /// A start tag with something after its name (attributes, or only whitespace), or an
    /// empty name.
    fn start_with_attrs(
        &mut self,
        pos: usize,
        content: &'s str,
        name_len: usize,
        empty: bool,
        depth: usize,
    ) -> PResult<()> {
        let Some(raw_name) = content.get(..name_len) else {
            return Err(self.err(pos, "internal error: inconsistent tokenizer position"));
        };
        let mut attrs = std::mem::take(&mut self.attrs);
        attrs.clear();
        let result = self.element_with_attrs(pos, content, raw_name, &mut attrs, empty, depth);
        attrs.clear();
        self.attrs = attrs;
        result
    }

    /// The common case of [`Self::element_with_attrs`]: nothing after the name, so nothing
    /// to split, declare or add (`raw_name` is not empty).
    #[inline(always)]
    fn element_without_attrs(
        &mut self,
        pos: usize,
        raw_name: &'s str,
        empty: bool,
        depth: usize,
    ) -> PResult<()> {
        let name = self.resolve(raw_name, pos + 1, true)?;
        let id = self.add_child(NodeKind::Element, name, pos, NONE, NONE);
        self.per_name[name as usize].elements += 1;
        let node = &mut self.nodes[id as usize];
        node.a = id + 1;
        node.end = id + 1;
        if depth == 1 {
            self.document_element = id;
        }
        if !empty {
            self.parent = id;
            self.stack.push(Frame {
                node: id,
                raw_name,
                bindings_len: self.bindings.len(),
            });
        }
        Ok(())
    }

    fn element_with_attrs(
        &mut self,
        pos: usize,
        content: &'s str,
        raw_name: &'s str,
        attrs: &mut Vec<RawAttr<'s>>,
        empty: bool,
        depth: usize,
    ) -> PResult<()> {
        if raw_name.is_empty() {
            return Err(self.err(pos + 1, "expected an element name after `<`"));
        }
        self.parse_attributes(content, raw_name.len(), pos + 1, attrs)?;
        let bindings_len = self.bindings.len();
        let mut plain_attrs = 0usize;
        for a in attrs.iter() {
            if is_ns_decl(a.name) {
                self.declare(a, bindings_len)?;
            } else {
                plain_attrs += 1;
            }
        }
        if self.bindings.len() != bindings_len {
            self.scope_gen = self.scope_gen.wrapping_add(1);
        }
        let name = self.resolve(raw_name, pos + 1, true)?;
        let id = self.add_child(NodeKind::Element, name, pos, NONE, NONE);
        self.per_name[name as usize].elements += 1;
        if plain_attrs > 0 {
            let attr_depth = Node::pack(NodeKind::Attribute, depth as u32 + 1);
            for a in attrs.iter() {
                if is_ns_decl(a.name) {
                    continue;
                }
                let aname = self.resolve(a.name, a.name_off, false)?;
                let per_name = &mut self.per_name[aname as usize];
                if per_name.attr_seen == id {
                    return Err(self.err(
                        a.name_off,
                        format!(
                            "duplicate attribute `{}` (an attribute with the same namespace and \
                             local name was already given on this element)",
                            short(a.name)
                        ),
                    ));
                }
                per_name.attr_seen = id;
                per_name.attributes += 1;
                let (va, vb) = self.span_for(a.value, a.value_off, Mode::Attr)?;
                let aid = self.nodes.len() as u32;
                self.nodes.push(Node {
                    kind_depth: attr_depth,
                    name: aname,
                    parent: id,
                    next: NONE,
                    prev: NONE,
                    end: aid + 1,
                    offset: a.name_off as u32,
                    a: va,
                    b: vb,
                });
            }
        }
        let after_attrs = self.nodes.len() as u32;
        let node = &mut self.nodes[id as usize];
        node.a = after_attrs;
        node.end = after_attrs;
        if depth == 1 {
            self.document_element = id;
        }
        if empty {
            if self.bindings.len() != bindings_len {
                self.pop_bindings(bindings_len);
            }
        } else {
            self.parent = id;
            self.stack.push(Frame {
                node: id,
                raw_name,
                bindings_len,
            });
        }
        Ok(())
    }

    /// Splits the attribute part of a start tag (`content[from..]`) into raw attributes.
    fn parse_attributes(
        &self,
        content: &'s str,
        from: usize,
        base: usize,
        out: &mut Vec<RawAttr<'s>>,
    ) -> PResult<()> {
        let b = content.as_bytes();
        let n = b.len();
        let mut i = from;
        loop {
            let ws_start = i;
            while i < n && is_ws(b[i]) {
                i += 1;
            }
            if i >= n {
                return Ok(());
            }
            if i == ws_start {
                return Err(self.err(
                    base + i,
                    "expected whitespace between attributes (or `>` to end the tag)",
                ));
            }
            let name_start = i;
            while i < n && !is_ws(b[i]) && b[i] != b'=' {
                i += 1;
            }
            let name = &content[name_start..i];
            if name.is_empty() {
                return Err(self.err(base + i, "expected an attribute name before `=`"));
            }
            while i < n && is_ws(b[i]) {
                i += 1;
            }
            if i >= n || b[i] != b'=' {
                return Err(self.err(
                    base + name_start,
                    format!(
                        "attribute `{}` has no value (expected `=` and a quoted value)",
                        short(name)
                    ),
                ));
            }
            i += 1;
            while i < n && is_ws(b[i]) {
                i += 1;
            }
            let quote = match b.get(i) {
                Some(&q @ (b'"' | b'\'')) => q,
                _ => {
                    return Err(self.err(
                        base + i.min(n),
                        format!(
                            "the value of attribute `{}` must be enclosed in quotes",
                            short(name)
                        ),
                    ))
                }
            };
            i += 1;
            let value_start = i;
            let Some(len) = b[i..].iter().position(|&c| c == quote) else {
                return Err(self.err(
                    base + value_start - 1,
                    format!("unterminated value of attribute `{}`", short(name)),
                ));
            };
            i += len;
            out.push(RawAttr {
                name,
                name_off: base + name_start,
                value: &content[value_start..i],
                value_off: base + value_start,
            });
            i += 1;
        }
    }

    fn declare(&mut self, a: &RawAttr<'s>, bindings_len: usize) -> PResult<()> {
        let prefix = if a.name.len() == 5 { "" } else { &a.name[6..] };
        if a.name.len() > 5 && !names::is_ncname(prefix) {
            return Err(self.err(
                a.name_off,
                format!("invalid namespace prefix in `{}`", short(a.name)),
            ));
        }
        let uri = self.unescape_cow(a.value, a.value_off)?;
        if prefix == "xmlns" {
            return Err(self.err(a.name_off, "the prefix `xmlns` must not be declared"));
        }
        if prefix == "xml" {
            if uri != XML_NS {
                return Err(self.err(
                    a.name_off,
                    format!("the prefix `xml` can only be bound to `{XML_NS}`"),
                ));
            }
            return Ok(()); // implicitly bound anyway
        }
        if uri == XML_NS || uri == XMLNS_NS {
            return Err(self.err(
                a.name_off,
                format!("the namespace `{uri}` cannot be bound to another prefix"),
            ));
        }
        if !prefix.is_empty() && uri.is_empty() {
            return Err(self.err(
                a.name_off,
                format!(
                    "the prefix `{}` cannot be undeclared (empty namespace URI)",
                    short(prefix)
                ),
            ));
        }
        let idx = self.bindings.len() as u32;
        let prev = self.ns_map.insert(prefix, idx).unwrap_or(NONE);
        if prev != NONE && prev as usize >= bindings_len {
            return Err(self.err(
                a.name_off,
                format!("duplicate namespace declaration `{}`", short(a.name)),
            ));
        }
        self.bindings.push(Binding {
            prefix,
            uri,
            prev,
            ids: NsIds::UNSET,
        });
        Ok(())
    }

    fn pop_bindings(&mut self, to: usize) {
        while self.bindings.len() > to {
            let Some(b) = self.bindings.pop() else { break };
            if b.prev == NONE {
                self.ns_map.remove(b.prefix);
            } else {
                self.ns_map.insert(b.prefix, b.prev);
            }
        }
        self.scope_gen = self.scope_gen.wrapping_add(1);
    }

    /// Resolves a raw QName (element or attribute) to an interned name.
    /// `off` is where `raw` starts in the source.
    #[inline(always)]
    fn resolve(&mut self, raw: &'s str, off: usize, element: bool) -> PResult<u32> {
        let b = raw.as_bytes();
        let (w0, w1) = raw_words(b);
        let key_len = (b.len() as u32) << 1 | element as u32;
        let index = RawCache::index(w0, w1, key_len);
        if let Some(slot) = self.raw_cache.slots.get(index) {
            if slot.w0 == w0
                && slot.w1 == w1
                && slot.key_len == key_len
                && slot.generation == self.scope_gen
                && (b.len() <= 16 || self.same_middle(raw, slot.off as usize))
            {
                return Ok(slot.id);
            }
        }
        self.resolve_uncached(raw, off, element, index, (w0, w1))
    }

    /// [`Self::resolve`] for a name not in the raw-name cache; caches it in slot `index`.
    fn resolve_uncached(
        &mut self,
        raw: &'s str,
        off: usize,
        element: bool,
        index: usize,
        (w0, w1): (u64, u64),
    ) -> PResult<u32> {
        let key_len = (raw.len() as u32) << 1 | element as u32;
        let id = match self.resolve_shared(raw, off, element)? {
            Some(id) => id,
            None => self.resolve_checked(raw, off, element)?,
        };
        if let Some(slot) = self.raw_cache.slots.get_mut(index) {
            *slot = RawSlot {
                w0,
                w1,
                key_len,
                off: off as u32,
                generation: self.scope_gen,
                id,
            };
        }
        Ok(id)
    }

    /// Whether `raw` (longer than 16 bytes) equals the source at `off` between its first
    /// and last 8 bytes (the caller has compared those and the length).
    #[inline]
    fn same_middle(&self, raw: &str, off: usize) -> bool {
        let n = raw.len();
        self.src.as_bytes().get(off + 8..off + n - 8) == raw.as_bytes().get(8..n - 8)
    }

    /// A name found in the shared table (None: not there). Only checked names are shared,
    /// so none of the checks of [`Self::resolve_checked`] can fail for it; the prefix only
    /// selects the namespace.
    fn resolve_shared(&mut self, raw: &'s str, off: usize, element: bool) -> PResult<Option<u32>> {
        let scope = match raw.bytes().position(|b| b == b':') {
            None if element => self.default_scope(),
            None => Scope::NoNamespace,
            Some(0) => return Ok(None),
            Some(i) => {
                let prefix = &raw[..i];
                if prefix == "xml" {
                    Scope::Xml
                } else {
                    match self.binding_of(prefix) {
                        Some(b) => Scope::Binding(b),
                        None => return Ok(None),
                    }
                }
            }
        };
        let shared_ns = self.shared_ns(scope);
        if shared_ns == NONE {
            return Ok(None);
        }
        let Some(shared) = self.shared.lookup(shared_ns, raw) else {
            return Ok(None);
        };
        let (id, new) = self.names.intern_shared(shared);
        if new {
            let q = shared.qname();
            self.new_name_slots(q.namespace.len() + q.local.len() + q.prefix.len(), off)?;
        }
        Ok(Some(id))
    }

    /// Checks and resolves a name, then interns it (shared if there is room).
    fn resolve_checked(&mut self, raw: &'s str, off: usize, element: bool) -> PResult<u32> {
        let what = if element { "element" } else { "attribute" };
        let Some((prefix, local)) = names::split_qname(raw) else {
            return Err(self.err(off, format!("`{}` is not a valid {what} name", short(raw))));
        };
        let scope = if prefix.is_empty() {
            if element {
                self.default_scope()
            } else {
                Scope::NoNamespace
            }
        } else if prefix == "xml" {
            Scope::Xml
        } else if prefix == "xmlns" {
            return Err(self.err(
                off,
                format!(
                    "the prefix `xmlns` cannot be used in the {what} name `{}`",
                    short(raw)
                ),
            ));
        } else {
            match self.binding_of(prefix) {
                Some(i) => Scope::Binding(i),
                None => {
                    return Err(self.err(
                        off,
                        format!(
                            "namespace prefix `{}` of {what} `{}` is not declared",
                            short(prefix),
                            short(raw)
                        ),
                    ))
                }
            }
        };
        let shared_ns = self.shared_ns(scope);
        let shared_uri = self.ns_ids(scope).uri;
        let uri: &str = match scope {
            Scope::NoNamespace => "",
            Scope::Xml => XML_NS,
            Scope::Binding(i) => &self.bindings[i as usize].uri,
        };
        let name_len = uri.len() + local.len() + prefix.len();
        let shared = match shared_uri {
            Some(shared_uri) if shared_ns != NONE => self
                .shared
                .insert(shared_ns, shared_uri, raw, prefix, local),
            _ => None,
        };
        let (id, new) = match shared {
            Some(shared) => self.names.intern_shared(shared),
            None => {
                let shared_ns = (shared_ns != NONE).then_some(shared_ns);
                self.names.intern(shared_ns, uri, local, prefix)
            }
        };
        if new {
            self.new_name_slots(name_len, off)?;
        }
        Ok(id)
    }

    /// The scope of an unprefixed element name.
    fn default_scope(&self) -> Scope {
        self.binding_of("")
            .map_or(Scope::NoNamespace, Scope::Binding)
    }

    /// Index of the innermost binding of `prefix` ("": the default namespace).
    #[inline]
    fn binding_of(&self, prefix: &str) -> Option<u32> {
        // Documents declare a handful of prefixes: scanning them beats hashing the prefix.
        if self.bindings.len() <= 8 {
            return self
                .bindings
                .iter()
                .rposition(|b| same_name(b.prefix, prefix))
                .map(|i| i as u32);
        }
        self.ns_map.get(prefix).copied()
    }

    fn ns_ids(&mut self, scope: Scope) -> &mut NsIds {
        match scope {
            Scope::NoNamespace => &mut self.no_ns,
            Scope::Xml => &mut self.xml_ns,
            Scope::Binding(i) => &mut self.bindings[i as usize].ids,
        }
    }

    /// The scope's namespace in the shared table (`NONE`: not shared).
    fn shared_ns(&mut self, scope: Scope) -> u32 {
        let known = self.ns_ids(scope).shared;
        if known != UNSET {
            return known;
        }
        let shared = self.shared;
        let found = match scope {
            Scope::NoNamespace => shared.namespace(""),
            Scope::Xml => shared.namespace(XML_NS),
            Scope::Binding(i) => shared.namespace(&self.bindings[i as usize].uri),
        };
        let ids = self.ns_ids(scope);
        (ids.shared, ids.uri) = match found {
            Some((i, uri)) => (i, Some(uri)),
            None => (NONE, None),
        };
        ids.shared
    }

    fn new_name_slots(&mut self, name_len: usize, off: usize) -> PResult<()> {
        self.name_bytes += name_len;
        if self.names.len() > self.max_names || self.name_bytes > self.max_name_bytes {
            return Err(self.err(
                off,
                format!(
                    "too many distinct names ({} names, {} bytes of names); refusing the \
                     document",
                    self.names.len(),
                    self.name_bytes
                ),
            ));
        }
        self.per_name.push(PerName {
            elements: 0,
            attributes: 0,
            attr_seen: NONE,
        });
        Ok(())
    }

    fn end(&mut self, pos: usize, name: &'s str) -> PResult<()> {
        self.pending_text = NONE;
        let Some(frame) = self.stack.pop() else {
            return Err(self.err(
                pos,
                format!("closing tag `</{}>` has no matching start tag", short(name)),
            ));
        };
        if !same_name(frame.raw_name, name) {
            let (line, column) = self.line_col(self.nodes[frame.node as usize].offset as usize);
            return Err(self.err(
                pos,
                format!(
                    "closing tag `</{}>` does not match the start tag `<{}>` at line {line}, \
                     column {column}",
                    short(name),
                    short(frame.raw_name)
                ),
            ));
        }
        let end = self.nodes.len() as u32;
        let node = &mut self.nodes[frame.node as usize];
        node.end = end;
        self.parent = node.parent;
        if self.bindings.len() != frame.bindings_len {
            self.pop_bindings(frame.bindings_len);
        }
        Ok(())
    }

    // ----- text-like nodes -----------------------------------------------------------

    /// A piece of text or CDATA (`raw`, at `raw_off`; the node starts at `node_off`).
    #[inline(always)]
    fn text_piece(
        &mut self,
        node_off: usize,
        raw: &'s str,
        raw_off: usize,
        mode: Mode,
    ) -> PResult<()> {
        if self.stack.is_empty() {
            return self.text_outside_root(node_off, raw, raw_off, mode);
        }
        if self.pending_text != NONE {
            return self.merge_text(raw, raw_off, mode);
        }
        let (a, b) = self.span_for(raw, raw_off, mode)?;
        if b == 0 {
            return Ok(());
        }
        self.pending_text = self.add_child(NodeKind::Text, NONE, node_off, a, b);
        Ok(())
    }

    /// Text before or after the root element: only whitespace, and not stored.
    fn text_outside_root(
        &self,
        node_off: usize,
        raw: &'s str,
        raw_off: usize,
        mode: Mode,
    ) -> PResult<()> {
        if mode == Mode::Raw {
            return Err(self.err(
                node_off,
                "a CDATA section is not allowed outside the root element",
            ));
        }
        if let Some(i) = raw.bytes().position(|b| !is_ws(b)) {
            let msg = if self.document_element == NONE {
                "text is not allowed before the root element"
            } else {
                "text is not allowed after the root element"
            };
            return Err(self.err(raw_off + i, msg));
        }
        Ok(())
    }

    /// Appends a piece to the pending text node (text and CDATA next to each other).
    fn merge_text(&mut self, raw: &'s str, raw_off: usize, mode: Mode) -> PResult<()> {
        let t = self.pending_text as usize;
        let (a, b) = (self.nodes[t].a as usize, self.nodes[t].b as usize);
        if a < self.src.len() {
            // Still borrowed from the source: move it to the tail so pieces can append.
            let start = self.text.len();
            let src: &'s str = self.src;
            self.text.push_str(&src[a..a + b]);
            self.nodes[t].a = start as u32;
        }
        self.append_unescaped(raw, raw_off, mode)?;
        let node = &mut self.nodes[t];
        node.b = (self.text.len() - node.a as usize) as u32;
        Ok(())
    }

    fn comment(&mut self, pos: usize, raw: &'s str) -> PResult<()> {
        self.pending_text = NONE;
        let (a, b) = self.span_for(raw, pos + 4, Mode::Raw)?;
        self.add_child(NodeKind::Comment, NONE, pos, a, b);
        Ok(())
    }

    fn processing_instruction(&mut self, pos: usize, raw: &'s str) -> PResult<()> {
        self.pending_text = NONE;
        let rb = raw.as_bytes();
        let target_len = rb.iter().position(|&b| is_ws(b)).unwrap_or(rb.len());
        let target = &raw[..target_len];
        if !names::is_ncname(target) {
            return Err(self.err(
                pos + 2,
                format!(
                    "`{}` is not a valid processing instruction target",
                    short(target)
                ),
            ));
        }
        if target.eq_ignore_ascii_case("xml") {
            return Err(self.err(
                pos + 2,
                "the processing instruction target `xml` is reserved",
            ));
        }
        let data_start = rb[target_len..]
            .iter()
            .position(|&b| !is_ws(b))
            .map_or(rb.len(), |p| target_len + p);
        let (a, b) = self.span_for(&raw[data_start..], pos + 2 + data_start, Mode::Raw)?;
        let shared_ns = self.shared_ns(Scope::NoNamespace);
        let shared_ns = (shared_ns != NONE).then_some(shared_ns);
        let (name, new) = self.names.intern(shared_ns, "", target, "");
        if new {
            self.new_name_slots(target.len(), pos + 2)?;
        }
        self.add_child(NodeKind::ProcessingInstruction, name, pos, a, b);
        Ok(())
    }

    // ----- unescaping ----------------------------------------------------------------

    /// Finds the first byte needing transformation; refuses forbidden characters.
    #[inline]
    fn scan(&self, raw: &[u8], raw_off: usize, mode: Mode) -> PResult<Option<usize>> {
        let table = classes(mode);
        let mut from = 0;
        while let Some(i) = skip_plain(table, raw, from) {
            match table[raw[i] as usize] {
                C_GT => {
                    self.check_cdata_end(raw, i, raw_off)?;
                    from = i + 1;
                }
                C_CTRL => return Err(self.control_char(raw[i], raw_off + i)),
                C_LT => {
                    return Err(self.err(
                        raw_off + i,
                        "`<` is not allowed in attribute values (write `&lt;`)",
                    ))
                }
                _ => return Ok(Some(i)),
            }
        }
        Ok(None)
    }

    #[inline]
    fn check_cdata_end(&self, raw: &[u8], i: usize, raw_off: usize) -> PResult<()> {
        if i >= 2 && raw[i - 2] == b']' && raw[i - 1] == b']' {
            return Err(self.err(raw_off + i - 2, "`]]>` is not allowed in text content"));
        }
        Ok(())
    }

    fn control_char(&self, b: u8, off: usize) -> ParseError {
        self.err(
            off,
            format!("the control character U+{b:04X} is not allowed in XML"),
        )
    }

    /// Text span for `raw`: borrowed from the source when nothing needs changing,
    /// otherwise the unescaped text appended to the buffer.
    #[inline(always)]
    fn span_for(&mut self, raw: &'s str, raw_off: usize, mode: Mode) -> PResult<(u32, u32)> {
        if skip_plain(classes(mode), raw.as_bytes(), 0).is_none() {
            return Ok((raw_off as u32, raw.len() as u32));
        }
        self.span_for_special(raw, raw_off, mode)
    }

    /// [`Self::span_for`] when `raw` has a byte to check or transform.
    fn span_for_special(
        &mut self,
        raw: &'s str,
        raw_off: usize,
        mode: Mode,
    ) -> PResult<(u32, u32)> {
        match self.scan(raw.as_bytes(), raw_off, mode)? {
            None => Ok((raw_off as u32, raw.len() as u32)),
            Some(i) => {
                let start = self.text.len();
                self.unescape_from(raw, i, raw_off, mode)?;
                Ok((start as u32, (self.text.len() - start) as u32))
            }
        }
    }

    fn append_unescaped(&mut self, raw: &'s str, raw_off: usize, mode: Mode) -> PResult<()> {
        match self.scan(raw.as_bytes(), raw_off, mode)? {
            None => {
                self.text.push_str(raw);
                Ok(())
            }
            Some(i) => self.unescape_from(raw, i, raw_off, mode),
        }
    }

    fn unescape_cow(&mut self, raw: &'s str, raw_off: usize) -> PResult<Cow<'s, str>> {
        match self.scan(raw.as_bytes(), raw_off, Mode::Attr)? {
            None => Ok(Cow::Borrowed(raw)),
            Some(i) => {
                let start = self.text.len();
                self.unescape_from(raw, i, raw_off, Mode::Attr)?;
                let owned = self.text[start..].to_owned();
                self.text.truncate(start);
                Ok(Cow::Owned(owned))
            }
        }
    }

    /// Appends `raw` unescaped to the text buffer; `i` is the first special byte.
    fn unescape_from(
        &mut self,
        raw: &'s str,
        mut i: usize,
        raw_off: usize,
        mode: Mode,
    ) -> PResult<()> {
        let b = raw.as_bytes();
        let table = classes(mode);
        let mut run = 0;
        while i < b.len() {
            match table[b[i] as usize] {
                0 => i += 1,
                C_AMP => {
                    self.text.push_str(&raw[run..i]);
                    i += self.reference(raw, i, raw_off)?;
                    run = i;
                }
                C_CR => {
                    self.text.push_str(&raw[run..i]);
                    self.text.push(if mode == Mode::Attr { ' ' } else { '\n' });
                    i += if b.get(i + 1) == Some(&b'\n') { 2 } else { 1 };
                    run = i;
                }
                C_WS => {
                    self.text.push_str(&raw[run..i]);
                    self.text.push(' ');
                    i += 1;
                    run = i;
                }
                C_GT => {
                    self.check_cdata_end(b, i, raw_off)?;
                    i += 1;
                }
                C_LT => {
                    return Err(self.err(
                        raw_off + i,
                        "`<` is not allowed in attribute values (write `&lt;`)",
                    ))
                }
                _ => return Err(self.control_char(b[i], raw_off + i)),
            }
        }
        self.text.push_str(&raw[run..]);
        Ok(())
    }

    /// Resolves the reference starting with `&` at `raw[i]`, appending its character.
    /// Returns the number of bytes consumed.
    fn reference(&mut self, raw: &str, i: usize, raw_off: usize) -> PResult<usize> {
        let rest = &raw.as_bytes()[i + 1..];
        if rest.first() == Some(&b'#') {
            let hex = rest.get(1) == Some(&b'x');
            let digits_start = if hex { 2 } else { 1 };
            let radix = if hex { 16 } else { 10 };
            let mut j = digits_start;
            let mut value: u32 = 0;
            while let Some(d) = rest.get(j).and_then(|&c| (c as char).to_digit(radix)) {
                value = value.saturating_mul(radix).saturating_add(d);
                j += 1;
            }
            if j == digits_start || rest.get(j) != Some(&b';') {
                return Err(self.err(
                    raw_off + i,
                    "malformed character reference (expected `&#NNN;` or `&#xHHH;`)",
                ));
            }
            match char::from_u32(value).filter(|&c| is_xml_char(c)) {
                Some(c) => self.text.push(c),
                None => {
                    return Err(self.err(
                        raw_off + i,
                        format!(
                            "character reference `&{};` does not denote a character allowed \
                             in XML",
                            short(&raw[i + 1..i + 1 + j])
                        ),
                    ))
                }
            }
            return Ok(j + 2);
        }
        let name_len = rest
            .iter()
            .position(|&c| !names::is_name_byte(c))
            .unwrap_or(rest.len());
        if name_len == 0 || rest.get(name_len) != Some(&b';') {
            return Err(self.err(
                raw_off + i,
                "`&` must start an entity or character reference (write `&amp;` for a literal \
                 `&`)",
            ));
        }
        let name = &raw[i + 1..i + 1 + name_len];
        let c = match name {
            "lt" => '<',
            "gt" => '>',
            "amp" => '&',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                return Err(self.err(
                    raw_off + i,
                    format!(
                        "undefined entity `&{};` (only the predefined XML entities are \
                         supported; DTDs are not accepted)",
                        short(name)
                    ),
                ))
            }
        };
        self.text.push(c);
        Ok(name_len + 2)
    }

    // ----- completion ----------------------------------------------------------------

    fn finish(mut self) -> PResult<Document> {
        if let Some(frame) = self.stack.last() {
            let (line, column) = self.line_col(self.nodes[frame.node as usize].offset as usize);
            return Err(self.err(
                self.src.len(),
                format!(
                    "unexpected end of document: element `<{}>` opened at line {line}, column \
                     {column} is not closed",
                    short(frame.raw_name)
                ),
            ));
        }
        if self.document_element == NONE {
            return Err(ParseError::NoRootElement);
        }
        let total = self.nodes.len() as u32;
        self.nodes[0].end = total;
        let (elements_by_name, attributes_by_name) = self.group_by_name();
        let links = self.nodes.iter().map(Link::of).collect();
        // No shrink_to_fit: copying a large arena costs more than the untouched (and so
        // never committed) spare capacity.
        Ok(Document {
            nodes: self.nodes,
            links,
            text: self.text,
            src_len: self.src.len() as u32,
            names: self.names,
            elements_by_name,
            attributes_by_name,
            document_element: self.document_element,
            line_index: std::sync::OnceLock::new(),
            root_children: std::sync::OnceLock::new(),
        })
    }
}

impl Builder<'_> {
    /// Element and attribute ids grouped by name (a counting sort: the counts were kept
    /// while parsing, one pass over the arena places the ids).
    fn group_by_name(&self) -> (ByName, ByName) {
        let n = self.per_name.len();
        // `starts[k + 1]` is first the start of group k, then the cursor that fills it, and
        // ends as the start of group k + 1.
        let mut e_starts = vec![0u32; n + 1];
        let mut a_starts = vec![0u32; n + 1];
        let (mut e_total, mut a_total) = (0u32, 0u32);
        for (k, p) in self.per_name.iter().enumerate() {
            e_starts[k + 1] = e_total;
            a_starts[k + 1] = a_total;
            e_total += p.elements;
            a_total += p.attributes;
        }
        let mut e_ids = vec![NodeId(0); e_total as usize];
        let mut a_ids = vec![NodeId(0); a_total as usize];
        for (i, node) in self.nodes.iter().enumerate() {
            let kind = node.kind_depth >> KIND_SHIFT;
            // Only elements (1) and attributes (2) have an entry.
            if kind.wrapping_sub(1) > 1 {
                continue;
            }
            let (starts, ids) = if kind == 1 {
                (&mut e_starts, &mut e_ids)
            } else {
                (&mut a_starts, &mut a_ids)
            };
            if let Some(cursor) = starts.get_mut(node.name as usize + 1) {
                if let Some(slot) = ids.get_mut(*cursor as usize) {
                    *slot = NodeId(i as u32);
                }
                *cursor += 1;
            }
        }
        (
            ByName {
                ids: e_ids,
                starts: e_starts,
            },
            ByName {
                ids: a_ids,
                starts: a_starts,
            },
        )
    }
}

/// `a == b`, for names (short ones are compared as words rather than by a `memcmp` call).
#[inline]
fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len()
        && if a.len() <= 16 {
            raw_words(a) == raw_words(b)
        } else {
            a == b
        }
}

/// `xmlns` or `xmlns:...` (a namespace declaration rather than an attribute).
#[inline]
fn is_ns_decl(name: &str) -> bool {
    name.starts_with("xmlns") && (name.len() == 5 || name.as_bytes()[5] == b':')
}
