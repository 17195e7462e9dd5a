//! A memo of compiled expressions that outlives the process.
//!
//! Parsing is nearly all of the cost of compiling a pack (the XPath parser backtracks; about
//! 1.5 M instructions per expression, 1,450 expressions in the Slovak profile), while the
//! lowered IR is small plain data. A command-line run that validates one file would spend
//! almost all its time parsing the same expressions as the run before; with the memo it
//! reads their IR from a file instead.
//!
//! The memo is opt-in per process ([`install`]): the command line uses it, the server
//! (which compiles once and then runs for days) does not. An entry is keyed by a SHA-256 over
//! everything the compiler reads — the kind (expression or rule context), the source text,
//! the namespaces, the variables with their slots and which of them are boolean — so an
//! entry can only ever stand for the expression it was made from. The file is bound to the
//! compiler's build (a fingerprint of the XPath compiler's source, computed by the engine's
//! build script): another build ignores it and writes its own.
//!
//! The encoding is written here rather than derived with serde: names must be re-interned
//! into this process's name table and per-document cache slots renumbered, the function
//! library is encoded by name so that reordering it cannot change a meaning, and a decoder
//! written for this IR can bound its recursion, so that a damaged file is an error (a
//! recompile), never a stack overflow. The file also ends in a SHA-256 of its content.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use rust_decimal::Decimal;
use sha2::{Digest, Sha256};

use super::functions::Func;
use super::ir::{
    next_cache_id, next_memo_id, Axis, CodeList, Ir, ItemTypeIr, KindTest, NameKey, NodeCmp,
    NodeTest, Occurrence, Pred, SetOp, Step,
};
use super::lexical::XsDate;
use super::value::{ArithOp, Atomic, AtomicType, CompOp};
use super::StaticContext;

/// First bytes of a memo file.
const MAGIC: &[u8; 8] = b"INVEXXM1";
/// The XPath compiler's fingerprint (see `engine/build.rs`).
const FINGERPRINT: &str = env!("INVEX_XPATH_FINGERPRINT");
/// A memo file larger than this is not read (and is replaced by a fresh one).
const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;
/// Deepest IR nesting decoded; the compiler's own nesting limit keeps real IR far below.
const MAX_DEPTH: usize = 512;

/// What a key was computed over besides the static context.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Expression,
    Pattern,
}

/// SHA-256 over everything [`super::compile`] reads.
pub(super) type Key = [u8; 32];

pub(super) fn key(kind: Kind, src: &str, sc: &StaticContext) -> Key {
    let mut h = Sha256::new();
    let field = |h: &mut Sha256, b: &[u8]| {
        h.update((b.len() as u64).to_le_bytes());
        h.update(b);
    };
    h.update([match kind {
        Kind::Expression => 0u8,
        Kind::Pattern => 1,
    }]);
    field(&mut h, src.as_bytes());
    h.update((sc.namespaces.len() as u64).to_le_bytes());
    for (p, u) in &sc.namespaces {
        field(&mut h, p.as_bytes());
        field(&mut h, u.as_bytes());
    }
    h.update((sc.variables.len() as u64).to_le_bytes());
    for (name, slot) in &sc.variables {
        field(&mut h, name.as_bytes());
        h.update(slot.to_le_bytes());
    }
    h.update((sc.boolean_variables.len() as u64).to_le_bytes());
    for slot in &sc.boolean_variables {
        h.update(slot.to_le_bytes());
    }
    h.finalize().into()
}

/// The memo of this process: entries read from the file, and those compiled since.
pub struct Memo {
    path: PathBuf,
    bytes: Vec<u8>,
    known: HashMap<Key, Range<usize>>,
    fresh: Mutex<Vec<(Key, Vec<u8>)>>,
    hits: AtomicUsize,
    misses: AtomicUsize,
}

/// How a run used the memo.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoUse {
    /// Expressions taken from the memo.
    pub hits: usize,
    /// Expressions compiled (and added to the memo).
    pub misses: usize,
}

