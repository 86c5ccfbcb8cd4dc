//! LIST: which state a request reads, and its body streamed a chunk at a time while the
//! client reads, so the server never holds a whole response (kube-apiserver streams list
//! encoding too since v1.33).

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Body;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde::Serialize;

use super::ApiServer;
use super::form::{Form, Wire, protobuf_response};
use super::generate::Generator;
use super::protobuf;
use super::query::{Query, Selection, decode_continue, encode_continue, parse_rv};
use super::state::{Expired, Start};
use super::status::{ApiError, expired_response, json_response};
use super::version::{NamespacedName, Version};
use scenario::ObjectKind;

/// Target size of one streamed LIST chunk.
const LIST_CHUNK_BYTES: usize = 64 * 1024;

/// Up to `limit` objects of `selection` as of `rv` (the newest if `None`), in key order
/// from `start`: the objects, their resourceVersion and whether more follow.
///
/// With [`ApiServer::yield_during_scans`] on (`serve`), the table is scanned a chunk of
/// records at a time; between chunks the state is unlocked and the task yields, so a long
/// scan holds neither the server's one thread nor its state for long. Changes made
/// meanwhile are rolled back through the history like any change after `rv`; one compacted
/// away meanwhile ends the scan with `Expired`, as a LIST continued too late does.
pub(super) async fn scan(
    server: &ApiServer,
    selection: &Selection,
    mut start: Start<'_>,
    limit: Option<usize>,
    mut rv: Option<u64>,
) -> Result<(Vec<Version>, u64, bool), Expired> {
    let spec = server.spec();
    let mut items = Vec::new();
    loop {
        let resume = {
            let state = server.state();
            let at = *rv.get_or_insert_with(|| state.resource_version());
            let left = limit.map(|limit| limit - items.len());
            let scan = state.scan_where(start, left, at, server.scan_chunk(), |id| {
                selection.matches_parts(spec, id, state.written(id).map(|w| &**w))
            })?;
            items.extend(scan.page.items.iter().map(|id| state.version(*id)));
            if scan.resume.is_none() {
                return Ok((items, scan.page.resource_version, scan.page.more));
            }
            scan.resume
        };
        start = Start::After(resume.expect("a scan that stopped early says where"));
        tokio::task::yield_now().await;
    }
}

/// Answers a LIST: the state the request reads, its body streamed a chunk at a time (in
/// protobuf, whose envelope gives the list's length first, every chunk made before the
/// first is sent).
pub(super) async fn serve(
    server: ApiServer,
    selection: Selection,
    q: &Query,
    (form, wire): (Form, Wire),
) -> Response {
    let head = server.resource_version();
    let (rv, after, limit) = match list_plan(q, head) {
        Ok(plan) => plan,
        Err(e) => return e.into_response(),
    };
    let generator = server.generator().clone();
    let start = after.as_ref().map_or(Start::First, Start::AfterKey);
    let page = scan(&server, &selection, start, limit, Some(rv)).await;
    let (items, resource_version, more) = match page {
        Ok(page) => page,
        Err(expired) => {
            server.count_request(|r| r.expired += 1);
            return expired_response(expired, q.continue_token.is_some());
        }
    };
    // A page with more after it is full, so it has a last item.
    let last = items.last().filter(|_| more);
    let continue_token = last.map(|last| encode_continue(generator.spec(), resource_version, last));
    let remaining_item_count = match last {
        Some(last) if !selection.filters() => server
            .count_after(&selection, last.id.index, resource_version)
            .ok(),
        _ => None,
    };
    let metadata = ListMeta {
        resource_version: resource_version.to_string(),
        continue_token,
        remaining_item_count,
    };
    if wire == Wire::Protobuf {
        return protobuf_list(&server, &generator, form, selection.kind, &metadata, items);
    }
    let head = form.list_head(
        selection.kind,
        &serde_json::to_string(&metadata).expect("list metadata serializes"),
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

/// A LIST body in protobuf: the list's message, an item at a time, in its envelope.
fn protobuf_list(
    server: &ApiServer,
    generator: &Generator,
    form: Form,
    kind: ObjectKind,
    metadata: &ListMeta,
    items: Vec<Version>,
) -> Response {
    let (api_version, list_kind) = match form {
        Form::Metadata => ("meta.k8s.io/v1", "PartialObjectMetadataList".to_owned()),
        _ => (kind.api_version(), format!("{}List", kind.as_str())),
    };
    let metadata = serde_json::to_vec(metadata).expect("list metadata serializes");
    let encoded =
        protobuf::ListEncoder::new(api_version, &list_kind, &metadata).and_then(|mut list| {
            let mut json = Vec::with_capacity(16 * 1024);
            for version in &items {
                match form.protobuf(generator, version) {
                    Some((_, _, message)) => list.push_message(&message),
                    None => {
                        json.clear();
                        form.write_item(&mut json, generator, version);
                        list.push(&json)?;
                    }
                }
                measure::timeline::object_sent();
            }
            Ok(list.finish())
        });
    match encoded {
        Ok(chunks) => {
            let bytes: usize = chunks.iter().map(Bytes::len).sum();
            server.count_request(|r| r.bytes += bytes as u64);
            let chunks = futures::stream::iter(chunks.into_iter().map(Ok::<_, Infallible>));
            protobuf_response(
                StatusCode::OK,
                protobuf::MEDIA_TYPE,
                Body::from_stream(chunks),
            )
        }
        Err(e) => ApiError::internal(format!("cannot encode as protobuf: {e}")).into_response(),
    }
}

/// A list's `metadata`; `continue` is absent on the last page, `remainingItemCount`
/// there and on a page a selector filtered.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ListMeta {
    resource_version: String,
    #[serde(rename = "continue", skip_serializing_if = "Option::is_none")]
    continue_token: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    remaining_item_count: Option<u64>,
}

/// Which state a LIST reads: (resourceVersion, the key it goes on after, page size).
fn list_plan(
    q: &Query,
    head: u64,
) -> Result<(u64, Option<NamespacedName>, Option<usize>), ApiError> {
    if let Some(token) = &q.continue_token {
        if q.resource_version.is_some() {
            return Err(ApiError::bad_request(
                "specifying resource version is not allowed when using continue".to_owned(),
            ));
        }
        // etcd goes on after the token's key, whether or not an object still has it.
        let (rv, last) = decode_continue(token).map_err(ApiError::bad_request)?;
        return Ok((rv, Some(last), q.limit));
    }
    let exact = q.resource_version_match.as_deref() == Some("Exact");
    match q.resource_version.as_deref() {
        // Unset: the newest state (a consistent read).
        None => Ok((head, None, q.limit)),
        // "0": any version, served from the watch cache, which ignores `limit`.
        Some("0") => Ok((head, None, None)),
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
            Ok((if exact { rv } else { head }, None, q.limit))
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
            self.form.write_item(&mut buf, &self.generator, &version);
            measure::timeline::object_sent();
        }
        self.server.count_request(|r| r.bytes += buf.len() as u64);
        Some(Ok(Bytes::from(buf)))
    }
}
