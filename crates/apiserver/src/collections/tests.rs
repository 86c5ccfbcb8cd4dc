use super::*;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use scenario::ObjectSpec;
use tower::ServiceExt;

/// Sends `method uri` through the measured path's router: its status and JSON body (null
/// when the body is not JSON, or is a watch's stream).
async fn send(server: &ApiServer, method: &str, uri: &str) -> (StatusCode, serde_json::Value) {
    let request = Request::builder()
        .method(method)
        .uri(uri)
        .body(Body::empty())
        .expect("a test request is well-formed");
    let response = router(server.clone())
        .oneshot(request)
        .await
        .expect("the router is infallible");
    let code = response.status();
    if uri.contains("watch=true") {
        return (code, serde_json::Value::Null);
    }
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("a body in memory reads");
    (code, serde_json::from_slice(&bytes).unwrap_or_default())
}

fn spec(kind: ObjectKind, count: u64) -> ObjectSpec {
    ObjectSpec {
        kind,
        ..ObjectSpec::pods(count)
    }
}

#[tokio::test]
async fn lists_and_watches_the_scenarios_kind_at_both_scopes() {
    for (kind, all, one) in [
        (
            ObjectKind::Pod,
            "/api/v1/pods",
            Some("/api/v1/namespaces/{ns}/pods"),
        ),
        (
            ObjectKind::Deployment,
            "/apis/apps/v1/deployments",
            Some("/apis/apps/v1/namespaces/{ns}/deployments"),
        ),
        (ObjectKind::Node, "/api/v1/nodes", None),
    ] {
        let server = ApiServer::new(spec(kind, 12));
        let (code, list) = send(&server, "GET", all).await;
        assert_eq!(code, StatusCode::OK, "{kind:?}");
        assert_eq!(list["items"].as_array().map(Vec::len), Some(12), "{kind:?}");
        let (code, _) = send(&server, "GET", &format!("{all}?watch=true")).await;
        assert_eq!(code, StatusCode::OK, "{kind:?}");
        if let Some(one) = one {
            let ns = crate::generate::namespace(server.spec(), 0);
            let (code, list) = send(&server, "GET", &one.replace("{ns}", &ns)).await;
            assert_eq!(code, StatusCode::OK, "{kind:?}");
            let items = list["items"].as_array().map(Vec::len).unwrap_or_default();
            assert!((1..12).contains(&items), "{kind:?}: {items} in {ns}");
        }
        let requests = server.requests();
        assert_eq!(
            (requests.list, requests.watch),
            (1 + u64::from(one.is_some()), 1)
        );
    }
}

/// What `serve` adds for programs (one object, writes, discovery, namespaces, the probes)
/// is not on the measured path: a `NotFound` Status or a 405, as kube-apiserver answers a
/// path or a method it lacks.
#[tokio::test]
async fn serves_nothing_but_the_collections() {
    let server = ApiServer::new(spec(ObjectKind::Pod, 3));
    let key = server.truth()[0].key.clone();
    let (ns, name) = key.split_once('/').expect("a pod's key is namespace/name");
    for (method, uri, code) in [
        ("GET", format!("/api/v1/namespaces/{ns}/pods/{name}"), 404),
        ("GET", "/api/v1".to_owned(), 404),
        ("GET", "/version".to_owned(), 404),
        ("GET", "/api/v1/namespaces".to_owned(), 404),
        ("GET", "/readyz".to_owned(), 404),
        ("GET", "/apis/apps/v1/deployments".to_owned(), 404),
        ("GET", "/api/v1/configmaps".to_owned(), 200),
        ("POST", format!("/api/v1/namespaces/{ns}/pods"), 405),
        ("DELETE", "/api/v1/pods".to_owned(), 405),
    ] {
        let (got, body) = send(&server, method, &uri).await;
        assert_eq!(got.as_u16(), code, "{method} {uri}: {body}");
        if code == 404 {
            assert_eq!(body["reason"], "NotFound", "{method} {uri}");
        }
    }
}
