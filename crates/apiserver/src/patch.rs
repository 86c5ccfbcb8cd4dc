//! PATCH bodies: JSON patch (RFC 6902), JSON merge patch (RFC 7386) and the strategic
//! merge patch `kubectl apply`, `kubectl label` and `kubectl edit` send.
//!
//! Strategic merge is merge patch plus list semantics from the Go types' `patchStrategy`
//! and `patchMergeKey` tags: a list of containers merges element by element on `name`
//! instead of being replaced, and the directives `$patch`, `$retainKeys`,
//! `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>` refine that
//! (sig-api-machinery's strategic-merge-patch.md). The tags are read from the kind's schema
//! as kube-apiserver serves it ([`Shape::patch_tags`]: its `x-kubernetes-patch-strategy`
//! and `x-kubernetes-patch-merge-key`), field by field down the object, so a Service's
//! ports merge on `port` where a container's merge on `containerPort`; a list without
//! tags, or under no schema, is replaced whole.

use std::collections::{HashMap, HashSet, VecDeque};

use serde_json::{Map, Value};

use crate::apply::Shape;

/// The most operations a JSON patch may hold, as kube-apiserver's `maxJSONPatchOperations`
/// (kubernetes/kubernetes#74000); more is 413 RequestEntityTooLarge.
pub const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// The most bytes a JSON patch's `copy` operations may add to the object together, as
/// kube-apiserver's `JSONPatchMaxCopyBytes` (3 MiB, its largest request body): 40 copies
/// each doubling a field would otherwise grow the object exponentially.
pub const MAX_JSON_PATCH_COPY_BYTES: usize = 3 * 1024 * 1024;

/// The patch formats kube-apiserver accepts, by Content-Type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/json-patch+json`.
    Json,
    /// `application/merge-patch+json`.
    Merge,
    /// `application/strategic-merge-patch+json`.
    StrategicMerge,
    /// `application/apply-patch+yaml`: server-side apply ([`crate::apply`]).
    Apply,
}

impl PatchType {
    /// The patch type a Content-Type names (parameters such as `charset` ignored).
    pub fn from_content_type(content_type: &str) -> Option<PatchType> {
        let media = content_type.split(';').next().unwrap_or_default().trim();
        Some(match media {
            "application/json-patch+json" => PatchType::Json,
            "application/merge-patch+json" => PatchType::Merge,
            "application/strategic-merge-patch+json" => PatchType::StrategicMerge,
            "application/apply-patch+yaml" => PatchType::Apply,
            _ => return None,
        })
    }
}

/// Why a patch could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// The body is not a patch of its type (HTTP 400).
    #[error("{0}")]
    Malformed(String),
    /// A well-formed patch that does not apply to the object (HTTP 422).
    #[error("{0}")]
    DoesNotApply(String),
    /// A JSON patch of more operations than the server takes (HTTP 413).
    #[error("{0}")]
    TooLarge(String),
}

/// `object` (of the schema `shape`, which a strategic merge reads its tags from) with
/// `patch` (the request body) applied.
pub fn apply(
    kind: PatchType,
    object: &Value,
    patch: &[u8],
    shape: Shape,
) -> Result<Value, PatchError> {
    let mut out = object.clone();
    match kind {
        PatchType::Json => json_patch(&mut out, patch)?,
        PatchType::Merge | PatchType::StrategicMerge => {
            let patch: Value = serde_json::from_slice(patch)
                .map_err(|e| PatchError::Malformed(format!("invalid JSON in patch: {e}")))?;
            if !patch.is_object() {
                return Err(PatchError::Malformed(
                    "a merge patch must be a JSON object".to_owned(),
                ));
            }
            if kind == PatchType::Merge {
                json_patch::merge(&mut out, &patch);
            } else {
                merge_map(&mut out, &patch, shape)?;
            }
        }
        PatchType::Apply => unreachable!("an apply is not a patch of the object's JSON"),
    }
    Ok(out)
}