impl Memo {
    /// The memo in `dir` for this build of the compiler. A missing, foreign, damaged or
    /// oversized file gives an empty memo (everything compiles, and the file is rewritten
    /// on [`persist`]); the reason is returned for the caller's log.
    pub fn open(dir: &Path) -> (Memo, Option<String>) {
        let path = dir.join(format!("xpath-{FINGERPRINT}.memo"));
        let mut memo = Memo {
            path,
            bytes: Vec::new(),
            known: HashMap::new(),
            fresh: Mutex::new(Vec::new()),
            hits: AtomicUsize::new(0),
            misses: AtomicUsize::new(0),
        };
        let problem = match read_file(&memo.path) {
            Ok(None) => None,
            Ok(Some((bytes, known))) => {
                memo.bytes = bytes;
                memo.known = known;
                None
            }
            Err(e) => Some(format!("{}: {e}", memo.path.display())),
        };
        (memo, problem)
    }

    /// The file this memo reads and writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Number of entries read from the file.
    pub fn len(&self) -> usize {
        self.known.len()
    }

    pub fn is_empty(&self) -> bool {
        self.known.is_empty()
    }

    fn recall(&self, key: &Key) -> Option<(Ir, u32)> {
        let range = self.known.get(key)?.clone();
        let decoded = self.bytes.get(range).and_then(|b| decode_entry(b).ok());
        match decoded {
            Some(d) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                Some(d)
            }
            None => None,
        }
    }

    fn remember(&self, key: Key, ir: &Ir, locals: u32) {
        self.misses.fetch_add(1, Ordering::Relaxed);
        let mut w = Vec::new();
        put_u32(&mut w, locals);
        encode_ir(&mut w, ir);
        self.fresh
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((key, w));
    }

    fn used(&self) -> MemoUse {
        MemoUse {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
        }
    }

    /// Write the file again when this run compiled something new: the entries read and the
    /// new ones, to a temporary file renamed over the old one (a concurrent reader sees the
    /// old file or the new one, never half of one).
    fn persist(&self) -> io::Result<bool> {
        let fresh = std::mem::take(&mut *self.fresh.lock().unwrap_or_else(|e| e.into_inner()));
        if fresh.is_empty() {
            return Ok(false);
        }
        let mut entries: Vec<(&Key, &[u8])> = self
            .known
            .iter()
            .filter_map(|(k, r)| Some((k, self.bytes.get(r.clone())?)))
            .collect();
        let mut seen: std::collections::HashSet<&Key> = entries.iter().map(|(k, _)| *k).collect();
        for (k, b) in &fresh {
            if seen.insert(k) {
                entries.push((k, b));
            }
        }
        let mut out = Vec::with_capacity(self.bytes.len() + fresh.len() * 256);
        out.extend_from_slice(MAGIC);
        put_u32(&mut out, entries.len() as u32);
        for (k, b) in entries {
            out.extend_from_slice(k);
            put_u32(&mut out, b.len() as u32);
            out.extend_from_slice(b);
        }
        let sum: [u8; 32] = Sha256::digest(&out).into();
        out.extend_from_slice(&sum);
        let dir = self.path.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(dir)?;
        let tmp = dir.join(format!(".xpath-{FINGERPRINT}.{}.tmp", std::process::id()));
        fs::write(&tmp, &out)?;
        fs::rename(&tmp, &self.path).inspect_err(|_| {
            let _ = fs::remove_file(&tmp);
        })?;
        Ok(true)
    }
}

/// A memo file's bytes and where each entry's encoding lies in them.
type Entries = (Vec<u8>, HashMap<Key, Range<usize>>);

