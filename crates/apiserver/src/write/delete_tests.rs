//! DELETE with finalizers, graceful deletion and propagation, as kube-apiserver v1.37
//! answers them (crosscheck holds the same requests to a real one).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::delete::{now, plan};
use super::options::DeleteOptions;
use super::*;
use crate::routes::{request as send, watch_events};
use scenario::ObjectSpec;

const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";
const PODS: &str = "/api/v1/namespaces/default/pods";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

fn server_of(kind: ObjectKind) -> ApiServer {
    ApiServer::new(ObjectSpec {
        kind,
        ..crate::generate::test_spec()
    })
}

/// The types of the events a watch from `rv` on `path` gets, each with its object.
async fn events_since(server: &ApiServer, path: &str, rv: u64) -> Vec<(String, Value)> {
    let uri = format!("{path}?watch=true&resourceVersion={rv}");
    watch_events(server, &uri)
        .await
        .into_iter()
        .map(|e| (e["type"].as_str().unwrap().to_owned(), e["object"].clone()))
        .collect()
}

fn types(events: &[(String, Value)]) -> Vec<&str> {
    events.iter().map(|(t, _)| t.as_str()).collect()
}

fn configmap(name: &str, finalizers: &[&str]) -> String {
    json!({"metadata": {"name": name, "finalizers": finalizers}, "data": {"k": "v"}}).to_string()
}

fn pod(name: &str, node: Option<&str>) -> String {
    let mut pod = json!({
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "app", "image": "app:1"}]},
    });
    if let Some(node) = node {
        pod["spec"]["nodeName"] = json!(node);
    }
    pod.to_string()
}

#[tokio::test]
async fn an_object_with_finalizers_stays_until_an_update_empties_them() {
    let server = server_of(ObjectKind::ConfigMap);
    let before = server.resource_version();
    let (code, _) = send(
        &server,
        "POST",
        CONFIGMAPS,
        JSON,
        &configmap("held", &["example.com/hold"]),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED);
    let path = format!("{CONFIGMAPS}/held");

    let (code, marked) = send(&server, "DELETE", &path, JSON, "").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(
        marked["kind"], "ConfigMap",
        "an object that stays is the answer"
    );
    assert_eq!(marked["metadata"]["deletionGracePeriodSeconds"], 0);
    assert!(
        marked["metadata"]["deletionTimestamp"].is_string(),
        "{marked}"
    );
    let (code, got) = send(&server, "GET", &path, JSON, "").await;
    assert_eq!((code, &got), (StatusCode::OK, &marked));

    // A second DELETE changes nothing: no new version.
    let rv = server.resource_version();
    let (code, again) = send(&server, "DELETE", &path, JSON, "").await;
    assert_eq!((code, &again), (StatusCode::OK, &marked));
    assert_eq!(server.resource_version(), rv);

    // No finalizer may be added now; other updates keep the deletion fields.
    let late = r#"{"metadata":{"finalizers":["example.com/hold","example.com/late"]}}"#;
    let (code, refused) = send(&server, "PATCH", &path, MERGE, late).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        refused["details"]["causes"][0]["reason"],
        "FieldValueForbidden"
    );
    let (code, updated) = send(&server, "PATCH", &path, MERGE, r#"{"data":{"k":"w"}}"#).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(
        updated["metadata"]["deletionTimestamp"],
        marked["metadata"]["deletionTimestamp"]
    );

    let (code, last) = send(
        &server,
        "PATCH",
        &path,
        MERGE,
        r#"{"metadata":{"finalizers":null}}"#,
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    assert!(last["metadata"].get("finalizers").is_none(), "{last}");
    let (code, _) = send(&server, "GET", &path, JSON, "").await;
    assert_eq!(code, StatusCode::NOT_FOUND);

    let events = events_since(&server, CONFIGMAPS, before).await;
    assert_eq!(types(&events), ["ADDED", "MODIFIED", "MODIFIED", "DELETED"]);
    // The object is deleted as stored: its last event still lists the finalizer.
    assert_eq!(
        events[3].1["metadata"]["finalizers"],
        json!(["example.com/hold"])
    );
    assert_eq!(events[3].1["data"]["k"], "w");
}

