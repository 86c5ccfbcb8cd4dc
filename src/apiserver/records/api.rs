//! The records' resources as clients name them: Leases in `coordination.k8s.io/v1`;
//! Events, one resource served in two versions, `v1` (client-go's `record`, kubectl) and
//! `events.k8s.io/v1` (client-go's `tools/events`), converted as kube-apiserver converts
//! them (k8s.io/kubernetes pkg/apis/events/v1/conversion.go); and ConfigMaps and Secrets
//! where the scenario's objects are of another kind ([`super::data`]); Services
//! ([`super::services`]) and ServiceAccounts, what an operator makes beside its
//! workloads. What each version's objects look like, which fields select them, how
//! kube-apiserver defaults, validates and prints them.

use k8s_openapi::jiff::Timestamp;
use serde_json::{Map, Value, json};

use crate::apiserver::apply::{Shape, Typed};
use crate::apiserver::status::ApiError;
use crate::apiserver::table;
use crate::apiserver::version::NamespacedName;
use crate::apiserver::write::{self, Causes, Endpoint};
use crate::scenario::ObjectKind;

/// A resource in the version a request names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// `coordination.k8s.io/v1` Leases: leader election's lock.
    Lease,
    /// `v1` Events, the form they are kept in.
    CoreEvent,
    /// `events.k8s.io/v1` Events.
    Event,
    /// `v1` ConfigMaps, where the scenario's objects are not ConfigMaps.
    ConfigMap,
    /// `v1` Secrets, where the scenario's objects are not Secrets.
    Secret,
    /// `v1` Services, with their status subresource ([`super::services`]).
    Service,
    /// `v1` ServiceAccounts: the identity an operator gives the workloads it makes.
    ServiceAccount,
}

/// A resource as the records keep it: Events once, whatever version wrote them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stored {
    Lease,
    Event,
    /// The namespaces clients create and delete: kept by the server
    /// ([`crate::apiserver::ApiServer::create_namespace`]), their changes in the records'
    /// history for the namespaces' watches.
    Namespace,
    Service,
    ServiceAccount,
    ConfigMap,
    Secret,
}

/// Each Event field a version names otherwise: (`v1`, `events.k8s.io/v1`).
const EVENT_FIELDS: [(&str, &str); 7] = [
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("reportingComponent", "reportingController"),
];

