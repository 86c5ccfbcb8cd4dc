//! Server-side apply against what kube-apiserver v1.37.2 answered for the same requests
//! (the managedFields below are its, read back with `kubectl get --show-managed-fields`).

use serde_json::{Value, json};

use super::*;
use scenario::{ObjectKind, widgets};

const NOW: &str = "2026-11-27T08:00:00Z";

fn writer(manager: &str) -> Writer<'_> {
    Writer {
        manager,
        subresource: None,
    }
}

fn deployment(replicas: u32, image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{
                    "name": "app",
                    "image": image,
                    "ports": [{"containerPort": 80}],
                }]},
            },
        },
    })
}

/// The object `applied` made, with its managedFields, as the server would store it.
fn stored(applied: Applied) -> Value {
    let mut object = applied.object;
    object["metadata"]["managedFields"] = Value::Array(applied.managed_fields);
    object
}

fn apply_as(manager: &str, live: Option<&Value>, config: &Value) -> Result<Value, ApplyError> {
    let now = json!(NOW);
    let kind = ObjectKind::Deployment;
    apply(
        &Typed::of(kind),
        live,
        config,
        (writer(manager), false),
        &now,
    )
    .map(stored)
}

fn fields_of<'a>(object: &'a Value, manager: &str) -> &'a Value {
    let entries = object["metadata"]["managedFields"].as_array().unwrap();
    let entry = entries.iter().find(|e| e["manager"] == manager);
    &entry.unwrap_or_else(|| panic!("no entry of {manager}: {entries:?}"))["fieldsV1"]
}

#[test]
fn an_apply_owns_exactly_what_its_configuration_sets() {
    let made = apply_as("alice", None, &deployment(2, "nginx:1")).unwrap();
    assert_eq!(made["spec"]["replicas"], 2);
    let entries = made["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["operation"], "Apply");
    assert_eq!(entries[0]["time"], NOW);
    // kube-apiserver's set for this configuration: no name, kind or apiVersion; list
    // elements by key (a port by its key fields, the default protocol filled in), marked
    // owned with "."; struct fields owned through their leaves.
    assert_eq!(
        fields_of(&made, "alice"),
        &json!({
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {
                "f:replicas": {},
                "f:selector": {},
                "f:template": {
                    "f:metadata": {"f:labels": {"f:app": {}}},
                    "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {
                        ".": {},
                        "f:image": {},
                        "f:name": {},
                        "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {
                            ".": {},
                            "f:containerPort": {},
                        }},
                    }}},
                },
            },
        })
    );
}

#[test]
fn another_managers_different_value_conflicts_unless_forced_and_the_same_value_is_shared() {
    let made = apply_as("alice", None, &deployment(2, "nginx:1")).unwrap();
    let bob = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"}, "spec": {"replicas": 3}});
    let refused = apply_as("bob", Some(&made), &bob).unwrap_err();
    assert_eq!(
        refused,
        ApplyError::Conflict {
            message: "Apply failed with 1 conflict: conflict with \"alice\": .spec.replicas"
                .to_owned(),
            causes: vec![(
                "conflict with \"alice\"".to_owned(),
                ".spec.replicas".to_owned()
            )],
        }
    );

    let same = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"}, "spec": {"replicas": 2}});
    let shared = apply_as("bob", Some(&made), &same).unwrap();
    assert_eq!(
        fields_of(&shared, "bob"),
        &json!({"f:spec": {"f:replicas": {}}})
    );
    assert_eq!(
        fields_of(&shared, "alice")["f:spec"]["f:replicas"],
        json!({})
    );
    let bobs = &shared["metadata"]["managedFields"].as_array().unwrap()[0];
    assert!(
        bobs.get("time").is_none(),
        "an apply that changes nothing is not dated, and sorts first: {bobs}"
    );
    let later = json!("2026-11-27T09:00:00Z");
    let kind = ObjectKind::Deployment;
    let again = apply(
        &Typed::of(kind),
        Some(&made),
        &deployment(2, "nginx:1"),
        (writer("alice"), false),
        &later,
    );
    let again = stored(again.unwrap());
    assert_eq!(
        again["metadata"]["managedFields"][0]["time"], NOW,
        "an apply that changes nothing keeps its entry's time"
    );

    let now = json!(NOW);
    let kind = ObjectKind::Deployment;
    let forced = stored(
        apply(
            &Typed::of(kind),
            Some(&made),
            &bob,
            (writer("bob"), true),
            &now,
        )
        .unwrap(),
    );
    assert_eq!(forced["spec"]["replicas"], 3);
    assert!(
        fields_of(&forced, "alice")["f:spec"]
            .get("f:replicas")
            .is_none()
    );
    assert_eq!(
        fields_of(&forced, "bob"),
        &json!({"f:spec": {"f:replicas": {}}})
    );
}

