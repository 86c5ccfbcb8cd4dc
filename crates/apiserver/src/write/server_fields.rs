//! What the server sets and clients cannot: identity and timestamps, generation, a new
//! Pod's status and qosClass, status kept from writes to the object and spec from writes
//! to its status, and the writer's managedFields entry.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use crate::protobuf;
use scenario::ObjectKind;

/// Where a write came in: the object's own path, or its status subresource's
/// (`.../{name}/status`), which writes the status and leaves the spec as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Object,
    Status,
}

impl Endpoint {
    /// The `subresource` of a managedFields entry written through this endpoint.
    pub(crate) fn subresource(self) -> Option<&'static str> {
        match self {
            Endpoint::Object => None,
            Endpoint::Status => Some("status"),
        }
    }
}

/// The time now, in seconds, as a managedFields entry or a creationTimestamp writes it.
pub(crate) fn now() -> Value {
    let now = Timestamp::from_second(Timestamp::now().as_second()).expect("now is a valid time");
    serde_json::to_value(Time(now)).expect("a time serializes")
}

/// Sets what the server owns: identity and timestamps, generation and a new Pod's
/// status; the object's managedFields are those the field manager made of it before
/// admission ([`super::pipeline`]).
/// `current` is the live object for an update; `uid` is the new object's UID for a
/// create. A write to the status has had [`super::status::prepared`] already.
pub(super) fn finish(
    kind: ObjectKind,
    mut object: Value,
    current: Option<&Value>,
    uid: &str,
    endpoint: Endpoint,
) -> Value {
    identity(&mut object, current, uid, kind.has_generation());
    if let Some(current) = current
        && kind.has_generation()
    {
        // The spec changing is what bumps a Pod's or a Deployment's generation; a custom
        // resource's, any change but its metadata's, and its status's where the status
        // has a subresource of its own.
        let generation = current["metadata"]["generation"].as_i64().unwrap_or(1);
        let changed = match kind {
            ObjectKind::Sampled(_) => {
                let beside = |object| beside_metadata(object, kind.has_status());
                beside(&object) != beside(current)
            }
            _ => object["spec"] != current["spec"],
        };
        object["metadata"]["generation"] = json!(generation + i64::from(changed));
    }
    keep_status(kind, &mut object, current, endpoint);
    object
}

/// What the server owns of every object's metadata: a create's UID and creationTimestamp
/// (and a first generation, for a kind `with_generation`), an update's kept from
/// `current`; no resourceVersion (the store sets it), no deletion the write did not
/// find; and the managedFields the field manager made, left out when there are none.
pub(crate) fn identity(
    object: &mut Value,
    current: Option<&Value>,
    uid: &str,
    with_generation: bool,
) {
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
    match current {
        None => {
            meta.insert("uid".to_owned(), json!(uid));
            meta.insert("creationTimestamp".to_owned(), now());
            if with_generation {
                meta.insert("generation".to_owned(), json!(1));
            }
        }
        Some(current) => {
            let was = &current["metadata"];
            for kept in ["uid", "creationTimestamp", "generation"] {
                if let Some(value) = was.get(kept) {
                    meta.insert(kept.to_owned(), value.clone());
                }
            }
            // No update starts, ends or changes a deletion (validation refused any that
            // tried).
            for kept in ["deletionTimestamp", "deletionGracePeriodSeconds"] {
                if let Some(value) = was.get(kept).filter(|v| !v.is_null()) {
                    meta.insert(kept.to_owned(), value.clone());
                }
            }
        }
    }
    let managed = object["metadata"]["managedFields"].take();
    keep_entries(object, managed);
}

/// `entries` as the object's managedFields, left out when there are none.
fn keep_entries(object: &mut Value, entries: Value) {
    let Some(meta) = object["metadata"].as_object_mut() else {
        return;
    };
    if entries.as_array().is_some_and(|e| !e.is_empty()) {
        meta.insert("managedFields".to_owned(), entries);
    } else {
        meta.remove("managedFields");
    }
}

/// Status belongs to the status subresource: a create starts a Pod's or a Deployment's
/// as the apiserver does (a Node's is the writer's, as kubelet registers it; a custom
/// resource's is dropped, as its CRD's status subresource has it; a sampled kind of
/// Kubernetes' own starts at its status's zero, as its strategy's `PrepareForCreate`
/// resets a Job's or an Ingress's), a write to the object keeps it as it was, a write to
/// the status is the status.
fn keep_status(kind: ObjectKind, object: &mut Value, current: Option<&Value>, endpoint: Endpoint) {
    match (kind, current, endpoint) {
        (_, _, Endpoint::Status) => {}
        (ObjectKind::Pod, None, _) => {
            object["status"] = json!({"phase": "Pending", "qosClass": qos_class(&object["spec"])});
        }
        (ObjectKind::Deployment, None, _) => object["status"] = json!({}),
        (ObjectKind::Sampled(_), None, _) if kind.has_status() => {
            let zero = protobuf::serves(kind)
                .then(|| protobuf::go_zero_object(kind.api_version(), kind.as_str()).ok())
                .flatten();
            match zero {
                Some(zero) => object["status"] = zero["status"].clone(),
                None => {
                    object.as_object_mut().map(|o| o.remove("status"));
                }
            }
        }
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

/// An object's fields but its metadata (and its status, `but_status`): what moves a
/// custom resource's generation on.
fn beside_metadata(object: &Value, but_status: bool) -> Vec<(&String, &Value)> {
    let counted = |field: &str| field != "metadata" && !(but_status && field == "status");
    object
        .as_object()
        .map(|fields| fields.iter().filter(|(k, _)| counted(k)).collect())
        .unwrap_or_default()
}
