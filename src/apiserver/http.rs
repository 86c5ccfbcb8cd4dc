//! Routes, query parameters and bodies of the built-in apiserver (DESIGN.md section 3).
//!
//! LIST bodies are streamed: items are generated and encoded a chunk at a time while the
//! client reads, so the server never holds a whole response (kube-apiserver streams list
//! encoding too since v1.33). WATCH bodies are newline-delimited JSON events read from the
//! history as the client consumes them. Errors are `Status` objects with kube-apiserver's
//! codes and reasons.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{RawQuery, State};

use super::extract::ApiPath;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::watch;
use tokio::time::{Instant, Sleep};

use super::dispatch::WatcherSlot;
use super::generate::{self, Generator, Identity};
use super::selector::{FieldSelector, LabelSelector};
use super::state::{EventKind, Expired};
use super::written::{ObjectKey, Version, Written};
use super::{ApiServer, discovery, write};
use crate::scenario::ObjectKind;
use crate::scenario::ObjectSpec;

/// Target size of one streamed LIST chunk.
const LIST_CHUNK_BYTES: usize = 64 * 1024;
/// kube-apiserver's default watch timeout when the client sets none (`--min-request-timeout`).
const DEFAULT_WATCH_TIMEOUT: Duration = Duration::from_secs(1800);
/// Longest watch timeout honoured (a year); longer requests get this.
const MAX_WATCH_TIMEOUT_SECONDS: u64 = 365 * 24 * 3600;
/// kube-apiserver sends a bookmark about every minute to watchers that allow them...
const BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);
/// ...and one about two seconds before the watch's deadline.
const BOOKMARK_BEFORE_DEADLINE: Duration = Duration::from_secs(2);

/// The apiserver's routes, ready to serve on any transport.
pub fn router(server: ApiServer) -> Router {
    Router::new()
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
            get(discovery::api_resources).fallback(method_not_allowed),
        )
        .route(
            "/apis",
            get(discovery::api_groups).fallback(method_not_allowed),
        )
        .route(
            "/openapi/v3",
            get(discovery::openapi_v3_paths).fallback(method_not_allowed),
        )
        .route(
            "/openapi/v3/api/v1",
            get(discovery::openapi_v3_core).fallback(method_not_allowed),
        )
        .route(
            "/api/v1/{resource}",
            get(cluster_collection).fallback(method_not_allowed),
        )
        .route(
            "/api/v1/namespaces/{namespace}",
            get(get_namespace).fallback(method_not_allowed),
        )
        .route(
            "/api/v1/namespaces/{namespace}/{resource}",
            get(namespaced_collection)
                .post(write::create)
                .delete(write::delete_collection)
                .fallback(method_not_allowed),
        )
        .route(
            "/api/v1/namespaces/{namespace}/{resource}/{name}",
            get(get_object)
                .put(write::replace)
                .patch(write::patch)
                .delete(write::delete)
                .fallback(method_not_allowed),
        )
        .fallback(not_found)
        .with_state(server)
}

async fn cluster_collection(
    State(server): State<ApiServer>,
    ApiPath(resource): ApiPath<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let form = Form::accepted(&headers);
    collection(server, &resource, None, query.as_deref(), form).await
}

async fn namespaced_collection(
    State(server): State<ApiServer>,
    ApiPath((namespace, resource)): ApiPath<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let form = Form::accepted(&headers);
    collection(server, &resource, Some(namespace), query.as_deref(), form).await
}

/// What of each object a response carries, from the request's `Accept` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Form {
    /// The whole object.
    Full,
    /// `PartialObjectMetadata`: kind, apiVersion `meta.k8s.io/v1` and `metadata` only.
    Metadata,
}

impl Form {
    /// The form the first JSON media type of `Accept` asks for. Metadata informers ask
    /// `application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1` on LIST and
    /// `as=PartialObjectMetadata` on WATCH (client-go puts a protobuf type first, which this
    /// server skips); kube-apiserver serves either on both. Anything else (`as=Table`
    /// included, which this server does not render) gets whole objects.
    fn accepted(headers: &HeaderMap) -> Form {
        let accept = headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','));
        for media in accept {
            let mut parts = media.split(';').map(str::trim);
            let essence = parts.next().unwrap_or_default();
            if !matches!(essence, "application/json" | "*/*" | "application/*") {
                continue;
            }
            let is_metadata = parts.any(|p| {
                matches!(
                    p,
                    "as=PartialObjectMetadata" | "as=PartialObjectMetadataList"
                )
            });
            return if is_metadata {
                Form::Metadata
            } else {
                Form::Full
            };
        }
        Form::Full
    }

    /// Appends `version` in this form to `buf`.
    fn write(self, buf: &mut Vec<u8>, generator: &Generator, version: &Version) {
        match self {
            Form::Full => version.write(buf, generator),
            Form::Metadata => version.write_metadata(buf, generator),
        }
    }
}

async fn get_object(
    State(server): State<ApiServer>,
    ApiPath((namespace, resource, name)): ApiPath<(String, String, String)>,
) -> Response {
    by_name(&server, &resource, &name, |s| {
        s.get_named(&namespace, &name)
    })
}

