//! WATCH: newline-delimited JSON events read from the history as the client consumes
//! them, with bookmarks, watch-list's initial events and in-stream 410s.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;

use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{Value, json};
use tokio::time::{Instant, Sleep};

use super::ApiServer;
use super::dispatch::WatcherSlot;
use super::form::{Form, Wire};
use super::generate::Generator;
use super::list::scan;
use super::query::{Query, Selection, parse_rv};
use super::signal::Subscription;
use super::state::{EventKind, Expired, Start};
use super::status::{ApiError, expired_response, status_body};
use super::version::Version;
use scenario::ObjectKind;

/// kube-apiserver's default watch timeout when the client sets none (`--min-request-timeout`).
pub(super) const DEFAULT_WATCH_TIMEOUT: Duration = Duration::from_secs(1800);
/// kube-apiserver sends a bookmark about every minute to watchers that allow them...
const BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);
/// ...and one about two seconds before the watch's deadline.
const BOOKMARK_BEFORE_DEADLINE: Duration = Duration::from_secs(2);

/// Answers a WATCH: its initial events if it asks for them, then the history's events as
/// the client reads them, with bookmarks, until the deadline or a disconnect.
pub(super) async fn serve(
    server: ApiServer,
    selection: Selection,
    q: &Query,
    (form, wire): (Form, Wire),
) -> Response {
    let head = server.head_receiver();
    let disconnect = server.disconnect_receiver();
    let requested = match q.resource_version.as_deref() {
        None | Some("0") => None,
        // kube-apiserver answers a watch's unparsable version with a bare 500 (a LIST's
        // with 400).
        Some(v) => match parse_rv(v) {
            Ok(rv) => Some(rv),
            Err(_) => {
                return ApiError::internal(format!(
                    "resourceVersion: Invalid value: {v:?}: not a number"
                ))
                .into_response();
            }
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
        match scan(&server, &selection, Start::First, None, None).await {
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
        wire,
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
        table_columns_sent: false,
    };
    let events = futures::stream::unfold(cursor, |mut cursor| async move {
        let line = cursor.next_line().await?;
        cursor.server.count_request(|r| {
            r.watch_events += 1;
            r.bytes += line.len() as u64;
        });
        measure::timeline::object_sent();
        cursor.slot.delivered(cursor.rv);
        cursor.server.dispatcher().progressed();
        Some((Ok::<_, Infallible>(line), cursor))
    });
    wire.watch_response(Body::from_stream(events))
}

/// One watcher's position: initial events still to send, then the history after `rv`.
struct WatchCursor {
    server: ApiServer,
    generator: Arc<Generator>,
    form: Form,
    /// JSON lines, or protobuf frames.
    wire: Wire,
    selection: Selection,
    initial: std::vec::IntoIter<Version>,
    /// The resourceVersion of the initial-events-end bookmark still to send (watch-list).
    initial_events_end: Option<u64>,
    /// The watch began with the state as ADDED events and has not sent them all yet.
    initial_state: bool,
    /// This watcher as the slow-watcher dispatcher sees it.
    slot: Arc<WatcherSlot>,
    rv: u64,
    head: Subscription,
    disconnect: Subscription,
    deadline_at: Instant,
    deadline: Pin<Box<Sleep>>,
    /// When the next bookmark is due; `None` when the client did not allow bookmarks.
    bookmark: Option<Pin<Box<Sleep>>>,
    finished: bool,
    /// A table watch has sent its column definitions (with its first event).
    table_columns_sent: bool,
}

/// When the bookmark after `now` is due: a minute on, but no later than two seconds
/// before the deadline; after that point, never.
pub(super) fn next_bookmark(now: Instant, deadline: Instant) -> Instant {
    let last = deadline - BOOKMARK_BEFORE_DEADLINE;
    if now < last {
        (now + BOOKMARK_INTERVAL).min(last)
    } else {
        deadline + BOOKMARK_INTERVAL
    }
}

impl WatchCursor {
    /// The next event, in the watch's wire.
    async fn next_line(&mut self) -> Option<Bytes> {
        if self.closed() {
            return None;
        }
        if let Some(line) = self.initial_line() {
            return Some(line);
        }
        self.slot.following();
        loop {
            // Mark the head seen before reading the history: a mutation after this point
            // wakes `changed()` below, so no event is missed.
            self.head.borrow_and_update();
            if self.disconnect.has_changed() || self.slot.is_terminated() {
                return None;
            }
            let (head, next) = self.event_after_rv();
            match next {
                Err(expired) => {
                    // kube-apiserver answers a too-old watch with HTTP 200 and one ERROR
                    // event, then closes the stream.
                    self.finished = true;
                    self.server.count_request(|r| r.expired += 1);
                    return Some(self.wire.watch_event(error_line(expired)));
                }
                Ok(Some((kind, now, before))) => {
                    self.rv = now.id.resource_version;
                    if let Some(kind) = self.visible(kind, &now, before.as_ref()) {
                        return Some(self.event_line(kind, &now));
                    }
                }
                Ok(None) => {
                    self.caught_up(head);
                    let bookmark_due = async {
                        match self.bookmark.as_mut() {
                            Some(timer) => timer.as_mut().await,
                            None => std::future::pending().await,
                        }
                    };
                    tokio::select! {
                        // Polled in order so a run never depends on tokio's random choice.
                        biased;
                        () = self.head.changed() => {}
                        () = self.disconnect.changed() => return None,
                        () = self.server.dispatcher().terminated() => {}
                        () = bookmark_due => return Some(self.bookmark_line()),
                        () = &mut self.deadline => return None,
                    }
                }
            }
        }
    }

    /// Whether the watch has ended: finished, disconnected, or terminated as a slow
    /// watcher. A terminated watch-list that still owes its initial-events-end bookmark
    /// closes gracefully: kube-apiserver schedules that bookmark at once, so it is already
    /// in the watcher's input when the dispatcher gives up on it, and the cacher then
    /// drains the input (`graceful = true` in cacheWatcher.add) instead of cutting the
    /// stream. The client gets its whole initial state and re-watches from the bookmark; a
    /// legacy `resourceVersion=0` watch has no such bookmark and is cut.
    fn closed(&self) -> bool {
        let graceful = self.initial_events_end.is_some();
        self.finished || (self.slot.is_terminated() && !graceful) || self.disconnect.has_changed()
    }

    /// The next line of the initial state: an ADDED event, then (watch-list) the
    /// initial-events-end bookmark; `None` once all are sent.
    fn initial_line(&mut self) -> Option<Bytes> {
        if let Some(version) = self.initial.next() {
            let columns = !std::mem::replace(&mut self.table_columns_sent, true);
            let (generator, form) = (&self.generator, self.form);
            let line = || event_line(EventKind::Added, generator, form, &version, columns);
            let event =
                (self.wire).watch_event_of(EventKind::Added, generator, form, &version, line);
            return Some(event);
        }
        // The client has read every initial event: a legacy watch asks for the next line,
        // a watch-list gets its end bookmark.
        if std::mem::take(&mut self.initial_state) {
            self.server
                .count_request(|r| r.initial_events_completed += 1);
        }
        let rv = self.initial_events_end.take()?;
        self.server.count_request(|r| r.bookmarks += 1);
        let line = bookmark_line(self.selection.kind, self.form, rv, true);
        Some(self.wire.watch_event(line))
    }

    /// The server's head and the first event after `rv`, with the version an update
    /// replaced (it decides whether the object moved into or out of the selection).
    #[allow(
        clippy::type_complexity,
        reason = "read once, matched at once by the one caller"
    )]
    fn event_after_rv(
        &self,
    ) -> (
        u64,
        Result<Option<(EventKind, Version, Option<Version>)>, Expired>,
    ) {
        let state = self.server.state();
        let next = state.event_after(self.rv).map(|event| {
            event.map(|e| {
                let before = e
                    .before()
                    .filter(|_| e.kind == EventKind::Modified)
                    .map(|id| state.version(id));
                (e.kind, state.version(e.object), before)
            })
        });
        (state.resource_version(), next)
    }

    /// No event of this resource after `rv`: the watch is current up to the head, which
    /// writes to other resources may have moved on (as etcd's progress notifications tell
    /// kube-apiserver's watch cache). `rv` is then the newest resourceVersion, which is
    /// what a bookmark reports.
    fn caught_up(&mut self, head: u64) {
        // Events this watch's selectors skipped count as handed over too: without them,
        // a selective watch would look behind (to the caught-up check, and to the
        // dispatcher as a slow watcher) until its next event or bookmark.
        self.rv = self.rv.max(head);
        self.slot.delivered(self.rv);
    }

    /// The periodic bookmark at `rv`, with the timer set for the next one.
    fn bookmark_line(&mut self) -> Bytes {
        let next = next_bookmark(Instant::now(), self.deadline_at);
        if let Some(timer) = self.bookmark.as_mut() {
            timer.as_mut().reset(next);
        }
        self.server.count_request(|r| r.bookmarks += 1);
        let line = bookmark_line(self.selection.kind, self.form, self.rv, false);
        self.wire.watch_event(line)
    }

    /// The event for `now` seen as `kind`, in the watch's wire: shared with other
    /// watchers when the server shares encodings (`serve`), else encoded here. A table's
    /// line is this watch's own: its first carries the column definitions.
    fn event_line(&mut self, kind: EventKind, now: &Version) -> Bytes {
        let (generator, form, wire) = (&self.generator, self.form, self.wire);
        if form.is_table() {
            let columns = !std::mem::replace(&mut self.table_columns_sent, true);
            return wire.watch_event(event_line(kind, generator, form, now, columns));
        }
        self.server
            .shared_line((now.id.resource_version, kind, form, wire), || {
                let line = || event_line(kind, generator, form, now, true);
                wire.watch_event_of(kind, generator, form, now, line)
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

/// A watch event's line; `table_columns` says whether a table's object carries its column
/// definitions (the watch's first event).
fn event_line(
    kind: EventKind,
    generator: &Generator,
    form: Form,
    version: &Version,
    table_columns: bool,
) -> Bytes {
    let mut buf = Vec::with_capacity(8 * 1024);
    buf.extend_from_slice(br#"{"type":""#);
    buf.extend_from_slice(kind.as_str().as_bytes());
    buf.extend_from_slice(br#"","object":"#);
    form.write_event_object(&mut buf, generator, version, table_columns);
    buf.extend_from_slice(b"}\n");
    Bytes::from(buf)
}

fn bookmark_line(kind: ObjectKind, form: Form, rv: u64, initial_events_end: bool) -> Bytes {
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if initial_events_end {
        metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    let object = form.bookmark(kind, metadata);
    // Moved in, not through `json!`, which would copy the object.
    let mut event = serde_json::Map::new();
    event.insert("type".to_owned(), Value::from("BOOKMARK"));
    event.insert("object".to_owned(), object);
    let event = Value::Object(event);
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
