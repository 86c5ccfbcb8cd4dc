//! Server-side tables (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`), which
//! `kubectl get` asks for first: the columns kube-apiserver's printers give each kind
//! (pods: Ready, Status, Restarts, Age and the wide ones; ConfigMaps: Data; Secrets: Type
//! and Data), one row per object, and each row's object as `includeObject` asks (its
//! metadata by default). A watch's first event carries the column definitions, later ones
//! `null`, as kube-apiserver sends them.
//!
//! Only kubectl asks for tables, never an informer, so no scenario's figures go through
//! here; a row is rendered from the object decoded whole.

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::generate::Generator;
use super::version::Version;
use crate::scenario::ObjectKind;

/// What each row carries of its object (`includeObject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Include {
    /// No object: `"object": null`.
    None,
    /// The object's `PartialObjectMetadata` (the default).
    Metadata,
    /// The whole object.
    Object,
}

impl Include {
    /// The `includeObject` query parameter's value; `None` when it names no choice.
    pub(super) fn parse(value: &str) -> Option<Include> {
        match value {
            "None" => Some(Include::None),
            "Metadata" => Some(Include::Metadata),
            "Object" => Some(Include::Object),
            _ => None,
        }
    }
}

/// The `kind`'s column definitions, as a JSON array.
pub(super) fn columns(kind: ObjectKind) -> Value {
    let name = column(
        "Name",
        "name",
        0,
        "The object's name, unique within its namespace.",
    );
    let age = column("Age", "", 0, "Time since the object's creationTimestamp.");
    let columns = match kind {
        ObjectKind::Pod => pod_columns(name, age),
        ObjectKind::ConfigMap => vec![
            name,
            column("Data", "", 0, "Entries of data and binaryData."),
            age,
        ],
        ObjectKind::Secret => vec![
            name,
            column("Type", "", 0, "The secret's type."),
            column("Data", "", 0, "Entries of data."),
            age,
        ],
        ObjectKind::Node => node_columns(name, age),
        ObjectKind::Deployment => deployment_columns(name, age),
        // A custom resource without printer columns: its name and age.
        ObjectKind::Sampled(_) => vec![name, age],
    };
    Value::Array(columns)
}

/// One column definition (a string, as kube-apiserver's printers declare most).
pub(super) fn column(name: &str, format: &str, priority: u8, description: &str) -> Value {
    json!({"name": name, "type": "string", "format": format,
           "description": description, "priority": priority})
}

/// kube-apiserver's pod columns, wide ones (priority 1) included.
fn pod_columns(name: Value, age: Value) -> Vec<Value> {
    vec![
        name,
        column("Ready", "", 0, "Ready containers of all containers."),
        column(
            "Status",
            "",
            0,
            "The aggregate status of the pod's containers.",
        ),
        column(
            "Restarts",
            "",
            0,
            "Container restarts, and how long ago the last one.",
        ),
        age,
        column("IP", "", 1, "The pod's first IP address."),
        column("Node", "", 1, "The node the pod is scheduled to."),
        column(
            "Nominated Node",
            "",
            1,
            "The node the pod may preempt others on.",
        ),
        column(
            "Readiness Gates",
            "",
            1,
            "Readiness gates whose condition is True.",
        ),
    ]
}

/// kube-apiserver's node columns, wide ones included.
fn node_columns(name: Value, age: Value) -> Vec<Value> {
    vec![
        name,
        column("Status", "", 0, "The status of the node"),
        column("Roles", "", 0, "The roles of the node"),
        age,
        column("Version", "", 0, "Kubelet Version reported by the node."),
        column("Internal-IP", "", 1, "The node's addresses."),
        column("External-IP", "", 1, "The node's addresses."),
        column("OS-Image", "", 1, "OS Image reported by the node."),
        column(
            "Kernel-Version",
            "",
            1,
            "Kernel Version reported by the node.",
        ),
        column(
            "Container-Runtime",
            "",
            1,
            "ContainerRuntime Version reported by the node.",
        ),
    ]
}

