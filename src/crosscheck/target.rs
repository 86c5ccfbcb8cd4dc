//! The two servers of the differential check: the built-in apiserver on loopback, and a
//! real one named by a kubeconfig, each holding the same objects of a round's kind
//! (ConfigMaps, Deployments, then Pods) in a namespace of its own.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::{Value, json};

use super::plan::{Resolved, Variables};
use super::shape::{Body, Observed};
use apiserver::{self, ApiServer};
use scenario::{ObjectKind, ObjectSpec};

/// Objects each server holds before a round's first request.
pub const OBJECTS: u64 = 12;

/// How long a watch is read when the server does not end it (every watch asks for
/// `timeoutSeconds=1`).
const WATCH_DEADLINE: Duration = Duration::from_secs(10);

/// How long any other request may take.
const REQUEST_DEADLINE: Duration = Duration::from_secs(30);

/// How long a namespace may take to go once deleted (the namespace controller deletes
/// what is in it first).
const NAMESPACE_DEADLINE: Duration = Duration::from_secs(120);

/// A namespace that exists on neither server.
const MISSING_NAMESPACE: &str = "informer-mem-crosscheck-missing";

/// One server under check.
pub struct Target {
    /// The server's URL.
    pub name: String,
    client: kube::Client,
    /// Placeholders' values on this server.
    pub vars: Variables,
    compaction: Compaction,
    /// The namespace the check made and deletes at the end.
    made: Option<String>,
    /// The kind of the round's objects.
    kind: ObjectKind,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("name", &self.name)
            .field("vars", &self.vars)
            .field("made", &self.made)
            .finish_non_exhaustive()
    }
}

#[derive(Debug)]
enum Compaction {
    BuiltIn(ApiServer),
    Etcd(String),
    Unavailable,
}

/// One answer: its shape, and its body when it was one JSON document.
#[derive(Debug)]
pub struct Answer {
    pub observed: Observed,
    pub json: Option<Value>,
}

impl Target {
    /// The built-in apiserver, holding objects of `kind`, served on loopback as `serve`
    /// serves it, but standing alone as the real server does here (no kubelet or garbage
    /// collector finishes a deletion).
    pub async fn builtin(kind: ObjectKind) -> anyhow::Result<Target> {
        let spec = ObjectSpec {
            kind,
            namespaces: 1,
            ..ObjectSpec::pods(OBJECTS)
        };
        let namespace = apiserver::namespace_of(&spec);
        let server = ApiServer::serving(spec, None);
        server.stand_alone();
        let endpoint = apiserver::serve_loopback(&server)
            .await
            .context("serving the built-in apiserver on loopback")?;
        endpoint.gate.open();
        // The secret as a bearer token: kube-rs is given the bare address.
        let url = format!("http://{}", endpoint.addr);
        let mut config = kube::Config::new(url.parse()?);
        let bearer = format!("Bearer {}", endpoint.secret.token());
        config
            .headers
            .push((http::header::AUTHORIZATION, bearer.parse()?));
        let mut target = Target {
            name: url,
            client: kube::Client::try_from(config)?,
            vars: Variables::new(),
            compaction: Compaction::BuiltIn(server),
            made: None,
            kind,
        };
        target.learn(&namespace).await?;
        Ok(target)
    }

    /// The server `kubeconfig` names (its current context); nothing is written yet.
    /// `etcd` is its etcd's client URL, for compaction.
    pub async fn connect(kubeconfig: &Path, etcd: Option<String>) -> anyhow::Result<Target> {
        let file = Kubeconfig::read_from(kubeconfig)
            .with_context(|| format!("reading the kubeconfig {}", kubeconfig.display()))?;
        let config = kube::Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
            .await
            .with_context(|| format!("the kubeconfig {}", kubeconfig.display()))?;
        let name = config.cluster_url.to_string();
        Ok(Target {
            name,
            client: kube::Client::try_from(config)?,
            vars: Variables::new(),
            compaction: match etcd {
                Some(url) => Compaction::Etcd(url.trim_end_matches('/').to_owned()),
                None => Compaction::Unavailable,
            },
            made: None,
            kind: ObjectKind::ConfigMap,
        })
    }

