//! A real kube-apiserver that `run` talks to, named by a kubeconfig: a cluster, or the
//! launcher in `servers/kube-apiserver`.
//!
//! The run writes only in namespaces it makes for itself (`informer-mem-run-...`, labelled
//! [`RUN_LABEL`]) and removes them at its end. Its informers reach the server through
//! [`Faults`], which cut their watches and answer a watch from before a compaction; the
//! run's own requests (its writes, the oracle's LISTs) go through a client of their own,
//! charged to the harness.

mod census;
mod faults;
mod metrics;
mod objects;
mod position;

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context, bail};
use bytes::Bytes;
use http_body_util::BodyExt;
use kube::client::ConfigExt;
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::{Value, json};
use tower::{BoxError, ServiceBuilder};

pub use census::{Census, Counted, DEFAULT_RESOURCES, Spread, census};
pub use faults::{Body, Faults};

pub use metrics::Counters;
pub use objects::{for_server, scope_on_server};

use k8s::{TruthEntry, store_key};
use measure::Component;
use measure::attributed::{Attribute, Spawner};
use scenario::{ObjectKind, Scope};

/// A program's requests on their way to the server ([`Cluster::forwarder`]).
pub type Forwarder = tower::util::BoxCloneService<
    http::Request<kube::client::Body>,
    http::Response<faults::Body>,
    BoxError,
>;

/// The label on every namespace a run makes; its value is the run's id.
pub const RUN_LABEL: &str = "informer-mem/run";

/// How long a namespace may take to go once deleted (the namespace controller deletes
/// what is in it first).
const NAMESPACE_DEADLINE: Duration = Duration::from_secs(300);

/// A list's metadata-only form.
const METADATA_LIST: &str =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

/// How long one request of the run's own may take.
const REQUEST_DEADLINE: Duration = Duration::from_secs(60);

/// What plain watchers have read: bytes and events (lines).
#[derive(Debug, Default)]
pub struct Watched {
    bytes: AtomicU64,
    events: AtomicU64,
    /// Watches the server has answered and not ended.
    open: AtomicU64,
}

impl Watched {
    fn add(&self, data: &[u8]) {
        self.bytes.fetch_add(data.len() as u64, Ordering::Relaxed);
        let lines = data.iter().filter(|b| **b == b'\n').count() as u64;
        self.events.fetch_add(lines, Ordering::Relaxed);
    }

    /// Watches open now.
    pub fn open(&self) -> u64 {
        self.open.load(Ordering::Relaxed)
    }

    /// Bytes and events read so far.
    pub fn read(&self) -> (u64, u64) {
        (
            self.bytes.load(Ordering::Relaxed),
            self.events.load(Ordering::Relaxed),
        )
    }
}

/// What [`Cluster::follow`] has seen.
#[derive(Debug, Default)]
pub struct Followed {
    newest: AtomicU64,
    deleted: AtomicU64,
    failed: std::sync::atomic::AtomicBool,
}

impl Followed {
    /// The newest event's resourceVersion (or where the watch started).
    pub fn newest(&self) -> u64 {
        self.newest.load(Ordering::Relaxed)
    }

    /// DELETED events so far.
    pub fn deleted(&self) -> u64 {
        self.deleted.load(Ordering::Relaxed)
    }

    /// Whether the watch ended on an error.
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }
}

