//! The reviews over HTTP, as kubectl (`auth whoami`, `auth can-i`) and a program that
//! checks its permissions send them, in JSON and in protobuf.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::ApiServer;
use crate::protobuf;
use crate::routes::network_router;
use scenario::ObjectSpec;

const AUTHORIZATION: &str = "/apis/authorization.k8s.io/v1";

/// Sends `body` (JSON, or protobuf when `protobuf`) to `uri`; the answer as JSON.
async fn post(uri: &str, body: &Value, protobuf: bool) -> (StatusCode, Value) {
    let router = network_router(ApiServer::new(ObjectSpec::pods(2)));
    let (media, bytes) = match protobuf {
        true => (
            protobuf::MEDIA_TYPE,
            protobuf::encode_json(body.to_string().as_bytes()).expect("a review encodes"),
        ),
        false => ("application/json", body.to_string().into_bytes()),
    };
    let request = Request::builder()
        .method("POST")
        .uri(uri)
        .header(header::CONTENT_TYPE, media)
        .header(header::ACCEPT, media)
        .header(
            header::USER_AGENT,
            "kubectl/v1.32.4 (linux/amd64) kubernetes/abc",
        )
        .body(Body::from(bytes))
        .expect("a test request is well-formed");
    let response = router.oneshot(request).await.expect("infallible");
    let code = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("a body in memory reads");
    let answer = match protobuf && code == StatusCode::CREATED {
        true => protobuf::decode_document(&bytes).expect("a protobuf answer decodes"),
        false => serde_json::from_slice(&bytes).expect("a JSON answer"),
    };
    (code, answer)
}

fn access_review(kind: &str, spec: Value) -> Value {
    json!({"apiVersion": "authorization.k8s.io/v1", "kind": kind, "spec": spec})
}

#[tokio::test]
async fn kubectl_auth_can_i_is_told_yes_in_protobuf_with_the_request_back() {
    let review = access_review(
        "SelfSubjectAccessReview",
        json!({"resourceAttributes": {"namespace": "default", "verb": "list", "resource": "pods"}}),
    );
    let (code, answer) = post(
        &format!("{AUTHORIZATION}/selfsubjectaccessreviews"),
        &review,
        true,
    )
    .await;
    assert_eq!(code, StatusCode::CREATED, "{answer}");
    assert_eq!(answer["status"], json!({"allowed": true}));
    assert_eq!(answer["spec"], review["spec"]);
    let entry = &answer["metadata"]["managedFields"][0];
    assert_eq!(entry["manager"], "kubectl");
    assert_eq!(entry["operation"], "Update");
    assert_eq!(
        entry["fieldsV1"]["f:spec"]["f:resourceAttributes"]["f:verb"],
        json!({})
    );
}

#[tokio::test]
async fn kubectl_auth_whoami_is_the_insecure_ports_user_in_system_masters() {
    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let uri = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
    for protobuf in [false, true] {
        let (code, answer) = post(uri, &review, protobuf).await;
        assert_eq!(code, StatusCode::CREATED);
        assert_eq!(
            answer["status"]["userInfo"],
            json!({"username": "system:unsecured", "groups": ["system:masters", "system:authenticated"]})
        );
        assert!(answer["metadata"]["creationTimestamp"].is_string());
    }
}

#[tokio::test]
async fn every_rule_is_allowed_and_a_review_about_another_user_is_answered_too() {
    let rules = access_review("SelfSubjectRulesReview", json!({"namespace": "default"}));
    let (_, answer) = post(
        &format!("{AUTHORIZATION}/selfsubjectrulesreviews"),
        &rules,
        false,
    )
    .await;
    assert_eq!(
        answer["status"]["resourceRules"],
        json!([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}])
    );
    assert_eq!(answer["status"]["incomplete"], false);
    let local = access_review(
        "LocalSubjectAccessReview",
        json!({"user": "bob", "resourceAttributes": {"namespace": "payments", "verb": "watch", "resource": "pods"}}),
    );
    let uri = format!("{AUTHORIZATION}/namespaces/payments/localsubjectaccessreviews");
    let (code, answer) = post(&uri, &local, false).await;
    assert_eq!(code, StatusCode::CREATED, "{answer}");
    assert_eq!(answer["metadata"]["namespace"], "payments");
    assert_eq!(answer["status"]["allowed"], true);
}

#[tokio::test]
async fn reviews_kube_apiserver_refuses_are_refused_in_its_words() {
    let cases = [
        (
            "subjectaccessreviews",
            access_review(
                "SubjectAccessReview",
                json!({"resourceAttributes": {"verb": "get"}}),
            ),
            r#".authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified"#,
        ),
        (
            "selfsubjectaccessreviews",
            access_review(
                "SelfSubjectAccessReview",
                json!({"resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"path": "/x", "verb": "get"}}),
            ),
            r#".authorization.k8s.io "" is invalid: spec: Invalid value: {"Path":"/x","Verb":"get"}: exactly one of nonResourceAttributes or resourceAttributes must be specified"#,
        ),
        (
            "namespaces/default/localsubjectaccessreviews",
            access_review(
                "LocalSubjectAccessReview",
                json!({"user": "bob", "resourceAttributes": {"namespace": "other", "verb": "get"}}),
            ),
            r#".authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace"#,
        ),
    ];
    for (plural, review, message) in cases {
        let (code, answer) = post(&format!("{AUTHORIZATION}/{plural}"), &review, false).await;
        assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{plural}");
        assert_eq!(answer["message"], message, "{plural}");
    }
}