/// `GET /api/v1/namespaces/{namespace}`: the namespaces objects live in, and `default`.
/// kubectl asks after a 404 to tell a missing object from a missing namespace.
async fn get_namespace(
    State(server): State<ApiServer>,
    ApiPath(namespace): ApiPath<String>,
) -> Response {
    if !server.has_namespace(&namespace) {
        return namespace_not_found(&namespace);
    }
    let body = json!({
        "kind": "Namespace",
        "apiVersion": "v1",
        "metadata": {"name": namespace, "labels": {"kubernetes.io/metadata.name": namespace}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    });
    json_response(StatusCode::OK, Body::from(body.to_string()))
}

/// 404 for a namespace that does not exist.
pub(super) fn namespace_not_found(namespace: &str) -> Response {
    let message = format!("namespaces {namespace:?} not found");
    ApiError::new(StatusCode::NOT_FOUND, "NotFound", message)
        .about(namespace, "namespaces")
        .into_response()
}

/// Answers a request for one object: the object `find` returns, or 404.
pub(super) fn by_name(
    server: &ApiServer,
    resource: &str,
    name: &str,
    find: impl FnOnce(&ApiServer) -> Option<Version>,
) -> Response {
    let Some(kind) = ObjectKind::from_plural(resource) else {
        return unknown_resource();
    };
    let found = if kind == server.spec().kind {
        find(server)
    } else {
        None
    };
    match found {
        Some(version) => object_response(StatusCode::OK, server.generator(), &version),
        None => object_not_found(kind, name),
    }
}

/// One object as the response body.
pub(super) fn object_response(
    code: StatusCode,
    generator: &Generator,
    version: &Version,
) -> Response {
    let mut buf = Vec::with_capacity(8 * 1024);
    version.write(&mut buf, generator);
    json_response(code, Body::from(buf))
}

pub(super) fn object_not_found(kind: ObjectKind, name: &str) -> Response {
    ApiError::not_found(kind, name).into_response()
}

async fn not_found() -> Response {
    unknown_resource()
}

fn unknown_resource() -> Response {
    ApiError::unknown_resource().into_response()
}

pub(super) async fn method_not_allowed() -> Response {
    status(
        StatusCode::METHOD_NOT_ALLOWED,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
    )
}

async fn collection(
    server: ApiServer,
    resource: &str,
    namespace: Option<String>,
    query: Option<&str>,
    form: Form,
) -> Response {
    let Some(kind) = ObjectKind::from_plural(resource) else {
        return unknown_resource();
    };
    let query = match Query::parse(query.unwrap_or_default()).and_then(Query::validated) {
        Ok(q) => q,
        Err(e) => return e.into_response(),
    };
    let selection = Selection::new(&server, kind, namespace.as_deref(), &query);
    if query.watch {
        server.count_request(|r| r.watch += 1);
        watch(server, selection, &query, form).await
    } else {
        server.count_request(|r| r.list += 1);
        list(server, selection, &query, form).await
    }
}

/// Which objects a request covers: resource, namespace and selectors.
#[derive(Debug, Clone)]
pub(super) struct Selection {
    pub(super) kind: ObjectKind,
    /// The server holds objects of this kind.
    holds: bool,
    namespace: Option<NamespaceFilter>,
    labels: LabelSelector,
    fields: FieldSelector,
}

/// A namespace by name and, when generated objects live there, by ordinal (objects are
/// spread round robin over the ordinals).
#[derive(Debug, Clone)]
struct NamespaceFilter {
    name: String,
    ordinal: Option<u32>,
}

impl Selection {
    pub(super) fn new(
        server: &ApiServer,
        kind: ObjectKind,
        namespace: Option<&str>,
        q: &Query,
    ) -> Selection {
        Selection {
            kind,
            holds: kind == server.spec().kind,
            namespace: namespace.map(|ns| NamespaceFilter {
                name: ns.to_owned(),
                ordinal: server.namespace_ordinal(ns),
            }),
            labels: q.label_selector.clone(),
            fields: q.field_selector.clone(),
        }
    }

    pub(super) fn matches(&self, spec: &ObjectSpec, version: &Version) -> bool {
        self.matches_parts(spec, &version.id, version.written.as_deref())
    }

    /// [`Selection::matches`] for a version not yet resolved into a [`Version`]: the
    /// filter of a LIST, which resolves only the objects it keeps.
    fn matches_parts(&self, spec: &ObjectSpec, id: &Identity, written: Option<&Written>) -> bool {
        if !self.holds {
            return false;
        }
        match written {
            Some(w) => self.matches_written(w),
            None => self.matches_generated(spec, id),
        }
    }

    fn matches_written(&self, w: &Written) -> bool {
        let key = w.key();
        self.namespace
            .as_ref()
            .is_none_or(|ns| ns.name == key.namespace)
            && self.fields.matches(&key.name, &key.namespace)
            && self.labels.matches(w.labels())
    }

    fn matches_generated(&self, spec: &ObjectSpec, id: &Identity) -> bool {
        if self
            .namespace
            .as_ref()
            .is_some_and(|ns| ns.ordinal != Some(id.index % spec.namespaces))
        {
            return false;
        }
        if !self.fields.is_empty() {
            // `metadata.name=X` (kubectl's wait after a delete) pins one index: rule the
            // rest out without building their names.
            if let Some(name) = self.fields.exact_name()
                && generate::index_of_name(name) != Some(id.index)
            {
                return false;
            }
            let name = generate::name(spec, id.index);
            let namespace = generate::namespace(spec, id.index);
            if !self.fields.matches(&name, &namespace) {
                return false;
            }
        }
        self.labels.is_empty()
            || self
                .labels
                .matches(&generate::labels(spec, id.index, id.generation))
    }
}

/// The query parameters this server understands.
#[derive(Debug, Default)]
pub(super) struct Query {
    watch: bool,
    limit: Option<usize>,
    continue_token: Option<String>,
    resource_version: Option<String>,
    resource_version_match: Option<String>,
    timeout: Option<Duration>,
    allow_watch_bookmarks: bool,
    send_initial_events: Option<bool>,
    label_selector: LabelSelector,
    field_selector: FieldSelector,
}

impl Query {
    /// Decodes the parameters; a value that does not decode is a 400 Bad Request.
    pub(super) fn parse(raw: &str) -> Result<Query, ApiError> {
        Query::decode(raw).map_err(ApiError::bad_request)
    }

    fn decode(raw: &str) -> Result<Query, String> {
        let mut q = Query::default();
        for (key, value) in form_urlencoded::parse(raw.as_bytes()) {
            let value = value.into_owned();
            match &*key {
                "watch" => q.watch = parse_bool(&value),
                "limit" => {
                    let n: i64 = value.parse().map_err(|_| invalid(&key, &value))?;
                    // kube-apiserver treats limit <= 0 as no limit.
                    q.limit = usize::try_from(n).ok().filter(|&n| n > 0);
                }
                "continue" => q.continue_token = Some(value).filter(|v| !v.is_empty()),
                "resourceVersion" => q.resource_version = Some(value).filter(|v| !v.is_empty()),
                "resourceVersionMatch" => {
                    q.resource_version_match = Some(value).filter(|v| !v.is_empty());
                }
                "timeoutSeconds" => {
                    let secs: u64 = value.parse().map_err(|_| invalid(&key, &value))?;
                    // Capped so that a deadline computed from it cannot overflow.
                    q.timeout = Some(Duration::from_secs(secs.min(MAX_WATCH_TIMEOUT_SECONDS)));
                }
                "allowWatchBookmarks" => q.allow_watch_bookmarks = parse_bool(&value),
                "labelSelector" => q.label_selector = LabelSelector::parse(&value)?,
                "fieldSelector" => q.field_selector = FieldSelector::parse(&value)?,
                "sendInitialEvents" => q.send_initial_events = Some(parse_bool(&value)),
                // kube-apiserver ignores parameters it does not know; so do we.
                _ => {}
            }
        }
        Ok(q)
    }
}

impl Query {
    /// Checks the combinations kube-apiserver's `ValidateListOptions` forbids; a violation
    /// is a 422 Invalid, as there.
    fn validated(self) -> Result<Query, ApiError> {
        let forbid = |field: &str, why: String| Err(ApiError::invalid_list_options(field, why));
        let rvm = self.resource_version_match.as_deref();
        if self.watch {
            if self.send_initial_events.is_some() && rvm != Some("NotOlderThan") {
                return forbid(
                    "resourceVersionMatch",
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
                        .to_owned(),
                );
            }
            if let Some(m) = rvm {
                if self.send_initial_events.is_none() {
                    return forbid(
                        "resourceVersionMatch",
                        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided".to_owned(),
                    );
                }
                if m != "NotOlderThan" {
                    return forbid(
                        "resourceVersionMatch",
                        format!("Unsupported value: {m:?}: supported values: \"NotOlderThan\""),
                    );
                }
            }
            return Ok(self);
        }
        if self.send_initial_events.is_some() {
            return forbid(
                "sendInitialEvents",
                "sendInitialEvents is forbidden for list".to_owned(),
            );
        }
        if let Some(m) = rvm {
            if self.resource_version.is_none() {
                return forbid(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden unless resourceVersion is provided"
                        .to_owned(),
                );
            }
            if self.continue_token.is_some() {
                return forbid(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided".to_owned(),
                );
            }
            if m != "Exact" && m != "NotOlderThan" {
                return forbid(
                    "resourceVersionMatch",
                    format!(
                        "Unsupported value: {m:?}: supported values: \"Exact\", \"NotOlderThan\", \"\""
                    ),
                );
            }
            if m == "Exact" && self.resource_version.as_deref() == Some("0") {
                return forbid(
                    "resourceVersionMatch",
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""
                        .to_owned(),
                );
            }
        }
        Ok(self)
    }
}

fn invalid(key: &str, value: &str) -> String {
    format!("invalid value {value:?} for query parameter {key}")
}

/// A boolean query parameter as kube-apiserver reads it (apimachinery's
/// `Convert_Slice_string_To_bool`): "0" and "false" in any case are false, and anything
/// else, the empty string and "yes" included, is true. Never an error.
fn parse_bool(value: &str) -> bool {
    !(value == "0" || value.eq_ignore_ascii_case("false"))
}

fn parse_rv(value: &str) -> Result<u64, String> {
    value
        .parse()
        .map_err(|_| format!("invalid resource version {value:?}"))
}

/// A continue token shaped like kube-apiserver's: base64 of
/// `{"v":"meta.k8s.io/v1","rv":N,"start":"<namespace>/<name>\u0000"}`.
#[derive(Debug, Serialize, Deserialize)]
struct ContinueToken {
    v: String,
    rv: u64,
    start: String,
}

const TOKEN_VERSION: &str = "meta.k8s.io/v1";

fn encode_continue(spec: &ObjectSpec, rv: u64, last: &Version) -> String {
    let start = match &last.written {
        Some(w) => format!("{}/{}\u{0}", w.key().namespace, w.key().name),
        None => format!(
            "{}/{}\u{0}",
            generate::namespace(spec, last.id.index),
            generate::name(spec, last.id.index)
        ),
    };
    let token = ContinueToken {
        v: TOKEN_VERSION.to_owned(),
        rv,
        start,
    };
    BASE64.encode(serde_json::to_vec(&token).expect("a token serializes"))
}

/// The token's resourceVersion and the key of the last object listed.
fn decode_continue(token: &str) -> Result<(u64, ObjectKey), String> {
    let invalid = || {
        "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)".to_owned()
    };
    let bytes = BASE64.decode(token).map_err(|_| invalid())?;
    let token: ContinueToken = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
    if token.v != TOKEN_VERSION || token.rv == 0 {
        return Err(invalid());
    }
    let key = token.start.strip_suffix('\u{0}').ok_or_else(invalid)?;
    let (namespace, name) = key.split_once('/').ok_or_else(invalid)?;
    let key = ObjectKey {
        namespace: namespace.to_owned(),
        name: name.to_owned(),
    };
    Ok((token.rv, key))
}

/// Up to `limit` objects of `selection` as of `rv` (the newest if `None`), from index
/// `from`: the objects, their resourceVersion and the index the next page starts at.
///
/// With [`ApiServer::yield_during_scans`] on (`serve`), the table is scanned a chunk of
/// records at a time; between chunks the state is unlocked and the task yields, so a long
/// scan holds neither the server's one thread nor its state for long. Changes made
/// meanwhile are rolled back through the history like any change after `rv`; one compacted
/// away meanwhile ends the scan with `Expired`, as a LIST continued too late does.
async fn scan(
    server: &ApiServer,
    selection: &Selection,
    mut from: u32,
    limit: Option<usize>,
    rv: Option<u64>,
) -> Result<(Vec<Version>, u64, Option<u32>), Expired> {
    let spec = server.spec();
    let mut items = Vec::new();
    let mut rv = rv;
    loop {
        let resume = {
            let state = server.state();
            let at = *rv.get_or_insert_with(|| state.resource_version());
            let left = limit.map(|limit| limit - items.len());
            let scan = state.scan_where(from, left, at, server.scan_chunk(), |id| {
                selection.matches_parts(spec, id, state.written(id).map(|w| &**w))
            })?;
            items.extend(scan.page.items.iter().map(|id| state.version(*id)));
            if scan.resume.is_none() {
                return Ok((items, scan.page.resource_version, scan.page.next));
            }
            scan.resume
        };
        from = resume.expect("a scan that stopped early says where");
        tokio::task::yield_now().await;
    }
}

async fn list(server: ApiServer, selection: Selection, q: &Query, form: Form) -> Response {
    let head = server.resource_version();
    let (rv, from, limit) = match list_plan(q, head, |key| server.index_of_key(key)) {
        Ok(plan) => plan,
        Err(e) => return e.into_response(),
    };
    let generator = server.generator().clone();
    let page = scan(&server, &selection, from, limit, Some(rv)).await;
    let (items, resource_version, next) = match page {
        Ok(page) => page,
        Err(expired) => {
            server.count_request(|r| r.expired += 1);
            return expired_response(expired, q.continue_token.is_some());
        }
    };
    let continue_token = next.map(|_| {
        let last = items.last().expect("a page with a next index has items");
        encode_continue(generator.spec(), resource_version, last)
    });
    let metadata = ListMeta {
        resource_version: resource_version.to_string(),
        continue_token,
    };
    let (kind, api_version) = match form {
        Form::Full => (selection.kind.as_str(), "v1"),
        Form::Metadata => ("PartialObjectMetadata", "meta.k8s.io/v1"),
    };
    let head = format!(
        r#"{{"kind":"{kind}List","apiVersion":"{api_version}","metadata":{},"items":["#,
        serde_json::to_string(&metadata).expect("list metadata serializes")
    );
    let chunks = ListChunks {
        server,
        generator,
        form,
        items: items.into_iter(),
        pending: Some(head.into_bytes()),
        first: true,
        done: false,
    };
    json_response(
        StatusCode::OK,
        Body::from_stream(futures::stream::iter(chunks)),
    )
}

/// A list's `metadata`; `continue` is absent on the last page.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ListMeta {
    resource_version: String,
    #[serde(rename = "continue", skip_serializing_if = "Option::is_none")]
    continue_token: Option<String>,
}

