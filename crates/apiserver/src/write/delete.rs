//! DELETE and deletecollection, with kube-apiserver's graceful deletion and finalizers.
//!
//! An object with finalizers is not deleted: its `deletionTimestamp` is set (and its
//! `deletionGracePeriodSeconds` to 0), and it goes once an update empties its finalizers
//! (see [`emptied`]). A Pod is deleted gracefully: its `deletionTimestamp` is its grace
//! period away (`gracePeriodSeconds`, else its spec's `terminationGracePeriodSeconds`; 0
//! when it is not scheduled or has ended), and it stays until a delete with no grace
//! period. Even then it is first updated with its deletion fields, so a watch sees
//! MODIFIED, then DELETED. `propagationPolicy=Orphan` and `Foreground` (and
//! `orphanDependents`) add the garbage collector's `orphan` and `foregroundDeletion`
//! finalizers. Each of these steps is kube-apiserver v1.37's registry
//! (`rest.BeforeDelete`, the Pod strategy's `CheckGracefulDelete`,
//! `deletionFinalizersForGarbageCollection`, `markAsDeleting`).
//!
//! A real cluster then finishes what the DELETE leaves pending: the kubelet ends the
//! Pod's containers and deletes it with no grace period; the garbage collector, once the
//! dependents are dealt with, removes its finalizers. The built-in server has no
//! dependents (it holds one kind) and no containers, so it does both at once after the
//! DELETE, unless [`ApiServer::stand_alone`]: the finalizers clients set stay until a
//! client removes them.

use std::convert::Infallible;

use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Map, Value, json};

use super::options::DeleteOptions;
use super::{no_cluster_object, respond, scoped, writable};
use crate::extract::{ApiBody, ApiPath};
use crate::form::{Wire, object_response};
use crate::generate::{self, Generator};
use crate::group::Group;
use crate::query::{Query, Selection};
use crate::status::{ApiError, json_response, object_not_found};
use crate::version::Version;
use crate::{ApiServer, Removal};
use scenario::ObjectKind;

/// The garbage collector's finalizers: orphan the dependents, or delete them first.
const GC_FINALIZERS: [&str; 2] = ["orphan", "foregroundDeletion"];

/// `DELETE {root}/{resource}/{name}`.
pub async fn delete_cluster<G: Group>(
    State(server): State<ApiServer>,
    ApiPath((resource, name)): ApiPath<(String, String)>,
    query: RawQuery,
    body: ApiBody,
) -> Response {
    if let Some(missing) = no_cluster_object(G::kind(server.spec().kind, &resource)) {
        return missing;
    }
    let path = ApiPath((String::new(), resource, name));
    delete::<G>(State(server), path, query, body).await
}

/// `DELETE {root}/{resource}`.
pub async fn delete_collection_cluster<G: Group>(
    State(server): State<ApiServer>,
    ApiPath(resource): ApiPath<String>,
    query: RawQuery,
    body: ApiBody,
) -> Response {
    let path = ApiPath((String::new(), resource));
    delete_collection::<G>(State(server), path, query, body).await
}

/// `DELETE {root}/namespaces/{namespace}/{resource}/{name}`. The answer is
/// kube-apiserver's: the object as it is after, when it stays (200; 202 when
/// `orphanDependents=false` asked for a cascade); once it is gone, or when its deletion
/// was already under way, its last state for a Pod (its registry returns deleted
/// objects), a `Success` Status naming it for the other kinds. The options come as
/// query parameters or, as client-go sends them, as a DeleteOptions body.
pub async fn delete<G: Group>(
    State(server): State<ApiServer>,
    ApiPath((namespace, resource, name)): ApiPath<(String, String, String)>,
    RawQuery(query): RawQuery,
    ApiBody(body): ApiBody,
) -> Response {
    respond(|| {
        let Some(kind) = G::kind(server.spec().kind, &resource) else {
            return Err(ApiError::unknown_resource());
        };
        let kind = scoped(kind, &namespace)?;
        let options = DeleteOptions::parse(query.as_deref(), &body)?;
        let generator = server.generator();
        if kind != generator.spec().kind {
            return Ok(object_not_found(kind, &name));
        }
        Ok(
            match delete_one(&server, kind, (&namespace, &name), &options)? {
                Deleted::Missing => object_not_found(kind, &name),
                Deleted::Finalized(version) => finalized(kind, generator, &version),
                Deleted::Stays(version) => {
                    object_response(options.pending_code(), generator, &version, Wire::Json)
                }
            },
        )
    })
}

