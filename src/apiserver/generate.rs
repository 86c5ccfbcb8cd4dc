//! Object bodies, generated on demand from (seed, index, generation, incarnation).
//!
//! The apiserver stores no bodies: a LIST page or a watch event builds the objects it sends
//! and drops them once serialized. Generation is a pure function of its inputs, so the same
//! scenario produces the same bytes on every run.
//!
//! The pods look like a Deployment's pods on a real cluster: owner reference to a
//! ReplicaSet, two default tolerations, the projected service-account volume, probes,
//! resources, five conditions, container statuses. `metadata.managedFields` are computed
//! from the pod's own fields the way the apiserver's field manager tracks them, so their
//! size follows the shape knobs: with the defaults a pod serializes to about 7.3 KB, just
//! under 40% of it managedFields (kubernetes issue 118454 reports 30-40%, 2-4 KB).

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::api::core::v1::{
    ConfigMapProjection, ConfigMapVolumeSource, Container, ContainerPort, ContainerState,
    ContainerStateRunning, ContainerStatus, ContainerUser, DownwardAPIProjection,
    DownwardAPIVolumeFile, EnvVar, HTTPGetAction, HostIP, KeyToPath, LinuxContainerUser,
    ObjectFieldSelector, Pod, PodCondition, PodIP, PodSpec, PodStatus, Probe,
    ProjectedVolumeSource, ResourceRequirements, ServiceAccountTokenProjection, Toleration, Volume,
    VolumeMount, VolumeMountStatus, VolumeProjection,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    FieldsV1, ManagedFieldsEntry, ObjectMeta, OwnerReference, Time,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;
use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde_json::{Map, Value, json};

use crate::scenario::{LAST_APPLIED_ANNOTATION, ObjectKind, ObjectSpec};

/// Seconds since the Unix epoch of 2026-01-01T00:00:00Z: objects are "created" from there,
/// one second apart, so timestamps do not depend on the clock.
const EPOCH: i64 = 1_767_225_600;

/// Alphabet Kubernetes uses for generated name suffixes (no vowels, no look-alikes).
const SUFFIX_ALPHABET: &[u8; 27] = b"bcdfghjklmnpqrstvwxz2456789";
/// Length of a generated name suffix; 27^5 > [`crate::scenario::MAX_OBJECTS`].
const SUFFIX_LEN: usize = 5;

const NAMESPACES: [&str; 10] = [
    "payments",
    "checkout",
    "search",
    "identity",
    "catalog",
    "ledger",
    "billing",
    "shipping",
    "inventory",
    "notify",
];
const APPS: [&str; 10] = [
    "api", "web", "worker", "cache", "gateway", "indexer", "ingest", "reporter", "auth", "sync",
];
const SIDECARS: [&str; 6] = [
    "envoy",
    "log-shipper",
    "metrics-agent",
    "vault-agent",
    "otel",
    "cfg",
];

/// What identifies one object on the server; everything else about it is generated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    /// Position in the server's object table; fixes name and namespace.
    pub index: u32,
    /// Bumped by delete+recreate: a new incarnation has a new UID.
    pub incarnation: u32,
    /// Bumped by every update; changes the pod's content.
    pub generation: u32,
    /// The object's resourceVersion.
    pub resource_version: u64,
}

/// Namespace of object `index`.
pub fn namespace(spec: &ObjectSpec, index: u32) -> String {
    let ns = index % spec.namespaces;
    let word = NAMESPACES[ns as usize % NAMESPACES.len()];
    match ns as usize / NAMESPACES.len() {
        0 => word.to_owned(),
        round => format!("{word}-{round}"),
    }
}

/// Name of object `index`: for a pod `{app}-{replicaset hash}-{suffix}`, for a ConfigMap
/// `{app}-config-{suffix}`, for a Secret `{app}-secret-{suffix}`. The suffix encodes the
/// index, so names are unique and [`index_of_name`] can invert them.
pub fn name(spec: &ObjectSpec, index: u32) -> String {
    let app = app_of(spec, index);
    match spec.kind {
        ObjectKind::Pod => format!("{app}-{}-{}", template_hash(spec, index), suffix(index)),
        ObjectKind::ConfigMap => format!("{app}-config-{}", suffix(index)),
        ObjectKind::Secret => format!("{app}-secret-{}", suffix(index)),
    }
}

/// Appends the JSON of object `id` of the spec's kind to `buf`.
pub fn write_object(buf: &mut Vec<u8>, spec: &ObjectSpec, id: Identity) {
    let written = match spec.kind {
        ObjectKind::Pod => serde_json::to_writer(buf, &pod(spec, id)),
        ObjectKind::ConfigMap => serde_json::to_writer(buf, &config_map(spec, id)),
        ObjectKind::Secret => serde_json::to_writer(buf, &secret(spec, id)),
    };
    written.expect("writing a generated object to a Vec cannot fail");
}

