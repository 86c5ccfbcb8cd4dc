//! The child side: one variant, one process, one `current_thread` runtime.
//!
//! The apiserver, the informer and the phase driver share the runtime's one thread, so
//! every run of the same build schedules the same way and the allocation counts repeat
//! exactly. Results go to stdout as JSON lines, one per completed step, so a crash loses
//! only the phase it happened in.

use std::io::{self, Read, Write};

use super::message::{Job, Message};
use super::phase::{Driver, phase_seed};
use super::watchers::Watchers;
use apiserver::{ApiServer, SHARED_ENCODING_BYTES, transport};
use informer::Informer;
use measure::{Component, PhaseMeter, alloc};
use report::SetupReport;
use scenario::Scenario;

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
    let _profile = job.dhat_file.as_deref().map(measure::dhat::start);
    let mut stdout = io::stdout().lock();
    let mut phases_left = job.scenario.phases.len();
    let external = job.scenario.variants[job.variant].subject.is_some();
    // A program of its own to stop, or a real server's namespace to remove, after the
    // last phase: those variants end on their own.
    #[cfg(not(feature = "dhat-heap"))]
    let leave_after_last = !external && job.cluster.is_none();
    let emit = |message: Message| {
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
        if phases_left == 0 && leave_after_last {
            std::process::exit(0);
        }
        Ok(())
    };
    if external {
        let scratch = job
            .scratch
            .as_deref()
            .ok_or_else(|| anyhow::anyhow!("an external variant's job names no scratch folder"))?;
        super::external::run(
            &job.scenario,
            job.variant,
            scratch,
            job.profiles.as_deref(),
            job.cluster.as_ref(),
            emit,
        )
    } else if let Some(cluster) = &job.cluster {
        super::cluster::run(
            &job.scenario,
            job.variant,
            cluster,
            job.profiles.as_deref(),
            emit,
        )
    } else {
        run(&job.scenario, job.variant, emit)
    }
}

/// Runs one variant of `scenario`, handing each result to `emit` as it is ready.
pub fn run(
    scenario: &Scenario,
    variant: usize,
    mut emit: impl FnMut(Message) -> io::Result<()>,
) -> anyhow::Result<()> {
    let side = scenario.variants[variant].server;
    let config = &scenario.variants[variant].config;
    // No I/O driver: nothing here touches a socket. Time is virtual (paused): it moves only
    // when every task waits on a timer, so watch timeouts and bookmarks never fire in the
    // middle of a phase, however slow the machine, and counts repeat exactly (tokio's
    // paused clock, `start_paused`). A phase that waits on nothing but a timer is stuck, and `PHASE_TIMEOUT`
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
            if side.share_encodings {
                server.share_encodings(SHARED_ENCODING_BYTES);
            }
            server
        };
        let client = transport::client(&server);
        let watch_client =
            (side.watchers > 0).then(|| transport::client_of(&server, Component::Harness));
        emit(Message::Setup(Box::new(SetupReport::new(&setup.finish()))))?;

        let mut informer: Option<Informer> = None;
        let mut watchers = Watchers::default();
        for (i, phase) in scenario.phases.iter().enumerate() {
            let seed = phase_seed(scenario, i);
            let driver = Driver {
                server: &server,
                client: &client,
                config,
                scope: &scenario.variants[variant].scope,
                timeline: scenario.timeline,
                watchers: watch_client.as_ref().map(|c| (c, side.watchers)),
            };
            let run = driver.run(&mut informer, &mut watchers, phase, seed);
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
        watchers.abort();
        Ok(())
    })
}
