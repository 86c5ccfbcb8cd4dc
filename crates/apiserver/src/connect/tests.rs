//! Pods' logs, execs, attaches and port-forwards, answered as kube-apiserver answers for
//! a pod whose node it does not have.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::ApiServer;
use crate::generate;
use crate::records::tests::{Client, JSON, pods};
use scenario::{ObjectKind, ObjectSpec};

/// The first generated pod: its path, and the node it is on.
async fn scheduled(client: &Client, server: &ApiServer) -> (String, String) {
    let spec = server.spec();
    let (namespace, name) = (generate::namespace(spec, 0), generate::name(spec, 0));
    let path = format!("/api/v1/namespaces/{namespace}/pods/{name}");
    let (code, pod) = client.get(&path).await;
    assert_eq!(code, StatusCode::OK, "{pod}");
    let node = pod["spec"]["nodeName"]
        .as_str()
        .expect("generated pods are on nodes");
    (path, node.to_owned())
}

/// Creates pod `name` (on no node) with these containers and init containers, in the
/// first generated pod's namespace; its path.
async fn created(
    client: &Client,
    server: &ApiServer,
    name: &str,
    containers: &[&str],
    init: &[&str],
) -> String {
    let namespace = generate::namespace(server.spec(), 0);
    let named = |names: &[&str]| -> Vec<Value> {
        names
            .iter()
            .map(|n| json!({"name": n, "image": "nginx"}))
            .collect()
    };
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": named(containers), "initContainers": named(init)},
    });
    let pods = format!("/api/v1/namespaces/{namespace}/pods");
    let (code, answer) = client.send("POST", &pods, JSON, &pod).await;
    assert_eq!(code, StatusCode::CREATED, "{answer}");
    format!("{pods}/{name}")
}

/// A refusal's code, reason and message.
async fn refusal(client: &Client, method: &str, uri: &str) -> (StatusCode, String, String) {
    let (code, status) = client.send(method, uri, JSON, &Value::Null).await;
    assert_eq!(status["kind"], "Status", "{method} {uri}: {status}");
    let text = |field: &str| status[field].as_str().unwrap_or_default().to_owned();
    (code, text("reason"), text("message"))
}

#[tokio::test]
async fn a_pod_on_a_node_the_server_lacks_is_answered_as_kube_apiserver_does() {
    let server = pods();
    let client = Client::new(&server);
    let (pod, node) = scheduled(&client, &server).await;
    let gone = (
        StatusCode::NOT_FOUND,
        "NotFound".to_owned(),
        format!("pods {node:?} not found"),
    );
    for (method, subresource) in [
        ("GET", "log"),
        ("GET", "log?follow=true&container=api&tailLines=10"),
        ("GET", "exec?command=ls&stdout=true"),
        ("POST", "exec?command=ls&stdout=true"),
        ("GET", "attach"),
        ("POST", "attach"),
        ("GET", "portforward?ports=8080,9090"),
        ("POST", "portforward"),
    ] {
        let uri = format!("{pod}/{subresource}");
        assert_eq!(refusal(&client, method, &uri).await, gone, "{method} {uri}");
    }
    let (_, status) = client.get(&format!("{pod}/log")).await;
    assert_eq!(status["details"], json!({"name": node, "kind": "pods"}));
    for (method, subresource) in [
        ("PUT", "log"),
        ("POST", "log"),
        ("DELETE", "exec"),
        ("PATCH", "portforward"),
    ] {
        let (code, reason, _) = refusal(&client, method, &format!("{pod}/{subresource}")).await;
        assert_eq!(
            (code, reason.as_str()),
            (StatusCode::METHOD_NOT_ALLOWED, "MethodNotAllowed")
        );
    }
}

#[tokio::test]
async fn a_pod_on_no_node_has_an_empty_log_and_nothing_to_connect_to() {
    let server = pods();
    let client = Client::new(&server);
    let pod = created(&client, &server, "waiting", &["app"], &[]).await;
    let (code, body) = client
        .raw("GET", &format!("{pod}/log"), &[], Vec::new())
        .await;
    assert_eq!((code, body.len()), (StatusCode::NO_CONTENT, 0));
    let (code, _) = client
        .raw("GET", &format!("{pod}/log?container=app"), &[], Vec::new())
        .await;
    assert_eq!(code, StatusCode::NO_CONTENT);
    for subresource in ["exec?command=ls", "attach", "portforward?ports=80"] {
        let uri = format!("{pod}/{subresource}");
        let expected = (
            StatusCode::BAD_REQUEST,
            "BadRequest".to_owned(),
            "pod waiting does not have a host assigned".to_owned(),
        );
        assert_eq!(refusal(&client, "POST", &uri).await, expected, "{uri}");
    }
}

