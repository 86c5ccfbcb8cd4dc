//! Routes, query parameters and bodies of the built-in apiserver (DESIGN.md section 3).
//!
//! LIST bodies are streamed: items are generated and encoded a chunk at a time while the
//! client reads, so the server never holds a whole response (kube-apiserver streams list
//! encoding too since v1.33). WATCH bodies are newline-delimited JSON events read from the
//! history as the client consumes them. Errors are `Status` objects with kube-apiserver's
//! codes and reasons.

use std::convert::Infallible;
use std::pin::Pin;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::watch;
use tokio::time::{Instant, Sleep};

use super::ApiServer;
use super::generate::{self, Identity};
use super::state::{EventKind, Expired};
use crate::scenario::ObjectSpec;

/// Target size of one streamed LIST chunk.
const LIST_CHUNK_BYTES: usize = 64 * 1024;
/// kube-apiserver's default watch timeout when the client sets none (`--min-request-timeout`).
const DEFAULT_WATCH_TIMEOUT: Duration = Duration::from_secs(1800);
/// kube-apiserver sends a bookmark about every minute to watchers that allow them...
const BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);
/// ...and one about two seconds before the watch's deadline.
const BOOKMARK_BEFORE_DEADLINE: Duration = Duration::from_secs(2);

/// The apiserver's routes, ready to serve on any transport.
pub fn router(server: ApiServer) -> Router {
    Router::new()
        .route(
            "/api/v1/pods",
            get(cluster_pods).fallback(method_not_allowed),
        )
        .route(
            "/api/v1/namespaces/{namespace}/pods",
            get(namespaced_pods).fallback(method_not_allowed),
        )
        .fallback(not_found)
        .with_state(server)
}

async fn cluster_pods(State(server): State<ApiServer>, RawQuery(query): RawQuery) -> Response {
    pods(server, None, query.as_deref())
}

async fn namespaced_pods(
    State(server): State<ApiServer>,
    Path(namespace): Path<String>,
    RawQuery(query): RawQuery,
) -> Response {
    pods(server, Some(namespace), query.as_deref())
}

async fn not_found() -> Response {
    status(
        StatusCode::NOT_FOUND,
        "NotFound",
        "the server could not find the requested resource",
    )
}

async fn method_not_allowed() -> Response {
    status(
        StatusCode::METHOD_NOT_ALLOWED,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
    )
}

fn pods(server: ApiServer, namespace: Option<String>, query: Option<&str>) -> Response {
    let query = match Query::parse(query.unwrap_or_default()) {
        Ok(q) => q,
        Err(message) => return status(StatusCode::BAD_REQUEST, "BadRequest", message),
    };
    // A namespace without objects lists empty, as on a real cluster.
    let scope = match namespace {
        None => Scope::Cluster,
        Some(ns) => match server.namespace_ordinal(&ns) {
            Some(ordinal) => Scope::Namespace(ordinal),
            None => Scope::Nothing,
        },
    };
    if query.watch {
        server.count_request(|r| r.watch += 1);
        watch(server, scope, &query)
    } else {
        server.count_request(|r| r.list += 1);
        list(server, scope, &query)
    }
}

/// Which objects a request covers.
#[derive(Debug, Clone, Copy)]
enum Scope {
    Cluster,
    Namespace(u32),
    /// A namespace that has no objects.
    Nothing,
}

impl Scope {
    fn contains(self, spec: &ObjectSpec, index: u32) -> bool {
        match self {
            Scope::Cluster => true,
            Scope::Namespace(ordinal) => index % spec.namespaces == ordinal,
            Scope::Nothing => false,
        }
    }
}

/// The query parameters this server understands.
#[derive(Debug, Default)]
struct Query {
    watch: bool,
    limit: Option<usize>,
    continue_token: Option<String>,
    resource_version: Option<String>,
    resource_version_match: Option<String>,
    timeout: Option<Duration>,
    allow_watch_bookmarks: bool,
}

