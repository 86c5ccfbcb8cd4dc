//! `informer-mem serve`: the built-in apiserver on a TCP socket, for kubectl, for real
//! controllers, or for any informer in any language.
//!
//! Serving uses real time (watch timeouts and bookmarks fire by the clock) and a real
//! socket, so unlike `run` nothing here is deterministic; it is a server, not a measurement.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use axum::Extension;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::watch;
use tower::ServiceExt;

mod screen;

use super::ApiServer;
use super::extract::RequestTimeout;
use super::routes::network_router;
use super::websocket;
use files::output::{self, Destination};
use scenario::Scenario;

/// Settings of `informer-mem serve`.
#[derive(Debug)]
pub struct ServeConfig {
    /// The scenario whose objects to serve.
    pub scenario: PathBuf,
    /// Where to listen.
    pub listen: SocketAddr,
    /// Where to write a kubeconfig; `None` for one in the temporary directory.
    pub kubeconfig: Option<PathBuf>,
    /// Events of history to keep; `None` for the scenario's, else the watch cache's default size.
    pub history_events: Option<u64>,
    /// How long a stop waits for requests in flight before closing every connection.
    pub shutdown_grace: Duration,
    /// How long a client may take to send a request's headers.
    pub read_header_timeout: Duration,
    /// How long a client may take to send a request's body.
    pub request_timeout: Duration,
}

/// Serves until a stop signal (Ctrl-C or SIGTERM), then stops as kube-apiserver does:
/// no new connections, watches ended, requests in flight given `shutdown_grace` to finish,
/// then every connection closed; a second signal exits at once, with 128 + its number.
/// Prints `listening on http://ADDR` as the first line of stdout, then where the
/// kubeconfig was written.
pub fn serve(config: &ServeConfig) -> anyhow::Result<()> {
    let scenario = Scenario::load(&config.scenario)?;
    if let Some(note) = scenario.objects.sample.as_ref().and_then(|s| s.note()) {
        files::say!("{note}");
    }
    let (kubeconfig, private) = kubeconfig_place(config, &scenario)?;
    // One thread, as in `run`: tokio's multi-threaded runtime would change the size of
    // its timer entries for `run` too (a cargo feature is crate-wide), and with it the
    // exact figures of every committed report.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("failed to start the runtime")?;
    let served = runtime.block_on(async {
        let mut signals = StopSignals::new()?;
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .with_context(|| format!("failed to listen on {}", config.listen))?;
        let addr = listener
            .local_addr()
            .context("failed to read the bound address")?;
        announce(
            &scenario,
            &kubeconfig,
            private.is_some(),
            &format!("http://{addr}"),
        )?;
        let server = ApiServer::new(scenario.objects.clone());
        let history = config
            .history_events
            .or(scenario.apiserver.history_events)
            .unwrap_or(WATCH_CACHE_EVENTS);
        server.set_history_limit(Some(history));
        server.terminate_slow_watchers();
        server.share_encodings(SHARED_ENCODING_BYTES);
        server.yield_during_scans(SCAN_CHUNK);
        let app =
            network_router(server.clone()).layer(Extension(RequestTimeout(config.request_timeout)));
        let connections = watch::Sender::new(false);
        let signal = accept(listener, &app, &connections, &mut signals, config).await;
        // Open watches would hold the connections for up to their timeout.
        server.disconnect_watchers();
        files::say!(
            "{signal}: stopping; waiting up to {} for requests in flight (again to exit at once)",
            humantime::format_duration(config.shutdown_grace)
        );
        tokio::select! {
            () = stop(&connections) => files::say!("stopped"),
            () = tokio::time::sleep(config.shutdown_grace) => {
                files::say!("grace period over; closing the connections still open");
            }
            signal = signals.next() => {
                files::say!("{signal} again: exiting at once");
                if let Some(dir) = &private {
                    let _ = std::fs::remove_dir_all(dir.path());
                }
                std::process::exit(128 + signal.number());
            }
        }
        Ok(())
    });
    // Tasks still open (connections past the grace period) are not waited for.
    runtime.shutdown_background();
    served
}

