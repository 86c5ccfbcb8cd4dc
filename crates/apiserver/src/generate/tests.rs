//! The generator: names, UIDs and managedFields as the apiserver makes them, the bytes
//! pinned, the templates held to building each object, and the protobuf skeletons to
//! encoding each object's JSON.

use super::*;

fn id(index: u32) -> ObjectId {
    ObjectId::new(index, 0, 1, 10 + u64::from(index))
}

#[test]
fn generation_is_deterministic() {
    let spec = test_spec();
    let a = serde_json::to_vec(&pod(&spec, id(42))).unwrap();
    let b = serde_json::to_vec(&pod(&spec, id(42))).unwrap();
    assert_eq!(a, b);
    let other = serde_json::to_vec(&pod(&spec, id(43))).unwrap();
    assert_ne!(a, other);
}

#[test]
fn default_pod_is_a_few_kilobytes_and_a_third_managed_fields() {
    let spec = test_spec();
    let full = serde_json::to_vec(&pod(&spec, id(7))).unwrap().len();
    let app = app_of(&spec, 7);
    let values = PodValues::of(&spec, app, id(7));
    let bare = serde_json::to_vec(&pod::pod_without_managed_fields(&spec, app, &values))
        .unwrap()
        .len();
    let share = (full - bare) as f64 / full as f64;
    assert!((3_000..=8_000).contains(&full), "pod is {full} bytes");
    assert!(
        (0.30..=0.40).contains(&share),
        "managedFields are {:.0}%",
        share * 100.0
    );
}

