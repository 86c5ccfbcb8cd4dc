//! The object checks kube-apiserver's validation makes before a write is stored: its
//! namespace and name against the URL's, names, annotations and containers, preconditions.

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::server_fields::Endpoint;
use crate::ApiServer;
use crate::status::ApiError;
use crate::version::NamespacedName;
use k8s::names::{
    MAX_ANNOTATIONS_BYTES, annotations_size, dns_label_errors, dns_subdomain_errors, is_dns_label,
    is_label_value, label_value_errors, qualified_name_errors,
};
use scenario::ObjectKind;

/// Settles the object's namespace and name against the URL's: fills a missing namespace,
/// refuses a different one, and for a create draws a name from `generateName`.
pub(crate) fn object_key(
    kind: &str,
    namespace: &str,
    object: &mut Value,
    url_name: Option<&str>,
    server: &ApiServer,
) -> Result<NamespacedName, ApiError> {
    let meta = object
        .get_mut("metadata")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| invalid_object(kind, "", "metadata"))?;
    match meta.get("namespace").and_then(Value::as_str) {
        // A cluster-scoped object has no namespace, whatever the body says (the
        // registry clears it).
        _ if namespace.is_empty() => {
            meta.remove("namespace");
        }
        None | Some("") => {
            meta.insert("namespace".to_owned(), json!(namespace));
        }
        Some(ns) if ns != namespace => {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request".to_owned(),
            ));
        }
        Some(_) => {}
    }
    let mut name = meta
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if name.is_empty()
        && url_name.is_none()
        && let Some(prefix) = meta.get("generateName").and_then(Value::as_str)
        && !prefix.is_empty()
    {
        name = format!("{prefix}{}", server.random_suffix());
        meta.insert("name".to_owned(), json!(name));
    }
    if let Some(url_name) = url_name
        && name != url_name
    {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({url_name})"
        )));
    }
    if name.is_empty() {
        return Err(invalid_object(
            kind,
            "",
            "metadata.name: Required value: name or generateName is required",
        ));
    }
    Ok(NamespacedName {
        namespace: namespace.to_owned(),
        name,
    })
}

/// A 422 Invalid naming the object (by its kind, qualified by its group: `Pod`,
/// `Deployment.apps`) and what is wrong with it.
fn invalid_object(kind: &str, name: &str, what: &str) -> ApiError {
    ApiError::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        "Invalid",
        format!("{kind} {name:?} is invalid: {what}"),
    )
}

/// The checks kube-apiserver's validation makes that a client is likely to trip over,
/// all of them at once as it reports them (422 `Invalid`, one cause per field): the name
/// is a DNS-1123 subdomain; label keys are qualified names and values valid label
/// values; annotation keys are qualified names, all annotations together at most 256 KiB;
/// a Pod has containers, each named with a unique DNS-1123 label and with an image, and
/// a deadline of at least a second; a ConfigMap's and a Secret's data as [`super::data`]
/// checks it, against `current` (the live object of an update) once it is immutable. A
/// write to the status checks the metadata and, for a Deployment, the status's counts
/// (the spec is the live one).
pub(super) fn object(
    kind: ObjectKind,
    key: &NamespacedName,
    (object, current): (&Value, Option<&Value>),
    endpoint: Endpoint,
) -> Result<(), ApiError> {
    let mut causes = Causes::default();
    match kind {
        // Their updates' checks come first, then the metadata's, as Go's make them.
        ObjectKind::ConfigMap => super::data::config_map(key, object, current, &mut causes),
        ObjectKind::Secret => super::data::secret(key, object, current, &mut causes),
        _ => metadata(key, &object["metadata"], &mut causes),
    }
    match (kind, endpoint) {
        (ObjectKind::Pod, Endpoint::Object) => pod_spec(&object["spec"], "spec", &mut causes),
        (ObjectKind::Deployment, Endpoint::Object) => {
            workload_spec("deployment", &object["spec"], &mut causes);
        }
        (ObjectKind::Deployment, Endpoint::Status) => {
            deployment_status(&object["status"], &mut causes);
        }
        _ => {}
    }
    causes.into_result(kind.qualified_kind(), &key.name)
}

