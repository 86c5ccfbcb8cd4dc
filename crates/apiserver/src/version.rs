//! What the server serves of one object: a [`Version`] (an identity whose body is generated
//! on demand, or a body written over HTTP), and [`Written`], the bodies `serve` keeps for
//! POST, PUT and PATCH.
//!
//! Generated objects need no body (see [`super::generate`]); an object a client wrote does.
//! [`Written`] is one version of such an object, shared by the state, the history and the
//! responses that send it. [`Version`] is what a LIST page or a watch event sends: an
//! identity, generated on demand unless a written body stands in for it.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::Arc;

use serde_json::Value;

use super::generate::{Generator, ObjectId};

/// An object's namespace and name: its key on the server.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NamespacedName {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
}

/// One version of an object written over HTTP, kept compactly: its JSON as sent, with a
/// gap where `metadata.resourceVersion` goes, since the same body serves a DELETED event
/// at a later version than the one that wrote it.
#[derive(Debug)]
pub struct Written {
    key: NamespacedName,
    uid: Box<str>,
    labels: BTreeMap<String, String>,
    /// The object's compact JSON, keys in order, without its resourceVersion's value.
    json: Box<[u8]>,
    /// Where in `json` the resourceVersion's digits go, between the quotes of
    /// `"resourceVersion":""`; `None` for a body without a metadata object.
    rv_at: Option<usize>,
}

