//! Evictions: a DELETE no disruption budget stands in the way of, answered as
//! kube-apiserver answers one.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::ApiServer;
use crate::generate;
use crate::records::tests::{Client, JSON, pods};
use scenario::{ObjectKind, ObjectSpec};

/// The generated pod `index`: its path.
fn pod(server: &ApiServer, index: u32) -> String {
    let spec = server.spec();
    let (namespace, name) = (
        generate::namespace(spec, index),
        generate::name(spec, index),
    );
    format!("/api/v1/namespaces/{namespace}/pods/{name}")
}

/// An Eviction of the pod at `path`, with these delete options.
fn eviction(path: &str, delete_options: Value) -> Value {
    let name = path.rsplit('/').next().unwrap();
    json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name},
           "deleteOptions": delete_options})
}

async fn evict(client: &Client, path: &str, query: &str, body: &Value) -> (StatusCode, Value) {
    let uri = format!("{path}/eviction{query}");
    client.send("POST", &uri, JSON, body).await
}

#[tokio::test]
async fn an_eviction_deletes_the_pod_and_answers_201_success() {
    let server = pods();
    let client = Client::new(&server);
    let path = pod(&server, 0);
    let (code, answer) = evict(&client, &path, "", &eviction(&path, Value::Null)).await;
    assert_eq!(code, StatusCode::CREATED, "{answer}");
    assert_eq!(
        answer,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
    );
    // serve's kubelet ends an evicted pod as a deleted one: it is gone.
    let (code, _) = client.get(&path).await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    let (code, gone) = evict(&client, &path, "", &eviction(&path, Value::Null)).await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    let name = path.rsplit('/').next().unwrap();
    assert_eq!(gone["message"], format!("pods {name:?} not found"));
    // policy/v1beta1, and a body that leaves apiVersion and kind to the endpoint.
    for (index, version) in [(1, json!("policy/v1beta1")), (2, Value::Null)] {
        let path = pod(&server, index);
        let mut body = eviction(&path, json!({"gracePeriodSeconds": 0}));
        body["apiVersion"] = version;
        if body["apiVersion"].is_null() {
            body.as_object_mut().unwrap().remove("kind");
        }
        let (code, answer) = evict(&client, &path, "", &body).await;
        assert_eq!(code, StatusCode::CREATED, "{answer}");
        assert_eq!(client.get(&path).await.0, StatusCode::NOT_FOUND);
    }
}

#[tokio::test]
async fn a_dry_run_eviction_leaves_the_pod_and_a_precondition_is_held() {
    let server = pods();
    let client = Client::new(&server);
    let path = pod(&server, 0);
    let in_query = evict(&client, &path, "?dryRun=All", &eviction(&path, Value::Null)).await;
    let in_options = eviction(&path, json!({"dryRun": ["All"]}));
    let in_body = evict(&client, &path, "", &in_options).await;
    assert_eq!(
        (in_query.0, in_body.0),
        (StatusCode::CREATED, StatusCode::CREATED)
    );
    let (code, live) = client.get(&path).await;
    assert_eq!(code, StatusCode::OK);
    assert!(live["metadata"]["deletionTimestamp"].is_null(), "{live}");
    let stale = eviction(&path, json!({"preconditions": {"uid": "not-its-uid"}}));
    let (code, refused) = evict(&client, &path, "", &stale).await;
    assert_eq!(
        (code, &refused["reason"]),
        (StatusCode::CONFLICT, &json!("Conflict"))
    );
    assert_eq!(client.get(&path).await.0, StatusCode::OK);
}

#[tokio::test]
async fn an_eviction_that_does_not_fit_its_pod_is_refused() {
    let server = pods();
    let client = Client::new(&server);
    let path = pod(&server, 0);
    let other = pod(&server, 1);
    let elsewhere = {
        let mut body = eviction(&path, Value::Null);
        body["metadata"]["namespace"] = json!("somewhere-else");
        body
    };
    let cases = [
        (
            eviction(&other, Value::Null),
            "name in URL does not match name in Eviction object",
        ),
        (
            json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {}}),
            "name in URL does not match name in Eviction object",
        ),
        (
            elsewhere,
            "the namespace of the provided object does not match the namespace sent on the request",
        ),
    ];
    for (body, message) in cases {
        let (code, refused) = evict(&client, &path, "", &body).await;
        assert_eq!(
            (code, &refused["message"]),
            (StatusCode::BAD_REQUEST, &json!(message))
        );
    }
    let pod_body = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}});
    let (code, _) = evict(&client, &path, "", &pod_body).await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    let (code, _) = client
        .raw(
            "POST",
            &format!("{path}/eviction"),
            &[("content-type", JSON)],
            b"garbage".to_vec(),
        )
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    let bad_type = eviction(&path, json!({"gracePeriodSeconds": "soon"}));
    assert_eq!(
        evict(&client, &path, "", &bad_type).await.0,
        StatusCode::BAD_REQUEST
    );
    let (code, _) = client.get(&format!("{path}/eviction")).await;
    assert_eq!(code, StatusCode::METHOD_NOT_ALLOWED);
    // Nothing was deleted.
    assert_eq!(client.get(&path).await.0, StatusCode::OK);
}

