//! Deployments, ReplicaSets, StatefulSets and DaemonSets (`apps/v1`), kept as records
//! beside a scenario of another kind: the workloads an operator makes of its objects
//! (a Deployment or a StatefulSet per custom resource, a DaemonSet of node agents), and
//! those `kubectl create deployment` and `kubectl apply -f` make. Before, `apps/v1` was
//! served only by a scenario of Deployments, and such an operator's every create was a
//! 404. As kube-apiserver v1.37's apps registries keep them (k8s.io/kubernetes
//! pkg/registry/apps, pkg/apis/apps/v1/defaults.go, pkg/apis/apps/validation):
//! - defaulted ([`defaulted`]): a Deployment as a scenario's is; a ReplicaSet's one
//!   replica; a StatefulSet's one replica, ordered pod management, rolling updates of one
//!   pod from partition 0, PVCs retained, ten revisions; a DaemonSet's rolling updates of
//!   one node without surge, ten revisions; and every pod template as a pod;
//! - the status its controller writes, through the status subresource alone (a
//!   Deployment's labels kept there too), empty on create and kept by writes to the
//!   object ([`prepared`]); the generation moved by a change of the spec (a
//!   Deployment's annotations too), and a DaemonSet's template generation by a change of
//!   its template ([`finished`]);
//! - validated ([`validate`]): the names, replicas, selector and template labels, the
//!   pod template as a pod's, a StatefulSet's and a DaemonSet's update strategies, the
//!   fields an update may not change, the status's counts;
//! - shown by kubectl with kube-apiserver's columns ([`crate::printers`]).
//!
//! No controller runs: a Deployment makes no ReplicaSet and a ReplicaSet no pod, so their
//! status stays as written (as on envtest's kube-apiserver); nothing deletes what an owner
//! left.

use serde_json::{Map, Value, json};

use super::Api;
use crate::version::NamespacedName;
use crate::write::{self, Causes, Endpoint};
use scenario::ObjectKind;

/// Where `apps/v1` keeps a DaemonSet's template generation (its internal
/// `spec.templateGeneration`).
const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// `SetDefaults_*` of a workload `api` decodes, its pod template's included.
pub(super) fn defaulted(api: Api, mut object: Value) -> Value {
    if api == Api::Deployment {
        write::defaulted(ObjectKind::Deployment, &mut object);
        return object;
    }
    let Some(spec) = object.get_mut("spec").filter(|s| s.is_object()) else {
        return object;
    };
    match api {
        Api::ReplicaSet => unset_to(spec, "replicas", json!(1)),
        Api::StatefulSet => {
            if text(spec, "podManagementPolicy").is_empty() {
                spec["podManagementPolicy"] = json!("OrderedReady");
            }
            let strategy = entry(spec, "updateStrategy");
            if text(strategy, "type").is_empty() {
                strategy["type"] = json!("RollingUpdate");
                unset_to(strategy, "rollingUpdate", json!({}));
            }
            if strategy["type"] == "RollingUpdate" && strategy["rollingUpdate"].is_object() {
                let rolling = &mut strategy["rollingUpdate"];
                unset_to(rolling, "partition", json!(0));
                // `MaxUnavailableStatefulSet`, on by default since 1.35.
                unset_to(rolling, "maxUnavailable", json!(1));
            }
            let retention = entry(spec, "persistentVolumeClaimRetentionPolicy");
            for when in ["whenDeleted", "whenScaled"] {
                if text(retention, when).is_empty() {
                    retention[when] = json!("Retain");
                }
            }
            unset_to(spec, "replicas", json!(1));
            unset_to(spec, "revisionHistoryLimit", json!(10));
        }
        Api::DaemonSet => {
            let strategy = entry(spec, "updateStrategy");
            if text(strategy, "type").is_empty() {
                strategy["type"] = json!("RollingUpdate");
            }
            if strategy["type"] == "RollingUpdate" {
                let rolling = entry(strategy, "rollingUpdate");
                unset_to(rolling, "maxUnavailable", json!(1));
                unset_to(rolling, "maxSurge", json!(0));
            }
            unset_to(spec, "revisionHistoryLimit", json!(10));
        }
        _ => {}
    }
    write::template_defaulted(spec);
    object
}

