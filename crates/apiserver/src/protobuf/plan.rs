//! Every message's fields read once from the descriptors and Go's table, so encoding walks
//! plain vectors: no descriptor lookups, no hashing per field.

use std::collections::HashMap;

use prost_reflect::{DescriptorPool, Kind, MessageDescriptor};

use super::encode::{
    FIELDS_V1, GoField, INT_OR_STRING, MICRO_TIME, QUANTITY, RAW_EXTENSION, TIME, go_field,
};

/// A message Kubernetes writes in a form of its own in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Special {
    None,
    /// `Time`, `MicroTime`: an RFC 3339 string.
    Time,
    /// `Quantity`: a string (or a number).
    Quantity,
    /// `IntOrString`: a number or a string.
    IntOrString,
    /// `FieldsV1`, `RawExtension`: any JSON, kept as its bytes.
    RawJson,
}

/// What one value of a field is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scalar {
    String,
    Bytes,
    Bool,
    /// int32 and int64: varints, negatives sign-extended.
    Int,
    /// uint32 and uint64.
    Uint,
    Double,
    /// A message: its plan's index.
    Message(usize),
    /// A kind Kubernetes' messages do not use (sint, fixed, float, enum).
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    Single,
    List,
    /// `map<string, value>`: entries of key 1 and value 2.
    Map,
}

#[derive(Debug)]
pub(super) struct FieldPlan {
    pub name: Box<str>,
    pub number: u32,
    pub shape: Shape,
    /// The value's kind (a map's value's).
    pub value: Scalar,
    pub go: GoField,
}

#[derive(Debug)]
pub(super) struct MessagePlan {
    pub special: Special,
    /// In field-number order, as Go writes them.
    pub fields: Vec<FieldPlan>,
    /// Field names, with their index in `fields`.
    by_name: HashMap<Box<str>, usize, foldhash::fast::FixedState>,
    /// Indexes of the fields embedded in the JSON object (`inline`).
    pub inline: Vec<usize>,
}

impl MessagePlan {
    /// The field of an embedded struct JSON names `key`: the embedding field's index in
    /// `fields`, the field's index in the embedded message and its plan.
    pub(super) fn inline_field<'p>(
        &self,
        plans: &'p Plans,
        key: &str,
    ) -> Option<(usize, usize, &'p FieldPlan)> {
        self.inline.iter().find_map(|&outer| {
            let Scalar::Message(inner) = self.fields[outer].value else {
                return None;
            };
            let inner = &plans.messages[inner];
            inner.field(key).map(|i| (outer, i, &inner.fields[i]))
        })
    }

    /// The index in `fields` of the field JSON names `key`.
    pub(super) fn field(&self, key: &str) -> Option<usize> {
        self.by_name.get(key).copied()
    }
}

#[derive(Debug)]
pub(super) struct Plans {
    pub messages: Vec<MessagePlan>,
    by_name: HashMap<String, usize>,
}

impl Plans {
    pub(super) fn new(pool: &DescriptorPool) -> Plans {
        let descriptors: Vec<MessageDescriptor> = pool.all_messages().collect();
        let by_name: HashMap<String, usize> = descriptors
            .iter()
            .enumerate()
            .map(|(i, m)| (m.full_name().to_owned(), i))
            .collect();
        let index = |m: &MessageDescriptor| by_name[m.full_name()];
        let scalar = |kind: Kind| match kind {
            Kind::String => Scalar::String,
            Kind::Bytes => Scalar::Bytes,
            Kind::Bool => Scalar::Bool,
            Kind::Int32 | Kind::Int64 => Scalar::Int,
            Kind::Uint32 | Kind::Uint64 => Scalar::Uint,
            Kind::Double => Scalar::Double,
            Kind::Message(m) => Scalar::Message(index(&m)),
            _ => Scalar::Other,
        };
        let messages = descriptors
            .iter()
            .map(|message| {
                let fields: Vec<FieldPlan> = message
                    .fields()
                    .map(|field| {
                        let (shape, value) = if field.is_map() {
                            let Kind::Message(entry) = field.kind() else {
                                unreachable!("a map field's kind is its entry")
                            };
                            (Shape::Map, scalar(entry.map_entry_value_field().kind()))
                        } else if field.is_list() {
                            (Shape::List, scalar(field.kind()))
                        } else {
                            (Shape::Single, scalar(field.kind()))
                        };
                        FieldPlan {
                            name: field.name().into(),
                            number: field.number(),
                            shape,
                            value,
                            go: go_field(message, &field),
                        }
                    })
                    .collect();
                let by_name = fields
                    .iter()
                    .enumerate()
                    .map(|(i, f)| (f.name.clone(), i))
                    .collect();
                let inline = (0..fields.len()).filter(|&i| fields[i].go.inline).collect();
                MessagePlan {
                    special: match message.full_name() {
                        TIME | MICRO_TIME => Special::Time,
                        QUANTITY => Special::Quantity,
                        INT_OR_STRING => Special::IntOrString,
                        FIELDS_V1 | RAW_EXTENSION => Special::RawJson,
                        _ => Special::None,
                    },
                    fields,
                    by_name,
                    inline,
                }
            })
            .collect();
        Plans { messages, by_name }
    }

    /// The plan of the message named `full_name`.
    pub(super) fn index(&self, full_name: &str) -> Option<usize> {
        self.by_name.get(full_name).copied()
    }
}
