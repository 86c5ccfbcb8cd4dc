//! Writes over HTTP, for `serve`: create (POST), replace (PUT), patch (PATCH), delete and
//! deletecollection ([`mod@delete`]), with kube-apiserver's checks and the fields the server
//! owns.
//!
//! What a client sends is decoded into the k8s-openapi type, which rejects wrong field
//! types and drops unknown fields; `fieldValidation` says whether those are refused
//! (`Strict`, what kubectl sends), reported in `Warning` headers (`Warn`, the default) or
//! ignored, as in kube-apiserver; then defaulted as kube-apiserver defaults it, with Go's
//! zero values where the client left fields out ([`defaults`], [`crate::protobuf`]).
//! A new or updated pod gets what the default admission plugins give it. The server then
//! sets what clients cannot: UID, creationTimestamp, generation, a Pod's or a
//! Deployment's status on create, and a managedFields entry for the writer
//! (`fieldManager`, or the User-Agent's product name). Writes to an object keep its
//! status; writes to its status subresource ([`ToStatus`], [`status`]) keep its spec. No
//! kind here allows create-on-update, so a PUT or PATCH of a missing object is a 404.
//!
//! `{root}` in the paths below is the group's ([`Group::ROOT`]): `/api/v1` or
//! `/apis/apps/v1`.

mod body;
pub(crate) mod data;
mod defaults;
pub(crate) use defaults::{apply as defaulted, template as template_defaulted};
mod delete;
mod options;
pub(crate) mod pipeline;
pub mod scale;
mod server_fields;
mod status;
mod validate;

use std::convert::Infallible;

use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::apply;
use crate::extract::{ApiBody, ApiPath};
use crate::form::{Form, Wire, object_response};
use crate::group::Group;
use crate::patch::{self, PatchError, PatchType};
use crate::protobuf;
use crate::status::{ApiError, namespace_not_found};
use crate::version::{NamespacedName, Version};
use crate::{ApiServer, Removal};
use body::normalize;
pub(crate) use body::{
    BodyWire, FieldValidation, body_wire, decode_as, duplicated_fields, through, unknown_fields,
    unsupported_media_type, without_unset_selector,
};
pub(crate) use delete::empty_namespace;
pub(crate) use delete::{
    DeleteStrategy, Deleted, GcPolicy, collected, deleted_status, emptied, evict, gc_finalizers,
    now as now_seconds, plan, without_gc_finalizers,
};
pub use delete::{delete, delete_cluster, delete_collection, delete_collection_cluster};
pub(crate) use options::{DeleteOptions, WriteOptions, check_patch_options};
use pipeline::{Change, Finds, Live};
use scenario::ObjectKind;
pub use server_fields::Endpoint;
pub(crate) use server_fields::{identity, now};
pub(crate) use validate::{
    Causes, check_preconditions, deletion_update, deployment_status, label_named_metadata,
    metadata, metadata_but_name, object_key, pod_spec, selects, workload_spec,
};

/// `POST {root}/{resource}`: a cluster-scoped object (an empty namespace below stands
/// for the cluster's scope).
pub async fn create_cluster<G: Group>(
    State(server): State<ApiServer>,
    ApiPath(resource): ApiPath<String>,
    query: RawQuery,
    headers: HeaderMap,
    body: ApiBody,
) -> Response {
    create::<G>(
        State(server),
        ApiPath((String::new(), resource)),
        query,
        headers,
        body,
    )
    .await
}

/// `PUT {root}/{resource}/{name}` (and `.../status` for [`ToStatus`]).
pub async fn replace_cluster<G: Group, E: Endpointed>(
    server: State<ApiServer>,
    ApiPath((resource, name)): ApiPath<(String, String)>,
    query: RawQuery,
    headers: HeaderMap,
    body: ApiBody,
) -> Response {
    if let Some(missing) = no_cluster_object(G::kind(server.spec().kind, &resource)) {
        return missing;
    }
    let path = ApiPath((String::new(), resource, name));
    replace::<G, E>(server, path, query, headers, body).await
}

