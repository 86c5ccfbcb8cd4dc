//! `printPod`: a pod's readiness, status, restarts, addresses and nodes.

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::{column, human_duration, list};

/// kube-apiserver's pod columns, wide ones (priority 1) included.
pub(super) fn pod_columns(name: Value, age: Value) -> Vec<Value> {
    vec![
        name,
        column("Ready", "", 0, "Ready containers of all containers."),
        column(
            "Status",
            "",
            0,
            "The aggregate status of the pod's containers.",
        ),
        column(
            "Restarts",
            "",
            0,
            "Container restarts, and how long ago the last one.",
        ),
        age,
        column("IP", "", 1, "The pod's first IP address."),
        column("Node", "", 1, "The node the pod is scheduled to."),
        column(
            "Nominated Node",
            "",
            1,
            "The node the pod may preempt others on.",
        ),
        column(
            "Readiness Gates",
            "",
            1,
            "Readiness gates whose condition is True.",
        ),
    ]
}

/// A pod's cells: kube-apiserver's `printPod`, from the pod's JSON.
pub(super) fn pod_cells(pod: &Value, now: Timestamp, name: Value, age: Value) -> Vec<Value> {
    let spec = &pod["spec"];
    let status = &pod["status"];
    let summary = PodSummary::of(pod);
    let restarts = match summary.last_restart {
        Some(at) if summary.restarts != 0 => {
            format!("{} ({} ago)", summary.restarts, human_duration(now, at))
        }
        _ => summary.restarts.to_string(),
    };
    let text = |v: &Value| match v.as_str() {
        Some(s) if !s.is_empty() => s.to_owned(),
        _ => "<none>".to_owned(),
    };
    let gates = list(&spec["readinessGates"]);
    let readiness_gates = if gates.is_empty() {
        "<none>".to_owned()
    } else {
        let conditions = list(&status["conditions"]);
        let passed = gates
            .iter()
            .filter(|gate| {
                conditions
                    .iter()
                    .find(|c| c["type"] == gate["conditionType"])
                    .is_some_and(|c| c["status"] == "True")
            })
            .count();
        format!("{passed}/{}", gates.len())
    };
    vec![
        name,
        json!(format!("{}/{}", summary.ready, summary.total)),
        json!(summary.reason),
        json!(restarts),
        age,
        json!(text(&status["podIPs"][0]["ip"])),
        json!(text(&spec["nodeName"])),
        json!(text(&status["nominatedNodeName"])),
        json!(readiness_gates),
    ]
}

/// What `printPod` reads of a pod's containers: ready and total, restarts, the last
/// restart, and the reason the Status column shows.
struct PodSummary {
    ready: usize,
    total: usize,
    restarts: u64,
    last_restart: Option<Timestamp>,
    reason: String,
}

impl PodSummary {
    fn of(pod: &Value) -> PodSummary {
        let (spec, status) = (&pod["spec"], &pod["status"]);
        let phase = status["phase"].as_str().unwrap_or_default();
        let mut reason = match status["reason"].as_str() {
            Some(r) if !r.is_empty() => r.to_owned(),
            _ => phase.to_owned(),
        };
        if list(&status["conditions"])
            .iter()
            .any(|c| c["type"] == "PodScheduled" && c["reason"] == "SchedulingGated")
        {
            reason = "SchedulingGated".to_owned();
        }
        let init_specs = list(&spec["initContainers"]);
        let sidecar = |name: &Value| {
            init_specs
                .iter()
                .any(|c| &c["name"] == name && c["restartPolicy"] == "Always")
        };
        let mut summary = PodSummary {
            ready: 0,
            total: list(&spec["containers"]).len()
                + init_specs
                    .iter()
                    .filter(|c| c["restartPolicy"] == "Always")
                    .count(),
            restarts: 0,
            last_restart: None,
            reason,
        };
        let (initializing, sidecars) = summary.init_containers(status, init_specs, sidecar);
        let initialized = list(&status["conditions"])
            .iter()
            .find(|c| c["type"] == "Initialized")
            .is_some_and(|c| c["status"] == "True");
        if !initializing || initialized {
            // The restarts shown are then the sidecars' and the containers'.
            (summary.restarts, summary.last_restart) = sidecars;
            summary.containers(status);
        }
        if !pod["metadata"]["deletionTimestamp"].is_null() {
            if status["reason"] == "NodeLost" {
                summary.reason = "Unknown".to_owned();
            } else if !matches!(phase, "Succeeded" | "Failed") {
                summary.reason = "Terminating".to_owned();
            }
        }
        summary
    }

