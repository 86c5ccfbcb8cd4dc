//! The sizes a scenario refuses (`scenario::storable`) are the ones this server's
//! validation refuses, as kube-apiserver's does: a generated ConfigMap or Secret written
//! back as it was read is taken while its data and annotations fit, and refused, naming
//! the field, where the scenario would have refused its shape.

use axum::http::StatusCode;
use serde_json::Value;

use crate::ApiServer;
use crate::routes::request as send;
use scenario::{ObjectKind, ObjectSpec};

const JSON: &str = "application/json";

/// The first generated object of `kind` shaped `keys`, `bytes`, read and written back:
/// the PUT's status and body.
async fn round_trip(
    kind: ObjectKind,
    (keys, bytes): (u32, u32),
    last_applied: bool,
) -> (StatusCode, Value) {
    let spec = ObjectSpec {
        kind,
        count: 2,
        data_keys: Some(keys),
        data_bytes: bytes,
        last_applied,
        ..ObjectSpec::pods(2)
    };
    let resource = match kind {
        ObjectKind::Secret => "secrets",
        _ => "configmaps",
    };
    let server = ApiServer::new(spec);
    let (code, list) = send(&server, "GET", &format!("/api/v1/{resource}"), JSON, "").await;
    assert_eq!(code, StatusCode::OK);
    let object = &list["items"][0];
    let path = format!(
        "/api/v1/namespaces/{}/{resource}/{}",
        object["metadata"]["namespace"].as_str().unwrap(),
        object["metadata"]["name"].as_str().unwrap()
    );
    send(&server, "PUT", &path, JSON, &object.to_string()).await
}

#[tokio::test]
async fn the_largest_data_a_scenario_allows_is_stored_and_more_is_refused() {
    // scenario::storable's bound for three keys: 524,256 bytes a value.
    let (code, body) = round_trip(ObjectKind::ConfigMap, (3, 524_256), false).await;
    assert_eq!(code, StatusCode::OK, "{body}");
    let (code, body) = round_trip(ObjectKind::ConfigMap, (3, 600_000), false).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        body["message"].as_str().unwrap().contains("Too long"),
        "{body}"
    );
    let (code, _) = round_trip(ObjectKind::Secret, (3, 524_256), false).await;
    assert_eq!(code, StatusCode::OK);
}

#[tokio::test]
async fn a_last_applied_annotation_over_256_kib_is_refused_as_the_scenario_refuses_it() {
    // 200,000 bytes: 200 KB in a ConfigMap's annotation, 266,668 as a Secret's base64.
    let (code, body) = round_trip(ObjectKind::ConfigMap, (2, 200_000), true).await;
    assert_eq!(code, StatusCode::OK, "{body}");
    let (code, body) = round_trip(ObjectKind::Secret, (2, 200_000), true).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("metadata.annotations"), "{message}");
}
