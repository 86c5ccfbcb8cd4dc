//! What the apiserver benchmarks share: a request to the network server's router, in
//! process (no socket), and the URL of the first pod to write to.

#![allow(
    dead_code,
    reason = "each benchmark compiles this module and uses only part of it"
)]

use apiserver::{ApiServer, network_router};
use axum::body::Body;
use tower::ServiceExt;

/// Sends one request to `server`'s router, in process (no `content-type` when empty).
pub async fn request(
    server: &ApiServer,
    method: &str,
    uri: &str,
    content_type: &str,
    body: String,
) -> axum::response::Response {
    let headers: &[(&str, &str)] = match content_type {
        "" => &[],
        _ => &[("content-type", content_type)],
    };
    request_with(server, method, uri, headers, body).await
}

/// Sends one request with `headers` to `server`'s router, in process.
pub async fn request_with(
    server: &ApiServer,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: String,
) -> axum::response::Response {
    let mut request = axum::http::Request::builder().method(method).uri(uri);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Body::from(body)).expect("a valid request");
    network_router(server.clone())
        .oneshot(request)
        .await
        .expect("infallible")
}

/// `/api/v1/namespaces/NS/pods/NAME` of the first pod a LIST returns.
pub async fn first_pod_uri(server: &ApiServer) -> String {
    let page = request(server, "GET", "/api/v1/pods?limit=1", "", String::new()).await;
    let page: serde_json::Value = serde_json::from_slice(
        &axum::body::to_bytes(page.into_body(), usize::MAX)
            .await
            .expect("a body"),
    )
    .expect("a list");
    let meta = &page["items"][0]["metadata"];
    format!(
        "/api/v1/namespaces/{}/pods/{}",
        meta["namespace"].as_str().expect("a namespace"),
        meta["name"].as_str().expect("a name")
    )
}
