//! The defaults kube-apiserver v1.37 fills into what a client writes, before it checks and
//! stores it (k8s.io/kubernetes pkg/apis/core/v1 and apps/v1: `SetObjectDefaults_Pod`,
//! `_Deployment`, `_Secret`, `_Node`), so that an object written here reads back as it
//! would from a cluster: a pod's `dnsPolicy`, `restartPolicy`, `schedulerName`, grace
//! period and `securityContext`, each container's pull policy and termination message,
//! ports' protocol, probes' periods and thresholds, volumes' modes; a Deployment's
//! replicas, rolling-update strategy, history limit and progress deadline, and its pod
//! template's spec as a pod's; a Secret's `stringData` in its `data` and its `Opaque`
//! type ([`super::data`]); a Node's allocatable as its
//! capacity.
//!
//! Then what two admission plugins that kube-apiserver runs by default add to a pod
//! ([`admit`]): its priority (`Priority`) and its tolerations of a node not ready or
//! unreachable for five minutes (`DefaultTolerationSeconds`).
//!
//! Not here: a service account and its token volume (`ServiceAccount` admission, which
//! needs the account to exist), the volume sources of cloud disks (iSCSI, RBD, Azure,
//! ScaleIO) and quantities rounded up to the milli.

use serde_json::{Map, Value, json};

use scenario::ObjectKind;

/// `object`, a `kind` as a client wrote it, with kube-apiserver's defaults where it left
/// the fields unset.
pub(crate) fn apply(kind: ObjectKind, object: &mut Value) {
    match kind {
        ObjectKind::Pod => {
            if let Some(spec) = field(object, "spec") {
                pod_only(spec);
                pod_spec(spec);
            }
            if let Some(status) = field(object, "status") {
                pod_ips(status);
            }
        }
        ObjectKind::Deployment => {
            if let Some(spec) = field(object, "spec") {
                deployment_spec(spec);
                template(spec);
            }
        }
        ObjectKind::Secret => *object = super::data::secret_written(std::mem::take(object)),
        ObjectKind::Node => {
            // Allocatable is the capacity where the node says nothing else.
            if let Some(status) = field(object, "status")
                && status.get("allocatable").is_none_or(Value::is_null)
                && let Some(capacity) = status.get("capacity").filter(|c| c.is_object())
            {
                status["allocatable"] = capacity.clone();
            }
        }
        // A sampled kind's defaults are its server's: the tool knows none.
        ObjectKind::ConfigMap | ObjectKind::Sampled(_) => {}
    }
}

/// A workload's pod template (`spec.template.spec` of a Deployment, a ReplicaSet, a
/// StatefulSet or a DaemonSet, given its `spec`) with a pod's defaults, as
/// `SetObjectDefaults_*` fill a `PodTemplateSpec`.
pub(crate) fn template(spec: &mut Value) {
    let template = field(spec, "template").and_then(|t| field(t, "spec"));
    template.map(pod_spec);
}

/// The built-in priority classes kube-apiserver creates: name and value.
const SYSTEM_PRIORITY_CLASSES: [(&str, i64); 2] = [
    ("system-node-critical", 2_000_001_000),
    ("system-cluster-critical", 2_000_000_000),
];

