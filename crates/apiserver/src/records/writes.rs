//! The records' writes: create, replace (which may create), patch and server-side apply,
//! of the object or of its status where it has a status subresource, each through
//! [`Records::write`], which writes one record as kube-apiserver's registry does (their
//! deletes are [`super::deletes`]).

use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::{Api, Records, in_version, not_found};
use crate::apply;
use crate::extract::{ApiBody, ApiPath};
use crate::form::{Form, Wire};
use crate::generate;
use crate::patch::{self, PatchType};
use crate::protobuf;
use crate::status::{ApiError, namespace_not_found};
use crate::version::NamespacedName;
use crate::write::{
    self, BodyWire, Endpoint, FieldValidation, WriteOptions, body_wire, decode_as,
    duplicated_fields, unknown_fields,
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
    /// version; `None` when there is none) through `endpoint`, as kube-apiserver writes
    /// it: preconditions, the writer's managedFields (those `new` gives, an apply's, or
    /// the update's), what its registry makes of it ([`Store::prepared`]), validation,
    /// what the server owns, a resourceVersion of the records' own. `creates` says
    /// whether a missing record may be created.
    pub(super) fn write(
        &self,
        (api, options, endpoint): (Api, &WriteOptions, Endpoint),
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
        self.admitted(api, key, &object, live.as_ref())?;
        if api.is_controlled() {
            // Its strategy's resets come before the field manager sees the write, as
            // kube-apiserver's reset fields do: a status write's spec and a
            // Deployment's labels are nobody's change.
            object = super::workloads::prepared(api, object, live.as_ref(), endpoint);
        }
        let entries = entries.unwrap_or_else(|| {
            let writer = options.writer_through(endpoint);
            apply::update_of(&api.typed(), live.as_ref(), &object, writer, &write::now())
        });
        object["metadata"]["managedFields"] = Value::Array(entries);
        let uid = match &kept {
            Some(kept) => kept["metadata"]["uid"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            None => generate::uid(self.server.spec(), store.created, u32::MAX - 1),
        };
        let written = (live.as_ref(), uid.as_str());
        let object = store.prepared((api, endpoint), object, written, key)?;
        let mut stored = protobuf::as_stored(api.into_store(object))
            .map_err(|e| ApiError::internal(e.to_string()))?;
        if kept.is_none() {
            // The UID is the handler's before the registry sees the object: a Job's
            // generated selector is checked against it.
            stored["metadata"]["uid"] = json!(uid);
        }
        api.validate(key, (&stored, kept.as_ref()), endpoint)?;
        write::identity(&mut stored, kept.as_ref(), &uid, api.is_controlled());
        if api.is_controlled() {
            super::workloads::finished(api, &mut stored, kept.as_ref());
            super::batch::finished(api, &mut stored);
        }
        let Some(kept) = kept else {
            if !options.dry_run {
                store.created += 1;
                stored = store.put(id, stored, Instant::now());
            }
            return Ok((StatusCode::CREATED, stored));
        };
        stored["metadata"]["resourceVersion"] = kept["metadata"]["resourceVersion"].clone();
        if write::emptied(&stored, &kept) {
            // It leaves no finalizer on a record being deleted: the record goes (as it
            // was kept: its DELETED event still lists them), answered with what the
            // update made (kube-apiserver's `deleteWithoutFinalizers`).
            if !options.dry_run {
                store.remove(&id);
            }
            return Ok((StatusCode::OK, stored));
        }
        // An update that changes nothing is not written (kube-apiserver's storage skips
        // it): no version, no event, an Event's time to live not restarted.
        if !options.dry_run && stored != kept {
            stored = store.put(id, stored, Instant::now());
        }
        Ok((StatusCode::OK, stored))
    }
}

impl Records {
    /// What a write of `object` to `key` of `api` must pass before its registry sees it:
    /// a create, the namespace's admission (a POST's is admitted before its name is
    /// generated, so this is a replace's or an apply's); an update of `live`, the
    /// preconditions `object` carries, and a Lease's resourceVersion (its strategy
    /// allows no unconditional update).
    fn admitted(
        &self,
        api: Api,
        key: &NamespacedName,
        object: &Value,
        live: Option<&Value>,
    ) -> Result<(), ApiError> {
        let Some(live) = live else {
            return (self.server).admit_create(api.resource_name(), &key.namespace, object);
        };
        write::check_preconditions(api.resource_name(), key, object, live)?;
        if api == Api::Lease && object["metadata"]["resourceVersion"].is_null() {
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
        Ok(())
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
        let creates = name.is_none() || (api.creates_on_update() && endpoint == Endpoint::Object);
        let through = (api, &request.options, endpoint);
        let (code, stored) = self.write(through, &key, creates, |live| match (live, name) {
            (Some(_), None) => Err(ApiError::new(
                StatusCode::CONFLICT,
                "AlreadyExists",
                format!("{} {:?} already exists", api.resource_name(), key.name),
            )
            .about(&key.name, api.resource_name())),
            _ => Ok((object, None)),
        })?;
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
        let creates = applies && endpoint == Endpoint::Object;
        let (code, stored) = records.write((api, options, endpoint), &key, creates, |live| {
            let (patched, entries) = if applies {
                let typed = api.typed();
                let force = options.force.unwrap_or(false);
                let applier = (options.writer_through(endpoint), force);
                let applied = apply::apply(&typed, live, &config, applier, &write::now())
                    .map_err(|e| write::apply_refused(&typed, &config, e))?;
                (applied.object, Some(applied.managed_fields))
            } else {
                let live = live.expect("a patch but an apply writes only a record there is");
                let shape = api.typed().shape;
                let patched =
                    patch::apply(patch_type, live, &body, shape).map_err(write::patch_failed)?;
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
