//! Namespaces over HTTP as kubectl (`create namespace`, `delete namespace`) and a test
//! suite that makes a namespace of its own use them.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::generate::namespace;
use crate::records::tests::{Client, JSON, pods, recorded};
use crate::routes::router;

pub(super) const NAMESPACES: &str = "/api/v1/namespaces";

pub(super) fn named(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
}

fn pod(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
}

#[tokio::test]
async fn a_created_namespace_is_kept_as_kube_apiserver_keeps_it_and_takes_writes() {
    let client = Client::new(&pods());
    let (code, made) = client.send("POST", NAMESPACES, JSON, &named("demo")).await;
    assert_eq!(code, StatusCode::CREATED, "{made}");
    assert_eq!(
        made["metadata"]["labels"]["kubernetes.io/metadata.name"],
        "demo"
    );
    assert_eq!(made["spec"], json!({"finalizers": ["kubernetes"]}));
    assert_eq!(made["status"], json!({"phase": "Active"}));
    let managed = &made["metadata"]["managedFields"][0];
    assert_eq!(
        managed["fieldsV1"],
        json!({"f:metadata": {"f:labels": {".": {}, "f:kubernetes.io/metadata.name": {}}}}),
        "the label is defaulted before the writer's fields are taken"
    );
    assert!(
        made["metadata"]["uid"]
            .as_str()
            .is_some_and(|u| u.len() == 36)
    );
    let (code, got) = client.get(&format!("{NAMESPACES}/demo")).await;
    assert_eq!((code, &got), (StatusCode::OK, &made));
    let (_, list) = client.get(NAMESPACES).await;
    let names: Vec<&str> = (list["items"].as_array().unwrap().iter())
        .filter_map(|n| n["metadata"]["name"].as_str())
        .collect();
    assert!(names.contains(&"demo"), "{names:?}");
    let pods_in = format!("{NAMESPACES}/demo/pods");
    let (code, _) = client.send("POST", &pods_in, JSON, &pod("web")).await;
    assert_eq!(code, StatusCode::CREATED);
    let (code, again) = client.send("POST", NAMESPACES, JSON, &named("demo")).await;
    assert_eq!(code, StatusCode::CONFLICT);
    assert_eq!(again["message"], r#"namespaces "demo" already exists"#);
    assert_eq!(again["details"]["kind"], "namespaces");
    let objects = namespace(&pods().spec().clone(), 0);
    let (code, taken) = client
        .send("POST", NAMESPACES, JSON, &named(&objects))
        .await;
    assert_eq!(
        code,
        StatusCode::CONFLICT,
        "the objects' namespace: {taken}"
    );
}

#[tokio::test]
async fn a_deleted_namespace_answers_terminating_then_is_gone_with_what_was_in_it() {
    let client = Client::new(&pods());
    client.send("POST", NAMESPACES, JSON, &named("demo")).await;
    let pods_in = format!("{NAMESPACES}/demo/pods");
    client.send("POST", &pods_in, JSON, &pod("web")).await;
    let events_in = format!("{NAMESPACES}/demo/events");
    let event = recorded("web.1", "demo", "web");
    let (code, _) = client.send("POST", &events_in, JSON, &event).await;
    assert_eq!(code, StatusCode::CREATED);
    let (code, deleted) = client
        .send("DELETE", &format!("{NAMESPACES}/demo"), JSON, &Value::Null)
        .await;
    assert_eq!(code, StatusCode::OK, "{deleted}");
    assert_eq!(deleted["status"]["phase"], "Terminating");
    assert!(deleted["metadata"]["deletionTimestamp"].is_string());
    let (code, _) = client.get(&format!("{NAMESPACES}/demo")).await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    let (_, left) = client.get(&format!("{NAMESPACES}/demo/pods")).await;
    assert_eq!(left["items"], json!([]), "its pods went");
    let (_, left) = client.get(&events_in).await;
    assert_eq!(left["items"], json!([]), "its events went");
    let (code, _) = client.send("POST", &pods_in, JSON, &pod("web")).await;
    assert_eq!(code, StatusCode::NOT_FOUND, "no namespace to write into");
    let (code, made) = client.send("POST", NAMESPACES, JSON, &named("demo")).await;
    assert_eq!(code, StatusCode::CREATED, "made again: {made}");
    assert_ne!(made["metadata"]["uid"], deleted["metadata"]["uid"]);
}

#[tokio::test]
async fn namespaces_are_refused_in_kube_apiservers_words() {
    let server = pods();
    let client = Client::new(&server);
    let (code, bad) = client.send("POST", NAMESPACES, JSON, &named("a.b")).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        bad["message"],
        r#"Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": must not contain dots"#,
        "{bad}"
    );
    let (code, _) = client
        .send("POST", NAMESPACES, JSON, &json!({"metadata": {}}))
        .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    let delete = |name: &str| format!("{NAMESPACES}/{name}");
    let (code, kept) = client
        .send("DELETE", &delete("default"), JSON, &Value::Null)
        .await;
    assert_eq!(code, StatusCode::FORBIDDEN);
    assert_eq!(
        kept["message"],
        r#"namespaces "default" is forbidden: this namespace may not be deleted"#
    );
    let objects = namespace(server.spec(), 0);
    let (code, _) = client
        .send("DELETE", &delete(&objects), JSON, &Value::Null)
        .await;
    assert_eq!(code, StatusCode::FORBIDDEN, "the objects' namespace stays");
    let (code, _) = client
        .send("DELETE", &delete("nope"), JSON, &Value::Null)
        .await;
    assert_eq!(code, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn generate_name_and_dry_run_are_honoured() {
    let client = Client::new(&pods());
    let generated = json!({"metadata": {"generateName": "e2e-"}});
    let (code, made) = client.send("POST", NAMESPACES, JSON, &generated).await;
    assert_eq!(code, StatusCode::CREATED);
    let name = made["metadata"]["name"].as_str().unwrap();
    assert!(name.starts_with("e2e-") && name.len() == 9, "{name}");
    let dry = format!("{NAMESPACES}?dryRun=All");
    let (code, answered) = client.send("POST", &dry, JSON, &named("dry")).await;
    assert_eq!(
        (code, &answered["metadata"]["name"]),
        (StatusCode::CREATED, &json!("dry"))
    );
    let (code, _) = client.get(&format!("{NAMESPACES}/dry")).await;
    assert_eq!(code, StatusCode::NOT_FOUND, "a dry run keeps nothing");
    let dry_delete = format!("{NAMESPACES}/{name}?dryRun=All");
    let (code, _) = client.send("DELETE", &dry_delete, JSON, &Value::Null).await;
    assert_eq!(code, StatusCode::OK);
    let (code, _) = client.get(&format!("{NAMESPACES}/{name}")).await;
    assert_eq!(code, StatusCode::OK, "a dry run deletes nothing");
}

#[tokio::test]
async fn in_process_the_namespaces_stay_read_only() {
    use tower::ServiceExt;
    let request = axum::http::Request::post(NAMESPACES)
        .header("content-type", JSON)
        .body(axum::body::Body::from(named("demo").to_string()))
        .unwrap();
    let response = router(pods()).oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn a_namespace_is_created_in_protobuf_as_client_go_may_send_it() {
    use crate::protobuf::{self, MEDIA_TYPE};
    let client = Client::new(&pods());
    let body = protobuf::encode_json(named("pb").to_string().as_bytes()).unwrap();
    let headers = [("content-type", MEDIA_TYPE), ("accept", JSON)];
    let (code, bytes) = client.raw("POST", NAMESPACES, &headers, body).await;
    let made: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(code, StatusCode::CREATED, "{made}");
    assert_eq!(made["status"]["phase"], "Active");
}

#[tokio::test]
async fn namespaces_are_listed_by_label_and_field_selectors() {
    let client = Client::new(&pods());
    let mut labelled = named("demo");
    labelled["metadata"]["labels"] = json!({"team": "a"});
    client.send("POST", NAMESPACES, JSON, &labelled).await;
    let names = |list: &Value| -> Vec<String> {
        (list["items"].as_array().unwrap().iter())
            .map(|n| n["metadata"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let (_, by_label) = client
        .get(&format!("{NAMESPACES}?labelSelector=team%3Da"))
        .await;
    assert_eq!(names(&by_label), ["demo"]);
    let name = "kubernetes.io%2Fmetadata.name%3Ddefault";
    let (_, by_its_name_label) = client
        .get(&format!("{NAMESPACES}?labelSelector={name}"))
        .await;
    assert_eq!(names(&by_its_name_label), ["default"]);
    let (_, by_field) = client
        .get(&format!(
            "{NAMESPACES}?fieldSelector=metadata.name%21%3Ddemo"
        ))
        .await;
    assert!(!names(&by_field).contains(&"demo".to_owned()) && names(&by_field).len() > 3);
    let (_, active) = client
        .get(&format!("{NAMESPACES}?fieldSelector=status.phase%3DActive"))
        .await;
    assert!(names(&active).contains(&"demo".to_owned()));
    let (code, _) = client
        .get(&format!("{NAMESPACES}?fieldSelector=spec.x%3Dy"))
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
}

/// Each watch event as its type, its namespace's name and phase.
pub(super) fn seen(events: &[Value]) -> Vec<(&str, &str, &str)> {
    fn text(v: &Value) -> &str {
        v.as_str().unwrap_or_default()
    }
    (events.iter())
        .map(|e| {
            let object = &e["object"];
            let phase = text(&object["status"]["phase"]);
            (text(&e["type"]), text(&object["metadata"]["name"]), phase)
        })
        .collect()
}

#[tokio::test]
async fn a_namespace_informer_lists_then_watches_creates_and_deletes() {
    let client = Client::new(&pods());
    let (_, list) = client.get(NAMESPACES).await;
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    client.send("POST", NAMESPACES, JSON, &named("demo")).await;
    // A record written between is not a namespace's change.
    let leases = "/apis/coordination.k8s.io/v1/namespaces/demo/leases";
    let lease = json!({"metadata": {"name": "l"}, "spec": {"holderIdentity": "me"}});
    let (code, _) = client.send("POST", leases, JSON, &lease).await;
    assert_eq!(code, StatusCode::CREATED);
    let (_, deleted) = client
        .send("DELETE", &format!("{NAMESPACES}/demo"), JSON, &Value::Null)
        .await;
    let from_list = format!("{NAMESPACES}?watch=true&resourceVersion={rv}&timeoutSeconds=1");
    let events = client.watch(&from_list, JSON).await;
    assert_eq!(
        seen(&events),
        [
            ("ADDED", "demo", "Active"),
            ("MODIFIED", "demo", "Terminating"),
            ("MODIFIED", "demo", "Terminating"),
            ("DELETED", "demo", "Terminating"),
        ],
        "the DELETE, the controller's conditions, then gone"
    );
    assert_eq!(
        events[1]["object"], deleted,
        "the DELETE's answer is the change"
    );
    let version = |e: &Value| -> u64 {
        e["object"]["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(version(&events[0]) < version(&events[1]));
    assert!(
        version(&events[1]) + 1 < version(&events[2]),
        "the lease's deletion between"
    );
    let conditions = &events[2]["object"]["status"]["conditions"];
    assert_eq!(conditions.as_array().map(Vec::len), Some(5), "{conditions}");
    assert!(
        conditions
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["status"] == "False"),
        "nothing left: {conditions}"
    );
    assert_eq!(
        events[3]["object"]["spec"],
        json!({"finalizers": ["kubernetes"]}),
        "gone as it was last kept (its finalize's update deletes it)"
    );
    assert_eq!(events[3]["object"]["status"], events[2]["object"]["status"]);
    let (_, after) = client.get(NAMESPACES).await;
    let newest = after["metadata"]["resourceVersion"].as_str().unwrap();
    assert_eq!(
        newest,
        version(&events[3]).to_string(),
        "the list meets the watch"
    );
}

#[tokio::test]
async fn a_namespace_watch_starts_with_those_selected_and_ends_watch_list_with_a_bookmark() {
    let client = Client::new(&pods());
    let mut labelled = named("demo");
    labelled["metadata"]["labels"] = json!({"team": "a"});
    client.send("POST", NAMESPACES, JSON, &labelled).await;
    let query = "watch=true&labelSelector=team%3Da&timeoutSeconds=1";
    let events = client.watch(&format!("{NAMESPACES}?{query}"), JSON).await;
    assert_eq!(seen(&events), [("ADDED", "demo", "Active")]);
    let watch_list = "watch=true&sendInitialEvents=true&allowWatchBookmarks=true\
                      &resourceVersionMatch=NotOlderThan&timeoutSeconds=1\
                      &fieldSelector=metadata.name%3Ddefault";
    let events = client
        .watch(&format!("{NAMESPACES}?{watch_list}"), JSON)
        .await;
    assert_eq!(seen(&events)[0], ("ADDED", "default", "Active"));
    assert_eq!(events[1]["type"], "BOOKMARK");
    assert_eq!(events[1]["object"]["kind"], "Namespace");
    assert_eq!(
        events[1]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io";
    let events = client.watch(&format!("{NAMESPACES}?{query}"), table).await;
    let row = &events[0]["object"]["rows"][0]["cells"];
    assert_eq!((&row[0], &row[1]), (&json!("demo"), &json!("Active")));
    let (code, refused) = client
        .get(&format!(
            "{NAMESPACES}?watch=true&fieldSelector=spec.finalizers%3Dx"
        ))
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{refused}");
}

#[tokio::test]
async fn in_process_namespaces_are_not_watched() {
    use tower::ServiceExt;
    let uri = format!("{NAMESPACES}?watch=true");
    let request = axum::http::Request::get(uri)
        .body(axum::body::Body::empty())
        .unwrap();
    let response = router(pods()).oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
}