/// Where the kubeconfig goes: `--kubeconfig`'s path, checked before the server starts
/// (never written over the scenario it serves), or without it a folder of its own that
/// only this user can enter, removed when serve stops (the folder, returned): a
/// predictable name in the shared temporary directory is one another user could plant
/// a link at, or swap for a kubeconfig of their own.
fn kubeconfig_place(
    config: &ServeConfig,
    scenario: &Scenario,
) -> anyhow::Result<(PathBuf, Option<tempfile::TempDir>)> {
    if let Some(path) = &config.kubeconfig {
        let destination = Destination::File(path.clone());
        output::refuse_overlaps(
            &[("the kubeconfig", &destination)],
            &[("the scenario", &config.scenario)],
        )?;
        destination.prepare("the kubeconfig", &[&config.scenario])?;
        return Ok((path.clone(), None));
    }
    let private = tempfile::Builder::new()
        .prefix("informer-mem-serve-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir()
        .context("failed to make a private folder for the kubeconfig")?;
    let path = private.path().join(format!("{}.kubeconfig", scenario.name));
    Ok((path, Some(private)))
}

/// Writes the kubeconfig for `url` (a new private file when `private`) and says where the
/// server listens, on stdout (for scripts) and how to try it, on stderr.
fn announce(
    scenario: &Scenario,
    kubeconfig: &Path,
    private: bool,
    url: &str,
) -> anyhow::Result<()> {
    // Cluster-scoped objects have no namespace: kubectl's own default then.
    let namespace = match super::generate::namespace(&scenario.objects, 0) {
        ns if ns.is_empty() => "default".to_owned(),
        ns => ns,
    };
    if private {
        write_private_kubeconfig(kubeconfig, url, &namespace, None)?;
    } else {
        write_kubeconfig(kubeconfig, url, &namespace)?;
    }
    let lines = format!(
        "listening on {url}\nkubeconfig written to {}{}\n",
        kubeconfig.display(),
        if private {
            " (removed when serve stops)"
        } else {
            ""
        }
    );
    output::print("the address", lines.as_bytes())?;
    files::say!(
        "serving {} {} objects of `{}`; try: KUBECONFIG={} kubectl get {} -A",
        scenario.objects.count,
        scenario.objects.kind.as_str(),
        scenario.name,
        kubeconfig.display(),
        scenario.objects.kind.plural(),
    );
    Ok(())
}

/// Tells every connection `connections` watches to finish the request it serves and
/// close, and waits until they have. A connection taken over by a WebSocket is no longer
/// watched: its watch ends with the server's watchers.
async fn stop(connections: &watch::Sender<bool>) {
    connections.send_replace(true);
    connections.closed().await;
}

/// Serves every connection `listener` accepts, each on a task of its own watching
/// `connections` for the stop, until a stop signal comes; returns it.
async fn accept(
    listener: tokio::net::TcpListener,
    app: &axum::Router,
    connections: &watch::Sender<bool>,
    signals: &mut StopSignals,
    config: &ServeConfig,
) -> StopSignal {
    loop {
        tokio::select! {
            signal = signals.next() => return signal,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let app = app.clone();
                    let service = hyper::service::service_fn(move |request| {
                        let app = app.clone();
                        let routed = |request| async move {
                            app.oneshot(request).await.unwrap_or_else(|e| match e {})
                        };
                        async move { Ok::<_, Infallible>(websocket::answer(request, routed).await) }
                    });
                    let mut stopping = connections.subscribe();
                    let header_timeout = config.read_header_timeout;
                    tokio::spawn(async move {
                        let Some(stream) = screen::first_request(stream, header_timeout).await
                        else {
                            return;
                        };
                        let connection = http1::Builder::new()
                            .timer(TokioTimer::new())
                            .header_read_timeout(header_timeout)
                            .max_buf_size(screen::MAX_HEAD_BYTES + 64 * 1024)
                            .serve_connection(TokioIo::new(stream), service)
                            .with_upgrades();
                        let mut connection = std::pin::pin!(connection);
                        // A client that hangs up or times out is not the server's error.
                        tokio::select! {
                            _ = connection.as_mut() => {}
                            () = async { drop(stopping.wait_for(|stop| *stop).await) } => {
                                connection.as_mut().graceful_shutdown();
                                let _ = connection.await;
                            }
                        }
                    });
                }
                // Out of file descriptors, or a connection reset before it was accepted:
                // wait a little rather than spin, and go on serving.
                Err(_) => tokio::time::sleep(ACCEPT_BACKOFF).await,
            },
        }
    }
}

