//! The records over HTTP, as client-go's leader election and event recorders, kubectl
//! and kubectl describe use them, through one network router (the records live as long
//! as it does).

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::ApiServer;
use crate::generate::namespace;
use crate::protobuf;
use crate::routes::network_router;
use scenario::ObjectSpec;

pub(crate) const JSON: &str = "application/json";
/// The named groups `/apis` lists over TCP beside pods, in kube-apiserver's order.
pub(super) const NETWORK_GROUPS: [&str; 21] = [
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "resource.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "storagemigration.k8s.io",
];
pub(super) const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/default/leases";

/// A client of one network router.
pub(crate) struct Client {
    router: Router,
}

impl Client {
    pub(crate) fn new(server: &ApiServer) -> Client {
        Client {
            router: network_router(server.clone()),
        }
    }

    pub(crate) async fn raw(
        &self,
        method: &str,
        uri: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> (StatusCode, Vec<u8>) {
        let mut request = Request::builder().method(method).uri(uri).header(
            header::USER_AGENT,
            "leader-elector/v0.37.2 (linux/amd64) kubernetes/abc",
        );
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request
            .body(Body::from(body))
            .expect("a test request is well-formed");
        let response = self
            .router
            .clone()
            .oneshot(request)
            .await
            .expect("the router is infallible");
        let code = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("a body in memory reads");
        (code, bytes.to_vec())
    }

    pub(crate) async fn send(
        &self,
        method: &str,
        uri: &str,
        content_type: &str,
        body: &Value,
    ) -> (StatusCode, Value) {
        let body = match body {
            Value::Null => Vec::new(),
            body => body.to_string().into_bytes(),
        };
        let (code, bytes) = self
            .raw(method, uri, &[("content-type", content_type)], body)
            .await;
        (code, serde_json::from_slice(&bytes).unwrap_or_default())
    }

    pub(crate) async fn get(&self, uri: &str) -> (StatusCode, Value) {
        self.send("GET", uri, JSON, &Value::Null).await
    }

    /// The Table kubectl gets of `uri`, and its columns' names.
    pub(crate) async fn table(&self, uri: &str) -> (Value, Vec<String>) {
        let accept = "application/json;as=Table;g=meta.k8s.io;v=v1";
        let (code, bytes) = self
            .raw("GET", uri, &[("accept", accept)], Vec::new())
            .await;
        assert_eq!(code, StatusCode::OK, "{uri}");
        let table: Value = serde_json::from_slice(&bytes).expect("a Table is JSON");
        let titles = (table["columnDefinitions"]
            .as_array()
            .expect("columns")
            .iter())
        .map(|c| c["name"].as_str().expect("a column's name").to_owned())
        .collect();
        (table, titles)
    }

    /// The events of the watch `uri` (which ends by its `timeoutSeconds`), each line as
    /// JSON.
    pub(crate) async fn watch(&self, uri: &str, accept: &str) -> Vec<Value> {
        let (code, bytes) = self
            .raw("GET", uri, &[("accept", accept)], Vec::new())
            .await;
        assert_eq!(code, StatusCode::OK, "{uri}");
        let text = String::from_utf8(bytes).expect("a JSON watch is text");
        assert!(text.is_empty() || text.ends_with('\n'), "{text}");
        text.lines()
            .map(|line| {
                assert!(line.starts_with(r#"{"type":"#), "type first: {line}");
                serde_json::from_str(line).expect("each line is an event")
            })
            .collect()
    }
}

pub(crate) fn pods() -> ApiServer {
    ApiServer::new(ObjectSpec::pods(4))
}

pub(super) fn lease(name: &str, holder: &str, rv: Option<&str>) -> Value {
    let mut lease = json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15,
                 "acquireTime": "2026-01-01T00:00:00.000000Z",
                 "renewTime": "2026-01-01T00:00:00.000000Z", "leaseTransitions": 0},
    });
    if let Some(rv) = rv {
        lease["metadata"]["resourceVersion"] = json!(rv);
    }
    lease
}

/// A `v1` Event about pod `pod` in `ns`, as client-go's `record` writes one.
pub(crate) fn recorded(name: &str, ns: &str, pod: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": "test"}},
        "involvedObject": {"kind": "Pod", "namespace": ns, "name": pod, "uid": format!("uid-{pod}"), "apiVersion": "v1"},
        "reason": "Seen", "message": "seen ", "source": {"component": "myctl", "host": "node-1"},
        "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:00Z",
        "count": 1, "type": "Normal",
    })
}