/// What a workload's strategy (`PrepareForCreate`, `PrepareForUpdate`, and its status
/// strategy's) makes of a write of `object` through `endpoint`, given the live one of an
/// update: a create's status is empty, a write to the object keeps the status, a write to
/// the status keeps the spec (and a Deployment's labels).
pub(super) fn prepared(
    api: Api,
    mut object: Value,
    live: Option<&Value>,
    endpoint: Endpoint,
) -> Value {
    let Some(live) = live else {
        object["status"] = json!({});
        return object;
    };
    let kept: &[&str] = match endpoint {
        Endpoint::Object => &["status"],
        Endpoint::Status => &["spec"],
    };
    for field in kept {
        object[*field] = live[*field].clone();
    }
    if (api, endpoint) == (Api::Deployment, Endpoint::Status)
        && let Some(meta) = object["metadata"].as_object_mut()
    {
        match live["metadata"].get("labels") {
            Some(labels) => meta.insert("labels".to_owned(), labels.clone()),
            None => meta.remove("labels"),
        };
    }
    object
}

/// The generation of a workload `stored` as it is to be kept (Go's zero fields in it,
/// as in `kept`, the live one of an update), and a DaemonSet's template generation: a
/// create's first ones; an update's moved by a change of the spec (or of a Deployment's
/// annotations), of the template for the template's.
pub(super) fn finished(api: Api, stored: &mut Value, kept: Option<&Value>) {
    let template_changed =
        kept.is_some_and(|k| k["spec"]["template"] != stored["spec"]["template"]);
    if api == Api::DaemonSet {
        let was = kept
            .and_then(|k| k["metadata"]["annotations"][TEMPLATE_GENERATION].as_str())
            .and_then(|g| g.parse::<i64>().ok())
            .unwrap_or(0);
        let generation = match kept {
            None => 1,
            Some(_) => was.max(1) + i64::from(template_changed),
        };
        let meta = &mut stored["metadata"];
        if !meta["annotations"].is_object() {
            meta["annotations"] = Value::Object(Map::new());
        }
        meta["annotations"][TEMPLATE_GENERATION] = json!(generation.to_string());
    }
    let Some(kept) = kept else { return };
    let annotations_changed = api == Api::Deployment
        && stored["metadata"]["annotations"] != kept["metadata"]["annotations"];
    if stored["spec"] != kept["spec"] || annotations_changed {
        let generation = kept["metadata"]["generation"].as_i64().unwrap_or(1);
        stored["metadata"]["generation"] = json!(generation + 1);
    }
}

/// kube-apiserver's validation of a workload `object` written through `endpoint`
/// (`current`: the live one of an update): through the object, `ValidateDeployment`,
/// `ValidateReplicaSet`, `ValidateStatefulSet` or `ValidateDaemonSet` and their updates'
/// immutable fields; through the status, its counts.
pub(super) fn validate(
    api: Api,
    key: &NamespacedName,
    (object, current, endpoint): (&Value, Option<&Value>, Endpoint),
    causes: &mut Causes,
) {
    write::metadata(key, &object["metadata"], causes);
    if endpoint == Endpoint::Status {
        match api {
            Api::Deployment => write::deployment_status(&object["status"], causes),
            _ => status_counts(api, &object["status"], causes),
        }
        return;
    }
    let spec = &object["spec"];
    let word = match api {
        Api::StatefulSet => "statefulset",
        Api::DaemonSet => "daemonset",
        // A ReplicaSet's says `deployment` too, as kube-apiserver's does.
        _ => "deployment",
    };
    write::workload_spec(word, spec, causes);
    match api {
        Api::StatefulSet => stateful_set_spec(spec, causes),
        Api::DaemonSet => {
            let strategy = &spec["updateStrategy"];
            let kind = text(strategy, "type");
            if kind != "RollingUpdate" && kind != "OnDelete" {
                // Go prints the internal struct, its rolling update as given.
                let rolling = match &strategy["rollingUpdate"] {
                    Value::Null => "null".to_owned(),
                    rolling => format!(
                        "{{\"MaxUnavailable\":{},\"MaxSurge\":{}}}",
                        rolling["maxUnavailable"], rolling["maxSurge"]
                    ),
                };
                let value = format!("{{\"Type\":{kind:?},\"RollingUpdate\":{rolling}}}");
                let supported = r#"supported values: "RollingUpdate", "OnDelete""#;
                let why = format!("Unsupported value: {value}: {supported}");
                causes.push("FieldValueNotSupported", "spec.updateStrategy", why);
            }
        }
        _ => {}
    }
    let Some(current) = current else { return };
    let immutable: &[&str] = match api {
        Api::StatefulSet => &[
            "selector",
            "volumeClaimTemplates",
            "serviceName",
            "podManagementPolicy",
        ],
        _ => &["selector"],
    };
    for field in immutable {
        if spec[*field] != current["spec"][*field] {
            let value = match &spec[*field] {
                Value::Null if *field == "serviceName" => json!(""),
                value => value.clone(),
            };
            causes.invalid(&format!("spec.{field}"), &value, "field is immutable");
        }
    }
}