#[test]
fn a_pod_deleted_gracefully_shows_each_step_as_kube_apiserver_and_the_kubelet_write_it() {
    let spec = ObjectSpec::pods(10);
    let generator = Generator::new(spec.clone());
    let at = |stage| {
        let mut json = Vec::new();
        generator.write_object(&mut json, ObjectId { stage, ..id(3) });
        serde_json::from_slice::<serde_json::Value>(&json).unwrap()
    };
    let (live, deleting, stopped, released) = (
        at(Stage::Live),
        at(Stage::Deleting),
        at(Stage::Stopped),
        at(Stage::Released),
    );
    // Created at second 3 after the epoch; deleted a day later with its 30 s of grace.
    assert_eq!(
        live["metadata"]["creationTimestamp"],
        "2026-01-01T00:00:03Z"
    );
    assert_eq!(live["metadata"].get("deletionTimestamp"), None);
    let meta = &deleting["metadata"];
    assert_eq!(meta["deletionTimestamp"], "2026-01-02T00:00:33Z");
    assert_eq!(meta["deletionGracePeriodSeconds"], 30);
    assert_eq!(meta["generation"], 2);
    assert_eq!(deleting["status"], live["status"]);
    assert_eq!(deleting["spec"], live["spec"]);
    // The kubelet's terminal status, two seconds after the DELETE.
    let status = &stopped["status"];
    assert_eq!(status["phase"], "Succeeded");
    for c in status["containerStatuses"].as_array().unwrap() {
        let terminated = &c["state"]["terminated"];
        assert_eq!(terminated["exitCode"], 0);
        assert_eq!(terminated["reason"], "Completed");
        assert_eq!(terminated["finishedAt"], "2026-01-02T00:00:05Z");
        assert!(
            terminated["containerID"]
                .as_str()
                .unwrap()
                .starts_with("containerd://")
        );
        assert!(terminated["startedAt"].is_string());
        assert_eq!((&c["ready"], &c["started"]), (&false.into(), &false.into()));
    }
    for c in status["conditions"].as_array().unwrap() {
        let (status, reason) = match c["type"].as_str().unwrap() {
            "Ready" | "ContainersReady" => ("False", Some("PodCompleted")),
            "PodReadyToStartContainers" => ("False", None),
            _ => ("True", None),
        };
        assert_eq!(
            (c["status"].as_str(), c["reason"].as_str()),
            (Some(status), reason),
            "{c}"
        );
    }
    let kubelet = |pod: &serde_json::Value| {
        pod["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["manager"] == "kubelet")
            .unwrap()
            .clone()
    };
    assert_eq!(kubelet(&stopped)["time"], "2026-01-02T00:00:05Z");
    let owned = &kubelet(&stopped)["fieldsV1"]["f:status"]["f:conditions"];
    assert!(owned[r#"k:{"type":"Ready"}"#].get("f:reason").is_some());
    assert!(
        kubelet(&live)["fieldsV1"]["f:status"]["f:conditions"][r#"k:{"type":"Ready"}"#]
            .get("f:reason")
            .is_none()
    );
    // The kubelet's DELETE with no grace period: the deletion is now.
    let meta = &released["metadata"];
    assert_eq!(meta["deletionTimestamp"], "2026-01-02T00:00:05Z");
    assert_eq!(meta["deletionGracePeriodSeconds"], 0);
    assert_eq!(released["status"], stopped["status"]);
    // The field selectors read the steps: the phase ends Succeeded.
    let phase = |stage| selectable_field(&spec, &ObjectId { stage, ..id(3) }, "status.phase");
    assert_eq!(phase(Stage::Deleting), "Running");
    assert_eq!(phase(Stage::Stopped), "Succeeded");
}

#[test]
fn names_are_unique_and_invertible() {
    let spec = test_spec();
    let mut seen = std::collections::HashSet::new();
    for i in (0..200_000).step_by(7) {
        let n = name(&spec, i);
        assert_eq!(index_of_name(&n), Some(i), "{n}");
        assert!(seen.insert((namespace(&spec, i), n)));
    }
    assert_eq!(index_of_name("no-suffix"), None);
}

#[test]
fn every_kind_generates_with_unique_invertible_names() {
    for kind in ObjectKind::ALL {
        let spec = ObjectSpec {
            kind,
            ..test_spec()
        };
        let mut buf = Vec::new();
        Generator::new(spec.clone()).write_object(&mut buf, id(12));
        let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
        assert_eq!(v["metadata"]["name"], name(&spec, 12));
        assert_eq!(index_of_name(&name(&spec, 12)), Some(12));
        assert!(buf.len() > 500, "{kind:?} is {} bytes", buf.len());
    }
}

#[test]
fn recreated_object_gets_a_new_uid() {
    let spec = test_spec();
    assert_ne!(uid(&spec, 5, 0), uid(&spec, 5, 1));
    assert_eq!(uid(&spec, 5, 0).len(), 36);
}

proptest::proptest! {
    #[test]
    fn a_uid_is_its_32_hex_draws_laid_out_as_a_v4_uuid(
        seed: u64,
        index: u32,
        incarnation: u32,
    ) {
        let spec = ObjectSpec { seed, ..test_spec() };
        let mut draws = rng(seed, &[0x01d, u64::from(index), u64::from(incarnation)]);
        let h = hex(&mut draws, 32);
        let expected =
            format!("{}-{}-4{}-a{}-{}", &h[..8], &h[8..12], &h[13..16], &h[17..20], &h[20..]);
        proptest::prop_assert_eq!(uid(&spec, index, incarnation), expected);
    }
}

#[test]
fn managed_fields_key_list_elements_like_the_apiserver() {
    let spec = test_spec();
    let p = pod(&spec, id(3));
    let mf = p.metadata.managed_fields.unwrap();
    assert_eq!(mf.len(), 2);
    let controller = &mf[0].fields_v1.as_ref().unwrap().0;
    let app = &controller["f:spec"]["f:containers"][r#"k:{"name":"api"}"#];
    assert!(
        app.get(".").is_some() && app.get("f:image").is_some(),
        "{controller}"
    );
    assert!(
        controller["f:spec"].get(".").is_none(),
        "no `.` at the root"
    );
    assert_eq!(mf[0].manager.as_deref(), Some("kube-controller-manager"));
    assert_eq!(mf[1].subresource.as_deref(), Some("status"));
}

/// The bytes the server sends, pinned: a change to any builder shows here first.
#[test]
fn generated_objects_keep_their_bytes() {
    let mut all = String::new();
    for kind in ObjectKind::ALL {
        let spec = ObjectSpec {
            kind,
            last_applied: true,
            // A node as validation settles it, with two images to keep this short.
            namespaces: if kind.namespaced() { 10 } else { 1 },
            images: (kind == ObjectKind::Node).then_some(2),
            ..test_spec()
        };
        let generator = Generator::new(spec);
        for form in [Form::Object, Form::Metadata] {
            let mut buf = Vec::new();
            generator.write(&mut buf, id(12), form);
            all.push_str(&format!("{kind:?} {form:?}\n"));
            all.push_str(std::str::from_utf8(&buf).unwrap());
            all.push('\n');
        }
    }
    insta::assert_snapshot!(all);
}

fn any_spec() -> impl proptest::strategy::Strategy<Value = ObjectSpec> {
    use proptest::prelude::*;
    (
        (
            proptest::sample::select(ObjectKind::ALL.to_vec()),
            any::<u64>(),
            prop_oneof![1..30u32, 1..=10_000u32],
            0..=64u32,
            0..=64u32,
        ),
        (
            1..=16u32,
            0..=8u32,
            any::<bool>(),
            proptest::option::of(1..=8u32),
            0..300u32,
            0..=60u32,
        ),
    )
        .prop_map(
            |(
                (kind, seed, namespaces, labels, annotations),
                (containers, managed_fields, last_applied, data_keys, data_bytes, images),
            )| ObjectSpec {
                kind,
                count: 1000,
                seed,
                // As the scenario's validation settles them: cluster-scoped objects
                // are one round of classes, only nodes have images.
                namespaces: if kind.namespaced() { namespaces } else { 1 },
                labels,
                annotations,
                containers,
                managed_fields,
                last_applied,
                data_keys: data_keys.filter(|_| kind.namespaced() && kind != ObjectKind::Pod),
                data_bytes,
                images: (kind == ObjectKind::Node).then_some(images),
                sample: None,
            },
        )
}

/// Any object's identity, at any step of a graceful deletion: [`of_kind`] keeps the step
/// for pods only.
fn any_identity() -> impl proptest::strategy::Strategy<Value = ObjectId> {
    use proptest::prelude::*;
    (
        0..scenario::MAX_OBJECTS as u32,
        0..4u32,
        prop_oneof![0..100u32, any::<u32>()],
        any::<u64>(),
        proptest::sample::select(Stage::ALL.to_vec()),
    )
        .prop_map(|(index, incarnation, generation, rv, stage)| ObjectId {
            stage,
            ..ObjectId::new(index, incarnation, generation, rv)
        })
}

/// `id` as an object of `kind` can be: only pods are deleted gracefully.
fn of_kind(id: ObjectId, kind: ObjectKind) -> ObjectId {
    match kind {
        ObjectKind::Pod => id,
        _ => ObjectId {
            stage: Stage::Live,
            ..id
        },
    }
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(200))]

    /// The templates write exactly the bytes that building each object writes: for any
    /// shape, and for objects of every app after the template was made from another.
    #[test]
    fn templates_write_what_building_writes(
        spec in any_spec(),
        ids in proptest::collection::vec(any_identity(), 1..12),
    ) {
        let generator = Generator::new(spec.clone());
        for id in ids {
            let id = of_kind(id, spec.kind);
            for form in [Form::Object, Form::Metadata] {
                let (mut fast, mut built) = (Vec::new(), Vec::new());
                generator.write(&mut fast, id, form);
                write_built(&mut built, &spec, id, form);
                proptest::prop_assert_eq!(
                    String::from_utf8(fast).unwrap(),
                    String::from_utf8(built).unwrap(),
                    "{:?} {:?}", form, id
                );
            }
        }
    }

    /// Every class has a protobuf skeleton, and it writes exactly the document that
    /// encoding the object's JSON writes: for any shape, any values.
    #[test]
    fn skeletons_write_what_encoding_the_json_writes(
        spec in any_spec(),
        ids in proptest::collection::vec(any_identity(), 1..12),
    ) {
        let generator = Generator::new(spec.clone());
        let kind = spec.kind;
        for id in ids {
            let id = of_kind(id, kind);
            let mut json = Vec::new();
            generator.write(&mut json, id, Form::Object);
            let message = generator.protobuf_object(id).expect("every class has a skeleton");
            let direct = protobuf::document(kind.api_version(), kind.as_str(), &message);
            proptest::prop_assert_eq!(direct, protobuf::encode_json(&json).unwrap(), "{:?}", id);

            let mut json = br#"{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":"#.to_vec();
            generator.write(&mut json, id, Form::Metadata);
            json.push(b'}');
            let message = generator.protobuf_metadata(id).expect("every class has a skeleton");
            let direct = protobuf::document("meta.k8s.io/v1", "PartialObjectMetadata", &message);
            proptest::prop_assert_eq!(direct, protobuf::encode_json(&json).unwrap(), "{:?}", id);
        }
    }
}

/// `spec` with its objects replaced by a sample of objects `samples` generated from it.
fn sampled(spec: &ObjectSpec, samples: &[u32]) -> ObjectSpec {
    let objects = samples
        .iter()
        .map(|&i| {
            let mut json = Vec::new();
            Generator::new(spec.clone()).write_object(&mut json, id(i));
            serde_json::from_slice(&json).unwrap()
        })
        .collect();
    ObjectSpec {
        sample: Some(scenario::Sample {
            file: "sample.json".into(),
            objects,
        }),
        ..spec.clone()
    }
}

#[test]
fn copies_of_a_sample_are_it_with_identities_of_their_own() {
    let spec = sampled(&test_spec(), &[3, 4]);
    let generator = Generator::new(spec.clone());
    let sample = spec.sample.as_ref().unwrap();
    for i in [0u32, 10, 25, 999] {
        let copy = ObjectId {
            generation: 3,
            ..id(i)
        };
        let mut json = Vec::new();
        generator.write_object(&mut json, copy);
        let mut copy: serde_json::Value = serde_json::from_slice(&json).unwrap();
        let class = class_index(&spec, i);
        assert_eq!(copy["metadata"]["name"], name(&spec, i));
        assert_eq!(index_of_name(&name(&spec, i)), Some(i));
        assert_eq!(copy["metadata"]["namespace"], namespace(&spec, i));
        assert_eq!(copy["metadata"]["uid"], uid(&spec, i, 0));
        assert_eq!(copy["metadata"]["resourceVersion"], (10 + i).to_string());
        assert_eq!(labels(&spec, i, 3), sample.labels(class));
        // An update moves the sample's generation on (two updates after the first).
        let mut original = sample.objects[class].clone();
        let generation = original["metadata"]["generation"].as_i64().unwrap();
        assert_eq!(copy["metadata"]["generation"], generation + 2);
        // Everything but the identity is the sample's.
        for key in [
            "name",
            "namespace",
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "generation",
        ] {
            copy["metadata"].as_object_mut().unwrap().remove(key);
            original["metadata"].as_object_mut().unwrap().remove(key);
        }
        assert_eq!(copy, original);
    }
    let mut names: Vec<String> = (0..40).map(|i| name(&spec, i)).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 40);
}

#[test]
fn a_sample_whose_text_looks_like_a_marker_is_copied_without_a_template() {
    let mut spec = sampled(&test_spec(), &[1]);
    let sample = spec.sample.as_mut().unwrap();
    sample.objects[0]["metadata"]["annotations"] = serde_json::json!({"note": "\u{a7}0\u{a7}"});
    let generator = Generator::new(spec.clone());
    let mut json = Vec::new();
    generator.write_object(&mut json, id(7));
    let copy: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(copy["metadata"]["annotations"]["note"], "\u{a7}0\u{a7}");
    assert_eq!(copy["metadata"]["name"], name(&spec, 7));
    assert!(generator.protobuf_object(id(7)).is_none());
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(60))]

    /// Copies of a sample (objects of any generated shape) write through their
    /// templates what building each copy writes, and their skeletons what encoding
    /// their JSON writes.
    #[test]
    fn copies_of_samples_keep_the_template_and_skeleton_rules(
        spec in any_spec(),
        samples in proptest::collection::vec(0..50u32, 1..4),
        ids in proptest::collection::vec(any_identity(), 1..8),
    ) {
        let spec = sampled(&spec, &samples);
        let generator = Generator::new(spec.clone());
        let kind = spec.kind;
        for id in ids {
            let id = of_kind(id, kind);
            for form in [Form::Object, Form::Metadata] {
                let (mut fast, mut built) = (Vec::new(), Vec::new());
                generator.write(&mut fast, id, form);
                write_built(&mut built, &spec, id, form);
                proptest::prop_assert_eq!(&fast, &built, "{:?} {:?}", form, id);
            }
            let mut json = Vec::new();
            generator.write(&mut json, id, Form::Object);
            let message = generator.protobuf_object(id).expect("a copy has a skeleton");
            let direct = protobuf::document(kind.api_version(), kind.as_str(), &message);
            proptest::prop_assert_eq!(direct, protobuf::encode_json(&json).unwrap(), "{:?}", id);
        }
    }
}