#[tokio::test]
async fn the_container_is_the_one_named_or_the_only_one() {
    let server = pods();
    let client = Client::new(&server);
    let pod = created(&client, &server, "sidecars", &["a", "b"], &["i"]).await;
    let bad = |message: &str| {
        (
            StatusCode::BAD_REQUEST,
            "BadRequest".to_owned(),
            message.to_owned(),
        )
    };
    let choose = bad("a container name must be specified for pod sidecars, choose one of: [i a b]");
    assert_eq!(refusal(&client, "GET", &format!("{pod}/log")).await, choose);
    assert_eq!(
        refusal(&client, "POST", &format!("{pod}/exec?command=ls")).await,
        choose
    );
    let unknown = bad("container zz is not valid for pod sidecars");
    assert_eq!(
        refusal(&client, "GET", &format!("{pod}/log?container=zz")).await,
        unknown
    );
    assert_eq!(
        refusal(&client, "GET", &format!("{pod}/attach?container=zz")).await,
        unknown
    );
    // An init container is named too; a port-forward names none.
    let (code, _) = client
        .raw("GET", &format!("{pod}/log?container=i"), &[], Vec::new())
        .await;
    assert_eq!(code, StatusCode::NO_CONTENT);
    let (code, _, message) = refusal(&client, "POST", &format!("{pod}/portforward")).await;
    assert_eq!(
        (code, message.as_str()),
        (
            StatusCode::BAD_REQUEST,
            "pod sidecars does not have a host assigned"
        )
    );
}

#[tokio::test]
async fn options_are_read_and_checked_before_the_pod_is_looked_up() {
    let server = pods();
    let client = Client::new(&server);
    let missing = "/api/v1/namespaces/default/pods/nope";
    let (code, status) = client
        .get(&format!(
            "{missing}/log?tailLines=-1&limitBytes=0&sinceSeconds=0&stream=All"
        ))
        .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{status}");
    assert_eq!(
        status["message"],
        "PodLogOptions \"nope\" is invalid: [tailLines: Invalid value: -1: must be greater than or equal to 0, \
         limitBytes: Invalid value: 0: must be greater than 0, sinceSeconds: Invalid value: 0: must be greater than 0, \
         stream: Forbidden: may not be specified]"
    );
    assert_eq!(status["details"]["kind"], "PodLogOptions");
    assert_eq!(
        status["details"]["causes"].as_array().map(Vec::len),
        Some(4)
    );
    let both = format!("{missing}/log?sinceSeconds=5&sinceTime=2020-01-01T00:00:00Z");
    let (code, status) = client.get(&both).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(status["details"]["causes"][0]["field"], "[]");
    let bad = |message: &str| {
        (
            StatusCode::BAD_REQUEST,
            "BadRequest".to_owned(),
            message.to_owned(),
        )
    };
    for (query, message) in [
        (
            "log?tailLines=x",
            r#"strconv.ParseInt: parsing "x": invalid syntax"#,
        ),
        (
            "log?tailLines=",
            r#"strconv.ParseInt: parsing "": invalid syntax"#,
        ),
        (
            "log?limitBytes=99999999999999999999",
            r#"strconv.ParseInt: parsing "99999999999999999999": value out of range"#,
        ),
        (
            "portforward?ports=80&ports=x",
            r#"cannot convert to []int32: strconv.ParseUint: parsing "x": invalid syntax"#,
        ),
        (
            "portforward?ports=70000",
            r#"cannot convert to []int32: strconv.ParseUint: parsing "70000": value out of range"#,
        ),
    ] {
        assert_eq!(
            refusal(&client, "GET", &format!("{missing}/{query}")).await,
            bad(message),
            "{query}"
        );
    }
    let (code, reason, _) = refusal(
        &client,
        "GET",
        &format!("{missing}/log?sinceTime=2020-01-01"),
    )
    .await;
    assert_eq!(
        (code, reason.as_str()),
        (StatusCode::BAD_REQUEST, "BadRequest")
    );
    // Options that read: the pod is looked up, and is not there.
    let not_found = (
        StatusCode::NOT_FOUND,
        "NotFound".to_owned(),
        r#"pods "nope" not found"#.to_owned(),
    );
    for query in [
        "log?tailLines=%2B5&sinceTime=2020-01-01T00:00:00%2B02:00&follow=x",
        "exec?command=ls",
        "portforward?ports=80,81",
    ] {
        assert_eq!(
            refusal(&client, "GET", &format!("{missing}/{query}")).await,
            not_found,
            "{query}"
        );
    }
}

#[tokio::test]
async fn discovery_lists_the_connect_subresources_and_a_server_of_another_kind_has_no_pods() {
    let config_maps = ApiServer::new(ObjectSpec {
        kind: ObjectKind::ConfigMap,
        ..ObjectSpec::pods(4)
    });
    let client = Client::new(&config_maps);
    let (_, core) = client.get("/api/v1").await;
    let listed: Vec<_> = (core["resources"].as_array().unwrap().iter())
        .filter(|r| r["name"].as_str().is_some_and(|n| n.starts_with("pods/")))
        .map(|r| (r["name"].as_str().unwrap(), r["verbs"].clone()))
        .collect();
    let opened = json!(["create", "get"]);
    assert_eq!(
        listed,
        [
            ("pods/attach", opened.clone()),
            ("pods/eviction", json!(["create"])),
            ("pods/exec", opened.clone()),
            ("pods/log", json!(["get"])),
            ("pods/portforward", opened),
        ]
    );
    let namespace = generate::namespace(config_maps.spec(), 0);
    let uri = format!("/api/v1/namespaces/{namespace}/pods/web/log");
    let (code, _, message) = refusal(&client, "GET", &uri).await;
    assert_eq!(
        (code, message.as_str()),
        (StatusCode::NOT_FOUND, r#"pods "web" not found"#)
    );
}
