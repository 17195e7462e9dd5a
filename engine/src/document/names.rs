//! Name interning, QName syntax checks and the hash function used by the parser's maps.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

use super::QName;

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

const M1: u64 = 0xa076_1d64_78bd_642f;
const M2: u64 = 0xe703_7ed1_a0b4_28db;
const M3: u64 = 0x8ebc_6af0_9c88_c6e3;

impl Hasher for SeededHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.acc = self.acc.wrapping_add(bytes.len() as u64);
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.acc = fold_mul(self.acc ^ u64::from_le_bytes(w), self.key ^ M1);
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.acc = fold_mul(self.acc ^ u64::from_le_bytes(w), self.key ^ M2);
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64);
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

pub(super) fn fast_map<K, V>() -> FastMap<K, V> {
    HashMap::with_hasher(SeededState::new())
}

/// A [`fast_map`] with room for `n` entries (no rehashing while it fills up to `n`).
pub(super) fn fast_map_with_capacity<K, V>(n: usize) -> FastMap<K, V> {
    HashMap::with_capacity_and_hasher(n, SeededState::new())
}

/// Names interned by (namespace URI, local name); the first prefix seen is kept.
pub(super) struct NameTable {
    qnames: Vec<QName>,
    by_ns: FastMap<Box<str>, FastMap<Box<str>, u32>>,
    /// Initial room of each namespace's table of local names.
    local_capacity: usize,
}

impl NameTable {
    /// Room for about `n` names, so that interning them does not regrow the tables.
    pub(super) fn with_capacity(n: usize) -> Self {
        NameTable {
            qnames: Vec::with_capacity(n),
            by_ns: fast_map(),
            local_capacity: n,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.qnames.len()
    }

    pub(super) fn get(&self, id: u32) -> &QName {
        &self.qnames[id as usize]
    }

    /// The local-name table of one namespace (None: no name of the document is in it).
    pub(super) fn namespace(&self, ns: &str) -> Option<&FastMap<Box<str>, u32>> {
        self.by_ns.get(ns)
    }

    pub(super) fn lookup(&self, ns: &str, local: &str) -> Option<u32> {
        self.by_ns.get(ns)?.get(local).copied()
    }

    /// Returns the id and whether it was newly created.
    pub(super) fn intern(&mut self, ns: &str, local: &str, prefix: &str) -> (u32, bool) {
        // One look-up of the namespace's table serves both the search and the insertion
        // (the entry API would hash the long URI again and allocate a key for every new
        // name, though the namespace is nearly always known already).
        let id = self.qnames.len() as u32;
        let locals = match self.by_ns.get_mut(ns) {
            Some(locals) => {
                if let Some(&known) = locals.get(local) {
                    return (known, false);
                }
                locals
            }
            None => self
                .by_ns
                .entry(Box::from(ns))
                .or_insert_with(|| fast_map_with_capacity(self.local_capacity)),
        };
        locals.insert(Box::from(local), id);
        self.qnames.push(QName {
            namespace: ns.to_owned(),
            local: local.to_owned(),
            prefix: prefix.to_owned(),
        });
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
