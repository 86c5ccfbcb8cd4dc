//! The reflector: gets the state with a LIST (or a watch-list), then WATCHes from its
//! resourceVersion, turning what the server says into [`Event`]s for the store (client-go's
//! `Reflector.ListAndWatch`).
//!
//! Requests are built here, not by `kube::Api`, so that each list rule sends exactly what
//! its informer sends: kube's `ListParams` drops `resourceVersion=0` when a `limit` is set,
//! while client-go sends both and relies on the watch cache ignoring the limit. Responses
//! are read the way kube reads them (`Client::request`: the body whole, copied into a
//! `String`, then decoded), so a LIST costs what it costs a kube-based informer.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use futures::{Stream, StreamExt, TryStreamExt};
use kube::core::{ObjectList, WatchEvent};

use super::Event;
use super::object::Object;
use scenario::{InitialSync, ListRules, ObjectKind, Scope};

/// Watch events that slow readers (`Rules::read_cost_ms`) of this process have taken
/// from their streams and are still reading, and how many they have read in all. A reader
/// asleep on its cost is idle to the paused clock while more events wait for it in its
/// connection, so the runner's quiet process is not enough to say it has read everything:
/// it waits for none in reading too ([`slow_reads`]). Process-wide, as a variant is a
/// process, so that a reader without a cost carries nothing for it.
static READING: AtomicUsize = AtomicUsize::new(0);
static READ: AtomicU64 = AtomicU64::new(0);

/// Events slow readers are reading now, and have read in all (progress: a slow reader is
/// slow, not stuck).
pub fn slow_reads() -> (usize, u64) {
    (READING.load(Ordering::SeqCst), READ.load(Ordering::SeqCst))
}

/// One event in [`READING`], until it is read or its watch is dropped.
struct Reading;

impl Reading {
    fn start() -> Reading {
        READING.fetch_add(1, Ordering::SeqCst);
        Reading
    }
}

impl Drop for Reading {
    fn drop(&mut self) {
        READING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// client-go's watch timeout is random in [5 min, 10 min); this is its lower bound, fixed
/// so that runs repeat exactly.
const CLIENT_GO_WATCH_TIMEOUT_SECONDS: u32 = 300;
/// kube's default watch timeout (it caps it below 295 s).
const KUBE_WATCH_TIMEOUT_SECONDS: u32 = 290;
/// How long the reflector waits before it syncs again after a watch-list was cut short,
/// or after a very short watch.
const RETRY_PAUSE: std::time::Duration = std::time::Duration::from_secs(1);
/// client-go takes a watch that ends within this long of opening, having carried no
/// event, for a broken one: it lists again rather than watch again ("very short watch",
/// reflector.go `handleAnyWatch`).
pub const VERY_SHORT_WATCH: std::time::Duration = std::time::Duration::from_secs(1);
/// The annotation of the bookmark that ends a watch-list's initial events.
const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

const JSON: &str = "application/json";
const METADATA_LIST: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
const METADATA: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";

/// Why the reflector stopped.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A LIST request failed.
    #[error("failed to list")]
    List(#[source] kube::Error),
    /// A WATCH request failed, or its stream broke.
    #[error("failed to watch")]
    Watch(#[source] kube::Error),
    /// The server sent an ERROR event other than 410 Expired.
    #[error("watch stream returned an error: {0}")]
    WatchStatus(String),
    /// A request could not be built.
    #[error("failed to build a request")]
    Request(#[source] http::Error),
}

/// How one watch connection ended.
#[derive(Debug, PartialEq, Eq)]
pub enum WatchEnd {
    /// The stream ended (timeout, disconnect): watch again from the last resourceVersion.
    Closed,
    /// The server said 410 Expired, a watch-list ended before its initial events did, or
    /// (client-go) a watch ended very short: get the state again.
    Expired,
}

/// The settings the reflector follows.
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    /// Which LISTs to make.
    pub list_rules: ListRules,
    /// LIST or watch-list.
    pub initial_sync: InitialSync,
    /// `limit` of paged LISTs; 0 for none.
    pub page_size: u32,
    /// What reading one watch event costs, in virtual ms. (A `u16` keeps the rules in 8
    /// bytes: the reflector lives in the informer's task, whose allocation is part of
    /// every variant's exact figures.)
    pub read_cost_ms: u16,
}

/// Lists and watches one resource, across all namespaces or in one.
pub struct Reflector<K> {
    client: kube::Client,
    /// `/api/v1/pods` or `/api/v1/namespaces/NS/pods`, and the variant's selectors as its
    /// query when it has any (`?labelSelector=...`).
    path: String,
    rules: Rules,
    /// The last resourceVersion seen: of a LIST, an event or a bookmark.
    last_sync: String,
    /// The last LIST at `last_sync` answered 410: the next asks for the newest state.
    last_sync_unavailable: bool,
    /// A LIST at "0" came back in pages: the server honours `limit` there (no watch
    /// cache), so later LISTs keep paging.
    paginated: bool,
    /// Events read from watches, bookmarks included (wrapping; only its changes count).
    events: u32,
    kind: PhantomData<fn() -> K>,
}

impl<K> std::fmt::Debug for Reflector<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reflector")
            .field("path", &self.path)
            .field("rules", &self.rules)
            .field("last_sync", &self.last_sync)
            .finish_non_exhaustive()
    }
}

/// A decoded watch stream.
pub type Watch<K> =
    std::pin::Pin<Box<dyn Stream<Item = Result<WatchEvent<K>, kube::Error>> + Send>>;

impl<K: Object> Reflector<K> {
    /// A reflector over the objects of `kind` that `scope` selects, in `namespace` or
    /// in all namespaces.
    pub fn new(
        client: kube::Client,
        rules: Rules,
        (kind, namespace): (ObjectKind, Option<&str>),
        scope: &Scope,
    ) -> Reflector<K> {
        let mut path = kind.collection_path(namespace.filter(|_| kind.namespaced()));
        if !scope.is_default() {
            path.push('?');
            path.push_str(&scope.query());
        }
        Reflector {
            client,
            path,
            rules,
            last_sync: String::new(),
            last_sync_unavailable: false,
            paginated: false,
            events: 0,
            kind: PhantomData,
        }
    }

