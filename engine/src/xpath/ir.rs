//! invex's XPath IR (the algebra): what the lowering produces and the evaluator runs.
//!
//! Names are resolved to global name keys at compile time (one interner for all packs) and
//! to per-document `NameId`s lazily at evaluation time.

use std::collections::HashSet;
use std::sync::{Arc, OnceLock, RwLock};

use super::functions::Func;
use super::value::{ArithOp, Atomic, AtomicType, CompOp};

/// A global key for an expanded name (namespace URI, local name). Interned once per
/// distinct name for the life of the process (names come from rule packs, a bounded set),
/// so evaluation reads the strings without locking.
#[derive(Clone, Copy, Debug)]
pub struct NameKey {
    /// The entry's id, held inline: the evaluator indexes its per-document table with it
    /// for every named step and guard, and a pointer chase per look-up costs more than
    /// the extra bytes.
    id: u32,
    entry: &'static NameEntry,
}

#[derive(Debug)]
pub struct NameEntry {
    id: u32,
    /// Dense index of the namespace URI among all keys' namespaces, so that a document
    /// resolves each namespace once instead of hashing the long URI for every name.
    ns_id: u32,
    namespace: Box<str>,
    local: Box<str>,
}

impl PartialEq for NameKey {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}
impl Eq for NameKey {}
impl std::hash::Hash for NameKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state)
    }
}

/// Namespace URI → local name → key, so that a document's names can be looked up by
/// borrowed strings (see [`NameKey::resolve_all`]).
/// The keys are fixed by the packs, so a document's names cannot lengthen probe sequences:
/// an unkeyed fast hash is safe here.
#[derive(Default)]
struct NameTable {
    by_ns: rustc_hash::FxHashMap<Box<str>, NamespaceKeys>,
}

struct NamespaceKeys {
    ns_id: u32,
    locals: rustc_hash::FxHashMap<Box<str>, &'static NameEntry>,
}

/// Written only while packs compile; read once per validated document.
fn names() -> &'static RwLock<NameTable> {
    static TABLE: OnceLock<RwLock<NameTable>> = OnceLock::new();
    TABLE.get_or_init(Default::default)
}

fn names_read() -> std::sync::RwLockReadGuard<'static, NameTable> {
    names().read().unwrap_or_else(|e| e.into_inner())
}

static NAME_COUNT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

impl NameKey {
    pub fn intern(namespace: &str, local: &str) -> NameKey {
        let mut t = names().write().unwrap_or_else(|e| e.into_inner());
        let next_ns = t.by_ns.len() as u32;
        let keys = t
            .by_ns
            .entry(Box::from(namespace))
            .or_insert_with(|| NamespaceKeys {
                ns_id: next_ns,
                locals: Default::default(),
            });
        if let Some(e) = keys.locals.get(local) {
            return NameKey { id: e.id, entry: e };
        }
        let id = NAME_COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let entry: &'static NameEntry = Box::leak(Box::new(NameEntry {
            id,
            ns_id: keys.ns_id,
            namespace: Box::from(namespace),
            local: Box::from(local),
        }));
        keys.locals.insert(Box::from(local), entry);
        NameKey { id, entry }
    }

    /// Resolve a document's names in one pass: `names` yields each distinct (namespace,
    /// local name) of the document with its document id. Returns the number of keys at
    /// the time of the call and, for each name that some key denotes, (key index, id).
    /// Every key index below the returned count that is not listed names nothing in the
    /// document; keys interned later are not covered. A document uses far fewer names than
    /// the packs test (absent ones mostly), so this replaces hundreds of per-key look-ups
    /// per document with one per document name.
    pub fn resolve_all<'a, T: Copy>(
        names: impl Iterator<Item = (&'a str, &'a str, T)>,
        out: &mut Vec<(usize, T)>,
    ) -> usize {
        let t = names_read();
        // Read under the lock: no key can be interned between the count and the look-ups.
        let count = NameKey::count();
        // A document's names come from a handful of namespaces: remember the last one
        // instead of hashing its long URI again for every name.
        let mut last: Option<(&str, Option<&NamespaceKeys>)> = None;
        for (ns, local, id) in names {
            let keys = match last {
                Some((l, k)) if l == ns => k,
                _ => {
                    let k = t.by_ns.get(ns);
                    last = Some((ns, k));
                    k
                }
            };
            if let Some(e) = keys.and_then(|k| k.locals.get(local)) {
                out.push((e.id as usize, id));
            }
        }
        count
    }

    /// Dense index of this name (0 .. [`NameKey::count`]).
    pub fn index(self) -> usize {
        self.id as usize
    }

    /// Dense index of the namespace URI (equal URIs, equal indexes).
    pub fn namespace_index(self) -> usize {
        self.entry.ns_id as usize
    }

    pub fn namespace(self) -> &'static str {
        &self.entry.namespace
    }

    pub fn local(self) -> &'static str {
        &self.entry.local
    }

    /// Upper bound of key indexes handed out so far.
    pub fn count() -> usize {
        NAME_COUNT.load(std::sync::atomic::Ordering::Relaxed) as usize
    }
}

