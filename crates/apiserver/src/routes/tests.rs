use super::*;
use std::time::Duration;

use axum::http::header;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use tokio::time::Instant;

use crate::generate::{self, ObjectId};
use crate::query::{decode_continue, encode_continue, parse_bool};
use k8s::LabelSelector;
use scenario::ObjectSpec;

#[tokio::test]
async fn every_refusal_is_a_status_with_kube_apiservers_code_and_reason() {
    let server = ApiServer::new(scenario::ObjectSpec::pods(20));
    let ns = crate::generate::namespace(server.spec(), 0);
    let pods = format!("/api/v1/namespaces/{ns}/pods");
    let too_large = "x".repeat(crate::extract::MAX_REQUEST_BODY_BYTES + 1);
    let json = "application/json";
    let cases: Vec<(&str, String, &str, &str, u16, &str)> = vec![
        ("GET", "/nope".into(), json, "", 404, "NotFound"),
        ("GET", "/api/v1/foos".into(), json, "", 404, "NotFound"),
        (
            "DELETE",
            "/version".into(),
            json,
            "",
            405,
            "MethodNotAllowed",
        ),
        ("POST", "/api".into(), json, "{}", 405, "MethodNotAllowed"),
        ("PUT", "/api/v1".into(), json, "{}", 405, "MethodNotAllowed"),
        ("PATCH", "/apis".into(), json, "{}", 405, "MethodNotAllowed"),
        (
            "POST",
            "/openapi/v3".into(),
            json,
            "{}",
            405,
            "MethodNotAllowed",
        ),
        (
            "DELETE",
            "/openapi/v3/api/v1".into(),
            json,
            "",
            405,
            "MethodNotAllowed",
        ),
        (
            "POST",
            "/api/v1/pods".into(),
            json,
            "{}",
            405,
            "MethodNotAllowed",
        ),
        (
            "PUT",
            format!("/api/v1/namespaces/{ns}"),
            json,
            "{}",
            405,
            "MethodNotAllowed",
        ),
        ("PUT", pods.clone(), json, "{}", 405, "MethodNotAllowed"),
        (
            "POST",
            format!("{pods}/x"),
            json,
            "{}",
            405,
            "MethodNotAllowed",
        ),
        (
            "GET",
            "/api/v1/namespaces/%FF/pods".into(),
            json,
            "",
            400,
            "BadRequest",
        ),
        ("GET", format!("{pods}/%FF%FE"), json, "", 400, "BadRequest"),
        ("DELETE", format!("{pods}/%C3"), json, "", 400, "BadRequest"),
        ("GET", "/api/v1/%FF".into(), json, "", 400, "BadRequest"),
        (
            "POST",
            pods.clone(),
            json,
            &too_large,
            413,
            "RequestEntityTooLarge",
        ),
        (
            "PUT",
            format!("{pods}/x"),
            json,
            &too_large,
            413,
            "RequestEntityTooLarge",
        ),
        (
            "PATCH",
            format!("{pods}/x"),
            "application/merge-patch+json",
            &too_large,
            413,
            "RequestEntityTooLarge",
        ),
        (
            "DELETE",
            pods.clone(),
            json,
            &too_large,
            413,
            "RequestEntityTooLarge",
        ),
        // kube-apiserver's ValidateDeleteOptions, in the query or the body.
        (
            "DELETE",
            format!("{pods}/x?propagationPolicy=Bogus"),
            json,
            "",
            422,
            "Invalid",
        ),
        (
            "DELETE",
            format!("{pods}/x"),
            json,
            r#"{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Bogus"}"#,
            422,
            "Invalid",
        ),
        (
            "DELETE",
            format!("{pods}?propagationPolicy=Never"),
            json,
            "",
            422,
            "Invalid",
        ),
    ];
    for (method, uri, content_type, body, code, reason) in cases {
        let (status, json) = request(&server, method, &uri, content_type, body).await;
        let at = format!("{method} {uri}");
        assert_eq!(status.as_u16(), code, "{at}: {json}");
        assert_eq!(json["kind"], "Status", "{at}: {json}");
        assert_eq!(json["code"], code, "{at}");
        assert_eq!(json["reason"], reason, "{at}");
        assert!(
            json["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{at}"
        );
    }
    // The limit is kube-apiserver's: a body of exactly 3 MiB is read (and refused for
    // what it says, not for its size).
    let limit = "x".repeat(crate::extract::MAX_REQUEST_BODY_BYTES);
    let (status, json) = request(&server, "POST", &pods, json, &limit).await;
    assert_eq!(status.as_u16(), 400, "{json}");
}

#[test]
fn continue_tokens_round_trip_and_garbage_is_rejected() {
    let spec = crate::generate::test_spec();
    let last = Version {
        id: ObjectId::new(17, 0, 1, 5),
        written: None,
    };
    let token = encode_continue(&spec, 42, &last);
    let (rv, key) = decode_continue(&token).unwrap();
    assert_eq!(rv, 42);
    assert_eq!(generate::index_of_name(&key.name), Some(17));
    assert_eq!(key.namespace, generate::namespace(&spec, 17));
    assert!(decode_continue("not base64!").is_err());
    assert!(decode_continue(&BASE64.encode(b"{}")).is_err());
}

async fn send(server: &ApiServer, method: &str, uri: &str) -> (StatusCode, serde_json::Value) {
    request(server, method, uri, "application/json", "").await
}

#[tokio::test]
async fn bad_requests_get_kube_apiserver_status_codes_and_reasons() {
    let server = ApiServer::new(crate::generate::test_spec());
    // A continue token, then compaction past it: it has expired.
    let (_, page) = send(&server, "GET", "/api/v1/pods?limit=10").await;
    let token = page["metadata"]["continue"].as_str().unwrap().to_owned();
    server.delete(scenario::Amount::Count(1), &LabelSelector::default(), 1);
    server.compact();
    let expired_continue = format!("/api/v1/pods?limit=10&continue={token}");
    let table: &[(&str, &str, u16, &str)] = &[
        ("GET", "/api/v1/widgets", 404, "NotFound"),
        (
            "GET",
            "/api/v1/namespaces/payments/widgets",
            404,
            "NotFound",
        ),
        ("GET", "/nothing/here", 404, "NotFound"),
        (
            "GET",
            "/api/v1/namespaces/payments/pods/no-such-pod",
            404,
            "NotFound",
        ),
        (
            "DELETE",
            "/api/v1/namespaces/payments/pods/no-such-pod",
            404,
            "NotFound",
        ),
        ("PUT", "/api/v1/pods", 405, "MethodNotAllowed"),
        ("GET", "/api/v1/pods?limit=ten", 400, "BadRequest"),
        ("GET", "/api/v1/pods?resourceVersion=x", 400, "BadRequest"),
        ("GET", "/api/v1/pods?timeoutSeconds=-1", 400, "BadRequest"),
        (
            "GET",
            "/api/v1/pods?resourceVersion=abc&limit=5",
            400,
            "BadRequest",
        ),
        (
            "GET",
            "/api/v1/pods?labelSelector=app%20in%20web",
            400,
            "BadRequest",
        ),
        (
            "GET",
            "/api/v1/configmaps?fieldSelector=spec.nodeName%3Dx",
            400,
            "BadRequest",
        ),
        ("GET", "/api/v1/pods?continue=garbage", 400, "BadRequest"),
        ("GET", "/api/v1/pods?continue=e30%3D", 400, "BadRequest"),
        (
            "GET",
            "/api/v1/pods?resourceVersion=0&resourceVersionMatch=Exact",
            422,
            "Invalid",
        ),
        (
            "GET",
            "/api/v1/pods?resourceVersionMatch=NotOlderThan",
            422,
            "Invalid",
        ),
        (
            "GET",
            "/api/v1/pods?resourceVersion=1&resourceVersionMatch=Newest",
            422,
            "Invalid",
        ),
        (
            "GET",
            "/api/v1/pods?sendInitialEvents=true&resourceVersionMatch=NotOlderThan",
            422,
            "Invalid",
        ),
        (
            "GET",
            "/api/v1/pods?watch=1&sendInitialEvents=true",
            422,
            "Invalid",
        ),
        (
            "GET",
            "/api/v1/pods?watch=1&resourceVersionMatch=NotOlderThan",
            422,
            "Invalid",
        ),
        (
            "GET",
            "/api/v1/pods?resourceVersion=5&limit=10",
            410,
            "Expired",
        ),
        ("GET", &expired_continue, 410, "Expired"),
        (
            "GET",
            "/api/v1/pods?resourceVersion=999999999",
            504,
            "Timeout",
        ),
    ];
    for &(method, uri, code, reason) in table {
        let (got, status) = send(&server, method, uri).await;
        assert_eq!(got.as_u16(), code, "{method} {uri}: {status}");
        assert_eq!(status["kind"], "Status", "{method} {uri}");
        assert_eq!(status["code"], code, "{method} {uri}");
        assert_eq!(status["reason"], reason, "{method} {uri}: {status}");
    }
    // A watch's unparsable resourceVersion: kube-apiserver's bare 500, with no reason
    // (its LIST answers 400, above).
    let uri = "/api/v1/pods?watch=1&resourceVersion=x";
    let (got, status) = send(&server, "GET", uri).await;
    assert_eq!(got.as_u16(), 500, "{uri}: {status}");
    assert_eq!(status["code"], 500, "{uri}");
    assert!(status.get("reason").is_none(), "{uri}: {status}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    /// Whatever the query, the server answers with a status it means: never a panic,
    /// never a 500 but kube-apiserver's own.
    #[test]
    fn random_queries_never_panic(
        pairs in proptest::collection::vec(
            (
                proptest::sample::select(vec![
                    "limit", "continue", "resourceVersion", "resourceVersionMatch", "watch",
                    "timeoutSeconds", "allowWatchBookmarks", "sendInitialEvents",
                    "labelSelector", "fieldSelector", "junk",
                ]),
                proptest::prelude::any::<String>(),
            ),
            0..6,
        ),
        path in proptest::sample::select(vec![
            "/api/v1/pods", "/api/v1/namespaces/payments/pods", "/api/v1/secrets",
        ]),
    ) {
        let query: String = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs.iter().map(|(k, v)| (*k, v.as_str())))
            .finish();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        let code = runtime.block_on(async {
            use tower::ServiceExt;
            // Few objects: most random `watch` values are true, and each such watch
            // sends every object first.
            let server = ApiServer::new(ObjectSpec::pods(20));
            let request = axum::http::Request::builder()
                .uri(format!("{path}?{query}&timeoutSeconds=1"))
                .body(Body::empty())
                .unwrap();
            let response = router(server).oneshot(request).await.unwrap();
            let code = response.status();
            // Drain the body too: streamed lists and watches generate as they go.
            let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
            (code, body)
        });
        let (code, body) = code;
        // kube-apiserver's one deliberate 500 here: a watch's resourceVersion that is not
        // a number. Any other would be this server failing.
        let deliberate = String::from_utf8_lossy(&body).contains("resourceVersion: Invalid value");
        proptest::prop_assert!(
            code != StatusCode::INTERNAL_SERVER_ERROR || deliberate,
            "{path}?{query} answered {code}"
        );
    }
}

#[tokio::test]
async fn huge_watch_timeout_is_capped_not_a_panic() {
    use tower::ServiceExt;
    let server = ApiServer::new(crate::generate::test_spec());
    let request = axum::http::Request::builder()
        .uri("/api/v1/pods?watch=1&resourceVersion=1000&timeoutSeconds=18446744073709551615")
        .body(Body::empty())
        .unwrap();
    let response = router(server).oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn too_old_watch_gets_one_error_event_then_the_stream_ends() {
    let server = ApiServer::new(crate::generate::test_spec());
    server.delete(scenario::Amount::Count(1), &LabelSelector::default(), 1);
    server.compact();
    let (code, _) = send(&server, "GET", "/api/v1/pods?watch=1&resourceVersion=3").await;
    assert_eq!(code, StatusCode::OK);
    use tower::ServiceExt;
    let request = axum::http::Request::builder()
        .uri("/api/v1/pods?watch=1&resourceVersion=3")
        .body(Body::empty())
        .unwrap();
    let response = router(server.clone()).oneshot(request).await.unwrap();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    let lines: Vec<serde_json::Value> = body
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["type"], "ERROR");
    assert_eq!(lines[0]["object"]["code"], 410);
    assert_eq!(lines[0]["object"]["reason"], "Expired");
}

/// Sends a GET with an `Accept` header; returns the body's lines as JSON.
pub(super) async fn get_accepting(
    server: &ApiServer,
    uri: &str,
    accept: &str,
) -> Vec<serde_json::Value> {
    use tower::ServiceExt;
    let request = axum::http::Request::builder()
        .uri(uri)
        .header(header::ACCEPT, accept)
        .body(Body::empty())
        .expect("a test request is well-formed");
    let response = router(server.clone()).oneshot(request).await.unwrap();
    let bytes = tokio::time::timeout(Duration::from_secs(1), body_so_far(response.into_body()))
        .await
        .unwrap();
    bytes
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| serde_json::from_slice(line).unwrap())
        .collect()
}

