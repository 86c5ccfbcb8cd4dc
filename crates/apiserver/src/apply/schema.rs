//! The shape of each field of a kind, as server-side apply reads it: from the OpenAPI v3
//! schemas kube-apiserver v1.37 serves (proto/openapi/), with their
//! `x-kubernetes-list-type`, `x-kubernetes-list-map-keys` and `x-kubernetes-map-type`. A
//! kind without a schema here (a sampled custom resource) is deduced from its values, as
//! structured-merge-diff deduces an object that has no schema: maps merge key by key,
//! lists are atomic.

use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::discovery;
use scenario::ObjectKind;

/// A node of a schema: one kind's root, or a field's type within it.
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    /// A string, number, boolean, quantity or int-or-string: owned as one.
    Scalar,
    /// An object with named fields (`properties`); `atomic` when owned as one
    /// (`x-kubernetes-map-type: atomic`, a LabelSelector).
    Struct {
        fields: &'static Map<String, Value>,
        atomic: bool,
    },
    /// An object whose keys are data (`additionalProperties`: labels, `limits`).
    Map {
        values: &'static Value,
        atomic: bool,
    },
    /// A list: its items' schema and how its elements are told apart.
    List {
        items: &'static Value,
        kind: ListKind,
    },
    /// No schema: known from the value (a custom resource's fields).
    Deduced,
}

/// How a list merges (`x-kubernetes-list-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    /// Replaced whole: the default of a list without a list type.
    Atomic,
    /// A set of scalars, each owned on its own.
    Set,
    /// Elements told apart by the values of these fields (`x-kubernetes-list-map-keys`).
    Map(&'static [Value]),
}

impl Shape {
    /// The root of `kind`'s schema.
    pub fn of(kind: ObjectKind) -> Shape {
        let name = match kind {
            ObjectKind::Pod => "io.k8s.api.core.v1.Pod",
            ObjectKind::ConfigMap => "io.k8s.api.core.v1.ConfigMap",
            ObjectKind::Secret => "io.k8s.api.core.v1.Secret",
            ObjectKind::Node => "io.k8s.api.core.v1.Node",
            ObjectKind::Deployment => "io.k8s.api.apps.v1.Deployment",
            ObjectKind::Sampled(_) => return Shape::of_sampled(kind),
        };
        Shape::named(name)
    }

    /// A sampled kind's root: the schema of Kubernetes' own kind of its group, version
    /// and kind where it is one (a Job, a Role, a Service: `io.k8s.api.batch.v1.Job`,
    /// its `x-kubernetes-group-version-kind` the kind's); a custom resource is deduced.
    fn of_sampled(kind: ObjectKind) -> Shape {
        let (group, version) = (kind.group(), kind.version());
        let Some(package) = k8s::names::api_package(group) else {
            return Shape::Deduced;
        };
        let name = format!("io.k8s.api.{package}.{version}.{}", kind.as_str());
        let Some(schema) = schema(&name) else {
            return Shape::Deduced;
        };
        let own = schema["x-kubernetes-group-version-kind"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|gvk| {
                gvk["group"] == group && gvk["version"] == version && gvk["kind"] == kind.as_str()
            });
        match own {
            true => Shape::read(schema),
            false => Shape::Deduced,
        }
    }

    /// The root of the schema named `name` (`io.k8s.api.coordination.v1.Lease`); a name
    /// without a schema here is deduced.
    pub fn named(name: &str) -> Shape {
        schema(name).map_or(Shape::Deduced, Shape::read)
    }

    /// The shape of `schema`, a node of [`schemas`], read once per node and thread: a
    /// long list's elements ask for the same few nodes hundreds of thousands of times.
    fn read(schema: &'static Value) -> Shape {
        thread_local! {
            static READ: std::cell::RefCell<std::collections::HashMap<usize, Shape>> =
                std::cell::RefCell::default();
        }
        // The schemas are static and never change: a node's address names it.
        let at = std::ptr::from_ref(schema) as usize;
        if let Some(shape) = READ.with_borrow(|read| read.get(&at).copied()) {
            return shape;
        }
        let shape = Shape::read_anew(schema);
        READ.with_borrow_mut(|read| read.insert(at, shape));
        shape
    }

    fn read_anew(schema: &'static Value) -> Shape {
        if let Some(target) = reference(schema) {
            let name = target.trim_start_matches("#/components/schemas/");
            return self::schema(name).map_or(Shape::Deduced, Shape::read);
        }
        if schema.is_null() {
            return Shape::Deduced;
        }
        let atomic = schema["x-kubernetes-map-type"] == "atomic";
        if let Some(fields) = schema["properties"].as_object() {
            return Shape::Struct { fields, atomic };
        }
        if schema["additionalProperties"].is_object() {
            return Shape::Map {
                values: &schema["additionalProperties"],
                atomic,
            };
        }
        if schema["type"] == "array" {
            let kind = match schema["x-kubernetes-list-type"].as_str() {
                Some("set") => ListKind::Set,
                Some("map") => ListKind::Map(
                    schema["x-kubernetes-list-map-keys"]
                        .as_array()
                        .map_or(&[], Vec::as_slice),
                ),
                _ => ListKind::Atomic,
            };
            return Shape::List {
                items: &schema["items"],
                kind,
            };
        }
        if schema["type"] == "object" {
            // An object with no declared fields (`FieldsV1`, `RawExtension`).
            return Shape::Deduced;
        }
        Shape::Scalar
    }