impl Query {
    fn parse(raw: &str) -> Result<Query, String> {
        let mut q = Query::default();
        for (key, value) in form_urlencoded::parse(raw.as_bytes()) {
            let value = value.into_owned();
            match &*key {
                "watch" => q.watch = parse_bool(&key, &value)?,
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
                    let s: u64 = value.parse().map_err(|_| invalid(&key, &value))?;
                    q.timeout = Some(Duration::from_secs(s));
                }
                "allowWatchBookmarks" => q.allow_watch_bookmarks = parse_bool(&key, &value)?,
                "labelSelector" | "fieldSelector" if value.is_empty() => {}
                "labelSelector" | "fieldSelector" | "sendInitialEvents" => {
                    return Err(format!(
                        "query parameter {key} is not supported by this server yet"
                    ));
                }
                // kube-apiserver ignores parameters it does not know; so do we.
                _ => {}
            }
        }
        Ok(q)
    }
}

fn invalid(key: &str, value: &str) -> String {
    format!("invalid value {value:?} for query parameter {key}")
}

/// Go's `strconv.ParseBool`, which kube-apiserver uses for boolean parameters.
fn parse_bool(key: &str, value: &str) -> Result<bool, String> {
    match value {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(false),
        _ => Err(invalid(key, value)),
    }
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

fn encode_continue(spec: &ObjectSpec, rv: u64, last: u32) -> String {
    let start = format!(
        "{}/{}\u{0}",
        generate::namespace(spec, last),
        generate::name(spec, last)
    );
    let token = ContinueToken {
        v: TOKEN_VERSION.to_owned(),
        rv,
        start,
    };
    BASE64.encode(serde_json::to_vec(&token).expect("a token serializes"))
}

/// The token's resourceVersion and the index to continue from.
fn decode_continue(token: &str) -> Result<(u64, u32), String> {
    let invalid = || {
        "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)".to_owned()
    };
    let bytes = BASE64.decode(token).map_err(|_| invalid())?;
    let token: ContinueToken = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
    if token.v != TOKEN_VERSION || token.rv == 0 {
        return Err(invalid());
    }
    let key = token.start.strip_suffix('\u{0}').ok_or_else(invalid)?;
    let (_, name) = key.split_once('/').ok_or_else(invalid)?;
    let last = generate::index_of_name(name).ok_or_else(invalid)?;
    Ok((token.rv, last.checked_add(1).ok_or_else(invalid)?))
}

fn list(server: ApiServer, scope: Scope, q: &Query) -> Response {
    let head = server.resource_version();
    let (rv, from, limit) = match list_plan(q, head) {
        Ok(plan) => plan,
        Err(e) => return e.into_response(),
    };
    let spec = server.spec().clone();
    let page = server
        .state()
        .list_where(from, limit, rv, |i| scope.contains(&spec, i));
    let page = match page {
        Ok(page) => page,
        Err(expired) => return expired_response(expired, q.continue_token.is_some()),
    };
    let continue_token = page.next.map(|_| {
        let last = page
            .items
            .last()
            .expect("a page with a next index has items")
            .index;
        encode_continue(&spec, page.resource_version, last)
    });
    let metadata = ListMeta {
        resource_version: page.resource_version.to_string(),
        continue_token,
    };
    let head = format!(
        r#"{{"kind":"PodList","apiVersion":"v1","metadata":{},"items":["#,
        serde_json::to_string(&metadata).expect("list metadata serializes")
    );
    let chunks = ListChunks {
        spec,
        items: page.items.into_iter(),
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
struct ApiError {
    code: StatusCode,
    reason: &'static str,
    message: String,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        status(self.code, self.reason, self.message)
    }
}

/// Which state a LIST reads: (resourceVersion, first index, page size).
fn list_plan(q: &Query, head: u64) -> Result<(u64, u32, Option<usize>), ApiError> {
    let bad = |m: &str| ApiError {
        code: StatusCode::BAD_REQUEST,
        reason: "BadRequest",
        message: m.to_owned(),
    };
    if let Some(token) = &q.continue_token {
        if q.resource_version.is_some() {
            return Err(bad(
                "specifying resource version is not allowed when using continue",
            ));
        }
        let (rv, from) = decode_continue(token).map_err(|m| bad(&m))?;
        return Ok((rv, from, q.limit));
    }
    let requested = q.resource_version.as_deref();
    match (q.resource_version_match.as_deref(), requested) {
        (None, None) => Ok((head, 0, q.limit)),
        // "0": any version, served from the watch cache, which ignores `limit`.
        (None | Some("NotOlderThan"), Some("0")) => Ok((head, 0, None)),
        (Some("Exact"), Some("0")) => Err(bad(
            "resourceVersionMatch \"Exact\" is forbidden for resourceVersion \"0\"",
        )),
        (Some(m), None) => Err(bad(&format!(
            "resourceVersionMatch {m:?} is forbidden unless resourceVersion is provided"
        ))),
        (m @ (None | Some("NotOlderThan") | Some("Exact")), Some(v)) => {
            let rv = parse_rv(v).map_err(|m| bad(&m))?;
            if rv > head {
                return Err(ApiError {
                    code: StatusCode::GATEWAY_TIMEOUT,
                    reason: "Timeout",
                    message: format!("Too large resource version: {rv}, current: {head}"),
                });
            }
            // A version with a limit and no match is an exact read, as in kube-apiserver.
            let exact = m == Some("Exact") || (m.is_none() && q.limit.is_some());
            Ok((if exact { rv } else { head }, 0, q.limit))
        }
        (Some(m), Some(_)) => Err(bad(&format!(
            "unsupported resourceVersionMatch {m:?}: expected NotOlderThan or Exact"
        ))),
    }
}

/// Streams a LIST body: the head, then items encoded about [`LIST_CHUNK_BYTES`] at a time.
struct ListChunks {
    spec: ObjectSpec,
    items: std::vec::IntoIter<Identity>,
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
            let Some(id) = self.items.next() else {
                buf.extend_from_slice(b"]}");
                self.done = true;
                break;
            };
            if !std::mem::take(&mut self.first) {
                buf.push(b',');
            }
            write_object(&mut buf, &self.spec, id);
        }
        Some(Ok(Bytes::from(buf)))
    }
}

