//! Leases, Events, ConfigMaps, Secrets, Services, ServiceAccounts, workloads, Jobs and
//! RBAC: what a program writes beside the objects it watches, kept so that a controller runs against the
//! built-in apiserver as it runs in a cluster. A controller-runtime manager or client-go's `leaderelection` takes a Lease
//! in `coordination.k8s.io/v1` before it starts its controllers (without one it never
//! asks for the objects at all), and event recorders write Events, in `v1` (client-go's
//! `record`) or `events.k8s.io/v1` (`tools/events`); `kubectl get events`, `kubectl
//! describe` and `kubectl get leases` read them back. ConfigMaps and Secrets are kept
//! where the scenario's objects are of another kind (converted, defaulted and validated
//! as a scenario of them is: [`super::write::data`]); so are the Services and
//! ServiceAccounts an operator makes beside its workloads ([`services`]: defaulted, with
//! cluster IPs and node ports allocated, and a status subresource), the workloads of
//! `apps/v1` ([`workloads`]), the Jobs and CronJobs it runs ([`batch`]) and the RBAC its
//! installer writes ([`rbac`]; ClusterRoles and ClusterRoleBindings at the cluster's
//! scope, the records' only kinds there).
//!
//! Served over TCP only ([`super::routes::network_router`]: `serve`, `run`'s loopback
//! server for external variants, crosscheck), as kube-apiserver serves them: create,
//! get, list (label and field selectors), replace (a PUT of a missing one creates it),
//! JSON, merge and strategic-merge patches, server-side apply (which creates a missing
//! one), delete and deletecollection (finalizers and propagation policies included:
//! [`deletes`]), in JSON or protobuf, as tables for kubectl, each
//! write with its managedFields entry (an update that changes nothing is not written),
//! and watched ([`watch`]). Events expire an hour after their last write, as
//! kube-apiserver's `--event-ttl` has etcd delete them.
//!
//! Namespaces clients create, update and delete take their resourceVersions from the
//! records' counter too, their changes in the records' history, so that they are watched
//! as the records are ([`watch::Watched`]).
//!
//! The records keep resourceVersions of their own, apart from the scenario's objects':
//! a Lease renewed every two seconds on the wall clock would otherwise move the versions
//! a run's objects get, which every report's figures follow, and no client compares
//! versions across resources. No phase writes them and no informer under test reads
//! them, so they stay out of every report.

mod api;
mod batch;
mod deletes;
mod events;
mod filter;
mod namespaces;
mod rbac;
mod scale;
pub(crate) mod services;
mod watch;
mod workloads;
mod writes;

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use tokio::time::Instant;

pub use api::Api;
use api::Stored;
pub(crate) use filter::Filter;
pub(crate) use namespaces::holds_namespace;
use watch::{Change, History};
pub(crate) use watch::{Watched, serve as serve_watch};

use super::ApiServer;
use super::discovery::{Described, Serving, document as group_document, named_group};
use super::extract::ApiPath;
use super::form::{Form, Wire};
use super::group::{Apps, Group, SampledGroup};
use super::protobuf;
use super::reviews::REVIEW_GROUPS;
use super::signal::Signal;
use super::state::EventKind;
use super::status::{ApiError, method_not_allowed};
use super::table::{self, metadata_only};
use super::version::NamespacedName;
use super::write::{self, Endpoint};
use scenario::ObjectKind;

/// The named groups of the records, in the order `/apis` lists them (kube-apiserver's:
/// the reviews' groups come between the second and the third).
pub const GROUPS: [&str; 5] = [
    "apps",
    "events.k8s.io",
    "batch",
    "rbac.authorization.k8s.io",
    "coordination.k8s.io",
];

/// Over the network: the scenario's objects, the records, the reviews
/// ([`super::reviews`]), the pods' connect subresources ([`super::connect`]) and
/// evictions ([`super::eviction`]), which discovery lists.
#[derive(Debug)]
pub struct Network;

impl Serving for Network {
    fn groups(kind: ObjectKind) -> Vec<Value> {
        let [apps, events, batch, rbac, leases] =
            GROUPS.map(|group| serves_group(kind, group).then(|| named_group(group, "v1")));
        let reviews = REVIEW_GROUPS.map(|name| named_group(name, "v1"));
        let named = apps.into_iter().chain(events).chain(reviews);
        // Every other group kube-apiserver serves, listed and watched empty: `/apis`
        // keeps the first of a name.
        let served = named.chain(batch).chain(rbac).chain(leases);
        served.chain(crate::empty::groups(kind)).collect()
    }

