//! The records' resources as clients name them: Leases in `coordination.k8s.io/v1`;
//! Events, one resource served in two versions ([`super::events`]); and ConfigMaps and Secrets
//! where the scenario's objects are of another kind ([`super::data`]); what an operator
//! makes of its objects: Services ([`super::services`]) and ServiceAccounts, and the
//! workloads of `apps/v1` ([`super::workloads`]). What each version's objects look like, which fields select them, how
//! kube-apiserver defaults, validates and prints them.

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::events::{
    CORE_EVENT_FIELDS, EVENT_SELECTORS, event, event_update, renamed, strict_event,
};
use crate::apply::{Shape, Typed};
use crate::printers;
use crate::status::ApiError;
use crate::version::NamespacedName;
use crate::write::{self, Causes, DeleteStrategy, Endpoint, GcPolicy};
use scenario::ObjectKind;

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
    /// `apps/v1` Deployments, where the scenario's objects are not Deployments.
    Deployment,
    /// `apps/v1` ReplicaSets.
    ReplicaSet,
    /// `apps/v1` StatefulSets.
    StatefulSet,
    /// `apps/v1` DaemonSets.
    DaemonSet,
    /// `batch/v1` Jobs ([`super::batch`]).
    Job,
    /// `batch/v1` CronJobs.
    CronJob,
    /// `rbac.authorization.k8s.io/v1` Roles ([`super::rbac`]).
    Role,
    /// `rbac.authorization.k8s.io/v1` RoleBindings.
    RoleBinding,
    /// `rbac.authorization.k8s.io/v1` ClusterRoles, at the cluster's scope.
    ClusterRole,
    /// `rbac.authorization.k8s.io/v1` ClusterRoleBindings, at the cluster's scope.
    ClusterRoleBinding,
}

/// A resource as the records keep it: Events once, whatever version wrote them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stored {
    Lease,
    Event,
    /// The namespaces clients create and delete: kept by the server
    /// ([`crate::ApiServer::create_namespace`]), their changes in the records'
    /// history for the namespaces' watches.
    Namespace,
    Service,
    ServiceAccount,
    ConfigMap,
    Secret,
    Deployment,
    ReplicaSet,
    StatefulSet,
    DaemonSet,
    Job,
    CronJob,
    Role,
    RoleBinding,
    ClusterRole,
    ClusterRoleBinding,
}

impl Api {
    pub const ALL: [Api; 17] = [
        Api::Lease,
        Api::CoreEvent,
        Api::Event,
        Api::ConfigMap,
        Api::Secret,
        Api::Service,
        Api::ServiceAccount,
        Api::Deployment,
        Api::ReplicaSet,
        Api::StatefulSet,
        Api::DaemonSet,
        Api::Job,
        Api::CronJob,
        Api::Role,
        Api::RoleBinding,
        Api::ClusterRole,
        Api::ClusterRoleBinding,
    ];