/// A request the server refuses: a `Status` with kube-apiserver's code and reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ApiError {
    pub(super) code: StatusCode,
    pub(super) reason: &'static str,
    pub(super) message: String,
    /// The Status's `details`: which object (name, resource) the error is about.
    details: Option<(String, &'static str)>,
}

impl ApiError {
    /// A refusal with this code, reason and message.
    pub(super) fn new(
        code: StatusCode,
        reason: &'static str,
        message: impl Into<String>,
    ) -> ApiError {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    /// Names the object the error is about, as kube-apiserver's `details`.
    fn about(mut self, name: &str, resource: &'static str) -> ApiError {
        self.details = Some((name.to_owned(), resource));
        self
    }

    /// A path naming no resource this server knows (404).
    pub(super) fn unknown_resource() -> ApiError {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    /// No object `name` of `kind` (404).
    pub(super) fn not_found(kind: ObjectKind, name: &str) -> ApiError {
        let message = format!("{} {name:?} not found", kind.plural());
        ApiError::new(StatusCode::NOT_FOUND, "NotFound", message).about(name, kind.plural())
    }

    pub(super) fn bad_request(message: String) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "BadRequest", message)
    }

    /// kube-apiserver's answer to invalid ListOptions: 422 with the field at fault.
    fn invalid_list_options(field: &str, why: String) -> ApiError {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Invalid",
            format!("ListOptions.meta.k8s.io \"\" is invalid: {field}: Forbidden: {why}"),
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = status_body(self.code.as_u16(), self.reason, &self.message);
        if let Some((name, kind)) = self.details {
            body["details"] = json!({"name": name, "kind": kind});
        }
        json_response(self.code, Body::from(body.to_string()))
    }
}

