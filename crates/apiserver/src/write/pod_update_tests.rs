//! What an update may change in a Pod's spec (`ValidatePodUpdate`), and its tolerations
//! (`ValidateTolerations`); crosscheck holds the same requests to kube-apiserver.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::ApiServer;
use crate::routes::request as send;

const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";
const JSON_PATCH: &str = "application/json-patch+json";
const WEB: &str = "/api/v1/namespaces/default/pods/web";

/// POSTs `pod` to the default namespace.
async fn create(server: &ApiServer, pod: &Value) -> (StatusCode, Value) {
    let pods = "/api/v1/namespaces/default/pods";
    send(server, "POST", pods, JSON, &pod.to_string()).await
}

async fn server_with_web() -> ApiServer {
    let server = ApiServer::new(crate::generate::test_spec());
    let web = json!({"metadata": {"name": "web"},
                     "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx:1.27"}]}});
    let (code, _) = create(&server, &web).await;
    assert_eq!(code, StatusCode::CREATED);
    server
}

fn fields(refused: &Value) -> Vec<&str> {
    let causes = refused["details"]["causes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    causes
        .iter()
        .map(|c| c["field"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn an_update_may_change_images_deadlines_and_add_tolerations_only() {
    let server = server_with_web().await;
    for (content_type, patch, allowed, field) in [
        (
            MERGE,
            r#"{"spec":{"containers":[{"name":"c","image":"nginx:1.28"}]}}"#,
            true,
            "",
        ),
        (
            MERGE,
            r#"{"spec":{"restartPolicy":"Never"}}"#,
            false,
            "spec",
        ),
        (
            MERGE,
            r#"{"spec":{"containers":[{"name":"c","image":"a"},{"name":"d","image":"b"}]}}"#,
            false,
            "spec.containers",
        ),
        (MERGE, r#"{"spec":{"activeDeadlineSeconds":100}}"#, true, ""),
        (
            MERGE,
            r#"{"spec":{"activeDeadlineSeconds":200}}"#,
            false,
            "spec.activeDeadlineSeconds",
        ),
        (
            JSON_PATCH,
            r#"[{"op":"add","path":"/spec/tolerations/-","value":{"key":"spot","operator":"Exists"}}]"#,
            true,
            "",
        ),
        (
            JSON_PATCH,
            r#"[{"op":"replace","path":"/spec/tolerations/0/tolerationSeconds","value":60}]"#,
            true,
            "",
        ),
        (
            JSON_PATCH,
            r#"[{"op":"remove","path":"/spec/tolerations/2"}]"#,
            false,
            "spec.tolerations",
        ),
        (
            JSON_PATCH,
            r#"[{"op":"replace","path":"/spec/tolerations/0/effect","value":"NoSchedule"}]"#,
            false,
            "spec.tolerations[0].effect",
        ),
    ] {
        let (code, answer) = send(&server, "PATCH", WEB, content_type, patch).await;
        if allowed {
            assert_eq!(code, StatusCode::OK, "{patch}: {answer}");
        } else {
            assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{patch}");
            assert_eq!(fields(&answer)[0], field, "{patch}: {answer}");
        }
    }
    let (_, web) = send(&server, "GET", WEB, JSON, "").await;
    assert_eq!(web["spec"]["containers"][0]["image"], "nginx:1.28");
    assert_eq!(web["spec"]["activeDeadlineSeconds"], 100);
    assert_eq!(web["spec"]["tolerations"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn tolerations_are_checked_on_create() {
    let server = ApiServer::new(crate::generate::test_spec());
    let pod = json!({"metadata": {"name": "t"},
                     "spec": {"containers": [{"name": "c", "image": "i"}],
                              "tolerations": [{"operator": "Equal", "value": "x"},
                                              {"key": "k", "operator": "Exists", "value": "v"},
                                              {"key": "k", "effect": "NoSchedule", "tolerationSeconds": 5},
                                              {"key": "k", "operator": "Maybe", "effect": "Sometimes"}]}});
    let (code, refused) = create(&server, &pod).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        fields(&refused),
        [
            "spec.tolerations[0].operator",
            "spec.tolerations[1].operator",
            "spec.tolerations[2].effect",
            "spec.tolerations[3].operator",
            "spec.tolerations[3].effect",
        ]
    );
}

#[tokio::test]
async fn an_update_that_changes_nothing_writes_nothing_and_a_taken_name_is_named() {
    let server = server_with_web().await;
    let written = server.resource_version();
    let (_, pod) = send(&server, "GET", WEB, JSON, "").await;
    // The object as read, put back, and a patch of a label it has already: no version,
    // no event, the live object answered (kube-apiserver's storage skips the write).
    let (code, put) = send(&server, "PUT", WEB, JSON, &pod.to_string()).await;
    assert_eq!((code, &put), (StatusCode::OK, &pod));
    let label = r#"{"metadata":{"labels":{"x":"y"}}}"#;
    send(&server, "PATCH", WEB, MERGE, label).await;
    let labelled = server.resource_version();
    assert_eq!(labelled, written + 1);
    let (code, again) = send(&server, "PATCH", WEB, MERGE, label).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(again["metadata"]["resourceVersion"], labelled.to_string());
    assert_eq!(server.resource_version(), labelled);
    // A create of a name that is taken: 409, with the object named in its details.
    let (code, taken) = create(&server, &pod).await;
    assert_eq!(code, StatusCode::CONFLICT);
    assert_eq!(taken["details"]["name"], "web");
    assert_eq!(taken["details"]["kind"], "pods");
}
