//! When a program has caught up with the server, without a model of it inside the run:
//! the server has sent every event up to its newest resourceVersion to the program's
//! watches, and then either the program's status says its stores hold what the server
//! holds (the status protocol), or it has been quiet for a while (without it). Meanwhile a
//! sampler reads the program's heap and RSS.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
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

/// How often the sampler reads the program's heap within a phase: each read costs a Go
/// program a heap profile in text (some thousands of allocations), so not too often.
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
pub(super) async fn caught_up(
    upstream: &Upstream,
    program: &mut Program,
    probe: &Probe,
    subject: &Subject,
    scope: &Scope,
    sampling: &SamplingCost,
) -> anyhow::Result<Caught> {
    let super::upstream::Truth {
        objects: truth,
        target,
    } = upstream.truth(scope).await?;
    let newest = truth.iter().map(|t| t.resource_version).max().unwrap_or(0);
    let timeout = Duration::from_millis(subject.timeout_ms);
    let quiet = Duration::from_millis(subject.quiet_ms);
    let deadline = Instant::now() + timeout;
    // A request in flight at the deadline has a moment more, so that a slow answer fails
    // the phase as not caught up; one that never comes, just after it.
    let probe = &probe.until(deadline + probe::LATE);
    let limit = Limit {
        sampling,
        deadline,
        timeout,
    };
    // The program's state, and since when it has not changed, counted from no earlier
    // than the moment the server had sent everything: a program that relists (its
    // status unchanged meanwhile) is not quiet while it reads the LIST.
    let mut last: Option<(Option<Status>, Instant)> = None;
    let mut was_sent = false;
    loop {
        if let Some(status) = program.exited() {
            anyhow::bail!("{}", program.describe_exit(status));
        }
        let status = probe.status().await.map_err(anyhow::Error::msg)?;
        let watches = status.as_ref().map_or(1, |s| s.stores.len().max(1));
        let sent = upstream.watches_at(target) >= watches;
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
                    quiet_for(program, SETTLE, &limit).await?;
                    let stores = probe.stores().await.map_err(anyhow::Error::msg)?;
                    let consistent = stores
                        .iter()
                        .all(|s| Consistency::check(&truth, s).consistent);
                    if consistent || now - unchanged_since >= quiet {
                        return Ok(Caught {
                            status: final_status(probe, status).await,
                            stores: Some(stores),
                            truth,
                        });
                    }
                }
                // Synced, but its stores differ from the server's and stay so: the phase
                // ends, and the oracle says how they differ.
                Some(s) if s.synced && now - unchanged_since >= quiet => {
                    quiet_for(program, SETTLE, &limit).await?;
                    let stores = probe.stores().await.map_err(anyhow::Error::msg)?;
                    return Ok(Caught {
                        status: final_status(probe, status).await,
                        stores: Some(stores),
                        truth,
                    });
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

/// What bounds a wait for a quiet program: the sampler's cost, taken out of its CPU time,
/// and the phase's deadline.
struct Limit<'a> {
    sampling: &'a SamplingCost,
    deadline: Instant,
    timeout: Duration,
}

/// Waits until the program has used at most a fiftieth of `window` of CPU over a whole
/// `window` (one clock tick at least), not counting what answering the sampler cost it:
/// nothing left to do. (A heap profile in text costs a large Go program some milliseconds;
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
        let sampled_before = limit.sampling.cpu_ms();
        tokio::time::sleep(window).await;
        if let Some(status) = program.exited() {
            anyhow::bail!("{}", program.describe_exit(status));
        }
        let after = program.read(false);
        let sampled = limit.sampling.cpu_ms() - sampled_before;
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
                 {used} ms of CPU besides answering the heap samples, {allowed} ms allowed; a \
                 program that is never idle needs the status protocol (docs/subjects.md)",
                humantime::format_duration(limit.timeout),
                humantime::format_duration(window),
            );
        }
    }
}

/// The CPU time a program spent answering the sampler's heap reads, in ms: its CPU time
/// read before and after each read, summed (to clock ticks; a tick's work of the program's
/// own that falls within a read counts as the sampler's).
#[derive(Debug, Clone, Default)]
pub(super) struct SamplingCost(Arc<AtomicU64>);

impl SamplingCost {
    pub(super) fn cpu_ms(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    fn add(&self, ms: u64) {
        self.0.fetch_add(ms, Ordering::Relaxed);
    }
}

/// The samples of one phase.
#[derive(Debug, Default)]
pub(super) struct Samples {
    /// How many were taken.
    pub count: u64,
    /// The highest HeapAlloc among them (pprof only).
    pub heap_peak: Option<Bytes>,
    /// The CPU time the program spent answering them.
    pub cpu_ms: u64,
}

/// Reads the program's heap every [`SAMPLE_EVERY`] until finished.
pub(super) struct Sampler {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Samples>,
    cost: SamplingCost,
}

impl Sampler {
    /// Samples the program whose process group is `group`.
    pub(super) fn start(group: Arc<Group>, probe: Probe) -> Sampler {
        let (stop, mut stopped) = tokio::sync::oneshot::channel();
        let cost = SamplingCost::default();
        let counted = cost.clone();
        let task = tokio::spawn(async move {
            let mut samples = Samples::default();
            let mut tick = tokio::time::interval(SAMPLE_EVERY);
            loop {
                tokio::select! {
                    _ = &mut stopped => return samples,
                    _ = tick.tick() => {}
                }
                let Some(before) = group.read(false) else {
                    return samples;
                };
                samples.count += 1;
                let heap = probe.heap(false).await;
                if let Some(after) = group.read(false) {
                    counted.add(after.total.cpu_ms.saturating_sub(before.total.cpu_ms));
                }
                if let Ok(Some(heap)) = heap {
                    let peak = samples.heap_peak.get_or_insert(heap.stats.heap_alloc);
                    *peak = (*peak).max(heap.stats.heap_alloc);
                }
            }
        });
        Sampler { stop, task, cost }
    }

    /// What answering this sampler has cost the program so far, as it grows.
    pub(super) fn cost(&self) -> SamplingCost {
        self.cost.clone()
    }

    pub(super) async fn finish(self) -> Samples {
        let _ = self.stop.send(());
        let samples = self.task.await.unwrap_or_default();
        Samples {
            cpu_ms: self.cost.cpu_ms(),
            ..samples
        }
    }
}
