//! JSON to protobuf in one pass over the JSON text: serde reads the document, each message
//! is written as its keys come (a message's plan says which field a key is), then put in
//! Go's field-number order, and strings are copied from the text once. No tree of the
//! document is built: that would cost the server more than the client spends decoding.

use std::borrow::Cow;
use std::fmt;

use base64::Engine as _;
use prost::encoding::encode_varint;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::encode::{bytes_field, string_field};
use super::plan::{FieldPlan, MessagePlan, Plans, Scalar, Shape, Special};
use super::varint_field;

/// Separates the steps of an error's path in its message (see [`super::stream_error`]).
pub(super) const PATH: char = '\u{1f}';

/// Where one field's bytes are: its index in the message's plan and its range in the
/// output.
type Part = (usize, usize, usize);

/// Writes the JSON object `deserializer` reads as the fields of message `plan`, appended
/// to `out`.
pub(super) fn message<'de, D: Deserializer<'de>>(
    plans: &'static Plans,
    plan: usize,
    out: &mut Vec<u8>,
    deserializer: D,
) -> Result<(), D::Error> {
    ValueSeed {
        plans,
        out,
        number: None,
        kind: Scalar::Message(plan),
    }
    .deserialize(deserializer)
    .map(|_| ())
}

/// One value of a field: written with its key (`number`), or bare when `number` is
/// `None` (a document's top message). Answers whether anything was written (a JSON null
/// is an absent field).
struct ValueSeed<'o> {
    plans: &'static Plans,
    out: &'o mut Vec<u8>,
    number: Option<u32>,
    kind: Scalar,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(mut self, deserializer: D) -> Result<bool, D::Error> {
        if let Scalar::Message(plan) = self.kind
            && self.plans.messages[plan].special == Special::RawJson
        {
            // `FieldsV1`, `RawExtension`: the JSON text itself, as Go keeps it.
            let raw = <&RawValue as de::Deserialize>::deserialize(deserializer)?;
            if raw.get() == "null" {
                return Ok(false);
            }
            let start = self.out.len();
            bytes_field(self.out, 1, raw.get().as_bytes());
            self.wrap(start);
            return Ok(true);
        }
        deserializer.deserialize_any(self)
    }
}

