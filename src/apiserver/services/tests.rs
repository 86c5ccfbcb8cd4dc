//! Services as `kubectl cluster-info` and `kubectl get services` read them.

use axum::http::StatusCode;
use serde_json::json;

use crate::apiserver::records::tests::{Client, JSON, pods};

#[tokio::test]
async fn cluster_info_finds_services_listed_and_none_there() {
    let client = Client::new(&pods());
    let (_, core) = client.get("/api/v1").await;
    let listed = (core["resources"].as_array().unwrap().iter())
        .find(|r| r["name"] == "services")
        .expect("/api/v1 lists services");
    assert_eq!(listed["verbs"], json!(["get", "list"]));
    let cluster_services = "/api/v1/namespaces/kube-system/services\
                            ?labelSelector=kubernetes.io%2Fcluster-service%3Dtrue";
    let (code, list) = client.get(cluster_services).await;
    assert_eq!(code, StatusCode::OK, "{list}");
    assert_eq!(
        (&list["kind"], &list["items"]),
        (&json!("ServiceList"), &json!([]))
    );
    let (code, everywhere) = client.get("/api/v1/services").await;
    assert_eq!((code, &everywhere["items"]), (StatusCode::OK, &json!([])));
}

#[tokio::test]
async fn services_are_read_as_tables_and_refused_where_there_is_nothing() {
    let client = Client::new(&pods());
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io";
    let (code, bytes) = client
        .raw(
            "GET",
            "/api/v1/namespaces/default/services",
            &[("accept", table)],
            Vec::new(),
        )
        .await;
    let answered: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(code, StatusCode::OK);
    assert_eq!(answered["kind"], "Table");
    assert_eq!(answered["columnDefinitions"][1]["name"], "Type");
    assert_eq!(answered["rows"], json!([]));
    let (code, missing) = client
        .get("/api/v1/namespaces/default/services/kubernetes")
        .await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    assert_eq!(missing["message"], r#"services "kubernetes" not found"#);
    let (code, _) = client
        .get("/api/v1/namespaces/default/services?watch=true")
        .await;
    assert_eq!(code, StatusCode::METHOD_NOT_ALLOWED);
    let service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}});
    let (code, _) = client
        .send(
            "POST",
            "/api/v1/namespaces/default/services",
            JSON,
            &service,
        )
        .await;
    assert_eq!(code, StatusCode::METHOD_NOT_ALLOWED);
}