/// Which state a LIST reads: (resourceVersion, first index, page size).
/// `index_of` finds the object a continue token names.
fn list_plan(
    q: &Query,
    head: u64,
    index_of: impl FnOnce(&ObjectKey) -> Option<u32>,
) -> Result<(u64, u32, Option<usize>), ApiError> {
    if let Some(token) = &q.continue_token {
        if q.resource_version.is_some() {
            return Err(ApiError::bad_request(
                "specifying resource version is not allowed when using continue".to_owned(),
            ));
        }
        let (rv, last) = decode_continue(token).map_err(ApiError::bad_request)?;
        let from = index_of(&last)
            .and_then(|i| i.checked_add(1))
            .ok_or_else(|| {
                ApiError::bad_request(format!(
                    "continue key is not valid: no object {}/{}",
                    last.namespace, last.name
                ))
            })?;
        return Ok((rv, from, q.limit));
    }
    let exact = q.resource_version_match.as_deref() == Some("Exact");
    match q.resource_version.as_deref() {
        // Unset: the newest state (a consistent read).
        None => Ok((head, 0, q.limit)),
        // "0": any version, served from the watch cache, which ignores `limit`.
        Some("0") => Ok((head, 0, None)),
        Some(v) => {
            let rv = parse_rv(v).map_err(ApiError::bad_request)?;
            if rv > head {
                return Err(ApiError::new(
                    StatusCode::GATEWAY_TIMEOUT,
                    "Timeout",
                    format!("Too large resource version: {rv}, current: {head}"),
                ));
            }
            // A version with a limit and no match is an exact read, as in kube-apiserver;
            // NotOlderThan (or no limit) is served from the newest state.
            let exact = exact || (q.resource_version_match.is_none() && q.limit.is_some());
            Ok((if exact { rv } else { head }, 0, q.limit))
        }
    }
}

/// Streams a LIST body: the head, then items encoded about [`LIST_CHUNK_BYTES`] at a time.
struct ListChunks {
    server: ApiServer,
    generator: Arc<Generator>,
    form: Form,
    items: std::vec::IntoIter<Version>,
    pending: Option<Vec<u8>>,
    first: bool,
    done: bool,
}

impl Iterator for ListChunks {
    type Item = Result<Bytes, Infallible>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut buf = self
            .pending
            .take()
            .unwrap_or_else(|| Vec::with_capacity(LIST_CHUNK_BYTES + 16 * 1024));
        while buf.len() < LIST_CHUNK_BYTES {
            let Some(version) = self.items.next() else {
                buf.extend_from_slice(b"]}");
                self.done = true;
                break;
            };
            if !std::mem::take(&mut self.first) {
                buf.push(b',');
            }
            self.form.write(&mut buf, &self.generator, &version);
            crate::measure::timeline::object_sent();
        }
        self.server.count_request(|r| r.bytes += buf.len() as u64);
        Some(Ok(Bytes::from(buf)))
    }
}

async fn watch(server: ApiServer, selection: Selection, q: &Query, form: Form) -> Response {
    let head = server.head_receiver();
    let disconnect = server.disconnect_receiver();
    let requested = match q.resource_version.as_deref() {
        None | Some("0") => None,
        Some(v) => match parse_rv(v) {
            Ok(rv) => Some(rv),
            Err(m) => return ApiError::bad_request(m).into_response(),
        },
    };
    // Which state the watch starts from, and whether it first sends that state as ADDED.
    let (snapshot, start) = match (q.send_initial_events, requested) {
        // Watch-list (KEP-3157): the state, an initial-events-end bookmark, then changes.
        (Some(true), _) => (true, None),
        // Legacy: no resourceVersion (or "0") means "the state as ADDED, then changes".
        (None, None) => (true, None),
        (Some(false), None) => (false, None),
        (_, Some(rv)) => (false, Some(rv)),
    };
    let (rv, initial) = if snapshot {
        // The state as of the newest resourceVersion when the scan starts; changes after
        // it come as events.
        match scan(&server, &selection, 0, None, None).await {
            Ok((items, rv, _)) => (rv, items),
            Err(expired) => {
                server.count_request(|r| r.expired += 1);
                return expired_response(expired, false);
            }
        }
    } else {
        (
            start.unwrap_or_else(|| server.resource_version()),
            Vec::new(),
        )
    };
    let now = Instant::now();
    let deadline = now + q.timeout.unwrap_or(DEFAULT_WATCH_TIMEOUT);
    let slot = server.dispatcher().register(rv);
    let cursor = WatchCursor {
        generator: server.generator().clone(),
        form,
        server,
        selection,
        initial: initial.into_iter(),
        initial_events_end: (q.send_initial_events == Some(true) && q.allow_watch_bookmarks)
            .then_some(rv),
        initial_state: snapshot,
        slot,
        rv,
        head,
        disconnect,
        deadline_at: deadline,
        deadline: Box::pin(tokio::time::sleep_until(deadline)),
        bookmark: q
            .allow_watch_bookmarks
            .then(|| Box::pin(tokio::time::sleep_until(next_bookmark(now, deadline)))),
        finished: false,
    };
    let events = futures::stream::unfold(cursor, |mut cursor| async move {
        let line = cursor.next_line().await?;
        cursor.server.count_request(|r| {
            r.watch_events += 1;
            r.bytes += line.len() as u64;
        });
        crate::measure::timeline::object_sent();
        cursor.slot.delivered(cursor.rv);
        cursor.server.dispatcher().progressed();
        Some((Ok::<_, Infallible>(line), cursor))
    });
    json_response(StatusCode::OK, Body::from_stream(events))
}

