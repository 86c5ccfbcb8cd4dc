//! A kind of a named group (apps/v1 Deployment) through every route: discovery, reads and
//! writes under `/apis/apps/v1`, kube-apiserver's words for its errors, and 404 for the
//! group's resources under the core group's paths and the other way round.

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::request;
use crate::ApiServer;
use crate::generate::{name, namespace};
use scenario::{ObjectKind, ObjectSpec};

const JSON: &str = "application/json";

fn deployments(count: u64) -> ApiServer {
    let mut spec = ObjectSpec::pods(count);
    spec.kind = ObjectKind::Deployment;
    ApiServer::new(spec)
}

fn resource_names(list: &Value) -> Vec<&str> {
    list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn discovery_lists_the_apps_group_and_its_deployments_apart_from_the_core_group() {
    let server = deployments(3);
    let (code, groups) = request(&server, "GET", "/apis", JSON, "").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(groups["kind"], "APIGroupList");
    assert_eq!(groups["groups"][0]["name"], "apps");
    assert_eq!(
        groups["groups"][0]["preferredVersion"]["groupVersion"],
        "apps/v1"
    );
    let (code, group) = request(&server, "GET", "/apis/apps", JSON, "").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(group["kind"], "APIGroup");
    let (_, apps) = request(&server, "GET", "/apis/apps/v1", JSON, "").await;
    assert_eq!(apps["groupVersion"], "apps/v1");
    assert_eq!(
        resource_names(&apps),
        ["deployments", "deployments/scale", "deployments/status"]
    );
    assert_eq!(apps["resources"][2]["kind"], "Deployment");
    assert_eq!(apps["resources"][1]["group"], "autoscaling");
    assert_eq!(apps["resources"][1]["kind"], "Scale");
    assert_eq!(apps["resources"][0]["shortNames"], json!(["deploy"]));
    assert_eq!(apps["resources"][0]["categories"], json!(["all"]));
    assert!(
        apps["resources"][0]["verbs"]
            .as_array()
            .unwrap()
            .contains(&json!("create")),
        "the scenario's kind is writable"
    );
    let (_, core) = request(&server, "GET", "/api/v1", JSON, "").await;
    assert!(!resource_names(&core).contains(&"deployments"));
    assert!(
        core.get("apiVersion").is_none(),
        "as kube-apiserver writes it"
    );
    let (_, paths) = request(&server, "GET", "/openapi/v3", JSON, "").await;
    let url = paths["paths"]["apis/apps/v1"]["serverRelativeURL"]
        .as_str()
        .unwrap();
    let (code, document) = request(&server, "GET", url, JSON, "").await;
    assert_eq!(code, StatusCode::OK);
    let patch =
        &document["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
    assert_eq!(patch["operationId"], "patchAppsV1NamespacedDeployment");
    assert_eq!(
        patch["x-kubernetes-group-version-kind"]["group"], "apps",
        "kubectl finds the kind's PATCH by group, version and kind"
    );
}

#[tokio::test]
async fn deployments_are_read_under_their_group_and_nowhere_else() {
    let server = deployments(12);
    let spec = server.spec().clone();
    let (ns, first) = (namespace(&spec, 0), name(&spec, 0));
    let (code, list) = request(&server, "GET", "/apis/apps/v1/deployments", JSON, "").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(list["kind"], "DeploymentList");
    assert_eq!(list["apiVersion"], "apps/v1");
    assert_eq!(list["items"].as_array().unwrap().len(), 12);
    assert!(
        list["items"][0].get("apiVersion").is_none(),
        "a list's items carry no type"
    );
    let path = format!("/apis/apps/v1/namespaces/{ns}/deployments/{first}");
    let (code, one) = request(&server, "GET", &path, JSON, "").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(one["apiVersion"], "apps/v1");
    assert_eq!(one["kind"], "Deployment");
    assert_eq!(
        one["status"]["observedGeneration"],
        one["metadata"]["generation"]
    );
    for entry in one["metadata"]["managedFields"].as_array().unwrap() {
        assert_eq!(entry["apiVersion"], "apps/v1");
    }
    for wrong in [
        "/api/v1/deployments".to_owned(),
        format!("/api/v1/namespaces/{ns}/deployments/{first}"),
        "/apis/apps/v1/pods".to_owned(),
        format!("/apis/apps/v1/namespaces/{ns}/configmaps"),
        "/apis/apps/v1/namespaces".to_owned(),
        format!("/apis/apps/v1/deployments/{first}"),
    ] {
        let (code, status) = request(&server, "GET", &wrong, JSON, "").await;
        assert_eq!(code, StatusCode::NOT_FOUND, "{wrong}");
        assert_eq!(
            status["message"], "the server could not find the requested resource",
            "{wrong}"
        );
    }
    let missing = format!("/apis/apps/v1/namespaces/{ns}/deployments/nope");
    let (code, status) = request(&server, "GET", &missing, JSON, "").await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    assert_eq!(status["message"], r#"deployments.apps "nope" not found"#);
    assert_eq!(
        status["details"],
        json!({"name": "nope", "group": "apps", "kind": "deployments"})
    );
}

#[tokio::test]
async fn a_written_deployment_gets_its_generation_and_status_from_the_server() {
    let server = deployments(2);
    let ns = namespace(server.spec(), 0);
    let collection = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    let body = |replicas: u32| {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "hello", "namespace": ns},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "hello"}},
                "template": {
                    "metadata": {"labels": {"app": "hello"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                },
            },
            "status": {"replicas": 9},
        })
        .to_string()
    };
    let (code, made) = request(&server, "POST", &collection, JSON, &body(2)).await;
    assert_eq!(code, StatusCode::CREATED, "{made}");
    assert_eq!(made["metadata"]["generation"], 1);
    assert_eq!(
        made["status"],
        json!({}),
        "status is the status subresource's"
    );
    assert_eq!(
        made["metadata"]["managedFields"][0]["apiVersion"],
        "apps/v1"
    );
    let (code, again) = request(&server, "POST", &collection, JSON, &body(2)).await;
    assert_eq!(code, StatusCode::CONFLICT);
    assert_eq!(
        again["message"],
        r#"deployments.apps "hello" already exists"#
    );

    let one = format!("{collection}/hello");
    let (code, replaced) = request(&server, "PUT", &one, JSON, &body(5)).await;
    assert_eq!(code, StatusCode::OK, "{replaced}");
    assert_eq!(replaced["metadata"]["generation"], 2, "the spec changed");
    let merge = "application/merge-patch+json";
    let label = r#"{"metadata":{"labels":{"team":"a"}}}"#;
    let (_, patched) = request(&server, "PATCH", &one, merge, label).await;
    assert_eq!(
        patched["metadata"]["generation"], 2,
        "only metadata changed"
    );

    let core = json!({"apiVersion": "v1", "kind": "Deployment", "metadata": {"name": "x"}});
    let (code, refused) = request(&server, "POST", &collection, JSON, &core.to_string()).await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("does not match this endpoint's (apps/v1)"),
        "{refused}"
    );
    let (code, deleted) = request(&server, "DELETE", &one, JSON, "").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(deleted["details"]["group"], "apps");
}