    fn resources_beside(kind: ObjectKind, group: &str) -> Vec<Value> {
        // Those the scenario's own listing has (ConfigMaps, Secrets, Deployments beside
        // a sample of another `apps` kind) are made writable there instead.
        let listed = in_group(kind, group).flat_map(|api| {
            let resource = (!api.beside(kind)).then(|| resource(api));
            resource.into_iter().chain(subresources(api))
        });
        let mut resources: Vec<Value> = listed.collect();
        if group.is_empty() {
            resources.extend(super::connect::resources());
            resources.push(super::eviction::resource());
        }
        // The group's resources nothing else here serves, listed and watched empty; a
        // listing of the same name above takes their place.
        resources.extend(crate::empty::listed(kind, group));
        resources
    }

    fn described_beside(kind: ObjectKind, group: &str) -> Vec<Described> {
        let listed = in_group(kind, group).filter(|api| !api.beside(kind));
        listed.map(described).collect()
    }

    fn documents(kind: ObjectKind) -> Vec<(&'static str, Value)> {
        let served = GROUPS.into_iter().filter(|group| serves_group(kind, group));
        served
            .map(|group| (&root_of(group)[1..], document(kind, group)))
            .collect()
    }

    const WRITES_NAMESPACES: bool = true;

    fn written_beside(kind: ObjectKind, group: &str) -> Vec<&'static str> {
        let written = in_group(kind, group).filter(|api| api.beside(kind));
        written.map(Api::plural).collect()
    }
}

/// The records of `group` a server of `kind` objects keeps.
fn in_group(kind: ObjectKind, group: &str) -> impl Iterator<Item = Api> + '_ {
    (Api::ALL.into_iter()).filter(move |api| api.group() == group && api.served_with(kind))
}

/// Whether the records serve the discovery of the named `group` on a server of `kind`
/// objects (`/apis/{group}`, its version's resources, its OpenAPI document): they keep
/// some of its resources and the scenario's routes do not serve the group (a scenario of
/// Deployments, or of a sample of another `apps` kind, serves `apps`; a sample of
/// CronJobs serves `batch`; each lists the records' kinds beside its own:
/// [`Network::resources_beside`]).
fn serves_group(kind: ObjectKind, group: &str) -> bool {
    in_group(kind, group).next().is_some()
        && !(Apps::served_with(kind) && group == Apps::name(kind))
        && !(SampledGroup::served_with(kind) && group == SampledGroup::name(kind))
}

/// Where the records of the named `group` are served (`/apis/apps/v1`).
fn root_of(group: &str) -> &'static str {
    let api = Api::ALL.into_iter().find(|api| api.group() == group);
    api.expect("every records' group has a resource").root()
}

/// The records one server keeps; clones share them.
#[derive(Debug, Clone)]
pub struct Records {
    /// The server whose namespaces they live in, and whose seed draws their UIDs.
    server: ApiServer,
    store: Arc<Mutex<Store>>,
}

/// A record's resource, namespace and name.
type Key = (Stored, String, String);

/// How long an Event is kept after its last write: kube-apiserver's `--event-ttl`
/// default.
const EVENT_TTL: Duration = Duration::from_secs(60 * 60);

#[derive(Debug)]
struct Store {
    /// Each record in the form it is kept in (Events as `v1`).
    objects: BTreeMap<Key, Value>,
    /// The newest resourceVersion a record got (their own: see the module's notes).
    resource_version: u64,
    /// Records created so far, which numbers each one's UID.
    created: u32,
    /// The newest changes, for watches.
    history: History,
    /// The newest resourceVersion, for watches waiting for the next change.
    head: Signal,
    /// The cluster IPs and node ports the Services hold.
    services: services::Allocated,
    /// When each Event expires.
    expiries: BTreeMap<Key, Instant>,
    /// Events by when they expire, soonest first (the TTL is one, so in write order); an
    /// Event written again since is here once more, and only its entry in `expiries`
    /// counts.
    expiring: VecDeque<(Instant, Key)>,
}