fn write_object(buf: &mut Vec<u8>, spec: &ObjectSpec, id: Identity) {
    serde_json::to_writer(buf, &generate::pod(spec, id)).expect("writing to a Vec cannot fail");
}

fn watch(server: ApiServer, scope: Scope, q: &Query) -> Response {
    let head = server.head_receiver();
    let (rv, initial) = match q.resource_version.as_deref() {
        // Unset or "0": the current state as ADDED events, then changes (legacy watch).
        None | Some("0") => {
            // One lock: the snapshot and its resourceVersion come from the same state.
            let spec = server.spec();
            let state = server.state();
            let page = state
                .list_where(0, None, state.resource_version(), |i| {
                    scope.contains(spec, i)
                })
                .expect("the newest version is never expired");
            (page.resource_version, page.items)
        }
        Some(v) => match parse_rv(v) {
            Ok(rv) => (rv, Vec::new()),
            Err(m) => return status(StatusCode::BAD_REQUEST, "BadRequest", m),
        },
    };
    let now = Instant::now();
    let deadline = now + q.timeout.unwrap_or(DEFAULT_WATCH_TIMEOUT);
    let cursor = WatchCursor {
        spec: server.spec().clone(),
        server,
        scope,
        initial: initial.into_iter(),
        rv,
        head,
        deadline_at: deadline,
        deadline: Box::pin(tokio::time::sleep_until(deadline)),
        bookmark: q
            .allow_watch_bookmarks
            .then(|| Box::pin(tokio::time::sleep_until(next_bookmark(now, deadline)))),
        finished: false,
    };
    let events = futures::stream::unfold(cursor, |mut cursor| async move {
        let line = cursor.next_line().await?;
        Some((Ok::<_, Infallible>(line), cursor))
    });
    json_response(StatusCode::OK, Body::from_stream(events))
}

