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
//! The user's credentials are lent only to the program: a request must carry the run's
//! secret ([`apiserver::Secret`], in the program's kubeconfig alone) to reach the real
//! server, and then leaves without it, without any `Impersonate-*` header (the program
//! acts as the user, never as someone the user may impersonate), and, under
//! `--read-only`, only as a read: a write is refused here with a Status.
//!
//! A program's LIST or WATCH of the scenario's kind in every namespace is narrowed to the
//! variant's namespace, as the built-in server holds only the scenario's objects: on a
//! cluster with objects of the kind elsewhere (kube-system's pods), the program caches
//! what the run made and the model beside it caches, not the cluster's own.

use anyhow::Context;
use bytes::Bytes;
use http_body_util::BodyExt;
use tower::ServiceExt;

use super::super::cluster::Side;
use super::super::message::ClusterJob;
use super::super::phase::{change_server, phase_seed};
use crate::cluster::Forwarder;
use apiserver::{self, ApiServer, Endpoint, Gate};
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
    /// Returns the endpoint the program is given, its gate holding the program's requests
    /// until the list phase.
    pub async fn serve(
        scenario: &Scenario,
        cluster: Option<&ClusterJob>,
    ) -> anyhow::Result<(Upstream, Endpoint)> {
        let Some(job) = cluster else {
            let server =
                ApiServer::serving(scenario.objects.clone(), scenario.apiserver.history_events);
            let endpoint = apiserver::serve_loopback(&server)
                .await
                .context("failed to serve on loopback")?;
            return Ok((Upstream::BuiltIn(server), endpoint));
        };
        let side = Side::open(scenario, job, Component::ApiServer, true).await?;
        let forwarder = side.cluster.forwarder(&side.faults)?;
        let narrowing = side
            .namespace
            .clone()
            .filter(|_| scenario.objects.kind.namespaced())
            .map(|namespace| Narrowing::new(scenario.objects.kind, &namespace));
        // A run that writes makes the variant a namespace; one that only reads has none.
        let read_only = side.namespace.is_none();
        let endpoint = apiserver::serve_gated(
            move |mut request| {
                let forwarder = forwarder.clone();
                if let Some(narrowing) = &narrowing {
                    narrowing.apply(request.uri_mut());
                }
                async move {
                    if read_only && !is_read(request.method()) {
                        return refuse_write(&request);
                    }
                    forward(forwarder, request).await
                }
            },
            scenario.objects.kind,
        )
        .await
        .context("failed to serve the proxy on loopback")?;
        Ok((Upstream::Real(Box::new(side)), endpoint))
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

/// Whether a request only reads: what a `--read-only` run lets through.
fn is_read(method: &http::Method) -> bool {
    matches!(
        *method,
        http::Method::GET | http::Method::HEAD | http::Method::OPTIONS
    )
}

/// The headers a request loses on its way through: framing, which is the proxy's own on
/// each side; the host, which is the forwarder's; the program's credentials (the run's
/// secret), replaced by the user's; and any `Impersonate-*`, so that the program acts as
/// the user and never as whoever the user may impersonate.
fn strip(headers: &mut http::HeaderMap) {
    for hop in [
        "connection",
        "keep-alive",
        "transfer-encoding",
        "content-length",
        "host",
        "authorization",
        "proxy-authorization",
    ] {
        headers.remove(hop);
    }
    let impersonating: Vec<http::HeaderName> = headers
        .keys()
        .filter(|name| name.as_str().starts_with("impersonate-"))
        .cloned()
        .collect();
    for name in impersonating {
        headers.remove(name);
    }
}

/// Carries one of the program's requests to the real server: its body at most
/// kube-apiserver's own limit (a larger one is answered 413 without reaching the server);
/// a request that cannot be carried is answered 502 with a Status saying why.
async fn forward(
    forwarder: Forwarder,
    request: hyper::Request<hyper::body::Incoming>,
) -> http::Response<crate::cluster::Body> {
    let (mut parts, body) = request.into_parts();
    strip(&mut parts.headers);
    let body = match http_body_util::Limited::new(body, apiserver::MAX_REQUEST_BODY_BYTES)
        .collect()
        .await
    {
        Ok(body) => body.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            return answer(
                http::StatusCode::PAYLOAD_TOO_LARGE,
                "RequestEntityTooLarge",
                &format!(
                    "Request entity too large: limit is {}",
                    apiserver::MAX_REQUEST_BODY_BYTES
                ),
            );
        }
        Err(e) => {
            let why = format!("the request body could not be read: {e}");
            return answer(http::StatusCode::BAD_REQUEST, "BadRequest", &why);
        }
    };
    let request = http::Request::from_parts(parts, kube::client::Body::from(body));
    match forwarder.oneshot(request).await {
        Ok(mut response) => {
            for hop in ["connection", "keep-alive"] {
                response.headers_mut().remove(hop);
            }
            response
        }
        Err(e) => answer(
            http::StatusCode::BAD_GATEWAY,
            "ServiceUnavailable",
            &format!("informer-mem's proxy could not reach the server: {e}"),
        ),
    }
}

/// A write under `--read-only`, answered 403 without reaching the server.
fn refuse_write<B>(request: &http::Request<B>) -> http::Response<crate::cluster::Body> {
    let why = format!(
        "informer-mem run --read-only: the proxy refuses {} {}: a read-only run writes \
         nothing to the cluster",
        request.method(),
        request.uri().path()
    );
    answer(http::StatusCode::FORBIDDEN, "Forbidden", &why)
}

/// A `Status` the proxy answers itself.
fn answer(
    code: http::StatusCode,
    reason: &str,
    message: &str,
) -> http::Response<crate::cluster::Body> {
    let status = serde_json::json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code.as_u16(),
    });
    let body = http_body_util::Full::new(Bytes::from(status.to_string()))
        .map_err(|e| match e {})
        .boxed_unsync();
    http::Response::builder()
        .status(code)
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
    fn the_programs_credentials_and_impersonation_never_reach_the_server() {
        let mut headers = http::HeaderMap::new();
        for (name, value) in [
            ("authorization", "Bearer the-runs-secret"),
            ("impersonate-user", "system:admin"),
            ("impersonate-group", "system:masters"),
            ("impersonate-extra-scopes", "x"),
            ("accept", "application/json"),
            ("user-agent", "program"),
        ] {
            headers.append(name, value.parse().unwrap());
        }
        strip(&mut headers);
        let mut left: Vec<&str> = headers.keys().map(http::HeaderName::as_str).collect();
        left.sort_unstable();
        assert_eq!(left, ["accept", "user-agent"]);
    }

    #[test]
    fn a_read_only_run_lets_only_reads_through() {
        assert!(is_read(&http::Method::GET));
        for method in ["POST", "PUT", "PATCH", "DELETE"] {
            assert!(!is_read(&method.parse().unwrap()), "{method}");
        }
        let request = http::Request::post("/api/v1/namespaces/x/secrets")
            .body(())
            .unwrap();
        assert_eq!(refuse_write(&request).status(), http::StatusCode::FORBIDDEN);
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
