//! The native evaluator: walks the IR over a [`Document`].

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use super::functions::Func;
use super::ir::{Axis, Ir, KindTest, NameKey, NodeCmp, NodeTest, Occurrence, Pred, SetOp, Step};
use super::lower::yields_nodes;
use super::value::{
    arithmetic, atomize, atomize_item, effective_boolean, err, general_pair, negate, value_compare,
    Atomic, AtomicType, CompOp, Item, Sequence,
};
use super::EvalError;
use crate::document::{Document, NameId, NamespaceNames, NodeId, NodeKind};

type R<T> = Result<T, EvalError>;

/// A global variable: its value, or its definition until first use.
#[derive(Clone, Debug)]
pub(crate) enum Global {
    Value(Sequence),
    Pending(Arc<Ir>, u32),
    Failed(EvalError),
    Evaluating,
}

/// The focus: context item, position and size.
#[derive(Clone, Debug)]
pub(crate) struct Focus {
    pub item: Item,
    pub pos: usize,
    pub size: usize,
}

impl Focus {
    pub fn node(n: NodeId) -> Focus {
        Focus {
            item: Item::Node(n),
            pos: 1,
            size: 1,
        }
    }
}

/// Per-document state of the native evaluator.
pub(crate) struct State<'d> {
    pub doc: &'d Document,
    pub globals: Vec<Global>,
    pub locals: Vec<Sequence>,
    /// NameKey → this document's NameId (None inside: the document has no such name).
    pub names: Vec<Option<Option<NameId>>>,
    /// Namespace index of a `NameKey` → this document's names in that namespace (None
    /// inside: no name of the document is in it), resolved once per evaluator.
    namespaces: Vec<Option<Option<NamespaceNames<'d>>>>,
    cache: HashMap<u32, Sequence, BuildHasherDefault<IdHasher>>,
    /// Per name-memo slot, per NameId: 0 not computed yet, 1 false, 2 true.
    name_memo: HashMap<u32, Vec<u8>, BuildHasherDefault<IdHasher>>,
    /// Matching a rule context: a dynamic error in a predicate means "no match" for that
    /// node (XSLT pattern semantics), not a failed rule.
    pub lenient_predicates: bool,
}

impl<'d> State<'d> {
    pub fn new(doc: &'d Document, globals: usize) -> Self {
        State {
            doc,
            globals: (0..globals).map(|_| Global::Value(Vec::new())).collect(),
            locals: Vec::new(),
            names: Vec::new(),
            namespaces: Vec::new(),
            cache: HashMap::default(),
            name_memo: HashMap::default(),
            lenient_predicates: false,
        }
    }

    /// This document's id for a name (None: no node has it), resolved once. Inlined: the
    /// absent-name guards and every named step ask, thousands of times per document.
    #[inline]
    pub fn name(&mut self, key: NameKey) -> Option<NameId> {
        match self.names.get(key.index()) {
            Some(Some(known)) => *known,
            _ => self.resolve_name(key),
        }
    }

    /// First look-up of a name in this document.
    #[inline(never)]
    fn resolve_name(&mut self, key: NameKey) -> Option<NameId> {
        let i = key.index();
        if self.names.is_empty() {
            self.resolve_document_names();
            if let Some(Some(r)) = self.names.get(i) {
                return *r;
            }
        }
        if i >= self.names.len() {
            self.names.resize(NameKey::count().max(i + 1), None);
        }
        if let Some(r) = self.names[i] {
            return r;
        }
        let ns = key.namespace_index();
        if ns >= self.namespaces.len() {
            self.namespaces.resize(ns + 1, None);
        }
        let table = match self.namespaces[ns] {
            Some(t) => t,
            None => {
                let t = self.doc.namespace_names(key.namespace());
                self.namespaces[ns] = Some(t);
                t
            }
        };
        let r = table.and_then(|t| t.lookup(key.local()));
        self.names[i] = Some(r);
        r
    }

    /// Every key known now, resolved at once from the document's side: the document's
    /// few distinct names are looked up among the keys, and every other key is marked
    /// absent.
    #[cold]
    fn resolve_document_names(&mut self) {
        let doc = self.doc;
        let mut found = Vec::new();
        let count = NameKey::resolve_all(
            (0..doc.name_count()).map(|d| {
                let id = NameId(d as u32);
                let q = doc.qname(id);
                (q.namespace.as_str(), q.local.as_str(), id)
            }),
            &mut found,
        );
        self.names.clear();
        self.names.resize(count, Some(None));
        for (k, id) in found {
            if let Some(slot) = self.names.get_mut(k) {
                *slot = Some(Some(id));
            }
        }
    }

