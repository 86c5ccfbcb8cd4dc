//! `/api/v1/namespaces`: the namespaces the objects live in, kube-apiserver's own
//! ([`super::SYSTEM_NAMESPACES`]) and, over TCP, the ones clients create. Read as kubectl
//! lists them (`kubectl get ns`) and asks after a 404 (to tell a missing object from a
//! missing namespace): whole objects, metadata only or kubectl's table (NAME, STATUS, AGE),
//! from `Accept`. Created (`kubectl create namespace`, a test suite's namespace of its
//! own) and deleted as kube-apiserver and its namespace controller do it: a DELETE
//! answers with the namespace `Terminating`, then what is in it (the scenario's objects,
//! Pods gracefully; Leases and Events) is deleted and the namespace is gone. The objects'
//! own namespaces are not deleted (the scenario spreads its objects over them), nor
//! `default`, `kube-system` and `kube-public` (kube-apiserver's 403). Over TCP, watched
//! (`kubectl get ns -w`, a controller's Namespace informer): a namespace's create and
//! delete take the records' resourceVersions and are changes in their history
//! ([`super::records`]), so that a list and the watch after it meet; in process, where
//! no client changes a namespace, each is at version 1 and a watch is a 405.

use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use k8s_openapi::api::core::v1::Namespace;
use serde_json::{Value, json};

use super::ApiServer;
use super::apply::{self, Typed};
use super::extract::{ApiBody, ApiPath};
use super::form::{Form, Wire};
use super::generate;
use super::records::{Filter, Records, Watched, serve_watch};
use super::state::EventKind;
use super::status::{ApiError, namespace_not_found};
use super::table::{self, metadata_only};
use super::write::{
    self, Causes, DeleteOptions, WriteOptions, body_wire, decode_as, duplicated_fields,
    namespace_metadata, object_key, unknown_fields,
};

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
/// from `generateName`, as kube-apiserver keeps it: the `kubernetes.io/metadata.name`
/// label (defaulted, so in the writer's managedFields), the `kubernetes` finalizer, phase
/// `Active`. A name taken is a 409 `AlreadyExists`, an invalid one kube-apiserver's 422.
pub(super) async fn create(
    records: Records,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> Response {
    write::respond(|| {
        let server = records.server();
        let wire = body_wire(&headers)?;
        let options = WriteOptions::parse(query.as_deref(), &headers)?;
        let mut warnings = Vec::new();
        duplicated_fields(&body, wire, options.field_validation, &mut warnings)?;
        let given = decode_as("v1", "Namespace", &body, wire)?;
        let mut object = write::through::<Namespace>("Namespace", &given)?;
        unknown_fields(&given, &object, options.field_validation, &mut warnings)?;
        let key = object_key("Namespace", "", &mut object, None, server)?;
        object["metadata"]["labels"]["kubernetes.io/metadata.name"] = json!(key.name);
        let mut causes = Causes::default();
        namespace_metadata(&key.name, &object["metadata"], &mut causes);
        causes.into_result("Namespace", &key.name)?;
        let writer = apply::Writer {
            manager: &options.field_manager,
            subresource: None,
        };
        let entries = apply::update_of(&typed(), None, &object, writer, &write::now());
        object["metadata"]["managedFields"] = Value::Array(entries);
        object["spec"] = json!({"finalizers": ["kubernetes"]});
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
        let object = if options.dry_run {
            if server.has_namespace(&key.name) {
                return Err(taken());
            }
            identified(records.version() + 1)
        } else {
            records.change_namespace(EventKind::Added, |version| {
                let mut object = identified(version);
                object["metadata"]["resourceVersion"] = json!(version.to_string());
                server
                    .create_namespace(object.clone())
                    .map_err(|_| taken())?;
                Ok(object)
            })?
        };
        let response = answer(&headers).respond(StatusCode::CREATED, object.to_string().into());
        Ok(write::warned(response, &warnings))
    })
}

/// `DELETE /api/v1/namespaces/{name}`: a client's namespace, answered `Terminating` as
/// kube-apiserver answers, then emptied and gone at once (the namespace controller's
/// work, done before the next request).
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
        let Some(mut object) = server.namespace_object(&name) else {
            return Ok(namespace_not_found(&name));
        };
        object["metadata"]["deletionTimestamp"] = write::now();
        object["status"]["phase"] = json!("Terminating");
        if options.dry_run {
            if !server.is_created_namespace(&name) {
                return Err(forbidden(KEPT));
            }
            return Ok(answer(&headers).respond(StatusCode::OK, object.to_string().into()));
        }
        // Its watchers see it terminating, then gone once what was in it is deleted.
        let terminating = records.change_namespace(EventKind::Modified, |version| {
            server
                .remove_namespace(&name)
                .ok_or_else(|| forbidden(KEPT))?;
            object["metadata"]["resourceVersion"] = json!(version.to_string());
            Ok(object)
        })?;
        write::empty_namespace(server, &name);
        records.empty_namespace(&name);
        records.change_namespace(EventKind::Deleted, |version| {
            // As the namespace controller leaves it: its finalizer done.
            let mut gone = terminating.clone();
            gone["metadata"]["resourceVersion"] = json!(version.to_string());
            gone["spec"] = json!({});
            Ok(gone)
        })?;
        Ok(answer(&headers).respond(StatusCode::OK, terminating.to_string().into()))
    })
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

#[cfg(test)]
mod tests;
