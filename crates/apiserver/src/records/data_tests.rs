//! ConfigMaps and Secrets as a program beside a pod informer writes them: kubectl's
//! `create configmap` and `create secret`, a Python operator's ConfigMap lock, a manifest
//! with `stringData`.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::ApiServer;
use crate::records::tests::{Client, JSON, pods};
use scenario::{ObjectKind, ObjectSpec};

const CONFIG_MAPS: &str = "/api/v1/namespaces/default/configmaps";
const SECRETS: &str = "/api/v1/namespaces/default/secrets";
const MERGE: &str = "application/merge-patch+json";

fn config_map(name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "labels": {"app": "test"}}, "data": data})
}

fn secret(name: &str, kind: &str, fields: Value) -> Value {
    let mut secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}});
    if !kind.is_empty() {
        secret["type"] = json!(kind);
    }
    for (field, value) in fields.as_object().into_iter().flatten() {
        secret[field] = value.clone();
    }
    secret
}

/// The causes of a 422, as `field: message`.
fn causes(status: &Value) -> Vec<String> {
    let causes = status["details"]["causes"].as_array().cloned();
    (causes.unwrap_or_default().iter())
        .map(|c| {
            format!(
                "{}: {}",
                c["field"].as_str().unwrap(),
                c["message"].as_str().unwrap()
            )
        })
        .collect()
}

#[tokio::test]
async fn a_config_map_lock_is_created_read_updated_and_watched_beside_pods() {
    let client = Client::new(&pods());
    let lock = format!("{CONFIG_MAPS}/operator-lock");
    let (code, missing) = client.get(&lock).await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    assert_eq!(
        missing["message"],
        r#"configmaps "operator-lock" not found"#
    );
    let (code, list) = client.get(CONFIG_MAPS).await;
    assert_eq!((code, &list["items"]), (StatusCode::OK, &json!([])));
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();

    let body = config_map("operator-lock", json!({"holder": "a"}));
    let (code, created) = client.send("POST", CONFIG_MAPS, JSON, &body).await;
    assert_eq!(code, StatusCode::CREATED, "{created}");
    assert_eq!(created["data"], json!({"holder": "a"}));
    let entry = &created["metadata"]["managedFields"][0];
    assert_eq!(
        entry["fieldsV1"]["f:data"],
        json!({".": {}, "f:holder": {}})
    );
    let (code, again) = client.send("POST", CONFIG_MAPS, JSON, &body).await;
    assert_eq!(code, StatusCode::CONFLICT);
    assert_eq!(
        again["message"],
        r#"configmaps "operator-lock" already exists"#
    );

    // An update without a resourceVersion is allowed (a ConfigMap's strategy allows
    // unconditional updates); one from an older version is a conflict.
    let mut update = config_map("operator-lock", json!({"holder": "b"}));
    let (code, updated) = client.send("PUT", &lock, JSON, &update).await;
    assert_eq!(code, StatusCode::OK, "{updated}");
    update["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"].clone();
    let (code, stale) = client.send("PUT", &lock, JSON, &update).await;
    assert_eq!(code, StatusCode::CONFLICT, "{stale}");

    // A PUT does not create a ConfigMap (its strategy's AllowCreateOnUpdate is false).
    let absent = config_map("absent", json!({}));
    let (code, refused) =
        (client.send("PUT", &format!("{CONFIG_MAPS}/absent"), JSON, &absent)).await;
    assert_eq!(code, StatusCode::NOT_FOUND, "{refused}");

    let (code, gone) = client.send("DELETE", &lock, JSON, &Value::Null).await;
    assert_eq!(code, StatusCode::OK, "{gone}");
    assert_eq!(gone["details"]["kind"], "configmaps");
    let watch = format!("{CONFIG_MAPS}?watch=true&resourceVersion={rv}&timeoutSeconds=1");
    let events = client.watch(&watch, JSON).await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["ADDED", "MODIFIED", "DELETED"]);
    assert_eq!(events[1]["object"]["data"], json!({"holder": "b"}));
}

/// A server of pods, which keeps ConfigMaps and Secrets as records, and one whose
/// scenario's objects are `kind`, written through the scenario's path: each write below
/// must come out the same from both.
fn servers(kind: ObjectKind) -> [Client; 2] {
    let spec = ObjectSpec {
        kind,
        ..ObjectSpec::pods(4)
    };
    [Client::new(&pods()), Client::new(&ApiServer::new(spec))]
}

