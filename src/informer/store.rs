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

use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use kube::Resource;

use crate::scenario::StoreMode;

/// `namespace/name`, or `name` for cluster-scoped objects (client-go's
/// `MetaNamespaceKeyFunc`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey(String);

impl ObjectKey {
    /// The key of `obj`.
    pub fn of<K: Resource>(obj: &K) -> ObjectKey {
        let meta = obj.meta();
        let name = meta.name.as_deref().unwrap_or_default();
        ObjectKey(match meta.namespace.as_deref() {
            Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
            _ => name.to_owned(),
        })
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How the store holds one object.
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

impl<K> Deref for Stored<K> {
    type Target = K;

    fn deref(&self) -> &K {
        match self {
            Stored::Owned(obj) => obj,
            Stored::InList { list, index } => &list[*index],
        }
    }
}

/// The cache.
#[derive(Debug)]
pub struct Store<K> {
    mode: StoreMode,
    objects: HashMap<ObjectKey, Stored<K>>,
}

impl<K: Resource> Store<K> {
    /// An empty store holding LIST items the way `mode` says.
    pub fn new(mode: StoreMode) -> Store<K> {
        Store {
            mode,
            objects: HashMap::new(),
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
        self.objects.get(key).map(Deref::deref)
    }

    /// Replaces the whole content with a LIST's items (client-go's `Store.Replace`): a new
    /// map is built and swapped in, then the old one is dropped.
    pub fn replace(&mut self, items: Vec<K>) {
        let mut objects = HashMap::with_capacity(items.len());
        match self.mode {
            StoreMode::SharedArray => {
                let list: Arc<[K]> = items.into();
                for index in 0..list.len() {
                    let key = ObjectKey::of(&list[index]);
                    objects.insert(
                        key,
                        Stored::InList {
                            list: Arc::clone(&list),
                            index,
                        },
                    );
                }
            }
            StoreMode::PerItemCopy => {
                for item in items {
                    objects.insert(ObjectKey::of(&item), Stored::Owned(Arc::new(item)));
                }
            }
        }
        self.objects = objects;
    }

    /// Adds or replaces one object (ADDED, MODIFIED).
    pub fn apply(&mut self, obj: K) {
        self.objects
            .insert(ObjectKey::of(&obj), Stored::Owned(Arc::new(obj)));
    }

    /// Removes the object with `obj`'s key (DELETED).
    pub fn delete(&mut self, obj: &K) {
        self.objects.remove(&ObjectKey::of(obj));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    fn cm(name: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some("ns".to_owned()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn items(n: usize) -> Vec<ConfigMap> {
        (0..n).map(|i| cm(&format!("cm-{i}"))).collect()
    }

    fn backing_of(store: &Store<ConfigMap>) -> Option<Arc<[ConfigMap]>> {
        store.objects.values().find_map(|s| match s {
            Stored::InList { list, .. } => Some(Arc::clone(list)),
            Stored::Owned(_) => None,
        })
    }

    #[test]
    fn delete_after_shared_list_keeps_backing_alive() {
        let mut store = Store::new(StoreMode::SharedArray);
        store.replace(items(100));
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
        let mut store = Store::new(StoreMode::PerItemCopy);
        store.replace(items(10));
        assert!(backing_of(&store).is_none());
        store.delete(&cm("cm-3"));
        assert_eq!(store.len(), 9);
        assert!(store.get(&ObjectKey::of(&cm("cm-4"))).is_some());
        assert!(store.get(&ObjectKey::of(&cm("cm-3"))).is_none());
    }

    #[test]
    fn keys_are_namespace_slash_name() {
        assert_eq!(ObjectKey::of(&cm("a")).to_string(), "ns/a");
    }
}
