//! Jobs and CronJobs (`batch/v1`), kept as records beside a scenario of another kind:
//! what an operator runs for its objects (a backup Job, a migration, a CronJob per
//! custom resource) and what `kubectl create job` and `kubectl create cronjob` make.
//! Before, `batch/v1` was not served, and each of those writes was a 404. As
//! kube-apiserver v1.37's batch registries keep them (k8s.io/kubernetes
//! pkg/registry/batch, pkg/apis/batch/v1/defaults.go, pkg/apis/batch/validation):
//! - defaulted ([`defaulted`]): a Job's one completion and one pod at a time, six
//!   retries, non-indexed completions, not suspended, pods replaced once terminated or
//!   failed, no manual selector; a CronJob's concurrent runs allowed, not suspended, three
//!   successful and one failed Job kept; every pod template as a pod;
//! - a Job's selector and its template's labels generated from its name and UID where it
//!   chose no manual selector ([`selected`]), which its managedFields do not own; its
//!   labels those of its template where it has none, as the storage's decoding defaults
//!   them ([`finished`]);
//! - the status its controller writes, through the status subresource alone, empty on
//!   create; the generation moved by a change of the spec (as the workloads':
//!   [`super::workloads::prepared`], [`super::workloads::finished`]);
//! - validated ([`validate`]): the names (a CronJob's at most 52 characters, for the
//!   suffix its Jobs get), counts, completion mode, pod replacement policy, the
//!   generated selector and its match of the template's labels, the pod template as a
//!   pod's with a restart policy of `OnFailure` or `Never`, what an update may not change
//!   (a Job's selector, completions and template unless suspended...); a CronJob's
//!   schedule as robfig/cron parses it ([`k8s::cron`]), time zone, concurrency
//!   policy and Job template;
//! - shown by kubectl with kube-apiserver's columns ([`crate::printers`]), and Jobs
//!   selected by `status.successful`.
//!
//! No controller runs: a Job makes no pods and a CronJob no Jobs, so their status stays
//! as written. A status written through the status subresource is kept as written:
//! `ValidateJobUpdateStatus`'s rules (of counts, conditions and indexes) are not
//! modelled.

use serde_json::{Map, Value, json};

use super::Api;
use super::workloads::{entry, text, unset_to};
use crate::version::NamespacedName;
use crate::write::{self, Causes, Endpoint};

/// The labels a Job's pods carry, by which its generated selector selects them: its
/// name's and its UID's, each under a legacy key and a prefixed one.
const JOB_NAME: [&str; 2] = ["job-name", "batch.kubernetes.io/job-name"];
const CONTROLLER_UID: [&str; 2] = ["controller-uid", "batch.kubernetes.io/controller-uid"];

/// `SetDefaults_Job` and `SetDefaults_CronJob` of an object `api` decodes, its pod
/// template's included.
pub(super) fn defaulted(api: Api, mut object: Value) -> Value {
    let spec = entry(&mut object, "spec");
    match api {
        Api::Job => {
            job_spec_defaulted(spec);
            write::template_defaulted(spec);
            let template_labels = spec["template"]["metadata"]["labels"].clone();
            let labels = &object["metadata"]["labels"];
            if template_labels.is_object() && labels.as_object().is_none_or(Map::is_empty) {
                object["metadata"]["labels"] = template_labels;
            }
        }
        _ => {
            if text(spec, "concurrencyPolicy").is_empty() {
                spec["concurrencyPolicy"] = json!("Allow");
            }
            unset_to(spec, "suspend", json!(false));
            unset_to(spec, "successfulJobsHistoryLimit", json!(3));
            unset_to(spec, "failedJobsHistoryLimit", json!(1));
            let job = (spec.get_mut("jobTemplate")).and_then(|template| template.get_mut("spec"));
            if let Some(job) = job.filter(|job| job.is_object()) {
                pod_failure_policy_defaulted(job);
                write::template_defaulted(job);
            }
        }
    }
    object
}

/// `SetDefaults_Job`'s spec.
fn job_spec_defaulted(spec: &mut Value) {
    if spec["completions"].is_null() && spec["parallelism"].is_null() {
        spec["completions"] = json!(1);
    }
    unset_to(spec, "parallelism", json!(1));
    if spec["backoffLimit"].is_null() {
        spec["backoffLimit"] = match spec["backoffLimitPerIndex"].is_null() {
            true => json!(6),
            false => json!(i32::MAX),
        };
    }
    if spec["completionMode"].is_null() {
        spec["completionMode"] = json!("NonIndexed");
    }
    unset_to(spec, "suspend", json!(false));
    if spec["podReplacementPolicy"].is_null() {
        spec["podReplacementPolicy"] = match spec["podFailurePolicy"].is_null() {
            true => json!("TerminatingOrFailed"),
            false => json!("Failed"),
        };
    }
    unset_to(spec, "manualSelector", json!(false));
    pod_failure_policy_defaulted(spec);
}