/// A pod's eviction where no disruption budget stands in the way, as kube-apiserver's
/// `addConditionAndDeletePod`: first the pod's `DisruptionTarget` condition is set (an
/// update of its status: a MODIFIED, its managedFields and generation as they were; the
/// preconditions checked against the pod it updates, and a resourceVersion precondition
/// moved on to the version it makes), then the pod is deleted with `options`. A dry run
/// sets no condition.
pub(crate) fn evict(
    server: &ApiServer,
    (namespace, name): (&str, &str),
    mut options: DeleteOptions,
) -> Result<Deleted, ApiError> {
    let kind = ObjectKind::Pod;
    if !options.dry_run {
        let generator = server.generator();
        let marked = server.delete_named(namespace, name, false, |current| {
            options.check(kind, generator, current)?;
            let pod = current.to_value(generator);
            let mut marked = pod.clone();
            disruption_target(&mut marked, now());
            Ok::<_, ApiError>(match marked == pod {
                true => Removal::Keep,
                false => Removal::Store(marked),
            })
        })?;
        let Some(marked) = marked else {
            return Ok(Deleted::Missing);
        };
        if options.resource_version.is_some() {
            options.resource_version = Some(marked.version.id.resource_version.to_string());
        }
    }
    delete_one(server, kind, (namespace, name), &options)
}

/// Sets `pod`'s `DisruptionTarget` condition as an eviction does (client-go's
/// `UpdatePodCondition`: appended, or updated in place with its transition time kept
/// while its status stays `True`).
fn disruption_target(pod: &mut Value, at: i64) {
    if !pod["status"].is_object() {
        pod["status"] = json!({});
    }
    if !pod["status"]["conditions"].is_array() {
        pod["status"]["conditions"] = json!([]);
    }
    let Some(conditions) = pod["status"]["conditions"].as_array_mut() else {
        return;
    };
    let evicting = json!({
        "type": "DisruptionTarget", "status": "True", "lastProbeTime": null,
        "lastTransitionTime": timestamp(at), "reason": "EvictionByEvictionAPI",
        "message": "Eviction API: evicting",
    });
    match conditions
        .iter_mut()
        .find(|c| c["type"] == "DisruptionTarget")
    {
        None => conditions.push(evicting),
        Some(condition) => {
            if condition["status"] == "True" {
                let since = condition["lastTransitionTime"].take();
                *condition = evicting;
                condition["lastTransitionTime"] = since;
            } else {
                *condition = evicting;
            }
        }
    }
}

/// What a DELETE of one object did.
pub(crate) enum Deleted {
    /// There is no such object.
    Missing,
    /// It is gone, or its deletion was already under way: its last state.
    Finalized(Version),
    /// It stays for now (finalizers, a pod's grace period): as it is after the DELETE.
    Stays(Version),
}

/// Deletes the scenario's object `namespace/name`, of `kind`, with `options`, as a DELETE
/// of it does (and a pod's eviction, which is one where no disruption budget stands in
/// the way); the server then finishes what the DELETE leaves pending, as a cluster's
/// kubelet and garbage collector would.
pub(crate) fn delete_one(
    server: &ApiServer,
    kind: ObjectKind,
    (namespace, name): (&str, &str),
    options: &DeleteOptions,
) -> Result<Deleted, ApiError> {
    let generator = server.generator();
    let mut pending = false;
    let removed = server.delete_named(namespace, name, options.dry_run, |current| {
        options.check(kind, generator, current)?;
        let plan = plan(kind, &current.to_value(generator), options, now());
        pending = plan.pending;
        Ok::<_, ApiError>(plan.removal)
    })?;
    let Some(removed) = removed else {
        return Ok(Deleted::Missing);
    };
    if removed.gone || pending {
        return Ok(Deleted::Finalized(removed.version));
    }
    if !options.dry_run && server.finishes_deletions() {
        finish_deletion(server, kind, (namespace, name));
    }
    Ok(Deleted::Stays(removed.version))
}

