//! Watches of the records: `kubectl get events --watch`, `kubectl get leases -w`, an
//! informer on Events or Leases; and of namespaces (`kubectl get ns -w`, a controller's
//! Namespace informer), whose creates and deletes over TCP are changes in the records'
//! history. The records' changes are kept in a window of the newest
//! ones ([`History`]); a watch is sent its initial state when it asks for one, then each
//! change after its resourceVersion that its namespace and selectors select, with
//! bookmarks when it allows them, until its deadline.
//!
//! As kube-apiserver: a watch without a resourceVersion (or "0") starts with the records
//! there are as ADDED events; `sendInitialEvents=true` (watch-list) ends them with an
//! initial-events-end bookmark; an update that moves a record into or out of the
//! selection is an ADDED or a DELETED; a DELETED carries the deletion's resourceVersion;
//! a resourceVersion older than the window is answered with one ERROR event (410) and the
//! end of the stream. The server's disconnects (a phase's, `serve` stopping) end these
//! watches with the others. kube-apiserver serves Leases from its watch cache and Events from
//! etcd (their cache is off by default), and the two say "too old" in their own words;
//! so does this server.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{Value, json};
use tokio::time::{Instant, Sleep};

use super::{Api, Filter, Key, Records, in_version};
use crate::form::{Form, Wire};
use crate::protobuf;
use crate::query::{Query, parse_rv};
use crate::signal::Subscription;
use crate::state::{EventKind, Expired};
use crate::status::{ApiError, status_body};
use crate::table::{self, metadata_only};
use crate::watch::{DEFAULT_WATCH_TIMEOUT, next_bookmark};

/// How many changes the window keeps. etcd keeps five minutes of history between
/// kube-apiserver's compactions and the watch cache a window sized by the rate of
/// changes; a count bounds the memory of a long `serve` whatever a program writes (a
/// Lease renewed every two seconds keeps over half an hour of its renewals).
const KEPT_CHANGES: usize = 1_000;

/// One change of a record, as its watches are told it.
#[derive(Debug)]
pub(super) struct Change {
    resource_version: u64,
    kind: EventKind,
    key: Key,
    /// The record after the change (kept form); a deleted one as it was, at the
    /// deletion's resourceVersion.
    object: Value,
    /// The record an update replaced: whether it was selected decides whether a watch
    /// sees the update as an ADDED, a MODIFIED or a DELETED.
    before: Option<Value>,
}

impl Change {
    pub(super) fn new(
        resource_version: u64,
        kind: EventKind,
        key: Key,
        object: Value,
        before: Option<Value>,
    ) -> Change {
        Change {
            resource_version,
            kind,
            key,
            object,
            before,
        }
    }
}

/// The newest changes of the records, oldest first.
#[derive(Debug, Default)]
pub(super) struct History {
    changes: VecDeque<Change>,
    /// The resourceVersion of the newest change no longer kept (0: none was dropped). A
    /// watch from an older one has missed changes.
    compacted: u64,
}

impl History {
    pub(super) fn push(&mut self, change: Change) {
        if self.changes.len() == KEPT_CHANGES
            && let Some(oldest) = self.changes.pop_front()
        {
            self.compacted = oldest.resource_version;
        }
        self.changes.push_back(change);
    }

    /// The changes after `rv`, oldest first; `Expired` when some are no longer kept.
    fn after(&self, rv: u64) -> Result<impl Iterator<Item = &Change>, Expired> {
        if rv < self.compacted {
            return Err(Expired {
                requested: rv,
                oldest: self.compacted + 1,
            });
        }
        Ok(self
            .changes
            .iter()
            .skip_while(move |change| change.resource_version <= rv))
    }
}

/// What a watch is of: one of the records' resources, in the version it names, or the
/// namespaces (the server's; the ones clients create and delete change in the records'
/// history).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Watched {
    Record(Api),
    Namespace,
}

impl Watched {
    /// The kind and apiVersion of the watch's objects (an empty one is a bookmark).
    fn kind(self) -> (&'static str, &'static str) {
        match self {
            Watched::Record(api) => (api.kind(), api.api_version()),
            Watched::Namespace => ("Namespace", "v1"),
        }
    }

    /// A kept object as the watch sends it.
    fn in_version(self, kept: &Value) -> Result<Value, ApiError> {
        match self {
            Watched::Record(api) => in_version(api, kept),
            Watched::Namespace => Ok(kept.clone()),
        }
    }

    /// The table of `object` (as sent), for kubectl's `--watch`.
    fn table(self, object: Value, include: table::Include) -> Value {
        let objects = std::slice::from_ref(&object);
        match self {
            Watched::Record(api) => {
                let cells = |object: &Value, now| api.cells(&api.into_store(object.clone()), now);
                table::of_values(objects, api.columns(), cells, include, None)
            }
            Watched::Namespace => table::of_namespaces(objects, include, None),
        }
    }