/// Appends the JSON of object `id`'s `metadata` to `buf`: what a metadata-only client gets.
pub fn write_metadata(buf: &mut Vec<u8>, spec: &ObjectSpec, id: Identity) {
    let written = match spec.kind {
        ObjectKind::Pod => serde_json::to_writer(buf, &pod(spec, id).metadata),
        ObjectKind::ConfigMap => serde_json::to_writer(buf, &config_map(spec, id).metadata),
        ObjectKind::Secret => serde_json::to_writer(buf, &secret(spec, id).metadata),
    };
    written.expect("writing generated metadata to a Vec cannot fail");
}

/// Metadata every kind shares: identity, labels, annotations, and for kinds other than
/// pods, managedFields of one `helm` manager owning what `owned` lists. With
/// `spec.last_applied`, `applied` is what `kubectl apply` recorded of the object's content.
fn common_metadata(
    spec: &ObjectSpec,
    id: Identity,
    owned: &[&str],
    applied: (&str, Value),
) -> ObjectMeta {
    let mut rng = rng(
        spec.seed,
        &[0xc0ffee, u64::from(id.index), u64::from(id.generation)],
    );
    let app = app_of(spec, id.index);
    let mut annotations: BTreeMap<String, String> = (0..spec.annotations)
        .map(|i| match i {
            0 => ("meta.helm.sh/release-name".to_owned(), app.to_owned()),
            1 => (
                "meta.helm.sh/release-namespace".to_owned(),
                namespace(spec, id.index),
            ),
            i => (format!("example.com/annotation-{i}"), hex(&mut rng, 16)),
        })
        .collect();
    let labels = labels(spec, id.index, id.generation);
    if spec.last_applied {
        let (kind, content) = applied;
        let mut recorded = json!({
            "apiVersion": "v1",
            "kind": kind,
            "metadata": {
                "annotations": {},
                "labels": &labels,
                "name": name(spec, id.index),
                "namespace": namespace(spec, id.index),
            },
        });
        if let (Some(recorded), Value::Object(content)) = (recorded.as_object_mut(), content) {
            recorded.extend(content);
        }
        annotations.insert(LAST_APPLIED_ANNOTATION.to_owned(), recorded.to_string());
    }
    let mut meta = ObjectMeta {
        name: Some(name(spec, id.index)),
        namespace: Some(namespace(spec, id.index)),
        uid: Some(uid(spec, id.index, id.incarnation)),
        resource_version: Some(id.resource_version.to_string()),
        creation_timestamp: Some(time(i64::from(id.index))),
        labels: Some(labels),
        annotations: (!annotations.is_empty()).then_some(annotations),
        ..Default::default()
    };
    if spec.managed_fields > 0 {
        let value = serde_json::to_value(&meta).expect("metadata serializes");
        let mut fields = Map::new();
        let mut meta_fields = Map::new();
        for key in ["labels", "annotations"] {
            if let Some(v) = value.get(key) {
                meta_fields.insert(format!("f:{key}"), field_set(key, v));
            }
        }
        fields.insert("f:metadata".to_owned(), Value::Object(meta_fields));
        for key in owned {
            fields.insert(format!("f:{key}"), json!({}));
        }
        meta.managed_fields = Some(vec![ManagedFieldsEntry {
            api_version: Some("v1".to_owned()),
            fields_type: Some("FieldsV1".to_owned()),
            fields_v1: Some(FieldsV1(Value::Object(fields))),
            manager: Some("helm".to_owned()),
            operation: Some("Update".to_owned()),
            subresource: None,
            time: Some(time(i64::from(id.index))),
        }]);
    }
    meta
}

/// An application's configuration: a YAML file and a few flat keys; or, with
/// `spec.data_keys`, the shape [`shaped_data`] makes.
pub fn config_map(spec: &ObjectSpec, id: Identity) -> ConfigMap {
    let data: BTreeMap<String, String> = match spec.data_keys {
        Some(keys) => shaped_data(spec, id, keys).collect(),
        None => application_config(spec, id),
    };
    let applied = ("ConfigMap", json!({ "data": &data }));
    ConfigMap {
        metadata: common_metadata(spec, id, &["data"], applied),
        data: Some(data),
        ..Default::default()
    }
}

