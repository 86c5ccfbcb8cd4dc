//! The built-in apiserver on a loopback socket for `run`'s external variants: served as
//! `serve` serves it (real clock, real socket), with a gate that holds the resource's
//! requests until the run has measured the program before it got any object. The same
//! serving, gate and all, carries the proxy `run` puts in front of a real server.
//!
//! Every request must carry the run's [`Secret`]: the port is open to every local user,
//! and what it serves (the run's objects, a real cluster through the proxy) is the
//! program's alone. A request without it is answered 401 and is not the program's: it is
//! counted apart, never listed among the program's refused requests.

mod journal;
mod secret;

pub use journal::RefusedResource;
pub use secret::Secret;

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::http::{Method, StatusCode, Uri};

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::sync::watch;
use tower::ServiceExt;

use super::ApiServer;
use super::group::{Group, SampledGroup};
use super::records;
use super::routes::network_router;
use super::serve::{SCAN_CHUNK, SHARED_ENCODING_BYTES, WATCH_CACHE_EVENTS};
use super::websocket;
use journal::{Journal, Read};
use report::{CollectionReads, RefusedRequest};
use scenario::{ObjectKind, ObjectSpec};

/// Holds every request under `/api/v1/` and `/apis/apps/v1/` (the resources' and the
/// namespaces'), and under a sampled kind's own group (`/apis/example.com/v1alpha1/`),
/// until it is opened; discovery and the records (a leader election's Lease, Events,
/// the ConfigMaps and Secrets a program keeps beside the objects) pass. It also keeps
/// the requests the server refused, to name when a program fails.
#[derive(Debug, Clone)]
pub struct Gate {
    open: watch::Sender<bool>,
    knocked: Arc<AtomicBool>,
    /// The served kind, whose resources are held.
    kind: ObjectKind,
    /// The root of the served kind's resources, when it is in neither of those groups.
    root: Option<&'static str>,
    refused: Arc<Mutex<Refused>>,
    /// The program's reads of collections.
    journal: Arc<Mutex<Journal>>,
    /// Requests without the run's secret, answered 401.
    unauthenticated: Arc<AtomicU64>,
}

/// Requests answered with a 4xx or 5xx, by method, path and status: how many times, and
/// the first answer's message (a `Status`'s, or the text of a plain one).
#[derive(Debug, Default)]
struct Refused(BTreeMap<(String, String, u16), (u64, String)>);

impl Gate {
    /// A closed gate in front of `kind`'s resources.
    fn new(kind: ObjectKind) -> Gate {
        Gate {
            open: watch::Sender::new(false),
            knocked: Arc::new(AtomicBool::new(false)),
            kind,
            root: SampledGroup::served_with(kind).then(|| kind.api_root()),
            refused: Arc::default(),
            journal: Arc::default(),
            unauthenticated: Arc::default(),
        }
    }

    /// Notes a request the server refused (4xx, 5xx) with the message of its answer
    /// `body`; not a read of one object that is not there (a leader election asks for
    /// its Lease before it makes it), nor a 409 (a create of one that is there, an update
    /// from a stale version: an operator's `CreateOrUpdate` from a cache behind, a
    /// leader election's lock): those are answers a cluster gives too, not something the
    /// server lacks. Returns the answer's message.
    fn refused(&self, method: &Method, uri: &Uri, status: StatusCode, body: &[u8]) -> String {
        let (message, named) = match serde_json::from_slice::<serde_json::Value>(body) {
            Ok(answer) => {
                let details = &answer["details"];
                let named = details["name"].as_str().is_some_and(|n| !n.is_empty())
                    && details["kind"] != "namespaces";
                let message = answer["message"].as_str().unwrap_or_default().to_owned();
                (message, named)
            }
            Err(_) => (String::from_utf8_lossy(body).trim().to_owned(), false),
        };
        let absent = method == Method::GET && status == StatusCode::NOT_FOUND && named;
        if status != StatusCode::CONFLICT && !absent {
            let mut refused = self.refused.lock().unwrap_or_else(|e| e.into_inner());
            let key = (method.to_string(), uri.path().to_owned(), status.as_u16());
            refused.0.entry(key).or_insert((0, message.clone())).0 += 1;
        }
        message
    }

