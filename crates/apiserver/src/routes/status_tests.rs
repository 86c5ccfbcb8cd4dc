//! The status subresource of Pods, Nodes and Deployments: read as the object, written
//! with the spec kept and each kind's status strategy, and writes to the object keeping
//! the status; 404 where a kind has none.

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::request;
use super::tests::get_accepting;
use crate::ApiServer;
use crate::generate::{name, namespace};
use scenario::{ObjectKind, ObjectSpec};

const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";

/// A server of three objects of `kind`, and the path of the first.
fn server_of(kind: ObjectKind) -> (ApiServer, String) {
    let mut spec = ObjectSpec::pods(3);
    spec.kind = kind;
    let name = name(&spec, 0);
    let path = match kind.namespaced() {
        true => format!(
            "{}/{name}",
            kind.collection_path(Some(&namespace(&spec, 0)))
        ),
        false => format!("{}/{name}", kind.collection_path(None)),
    };
    (ApiServer::new(spec), path)
}

fn generation(object: &Value) -> i64 {
    object["metadata"]["generation"].as_i64().unwrap_or(0)
}

/// The managedFields entry of `manager` for `subresource` (`None`: the object's own).
fn entry<'a>(object: &'a Value, manager: &str, subresource: Option<&str>) -> Option<&'a Value> {
    let entries = object["metadata"]["managedFields"].as_array()?;
    entries
        .iter()
        .find(|e| e["manager"] == manager && e["subresource"].as_str() == subresource)
}

#[tokio::test]
async fn a_status_read_is_the_object_also_as_a_table() {
    for kind in [ObjectKind::Pod, ObjectKind::Node, ObjectKind::Deployment] {
        let (server, path) = server_of(kind);
        let (code, object) = request(&server, "GET", &path, JSON, "").await;
        assert_eq!(code, StatusCode::OK);
        let (code, status) = request(&server, "GET", &format!("{path}/status"), JSON, "").await;
        assert_eq!((code, &status), (StatusCode::OK, &object), "{kind:?}");
        let table = "application/json;as=Table;v=v1;g=meta.k8s.io";
        let rows = get_accepting(&server, &format!("{path}/status"), table).await;
        assert_eq!(rows[0]["kind"], "Table", "{kind:?}");
        assert_eq!(rows[0]["rows"].as_array().map(Vec::len), Some(1));
    }
}

#[tokio::test]
async fn a_status_patch_writes_the_status_and_metadata_and_keeps_the_spec() {
    let (server, path) = server_of(ObjectKind::Pod);
    let (_, before) = request(&server, "GET", &path, JSON, "").await;
    let patch = json!({
        "metadata": {"labels": {"checked": "yes"}, "ownerReferences": []},
        "spec": {"nodeName": "elsewhere"},
        "status": {"phase": "Running", "podIP": "10.9.8.7"},
    });
    let uri = format!("{path}/status?fieldManager=kubelet");
    let (code, after) = request(&server, "PATCH", &uri, MERGE, &patch.to_string()).await;
    assert_eq!(code, StatusCode::OK, "{after}");
    assert_eq!(after["status"]["phase"], "Running");
    assert_eq!(after["status"]["podIP"], "10.9.8.7");
    assert_eq!(after["metadata"]["labels"]["checked"], "yes");
    assert_eq!(
        after["spec"], before["spec"],
        "the spec is not the status's"
    );
    assert_eq!(
        after["metadata"]["ownerReferences"], before["metadata"]["ownerReferences"],
        "a Pod's owners are not the status's to change"
    );
    assert_eq!(generation(&after), generation(&before));
    let owned = &entry(&after, "kubelet", Some("status")).expect("an entry")["fieldsV1"];
    assert_eq!(owned["f:status"]["f:podIP"], json!({}));
    assert!(owned.get("f:spec").is_none(), "{owned}");
    let (_, stored) = request(&server, "GET", &path, JSON, "").await;
    assert_eq!(stored, after);
}

#[tokio::test]
async fn a_status_put_keeps_what_the_pod_strategy_keeps() {
    let (server, path) = server_of(ObjectKind::Pod);
    let (_, mut pod) = request(&server, "GET", &path, JSON, "").await;
    let old = pod["status"].clone();
    let conditions = old["conditions"]
        .as_array()
        .expect("generated pods have conditions");
    // The write drops the QoS class, and gives the first condition no observedGeneration.
    let status = pod["status"].as_object_mut().unwrap();
    status.remove("qosClass");
    status.insert("observedGeneration".into(), json!(0));
    let first = &mut status["conditions"][0];
    first["observedGeneration"] = json!(0);
    first["status"] = json!("False");
    pod["spec"]["containers"] = json!([]);
    let (code, after) = request(
        &server,
        "PUT",
        &format!("{path}/status"),
        JSON,
        &pod.to_string(),
    )
    .await;
    assert_eq!(code, StatusCode::OK, "{after}");
    assert_eq!(after["status"]["qosClass"], old["qosClass"]);
    assert_eq!(
        after["status"]["observedGeneration"],
        old["observedGeneration"]
    );
    let first = &after["status"]["conditions"][0];
    assert_eq!(first["status"], "False");
    assert_eq!(
        first["observedGeneration"],
        conditions[0]["observedGeneration"]
    );
    assert!(
        !after["spec"]["containers"].as_array().unwrap().is_empty(),
        "a spec the status write sent is neither stored nor validated"
    );
}

