//! The global allocator: jemalloc behind a thin counting wrapper that charges every block
//! to a [`Component`].
//!
//! Counts live in thread-locals: free to update (DESIGN.md section 7 measured global
//! atomics at 5-7 ns per allocation) and, because a variant's child process runs on one
//! `current_thread` runtime, they see every allocation the informer, the apiserver and the
//! harness make. Allocations on other threads are counted on those threads and not read.
//!
//! **Attribution.** A thread-local "current component" says who is working: the informer,
//! the apiserver or the harness (the default). [`Attributed`] sets it around each poll of a
//! future and [`enter`] around a block of code. An allocation is charged to the current
//! component, and it stays that component's until it is freed, whoever frees it: an owner
//! table (pointer -> component, open addressing, in memory from the system allocator, not
//! from jemalloc) remembers each live block's allocator, so a block the informer allocated
//! and the harness frees leaves the informer's live bytes. A `realloc` is charged to the
//! block's owner. The components' figures therefore add up exactly to the totals, and each
//! component's live bytes are exactly the bytes of the blocks it allocated and still holds.
//! The table costs 8 to 16 bytes of RSS per live block, outside jemalloc's statistics.
//!
//! This is the crate's one `unsafe` module besides the jemalloc FFI call in
//! [`super::jemalloc`]: implementing [`GlobalAlloc`] is unsafe by definition. Every method
//! forwards to [`Jemalloc`] with the caller's arguments unchanged; the counters only look at
//! sizes and addresses and never touch the memory.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use serde::{Deserialize, Serialize};
use tikv_jemallocator::Jemalloc;

/// jemalloc, counting every allocation, deallocation and reallocation of the calling
/// thread, by component.
///
/// Install it in the binary with `#[global_allocator]`. `alloc_zeroed` and `realloc` are
/// forwarded as themselves, not rebuilt from `alloc` + copy, so zeroed pages and in-place
/// growth behave exactly as under plain jemalloc.
#[derive(Debug, Default)]
pub struct CountingJemalloc;

/// Who a block of memory is charged to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Component {
    /// The process around the other two: the runtime, the phase driver, the measurement.
    Harness = 0,
    /// The informer under test, its HTTP client included.
    Informer = 1,
    /// The built-in apiserver.
    ApiServer = 2,
}

impl Component {
    /// Every component, in report order.
    pub const ALL: [Component; 3] = [
        Component::Informer,
        Component::ApiServer,
        Component::Harness,
    ];

    fn from_tag(tag: u64) -> Component {
        match tag {
            1 => Component::Informer,
            2 => Component::ApiServer,
            _ => Component::Harness,
        }
    }
}

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

impl Counters {
    const fn new() -> Counters {
        Counters {
            allocs: Cell::new(0),
            deallocs: Cell::new(0),
            reallocs: Cell::new(0),
            alloc_bytes: Cell::new(0),
            live: Cell::new(0),
            peak: Cell::new(0),
        }
    }

    fn alloc(&self, size: usize) {
        self.allocs.set(self.allocs.get() + 1);
        self.alloc_bytes.set(self.alloc_bytes.get() + size as u64);
        self.grow_live(size as i64);
    }

    fn dealloc(&self, size: usize) {
        self.deallocs.set(self.deallocs.get() + 1);
        self.live.set(self.live.get() - size as i64);
    }

