//! `informer-mem serve`: the built-in apiserver on a TCP socket, for kubectl, for real
//! controllers, or for any informer in any language.
//!
//! Serving uses real time (watch timeouts and bookmarks fire by the clock) and a real
//! socket, so unlike `run` nothing here is deterministic; it is a server, not a measurement.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::ApiServer;
use super::http::router;
use crate::scenario::Scenario;

/// Settings of `informer-mem serve`.
#[derive(Debug)]
pub struct ServeConfig {
    /// The scenario whose objects to serve.
    pub scenario: PathBuf,
    /// Where to listen.
    pub listen: SocketAddr,
    /// Where to write a kubeconfig; `None` for one in the temporary directory.
    pub kubeconfig: Option<PathBuf>,
}

/// Serves until Ctrl-C or SIGTERM. Prints `listening on http://ADDR` as the first line of
/// stdout, then where the kubeconfig was written.
pub fn serve(config: &ServeConfig) -> anyhow::Result<()> {
    let scenario = Scenario::load(&config.scenario)?;
    let kubeconfig = config.kubeconfig.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("informer-mem-{}.kubeconfig", scenario.name))
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("failed to start the runtime")?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .with_context(|| format!("failed to listen on {}", config.listen))?;
        let addr = listener
            .local_addr()
            .context("failed to read the bound address")?;
        let url = format!("http://{addr}");
        let namespace = super::generate::namespace(&scenario.objects, 0);
        write_kubeconfig(&kubeconfig, &url, &namespace)?;
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "listening on {url}")?;
        writeln!(stdout, "kubeconfig written to {}", kubeconfig.display())?;
        stdout.flush()?;
        drop(stdout);
        eprintln!(
            "serving {} {} objects of `{}`; try: KUBECONFIG={} kubectl get {} -A",
            scenario.objects.count,
            scenario.objects.kind.as_str(),
            scenario.name,
            kubeconfig.display(),
            scenario.objects.kind.plural(),
        );
        let server = ApiServer::new(scenario.objects.clone());
        server.set_history_limit(scenario.apiserver.history_events);
        server.terminate_slow_watchers();
        let on_stop = server.clone();
        axum::serve(listener, router(server))
            .with_graceful_shutdown(async move {
                stop_signal().await;
                // Open watches would hold graceful shutdown for up to their timeout.
                on_stop.disconnect_watchers();
            })
            .await
            .context("failed to serve")
    })
}

/// Resolves on Ctrl-C or SIGTERM.
async fn stop_signal() {
    let interrupt = tokio::signal::ctrl_c();
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("installing a SIGTERM handler succeeds on Unix");
    tokio::select! {
        _ = interrupt => {}
        _ = terminate.recv() => {}
    }
}

/// A kubeconfig with one cluster, user and context named `informer-mem`. The server is
/// plain HTTP; `insecure-skip-tls-verify` says so to clients that refuse an `http://`
/// server without it (the official Node.js client), and kubectl and the Python client
/// accept it.
fn write_kubeconfig(path: &Path, server: &str, namespace: &str) -> anyhow::Result<()> {
    let text = format!(
        "apiVersion: v1\n\
         kind: Config\n\
         clusters:\n\
         - name: informer-mem\n  cluster:\n    server: {server}\n    insecure-skip-tls-verify: true\n\
         users:\n\
         - name: informer-mem\n  user: {{}}\n\
         contexts:\n\
         - name: informer-mem\n  context:\n    cluster: informer-mem\n    user: informer-mem\n    namespace: {namespace}\n\
         current-context: informer-mem\n"
    );
    std::fs::write(path, text)
        .with_context(|| format!("failed to write the kubeconfig `{}`", path.display()))
}
