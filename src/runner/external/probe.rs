//! What the run asks a program over HTTP: the status protocol (docs/subjects.md) and
//! net/http/pprof's heap.
//!
//! Every answer is read up to a bound, and every request within the time the phase has
//! left: a program that sends an endless body, or never answers, fails its variant with
//! an error saying so, not the run's memory or its `timeout`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::Deserialize;

use k8s::Identity;
use measure::outside::Group;
use measure::pprof::{self, MemStats, Site};
use report::EventCounts;

/// How long one request to the program may take: a heap profile of a large heap after a
/// forced collection takes a while.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// The most of a status answer read (`{status}`, `{status}/heap`): a few informers'
/// counts.
const STATUS_BYTES: usize = 1 << 20;

/// The most of a store listing or a heap profile read (270,000 objects' identities); read
/// whole and then copied once, so the run holds at most twice it.
const LARGE_BYTES: usize = 40 << 20;

/// The most of a readiness answer read: a component's `/readyz?verbose` lists a few dozen
/// checks.
const READY_BYTES: usize = 4 << 10;

/// How long past a phase's deadline a request to the program may still be answered.
pub(super) const LATE: Duration = Duration::from_millis(500);

/// How many allocation sites a phase's report keeps.
const TOP_SITES: usize = 10;

/// A program's endpoints.
#[derive(Debug, Clone)]
pub(super) struct Probe {
    client: Client<HttpsConnector<HttpConnector>, Empty<Bytes>>,
    status: Option<String>,
    /// Its readiness endpoint (`ready`).
    ready: Option<String>,
    pprof: Option<String>,
    /// The bearer token sent with each request to `pprof` and `ready`.
    pprof_token: Option<String>,
    /// When every request must have been answered by: the phase's deadline (the
    /// subject's `timeout`), set by [`Probe::until`].
    deadline: Option<tokio::time::Instant>,
    /// What the requests cost the program, shared by every copy.
    observer: Arc<Observer>,
}

/// The CPU time a program spent answering the run's requests: its process group's CPU
/// time read before and after each, summed. Requests go one at a time, so no tick is
/// counted twice; a tick of the program's own work that falls within a request counts as
/// the request's (clock ticks of 10 ms), so the sum is an upper bound.
#[derive(Debug)]
struct Observer {
    group: Arc<Group>,
    cpu_ms: AtomicU64,
    one_at_a_time: tokio::sync::Mutex<()>,
}

/// `GET {status}`: where the program's informers are.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(super) struct Status {
    /// What the program is, for the report.
    #[serde(default)]
    pub implementation: Option<String>,
    /// Every informer has synced.
    pub synced: bool,
    /// One entry per informer's store.
    pub stores: Vec<StoreStatus>,
    /// Notifications handled since the program started, every handler together.
    #[serde(default)]
    pub handled: Option<Handled>,
}

/// One store in a [`Status`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(super) struct StoreStatus {
    /// Objects in the store.
    pub objects: u64,
    /// The highest resourceVersion applied to the store, when the program tracks it.
    #[serde(default, rename = "resourceVersion")]
    pub resource_version: Option<String>,
}

/// Cumulative notifications in a [`Status`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub(super) struct Handled {
    #[serde(default)]
    add: u64,
    #[serde(default)]
    update: u64,
    #[serde(default)]
    delete: u64,
    #[serde(default)]
    sync: u64,
}

impl Handled {
    /// The notifications since `before`.
    pub(super) fn since(self, before: Handled) -> EventCounts {
        EventCounts {
            add: self.add.saturating_sub(before.add),
            update: self.update.saturating_sub(before.update),
            delete: self.delete.saturating_sub(before.delete),
            sync: self.sync.saturating_sub(before.sync),
        }
    }
}

/// `GET {status}/store`: every store's identities.
#[derive(Debug, Deserialize)]
struct Stores {
    stores: Vec<StoreItems>,
}

#[derive(Debug, Deserialize)]
struct StoreItems {
    #[serde(default)]
    items: Vec<Item>,
}

#[derive(Debug, Deserialize)]
struct Item {
    key: String,
    #[serde(rename = "resourceVersion")]
    resource_version: String,
    uid: String,
}

