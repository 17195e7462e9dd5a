//! A process-wide table of the names documents keep using (an invoice format has a few
//! hundred), so that parsing a document neither re-checks nor allocates and frees them,
//! and needs no map of its own to tell them apart.
//!
//! Entries are only ever added, each slot once, so readers need no lock. Everything is
//! bounded: at most [`MAX_NAMES`] names as written, as many expanded names (so documents
//! can index a table by their ids), and
//! [`MAX_NAMESPACES`] URIs, [`MAX_BYTES`] bytes in all, and only short ones; a name that
//! does not fit simply stays per document.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use super::names::SeededState;
use super::QName;

const NAME_SLOTS: usize = 4096;
const MAX_NAMES: usize = NAME_SLOTS / 2;
const NAMESPACE_SLOTS: usize = 128;
const MAX_NAMESPACES: usize = NAMESPACE_SLOTS / 2;
/// Longest raw QName (`prefix:local`) and namespace URI that are shared.
const MAX_RAW_LEN: usize = 128;
const MAX_URI_LEN: usize = 512;
/// Budget for the strings plus a per-entry allowance for the allocations around them.
const MAX_BYTES: usize = 1 << 20;
const ENTRY_OVERHEAD: usize = 160;
/// Probes per look-up: the tables stay at most half full, so a longer run means the key is
/// absent (or an unlucky one, which is then just not shared). This also bounds the work
/// for keys crafted to collide.
const MAX_PROBES: usize = 8;

/// Namespace indexes are below this (documents keep a bit per shared namespace).
pub(super) const NAMESPACE_LIMIT: u32 = NAMESPACE_SLOTS as u32;

/// A name as written in some namespace.
pub(super) struct SharedName {
    namespace: u32,
    /// The name as written (`prefix:local` or `local`).
    raw: Box<str>,
    /// Id of the expanded name (namespace, local name); names written with different
    /// prefixes share it.
    expanded: u32,
    qname: QName,
}

impl SharedName {
    pub(super) fn qname(&self) -> &QName {
        &self.qname
    }

    pub(super) fn namespace(&self) -> u32 {
        self.namespace
    }

    pub(super) fn expanded(&self) -> u32 {
        self.expanded
    }
}

struct Namespace {
    uri: Box<str>,
}

struct Expanded {
    namespace: u32,
    local: Box<str>,
    id: u32,
}

/// A fixed array of slots, each filled at most once, probed linearly from a hash.
struct Slots<T> {
    slots: Box<[OnceLock<Box<T>>]>,
}

impl<T> Slots<T> {
    fn new(n: usize) -> Self {
        Slots {
            slots: (0..n).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The entry that `is` accepts, searched from hash `h`.
    #[inline]
    fn find(&self, h: u64, is: impl Fn(&T) -> bool) -> Option<(usize, &T)> {
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        for _ in 0..MAX_PROBES {
            // Slots fill in probe order and never empty, so an empty one ends the search.
            let e = self.slots[i].get()?;
            if is(e) {
                return Some((i, e));
            }
            i = (i + 1) & mask;
        }
        None
    }

    /// Stores `entry` in the first free slot from hash `h`, unless an entry that `is`
    /// accepts comes first. Returns the accepted entry (None: no room) and whether it is
    /// `entry`.
    fn insert(&self, h: u64, entry: Box<T>, is: impl Fn(&T) -> bool) -> Option<(usize, &T, bool)> {
        let mut entry = Some(entry);
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        for _ in 0..MAX_PROBES {
            let slot = &self.slots[i];
            if slot.get().is_none() {
                if let Some(e) = entry.take() {
                    // On a race the entry comes back, and the winner is compared below.
                    entry = slot.set(e).err();
                }
            }
            if let Some(e) = slot.get() {
                if is(e) {
                    return Some((i, e, entry.is_none()));
                }
            }
            i = (i + 1) & mask;
        }
        None
    }
}

pub(super) struct SharedNames {
    state: SeededState,
    namespaces: Slots<Namespace>,
    expanded: Slots<Expanded>,
    names: Slots<SharedName>,
    namespace_count: AtomicUsize,
    /// Next expanded-name id: only ever increases, so ids are unique (one lost in a race
    /// is simply not used).
    next_expanded: AtomicUsize,
    name_count: AtomicUsize,
    bytes: AtomicUsize,
}

static SHARED: OnceLock<SharedNames> = OnceLock::new();

/// The process-wide table (created on first use).
pub(super) fn shared() -> &'static SharedNames {
    SHARED.get_or_init(|| SharedNames {
        state: SeededState::new(),
        namespaces: Slots::new(NAMESPACE_SLOTS),
        expanded: Slots::new(NAME_SLOTS),
        names: Slots::new(NAME_SLOTS),
        namespace_count: AtomicUsize::new(0),
        next_expanded: AtomicUsize::new(0),
        name_count: AtomicUsize::new(0),
        bytes: AtomicUsize::new(0),
    })
}

/// The limits on namespaces, names and bytes (for tests).
#[cfg(test)]
pub(super) const LIMITS: (usize, usize, usize) = (MAX_NAMESPACES, MAX_NAMES, MAX_BYTES);

#[cfg(test)]
impl SharedNames {
    /// Namespaces, names and bytes in use.
    pub(super) fn usage(&self) -> (usize, usize, usize) {
        let count = |c: &AtomicUsize| c.load(Ordering::Relaxed);
        (
            count(&self.namespace_count),
            count(&self.name_count),
            count(&self.bytes),
        )
    }
}

/// Takes `amount` from a budget of `max` (false: it would be exceeded).
fn reserve(counter: &AtomicUsize, amount: usize, max: usize) -> bool {
    counter
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
            used.checked_add(amount).filter(|&n| n <= max)
        })
        .is_ok()
}