#[tokio::test]
async fn a_scheduled_pod_is_deleted_gracefully_and_the_kubelet_ends_it() {
    let server = server_of(ObjectKind::Pod);
    send(&server, "POST", PODS, JSON, &pod("web", Some("node-1"))).await;
    let rv = server.resource_version();
    let start = now();
    let (code, deleting) = send(&server, "DELETE", &format!("{PODS}/web"), JSON, "").await;
    assert_eq!(code, StatusCode::OK);
    let meta = &deleting["metadata"];
    // The default terminationGracePeriodSeconds, 30 s from now; the generation moves on.
    assert_eq!(meta["deletionGracePeriodSeconds"], 30);
    let deadline: Time = serde_json::from_value(meta["deletionTimestamp"].clone()).unwrap();
    let ahead = deadline.0.as_second() - start;
    assert!((30..=31).contains(&ahead), "deletion {ahead} s ahead");
    assert_eq!(meta["generation"], 2);
    // The kubelet, with no containers to stop, deleted it with no grace period.
    let (code, _) = send(&server, "GET", &format!("{PODS}/web"), JSON, "").await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    let events = events_since(&server, PODS, rv).await;
    assert_eq!(types(&events), ["MODIFIED", "MODIFIED", "DELETED"]);
    assert_eq!(events[1].1["metadata"]["deletionGracePeriodSeconds"], 0);
}