    pub fn eval(&mut self, ir: &Ir, f: &Focus) -> R<Sequence> {
        Ok(match ir {
            Ir::Empty => Vec::new(),
            Ir::Literal(a) => vec![Item::Atomic(a.clone())],
            Ir::ContextItem => vec![f.item.clone()],
            Ir::Root => match f.item {
                Item::Node(_) => vec![Item::Node(self.doc.root())],
                Item::Atomic(_) => {
                    return Err(err(
                        "XPTY0020",
                        "the context item is not a node (path from /)",
                    ))
                }
            },
            Ir::Global(s) => self.global(*s as usize)?,
            Ir::Local(s) => self.locals[*s as usize].clone(),
            Ir::Seq(items) => {
                let mut out = Vec::new();
                for i in items {
                    out.extend(self.eval(i, f)?);
                }
                out
            }
            Ir::Path(start, steps) => {
                // A step naming an element or attribute the document does not contain
                // selects nothing, so neither does the path: skip the walk. Only from a
                // node context, where evaluating the start cannot fail.
                if matches!(**start, Ir::ContextItem | Ir::Root)
                    && matches!(f.item, Item::Node(_))
                    && !self.names_present(steps)
                {
                    return Ok(Vec::new());
                }
                // From the context node, the first axis step needs no start sequence.
                let (mut cur, rest) = match (&**start, &f.item, steps.split_first()) {
                    (Ir::ContextItem, Item::Node(n), Some((first @ Step::Axis { .. }, rest))) => {
                        (self.step_from(*n, first)?, rest)
                    }
                    _ => (self.eval(start, f)?, &steps[..]),
                };
                for s in rest {
                    if cur.is_empty() {
                        break;
                    }
                    cur = self.step(cur, s)?;
                }
                cur
            }
            Ir::Filter(base, preds) => {
                let seq = self.eval(base, f)?;
                self.filter(seq, preds)?
            }
            Ir::Or(..)
            | Ir::And(..)
            | Ir::General(..)
            | Ir::NodeCompare(..)
            | Ir::Some(..)
            | Ir::Every(..)
            | Ir::InCodeList(..)
            | Ir::Castable(..)
            | Ir::InstanceOf(..)
            | Ir::NameMemo(..) => vec![Item::Atomic(Atomic::Boolean(self.eval_bool(ir, f)?))],
            Ir::Value(op, a, b) => {
                let (Some(x), Some(y)) = (self.atomic_opt(a, f)?, self.atomic_opt(b, f)?) else {
                    return Ok(Vec::new());
                };
                let x = untyped_to_string(x);
                let y = untyped_to_string(y);
                vec![Item::Atomic(Atomic::Boolean(value_compare(*op, &x, &y)?))]
            }
            Ir::Arith(op, a, b) => {
                let (Some(x), Some(y)) = (self.atomic_opt(a, f)?, self.atomic_opt(b, f)?) else {
                    return Ok(Vec::new());
                };
                vec![Item::Atomic(arithmetic(*op, &x, &y)?)]
            }
            Ir::Negate(a) => match self.atomic_opt(a, f)? {
                None => Vec::new(),
                Some(x) => vec![Item::Atomic(negate(&x)?)],
            },
            Ir::Range(a, b) => {
                let (Some(x), Some(y)) = (self.atomic_opt(a, f)?, self.atomic_opt(b, f)?) else {
                    return Ok(Vec::new());
                };
                let x = to_integer(&x)?;
                let y = to_integer(&y)?;
                if y < x {
                    Vec::new()
                } else if y - x > 10_000_000 {
                    return Err(err("FOAR0002", "range too large"));
                } else {
                    (x..=y).map(|i| Item::Atomic(Atomic::Integer(i))).collect()
                }
            }
            Ir::Set(SetOp::Union, ..) => {
                // `a | b | c ...` as one collect, sort and dedup instead of one per `|`.
                let mut parts = Vec::new();
                flatten_union(ir, &mut parts);
                self.nodes_of(&parts, f)?
                    .into_iter()
                    .map(Item::Node)
                    .collect()
            }
            Ir::Set(op, a, b) => {
                let x = self.nodes_of(&[a], f)?;
                let y = self.nodes_of(&[b], f)?;
                let out: Vec<NodeId> = match op {
                    SetOp::Union => {
                        let mut v = x;
                        v.extend(y);
                        v.sort_unstable();
                        v.dedup();
                        v
                    }
                    SetOp::Intersect => x
                        .into_iter()
                        .filter(|n| y.binary_search(n).is_ok())
                        .collect(),
                    SetOp::Except => x
                        .into_iter()
                        .filter(|n| y.binary_search(n).is_err())
                        .collect(),
                };
                out.into_iter().map(Item::Node).collect()
            }
            Ir::Concat(a, b) => {
                let x = self.string_opt(a, f)?;
                let y = self.string_opt(b, f)?;
                vec![Item::Atomic(Atomic::string(&(x.into_owned() + &y)))]
            }
            Ir::If(c, t, e) => {
                if self.eval_bool(c, f)? {
                    self.eval(t, f)?
                } else {
                    self.eval(e, f)?
                }
            }
            Ir::For(slot, input, body) => {
                let items = self.eval(input, f)?;
                let mut out = Vec::new();
                for it in items {
                    self.set_local(*slot, vec![it]);
                    out.extend(self.eval(body, f)?);
                }
                out
            }
            Ir::Let(slot, value, body) => {
                let v = self.eval(value, f)?;
                self.set_local(*slot, v);
                self.eval(body, f)?
            }
            Ir::SimpleMap(a, b) => {
                let items = self.eval(a, f)?;
                let size = items.len();
                let mut out = Vec::new();
                for (i, it) in items.into_iter().enumerate() {
                    let inner = Focus {
                        item: it,
                        pos: i + 1,
                        size,
                    };
                    out.extend(self.eval(b, &inner)?);
                }
                out
            }
            Ir::Call(func, args) => self.call(*func, args, f)?,
            Ir::Cast(e, t, optional) => {
                let v = self.eval(e, f)?;
                match v.as_slice() {
                    [] if *optional => Vec::new(),
                    [] => {
                        return Err(err(
                            "XPTY0004",
                            format!("cast of an empty sequence to {}", t.name()),
                        ))
                    }
                    [one] => vec![Item::Atomic(atomize_item(self.doc, one).cast(*t)?)],
                    _ => {
                        return Err(err(
                            "XPTY0004",
                            format!("cast of a sequence of {} items to {}", v.len(), t.name()),
                        ))
                    }
                }
            }
            Ir::Treat(e, t, occ) => {
                let v = self.eval(e, f)?;
                if !self.instance_of(&v, t, *occ) {
                    return Err(err(
                        "XPDY0050",
                        "treat as: the value does not match the type",
                    ));
                }
                v
            }
            Ir::Cached(id, e) => {
                if let Some(v) = self.cache.get(id) {
                    return Ok(v.clone());
                }
                let v = self.eval(e, f)?;
                self.cache.insert(*id, v.clone());
                v
            }
        })
    }

    /// A global variable's value, evaluating a lazy one on first use (as XSLT evaluates
    /// global variables: an error surfaces in the rule that uses the variable, and a
    /// variable no rule reaches never fails the report).
    /// A global's value for the fallback evaluator (unbound slots are empty).
    #[cfg(feature = "xpath-fallback")]
    pub fn global_value(&mut self, i: usize) -> R<Sequence> {
        if i >= self.globals.len() {
            return Ok(Vec::new());
        }
        self.global(i)
    }

    fn global(&mut self, i: usize) -> R<Sequence> {
        self.global_ref(i).cloned()
    }

    /// A global variable's value by reference (no copy of the sequence).
    fn global_ref(&mut self, i: usize) -> R<&Sequence> {
        self.force_global(i)?;
        match &self.globals[i] {
            Global::Value(v) => Ok(v),
            Global::Failed(e) => Err(e.clone()),
            _ => Err(err("XTDE0640", "circular global variable definition")),
        }
    }

    /// Evaluate a pending global variable (once; its error is kept and raised again).
    fn force_global(&mut self, i: usize) -> R<()> {
        match self.globals.get(i) {
            None => return Err(err("XPST0008", "undeclared global variable")),
            Some(Global::Value(_)) => return Ok(()),
            Some(Global::Failed(e)) => return Err(e.clone()),
            Some(Global::Evaluating) => {
                return Err(err("XTDE0640", "circular global variable definition"))
            }
            Some(Global::Pending(..)) => {}
        }
        match std::mem::replace(&mut self.globals[i], Global::Evaluating) {
            Global::Pending(ir, locals) => {
                // Its own local slots: do not clobber those of the expression using it.
                let saved = std::mem::replace(&mut self.locals, vec![Vec::new(); locals as usize]);
                let lenient = std::mem::replace(&mut self.lenient_predicates, false);
                let root = Focus::node(self.doc.root());
                let r = self.eval(&ir, &root);
                self.locals = saved;
                self.lenient_predicates = lenient;
                match r {
                    Ok(v) => {
                        self.globals[i] = Global::Value(v);
                        Ok(())
                    }
                    Err(e) => {
                        self.globals[i] = Global::Failed(e.clone());
                        Err(e)
                    }
                }
            }
            other => {
                self.globals[i] = other;
                Ok(())
            }
        }
    }

    fn set_local(&mut self, slot: u32, v: Sequence) {
        let i = slot as usize;
        if i >= self.locals.len() {
            self.locals.resize(i + 1, Vec::new());
        }
        self.locals[i] = v;
    }

