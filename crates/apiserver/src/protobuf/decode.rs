//! Protobuf to JSON: a decoded message as Go's JSON would write the same object, with
//! Kubernetes' own types in their JSON forms.
//!
//! Go writes every field that is not a pointer, at its zero value too; its JSON leaves
//! the `omitempty` ones out at their zero. So does this (proto/go-fields.tsv says which):
//! a kubectl-made object carries no `generateName: ""` or `stdin: false`, and a pointer's
//! zero (`replicas: 0`), which Go writes only when it is set, stays.

use base64::Engine as _;
use prost_reflect::{DynamicMessage, MapKey, ReflectMessage, Value as Field};
use serde_json::{Map, Value};

use super::ProtobufError;
use super::encode::{
    FIELDS_V1, INT_OR_STRING, MICRO_TIME, QUANTITY, RAW_EXTENSION, TIME, go_field,
};

/// `message` as JSON; `Value::Null` for a zero time.
pub(super) fn message(message: &DynamicMessage) -> Result<Value, ProtobufError> {
    let descriptor = message.descriptor();
    let get = |number: u32| message.get_field_by_number(number);
    Ok(match descriptor.full_name() {
        TIME | MICRO_TIME => {
            let seconds = get(1).and_then(|v| v.as_i64()).unwrap_or_default();
            let nanos = get(2).and_then(|v| v.as_i32()).unwrap_or_default();
            time(seconds, nanos, descriptor.full_name() == MICRO_TIME)
        }
        QUANTITY => Value::from(
            get(1)
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
        ),
        INT_OR_STRING => match get(1).and_then(|v| v.as_i64()).unwrap_or_default() {
            1 => Value::from(
                get(3)
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
            ),
            _ => Value::from(get(2).and_then(|v| v.as_i32()).unwrap_or_default()),
        },
        FIELDS_V1 | RAW_EXTENSION => {
            let raw = get(1)
                .and_then(|v| v.as_bytes().cloned())
                .unwrap_or_default();
            if raw.is_empty() {
                Value::Null
            } else {
                serde_json::from_slice(&raw)
                    .map_err(|e| ProtobufError::field(format!("raw JSON does not parse: {e}")))?
            }
        }
        _ => {
            let mut object = Map::new();
            for (field, field_value) in message.fields() {
                let json = value(field_value).map_err(|e| e.within(field.name()))?;
                let go = go_field(&descriptor, &field);
                if go.inline {
                    if let Value::Object(embedded) = json {
                        object.extend(embedded);
                    }
                } else if !(json.is_null() || go.always && go.omitempty && is_zero(&json)) {
                    object.insert(field.name().to_owned(), json);
                }
            }
            Value::Object(object)
        }
    })
}

fn value(field: &Field) -> Result<Value, ProtobufError> {
    Ok(match field {
        Field::Bool(b) => Value::from(*b),
        Field::I32(n) => Value::from(*n),
        Field::I64(n) => Value::from(*n),
        Field::U32(n) => Value::from(*n),
        Field::U64(n) => Value::from(*n),
        Field::F32(n) => Value::from(*n),
        Field::F64(n) => Value::from(*n),
        Field::String(s) => Value::from(s.as_str()),
        Field::Bytes(b) => Value::from(base64::engine::general_purpose::STANDARD.encode(b)),
        Field::EnumNumber(n) => Value::from(*n),
        Field::Message(m) => message(m)?,
        Field::List(items) => Value::Array(items.iter().map(value).collect::<Result<_, _>>()?),
        Field::Map(entries) => {
            let mut object = Map::new();
            for (key, entry) in entries {
                let key = match key {
                    MapKey::String(s) => s.clone(),
                    other => format!("{other:?}"),
                };
                object.insert(key, value(entry)?);
            }
            Value::Object(object)
        }
    })
}

/// A scalar Go's JSON leaves out under `omitempty`: "", 0, false. (Structs it keeps.)
fn is_zero(json: &Value) -> bool {
    match json {
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Bool(b) => !b,
        _ => false,
    }
}

/// A time as Go's JSON writes it: RFC 3339 in seconds (`Time`) or microseconds
/// (`MicroTime`); Go's zero time, which Go writes as an empty message, is `null`.
fn time(seconds: i64, nanos: i32, micro: bool) -> Value {
    if seconds == 0 && nanos == 0 {
        return Value::Null;
    }
    let at = std::time::UNIX_EPOCH
        + std::time::Duration::new(seconds.max(0) as u64, nanos.max(0) as u32);
    let text = if micro {
        humantime::format_rfc3339_micros(at).to_string()
    } else {
        humantime::format_rfc3339_seconds(at).to_string()
    };
    Value::from(text)
}
