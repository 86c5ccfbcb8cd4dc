//! The program's reads of collections, as the gate sees them: every LIST and WATCH of a
//! resource, by namespace and selectors, with when it came and whether the server
//! refused it. A phase's report lists them (the caches the program opened and kept up),
//! and a read the server refused is why a program never synced.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use axum::http::{Method, StatusCode, Uri};

use crate::paths::CollectionPath;
use crate::query::parse_bool;
use report::CollectionReads;

/// One collection a program reads: a resource in a namespace (or every one), with the
/// selectors it asks for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Collection {
    /// `pods`, `deployments.apps`: the resource as kubectl names it.
    resource: String,
    namespace: Option<String>,
    label_selector: Option<String>,
    field_selector: Option<String>,
}

/// How a request reads its collection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum How {
    /// A LIST, its first page.
    List,
    /// A WATCH from a resourceVersion (or from now).
    Watch,
    /// A WATCH that asks for the state as events first (`sendInitialEvents=true`).
    WatchList,
}

/// One read, as it came.
#[derive(Debug, Clone)]
pub(super) struct Read {
    collection: Collection,
    how: How,
    at: Instant,
}

impl Read {
    /// The read `method` `uri` asks for, if it is one: a GET of a collection, that is not
    /// a page continuing a LIST. `uri` is the path the server serves (the run's secret
    /// taken off).
    pub(super) fn of(method: &Method, uri: &Uri) -> Option<Read> {
        if method != Method::GET {
            return None;
        }
        let path = CollectionPath::of(uri.path())?;
        let query = Query::of(uri);
        if query.continues {
            return None;
        }
        let how = match (path.legacy_watch || query.watch, query.initial_events) {
            (false, _) => How::List,
            (true, false) => How::Watch,
            (true, true) => How::WatchList,
        };
        Some(Read {
            collection: Collection {
                resource: path.resource_name(),
                namespace: path.namespace.map(str::to_owned),
                label_selector: query.label_selector,
                field_selector: query.field_selector,
            },
            how,
            at: Instant::now(),
        })
    }
}

/// What a read's query says: the selectors as the program gave them (the server's own
/// [`crate::query::Query`] would refuse a bad one, and the read is still the program's),
/// its booleans as kube-apiserver reads them.
#[derive(Debug, Default)]
struct Query {
    watch: bool,
    initial_events: bool,
    continues: bool,
    label_selector: Option<String>,
    field_selector: Option<String>,
}

impl Query {
    fn of(uri: &Uri) -> Query {
        let mut query = Query::default();
        let given = |value: &str| (!value.is_empty()).then(|| value.to_owned());
        let pairs = form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes());
        for (key, value) in pairs {
            match &*key {
                "watch" => query.watch = parse_bool(&value),
                "sendInitialEvents" => query.initial_events = parse_bool(&value),
                "continue" => query.continues = !value.is_empty(),
                "labelSelector" => query.label_selector = given(&value),
                "fieldSelector" => query.field_selector = given(&value),
                _ => {}
            }
        }
        query
    }
}

/// A resource whose reads the server refused: the program cannot fill a cache of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedResource {
    /// The resource as kubectl names it.
    pub resource: String,
    /// The first refusal's status code.
    pub status: u16,
    /// The first refusal's message.
    pub message: String,
}

impl std::fmt::Display for RefusedResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({} {:?})", self.resource, self.status, self.message)
    }
}

/// Every read since the last phase's end, and what the run has seen of them all.
#[derive(Debug, Default)]
pub(super) struct Journal {
    reads: Vec<(Read, bool)>,
    /// Every collection read in an earlier phase (or the setup).
    seen: BTreeSet<Collection>,
    /// Every resource whose reads the server refused, since the program started.
    refused: BTreeMap<String, (u16, String)>,
}

impl Journal {
    /// Notes `read`, answered `status`; `message` is a refusal's.
    pub(super) fn note(&mut self, read: Read, status: StatusCode, message: &str) {
        let refused = refuses(status);
        if refused {
            let first = (status.as_u16(), message.to_owned());
            self.refused
                .entry(read.collection.resource.clone())
                .or_insert(first);
        }
        self.reads.push((read, refused));
    }

    /// Every resource whose reads the server refused since the program started.
    pub(super) fn refused(&self) -> Vec<RefusedResource> {
        let refused = self.refused.iter();
        refused
            .map(|(resource, (status, message))| RefusedResource {
                resource: resource.clone(),
                status: *status,
                message: message.clone(),
            })
            .collect()
    }