    /// Notes the program's read of a collection, answered `status` (`message`, a
    /// refusal's).
    fn read(&self, read: Read, status: StatusCode, message: &str) {
        let mut journal = self.journal.lock().unwrap_or_else(|e| e.into_inner());
        journal.note(read, status, message);
    }

    /// The collections the program read since the last call, one entry each, `since`
    /// the phase's start: the caches it opened and kept up.
    pub fn take_collections(&self, since: std::time::Instant) -> Vec<CollectionReads> {
        let mut journal = self.journal.lock().unwrap_or_else(|e| e.into_inner());
        journal.take(since)
    }

    /// Every resource whose reads (LIST, WATCH) the server refused since the program
    /// started, other than those `accepted` names (kubectl's names; `*` for all): a
    /// cache of it cannot sync.
    pub fn refused_resources(&self, accepted: &[String]) -> Vec<RefusedResource> {
        let journal = self.journal.lock().unwrap_or_else(|e| e.into_inner());
        let mut refused = journal.refused();
        refused.retain(|r| !accepted.iter().any(|a| a == "*" || *a == r.resource));
        refused
    }

    /// The requests the server refused since the last [`Gate::take_refused`], for an
    /// error that says why a program did not get on (`""` without any): `; the server
    /// refused 12 request(s): POST /apis/example.com/v1/namespaces/default/widgets: 404
    /// "the server could not find the requested resource" (x12)`.
    pub fn refusals(&self) -> String {
        let refused = self.refused.lock().unwrap_or_else(|e| e.into_inner());
        let mut said = match RefusedRequest::summary(&Gate::listed(&refused)) {
            summary if summary.is_empty() => summary,
            summary => format!("; {summary}"),
        };
        let unauthenticated = self.unauthenticated();
        if unauthenticated > 0 {
            said.push_str(&format!(
                "; {unauthenticated} request(s) without the run's secret were refused 401 \
                 (a program must reach the server through `{{kubeconfig}}` or `{{server}}` as \
                 given: the secret is the first segment of the server's path)"
            ));
        }
        said
    }

    /// How many requests came without the run's secret (answered 401).
    pub fn unauthenticated(&self) -> u64 {
        self.unauthenticated.load(Ordering::Relaxed)
    }

    /// The requests the server refused since the last call, taken.
    pub fn take_refused(&self) -> Vec<RefusedRequest> {
        let mut refused = self.refused.lock().unwrap_or_else(|e| e.into_inner());
        let listed = Gate::listed(&refused);
        refused.0.clear();
        listed
    }

    fn listed(refused: &Refused) -> Vec<RefusedRequest> {
        let listed =
            refused.0.iter().map(
                |((method, path, status), (count, message))| RefusedRequest {
                    method: method.clone(),
                    path: path.clone(),
                    status: *status,
                    message: message.clone(),
                    count: *count,
                },
            );
        listed.collect()
    }

    /// Whether a request has come to the closed gate: the client is ready to list.
    pub fn knocked(&self) -> bool {
        self.knocked.load(Ordering::Relaxed)
    }

    /// Lets every request held, and every later one, through.
    pub fn open(&self) {
        self.open.send_replace(true);
    }

    async fn pass(&self, path: &str) {
        let under = |root: &str| {
            path.strip_prefix(root)
                .is_some_and(|rest| rest.starts_with('/'))
        };
        let held = under("/api/v1") || under("/apis/apps/v1") || self.root.is_some_and(under);
        if !held || records::written_at(self.kind, path) {
            return;
        }
        let mut open = self.open.subscribe();
        if !*open.borrow_and_update() {
            self.knocked.store(true, Ordering::Relaxed);
            // The sender lives as long as the gate, which every connection holds.
            let _ = open.wait_for(|open| *open).await;
        }
    }
}

