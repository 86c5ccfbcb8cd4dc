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
//! Encoding reads the JSON text once (stream.rs): each message is written as its keys
//! come, by a plan made once per message (plan.rs), then put in field-number order. A
//! generated object skips the JSON: its class's message is encoded once with markers for
//! its values and kept as literal bytes and holes (skeleton.rs), which each object fills.
//!
//! What a `.proto` cannot say comes from Go's types (proto/go-fields.tsv): Go writes a
//! field that is no pointer at its zero too (`generateName: ""`, `generation: 0`), its
//! JSON leaves the `omitempty` ones out, and some structs are embedded in their parent's
//! JSON. So the bytes are Go's, byte for byte (.ci/protobuf-against-go checks every kind
//! against apimachinery's serializer), and an object read from protobuf is the JSON Go
//! would write.

#[cfg(feature = "server")]
mod decode;
mod encode;
mod plan;
mod skeleton;
mod stream;
#[cfg(test)]
mod tests;
#[cfg(feature = "server")]
mod zeros;

use std::borrow::Cow;
use std::sync::LazyLock;

use prost::encoding::{WireType, encode_key, encode_varint, encoded_len_varint, key_len};
#[cfg(feature = "server")]
use prost_reflect::DynamicMessage;
use prost_reflect::{DescriptorPool, MessageDescriptor};
use serde::Deserialize;
#[cfg(feature = "server")]
use serde_json::Value;
use serde_json::value::RawValue;

use k8s::names::api_package;
use scenario::ObjectKind;

use plan::{Plans, Scalar, Shape};
pub(crate) use skeleton::{Filled, HoleAs, Markers, Skeleton, Values};
#[cfg(feature = "server")]
pub(crate) use zeros::{as_stored, go_zero_object, with_go_zeros};

/// The media type of a protobuf object or list.
pub(crate) const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";
/// The media type of a protobuf watch stream.
pub(crate) const WATCH_MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf;stream=watch";

/// The first four bytes of every protobuf document.
const MAGIC: &[u8; 4] = b"k8s\0";

/// Kubernetes' messages: core/v1, apps/v1, coordination/v1, events/v1, policy/v1 (an
/// Eviction), meta/v1 and what they import.
static POOL: LazyLock<DescriptorPool> = LazyLock::new(|| {
    let descriptors = include_bytes!(concat!(env!("OUT_DIR"), "/kubernetes.descriptors"));
    DescriptorPool::decode(descriptors.as_slice()).expect("build.rs compiled the descriptors")
});

/// Every message's plan for the encoder.
static PLANS: LazyLock<Plans> = LazyLock::new(|| Plans::new(&POOL));

/// A message whose length is known before its bytes are written, so that what encloses
/// it (a list, an envelope, a watch event) is written around it without copying it.
pub(crate) trait Message {
    /// How many bytes [`Message::write_to`] appends.
    fn encoded_len(&self) -> usize;
    fn write_to(&self, out: &mut Vec<u8>);
}

/// Bytes already encoded.
impl Message for [u8] {
    fn encoded_len(&self) -> usize {
        self.len()
    }

    fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self);
    }
}

/// A message of `kind` in `api_version` in the envelope of a document.
struct Document<'m, M: ?Sized> {
    head: Vec<u8>,
    message: &'m M,
    tail: Vec<u8>,
}

impl<'m, M: Message + ?Sized> Document<'m, M> {
    fn new(api_version: &str, kind: &str, message: &'m M) -> Self {
        let (head, tail) = envelope_around(api_version, kind, message.encoded_len());
        Document {
            head,
            message,
            tail,
        }
    }
}

impl<M: Message + ?Sized> Message for Document<'_, M> {
    fn encoded_len(&self) -> usize {
        self.head.len() + self.message.encoded_len() + self.tail.len()
    }

    fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.head);
        self.message.write_to(out);
        out.extend_from_slice(&self.tail);
    }
}

/// Why a document could not be read or written.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum ProtobufError {
    #[error("the body does not start with the protobuf envelope's \"k8s\\x00\"")]
    #[cfg(feature = "server")]
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