/// `PATCH {root}/{resource}/{name}` (and `.../status` for [`ToStatus`]).
pub async fn patch_cluster<G: Group, E: Endpointed>(
    server: State<ApiServer>,
    ApiPath((resource, name)): ApiPath<(String, String)>,
    query: RawQuery,
    headers: HeaderMap,
    body: ApiBody,
) -> Response {
    if let Some(missing) = no_cluster_object(G::kind(server.spec().kind, &resource)) {
        return missing;
    }
    let path = ApiPath((String::new(), resource, name));
    patch::<G, E>(server, path, query, headers, body).await
}

/// The 404 a write into `namespace` gets when the server has no such namespace; none for
/// one it has, or for a cluster-scoped object (no namespace).
fn unknown_namespace(server: &ApiServer, namespace: &str) -> Option<Response> {
    (!namespace.is_empty() && !server.has_namespace(namespace))
        .then(|| namespace_not_found(namespace))
}

/// `POST {root}/namespaces/{namespace}/{resource}`.
pub async fn create<G: Group>(
    State(server): State<ApiServer>,
    ApiPath((namespace, resource)): ApiPath<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> Response {
    offloaded(body.len(), move || {
        respond(|| {
            let wire = body_wire(&headers)?;
            if let Some(refused) = unknown_namespace(&server, &namespace) {
                return Ok(refused);
            }
            let mut write = Write::new::<G>(
                &server,
                (&resource, Endpoint::Object),
                &namespace,
                query.as_deref(),
                &headers,
            )?;
            let object = write.decoded(&body, wire)?;
            // Admitted before its name is generated: a refusal names what the client gave.
            server.admit_create(write.kind.resource_name(), &namespace, &object)?;
            let (key, object) = write.received(object, None)?;
            let response = write.update(&key, Finds::New, |_, _| Ok(object))?;
            Ok(write.respond(response))
        })
    })
    .await
}

/// `PUT {root}/namespaces/{namespace}/{resource}/{name}` (and `.../status` for
/// [`ToStatus`]): the body replaces what the endpoint writes.
pub async fn replace<G: Group, E: Endpointed>(
    State(server): State<ApiServer>,
    ApiPath((namespace, resource, name)): ApiPath<(String, String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> Response {
    offloaded(body.len(), move || {
        respond(|| {
            let wire = body_wire(&headers)?;
            let mut write = Write::new::<G>(
                &server,
                (&resource, E::ENDPOINT),
                &namespace,
                query.as_deref(),
                &headers,
            )?;
            let object = write.decoded(&body, wire)?;
            let (key, object) = write.received(object, Some(&name))?;
            let response = write.update(&key, Finds::Live, |_, _| Ok(object))?;
            Ok(write.respond(response))
        })
    })
    .await
}

/// `PATCH {root}/namespaces/{namespace}/{resource}/{name}` (and `.../status` for
/// [`ToStatus`]): the patch applies to the whole object, and what the endpoint does not
/// write is then kept as it was.
pub async fn patch<G: Group, E: Endpointed>(
    State(server): State<ApiServer>,
    ApiPath((namespace, resource, name)): ApiPath<(String, String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> Response {
    offloaded(body.len(), move || respond(|| {
        let mut write = Write::new::<G>(
            &server,
            (&resource, E::ENDPOINT),
            &namespace,
            query.as_deref(),
            &headers,
        )?;
        let patch_type = patch_type(&headers)?;
        check_patch_options(&write.options, patch_type == PatchType::Apply)?;
        if patch_type == PatchType::StrategicMerge
            && matches!(apply::Shape::of(write.kind), apply::Shape::Deduced)
        {
            // Strategic merge needs the Go type's patch strategies, which a kind of
            // Kubernetes' own has in its schema; kube-apiserver refuses it for a custom
            // resource alike.
            return Err(unsupported_media_type(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
            ));
        }
        let key = NamespacedName {
            namespace: namespace.clone(),
            name: name.clone(),
        };
        if patch_type == PatchType::Apply {
            let response = write.apply(&key, &body)?;
            return Ok(write.respond(response));
        }
        let response = write.update(&key, Finds::Live, |write, current| {
            let current = current.ok_or_else(|| ApiError::not_found(write.kind, &key.name))?;
            let shape = apply::Shape::of(write.kind);
            let patched = patch::apply(patch_type, current, &body, shape).map_err(patch_failed)?;
            let object = write
                .normalized(patched)
                .map_err(ApiError::invalid_patch_result)?;
            Ok(write.keyed(object, Some(&name))?.1)
        })?;
        Ok(write.respond(response))
    }))
    .await
}

/// The endpoint a write route writes through, as a type (the routes name it as they name
/// the group): [`ToObject`] or [`ToStatus`].
pub trait Endpointed: Send + Sync + 'static {
    const ENDPOINT: Endpoint;
}

/// The object's own path: the whole object but its status, where it has a status
/// subresource.
#[derive(Debug)]
pub struct ToObject;

impl Endpointed for ToObject {
    const ENDPOINT: Endpoint = Endpoint::Object;
}

/// The status subresource (`.../{name}/status`): the status and metadata, not the spec
/// ([`status`]).
#[derive(Debug)]
pub struct ToStatus;

impl Endpointed for ToStatus {
    const ENDPOINT: Endpoint = Endpoint::Status;
}

/// The patch a PATCH's Content-Type names: 415 for any other media type (and for an
/// apply in CBOR, which this server does not read).
pub(crate) fn patch_type(headers: &HeaderMap) -> Result<PatchType, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    PatchType::from_content_type(content_type).ok_or_else(|| {
        unsupported_media_type(
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json",
        )
    })
}

/// An apply's refusal, as kube-apiserver answers it: a configuration that does not fit
/// the schema of `typed` is a 500 there, naming the configuration's namespace and name.
pub(crate) fn apply_refused(
    typed: &apply::Typed<'_>,
    config: &Value,
    error: apply::ApplyError,
) -> ApiError {
    match error {
        apply::ApplyError::BadRequest(message) => ApiError::bad_request(message),
        apply::ApplyError::Typed(why) => {
            let meta = |field: &str| config["metadata"][field].as_str().unwrap_or_default();
            // Go's GroupVersionKind: `/v1, Kind=Pod` in the core group.
            let (group, version) =
                (typed.api_version.rsplit_once('/')).unwrap_or(("", typed.api_version));
            ApiError::internal(format!(
                "failed to create typed patch object ({}/{}; {group}/{version}, Kind={}): {why}",
                meta("namespace"),
                meta("name"),
                typed.kind
            ))
        }
        apply::ApplyError::Conflict { message, causes } => {
            let causes = causes
                .into_iter()
                .map(|(message, field)| ("FieldManagerConflict", message, field))
                .collect();
            ApiError::new(StatusCode::CONFLICT, "Conflict", message).with_causes(causes)
        }
    }
}

/// A patch that could not be applied, as kube-apiserver answers it.
pub(crate) fn patch_failed(error: PatchError) -> ApiError {
    match error {
        PatchError::Malformed(m) => ApiError::bad_request(m),
        PatchError::DoesNotApply(m) => {
            ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "Invalid", m)
        }
        PatchError::TooLarge(m) => {
            ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "RequestEntityTooLarge", m)
        }
    }
}

/// Why a write to the state stored nothing.
enum Stop {
    Refused(ApiError),
    /// It emptied the finalizers of an object being deleted: this is the object it made,
    /// and the object is to be deleted.
    Emptied(Value),
    /// It changed nothing of this live version.
    Unchanged(Version),
}

impl Stop {
    /// The body the state stores of `change`, the live object being `live`, or why it
    /// stores none.
    fn unless_stored(change: Change, live: Option<Version>) -> Result<Value, Stop> {
        match (change, live) {
            (Change::Delete(object), _) => Err(Stop::Emptied(object)),
            (Change::Unchanged(_), Some(live)) => Err(Stop::Unchanged(live)),
            (Change::Create(object) | Change::Update(object) | Change::Unchanged(object), _) => {
                Ok(object)
            }
        }
    }
}

impl From<ApiError> for Stop {
    fn from(error: ApiError) -> Stop {
        Stop::Refused(error)
    }
}

/// Runs a handler whose errors are `Status` responses.
pub(crate) fn respond(handler: impl FnOnce() -> Result<Response, ApiError>) -> Response {
    handler().unwrap_or_else(ApiError::into_response)
}

/// A body from which a write's work leaves the server's thread.
const OFFLOADED_BODY_BYTES: usize = 256 * 1024;

/// Does a write's `work`: on the server's own thread for a body under
/// [`OFFLOADED_BODY_BYTES`], and for a larger one on a thread of its own, so that the
/// requests beside it (`/readyz`, the watches) are not held while a 3 MiB patch of a
/// pod's 90,000 containers is merged, defaulted, validated and tracked (seconds: the work
/// is linear in the list, but a list that long is slow to walk however it is walked).
async fn offloaded(size: usize, work: impl FnOnce() -> Response + Send + 'static) -> Response {
    if size < OFFLOADED_BODY_BYTES {
        return work();
    }
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalError",
            format!("the write failed: {e}"),
        )
        .into_response()
    })
}

