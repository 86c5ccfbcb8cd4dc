//! Deployments' scale subresource: the Scale kube-apiserver makes of a Deployment, and
//! writes through it (merge patch, PUT) with their checks, as `kubectl scale` sends them.

use axum::http::StatusCode;
use serde_json::json;

use super::request;
use crate::ApiServer;
use crate::generate::{name, namespace};
use scenario::{ObjectKind, ObjectSpec};

const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";

fn deployments() -> (ApiServer, String) {
    let mut spec = ObjectSpec::pods(3);
    spec.kind = ObjectKind::Deployment;
    let path = format!(
        "/apis/apps/v1/namespaces/{}/deployments/{}",
        namespace(&spec, 0),
        name(&spec, 0)
    );
    (ApiServer::new(spec), path)
}

#[tokio::test]
async fn a_scale_is_the_deployments_replicas_and_selector() {
    let (server, path) = deployments();
    let (code, scale) = request(&server, "GET", &format!("{path}/scale"), JSON, "").await;
    assert_eq!(code, StatusCode::OK);
    let (_, deployment) = request(&server, "GET", &path, JSON, "").await;
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["apiVersion"], "autoscaling/v1");
    for field in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        assert_eq!(
            scale["metadata"][field], deployment["metadata"][field],
            "{field}"
        );
    }
    assert_eq!(scale["spec"]["replicas"], deployment["spec"]["replicas"]);
    assert_eq!(
        scale["status"]["replicas"],
        deployment["status"]["replicas"]
    );
    let labels = deployment["spec"]["selector"]["matchLabels"]
        .as_object()
        .unwrap();
    let selector: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap()))
        .collect();
    assert_eq!(scale["status"]["selector"], selector.join(","));
}

#[tokio::test]
async fn scaling_changes_the_deployments_replicas_generation_and_ownership() {
    let (server, path) = deployments();
    let (_, before) = request(&server, "GET", &path, JSON, "").await;
    let scale = format!("{path}/scale?fieldManager=hpa");
    let body = r#"{"spec":{"replicas":7}}"#;
    let (code, answer) = request(&server, "PATCH", &scale, MERGE, body).await;
    assert_eq!(code, StatusCode::OK, "{answer}");
    assert_eq!(answer["spec"]["replicas"], 7);
    let (_, after) = request(&server, "GET", &path, JSON, "").await;
    assert_eq!(after["spec"]["replicas"], 7);
    assert_eq!(
        answer["metadata"]["resourceVersion"],
        after["metadata"]["resourceVersion"]
    );
    let generation = |d: &serde_json::Value| d["metadata"]["generation"].as_i64().unwrap();
    assert_eq!(generation(&after), generation(&before) + 1);
    assert_eq!(after["metadata"]["uid"], before["metadata"]["uid"]);
    assert_eq!(
        after["status"], before["status"],
        "status is the controller's"
    );
    let entries = after["metadata"]["managedFields"].as_array().unwrap();
    let owners: Vec<_> = entries
        .iter()
        .filter(|e| !e["fieldsV1"]["f:spec"]["f:replicas"].is_null())
        .map(|e| (e["manager"].as_str().unwrap(), e["subresource"].as_str()))
        .collect();
    assert_eq!(owners, [("hpa", Some("scale"))], "{entries:?}");

    // The same replicas again: no new generation.
    let (code, _) = request(&server, "PATCH", &scale, MERGE, body).await;
    assert_eq!(code, StatusCode::OK);
    let (_, again) = request(&server, "GET", &path, JSON, "").await;
    assert_eq!(generation(&again), generation(&after));
    assert_eq!(
        again["metadata"]["managedFields"].as_array().unwrap().len(),
        entries.len()
    );
}

#[tokio::test]
async fn a_scale_is_refused_as_kube_apiserver_refuses_it() {
    let (server, path) = deployments();
    let scale = format!("{path}/scale");
    let name = path.rsplit('/').next().unwrap();
    let put = |metadata: serde_json::Value, replicas: i64| {
        json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": metadata,
               "spec": {"replicas": replicas}})
        .to_string()
    };
    let cases = [
        (
            "PATCH",
            MERGE,
            r#"{"spec":{"replicas":-1}}"#.to_owned(),
            422,
            "Invalid",
        ),
        (
            "PUT",
            JSON,
            put(json!({"name": name, "resourceVersion": "12345"}), 2),
            409,
            "Conflict",
        ),
        (
            "PUT",
            JSON,
            put(json!({"name": "other"}), 2),
            400,
            "BadRequest",
        ),
        (
            "PUT",
            "application/yaml",
            put(json!({"name": name}), 2),
            415,
            "UnsupportedMediaType",
        ),
        (
            "PATCH",
            "application/apply-patch+yaml",
            "{}".to_owned(),
            415,
            "UnsupportedMediaType",
        ),
    ];
    for (method, content_type, body, code, reason) in cases {
        let (got, status) = request(&server, method, &scale, content_type, &body).await;
        assert_eq!(
            (got.as_u16(), status["reason"].as_str()),
            (code, Some(reason)),
            "{body}"
        );
    }
    let (_, invalid) = request(
        &server,
        "PATCH",
        &scale,
        MERGE,
        r#"{"spec":{"replicas":-1}}"#,
    )
    .await;
    assert_eq!(
        invalid["message"],
        format!(
            "Scale.autoscaling \"{name}\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"
        )
    );
    let (code, _) = request(&server, "PUT", &scale, JSON, &put(json!({"name": name}), 4)).await;
    assert_eq!(code, StatusCode::OK);
    let missing = scale.replace(name, "missing");
    let (code, status) = request(&server, "GET", &missing, JSON, "").await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    assert_eq!(status["message"], "deployments.apps \"missing\" not found");
    let pods = path
        .replace("/apis/apps/v1", "/api/v1")
        .replace("deployments", "pods");
    let (code, _) = request(&server, "GET", &format!("{pods}/scale"), JSON, "").await;
    assert_eq!(code, StatusCode::NOT_FOUND);
}