/// `ValidateObjectMeta`'s checks of every kind: the name is a DNS-1123 subdomain; label
/// keys are qualified names and values valid label values; annotation keys are qualified
/// names, all annotations together at most 256 KiB; the finalizers.
pub(crate) fn metadata(key: &NamespacedName, meta: &Value, causes: &mut Causes) {
    causes.invalid_each("metadata.name", &key.name, dns_subdomain_errors(&key.name));
    metadata_but_name(meta, causes);
}

/// `ValidateObjectMeta` of a kind whose names are DNS-1123 labels (a Namespace's,
/// `ValidateNamespaceName`; a Service's): the rest as [`metadata`] checks it.
pub(crate) fn label_named_metadata(name: &str, meta: &Value, causes: &mut Causes) {
    causes.invalid_each("metadata.name", name, dns_label_errors(name));
    metadata_but_name(meta, causes);
}

/// [`metadata`]'s checks of labels, annotations and finalizers.
pub(crate) fn metadata_but_name(meta: &Value, causes: &mut Causes) {
    for (k, v) in meta["labels"].as_object().into_iter().flatten() {
        let field = "metadata.labels";
        causes.invalid_each(field, k, qualified_name_errors(k));
        let value = v.as_str().unwrap_or_default();
        causes.invalid_each(field, value, label_value_errors(value));
    }
    let annotations = meta["annotations"].as_object();
    for k in annotations.into_iter().flatten().map(|(k, _)| k) {
        causes.invalid_each("metadata.annotations", k, qualified_name_errors(k));
    }
    // apimachinery's ValidateAnnotationsSize: keys and values together.
    let size = annotations_size(
        annotations
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or_default())),
    );
    if size > MAX_ANNOTATIONS_BYTES {
        causes.push(
            "FieldValueTooLong",
            "metadata.annotations",
            format!("Too long: may not be more than {MAX_ANNOTATIONS_BYTES} bytes"),
        );
    }
    finalizers(&meta["finalizers"], causes);
}

/// `ValidateFinalizers`: each a qualified name, and not both of the garbage collector's.
fn finalizers(finalizers: &Value, causes: &mut Causes) {
    let names: Vec<&str> = finalizers
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for name in &names {
        causes.invalid_each("metadata.finalizers", name, qualified_name_errors(name));
    }
    if names.contains(&"orphan") && names.contains(&"foregroundDeletion") {
        causes.invalid(
            "metadata.finalizers",
            finalizers,
            "finalizer orphan and foregroundDeletion cannot be both set",
        );
    }
}

/// What an update may not do, all of it at once (422): to a deletion
/// (`ValidateObjectMetaAccessorUpdate`, after `rest.BeforeUpdate` kept the live deletion
/// fields where the update left them out), add a finalizer to an object being deleted,
/// start a deletion, or change its grace period; to a Pod's spec, through the object,
/// change anything but what `ValidatePodUpdate` lets change.
pub(super) fn update(
    kind: ObjectKind,
    key: &NamespacedName,
    object: &Value,
    current: &Value,
    endpoint: Endpoint,
) -> Result<(), ApiError> {
    let mut causes = Causes::default();
    deletion_update(&object["metadata"], &current["metadata"], &mut causes);
    if (kind, endpoint) == (ObjectKind::Pod, Endpoint::Object) {
        pod_spec_update(&object["spec"], &current["spec"], &mut causes);
    }
    causes.into_result(kind.qualified_kind(), &key.name)
}