    /// Makes a namespace of the check's own for a round with objects of `kind`;
    /// [`Target::clean_up`] deletes it.
    pub async fn make_namespace(&mut self, kind: ObjectKind) -> anyhow::Result<&str> {
        self.kind = kind;
        let namespace = unique_namespace();
        let created = self
            .post(
                "/api/v1/namespaces",
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}),
            )
            .await
            .with_context(|| format!("creating the namespace {namespace} on {}", self.name))?;
        if created != 201 {
            bail!(
                "creating the namespace {namespace} on {}: status {created}",
                self.name
            );
        }
        self.made = Some(namespace.clone());
        if kind == ObjectKind::Pod {
            // No controller makes it on a bare kube-apiserver, and ServiceAccount
            // admission refuses pods without it.
            let account = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}});
            let path = format!("/api/v1/namespaces/{namespace}/serviceaccounts");
            let created = self.post(&path, account).await?;
            if created != 201 {
                bail!(
                    "creating {namespace}'s default service account on {}: status {created}",
                    self.name
                );
            }
        }
        Ok(self.made.as_deref().unwrap_or_default())
    }

    /// Copies `objects` into the namespace [`Target::make_namespace`] made: each created,
    /// then given its `status` through the status subresource (a create drops it), so
    /// that both servers hold objects of the same shape.
    pub async fn fill(&mut self, objects: &[Value]) -> anyhow::Result<()> {
        let namespace = self.made.clone().context("no namespace was made")?;
        let path = self.kind.collection_path(Some(&namespace));
        for object in objects {
            let created = self
                .send(
                    &json_request(http::Method::POST, &path, copy_into(object, &namespace)),
                    false,
                )
                .await?;
            if created.observed.status != 201 {
                bail!(
                    "copying the objects to {}: status {}",
                    self.name,
                    created.observed.status
                );
            }
            let status = object
                .get("status")
                .filter(|s| s.as_object().is_some_and(|s| !s.is_empty()));
            if let (Some(status), Some(mut created)) = (status, created.json) {
                let name = created["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                created["status"] = status.clone();
                let uri = format!("{path}/{name}/status");
                let written = self
                    .send(&json_request(http::Method::PUT, &uri, created), false)
                    .await?;
                if written.observed.status != 200 {
                    bail!(
                        "writing {name}'s status on {}: status {}",
                        self.name,
                        written.observed.status
                    );
                }
            }
        }
        self.learn(&namespace).await
    }

    /// The kind of the round's objects.
    pub fn kind(&self) -> ObjectKind {
        self.kind
    }

    /// Whether this server's history can be compacted.
    pub fn can_compact(&self) -> bool {
        !matches!(self.compaction, Compaction::Unavailable)
    }

    /// The objects in the check's namespace, as served.
    pub async fn objects(&self) -> anyhow::Result<Vec<Value>> {
        let list = self.get_json(&self.collection()).await?;
        Ok(list["items"].as_array().cloned().unwrap_or_default())
    }

    fn collection(&self) -> String {
        self.kind.collection_path(Some(&self.vars["ns"]))
    }

    /// Sets the placeholders from the objects in `namespace`.
    async fn learn(&mut self, namespace: &str) -> anyhow::Result<()> {
        self.vars.insert("ns".to_owned(), namespace.to_owned());
        self.vars
            .insert("other_ns".to_owned(), MISSING_NAMESPACE.to_owned());
        let objects = self.objects().await?;
        let mut names: Vec<(&str, &Value)> = objects
            .iter()
            .filter_map(|o| Some((o.pointer("/metadata/name")?.as_str()?, o)))
            .collect();
        names.sort_by_key(|(name, _)| *name);
        if names.len() < 3 {
            bail!("{} holds {} objects, not {OBJECTS}", self.name, names.len());
        }
        for (i, (name, _)) in names.iter().take(3).enumerate() {
            self.vars.insert(format!("name{i}"), (*name).to_owned());
        }
        let app = names[0]
            .1
            .pointer("/metadata/labels/app")
            .and_then(Value::as_str)
            .context("the first object has no app label")?;
        self.vars.insert("app0".to_owned(), app.to_owned());
        Ok(())
    }

    /// Sends one request and reads its answer (a watch until the server ends it or the
    /// deadline).
    pub async fn send(&self, request: &Resolved, watch: bool) -> anyhow::Result<Answer> {
        let mut builder = http::Request::builder()
            .method(request.method.clone())
            .uri(&request.uri);
        if let Some(accept) = &request.accept {
            builder = builder.header(http::header::ACCEPT, accept);
        }
        let body = request.body.clone().unwrap_or_default();
        if request.body.is_some() {
            let content_type = request
                .content_type
                .as_deref()
                .unwrap_or("application/json");
            builder = builder.header(http::header::CONTENT_TYPE, content_type);
        }
        let http_request = builder.body(kube::client::Body::from(body.into_bytes()))?;
        let deadline = tokio::time::Instant::now()
            + if watch {
                WATCH_DEADLINE
            } else {
                REQUEST_DEADLINE
            };
        let response = tokio::time::timeout_at(deadline, self.client.send(http_request))
            .await
            .context("no answer before the deadline")??;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let mut body = response.into_body();
        let mut bytes = Vec::new();
        let mut cut = false;
        loop {
            match tokio::time::timeout_at(deadline, body.frame()).await {
                Err(_) => {
                    cut = true;
                    break;
                }
                Ok(None) => break,
                Ok(Some(frame)) => {
                    if let Ok(data) = frame?.into_data() {
                        bytes.extend_from_slice(&data);
                    }
                }
            }
        }
        if !watch && cut {
            bail!("the body did not end before the deadline");
        }
        let streamed = watch && status == 200 && !content_type.contains("Status");
        let body = if streamed {
            Body::of_events(&bytes, cut)
        } else {
            Body::of(&content_type, &bytes)
        };
        Ok(Answer {
            observed: Observed { status, body },
            json: if streamed {
                None
            } else {
                serde_json::from_slice(&bytes).ok()
            },
        })
    }

    async fn post(&self, path: &str, body: Value) -> anyhow::Result<u16> {
        let request = json_request(http::Method::POST, path, body);
        Ok(self.send(&request, false).await?.observed.status)
    }

    async fn get_json(&self, path: &str) -> anyhow::Result<Value> {
        let request = Resolved::bare(http::Method::GET, path);
        let answer = self.send(&request, false).await?;
        if answer.observed.status != 200 {
            bail!(
                "GET {path} on {}: status {}",
                self.name,
                answer.observed.status
            );
        }
        answer.json.context("the body is not JSON")
    }

    /// Compacts the history up to the newest resourceVersion.
    pub async fn compact(&self) -> anyhow::Result<()> {
        match &self.compaction {
            Compaction::BuiltIn(server) => {
                server.compact();
                Ok(())
            }
            Compaction::Etcd(url) => compact_etcd(url).await,
            Compaction::Unavailable => bail!("{} cannot be compacted", self.name),
        }
    }

    /// Deletes the namespace the check made and waits until it is gone.
    pub async fn clean_up(&self) -> anyhow::Result<()> {
        let Some(namespace) = &self.made else {
            return Ok(());
        };
        if self.kind == ObjectKind::Pod {
            // No kubelet ends a pod's graceful deletion here, so the namespace controller
            // would wait for them forever: they go first, with no grace period.
            let pods = Resolved::bare(
                http::Method::DELETE,
                format!("/api/v1/namespaces/{namespace}/pods?gracePeriodSeconds=0"),
            );
            let deleted = self.send(&pods, false).await?.observed.status;
            if deleted != 200 {
                bail!("deleting the pods of {namespace}: status {deleted}");
            }
        }
        // The namespaces' requests make `{namespace}-made` and delete it: a check stopped
        // between the two would leave it. Its namespace controller takes it from there.
        for namespace in [format!("{namespace}-made"), namespace.clone()] {
            let delete = Resolved::bare(
                http::Method::DELETE,
                format!("/api/v1/namespaces/{namespace}"),
            );
            let deleted = self.send(&delete, false).await?.observed.status;
            if !matches!(deleted, 200 | 202 | 404) {
                bail!("deleting the namespace {namespace}: status {deleted}");
            }
        }
        let get = Resolved::bare(http::Method::GET, format!("/api/v1/namespaces/{namespace}"));
        let deadline = tokio::time::Instant::now() + NAMESPACE_DEADLINE;
        while tokio::time::Instant::now() < deadline {
            if self.send(&get, false).await?.observed.status == 404 {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        bail!(
            "the namespace {namespace} was deleted but is still there after {}s \
             (does the cluster run the namespace controller?)",
            NAMESPACE_DEADLINE.as_secs()
        )
    }
}

/// A request of `method` to `uri` with `body` as JSON.
fn json_request(method: http::Method, uri: &str, body: Value) -> Resolved {
    Resolved {
        body: Some(body.to_string()),
        ..Resolved::bare(method, uri)
    }
}

/// `informer-mem-crosscheck-` and a suffix that differs between runs.
fn unique_namespace() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    format!(
        "informer-mem-crosscheck-{:x}{:x}",
        std::process::id(),
        nanos >> 8
    )
}

/// What a client would send to create `object` in `namespace`: its metadata without the
/// fields a server sets.
fn copy_into(object: &Value, namespace: &str) -> Value {
    let mut copy = object.clone();
    if let Some(metadata) = copy.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in [
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "generation",
            "managedFields",
        ] {
            metadata.remove(field);
        }
        metadata.insert("namespace".to_owned(), Value::from(namespace));
    }
    copy
}

