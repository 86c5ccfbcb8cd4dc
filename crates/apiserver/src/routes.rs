//! The built-in apiserver's routes: which handler answers each path and method, as
//! kube-apiserver's. Reads of one object and of namespaces are answered here; collections go to
//! [`super::list`] or [`super::watch`], writes to [`super::write`].

use axum::Router;
#[cfg(test)]
use axum::body::Body;
use axum::extract::{RawQuery, State};

use super::extract::ApiPath;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{any, get};

use super::collections::{cluster_collection, namespaced_collection, not_found, unknown_resource};
#[cfg(test)]
use super::discovery::InProcess;
use super::discovery::Serving;
use super::form::{Form, Wire};
use super::group::{Apps, Core, Group, SampledGroup};
use super::records::{self, Network, Records};
use super::status::{method_not_allowed, object_not_found, page_not_found};
use super::version::Version;
use super::write::{ToObject, ToStatus};
use super::{ApiServer, connect, discovery, empty, eviction, health, namespaces, reviews, write};
use scenario::ObjectKind;

/// The apiserver's routes without what only a network server keeps (the records, the
/// probes): the routes themselves, for their tests. The in-memory transport serves
/// [`super::collections::router`], the network [`network_router`].
#[cfg(test)]
pub(crate) fn router(server: ApiServer) -> Router {
    routes::<InProcess>(server, None)
}

/// The apiserver's routes, with discovery as `S` has it; with `records` (over TCP),
/// namespaces are created, updated, patched and deleted too.
fn routes<S: Serving>(server: ApiServer, records: Option<Records>) -> Router {
    let router = Router::new()
        .route(
            "/version",
            get(discovery::version).fallback(method_not_allowed),
        )
        .route(
            "/api",
            get(discovery::api_versions).fallback(method_not_allowed),
        )
        .route(
            "/api/v1",
            get(discovery::group_resources::<Core, S>).fallback(method_not_allowed),
        )
        .route(
            "/apis",
            get(discovery::api_groups::<S>).fallback(method_not_allowed),
        )
        .route(
            "/openapi/v3",
            get(discovery::openapi_v3_paths::<S>).fallback(method_not_allowed),
        )
        .route(
            "/openapi/v3/api/v1",
            get(discovery::openapi_v3_group::<Core, S>).fallback(method_not_allowed),
        );
    let kind = server.spec().kind;
    let (mut all, mut one) = (get(namespaces::list), get(namespaces::get));
    let subresources = records.clone();
    if let Some(records) = records {
        let [listing, replacing, patching, deleting] = [(); 4].map(|_| records.clone());
        all = get(move |query, headers| namespaces::list_over_tcp(listing, query, headers))
            .post(move |query, headers, body| namespaces::create(records, query, headers, body));
        let object = |records| (records, namespaces::Through::Object);
        one = one
            .put(move |path, query, headers, body| {
                namespaces::replace(object(replacing), path, query, headers, body)
            })
            .patch(move |path, query, headers, body| {
                namespaces::patch(object(patching), path, query, headers, body)
            })
            .delete(move |path, query, headers, body| {
                namespaces::delete(deleting, path, query, headers, body)
            });
    }
    let mut router = cluster_scope::<Core>(router, kind)
        .route("/api/v1/namespaces", all.fallback(method_not_allowed))
        .route(
            "/api/v1/namespaces/{namespace}",
            one.fallback(method_not_allowed),
        );
    if let Some(records) = &subresources {
        router = namespaces::subresource_routes(router, records);
    }
    let mut router = in_namespaces::<Core>(router, kind);
    if Apps::served_with(kind) {
        router = scale(named_group::<Apps, S>(router, kind), kind);
    }
    if SampledGroup::served_with(kind) {
        router = named_group::<SampledGroup, S>(router, kind);
    }
    // Only the scenario's kind is written, so only its status path is routed: a server
    // of ConfigMaps keeps its router, and its figures, as they were.
    if kind.has_status() {
        router = match kind.group() {
            "" => status::<Core>(router, kind),
            group if group == Apps::name(kind) => status::<Apps>(router, kind),
            _ => status::<SampledGroup>(router, kind),
        };
    }
    router.fallback(not_found).with_state(server)
}