/// What the `Priority` and `DefaultTolerationSeconds` admission plugins do to a pod
/// written to the object's path (`current` is the live pod for an update): on create, the
/// priority of its class (0 without one: no class is the default here) and
/// `PreemptLowerPriority`; on update, the live pod's priority where the write has none;
/// and on both, tolerations of the `not-ready` and `unreachable` taints for 300 s where
/// the pod tolerates neither already. A class other than the built-in ones is left as
/// written (kube-apiserver refuses a class it does not have).
pub(super) fn admit(kind: ObjectKind, object: &mut Value, current: Option<&Value>) {
    let Some(spec) = (kind == ObjectKind::Pod)
        .then(|| field(object, "spec"))
        .flatten()
    else {
        return;
    };
    match current {
        None => {
            let class = spec["priorityClassName"].as_str().unwrap_or_default();
            let priority = match class {
                "" => Some(0),
                class => SYSTEM_PRIORITY_CLASSES
                    .iter()
                    .find(|(name, _)| *name == class)
                    .map(|(_, value)| *value),
            };
            if let Some(priority) = priority {
                set(spec, "priority", json!(priority), Unset::Nil);
                let policy = json!("PreemptLowerPriority");
                set(spec, "preemptionPolicy", policy, Unset::Nil);
            }
        }
        Some(current) => {
            for kept in ["priority", "preemptionPolicy"] {
                set(spec, kept, current["spec"][kept].clone(), Unset::Nil);
            }
        }
    }
    for taint in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        let tolerated = spec["tolerations"].as_array().is_some_and(|all| {
            all.iter().any(|t| {
                let key = t["key"].as_str().unwrap_or_default();
                let effect = t["effect"].as_str().unwrap_or_default();
                (key == taint || key.is_empty()) && (effect == "NoExecute" || effect.is_empty())
            })
        });
        if !tolerated {
            set(spec, "tolerations", json!([]), Unset::Nil);
            if let Some(all) = spec["tolerations"].as_array_mut() {
                all.push(json!({
                    "key": taint, "operator": "Exists", "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }));
            }
        }
    }
}

/// When a field counts as unset: Go's pointer is nil (absent or null), or its value is
/// the zero (`""`, `0`) too.
#[derive(Clone, Copy)]
enum Unset {
    Nil,
    Zero,
}

/// Sets `object[name]` to `value` where it is unset.
fn set(object: &mut Value, name: &str, value: Value, unset: Unset) {
    let Some(map) = object.as_object_mut() else {
        return;
    };
    let is_unset = match (map.get(name), unset) {
        (None | Some(Value::Null), _) => true,
        (Some(v), Unset::Zero) => *v == "" || *v == 0,
        (Some(_), Unset::Nil) => false,
    };
    if is_unset {
        map.insert(name.to_owned(), value);
    }
}

/// `object[name]` where it is there and not null.
fn field<'a>(object: &'a mut Value, name: &str) -> Option<&'a mut Value> {
    object.get_mut(name).filter(|v| !v.is_null())
}

/// The elements of the list `object[name]` (none where it is no list).
fn each<'a>(object: &'a mut Value, name: &str) -> impl Iterator<Item = &'a mut Value> {
    object
        .get_mut(name)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}

/// What `SetDefaults_Pod` does beyond a pod template's spec: requests from limits, service
/// links on, host ports for host networking, a negative grace period made 1.
fn pod_only(spec: &mut Value) {
    if spec["terminationGracePeriodSeconds"]
        .as_i64()
        .is_some_and(|n| n < 0)
    {
        spec["terminationGracePeriodSeconds"] = json!(1);
    }
    for list in ["containers", "initContainers"] {
        for container in each(spec, list) {
            let Some(resources) = field(container, "resources") else {
                continue;
            };
            let Some(limits) = resources.get("limits").and_then(Value::as_object).cloned() else {
                continue;
            };
            let requests = resources
                .as_object_mut()
                .and_then(|r| {
                    let requests = r.entry("requests").or_insert_with(|| json!({}));
                    if requests.is_null() {
                        *requests = json!({});
                    }
                    requests.as_object_mut()
                })
                .expect("requests is an object");
            for (resource, limit) in limits {
                requests.entry(resource).or_insert(limit);
            }
        }
    }
    set(spec, "enableServiceLinks", json!(true), Unset::Nil);
    if spec["hostNetwork"] == true {
        for list in ["containers", "initContainers"] {
            for container in each(spec, list) {
                for port in each(container, "ports") {
                    let container_port = port["containerPort"].clone();
                    set(port, "hostPort", container_port, Unset::Zero);
                }
            }
        }
    }
}

