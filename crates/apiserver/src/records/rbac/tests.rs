//! RBAC's kinds as an operator's installer and kubectl write them beside a pod scenario.
//! The expected answers are kube-apiserver v1.37.2's to the same requests (checked by
//! hand against servers/kube-apiserver: `kubectl create role`, `create rolebinding`,
//! `create clusterrole`, `create clusterrolebinding`, the refusals below).

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::records::tests::{Client, JSON, pods};

const RBAC: &str = "/apis/rbac.authorization.k8s.io/v1";
const MERGE: &str = "application/merge-patch+json";

fn role(kind: &str, name: &str, rules: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
           "metadata": {"name": name}, "rules": rules})
}

fn binding(kind: &str, name: &str, role_ref: Value, subjects: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
           "metadata": {"name": name}, "roleRef": role_ref, "subjects": subjects})
}

#[tokio::test]
async fn bindings_are_defaulted_and_cluster_scoped_kinds_live_in_no_namespace() {
    let client = Client::new(&pods());
    let rules = json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]);
    let roles = format!("{RBAC}/namespaces/default/roles");
    let (code, made) = client
        .send("POST", &roles, JSON, &role("Role", "reader", rules.clone()))
        .await;
    assert_eq!(code, StatusCode::CREATED, "{made}");
    assert_eq!(made["metadata"]["namespace"], "default");
    assert!(made["metadata"].get("generation").is_none(), "{made}");

    let subjects = json!([{"kind": "User", "name": "alice"},
                          {"kind": "ServiceAccount", "name": "bot", "namespace": "default"}]);
    let bindings = format!("{RBAC}/namespaces/default/rolebindings");
    let reader = binding(
        "RoleBinding",
        "reader",
        json!({"kind": "Role", "name": "reader"}),
        subjects,
    );
    let (code, bound) = client.send("POST", &bindings, JSON, &reader).await;
    assert_eq!(code, StatusCode::CREATED, "{bound}");
    assert_eq!(bound["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(
        bound["subjects"][0]["apiGroup"],
        "rbac.authorization.k8s.io"
    );
    assert!(bound["subjects"][1].get("apiGroup").is_none(), "{bound}");

    // A ClusterRole, whatever namespace its body names, is kept in none; a name with a
    // colon is a path segment, as RBAC's names are.
    let mut cluster_role = role("ClusterRole", "system:viewer", rules);
    cluster_role["metadata"]["namespace"] = json!("default");
    let (code, made) = client
        .send("POST", &format!("{RBAC}/clusterroles"), JSON, &cluster_role)
        .await;
    assert_eq!(code, StatusCode::CREATED, "{made}");
    assert!(made["metadata"].get("namespace").is_none(), "{made}");
    let (code, read) = client
        .get(&format!("{RBAC}/clusterroles/system:viewer"))
        .await;
    assert_eq!(code, StatusCode::OK, "{read}");
    let (_, listed) = client.get(&format!("{RBAC}/clusterroles")).await;
    assert_eq!(listed["items"].as_array().unwrap().len(), 1);
    // A PUT of a missing one creates it, as RBAC's strategies allow.
    let other = role("ClusterRole", "other", json!([]));
    let (code, _) = client
        .send("PUT", &format!("{RBAC}/clusterroles/other"), JSON, &other)
        .await;
    assert_eq!(code, StatusCode::CREATED);
    let (code, deleted) = client
        .send(
            "DELETE",
            &format!("{RBAC}/clusterroles/other"),
            JSON,
            &Value::Null,
        )
        .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(deleted["status"], "Success");

    let (table, _) = client.table(&bindings).await;
    let cells = table["rows"][0]["cells"].as_array().unwrap();
    assert_eq!(
        [&cells[1], &cells[3], &cells[4], &cells[5]],
        ["Role/reader", "alice", "", "default/bot"]
    );
    let (_, titles) = client.table(&roles).await;
    assert_eq!(titles, ["Name", "Created At"]);
}

#[tokio::test]
async fn rbac_is_validated_as_kube_apiserver_validates_it() {
    let client = Client::new(&pods());
    let roles = format!("{RBAC}/namespaces/default/roles");
    let rules = json!([{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}, {"verbs": []}]);
    let (code, refused) = client
        .send("POST", &roles, JSON, &role("Role", "bad/name", rules))
        .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        refused["message"],
        r#"Role.rbac.authorization.k8s.io "bad/name" is invalid: [metadata.name: Invalid value: "bad/name": may not contain '/', rules[0].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs, rules[1].verbs: Required value: verbs must contain at least one value, rules[1].apiGroups: Required value: resource rules must supply at least one api group, rules[1].resources: Required value: resource rules must supply at least one resource]"#
    );

    let cluster = format!("{RBAC}/clusterrolebindings");
    let bad = binding(
        "ClusterRoleBinding",
        "bad",
        json!({"kind": "Role", "name": "x"}),
        json!([{"kind": "ServiceAccount", "name": "bot"}, {"kind": "Robot", "name": "r2"}]),
    );
    let (_, refused) = client.send("POST", &cluster, JSON, &bad).await;
    assert_eq!(
        refused["message"],
        r#"ClusterRoleBinding.rbac.authorization.k8s.io "bad" is invalid: [roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole", subjects[0].namespace: Required value, subjects[1].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"]"#
    );

    let good = binding(
        "ClusterRoleBinding",
        "viewer",
        json!({"kind": "ClusterRole", "name": "view"}),
        json!([{"kind": "Group", "name": "devs"}]),
    );
    let (code, _) = client.send("POST", &cluster, JSON, &good).await;
    assert_eq!(code, StatusCode::CREATED);
    let (code, refused) = client
        .send(
            "PATCH",
            &format!("{cluster}/viewer"),
            MERGE,
            &json!({"roleRef": {"name": "edit"}}),
        )
        .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        (refused["message"].as_str().unwrap()).ends_with("roleRef: Invalid value: {\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"edit\"}: field is immutable"),
        "{refused}"
    );
}
