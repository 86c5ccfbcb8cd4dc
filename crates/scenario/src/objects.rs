//! `[objects]`: what the built-in apiserver generates, and their shape.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::MAX_OBJECTS;
use super::error::{Problem, int_in};
use super::kind::ObjectKind;
use super::raw::RawObjects;
use super::sample::Sample;
use super::sample_kind::{kind_key, sample_kind};
use super::storable::{Shape, unstorable};

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
    /// Nodes: container images in `status.images` (`None` for other kinds; the kubelet
    /// reports at most `nodeStatusMaxImages`, 50 by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<u32>,
    /// Objects a user brought (`objects.sample`), copied in place of the generator's
    /// shapes; then the shape keys above are 0 (`containers` too) and unused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<Sample>,
}

/// Images a node reports by default: the kubelet's `nodeStatusMaxImages`, which a
/// long-running node reaches.
pub const DEFAULT_NODE_IMAGES: u32 = 50;

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
            images: None,
            sample: None,
        }
    }

    /// What decides whether a cluster could store the objects ([`super::storable`]).
    pub(super) fn shape(&self) -> Shape {
        Shape {
            kind: self.kind,
            data_keys: self.data_keys,
            data_bytes: self.data_bytes,
            last_applied: self.last_applied,
        }
    }

    /// Whether the objects live in namespaces (a Node does not).
    pub fn namespaced(&self) -> bool {
        self.kind.namespaced()
    }
}

/// Settings of the built-in apiserver.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiServerSpec {
    /// Events of history kept for watches and consistent continuations (the watch cache's
    /// window); older resourceVersions get 410 Expired. `None` keeps every event.
    pub history_events: Option<u64>,
}

/// A key a sweep can vary: of `[objects]`, or a Go runtime setting in the environment of
/// the external variants' programs.
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
    /// `objects.images` (nodes).
    Images,
    /// `GOGC` in each external variant's environment: the Go collector's target heap
    /// growth, in percent.
    #[serde(rename = "env.GOGC")]
    Gogc,
    /// `GOMEMLIMIT` in each external variant's environment: the Go runtime's soft memory
    /// limit, in bytes.
    #[serde(rename = "env.GOMEMLIMIT")]
    GoMemLimit,
}

