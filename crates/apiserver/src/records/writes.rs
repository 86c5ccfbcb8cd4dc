//! The records' writes: create, replace (which may create), patch and server-side apply,
//! of the object or of its status where it has a status subresource, each through
//! [`Records::write`], which writes one record as kube-apiserver's registry does (their
//! deletes are [`super::deletes`]).

use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::{Api, Records, Store, in_version, not_found};
use crate::apply;
use crate::extract::{ApiBody, ApiPath};
use crate::form::{Form, Wire};
use crate::generate;
use crate::patch::{self, PatchType};
use crate::protobuf;
use crate::status::{ApiError, namespace_not_found};
use crate::version::NamespacedName;
use crate::write::pipeline::{self, Change, Finds, Kind as _, Live};
use crate::write::{
    self, BodyWire, Endpoint, FieldValidation, WriteOptions, body_wire, unknown_fields,
};

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

    /// A create's or replace's body as this version's object ([`pipeline::decoded`]),
    /// through the type.
    fn decoded(&mut self, body: &[u8], wire: BodyWire) -> Result<Value, ApiError> {
        let validation = self.options.field_validation;
        let object = pipeline::decoded(&self.api, body, wire, (validation, &mut self.warnings))?;
        self.api.normalized(object, validation, &mut self.warnings)
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

/// A record's resource in the version a request names, as a write meets it.
impl pipeline::Kind for Api {
    fn resource_name(&self) -> &'static str {
        Api::resource_name(*self)
    }

    fn type_meta(&self) -> (&str, &str) {
        (self.api_version(), Api::kind(*self))
    }

    fn typed(&self) -> apply::Typed<'_> {
        Api::typed(*self)
    }

    /// Through the type of this version, with what its registry defaults.
    fn normalized(
        &self,
        object: Value,
        validation: FieldValidation,
        warnings: &mut Vec<String>,
    ) -> Result<Value, ApiError> {
        let typed = self.through_type(&object)?;
        unknown_fields(&object, &typed, validation, warnings)?;
        Ok(self.written(typed))
    }
}

/// A record's registry: what its kind's strategy in kube-apiserver does to a write, with
/// the records' store at hand (a Service's cluster IP is allocated there).
struct Registered<'s> {
    api: Api,
    store: &'s Store,
}

impl pipeline::Registry for Registered<'_> {
    type Kind = Api;

    fn kind(&self) -> &Api {
        &self.api
    }

    /// A Lease's resourceVersion: its strategy allows no unconditional update.
    fn admit_update(
        &self,
        key: &NamespacedName,
        object: &Value,
        _: &Value,
    ) -> Result<(), ApiError> {
        let api = self.api;
        if api != Api::Lease || !object["metadata"]["resourceVersion"].is_null() {
            return Ok(());
        }
        let why = "must be specified for an update";
        Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Invalid",
            format!(
                "{} {:?} is invalid: metadata.resourceVersion: Invalid value: 0x0: {why}",
                api.qualified_kind(),
                key.name
            ),
        ))
    }

    /// A workload's or a Job's resets, as kube-apiserver's reset fields: a status
    /// write's spec and a Deployment's labels are nobody's change.
    fn reset(&self, object: Value, live: Option<&Value>, endpoint: Endpoint) -> Value {
        match self.api.is_controlled() {
            true => super::workloads::prepared(self.api, object, live, endpoint),
            false => object,
        }
    }

    /// What its registry makes of it ([`Store::prepared`]), in the form it is kept in.
    /// A new record's UID is the handler's before the registry sees it: a Job's
    /// generated selector is checked against it.
    fn prepared(
        &self,
        object: Value,
        live: Option<Live<'_>>,
        (key, uid): (&NamespacedName, &str),
        endpoint: Endpoint,
    ) -> Result<Value, ApiError> {
        let api = self.api;
        let seen = live.map(|live| live.seen);
        let object = self
            .store
            .prepared((api, endpoint), object, (seen, uid), key)?;
        let mut stored = protobuf::as_stored(api.into_store(object))
            .map_err(|e| ApiError::internal(e.to_string()))?;
        if live.is_none() {
            stored["metadata"]["uid"] = json!(uid);
        }
        Ok(stored)
    }

    fn validate(
        &self,
        key: &NamespacedName,
        stored: (&Value, Option<&Value>),
        endpoint: Endpoint,
    ) -> Result<(), ApiError> {
        self.api.validate(key, stored, endpoint)
    }

    fn finish(&self, mut stored: Value, kept: Option<&Value>, uid: &str, _: Endpoint) -> Value {
        let api = self.api;
        write::identity(&mut stored, kept, uid, api.is_controlled());
        if api.is_controlled() {
            super::workloads::finished(api, &mut stored, kept);
            super::batch::finished(api, &mut stored);
        }
        stored
    }
}