fn read_file(path: &Path) -> io::Result<Option<Entries>> {
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if meta.len() > MAX_FILE_BYTES {
        return Err(io::Error::other("larger than a memo file can be; ignored"));
    }
    let bytes = fs::read(path)?;
    let damaged = || io::Error::other("damaged memo file; ignored");
    let body_len = bytes.len().checked_sub(32).ok_or_else(damaged)?;
    let (body, sum) = bytes.split_at(body_len);
    if Sha256::digest(body).as_slice() != sum || !body.starts_with(MAGIC) {
        return Err(damaged());
    }
    let mut r = Reader::new(body);
    r.pos = MAGIC.len();
    let count = r.u32().map_err(|_| damaged())? as usize;
    let mut known = HashMap::with_capacity(count.min(1 << 20));
    for _ in 0..count {
        let key: Key = r
            .take(32)
            .ok()
            .and_then(|k| k.try_into().ok())
            .ok_or_else(damaged)?;
        let len = r.u32().map_err(|_| damaged())? as usize;
        let start = r.pos;
        r.take(len).map_err(|_| damaged())?;
        known.insert(key, start..start + len);
    }
    Ok(Some((bytes, known)))
}

static MEMO: OnceLock<Memo> = OnceLock::new();

/// Make `memo` the memo of every compilation in this process (once; later calls return
/// false and change nothing).
pub fn install(memo: Memo) -> bool {
    MEMO.set(memo).is_ok()
}

/// Whether a memo is installed (keys are computed only then).
pub(super) fn active() -> bool {
    MEMO.get().is_some()
}

pub(super) fn recall(key: &Key) -> Option<(Ir, u32)> {
    MEMO.get()?.recall(key)
}

pub(super) fn remember(key: Key, ir: &Ir, locals: u32) {
    if let Some(m) = MEMO.get() {
        m.remember(key, ir, locals)
    }
}

/// Write the installed memo's file if this run added entries; returns how the run used the
/// memo (`None` when none is installed).
pub fn persist() -> Option<(MemoUse, io::Result<bool>)> {
    let m = MEMO.get()?;
    Some((m.used(), m.persist()))
}

// ---- encoding -------------------------------------------------------------------------

fn put_u32(w: &mut Vec<u8>, v: u32) {
    w.extend_from_slice(&v.to_le_bytes());
}

fn put_str(w: &mut Vec<u8>, s: &str) {
    put_u32(w, s.len() as u32);
    w.extend_from_slice(s.as_bytes());
}

fn put_irs(w: &mut Vec<u8>, irs: &[Ir]) {
    put_u32(w, irs.len() as u32);
    for i in irs {
        encode_ir(w, i);
    }
}

fn put_name(w: &mut Vec<u8>, n: NameKey) {
    put_str(w, n.namespace());
    put_str(w, n.local());
}

fn axis_code(a: Axis) -> u8 {
    match a {
        Axis::Child => 0,
        Axis::Descendant => 1,
        Axis::DescendantOrSelf => 2,
        Axis::Attribute => 3,
        Axis::Self_ => 4,
        Axis::Parent => 5,
        Axis::Ancestor => 6,
        Axis::AncestorOrSelf => 7,
        Axis::FollowingSibling => 8,
        Axis::PrecedingSibling => 9,
        Axis::Following => 10,
        Axis::Preceding => 11,
    }
}

const AXES: [Axis; 12] = [
    Axis::Child,
    Axis::Descendant,
    Axis::DescendantOrSelf,
    Axis::Attribute,
    Axis::Self_,
    Axis::Parent,
    Axis::Ancestor,
    Axis::AncestorOrSelf,
    Axis::FollowingSibling,
    Axis::PrecedingSibling,
    Axis::Following,
    Axis::Preceding,
];

const KINDS: [KindTest; 7] = [
    KindTest::AnyNode,
    KindTest::Document,
    KindTest::Element,
    KindTest::Attribute,
    KindTest::Text,
    KindTest::Comment,
    KindTest::Pi,
];

fn kind_code(k: KindTest) -> u8 {
    KINDS.iter().position(|x| *x == k).unwrap_or(0) as u8
}

