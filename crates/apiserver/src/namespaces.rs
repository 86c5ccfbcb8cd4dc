//! `/api/v1/namespaces`: the namespaces the objects live in, kube-apiserver's own
//! ([`super::SYSTEM_NAMESPACES`]) and, over TCP, the ones clients create. Read as kubectl
//! lists them (`kubectl get ns`) and asks after a 404 (to tell a missing object from a
//! missing namespace): whole objects, metadata only or kubectl's table (NAME, STATUS, AGE),
//! from `Accept`. Created (`kubectl create namespace`, a test suite's namespace of its
//! own) and deleted as kube-apiserver and its namespace controller do it: a DELETE marks
//! the namespace `Terminating` and is answered with it, then the namespace controller
//! ([`controller`]) deletes what is in it (the scenario's objects, Pods first, and the
//! records) and lets the namespace go once nothing holds it, before the next request; a
//! finalizer there, or one of the client's own in the namespace's spec (taken out through
//! `/finalize`), keeps it `Terminating`, and no new content gets in meanwhile
//! ([`ApiServer::admit_create`]). The objects' own namespaces are not deleted (the
//! scenario spreads its objects over them), nor `default`, `kube-system` and
//! `kube-public` (kube-apiserver's 403). Replaced, patched and applied (`kubectl label
//! ns`, `kubectl apply`), the server's own namespaces too, as kube-apiserver's namespace
//! strategy updates them: the spec and the status are the namespace controller's (a
//! client writes them through `/finalize` and `/status`), the name label is set again.
//! Over TCP, watched (`kubectl get ns -w`, a controller's Namespace informer): a
//! namespace's create, updates and delete take the records' resourceVersions and are
//! changes in their history ([`super::records`]), so that a list and the watch after it
//! meet; in process, where no client changes a namespace, each is at version 1 and a
//! watch is a 405.

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing;
use k8s_openapi::api::core::v1::Namespace;
use serde_json::{Value, json};

use super::ApiServer;
use super::apply::{self, Typed};
use super::extract::{ApiBody, ApiPath};
use super::form::{Form, Wire};
use super::generate;
use super::patch::{self, PatchType};
use super::records::{self, Filter, Records, Watched, serve_watch};
use super::state::EventKind;
use super::status::{ApiError, method_not_allowed, namespace_not_found};
use super::table::{self, metadata_only};
use super::write::{
    self, Causes, DeleteOptions, GcPolicy, WriteOptions, body_wire, check_preconditions, decode_as,
    duplicated_fields, label_named_metadata, object_key, unknown_fields,
};
use k8s::names;

/// `GET /api/v1/namespaces` in process: a LIST. Namespaces are watched over TCP only,
/// where clients create and delete them.
pub(super) async fn list(
    State(server): State<ApiServer>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    list_or_watch(&server, None, query.as_deref(), &headers)
}

/// `GET /api/v1/namespaces` over TCP: a LIST at the records' resourceVersion (which
/// namespaces' creates and deletes take), or with `watch` a WATCH.
pub(super) async fn list_over_tcp(
    records: Records,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    list_or_watch(
        records.server(),
        Some(records.clone()),
        query.as_deref(),
        &headers,
    )
}

