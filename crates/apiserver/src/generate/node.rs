//! Nodes: what differs from node to node ([`NodeValues`]) and the builder that puts a node
//! together from it, as a cloud cluster's kubelet registers and reports one.
//!
//! A node pool is one of the generator's classes (one per app): its nodes share machine
//! type, labels and the images its workloads pulled, and differ in name, addresses,
//! machine identity and times. `status.images` is most of a node's bytes: the kubelet
//! reports up to `nodeStatusMaxImages` (50 by default) images, each with a digest and a
//! tag reference and its size.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    ContainerImage, DaemonEndpoint, Node, NodeAddress, NodeCondition, NodeDaemonEndpoints,
    NodeFeatures, NodeRuntimeHandler, NodeRuntimeHandlerFeatures, NodeSpec, NodeStatus,
    NodeSystemInfo,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ManagedFieldsEntry, ObjectMeta};
use rand_core::Rng;
use serde_json::{Map, Value, json};

use super::fields::{field_set, root_field_set, update_entry};
use super::template::{Seconds, holes};
use super::{ObjectId, hex, node_pool, rng, suffix, time, uid};
use scenario::{DEFAULT_NODE_IMAGES, LAST_APPLIED_ANNOTATION, ObjectSpec};

/// Zones a pool's nodes are spread over.
const ZONES: [&str; 3] = ["europe-west1-b", "europe-west1-c", "europe-west1-d"];

/// Node conditions as the kubelet (and the route controller, for NetworkUnavailable)
/// reports a healthy node's: type, status, reason, message.
const CONDITIONS: [(&str, &str, &str, &str); 5] = [
    (
        "NetworkUnavailable",
        "False",
        "RouteCreated",
        "NodeController create implicit route",
    ),
    (
        "MemoryPressure",
        "False",
        "KubeletHasSufficientMemory",
        "kubelet has sufficient memory available",
    ),
    (
        "DiskPressure",
        "False",
        "KubeletHasNoDiskPressure",
        "kubelet has no disk pressure",
    ),
    (
        "PIDPressure",
        "False",
        "KubeletHasSufficientPID",
        "kubelet has sufficient PID available",
    ),
    (
        "Ready",
        "True",
        "KubeletReady",
        "kubelet is posting ready status",
    ),
];

/// Labels a node has beyond the well-known ones, in the order `spec.labels` takes them;
/// after these, `example.com/label-{i}`.
const EXTRA_LABELS: [(&str, &str); 4] = [
    ("cloud.google.com/machine-family", "e2"),
    ("cloud.google.com/gke-os-distribution", "cos"),
    ("cloud.google.com/gke-container-runtime", "containerd"),
    ("node.kubernetes.io/masq-agent-ds-ready", "true"),
];

/// Annotations in the order `spec.annotations` takes them; after these,
/// `example.com/annotation-{i}` with random values.
const ANNOTATIONS: [&str; 4] = [
    "node.alpha.kubernetes.io/ttl",
    "volumes.kubernetes.io/controller-managed-attach-detach",
    "csi.volume.kubernetes.io/nodeid",
    "container.googleapis.com/instance_id",
];

/// Field managers after the kubelet's two entries and kube-controller-manager's, in the
/// order a node meets them; each owns what it reports of the node.
const OTHER_MANAGERS: [(&str, Option<&str>); 5] = [
    ("node-problem-detector", Some("status")),
    ("cloud-controller-manager", None),
    ("cluster-autoscaler", None),
    ("kubectl-label", None),
    ("kubectl-annotate", None),
];

/// Images a pool's workloads pull, cycled through for `spec.images` entries.
const IMAGES: [&str; 12] = [
    "europe-docker.pkg.dev/prod/apps/api",
    "europe-docker.pkg.dev/prod/apps/web",
    "europe-docker.pkg.dev/prod/apps/worker",
    "docker.io/envoyproxy/envoy",
    "registry.k8s.io/kube-proxy",
    "gke.gcr.io/gke-metrics-agent",
    "gke.gcr.io/fluent-bit",
    "registry.k8s.io/pause",
    "quay.io/prometheus/node-exporter",
    "docker.io/grafana/promtail",
    "ghcr.io/open-telemetry/opentelemetry-collector-releases/opentelemetry-collector-contrib",
    "registry.k8s.io/csi-secrets-store/driver",
];

