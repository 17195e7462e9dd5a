//! The one-pass evaluator: each element is checked against its type once, its children
//! against the type's sequence table in one scan (O(1) per child: a binary search of the
//! name in the table, then a comparison of particle indexes).

use crate::document::{Document, NameId, NodeId, NodeKind};

use super::{display_name, Body, Schema, Sequence, TypeId, NO_TYPE};

const XSI_NS: &str = "http://www.w3.org/2001/XMLSchema-instance";
const NO_NAME: u32 = u32::MAX;
/// Elements nested deeper than this are not descended into (the walk recurses once per
/// level; this is the parser's default limit, which callers may raise). No UBL
/// document comes near: the finding marks a document built to exhaust the validator.
const MAX_DEPTH: u32 = 256;

/// The kind of a schema finding; each has its own rule id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// The document element is not one the schema declares.
    Root,
    /// An element (or text) where the content model does not allow it.
    Unexpected,
    /// A mandatory element is missing.
    Missing,
    /// A value outside its simple type's lexical space.
    Value,
    /// A required attribute is missing, or an attribute is not declared.
    Attribute,
}

impl Class {
    pub fn rule_id(self) -> &'static str {
        match self {
            Class::Root => super::RULE_ROOT,
            Class::Unexpected => super::RULE_UNEXPECTED,
            Class::Missing => super::RULE_MISSING,
            Class::Value => super::RULE_VALUE,
            Class::Attribute => super::RULE_ATTRIBUTE,
        }
    }
}

/// One schema violation, at a node of the document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaFinding {
    pub class: Class,
    pub node: NodeId,
    pub message: String,
}

struct Walk<'a> {
    schema: &'a Schema,
    doc: &'a Document,
    /// Document name id → schema element name id (NO_NAME: the schema does not know it).
    names: Vec<u32>,
    out: Vec<SchemaFinding>,
    /// Findings listed at most; the rest are counted in `omitted`.
    limit: usize,
    omitted: usize,
}

