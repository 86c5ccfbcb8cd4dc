use super::body::{BodyWire, duplicate_fields};
use super::server_fields::qos_class;
use super::*;
use k8s::LabelSelector;
use k8s::names::is_dns_subdomain;
use scenario::{Amount, ObjectSpec};
use serde_json::json;

use crate::routes::request as send;

const JSON: &str = "application/json";
const PODS: &str = "/api/v1/namespaces/default/pods";
/// A patch that adds the label `x=y`, in both merge patch flavours.
const LABEL_X: &str = r#"{"metadata":{"labels":{"x":"y"}}}"#;

fn web(extra: Value) -> String {
    let mut pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "app", "image": "app:1"}]},
    });
    json_patch::merge(&mut pod, &extra);
    pod.to_string()
}

fn server() -> ApiServer {
    ApiServer::new(crate::generate::test_spec())
}

#[tokio::test]
async fn create_sets_what_the_server_owns_and_a_second_create_conflicts() {
    let server = server();
    let rv = server.resource_version();
    let (code, pod) = send(&server, "POST", PODS, JSON, &web(json!({}))).await;
    assert_eq!(code, StatusCode::CREATED);
    let meta = &pod["metadata"];
    assert_eq!(meta["namespace"], "default");
    assert_eq!(meta["resourceVersion"], (rv + 1).to_string());
    assert_eq!(meta["generation"], 1);
    assert_eq!(meta["uid"].as_str().unwrap().len(), 36);
    assert_eq!(meta["managedFields"][0]["manager"], "kubectl");
    assert!(meta["managedFields"][0]["fieldsV1"]["f:spec"]["f:containers"].is_object());
    assert_eq!(pod["status"]["phase"], "Pending");
    assert_eq!(pod["status"]["qosClass"], "BestEffort");
    let (code, again) = send(&server, "POST", PODS, JSON, &web(json!({}))).await;
    assert_eq!(
        (code, &again["reason"]),
        (StatusCode::CONFLICT, &json!("AlreadyExists"))
    );
    let (code, got) = send(&server, "GET", &format!("{PODS}/web"), JSON, "").await;
    assert_eq!((code, got), (StatusCode::OK, pod));
}

#[tokio::test]
async fn generate_name_draws_a_suffix() {
    let server = server();
    let body = json!({"metadata": {"generateName": "job-"},
                      "spec": {"containers": [{"name": "c", "image": "i"}]}});
    let (code, pod) = send(&server, "POST", PODS, JSON, &body.to_string()).await;
    assert_eq!(code, StatusCode::CREATED);
    let name = pod["metadata"]["name"].as_str().unwrap();
    assert!(name.starts_with("job-") && name.len() == 9, "{name}");
}

