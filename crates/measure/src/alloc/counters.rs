//! The allocator's counters: allocations, frees, reallocations, bytes requested, live
//! bytes and their peak, one set per component and thread. Plain `Cell`s, updated on every
//! allocation without a call or an atomic.

use std::cell::Cell;

/// One set of counters (of a component, or of the thread), as of one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AllocCounters {
    /// Calls to `alloc` and `alloc_zeroed`.
    pub allocs: u64,
    /// Calls to `dealloc`.
    pub deallocs: u64,
    /// Calls to `realloc`.
    pub reallocs: u64,
    /// Bytes requested by `alloc`, `alloc_zeroed` and by growing `realloc`s (the growth).
    pub alloc_bytes: u64,
    /// Bytes requested and not yet freed (never negative on the measured thread).
    pub live_bytes: u64,
    /// Highest `live_bytes` since the last [`reset_peak`](super::reset_peak).
    pub peak_live_bytes: u64,
}

pub(super) struct Counters {
    allocs: Cell<u64>,
    deallocs: Cell<u64>,
    reallocs: Cell<u64>,
    alloc_bytes: Cell<u64>,
    // Signed: a block allocated on another thread may be freed on this one.
    live: Cell<i64>,
    peak: Cell<i64>,
}

impl Counters {
    pub(super) const fn new() -> Counters {
        Counters {
            allocs: Cell::new(0),
            deallocs: Cell::new(0),
            reallocs: Cell::new(0),
            alloc_bytes: Cell::new(0),
            live: Cell::new(0),
            peak: Cell::new(0),
        }
    }

    pub(super) fn alloc(&self, size: usize) {
        self.allocs.set(self.allocs.get() + 1);
        self.alloc_bytes.set(self.alloc_bytes.get() + size as u64);
        self.grow_live(size as i64);
    }

    pub(super) fn dealloc(&self, size: usize) {
        self.deallocs.set(self.deallocs.get() + 1);
        self.live.set(self.live.get() - size as i64);
    }

    pub(super) fn realloc(&self, old: usize, new: usize) {
        self.reallocs.set(self.reallocs.get() + 1);
        if new > old {
            self.alloc_bytes
                .set(self.alloc_bytes.get() + (new - old) as u64);
        }
        self.grow_live(new as i64 - old as i64);
    }

    fn grow_live(&self, delta: i64) {
        let live = self.live.get() + delta;
        self.live.set(live);
        if live > self.peak.get() {
            self.peak.set(live);
        }
    }

    /// Starts a new peak window: the peak becomes the current live bytes.
    pub(super) fn reset_peak(&self) {
        self.peak.set(self.live.get());
    }

    pub(super) fn read(&self) -> AllocCounters {
        AllocCounters {
            allocs: self.allocs.get(),
            deallocs: self.deallocs.get(),
            reallocs: self.reallocs.get(),
            alloc_bytes: self.alloc_bytes.get(),
            live_bytes: self.live.get().max(0) as u64,
            peak_live_bytes: self.peak.get().max(0) as u64,
        }
    }
}