#[test]
fn what_the_applier_stops_setting_goes_unless_another_manager_owns_it() {
    let mut config = deployment(2, "nginx:1");
    config["metadata"]["labels"]["tier"] = json!("front");
    let made = apply_as("alice", None, &config).unwrap();
    let mut labelled = made.clone();
    labelled["metadata"]["labels"]["color"] = json!("blue");
    let now = json!(NOW);
    let kind = ObjectKind::Deployment;
    let entries = update(kind, Some(&made), &labelled, writer("kubectl-label"), &now);
    assert_eq!(
        entries[1]["fieldsV1"],
        json!({"f:metadata": {"f:labels": {"f:color": {}}}}),
        "an update owns what it changed"
    );
    labelled["metadata"]["managedFields"] = Value::Array(entries);

    // Alice leaves out the replicas, the tier label and the port: each goes but the
    // label another manager owns.
    let mut less = deployment(2, "nginx:1");
    let spec = less["spec"].as_object_mut().unwrap();
    spec.remove("replicas");
    less["spec"]["template"]["spec"]["containers"][0]
        .as_object_mut()
        .unwrap()
        .remove("ports");
    let pruned = apply_as("alice", Some(&labelled), &less).unwrap();
    assert_eq!(
        pruned["metadata"]["labels"],
        json!({"app": "web", "color": "blue"})
    );
    assert!(pruned["spec"].get("replicas").is_none(), "{pruned}");
    let container = &pruned["spec"]["template"]["spec"]["containers"][0];
    assert!(container.get("ports").is_none(), "{container}");
    assert_eq!(container["image"], "nginx:1");
}