#[tokio::test]
async fn a_deployment_without_a_selector_is_refused_as_required() {
    // No selector at all is Required, as a nil pointer in Go is; an empty one selects
    // nothing (kube-apiserver's words for each).
    let server = deployments(2);
    let ns = namespace(server.spec(), 0);
    let collection = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    let mut unselected = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "hello", "namespace": ns},
        "spec": {"template": {
            "metadata": {"labels": {"app": "hello"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        }},
    });
    let text = unselected.to_string();
    let (code, refused) = request(&server, "POST", &collection, JSON, &text).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    let required = r#"Deployment.apps "hello" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: {"app":"hello"}: `selector` does not match template `labels`]"#;
    assert_eq!(refused["message"], required);
    unselected["spec"]["selector"] = json!({});
    let text = unselected.to_string();
    let (code, refused) = request(&server, "POST", &collection, JSON, &text).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    let empty = r#"Deployment.apps "hello" is invalid: spec.selector: Invalid value: {}: empty selector is invalid for deployment"#;
    assert_eq!(refused["message"], empty);
}

/// Every `$ref` in `document`'s schemas names one of them.
fn unresolved_references(document: &Value) -> Vec<String> {
    let schemas = document["components"]["schemas"].as_object().unwrap();
    let text = document["components"].to_string();
    text.split("\"#/components/schemas/")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().to_owned())
        .filter(|name| !schemas.contains_key(name))
        .collect()
}

