use prost_reflect::DynamicMessage;
use serde_json::{Value, json};

use super::*;
use crate::generate::{Generator, ObjectId, test_spec};
use scenario::{ObjectKind, ObjectSpec};

/// The frames of a protobuf watch stream: each frame's bytes after its length.
fn frames(mut stream: &[u8]) -> Vec<&[u8]> {
    let mut frames = Vec::new();
    while let Some((length, rest)) = stream.split_first_chunk::<4>() {
        let (frame, rest) = rest.split_at(u32::from_be_bytes(*length) as usize);
        frames.push(frame);
        stream = rest;
    }
    frames
}

/// A watch frame's type and object document.
fn event(frame: &[u8]) -> (String, Vec<u8>) {
    let message = POOL
        .get_message_by_name("k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent")
        .unwrap();
    let event = DynamicMessage::decode(message, frame).unwrap();
    let kind = event
        .get_field_by_name("type")
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    let object = event.get_field_by_name("object").unwrap();
    let raw = object
        .as_message()
        .unwrap()
        .get_field_by_name("raw")
        .unwrap();
    (kind, raw.as_bytes().unwrap().to_vec())
}

/// Where `part` has a field `whole` lacks or holds otherwise.
fn missing(part: &Value, whole: &Value, path: &str) -> Option<String> {
    match (part, whole) {
        (Value::Object(x), Value::Object(y)) => x.iter().find_map(|(k, p)| match y.get(k) {
            Some(q) => missing(p, q, &format!("{path}.{k}")),
            None => Some(format!("{path}.{k}: absent")),
        }),
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| missing(p, q, &format!("{path}[{i}]"))),
        _ => (part != whole).then(|| format!("{path}: {part} against {whole}")),
    }
}

/// Every field of `part` is in `whole`, with the same value.
#[track_caller]
fn assert_within(part: &Value, whole: &Value) {
    if let Some(m) = missing(part, whole, "") {
        panic!("differ at {m}");
    }
}

/// `json` as message `name`'s fields.
fn encode_as(name: &str, json: Value) -> Vec<u8> {
    let mut out = Vec::new();
    encode_message(
        PLANS.index(name).unwrap(),
        json.to_string().as_bytes(),
        &mut out,
    )
    .unwrap();
    out
}

fn generated(kind: ObjectKind) -> Value {
    let spec = ObjectSpec {
        kind,
        last_applied: true,
        ..test_spec()
    };
    let id = ObjectId::new(12, 0, 3, 77);
    let mut buf = Vec::new();
    Generator::new(spec).write_object(&mut buf, id);
    serde_json::from_slice(&buf).unwrap()
}

#[test]
fn reads_kube_apiservers_watch_frames() {
    // kube-apiserver 1.37's watch of ConfigMaps in protobuf: ADDED, then DELETED.
    let stream = include_bytes!("../../../../tests/fixtures/watch/configmaps.protobuf");
    let frames = frames(stream);
    assert_eq!(frames.len(), 2);
    let (kind, object) = event(frames[0]);
    assert_eq!(kind, "ADDED");
    let object = decode_document(&object).unwrap();
    assert_eq!(
        object,
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "pb1",
                "namespace": "t1",
                "uid": "a2528638-dfb9-4d7f-8379-97c6bf976297",
                "resourceVersion": "4298",
                "creationTimestamp": object["metadata"]["creationTimestamp"],
                "managedFields": [{
                    "manager": "Python-urllib",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": object["metadata"]["creationTimestamp"],
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:data": {".": {}, "f:a": {}}},
                }],
            },
            "data": {"a": "b"},
        })
    );
    let created = object["metadata"]["creationTimestamp"].as_str().unwrap();
    assert!(
        created.starts_with("20") && created.ends_with('Z'),
        "{created}"
    );
    assert_eq!(event(frames[1]).0, "DELETED");
}

#[test]
fn writes_what_kube_apiserver_writes() {
    // The fixture's object, read and written again: kube-apiserver's bytes, zero fields
    // and all (generateName, selfLink, generation, subresource, Go's order).
    let stream = include_bytes!("../../../../tests/fixtures/watch/configmaps.protobuf");
    for frame in frames(stream) {
        let (_, theirs) = event(frame);
        let object = decode_document(&theirs).unwrap();
        assert_eq!(encode_document(&object).unwrap(), theirs);
    }
}