impl Store {
    fn new() -> Store {
        Store {
            objects: BTreeMap::new(),
            // The version the server's own namespaces are at: a namespace's watch from a
            // list made before any record was written sees every change after it.
            resource_version: 1,
            created: 0,
            history: History::default(),
            head: Signal::new(1),
            services: services::Allocated::default(),
            expiries: BTreeMap::new(),
            expiring: VecDeque::new(),
        }
    }

    /// Keeps `object` as the record `key` at the next resourceVersion, and tells the
    /// watches; an Event then expires `EVENT_TTL` from `now`. Returns what it keeps.
    fn put(&mut self, key: Key, mut object: Value, now: Instant) -> Value {
        self.resource_version += 1;
        let rv = self.resource_version;
        object["metadata"]["resourceVersion"] = json!(rv.to_string());
        if key.0 == Stored::Event {
            let at = now + EVENT_TTL;
            self.expiries.insert(key.clone(), at);
            self.expiring.push_back((at, key.clone()));
        }
        let before = self.objects.insert(key.clone(), object.clone());
        if key.0 == Stored::Service {
            let owner = (key.1.clone(), key.2.clone());
            self.services.claim(&owner, &object, before.as_ref());
        }
        let kind = match before {
            Some(_) => EventKind::Modified,
            None => EventKind::Added,
        };
        self.changed(Change::new(rv, kind, key, object.clone(), before));
        object
    }

    /// Deletes the record `key` at the next resourceVersion, and tells the watches.
    /// Returns it as it was, at the deletion's resourceVersion.
    fn remove(&mut self, key: &Key) -> Option<Value> {
        let mut object = self.objects.remove(key)?;
        self.expiries.remove(key);
        if key.0 == Stored::Service {
            self.services
                .release(&(key.1.clone(), key.2.clone()), &object);
        }
        self.resource_version += 1;
        let rv = self.resource_version;
        object["metadata"]["resourceVersion"] = json!(rv.to_string());
        let change = Change::new(rv, EventKind::Deleted, key.clone(), object.clone(), None);
        self.changed(change);
        Some(object)
    }

    fn changed(&mut self, change: Change) {
        self.history.push(change);
        self.head.send_replace(self.resource_version);
    }

    /// Deletes the Events whose time is up at `now`.
    fn expire(&mut self, now: Instant) {
        while let Some((at, _)) = self.expiring.front()
            && *at <= now
        {
            let (at, key) = self.expiring.pop_front().expect("there is a front");
            if self.expiries.get(&key) == Some(&at) {
                self.remove(&key);
            }
        }
    }

    /// What kube-apiserver's registry of `api` makes of `object`, a write through
    /// `endpoint` of the record `key` (`live`: as it is, for an update; `uid`: the
    /// record's), before it validates it: a Service's status, allocated addresses and
    /// ports ([`services::prepared`]); a new Job's generated selector
    /// ([`batch::selected`]); the others' as written (a workload's strategy came before
    /// its field manager: [`workloads::prepared`]).
    fn prepared(
        &self,
        (api, endpoint): (Api, Endpoint),
        object: Value,
        (live, uid): (Option<&Value>, &str),
        key: &NamespacedName,
    ) -> Result<Value, ApiError> {
        match api {
            Api::Service => {
                let owner = (key.namespace.clone(), key.name.clone());
                services::prepared(object, live, endpoint, &self.services, &owner)
            }
            Api::Job if live.is_none() => Ok(batch::selected(object, uid, &key.name)),
            _ => Ok(object),
        }
    }

    /// The records `filter` selects, in key order.
    fn selected<'s>(&'s self, filter: &'s Filter) -> impl Iterator<Item = (&'s Key, &'s Value)> {
        (self.objects.iter()).filter(|(key, object)| filter.matches(key, object))
    }

    /// When an Event may next expire.
    fn next_expiry(&self) -> Option<Instant> {
        self.expiring.front().map(|(at, _)| *at)
    }
}

impl Records {
    /// No records yet, beside `server`'s objects.
    pub fn new(server: ApiServer) -> Records {
        Records {
            server,
            store: Arc::new(Mutex::new(Store::new())),
        }
    }

    /// The server whose namespaces the records live in.
    pub fn server(&self) -> &ApiServer {
        &self.server
    }

    /// The records' newest resourceVersion.
    pub fn version(&self) -> u64 {
        self.store().resource_version
    }