/// One create, replace or patch: the kind it writes, where, through which endpoint, its
/// options, and the warnings for the response.
struct Write<'a> {
    server: &'a ApiServer,
    kind: ObjectKind,
    namespace: &'a str,
    endpoint: Endpoint,
    options: WriteOptions,
    /// Whether the write is a server-side apply, whose body is a configuration that
    /// creates the object when it is missing, and whose managedFields are the apply's.
    applies: bool,
    warnings: Vec<String>,
    /// The wire of the answer, as `Accept` asks (JSON when it names nothing written here).
    wire: Wire,
}

impl<'a> Write<'a> {
    /// A write to `resource` through `endpoint`: the status of a kind without one (a
    /// ConfigMap's) is a path kube-apiserver does not have (404).
    fn new<G: Group>(
        server: &'a ApiServer,
        (resource, endpoint): (&str, Endpoint),
        namespace: &'a str,
        query: Option<&str>,
        headers: &HeaderMap,
    ) -> Result<Write<'a>, ApiError> {
        let kind = G::kind(server.spec().kind, resource)
            .filter(|k| endpoint == Endpoint::Object || k.has_status());
        Ok(Write {
            server,
            kind: scoped(writable(server, kind)?, namespace)?,
            namespace,
            endpoint,
            options: WriteOptions::parse(query, headers)?,
            applies: false,
            warnings: Vec::new(),
            wire: Form::accepted(headers, kind).map_or(Wire::Json, |(_, wire)| wire),
        })
    }

    /// A create's or replace's body as JSON ([`pipeline::decoded`]).
    fn decoded(&mut self, body: &[u8], wire: BodyWire) -> Result<Value, ApiError> {
        let validation = self.options.field_validation;
        pipeline::decoded(&self.kind, body, wire, (validation, &mut self.warnings))
    }

    /// The object a client sent (or a patch made), as the type has it, with its key
    /// settled against the URL.
    fn received(
        &mut self,
        object: Value,
        url_name: Option<&str>,
    ) -> Result<(NamespacedName, Value), ApiError> {
        let object = self.normalized(object)?;
        self.keyed(object, url_name)
    }

    /// `object` through the type (field types checked, unknown fields dropped).
    fn normalized(&mut self, object: Value) -> Result<Value, ApiError> {
        let validation = self.options.field_validation;
        pipeline::Kind::normalized(&self.kind, object, validation, &mut self.warnings)
    }

    /// A normalized object with its key settled against the URL.
    fn keyed(
        &mut self,
        mut object: Value,
        url_name: Option<&str>,
    ) -> Result<(NamespacedName, Value), ApiError> {
        let key = object_key(
            self.kind.qualified_kind(),
            self.namespace,
            &mut object,
            url_name,
            self.server,
        )?;
        Ok((key, object))
    }

    /// A server-side apply of the configuration `body` (YAML or JSON) to the object
    /// `key`, which it creates when it is missing (through the object's path only).
    fn apply(&mut self, key: &NamespacedName, body: &[u8]) -> Result<Response, ApiError> {
        let config: Value = serde_yaml_ng::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
        if self.endpoint == Endpoint::Object
            && let Some(refused) = unknown_namespace(self.server, &key.namespace)
        {
            return Ok(refused);
        }
        self.applies = true;
        let now = server_fields::now();
        let typed = apply::Typed::of(self.kind);
        let finds = match self.endpoint {
            Endpoint::Object => Finds::Either,
            Endpoint::Status => Finds::Live,
        };
        self.update(key, finds, |write, current| {
            let applier = apply::Writer {
                manager: &write.options.field_manager,
                subresource: write.endpoint.subresource(),
            };
            let force = write.options.force.unwrap_or(false);
            let applied = apply::apply(&typed, current, &config, (applier, force), &now)
                .map_err(|e| apply_refused(&typed, &config, e))?;
            let mut object = applied.object;
            object["metadata"]["managedFields"] = Value::Array(applied.managed_fields);
            let object = write
                .normalized(object)
                .map_err(ApiError::invalid_patch_result)?;
            Ok(write.keyed(object, Some(&key.name))?.1)
        })
    }

    /// Writes the object `key` that `new_body` makes of its current JSON (`None`: there
    /// is none, and the write creates it) through the one write pipeline
    /// ([`pipeline::written`]), finding what `finds` says. An update that empties the finalizers
    /// of an object being deleted deletes it (as stored: its DELETED event still lists
    /// them) and answers with the object it made.
    fn update(
        &mut self,
        key: &NamespacedName,
        finds: Finds,
        new_body: impl FnOnce(&mut Self, Option<&Value>) -> Result<Value, ApiError>,
    ) -> Result<Response, ApiError> {
        let kind = self.kind;
        let generator = self.server.generator().clone();
        let server = self.server;
        let dry_run = self.options.dry_run;
        let manager = self.options.field_manager.clone();
        let target = pipeline::Target {
            server,
            key,
            finds,
            endpoint: self.endpoint,
            writer: apply::Writer {
                manager: &manager,
                subresource: self.endpoint.subresource(),
            },
        };
        let mut created = false;
        let written = server.write(key, dry_run, |current, uid| -> Result<Value, Stop> {
            created = current.is_none();
            let version = current.cloned();
            let current = current.map(|c| c.to_value(&generator));
            let live = current.as_ref().map(Live::same);
            let change = pipeline::written(&kind, target, (live, uid), |live| {
                let mut object = new_body(self, live)?;
                // An apply's managedFields are made with its object.
                let entries = match self.applies {
                    true => match object["metadata"]["managedFields"].take() {
                        Value::Array(entries) => Some(entries),
                        _ => Some(Vec::new()),
                    },
                    false => None,
                };
                Ok((object, entries))
            })?;
            Stop::unless_stored(change, version)
        });
        let version = match written {
            Ok(version) | Err(Stop::Unchanged(version)) => version,
            Err(Stop::Refused(error)) => return Err(error),
            Err(Stop::Emptied(object)) => {
                if !dry_run {
                    let Ok(_) = server.delete_named(&key.namespace, &key.name, false, |_| {
                        Ok::<_, Infallible>(Removal::Delete)
                    });
                }
                let json = object.to_string().into_bytes();
                return Ok(self.wire.respond(StatusCode::OK, json));
            }
        };
        if created && dry_run {
            return Ok(dry_created(&version.to_value(&generator), self.wire));
        }
        let code = match created {
            true => StatusCode::CREATED,
            false => StatusCode::OK,
        };
        Ok(object_response(code, &generator, &version, self.wire))
    }

    /// `response` with the write's warnings ([`warned`]).
    fn respond(&self, response: Response) -> Response {
        warned(response, &self.warnings)
    }
}

