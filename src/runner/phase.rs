//! The phase driver: what each kind of phase does to the server and the informer, then
//! the wait until the informer has caught up with the server (checked against the server's
//! truth), then the phase's report. A new phase kind's action goes in
//! [`Driver::start_action`] (and [`Driver::finish_action`] if it waits or works after the
//! server's changes).

use std::alloc::Layout;
use std::time::Duration;

use tokio::time::Instant;

use super::watchers::Watchers;
use apiserver::ApiServer;
use informer::{self, Informer};
use measure::jemalloc::{self, Release};
use measure::timeline::{Timeline, TimelineSpec};
use measure::{Component, Measurement, PhaseMeter, alloc};
use report::{Consistency, Holding, PhaseReport, RequestCounts, SettleReport};
use scenario::{Amount, Churn, Decay, Phase, PhaseAction, Scenario, Scope, VariantConfig};

/// How long a phase may take before the variant is declared stuck, in virtual time: it
/// only passes while every task waits on a timer, so it measures a stall, not slowness.
const PHASE_TIMEOUT: Duration = Duration::from_secs(600);
/// The caught-up check's tick, in virtual time. On the paused clock a sleep ends only
/// when every task is idle, so each tick sees a quiet process: whatever the server wrote,
/// the informer has read and applied.
const SETTLE_TICK: Duration = Duration::from_millis(10);

/// How old the informer's watches must be before a phase cuts them: a real outage cuts
/// watches that have lived, and client-go treats one that ends sooner than
/// [`informer::VERY_SHORT_WATCH`] without an event as broken (it lists again rather than
/// watch again). So a phase that cuts watches first lets them age past that, with a
/// margin: on the virtual clock here, in real time for a program.
pub(super) const WATCH_AGE_BEFORE_CUT: Duration =
    informer::VERY_SHORT_WATCH.saturating_add(Duration::from_millis(100));

/// When an informer on a real clock last caught up with the server: every watch it has
/// open was opened before that. Lets its watches age before a phase cuts them.
#[derive(Debug, Default)]
pub(super) struct CaughtUp(Option<std::time::Instant>);

impl CaughtUp {
    /// The informer has caught up now.
    pub(super) fn now(&mut self) {
        self.0 = Some(std::time::Instant::now());
    }

    /// Before `phase`: if it cuts watches, waits until they are [`WATCH_AGE_BEFORE_CUT`]
    /// old.
    pub(super) async fn age_watches(&self, phase: &Phase) {
        if let Some(at) = self.0.filter(|_| phase.cuts_watches()) {
            tokio::time::sleep_until((at + WATCH_AGE_BEFORE_CUT).into()).await;
        }
    }
}

/// Why a phase failed.
#[derive(Debug, thiserror::Error)]
pub(super) enum PhaseError {
    #[error("phase `{phase}`: informer failed")]
    Informer {
        phase: String,
        #[source]
        source: informer::Error,
    },
    #[error(
        "phase `{phase}`: the informer did not catch up within {} s of virtual time (server at resourceVersion {target}, watches at {position})",
        PHASE_TIMEOUT.as_secs()
    )]
    Stuck {
        phase: String,
        target: u64,
        position: String,
    },
}

/// What every phase of a variant runs against.
#[derive(Clone, Copy)]
pub(super) struct Driver<'a> {
    /// The built-in apiserver.
    pub server: &'a ApiServer,
    /// The informer's client to it.
    pub client: &'a kube::Client,
    /// The variant's settings.
    pub config: &'a VariantConfig,
    /// The objects the variant's informer asks for.
    pub scope: &'a Scope,
    /// Samples to take within each phase.
    pub timeline: Option<TimelineSpec>,
    /// The plain watchers' client, and how many to open when the informer starts.
    pub watchers: Option<(&'a kube::Client, u32)>,
}

