//! Builds a [`Document`] from bytes: quick-xml tokenizes; this module checks
//! well-formedness, resolves namespaces, unescapes text and lays out the node arena.

use std::borrow::Cow;

use quick_xml::errors::{Error as XmlError, IllFormedError, SyntaxError};
use quick_xml::events::Event;
use quick_xml::Reader;

use super::names::{self, FastMap, NameTable, XMLNS_NS, XML_NS};
use super::{
    lines, Document, Limits, Node, NodeId, NodeKind, ParseError, MAX_REPRESENTABLE_DEPTH, NONE,
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

struct Binding<'s> {
    prefix: &'s str,
    uri: Cow<'s, str>,
    /// Index of the binding of the same prefix that this one shadows (or `NONE`).
    prev: u32,
}

struct Frame<'s> {
    node: u32,
    raw_name: &'s str,
    bindings_len: usize,
}

/// A raw QName as a map key, hashed with a single `write` (the hasher mixes the length).
#[derive(Clone, Copy, PartialEq, Eq)]
struct RawKey<'s>(&'s str);

impl std::hash::Hash for RawKey<'_> {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write(self.0.as_bytes());
    }
}

struct RawAttr<'s> {
    name: &'s str,
    name_off: usize,
    value: &'s str,
    value_off: usize,
}