/// `ValidateObjectMetaUpdate`'s checks of a deletion, of metadata `new` over `was`: no
/// finalizer added to an object being deleted, no deletion started or its grace period
/// changed.
pub(crate) fn deletion_update(new: &Value, was: &Value, causes: &mut Causes) {
    let listed = |meta: &Value| -> Vec<String> {
        let names = meta["finalizers"].as_array().into_iter().flatten();
        names
            .filter_map(|f| f.as_str().map(str::to_owned))
            .collect()
    };
    if !was["deletionTimestamp"].is_null() {
        let before = listed(was);
        let mut added: Vec<String> = listed(new)
            .into_iter()
            .filter(|f| !before.contains(f))
            .collect();
        added.sort();
        added.dedup();
        if !added.is_empty() {
            let quoted: Vec<String> = added.iter().map(|f| format!("{f:?}")).collect();
            causes.push(
                "FieldValueForbidden",
                "metadata.finalizers",
                format!(
                    "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                    quoted.join(", ")
                ),
            );
        }
    }
    for field in ["deletionTimestamp", "deletionGracePeriodSeconds"] {
        let value = &new[field];
        if !value.is_null() && was[field].is_null()
            || field == "deletionGracePeriodSeconds" && !value.is_null() && *value != was[field]
        {
            causes.invalid(&format!("metadata.{field}"), value, "field is immutable");
        }
    }
}

/// What `ValidatePodUpdate` lets an update of a Pod change in its spec.
const UPDATABLE_POD_SPEC_FIELDS: &str = "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

/// `ValidatePodUpdate`'s spec checks: the same containers, each with an image; an active
/// deadline only shortened; tolerations only added (their `tolerationSeconds` may
/// change); scheduling gates only removed; and nothing else changed. (A gated pod's node
/// selector and affinity, which may also change, are held to no change here.)
fn pod_spec_update(new: &Value, old: &Value, causes: &mut Causes) {
    if !pod_containers_update(new, old, causes) || !pod_deadline_update(new, old, causes) {
        return;
    }
    pod_tolerations_update(new, old, causes);
    if new != old {
        pod_spec_fixed(new, old, causes);
    }
}

/// The elements of list `field` of `spec` (none when it has none).
fn list(spec: &Value, field: &str) -> Vec<Value> {
    spec[field].as_array().cloned().unwrap_or_default()
}

/// The same containers, each with an image; `false` when the rest is not checked.
fn pod_containers_update(new: &Value, old: &Value, causes: &mut Causes) -> bool {
    for field in ["containers", "initContainers"] {
        let (containers, before) = (list(new, field), list(old, field));
        if containers.len() != before.len() {
            let message = "Forbidden: pod updates may not add or remove containers".to_owned();
            causes.push("FieldValueForbidden", &format!("spec.{field}"), message);
            return false;
        }
        for (i, container) in containers.iter().enumerate() {
            let image = container["image"].as_str().unwrap_or_default();
            let at = format!("spec.{field}[{i}].image");
            if image.is_empty() {
                causes.push("FieldValueRequired", &at, "Required value".to_owned());
            } else if image.trim() != image {
                causes.invalid(
                    &at,
                    &json!(image),
                    "must not have leading or trailing whitespace",
                );
            }
        }
    }
    true
}

/// An active deadline only shortened; `false` when the rest is not checked.
fn pod_deadline_update(new: &Value, old: &Value, causes: &mut Causes) -> bool {
    let field = "spec.activeDeadlineSeconds";
    match (
        new["activeDeadlineSeconds"].as_i64(),
        old["activeDeadlineSeconds"].as_i64(),
    ) {
        (Some(deadline), _) if !(0..=i64::from(i32::MAX)).contains(&deadline) => {
            let why = format!("must be between 0 and {}, inclusive", i32::MAX);
            causes.invalid(field, &json!(deadline), &why);
            return false;
        }
        (Some(deadline), Some(was)) if was < deadline => {
            let why = "must be less than or equal to previous value";
            causes.invalid(field, &json!(deadline), why);
            return false;
        }
        (None, Some(_)) => {
            causes.invalid(
                field,
                &Value::Null,
                "must not update from a positive integer to nil value",
            );
        }
        _ => {}
    }
    true
}

