//! When a program has caught up with the server, without a model of it inside the run:
//! the server has sent every event up to its newest resourceVersion to the program's
//! watches, and then either the program's status says its stores hold what the server
//! holds (the status protocol), or it has been quiet for a while (without it). Until the
//! server has sent everything, the program is not asked: each question costs it CPU time.
//! Where its runtime does not report its collections, a sampler reads its heap meanwhile.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::probe::{self, Probe, Status};
use super::program::Program;
use super::upstream::Upstream;
use k8s::{Identity, TruthEntry};
use measure::outside::Group;
use report::Consistency;
use scenario::{Scope, Subject};
use units::Bytes;

/// How often the wait looks at the server and the program.
pub(super) const POLL: Duration = Duration::from_millis(20);

/// How often the sampler reads the program's heap within a phase, where its runtime does
/// not report its collections: each read costs a Go program a heap profile in text (some
/// thousands of allocations, and at 100,000 pods 40% of its CPU time), so not too often.
const SAMPLE_EVERY: Duration = Duration::from_millis(200);

/// Once the status protocol says the program has caught up, how long its CPU must then
/// stay quiet: client-go, for one, updates its store from a queue after the reflector has
/// read an event, and the heap is read after the last of that work.
const SETTLE: Duration = Duration::from_millis(200);

/// What the wait found.
#[derive(Debug)]
pub(super) struct Caught {
    /// The program's last status (status protocol).
    pub status: Option<Status>,
    /// Its stores, read at the end (status protocol).
    pub stores: Option<Vec<Vec<Identity>>>,
    /// What the server held.
    pub truth: Vec<TruthEntry>,
}

