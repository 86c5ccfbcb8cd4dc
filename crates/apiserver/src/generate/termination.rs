//! A pod on its way out: what each step of a graceful deletion ([`Stage`]) changes in it,
//! as kube-apiserver v1.37 and a kubelet write it.
//!
//! - [`Stage::Deleting`]: the controller's DELETE (`rest.BeforeDelete`): `deletionTimestamp`
//!   is the request's time plus the grace period, `deletionGracePeriodSeconds` the pod's
//!   `terminationGracePeriodSeconds`, and `metadata.generation` moves on.
//! - [`Stage::Stopped`]: the kubelet's status once the containers have exited on SIGTERM
//!   (`status/generate.go`, a pod whose containers all succeeded): phase `Succeeded`, each
//!   container `terminated` with exit code 0 and reason `Completed`, not ready, not
//!   started; `Ready` and `ContainersReady` false with reason `PodCompleted`,
//!   `PodReadyToStartContainers` false (the sandbox is gone). Its managedFields entry (the
//!   status subresource's) takes the write's time and owns the new reasons.
//! - [`Stage::Released`]: the kubelet's DELETE with `gracePeriodSeconds=0`: the grace
//!   period shortened to 0 moves `deletionTimestamp` to the moment the containers stopped.
//!
//! Times are the pod's own, as every generated time is: the DELETE a day after the pod was
//! created, the containers stopped two seconds later.

use serde_json::{Map, Value, json};

use super::template::{Hole, Markers, Seconds, Slot};
use super::{ObjectId, Stage, time};

/// A pod's DELETE comes this long after its creation.
const DELETED_AFTER: i64 = 86_400;
/// Its containers exit this long after the DELETE.
const STOPPED_AFTER: i64 = 2;
/// A pod's values (`V`), its grace period, and the times its deletion's stage writes, in
/// the order [`terminate`] reads them.
#[derive(Debug)]
pub(super) struct Staged<V> {
    pub(super) values: V,
    /// Seconds; the same for every pod of a class, so no hole.
    grace: i64,
    times: Vec<Seconds>,
}

impl<V: Hole> Hole for Staged<V> {
    fn marked(&self, markers: &mut Markers) -> Self {
        Staged {
            values: self.values.marked(markers),
            grace: self.grace,
            times: self.times.marked(markers),
        }
    }
    fn into_slots(self, slots: &mut Vec<Slot>) {
        self.values.into_slots(slots);
        self.times.into_slots(slots);
    }
}

impl<V> Staged<V> {
    /// Changes `pod` (JSON), built from these values, to what it is at `stage`.
    pub(super) fn terminate(&self, pod: &mut Value, stage: Stage) {
        terminate(pod, stage, self.grace, &self.times);
    }

    /// `values` of pod `id`, whose grace period is `grace` seconds, with the times of its
    /// stage: the deletion timestamp, then (once stopped) when the containers stopped.
    pub(super) fn of(values: V, id: ObjectId, grace: i64) -> Staged<V> {
        let requested = i64::from(id.index) + DELETED_AFTER;
        let stopped = requested + STOPPED_AFTER;
        let times = match id.stage {
            Stage::Live => vec![],
            Stage::Deleting => vec![Seconds(requested + grace)],
            Stage::Stopped => vec![Seconds(requested + grace), Seconds(stopped)],
            Stage::Released => vec![Seconds(stopped)],
        };
        Staged {
            values,
            grace,
            times,
        }
    }
}

/// The grace period of `pod` (JSON): its `terminationGracePeriodSeconds`, else the API's
/// default.
pub(super) fn grace_period(pod: &Value) -> i64 {
    pod.pointer("/spec/terminationGracePeriodSeconds")
        .and_then(Value::as_i64)
        .unwrap_or(super::pod::GRACE_SECONDS)
}

/// Changes `pod` (JSON), whose grace period is `grace`, to what it is at `stage`, with
/// `times` from [`Staged::of`].
fn terminate(pod: &mut Value, stage: Stage, grace: i64, times: &[Seconds]) {
    let at = |n: usize| serde_json::to_value(time(times[n].0)).expect("a time serializes");
    let (deletion, grace) = match stage {
        Stage::Live => return,
        Stage::Deleting | Stage::Stopped => (at(0), grace),
        Stage::Released => (at(0), 0),
    };
    if let Some(meta) = pod.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("deletionTimestamp".into(), deletion);
        meta.insert("deletionGracePeriodSeconds".into(), grace.into());
    }
    let stopped = match stage {
        Stage::Stopped => at(1),
        Stage::Released => at(0),
        Stage::Live | Stage::Deleting => return,
    };
    stop_containers(pod, &stopped);
}

/// `pod` (JSON) as the kubelet writes it once its containers have stopped at `at`: the
/// terminal status of [`Stage::Stopped`], for a pod of a real server.
pub fn stop(pod: &mut Value, at: k8s_openapi::jiff::Timestamp) {
    let at = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(at);
    stop_containers(pod, &serde_json::to_value(at).expect("a time serializes"));
}

/// The kubelet's terminal status, written at `stopped`, and its managedFields entry.
fn stop_containers(pod: &mut Value, stopped: &Value) {
    let Some(status) = pod.get_mut("status").and_then(Value::as_object_mut) else {
        return;
    };
    status.insert("phase".into(), "Succeeded".into());
    for condition in array_mut(status, "conditions") {
        let completed = match condition["type"].as_str() {
            Some("Ready" | "ContainersReady") => true,
            Some("PodReadyToStartContainers") => false,
            _ => continue,
        };
        let Some(condition) = condition.as_object_mut() else {
            continue;
        };
        condition.insert("status".into(), "False".into());
        condition.insert("lastTransitionTime".into(), stopped.clone());
        if completed {
            condition.insert("reason".into(), "PodCompleted".into());
        }
    }
    for container in array_mut(status, "containerStatuses") {
        let Some(container) = container.as_object_mut() else {
            continue;
        };
        let mut terminated = Map::new();
        if let Some(id) = container.get("containerID") {
            terminated.insert("containerID".into(), id.clone());
        }
        terminated.insert("exitCode".into(), 0.into());
        terminated.insert("finishedAt".into(), stopped.clone());
        terminated.insert("reason".into(), "Completed".into());
        if let Some(started) = container
            .get("state")
            .and_then(|s| s.pointer("/running/startedAt"))
        {
            terminated.insert("startedAt".into(), started.clone());
        }
        container.insert("state".into(), json!({ "terminated": terminated }));
        container.insert("ready".into(), false.into());
        container.insert("started".into(), false.into());
    }
    let entries = pod
        .pointer_mut("/metadata/managedFields")
        .and_then(Value::as_array_mut);
    let kubelet = entries.and_then(|e| {
        e.iter_mut()
            .rev()
            .find(|e| e["subresource"] == "status" && e["manager"] == "kubelet")
    });
    if let Some(entry) = kubelet {
        entry["time"] = stopped.clone();
        for condition in ["Ready", "ContainersReady"] {
            let key = format!("k:{}", json!({ "type": condition }));
            let owned = entry
                .pointer_mut("/fieldsV1/f:status/f:conditions")
                .and_then(|c| c.get_mut(&key))
                .and_then(Value::as_object_mut);
            if let Some(owned) = owned {
                owned.insert("f:reason".into(), json!({}));
            }
        }
    }
}

/// The elements of `status[field]`, when it is an array.
fn array_mut<'v>(
    status: &'v mut Map<String, Value>,
    field: &str,
) -> impl Iterator<Item = &'v mut Value> {
    status
        .get_mut(field)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}