/// Tolerations only added (their `tolerationSeconds` may change), scheduling gates only
/// removed.
fn pod_tolerations_update(new: &Value, old: &Value, causes: &mut Causes) {
    let tolerations = list(new, "tolerations");
    let kept = list(old, "tolerations").iter().all(|was| {
        tolerations.iter().any(|t| {
            let mut was = was.clone();
            match t.get("tolerationSeconds") {
                Some(seconds) => was["tolerationSeconds"] = seconds.clone(),
                None => {
                    was.as_object_mut().map(|w| w.remove("tolerationSeconds"));
                }
            }
            was == *t
        })
    });
    if !kept {
        let message =
            "Forbidden: existing toleration can not be modified except its tolerationSeconds";
        causes.push(
            "FieldValueForbidden",
            "spec.tolerations",
            message.to_owned(),
        );
    }
    let gate = |g: &Value| g["name"].clone();
    let gates: Vec<Value> = list(old, "schedulingGates").iter().map(gate).collect();
    if let Some(added) = list(new, "schedulingGates")
        .iter()
        .map(gate)
        .find(|g| !gates.contains(g))
    {
        let message = format!(
            "Forbidden: only deletion is allowed, but found new scheduling gate '{}'",
            added.as_str().unwrap_or_default()
        );
        causes.push("FieldValueForbidden", "spec.schedulingGates", message);
    }
}

/// Nothing changed but what may change.
fn pod_spec_fixed(new: &Value, old: &Value, causes: &mut Causes) {
    // What may change, put back as it was; whatever then differs may not change.
    let mut munged = new.clone();
    for field in ["containers", "initContainers"] {
        let before = list(old, field);
        let containers = munged.get_mut(field).and_then(Value::as_array_mut);
        for (container, was) in containers.into_iter().flatten().zip(&before) {
            container["image"] = was["image"].clone();
        }
    }
    let Some(spec) = munged.as_object_mut() else {
        return; // No spec: validation of the object refused it already.
    };
    for field in ["activeDeadlineSeconds", "schedulingGates", "tolerations"] {
        match old.get(field) {
            Some(was) => spec.insert(field.to_owned(), was.clone()),
            None => spec.remove(field),
        };
    }
    let grace = "terminationGracePeriodSeconds";
    if old[grace].as_i64().is_some_and(|g| g < 0) && new[grace] == 1 {
        spec.insert(grace.to_owned(), old[grace].clone());
    }
    let changed: Vec<&str> = changed_fields(&munged, old);
    if !changed.is_empty() {
        let message = format!(
            "Forbidden: pod updates may not change fields other than {UPDATABLE_POD_SPEC_FIELDS}; changed: {}",
            changed.join(", ")
        );
        causes.push("FieldValueForbidden", "spec", message);
    }
}

/// The fields of `spec` whose values differ from `was`'s, by name.
fn changed_fields<'a>(spec: &'a Value, was: &'a Value) -> Vec<&'a str> {
    let (Some(spec), Some(was)) = (spec.as_object(), was.as_object()) else {
        return Vec::new();
    };
    let mut names: Vec<&str> = spec.keys().chain(was.keys()).map(String::as_str).collect();
    names.sort_unstable();
    names.dedup();
    names.retain(|name| spec.get(*name) != was.get(*name));
    names
}