#[test]
fn an_update_takes_what_it_changes_from_appliers_and_a_later_apply_conflicts_with_it() {
    let made = apply_as("alice", None, &deployment(2, "nginx:1")).unwrap();
    let mut edited = made.clone();
    edited["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
    let now = json!(NOW);
    let kind = ObjectKind::Deployment;
    let entries = update(kind, Some(&made), &edited, writer("kubectl-set"), &now);
    edited["metadata"]["managedFields"] = Value::Array(entries);
    let container = |o: &Value| o["f:spec"]["f:template"]["f:spec"]["f:containers"].clone();
    assert_eq!(
        container(fields_of(&edited, "kubectl-set")),
        json!({"k:{\"name\":\"app\"}": {"f:image": {}}})
    );
    assert!(
        container(fields_of(&edited, "alice"))["k:{\"name\":\"app\"}"]
            .get("f:image")
            .is_none()
    );
    let Err(ApplyError::Conflict { message, .. }) =
        apply_as("alice", Some(&edited), &deployment(2, "nginx:1"))
    else {
        panic!("alice's image conflicts with kubectl-set's")
    };
    assert_eq!(
        message,
        "Apply failed with 1 conflict: conflict with \"kubectl-set\" using apps/v1: .spec.template.spec.containers[name=\"app\"].image"
    );
}

#[test]
fn a_create_owns_its_structs_fields_but_not_the_structs_go_always_writes() {
    let now = json!(NOW);
    let mut created = deployment(1, "busybox");
    created["spec"]["strategy"] = json!({"type": "Recreate"});
    let entries = update(
        ObjectKind::Deployment,
        None,
        &created,
        writer("kubectl-create"),
        &now,
    );
    let fields = &entries[0]["fieldsV1"];
    assert_eq!(
        fields["f:spec"].get("."),
        None,
        "spec is in Go's empty object"
    );
    assert_eq!(fields["f:spec"]["f:strategy"], json!({"f:type": {}}));
    assert_eq!(
        fields["f:spec"]["f:template"]["f:spec"]["f:containers"].get("."),
        None,
        "a nil slice Go writes as null is there too"
    );
    assert_eq!(
        fields["f:metadata"]["f:labels"],
        json!({".": {}, "f:app": {}}),
        "a map the empty object lacks is added whole"
    );
    // Nothing changed: nothing moves, and the time stays.
    let mut same = created.clone();
    same["metadata"]["managedFields"] = Value::Array(entries.clone());
    let later = json!("2026-11-27T09:00:00Z");
    let again = update(
        ObjectKind::Deployment,
        Some(&same),
        &same,
        writer("x"),
        &later,
    );
    assert_eq!(again, entries);
}

#[test]
fn lists_of_maps_merge_by_key_in_structured_merge_diffs_order() {
    // The configuration's elements in its order; a live element it does not name stays
    // after the element it followed.
    let merged = |live: Value, config: Value| {
        let mut live_object = deployment(1, "a");
        live_object["spec"]["template"]["spec"]["containers"] = live;
        let mut config_object = deployment(1, "a");
        config_object["spec"]["template"]["spec"]["containers"] = config;
        let merged = walk::merge(
            &live_object,
            &config_object,
            Shape::of(ObjectKind::Deployment),
        );
        let containers = merged["spec"]["template"]["spec"]["containers"].clone();
        let containers = containers.as_array().unwrap().clone();
        containers
            .iter()
            .map(|c| {
                format!(
                    "{}={}",
                    c["name"].as_str().unwrap(),
                    c["image"].as_str().unwrap()
                )
            })
            .collect::<Vec<_>>()
    };
    let a_c = json!([{"name": "a", "image": "1"}, {"name": "c", "image": "1"}]);
    let a_b = json!([{"name": "a", "image": "2"}, {"name": "b", "image": "2"}]);
    assert_eq!(merged(a_c.clone(), a_b), ["a=2", "c=1", "b=2"]);
    let b_a = json!([{"name": "b", "image": "2"}, {"name": "a", "image": "2"}]);
    assert_eq!(merged(a_c, b_a), ["b=2", "a=2", "c=1"]);
}

#[test]
fn configurations_that_do_not_fit_the_schema_are_refused() {
    let mut unknown = deployment(1, "a");
    unknown["spec"]["bogus"] = json!(1);
    assert_eq!(
        apply_as("alice", None, &unknown).unwrap_err(),
        ApplyError::Typed(".spec.bogus: field not declared in schema".to_owned())
    );
    let mut twice = deployment(1, "a");
    twice["spec"]["template"]["spec"]["containers"] =
        json!([{"name": "a", "image": "x"}, {"name": "a", "image": "y"}]);
    assert_eq!(
        apply_as("alice", None, &twice).unwrap_err(),
        ApplyError::Typed(
            ".spec.template.spec.containers: duplicate entries for key [name=\"a\"]".to_owned()
        )
    );
    // A key field left out takes its schema default (a container's name is `""`, which
    // validation then refuses, as there).
    let mut keyless = deployment(1, "a");
    keyless["spec"]["template"]["spec"]["containers"] = json!([{"image": "x"}]);
    let made = apply_as("alice", None, &keyless).unwrap();
    let containers = &fields_of(&made, "alice")["f:spec"]["f:template"]["f:spec"]["f:containers"];
    assert!(
        containers.get("k:{\"name\":\"\"}").is_some(),
        "{containers}"
    );
    let mut other_version = deployment(1, "a");
    other_version["apiVersion"] = json!("apps/v1beta2");
    assert!(matches!(
        apply_as("alice", None, &other_version),
        Err(ApplyError::BadRequest(m)) if m.contains("Specified patch version: apps/v1beta2")
    ));
    let mut managed = deployment(1, "a");
    managed["metadata"]["managedFields"] = json!([{"manager": "x"}]);
    assert_eq!(
        apply_as("alice", None, &managed).unwrap_err(),
        ApplyError::BadRequest("metadata.managedFields must be nil".to_owned())
    );
}

#[test]
fn a_custom_resource_without_a_schema_merges_maps_by_key_and_replaces_lists() {
    let kind = widgets().kind();
    let now = json!(NOW);
    let config = json!({"apiVersion": "example.com/v1alpha1", "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"size": 1, "tags": ["a", "b"], "limits": {"cpu": "1"}}});
    let made = stored(
        apply(
            &Typed::of(kind),
            None,
            &config,
            (writer("alice"), false),
            &now,
        )
        .unwrap(),
    );
    assert_eq!(
        fields_of(&made, "alice"),
        &json!({"f:spec": {".": {}, "f:size": {}, "f:tags": {},
            "f:limits": {".": {}, "f:cpu": {}}}})
    );
    let bob = json!({"apiVersion": "example.com/v1alpha1", "kind": "Widget",
        "metadata": {"name": "w"}, "spec": {"tags": ["c"], "limits": {"memory": "1Gi"}}});
    let forced = stored(
        apply(
            &Typed::of(kind),
            Some(&made),
            &bob,
            (writer("bob"), true),
            &now,
        )
        .unwrap(),
    );
    assert_eq!(
        forced["spec"],
        json!({"size": 1, "tags": ["c"], "limits": {"cpu": "1", "memory": "1Gi"}})
    );
}

/// A sampled kind of `api_version` and `kind`, namespaced, with a status.
fn sampled(api_version: &str, kind: &str, resource: &str) -> ObjectKind {
    scenario::SampledKindDef {
        api_version: api_version.into(),
        kind: kind.into(),
        resource: resource.into(),
        namespaced: true,
        generation: true,
        fields: vec!["metadata".into(), "spec".into(), "status".into()],
    }
    .kind()
}

#[test]
fn a_sample_of_kubernetes_own_kind_has_its_schema_and_its_protobuf_and_a_custom_resource_neither() {
    use crate::protobuf;
    let job = sampled("batch/v1", "Job", "jobs");
    let role = sampled("rbac.authorization.k8s.io/v1", "Role", "roles");
    let service = sampled("v1", "Service", "services");
    for kind in [job, role, service] {
        assert!(protobuf::serves(kind), "{kind:?}");
        assert!(matches!(Shape::of(kind), Shape::Struct { .. }), "{kind:?}");
    }
    assert!(
        Shape::of(job)
            .field("spec")
            .unwrap()
            .declares("backoffLimit")
    );
    assert_eq!(
        Shape::of(service)
            .field("spec")
            .unwrap()
            .patch_tags("ports"),
        Some(("merge", Some("port")))
    );
    // A kind whose name is one of Kubernetes' own in a group of its own, one in a
    // version kube-apiserver does not serve, and meta/v1's `Status` under a custom
    // group are custom resources: JSON only, no schema.
    for kind in [
        sampled("batch.example.com/v1", "Job", "jobs"),
        sampled("batch/v1beta1", "CronJob", "cronjobs"),
        sampled("example.com/v1", "Status", "statuses"),
        widgets().kind(),
    ] {
        assert!(!protobuf::serves(kind), "{kind:?}");
        assert!(matches!(Shape::of(kind), Shape::Deduced), "{kind:?}");
    }
}
