//! Name interning, QName syntax checks and the hash function used by the parser's maps.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

use super::shared::{SharedName, SharedNames, NAMESPACE_LIMIT};
use super::{QName, NONE};

pub(super) const XML_NS: &str = "http://www.w3.org/XML/1998/namespace";
pub(super) const XMLNS_NS: &str = "http://www.w3.org/2000/xmlns/";

/// A fast keyed hash (folded 64×64→128-bit multiplies) with per-table random keys, so that
/// attacker-chosen names cannot be pre-computed to collide.
#[derive(Clone, Debug)]
pub(super) struct SeededState {
    k0: u64,
    k1: u64,
}

impl SeededState {
    pub(super) fn new() -> Self {
        let rs = std::collections::hash_map::RandomState::new();
        let k0 = rs.hash_one(0x243f_6a88_85a3_08d3_u64);
        let k1 = rs.hash_one(0x1319_8a2e_0370_7344_u64) | 1;
        SeededState { k0, k1 }
    }

    /// The hash of `bytes` within group `group` (for keys of one table made of a small
    /// number and a string, without a separate step for the number).
    #[inline]
    pub(super) fn hash_in(&self, group: u32, bytes: &[u8]) -> u64 {
        let mut h = SeededHasher {
            acc: self.k0 ^ (group as u64).wrapping_mul(M3),
            key: self.k1,
        };
        h.write(bytes);
        h.finish()
    }
}

impl BuildHasher for SeededState {
    type Hasher = SeededHasher;
    #[inline]
    fn build_hasher(&self) -> SeededHasher {
        SeededHasher {
            acc: self.k0,
            key: self.k1,
        }
    }
}

pub(super) struct SeededHasher {
    acc: u64,
    key: u64,
}

#[inline]
fn fold_mul(a: u64, b: u64) -> u64 {
    let p = (a as u128).wrapping_mul(b as u128);
    (p as u64) ^ ((p >> 64) as u64)
}

#[inline]
fn le64(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(b);
    u64::from_le_bytes(w)
}

#[inline]
fn le32(b: &[u8]) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(b);
    u32::from_le_bytes(w)
}

const M1: u64 = 0xa076_1d64_78bd_642f;
const M2: u64 = 0xe703_7ed1_a0b4_28db;
const M3: u64 = 0x8ebc_6af0_9c88_c6e3;

impl Hasher for SeededHasher {
    #[inline(always)]
    fn write(&mut self, bytes: &[u8]) {
        // The length is mixed in, so the last word may overlap the previous one (and short
        // inputs may be read as two overlapping halves): no byte-by-byte tail.
        let n = bytes.len();
        self.acc = self.acc.wrapping_add(n as u64);
        if n > 8 {
            let mut i = 0;
            while i + 8 < n {
                self.acc = fold_mul(self.acc ^ le64(&bytes[i..i + 8]), self.key ^ M1);
                i += 8;
            }
            self.acc = fold_mul(self.acc ^ le64(&bytes[n - 8..]), self.key ^ M2);
        } else if n >= 4 {
            let w = (le32(&bytes[..4]) as u64) << 32 | le32(&bytes[n - 4..]) as u64;
            self.acc = fold_mul(self.acc ^ w, self.key ^ M2);
        } else if n > 0 {
            let w = bytes[0] as u64 | (bytes[n / 2] as u64) << 8 | (bytes[n - 1] as u64) << 16;
            self.acc = fold_mul(self.acc ^ w, self.key ^ M2);
        }
    }
    /// `str` keys end with a 0xFF byte, which the mixed-in length already makes redundant:
    /// folded into the state without a multiply.
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.acc ^= i as u64;
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.acc = fold_mul(self.acc ^ i, self.key ^ M3);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        fold_mul(self.acc, self.key ^ M1)
    }
}

pub(super) type FastMap<K, V> = HashMap<K, V, SeededState>;

/// The local names of one namespace of a document (names not in the shared table).
pub(super) type LocalNames = FastMap<Box<str>, u32>;

/// A document's name: the process-wide copy when the name is shared, else its own.
enum NameRef {
    Shared(&'static QName),
    Own(Box<QName>),
}

/// Names interned by (namespace URI, local name); the first prefix seen is kept.
///
/// Shared names are found by their expanded-name id, so a document needs no map for them;
/// its own names (those the shared table had no room for) are in per-namespace maps. An
/// expanded name can be in both places when another document shared it meanwhile; then the
/// id from the maps is recorded under the expanded id too, so both find the same name.
pub(super) struct NameTable {
    qnames: Vec<NameRef>,
    /// Expanded-name id → id in this document (`NONE`: not in it).
    by_expanded: Vec<u32>,
    /// Bit per shared namespace that some name of the document is in.
    shared_namespaces: u128,
    /// Namespace URI → local name → id, for names found by their strings.
    own: FastMap<Box<str>, LocalNames>,
    /// Keys of this document's maps, drawn once per document.
    state: SeededState,
    shared: &'static SharedNames,
}

/// The names of one namespace of a document (see [`NameTable::namespace`]).
#[derive(Clone, Copy)]
pub(super) struct Namespace<'t> {
    table: &'t NameTable,
    /// Index in the shared table, if some shared name of the document is in it.
    shared: Option<u32>,
    own: Option<&'t LocalNames>,
}