/// One watcher's position: initial events still to send, then the history after `rv`.
struct WatchCursor {
    server: ApiServer,
    generator: Arc<Generator>,
    form: Form,
    selection: Selection,
    initial: std::vec::IntoIter<Version>,
    /// The resourceVersion of the initial-events-end bookmark still to send (watch-list).
    initial_events_end: Option<u64>,
    /// The watch began with the state as ADDED events and has not sent them all yet.
    initial_state: bool,
    /// This watcher as the slow-watcher dispatcher sees it.
    slot: Arc<WatcherSlot>,
    rv: u64,
    head: watch::Receiver<u64>,
    disconnect: watch::Receiver<u64>,
    deadline_at: Instant,
    deadline: Pin<Box<Sleep>>,
    /// When the next bookmark is due; `None` when the client did not allow bookmarks.
    bookmark: Option<Pin<Box<Sleep>>>,
    finished: bool,
}

/// When the bookmark after `now` is due: a minute on, but no later than two seconds
/// before the deadline; after that point, never.
fn next_bookmark(now: Instant, deadline: Instant) -> Instant {
    let last = deadline - BOOKMARK_BEFORE_DEADLINE;
    if now < last {
        (now + BOOKMARK_INTERVAL).min(last)
    } else {
        deadline + BOOKMARK_INTERVAL
    }
}

impl WatchCursor {
    async fn next_line(&mut self) -> Option<Bytes> {
        // A terminated watch-list that still owes its initial-events-end bookmark closes
        // gracefully: kube-apiserver schedules that bookmark at once, so it is already in
        // the watcher's input when the dispatcher gives up on it, and the cacher then
        // drains the input (`graceful = true` in cacheWatcher.add) instead of cutting the
        // stream. The client gets its whole initial state and re-watches from the
        // bookmark; a legacy `resourceVersion=0` watch has no such bookmark and is cut.
        let graceful = self.initial_events_end.is_some();
        if self.finished
            || (self.slot.is_terminated() && !graceful)
            || self.disconnect.has_changed().unwrap_or(true)
        {
            return None;
        }
        if let Some(version) = self.initial.next() {
            return Some(event_line(
                EventKind::Added,
                &self.generator,
                self.form,
                &version,
            ));
        }
        // The client has read every initial event: a legacy watch asks for the next line,
        // a watch-list gets its end bookmark.
        if std::mem::take(&mut self.initial_state) {
            self.server
                .count_request(|r| r.initial_events_completed += 1);
        }
        if let Some(rv) = self.initial_events_end.take() {
            return Some(bookmark_line(self.selection.kind, self.form, rv, true));
        }
        self.slot.following();
        loop {
            // Mark the head seen before reading the history: a mutation after this point
            // wakes `changed()` below, so no event is missed.
            self.head.borrow_and_update();
            if self.disconnect.has_changed().unwrap_or(true) || self.slot.is_terminated() {
                return None;
            }
            let (head, next) = {
                let state = self.server.state();
                let next = state.event_after(self.rv).map(|event| {
                    event.map(|e| {
                        // For an update, the version it replaced decides whether the
                        // object moved into or out of the selection.
                        let before = (e.kind == EventKind::Modified).then(|| {
                            state.version(Identity {
                                generation: e.object.generation - 1,
                                resource_version: e.previous_resource_version,
                                ..e.object
                            })
                        });
                        (e.kind, state.version(e.object), before)
                    })
                });
                (state.resource_version(), next)
            };
            match next {
                Err(expired) => {
                    // kube-apiserver answers a too-old watch with HTTP 200 and one ERROR
                    // event, then closes the stream.
                    self.finished = true;
                    self.server.count_request(|r| r.expired += 1);
                    return Some(error_line(expired));
                }
                Ok(Some((kind, now, before))) => {
                    self.rv = now.id.resource_version;
                    if let Some(kind) = self.visible(kind, &now, before.as_ref()) {
                        return Some(self.event_line(kind, &now));
                    }
                }
                Ok(None) => {
                    // No event of this resource after `rv`: the watch is current up to the
                    // head, which writes to other resources may have moved on (as etcd's
                    // progress notifications tell kube-apiserver's watch cache).
                    if head > self.rv {
                        self.rv = head;
                        self.slot.delivered(head);
                    }
                    // Caught up: `rv` is the newest resourceVersion, which is what a
                    // bookmark reports.
                    let bookmark_due = async {
                        match self.bookmark.as_mut() {
                            Some(timer) => timer.as_mut().await,
                            None => std::future::pending().await,
                        }
                    };
                    tokio::select! {
                        // Polled in order so a run never depends on tokio's random choice.
                        biased;
                        changed = self.head.changed() => {
                            if changed.is_err() {
                                return None;
                            }
                        }
                        _ = self.disconnect.changed() => return None,
                        () = self.server.dispatcher().terminated() => {}
                        () = bookmark_due => {
                            let next = next_bookmark(Instant::now(), self.deadline_at);
                            if let Some(timer) = self.bookmark.as_mut() {
                                timer.as_mut().reset(next);
                            }
                            return Some(bookmark_line(
                                self.selection.kind,
                                self.form,
                                self.rv,
                                false,
                            ));
                        }
                        () = &mut self.deadline => return None,
                    }
                }
            }
        }
    }

    /// The line for `now` seen as `kind`: shared with other watchers when the server
    /// shares encodings (`serve`), else encoded here.
    fn event_line(&self, kind: EventKind, now: &Version) -> Bytes {
        let (generator, form) = (&self.generator, self.form);
        self.server
            .shared_line((now.id.resource_version, kind, form), || {
                event_line(kind, generator, form, now)
            })
    }

    /// How this watcher sees `event`, if at all. An update that moves an object into or out
    /// of the selection is an ADDED or a DELETED for it, as in kube-apiserver's watch cache.
    fn visible(
        &self,
        kind: EventKind,
        now: &Version,
        before: Option<&Version>,
    ) -> Option<EventKind> {
        let is = self.selection.matches(self.generator.spec(), now);
        match (kind, before) {
            (EventKind::Added | EventKind::Deleted, _) | (EventKind::Modified, None) => {
                is.then_some(kind)
            }
            (EventKind::Modified, Some(before)) => {
                match (self.selection.matches(self.generator.spec(), before), is) {
                    (true, true) => Some(EventKind::Modified),
                    (false, true) => Some(EventKind::Added),
                    (true, false) => Some(EventKind::Deleted),
                    (false, false) => None,
                }
            }
        }
    }
}

