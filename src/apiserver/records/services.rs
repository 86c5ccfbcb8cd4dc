//! Services: listed and watched, and there are none. `kubectl cluster-info` lists the
//! services in `kube-system` labelled `kubernetes.io/cluster-service=true` after it prints
//! the control plane's address, and stops with "the server doesn't have a resource type
//! \"services\"" where discovery has none; scripts run it to see that a cluster answers.
//! Controllers (an ingress controller, external-dns, an operator's Service informer)
//! list and watch them. The built-in server runs no Service (kube-apiserver's own
//! `default/kubernetes` would name a cluster IP nobody routes here), so over TCP it lists
//! `services` in the core group, read-only, and answers every list, in one namespace or
//! all of them, empty, as JSON, metadata or kubectl's table, at the records' newest
//! resourceVersion; a watch is one of the records' ([`serve_watch`]): no change
//! ever comes, bookmarks do when it allows them, watch-list's initial-events-end too, a
//! version older than the records' window a 410, and it ends at its deadline or a
//! disconnect. Selectors are checked as kube-apiserver checks a Service's (a field it does
//! not select by is a 400). A read of one is a 404; a write a 405.

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

use super::{Filter, Records, Watched, serve_watch};
use crate::apiserver::extract::ApiPath;
use crate::apiserver::form::Form;
use crate::apiserver::status::{ApiError, method_not_allowed};
use crate::apiserver::table::{self, column};
use crate::scenario::ObjectKind;

/// Whether a server of `kind` objects answers for Services here: not where the scenario's
/// objects are Services (a sample of them), which it serves as it serves any kind.
pub fn served_with(kind: ObjectKind) -> bool {
    (kind.group(), kind.plural()) != ("", "services")
}

/// The resource as `/api/v1` lists it: read and watched, never written; in the `all`
/// category, as kube-apiserver's (`kubectl get all` lists them).
pub fn resource() -> Value {
    json!({
        "name": "services", "singularName": "service", "namespaced": true, "kind": "Service",
        "verbs": ["get", "list", "watch"], "shortNames": ["svc"], "categories": ["all"],
    })
}

/// The routes of Services: a list (or watch) in every namespace and in one, and a read of
/// one.
pub fn routes(records: Records) -> Router {
    Router::new()
        .route(
            "/api/v1/services",
            get(|records, query, headers| list(records, None, query, headers))
                .fallback(method_not_allowed),
        )
        .route(
            "/api/v1/namespaces/{namespace}/services",
            get(
                |records, ApiPath(namespace): ApiPath<String>, query, headers| {
                    list(records, Some(namespace), query, headers)
                },
            )
            .fallback(method_not_allowed),
        )
        .route(
            "/api/v1/namespaces/{namespace}/services/{name}",
            get(read).fallback(method_not_allowed),
        )
        .with_state(records)
}

/// `GET /api/v1/services`, `/api/v1/namespaces/{namespace}/services`: no Services, in
/// the form `Accept` asks for (in a namespace there is not too, as kube-apiserver lists
/// one); with `watch`, a watch that sees no change.
async fn list(
    State(records): State<Records>,
    namespace: Option<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let (form, wire, query) = match Form::of_request(&headers, None, query.as_deref()) {
        Ok(asked) => asked,
        Err(refused) => return *refused,
    };
    let (query, filter) = match query
        .validated()
        .and_then(|query| Ok((Filter::services(namespace, &query)?, query)))
    {
        Ok((filter, query)) => (query, filter),
        Err(refused) => return refused.into_response(),
    };
    if query.watch {
        return serve_watch(records, Watched::Service, filter, &query, (form, wire));
    }
    let metadata = json!({"resourceVersion": records.version().to_string()});
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

/// The table of `services`, with kube-apiserver's columns (for a watch's events, of
/// which there are none).
pub(in crate::apiserver) fn table(services: &[Value], include: table::Include) -> Value {
    table::of_values(services, columns(), |_, _| Vec::new(), include, None)
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