#[tokio::test]
async fn leader_election_takes_renews_and_gives_up_a_lease_as_on_kube_apiserver() {
    let server = pods();
    let client = Client::new(&server);
    let one = format!("{LEASES}/myctl");
    let (code, missing) = client.get(&one).await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    assert_eq!(
        missing["message"],
        r#"leases.coordination.k8s.io "myctl" not found"#
    );
    assert_eq!(
        missing["details"],
        json!({"name": "myctl", "group": "coordination.k8s.io", "kind": "leases"})
    );

    let (code, taken) = client
        .send("POST", LEASES, JSON, &lease("myctl", "a_1", None))
        .await;
    assert_eq!(code, StatusCode::CREATED, "{taken}");
    let meta = &taken["metadata"];
    assert_eq!(meta["resourceVersion"], "2");
    assert_eq!(meta["uid"].as_str().map(str::len), Some(36));
    assert!(meta["creationTimestamp"].is_string());
    assert!(
        meta.get("generation").is_none(),
        "a Lease has no generation"
    );
    assert_eq!(meta["managedFields"][0]["manager"], "leader-elector");
    assert_eq!(meta["managedFields"][0]["operation"], "Update");
    assert_eq!(
        meta["managedFields"][0]["apiVersion"],
        "coordination.k8s.io/v1"
    );
    assert_eq!(
        meta["managedFields"][0]["fieldsV1"],
        json!({"f:spec": {"f:acquireTime": {}, "f:holderIdentity": {}, "f:leaseDurationSeconds": {},
                          "f:leaseTransitions": {}, "f:renewTime": {}}}),
        "kube-apiserver's entry for the same create"
    );
    let (code, again) = client
        .send("POST", LEASES, JSON, &lease("myctl", "b_2", None))
        .await;
    assert_eq!(
        (code, again["reason"].as_str()),
        (StatusCode::CONFLICT, Some("AlreadyExists"))
    );

    let mut renewed = lease("myctl", "a_1", Some("2"));
    renewed["spec"]["renewTime"] = json!("2026-01-01T00:00:02.000000Z");
    let (code, renewed) = client.send("PUT", &one, JSON, &renewed).await;
    assert_eq!(code, StatusCode::OK, "{renewed}");
    assert_eq!(renewed["metadata"]["resourceVersion"], "3");
    assert_eq!(renewed["metadata"]["uid"], taken["metadata"]["uid"]);
    assert_eq!(renewed["spec"]["renewTime"], "2026-01-01T00:00:02.000000Z");

    // Another candidate's update from the version it read before: the optimistic lock.
    let (code, stale) = client
        .send("PUT", &one, JSON, &lease("myctl", "b_2", Some("2")))
        .await;
    assert_eq!(code, StatusCode::CONFLICT);
    assert_eq!(
        stale["message"],
        r#"Operation cannot be fulfilled on leases.coordination.k8s.io "myctl": the object has been modified; please apply your changes to the latest version and try again"#
    );
    let (code, blind) = client
        .send("PUT", &one, JSON, &lease("myctl", "b_2", None))
        .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{blind}");

    let (code, gone) = client.send("DELETE", &one, JSON, &Value::Null).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(gone["status"], "Success");
    assert_eq!(gone["details"]["uid"], taken["metadata"]["uid"]);
    assert_eq!(client.get(&one).await.0, StatusCode::NOT_FOUND);
    // A PUT of a missing Lease creates it, as its strategy allows.
    let (code, created) = client
        .send("PUT", &one, JSON, &lease("myctl", "c_3", None))
        .await;
    assert_eq!(code, StatusCode::CREATED, "{created}");
    assert_ne!(created["metadata"]["uid"], taken["metadata"]["uid"]);
}

#[tokio::test]
async fn records_keep_their_own_resource_versions_and_leave_the_objects_alone() {
    let server = pods();
    let before = server.resource_version();
    let client = Client::new(&server);
    let ns = namespace(server.spec(), 0);
    for i in 0..3 {
        let name = format!("myctl-{i}");
        assert_eq!(
            client
                .send("POST", LEASES, JSON, &lease(&name, "a", None))
                .await
                .0,
            StatusCode::CREATED
        );
        let event = recorded(&format!("p.{i}"), &ns, "p");
        let uri = format!("/api/v1/namespaces/{ns}/events");
        assert_eq!(
            client.send("POST", &uri, JSON, &event).await.0,
            StatusCode::CREATED
        );
    }
    assert_eq!(
        server.resource_version(),
        before,
        "no record moves the objects' versions"
    );
    let (_, list) = client.get("/apis/coordination.k8s.io/v1/leases").await;
    assert_eq!(list["kind"], "LeaseList");
    assert_eq!(list["metadata"]["resourceVersion"], "7");
    assert_eq!(list["items"].as_array().map(Vec::len), Some(3));
    assert!(
        list["items"][0].get("kind").is_none(),
        "a list's items leave out their kind"
    );
    // In process, the server holds its objects alone.
    let (code, _) = crate::routes::request(&server, "GET", LEASES, JSON, "").await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    let (_, groups) = crate::routes::request(&server, "GET", "/apis", JSON, "").await;
    assert_eq!(groups["groups"], json!([]));
}