fn release(counter: &AtomicUsize, amount: usize) {
    counter.fetch_sub(amount, Ordering::Relaxed);
}

impl SharedNames {
    /// Keys: a URI (in no namespace), or a name in a namespace.
    #[inline]
    fn hash(&self, namespace: Option<u32>, s: &str) -> u64 {
        self.state
            .hash_in(namespace.map_or(u32::MAX, |ns| ns), s.as_bytes())
    }

    /// The index of a namespace URI, if it is shared.
    pub(super) fn find_namespace(&self, uri: &str) -> Option<u32> {
        let h = self.hash(None, uri);
        self.namespaces
            .find(h, |n| *n.uri == *uri)
            .map(|(i, _)| i as u32)
    }

    /// Index and shared copy of a namespace URI, added if there is room (None: not shared).
    pub(super) fn namespace(&'static self, uri: &str) -> Option<(u32, &'static str)> {
        let h = self.hash(None, uri);
        let is = |n: &Namespace| *n.uri == *uri;
        if let Some((i, n)) = self.namespaces.find(h, is) {
            return Some((i as u32, &n.uri));
        }
        if uri.len() > MAX_URI_LEN || !reserve(&self.namespace_count, 1, MAX_NAMESPACES) {
            return None;
        }
        let size = uri.len() + ENTRY_OVERHEAD;
        if !reserve(&self.bytes, size, MAX_BYTES) {
            release(&self.namespace_count, 1);
            return None;
        }
        let entry = Box::new(Namespace {
            uri: Box::from(uri),
        });
        let found = self.namespaces.insert(h, entry, is);
        if !found.is_some_and(|(_, _, stored)| stored) {
            // Another thread's copy won, or there is no free slot in reach.
            release(&self.namespace_count, 1);
            release(&self.bytes, size);
        }
        found.map(|(i, n, _)| (i as u32, &*n.uri))
    }

    /// The id of the expanded name {namespace}local, if it is shared.
    #[inline]
    pub(super) fn find_expanded(&self, namespace: u32, local: &str) -> Option<u32> {
        let h = self.hash(Some(namespace), local);
        self.expanded
            .find(h, |e| e.namespace == namespace && *e.local == *local)
            .map(|(_, e)| e.id)
    }

    /// The id of the expanded name {namespace}local, added if there is room.
    fn expanded_id(&'static self, namespace: u32, local: &str) -> Option<u32> {
        let h = self.hash(Some(namespace), local);
        let is = |e: &Expanded| e.namespace == namespace && *e.local == *local;
        if let Some((_, e)) = self.expanded.find(h, is) {
            return Some(e.id);
        }
        let size = local.len() + ENTRY_OVERHEAD;
        if !reserve(&self.bytes, size, MAX_BYTES) {
            return None;
        }
        let id = self.next_expanded.fetch_add(1, Ordering::Relaxed);
        if id >= MAX_NAMES {
            release(&self.bytes, size);
            return None;
        }
        let entry = Box::new(Expanded {
            namespace,
            local: Box::from(local),
            id: id as u32,
        });
        let found = self.expanded.insert(h, entry, is);
        if !found.is_some_and(|(_, _, stored)| stored) {
            release(&self.bytes, size);
        }
        found.map(|(_, e, _)| e.id)
    }

    /// The name written `raw` in namespace `namespace` (an index from [`Self::namespace`]),
    /// if it has been shared. Only valid names are ever added, so a hit needs no checks.
    pub(super) fn lookup(&'static self, namespace: u32, raw: &str) -> Option<&'static SharedName> {
        let h = self.hash(Some(namespace), raw);
        self.names
            .find(h, |e| e.namespace == namespace && *e.raw == *raw)
            .map(|(_, e)| e)
    }

    /// Shares a checked name (None: no room). `uri` is the namespace's shared copy.
    pub(super) fn insert(
        &'static self,
        namespace: u32,
        uri: &str,
        raw: &str,
        prefix: &str,
        local: &str,
    ) -> Option<&'static SharedName> {
        if raw.len() > MAX_RAW_LEN {
            return None;
        }
        let expanded = self.expanded_id(namespace, local)?;
        let size = 2 * raw.len() + uri.len() + ENTRY_OVERHEAD;
        if !reserve(&self.name_count, 1, MAX_NAMES) {
            return None;
        }
        if !reserve(&self.bytes, size, MAX_BYTES) {
            release(&self.name_count, 1);
            return None;
        }
        let entry = Box::new(SharedName {
            namespace,
            raw: Box::from(raw),
            expanded,
            qname: QName {
                namespace: uri.to_owned(),
                local: local.to_owned(),
                prefix: prefix.to_owned(),
            },
        });
        let h = self.hash(Some(namespace), raw);
        let found = self
            .names
            .insert(h, entry, |e| e.namespace == namespace && *e.raw == *raw);
        if !found.is_some_and(|(_, _, stored)| stored) {
            release(&self.name_count, 1);
            release(&self.bytes, size);
        }
        found.map(|(_, e, _)| e)
    }
}
