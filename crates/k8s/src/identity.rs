//! What identifies a live object, as the two sides see it: the server's truth and what an
//! informer's store holds. The consistency oracle compares the two.

/// The key a store files an object under: `namespace/name`, or the name alone for a
/// cluster-scoped object (client-go's `MetaNamespaceKeyFunc`).
pub fn store_key(namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        name.to_owned()
    } else {
        format!("{namespace}/{name}")
    }
}

/// One live object as the server knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruthEntry {
    /// `namespace/name`, or the name of a cluster-scoped object ([`store_key`]).
    pub key: String,
    /// `metadata.resourceVersion`.
    pub resource_version: u64,
    /// `metadata.uid`.
    pub uid: String,
}

/// What the consistency oracle reads of one cached object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// `namespace/name` (client-go's `MetaNamespaceKeyFunc`).
    pub key: String,
    /// `metadata.resourceVersion`.
    pub resource_version: String,
    /// `metadata.uid`.
    pub uid: String,
}