    /// The reads since the last call, one entry per collection, the first read first;
    /// `since` is the phase's start.
    pub(super) fn take(&mut self, since: Instant) -> Vec<CollectionReads> {
        let mut entries: BTreeMap<Collection, (Instant, CollectionReads)> = BTreeMap::new();
        for (read, refused) in std::mem::take(&mut self.reads) {
            let opened = !self.seen.contains(&read.collection);
            let collection = read.collection;
            let (first, entry) = entries.entry(collection.clone()).or_insert_with(|| {
                let reads = CollectionReads {
                    resource: collection.resource,
                    namespace: collection.namespace,
                    label_selector: collection.label_selector,
                    field_selector: collection.field_selector,
                    lists: 0,
                    watches: 0,
                    watch_lists: 0,
                    refused: 0,
                    first_at_ms: 0,
                    opened,
                };
                (read.at, reads)
            });
            *first = (*first).min(read.at);
            match read.how {
                How::List => entry.lists += 1,
                How::Watch => entry.watches += 1,
                How::WatchList => {
                    entry.watches += 1;
                    entry.watch_lists += 1;
                }
            }
            entry.refused += u64::from(refused);
        }
        self.seen.extend(entries.keys().cloned());
        let mut taken: Vec<(Instant, CollectionReads)> = entries.into_values().collect();
        taken.sort_by_key(|(first, _)| *first);
        let in_ms = |first: Instant| first.saturating_duration_since(since).as_millis() as u64;
        taken
            .into_iter()
            .map(|(first, entry)| CollectionReads {
                first_at_ms: in_ms(first),
                ..entry
            })
            .collect()
    }
}

/// Whether an answer `status` to a read refuses it: any error but 410 Expired (which
/// asks the client to list again) and 429 (to come back later).
fn refuses(status: StatusCode) -> bool {
    (status.is_client_error() || status.is_server_error())
        && status != StatusCode::GONE
        && status != StatusCode::TOO_MANY_REQUESTS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(uri: &str) -> Option<Read> {
        Read::of(&Method::GET, &uri.parse().unwrap())
    }

    #[test]
    fn a_collections_reads_are_told_from_other_requests() {
        let pods = read("/api/v1/namespaces/ns/pods?labelSelector=app%3Dweb&watch=1").unwrap();
        assert_eq!(pods.collection.resource, "pods");
        assert_eq!(pods.collection.namespace.as_deref(), Some("ns"));
        assert_eq!(pods.collection.label_selector.as_deref(), Some("app=web"));
        assert_eq!(pods.how, How::Watch);
        let listed = read("/apis/apps/v1/deployments?limit=500").unwrap();
        assert_eq!(
            (listed.collection.resource.as_str(), listed.how),
            ("deployments.apps", How::List)
        );
        let streamed = read("/apis/storage.k8s.io/v1/csinodes?watch=true&sendInitialEvents=true");
        assert_eq!(streamed.unwrap().how, How::WatchList);
        let legacy = read("/api/v1/watch/namespaces/ns/secrets").unwrap();
        assert_eq!(
            (legacy.collection.resource.as_str(), legacy.how),
            ("secrets", How::Watch)
        );
        assert_eq!(
            read("/api/v1/namespaces").unwrap().collection.resource,
            "namespaces"
        );
        for other in [
            "/api/v1/namespaces/ns",
            "/api/v1/namespaces/ns/pods/web-0",
            "/api/v1/namespaces/ns/pods/web-0/status",
            "/api/v1/nodes/node-1",
            "/api/v1",
            "/apis",
            "/version",
            "/api/v1/pods?continue=abc",
        ] {
            assert!(read(other).is_none(), "{other}");
        }
        let uri: Uri = "/api/v1/namespaces/ns/pods".parse().unwrap();
        assert!(Read::of(&Method::POST, &uri).is_none());
    }

    #[test]
    fn a_phase_lists_each_collection_once_and_says_which_it_opened() {
        let mut journal = Journal::default();
        let start = Instant::now();
        let ok = StatusCode::OK;
        journal.note(read("/api/v1/pods").unwrap(), ok, "");
        journal.note(read("/api/v1/pods?watch=1").unwrap(), ok, "");
        journal.note(read("/api/v1/nodes").unwrap(), StatusCode::GONE, "expired");
        let missing = "the server could not find the requested resource";
        let volumes = read("/api/v1/persistentvolumes").unwrap();
        journal.note(volumes, StatusCode::NOT_FOUND, missing);
        let setup = journal.take(start);
        assert_eq!(setup.len(), 3);
        let pods = setup.iter().find(|c| c.resource == "pods").unwrap();
        assert_eq!((pods.lists, pods.watches, pods.opened), (1, 1, true));
        assert_eq!(pods.describe(), "pods: list");
        let nodes = setup.iter().find(|c| c.resource == "nodes").unwrap();
        assert_eq!(nodes.refused, 0, "410 asks to list again: not a refusal");
        let refused = journal.refused();
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0].resource, "persistentvolumes");
        assert_eq!(refused[0].status, 404);
        journal.note(read("/api/v1/pods?watch=1").unwrap(), ok, "");
        journal.note(read("/api/v1/configmaps").unwrap(), ok, "");
        let later = journal.take(Instant::now());
        let opened: Vec<(&str, bool)> = later
            .iter()
            .map(|c| (c.resource.as_str(), c.opened))
            .collect();
        assert_eq!(opened, [("pods", false), ("configmaps", true)]);
        assert!(journal.take(Instant::now()).is_empty());
        assert_eq!(journal.refused().len(), 1, "a refusal stays known");
    }
}