/// The routes served over TCP (`serve`, and `run`'s loopback server for external
/// variants): the apiserver's, the index of its paths (`/`), the health probes that
/// scripts and programs wait on, the Leases and Events programs write beside the
/// scenario's objects ([`records`]), and the pods' connect subresources ([`connect`]) and
/// evictions ([`eviction`]).
/// The in-process transport leaves the probes and the records out: no client there asks
/// for them, and the router's own size is part of every report's exact apiserver
/// figures.
pub fn network_router(server: ApiServer) -> Router {
    let kind = server.spec().kind;
    let records = Records::new(server.clone());
    let mut router = health::routes(routes::<Network>(server.clone(), Some(records.clone())));
    let listed = server.clone();
    // The index, to any method, as kube-apiserver's `/` answers.
    router = router.route(
        "/",
        any(move || discovery::root_paths::<Network>(State(listed.clone()))),
    );
    let router = router
        .merge(records::routes(records.clone()))
        .merge(reviews::routes())
        .merge(connect::routes(server.clone()))
        .merge(eviction::routes(server.clone()));
    // The namespace controller's pass after each write into a terminating namespace.
    let router = router.layer(axum::middleware::from_fn_with_state(
        records,
        namespaces::after_writes,
    ));
    let router = router.fallback(move |uri: axum::http::Uri| async move {
        if in_served_group(kind, uri.path()) {
            unknown_resource()
        } else {
            page_not_found()
        }
    });
    // Any other resource kube-apiserver serves, which nothing above does: an empty
    // collection ([`empty`]).
    let router = router.layer(axum::middleware::from_fn_with_state(
        server,
        empty::where_not_found,
    ));
    Router::new().fallback_service(tower::ServiceExt::map_request(router, api_path_trimmed))
}

/// The request with an API path's trailing slashes left out. kube-apiserver reads an API
/// request's resource from its path trimmed of slashes at both ends (`RequestInfoFactory`),
/// and go-restful serves `/version/` as `/version`: `/api/v1/pods/` lists pods and
/// `/apis/` lists the groups there. The official Python client asks for `/version/`,
/// `/api/`, `/apis/` and `/api/v1/` so (`VersionApi.get_code`, `get_api_versions`,
/// `get_api_resources`). Other paths are left as sent, as kube-apiserver answers
/// `/healthz/` or `/openapi/v3/` with 404; so is a slash inside the path (`/api//v1`).
fn api_path_trimmed(mut request: axum::extract::Request) -> axum::extract::Request {
    let path = request.uri().path();
    let trimmed = path.trim_end_matches('/');
    let api = |p: &str| {
        p == "/version"
            || p == "/api"
            || p == "/apis"
            || p.starts_with("/api/")
            || p.starts_with("/apis/")
    };
    if trimmed.len() == path.len() || !api(trimmed) {
        return request;
    }
    let rewritten = match request.uri().query() {
        Some(query) => format!("{trimmed}?{query}"),
        None => trimmed.to_owned(),
    };
    let mut parts = request.uri().clone().into_parts();
    parts.path_and_query = rewritten.parse().ok();
    if let Ok(uri) = axum::http::Uri::from_parts(parts) {
        *request.uri_mut() = uri;
    }
    request
}

/// Whether `path` lies in a group a server of `kind` objects serves, where kube-apiserver
/// answers a path it lacks with a `NotFound` Status: `/api` and below, and `/apis/{group}`
/// and below for a group `/apis` lists. Elsewhere (`/foo`, a group it does not have) it
/// answers with Go's plain-text 404.
fn in_served_group(kind: ObjectKind, path: &str) -> bool {
    if path == "/api" || path.starts_with("/api/") {
        return true;
    }
    let Some(group) = path.strip_prefix("/apis/") else {
        return false;
    };
    let group = group.split('/').next().unwrap_or_default();
    (Apps::served_with(kind) && group == Apps::name(kind))
        || (SampledGroup::served_with(kind) && group == SampledGroup::name(kind))
        || records::GROUPS.contains(&group)
        || reviews::REVIEW_GROUPS.contains(&group)
}

/// The status subresource of `kind`, in group `G`: the object read (as a GET of it
/// answers), replaced or patched by the object's handlers for [`ToStatus`].
fn status<G: Group>(router: Router<ApiServer>, kind: ObjectKind) -> Router<ApiServer> {
    let root = G::root(kind);
    if kind.namespaced() {
        router.route(
            &format!("{root}/namespaces/{{namespace}}/{{resource}}/{{name}}/status"),
            get(get_status::<G>)
                .put(write::replace::<G, ToStatus>)
                .patch(write::patch::<G, ToStatus>)
                .fallback(method_not_allowed),
        )
    } else {
        router.route(
            &format!("{root}/{{resource}}/{{name}}/status"),
            get(get_cluster_status::<G>)
                .put(write::replace_cluster::<G, ToStatus>)
                .patch(write::patch_cluster::<G, ToStatus>)
                .fallback(method_not_allowed),
        )
    }
}

