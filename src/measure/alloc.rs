//! The global allocator: jemalloc behind a thin counting wrapper.
//!
//! Counts live in thread-locals: free to update (DESIGN.md section 7 measured global
//! atomics at 5-7 ns per allocation) and, because a variant's child process runs on one
//! `current_thread` runtime, they see every allocation the informer, the apiserver and the
//! harness make. Allocations on other threads are counted on those threads and not read.
//!
//! This is the crate's one `unsafe` module besides the jemalloc FFI call in
//! [`super::jemalloc`]: implementing [`GlobalAlloc`] is unsafe by definition. Every method
//! forwards to [`Jemalloc`] with the caller's arguments unchanged; the counters only look at
//! sizes and never touch the memory.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;

use tikv_jemallocator::Jemalloc;

/// jemalloc, counting every allocation, deallocation and reallocation of the calling thread.
///
/// Install it in the binary with `#[global_allocator]`. `alloc_zeroed` and `realloc` are
/// forwarded as themselves, not rebuilt from `alloc` + copy, so zeroed pages and in-place
/// growth behave exactly as under plain jemalloc.
#[derive(Debug, Default)]
pub struct CountingJemalloc;

/// The counters of one thread, as of one instant.
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
    /// Highest `live_bytes` since the last [`reset_peak`].
    pub peak_live_bytes: u64,
}

struct Counters {
    allocs: Cell<u64>,
    deallocs: Cell<u64>,
    reallocs: Cell<u64>,
    alloc_bytes: Cell<u64>,
    // Signed: a block allocated on another thread may be freed on this one.
    live: Cell<i64>,
    peak: Cell<i64>,
}

thread_local! {
    // `const` with no destructor: reading it never allocates nor registers a TLS
    // destructor, so it is safe to use from inside the allocator.
    static COUNTERS: Counters = const {
        Counters {
            allocs: Cell::new(0),
            deallocs: Cell::new(0),
            reallocs: Cell::new(0),
            alloc_bytes: Cell::new(0),
            live: Cell::new(0),
            peak: Cell::new(0),
        }
    };
}

fn on_alloc(size: usize) {
    COUNTERS.with(|c| {
        c.allocs.set(c.allocs.get() + 1);
        c.alloc_bytes.set(c.alloc_bytes.get() + size as u64);
        grow_live(c, size as i64);
    });
}

fn grow_live(c: &Counters, delta: i64) {
    let live = c.live.get() + delta;
    c.live.set(live);
    if live > c.peak.get() {
        c.peak.set(live);
    }
}

// SAFETY: every method forwards to `Jemalloc`, a correct `GlobalAlloc`, with its arguments
// unchanged and returns its result unchanged; the bookkeeping does not allocate.
unsafe impl GlobalAlloc for CountingJemalloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which we pass on.
        let ptr = unsafe { Jemalloc.alloc(layout) };
        if !ptr.is_null() {
            on_alloc(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { Jemalloc.alloc_zeroed(layout) };
        if !ptr.is_null() {
            on_alloc(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller guarantees `ptr` came from this allocator with `layout`.
        unsafe { Jemalloc.dealloc(ptr, layout) };
        COUNTERS.with(|c| {
            c.deallocs.set(c.deallocs.get() + 1);
            c.live.set(c.live.get() - layout.size() as i64);
        });
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract, which we pass on.
        let new = unsafe { Jemalloc.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            COUNTERS.with(|c| {
                c.reallocs.set(c.reallocs.get() + 1);
                let old = layout.size();
                if new_size > old {
                    c.alloc_bytes
                        .set(c.alloc_bytes.get() + (new_size - old) as u64);
                }
                grow_live(c, new_size as i64 - old as i64);
            });
        }
        new
    }
}

/// The calling thread's counters now.
pub fn counters() -> AllocCounters {
    COUNTERS.with(|c| AllocCounters {
        allocs: c.allocs.get(),
        deallocs: c.deallocs.get(),
        reallocs: c.reallocs.get(),
        alloc_bytes: c.alloc_bytes.get(),
        live_bytes: c.live.get().max(0) as u64,
        peak_live_bytes: c.peak.get().max(0) as u64,
    })
}

/// Starts a new peak window on the calling thread: the peak becomes the current live bytes.
pub fn reset_peak() {
    COUNTERS.with(|c| c.peak.set(c.live.get()));
}

#[cfg(test)]
mod tests {
    use super::*;

    // The library's test binary installs `CountingJemalloc` (see lib.rs).

    #[test]
    fn counts_an_allocation_and_its_free() {
        let before = counters();
        let block = std::hint::black_box(vec![0u8; 4096]);
        let during = counters();
        drop(block);
        let after = counters();
        assert_eq!(during.allocs - before.allocs, 1);
        assert_eq!(during.alloc_bytes - before.alloc_bytes, 4096);
        assert_eq!(during.live_bytes - before.live_bytes, 4096);
        assert_eq!(after.deallocs - during.deallocs, 1);
        assert_eq!(after.live_bytes, before.live_bytes);
    }

    #[test]
    fn peak_remembers_the_high_point_until_reset() {
        reset_peak();
        let base = counters().live_bytes;
        drop(std::hint::black_box(vec![1u8; 1 << 20]));
        let c = counters();
        assert!(c.peak_live_bytes >= base + (1 << 20));
        reset_peak();
        assert_eq!(counters().peak_live_bytes, counters().live_bytes);
    }

    #[test]
    fn realloc_growth_counts_as_allocated_bytes() {
        let mut v: Vec<u8> = Vec::with_capacity(16);
        let before = counters();
        v.reserve_exact(1024);
        let after = counters();
        assert_eq!(after.reallocs - before.reallocs, 1);
        assert_eq!(
            after.alloc_bytes - before.alloc_bytes,
            1024 + v.len() as u64 - 16
        );
        assert_eq!(after.live_bytes - before.live_bytes, 1024 - 16);
        drop(std::hint::black_box(v));
    }
}
