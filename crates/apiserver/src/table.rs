//! Server-side tables (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`), which
//! `kubectl get` asks for first: the columns kube-apiserver's printers give each kind
//! ([`super::printers`]), one row per object, and each row's object as `includeObject` asks (its
//! metadata by default). A watch's first event carries the column definitions, later ones
//! `null`, as kube-apiserver sends them.
//!
//! Only kubectl asks for tables, never an informer, so no scenario's figures go through
//! here; a row is rendered from the object decoded whole.

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::generate::Generator;
use super::printers;
use super::version::Version;
use scenario::ObjectKind;

pub(super) use super::query::Include;

/// The `kind`'s column definitions, as a JSON array: its printer's ([`printers`]), a
/// sampled kind's too where it is one of Kubernetes' own (a Service, a Job).
pub(super) fn columns(kind: ObjectKind) -> Value {
    printers::columns(kind.group(), kind.as_str())
}

/// kube-apiserver's namespace table: NAME, STATUS, AGE; `metadata` as [`of_values`]
/// takes it.
#[cfg(feature = "server")]
pub(super) fn of_namespaces(
    namespaces: &[Value],
    include: Include,
    metadata: Option<Value>,
) -> Value {
    of_values(
        namespaces,
        printers::columns("", "Namespace"),
        |namespace, now| printers::cells("", "Namespace", namespace, now),
        include,
        metadata,
    )
}

/// The table of objects kept as JSON (namespaces, Leases, Events): `columns`, and a row
/// per object of its `cells` with what `include` asks of the object; `metadata` is the
/// list's, or for one object (`None`) its resourceVersion.
#[cfg(feature = "server")]
pub(super) fn of_values(
    objects: &[Value],
    columns: Value,
    cells: impl Fn(&Value, Timestamp) -> Vec<Value>,
    include: Include,
    metadata: Option<Value>,
) -> Value {
    let now = Timestamp::now();
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let object = match include {
                Include::None => Value::Null,
                Include::Metadata => metadata_only(o),
                Include::Object => o.clone(),
            };
            json!({"cells": cells(o, now), "object": object})
        })
        .collect();
    let metadata = metadata.unwrap_or_else(|| {
        let version = objects.first().map(|o| &o["metadata"]["resourceVersion"]);
        json!({"resourceVersion": version.cloned().unwrap_or(Value::Null)})
    });
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": metadata,
           "columnDefinitions": columns, "rows": rows})
}

/// An object kept as JSON as a `PartialObjectMetadata`: its metadata alone.
#[cfg(feature = "server")]
pub(super) fn metadata_only(object: &Value) -> Value {
    json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
           "metadata": object["metadata"]})
}

/// Appends a Table of one object (a GET, or a watch event's object) to `buf`; with
/// `with_columns` false its `columnDefinitions` are `null`.
pub(super) fn write_one(
    buf: &mut Vec<u8>,
    generator: &Generator,
    version: &Version,
    include: Include,
    with_columns: bool,
) {
    let kind = generator.spec().kind;
    let table = json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": version.id.resource_version.to_string()},
        "columnDefinitions": if with_columns { columns(kind) } else { Value::Null },
        "rows": [row(generator, version, include, Timestamp::now())],
    });
    serde_json::to_writer(buf, &table).expect("a table serializes");
}

/// Appends one row of a LIST's table to `buf`.
pub(super) fn write_row(
    buf: &mut Vec<u8>,
    generator: &Generator,
    version: &Version,
    include: Include,
) {
    let row = row(generator, version, include, Timestamp::now());
    serde_json::to_writer(buf, &row).expect("a row serializes");
}

/// A LIST's table up to its first row: kind, `metadata` (given as JSON) and the columns.
pub(super) fn list_head(kind: ObjectKind, metadata: &str) -> String {
    format!(
        r#"{{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{metadata},"columnDefinitions":{},"rows":["#,
        columns(kind)
    )
}

/// A watch bookmark's Table: no rows, the resourceVersion (and annotations) in its
/// metadata.
pub(super) fn bookmark(metadata: Value) -> Value {
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": metadata,
           "columnDefinitions": null, "rows": []})
}

fn row(generator: &Generator, version: &Version, include: Include, now: Timestamp) -> Value {
    let object = version.to_value(generator);
    let cells = cells(generator.spec().kind, &object, now);
    let object = match include {
        Include::None => Value::Null,
        Include::Object => object,
        Include::Metadata => {
            let mut buf = Vec::new();
            version.write_metadata(&mut buf, generator);
            serde_json::from_slice(&buf).expect("the server's metadata is JSON")
        }
    };
    json!({"cells": cells, "object": object})
}

/// The cells of `object`'s row, as kube-apiserver's printers fill them.
pub(super) fn cells(kind: ObjectKind, object: &Value, now: Timestamp) -> Vec<Value> {
    printers::cells(kind.group(), kind.as_str(), object, now)
}
