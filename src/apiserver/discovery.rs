//! Discovery documents, enough for kubectl: `/version`, `/api`, `/api/v1`, `/apis`.

use axum::Json;
use axum::http::HeaderMap;
use serde_json::{Value, json};

use crate::scenario::ObjectKind;

/// `/version`: a server of the Kubernetes minor the generated objects follow.
pub async fn version() -> Json<Value> {
    Json(json!({
        "major": "1",
        "minor": "35",
        "gitVersion": concat!("v1.35.0+informer-mem-", env!("CARGO_PKG_VERSION")),
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "n/a",
        "compiler": "rustc",
        "platform": "linux/amd64",
    }))
}

/// `/api`: the core group's versions.
pub async fn api_versions(headers: HeaderMap) -> Json<Value> {
    let host = headers
        .get(axum::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    Json(json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}],
    }))
}

/// `/apis`: no groups besides core.
pub async fn api_groups() -> Json<Value> {
    Json(json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": []}))
}

/// `/api/v1`: the resources this server serves.
pub async fn api_resources() -> Json<Value> {
    let resources: Vec<Value> = ObjectKind::ALL
        .into_iter()
        .map(|kind| {
            let short: &[&str] = match kind {
                ObjectKind::Pod => &["po"],
                ObjectKind::ConfigMap => &["cm"],
                ObjectKind::Secret => &[],
            };
            json!({
                "name": kind.plural(),
                "singularName": kind.as_str().to_lowercase(),
                "namespaced": true,
                "kind": kind.as_str(),
                "verbs": ["delete", "get", "list", "watch"],
                "shortNames": short,
            })
        })
        .collect();
    Json(json!({
        "kind": "APIResourceList",
        "groupVersion": "v1",
        "resources": resources,
    }))
}