const TYPES: [AtomicType; 7] = [
    AtomicType::String,
    AtomicType::Untyped,
    AtomicType::Boolean,
    AtomicType::Integer,
    AtomicType::Decimal,
    AtomicType::Double,
    AtomicType::Date,
];

fn type_code(t: AtomicType) -> u8 {
    TYPES.iter().position(|x| *x == t).unwrap_or(0) as u8
}

const COMPS: [CompOp; 6] = [
    CompOp::Eq,
    CompOp::Ne,
    CompOp::Lt,
    CompOp::Le,
    CompOp::Gt,
    CompOp::Ge,
];

fn comp_code(c: CompOp) -> u8 {
    COMPS.iter().position(|x| *x == c).unwrap_or(0) as u8
}

const ARITHS: [ArithOp; 6] = [
    ArithOp::Add,
    ArithOp::Sub,
    ArithOp::Mul,
    ArithOp::Div,
    ArithOp::IntDiv,
    ArithOp::Mod,
];

fn arith_code(a: ArithOp) -> u8 {
    ARITHS.iter().position(|x| *x == a).unwrap_or(0) as u8
}

const SETS: [SetOp; 3] = [SetOp::Union, SetOp::Intersect, SetOp::Except];
const NODE_CMPS: [NodeCmp; 3] = [NodeCmp::Is, NodeCmp::Precedes, NodeCmp::Follows];
const OCCURRENCES: [Occurrence; 4] = [
    Occurrence::One,
    Occurrence::Optional,
    Occurrence::Many,
    Occurrence::NonEmpty,
];

fn code_of<T: PartialEq>(all: &[T], v: &T) -> u8 {
    all.iter().position(|x| x == v).unwrap_or(0) as u8
}