#[tokio::test]
async fn an_event_reads_in_either_version_with_its_fields_renamed_as_kube_apiserver_converts_them()
{
    let server = pods();
    let client = Client::new(&server);
    let ns = namespace(server.spec(), 1);
    let core = format!("/api/v1/namespaces/{ns}/events");
    let events = format!("/apis/events.k8s.io/v1/namespaces/{ns}/events");
    let (code, written) = client
        .send("POST", &core, JSON, &recorded("p.1", &ns, "p"))
        .await;
    assert_eq!(code, StatusCode::CREATED, "{written}");
    // Go's zero fields, as kube-apiserver answers.
    assert_eq!(written["eventTime"], Value::Null);
    assert_eq!(written["reportingComponent"], "");
    assert_eq!(written["reportingInstance"], "");
    let (code, read) = client.get(&format!("{events}/p.1")).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(read["apiVersion"], "events.k8s.io/v1");
    assert_eq!(read["regarding"]["name"], "p");
    assert_eq!(read["note"], "seen ");
    assert_eq!(read["deprecatedSource"]["component"], "myctl");
    assert_eq!(read["deprecatedCount"], 1);
    assert_eq!(read["deprecatedFirstTimestamp"], "2026-01-01T00:00:00Z");
    for gone in [
        "involvedObject",
        "message",
        "source",
        "count",
        "reportingController",
        "reportingComponent",
    ] {
        assert!(read.get(gone).is_none(), "{gone} in {read}");
    }
    // client-go's tools/events writes the new version: its series, then read in v1.
    let new = json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "q.1"},
        "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "example.com/myctl",
        "reportingInstance": "myctl-node-1", "action": "Reconcile", "reason": "Seen",
        "regarding": {"kind": "Pod", "namespace": ns, "name": "q"}, "note": "seen", "type": "Normal",
    });
    let (code, written) = client.send("POST", &events, JSON, &new).await;
    assert_eq!(code, StatusCode::CREATED, "{written}");
    assert_eq!(written["deprecatedSource"], json!({}));
    assert_eq!(written["deprecatedFirstTimestamp"], Value::Null);
    assert_eq!(
        written["metadata"]["managedFields"][0]["apiVersion"],
        "events.k8s.io/v1"
    );
    let series = json!({"series": {"count": 2, "lastObservedTime": "2026-01-01T00:00:05.000000Z"}});
    let merge = "application/merge-patch+json";
    let (code, _) = client
        .send("PATCH", &format!("{events}/q.1"), merge, &series)
        .await;
    assert_eq!(code, StatusCode::OK);
    let (_, read) = client.get(&format!("{core}/q.1")).await;
    assert_eq!(read["involvedObject"]["name"], "q");
    assert_eq!(read["reportingComponent"], "example.com/myctl");
    assert_eq!(read["message"], "seen");
    assert_eq!(read["series"]["count"], 2);
    assert_eq!(read["source"], json!({}));
    // Through events.k8s.io/v1 an Event's note cannot change.
    let (code, refused) = client
        .send(
            "PATCH",
            &format!("{events}/q.1"),
            merge,
            &json!({"note": "other"}),
        )
        .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(refused["details"]["causes"][0]["field"], "message");
}