/// The Go heap at one moment.
#[derive(Debug, Clone)]
pub(super) struct Heap {
    /// runtime.MemStats.
    pub stats: MemStats,
    /// The sites holding the most.
    pub sites: Vec<Site>,
}

impl Probe {
    /// The endpoints of the program whose process group is `group`: its `status`, its
    /// `ready` and its `pprof`, with the bearer token `pprof_token` for the last two
    /// (`http://`, or `https://` on loopback: [`super::tls`]).
    pub(super) fn new(
        (status, ready): (Option<String>, Option<String>),
        (pprof, pprof_token): (Option<String>, Option<String>),
        group: Arc<Group>,
    ) -> Probe {
        let client = Client::builder(TokioExecutor::new()).build(super::tls::connector());
        Probe {
            client,
            status,
            ready,
            pprof,
            pprof_token,
            deadline: None,
            observer: Arc::new(Observer {
                group,
                cpu_ms: AtomicU64::new(0),
                one_at_a_time: tokio::sync::Mutex::new(()),
            }),
        }
    }

    /// The CPU time, in ms, the program has spent answering this probe's requests (and
    /// its copies') so far.
    pub(super) fn observer_cpu_ms(&self) -> u64 {
        self.observer.cpu_ms.load(Ordering::Relaxed)
    }

    /// This probe, its every request answered by `deadline` or failed then.
    pub(super) fn until(&self, deadline: tokio::time::Instant) -> Probe {
        Probe {
            deadline: Some(deadline),
            ..self.clone()
        }
    }