fn event_line(kind: EventKind, generator: &Generator, form: Form, version: &Version) -> Bytes {
    let mut buf = Vec::with_capacity(8 * 1024);
    buf.extend_from_slice(br#"{"type":""#);
    buf.extend_from_slice(kind.as_str().as_bytes());
    buf.extend_from_slice(br#"","object":"#);
    form.write(&mut buf, generator, version);
    buf.extend_from_slice(b"}\n");
    Bytes::from(buf)
}

fn bookmark_line(kind: ObjectKind, form: Form, rv: u64, initial_events_end: bool) -> Bytes {
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if initial_events_end {
        metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    // A bookmark takes the form of the watch's objects, as kube-apiserver transforms it.
    let (kind, api_version) = match form {
        Form::Full => (kind.as_str(), "v1"),
        Form::Metadata => ("PartialObjectMetadata", "meta.k8s.io/v1"),
    };
    let event = json!({
        "type": "BOOKMARK",
        "object": {"kind": kind, "apiVersion": api_version, "metadata": metadata},
    });
    let mut line = event.to_string().into_bytes();
    line.push(b'\n');
    Bytes::from(line)
}

fn error_line(expired: Expired) -> Bytes {
    let event =
        json!({"type": "ERROR", "object": status_body(410, "Expired", &expired.to_string())});
    let mut line = event.to_string().into_bytes();
    line.push(b'\n');
    Bytes::from(line)
}

fn expired_response(expired: Expired, continuing: bool) -> Response {
    let message = if continuing {
        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results.".to_owned()
    } else {
        expired.to_string()
    };
    status(StatusCode::GONE, "Expired", message)
}

fn status_body(code: u16, reason: &str, message: &str) -> serde_json::Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    })
}

/// A kube-apiserver `Status` error response.
pub fn status(code: StatusCode, reason: &str, message: impl AsRef<str>) -> Response {
    let body = status_body(code.as_u16(), reason, message.as_ref()).to_string();
    json_response(code, Body::from(body))
}

