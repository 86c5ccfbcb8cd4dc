//! A kind from a sample (a custom resource) through the routes: discovery under its own
//! group, reads in JSON whatever `Accept` prefers, writes with JSON merge and JSON patches
//! only, the generation moved on by any change but metadata's (and status's, where the
//! sample has a status: its status subresource), and kube's default table.

use axum::http::StatusCode;
use serde_json::json;

use super::{request, router};
use crate::ApiServer;
use scenario::Scenario;

const JSON: &str = "application/json";
const ROOT: &str = "/apis/cert-manager.io/v1";

/// 30 cert-manager Certificates copied from the shipped sample, in 3 namespaces.
fn certificates() -> ApiServer {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/serve-certificates.toml");
    ApiServer::new(Scenario::load(&file).unwrap().objects)
}

#[tokio::test]
async fn discovery_lists_the_kinds_group_and_the_kind_in_it() {
    let server = certificates();
    let (_, groups) = request(&server, "GET", "/apis", JSON, "").await;
    assert_eq!(groups["groups"][0]["name"], "cert-manager.io");
    assert_eq!(
        groups["groups"][0]["preferredVersion"]["groupVersion"],
        "cert-manager.io/v1"
    );
    let (code, resources) = request(&server, "GET", ROOT, JSON, "").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(resources["groupVersion"], "cert-manager.io/v1");
    let resource = &resources["resources"][0];
    assert_eq!(
        (
            &resource["name"],
            &resource["kind"],
            &resource["namespaced"]
        ),
        (&json!("certificates"), &json!("Certificate"), &json!(true))
    );
    assert_eq!(resource["verbs"].as_array().unwrap().len(), 8);
    // Not in the core group, and no pods under its root.
    let (code, _) = request(&server, "GET", "/api/v1/certificates", JSON, "").await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    let (code, _) = request(&server, "GET", &format!("{ROOT}/pods"), JSON, "").await;
    assert_eq!(code, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn it_is_read_in_json_whatever_accept_prefers_and_protobuf_alone_is_refused() {
    use tower::ServiceExt;
    let server = certificates();
    let get = |accept: &'static str| {
        let request = axum::http::Request::builder()
            .uri(format!("{ROOT}/certificates"))
            .header(axum::http::header::ACCEPT, accept)
            .body(axum::body::Body::empty())
            .unwrap();
        router(server.clone()).oneshot(request)
    };
    let both = get("application/vnd.kubernetes.protobuf, application/json")
        .await
        .unwrap();
    assert_eq!(both.status(), StatusCode::OK);
    assert_eq!(both.headers()["content-type"], JSON);
    let bytes = axum::body::to_bytes(both.into_body(), usize::MAX)
        .await
        .unwrap();
    let list: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(list["kind"], "CertificateList");
    assert_eq!(list["items"].as_array().unwrap().len(), 30);
    assert_eq!(
        list["items"][0]["spec"]["issuerRef"]["kind"],
        "ClusterIssuer"
    );
    let alone = get("application/vnd.kubernetes.protobuf").await.unwrap();
    assert_eq!(alone.status(), StatusCode::NOT_ACCEPTABLE);
}

#[tokio::test]
async fn writes_take_merge_and_json_patches_and_move_the_generation_on() {
    let server = certificates();
    let collection = format!("{ROOT}/namespaces/payments/certificates");
    let body = json!({
        "apiVersion": "cert-manager.io/v1", "kind": "Certificate",
        "metadata": {"name": "made"},
        "spec": {"secretName": "made-tls", "anything": {"kept": [1, 2]}},
    });
    let (code, made) = request(&server, "POST", &collection, JSON, &body.to_string()).await;
    assert_eq!(code, StatusCode::CREATED, "{made}");
    assert_eq!(made["spec"]["anything"]["kept"], json!([1, 2]));
    assert_eq!(made["metadata"]["generation"], 1);
    let object = format!("{collection}/made");
    let merge = "application/merge-patch+json";
    let (code, patched) = request(
        &server,
        "PATCH",
        &object,
        merge,
        r#"{"spec":{"duration":"24h"}}"#,
    )
    .await;
    assert_eq!(code, StatusCode::OK, "{patched}");
    assert_eq!(patched["metadata"]["generation"], 2);
    let (_, labelled) = request(
        &server,
        "PATCH",
        &object,
        merge,
        r#"{"metadata":{"labels":{"a":"b"}}}"#,
    )
    .await;
    assert_eq!(
        labelled["metadata"]["generation"], 2,
        "metadata alone moves nothing"
    );
    let json_patch = r#"[{"op":"replace","path":"/spec/secretName","value":"x"}]"#;
    let (code, replaced) = request(
        &server,
        "PATCH",
        &object,
        "application/json-patch+json",
        json_patch,
    )
    .await;
    assert_eq!(code, StatusCode::OK, "{replaced}");
    assert_eq!(replaced["metadata"]["generation"], 3);
    let strategic = "application/strategic-merge-patch+json";
    let (code, refused) = request(&server, "PATCH", &object, strategic, "{}").await;
    assert_eq!(code, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("application/merge-patch+json"),
        "{refused}"
    );
    let (code, _) = request(&server, "DELETE", &object, JSON, "").await;
    assert_eq!(code, StatusCode::OK);
}

#[tokio::test]
async fn kubectl_sees_a_custom_resources_default_table() {
    use tower::ServiceExt;
    let server = certificates();
    let request = axum::http::Request::builder()
        .uri(format!("{ROOT}/namespaces/payments/certificates"))
        .header(
            axum::http::header::ACCEPT,
            "application/json;as=Table;v=v1;g=meta.k8s.io",
        )
        .body(axum::body::Body::empty())
        .unwrap();
    let response = router(server).oneshot(request).await.unwrap();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    let table: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let columns: Vec<&str> = table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(columns, ["Name", "Age"]);
    assert_eq!(table["rows"].as_array().unwrap().len(), 10);
}

#[tokio::test]
async fn a_status_subresource_writes_the_status_alone_and_the_object_keeps_it() {
    let server = certificates();
    let (_, resources) = request(&server, "GET", ROOT, JSON, "").await;
    let names: Vec<&str> = (resources["resources"].as_array().unwrap().iter())
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["certificates", "certificates/status"]);
    let collection = format!("{ROOT}/namespaces/payments/certificates");
    let body = json!({
        "apiVersion": "cert-manager.io/v1", "kind": "Certificate",
        "metadata": {"name": "made"},
        "spec": {"secretName": "made-tls"},
        "status": {"revision": 9},
    });
    let (code, made) = request(&server, "POST", &collection, JSON, &body.to_string()).await;
    assert_eq!(code, StatusCode::CREATED, "{made}");
    assert!(
        made.get("status").is_none(),
        "a create sets no status: {made}"
    );
    // Through the status: the status changes, the spec and the labels sent do not, nor
    // does the generation.
    let status = format!("{collection}/made/status");
    let merge = "application/merge-patch+json";
    let patch = r#"{"spec":{"secretName":"other"},"metadata":{"labels":{"a":"b"}},"status":{"revision":1}}"#;
    let (code, written) = request(&server, "PATCH", &status, merge, patch).await;
    assert_eq!(code, StatusCode::OK, "{written}");
    assert_eq!(written["status"], json!({"revision": 1}));
    assert_eq!(written["spec"]["secretName"], "made-tls");
    assert!(written["metadata"].get("labels").is_none(), "{written}");
    assert_eq!(written["metadata"]["generation"], 1);
    let entries = written["metadata"]["managedFields"].as_array().unwrap();
    assert!(
        entries.iter().any(|e| e["subresource"] == "status"),
        "{entries:?}"
    );
    // Through the object: the status stays as it was, and only the spec's change moves
    // the generation on.
    let object = format!("{collection}/made");
    let patch = r#"{"status":{"revision":5}}"#;
    let (_, kept) = request(&server, "PATCH", &object, merge, patch).await;
    assert_eq!(
        (&kept["status"], &kept["metadata"]["generation"]),
        (&json!({"revision": 1}), &json!(1))
    );
    let patch = r#"{"spec":{"duration":"24h"},"status":{"revision":5}}"#;
    let (_, changed) = request(&server, "PATCH", &object, merge, patch).await;
    assert_eq!(
        (&changed["status"], &changed["metadata"]["generation"]),
        (&json!({"revision": 1}), &json!(2))
    );
    // A replace of the status without one removes it; the read is the object's.
    let mut replaced = changed.clone();
    replaced.as_object_mut().unwrap().remove("status");
    let (code, put) = request(&server, "PUT", &status, JSON, &replaced.to_string()).await;
    assert_eq!(code, StatusCode::OK, "{put}");
    assert!(put.get("status").is_none(), "{put}");
    let (code, read) = request(&server, "GET", &status, JSON, "").await;
    assert_eq!(
        (code, &read["spec"]["duration"]),
        (StatusCode::OK, &json!("24h"))
    );
}

