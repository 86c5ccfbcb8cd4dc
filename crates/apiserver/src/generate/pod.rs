//! Pods: what differs from pod to pod ([`PodValues`]) and the builders that put a pod
//! together from it, part by part (metadata, spec, containers, status, managedFields).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    ConfigMapProjection, ConfigMapVolumeSource, Container, ContainerPort, ContainerState,
    ContainerStateRunning, ContainerStatus, ContainerUser, DownwardAPIProjection,
    DownwardAPIVolumeFile, EnvVar, EnvVarSource, HTTPGetAction, HostIP, KeyToPath,
    LinuxContainerUser, ObjectFieldSelector, Pod, PodCondition, PodIP, PodSpec, PodStatus, Probe,
    ProjectedVolumeSource, ResourceRequirements, ServiceAccountTokenProjection, Toleration, Volume,
    VolumeMount, VolumeMountStatus, VolumeProjection,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    ManagedFieldsEntry, ObjectMeta, OwnerReference,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use rand_core::Rng;
use serde_json::{Map, Value, json};

use super::fields::{field_set, push_later_managers, root_field_set, update_entry};
use super::template::{Int, Seconds, holes};
use super::{LabelValues, ObjectId, hex, label_values, labels_from, rng, suffix, time, uid};
use scenario::{LAST_APPLIED_ANNOTATION, ObjectSpec};

/// The pods' `terminationGracePeriodSeconds` (the API's default).
pub(super) const GRACE_SECONDS: i64 = 30;

const SIDECARS: [&str; 6] = [
    "envoy",
    "log-shipper",
    "metrics-agent",
    "vault-agent",
    "otel",
    "cfg",
];

/// Annotations a pod has, in the order `spec.annotations` takes them; after these,
/// `example.com/annotation-{i}` with random values.
const ANNOTATIONS: [(&str, Annotation); 7] = [
    ("checksum/config", Annotation::ConfigChecksum),
    ("checksum/secret", Annotation::SecretChecksum),
    ("prometheus.io/scrape", Annotation::Fixed("true")),
    ("prometheus.io/port", Annotation::Fixed("9090")),
    ("kubectl.kubernetes.io/restartedAt", Annotation::RestartedAt),
    (
        "cluster-autoscaler.kubernetes.io/safe-to-evict",
        Annotation::Fixed("true"),
    ),
    ("example.com/commit", Annotation::Commit),
];

/// Where an annotation's value comes from.
#[derive(Debug, Clone, Copy)]
enum Annotation {
    Fixed(&'static str),
    ConfigChecksum,
    SecretChecksum,
    RestartedAt,
    Commit,
}

/// The node pod `index` runs on (`spec.nodeName`): pods are spread over 97 nodes.
pub(super) fn node_name(index: u32) -> String {
    let node = index % 97;
    format!(
        "ip-10-0-{}-{}.eu-west-1.compute.internal",
        node / 16,
        10 + node % 16
    )
}

/// Pod `index`'s IP (`status.podIP`).
pub(super) fn pod_ip(index: u32) -> String {
    format!(
        "10.{}.{}.{}",
        64 + (index >> 16) % 64,
        (index >> 8) & 255,
        index & 255
    )
}

holes! {
    /// What differs between two pods of one app and shape.
    pub(super) struct PodValues {
        labels: LabelValues,
        /// The name's last part, after `{app}-{hash}-`.
        suffix: String,
        uid: String,
        owner_uid: String,
        resource_version: String,
        generation: Int,
        restarted_at: String,
        pod_ip: String,
        host_ip: String,
        node_name: String,
        /// The service-account volume's name after `kube-api-access-`.
        token_suffix: String,
        config_checksum: String,
        secret_checksum: String,
        commit: String,
        /// One per annotation beyond [`ANNOTATIONS`].
        extra_annotations: Vec<String>,
        /// Per container: its image's digest, its status's image digest, its ID.
        image_digests: Vec<String>,
        image_ids: Vec<String>,
        container_ids: Vec<String>,
        created: Seconds,
        started: Seconds,
        running_at: Seconds,
        /// One per condition.
        conditions_at: Vec<Seconds>,
        /// When the kubelet and then each further manager wrote.
        kubelet_at: Seconds,
        managers_at: Vec<Seconds>,
    }
}

impl PodValues {
    pub(super) fn of(spec: &ObjectSpec, app: &str, id: ObjectId) -> PodValues {
        let index = id.index;
        let created = i64::from(index);
        let started = created + 3;
        let node = index % 97;
        let labels = label_values(spec, index, id.generation);
        // The draws keep the order the pod's fields had when they were built in one go,
        // so that every seed still gives the same pods.
        let mut rng = rng(
            spec.seed,
            &[0x90d, u64::from(index), u64::from(id.incarnation)],
        );
        let token_suffix = suffix(rng.next_u32() % 14_000_000);
        let config_checksum = hex(&mut rng, 64);
        let secret_checksum = hex(&mut rng, 64);
        let commit = hex(&mut rng, 40);
        let extra_annotations = (ANNOTATIONS.len()..spec.annotations as usize)
            .map(|_| hex(&mut rng, 16))
            .collect();
        let (image_ids, container_ids) = (0..spec.containers)
            .map(|_| (hex(&mut rng, 64), hex(&mut rng, 64)))
            .unzip();
        let image_digests = (0..spec.containers as usize)
            .map(|c| image_digest(&labels.ns, &container_name(app, c), &labels.version))
            .collect();
        PodValues {
            suffix: suffix(index),
            uid: uid(spec, index, id.incarnation),
            owner_uid: uid(spec, u32::MAX - index % spec.namespaces, 0),
            resource_version: id.resource_version.to_string(),
            generation: Int(id.metadata_generation()),
            restarted_at: format!("2026-01-01T00:00:{:02}Z", id.generation % 60),
            pod_ip: pod_ip(index),
            host_ip: format!("10.0.{}.{}", node / 16, 10 + node % 16),
            node_name: node_name(index),
            token_suffix,
            config_checksum,
            secret_checksum,
            commit,
            extra_annotations,
            image_digests,
            image_ids,
            container_ids,
            created: Seconds(created),
            started: Seconds(started),
            running_at: Seconds(started + 2),
            conditions_at: (0..CONDITIONS.len() as i64)
                .map(|i| Seconds(started + i))
                .collect(),
            kubelet_at: Seconds(created + 8),
            managers_at: (0..spec.managed_fields.saturating_sub(2) as i64)
                .map(|i| Seconds(created + 60 + i))
                .collect(),
            labels,
        }
    }

