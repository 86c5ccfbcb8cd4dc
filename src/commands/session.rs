//! `run --kubeconfig`: the run's side of a real server. Before any variant runs it checks
//! the scenario can run there, connects, and makes each variant a namespace of its own
//! (each variant removes its own when it ends); after the last it removes any left, and
//! on Ctrl-C (or SIGTERM) it stops the variants and removes them before it exits.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, bail};

use super::ClusterConfig;
use super::launched::Launched;
use crate::cluster::Cluster;
use crate::runner::{self, ClusterJob};
use report::RealServer;
use scenario::{ObjectKind, Scenario};

/// A run's hold on a real server: its namespaces, and the runtime that talks to it.
#[derive(Debug)]
pub(super) struct Session {
    /// A runtime driven by a thread of its own ([`background_runtime`]).
    runtime: tokio::runtime::Handle,
    cluster: Cluster,
    kind: ObjectKind,
    /// What each variant's process is given.
    pub jobs: Vec<ClusterJob>,
    /// The server, for the report.
    pub server: RealServer,
    /// Set when a signal came: the signal's task removes the namespaces and exits.
    interrupted: Arc<AtomicBool>,
}

impl Session {
    /// Refuses a scenario that cannot run against a real server (before connecting),
    /// then connects and makes the variants' namespaces.
    pub fn open(
        config: &ClusterConfig,
        scenario: &Scenario,
        quiet: bool,
    ) -> anyhow::Result<Session> {
        let launched = config.launched.is_some();
        if let Some(why) = scenario.real_server_refusal(config.read_only, launched) {
            bail!("{}: {why}", scenario.file.display());
        }
        if let Some(pid) = config.server_pid
            && measure::outside::read(pid).is_none()
        {
            bail!("--server-pid {pid}: no such process on this machine");
        }
        let runtime = background_runtime()?;
        let cluster = runtime.block_on(Cluster::connect(&config.kubeconfig))?;
        let version = runtime
            .block_on(cluster.version())
            .with_context(|| format!("connecting to {}", cluster.url))?;
        runtime
            .block_on(cluster.check_serves(scenario.objects.kind))
            .with_context(|| {
                // A built-in kind is named by `objects.kind`, any other by its sample.
                let key = if scenario.objects.kind.generated() {
                    "objects.kind"
                } else {
                    "objects.sample"
                };
                format!("{}: {key}", scenario.file.display())
            })?;
        let server = RealServer {
            url: cluster.url.clone(),
            version,
            read_only: config.read_only,
            started_by_run: launched,
        };
        let run = run_id();
        let names: Vec<Option<String>> = if config.read_only {
            vec![None; scenario.variants.len()]
        } else {
            (0..scenario.variants.len())
                .map(|i| Some(format!("informer-mem-run-{run}-{i}")))
                .collect()
        };
        let session = Session {
            runtime,
            cluster,
            kind: scenario.objects.kind,
            jobs: names
                .into_iter()
                .map(|namespace| ClusterJob {
                    kubeconfig: config.kubeconfig.clone(),
                    namespace,
                    server_pid: config.server_pid,
                })
                .collect(),
            server,
            interrupted: Arc::default(),
        };
        session.remove_on_signal(config.launched.clone());
        if !quiet {
            session.say();
        }
        let made = session.runtime.block_on(async {
            for namespace in session.namespaces() {
                session.cluster.make_namespace(namespace, &run).await?;
            }
            Ok::<_, anyhow::Error>(())
        });
        if let Err(e) = made {
            let _ = session.close();
            return Err(e);
        }
        Ok(session)
    }

    fn namespaces(&self) -> impl Iterator<Item = &str> {
        self.jobs.iter().filter_map(|j| j.namespace.as_deref())
    }

    fn say(&self) {
        let started = if self.server.started_by_run {
            ", which the run started"
        } else {
            ""
        };
        let server = format!(
            "kube-apiserver {} at {}{started}",
            self.server.version, self.server.url
        );
        match (self.namespaces().next(), self.namespaces().last()) {
            (Some(first), Some(last)) => files::say!(
                "running against {server}: each variant in a namespace of its own ({first} .. \
                 {last}), removed when it ends"
            ),
            _ => files::say!(
                "running against {server}, read only: the informers watch every namespace"
            ),
        }
    }

    /// On Ctrl-C or SIGTERM: stops the variants, removes the namespaces, stops the server
    /// if the run started it, and exits as a shell reports a death by that signal.
    fn remove_on_signal(&self, launched: Option<Arc<Launched>>) {
        let cluster = self.cluster.clone();
        let kind = self.kind;
        let namespaces: Vec<String> = self.namespaces().map(str::to_owned).collect();
        let interrupted = Arc::clone(&self.interrupted);
        self.runtime.spawn(async move {
            use tokio::signal::unix::{SignalKind, signal};
            let (Ok(mut interrupt), Ok(mut terminate)) = (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
            ) else {
                return;
            };
            let code = tokio::select! {
                _ = interrupt.recv() => 128 + libc::SIGINT,
                _ = terminate.recv() => 128 + libc::SIGTERM,
            };
            interrupted.store(true, Ordering::SeqCst);
            files::say!("interrupted: stopping the variants and removing the run's namespaces");
            // Each variant stops its program and leaves its namespace to the run.
            let _ = tokio::task::spawn_blocking(runner::end_variants).await;
            let names = namespaces.iter().map(String::as_str);
            if let Err(e) = remove_all(&cluster, names, kind).await {
                files::say!("error: {e:#}");
            }
            if let Some(launched) = launched {
                let _ = tokio::task::spawn_blocking(move || launched.stop()).await;
            }
            std::process::exit(code);
        });
    }

    /// After a signal, waits for its task to remove the namespaces and exit: an
    /// interrupted run writes no report. Returns at once otherwise.
    pub fn stop_if_interrupted(&self) {
        while self.interrupted.load(Ordering::SeqCst) {
            std::thread::park();
        }
    }

    /// Removes the variants' namespaces, all at once, and waits until they are gone.
    pub fn close(&self) -> anyhow::Result<()> {
        self.runtime
            .block_on(remove_all(&self.cluster, self.namespaces(), self.kind))
    }
}

/// Removes `namespaces` at once and waits until they are gone; the first error, after
/// every removal has ended.
async fn remove_all(
    cluster: &Cluster,
    namespaces: impl Iterator<Item = &str>,
    kind: ObjectKind,
) -> anyhow::Result<()> {
    let removals = namespaces.map(|namespace| cluster.remove_namespace(namespace, kind));
    futures::future::join_all(removals)
        .await
        .into_iter()
        .collect()
}

/// A `current_thread` runtime driven by a thread of its own, which sits in its
/// `block_on` for good: its tasks (the clients' workers, the signal handler) and its I/O go
/// on while the main thread waits for variants, and the main thread runs futures on it
/// with `Handle::block_on`. Not a multi-thread runtime: tokio's `rt-multi-thread` feature
/// makes its timer entries bigger, and with them every report's exact figures.
fn background_runtime() -> anyhow::Result<tokio::runtime::Handle> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("failed to start the runtime")?;
    let handle = runtime.handle().clone();
    std::thread::Builder::new()
        .name("cluster".to_owned())
        .spawn(move || runtime.block_on(std::future::pending::<()>()))
        .context("failed to start the runtime's thread")?;
    Ok(handle)
}

/// An id that differs between runs: the namespaces' middle part and their label's value.
fn run_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    format!("{:x}{:x}", std::process::id(), nanos >> 12)
}
