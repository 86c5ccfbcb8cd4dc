//! Discovery documents, enough for kubectl: `/version`, `/api`, `/api/v1`, `/apis`, and
//! a minimal OpenAPI v3 document.
//!
//! kubectl reads OpenAPI before `apply` and `create` to learn whether the server validates
//! fields itself (the `fieldValidation` parameter of each kind's PATCH); without a document
//! it insists on validating client-side and gives up. The document here declares exactly
//! that and no schemas, so kubectl falls back to its compiled-in types for strategic merge.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use serde_json::{Value, json};

use super::ApiServer;
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

/// `/api/v1`: the resources this server serves. Only the scenario's kind can be written;
/// the others are listed read-only, and empty; namespaces can be read.
pub async fn api_resources(State(server): State<ApiServer>) -> Json<Value> {
    let namespaces = json!({
        "name": "namespaces", "singularName": "namespace", "namespaced": false,
        "kind": "Namespace", "verbs": ["get", "list"], "shortNames": ["ns"],
    });
    let resources: Vec<Value> = std::iter::once(namespaces)
        .chain(ObjectKind::ALL.into_iter().map(|kind| {
            let short: &[&str] = match kind {
                ObjectKind::Pod => &["po"],
                ObjectKind::ConfigMap => &["cm"],
                ObjectKind::Secret => &[],
                ObjectKind::Node => &["no"],
            };
            // kube-apiserver puts pods in the `all` category (`kubectl get all`).
            let categories: &[&str] = match kind {
                ObjectKind::Pod => &["all"],
                _ => &[],
            };
            let mut resource = json!({
                "name": kind.plural(),
                "singularName": kind.as_str().to_lowercase(),
                "namespaced": kind.namespaced(),
                "kind": kind.as_str(),
                "verbs": if kind == server.spec().kind {
                    json!(["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"])
                } else {
                    json!(["get", "list", "watch"])
                },
                "shortNames": short,
            });
            if !categories.is_empty() {
                resource["categories"] = json!(categories);
            }
            resource
        }))
        .collect();
    Json(json!({
        "kind": "APIResourceList",
        "groupVersion": "v1",
        "resources": resources,
    }))
}

/// `/openapi/v3`: where the core group's document is, with a hash of it (kubectl caches
/// the document by server and hash; the document differs by kind).
pub async fn openapi_v3_paths(State(server): State<ApiServer>) -> Json<Value> {
    let document = core_document(server.spec().kind).to_string();
    let mut hasher = std::hash::DefaultHasher::new();
    std::hash::Hash::hash(&document, &mut hasher);
    let hash = std::hash::Hasher::finish(&hasher);
    Json(json!({
        "paths": {
            "api/v1": {"serverRelativeURL": format!("/openapi/v3/api/v1?hash={hash:016X}")},
        },
    }))
}

/// `/openapi/v3/api/v1`: each writable kind's PATCH, with the `fieldValidation` parameter
/// that tells kubectl the server validates fields. No schemas: `components.schemas` is
/// there and empty, so `kubectl explain` says it knows no such resource instead of failing
/// in its template.
pub async fn openapi_v3_core(State(server): State<ApiServer>) -> Json<Value> {
    Json(core_document(server.spec().kind))
}

fn core_document(kind: ObjectKind) -> Value {
    let (path, operation) = if kind.namespaced() {
        (
            format!(
                "/api/v1/namespaces/{{namespace}}/{}/{{name}}",
                kind.plural()
            ),
            format!("patchCoreV1Namespaced{}", kind.as_str()),
        )
    } else {
        (
            format!("/api/v1/{}/{{name}}", kind.plural()),
            format!("patchCoreV1{}", kind.as_str()),
        )
    };
    let parameter = |name: &str| json!({"name": name, "in": "query", "schema": {"type": "string"}});
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.35.0"},
        "components": {"schemas": {}},
        "paths": {
            path: {
                "patch": {
                    "operationId": operation,
                    "parameters": [parameter("dryRun"), parameter("fieldManager"), parameter("fieldValidation")],
                    "x-kubernetes-action": "patch",
                    "x-kubernetes-group-version-kind": {"group": "", "version": "v1", "kind": kind.as_str()},
                },
            },
        },
    })
}