    fn token_volume(&self) -> String {
        format!("kube-api-access-{}", self.token_suffix)
    }
}

/// The pod of app `app` with values `v`, managedFields included when the spec has them.
pub(super) fn pod_from(spec: &ObjectSpec, app: &str, v: &PodValues) -> Pod {
    let mut pod = pod_without_managed_fields(spec, app, v);
    if spec.managed_fields > 0 {
        let value = serde_json::to_value(&pod).expect("a generated pod serializes");
        pod.metadata.managed_fields = Some(managed_fields(spec, &value, v));
    }
    pod
}

pub(super) fn pod_without_managed_fields(spec: &ObjectSpec, app: &str, v: &PodValues) -> Pod {
    let containers: Vec<Container> = (0..spec.containers as usize)
        .map(|c| container(app, c, v))
        .collect();
    let mut pod = Pod {
        metadata: metadata(spec, app, v),
        status: Some(status(v, &containers)),
        spec: Some(pod_spec(app, v, containers)),
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

fn metadata(spec: &ObjectSpec, app: &str, v: &PodValues) -> ObjectMeta {
    let hash = &v.labels.hash;
    let mut extra = v.extra_annotations.iter();
    let annotations: BTreeMap<String, String> = (0..spec.annotations as usize)
        .map(|i| match ANNOTATIONS.get(i) {
            Some((key, source)) => {
                let value = match source {
                    Annotation::Fixed(value) => value,
                    Annotation::ConfigChecksum => v.config_checksum.as_str(),
                    Annotation::SecretChecksum => v.secret_checksum.as_str(),
                    Annotation::RestartedAt => v.restarted_at.as_str(),
                    Annotation::Commit => v.commit.as_str(),
                };
                ((*key).to_owned(), value.to_owned())
            }
            None => (
                format!("example.com/annotation-{i}"),
                format!(
                    "value-{i}-{}",
                    extra.next().expect("a hex per extra annotation")
                ),
            ),
        })
        .collect();
    ObjectMeta {
        name: Some(format!("{app}-{hash}-{}", v.suffix)),
        generate_name: Some(format!("{app}-{hash}-")),
        namespace: Some(v.labels.ns.clone()),
        uid: Some(v.uid.clone()),
        resource_version: Some(v.resource_version.clone()),
        generation: Some(v.generation.0),
        creation_timestamp: Some(time(v.created.0)),
        labels: Some(labels_from(spec, app, &v.labels)),
        annotations: (!annotations.is_empty()).then_some(annotations),
        owner_references: Some(vec![OwnerReference {
            api_version: "apps/v1".to_owned(),
            kind: "ReplicaSet".to_owned(),
            name: format!("{app}-{hash}"),
            uid: v.owner_uid.clone(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }]),
        ..Default::default()
    }
}

fn pod_spec(app: &str, v: &PodValues, containers: Vec<Container>) -> PodSpec {
    PodSpec {
        containers,
        dns_policy: Some("ClusterFirst".to_owned()),
        enable_service_links: Some(true),
        node_name: Some(v.node_name.clone()),
        preemption_policy: Some("PreemptLowerPriority".to_owned()),
        priority: Some(0),
        restart_policy: Some("Always".to_owned()),
        scheduler_name: Some("default-scheduler".to_owned()),
        security_context: Some(Default::default()),
        service_account: Some(app.to_owned()),
        service_account_name: Some(app.to_owned()),
        termination_grace_period_seconds: Some(GRACE_SECONDS),
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
            config_volume(app),
            service_account_volume(v.token_volume()),
        ]),
        ..Default::default()
    }
}

/// The app's configuration: its ConfigMap as a volume.
pub(super) fn config_volume(app: &str) -> Volume {
    Volume {
        name: "config".to_owned(),
        config_map: Some(ConfigMapVolumeSource {
            name: format!("{app}-config"),
            default_mode: Some(420),
            ..Default::default()
        }),
        ..Default::default()
    }
}

const CONDITIONS: [&str; 5] = [
    "PodReadyToStartContainers",
    "Initialized",
    "Ready",
    "ContainersReady",
    "PodScheduled",
];

fn status(v: &PodValues, containers: &[Container]) -> PodStatus {
    PodStatus {
        phase: Some("Running".to_owned()),
        conditions: Some(
            CONDITIONS
                .iter()
                .zip(&v.conditions_at)
                .map(|(type_, at)| PodCondition {
                    type_: (*type_).to_owned(),
                    status: "True".to_owned(),
                    last_transition_time: Some(time(at.0)),
                    last_probe_time: None,
                    ..Default::default()
                })
                .collect(),
        ),
        host_ip: Some(v.host_ip.clone()),
        host_ips: Some(vec![HostIP {
            ip: v.host_ip.clone(),
        }]),
        pod_ip: Some(v.pod_ip.clone()),
        pod_ips: Some(vec![PodIP {
            ip: v.pod_ip.clone(),
        }]),
        start_time: Some(time(v.started.0)),
        container_statuses: Some(
            containers
                .iter()
                .enumerate()
                .map(|(c, container)| container_status(v, c, container))
                .collect(),
        ),
        qos_class: Some("Burstable".to_owned()),
        ..Default::default()
    }
}

/// The status the kubelet reports for container `c`.
fn container_status(v: &PodValues, c: usize, container: &Container) -> ContainerStatus {
    let image = container.image.clone().unwrap_or_default();
    ContainerStatus {
        name: container.name.clone(),
        image_id: format!("{image}@sha256:{}", v.image_ids[c]),
        image,
        container_id: Some(format!("containerd://{}", v.container_ids[c])),
        ready: true,
        restart_count: 0,
        started: Some(true),
        state: Some(ContainerState {
            running: Some(ContainerStateRunning {
                started_at: Some(time(v.running_at.0)),
            }),
            ..Default::default()
        }),
        // What a v1.33+ kubelet reports besides the basics.
        allocated_resources: container
            .resources
            .as_ref()
            .and_then(|r| r.requests.clone()),
        resources: container.resources.clone(),
        user: Some(ContainerUser {
            linux: Some(LinuxContainerUser {
                uid: 65532,
                gid: 65532,
                supplemental_groups: Some(vec![65532]),
            }),
        }),
        volume_mounts: container.volume_mounts.as_ref().map(|mounts| {
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
    }
}

/// The name of container `c` of an `app` pod: the app, then sidecars.
pub(super) fn container_name(app: &str, c: usize) -> String {
    match c {
        0 => app.to_owned(),
        c if c > SIDECARS.len() => format!("{}-{c}", SIDECARS[(c - 1) % SIDECARS.len()]),
        c => SIDECARS[c - 1].to_owned(),
    }
}

fn container(app: &str, c: usize, v: &PodValues) -> Container {
    let image = Image {
        ns: &v.labels.ns,
        version: &v.labels.version,
        digest: &v.image_digests[c],
    };
    container_with(app, c, image, container_volume_mounts(v))
}

/// Where a container's image comes from: the app's namespace, its version, its digest.
pub(super) struct Image<'a> {
    pub(super) ns: &'a str,
    pub(super) version: &'a str,
    pub(super) digest: &'a str,
}

/// Container `c` of an `app` pod (or of its template), mounting `volume_mounts`.
pub(super) fn container_with(
    app: &str,
    c: usize,
    image: Image<'_>,
    volume_mounts: Vec<VolumeMount>,
) -> Container {
    let name = container_name(app, c);
    let port = if c == 0 { 8080 } else { 15000 + c as i32 };
    let Image {
        ns,
        version,
        digest,
    } = image;
    let is_app = c == 0;
    Container {
        // Pinned by digest, as production images usually are.
        image: Some(format!(
            "registry.example.com/{ns}/{name}:{version}@sha256:{digest}"
        )),
        name,
        image_pull_policy: Some("IfNotPresent".to_owned()),
        ports: is_app.then(|| {
            vec![ContainerPort {
                name: Some("http".to_owned()),
                container_port: port,
                protocol: Some("TCP".to_owned()),
                ..Default::default()
            }]
        }),
        env: Some(container_env(app, ns, is_app)),
        resources: Some(container_resources()),
        // Sidecars commonly run without probes.
        liveness_probe: is_app.then(|| http_probe("/healthz", port, 10)),
        readiness_probe: None,
        termination_message_path: Some("/dev/termination-log".to_owned()),
        termination_message_policy: Some("File".to_owned()),
        volume_mounts: Some(volume_mounts),
        ..Default::default()
    }
}

/// The environment: a log level for every container, and the app's service name and pod
/// name (from the downward API) for the app's.
fn container_env(app: &str, ns: &str, is_app: bool) -> Vec<EnvVar> {
    let env = |k: &str, v: String| EnvVar {
        name: k.to_owned(),
        value: Some(v),
        ..Default::default()
    };
    if !is_app {
        return vec![env("LOG_LEVEL", "info".to_owned())];
    }
    vec![
        env("LOG_LEVEL", "info".to_owned()),
        env("SERVICE_NAME", format!("{app}.{ns}.svc.cluster.local")),
        EnvVar {
            name: "POD_NAME".to_owned(),
            value_from: Some(EnvVarSource {
                field_ref: Some(ObjectFieldSelector {
                    api_version: Some("v1".to_owned()),
                    field_path: "metadata.name".to_owned(),
                }),
                ..Default::default()
            }),
            ..Default::default()
        },
    ]
}

/// Requests of CPU and memory, a memory limit.
fn container_resources() -> ResourceRequirements {
    let quantity = |s: &str| Quantity(s.to_owned());
    ResourceRequirements {
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
    }
}

/// An HTTP GET probe of `path` on `port`, every `period` seconds.
fn http_probe(path: &str, port: i32, period: i32) -> Probe {
    Probe {
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
    }
}

/// The config volume and the service account token, mounted read-only.
fn container_volume_mounts(v: &PodValues) -> Vec<VolumeMount> {
    vec![
        config_mount(),
        VolumeMount {
            name: v.token_volume(),
            mount_path: "/var/run/secrets/kubernetes.io/serviceaccount".to_owned(),
            read_only: Some(true),
            ..Default::default()
        },
    ]
}

/// The config volume, mounted read-only.
pub(super) fn config_mount() -> VolumeMount {
    VolumeMount {
        name: "config".to_owned(),
        mount_path: "/etc/config".to_owned(),
        read_only: Some(true),
        ..Default::default()
    }
}

/// A stable fake sha256 digest for an image.
pub(super) fn image_digest(ns: &str, name: &str, version: &str) -> String {
    // An array, not a Vec: whether the optimizer removed a Vec's allocation here depended
    // on inlining decisions elsewhere in the crate, and moved every run's exact figures.
    let parts: [u64; 3] = [ns, name, version].map(|s| {
        s.bytes()
            .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)))
    });
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
fn managed_fields(spec: &ObjectSpec, pod: &Value, v: &PodValues) -> Vec<ManagedFieldsEntry> {
    let meta = &pod["metadata"];
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
    out.push(update_entry(
        "kube-controller-manager",
        None,
        Value::Object(controller),
        v.created,
    ));
    // The kubelet reports status through the status subresource.
    if spec.managed_fields > 1 {
        let status = json!({ "f:status": root_field_set("status", &pod["status"]) });
        out.push(update_entry(
            "kubelet",
            Some("status"),
            status,
            v.kubelet_at,
        ));
    }
    push_later_managers(&mut out, "v1", meta, &v.managers_at);
    out
}

/// The full pod for `id`, built field by field (the slow path the templates stand for);
/// for tests that need a typed pod (this crate's and the informer's).
#[doc(hidden)]
pub fn pod(spec: &ObjectSpec, id: ObjectId) -> Pod {
    let app = super::app_of(spec, id.index);
    pod_from(spec, app, &PodValues::of(spec, app, id))
}