    /// Effective boolean value, short-circuiting where XPath allows it.
    pub fn eval_bool(&mut self, ir: &Ir, f: &Focus) -> R<bool> {
        match ir {
            Ir::Or(a, b) => Ok(self.eval_bool(a, f)? || self.eval_bool(b, f)?),
            Ir::And(a, b) => Ok(self.eval_bool(a, f)? && self.eval_bool(b, f)?),
            Ir::General(op, a, b) => {
                // The frequent `path = 'literal'` and `path > 0`: compare node strings in
                // place, without atomizing into new strings.
                if let Ir::Literal(lit) = &**b {
                    // `normalize-space(x) = 'VAT'`: an xs:string against a string literal
                    // is a codepoint comparison; no xs:string value is built.
                    if let (
                        Ir::Call(
                            Func::NormalizeSpace | Func::String | Func::UpperCase | Func::LowerCase,
                            _,
                        ),
                        Atomic::String(l),
                    ) = (&**a, lit)
                    {
                        // Against '' only emptiness matters: normalize-space(x) = '' holds
                        // iff x is all whitespace.
                        if let (true, Ir::Call(Func::NormalizeSpace, args)) = (l.is_empty(), &**a) {
                            let x = self.string_opt(&args[0], f)?;
                            let blank =
                                x.bytes().all(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'));
                            let ord = if blank {
                                Ordering::Equal
                            } else {
                                Ordering::Greater
                            };
                            return Ok(op.holds(Some(ord)));
                        }
                        let s = self.string_opt(a, f)?;
                        return Ok(op.holds(Some(s.as_ref().cmp(l.as_ref()))));
                    }
                    if let Some(x) = self.single_atomic(a, f)? {
                        return match x {
                            None => Ok(false),
                            Some(x) => general_pair(*op, &x, lit),
                        };
                    }
                    if let Ir::Path(..) = &**a {
                        let doc = self.doc;
                        let mut failure = None;
                        let walked = self.walk_path(a, f, false, &mut |n| match untyped_vs(
                            *op,
                            &doc.string_value(n),
                            lit,
                        ) {
                            Ok(hit) => hit,
                            Err(e) => {
                                failure = Some(e);
                                true
                            }
                        })?;
                        if let Some(e) = failure {
                            return Err(e);
                        }
                        if let Some(hit) = walked {
                            return Ok(hit);
                        }
                    }
                    // A multi-valued global (`$vatLineCodes = 'S'`): compare in place, no
                    // copy of the variable's sequence.
                    if let Ir::Global(s) = &**a {
                        let doc = self.doc;
                        let seq = self.global_ref(*s as usize)?;
                        return items_vs_literal(doc, *op, seq, lit);
                    }
                    if let Atomic::String(l) = lit {
                        if let Some(hit) = self.string_step_vs_literal(a, *op, l, f)? {
                            return Ok(hit);
                        }
                    }
                    let x = self.eval(a, f)?;
                    return self.general_with_literal(*op, &x, lit, false);
                }
                if let Ir::Literal(lit) = &**a {
                    let y = self.eval(b, f)?;
                    return self.general_with_literal(*op, &y, lit, true);
                }
                let x = self.eval(a, f)?;
                if x.is_empty() {
                    return Ok(false);
                }
                // `@currencyID = $documentCurrency`, `... = $rate`: a variable holding one
                // item is compared like a literal, without copying the variable's sequence
                // or atomizing either side into new vectors (same pairs, same order).
                if matches!(**b, Ir::Global(_) | Ir::Local(_)) {
                    if let Some(y) = self.single_atomic(b, f)? {
                        return match y {
                            None => Ok(false),
                            Some(y) => self.general_with_literal(*op, &x, &y, false),
                        };
                    }
                }
                let y = self.eval(b, f)?;
                let xa = atomize(self.doc, &x);
                let ya = atomize(self.doc, &y);
                for p in &xa {
                    for q in &ya {
                        if general_pair(*op, p, q)? {
                            return Ok(true);
                        }
                    }
                }
                Ok(false)
            }
            Ir::NodeCompare(op, a, b) => {
                let (x, y) = (self.eval(a, f)?, self.eval(b, f)?);
                let (Some(x), Some(y)) = (single_node(&x)?, single_node(&y)?) else {
                    return Ok(false);
                };
                Ok(match op {
                    NodeCmp::Is => x == y,
                    NodeCmp::Precedes => x < y,
                    NodeCmp::Follows => x > y,
                })
            }
            Ir::Some(slot, input, test) | Ir::Every(slot, input, test) => {
                let every = matches!(ir, Ir::Every(..));
                let items = self.eval(input, f)?;
                for it in items {
                    self.set_local(*slot, vec![it]);
                    let b = self.eval_bool(test, f)?;
                    if b != every {
                        return Ok(!every);
                    }
                }
                Ok(every)
            }
            Ir::InCodeList(list, arg) => {
                let s = self.string_opt(arg, f)?;
                Ok(list.contains(&s))
            }
            Ir::Castable(e, t, optional) => {
                let v = self.eval(e, f)?;
                Ok(match v.as_slice() {
                    [] => *optional,
                    [one] => atomize_item(self.doc, one).cast(*t).is_ok(),
                    _ => false,
                })
            }
            Ir::InstanceOf(e, t, occ) => {
                let v = self.eval(e, f)?;
                Ok(self.instance_of(&v, t, *occ))
            }
            Ir::Call(func, args) => match self.call_bool(*func, args, f)? {
                Some(b) => Ok(b),
                None => effective_boolean(&self.call(*func, args, f)?),
            },
            Ir::Set(SetOp::Union, a, b) if yields_nodes(a) && yields_nodes(b) => {
                Ok(self.eval_bool(a, f)? || self.eval_bool(b, f)?)
            }
            Ir::Global(s) => effective_boolean(self.global_ref(*s as usize)?),
            Ir::NameMemo(slot, e) => self.name_memo(*slot, e, f),
            Ir::Path(..) => match self.walk_path(ir, f, false, &mut |_| true)? {
                Some(stopped) => Ok(stopped),
                None => match self.bool_step(ir, f)? {
                    Some(b) => Ok(b),
                    None => effective_boolean(&self.eval(ir, f)?),
                },
            },
            other => effective_boolean(&self.eval(other, f)?),
        }
    }

    /// A name-only boolean, computed once per name of this document (errors are not kept:
    /// they are raised again for the next node of that name, as without the memo).
    fn name_memo(&mut self, slot: u32, e: &Ir, f: &Focus) -> R<bool> {
        let name = match f.item {
            Item::Node(n) => self.doc.name(n),
            Item::Atomic(_) => None,
        };
        let Some(id) = name else {
            return self.eval_bool(e, f);
        };
        let i = id.0 as usize;
        if let Some(&known) = self.name_memo.get(&slot).and_then(|t| t.get(i)) {
            if known != 0 {
                return Ok(known == 2);
            }
        }
        let v = self.eval_bool(e, f)?;
        let table = self.name_memo.entry(slot).or_default();
        if table.len() <= i {
            table.resize(self.doc.name_count().max(i + 1), 0);
        }
        table[i] = 1 + u8::from(v);
        Ok(v)
    }

    /// The nodes of a node-selecting expression in document order without duplicates,
    /// walked without intermediate sequences, for the shapes the walker takes (a path, a
    /// union of paths, either cached). `None`: use the general evaluator.
    /// `out` is cleared first; false: use the general evaluator (`out` is then cleared).
    pub(crate) fn select_walk(&mut self, ir: &Ir, f: &Focus, out: &mut Vec<NodeId>) -> R<bool> {
        let ir = match ir {
            Ir::Cached(_, inner) => inner,
            other => other,
        };
        out.clear();
        if !self.walk_union(ir, f, out)? {
            out.clear();
            return Ok(false);
        }
        let union = matches!(ir, Ir::Set(SetOp::Union, ..));
        if union || !out.windows(2).all(|w| w[0] < w[1]) {
            out.sort_unstable();
            out.dedup();
        }
        Ok(true)
    }

    /// Walk every operand of a chain of unions, left to right, into `out` (no list of the
    /// operands is built: this runs for every rule context). False: an operand needs the
    /// general evaluator.
    fn walk_union(&mut self, ir: &Ir, f: &Focus, out: &mut Vec<NodeId>) -> R<bool> {
        if let Ir::Set(SetOp::Union, a, b) = ir {
            return Ok(self.walk_union(a, f, out)? && self.walk_union(b, f, out)?);
        }
        let walked = self.walk_path(ir, f, true, &mut |n| {
            out.push(n);
            false
        })?;
        Ok(walked.is_some())
    }

    /// fn:exists without building the sequence where the shape allows it.
    pub(crate) fn exists(&mut self, ir: &Ir, f: &Focus) -> R<bool> {
        match ir {
            // `exists(*)`, `empty(cac:X)`: one scan of the children.
            Ir::Path(start, steps) if matches!(**start, Ir::ContextItem) => {
                if let (
                    Item::Node(n),
                    [Step::Axis {
                        axis: Axis::Child,
                        test: test @ (NodeTest::AnyName | NodeTest::Name(_)),
                        preds,
                    }],
                ) = (&f.item, steps.as_slice())
                {
                    if preds.is_empty() {
                        return Ok(self.has_child_element(*n, test));
                    }
                }
                if let Some(found) = self.walk_path(ir, f, false, &mut |_| true)? {
                    return Ok(found);
                }
            }
            Ir::Path(..) => {
                if let Some(found) = self.walk_path(ir, f, false, &mut |_| true)? {
                    return Ok(found);
                }
            }
            Ir::Set(SetOp::Union, a, b) if yields_nodes(a) && yields_nodes(b) => {
                return Ok(self.exists(a, f)? || self.exists(b, f)?);
            }
            _ => {}
        }
        Ok(!self.eval(ir, f)?.is_empty())
    }

    /// Whether `n` has a child element passing `test` (any name, or one exact name).
    fn has_child_element(&mut self, n: NodeId, test: &NodeTest) -> bool {
        let doc = self.doc;
        match test {
            NodeTest::Name(k) => match self.name(*k) {
                Some(id) => doc.children(n).any(|c| doc.is_element_named(c, id)),
                None => false,
            },
            _ => doc.children(n).any(|c| doc.kind(c) == NodeKind::Element),
        }
    }

    /// Visit the nodes a path selects, depth first, without building sequences, for the
    /// common shape: from the context node or the root, forward steps (child, attribute,
    /// self, parent; a descendant step only first) with non-positional predicates.
    /// `visit` returns true to stop. `Ok(None)`: the path needs the general evaluator;
    /// `Ok(Some(stopped))` otherwise. `distinct`: the caller counts results, so steps
    /// that could reach a node twice (parent) are not walked.
    fn walk_path(
        &mut self,
        ir: &Ir,
        f: &Focus,
        distinct: bool,
        visit: &mut dyn FnMut(NodeId) -> bool,
    ) -> R<Option<bool>> {
        let Ir::Path(start, steps) = ir else {
            return Ok(None);
        };
        self.walk_steps(start, steps, f, distinct, visit)
    }

    /// [`State::walk_path`] for the path `start/steps`.
    pub(crate) fn walk_steps(
        &mut self,
        start: &Ir,
        steps: &[Step],
        f: &Focus,
        distinct: bool,
        visit: &mut dyn FnMut(NodeId) -> bool,
    ) -> R<Option<bool>> {
        let Item::Node(ctx) = f.item else {
            return Ok(None);
        };
        let from = match *start {
            Ir::ContextItem => ctx,
            Ir::Root => self.doc.root(),
            _ => return Ok(None),
        };
        let walkable = steps.iter().enumerate().all(|(i, s)| match s {
            Step::Axis { axis, preds, .. } => {
                let axis_ok = match axis {
                    Axis::Child | Axis::Attribute | Axis::Self_ => true,
                    Axis::Parent => !distinct,
                    Axis::Descendant | Axis::DescendantOrSelf => i == 0,
                    _ => false,
                };
                axis_ok && preds.iter().all(|p| matches!(p, Pred::Bool(_)))
            }
            Step::DescendantNamed { preds, .. } => {
                i == 0 && preds.iter().all(|p| matches!(p, Pred::Bool(_)))
            }
            Step::Expr(_) => false,
        });
        if !walkable {
            return Ok(None);
        }
        if !self.names_present(steps) {
            return Ok(Some(false));
        }
        self.walk(from, steps, visit).map(Some)
    }

    pub(crate) fn walk(
        &mut self,
        n: NodeId,
        steps: &[Step],
        visit: &mut dyn FnMut(NodeId) -> bool,
    ) -> R<bool> {
        let Some((step, rest)) = steps.split_first() else {
            return Ok(visit(n));
        };
        let doc = self.doc;
        match step {
            Step::DescendantNamed {
                name,
                attribute,
                preds,
            } => {
                let Some(id) = self.name(*name) else {
                    return Ok(false);
                };
                let all = if *attribute {
                    doc.attributes_named(id)
                } else {
                    doc.elements_named(id)
                };
                let end = doc.subtree_end(n);
                let lo = all.partition_point(|m| *m <= n);
                for &m in all[lo..].iter().take_while(|m| **m < end) {
                    if self.preds_hold(m, preds)? && self.walk(m, rest, visit)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            Step::Axis { axis, test, preds } => {
                let name = match test {
                    NodeTest::Name(k) | NodeTest::KindNamed(_, k) => match self.name(*k) {
                        Some(id) => Some(id),
                        None => return Ok(false),
                    },
                    _ => None,
                };
                let principal = if *axis == Axis::Attribute {
                    NodeKind::Attribute
                } else {
                    NodeKind::Element
                };
                match axis {
                    Axis::Child => {
                        if let (Some(id), NodeTest::Name(_), true) =
                            (name, test, n == doc.document_element())
                        {
                            for &m in doc.document_element_children_named(id) {
                                if self.preds_hold(m, preds)? && self.walk(m, rest, visit)? {
                                    return Ok(true);
                                }
                            }
                            return Ok(false);
                        }
                        let mut c = doc.first_child(n);
                        while let Some(m) = c {
                            let hit = match (test, name) {
                                (NodeTest::Name(_), Some(id)) => doc.is_element_named(m, id),
                                _ => node_test(doc, m, test, name, principal),
                            };
                            if hit && self.preds_hold(m, preds)? && self.walk(m, rest, visit)? {
                                return Ok(true);
                            }
                            c = doc.next_sibling(m);
                        }
                        Ok(false)
                    }
                    Axis::Attribute => {
                        if let (Some(id), NodeTest::Name(_)) = (name, test) {
                            return match doc.attribute(n, id) {
                                Some(a) => {
                                    Ok(self.preds_hold(a, preds)? && self.walk(a, rest, visit)?)
                                }
                                None => Ok(false),
                            };
                        }
                        for a in doc.attributes(n).map(NodeId) {
                            if node_test(doc, a, test, name, principal)
                                && self.preds_hold(a, preds)?
                                && self.walk(a, rest, visit)?
                            {
                                return Ok(true);
                            }
                        }
                        Ok(false)
                    }
                    Axis::Self_ | Axis::Parent => {
                        let m = if *axis == Axis::Self_ {
                            Some(n)
                        } else {
                            doc.parent(n)
                        };
                        match m {
                            Some(m) if node_test(doc, m, test, name, principal) => {
                                Ok(self.preds_hold(m, preds)? && self.walk(m, rest, visit)?)
                            }
                            _ => Ok(false),
                        }
                    }
                    Axis::Descendant | Axis::DescendantOrSelf => {
                        let begin = if *axis == Axis::DescendantOrSelf {
                            n.0
                        } else {
                            n.0 + 1
                        };
                        let end = doc.subtree_end(n).0;
                        if let Some(candidates) = self.elements_by_memo(test, preds, begin, end) {
                            for m in candidates {
                                if self.preds_hold(m, preds)? && self.walk(m, rest, visit)? {
                                    return Ok(true);
                                }
                            }
                            return Ok(false);
                        }
                        for m in (begin..end).map(NodeId) {
                            let kind_ok = m == n || doc.kind(m) != NodeKind::Attribute;
                            if kind_ok
                                && node_test(doc, m, test, name, principal)
                                && self.preds_hold(m, preds)?
                                && self.walk(m, rest, visit)?
                            {
                                return Ok(true);
                            }
                        }
                        Ok(false)
                    }
                    _ => Err(err("XPST0017", "walk: unsupported axis")),
                }
            }
            Step::Expr(_) => Err(err("XPST0017", "walk: expression step")),
        }
    }

    /// `descendant::*[name-only and ...]` (UBL-DT: elements by name suffix): the elements
    /// in `begin..end` whose name passes the name-only first conjunct, in document order,
    /// found through the name index with one evaluation per name instead of one per node.
    /// `None`: not that shape, or the condition fails to evaluate for some name (the
    /// plain walk then meets the error where it would have).
    fn elements_by_memo(
        &mut self,
        test: &NodeTest,
        preds: &[Pred],
        begin: u32,
        end: u32,
    ) -> Option<Vec<NodeId>> {
        let Some(Pred::Bool(first)) = preds.first() else {
            return None;
        };
        let (slot, cond) = match first {
            Ir::NameMemo(slot, cond) => (*slot, cond),
            Ir::And(a, _) => match &**a {
                Ir::NameMemo(slot, cond) => (*slot, cond),
                _ => return None,
            },
            _ => return None,
        };
        if !matches!(test, NodeTest::AnyName) {
            return None;
        }
        let doc = self.doc;
        let mut out = Vec::new();
        for id in (0..doc.name_count() as u32).map(NameId) {
            let all = doc.elements_named(id);
            let lo = all.partition_point(|m| m.0 < begin);
            let hi = all.partition_point(|m| m.0 < end);
            if lo == hi {
                continue;
            }
            if self.name_memo(slot, cond, &Focus::node(all[lo])).ok()? {
                out.extend_from_slice(&all[lo..hi]);
            }
        }
        out.sort_unstable();
        Some(out)
    }

    /// A predicate's outcome; in lenient mode (rule contexts) an error is "false".
    fn predicate(&self, r: R<bool>) -> R<bool> {
        match r {
            Err(_) if self.lenient_predicates => Ok(false),
            other => other,
        }
    }

    /// Non-positional predicates on one candidate node.
    pub(crate) fn preds_hold(&mut self, m: NodeId, preds: &[Pred]) -> R<bool> {
        for p in preds {
            let Pred::Bool(e) = p else {
                return Err(err("XPST0017", "walk: positional predicate"));
            };
            let holds = self.eval_bool(e, &Focus::node(m));
            if !self.predicate(holds)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Whether every exact name the steps test for occurs in the document.
    pub(crate) fn names_present(&mut self, steps: &[Step]) -> bool {
        for s in steps {
            let key = match s {
                Step::Axis {
                    test: NodeTest::Name(k) | NodeTest::KindNamed(_, k),
                    ..
                } => *k,
                Step::DescendantNamed { name, .. } => *name,
                _ => continue,
            };
            if self.name(key).is_none() {
                return false;
            }
        }
        true
    }

    /// General comparison of a sequence with one literal (`flipped`: literal on the left).
    fn general_with_literal(
        &mut self,
        op: CompOp,
        seq: &[Item],
        lit: &Atomic,
        flipped: bool,
    ) -> R<bool> {
        let op = if flipped { op.flip() } else { op };
        items_vs_literal(self.doc, op, seq, lit)
    }

    fn instance_of(&self, v: &[Item], t: &super::ir::ItemTypeIr, occ: Occurrence) -> bool {
        use super::ir::ItemTypeIr as T;
        let count_ok = match occ {
            Occurrence::One => v.len() == 1,
            Occurrence::Optional => v.len() <= 1,
            Occurrence::Many => true,
            Occurrence::NonEmpty => !v.is_empty(),
        };
        count_ok
            && v.iter().all(|it| match (t, it) {
                (T::Item, _) => true,
                (T::AnyAtomic, Item::Atomic(_)) => true,
                (T::Numeric, Item::Atomic(a)) => a.is_numeric(),
                (T::Atomic(at), Item::Atomic(a)) => {
                    a.type_of() == *at
                        || (*at == AtomicType::Decimal && a.type_of() == AtomicType::Integer)
                }
                (T::Kind(k), Item::Node(n)) => kind_matches(self.doc, *n, *k),
                _ => false,
            })
    }

    /// Zero or one atomic value; more is a type error.
    pub fn atomic_opt(&mut self, ir: &Ir, f: &Focus) -> R<Option<Atomic>> {
        let doc = self.doc;
        // Variables (operands of arithmetic and value comparisons) are read in place.
        let v: &[Item] = match ir {
            Ir::Global(s) => self.global_ref(*s as usize)?,
            Ir::Local(s) => &self.locals[*s as usize],
            _ => return single_of(doc, &self.eval(ir, f)?),
        };
        single_of(doc, v)
    }

    /// String of zero or one item ("" for empty), borrowing node text where it can.
    pub fn string_opt(&mut self, ir: &Ir, f: &Focus) -> R<Cow<'d, str>> {
        let doc = self.doc;
        match ir {
            Ir::ContextItem => {
                return Ok(match &f.item {
                    Item::Node(n) => doc.string_value(*n),
                    Item::Atomic(a) => Cow::Owned(a.display()),
                })
            }
            Ir::Literal(Atomic::String(s)) => return Ok(Cow::Owned((**s).to_owned())),
            // Variables (`$currency` in the code-list tests) read in place, not copied.
            Ir::Global(s) => return seq_string(doc, self.global_ref(*s as usize)?),
            Ir::Local(s) => return seq_string(doc, &self.locals[*s as usize]),
            // local-name() / name() of the context node: the interned name, no copy.
            Ir::Call(func @ (Func::LocalName | Func::Name), args)
                if matches!(args.as_slice(), [Ir::ContextItem]) =>
            {
                if let Item::Node(n) = f.item {
                    let Some(id) = doc.name(n) else {
                        return Ok(Cow::Borrowed(""));
                    };
                    let q = doc.qname(id);
                    if *func == Func::LocalName || q.prefix.is_empty() {
                        return Ok(Cow::Borrowed(q.local.as_str()));
                    }
                }
            }
            Ir::Path(..) => {
                let mut found: [Option<NodeId>; 2] = [None, None];
                let walked = self.walk_path(ir, f, true, &mut |n| {
                    if found[0].is_none() {
                        found[0] = Some(n);
                        false
                    } else {
                        found[1] = Some(n);
                        true
                    }
                })?;
                if walked.is_some() {
                    return match found {
                        [None, _] => Ok(Cow::Borrowed("")),
                        [Some(n), None] => Ok(doc.string_value(n)),
                        [Some(_), Some(_)] => Err(err(
                            "XPTY0004",
                            "a sequence of more than one item where at most one is allowed",
                        )),
                    };
                }
            }
            // String functions without an xs:string value in between.
            Ir::Call(Func::NormalizeSpace, args) => {
                return Ok(match self.string_opt(&args[0], f)? {
                    Cow::Borrowed(b) => normalize_space(b),
                    Cow::Owned(o) => Cow::Owned(normalize_space(&o).into_owned()),
                });
            }
            Ir::Call(Func::String, args) => return self.string_opt(&args[0], f),
            Ir::Call(Func::UpperCase, args) => {
                return Ok(Cow::Owned(self.string_opt(&args[0], f)?.to_uppercase()))
            }
            Ir::Call(Func::LowerCase, args) => {
                return Ok(Cow::Owned(self.string_opt(&args[0], f)?.to_lowercase()))
            }
            Ir::Call(..) | Ir::Cast(..) | Ir::Arith(..) => {
                if let Some(a) = self.single_atomic(ir, f)? {
                    return Ok(match a {
                        None => Cow::Borrowed(""),
                        Some(Atomic::String(s) | Atomic::Untyped(s)) => Cow::Owned((*s).to_owned()),
                        Some(other) => Cow::Owned(other.display()),
                    });
                }
            }
            _ => {}
        }
        let v = self.eval(ir, f)?;
        seq_string(doc, &v)
    }

    /// Zero or one atomic value computed without building a sequence, for expressions
    /// that are statically single-valued (string and numeric functions, casts,
    /// arithmetic, literals). `None`: not such an expression, evaluate normally.
    pub fn single_atomic(&mut self, ir: &Ir, f: &Focus) -> R<Option<Option<Atomic>>> {
        use super::functions::Func;
        Ok(Some(match ir {
            Ir::Literal(a) => Some(a.clone()),
            Ir::Global(s) => {
                let doc = self.doc;
                match self.global_ref(*s as usize)?.as_slice() {
                    [] => None,
                    [one] => Some(atomize_item(doc, one)),
                    _ => return Ok(None),
                }
            }
            Ir::Local(s) => match self.locals[*s as usize].as_slice() {
                [] => None,
                [one] => Some(atomize_item(self.doc, one)),
                _ => return Ok(None),
            },
            Ir::Call(Func::NormalizeSpace, args) => {
                let s = self.string_opt(&args[0], f)?;
                Some(Atomic::String(Arc::from(normalize_space(&s).as_ref())))
            }
            Ir::Call(Func::StringLength, args) => {
                let s = self.string_opt(&args[0], f)?;
                Some(Atomic::Integer(s.chars().count() as i64))
            }
            Ir::Call(Func::UpperCase, args) => {
                let s = self.string_opt(&args[0], f)?;
                Some(Atomic::string(&s.to_uppercase()))
            }
            Ir::Call(Func::LowerCase, args) => {
                let s = self.string_opt(&args[0], f)?;
                Some(Atomic::string(&s.to_lowercase()))
            }
            Ir::Call(Func::String, args) => {
                let s = self.string_opt(&args[0], f)?;
                Some(Atomic::string(&s))
            }
            Ir::Call(Func::Count, args) => {
                Some(Atomic::Integer(self.eval(&args[0], f)?.len() as i64))
            }
            Ir::Cast(e, t, optional) => {
                let v = match self.single_atomic(e, f)? {
                    Some(v) => v,
                    None => self.atomic_opt(e, f)?,
                };
                match v {
                    None if *optional => None,
                    None => {
                        return Err(err(
                            "XPTY0004",
                            format!("cast of an empty sequence to {}", t.name()),
                        ))
                    }
                    Some(a) => Some(a.cast(*t)?),
                }
            }
            _ => return Ok(None),
        }))
    }

    /// The nodes of the operands, in document order without duplicates.
    fn nodes_of(&mut self, operands: &[&Ir], f: &Focus) -> R<Vec<NodeId>> {
        let mut out = Vec::new();
        for ir in operands {
            for it in self.eval(ir, f)? {
                match it {
                    Item::Node(n) => out.push(n),
                    Item::Atomic(_) => {
                        return Err(err(
                            "XPTY0004",
                            "a set operator needs nodes, not atomic values",
                        ))
                    }
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    fn filter(&mut self, mut seq: Sequence, preds: &[Pred]) -> R<Sequence> {
        for p in preds {
            seq = match p {
                Pred::First => {
                    seq.truncate(1);
                    seq
                }
                Pred::Last => match seq.pop() {
                    Some(x) => vec![x],
                    None => seq,
                },
                Pred::At(n) => {
                    if *n <= seq.len() {
                        vec![seq.swap_remove(n - 1)]
                    } else {
                        Vec::new()
                    }
                }
                Pred::Bool(e) => {
                    let size = seq.len();
                    let mut out = Vec::with_capacity(size);
                    for (i, it) in seq.into_iter().enumerate() {
                        let focus = Focus {
                            item: it,
                            pos: i + 1,
                            size,
                        };
                        let holds = self.eval_bool(e, &focus);
                        if self.predicate(holds)? {
                            out.push(focus.item);
                        }
                    }
                    out
                }
                Pred::General(e) => {
                    let size = seq.len();
                    let mut out = Vec::with_capacity(size);
                    for (i, it) in seq.into_iter().enumerate() {
                        let focus = Focus {
                            item: it,
                            pos: i + 1,
                            size,
                        };
                        let r = self.eval(e, &focus).and_then(|r| match r.as_slice() {
                            [Item::Atomic(a)] if a.is_numeric() => {
                                Ok(a.as_f64() == Some((i + 1) as f64))
                            }
                            _ => effective_boolean(&r),
                        });
                        let keep = self.predicate(r)?;
                        if keep {
                            out.push(focus.item);
                        }
                    }
                    out
                }
            };
        }
        Ok(seq)
    }

    /// An axis step from one node.
    fn step_from(&mut self, n: NodeId, step: &Step) -> R<Sequence> {
        let Step::Axis { axis, test, preds } = step else {
            return self.step(vec![Item::Node(n)], step);
        };
        let mut out = Vec::new();
        self.axis(n, *axis, test, &mut out);
        if !preds.is_empty() {
            out = self.filter(out, preds)?;
        }
        if axis.is_reverse() {
            doc_order(&mut out);
        }
        Ok(out)
    }

    fn step(&mut self, input: Sequence, step: &Step) -> R<Sequence> {
        match step {
            Step::Axis { axis, test, preds } => {
                let many = input.len() > 1;
                let mut out = Vec::new();
                for it in input {
                    let Item::Node(n) = it else {
                        return Err(err("XPTY0019", "a path step applied to an atomic value"));
                    };
                    if preds.is_empty() {
                        self.axis(n, *axis, test, &mut out);
                    } else {
                        let mut seq = Vec::new();
                        self.axis(n, *axis, test, &mut seq);
                        out.extend(self.filter(seq, preds)?);
                    }
                }
                if many || axis.is_reverse() {
                    doc_order(&mut out);
                }
                Ok(out)
            }
            Step::DescendantNamed {
                name,
                attribute,
                preds,
            } => {
                let Some(id) = self.name(*name) else {
                    return Ok(Vec::new());
                };
                let all = if *attribute {
                    self.doc.attributes_named(id)
                } else {
                    self.doc.elements_named(id)
                };
                let many = input.len() > 1;
                let mut out = Vec::new();
                for it in input {
                    let Item::Node(n) = it else {
                        return Err(err("XPTY0019", "a path step applied to an atomic value"));
                    };
                    // descendant-or-self::node()/child::x = every x strictly below n.
                    let end = self.doc.subtree_end(n);
                    let lo = all.partition_point(|m| *m <= n);
                    let hi = all.partition_point(|m| *m < end);
                    let seq: Sequence = all[lo..hi].iter().map(|m| Item::Node(*m)).collect();
                    if preds.is_empty() {
                        out.extend(seq);
                    } else {
                        out.extend(self.filter(seq, preds)?);
                    }
                }
                if many {
                    doc_order(&mut out);
                }
                Ok(out)
            }
            Step::Expr(e) => {
                let size = input.len();
                let mut out = Vec::new();
                for (i, it) in input.into_iter().enumerate() {
                    if let Item::Atomic(_) = it {
                        return Err(err("XPTY0019", "a path step applied to an atomic value"));
                    }
                    let focus = Focus {
                        item: it,
                        pos: i + 1,
                        size,
                    };
                    out.extend(self.eval(e, &focus)?);
                }
                let nodes = out.iter().filter(|i| matches!(i, Item::Node(_))).count();
                if nodes == out.len() {
                    doc_order(&mut out);
                } else if nodes != 0 {
                    return Err(err(
                        "XPTY0018",
                        "the last step of a path returns both nodes and atomic values",
                    ));
                }
                Ok(out)
            }
        }
    }

    /// Append the nodes on an axis to `out`, in axis order (reverse axes: nearest first).
    fn axis(&mut self, n: NodeId, axis: Axis, test: &NodeTest, out: &mut Sequence) {
        let doc = self.doc;
        // Resolve an exact name once; a name absent from the document matches nothing.
        let name = match test {
            NodeTest::Name(k) | NodeTest::KindNamed(_, k) => match self.name(*k) {
                Some(id) => Some(id),
                None => return,
            },
            _ => None,
        };
        let principal = if axis == Axis::Attribute {
            NodeKind::Attribute
        } else {
            NodeKind::Element
        };
        let matches = |m: NodeId| node_test(doc, m, test, name, principal);
        match axis {
            Axis::Child => {
                // A rare element name: its few occurrences (from the index) inside n's
                // subtree, kept when n is their parent, beat scanning every child.
                if let (Some(id), NodeTest::Name(_)) = (name, test) {
                    if n == doc.document_element() {
                        let named = doc.document_element_children_named(id);
                        out.extend(named.iter().map(|m| Item::Node(*m)));
                        return;
                    }
                    let all = doc.elements_named(id);
                    if all.len() <= 16 {
                        let end = doc.subtree_end(n);
                        let lo = all.partition_point(|m| *m <= n);
                        out.extend(
                            all[lo..]
                                .iter()
                                .take_while(|m| **m < end)
                                .filter(|m| doc.parent(**m) == Some(n))
                                .map(|m| Item::Node(*m)),
                        );
                        return;
                    }
                }
                let mut c = doc.first_child(n);
                while let Some(m) = c {
                    let hit = match (test, name) {
                        (NodeTest::Name(_), Some(id)) => doc.is_element_named(m, id),
                        _ => matches(m),
                    };
                    if hit {
                        out.push(Item::Node(m));
                    }
                    c = doc.next_sibling(m);
                }
            }
            Axis::Attribute => {
                if let Some(id) = name {
                    if let Some(a) = doc.attribute(n, id) {
                        out.push(Item::Node(a));
                    }
                } else {
                    out.extend(
                        doc.attributes(n)
                            .map(NodeId)
                            .filter(|m| matches(*m))
                            .map(Item::Node),
                    );
                }
            }
            Axis::Descendant | Axis::DescendantOrSelf => {
                if axis == Axis::DescendantOrSelf && matches(n) {
                    out.push(Item::Node(n));
                }
                let end = doc.subtree_end(n).0;
                out.extend(
                    (n.0 + 1..end)
                        .map(NodeId)
                        .filter(|m| doc.kind(*m) != NodeKind::Attribute && matches(*m))
                        .map(Item::Node),
                );
            }
            Axis::Self_ => {
                if matches(n) {
                    out.push(Item::Node(n))
                }
            }
            Axis::Parent => {
                if let Some(p) = doc.parent(n) {
                    if matches(p) {
                        out.push(Item::Node(p))
                    }
                }
            }
            Axis::Ancestor | Axis::AncestorOrSelf => {
                if axis == Axis::AncestorOrSelf && matches(n) {
                    out.push(Item::Node(n));
                }
                let mut p = doc.parent(n);
                while let Some(m) = p {
                    if matches(m) {
                        out.push(Item::Node(m));
                    }
                    p = doc.parent(m);
                }
            }
            Axis::FollowingSibling | Axis::PrecedingSibling => {
                if doc.kind(n) == NodeKind::Attribute {
                    return;
                }
                let mut s = if axis == Axis::FollowingSibling {
                    doc.next_sibling(n)
                } else {
                    doc.prev_sibling(n)
                };
                while let Some(m) = s {
                    if matches(m) {
                        out.push(Item::Node(m));
                    }
                    s = if axis == Axis::FollowingSibling {
                        doc.next_sibling(m)
                    } else {
                        doc.prev_sibling(m)
                    };
                }
            }
            Axis::Following => {
                let start = doc.subtree_end(n).0;
                out.extend(
                    (start..doc.len() as u32)
                        .map(NodeId)
                        .filter(|m| doc.kind(*m) != NodeKind::Attribute && matches(*m))
                        .map(Item::Node),
                );
            }
            Axis::Preceding => {
                let mut ancestors = Vec::new();
                let mut p = doc.parent(n);
                while let Some(m) = p {
                    ancestors.push(m);
                    p = doc.parent(m);
                }
                out.extend(
                    (0..n.0)
                        .rev()
                        .map(NodeId)
                        .filter(|m| {
                            doc.kind(*m) != NodeKind::Attribute
                                && !ancestors.contains(m)
                                && matches(*m)
                        })
                        .map(Item::Node),
                );
            }
        }
    }
}

// Inlined: the descendant walks of rule contexts call it for every node of the document.
#[inline]
fn node_test(
    doc: &Document,
    m: NodeId,
    test: &NodeTest,
    name: Option<NameId>,
    principal: NodeKind,
) -> bool {
    match test {
        // Elements: one read of the walk array (child and descendant steps).
        NodeTest::Name(_) if principal == NodeKind::Element => {
            name.is_some() && doc.element_name(m) == name
        }
        NodeTest::Name(_) => doc.kind(m) == principal && doc.name(m) == name,
        NodeTest::AnyName => doc.kind(m) == principal,
        NodeTest::Namespace(ns) => {
            doc.kind(m) == principal
                && doc
                    .name(m)
                    .is_some_and(|id| doc.qname(id).namespace == ns.as_ref())
        }
        NodeTest::LocalName(l) => {
            doc.kind(m) == principal
                && doc
                    .name(m)
                    .is_some_and(|id| doc.qname(id).local == l.as_ref())
        }
        NodeTest::Kind(k) => kind_matches(doc, m, *k),
        NodeTest::KindNamed(k, _) => kind_matches(doc, m, *k) && doc.name(m) == name,
    }
}

pub(crate) fn kind_matches(doc: &Document, m: NodeId, k: KindTest) -> bool {
    let kind = doc.kind(m);
    match k {
        KindTest::AnyNode => true,
        KindTest::Document => kind == NodeKind::Document,
        KindTest::Element => kind == NodeKind::Element,
        KindTest::Attribute => kind == NodeKind::Attribute,
        KindTest::Text => kind == NodeKind::Text,
        KindTest::Comment => kind == NodeKind::Comment,
        KindTest::Pi => kind == NodeKind::ProcessingInstruction,
    }
}

/// Sort nodes into document order without duplicates (cheap when already ordered).
pub(crate) fn doc_order(v: &mut Sequence) {
    let key = |i: &Item| match i {
        Item::Node(n) => n.0,
        Item::Atomic(_) => u32::MAX,
    };
    if v.windows(2).all(|w| key(&w[0]) < key(&w[1])) {
        return;
    }
    v.sort_by_key(key);
    v.dedup_by_key(|i| key(i));
}

/// Zero or one item, atomized; more is a type error.
fn single_of(doc: &Document, v: &[Item]) -> R<Option<Atomic>> {
    match v {
        [] => Ok(None),
        [one] => Ok(Some(atomize_item(doc, one))),
        _ => Err(err(
            "XPTY0004",
            format!(
                "a sequence of {} items where at most one is allowed",
                v.len()
            ),
        )),
    }
}

/// The string of zero or one item ("" for none); more is a type error.
fn seq_string<'d>(doc: &'d Document, v: &[Item]) -> R<Cow<'d, str>> {
    match v {
        [] => Ok(Cow::Borrowed("")),
        [Item::Node(n)] => Ok(doc.string_value(*n)),
        [Item::Atomic(a)] => Ok(Cow::Owned(a.display())),
        _ => Err(err(
            "XPTY0004",
            format!(
                "a sequence of {} items where at most one is allowed",
                v.len()
            ),
        )),
    }
}

/// General comparison of a sequence (on the left) with one atomic value.
fn items_vs_literal(doc: &Document, op: CompOp, seq: &[Item], lit: &Atomic) -> R<bool> {
    for it in seq {
        let hit = match it {
            Item::Node(n) => untyped_vs(op, &doc.string_value(*n), lit)?,
            Item::Atomic(Atomic::Untyped(s)) => untyped_vs(op, s, lit)?,
            Item::Atomic(a) => general_pair(op, a, lit)?,
        };
        if hit {
            return Ok(true);
        }
    }
    Ok(false)
}

/// `untyped op literal` with the general-comparison casting rules.
fn untyped_vs(op: CompOp, s: &str, lit: &Atomic) -> R<bool> {
    use super::lexical;
    use std::cmp::Ordering;
    let invalid = |t: &str| err("FORG0001", format!("cannot cast '{s}' to {t}"));
    let ord: Option<Ordering> = match lit {
        Atomic::String(l) | Atomic::Untyped(l) => Some(s.cmp(l)),
        Atomic::Integer(_) | Atomic::Decimal(_) | Atomic::Double(_) => {
            let x = lexical::parse_double(s).ok_or_else(|| invalid("xs:double"))?;
            x.partial_cmp(&lit.as_f64().unwrap_or(f64::NAN))
        }
        Atomic::Boolean(l) => Some(
            lexical::parse_boolean(s)
                .ok_or_else(|| invalid("xs:boolean"))?
                .cmp(l),
        ),
        Atomic::Date(l) => Some(
            lexical::parse_date(s)
                .ok_or_else(|| invalid("xs:date"))?
                .compare(l),
        ),
    };
    Ok(op.holds(ord))
}

/// fn:normalize-space: collapse XML whitespace, borrowing when nothing changes. One pass
/// over the bytes (it runs on the text of most elements of a document).
pub(crate) fn normalize_space(s: &str) -> Cow<'_, str> {
    let ws = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r');
    let b = s.as_bytes();
    // Clean: no leading or trailing whitespace, no tab/newline/CR, no double space.
    let mut clean = !b.first().is_some_and(|&c| ws(c)) && !b.last().is_some_and(|&c| ws(c));
    let mut prev_space = false;
    for &c in b {
        if !clean {
            break;
        }
        match c {
            b'\t' | b'\n' | b'\r' => clean = false,
            b' ' => {
                clean = !prev_space;
                prev_space = true;
            }
            _ => prev_space = false,
        }
    }
    if clean {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let words = s.split([' ', '\t', '\n', '\r']);
    for t in words.filter(|t| !t.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(t);
    }
    Cow::Owned(out)
}

/// Hasher for the per-document cache: its keys are small distinct integers handed out by
/// the compiler, so a multiplicative mix is enough (SipHash showed up in profiles).
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 =
                (self.0.rotate_left(5) ^ u64::from(*b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.0 = u64::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// The operands of a chain of unions, left to right.
fn flatten_union<'a>(ir: &'a Ir, out: &mut Vec<&'a Ir>) {
    match ir {
        Ir::Set(SetOp::Union, a, b) => {
            flatten_union(a, out);
            flatten_union(b, out);
        }
        other => out.push(other),
    }
}

fn single_node(v: &[Item]) -> R<Option<NodeId>> {
    match v {
        [] => Ok(None),
        [Item::Node(n)] => Ok(Some(*n)),
        _ => Err(err(
            "XPTY0004",
            "a node comparison needs one node on each side",
        )),
    }
}

fn untyped_to_string(a: Atomic) -> Atomic {
    match a {
        Atomic::Untyped(s) => Atomic::String(s),
        other => other,
    }
}

fn to_integer(a: &Atomic) -> R<i64> {
    match a {
        Atomic::Integer(i) => Ok(*i),
        Atomic::Untyped(_) => match a.cast(AtomicType::Integer)? {
            Atomic::Integer(i) => Ok(i),
            _ => Err(err("XPTY0004", "expected an integer")),
        },
        other => Err(err(
            "XPTY0004",
            format!("expected xs:integer, got {}", other.type_of().name()),
        )),
    }
}
