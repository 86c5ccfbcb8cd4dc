//! `[objects]`: what the built-in apiserver generates, and their shape.

use std::fmt;
use std::str::FromStr;

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
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
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

/// A key of `[objects]` a sweep can vary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepKey {
    /// `objects.count`: objects that exist when the first phase starts.
    Count,
    /// `objects.labels`.
    Labels,
    /// `objects.annotations`.
    Annotations,
    /// `objects.containers` (pods).
    Containers,
    /// `objects.managed_fields`: managedFields entries per object.
    ManagedFields,
    /// `objects.data_keys` (ConfigMaps and Secrets).
    DataKeys,
    /// `objects.data_bytes` (ConfigMaps and Secrets with `data_keys`).
    DataBytes,
}

impl SweepKey {
    /// Every sweepable key.
    pub const ALL: [SweepKey; 7] = [
        SweepKey::Count,
        SweepKey::Labels,
        SweepKey::Annotations,
        SweepKey::Containers,
        SweepKey::ManagedFields,
        SweepKey::DataKeys,
        SweepKey::DataBytes,
    ];

    /// The key's name in `[objects]`.
    pub fn as_str(self) -> &'static str {
        match self {
            SweepKey::Count => "count",
            SweepKey::Labels => "labels",
            SweepKey::Annotations => "annotations",
            SweepKey::Containers => "containers",
            SweepKey::ManagedFields => "managed_fields",
            SweepKey::DataKeys => "data_keys",
            SweepKey::DataBytes => "data_bytes",
        }
    }

    /// The values `[objects]` takes for the key, least and most.
    pub(crate) fn limits(self) -> (u64, u64) {
        match self {
            SweepKey::Count => (1, MAX_OBJECTS),
            SweepKey::Labels | SweepKey::Annotations => (0, 64),
            SweepKey::Containers => (1, 16),
            SweepKey::ManagedFields => (0, 8),
            SweepKey::DataKeys => (1, 64),
            SweepKey::DataBytes => (0, 1 << 20),
        }
    }

    /// `objects` with the key set to `value` (within [`SweepKey::limits`]).
    pub fn apply(self, objects: &ObjectSpec, value: u64) -> ObjectSpec {
        let mut objects = objects.clone();
        let small = value as u32;
        match self {
            SweepKey::Count => objects.count = value,
            SweepKey::Labels => objects.labels = small,
            SweepKey::Annotations => objects.annotations = small,
            SweepKey::Containers => objects.containers = small,
            SweepKey::ManagedFields => objects.managed_fields = small,
            SweepKey::DataKeys => objects.data_keys = Some(small),
            SweepKey::DataBytes => objects.data_bytes = small,
        }
        objects
    }

    /// Why `objects` cannot take this key at all, if they cannot.
    pub(super) fn misfit(self, objects: &ObjectSpec) -> Option<&'static str> {
        match self {
            SweepKey::DataKeys | SweepKey::DataBytes if objects.kind == ObjectKind::Pod => Some(
                "a Pod has no `data`: `data_keys` and `data_bytes` shape ConfigMaps and Secrets",
            ),
            SweepKey::DataBytes if objects.data_keys.is_none() => {
                Some("`data_bytes` sizes the values `data_keys` adds; set `objects.data_keys` too")
            }
            SweepKey::Containers if objects.kind != ObjectKind::Pod => {
                Some("only pods have containers")
            }
            _ => None,
        }
    }
}

impl fmt::Display for SweepKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SweepKey {
    type Err = String;

    fn from_str(s: &str) -> Result<SweepKey, String> {
        let s = s.strip_prefix("objects.").unwrap_or(s);
        SweepKey::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| {
                let keys: Vec<&str> = SweepKey::ALL.iter().map(|k| k.as_str()).collect();
                format!(
                    "{s:?} is not sweepable; expected one of {}",
                    keys.join(", ")
                )
            })
    }
}

pub(super) fn objects_from_raw(raw: RawObjects) -> Result<ObjectSpec, Problem> {
    let (min, max) = SweepKey::Count.limits();
    let count = int_in(&raw.count, "objects.count", min, max)?;
    let defaults = ObjectSpec::pods(count);
    let opt = |v: &Option<Spanned<i64>>, key: SweepKey, default: u32| match v {
        None => Ok(default),
        Some(v) => {
            let (min, max) = key.limits();
            int_in(v, &format!("objects.{key}"), min, max).map(|n| n as u32)
        }
    };
    Ok(ObjectSpec {
        kind: raw.kind,
        count,
        seed: raw.seed.unwrap_or(defaults.seed),
        namespaces: match &raw.namespaces {
            None => defaults.namespaces,
            Some(v) => int_in(v, "objects.namespaces", 1, 10_000)? as u32,
        },
        labels: opt(&raw.labels, SweepKey::Labels, defaults.labels)?,
        annotations: opt(
            &raw.annotations,
            SweepKey::Annotations,
            defaults.annotations,
        )?,
        containers: opt(&raw.containers, SweepKey::Containers, defaults.containers)?,
        managed_fields: opt(
            &raw.managed_fields,
            SweepKey::ManagedFields,
            defaults.managed_fields,
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
            Some(_) => Some(opt(&raw.data_keys, SweepKey::DataKeys, 0)?),
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
            Some(_) => opt(&raw.data_bytes, SweepKey::DataBytes, 0)?,
        },
    })
}
