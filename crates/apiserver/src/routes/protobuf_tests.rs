//! The protobuf wire: what client-go (v0.35 and later asks protobuf first for built-in
//! kinds), its metadata informer and kubectl's `create` send and read.

use super::*;

use axum::http::header;
use serde_json::{Value, json};

use crate::protobuf::{self, ProtobufError};
use scenario::ObjectSpec;

/// What client-go v0.37's typed clients send.
const CLIENT_GO: &str = "application/vnd.kubernetes.protobuf,application/json";
/// What its metadata informer sends on LIST.
const METADATA_LIST: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

/// Sends a request; returns the status, the Content-Type and what the body has sent
/// within a moment (a watch never ends by itself).
async fn exchange(
    server: &ApiServer,
    method: &str,
    uri: &str,
    headers: &[(header::HeaderName, &str)],
    body: Vec<u8>,
) -> (StatusCode, String, Vec<u8>) {
    use tower::ServiceExt;
    let mut request = axum::http::Request::builder().method(method).uri(uri);
    for (name, value) in headers {
        request = request.header(name, *value);
    }
    let request = request.body(Body::from(body)).unwrap();
    let response = router(server.clone()).oneshot(request).await.unwrap();
    let code = response.status();
    let content_type = response.headers()[header::CONTENT_TYPE]
        .to_str()
        .unwrap()
        .to_owned();
    (code, content_type, body_so_far(response.into_body()).await)
}

async fn get(server: &ApiServer, uri: &str, accept: &str) -> (String, Vec<u8>) {
    let (code, content_type, body) =
        exchange(server, "GET", uri, &[(header::ACCEPT, accept)], Vec::new()).await;
    assert_eq!(
        code,
        StatusCode::OK,
        "{uri}: {}",
        String::from_utf8_lossy(&body)
    );
    (content_type, body)
}

/// The events of a protobuf watch stream, as (type, object).
fn watch_events(mut stream: &[u8]) -> Vec<(String, Value)> {
    let mut events = Vec::new();
    while let Some((length, rest)) = stream.split_first_chunk::<4>() {
        let (frame, rest) = rest.split_at(u32::from_be_bytes(*length) as usize);
        events.push(protobuf::decode_watch_event(frame).unwrap());
        stream = rest;
    }
    events
}

fn server(count: u64) -> ApiServer {
    ApiServer::new(ObjectSpec {
        count,
        ..crate::generate::test_spec()
    })
}

#[tokio::test(start_paused = true)]
async fn client_go_gets_what_json_clients_get_in_protobuf() {
    let server = server(5);
    let (content_type, bytes) = get(&server, "/api/v1/pods?limit=2", CLIENT_GO).await;
    assert_eq!(content_type, "application/vnd.kubernetes.protobuf");
    let list = protobuf::decode_document(&bytes).unwrap();
    let (_, json) = get(&server, "/api/v1/pods?limit=2", "application/json").await;
    let json: Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(list["kind"], "PodList");
    assert_eq!(list["metadata"], json["metadata"]);
    let (items, json_items) = (
        list["items"].as_array().unwrap(),
        json["items"].as_array().unwrap(),
    );
    assert_eq!(items.len(), json_items.len());
    for (item, json_item) in items.iter().zip(json_items) {
        assert_eq!(item["metadata"], json_item["metadata"]);
        assert_eq!(item["spec"], json_item["spec"]);
    }
    assert!(
        bytes.len() * 10 < json.to_string().len() * 8,
        "protobuf is smaller"
    );
    // One object.
    let name = json["items"][0]["metadata"]["name"].as_str().unwrap();
    let namespace = json["items"][0]["metadata"]["namespace"].as_str().unwrap();
    let uri = format!("/api/v1/namespaces/{namespace}/pods/{name}");
    let (_, one) = get(&server, &uri, CLIENT_GO).await;
    let one = protobuf::decode_document(&one).unwrap();
    assert_eq!(one["kind"], "Pod");
    assert_eq!(one["spec"], json["items"][0]["spec"]);
    // `*/*` after protobuf, as client-go sends with `ContentType` set.
    let (content_type, _) = get(&server, &uri, "application/vnd.kubernetes.protobuf, */*").await;
    assert_eq!(content_type, "application/vnd.kubernetes.protobuf");
}

