//! What Go's JSON writes at its zero, on objects written through the API: structs as
//! `{}`, zero times as `null`, strings without `omitempty` as `""`; what Go leaves out
//! (omitempty scalars, an `omitzero` time) stays out, and so does what a client sent at
//! an omitempty zero (an empty list or map, `""`, `false`).

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::ApiServer;
use crate::routes::request as send;
use scenario::{ObjectKind, ObjectSpec};

const JSON: &str = "application/json";
const PODS: &str = "/api/v1/namespaces/default/pods";

#[tokio::test]
async fn a_written_object_carries_what_gos_json_writes_at_its_zero() {
    let server = ApiServer::new(crate::generate::test_spec());
    let web = json!({
        "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "app", "image": "app:1"}]},
    });
    let (code, pod) = send(&server, "POST", PODS, JSON, &web.to_string()).await;
    assert_eq!(code, StatusCode::CREATED, "{pod}");
    let container = &pod["spec"]["containers"][0];
    assert_eq!(
        container["resources"],
        json!({}),
        "a struct, never left out"
    );
    assert!(
        container.get("stdin").is_none() && container.get("workingDir").is_none(),
        "omitempty scalars at their zero stay out: {container}"
    );
    let status = r#"{"status":{"conditions":[{"type":"Ready","status":"True"}],"containerStatuses":[{"name":"app","image":"app:1","imageID":"","ready":true,"restartCount":0}]}}"#;
    let uri = format!("{PODS}/web/status");
    let merge = "application/merge-patch+json";
    let (code, pod) = send(&server, "PATCH", &uri, merge, status).await;
    assert_eq!(code, StatusCode::OK, "{pod}");
    let condition = &pod["status"]["conditions"][0];
    assert_eq!(condition["lastProbeTime"], Value::Null);
    assert_eq!(condition["lastTransitionTime"], Value::Null);
    assert!(condition.get("reason").is_none(), "{condition}");
    let container = &pod["status"]["containerStatuses"][0];
    assert_eq!(
        (&container["state"], &container["lastState"]),
        (&json!({}), &json!({}))
    );
    assert_eq!(container["imageID"], "", "a string without omitempty");
}

#[tokio::test]
async fn a_deployments_template_has_no_creation_timestamp_as_go_omits_its_zero() {
    let mut spec = ObjectSpec::pods(1);
    spec.kind = ObjectKind::Deployment;
    let server = ApiServer::new(spec);
    let body = json!({
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "app:1"}]},
            },
        },
    });
    let path = "/apis/apps/v1/namespaces/default/deployments";
    let (code, deployment) = send(&server, "POST", path, JSON, &body.to_string()).await;
    assert_eq!(code, StatusCode::CREATED, "{deployment}");
    let template = &deployment["spec"]["template"];
    assert!(template["metadata"].get("creationTimestamp").is_none());
    assert_eq!(template["spec"]["containers"][0]["resources"], json!({}));
}

#[tokio::test]
async fn a_label_on_a_generated_object_changes_neither_its_spec_nor_its_generation() {
    for kind in [ObjectKind::Pod, ObjectKind::Deployment, ObjectKind::Node] {
        let mut spec = ObjectSpec::pods(2);
        spec.kind = kind;
        let name = crate::generate::name(&spec, 0);
        let path = match kind.namespaced() {
            true => format!(
                "{}/{name}",
                kind.collection_path(Some(&crate::generate::namespace(&spec, 0)))
            ),
            false => format!("{}/{name}", kind.collection_path(None)),
        };
        let server = ApiServer::new(spec);
        let (_, before) = send(&server, "GET", &path, JSON, "").await;
        let merge = "application/merge-patch+json";
        let label = r#"{"metadata":{"labels":{"x":"y"}}}"#;
        let (code, after) = send(&server, "PATCH", &path, merge, label).await;
        assert_eq!(code, StatusCode::OK, "{after}");
        assert_eq!(after["spec"], before["spec"], "{kind:?}");
        assert_eq!(
            after["metadata"]["generation"], before["metadata"]["generation"],
            "{kind:?}"
        );
    }
}

#[tokio::test]
async fn what_a_client_sends_at_its_zero_is_left_out_as_go_leaves_it_out() {
    let server = ApiServer::new(crate::generate::test_spec());
    let web = json!({
        "metadata": {"name": "web", "labels": {}, "finalizers": [], "generateName": ""},
        "spec": {"containers": [{"name": "app", "image": "app:1", "args": [], "stdin": false}],
                 "hostNetwork": false, "terminationGracePeriodSeconds": 0},
    });
    let (code, pod) = send(&server, "POST", PODS, JSON, &web.to_string()).await;
    assert_eq!(code, StatusCode::CREATED, "{pod}");
    let meta = &pod["metadata"];
    for field in ["labels", "finalizers", "generateName"] {
        assert!(meta.get(field).is_none(), "{field}: {meta}");
    }
    let container = &pod["spec"]["containers"][0];
    assert!(container.get("args").is_none() && container.get("stdin").is_none());
    assert!(pod["spec"].get("hostNetwork").is_none());
    assert_eq!(
        pod["spec"]["terminationGracePeriodSeconds"], 0,
        "a pointer set to zero is written"
    );
}
