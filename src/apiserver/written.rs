//! Objects written over HTTP: the bodies `serve` keeps for POST, PUT and PATCH.
//!
//! Generated objects need no body (see [`super::generate`]); an object a client wrote does.
//! [`Written`] is one version of such an object, shared by the state, the history and the
//! responses that send it. [`Version`] is what a LIST page or a watch event sends: an
//! identity, generated on demand unless a written body stands in for it.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::generate::{self, Identity};
use crate::scenario::ObjectSpec;

/// An object's namespace and name: its key on the server.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectKey {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
}

/// One version of an object written over HTTP.
#[derive(Debug)]
pub struct Written {
    key: ObjectKey,
    labels: BTreeMap<String, String>,
    /// The object as JSON; `metadata.resourceVersion` is set when it is sent, since the
    /// same body serves a DELETED event at a later version.
    body: Value,
}

impl Written {
    /// Keeps `body`, which the write path has validated: it has a name and a namespace.
    pub fn new(mut body: Value) -> Written {
        let meta = &mut body["metadata"];
        if let Some(meta) = meta.as_object_mut() {
            meta.remove("resourceVersion");
        }
        let text = |field: &str| meta[field].as_str().unwrap_or_default().to_owned();
        let key = ObjectKey {
            namespace: text("namespace"),
            name: text("name"),
        };
        let labels = meta["labels"]
            .as_object()
            .map(|labels| {
                labels
                    .iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        Written { key, labels, body }
    }

    /// Namespace and name.
    pub fn key(&self) -> &ObjectKey {
        &self.key
    }

    /// `metadata.uid`, which the server set when the object was created.
    pub fn uid(&self) -> &str {
        self.body["metadata"]["uid"].as_str().unwrap_or_default()
    }

    /// `metadata.labels`.
    pub fn labels(&self) -> &BTreeMap<String, String> {
        &self.labels
    }

    /// The object as JSON, with `metadata.resourceVersion` set to `rv`.
    pub fn to_value(&self, rv: u64) -> Value {
        let mut body = self.body.clone();
        body["metadata"]["resourceVersion"] = Value::String(rv.to_string());
        body
    }
}

/// How a `PartialObjectMetadata` object starts; its `metadata` and a `}` follow.
const PARTIAL_OBJECT_METADATA_HEAD: &[u8] =
    br#"{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":"#;

/// One version of an object, ready to send.
#[derive(Debug, Clone)]
pub struct Version {
    /// Which object, at which version.
    pub id: Identity,
    /// The body a client wrote; `None` for a generated object.
    pub written: Option<Arc<Written>>,
}

impl Version {
    /// Appends the object's JSON to `buf`.
    pub fn write(&self, buf: &mut Vec<u8>, spec: &ObjectSpec) {
        match &self.written {
            Some(w) => serde_json::to_writer(buf, &w.to_value(self.id.resource_version))
                .expect("writing JSON to a Vec cannot fail"),
            None => generate::write_object(buf, spec, self.id),
        }
    }

    /// Appends the object's metadata-only form (`PartialObjectMetadata`) to `buf`, as
    /// kube-apiserver sends it to a client that asks `as=PartialObjectMetadata`.
    pub fn write_metadata(&self, buf: &mut Vec<u8>, spec: &ObjectSpec) {
        buf.extend_from_slice(PARTIAL_OBJECT_METADATA_HEAD);
        match &self.written {
            Some(w) => {
                serde_json::to_writer(&mut *buf, &w.to_value(self.id.resource_version)["metadata"])
                    .expect("writing JSON to a Vec cannot fail")
            }
            None => generate::write_metadata(buf, spec, self.id),
        }
        buf.push(b'}');
    }

    /// The object's JSON as a value, for a write to start from.
    pub fn to_value(&self, spec: &ObjectSpec) -> Value {
        match &self.written {
            Some(w) => w.to_value(self.id.resource_version),
            None => {
                let mut buf = Vec::with_capacity(8 * 1024);
                generate::write_object(&mut buf, spec, self.id);
                serde_json::from_slice(&buf).expect("a generated object is valid JSON")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn written_body_takes_its_resource_version_when_sent() {
        let w = Written::new(json!({
            "metadata": {"name": "web", "namespace": "default", "resourceVersion": "9",
                         "labels": {"app": "web"}},
        }));
        assert_eq!(w.key().name, "web");
        assert_eq!(w.labels()["app"], "web");
        assert_eq!(w.to_value(42)["metadata"]["resourceVersion"], "42");
    }
}