/// The full names the message of `kind` in `api_version` may have, in order: the
/// group's own (`v1` is core's, `apps/v1` the apps group's, `coordination.k8s.io/v1` the
/// package `k8s.io.api.coordination.v1`), then meta/v1's, which Go's scheme registers in
/// every group version (`Status`, `DeleteOptions`, `WatchEvent`).
fn message_names(api_version: &str, kind: &str) -> impl Iterator<Item = String> {
    let package = package(api_version);
    let meta = format!("k8s.io.apimachinery.pkg.apis.meta.v1.{kind}");
    package
        .map(|p| format!("{p}.{kind}"))
        .into_iter()
        .chain([meta])
}

fn unknown_kind(api_version: &str, kind: &str) -> ProtobufError {
    ProtobufError::UnknownKind {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
    }
}

/// Whether objects of `kind` are served in protobuf when a client asks for it, as
/// kube-apiserver serves them: every kind the generator makes, and a sampled kind that
/// is one of Kubernetes' own (a Service, a Job, a Role: its group version's package has
/// its message); a custom resource is JSON only.
pub(crate) fn serves(kind: ObjectKind) -> bool {
    kind.generated()
        || package(kind.api_version()).is_some_and(|package| {
            let name = format!("{package}.{}", kind.as_str());
            !package.starts_with("k8s.io.apimachinery.")
                && POOL.get_message_by_name(&name).is_some()
        })
}

/// The protobuf package of `api_version`'s group's messages (`v1` is core's, `apps/v1` the
/// apps group's, `coordination.k8s.io/v1` `k8s.io.api.coordination.v1`); `None`, with
/// nothing allocated, for a group not of Kubernetes' own (a custom resource's, asked on
/// every request: the exact figures of a server of one do not move).
fn package(api_version: &str) -> Option<String> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    match group {
        "meta.k8s.io" => Some(format!("k8s.io.apimachinery.pkg.apis.meta.{version}")),
        group => api_package(group).map(|name| format!("k8s.io.api.{name}.{version}")),
    }
}

/// The message of `kind` in `api_version`.
fn message_for(api_version: &str, kind: &str) -> Result<MessageDescriptor, ProtobufError> {
    message_names(api_version, kind)
        .find_map(|name| POOL.get_message_by_name(&name))
        .ok_or_else(|| unknown_kind(api_version, kind))
}

/// The encoder's plan of the message of `kind` in `api_version`.
fn plan_for(api_version: &str, kind: &str) -> Result<usize, ProtobufError> {
    message_names(api_version, kind)
        .find_map(|name| PLANS.index(&name))
        .ok_or_else(|| unknown_kind(api_version, kind))
}

/// An object's `apiVersion` and `kind`, read before the rest.
#[derive(Deserialize)]
struct TypeMeta<'a> {
    #[serde(borrow, default, rename = "apiVersion")]
    api_version: Cow<'a, str>,
    #[serde(borrow, default)]
    kind: Cow<'a, str>,
}

/// `json`, a JSON object, written as the fields of message `plan`.
fn encode_message(plan: usize, json: &[u8], out: &mut Vec<u8>) -> Result<(), ProtobufError> {
    let mut deserializer = serde_json::Deserializer::from_slice(json);
    stream::message(&PLANS, plan, out, &mut deserializer)
        .and_then(|()| deserializer.end())
        .map_err(|e| stream_error(&e))
}

/// A streaming error as a field's path and what is wrong there.
fn stream_error(error: &serde_json::Error) -> ProtobufError {
    let text = error.to_string();
    // serde_json says where in the text each level's error passed; the path says it better.
    let mut clean = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find(" at line ") {
        clean.push_str(&rest[..at]);
        let tail = &rest[at + " at line ".len()..];
        let skip = tail
            .find(" column ")
            .map(|c| c + " column ".len())
            .map(|c| {
                c + tail[c..]
                    .find(|ch: char| !ch.is_ascii_digit())
                    .unwrap_or(tail.len() - c)
            })
            .unwrap_or(0);
        rest = &tail[skip..];
    }
    clean.push_str(rest);
    let mut steps: Vec<&str> = clean.split(stream::PATH).collect();
    let why = steps.pop().unwrap_or_default().to_owned();
    let mut path = String::new();
    for step in steps {
        if !path.is_empty() && !step.starts_with('[') {
            path.push('.');
        }
        path.push_str(step);
    }
    ProtobufError::Field { path, why }
}