impl Records {
    /// Writes the record `key` that `new` makes of the live one (in the request's
    /// version; `None` when there is none) through `endpoint`, by the one write pipeline
    /// ([`pipeline::written`]) with the record's registry, and keeps it with a
    /// resourceVersion of the records' own, finding what `finds` says.
    pub(super) fn write(
        &self,
        (api, options, endpoint): (Api, &WriteOptions, Endpoint),
        key: &NamespacedName,
        finds: Finds,
        new: impl FnOnce(Option<&Value>) -> Result<pipeline::Made, ApiError>,
    ) -> Result<(StatusCode, Value), ApiError> {
        let mut store = self.store();
        let id = (api.stored(), key.namespace.clone(), key.name.clone());
        let kept = store.objects.get(&id).cloned();
        let seen = kept
            .as_ref()
            .map(|kept| in_version(api, kept))
            .transpose()?;
        let uid = match &kept {
            Some(kept) => kept["metadata"]["uid"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            None => generate::uid(self.server.spec(), store.created, u32::MAX - 1),
        };
        let live = (seen.as_ref().zip(kept.as_ref())).map(|(seen, kept)| Live { seen, kept });
        let target = pipeline::Target {
            server: &self.server,
            key,
            finds,
            endpoint,
            writer: options.writer_through(endpoint),
        };
        let registry = Registered { api, store: &store };
        let change = pipeline::written(&registry, target, (live, &uid), new)?;
        let dry_run = options.dry_run;
        let stored = match change {
            Change::Create(mut stored) => {
                if !dry_run {
                    store.created += 1;
                    stored = store.put(id, stored, Instant::now());
                }
                return Ok((StatusCode::CREATED, stored));
            }
            Change::Update(stored) if !dry_run => store.put(id, stored, Instant::now()),
            Change::Delete(stored) => {
                if !dry_run {
                    store.remove(&id);
                }
                stored
            }
            Change::Update(stored) | Change::Unchanged(stored) => stored,
        };
        Ok((StatusCode::OK, stored))
    }
}

/// `POST {root}/namespaces/{namespace}/{plural}`.
pub(super) async fn create(
    State(records): State<Records>,
    api: Api,
    ApiPath(namespace): ApiPath<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> Response {
    write::respond(|| {
        let request = (
            (api, Endpoint::Object),
            query.as_deref(),
            &headers,
            &body[..],
        );
        records.post_or_put(request, &namespace, None)
    })
}

/// `PUT {root}/namespaces/{namespace}/{plural}/{name}` (and `.../{name}/status`):
/// creates the record when it is missing, where its kind's strategy allows
/// ([`Api::creates_on_update`]) and the write is to the object.
pub(super) async fn replace(
    State(records): State<Records>,
    api: (Api, Endpoint),
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
        ((api, endpoint), query, headers, body): ((Api, Endpoint), Option<&str>, &HeaderMap, &[u8]),
        namespace: &str,
        name: Option<&str>,
    ) -> Result<Response, ApiError> {
        let wire = body_wire(headers)?;
        // A record at the cluster's scope is kept under no namespace.
        if api.namespaced() && !self.server.has_namespace(namespace) {
            return Ok(namespace_not_found(namespace));
        }
        let mut request = Request::new(api, query, headers)?;
        let mut object = request.decoded(body, wire)?;
        // Admitted before its name is generated: a refusal names what the client gave.
        (self.server).admit_create(api.resource_name(), namespace, &object)?;
        let kind = api.qualified_kind();
        let key = write::object_key(kind, namespace, &mut object, name, &self.server)?;
        let finds = match name {
            None => Finds::New,
            Some(_) if api.creates_on_update() && endpoint == Endpoint::Object => Finds::Either,
            Some(_) => Finds::Live,
        };
        let through = (api, &request.options, endpoint);
        let (code, stored) = self.write(through, &key, finds, |_| Ok((object, None)))?;
        request.respond(code, &stored)
    }
}

/// `PATCH {root}/namespaces/{namespace}/{plural}/{name}` (and `.../{name}/status`): a
/// JSON, merge or strategic-merge patch of a record there is, or a server-side apply,
/// which creates a missing one through the object.
pub(super) async fn patch(
    State(records): State<Records>,
    (api, endpoint): (Api, Endpoint),
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
        if applies && api.namespaced() && !records.server.has_namespace(&namespace) {
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
        let finds = match applies && endpoint == Endpoint::Object {
            true => Finds::Either,
            false => Finds::Live,
        };
        let (code, stored) = records.write((api, options, endpoint), &key, finds, |live| {
            let (patched, entries) = if applies {
                let typed = api.typed();
                let force = options.force.unwrap_or(false);
                let applier = (options.writer_through(endpoint), force);
                let applied = apply::apply(&typed, live, &config, applier, &write::now())
                    .map_err(|e| write::apply_refused(&typed, &config, e))?;
                (applied.object, Some(applied.managed_fields))
            } else {
                let live = live.ok_or_else(|| not_found(api, &key.name))?;
                let shape = api.typed().shape;
                let patched =
                    patch::apply(patch_type, live, &body, shape).map_err(write::patch_failed)?;
                (patched, None)
            };
            let mut object = (api.normalized(patched, options.field_validation, warnings))
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