/// Records a LIST or a watch's initial scan looks at between two yields: a few
/// milliseconds of label matching, so that a selector matching few of 10,000,000 objects
/// keeps `/version` and every other client answered.
pub(super) const SCAN_CHUNK: u32 = 4_096;

/// The history `serve` keeps unless told otherwise: the most events kube-apiserver's
/// watch cache holds per resource (`defaultUpperBoundCapacity`, 100 × 1024). Without a
/// bound, a server that clients write to would keep every version they ever wrote.
pub const WATCH_CACHE_EVENTS: u64 = 100 * 1024;

/// Encoded watch events kept for other watchers to send (the newest events' lines).
pub const SHARED_ENCODING_BYTES: usize = 16 << 20;

/// How long to wait after a failed accept before the next.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// SIGINT (Ctrl-C) and SIGTERM, as many times as they come.
struct StopSignals {
    interrupt: Signal,
    terminate: Signal,
}

/// Which stop signal came.
#[derive(Debug, Clone, Copy)]
enum StopSignal {
    Interrupt,
    Terminate,
}

impl StopSignal {
    /// The signal's number (the same on every Unix).
    fn number(self) -> i32 {
        match self {
            StopSignal::Interrupt => 2,
            StopSignal::Terminate => 15,
        }
    }
}

impl std::fmt::Display for StopSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StopSignal::Interrupt => "SIGINT",
            StopSignal::Terminate => "SIGTERM",
        })
    }
}

impl StopSignals {
    fn new() -> anyhow::Result<StopSignals> {
        Ok(StopSignals {
            interrupt: signal(SignalKind::interrupt()).context("failed to handle SIGINT")?,
            terminate: signal(SignalKind::terminate()).context("failed to handle SIGTERM")?,
        })
    }

    async fn next(&mut self) -> StopSignal {
        tokio::select! {
            _ = self.interrupt.recv() => StopSignal::Interrupt,
            _ = self.terminate.recv() => StopSignal::Terminate,
        }
    }
}

/// A kubeconfig with one cluster, user and context named `informer-mem`, written where
/// the user asked (`serve --kubeconfig`). The server is plain HTTP;
/// `insecure-skip-tls-verify` says so to clients that refuse an `http://` server without
/// it (the official Node.js client), and kubectl and the Python client accept it.
pub fn write_kubeconfig(path: &Path, server: &str, namespace: &str) -> anyhow::Result<()> {
    files::output::write_file(path, kubeconfig(server, namespace, None).as_bytes())
        .with_context(|| format!("failed to write the kubeconfig `{}`", path.display()))
}

/// The kubeconfig of [`write_kubeconfig`], with `token` as the user's bearer token when
/// given, written as a new file only this user can read, at a path in a folder of the
/// run's own: a link or file already there is refused, never followed.
pub fn write_private_kubeconfig(
    path: &Path,
    server: &str,
    namespace: &str,
    token: Option<&str>,
) -> anyhow::Result<()> {
    files::output::write_private(path, kubeconfig(server, namespace, token).as_bytes())
        .with_context(|| format!("failed to write the kubeconfig `{}`", path.display()))
}

fn kubeconfig(server: &str, namespace: &str, token: Option<&str>) -> String {
    let user = match token {
        Some(token) => format!("\n    token: {token}"),
        None => " {}".to_owned(),
    };
    format!(
        "apiVersion: v1\n\
         kind: Config\n\
         clusters:\n\
         - name: informer-mem\n  cluster:\n    server: {server}\n    insecure-skip-tls-verify: true\n\
         users:\n\
         - name: informer-mem\n  user:{user}\n\
         contexts:\n\
         - name: informer-mem\n  context:\n    cluster: informer-mem\n    user: informer-mem\n    namespace: {namespace}\n\
         current-context: informer-mem\n"
    )
}