    /// Gets the whole state into `sink` as `Init`, pages, `InitDone`. With watch-list the
    /// state arrives on a watch, which is returned to go on with; with LIST, `None`. A
    /// watch-list cut short starts over until it completes.
    pub async fn sync(
        &mut self,
        sink: &mut impl FnMut(Event<K>),
    ) -> Result<Option<Watch<K>>, Error> {
        match self.rules.initial_sync {
            InitialSync::List => {
                self.list(sink).await?;
                Ok(None)
            }
            // Nothing marks where the state ends: the informer counts as synced at once and
            // takes the ADDED events as they come.
            InitialSync::WatchRv0 => {
                sink(Event::Init);
                sink(Event::InitDone);
                Ok(Some(self.open_watch("0", false).await?))
            }
            InitialSync::WatchList => loop {
                let rv = match self.rules.list_rules {
                    // client-go's watch-list asks the last version it knows ("" at first).
                    ListRules::ClientGo if !self.last_sync_unavailable => self.last_sync.clone(),
                    ListRules::ClientGo => String::new(),
                    // kube-runtime's `streaming_lists()` asks "0".
                    ListRules::KubeRuntime => "0".to_owned(),
                };
                sink(Event::Init);
                let mut stream = self.open_watch(&rv, true).await?;
                if self.follow(&mut stream, sink, true).await? == WatchEnd::Closed {
                    return Ok(Some(stream));
                }
                // Cut short before the initial events ended (410, or the stream closed):
                // start over with the newest state, after a pause as client-go's backoff
                // would make (fixed, on the virtual clock, so that runs repeat).
                self.last_sync_unavailable = true;
                tokio::time::sleep(RETRY_PAUSE).await;
            },
        }
    }

    /// LISTs the state (client-go: the pager joins every page first; kube-runtime: each
    /// page goes on as it arrives).
    async fn list(&mut self, sink: &mut impl FnMut(Event<K>)) -> Result<(), Error> {
        loop {
            match self.list_once(sink).await {
                Ok(()) => return Ok(()),
                // client-go: a 410 on a LIST at the last synced version means that version
                // is gone; list the newest state instead (`relistResourceVersion`).
                Err(Error::List(kube::Error::Api(status)))
                    if status.code == 410
                        && self.rules.list_rules == ListRules::ClientGo
                        && !self.last_sync_unavailable =>
                {
                    self.last_sync_unavailable = true;
                }
                Err(e) => return Err(e),
            }
        }
    }

