//! The key an informer files an object under: `namespace/name` (client-go's
//! `MetaNamespaceKeyFunc`). The UID is not part of it, which is why a delete and recreate
//! missed while disconnected looks like an update (the uid-reuse scenario).

use std::fmt;

use kube::Resource;

/// `namespace/name`, or `name` for cluster-scoped objects (client-go's
/// `MetaNamespaceKeyFunc`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey(String);

impl ObjectKey {
    /// The key of `obj`: `namespace/name`, or the name of a cluster-scoped object. One
    /// allocation of exactly the key's length, as client-go's `MetaNamespaceKeyFunc`
    /// (`namespace + "/" + name` in Go) makes.
    pub fn of<K: Resource>(obj: &K) -> ObjectKey {
        let meta = obj.meta();
        let name = meta.name.as_deref().unwrap_or_default();
        ObjectKey(match meta.namespace.as_deref() {
            Some(ns) if !ns.is_empty() => [ns, "/", name].concat(),
            _ => name.to_owned(),
        })
    }
}

impl ObjectKey {
    /// The length of the key's text (what a copy of it holds on the heap).
    pub fn heap_bytes(&self) -> usize {
        self.0.len()
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::object::test_config_map as cm;

    #[test]
    fn keys_are_namespace_slash_name_in_one_exact_allocation() {
        let key = ObjectKey::of(&cm("api-config-bbbbb"));
        assert_eq!(key.to_string(), "ns/api-config-bbbbb");
        assert_eq!(key.0.capacity(), key.heap_bytes());
        let mut cluster_scoped = cm("node-1");
        cluster_scoped.metadata.namespace = None;
        assert_eq!(ObjectKey::of(&cluster_scoped).to_string(), "node-1");
        cluster_scoped.metadata.namespace = Some(String::new());
        assert_eq!(ObjectKey::of(&cluster_scoped).to_string(), "node-1");
    }
}