#[tokio::test]
async fn the_kubelet_writes_a_running_pods_terminal_status_before_it_goes() {
    let server = server_of(ObjectKind::Pod);
    let (_, list) = send(&server, "GET", "/api/v1/pods?limit=1", JSON, "").await;
    let running = &list["items"][0];
    assert_eq!(running["status"]["phase"], "Running");
    let meta = &running["metadata"];
    let path = format!(
        "/api/v1/namespaces/{}/pods/{}",
        meta["namespace"].as_str().unwrap(),
        meta["name"].as_str().unwrap()
    );
    let rv = server.resource_version();
    let (code, _) = send(&server, "DELETE", &path, JSON, "").await;
    assert_eq!(code, StatusCode::OK);
    let namespace = path.rsplit_once("/pods/").unwrap().0.to_owned() + "/pods";
    let events = events_since(&server, &namespace, rv).await;
    assert_eq!(
        types(&events),
        ["MODIFIED", "MODIFIED", "MODIFIED", "DELETED"]
    );
    // The DELETE left the pod running, with its grace period.
    assert_eq!(events[0].1["status"]["phase"], "Running");
    assert_eq!(events[0].1["metadata"]["deletionGracePeriodSeconds"], 30);
    // The kubelet's status: the containers exited, the pod succeeded, and its
    // managedFields entry was written now and owns the new reasons.
    let status = &events[1].1["status"];
    assert_eq!(status["phase"], "Succeeded");
    let container = &status["containerStatuses"][0];
    assert_eq!(container["state"]["terminated"]["reason"], "Completed");
    assert_eq!(container["ready"], false);
    let finished = &container["state"]["terminated"]["finishedAt"];
    let kubelet = events[1].1["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "kubelet")
        .unwrap();
    assert_eq!(&kubelet["time"], finished);
    assert_ne!(
        kubelet["time"],
        running["metadata"]["managedFields"][1]["time"]
    );
    assert!(kubelet["fieldsV1"].to_string().contains(r#""f:reason":{}"#));
    assert_eq!(events[1].1["metadata"]["deletionGracePeriodSeconds"], 30);
    // Then its DELETE with no grace period.
    assert_eq!(events[2].1["metadata"]["deletionGracePeriodSeconds"], 0);
    assert_eq!(events[2].1["status"]["phase"], "Succeeded");
    let (code, _) = send(&server, "GET", &path, JSON, "").await;
    assert_eq!(code, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn standing_alone_a_pod_stays_terminating_until_a_delete_with_no_grace() {
    let server = server_of(ObjectKind::Pod);
    server.stand_alone();
    send(&server, "POST", PODS, JSON, &pod("web", Some("node-1"))).await;
    let path = format!("{PODS}/web");
    let (_, first) = send(&server, "DELETE", &path, JSON, "").await;
    // A DELETE that does not shorten the period answers with the pod and writes nothing.
    let rv = server.resource_version();
    let (code, pending) = send(
        &server,
        "DELETE",
        &format!("{path}?gracePeriodSeconds=60"),
        JSON,
        "",
    )
    .await;
    assert_eq!((code, &pending), (StatusCode::OK, &first));
    assert_eq!(server.resource_version(), rv);
    let (code, gone) = send(
        &server,
        "DELETE",
        &format!("{path}?gracePeriodSeconds=0"),
        JSON,
        "",
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(gone["metadata"]["deletionGracePeriodSeconds"], 0);
    assert_eq!(
        gone["metadata"]["resourceVersion"],
        (rv + 2).to_string(),
        "an update, then the delete"
    );
    let (code, _) = send(&server, "GET", &path, JSON, "").await;
    assert_eq!(code, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn an_unscheduled_pod_goes_at_once_after_an_update() {
    let server = server_of(ObjectKind::Pod);
    server.stand_alone();
    send(&server, "POST", PODS, JSON, &pod("job", None)).await;
    let rv = server.resource_version();
    let (code, gone) = send(&server, "DELETE", &format!("{PODS}/job"), JSON, "").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(gone["metadata"]["deletionGracePeriodSeconds"], 0);
    let events = events_since(&server, PODS, rv).await;
    assert_eq!(types(&events), ["MODIFIED", "DELETED"]);
}

#[tokio::test]
async fn propagation_adds_the_collectors_finalizers() {
    let alone = server_of(ObjectKind::ConfigMap);
    alone.stand_alone();
    for (query, finalizer) in [
        ("propagationPolicy=Orphan", "orphan"),
        ("propagationPolicy=Foreground", "foregroundDeletion"),
        ("orphanDependents=true", "orphan"),
    ] {
        send(&alone, "POST", CONFIGMAPS, JSON, &configmap("c", &[])).await;
        let (code, marked) = send(
            &alone,
            "DELETE",
            &format!("{CONFIGMAPS}/c?{query}"),
            JSON,
            "",
        )
        .await;
        assert_eq!(code, StatusCode::OK, "{query}");
        assert_eq!(
            marked["metadata"]["finalizers"],
            json!([finalizer]),
            "{query}"
        );
        send(
            &alone,
            "PATCH",
            &format!("{CONFIGMAPS}/c"),
            MERGE,
            r#"{"metadata":{"finalizers":null}}"#,
        )
        .await;
    }
    send(
        &alone,
        "POST",
        CONFIGMAPS,
        JSON,
        &configmap("c", &["example.com/hold"]),
    )
    .await;
    let (code, _) = send(
        &alone,
        "DELETE",
        &format!("{CONFIGMAPS}/c?orphanDependents=false"),
        JSON,
        "",
    )
    .await;
    assert_eq!(
        code,
        StatusCode::ACCEPTED,
        "a cascade asked for and not done yet"
    );
    let (code, both) = send(
        &alone,
        "DELETE",
        &format!("{CONFIGMAPS}/c?orphanDependents=true&propagationPolicy=Orphan"),
        JSON,
        "",
    )
    .await;
    assert_eq!(
        (code, &both["reason"]),
        (StatusCode::UNPROCESSABLE_ENTITY, &json!("Invalid"))
    );
}

#[tokio::test]
async fn in_a_cluster_the_collector_removes_its_finalizer_at_once() {
    // With no dependents here, the garbage collector has nothing to wait for.
    let cluster = server_of(ObjectKind::ConfigMap);
    send(&cluster, "POST", CONFIGMAPS, JSON, &configmap("c", &[])).await;
    let rv = cluster.resource_version();
    let (code, marked) = send(
        &cluster,
        "DELETE",
        &format!("{CONFIGMAPS}/c?propagationPolicy=Foreground"),
        JSON,
        "",
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(
        marked["metadata"]["finalizers"],
        json!(["foregroundDeletion"])
    );
    let (code, _) = send(&cluster, "GET", &format!("{CONFIGMAPS}/c"), JSON, "").await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    let events = events_since(&cluster, CONFIGMAPS, rv).await;
    assert_eq!(types(&events), ["MODIFIED", "DELETED"]);
}

#[tokio::test]
async fn delete_collection_leaves_what_finalizers_hold() {
    let server = server_of(ObjectKind::ConfigMap);
    for (name, finalizers) in [("a", vec!["example.com/hold"]), ("b", vec![])] {
        let mut body: Value = serde_json::from_str(&configmap(name, &finalizers)).unwrap();
        body["metadata"]["labels"] = json!({"set": "x"});
        send(&server, "POST", CONFIGMAPS, JSON, &body.to_string()).await;
    }
    let (code, deleted) = send(
        &server,
        "DELETE",
        &format!("{CONFIGMAPS}?labelSelector=set%3Dx"),
        JSON,
        "",
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(
        deleted["items"].as_array().unwrap().len(),
        2,
        "both, as they were"
    );
    let (_, left) = send(
        &server,
        "GET",
        &format!("{CONFIGMAPS}?labelSelector=set%3Dx"),
        JSON,
        "",
    )
    .await;
    let left = left["items"].as_array().unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["metadata"]["name"], "a");
    assert!(left[0]["metadata"]["deletionTimestamp"].is_string());
}

#[tokio::test]
async fn finalizer_names_are_checked_and_deletions_not_started_by_an_update() {
    let server = server_of(ObjectKind::ConfigMap);
    for finalizers in [vec!["not a name"], vec!["orphan", "foregroundDeletion"]] {
        let (code, refused) = send(
            &server,
            "POST",
            CONFIGMAPS,
            JSON,
            &configmap("bad", &finalizers),
        )
        .await;
        assert_eq!(
            code,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{finalizers:?}: {refused}"
        );
    }
    let created = json!({"metadata": {"name": "c", "deletionTimestamp": "2030-01-01T00:00:00Z"}});
    let (code, c) = send(&server, "POST", CONFIGMAPS, JSON, &created.to_string()).await;
    assert_eq!(code, StatusCode::CREATED);
    assert!(
        c["metadata"].get("deletionTimestamp").is_none(),
        "a create starts no deletion"
    );
    let start = r#"{"metadata":{"deletionTimestamp":"2030-01-01T00:00:00Z"}}"#;
    let (code, _) = send(&server, "PATCH", &format!("{CONFIGMAPS}/c"), MERGE, start).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
}

#[test]
fn a_shorter_grace_period_moves_the_deadline_back_never_before_now() {
    let at =
        |second: i64| serde_json::to_value(Time(Timestamp::from_second(second).unwrap())).unwrap();
    let now = 1_800_000_000;
    let terminating = |started: i64| {
        json!({"metadata": {"name": "p", "deletionTimestamp": at(started + 30), "deletionGracePeriodSeconds": 30},
               "spec": {"nodeName": "n"}})
    };
    let options = |grace: i64| DeleteOptions {
        grace_period: Some(grace),
        ..DeleteOptions::default()
    };
    let deletion = |plan: super::delete::Plan| match plan.removal {
        Removal::Store(object) | Removal::StoreThenDelete(object) => (
            object["metadata"]["deletionTimestamp"].clone(),
            object["metadata"]["deletionGracePeriodSeconds"].clone(),
        ),
        other => panic!("{other:?}"),
    };
    // Started 10 s ago with 30 s; 15 s asked: the deadline is 5 s from now.
    let shortened = plan(ObjectKind::Pod, &terminating(now - 10), &options(15), now);
    assert_eq!(deletion(shortened), (at(now + 5), json!(15)));
    // Started 40 s ago: 5 s would be in the past, so now, with a second to go.
    let expired = plan(ObjectKind::Pod, &terminating(now - 40), &options(5), now);
    assert_eq!(deletion(expired), (at(now), json!(1)));
    let pending = plan(ObjectKind::Pod, &terminating(now), &options(30), now);
    assert!(pending.pending && matches!(pending.removal, Removal::Keep));
}