    async fn list_once(&mut self, sink: &mut impl FnMut(Event<K>)) -> Result<(), Error> {
        let (rv, limit) = self.list_request();
        let mut joined: Vec<K> = Vec::new();
        let mut continue_token: Option<String> = None;
        let mut first = true;
        loop {
            let page = self
                .list_page(rv.as_deref(), limit, continue_token.as_deref())
                .await?;
            let next = page.metadata.continue_.filter(|c| !c.is_empty());
            if first {
                sink(Event::Init);
                if rv.as_deref() == Some("0") && next.is_some() {
                    self.paginated = true;
                }
            }
            first = false;
            match self.rules.list_rules {
                ListRules::ClientGo if joined.is_empty() => joined = page.items,
                ListRules::ClientGo => joined.extend(page.items),
                ListRules::KubeRuntime => sink(Event::InitPage(page.items)),
            }
            match next {
                Some(token) => continue_token = Some(token),
                None => {
                    if self.rules.list_rules == ListRules::ClientGo {
                        sink(Event::InitPage(joined));
                    }
                    self.last_sync = page.metadata.resource_version.unwrap_or_default();
                    self.last_sync_unavailable = false;
                    sink(Event::InitDone);
                    return Ok(());
                }
            }
        }
    }

    /// The resourceVersion and page size of the next LIST.
    fn list_request(&self) -> (Option<String>, u32) {
        match self.rules.list_rules {
            ListRules::KubeRuntime => (None, self.rules.page_size),
            ListRules::ClientGo => {
                // reflector.go `relistResourceVersion`.
                let rv = if self.last_sync_unavailable {
                    ""
                } else if self.last_sync.is_empty() {
                    "0"
                } else {
                    &self.last_sync
                };
                // reflector.go `list`: a version other than "" and "0" is served from the
                // watch cache only unpaged, so paging is switched off for it.
                let limit = if self.paginated || rv.is_empty() || rv == "0" {
                    self.rules.page_size
                } else {
                    0
                };
                (Some(rv.to_owned()).filter(|v| !v.is_empty()), limit)
            }
        }
    }

    async fn list_page(
        &self,
        rv: Option<&str>,
        limit: u32,
        continue_token: Option<&str>,
    ) -> Result<ObjectList<K>, Error> {
        let query = {
            let mut query = form_urlencoded::Serializer::new(String::new());
            if limit > 0 {
                query.append_pair("limit", &limit.to_string());
            }
            match (continue_token, rv) {
                (Some(token), _) => {
                    query.append_pair("continue", token);
                }
                (None, Some(rv)) => {
                    query.append_pair("resourceVersion", rv);
                }
                (None, None) => {}
            }
            query.finish()
        };
        let accept = if K::metadata_api() {
            METADATA_LIST
        } else {
            JSON
        };
        let request = self.get(&query, accept)?;
        self.client.request(request).await.map_err(Error::List)
    }

    /// Watches from the last resourceVersion, handing every event to `sink` until the
    /// stream ends. client-go relists after a very short watch, a pause first (its
    /// backoff's, fixed on the virtual clock so that runs repeat).
    pub async fn watch(&mut self, sink: &mut impl FnMut(Event<K>)) -> Result<WatchEnd, Error> {
        let rv = match self.rules.initial_sync {
            // It never had a complete state to resume from: the whole state again.
            InitialSync::WatchRv0 => "0".to_owned(),
            _ => self.last_sync.clone(),
        };
        let opened = tokio::time::Instant::now();
        let events = self.events;
        let mut stream = self.open_watch(&rv, false).await?;
        let end = self.follow(&mut stream, sink, false).await?;
        let very_short = end == WatchEnd::Closed
            && self.rules.list_rules == ListRules::ClientGo
            && self.events == events
            && opened.elapsed() < VERY_SHORT_WATCH;
        if !very_short {
            return Ok(end);
        }
        tokio::time::sleep(RETRY_PAUSE).await;
        Ok(WatchEnd::Expired)
    }

    /// Goes on with a watch that a watch-list opened.
    pub async fn resume(
        &mut self,
        mut stream: Watch<K>,
        sink: &mut impl FnMut(Event<K>),
    ) -> Result<WatchEnd, Error> {
        self.follow(&mut stream, sink, false).await
    }

