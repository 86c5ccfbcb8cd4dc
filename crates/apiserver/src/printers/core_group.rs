//! The core group's printers but a pod's: `printNode`, `printNamespace`,
//! `printService`, `printEvent`.

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::{age, column, list, text};

/// kube-apiserver's node columns, wide ones included.
pub(super) fn node_columns(name: Value, age: Value) -> Vec<Value> {
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

/// A namespace table's column definitions: NAME, STATUS, AGE.
pub(super) fn namespace_columns() -> Value {
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
pub(super) fn namespace_cells(namespace: &Value, now: Timestamp) -> Vec<Value> {
    vec![
        namespace["metadata"]["name"].clone(),
        namespace["status"]["phase"].clone(),
        json!(age(
            namespace["metadata"]["creationTimestamp"].as_str(),
            now
        )),
    ]
}

/// A node's cells: kube-apiserver's `printNode`, from the node's JSON (wide ones included,
/// as the server always sends them).
pub(super) fn node_cells(node: &Value, name: Value, age: Value) -> Vec<Value> {
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

/// kube-apiserver's table columns for Services (`printService`), the wide one included.
pub(super) fn service_columns() -> Value {
    let name = "The object's name, unique within its namespace.";
    json!([
        column("Name", "name", 0, name),
        column("Type", "", 0, "type determines how the Service is exposed."),
        column(
            "Cluster-IP",
            "",
            0,
            "clusterIP is the IP address of the service."
        ),
        column(
            "External-IP",
            "",
            0,
            "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service."
        ),
        column("Port(s)", "", 0, "The network ports the service exposes."),
        column("Age", "", 0, "Time since the object's creationTimestamp."),
        column(
            "Selector",
            "",
            1,
            "Route service traffic to pods with label keys and values matching this selector."
        ),
    ])
}

/// A Service's cells, as `printService` fills them: the first cluster IP, the external
/// addresses its type has, each port as `port[:nodePort]/protocol`, the selector.
pub(super) fn service_cells(service: &Value, now: Timestamp) -> Vec<Value> {
    let spec = &service["spec"];
    let strings = |value: &Value| -> Vec<String> {
        (value.as_array().into_iter().flatten())
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    };
    let internal = spec["clusterIPs"][0].as_str().unwrap_or("<none>");
    let external_ips = strings(&spec["externalIPs"]);
    let external = match text(spec, "type") {
        "ClusterIP" | "NodePort" if external_ips.is_empty() => "<none>".to_owned(),
        "ClusterIP" | "NodePort" => external_ips.join(","),
        "LoadBalancer" => {
            let ingress = service["status"]["loadBalancer"]["ingress"].as_array();
            let mut balancers: Vec<String> = (ingress.into_iter().flatten())
                .filter_map(|i| {
                    [text(i, "ip"), text(i, "hostname")]
                        .into_iter()
                        .find(|t| !t.is_empty())
                        .map(str::to_owned)
                })
                .collect();
            balancers.sort();
            balancers.dedup();
            let all: Vec<String> = balancers.into_iter().chain(external_ips).collect();
            match all.is_empty() {
                true => "<pending>".to_owned(),
                false => all.join(","),
            }
        }
        "ExternalName" => text(spec, "externalName").to_owned(),
        _ => "<unknown>".to_owned(),
    };
    let ports: Vec<String> = (spec["ports"].as_array().into_iter().flatten())
        .map(|p| {
            let (port, protocol) = (number(&p["port"]), text(p, "protocol"));
            match number(&p["nodePort"]) {
                0 => format!("{port}/{protocol}"),
                node_port => format!("{port}:{node_port}/{protocol}"),
            }
        })
        .collect();
    let ports = match ports.is_empty() {
        true => "<none>".to_owned(),
        false => ports.join(","),
    };
    let mut selector: Vec<String> = (spec["selector"].as_object().into_iter().flatten())
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    selector.sort();
    let selector = match selector.is_empty() {
        true => "<none>".to_owned(),
        false => selector.join(","),
    };
    let created = service["metadata"]["creationTimestamp"].as_str();
    vec![
        service["metadata"]["name"].clone(),
        json!(text(spec, "type")),
        json!(internal),
        json!(external),
        json!(ports),
        json!(age(created, now)),
        json!(selector),
    ]
}

/// kube-apiserver's columns for Events (`printEvent`'s), wide ones included, `name` the
/// Name column, which is wide for them.
pub(super) fn event_columns(name: Value) -> Value {
    let mut name = name;
    name["priority"] = json!(1);
    json!([
        column(
            "Last Seen",
            "",
            0,
            "The time at which the most recent occurrence of this event was recorded."
        ),
        column(
            "Type",
            "",
            0,
            "Type of this event (Normal, Warning), new types could be added in the future"
        ),
        column(
            "Reason",
            "",
            0,
            "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."
        ),
        column("Object", "", 0, "The object that this event is about."),
        column(
            "Subobject",
            "",
            1,
            "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]."
        ),
        column(
            "Source",
            "",
            1,
            "The component reporting this event. Should be a short machine understandable string."
        ),
        column(
            "Message",
            "",
            0,
            "A human-readable description of the status of this operation."
        ),
        column(
            "First Seen",
            "",
            1,
            "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)"
        ),
        column(
            "Count",
            "",
            1,
            "The number of times this event has occurred."
        ),
        name,
    ])
}

/// `printEvent`'s cells, wide ones included (kube-apiserver fills every column).
pub(super) fn event_cells(event: &Value, now: Timestamp) -> Vec<Value> {
    let time = |field: &str| event[field].as_str().map(|t| age(Some(t), now));
    let first = time("firstTimestamp").or_else(|| time("eventTime"));
    let first = first.unwrap_or_else(|| age(None, now));
    let series = &event["series"];
    let (last, count) = match series.is_null() {
        false => (
            age(series["lastObservedTime"].as_str(), now),
            series["count"].as_i64().unwrap_or_default(),
        ),
        true => (
            time("lastTimestamp").unwrap_or_else(|| first.clone()),
            event["count"].as_i64().filter(|c| *c != 0).unwrap_or(1),
        ),
    };
    let involved = &event["involvedObject"];
    let kind = text(involved, "kind").to_lowercase();
    let target = match text(involved, "name") {
        "" => kind,
        name => format!("{kind}/{name}"),
    };
    vec![
        json!(last),
        json!(text(event, "type")),
        json!(text(event, "reason")),
        json!(target),
        json!(text(involved, "fieldPath")),
        json!(source_text(event)),
        json!(text(event, "message").trim()),
        json!(first),
        json!(count),
        event["metadata"]["name"].clone(),
    ]
}

/// `formatEventSource`: the source's component (or the reporting controller), and its
/// host (or the reporting instance), as `component, host`.
fn source_text(event: &Value) -> String {
    let source = &event["source"];
    let or = |a: &str, b: &str| {
        let first = text(source, a);
        if first.is_empty() {
            text(event, b).to_owned()
        } else {
            first.to_owned()
        }
    };
    let component = or("component", "reportingComponent");
    match or("host", "reportingInstance") {
        host if host.is_empty() => component,
        host => format!("{component}, {host}"),
    }
}

fn number(value: &Value) -> i64 {
    value.as_i64().unwrap_or_default()
}
