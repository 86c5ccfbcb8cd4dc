//! Leases, Events, ConfigMaps and Secrets: what a program writes beside the objects it
//! watches, kept so that a controller runs against the built-in apiserver as it runs in
//! a cluster. A controller-runtime manager or client-go's `leaderelection` takes a Lease
//! in `coordination.k8s.io/v1` before it starts its controllers (without one it never
//! asks for the objects at all), and event recorders write Events, in `v1` (client-go's
//! `record`) or `events.k8s.io/v1` (`tools/events`); `kubectl get events`, `kubectl
//! describe` and `kubectl get leases` read them back. ConfigMaps and Secrets are kept
//! where the scenario's objects are of another kind ([`data`]).
//!
//! Served over TCP only ([`super::routes::network_router`]: `serve`, `run`'s loopback
//! server for external variants, crosscheck), as kube-apiserver serves them: create,
//! get, list (label and field selectors), replace (a PUT of a missing one creates it),
//! JSON, merge and strategic-merge patches, server-side apply (which creates a missing
//! one), delete and deletecollection, in JSON or protobuf, as tables for kubectl, each
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
mod data;
mod filter;
mod namespaces;
pub(in crate::apiserver) mod services;
mod watch;

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
pub(in crate::apiserver) use filter::Filter;
use watch::{Change, History};
pub(in crate::apiserver) use watch::{Watched, serve as serve_watch};

use super::ApiServer;
use super::apply;
use super::discovery::{Described, Serving, document as group_document, named_group};
use super::extract::{ApiBody, ApiPath};
use super::form::{Form, Wire};
use super::patch::{self, PatchType};
use super::protobuf;
use super::query::Query;
use super::reviews::REVIEW_GROUPS;
use super::state::EventKind;
use super::status::{ApiError, method_not_allowed, namespace_not_found};
use super::table::{self, metadata_only};
use super::version::NamespacedName;
use super::write::{
    self, BodyWire, DeleteOptions, FieldValidation, WriteOptions, body_wire, decode_as,
    duplicated_fields, unknown_fields,
};
use crate::apiserver::generate;

/// The named groups of the records, in the order `/apis` lists them (kube-apiserver's).
pub const GROUPS: [Api; 2] = [Api::Event, Api::Lease];

/// Over the network: the scenario's objects, the records, the reviews
/// ([`super::reviews`]), the Services there are not ([`services`]), the pods'
/// connect subresources ([`super::connect`]) and evictions ([`super::eviction`]), which
/// discovery lists.
#[derive(Debug)]
pub struct Network;

impl Serving for Network {
    fn groups() -> Vec<Value> {
        // kube-apiserver's order: events.k8s.io, the reviews' groups, coordination.k8s.io.
        let [events, leases] = GROUPS.map(|api| api.group());
        let names = [events].into_iter().chain(REVIEW_GROUPS).chain([leases]);
        names.map(|name| named_group(name, "v1")).collect()
    }

    fn core_resources() -> Vec<Value> {
        let mut resources = vec![resource(Api::CoreEvent), services::resource()];
        resources.extend(super::connect::resources());
        resources.push(super::eviction::resource());
        resources
    }

    fn core_described() -> Vec<Described> {
        vec![described(Api::CoreEvent)]
    }

    fn documents() -> Vec<(&'static str, Value)> {
        GROUPS.map(|api| (&api.root()[1..], document(api))).into()
    }

    const WRITES_NAMESPACES: bool = true;

    fn written_beside(kind: crate::scenario::ObjectKind) -> Vec<&'static str> {
        let written = Api::ALL.into_iter().filter(|api| api.beside(kind));
        written.map(Api::plural).collect()
    }
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
    head: tokio::sync::watch::Sender<u64>,
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
            head: tokio::sync::watch::Sender::new(1),
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
        let (root, plural) = (api.root(), api.plural());
        router = router
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
                    create(state, api, path, query, headers, body)
                })
                .delete(move |state, ApiPath(namespace), query, body| {
                    delete_collection(state, api, namespace, query, body)
                })
                .fallback(method_not_allowed),
            )
            .route(
                &format!("{root}/namespaces/{{namespace}}/{plural}/{{name}}"),
                get(move |state, path, query, headers| read(state, api, path, query, headers))
                    .put(move |state, path, query, headers, body| {
                        replace(state, api, path, query, headers, body)
                    })
                    .patch(move |state, path, query, headers, body| {
                        patch(state, api, path, query, headers, body)
                    })
                    .delete(move |state, path, query, body| delete(state, api, path, query, body))
                    .fallback(method_not_allowed),
            );
    }
    for api in GROUPS {
        let root = api.root();
        router = router
            .route(
                &format!("/apis/{}", api.group()),
                get(move || async move {
                    let mut group = named_group(api.group(), "v1");
                    group["kind"] = json!("APIGroup");
                    group["apiVersion"] = json!("v1");
                    axum::Json(group)
                })
                .fallback(method_not_allowed),
            )
            .route(
                root,
                get(move || async move {
                    axum::Json(json!({
                        "kind": "APIResourceList", "apiVersion": "v1",
                        "groupVersion": api.api_version(), "resources": [resource(api)],
                    }))
                })
                .fallback(method_not_allowed),
            )
            .route(
                &format!("/openapi/v3{root}"),
                get(move || async move { axum::Json(document(api)) }).fallback(method_not_allowed),
            );
    }
    router.with_state(records)
}