impl Namespace<'_> {
    #[inline]
    pub(super) fn lookup(self, local: &str) -> Option<u32> {
        if let Some(ns) = self.shared {
            if let Some(e) = self.table.shared.find_expanded(ns, local) {
                match self.table.by_expanded.get(e as usize) {
                    Some(&id) if id != NONE => return Some(id),
                    _ => {}
                }
            }
        }
        self.own?.get(local).copied()
    }
}

impl NameTable {
    /// Room for about `n` names, so that interning them does not regrow the name list.
    pub(super) fn with_capacity(
        n: usize,
        state: SeededState,
        shared: &'static SharedNames,
    ) -> Self {
        NameTable {
            qnames: Vec::with_capacity(n),
            by_expanded: Vec::new(),
            shared_namespaces: 0,
            own: HashMap::with_hasher(state.clone()),
            state,
            shared,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.qnames.len()
    }

    pub(super) fn get(&self, id: u32) -> &QName {
        match &self.qnames[id as usize] {
            NameRef::Shared(q) => q,
            NameRef::Own(q) => q,
        }
    }

    /// The names of one namespace (None: no name of the document is in it).
    pub(super) fn namespace(&self, uri: &str) -> Option<Namespace<'_>> {
        let shared = match self.shared_namespaces {
            0 => None,
            bits => self
                .shared
                .find_namespace(uri)
                .filter(|&ns| bits & (1u128 << ns) != 0),
        };
        let own = self.own.get(uri);
        if shared.is_none() && own.is_none() {
            return None;
        }
        Some(Namespace {
            table: self,
            shared,
            own,
        })
    }

    pub(super) fn lookup(&self, ns: &str, local: &str) -> Option<u32> {
        self.namespace(ns)?.lookup(local)
    }

    /// The id of expanded name `e`, if the document has it.
    #[inline]
    fn by_expanded(&self, e: u32) -> Option<u32> {
        self.by_expanded
            .get(e as usize)
            .copied()
            .filter(|&id| id != NONE)
    }

    fn set_expanded(&mut self, e: u32, namespace: u32, id: u32) {
        let e = e as usize;
        if e >= self.by_expanded.len() {
            self.by_expanded.resize(e + 1, NONE);
        }
        self.by_expanded[e] = id;
        self.shared_namespaces |= 1u128 << (namespace % NAMESPACE_LIMIT);
    }

    /// The id of one of the document's own names.
    fn own_name(&self, uri: &str, local: &str) -> Option<u32> {
        if self.own.is_empty() {
            return None;
        }
        self.own.get(uri)?.get(local).copied()
    }

    /// Interns a shared name; returns the id and whether it was newly created.
    #[inline]
    pub(super) fn intern_shared(&mut self, name: &'static SharedName) -> (u32, bool) {
        let e = name.expanded();
        if let Some(id) = self.by_expanded(e) {
            return (id, false);
        }
        let q = name.qname();
        if let Some(id) = self.own_name(&q.namespace, &q.local) {
            self.set_expanded(e, name.namespace(), id);
            return (id, false);
        }
        let id = self.qnames.len() as u32;
        self.qnames.push(NameRef::Shared(q));
        self.set_expanded(e, name.namespace(), id);
        (id, true)
    }

    /// Interns a name that is not shared; `shared_ns` is its namespace's index in the
    /// shared table, if it has one.
    pub(super) fn intern(
        &mut self,
        shared_ns: Option<u32>,
        uri: &str,
        local: &str,
        prefix: &str,
    ) -> (u32, bool) {
        let expanded = shared_ns.and_then(|ns| Some((ns, self.shared.find_expanded(ns, local)?)));
        if let Some((_, e)) = expanded {
            if let Some(id) = self.by_expanded(e) {
                return (id, false);
            }
        }
        if let Some(id) = self.own_name(uri, local) {
            if let Some((ns, e)) = expanded {
                self.set_expanded(e, ns, id);
            }
            return (id, false);
        }
        let id = self.qnames.len() as u32;
        self.qnames.push(NameRef::Own(Box::new(QName {
            namespace: uri.to_owned(),
            local: local.to_owned(),
            prefix: prefix.to_owned(),
        })));
        match expanded {
            Some((ns, e)) => self.set_expanded(e, ns, id),
            None => {
                if let Some(locals) = self.own.get_mut(uri) {
                    locals.insert(Box::from(local), id);
                } else {
                    let mut locals = HashMap::with_hasher(self.state.clone());
                    locals.insert(Box::from(local), id);
                    self.own.insert(Box::from(uri), locals);
                }
            }
        }
        (id, true)
    }
}

#[inline]
fn is_name_start_byte(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

#[inline]
pub(super) fn is_name_byte(b: u8) -> bool {
    is_name_start_byte(b) || b.is_ascii_digit() || b == b'-' || b == b'.'
}

/// Checks the NCName production (non-ASCII characters are accepted without
/// classification).
pub(super) fn is_ncname(s: &str) -> bool {
    let b = s.as_bytes();
    match b.first() {
        Some(&f) if is_name_start_byte(f) => b[1..].iter().all(|&c| is_name_byte(c)),
        _ => false,
    }
}

/// Splits a QName into (prefix, local); prefix is "" when absent. `None`: not a QName.
pub(super) fn split_qname(s: &str) -> Option<(&str, &str)> {
    match s.find(':') {
        None => is_ncname(s).then_some(("", s)),
        Some(i) => {
            let (prefix, local) = (&s[..i], &s[i + 1..]);
            (is_ncname(prefix) && is_ncname(local)).then_some((prefix, local))
        }
    }
}
