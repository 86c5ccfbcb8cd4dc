//! The workloads of `apps/v1` as an operator and kubectl write them beside a pod
//! scenario. The expected answers are kube-apiserver v1.37.2's to the same requests
//! (checked by hand against servers/kube-apiserver).

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::ApiServer;
use crate::records::tests::{Client, JSON, pods};
use scenario::{ObjectKind, ObjectSpec};

const APPS: &str = "/apis/apps/v1/namespaces/default";
const MERGE: &str = "application/merge-patch+json";

fn workload(kind: &str, name: &str, spec: Value) -> Value {
    let mut spec = spec;
    spec["template"] = json!({"metadata": {"labels": {"app": "x"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    json!({"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name}, "spec": spec})
}

fn selected(spec: Value) -> Value {
    let mut spec = spec;
    spec["selector"] = json!({"matchLabels": {"app": "x"}});
    spec
}

async fn create(client: &Client, plural: &str, body: &Value) -> (StatusCode, Value) {
    client
        .send("POST", &format!("{APPS}/{plural}"), JSON, body)
        .await
}

#[tokio::test]
async fn each_workload_is_defaulted_and_starts_at_generation_one_with_an_empty_status() {
    let client = Client::new(&pods());
    let (code, rs) = create(
        &client,
        "replicasets",
        &workload("ReplicaSet", "rs", selected(json!({}))),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED, "{rs}");
    assert_eq!(rs["spec"]["replicas"], 1);
    assert_eq!(rs["status"], json!({"replicas": 0}));
    assert_eq!(rs["metadata"]["generation"], 1);
    // The pod template is defaulted as a pod is.
    assert_eq!(
        rs["spec"]["template"]["spec"],
        json!({"containers": [{"name": "c", "image": "nginx", "resources": {},
                              "terminationMessagePath": "/dev/termination-log",
                              "terminationMessagePolicy": "File", "imagePullPolicy": "Always"}],
               "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
               "dnsPolicy": "ClusterFirst", "securityContext": {},
               "schedulerName": "default-scheduler"})
    );

    let (_, sts) = create(
        &client,
        "statefulsets",
        &workload("StatefulSet", "sts", selected(json!({}))),
    )
    .await;
    let mut spec = sts["spec"].clone();
    spec.as_object_mut().unwrap().remove("template");
    assert_eq!(
        spec,
        json!({"replicas": 1, "selector": {"matchLabels": {"app": "x"}}, "serviceName": "",
               "podManagementPolicy": "OrderedReady",
               "updateStrategy": {"type": "RollingUpdate",
                                  "rollingUpdate": {"partition": 0, "maxUnavailable": 1}},
               "revisionHistoryLimit": 10,
               "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"}})
    );
    assert_eq!(
        sts["status"],
        json!({"replicas": 0, "availableReplicas": 0})
    );

    let (_, ds) = create(
        &client,
        "daemonsets",
        &workload("DaemonSet", "ds", selected(json!({}))),
    )
    .await;
    assert_eq!(
        ds["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
    );
    assert_eq!(
        ds["status"],
        json!({"currentNumberScheduled": 0, "numberMisscheduled": 0,
               "desiredNumberScheduled": 0, "numberReady": 0})
    );
    assert_eq!(
        ds["metadata"]["annotations"],
        json!({"deprecated.daemonset.template.generation": "1"})
    );

    let (_, deploy) = create(
        &client,
        "deployments",
        &workload("Deployment", "web", selected(json!({}))),
    )
    .await;
    assert_eq!(
        deploy["spec"]["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
    );
    assert_eq!(deploy["status"], json!({}));
    // kubectl get all lists them with the printers' columns.
    let (_, table) = client
        .raw(
            "GET",
            &format!("{APPS}/daemonsets"),
            &[("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")],
            Vec::new(),
        )
        .await;
    let table: Value = serde_json::from_slice(&table).unwrap();
    let cells = table["rows"][0]["cells"].as_array().unwrap();
    assert_eq!(
        cells[..7],
        [
            json!("ds"),
            json!(0),
            json!(0),
            json!(0),
            json!(0),
            json!(0),
            json!("<none>")
        ]
    );
    assert_eq!(cells[8..], [json!("c"), json!("nginx"), json!("app=x")]);
}

#[tokio::test]
async fn a_workload_is_validated_as_kube_apiserver_validates_it() {
    let client = Client::new(&pods());
    let mut mismatched = workload(
        "DaemonSet",
        "ds2",
        json!({"selector": {"matchLabels": {"app": "y"}}}),
    );
    let empty_containers = {
        let mut rs = workload("ReplicaSet", "rs2", selected(json!({"replicas": -1})));
        rs["spec"]["template"]["spec"]["containers"] = json!([]);
        rs
    };
    mismatched["kind"] = json!("DaemonSet");
    for (plural, body, message) in [
        (
            "daemonsets",
            mismatched,
            r#"DaemonSet.apps "ds2" is invalid: spec.template.metadata.labels: Invalid value: {"app":"x"}: `selector` does not match template `labels`"#,
        ),
        (
            "statefulsets",
            workload("StatefulSet", "sts2", json!({})),
            r#"StatefulSet.apps "sts2" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: {"app":"x"}: `selector` does not match template `labels`]"#,
        ),
        (
            "replicasets",
            empty_containers,
            r#"ReplicaSet.apps "rs2" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.template.spec.containers: Required value]"#,
        ),
        (
            "deployments",
            workload(
                "Deployment",
                "d",
                json!({"replicas": -2, "minReadySeconds": -1, "revisionHistoryLimit": -1, "selector": {}}),
            ),
            r#"Deployment.apps "d" is invalid: [spec.replicas: Invalid value: -2: must be greater than or equal to 0, spec.selector: Invalid value: {}: empty selector is invalid for deployment, spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0, spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0]"#,
        ),
        (
            "daemonsets",
            workload(
                "DaemonSet",
                "ds3",
                selected(json!({"updateStrategy": {"type": "Foo"}})),
            ),
            r#"DaemonSet.apps "ds3" is invalid: spec.updateStrategy: Unsupported value: {"Type":"Foo","RollingUpdate":null}: supported values: "RollingUpdate", "OnDelete""#,
        ),
        (
            "statefulsets",
            workload(
                "StatefulSet",
                "sts3",
                selected(json!({"podManagementPolicy": "Foo"})),
            ),
            r#"StatefulSet.apps "sts3" is invalid: spec.podManagementPolicy: Invalid value: "Foo": must be 'OrderedReady' or 'Parallel'"#,
        ),
    ] {
        let (code, refused) = create(&client, plural, &body).await;
        assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {refused}");
        assert_eq!(refused["message"], message, "{body}");
    }

    // What an update may not change.
    create(
        &client,
        "statefulsets",
        &workload("StatefulSet", "sts", selected(json!({}))),
    )
    .await;
    let patch = json!({"spec": {"selector": {"matchLabels": {"app": "y"}},
                                "template": {"metadata": {"labels": {"app": "y"}}},
                                "serviceName": "zz", "podManagementPolicy": "Parallel"}});
    let (code, refused) = client
        .send("PATCH", &format!("{APPS}/statefulsets/sts"), MERGE, &patch)
        .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        refused["message"],
        r#"StatefulSet.apps "sts" is invalid: [spec.selector: Invalid value: {"matchLabels":{"app":"y"}}: field is immutable, spec.serviceName: Invalid value: "zz": field is immutable, spec.podManagementPolicy: Invalid value: "Parallel": field is immutable]"#
    );
    let never = json!({"spec": {"template": {"spec": {"restartPolicy": "Never"}}}});
    let (_, refused) = client
        .send("PATCH", &format!("{APPS}/statefulsets/sts"), MERGE, &never)
        .await;
    assert_eq!(
        refused["message"],
        r#"StatefulSet.apps "sts" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always""#
    );
}

#[tokio::test]
async fn generations_move_with_the_spec_and_a_daemon_sets_template_generation_with_its_template() {
    let client = Client::new(&pods());
    create(
        &client,
        "daemonsets",
        &workload("DaemonSet", "ds", selected(json!({}))),
    )
    .await;
    let ds = format!("{APPS}/daemonsets/ds");
    // A client's value of the template generation is not kept.
    let image = json!({"metadata": {"annotations": {"deprecated.daemonset.template.generation": "7"}},
                       "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}});
    let (_, updated) = client.send("PATCH", &ds, MERGE, &image).await;
    let generations = |o: &Value| {
        (
            o["metadata"]["annotations"]["deprecated.daemonset.template.generation"].clone(),
            o["metadata"]["generation"].clone(),
        )
    };
    assert_eq!(generations(&updated), (json!("2"), json!(2)));
    let (_, updated) = client
        .send(
            "PATCH",
            &ds,
            MERGE,
            &json!({"spec": {"minReadySeconds": 5}}),
        )
        .await;
    assert_eq!(generations(&updated), (json!("2"), json!(3)));

    create(
        &client,
        "deployments",
        &workload("Deployment", "dep", selected(json!({}))),
    )
    .await;
    let dep = format!("{APPS}/deployments/dep");
    let (_, annotated) = client
        .send(
            "PATCH",
            &dep,
            MERGE,
            &json!({"metadata": {"annotations": {"a": "b"}}}),
        )
        .await;
    assert_eq!(
        annotated["metadata"]["generation"], 2,
        "a Deployment's annotations move it"
    );
    let (_, labelled) = client
        .send(
            "PATCH",
            &dep,
            MERGE,
            &json!({"metadata": {"labels": {"l": "2"}}}),
        )
        .await;
    assert_eq!(labelled["metadata"]["generation"], 2, "its labels do not");
}

#[tokio::test]
async fn a_status_is_its_controllers_and_a_scale_writes_the_replicas() {
    let client = Client::new(&pods());
    let mut body = workload("Deployment", "dep", selected(json!({})));
    body["metadata"]["labels"] = json!({"l": "1"});
    create(&client, "deployments", &body).await;
    let dep = format!("{APPS}/deployments/dep");
    let status = json!({"metadata": {"labels": {"l": "9"}}, "spec": {"replicas": 7},
                        "status": {"replicas": 1, "readyReplicas": 1}});
    let (code, written) = client
        .send("PATCH", &format!("{dep}/status"), MERGE, &status)
        .await;
    assert_eq!(code, StatusCode::OK, "{written}");
    // The status alone: the spec, the generation and (a Deployment's) labels stay.
    assert_eq!(
        written["status"],
        json!({"replicas": 1, "readyReplicas": 1})
    );
    assert_eq!(
        (&written["spec"]["replicas"], &written["metadata"]["labels"]),
        (&json!(1), &json!({"l": "1"}))
    );
    assert_eq!(written["metadata"]["generation"], 1);
    let entry = &written["metadata"]["managedFields"][1];
    assert_eq!(entry["subresource"], "status");
    assert!(entry["fieldsV1"].get("f:metadata").is_none(), "{entry}");
    // A write to the object keeps it.
    let (_, kept) = client
        .send("PATCH", &dep, MERGE, &json!({"status": {"replicas": 5}}))
        .await;
    assert_eq!(kept["status"]["replicas"], 1);

    let (code, scale) = client.get(&format!("{dep}/scale")).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(
        (&scale["kind"], &scale["apiVersion"]),
        (&json!("Scale"), &json!("autoscaling/v1"))
    );
    assert_eq!(scale["status"], json!({"replicas": 1, "selector": "app=x"}));
    let (_, scaled) = client
        .send(
            "PATCH",
            &format!("{dep}/scale"),
            MERGE,
            &json!({"spec": {"replicas": 4}}),
        )
        .await;
    assert_eq!(scaled["spec"], json!({"replicas": 4}));
    let (_, after) = client.get(&dep).await;
    assert_eq!(
        (&after["spec"]["replicas"], &after["metadata"]["generation"]),
        (&json!(4), &json!(2))
    );

    create(
        &client,
        "replicasets",
        &workload("ReplicaSet", "rs", selected(json!({}))),
    )
    .await;
    let (code, refused) = client
        .send(
            "PATCH",
            &format!("{APPS}/replicasets/rs/scale"),
            MERGE,
            &json!({"spec": {"replicas": -3}}),
        )
        .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        refused["message"],
        r#"Scale.autoscaling "rs" is invalid: spec.replicas: Invalid value: -3: must be greater than or equal to 0"#
    );
    let (_, refused) = client
        .send(
            "PATCH",
            &format!("{APPS}/replicasets/rs/status"),
            MERGE,
            &json!({"status": {"replicas": -1}}),
        )
        .await;
    assert_eq!(
        refused["message"],
        "ReplicaSet.apps \"rs\" is invalid: [status.replicas: Invalid value: -1: must be greater than or equal to 0, status.fullyLabeledReplicas: Invalid value: 0: cannot be greater than status.replicas, status.readyReplicas: Invalid value: 0: cannot be greater than status.replicas, status.availableReplicas: Invalid value: 0: cannot be greater than status.replicas]"
    );
    // A DaemonSet has no scale.
    create(
        &client,
        "daemonsets",
        &workload("DaemonSet", "ds", selected(json!({}))),
    )
    .await;
    let (code, _) = client.get(&format!("{APPS}/daemonsets/ds/scale")).await;
    assert_eq!(code, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn apps_is_discovered_beside_pods_and_beside_a_scenario_of_deployments() {
    let resources = |list: &Value| -> Vec<String> {
        (list["resources"].as_array().unwrap().iter())
            .map(|r| r["name"].as_str().unwrap().to_owned())
            .collect()
    };
    // ControllerRevisions are listed and watched empty (`empty.rs`), the others kept.
    let all = [
        "controllerrevisions",
        "daemonsets",
        "daemonsets/status",
        "deployments",
        "deployments/scale",
        "deployments/status",
        "replicasets",
        "replicasets/scale",
        "replicasets/status",
        "statefulsets",
        "statefulsets/scale",
        "statefulsets/status",
    ];
    let beside_pods = Client::new(&pods());
    let (_, groups) = beside_pods.get("/apis").await;
    assert_eq!(
        groups["groups"][1]["name"], "apps",
        "kube-apiserver lists apps after apiregistration.k8s.io"
    );
    let (code, list) = beside_pods.get("/apis/apps/v1").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(resources(&list), all);
    let (_, deployments) = beside_pods.get("/apis/apps/v1/deployments").await;
    assert_eq!(deployments["items"], json!([]));

    // A scenario of Deployments serves apps itself; the records' kinds are listed beside
    // its own, and its Deployments are its objects, not records.
    let server = ApiServer::new(ObjectSpec {
        kind: ObjectKind::Deployment,
        ..ObjectSpec::pods(3)
    });
    let beside_deployments = Client::new(&server);
    let (_, list) = beside_deployments.get("/apis/apps/v1").await;
    assert_eq!(resources(&list), all);
    let (_, deployments) = beside_deployments.get("/apis/apps/v1/deployments").await;
    assert_eq!(deployments["items"].as_array().unwrap().len(), 3);
    let (code, _) = create(
        &beside_deployments,
        "replicasets",
        &workload("ReplicaSet", "rs", selected(json!({}))),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED);
    let (_, refused) = beside_deployments
        .get("/apis/apps/v1/replicasets?fieldSelector=spec.x%3D0")
        .await;
    assert_eq!(
        refused["message"],
        r#""spec.x" is not a known field selector: only "metadata.name", "metadata.namespace""#
    );
}
