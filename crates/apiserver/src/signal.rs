//! A number that moves, and the tasks waiting for it to: the newest resourceVersion (the
//! head), which wakes the watches waiting for the next change, and the count of the
//! server's disconnects, which ends every watch.
//!
//! Not a `tokio::sync::watch` channel: that one spreads its waiters over eight `Notify`s
//! chosen at random, so watches woken by one write run in a random order. With watches
//! that do different work, a phase's peak would then change from run to run: an informer's and
//! a plain watcher's woken by the head, and informers in different namespaces relisting
//! after a disconnect in either order. A single `Notify` wakes its waiters in the order
//! they began waiting, which the one-thread runtime makes the same every run.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::Notify;

/// The sending side: the server's handle.
#[derive(Debug)]
pub(crate) struct Signal {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    value: AtomicU64,
    moved: Notify,
}

/// A watch's view of the number: what it last saw.
#[derive(Debug)]
pub(crate) struct Subscription {
    shared: Arc<Shared>,
    seen: u64,
}

impl Signal {
    pub(crate) fn new(value: u64) -> Signal {
        Signal {
            shared: Arc::new(Shared {
                value: AtomicU64::new(value),
                moved: Notify::new(),
            }),
        }
    }

    /// Sets the number to `value` and wakes every waiting task; returns the number before.
    pub(crate) fn send_replace(&self, value: u64) -> u64 {
        let before = self.shared.value.swap(value, Ordering::AcqRel);
        self.shared.moved.notify_waiters();
        before
    }

    /// Moves the number on by one and wakes every waiting task.
    pub(crate) fn increment(&self) {
        self.shared.value.fetch_add(1, Ordering::AcqRel);
        self.shared.moved.notify_waiters();
    }

    pub(crate) fn subscribe(&self) -> Subscription {
        Subscription {
            shared: Arc::clone(&self.shared),
            seen: self.shared.value.load(Ordering::Acquire),
        }
    }
}

impl Subscription {
    /// Marks the current number seen.
    pub(crate) fn borrow_and_update(&mut self) -> u64 {
        self.seen = self.shared.value.load(Ordering::Acquire);
        self.seen
    }

    /// Whether the number has moved since it was last seen.
    pub(crate) fn has_changed(&self) -> bool {
        self.shared.value.load(Ordering::Acquire) != self.seen
    }

    /// Resolves when the number has moved since it was last seen (and marks it seen).
    pub(crate) async fn changed(&mut self) {
        let shared = Arc::clone(&self.shared);
        loop {
            let moved = shared.moved.notified();
            tokio::pin!(moved);
            // Registered before the number is read, so a move in between is not missed.
            moved.as_mut().enable();
            let now = shared.value.load(Ordering::Acquire);
            if now != self.seen {
                self.seen = now;
                return;
            }
            moved.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_receiver_wakes_on_a_move_made_after_it_last_looked() {
        let head = Signal::new(5);
        let mut receiver = head.subscribe();
        assert_eq!(receiver.borrow_and_update(), 5);
        assert_eq!(head.send_replace(7), 5);
        // The move happened before the wait began: it resolves at once.
        tokio::time::timeout(std::time::Duration::from_secs(1), receiver.changed())
            .await
            .expect("a move since the last look resolves");
        assert_eq!(receiver.seen, 7);
        // No move since: it waits.
        let waited =
            tokio::time::timeout(std::time::Duration::from_millis(20), receiver.changed()).await;
        assert!(waited.is_err());
    }

    #[tokio::test]
    async fn waiting_tasks_wake_in_the_order_they_began_to_wait() {
        // tokio's watch channel would wake these in a random order, this one in about
        // one round in four (120 of the 512 ways three waiters pick among its eight
        // `Notify`s): ten rounds leave a pass by chance below one in a million.
        for _ in 0..10 {
            let disconnects = Signal::new(0);
            let woken = Arc::new(std::sync::Mutex::new(Vec::new()));
            let tasks: Vec<_> = (0..3)
                .map(|i| {
                    let mut subscription = disconnects.subscribe();
                    let woken = Arc::clone(&woken);
                    tokio::spawn(async move {
                        subscription.changed().await;
                        woken.lock().unwrap().push(i);
                    })
                })
                .collect();
            // Let each task begin to wait, in the order spawned.
            tokio::task::yield_now().await;
            assert!(woken.lock().unwrap().is_empty());
            disconnects.increment();
            for task in tasks {
                task.await.unwrap();
            }
            assert_eq!(*woken.lock().unwrap(), [0, 1, 2]);
        }
    }

    #[test]
    fn an_increment_is_a_change_until_it_is_seen() {
        let disconnects = Signal::new(0);
        let mut subscription = disconnects.subscribe();
        assert!(!subscription.has_changed());
        disconnects.increment();
        assert!(subscription.has_changed());
        assert_eq!(subscription.borrow_and_update(), 1);
        assert!(!subscription.has_changed());
    }
}
