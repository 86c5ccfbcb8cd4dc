//! The informer's cache: objects keyed by `namespace/name`, as client-go's indexer keys them
//! (the UID is not part of the key).
//!
//! How an entry holds its object is the point of the slice-retention scenario. client-go
//! before v1.28 stored `&list.Items[i]`: a pointer into the LIST's one backing array, which
//! Go's garbage collector keeps whole while any entry points into it, together with
//! everything every item refers to (kubernetes issue 111370). [`Stored::InList`] is that
//! layout: entries share an `Arc<[K]>` of all items, freed with the last entry.
//! `ExtractListWithAlloc` (kubernetes PR 113362) copies each item into an allocation of its
//! own; that is [`Stored::Owned`]. Objects from watch events are always `Owned`.
//!
//! How a (re)list reaches the store is the point of the relist-peak scenario. A
//! [`Relist::Buffered`] store gathers the new state beside the old one and swaps it in at
//! [`Store::init_done`], as client-go's `Replace` and kube-runtime's reflector do, so both
//! are alive at the swap. A [`Relist::Incremental`] store replaces each entry as its new
//! version arrives, marks it with the relist's epoch, and sweeps the unmarked at the end.

use measure::FixedState;
use std::collections::HashMap;
use std::ops::Deref;
use std::sync::Arc;

use kube::Resource;

use super::key::ObjectKey;
use super::relist::{RelistBuffer, Relisted};
use super::writer::Target;
use scenario::{Relist, StoreMode};

/// How the store holds one object. A clone shares the object (queues and handlers hold
/// clones, as client-go's deltas and notifications hold pointers).
#[derive(Debug)]
pub enum Stored<K> {
    /// An allocation of its own.
    Owned(Arc<K>),
    /// Element `index` of a LIST's shared backing array.
    InList {
        /// All items of the LIST, shared by every entry that came from it.
        list: Arc<[K]>,
        /// This entry's position in `list`.
        index: usize,
    },
}

impl<K> Clone for Stored<K> {
    fn clone(&self) -> Stored<K> {
        match self {
            Stored::Owned(obj) => Stored::Owned(Arc::clone(obj)),
            Stored::InList { list, index } => Stored::InList {
                list: Arc::clone(list),
                index: *index,
            },
        }
    }
}

impl<K> Stored<K> {
    /// The items of a LIST held the way `mode` says, each with its key.
    pub fn listed(mode: StoreMode, items: Vec<K>) -> Vec<(ObjectKey, Stored<K>)>
    where
        K: Resource,
    {
        match mode {
            StoreMode::SharedArray => {
                let list: Arc<[K]> = items.into();
                (0..list.len())
                    .map(|index| {
                        let key = ObjectKey::of(&list[index]);
                        let list = Arc::clone(&list);
                        (key, Stored::InList { list, index })
                    })
                    .collect()
            }
            StoreMode::PerItemCopy => items
                .into_iter()
                .map(|item| (ObjectKey::of(&item), Stored::Owned(Arc::new(item))))
                .collect(),
        }
    }
}

impl<K> Deref for Stored<K> {
    type Target = K;

    fn deref(&self) -> &K {
        match self {
            Stored::Owned(obj) => obj,
            Stored::InList { list, index } => &list[*index],
        }
    }
}

/// One entry: the object and the relist that last saw it.
#[derive(Debug)]
struct Entry<K> {
    stored: Stored<K>,
    epoch: u32,
}

/// The cache.
#[derive(Debug)]
pub struct Store<K> {
    mode: StoreMode,
    relist: Relist,
    objects: HashMap<ObjectKey, Entry<K>, FixedState>,
    /// The new state of a buffered relist, until [`Store::init_done`].
    buffer: RelistBuffer<K, Arc<K>>,
    /// Bumped by every (re)list; entries not marked with it by the end are swept.
    epoch: u32,
}

impl<K: Resource> Store<K> {
    /// An empty store holding LIST items the way `mode` says, relisting as `relist` says.
    pub fn new(mode: StoreMode, relist: Relist) -> Store<K> {
        Store {
            mode,
            relist,
            objects: HashMap::default(),
            buffer: RelistBuffer::default(),
            epoch: 0,
        }
    }

    /// Objects in the store.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// The object under `key`.
    pub fn get(&self, key: &ObjectKey) -> Option<&K> {
        self.objects.get(key).map(|e| &*e.stored)
    }

    /// Every object, in no particular order.
    pub fn objects(&self) -> impl Iterator<Item = &K> {
        self.objects.values().map(|e| &*e.stored)
    }

    /// A (re)list starts.
    pub fn init(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        self.buffer.clear();
    }