    /// The records, the Events whose time is up deleted.
    fn store(&self) -> MutexGuard<'_, Store> {
        // Every change is made whole before the lock is let go.
        let mut store = self.store.lock().unwrap_or_else(|e| e.into_inner());
        store.expire(Instant::now());
        store
    }
}

/// The records' routes, their groups' discovery documents among them.
pub fn routes(records: Records) -> Router {
    let mut router = Router::new();
    let kind = records.server.spec().kind;
    for api in Api::ALL.into_iter().filter(|api| api.served_with(kind)) {
        router = resource_routes(router, api);
    }
    for group in GROUPS.into_iter().filter(|group| serves_group(kind, group)) {
        let root = root_of(group);
        let mut resources: Vec<Value> = (in_group(kind, group))
            .flat_map(|api| std::iter::once(resource(api)).chain(subresources(api)))
            .collect();
        // The group's other resources, listed and watched empty (ControllerRevisions
        // beside the workloads).
        resources.extend(crate::empty::listed(kind, group));
        crate::discovery::by_name(&mut resources);
        let list = json!({
            "kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": format!("{group}/v1"), "resources": resources,
        });
        router = router
            .route(
                &format!("/apis/{group}"),
                get(move || async move {
                    let mut named = named_group(group, "v1");
                    named["kind"] = json!("APIGroup");
                    named["apiVersion"] = json!("v1");
                    axum::Json(named)
                })
                .fallback(method_not_allowed),
            )
            .route(
                root,
                get(move || async move { axum::Json(list) }).fallback(method_not_allowed),
            )
            .route(
                &format!("/openapi/v3{root}"),
                get(move || async move { axum::Json(document(kind, group)) })
                    .fallback(method_not_allowed),
            );
    }
    router.with_state(records)
}

/// The routes of `api`'s records: its collections in every namespace and in one, one
/// record, and its status where it has a status subresource; at the cluster's scope,
/// its collection and one record ([`cluster_routes`]).
fn resource_routes(router: Router<Records>, api: Api) -> Router<Records> {
    if !api.namespaced() {
        return cluster_routes(router, api);
    }
    let (root, plural) = (api.root(), api.plural());
    let router = router
        .route(
            &format!("{root}/{plural}"),
            get(move |state, query, headers| list(state, api, None, query, headers))
                .fallback(method_not_allowed),
        )
        .route(
            &format!("{root}/namespaces/{{namespace}}/{plural}"),
            get(move |state, ApiPath(namespace), query, headers| {
                list(state, api, Some(namespace), query, headers)
            })
            .post(move |state, path, query, headers, body| {
                writes::create(state, api, path, query, headers, body)
            })
            .delete(move |state, ApiPath(namespace), query, body| {
                deletes::delete_collection(state, api, namespace, query, body)
            })
            .fallback(method_not_allowed),
        )
        .route(
            &format!("{root}/namespaces/{{namespace}}/{plural}/{{name}}"),
            get(move |state, path, query, headers| read(state, api, path, query, headers))
                .put(move |state, path, query, headers, body| {
                    let through = (api, Endpoint::Object);
                    writes::replace(state, through, path, query, headers, body)
                })
                .patch(move |state, path, query, headers, body| {
                    let through = (api, Endpoint::Object);
                    writes::patch(state, through, path, query, headers, body)
                })
                .delete(move |state, path, query, body| {
                    deletes::delete(state, api, path, query, body)
                })
                .fallback(method_not_allowed),
        );
    let router = match scale::scales(api) {
        true => router.route(
            &format!("{root}/namespaces/{{namespace}}/{plural}/{{name}}/scale"),
            get(move |state, path| scale::get(state, api, path))
                .put(move |state, path, query, headers, body| {
                    scale::replace(state, api, path, query, headers, body)
                })
                .patch(move |state, path, query, headers, body| {
                    scale::patch(state, api, path, query, headers, body)
                })
                .fallback(method_not_allowed),
        ),
        false => router,
    };
    if !api.has_status() {
        return router;
    }
    // A read of the status is the object's, as kube-apiserver's `StatusREST` reads it.
    router.route(
        &format!("{root}/namespaces/{{namespace}}/{plural}/{{name}}/status"),
        get(move |state, path, query, headers| read(state, api, path, query, headers))
            .put(move |state, path, query, headers, body| {
                let through = (api, Endpoint::Status);
                writes::replace(state, through, path, query, headers, body)
            })
            .patch(move |state, path, query, headers, body| {
                let through = (api, Endpoint::Status);
                writes::patch(state, through, path, query, headers, body)
            })
            .fallback(method_not_allowed),
    )
}