    /// The workloads of `apps/v1`.
    pub const WORKLOADS: [Api; 4] = [
        Api::Deployment,
        Api::ReplicaSet,
        Api::StatefulSet,
        Api::DaemonSet,
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
    /// as records instead (ConfigMaps, Secrets, Deployments): one whose discovery entry,
    /// where its group is served, the records make writable.
    pub fn beside(self, kind: ObjectKind) -> bool {
        self.object_kind().is_some() && self.served_with(kind)
    }

    /// The scenario's kind of the same resource, where there is one.
    fn object_kind(self) -> Option<ObjectKind> {
        match self {
            Api::ConfigMap => Some(ObjectKind::ConfigMap),
            Api::Secret => Some(ObjectKind::Secret),
            Api::Deployment => Some(ObjectKind::Deployment),
            _ => None,
        }
    }

    /// Whether a PUT of a missing record creates it (its strategy's
    /// `AllowCreateOnUpdate`): a Lease's, an Event's and a Service's do, a ConfigMap's,
    /// a Secret's, a ServiceAccount's and the workloads' do not (404).
    pub fn creates_on_update(self) -> bool {
        matches!(
            self,
            Api::Lease | Api::CoreEvent | Api::Event | Api::Service
        ) || self.is_rbac()
    }

    /// Whether it is one of RBAC's kinds ([`super::rbac`]).
    pub fn is_rbac(self) -> bool {
        matches!(
            self,
            Api::Role | Api::RoleBinding | Api::ClusterRole | Api::ClusterRoleBinding
        )
    }

    /// Whether its records live in namespaces (all but ClusterRoles and
    /// ClusterRoleBindings).
    pub fn namespaced(self) -> bool {
        !matches!(self, Api::ClusterRole | Api::ClusterRoleBinding)
    }

    /// Whether it has a status subresource (`.../{name}/status`), which alone writes
    /// its status: a Service's (a load balancer controller's ingress), a workload's or a
    /// Job's (its controller's counts and conditions).
    pub fn has_status(self) -> bool {
        self == Api::Service || self.is_controlled()
    }

    /// Whether it is one of the workloads of `apps/v1` ([`super::workloads`]).
    pub fn is_workload(self) -> bool {
        Api::WORKLOADS.contains(&self)
    }

    /// Whether it is a Job or a CronJob ([`super::batch`]).
    pub fn is_batch(self) -> bool {
        matches!(self, Api::Job | Api::CronJob)
    }

    /// Whether a controller runs it (a workload, a Job): its spec is the user's, its
    /// status the controller's, written apart, and a change of its spec moves its
    /// generation.
    pub fn is_controlled(self) -> bool {
        self.is_workload() || self.is_batch()
    }

    /// Whether a DELETE answers with the object as it was, rather than a `Success`
    /// Status (its registry's `ReturnDeletedObject`): a Service's and a
    /// ServiceAccount's do.
    pub fn returns_deleted_object(self) -> bool {
        matches!(self, Api::Service | Api::ServiceAccount)
    }

    /// What its registry does on a DELETE: none deletes gracefully; a `batch/v1` Job's
    /// pods are orphaned unless the DELETE says otherwise (a CronJob's Jobs are not: that
    /// is `batch/v1beta1`'s), and an Event has no garbage collection (its registry's
    /// `DefaultGarbageCollectionPolicy`).
    pub fn delete_strategy(self) -> DeleteStrategy {
        let policy = match self {
            Api::Job => GcPolicy::OrphanDependents,
            Api::Event | Api::CoreEvent => GcPolicy::Unsupported,
            _ => GcPolicy::DeleteDependents,
        };
        DeleteStrategy {
            graceful: false,
            policy,
        }
    }

    /// The categories kube-apiserver lists it in (`kubectl get all` lists Services and
    /// the workloads).
    pub fn categories(self) -> &'static [&'static str] {
        match self {
            Api::Service => &["all"],
            _ if self.is_controlled() => &["all"],
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
            Api::Deployment | Api::ReplicaSet | Api::StatefulSet | Api::DaemonSet => "apps",
            Api::Job | Api::CronJob => "batch",
            _ => "rbac.authorization.k8s.io",
        }
    }