/// `DELETE {root}/namespaces/{namespace}/{resource}`: deletes what the selectors select,
/// each as a DELETE of it would, and answers with the list of them as they were.
pub async fn delete_collection<G: Group>(
    State(server): State<ApiServer>,
    ApiPath((namespace, resource)): ApiPath<(String, String)>,
    RawQuery(query): RawQuery,
    ApiBody(body): ApiBody,
) -> Response {
    respond(|| {
        let kind = scoped(
            writable(&server, G::kind(server.spec().kind, &resource))?,
            &namespace,
        )?;
        let options = DeleteOptions::parse(query.as_deref(), &body)?;
        let q = Query::parse(query.as_deref().unwrap_or_default())?;
        let namespace = (!namespace.is_empty()).then_some(namespace.as_str());
        let selection = Selection::new(&server, kind, namespace, &q)?;
        let (rv, deleted) = delete_selected(&server, &selection, &options);
        let generator = server.generator();
        let mut buf = format!(
            r#"{{"kind":"{}List","apiVersion":"{}","metadata":{{"resourceVersion":"{rv}"}},"items":["#,
            kind.as_str(),
            kind.api_version()
        )
        .into_bytes();
        for (i, version) in deleted.iter().enumerate() {
            if i > 0 {
                buf.push(b',');
            }
            version.write_item(&mut buf, generator);
        }
        buf.extend_from_slice(b"]}");
        Ok(json_response(StatusCode::OK, Body::from(buf)))
    })
}

/// Deletes every live object `selection` selects as a DELETE of each would (graceful
/// deletion, finalizers), then finishes what a cluster would finish; returns the
/// resourceVersion they were listed at and them as they were.
fn delete_selected(
    server: &ApiServer,
    selection: &Selection,
    options: &DeleteOptions,
) -> (u64, Vec<Version>) {
    let kind = selection.kind;
    let generator = server.generator().clone();
    let now = now();
    let (rv, deleted) = server.delete_where(
        |v| selection.matches(generator.spec(), v),
        options.dry_run,
        |v| plan(kind, &v.to_value(&generator), options, now).removal,
    );
    if !options.dry_run && server.finishes_deletions() {
        for version in &deleted {
            let object = version.to_value(&generator);
            let text = |field: &str| object["metadata"][field].as_str().unwrap_or_default();
            finish_deletion(server, kind, (text("namespace"), text("name")));
        }
    }
    (rv, deleted)
}

/// The namespace controller's deletion of the scenario's objects in `namespace` (a
/// deletecollection with background propagation: Pods gracefully, the kubelet ending
/// them; finalizers holding what has them); returns the finalizers (as listed) of each
/// object still there.
pub(crate) fn empty_namespace(server: &ApiServer, namespace: &str) -> Vec<Value> {
    let kind = server.spec().kind;
    if !kind.namespaced() {
        return Vec::new();
    }
    let selection = Selection::new(server, kind, Some(namespace), &Query::default())
        .expect("no field selector to refuse");
    delete_selected(server, &selection, &DeleteOptions::background());
    let generator = server.generator();
    let left = server.live_where(|v| selection.matches(generator.spec(), v));
    let finalizers = |v: &Version| v.to_value(generator)["metadata"]["finalizers"].take();
    left.iter().map(finalizers).collect()
}

/// The answer to a DELETE that removed the object or found its deletion under way
/// (kube-apiserver's `finalizeDelete`): a Pod's last state, else a `Success` Status.
fn finalized(kind: ObjectKind, generator: &Generator, version: &Version) -> Response {
    if kind == ObjectKind::Pod {
        return object_response(StatusCode::OK, generator, version, Wire::Json);
    }
    let object = version.to_value(generator);
    let body = deleted_status(&object, kind.plural(), kind.group());
    json_response(StatusCode::OK, Body::from(body.to_string()))
}

/// The `Success` Status kube-apiserver answers a DELETE with once `object` (as JSON), of
/// resource `plural` in `group`, is gone, where its registry does not return the object.
pub(crate) fn deleted_status(object: &Value, plural: &str, group: &str) -> Value {
    let meta = &object["metadata"];
    let mut details = json!({"name": meta["name"], "kind": plural, "uid": meta["uid"]});
    if !group.is_empty() {
        details["group"] = json!(group);
    }
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    })
}