    /// Items of one LIST response (a page, or the pager's joined pages).
    pub fn init_page(&mut self, items: Vec<K>) {
        match self.relist {
            Relist::Buffered => self.buffer.page(items),
            Relist::Incremental => self.insert_listed(items),
        }
    }

    /// One initial event of a watch-list.
    pub fn init_apply(&mut self, obj: K) {
        match self.relist {
            Relist::Buffered => {
                let key = ObjectKey::of(&obj);
                self.buffer.stream(key, Arc::new(obj));
            }
            Relist::Incremental => self.apply(obj),
        }
    }

    /// A deletion seen before the initial state is complete (a watch-list's temporary
    /// store takes deletions too).
    pub fn init_delete(&mut self, obj: &K) {
        if !self.buffer.forget(obj) {
            self.delete(obj);
        }
    }

    /// The (re)list is complete: a buffered store swaps the new state in, after running
    /// `deferred` on each object of a watch-list's temporary store (a transform that
    /// skipped the initial events); an incremental store sweeps entries it did not see.
    pub fn init_done(&mut self, mut deferred: impl FnMut(&mut K)) {
        match self.buffer.take() {
            Some(Relisted::Listed(items)) => self.replace(items),
            Some(Relisted::Streamed(temporary)) => {
                let epoch = self.epoch;
                let objects = temporary
                    .into_iter()
                    .map(|(key, mut obj)| {
                        if let Some(obj) = Arc::get_mut(&mut obj) {
                            deferred(obj);
                        }
                        let stored = Stored::Owned(obj);
                        (key, Entry { stored, epoch })
                    })
                    .collect();
                self.objects = objects;
            }
            // A buffered relist that listed nothing, or an incremental one.
            None => {
                let epoch = self.epoch;
                match self.relist {
                    Relist::Buffered => self.objects = HashMap::default(),
                    Relist::Incremental => self.objects.retain(|_, e| e.epoch == epoch),
                }
            }
        }
    }

    /// Replaces the whole content with a LIST's items (client-go's `Store.Replace`): a new
    /// map is built and swapped in, then the old one is dropped.
    fn replace(&mut self, items: Vec<K>) {
        let old = std::mem::take(&mut self.objects);
        self.objects.reserve(items.len());
        self.insert_listed(items);
        drop(old);
    }

    /// Puts LIST items into the live map, marked with the current epoch.
    fn insert_listed(&mut self, items: Vec<K>) {
        let epoch = self.epoch;
        match self.mode {
            StoreMode::SharedArray => {
                let list: Arc<[K]> = items.into();
                for index in 0..list.len() {
                    let key = ObjectKey::of(&list[index]);
                    let stored = Stored::InList {
                        list: Arc::clone(&list),
                        index,
                    };
                    self.objects.insert(key, Entry { stored, epoch });
                }
            }
            StoreMode::PerItemCopy => {
                for item in items {
                    let stored = Stored::Owned(Arc::new(item));
                    self.objects
                        .insert(ObjectKey::of(&*stored), Entry { stored, epoch });
                }
            }
        }
    }

    /// Adds or replaces one object (ADDED, MODIFIED).
    pub fn apply(&mut self, obj: K) {
        let stored = Stored::Owned(Arc::new(obj));
        let epoch = self.epoch;
        self.objects
            .insert(ObjectKey::of(&*stored), Entry { stored, epoch });
    }

    /// Removes the object with `obj`'s key (DELETED).
    pub fn delete(&mut self, obj: &K) {
        self.objects.remove(&ObjectKey::of(obj));
    }

    /// The entry under `key`, shared (the indexer's `GetByKey`).
    pub fn get_stored(&self, key: &ObjectKey) -> Option<&Stored<K>> {
        self.objects.get(key).map(|e| &e.stored)
    }

    /// Every entry with its key, in no particular order (the indexer's `List`).
    pub fn entries(&self) -> impl Iterator<Item = (&ObjectKey, &Stored<K>)> {
        self.objects.iter().map(|(k, e)| (k, &e.stored))
    }

    /// Puts `stored` under `key`; returns what was there (the indexer's `Update`/`Add`).
    pub fn insert(&mut self, key: ObjectKey, stored: Stored<K>) -> Option<Stored<K>> {
        let epoch = self.epoch;
        self.objects
            .insert(key, Entry { stored, epoch })
            .map(|e| e.stored)
    }

    /// Removes the entry under `key`; returns it (the indexer's `Delete`).
    pub fn remove(&mut self, key: &ObjectKey) -> Option<Stored<K>> {
        self.objects.remove(key).map(|e| e.stored)
    }
}