/// A real server and the run's own client to it.
#[derive(Clone)]
pub struct Cluster {
    config: kube::Config,
    client: kube::Client,
    /// The server's URL, as the kubeconfig gives it.
    pub url: String,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Cluster {
    /// The server `kubeconfig`'s current context names; nothing is sent yet.
    pub async fn connect(kubeconfig: &Path) -> anyhow::Result<Cluster> {
        let file = Kubeconfig::read_from(kubeconfig)
            .with_context(|| format!("reading the kubeconfig {}", kubeconfig.display()))?;
        let config = kube::Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
            .await
            .with_context(|| format!("the kubeconfig {}", kubeconfig.display()))?;
        let url = config.cluster_url.to_string();
        let client = kube::Client::try_from(config.clone())
            .with_context(|| format!("a client for {url}"))?;
        Ok(Cluster {
            config,
            client,
            url,
        })
    }

    /// A client for an informer: its connections and calls charged to the informer, its
    /// requests through `faults`.
    pub fn informer_client(&self, faults: &Faults) -> anyhow::Result<kube::Client> {
        let _informer = measure::alloc::enter(Component::Informer);
        let service = Attribute {
            component: Component::Informer,
            inner: faults.service(self.authenticated(Component::Informer)?),
        };
        Ok(kube::Client::new(
            service,
            self.config.default_namespace.clone(),
        ))
    }

    /// What carries a program's requests from the run's proxy on to the server: through
    /// `faults`, as the kubeconfig's client (its TLS and credentials), charged to what
    /// `faults` is charged to.
    pub fn forwarder(&self, faults: &Faults) -> anyhow::Result<Forwarder> {
        let component = faults.component();
        let service = Attribute {
            component,
            inner: faults.service(self.authenticated(component)?),
        };
        Ok(tower::util::BoxCloneService::new(service))
    }

    /// A connection pool to the server with the kubeconfig's base URL, credentials and
    /// headers, its tasks charged to `component`.
    fn authenticated(
        &self,
        component: Component,
    ) -> anyhow::Result<
        impl tower::Service<
            http::Request<kube::client::Body>,
            Response = http::Response<hyper::body::Incoming>,
            Error = BoxError,
            Future: Send,
        > + Clone
        + Send
        + 'static,
    > {
        let config = &self.config;
        let https = config.rustls_https_connector()?;
        let http = hyper_util::client::legacy::Client::builder(Spawner(component)).build(https);
        Ok(ServiceBuilder::new()
            .layer(config.base_uri_layer())
            .option_layer(config.auth_layer()?)
            .layer(config.extra_headers_layer()?)
            .map_err(BoxError::from)
            .service(http))
    }

    /// The server's version (`gitVersion` of `/version`): also checks that it answers.
    pub async fn version(&self) -> anyhow::Result<String> {
        let version = self.call(http::Method::GET, "/version", None).await?;
        let version = expect_status(version, &[200], "GET /version")?;
        Ok(version["gitVersion"]
            .as_str()
            .unwrap_or("unknown")
            .to_owned())
    }

    /// Checks that the server serves `kind` as the scenario has it: its resource listed
    /// in its group and version's discovery, of that kind and scope. A custom resource
    /// whose CustomResourceDefinition is not installed is named here, before anything
    /// runs, rather than by every variant's first LIST.
    pub async fn check_serves(&self, kind: ObjectKind) -> anyhow::Result<()> {
        let root = kind.api_root();
        let (status, body) = self.call(http::Method::GET, root, None).await?;
        let discovery: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let listed = (status == 200)
            .then(|| discovery["resources"].as_array())
            .flatten()
            .and_then(|resources| resources.iter().find(|r| r["name"] == kind.plural()));
        let Some(listed) = listed else {
            bail!(
                "the server serves no `{}` in {} (GET {root}: {status}){}",
                kind.plural(),
                kind.api_version(),
                if kind.generated() {
                    ""
                } else {
                    "; is its CustomResourceDefinition installed?"
                }
            );
        };
        if listed["kind"] != kind.as_str() {
            bail!(
                "the server serves `{}` in {} as kind {}, not {}",
                kind.plural(),
                kind.api_version(),
                listed["kind"],
                kind.as_str()
            );
        }
        if listed["namespaced"] != kind.namespaced() {
            let scope = |namespaced| {
                if namespaced {
                    "namespaced"
                } else {
                    "cluster-scoped"
                }
            };
            bail!(
                "the server serves `{}` in {} {}, where the scenario has them {} \
                 (objects.namespaced)",
                kind.plural(),
                kind.api_version(),
                scope(!kind.namespaced()),
                scope(kind.namespaced())
            );
        }
        Ok(())
    }

    /// The server's cumulative counters now (`/metrics`).
    pub async fn counters(&self) -> anyhow::Result<Counters> {
        let page = self
            .send(http::Method::GET, "/metrics", None, "text/plain")
            .await?;
        if page.0 != 200 {
            bail!(
                "GET /metrics on {}: the server answered {}",
                self.url,
                page.0
            );
        }
        Counters::parse(&String::from_utf8_lossy(&page.1)).with_context(|| {
            format!(
                "GET /metrics on {}: no go_memstats or process counters",
                self.url
            )
        })
    }

    /// The server's heap profile now (`/debug/pprof/heap`, gzipped protobuf); `None`
    /// when the server does not serve profiles (`--profiling=false`).
    pub async fn heap_profile(&self) -> anyhow::Result<Option<Bytes>> {
        let (status, body) = self
            .send(http::Method::GET, "/debug/pprof/heap", None, "*/*")
            .await?;
        Ok((status == 200).then_some(body))
    }

    /// Watches `kind` in `namespace` from the newest resourceVersion until the task is
    /// aborted, reading every event and dropping it, opening the watch again whenever the
    /// server ends it; `read` counts what it read.
    pub async fn watch_and_drop(
        &self,
        kind: ObjectKind,
        namespace: Option<&str>,
        read: std::sync::Arc<Watched>,
    ) -> anyhow::Result<()> {
        let path = kind.collection_path(namespace);
        loop {
            let rv = self.newest(&path).await?;
            let request = http::Request::get(format!("{path}?watch=true&resourceVersion={rv}"))
                .body(kube::client::Body::empty())?;
            let mut body = self.client.send(request).await?.into_body();
            read.open.fetch_add(1, Ordering::Relaxed);
            while let Some(Ok(frame)) = body.frame().await {
                if let Some(data) = frame.data_ref() {
                    read.add(data);
                }
            }
            read.open.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// The newest resourceVersion, from a LIST of `path` that asks for one object.
    async fn newest(&self, path: &str) -> anyhow::Result<u64> {
        let what = format!("LIST {path}");
        let list = self
            .call(http::Method::GET, &format!("{path}?limit=1"), None)
            .await?;
        let list = expect_status(list, &[200], &what)?;
        resource_version(&list["metadata"]).with_context(|| what.clone())
    }

    /// Makes namespace `name`, labelled as run `run`'s.
    pub async fn make_namespace(&self, name: &str, run: &str) -> anyhow::Result<()> {
        let namespace = json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "labels": {RUN_LABEL: run}},
        });
        let made = self
            .call(http::Method::POST, "/api/v1/namespaces", Some(namespace))
            .await?;
        expect_status(made, &[201], &format!("creating the namespace {name}"))?;
        Ok(())
    }