#[tokio::test]
async fn patches_bump_the_generation_only_when_the_spec_changes() {
    let server = server();
    send(&server, "POST", PODS, JSON, &web(json!({}))).await;
    let uri = format!("{PODS}/web?fieldManager=tests");
    let smp = "application/strategic-merge-patch+json";
    let (code, labelled) = send(&server, "PATCH", &uri, smp, LABEL_X).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(labelled["metadata"]["generation"], 1);
    assert_eq!(
        labelled["metadata"]["labels"],
        json!({"app": "web", "x": "y"})
    );
    let managers: Vec<&Value> = labelled["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["manager"])
        .collect();
    assert_eq!(managers, [&json!("kubectl"), &json!("tests")]);
    let image = r#"{"spec":{"containers":[{"name":"app","image":"app:2"}]}}"#;
    let (_, updated) = send(&server, "PATCH", &uri, smp, image).await;
    assert_eq!(updated["metadata"]["generation"], 2);
    assert_eq!(updated["metadata"]["uid"], labelled["metadata"]["uid"]);
    assert_eq!(updated["status"], labelled["status"]);
}

#[tokio::test]
async fn patching_a_generated_pod_keeps_its_identity() {
    let server = server();
    let (_, list) = send(&server, "GET", "/api/v1/pods?limit=1", JSON, "").await;
    let pod = &list["items"][0];
    let uri = format!(
        "/api/v1/namespaces/{}/pods/{}",
        pod["metadata"]["namespace"].as_str().unwrap(),
        pod["metadata"]["name"].as_str().unwrap()
    );
    let merge = "application/merge-patch+json";
    let (code, patched) = send(&server, "PATCH", &uri, merge, LABEL_X).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(patched["metadata"]["uid"], pod["metadata"]["uid"]);
    assert_eq!(patched["spec"], pod["spec"]);
    let (_, selected) = send(&server, "GET", "/api/v1/pods?labelSelector=x%3Dy", JSON, "").await;
    assert_eq!(selected["items"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn deletes_answer_as_kube_apiserver_does_and_a_dry_run_create_has_no_version() {
    let server = ApiServer::new(ObjectSpec {
        kind: ObjectKind::ConfigMap,
        ..crate::generate::test_spec()
    });
    let configmaps = "/api/v1/namespaces/default/configmaps";
    let (code, dry) = send(
        &server,
        "POST",
        &format!("{configmaps}?dryRun=All"),
        JSON,
        r#"{"metadata":{"name":"empty"}}"#,
    )
    .await;
    assert_eq!(code, StatusCode::CREATED);
    assert!(dry["metadata"].get("resourceVersion").is_none(), "{dry}");
    // A manager that owns no field has no managedFields entry.
    assert!(dry["metadata"].get("managedFields").is_none(), "{dry}");
    let (_, created) = send(
        &server,
        "POST",
        configmaps,
        JSON,
        r#"{"metadata":{"name":"c"},"data":{"k":"v"}}"#,
    )
    .await;
    assert_eq!(
        created["metadata"]["managedFields"][0]["fieldsV1"]["f:data"]["f:k"],
        json!({})
    );
    // A ConfigMap's registry answers a delete with a Status naming what went; a Pod's
    // with the object (dry_run_answers_but_stores_nothing deletes one).
    let (code, status) = send(&server, "DELETE", &format!("{configmaps}/c"), JSON, "").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["status"], "Success");
    assert_eq!(status["details"]["name"], "c");
    assert_eq!(status["details"]["kind"], "configmaps");
    assert_eq!(status["details"]["uid"], created["metadata"]["uid"]);
}

#[tokio::test]
async fn dry_run_answers_but_stores_nothing() {
    let server = server();
    let rv = server.resource_version();
    let (code, _) = send(
        &server,
        "POST",
        &format!("{PODS}?dryRun=All"),
        JSON,
        &web(json!({})),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED);
    let (code, _) = send(&server, "GET", &format!("{PODS}/web"), JSON, "").await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    send(&server, "POST", PODS, JSON, &web(json!({}))).await;
    let options = r#"{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"]}"#;
    let (code, deleted) = send(&server, "DELETE", &format!("{PODS}/web"), JSON, options).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(
        deleted["kind"], "Pod",
        "a Pod's delete answers with the object"
    );
    let (code, _) = send(&server, "GET", &format!("{PODS}/web"), JSON, "").await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(
        server.resource_version(),
        rv + 1,
        "only the real create took a version"
    );
}

#[tokio::test]
async fn delete_collection_deletes_what_the_selector_selects() {
    let server = server();
    let ns = "/api/v1/namespaces/payments/pods";
    let (_, before) = send(&server, "GET", ns, JSON, "").await;
    let before = before["items"].as_array().unwrap().len();
    let selector = "app%20in%20(api,web)";
    let (_, matching) = send(
        &server,
        "GET",
        &format!("{ns}?labelSelector={selector}"),
        JSON,
        "",
    )
    .await;
    let matching = matching["items"].as_array().unwrap().len();
    assert!(matching > 0 && matching < before);
    let (code, deleted) = send(
        &server,
        "DELETE",
        &format!("{ns}?labelSelector={selector}"),
        JSON,
        "",
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(deleted["kind"], "PodList");
    assert_eq!(deleted["items"].as_array().unwrap().len(), matching);
    let (_, after) = send(&server, "GET", ns, JSON, "").await;
    assert_eq!(after["items"].as_array().unwrap().len(), before - matching);
}

#[tokio::test]
async fn bad_writes_get_kube_apiserver_status_codes_and_reasons() {
    let server = server();
    send(&server, "POST", PODS, JSON, &web(json!({}))).await;
    let (_, current) = send(&server, "GET", &format!("{PODS}/web"), JSON, "").await;
    let stale = web(json!({"metadata": {"resourceVersion": "1"}}));
    let item = format!("{PODS}/web");
    let smp = "application/strategic-merge-patch+json";
    let table: &[(&str, &str, &str, String, u16, &str)] = &[
        (
            "POST",
            PODS,
            JSON,
            "{not json".to_owned(),
            400,
            "BadRequest",
        ),
        (
            "POST",
            PODS,
            JSON,
            web(json!({"kind": "Secret"})),
            400,
            "BadRequest",
        ),
        (
            "POST",
            PODS,
            JSON,
            web(json!({"spec": {"containers": 3}})),
            400,
            "BadRequest",
        ),
        (
            "POST",
            PODS,
            JSON,
            web(json!({"metadata": {"name": null}})),
            422,
            "Invalid",
        ),
        (
            "POST",
            PODS,
            JSON,
            web(json!({"metadata": {"name": "Web_1"}})),
            422,
            "Invalid",
        ),
        (
            "POST",
            PODS,
            JSON,
            web(json!({"spec": {"containers": []}})),
            422,
            "Invalid",
        ),
        (
            "POST",
            PODS,
            JSON,
            web(json!({"metadata": {"namespace": "payments"}})),
            400,
            "BadRequest",
        ),
        (
            "POST",
            &format!("{PODS}?fieldValidation=Strict"),
            JSON,
            web(json!({"spec": {"nope": 1}})),
            400,
            "BadRequest",
        ),
        (
            "POST",
            &format!("{PODS}?dryRun=Some"),
            JSON,
            web(json!({})),
            422,
            "Invalid",
        ),
        (
            "POST",
            "/api/v1/namespaces/nowhere/pods",
            JSON,
            web(json!({})),
            404,
            "NotFound",
        ),
        (
            "POST",
            "/api/v1/namespaces/default/configmaps",
            JSON,
            "{}".to_owned(),
            405,
            "MethodNotAllowed",
        ),
        (
            "POST",
            "/api/v1/namespaces/default/widgets",
            JSON,
            "{}".to_owned(),
            404,
            "NotFound",
        ),
        ("PUT", &item, JSON, stale, 409, "Conflict"),
        (
            "PUT",
            &format!("{PODS}/other"),
            JSON,
            web(json!({})),
            400,
            "BadRequest",
        ),
        (
            "PUT",
            &format!("{PODS}/gone"),
            JSON,
            web(json!({"metadata": {"name": "gone"}})),
            404,
            "NotFound",
        ),
        (
            "PATCH",
            &item,
            JSON,
            "{}".to_owned(),
            415,
            "UnsupportedMediaType",
        ),
        // An apply names its manager.
        (
            "PATCH",
            &item,
            "application/apply-patch+yaml",
            "{}".to_owned(),
            422,
            "Invalid",
        ),
        ("PATCH", &item, smp, "[1]".to_owned(), 400, "BadRequest"),
        (
            "PATCH",
            &item,
            "application/json-patch+json",
            r#"[{"op":"remove","path":"/x"}]"#.to_owned(),
            422,
            "Invalid",
        ),
        (
            "PATCH",
            &item,
            smp,
            r#"{"metadata":{"name":"renamed"}}"#.to_owned(),
            400,
            "BadRequest",
        ),
        // A patch whose result has a field of the wrong type: 422 with the patch at fault
        // (the same body created or replaced is a 400).
        (
            "PATCH",
            &item,
            "application/merge-patch+json",
            r#"{"spec":{"containers":"none"}}"#.to_owned(),
            422,
            "Invalid",
        ),
        (
            "PATCH",
            &item,
            smp,
            r#"{"metadata":{"uid":"other"}}"#.to_owned(),
            409,
            "Conflict",
        ),
        (
            "DELETE",
            &item,
            JSON,
            r#"{"preconditions":{"uid":"other"}}"#.to_owned(),
            409,
            "Conflict",
        ),
        ("DELETE", &item, JSON, "[]".to_owned(), 400, "BadRequest"),
        // NegotiateInputSerializer: a media type with no decoder.
        (
            "POST",
            PODS,
            "text/plain",
            web(json!({"metadata": {"name": "plain"}})),
            415,
            "UnsupportedMediaType",
        ),
        ("PUT", &item, "text/plain", web(json!({})), 415, "UnsupportedMediaType"),
        // ValidateAnnotationsSize: 256 KiB of keys and values in all.
        (
            "POST",
            PODS,
            JSON,
            web(json!({"metadata": {"name": "big", "annotations": {"a": "x".repeat(256 * 1024)}}})),
            422,
            "Invalid",
        ),
        (
            "PATCH",
            &item,
            smp,
            json!({"metadata": {"annotations": {"a": "x".repeat(150_000), "b": "y".repeat(150_000)}}}).to_string(),
            422,
            "Invalid",
        ),
        // strategicpatch's directive errors.
        (
            "PATCH",
            &item,
            smp,
            r#"{"metadata":{"labels":{"$patch":"explode"}}}"#.to_owned(),
            400,
            "BadRequest",
        ),
        (
            "PATCH",
            &item,
            smp,
            r#"{"spec":{"$retainKeys":5,"containers":[]}}"#.to_owned(),
            400,
            "BadRequest",
        ),
        (
            "PATCH",
            &item,
            smp,
            r#"{"spec":{"$retainKeys":["containers"],"restartPolicy":"Never"}}"#.to_owned(),
            422,
            "Invalid",
        ),
        (
            "PATCH",
            &item,
            smp,
            r#"{"spec":{"containers":[{"image":"nameless:1"}]}}"#.to_owned(),
            400,
            "BadRequest",
        ),
        (
            "PATCH",
            &item,
            smp,
            r#"{"spec":{"containers":[{"name":"web","$patch":"merge"}]}}"#.to_owned(),
            400,
            "BadRequest",
        ),
        (
            "PATCH",
            &item,
            smp,
            r#"{"spec":{"$setElementOrder/containers":{"name":"web"}}}"#.to_owned(),
            400,
            "BadRequest",
        ),
        (
            "PATCH",
            &item,
            smp,
            r#"{"metadata":{"$deleteFromPrimitiveList/finalizers":"a"}}"#.to_owned(),
            400,
            "BadRequest",
        ),
    ];
    for (method, uri, content_type, body, code, reason) in table {
        let (got, status) = send(&server, method, uri, content_type, body).await;
        assert_eq!(
            (got.as_u16(), status["reason"].as_str().unwrap_or_default()),
            (*code, *reason),
            "{method} {uri} {body}: {status}"
        );
    }
    let (_, after) = send(&server, "GET", &item, JSON, "").await;
    assert_eq!(after, current, "no refused write changed the object");
}

#[tokio::test]
async fn phases_can_pick_a_label_selected_set() {
    let server = server();
    let selector = LabelSelector::parse("app=web").unwrap();
    let (_, web) = send(
        &server,
        "GET",
        "/api/v1/pods?labelSelector=app%3Dweb",
        JSON,
        "",
    )
    .await;
    let web = web["items"].as_array().unwrap().len() as u64;
    assert_eq!(server.delete(Amount::Fraction(1.0), &selector, 1), web);
    let (_, left) = send(
        &server,
        "GET",
        "/api/v1/pods?labelSelector=app%3Dweb",
        JSON,
        "",
    )
    .await;
    assert_eq!(left["items"].as_array().unwrap().len(), 0);
    assert_eq!(server.alive(), 1000 - web);
}

#[test]
fn qos_follows_requests_and_limits() {
    let spec = |resources: Value| json!({"containers": [{"resources": resources}]});
    assert_eq!(qos_class(&spec(json!({}))), "BestEffort");
    assert_eq!(
        qos_class(&spec(json!({"limits": {"cpu": "1", "memory": "1Gi"}}))),
        "Guaranteed"
    );
    assert_eq!(
        qos_class(&spec(json!({"requests": {"cpu": "1"}}))),
        "Burstable"
    );
}

#[test]
fn names_must_be_dns_subdomains() {
    assert!(is_dns_subdomain("web-1.a"));
    assert!(!is_dns_subdomain("Web"));
    assert!(!is_dns_subdomain("-web"));
    assert!(!is_dns_subdomain(""));
}

/// Random JSON built from the words patches use, directives included.
fn patch_value() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let words = proptest::sample::select(vec![
        "metadata",
        "labels",
        "annotations",
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "finalizers",
        "spec",
        "containers",
        "image",
        "ports",
        "containerPort",
        "status",
        "$patch",
        "$retainKeys",
        "$setElementOrder/containers",
        "$deleteFromPrimitiveList/finalizers",
        "replace",
        "delete",
        "app",
        "x",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        words.clone().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(words.clone(), inner, 0..4).prop_map(|m| {
                Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            }),
        ]
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Whatever the patch, the server answers with a status it means: never a panic,
    /// never a 500 but kube-apiserver's own for a resourceVersion that is not a number
    /// (crosscheck pins it); and a refused patch changes nothing.
    #[test]
    fn random_patches_never_panic(
        patch in patch_value(),
        content_type in proptest::sample::select(vec![
            "application/strategic-merge-patch+json",
            "application/merge-patch+json",
            "application/json-patch+json",
        ]),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let (code, answer, before, after) = runtime.block_on(async {
            let server = server();
            send(&server, "POST", PODS, JSON, &web(json!({"metadata": {"finalizers": ["a"]}}))).await;
            let item = format!("{PODS}/web");
            let (_, before) = send(&server, "GET", &item, JSON, "").await;
            let (code, answer) = send(&server, "PATCH", &item, content_type, &patch.to_string()).await;
            let (_, after) = send(&server, "GET", &item, JSON, "").await;
            (code, answer, before, after)
        });
        let bad_version = answer["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("resourceVersion ") && m.ends_with(" is not a number"));
        proptest::prop_assert!(code != StatusCode::INTERNAL_SERVER_ERROR || bad_version, "{answer}");
        if !code.is_success() {
            proptest::prop_assert_eq!(before, after);
        }
    }
}

#[tokio::test]
async fn invalid_objects_get_422_with_every_field_at_fault_and_nothing_is_stored() {
    let server = server();
    let item = format!("{PODS}/web");
    let cases = [
        (
            json!({"metadata": {"labels": {"bad key!": "x"}}}),
            "metadata.labels",
        ),
        (
            json!({"metadata": {"labels": {"app": "not a value"}}}),
            "metadata.labels",
        ),
        (
            json!({"metadata": {"labels": {"a/b/c": "x"}}}),
            "metadata.labels",
        ),
        (
            json!({"metadata": {"annotations": {"-bad": "x"}}}),
            "metadata.annotations",
        ),
        (
            json!({"spec": {"containers": [{"name": "Upper", "image": "i"}]}}),
            "spec.containers[0].name",
        ),
        (
            json!({"spec": {"containers": [{"name": "a", "image": "i"}, {"name": "a", "image": "j"}]}}),
            "spec.containers[1].name",
        ),
        (
            json!({"spec": {"activeDeadlineSeconds": 0}}),
            "spec.activeDeadlineSeconds",
        ),
    ];
    let rv = server.resource_version();
    for (extra, field) in cases {
        let (code, status) = send(&server, "POST", PODS, JSON, &web(extra.clone())).await;
        assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{extra}: {status}");
        assert_eq!(status["reason"], "Invalid", "{extra}");
        let causes = status["details"]["causes"].as_array().unwrap();
        assert!(
            causes.iter().any(|c| c["field"] == field),
            "{extra}: {status}"
        );
        assert!(
            status["message"].as_str().unwrap().contains(field),
            "{status}"
        );
    }
    // Every fault at once, as kube-apiserver lists them.
    let many = json!({"metadata": {"labels": {"bad key!": "x"}},
                      "spec": {"activeDeadlineSeconds": -1}});
    let (_, status) = send(&server, "POST", PODS, JSON, &web(many)).await;
    assert_eq!(
        status["details"]["causes"].as_array().unwrap().len(),
        2,
        "{status}"
    );
    assert!(
        status["message"].as_str().unwrap().contains(": ["),
        "{status}"
    );
    assert_eq!(server.resource_version(), rv, "nothing was stored");
    let (code, _) = send(&server, "GET", &item, JSON, "").await;
    assert_eq!(code, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn yaml_bodies_are_read_as_their_json_with_duplicates_and_errors_as_for_json() {
    const YAML: &str = "application/yaml";
    let server = server();
    let body = "metadata:\n  name: web\nspec:\n  containers:\n  - name: c\n    image: i\n";
    let (code, pod) = send(&server, "POST", PODS, YAML, body).await;
    assert_eq!(code, StatusCode::CREATED, "{pod}");
    assert_eq!(pod["spec"]["containers"][0]["image"], "i");
    let (_, json) = send(&server, "GET", &format!("{PODS}/web"), JSON, "").await;
    assert_eq!(json, pod);
    // A replace in YAML, with the version read.
    let rv = pod["metadata"]["resourceVersion"].as_str().unwrap();
    let replaced = body
        .replace(
            "name: web",
            &format!("name: web\n  resourceVersion: \"{rv}\""),
        )
        .replace("image: i", "image: j");
    let (code, pod) = send(&server, "PUT", &format!("{PODS}/web"), YAML, &replaced).await;
    assert_eq!(code, StatusCode::OK, "{pod}");
    assert_eq!(pod["spec"]["containers"][0]["image"], "j");
    // A key set twice is refused under strict validation, as in JSON.
    let twice = "metadata:\n  name: a\n  name: b\nspec:\n  containers: [{name: c, image: i}]\n";
    let strict = format!("{PODS}?fieldValidation=Strict");
    let (code, status) = send(&server, "POST", &strict, YAML, twice).await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{status}");
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .contains(r#"duplicate field "metadata.name""#)
    );
    let (code, status) = send(&server, "POST", PODS, YAML, "metadata: [web\n").await;
    assert_eq!(
        (code, &status["reason"]),
        (StatusCode::BAD_REQUEST, &json!("BadRequest"))
    );
    assert!(
        status["message"].as_str().unwrap().contains("yaml: "),
        "{status}"
    );
}

#[tokio::test]
async fn duplicate_keys_are_refused_under_strict_validation_and_warned_of_otherwise() {
    let server = server();
    let body = r#"{"metadata":{"name":"web","name":"other"},"spec":{"containers":[{"name":"c","image":"i"}]}}"#;
    let (code, status) = send(
        &server,
        "POST",
        &format!("{PODS}?fieldValidation=Strict"),
        JSON,
        body,
    )
    .await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{status}");
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .contains(r#"duplicate field "metadata.name""#),
        "{status}"
    );
    assert_eq!(
        duplicate_fields(
            br#"{"a":{"b":1,"b":2},"c":[{"d":1,"d":1}]}"#,
            BodyWire::Json
        ),
        [".a.b", ".c[0].d"]
    );
    assert!(duplicate_fields(br#"{"a":1,"b":{"a":2}}"#, BodyWire::Json).is_empty());
    // The default warns and keeps the last, as serde_json and kube-apiserver do.
    let (code, pod) = send(&server, "POST", PODS, JSON, body).await;
    assert_eq!(code, StatusCode::CREATED, "{pod}");
    assert_eq!(pod["metadata"]["name"], "other");
}

#[tokio::test]
async fn a_delete_with_a_parameter_of_the_wrong_type_is_400_and_deletes_nothing() {
    let server = server();
    let (code, _) = send(&server, "POST", PODS, JSON, &web(json!({}))).await;
    assert_eq!(code, StatusCode::CREATED);
    for query in ["gracePeriodSeconds=soon", "orphanDependents=maybe"] {
        let uri = format!("{PODS}/web?{query}");
        let (code, status) = send(&server, "DELETE", &uri, "", "").await;
        assert_eq!(code, StatusCode::BAD_REQUEST, "{query}: {status}");
        assert_eq!(status["kind"], "Status");
        let (code, _) = send(&server, "GET", &format!("{PODS}/web"), JSON, "").await;
        assert_eq!(code, StatusCode::OK, "{query}: the pod is still there");
    }
    let (code, _) = send(
        &server,
        "DELETE",
        &format!("{PODS}/web?gracePeriodSeconds=0"),
        "",
        "",
    )
    .await;
    assert_eq!(code, StatusCode::OK);
}
