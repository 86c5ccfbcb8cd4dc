use serde_json::json;

use super::*;
use scenario::ObjectKind;

/// The cells of `object`, of a kind the generator makes.
fn cells(kind: ObjectKind, object: &Value, now: Timestamp) -> Vec<Value> {
    super::cells(kind.group(), kind.as_str(), object, now)
}

/// The columns of a kind the generator makes.
fn columns(kind: ObjectKind) -> Value {
    super::columns(kind.group(), kind.as_str())
}

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

#[test]
fn ages_read_as_kubectl_shows_them() {
    let now = at("2026-11-25T12:00:00Z");
    let ago = |seconds: i64| {
        human_duration(
            now,
            Timestamp::from_second(now.as_second() - seconds).unwrap(),
        )
    };
    let (minute, hour, day, year) = (60, 3600, 86_400, 365 * 86_400);
    for (seconds, shown) in [
        (-5, "<invalid>"),
        (-1, "0s"),
        (0, "0s"),
        (119, "119s"),
        (2 * minute, "2m"),
        (2 * minute + 5, "2m5s"),
        (10 * minute + 5, "10m"),
        (179 * minute, "179m"),
        (3 * hour, "3h"),
        (7 * hour + 59 * minute, "7h59m"),
        (8 * hour + 30 * minute, "8h"),
        (47 * hour, "47h"),
        (2 * day, "2d"),
        (7 * day + 23 * hour, "7d23h"),
        (8 * day, "8d"),
        (729 * day, "729d"),
        (2 * year, "2y"),
        (2 * year + 3 * day, "2y3d"),
        (9 * year, "9y"),
    ] {
        assert_eq!(ago(seconds), shown, "{seconds} s");
    }
    assert_eq!(age(None, now), "<unknown>");
}

fn pod(status: serde_json::Value) -> serde_json::Value {
    json!({
        "metadata": {"name": "web-1", "creationTimestamp": "2026-11-25T11:00:00Z"},
        "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "node-1"},
        "status": status,
    })
}

fn running(name: &str, ready: bool) -> serde_json::Value {
    json!({"name": name, "ready": ready, "restartCount": 0,
           "state": {"running": {"startedAt": "2026-11-25T11:00:00Z"}}})
}

#[test]
fn a_running_pod_shows_ready_containers_and_its_wide_columns() {
    let now = at("2026-11-25T12:00:00Z");
    let status = json!({
        "phase": "Running",
        "podIPs": [{"ip": "10.0.0.7"}],
        "containerStatuses": [running("a", true), running("b", false)],
    });
    assert_eq!(
        cells(ObjectKind::Pod, &pod(status), now),
        [
            json!("web-1"),
            json!("1/2"),
            json!("Running"),
            json!("0"),
            json!("60m"),
            json!("10.0.0.7"),
            json!("node-1"),
            json!("<none>"),
            json!("<none>")
        ]
    );
}

#[test]
fn a_crashing_container_gives_its_reason_and_restarts_with_the_last_one() {
    let now = at("2026-11-25T12:00:00Z");
    let crashing = json!({
        "name": "b", "ready": false, "restartCount": 4,
        "state": {"waiting": {"reason": "CrashLoopBackOff"}},
        "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2026-11-25T11:55:00Z"}},
    });
    let status = json!({"phase": "Running", "containerStatuses": [running("a", true), crashing]});
    let row = cells(ObjectKind::Pod, &pod(status), now);
    assert_eq!(
        row[1..4],
        [json!("1/2"), json!("CrashLoopBackOff"), json!("4 (5m ago)")]
    );
}

#[test]
fn init_containers_sidecars_and_deletion_decide_the_status() {
    let now = at("2026-11-25T12:00:00Z");
    let mut waiting = pod(json!({
        "phase": "Pending",
        "initContainerStatuses": [{"name": "init", "restartCount": 0, "state": {"waiting": {"reason": "PodInitializing"}}}],
    }));
    waiting["spec"]["initContainers"] = json!([{"name": "init"}]);
    assert_eq!(cells(ObjectKind::Pod, &waiting, now)[2], "Init:0/1");
    waiting["status"]["initContainerStatuses"][0]["state"] = json!({"terminated": {"exitCode": 2}});
    assert_eq!(cells(ObjectKind::Pod, &waiting, now)[2], "Init:ExitCode:2");
    // A started sidecar is a container: counted in Ready, and the pod goes on.
    let mut sidecar = pod(json!({
        "phase": "Running",
        "initContainerStatuses": [{"name": "proxy", "ready": true, "started": true, "restartCount": 1, "state": {"running": {}}}],
        "containerStatuses": [running("a", true), running("b", true)],
    }));
    sidecar["spec"]["initContainers"] = json!([{"name": "proxy", "restartPolicy": "Always"}]);
    let row = cells(ObjectKind::Pod, &sidecar, now);
    assert_eq!(row[1..4], [json!("3/3"), json!("Running"), json!("1")]);
    sidecar["metadata"]["deletionTimestamp"] = json!("2026-11-25T11:59:00Z");
    assert_eq!(cells(ObjectKind::Pod, &sidecar, now)[2], "Terminating");
}

