//! The namespaces' changes in the records' history: a namespace a client creates,
//! updates or deletes takes the records' next resourceVersion under the records' lock
//! and is told to the namespaces' watches ([`super::Watched::Namespace`]), so that a list
//! of namespaces and the watch from it meet.

use serde_json::{Value, json};

use super::filter::namespace_key;
use super::watch::Change;
use super::{Api, Key, Records, Store};
use crate::state::EventKind;
use crate::status::ApiError;
use crate::write::DeleteOptions;

impl Records {
    /// Deletes every record in `namespace` as the namespace controller's deletecollection
    /// of each resource does (background propagation: each as a DELETE of it would be,
    /// finalizers holding what has them), their watchers told; returns what is left, as
    /// each resource a server of the scenario's kind serves lists it (an Event in both
    /// its versions), with its finalizers.
    pub fn delete_namespace_content(&self, namespace: &str) -> Vec<(Api, Value)> {
        let kind = self.server.spec().kind;
        let served =
            || (Api::ALL.into_iter()).filter(|api| api.namespaced() && api.served_with(kind));
        let mut store = self.store();
        let keys: Vec<Key> = (store.objects.keys())
            .filter(|key| key.1 == namespace)
            .cloned()
            .collect();
        let options = DeleteOptions::background();
        for key in &keys {
            if let Some(api) = served().find(|api| api.stored() == key.0) {
                self.delete_one(&mut store, api, key, &options);
            }
        }
        let left = served().flat_map(|api| {
            let kept = store.objects.iter();
            let there = kept.filter(move |(key, _)| key.0 == api.stored() && key.1 == namespace);
            there.map(move |(_, object)| (api, object["metadata"]["finalizers"].clone()))
        });
        left.collect()
    }

    /// The records' newest resourceVersion, and what `read` reads at it: nothing the
    /// records' lock guards changes in between (a namespace's create, update or delete).
    pub fn at_version<T>(&self, read: impl FnOnce() -> T) -> (u64, T) {
        let store = self.store();
        (store.resource_version, read())
    }

    /// Namespace `name` a client creates (`Added`) or deletes (`Modified` as it starts
    /// terminating, `Deleted` once gone), at the records' next resourceVersion, told to
    /// the namespaces' watches: `change` makes the change in the server, given that
    /// version, and returns the namespace as it is then (a deleted one as it was), or
    /// refuses, and then no version is taken.
    pub fn change_namespace(
        &self,
        kind: EventKind,
        name: &str,
        change: impl FnOnce(u64) -> Result<Value, ApiError>,
    ) -> Result<Value, ApiError> {
        let mut store = self.store();
        // What a watch selecting on a label or the phase compares the change with.
        let before = match kind {
            EventKind::Modified => self.server.namespace_object(name),
            _ => None,
        };
        let version = store.resource_version + 1;
        let object = change(version)?;
        told(&mut store, (version, kind), name, &object, before);
        Ok(object)
    }

    /// Namespace `name` as `update` makes it of the live one (a PUT, a PATCH, a
    /// `/finalize` or `/status` write, the namespace controller's): stored at the records'
    /// next resourceVersion and told to the watches as a MODIFIED, unless it is a dry run
    /// or the update changes nothing (kube-apiserver's storage then writes nothing, and
    /// the answer is the live namespace). An update that leaves a terminating namespace
    /// no finalizer, in its spec or its metadata, deletes it instead
    /// (`ShouldDeleteNamespaceDuringUpdate`): the watches are told DELETED with the
    /// namespace as it was kept, the answer is what the update made. A missing namespace
    /// is a 404.
    pub fn update_namespace(
        &self,
        name: &str,
        dry_run: bool,
        update: impl FnOnce(&Value) -> Result<Value, ApiError>,
    ) -> Result<Value, ApiError> {
        let mut store = self.store();
        let live =
            (self.server.namespace_object(name)).ok_or_else(|| ApiError::no_namespace(name))?;
        let mut object = update(&live)?;
        object["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"].clone();
        if dry_run || object == live {
            return Ok(object);
        }
        let version = store.resource_version + 1;
        let at = json!(version.to_string());
        if finalized(&live, &object) {
            self.server.remove_namespace(name);
            let mut gone = live;
            gone["metadata"]["resourceVersion"] = at;
            told(&mut store, (version, EventKind::Deleted), name, &gone, None);
            return Ok(object);
        }
        object["metadata"]["resourceVersion"] = at;
        self.server.update_namespace(object.clone());
        told(
            &mut store,
            (version, EventKind::Modified),
            name,
            &object,
            Some(live),
        );
        Ok(object)
    }
}

/// Whether `object`, an update of the namespace `live`, deletes it: its deletion was
/// asked for, and the update leaves no finalizer.
fn finalized(live: &Value, object: &Value) -> bool {
    !live["metadata"]["deletionTimestamp"].is_null() && !holds_namespace(object)
}

/// Whether a finalizer, in its spec or its metadata, holds `namespace` once deleted.
pub fn holds_namespace(namespace: &Value) -> bool {
    let some = |finalizers: &Value| finalizers.as_array().is_some_and(|f| !f.is_empty());
    some(&namespace["spec"]["finalizers"]) || some(&namespace["metadata"]["finalizers"])
}

/// The records at `version`, the namespace's change `kind` in their history.
fn told(
    store: &mut Store,
    (version, kind): (u64, EventKind),
    name: &str,
    object: &Value,
    before: Option<Value>,
) {
    store.resource_version = version;
    let change = Change::new(version, kind, namespace_key(name), object.clone(), before);
    store.changed(change);
}
