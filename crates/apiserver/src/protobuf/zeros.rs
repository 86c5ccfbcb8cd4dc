//! The fields Go's JSON writes at their zero, put into an object that lacks them.
//!
//! kube-apiserver decodes what a client writes into Go's types and writes them back as
//! Go's JSON, so an object read back carries every field that is no pointer, slice or
//! map, even where the client sent none: a struct as `{}` (a container's `resources`, a
//! container status's `lastState`), a zero time as `null` (a condition's
//! `lastProbeTime`), a string or number without `omitempty` as `""` or `0`. Fields Go
//! leaves out at their zero (`omitempty` scalars, `omitzero`) stay out, and those a client
//! sent at their zero are taken out as Go's `omitempty` drops them: an empty list or map
//! (`"finalizers": []`, `"labels": {}`), a value type's `""`, `0` or `false`. The table of
//! which is which is proto/go-fields.tsv, as for the protobuf wire.

use serde_json::{Map, Value};

use super::plan::{FieldPlan, Plans, Scalar, Shape, Special};
use super::{PLANS, ProtobufError, plan_for};

/// `document` (an object with its `apiVersion` and `kind`) with the fields Go writes at
/// their zero filled in where it has none, at any depth.
pub(crate) fn with_go_zeros(document: Value) -> Result<Value, ProtobufError> {
    filled(document, Nil::LeftOut)
}

/// `document` as kube-apiserver answers with it once it is stored: as [`with_go_zeros`]
/// fills it, and with `null` for each slice or map without `omitempty` that is unset or
/// empty (`"rules": []` of a Role), as Go decodes the protobuf etcd keeps a built-in kind
/// in, where an empty list is no list. For the records ([`super::super::records`]),
/// which no report's figure reads.
pub(crate) fn as_stored(document: Value) -> Result<Value, ProtobufError> {
    filled(document, Nil::Null)
}

/// The empty object of a kind (`apiVersion`, `kind`) as Go's JSON writes it: every field
/// [`with_go_zeros`] fills, and `null` for each slice or map without `omitempty` (a pod
/// spec's `containers`), which a stored object always has but the empty one does not.
pub(crate) fn go_zero_object(api_version: &str, kind: &str) -> Result<Value, ProtobufError> {
    let empty = serde_json::json!({"apiVersion": api_version, "kind": kind});
    filled(empty, Nil::Null)
}

/// What is written for a nil slice or map that Go does not leave out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Nil {
    /// Nothing: an unset one stays out, an empty one stays empty.
    LeftOut,
    /// `null`, for an unset one and an empty one alike.
    Null,
}

fn filled(mut document: Value, nil: Nil) -> Result<Value, ProtobufError> {
    let text = |field: &str| document[field].as_str().unwrap_or_default().to_owned();
    let plan = plan_for(&text("apiVersion"), &text("kind"))?;
    fill(&PLANS, plan, &mut document, nil);
    Ok(document)
}

/// Fills the zeros of message `plan` into `value`, its JSON, and into what it holds.
fn fill(plans: &Plans, plan: usize, value: &mut Value, nil: Nil) {
    let message = &plans.messages[plan];
    if message.special != Special::None {
        return;
    }
    let Some(object) = value.as_object_mut() else {
        return;
    };
    for field in &message.fields {
        if field.go.omitempty && object.get(&*field.name).is_some_and(|v| empty(field, v)) {
            // Then filled again if Go writes it at its zero (a struct).
            object.remove(&*field.name);
        }
        let Scalar::Message(inner) = field.value else {
            if !object.contains_key(&*field.name)
                && let Some(zero) = zero(plans, field, nil)
            {
                object.insert(field.name.to_string(), zero);
            }
            continue;
        };
        if field.go.inline {
            // Embedded: its fields are the enclosing object's.
            let mut embedded = Value::Object(std::mem::take(object));
            fill(plans, inner, &mut embedded, nil);
            *object = into_map(embedded);
            continue;
        }
        match (object.get_mut(&*field.name), field.shape) {
            (Some(present), Shape::Single) => fill(plans, inner, present, nil),
            (Some(empty @ (Value::Array(_) | Value::Object(_))), Shape::List | Shape::Map)
                if nil == Nil::Null
                    && !field.go.omitempty
                    && !field.go.omitzero
                    && (empty.as_array().is_some_and(Vec::is_empty)
                        || empty.as_object().is_some_and(Map::is_empty)) =>
            {
                *empty = Value::Null;
            }
            (Some(Value::Array(items)), Shape::List) => {
                items
                    .iter_mut()
                    .for_each(|item| fill(plans, inner, item, nil));
            }
            (Some(Value::Object(entries)), Shape::Map) => {
                entries
                    .values_mut()
                    .for_each(|v| fill(plans, inner, v, nil));
            }
            (Some(_), _) => {}
            (None, _) => {
                if let Some(zero) = zero(plans, field, nil) {
                    object.insert(field.name.to_string(), zero);
                }
            }
        }
    }
}

/// Whether `value` is what Go's `omitempty` leaves out for `field`: an empty slice or map,
/// and a value type's zero (`""`, `0`, `false`); never a struct, nor a pointer that is
/// set (to zero or not).
fn empty(field: &FieldPlan, value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        Value::Object(entries) => field.shape == Shape::Map && entries.is_empty(),
        Value::String(text) if field.value == Scalar::Bytes => text.is_empty(),
        _ if !field.go.always || field.shape != Shape::Single => false,
        Value::String(text) => text.is_empty() && field.value == Scalar::String,
        Value::Bool(set) => !set,
        Value::Number(n) => !matches!(field.value, Scalar::Message(_)) && n.as_f64() == Some(0.0),
    }
}

fn into_map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Go's JSON of `field` at its zero; `None` where Go leaves it out: a pointer, slice or
/// map (unless `nil` writes them), an `omitzero` field, and an `omitempty` one unless a
/// struct.
fn zero(plans: &Plans, field: &FieldPlan, nil: Nil) -> Option<Value> {
    let go = field.go;
    if field.shape != Shape::Single {
        let written = nil == Nil::Null && !go.omitempty && !go.omitzero;
        return written.then_some(Value::Null);
    }
    if !go.always || go.omitzero {
        return None;
    }
    Some(match field.value {
        Scalar::Message(inner) => match plans.messages[inner].special {
            Special::Time | Special::RawJson => Value::Null,
            Special::Quantity => Value::from("0"),
            Special::IntOrString => Value::from(0),
            Special::None => {
                let mut zero = Value::Object(Map::new());
                fill(plans, inner, &mut zero, nil);
                zero
            }
        },
        _ if go.omitempty => return None,
        Scalar::String | Scalar::Bytes => Value::from(""),
        Scalar::Bool => Value::from(false),
        Scalar::Int | Scalar::Uint | Scalar::Other => Value::from(0),
        Scalar::Double => Value::from(0.0),
    })
}
