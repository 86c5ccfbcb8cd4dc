//! Services: listed, and there are none. `kubectl cluster-info` lists the services in
//! `kube-system` labelled `kubernetes.io/cluster-service=true` after it prints the
//! control plane's address, and stops with "the server doesn't have a resource type
//! \"services\"" where discovery has none; scripts run it to see that a cluster answers.
//! The built-in server runs no Service (kube-apiserver's own `default/kubernetes` would
//! name a cluster IP nobody routes here), so over TCP it lists `services` read-only in
//! the core group and answers every list, in one namespace or all of them, empty,
//! as JSON, metadata or kubectl's table; a read of one is a 404. Not watched (405), nor
//! written (405).

use axum::Router;
use axum::extract::RawQuery;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

use super::extract::ApiPath;
use super::form::Form;
use super::status::{ApiError, method_not_allowed};
use super::table::{self, column};

/// The resource as `/api/v1` lists it: read, never written.
pub fn resource() -> Value {
    json!({
        "name": "services", "singularName": "service", "namespaced": true, "kind": "Service",
        "verbs": ["get", "list"], "shortNames": ["svc"],
    })
}

/// The routes of Services: a list in every namespace and in one, and a read of one.
pub fn routes() -> Router {
    Router::new()
        .route("/api/v1/services", get(list).fallback(method_not_allowed))
        .route(
            "/api/v1/namespaces/{namespace}/services",
            get(|_: ApiPath<String>, query, headers| list(query, headers))
                .fallback(method_not_allowed),
        )
        .route(
            "/api/v1/namespaces/{namespace}/services/{name}",
            get(read).fallback(method_not_allowed),
        )
}

/// `GET /api/v1/services`, `/api/v1/namespaces/{namespace}/services`: no Services, in
/// the form `Accept` asks for (in a namespace there is not too, as kube-apiserver lists
/// one). A watch is a 405: there is nothing to watch.
async fn list(RawQuery(query): RawQuery, headers: HeaderMap) -> Response {
    let (form, wire, query) = match Form::of_request(&headers, None, query.as_deref()) {
        Ok(asked) => asked,
        Err(refused) => return *refused,
    };
    let query = match query.validated() {
        Ok(query) => query,
        Err(refused) => return refused.into_response(),
    };
    if query.watch {
        return ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            "services are not watched here: the server has none".to_owned(),
        )
        .into_response();
    }
    // Nothing ever changes: the version the server's own namespaces are at.
    let metadata = json!({"resourceVersion": "1"});
    let body = match form {
        Form::Table(include) => {
            table::of_values(&[], columns(), |_, _| Vec::new(), include, Some(metadata))
        }
        Form::Metadata => json!({
            "kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
            "metadata": metadata, "items": [],
        }),
        Form::Full => json!({
            "kind": "ServiceList", "apiVersion": "v1", "metadata": metadata, "items": [],
        }),
    };
    wire.respond(StatusCode::OK, body.to_string().into_bytes())
}

/// `GET /api/v1/namespaces/{namespace}/services/{name}`: a 404, as for any Service there
/// is not.
async fn read(ApiPath((_, name)): ApiPath<(String, String)>) -> Response {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "NotFound",
        format!("services {name:?} not found"),
    )
    .about(&name, "services")
    .into_response()
}

/// The columns kube-apiserver's printer gives a Service.
fn columns() -> Value {
    json!([
        column(
            "Name",
            "name",
            0,
            "The object's name, unique within its namespace."
        ),
        column("Type", "", 0, "type determines how the Service is exposed."),
        column(
            "Cluster-IP",
            "",
            0,
            "clusterIP is the IP address of the service."
        ),
        column(
            "External-IP",
            "",
            0,
            "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service."
        ),
        column("Port(s)", "", 0, "The network ports the service exposes."),
        column("Age", "", 0, "Time since the object's creationTimestamp."),
        column(
            "Selector",
            "",
            1,
            "Route service traffic to pods with label keys and values matching this selector."
        ),
    ])
}

#[cfg(test)]
mod tests;