/// The store as the target of event application: an informer without a queue writes it
/// directly.
impl<K: Resource> Target<K> for Store<K> {
    fn init(&mut self) {
        Store::init(self);
    }

    fn init_page(&mut self, items: Vec<K>) {
        Store::init_page(self, items);
    }

    fn init_apply(&mut self, obj: K) {
        Store::init_apply(self, obj);
    }

    fn init_delete(&mut self, obj: K) {
        Store::init_delete(self, &obj);
    }

    fn init_done(&mut self, deferred: impl FnMut(&mut K)) {
        Store::init_done(self, deferred);
    }

    fn apply(&mut self, obj: K) {
        Store::apply(self, obj);
    }

    fn delete(&mut self, obj: K) {
        Store::delete(self, &obj);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::test_config_map as cm;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn items(n: usize) -> Vec<ConfigMap> {
        (0..n).map(|i| cm(&format!("cm-{i}"))).collect()
    }

    fn listed(mode: StoreMode, relist: Relist, n: usize) -> Store<ConfigMap> {
        let mut store = Store::new(mode, relist);
        store.init();
        store.init_page(items(n));
        store.init_done(|_| {});
        store
    }

    fn backing_of(store: &Store<ConfigMap>) -> Option<Arc<[ConfigMap]>> {
        store.objects.values().find_map(|e| match &e.stored {
            Stored::InList { list, .. } => Some(Arc::clone(list)),
            Stored::Owned(_) => None,
        })
    }

    #[test]
    fn delete_after_shared_list_keeps_backing_alive() {
        let mut store = listed(StoreMode::SharedArray, Relist::Buffered, 100);
        let backing = backing_of(&store).unwrap();
        for i in 0..99 {
            store.delete(&cm(&format!("cm-{i}")));
        }
        // The one remaining entry still holds all 100 items.
        assert_eq!(store.len(), 1);
        assert_eq!(backing.len(), 100);
        assert_eq!(Arc::strong_count(&backing), 2);
        let weak = Arc::downgrade(&backing);
        drop(backing);
        store.delete(&cm("cm-99"));
        assert!(
            weak.upgrade().is_none(),
            "the last entry's removal frees the array"
        );
    }

    #[test]
    fn per_item_copy_stores_each_item_on_its_own() {
        let mut store = listed(StoreMode::PerItemCopy, Relist::Buffered, 10);
        assert!(backing_of(&store).is_none());
        store.delete(&cm("cm-3"));
        assert_eq!(store.len(), 9);
        assert!(store.get(&ObjectKey::of(&cm("cm-4"))).is_some());
        assert!(store.get(&ObjectKey::of(&cm("cm-3"))).is_none());
    }

    #[test]
    fn buffered_and_incremental_relists_end_with_the_same_store() {
        for mode in [StoreMode::SharedArray, StoreMode::PerItemCopy] {
            let mut buffered = listed(mode, Relist::Buffered, 10);
            let mut incremental = listed(mode, Relist::Incremental, 10);
            // The relist has lost cm-0..cm-3 and gained cm-10..cm-11, in two pages.
            for store in [&mut buffered, &mut incremental] {
                store.init();
                store.init_page((4..8).map(|i| cm(&format!("cm-{i}"))).collect());
                store.init_page((8..12).map(|i| cm(&format!("cm-{i}"))).collect());
                store.init_done(|_| {});
            }
            let keys = |s: &Store<ConfigMap>| {
                let mut keys: Vec<String> = s.objects.keys().map(ToString::to_string).collect();
                keys.sort();
                keys
            };
            assert_eq!(keys(&buffered), keys(&incremental));
            assert_eq!(buffered.len(), 8);
            assert!(buffered.get(&ObjectKey::of(&cm("cm-0"))).is_none());
            assert!(incremental.get(&ObjectKey::of(&cm("cm-11"))).is_some());
        }
    }

    #[test]
    fn a_watch_list_swaps_its_temporary_store_in_at_the_end() {
        let mut store = listed(StoreMode::PerItemCopy, Relist::Buffered, 3);
        store.init();
        store.init_apply(cm("cm-7"));
        store.init_apply(cm("cm-8"));
        store.init_delete(&cm("cm-8"));
        // Until the end, the live store is the old one.
        assert_eq!(store.len(), 3);
        let mut deferred = 0;
        store.init_done(|_| deferred += 1);
        assert_eq!(store.len(), 1);
        assert_eq!(deferred, 1, "the deferred transform runs once per object");
        assert!(store.get(&ObjectKey::of(&cm("cm-7"))).is_some());
    }
}
