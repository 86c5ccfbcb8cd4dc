//! The child side: one variant, one process, one `current_thread` runtime.
//!
//! The apiserver, the informer and the phase driver share the runtime's one thread, so
//! every run of the same build schedules the same way and the allocation counts repeat
//! exactly. Results go to stdout as JSON lines, one per completed step, so a crash loses
//! only the phase it happened in.

use std::alloc::Layout;
use std::io::{self, Read, Write};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use tokio::time::Instant;

use crate::apiserver::{ApiServer, transport};
use crate::informer::{self, Informer};
use crate::measure::jemalloc::{self, Release};
use crate::measure::timeline::{Timeline, TimelineSpec};
use crate::measure::{Component, PhaseMeter, alloc};
use crate::report::{Consistency, Holding, PhaseReport, SettleReport, SetupReport};
use crate::scenario::{Amount, Churn, Decay, Phase, PhaseAction, Scenario, VariantConfig};

/// How long a phase may take before the variant is declared stuck, in virtual time: it
/// only passes while every task waits on a timer, so it measures a stall, not slowness.
const PHASE_TIMEOUT: Duration = Duration::from_secs(600);
/// The caught-up check's tick, in virtual time. On the paused clock a sleep ends only
/// when every task is idle, so each tick sees a quiet process: whatever the server wrote,
/// the informer has read and applied.
const SETTLE_TICK: Duration = Duration::from_millis(10);

/// What the parent sends a child on stdin.
#[derive(Debug, Serialize, Deserialize)]
pub struct Job {
    /// The validated scenario (the child does not re-read the file).
    pub scenario: Scenario,
    /// Which variant to run.
    pub variant: usize,
    /// Where to write the dhat profile (the heap-profiling build only).
    #[serde(default)]
    pub dhat_file: Option<std::path::PathBuf>,
}

/// One line of a child's stdout.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Message {
    /// Setup is done; the first phase starts.
    Setup(SetupReport),
    /// A phase completed.
    Phase(Box<PhaseReport>),
    /// The variant stopped on an error; no more lines follow.
    Failed(String),
}