holes! {
    /// What differs between two nodes of one pool.
    pub(super) struct NodeValues {
        /// The name's last part, after the pool's name (`gke-prod-{app}-pool-{hash}-`).
        suffix: String,
        uid: String,
        resource_version: String,
        internal_ip: String,
        external_ip: String,
        pod_cidr: String,
        instance_id: String,
        zone: String,
        machine_id: String,
        system_uuid: String,
        boot_id: String,
        /// One per annotation beyond [`ANNOTATIONS`].
        extra_annotations: Vec<String>,
        created: Seconds,
        /// When the kubelet last reported status: moves with every update.
        heartbeat: Seconds,
        /// One per condition.
        transitions: Vec<Seconds>,
        /// When kube-controller-manager and each further manager wrote.
        controller_at: Seconds,
        managers_at: Vec<Seconds>,
    }
}

impl NodeValues {
    pub(super) fn of(spec: &ObjectSpec, id: ObjectId) -> NodeValues {
        let index = id.index;
        let created = i64::from(index);
        let mut rng = rng(
            spec.seed,
            &[0x90de, u64::from(index), u64::from(id.incarnation)],
        );
        let extra_annotations = (ANNOTATIONS.len()..spec.annotations as usize)
            .map(|_| hex(&mut rng, 16))
            .collect();
        // Host addresses skip the network's first two (.0 and the gateway).
        let host = index + 2;
        NodeValues {
            suffix: suffix(index),
            uid: uid(spec, index, id.incarnation),
            resource_version: id.resource_version.to_string(),
            internal_ip: format!(
                "10.{}.{}.{}",
                132 + (host >> 16) % 64,
                (host >> 8) & 255,
                host & 255
            ),
            external_ip: format!(
                "34.{}.{}.{}",
                76 + (host >> 16) % 64,
                (host >> 8) & 255,
                host & 255
            ),
            pod_cidr: format!("10.{}.{}.0/24", 64 + (index >> 8) % 64, index & 255),
            instance_id: (1_000_000_000_000_000_000u64 + u64::from(rng.next_u32()) * 1_000_003)
                .to_string(),
            zone: ZONES[(index / 10) as usize % ZONES.len()].to_owned(),
            machine_id: hex(&mut rng, 32),
            system_uuid: hex(&mut rng, 32),
            boot_id: hex(&mut rng, 32),
            extra_annotations,
            created: Seconds(created),
            // Every five minutes (nodeStatusReportFrequency); a bounded cycle keeps the
            // timestamps of any generation in range.
            heartbeat: Seconds(created + 300 * i64::from(id.generation % 1_000_000)),
            transitions: (0..CONDITIONS.len() as i64)
                .map(|i| Seconds(created + 10 + i))
                .collect(),
            controller_at: Seconds(created + 2),
            managers_at: (0..spec.managed_fields.saturating_sub(3) as i64)
                .map(|i| Seconds(created + 60 + i))
                .collect(),
        }
    }
}