/// A workload's spec (a Deployment's, a ReplicaSet's, a StatefulSet's, a DaemonSet's), as
/// `ValidateDeploymentSpec` and its siblings check what a write can get wrong here, in
/// their order: replicas not negative, a selector that selects something (an empty one is
/// "invalid for `word`": kube-apiserver says `deployment` of a ReplicaSet's too), template
/// labels it selects, the template's pod spec as a Pod's and restarted always, then the
/// minimum ready seconds and the history limit not negative. A missing selector is
/// required (but a DaemonSet's) and selects nothing.
pub(crate) fn workload_spec(word: &str, spec: &Value, causes: &mut Causes) {
    let not_negative = "must be greater than or equal to 0";
    if let Some(replicas) = spec["replicas"].as_i64().filter(|r| *r < 0) {
        causes.invalid("spec.replicas", &json!(replicas), not_negative);
    }
    let selector = &spec["selector"];
    let labels = &spec["template"]["metadata"]["labels"];
    let empty = |field: &str| {
        selector[field].as_object().is_none_or(|m| m.is_empty())
            && selector[field].as_array().is_none_or(Vec::is_empty)
    };
    let mismatch = |causes: &mut Causes| {
        causes.invalid(
            "spec.template.metadata.labels",
            labels,
            "`selector` does not match template `labels`",
        );
    };
    if selector.is_null() {
        // A DaemonSet's selector is checked only as a label selector, which nil is; nil
        // selects nothing, the template's labels included.
        if word != "daemonset" {
            causes.required("spec.selector");
        }
        mismatch(causes);
    } else if empty("matchLabels") && empty("matchExpressions") {
        let why = format!("empty selector is invalid for {word}");
        causes.invalid("spec.selector", selector, &why);
    } else if !selects(selector, labels) {
        mismatch(causes);
    }
    let pod = &spec["template"]["spec"];
    pod_spec(pod, "spec.template.spec", causes);
    match pod["restartPolicy"].as_str() {
        None | Some("Always") => {}
        Some(other) => causes.push(
            "FieldValueNotSupported",
            "spec.template.spec.restartPolicy",
            format!("Unsupported value: {other:?}: supported values: \"Always\""),
        ),
    }
    for field in ["minReadySeconds", "revisionHistoryLimit"] {
        if let Some(n) = spec[field].as_i64().filter(|n| *n < 0) {
            causes.invalid(&format!("spec.{field}"), &json!(n), not_negative);
        }
    }
}

