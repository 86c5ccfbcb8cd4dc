//! The child side of a variant against a real server (`run --kubeconfig`): the informer
//! runs in this process against the server, the phases write through its API, and the
//! oracle holds the store against the server's own LIST.
//!
//! The writes come from a mirror: the built-in apiserver's state, generated as for any
//! run and changed by the same phase code ([`change_server`]), never served. After each
//! phase's changes the run writes what changed in the mirror to the server, in the
//! variant's namespace: creates, replaces and deletes, 16 at a time. So both servers hold
//! the same objects (but for what a server sets itself) and every phase picks the same
//! ones from the same seed.
//!
//! Nothing here runs on a virtual clock: the server has its own. The informer's exact
//! figures are still counted, but how a server's bytes arrive (TCP reads, TLS records)
//! and what it sends meanwhile differ run to run; the report says which server made it.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use futures::{StreamExt, TryStreamExt};
use tokio::task::JoinHandle;

use super::external::profile_file;
use super::message::{ClusterJob, Message};
use super::phase::{change_server, finish_action, holding_now, phase_seed};
use crate::apiserver::ApiServer;
use crate::cluster::{Cluster, Counters, Faults, Watched, for_server};
use crate::informer::{self, Informer};
use crate::k8s::TruthEntry;
use crate::measure::outside::{self, ProcessReading};
use crate::measure::{Component, PhaseMeter, alloc};
use crate::report::{
    Consistency, Holding, KubeApiServerFigures, PhaseReport, ServerProcess, SettleReport,
    SetupReport,
};
use crate::scenario::{ObjectKind, Phase, PhaseAction, Scenario};

/// Writes in flight at once.
const WRITES_AT_ONCE: usize = 16;

/// How long the informer may take to match the server after a phase's writes.
const CATCH_UP: Duration = Duration::from_secs(180);

/// How often the caught-up check looks.
const TICK: Duration = Duration::from_millis(100);

/// How long the plain watchers must read nothing before a phase's server figures are read.
const WATCHERS_QUIET: Duration = Duration::from_millis(500);

/// Runs variant `variant` of `scenario` against the server `job` names, handing each
/// result to `emit`.
pub fn run(
    scenario: &Scenario,
    variant: usize,
    job: &ClusterJob,
    profiles: Option<&Path>,
    mut emit: impl FnMut(Message) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("failed to start the runtime")?;
    runtime.block_on(async {
        let setup = PhaseMeter::start();
        let mut run = match Run::new(scenario, variant, job, profiles).await {
            Ok(run) => run,
            Err(e) => return emit(Message::Failed(format!("setup: {e:#}"))).map_err(Into::into),
        };
        emit(Message::Setup(Box::new(SetupReport::new(&setup.finish()))))?;
        let mut failed = false;
        for (i, phase) in scenario.phases.iter().enumerate() {
            match run.phase(i, phase).await {
                Ok(report) => emit(Message::Phase(Box::new(report)))?,
                Err(e) => {
                    emit(Message::Failed(format!("phase `{}`: {e:#}", phase.name)))?;
                    failed = true;
                    break;
                }
            }
        }
        if let Some(informer) = &run.informer {
            informer.abort();
        }
        run.watchers.iter().for_each(JoinHandle::abort);
        // The next variant's server holds none of this one's objects (the run removes
        // every namespace at its end too, this one included if this fails).
        if let Some(namespace) = &run.namespace
            && let Err(e) = run.cluster.remove_namespace(namespace, run.kind()).await
            && !failed
        {
            emit(Message::Failed(format!("removing the namespace: {e:#}")))?;
        }
        Ok(())
    })
}

/// A real server's process through a phase, read from `/proc`.
struct ProcessWindow {
    pid: u32,
    start: ProcessReading,
    peak_reset: bool,
}

impl ProcessWindow {
    /// Resets the process's RSS high-water mark and reads it; `None` when it is gone.
    fn open(pid: u32) -> Option<ProcessWindow> {
        let peak_reset = outside::reset_peak(pid);
        Some(ProcessWindow {
            pid,
            start: outside::read(pid)?,
            peak_reset,
        })
    }

