//! Server-side apply over HTTP (`PATCH` with `application/apply-patch+yaml`): an apply
//! creates a missing object, owns what it sets, conflicts with another manager's values
//! until forced, writes a status through the subresource, and stores nothing on a dry run.

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::request;
use crate::ApiServer;
use crate::generate::namespace;
use scenario::{ObjectKind, ObjectSpec};

const APPLY: &str = "application/apply-patch+yaml";
const JSON: &str = "application/json";

/// A server of Deployments, and the collection path of the first one's namespace.
fn deployments() -> (ApiServer, String) {
    let mut spec = ObjectSpec::pods(3);
    spec.kind = ObjectKind::Deployment;
    let collection = ObjectKind::Deployment.collection_path(Some(&namespace(&spec, 0)));
    (ApiServer::new(spec), collection)
}

/// A Deployment named `web` with `replicas`, as YAML (what kubectl sends is JSON, which
/// is YAML too).
fn config(replicas: u32) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: {replicas}\n  selector:\n    matchLabels: {{app: web}}\n  template:\n    metadata:\n      labels: {{app: web}}\n    spec:\n      containers:\n      - {{name: app, image: nginx}}\n"
    )
}

fn managers(object: &Value) -> Vec<(String, String)> {
    let entries = object["metadata"]["managedFields"].as_array().cloned();
    let text = |e: &Value, f: &str| e[f].as_str().unwrap_or_default().to_owned();
    entries
        .unwrap_or_default()
        .iter()
        .map(|e| (text(e, "manager"), text(e, "operation")))
        .collect()
}

#[tokio::test]
async fn an_apply_creates_then_updates_and_conflicts_with_another_manager_until_forced() {
    let (server, collection) = deployments();
    let web = format!("{collection}/web");
    let as_ = |manager: &str| format!("{web}?fieldManager={manager}");

    let (code, made) = request(&server, "PATCH", &as_("alice"), APPLY, &config(2)).await;
    assert_eq!(code, StatusCode::CREATED, "{made}");
    assert_eq!(made["spec"]["replicas"], 2);
    assert_eq!(made["metadata"]["generation"], 1);
    assert_eq!(managers(&made), [("alice".to_owned(), "Apply".to_owned())]);
    assert_eq!(
        made["spec"]["strategy"]["type"], "RollingUpdate",
        "defaulted"
    );

    let (code, again) = request(&server, "PATCH", &as_("alice"), APPLY, &config(3)).await;
    assert_eq!(code, StatusCode::OK, "{again}");
    assert_eq!(
        (&again["spec"]["replicas"], &again["metadata"]["generation"]),
        (&json!(3), &json!(2))
    );

    let bob = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 5}\n";
    let (code, refused) = request(&server, "PATCH", &as_("bob"), APPLY, bob).await;
    assert_eq!(code, StatusCode::CONFLICT, "{refused}");
    assert_eq!(refused["reason"], "Conflict");
    assert_eq!(
        refused["message"],
        "Apply failed with 1 conflict: conflict with \"alice\": .spec.replicas"
    );
    assert_eq!(
        refused["details"]["causes"],
        json!([{"reason": "FieldManagerConflict", "message": "conflict with \"alice\"",
            "field": ".spec.replicas"}])
    );
    let (_, unchanged) = request(&server, "GET", &web, JSON, "").await;
    assert_eq!(
        unchanged["spec"]["replicas"], 3,
        "a conflict stores nothing"
    );

    let forced = format!("{}&force=true", as_("bob"));
    let (code, taken) = request(&server, "PATCH", &forced, APPLY, bob).await;
    assert_eq!(code, StatusCode::OK, "{taken}");
    assert_eq!(taken["spec"]["replicas"], 5);
    let owners: Vec<&Value> = taken["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| !e["fieldsV1"]["f:spec"]["f:replicas"].is_null())
        .map(|e| &e["manager"])
        .collect();
    assert_eq!(owners, [&json!("bob")]);
}

#[tokio::test]
async fn an_apply_to_the_status_owns_the_status_and_a_dry_run_creates_nothing() {
    let (server, collection) = deployments();
    let web = format!("{collection}/web");
    let status =
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nstatus: {replicas: 1}\n";
    let status_path = format!("{web}/status?fieldManager=controller");
    let (code, missing) = request(&server, "PATCH", &status_path, APPLY, status).await;
    assert_eq!(
        code,
        StatusCode::NOT_FOUND,
        "the status path creates nothing: {missing}"
    );

    let dry = format!("{web}?fieldManager=alice&dryRun=All");
    let (code, would) = request(&server, "PATCH", &dry, APPLY, &config(2)).await;
    assert_eq!(code, StatusCode::CREATED, "{would}");
    assert!(
        would["metadata"].get("resourceVersion").is_none(),
        "{would}"
    );
    let (code, _) = request(&server, "GET", &web, JSON, "").await;
    assert_eq!(code, StatusCode::NOT_FOUND, "a dry run stored nothing");

    let created = format!("{web}?fieldManager=alice");
    request(&server, "PATCH", &created, APPLY, &config(2)).await;
    let (code, written) = request(&server, "PATCH", &status_path, APPLY, status).await;
    assert_eq!(code, StatusCode::OK, "{written}");
    assert_eq!(written["status"]["replicas"], 1);
    assert_eq!(written["spec"]["replicas"], 2);
    let entry = written["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "controller")
        .cloned()
        .unwrap();
    assert_eq!(entry["subresource"], "status");
    assert_eq!(entry["fieldsV1"], json!({"f:status": {"f:replicas": {}}}));
}

#[tokio::test]
async fn an_apply_is_refused_as_kube_apiserver_refuses_it() {
    let (server, collection) = deployments();
    let web = format!("{collection}/web");
    let cases = [
        // No manager: 422 naming PatchOptions.
        (
            web.clone(),
            config(1),
            StatusCode::UNPROCESSABLE_ENTITY,
            "Invalid",
        ),
        // A field the schema does not declare: a 500 without a reason, as there.
        (
            format!("{web}?fieldManager=a"),
            config(1).replace("replicas: 1", "replicas: 1\n  bogus: 1"),
            StatusCode::INTERNAL_SERVER_ERROR,
            "",
        ),
        (
            format!("{web}?fieldManager=a"),
            config(1).replace("apps/v1", "apps/v2"),
            StatusCode::BAD_REQUEST,
            "BadRequest",
        ),
        (
            format!("{web}?fieldManager=a"),
            "not: [yaml".to_owned(),
            StatusCode::BAD_REQUEST,
            "BadRequest",
        ),
        // A selector that does not select the template's labels: validation's 422.
        (
            format!("{web}?fieldManager=a"),
            config(1).replace("matchLabels: {app: web}", "matchLabels: {app: other}"),
            StatusCode::UNPROCESSABLE_ENTITY,
            "Invalid",
        ),
    ];
    for (path, body, code, reason) in cases {
        let (got, status) = request(&server, "PATCH", &path, APPLY, &body).await;
        assert_eq!(got, code, "{path} {body}: {status}");
        assert_eq!(
            status["reason"].as_str().unwrap_or_default(),
            reason,
            "{status}"
        );
    }
    let (code, _) = request(&server, "GET", &web, JSON, "").await;
    assert_eq!(code, StatusCode::NOT_FOUND, "nothing refused was stored");
}