fn put_atomic(w: &mut Vec<u8>, a: &Atomic) {
    match a {
        Atomic::String(s) => {
            w.push(0);
            put_str(w, s);
        }
        Atomic::Untyped(s) => {
            w.push(1);
            put_str(w, s);
        }
        Atomic::Boolean(b) => {
            w.push(2);
            w.push(*b as u8);
        }
        Atomic::Integer(i) => {
            w.push(3);
            w.extend_from_slice(&i.to_le_bytes());
        }
        Atomic::Decimal(d) => {
            w.push(4);
            w.extend_from_slice(&d.serialize());
        }
        Atomic::Double(f) => {
            w.push(5);
            w.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        Atomic::Date(d) => {
            w.push(6);
            w.extend_from_slice(&d.days_from_ce().to_le_bytes());
            match d.tz_minutes {
                Some(m) => {
                    w.push(1);
                    w.extend_from_slice(&m.to_le_bytes());
                }
                None => w.push(0),
            }
        }
    }
}

fn put_item_type(w: &mut Vec<u8>, t: &ItemTypeIr) {
    match t {
        ItemTypeIr::Item => w.push(0),
        ItemTypeIr::Atomic(a) => {
            w.push(1);
            w.push(type_code(*a));
        }
        ItemTypeIr::AnyAtomic => w.push(2),
        ItemTypeIr::Numeric => w.push(3),
        ItemTypeIr::Kind(k) => {
            w.push(4);
            w.push(kind_code(*k));
        }
    }
}

fn put_test(w: &mut Vec<u8>, t: &NodeTest) {
    match t {
        NodeTest::Name(n) => {
            w.push(0);
            put_name(w, *n);
        }
        NodeTest::AnyName => w.push(1),
        NodeTest::Namespace(ns) => {
            w.push(2);
            put_str(w, ns);
        }
        NodeTest::LocalName(l) => {
            w.push(3);
            put_str(w, l);
        }
        NodeTest::Kind(k) => {
            w.push(4);
            w.push(kind_code(*k));
        }
        NodeTest::KindNamed(k, n) => {
            w.push(5);
            w.push(kind_code(*k));
            put_name(w, *n);
        }
    }
}

fn put_preds(w: &mut Vec<u8>, preds: &[Pred]) {
    put_u32(w, preds.len() as u32);
    for p in preds {
        match p {
            Pred::First => w.push(0),
            Pred::Last => w.push(1),
            Pred::At(n) => {
                w.push(2);
                w.extend_from_slice(&(*n as u64).to_le_bytes());
            }
            Pred::Bool(e) => {
                w.push(3);
                encode_ir(w, e);
            }
            Pred::General(e) => {
                w.push(4);
                encode_ir(w, e);
            }
        }
    }
}

fn put_steps(w: &mut Vec<u8>, steps: &[Step]) {
    put_u32(w, steps.len() as u32);
    for s in steps {
        match s {
            Step::Axis { axis, test, preds } => {
                w.push(0);
                w.push(axis_code(*axis));
                put_test(w, test);
                put_preds(w, preds);
            }
            Step::DescendantNamed {
                name,
                attribute,
                preds,
            } => {
                w.push(1);
                put_name(w, *name);
                w.push(*attribute as u8);
                put_preds(w, preds);
            }
            Step::Expr(e) => {
                w.push(2);
                encode_ir(w, e);
            }
        }
    }
}

fn encode_ir(w: &mut Vec<u8>, ir: &Ir) {
    // Binary nodes share one layout: tag, operator code (if any), two operands.
    let two = |w: &mut Vec<u8>, tag: u8, op: Option<u8>, a: &Ir, b: &Ir| {
        w.push(tag);
        if let Some(op) = op {
            w.push(op);
        }
        encode_ir(w, a);
        encode_ir(w, b);
    };
    let bound = |w: &mut Vec<u8>, tag: u8, slot: u32, a: &Ir, b: &Ir| {
        w.push(tag);
        put_u32(w, slot);
        encode_ir(w, a);
        encode_ir(w, b);
    };
    match ir {
        Ir::Empty => w.push(0),
        Ir::Literal(a) => {
            w.push(1);
            put_atomic(w, a);
        }
        Ir::ContextItem => w.push(2),
        Ir::Root => w.push(3),
        Ir::Global(n) => {
            w.push(4);
            put_u32(w, *n);
        }
        Ir::Local(n) => {
            w.push(5);
            put_u32(w, *n);
        }
        Ir::Seq(v) => {
            w.push(6);
            put_irs(w, v);
        }
        Ir::Path(s, steps) => {
            w.push(7);
            encode_ir(w, s);
            put_steps(w, steps);
        }
        Ir::Filter(b, preds) => {
            w.push(8);
            encode_ir(w, b);
            put_preds(w, preds);
        }
        Ir::Or(a, b) => two(w, 9, None, a, b),
        Ir::And(a, b) => two(w, 10, None, a, b),
        Ir::General(op, a, b) => two(w, 11, Some(comp_code(*op)), a, b),
        Ir::Value(op, a, b) => two(w, 12, Some(comp_code(*op)), a, b),
        Ir::NodeCompare(op, a, b) => two(w, 13, Some(code_of(&NODE_CMPS, op)), a, b),
        Ir::Arith(op, a, b) => two(w, 14, Some(arith_code(*op)), a, b),
        Ir::Negate(a) => {
            w.push(15);
            encode_ir(w, a);
        }
        Ir::Range(a, b) => two(w, 16, None, a, b),
        Ir::Set(op, a, b) => two(w, 17, Some(code_of(&SETS, op)), a, b),
        Ir::Concat(a, b) => two(w, 18, None, a, b),
        Ir::If(a, b, c) => {
            w.push(19);
            encode_ir(w, a);
            encode_ir(w, b);
            encode_ir(w, c);
        }
        Ir::For(s, a, b) => bound(w, 20, *s, a, b),
        Ir::Let(s, a, b) => bound(w, 21, *s, a, b),
        Ir::Some(s, a, b) => bound(w, 22, *s, a, b),
        Ir::Every(s, a, b) => bound(w, 23, *s, a, b),
        Ir::SimpleMap(a, b) => two(w, 24, None, a, b),
        Ir::Call(f, args) => {
            w.push(25);
            put_str(w, f.name());
            put_irs(w, args);
        }
        Ir::Cast(a, t, opt) | Ir::Castable(a, t, opt) => {
            w.push(if matches!(ir, Ir::Cast(..)) { 26 } else { 27 });
            w.push(type_code(*t));
            w.push(*opt as u8);
            encode_ir(w, a);
        }
        Ir::InstanceOf(a, t, o) | Ir::Treat(a, t, o) => {
            w.push(if matches!(ir, Ir::InstanceOf(..)) {
                28
            } else {
                29
            });
            put_item_type(w, t);
            w.push(code_of(&OCCURRENCES, o));
            encode_ir(w, a);
        }
        Ir::InCodeList(list, a) => {
            w.push(30);
            put_str(w, &list.raw);
            encode_ir(w, a);
        }
        Ir::Cached(id, a) => {
            w.push(31);
            put_u32(w, *id);
            encode_ir(w, a);
        }
        Ir::NameMemo(id, a) => {
            w.push(32);
            put_u32(w, *id);
            encode_ir(w, a);
        }
    }
}

// ---- decoding -------------------------------------------------------------------------

#[derive(Debug)]
struct Damaged;

type D<T> = Result<T, Damaged>;

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
    depth: usize,
    /// Cache and memo slots are unique per process: the ids written by another process
    /// are mapped to fresh ones (the same id twice in one entry stays one slot).
    cache_ids: HashMap<u32, u32>,
    memo_ids: HashMap<u32, u32>,
    /// Off only in tests, which compare decoded IR with the original.
    renumber: bool,
}