/// The routes of a cluster-scoped `api`'s records (ClusterRoles): its collection and
/// one record, kept under the empty namespace.
fn cluster_routes(router: Router<Records>, api: Api) -> Router<Records> {
    let (root, plural) = (api.root(), api.plural());
    let scope = String::new;
    router
        .route(
            &format!("{root}/{plural}"),
            get(move |state, query, headers| list(state, api, None, query, headers))
                .post(move |state, query, headers, body| {
                    let path = ApiPath(scope());
                    writes::create(state, api, path, query, headers, body)
                })
                .delete(move |state, query, body| {
                    deletes::delete_collection(state, api, scope(), query, body)
                })
                .fallback(method_not_allowed),
        )
        .route(
            &format!("{root}/{plural}/{{name}}"),
            get(move |state, ApiPath(name), query, headers| {
                read(state, api, ApiPath((scope(), name)), query, headers)
            })
            .put(move |state, ApiPath(name), query, headers, body| {
                let (through, path) = ((api, Endpoint::Object), ApiPath((scope(), name)));
                writes::replace(state, through, path, query, headers, body)
            })
            .patch(move |state, ApiPath(name), query, headers, body| {
                let (through, path) = ((api, Endpoint::Object), ApiPath((scope(), name)));
                writes::patch(state, through, path, query, headers, body)
            })
            .delete(move |state, ApiPath(name), query, body| {
                deletes::delete(state, api, ApiPath((scope(), name)), query, body)
            })
            .fallback(method_not_allowed),
        )
}

/// Whether `path` is one of the records' a server of `kind` objects keeps (a resource
/// of theirs, or the discovery of a group they serve): what a program writes beside the
/// objects, which `run`'s gate lets through before the program has its objects.
pub fn written_at(kind: ObjectKind, path: &str) -> bool {
    let (group, rest) = match path.strip_prefix("/api/v1/") {
        Some(rest) => ("", rest),
        None => {
            let Some(named) = path.strip_prefix("/apis/") else {
                return false;
            };
            let mut parts = named.splitn(3, '/');
            let group = parts.next().unwrap_or_default();
            match parts.nth(1) {
                Some(rest) if !rest.is_empty() => (group, rest),
                // `/apis/{group}`, `/apis/{group}/v1`.
                _ => return serves_group(kind, group),
            }
        }
    };
    let parts: Vec<&str> = rest.split('/').collect();
    let plural = match parts.as_slice() {
        ["namespaces", _, plural, ..] | [plural, ..] => *plural,
        [] => return false,
    };
    in_group(kind, group).any(|api| api.plural() == plural)
}

/// The resource `api` as its group's `APIResourceList` lists it.
pub fn resource(api: Api) -> Value {
    let mut resource = json!({
        "name": api.plural(), "singularName": api.kind().to_lowercase(),
        "namespaced": api.namespaced(),
        "kind": api.kind(),
        "verbs": super::discovery::WRITTEN_VERBS,
    });
    // kube-apiserver leaves out an empty list (a Lease's, a Job's).
    if !api.short_names().is_empty() {
        resource["shortNames"] = json!(api.short_names());
    }
    if !api.categories().is_empty() {
        resource["categories"] = json!(api.categories());
    }
    resource
}

/// The subresources of `api`, as its group's `APIResourceList` lists them: its scale
/// (`kubectl scale` finds its kind here) and its status (`kubectl get
/// --subresource=status`), where it has them.
fn subresources(api: Api) -> impl Iterator<Item = Value> {
    let verbs = ["get", "patch", "update"];
    let scale = scale::scales(api).then(|| {
        json!({
            "name": format!("{}/scale", api.plural()), "singularName": "", "namespaced": true,
            "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": verbs,
        })
    });
    let status = api.has_status().then(|| {
        json!({
            "name": format!("{}/status", api.plural()), "singularName": "", "namespaced": true,
            "kind": api.kind(), "verbs": verbs,
        })
    });
    scale.into_iter().chain(status)
}

