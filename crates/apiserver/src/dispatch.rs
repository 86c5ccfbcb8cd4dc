//! Slow watchers, as kube-apiserver's cacher treats them.
//!
//! Each watcher has a bounded buffer: the events between what it has been handed and the
//! newest resourceVersion. When a change leaves watchers with full buffers, the dispatcher
//! waits for them at most the available dispatch budget (which starts at 0, refills 50 ms
//! per second and caps at 100 ms), then terminates every watcher still blocked: its stream
//! ends and the client must watch again. A big `resourceVersion=0` watch whose consumer is
//! slower than the event rate can therefore never finish its initial events.
//!
//! One simplification: kube-apiserver blocks every watcher while it waits for a slow one;
//! here other watchers keep reading from the shared history meanwhile.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// Events a watcher may have outstanding before it blocks the dispatcher.
pub const WATCHER_BUFFER_EVENTS: u64 = 100;
/// Most the dispatcher waits for blocked watchers at once.
const MAX_BUDGET: Duration = Duration::from_millis(100);
/// Budget regained per second of (virtual) time.
const BUDGET_REFILL_PER_SECOND: Duration = Duration::from_millis(50);

/// One watcher as the dispatcher sees it.
#[derive(Debug, Default)]
pub struct WatcherSlot {
    /// The resourceVersion of the last event handed to the client's connection.
    delivered: AtomicU64,
    terminated: AtomicBool,
    /// The watch has sent its initial events (if it had any) and now follows the history.
    following: AtomicBool,
}

impl WatcherSlot {
    /// Records that events up to `rv` have been handed over.
    pub fn delivered(&self, rv: u64) {
        self.delivered.store(rv, Ordering::Relaxed);
    }

    /// Records that the initial events are out: from here on the watch follows the history.
    pub fn following(&self) {
        self.following.store(true, Ordering::Relaxed);
    }

    /// Whether the dispatcher has terminated this watcher.
    pub fn is_terminated(&self) -> bool {
        self.terminated.load(Ordering::Relaxed)
    }
}

/// The dispatcher's state: registered watchers and the budget.
#[derive(Debug)]
pub struct Dispatcher {
    watchers: Mutex<Vec<Weak<WatcherSlot>>>,
    budget: Mutex<Budget>,
    /// Woken whenever a watcher hands over an event.
    progress: Notify,
    /// Woken to end the streams of terminated watchers.
    terminations: Notify,
}

#[derive(Debug)]
struct Budget {
    available: Duration,
    refilled_at: Instant,
}

impl Default for Dispatcher {
    fn default() -> Dispatcher {
        Dispatcher {
            watchers: Mutex::new(Vec::new()),
            // Empty when the server starts, as in kube-apiserver.
            budget: Mutex::new(Budget {
                available: Duration::ZERO,
                refilled_at: Instant::now(),
            }),
            progress: Notify::new(),
            terminations: Notify::new(),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Dispatcher {
    /// Registers a watcher positioned at `rv`.
    pub fn register(&self, rv: u64) -> Arc<WatcherSlot> {
        let slot = Arc::new(WatcherSlot::default());
        slot.delivered(rv);
        let mut watchers = lock(&self.watchers);
        watchers.retain(|w| w.strong_count() > 0);
        watchers.push(Arc::downgrade(&slot));
        slot
    }

    /// The furthest resourceVersion any open watch that follows the history has handed to
    /// its client; `None` when no such watch is open. The runner's caught-up check.
    pub fn position(&self) -> Option<u64> {
        lock(&self.watchers)
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|w| !w.is_terminated() && w.following.load(Ordering::Relaxed))
            .map(|w| w.delivered.load(Ordering::Relaxed))
            .max()
    }

    /// How many open watches that follow the history have handed their client everything
    /// up to `rv`.
    pub fn following_at(&self, rv: u64) -> usize {
        lock(&self.watchers)
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|w| !w.is_terminated() && w.following.load(Ordering::Relaxed))
            .filter(|w| w.delivered.load(Ordering::Relaxed) >= rv)
            .count()
    }

    /// Tells the dispatcher a watcher made progress.
    pub fn progressed(&self) {
        self.progress.notify_waiters();
    }

    /// Resolves when some watcher may have been terminated.
    pub async fn terminated(&self) {
        self.terminations.notified().await;
    }

    /// Watchers whose outstanding events exceed their buffer, given how many events lie
    /// after a resourceVersion.
    fn blocked(&self, outstanding: &impl Fn(u64) -> u64) -> Vec<Arc<WatcherSlot>> {
        lock(&self.watchers)
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|w| !w.is_terminated())
            .filter(|w| outstanding(w.delivered.load(Ordering::Relaxed)) > WATCHER_BUFFER_EVENTS)
            .collect()
    }

    fn take_budget(&self) -> Duration {
        let mut b = lock(&self.budget);
        let now = Instant::now();
        let refill = BUDGET_REFILL_PER_SECOND.mul_f64((now - b.refilled_at).as_secs_f64());
        b.available = (b.available + refill).min(MAX_BUDGET);
        b.refilled_at = now;
        std::mem::take(&mut b.available)
    }

    fn return_budget(&self, unused: Duration) {
        let mut b = lock(&self.budget);
        b.available = (b.available + unused).min(MAX_BUDGET);
    }

    /// After a change: waits for blocked watchers at most the available budget, then
    /// terminates those still blocked. Returns how many it terminated.
    pub async fn dispatch(&self, outstanding: impl Fn(u64) -> u64) -> u64 {
        if self.blocked(&outstanding).is_empty() {
            return 0;
        }
        let budget = self.take_budget();
        let started = Instant::now();
        let drained = tokio::time::timeout(budget, async {
            loop {
                let progress = self.progress.notified();
                if self.blocked(&outstanding).is_empty() {
                    return;
                }
                progress.await;
            }
        })
        .await;
        self.return_budget(budget.saturating_sub(started.elapsed()));
        if drained.is_ok() {
            return 0;
        }
        let still = self.blocked(&outstanding);
        for w in &still {
            w.terminated.store(true, Ordering::Relaxed);
        }
        self.terminations.notify_waiters();
        still.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn budget_starts_empty_refills_and_caps() {
        let d = Dispatcher::default();
        assert_eq!(d.take_budget(), Duration::ZERO);
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(d.take_budget(), Duration::from_millis(50));
        tokio::time::advance(Duration::from_secs(10)).await;
        assert_eq!(d.take_budget(), MAX_BUDGET);
        d.return_budget(Duration::from_millis(30));
        assert_eq!(d.take_budget(), Duration::from_millis(30));
    }

    #[tokio::test(start_paused = true)]
    async fn blocked_watcher_is_terminated_when_the_budget_runs_out() {
        let d = Dispatcher::default();
        let slow = d.register(0);
        let fast = d.register(0);
        fast.delivered(1_000);
        tokio::time::advance(Duration::from_secs(5)).await;
        // 1,000 events after version 0; the fast watcher has them all.
        let outstanding = |rv: u64| 1_000u64.saturating_sub(rv);
        let started = Instant::now();
        assert_eq!(d.dispatch(outstanding).await, 1);
        assert_eq!(started.elapsed(), MAX_BUDGET, "it waited the whole budget");
        assert!(slow.is_terminated());
        assert!(!fast.is_terminated());
    }
}
