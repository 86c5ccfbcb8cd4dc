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
    assert_eq!(listed["verbs"], json!(["get", "list", "watch"]));
    assert_eq!(listed["categories"], json!(["all"]));
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

#[tokio::test]
async fn a_services_informer_lists_none_and_its_watch_sees_only_bookmarks() {
    let client = Client::new(&pods());
    let (code, list) = client.get("/api/v1/services?limit=500").await;
    assert_eq!(code, StatusCode::OK, "{list}");
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .expect("a list has a version");
    // client-go's reflector: a watch from the list's version, with bookmarks.
    let watch = format!(
        "/api/v1/services?watch=true&resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=1"
    );
    assert_eq!(
        client.watch(&watch, JSON).await,
        Vec::<serde_json::Value>::new()
    );
    // Watch-list: no initial events, then the bookmark that ends them.
    let watch_list = "/api/v1/namespaces/kube-system/services?watch=true&sendInitialEvents=true\
                      &resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1";
    let events = client.watch(watch_list, JSON).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "BOOKMARK");
    assert_eq!(events[0]["object"]["kind"], "Service");
    assert_eq!(
        events[0]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    // kubectl get services --watch: the state (none), then nothing.
    let kubectl = "/api/v1/namespaces/default/services?watch=true&timeoutSeconds=1";
    assert!(client.watch(kubectl, JSON).await.is_empty());
}

#[tokio::test]
async fn services_are_selected_by_the_fields_kube_apiserver_selects_them_by() {
    let client = Client::new(&pods());
    for field in [
        "spec.type%3DClusterIP",
        "spec.clusterIP%3D10.0.0.1",
        "metadata.name%3Dkubernetes",
    ] {
        let (code, list) = client
            .get(&format!("/api/v1/services?fieldSelector={field}"))
            .await;
        assert_eq!(
            (code, &list["items"]),
            (StatusCode::OK, &json!([])),
            "{field}"
        );
    }
    for uri in [
        "/api/v1/services?fieldSelector=status.x%3Dy",
        "/api/v1/services?fieldSelector=status.x%3Dy&watch=true",
    ] {
        let (code, refused) = client.get(uri).await;
        assert_eq!(code, StatusCode::BAD_REQUEST, "{uri}");
        assert_eq!(refused["message"], "field label not supported: status.x");
    }
}