/// What a kind's registry does on a DELETE: kube-apiserver's
/// `RESTGracefulDeleteStrategy` (a Pod's) and `GarbageCollectionDeleteStrategy`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct DeleteStrategy {
    /// Deleted gracefully, over its grace period (a Pod).
    pub(crate) graceful: bool,
    /// What becomes of its dependents when neither the DELETE nor its finalizers say.
    pub(crate) policy: GcPolicy,
}

/// A kind's `DefaultGarbageCollectionPolicy`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum GcPolicy {
    /// Deleted in the background (most kinds).
    #[default]
    DeleteDependents,
    /// Orphaned: the `orphan` finalizer is added (a `batch/v1` Job).
    OrphanDependents,
    /// No garbage collector's finalizer is ever added, whatever the DELETE asks (an
    /// Event).
    Unsupported,
}

impl From<ObjectKind> for DeleteStrategy {
    /// A scenario kind's: a Pod's graceful; each of them deletes its dependents.
    fn from(kind: ObjectKind) -> DeleteStrategy {
        DeleteStrategy {
            graceful: kind == ObjectKind::Pod,
            policy: GcPolicy::DeleteDependents,
        }
    }
}

/// What a DELETE does to one object.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) removal: Removal,
    /// The object's graceful deletion was already under way and the DELETE does not
    /// shorten it: answered as a removal is.
    pub(crate) pending: bool,
}