impl ApiServer {
    /// A server for a program under measurement, set up as `serve` sets it up (the watch
    /// cache's history unless `history_events` says, encodings shared, long scans
    /// yielding) but for one thing: a slow watcher is not terminated. A phase writes all
    /// its changes at one instant, a burst no cluster sends, and a program that takes a
    /// moment to read 10,000 deletes must not be cut off and relist for it.
    pub fn serving(spec: ObjectSpec, history_events: Option<u64>) -> ApiServer {
        let server = ApiServer::new(spec);
        server.set_history_limit(Some(history_events.unwrap_or(WATCH_CACHE_EVENTS)));
        server.share_encodings(SHARED_ENCODING_BYTES);
        server.yield_during_scans(SCAN_CHUNK);
        server
    }
}

/// A loopback endpoint a run opened for its program.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// Where it listens: 127.0.0.1 at a port of the kernel's choosing.
    pub addr: SocketAddr,
    /// The gate in front of the served kind's resources, closed at first.
    pub gate: Gate,
    /// What every request must carry.
    pub secret: Secret,
}

impl Endpoint {
    /// Its URL for the program, the secret its base path: `http://127.0.0.1:PORT/<secret>`.
    pub fn url(&self) -> String {
        format!("http://{}/{}", self.addr, self.secret.token())
    }
}

/// Serves `server` on 127.0.0.1 at a port of the kernel's choosing, on the current
/// runtime, until the runtime ends, to requests carrying the endpoint's secret.
pub async fn serve_loopback(server: &ApiServer) -> std::io::Result<Endpoint> {
    let app = network_router(server.clone());
    serve_gated(
        move |request| {
            let app = app.clone();
            async move { app.oneshot(request).await.unwrap_or_else(|e| match e {}) }
        },
        server.spec().kind,
    )
    .await
}

/// Serves `answer` over HTTP/1.1 on 127.0.0.1 at a port of the kernel's choosing, on the
/// current runtime, until the runtime ends, a [`Gate`] in front of it holding the
/// requests for `kind`'s resources, and a new [`Secret`] every request must carry.
/// `run` serves the built-in apiserver so, and the proxy in front of a real one.
pub async fn serve_gated<F, Fut, B>(answer: F, kind: ObjectKind) -> std::io::Result<Endpoint>
where
    F: Fn(hyper::Request<hyper::body::Incoming>) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = hyper::Response<B>> + Send + 'static,
    B: hyper::body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let listener = tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0)).await?;
    let addr = listener.local_addr()?;
    let gate = Gate::new(kind);
    let secret = Secret::new()?;
    let (held, asked) = (gate.clone(), secret.clone());
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            };
            let (answer, gate, secret) = (answer.clone(), held.clone(), asked.clone());
            let service =
                tower::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
                    let (answer, gate) = (answer.clone(), gate.clone());
                    let admitted = secret.admit(&mut request);
                    async move {
                        if !admitted {
                            gate.unauthenticated.fetch_add(1, Ordering::Relaxed);
                            return Ok(unauthorized());
                        }
                        let read = Read::of(request.method(), request.uri());
                        gate.pass(request.uri().path()).await;
                        let (method, uri) = (request.method().clone(), request.uri().clone());
                        let response = websocket::answer(request, answer).await;
                        let status = response.status();
                        if !status.is_client_error() && !status.is_server_error() {
                            if let Some(read) = read {
                                gate.read(read, status, "");
                            }
                            return Ok::<_, Infallible>(response);
                        }
                        // A refusal is a small body, whole: read to say what it said.
                        let (parts, body) = response.into_parts();
                        let body = http_body_util::BodyExt::collect(body)
                            .await
                            .map(|b| b.to_bytes())
                            .unwrap_or_default();
                        let message = gate.refused(&method, &uri, status, &body);
                        if let Some(read) = read {
                            gate.read(read, status, &message);
                        }
                        Ok(axum::response::Response::from_parts(parts, body.into()))
                    }
                });
            tokio::spawn(async move {
                // A client that hangs up is not the server's error.
                let _ = http1::Builder::new()
                    .timer(TokioTimer::new())
                    .serve_connection(TokioIo::new(stream), TowerToHyperService::new(service))
                    .with_upgrades()
                    .await;
            });
        }
    });
    Ok(Endpoint { addr, gate, secret })
}

/// kube-apiserver's answer to a request it cannot authenticate.
fn unauthorized() -> axum::response::Response {
    super::status::status(StatusCode::UNAUTHORIZED, "Unauthorized", "Unauthorized")
}