/// The namespaces the query's label and field selectors select, as a LIST or a WATCH.
fn list_or_watch(
    server: &ApiServer,
    records: Option<Records>,
    query: Option<&str>,
    headers: &HeaderMap,
) -> Response {
    let (form, wire, query) = match Form::of_request(headers, None, query) {
        Ok(asked) => asked,
        Err(response) => return *response,
    };
    let filter =
        match (query.validated()).and_then(|query| Ok((Filter::namespaces(&query)?, query))) {
            Ok((filter, query)) if query.watch => {
                return match records {
                    Some(records) => {
                        serve_watch(records, Watched::Namespace, filter, &query, (form, wire))
                    }
                    None => ApiError::new(
                        StatusCode::METHOD_NOT_ALLOWED,
                        "MethodNotAllowed",
                        "namespaces are watched over TCP only (serve)".to_owned(),
                    )
                    .into_response(),
                };
            }
            Ok((filter, _)) => filter,
            Err(refused) => return refused.into_response(),
        };
    let read = || filter.namespaces_of(server);
    // In process no client changes a namespace: each is at version 1.
    let (version, namespaces) = match &records {
        Some(records) => records.at_version(read),
        None => (1, read()),
    };
    let metadata = json!({"resourceVersion": version.to_string()});
    let body = match form {
        Form::Table(include) => table::of_namespaces(&namespaces, include, Some(metadata)),
        Form::Metadata => json!({
            "kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
            "metadata": metadata,
            "items": namespaces.iter().map(metadata_only).collect::<Vec<_>>(),
        }),
        Form::Full => json!({
            "kind": "NamespaceList", "apiVersion": "v1", "metadata": metadata,
            "items": namespaces.into_iter().map(|mut n| {
                // A JSON list's items leave out what the list says.
                if let Some(map) = n.as_object_mut() {
                    map.remove("kind");
                    map.remove("apiVersion");
                }
                n
            }).collect::<Vec<_>>(),
        }),
    };
    wire.respond(StatusCode::OK, body.to_string().into_bytes())
}

/// `GET /api/v1/namespaces/{name}`.
pub(super) async fn get(
    State(server): State<ApiServer>,
    ApiPath(name): ApiPath<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let (form, wire) = match Form::of_request(&headers, None, query.as_deref()) {
        Ok((form, wire, _)) => (form, wire),
        Err(response) => return *response,
    };
    let Some(namespace) = server.namespace_object(&name) else {
        return namespace_not_found(&name);
    };
    let body = match form {
        Form::Full => namespace,
        Form::Metadata => metadata_only(&namespace),
        Form::Table(include) => table::of_namespaces(&[namespace], include, None),
    };
    wire.respond(StatusCode::OK, body.to_string().into_bytes())
}

/// The namespaces only kube-apiserver's own deletion guard keeps (`NamespaceLifecycle`'s
/// immortal namespaces).
const IMMORTAL: [&str; 3] = ["default", "kube-system", "kube-public"];