#[test]
fn every_kind_round_trips() {
    for kind in ObjectKind::ALL {
        let object = generated(kind);
        let bytes = encode_document(&object).unwrap();
        assert!(bytes.starts_with(b"k8s\0"), "{kind:?}");
        // Decoded, the object as Go's JSON writes it: what it had, and the structs Go
        // writes always (a container status's `lastState: {}`).
        let decoded = decode_document(&bytes).unwrap();
        assert_within(&object, &decoded);
        assert_eq!(encode_document(&decoded).unwrap(), bytes, "{kind:?}");
        let json = serde_json::to_vec(&object).unwrap().len();
        assert!(
            bytes.len() < json,
            "{kind:?}: {} bytes against {json} of JSON",
            bytes.len()
        );
    }
}

#[test]
fn kubernetes_types_take_their_go_forms() {
    let deployment = generated(ObjectKind::Deployment);
    let strategy = &deployment["spec"]["strategy"]["rollingUpdate"];
    assert_eq!(strategy["maxSurge"], json!("25%"));
    // IntOrString: type, intVal and strVal, all written.
    assert_eq!(
        encode_as(encode::INT_OR_STRING, json!(3)),
        [0x08, 0x00, 0x10, 0x03, 0x1a, 0x00]
    );
    assert_eq!(
        encode_as(encode::INT_OR_STRING, json!("25%")),
        [0x08, 0x01, 0x10, 0x00, 0x1a, 0x03, b'2', b'5', b'%']
    );
    // Time: seconds and nanos, nanos at zero too.
    assert_eq!(
        encode_as(encode::TIME, json!("1970-01-01T00:01:40Z")),
        [0x08, 100, 0x10, 0x00]
    );
    // A MicroTime keeps its microseconds.
    let out = encode_as(encode::MICRO_TIME, json!("2026-11-25T10:00:00.250000Z"));
    let micro = POOL.get_message_by_name(encode::MICRO_TIME).unwrap();
    let decoded = decode::message(&DynamicMessage::decode(micro, out.as_slice()).unwrap()).unwrap();
    assert_eq!(decoded, json!("2026-11-25T10:00:00.250000Z"));
}

#[test]
fn a_list_carries_its_metadata_and_items() {
    let pod = generated(ObjectKind::Pod);
    let metadata = json!({"resourceVersion": "77", "continue": "abc"});
    let meta = metadata.to_string();
    let mut list = ListEncoder::new("v1", "PodList", meta.as_bytes()).unwrap();
    list.push(pod.to_string().as_bytes()).unwrap();
    list.push(pod.to_string().as_bytes()).unwrap();
    let decoded = decode_document(&list.finish().concat()).unwrap();
    assert_eq!(decoded["kind"], "PodList");
    assert_eq!(decoded["metadata"], metadata);
    let items = decoded["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    let mut expected = pod.clone();
    let map = expected.as_object_mut().unwrap();
    map.remove("apiVersion");
    map.remove("kind");
    assert_within(&expected, &items[1]);
    // A metadata informer's list.
    let list = ListEncoder::new(
        "meta.k8s.io/v1",
        "PartialObjectMetadataList",
        meta.as_bytes(),
    )
    .unwrap();
    let empty = decode_document(&list.finish().concat()).unwrap();
    assert_eq!(empty["kind"], "PartialObjectMetadataList");
    assert_eq!(empty["metadata"], metadata);
    assert!(empty.get("items").is_none(), "{empty}");
}

#[test]
fn a_watch_frame_is_length_and_event() {
    let pod = generated(ObjectKind::Pod);
    let line = json!({"type": "MODIFIED", "object": pod}).to_string();
    let frame = watch_frame(line.as_bytes()).unwrap();
    let parsed = frames(&frame);
    assert_eq!(parsed.len(), 1);
    let (kind, object) = event(parsed[0]);
    assert_eq!(kind, "MODIFIED");
    assert_within(&pod, &decode_document(&object).unwrap());
}

#[test]
fn bad_documents_say_where() {
    assert_eq!(
        decode_document(b"{\"kind\":\"Pod\"}"),
        Err(ProtobufError::NoEnvelope)
    );
    let unknown = document("v1", "Widget", &b""[..]);
    assert_eq!(
        decode_document(&unknown).unwrap_err().to_string(),
        "no protobuf message for kind \"Widget\" in \"v1\""
    );
    let truncated = document("v1", "Pod", &[0x0a, 0x20, 0x01][..]);
    assert!(matches!(
        decode_document(&truncated),
        Err(ProtobufError::Decode(_))
    ));
    let mut pod = generated(ObjectKind::Pod);
    pod["spec"]["containers"][0]["ports"][0]["containerPort"] = json!("http");
    assert_eq!(
        encode_document(&pod).unwrap_err().to_string(),
        "spec.containers[0].ports[0].containerPort: expected an integer, found \"http\""
    );
}