/// Cache slots for context-free subexpressions, unique across all compiled expressions.
pub fn next_cache_id() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Slots for name-only predicates (see `name_memo`), unique across all compiled
/// expressions.
pub fn next_memo_id() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    Child,
    Descendant,
    DescendantOrSelf,
    Attribute,
    Self_,
    Parent,
    Ancestor,
    AncestorOrSelf,
    FollowingSibling,
    PrecedingSibling,
    Following,
    Preceding,
}

impl Axis {
    pub fn is_reverse(self) -> bool {
        matches!(
            self,
            Axis::Parent
                | Axis::Ancestor
                | Axis::AncestorOrSelf
                | Axis::PrecedingSibling
                | Axis::Preceding
        )
    }
}

/// Node kinds for kind tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KindTest {
    AnyNode,
    Document,
    Element,
    Attribute,
    Text,
    Comment,
    Pi,
}

#[derive(Clone, Debug)]
pub enum NodeTest {
    /// An exact expanded name (element or attribute by the axis' principal kind).
    Name(NameKey),
    /// `*`
    AnyName,
    /// `prefix:*`
    Namespace(Arc<str>),
    /// `*:local`
    LocalName(Arc<str>),
    Kind(KindTest),
    /// `element(name)` / `attribute(name)`
    KindNamed(KindTest, NameKey),
}

#[derive(Clone, Debug)]
pub enum Pred {
    /// `[1]`
    First,
    /// `[last()]`
    Last,
    /// `[n]` for a literal integer n
    At(usize),
    /// A predicate that is statically boolean and ignores position: filter by EBV.
    Bool(Ir),
    /// Any other predicate: numeric results select by position, others by EBV.
    General(Ir),
}

#[derive(Clone, Debug)]
pub enum Step {
    Axis {
        axis: Axis,
        test: NodeTest,
        preds: Vec<Pred>,
    },
    /// `//name[non-positional preds]` collapsed: descendant elements through the name index.
    /// Also `//@name[...]` (`attribute`: attributes through their index).
    DescendantNamed {
        name: NameKey,
        attribute: bool,
        preds: Vec<Pred>,
    },
    /// Any other step expression, evaluated with each node as context.
    Expr(Ir),
}

/// A code list written as `contains(' A B C ', concat(' ', X, ' '))`.
pub struct CodeList {
    pub raw: String,
    pub tokens: HashSet<Box<str>>,
}

/// The tokens follow from `raw`; printing them too would show a hash set's arbitrary order.
impl std::fmt::Debug for CodeList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("CodeList").field(&self.raw).finish()
    }
}

impl CodeList {
    pub fn new(raw: &str) -> Self {
        CodeList {
            raw: raw.to_string(),
            tokens: raw
                .split(' ')
                .filter(|t| !t.is_empty())
                .map(Box::from)
                .collect(),
        }
    }

