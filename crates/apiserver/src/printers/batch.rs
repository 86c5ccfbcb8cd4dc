//! The printers of `batch/v1`: `printJob`, `printCronJob`.

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::apps::{CONTAINERS, IMAGES};
use super::{age, age_column, column, human_duration, name_column, selector_text, text};

/// kube-apiserver's table columns for `kind` (`printJob`, `printCronJob`), the wide ones
/// included.
pub(super) fn columns(kind: &str) -> Value {
    let selector = column(
        "Selector",
        "",
        1,
        "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
    );
    let containers = column("Containers", "", 1, CONTAINERS);
    let images = column("Images", "", 1, IMAGES);
    let columns = match kind {
        "Job" => vec![
            name_column(),
            column("Status", "", 0, "Status of the job."),
            column(
                "Completions",
                "",
                0,
                "The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.",
            ),
            column("Duration", "", 0, "Time required to complete the job."),
            age_column(),
            containers,
            images,
            selector,
        ],
        _ => vec![
            name_column(),
            column(
                "Schedule",
                "",
                0,
                "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.",
            ),
            column("Timezone", "", 0, TIME_ZONE),
            typed(
                column(
                    "Suspend",
                    "",
                    0,
                    "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.",
                ),
                "boolean",
            ),
            typed(
                column(
                    "Active",
                    "",
                    0,
                    "A list of pointers to currently running jobs.",
                ),
                "integer",
            ),
            column(
                "Last Schedule",
                "",
                0,
                "Information when was the last time the job was successfully scheduled.",
            ),
            age_column(),
            containers,
            images,
            selector,
        ],
    };
    Value::Array(columns)
}

const TIME_ZONE: &str = "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process. The set of valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API server during CronJob validation and the controller manager during execution. If no system-wide time zone database can be found a bundled version of the database is used instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones";

/// `column` of another type than a string.
fn typed(mut column: Value, kind: &str) -> Value {
    column["type"] = json!(kind);
    column
}

/// A Job's or a CronJob's cells, as `printJob` and `printCronJob` fill them.
pub(super) fn cells(kind: &str, object: &Value, now: Timestamp) -> Vec<Value> {
    let (meta, spec, status) = (&object["metadata"], &object["spec"], &object["status"]);
    let name = meta["name"].clone();
    let created = json!(age(meta["creationTimestamp"].as_str(), now));
    let job = match kind {
        "Job" => spec,
        _ => &spec["jobTemplate"]["spec"],
    };
    let containers = job["template"]["spec"]["containers"].as_array();
    let joined = |field: &str| {
        let each = containers.into_iter().flatten().map(|c| text(c, field));
        json!(each.collect::<Vec<_>>().join(","))
    };
    let selector = match selector_text(&job["selector"]) {
        text if text.is_empty() => "<none>".to_owned(),
        text => text,
    };
    let wide = [joined("name"), joined("image"), json!(selector)];
    let cells = match kind {
        "Job" => {
            let succeeded = status["succeeded"].as_i64().unwrap_or_default();
            let parallelism = spec["parallelism"].as_i64().unwrap_or_default();
            let completions = match spec["completions"].as_i64() {
                Some(completions) => format!("{succeeded}/{completions}"),
                None if parallelism > 1 => format!("{succeeded}/1 of {parallelism}"),
                None => format!("{succeeded}/1"),
            };
            let time = |field: &str| status[field].as_str().and_then(|t| t.parse().ok());
            let duration = match (time("startTime"), time("completionTime")) {
                (None, _) => String::new(),
                (Some(start), None) => human_duration(now, start),
                (Some(start), Some(end)) => human_duration(end, start),
            };
            vec![
                name,
                json!(job_status(object)),
                json!(completions),
                json!(duration),
                created,
            ]
        }
        _ => {
            let last = match status["lastScheduleTime"].as_str() {
                Some(at) => age(Some(at), now),
                None => "<none>".to_owned(),
            };
            let suspend = match spec["suspend"].as_bool() {
                Some(true) => "True",
                Some(false) => "False",
                None => "<unset>",
            };
            let active = status["active"].as_array().map_or(0, Vec::len);
            vec![
                name,
                json!(text(spec, "schedule")),
                json!(spec["timeZone"].as_str().unwrap_or("<none>")),
                json!(suspend),
                json!(active),
                json!(last),
                created,
            ]
        }
    };
    cells.into_iter().chain(wide).collect()
}

/// `printJob`'s Status: the first condition of those it looks for that holds, in its
/// order, `Terminating` while it is deleted, else `Running`.
fn job_status(job: &Value) -> &'static str {
    let conditions = job["status"]["conditions"].as_array();
    let holds = |kind: &str| {
        (conditions.into_iter().flatten()).any(|c| c["type"] == kind && c["status"] == "True")
    };
    match () {
        () if holds("Complete") => "Complete",
        () if holds("Failed") => "Failed",
        () if !job["metadata"]["deletionTimestamp"].is_null() => "Terminating",
        () if holds("Suspended") => "Suspended",
        () if holds("FailureTarget") => "FailureTarget",
        () if holds("SuccessCriteriaMet") => "SuccessCriteriaMet",
        () => "Running",
    }
}