impl ValueSeed<'_> {
    /// Makes what was written from `start` on the value of field `number`: its key and
    /// length go before it.
    fn wrap(&mut self, start: usize) {
        if let Some(number) = self.number {
            wrap(self.out, start, number);
        }
    }

    fn message_plan(&self) -> Option<&'static MessagePlan> {
        match self.kind {
            Scalar::Message(plan) => Some(&self.plans.messages[plan]),
            _ => None,
        }
    }

    fn wrong<E: de::Error>(&self, found: &str) -> E {
        let expected = match self.kind {
            Scalar::String | Scalar::Bytes => "a string",
            Scalar::Bool => "a boolean",
            Scalar::Int => "an integer",
            Scalar::Uint => "an unsigned integer",
            Scalar::Double => "a number",
            Scalar::Message(_) => match self.message_plan().map(|m| m.special) {
                Some(Special::Time) => "an RFC 3339 time",
                Some(Special::Quantity) => "a quantity",
                Some(Special::IntOrString) => "a number or a string",
                _ => "an object",
            },
            Scalar::Other => "a kind Kubernetes' messages do not use",
        };
        E::custom(format!("expected {expected}, found {found}"))
    }

    fn varint<E: de::Error>(self, value: u64, found: &str) -> Result<bool, E> {
        let number = self.number.unwrap_or_default();
        match self.kind {
            Scalar::Int | Scalar::Uint | Scalar::Bool => varint_field(self.out, number, value),
            Scalar::Message(_) => return self.special_number(value as i64, found),
            _ => return Err(self.wrong(found)),
        }
        Ok(true)
    }

    /// A number as a quantity or an int-or-string.
    fn special_number<E: de::Error>(mut self, n: i64, found: &str) -> Result<bool, E> {
        let start = self.out.len();
        match self.message_plan().map(|m| m.special) {
            Some(Special::Quantity) => string_field(self.out, 1, &n.to_string()),
            Some(Special::IntOrString) => {
                let int = i32::try_from(n)
                    .map_err(|_| E::custom(format!("{n} is not a 32-bit integer")))?;
                varint_field(self.out, 1, 0);
                varint_field(self.out, 2, int as u64);
                string_field(self.out, 3, "");
            }
            _ => return Err(self.wrong(found)),
        }
        self.wrap(start);
        Ok(true)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes field's JSON")
    }

    fn visit_unit<E>(self) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_none<E>(self) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<bool, E> {
        match self.kind {
            Scalar::Bool => self.varint(u64::from(b), "a boolean"),
            _ => Err(self.wrong("a boolean")),
        }
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<bool, E> {
        match self.kind {
            // A negative int32 is written sign-extended to ten bytes, as int64.
            Scalar::Int => self.varint(n as u64, "a number"),
            Scalar::Uint if n >= 0 => self.varint(n as u64, "a number"),
            Scalar::Double => self.visit_f64(n as f64),
            Scalar::Message(_) => self.special_number(n, "a number"),
            _ => Err(self.wrong(&n.to_string())),
        }
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<bool, E> {
        match self.kind {
            Scalar::Int | Scalar::Uint => self.varint(n, "a number"),
            Scalar::Double => self.visit_f64(n as f64),
            Scalar::Message(_) => {
                let n = i64::try_from(n).map_err(|_| E::custom(format!("{n} is too large")))?;
                self.special_number(n, "a number")
            }
            _ => Err(self.wrong(&n.to_string())),
        }
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<bool, E> {
        match self.kind {
            Scalar::Double => {
                let number = self.number.unwrap_or_default();
                prost::encoding::encode_key(
                    number,
                    prost::encoding::WireType::SixtyFourBit,
                    self.out,
                );
                self.out.extend_from_slice(&n.to_le_bytes());
                Ok(true)
            }
            Scalar::Message(_)
                if self.message_plan().map(|m| m.special) == Some(Special::Quantity) =>
            {
                let start = self.out.len();
                string_field(self.out, 1, &n.to_string());
                let mut seed = self;
                seed.wrap(start);
                Ok(true)
            }
            _ => Err(self.wrong(&n.to_string())),
        }
    }

    fn visit_str<E: de::Error>(mut self, s: &str) -> Result<bool, E> {
        let number = self.number.unwrap_or_default();
        match self.kind {
            Scalar::String => string_field(self.out, number, s),
            Scalar::Bytes => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(s)
                    .map_err(|e| E::custom(format!("not base64: {e}")))?;
                bytes_field(self.out, number, &bytes);
            }
            Scalar::Message(_) => {
                let start = self.out.len();
                match self.message_plan().map(|m| m.special) {
                    Some(Special::Time) => {
                        let (seconds, nanos) = time(s).map_err(E::custom)?;
                        // Go's Timestamp writes both, nanos at zero too.
                        varint_field(self.out, 1, seconds as u64);
                        varint_field(self.out, 2, u64::from(nanos));
                    }
                    Some(Special::Quantity) => string_field(self.out, 1, s),
                    Some(Special::IntOrString) => {
                        varint_field(self.out, 1, 1);
                        varint_field(self.out, 2, 0);
                        string_field(self.out, 3, s);
                    }
                    _ => return Err(self.wrong(&format!("{s:?}"))),
                }
                self.wrap(start);
            }
            _ => return Err(self.wrong(&format!("{s:?}"))),
        }
        Ok(true)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<bool, A::Error> {
        Err(self.wrong("an array"))
    }

    fn visit_map<A: MapAccess<'de>>(mut self, map: A) -> Result<bool, A::Error> {
        let Some(message) = self.message_plan().filter(|m| m.special == Special::None) else {
            return Err(self.wrong("an object"));
        };
        let start = self.out.len();
        fields(self.plans, message, self.out, map)?;
        self.wrap(start);
        Ok(true)
    }
}

/// Writes an object's keys as `message`'s fields, then puts them in field-number order
/// with the fields Go writes always and the object lacks at their zero.
fn fields<'de, A: MapAccess<'de>>(
    plans: &'static Plans,
    message: &MessagePlan,
    out: &mut Vec<u8>,
    mut map: A,
) -> Result<(), A::Error> {
    let start = out.len();
    let mut parts: Vec<Part> = Vec::with_capacity(message.fields.len());
    // The fields of embedded structs, by the embedding field's index.
    let mut inline: Vec<(usize, Vec<Part>)> = Vec::new();
    while let Some(Key(key)) = map.next_key()? {
        let (index, field, into) = match message.field(&key) {
            Some(i) => (i, &message.fields[i], None),
            None => match message.inline_field(plans, &key) {
                Some((outer, i, inner)) => (i, inner, Some(outer)),
                None => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            },
        };
        let at = out.len();
        let wrote = map
            .next_value_seed(FieldSeed { plans, out, field })
            .map_err(|e| de::Error::custom(format!("{key}{PATH}{e}")))?;
        if !wrote {
            continue;
        }
        match into {
            None => parts.push((index, at, out.len())),
            Some(outer) => match inline.iter_mut().find(|(o, _)| *o == outer) {
                Some((_, inner)) => inner.push((index, at, out.len())),
                None => inline.push((outer, vec![(index, at, out.len())])),
            },
        }
    }
    for &outer in &message.inline {
        let inner_parts = inline
            .iter_mut()
            .find(|(o, _)| *o == outer)
            .map(|(_, p)| std::mem::take(p))
            .unwrap_or_default();
        let field = &message.fields[outer];
        let Scalar::Message(inner) = field.value else {
            continue;
        };
        let at = out.len();
        finish(plans, &plans.messages[inner], out, at, inner_parts);
        wrap(out, at, field.number);
        parts.push((outer, at, out.len()));
    }
    finish(plans, message, out, start, parts);
    Ok(())
}

/// Appends the zeros of `message`'s always-written fields missing from `parts`, then
/// rewrites `out[start..]` as the parts in field-number order.
fn finish(
    plans: &'static Plans,
    message: &MessagePlan,
    out: &mut Vec<u8>,
    start: usize,
    mut parts: Vec<Part>,
) {
    for (i, field) in message.fields.iter().enumerate() {
        if field.go.always && field.shape == Shape::Single && !parts.iter().any(|&(j, _, _)| j == i)
        {
            let at = out.len();
            zero(plans, out, field);
            parts.push((i, at, out.len()));
        }
    }
    parts.sort_by_key(|&(i, _, _)| i);
    // Already in order and back to back (no key was skipped between them): done.
    let mut next = start;
    if parts
        .iter()
        .all(|&(_, from, to)| std::mem::replace(&mut next, to) == from)
        && next == out.len()
    {
        return;
    }
    let mut ordered = Vec::with_capacity(out.len() - start);
    for (_, from, to) in parts {
        ordered.extend_from_slice(&out[from..to]);
    }
    out.truncate(start);
    out.extend_from_slice(&ordered);
}

/// Go's zero value of a field it writes always: an empty string, a zero, or a message at
/// its zero (its own always-written fields at theirs; a zero time and a raw extension are
/// empty, a quantity "0", an int-or-string 0).
fn zero(plans: &'static Plans, out: &mut Vec<u8>, field: &FieldPlan) {
    let number = field.number;
    match field.value {
        Scalar::String | Scalar::Bytes => string_field(out, number, ""),
        Scalar::Double => {
            prost::encoding::encode_key(number, prost::encoding::WireType::SixtyFourBit, out);
            out.extend_from_slice(&0f64.to_le_bytes());
        }
        Scalar::Message(plan) => {
            let at = out.len();
            let message = &plans.messages[plan];
            match message.special {
                Special::Time | Special::RawJson => {}
                Special::Quantity => string_field(out, 1, "0"),
                Special::IntOrString => {
                    varint_field(out, 1, 0);
                    varint_field(out, 2, 0);
                    string_field(out, 3, "");
                }
                Special::None => finish(plans, message, out, at, Vec::new()),
            }
            wrap(out, at, number);
        }
        Scalar::Bool | Scalar::Int | Scalar::Uint | Scalar::Other => varint_field(out, number, 0),
    }
}

/// A field's JSON value of any shape; answers whether anything was written.
struct FieldSeed<'o> {
    plans: &'static Plans,
    out: &'o mut Vec<u8>,
    field: &'o FieldPlan,
}