    /// Exactly `contains(raw, concat(' ', s, ' '))`.
    pub fn contains(&self, s: &str) -> bool {
        if !s.is_empty() && !s.contains(' ') {
            self.tokens.contains(s)
        } else {
            self.raw.contains(&format!(" {s} "))
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetOp {
    Union,
    Intersect,
    Except,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeCmp {
    Is,
    Precedes,
    Follows,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Occurrence {
    One,
    Optional,
    Many,
    NonEmpty,
}

/// Sequence types the native compiler understands for `instance of` / `treat as`.
#[derive(Clone, Debug)]
pub enum ItemTypeIr {
    Item,
    Atomic(AtomicType),
    AnyAtomic,
    Numeric,
    Kind(KindTest),
}

#[derive(Clone, Debug)]
pub enum Ir {
    Empty,
    Literal(Atomic),
    ContextItem,
    /// The root (document node) of the context node's tree.
    Root,
    Global(u32),
    Local(u32),
    Seq(Vec<Ir>),
    Path(Box<Ir>, Vec<Step>),
    Filter(Box<Ir>, Vec<Pred>),
    Or(Box<Ir>, Box<Ir>),
    And(Box<Ir>, Box<Ir>),
    General(CompOp, Box<Ir>, Box<Ir>),
    Value(CompOp, Box<Ir>, Box<Ir>),
    NodeCompare(NodeCmp, Box<Ir>, Box<Ir>),
    Arith(ArithOp, Box<Ir>, Box<Ir>),
    Negate(Box<Ir>),
    Range(Box<Ir>, Box<Ir>),
    Set(SetOp, Box<Ir>, Box<Ir>),
    Concat(Box<Ir>, Box<Ir>),
    If(Box<Ir>, Box<Ir>, Box<Ir>),
    For(u32, Box<Ir>, Box<Ir>),
    Let(u32, Box<Ir>, Box<Ir>),
    Some(u32, Box<Ir>, Box<Ir>),
    Every(u32, Box<Ir>, Box<Ir>),
    SimpleMap(Box<Ir>, Box<Ir>),
    Call(Func, Vec<Ir>),
    Cast(Box<Ir>, AtomicType, bool),
    Castable(Box<Ir>, AtomicType, bool),
    InstanceOf(Box<Ir>, ItemTypeIr, Occurrence),
    Treat(Box<Ir>, ItemTypeIr, Occurrence),
    InCodeList(Arc<CodeList>, Box<Ir>),
    /// A context-free subexpression, computed once per document.
    Cached(u32, Box<Ir>),
    /// A boolean that depends on the context node's name only, computed once per document
    /// and name.
    NameMemo(u32, Box<Ir>),
}

/// One body for both child accessors: `$iter` is `iter` or `iter_mut`, `$as` is `as_ref`
/// or `as_mut`, and the optional `mut` makes the references mutable.
macro_rules! children_of {
    ($ir:expr, $iter:ident, $as:ident $(, $mutability:tt)?) => {{
        fn preds(p: &$($mutability)? [Pred]) -> impl Iterator<Item = &$($mutability)? Ir> {
            p.$iter().filter_map(|p| match p {
                Pred::Bool(e) | Pred::General(e) => Some(e),
                _ => None,
            })
        }
        match $ir {
            Ir::Empty
            | Ir::Literal(_)
            | Ir::ContextItem
            | Ir::Root
            | Ir::Global(_)
            | Ir::Local(_) => vec![],
            Ir::Seq(v) | Ir::Call(_, v) => v.$iter().collect(),
            Ir::Path(s, steps) => {
                let mut out = vec![s.$as()];
                for st in steps {
                    match st {
                        Step::Axis { preds: p, .. } | Step::DescendantNamed { preds: p, .. } => {
                            out.extend(preds(p))
                        }
                        Step::Expr(e) => out.push(e),
                    }
                }
                out
            }
            Ir::Filter(b, p) => {
                let mut out = vec![b.$as()];
                out.extend(preds(p));
                out
            }
            Ir::Or(a, b)
            | Ir::And(a, b)
            | Ir::General(_, a, b)
            | Ir::Value(_, a, b)
            | Ir::NodeCompare(_, a, b)
            | Ir::Arith(_, a, b)
            | Ir::Range(a, b)
            | Ir::Set(_, a, b)
            | Ir::Concat(a, b)
            | Ir::For(_, a, b)
            | Ir::Let(_, a, b)
            | Ir::Some(_, a, b)
            | Ir::Every(_, a, b)
            | Ir::SimpleMap(a, b) => vec![a.$as(), b.$as()],
            Ir::If(a, b, c) => vec![a.$as(), b.$as(), c.$as()],
            Ir::Negate(a)
            | Ir::Cast(a, _, _)
            | Ir::Castable(a, _, _)
            | Ir::InstanceOf(a, _, _)
            | Ir::Treat(a, _, _)
            | Ir::InCodeList(_, a)
            | Ir::Cached(_, a)
            | Ir::NameMemo(_, a) => vec![a.$as()],
        }
    }};
}

impl Ir {
    /// Direct children, for rewriting passes.
    pub fn children_mut(&mut self) -> Vec<&mut Ir> {
        children_of!(self, iter_mut, as_mut, mut)
    }

    /// Direct children (read-only), for analysis passes.
    pub fn children(&self) -> Vec<&Ir> {
        children_of!(self, iter, as_ref)
    }
}
