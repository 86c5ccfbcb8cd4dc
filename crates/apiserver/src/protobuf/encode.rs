//! What the protobuf wire knows of Kubernetes' types beyond their messages: the messages
//! written in forms of their own in JSON, Go's field rules, and the writing of a field.

use std::collections::HashMap;
use std::sync::LazyLock;

use prost::encoding::{WireType, encode_key, encode_varint};
use prost_reflect::{FieldDescriptor, MessageDescriptor};

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
    /// Left out of JSON at its zero, unless it is a struct (Go's `omitempty`).
    pub omitempty: bool,
    /// Left out of JSON at its zero, a struct too (Go's `omitzero`).
    pub omitzero: bool,
}

static GO_FIELDS: LazyLock<HashMap<(&'static str, &'static str), GoField>> = LazyLock::new(|| {
    let table = include_str!("../../proto/go-fields.tsv");
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
                omitzero: has("omitzero"),
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

pub(super) fn string_field(out: &mut Vec<u8>, number: u32, text: &str) {
    bytes_field(out, number, text.as_bytes());
}

pub(super) fn bytes_field(out: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    encode_key(number, WireType::LengthDelimited, out);
    encode_varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}