/// Why a phase failed.
#[derive(Debug, thiserror::Error)]
enum PhaseError {
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

/// Entry point of the child process: reads a [`Job`] from stdin, runs it, writes
/// [`Message`] lines to stdout.
pub fn main() -> anyhow::Result<()> {
    // The text is dropped before anything is measured: live bytes count every block alive
    // in the process, and this buffer's capacity depends on how the pipe happened to chunk
    // the parent's writes (the size of the first read sets the growth sequence), which
    // made a phase's live bytes differ by a few hundred bytes between identical runs on a
    // busy machine.
    let job: Job = {
        let mut input = String::new();
        io::stdin().read_to_string(&mut input)?;
        serde_json::from_str(&input)?
    };
    // From here on dhat sees every allocation; its file is written when `_profile` drops,
    // after the last phase.
    #[cfg(feature = "dhat-heap")]
    let _profile = job.dhat_file.as_deref().map(crate::measure::dhat::start);
    let mut stdout = io::stdout().lock();
    let mut phases_left = job.scenario.phases.len();
    run(&job.scenario, job.variant, |message| {
        // Between phases: outside every measured window.
        serde_json::to_writer(&mut stdout, &message)?;
        stdout.write_all(b"\n")?;
        stdout.flush()?;
        if matches!(message, Message::Phase(_)) {
            phases_left -= 1;
        }
        // After the last phase nothing is measured, and freeing the informer's store block
        // by block takes seconds for a large one (8 s for 100,000 pods): leave, and let
        // the kernel take the heap back whole. A dhat build stays: its profile is written
        // when `_profile` drops.
        #[cfg(not(feature = "dhat-heap"))]
        if phases_left == 0 {
            std::process::exit(0);
        }
        Ok(())
    })
}

/// Runs one variant of `scenario`, handing each result to `emit` as it is ready.
pub fn run(
    scenario: &Scenario,
    variant: usize,
    mut emit: impl FnMut(Message) -> io::Result<()>,
) -> anyhow::Result<()> {
    let config = &scenario.variants[variant].config;
    // No I/O driver: nothing here touches a socket. Time is virtual (paused): it moves only
    // when every task waits on a timer, so watch timeouts and bookmarks never fire in the
    // middle of a phase, however slow the machine, and counts repeat exactly (DESIGN.md
    // section 2). A phase that waits on nothing but a timer is stuck, and `PHASE_TIMEOUT`
    // says so at once. Durations in the report use the real clock.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()?;
    runtime.block_on(async {
        let setup = PhaseMeter::start();
        let server = {
            let _apiserver = alloc::enter(Component::ApiServer);
            let server = ApiServer::new(scenario.objects.clone());
            server.set_history_limit(scenario.apiserver.history_events);
            // A steady churn spreads changes over virtual time, so the dispatch budget
            // accrues as in a cluster: slow watchers are terminated as kube-apiserver
            // terminates them. Off otherwise, where a phase's changes arrive at one
            // instant (and the committed figures were made without it).
            if scenario.phases.iter().any(|p| p.churn.is_some()) {
                server.terminate_slow_watchers();
            }
            server
        };
        let client = transport::client(&server);
        emit(Message::Setup(SetupReport::new(&setup.finish())))?;

        let mut informer: Option<Informer> = None;
        for (i, phase) in scenario.phases.iter().enumerate() {
            let seed = phase_seed(scenario, i);
            let run = run_phase(
                &server,
                &client,
                config,
                scenario.timeline,
                &mut informer,
                phase,
                seed,
            );
            match run.await {
                Ok(report) => emit(Message::Phase(Box::new(report)))?,
                Err(e) => {
                    emit(Message::Failed(format!("{:#}", anyhow::Error::from(e))))?;
                    break;
                }
            }
        }
        if let Some(informer) = informer {
            informer.abort();
        }
        Ok(())
    })
}

async fn run_phase(
    server: &ApiServer,
    client: &kube::Client,
    config: &VariantConfig,
    timeline: Option<TimelineSpec>,
    informer: &mut Option<Informer>,
    phase: &Phase,
    seed: u64,
) -> Result<PhaseReport, PhaseError> {
    let requests = server.requests();
    if let Some(informer) = informer.as_ref() {
        informer.begin_phase();
    }
    // What the process holds before a settle phase, read before its window opens.
    let before = matches!(phase.action, PhaseAction::Settle { .. }).then(holding_now);
    let meter = PhaseMeter::start();
    // Allocates from the system allocator only: the phase's figures do not see it. The
    // heap-profiling build has no counting allocator to sample.
    let timeline = timeline
        .filter(|_| !crate::measure::dhat::BUILD)
        .map(Timeline::start);
    // The phase's changes are the apiserver's work, the informer's start the informer's;
    // the driver itself is the harness.
    let apiserver = alloc::enter(Component::ApiServer);
    if phase.disconnect {
        server.disconnect_watchers();
    }
    match phase.action {
        PhaseAction::List => {
            let _informer = alloc::enter(Component::Informer);
            *informer = Some(informer::spawn(client.clone(), server.spec().kind, config));
        }
        PhaseAction::Update { amount } => {
            server.update(amount, &phase.selector, seed);
        }
        PhaseAction::Delete { amount } => {
            server.delete(amount, &phase.selector, seed);
        }
        PhaseAction::Create { amount } => {
            let count = u32::try_from(amount.of(server.alive())).unwrap_or(u32::MAX);
            server.create(count);
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
        // Below, outside the apiserver's scope: settling is the process's, not the server's,
        // and the calibration's blocks are the informer's.
        PhaseAction::Settle { .. } | PhaseAction::Calibrate { .. } => {}
        // The resync timer is the informer's: no request, no change on the server.
        PhaseAction::Resync => {
            let _informer = alloc::enter(Component::Informer);
            if let Some(informer) = informer.as_ref() {
                informer.resync();
            }
        }
    }
    if phase.compact {
        server.compact();
    }
    drop(apiserver);
    if let PhaseAction::Settle { idle_ms, decay } = phase.action {
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
    if let PhaseAction::Calibrate { bytes, blocks } = phase.action {
        calibrate(bytes, blocks);
    }
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
    // An informer that has not got its initial state by the churn's end is left as it is:
    // the phase records how far it got.
    if synced {
        wait_caught_up(server, informer, phase).await?;
    }
    let measurement = meter.finish();
    let samples = timeline.map(Timeline::finish).unwrap_or_default();
    let settle = before.map(|before| SettleReport {
        before,
        after: Holding::of(&measurement),
    });
    let requests = server.requests().since(requests);
    // The oracle reads outside the measured window: what it allocates is freed before the
    // next phase starts.
    let truth = server.truth();
    let stores = informer.identities_each();
    let consistency = stores
        .iter()
        .map(|identities| Consistency::check(&truth, identities))
        .reduce(Consistency::and)
        .expect("at least one informer runs");
    let mut report = PhaseReport::new(
        phase,
        measurement,
        stores[0].len() as u64,
        server.alive(),
        requests,
        consistency,
    );
    report.settle = settle;
    report.samples = samples;
    report.events = informer.events_report();
    report.informer_synced = synced;
    Ok(report)
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
/// and its queues and handlers have nothing left. This reads the server, not the
/// informer's reflector, so it holds for any implementation. Handlers that pay a cost in
/// virtual time move the deadline on as long as they make progress.
async fn wait_caught_up(
    server: &ApiServer,
    informer: &mut Informer,
    phase: &Phase,
) -> Result<(), PhaseError> {
    let target = server.resource_version();
    let mut deadline = Instant::now() + PHASE_TIMEOUT;
    let mut handled = informer.handled();
    loop {
        tokio::time::sleep(SETTLE_TICK).await;
        let status = informer.status();
        if status.failed {
            return Err(PhaseError::Informer {
                phase: phase.name.clone(),
                source: informer.failure().await,
            });
        }
        if status.synced && server.watches_at(target) >= informer.count() && informer.quiet() {
            return Ok(());
        }
        let now_handled = informer.handled();
        if now_handled != handled {
            handled = now_handled;
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
fn holding_now() -> Holding {
    let jemalloc = jemalloc::read().ok();
    Holding {
        resident: jemalloc.map(|j| j.resident),
        retained: jemalloc.map(|j| j.retained),
        rss: crate::measure::rss::read().map(|r| r.current),
    }
}

/// The seed a phase picks its objects with: the scenario's seed and the phase's position.
fn phase_seed(scenario: &Scenario, phase: usize) -> u64 {
    scenario
        .objects
        .seed
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(phase as u64)
}