#[tokio::test]
async fn a_write_to_the_object_keeps_its_status() {
    for kind in [ObjectKind::Pod, ObjectKind::Node, ObjectKind::Deployment] {
        let (server, path) = server_of(kind);
        let (_, before) = request(&server, "GET", &path, JSON, "").await;
        let patch = r#"{"metadata":{"labels":{"x":"y"}},"status":{"phase":"Failed","replicas":9,"capacity":{"pods":"1"}}}"#;
        let (code, after) = request(&server, "PATCH", &path, MERGE, patch).await;
        assert_eq!(code, StatusCode::OK, "{kind:?}: {after}");
        assert_eq!(after["metadata"]["labels"]["x"], "y");
        assert_eq!(after["status"], before["status"], "{kind:?}");
    }
}

#[tokio::test]
async fn a_deployments_status_keeps_its_labels_and_counts_are_checked() {
    let (server, path) = server_of(ObjectKind::Deployment);
    let (_, before) = request(&server, "GET", &path, JSON, "").await;
    let uri = format!("{path}/status");
    let patch = r#"{"metadata":{"labels":{"x":"y"}},"spec":{"replicas":9},"status":{"replicas":3,"readyReplicas":2,"availableReplicas":2,"observedGeneration":1}}"#;
    let (code, after) = request(&server, "PATCH", &uri, MERGE, patch).await;
    assert_eq!(code, StatusCode::OK, "{after}");
    assert_eq!(after["status"]["readyReplicas"], 2);
    assert_eq!(after["metadata"]["labels"], before["metadata"]["labels"]);
    assert_eq!(after["spec"], before["spec"]);
    let bad =
        r#"{"status":{"replicas":-1,"updatedReplicas":0,"readyReplicas":4,"availableReplicas":5}}"#;
    let (code, refused) = request(&server, "PATCH", &uri, MERGE, bad).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(refused["reason"], "Invalid");
    let fields: Vec<&str> = refused["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            "status.replicas",
            "status.updatedReplicas",
            "status.readyReplicas",
            "status.availableReplicas",
            "status.availableReplicas"
        ]
    );
    let (_, stored) = request(&server, "GET", &path, JSON, "").await;
    assert_eq!(stored, after, "a refused write changes nothing");
}

#[tokio::test]
async fn a_nodes_status_is_written_at_the_clusters_scope() {
    let (server, path) = server_of(ObjectKind::Node);
    let patch = r#"{"spec":{"unschedulable":true},"status":{"phase":"Running"}}"#;
    let (code, after) = request(&server, "PATCH", &format!("{path}/status"), MERGE, patch).await;
    assert_eq!(code, StatusCode::OK, "{after}");
    assert_eq!(after["status"]["phase"], "Running");
    assert!(after["spec"].get("unschedulable").is_none());
    let (code, _) = request(
        &server,
        "GET",
        &(path.replace("/api/v1/", "/api/v1/namespaces/default/") + "/status"),
        JSON,
        "",
    )
    .await;
    assert_eq!(code, StatusCode::NOT_FOUND, "nodes are not in namespaces");
}

#[tokio::test]
async fn kinds_without_a_status_have_no_status_path() {
    let (pods, path) = server_of(ObjectKind::Pod);
    let configmap = path.replace("/pods/", "/configmaps/") + "/status";
    let (configmaps, own) = server_of(ObjectKind::ConfigMap);
    for (server, uri) in [(&pods, &configmap), (&configmaps, &format!("{own}/status"))] {
        for method in ["GET", "PATCH"] {
            let (code, answer) = request(server, method, uri, MERGE, "{}").await;
            assert_eq!(code, StatusCode::NOT_FOUND, "{method} {uri}: {answer}");
            assert_eq!(answer["reason"], "NotFound");
        }
    }
    let (_, missing) = request(&pods, "PATCH", &format!("{path}x/status"), MERGE, "{}").await;
    assert_eq!(missing["code"], 404);
    assert_eq!(
        missing["details"]["name"],
        json!(format!("{}x", name_of(&path)))
    );
}

fn name_of(path: &str) -> &str {
    path.rsplit('/').next().unwrap()
}

#[tokio::test]
async fn discovery_lists_the_status_of_the_scenarios_kind() {
    let (server, _) = server_of(ObjectKind::Pod);
    let (_, core) = request(&server, "GET", "/api/v1", JSON, "").await;
    let names: Vec<&str> = core["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"pods/status"), "{names:?}");
    assert!(!names.contains(&"nodes/status"), "{names:?}");
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
}
