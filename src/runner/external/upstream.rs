//! What serves an external variant's program: the built-in apiserver on loopback, or a
//! real server (`run --kubeconfig`) behind a proxy the run puts on loopback.
//!
//! The proxy speaks plain HTTP to the program and carries every request on to the real
//! server with the kubeconfig's TLS and credentials, through the same [`Faults`] a
//! built-in informer's requests go through on a real server: its watches are counted,
//! cut, held and answered 410 there, and each watch's position (the newest
//! resourceVersion sent through it) is read as it passes. The program is given a
//! kubeconfig naming the proxy, so it needs no credentials of its own.
//!
//! A program's LIST or WATCH of the scenario's kind in every namespace is narrowed to the
//! variant's namespace, as the built-in server holds only the scenario's objects: on a
//! cluster with objects of the kind elsewhere (kube-system's pods), the program caches
//! what the run made and the model beside it caches, not the cluster's own.

use std::net::SocketAddr;

use anyhow::Context;
use bytes::Bytes;
use http_body_util::BodyExt;
use tower::ServiceExt;

use super::super::cluster::Side;
use super::super::message::ClusterJob;
use super::super::phase::{change_server, phase_seed};
use crate::cluster::Forwarder;
use apiserver::{self, ApiServer, Gate};
use k8s::TruthEntry;
use measure::Component;
use report::RequestCounts;
use scenario::{ObjectKind, Phase, PhaseAction, Scenario, Scope};

/// How long a watch stream the proxy cannot read (not JSON) must carry nothing before it
/// counts as sent everything.
const UNREADABLE_IDLE: std::time::Duration = std::time::Duration::from_millis(500);

/// The server behind the program.
pub(super) enum Upstream {
    /// The built-in apiserver, serving on loopback.
    BuiltIn(ApiServer),
    /// A real server, through the proxy.
    Real(Box<Side>),
}

/// What the program's stores should hold at the end of a phase.
pub(super) struct Truth {
    /// The server's objects.
    pub objects: Vec<TruthEntry>,
    /// The resourceVersion every watch must have been sent up to; `None` when it cannot
    /// be known (a real server the run only reads, which others write to): then every
    /// watch must be open.
    pub target: Option<u64>,
}

impl Upstream {
    /// Serves `scenario`'s objects for a program: the built-in server, or when `cluster`
    /// names a real one, the variant's namespace filled there and the proxy in front.
    /// Returns the address the program is given and the gate that holds its requests
    /// until the list phase.
    pub async fn serve(
        scenario: &Scenario,
        cluster: Option<&ClusterJob>,
    ) -> anyhow::Result<(Upstream, SocketAddr, Gate)> {
        let Some(job) = cluster else {
            let server =
                ApiServer::serving(scenario.objects.clone(), scenario.apiserver.history_events);
            let (addr, gate) = apiserver::serve_loopback(&server)
                .await
                .context("failed to serve on loopback")?;
            return Ok((Upstream::BuiltIn(server), addr, gate));
        };
        let side = Side::open(scenario, job, Component::ApiServer, true).await?;
        let forwarder = side.cluster.forwarder(&side.faults)?;
        let narrowing = side
            .namespace
            .clone()
            .filter(|_| scenario.objects.kind.namespaced())
            .map(|namespace| Narrowing::new(scenario.objects.kind, &namespace));
        let (addr, gate) = apiserver::serve_gated(
            move |mut request| {
                let forwarder = forwarder.clone();
                if let Some(narrowing) = &narrowing {
                    narrowing.apply(request.uri_mut());
                }
                async move { forward(forwarder, request).await }
            },
            scenario.objects.kind,
        )
        .await
        .context("failed to serve the proxy on loopback")?;
        Ok((Upstream::Real(Box::new(side)), addr, gate))
    }

    /// The namespace the program is pointed at: the variant's own on a real server, every
    /// namespace (empty) when the run only reads one.
    pub fn namespace(&self, scenario: &Scenario) -> String {
        match self {
            Upstream::BuiltIn(_) => apiserver::namespace_of(&scenario.objects),
            Upstream::Real(side) => side.namespace.clone().unwrap_or_default(),
        }
    }

    /// Phase `index`'s changes on the server; the gate opens at the list.
    pub async fn change(
        &mut self,
        scenario: &Scenario,
        index: usize,
        phase: &Phase,
        gate: &Gate,
    ) -> anyhow::Result<()> {
        let open = |action| {
            if action == PhaseAction::List {
                gate.open();
            }
        };
        match self {
            Upstream::BuiltIn(server) => {
                change_server(server, phase, phase_seed(scenario, index), open);
                Ok(())
            }
            Upstream::Real(side) => side.change(scenario, index, phase, open).await,
        }
    }

    /// `scope` as it selects the variant's objects on this server: on a real one the
    /// run's pods carry a node prefix (a read-only run's are the cluster's own).
    pub fn scope_of(&self, scope: &Scope) -> Scope {
        match self {
            Upstream::BuiltIn(_) => scope.clone(),
            Upstream::Real(side) => side.scope_of(scope),
        }
    }

    /// What a program asking for `scope` ([`Upstream::scope_of`]) should hold now.
    pub async fn truth(&self, scope: &Scope) -> anyhow::Result<Truth> {
        match self {
            Upstream::BuiltIn(server) => Ok(Truth {
                target: Some(server.resource_version()),
                objects: server.truth_of(scope),
            }),
            Upstream::Real(side) => {
                // The newest event first: the LIST after it holds every change it says.
                let target = side.last_event().await?;
                let (objects, _) = side.truth_of(scope).await?;
                Ok(Truth { objects, target })
            }
        }
    }