/// The scenario's kind, generated or sampled, as a write meets it.
impl pipeline::Kind for ObjectKind {
    fn resource_name(&self) -> &'static str {
        ObjectKind::resource_name(*self)
    }

    fn type_meta(&self) -> (&str, &str) {
        (self.api_version(), self.as_str())
    }

    fn typed(&self) -> apply::Typed<'_> {
        apply::Typed::of(*self)
    }

    fn reads_protobuf(&self) -> bool {
        protobuf::serves(*self)
    }

    fn normalized(
        &self,
        object: Value,
        validation: FieldValidation,
        warnings: &mut Vec<String>,
    ) -> Result<Value, ApiError> {
        normalize(*self, object, validation, warnings)
    }
}

/// The scenario's kind's registry: the Pod admission plugins' defaults, each kind's status
/// strategy, its validation, and the server's fields ([`server_fields`]).
impl pipeline::Registry for ObjectKind {
    type Kind = ObjectKind;

    fn kind(&self) -> &ObjectKind {
        self
    }

    /// A create's deletion fields are cleared before the field manager sees them.
    fn reset(&self, mut object: Value, live: Option<&Value>, _: Endpoint) -> Value {
        if live.is_none()
            && let Some(meta) = object["metadata"].as_object_mut()
        {
            for cleared in ["deletionTimestamp", "deletionGracePeriodSeconds"] {
                meta.remove(cleared);
            }
        }
        object
    }