/// The resource `api` as an OpenAPI document describes it.
pub fn described(api: Api) -> Described {
    Described {
        kind: api.kind(),
        plural: api.plural(),
        namespaced: api.namespaced(),
        written: true,
    }
}

/// The OpenAPI v3 document of the records' named `group`, on a server of `kind` objects.
pub fn document(kind: ObjectKind, group: &str) -> Value {
    let resources: Vec<Described> = in_group(kind, group).map(described).collect();
    group_document(group, "v1", root_of(group), &resources)
}

/// A kept record as `api` gives it: in its version, as kube-apiserver answers with a
/// stored object ([`protobuf::as_stored`]: the fields Go writes at their zero, an empty
/// list without `omitempty` as `null`, without those its `omitempty` leaves out).
fn in_version(api: Api, stored: &Value) -> Result<Value, ApiError> {
    protobuf::as_stored(api.out_of_store(stored.clone()))
        .map_err(|e| ApiError::internal(e.to_string()))
}

/// 404 for a record that does not exist.
fn not_found(api: Api, name: &str) -> ApiError {
    ApiError::no_such(api.resource_name(), name)
}

/// `GET {root}/namespaces/{namespace}/{plural}/{name}`.
async fn read(
    State(records): State<Records>,
    api: Api,
    ApiPath((namespace, name)): ApiPath<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let (form, wire) = match Form::of_request(&headers, None, query.as_deref()) {
        Ok((form, wire, _)) => (form, wire),
        Err(refused) => return *refused,
    };
    write::respond(|| {
        let store = records.store();
        let key = (api.stored(), namespace, name);
        let Some(stored) = store.objects.get(&key) else {
            return Err(not_found(api, &key.2));
        };
        let object = in_version(api, stored)?;
        Ok(answer(api, form, wire, vec![object], None))
    })
}

/// `GET {root}/{plural}` (every namespace) and `{root}/namespaces/{namespace}/{plural}`:
/// a LIST, or with `watch` a WATCH.
async fn list(
    State(records): State<Records>,
    api: Api,
    namespace: Option<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let (form, wire, query) = match Form::of_request(&headers, None, query.as_deref()) {
        Ok(request) => request,
        Err(refused) => return *refused,
    };
    let filter = match query
        .validated()
        .and_then(|query| Ok((Filter::new(api, namespace, &query)?, query)))
    {
        Ok((filter, query)) if query.watch => {
            return watch::serve(records, Watched::Record(api), filter, &query, (form, wire));
        }
        Ok((filter, _)) => filter,
        Err(refused) => return refused.into_response(),
    };
    write::respond(|| {
        let store = records.store();
        let objects = (store.selected(&filter))
            .map(|(_, stored)| in_version(api, stored))
            .collect::<Result<Vec<_>, _>>()?;
        let metadata = json!({"resourceVersion": store.resource_version.to_string()});
        Ok(answer(api, form, wire, objects, Some(metadata)))
    })
}

/// One record (`metadata` `None`) or a list of them, in the form and wire asked for.
fn answer(
    api: Api,
    form: Form,
    wire: Wire,
    mut objects: Vec<Value>,
    metadata: Option<Value>,
) -> Response {
    let body = match (form, metadata) {
        (Form::Table(include), metadata) => {
            let cells = |object: &Value, now| api.cells(&api.into_store(object.clone()), now);
            table::of_values(&objects, api.columns(), cells, include, metadata)
        }
        (Form::Metadata, None) => metadata_only(&objects[0]),
        (Form::Metadata, Some(metadata)) => json!({
            "kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
            "metadata": metadata, "items": objects.iter().map(metadata_only).collect::<Vec<_>>(),
        }),
        (Form::Full, None) => objects.swap_remove(0),
        (Form::Full, Some(metadata)) => {
            for object in &mut objects {
                // A list's items leave out what the list says.
                if let Some(fields) = object.as_object_mut() {
                    fields.remove("kind");
                    fields.remove("apiVersion");
                }
            }
            json!({"kind": format!("{}List", api.kind()), "apiVersion": api.api_version(),
                   "metadata": metadata, "items": objects})
        }
    };
    wire.respond(StatusCode::OK, body.to_string().into_bytes())
}

#[cfg(test)]
mod data_tests;
#[cfg(test)]
mod sampled_tests;
#[cfg(test)]
pub(super) mod tests;
#[cfg(test)]
mod watch_tests;