/// A named group's discovery documents and resources.
fn named_group<G: Group, S: Serving>(
    router: Router<ApiServer>,
    kind: ObjectKind,
) -> Router<ApiServer> {
    let root = G::root(kind);
    let router = router
        .route(
            &format!("/apis/{}", G::name(kind)),
            get(discovery::api_group::<G>).fallback(method_not_allowed),
        )
        .route(
            root,
            get(discovery::group_resources::<G, S>).fallback(method_not_allowed),
        )
        .route(
            &format!("/openapi/v3{root}"),
            get(discovery::openapi_v3_group::<G, S>).fallback(method_not_allowed),
        );
    in_namespaces::<G>(cluster_scope::<G>(router, kind), kind)
}

/// The scale subresource in `apps` (Deployments'; the core group's kinds have none here,
/// and a server of those keeps its routes, and its figures, as they were).
fn scale(router: Router<ApiServer>, kind: ObjectKind) -> Router<ApiServer> {
    let root = Apps::root(kind);
    router.route(
        &format!("{root}/namespaces/{{namespace}}/{{resource}}/{{name}}/scale"),
        get(write::scale::get::<Apps>)
            .put(write::scale::replace::<Apps>)
            .patch(write::scale::patch::<Apps>)
            .fallback(method_not_allowed),
    )
}

/// The routes of group `G`'s resources at the cluster's scope: collections (every
/// namespace's objects of a namespaced kind) and cluster-scoped objects.
fn cluster_scope<G: Group>(router: Router<ApiServer>, kind: ObjectKind) -> Router<ApiServer> {
    let root = G::root(kind);
    router
        .route(
            &format!("{root}/{{resource}}"),
            get(cluster_collection::<G>)
                .post(write::create_cluster::<G>)
                .delete(write::delete_collection_cluster::<G>)
                .fallback(method_not_allowed),
        )
        .route(
            &format!("{root}/{{resource}}/{{name}}"),
            get(get_cluster_object::<G>)
                .put(write::replace_cluster::<G, ToObject>)
                .patch(write::patch_cluster::<G, ToObject>)
                .delete(write::delete_cluster::<G>)
                .fallback(method_not_allowed),
        )
}

/// The routes of group `G`'s resources in namespaces: collections and objects.
fn in_namespaces<G: Group>(router: Router<ApiServer>, kind: ObjectKind) -> Router<ApiServer> {
    let root = G::root(kind);
    router
        .route(
            &format!("{root}/namespaces/{{namespace}}/{{resource}}"),
            get(namespaced_collection::<G>)
                .post(write::create::<G>)
                .delete(write::delete_collection::<G>)
                .fallback(method_not_allowed),
        )
        .route(
            &format!("{root}/namespaces/{{namespace}}/{{resource}}/{{name}}"),
            get(get_object::<G>)
                .put(write::replace::<G, ToObject>)
                .patch(write::patch::<G, ToObject>)
                .delete(write::delete::<G>)
                .fallback(method_not_allowed),
        )
}

