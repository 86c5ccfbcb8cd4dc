//! A message's protobuf with holes: what every object of a class writes, ready to take
//! each object's values without reading any JSON.
//!
//! The generator writes a class's JSON once with markers for values (see
//! `generate/template.rs`); encoding that JSON gives the class's protobuf with the same
//! markers, found here field by field by the message's descriptor: in strings (and JSON
//! kept as bytes) as the JSON writes them, in bytes fields as their raw bytes, and as
//! whole varints (integers, a `Time`'s seconds). What holds no marker is kept as literal
//! bytes; a length-delimited field that holds one keeps its key and has its length
//! computed per object, since a value's length moves every enclosing length.
//!
//! A value that could reorder the message (a map's key: Go writes entries sorted by key)
//! cannot be a hole, and a marker the encoding did not keep whole (an integer written as
//! a double, say) leaves the class without a skeleton: its objects take the JSON path.

use prost::encoding::{
    WireType, decode_key, decode_varint, encode_key, encode_varint, encoded_len_varint, key_len,
};
use prost_reflect::{Kind, MessageDescriptor};

use super::{Message, ProtobufError, encode_message, message_for, plan_for};

/// How a hole's value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HoleAs {
    /// As its JSON writes it inside a string (a string field, or JSON kept as bytes).
    Text,
    /// As raw bytes (a bytes field, base64 in JSON).
    Bytes,
    /// As a whole varint field's value.
    Varint,
}

/// Finds the markers of holes in a class's protobuf.
pub(crate) trait Markers {
    /// The hole whose marker starts at `content[at..]` in a string's text, and the
    /// marker's length.
    fn in_text(&self, content: &[u8], at: usize) -> Option<(u32, usize)>;
    /// The hole whose marker starts at `content[at..]` in a bytes field, and its length.
    fn in_bytes(&self, content: &[u8], at: usize) -> Option<(u32, usize)>;
    /// The hole a varint's value marks.
    fn in_varint(&self, value: u64) -> Option<u32>;
}

/// One object's values for the holes of its class's skeleton.
pub(crate) trait Values {
    /// How many bytes hole `n` takes written `how`.
    fn len(&self, n: u32, how: HoleAs) -> usize;
    /// Appends hole `n`'s value written `how`.
    fn write(&self, n: u32, how: HoleAs, out: &mut Vec<u8>);
}

#[derive(Debug, Clone, Copy)]
enum Part {
    /// `literal[start..end]`.
    Literal {
        start: u32,
        end: u32,
    },
    Hole {
        n: u32,
        how: HoleAs,
    },
    /// A length-delimited field's key and length: its content is the parts up to the
    /// matching `Close`.
    Open {
        number: u32,
    },
    Close {
        number: u32,
    },
}

/// Deepest nesting of length-delimited fields with holes in them (a generated pod's
/// holes sit a few messages deep).
const MAX_DEPTH: usize = 16;

/// A message of one class of objects: literal bytes, holes, and the fields whose length
/// depends on them.
#[derive(Debug)]
pub(crate) struct Skeleton {
    literal: Vec<u8>,
    parts: Vec<Part>,
    /// How many `Open` parts.
    opens: usize,
    /// How deep they nest, at most [`MAX_DEPTH`].
    depth: usize,
}

impl Skeleton {
    /// The skeleton of `json` (an object of `kind` in `api_version`, with markers
    /// `markers` finds) as `kind`'s message; an error says why the class cannot have one.
    pub(crate) fn new(
        api_version: &str,
        kind: &str,
        json: &[u8],
        markers: &impl Markers,
    ) -> Result<Skeleton, ProtobufError> {
        let mut bytes = Vec::with_capacity(json.len());
        encode_message(plan_for(api_version, kind)?, json, &mut bytes)?;
        let mut builder = Builder::default();
        builder.message(&message_for(api_version, kind)?, &bytes, markers)?;
        debug_assert!(builder.stack.is_empty());
        Ok(Skeleton {
            opens: builder.opens(),
            depth: builder.depth,
            literal: builder.literal,
            parts: builder.parts,
        })
    }

