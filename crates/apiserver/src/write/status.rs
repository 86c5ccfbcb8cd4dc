//! The status subresource (`{root}/namespaces/{namespace}/{resource}/{name}/status`, and
//! `{root}/nodes/{name}/status`) of the kinds that have one: Pods, Nodes, Deployments and
//! a sampled kind whose objects have a status (a custom resource's, as an operator writes
//! it), as kubelet, controllers and `kubectl ... --subresource=status` write them. Its PUT and
//! PATCH are the object's handlers for [`super::ToStatus`]: they change the status (and
//! the metadata the kind lets them change) and keep the spec as it was, so the
//! generation stays; the writer gets a managedFields entry for the subresource owning
//! the status's fields. Writes to the object keep the status instead
//! ([`super::server_fields::finish`]). Reads are the object's
//! ([`crate::routes`]).

use serde_json::Value;

use scenario::ObjectKind;

/// What a write to the status stores of `object` (what the client sent, or the patched
/// object), given the live object `current`: the spec as it was, and what each kind's
/// status strategy in kube-apiserver v1.37 puts back. A Pod keeps its owner references
/// (old kubelets corrupted them), its QoS class when the write drops it, and the
/// observed generations the write leaves unset (of the status and of each condition, by
/// type in order); a Deployment keeps its labels. A sampled kind is served as a custom
/// resource, whose status write changes the status alone (apiextensions-apiserver's
/// status strategy): the object as it was, with the status sent (none when it sent
/// none) and the write's managedFields.
pub(super) fn prepared(kind: ObjectKind, mut object: Value, current: &Value) -> Value {
    if let ObjectKind::Sampled(_) = kind {
        let mut kept = current.clone();
        put_back(&mut kept, &object, &["status"]);
        put_back(
            &mut kept["metadata"],
            &object["metadata"],
            &["managedFields"],
        );
        return kept;
    }
    put_back(&mut object, current, &["spec"]);
    match kind {
        ObjectKind::Pod => {
            put_back(
                &mut object["metadata"],
                &current["metadata"],
                &["ownerReferences"],
            );
            let was = &current["status"];
            let status = &mut object["status"];
            if status.is_object() {
                for field in ["qosClass", "observedGeneration"] {
                    if unset(&status[field]) {
                        put_back(status, was, &[field]);
                    }
                }
                keep_condition_generations(status, was);
            }
        }
        ObjectKind::Deployment => {
            put_back(&mut object["metadata"], &current["metadata"], &["labels"]);
        }
        ObjectKind::Node | ObjectKind::ConfigMap | ObjectKind::Secret | ObjectKind::Sampled(_) => {}
    }
    object
}

/// Whether a field the client may leave out is unset: absent, null, or Go's zero value.
fn unset(value: &Value) -> bool {
    value.is_null() || *value == 0 || *value == ""
}

/// Sets each of `fields` of `to` to `from`'s, or removes it where `from` has none.
fn put_back(to: &mut Value, from: &Value, fields: &[&str]) {
    let Some(to) = to.as_object_mut() else {
        return;
    };
    for field in fields {
        match from.get(*field) {
            Some(value) => to.insert((*field).to_owned(), value.clone()),
            None => to.remove(*field),
        };
    }
}

/// A Pod's conditions without an observedGeneration take the old one of the same type:
/// the first old condition of that type for the first new one, and so on.
fn keep_condition_generations(status: &mut Value, was: &Value) {
    let old = was["conditions"].as_array().map(Vec::as_slice);
    let mut old: Vec<&Value> = old.unwrap_or_default().iter().collect();
    let Some(conditions) = status["conditions"].as_array_mut() else {
        return;
    };
    for condition in conditions {
        let position = old.iter().position(|c| c["type"] == condition["type"]);
        let was = position.map_or(&Value::Null, |i| old.remove(i));
        if unset(&condition["observedGeneration"]) {
            put_back(condition, was, &["observedGeneration"]);
        }
    }
}
