//! `[objects]`: what the built-in apiserver generates, and their shape.

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::MAX_OBJECTS;
use super::error::{Problem, int_in};
use super::raw::RawObjects;

/// The objects the built-in apiserver generates, and their shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectSpec {
    /// Resource kind.
    pub kind: ObjectKind,
    /// Objects that exist when the first phase starts.
    pub count: u64,
    /// Seed of the generator: same seed, same objects, byte for byte.
    pub seed: u64,
    /// Namespaces the objects are spread over, round robin.
    pub namespaces: u32,
    /// Labels per object, beyond `app` and `pod-template-hash`.
    pub labels: u32,
    /// Annotations per object, beyond `kubectl.kubernetes.io/last-applied-configuration`.
    pub annotations: u32,
    /// Containers per pod.
    pub containers: u32,
    /// `metadata.managedFields` entries per object (0 = none).
    pub managed_fields: u32,
    /// Whether objects carry the `kubectl.kubernetes.io/last-applied-configuration` annotation.
    pub last_applied: bool,
    /// ConfigMap and Secret data entries: `None` for the default application config (a YAML
    /// file and two flat keys); `Some(n)` for a short per-object `config.yaml` and `n - 1`
    /// values of `data_bytes` bytes each (kube-runtime's benchmark shape is 2 and 128).
    #[serde(default)]
    pub data_keys: Option<u32>,
    /// Bytes of each value after the first when `data_keys` is set.
    #[serde(default = "default_data_bytes")]
    pub data_bytes: u32,
}

fn default_data_bytes() -> u32 {
    128
}

impl ObjectSpec {
    /// `count` pods of the default shape: what a scenario gets for every key it leaves out
    /// (a Deployment's pod with one container, about 7.3 KB of JSON).
    pub fn pods(count: u64) -> ObjectSpec {
        ObjectSpec {
            kind: ObjectKind::Pod,
            count,
            seed: 1,
            namespaces: 10,
            labels: 4,
            annotations: 2,
            containers: 1,
            managed_fields: 2,
            last_applied: false,
            data_keys: None,
            data_bytes: default_data_bytes(),
        }
    }
}

/// Settings of the built-in apiserver.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiServerSpec {
    /// Events of history kept for watches and consistent continuations (the watch cache's
    /// window); older resourceVersions get 410 Expired. `None` keeps every event.
    pub history_events: Option<u64>,
}

/// Resource kinds the built-in apiserver can serve.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ObjectKind {
    /// core/v1 Pod.
    #[default]
    Pod,
    /// core/v1 ConfigMap.
    ConfigMap,
    /// core/v1 Secret.
    Secret,
}

impl ObjectKind {
    /// Every kind, in discovery order.
    pub const ALL: [ObjectKind; 3] = [ObjectKind::Pod, ObjectKind::ConfigMap, ObjectKind::Secret];

    /// The kind's name (`Pod`).
    pub fn as_str(self) -> &'static str {
        match self {
            ObjectKind::Pod => "Pod",
            ObjectKind::ConfigMap => "ConfigMap",
            ObjectKind::Secret => "Secret",
        }
    }

    /// The resource's plural name in URLs (`pods`).
    pub fn plural(self) -> &'static str {
        match self {
            ObjectKind::Pod => "pods",
            ObjectKind::ConfigMap => "configmaps",
            ObjectKind::Secret => "secrets",
        }
    }

    /// The kind's top-level fields besides `apiVersion` and `kind`: where a transform's
    /// field path can start.
    pub fn top_level_fields(self) -> &'static [&'static str] {
        match self {
            ObjectKind::Pod => &["metadata", "spec", "status"],
            ObjectKind::ConfigMap => &["metadata", "data", "binaryData", "immutable"],
            ObjectKind::Secret => &["metadata", "data", "stringData", "type", "immutable"],
        }
    }

    /// The kind for a plural resource name.
    pub fn from_plural(plural: &str) -> Option<ObjectKind> {
        ObjectKind::ALL.into_iter().find(|k| k.plural() == plural)
    }
}

pub(super) fn objects_from_raw(raw: RawObjects) -> Result<ObjectSpec, Problem> {
    let count = int_in(&raw.count, "objects.count", 1, MAX_OBJECTS)?;
    let defaults = ObjectSpec::pods(count);
    let opt = |v: &Option<Spanned<i64>>, key: &str, default: u32, min: u64, max: u64| match v {
        None => Ok(default),
        Some(v) => int_in(v, key, min, max).map(|n| n as u32),
    };
    Ok(ObjectSpec {
        kind: raw.kind,
        count,
        seed: raw.seed.unwrap_or(defaults.seed),
        namespaces: opt(
            &raw.namespaces,
            "objects.namespaces",
            defaults.namespaces,
            1,
            10_000,
        )?,
        labels: opt(&raw.labels, "objects.labels", defaults.labels, 0, 64)?,
        annotations: opt(
            &raw.annotations,
            "objects.annotations",
            defaults.annotations,
            0,
            64,
        )?,
        containers: opt(
            &raw.containers,
            "objects.containers",
            defaults.containers,
            1,
            16,
        )?,
        managed_fields: opt(
            &raw.managed_fields,
            "objects.managed_fields",
            defaults.managed_fields,
            0,
            8,
        )?,
        last_applied: raw.last_applied.unwrap_or(defaults.last_applied),
        data_keys: match &raw.data_keys {
            None => None,
            Some(v) if raw.kind == ObjectKind::Pod => {
                return Err(Problem::at(
                    "objects.data_keys",
                    v.span(),
                    "a Pod has no `data`: `data_keys` shapes ConfigMaps and Secrets",
                ));
            }
            Some(v) => Some(int_in(v, "objects.data_keys", 1, 64)? as u32),
        },
        data_bytes: match &raw.data_bytes {
            None => defaults.data_bytes,
            Some(v) if raw.data_keys.is_none() => {
                return Err(Problem::at(
                    "objects.data_bytes",
                    v.span(),
                    "`data_bytes` sizes the values `data_keys` adds; set `data_keys` too",
                ));
            }
            Some(v) => int_in(v, "objects.data_bytes", 0, 1 << 20)? as u32,
        },
    })
}