impl Driver<'_> {
    /// Runs one phase: its action, the wait until the informer has caught up, its report.
    pub(super) async fn run(
        self,
        informer: &mut Option<Informer>,
        watchers: &mut Watchers,
        phase: &Phase,
        seed: u64,
    ) -> Result<PhaseReport, PhaseError> {
        if phase.cuts_watches() {
            // Idle in virtual time: nothing is due within a second.
            tokio::time::sleep(WATCH_AGE_BEFORE_CUT).await;
        }
        let server = self.server;
        let requests = server.requests();
        if let Some(informer) = informer.as_ref() {
            informer.begin_phase();
        }
        // What the process holds before a settle phase, read before its window opens.
        let before = matches!(phase.action, PhaseAction::Settle { .. }).then(holding_now);
        let meter = PhaseMeter::start();
        // Allocates from the system allocator only: the phase's figures do not see it. The
        // heap-profiling build has no counting allocator to sample.
        let timeline = self
            .timeline
            .filter(|_| !measure::dhat::build())
            .map(Timeline::start);
        self.start_action(informer, watchers, phase, seed);
        finish_action(phase.action).await;
        let informer = informer
            .as_mut()
            .expect("scenario validation makes `list` the first phase");
        let synced = match phase.churn {
            Some(churn) => {
                run_churn(server, churn, phase, seed).await;
                has_initial_state(server, informer)
            }
            None => true,
        };
        // An informer that has not got its initial state by the churn's end is left as it
        // is: the phase records how far it got.
        if synced {
            wait_caught_up(server, informer, watchers.len(), phase).await?;
        }
        let measurement = meter.finish();
        let samples = timeline.map(Timeline::finish).unwrap_or_default();
        let settle = before.map(|before| SettleReport {
            before,
            after: Holding::of(&measurement),
        });
        let requests = server.requests().since(requests);
        let mut report = self.report(informer, phase, measurement, requests);
        report.settle = settle;
        report.samples = samples;
        report.events = informer.events_report();
        report.informer_synced = synced;
        Ok(report)
    }

    /// The phase's changes on the server, and the informer's start or resync. The changes
    /// are the apiserver's work, the informer's start the informer's; the driver itself is
    /// the harness.
    fn start_action(
        self,
        informer: &mut Option<Informer>,
        watchers: &mut Watchers,
        phase: &Phase,
        seed: u64,
    ) {
        let _apiserver = alloc::enter(Component::ApiServer);
        change_server(self.server, phase, seed, |action| match action {
            PhaseAction::List => {
                {
                    let _informer = alloc::enter(Component::Informer);
                    let kind = self.server.spec().kind;
                    *informer = Some(informer::spawn(
                        self.client.clone(),
                        kind,
                        self.config,
                        &self.scope.namespaces,
                        self.scope,
                    ));
                }
                if let Some((client, n)) = self.watchers {
                    let _harness = alloc::enter(Component::Harness);
                    watchers.open(self.server, client, n);
                }
            }
            // The resync timer is the informer's: no request, no change on the server.
            PhaseAction::Resync => {
                let _informer = alloc::enter(Component::Informer);
                if let Some(informer) = informer.as_ref() {
                    informer.resync();
                }
            }
            _ => {}
        });
    }

    /// The phase's report. The oracle reads outside the measured window: what it allocates
    /// is freed before the next phase starts.
    fn report(
        self,
        informer: &Informer,
        phase: &Phase,
        measurement: Measurement,
        requests: RequestCounts,
    ) -> PhaseReport {
        let truth = self.server.truth_of(self.scope);
        let stores = informer.identities_each();
        let consistency = stores
            .iter()
            .map(|identities| Consistency::check(&truth, identities))
            .reduce(Consistency::and)
            .expect("at least one informer runs");
        PhaseReport::new(
            phase,
            measurement,
            stores[0].len() as u64,
            truth.len() as u64,
            requests,
            consistency,
        )
    }
}

/// The phase's changes on the server, in order: the disconnect, the action's writes, the
/// compaction. `informer_action` does what the action asks of the informer (its start,
/// its resync), between the disconnect and the compaction, as the built-in driver and the
/// external one each do it.
pub(super) fn change_server(
    server: &ApiServer,
    phase: &Phase,
    seed: u64,
    informer_action: impl FnOnce(PhaseAction),
) {
    if phase.disconnect {
        server.disconnect_watchers();
    }
    match phase.action {
        PhaseAction::Update { amount } => {
            server.update(amount, &phase.selector, seed);
        }
        PhaseAction::Delete { amount } if phase.graceful => {
            server.delete_gracefully(amount, &phase.selector, seed);
        }
        PhaseAction::Delete { amount } => {
            server.delete(amount, &phase.selector, seed);
        }
        PhaseAction::Create { amount } => {
            let count = u32::try_from(amount.created(server.alive())).unwrap_or(u32::MAX);
            server.create(count);
        }
        PhaseAction::Recreate { amount } if phase.graceful => {
            server.recreate_gracefully(amount, &phase.selector, seed);
        }
        PhaseAction::Recreate { amount } => {
            server.recreate(amount, &phase.selector, seed);
        }
        PhaseAction::Disconnect { amount } => {
            // The informer is away while the objects are deleted and created again.
            server.disconnect_watchers();
            server.recreate(amount, &phase.selector, seed);
        }
        PhaseAction::Relist => {
            // While the watch is down, writes to other resources move the resourceVersion
            // on and etcd compacts: the informer's version is gone, and only a relist can
            // bring it back. No object of this resource changes.
            server.disconnect_watchers();
            server.advance_elsewhere();
            server.compact();
        }
        // After the apiserver's scope ([`finish_action`]): settling is the process's, not
        // the server's, and the calibration's blocks are the informer's.
        PhaseAction::Settle { .. } | PhaseAction::Calibrate { .. } => {}
        action @ (PhaseAction::List | PhaseAction::Resync) => informer_action(action),
    }
    if phase.compact {
        server.compact();
    }
}

/// What a phase does after the server's changes, outside the apiserver's scope: a settle
/// idles and gives memory back, a calibration allocates as the informer.
pub(super) async fn finish_action(action: PhaseAction) {
    if let PhaseAction::Settle { idle_ms, decay } = action {
        // Idle in virtual time: timers fire (bookmarks), nothing else happens.
        tokio::time::sleep(Duration::from_millis(idle_ms)).await;
        match decay {
            Decay::Wait { ms } => {
                // Real time, for jemalloc's decay clocks; then purge what has decayed,
                // as its background threads would have.
                std::thread::sleep(Duration::from_millis(ms));
                jemalloc::release(Release::Decayed);
            }
            Decay::Purge => jemalloc::release(Release::All),
        }
    }
    if let PhaseAction::Calibrate { bytes, blocks } = action {
        calibrate(bytes, blocks);
    }
}