impl Written {
    /// Keeps `body`, which the write path has validated: it has a name and a namespace.
    pub fn new(mut body: Value) -> Written {
        let meta = &body["metadata"];
        let text = |field: &str| meta[field].as_str().unwrap_or_default();
        let key = NamespacedName {
            namespace: text("namespace").to_owned(),
            name: text("name").to_owned(),
        };
        let uid = text("uid").into();
        let labels = meta["labels"]
            .as_object()
            .map(|labels| {
                labels
                    .iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        let (json, rv_at) = with_gap(&mut body);
        Written {
            key,
            uid,
            labels,
            json: json.into_boxed_slice(),
            rv_at,
        }
    }

    /// Namespace and name.
    pub fn key(&self) -> &NamespacedName {
        &self.key
    }

    /// `metadata.uid`, which the server set when the object was created.
    pub fn uid(&self) -> &str {
        &self.uid
    }

    /// `metadata.labels`.
    pub fn labels(&self) -> &BTreeMap<String, String> {
        &self.labels
    }

    /// Appends the object's JSON, with `metadata.resourceVersion` set to `rv`, to `buf`.
    pub fn write(&self, buf: &mut Vec<u8>, rv: u64) {
        match self.rv_at {
            Some(at) => {
                buf.extend_from_slice(&self.json[..at]);
                write!(buf, "{rv}").expect("writing to a Vec cannot fail");
                buf.extend_from_slice(&self.json[at..]);
            }
            None => buf.extend_from_slice(&self.json),
        }
    }

    /// The object as JSON, with `metadata.resourceVersion` set to `rv`.
    pub fn to_value(&self, rv: u64) -> Value {
        let mut buf = Vec::with_capacity(self.json.len() + 20);
        self.write(&mut buf, rv);
        serde_json::from_slice(&buf).expect("a kept body is valid JSON")
    }

    /// Bytes this body keeps on the heap: its JSON, key, UID and labels (each label's
    /// strings; the map's nodes are not counted).
    pub fn heap_bytes(&self) -> usize {
        self.json.len()
            + self.key.namespace.len()
            + self.key.name.len()
            + self.uid.len()
            + self
                .labels
                .iter()
                .map(|(k, v)| k.len() + v.len())
                .sum::<usize>()
    }
}

/// `body` serialized with a gap for `metadata.resourceVersion`'s value, and where the gap
/// is. The field is written with a marker value that occurs nowhere else in the output,
/// so that serde_json places it among the other keys exactly where it places the real
/// value; the marker is then cut out, leaving `"resourceVersion":""`.
fn with_gap(body: &mut Value) -> (Vec<u8>, Option<usize>) {
    let serialize = |body: &Value| serde_json::to_vec(body).expect("JSON values serialize");
    if !body["metadata"].is_object() {
        return (serialize(body), None);
    }
    for attempt in 0u64.. {
        // Control characters, which serde_json escapes: a client's body holds this text
        // only if it tries to; then the next attempt's marker differs.
        let marker = format!("\u{1}rv{attempt}\u{1}");
        let token = serialize(&Value::String(marker.clone()));
        body["metadata"]["resourceVersion"] = Value::String(marker);
        let mut json = serialize(body);
        let mut hits = (0..json.len()).filter(|&i| json[i..].starts_with(&token));
        if let (Some(at), None) = (hits.next(), hits.next()) {
            // Keep the quotes, drop what is between them.
            json.drain(at + 1..at + token.len() - 1);
            return (json, Some(at + 1));
        }
    }
    unreachable!("some marker is not in a finite body")
}

/// How a `PartialObjectMetadata` object starts; its `metadata` and a `}` follow.
const PARTIAL_OBJECT_METADATA_HEAD: &[u8] =
    br#"{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":"#;

/// One version of an object, ready to send.
#[derive(Debug, Clone)]
pub struct Version {
    /// Which object, at which version.
    pub id: ObjectId,
    /// The body a client wrote; `None` for a generated object.
    pub written: Option<Arc<Written>>,
}

impl Version {
    /// Appends the object's JSON to `buf`.
    pub fn write(&self, buf: &mut Vec<u8>, generator: &Generator) {
        match &self.written {
            Some(w) => w.write(buf, self.id.resource_version),
            None => generator.write_object(buf, self.id),
        }
    }

    /// Appends the object as an item of a list: without its `apiVersion` and `kind`, as
    /// kube-apiserver writes a JSON list's items.
    pub fn write_item(&self, buf: &mut Vec<u8>, generator: &Generator) {
        match &self.written {
            Some(w) => {
                let mut object = w.to_value(self.id.resource_version);
                if let Some(map) = object.as_object_mut() {
                    map.remove("apiVersion");
                    map.remove("kind");
                }
                serde_json::to_writer(&mut *buf, &object)
                    .expect("writing JSON to a Vec cannot fail");
            }
            None => {
                // A generated object is a k8s-openapi type serialized: `apiVersion` and
                // `kind` come first, and are cut out in place.
                let start = buf.len();
                generator.write_object(buf, self.id);
                let kind = generator.spec().kind;
                let type_meta = [
                    r#"{"apiVersion":""#,
                    kind.api_version(),
                    r#"","kind":""#,
                    kind.as_str(),
                    r#"","#,
                ];
                let len: usize = type_meta.iter().map(|s| s.len()).sum();
                let mut at = start;
                let matches = type_meta.iter().all(|part| {
                    let found = buf[at..].starts_with(part.as_bytes());
                    at += part.len();
                    found
                });
                if matches {
                    buf.drain(start + 1..start + len);
                } else {
                    // A sample's copy keeps its keys in order: where a field sorts
                    // between `apiVersion` and `kind` (an Event's `count`), they are not
                    // one run of bytes and are taken out of the object instead.
                    let written = buf.split_off(start);
                    let mut object: serde_json::Map<String, serde_json::Value> =
                        serde_json::from_slice(&written).expect("a generated object is JSON");
                    object.remove("apiVersion");
                    object.remove("kind");
                    serde_json::to_writer(&mut *buf, &object)
                        .expect("writing JSON to a Vec cannot fail");
                }
            }
        }
    }

    /// Appends the object's metadata-only form (`PartialObjectMetadata`) to `buf`, as
    /// kube-apiserver sends it to a client that asks `as=PartialObjectMetadata`.
    pub fn write_metadata(&self, buf: &mut Vec<u8>, generator: &Generator) {
        buf.extend_from_slice(PARTIAL_OBJECT_METADATA_HEAD);
        match &self.written {
            Some(w) => {
                serde_json::to_writer(&mut *buf, &w.to_value(self.id.resource_version)["metadata"])
                    .expect("writing JSON to a Vec cannot fail")
            }
            None => generator.write_metadata(buf, self.id),
        }
        buf.push(b'}');
    }

    /// The object's JSON as a value, for a write to start from.
    pub fn to_value(&self, generator: &Generator) -> Value {
        match &self.written {
            Some(w) => w.to_value(self.id.resource_version),
            None => {
                let mut buf = Vec::with_capacity(8 * 1024);
                generator.write_object(&mut buf, self.id);
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
                         "labels": {"app": "web"}, "uid": "u-1"},
        }));
        assert_eq!(w.key().name, "web");
        assert_eq!(w.labels()["app"], "web");
        assert_eq!(w.uid(), "u-1");
        assert_eq!(w.to_value(42)["metadata"]["resourceVersion"], "42");
    }

    /// The bytes sent are those of the body with its resourceVersion set, serialized:
    /// also when the body holds the marker's text, or `resourceVersion` keys elsewhere.
    #[test]
    fn kept_bytes_are_the_body_as_serde_json_writes_it() {
        let bodies = [
            json!({"metadata": {"name": "a", "namespace": "n"}, "spec": {"x": [1, 2]}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "a", "namespace": "n",
                                "annotations": {"resourceVersion": ""},
                                "labels": {"resourceVersion": "\u{1}rv0\u{1}"}},
                   "data": {"k": "\u{1}rv0\u{1} and \u{1}rv1\u{1}", "resourceVersion": ""}}),
            json!({"metadata": "not an object"}),
        ];
        for body in bodies {
            let w = Written::new(body.clone());
            let mut expected = body.clone();
            if let Some(meta) = expected["metadata"].as_object_mut() {
                meta.insert("resourceVersion".into(), json!("1234"));
            }
            let mut sent = Vec::new();
            w.write(&mut sent, 1234);
            assert_eq!(
                String::from_utf8(sent).unwrap(),
                serde_json::to_string(&expected).unwrap()
            );
        }
    }
}