/// `ValidateStatefulSetSpec`'s own rules: a pod management policy of `OrderedReady` or
/// `Parallel`, an update strategy of `RollingUpdate` (its partition and maximum
/// unavailable) or `OnDelete` (without a rolling update), a service name that is a
/// DNS-1123 label.
fn stateful_set_spec(spec: &Value, causes: &mut Causes) {
    match text(spec, "podManagementPolicy") {
        "OrderedReady" | "Parallel" => {}
        policy => {
            let why = "must be 'OrderedReady' or 'Parallel'";
            causes.invalid("spec.podManagementPolicy", &json!(policy), why);
        }
    }
    let strategy = &spec["updateStrategy"];
    match text(strategy, "type") {
        "RollingUpdate" => {
            let rolling = &strategy["rollingUpdate"];
            if let Some(partition) = rolling["partition"].as_i64().filter(|p| *p < 0) {
                let at = "spec.updateStrategy.rollingUpdate.partition";
                causes.invalid(at, &json!(partition), "must be greater than or equal to 0");
            }
        }
        "OnDelete" if !strategy["rollingUpdate"].is_null() => {
            let why = "only allowed for updateStrategy 'RollingUpdate'";
            let at = "spec.updateStrategy.rollingUpdate";
            causes.invalid(at, &strategy["rollingUpdate"], why);
        }
        "OnDelete" => {}
        _ => {
            let why = "must be 'RollingUpdate' or 'OnDelete'";
            causes.invalid("spec.updateStrategy", strategy, why);
        }
    }
    let service = text(spec, "serviceName");
    if !service.is_empty() {
        let whys = k8s::names::dns_label_errors(service);
        causes.invalid_each("spec.serviceName", service, whys);
    }
}

/// A ReplicaSet's, a StatefulSet's or a DaemonSet's status counts, as
/// `ValidateReplicaSetStatus`, `ValidateStatefulSetStatus` and `validateDaemonSetStatus`
/// check them: none negative, and (but a DaemonSet's, counted in nodes) none of the
/// replicas labelled, current, updated, ready or available more than there are, nor more
/// available than ready.
fn status_counts(api: Api, status: &Value, causes: &mut Causes) {
    let fields: &[&str] = match api {
        Api::ReplicaSet => &[
            "replicas",
            "fullyLabeledReplicas",
            "readyReplicas",
            "availableReplicas",
            "observedGeneration",
            "terminatingReplicas",
        ],
        Api::StatefulSet => &[
            "replicas",
            "readyReplicas",
            "currentReplicas",
            "updatedReplicas",
            "availableReplicas",
            "observedGeneration",
            "collisionCount",
        ],
        _ => &[
            "currentNumberScheduled",
            "numberMisscheduled",
            "desiredNumberScheduled",
            "numberReady",
            "observedGeneration",
            "updatedNumberScheduled",
            "numberAvailable",
            "numberUnavailable",
            "collisionCount",
        ],
    };
    let count = |field: &str| status[field].as_i64().unwrap_or_default();
    for field in fields {
        if status[*field].as_i64().is_some_and(|n| n < 0) {
            let why = "must be greater than or equal to 0";
            causes.invalid(&format!("status.{field}"), &json!(count(field)), why);
        }
    }
    let most: &[&str] = match api {
        Api::ReplicaSet => &["fullyLabeledReplicas", "readyReplicas", "availableReplicas"],
        Api::StatefulSet => &[
            "readyReplicas",
            "currentReplicas",
            "updatedReplicas",
            "availableReplicas",
        ],
        _ => return,
    };
    for field in most {
        if count(field) > count("replicas") {
            let why = "cannot be greater than status.replicas";
            causes.invalid(&format!("status.{field}"), &json!(count(field)), why);
        }
    }
    if count("availableReplicas") > count("readyReplicas") {
        let why = "cannot be greater than status.readyReplicas";
        causes.invalid(
            "status.availableReplicas",
            &json!(count("availableReplicas")),
            why,
        );
    }
}

pub(super) fn text<'a>(value: &'a Value, field: &str) -> &'a str {
    value[field].as_str().unwrap_or_default()
}

/// Sets `object[field]` to `value` where it is unset (absent or null).
pub(super) fn unset_to(object: &mut Value, field: &str, value: Value) {
    if object[field].is_null() {
        object[field] = value;
    }
}

/// `object[field]`, made an empty object where it is none.
pub(super) fn entry<'a>(object: &'a mut Value, field: &str) -> &'a mut Value {
    if !object[field].is_object() {
        object[field] = json!({});
    }
    &mut object[field]
}

#[cfg(test)]
mod tests;