/// `POST /api/v1/namespaces`: a namespace of the client's, in JSON or protobuf, named or
/// from `generateName` ([`created`]).
pub(super) async fn create(
    records: Records,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> Response {
    let request = (query.as_deref(), &headers, &body[..]);
    with_body(request, StatusCode::CREATED, |object, options| {
        created(&records, object, options, None)
    })
}

/// A create's or a replace's answer (`code`, with the request's warnings): its body
/// decoded as a Namespace (keys set twice and unknown fields dealt with as
/// `fieldValidation` says, through the type), and what `keep` makes of it.
fn with_body(
    (query, headers, body): (Option<&str>, &HeaderMap, &[u8]),
    code: StatusCode,
    keep: impl FnOnce(Value, &WriteOptions) -> Result<Value, ApiError>,
) -> Response {
    write::respond(|| {
        let wire = body_wire(headers)?;
        let options = WriteOptions::parse(query, headers)?;
        let mut warnings = Vec::new();
        duplicated_fields(body, wire, options.field_validation, &mut warnings)?;
        let given = decode_as("v1", "Namespace", body, wire)?;
        let object = through_type(&given, &options, &mut warnings)?;
        let namespace = keep(object, &options)?;
        let response = answer(headers).respond(code, namespace.to_string().into());
        Ok(write::warned(response, &warnings))
    })
}

/// `given` through the Namespace type, its unknown fields dealt with as
/// `fieldValidation` says.
fn through_type(
    given: &Value,
    options: &WriteOptions,
    warnings: &mut Vec<String>,
) -> Result<Value, ApiError> {
    let object = write::through::<Namespace>("Namespace", given)?;
    unknown_fields(given, &object, options.field_validation, warnings)?;
    Ok(object)
}

/// `object`, a new namespace, kept as kube-apiserver keeps it (stored at the records'
/// next resourceVersion, but in a dry run): the `kubernetes.io/metadata.name` label
/// (defaulted, so in the writer's managedFields), the `kubernetes` finalizer, phase
/// `Active`. Its managedFields are `entries` (an apply's), or the writer's update. A name
/// taken is a 409 `AlreadyExists`, an invalid one kube-apiserver's 422.
fn created(
    records: &Records,
    mut object: Value,
    options: &WriteOptions,
    entries: Option<Vec<Value>>,
) -> Result<Value, ApiError> {
    let server = records.server();
    let key = object_key("Namespace", "", &mut object, None, server)?;
    object["metadata"]["labels"]["kubernetes.io/metadata.name"] = json!(key.name);
    let mut causes = Causes::default();
    label_named_metadata(&key.name, &object["metadata"], &mut causes);
    spec_finalizers(&object, false, &mut causes);
    causes.into_result("Namespace", &key.name)?;
    let entries = entries.unwrap_or_else(|| {
        apply::update_of(&typed(), None, &object, options.writer(), &write::now())
    });
    object["metadata"]["managedFields"] = Value::Array(entries);
    // `PrepareForCreate`: the `kubernetes` finalizer added to any the client gave.
    let finalizers = object["spec"]["finalizers"].take();
    let mut finalizers: Vec<Value> = finalizers.as_array().cloned().unwrap_or_default();
    if !finalizers.contains(&json!(KUBERNETES)) {
        finalizers.push(json!(KUBERNETES));
    }
    object["spec"] = json!({"finalizers": finalizers});
    object["status"] = json!({"phase": "Active"});
    let taken = || {
        ApiError::new(
            StatusCode::CONFLICT,
            "AlreadyExists",
            format!("namespaces {:?} already exists", key.name),
        )
        .about(&key.name, "namespaces")
    };
    // Its uid drawn from the version it is (or, dry, would be) created at.
    let mut identified = |version: u64| {
        let uid = generate::uid(server.spec(), version as u32, u32::MAX - 2);
        write::identity(&mut object, None, &uid, false);
        object.clone()
    };
    if options.dry_run {
        if server.has_namespace(&key.name) {
            return Err(taken());
        }
        return Ok(identified(records.version() + 1));
    }
    records.change_namespace(EventKind::Added, &key.name, |version| {
        let mut object = identified(version);
        object["metadata"]["resourceVersion"] = json!(version.to_string());
        server
            .create_namespace(object.clone())
            .map_err(|_| taken())?;
        Ok(object)
    })
}

/// The finalizer every namespace is created with: the namespace controller's.
const KUBERNETES: &str = "kubernetes";

/// `PUT /api/v1/namespaces/{name}` (and `.../status`, `.../finalize`): the body replaces
/// what `through` writes of the namespace ([`updated`]).
pub(super) async fn replace(
    (records, through): (Records, Through),
    ApiPath(name): ApiPath<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> Response {
    let request = (query.as_deref(), &headers, &body[..]);
    with_body(request, StatusCode::OK, |object, options| {
        records.update_namespace(&name, options.dry_run, |live| {
            updated(records.server(), (options, through), live, object, None)
        })
    })
}

/// `PATCH /api/v1/namespaces/{name}` (and `.../status`): a JSON, merge or
/// strategic-merge patch of what `through` writes of the namespace ([`updated`]), or a
/// server-side apply, which creates a missing one as a create does (`kubectl apply
/// --server-side`; through the namespace's own path only).
pub(super) async fn patch(
    (records, through): (Records, Through),
    ApiPath(name): ApiPath<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> Response {
    write::respond(|| {
        let patch_type = write::patch_type(&headers)?;
        let options = WriteOptions::parse(query.as_deref(), &headers)?;
        write::check_patch_options(&options, patch_type == PatchType::Apply)?;
        let mut warnings = Vec::new();
        let (code, namespace) = match patch_type {
            PatchType::Apply => {
                let request = (&options, through);
                applied(&records, &name, request, &body, &mut warnings)?
            }
            _ => {
                let patched = records.update_namespace(&name, options.dry_run, |live| {
                    let patched = patch::apply(patch_type, live, &body, typed().shape)
                        .map_err(write::patch_failed)?;
                    let object = through_type(&patched, &options, &mut warnings)
                        .map_err(ApiError::invalid_patch_result)?;
                    updated(records.server(), (&options, through), live, object, None)
                })?;
                (StatusCode::OK, patched)
            }
        };
        let response = answer(&headers).respond(code, namespace.to_string().into());
        Ok(write::warned(response, &warnings))
    })
}

/// A server-side apply of the configuration `body` (YAML or JSON) to namespace `name`:
/// an update of the one there is, or a create (201) when there is none.
fn applied(
    records: &Records,
    name: &str,
    (options, through): (&WriteOptions, Through),
    body: &[u8],
    warnings: &mut Vec<String>,
) -> Result<(StatusCode, Value), ApiError> {
    let config: Value = serde_yaml_ng::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
    let typed = typed();
    let force = options.force.unwrap_or(false);
    let applier = apply::Writer {
        manager: &options.field_manager,
        subresource: through.subresource(),
    };
    let mut apply = |live: Option<&Value>| -> Result<(Value, Vec<Value>), ApiError> {
        let applied = apply::apply(&typed, live, &config, (applier, force), &write::now())
            .map_err(|e| write::apply_refused(&typed, &config, e))?;
        let mut object = through_type(&applied.object, options, warnings)
            .map_err(ApiError::invalid_patch_result)?;
        // The configuration names the namespace of the URL.
        object_key("Namespace", "", &mut object, Some(name), records.server())?;
        Ok((object, applied.managed_fields))
    };
    if !records.server().has_namespace(name) {
        if through != Through::Object {
            return Err(ApiError::no_namespace(name));
        }
        let (object, entries) = apply(None)?;
        return Ok((
            StatusCode::CREATED,
            created(records, object, options, Some(entries))?,
        ));
    }
    let namespace = records.update_namespace(name, options.dry_run, |live| {
        let (object, entries) = apply(Some(live))?;
        updated(
            records.server(),
            (options, through),
            live,
            object,
            Some(entries),
        )
    })?;
    Ok((StatusCode::OK, namespace))
}

/// What a namespace's write goes through: the namespace's own path, or one of its
/// subresources, each writing its own part (`PrepareForUpdate` of the namespace's, its
/// status's and its finalize strategy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Through {
    /// `/api/v1/namespaces/{name}`: its metadata (its spec and status are the
    /// controller's).
    Object,
    /// `.../status`: its metadata and status.
    Status,
    /// `.../finalize`: its metadata and its spec's finalizers.
    Finalize,
}

impl Through {
    fn subresource(self) -> Option<&'static str> {
        match self {
            Through::Object => None,
            Through::Status => Some("status"),
            Through::Finalize => Some("finalize"),
        }
    }
}

/// `object`, a client's update of the namespace `live` through `through`, as
/// kube-apiserver stores it: its name the URL's, the `kubernetes.io/metadata.name` label
/// set again, the preconditions it carries met (a resourceVersion or uid not the live
/// one's is a 409), its managedFields `entries` (an apply's) or the writer's update, then
/// what `through` does not write the live one's (the object's path writes neither spec
/// nor status: the namespace controller changes them, through `/finalize` and
/// `/status`), its uid and creation time kept, valid as its strategy validates it.
fn updated(
    server: &ApiServer,
    (options, through): (&WriteOptions, Through),
    live: &Value,
    mut object: Value,
    entries: Option<Vec<Value>>,
) -> Result<Value, ApiError> {
    let name = live["metadata"]["name"].as_str().unwrap_or_default();
    let key = object_key("Namespace", "", &mut object, Some(name), server)?;
    object["metadata"]["labels"]["kubernetes.io/metadata.name"] = json!(name);
    check_preconditions("namespaces", &key, &object, live)?;
    let entries = entries.unwrap_or_else(|| {
        let writer = apply::Writer {
            manager: &options.field_manager,
            subresource: through.subresource(),
        };
        apply::update_of(&typed(), Some(live), &object, writer, &write::now())
    });
    object["metadata"]["managedFields"] = Value::Array(entries);
    // After the field manager, as there: a writer that set the finalizers owns them.
    if through != Through::Finalize {
        object["spec"] = live["spec"].clone();
    }
    if through != Through::Status {
        object["status"] = live["status"].clone();
    }
    write::identity(&mut object, Some(live), "", false);
    let mut causes = Causes::default();
    label_named_metadata(name, &object["metadata"], &mut causes);
    match through {
        Through::Object => {}
        Through::Status => phase_of(&object, &mut causes),
        Through::Finalize => spec_finalizers(&object, true, &mut causes),
    }
    causes.into_result("Namespace", name)?;
    Ok(object)
}

/// `ValidateNamespaceStatusUpdate`: `Active` while the namespace is not being deleted,
/// `Terminating` once it is.
fn phase_of(object: &Value, causes: &mut Causes) {
    let phase = object["status"]["phase"].as_str().unwrap_or_default();
    let (wanted, why) = match object["metadata"]["deletionTimestamp"].is_null() {
        true => (
            "Active",
            "may only be 'Active' if `deletionTimestamp` is empty",
        ),
        false => (
            "Terminating",
            "may only be 'Terminating' if `deletionTimestamp` is not empty",
        ),
    };
    if phase != wanted {
        causes.invalid("status.Phase", &json!(phase), why);
    }
}

/// Each of the spec's finalizers a qualified name, and a standard one (`kubernetes`) or
/// one with a prefix (`validateFinalizerName`); a finalize's named by index.
fn spec_finalizers(object: &Value, indexed: bool, causes: &mut Causes) {
    let finalizers = object["spec"]["finalizers"]
        .as_array()
        .into_iter()
        .flatten();
    for (i, finalizer) in finalizers.enumerate() {
        let field = match indexed {
            true => format!("spec.finalizers[{i}]"),
            false => "spec.finalizers".to_owned(),
        };
        let name = finalizer.as_str().unwrap_or_default();
        for why in names::qualified_name_errors(name) {
            causes.invalid(&field, finalizer, &why);
        }
        if !name.contains('/') && name != KUBERNETES {
            let why = "name is neither a standard finalizer name nor is it fully qualified";
            causes.invalid(&field, finalizer, why);
        }
    }
}

/// `GET /api/v1/namespaces/{name}/status`, `PUT` and `PATCH` of it, and `PUT
/// /api/v1/namespaces/{name}/finalize` (the only method there), over TCP.
pub(super) fn subresource_routes(
    router: Router<ApiServer>,
    records: &Records,
) -> Router<ApiServer> {
    let [replacing, patching, finalizing] = [(); 3].map(|_| records.clone());
    // A read of the status is the namespace's, as its `StatusREST` reads it.
    let status = routing::get(get)
        .put(move |path, query, headers, body| {
            let through = (replacing, Through::Status);
            replace(through, path, query, headers, body)
        })
        .patch(move |path, query, headers, body| {
            patch((patching, Through::Status), path, query, headers, body)
        });
    let finalize = routing::put(move |path, query, headers, body| {
        replace((finalizing, Through::Finalize), path, query, headers, body)
    });
    router
        .route(
            "/api/v1/namespaces/{namespace}/status",
            status.fallback(method_not_allowed),
        )
        .route(
            "/api/v1/namespaces/{namespace}/finalize",
            finalize.fallback(method_not_allowed),
        )
}

/// `DELETE /api/v1/namespaces/{name}`: a client's namespace, marked as kube-apiserver's
/// registry marks it (`deletionTimestamp`, phase `Terminating`, the garbage collector's
/// finalizers the options ask for, which a cluster's collector then removes) and
/// answered so; the namespace controller then empties it and lets it go
/// ([`controller`], after this write). A namespace already terminating is answered as it
/// is, and deleted where no finalizer is left to hold it. Preconditions not met are a
/// 409.
pub(super) async fn delete(
    records: Records,
    ApiPath(name): ApiPath<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> Response {
    write::respond(|| {
        let server = records.server();
        let options = DeleteOptions::parse(query.as_deref(), &body)?;
        let forbidden = |why: &str| {
            ApiError::new(
                StatusCode::FORBIDDEN,
                "Forbidden",
                format!("namespaces {name:?} is forbidden: {why}"),
            )
            .about(&name, "namespaces")
        };
        if IMMORTAL.contains(&name.as_str()) {
            return Err(forbidden("this namespace may not be deleted"));
        }
        let Some(live) = server.namespace_object(&name) else {
            return Ok(namespace_not_found(&name));
        };
        options.check_object("namespaces", &live)?;
        if !server.is_created_namespace(&name) {
            return Err(forbidden(KEPT));
        }
        let respond = |namespace: &Value| {
            Ok(answer(&headers).respond(StatusCode::OK, namespace.to_string().into()))
        };
        if !live["metadata"]["deletionTimestamp"].is_null() {
            // Its registry deletes it only once no finalizer is left (one a client
            // emptied through `/finalize` before the first DELETE): as it was kept.
            if !records::holds_namespace(&live) && !options.dry_run {
                records.change_namespace(EventKind::Deleted, &name, |version| {
                    server.remove_namespace(&name);
                    let mut gone = live.clone();
                    gone["metadata"]["resourceVersion"] = json!(version.to_string());
                    Ok(gone)
                })?;
            }
            return respond(&live);
        }
        let marked = records.update_namespace(&name, options.dry_run, |live| {
            Ok(terminating(live, &options))
        })?;
        if !options.dry_run && server.finishes_deletions() {
            // The garbage collector, with no dependents to wait for (the namespace is
            // there: this fails only where it is not).
            let collected = |live: &Value| Ok(write::without_gc_finalizers(live));
            records.update_namespace(&name, false, collected).ok();
        }
        respond(&marked)
    })
}

/// Namespace `live` as a DELETE with `options` marks it: deleted now, `Terminating`,
/// with the garbage collector's finalizers the options ask for.
fn terminating(live: &Value, options: &DeleteOptions) -> Value {
    let mut object = live.clone();
    object["metadata"]["deletionTimestamp"] = write::now();
    object["status"]["phase"] = json!("Terminating");
    let meta = object["metadata"]
        .as_object_mut()
        .expect("a namespace has metadata");
    match write::gc_finalizers(meta, options, GcPolicy::DeleteDependents) {
        Some(finalizers) if finalizers.is_empty() => {
            meta.remove("finalizers");
        }
        Some(finalizers) => {
            meta.insert("finalizers".to_owned(), json!(finalizers));
        }
        None => {}
    }
    object
}

/// Why a namespace the scenario's objects live in, or kube-node-lease, is not deleted.
const KEPT: &str = "informer-mem's server keeps the namespaces the scenario spreads its \
                    objects over, and kube-apiserver's own";

/// The wire a write's answer goes back in, from `Accept`.
fn answer(headers: &HeaderMap) -> Wire {
    Form::accepted(headers, None).map_or(Wire::Json, |(_, wire)| wire)
}

/// A Namespace's schema, for its managedFields.
fn typed() -> Typed<'static> {
    Typed {
        shape: apply::Shape::named("io.k8s.api.core.v1.Namespace"),
        api_version: "v1",
        kind: "Namespace",
        has_status: true,
        go_type: true,
    }
}

mod controller;
mod kept;

pub(super) use controller::after_writes;

#[cfg(test)]
mod terminating_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod update_tests;