    /// The phase's figures; `None` when the process is gone.
    fn close(self) -> Option<ServerProcess> {
        let end = outside::read(self.pid)?;
        Some(ServerProcess {
            rss_start_bytes: self.start.rss,
            rss_bytes: end.rss,
            rss_peak_bytes: self.peak_reset.then_some(end.rss_peak),
        })
    }
}

/// One variant's run against a real server.
struct Run<'a> {
    scenario: &'a Scenario,
    variant: usize,
    cluster: Cluster,
    faults: Faults,
    /// The informer's client, through `faults`.
    client: kube::Client,
    /// The objects the server should hold, and how each phase changes them.
    mirror: ApiServer,
    /// The variant's namespace; `None` when the run only reads.
    namespace: Option<String>,
    informer: Option<Informer>,
    /// The variant's plain `watchers`, and the bytes they have read.
    watchers: Vec<JoinHandle<()>>,
    watched: Arc<Watched>,
    /// Where the server's heap profiles go: `<this>.<phase>.heap.pb.gz`.
    profiles: Option<&'a Path>,
    /// The server's process, when it runs on this machine.
    server_pid: Option<u32>,
}

impl<'a> Run<'a> {
    /// Connects, and fills the variant's namespace with the scenario's objects.
    async fn new(
        scenario: &'a Scenario,
        variant: usize,
        job: &ClusterJob,
        profiles: Option<&'a Path>,
    ) -> anyhow::Result<Run<'a>> {
        let cluster = Cluster::connect(&job.kubeconfig).await?;
        let faults = Faults::default();
        let client = cluster.informer_client(&faults)?;
        let run = Run {
            scenario,
            variant,
            cluster,
            faults,
            client,
            mirror: ApiServer::new(scenario.objects.clone()),
            namespace: job.namespace.clone(),
            informer: None,
            watchers: Vec::new(),
            watched: Arc::default(),
            profiles,
            server_pid: job.server_pid,
        };
        if run.namespace.is_some() {
            run.write_changes(&HashMap::new()).await?;
        }
        Ok(run)
    }

    fn kind(&self) -> ObjectKind {
        self.scenario.objects.kind
    }

    /// One phase: the changes (the informer away meanwhile if the phase says so), the wait
    /// until its store matches the server, its report.
    async fn phase(&mut self, index: usize, phase: &Phase) -> anyhow::Result<PhaseReport> {
        let requests = self.faults.requests();
        if let Some(informer) = &self.informer {
            informer.begin_phase();
        }
        // A server that does not let the run read its metrics still runs the scenario.
        let counters = self.cluster.counters().await.ok();
        let watched = self.watched.read();
        let process = self.server_pid.and_then(ProcessWindow::open);
        let before = matches!(phase.action, PhaseAction::Settle { .. }).then(holding_now);
        let meter = PhaseMeter::start();
        let away = phase.disconnect
            || matches!(
                phase.action,
                PhaseAction::Disconnect { .. } | PhaseAction::Relist
            );
        if away {
            self.faults.hold();
            self.faults.cut();
        }
        self.change(index, phase).await?;
        if phase.compact || phase.action == PhaseAction::Relist {
            // The history up to now is gone: a watch from before it gets 410.
            let (_, newest) = self
                .cluster
                .truth(self.kind(), self.namespace.as_deref())
                .await?;
            if phase.action == PhaseAction::Relist {
                // Nothing changed, so the informer may have seen the newest version:
                // one 410 per informer, from anything up to it.
                let informers = self.informer.as_ref().map_or(1, Informer::count);
                self.faults.expire_next(newest + 1, informers);
            } else {
                self.faults.expire_before(newest);
            }
        }
        if away {
            self.faults.release();
        }
        finish_action(phase.action).await;
        let (truth, consistency) = self.caught_up().await?;
        self.watchers_quiet().await;
        let informer = self
            .informer
            .as_ref()
            .context("scenario validation makes `list` the first phase")?;
        let measurement = meter.finish();
        let settle = before.map(|before| SettleReport {
            before,
            after: Holding::of(&measurement),
        });
        let requests = self.faults.requests().since(requests);
        let mut report = PhaseReport::new(
            phase,
            measurement,
            informer.len() as u64,
            truth.len() as u64,
            requests,
            consistency,
        );
        report.settle = settle;
        report.events = informer.events_report();
        report.informer_synced = true;
        report.kube_apiserver =
            self.server_figures(counters, index, phase)
                .await?
                .map(|mut figures| {
                    let (bytes, events) = self.watched.read();
                    figures.events_sent = requests.watch_events + events - watched.1;
                    figures.bytes_sent = requests.bytes + bytes - watched.0;
                    figures.process = process.and_then(ProcessWindow::close);
                    figures
                });
        Ok(report)
    }

    /// The phase's changes: on the mirror as in any run, then written to the server; the
    /// informer's start or resync.
    async fn change(&mut self, index: usize, phase: &Phase) -> anyhow::Result<()> {
        let planned: HashMap<String, (u64, String)> = self
            .mirror
            .truth()
            .into_iter()
            .map(|t| (t.key, (t.resource_version, t.uid)))
            .collect();
        let seed = phase_seed(self.scenario, index);
        let mut asked = None;
        change_server(&self.mirror, phase, seed, |action| asked = Some(action));
        if self.namespace.is_some() {
            self.write_changes(&planned).await?;
        }
        match asked {
            Some(PhaseAction::List) => {
                {
                    let _informer = alloc::enter(Component::Informer);
                    let config = &self.scenario.variants[self.variant].config;
                    self.informer = Some(informer::spawn(
                        self.client.clone(),
                        self.kind(),
                        config,
                        self.namespace.as_deref(),
                    ));
                }
                self.open_watchers();
            }
            Some(PhaseAction::Resync) => {
                let _informer = alloc::enter(Component::Informer);
                if let Some(informer) = &self.informer {
                    informer.resync();
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Writes to the server what changed in the mirror since `before` (key ->
    /// resourceVersion and UID): new keys created, gone keys deleted, a new UID deleted
    /// and created again, a new resourceVersion replaced.
    async fn write_changes(&self, before: &HashMap<String, (u64, String)>) -> anyhow::Result<()> {
        let now = self.mirror.truth();
        let mut writes: Vec<Write> = Vec::new();
        let alive: HashMap<&str, &TruthEntry> = now.iter().map(|t| (t.key.as_str(), t)).collect();
        for (key, (rv, uid)) in before {
            match alive.get(key.as_str()) {
                None => writes.push(Write::Delete(key.clone())),
                Some(t) if t.uid != *uid => writes.push(Write::Recreate(key.clone())),
                Some(t) if t.resource_version != *rv => writes.push(Write::Replace(key.clone())),
                Some(_) => {}
            }
        }
        writes.extend(
            now.iter()
                .filter(|t| !before.contains_key(&t.key))
                .map(|t| Write::Create(t.key.clone())),
        );
        futures::stream::iter(writes.into_iter().map(|w| self.write(w)))
            .buffer_unordered(WRITES_AT_ONCE)
            .try_collect::<()>()
            .await
    }

    async fn write(&self, write: Write) -> anyhow::Result<()> {
        let namespace = self
            .namespace
            .as_deref()
            .expect("only a writing run writes");
        let kind = self.kind();
        let (key, delete, put) = match &write {
            Write::Create(key) => (key, false, Some(false)),
            Write::Replace(key) => (key, false, Some(true)),
            Write::Recreate(key) => (key, true, Some(false)),
            Write::Delete(key) => (key, true, None),
        };
        let (mirror_ns, name) = key.split_once('/').context("a key is namespace/name")?;
        if delete {
            self.cluster.delete(kind, namespace, name).await?;
        }
        if let Some(replace) = put {
            let version = self
                .mirror
                .get_named(mirror_ns, name)
                .with_context(|| format!("{key} is not in the mirror"))?;
            let object = for_server(&version.to_value(self.mirror.generator()), namespace);
            if replace {
                self.cluster.replace(kind, namespace, object).await?;
            } else {
                self.cluster.create(kind, namespace, object).await?;
            }
        }
        Ok(())
    }

    /// Waits until every informer has synced, is quiet, and holds exactly the server's
    /// objects. A run that writes fails after [`CATCH_UP`]; a read-only run, whose server
    /// others keep changing, ends the wait then and reports the difference.
    async fn caught_up(&mut self) -> anyhow::Result<(Vec<TruthEntry>, Consistency)> {
        let kind = self.kind();
        let namespace = self.namespace.as_deref();
        let informer = self
            .informer
            .as_mut()
            .context("scenario validation makes `list` the first phase")?;
        let deadline = tokio::time::Instant::now() + CATCH_UP;
        let mut truth = self.cluster.truth(kind, namespace).await?.0;
        loop {
            let status = informer.status();
            if status.failed {
                bail!("the informer failed: {}", informer.failure().await);
            }
            let mut consistency = None;
            let watching = self.faults.open_watches() >= informer.count();
            if status.synced && watching && informer.quiet() && informer.len() == truth.len() {
                let found = informer
                    .identities_each()
                    .iter()
                    .map(|identities| Consistency::check(&truth, identities))
                    .reduce(Consistency::and)
                    .unwrap_or_default();
                if found.consistent {
                    return Ok((truth, found));
                }
                consistency = Some(found);
            }
            if tokio::time::Instant::now() >= deadline {
                let found = consistency
                    .unwrap_or_else(|| Consistency::check(&truth, &informer.identities()));
                if namespace.is_none() {
                    return Ok((truth, found));
                }
                bail!(
                    "the informer did not match the server within {}s (synced: {}; {} \
                     missing, {} extra, {} stale; {})",
                    CATCH_UP.as_secs(),
                    status.synced,
                    found.missing,
                    found.extra,
                    found.stale,
                    self.faults
                );
            }
            tokio::time::sleep(TICK).await;
            if namespace.is_none() {
                // Others change a cluster the run only reads: look at it again.
                truth = self.cluster.truth(kind, namespace).await?.0;
            }
        }
    }
}

impl Run<'_> {
    /// Opens the variant's plain `watchers`, from the newest resourceVersion.
    fn open_watchers(&mut self) {
        let n = self.scenario.variants[self.variant].server.watchers;
        for _ in 0..n {
            let cluster = self.cluster.clone();
            let kind = self.kind();
            let namespace = self.namespace.clone();
            let watched = Arc::clone(&self.watched);
            self.watchers.push(Component::Harness.spawn(async move {
                // A watcher that cannot watch leaves the others; the figures show it.
                let _ = cluster
                    .watch_and_drop(kind, namespace.as_deref(), watched)
                    .await;
            }));
        }
    }

    /// Once the informer has caught up, waits until every plain watcher has a watch open
    /// and they have read nothing for [`WATCHERS_QUIET`]: the server has sent them the
    /// phase's events (at most [`CATCH_UP`]).
    async fn watchers_quiet(&self) {
        if self.watchers.is_empty() {
            return;
        }
        let deadline = tokio::time::Instant::now() + CATCH_UP;
        while self.watched.open() < self.watchers.len() as u64
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(TICK).await;
        }
        let mut read = self.watched.read();
        while tokio::time::Instant::now() < deadline {
            tokio::time::sleep(WATCHERS_QUIET).await;
            let now = self.watched.read();
            if now == read {
                return;
            }
            read = now;
        }
    }

    /// The server's side of the phase: its counters' growth since `before`, and its heap
    /// profile saved beside the report. `None` when its metrics cannot be read.
    async fn server_figures(
        &self,
        before: Option<Counters>,
        index: usize,
        phase: &Phase,
    ) -> anyhow::Result<Option<KubeApiServerFigures>> {
        let (Some(before), Ok(after)) = (before, self.cluster.counters().await) else {
            return Ok(None);
        };
        let mut figures = after.since(&before);
        if let Some(prefix) = self.profiles
            && let Some(profile) = self.cluster.heap_profile().await?
        {
            let file = profile_file(prefix, index, &phase.name);
            crate::output::write_file(&file, &profile).with_context(|| {
                format!("failed to write the heap profile `{}`", file.display())
            })?;
            figures.heap_profile = file.file_name().map(|n| n.to_string_lossy().into_owned());
        }
        Ok(Some(figures))
    }
}

/// One write the mirror asks for, by its key in the mirror.
#[derive(Debug)]
enum Write {
    Create(String),
    Replace(String),
    Recreate(String),
    Delete(String),
}