#[tokio::test]
async fn events_are_selected_by_the_fields_kubectl_describe_asks_for() {
    let server = pods();
    let client = Client::new(&server);
    let ns = namespace(server.spec(), 0);
    let core = format!("/api/v1/namespaces/{ns}/events");
    for (name, pod) in [("a.1", "a"), ("a.2", "a"), ("b.1", "b")] {
        assert_eq!(
            client
                .send("POST", &core, JSON, &recorded(name, &ns, pod))
                .await
                .0,
            StatusCode::CREATED
        );
    }
    let names = |list: &Value| -> Vec<String> {
        list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| {
                i["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect()
    };
    let describe = format!(
        "{core}?fieldSelector=involvedObject.name%3Da%2CinvolvedObject.namespace%3D{ns}%2CinvolvedObject.uid%3Duid-a"
    );
    assert_eq!(names(&client.get(&describe).await.1), ["a.1", "a.2"]);
    let (_, other) = client
        .get("/apis/events.k8s.io/v1/events?fieldSelector=regarding.name%3Db")
        .await;
    assert_eq!(names(&other), ["b.1"]);
    let (_, source) = client
        .get(&format!(
            "{core}?fieldSelector=source%3Dmyctl,reason%3DSeen"
        ))
        .await;
    assert_eq!(names(&source).len(), 3);
    let (code, refused) = client
        .get(&format!("{core}?fieldSelector=spec.nodeName%3Dx"))
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    assert_eq!(
        refused["message"],
        "field label not supported: spec.nodeName"
    );
    let (code, gone) = client
        .send(
            "DELETE",
            &format!("{core}?labelSelector=app%3Dtest"),
            JSON,
            &Value::Null,
        )
        .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(gone["kind"], "EventList");
    assert_eq!(names(&gone).len(), 3);
    assert_eq!(names(&client.get(&core).await.1).len(), 0);
}

#[tokio::test]
async fn writes_kube_apiserver_refuses_are_refused_in_its_words() {
    let server = pods();
    let client = Client::new(&server);
    let mut invalid = lease("bad", "a", None);
    invalid["spec"]["leaseDurationSeconds"] = json!(0);
    let (code, refused) = client.send("POST", LEASES, JSON, &invalid).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        refused["message"],
        r#"Lease.coordination.k8s.io "bad" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"#
    );
    let ns = namespace(server.spec(), 0);
    let events = format!("/apis/events.k8s.io/v1/namespaces/{ns}/events");
    let unset = json!({"metadata": {"name": "x.1"}, "reason": "Seen", "type": "Normal",
                       "regarding": {"kind": "Pod", "namespace": ns, "name": "x"}});
    let (code, refused) = client.send("POST", &events, JSON, &unset).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        refused["message"],
        r#"Event "x.1" is invalid: eventTime: Required value"#
    );
    let mut elsewhere = recorded("y.1", &ns, "y");
    elsewhere["involvedObject"]["namespace"] = json!("other");
    let (code, refused) = client
        .send(
            "POST",
            &format!("/api/v1/namespaces/{ns}/events"),
            JSON,
            &elsewhere,
        )
        .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        refused["details"]["causes"][0]["field"],
        "involvedObject.namespace"
    );
    let (code, refused) = client
        .send(
            "POST",
            "/apis/coordination.k8s.io/v1/namespaces/nowhere/leases",
            JSON,
            &lease("x", "a", None),
        )
        .await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    assert_eq!(refused["message"], r#"namespaces "nowhere" not found"#);
    let mut strict = lease("strict", "a", None);
    strict["spec"]["holder"] = json!("typo");
    let (code, refused) = client
        .send(
            "POST",
            &format!("{LEASES}?fieldValidation=Strict"),
            JSON,
            &strict,
        )
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST);
    assert_eq!(
        refused["message"],
        r#"strict decoding error: unknown field "spec.holder""#
    );
    let watch = format!("{LEASES}?watch=true&resourceVersionMatch=NotOlderThan");
    let (code, refused) = client.get(&watch).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    assert_eq!(
        refused["message"],
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
    );
    let apply = "application/apply-patch+yaml";
    let (code, refused) = client
        .send(
            "PATCH",
            &format!("{LEASES}/x?fieldManager=m"),
            apply,
            &json!({}),
        )
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{refused}");
    assert!(
        (refused["message"].as_str().unwrap())
            .starts_with("Incorrect version specified in apply patch"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_lease_is_applied_server_side_created_then_updated_with_conflicts() {
    let client = Client::new(&pods());
    let apply = "application/apply-patch+yaml";
    let applying = |manager: &str| format!("{LEASES}/applied?fieldManager={manager}");
    let config = |holder: &str| {
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
               "metadata": {"name": "applied"}, "spec": {"holderIdentity": holder}})
    };
    let (code, made) = client
        .send("PATCH", &applying("a"), apply, &config("a"))
        .await;
    assert_eq!(code, StatusCode::CREATED, "{made}");
    assert_eq!(made["spec"]["holderIdentity"], "a");
    assert_eq!(made["metadata"]["managedFields"][0]["operation"], "Apply");
    assert_eq!(
        made["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:spec": {"f:holderIdentity": {}}})
    );
    let (code, again) = client
        .send("PATCH", &applying("a"), apply, &config("a"))
        .await;
    assert_eq!(
        (code, &again),
        (StatusCode::OK, &made),
        "nothing changed, nothing written"
    );
    let (code, conflict) = client
        .send("PATCH", &applying("b"), apply, &config("b"))
        .await;
    assert_eq!(code, StatusCode::CONFLICT, "{conflict}");
    let forcing = format!("{}&force=true", applying("b"));
    let (code, taken) = client.send("PATCH", &forcing, apply, &config("b")).await;
    assert_eq!(code, StatusCode::OK, "{taken}");
    assert_eq!(taken["spec"]["holderIdentity"], "b");
    assert_ne!(
        taken["metadata"]["resourceVersion"],
        made["metadata"]["resourceVersion"]
    );
    let (code, _) = client
        .send("PATCH", &format!("{LEASES}/applied"), apply, &config("c"))
        .await;
    assert_eq!(
        code,
        StatusCode::UNPROCESSABLE_ENTITY,
        "an apply names its manager"
    );
    let elsewhere = "/apis/coordination.k8s.io/v1/namespaces/nowhere/leases/applied?fieldManager=a";
    let (code, _) = client.send("PATCH", elsewhere, apply, &config("a")).await;
    assert_eq!(code, StatusCode::NOT_FOUND, "no namespace to create it in");
}