/// A JSON document (an object, a list, a Status) as a protobuf document: its
/// `apiVersion` and `kind` in the envelope, the rest as the kind's message.
pub(crate) fn encode_json(json: &[u8]) -> Result<Vec<u8>, ProtobufError> {
    let meta: TypeMeta = serde_json::from_slice(json)
        .map_err(|e| ProtobufError::Decode(format!("not a JSON object: {e}")))?;
    let plan = plan_for(&meta.api_version, &meta.kind)?;
    let mut raw = Vec::with_capacity(json.len());
    encode_message(plan, json, &mut raw)?;
    Ok(document(&meta.api_version, &meta.kind, raw.as_slice()))
}

/// [`encode_json`] of a `serde_json::Value` (for tests).
#[cfg(test)]
pub(crate) fn encode_document(document: &Value) -> Result<Vec<u8>, ProtobufError> {
    encode_json(&serde_json::to_vec(document).expect("a JSON value serializes"))
}

/// `message`, of `kind` in `api_version`, as a document: in its envelope.
pub(crate) fn document(
    api_version: &str,
    kind: &str,
    message: &(impl Message + ?Sized),
) -> Vec<u8> {
    let document = Document::new(api_version, kind, message);
    let mut out = Vec::with_capacity(document.encoded_len());
    document.write_to(&mut out);
    out
}

/// The envelope's bytes before and after a message of `len` bytes.
fn envelope_around(api_version: &str, kind: &str, len: usize) -> (Vec<u8>, Vec<u8>) {
    let mut type_meta = Vec::with_capacity(api_version.len() + kind.len() + 4);
    encode::string_field(&mut type_meta, 1, api_version);
    encode::string_field(&mut type_meta, 2, kind);
    let mut head = Vec::with_capacity(type_meta.len() + 24);
    head.extend_from_slice(MAGIC);
    encode::bytes_field(&mut head, 1, &type_meta);
    encode_key(2, WireType::LengthDelimited, &mut head);
    encode_varint(len as u64, &mut head);
    // contentEncoding and contentType: empty, and written, as Go writes them.
    let mut tail = Vec::with_capacity(4);
    encode::string_field(&mut tail, 3, "");
    encode::string_field(&mut tail, 4, "");
    (head, tail)
}

/// A protobuf document as JSON, with its `apiVersion` and `kind`.
#[cfg(feature = "server")]
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

/// One frame of a protobuf watch stream, from the event as a JSON line
/// (`{"type":...,"object":...}`): a four-byte length and a `WatchEvent` whose object is
/// the object's document.
pub(crate) fn watch_frame(line: &[u8]) -> Result<Vec<u8>, ProtobufError> {
    #[derive(Deserialize)]
    struct Event<'a> {
        #[serde(borrow, rename = "type")]
        event_type: Cow<'a, str>,
        #[serde(borrow)]
        object: &'a RawValue,
    }
    let event: Event = serde_json::from_slice(line)
        .map_err(|e| ProtobufError::Decode(format!("not a watch event: {e}")))?;
    let object = encode_json(event.object.get().as_bytes())?;
    Ok(frame(&event.event_type, object.as_slice()))
}

/// One frame of a protobuf watch stream: an event of `event_type` whose object is
/// `message`, of `kind` in `api_version`.
pub(crate) fn watch_frame_of(
    event_type: &str,
    api_version: &str,
    kind: &str,
    message: &impl Message,
) -> Vec<u8> {
    frame(event_type, &Document::new(api_version, kind, message))
}