impl<'de> DeserializeSeed<'de> for FieldSeed<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        match self.field.shape {
            Shape::Single => ValueSeed {
                plans: self.plans,
                out: self.out,
                number: Some(self.field.number),
                kind: self.field.value,
            }
            .deserialize(deserializer),
            Shape::List | Shape::Map => deserializer.deserialize_any(self),
        }
    }
}

impl<'de> Visitor<'de> for FieldSeed<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.field.shape {
            Shape::Map => f.write_str("a JSON object"),
            _ => f.write_str("a JSON array"),
        }
    }

    fn visit_unit<E>(self) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        if self.field.shape != Shape::List {
            return Err(de::Error::custom("expected a JSON object, found an array"));
        }
        let mut i = 0;
        loop {
            let seed = ValueSeed {
                plans: self.plans,
                out: &mut *self.out,
                number: Some(self.field.number),
                kind: self.field.value,
            };
            match seq.next_element_seed(seed) {
                Ok(Some(_)) => i += 1,
                Ok(None) => break,
                Err(e) => return Err(de::Error::custom(format!("[{i}]{PATH}{e}"))),
            }
        }
        Ok(true)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        if self.field.shape != Shape::Map {
            return Err(de::Error::custom("expected a JSON array, found an object"));
        }
        let start = self.out.len();
        let mut entries: Vec<(Cow<'de, str>, usize, usize)> = Vec::new();
        while let Some(Key(key)) = map.next_key()? {
            let at = self.out.len();
            string_field(self.out, 1, &key);
            map.next_value_seed(ValueSeed {
                plans: self.plans,
                out: &mut *self.out,
                number: Some(2),
                kind: self.field.value,
            })
            .map_err(|e| de::Error::custom(format!("{key}{PATH}{e}")))?;
            wrap(self.out, at, self.field.number);
            entries.push((key, at, self.out.len()));
        }
        // Go writes a map's entries in the order of their keys.
        if !entries.is_sorted_by(|a, b| a.0 <= b.0) {
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let mut ordered = Vec::with_capacity(self.out.len() - start);
            for (_, from, to) in &entries {
                ordered.extend_from_slice(&self.out[*from..*to]);
            }
            self.out.truncate(start);
            self.out.extend_from_slice(&ordered);
        }
        Ok(true)
    }
}

/// An object's key, borrowed from the text when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Key<'de>, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// Makes `out[start..]` the value of length-delimited field `number`: its key and length
/// go before it.
pub(super) fn wrap(out: &mut Vec<u8>, start: usize, number: u32) {
    let mut head = [0u8; 16];
    let mut cursor = &mut head[..];
    prost::encoding::encode_key(
        number,
        prost::encoding::WireType::LengthDelimited,
        &mut cursor,
    );
    encode_varint((out.len() - start) as u64, &mut cursor);
    let head_len = 16 - cursor.len();
    let end = out.len();
    out.resize(end + head_len, 0);
    out.copy_within(start..end, start + head_len);
    out[start..start + head_len].copy_from_slice(&head[..head_len]);
}

/// `(seconds, nanos)` of an RFC 3339 time (`2026-11-25T10:00:00Z`, with a fraction for a
/// MicroTime).
fn time(text: &str) -> Result<(i64, u32), String> {
    let at = humantime::parse_rfc3339(text)
        .map_err(|e| format!("{text:?} is not an RFC 3339 time: {e}"))?;
    let since = at
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|_| format!("{text:?} is before 1970"))?;
    Ok((since.as_secs() as i64, since.subsec_nanos()))
}