    async fn open_watch(&self, rv: &str, initial_events: bool) -> Result<Watch<K>, Error> {
        let timeout = match self.rules.list_rules {
            ListRules::ClientGo => CLIENT_GO_WATCH_TIMEOUT_SECONDS,
            ListRules::KubeRuntime => KUBE_WATCH_TIMEOUT_SECONDS,
        };
        let query = {
            let mut query = form_urlencoded::Serializer::new(String::new());
            query.append_pair("watch", "true");
            query.append_pair("timeoutSeconds", &timeout.to_string());
            query.append_pair("allowWatchBookmarks", "true");
            if initial_events {
                query.append_pair("sendInitialEvents", "true");
                query.append_pair("resourceVersionMatch", "NotOlderThan");
            }
            if !rv.is_empty() {
                query.append_pair("resourceVersion", rv);
            }
            query.finish()
        };
        let accept = if K::metadata_api() { METADATA } else { JSON };
        let request = self.get(&query, accept)?;
        let stream = self
            .client
            .request_events::<K>(request)
            .await
            .map_err(Error::Watch)?;
        if self.rules.read_cost_ms == 0 {
            return Ok(Box::pin(stream));
        }
        let cost = std::time::Duration::from_millis(self.rules.read_cost_ms.into());
        // A slow reader: each event takes `cost` to read. Wrapped here rather than slept
        // in `follow`, so that an informer without a cost runs exactly the code it did.
        Ok(Box::pin(stream.then(move |event| {
            // Counted as it leaves the connection, in the poll that takes it: no moment
            // passes with the event neither waiting there nor counted.
            let reading = Reading::start();
            async move {
                tokio::time::sleep(cost).await;
                READ.fetch_add(1, Ordering::SeqCst);
                drop(reading);
                event
            }
        })))
    }

    /// Reads `stream` into `sink`. While `initial`, ADDED events are the initial state
    /// until the `k8s.io/initial-events-end` bookmark.
    async fn follow(
        &mut self,
        stream: &mut Watch<K>,
        sink: &mut impl FnMut(Event<K>),
        initial: bool,
    ) -> Result<WatchEnd, Error> {
        while let Some(event) = stream.try_next().await.map_err(Error::Watch)? {
            self.events = self.events.wrapping_add(1);
            match event {
                WatchEvent::Added(obj) | WatchEvent::Modified(obj) => {
                    self.saw(&obj);
                    sink(if initial {
                        Event::InitApply(obj)
                    } else {
                        Event::Apply(obj)
                    });
                }
                WatchEvent::Deleted(obj) => {
                    self.saw(&obj);
                    sink(if initial {
                        Event::InitDelete(obj)
                    } else {
                        Event::Delete(obj)
                    });
                }
                WatchEvent::Bookmark(bookmark) => {
                    self.last_sync = bookmark.metadata.resource_version;
                    if initial
                        && bookmark
                            .metadata
                            .annotations
                            .get(INITIAL_EVENTS_END)
                            .is_some_and(|v| v == "true")
                    {
                        self.last_sync_unavailable = false;
                        sink(Event::InitDone);
                        // The watch goes on; the caller follows it from here.
                        return Ok(WatchEnd::Closed);
                    }
                }
                WatchEvent::Error(status) if status.code == 410 => return Ok(WatchEnd::Expired),
                WatchEvent::Error(status) => {
                    return Err(Error::WatchStatus(status.message.clone()));
                }
            }
        }
        Ok(if initial {
            WatchEnd::Expired
        } else {
            WatchEnd::Closed
        })
    }

    /// Every event moves the last-sync resourceVersion (reflector.go `watchHandler`).
    fn saw(&mut self, obj: &K) {
        if let Some(rv) = obj.meta().resource_version.as_deref() {
            // Reuses the buffer: no allocation per event for bookkeeping.
            self.last_sync.clear();
            self.last_sync.push_str(rv);
        }
    }

    fn get(&self, query: &str, accept: &str) -> Result<http::Request<Vec<u8>>, Error> {
        let uri = if query.is_empty() {
            self.path.clone()
        } else if self.path.contains('?') {
            format!("{}&{query}", self.path)
        } else {
            format!("{}?{query}", self.path)
        };
        http::Request::get(uri)
            .header(http::header::ACCEPT, accept)
            .body(Vec::new())
            .map_err(Error::Request)
    }
}

#[cfg(test)]
mod scripted_tests;