#[tokio::test]
async fn a_config_maps_keys_size_and_immutability_are_validated_as_kube_apiserver_does() {
    for client in servers(ObjectKind::ConfigMap) {
        config_maps_validated(&client).await;
    }
}

async fn config_maps_validated(client: &Client) {
    let bad = config_map("bad", json!({"a/b": "1", "..x": "2", "same": "3"}));
    let mut bad = bad;
    bad["binaryData"] = json!({"same": "AQI="});
    let (code, refused) = client.send("POST", CONFIG_MAPS, JSON, &bad).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    assert_eq!(
        causes(&refused),
        [
            r#"data[..x]: Invalid value: "..x": must not start with '..'"#,
            r#"data[a/b]: Invalid value: "a/b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"#,
            r#"data[same]: Invalid value: "same": duplicate of key present in binaryData"#,
        ]
    );
    assert!((refused["message"].as_str().unwrap()).starts_with(r#"ConfigMap "bad" is invalid: ["#));

    let big = config_map("big", json!({"a": "x".repeat(1024 * 1024 + 1)}));
    let (code, refused) = client.send("POST", CONFIG_MAPS, JSON, &big).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        causes(&refused),
        ["[]: Too long: may not be more than 1048576 bytes"]
    );

    let mut fixed = config_map("fixed", json!({"a": "1"}));
    fixed["immutable"] = json!(true);
    let (code, _) = client.send("POST", CONFIG_MAPS, JSON, &fixed).await;
    assert_eq!(code, StatusCode::CREATED);
    let one = format!("{CONFIG_MAPS}/fixed");
    let patch = json!({"data": {"a": "2"}, "immutable": false});
    let (code, refused) = client.send("PATCH", &one, MERGE, &patch).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    assert_eq!(
        causes(&refused),
        [
            "immutable: Forbidden: field is immutable when `immutable` is set",
            "data: Forbidden: field is immutable when `immutable` is set",
        ]
    );
    let labels = json!({"metadata": {"labels": {"app": "other"}}});
    let (code, relabelled) = client.send("PATCH", &one, MERGE, &labels).await;
    assert_eq!(code, StatusCode::OK, "metadata still changes: {relabelled}");
}

#[tokio::test]
async fn a_secrets_string_data_is_kept_in_its_data_and_its_type_defaults_to_opaque() {
    for client in servers(ObjectKind::Secret) {
        secrets_converted(&client).await;
    }
}

async fn secrets_converted(client: &Client) {
    let fields = json!({"data": {"user": "YWRtaW4=", "password": "b2xk"},
                        "stringData": {"password": "hunter2"}});
    let (code, created) = (client.send("POST", SECRETS, JSON, &secret("db", "", fields))).await;
    assert_eq!(code, StatusCode::CREATED, "{created}");
    assert_eq!(created["type"], "Opaque");
    assert_eq!(
        created["data"],
        json!({"user": "YWRtaW4=", "password": "aHVudGVyMg=="})
    );
    assert!(created.get("stringData").is_none(), "{created}");
    let entry = &created["metadata"]["managedFields"][0]["fieldsV1"];
    assert!(entry.get("f:stringData").is_none(), "{entry}");
    assert_eq!(entry["f:data"]["f:password"], json!({}));

    let (code, listed) = client
        .get(&format!(
            "{SECRETS}?fieldSelector=type%3DOpaque,metadata.name%3Ddb"
        ))
        .await;
    assert_eq!(
        (code, listed["items"].as_array().map(Vec::len)),
        (StatusCode::OK, Some(1))
    );
    let (code, none) = client
        .get(&format!(
            "{SECRETS}?fieldSelector=type%3Dkubernetes.io%2Ftls"
        ))
        .await;
    assert_eq!((code, &none["items"]), (StatusCode::OK, &json!([])));
    let (code, refused) = client
        .get(&format!("{SECRETS}?fieldSelector=data%3Dx"))
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{refused}");

    let retyped = json!({"type": "kubernetes.io/basic-auth"});
    let (code, refused) = client
        .send("PATCH", &format!("{SECRETS}/db"), MERGE, &retyped)
        .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    assert_eq!(
        causes(&refused),
        [r#"type: Invalid value: "kubernetes.io/basic-auth": field is immutable"#]
    );
}

#[tokio::test]
async fn a_secrets_type_requires_its_keys_as_kube_apiserver_does() {
    for client in servers(ObjectKind::Secret) {
        secret_types_checked(&client).await;
    }
}

async fn secret_types_checked(client: &Client) {
    let cases = [
        (
            "kubernetes.io/tls",
            json!({}),
            vec![
                "data[tls.crt]: Required value",
                "data[tls.key]: Required value",
            ],
        ),
        (
            "kubernetes.io/basic-auth",
            json!({}),
            vec![
                "data[username]: Required value",
                "data[password]: Required value",
            ],
        ),
        (
            "kubernetes.io/ssh-auth",
            json!({"data": {"ssh-privatekey": ""}}),
            vec!["data[ssh-privatekey]: Required value"],
        ),
        (
            "kubernetes.io/dockerconfigjson",
            json!({}),
            vec!["data[.dockerconfigjson]: Required value"],
        ),
        (
            "kubernetes.io/dockerconfigjson",
            json!({"stringData": {".dockerconfigjson": "[1]"}}),
            vec![
                r#"data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": json: cannot unmarshal array into Go value of type map[string]interface {}"#,
            ],
        ),
        (
            "kubernetes.io/service-account-token",
            json!({}),
            vec!["metadata.annotations[kubernetes.io/service-account.name]: Required value"],
        ),
    ];
    for (kind, fields, expected) in cases {
        let (code, refused) =
            (client.send("POST", SECRETS, JSON, &secret("typed", kind, fields))).await;
        assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{kind}: {refused}");
        assert_eq!(causes(&refused), expected, "{kind}");
    }
    let basic = json!({"stringData": {"username": "admin"}});
    let (code, created) = (client.send(
        "POST",
        SECRETS,
        JSON,
        &secret("basic", "kubernetes.io/basic-auth", basic),
    ))
    .await;
    assert_eq!(
        code,
        StatusCode::CREATED,
        "one of the two keys is enough: {created}"
    );
}

#[tokio::test]
async fn configmaps_stay_the_scenarios_objects_where_they_are_its_kind_and_secrets_are_records() {
    let spec = ObjectSpec {
        kind: ObjectKind::ConfigMap,
        ..ObjectSpec::pods(4)
    };
    let client = Client::new(&ApiServer::new(spec));
    let (code, list) = client.get("/api/v1/configmaps").await;
    assert_eq!(code, StatusCode::OK);
    let scenario = list["items"].as_array().map_or(0, Vec::len);
    let (code, _) = (client.send("POST", SECRETS, JSON, &secret("s", "", json!({})))).await;
    assert_eq!(code, StatusCode::CREATED);
    let (_, core) = client.get("/api/v1").await;
    let verbs = |name: &str| {
        let resources = core["resources"].as_array().unwrap();
        resources.iter().find(|r| r["name"] == name).unwrap()["verbs"].clone()
    };
    assert_eq!(verbs("secrets").as_array().map(Vec::len), Some(8));
    assert_eq!(verbs("configmaps").as_array().map(Vec::len), Some(8));
    // The scenario's ConfigMaps are served as before, not as records.
    let (_, again) = client.get("/api/v1/configmaps").await;
    assert_eq!(again["items"].as_array().map_or(0, Vec::len), scenario);
    assert_eq!(scenario, 4, "{list}");
}

#[tokio::test]
async fn kubectl_finds_every_verb_and_prints_their_tables() {
    let client = Client::new(&pods());
    let (_, core) = client.get("/api/v1").await;
    for name in ["configmaps", "secrets"] {
        let resources = core["resources"].as_array().unwrap();
        let listed = resources.iter().find(|r| r["name"] == name).unwrap();
        let verbs = listed["verbs"].as_array().unwrap();
        assert!(
            verbs.contains(&json!("create")) && verbs.contains(&json!("deletecollection")),
            "{listed}"
        );
    }
    let fields = json!({"stringData": {"a": "1", "b": "2"}});
    client
        .send("POST", SECRETS, JSON, &secret("two", "", fields))
        .await;
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io";
    let (code, bytes) = client
        .raw("GET", SECRETS, &[("accept", table)], Vec::new())
        .await;
    assert_eq!(code, StatusCode::OK);
    let table: Value = serde_json::from_slice(&bytes).unwrap();
    let names: Vec<&Value> = (table["columnDefinitions"].as_array().unwrap().iter())
        .map(|c| &c["name"])
        .collect();
    assert_eq!(
        names,
        [
            &json!("Name"),
            &json!("Type"),
            &json!("Data"),
            &json!("Age")
        ]
    );
    let cells = &table["rows"][0]["cells"];
    assert_eq!(
        (&cells[0], &cells[1], &cells[2]),
        (&json!("two"), &json!("Opaque"), &json!(2))
    );
}