    pub fn api_version(self) -> &'static str {
        match self {
            Api::Lease => "coordination.k8s.io/v1",
            Api::CoreEvent | Api::ConfigMap | Api::Secret | Api::Service | Api::ServiceAccount => {
                "v1"
            }
            Api::Event => "events.k8s.io/v1",
            Api::Deployment | Api::ReplicaSet | Api::StatefulSet | Api::DaemonSet => "apps/v1",
            Api::Job | Api::CronJob => "batch/v1",
            _ => "rbac.authorization.k8s.io/v1",
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
            Api::Deployment | Api::ReplicaSet | Api::StatefulSet | Api::DaemonSet => {
                "/apis/apps/v1"
            }
            Api::Job | Api::CronJob => "/apis/batch/v1",
            _ => "/apis/rbac.authorization.k8s.io/v1",
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
            Api::Deployment => "Deployment",
            Api::ReplicaSet => "ReplicaSet",
            Api::StatefulSet => "StatefulSet",
            Api::DaemonSet => "DaemonSet",
            Api::Job => "Job",
            Api::CronJob => "CronJob",
            Api::Role => "Role",
            Api::RoleBinding => "RoleBinding",
            Api::ClusterRole => "ClusterRole",
            Api::ClusterRoleBinding => "ClusterRoleBinding",
        }
    }

    /// The kind as a refused write names it, qualified by the group it is kept in
    /// (`Lease.coordination.k8s.io`; Events are kept in the core group, so `Event` in
    /// either version).
    pub fn qualified_kind(self) -> &'static str {
        match self {
            Api::Lease => "Lease.coordination.k8s.io",
            Api::Deployment => "Deployment.apps",
            Api::ReplicaSet => "ReplicaSet.apps",
            Api::StatefulSet => "StatefulSet.apps",
            Api::DaemonSet => "DaemonSet.apps",
            Api::Job => "Job.batch",
            Api::CronJob => "CronJob.batch",
            Api::Role => "Role.rbac.authorization.k8s.io",
            Api::RoleBinding => "RoleBinding.rbac.authorization.k8s.io",
            Api::ClusterRole => "ClusterRole.rbac.authorization.k8s.io",
            Api::ClusterRoleBinding => "ClusterRoleBinding.rbac.authorization.k8s.io",
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
            Api::Deployment => "deployments",
            Api::ReplicaSet => "replicasets",
            Api::StatefulSet => "statefulsets",
            Api::DaemonSet => "daemonsets",
            Api::Job => "jobs",
            Api::CronJob => "cronjobs",
            Api::Role => "roles",
            Api::RoleBinding => "rolebindings",
            Api::ClusterRole => "clusterroles",
            Api::ClusterRoleBinding => "clusterrolebindings",
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
            Api::Deployment => "deployments.apps",
            Api::ReplicaSet => "replicasets.apps",
            Api::StatefulSet => "statefulsets.apps",
            Api::DaemonSet => "daemonsets.apps",
            Api::Job => "jobs.batch",
            Api::CronJob => "cronjobs.batch",
            Api::Role => "roles.rbac.authorization.k8s.io",
            Api::RoleBinding => "rolebindings.rbac.authorization.k8s.io",
            Api::ClusterRole => "clusterroles.rbac.authorization.k8s.io",
            Api::ClusterRoleBinding => "clusterrolebindings.rbac.authorization.k8s.io",
        }
    }

    /// kube-apiserver's short names (`kubectl get ev`).
    pub fn short_names(self) -> &'static [&'static str] {
        match self {
            Api::Lease | Api::Secret | Api::Job => &[],
            Api::Role | Api::RoleBinding | Api::ClusterRole | Api::ClusterRoleBinding => &[],
            Api::CoreEvent | Api::Event => &["ev"],
            Api::ConfigMap => &["cm"],
            Api::Service => &["svc"],
            Api::ServiceAccount => &["sa"],
            Api::Deployment => &["deploy"],
            Api::ReplicaSet => &["rs"],
            Api::StatefulSet => &["sts"],
            Api::DaemonSet => &["ds"],
            Api::CronJob => &["cj"],
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
            Api::Deployment => Stored::Deployment,
            Api::ReplicaSet => Stored::ReplicaSet,
            Api::StatefulSet => Stored::StatefulSet,
            Api::DaemonSet => Stored::DaemonSet,
            Api::Job => Stored::Job,
            Api::CronJob => Stored::CronJob,
            Api::Role => Stored::Role,
            Api::RoleBinding => Stored::RoleBinding,
            Api::ClusterRole => Stored::ClusterRole,
            Api::ClusterRoleBinding => Stored::ClusterRoleBinding,
        }
    }

    /// What an update's ownership reads of the type ([`crate::apply`]).
    pub fn typed(self) -> Typed<'static> {
        let schema = match self {
            Api::Lease => "io.k8s.api.coordination.v1.Lease",
            Api::CoreEvent => "io.k8s.api.core.v1.Event",
            Api::Event => "io.k8s.api.events.v1.Event",
            Api::ConfigMap => "io.k8s.api.core.v1.ConfigMap",
            Api::Secret => "io.k8s.api.core.v1.Secret",
            Api::Service => "io.k8s.api.core.v1.Service",
            Api::ServiceAccount => "io.k8s.api.core.v1.ServiceAccount",
            Api::Deployment => "io.k8s.api.apps.v1.Deployment",
            Api::ReplicaSet => "io.k8s.api.apps.v1.ReplicaSet",
            Api::StatefulSet => "io.k8s.api.apps.v1.StatefulSet",
            Api::DaemonSet => "io.k8s.api.apps.v1.DaemonSet",
            Api::Job => "io.k8s.api.batch.v1.Job",
            Api::CronJob => "io.k8s.api.batch.v1.CronJob",
            Api::Role => "io.k8s.api.rbac.v1.Role",
            Api::RoleBinding => "io.k8s.api.rbac.v1.RoleBinding",
            Api::ClusterRole => "io.k8s.api.rbac.v1.ClusterRole",
            Api::ClusterRoleBinding => "io.k8s.api.rbac.v1.ClusterRoleBinding",
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
        use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
        use k8s_openapi::api::batch::v1::{CronJob, Job};
        use k8s_openapi::api::core::v1::{ConfigMap, Event, Secret, Service, ServiceAccount};
        use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
        let kind = self.kind();
        match self {
            Api::Lease => write::through::<k8s_openapi::api::coordination::v1::Lease>(kind, value),
            Api::CoreEvent => write::through::<Event>(kind, value),
            Api::Event => write::through::<k8s_openapi::api::events::v1::Event>(kind, value),
            Api::ConfigMap => write::through::<ConfigMap>(kind, value),
            Api::Secret => write::through::<Secret>(kind, value),
            Api::Service => write::through::<Service>(kind, value),
            Api::ServiceAccount => write::through::<ServiceAccount>(kind, value),
            Api::Deployment => write::through::<Deployment>(kind, value),
            Api::ReplicaSet => write::through::<ReplicaSet>(kind, value),
            Api::StatefulSet => write::through::<StatefulSet>(kind, value),
            Api::DaemonSet => write::through::<DaemonSet>(kind, value),
            Api::Job => write::through::<Job>(kind, value),
            Api::CronJob => write::through::<CronJob>(kind, value),
            Api::Role => write::through::<Role>(kind, value),
            Api::RoleBinding => write::through::<RoleBinding>(kind, value),
            Api::ClusterRole => write::through::<ClusterRole>(kind, value),
            Api::ClusterRoleBinding => write::through::<ClusterRoleBinding>(kind, value),
        }
        .map(|typed| match self.is_workload() {
            true => write::without_unset_selector(value, typed),
            false => typed,
        })
    }

    /// A written object (through the type) as kube-apiserver converts and defaults it
    /// before it keeps it: a Secret's `stringData` in its `data`, its type `Opaque` when
    /// it has none; a Service's defaults ([`super::services::defaulted`]), a workload's
    /// ([`super::workloads::defaulted`]), a Job's or a CronJob's
    /// ([`super::batch::defaulted`]).
    pub fn written(self, object: Value) -> Value {
        match self {
            Api::Secret => write::data::secret_written(object),
            Api::Service => super::services::defaulted(object),
            _ if self.is_workload() => super::workloads::defaulted(self, object),
            _ if self.is_batch() => super::batch::defaulted(self, object),
            _ if self.is_rbac() => super::rbac::defaulted(self, object),
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
    pub fn field_selector(self, text: &k8s::FieldSelector) -> Result<k8s::FieldSelector, String> {
        let selector = text.clone();
        match self {
            // A cluster-scoped one's namespace is selected too (always "").
            Api::Lease
            | Api::ConfigMap
            | Api::ServiceAccount
            | Api::Role
            | Api::RoleBinding
            | Api::ClusterRole
            | Api::ClusterRoleBinding => {
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
            Api::Job => {
                let fields = ["metadata.name", "metadata.namespace"];
                let selected = [("status.successful", "status.succeeded")];
                selector.for_fields(&fields, &selected).map_err(|_| {
                    let field = (text.fields())
                        .find(|f| !fields.contains(f) && *f != selected[0].0)
                        .unwrap_or_default();
                    format!("field label {field:?} not supported for Job")
                })
            }
            Api::Deployment
            | Api::ReplicaSet
            | Api::StatefulSet
            | Api::DaemonSet
            | Api::CronJob => {
                let fields = ["metadata.name", "metadata.namespace"];
                selector.for_fields(&fields, &[]).map_err(|_| {
                    let field = (text.fields().find(|f| !fields.contains(f))).unwrap_or_default();
                    format!(
                        "{field:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
                    )
                })
            }
        }
    }

    /// The value of the selectable field `field` (of the kept form) of `object`.
    pub fn field_value<'a>(object: &'a Value, field: &str) -> std::borrow::Cow<'a, str> {
        if field == "status.succeeded" {
            // A count, selected as Go formats it: 0 where the status has none.
            return object["status"]["succeeded"]
                .as_i64()
                .unwrap_or(0)
                .to_string()
                .into();
        }
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
    ) -> Result<(), crate::status::ApiError> {
        let mut causes = Causes::default();
        if let Some(current) = current {
            write::deletion_update(&object["metadata"], &current["metadata"], &mut causes);
        }
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
            Api::Deployment | Api::ReplicaSet | Api::StatefulSet | Api::DaemonSet => {
                let written = (object, current, endpoint);
                super::workloads::validate(self, key, written, &mut causes);
            }
            Api::Job | Api::CronJob => {
                super::batch::validate(self, key, (object, current, endpoint), &mut causes);
            }
            Api::Role | Api::RoleBinding | Api::ClusterRole | Api::ClusterRoleBinding => {
                super::rbac::validate(self, key, (object, current), &mut causes);
            }
        }
        causes.into_result(self.qualified_kind(), &key.name)
    }

    /// kube-apiserver's table columns ([`crate::printers`]), wide ones
    /// included: an Event's as the form it is kept in prints it.
    pub fn columns(self) -> Value {
        printers::columns(self.stored_group(), self.kind())
    }

    /// A row's cells for `object` (the kept form: an Event is printed from `v1`'s fields
    /// in either version), as kube-apiserver's printer of its kind fills them.
    pub fn cells(self, object: &Value, now: Timestamp) -> Vec<Value> {
        printers::cells(self.stored_group(), self.kind(), object, now)
    }

    /// The group of the form it is kept in (Events: the core group's `v1`).
    fn stored_group(self) -> &'static str {
        match self {
            Api::Event => "",
            _ => self.group(),
        }
    }
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
