//! `/api/v1/namespaces`: the namespaces the objects live in, kube-apiserver's own
//! ([`super::SYSTEM_NAMESPACES`]) and, over TCP, the ones clients create. Read as kubectl
//! lists them (`kubectl get ns`) and asks after a 404 (to tell a missing object from a
//! missing namespace): whole objects, metadata only or kubectl's table (NAME, STATUS, AGE),
//! from `Accept`. Created (`kubectl create namespace`, a test suite's namespace of its
//! own) and deleted as kube-apiserver and its namespace controller do it: a DELETE
//! answers with the namespace `Terminating`, then what is in it (the scenario's objects,
//! Pods gracefully; Leases and Events) is deleted and the namespace is gone. The objects'
//! own namespaces are not deleted (the scenario spreads its objects over them), nor
//! `default`, `kube-system` and `kube-public` (kube-apiserver's 403). A watch of
//! namespaces is not served: nothing an informer of the scenario's kind needs.

use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::ApiServer;
use super::apply::{self, Typed};
use super::extract::{ApiBody, ApiPath};
use super::form::{Form, Wire};
use super::generate;
use super::protobuf;
use super::records::Records;
use super::status::{ApiError, namespace_not_found};
use super::table::{self, Include, metadata_only};
use super::write::{
    self, Causes, DeleteOptions, WriteOptions, body_wire, decode_as, duplicated_fields,
    namespace_metadata, object_key, unknown_fields,
};

/// `GET /api/v1/namespaces`.
pub(super) async fn list(
    State(server): State<ApiServer>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let (form, wire, query) = match Form::of_request(&headers, None, query.as_deref()) {
        Ok((_, _, query)) if query.watch => {
            return ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "MethodNotAllowed",
                "this server does not watch namespaces".to_owned(),
            )
            .into_response();
        }
        Ok(asked) => asked,
        Err(response) => return *response,
    };
    // A Namespace's selectable fields, as kube-apiserver's registry has them.
    let fields =
        match (query.field_selector.clone()).for_fields(&["metadata.name", "status.phase"], &[]) {
            Ok(fields) => fields,
            Err(why) => return ApiError::bad_request(why).into_response(),
        };
    let namespaces: Vec<Value> = (server.namespace_names().iter())
        .filter_map(|name| server.namespace_object(name))
        .filter(|namespace| {
            let labels = (namespace["metadata"]["labels"]
                .as_object()
                .into_iter()
                .flatten())
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
            .collect();
            let field = |path: &str| match path {
                "metadata.name" => namespace["metadata"]["name"].as_str().unwrap_or_default(),
                _ => namespace["status"]["phase"].as_str().unwrap_or_default(),
            };
            query.label_selector.matches(&labels) && fields.matches_with(|f| field(f).into())
        })
        .collect();
    let metadata = json!({"resourceVersion": "1"});
    let body = match form {
        Form::Table(include) => table_of(&namespaces, include, Some(metadata)),
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
        Form::Table(include) => table_of(&[namespace], include, None),
    };
    wire.respond(StatusCode::OK, body.to_string().into_bytes())
}

/// kube-apiserver's namespace table: NAME, STATUS, AGE; the resourceVersion in its
/// metadata for one namespace, the list's for a list.
fn table_of(namespaces: &[Value], include: Include, metadata: Option<Value>) -> Value {
    let columns = table::namespace_columns();
    table::of_values(
        namespaces,
        columns,
        table::namespace_cells,
        include,
        metadata,
    )
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
        let mut object = through_type(&given)?;
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
        let version = records.next_version();
        let uid = generate::uid(server.spec(), version as u32, u32::MAX - 2);
        write::identity(&mut object, None, &uid, false);
        let taken = || {
            ApiError::new(
                StatusCode::CONFLICT,
                "AlreadyExists",
                format!("namespaces {:?} already exists", key.name),
            )
            .about(&key.name, "namespaces")
        };
        if options.dry_run {
            if server.has_namespace(&key.name) {
                return Err(taken());
            }
        } else {
            object["metadata"]["resourceVersion"] = json!(version.to_string());
            server
                .create_namespace(object.clone())
                .map_err(|_| taken())?;
        }
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
        if !options.dry_run {
            if server.remove_namespace(&name).is_none() {
                return Err(forbidden(
                    "informer-mem's server keeps the namespaces the scenario spreads its \
                     objects over, and kube-apiserver's own",
                ));
            }
            object["metadata"]["resourceVersion"] = json!(records.next_version().to_string());
            write::empty_namespace(server, &name);
            records.empty_namespace(&name);
        }
        object["metadata"]["deletionTimestamp"] = write::now();
        object["status"]["phase"] = json!("Terminating");
        Ok(answer(&headers).respond(StatusCode::OK, object.to_string().into()))
    })
}

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

/// `value` through k8s-openapi's Namespace: field types checked, unknown fields dropped.
fn through_type(value: &Value) -> Result<Value, ApiError> {
    let typed = serde_json::from_value::<k8s_openapi::api::core::v1::Namespace>(value.clone())
        .and_then(serde_json::to_value)
        .map_err(|e| {
            ApiError::bad_request(format!(
                "Namespace in version \"v1\" cannot be handled as a Namespace: {e}"
            ))
        })?;
    protobuf::with_go_zeros(typed).map_err(|e| ApiError::internal(e.to_string()))
}

#[cfg(test)]
mod tests;