/// `SetDefaults_PodSpec` and what `SetObjectDefaults_Pod` defaults within it, for a pod
/// and a pod template alike.
fn pod_spec(spec: &mut Value) {
    // serviceAccount is the old name of serviceAccountName: the two are kept the same.
    if let Some(old) = spec.get("serviceAccount").filter(|s| *s != "").cloned() {
        set(spec, "serviceAccountName", old, Unset::Zero);
    }
    match spec["serviceAccountName"].clone() {
        Value::String(name) if !name.is_empty() => spec["serviceAccount"] = json!(name),
        _ => {
            spec.as_object_mut().map(|s| s.remove("serviceAccount"));
        }
    }
    for (name, value) in [
        ("dnsPolicy", json!("ClusterFirst")),
        ("restartPolicy", json!("Always")),
        ("schedulerName", json!("default-scheduler")),
    ] {
        set(spec, name, value, Unset::Zero);
    }
    set(spec, "securityContext", json!({}), Unset::Nil);
    set(spec, "terminationGracePeriodSeconds", json!(30), Unset::Nil);
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        each(spec, list).for_each(container);
    }
    each(spec, "volumes").for_each(volume);
}

/// `SetDefaults_Container` and the defaults within a container.
fn container(container: &mut Value) {
    let pull = match image_tag(container["image"].as_str().unwrap_or_default()) {
        Some("latest") => "Always",
        _ => "IfNotPresent",
    };
    set(container, "imagePullPolicy", json!(pull), Unset::Zero);
    set(
        container,
        "terminationMessagePath",
        json!("/dev/termination-log"),
        Unset::Zero,
    );
    set(
        container,
        "terminationMessagePolicy",
        json!("File"),
        Unset::Zero,
    );
    for port in each(container, "ports") {
        set(port, "protocol", json!("TCP"), Unset::Zero);
    }
    for env in each(container, "env") {
        let Some(from) = field(env, "valueFrom") else {
            continue;
        };
        if let Some(selector) = field(from, "fieldRef") {
            set(selector, "apiVersion", json!("v1"), Unset::Zero);
        }
        if let Some(file) = field(from, "fileKeyRef") {
            set(file, "optional", json!(false), Unset::Nil);
        }
    }
    for name in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(probe) = field(container, name) {
            for (name, value) in [
                ("timeoutSeconds", 1),
                ("periodSeconds", 10),
                ("successThreshold", 1),
                ("failureThreshold", 3),
            ] {
                set(probe, name, json!(value), Unset::Zero);
            }
            handler(probe);
            if let Some(grpc) = field(probe, "grpc") {
                set(grpc, "service", json!(""), Unset::Nil);
            }
        }
    }
    if let Some(lifecycle) = field(container, "lifecycle") {
        for hook in ["postStart", "preStop"] {
            field(lifecycle, hook).map(handler);
        }
    }
}

/// An HTTP GET of a probe or a lifecycle hook: path `/`, scheme HTTP.
fn handler(handler: &mut Value) {
    if let Some(get) = field(handler, "httpGet") {
        set(get, "path", json!("/"), Unset::Zero);
        set(get, "scheme", json!("HTTP"), Unset::Zero);
    }
}

/// The tag the kubelet would pull `image` by: its own, `latest` when it names none and
/// no digest either, none for a digest alone.
fn image_tag(image: &str) -> Option<&str> {
    let (name, digest) = match image.split_once('@') {
        Some((name, _)) => (name, true),
        None => (image, false),
    };
    let last = name.rsplit('/').next().unwrap_or(name);
    match last.split_once(':') {
        Some((_, tag)) => Some(tag),
        None if digest => None,
        None => Some("latest"),
    }
}

/// Volume sources every pod may use: none given is an emptyDir; modes of secrets,
/// config maps, downward API and projected volumes 0644; a host path's type "".
fn volume(volume: &mut Value) {
    let Some(map) = volume.as_object_mut() else {
        return;
    };
    let has_source = map.iter().any(|(k, v)| k != "name" && !v.is_null());
    if !has_source {
        map.insert("emptyDir".to_owned(), Value::Object(Map::new()));
    }
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(source) = field(volume, source) {
            set(source, "defaultMode", json!(0o644), Unset::Nil);
        }
    }
    if let Some(host_path) = field(volume, "hostPath") {
        set(host_path, "type", json!(""), Unset::Nil);
    }
    if let Some(downward) = field(volume, "downwardAPI") {
        each(downward, "items").for_each(field_ref);
    }
    if let Some(projected) = field(volume, "projected") {
        for source in each(projected, "sources") {
            if let Some(downward) = field(source, "downwardAPI") {
                each(downward, "items").for_each(field_ref);
            }
            if let Some(token) = field(source, "serviceAccountToken") {
                set(token, "expirationSeconds", json!(3600), Unset::Nil);
            }
        }
    }
}

