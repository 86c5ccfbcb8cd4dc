//! The relist buffer: a (re)list's new state, gathered beside the live state until it is
//! complete and swapped in. Written once; the store (an informer without a queue, or with
//! `relist = "buffered"`) and the queue's intake both gather through it, as kube-runtime's
//! reflector writes its `Writer { buffer }` once (kube-runtime `reflector/store.rs`).
//!
//! A LIST's pages are joined in order (client-go's pager hands `Replace` the whole list); a
//! watch-list's initial events fill a temporary store keyed by `namespace/name`, which
//! takes deletions too (client-go's `watchList`, kube-runtime's `InitApply`).

use measure::FixedState;
use std::collections::HashMap;

use kube::Resource;

use super::key::ObjectKey;

/// A complete (re)list, as gathered.
#[derive(Debug)]
pub enum Relisted<K, V> {
    /// Items of LIST pages, in order (the pager's joined list).
    Listed(Vec<K>),
    /// A watch-list's temporary store, filled by initial events; `V` is how the gatherer
    /// holds an object there (the store holds it shared, the queue's intake by value).
    Streamed(HashMap<ObjectKey, V, FixedState>),
}

/// A (re)list in progress; empty between (re)lists.
#[derive(Debug)]
pub struct RelistBuffer<K, V> {
    pending: Option<Relisted<K, V>>,
}

impl<K, V> Default for RelistBuffer<K, V> {
    fn default() -> Self {
        RelistBuffer { pending: None }
    }
}

impl<K: Resource, V> RelistBuffer<K, V> {
    /// A (re)list starts: whatever was gathered is dropped.
    pub fn clear(&mut self) {
        self.pending = None;
    }

    /// Items of one LIST response, after those of the pages before it.
    pub fn page(&mut self, items: Vec<K>) {
        match &mut self.pending {
            Some(Relisted::Listed(listed)) => listed.extend(items),
            _ => self.pending = Some(Relisted::Listed(items)),
        }
    }

    /// One initial event of a watch-list, under `key`.
    pub fn stream(&mut self, key: ObjectKey, value: V) {
        match &mut self.pending {
            Some(Relisted::Streamed(temporary)) => {
                temporary.insert(key, value);
            }
            _ => self.pending = Some(Relisted::Streamed([(key, value)].into_iter().collect())),
        }
    }

    /// A deletion among a watch-list's initial events: removes `obj` from the temporary
    /// store. Returns `false`, touching nothing, when no watch-list is being gathered
    /// (the key is only made when one is).
    pub fn forget(&mut self, obj: &K) -> bool {
        match &mut self.pending {
            Some(Relisted::Streamed(temporary)) => {
                temporary.remove(&ObjectKey::of(obj));
                true
            }
            _ => false,
        }
    }

    /// The (re)list is complete: what was gathered, leaving the buffer empty.
    pub fn take(&mut self) -> Option<Relisted<K, V>> {
        self.pending.take()
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;
    use crate::object::test_config_map as cm;

    #[test]
    fn pages_are_joined_in_order() {
        let mut buffer = RelistBuffer::<ConfigMap, ConfigMap>::default();
        buffer.page(vec![cm("a"), cm("b")]);
        buffer.page(vec![cm("c")]);
        let Some(Relisted::Listed(items)) = buffer.take() else {
            panic!("a listed relist");
        };
        let names: Vec<_> = items.iter().map(|i| i.metadata.name.clone()).collect();
        assert_eq!(
            names,
            [Some("a".into()), Some("b".into()), Some("c".into())]
        );
        assert!(buffer.take().is_none(), "taking empties the buffer");
    }

    #[test]
    fn a_watch_list_takes_deletions_and_nothing_else_does() {
        let mut buffer = RelistBuffer::<ConfigMap, ConfigMap>::default();
        assert!(
            !buffer.forget(&cm("a")),
            "no watch-list: the caller deletes"
        );
        buffer.stream(ObjectKey::of(&cm("a")), cm("a"));
        buffer.stream(ObjectKey::of(&cm("b")), cm("b"));
        assert!(buffer.forget(&cm("a")));
        let Some(Relisted::Streamed(temporary)) = buffer.take() else {
            panic!("a streamed relist");
        };
        assert_eq!(temporary.len(), 1);
        assert!(temporary.contains_key(&ObjectKey::of(&cm("b"))));
    }

    #[test]
    fn a_new_relist_drops_what_the_last_one_gathered() {
        let mut buffer = RelistBuffer::<ConfigMap, ConfigMap>::default();
        buffer.page(vec![cm("a")]);
        buffer.clear();
        buffer.stream(ObjectKey::of(&cm("b")), cm("b"));
        assert!(matches!(buffer.take(), Some(Relisted::Streamed(t)) if t.len() == 1));
    }
}