pub(super) fn json_response(code: StatusCode, body: Body) -> Response {
    (code, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// Sends one request through the router, as kubectl would; returns the status code and
/// the body as JSON (null when it is not JSON). For tests.
#[cfg(test)]
pub(super) async fn request(
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
        .header(header::CONTENT_TYPE, content_type)
        .header(header::USER_AGENT, "kubectl/v1.32.0 (linux/amd64)")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_refusal_is_a_status_with_kube_apiservers_code_and_reason() {
        let server = ApiServer::new(crate::scenario::ObjectSpec::pods(20));
        let ns = crate::apiserver::generate::namespace(server.spec(), 0);
        let pods = format!("/api/v1/namespaces/{ns}/pods");
        let too_large = "x".repeat(crate::apiserver::extract::MAX_REQUEST_BODY_BYTES + 1);
        let json = "application/json";
        let cases: Vec<(&str, String, &str, &str, u16, &str)> = vec![
            ("GET", "/nope".into(), json, "", 404, "NotFound"),
            ("GET", "/api/v1/foos".into(), json, "", 404, "NotFound"),
            (
                "DELETE",
                "/version".into(),
                json,
                "",
                405,
                "MethodNotAllowed",
            ),
            ("POST", "/api".into(), json, "{}", 405, "MethodNotAllowed"),
            ("PUT", "/api/v1".into(), json, "{}", 405, "MethodNotAllowed"),
            ("PATCH", "/apis".into(), json, "{}", 405, "MethodNotAllowed"),
            (
                "POST",
                "/openapi/v3".into(),
                json,
                "{}",
                405,
                "MethodNotAllowed",
            ),
            (
                "DELETE",
                "/openapi/v3/api/v1".into(),
                json,
                "",
                405,
                "MethodNotAllowed",
            ),
            (
                "POST",
                "/api/v1/pods".into(),
                json,
                "{}",
                405,
                "MethodNotAllowed",
            ),
            (
                "PUT",
                format!("/api/v1/namespaces/{ns}"),
                json,
                "{}",
                405,
                "MethodNotAllowed",
            ),
            ("PUT", pods.clone(), json, "{}", 405, "MethodNotAllowed"),
            (
                "POST",
                format!("{pods}/x"),
                json,
                "{}",
                405,
                "MethodNotAllowed",
            ),
            (
                "GET",
                "/api/v1/namespaces/%FF/pods".into(),
                json,
                "",
                400,
                "BadRequest",
            ),
            ("GET", format!("{pods}/%FF%FE"), json, "", 400, "BadRequest"),
            ("DELETE", format!("{pods}/%C3"), json, "", 400, "BadRequest"),
            ("GET", "/api/v1/%FF".into(), json, "", 400, "BadRequest"),
            (
                "POST",
                pods.clone(),
                json,
                &too_large,
                413,
                "RequestEntityTooLarge",
            ),
            (
                "PUT",
                format!("{pods}/x"),
                json,
                &too_large,
                413,
                "RequestEntityTooLarge",
            ),
            (
                "PATCH",
                format!("{pods}/x"),
                "application/merge-patch+json",
                &too_large,
                413,
                "RequestEntityTooLarge",
            ),
            (
                "DELETE",
                pods.clone(),
                json,
                &too_large,
                413,
                "RequestEntityTooLarge",
            ),
            // kube-apiserver's ValidateDeleteOptions, in the query or the body.
            (
                "DELETE",
                format!("{pods}/x?propagationPolicy=Bogus"),
                json,
                "",
                422,
                "Invalid",
            ),
            (
                "DELETE",
                format!("{pods}/x"),
                json,
                r#"{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Bogus"}"#,
                422,
                "Invalid",
            ),
            (
                "DELETE",
                format!("{pods}?propagationPolicy=Never"),
                json,
                "",
                422,
                "Invalid",
            ),
        ];
        for (method, uri, content_type, body, code, reason) in cases {
            let (status, json) = request(&server, method, &uri, content_type, body).await;
            let at = format!("{method} {uri}");
            assert_eq!(status.as_u16(), code, "{at}: {json}");
            assert_eq!(json["kind"], "Status", "{at}: {json}");
            assert_eq!(json["code"], code, "{at}");
            assert_eq!(json["reason"], reason, "{at}");
            assert!(
                json["message"].as_str().is_some_and(|m| !m.is_empty()),
                "{at}"
            );
        }
        // The limit is kube-apiserver's: a body of exactly 3 MiB is read (and refused for
        // what it says, not for its size).
        let limit = "x".repeat(crate::apiserver::extract::MAX_REQUEST_BODY_BYTES);
        let (status, json) = request(&server, "POST", &pods, json, &limit).await;
        assert_eq!(status.as_u16(), 400, "{json}");
    }

    #[test]
    fn continue_tokens_round_trip_and_garbage_is_rejected() {
        let spec = crate::apiserver::generate::test_spec();
        let last = Version {
            id: Identity {
                index: 17,
                incarnation: 0,
                generation: 1,
                resource_version: 5,
            },
            written: None,
        };
        let token = encode_continue(&spec, 42, &last);
        let (rv, key) = decode_continue(&token).unwrap();
        assert_eq!(rv, 42);
        assert_eq!(generate::index_of_name(&key.name), Some(17));
        assert_eq!(key.namespace, generate::namespace(&spec, 17));
        assert!(decode_continue("not base64!").is_err());
        assert!(decode_continue(&BASE64.encode(b"{}")).is_err());
    }

    async fn send(server: &ApiServer, method: &str, uri: &str) -> (StatusCode, serde_json::Value) {
        request(server, method, uri, "application/json", "").await
    }

    #[tokio::test]
    async fn bad_requests_get_kube_apiserver_status_codes_and_reasons() {
        let server = ApiServer::new(crate::apiserver::generate::test_spec());
        // A continue token, then compaction past it: it has expired.
        let (_, page) = send(&server, "GET", "/api/v1/pods?limit=10").await;
        let token = page["metadata"]["continue"].as_str().unwrap().to_owned();
        server.delete(
            crate::scenario::Amount::Count(1),
            &LabelSelector::default(),
            1,
        );
        server.compact();
        let expired_continue = format!("/api/v1/pods?limit=10&continue={token}");
        let table: &[(&str, &str, u16, &str)] = &[
            ("GET", "/api/v1/widgets", 404, "NotFound"),
            (
                "GET",
                "/api/v1/namespaces/payments/widgets",
                404,
                "NotFound",
            ),
            ("GET", "/nothing/here", 404, "NotFound"),
            (
                "GET",
                "/api/v1/namespaces/payments/pods/no-such-pod",
                404,
                "NotFound",
            ),
            (
                "DELETE",
                "/api/v1/namespaces/payments/pods/no-such-pod",
                404,
                "NotFound",
            ),
            ("PUT", "/api/v1/pods", 405, "MethodNotAllowed"),
            ("GET", "/api/v1/pods?limit=ten", 400, "BadRequest"),
            (
                "GET",
                "/api/v1/pods?watch=1&resourceVersion=x",
                400,
                "BadRequest",
            ),
            ("GET", "/api/v1/pods?timeoutSeconds=-1", 400, "BadRequest"),
            (
                "GET",
                "/api/v1/pods?resourceVersion=abc&limit=5",
                400,
                "BadRequest",
            ),
            (
                "GET",
                "/api/v1/pods?labelSelector=app%20in%20web",
                400,
                "BadRequest",
            ),
            (
                "GET",
                "/api/v1/pods?fieldSelector=spec.nodeName%3Dx",
                400,
                "BadRequest",
            ),
            ("GET", "/api/v1/pods?continue=garbage", 400, "BadRequest"),
            ("GET", "/api/v1/pods?continue=e30%3D", 400, "BadRequest"),
            (
                "GET",
                "/api/v1/pods?resourceVersion=0&resourceVersionMatch=Exact",
                422,
                "Invalid",
            ),
            (
                "GET",
                "/api/v1/pods?resourceVersionMatch=NotOlderThan",
                422,
                "Invalid",
            ),
            (
                "GET",
                "/api/v1/pods?resourceVersion=1&resourceVersionMatch=Newest",
                422,
                "Invalid",
            ),
            (
                "GET",
                "/api/v1/pods?sendInitialEvents=true&resourceVersionMatch=NotOlderThan",
                422,
                "Invalid",
            ),
            (
                "GET",
                "/api/v1/pods?watch=1&sendInitialEvents=true",
                422,
                "Invalid",
            ),
            (
                "GET",
                "/api/v1/pods?watch=1&resourceVersionMatch=NotOlderThan",
                422,
                "Invalid",
            ),
            (
                "GET",
                "/api/v1/pods?resourceVersion=5&limit=10",
                410,
                "Expired",
            ),
            ("GET", &expired_continue, 410, "Expired"),
            (
                "GET",
                "/api/v1/pods?resourceVersion=999999999",
                504,
                "Timeout",
            ),
        ];
        for &(method, uri, code, reason) in table {
            let (got, status) = send(&server, method, uri).await;
            assert_eq!(got.as_u16(), code, "{method} {uri}: {status}");
            assert_eq!(status["kind"], "Status", "{method} {uri}");
            assert_eq!(status["code"], code, "{method} {uri}");
            assert_eq!(status["reason"], reason, "{method} {uri}: {status}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// Whatever the query, the server answers with a status it means: never a panic,
        /// never a 500.
        #[test]
        fn random_queries_never_panic(
            pairs in proptest::collection::vec(
                (
                    proptest::sample::select(vec![
                        "limit", "continue", "resourceVersion", "resourceVersionMatch", "watch",
                        "timeoutSeconds", "allowWatchBookmarks", "sendInitialEvents",
                        "labelSelector", "fieldSelector", "junk",
                    ]),
                    proptest::prelude::any::<String>(),
                ),
                0..6,
            ),
            path in proptest::sample::select(vec![
                "/api/v1/pods", "/api/v1/namespaces/payments/pods", "/api/v1/secrets",
            ]),
        ) {
            let query: String = form_urlencoded::Serializer::new(String::new())
                .extend_pairs(pairs.iter().map(|(k, v)| (*k, v.as_str())))
                .finish();
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .unwrap();
            let code = runtime.block_on(async {
                use tower::ServiceExt;
                // Few objects: most random `watch` values are true, and each such watch
                // sends every object first.
                let server = ApiServer::new(ObjectSpec::pods(20));
                let request = axum::http::Request::builder()
                    .uri(format!("{path}?{query}&timeoutSeconds=1"))
                    .body(Body::empty())
                    .unwrap();
                let response = router(server).oneshot(request).await.unwrap();
                let code = response.status();
                // Drain the body too: streamed lists and watches generate as they go.
                axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
                code
            });
            proptest::prop_assert!(
                code != StatusCode::INTERNAL_SERVER_ERROR,
                "{path}?{query} answered {code}"
            );
        }
    }

    #[tokio::test]
    async fn huge_watch_timeout_is_capped_not_a_panic() {
        use tower::ServiceExt;
        let server = ApiServer::new(crate::apiserver::generate::test_spec());
        let request = axum::http::Request::builder()
            .uri("/api/v1/pods?watch=1&resourceVersion=1000&timeoutSeconds=18446744073709551615")
            .body(Body::empty())
            .unwrap();
        let response = router(server).oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }

    #[tokio::test]
    async fn too_old_watch_gets_one_error_event_then_the_stream_ends() {
        let server = ApiServer::new(crate::apiserver::generate::test_spec());
        server.delete(
            crate::scenario::Amount::Count(1),
            &LabelSelector::default(),
            1,
        );
        server.compact();
        let (code, _) = send(&server, "GET", "/api/v1/pods?watch=1&resourceVersion=3").await;
        assert_eq!(code, StatusCode::OK);
        use tower::ServiceExt;
        let request = axum::http::Request::builder()
            .uri("/api/v1/pods?watch=1&resourceVersion=3")
            .body(Body::empty())
            .unwrap();
        let response = router(server.clone()).oneshot(request).await.unwrap();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let lines: Vec<serde_json::Value> = body
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0]["type"], "ERROR");
        assert_eq!(lines[0]["object"]["code"], 410);
        assert_eq!(lines[0]["object"]["reason"], "Expired");
    }

    /// Sends a GET with an `Accept` header; returns the body's lines as JSON.
    async fn get_accepting(server: &ApiServer, uri: &str, accept: &str) -> Vec<serde_json::Value> {
        use tower::ServiceExt;
        let request = axum::http::Request::builder()
            .uri(uri)
            .header(header::ACCEPT, accept)
            .body(Body::empty())
            .expect("a test request is well-formed");
        let response = router(server.clone()).oneshot(request).await.unwrap();
        let body = response.into_body();
        let bytes = tokio::time::timeout(Duration::from_secs(1), async {
            // A watch never ends by itself: read what it has sent so far.
            let mut stream = body.into_data_stream();
            let mut all = Vec::new();
            while let Ok(Some(Ok(chunk))) = tokio::time::timeout(
                Duration::from_millis(50),
                futures::StreamExt::next(&mut stream),
            )
            .await
            {
                all.extend_from_slice(&chunk);
            }
            all
        })
        .await
        .unwrap();
        bytes
            .split(|&b| b == b'\n')
            .filter(|line| !line.is_empty())
            .map(|line| serde_json::from_slice(line).unwrap())
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn scans_in_chunks_answer_what_one_scan_answers() {
        use crate::apiserver::selector::LabelSelector;
        use crate::scenario::{Amount, ObjectSpec};
        let spec = ObjectSpec {
            count: 60,
            ..crate::apiserver::generate::test_spec()
        };
        let whole = ApiServer::new(spec.clone());
        let chunked = ApiServer::new(spec);
        chunked.yield_during_scans(4);
        for server in [&whole, &chunked] {
            server.update(Amount::Count(9), &LabelSelector::default(), 3);
        }
        for uri in [
            "/api/v1/pods?labelSelector=app%3Dweb",
            "/api/v1/pods?labelSelector=app%3Dweb&limit=2",
            "/api/v1/namespaces/search/pods?limit=3",
            "/api/v1/pods?resourceVersion=61&resourceVersionMatch=Exact&labelSelector=app%3Dapi",
            "/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan\
             &allowWatchBookmarks=true&labelSelector=app%3Dapi",
        ] {
            let (a, b) = (
                get_accepting(&whole, uri, "application/json").await,
                get_accepting(&chunked, uri, "application/json").await,
            );
            assert!(!a.is_empty() && a.len() == b.len(), "{uri}");
            assert_eq!(a, b, "{uri}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn metadata_clients_get_partial_object_metadata_on_list_and_watch() {
        let mut spec = crate::apiserver::generate::test_spec();
        spec.count = 3;
        let server = ApiServer::new(spec.clone());
        // client-go's metadata informer puts protobuf first; this server skips it.
        let accept = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
        let list = get_accepting(&server, "/api/v1/pods", accept).await;
        assert_eq!(list[0]["kind"], "PartialObjectMetadataList");
        assert_eq!(list[0]["apiVersion"], "meta.k8s.io/v1");
        let items = list[0]["items"].as_array().unwrap();
        assert_eq!(items.len(), 3);
        for item in items {
            assert_eq!(item["kind"], "PartialObjectMetadata");
            assert!(item["metadata"]["uid"].is_string());
            assert!(item.get("spec").is_none() && item.get("status").is_none());
        }
        let watch = get_accepting(
            &server,
            "/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
            "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
        )
        .await;
        assert_eq!(watch.len(), 4, "{watch:?}");
        assert_eq!(watch[0]["object"]["kind"], "PartialObjectMetadata");
        assert!(watch[0]["object"].get("spec").is_none());
        assert_eq!(watch[3]["type"], "BOOKMARK");
        assert_eq!(watch[3]["object"]["apiVersion"], "meta.k8s.io/v1");
        // Without the parameter, whole objects.
        let full = get_accepting(&server, "/api/v1/pods", "application/json").await;
        assert_eq!(full[0]["kind"], "PodList");
        assert!(full[0]["items"][0].get("spec").is_some());
    }

    #[tokio::test]
    async fn selectors_filter_lists_and_get_by_name_finds_one() {
        let spec = crate::apiserver::generate::test_spec();
        let server = ApiServer::new(spec.clone());
        let name = generate::name(&spec, 4);
        let ns = generate::namespace(&spec, 4);
        let (_, list) = send(
            &server,
            "GET",
            &format!("/api/v1/pods?fieldSelector=metadata.name%3D{name}"),
        )
        .await;
        assert_eq!(list["items"].as_array().unwrap().len(), 1);
        assert_eq!(list["kind"], "PodList");
        let (_, list) = send(
            &server,
            "GET",
            "/api/v1/pods?labelSelector=app%20in%20(api%2Cweb)",
        )
        .await;
        // `app` cycles through ten names every `namespaces` objects: api and web are a fifth.
        assert_eq!(
            list["items"].as_array().unwrap().len() as u64,
            spec.count / 5
        );
        let (code, pod) = send(
            &server,
            "GET",
            &format!("/api/v1/namespaces/{ns}/pods/{name}"),
        )
        .await;
        assert_eq!(code, StatusCode::OK);
        assert_eq!(pod["metadata"]["name"], name.as_str());
        let (_, other) = send(&server, "GET", "/api/v1/configmaps").await;
        assert_eq!(other["kind"], "ConfigMapList");
        assert!(other["items"].as_array().unwrap().is_empty());
        let (code, _) = send(
            &server,
            "DELETE",
            &format!("/api/v1/namespaces/{ns}/pods/{name}"),
        )
        .await;
        assert_eq!(code, StatusCode::OK);
        assert_eq!(server.alive(), spec.count - 1);
    }

    #[tokio::test(start_paused = true)]
    async fn bookmarks_come_every_minute_and_just_before_the_deadline() {
        use futures::TryStreamExt;
        use k8s_openapi::api::core::v1::Pod;
        use kube::api::{Api, WatchEvent, WatchParams};

        let server = ApiServer::new(crate::apiserver::generate::test_spec());
        let head = server.resource_version().to_string();
        let api: Api<Pod> = Api::all(crate::apiserver::transport::client(&server));
        let started = Instant::now();
        let stream = api
            .watch(&WatchParams::default().timeout(290), &head)
            .await
            .unwrap();
        let mut stream = std::pin::pin!(stream);
        let mut at = Vec::new();
        // Paused time: the runtime jumps to each timer when nothing else can run.
        while let Some(event) = stream.try_next().await.unwrap() {
            let WatchEvent::Bookmark(b) = event else {
                panic!("unexpected {event:?}");
            };
            assert_eq!(b.metadata.resource_version, head);
            at.push((Instant::now() - started).as_secs());
        }
        assert_eq!(at, [60, 120, 180, 240, 288]);
        assert_eq!(
            (Instant::now() - started).as_secs(),
            290,
            "the stream ends at its timeout"
        );
    }

    #[test]
    fn booleans_are_true_unless_zero_or_false() {
        for truthy in ["1", "true", "True", "yes", "", "no", "t"] {
            assert!(parse_bool(truthy), "{truthy:?}");
        }
        for falsy in ["0", "false", "FALSE", "FaLsE"] {
            assert!(!parse_bool(falsy), "{falsy:?}");
        }
    }
}