/// Whether `path` is one of the records' a server of `kind` objects keeps (their groups',
/// or the core group's Events, ConfigMaps and Secrets): what a program writes beside the
/// objects, which `run`'s gate lets through before the program has its objects.
pub fn written_at(kind: crate::scenario::ObjectKind, path: &str) -> bool {
    if GROUPS
        .iter()
        .any(|api| path.starts_with(&format!("/apis/{}/", api.group())))
    {
        return true;
    }
    let Some(rest) = path.strip_prefix("/api/v1/") else {
        return false;
    };
    let parts: Vec<&str> = rest.split('/').collect();
    let plural = match parts.as_slice() {
        ["namespaces", _, plural, ..] | [plural, ..] => *plural,
        [] => return false,
    };
    let mut core = Api::ALL.into_iter().filter(|api| api.group().is_empty());
    core.any(|api| api.plural() == plural && api.served_with(kind))
}

/// The resource `api` as its group's `APIResourceList` lists it.
pub fn resource(api: Api) -> Value {
    json!({
        "name": api.plural(), "singularName": api.kind().to_lowercase(), "namespaced": true,
        "kind": api.kind(),
        "verbs": super::discovery::WRITTEN_VERBS,
        "shortNames": api.short_names(),
    })
}

/// The resource `api` as an OpenAPI document describes it.
pub fn described(api: Api) -> Described {
    Described {
        kind: api.kind(),
        plural: api.plural(),
        namespaced: true,
        written: true,
    }
}

/// The OpenAPI v3 document of the named group of `api`.
pub fn document(api: Api) -> Value {
    group_document(api.group(), "v1", api.root(), &[described(api)])
}

/// A kept record as `api` gives it: in its version, with the fields Go writes at their
/// zero and without those its `omitempty` leaves out.
fn in_version(api: Api, stored: &Value) -> Result<Value, ApiError> {
    protobuf::with_go_zeros(api.out_of_store(stored.clone()))
        .map_err(|e| ApiError::internal(e.to_string()))
}