impl Walk<'_> {
    fn name_of(&self, e: NodeId) -> u32 {
        self.doc
            .element_name(e)
            .and_then(|n| self.names.get(n.0 as usize).copied())
            .unwrap_or(NO_NAME)
    }

    fn shown(&self, e: NodeId) -> String {
        match self.doc.element_name(e) {
            Some(n) => {
                let q = self.doc.qname(n);
                display_name(&q.namespace, &q.local)
            }
            None => "text".to_string(),
        }
    }

    fn shown_schema_name(&self, id: u32) -> String {
        match self.schema.name_list.get(id as usize) {
            Some((ns, local)) => display_name(ns, local),
            None => "?".to_string(),
        }
    }

    fn push(&mut self, class: Class, node: NodeId, message: String) {
        if self.out.len() >= self.limit {
            self.omitted += 1;
            return;
        }
        self.out.push(SchemaFinding {
            class,
            node,
            message,
        });
    }

    fn element(&mut self, e: NodeId, ty: TypeId) {
        let schema = self.schema;
        let Some(t) = schema.types.get(ty as usize) else {
            return;
        };
        if self.doc.depth(e) > MAX_DEPTH {
            let msg = format!(
                "{} is nested more than {MAX_DEPTH} levels deep; its content is not checked",
                self.shown(e)
            );
            self.push(Class::Unexpected, e, msg);
            return;
        }
        self.attributes(e, ty);
        match &t.body {
            Body::Pending | Body::Empty => {
                for c in self.doc.children(e) {
                    let kind = self.doc.kind(c);
                    let text = kind == NodeKind::Text
                        && !self
                            .doc
                            .text(c)
                            .trim_matches([' ', '\t', '\n', '\r'])
                            .is_empty();
                    if kind == NodeKind::Element || text {
                        let what = if text {
                            "text".to_string()
                        } else {
                            self.shown(c)
                        };
                        let msg =
                            format!("{what} is not expected: {} has no content", self.shown(e));
                        self.push(Class::Unexpected, if text { e } else { c }, msg);
                        break;
                    }
                }
            }
            Body::Simple(b) => {
                if let Some(c) = self
                    .doc
                    .children(e)
                    .find(|&c| self.doc.kind(c) == NodeKind::Element)
                {
                    let msg = format!(
                        "{} is not expected: {} holds a value of type {}, not elements",
                        self.shown(c),
                        self.shown(e),
                        b.name()
                    );
                    self.push(Class::Unexpected, c, msg);
                    return;
                }
                let value = self.doc.string_value(e);
                if !b.accepts(&value) {
                    let msg = format!(
                        "{}: `{}` is not a valid {}",
                        self.shown(e),
                        excerpt(&value),
                        b.name()
                    );
                    self.push(Class::Value, e, msg);
                }
            }
            Body::Elements(seq) => self.sequence(e, seq),
        }
    }

    fn attributes(&mut self, e: NodeId, ty: TypeId) {
        let schema = self.schema;
        let t = &schema.types[ty as usize];
        let mut seen = 0u64;
        for a in self.doc.attributes(e) {
            let a = NodeId(a);
            let Some(name) = self.doc.name(a) else {
                continue;
            };
            let q = self.doc.qname(name);
            if q.namespace == XSI_NS
                && matches!(
                    q.local.as_str(),
                    "schemaLocation" | "noNamespaceSchemaLocation"
                )
            {
                continue;
            }
            let decl = if q.namespace.is_empty() {
                t.attributes.iter().position(|d| d.name == q.local)
            } else {
                None
            };
            match decl {
                Some(i) => {
                    if i < 64 {
                        seen |= 1 << i;
                    }
                    let d = &t.attributes[i];
                    let value = self.doc.text(a);
                    if !d.builtin.accepts(value) {
                        let msg = format!(
                            "{}/@{}: `{}` is not a valid {}",
                            self.shown(e),
                            d.name,
                            excerpt(value),
                            d.builtin.name()
                        );
                        self.push(Class::Value, a, msg);
                    }
                }
                None => {
                    let shown = if q.prefix.is_empty() {
                        q.local.clone()
                    } else {
                        format!("{}:{}", q.prefix, q.local)
                    };
                    let msg = format!("the attribute {shown} is not allowed on {}", self.shown(e));
                    self.push(Class::Attribute, a, msg);
                }
            }
        }
        for (i, d) in t.attributes.iter().enumerate() {
            if d.required && (i >= 64 || seen & (1 << i) == 0) {
                let msg = format!("{} requires the attribute {}", self.shown(e), d.name);
                self.push(Class::Attribute, e, msg);
            }
        }
    }

    /// What may come next in `seq` at particle `idx` after `count` occurrences.
    fn expected(&self, seq: &Sequence, idx: usize, count: u32) -> String {
        let mut names = Vec::new();
        let mut i = idx;
        if let Some(p) = seq.particles.get(i) {
            if count >= p.max {
                i += 1;
            }
        }
        while let Some(p) = seq.particles.get(i) {
            names.push(match p.name {
                Some(n) => self.shown_schema_name(n),
                None => "an element of another namespace".to_string(),
            });
            let required_now = p.min > 0 && !(i == idx && count >= p.min);
            if required_now || names.len() >= 6 {
                if !required_now && seq.particles.len() > i + 1 {
                    names.push("…".to_string());
                }
                break;
            }
            i += 1;
        }
        if names.is_empty() {
            "nothing more".to_string()
        } else {
            names.join(" | ")
        }
    }

    fn after(&self, parent: NodeId, prev: Option<NodeId>) -> String {
        match prev {
            Some(p) => format!("after {}", self.shown(p)),
            None => format!("at the start of {}", self.shown(parent)),
        }
    }

    /// Check `c`'s own content by its global declaration after its parent refused it.
    fn orphan(&mut self, c: NodeId) {
        let n = self.name_of(c);
        if let Some(&ty) = self.schema.globals.get(n as usize) {
            if ty != NO_TYPE {
                self.element(c, ty);
            }
        }
    }

    fn sequence(&mut self, e: NodeId, seq: &Sequence) {
        let doc = self.doc;
        let len = seq.particles.len();
        let (mut idx, mut count) = (0usize, 0u32);
        let mut prev: Option<NodeId> = None;
        let mut failed = false;
        let mut text_reported = false;
        for c in doc.children(e) {
            match doc.kind(c) {
                NodeKind::Text => {
                    if !text_reported
                        && !doc.text(c).trim_matches([' ', '\t', '\n', '\r']).is_empty()
                    {
                        text_reported = true;
                        let msg = format!(
                            "{} may hold only elements, not text: `{}`",
                            self.shown(e),
                            excerpt(doc.text(c))
                        );
                        self.push(Class::Unexpected, e, msg);
                    }
                    continue;
                }
                NodeKind::Element => {}
                _ => continue,
            }
            if failed {
                self.orphan(c);
                continue;
            }
            let n = self.name_of(c);
            let j = if n == NO_NAME {
                None
            } else {
                seq.particle_of(n)
            }
            .or_else(|| {
                let (w, target) = seq.wildcard.as_ref()?;
                let q = doc.qname(doc.element_name(c)?);
                (!q.namespace.is_empty() && q.namespace != *target).then_some(*w)
            });
            let verdict = match j.map(usize::from) {
                None => Err((
                    Class::Unexpected,
                    format!(
                        "expected {} {}, found {}",
                        self.expected(seq, idx, count),
                        self.after(e, prev),
                        self.shown(c)
                    ),
                )),
                Some(j) if j < idx || (j == idx && count >= seq.particles[j].max) => Err((
                    Class::Unexpected,
                    format!(
                        "{} is not expected {}: expected {}",
                        self.shown(c),
                        self.after(e, prev),
                        self.expected(seq, idx, count)
                    ),
                )),
                Some(j) if j == idx => {
                    count += 1;
                    Ok(j)
                }
                Some(j) => {
                    let missing = if idx < len && count < seq.particles[idx].min {
                        Some(idx)
                    } else {
                        let k = usize::from(seq.next_required[(idx + 1).min(len)]);
                        (k < j).then_some(k)
                    };
                    match missing {
                        Some(k) => Err((
                            Class::Missing,
                            format!(
                                "expected {} {}, found {}",
                                seq.particles[k].name.map_or_else(
                                    || "an element".to_string(),
                                    |n| self.shown_schema_name(n)
                                ),
                                self.after(e, prev),
                                self.shown(c)
                            ),
                        )),
                        None => {
                            idx = j;
                            count = 1;
                            Ok(j)
                        }
                    }
                }
            };
            match verdict {
                Ok(j) => {
                    prev = Some(c);
                    let ty = seq.particles[j].ty;
                    if ty != NO_TYPE {
                        self.element(c, ty);
                    }
                }
                Err((class, msg)) => {
                    failed = true;
                    self.push(class, c, msg);
                    self.orphan(c);
                }
            }
        }
        if failed {
            return;
        }
        let missing = if idx < len && count < seq.particles[idx].min {
            Some(idx)
        } else {
            let k = usize::from(seq.next_required[(idx + 1).min(len)]);
            (k < len).then_some(k)
        };
        if let Some(k) = missing {
            let what = seq.particles[k].name.map_or_else(
                || "an element of another namespace".to_string(),
                |n| self.shown_schema_name(n),
            );
            let msg = format!(
                "{} ends without its mandatory {what} (expected {})",
                self.shown(e),
                self.after(e, prev)
            );
            self.push(Class::Missing, e, msg);
        }
    }
}

