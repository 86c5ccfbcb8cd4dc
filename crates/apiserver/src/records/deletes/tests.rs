//! Deleting records with finalizers, and with the garbage collector's policies, as
//! kube-apiserver v1.37.2 answers the same requests (crosscheck's `records-finalizer-*`
//! and `batch-job-delete-*` requests hold the two servers to each other).

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::records::tests::{Client, JSON, pods};

const CONFIG_MAPS: &str = "/api/v1/namespaces/default/configmaps";
const JOBS: &str = "/apis/batch/v1/namespaces/default/jobs";
const EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/default/events";
const MERGE: &str = "application/merge-patch+json";

fn config_map(name: &str, finalizers: &[&str]) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "labels": {"app": "web"}, "finalizers": finalizers},
           "data": {"k": "v"}})
}

/// What `kubectl create job NAME --image=busybox` sends.
fn job(name: &str) -> Value {
    json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
           "spec": {"template": {"spec": {
               "containers": [{"name": name, "image": "busybox"}],
               "restartPolicy": "Never"}}}})
}

async fn create(client: &Client, collection: &str, body: &Value) -> Value {
    let (code, created) = client.send("POST", collection, JSON, body).await;
    assert_eq!(code, StatusCode::CREATED, "{created}");
    created
}

async fn delete(client: &Client, uri: &str) -> (StatusCode, Value) {
    client.send("DELETE", uri, JSON, &Value::Null).await
}

fn finalizers(object: &Value) -> Vec<&str> {
    let listed = object["metadata"]["finalizers"].as_array().into_iter();
    listed.flatten().filter_map(Value::as_str).collect()
}

#[tokio::test]
async fn a_record_with_a_finalizer_stays_marked_until_an_update_empties_them() {
    let client = Client::new(&pods());
    let created = create(
        &client,
        CONFIG_MAPS,
        &config_map("held", &["example.com/hold"]),
    )
    .await;
    let at = created["metadata"]["resourceVersion"]
        .as_str()
        .expect("a version");
    let uri = format!("{CONFIG_MAPS}/held");

    let (code, marked) = delete(&client, &uri).await;
    assert_eq!(code, StatusCode::OK, "{marked}");
    assert_eq!(
        marked["kind"], "ConfigMap",
        "the object, not a Status: {marked}"
    );
    assert!(
        marked["metadata"]["deletionTimestamp"].is_string(),
        "{marked}"
    );
    assert_eq!(marked["metadata"]["deletionGracePeriodSeconds"], 0);
    assert_eq!(finalizers(&marked), ["example.com/hold"]);
    let (code, live) = client.get(&uri).await;
    assert_eq!((code, &live), (StatusCode::OK, &marked));
    // A second DELETE changes nothing and answers the same.
    assert_eq!(
        delete(&client, &uri).await,
        (StatusCode::OK, marked.clone())
    );

    let added = json!({"metadata": {"finalizers": ["example.com/hold", "example.com/more"]}});
    let (code, refused) = client.send("PATCH", &uri, MERGE, &added).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    let message = refused["message"].as_str().expect("a message");
    assert!(
        message.contains(
            "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"example.com/more\"}"
        ),
        "{message}"
    );
    let started = json!({"metadata": {"deletionGracePeriodSeconds": 30}});
    let (code, refused) = client.send("PATCH", &uri, MERGE, &started).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");

    let emptied = json!({"metadata": {"finalizers": null}});
    let (code, last) = client.send("PATCH", &uri, MERGE, &emptied).await;
    assert_eq!(code, StatusCode::OK, "{last}");
    assert!(
        finalizers(&last).is_empty(),
        "the object the update made: {last}"
    );
    assert_eq!(client.get(&uri).await.0, StatusCode::NOT_FOUND);

    let watch = format!("{CONFIG_MAPS}?watch=1&resourceVersion={at}&timeoutSeconds=1");
    let events = client.watch(&watch, JSON).await;
    let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(types, ["MODIFIED", "DELETED"], "{events:?}");
    let gone = &events[1]["object"];
    assert_eq!(
        finalizers(gone),
        ["example.com/hold"],
        "as it was kept: {gone}"
    );
}