/// 404 for a record that does not exist.
fn not_found(api: Api, name: &str) -> ApiError {
    let resource = api.resource_name();
    ApiError::new(
        StatusCode::NOT_FOUND,
        "NotFound",
        format!("{resource} {name:?} not found"),
    )
    .about(name, resource)
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

/// One write's request: its options, its body's wire, the warnings for its answer.
struct Request {
    api: Api,
    options: WriteOptions,
    warnings: Vec<String>,
    wire: Wire,
}

impl Request {
    fn new(api: Api, query: Option<&str>, headers: &HeaderMap) -> Result<Request, ApiError> {
        Ok(Request {
            api,
            options: WriteOptions::parse(query, headers)?,
            warnings: Vec::new(),
            wire: Form::accepted(headers, None).map_or(Wire::Json, |(_, wire)| wire),
        })
    }

    /// A create's or replace's body as this version's object: decoded, keys set twice
    /// and unknown fields dealt with as `fieldValidation` says, through the type.
    fn decoded(&mut self, body: &[u8], wire: BodyWire) -> Result<Value, ApiError> {
        let validation = self.options.field_validation;
        duplicated_fields(body, wire, validation, &mut self.warnings)?;
        let object = decode_as(self.api.api_version(), self.api.kind(), body, wire)?;
        typed(self.api, validation, &mut self.warnings, object)
    }

    /// The answer `object` (kept form) makes, with the request's warnings.
    fn respond(&self, code: StatusCode, stored: &Value) -> Result<Response, ApiError> {
        let mut object = in_version(self.api, stored)?;
        if self.options.dry_run && code == StatusCode::CREATED {
            // Nothing was stored, so there is no version to give.
            object["metadata"]
                .as_object_mut()
                .map(|m| m.remove("resourceVersion"));
        }
        let response = self.wire.respond(code, object.to_string().into_bytes());
        Ok(write::warned(response, &self.warnings))
    }
}

/// `object` through the type of `api`'s version, its unknown fields dealt with as
/// `validation` says, with Go's zero fields.
fn typed(
    api: Api,
    validation: FieldValidation,
    warnings: &mut Vec<String>,
    object: Value,
) -> Result<Value, ApiError> {
    let typed = api.through_type(&object)?;
    unknown_fields(&object, &typed, validation, warnings)?;
    Ok(api.written(typed))
}

impl Records {
    /// Writes the record `key` that `new` makes of the live one (in the request's
    /// version; `None` when there is none), as kube-apiserver writes it: preconditions,
    /// the writer's managedFields (those `new` gives, an apply's, or the update's),
    /// validation, what the server owns, a resourceVersion of the records' own. `creates`
    /// says whether a missing record may be created.
    fn write(
        &self,
        (api, options): (Api, &WriteOptions),
        key: &NamespacedName,
        creates: bool,
        new: impl FnOnce(Option<&Value>) -> Result<(Value, Option<Vec<Value>>), ApiError>,
    ) -> Result<(StatusCode, Value), ApiError> {
        let mut store = self.store();
        let id = (api.stored(), key.namespace.clone(), key.name.clone());
        let kept = store.objects.get(&id).cloned();
        let live = kept
            .as_ref()
            .map(|kept| in_version(api, kept))
            .transpose()?;
        if live.is_none() && !creates {
            return Err(not_found(api, &key.name));
        }
        let (mut object, entries) = new(live.as_ref())?;
        if let Some(live) = &live {
            write::check_preconditions(api.resource_name(), key, &object, live)?;
            if api == Api::Lease && object["metadata"]["resourceVersion"].is_null() {
                // A Lease's strategy allows no unconditional update.
                let why = "must be specified for an update";
                return Err(ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "Invalid",
                    format!(
                        "{} {:?} is invalid: metadata.resourceVersion: Invalid value: 0x0: {why}",
                        api.qualified_kind(),
                        key.name
                    ),
                ));
            }
        }
        let entries = entries.unwrap_or_else(|| {
            let writer = options.writer();
            apply::update_of(&api.typed(), live.as_ref(), &object, writer, &write::now())
        });
        object["metadata"]["managedFields"] = Value::Array(entries);
        let mut stored = protobuf::with_go_zeros(api.into_store(object))
            .map_err(|e| ApiError::internal(e.to_string()))?;
        api.validate(key, &stored, kept.as_ref())?;
        let uid = match kept {
            Some(_) => String::new(),
            None => generate::uid(self.server.spec(), store.created, u32::MAX - 1),
        };
        write::identity(&mut stored, kept.as_ref(), &uid, false);
        let Some(kept) = kept else {
            if !options.dry_run {
                store.created += 1;
                stored = store.put(id, stored, Instant::now());
            }
            return Ok((StatusCode::CREATED, stored));
        };
        stored["metadata"]["resourceVersion"] = kept["metadata"]["resourceVersion"].clone();
        // An update that changes nothing is not written (kube-apiserver's storage skips
        // it): no version, no event, an Event's time to live not restarted.
        if !options.dry_run && stored != kept {
            stored = store.put(id, stored, Instant::now());
        }
        Ok((StatusCode::OK, stored))
    }
}