impl<'a> Reader<'a> {
    fn new(b: &'a [u8]) -> Self {
        Reader {
            b,
            pos: 0,
            depth: 0,
            cache_ids: HashMap::new(),
            memo_ids: HashMap::new(),
            renumber: true,
        }
    }

    fn take(&mut self, n: usize) -> D<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or(Damaged)?;
        let s = self.b.get(self.pos..end).ok_or(Damaged)?;
        self.pos = end;
        Ok(s)
    }

    fn u8(&mut self) -> D<u8> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> D<u32> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().map_err(|_| Damaged)?,
        ))
    }

    fn u64(&mut self) -> D<u64> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().map_err(|_| Damaged)?,
        ))
    }

    fn str(&mut self) -> D<&'a str> {
        let n = self.u32()? as usize;
        std::str::from_utf8(self.take(n)?).map_err(|_| Damaged)
    }

    /// A count of following items, each at least one byte long (so a damaged count cannot
    /// ask for a huge allocation).
    fn count(&mut self) -> D<usize> {
        let n = self.u32()? as usize;
        if n > self.b.len() - self.pos {
            return Err(Damaged);
        }
        Ok(n)
    }

    fn pick<T: Copy>(&mut self, all: &[T]) -> D<T> {
        all.get(self.u8()? as usize).copied().ok_or(Damaged)
    }

    fn name(&mut self) -> D<NameKey> {
        let ns = self.str()?;
        let local = self.str()?;
        Ok(NameKey::intern(ns, local))
    }

    fn boxed(&mut self) -> D<Box<Ir>> {
        Ok(Box::new(self.ir()?))
    }

    fn irs(&mut self) -> D<Vec<Ir>> {
        let n = self.count()?;
        (0..n).map(|_| self.ir()).collect()
    }

    fn atomic(&mut self) -> D<Atomic> {
        Ok(match self.u8()? {
            0 => Atomic::String(Arc::from(self.str()?)),
            1 => Atomic::Untyped(Arc::from(self.str()?)),
            2 => Atomic::Boolean(self.u8()? != 0),
            3 => Atomic::Integer(self.u64()? as i64),
            4 => Atomic::Decimal(Decimal::deserialize(
                self.take(16)?.try_into().map_err(|_| Damaged)?,
            )),
            5 => Atomic::Double(f64::from_bits(self.u64()?)),
            6 => {
                let days = i32::from_le_bytes(self.take(4)?.try_into().map_err(|_| Damaged)?);
                let tz = match self.u8()? {
                    0 => None,
                    _ => Some(i16::from_le_bytes(
                        self.take(2)?.try_into().map_err(|_| Damaged)?,
                    )),
                };
                Atomic::Date(XsDate::from_days_from_ce(days, tz).ok_or(Damaged)?)
            }
            _ => return Err(Damaged),
        })
    }

    fn item_type(&mut self) -> D<ItemTypeIr> {
        Ok(match self.u8()? {
            0 => ItemTypeIr::Item,
            1 => ItemTypeIr::Atomic(self.pick(&TYPES)?),
            2 => ItemTypeIr::AnyAtomic,
            3 => ItemTypeIr::Numeric,
            4 => ItemTypeIr::Kind(self.pick(&KINDS)?),
            _ => return Err(Damaged),
        })
    }

    fn test(&mut self) -> D<NodeTest> {
        Ok(match self.u8()? {
            0 => NodeTest::Name(self.name()?),
            1 => NodeTest::AnyName,
            2 => NodeTest::Namespace(Arc::from(self.str()?)),
            3 => NodeTest::LocalName(Arc::from(self.str()?)),
            4 => NodeTest::Kind(self.pick(&KINDS)?),
            5 => {
                let k = self.pick(&KINDS)?;
                NodeTest::KindNamed(k, self.name()?)
            }
            _ => return Err(Damaged),
        })
    }

    fn preds(&mut self) -> D<Vec<Pred>> {
        let n = self.count()?;
        (0..n)
            .map(|_| {
                Ok(match self.u8()? {
                    0 => Pred::First,
                    1 => Pred::Last,
                    2 => Pred::At(usize::try_from(self.u64()?).map_err(|_| Damaged)?),
                    3 => Pred::Bool(self.ir()?),
                    4 => Pred::General(self.ir()?),
                    _ => return Err(Damaged),
                })
            })
            .collect()
    }

    fn steps(&mut self) -> D<Vec<Step>> {
        let n = self.count()?;
        (0..n)
            .map(|_| {
                Ok(match self.u8()? {
                    0 => {
                        let axis = self.pick(&AXES)?;
                        let test = self.test()?;
                        Step::Axis {
                            axis,
                            test,
                            preds: self.preds()?,
                        }
                    }
                    1 => {
                        let name = self.name()?;
                        let attribute = self.u8()? != 0;
                        Step::DescendantNamed {
                            name,
                            attribute,
                            preds: self.preds()?,
                        }
                    }
                    2 => Step::Expr(self.ir()?),
                    _ => return Err(Damaged),
                })
            })
            .collect()
    }

    fn ir(&mut self) -> D<Ir> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Damaged);
        }
        let ir = self.ir_body();
        self.depth -= 1;
        ir
    }

    fn ir_body(&mut self) -> D<Ir> {
        Ok(match self.u8()? {
            0 => Ir::Empty,
            1 => Ir::Literal(self.atomic()?),
            2 => Ir::ContextItem,
            3 => Ir::Root,
            4 => Ir::Global(self.u32()?),
            5 => Ir::Local(self.u32()?),
            6 => Ir::Seq(self.irs()?),
            7 => {
                let s = self.boxed()?;
                Ir::Path(s, self.steps()?)
            }
            8 => {
                let b = self.boxed()?;
                Ir::Filter(b, self.preds()?)
            }
            9 => Ir::Or(self.boxed()?, self.boxed()?),
            10 => Ir::And(self.boxed()?, self.boxed()?),
            11 => Ir::General(self.pick(&COMPS)?, self.boxed()?, self.boxed()?),
            12 => Ir::Value(self.pick(&COMPS)?, self.boxed()?, self.boxed()?),
            13 => Ir::NodeCompare(self.pick(&NODE_CMPS)?, self.boxed()?, self.boxed()?),
            14 => Ir::Arith(self.pick(&ARITHS)?, self.boxed()?, self.boxed()?),
            15 => Ir::Negate(self.boxed()?),
            16 => Ir::Range(self.boxed()?, self.boxed()?),
            17 => Ir::Set(self.pick(&SETS)?, self.boxed()?, self.boxed()?),
            18 => Ir::Concat(self.boxed()?, self.boxed()?),
            19 => Ir::If(self.boxed()?, self.boxed()?, self.boxed()?),
            20 => Ir::For(self.u32()?, self.boxed()?, self.boxed()?),
            21 => Ir::Let(self.u32()?, self.boxed()?, self.boxed()?),
            22 => Ir::Some(self.u32()?, self.boxed()?, self.boxed()?),
            23 => Ir::Every(self.u32()?, self.boxed()?, self.boxed()?),
            24 => Ir::SimpleMap(self.boxed()?, self.boxed()?),
            25 => {
                let f = Func::by_name(self.str()?).ok_or(Damaged)?;
                Ir::Call(f, self.irs()?)
            }
            tag @ (26 | 27) => {
                let t = self.pick(&TYPES)?;
                let opt = self.u8()? != 0;
                let a = self.boxed()?;
                if tag == 26 {
                    Ir::Cast(a, t, opt)
                } else {
                    Ir::Castable(a, t, opt)
                }
            }
            tag @ (28 | 29) => {
                let t = self.item_type()?;
                let o = self.pick(&OCCURRENCES)?;
                let a = self.boxed()?;
                if tag == 28 {
                    Ir::InstanceOf(a, t, o)
                } else {
                    Ir::Treat(a, t, o)
                }
            }
            30 => {
                let list = Arc::new(CodeList::new(self.str()?));
                Ir::InCodeList(list, self.boxed()?)
            }
            31 => {
                let old = self.u32()?;
                let id = match self.renumber {
                    true => *self.cache_ids.entry(old).or_insert_with(next_cache_id),
                    false => old,
                };
                Ir::Cached(id, self.boxed()?)
            }
            32 => {
                let old = self.u32()?;
                let id = match self.renumber {
                    true => *self.memo_ids.entry(old).or_insert_with(next_memo_id),
                    false => old,
                };
                Ir::NameMemo(id, self.boxed()?)
            }
            _ => return Err(Damaged),
        })
    }
}

