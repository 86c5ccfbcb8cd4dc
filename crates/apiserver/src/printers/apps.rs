//! The printers of `apps/v1`: `printDeployment`, `printReplicaSet`,
//! `printStatefulSet`, `printDaemonSet`.

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::{age, age_column, column, list, name_column, selector_text, text};

/// kube-apiserver's Deployment columns, wide ones included.
pub(super) fn deployment_columns(name: Value, age: Value) -> Vec<Value> {
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

/// A Deployment's cells: kube-apiserver's `printDeployment`, wide ones included.
pub(super) fn deployment_cells(deployment: &Value, name: Value, age: Value) -> Vec<Value> {
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

/// kube-apiserver's table columns for `kind` (`printReplicaSet`,
/// `printStatefulSet`, `printDaemonSet`), the wide ones included.
pub(super) fn columns(kind: &str) -> Value {
    Value::Array(match kind {
        "ReplicaSet" => replica_set_columns(),
        "StatefulSet" => vec![
            name_column(),
            column("Ready", "", 0, "Number of the pod with ready state"),
            age_column(),
            column("Containers", "", 1, CONTAINERS),
            column("Images", "", 1, IMAGES),
        ],
        _ => daemon_set_columns(),
    })
}

/// The wide columns' descriptions, the same for every workload.
pub(super) const CONTAINERS: &str = "Names of each container in the template.";

pub(super) const IMAGES: &str = "Images referenced by each container in the template.";

/// A column of a count, typed as kube-apiserver types it.
fn count_column(title: &str, description: &str) -> Value {
    let mut column = column(title, "", 0, description);
    column["type"] = json!("integer");
    column
}

/// `printReplicaSet`'s columns.
fn replica_set_columns() -> Vec<Value> {
    let more = "More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset";
    vec![
        name_column(),
        count_column(
            "Desired",
            &format!(
                "Replicas is the number of desired pods. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. {more}"
            ),
        ),
        count_column(
            "Current",
            &format!(
                "Replicas is the most recently observed number of non-terminating pods. {more}"
            ),
        ),
        count_column(
            "Ready",
            "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.",
        ),
        age_column(),
        column("Containers", "", 1, CONTAINERS),
        column("Images", "", 1, IMAGES),
        column(
            "Selector",
            "",
            1,
            "Selector is a label query over pods that should match the replica count. Label keys and values that must match in order to be controlled by this replica set. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
        ),
    ]
}

/// `printDaemonSet`'s columns.
fn daemon_set_columns() -> Vec<Value> {
    let more = "More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/";
    vec![
        name_column(),
        count_column(
            "Desired",
            &format!(
                "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod). {more}"
            ),
        ),
        count_column(
            "Current",
            &format!(
                "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. {more}"
            ),
        ),
        count_column(
            "Ready",
            "numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.",
        ),
        count_column(
            "Up-to-date",
            "The total number of nodes that are running updated daemon pod",
        ),
        count_column(
            "Available",
            "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)",
        ),
        column(
            "Node Selector",
            "",
            0,
            "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/",
        ),
        age_column(),
        column("Containers", "", 1, CONTAINERS),
        column("Images", "", 1, IMAGES),
        column(
            "Selector",
            "",
            1,
            "A label query over pods that are managed by the daemon set. Must match in order to be controlled. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
        ),
    ]
}

/// A workload's cells, as kube-apiserver's printer of its kind fills them.
pub(super) fn cells(kind: &str, object: &Value, now: Timestamp) -> Vec<Value> {
    let (spec, status) = (&object["spec"], &object["status"]);
    let count = |value: &Value| json!(value.as_i64().unwrap_or_default());
    let containers = spec["template"]["spec"]["containers"].as_array();
    let joined = |field: &str| {
        let each = containers.into_iter().flatten().map(|c| text(c, field));
        json!(each.collect::<Vec<_>>().join(","))
    };
    let name = object["metadata"]["name"].clone();
    let age = json!(age(object["metadata"]["creationTimestamp"].as_str(), now));
    let selector = json!(selector_text(&spec["selector"]));
    match kind {
        "ReplicaSet" => vec![
            name,
            count(&spec["replicas"]),
            count(&status["replicas"]),
            count(&status["readyReplicas"]),
            age,
            joined("name"),
            joined("image"),
            selector,
        ],
        "StatefulSet" => {
            let ready = status["readyReplicas"].as_i64().unwrap_or_default();
            let desired = spec["replicas"].as_i64().unwrap_or_default();
            vec![
                name,
                json!(format!("{ready}/{desired}")),
                age,
                joined("name"),
                joined("image"),
            ]
        }
        _ => {
            let mut node_selector: Vec<String> = (spec["template"]["spec"]["nodeSelector"]
                .as_object()
                .into_iter()
                .flatten())
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
            .collect();
            node_selector.sort();
            let node_selector = match node_selector.is_empty() {
                true => "<none>".to_owned(),
                false => node_selector.join(","),
            };
            vec![
                name,
                count(&status["desiredNumberScheduled"]),
                count(&status["currentNumberScheduled"]),
                count(&status["numberReady"]),
                count(&status["updatedNumberScheduled"]),
                count(&status["numberAvailable"]),
                json!(node_selector),
                age,
                joined("name"),
                joined("image"),
                selector,
            ]
        }
    }
}
