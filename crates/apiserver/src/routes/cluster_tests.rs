//! A cluster-scoped kind (Node) through every route: lists and pages without a namespace,
//! one object at `/api/v1/nodes/{name}`, writes there, and 404 at namespaced paths.

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::request;
use crate::ApiServer;
use scenario::{ObjectKind, ObjectSpec};

const JSON: &str = "application/json";

fn nodes(count: u64) -> ApiServer {
    let mut spec = ObjectSpec::pods(count);
    spec.kind = ObjectKind::Node;
    spec.namespaces = 1;
    spec.images = Some(3);
    ApiServer::new(spec)
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn nodes_are_read_at_the_clusters_scope_and_nowhere_else() {
    let server = nodes(12);
    let (code, list) = request(&server, "GET", "/api/v1/nodes", JSON, "").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(list["kind"], "NodeList");
    let all = names(&list);
    assert_eq!(all.len(), 12);
    assert!(list["items"][0]["metadata"].get("namespace").is_none());
    let one = format!("/api/v1/nodes/{}", all[3]);
    let (code, node) = request(&server, "GET", &one, JSON, "").await;
    assert_eq!(
        (code, node["metadata"]["name"].as_str()),
        (StatusCode::OK, Some(&*all[3]))
    );
    // Pages follow each other by the name alone, as a cluster-scoped key is.
    let (_, first) = request(&server, "GET", "/api/v1/nodes?limit=5", JSON, "").await;
    let token = first["metadata"]["continue"].as_str().unwrap();
    let next = format!("/api/v1/nodes?limit=5&continue={token}");
    let (code, second) = request(&server, "GET", &next, JSON, "").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!([names(&first), names(&second)].concat(), all[..10]);
    // No namespaced path has nodes, and no cluster path has one pod.
    for path in [
        "/api/v1/namespaces/default/nodes".to_owned(),
        format!("/api/v1/namespaces/default/nodes/{}", all[3]),
        "/api/v1/pods/web".to_owned(),
    ] {
        let (code, status) = request(&server, "GET", &path, JSON, "").await;
        assert_eq!(
            (code, &status["reason"]),
            (StatusCode::NOT_FOUND, &json!("NotFound")),
            "{path}"
        );
    }
    let truth = server.truth();
    assert!(
        truth.iter().all(|t| !t.key.contains('/')),
        "{:?}",
        truth[0].key
    );
}

#[tokio::test]
async fn nodes_are_written_at_the_clusters_scope() {
    let server = nodes(3);
    let body = json!({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": "extra", "namespace": "ignored"}});
    let (code, created) = request(&server, "POST", "/api/v1/nodes", JSON, &body.to_string()).await;
    assert_eq!(code, StatusCode::CREATED, "{created}");
    assert!(created["metadata"].get("namespace").is_none(), "{created}");
    let patch = json!({"metadata": {"labels": {"tier": "gpu"}}}).to_string();
    let merge = "application/merge-patch+json";
    let (code, patched) = request(&server, "PATCH", "/api/v1/nodes/extra", merge, &patch).await;
    assert_eq!(
        (code, &patched["metadata"]["labels"]["tier"]),
        (StatusCode::OK, &json!("gpu"))
    );
    let (code, _) = request(
        &server,
        "POST",
        "/api/v1/namespaces/default/nodes",
        JSON,
        &body.to_string(),
    )
    .await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    let (code, _) = request(&server, "DELETE", "/api/v1/nodes/extra", JSON, "").await;
    assert_eq!(code, StatusCode::OK);
    let (code, _) = request(&server, "GET", "/api/v1/nodes/extra", JSON, "").await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    // A namespaced kind's cluster path is its collection only: no object there to
    // write (404), and no write to the collection (405).
    let pods = ApiServer::new(ObjectSpec::pods(3));
    for method in ["PUT", "PATCH", "DELETE"] {
        let (code, _) = request(&pods, method, "/api/v1/pods/web", JSON, "{}").await;
        assert_eq!(code, StatusCode::NOT_FOUND, "{method}");
    }
    let (code, _) = request(&pods, "DELETE", "/api/v1/pods", JSON, "").await;
    assert_eq!(code, StatusCode::METHOD_NOT_ALLOWED);
    let (code, deleted) = request(&server, "DELETE", "/api/v1/nodes", JSON, "").await;
    assert_eq!((code, names(&deleted).len()), (StatusCode::OK, 3));
    assert_eq!(server.alive(), 0);
}
