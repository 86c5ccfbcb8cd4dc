//! What the server sets and clients cannot: identity and timestamps, generation, a new
//! Pod's status and qosClass, status kept from writes to the object and spec from writes
//! to its status, and the writer's managedFields entry.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use crate::apiserver::generate::{self};
use crate::scenario::ObjectKind;

/// Where a write came in: the object's own path, or its status subresource's
/// (`.../{name}/status`), which writes the status and leaves the spec as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Object,
    Status,
}

impl Endpoint {
    /// The `subresource` of a managedFields entry written through this endpoint.
    fn subresource(self) -> Option<&'static str> {
        match self {
            Endpoint::Object => None,
            Endpoint::Status => Some("status"),
        }
    }
}

/// An update's managedFields: other managers keep their entries, and so do this
/// manager's entries for other endpoints; its entry for `endpoint` is replaced by `entry`
/// (`None` when it now owns no field).
fn managed_after_update(
    was: &Value,
    (manager, endpoint): (&str, Endpoint),
    entry: Option<Value>,
) -> Vec<Value> {
    let subresource = endpoint.subresource();
    let mut managed: Vec<Value> = was["managedFields"]
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .filter(|e| {
                    e["manager"] != manager
                        || e["operation"] != "Update"
                        || e["subresource"].as_str() != subresource
                })
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    managed.extend(entry);
    managed
}

/// The time now, in seconds, as a managedFields entry or a creationTimestamp writes it.
pub(super) fn now() -> Value {
    let now = Timestamp::from_second(Timestamp::now().as_second()).expect("now is a valid time");
    serde_json::to_value(Time(now)).expect("a time serializes")
}

/// Sets what the server owns: identity and timestamps, generation, a new Pod's status,
/// and the writer's managedFields entry. `current` is the live object for an update;
/// `uid` is the new object's UID for a create. `writer` is the manager and the endpoint
/// it wrote through; a write to the status has had [`super::status::prepared`] already.
pub(super) fn finish(
    kind: ObjectKind,
    mut object: Value,
    current: Option<&Value>,
    uid: &str,
    (manager, endpoint): (&str, Endpoint),
) -> Value {
    let now = now();
    let owned = match endpoint {
        Endpoint::Object => generate::owned_fields(&object),
        Endpoint::Status => generate::owned_status_fields(&object),
    };
    let meta = object["metadata"]
        .as_object_mut()
        .expect("object_key checked the metadata");
    for server_owned in [
        "resourceVersion",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
    ] {
        meta.remove(server_owned);
    }
    // kube-apiserver drops a manager's entry once it owns no field.
    let owns_fields = owned.as_object().is_some_and(|o| !o.is_empty());
    let mut entry = json!({
        "manager": manager,
        "operation": "Update",
        "apiVersion": kind.api_version(),
        "time": now,
        "fieldsType": "FieldsV1",
        "fieldsV1": owned,
    });
    if let Some(subresource) = endpoint.subresource() {
        entry["subresource"] = json!(subresource);
    }
    match current {
        None => {
            meta.insert("uid".to_owned(), json!(uid));
            meta.insert("creationTimestamp".to_owned(), now);
            if owns_fields {
                meta.insert("managedFields".to_owned(), json!([entry]));
            }
            if kind.has_generation() {
                meta.insert("generation".to_owned(), json!(1));
            }
        }
        Some(current) => {
            let was = &current["metadata"];
            for kept in ["uid", "creationTimestamp"] {
                meta.insert(kept.to_owned(), was[kept].clone());
            }
            // No update starts, ends or changes a deletion (validation refused any that
            // tried).
            for kept in ["deletionTimestamp", "deletionGracePeriodSeconds"] {
                if let Some(value) = was.get(kept).filter(|v| !v.is_null()) {
                    meta.insert(kept.to_owned(), value.clone());
                }
            }
            let entry = owns_fields.then_some(entry);
            let managed = managed_after_update(was, (manager, endpoint), entry);
            if managed.is_empty() {
                meta.remove("managedFields");
            } else {
                meta.insert("managedFields".to_owned(), Value::Array(managed));
            }
            if kind.has_generation() {
                // The spec changing is what bumps a Pod's or a Deployment's generation; a
                // custom resource's, any change but its metadata's (it has no status
                // subresource here).
                let generation = was["generation"].as_i64().unwrap_or(1);
                let changed = match kind {
                    ObjectKind::Sampled(_) => beside_metadata(&object) != beside_metadata(current),
                    _ => object["spec"] != current["spec"],
                };
                object["metadata"]["generation"] = json!(generation + i64::from(changed));
            }
        }
    }
    keep_status(kind, &mut object, current, endpoint);
    object
}

/// Status belongs to the status subresource: a create starts a Pod's or a Deployment's
/// as the apiserver does (a Node's is the writer's, as kubelet registers it), a write to
/// the object keeps it as it was, a write to the status is the status.
fn keep_status(kind: ObjectKind, object: &mut Value, current: Option<&Value>, endpoint: Endpoint) {
    match (kind, current, endpoint) {
        (_, _, Endpoint::Status) => {}
        (ObjectKind::Pod, None, _) => {
            object["status"] = json!({"phase": "Pending", "qosClass": qos_class(&object["spec"])});
        }
        (ObjectKind::Deployment, None, _) => object["status"] = json!({}),
        (_, Some(current), _) if kind.has_status() => match current.get("status") {
            Some(status) => object["status"] = status.clone(),
            None => {
                object.as_object_mut().map(|o| o.remove("status"));
            }
        },
        _ => {}
    }
}

/// The Pod's QoS class, as the apiserver sets it on create: Guaranteed when every
/// container limits CPU and memory with requests equal to limits, BestEffort when none
/// asks for anything, Burstable otherwise.
pub(super) fn qos_class(spec: &Value) -> &'static str {
    let containers = spec["containers"].as_array().map(Vec::as_slice);
    let containers = containers.unwrap_or_default();
    let resources = |c: &Value, which: &str, r: &str| c["resources"][which][r].clone();
    let none = containers.iter().all(|c| {
        ["requests", "limits"]
            .iter()
            .all(|w| c["resources"][*w].as_object().is_none_or(|m| m.is_empty()))
    });
    if none {
        return "BestEffort";
    }
    let guaranteed = containers.iter().all(|c| {
        ["cpu", "memory"].iter().all(|r| {
            let limit = resources(c, "limits", r);
            let request = resources(c, "requests", r);
            !limit.is_null() && (request.is_null() || request == limit)
        })
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// An object's fields but its metadata: what moves a custom resource's generation on.
fn beside_metadata(object: &Value) -> Vec<(&String, &Value)> {
    object
        .as_object()
        .map(|fields| fields.iter().filter(|(k, _)| *k != "metadata").collect())
        .unwrap_or_default()
}
