//! The child side of a variant against a real server (`run --kubeconfig`): the informer
//! runs in this process against the server, the phases write through its API, and the
//! oracle holds the store against the server's own LIST.
//!
//! The writes, the faults in front of the informer and the server's figures are the
//! variant's [`Side`] of the server, which an external variant's program against a real
//! server shares ([`super::external`]).
//!
//! Nothing here runs on a virtual clock: the server has its own. The informer's exact
//! figures are still counted, but how a server's bytes arrive (TCP reads, TLS records)
//! and what it sends meanwhile differ run to run; the report says which server made it.

mod side;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use tokio::task::JoinHandle;

use super::message::{ClusterJob, Message};
use super::phase::{CaughtUp, finish_action, holding_now};
use crate::cluster::Watched;
use informer::{self, Informer};
use k8s::TruthEntry;
use measure::{Component, PhaseMeter, alloc};
use report::{Consistency, Holding, PhaseReport, SettleReport, SetupReport};
use scenario::{ObjectKind, Phase, PhaseAction, Scenario, Scope};
pub(super) use side::Side;

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
        if let Err(e) = run.side.close().await
            && !failed
        {
            emit(Message::Failed(format!("removing the namespace: {e:#}")))?;
        }
        Ok(())
    })
}

/// One variant's run against a real server.
struct Run<'a> {
    scenario: &'a Scenario,
    variant: usize,
    side: Side,
    /// The informer's client, through the side's faults.
    client: kube::Client,
    informer: Option<Informer>,
    /// The variant's plain `watchers`, and the bytes they have read.
    watchers: Vec<JoinHandle<()>>,
    watched: Arc<Watched>,
    /// Where the server's heap profiles go: `<this>.<phase>.heap.pb.gz`.
    profiles: Option<&'a Path>,
    /// When the informer caught up at the end of the previous phase.
    caught_up: CaughtUp,
    /// The objects the informer asks for, as the server holds them ([`Side::scope_of`]).
    scope: Scope,
}

impl<'a> Run<'a> {
    /// Connects, and fills the variant's namespace with the scenario's objects.
    async fn new(
        scenario: &'a Scenario,
        variant: usize,
        job: &ClusterJob,
        profiles: Option<&'a Path>,
    ) -> anyhow::Result<Run<'a>> {
        let side = Side::open(scenario, job, Component::Informer, false).await?;
        let client = side.cluster.informer_client(&side.faults)?;
        let scope = side.scope_of(&scenario.variants[variant].scope);
        Ok(Run {
            scenario,
            variant,
            side,
            client,
            informer: None,
            watchers: Vec::new(),
            watched: Arc::default(),
            profiles,
            caught_up: CaughtUp::default(),
            scope,
        })
    }

    fn kind(&self) -> ObjectKind {
        self.scenario.objects.kind
    }

    /// One phase: the changes (the informer away meanwhile if the phase says so), the wait
    /// until its store matches the server, its report.
    async fn phase(&mut self, index: usize, phase: &Phase) -> anyhow::Result<PhaseReport> {
        self.caught_up.age_watches(phase).await;
        let requests = self.side.faults.requests();
        if let Some(informer) = &self.informer {
            informer.begin_phase();
        }
        let window = self.side.server_window().await;
        let watched = self.watched.read();
        let before = matches!(phase.action, PhaseAction::Settle { .. }).then(holding_now);
        let meter = PhaseMeter::start();
        let mut asked = None;
        self.side
            .change(self.scenario, index, phase, |action| asked = Some(action))
            .await?;
        self.start_or_resync(asked);
        finish_action(phase.action).await;
        let (truth, consistency) = self.caught_up().await?;
        self.caught_up.now();
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
        let requests = self.side.faults.requests().since(requests);
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
        report.kube_apiserver = self
            .side
            .server_figures(window, index, phase, self.profiles)
            .await?
            .map(|mut figures| {
                let (bytes, events) = self.watched.read();
                figures.events_sent = requests.watch_events + events - watched.1;
                figures.bytes_sent = requests.bytes + bytes - watched.0;
                figures
            });
        Ok(report)
    }

    /// What the phase asked of the informer: its start (and the plain watchers'), or a
    /// resync.
    fn start_or_resync(&mut self, asked: Option<PhaseAction>) {
        match asked {
            Some(PhaseAction::List) => {
                {
                    let _informer = alloc::enter(Component::Informer);
                    let config = &self.scenario.variants[self.variant].config;
                    self.informer = Some(informer::spawn(
                        self.client.clone(),
                        self.kind(),
                        config,
                        self.side.namespace.as_slice(),
                        &self.scope,
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
    }

    /// Waits until every informer has synced, is quiet, and holds exactly the server's
    /// objects. A run that writes fails after [`CATCH_UP`]; a read-only run, whose server
    /// others keep changing, ends the wait then and reports the difference.
    async fn caught_up(&mut self) -> anyhow::Result<(Vec<TruthEntry>, Consistency)> {
        let namespace = self.side.namespace.as_deref();
        let informer = self
            .informer
            .as_mut()
            .context("scenario validation makes `list` the first phase")?;
        let deadline = tokio::time::Instant::now() + CATCH_UP;
        let scope = &self.scope;
        let mut truth = self.side.truth_of(scope).await?.0;
        loop {
            let status = informer.status();
            if status.failed {
                bail!("the informer failed: {}", informer.failure().await);
            }
            let mut consistency = None;
            let watching = self.side.faults.open_watches() >= informer.count();
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
                    self.side.faults
                );
            }
            tokio::time::sleep(TICK).await;
            if namespace.is_none() {
                // Others change a cluster the run only reads: look at it again.
                truth = self.side.truth_of(scope).await?.0;
            }
        }
    }
}

impl Run<'_> {
    /// Opens the variant's plain `watchers`, from the newest resourceVersion.
    fn open_watchers(&mut self) {
        let n = self.scenario.variants[self.variant].server.watchers;
        for _ in 0..n {
            let cluster = self.side.cluster.clone();
            let kind = self.kind();
            let namespace = self.side.namespace.clone();
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
}