/// `SetDefaults_PodFailurePolicyOnPodConditionsPattern`: a pattern's status `True`.
fn pod_failure_policy_defaulted(spec: &mut Value) {
    // Read through `get_mut`: indexing a missing field mutably would make it.
    let rules = (spec.get_mut("podFailurePolicy"))
        .and_then(|policy| policy.get_mut("rules"))
        .and_then(Value::as_array_mut);
    for rule in rules.into_iter().flatten() {
        let patterns = rule
            .get_mut("onPodConditions")
            .and_then(Value::as_array_mut);
        for pattern in patterns.into_iter().flatten() {
            if text(pattern, "status").is_empty() {
                pattern["status"] = json!("True");
            }
        }
    }
}

/// What a Job's strategy makes of a create through the object (`PrepareForCreate`'s
/// `generateSelectorIfNeeded`), after its field manager: where it chose no manual
/// selector, its template labelled with its name and `uid` (the labels it has kept), and
/// its selector made to select its UID's label.
pub(super) fn selected(mut job: Value, uid: &str, name: &str) -> Value {
    if job["spec"]["manualSelector"] == json!(true) {
        return job;
    }
    let spec = entry(&mut job, "spec");
    let template = entry(spec, "template");
    let metadata = entry(template, "metadata");
    let labels = entry(metadata, "labels");
    for (keys, value) in [(JOB_NAME, name), (CONTROLLER_UID, uid)] {
        for key in keys {
            if labels.get(key).is_none() {
                labels[key] = json!(value);
            }
        }
    }
    let selector = entry(spec, "selector");
    let matched = entry(selector, "matchLabels");
    if matched.get(CONTROLLER_UID[1]).is_none() {
        matched[CONTROLLER_UID[1]] = json!(uid);
    }
    job
}

/// A Job as it is kept, Go's zero fields in it: its labels its template's where it has
/// none (`SetDefaults_Job`, which the storage runs again as it decodes what it wrote, by
/// then with the generated labels).
pub(super) fn finished(api: Api, stored: &mut Value) {
    if api != Api::Job {
        return;
    }
    let template_labels = stored["spec"]["template"]["metadata"]["labels"].clone();
    let labels = &stored["metadata"]["labels"];
    if template_labels.is_object() && labels.as_object().is_none_or(Map::is_empty) {
        stored["metadata"]["labels"] = template_labels;
    }
}

/// kube-apiserver's validation of a Job or a CronJob `object` written through `endpoint`
/// (`current`: the live one of an update): `ValidateJobCreate`, `ValidateJobUpdate`,
/// `ValidateCronJobCreate`, `ValidateCronJobUpdate`; through the status, its metadata
/// alone (see the module's notes).
pub(super) fn validate(
    api: Api,
    key: &NamespacedName,
    (object, current, endpoint): (&Value, Option<&Value>, Endpoint),
    causes: &mut Causes,
) {
    write::metadata(key, &object["metadata"], causes);
    if endpoint == Endpoint::Status {
        return;
    }
    let (spec, old) = (&object["spec"], current.map(|c| &c["spec"]));
    if api == Api::CronJob {
        cron_job_spec(spec, old, causes);
        if current.is_none() && key.name.len() > 52 {
            let why = "must be no more than 52 characters";
            causes.invalid("metadata.name", &json!(key.name), why);
        }
        return;
    }
    if current.is_none() {
        generated_selector(key, object, causes);
    }
    job_spec(spec, "spec", causes);
    match &spec["selector"] {
        Value::Null => causes.required("spec.selector"),
        selector => {
            let labels = &spec["template"]["metadata"]["labels"];
            if !write::selects(selector, labels) {
                let why = "`selector` does not match template `labels`";
                causes.invalid("spec.template.metadata.labels", labels, why);
            }
        }
    }
    match old {
        None => name_allows_completions(key, spec, causes),
        Some(old) => job_spec_update(spec, old, causes),
    }
}