#[tokio::test(start_paused = true)]
async fn a_protobuf_watch_is_frames_of_events_with_bookmarks() {
    let server = server(3);
    let uri = "/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true";
    let (content_type, stream) = get(&server, uri, CLIENT_GO).await;
    assert_eq!(
        content_type,
        "application/vnd.kubernetes.protobuf;stream=watch"
    );
    let events = watch_events(&stream);
    let types: Vec<&str> = events.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(types, ["ADDED", "ADDED", "ADDED", "BOOKMARK"]);
    assert_eq!(events[0].1["kind"], "Pod");
    assert!(events[0].1["spec"]["containers"].is_array());
    let bookmark = &events[3].1["metadata"];
    assert_eq!(bookmark["annotations"]["k8s.io/initial-events-end"], "true");
    // A watch from a version the history no longer holds: one ERROR event.
    server.update(scenario::Amount::Count(3), &Default::default(), 1);
    server.compact();
    let (_, stream) = get(
        &server,
        "/api/v1/pods?watch=true&resourceVersion=1",
        CLIENT_GO,
    )
    .await;
    let events = watch_events(&stream);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].0, "ERROR");
    assert_eq!(events[0].1["kind"], "Status");
    assert_eq!(events[0].1["code"], 410);
}

#[tokio::test(start_paused = true)]
async fn metadata_informers_get_partial_object_metadata_in_protobuf() {
    let server = server(3);
    let (content_type, bytes) = get(&server, "/api/v1/pods", METADATA_LIST).await;
    assert_eq!(content_type, "application/vnd.kubernetes.protobuf");
    let list = protobuf::decode_document(&bytes).unwrap();
    assert_eq!(list["kind"], "PartialObjectMetadataList");
    assert_eq!(list["apiVersion"], "meta.k8s.io/v1");
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 3);
    assert!(
        items
            .iter()
            .all(|i| i["metadata"]["uid"].is_string() && i.get("spec").is_none())
    );
}

#[tokio::test(start_paused = true)]
async fn tables_stay_json_and_protobuf_alone_is_served() {
    let server = server(2);
    // kubectl's table in protobuf is skipped for the JSON that follows.
    let accept = "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json";
    let (content_type, _) = get(&server, "/api/v1/pods", accept).await;
    assert_eq!(content_type, "application/json");
    let (content_type, _) = get(&server, "/api/v1/pods", protobuf::MEDIA_TYPE).await;
    assert_eq!(content_type, protobuf::MEDIA_TYPE);
}

/// kubectl `create configmap` sends protobuf and reads protobuf back.
#[tokio::test(start_paused = true)]
async fn kubectl_creates_in_protobuf() {
    let server = ApiServer::new(ObjectSpec {
        kind: scenario::ObjectKind::ConfigMap,
        count: 2,
        ..crate::generate::test_spec()
    });
    let namespace = crate::generate::namespace(server.spec(), 0);
    let configmaps = format!("/api/v1/namespaces/{namespace}/configmaps");
    // As Go writes it: the fields that are no pointers, empty too.
    let body = protobuf::encode_document(&json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "made", "generateName": "", "namespace": "", "creationTimestamp": "1970-01-01T00:00:00Z"},
        "data": {"a": "b"},
    }))
    .unwrap();
    let headers = [
        (header::CONTENT_TYPE, protobuf::MEDIA_TYPE),
        (
            header::ACCEPT,
            "application/vnd.kubernetes.protobuf,application/json",
        ),
    ];
    let (code, content_type, answer) = exchange(
        &server,
        "POST",
        &format!("{configmaps}?fieldManager=kubectl-create"),
        &headers,
        body,
    )
    .await;
    assert_eq!(
        code,
        StatusCode::CREATED,
        "{}",
        String::from_utf8_lossy(&answer)
    );
    assert_eq!(content_type, protobuf::MEDIA_TYPE);
    let created = protobuf::decode_document(&answer).unwrap();
    assert_eq!(created["data"], json!({"a": "b"}));
    let (_, json) = get(&server, &format!("{configmaps}/made"), "application/json").await;
    let json: Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(json["metadata"]["namespace"], namespace.as_str());
    assert!(json["metadata"].get("generateName").is_none(), "{json}");
    assert!(json["metadata"]["creationTimestamp"].as_str().unwrap() > "1970");
    // Bytes that are not a protobuf document: 400, saying why.
    let (code, _, answer) = exchange(
        &server,
        "POST",
        &configmaps,
        &headers,
        b"{\"kind\":\"ConfigMap\"}".to_vec(),
    )
    .await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    let status: Value = serde_json::from_slice(&answer).unwrap();
    let message = status["message"].as_str().unwrap();
    assert!(
        message.contains(&ProtobufError::NoEnvelope.to_string()),
        "{message}"
    );
}