/// Applies the JSON patch `body` to `out` within kube-apiserver's bounds: at most
/// [`MAX_JSON_PATCH_OPERATIONS`] operations, and at most [`MAX_JSON_PATCH_COPY_BYTES`]
/// added by its copies, each copy's size measured before it is made.
fn json_patch(out: &mut Value, body: &[u8]) -> Result<(), PatchError> {
    let patch: json_patch::Patch = serde_json::from_slice(body)
        .map_err(|e| PatchError::Malformed(format!("invalid JSON patch: {e}")))?;
    if patch.0.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(PatchError::TooLarge(format!(
            "Request entity too large: The allowed maximum operations in a JSON patch is \
             {MAX_JSON_PATCH_OPERATIONS}, got {}",
            patch.0.len()
        )));
    }
    let mut copied = 0usize;
    for (index, operation) in patch.0.iter().enumerate() {
        if let json_patch::PatchOperation::Copy(copy) = operation
            && let Some(value) = out.pointer(copy.from.as_str())
        {
            let left = MAX_JSON_PATCH_COPY_BYTES - copied;
            copied += json_size_within(value, left).ok_or_else(|| {
                PatchError::DoesNotApply(format!(
                    "Unable to complete the copy, the accumulated size increase of copy is \
                     more than {MAX_JSON_PATCH_COPY_BYTES}, exceeding the limit \
                     {MAX_JSON_PATCH_COPY_BYTES}"
                ))
            })?;
        }
        // One at a time, so a copy is measured on the object as the operations before it
        // left it; the object is a copy, dropped whole when one fails.
        json_patch::patch(out, std::slice::from_ref(operation)).map_err(|e| {
            let path = &e.path;
            PatchError::DoesNotApply(format!(
                "the patch does not apply: operation '/{index}' failed at path '{path}': {}",
                e.kind
            ))
        })?;
    }
    Ok(())
}

/// The length of `value` as JSON, if it is at most `limit` bytes; measured without
/// writing more than `limit` bytes anywhere.
fn json_size_within(value: &Value, limit: usize) -> Option<usize> {
    struct Counter {
        written: usize,
        limit: usize,
    }
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.written += bytes.len();
            if self.written > self.limit {
                return Err(std::io::Error::other("over the limit"));
            }
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter { written: 0, limit };
    serde_json::to_writer(&mut counter, value).ok()?;
    Some(counter.written)
}