async fn get_object<G: Group>(
    State(server): State<ApiServer>,
    ApiPath((namespace, resource, name)): ApiPath<(String, String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let kind = G::kind(server.spec().kind, &resource);
    if kind.is_some_and(|kind| !kind.namespaced()) {
        return unknown_resource();
    }
    let (form, wire) = match Form::of_request(&headers, kind, query.as_deref()) {
        Ok((form, wire, _)) => (form, wire),
        Err(response) => return *response,
    };
    by_name(&server, kind, &name, (form, wire), |s| {
        s.get_named(&namespace, &name)
    })
}

/// `GET {root}/namespaces/{namespace}/{resource}/{name}/status`: the object, for a kind
/// with a status subresource (404 for another, as kube-apiserver has no such path).
async fn get_status<G: Group>(
    server: State<ApiServer>,
    path: ApiPath<(String, String, String)>,
    query: RawQuery,
    headers: HeaderMap,
) -> Response {
    if !G::kind(server.spec().kind, &path.0.1).is_some_and(ObjectKind::has_status) {
        return unknown_resource();
    }
    get_object::<G>(server, path, query, headers).await
}

/// `GET {root}/{resource}/{name}/status`: a cluster-scoped object with a status
/// subresource.
async fn get_cluster_status<G: Group>(
    server: State<ApiServer>,
    path: ApiPath<(String, String)>,
    query: RawQuery,
    headers: HeaderMap,
) -> Response {
    if !G::kind(server.spec().kind, &path.0.0).is_some_and(ObjectKind::has_status) {
        return unknown_resource();
    }
    get_cluster_object::<G>(server, path, query, headers).await
}

/// `GET {root}/{resource}/{name}`: a cluster-scoped object (a namespaced kind has no
/// object at the cluster's scope: 404, as kube-apiserver).
async fn get_cluster_object<G: Group>(
    State(server): State<ApiServer>,
    ApiPath((resource, name)): ApiPath<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let kind = G::kind(server.spec().kind, &resource);
    if kind.is_none_or(ObjectKind::namespaced) {
        return unknown_resource();
    }
    let (form, wire) = match Form::of_request(&headers, kind, query.as_deref()) {
        Ok((form, wire, _)) => (form, wire),
        Err(response) => return *response,
    };
    by_name(&server, kind, &name, (form, wire), |s| {
        s.get_named("", &name)
    })
}

/// Answers a request for one object: the object `find` returns, or 404.
pub(super) fn by_name(
    server: &ApiServer,
    kind: Option<ObjectKind>,
    name: &str,
    (form, wire): (Form, Wire),
    find: impl FnOnce(&ApiServer) -> Option<Version>,
) -> Response {
    let Some(kind) = kind else {
        return unknown_resource();
    };
    let found = if kind == server.spec().kind {
        find(server)
    } else {
        None
    };
    match found {
        Some(version) => form.respond(StatusCode::OK, server.generator(), &version, wire),
        None => object_not_found(kind, name),
    }
}

/// Sends one request through the router, as kubectl would; returns the status code and
/// the body as JSON (null when it is not JSON). For tests.
#[cfg(test)]
pub(crate) async fn request(
    server: &ApiServer,
    method: &str,
    uri: &str,
    content_type: &str,
    body: &str,
) -> (StatusCode, serde_json::Value) {
    use tower::ServiceExt;
    let request = axum::http::Request::builder()
        .method(method)
        .uri(uri)
        .header(axum::http::header::CONTENT_TYPE, content_type)
        .header(
            axum::http::header::USER_AGENT,
            "kubectl/v1.32.0 (linux/amd64)",
        )
        .body(Body::from(body.to_owned()))
        .expect("a test request is well-formed");
    let response = router(server.clone())
        .oneshot(request)
        .await
        .expect("the router is infallible");
    let code = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("a body in memory reads");
    (code, serde_json::from_slice(&bytes).unwrap_or_default())
}

/// What a response body has sent within a moment of quiet: the whole body, or a watch's
/// events so far (a watch never ends by itself). For tests.
#[cfg(test)]
pub(super) async fn body_so_far(body: Body) -> Vec<u8> {
    let mut stream = body.into_data_stream();
    let mut all = Vec::new();
    while let Ok(Some(Ok(chunk))) = tokio::time::timeout(
        std::time::Duration::from_millis(50),
        futures::StreamExt::next(&mut stream),
    )
    .await
    {
        all.extend_from_slice(&chunk);
    }
    all
}

/// The events a watch at `uri` sends within a moment of quiet, each as JSON. For tests.
#[cfg(test)]
pub(crate) async fn watch_events(server: &ApiServer, uri: &str) -> Vec<serde_json::Value> {
    use tower::ServiceExt;
    let request = axum::http::Request::builder()
        .uri(uri)
        .body(Body::empty())
        .expect("a test request is well-formed");
    let response = router(server.clone())
        .oneshot(request)
        .await
        .expect("the router is infallible");
    let bytes = body_so_far(response.into_body()).await;
    serde_json::Deserializer::from_slice(&bytes)
        .into_iter()
        .collect::<Result<_, _>>()
        .expect("a watch sends JSON events")
}

#[cfg(test)]
mod apply_tests;
#[cfg(test)]
mod cluster_tests;
#[cfg(test)]
mod field_tests;
#[cfg(test)]
mod group_tests;
#[cfg(test)]
mod protobuf_tests;
#[cfg(test)]
mod sampled_tests;
#[cfg(test)]
mod scale_tests;
#[cfg(test)]
mod slash_tests;
#[cfg(test)]
mod status_tests;
#[cfg(test)]
mod tests;