    fn realloc(&self, old: usize, new: usize) {
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

    fn read(&self) -> AllocCounters {
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

/// Live blocks and their owners: an open-addressing hash set of `address | owner` words
/// (jemalloc aligns every block to at least 8 bytes, so the two low bits are free), with
/// linear probing and backward-shift deletion. Its memory comes from [`System`], so growing
/// it never re-enters this allocator, and it never shows in jemalloc's figures.
struct Owners {
    slots: Cell<*mut u64>,
    /// log2 of the slot count; 0 before the first insert.
    bits: Cell<u32>,
    len: Cell<usize>,
}

const OWNER_MASK: u64 = 0b11;
const FIRST_BITS: u32 = 16;

impl Owners {
    const fn new() -> Owners {
        Owners {
            slots: Cell::new(std::ptr::null_mut()),
            bits: Cell::new(0),
            len: Cell::new(0),
        }
    }

    fn home(key: u64, bits: u32) -> usize {
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - bits)) as usize
    }

    fn slot(&self, i: usize) -> &Cell<u64> {
        // SAFETY: callers pass `i` below the slot count; the slots are initialised (zeroed)
        // `u64`s owned by this table, and `Cell<u64>` has the layout of `u64`.
        unsafe { &*self.slots.get().add(i).cast::<Cell<u64>>() }
    }

    /// Records `address` as owned by `owner`. Addresses with a low bit set (never seen
    /// from jemalloc) are not recorded: their free is charged to whoever frees them.
    fn insert(&self, address: usize, owner: Component) {
        let key = address as u64;
        if key & OWNER_MASK != 0 || key == 0 {
            return;
        }
        if (self.len.get() + 1) * 2 > (1usize << self.bits.get()) && !self.grow() {
            return;
        }
        let bits = self.bits.get();
        let mask = (1usize << bits) - 1;
        let mut i = Owners::home(key, bits);
        while self.slot(i).get() != 0 {
            i = (i + 1) & mask;
        }
        self.slot(i).set(key | owner as u64);
        self.len.set(self.len.get() + 1);
    }

    /// Forgets `address`, returning its owner if it was recorded.
    fn remove(&self, address: usize) -> Option<Component> {
        let key = address as u64;
        let bits = self.bits.get();
        if bits == 0 || key & OWNER_MASK != 0 {
            return None;
        }
        let mask = (1usize << bits) - 1;
        let mut i = Owners::home(key, bits);
        let found = loop {
            let word = self.slot(i).get();
            if word == 0 {
                return None;
            }
            if word & !OWNER_MASK == key {
                break word;
            }
            i = (i + 1) & mask;
        };
        // Backward-shift deletion: pull later entries of the run into the hole unless
        // their home lies cyclically after the hole.
        self.slot(i).set(0);
        let mut hole = i;
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let word = self.slot(j).get();
            if word == 0 {
                break;
            }
            let home = Owners::home(word & !OWNER_MASK, bits);
            let stays = if hole <= j {
                hole < home && home <= j
            } else {
                hole < home || home <= j
            };
            if !stays {
                self.slot(hole).set(word);
                self.slot(j).set(0);
                hole = j;
            }
        }
        self.len.set(self.len.get() - 1);
        Some(Component::from_tag(found & OWNER_MASK))
    }

    /// Doubles the table (or makes the first one). `false` if the system allocator refused.
    fn grow(&self) -> bool {
        let old_bits = self.bits.get();
        let new_bits = if old_bits == 0 {
            FIRST_BITS
        } else {
            old_bits + 1
        };
        let Ok(layout) = Layout::array::<u64>(1 << new_bits) else {
            return false;
        };
        // SAFETY: the layout has a non-zero size.
        let new = unsafe { System.alloc_zeroed(layout) }.cast::<u64>();
        if new.is_null() {
            return false;
        }
        let old = self.slots.replace(new);
        self.bits.set(new_bits);
        self.len.set(0);
        if !old.is_null() {
            let mask = (1usize << new_bits) - 1;
            for i in 0..1usize << old_bits {
                // SAFETY: `i` is below the old table's slot count.
                let word = unsafe { *old.add(i) };
                if word != 0 {
                    let mut j = Owners::home(word & !OWNER_MASK, new_bits);
                    while self.slot(j).get() != 0 {
                        j = (j + 1) & mask;
                    }
                    self.slot(j).set(word);
                    self.len.set(self.len.get() + 1);
                }
            }
            let old_layout = Layout::array::<u64>(1 << old_bits).expect("it was allocated");
            // SAFETY: `old` came from `System.alloc_zeroed` with this layout.
            unsafe { System.dealloc(old.cast(), old_layout) };
        }
        true
    }
}