/// The default ConfigMap data: an application's YAML file and two flat keys.
fn application_config(spec: &ObjectSpec, id: Identity) -> BTreeMap<String, String> {
    let app = app_of(spec, id.index);
    let ns = namespace(spec, id.index);
    let yaml = format!(
        "server:\n  port: 8080\n  shutdownGracePeriod: 25s\nlogging:\n  level: info\n  format: json\n\
         upstream:\n  url: http://{app}.{ns}.svc.cluster.local:8080\n  timeout: 5s\n  retries: 3\n\
         features:\n  revision: {}\n",
        id.generation
    );
    [
        ("application.yaml", yaml),
        ("LOG_LEVEL", "info".to_owned()),
        ("REVISION", id.generation.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// `keys` data entries in the shape of kube-runtime's memory benchmark: a short
/// per-object `config.yaml`, then `keys - 1` values of `spec.data_bytes` bytes.
fn shaped_data(
    spec: &ObjectSpec,
    id: Identity,
    keys: u32,
) -> impl Iterator<Item = (String, String)> + use<> {
    let config = format!(
        "setting: value-{}\ncount: {}\nrevision: {}",
        id.index, id.index, id.generation
    );
    let filler = "x".repeat(spec.data_bytes as usize);
    std::iter::once(("config.yaml".to_owned(), config)).chain((1..keys).map(move |k| {
        let key = if k == 1 {
            "extra".to_owned()
        } else {
            format!("extra-{k}")
        };
        (key, filler.clone())
    }))
}

/// An application's credentials, base64 on the wire as Secrets are; or, with
/// `spec.data_keys`, the shape [`shaped_data`] makes.
pub fn secret(spec: &ObjectSpec, id: Identity) -> Secret {
    let mut rng = rng(
        spec.seed,
        &[0x5ec, u64::from(id.index), u64::from(id.generation)],
    );
    let data: BTreeMap<String, ByteString> = match spec.data_keys {
        Some(keys) => shaped_data(spec, id, keys)
            .map(|(k, v)| (k, ByteString(v.into_bytes())))
            .collect(),
        None => [
            ("username", hex(&mut rng, 12)),
            ("password", hex(&mut rng, 32)),
            ("api-key", hex(&mut rng, 64)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), ByteString(v.into_bytes())))
        .collect(),
    };
    let applied = ("Secret", json!({ "data": &data, "type": "Opaque" }));
    Secret {
        metadata: common_metadata(spec, id, &["data", "type"], applied),
        data: Some(data),
        type_: Some("Opaque".to_owned()),
        ..Default::default()
    }
}

/// The index a name generated by [`name`] encodes; `None` for any other name.
pub fn index_of_name(name: &str) -> Option<u32> {
    let (_, suffix) = name.rsplit_once('-')?;
    if suffix.len() != SUFFIX_LEN {
        return None;
    }
    suffix.bytes().try_fold(0u32, |acc, b| {
        let digit = SUFFIX_ALPHABET.iter().position(|&c| c == b)? as u32;
        acc.checked_mul(SUFFIX_ALPHABET.len() as u32)?
            .checked_add(digit)
    })
}

/// The `n`th suffix drawn for a `generateName`: five characters of the apiserver's
/// alphabet, as `names.SimpleNameGenerator` makes them.
pub fn random_suffix(spec: &ObjectSpec, n: u64) -> String {
    let mut rng = rng(spec.seed, &[0x9e4, n]);
    (0..SUFFIX_LEN)
        .map(|_| SUFFIX_ALPHABET[(rng.next_u32() as usize) % SUFFIX_ALPHABET.len()] as char)
        .collect()
}

fn suffix(index: u32) -> String {
    let mut digits = [0u8; SUFFIX_LEN];
    let mut rest = index;
    for d in digits.iter_mut().rev() {
        *d = SUFFIX_ALPHABET[(rest % SUFFIX_ALPHABET.len() as u32) as usize];
        rest /= SUFFIX_ALPHABET.len() as u32;
    }
    String::from_utf8_lossy(&digits).into_owned()
}

fn app_of(spec: &ObjectSpec, index: u32) -> &'static str {
    APPS[(index / spec.namespaces) as usize % APPS.len()]
}

fn template_hash(spec: &ObjectSpec, index: u32) -> String {
    let ns = u64::from(index % spec.namespaces);
    let app = u64::from((index / spec.namespaces) % APPS.len() as u32);
    let mut rng = rng(spec.seed, &[0x7e3a, ns, app]);
    (0..10)
        .map(|_| SUFFIX_ALPHABET[(rng.next_u32() % 27) as usize] as char)
        .collect()
}

/// A deterministic generator for the given inputs.
fn rng(seed: u64, parts: &[u64]) -> Pcg64Mcg {
    // FNV-1a over the inputs: cheap, stable across versions, and enough to decorrelate
    // neighbouring indices for a PCG seed.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
    for p in parts {
        for b in p.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    Pcg64Mcg::seed_from_u64(h)
}

fn hex(rng: &mut Pcg64Mcg, len: usize) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    (0..len)
        .map(|_| HEX[(rng.next_u32() % 16) as usize] as char)
        .collect()
}

/// The UID of an object's incarnation, shaped like a random (v4) UUID.
pub fn uid(spec: &ObjectSpec, index: u32, incarnation: u32) -> String {
    let mut rng = rng(
        spec.seed,
        &[0x01d, u64::from(index), u64::from(incarnation)],
    );
    let h = hex(&mut rng, 32);
    format!(
        "{}-{}-4{}-a{}-{}",
        &h[..8],
        &h[8..12],
        &h[13..16],
        &h[17..20],
        &h[20..]
    )
}

fn time(seconds: i64) -> Time {
    Time(Timestamp::from_second(EPOCH + seconds).expect("scenario timestamps are in range"))
}

fn quantity(s: &str) -> Quantity {
    Quantity(s.to_owned())
}

fn pairs<const N: usize>(entries: [(&str, String); N]) -> BTreeMap<String, String> {
    entries
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
}

/// The labels of object `index` at `generation`: `app`, `pod-template-hash`, then
/// `spec.labels` more. Label selectors are matched against these without generating the
/// whole object.
pub fn labels(spec: &ObjectSpec, index: u32, generation: u32) -> BTreeMap<String, String> {
    let ns = namespace(spec, index);
    let app = app_of(spec, index);
    let node = index % 97;
    let mut labels = pairs([
        ("app", app.to_owned()),
        ("pod-template-hash", template_hash(spec, index)),
    ]);
    let extra_labels = [
        ("app.kubernetes.io/name", app.to_owned()),
        ("app.kubernetes.io/part-of", ns.clone()),
        ("app.kubernetes.io/version", format!("1.{generation}")),
        ("team", ns),
        (
            "tier",
            if index.is_multiple_of(3) {
                "frontend"
            } else {
                "backend"
            }
            .to_owned(),
        ),
        ("environment", "production".to_owned()),
        (
            "topology.kubernetes.io/zone",
            format!("eu-west-1{}", ['a', 'b', 'c'][node as usize % 3]),
        ),
    ];
    for i in 0..spec.labels as usize {
        let (k, v) = match extra_labels.get(i) {
            Some((k, v)) => ((*k).to_owned(), v.clone()),
            None => (format!("example.com/label-{i}"), format!("value-{i}")),
        };
        labels.insert(k, v);
    }
    labels
}

/// The full pod for `id`, managedFields included.
pub fn pod(spec: &ObjectSpec, id: Identity) -> Pod {
    let mut pod = pod_without_managed_fields(spec, id);
    if spec.managed_fields > 0 {
        let value = serde_json::to_value(&pod).expect("a generated pod serializes");
        pod.metadata.managed_fields = Some(managed_fields(spec, &value, id));
    }
    pod
}

fn pod_without_managed_fields(spec: &ObjectSpec, id: Identity) -> Pod {
    let index = id.index;
    let ns = namespace(spec, index);
    let app = app_of(spec, index);
    let hash = template_hash(spec, index);
    let name = format!("{app}-{hash}-{}", suffix(index));
    let created = i64::from(index);
    let started = created + 3;
    let node = index % 97;
    let pod_ip = format!(
        "10.{}.{}.{}",
        64 + (index >> 16) % 64,
        (index >> 8) & 255,
        index & 255
    );
    let host_ip = format!("10.0.{}.{}", node / 16, 10 + node % 16);
    let version = format!("1.{}", id.generation);
    let mut rng = rng(
        spec.seed,
        &[0x90d, u64::from(index), u64::from(id.incarnation)],
    );
    let token_volume = format!("kube-api-access-{}", &suffix(rng.next_u32() % 14_000_000));

    let labels = labels(spec, index, id.generation);

    let mut annotations = BTreeMap::new();
    let extra_annotations = [
        ("checksum/config", hex(&mut rng, 64)),
        ("checksum/secret", hex(&mut rng, 64)),
        ("prometheus.io/scrape", "true".to_owned()),
        ("prometheus.io/port", "9090".to_owned()),
        (
            "kubectl.kubernetes.io/restartedAt",
            format!("2026-01-01T00:00:{:02}Z", id.generation % 60),
        ),
        (
            "cluster-autoscaler.kubernetes.io/safe-to-evict",
            "true".to_owned(),
        ),
        ("example.com/commit", hex(&mut rng, 40)),
    ];
    for i in 0..spec.annotations as usize {
        let (k, v) = match extra_annotations.get(i) {
            Some((k, v)) => ((*k).to_owned(), v.clone()),
            None => (
                format!("example.com/annotation-{i}"),
                format!("value-{i}-{}", hex(&mut rng, 16)),
            ),
        };
        annotations.insert(k, v);
    }

    let containers: Vec<Container> = (0..spec.containers as usize)
        .map(|c| container(&ns, app, c, &version, &token_volume))
        .collect();
    let container_statuses = containers
        .iter()
        .map(|c| ContainerStatus {
            name: c.name.clone(),
            image: c.image.clone().unwrap_or_default(),
            image_id: format!(
                "{}@sha256:{}",
                c.image.as_deref().unwrap_or_default(),
                hex(&mut rng, 64)
            ),
            container_id: Some(format!("containerd://{}", hex(&mut rng, 64))),
            ready: true,
            restart_count: 0,
            started: Some(true),
            state: Some(ContainerState {
                running: Some(ContainerStateRunning {
                    started_at: Some(time(started + 2)),
                }),
                ..Default::default()
            }),
            // What a v1.33+ kubelet reports besides the basics.
            allocated_resources: c.resources.as_ref().and_then(|r| r.requests.clone()),
            resources: c.resources.clone(),
            user: Some(ContainerUser {
                linux: Some(LinuxContainerUser {
                    uid: 65532,
                    gid: 65532,
                    supplemental_groups: Some(vec![65532]),
                }),
            }),
            volume_mounts: c.volume_mounts.as_ref().map(|mounts| {
                mounts
                    .iter()
                    .map(|m| VolumeMountStatus {
                        name: m.name.clone(),
                        mount_path: m.mount_path.clone(),
                        read_only: m.read_only,
                        recursive_read_only: Some("Disabled".to_owned()),
                    })
                    .collect()
            }),
            ..Default::default()
        })
        .collect();

    let mut pod = Pod {
        metadata: ObjectMeta {
            name: Some(name),
            generate_name: Some(format!("{app}-{hash}-")),
            namespace: Some(ns.clone()),
            uid: Some(uid(spec, index, id.incarnation)),
            resource_version: Some(id.resource_version.to_string()),
            generation: Some(i64::from(id.generation)),
            creation_timestamp: Some(time(created)),
            labels: Some(labels),
            annotations: (!annotations.is_empty()).then_some(annotations),
            owner_references: Some(vec![OwnerReference {
                api_version: "apps/v1".to_owned(),
                kind: "ReplicaSet".to_owned(),
                name: format!("{app}-{hash}"),
                uid: uid(spec, u32::MAX - index % spec.namespaces, 0),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers,
            dns_policy: Some("ClusterFirst".to_owned()),
            enable_service_links: Some(true),
            node_name: Some(format!(
                "ip-10-0-{}-{}.eu-west-1.compute.internal",
                node / 16,
                10 + node % 16
            )),
            preemption_policy: Some("PreemptLowerPriority".to_owned()),
            priority: Some(0),
            restart_policy: Some("Always".to_owned()),
            scheduler_name: Some("default-scheduler".to_owned()),
            security_context: Some(Default::default()),
            service_account: Some(app.to_owned()),
            service_account_name: Some(app.to_owned()),
            termination_grace_period_seconds: Some(30),
            tolerations: Some(
                [
                    "node.kubernetes.io/not-ready",
                    "node.kubernetes.io/unreachable",
                ]
                .into_iter()
                .map(|key| Toleration {
                    key: Some(key.to_owned()),
                    operator: Some("Exists".to_owned()),
                    effect: Some("NoExecute".to_owned()),
                    toleration_seconds: Some(300),
                    ..Default::default()
                })
                .collect(),
            ),
            volumes: Some(vec![
                Volume {
                    name: "config".to_owned(),
                    config_map: Some(ConfigMapVolumeSource {
                        name: format!("{app}-config"),
                        default_mode: Some(420),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                service_account_volume(token_volume),
            ]),
            ..Default::default()
        }),
        status: Some(PodStatus {
            phase: Some("Running".to_owned()),
            conditions: Some(
                [
                    "PodReadyToStartContainers",
                    "Initialized",
                    "Ready",
                    "ContainersReady",
                    "PodScheduled",
                ]
                .into_iter()
                .enumerate()
                .map(|(i, type_)| PodCondition {
                    type_: type_.to_owned(),
                    status: "True".to_owned(),
                    last_transition_time: Some(time(started + i as i64)),
                    last_probe_time: None,
                    ..Default::default()
                })
                .collect(),
            ),
            host_ip: Some(host_ip.clone()),
            host_ips: Some(vec![HostIP { ip: host_ip }]),
            pod_ip: Some(pod_ip.clone()),
            pod_ips: Some(vec![PodIP { ip: pod_ip }]),
            start_time: Some(time(started)),
            container_statuses: Some(container_statuses),
            qos_class: Some("Burstable".to_owned()),
            ..Default::default()
        }),
    };
    if spec.last_applied {
        let applied = last_applied_configuration(&pod);
        pod.metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .insert(LAST_APPLIED_ANNOTATION.to_owned(), applied);
    }
    pod
}

fn container(ns: &str, app: &str, c: usize, version: &str, token_volume: &str) -> Container {
    let (name, port) = match c {
        0 => (app.to_owned(), 8080),
        _ => (
            SIDECARS[(c - 1) % SIDECARS.len()].to_owned(),
            15000 + c as i32,
        ),
    };
    let name = if c > SIDECARS.len() {
        format!("{name}-{c}")
    } else {
        name
    };
    let probe = |path: &str, period| Probe {
        http_get: Some(HTTPGetAction {
            path: Some(path.to_owned()),
            port: IntOrString::Int(port),
            scheme: Some("HTTP".to_owned()),
            ..Default::default()
        }),
        initial_delay_seconds: Some(5),
        period_seconds: Some(period),
        timeout_seconds: Some(1),
        success_threshold: Some(1),
        failure_threshold: Some(3),
        ..Default::default()
    };
    let env = |k: &str, v: String| EnvVar {
        name: k.to_owned(),
        value: Some(v),
        ..Default::default()
    };
    let is_app = c == 0;
    Container {
        name: name.clone(),
        // Pinned by digest, as production images usually are.
        image: Some(format!(
            "registry.example.com/{ns}/{name}:{version}@sha256:{}",
            image_digest(ns, &name, version)
        )),
        image_pull_policy: Some("IfNotPresent".to_owned()),
        ports: is_app.then(|| {
            vec![ContainerPort {
                name: Some("http".to_owned()),
                container_port: port,
                protocol: Some("TCP".to_owned()),
                ..Default::default()
            }]
        }),
        env: Some(if !is_app {
            vec![env("LOG_LEVEL", "info".to_owned())]
        } else {
            vec![
                env("LOG_LEVEL", "info".to_owned()),
                env("SERVICE_NAME", format!("{app}.{ns}.svc.cluster.local")),
                EnvVar {
                    name: "POD_NAME".to_owned(),
                    value_from: Some(k8s_openapi::api::core::v1::EnvVarSource {
                        field_ref: Some(ObjectFieldSelector {
                            api_version: Some("v1".to_owned()),
                            field_path: "metadata.name".to_owned(),
                        }),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            ]
        }),
        resources: Some(ResourceRequirements {
            requests: Some(
                [("cpu", quantity("100m")), ("memory", quantity("128Mi"))]
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect(),
            ),
            limits: Some(
                [("memory".to_owned(), quantity("256Mi"))]
                    .into_iter()
                    .collect(),
            ),
            ..Default::default()
        }),
        // Sidecars commonly run without probes.
        liveness_probe: is_app.then(|| probe("/healthz", 10)),
        readiness_probe: None,
        termination_message_path: Some("/dev/termination-log".to_owned()),
        termination_message_policy: Some("File".to_owned()),
        volume_mounts: Some(vec![
            VolumeMount {
                name: "config".to_owned(),
                mount_path: "/etc/config".to_owned(),
                read_only: Some(true),
                ..Default::default()
            },
            VolumeMount {
                name: token_volume.to_owned(),
                mount_path: "/var/run/secrets/kubernetes.io/serviceaccount".to_owned(),
                read_only: Some(true),
                ..Default::default()
            },
        ]),
        ..Default::default()
    }
}

/// A stable fake sha256 digest for an image.
fn image_digest(ns: &str, name: &str, version: &str) -> String {
    let parts: Vec<u64> = [ns, name, version]
        .iter()
        .map(|s| {
            s.bytes()
                .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)))
        })
        .collect();
    hex(&mut rng(0, &parts), 64)
}

fn service_account_volume(name: String) -> Volume {
    Volume {
        name,
        projected: Some(ProjectedVolumeSource {
            default_mode: Some(420),
            sources: Some(vec![
                VolumeProjection {
                    service_account_token: Some(ServiceAccountTokenProjection {
                        expiration_seconds: Some(3607),
                        path: "token".to_owned(),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                VolumeProjection {
                    config_map: Some(ConfigMapProjection {
                        name: "kube-root-ca.crt".to_owned(),
                        items: Some(vec![KeyToPath {
                            key: "ca.crt".to_owned(),
                            path: "ca.crt".to_owned(),
                            ..Default::default()
                        }]),
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                VolumeProjection {
                    downward_api: Some(DownwardAPIProjection {
                        items: Some(vec![DownwardAPIVolumeFile {
                            path: "namespace".to_owned(),
                            field_ref: Some(ObjectFieldSelector {
                                api_version: Some("v1".to_owned()),
                                field_path: "metadata.namespace".to_owned(),
                            }),
                            ..Default::default()
                        }]),
                    }),
                    ..Default::default()
                },
            ]),
        }),
        ..Default::default()
    }
}

/// What `kubectl apply` would have recorded for this pod: its identity, labels and spec
/// containers, as compact JSON.
fn last_applied_configuration(pod: &Pod) -> String {
    let spec = pod.spec.as_ref();
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "annotations": {},
            "labels": pod.metadata.labels,
            "name": pod.metadata.name,
            "namespace": pod.metadata.namespace,
        },
        "spec": {"containers": spec.map(|s| &s.containers)},
    })
    .to_string()
}

/// Field managers in the order a pod meets them, and what each one owns.
fn managed_fields(spec: &ObjectSpec, pod: &Value, id: Identity) -> Vec<ManagedFieldsEntry> {
    let meta = &pod["metadata"];
    let created = i64::from(id.index);
    let entry =
        |manager: &str, subresource: Option<&str>, fields: Value, at: i64| ManagedFieldsEntry {
            api_version: Some("v1".to_owned()),
            fields_type: Some("FieldsV1".to_owned()),
            fields_v1: Some(FieldsV1(fields)),
            manager: Some(manager.to_owned()),
            operation: Some("Update".to_owned()),
            subresource: subresource.map(str::to_owned),
            time: Some(time(at)),
        };
    let mut out = Vec::new();
    // kube-controller-manager creates the pod from the ReplicaSet's template.
    let mut controller = Map::new();
    let mut controller_meta = Map::new();
    for key in ["generateName", "labels", "ownerReferences"] {
        if let Some(v) = meta.get(key) {
            controller_meta.insert(format!("f:{key}"), field_set(key, v));
        }
    }
    controller.insert("f:metadata".to_owned(), Value::Object(controller_meta));
    controller.insert("f:spec".to_owned(), root_field_set("spec", &pod["spec"]));
    out.push(entry(
        "kube-controller-manager",
        None,
        Value::Object(controller),
        created,
    ));
    // The kubelet reports status through the status subresource.
    if spec.managed_fields > 1 {
        let status = json!({ "f:status": root_field_set("status", &pod["status"]) });
        out.push(entry("kubelet", Some("status"), status, created + 8));
    }
    // Further managers each touched the annotations (kubectl annotate, controllers, ...).
    const OTHERS: [&str; 6] = [
        "kubectl-annotate",
        "argocd-application-controller",
        "vpa-updater",
        "istio-sidecar-injector",
        "kubectl-label",
        "descheduler",
    ];
    for (i, manager) in OTHERS
        .iter()
        .take(spec.managed_fields.saturating_sub(2) as usize)
        .enumerate()
    {
        let owned = match meta.get("annotations") {
            Some(a) => json!({ "f:metadata": { "f:annotations": field_set("annotations", a) } }),
            None => json!({ "f:metadata": { "f:labels": field_set("labels", &meta["labels"]) } }),
        };
        out.push(entry(manager, None, owned, created + 60 + i as i64));
    }
    out
}

/// What a manager that wrote all of `object` owns, as FieldsV1: every field but those the
/// server sets (identity, timestamps, managedFields), `apiVersion`, `kind` and `status`.
pub fn owned_fields(object: &Value) -> Value {
    let mut set = Map::new();
    for (key, value) in object.as_object().into_iter().flatten() {
        match key.as_str() {
            "apiVersion" | "kind" | "status" => {}
            "metadata" => {
                let mut meta = Map::new();
                for field in [
                    "labels",
                    "annotations",
                    "generateName",
                    "ownerReferences",
                    "finalizers",
                ] {
                    if let Some(v) = value.get(field) {
                        meta.insert(format!("f:{field}"), field_set(field, v));
                    }
                }
                if !meta.is_empty() {
                    set.insert("f:metadata".to_owned(), Value::Object(meta));
                }
            }
            _ => {
                set.insert(format!("f:{key}"), root_field_set(key, value));
            }
        }
    }
    Value::Object(set)
}

/// The set of a top-level field (`spec`, `status`): the apiserver marks no `.` there.
fn root_field_set(field: &str, value: &Value) -> Value {
    let mut set = field_set(field, value);
    if let Some(map) = set.as_object_mut() {
        map.remove(".");
    }
    set
}

/// The FieldsV1 set of `value`: `f:` for each field, `k:{...}` for each element of a list
/// that merges by key, `{}` at the leaves; `".": {}` marks a map or list element that is
/// itself owned.
fn field_set(field: &str, value: &Value) -> Value {
    match value {
        Value::Object(map) if !map.is_empty() && !is_atomic(field) => {
            let mut set = Map::with_capacity(map.len() + 1);
            set.insert(".".to_owned(), json!({}));
            for (k, v) in map {
                set.insert(format!("f:{k}"), field_set(k, v));
            }
            Value::Object(set)
        }
        Value::Array(items) if merge_key(field).is_some() => {
            let keys = merge_key(field).unwrap_or_default();
            let mut set = Map::with_capacity(items.len());
            for item in items {
                let mut key = Map::new();
                for k in keys {
                    if let Some(v) = item.get(*k) {
                        key.insert((*k).to_owned(), v.clone());
                    }
                }
                let element = field_set("", item);
                set.insert(format!("k:{}", Value::Object(key)), element);
            }
            Value::Object(set)
        }
        _ => json!({}),
    }
}

/// The merge keys of the list fields a pod has (from the API's `x-kubernetes-list-map-keys`).
fn merge_key(field: &str) -> Option<&'static [&'static str]> {
    Some(match field {
        // `containerStatuses` is atomic: the kubelet replaces it whole.
        "containers" | "env" | "volumes" => &["name"],
        "ports" => &["containerPort", "protocol"],
        "volumeMounts" => &["mountPath"],
        "conditions" => &["type"],
        "podIPs" => &["ip"],
        "ownerReferences" => &["uid"],
        _ => return None,
    })
}

/// Fields owned as a whole (atomic structs or maps of quantities).
fn is_atomic(field: &str) -> bool {
    matches!(
        field,
        "requests" | "limits" | "securityContext" | "state" | "running"
    )
}

/// The default object shape of a scenario, 1,000 pods, for tests.
#[cfg(test)]
pub(crate) fn test_spec() -> ObjectSpec {
    ObjectSpec::pods(1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(index: u32) -> Identity {
        Identity {
            index,
            incarnation: 0,
            generation: 1,
            resource_version: 10 + u64::from(index),
        }
    }

    #[test]
    fn generation_is_deterministic() {
        let spec = test_spec();
        let a = serde_json::to_vec(&pod(&spec, id(42))).unwrap();
        let b = serde_json::to_vec(&pod(&spec, id(42))).unwrap();
        assert_eq!(a, b);
        let other = serde_json::to_vec(&pod(&spec, id(43))).unwrap();
        assert_ne!(a, other);
    }

    #[test]
    fn default_pod_is_a_few_kilobytes_and_a_third_managed_fields() {
        let spec = test_spec();
        let full = serde_json::to_vec(&pod(&spec, id(7))).unwrap().len();
        let bare = serde_json::to_vec(&pod_without_managed_fields(&spec, id(7)))
            .unwrap()
            .len();
        let share = (full - bare) as f64 / full as f64;
        assert!((3_000..=8_000).contains(&full), "pod is {full} bytes");
        assert!(
            (0.30..=0.40).contains(&share),
            "managedFields are {:.0}%",
            share * 100.0
        );
    }

    #[test]
    fn names_are_unique_and_invertible() {
        let spec = test_spec();
        let mut seen = std::collections::HashSet::new();
        for i in (0..200_000).step_by(7) {
            let n = name(&spec, i);
            assert_eq!(index_of_name(&n), Some(i), "{n}");
            assert!(seen.insert((namespace(&spec, i), n)));
        }
        assert_eq!(index_of_name("no-suffix"), None);
    }

    #[test]
    fn every_kind_generates_with_unique_invertible_names() {
        for kind in ObjectKind::ALL {
            let spec = ObjectSpec {
                kind,
                ..test_spec()
            };
            let mut buf = Vec::new();
            write_object(&mut buf, &spec, id(12));
            let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
            assert_eq!(v["metadata"]["name"], name(&spec, 12));
            assert_eq!(index_of_name(&name(&spec, 12)), Some(12));
            assert!(buf.len() > 500, "{kind:?} is {} bytes", buf.len());
        }
    }

    #[test]
    fn recreated_object_gets_a_new_uid() {
        let spec = test_spec();
        assert_ne!(uid(&spec, 5, 0), uid(&spec, 5, 1));
        assert_eq!(uid(&spec, 5, 0).len(), 36);
    }

    #[test]
    fn managed_fields_key_list_elements_like_the_apiserver() {
        let spec = test_spec();
        let p = pod(&spec, id(3));
        let mf = p.metadata.managed_fields.unwrap();
        assert_eq!(mf.len(), 2);
        let controller = &mf[0].fields_v1.as_ref().unwrap().0;
        let app = &controller["f:spec"]["f:containers"][r#"k:{"name":"api"}"#];
        assert!(
            app.get(".").is_some() && app.get("f:image").is_some(),
            "{controller}"
        );
        assert!(
            controller["f:spec"].get(".").is_none(),
            "no `.` at the root"
        );
        assert_eq!(mf[0].manager.as_deref(), Some("kube-controller-manager"));
        assert_eq!(mf[1].subresource.as_deref(), Some("status"));
    }
}