/// What a DELETE with `options` does to `current` (the live object as JSON) at `now`
/// (seconds since the epoch), under its kind's `strategy`.
pub(crate) fn plan(
    strategy: impl Into<DeleteStrategy>,
    current: &Value,
    options: &DeleteOptions,
    now: i64,
) -> Plan {
    let strategy = strategy.into();
    let mut object = current.clone();
    let grace = match strategy.graceful {
        true => pod_grace(&mut object, options, now),
        false => Grace::Immediate,
    };
    if let Grace::Pending = grace {
        return Plan {
            removal: Removal::Keep,
            pending: true,
        };
    }
    let meta = metadata(&mut object);
    if let Some(finalizers) = gc_finalizers(meta, options, strategy.policy) {
        meta.insert("finalizers".to_owned(), json!(finalizers));
    }
    let finalizers_pending = meta
        .get("finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| !f.is_empty());
    let removal = match grace {
        Grace::Immediate if finalizers_pending => {
            mark_as_deleting(meta, now);
            if object == *current {
                Removal::Keep
            } else {
                Removal::Store(object)
            }
        }
        Grace::Immediate => Removal::Delete,
        Grace::Period(period) if finalizers_pending || period > 0 => Removal::Store(object),
        Grace::Period(_) => Removal::StoreThenDelete(object),
        Grace::Pending => unreachable!("answered above"),
    };
    Plan {
        removal,
        pending: false,
    }
}

/// Whether an update that makes `object` of `current` deletes it instead
/// (`ShouldDeleteDuringUpdate`): it leaves no finalizer on an object whose deletion
/// waits for nothing else.
pub(crate) fn emptied(object: &Value, current: &Value) -> bool {
    let was = &current["metadata"];
    object["metadata"]["finalizers"]
        .as_array()
        .is_none_or(Vec::is_empty)
        && !was["deletionTimestamp"].is_null()
        && was["deletionGracePeriodSeconds"].as_i64().unwrap_or(0) == 0
}

/// How a Pod's deletion goes.
#[derive(Debug, Clone, Copy)]
enum Grace {
    /// Not gracefully: at once, but for finalizers.
    Immediate,
    /// Gracefully, the deletion fields set; the period the DELETE asked for.
    Period(i64),
    /// Already under way, and this DELETE does not shorten it.
    Pending,
}

/// A Pod's graceful deletion (`rest.BeforeDelete` with the Pod strategy's
/// `CheckGracefulDelete`), its deletion fields set in `object`.
fn pod_grace(object: &mut Value, options: &DeleteOptions, now: i64) -> Grace {
    let requested = options.grace_period.map(|g| if g < 0 { 1 } else { g });
    let started = seconds_of(&object["metadata"]["deletionTimestamp"]);
    let has_generation = object["metadata"]["generation"].as_i64().unwrap_or(0) > 0;
    let meta = metadata(object);
    if let Some(at) = started {
        let existing = meta
            .get("deletionGracePeriodSeconds")
            .and_then(Value::as_i64)
            .map(|g| if g < 0 { 1 } else { g });
        let Some(existing) = existing.filter(|g| *g != 0) else {
            return Grace::Immediate;
        };
        return match requested {
            Some(wanted) if wanted < existing => {
                // Shortened: the deadline moves back, never before now; a graceful
                // request whose whole period has passed still gets a second.
                let (mut deadline, mut period) = (at - existing + wanted, wanted);
                if deadline < now {
                    deadline = now;
                    if period != 0 {
                        period = 1;
                    }
                }
                set_deletion(meta, deadline, period);
                Grace::Period(wanted)
            }
            _ => Grace::Pending,
        };
    }
    let spec = &object["spec"];
    let mut period = requested
        .or_else(|| spec["terminationGracePeriodSeconds"].as_i64())
        .unwrap_or(0);
    let unscheduled = spec["nodeName"].as_str().is_none_or(str::is_empty);
    let ended = matches!(
        object["status"]["phase"].as_str(),
        Some("Failed" | "Succeeded")
    );
    if unscheduled || ended {
        period = 0;
    }
    let period = if period < 0 { 1 } else { period };
    let meta = metadata(object);
    set_deletion(meta, now + period, period);
    if has_generation {
        bump_generation(meta);
    }
    Grace::Period(period)
}

/// The finalizers the DELETE's propagation asks of the garbage collector, in place of
/// the object's own `orphan` and `foregroundDeletion` (the kind's `policy` when neither
/// says: `deletionFinalizersForGarbageCollection`); `None` when they do not change.
pub(crate) fn gc_finalizers(
    meta: &Map<String, Value>,
    options: &DeleteOptions,
    policy: GcPolicy,
) -> Option<Vec<String>> {
    if policy == GcPolicy::Unsupported {
        return None;
    }
    let existing: Vec<&str> = meta
        .get("finalizers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    // The object's own say, when the options say nothing: its first GC finalizer.
    let own = existing.iter().find(|f| GC_FINALIZERS.contains(f)).copied();
    let orphan = match (options.orphan_dependents, options.propagation.as_deref()) {
        (Some(orphan), _) => orphan,
        (None, Some(policy)) => policy == "Orphan",
        (None, None) => own.map_or(policy == GcPolicy::OrphanDependents, |own| own == "orphan"),
    };
    let foreground = match (options.orphan_dependents, options.propagation.as_deref()) {
        (Some(_), _) => false,
        (None, Some(policy)) => policy == "Foreground",
        (None, None) => own == Some("foregroundDeletion"),
    };
    let mut finalizers: Vec<String> = existing
        .iter()
        .filter(|f| !GC_FINALIZERS.contains(f))
        .map(|f| (*f).to_owned())
        .collect();
    if orphan {
        finalizers.push("orphan".to_owned());
    }
    if foreground {
        finalizers.push("foregroundDeletion".to_owned());
    }
    let same = finalizers.len() == existing.len()
        && finalizers.iter().all(|f| existing.contains(&f.as_str()))
        && existing.iter().all(|f| finalizers.iter().any(|n| n == f));
    (!same).then_some(finalizers)
}

/// `markAsDeleting`: deletion now (or earlier, if it already was) with no grace period;
/// the generation moves on the first time.
fn mark_as_deleting(meta: &mut Map<String, Value>, now: i64) {
    let started = meta.get("deletionTimestamp").and_then(seconds_of);
    if started.is_none() && meta.get("generation").and_then(Value::as_i64).unwrap_or(0) > 0 {
        bump_generation(meta);
    }
    let at = started.filter(|at| *at <= now).unwrap_or(now);
    set_deletion(meta, at, 0);
}

fn set_deletion(meta: &mut Map<String, Value>, at: i64, period: i64) {
    meta.insert("deletionTimestamp".to_owned(), timestamp(at));
    meta.insert("deletionGracePeriodSeconds".to_owned(), json!(period));
}

fn bump_generation(meta: &mut Map<String, Value>) {
    let generation = meta.get("generation").and_then(Value::as_i64).unwrap_or(0);
    meta.insert("generation".to_owned(), json!(generation + 1));
}

fn metadata(object: &mut Value) -> &mut Map<String, Value> {
    if !object["metadata"].is_object() {
        object["metadata"] = json!({});
    }
    object["metadata"]
        .as_object_mut()
        .expect("metadata was made an object")
}

/// What a cluster does after a DELETE leaves `key`'s deletion pending: the garbage
/// collector, with no dependents to wait for, removes its finalizers (deleting the
/// object when none is left, as the update that empties them does); the kubelet stops a
/// running Pod's containers at once and writes its terminal status, then deletes the Pod
/// with no grace period. A watch sees a graceful deletion's steps, as in a `graceful`
/// phase: MODIFIED (the DELETE), MODIFIED (the status), MODIFIED and DELETED.
fn finish_deletion(server: &ApiServer, kind: ObjectKind, (namespace, name): (&str, &str)) {
    let generator = server.generator().clone();
    let Ok(_) = server.delete_named(namespace, name, false, |current| {
        Ok::<_, Infallible>(collected(&current.to_value(&generator)))
    });
    if kind == ObjectKind::Pod {
        let Ok(_) = server.delete_named(namespace, name, false, |current| {
            Ok::<_, Infallible>(match stopped(&current.to_value(&generator)) {
                Some(pod) => Removal::Store(pod),
                None => Removal::Keep,
            })
        });
        let kubelet = DeleteOptions {
            grace_period: Some(0),
            ..DeleteOptions::default()
        };
        let Ok(_) = server.delete_named(namespace, name, false, |current| {
            let current = current.to_value(&generator);
            if current["metadata"]["deletionTimestamp"].is_null() {
                return Ok::<_, Infallible>(Removal::Keep);
            }
            Ok(plan(kind, &current, &kubelet, now()).removal)
        });
    }
}

/// What the garbage collector, with no dependents to wait for, makes of `current` (the
/// live object as JSON) once its deletion has started: its `orphan` and
/// `foregroundDeletion` finalizers removed, and the object deleted when that leaves
/// none (as the update that empties them does).
pub(crate) fn collected(current: &Value) -> Removal {
    if current["metadata"]["deletionTimestamp"].is_null() {
        return Removal::Keep;
    }
    let object = without_gc_finalizers(current);
    if object == *current {
        Removal::Keep
    } else if emptied(&object, current) {
        Removal::Delete
    } else {
        Removal::Store(object)
    }
}

/// `current` (JSON) without the garbage collector's `orphan` and `foregroundDeletion`
/// finalizers: what the collector leaves of an object whose dependents it dealt with.
pub(crate) fn without_gc_finalizers(current: &Value) -> Value {
    let mut object = current.clone();
    let meta = metadata(&mut object);
    if let Some(Value::Array(finalizers)) = meta.get_mut("finalizers") {
        finalizers.retain(|f| f.as_str().is_none_or(|f| !GC_FINALIZERS.contains(&f)));
    }
    object
}

/// Pod `current` (JSON) once the kubelet has stopped its containers and written its
/// terminal status ([`generate::stop_pod`]), when it is being deleted and was running;
/// `None` for a pod whose containers never ran (no kubelet started them: its deletion
/// needs no status).
fn stopped(current: &Value) -> Option<Value> {
    let deleting = !current["metadata"]["deletionTimestamp"].is_null();
    if !deleting || current["status"]["phase"] != "Running" {
        return None;
    }
    let mut pod = current.clone();
    let at = Timestamp::from_second(now()).unwrap_or(Timestamp::UNIX_EPOCH);
    generate::stop_pod(&mut pod, at);
    Some(pod)
}

/// The time now, in seconds since the epoch.
pub(crate) fn now() -> i64 {
    Timestamp::now().as_second()
}

/// `second` as the API writes a time.
fn timestamp(second: i64) -> Value {
    let at = Timestamp::from_second(second).unwrap_or(Timestamp::UNIX_EPOCH);
    serde_json::to_value(Time(at)).expect("a time serializes")
}

/// A time as the API writes it, in seconds since the epoch.
fn seconds_of(value: &Value) -> Option<i64> {
    let time: Time = serde_json::from_value(value.clone()).ok()?;
    Some(time.0.as_second())
}