/// The node of pool `app` with values `v`, managedFields included when the spec has them.
pub(super) fn node_from(spec: &ObjectSpec, index: u32, app: &str, v: &NodeValues) -> Node {
    let name = format!("{}-{}", node_pool(spec, index), v.suffix);
    let zone = v.zone.as_str();
    let mut node = Node {
        metadata: metadata(spec, app, &name, zone, v),
        spec: Some(NodeSpec {
            pod_cidr: Some(v.pod_cidr.clone()),
            pod_cidrs: Some(vec![v.pod_cidr.clone()]),
            provider_id: Some(format!("gce://prod-project/{zone}/{name}")),
            ..Default::default()
        }),
        status: Some(status(spec, app, &name, v)),
    };
    if spec.last_applied {
        // A node written with `kubectl apply` (a static node, or one a tool manages).
        let applied = json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"annotations": {}, "labels": &node.metadata.labels, "name": &name},
            "spec": {"providerID": node.spec.as_ref().map(|s| &s.provider_id)},
        });
        node.metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .insert(LAST_APPLIED_ANNOTATION.to_owned(), applied.to_string());
    }
    if spec.managed_fields > 0 {
        let value = serde_json::to_value(&node).expect("a generated node serializes");
        node.metadata.managed_fields = Some(managed_fields(spec, &value, v));
    }
    node
}