/// kube-apiserver's Deployment columns, wide ones included.
fn deployment_columns(name: Value, age: Value) -> Vec<Value> {
    vec![
        name,
        column("Ready", "", 0, "Number of the pod with ready state"),
        column(
            "Up-to-date",
            "",
            0,
            "Pods targeted by the deployment that have the desired template spec.",
        ),
        column(
            "Available",
            "",
            0,
            "Available pods (ready for at least minReadySeconds) targeted by the deployment.",
        ),
        age,
        column(
            "Containers",
            "",
            1,
            "Names of each container in the template.",
        ),
        column(
            "Images",
            "",
            1,
            "Images referenced by each container in the template.",
        ),
        column("Selector", "", 1, "Label selector for pods."),
    ]
}

/// kube-apiserver's namespace table: NAME, STATUS, AGE; `metadata` as [`of_values`]
/// takes it.
pub(super) fn of_namespaces(
    namespaces: &[Value],
    include: Include,
    metadata: Option<Value>,
) -> Value {
    of_values(
        namespaces,
        namespace_columns(),
        namespace_cells,
        include,
        metadata,
    )
}

/// A namespace table's column definitions: NAME, STATUS, AGE.
fn namespace_columns() -> Value {
    json!([
        {"name": "Name", "type": "string", "format": "name", "priority": 0,
         "description": "The namespace's name."},
        {"name": "Status", "type": "string", "format": "", "priority": 0,
         "description": "The namespace's phase: Active or Terminating."},
        {"name": "Age", "type": "string", "format": "", "priority": 0,
         "description": "Time since the namespace's creationTimestamp."},
    ])
}

/// A namespace's cells.
fn namespace_cells(namespace: &Value, now: Timestamp) -> Vec<Value> {
    vec![
        namespace["metadata"]["name"].clone(),
        namespace["status"]["phase"].clone(),
        json!(age(
            namespace["metadata"]["creationTimestamp"].as_str(),
            now
        )),
    ]
}

/// The table of objects kept as JSON (namespaces, Leases, Events): `columns`, and a row
/// per object of its `cells` with what `include` asks of the object; `metadata` is the
/// list's, or for one object (`None`) its resourceVersion.
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
    let meta = &object["metadata"];
    let name = json!(meta["name"].as_str().unwrap_or_default());
    let age = json!(age(meta["creationTimestamp"].as_str(), now));
    let entries = |field: &str| object[field].as_object().map_or(0, serde_json::Map::len);
    match kind {
        ObjectKind::Pod => pod_cells(object, now, name, age),
        ObjectKind::ConfigMap => vec![name, json!(entries("data") + entries("binaryData")), age],
        ObjectKind::Secret => vec![
            name,
            json!(object["type"].as_str().unwrap_or_default()),
            json!(entries("data")),
            age,
        ],
        ObjectKind::Node => node_cells(object, name, age),
        ObjectKind::Deployment => deployment_cells(object, name, age),
        ObjectKind::Sampled(_) => vec![name, age],
    }
}

/// A Deployment's cells: kube-apiserver's `printDeployment`, wide ones included.
fn deployment_cells(deployment: &Value, name: Value, age: Value) -> Vec<Value> {
    let (spec, status) = (&deployment["spec"], &deployment["status"]);
    let count = |v: &Value| v.as_i64().unwrap_or(0);
    let containers = list(&spec["template"]["spec"]["containers"]);
    let joined = |field: &str| {
        containers
            .iter()
            .map(|c| c[field].as_str().unwrap_or_default())
            .collect::<Vec<_>>()
            .join(",")
    };
    vec![
        name,
        json!(format!(
            "{}/{}",
            count(&status["readyReplicas"]),
            // An unset `replicas` defaults to 1 before a Deployment is stored.
            spec["replicas"].as_i64().unwrap_or(1)
        )),
        json!(count(&status["updatedReplicas"])),
        json!(count(&status["availableReplicas"])),
        age,
        json!(joined("name")),
        json!(joined("image")),
        json!(selector_text(&spec["selector"])),
    ]
}