/// Compacts etcd to its newest revision through its JSON gateway (`/v3/kv/...`).
async fn compact_etcd(url: &str) -> anyhow::Result<()> {
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<Bytes>>();
    let post = |path: &str, body: Value| {
        let request = http::Request::post(format!("{url}{path}"))
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body.to_string())));
        let client = client.clone();
        async move {
            let response = client.request(request?).await?;
            let status = response.status();
            let bytes = response.into_body().collect().await?.to_bytes();
            if !status.is_success() {
                bail!(
                    "etcd answered {status}: {}",
                    String::from_utf8_lossy(&bytes)
                );
            }
            Ok::<Value, anyhow::Error>(serde_json::from_slice(&bytes)?)
        }
    };
    // The newest revision comes with any read ("/" as a key: base64 "Lw==").
    let range = post("/v3/kv/range", json!({"key": "Lw=="}))
        .await
        .with_context(|| format!("reading etcd's revision at {url}"))?;
    let revision = range
        .pointer("/header/revision")
        .and_then(|r| {
            r.as_str()
                .map(str::to_owned)
                .or(r.as_u64().map(|n| n.to_string()))
        })
        .context("etcd's answer has no header.revision")?;
    post(
        "/v3/kv/compaction",
        json!({"revision": revision, "physical": true}),
    )
    .await
    .with_context(|| format!("compacting etcd at {url} to revision {revision}"))?;
    Ok(())
}
