//! Namespaces changed over HTTP as `kubectl label`, `kubectl annotate`, `kubectl apply`
//! (client- and server-side) and `kubectl replace` change them, and as a test suite sets
//! pod-security labels on a namespace, its own or the server's.

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::tests::{NAMESPACES, named, seen};
use crate::generate::namespace;
use crate::records::tests::{Client, JSON, pods};

const MERGE: &str = "application/merge-patch+json";
const STRATEGIC: &str = "application/strategic-merge-patch+json";
const JSON_PATCH: &str = "application/json-patch+json";
const APPLY: &str = "application/apply-patch+yaml";

fn at(name: &str) -> String {
    format!("{NAMESPACES}/{name}")
}

fn version(namespace: &Value) -> u64 {
    let rv = namespace["metadata"]["resourceVersion"].as_str().unwrap();
    rv.parse().unwrap()
}

/// The managedFields entry of `manager`.
fn entry<'v>(namespace: &'v Value, manager: &str) -> &'v Value {
    let entries = namespace["metadata"]["managedFields"].as_array().unwrap();
    let found = entries.iter().find(|e| e["manager"] == manager);
    found.unwrap_or_else(|| panic!("no entry of {manager}: {namespace}"))
}

#[tokio::test]
async fn a_namespace_is_labelled_annotated_and_replaced_as_kubectl_does() {
    let client = Client::new(&pods());
    let (_, made) = client.send("POST", NAMESPACES, JSON, &named("demo")).await;
    let label = json!({"metadata": {"labels": {"team": "a"}}});
    let labelling = format!("{}?fieldManager=kubectl-label", at("demo"));
    let (code, labelled) = client.send("PATCH", &labelling, MERGE, &label).await;
    assert_eq!(code, StatusCode::OK, "{labelled}");
    assert_eq!(labelled["metadata"]["labels"]["team"], "a");
    assert_eq!(labelled["metadata"]["uid"], made["metadata"]["uid"]);
    assert!(version(&labelled) > version(&made));
    assert_eq!(
        entry(&labelled, "kubectl-label")["fieldsV1"],
        json!({"f:metadata": {"f:labels": {"f:team": {}}}})
    );
    let note = json!({"metadata": {"annotations": {"note": "seen"}}});
    let (code, annotated) = client.send("PATCH", &at("demo"), STRATEGIC, &note).await;
    assert_eq!(code, StatusCode::OK, "{annotated}");
    assert_eq!(annotated["metadata"]["labels"]["team"], "a");
    assert_eq!(annotated["metadata"]["annotations"]["note"], "seen");

    // kube-apiserver sets its label again, and keeps the spec and status: the namespace
    // controller's, through /finalize and /status.
    let unlabel =
        json!([{"op": "remove", "path": "/metadata/labels/kubernetes.io~1metadata.name"}]);
    let (code, kept) = client
        .send("PATCH", &at("demo"), JSON_PATCH, &unlabel)
        .await;
    assert_eq!(
        (code, &kept),
        (StatusCode::OK, &annotated),
        "nothing changed"
    );
    let spec =
        json!({"spec": {"finalizers": ["example.com/x"]}, "status": {"phase": "Terminating"}});
    let (_, after) = client.send("PATCH", &at("demo"), MERGE, &spec).await;
    assert_eq!(after["spec"], made["spec"]);
    assert_eq!(after["status"], made["status"]);

    let mut replacement = named("demo");
    replacement["metadata"]["labels"] = json!({"team": "b"});
    let (code, replaced) = client.send("PUT", &at("demo"), JSON, &replacement).await;
    assert_eq!(code, StatusCode::OK, "{replaced}");
    assert_eq!(
        replaced["metadata"]["labels"],
        json!({"kubernetes.io/metadata.name": "demo", "team": "b"})
    );
    assert!(replaced["metadata"]["annotations"].is_null(), "{replaced}");
    for kept in ["uid", "creationTimestamp"] {
        assert_eq!(replaced["metadata"][kept], made["metadata"][kept], "{kept}");
    }
    let (_, got) = client.get(&at("demo")).await;
    assert_eq!(got, replaced);
}

