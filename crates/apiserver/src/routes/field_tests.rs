//! Field selectors on every kind: the fields kube-apiserver lets each kind be selected
//! by, generated and written objects read alike, and watches that see only what matches.

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::request;
use crate::ApiServer;
use crate::query::written_field;
use scenario::{Amount, ObjectKind, ObjectSpec};

const JSON: &str = "application/json";

fn items(list: &Value) -> &Vec<Value> {
    list["items"].as_array().unwrap()
}

fn server_of(kind: ObjectKind, count: u64) -> ApiServer {
    let mut spec = ObjectSpec::pods(count);
    spec.kind = kind;
    if kind == ObjectKind::Node {
        spec.namespaces = 1;
        spec.images = Some(2);
    }
    ApiServer::new(spec)
}

/// Every pod, and the node the first runs on.
async fn pods_and_first_node(server: &ApiServer) -> (Value, String) {
    let (_, all) = request(server, "GET", "/api/v1/pods", JSON, "").await;
    let node = all["items"][0]["spec"]["nodeName"]
        .as_str()
        .unwrap()
        .to_owned();
    (all, node)
}

#[tokio::test]
async fn every_selectable_field_of_a_generated_object_reads_as_its_json_says() {
    // The generator answers a selector without building objects: its answer must be what
    // the object it writes holds, field by field.
    for kind in [
        ObjectKind::Pod,
        ObjectKind::Node,
        ObjectKind::ConfigMap,
        ObjectKind::Secret,
    ] {
        let server = server_of(kind, 30);
        let (_, list) = request(
            &server,
            "GET",
            &format!("/api/v1/{}", kind.plural()),
            JSON,
            "",
        )
        .await;
        assert_eq!(items(&list).len(), 30, "{kind:?}");
        let (fields, _) = kind.selectable_fields();
        for object in items(&list) {
            let name = object["metadata"]["name"].as_str().unwrap();
            let index = crate::generate::index_of_name(name).unwrap();
            for field in fields {
                let expected = written_field(kind, object, field);
                let generated = crate::generate::selectable_field(
                    server.spec(),
                    &crate::generate::ObjectId::new(index, 0, 1, 0),
                    field,
                );
                assert_eq!(generated, expected, "{kind:?} {index} {field}");
            }
        }
    }
}

#[tokio::test]
async fn pods_are_selected_by_node_phase_and_the_old_spec_host() {
    let server = server_of(ObjectKind::Pod, 300);
    let (all, node) = pods_and_first_node(&server).await;
    let on_node: Vec<&Value> = items(&all)
        .iter()
        .filter(|p| p["spec"]["nodeName"] == node.as_str())
        .collect();
    assert!(
        on_node.len() > 1 && on_node.len() < 300,
        "{}",
        on_node.len()
    );
    for field in ["spec.nodeName", "spec.host"] {
        let uri = format!("/api/v1/pods?fieldSelector={field}%3D{node}");
        let (code, list) = request(&server, "GET", &uri, JSON, "").await;
        assert_eq!(code, StatusCode::OK, "{list}");
        assert_eq!(items(&list).len(), on_node.len(), "{field}");
        assert!(
            items(&list)
                .iter()
                .all(|p| p["spec"]["nodeName"] == node.as_str())
        );
    }
    let uri =
        format!("/api/v1/pods?fieldSelector=spec.nodeName%21%3D{node}%2Cstatus.phase%3DRunning");
    let (_, others) = request(&server, "GET", &uri, JSON, "").await;
    assert_eq!(items(&others).len(), 300 - on_node.len());
    let (_, none) = request(
        &server,
        "GET",
        "/api/v1/pods?fieldSelector=status.phase%3DPending",
        JSON,
        "",
    )
    .await;
    assert!(items(&none).is_empty());
    // A pod written by a client is read from its JSON (created Pending, as the server
    // sets a new pod's status).
    let body = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "extra", "namespace": "default"},
        "spec": {"nodeName": node, "hostNetwork": true,
                 "containers": [{"name": "c", "image": "x"}]}});
    let (code, created) = request(
        &server,
        "POST",
        "/api/v1/namespaces/default/pods",
        JSON,
        &body.to_string(),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED, "{created}");
    let uri = format!("/api/v1/pods?fieldSelector=spec.nodeName%3D{node}");
    let (_, list) = request(&server, "GET", &uri, JSON, "").await;
    assert_eq!(items(&list).len(), on_node.len() + 1);
    let uri = "/api/v1/pods?fieldSelector=status.phase%3DPending,spec.hostNetwork%3Dtrue";
    let (_, list) = request(&server, "GET", uri, JSON, "").await;
    assert_eq!(items(&list).len(), 1, "{list}");
    assert_eq!(list["items"][0]["metadata"]["name"], "extra");
}

#[tokio::test]
async fn a_field_the_kind_is_not_selected_by_is_a_bad_request() {
    for (kind, query, code) in [
        (
            ObjectKind::ConfigMap,
            "spec.nodeName%3Dx",
            StatusCode::BAD_REQUEST,
        ),
        (
            ObjectKind::Pod,
            "spec.nodename%3Dx",
            StatusCode::BAD_REQUEST,
        ),
        (
            ObjectKind::Node,
            "metadata.namespace%3Dx",
            StatusCode::BAD_REQUEST,
        ),
        (
            ObjectKind::Node,
            "spec.unschedulable%3Dfalse",
            StatusCode::OK,
        ),
        (ObjectKind::Secret, "type%3DOpaque", StatusCode::OK),
        (
            ObjectKind::ConfigMap,
            "type%3DOpaque",
            StatusCode::BAD_REQUEST,
        ),
    ] {
        let server = server_of(kind, 4);
        let uri = format!("/api/v1/{}?fieldSelector={query}", kind.plural());
        let (got, body) = request(&server, "GET", &uri, JSON, "").await;
        assert_eq!(got, code, "{uri}: {body}");
        if code == StatusCode::OK {
            assert_eq!(items(&body).len(), 4, "{uri}");
        } else {
            let field = query.split("%3D").next().unwrap();
            assert_eq!(
                body["message"],
                format!("field label not supported: {field}")
            );
        }
    }
}

#[tokio::test]
async fn a_watch_by_node_sees_only_that_nodes_pods() {
    let server = server_of(ObjectKind::Pod, 300);
    let (all, node) = pods_and_first_node(&server).await;
    let rv = all["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let on_node = items(&all)
        .iter()
        .filter(|p| p["spec"]["nodeName"] == node.as_str())
        .count();
    server.update(Amount::Fraction(1.0), &Default::default(), 3);
    let uri = format!(
        "/api/v1/pods?watch=true&resourceVersion={rv}&fieldSelector=spec.nodeName%3D{node}"
    );
    let events = super::watch_events(&server, &uri).await;
    assert_eq!(events.len(), on_node);
    assert!(
        events
            .iter()
            .all(|e| e["type"] == "MODIFIED" && e["object"]["spec"]["nodeName"] == node.as_str())
    );
}