    /// The shape of this node's field `name` (`None`: the schema declares no such field).
    pub fn field(self, name: &str) -> Option<Shape> {
        match self {
            Shape::Struct { fields, .. } => fields.get(name).map(Shape::read),
            Shape::Map { values, .. } => Some(Shape::read(values)),
            Shape::Deduced => Some(Shape::Deduced),
            Shape::Scalar | Shape::List { .. } => None,
        }
    }

    /// The strategic merge patch's tags of this struct's field `name`: its schema's
    /// `x-kubernetes-patch-strategy` (`merge`, `retainKeys`, both) and
    /// `x-kubernetes-patch-merge-key`, the Go type's `patchStrategy` and `patchMergeKey`.
    /// `None` for a field without them, and under a map or a deduced object.
    pub fn patch_tags(self, name: &str) -> Option<(&'static str, Option<&'static str>)> {
        let Shape::Struct { fields, .. } = self else {
            return None;
        };
        let field = fields.get(name)?;
        let strategy = field["x-kubernetes-patch-strategy"].as_str()?;
        Some((strategy, field["x-kubernetes-patch-merge-key"].as_str()))
    }

    /// The shape of this list's elements.
    pub fn items(self) -> Shape {
        match self {
            Shape::List { items, .. } => Shape::read(items),
            _ => Shape::Deduced,
        }
    }

    /// Whether the field `name` is declared by this node's schema (a struct's field, not a
    /// map's key or a deduced object's).
    pub fn declares(self, name: &str) -> bool {
        matches!(self, Shape::Struct { fields, .. } if fields.contains_key(name))
    }

    /// The default a list-map key field takes when an element leaves it out (a port's
    /// `protocol`: `TCP`).
    pub fn key_default(self, key: &str) -> Option<&'static Value> {
        match self {
            Shape::Struct { fields, .. } => fields.get(key).map(|f| &f["default"]),
            _ => None,
        }
        .filter(|v| !v.is_null())
    }

    /// This shape as `value` has it: a deduced node takes the form of its value (an
    /// object merges by key, a list is atomic).
    pub fn deduced(self, value: &Value) -> Shape {
        match (self, value) {
            (Shape::Deduced, Value::Object(_)) => Shape::Map {
                values: &DEDUCED,
                atomic: false,
            },
            (Shape::Deduced, Value::Array(_)) => Shape::List {
                items: &DEDUCED,
                kind: ListKind::Atomic,
            },
            (Shape::Deduced, _) => Shape::Scalar,
            _ => self,
        }
    }
}

/// The schema of a deduced node's fields and items: deduced again.
static DEDUCED: Value = Value::Null;

/// `$ref`, directly or as the one member of an `allOf` (`metadata`'s ObjectMeta).
fn reference(schema: &Value) -> Option<&str> {
    schema["$ref"].as_str().or_else(|| {
        schema["allOf"]
            .as_array()
            .filter(|all| all.len() == 1)
            .and_then(|all| all[0]["$ref"].as_str())
    })
}

/// The schema named `name`: of the groups served ([`schemas`]), or else of the other
/// groups' kinds ([`other_schemas`]).
fn schema(name: &str) -> Option<&'static Value> {
    schemas().get(name).or_else(|| other_schemas().get(name))
}

/// The schemas of every kind here and of what they refer to, by name: kube-apiserver's
/// core, apps, coordination and events documents in one (each repeats the schemas of
/// another group its kinds refer to, the same). Parsed on the first apply and kept.
fn schemas() -> &'static Map<String, Value> {
    static SCHEMAS: OnceLock<Map<String, Value>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let mut all = Map::new();
        for text in [
            discovery::CORE_SCHEMAS,
            discovery::APPS_SCHEMAS,
            discovery::COORDINATION_SCHEMAS,
            discovery::EVENTS_SCHEMAS,
        ] {
            let document: Map<String, Value> =
                serde_json::from_str(text).expect("the committed schemas are JSON");
            all.extend(document);
        }
        all
    })
}

/// The schemas of the kinds of kube-apiserver's other group versions (batch/v1,
/// networking.k8s.io/v1, rbac.authorization.k8s.io/v1...: proto/openapi/other-groups.json),
/// which only a sample holds. Parsed the first time a sample of one asks, and kept.
fn other_schemas() -> &'static Map<String, Value> {
    static OTHERS: OnceLock<Map<String, Value>> = OnceLock::new();
    OTHERS.get_or_init(|| {
        serde_json::from_str(include_str!("../../proto/openapi/other-groups.json"))
            .expect("the committed schemas are JSON")
    })
}