    /// What a watch from before the window is told (410), in the words of the store
    /// kube-apiserver serves the resource from: etcd for Events, its watch cache for the
    /// others.
    fn expired(self, expired: Expired) -> String {
        match self {
            Watched::Record(Api::CoreEvent | Api::Event) => {
                "The resourceVersion for the provided watch is too old.".to_owned()
            }
            Watched::Record(_) | Watched::Namespace => expired.to_string(),
        }
    }
}

/// Answers a WATCH of what `filter` selects of `watched`.
pub(crate) fn serve(
    records: Records,
    watched: Watched,
    filter: Filter,
    query: &Query,
    (form, wire): (Form, Wire),
) -> Response {
    let requested = match query.resource_version.as_deref() {
        None | Some("0") => None,
        Some(v) => match parse_rv(v) {
            Ok(rv) => Some(rv),
            // As kube-apiserver answers a watch's unparsable version: a bare 500.
            Err(_) => {
                let why = format!("resourceVersion: Invalid value: {v:?}: not a number");
                return ApiError::internal(why).into_response();
            }
        },
    };
    // Whether the watch starts with the records there are, as ADDED events.
    let snapshot = match (query.send_initial_events, requested) {
        (Some(initial), _) => initial,
        (None, requested) => requested.is_none(),
    };
    let (rv, initial, head) = {
        let store = records.store();
        let rv = match (snapshot, requested) {
            (false, Some(rv)) => rv,
            _ => store.resource_version,
        };
        let initial: Vec<Value> = match (snapshot, watched) {
            (false, _) => Vec::new(),
            (true, Watched::Record(_)) => (store.selected(&filter))
                .map(|(_, object)| object.clone())
                .collect(),
            // Read under the records' lock, which a namespace's change is made under.
            (true, Watched::Namespace) => filter.namespaces_of(&records.server),
        };
        (rv, initial, store.head.subscribe())
    };
    let now = Instant::now();
    let deadline = now + query.timeout.unwrap_or(DEFAULT_WATCH_TIMEOUT);
    let cursor = Cursor {
        disconnect: records.server.disconnect_receiver(),
        records,
        watched,
        filter,
        form,
        wire,
        initial: initial.into_iter(),
        initial_events_end: (query.send_initial_events == Some(true)
            && query.allow_watch_bookmarks)
            .then_some(rv),
        rv,
        head,
        deadline_at: deadline,
        deadline: Box::pin(tokio::time::sleep_until(deadline)),
        bookmark: (query.allow_watch_bookmarks)
            .then(|| Box::pin(tokio::time::sleep_until(next_bookmark(now, deadline)))),
        finished: false,
        table_columns_sent: false,
    };
    let events = futures::stream::unfold(cursor, |mut cursor| async move {
        let event = cursor.next_event().await?;
        Some((Ok::<_, Infallible>(event), cursor))
    });
    wire.watch_response(Body::from_stream(events))
}

/// One watch's position: its initial events still to send, then the changes after `rv`.
struct Cursor {
    records: Records,
    watched: Watched,
    filter: Filter,
    form: Form,
    wire: Wire,
    /// The initial state still to send (kept forms).
    initial: std::vec::IntoIter<Value>,
    /// The resourceVersion of the initial-events-end bookmark still to send (watch-list).
    initial_events_end: Option<u64>,
    rv: u64,
    /// The records' newest resourceVersion, which moves at every change.
    head: Subscription,
    /// Moves when the server ends every watch (a phase's disconnect, `serve` stopping).
    disconnect: Subscription,
    deadline_at: Instant,
    deadline: Pin<Box<Sleep>>,
    /// When the next bookmark is due; `None` when the client did not allow bookmarks.
    bookmark: Option<Pin<Box<Sleep>>>,
    /// An ERROR event ended the watch.
    finished: bool,
    /// A table watch has sent its column definitions (with its first event).
    table_columns_sent: bool,
}