struct Builder<'s> {
    src: &'s str,
    nodes: Vec<Node>,
    text: String,
    names: NameTable,
    elements_by_name: Vec<Vec<NodeId>>,
    attributes_by_name: Vec<Vec<NodeId>>,
    /// Per name: the last element that had an attribute with it (duplicate detection).
    attr_seen: Vec<u32>,
    /// Raw QName → (scope generation, name); valid while the generation is current.
    elem_cache: FastMap<RawKey<'s>, (u32, u32)>,
    attr_cache: FastMap<RawKey<'s>, (u32, u32)>,
    /// Bumped whenever namespace bindings change.
    scope_gen: u32,
    bindings: Vec<Binding<'s>>,
    /// Prefix ("" = default namespace) → index of its innermost binding.
    ns_map: FastMap<&'s str, u32>,
    stack: Vec<Frame<'s>>,
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
        Builder {
            src,
            nodes,
            text,
            names: NameTable::with_capacity(names_hint),
            elements_by_name: Vec::with_capacity(names_hint),
            attributes_by_name: Vec::new(),
            attr_seen: Vec::new(),
            elem_cache: names::fast_map_with_capacity(names_hint),
            attr_cache: names::fast_map(),
            scope_gen: 0,
            bindings: Vec::new(),
            ns_map: names::fast_map(),
            stack: Vec::new(),
            attrs: Vec::new(),
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
                    self.start(pos, content, false)?;
                }
                Event::Empty(e) => {
                    let content = self.slice(pos + 1, e.len())?;
                    debug_assert_eq!(content.as_bytes(), &*e);
                    self.start(pos, content, true)?;
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

    #[inline]
    fn current_parent(&self) -> u32 {
        self.stack.last().map_or(0, |f| f.node)
    }

    /// Appends a child (not an attribute) of the current parent and links it.
    #[inline]
    fn add_child(&mut self, kind: NodeKind, name: u32, offset: usize, a: u32, b: u32) -> u32 {
        let id = self.nodes.len() as u32;
        let parent = self.current_parent();
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

    fn start(&mut self, pos: usize, content: &'s str, empty: bool) -> PResult<()> {
        self.pending_text = NONE;
        if self.stack.is_empty() && self.document_element != NONE {
            return Err(self.err(
                pos,
                "only one root element is allowed; found another element after it",
            ));
        }
        let depth = self.stack.len() + 1;
        if depth > self.max_depth {
            let (line, column) = self.line_col(pos);
            return Err(ParseError::TooDeep {
                line,
                column,
                limit: self.max_depth,
            });
        }
        let cb = content.as_bytes();
        let name_len = cb.iter().position(|&b| is_ws(b)).unwrap_or(cb.len());
        let raw_name = &content[..name_len];
        let mut attrs = std::mem::take(&mut self.attrs);
        attrs.clear();
        let result = self.element_with_attrs(pos, content, raw_name, &mut attrs, empty, depth);
        attrs.clear();
        self.attrs = attrs;
        result
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
        self.elements_by_name[name as usize].push(NodeId(id));
        if plain_attrs > 0 {
            let attr_depth = Node::pack(NodeKind::Attribute, depth as u32 + 1);
            for a in attrs.iter() {
                if is_ns_decl(a.name) {
                    continue;
                }
                let aname = self.resolve(a.name, a.name_off, false)?;
                if self.attr_seen[aname as usize] == id {
                    return Err(self.err(
                        a.name_off,
                        format!(
                            "duplicate attribute `{}` (an attribute with the same namespace and \
                             local name was already given on this element)",
                            short(a.name)
                        ),
                    ));
                }
                self.attr_seen[aname as usize] = id;
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
                self.attributes_by_name[aname as usize].push(NodeId(aid));
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
        self.bindings.push(Binding { prefix, uri, prev });
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
    fn resolve(&mut self, raw: &'s str, off: usize, element: bool) -> PResult<u32> {
        let cache = if element {
            &self.elem_cache
        } else {
            &self.attr_cache
        };
        if let Some(&(generation, id)) = cache.get(&RawKey(raw)) {
            if generation == self.scope_gen {
                return Ok(id);
            }
        }
        let what = if element { "element" } else { "attribute" };
        let Some((prefix, local)) = names::split_qname(raw) else {
            return Err(self.err(off, format!("`{}` is not a valid {what} name", short(raw))));
        };
        let ns: &str = if prefix.is_empty() {
            if element {
                self.ns_map
                    .get("")
                    .map_or("", |&i| &self.bindings[i as usize].uri)
            } else {
                ""
            }
        } else if prefix == "xml" {
            XML_NS
        } else if prefix == "xmlns" {
            return Err(self.err(
                off,
                format!(
                    "the prefix `xmlns` cannot be used in the {what} name `{}`",
                    short(raw)
                ),
            ));
        } else {
            match self.ns_map.get(prefix) {
                Some(&i) => &self.bindings[i as usize].uri,
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
        let name_len = ns.len() + local.len() + prefix.len();
        let (id, new) = self.names.intern(ns, local, prefix);
        if new {
            self.new_name_slots(name_len, off)?;
        }
        let cache = if element {
            &mut self.elem_cache
        } else {
            &mut self.attr_cache
        };
        cache.insert(RawKey(raw), (self.scope_gen, id));
        Ok(id)
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
        self.elements_by_name.push(Vec::new());
        self.attributes_by_name.push(Vec::new());
        self.attr_seen.push(NONE);
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
        if frame.raw_name != name {
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
        self.nodes[frame.node as usize].end = self.nodes.len() as u32;
        if self.bindings.len() != frame.bindings_len {
            self.pop_bindings(frame.bindings_len);
        }
        Ok(())
    }

    // ----- text-like nodes -----------------------------------------------------------

    fn text_piece(
        &mut self,
        node_off: usize,
        raw: &'s str,
        raw_off: usize,
        mode: Mode,
    ) -> PResult<()> {
        if self.stack.is_empty() {
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
            return Ok(());
        }
        if self.pending_text != NONE {
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
            return Ok(());
        }
        let (a, b) = self.span_for(raw, raw_off, mode)?;
        if b == 0 {
            return Ok(());
        }
        self.pending_text = self.add_child(NodeKind::Text, NONE, node_off, a, b);
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
        let (name, new) = self.names.intern("", target, "");
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
        let mut i = 0;
        while i < raw.len() {
            match table[raw[i] as usize] {
                0 => i += 1,
                C_GT => {
                    self.check_cdata_end(raw, i, raw_off)?;
                    i += 1;
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
    fn span_for(&mut self, raw: &'s str, raw_off: usize, mode: Mode) -> PResult<(u32, u32)> {
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
        // No shrink_to_fit: copying a large arena costs more than the untouched (and so
        // never committed) spare capacity.
        Ok(Document {
            nodes: self.nodes,
            text: self.text,
            src_len: self.src.len() as u32,
            names: self.names,
            elements_by_name: self.elements_by_name,
            attributes_by_name: self.attributes_by_name,
            document_element: self.document_element,
            line_starts: std::sync::OnceLock::new(),
            root_children: std::sync::OnceLock::new(),
        })
    }
}

/// `xmlns` or `xmlns:...` (a namespace declaration rather than an attribute).
#[inline]
fn is_ns_decl(name: &str) -> bool {
    name.starts_with("xmlns") && (name.len() == 5 || name.as_bytes()[5] == b':')
}
