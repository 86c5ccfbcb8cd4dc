//! Paths over TCP, answered as kube-apiserver v1.37.2 answers them (checked by hand with
//! `kubectl get --raw`): an API path's trailing slashes are left out, every other path is
//! taken as sent; the root lists the paths served.

use axum::http::StatusCode;
use serde_json::Value;
use tower::ServiceExt;

use crate::ApiServer;
use crate::routes::network_router;
use scenario::ObjectSpec;

/// `GET uri` through the routes served over TCP: the status and the body, as JSON when
/// it is JSON (else `Null`).
async fn get(uri: &str) -> (StatusCode, Value) {
    let request = axum::http::Request::builder()
        .uri(uri)
        .body(axum::body::Body::empty())
        .unwrap();
    let response = network_router(ApiServer::new(ObjectSpec::pods(3)))
        .oneshot(request)
        .await
        .unwrap();
    let code = response.status();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (code, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

#[tokio::test]
async fn an_api_path_is_read_without_its_trailing_slashes() {
    // What the official Python client asks for: VersionApi.get_code, CoreApi and
    // ApisApi.get_api_versions, CoreV1Api.get_api_resources.
    for (uri, field, value) in [
        ("/version/", "major", "1"),
        ("/version//", "major", "1"),
        ("/api/", "kind", "APIVersions"),
        ("/apis/", "kind", "APIGroupList"),
        ("/api/v1/", "kind", "APIResourceList"),
        ("/api/v1/pods/", "kind", "PodList"),
        ("/api/v1/namespaces/", "kind", "NamespaceList"),
    ] {
        let (code, body) = get(uri).await;
        assert_eq!(code, StatusCode::OK, "{uri}: {body}");
        assert_eq!(body[field], value, "{uri}: {body}");
    }
    let (code, body) = get("/api/v1/pods/?limit=1").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(body["items"].as_array().unwrap().len(), 1, "{body}");
    let (code, body) = get("/api/v1/namespaces/default/pods/none/").await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    assert_eq!(body["message"], "pods \"none\" not found");
}

#[tokio::test]
async fn other_paths_and_inner_slashes_are_taken_as_sent() {
    for uri in ["/healthz/", "/livez/", "/openapi/v3/", "/api//v1"] {
        let (code, _) = get(uri).await;
        assert_eq!(code, StatusCode::NOT_FOUND, "{uri}");
    }
}

#[tokio::test]
async fn the_root_lists_the_paths_served_and_each_answers() {
    let (code, body) = get("/").await;
    assert_eq!(code, StatusCode::OK, "{body}");
    let paths: Vec<&str> = (body["paths"].as_array().unwrap().iter())
        .map(|p| p.as_str().unwrap())
        .collect();
    assert!(paths.is_sorted(), "{paths:?}");
    for path in [
        "/api/v1",
        "/apis/coordination.k8s.io/v1",
        "/apis/events.k8s.io",
        "/livez/ping",
        "/openapi/v3",
        "/version",
    ] {
        assert!(paths.contains(&path), "{path} not in {paths:?}");
    }
    for path in paths {
        let (code, body) = get(path).await;
        assert_eq!(code, StatusCode::OK, "{path}: {body}");
    }
}