/// The fields a `v1` Event is selected by (kube-apiserver's `event.ToSelectableFields`).
const CORE_EVENT_FIELDS: &[&str] = &[
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
const EVENT_SELECTORS: &[(&str, &str)] = &[
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

impl Api {
    pub const ALL: [Api; 7] = [
        Api::Lease,
        Api::CoreEvent,
        Api::Event,
        Api::ConfigMap,
        Api::Secret,
        Api::Service,
        Api::ServiceAccount,
    ];

    /// Whether a server of `kind` objects keeps this resource as records: not where the
    /// scenario's objects are of it, generated (ConfigMaps, Secrets) or from a sample of
    /// the same group and plural (Leases, Events). Events are one resource served in two
    /// versions, so a scenario of Events in either takes both: kube-apiserver would list
    /// its objects in each, and records kept beside them in the other would be a second
    /// store of the same Events.
    pub fn served_with(self, kind: ObjectKind) -> bool {
        let same = |api: Api| api.group() == kind.group() && api.plural() == kind.plural();
        match self {
            Api::CoreEvent | Api::Event => !same(Api::CoreEvent) && !same(Api::Event),
            _ => !same(self),
        }
    }

    /// Whether this is a kind a server of `kind` objects might have held as its own, kept
    /// as records instead (ConfigMaps, Secrets): one whose discovery entry the records
    /// make writable.
    pub fn beside(self, kind: ObjectKind) -> bool {
        self.object_kind().is_some() && self.served_with(kind)
    }

    /// The scenario's kind of the same resource, where there is one.
    fn object_kind(self) -> Option<ObjectKind> {
        match self {
            Api::ConfigMap => Some(ObjectKind::ConfigMap),
            Api::Secret => Some(ObjectKind::Secret),
            Api::Lease | Api::CoreEvent | Api::Event | Api::Service | Api::ServiceAccount => None,
        }
    }

    /// Whether a PUT of a missing record creates it (its strategy's
    /// `AllowCreateOnUpdate`): a Lease's, an Event's and a Service's do, a ConfigMap's,
    /// a Secret's and a ServiceAccount's do not (404).
    pub fn creates_on_update(self) -> bool {
        match self {
            Api::Lease | Api::CoreEvent | Api::Event | Api::Service => true,
            Api::ConfigMap | Api::Secret | Api::ServiceAccount => false,
        }
    }

    /// Whether it has a status subresource (`.../{name}/status`), which alone writes
    /// its status: a Service's (a load balancer controller's ingress).
    pub fn has_status(self) -> bool {
        self == Api::Service
    }

    /// Whether a DELETE answers with the object as it was, rather than a `Success`
    /// Status (its registry's `ReturnDeletedObject`): a Service's and a
    /// ServiceAccount's do.
    pub fn returns_deleted_object(self) -> bool {
        matches!(self, Api::Service | Api::ServiceAccount)
    }

    /// The categories kube-apiserver lists it in (`kubectl get all` lists Services).
    pub fn categories(self) -> &'static [&'static str] {
        match self {
            Api::Service => &["all"],
            _ => &[],
        }
    }

    /// The API group (`""`: the core group).
    pub fn group(self) -> &'static str {
        match self {
            Api::Lease => "coordination.k8s.io",
            Api::CoreEvent | Api::ConfigMap | Api::Secret | Api::Service | Api::ServiceAccount => {
                ""
            }
            Api::Event => "events.k8s.io",
        }
    }

    pub fn api_version(self) -> &'static str {
        match self {
            Api::Lease => "coordination.k8s.io/v1",
            Api::CoreEvent | Api::ConfigMap | Api::Secret | Api::Service | Api::ServiceAccount => {
                "v1"
            }
            Api::Event => "events.k8s.io/v1",
        }
    }

    /// Where its resources are served.
    pub fn root(self) -> &'static str {
        match self {
            Api::Lease => "/apis/coordination.k8s.io/v1",
            Api::CoreEvent | Api::ConfigMap | Api::Secret | Api::Service | Api::ServiceAccount => {
                "/api/v1"
            }
            Api::Event => "/apis/events.k8s.io/v1",
        }
    }

    pub fn kind(self) -> &'static str {
        match self {
            Api::Lease => "Lease",
            Api::CoreEvent | Api::Event => "Event",
            Api::ConfigMap => "ConfigMap",
            Api::Secret => "Secret",
            Api::Service => "Service",
            Api::ServiceAccount => "ServiceAccount",
        }
    }

    /// The kind as a refused write names it, qualified by the group it is kept in
    /// (`Lease.coordination.k8s.io`; Events are kept in the core group, so `Event` in
    /// either version).
    pub fn qualified_kind(self) -> &'static str {
        match self {
            Api::Lease => "Lease.coordination.k8s.io",
            Api::CoreEvent
            | Api::Event
            | Api::ConfigMap
            | Api::Secret
            | Api::Service
            | Api::ServiceAccount => self.kind(),
        }
    }

    pub fn plural(self) -> &'static str {
        match self {
            Api::Lease => "leases",
            Api::CoreEvent | Api::Event => "events",
            Api::ConfigMap => "configmaps",
            Api::Secret => "secrets",
            Api::Service => "services",
            Api::ServiceAccount => "serviceaccounts",
        }
    }

    /// The resource as kube-apiserver names it in messages: `leases.coordination.k8s.io`.
    pub fn resource_name(self) -> &'static str {
        match self {
            Api::Lease => "leases.coordination.k8s.io",
            Api::CoreEvent | Api::ConfigMap | Api::Secret | Api::Service | Api::ServiceAccount => {
                self.plural()
            }
            Api::Event => "events.events.k8s.io",
        }
    }

    /// kube-apiserver's short names (`kubectl get ev`).
    pub fn short_names(self) -> &'static [&'static str] {
        match self {
            Api::Lease | Api::Secret => &[],
            Api::CoreEvent | Api::Event => &["ev"],
            Api::ConfigMap => &["cm"],
            Api::Service => &["svc"],
            Api::ServiceAccount => &["sa"],
        }
    }

    pub fn stored(self) -> Stored {
        match self {
            Api::Lease => Stored::Lease,
            Api::CoreEvent | Api::Event => Stored::Event,
            Api::ConfigMap => Stored::ConfigMap,
            Api::Secret => Stored::Secret,
            Api::Service => Stored::Service,
            Api::ServiceAccount => Stored::ServiceAccount,
        }
    }

    /// What an update's ownership reads of the type ([`crate::apiserver::apply`]).
    pub fn typed(self) -> Typed<'static> {
        let schema = match self {
            Api::Lease => "io.k8s.api.coordination.v1.Lease",
            Api::CoreEvent => "io.k8s.api.core.v1.Event",
            Api::Event => "io.k8s.api.events.v1.Event",
            Api::ConfigMap => "io.k8s.api.core.v1.ConfigMap",
            Api::Secret => "io.k8s.api.core.v1.Secret",
            Api::Service => "io.k8s.api.core.v1.Service",
            Api::ServiceAccount => "io.k8s.api.core.v1.ServiceAccount",
        };
        Typed {
            shape: Shape::named(schema),
            api_version: self.api_version(),
            kind: self.kind(),
            has_status: self.has_status(),
            go_type: true,
        }
    }

    /// `value` through the k8s-openapi type of this version ([`write::through`]).
    pub fn through_type(self, value: &Value) -> Result<Value, ApiError> {
        use k8s_openapi::api::core::v1::{ConfigMap, Event, Secret, Service, ServiceAccount};
        let kind = self.kind();
        match self {
            Api::Lease => write::through::<k8s_openapi::api::coordination::v1::Lease>(kind, value),
            Api::CoreEvent => write::through::<Event>(kind, value),
            Api::Event => write::through::<k8s_openapi::api::events::v1::Event>(kind, value),
            Api::ConfigMap => write::through::<ConfigMap>(kind, value),
            Api::Secret => write::through::<Secret>(kind, value),
            Api::Service => write::through::<Service>(kind, value),
            Api::ServiceAccount => write::through::<ServiceAccount>(kind, value),
        }
    }

    /// A written object (through the type) as kube-apiserver converts and defaults it
    /// before it keeps it: a Secret's `stringData` in its `data`, its type `Opaque` when
    /// it has none; a Service's defaults ([`super::services::defaulted`]).
    pub fn written(self, object: Value) -> Value {
        match self {
            Api::Secret => write::data::secret_written(object),
            Api::Service => super::services::defaulted(object),
            _ => object,
        }
    }

    /// An object of this version in the form it is kept in (`v1` for Events), with
    /// `apiVersion` and `kind`. Both forms have Go's zero fields filled by the caller.
    pub fn into_store(self, object: Value) -> Value {
        match self {
            Api::Event => renamed(object, |(core, events)| (events, core), "v1"),
            _ => object,
        }
    }

    /// A kept object in this version.
    pub fn out_of_store(self, object: Value) -> Value {
        match self {
            Api::Event => renamed(object, |pair| pair, self.api_version()),
            _ => object,
        }
    }

    /// The field selector `text` read for this version, in the kept form's field names;
    /// a field the resource is not selected by is an error in kube-apiserver's words.
    pub fn field_selector(
        self,
        text: &crate::k8s::FieldSelector,
    ) -> Result<crate::k8s::FieldSelector, String> {
        let selector = text.clone();
        match self {
            Api::Lease | Api::ConfigMap | Api::ServiceAccount => {
                selector.for_fields(&["metadata.name", "metadata.namespace"], &[])
            }
            Api::Service => selector.for_fields(
                &[
                    "metadata.name",
                    "metadata.namespace",
                    "spec.clusterIP",
                    "spec.type",
                ],
                &[],
            ),
            Api::Secret => {
                selector.for_fields(&["metadata.name", "metadata.namespace", "type"], &[])
            }
            Api::CoreEvent => selector.for_fields(CORE_EVENT_FIELDS, &[]),
            Api::Event => selector.for_fields(&[], EVENT_SELECTORS),
        }
    }

    /// The value of the selectable field `field` (of the kept form) of `object`.
    pub fn field_value<'a>(object: &'a Value, field: &str) -> std::borrow::Cow<'a, str> {
        if field == "source" {
            // kube-apiserver selects an Event's source by its component.
            return object["source"]["component"]
                .as_str()
                .unwrap_or_default()
                .into();
        }
        let mut value = object;
        for part in field.split('.') {
            value = &value[part];
        }
        match value {
            Value::String(text) => text.as_str().into(),
            Value::Null => "".into(),
            other => other.to_string().into(),
        }
    }

    /// kube-apiserver's validation of a write of `object` (the kept form) through this
    /// version's `endpoint`, `current` for an update: the metadata (`ValidateObjectMeta`);
    /// a Lease's spec (`ValidateLeaseSpec`); an Event's namespaces and, through
    /// `events.k8s.io/v1`, the stricter rules of `ValidateEventCreate` and
    /// `ValidateEventUpdate`; a Service's ([`super::services::validate`]), or through
    /// its status, its status's.
    pub fn validate(
        self,
        key: &NamespacedName,
        (object, current): (&Value, Option<&Value>),
        endpoint: Endpoint,
    ) -> Result<(), crate::apiserver::status::ApiError> {
        let mut causes = Causes::default();
        match self {
            Api::Service if endpoint == Endpoint::Status => {
                super::services::validate_status(key, object, &mut causes);
            }
            Api::Service => super::services::validate(key, object, current, &mut causes),
            Api::ServiceAccount => write::metadata(key, &object["metadata"], &mut causes),
            Api::Lease => {
                write::metadata(key, &object["metadata"], &mut causes);
                lease_spec(&object["spec"], &mut causes);
            }
            Api::CoreEvent => event(self, object, &mut causes),
            Api::Event => {
                event(self, object, &mut causes);
                match current {
                    None => write::metadata(key, &object["metadata"], &mut causes),
                    Some(current) => event_update(object, current, &mut causes),
                }
                strict_event(object, current, &mut causes);
            }
            Api::ConfigMap => write::data::config_map(key, object, current, &mut causes),
            Api::Secret => write::data::secret(key, object, current, &mut causes),
        }
        causes.into_result(self.qualified_kind(), &key.name)
    }

    /// kube-apiserver's table columns (pkg/printers/internalversion), wide ones included.
    pub fn columns(self) -> Value {
        use table::column;
        let name = json!({"name": "Name", "type": "string", "format": "name", "priority": 0,
                          "description": "The object's name, unique within its namespace."});
        match self {
            Api::ConfigMap => table::columns(ObjectKind::ConfigMap),
            Api::Secret => table::columns(ObjectKind::Secret),
            Api::Service => super::services::columns(),
            Api::ServiceAccount => json!([
                name,
                column("Age", "", 0, "Time since the object's creationTimestamp."),
            ]),
            Api::Lease => json!([
                name,
                column(
                    "Holder",
                    "",
                    0,
                    "holderIdentity contains the identity of the holder of a current lease."
                ),
                column("Age", "", 0, "Time since the object's creationTimestamp."),
            ]),
            Api::CoreEvent | Api::Event => {
                let mut name = name;
                name["priority"] = json!(1);
                json!([
                    column(
                        "Last Seen",
                        "",
                        0,
                        "The time at which the most recent occurrence of this event was recorded."
                    ),
                    column(
                        "Type",
                        "",
                        0,
                        "Type of this event (Normal, Warning), new types could be added in the future"
                    ),
                    column(
                        "Reason",
                        "",
                        0,
                        "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."
                    ),
                    column("Object", "", 0, "The object that this event is about."),
                    column(
                        "Subobject",
                        "",
                        1,
                        "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]."
                    ),
                    column(
                        "Source",
                        "",
                        1,
                        "The component reporting this event. Should be a short machine understandable string."
                    ),
                    column(
                        "Message",
                        "",
                        0,
                        "A human-readable description of the status of this operation."
                    ),
                    column(
                        "First Seen",
                        "",
                        1,
                        "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)"
                    ),
                    column(
                        "Count",
                        "",
                        1,
                        "The number of times this event has occurred."
                    ),
                    name,
                ])
            }
        }
    }

    /// A row's cells for `object` (the kept form: an Event is printed from `v1`'s fields
    /// in either version), as kube-apiserver's `printLease` and `printEvent` fill them.
    pub fn cells(self, object: &Value, now: Timestamp) -> Vec<Value> {
        let meta = &object["metadata"];
        match self {
            Api::ConfigMap => table::cells(ObjectKind::ConfigMap, object, now),
            Api::Secret => table::cells(ObjectKind::Secret, object, now),
            Api::Service => super::services::cells(object, now),
            Api::ServiceAccount => vec![
                meta["name"].clone(),
                json!(table::age(meta["creationTimestamp"].as_str(), now)),
            ],
            Api::Lease => vec![
                meta["name"].clone(),
                json!(
                    object["spec"]["holderIdentity"]
                        .as_str()
                        .unwrap_or_default()
                ),
                json!(table::age(meta["creationTimestamp"].as_str(), now)),
            ],
            Api::CoreEvent | Api::Event => event_cells(object, now),
        }
    }
}