/// How a list field merges, from the Go types' patch tags.
enum ListStrategy {
    /// Elements are objects matched on this key.
    ByKey(&'static str),
    /// Elements are primitives; the patch's are added to the list (a set union).
    Union,
    /// The patch's list replaces the object's (no tag, or atomic).
    Replace,
}

/// How the list field `field` of an object of `shape` merges: on its merge key, as a set
/// of primitives, or replaced.
fn list_strategy(shape: Shape, field: &str) -> ListStrategy {
    match shape.patch_tags(field) {
        Some((strategy, key)) if strategy.split(',').any(|s| s == "merge") => match key {
            Some(key) => ListStrategy::ByKey(key),
            None => ListStrategy::Union,
        },
        _ => ListStrategy::Replace,
    }
}

const SET_ELEMENT_ORDER: &str = "$setElementOrder/";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";

/// Merges the map `patch` into `target` strategically.
///
/// Malformed directives are refused as apimachinery's `strategicpatch` refuses them:
/// a `$retainKeys`, `$setElementOrder/` or `$deleteFromPrimitiveList/` that is not a list
/// is a bad request (its `ErrBadPatchFormatFor*` errors, which kube-apiserver's
/// `interpretStrategicMergePatchError` turns into 400), and a patch with keys its
/// `$retainKeys` does not name is 422 (`ErrPatchContentNotMatchRetainKeys`). An unknown
/// `$patch` and a list element without its merge key are plain errors in apimachinery,
/// which kube-apiserver answers with 500 and reason Unknown; the fault is the request's,
/// so this server answers them with 400 and the same words.
fn merge_map(target: &mut Value, patch: &Value, shape: Shape) -> Result<(), PatchError> {
    let Some(patch) = patch.as_object() else {
        return Ok(());
    };
    match patch.get("$patch") {
        None => {}
        Some(Value::String(d)) if d == "replace" => {
            *target = strip_directives(&Value::Object(patch.clone()));
            return Ok(());
        }
        Some(other) => return Err(unknown_patch_type(other)),
    }
    let retain = match patch.get("$retainKeys") {
        None => None,
        Some(Value::Array(keys)) if keys.iter().all(Value::is_string) => Some(keys),
        Some(_) => return Err(malformed("invalid patch format of retainKeys")),
    };
    let retain: Option<HashSet<&str>> =
        retain.map(|keep| keep.iter().filter_map(Value::as_str).collect());
    if let Some(keep) = &retain {
        let named = |k: &str| keep.contains(k);
        if patch
            .iter()
            .any(|(k, v)| !k.starts_with('$') && !v.is_null() && !named(k))
        {
            return Err(PatchError::DoesNotApply(
                "patch content doesn't match retainKeys list".to_owned(),
            ));
        }
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let map = target.as_object_mut().expect("made an object above");
    let mut orders = Vec::new();
    for (key, value) in patch {
        if let Some(field) = key.strip_prefix(SET_ELEMENT_ORDER) {
            let order = value
                .as_array()
                .ok_or_else(|| malformed("invalid patch format of setElementOrder list"))?;
            orders.push((field, order));
        } else if let Some(field) = key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
            let gone = value
                .as_array()
                .ok_or_else(|| malformed("invalid patch format of primitive list"))?;
            if let Some(list) = map.get_mut(field).and_then(Value::as_array_mut) {
                let gone: HashSet<String> = gone.iter().map(id_of).collect();
                list.retain(|v| !gone.contains(&id_of(v)));
            }
        } else if key.starts_with('$') {
            // `$patch` and `$retainKeys` act on the map as a whole; see above and below.
        } else if value.is_null() || is_delete(value) {
            map.remove(key);
        } else {
            let field = shape.field(key).unwrap_or(Shape::Deduced);
            match (map.get_mut(key), value) {
                (Some(current @ Value::Object(_)), Value::Object(_)) => {
                    merge_map(current, value, field)?;
                }
                (Some(Value::Array(current)), Value::Array(items)) => {
                    merge_list(current, items, (list_strategy(shape, key), field.items()))?;
                }
                _ => {
                    map.insert(key.clone(), strip_directives(value));
                }
            }
        }
    }
    if let Some(keep) = retain {
        map.retain(|k, _| keep.contains(k.as_str()));
    }
    for (field, order) in orders {
        if let Some(list) = map.get_mut(field).and_then(Value::as_array_mut) {
            reorder(list, order, list_strategy(shape, field));
        }
    }
    Ok(())
}

fn malformed(message: &str) -> PatchError {
    PatchError::Malformed(message.to_owned())
}

fn unknown_patch_type(directive: &Value) -> PatchError {
    PatchError::Malformed(format!("unknown patch type: {directive}"))
}

fn require_key(element: &Value, key: &str) -> Result<(), PatchError> {
    if element.get(key).is_some() {
        Ok(())
    } else {
        Err(PatchError::Malformed(format!(
            "map: {element} does not contain declared merge key: {key}"
        )))
    }
}

fn is_delete(value: &Value) -> bool {
    value.get("$patch").and_then(Value::as_str) == Some("delete")
}

/// Merges the list `patch` into `current` as `strategy` says; `element` is the schema of
/// its elements.
fn merge_list(
    current: &mut Vec<Value>,
    patch: &[Value],
    (strategy, element): (ListStrategy, Shape),
) -> Result<(), PatchError> {
    match strategy {
        ListStrategy::Replace => *current = patch.iter().map(strip_directives).collect(),
        ListStrategy::Union => {
            let mut present: HashSet<String> = current.iter().map(id_of).collect();
            for v in patch {
                if present.insert(id_of(v)) {
                    current.push(v.clone());
                }
            }
        }
        ListStrategy::ByKey(key) => {
            // apimachinery's mergeSliceWithSpecialElements, then
            // mergeSliceWithoutSpecialElements: directives first, then merge keys.
            let mut replace = false;
            for p in patch {
                let Some(element) = p.as_object() else {
                    return Err(PatchError::Malformed(format!(
                        "a list merged on {key:?} holds maps, not {p}"
                    )));
                };
                match element.get("$patch") {
                    None => {}
                    Some(Value::String(d)) if d == "delete" => require_key(p, key)?,
                    Some(Value::String(d)) if d == "replace" => replace = true,
                    Some(Value::String(d)) if d == "merge" => {
                        return Err(malformed(
                            "merging lists cannot yet be specified in the patch",
                        ));
                    }
                    Some(other) => return Err(unknown_patch_type(other)),
                }
            }
            // `{"$patch": "replace"}` as an element: the other elements are the new list.
            if replace {
                *current = patch
                    .iter()
                    .filter(|p| p.get("$patch").is_none())
                    .map(strip_directives)
                    .collect();
                return Ok(());
            }
            for p in patch {
                require_key(p, key)?;
            }
            merge_by_key(current, patch, key, element)?;
        }
    }
    Ok(())
}

/// Merges `patch`'s elements into `current` on `key`, each in the first element of its
/// key (a delete removes it; a new one is added at the end), in time linear in the two
/// lists: a patch of 60,000 containers must not hold the server for seconds.
fn merge_by_key(
    current: &mut Vec<Value>,
    patch: &[Value],
    key: &str,
    element: Shape,
) -> Result<(), PatchError> {
    let mut slots: Vec<Option<Value>> = std::mem::take(current).into_iter().map(Some).collect();
    // Each key's elements, by position, first first.
    let mut at: HashMap<String, VecDeque<usize>> = HashMap::new();
    for (i, slot) in slots.iter().enumerate() {
        if let Some(id) = slot.as_ref().and_then(|c| c.get(key)) {
            at.entry(id_of(id)).or_default().push_back(i);
        }
    }
    for p in patch {
        let id = id_of(&p[key]);
        let found = at.get(&id).and_then(|positions| positions.front().copied());
        match (found, is_delete(p)) {
            (Some(i), true) => {
                slots[i] = None;
                at.get_mut(&id).map(VecDeque::pop_front);
            }
            (None, true) => {}
            (Some(i), false) => {
                let merged = slots[i].as_mut().expect("an indexed element is there");
                merge_map(merged, p, element)?;
            }
            (None, false) => {
                at.entry(id).or_default().push_back(slots.len());
                slots.push(Some(strip_directives(p)));
            }
        }
    }
    *current = slots.into_iter().flatten().collect();
    Ok(())
}

/// A value as a hash key: its JSON text, one for equal primitives (the merge keys and the
/// primitive lists' elements).
fn id_of(value: &Value) -> String {
    value.to_string()
}

/// Puts the elements `order` names first, in that order; the rest keep theirs after them.
fn reorder(list: &mut [Value], order: &[Value], strategy: ListStrategy) {
    let id = |v: &Value| match strategy {
        ListStrategy::ByKey(key) => v.get(key).map(id_of),
        _ => Some(id_of(v)),
    };
    let mut ranks: HashMap<String, usize> = HashMap::with_capacity(order.len());
    for (rank, o) in order.iter().enumerate() {
        if let Some(id) = id(o) {
            ranks.entry(id).or_insert(rank);
        }
    }
    list.sort_by_cached_key(|v| {
        id(v)
            .and_then(|id| ranks.get(&id).copied())
            .unwrap_or(order.len())
    });
}

/// `value` without directive keys, for parts of a patch taken as they are.
fn strip_directives(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .map(|(k, v)| (k.clone(), strip_directives(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip_directives).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod() -> Value {
        json!({
            "metadata": {"name": "web", "labels": {"app": "web", "tier": "front"},
                         "finalizers": ["a"]},
            "spec": {"containers": [
                {"name": "app", "image": "app:1", "ports": [{"containerPort": 80}]},
                {"name": "proxy", "image": "envoy:1"},
            ], "tolerations": [{"key": "x"}]},
        })
    }

    fn pod_shape() -> Shape {
        Shape::named("io.k8s.api.core.v1.Pod")
    }

    fn strategic(patch: Value) -> Value {
        apply(
            PatchType::StrategicMerge,
            &pod(),
            patch.to_string().as_bytes(),
            pod_shape(),
        )
        .unwrap()
    }

    #[test]
    fn strategic_merge_merges_containers_by_name() {
        let out = strategic(json!({"spec": {"containers": [{"name": "app", "image": "app:2"}]}}));
        let containers = out["spec"]["containers"].as_array().unwrap();
        assert_eq!(containers.len(), 2);
        assert_eq!(containers[0]["image"], "app:2");
        assert_eq!(containers[0]["ports"][0]["containerPort"], 80);
        assert_eq!(containers[1]["image"], "envoy:1");
    }

    #[test]
    fn strategic_merge_deletes_elements_and_keys_and_replaces_untagged_lists() {
        let out = strategic(json!({
            "metadata": {"labels": {"tier": null}, "finalizers": ["b"]},
            "spec": {"containers": [{"name": "proxy", "$patch": "delete"}],
                     "tolerations": [{"key": "y"}]},
        }));
        assert_eq!(out["metadata"]["labels"], json!({"app": "web"}));
        assert_eq!(out["metadata"]["finalizers"], json!(["a", "b"]));
        assert_eq!(out["spec"]["containers"].as_array().unwrap().len(), 1);
        assert_eq!(out["spec"]["tolerations"], json!([{"key": "y"}]));
    }

    #[test]
    fn strategic_merge_honours_element_order_and_primitive_deletes() {
        let out = strategic(json!({
            "metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]},
            "spec": {"$setElementOrder/containers": [{"name": "proxy"}, {"name": "app"}],
                     "containers": [{"name": "app", "image": "app:3"}]},
        }));
        assert_eq!(out["metadata"]["finalizers"], json!([]));
        assert_eq!(out["spec"]["containers"][0]["name"], "proxy");
        assert_eq!(out["spec"]["containers"][1]["image"], "app:3");
    }

    #[test]
    fn a_json_patch_over_kube_apiservers_operations_bound_is_too_large() {
        let ops = |n: usize| {
            let op = json!({"op": "add", "path": "/metadata/labels/x", "value": "y"});
            Value::Array(vec![op; n]).to_string()
        };
        let json = |body: &str| apply(PatchType::Json, &pod(), body.as_bytes(), pod_shape());
        assert!(json(&ops(MAX_JSON_PATCH_OPERATIONS)).is_ok());
        let Err(PatchError::TooLarge(message)) = json(&ops(MAX_JSON_PATCH_OPERATIONS + 1)) else {
            panic!("10,001 operations were taken");
        };
        assert_eq!(
            message,
            "Request entity too large: The allowed maximum operations in a JSON patch is 10000, \
             got 10001"
        );
    }

    #[test]
    fn copies_that_would_grow_the_object_past_the_bound_are_refused() {
        // Each copy doubles what the next copies: 40 of them would be terabytes.
        let mut ops = vec![json!({"op": "add", "path": "/spec/grow", "value": ["0123456789"]})];
        for _ in 0..40 {
            ops.push(json!({"op": "copy", "from": "/spec/grow", "path": "/spec/grow/-"}));
        }
        let body = Value::Array(ops).to_string();
        let Err(PatchError::DoesNotApply(message)) =
            apply(PatchType::Json, &pod(), body.as_bytes(), pod_shape())
        else {
            panic!("the copy bomb was applied");
        };
        assert!(message.contains("exceeding the limit 3145728"), "{message}");
        // Copies within the bound apply, in order.
        let body = json!([
            {"op": "copy", "from": "/metadata/labels", "path": "/metadata/annotations"},
            {"op": "copy", "from": "/metadata/annotations", "path": "/spec/copied"},
        ])
        .to_string();
        let out = apply(PatchType::Json, &pod(), body.as_bytes(), pod_shape()).unwrap();
        assert_eq!(out["spec"]["copied"], pod()["metadata"]["labels"]);
    }

    #[test]
    fn a_keyed_list_merges_each_element_into_the_first_of_its_key() {
        let mut current = vec![
            json!({"name": "a", "v": 1}),
            json!({"name": "b", "v": 1}),
            json!({"name": "a", "v": 2}),
        ];
        let patch = [
            json!({"name": "a", "$patch": "delete"}),
            json!({"name": "a", "w": 3}),
            json!({"name": "c", "v": 1}),
            json!({"name": "c", "w": 2}),
            json!({"name": "z", "$patch": "delete"}),
        ];
        merge_by_key(&mut current, &patch, "name", Shape::Deduced).unwrap();
        assert_eq!(
            current,
            [
                json!({"name": "b", "v": 1}),
                json!({"name": "a", "v": 2, "w": 3}),
                json!({"name": "c", "v": 1, "w": 2}),
            ]
        );
    }

    #[test]
    fn malformed_directives_are_refused_as_strategicpatch_refuses_them() {
        let refused = |patch: Value| {
            apply(
                PatchType::StrategicMerge,
                &pod(),
                patch.to_string().as_bytes(),
                pod_shape(),
            )
            .unwrap_err()
        };
        let bad = |m: &str| PatchError::Malformed(m.to_owned());
        assert_eq!(
            refused(json!({"metadata": {"$patch": "explode"}})),
            bad("unknown patch type: \"explode\"")
        );
        assert_eq!(
            refused(json!({"spec": {"$retainKeys": 5}})),
            bad("invalid patch format of retainKeys")
        );
        assert_eq!(
            refused(json!({"spec": {"$retainKeys": ["containers"], "restartPolicy": "Never"}})),
            PatchError::DoesNotApply("patch content doesn't match retainKeys list".to_owned())
        );
        assert_eq!(
            refused(json!({"spec": {"containers": [{"image": "x"}]}})),
            bad(r#"map: {"image":"x"} does not contain declared merge key: name"#)
        );
        assert_eq!(
            refused(json!({"spec": {"containers": [{"$patch": "delete"}]}})),
            bad(r#"map: {"$patch":"delete"} does not contain declared merge key: name"#)
        );
        assert_eq!(
            refused(json!({"spec": {"containers": [{"name": "app", "$patch": "merge"}]}})),
            bad("merging lists cannot yet be specified in the patch")
        );
        assert_eq!(
            refused(json!({"spec": {"containers": ["app"]}})),
            bad(r#"a list merged on "name" holds maps, not "app""#)
        );
        assert_eq!(
            refused(json!({"spec": {"$setElementOrder/containers": 1}})),
            bad("invalid patch format of setElementOrder list")
        );
        assert_eq!(
            refused(json!({"metadata": {"$deleteFromPrimitiveList/finalizers": "a"}})),
            bad("invalid patch format of primitive list")
        );
        // What the directives allow still applies: a replace list may hold elements
        // without the key, and retained keys may be patched.
        let out = strategic(json!({"spec": {"$retainKeys": ["containers"],
            "containers": [{"$patch": "replace"}, {"name": "solo", "image": "s:1"}]}}));
        assert_eq!(
            out["spec"],
            json!({"containers": [{"name": "solo", "image": "s:1"}]})
        );
    }

    #[test]
    fn each_list_merges_on_the_key_its_own_schema_names() {
        // A Service's ports merge on `port`, a container's on `containerPort`, the same
        // field name; a list the schema gives no tags is replaced.
        let service = json!({"spec": {"ports": [
            {"name": "http", "port": 80, "targetPort": 8080},
            {"name": "metrics", "port": 9090},
        ]}});
        let patch = json!({"spec": {"ports": [{"port": 80, "targetPort": 9000}]}});
        let shape = Shape::named("io.k8s.api.core.v1.Service");
        let out = apply(
            PatchType::StrategicMerge,
            &service,
            patch.to_string().as_bytes(),
            shape,
        )
        .unwrap();
        assert_eq!(
            out["spec"]["ports"],
            json!([{"name": "http", "port": 80, "targetPort": 9000},
                   {"name": "metrics", "port": 9090}])
        );
        let container = json!({"spec": {"containers": [{"name": "app", "ports": [{"port": 1}]}]}});
        let patch = json!({"spec": {"containers": [{"name": "app", "ports": [{"port": 2}]}]}});
        let refused = apply(
            PatchType::StrategicMerge,
            &container,
            patch.to_string().as_bytes(),
            pod_shape(),
        );
        assert_eq!(
            refused,
            Err(PatchError::Malformed(
                r#"map: {"port":2} does not contain declared merge key: containerPort"#.to_owned()
            ))
        );
        // Without a schema every list is replaced.
        let out = apply(
            PatchType::StrategicMerge,
            &container,
            patch.to_string().as_bytes(),
            Shape::Deduced,
        )
        .unwrap();
        assert_eq!(
            out["spec"]["containers"],
            json!([{"name": "app", "ports": [{"port": 2}]}])
        );
    }

    #[test]
    fn merge_patch_replaces_lists_and_json_patch_applies_operations() {
        let merged = apply(
            PatchType::Merge,
            &pod(),
            br#"{"spec":{"containers":[{"name":"only","image":"x"}]}}"#,
            pod_shape(),
        )
        .unwrap();
        assert_eq!(merged["spec"]["containers"].as_array().unwrap().len(), 1);
        let patched = apply(
            PatchType::Json,
            &pod(),
            br#"[{"op":"replace","path":"/metadata/labels/app","value":"api"}]"#,
            pod_shape(),
        )
        .unwrap();
        assert_eq!(patched["metadata"]["labels"]["app"], "api");
        assert!(matches!(
            apply(
                PatchType::Json,
                &pod(),
                br#"[{"op":"remove","path":"/nope"}]"#,
                pod_shape(),
            ),
            Err(PatchError::DoesNotApply(_))
        ));
        assert!(matches!(
            apply(PatchType::Merge, &pod(), b"[1]", pod_shape()),
            Err(PatchError::Malformed(_))
        ));
    }

    #[test]
    fn content_types_name_patch_types() {
        assert_eq!(
            PatchType::from_content_type("application/strategic-merge-patch+json; charset=utf-8"),
            Some(PatchType::StrategicMerge)
        );
        assert_eq!(PatchType::from_content_type("application/json"), None);
    }
}
