//! The namespaces the server keeps: its own (the objects', kube-apiserver's), read as
//! kube-apiserver serves them, and those clients create and change (over TCP), as they
//! left them; the `NamespaceLifecycle` admission of a create into one.

use std::collections::{BTreeMap, btree_map};
use std::sync::MutexGuard;

use crate::status::ApiError;
use crate::{ApiServer, SYSTEM_NAMESPACES, generate};

impl ApiServer {
    /// Whether `namespace` exists: one the objects are spread over, one of
    /// kube-apiserver's own ([`SYSTEM_NAMESPACES`]), or one a client created.
    pub fn has_namespace(&self, namespace: &str) -> bool {
        self.is_own_namespace(namespace) || self.written_namespaces().contains_key(namespace)
    }

    /// Whether `namespace` is one the server made: one the objects are spread over, or
    /// one of kube-apiserver's own.
    fn is_own_namespace(&self, namespace: &str) -> bool {
        SYSTEM_NAMESPACES.contains(&namespace) || self.namespace_ordinal(namespace).is_some()
    }

    fn written_namespaces(&self) -> MutexGuard<'_, BTreeMap<String, serde_json::Value>> {
        // Each change is made whole before the lock is let go.
        (self.shared.written_namespaces.lock()).unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps `namespace` (a client's, named), unless a namespace of its name exists: then
    /// returns it back.
    pub(crate) fn create_namespace(
        &self,
        namespace: serde_json::Value,
    ) -> Result<(), serde_json::Value> {
        let name = namespace["metadata"]["name"].as_str().unwrap_or_default();
        if self.is_own_namespace(name) {
            return Err(namespace);
        }
        match self.written_namespaces().entry(name.to_owned()) {
            btree_map::Entry::Occupied(_) => Err(namespace),
            btree_map::Entry::Vacant(slot) => {
                slot.insert(namespace);
                Ok(())
            }
        }
    }

    /// Keeps `namespace` as its namespace (one there is) now is: a client's update.
    pub(crate) fn update_namespace(&self, namespace: serde_json::Value) {
        let name = namespace["metadata"]["name"].as_str().unwrap_or_default();
        self.written_namespaces().insert(name.to_owned(), namespace);
    }

    /// Whether `namespace` is being deleted (`Terminating`): a client's, whose deletion
    /// waits for what is in it ([`namespaces`]).
    pub(crate) fn is_terminating(&self, namespace: &str) -> bool {
        (self.written_namespaces().get(namespace))
            .is_some_and(|n| n["status"]["phase"] == "Terminating")
    }

    /// `NamespaceLifecycle`'s admission of a create of `object` (of `resource`, as
    /// kube-apiserver names it in messages) into `namespace`: refused (403) while the
    /// namespace is terminating.
    pub(crate) fn admit_create(
        &self,
        resource: &'static str,
        namespace: &str,
        object: &serde_json::Value,
    ) -> Result<(), ApiError> {
        if namespace.is_empty() || !self.is_terminating(namespace) {
            return Ok(());
        }
        // Admission sees the name a client gave, or its prefix for one to be generated.
        let meta = &object["metadata"];
        let given = |field: &str| meta[field].as_str().filter(|s| !s.is_empty());
        let name = given("name").or_else(|| given("generateName"));
        Err(ApiError::namespace_terminating(
            resource,
            name.unwrap_or("Unknown"),
            namespace,
        ))
    }

    /// Whether namespace `name` is one a client created (and so may delete).
    pub(crate) fn is_created_namespace(&self, name: &str) -> bool {
        !self.is_own_namespace(name) && self.written_namespaces().contains_key(name)
    }

    /// Forgets the client's namespace `name`; returns it, `None` when no client made one
    /// of that name (the server keeps its own).
    pub(crate) fn remove_namespace(&self, name: &str) -> Option<serde_json::Value> {
        if self.is_own_namespace(name) {
            return None;
        }
        self.written_namespaces().remove(name)
    }

    /// Namespace `name` as a client last wrote it, or as kube-apiserver serves one it made
    /// ([`SYSTEM_NAMESPACES`], the objects'): a uid of its own, the server's epoch as its
    /// creation time, and the label kube-apiserver sets with its managedFields entry.
    /// `None` if there is none.
    pub fn namespace_object(&self, name: &str) -> Option<serde_json::Value> {
        if let Some(written) = self.written_namespaces().get(name) {
            return Some(written.clone());
        }
        let ordinal = match SYSTEM_NAMESPACES.iter().position(|n| *n == name) {
            // After the objects' namespaces, `default` first, as before the others.
            Some(i) if self.namespace_ordinal(name).is_none() => self.spec().namespaces + i as u32,
            _ => self.namespace_ordinal(name)?,
        };
        let created = generate::epoch_time();
        Some(serde_json::json!({
            "kind": "Namespace",
            "apiVersion": "v1",
            "metadata": {
                "name": name,
                // Objects' uids are drawn at index < count; these at the other end.
                "uid": generate::uid(self.spec(), u32::MAX - ordinal, u32::MAX),
                "resourceVersion": "1",
                "creationTimestamp": created,
                "labels": {"kubernetes.io/metadata.name": name},
                "managedFields": [{
                    "manager": "kube-apiserver",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": created,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:labels": {
                        ".": {}, "f:kubernetes.io/metadata.name": {}}}},
                }],
            },
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        }))
    }

    /// The namespaces a client can see, kube-apiserver's own among them, by name.
    pub(crate) fn namespace_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.shared.namespaces.keys().cloned().collect();
        names.extend(self.written_namespaces().keys().cloned());
        names.extend(SYSTEM_NAMESPACES.map(str::to_owned));
        names.sort();
        names.dedup();
        names
    }
}