    /// Init containers, in order, until the first one not done: whether the pod is still
    /// initializing (the reason then set), and the sidecars' (restartable init
    /// containers') restarts and last restart. Every init container's restarts are
    /// counted meanwhile, which a pod still initializing shows.
    fn init_containers(
        &mut self,
        status: &Value,
        specs: &[Value],
        sidecar: impl Fn(&Value) -> bool,
    ) -> (bool, (u64, Option<Timestamp>)) {
        let (mut restarts, mut last) = (0, None);
        let mut initializing = false;
        for (i, c) in list(&status["initContainerStatuses"]).iter().enumerate() {
            let (count, finished) = restart_of(c);
            self.restarts += count;
            self.last_restart = self.last_restart.max(finished);
            if sidecar(&c["name"]) {
                restarts += count;
                last = last.max(finished);
            }
            let (state, waiting) = (&c["state"]["terminated"], &c["state"]["waiting"]);
            if state.is_object() && state["exitCode"].as_i64() == Some(0) {
                continue;
            }
            if sidecar(&c["name"]) && c["started"] == true {
                self.ready += usize::from(c["ready"] == true);
                continue;
            }
            self.reason = if state.is_object() {
                format!("Init:{}", terminated_reason(state))
            } else if waiting["reason"]
                .as_str()
                .is_some_and(|r| !r.is_empty() && r != "PodInitializing")
            {
                format!("Init:{}", waiting["reason"].as_str().unwrap_or_default())
            } else {
                format!("Init:{i}/{}", specs.len())
            };
            initializing = true;
            break;
        }
        (initializing, (restarts, last))
    }

    /// The containers, last first as `printPod` walks them: ready ones, restarts, and the
    /// reason a waiting or terminated one gives.
    fn containers(&mut self, status: &Value) {
        let (mut running, mut error) = (false, None);
        for c in list(&status["containerStatuses"]).iter().rev() {
            let (count, finished) = restart_of(c);
            self.restarts += count;
            self.last_restart = self.last_restart.max(finished);
            let (waiting, terminated) = (&c["state"]["waiting"], &c["state"]["terminated"]);
            if let Some(reason) = waiting["reason"].as_str().filter(|r| !r.is_empty()) {
                self.reason = reason.to_owned();
            } else if terminated.is_object() {
                self.reason = terminated_reason(terminated);
                if terminated["exitCode"].as_i64() != Some(0) {
                    error = Some(self.reason.clone());
                }
            } else if c["ready"] == true && c["state"]["running"].is_object() {
                running = true;
                self.ready += 1;
            }
        }
        if self.reason == "Completed" {
            let ready = list(&status["conditions"])
                .iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True");
            match (running, error) {
                (true, _) if ready => self.reason = "Running".to_owned(),
                (_, Some(error)) => self.reason = error,
                (true, None) => self.reason = "NotReady".to_owned(),
                (false, None) => {}
            }
        }
    }
}

/// A container status's restart count, and when its last run ended.
fn restart_of(status: &Value) -> (u64, Option<Timestamp>) {
    let finished = status["lastState"]["terminated"]["finishedAt"]
        .as_str()
        .and_then(|t| t.parse().ok());
    (status["restartCount"].as_u64().unwrap_or(0), finished)
}

/// A terminated state's reason, or its signal or exit code.
fn terminated_reason(terminated: &Value) -> String {
    match terminated["reason"].as_str() {
        Some(reason) if !reason.is_empty() => reason.to_owned(),
        _ => match terminated["signal"].as_i64() {
            Some(signal) if signal != 0 => format!("Signal:{signal}"),
            _ => format!("ExitCode:{}", terminated["exitCode"].as_i64().unwrap_or(0)),
        },
    }
}