impl SweepKey {
    /// Every sweepable key.
    pub const ALL: [SweepKey; 10] = [
        SweepKey::Count,
        SweepKey::Labels,
        SweepKey::Annotations,
        SweepKey::Containers,
        SweepKey::ManagedFields,
        SweepKey::DataKeys,
        SweepKey::DataBytes,
        SweepKey::Images,
        SweepKey::Gogc,
        SweepKey::GoMemLimit,
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
            SweepKey::Images => "images",
            SweepKey::Gogc => "env.GOGC",
            SweepKey::GoMemLimit => "env.GOMEMLIMIT",
        }
    }

    /// The environment variable the key sets in the external variants' programs, for
    /// the Go runtime's settings; `None` for a key of `[objects]`.
    pub fn env(self) -> Option<&'static str> {
        match self {
            SweepKey::Gogc => Some("GOGC"),
            SweepKey::GoMemLimit => Some("GOMEMLIMIT"),
            _ => None,
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
            SweepKey::Images => (0, 1000),
            // GOGC=off is the limit's alone to set (a sweep of GOMEMLIMIT with it is a
            // scenario's `env`).
            SweepKey::Gogc => (1, 100_000),
            SweepKey::GoMemLimit => (1 << 20, 1 << 50),
        }
    }

    /// `objects` with the key set to `value` (within [`SweepKey::limits`]); the objects
    /// as they are for a key of the programs' environment.
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
            SweepKey::Images => objects.images = Some(small),
            SweepKey::Gogc | SweepKey::GoMemLimit => {}
        }
        objects
    }

    /// Why `objects` cannot take this key at all, if they cannot.
    pub(super) fn misfit(self, objects: &ObjectSpec) -> Option<&'static str> {
        match self {
            SweepKey::Count | SweepKey::Gogc | SweepKey::GoMemLimit => None,
            _ if objects.sample.is_some() => Some(
                "it shapes generated objects; the objects of `objects.sample` have their own (sweep `count`)",
            ),
            SweepKey::DataKeys | SweepKey::DataBytes if objects.kind == ObjectKind::Pod => Some(
                "a Pod has no `data`: `data_keys` and `data_bytes` shape ConfigMaps and Secrets",
            ),
            SweepKey::DataKeys | SweepKey::DataBytes if objects.kind == ObjectKind::Node => Some(
                "a Node has no `data`: `data_keys` and `data_bytes` shape ConfigMaps and Secrets",
            ),
            SweepKey::DataKeys | SweepKey::DataBytes if objects.kind == ObjectKind::Deployment => {
                Some(
                    "a Deployment has no `data`: `data_keys` and `data_bytes` shape ConfigMaps and Secrets",
                )
            }
            SweepKey::Images if objects.kind != ObjectKind::Node => {
                Some("only nodes report images")
            }
            SweepKey::DataBytes if objects.data_keys.is_none() => {
                Some("`data_bytes` sizes the values `data_keys` adds; set `objects.data_keys` too")
            }
            SweepKey::Containers
                if !matches!(objects.kind, ObjectKind::Pod | ObjectKind::Deployment) =>
            {
                Some("only pods and Deployments' pod templates have containers")
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
        // Environment variables are upper case; a key of `[objects]` is not.
        let upper;
        let s = match s.strip_prefix("env.") {
            Some(name) => {
                upper = format!("env.{}", name.to_ascii_uppercase());
                upper.as_str()
            }
            None => s,
        };
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

/// `[objects]` of the scenario in `file` (a sample is read relative to its folder).
pub(super) fn objects_from_raw(file: &Path, raw: RawObjects) -> Result<ObjectSpec, Problem> {
    let (min, max) = SweepKey::Count.limits();
    let count = int_in(&raw.count, "objects.count", min, max)?;
    if let Some(given) = &raw.sample {
        return sampled_from_raw(file, &raw, given, count);
    }
    if let Some((key, span)) = kind_key(&raw) {
        return Err(Problem::at(
            format!("objects.{key}"),
            span,
            format!("`{key}` describes the kind of a sample's objects; there is no `sample`"),
        ));
    }
    let kind = generated_kind(&raw)?;
    let defaults = ObjectSpec::pods(count);
    let spec = ObjectSpec {
        kind,
        count,
        seed: raw.seed.unwrap_or(defaults.seed),
        namespaces: namespaces_from_raw(&raw, kind, defaults.namespaces)?,
        labels: knob(&raw.labels, SweepKey::Labels, defaults.labels)?,
        annotations: knob(
            &raw.annotations,
            SweepKey::Annotations,
            defaults.annotations,
        )?,
        containers: knob(&raw.containers, SweepKey::Containers, defaults.containers)?,
        managed_fields: knob(
            &raw.managed_fields,
            SweepKey::ManagedFields,
            defaults.managed_fields,
        )?,
        last_applied: raw.last_applied.unwrap_or(defaults.last_applied),
        data_keys: match &raw.data_keys {
            None => None,
            Some(v) if !matches!(kind, ObjectKind::ConfigMap | ObjectKind::Secret) => {
                return Err(Problem::at(
                    "objects.data_keys",
                    v.span(),
                    format!(
                        "a {} has no `data`: `data_keys` shapes ConfigMaps and Secrets",
                        kind.as_str()
                    ),
                ));
            }
            Some(_) => Some(knob(&raw.data_keys, SweepKey::DataKeys, 0)?),
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
            Some(_) => knob(&raw.data_bytes, SweepKey::DataBytes, 0)?,
        },
        images: images_from_raw(&raw, kind)?,
        sample: None,
    };
    match unstorable(spec.shape()) {
        None => Ok(spec),
        Some(refused) => {
            // Only shaped data can be too large, and `data_keys` shapes it.
            let (key, given) = match &raw.data_bytes {
                Some(bytes) => ("data_bytes", bytes),
                None => ("data_keys", raw.data_keys.as_ref().expect("shaped data")),
            };
            Err(
                Problem::at(format!("objects.{key}"), given.span(), refused.message)
                    .hint(refused.hint),
            )
        }
    }
}

/// `objects.kind` without a sample: a kind the generator makes (a Pod when unset).
fn generated_kind(raw: &RawObjects) -> Result<ObjectKind, Problem> {
    let Some(given) = &raw.kind else {
        return Ok(ObjectKind::Pod);
    };
    ObjectKind::ALL
        .into_iter()
        .find(|kind| kind.as_str() == given.as_ref())
        .ok_or_else(|| {
            let kinds: Vec<&str> = ObjectKind::ALL.iter().map(|k| k.as_str()).collect();
            Problem::at(
                "objects.kind",
                given.span(),
                format!(
                    "the generator makes no {:?}: it makes {}",
                    given.as_ref(),
                    kinds.join(", ")
                ),
            )
            .hint(
                "give objects of any other kind (a custom resource, a Service...) in \
                 `objects.sample`, from `kubectl get ... -o yaml`",
            )
        })
}

/// `[objects]` with a `sample`: the keys that shape generated objects are refused (the
/// sample's objects have their own shape), and set to 0 in the spec.
fn sampled_from_raw(
    file: &Path,
    raw: &RawObjects,
    given: &Spanned<String>,
    count: u64,
) -> Result<ObjectSpec, Problem> {
    let shapes = [
        ("labels", raw.labels.as_ref().map(Spanned::span)),
        ("annotations", raw.annotations.as_ref().map(Spanned::span)),
        ("containers", raw.containers.as_ref().map(Spanned::span)),
        (
            "managed_fields",
            raw.managed_fields.as_ref().map(Spanned::span),
        ),
        ("data_keys", raw.data_keys.as_ref().map(Spanned::span)),
        ("data_bytes", raw.data_bytes.as_ref().map(Spanned::span)),
        ("images", raw.images.as_ref().map(Spanned::span)),
    ];
    if let Some((key, span)) = shapes
        .into_iter()
        .find_map(|(key, span)| Some((key, span?)))
    {
        return Err(Problem::at(
            format!("objects.{key}"),
            span,
            format!("`{key}` shapes generated objects; the objects of `sample` have their own"),
        )
        .hint("edit the sample's objects instead, or remove `sample`"));
    }
    if raw.last_applied.is_some() {
        return Err(Problem::key(
            "objects.last_applied",
            "`last_applied` shapes generated objects; the objects of `sample` have their own",
        )
        .hint("edit the sample's objects instead, or remove `sample`"));
    }
    let at_sample = |why| Problem::at("objects.sample", given.span(), why);
    let sample = Sample::load(file, given.as_ref()).map_err(at_sample)?;
    let kind = sample_kind(raw, (&sample, given))?;
    sample.check(kind).map_err(at_sample)?;
    Ok(ObjectSpec {
        kind,
        count,
        seed: raw.seed.unwrap_or(1),
        namespaces: namespaces_from_raw(raw, kind, 10)?,
        labels: 0,
        annotations: 0,
        containers: 0,
        managed_fields: 0,
        last_applied: false,
        data_keys: None,
        data_bytes: default_data_bytes(),
        images: None,
        sample: Some(sample),
    })
}

/// The value of a sweepable key of `[objects]`, within its limits; `default` when unset.
fn knob(v: &Option<Spanned<i64>>, key: SweepKey, default: u32) -> Result<u32, Problem> {
    match v {
        None => Ok(default),
        Some(v) => {
            let (min, max) = key.limits();
            int_in(v, &format!("objects.{key}"), min, max).map(|n| n as u32)
        }
    }
}

/// `objects.namespaces`: refused for a cluster-scoped kind, whose objects are one round
/// of the generator's classes.
fn namespaces_from_raw(raw: &RawObjects, kind: ObjectKind, default: u32) -> Result<u32, Problem> {
    match &raw.namespaces {
        None if !kind.namespaced() => Ok(1),
        None => Ok(default),
        Some(v) if !kind.namespaced() => Err(Problem::at(
            "objects.namespaces",
            v.span(),
            format!("a {} is cluster-scoped: it has no namespace", kind.as_str()),
        )),
        Some(v) => Ok(int_in(v, "objects.namespaces", 1, 10_000)? as u32),
    }
}

/// `objects.images`: nodes only, [`DEFAULT_NODE_IMAGES`] when unset.
fn images_from_raw(raw: &RawObjects, kind: ObjectKind) -> Result<Option<u32>, Problem> {
    match &raw.images {
        None if kind == ObjectKind::Node => Ok(Some(DEFAULT_NODE_IMAGES)),
        None => Ok(None),
        Some(v) if kind != ObjectKind::Node => Err(Problem::at(
            "objects.images",
            v.span(),
            format!(
                "a {} reports no images: `images` shapes Nodes",
                kind.as_str()
            ),
        )),
        Some(_) => Ok(Some(knob(&raw.images, SweepKey::Images, 0)?)),
    }
}
