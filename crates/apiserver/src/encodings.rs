//! One encoding per watch event, shared by every watcher that sends it, as kube-apiserver
//! has done since v1.17 (KEP-1152, "less object serializations"): the first watcher to
//! send an event encodes it, and the others send the same bytes.
//!
//! `serve` turns this on; `run` leaves it off: its one watcher per variant has nothing to
//! share, and its exact figures must not change with a cache's bookkeeping.

use measure::FixedState;
use std::collections::{HashMap, VecDeque};

use bytes::Bytes;

use super::form::{Form, Wire};
use super::state::EventKind;

/// Which line: the event's resourceVersion, the type the watcher sees it as (a selection
/// can turn an update into ADDED or DELETED), the form of its object and the wire.
type Key = (u64, EventKind, Form, Wire);

/// Encoded event lines of the newest events, at most `max_bytes` of them.
#[derive(Debug)]
pub(super) struct SharedEncodings {
    max_bytes: usize,
    bytes: usize,
    lines: HashMap<Key, Bytes, FixedState>,
    /// Keys from oldest to newest, for eviction.
    order: VecDeque<Key>,
}

impl SharedEncodings {
    pub(super) fn new(max_bytes: usize) -> SharedEncodings {
        SharedEncodings {
            max_bytes,
            bytes: 0,
            lines: HashMap::default(),
            order: VecDeque::new(),
        }
    }

    pub(super) fn get(&self, key: &Key) -> Option<Bytes> {
        self.lines.get(key).cloned()
    }

    /// Keeps `line` for the next watcher, dropping the oldest lines beyond the budget.
    pub(super) fn insert(&mut self, key: Key, line: Bytes) {
        if line.len() > self.max_bytes || self.lines.contains_key(&key) {
            return;
        }
        self.bytes += line.len();
        self.lines.insert(key, line);
        self.order.push_back(key);
        while self.bytes > self.max_bytes {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some(dropped) = self.lines.remove(&oldest) {
                self.bytes -= dropped.len();
            }
        }
    }

    /// Lines kept and their bytes.
    #[cfg(test)]
    fn held(&self) -> (usize, usize) {
        (self.lines.len(), self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_lines_within_its_budget() {
        let mut shared = SharedEncodings::new(10);
        let key = |rv| (rv, EventKind::Modified, Form::Full, Wire::Json);
        shared.insert(key(1), Bytes::from_static(b"1111"));
        shared.insert(key(2), Bytes::from_static(b"2222"));
        assert_eq!(shared.get(&key(1)).as_deref(), Some(&b"1111"[..]));
        shared.insert(key(3), Bytes::from_static(b"3333"));
        assert_eq!(shared.get(&key(1)), None, "the oldest goes first");
        assert_eq!(shared.held(), (2, 8));
        // Another view of the same event is another line.
        assert_eq!(
            shared.get(&(3, EventKind::Added, Form::Full, Wire::Json)),
            None
        );
        // A line larger than the budget is not kept, and evicts nothing.
        shared.insert(key(4), Bytes::from(vec![b'x'; 11]));
        assert_eq!(shared.held(), (2, 8));
    }
}