#[tokio::test(start_paused = true)]
async fn scans_in_chunks_answer_what_one_scan_answers() {
    use k8s::LabelSelector;
    use scenario::{Amount, ObjectSpec};
    let spec = ObjectSpec {
        count: 60,
        ..crate::generate::test_spec()
    };
    let whole = ApiServer::new(spec.clone());
    let chunked = ApiServer::new(spec);
    chunked.yield_during_scans(4);
    for server in [&whole, &chunked] {
        server.update(Amount::Count(9), &LabelSelector::default(), 3);
    }
    for uri in [
        "/api/v1/pods?labelSelector=app%3Dweb",
        "/api/v1/pods?labelSelector=app%3Dweb&limit=2",
        "/api/v1/namespaces/search/pods?limit=3",
        "/api/v1/pods?resourceVersion=61&resourceVersionMatch=Exact&labelSelector=app%3Dapi",
        "/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan\
         &allowWatchBookmarks=true&labelSelector=app%3Dapi",
    ] {
        let (a, b) = (
            get_accepting(&whole, uri, "application/json").await,
            get_accepting(&chunked, uri, "application/json").await,
        );
        assert!(!a.is_empty() && a.len() == b.len(), "{uri}");
        assert_eq!(a, b, "{uri}");
    }
}

#[tokio::test(start_paused = true)]
async fn metadata_clients_get_partial_object_metadata_on_list_and_watch() {
    let mut spec = crate::generate::test_spec();
    spec.count = 3;
    let server = ApiServer::new(spec.clone());
    // In JSON (protobuf_tests.rs has client-go's header, protobuf first).
    let accept =
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
    let list = get_accepting(&server, "/api/v1/pods", accept).await;
    assert_eq!(list[0]["kind"], "PartialObjectMetadataList");
    assert_eq!(list[0]["apiVersion"], "meta.k8s.io/v1");
    let items = list[0]["items"].as_array().unwrap();
    assert_eq!(items.len(), 3);
    for item in items {
        assert_eq!(item["kind"], "PartialObjectMetadata");
        assert!(item["metadata"]["uid"].is_string());
        assert!(item.get("spec").is_none() && item.get("status").is_none());
    }
    let watch = get_accepting(
        &server,
        "/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
    )
    .await;
    assert_eq!(watch.len(), 4, "{watch:?}");
    assert_eq!(watch[0]["object"]["kind"], "PartialObjectMetadata");
    assert!(watch[0]["object"].get("spec").is_none());
    assert_eq!(watch[3]["type"], "BOOKMARK");
    assert_eq!(watch[3]["object"]["apiVersion"], "meta.k8s.io/v1");
    // Without the parameter, whole objects.
    let full = get_accepting(&server, "/api/v1/pods", "application/json").await;
    assert_eq!(full[0]["kind"], "PodList");
    assert!(full[0]["items"][0].get("spec").is_some());
    // One object, as kube-apiserver serves it to a metadata client.
    let name = full[0]["items"][0]["metadata"]["name"].as_str().unwrap();
    let namespace = full[0]["items"][0]["metadata"]["namespace"]
        .as_str()
        .unwrap();
    let one = get_accepting(
        &server,
        &format!("/api/v1/namespaces/{namespace}/pods/{name}"),
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
    )
    .await;
    assert_eq!(one[0]["kind"], "PartialObjectMetadata");
    assert_eq!(one[0]["metadata"]["name"], name);
    assert!(one[0].get("spec").is_none());
}