/// `object` with each Event field renamed from the first name `pair` gives to the
/// second, as `api_version`.
fn renamed(
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

/// `ValidateLeaseSpec`.
fn lease_spec(spec: &Value, causes: &mut Causes) {
    if let Some(seconds) = spec["leaseDurationSeconds"].as_i64().filter(|s| *s <= 0) {
        causes.invalid(
            "spec.leaseDurationSeconds",
            &json!(seconds),
            "must be greater than 0",
        );
    }
    if let Some(transitions) = spec["leaseTransitions"].as_i64().filter(|t| *t < 0) {
        causes.invalid(
            "spec.leaseTransitions",
            &json!(transitions),
            "must be greater than or equal to 0",
        );
    }
    if spec["preferredHolder"]
        .as_str()
        .is_some_and(|h| !h.is_empty())
        && spec["strategy"].as_str().is_none_or(str::is_empty)
    {
        causes.push(
            "FieldValueForbidden",
            "spec.preferredHolder",
            "Forbidden: may only be specified if `strategy` is defined".to_owned(),
        );
    }
}

fn text<'a>(object: &'a Value, field: &str) -> &'a str {
    object[field].as_str().unwrap_or_default()
}

/// `legacyValidateEvent`, which every Event write passes (`object` kept as `v1`; the
/// field at fault named as `api` names it).
fn event(api: Api, object: &Value, causes: &mut Causes) {
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
    } else if let Some(why) =
        crate::k8s::names::qualified_name_error(text(object, "reportingComponent"))
    {
        causes.invalid(controller, &object["reportingComponent"], &why);
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
fn strict_event(object: &Value, current: Option<&Value>, causes: &mut Causes) {
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
fn event_update(object: &Value, current: &Value, causes: &mut Causes) {
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

/// `printEvent`'s cells, wide ones included (kube-apiserver fills every column).
fn event_cells(event: &Value, now: Timestamp) -> Vec<Value> {
    let time = |field: &str| event[field].as_str().map(|t| table::age(Some(t), now));
    let first = time("firstTimestamp").or_else(|| time("eventTime"));
    let first = first.unwrap_or_else(|| table::age(None, now));
    let series = &event["series"];
    let (last, count) = match series.is_null() {
        false => (
            table::age(series["lastObservedTime"].as_str(), now),
            series["count"].as_i64().unwrap_or_default(),
        ),
        true => (
            time("lastTimestamp").unwrap_or_else(|| first.clone()),
            event["count"].as_i64().filter(|c| *c != 0).unwrap_or(1),
        ),
    };
    let involved = &event["involvedObject"];
    let kind = text(involved, "kind").to_lowercase();
    let target = match text(involved, "name") {
        "" => kind,
        name => format!("{kind}/{name}"),
    };
    vec![
        json!(last),
        json!(text(event, "type")),
        json!(text(event, "reason")),
        json!(target),
        json!(text(involved, "fieldPath")),
        json!(source_text(event)),
        json!(text(event, "message").trim()),
        json!(first),
        json!(count),
        event["metadata"]["name"].clone(),
    ]
}

/// `formatEventSource`: the source's component (or the reporting controller), and its
/// host (or the reporting instance), as `component, host`.
fn source_text(event: &Value) -> String {
    let source = &event["source"];
    let or = |a: &str, b: &str| {
        let first = text(source, a);
        if first.is_empty() {
            text(event, b).to_owned()
        } else {
            first.to_owned()
        }
    };
    let component = or("component", "reportingComponent");
    match or("host", "reportingInstance") {
        host if host.is_empty() => component,
        host => format!("{component}, {host}"),
    }
}