/// One entry: the locals count, then the IR, and nothing after it.
fn decode_entry(b: &[u8]) -> D<(Ir, u32)> {
    decode_with(Reader::new(b))
}

fn decode_with(mut r: Reader) -> D<(Ir, u32)> {
    let locals = r.u32()?;
    let ir = r.ir()?;
    if r.pos != r.b.len() {
        return Err(Damaged);
    }
    Ok((ir, locals))
}

/// Whether `ir` survives encoding and decoding unchanged (slots kept, so that the decoded
/// IR can be compared with the original), and whether every strict prefix of its entry is
/// refused as damaged.
#[cfg(test)]
pub(super) fn round_trips(ir: &Ir, locals: u32) -> Result<(), String> {
    let mut w = Vec::new();
    put_u32(&mut w, locals);
    encode_ir(&mut w, ir);
    let mut r = Reader::new(&w);
    r.renumber = false;
    let (back, l) = decode_with(r).map_err(|_| "the entry does not decode".to_string())?;
    if l != locals || format!("{back:?}") != format!("{ir:?}") {
        return Err(format!("decoded differently:\n{back:?}\n{ir:?}"));
    }
    for cut in [0, 1, w.len() / 2, w.len() - 1] {
        if decode_entry(&w[..cut]).is_ok() {
            return Err(format!("a prefix of {cut} bytes decoded"));
        }
    }
    Ok(())
}
