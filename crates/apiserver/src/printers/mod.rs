//! kube-apiserver's printers (k8s.io/kubernetes pkg/printers/internalversion): the
//! columns `kubectl get` shows for each kind this server serves, and the cells of an
//! object's row, read from its JSON. One place for every kind, whoever keeps it: the
//! scenario's objects, generated or sampled (a sample of Services or of Jobs is printed
//! as Services and Jobs are), and the records beside them ([`super::records`]). A kind
//! without a printer here gets Name and Age, as a custom resource without printer
//! columns does. Only kubectl asks for tables ([`super::table`] puts them together), so
//! no report's figure goes through here.

mod apps;
mod batch;
mod core_group;
mod pods;
mod rbac;

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

/// The column definitions of `kind` in `group` (the core group: `""`), wide ones
/// included, as a JSON array.
pub(super) fn columns(group: &str, kind: &str) -> Value {
    let (name, age) = (name_column(), age_column());
    match (group, kind) {
        ("", "Pod") => Value::Array(pods::pod_columns(name, age)),
        ("", "Node") => Value::Array(core_group::node_columns(name, age)),
        ("", "ConfigMap") => json!([
            name,
            column("Data", "", 0, "Entries of data and binaryData."),
            age,
        ]),
        ("", "Secret") => json!([
            name,
            column("Type", "", 0, "The secret's type."),
            column("Data", "", 0, "Entries of data."),
            age,
        ]),
        ("", "Namespace") => core_group::namespace_columns(),
        ("", "Service") => core_group::service_columns(),
        ("", "ServiceAccount") => json!([name, age]),
        ("", "Event") => core_group::event_columns(name),
        ("coordination.k8s.io", "Lease") => json!([
            name,
            column(
                "Holder",
                "",
                0,
                "holderIdentity contains the identity of the holder of a current lease."
            ),
            age,
        ]),
        ("apps", "Deployment") => Value::Array(apps::deployment_columns(name, age)),
        ("apps", "ReplicaSet" | "StatefulSet" | "DaemonSet") => apps::columns(kind),
        ("batch", "Job" | "CronJob") => batch::columns(kind),
        (
            "rbac.authorization.k8s.io",
            "Role" | "RoleBinding" | "ClusterRole" | "ClusterRoleBinding",
        ) => rbac::columns(kind),
        // A custom resource without printer columns: its name and age.
        _ => json!([name, age]),
    }
}

/// The cells of `object`'s row, a `kind` of `group`, as kube-apiserver's printer of it
/// fills them (every column, wide ones included).
pub(super) fn cells(group: &str, kind: &str, object: &Value, now: Timestamp) -> Vec<Value> {
    let meta = &object["metadata"];
    let name = json!(meta["name"].as_str().unwrap_or_default());
    let age = json!(age(meta["creationTimestamp"].as_str(), now));
    let entries = |field: &str| object[field].as_object().map_or(0, serde_json::Map::len);
    match (group, kind) {
        ("", "Pod") => pods::pod_cells(object, now, name, age),
        ("", "Node") => core_group::node_cells(object, name, age),
        ("", "ConfigMap") => vec![name, json!(entries("data") + entries("binaryData")), age],
        ("", "Secret") => vec![
            name,
            json!(object["type"].as_str().unwrap_or_default()),
            json!(entries("data")),
            age,
        ],
        ("", "Namespace") => core_group::namespace_cells(object, now),
        ("", "Service") => core_group::service_cells(object, now),
        ("", "Event") => core_group::event_cells(object, now),
        ("coordination.k8s.io", "Lease") => {
            vec![name, json!(text(&object["spec"], "holderIdentity")), age]
        }
        ("apps", "Deployment") => apps::deployment_cells(object, name, age),
        ("apps", "ReplicaSet" | "StatefulSet" | "DaemonSet") => apps::cells(kind, object, now),
        ("batch", "Job" | "CronJob") => batch::cells(kind, object, now),
        (
            "rbac.authorization.k8s.io",
            "Role" | "RoleBinding" | "ClusterRole" | "ClusterRoleBinding",
        ) => rbac::cells(kind, object, now),
        _ => vec![name, age],
    }
}

fn name_column() -> Value {
    column(
        "Name",
        "name",
        0,
        "The object's name, unique within its namespace.",
    )
}

fn age_column() -> Value {
    column("Age", "", 0, "Time since the object's creationTimestamp.")
}

fn text<'a>(value: &'a Value, field: &str) -> &'a str {
    value[field].as_str().unwrap_or_default()
}

/// One column definition (a string, as kube-apiserver's printers declare most).
pub(super) fn column(name: &str, format: &str, priority: u8, description: &str) -> Value {
    json!({"name": name, "type": "string", "format": format,
           "description": description, "priority": priority})
}

/// A label selector as `metav1.LabelSelectorAsSelector(...).String()` writes it:
/// requirements sorted by key, `k=v` for a matched label, set-based ones in kubectl's
/// syntax; `""` for none.
pub(super) fn selector_text(selector: &Value) -> String {
    let mut terms: Vec<(String, String)> = selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), format!("{k}={}", v.as_str().unwrap_or_default())))
        .collect();
    for expression in list(&selector["matchExpressions"]) {
        let key = expression["key"].as_str().unwrap_or_default();
        let mut values: Vec<&str> = list(&expression["values"])
            .iter()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        let term = match expression["operator"].as_str().unwrap_or_default() {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_owned(),
            "DoesNotExist" => format!("!{key}"),
            _ => return "<invalid>".to_owned(),
        };
        terms.push((key.to_owned(), term));
    }
    // No requirement selects everything, written as nothing.
    terms.sort();
    terms
        .into_iter()
        .map(|(_, term)| term)
        .collect::<Vec<_>>()
        .join(",")
}

fn list(value: &Value) -> &[Value] {
    value.as_array().map_or(&[], Vec::as_slice)
}

/// The Age cell, or any time's as kube-apiserver's printers write it
/// (`translateTimestampSince`): `<unknown>` without one.
pub(super) fn age(created: Option<&str>, now: Timestamp) -> String {
    match created.and_then(|t| t.parse::<Timestamp>().ok()) {
        Some(at) => human_duration(now, at),
        None => "<unknown>".to_owned(),
    }
}

/// How long ago `at` was, as kubectl shows it (apimachinery's `HumanDuration`): seconds up
/// to two minutes, then minutes, hours, days and years, coarser as they grow.
pub(super) fn human_duration(now: Timestamp, at: Timestamp) -> String {
    let seconds = now.as_second() - at.as_second();
    if seconds < -1 {
        return "<invalid>".to_owned();
    }
    if seconds < 0 {
        return "0s".to_owned();
    }
    let (minutes, hours) = (seconds / 60, seconds / 3600);
    let days = hours / 24;
    let with = |big: i64, unit: &str, small: i64, small_unit: &str| {
        if small == 0 {
            format!("{big}{unit}")
        } else {
            format!("{big}{unit}{small}{small_unit}")
        }
    };
    match () {
        () if seconds < 120 => format!("{seconds}s"),
        () if minutes < 10 => with(minutes, "m", seconds % 60, "s"),
        () if minutes < 180 => format!("{minutes}m"),
        () if hours < 8 => with(hours, "h", minutes % 60, "m"),
        () if hours < 48 => format!("{hours}h"),
        () if hours < 24 * 8 => with(days, "d", hours % 24, "h"),
        () if hours < 24 * 365 * 2 => format!("{days}d"),
        () if hours < 24 * 365 * 8 => with(days / 365, "y", days % 365, "d"),
        () => format!("{}y", days / 365),
    }
}

#[cfg(test)]
mod tests;