    /// Removes namespace `name` and waits until it is gone: its objects of `kind` first,
    /// at once (a pod bound to a node no kubelet runs would otherwise wait for one), then
    /// the namespace. A namespace that is not there is fine.
    pub async fn remove_namespace(&self, name: &str, kind: ObjectKind) -> anyhow::Result<()> {
        let objects = kind.collection_path(Some(name));
        let now = json!({"gracePeriodSeconds": 0});
        // Answered with what it deleted: as metadata only, not hundreds of MiB of objects.
        // A server slower than the request's deadline (tens of thousands of objects) goes
        // on deleting them; the namespace's deletion below finishes the job either way.
        match self
            .send(
                http::Method::DELETE,
                &objects,
                Some(now.clone()),
                METADATA_LIST,
            )
            .await
        {
            Ok(emptied) => {
                expect_status(emptied, &[200, 404], &format!("emptying {name}"))?;
            }
            Err(e) if e.downcast_ref::<tokio::time::error::Elapsed>().is_some() => {}
            Err(e) => return Err(e),
        }
        let path = format!("/api/v1/namespaces/{name}");
        let deleted = self.call(http::Method::DELETE, &path, Some(now)).await?;
        expect_status(deleted, &[200, 202, 404], &format!("deleting {name}"))?;
        let deadline = tokio::time::Instant::now() + NAMESPACE_DEADLINE;
        loop {
            let (status, _) = self.call(http::Method::GET, &path, None).await?;
            if status == 404 {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                bail!(
                    "the namespace {name} was deleted but is still there after {}s (does \
                     the server run the namespace controller?)",
                    NAMESPACE_DEADLINE.as_secs()
                );
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// Every object of `kind` in `namespace` (or in all namespaces), as the oracle holds a
    /// store against it, and the LIST's resourceVersion.
    pub async fn truth(
        &self,
        kind: ObjectKind,
        namespace: Option<&str>,
        scope: &Scope,
    ) -> anyhow::Result<(Vec<TruthEntry>, u64)> {
        let mut path = kind.collection_path(namespace);
        if !scope.is_default() {
            path = format!("{path}?{}", scope.query());
        }
        let what = format!("LIST {path}");
        let list = expect_status(
            self.call(http::Method::GET, &path, None).await?,
            &[200],
            &what,
        )?;
        let rv = resource_version(&list["metadata"]).with_context(|| what.clone())?;
        let items = list["items"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        let truth = items
            .iter()
            .map(|item| {
                let meta = &item["metadata"];
                Ok(TruthEntry {
                    key: store_key(
                        meta["namespace"].as_str().unwrap_or_default(),
                        meta["name"].as_str().unwrap_or_default(),
                    ),
                    resource_version: resource_version(meta)?,
                    uid: meta["uid"].as_str().unwrap_or_default().to_owned(),
                })
            })
            .collect::<anyhow::Result<_>>()
            .with_context(|| what.clone())?;
        Ok((truth, rv))
    }

    /// Creates `object` (as [`for_server`] made it) in `namespace`; for a pod, writes its
    /// status after, which a create does not take. Returns its resourceVersion.
    pub async fn create(
        &self,
        kind: ObjectKind,
        namespace: &str,
        object: Value,
    ) -> anyhow::Result<u64> {
        let path = kind.collection_path(Some(namespace));
        let status = object.get("status").cloned();
        let what = || format!("creating {} in {namespace}", object_name(&object));
        let created = self
            .call(http::Method::POST, &path, Some(object.clone()))
            .await?;
        let mut created = expect_status(created, &[201], &what())?;
        if let (ObjectKind::Pod, Some(status)) = (kind, status) {
            created["status"] = status;
            let path = format!("{path}/{}/status", object_name(&object));
            let written = self.call(http::Method::PUT, &path, Some(created)).await?;
            created = expect_status(written, &[200], &format!("{}: its status", what()))?;
        }
        resource_version(&created["metadata"]).with_context(what)
    }

    /// Replaces object `name` in `namespace` with `object`, whatever its version. Returns
    /// its new resourceVersion.
    pub async fn replace(
        &self,
        kind: ObjectKind,
        namespace: &str,
        object: Value,
    ) -> anyhow::Result<u64> {
        let name = object_name(&object).to_owned();
        let path = format!("{}/{name}", kind.collection_path(Some(namespace)));
        let replaced = self.call(http::Method::PUT, &path, Some(object)).await?;
        let what = format!("replacing {name} in {namespace}");
        let replaced = expect_status(replaced, &[200], &what)?;
        resource_version(&replaced["metadata"]).with_context(|| what.clone())
    }

    /// Deletes object `name` in `namespace` at once (no grace period). Its answer carries
    /// no resourceVersion for every kind (a ConfigMap's is a Status): [`Cluster::follow`]
    /// sees the deletion's.
    pub async fn delete(
        &self,
        kind: ObjectKind,
        namespace: &str,
        name: &str,
    ) -> anyhow::Result<()> {
        self.delete_with(kind, namespace, name, json!({"gracePeriodSeconds": 0}))
            .await?;
        Ok(())
    }

    /// Deletes object `name` in `namespace` with DeleteOptions `options`; returns the
    /// server's answer (a pod being deleted gracefully, with its deletion fields).
    pub async fn delete_with(
        &self,
        kind: ObjectKind,
        namespace: &str,
        name: &str,
        options: Value,
    ) -> anyhow::Result<Value> {
        let path = format!("{}/{name}", kind.collection_path(Some(namespace)));
        let deleted = self
            .call(http::Method::DELETE, &path, Some(options))
            .await?;
        expect_status(deleted, &[200], &format!("deleting {name} in {namespace}"))
    }

    /// Writes `object`'s status in `namespace` through the status subresource, as field
    /// manager `manager`; returns the resourceVersion it got.
    pub async fn replace_status(
        &self,
        kind: ObjectKind,
        namespace: &str,
        object: Value,
        manager: &str,
    ) -> anyhow::Result<u64> {
        let name = object_name(&object).to_owned();
        let collection = kind.collection_path(Some(namespace));
        let path = format!("{collection}/{name}/status?fieldManager={manager}");
        let written = self.call(http::Method::PUT, &path, Some(object)).await?;
        let what = format!("writing {name}'s status in {namespace}");
        let written = expect_status(written, &[200], &what)?;
        resource_version(&written["metadata"]).with_context(|| what.clone())
    }

    /// Watches `kind` in `namespace` from resourceVersion `from` until the task is
    /// aborted, as the run's witness of what the server sends there: `seen` keeps the
    /// newest event's resourceVersion and counts deletions. A watch the server ends is
    /// opened again from the newest; an ERROR event (410 Expired: the witness fell behind
    /// the server's window) ends it, marked failed.
    pub async fn follow(
        &self,
        kind: ObjectKind,
        namespace: &str,
        from: u64,
        seen: std::sync::Arc<Followed>,
    ) -> anyhow::Result<()> {
        let path = kind.collection_path(Some(namespace));
        seen.newest.fetch_max(from, Ordering::Relaxed);
        loop {
            let rv = seen.newest();
            let request = http::Request::get(format!("{path}?watch=true&resourceVersion={rv}"))
                .body(kube::client::Body::empty())?;
            let response = self.client.send(request).await?;
            if !response.status().is_success() {
                seen.failed.store(true, Ordering::Relaxed);
                bail!(
                    "WATCH {path} from {rv}: the server answered {}",
                    response.status()
                );
            }
            let gzipped = response
                .headers()
                .get(http::header::CONTENT_ENCODING)
                .is_some_and(|v| v == "gzip");
            let mut body = response.into_body();
            let mut events = position::Events::new(position::Encoding::Json, gzipped);
            let mut failed = false;
            while let Some(Ok(frame)) = body.frame().await {
                let Some(data) = frame.data_ref() else {
                    continue;
                };
                events.read(data, |head| {
                    let Some(head) = head else {
                        return;
                    };
                    failed |= head.kind == position::EventType::Error;
                    if let Some(rv) = head.resource_version {
                        seen.newest.fetch_max(rv, Ordering::Relaxed);
                    }
                    if head.kind == position::EventType::Deleted {
                        seen.deleted.fetch_add(1, Ordering::Relaxed);
                    }
                });
                if failed {
                    seen.failed.store(true, Ordering::Relaxed);
                    bail!("WATCH {path} from {rv}: the server sent an error");
                }
            }
        }
    }

    /// Sends one request of the run's own; its status and body.
    async fn call(
        &self,
        method: http::Method,
        path: &str,
        body: Option<Value>,
    ) -> anyhow::Result<(u16, Bytes)> {
        self.send(method, path, body, "application/json").await
    }

    /// [`Cluster::call`], accepting `accept`.
    async fn send(
        &self,
        method: http::Method,
        path: &str,
        body: Option<Value>,
        accept: &str,
    ) -> anyhow::Result<(u16, Bytes)> {
        let mut request = http::Request::builder()
            .method(method.clone())
            .uri(path)
            .header(http::header::ACCEPT, accept);
        if body.is_some() {
            request = request.header(http::header::CONTENT_TYPE, "application/json");
        }
        let body = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
        let request = request.body(kube::client::Body::from(body))?;
        let what = || format!("{method} {path} on {}", self.url);
        let exchange = async {
            let response = self.client.send(request).await?;
            let status = response.status().as_u16();
            let bytes = response.into_body().collect().await?.to_bytes();
            Ok::<_, anyhow::Error>((status, bytes))
        };
        tokio::time::timeout(REQUEST_DEADLINE, exchange)
            .await
            .with_context(|| {
                format!(
                    "{}: no answer within {}s",
                    what(),
                    REQUEST_DEADLINE.as_secs()
                )
            })?
            .with_context(what)
    }
}

/// The body of an answer whose status is one of `expected`, as JSON (`null` when it is
/// not JSON); else an error saying what the server said.
fn expect_status(
    (status, body): (u16, Bytes),
    expected: &[u16],
    what: &str,
) -> anyhow::Result<Value> {
    let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if expected.contains(&status) {
        return Ok(json);
    }
    let message = json["message"].as_str().map_or_else(
        || String::from_utf8_lossy(&body).into_owned(),
        str::to_owned,
    );
    bail!("{what}: the server answered {status}: {message}")
}

fn resource_version(meta: &Value) -> anyhow::Result<u64> {
    let rv = meta["resourceVersion"].as_str().unwrap_or_default();
    rv.parse()
        .with_context(|| format!("resourceVersion {rv:?} is not a number"))
}

fn object_name(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}
