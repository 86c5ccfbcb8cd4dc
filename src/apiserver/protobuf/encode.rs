//! JSON to protobuf: a JSON value written as a message's fields, in field-number order as
//! Go writes them, with Kubernetes' own types mapped from their JSON forms.

use std::collections::HashMap;
use std::sync::LazyLock;

use base64::Engine as _;
use prost::encoding::{WireType, encode_key, encode_varint};
use prost_reflect::{FieldDescriptor, Kind, MessageDescriptor};
use serde_json::Value;

use super::{ProtobufError, varint_field};

pub(super) const TIME: &str = "k8s.io.apimachinery.pkg.apis.meta.v1.Time";
pub(super) const MICRO_TIME: &str = "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime";
pub(super) const QUANTITY: &str = "k8s.io.apimachinery.pkg.api.resource.Quantity";
pub(super) const INT_OR_STRING: &str = "k8s.io.apimachinery.pkg.util.intstr.IntOrString";
pub(super) const FIELDS_V1: &str = "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1";
pub(super) const RAW_EXTENSION: &str = "k8s.io.apimachinery.pkg.runtime.RawExtension";

/// How Go's generated code writes a field and Go's JSON reads it (proto/go-fields.tsv,
/// printed from k8s.io/api v0.37.2's types by subjects/client-go/protofields).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct GoField {
    /// Embedded in the enclosing JSON object (`json:",inline"`).
    pub inline: bool,
    /// A value, not a pointer, slice or map: written at its zero too.
    pub always: bool,
    /// Left out of JSON at its zero.
    pub omitempty: bool,
}

static GO_FIELDS: LazyLock<HashMap<(&'static str, &'static str), GoField>> = LazyLock::new(|| {
    let table = include_str!("../../../proto/go-fields.tsv");
    table
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let mut columns = line.split('\t');
            let (message, field, how) = (columns.next()?, columns.next()?, columns.next()?);
            let has = |word| how.split(',').any(|w| w == word);
            let go = GoField {
                inline: has("inline"),
                always: has("always"),
                omitempty: has("omitempty"),
            };
            Some(((message, field), go))
        })
        .collect()
});

/// How Go treats `field` of `message` (a field the table lacks: as a pointer).
pub(super) fn go_field(message: &MessageDescriptor, field: &FieldDescriptor) -> GoField {
    GO_FIELDS
        .get(&(message.full_name(), field.name()))
        .copied()
        .unwrap_or_default()
}

/// Appends `json` as the fields of `message`. Keys the message has no field for (an
/// object's `apiVersion` and `kind`, which the envelope carries) are left out, as
/// kube-apiserver drops unknown fields.
pub(super) fn message(
    out: &mut Vec<u8>,
    message: &MessageDescriptor,
    json: &Value,
) -> Result<(), ProtobufError> {
    match message.full_name() {
        TIME | MICRO_TIME => {
            let (seconds, nanos) = time(json)?;
            // Go's Timestamp writes both, nanos at zero too.
            varint_field(out, 1, seconds as u64);
            varint_field(out, 2, u64::from(nanos));
        }
        QUANTITY => match json {
            Value::String(s) => string_field(out, 1, s),
            Value::Number(n) => string_field(out, 1, &n.to_string()),
            _ => return Err(ProtobufError::field("a quantity is a string or a number")),
        },
        INT_OR_STRING => {
            // {type = 1; intVal = 2; strVal = 3}, all three written as Go writes them.
            let (kind, int, string) = match json {
                Value::Number(n) => {
                    let int = n
                        .as_i64()
                        .and_then(|n| i32::try_from(n).ok())
                        .ok_or_else(|| ProtobufError::field("not a 32-bit integer"))?;
                    (0, int, "")
                }
                Value::String(s) => (1, 0, s.as_str()),
                _ => {
                    return Err(ProtobufError::field(
                        "an int-or-string is a number or a string",
                    ));
                }
            };
            varint_field(out, 1, kind);
            varint_field(out, 2, int as u64);
            string_field(out, 3, string);
        }
        FIELDS_V1 | RAW_EXTENSION => {
            let raw = serde_json::to_vec(json).expect("a JSON value serializes");
            bytes_field(out, 1, &raw);
        }
        _ => match json {
            Value::Object(map) => {
                for field in message.fields() {
                    let go = go_field(message, &field);
                    let value = if go.inline {
                        // An embedded struct's fields are the object's own.
                        Some(json)
                    } else {
                        map.get(field.name()).filter(|v| !v.is_null())
                    };
                    match value {
                        Some(value) => {
                            self::field(out, &field, value).map_err(|e| e.within(field.name()))?;
                        }
                        None if go.always => zero(out, &field),
                        None => {}
                    }
                }
            }
            _ => {
                return Err(ProtobufError::field(format!(
                    "a {} is a JSON object",
                    message.name()
                )));
            }
        },
    }
    Ok(())
}