#[tokio::test]
async fn client_go_writes_and_reads_a_lease_in_protobuf() {
    let server = pods();
    let client = Client::new(&server);
    let body = protobuf::encode_document(&lease("myctl", "a_1", None)).expect("a Lease encodes");
    let headers = [
        ("content-type", protobuf::MEDIA_TYPE),
        (
            "accept",
            "application/vnd.kubernetes.protobuf,application/json",
        ),
    ];
    let (code, bytes) = client.raw("POST", LEASES, &headers, body).await;
    assert_eq!(code, StatusCode::CREATED);
    let taken = protobuf::decode_document(&bytes).expect("the answer is protobuf");
    assert_eq!(taken["spec"]["holderIdentity"], "a_1");
    assert_eq!(taken["spec"]["acquireTime"], "2026-01-01T00:00:00.000000Z");
    assert_eq!(taken["metadata"]["resourceVersion"], "2");
    let (code, bytes) = client.raw("GET", LEASES, &headers[1..], Vec::new()).await;
    assert_eq!(code, StatusCode::OK);
    let list = protobuf::decode_document(&bytes).expect("the list is protobuf");
    assert_eq!(list["kind"], "LeaseList");
    assert_eq!(list["items"][0]["metadata"]["name"], "myctl");
}

#[tokio::test]
async fn kubectl_finds_the_records_in_discovery_and_gets_their_tables() {
    let server = pods();
    let client = Client::new(&server);
    let (_, groups) = client.get("/apis").await;
    let names: Vec<&str> = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names, NETWORK_GROUPS,
        "kube-apiserver's order, the reviews' groups among them"
    );
    let (_, core) = client.get("/api/v1").await;
    let events = core["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "events")
        .cloned();
    assert_eq!(events.map(|e| e["shortNames"].clone()), Some(json!(["ev"])));
    let (_, leases) = client.get("/apis/coordination.k8s.io/v1").await;
    assert_eq!(leases["resources"][0]["kind"], "Lease");
    let (_, paths) = client.get("/openapi/v3").await;
    for root in [
        "api/v1",
        "apis/coordination.k8s.io/v1",
        "apis/events.k8s.io/v1",
    ] {
        let url = paths["paths"][root]["serverRelativeURL"]
            .as_str()
            .unwrap_or_default();
        let path = url.split('?').next().unwrap_or_default();
        let (code, document) = client.get(path).await;
        assert_eq!(code, StatusCode::OK, "{root}");
        assert!(
            document["components"]["schemas"]
                .as_object()
                .is_some_and(|s| !s.is_empty()),
            "{root}"
        );
    }
    let ns = namespace(server.spec(), 0);
    let core = format!("/api/v1/namespaces/{ns}/events");
    let mut event = recorded("p.1", &ns, "p");
    event["count"] = json!(3);
    client.send("POST", &core, JSON, &event).await;
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io";
    let (_, bytes) = client
        .raw(
            "GET",
            &format!("/apis/events.k8s.io/v1/namespaces/{ns}/events"),
            &[("accept", table)],
            Vec::new(),
        )
        .await;
    let table: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(table["kind"], "Table");
    let cells = &table["rows"][0]["cells"];
    assert_eq!(
        cells.as_array().unwrap()[1..5],
        [json!("Normal"), json!("Seen"), json!("pod/p"), json!("")]
    );
    assert_eq!(cells[5], "myctl, node-1");
    assert_eq!(cells[6], "seen", "the message trimmed");
    assert_eq!(cells[8], 3);
    assert_eq!(cells[9], "p.1");
}