struct State {
    current: Cell<Component>,
    total: Counters,
    by_component: [Counters; 3],
    owners: Owners,
}

impl State {
    fn of(&self, component: Component) -> &Counters {
        &self.by_component[component as usize]
    }
}

thread_local! {
    // `const` with no destructor: reading it never allocates nor registers a TLS
    // destructor, so it is safe to use from inside the allocator.
    static STATE: State = const {
        State {
            current: Cell::new(Component::Harness),
            total: Counters::new(),
            by_component: [Counters::new(), Counters::new(), Counters::new()],
            owners: Owners::new(),
        }
    };
}

fn on_alloc(ptr: *mut u8, size: usize) {
    STATE.with(|s| {
        let owner = s.current.get();
        s.total.alloc(size);
        s.of(owner).alloc(size);
        s.owners.insert(ptr as usize, owner);
    });
}

// SAFETY: every method forwards to `Jemalloc`, a correct `GlobalAlloc`, with its arguments
// unchanged and returns its result unchanged; the bookkeeping does not allocate from this
// allocator (the owner table uses `System`).
unsafe impl GlobalAlloc for CountingJemalloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which we pass on.
        let ptr = unsafe { Jemalloc.alloc(layout) };
        if !ptr.is_null() {
            on_alloc(ptr, layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { Jemalloc.alloc_zeroed(layout) };
        if !ptr.is_null() {
            on_alloc(ptr, layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller guarantees `ptr` came from this allocator with `layout`.
        unsafe { Jemalloc.dealloc(ptr, layout) };
        STATE.with(|s| {
            let owner = s
                .owners
                .remove(ptr as usize)
                .unwrap_or_else(|| s.current.get());
            s.total.dealloc(layout.size());
            s.of(owner).dealloc(layout.size());
        });
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract, which we pass on.
        let new = unsafe { Jemalloc.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            STATE.with(|s| {
                let owner = s
                    .owners
                    .remove(ptr as usize)
                    .unwrap_or_else(|| s.current.get());
                s.owners.insert(new as usize, owner);
                s.total.realloc(layout.size(), new_size);
                s.of(owner).realloc(layout.size(), new_size);
            });
        }
        new
    }
}

/// The calling thread's counters now, all components together.
pub fn counters() -> AllocCounters {
    STATE.with(|s| s.total.read())
}

/// The calling thread's counters of one component now.
pub fn component_counters(component: Component) -> AllocCounters {
    STATE.with(|s| s.of(component).read())
}

/// Starts a new peak window on the calling thread, for the total and every component: each
/// peak becomes its current live bytes.
pub fn reset_peak() {
    STATE.with(|s| {
        for c in std::iter::once(&s.total).chain(&s.by_component) {
            c.peak.set(c.live.get());
        }
    });
}

/// The component the calling thread is working for.
pub fn current() -> Component {
    STATE.with(|s| s.current.get())
}

/// Charges the calling thread's allocations to `component` until the guard drops.
#[must_use = "the component is current only while the guard lives"]
pub fn enter(component: Component) -> Entered {
    Entered {
        previous: STATE.with(|s| s.current.replace(component)),
    }
}

/// Restores the previous component when dropped; see [`enter`].
#[derive(Debug)]
pub struct Entered {
    previous: Component,
}

impl Drop for Entered {
    fn drop(&mut self) {
        STATE.with(|s| s.current.set(self.previous));
    }
}

pin_project_lite::pin_project! {
    /// A future whose every poll (and drop) is charged to one component; see
    /// [`Component::attribute`].
    #[derive(Debug)]
    pub struct Attributed<F> {
        component: Component,
        #[pin]
        inner: F,
    }
}

impl<F: Future> Future for Attributed<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let _entered = enter(*this.component);
        this.inner.poll(cx)
    }
}

impl Component {
    /// `future`, with every poll charged to this component.
    pub fn attribute<F: Future>(self, future: F) -> Attributed<F> {
        Attributed {
            component: self,
            inner: future,
        }
    }