    /// How many of the program's watches have been sent everything up to `target`; with
    /// no target (a real server the run only reads), how many it has open since the last
    /// cut: a program that was cut is back once it watches again.
    pub fn watches_at(&self, target: Option<u64>) -> usize {
        match (self, target) {
            (Upstream::BuiltIn(server), Some(target)) => server.watches_at(target),
            (Upstream::BuiltIn(_), None) => usize::MAX,
            (Upstream::Real(side), Some(target)) => side.faults.watches_at(target, UNREADABLE_IDLE),
            (Upstream::Real(side), None) => side.faults.open_watches(),
        }
    }

    /// The program's requests so far.
    pub fn requests(&self) -> RequestCounts {
        match self {
            Upstream::BuiltIn(server) => server.requests(),
            Upstream::Real(side) => side.faults.requests(),
        }
    }

    /// The real server's side, if it is one.
    pub fn real(&self) -> Option<&Side> {
        match self {
            Upstream::BuiltIn(_) => None,
            Upstream::Real(side) => Some(side),
        }
    }

    /// Removes what the variant made on a real server.
    pub async fn close(&mut self) -> anyhow::Result<()> {
        match self {
            Upstream::BuiltIn(_) => Ok(()),
            Upstream::Real(side) => side.close().await,
        }
    }
}

/// The paths of the scenario's kind in every namespace, and the variant's namespace's in
/// their place.
#[derive(Debug, Clone)]
struct Narrowing {
    /// `{root}/{plural}` and `{root}/watch/{plural}` (the old watch path).
    every: [String; 2],
    /// `{root}/namespaces/{namespace}/{plural}`, `{root}/watch/namespaces/...`.
    one: [String; 2],
}

impl Narrowing {
    fn new(kind: ObjectKind, namespace: &str) -> Narrowing {
        let (root, plural) = (kind.api_root(), kind.plural());
        Narrowing {
            every: [format!("{root}/{plural}"), format!("{root}/watch/{plural}")],
            one: [
                format!("{root}/namespaces/{namespace}/{plural}"),
                format!("{root}/watch/namespaces/{namespace}/{plural}"),
            ],
        }
    }

    /// `uri` asking for the variant's namespace where it asks for every one; any other
    /// request as it is.
    fn apply(&self, uri: &mut http::Uri) {
        let path = uri.path().trim_end_matches('/');
        let Some(at) = self.every.iter().position(|every| every == path) else {
            return;
        };
        let narrowed = match uri.query() {
            Some(query) => format!("{}?{query}", self.one[at]),
            None => self.one[at].clone(),
        };
        if let Ok(narrowed) = narrowed.parse() {
            *uri = narrowed;
        }
    }
}

/// Carries one of the program's requests to the real server; a request that cannot be
/// carried is answered 502 with a Status saying why.
async fn forward(
    forwarder: Forwarder,
    request: hyper::Request<hyper::body::Incoming>,
) -> http::Response<crate::cluster::Body> {
    let (mut parts, body) = request.into_parts();
    // Framing is the proxy's own on each side; the real server's host is the forwarder's.
    for hop in [
        "connection",
        "keep-alive",
        "transfer-encoding",
        "content-length",
        "host",
    ] {
        parts.headers.remove(hop);
    }
    let sent = async {
        let body = body.collect().await?.to_bytes();
        let request = http::Request::from_parts(parts, kube::client::Body::from(body));
        forwarder.oneshot(request).await
    };
    match sent.await {
        Ok(mut response) => {
            for hop in ["connection", "keep-alive"] {
                response.headers_mut().remove(hop);
            }
            response
        }
        Err(e) => bad_gateway(&e.to_string()),
    }
}

fn bad_gateway(why: &str) -> http::Response<crate::cluster::Body> {
    let status = serde_json::json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": format!("informer-mem's proxy could not reach the server: {why}"),
        "reason": "ServiceUnavailable",
        "code": 502,
    });
    let body = http_body_util::Full::new(Bytes::from(status.to_string()))
        .map_err(|e| match e {})
        .boxed_unsync();
    http::Response::builder()
        .status(http::StatusCode::BAD_GATEWAY)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(body)
        .expect("a fixed response is valid")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn narrowed(kind: ObjectKind, uri: &str) -> String {
        let mut uri: http::Uri = uri.parse().unwrap();
        Narrowing::new(kind, "im-1").apply(&mut uri);
        uri.to_string()
    }

    #[test]
    fn a_list_or_watch_in_every_namespace_asks_the_variants_namespace() {
        assert_eq!(
            narrowed(ObjectKind::Pod, "/api/v1/pods?limit=500"),
            "/api/v1/namespaces/im-1/pods?limit=500"
        );
        assert_eq!(
            narrowed(ObjectKind::Pod, "/api/v1/pods"),
            "/api/v1/namespaces/im-1/pods"
        );
        assert_eq!(
            narrowed(
                ObjectKind::Deployment,
                "/apis/apps/v1/deployments?watch=true&resourceVersion=7"
            ),
            "/apis/apps/v1/namespaces/im-1/deployments?watch=true&resourceVersion=7"
        );
        assert_eq!(
            narrowed(ObjectKind::Pod, "/api/v1/watch/pods?resourceVersion=7"),
            "/api/v1/watch/namespaces/im-1/pods?resourceVersion=7"
        );
    }

    #[test]
    fn other_requests_pass_as_they_are() {
        for uri in [
            "/api/v1/namespaces/kube-system/pods",
            "/api/v1/configmaps",
            "/api/v1/pods/x",
            "/api/v1/podsx",
            "/api/v1",
            "/apis/apps/v1/deployments",
        ] {
            assert_eq!(narrowed(ObjectKind::Pod, uri), uri);
        }
    }
}