    /// This message as field `number` of a message that has nothing else
    /// (`PartialObjectMetadata` around an `ObjectMeta`).
    pub(crate) fn within(mut self, number: u32) -> Result<Skeleton, ProtobufError> {
        if self.depth == MAX_DEPTH {
            return Err(too_deep());
        }
        self.parts.insert(0, Part::Open { number });
        self.parts.push(Part::Close { number });
        self.opens += 1;
        self.depth += 1;
        Ok(self)
    }

    /// Every hole's number, as often as it occurs.
    pub(crate) fn holes(&self) -> impl Iterator<Item = u32> + '_ {
        self.parts.iter().filter_map(|part| match part {
            Part::Hole { n, .. } => Some(*n),
            _ => None,
        })
    }

    /// The message with `values` in its holes.
    pub(crate) fn fill<V: Values>(&self, values: V) -> Filled<'_, V> {
        let mut lens = vec![0u32; self.opens];
        let mut stack = [(0usize, 0usize); MAX_DEPTH];
        let (mut depth, mut opened, mut len) = (0, 0, 0usize);
        for part in &self.parts {
            match *part {
                Part::Literal { start, end } => len += (end - start) as usize,
                Part::Hole { n, how } => len += values.len(n, how),
                Part::Open { .. } => {
                    stack[depth] = (opened, len);
                    (depth, opened, len) = (depth + 1, opened + 1, 0);
                }
                Part::Close { number } => {
                    depth -= 1;
                    let (index, outer) = stack[depth];
                    lens[index] = u32::try_from(len).expect("an object is under 4 GiB");
                    len = outer + key_len(number) + encoded_len_varint(len as u64) + len;
                }
            }
        }
        Filled {
            skeleton: self,
            values,
            lens,
            len,
        }
    }
}

/// A skeleton with one object's values: its length known before its bytes are written.
#[derive(Debug)]
pub(crate) struct Filled<'s, V> {
    skeleton: &'s Skeleton,
    values: V,
    /// The content length of each `Open` part, in order.
    lens: Vec<u32>,
    len: usize,
}

impl<V: Values> Message for Filled<'_, V> {
    fn encoded_len(&self) -> usize {
        self.len
    }

    fn write_to(&self, out: &mut Vec<u8>) {
        let Skeleton { literal, parts, .. } = self.skeleton;
        out.reserve(self.len);
        let mut lens = self.lens.iter();
        for part in parts {
            match *part {
                Part::Literal { start, end } => {
                    out.extend_from_slice(&literal[start as usize..end as usize]);
                }
                Part::Hole { n, how } => self.values.write(n, how, out),
                Part::Open { number } => {
                    encode_key(number, WireType::LengthDelimited, out);
                    let len = lens.next().expect("a length per open field");
                    encode_varint(u64::from(*len), out);
                }
                Part::Close { .. } => {}
            }
        }
    }
}

#[derive(Debug, Default)]
struct Builder {
    literal: Vec<u8>,
    parts: Vec<Part>,
    /// The open fields' indexes in `parts`.
    stack: Vec<usize>,
    /// The deepest `stack` has been.
    depth: usize,
}

fn refused(why: impl Into<String>) -> ProtobufError {
    ProtobufError::field(why)
}

fn too_deep() -> ProtobufError {
    refused(format!("holes nested deeper than {MAX_DEPTH} messages"))
}

impl Builder {
    fn opens(&self) -> usize {
        self.parts
            .iter()
            .filter(|p| matches!(p, Part::Open { .. }))
            .count()
    }

    fn push_literal(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let start = self.literal.len() as u32;
        self.literal.extend_from_slice(bytes);
        let end = self.literal.len() as u32;
        match self.parts.last_mut() {
            Some(Part::Literal { end: last, .. }) if *last == start => *last = end,
            _ => self.parts.push(Part::Literal { start, end }),
        }
    }

    fn open(&mut self, number: u32) -> Result<(), ProtobufError> {
        if self.stack.len() == MAX_DEPTH {
            return Err(too_deep());
        }
        self.stack.push(self.parts.len());
        self.parts.push(Part::Open { number });
        self.depth = self.depth.max(self.stack.len());
        Ok(())
    }

