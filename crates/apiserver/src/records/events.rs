//! Events, one resource served in two versions: `v1` (client-go's `record`, kubectl) and
//! `events.k8s.io/v1` (client-go's `tools/events`), kept once as `v1` and converted as
//! kube-apiserver converts them (k8s.io/kubernetes pkg/apis/events/v1/conversion.go):
//! the fields each version names otherwise, which fields select them, how
//! kube-apiserver validates and prints them.

use serde_json::{Map, Value, json};

use super::Api;
use crate::write::Causes;

/// Each Event field a version names otherwise: (`v1`, `events.k8s.io/v1`).
pub(super) const EVENT_FIELDS: [(&str, &str); 7] = [
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("reportingComponent", "reportingController"),
];

/// The fields a `v1` Event is selected by (kube-apiserver's `event.ToSelectableFields`).
pub(super) const CORE_EVENT_FIELDS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
];

/// The fields an `events.k8s.io/v1` Event is selected by, as the `v1` field each reads
/// (`AddFieldLabelConversionsForEvent`).
pub(super) const EVENT_SELECTORS: &[(&str, &str)] = &[
    ("metadata.name", "metadata.name"),
    ("metadata.namespace", "metadata.namespace"),
    ("regarding.kind", "involvedObject.kind"),
    ("regarding.namespace", "involvedObject.namespace"),
    ("regarding.name", "involvedObject.name"),
    ("regarding.uid", "involvedObject.uid"),
    ("regarding.apiVersion", "involvedObject.apiVersion"),
    (
        "regarding.resourceVersion",
        "involvedObject.resourceVersion",
    ),
    ("regarding.fieldPath", "involvedObject.fieldPath"),
    ("reason", "reason"),
    ("reportingController", "reportingComponent"),
    ("type", "type"),
];

/// `object` with each Event field renamed from the first name `pair` gives to the
/// second, as `api_version`.
pub(super) fn renamed(
    mut object: Value,
    pair: impl Fn((&'static str, &'static str)) -> (&'static str, &'static str),
    api_version: &str,
) -> Value {
    if let Some(fields) = object.as_object_mut() {
        let mut moved = Map::new();
        for (from, to) in EVENT_FIELDS.map(&pair) {
            if let Some(value) = fields.remove(from) {
                moved.insert(to.to_owned(), value);
            }
        }
        fields.extend(moved);
        fields.insert("apiVersion".to_owned(), json!(api_version));
    }
    object
}

fn text<'a>(object: &'a Value, field: &str) -> &'a str {
    object[field].as_str().unwrap_or_default()
}

/// `legacyValidateEvent`, which every Event write passes (`object` kept as `v1`; the
/// field at fault named as `api` names it).
pub(super) fn event(api: Api, object: &Value, causes: &mut Causes) {
    let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
    let involved = text(&object["involvedObject"], "namespace");
    let mismatch = |causes: &mut Causes| {
        causes.invalid(
            "involvedObject.namespace",
            &json!(involved),
            "does not match event.namespace",
        );
    };
    if object["eventTime"].is_null() {
        let agree = match involved {
            "" => namespace.is_empty() || namespace == "default",
            involved => involved == namespace,
        };
        if !agree {
            mismatch(causes);
        }
        return;
    }
    if involved.is_empty() && namespace != "default" && namespace != "kube-system" {
        mismatch(causes);
    }
    let controller = match api {
        Api::CoreEvent => "reportingComponent",
        _ => "reportingController",
    };
    let limited = [
        ("reportingInstance", 128, true),
        ("action", 128, true),
        ("reason", 128, true),
        ("message", 1024, false),
    ];
    if text(object, "reportingComponent").is_empty() {
        causes.required(controller);
    } else {
        let component = text(object, "reportingComponent");
        let whys = k8s::names::qualified_name_errors(component);
        causes.invalid_each(controller, component, whys);
    }
    for (field, limit, required) in limited {
        let value = text(object, field);
        if required && value.is_empty() {
            causes.required(field);
        }
        if value.chars().count() > limit {
            causes.invalid(
                field,
                &json!(""),
                &format!("can have at most {limit} characters"),
            );
        }
    }
}

/// What `ValidateEventCreate` and `ValidateEventUpdate` add through `events.k8s.io/v1`:
/// a series of at least two, the time set, the type Normal or Warning, the deprecated
/// fields unset on create.
pub(super) fn strict_event(object: &Value, current: Option<&Value>, causes: &mut Causes) {
    let series = &object["series"];
    if current.is_none_or(|c| c["series"] != *series) && !series.is_null() {
        if series["count"].as_i64().unwrap_or_default() < 2 {
            causes.invalid("series.count", &json!(""), "should be at least 2");
        }
        if series["lastObservedTime"].is_null() {
            causes.required("series.lastObservedTime");
        }
    }
    if current.is_some() {
        return;
    }
    if object["eventTime"].is_null() {
        causes.required("eventTime");
    }
    let kind = text(object, "type");
    if kind != "Normal" && kind != "Warning" {
        causes.invalid("type", &json!(""), &format!("has invalid value: {kind}"));
    }
    for field in ["firstTimestamp", "lastTimestamp"] {
        if !object[field].is_null() {
            causes.invalid(field, &json!(""), "needs to be unset");
        }
    }
    if object["count"].as_i64().unwrap_or_default() != 0 {
        causes.invalid("count", &json!(""), "needs to be unset");
    }
    let source = &object["source"];
    if !text(source, "component").is_empty() || !text(source, "host").is_empty() {
        causes.invalid("source", &json!(""), "needs to be unset");
    }
}

/// `ValidateEventUpdate`'s immutable fields, through `events.k8s.io/v1`.
pub(super) fn event_update(object: &Value, current: &Value, causes: &mut Causes) {
    for field in [
        "involvedObject",
        "reason",
        "message",
        "source",
        "firstTimestamp",
        "lastTimestamp",
        "count",
        "type",
        "eventTime",
        "action",
        "related",
        "reportingComponent",
        "reportingInstance",
    ] {
        if object[field] != current[field] {
            causes.invalid(field, &object[field], "field is immutable");
        }
    }
}
