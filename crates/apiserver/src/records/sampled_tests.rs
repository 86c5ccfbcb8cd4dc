//! Built-in kinds the generator does not make, from a sample, over TCP. Those the records
//! (or the Services there are not) answer for otherwise: Leases (a node-lease informer),
//! Events in either version (an event exporter), Services; the scenario's objects take
//! the resource's place, listed, watched and written at its path, the resource and its
//! group in discovery once, and Events' other version not served beside them. And any
//! of them under kube-apiserver's names: `kubectl get rs`, `kubectl get all`, Endpoints.

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::tests::{Client, lease, recorded};
use crate::ApiServer;
use crate::records::written_at;
use scenario::Scenario;

/// A server of 6 copies of `sample`, in 2 namespaces. The directory holds the files the
/// scenario was loaded from.
fn served(sample: &Value) -> (ApiServer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sample.json"), sample.to_string()).unwrap();
    let scenario = "name = \"sampled-records\"\n\
                    [objects]\ncount = 6\nnamespaces = 2\nsample = \"sample.json\"\n\
                    [[variant]]\nname = \"dynamic\"\n[[phase]]\nkind = \"list\"\n";
    let file = dir.path().join("scenario.toml");
    std::fs::write(&file, scenario).unwrap();
    let objects = Scenario::load(&file).unwrap().objects;
    (ApiServer::new(objects), dir)
}