    /// Closes the innermost open field: back to literal bytes if nothing in it is a hole.
    fn close(&mut self, number: u32) {
        let at = self.stack.pop().expect("a field is open");
        let content = &self.parts[at + 1..];
        if content.iter().any(|p| !matches!(p, Part::Literal { .. })) {
            self.parts.push(Part::Close { number });
            return;
        }
        // Literal parts only: their bytes are the tail of `literal`.
        let from = match content.first() {
            Some(Part::Literal { start, .. }) => *start as usize,
            _ => self.literal.len(),
        };
        let bytes = self.literal.split_off(from);
        self.parts.truncate(at);
        let mut field = Vec::with_capacity(bytes.len() + 8);
        super::encode::bytes_field(&mut field, number, &bytes);
        self.push_literal(&field);
    }

    /// Splits `bytes`, the fields of `message`, into literals and holes.
    fn message(
        &mut self,
        message: &MessageDescriptor,
        mut bytes: &[u8],
        markers: &impl Markers,
    ) -> Result<(), ProtobufError> {
        let malformed = |e: prost::DecodeError| ProtobufError::Decode(e.to_string());
        while !bytes.is_empty() {
            let field_start = bytes;
            let (number, wire_type) = decode_key(&mut bytes).map_err(malformed)?;
            let key = &field_start[..field_start.len() - bytes.len()];
            match wire_type {
                WireType::Varint => {
                    let value = decode_varint(&mut bytes).map_err(malformed)?;
                    let field = &field_start[..field_start.len() - bytes.len()];
                    match markers.in_varint(value) {
                        Some(n) => {
                            self.push_literal(key);
                            let how = HoleAs::Varint;
                            self.parts.push(Part::Hole { n, how });
                        }
                        None => self.push_literal(field),
                    }
                }
                WireType::LengthDelimited => {
                    let len = decode_varint(&mut bytes).map_err(malformed)? as usize;
                    let cut_short =
                        || ProtobufError::Decode(format!("field {number} is cut short"));
                    let content = bytes.get(..len).ok_or_else(cut_short)?;
                    bytes = &bytes[len..];
                    let field = &field_start[..field_start.len() - bytes.len()];
                    self.delimited(message, number, field, content, markers)?;
                }
                WireType::SixtyFourBit | WireType::ThirtyTwoBit => {
                    let width = match wire_type {
                        WireType::SixtyFourBit => 8,
                        _ => 4,
                    };
                    let cut_short =
                        || ProtobufError::Decode(format!("field {number} is cut short"));
                    bytes = bytes.get(width..).ok_or_else(cut_short)?;
                    self.push_literal(&field_start[..field_start.len() - bytes.len()]);
                }
                other => return Err(ProtobufError::Decode(format!("wire type {other:?}"))),
            }
        }
        Ok(())
    }

    /// A length-delimited field of `message`, number `number`: `field` whole, `content`
    /// after its key and length.
    fn delimited(
        &mut self,
        message: &MessageDescriptor,
        number: u32,
        field: &[u8],
        content: &[u8],
        markers: &impl Markers,
    ) -> Result<(), ProtobufError> {
        match message.get_field(number).map(|f| f.kind()) {
            Some(Kind::Message(inner)) => {
                self.open(number)?;
                self.message(&inner, content, markers)?;
                self.close(number);
            }
            // Go writes a map's entries sorted by key: a key must not vary.
            Some(Kind::String | Kind::Bytes) if message.is_map_entry() && number == 1 => {
                self.no_holes(content, markers, "a map's key")?;
                self.push_literal(field);
            }
            Some(kind @ (Kind::String | Kind::Bytes)) => {
                self.open(number)?;
                self.content(content, markers, kind == Kind::Bytes);
                self.close(number);
            }
            _ => {
                self.no_holes(content, markers, "a packed or unknown field")?;
                self.push_literal(field);
            }
        }
        Ok(())
    }