#[tokio::test]
async fn a_kind_whose_sample_has_no_status_has_no_status_subresource() {
    let dir = tempfile::tempdir().unwrap();
    let widget = json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default", "generation": 1},
        "spec": {"size": 1},
    });
    std::fs::write(dir.path().join("widget.json"), widget.to_string()).unwrap();
    let scenario = "name = \"widgets\"\n[objects]\ncount = 2\nnamespaces = 1\n\
        sample = \"widget.json\"\n[[variant]]\nname = \"a\"\n[[phase]]\nkind = \"list\"\n";
    std::fs::write(dir.path().join("widgets.toml"), scenario).unwrap();
    let objects = Scenario::load(&dir.path().join("widgets.toml"))
        .unwrap()
        .objects;
    let server = ApiServer::new(objects);
    let (_, resources) = request(&server, "GET", "/apis/example.com/v1", JSON, "").await;
    assert_eq!(resources["resources"].as_array().unwrap().len(), 1);
    let (_, list) = request(&server, "GET", "/apis/example.com/v1/widgets", JSON, "").await;
    let meta = &list["items"][0]["metadata"];
    let (namespace, name) = (
        meta["namespace"].as_str().unwrap(),
        meta["name"].as_str().unwrap(),
    );
    let object = format!("/apis/example.com/v1/namespaces/{namespace}/widgets/{name}");
    let (code, _) = request(&server, "GET", &format!("{object}/status"), JSON, "").await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    // Its writes are whole: a status sent is stored, and moves the generation on.
    let merge = "application/merge-patch+json";
    let (code, written) = request(
        &server,
        "PATCH",
        &object,
        merge,
        r#"{"status":{"ok":true}}"#,
    )
    .await;
    assert_eq!(code, StatusCode::OK, "{written}");
    assert_eq!(written["status"], json!({"ok": true}));
    assert_eq!(written["metadata"]["generation"], 2);
}