/// A label selector as `metav1.LabelSelectorAsSelector(...).String()` writes it:
/// requirements sorted by key, `k=v` for a matched label, set-based ones in kubectl's
/// syntax; `""` for none.
pub(super) fn selector_text(selector: &Value) -> String {
    let mut terms: Vec<(String, String)> = selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), format!("{k}={}", v.as_str().unwrap_or_default())))
        .collect();
    for expression in list(&selector["matchExpressions"]) {
        let key = expression["key"].as_str().unwrap_or_default();
        let mut values: Vec<&str> = list(&expression["values"])
            .iter()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        let term = match expression["operator"].as_str().unwrap_or_default() {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_owned(),
            "DoesNotExist" => format!("!{key}"),
            _ => return "<invalid>".to_owned(),
        };
        terms.push((key.to_owned(), term));
    }
    // No requirement selects everything, written as nothing.
    terms.sort();
    terms
        .into_iter()
        .map(|(_, term)| term)
        .collect::<Vec<_>>()
        .join(",")
}

/// A node's cells: kube-apiserver's `printNode`, from the node's JSON (wide ones included,
/// as the server always sends them).
fn node_cells(node: &Value, name: Value, age: Value) -> Vec<Value> {
    let status = &node["status"];
    // The last Ready condition counts, as in the printer's map by type.
    let ready = list(&status["conditions"])
        .iter()
        .rfind(|c| c["type"] == "Ready");
    let mut state = vec![match ready {
        Some(c) if c["status"] == "True" => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }];
    if node["spec"]["unschedulable"] == true {
        state.push("SchedulingDisabled");
    }
    let mut roles: Vec<&str> = node["metadata"]["labels"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(
            |(key, value)| match key.strip_prefix("node-role.kubernetes.io/") {
                Some(role) if !role.is_empty() => Some(role),
                Some(_) => None,
                None => (key == "kubernetes.io/role")
                    .then(|| value.as_str())
                    .flatten()
                    .filter(|v| !v.is_empty()),
            },
        )
        .collect();
    roles.sort_unstable();
    roles.dedup();
    let info = &status["nodeInfo"];
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let or_unknown = |v: &Value| match v.as_str() {
        Some(s) if !s.is_empty() => s.to_owned(),
        _ => "<unknown>".to_owned(),
    };
    let address = |type_: &str| {
        list(&status["addresses"])
            .iter()
            .find(|a| a["type"] == type_)
            .map_or("<none>".to_owned(), |a| text(&a["address"]))
    };
    let mut kernel = or_unknown(&info["kernelVersion"]);
    if let Some(arch) = info["architecture"].as_str().filter(|a| !a.is_empty()) {
        kernel = format!("{kernel} ({arch})");
    }
    vec![
        name,
        json!(state.join(",")),
        json!(if roles.is_empty() {
            "<none>".to_owned()
        } else {
            roles.join(",")
        }),
        age,
        json!(text(&info["kubeletVersion"])),
        json!(address("InternalIP")),
        json!(address("ExternalIP")),
        json!(or_unknown(&info["osImage"])),
        json!(kernel),
        json!(or_unknown(&info["containerRuntimeVersion"])),
    ]
}

/// A pod's cells: kube-apiserver's `printPod`, from the pod's JSON.
fn pod_cells(pod: &Value, now: Timestamp, name: Value, age: Value) -> Vec<Value> {
    let spec = &pod["spec"];
    let status = &pod["status"];
    let summary = PodSummary::of(pod);
    let restarts = match summary.last_restart {
        Some(at) if summary.restarts != 0 => {
            format!("{} ({} ago)", summary.restarts, human_duration(now, at))
        }
        _ => summary.restarts.to_string(),
    };
    let text = |v: &Value| match v.as_str() {
        Some(s) if !s.is_empty() => s.to_owned(),
        _ => "<none>".to_owned(),
    };
    let gates = list(&spec["readinessGates"]);
    let readiness_gates = if gates.is_empty() {
        "<none>".to_owned()
    } else {
        let conditions = list(&status["conditions"]);
        let passed = gates
            .iter()
            .filter(|gate| {
                conditions
                    .iter()
                    .find(|c| c["type"] == gate["conditionType"])
                    .is_some_and(|c| c["status"] == "True")
            })
            .count();
        format!("{passed}/{}", gates.len())
    };
    vec![
        name,
        json!(format!("{}/{}", summary.ready, summary.total)),
        json!(summary.reason),
        json!(restarts),
        age,
        json!(text(&status["podIPs"][0]["ip"])),
        json!(text(&spec["nodeName"])),
        json!(text(&status["nominatedNodeName"])),
        json!(readiness_gates),
    ]
}

/// What `printPod` reads of a pod's containers: ready and total, restarts, the last
/// restart, and the reason the Status column shows.
struct PodSummary {
    ready: usize,
    total: usize,
    restarts: u64,
    last_restart: Option<Timestamp>,
    reason: String,
}

impl PodSummary {
    fn of(pod: &Value) -> PodSummary {
        let (spec, status) = (&pod["spec"], &pod["status"]);
        let phase = status["phase"].as_str().unwrap_or_default();
        let mut reason = match status["reason"].as_str() {
            Some(r) if !r.is_empty() => r.to_owned(),
            _ => phase.to_owned(),
        };
        if list(&status["conditions"])
            .iter()
            .any(|c| c["type"] == "PodScheduled" && c["reason"] == "SchedulingGated")
        {
            reason = "SchedulingGated".to_owned();
        }
        let init_specs = list(&spec["initContainers"]);
        let sidecar = |name: &Value| {
            init_specs
                .iter()
                .any(|c| &c["name"] == name && c["restartPolicy"] == "Always")
        };
        let mut summary = PodSummary {
            ready: 0,
            total: list(&spec["containers"]).len()
                + init_specs
                    .iter()
                    .filter(|c| c["restartPolicy"] == "Always")
                    .count(),
            restarts: 0,
            last_restart: None,
            reason,
        };
        let (initializing, sidecars) = summary.init_containers(status, init_specs, sidecar);
        let initialized = list(&status["conditions"])
            .iter()
            .find(|c| c["type"] == "Initialized")
            .is_some_and(|c| c["status"] == "True");
        if !initializing || initialized {
            // The restarts shown are then the sidecars' and the containers'.
            (summary.restarts, summary.last_restart) = sidecars;
            summary.containers(status);
        }
        if !pod["metadata"]["deletionTimestamp"].is_null() {
            if status["reason"] == "NodeLost" {
                summary.reason = "Unknown".to_owned();
            } else if !matches!(phase, "Succeeded" | "Failed") {
                summary.reason = "Terminating".to_owned();
            }
        }
        summary
    }

    /// Init containers, in order, until the first one not done: whether the pod is still
    /// initializing (the reason then set), and the sidecars' (restartable init
    /// containers') restarts and last restart. Every init container's restarts are
    /// counted meanwhile, which a pod still initializing shows.
    fn init_containers(
        &mut self,
        status: &Value,
        specs: &[Value],
        sidecar: impl Fn(&Value) -> bool,
    ) -> (bool, (u64, Option<Timestamp>)) {
        let (mut restarts, mut last) = (0, None);
        let mut initializing = false;
        for (i, c) in list(&status["initContainerStatuses"]).iter().enumerate() {
            let (count, finished) = restart_of(c);
            self.restarts += count;
            self.last_restart = self.last_restart.max(finished);
            if sidecar(&c["name"]) {
                restarts += count;
                last = last.max(finished);
            }
            let (state, waiting) = (&c["state"]["terminated"], &c["state"]["waiting"]);
            if state.is_object() && state["exitCode"].as_i64() == Some(0) {
                continue;
            }
            if sidecar(&c["name"]) && c["started"] == true {
                self.ready += usize::from(c["ready"] == true);
                continue;
            }
            self.reason = if state.is_object() {
                format!("Init:{}", terminated_reason(state))
            } else if waiting["reason"]
                .as_str()
                .is_some_and(|r| !r.is_empty() && r != "PodInitializing")
            {
                format!("Init:{}", waiting["reason"].as_str().unwrap_or_default())
            } else {
                format!("Init:{i}/{}", specs.len())
            };
            initializing = true;
            break;
        }
        (initializing, (restarts, last))
    }

    /// The containers, last first as `printPod` walks them: ready ones, restarts, and the
    /// reason a waiting or terminated one gives.
    fn containers(&mut self, status: &Value) {
        let (mut running, mut error) = (false, None);
        for c in list(&status["containerStatuses"]).iter().rev() {
            let (count, finished) = restart_of(c);
            self.restarts += count;
            self.last_restart = self.last_restart.max(finished);
            let (waiting, terminated) = (&c["state"]["waiting"], &c["state"]["terminated"]);
            if let Some(reason) = waiting["reason"].as_str().filter(|r| !r.is_empty()) {
                self.reason = reason.to_owned();
            } else if terminated.is_object() {
                self.reason = terminated_reason(terminated);
                if terminated["exitCode"].as_i64() != Some(0) {
                    error = Some(self.reason.clone());
                }
            } else if c["ready"] == true && c["state"]["running"].is_object() {
                running = true;
                self.ready += 1;
            }
        }
        if self.reason == "Completed" {
            let ready = list(&status["conditions"])
                .iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True");
            match (running, error) {
                (true, _) if ready => self.reason = "Running".to_owned(),
                (_, Some(error)) => self.reason = error,
                (true, None) => self.reason = "NotReady".to_owned(),
                (false, None) => {}
            }
        }
    }
}

/// A container status's restart count, and when its last run ended.
fn restart_of(status: &Value) -> (u64, Option<Timestamp>) {
    let finished = status["lastState"]["terminated"]["finishedAt"]
        .as_str()
        .and_then(|t| t.parse().ok());
    (status["restartCount"].as_u64().unwrap_or(0), finished)
}

/// A terminated state's reason, or its signal or exit code.
fn terminated_reason(terminated: &Value) -> String {
    match terminated["reason"].as_str() {
        Some(reason) if !reason.is_empty() => reason.to_owned(),
        _ => match terminated["signal"].as_i64() {
            Some(signal) if signal != 0 => format!("Signal:{signal}"),
            _ => format!("ExitCode:{}", terminated["exitCode"].as_i64().unwrap_or(0)),
        },
    }
}

fn list(value: &Value) -> &[Value] {
    value.as_array().map_or(&[], Vec::as_slice)
}

/// The Age cell, or any time's as kube-apiserver's printers write it
/// (`translateTimestampSince`): `<unknown>` without one.
pub(super) fn age(created: Option<&str>, now: Timestamp) -> String {
    match created.and_then(|t| t.parse::<Timestamp>().ok()) {
        Some(at) => human_duration(now, at),
        None => "<unknown>".to_owned(),
    }
}

/// How long ago `at` was, as kubectl shows it (apimachinery's `HumanDuration`): seconds up
/// to two minutes, then minutes, hours, days and years, coarser as they grow.
pub(super) fn human_duration(now: Timestamp, at: Timestamp) -> String {
    let seconds = now.as_second() - at.as_second();
    if seconds < -1 {
        return "<invalid>".to_owned();
    }
    if seconds < 0 {
        return "0s".to_owned();
    }
    let (minutes, hours) = (seconds / 60, seconds / 3600);
    let days = hours / 24;
    let with = |big: i64, unit: &str, small: i64, small_unit: &str| {
        if small == 0 {
            format!("{big}{unit}")
        } else {
            format!("{big}{unit}{small}{small_unit}")
        }
    };
    match () {
        () if seconds < 120 => format!("{seconds}s"),
        () if minutes < 10 => with(minutes, "m", seconds % 60, "s"),
        () if minutes < 180 => format!("{minutes}m"),
        () if hours < 8 => with(hours, "h", minutes % 60, "m"),
        () if hours < 48 => format!("{hours}h"),
        () if hours < 24 * 8 => with(days, "d", hours % 24, "h"),
        () if hours < 24 * 365 * 2 => format!("{days}d"),
        () if hours < 24 * 365 * 8 => with(days / 365, "y", days % 365, "d"),
        () => format!("{}y", days / 365),
    }
}

#[cfg(test)]
mod tests;