/// `validateGeneratedSelector` of a create: where the selector was generated, the
/// template's labels and the selector are the Job's name's and UID's.
fn generated_selector(key: &NamespacedName, job: &Value, causes: &mut Causes) {
    let spec = &job["spec"];
    if spec["manualSelector"] == json!(true) || spec["selector"].is_null() {
        return;
    }
    let uid = text(&job["metadata"], "uid");
    let labels = &spec["template"]["metadata"]["labels"];
    let expected = [
        (CONTROLLER_UID[0], uid),
        (JOB_NAME[0], key.name.as_str()),
        (CONTROLLER_UID[1], uid),
        (JOB_NAME[1], key.name.as_str()),
    ];
    for (label, value) in expected {
        let at = format!("spec.template.metadata.labels[{label}]");
        match labels[label].as_str() {
            None => causes.push(
                "FieldValueRequired",
                &at,
                format!("Required value: {value}"),
            ),
            Some(given) if given != value => {
                causes.invalid(&at, labels, &format!("must be '{value}'"));
            }
            Some(_) => {}
        }
    }
    let expected: Map<String, Value> = (expected.iter())
        .map(|(label, value)| ((*label).to_owned(), json!(value)))
        .collect();
    if !write::selects(&spec["selector"], &Value::Object(expected)) {
        let why = "`selector` not auto-generated";
        causes.invalid("spec.selector", &spec["selector"], why);
    }
}

/// `validateJobSpec` of the Job spec at `at` (a CronJob's template's too): its counts,
/// completion mode, pod replacement policy, pod template and restart policy.
fn job_spec(spec: &Value, at: &str, causes: &mut Causes) {
    for field in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
        "maxFailedIndexes",
    ] {
        if let Some(n) = spec[field].as_i64().filter(|n| *n < 0) {
            let why = "must be greater than or equal to 0";
            causes.invalid(&format!("{at}.{field}"), &json!(n), why);
        }
        if field == "maxFailedIndexes"
            && !spec[field].is_null()
            && spec["backoffLimitPerIndex"].is_null()
        {
            let why = "Required value: when maxFailedIndexes is specified".to_owned();
            causes.push(
                "FieldValueRequired",
                &format!("{at}.backoffLimitPerIndex"),
                why,
            );
        }
    }
    let indexed = text(spec, "completionMode") == "Indexed";
    match text(spec, "completionMode") {
        "" | "NonIndexed" | "Indexed" => {}
        other => causes.not_supported(
            &format!("{at}.completionMode"),
            other,
            &["NonIndexed", "Indexed"],
        ),
    }
    if indexed && spec["completions"].is_null() {
        let why = "Required value: when completion mode is Indexed".to_owned();
        causes.push("FieldValueRequired", &format!("{at}.completions"), why);
    }
    if !indexed {
        for field in ["backoffLimitPerIndex", "maxFailedIndexes"] {
            if !spec[field].is_null() {
                let why = "requires indexed completion mode";
                causes.invalid(&format!("{at}.{field}"), &spec[field], why);
            }
        }
        if !spec["successPolicy"].is_null() {
            let why = "requires indexed completion mode";
            causes.invalid(&format!("{at}.successPolicy"), &spec["successPolicy"], why);
        }
    }
    let failure_policy = !spec["podFailurePolicy"].is_null();
    match (text(spec, "podReplacementPolicy"), failure_policy) {
        ("" | "Failed", true) | ("" | "Failed" | "TerminatingOrFailed", false) => {}
        (other, true) => {
            causes.not_supported(&format!("{at}.podReplacementPolicy"), other, &["Failed"])
        }
        (other, false) => causes.not_supported(
            &format!("{at}.podReplacementPolicy"),
            other,
            &["Failed", "TerminatingOrFailed"],
        ),
    }
    let pod = &spec["template"]["spec"];
    write::pod_spec(pod, &format!("{at}.template.spec"), causes);
    restart_policy(pod, at, failure_policy, causes);
}

/// A Job's pods restart `OnFailure` or `Never` (`Never` alone with a pod failure policy).
fn restart_policy(pod: &Value, at: &str, failure_policy: bool, causes: &mut Causes) {
    let restart = format!("{at}.template.spec.restartPolicy");
    match text(pod, "restartPolicy") {
        "" | "Always" => causes.push(
            "FieldValueRequired",
            &restart,
            r#"Required value: valid values: "OnFailure", "Never""#.to_owned(),
        ),
        "OnFailure" if failure_policy => {
            let why = r#"only "Never" is supported when podFailurePolicy is specified"#;
            causes.invalid(&restart, &json!("OnFailure"), why);
        }
        "OnFailure" | "Never" => {}
        other => causes.not_supported(&restart, other, &["OnFailure", "Never"]),
    }
}

/// `validateNameAllowsCompletions`: an indexed Job's pods are named `{name}-{index}`,
/// which must be a DNS label.
fn name_allows_completions(key: &NamespacedName, spec: &Value, causes: &mut Causes) {
    let completions = spec["completions"].as_i64().unwrap_or_default();
    if text(spec, "completionMode") != "Indexed" || completions <= 0 {
        return;
    }
    let hostname = format!("{}-{}", key.name, completions - 1);
    if !k8s::names::is_dns_label(&hostname) {
        let why = format!("will not able to create pod with invalid DNS label: {hostname}");
        causes.invalid("metadata.name", &json!(key.name), &why);
    }
}