    /// Spawns `future` on the current tokio runtime, charged to this component. The task's
    /// own allocation is charged to whoever spawns it.
    pub fn spawn<F>(self, future: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        tokio::spawn(self.attribute(future))
    }
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

    /// The monotone counters, of the total and summed over the components.
    fn monotone() -> ([u64; 4], [u64; 4]) {
        let of = |c: AllocCounters| [c.allocs, c.deallocs, c.reallocs, c.alloc_bytes];
        let sum = Component::ALL.iter().fold([0; 4], |acc, &c| {
            let c = of(component_counters(c));
            [acc[0] + c[0], acc[1] + c[1], acc[2] + c[2], acc[3] + c[3]]
        });
        (of(counters()), sum)
    }

    #[test]
    fn a_block_stays_its_allocators_whoever_frees_or_grows_it() {
        let informer = || component_counters(Component::Informer);
        let harness = || component_counters(Component::Harness);
        let (i0, h0) = (informer(), harness());
        let mut block = {
            let _informer = enter(Component::Informer);
            std::hint::black_box(Vec::<u8>::with_capacity(1000))
        };
        assert_eq!(
            current(),
            Component::Harness,
            "the guard restored the harness"
        );
        assert_eq!(informer().allocs - i0.allocs, 1);
        assert_eq!(informer().live_bytes - i0.live_bytes, 1000);
        // The harness grows it: still the informer's block.
        block.reserve_exact(3000);
        assert_eq!(informer().reallocs - i0.reallocs, 1);
        assert_eq!(informer().live_bytes - i0.live_bytes, 3000);
        // The harness frees it: the informer's live bytes fall, the harness's do not.
        drop(block);
        assert_eq!(informer().live_bytes, i0.live_bytes);
        assert_eq!(informer().deallocs - i0.deallocs, 1);
        assert_eq!(harness().deallocs, h0.deallocs);
    }

    #[test]
    fn components_add_up_to_the_totals() {
        // Many blocks across components, freed in another order by another component: the
        // owner table grows past its first size and deletes from the middle of runs.
        let (total0, sum0) = monotone();
        let live0 = Component::ALL.map(|c| component_counters(c).live_bytes);
        let mut blocks = Vec::new();
        for i in 0..200_000usize {
            let _entered = enter(Component::ALL[i % 3]);
            blocks.push(std::hint::black_box(vec![0u8; 8 + i % 200]));
        }
        {
            let _apiserver = enter(Component::ApiServer);
            let mut i = 0;
            blocks.retain(|_| {
                i += 1;
                i % 7 != 0
            });
            for block in blocks.iter_mut().step_by(5) {
                block.reserve_exact(64);
            }
        }
        drop(blocks);
        let (total1, sum1) = monotone();
        for k in 0..4 {
            assert_eq!(total1[k] - total0[k], sum1[k] - sum0[k], "counter {k}");
        }
        assert!(total1[0] - total0[0] >= 200_000);
        // Every block went back: the informer and apiserver hold what they held before.
        let live1 = Component::ALL.map(|c| component_counters(c).live_bytes);
        assert_eq!(live1[0], live0[0], "informer");
        assert_eq!(live1[1], live0[1], "apiserver");
    }

    #[test]
    fn the_owner_table_finds_what_it_stored_and_forgets_what_it_removed() {
        let owners = Owners::new();
        let addresses: Vec<usize> = (1..100_000usize).map(|i| i * 48).collect();
        for (n, &a) in addresses.iter().enumerate() {
            owners.insert(a, Component::ALL[n % 3]);
        }
        for (n, &a) in addresses.iter().enumerate().step_by(3) {
            assert_eq!(owners.remove(a), Some(Component::ALL[n % 3]));
        }
        for (n, &a) in addresses.iter().enumerate() {
            let expected = (n % 3 != 0).then_some(Component::ALL[n % 3]);
            assert_eq!(owners.remove(a), expected, "address {a}");
        }
        assert_eq!(owners.len.get(), 0);
        assert_eq!(
            owners.remove(5),
            None,
            "unaligned addresses are never stored"
        );
    }
}
