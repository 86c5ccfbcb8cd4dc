//! FieldsV1: the sets of fields a manager owns, as the apiserver's field manager records
//! them in `metadata.managedFields`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry};
use serde_json::{Map, Value, json};

use super::template::Seconds;

/// One `Update` entry of managedFields: what `manager` owns (`fields`), written at `at`,
/// through `subresource` when there is one.
pub(super) fn update_entry(
    manager: &str,
    subresource: Option<&str>,
    fields: Value,
    at: Seconds,
) -> ManagedFieldsEntry {
    versioned_update_entry("v1", manager, subresource, fields, at)
}

/// [`update_entry`] for an object of `api_version` (`apps/v1`).
pub(super) fn versioned_update_entry(
    api_version: &str,
    manager: &str,
    subresource: Option<&str>,
    fields: Value,
    at: Seconds,
) -> ManagedFieldsEntry {
    ManagedFieldsEntry {
        api_version: Some(api_version.to_owned()),
        fields_type: Some("FieldsV1".to_owned()),
        fields_v1: Some(FieldsV1(fields)),
        manager: Some(manager.to_owned()),
        operation: Some("Update".to_owned()),
        subresource: subresource.map(str::to_owned),
        time: Some(super::time(at.0)),
    }
}

/// Appends the entries of managers after the first ones, one written at each of `at`
/// (`kubectl annotate`, controllers, ...): each owns the object's annotations, or its
/// labels when it has none. `meta` is the object's metadata as JSON.
pub(super) fn push_later_managers(
    out: &mut Vec<ManagedFieldsEntry>,
    api_version: &str,
    meta: &Value,
    at: &[Seconds],
) {
    for (manager, at) in LATER_MANAGERS.iter().zip(at) {
        let owned = match meta.get("annotations") {
            Some(a) => json!({ "f:metadata": { "f:annotations": field_set("annotations", a) } }),
            None => json!({ "f:metadata": { "f:labels": field_set("labels", &meta["labels"]) } }),
        };
        out.push(versioned_update_entry(
            api_version,
            manager,
            None,
            owned,
            *at,
        ));
    }
}

/// Field managers after an object's first ones, each of which touched the annotations
/// (kubectl annotate, controllers, ...), in the order an object meets them.
const LATER_MANAGERS: [&str; 6] = [
    "kubectl-annotate",
    "argocd-application-controller",
    "vpa-updater",
    "istio-sidecar-injector",
    "kubectl-label",
    "descheduler",
];

/// The set of a top-level field (`spec`, `status`): the apiserver marks no `.` there.
pub(super) fn root_field_set(field: &str, value: &Value) -> Value {
    let mut set = field_set(field, value);
    if let Some(map) = set.as_object_mut() {
        map.remove(".");
    }
    set
}

/// The FieldsV1 set of `value`: `f:` for each field, `k:{...}` for each element of a list
/// that merges by key, `{}` at the leaves; `".": {}` marks a map or list element that is
/// itself owned.
pub(super) fn field_set(field: &str, value: &Value) -> Value {
    match value {
        Value::Object(map) if !map.is_empty() && !is_atomic(field) => {
            let mut set = Map::with_capacity(map.len() + 1);
            set.insert(".".to_owned(), json!({}));
            for (k, v) in map {
                set.insert(format!("f:{k}"), field_set(k, v));
            }
            Value::Object(set)
        }
        Value::Array(items) if merge_key(field).is_some() => {
            let keys = merge_key(field).unwrap_or_default();
            let mut set = Map::with_capacity(items.len());
            for item in items {
                let mut key = Map::new();
                for k in keys {
                    if let Some(v) = item.get(*k) {
                        key.insert((*k).to_owned(), v.clone());
                    }
                }
                let element = field_set("", item);
                set.insert(format!("k:{}", Value::Object(key)), element);
            }
            Value::Object(set)
        }
        _ => json!({}),
    }
}

/// The merge keys of the list fields a pod has (from the API's `x-kubernetes-list-map-keys`).
fn merge_key(field: &str) -> Option<&'static [&'static str]> {
    Some(match field {
        // `containerStatuses` is atomic: the kubelet replaces it whole.
        "containers" | "env" | "volumes" => &["name"],
        "ports" => &["containerPort", "protocol"],
        "volumeMounts" => &["mountPath"],
        "conditions" => &["type"],
        "podIPs" => &["ip"],
        "ownerReferences" => &["uid"],
        _ => return None,
    })
}

/// Fields owned as a whole (atomic structs or maps of quantities).
fn is_atomic(field: &str) -> bool {
    matches!(
        field,
        "requests" | "limits" | "securityContext" | "state" | "running" | "selector"
    )
}