/// At most 60 characters of a value, for messages.
fn excerpt(value: &str) -> String {
    let mut s: String = value.chars().take(60).collect();
    if s.len() < value.len() {
        s.push('…');
    }
    s
}

impl Schema {
    /// Validate `doc`; findings in the order a streaming validator meets them (an
    /// element's attributes and unexpected children before their subtrees, a missing
    /// trailing element at its parent's end).
    /// Whether the document element is one the schema declares (else the only finding is
    /// `UBL-XSD-ROOT`).
    pub fn declares_root(&self, doc: &Document) -> bool {
        doc.element_name(doc.document_element())
            .map(|n| doc.qname(n))
            .and_then(|q| self.lookup(&q.namespace, &q.local))
            .is_some_and(|n| self.roots.iter().any(|&(r, _)| r == n))
    }

    pub fn check(&self, doc: &Document) -> Vec<SchemaFinding> {
        self.check_listing(doc, usize::MAX).0
    }

    /// [`Schema::check`] listing at most `max` findings; the rest are only counted (the
    /// second value), so memory stays bounded whatever a document contains.
    pub fn check_listing(&self, doc: &Document, max: usize) -> (Vec<SchemaFinding>, usize) {
        let names = (0..doc.name_count() as u32)
            .map(|i| {
                let q = doc.qname(NameId(i));
                self.lookup(&q.namespace, &q.local).unwrap_or(NO_NAME)
            })
            .collect();
        let mut walk = Walk {
            schema: self,
            doc,
            names,
            out: Vec::new(),
            limit: max,
            omitted: 0,
        };
        let root = doc.document_element();
        let n = walk.name_of(root);
        match self.roots.iter().find(|(r, _)| *r == n) {
            Some(&(_, ty)) => walk.element(root, ty),
            None => {
                let expected: Vec<String> = self
                    .roots
                    .iter()
                    .map(|&(r, _)| walk.shown_schema_name(r))
                    .collect();
                let msg = format!(
                    "the document element is {}; expected {}",
                    walk.shown(root),
                    expected.join(" or ")
                );
                walk.push(Class::Root, root, msg);
            }
        }
        (walk.out, walk.omitted)
    }
}