/// One watcher's position: initial events still to send, then the history after `rv`.
struct WatchCursor {
    server: ApiServer,
    spec: ObjectSpec,
    scope: Scope,
    initial: std::vec::IntoIter<Identity>,
    rv: u64,
    head: watch::Receiver<u64>,
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
        if self.finished {
            return None;
        }
        if let Some(id) = self.initial.next() {
            return Some(event_line(EventKind::Added, &self.spec, id));
        }
        loop {
            // Mark the head seen before reading the history: a mutation after this point
            // wakes `changed()` below, so no event is missed.
            self.head.borrow_and_update();
            let next = self.server.state().event_after(self.rv);
            match next {
                Err(expired) => {
                    // kube-apiserver answers a too-old watch with HTTP 200 and one ERROR
                    // event, then closes the stream.
                    self.finished = true;
                    return Some(error_line(expired));
                }
                Ok(Some(event)) => {
                    self.rv = event.object.resource_version;
                    if self.scope.contains(&self.spec, event.object.index) {
                        return Some(event_line(event.kind, &self.spec, event.object));
                    }
                }
                Ok(None) => {
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
                        () = bookmark_due => {
                            let next = next_bookmark(Instant::now(), self.deadline_at);
                            if let Some(timer) = self.bookmark.as_mut() {
                                timer.as_mut().reset(next);
                            }
                            return Some(bookmark_line(self.rv));
                        }
                        () = &mut self.deadline => return None,
                    }
                }
            }
        }
    }
}

fn event_line(kind: EventKind, spec: &ObjectSpec, id: Identity) -> Bytes {
    let mut buf = Vec::with_capacity(8 * 1024);
    buf.extend_from_slice(br#"{"type":""#);
    buf.extend_from_slice(kind.as_str().as_bytes());
    buf.extend_from_slice(br#"","object":"#);
    write_object(&mut buf, spec, id);
    buf.extend_from_slice(b"}\n");
    Bytes::from(buf)
}

fn bookmark_line(rv: u64) -> Bytes {
    let event = json!({
        "type": "BOOKMARK",
        "object": {"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": rv.to_string()}},
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

fn json_response(code: StatusCode, body: Body) -> Response {
    (code, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip_and_garbage_is_rejected() {
        let spec = crate::apiserver::generate::test_spec();
        let token = encode_continue(&spec, 42, 17);
        assert_eq!(decode_continue(&token), Ok((42, 18)));
        assert!(decode_continue("not base64!").is_err());
        assert!(decode_continue(&BASE64.encode(b"{}")).is_err());
    }

    #[test]
    fn exact_zero_and_match_without_version_are_bad_requests() {
        let q = |rv: Option<&str>, m: Option<&str>| Query {
            resource_version: rv.map(str::to_owned),
            resource_version_match: m.map(str::to_owned),
            ..Query::default()
        };
        let code = |q: &Query| list_plan(q, 10).err().map(|e| e.code);
        assert_eq!(
            code(&q(Some("0"), Some("Exact"))),
            Some(StatusCode::BAD_REQUEST)
        );
        assert_eq!(
            code(&q(None, Some("NotOlderThan"))),
            Some(StatusCode::BAD_REQUEST)
        );
        assert_eq!(
            code(&q(Some("11"), None)),
            Some(StatusCode::GATEWAY_TIMEOUT)
        );
        assert_eq!(list_plan(&q(Some("0"), None), 10).ok(), Some((10, 0, None)));
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
    fn booleans_follow_go_parse_bool() {
        assert_eq!(parse_bool("watch", "1"), Ok(true));
        assert_eq!(parse_bool("watch", "False"), Ok(false));
        assert!(parse_bool("watch", "yes").is_err());
    }
}