/// Updates objects at the churn's rate, in virtual time, one millisecond at a time.
async fn run_churn(server: &ApiServer, churn: Churn, phase: &Phase, seed: u64) {
    let start = Instant::now();
    let mut done = 0;
    let mut ms = 0;
    while done < churn.due_at(churn.for_ms) {
        ms += 1;
        tokio::time::sleep_until(start + Duration::from_millis(ms)).await;
        let due = churn.due_at(ms);
        if due > done {
            let _apiserver = alloc::enter(Component::ApiServer);
            let picked = seed.wrapping_add(ms.wrapping_mul(0x9e37_79b9));
            server.update(Amount::Count(due - done), &phase.selector, picked);
            done = due;
        }
    }
}

/// Whether every informer has synced and has a watch past its initial events.
fn has_initial_state(server: &ApiServer, informer: &Informer) -> bool {
    informer.status().synced && server.watches_at(0) >= informer.count()
}

/// Allocates `bytes` in `blocks` blocks as the informer, then frees them: the phase's
/// informer figures must show exactly `blocks` allocations and deallocations of `bytes`.
/// The list of blocks is the harness's, and one allocation of its own.
fn calibrate(bytes: u64, blocks: u64) {
    let blocks = usize::try_from(blocks).expect("at most ten million blocks");
    let (each, extra) = (bytes / blocks as u64, (bytes % blocks as u64) as usize);
    let mut held: Vec<(*mut u8, Layout)> = Vec::with_capacity(blocks);
    {
        let _informer = alloc::enter(Component::Informer);
        for i in 0..blocks {
            let size = usize::try_from(each).expect("at most 16 GiB") + usize::from(i < extra);
            let layout = Layout::from_size_align(size, 1).expect("a valid size");
            // SAFETY: `size` is at least 1 (scenario validation: bytes >= blocks).
            let block = unsafe { std::alloc::alloc(layout) };
            if block.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            // Touch every page, as a real informer's objects would be.
            // SAFETY: `block` is valid for `size` bytes.
            unsafe { block.write_bytes(0xa5, size) };
            held.push((block, layout));
        }
    }
    for (block, layout) in held {
        // SAFETY: allocated above with this layout, freed once.
        unsafe { std::alloc::dealloc(block, layout) };
    }
}

/// Waits until the informer has seen every change the server has made: it has synced, a
/// watch past its initial events per informer has been sent everything up to the server's
/// newest resourceVersion, the process is quiet (so the informer has read and applied it),
/// no slow reader (`watch_read_cost`) is reading an event, and its queues and handlers
/// have nothing left. This reads the server, not the
/// informer's reflector, so it holds for any implementation. Handlers that pay a cost in
/// virtual time move the deadline on as long as they make progress. The variant's plain
/// watchers (`watchers` of them) must have been sent everything too.
async fn wait_caught_up(
    server: &ApiServer,
    informer: &mut Informer,
    watchers: usize,
    phase: &Phase,
) -> Result<(), PhaseError> {
    let target = server.resource_version();
    let mut deadline = Instant::now() + PHASE_TIMEOUT;
    let progress = |informer: &Informer| (informer.handled(), informer::slow_reads().1);
    let mut made = progress(informer);
    loop {
        tokio::time::sleep(SETTLE_TICK).await;
        let status = informer.status();
        if status.failed {
            return Err(PhaseError::Informer {
                phase: phase.name.clone(),
                source: informer.failure().await,
            });
        }
        let watches = informer.count() + watchers;
        // A slow reader asleep on its read cost is idle, its next events still unread.
        let reading = informer::slow_reads().0;
        if status.synced && server.watches_at(target) >= watches && informer.quiet() && reading == 0
        {
            return Ok(());
        }
        let now = progress(informer);
        if now != made {
            made = now;
            deadline = Instant::now() + PHASE_TIMEOUT;
        }
        if Instant::now() >= deadline {
            return Err(PhaseError::Stuck {
                phase: phase.name.clone(),
                target,
                position: server
                    .watch_position()
                    .map_or_else(|| "none open".to_owned(), |p| p.to_string()),
            });
        }
    }
}

/// What the process holds from the OS now: jemalloc's resident and retained bytes, RSS.
pub(super) fn holding_now() -> Holding {
    let jemalloc = jemalloc::read().ok();
    Holding {
        resident: jemalloc.map(|j| j.resident),
        retained: jemalloc.map(|j| j.retained),
        rss: measure::rss::read().map(|r| r.current),
    }
}

/// The seed a phase picks its objects with: the scenario's seed and the phase's position.
pub(super) fn phase_seed(scenario: &Scenario, phase: usize) -> u64 {
    scenario
        .objects
        .seed
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(phase as u64)
}