    fn prepared(
        &self,
        mut object: Value,
        live: Option<Live<'_>>,
        _: (&NamespacedName, &str),
        endpoint: Endpoint,
    ) -> Result<Value, ApiError> {
        let live = live.map(|live| live.kept);
        Ok(match (endpoint, live) {
            (Endpoint::Status, Some(live)) => status::prepared(*self, object, live),
            _ => {
                defaults::admit(*self, &mut object, live);
                object
            }
        })
    }

    fn validate(
        &self,
        key: &NamespacedName,
        (object, kept): (&Value, Option<&Value>),
        endpoint: Endpoint,
    ) -> Result<(), ApiError> {
        validate::object(*self, key, (object, kept), endpoint)?;
        match kept {
            Some(kept) => validate::update(*self, key, object, kept, endpoint),
            None => Ok(()),
        }
    }

    fn finish(&self, object: Value, kept: Option<&Value>, uid: &str, endpoint: Endpoint) -> Value {
        server_fields::finish(*self, object, kept, uid, endpoint)
    }
}

/// `response` with one `Warning: 299` header per warning, as kube-apiserver sends them.
pub(crate) fn warned(mut response: Response, warnings: &[String]) -> Response {
    for w in warnings {
        let value = format!("299 - {w:?}");
        if let Ok(value) = header::HeaderValue::from_str(&value) {
            response.headers_mut().append(header::WARNING, value);
        }
    }
    response
}