/// The named groups `/apis` lists.
async fn groups(client: &Client) -> Vec<String> {
    let (code, list) = client.get("/apis").await;
    assert_eq!(code, StatusCode::OK);
    let groups = list["groups"].as_array().unwrap().iter();
    groups
        .map(|g| g["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The resources named `plural` that the group version at `root` lists.
async fn listed(client: &Client, root: &str, plural: &str) -> Vec<Value> {
    let (code, list) = client.get(root).await;
    assert_eq!(code, StatusCode::OK, "{root}");
    let resources = list["resources"].as_array().unwrap().iter();
    resources.filter(|r| r["name"] == plural).cloned().collect()
}

/// The names of the objects a LIST of `uri` gives.
async fn names(client: &Client, uri: &str) -> Vec<String> {
    let (code, list) = client.get(uri).await;
    assert_eq!(code, StatusCode::OK, "{uri}: {list}");
    let items = list["items"].as_array().unwrap().iter();
    items
        .map(|o| o["metadata"]["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn sampled_leases_are_the_servers_leases_and_its_group_is_listed_once() {
    let (server, _dir) = served(&lease("node-1", "node-1", None));
    // Two routers on one group's paths would panic here.
    let client = Client::new(&server);
    let groups = groups(&client).await;
    let coordination = groups.iter().filter(|g| *g == "coordination.k8s.io");
    assert_eq!(coordination.count(), 1, "{groups:?}");
    assert!(groups.contains(&"events.k8s.io".to_owned()), "{groups:?}");
    let root = "/apis/coordination.k8s.io/v1";
    assert_eq!(listed(&client, root, "leases").await.len(), 1);
    let all = format!("{root}/leases");
    assert_eq!(names(&client, &all).await.len(), 6);
    // A program's own Lease (leader election) is one more of them.
    let path = format!("{root}/namespaces/default/leases");
    let (code, _) = client
        .send(
            "POST",
            &path,
            "application/json",
            &lease("myctl", "a", None),
        )
        .await;
    assert_eq!(code, StatusCode::CREATED);
    assert!(names(&client, &all).await.contains(&"myctl".to_owned()));
    // `run`'s gate holds them until the phase lets the program list, as any of the
    // scenario's objects; Events are still records, let through.
    assert!(!written_at(server.spec().kind, &path));
    let events = "/apis/events.k8s.io/v1/namespaces/default/events";
    assert!(written_at(server.spec().kind, events));
}

#[tokio::test]
async fn sampled_services_are_listed_where_the_empty_services_were() {
    let service = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
    });
    let (server, _dir) = served(&service);
    let client = Client::new(&server);
    let services = listed(&client, "/api/v1", "services").await;
    assert_eq!(services.len(), 1, "{services:?}");
    assert!(
        services[0]["verbs"]
            .as_array()
            .unwrap()
            .contains(&json!("create"))
    );
    assert_eq!(names(&client, "/api/v1/services").await.len(), 6);
    let (code, _) = client
        .get("/api/v1/namespaces/payments/services/web-bbbbb")
        .await;
    assert_eq!(code, StatusCode::OK);
}

#[tokio::test]
async fn sampled_core_events_take_both_versions_of_events() {
    let (server, _dir) = served(&recorded("web.1", "default", "web"));
    let client = Client::new(&server);
    assert_eq!(listed(&client, "/api/v1", "events").await.len(), 1);
    assert_eq!(names(&client, "/api/v1/events").await.len(), 6);
    // A list's items carry no type, though an Event's `count` sorts between its
    // `apiVersion` and `kind`.
    let (_, list) = client.get("/api/v1/events").await;
    let item = &list["items"][0];
    assert!(
        item.get("apiVersion").is_none() && item.get("kind").is_none(),
        "{item}"
    );
    assert_eq!(item["count"], 1, "{item}");
    let groups = groups(&client).await;
    assert!(!groups.contains(&"events.k8s.io".to_owned()), "{groups:?}");
    let (code, _) = client.get("/apis/events.k8s.io/v1/events").await;
    assert_eq!(code, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn sampled_events_of_events_k8s_io_take_both_versions_of_events() {
    let event = json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "web.1", "namespace": "default"},
        "regarding": {"kind": "Pod", "name": "web", "namespace": "default"},
        "reason": "Scheduled", "note": "assigned", "type": "Normal", "action": "Binding",
        "reportingController": "default-scheduler", "reportingInstance": "s-1",
        "eventTime": "2026-01-01T00:00:00.000000Z",
    });
    let (server, _dir) = served(&event);
    let client = Client::new(&server);
    let groups = groups(&client).await;
    let events = groups.iter().filter(|g| *g == "events.k8s.io");
    assert_eq!(events.count(), 1, "{groups:?}");
    assert_eq!(
        names(&client, "/apis/events.k8s.io/v1/events").await.len(),
        6
    );
    assert!(listed(&client, "/api/v1", "events").await.is_empty());
    let (code, _) = client.get("/api/v1/events").await;
    assert_eq!(code, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_sampled_built_in_kind_has_kube_apiservers_names() {
    let replica_set = json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "web-7d9f8", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}},
    });
    let (server, _dir) = served(&replica_set);
    let client = Client::new(&server);
    let replica_sets = listed(&client, "/apis/apps/v1", "replicasets").await;
    assert_eq!(replica_sets[0]["shortNames"], json!(["rs"]));
    assert_eq!(replica_sets[0]["categories"], json!(["all"]));
    // A plural kube's guess gets wrong ("endpointses").
    let endpoints = json!({
        "apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": "web", "namespace": "default"},
        "subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}],
    });
    let (server, _dir) = served(&endpoints);
    let client = Client::new(&server);
    let listed = listed(&client, "/api/v1", "endpoints").await;
    assert_eq!(listed[0]["shortNames"], json!(["ep"]));
    assert_eq!(names(&client, "/api/v1/endpoints").await.len(), 6);
}