#[tokio::test]
async fn a_job_deleted_without_a_policy_orphans_its_pods_until_the_collector_has_been() {
    // In a cluster, the garbage collector takes the `orphan` finalizer away at once.
    let client = Client::new(&pods());
    let created = create(&client, JOBS, &job("pi")).await;
    let at = created["metadata"]["resourceVersion"]
        .as_str()
        .expect("a version");
    let (code, orphaning) = delete(&client, &format!("{JOBS}/pi")).await;
    assert_eq!(code, StatusCode::OK, "{orphaning}");
    assert_eq!(finalizers(&orphaning), ["orphan"]);
    assert!(orphaning["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(
        client.get(&format!("{JOBS}/pi")).await.0,
        StatusCode::NOT_FOUND
    );
    let watch = format!("{JOBS}?watch=1&resourceVersion={at}&timeoutSeconds=1");
    let events = client.watch(&watch, JSON).await;
    let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    // The collector's update empties the finalizers, so the Job goes as it was kept.
    assert_eq!(types, ["MODIFIED", "DELETED"], "{events:?}");
    assert_eq!(finalizers(&events[1]["object"]), ["orphan"]);

    // kube-apiserver alone keeps it, marked, as long as nobody removes the finalizer.
    let server = pods();
    server.stand_alone();
    let alone = Client::new(&server);
    create(&alone, JOBS, &job("pi")).await;
    let (code, orphaning) = delete(&alone, &format!("{JOBS}/pi")).await;
    assert_eq!(
        (code, finalizers(&orphaning)),
        (StatusCode::OK, vec!["orphan"])
    );
    let (code, live) = alone.get(&format!("{JOBS}/pi")).await;
    assert_eq!((code, finalizers(&live)), (StatusCode::OK, vec!["orphan"]));

    // A policy of background deletion asks for no finalizer: the Job goes at once.
    create(&alone, JOBS, &job("now")).await;
    let background = format!("{JOBS}/now?propagationPolicy=Background");
    let (code, status) = delete(&alone, &background).await;
    assert_eq!(code, StatusCode::OK, "{status}");
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["details"]["group"], "batch");
    assert_eq!(
        alone.get(&format!("{JOBS}/now")).await.0,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn the_policies_ask_for_the_collectors_finalizers_but_of_an_event() {
    let server = pods();
    server.stand_alone();
    let client = Client::new(&server);
    create(&client, CONFIG_MAPS, &config_map("front", &[])).await;
    let foreground = format!("{CONFIG_MAPS}/front?propagationPolicy=Foreground");
    let (code, marked) = delete(&client, &foreground).await;
    assert_eq!(
        (code, finalizers(&marked)),
        (StatusCode::OK, vec!["foregroundDeletion"])
    );

    // orphanDependents=false asks for a cascade: 202 while the record stays.
    create(
        &client,
        CONFIG_MAPS,
        &config_map("kept", &["example.com/hold"]),
    )
    .await;
    let cascade = format!("{CONFIG_MAPS}/kept?orphanDependents=false");
    let (code, marked) = delete(&client, &cascade).await;
    assert_eq!(
        (code, finalizers(&marked)),
        (StatusCode::ACCEPTED, vec!["example.com/hold"])
    );

    // An Event's registry has no garbage collection: it goes whatever the policy.
    let event = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "e"}, "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "example.com/c", "reportingInstance": "c-1",
        "action": "Sync", "reason": "Synced", "type": "Normal",
        "regarding": {"kind": "Pod", "namespace": "default", "name": "p"}});
    create(&client, EVENTS, &event).await;
    let orphan = format!("{EVENTS}/e?propagationPolicy=Orphan");
    let (code, status) = delete(&client, &orphan).await;
    assert_eq!(
        (code, &status["kind"]),
        (StatusCode::OK, &json!("Status")),
        "{status}"
    );
    assert_eq!(
        client.get(&format!("{EVENTS}/e")).await.0,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn a_collection_delete_marks_what_has_finalizers_and_lists_them_as_they_were() {
    let client = Client::new(&pods());
    create(
        &client,
        CONFIG_MAPS,
        &config_map("held", &["example.com/hold"]),
    )
    .await;
    create(&client, CONFIG_MAPS, &config_map("free", &[])).await;
    let (code, listed) = delete(&client, &format!("{CONFIG_MAPS}?labelSelector=app%3Dweb")).await;
    assert_eq!(code, StatusCode::OK, "{listed}");
    let items = listed["items"].as_array().expect("a list");
    let names: Vec<&str> = (items.iter())
        .filter_map(|i| i["metadata"]["name"].as_str())
        .collect();
    assert_eq!(names, ["free", "held"]);
    assert!(
        items
            .iter()
            .all(|i| i["metadata"]["deletionTimestamp"].is_null())
    );
    let (_, left) = client.get(CONFIG_MAPS).await;
    let left = left["items"].as_array().expect("a list");
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0]["metadata"]["name"], "held");
    assert!(left[0]["metadata"]["deletionTimestamp"].is_string());
}