impl Cursor {
    /// The next event, in the watch's wire; `None` at the watch's end.
    async fn next_event(&mut self) -> Option<Bytes> {
        if self.finished || self.disconnect.has_changed() {
            return None;
        }
        if let Some(object) = self.initial.next() {
            return Some(self.event(EventKind::Added, &object));
        }
        if let Some(rv) = self.initial_events_end.take() {
            return Some(self.bookmark(rv, true));
        }
        loop {
            // Seen before the history is read: a change after this point wakes
            // `changed()` below, so none is missed.
            self.head.borrow_and_update();
            let (next, expiry) = {
                let records = self.records.clone();
                let store = records.store();
                (self.next_change(&store), store.next_expiry())
            };
            match next {
                Err(expired) => {
                    self.finished = true;
                    return Some(self.wire.watch_event(self.expired(expired)));
                }
                Ok(Some((kind, object))) => return Some(self.event(kind, &object)),
                Ok(None) => {
                    let bookmark_due = async {
                        match self.bookmark.as_mut() {
                            Some(timer) => timer.as_mut().await,
                            None => std::future::pending().await,
                        }
                    };
                    // An Event that expires is deleted when the records are next read.
                    let expires = async {
                        match expiry {
                            Some(at) => tokio::time::sleep_until(at).await,
                            None => std::future::pending().await,
                        }
                    };
                    tokio::select! {
                        biased;
                        () = self.head.changed() => {}
                        () = self.disconnect.changed() => return None,
                        () = expires => {}
                        () = bookmark_due => return Some(self.bookmark(self.rv, false)),
                        () = &mut self.deadline => return None,
                    }
                }
            }
        }
    }

    /// The first change after `rv` this watch sees, as it sees it (`rv` moves past the
    /// ones it does not); `None` when it has seen every change, `rv` then the newest.
    fn next_change(&mut self, store: &super::Store) -> Result<Option<(EventKind, Value)>, Expired> {
        for change in store.history.after(self.rv)? {
            self.rv = change.resource_version;
            if let Some(kind) = self.visible(change) {
                return Ok(Some((kind, change.object.clone())));
            }
        }
        self.rv = self.rv.max(store.resource_version);
        Ok(None)
    }

    /// How this watch sees `change`, if at all. An update that moves a record into or out
    /// of the selection is an ADDED or a DELETED for it.
    fn visible(&self, change: &Change) -> Option<EventKind> {
        let is = self.filter.matches(&change.key, &change.object);
        match (change.kind, &change.before) {
            (EventKind::Modified, Some(before)) => {
                match (self.filter.matches(&change.key, before), is) {
                    (true, true) => Some(EventKind::Modified),
                    (false, true) => Some(EventKind::Added),
                    (true, false) => Some(EventKind::Deleted),
                    (false, false) => None,
                }
            }
            _ => is.then_some(change.kind),
        }
    }

    /// The event of `kind` for `kept` (kept form), in the watch's form and wire.
    fn event(&mut self, kind: EventKind, kept: &Value) -> Bytes {
        let object = match self.watched.in_version(kept) {
            Ok(object) => object,
            Err(e) => {
                let status = status_body(500, "InternalError", &e.message);
                return self.wire.watch_event(line("ERROR", status));
            }
        };
        let object = match self.form {
            Form::Full => object,
            Form::Metadata => metadata_only(&object),
            Form::Table(include) => {
                let mut table = self.watched.table(object, include);
                // Only a watch's first table carries the column definitions.
                if std::mem::replace(&mut self.table_columns_sent, true) {
                    table["columnDefinitions"] = Value::Null;
                }
                table
            }
        };
        self.wire.watch_event(line(kind.as_str(), object))
    }

    /// A bookmark at `rv` in the watch's form: the periodic one (its timer set for the
    /// next), or watch-list's initial-events-end.
    fn bookmark(&mut self, rv: u64, initial_events_end: bool) -> Bytes {
        let mut metadata = json!({"resourceVersion": rv.to_string()});
        if initial_events_end {
            metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        } else if let Some(timer) = self.bookmark.as_mut() {
            timer
                .as_mut()
                .reset(next_bookmark(Instant::now(), self.deadline_at));
        }
        let (kind, api_version) = self.watched.kind();
        let object = match self.form {
            // An empty object of the kind, with the fields Go writes at their zero.
            Form::Full => protobuf::as_stored(json!({
                "kind": kind, "apiVersion": api_version, "metadata": metadata,
            }))
            .unwrap_or_else(|_| json!({"metadata": {"resourceVersion": rv.to_string()}})),
            Form::Metadata => json!({
                "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                "metadata": metadata,
            }),
            Form::Table(_) => table::bookmark(metadata),
        };
        self.wire.watch_event(line("BOOKMARK", object))
    }

    /// The ERROR event (410) for a watch from before the window, in the words of the
    /// store kube-apiserver serves the resource from.
    fn expired(&self, expired: Expired) -> Bytes {
        let message = self.watched.expired(expired);
        line("ERROR", status_body(410, "Expired", &message))
    }
}

/// A watch event's JSON line, its `type` first as kube-apiserver writes it.
fn line(kind: &str, object: Value) -> Bytes {
    let mut line = format!(r#"{{"type":"{kind}","object":{object}}}"#).into_bytes();
    line.push(b'\n');
    Bytes::from(line)
}