#[test]
fn a_completed_container_beside_a_running_one_reads_as_the_pod_does() {
    let now = at("2026-11-25T12:00:00Z");
    let done = json!({"name": "b", "ready": false, "restartCount": 0,
                      "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}});
    let mut status = json!({
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}],
        "containerStatuses": [running("a", true), done],
    });
    assert_eq!(
        cells(ObjectKind::Pod, &pod(status.clone()), now)[2],
        "Running"
    );
    status["conditions"][0]["status"] = json!("False");
    assert_eq!(cells(ObjectKind::Pod, &pod(status), now)[2], "NotReady");
}

#[test]
fn config_maps_and_secrets_count_their_entries() {
    let now = at("2026-11-25T12:00:00Z");
    let meta = json!({"name": "c", "creationTimestamp": "2026-11-25T11:59:00Z"});
    let config = json!({"metadata": meta, "data": {"a": "1", "b": "2"}, "binaryData": {"c": ""}});
    assert_eq!(
        cells(ObjectKind::ConfigMap, &config, now),
        [json!("c"), json!(3), json!("60s")]
    );
    let secret = json!({"metadata": meta, "type": "kubernetes.io/tls", "data": {"tls.crt": "", "tls.key": ""}});
    assert_eq!(
        cells(ObjectKind::Secret, &secret, now),
        [
            json!("c"),
            json!("kubernetes.io/tls"),
            json!(2),
            json!("60s")
        ]
    );
    for kind in ObjectKind::ALL {
        let empty = json!({"metadata": {"name": "x"}});
        assert_eq!(
            cells(kind, &empty, now).len(),
            columns(kind).as_array().unwrap().len(),
            "{kind:?}: a cell per column"
        );
    }
}

#[test]
fn nodes_read_as_kube_apiservers_printer_shows_them() {
    let now = at("2026-11-25T12:00:00Z");
    let node = |labels: serde_json::Value, ready: &str, unschedulable: bool| {
        json!({
            "metadata": {"name": "n-1", "creationTimestamp": "2026-11-24T12:00:00Z",
                         "labels": labels},
            "spec": {"unschedulable": unschedulable},
            "status": {
                "conditions": [{"type": "MemoryPressure", "status": "False"},
                               {"type": "Ready", "status": ready}],
                "addresses": [{"type": "Hostname", "address": "n-1"},
                              {"type": "InternalIP", "address": "10.0.0.2"}],
                "nodeInfo": {"kubeletVersion": "v1.35.0", "architecture": "arm64",
                             "kernelVersion": "6.6.72", "osImage": "",
                             "containerRuntimeVersion": "containerd://2.0.4"},
            },
        })
    };
    let cells = |n: serde_json::Value| {
        core_group::node_cells(
            &n,
            json!("n-1"),
            json!(age(Some("2026-11-24T12:00:00Z"), now)),
        )
    };
    assert_eq!(
        cells(node(json!({}), "True", false)),
        vec![
            json!("n-1"),
            json!("Ready"),
            json!("<none>"),
            json!("24h"),
            json!("v1.35.0"),
            json!("10.0.0.2"),
            json!("<none>"),
            json!("<unknown>"),
            json!("6.6.72 (arm64)"),
            json!("containerd://2.0.4")
        ]
    );
    let roles = json!({"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/": "x",
                       "kubernetes.io/role": "infra", "node-role.kubernetes.io/etcd": "true"});
    let shown = cells(node(roles, "Unknown", true));
    assert_eq!(shown[1], json!("NotReady,SchedulingDisabled"));
    assert_eq!(shown[2], json!("control-plane,etcd,infra"));
    let mut no_ready = node(json!({}), "True", false);
    no_ready["status"]["conditions"] = json!([]);
    assert_eq!(cells(no_ready)[1], json!("Unknown"));
    assert_eq!(columns(ObjectKind::Node).as_array().unwrap().len(), 10);
}

#[test]
fn deployments_read_as_kube_apiservers_printer_shows_them() {
    let now = at("2026-11-25T12:00:00Z");
    let deployment = json!({
        "metadata": {"name": "web", "creationTimestamp": "2026-11-25T11:00:00Z"},
        "spec": {
            "replicas": 3,
            "selector": {
                "matchLabels": {"tier": "front", "app": "web"},
                "matchExpressions": [
                    {"key": "track", "operator": "NotIn", "values": ["canary", "beta"]},
                    {"key": "zone", "operator": "Exists"},
                ],
            },
            "template": {"spec": {"containers": [
                {"name": "web", "image": "nginx:1"},
                {"name": "envoy", "image": "envoy:2"},
            ]}},
        },
        "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
    });
    assert_eq!(
        cells(ObjectKind::Deployment, &deployment, now),
        [
            json!("web"),
            json!("2/3"),
            json!(3),
            json!(2),
            json!("60m"),
            json!("web,envoy"),
            json!("nginx:1,envoy:2"),
            json!("app=web,tier=front,track notin (beta,canary),zone"),
        ]
    );
    // Just created: no status yet, and `replicas` left to its default.
    let new = json!({"metadata": {"name": "n"}, "spec": {"selector": {}}, "status": {}});
    let new_cells = cells(ObjectKind::Deployment, &new, now);
    assert_eq!(new_cells[1], json!("0/1"));
    assert_eq!(
        new_cells[7],
        json!(""),
        "an empty selector selects everything"
    );
}