#[tokio::test]
async fn each_groups_document_has_its_kinds_schemas_for_kubectl_explain() {
    for (server, url, kinds) in [
        (
            ApiServer::new(ObjectSpec::pods(3)),
            "/openapi/v3/api/v1",
            &["Pod", "ConfigMap", "Secret", "Node", "Namespace"][..],
        ),
        (
            deployments(3),
            "/openapi/v3/apis/apps/v1",
            &["Deployment"][..],
        ),
    ] {
        let (code, document) = request(&server, "GET", url, JSON, "").await;
        assert_eq!(code, StatusCode::OK, "{url}");
        let schemas = document["components"]["schemas"].as_object().unwrap();
        for kind in kinds {
            // kubectl explain finds a resource's kind in its path's operations, then the
            // kind's schema by the same extension.
            let listed = document["paths"]
                .as_object()
                .unwrap()
                .values()
                .any(|path| path["get"]["x-kubernetes-group-version-kind"]["kind"] == *kind);
            assert!(listed, "{url} has no path of {kind}");
            let found = schemas.values().any(|schema| {
                schema["x-kubernetes-group-version-kind"]
                    .as_array()
                    .is_some_and(|gvks| gvks.iter().any(|gvk| gvk["kind"] == *kind))
            });
            assert!(found, "{url} has no schema of {kind}");
        }
        assert_eq!(
            unresolved_references(&document),
            Vec::<String>::new(),
            "{url}"
        );
        let pod_spec = &schemas.get("io.k8s.api.core.v1.PodSpec");
        assert!(
            pod_spec.is_some_and(|s| s["properties"]["nodeName"]["description"].is_string()),
            "{url}: a pod template's fields are described"
        );
    }
}

#[tokio::test]
async fn a_server_of_a_core_kind_serves_no_named_group() {
    let server = ApiServer::new(ObjectSpec::pods(3));
    let (_, groups) = request(&server, "GET", "/apis", JSON, "").await;
    assert_eq!(groups["groups"], json!([]));
    let (_, paths) = request(&server, "GET", "/openapi/v3", JSON, "").await;
    assert!(paths["paths"].get("apis/apps/v1").is_none());
    for path in ["/apis/apps/v1", "/apis/apps/v1/deployments"] {
        let (code, _) = request(&server, "GET", path, JSON, "").await;
        assert_eq!(code, StatusCode::NOT_FOUND, "{path}");
    }
}

/// Over TCP a path the server lacks is answered as kube-apiserver answers it: a `NotFound`
/// Status inside a group it serves (`/api`, the groups `/apis` lists), Go's plain-text 404
/// anywhere else, such as a group it does not serve.
#[tokio::test]
async fn over_tcp_a_path_outside_the_served_groups_is_go_s_plain_404() {
    use tower::ServiceExt;
    for (server, served, unserved) in [
        (
            ApiServer::new(ObjectSpec::pods(3)),
            "/api/v1/foos",
            "/apis/policy/v1beta1/poddisruptionbudgets",
        ),
        (deployments(3), "/apis/apps/v9", "/apis/example.com/v1"),
    ] {
        let router = crate::routes::network_router(server);
        for (path, content_type) in [
            (served, "application/json"),
            ("/api/v9", "application/json"),
            (unserved, "text/plain; charset=utf-8"),
            ("/crosscheck-no-such-path", "text/plain; charset=utf-8"),
        ] {
            let request = axum::http::Request::get(path)
                .body(axum::body::Body::empty())
                .unwrap();
            let response = router.clone().oneshot(request).await.unwrap();
            assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
            let headers = response.headers();
            assert_eq!(
                headers[axum::http::header::CONTENT_TYPE],
                content_type,
                "{path}"
            );
            let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .unwrap();
            if content_type == JSON {
                let status: Value = serde_json::from_slice(&body).unwrap();
                assert_eq!(status["reason"], "NotFound", "{path}");
            } else {
                assert_eq!(&body[..], b"404 page not found\n", "{path}");
            }
        }
    }
}
