//! client-go's queues between the reflector and the store (`tools/cache`, v0.35).
//!
//! The reflector adds a delta for every event and, at the end of a (re)list, `Replace`s the
//! whole state; the informer's process loop pops what is queued, updates the store and
//! notifies the handlers. The two queues differ in what they keep:
//! - [`QueueKind::DeltaFifo`]: a key is queued once, with the list of its deltas since it
//!   was last popped; popping hands the whole list on. Only two consecutive deletes of a
//!   key are merged (`dedupDeltas`).
//! - [`QueueKind::RealFifo`]: every delta on its own, in the order it came (`RealFIFO`,
//!   client-go's default since v0.33 via `InOrderInformers`).
//!
//! Both hold objects as [`Stored`] clones: the store's own allocations, shared, as client-go
//! queues pointers. What a queue costs of its own is its containers: [`Queue::heap_bytes`].

use measure::FixedState;
use std::collections::{HashMap, HashSet, VecDeque};
use std::mem::size_of;

use super::key::ObjectKey;
use super::store::{Store, Stored};
use scenario::QueueKind;

/// What happened to an object (client-go's `DeltaType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DeltaType {
    /// ADDED or MODIFIED from the watch.
    Updated,
    /// DELETED from the watch.
    Deleted,
    /// An item of a (re)list's `Replace`.
    Replaced,
    /// Re-queued by a resync.
    Sync,
    /// A key the store knew that a relist no longer has: a tombstone whose object is the
    /// last state the informer saw (`DeletedFinalStateUnknown`).
    DeletedFinalStateUnknown,
}

impl DeltaType {
    fn is_delete(self) -> bool {
        matches!(
            self,
            DeltaType::Deleted | DeltaType::DeletedFinalStateUnknown
        )
    }
}

/// One queued change.
#[derive(Debug)]
pub struct Delta<K> {
    /// What happened.
    pub kind: DeltaType,
    /// The object as it is now (for a delete, its last state).
    pub object: Stored<K>,
}

/// What one pop hands the process loop: a key and its deltas, oldest first.
#[derive(Debug)]
pub enum Popped<K> {
    /// A DeltaFIFO key with every delta queued for it.
    Many(ObjectKey, Vec<Delta<K>>),
    /// A RealFIFO entry.
    One(ObjectKey, Delta<K>),
}

impl<K> Popped<K> {
    /// The key and its deltas, oldest first.
    pub fn into_parts(self) -> (ObjectKey, impl Iterator<Item = Delta<K>>) {
        // One iterator type for both; an empty `Vec` allocates nothing.
        match self {
            Popped::Many(key, deltas) => (key, deltas.into_iter().chain(None)),
            Popped::One(key, delta) => (key, Vec::new().into_iter().chain(Some(delta))),
        }
    }
}

/// A DeltaFIFO or a RealFIFO.
#[derive(Debug)]
pub struct Queue<K> {
    kind: QueueKind,
    /// DeltaFIFO: keys in the order they were first queued.
    order: VecDeque<ObjectKey>,
    /// DeltaFIFO: each queued key's deltas.
    items: HashMap<ObjectKey, Vec<Delta<K>>, FixedState>,
    /// RealFIFO: every delta in order.
    log: VecDeque<(ObjectKey, Delta<K>)>,
    /// RealFIFO: how many deltas of each key are queued.
    queued: HashMap<ObjectKey, u32, FixedState>,
    /// The first `Replace` has happened.
    populated: bool,
    /// Pops left before the first `Replace`'s items have all been handed on.
    initial_population: u64,
    /// Heap of the keys and delta lists, kept as entries come and go.
    own_bytes: usize,
}

impl<K> Queue<K> {
    /// An empty queue of `kind`.
    pub fn new(kind: QueueKind) -> Queue<K> {
        Queue {
            kind,
            order: VecDeque::new(),
            items: HashMap::default(),
            log: VecDeque::new(),
            queued: HashMap::default(),
            populated: false,
            initial_population: 0,
            own_bytes: 0,
        }
    }