/// The answer to a create that stored nothing (`dryRun=All`): the object it would have
/// made, without a resourceVersion, as there is none to give.
fn dry_created(object: &Value, wire: Wire) -> Response {
    let mut object = object.clone();
    if let Some(meta) = object["metadata"].as_object_mut() {
        meta.remove("resourceVersion");
    }
    wire.respond(StatusCode::CREATED, object.to_string().into_bytes())
}

/// 404 for a path to one object at the cluster's scope of a kind that has none there (a
/// namespaced kind's cluster path is only its collection, as on kube-apiserver).
fn no_cluster_object(kind: Option<ObjectKind>) -> Option<Response> {
    kind.is_none_or(ObjectKind::namespaced)
        .then(|| ApiError::unknown_resource().into_response())
}

/// `kind`, when a write to it in `namespace` (empty: at the cluster's scope) can exist: a
/// cluster-scoped kind has no namespaced path (404, as kube-apiserver), a namespaced
/// kind's cluster path only lists and watches (405).
fn scoped(kind: ObjectKind, namespace: &str) -> Result<ObjectKind, ApiError> {
    match (kind.namespaced(), namespace.is_empty()) {
        (false, false) => Err(ApiError::unknown_resource()),
        (true, true) => Err(ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource".to_owned(),
        )),
        _ => Ok(kind),
    }
}

/// The kind a path names (`None`: none), when this server holds it: the other kinds stay
/// empty.
fn writable(server: &ApiServer, kind: Option<ObjectKind>) -> Result<ObjectKind, ApiError> {
    let Some(kind) = kind else {
        return Err(ApiError::unknown_resource());
    };
    if kind != server.spec().kind {
        return Err(ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            format!(
                "this server holds {} (the scenario's objects.kind); {} are read-only and empty",
                server.spec().kind.plural(),
                kind.plural()
            ),
        ));
    }
    Ok(kind)
}

#[cfg(test)]
mod delete_tests;
#[cfg(test)]
mod pod_update_tests;
#[cfg(test)]
mod size_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod zero_tests;