/// A downward API item's field reference: apiVersion v1.
fn field_ref(item: &mut Value) {
    if let Some(selector) = field(item, "fieldRef") {
        set(selector, "apiVersion", json!("v1"), Unset::Zero);
    }
}

/// `SetDefaults_PodStatus`: the pod's IP and its list of IPs agree, the single one
/// deciding.
fn pod_ips(status: &mut Value) {
    let ip = status["podIP"].as_str().unwrap_or_default().to_owned();
    let first = status["podIPs"][0]["ip"].as_str().map(str::to_owned);
    match (ip.is_empty(), first) {
        (false, first) if first.as_deref() != Some(ip.as_str()) => {
            status["podIPs"] = json!([{"ip": ip}]);
        }
        (true, Some(first)) => status["podIP"] = json!(first),
        _ => {}
    }
}

/// `SetDefaults_Deployment`: one replica, a rolling update of 25% unavailable and 25%
/// surge, ten old ReplicaSets kept, ten minutes to progress.
fn deployment_spec(spec: &mut Value) {
    set(spec, "replicas", json!(1), Unset::Nil);
    set(spec, "strategy", json!({}), Unset::Nil);
    let strategy = &mut spec["strategy"];
    set(strategy, "type", json!("RollingUpdate"), Unset::Zero);
    if strategy["type"] == "RollingUpdate" {
        set(strategy, "rollingUpdate", json!({}), Unset::Nil);
        let rolling = &mut strategy["rollingUpdate"];
        set(rolling, "maxUnavailable", json!("25%"), Unset::Nil);
        set(rolling, "maxSurge", json!("25%"), Unset::Nil);
    }
    set(spec, "revisionHistoryLimit", json!(10), Unset::Nil);
    set(spec, "progressDeadlineSeconds", json!(600), Unset::Nil);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_is_pulled_by_its_tag_latest_when_it_names_none() {
        for (image, tag) in [
            ("nginx", Some("latest")),
            ("nginx:1.27", Some("1.27")),
            ("registry:5000/team/app", Some("latest")),
            ("registry:5000/team/app:v2", Some("v2")),
            ("app@sha256:abc", None),
            ("app:v1@sha256:abc", Some("v1")),
        ] {
            assert_eq!(image_tag(image), tag, "{image}");
        }
    }

    #[test]
    fn a_pods_defaults_fill_only_what_it_left_unset() {
        let mut pod = json!({"spec": {
            "restartPolicy": "Never",
            "serviceAccount": "old",
            "containers": [{"name": "a", "image": "nginx", "ports": [{"containerPort": 80}],
                            "resources": {"limits": {"cpu": "1"}, "requests": {"memory": "1Gi"}},
                            "readinessProbe": {"httpGet": {"port": 80}, "periodSeconds": 5}}],
            "volumes": [{"name": "scratch"}, {"name": "s", "secret": {"secretName": "x"}}],
        }});
        apply(ObjectKind::Pod, &mut pod);
        let spec = &pod["spec"];
        assert_eq!(spec["restartPolicy"], "Never");
        assert!(
            spec.get("nodeName").is_none(),
            "nothing but defaults is added"
        );
        assert_eq!(spec["dnsPolicy"], "ClusterFirst");
        assert_eq!(
            (&spec["serviceAccountName"], &spec["serviceAccount"]),
            (&json!("old"), &json!("old"))
        );
        assert_eq!(spec["terminationGracePeriodSeconds"], 30);
        assert_eq!(spec["enableServiceLinks"], true);
        let c = &spec["containers"][0];
        assert_eq!(c["imagePullPolicy"], "Always");
        assert_eq!(c["ports"][0]["protocol"], "TCP");
        assert!(c["ports"][0].get("hostPort").is_none());
        assert_eq!(
            c["resources"]["requests"],
            json!({"cpu": "1", "memory": "1Gi"})
        );
        let probe = &c["readinessProbe"];
        assert_eq!(
            (&probe["periodSeconds"], &probe["timeoutSeconds"]),
            (&json!(5), &json!(1))
        );
        assert_eq!(probe["httpGet"]["scheme"], "HTTP");
        assert_eq!(spec["volumes"][0]["emptyDir"], json!({}));
        assert_eq!(spec["volumes"][1]["secret"]["defaultMode"], 420);
        assert!(spec["volumes"][1].get("emptyDir").is_none());
    }

    #[test]
    fn a_pods_negative_grace_period_is_one_and_host_networking_gives_host_ports() {
        let mut pod = json!({"spec": {"terminationGracePeriodSeconds": -5, "hostNetwork": true,
            "containers": [{"name": "a", "image": "a:1", "ports": [{"containerPort": 53}]}]}});
        apply(ObjectKind::Pod, &mut pod);
        assert_eq!(pod["spec"]["terminationGracePeriodSeconds"], 1);
        assert_eq!(pod["spec"]["containers"][0]["ports"][0]["hostPort"], 53);
        assert!(pod["spec"].get("serviceAccountName").is_none());
    }

    #[test]
    fn admission_gives_a_new_pod_its_priority_and_tolerations_and_an_update_keeps_them() {
        let mut pod = json!({"spec": {"tolerations": [{"operator": "Exists"}]}});
        admit(ObjectKind::Pod, &mut pod, None);
        assert_eq!(pod["spec"]["priority"], 0);
        assert_eq!(pod["spec"]["preemptionPolicy"], "PreemptLowerPriority");
        assert_eq!(
            pod["spec"]["tolerations"].as_array().unwrap().len(),
            1,
            "a pod tolerating every taint gets no more"
        );
        let mut critical = json!({"spec": {"priorityClassName": "system-node-critical"}});
        admit(ObjectKind::Pod, &mut critical, None);
        assert_eq!(critical["spec"]["priority"], 2_000_001_000);
        let keys: Vec<&str> = critical["spec"]["tolerations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["key"].as_str().unwrap())
            .collect();
        assert_eq!(
            keys,
            [
                "node.kubernetes.io/not-ready",
                "node.kubernetes.io/unreachable"
            ]
        );
        let mut update = json!({"spec": {}});
        admit(ObjectKind::Pod, &mut update, Some(&critical));
        assert_eq!(update["spec"]["priority"], 2_000_001_000);
        let mut configmap = json!({"data": {}});
        admit(ObjectKind::ConfigMap, &mut configmap, None);
        assert_eq!(configmap, json!({"data": {}}));
    }

    #[test]
    fn a_template_is_not_a_pod_and_a_deployment_gets_its_strategy() {
        let mut deployment = json!({"spec": {"template": {"spec": {
            "containers": [{"name": "a", "image": "app:1", "resources": {"limits": {"cpu": "1"}}}],
        }}, "strategy": {"type": "Recreate"}}});
        apply(ObjectKind::Deployment, &mut deployment);
        let spec = &deployment["spec"];
        assert_eq!(spec["replicas"], 1);
        assert_eq!(spec["strategy"], json!({"type": "Recreate"}));
        assert_eq!(spec["revisionHistoryLimit"], 10);
        let template = &spec["template"]["spec"];
        assert_eq!(template["schedulerName"], "default-scheduler");
        assert_eq!(template["containers"][0]["imagePullPolicy"], "IfNotPresent");
        assert!(template.get("enableServiceLinks").is_none());
        assert!(
            template["containers"][0]["resources"]
                .get("requests")
                .is_none()
        );
        let mut rolling = json!({"spec": {}});
        apply(ObjectKind::Deployment, &mut rolling);
        assert_eq!(
            rolling["spec"]["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
        );
    }
}
