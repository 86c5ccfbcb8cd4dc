//! A namespace's deletion waiting for what is in it, as kube-apiserver's namespace
//! registry, its `NamespaceLifecycle` admission and kube-controller-manager's namespace
//! controller make it wait: a finalizer on a ConfigMap holds it `Terminating`, no new
//! content gets in meanwhile, and a client's own finalizer in its spec holds it until
//! `/finalize` takes it out.

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::tests::{NAMESPACES, named};
use crate::records::tests::{Client, JSON, pods};

const MERGE: &str = "application/merge-patch+json";

fn config_map(name: &str, finalizers: &[&str]) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "finalizers": finalizers}, "data": {"k": "v"}})
}

/// The namespace's condition of `kind`: its status, reason and message.
fn condition(namespace: &Value, kind: &str) -> (String, String, String) {
    let conditions = namespace["status"]["conditions"].as_array().unwrap();
    let found = conditions.iter().find(|c| c["type"] == kind).unwrap();
    let text = |field: &str| found[field].as_str().unwrap().to_owned();
    (text("status"), text("reason"), text("message"))
}

#[tokio::test]
async fn a_finalizer_in_the_namespace_holds_it_terminating_and_keeps_new_content_out() {
    let client = Client::new(&pods());
    client.send("POST", NAMESPACES, JSON, &named("held")).await;
    let maps = format!("{NAMESPACES}/held/configmaps");
    for map in [
        config_map("held", &["example.com/hold"]),
        config_map("free", &[]),
    ] {
        let (code, made) = client.send("POST", &maps, JSON, &map).await;
        assert_eq!(code, StatusCode::CREATED, "{made}");
    }
    let held = format!("{NAMESPACES}/held");
    let (code, deleted) = client.send("DELETE", &held, JSON, &Value::Null).await;
    assert_eq!(code, StatusCode::OK, "{deleted}");
    assert_eq!(deleted["status"], json!({"phase": "Terminating"}));

    let (code, namespace) = client.get(&held).await;
    assert_eq!(code, StatusCode::OK, "still there: {namespace}");
    assert_eq!(namespace["spec"], json!({"finalizers": ["kubernetes"]}));
    assert_eq!(
        condition(&namespace, "NamespaceContentRemaining"),
        (
            "True".into(),
            "SomeResourcesRemain".into(),
            "Some resources are remaining: configmaps. has 1 resource instances".into()
        )
    );
    assert_eq!(
        condition(&namespace, "NamespaceFinalizersRemaining").2,
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
    );
    assert_eq!(
        condition(&namespace, "NamespaceDeletionContentFailure").0,
        "False"
    );
    assert_eq!(
        client.get(&format!("{maps}/free")).await.0,
        StatusCode::NOT_FOUND
    );
    let (_, marked) = client.get(&format!("{maps}/held")).await;
    assert!(
        marked["metadata"]["deletionTimestamp"].is_string(),
        "{marked}"
    );

    // Nothing new gets in: records, the scenario's objects, a generated name's prefix.
    let (code, refused) = client
        .send("POST", &maps, JSON, &config_map("new", &[]))
        .await;
    assert_eq!(code, StatusCode::FORBIDDEN, "{refused}");
    assert_eq!(
        refused["message"],
        r#"configmaps "new" is forbidden: unable to create new content in namespace held because it is being terminated"#
    );
    assert_eq!(
        refused["details"]["causes"],
        json!([{"reason": "NamespaceTerminating", "message": "namespace held is being terminated",
                "field": "metadata.namespace"}])
    );
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "web-"},
                     "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    let (code, refused) = client
        .send("POST", &format!("{held}/pods"), JSON, &pod)
        .await;
    assert_eq!(code, StatusCode::FORBIDDEN, "{refused}");
    assert_eq!(refused["details"]["name"], "web-");
    // Updates still go through: the one that takes the finalizer out lets it all go.
    let unhold = json!({"metadata": {"finalizers": null}});
    let (code, _) = client
        .send("PATCH", &format!("{maps}/held"), MERGE, &unhold)
        .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(client.get(&held).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_finalizer_of_the_clients_in_its_spec_holds_it_until_finalize_takes_it_out() {
    let client = Client::new(&pods());
    let mut namespace = named("own");
    namespace["spec"] = json!({"finalizers": ["example.com/cleanup"]});
    let (code, made) = client.send("POST", NAMESPACES, JSON, &namespace).await;
    assert_eq!(code, StatusCode::CREATED, "{made}");
    assert_eq!(
        made["spec"]["finalizers"],
        json!(["example.com/cleanup", "kubernetes"])
    );
    let own = format!("{NAMESPACES}/own");
    client.send("DELETE", &own, JSON, &Value::Null).await;
    let (code, left) = client.get(&format!("{own}/status")).await;
    assert_eq!(code, StatusCode::OK, "{left}");
    assert_eq!(
        left["spec"],
        json!({"finalizers": ["example.com/cleanup"]}),
        "the controller's own finalizer done"
    );
    assert_eq!(condition(&left, "NamespaceContentRemaining").0, "False");

    // kubectl replace --raw /api/v1/namespaces/own/finalize, as for a stuck namespace.
    let finalize = format!("{own}/finalize");
    let mut unqualified = left.clone();
    unqualified["spec"]["finalizers"] = json!(["cleanup"]);
    let (code, refused) = client.send("PUT", &finalize, JSON, &unqualified).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    assert_eq!(
        refused["message"],
        r#"Namespace "own" is invalid: spec.finalizers[0]: Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified"#
    );
    assert_eq!(
        client.get(&finalize).await.0,
        StatusCode::METHOD_NOT_ALLOWED
    );
    let mut emptied = left.clone();
    emptied["spec"] = json!({});
    let (code, last) = client.send("PUT", &finalize, JSON, &emptied).await;
    assert_eq!(code, StatusCode::OK, "{last}");
    assert_eq!(last["spec"], json!({}));
    assert_eq!(client.get(&own).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_namespaces_status_is_written_through_its_subresource_only() {
    let client = Client::new(&pods());
    client.send("POST", NAMESPACES, JSON, &named("st")).await;
    let status = format!("{NAMESPACES}/st/status");
    let (code, refused) = client
        .send(
            "PATCH",
            &status,
            MERGE,
            &json!({"status": {"phase": "Terminating"}}),
        )
        .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    assert_eq!(
        refused["message"],
        r#"Namespace "st" is invalid: status.Phase: Invalid value: "Terminating": may only be 'Active' if `deletionTimestamp` is empty"#
    );
    let condition = json!({"type": "Example", "status": "True"});
    let patch = json!({"status": {"conditions": [condition]}, "spec": {"finalizers": []}});
    let (code, written) = client.send("PATCH", &status, MERGE, &patch).await;
    assert_eq!(code, StatusCode::OK, "{written}");
    assert_eq!(written["status"]["conditions"][0]["type"], "Example");
    assert_eq!(
        written["spec"],
        json!({"finalizers": ["kubernetes"]}),
        "the spec is not the status's"
    );
    let entry = written["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .last()
        .cloned();
    assert_eq!(entry.unwrap()["subresource"], "status");
}

#[tokio::test]
async fn stand_alone_an_orphaning_delete_leaves_the_namespace_to_the_collector() {
    let server = pods();
    server.stand_alone();
    let client = Client::new(&server);
    client
        .send("POST", NAMESPACES, JSON, &named("orphans"))
        .await;
    let orphans = format!("{NAMESPACES}/orphans");
    let wrong = json!({"kind": "DeleteOptions", "apiVersion": "v1",
                       "preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}});
    let (code, refused) = client.send("DELETE", &orphans, JSON, &wrong).await;
    assert_eq!(code, StatusCode::CONFLICT, "{refused}");
    let orphan = format!("{orphans}?propagationPolicy=Orphan");
    let (code, marked) = client.send("DELETE", &orphan, JSON, &Value::Null).await;
    assert_eq!(code, StatusCode::OK, "{marked}");
    assert_eq!(marked["metadata"]["finalizers"], json!(["orphan"]));
    let (code, left) = client.get(&orphans).await;
    assert_eq!(code, StatusCode::OK, "no collector here: {left}");
    assert_eq!(left["spec"], json!({}), "the controller's part done");
    let (code, again) = client.send("DELETE", &orphans, JSON, &Value::Null).await;
    assert_eq!((code, &again), (StatusCode::OK, &left), "answered as it is");
    let unorphan = json!({"metadata": {"finalizers": null}});
    let (code, _) = client.send("PATCH", &orphans, MERGE, &unorphan).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(client.get(&orphans).await.0, StatusCode::NOT_FOUND);

    // With a cluster's collector, the same DELETE lets the namespace go at once.
    let cluster = Client::new(&pods());
    cluster
        .send("POST", NAMESPACES, JSON, &named("orphans"))
        .await;
    cluster.send("DELETE", &orphan, JSON, &Value::Null).await;
    assert_eq!(cluster.get(&orphans).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn pods_go_first_and_hold_the_rest_while_they_are_left() {
    let server = pods();
    server.stand_alone();
    let client = Client::new(&server);
    client.send("POST", NAMESPACES, JSON, &named("pods")).await;
    let pods_in = format!("{NAMESPACES}/pods/pods");
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                     "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}]}});
    let (code, made) = client.send("POST", &pods_in, JSON, &pod).await;
    assert_eq!(code, StatusCode::CREATED, "{made}");
    let maps = format!("{NAMESPACES}/pods/configmaps");
    client
        .send("POST", &maps, JSON, &config_map("cm", &[]))
        .await;
    client
        .send("DELETE", &format!("{NAMESPACES}/pods"), JSON, &Value::Null)
        .await;
    // No kubelet ends the scheduled pod's grace period: it is left, and so is the rest.
    let (_, web) = client.get(&format!("{pods_in}/web")).await;
    assert!(web["metadata"]["deletionTimestamp"].is_string(), "{web}");
    assert_eq!(client.get(&format!("{maps}/cm")).await.0, StatusCode::OK);
    let (_, namespace) = client.get(&format!("{NAMESPACES}/pods")).await;
    assert_eq!(
        condition(&namespace, "NamespaceContentRemaining").0,
        "False",
        "the controller writes no totals while pods are left: {namespace}"
    );
    let now = format!("{pods_in}/web?gracePeriodSeconds=0");
    client.send("DELETE", &now, JSON, &Value::Null).await;
    assert_eq!(
        client.get(&format!("{maps}/cm")).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        client.get(&format!("{NAMESPACES}/pods")).await.0,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn a_namespace_finalized_before_its_delete_goes_at_the_second() {
    let client = Client::new(&pods());
    let (_, made) = client.send("POST", NAMESPACES, JSON, &named("bare")).await;
    let bare = format!("{NAMESPACES}/bare");
    let mut emptied = made.clone();
    emptied["spec"] = json!({});
    let (code, finalized) = client
        .send("PUT", &format!("{bare}/finalize"), JSON, &emptied)
        .await;
    assert_eq!((code, &finalized["spec"]), (StatusCode::OK, &json!({})));
    assert_eq!(finalized["status"]["phase"], "Active", "not deleted by it");
    client.send("DELETE", &bare, JSON, &Value::Null).await;
    let (code, left) = client.get(&bare).await;
    assert_eq!(
        code,
        StatusCode::OK,
        "no controller's finalizer to take out: {left}"
    );
    assert_eq!(left["status"]["phase"], "Terminating");
    assert!(
        left["status"]["conditions"].is_null(),
        "the controller does not pass"
    );
    let (code, deleted) = client.send("DELETE", &bare, JSON, &Value::Null).await;
    assert_eq!(
        (code, &deleted),
        (StatusCode::OK, &left),
        "answered as it was kept"
    );
    assert_eq!(client.get(&bare).await.0, StatusCode::NOT_FOUND);
}
