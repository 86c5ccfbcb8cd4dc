//! What the server sets and clients cannot: identity and timestamps, generation, a new
//! Pod's status and qosClass, and the writer's managedFields entry.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use crate::apiserver::generate::{self};
use crate::scenario::ObjectKind;

/// An update's managedFields: other managers keep their entries; this one's is replaced
/// by `entry` (`None` when it now owns no field).
fn managed_after_update(was: &Value, manager: &str, entry: Option<Value>) -> Vec<Value> {
    let mut managed: Vec<Value> = was["managedFields"]
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .filter(|e| {
                    e["manager"] != manager
                        || e["operation"] != "Update"
                        || e.get("subresource").is_some_and(|s| !s.is_null())
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
/// `uid` is the new object's UID for a create.
pub(super) fn finish(
    kind: ObjectKind,
    mut object: Value,
    current: Option<&Value>,
    uid: &str,
    manager: &str,
) -> Value {
    let now = now();
    let owned = generate::owned_fields(&object);
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
    let entry = json!({
        "manager": manager,
        "operation": "Update",
        "apiVersion": kind.api_version(),
        "time": now,
        "fieldsType": "FieldsV1",
        "fieldsV1": owned,
    });
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
            let managed = managed_after_update(was, manager, owns_fields.then_some(entry));
            if managed.is_empty() {
                meta.remove("managedFields");
            } else {
                meta.insert("managedFields".to_owned(), Value::Array(managed));
            }
            if kind.has_generation() {
                // The spec changing is what bumps a Pod's or a Deployment's generation.
                let generation = was["generation"].as_i64().unwrap_or(1);
                let changed = object["spec"] != current["spec"];
                object["metadata"]["generation"] = json!(generation + i64::from(changed));
            }
        }
    }
    // Status belongs to the status subresource: a create starts it as the apiserver
    // does, an update keeps it.
    match (kind, current) {
        (ObjectKind::Pod, None) => {
            object["status"] = json!({"phase": "Pending", "qosClass": qos_class(&object["spec"])});
        }
        (ObjectKind::Deployment, None) => object["status"] = json!({}),
        (ObjectKind::Pod | ObjectKind::Deployment, Some(current)) => {
            object["status"] = current["status"].clone();
        }
        _ => {}
    }
    object
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
