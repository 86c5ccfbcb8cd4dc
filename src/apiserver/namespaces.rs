//! `GET /api/v1/namespaces` and `GET /api/v1/namespaces/{name}`: the namespaces the
//! objects live in, and `default`, read-only, as kubectl lists them (`kubectl get ns`)
//! and asks after a 404 (to tell a missing object from a missing namespace). Whole
//! objects, metadata only or kubectl's table (NAME, STATUS, AGE), from `Accept`. A watch
//! of namespaces is not served: nothing an informer of the scenario's kind needs.

use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::ApiServer;
use super::extract::ApiPath;
use super::form::Form;
use super::status::{ApiError, namespace_not_found};
use super::table::{self, Include, metadata_only};

/// `GET /api/v1/namespaces`.
pub(super) async fn list(
    State(server): State<ApiServer>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let (form, wire) = match Form::of_request(&headers, None, query.as_deref()) {
        Ok((_, _, query)) if query.watch => {
            return ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "MethodNotAllowed",
                "this server does not watch namespaces (they never change)".to_owned(),
            )
            .into_response();
        }
        Ok((form, wire, _)) => (form, wire),
        Err(response) => return *response,
    };
    let namespaces: Vec<Value> = server
        .namespace_names()
        .iter()
        .filter_map(|name| server.namespace_object(name))
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