#[tokio::test(start_paused = true)]
async fn an_accept_header_naming_nothing_this_server_writes_gets_406() {
    let server = ApiServer::new(crate::generate::test_spec());
    for accept in [
        "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
        "application/json;as=Widget;v=v1;g=meta.k8s.io",
        "text/csv",
        "application/yaml",
    ] {
        let answer = get_accepting(&server, "/api/v1/pods", accept).await;
        assert_eq!(answer[0]["code"], 406, "{accept}: {answer:?}");
        assert_eq!(answer[0]["reason"], "NotAcceptable", "{accept}");
    }
    // A v1beta1 table is skipped for what follows it.
    let accept = "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
    let answer = get_accepting(&server, "/api/v1/pods", accept).await;
    assert_eq!(answer[0]["kind"], "PodList");
}

/// What kubectl sends for `get`.
const KUBECTL_GET: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

#[tokio::test(start_paused = true)]
async fn kubectl_gets_tables_on_list_get_and_watch() {
    let mut spec = crate::generate::test_spec();
    spec.count = 3;
    let server = ApiServer::new(spec.clone());
    let list = get_accepting(&server, "/api/v1/pods?limit=2", KUBECTL_GET).await;
    let table = &list[0];
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["apiVersion"], "meta.k8s.io/v1");
    assert!(table["metadata"]["continue"].is_string(), "{table}");
    let names: Vec<_> = table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "Name",
            "Ready",
            "Status",
            "Restarts",
            "Age",
            "IP",
            "Node",
            "Nominated Node",
            "Readiness Gates"
        ]
    );
    let rows = table["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    // The first row is the first object in key order (namespace/name).
    let key = |i| {
        format!(
            "{}/{}",
            generate::namespace(&spec, i),
            generate::name(&spec, i)
        )
    };
    let first = (0..3).min_by_key(|&i| key(i)).unwrap();
    let name = generate::name(&spec, first);
    assert_eq!(rows[0]["cells"][0], name.as_str());
    assert_eq!(
        rows[0]["cells"].as_array().unwrap()[1..4],
        ["1/1", "Running", "0"]
    );
    assert_eq!(rows[0]["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(rows[0]["object"]["metadata"]["name"], name.as_str());
    // One object: a table of one row; includeObject chooses what the row carries.
    let namespace = generate::namespace(&spec, first);
    let one = format!("/api/v1/namespaces/{namespace}/pods/{name}");
    let got = get_accepting(&server, &format!("{one}?includeObject=Object"), KUBECTL_GET).await;
    assert_eq!(got[0]["rows"].as_array().unwrap().len(), 1);
    assert_eq!(got[0]["rows"][0]["object"]["kind"], "Pod");
    assert!(got[0]["rows"][0]["object"]["spec"].is_object());
    let got = get_accepting(&server, &format!("{one}?includeObject=None"), KUBECTL_GET).await;
    assert!(got[0]["rows"][0]["object"].is_null());
    let bad = get_accepting(&server, &format!("{one}?includeObject=All"), KUBECTL_GET).await;
    assert_eq!(bad[0]["code"], 400, "{bad:?}");
    // A watch: a table per event, the column definitions in the first only.
    let watch = get_accepting(
        &server,
        "/api/v1/pods?watch=true&resourceVersion=0",
        KUBECTL_GET,
    )
    .await;
    assert_eq!(watch.len(), 3, "{watch:?}");
    assert!(watch[0]["object"]["columnDefinitions"].is_array());
    for event in &watch[1..] {
        assert_eq!(event["object"]["kind"], "Table");
        assert!(event["object"]["columnDefinitions"].is_null(), "{event}");
        assert_eq!(event["object"]["rows"].as_array().unwrap().len(), 1);
    }
}

#[tokio::test]
async fn selectors_filter_lists_and_get_by_name_finds_one() {
    let spec = crate::generate::test_spec();
    let server = ApiServer::new(spec.clone());
    let name = generate::name(&spec, 4);
    let ns = generate::namespace(&spec, 4);
    let (_, list) = send(
        &server,
        "GET",
        &format!("/api/v1/pods?fieldSelector=metadata.name%3D{name}"),
    )
    .await;
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
    assert_eq!(list["kind"], "PodList");
    let (_, list) = send(
        &server,
        "GET",
        "/api/v1/pods?labelSelector=app%20in%20(api%2Cweb)",
    )
    .await;
    // `app` cycles through ten names every `namespaces` objects: api and web are a fifth.
    assert_eq!(
        list["items"].as_array().unwrap().len() as u64,
        spec.count / 5
    );
    let (code, pod) = send(
        &server,
        "GET",
        &format!("/api/v1/namespaces/{ns}/pods/{name}"),
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(pod["metadata"]["name"], name.as_str());
    let (_, other) = send(&server, "GET", "/api/v1/configmaps").await;
    assert_eq!(other["kind"], "ConfigMapList");
    assert!(other["items"].as_array().unwrap().is_empty());
    let (code, _) = send(
        &server,
        "DELETE",
        &format!("/api/v1/namespaces/{ns}/pods/{name}"),
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(server.alive(), spec.count - 1);
}

#[tokio::test(start_paused = true)]
async fn bookmarks_come_every_minute_and_just_before_the_deadline() {
    use futures::TryStreamExt;
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::{Api, WatchEvent, WatchParams};

    let server = ApiServer::new(crate::generate::test_spec());
    let head = server.resource_version().to_string();
    let api: Api<Pod> = Api::all(crate::transport::client(&server));
    let started = Instant::now();
    let stream = api
        .watch(&WatchParams::default().timeout(290), &head)
        .await
        .unwrap();
    let mut stream = std::pin::pin!(stream);
    let mut at = Vec::new();
    // Paused time: the runtime jumps to each timer when nothing else can run.
    while let Some(event) = stream.try_next().await.unwrap() {
        let WatchEvent::Bookmark(b) = event else {
            panic!("unexpected {event:?}");
        };
        assert_eq!(b.metadata.resource_version, head);
        at.push((Instant::now() - started).as_secs());
    }
    assert_eq!(at, [60, 120, 180, 240, 288]);
    assert_eq!(
        (Instant::now() - started).as_secs(),
        290,
        "the stream ends at its timeout"
    );
}

#[test]
fn booleans_are_true_unless_zero_or_false() {
    for truthy in ["1", "true", "True", "yes", "", "no", "t"] {
        assert!(parse_bool(truthy), "{truthy:?}");
    }
    for falsy in ["0", "false", "FALSE", "FaLsE"] {
        assert!(!parse_bool(falsy), "{falsy:?}");
    }
}

/// Found by the query fuzz target: an exact read at a resourceVersion from the future is
/// kube-apiserver's 504 Timeout, as a `Status`.
#[tokio::test]
async fn an_exact_list_from_the_future_is_a_504_status() {
    let input = include_bytes!("../../../../tests/fixtures/fuzz/query-future-resource-version");
    // The target's first byte picks the form: 'c' % 5 == 4, an exact read at this version.
    assert_eq!(input[0] % 5, 4);
    let rv = std::str::from_utf8(&input[1..]).unwrap();
    let server = ApiServer::new(ObjectSpec::pods(30));
    assert!(rv.parse::<u64>().unwrap() > server.resource_version());
    let uri = format!("/api/v1/pods?resourceVersion={rv}&resourceVersionMatch=Exact&limit=3");
    let (code, body) = send(&server, "GET", &uri).await;
    assert_eq!(code, StatusCode::GATEWAY_TIMEOUT, "{body}");
    assert_eq!(body["kind"], "Status");
    assert_eq!(body["reason"], "Timeout");
}

#[tokio::test(start_paused = true)]
async fn namespaces_are_listed_and_got_as_json_metadata_or_tables() {
    let spec = crate::generate::test_spec();
    let server = ApiServer::new(spec.clone());
    let mut expected: Vec<String> = (0..spec.namespaces)
        .map(|i| generate::namespace(&spec, i))
        .chain(["default", "kube-node-lease", "kube-public", "kube-system"].map(String::from))
        .collect();
    expected.sort();
    expected.dedup();
    let list = &get_accepting(&server, "/api/v1/namespaces", "application/json").await[0];
    assert_eq!(list["kind"], "NamespaceList");
    let names: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, expected);
    assert!(
        list["items"][0].get("kind").is_none(),
        "items leave out kind"
    );
    let table = &get_accepting(&server, "/api/v1/namespaces", KUBECTL_GET).await[0];
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["rows"][0]["cells"][0], expected[0].as_str());
    assert_eq!(table["rows"][0]["cells"][1], "Active");
    assert_eq!(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");
    let metadata = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
    let partial = &get_accepting(&server, "/api/v1/namespaces", metadata).await[0];
    assert_eq!(partial["items"][0]["kind"], "PartialObjectMetadata");
    let one = &get_accepting(&server, "/api/v1/namespaces/default", KUBECTL_GET).await[0];
    assert_eq!(one["rows"].as_array().unwrap().len(), 1);
    let whole = &get_accepting(&server, "/api/v1/namespaces/default", "application/json").await[0];
    assert_eq!(whole["kind"], "Namespace");
    let system = &get_accepting(
        &server,
        "/api/v1/namespaces/kube-system",
        "application/json",
    )
    .await[0];
    assert_ne!(system["metadata"]["uid"], whole["metadata"]["uid"]);
    let missing = &get_accepting(&server, "/api/v1/namespaces/nope", "application/json").await[0];
    assert_eq!(missing["code"], 404);
    let watch =
        &get_accepting(&server, "/api/v1/namespaces?watch=true", "application/json").await[0];
    assert_eq!(watch["code"], 405, "{watch}");
    let (_, discovery) = send(&server, "GET", "/api/v1").await;
    let namespaces = discovery["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "namespaces")
        .expect("discovery names namespaces");
    assert_eq!(namespaces["namespaced"], false);
}
