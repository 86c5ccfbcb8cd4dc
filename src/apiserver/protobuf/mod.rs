//! Kubernetes' protobuf wire (`application/vnd.kubernetes.protobuf`), as kube-apiserver
//! reads and writes it for built-in kinds: kubectl's `create configmap`, `create secret`
//! and `create deployment` send protobuf bodies, and client-go programs configured with
//! `ContentType: application/vnd.kubernetes.protobuf` (kube-controller-manager, the
//! scheduler, kube-state-metrics, many controllers) ask for protobuf first.
//!
//! A document is the four bytes `k8s\0` and a `runtime.Unknown` envelope: the object's
//! `apiVersion` and `kind`, and the object as its protobuf message (which has no TypeMeta
//! of its own). A watch stream is frames of a four-byte big-endian length and a
//! `meta.v1.WatchEvent` whose object is such a document.
//!
//! The messages come from Kubernetes' own `.proto` files (proto/, compiled by build.rs);
//! this module maps them to and from the JSON the server keeps, field by field (a
//! message field has its JSON field's name), with Kubernetes' types of their own: `Time`
//! and `MicroTime` are RFC 3339 strings in JSON, `Quantity` a string, `IntOrString` a
//! number or a string, `FieldsV1` and `RawExtension` JSON kept as bytes.
//!
//! What a `.proto` cannot say comes from Go's types (proto/go-fields.tsv): Go writes a
//! field that is no pointer at its zero too (`generateName: ""`, `generation: 0`), its
//! JSON leaves the `omitempty` ones out, and some structs are embedded in their parent's
//! JSON. So the bytes are Go's, byte for byte (.ci/protobuf-against-go checks every kind
//! against apimachinery's serializer), and an object read from protobuf is the JSON Go
//! would write.

mod decode;
mod encode;
#[cfg(test)]
mod tests;

use std::sync::LazyLock;

use prost::encoding::{WireType, encode_key, encode_varint};
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor};
use serde_json::Value;

/// The media type of a protobuf object or list.
pub(crate) const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";
/// The media type of a protobuf watch stream.
pub(crate) const WATCH_MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf;stream=watch";

/// The first four bytes of every protobuf document.
const MAGIC: &[u8; 4] = b"k8s\0";

/// Kubernetes' messages: core/v1, apps/v1, meta/v1 and what they import.
static POOL: LazyLock<DescriptorPool> = LazyLock::new(|| {
    let descriptors = include_bytes!(concat!(env!("OUT_DIR"), "/kubernetes.descriptors"));
    DescriptorPool::decode(descriptors.as_slice()).expect("build.rs compiled the descriptors")
});

/// Why a document could not be read or written.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum ProtobufError {
    #[error("the body does not start with the protobuf envelope's \"k8s\\x00\"")]
    NoEnvelope,
    #[error("no protobuf message for kind {kind:?} in {api_version:?}")]
    UnknownKind { api_version: String, kind: String },
    #[error("the protobuf message does not decode: {0}")]
    Decode(String),
    #[error("{path}: {why}")]
    Field { path: String, why: String },
}

impl ProtobufError {
    fn field(why: impl Into<String>) -> ProtobufError {
        ProtobufError::Field {
            path: String::new(),
            why: why.into(),
        }
    }

    /// The error seen from the enclosing field `name` (or `[index]`).
    fn within(self, name: &str) -> ProtobufError {
        match self {
            ProtobufError::Field { path, why } => ProtobufError::Field {
                path: match (path.is_empty(), path.starts_with('[')) {
                    (true, _) => name.to_owned(),
                    (false, true) => format!("{name}{path}"),
                    (false, false) => format!("{name}.{path}"),
                },
                why,
            },
            other => other,
        }
    }
}

/// The message of `kind` in `api_version`: the group's own (`v1` is core's, `apps/v1`
/// the apps group's), else meta/v1's, which Go's scheme registers in every group version
/// (`Status`, `DeleteOptions`, `WatchEvent`).
pub(crate) fn message_for(
    api_version: &str,
    kind: &str,
) -> Result<MessageDescriptor, ProtobufError> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let package = match group {
        "" => Some(format!("k8s.io.api.core.{version}")),
        "meta.k8s.io" => Some(format!("k8s.io.apimachinery.pkg.apis.meta.{version}")),
        group if !group.contains('.') => Some(format!("k8s.io.api.{group}.{version}")),
        _ => None,
    };
    package
        .and_then(|p| POOL.get_message_by_name(&format!("{p}.{kind}")))
        .or_else(|| {
            POOL.get_message_by_name(&format!("k8s.io.apimachinery.pkg.apis.meta.v1.{kind}"))
        })
        .ok_or_else(|| ProtobufError::UnknownKind {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
        })
}

/// A JSON document (an object, a list, a Status) as a protobuf document: its
/// `apiVersion` and `kind` in the envelope, the rest as the kind's message.
pub(crate) fn encode_document(document: &Value) -> Result<Vec<u8>, ProtobufError> {
    let text = |field| {
        document
            .get(field)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    let message = message_for(api_version, kind)?;
    let mut raw = Vec::with_capacity(4 * 1024);
    encode::message(&mut raw, &message, document)?;
    Ok(envelope(api_version, kind, &raw))
}

/// `raw`, a message of `kind` in `api_version`, in the envelope.
pub(crate) fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut type_meta = Vec::with_capacity(api_version.len() + kind.len() + 4);
    encode::string_field(&mut type_meta, 1, api_version);
    encode::string_field(&mut type_meta, 2, kind);
    let mut out = Vec::with_capacity(raw.len() + type_meta.len() + 16);
    out.extend_from_slice(MAGIC);
    encode::bytes_field(&mut out, 1, &type_meta);
    encode::bytes_field(&mut out, 2, raw);
    // contentEncoding and contentType: empty, and written, as Go writes them.
    encode::string_field(&mut out, 3, "");
    encode::string_field(&mut out, 4, "");
    out
}