#[tokio::test]
async fn a_sampled_job_has_its_schemas_for_kubectl_explain_and_merges_along_them() {
    let job = json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "report", "namespace": "default"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
            {"name": "main", "image": "report:1"}, {"name": "side", "image": "envoy:1"},
        ]}}},
    });
    let (server, _dir) = served(&job);
    let client = Client::new(&server);
    let (code, document) = client.get("/openapi/v3/apis/batch/v1").await;
    assert_eq!(code, StatusCode::OK);
    let schemas = document["components"]["schemas"].as_object().unwrap();
    let described = &schemas["io.k8s.api.batch.v1.JobSpec"]["properties"]["backoffLimit"];
    assert!(described["description"].is_string(), "{described}");
    // Every schema it refers to is there (a pod template's), and none of another group's.
    let text = document["components"].to_string();
    for name in text.split("\"#/components/schemas/").skip(1) {
        let name = name.split('"').next().unwrap();
        assert!(
            schemas.contains_key(name),
            "{name} is referred to, not there"
        );
    }
    assert!(!schemas.keys().any(|name| name.contains(".rbac.")));
    // kubectl apply's strategic merge of a copy: its containers merge on `name`.
    let (code, list) = client.get("/apis/batch/v1/jobs?limit=1").await;
    assert_eq!(code, StatusCode::OK);
    let meta = &list["items"][0]["metadata"];
    let one = format!(
        "/apis/batch/v1/namespaces/{}/jobs/{}",
        meta["namespace"].as_str().unwrap(),
        meta["name"].as_str().unwrap()
    );
    let patch = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "main", "image": "report:2"},
    ]}}}});
    let smp = "application/strategic-merge-patch+json";
    let (code, patched) = client.send("PATCH", &one, smp, &patch).await;
    assert_eq!(code, StatusCode::OK, "{patched}");
    let containers = &patched["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers[0]["image"], "report:2");
    assert_eq!(containers[1]["image"], "envoy:1");
}

#[tokio::test]
async fn beside_sampled_jobs_cron_jobs_are_records_in_the_scenarios_own_group() {
    let job = json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "report", "namespace": "default"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
            {"name": "main", "image": "report:1"},
        ]}}},
    });
    let (server, _dir) = served(&job);
    let client = Client::new(&server);
    let groups = groups(&client).await;
    let batch: Vec<&String> = groups.iter().filter(|g| *g == "batch").collect();
    assert_eq!(batch, ["batch"], "the group is listed once");
    // In kube-apiserver's order: the sample's group among the records', not last.
    assert_eq!(groups, super::tests::NETWORK_GROUPS);
    assert_eq!(listed(&client, "/apis/batch/v1", "jobs").await.len(), 1);
    let cron_jobs = listed(&client, "/apis/batch/v1", "cronjobs").await;
    assert_eq!(cron_jobs[0]["shortNames"], json!(["cj"]), "{cron_jobs:?}");
    let cron_job = json!({"apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": "nightly"},
        "spec": {"schedule": "@daily", "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "x"}]}}}}}});
    let root = "/apis/batch/v1/namespaces/default/cronjobs";
    let (code, created) = client
        .send("POST", root, super::tests::JSON, &cron_job)
        .await;
    assert_eq!(code, StatusCode::CREATED, "{created}");
    assert_eq!(names(&client, root).await, ["nightly"]);
    assert_eq!(
        names(&client, "/apis/batch/v1/jobs").await.len(),
        6,
        "the Jobs are the scenario's copies, not records"
    );
}

#[tokio::test]
async fn a_sampled_kind_of_kubernetes_own_is_printed_by_its_printer() {
    let service = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
                 "selector": {"app": "web"}, "ports": [{"port": 80, "protocol": "TCP"}]},
    });
    let (server, _dir) = served(&service);
    let client = Client::new(&server);
    let (table, titles) = client.table("/api/v1/services").await;
    assert_eq!(
        titles,
        [
            "Name",
            "Type",
            "Cluster-IP",
            "External-IP",
            "Port(s)",
            "Age",
            "Selector"
        ]
    );
    let cells = table["rows"][0]["cells"].as_array().unwrap();
    assert_eq!(
        [&cells[1], &cells[2], &cells[3], &cells[4], &cells[6]],
        ["ClusterIP", "10.96.0.10", "<none>", "80/TCP", "app=web"]
    );
}