    /// Which queue this is.
    pub fn kind(&self) -> QueueKind {
        self.kind
    }

    /// Entries waiting: keys (DeltaFIFO) or deltas (RealFIFO).
    pub fn len(&self) -> usize {
        match self.kind {
            QueueKind::DeltaFifo => self.order.len(),
            QueueKind::RealFifo => self.log.len(),
        }
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first `Replace`'s items have all been popped (`HasSynced`).
    pub fn has_synced(&self) -> bool {
        self.populated && self.initial_population == 0
    }

    /// Queues one delta of `key`.
    pub fn add(&mut self, kind: DeltaType, key: ObjectKey, object: Stored<K>) {
        let delta = Delta { kind, object };
        match self.kind {
            QueueKind::DeltaFifo => match self.items.get_mut(&key) {
                Some(deltas) => {
                    // `dedupDeltas`: of two consecutive deletes, one is kept: the newer,
                    // unless it is only a tombstone.
                    if let Some(last) = deltas.last_mut()
                        && last.kind.is_delete()
                        && delta.kind.is_delete()
                    {
                        if delta.kind != DeltaType::DeletedFinalStateUnknown {
                            *last = delta;
                        }
                        return;
                    }
                    let before = deltas.capacity();
                    deltas.push(delta);
                    self.own_bytes += (deltas.capacity() - before) * size_of::<Delta<K>>();
                }
                None => {
                    // The key is held twice: in the order and in the table.
                    self.own_bytes += 2 * key.heap_bytes() + size_of::<Delta<K>>();
                    self.order.push_back(key.clone());
                    self.items.insert(key, vec![delta]);
                }
            },
            QueueKind::RealFifo => {
                self.own_bytes += key.heap_bytes();
                match self.queued.get_mut(&key) {
                    Some(n) => *n += 1,
                    None => {
                        self.own_bytes += key.heap_bytes();
                        self.queued.insert(key.clone(), 1);
                    }
                }
                self.log.push_back((key, delta));
            }
        }
    }

    /// Whether deltas of `key` are waiting, and whether the newest is a delete.
    fn waiting(&self, key: &ObjectKey) -> Option<bool> {
        match self.kind {
            QueueKind::DeltaFifo => self
                .items
                .get(key)
                .and_then(|d| d.last())
                .map(|d| d.kind.is_delete()),
            QueueKind::RealFifo => self.queued.contains_key(key).then(|| {
                self.log
                    .iter()
                    .rev()
                    .find(|(k, _)| k == key)
                    .is_some_and(|(_, d)| d.kind.is_delete())
            }),
        }
    }

    /// A (re)list's state (`Replace`): every item as a Replaced delta, then a tombstone for
    /// every key the store or the queue has that the list lacks.
    pub fn replace(&mut self, items: Vec<(ObjectKey, Stored<K>)>, store: &Store<K>)
    where
        K: kube::Resource,
    {
        let listed = items.len() as u64;
        let keys: HashSet<ObjectKey, FixedState> = items.iter().map(|(k, _)| k.clone()).collect();
        for (key, object) in items {
            self.add(DeltaType::Replaced, key, object);
        }
        let mut tombstones = 0;
        // Keys queued (not yet in the store) that the list no longer has.
        let queued: Vec<(ObjectKey, Stored<K>)> = match self.kind {
            QueueKind::DeltaFifo => self
                .items
                .iter()
                .filter(|(k, _)| !keys.contains(*k))
                .filter_map(|(k, d)| d.last().map(|d| (k, d)))
                .filter(|(_, d)| !d.kind.is_delete())
                .map(|(k, d)| (k.clone(), d.object.clone()))
                .collect(),
            QueueKind::RealFifo => Vec::new(),
        };
        for (key, object) in queued {
            self.add(DeltaType::DeletedFinalStateUnknown, key, object);
            tombstones += 1;
        }
        // Keys of the store that the list lacks, unless a delete is already queued.
        let known: Vec<(ObjectKey, Stored<K>)> = store
            .entries()
            .filter(|(k, _)| !keys.contains(*k) && self.waiting(k) != Some(true))
            .map(|(k, s)| (k.clone(), s.clone()))
            .collect();
        for (key, object) in known {
            self.add(DeltaType::DeletedFinalStateUnknown, key, object);
            tombstones += 1;
        }
        if !self.populated {
            self.populated = true;
            self.initial_population = listed + tombstones;
        }
    }

    /// A resync (`Resync`): every key of the store with nothing queued is queued again as
    /// a Sync delta of the stored object. Returns how many were queued.
    pub fn resync(&mut self, store: &Store<K>) -> u64
    where
        K: kube::Resource,
    {
        let due: Vec<(ObjectKey, Stored<K>)> = store
            .entries()
            .filter(|(k, _)| self.waiting(k).is_none())
            .map(|(k, s)| (k.clone(), s.clone()))
            .collect();
        let count = due.len() as u64;
        for (key, object) in due {
            self.add(DeltaType::Sync, key, object);
        }
        count
    }

    /// Takes the oldest entry, and whether it belongs to the first `Replace` (client-go's
    /// `isInInitialList`).
    pub fn pop(&mut self) -> Option<(Popped<K>, bool)> {
        let popped = match self.kind {
            QueueKind::DeltaFifo => {
                let key = self.order.pop_front()?;
                let deltas = self.items.remove(&key).unwrap_or_default();
                self.own_bytes -= 2 * key.heap_bytes() + deltas.capacity() * size_of::<Delta<K>>();
                Popped::Many(key, deltas)
            }
            QueueKind::RealFifo => {
                let (key, delta) = self.log.pop_front()?;
                self.own_bytes -= key.heap_bytes();
                if let Some(n) = self.queued.get_mut(&key) {
                    *n -= 1;
                    if *n == 0 {
                        self.queued.remove(&key);
                        self.own_bytes -= key.heap_bytes();
                    }
                }
                Popped::One(key, delta)
            }
        };
        let initial = !self.has_synced();
        if self.initial_population > 0 {
            self.initial_population -= 1;
        }
        Some((popped, initial))
    }

    /// The heap the queue's own containers hold, computed from their capacities: keys,
    /// delta lists, the order and the hash tables (by hashbrown's layout). The objects are
    /// the store's and are not counted here.
    pub fn heap_bytes(&self) -> u64 {
        let containers = self.order.capacity() * size_of::<ObjectKey>()
            + self.log.capacity() * size_of::<(ObjectKey, Delta<K>)>()
            + table_bytes::<ObjectKey, Vec<Delta<K>>>(self.items.capacity())
            + table_bytes::<ObjectKey, u32>(self.queued.capacity());
        (self.own_bytes + containers) as u64
    }
}

/// The bytes hashbrown allocates for a table that can hold `capacity` entries of `(K, V)`:
/// one slot and one control byte per bucket, plus a group of control bytes (16 with SSE2).
pub fn table_bytes<K, V>(capacity: usize) -> usize {
    const GROUP_WIDTH: usize = 16;
    if capacity == 0 {
        return 0;
    }
    let buckets = if capacity < 8 {
        (capacity + 1).next_power_of_two()
    } else {
        (capacity * 8 / 7).next_power_of_two()
    };
    let slots = buckets * size_of::<(K, V)>();
    // The control bytes start at a 16-byte boundary after the slots.
    slots.next_multiple_of(GROUP_WIDTH) + buckets + GROUP_WIDTH
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;
    use scenario::{Relist, StoreMode};
    use std::sync::Arc;

    fn cm(name: &str, rv: &str) -> Stored<ConfigMap> {
        Stored::Owned(Arc::new(ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some("ns".to_owned()),
                resource_version: Some(rv.to_owned()),
                ..Default::default()
            },
            ..Default::default()
        }))
    }

    fn key(name: &str) -> ObjectKey {
        ObjectKey::of(&*cm(name, "1"))
    }

    fn kinds(popped: Popped<ConfigMap>) -> (String, Vec<DeltaType>) {
        let (key, deltas) = popped.into_parts();
        (key.to_string(), deltas.map(|d| d.kind).collect())
    }

    #[test]
    fn delta_fifo_keeps_one_entry_per_key_and_real_fifo_one_per_delta() {
        for (kind, len) in [(QueueKind::DeltaFifo, 2), (QueueKind::RealFifo, 4)] {
            let mut q = Queue::new(kind);
            q.add(DeltaType::Updated, key("a"), cm("a", "1"));
            q.add(DeltaType::Updated, key("b"), cm("b", "2"));
            q.add(DeltaType::Updated, key("a"), cm("a", "3"));
            q.add(DeltaType::Deleted, key("a"), cm("a", "4"));
            assert_eq!(q.len(), len, "{kind:?}");
            let (first, _) = q.pop().unwrap();
            match kind {
                QueueKind::DeltaFifo => assert_eq!(
                    kinds(first),
                    (
                        "ns/a".to_owned(),
                        vec![DeltaType::Updated, DeltaType::Updated, DeltaType::Deleted]
                    )
                ),
                QueueKind::RealFifo => {
                    assert_eq!(kinds(first), ("ns/a".to_owned(), vec![DeltaType::Updated]));
                }
            }
        }
    }

    #[test]
    fn two_consecutive_deletes_are_merged_keeping_the_one_with_the_state() {
        let mut q = Queue::new(QueueKind::DeltaFifo);
        q.add(DeltaType::Deleted, key("a"), cm("a", "1"));
        q.add(DeltaType::DeletedFinalStateUnknown, key("a"), cm("a", "1"));
        let (popped, _) = q.pop().unwrap();
        assert_eq!(kinds(popped).1, vec![DeltaType::Deleted]);
    }

    #[test]
    fn replace_queues_tombstones_for_known_keys_the_list_lacks_and_counts_the_initial_population() {
        for kind in [QueueKind::DeltaFifo, QueueKind::RealFifo] {
            let mut store = Store::new(StoreMode::PerItemCopy, Relist::Buffered);
            store.insert(key("gone"), cm("gone", "1"));
            store.insert(key("kept"), cm("kept", "1"));
            let mut q = Queue::new(kind);
            q.replace(
                vec![(key("kept"), cm("kept", "1")), (key("new"), cm("new", "2"))],
                &store,
            );
            assert!(!q.has_synced());
            let mut seen = Vec::new();
            while let Some((popped, initial)) = q.pop() {
                assert!(initial, "{kind:?}");
                seen.push(kinds(popped));
            }
            assert!(q.has_synced());
            seen.sort();
            assert_eq!(
                seen,
                vec![
                    (
                        "ns/gone".to_owned(),
                        vec![DeltaType::DeletedFinalStateUnknown]
                    ),
                    ("ns/kept".to_owned(), vec![DeltaType::Replaced]),
                    ("ns/new".to_owned(), vec![DeltaType::Replaced]),
                ],
                "{kind:?}"
            );
        }
    }

    #[test]
    fn resync_skips_keys_that_have_deltas_waiting() {
        for kind in [QueueKind::DeltaFifo, QueueKind::RealFifo] {
            let mut store = Store::new(StoreMode::PerItemCopy, Relist::Buffered);
            for name in ["a", "b", "c"] {
                store.insert(key(name), cm(name, "1"));
            }
            let mut q = Queue::new(kind);
            q.add(DeltaType::Updated, key("b"), cm("b", "2"));
            assert_eq!(q.resync(&store), 2, "{kind:?}");
            assert_eq!(q.len(), 3, "{kind:?}");
        }
    }

    #[test]
    fn the_heap_of_an_empty_queue_is_zero_and_grows_with_entries() {
        let mut q: Queue<ConfigMap> = Queue::new(QueueKind::DeltaFifo);
        assert_eq!(q.heap_bytes(), 0);
        q.add(DeltaType::Updated, key("a"), cm("a", "1"));
        assert!(q.heap_bytes() > size_of::<ObjectKey>() as u64);
    }
}