/// A protobuf document as JSON, with its `apiVersion` and `kind`.
pub(crate) fn decode_document(bytes: &[u8]) -> Result<Value, ProtobufError> {
    let unknown = bytes.strip_prefix(MAGIC).ok_or(ProtobufError::NoEnvelope)?;
    let envelope = POOL
        .get_message_by_name("k8s.io.apimachinery.pkg.runtime.Unknown")
        .expect("runtime.Unknown is compiled");
    let envelope = DynamicMessage::decode(envelope, unknown)
        .map_err(|e| ProtobufError::Decode(e.to_string()))?;
    let text = |message: &DynamicMessage, name: &str| {
        message
            .get_field_by_name(name)
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    };
    let type_meta = envelope
        .get_field_by_name("typeMeta")
        .and_then(|v| v.as_message().cloned())
        .ok_or_else(|| ProtobufError::Decode("the envelope has no typeMeta".to_owned()))?;
    let (api_version, kind) = (text(&type_meta, "apiVersion"), text(&type_meta, "kind"));
    let raw = envelope
        .get_field_by_name("raw")
        .and_then(|v| v.as_bytes().cloned())
        .unwrap_or_default();
    let message = DynamicMessage::decode(message_for(&api_version, &kind)?, raw)
        .map_err(|e| ProtobufError::Decode(e.to_string()))?;
    let mut document = decode::message(&message)?;
    if let Some(map) = document.as_object_mut() {
        map.insert("apiVersion".to_owned(), Value::from(api_version));
        map.insert("kind".to_owned(), Value::from(kind));
    }
    Ok(document)
}

/// One frame of a protobuf watch stream: the event's type and its object's document.
pub(crate) fn watch_frame(event_type: &str, object: &Value) -> Result<Vec<u8>, ProtobufError> {
    let object = encode_document(object)?;
    // meta.v1.WatchEvent {type = 1; object = 2 (runtime.RawExtension {raw = 1})}.
    let mut raw_extension = Vec::with_capacity(object.len() + 8);
    encode::bytes_field(&mut raw_extension, 1, &object);
    let mut event = Vec::with_capacity(raw_extension.len() + event_type.len() + 16);
    encode::string_field(&mut event, 1, event_type);
    encode::bytes_field(&mut event, 2, &raw_extension);
    let mut frame = Vec::with_capacity(event.len() + 4);
    let length = u32::try_from(event.len()).expect("a watch event is under 4 GiB");
    frame.extend_from_slice(&length.to_be_bytes());
    frame.extend_from_slice(&event);
    Ok(frame)
}

/// A watch frame's event (without its length): its type and its object as JSON.
#[cfg(test)]
pub(crate) fn decode_watch_event(frame: &[u8]) -> Result<(String, Value), ProtobufError> {
    let message = POOL
        .get_message_by_name("k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent")
        .expect("meta.v1.WatchEvent is compiled");
    let event =
        DynamicMessage::decode(message, frame).map_err(|e| ProtobufError::Decode(e.to_string()))?;
    let kind = event.get_field_by_name("type");
    let kind = kind
        .as_deref()
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned();
    let object = event
        .get_field_by_name("object")
        .and_then(|o| {
            o.as_message()?
                .get_field_by_name("raw")?
                .as_bytes()
                .cloned()
        })
        .unwrap_or_default();
    Ok((kind, decode_document(&object)?))
}

/// A protobuf list built an item at a time: `{metadata = 1; items = 2}` of the list kind.
#[derive(Debug)]
pub(crate) struct ListEncoder {
    api_version: String,
    kind: String,
    item: MessageDescriptor,
    raw: Vec<u8>,
}

impl ListEncoder {
    /// A list of `kind` (`PodList`, `PartialObjectMetadataList`) with its `metadata`.
    pub(crate) fn new(
        api_version: &str,
        kind: &str,
        metadata: &Value,
    ) -> Result<ListEncoder, ProtobufError> {
        let list = message_for(api_version, kind)?;
        let field = |name| {
            list.get_field_by_name(name)
                .ok_or_else(|| ProtobufError::field(format!("{kind} has no {name}")))
        };
        let (meta, items) = (field("metadata")?, field("items")?);
        let prost_reflect::Kind::Message(item) = items.kind() else {
            return Err(ProtobufError::field(format!(
                "{kind}'s items are not messages"
            )));
        };
        let mut raw = Vec::with_capacity(64 * 1024);
        encode::field(&mut raw, &meta, metadata).map_err(|e| e.within("metadata"))?;
        Ok(ListEncoder {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            item,
            raw,
        })
    }

    /// Appends one item.
    pub(crate) fn push(&mut self, item: &Value) -> Result<(), ProtobufError> {
        let mut message = Vec::with_capacity(4 * 1024);
        encode::message(&mut message, &self.item, item).map_err(|e| e.within("items[]"))?;
        encode::bytes_field(&mut self.raw, 2, &message);
        Ok(())
    }

    /// The list's document.
    pub(crate) fn finish(self) -> Vec<u8> {
        envelope(&self.api_version, &self.kind, &self.raw)
    }
}

/// Writes field `number`'s key and a varint.
fn varint_field(out: &mut Vec<u8>, number: u32, value: u64) {
    encode_key(number, WireType::Varint, out);
    encode_varint(value, out);
}