/// `ValidateJobSpecUpdate`'s fields an update may not change: the completions (an
/// indexed Job's only with its parallelism), the selector, the pod template (but of a
/// suspended Job), the completion mode, the pod failure policy, the backoff limit per
/// index, who manages it and the success policy.
fn job_spec_update(spec: &Value, old: &Value, causes: &mut Causes) {
    let immutable = |field: &str, causes: &mut Causes| {
        if spec[field] != old[field] {
            causes.invalid(&format!("spec.{field}"), &spec[field], "field is immutable");
        }
    };
    if text(spec, "completionMode") != "Indexed" {
        immutable("completions", causes);
    } else if spec["completions"] != old["completions"]
        && spec["completions"] != spec["parallelism"]
    {
        let why = "can only be modified in tandem with spec.parallelism";
        causes.invalid("spec.completions", &spec["completions"], why);
    }
    immutable("selector", causes);
    if old["suspend"] != json!(true) {
        immutable("template", causes);
    }
    for field in [
        "completionMode",
        "podFailurePolicy",
        "backoffLimitPerIndex",
        "managedBy",
        "successPolicy",
    ] {
        immutable(field, causes);
    }
}

/// `validateCronJobSpec`: its schedule, starting deadline, time zone, concurrency policy,
/// Job template and history limits.
fn cron_job_spec(spec: &Value, old: Option<&Value>, causes: &mut Causes) {
    let schedule = text(spec, "schedule");
    if schedule.is_empty() {
        causes.required("spec.schedule");
    } else {
        if let Some(why) = k8s::cron::schedule_error(schedule) {
            causes.invalid("spec.schedule", &json!(schedule), &why);
        }
        let allowed = old.is_some_and(|old| text(old, "schedule").contains("TZ"));
        let why = match (allowed, schedule.contains("TZ")) {
            (true, true) if !spec["timeZone"].is_null() => {
                Some("cannot use both timeZone field and TZ or CRON_TZ in schedule")
            }
            (false, true) => {
                Some("cannot use TZ or CRON_TZ in schedule, use timeZone field instead")
            }
            _ => None,
        };
        if let Some(why) = why {
            causes.invalid("spec.schedule", &json!(schedule), why);
        }
    }
    if let Some(n) = spec["startingDeadlineSeconds"].as_i64().filter(|n| *n < 0) {
        let why = "must be greater than or equal to 0";
        causes.invalid("spec.startingDeadlineSeconds", &json!(n), why);
    }
    if old.is_none_or(|old| old["timeZone"] != spec["timeZone"]) {
        time_zone(&spec["timeZone"], causes);
    }
    match text(spec, "concurrencyPolicy") {
        "Allow" | "Forbid" | "Replace" => {}
        "" => causes.required("spec.concurrencyPolicy"),
        other => causes.not_supported(
            "spec.concurrencyPolicy",
            other,
            &["Allow", "Forbid", "Replace"],
        ),
    }
    let job = &spec["jobTemplate"]["spec"];
    job_spec(job, "spec.jobTemplate.spec", causes);
    if !job["selector"].is_null() {
        let why = "`selector` will be auto-generated";
        causes.invalid("spec.jobTemplate.spec.selector", &job["selector"], why);
    }
    if job["manualSelector"] == json!(true) {
        causes.push(
            "FieldValueNotSupported",
            "spec.jobTemplate.spec.manualSelector",
            r#"Unsupported value: true: supported values: "nil", "false""#.to_owned(),
        );
    }
    for field in ["successfulJobsHistoryLimit", "failedJobsHistoryLimit"] {
        if let Some(n) = spec[field].as_i64().filter(|n| *n < 0) {
            let why = "must be greater than or equal to 0";
            causes.invalid(&format!("spec.{field}"), &json!(n), why);
        }
    }
}

/// `validateTimeZone`: none, or a name of the IANA database (not `Local`).
fn time_zone(zone: &Value, causes: &mut Causes) {
    let Some(name) = zone.as_str() else { return };
    let at = "spec.timeZone";
    if name.is_empty() {
        causes.invalid(at, zone, "timeZone must be nil or non-empty string");
        return;
    }
    let well_formed = name.split('/').all(|part| {
        let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '+');
        part != "."
            && part != ".."
            && !part.starts_with('-')
            && (1..=14).contains(&part.len())
            && part.chars().all(allowed)
    });
    if !well_formed {
        causes.invalid(at, zone, &format!("unknown time zone {name}"));
        return;
    }
    if name.eq_ignore_ascii_case("Local") {
        let why =
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones";
        causes.invalid(at, zone, why);
    }
    if let Some(why) = k8s::cron::time_zone_error(name) {
        causes.invalid(at, zone, &why);
    }
}

#[cfg(test)]
mod tests;