fn metadata(spec: &ObjectSpec, app: &str, name: &str, zone: &str, v: &NodeValues) -> ObjectMeta {
    let region = "europe-west1";
    let mut labels: BTreeMap<String, String> = [
        ("beta.kubernetes.io/arch", "amd64"),
        ("beta.kubernetes.io/instance-type", "e2-standard-4"),
        ("beta.kubernetes.io/os", "linux"),
        ("cloud.google.com/gke-nodepool", app),
        ("failure-domain.beta.kubernetes.io/region", region),
        ("failure-domain.beta.kubernetes.io/zone", zone),
        ("kubernetes.io/arch", "amd64"),
        ("kubernetes.io/hostname", name),
        ("kubernetes.io/os", "linux"),
        ("node.kubernetes.io/instance-type", "e2-standard-4"),
        ("topology.kubernetes.io/region", region),
        ("topology.kubernetes.io/zone", zone),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    for i in 0..spec.labels as usize {
        let (key, value) = match EXTRA_LABELS.get(i) {
            Some((k, v)) => ((*k).to_owned(), (*v).to_owned()),
            None => (format!("example.com/label-{i}"), format!("value-{i}")),
        };
        labels.insert(key, value);
    }
    let mut extra = v.extra_annotations.iter();
    let annotations: BTreeMap<String, String> = (0..spec.annotations as usize)
        .map(|i| {
            let value = match i {
                0 => "0".to_owned(),
                1 => "true".to_owned(),
                2 => format!(
                    r#"{{"pd.csi.storage.gke.io":"projects/prod-project/zones/{zone}/instances/{name}"}}"#
                ),
                3 => v.instance_id.clone(),
                _ => extra.next().expect("a hex per extra annotation").clone(),
            };
            let key = match ANNOTATIONS.get(i) {
                Some(key) => (*key).to_owned(),
                None => format!("example.com/annotation-{i}"),
            };
            (key, value)
        })
        .collect();
    ObjectMeta {
        name: Some(name.to_owned()),
        uid: Some(v.uid.clone()),
        resource_version: Some(v.resource_version.clone()),
        creation_timestamp: Some(time(v.created.0)),
        labels: Some(labels),
        annotations: (!annotations.is_empty()).then_some(annotations),
        ..Default::default()
    }
}

fn quantities(pairs: [(&str, &str); 6]) -> BTreeMap<String, Quantity> {
    pairs
        .into_iter()
        .map(|(k, v)| (k.to_owned(), Quantity(v.to_owned())))
        .collect()
}

fn status(spec: &ObjectSpec, app: &str, name: &str, v: &NodeValues) -> NodeStatus {
    let features = |name: &str| NodeRuntimeHandler {
        name: Some(name.to_owned()),
        features: Some(NodeRuntimeHandlerFeatures {
            recursive_read_only_mounts: Some(true),
            user_namespaces: Some(true),
        }),
    };
    NodeStatus {
        addresses: Some(
            [
                ("InternalIP", v.internal_ip.as_str()),
                ("ExternalIP", v.external_ip.as_str()),
                ("Hostname", name),
            ]
            .into_iter()
            .map(|(type_, address)| NodeAddress {
                type_: type_.to_owned(),
                address: address.to_owned(),
            })
            .collect(),
        ),
        allocatable: Some(quantities([
            ("cpu", "3920m"),
            ("ephemeral-storage", "47060071478"),
            ("hugepages-1Gi", "0"),
            ("hugepages-2Mi", "0"),
            ("memory", "13594664Ki"),
            ("pods", "110"),
        ])),
        capacity: Some(quantities([
            ("cpu", "4"),
            ("ephemeral-storage", "98831908Ki"),
            ("hugepages-1Gi", "0"),
            ("hugepages-2Mi", "0"),
            ("memory", "16393264Ki"),
            ("pods", "110"),
        ])),
        conditions: Some(
            CONDITIONS
                .iter()
                .zip(&v.transitions)
                .map(|((type_, status, reason, message), at)| NodeCondition {
                    type_: (*type_).to_owned(),
                    status: (*status).to_owned(),
                    reason: Some((*reason).to_owned()),
                    message: Some((*message).to_owned()),
                    last_heartbeat_time: Some(time(v.heartbeat.0)),
                    last_transition_time: Some(time(at.0)),
                })
                .collect(),
        ),
        daemon_endpoints: Some(NodeDaemonEndpoints {
            kubelet_endpoint: Some(DaemonEndpoint { port: 10250 }),
        }),
        features: Some(NodeFeatures {
            supplemental_groups_policy: Some(true),
        }),
        images: Some(images(spec, app)),
        node_info: Some(NodeSystemInfo {
            architecture: "amd64".to_owned(),
            boot_id: v.boot_id.clone(),
            container_runtime_version: "containerd://2.0.4".to_owned(),
            kernel_version: "6.6.72+".to_owned(),
            kube_proxy_version: String::new(),
            kubelet_version: "v1.35.0-gke.1000".to_owned(),
            machine_id: v.machine_id.clone(),
            operating_system: "linux".to_owned(),
            os_image: "Container-Optimized OS from Google".to_owned(),
            system_uuid: v.system_uuid.clone(),
            swap: None,
        }),
        runtime_handlers: Some(vec![features(""), features("runc")]),
        ..Default::default()
    }
}

/// The images of pool `app`'s nodes: `spec.images` of them, each a digest reference and a
/// tag reference, the same on every node of the pool (its workloads pulled them).
fn images(spec: &ObjectSpec, app: &str) -> Vec<ContainerImage> {
    let count = spec.images.unwrap_or(DEFAULT_NODE_IMAGES);
    let pool = super::APPS.iter().position(|a| *a == app).unwrap_or(0) as u64;
    (0..count)
        .map(|i| {
            let mut rng = rng(spec.seed, &[0x1a6e, pool, u64::from(i)]);
            let repo = IMAGES[i as usize % IMAGES.len()];
            let tag = format!("v1.{}.{}", i / IMAGES.len() as u32, rng.next_u32() % 40);
            ContainerImage {
                names: Some(vec![
                    format!("{repo}@sha256:{}", hex(&mut rng, 64)),
                    format!("{repo}:{tag}"),
                ]),
                size_bytes: Some(i64::from(5_000_000 + rng.next_u32() % 400_000_000)),
            }
        })
        .collect()
}

/// managedFields as a cluster records them for a node: the kubelet's registration, the
/// kubelet's status reports, kube-controller-manager's pod CIDR and TTL, then further
/// managers.
fn managed_fields(spec: &ObjectSpec, node: &Value, v: &NodeValues) -> Vec<ManagedFieldsEntry> {
    let meta = &node["metadata"];
    let annotation = |key: &str| -> Value {
        let mut set = Map::new();
        if meta["annotations"].get(key).is_some() {
            set.insert(format!("f:{key}"), json!({}));
        }
        Value::Object(set)
    };
    // The kubelet registers the node: its labels, the attach-detach annotation, providerID.
    let mut registration = Map::new();
    let mut meta_set = Map::new();
    meta_set.insert("f:labels".to_owned(), field_set("labels", &meta["labels"]));
    let attach = annotation(ANNOTATIONS[1]);
    if attach.as_object().is_some_and(|a| !a.is_empty()) {
        meta_set.insert("f:annotations".to_owned(), attach);
    }
    registration.insert("f:metadata".to_owned(), Value::Object(meta_set));
    registration.insert("f:spec".to_owned(), json!({"f:providerID": {}}));
    let mut out = vec![update_entry(
        "kubelet",
        None,
        Value::Object(registration),
        v.created,
    )];
    if spec.managed_fields > 1 {
        let status = json!({ "f:status": root_field_set("status", &node["status"]) });
        out.push(update_entry("kubelet", Some("status"), status, v.heartbeat));
    }
    if spec.managed_fields > 2 {
        let mut controller = json!({"f:spec": {
            "f:podCIDR": {},
            "f:podCIDRs": {".": {}, format!("v:\"{}\"", v.pod_cidr): {}},
        }});
        let ttl = annotation(ANNOTATIONS[0]);
        if ttl.as_object().is_some_and(|a| !a.is_empty()) {
            controller["f:metadata"] = json!({ "f:annotations": ttl });
        }
        out.push(update_entry(
            "kube-controller-manager",
            None,
            controller,
            v.controller_at,
        ));
    }
    for ((manager, subresource), at) in OTHER_MANAGERS.iter().cycle().zip(&v.managers_at) {
        let owned = match subresource {
            Some(_) => {
                json!({ "f:status": { "f:conditions": field_set("conditions", &node["status"]["conditions"]) } })
            }
            None => json!({ "f:metadata": { "f:labels": field_set("labels", &meta["labels"]) } }),
        };
        out.push(update_entry(manager, *subresource, owned, *at));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use scenario::ObjectKind;

    fn nodes() -> ObjectSpec {
        let mut spec = ObjectSpec::pods(100);
        spec.kind = ObjectKind::Node;
        spec.namespaces = 1;
        spec.images = Some(DEFAULT_NODE_IMAGES);
        spec
    }

    fn node(spec: &ObjectSpec, index: u32, generation: u32) -> Node {
        let id = ObjectId::new(index, 0, generation, 7);
        let app = super::super::app_of(spec, index);
        node_from(spec, index, app, &NodeValues::of(spec, id))
    }

    #[test]
    fn a_default_node_is_mostly_its_images() {
        let spec = nodes();
        let full = serde_json::to_vec(&node(&spec, 3, 1)).unwrap().len();
        let mut bare = nodes();
        bare.images = Some(0);
        let without = serde_json::to_vec(&node(&bare, 3, 1)).unwrap().len();
        assert!((12_000..=30_000).contains(&full), "a node is {full} bytes");
        let share = (full - without) as f64 / full as f64;
        assert!((0.4..=0.8).contains(&share), "images are {share:.2}");
        let n = node(&spec, 3, 1);
        assert_eq!(n.status.unwrap().images.unwrap().len(), 50);
        assert!(n.metadata.namespace.is_none());
    }

    #[test]
    fn an_update_moves_the_heartbeat_and_nothing_else() {
        let spec = nodes();
        let (a, b) = (node(&spec, 4, 1), node(&spec, 4, 2));
        assert_ne!(a, b);
        let beat = |n: &Node| {
            n.status.as_ref().unwrap().conditions.as_ref().unwrap()[4]
                .last_heartbeat_time
                .clone()
        };
        assert_ne!(beat(&a), beat(&b));
        let mut a = a;
        for (c, d) in a
            .status
            .as_mut()
            .unwrap()
            .conditions
            .as_mut()
            .unwrap()
            .iter_mut()
            .zip(b.status.as_ref().unwrap().conditions.as_ref().unwrap())
        {
            c.last_heartbeat_time = d.last_heartbeat_time.clone();
        }
        a.metadata.managed_fields = b.metadata.managed_fields.clone();
        assert_eq!(a, b);
    }
}
