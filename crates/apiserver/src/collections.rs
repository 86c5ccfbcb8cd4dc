//! The measured path's routes: LIST and WATCH of the scenario's kind, the only requests
//! the built-in informer and the plain watchers make. [`router`] is what the in-memory
//! transport serves, so its bytes (part of every report's exact apiserver figures) are
//! these routes' alone: a route `serve` adds for a program's sake (writes, discovery,
//! records, the probes) moves no figure of `run`.

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use scenario::ObjectKind;

use super::ApiServer;
use super::extract::ApiPath;
use super::form::{Form, Wire};
use super::group::{Apps, Core, Group, SampledGroup};
use super::query::{Query, Selection};
use super::status::{ApiError, method_not_allowed};
use super::{list, watch};

/// The collections of the scenario's kind, in its group, at the cluster's scope and in
/// a namespace; any other path is a `NotFound` Status, any other method 405.
pub fn router(server: ApiServer) -> Router {
    let kind = server.spec().kind;
    let router = match kind.group() {
        "" => collections::<Core>(Router::new(), kind),
        group if group == Apps::name(kind) => collections::<Apps>(Router::new(), kind),
        _ => collections::<SampledGroup>(Router::new(), kind),
    };
    router.fallback(not_found).with_state(server)
}

/// Group `G`'s collection routes: every namespace's objects (or a cluster-scoped kind's),
/// and one namespace's.
fn collections<G: Group>(router: Router<ApiServer>, kind: ObjectKind) -> Router<ApiServer> {
    let root = G::root(kind);
    router
        .route(
            &format!("{root}/{{resource}}"),
            get(cluster_collection::<G>).fallback(method_not_allowed),
        )
        .route(
            &format!("{root}/namespaces/{{namespace}}/{{resource}}"),
            get(namespaced_collection::<G>).fallback(method_not_allowed),
        )
}

/// `GET {root}/{resource}`: a LIST or WATCH of every namespace's objects, or of a
/// cluster-scoped kind's.
pub(crate) async fn cluster_collection<G: Group>(
    State(server): State<ApiServer>,
    ApiPath(resource): ApiPath<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let kind = G::kind(server.spec().kind, &resource);
    let Some(accepted) = Form::accepted(&headers, kind) else {
        return ApiError::not_acceptable().into_response();
    };
    collection(server, kind, None, query.as_deref(), accepted).await
}

/// `GET {root}/namespaces/{namespace}/{resource}`: a LIST or WATCH of one namespace's
/// objects.
pub(crate) async fn namespaced_collection<G: Group>(
    State(server): State<ApiServer>,
    ApiPath((namespace, resource)): ApiPath<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let kind = G::kind(server.spec().kind, &resource);
    let Some(accepted) = Form::accepted(&headers, kind) else {
        return ApiError::not_acceptable().into_response();
    };
    collection(server, kind, Some(namespace), query.as_deref(), accepted).await
}

async fn collection(
    server: ApiServer,
    kind: Option<ObjectKind>,
    namespace: Option<String>,
    query: Option<&str>,
    (form, wire): (Form, Wire),
) -> Response {
    let Some(kind) = kind else {
        return unknown_resource();
    };
    if namespace.is_some() && !kind.namespaced() {
        return unknown_resource();
    }
    let query = match Query::parse(query.unwrap_or_default()).and_then(Query::validated) {
        Ok(q) => q,
        Err(e) => return e.into_response(),
    };
    let form = form.including(query.include_object);
    let selection = match Selection::new(&server, kind, namespace.as_deref(), &query) {
        Ok(selection) => selection,
        Err(e) => return e.into_response(),
    };
    if query.watch {
        server.count_request(|r| r.watch += 1);
        watch::serve(server, selection, &query, (form, wire)).await
    } else {
        server.count_request(|r| r.list += 1);
        list::serve(server, selection, &query, (form, wire)).await
    }
}

pub(crate) async fn not_found() -> Response {
    unknown_resource()
}

/// kube-apiserver's answer to a resource it does not serve: a `NotFound` Status.
pub(crate) fn unknown_resource() -> Response {
    ApiError::unknown_resource().into_response()
}

#[cfg(test)]
mod tests;