    /// `GET url`, at most `limit` bytes of it; `Ok(None)` when the answer is 404 Not
    /// Found.
    async fn get_optional(&self, url: &str, limit: usize) -> Result<Option<Bytes>, String> {
        match self.get(url, limit, None).await {
            Ok(body) => Ok(Some(body)),
            Err(e) if e.contains(": 404 Not Found") => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `GET url` (with `bearer` as its token): its body, when it is at most `limit`
    /// bytes; what answering cost the program is added to the observer's.
    async fn get(&self, url: &str, limit: usize, bearer: Option<&str>) -> Result<Bytes, String> {
        let observer = &self.observer;
        let _one = observer.one_at_a_time.lock().await;
        let before = observer.group.read(false);
        let answer = self.get_unobserved(url, limit, bearer).await;
        if let (Some(before), Some(after)) = (before, observer.group.read(false)) {
            let spent = after.total.cpu_ms.saturating_sub(before.total.cpu_ms);
            observer.cpu_ms.fetch_add(spent, Ordering::Relaxed);
        }
        answer
    }

    async fn get_unobserved(
        &self,
        url: &str,
        limit: usize,
        bearer: Option<&str>,
    ) -> Result<Bytes, String> {
        let mut request = hyper::Request::get(url);
        if let Some(token) = bearer {
            request = request.header(hyper::header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let request = request
            .body(Empty::new())
            .map_err(|e| format!("`{url}`: {e}"))?;
        let request = async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|e| format!("GET {url}: {}", error_chain(&e)))?;
            let status = response.status();
            let body = http_body_util::Limited::new(response.into_body(), limit)
                .collect()
                .await
                .map_err(|e| match e.is::<http_body_util::LengthLimitError>() {
                    true => format!(
                        "GET {url}: the answer is larger than {}, the most the run reads",
                        units::Bytes(limit as u64)
                    ),
                    false => format!("GET {url}: {e}"),
                })?
                .to_bytes();
            if !status.is_success() {
                let text = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
                let hint = match (status, bearer) {
                    (hyper::StatusCode::UNAUTHORIZED, None) if self.is_pprof(url) => {
                        " (a secure port asks for a token: give it in the variant's `pprof_token`)"
                    }
                    _ => "",
                };
                return Err(format!("GET {url}: {status}: {}{hint}", text.trim()));
            }
            Ok(body)
        };
        let mut limit = tokio::time::Instant::now() + REQUEST_TIMEOUT;
        let mut within = format!("{REQUEST_TIMEOUT:?}");
        if let Some(deadline) = self.deadline.filter(|d| *d < limit) {
            limit = deadline;
            within = "the subject's `timeout`".to_owned();
        }
        tokio::time::timeout_at(limit, request)
            .await
            .unwrap_or_else(|_| Err(format!("GET {url}: no answer within {within}")))
    }

    /// Whether `url` is one of the program's pprof endpoints.
    fn is_pprof(&self, url: &str) -> bool {
        self.pprof
            .as_deref()
            .is_some_and(|base| url.starts_with(base))
    }

    /// `GET {ready}`: `None` without one; what it answered, its body on a 200 (at most
    /// [`READY_BYTES`]), else the error or the status and body.
    pub(super) async fn ready(&self) -> Option<Result<String, String>> {
        let url = self.ready.as_deref()?;
        let body = self
            .get(url, READY_BYTES, self.pprof_token.as_deref())
            .await;
        Some(body.map(|b| String::from_utf8_lossy(&b).trim().to_owned()))
    }

    /// The program's status; `Ok(None)` when it serves no status endpoint.
    pub(super) async fn status(&self) -> Result<Option<Status>, String> {
        let Some(url) = &self.status else {
            return Ok(None);
        };
        let body = self.get(url, STATUS_BYTES, None).await?;
        serde_json::from_slice(&body)
            .map(Some)
            .map_err(|e| format!("GET {url}: not the status protocol: {e}"))
    }

    /// Every store's identities, through the status protocol.
    pub(super) async fn stores(&self) -> Result<Vec<Vec<Identity>>, String> {
        let url = format!("{}/store", self.status.as_deref().unwrap_or_default());
        let body = self.get(&url, LARGE_BYTES, None).await?;
        let stores: Stores = serde_json::from_slice(&body)
            .map_err(|e| format!("GET {url}: not the status protocol's store: {e}"))?;
        Ok(stores
            .stores
            .into_iter()
            .map(|s| {
                s.items
                    .into_iter()
                    .map(|i| Identity {
                        key: i.key,
                        resource_version: i.resource_version,
                        uid: i.uid,
                    })
                    .collect()
            })
            .collect())
    }

    /// The live heap the program reports after a collection of its own (`GET
    /// {status}/heap`, for runtimes without pprof); `Ok(None)` when it serves none.
    pub(super) async fn reported_heap(&self) -> Result<Option<units::Bytes>, String> {
        let Some(status) = &self.status else {
            return Ok(None);
        };
        let url = format!("{status}/heap");
        let Some(body) = self.get_optional(&url, STATUS_BYTES).await? else {
            return Ok(None);
        };
        #[derive(Deserialize)]
        struct Reported {
            #[serde(rename = "liveBytes")]
            live_bytes: u64,
        }
        let reported: Reported = serde_json::from_slice(&body)
            .map_err(|e| format!("GET {url}: not the status protocol's heap: {e}"))?;
        Ok(Some(units::Bytes(reported.live_bytes)))
    }

    /// The heap's MemStats and top sites, after forced collections when `collect`: two,
    /// the first through a heap profile discarded, because what sync.Pool holds survives
    /// one collection in its victim cache and would make the live heap depend on what the
    /// program last did.
    pub(super) async fn heap(&self, collect: bool) -> Result<Option<Heap>, String> {
        let Some(base) = &self.pprof else {
            return Ok(None);
        };
        let token = self.pprof_token.as_deref();
        if collect {
            self.get(&format!("{base}/heap?gc=1"), LARGE_BYTES, token)
                .await?;
        }
        let url = format!("{base}/heap?debug=1{}", if collect { "&gc=1" } else { "" });
        let body = self.get(&url, LARGE_BYTES, token).await?;
        let text = String::from_utf8_lossy(&body);
        let stats = pprof::mem_stats(&text).map_err(|e| format!("GET {url}: {e}"))?;
        let sites = if collect {
            pprof::top_sites(&text, TOP_SITES)
        } else {
            Vec::new()
        };
        Ok(Some(Heap { stats, sites }))
    }

    /// The heap profile in pprof's format (gzipped protocol buffers), as of the last
    /// collection.
    pub(super) async fn heap_profile(&self) -> Result<Option<Bytes>, String> {
        let Some(base) = &self.pprof else {
            return Ok(None);
        };
        let token = self.pprof_token.as_deref();
        self.get(&format!("{base}/heap"), LARGE_BYTES, token)
            .await
            .map(Some)
    }
}

/// An error and its sources, one after the other: a TLS refusal is in a source of the
/// client's error, which alone says only "client error (Connect)".
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut said = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        said.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    said
}