#[tokio::test]
async fn an_update_that_changes_nothing_takes_no_version_and_bad_ones_are_refused() {
    let client = Client::new(&pods());
    let (_, made) = client.send("POST", NAMESPACES, JSON, &named("demo")).await;
    let label = json!({"metadata": {"labels": {"team": "a"}}});
    let (_, once) = client.send("PATCH", &at("demo"), MERGE, &label).await;
    let (code, twice) = client.send("PATCH", &at("demo"), MERGE, &label).await;
    assert_eq!(
        (code, &twice),
        (StatusCode::OK, &once),
        "no write, no version"
    );

    let stale = json!({"metadata": {"resourceVersion": made["metadata"]["resourceVersion"],
                                    "labels": {"team": "b"}}});
    let (code, conflict) = client.send("PATCH", &at("demo"), MERGE, &stale).await;
    assert_eq!(code, StatusCode::CONFLICT, "{conflict}");
    let (code, _) = client.send("PATCH", &at("nope"), MERGE, &label).await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    let (code, _) = client.send("PUT", &at("nope"), JSON, &named("nope")).await;
    assert_eq!(code, StatusCode::NOT_FOUND, "no create on update");
    let (code, other) = client.send("PUT", &at("demo"), JSON, &named("other")).await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{other}");
    let bad = json!({"metadata": {"labels": {"team": "not valid!"}}});
    let (code, invalid) = client.send("PATCH", &at("demo"), MERGE, &bad).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{invalid}");
    assert!(
        (invalid["message"].as_str().unwrap()).starts_with(r#"Namespace "demo" is invalid"#),
        "{invalid}"
    );
    let dry = json!({"metadata": {"labels": {"dry": "run"}}});
    let dry_run = format!("{}?dryRun=All", at("demo"));
    let (code, answered) = client.send("PATCH", &dry_run, MERGE, &dry).await;
    assert_eq!(
        (code, &answered["metadata"]["labels"]["dry"]),
        (StatusCode::OK, &json!("run"))
    );
    let (_, got) = client.get(&at("demo")).await;
    assert_eq!(got, once, "a dry run changes nothing");
}

#[tokio::test]
async fn the_servers_own_namespaces_take_labels_and_stay() {
    let server = pods();
    let client = Client::new(&server);
    let objects = namespace(server.spec(), 0);
    let privileged =
        json!({"metadata": {"labels": {"pod-security.kubernetes.io/enforce": "privileged"}}});
    for name in ["default", objects.as_str()] {
        let (code, labelled) = client.send("PATCH", &at(name), MERGE, &privileged).await;
        assert_eq!(code, StatusCode::OK, "{name}: {labelled}");
        let (_, got) = client.get(&at(name)).await;
        assert_eq!(got, labelled, "{name}");
        let (code, _) = client.send("DELETE", &at(name), JSON, &Value::Null).await;
        assert_eq!(code, StatusCode::FORBIDDEN, "{name} stays");
    }
    let (_, list) = client.get(NAMESPACES).await;
    let names: Vec<&str> = (list["items"].as_array().unwrap().iter())
        .filter_map(|n| n["metadata"]["name"].as_str())
        .collect();
    assert_eq!(
        names.iter().filter(|n| **n == "default").count(),
        1,
        "{names:?}"
    );
    let pods_in = format!("{}/pods", at(&objects));
    let (_, pods) = client.get(&pods_in).await;
    assert!(
        !pods["items"].as_array().unwrap().is_empty(),
        "its objects are still there"
    );
}

#[tokio::test]
async fn server_side_apply_creates_then_updates_a_namespace() {
    let client = Client::new(&pods());
    let config = |team: &str| {
        json!({"apiVersion": "v1", "kind": "Namespace",
               "metadata": {"name": "applied", "labels": {"team": team}}})
    };
    let applying = |manager: &str| format!("{}?fieldManager={manager}", at("applied"));
    let (code, made) = client
        .send("PATCH", &applying("ci"), APPLY, &config("a"))
        .await;
    assert_eq!(code, StatusCode::CREATED, "{made}");
    assert_eq!(made["status"]["phase"], "Active");
    assert_eq!(
        made["metadata"]["labels"]["kubernetes.io/metadata.name"],
        "applied"
    );
    assert_eq!(
        entry(&made, "ci")["fieldsV1"],
        json!({"f:metadata": {"f:labels": {"f:team": {}}}}),
        "the applier owns what it applied"
    );
    let (code, again) = client
        .send("PATCH", &applying("ci"), APPLY, &config("a"))
        .await;
    assert_eq!((code, &again), (StatusCode::OK, &made), "applied as it is");
    let (code, conflict) = client
        .send("PATCH", &applying("other"), APPLY, &config("b"))
        .await;
    assert_eq!(code, StatusCode::CONFLICT, "{conflict}");
    let forcing = format!("{}&force=true", applying("other"));
    let (code, forced) = client.send("PATCH", &forcing, APPLY, &config("b")).await;
    assert_eq!(
        (code, &forced["metadata"]["labels"]["team"]),
        (StatusCode::OK, &json!("b"))
    );
    let (code, _) = client
        .send("PATCH", &at("applied"), APPLY, &config("c"))
        .await;
    assert_eq!(
        code,
        StatusCode::UNPROCESSABLE_ENTITY,
        "an apply names its manager"
    );
}

#[tokio::test]
async fn a_namespace_watch_sees_updates_and_labels_moving_it_in_and_out() {
    let client = Client::new(&pods());
    let (_, list) = client.get(NAMESPACES).await;
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut labelled = named("demo");
    labelled["metadata"]["labels"] = json!({"team": "a"});
    client.send("POST", NAMESPACES, JSON, &labelled).await;
    for team in ["b", "a"] {
        let label = json!({"metadata": {"labels": {"team": team}}});
        let (code, _) = client.send("PATCH", &at("demo"), MERGE, &label).await;
        assert_eq!(code, StatusCode::OK);
    }
    let note = json!({"metadata": {"annotations": {"note": "seen"}}});
    client.send("PATCH", &at("demo"), MERGE, &note).await;
    let query = format!("watch=true&resourceVersion={rv}&labelSelector=team%3Da&timeoutSeconds=1");
    let events = client.watch(&format!("{NAMESPACES}?{query}"), JSON).await;
    assert_eq!(
        seen(&events),
        [
            ("ADDED", "demo", "Active"),
            ("DELETED", "demo", "Active"),
            ("ADDED", "demo", "Active"),
            ("MODIFIED", "demo", "Active"),
        ]
    );
    assert_eq!(
        events[1]["object"]["metadata"]["labels"]["team"], "b",
        "as it left"
    );
    assert_eq!(
        events[3]["object"]["metadata"]["annotations"]["note"],
        "seen"
    );
}