/// Waits until the program has caught up with `upstream`; fails when it exits or takes
/// longer than the subject's `timeout`. Against a real server the run only reads, a watch
/// open since the last cut counts as sent everything (others write there; no version is
/// the last).
/// Requests get [`probe::LATE`] past the deadline; "unchanged since" counts from no earlier
/// than when the server had sent everything (a relisting program is not quiet).
pub(super) async fn caught_up(
    upstream: &Upstream,
    program: &mut Program,
    probe: &Probe,
    (subject, scope): (&Subject, &Scope),
    known: Option<&Status>,
) -> anyhow::Result<Caught> {
    let super::upstream::Truth {
        objects: truth,
        target,
    } = upstream.truth(scope).await?;
    let newest = truth.iter().map(|t| t.resource_version).max().unwrap_or(0);
    let timeout = Duration::from_millis(subject.timeout_ms);
    let quiet = Duration::from_millis(subject.quiet_ms);
    let deadline = Instant::now() + timeout;
    let probe = &probe.until(deadline + probe::LATE);
    let limit = Limit {
        probe,
        deadline,
        timeout,
    };
    let mut last: Option<(Option<Status>, Instant)> = None;
    let mut was_sent = false;
    let mut asking = Asking::new(known);
    loop {
        if let Some(status) = program.exited() {
            anyhow::bail!("{}", program.describe_exit(status));
        }
        // A busy program is still asked every second, and then the deadline is looked at.
        let Some(sent) = asking.sent(upstream, target, program, probe).await? else {
            tokio::time::sleep(POLL).await;
            continue;
        };
        let status = asking.status.clone();
        let watches = asking.watches();
        let now = Instant::now();
        let unchanged_since = match &last {
            Some((previous, since)) if *previous == status && was_sent == sent => *since,
            _ => now,
        };
        was_sent = sent;
        last = Some((status.clone(), unchanged_since));
        if sent {
            match &status {
                Some(s) if s.synced && matches_truth(s, truth.len() as u64, newest) => {
                    let stores = stores_when_quiet(program, probe, &limit).await?;
                    let consistent = stores
                        .iter()
                        .all(|s| Consistency::check(&truth, s).consistent);
                    if consistent || now - unchanged_since >= quiet {
                        return Ok(caught(probe, status, stores, truth).await);
                    }
                }
                // Synced, but its stores differ from the server's and stay so: the phase
                // ends, and the oracle says how they differ.
                Some(s) if s.synced && now - unchanged_since >= quiet => {
                    let stores = stores_when_quiet(program, probe, &limit).await?;
                    return Ok(caught(probe, status, stores, truth).await);
                }
                Some(_) => {}
                None => {
                    quiet_for(program, quiet, &limit).await?;
                    return Ok(Caught {
                        status: None,
                        stores: None,
                        truth,
                    });
                }
            }
        }
        if now >= deadline {
            return Err(not_caught_up(upstream, timeout, target, watches, &status));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// When the wait asks the program for its status: not until the server has sent
/// everything to as many watches as it had stores when last asked, and then when it has
/// been idle a moment or has not been asked for a while. A question while it works costs
/// it little, but what it does meanwhile counts as the question's (`observer_cpu_ms`).
struct Asking {
    /// Its last status (`None` without the status protocol).
    status: Option<Status>,
    activity: Activity,
    asked: Instant,
}

impl Asking {
    /// Starting from `known`, its status when the previous phase ended.
    fn new(known: Option<&Status>) -> Asking {
        Asking {
            status: known.cloned(),
            activity: Activity::default(),
            asked: Instant::now(),
        }
    }

    /// How many watches it has: one per store (one without the protocol).
    fn watches(&self) -> usize {
        self.status.as_ref().map_or(1, |s| s.stores.len().max(1))
    }

    /// Whether the server has sent everything up to `target` to every watch of the
    /// program, which is asked anew when it may be so (it may have more watches now);
    /// `None` when it is so but the program is busy and was asked a moment ago.
    async fn sent(
        &mut self,
        upstream: &Upstream,
        target: Option<u64>,
        program: &Program,
        probe: &Probe,
    ) -> anyhow::Result<Option<bool>> {
        let idle = self.activity.idle(program);
        if upstream.watches_at(target) < self.watches() {
            return Ok(Some(false));
        }
        if !idle && self.asked.elapsed() < ASK_A_BUSY_PROGRAM_EVERY {
            return Ok(None);
        }
        self.status = probe.status().await.map_err(anyhow::Error::msg)?;
        self.asked = Instant::now();
        Ok(Some(upstream.watches_at(target) >= self.watches()))
    }
}

/// How often a program that has not been idle is asked for its status, once the server
/// has sent everything.
const ASK_A_BUSY_PROGRAM_EVERY: Duration = Duration::from_secs(1);

/// How long a program must have used at most one clock tick of CPU to be idle enough to
/// ask.
const IDLE: Duration = Duration::from_millis(100);

/// The program's CPU time over the last [`IDLE`], from readings of its /proc entries
/// (which cost the program nothing).
#[derive(Debug, Default)]
struct Activity {
    readings: std::collections::VecDeque<(Instant, u64)>,
}

impl Activity {
    /// Whether the program has used at most 10 ms of CPU (a clock tick) over the last
    /// [`IDLE`] or more; false until it has been watched that long.
    fn idle(&mut self, program: &Program) -> bool {
        let Some(now) = program.read(false) else {
            return false;
        };
        let at = Instant::now();
        self.readings.push_back((at, now.total.cpu_ms));
        // Keep the newest reading at least IDLE old as the base.
        while self.readings.len() > 1 && at - self.readings[1].0 >= IDLE {
            self.readings.pop_front();
        }
        let (since, cpu) = self.readings[0];
        at - since >= IDLE && now.total.cpu_ms.saturating_sub(cpu) <= 10
    }
}

/// The program's stores, read once its CPU has been quiet for [`SETTLE`].
async fn stores_when_quiet(
    program: &mut Program,
    probe: &Probe,
    limit: &Limit<'_>,
) -> anyhow::Result<Vec<Vec<Identity>>> {
    quiet_for(program, SETTLE, limit).await?;
    probe.stores().await.map_err(anyhow::Error::msg)
}

/// What the wait found: the program's `stores` against `truth`, with its status once
/// the wait is over.
async fn caught(
    probe: &Probe,
    status: Option<Status>,
    stores: Vec<Vec<Identity>>,
    truth: Vec<TruthEntry>,
) -> Caught {
    Caught {
        status: final_status(probe, status).await,
        stores: Some(stores),
        truth,
    }
}

/// Why a program that did not catch up within `timeout` failed its phase.
fn not_caught_up(
    upstream: &Upstream,
    timeout: Duration,
    target: Option<u64>,
    watches: usize,
    status: &Option<Status>,
) -> anyhow::Error {
    anyhow::anyhow!(
        "the program did not catch up within {} (`timeout`): the server is at \
         resourceVersion {}, {} of {watches} watch(es) sent everything; {}",
        humantime::format_duration(timeout),
        target.map_or_else(|| "(unknown)".to_owned(), |t| t.to_string()),
        upstream.watches_at(target),
        match status {
            Some(s) => format!("its status: synced {}, stores {:?}", s.synced, s.stores),
            None => "it serves no status".to_owned(),
        }
    )
}

/// The program's status once the wait is over, for the phase's figures (its handlers may
/// have gone on after the status that ended the wait); the earlier one if it cannot be read.
async fn final_status(probe: &Probe, earlier: Option<Status>) -> Option<Status> {
    match probe.status().await {
        Ok(Some(status)) => Some(status),
        _ => earlier,
    }
}

/// Whether a status says every store holds `count` objects and has applied `newest`.
fn matches_truth(status: &Status, count: u64, newest: u64) -> bool {
    status.stores.iter().all(|store| {
        let applied = store
            .resource_version
            .as_deref()
            .and_then(|rv| rv.parse::<u64>().ok());
        store.objects == count && applied.is_none_or(|rv| rv >= newest)
    })
}

/// What bounds a wait for a quiet program: what answering the run's requests cost it,
/// taken out of its CPU time, and the phase's deadline.
struct Limit<'a> {
    probe: &'a Probe,
    deadline: Instant,
    timeout: Duration,
}

/// Waits until the program has used at most a fiftieth of `window` of CPU over a whole
/// `window` (one clock tick at least), not counting what answering the run's requests
/// cost it: nothing left to do. (A heap profile in text costs a large Go program some milliseconds;
/// five a second would otherwise keep it from ever looking quiet.) A program still busy
/// at the deadline fails the phase.
async fn quiet_for(
    program: &mut Program,
    window: Duration,
    limit: &Limit<'_>,
) -> anyhow::Result<()> {
    let allowed = (window.as_millis() as u64 / 50).max(10);
    loop {
        let before = program.read(false);
        let sampled_before = limit.probe.observer_cpu_ms();
        tokio::time::sleep(window).await;
        if let Some(status) = program.exited() {
            anyhow::bail!("{}", program.describe_exit(status));
        }
        let after = program.read(false);
        let sampled = limit.probe.observer_cpu_ms() - sampled_before;
        let used = match before.zip(after) {
            Some((b, a)) => a
                .total
                .cpu_ms
                .saturating_sub(b.total.cpu_ms)
                .saturating_sub(sampled),
            None => anyhow::bail!("the program's /proc entry is gone"),
        };
        if used <= allowed {
            return Ok(());
        }
        if Instant::now() >= limit.deadline {
            anyhow::bail!(
                "the program did not go quiet within {} (`timeout`): in the last {} it used \
                 {used} ms of CPU besides answering the run's requests, {allowed} ms allowed; a \
                 program that is never idle needs the status protocol (docs/subjects.md)",
                humantime::format_duration(limit.timeout),
                humantime::format_duration(window),
            );
        }
    }
}

/// The heap samples of one phase.
#[derive(Debug, Default)]
pub(super) struct Samples {
    /// How many were taken.
    pub count: u64,
    /// The highest HeapAlloc among them.
    pub heap_peak: Option<Bytes>,
}

/// Reads the program's heap every [`SAMPLE_EVERY`] until finished: what its CPU time
/// answering them cost goes to the probe's observer.
pub(super) struct Sampler {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Samples>,
}

impl Sampler {
    /// Samples the program `probe` reads while its process group is there.
    pub(super) fn start(group: Arc<Group>, probe: Probe) -> Sampler {
        let (stop, mut stopped) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(async move {
            let mut samples = Samples::default();
            let mut tick = tokio::time::interval(SAMPLE_EVERY);
            loop {
                tokio::select! {
                    _ = &mut stopped => return samples,
                    _ = tick.tick() => {}
                }
                if group.read(false).is_none() {
                    return samples;
                }
                samples.count += 1;
                if let Ok(Some(heap)) = probe.heap(false).await {
                    let peak = samples.heap_peak.get_or_insert(heap.stats.heap_alloc);
                    *peak = (*peak).max(heap.stats.heap_alloc);
                }
            }
        });
        Sampler { stop, task }
    }

    pub(super) async fn finish(self) -> Samples {
        let _ = self.stop.send(());
        self.task.await.unwrap_or_default()
    }
}