#[tokio::test]
async fn discovery_lists_evictions_and_a_server_of_another_kind_has_no_pod_to_evict() {
    let config_maps = ApiServer::new(ObjectSpec {
        kind: ObjectKind::ConfigMap,
        ..ObjectSpec::pods(4)
    });
    let client = Client::new(&config_maps);
    let (_, core) = client.get("/api/v1").await;
    let listed = (core["resources"].as_array().unwrap().iter())
        .find(|r| r["name"] == "pods/eviction")
        .expect("/api/v1 lists pods/eviction");
    assert_eq!(
        (&listed["group"], &listed["kind"], &listed["verbs"]),
        (&json!("policy"), &json!("Eviction"), &json!(["create"]))
    );
    let path = pod(&config_maps, 0);
    let (code, _) = evict(&client, &path, "", &eviction(&path, Value::Null)).await;
    assert_eq!(code, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn an_eviction_in_protobuf_is_read_as_client_go_sends_it() {
    let server = pods();
    let client = Client::new(&server);
    let path = pod(&server, 0);
    let body = crate::protobuf::encode_document(&eviction(&path, json!({"gracePeriodSeconds": 0})))
        .expect("an Eviction encodes");
    let headers = [("content-type", crate::protobuf::MEDIA_TYPE)];
    let (code, answer) = client
        .raw("POST", &format!("{path}/eviction"), &headers, body)
        .await;
    assert_eq!(
        code,
        StatusCode::CREATED,
        "{}",
        String::from_utf8_lossy(&answer)
    );
    assert_eq!(client.get(&path).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn an_evicted_pod_is_marked_a_disruption_target_before_its_deletion() {
    let server = pods();
    // Nothing finishes the deletion: the pod stays for its grace period, as on a cluster.
    server.stand_alone();
    let client = Client::new(&server);
    let path = pod(&server, 0);
    let (_, before) = client.get(&path).await;
    let rv = before["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, list) = client.get("/api/v1/pods").await;
    let listed = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let precondition = eviction(&path, json!({"preconditions": {"resourceVersion": rv}}));
    let (code, answer) = evict(&client, &path, "", &precondition).await;
    assert_eq!(code, StatusCode::CREATED, "{answer}");
    let (_, evicted) = client.get(&path).await;
    assert!(
        evicted["metadata"]["deletionTimestamp"].is_string(),
        "{evicted}"
    );
    assert_eq!(
        evicted["metadata"]["managedFields"],
        before["metadata"]["managedFields"]
    );
    let conditions = evicted["status"]["conditions"].as_array().unwrap();
    let target = conditions.last().unwrap();
    assert_eq!(
        (
            &target["type"],
            &target["status"],
            &target["reason"],
            &target["message"]
        ),
        (
            &json!("DisruptionTarget"),
            &json!("True"),
            &json!("EvictionByEvictionAPI"),
            &json!("Eviction API: evicting")
        )
    );
    assert_eq!(
        conditions.len(),
        before["status"]["conditions"].as_array().unwrap().len() + 1
    );
    // The condition's update, then the graceful deletion's: two MODIFIED events.
    let watch = format!("/api/v1/pods?watch=true&resourceVersion={listed}&timeoutSeconds=1");
    let types: Vec<_> = (client.watch(&watch, JSON).await.iter())
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(types, ["MODIFIED", "MODIFIED"]);
    // Evicted again while terminating: the condition stands as it was, still a 201.
    let (code, _) = evict(&client, &path, "", &eviction(&path, Value::Null)).await;
    assert_eq!(code, StatusCode::CREATED);
    let (_, again) = client.get(&path).await;
    assert_eq!(
        again["status"]["conditions"],
        evicted["status"]["conditions"]
    );
}
