//! The newest resourceVersion and the watches waiting for it to move.
//!
//! Not a `tokio::sync::watch` channel: that one spreads its waiters over eight `Notify`s
//! chosen at random, so watches woken by one write run in a random order, and with
//! watches that do different work (an informer's and a plain watcher's) a phase's peak
//! changed from run to run. A single `Notify` wakes its waiters in the order they began
//! waiting, which the one-thread runtime makes the same every run.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::Notify;

/// The sending side: the server's handle.
#[derive(Debug)]
pub(super) struct Head {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    rv: AtomicU64,
    moved: Notify,
}

/// A watch's view of the head: what it last saw.
#[derive(Debug)]
pub(super) struct HeadReceiver {
    shared: Arc<Shared>,
    seen: u64,
}

impl Head {
    pub(super) fn new(rv: u64) -> Head {
        Head {
            shared: Arc::new(Shared {
                rv: AtomicU64::new(rv),
                moved: Notify::new(),
            }),
        }
    }

    /// Sets the head to `rv` and wakes every waiting watch; returns the head before.
    pub(super) fn send_replace(&self, rv: u64) -> u64 {
        let before = self.shared.rv.swap(rv, Ordering::AcqRel);
        self.shared.moved.notify_waiters();
        before
    }

    pub(super) fn subscribe(&self) -> HeadReceiver {
        HeadReceiver {
            shared: Arc::clone(&self.shared),
            seen: self.shared.rv.load(Ordering::Acquire),
        }
    }
}

impl HeadReceiver {
    /// Marks the current head seen.
    pub(super) fn borrow_and_update(&mut self) -> u64 {
        self.seen = self.shared.rv.load(Ordering::Acquire);
        self.seen
    }

    /// Resolves when the head has moved since it was last seen (and marks it seen).
    pub(super) async fn changed(&mut self) {
        let shared = Arc::clone(&self.shared);
        loop {
            let moved = shared.moved.notified();
            tokio::pin!(moved);
            // Registered before the head is read, so a move in between is not missed.
            moved.as_mut().enable();
            let now = shared.rv.load(Ordering::Acquire);
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
        let head = Head::new(5);
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
}