/// Whether a LabelSelector selects an object with `labels`.
pub(crate) fn selects(selector: &Value, labels: &Value) -> bool {
    let label = |key: &str| labels[key].as_str();
    let matched = selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .all(|(k, v)| label(k) == v.as_str());
    let expressions = selector["matchExpressions"].as_array();
    matched
        && expressions.into_iter().flatten().all(|e| {
            let key = e["key"].as_str().unwrap_or_default();
            let values: Vec<&str> = e["values"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            match e["operator"].as_str().unwrap_or_default() {
                "In" => label(key).is_some_and(|v| values.contains(&v)),
                "NotIn" => label(key).is_none_or(|v| !values.contains(&v)),
                "Exists" => label(key).is_some(),
                "DoesNotExist" => label(key).is_none(),
                _ => false,
            }
        })
}

/// A Deployment's status counts, as `ValidateDeploymentStatus` checks them: none
/// negative, and none of the replicas updated, ready or available more than there are
/// (nor more available than ready).
pub(crate) fn deployment_status(status: &Value, causes: &mut Causes) {
    let count = |field: &str| status[field].as_i64();
    for field in [
        "observedGeneration",
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
        "unavailableReplicas",
        "terminatingReplicas",
        "collisionCount",
    ] {
        if let Some(n) = count(field).filter(|n| *n < 0) {
            causes.invalid(
                &format!("status.{field}"),
                &json!(n),
                "must be greater than or equal to 0",
            );
        }
    }
    let replicas = count("replicas").unwrap_or(0);
    let ready = count("readyReplicas").unwrap_or(0);
    for (field, most, of) in [
        ("updatedReplicas", replicas, "status.replicas"),
        ("readyReplicas", replicas, "status.replicas"),
        ("availableReplicas", replicas, "status.replicas"),
        ("availableReplicas", ready, "readyReplicas"),
    ] {
        // A count left out is Go's zero, checked as any other.
        if let Some(n) = Some(count(field).unwrap_or(0)).filter(|n| *n > most) {
            causes.invalid(
                &format!("status.{field}"),
                &json!(n),
                &format!("cannot be greater than {of}"),
            );
        }
    }
}

/// A Pod's containers and the numbers it stores.
pub(crate) fn pod_spec(spec: &Value, at: &str, causes: &mut Causes) {
    let containers = spec["containers"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if containers.is_empty() {
        causes.push(
            "FieldValueRequired",
            &format!("{at}.containers"),
            "Required value".to_owned(),
        );
    }
    let mut names = std::collections::HashSet::new();
    let init = spec["initContainers"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let all = init
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("{at}.initContainers[{i}]"), c))
        .chain(
            containers
                .iter()
                .enumerate()
                .map(|(i, c)| (format!("{at}.containers[{i}]"), c)),
        );
    for (field, c) in all {
        let at = field.as_str();
        let name = c["name"].as_str().unwrap_or_default();
        if name.is_empty() {
            causes.push(
                "FieldValueRequired",
                &format!("{at}.name"),
                "Required value".to_owned(),
            );
        } else if !is_dns_label(name) {
            causes.invalid_each(&format!("{at}.name"), name, dns_label_errors(name));
        } else if !names.insert(name) {
            causes.push(
                "FieldValueDuplicate",
                &format!("{at}.name"),
                format!("Duplicate value: {:?}", name),
            );
        }
        if c["image"].as_str().unwrap_or_default().is_empty() {
            causes.push(
                "FieldValueRequired",
                &format!("{at}.image"),
                "Required value".to_owned(),
            );
        }
    }
    // A negative grace period is not refused: a Pod's defaults made it 1.
    if let Some(n) = spec["activeDeadlineSeconds"].as_i64().filter(|n| *n < 1) {
        causes.invalid(
            &format!("{at}.activeDeadlineSeconds"),
            &json!(n),
            "must be greater than or equal to 1",
        );
    }
    let tolerations = spec["tolerations"].as_array().map(Vec::as_slice);
    for (i, t) in tolerations.unwrap_or_default().iter().enumerate() {
        toleration(&format!("{at}.tolerations[{i}]"), t, causes);
    }
}

/// `ValidateTolerations` for one toleration at `at`.
fn toleration(at: &str, t: &Value, causes: &mut Causes) {
    let text = |field: &str| t[field].as_str().unwrap_or_default();
    let (key, operator, value, effect) =
        (text("key"), text("operator"), text("value"), text("effect"));
    if !key.is_empty() {
        causes.invalid_each(&format!("{at}.key"), key, qualified_name_errors(key));
    }
    if key.is_empty() && operator != "Exists" {
        let why = "operator must be Exists when `key` is empty, which means \"match all values and all keys\"";
        causes.invalid(&format!("{at}.operator"), &json!(operator), why);
    }
    if !t["tolerationSeconds"].is_null() && effect != "NoExecute" {
        let why = "effect must be 'NoExecute' when `tolerationSeconds` is set";
        causes.invalid(&format!("{at}.effect"), &json!(effect), why);
    }
    match operator {
        "" | "Equal" if !is_label_value(value) => {
            // Its reasons joined with no space, as ValidateTolerations joins them.
            let why = label_value_errors(value).join(";");
            causes.invalid(&format!("{at}.operator"), &json!(value), &why);
        }
        "" | "Equal" => {}
        "Exists" if !value.is_empty() => {
            let why = "value must be empty when `operator` is 'Exists'";
            causes.invalid(&format!("{at}.operator"), &json!(t), why);
        }
        "Exists" => {}
        other => causes.push(
            "FieldValueNotSupported",
            &format!("{at}.operator"),
            format!("Unsupported value: {other:?}: supported values: \"Equal\", \"Exists\""),
        ),
    }
    if !matches!(effect, "" | "NoSchedule" | "PreferNoSchedule" | "NoExecute") {
        causes.push(
            "FieldValueNotSupported",
            &format!("{at}.effect"),
            format!("Unsupported value: {effect:?}: supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""),
        );
    }
}

/// The fields at fault, gathered as kube-apiserver's field.ErrorList.
#[derive(Debug, Default)]
pub(crate) struct Causes(Vec<(&'static str, String, String)>);

impl Causes {
    pub(crate) fn push(&mut self, reason: &'static str, field: &str, message: String) {
        self.0.push((reason, message, field.to_owned()));
    }

    pub(crate) fn invalid(&mut self, field: &str, value: &Value, why: &str) {
        self.push(
            "FieldValueInvalid",
            field,
            format!("Invalid value: {value}: {why}"),
        );
    }

    /// One `Invalid` cause for each of `whys` (a name's reasons, as Go's validators
    /// return them: [`k8s::names::dns_subdomain_errors`] and the others).
    pub(crate) fn invalid_each(&mut self, field: &str, value: &str, whys: Vec<String>) {
        for why in whys {
            self.invalid(field, &json!(value), &why);
        }
    }

    /// A value none of `supported` (`FieldValueNotSupported`), quoted as Go quotes them.
    pub(crate) fn not_supported(&mut self, field: &str, value: &str, supported: &[&str]) {
        let listed: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
        let why = format!(
            "Unsupported value: {value:?}: supported values: {}",
            listed.join(", ")
        );
        self.push("FieldValueNotSupported", field, why);
    }

    /// A required field left out (`FieldValueRequired`).
    pub(crate) fn required(&mut self, field: &str) {
        self.push("FieldValueRequired", field, "Required value".to_owned());
    }

    /// `Ok` when nothing is at fault; else 422 with every cause, worded as
    /// kube-apiserver words them (one: `field: message`; more: `[a: x, b: y]`), its
    /// `details` naming the object by `kind`, qualified by its group (`Pod`,
    /// `Deployment.apps`), as `errors.NewInvalid` does, so that kubectl prints `The Pod
    /// "x" is invalid`.
    pub(crate) fn into_result(self, kind: &'static str, name: &str) -> Result<(), ApiError> {
        let mut listed: Vec<String> = self.0.iter().map(|(_, m, f)| format!("{f}: {m}")).collect();
        let what = match listed.len() {
            0 => return Ok(()),
            1 => listed.remove(0),
            _ => format!("[{}]", listed.join(", ")),
        };
        Err(invalid_object(kind, name, &what)
            .about(name, kind)
            .with_causes(self.0))
    }
}

/// Refuses an update written against another version or another object (HTTP 409), of
/// `resource` (as messages name it: `pods`, `leases.coordination.k8s.io`).
pub(crate) fn check_preconditions(
    resource: &'static str,
    key: &NamespacedName,
    object: &Value,
    current: &Value,
) -> Result<(), ApiError> {
    let conflict = |message: String| {
        ApiError::new(StatusCode::CONFLICT, "Conflict", message).about(&key.name, resource)
    };
    let field = |v: &Value, f: &str| v["metadata"][f].as_str().unwrap_or_default().to_owned();
    let rv = field(object, "resourceVersion");
    if !rv.is_empty() && rv.parse::<u64>().is_err() {
        // kube-apiserver's storage fails to parse it and answers a bare 500.
        return Err(ApiError::internal(format!(
            "resourceVersion {rv:?} is not a number"
        )));
    }
    if !rv.is_empty() && rv != field(current, "resourceVersion") {
        return Err(conflict(format!(
            "Operation cannot be fulfilled on {resource} {:?}: the object has been modified; please apply your changes to the latest version and try again",
            key.name
        )));
    }
    let uid = field(object, "uid");
    let current_uid = field(current, "uid");
    if !uid.is_empty() && uid != current_uid {
        return Err(conflict(format!(
            "Precondition failed: UID in precondition: {current_uid}, UID in object meta: {uid}"
        )));
    }
    Ok(())
}