/// A four-byte length and a `meta.v1.WatchEvent {type = 1; object = 2
/// (runtime.RawExtension {raw = 1})}` whose object is `document`.
fn frame(event_type: &str, document: &(impl Message + ?Sized)) -> Vec<u8> {
    let document_len = document.encoded_len();
    let raw_extension_len = key_len(1) + encoded_len_varint(document_len as u64) + document_len;
    let event_len = key_len(1)
        + encoded_len_varint(event_type.len() as u64)
        + event_type.len()
        + key_len(2)
        + encoded_len_varint(raw_extension_len as u64)
        + raw_extension_len;
    let mut frame = Vec::with_capacity(4 + event_len);
    let length = u32::try_from(event_len).expect("a watch event is under 4 GiB");
    frame.extend_from_slice(&length.to_be_bytes());
    encode::string_field(&mut frame, 1, event_type);
    encode_key(2, WireType::LengthDelimited, &mut frame);
    encode_varint(raw_extension_len as u64, &mut frame);
    encode_key(1, WireType::LengthDelimited, &mut frame);
    encode_varint(document_len as u64, &mut frame);
    document.write_to(&mut frame);
    debug_assert_eq!(frame.len(), 4 + event_len);
    frame
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

/// A protobuf list built an item at a time: `{metadata = 1; items = 2}` of the list kind,
/// kept as chunks of about [`LIST_CHUNK_BYTES`], so that a list of a hundred thousand
/// objects is never one buffer grown (and copied) by doubling.
#[derive(Debug)]
pub(crate) struct ListEncoder {
    api_version: String,
    kind: String,
    /// The items' message.
    item: usize,
    chunks: Vec<bytes::Bytes>,
    current: Vec<u8>,
    /// The list message's bytes so far, in `chunks` and `current`.
    len: usize,
}

/// About how many bytes of a protobuf list go in one chunk of its body.
const LIST_CHUNK_BYTES: usize = 64 * 1024;

impl ListEncoder {
    /// A list of `kind` (`PodList`, `PartialObjectMetadataList`) with its `metadata` as
    /// JSON.
    pub(crate) fn new(
        api_version: &str,
        kind: &str,
        metadata: &[u8],
    ) -> Result<ListEncoder, ProtobufError> {
        let list = &PLANS.messages[plan_for(api_version, kind)?];
        let field = |name| {
            list.field(name)
                .map(|i| &list.fields[i])
                .ok_or_else(|| ProtobufError::field(format!("{kind} has no {name}")))
        };
        let (meta, items) = (field("metadata")?, field("items")?);
        let (Scalar::Message(meta), Scalar::Message(item), Shape::List) =
            (meta.value, items.value, items.shape)
        else {
            return Err(ProtobufError::field(format!("{kind} is not a list")));
        };
        let mut current = Vec::with_capacity(LIST_CHUNK_BYTES + 16 * 1024);
        encode_message(meta, metadata, &mut current).map_err(|e| e.within("metadata"))?;
        stream::wrap(&mut current, 0, 1);
        Ok(ListEncoder {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            item,
            len: 0,
            chunks: Vec::new(),
            current,
        })
    }

    /// Appends one item, given as JSON.
    pub(crate) fn push(&mut self, item: &[u8]) -> Result<(), ProtobufError> {
        let at = self.current.len();
        encode_message(self.item, item, &mut self.current).map_err(|e| e.within("items[]"))?;
        stream::wrap(&mut self.current, at, 2);
        if self.current.len() >= LIST_CHUNK_BYTES {
            self.cut();
        }
        Ok(())
    }

    /// Appends one item, already a message.
    pub(crate) fn push_message(&mut self, item: &impl Message) {
        let len = item.encoded_len();
        encode_key(2, WireType::LengthDelimited, &mut self.current);
        encode_varint(len as u64, &mut self.current);
        item.write_to(&mut self.current);
        if self.current.len() >= LIST_CHUNK_BYTES {
            self.cut();
        }
    }

    fn cut(&mut self) {
        let full = std::mem::replace(
            &mut self.current,
            Vec::with_capacity(LIST_CHUNK_BYTES + 16 * 1024),
        );
        self.len += full.len();
        self.chunks.push(bytes::Bytes::from(full));
    }

    /// The list's document, in chunks: the envelope's head, the list, its tail.
    pub(crate) fn finish(mut self) -> Vec<bytes::Bytes> {
        self.cut();
        let (head, tail) = envelope_around(&self.api_version, &self.kind, self.len);
        let mut chunks = Vec::with_capacity(self.chunks.len() + 2);
        chunks.push(bytes::Bytes::from(head));
        chunks.extend(self.chunks);
        chunks.push(bytes::Bytes::from(tail));
        chunks
    }
}

/// Writes field `number`'s key and a varint.
fn varint_field(out: &mut Vec<u8>, number: u32, value: u64) {
    encode_key(number, WireType::Varint, out);
    encode_varint(value, out);
}
