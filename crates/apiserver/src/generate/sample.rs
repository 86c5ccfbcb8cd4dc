//! Copies of the objects a scenario's `objects.sample` holds: what differs between two
//! copies of one sample ([`SampleValues`]) and the builder that puts one together.
//!
//! A copy is its sample with the identity of its own: name, namespace, UID,
//! resourceVersion, creationTimestamp, and `metadata.generation` moved on by each update
//! where the sample has one. The sample's other bytes are kept as they are.

use serde_json::Value;

use super::template::{Int, Seconds, holes};
use super::{ObjectId, namespace, suffix, uid};
use scenario::{ObjectSpec, Sample};

holes! {
    /// What differs between two copies of one sample.
    pub(super) struct SampleValues {
        /// The name's last five characters, after the sample's base.
        suffix: String,
        namespace: String,
        uid: String,
        resource_version: String,
        created: Seconds,
        /// The sample's generation, moved on by the copy's updates.
        generation: Int,
    }
}

impl SampleValues {
    pub(super) fn of(spec: &ObjectSpec, sample: &Value, id: ObjectId) -> SampleValues {
        let generation = sample
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or_default();
        SampleValues {
            suffix: suffix(id.index),
            namespace: namespace(spec, id.index),
            uid: uid(spec, id.index, id.incarnation),
            resource_version: id.resource_version.to_string(),
            created: Seconds(i64::from(id.index)),
            generation: Int(generation + id.metadata_generation() - 1),
        }
    }
}

/// The copy of `sample`, whose copies' names start with `base`, with values `v`.
pub(super) fn copy_of(spec: &ObjectSpec, sample: &Value, base: &str, v: &SampleValues) -> Value {
    let mut copy = sample.clone();
    let Some(meta) = copy.get_mut("metadata").and_then(Value::as_object_mut) else {
        return copy;
    };
    meta.insert("name".into(), format!("{base}{}", v.suffix).into());
    if spec.namespaced() {
        meta.insert("namespace".into(), v.namespace.as_str().into());
    } else {
        meta.remove("namespace");
    }
    meta.insert("uid".into(), v.uid.as_str().into());
    meta.insert("resourceVersion".into(), v.resource_version.as_str().into());
    meta.insert(
        "creationTimestamp".into(),
        serde_json::to_value(super::time(v.created.0)).expect("a time serializes"),
    );
    if meta.contains_key("generation") {
        meta.insert("generation".into(), v.generation.0.into());
    }
    // A copy is not the sample's: what the server set for that one object goes.
    meta.remove("selfLink");
    copy
}

/// The samples' objects whose text has something a template's markers could be taken
/// for (`§`, a base64 `M4RK`, a time in the year 3000): their copies are built one by one.
pub(super) fn templatable(sample: &Sample) -> bool {
    let text = serde_json::to_string(&sample.objects).expect("JSON values serialize");
    !(text.contains('\u{a7}') || text.contains("M4RK") || text.contains("3000-01-01T"))
}