/// `POST {root}/namespaces/{namespace}/{plural}`.
async fn create(
    State(records): State<Records>,
    api: Api,
    ApiPath(namespace): ApiPath<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> Response {
    write::respond(|| {
        let request = (api, query.as_deref(), &headers, &body[..]);
        records.post_or_put(request, &namespace, None)
    })
}

/// `PUT {root}/namespaces/{namespace}/{plural}/{name}`: creates the record when it is
/// missing, where its kind's strategy allows ([`Api::creates_on_update`]).
async fn replace(
    State(records): State<Records>,
    api: Api,
    ApiPath((namespace, name)): ApiPath<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> Response {
    write::respond(|| {
        let request = (api, query.as_deref(), &headers, &body[..]);
        records.post_or_put(request, &namespace, Some(&name))
    })
}

impl Records {
    /// A create (`name`: `None`, the body names it) or a replace of the record the body
    /// holds, in `namespace`.
    fn post_or_put(
        &self,
        (api, query, headers, body): (Api, Option<&str>, &HeaderMap, &[u8]),
        namespace: &str,
        name: Option<&str>,
    ) -> Result<Response, ApiError> {
        let wire = body_wire(headers)?;
        if !self.server.has_namespace(namespace) {
            return Ok(namespace_not_found(namespace));
        }
        let mut request = Request::new(api, query, headers)?;
        let mut object = request.decoded(body, wire)?;
        let kind = api.qualified_kind();
        let key = write::object_key(kind, namespace, &mut object, name, &self.server)?;
        let creates = name.is_none() || api.creates_on_update();
        let (code, stored) = self.write((api, &request.options), &key, creates, |live| {
            match (live, name) {
                (Some(_), None) => Err(ApiError::new(
                    StatusCode::CONFLICT,
                    "AlreadyExists",
                    format!("{} {:?} already exists", api.resource_name(), key.name),
                )
                .about(&key.name, api.resource_name())),
                _ => Ok((object, None)),
            }
        })?;
        request.respond(code, &stored)
    }
}

/// `PATCH {root}/namespaces/{namespace}/{plural}/{name}`: a JSON, merge or
/// strategic-merge patch of a record there is, or a server-side apply, which creates a
/// missing one.
async fn patch(
    State(records): State<Records>,
    api: Api,
    ApiPath((namespace, name)): ApiPath<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> Response {
    write::respond(|| {
        let patch_type = write::patch_type(&headers)?;
        let mut request = Request::new(api, query.as_deref(), &headers)?;
        let applies = patch_type == PatchType::Apply;
        write::check_patch_options(&request.options, applies)?;
        if applies && !records.server.has_namespace(&namespace) {
            return Ok(namespace_not_found(&namespace));
        }
        let config: Value = match applies {
            true => serde_yaml_ng::from_slice(&body)
                .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?,
            false => Value::Null,
        };
        let key = NamespacedName { namespace, name };
        let options = &request.options;
        let warnings = &mut request.warnings;
        let (code, stored) = records.write((api, options), &key, applies, |live| {
            let (patched, entries) = if applies {
                let typed = api.typed();
                let force = options.force.unwrap_or(false);
                let applier = (options.writer(), force);
                let applied = apply::apply(&typed, live, &config, applier, &write::now())
                    .map_err(|e| write::apply_refused(&typed, &config, e))?;
                (applied.object, Some(applied.managed_fields))
            } else {
                let live = live.expect("a patch but an apply writes only a record there is");
                let patched = patch::apply(patch_type, live, &body).map_err(write::patch_failed)?;
                (patched, None)
            };
            let mut object = typed(api, options.field_validation, warnings, patched)
                .map_err(ApiError::invalid_patch_result)?;
            write::object_key(
                api.qualified_kind(),
                &key.namespace,
                &mut object,
                Some(&key.name),
                &records.server,
            )?;
            Ok((object, entries))
        })?;
        request.respond(code, &stored)
    })
}

/// `DELETE {root}/namespaces/{namespace}/{plural}/{name}`: answered with a `Success`
/// Status naming it, as kube-apiserver answers for kinds without graceful deletion.
async fn delete(
    State(records): State<Records>,
    api: Api,
    ApiPath((namespace, name)): ApiPath<(String, String)>,
    RawQuery(query): RawQuery,
    ApiBody(body): ApiBody,
) -> Response {
    write::respond(|| {
        let options = DeleteOptions::parse(query.as_deref(), &body)?;
        let mut store = records.store();
        let id = (api.stored(), namespace, name);
        let Some(stored) = store.objects.get(&id) else {
            return Err(not_found(api, &id.2));
        };
        options.check_object(api.resource_name(), stored)?;
        let uid = stored["metadata"]["uid"].clone();
        if !options.dry_run {
            store.remove(&id);
        }
        let (kind, group) = (api.plural(), api.group());
        let mut details = json!({"name": id.2, "kind": kind, "uid": uid});
        if !group.is_empty() {
            details["group"] = json!(group);
        }
        let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
                            "status": "Success", "details": details});
        Ok(Wire::Json.respond(StatusCode::OK, status.to_string().into_bytes()))
    })
}

/// `DELETE {root}/namespaces/{namespace}/{plural}`: every record the selectors select,
/// answered with the list of them.
async fn delete_collection(
    State(records): State<Records>,
    api: Api,
    namespace: String,
    RawQuery(query): RawQuery,
    ApiBody(body): ApiBody,
) -> Response {
    write::respond(|| {
        let options = DeleteOptions::parse(query.as_deref(), &body)?;
        let parsed = Query::parse(query.as_deref().unwrap_or_default())?;
        let filter = Filter::new(api, Some(namespace), &parsed)?;
        let mut store = records.store();
        let ids: Vec<Key> = (store.selected(&filter))
            .map(|(key, _)| key.clone())
            .collect();
        let mut gone = Vec::new();
        for id in ids {
            let object = match options.dry_run {
                true => store.objects.get(&id).cloned(),
                false => store.remove(&id),
            };
            gone.extend(object.map(|o| in_version(api, &o)).transpose()?);
        }
        let metadata = json!({"resourceVersion": store.resource_version.to_string()});
        Ok(answer(api, Form::Full, Wire::Json, gone, Some(metadata)))
    })
}

#[cfg(test)]
pub(super) mod tests;
#[cfg(test)]
mod watch_tests;