/// Go's zero value of a field it writes always: an empty string, a zero, an empty
/// message (with its own fields at their zeros; a zero time is an empty message).
fn zero(out: &mut Vec<u8>, field: &FieldDescriptor) {
    let number = field.number();
    match field.kind() {
        Kind::String | Kind::Bytes => string_field(out, number, ""),
        Kind::Double => {
            encode_key(number, WireType::SixtyFourBit, out);
            out.extend_from_slice(&0f64.to_le_bytes());
        }
        Kind::Message(inner) if matches!(inner.full_name(), TIME | MICRO_TIME) => {
            bytes_field(out, number, &[]);
        }
        Kind::Message(inner) => {
            let mut bytes = Vec::with_capacity(64);
            message(&mut bytes, &inner, &Value::Object(serde_json::Map::new()))
                .expect("an empty object encodes");
            bytes_field(out, number, &bytes);
        }
        _ => varint_field(out, number, 0),
    }
}

/// Appends one field of any cardinality; a JSON null is an absent field.
pub(super) fn field(
    out: &mut Vec<u8>,
    field: &FieldDescriptor,
    json: &Value,
) -> Result<(), ProtobufError> {
    if json.is_null() {
        return Ok(());
    }
    if field.is_map() {
        let Kind::Message(entry) = field.kind() else {
            unreachable!("a map field's kind is its entry message");
        };
        let Value::Object(map) = json else {
            return Err(ProtobufError::field("a map is a JSON object"));
        };
        let value_field = entry.map_entry_value_field();
        // serde_json's map iterates its keys sorted, as Go writes a map.
        for (key, value) in map {
            let mut pair = Vec::with_capacity(key.len() + 16);
            string_field(&mut pair, 1, key);
            single(&mut pair, 2, &value_field.kind(), value).map_err(|e| e.within(key))?;
            bytes_field(out, field.number(), &pair);
        }
        Ok(())
    } else if field.is_list() {
        let Value::Array(items) = json else {
            return Err(ProtobufError::field("a repeated field is a JSON array"));
        };
        for (i, item) in items.iter().enumerate() {
            single(out, field.number(), &field.kind(), item)
                .map_err(|e| e.within(&format!("[{i}]")))?;
        }
        Ok(())
    } else {
        single(out, field.number(), &field.kind(), json)
    }
}

/// Appends field `number` holding one value of `kind`.
fn single(out: &mut Vec<u8>, number: u32, kind: &Kind, json: &Value) -> Result<(), ProtobufError> {
    let wrong = |what: &str| ProtobufError::field(format!("expected {what}, found {json}"));
    match kind {
        Kind::String => string_field(out, number, json.as_str().ok_or_else(|| wrong("a string"))?),
        Kind::Bytes => {
            let text = json.as_str().ok_or_else(|| wrong("base64 text"))?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|e| ProtobufError::field(format!("not base64: {e}")))?;
            bytes_field(out, number, &bytes);
        }
        Kind::Bool => varint_field(
            out,
            number,
            u64::from(json.as_bool().ok_or_else(|| wrong("a boolean"))?),
        ),
        Kind::Int32 | Kind::Int64 => {
            let n = json.as_i64().ok_or_else(|| wrong("an integer"))?;
            // A negative int32 is written sign-extended to ten bytes, as int64.
            varint_field(out, number, n as u64);
        }
        Kind::Uint32 | Kind::Uint64 => {
            varint_field(
                out,
                number,
                json.as_u64().ok_or_else(|| wrong("an unsigned integer"))?,
            );
        }
        Kind::Double => {
            let n = json.as_f64().ok_or_else(|| wrong("a number"))?;
            encode_key(number, WireType::SixtyFourBit, out);
            out.extend_from_slice(&n.to_le_bytes());
        }
        Kind::Message(inner) => {
            let mut bytes = Vec::with_capacity(256);
            message(&mut bytes, inner, json)?;
            bytes_field(out, number, &bytes);
        }
        other => {
            return Err(ProtobufError::field(format!(
                "{other:?} fields are not in Kubernetes' messages"
            )));
        }
    }
    Ok(())
}

/// `(seconds, nanos)` of an RFC 3339 time (`2026-11-25T10:00:00Z`, with a fraction for a
/// MicroTime).
fn time(json: &Value) -> Result<(i64, u32), ProtobufError> {
    let text = json
        .as_str()
        .ok_or_else(|| ProtobufError::field("a time is an RFC 3339 string"))?;
    let at = humantime::parse_rfc3339(text)
        .map_err(|e| ProtobufError::field(format!("{text:?} is not an RFC 3339 time: {e}")))?;
    let since = at
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|_| ProtobufError::field(format!("{text:?} is before 1970")))?;
    Ok((since.as_secs() as i64, since.subsec_nanos()))
}

pub(super) fn string_field(out: &mut Vec<u8>, number: u32, text: &str) {
    bytes_field(out, number, text.as_bytes());
}

pub(super) fn bytes_field(out: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    encode_key(number, WireType::LengthDelimited, out);
    encode_varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}