    /// A string's or bytes field's content: text with markers in it, and (bytes) raw
    /// markers.
    fn content(&mut self, content: &[u8], markers: &impl Markers, bytes: bool) {
        let (mut at, mut run) = (0, 0);
        while at < content.len() {
            let found = markers
                .in_text(content, at)
                .map(|(n, len)| (n, len, HoleAs::Text))
                .or_else(|| {
                    bytes
                        .then(|| markers.in_bytes(content, at))
                        .flatten()
                        .map(|(n, len)| (n, len, HoleAs::Bytes))
                });
            match found {
                Some((n, len, how)) => {
                    self.push_literal(&content[run..at]);
                    self.parts.push(Part::Hole { n, how });
                    at += len;
                    run = at;
                }
                None => at += 1,
            }
        }
        self.push_literal(&content[run..]);
    }

    fn no_holes(
        &self,
        content: &[u8],
        markers: &impl Markers,
        what: &str,
    ) -> Result<(), ProtobufError> {
        let marked = (0..content.len()).any(|at| {
            markers.in_text(content, at).is_some() || markers.in_bytes(content, at).is_some()
        });
        match marked {
            true => Err(refused(format!("{what} holds a hole"))),
            false => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text markers `@n@` (one digit), values written as they are.
    struct At;

    impl Markers for At {
        fn in_text(&self, content: &[u8], at: usize) -> Option<(u32, usize)> {
            match content.get(at..at + 3)? {
                [b'@', n @ b'0'..=b'9', b'@'] => Some((u32::from(n - b'0'), 3)),
                _ => None,
            }
        }
        fn in_bytes(&self, _: &[u8], _: usize) -> Option<(u32, usize)> {
            None
        }
        fn in_varint(&self, _: u64) -> Option<u32> {
            None
        }
    }

    struct Texts(Vec<String>);

    impl Values for Texts {
        fn len(&self, n: u32, _: HoleAs) -> usize {
            self.0[n as usize].len()
        }
        fn write(&self, n: u32, _: HoleAs, out: &mut Vec<u8>) {
            out.extend_from_slice(self.0[n as usize].as_bytes());
        }
    }

    fn encoded(json: &str) -> Vec<u8> {
        let mut out = Vec::new();
        encode_message(
            plan_for("v1", "ConfigMap").unwrap(),
            json.as_bytes(),
            &mut out,
        )
        .unwrap();
        out
    }

    #[test]
    fn holes_take_values_of_any_length_and_the_lengths_around_them_follow() {
        let marked = r#"{"metadata":{"name":"@0@","namespace":"ns","labels":{"app":"x-@1@"}},"data":{"k":"v"}}"#;
        let skeleton = Skeleton::new("v1", "ConfigMap", marked.as_bytes(), &At).unwrap();
        assert_eq!(skeleton.holes().collect::<Vec<_>>(), [0, 1]);
        let long = "a".repeat(300);
        for (name, app) in [("web", "1"), (long.as_str(), "")] {
            let filled = skeleton.fill(Texts(vec![name.to_owned(), app.to_owned()]));
            let mut out = Vec::new();
            filled.write_to(&mut out);
            assert_eq!(out.len(), filled.encoded_len());
            let json = marked.replace("@0@", name).replace("@1@", app);
            assert_eq!(out, encoded(&json), "{name:?} {app:?}");
        }
    }

    #[test]
    fn a_message_without_holes_is_one_literal() {
        let json = r#"{"metadata":{"name":"web","namespace":"ns"},"data":{"k":"v"}}"#;
        let skeleton = Skeleton::new("v1", "ConfigMap", json.as_bytes(), &At).unwrap();
        assert!(matches!(skeleton.parts[..], [Part::Literal { .. }]));
        let mut out = Vec::new();
        skeleton.fill(Texts(vec![])).write_to(&mut out);
        assert_eq!(out, encoded(json));
    }

    #[test]
    fn a_hole_in_a_map_key_is_refused() {
        // Go sorts a map's entries by key: a key that varies could move its entry.
        let marked = r#"{"metadata":{"name":"web","labels":{"@0@":"x","b":"y"}}}"#;
        let refused = Skeleton::new("v1", "ConfigMap", marked.as_bytes(), &At).unwrap_err();
        assert!(
            refused.to_string().contains("a map's key holds a hole"),
            "{refused}"
        );
    }
}
