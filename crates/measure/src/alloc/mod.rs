//! The global allocator: jemalloc behind a thin counting wrapper that charges every block
//! to a [`Component`].
//!
//! Counts live in thread-locals: free to update (global atomics were measured at 5-7
//! ns per allocation) and, because a variant's child process runs on one
//! `current_thread` runtime, they see every allocation the informer, the apiserver and the
//! harness make. Allocations on other threads are counted on those threads and not read.
//!
//! **Attribution.** A thread-local "current component" says who is working: the informer,
//! the apiserver or the harness (the default). [`Attributed`] sets it around each poll of a
//! future and [`enter`] around a block of code. Each component allocates from jemalloc
//! arenas of its own, so a block's owner is the arena it came from: the apiserver and the
//! harness each have an explicit arena and thread cache (`MALLOCX_ARENA`,
//! `MALLOCX_TCACHE`) whose memory comes from a region of reserved address space of its
//! own (extent hooks, see `regions.rs`); the informer, which makes most allocations (92% of a
//! LIST's), takes jemalloc's automatic arenas and fast paths, exactly as it would without
//! this wrapper, and owns every block outside the regions. A block freed or
//! grown by another component is charged to its allocator and stays in its arena. The
//! components' figures therefore add up exactly to the totals, and each component's live
//! bytes are exactly the bytes of the blocks it allocated and still holds. Separate arenas
//! also keep the components' heaps apart, as they are in real processes: the apiserver's
//! garbage does not fragment the informer's pages.
//!
//! This module (with its files) is the crate's one `unsafe` module besides the jemalloc FFI call in
//! [`super::jemalloc`]: implementing [`GlobalAlloc`] is unsafe by definition. Every method
//! hands the caller's block and layout to jemalloc (`malloc`, `realloc`, `sdallocx` and
//! their flagged forms) with the alignment tikv-jemallocator would pass; the counters only
//! look at sizes and addresses and never touch the memory. The explicit arenas' extent
//! hooks reserve, protect and purge address space with `mmap`, `mprotect` and `madvise`;
//! `cpu.rs` reads the thread's CPU clock each time the component changes.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::ffi::c_int;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use tikv_jemalloc_sys as ffi;
use tikv_jemallocator::Jemalloc;

mod arenas;
mod component;
mod counters;
mod cpu;
mod regions;

use arenas::{ARENA_MASK, align_flags, arena, mallctl_read_u32};
pub use component::Component;
pub use counters::AllocCounters;
use counters::Counters;
use regions::{EXPLICIT, region_of, reservation};

/// jemalloc, counting every allocation, deallocation and reallocation of the calling
/// thread, by component, each component in an arena of its own.
///
/// Install it in the binary with `#[global_allocator]`. `alloc_zeroed` and `realloc` are
/// jemalloc's own (`MALLOCX_ZERO`, `rallocx`), not rebuilt from `alloc` + copy, so zeroed
/// pages and in-place growth behave exactly as under plain jemalloc.
#[derive(Debug, Default)]
pub struct CountingJemalloc;

pub(super) struct State {
    current: Cell<Component>,
    // The totals are the components' sums, but for the peak, which needs the total live
    // bytes at every step.
    total_live: Cell<i64>,
    total_peak: Cell<i64>,
    by_component: [Counters; 3],
    /// Per component: the `mallocx` flags of its arena and this thread's cache for it.
    flags: [Cell<c_int>; 3],
    /// Per component: this thread's explicit cache, once made.
    tcaches: [Cell<Option<u32>>; 3],
    /// Bytes to allocate before the next sample ([`set_sample_hook`]);
    /// `u64::MAX` while no timeline samples by bytes.
    sample_in: Cell<u64>,
}

impl State {
    fn of(&self, component: Component) -> &Counters {
        &self.by_component[component as usize]
    }

    fn grow_total(&self, delta: i64) {
        let live = self.total_live.get() + delta;
        self.total_live.set(live);
        if live > self.total_peak.get() {
            self.total_peak.set(live);
        }
    }

    #[inline(always)]
    fn count_alloc(&self, owner: Component, size: usize) {
        self.grow_total(size as i64);
        self.of(owner).alloc(size);
        self.towards_sample(size as u64);
    }

    #[inline(always)]
    fn count_dealloc(&self, owner: Component, size: usize) {
        self.total_live.set(self.total_live.get() - size as i64);
        self.of(owner).dealloc(size);
    }

    #[inline(always)]
    fn count_realloc(&self, owner: Component, old: usize, new: usize) {
        self.grow_total(new as i64 - old as i64);
        self.of(owner).realloc(old, new);
        if new > old {
            self.towards_sample((new - old) as u64);
        }
    }

    /// Counts `bytes` newly allocated towards the timeline's next sample, and takes it
    /// when due (after the block is counted, so the sample includes it).
    #[inline]
    fn towards_sample(&self, bytes: u64) {
        let left = self.sample_in.get();
        if bytes < left {
            self.sample_in.set(left - bytes);
        } else {
            self.take_sample();
        }
    }

    #[cold]
    fn take_sample(&self) {
        // Off while sampling: the sample allocates nothing, but must not recurse if it did.
        self.sample_in.set(u64::MAX);
        let next = SAMPLE_HOOK
            .get()
            .map_or(u64::MAX, |take_sample| take_sample());
        self.sample_in.set(next);
    }
}

/// The flags that send an allocation of `component` to its arena through this thread's
/// cache for it; 0 (jemalloc's automatic arena and cache) if either could not be made.
fn component_flags(s: &State, component: Component) -> c_int {
    let cached = s.flags[component as usize].get();
    if cached != FLAGS_UNSET {
        return cached;
    }
    let flags = match (arena(component), mallctl_read_u32(c"tcache.create")) {
        (Some(arena), Some(tcache)) => {
            s.tcaches[component as usize].set(Some(tcache));
            ffi::MALLOCX_ARENA(arena as usize) | ffi::MALLOCX_TCACHE(tcache as usize)
        }
        _ => 0,
    };
    s.flags[component as usize].set(flags);
    flags
}

const FLAGS_UNSET: c_int = -1;

thread_local! {
    // `const` with no destructor: reading it never allocates nor registers a TLS
    // destructor, so it is safe to use from inside the allocator.
    static STATE: State = const {
        State {
            current: Cell::new(Component::Harness),
            total_live: Cell::new(0),
            total_peak: Cell::new(0),
            by_component: [Counters::new(), Counters::new(), Counters::new()],
            flags: [const { Cell::new(FLAGS_UNSET) }; 3],
            tcaches: [const { Cell::new(None) }; 3],
            sample_in: Cell::new(u64::MAX),
        }
    };
}

/// The calling thread's state. `STATE.with(f)` with the allocator's whole body as `f` is
/// too big for the compiler to inline, which leaves the thread-local's address behind an
/// indirect call and a stack frame on every allocation; taking the address alone inlines
/// to one instruction, and the body is then inlined into each `GlobalAlloc` method.
#[inline(always)]
fn state() -> &'static State {
    let s: *const State = STATE.with(std::ptr::from_ref);
    // SAFETY: `STATE` is `const`-initialized with no destructor, so it lives as long as its
    // thread; `State` is not `Sync`, so the reference cannot leave this thread.
    unsafe { &*s }
}

/// The component that allocates through jemalloc's automatic arenas and thread cache, the
/// fast path: the informer, which is under test and makes most of a run's allocations
/// (jemalloc's slower path for explicit arenas and caches once cost it about a tenth more
/// instructions). Every block outside the explicit arenas' regions is this component's.
const AUTOMATIC: Component = Component::Informer;

/// Whether the explicit arenas exist; without them (the system refused the reservation or
/// jemalloc the arenas: never seen) every block is charged to whoever frees it.
fn attributing() -> bool {
    EXPLICIT.iter().all(|&c| arena(c).is_some())
}

/// Whether the block at `ptr` is [`AUTOMATIC`]'s, known without a call: it lies outside
/// every region and the regions exist (until they do, [`owner_of`] decides).
#[inline(always)]
fn is_automatic(ptr: *mut u8) -> bool {
    reservation().is_some_and(|reserved| region_of(ptr, reserved).is_none())
}

/// The owner of the block at `ptr`, and the flags that free or grow it in its arena.
fn owner_of(s: &State, ptr: *mut u8) -> (Component, c_int) {
    let reserved = reservation();
    match reserved.and_then(|reserved| region_of(ptr, reserved)) {
        Some(region) => {
            let owner = EXPLICIT[region];
            (owner, component_flags(s, owner))
        }
        None if reserved.is_some() || attributing() => (AUTOMATIC, 0),
        None => (s.current.get(), 0),
    }
}

// The hot paths below are [`AUTOMATIC`]'s blocks at the default alignment: plain `malloc`,
// `realloc` and `sdallocx`, counted, with no call but jemalloc's (so no stack frame to keep
// either). Everything else (another component, an alignment, zeroing, a block in a region)
// goes through the `*_in_arena` functions, out of line.

/// Allocates `layout` for the current component from its arena, and counts it.
#[inline(always)]
fn allocate(layout: Layout, zero: bool) -> *mut u8 {
    let s = state();
    let owner = s.current.get();
    if owner != AUTOMATIC || zero || align_flags(layout.align(), layout.size()) != 0 {
        return allocate_in_arena(s, owner, layout, zero);
    }
    // SAFETY: the size is non-zero (`GlobalAlloc`'s contract) and the default alignment
    // does: jemalloc's fast path, as tikv-jemallocator calls it.
    let ptr = unsafe { ffi::malloc(layout.size()) }.cast::<u8>();
    if !ptr.is_null() {
        s.count_alloc(owner, layout.size());
    }
    ptr
}

#[inline(never)]
fn allocate_in_arena(s: &State, owner: Component, layout: Layout, zero: bool) -> *mut u8 {
    let arena = if owner == AUTOMATIC {
        0
    } else {
        component_flags(s, owner)
    };
    let align = align_flags(layout.align(), layout.size());
    // SAFETY: the size is non-zero (`GlobalAlloc`'s contract) and the flags are valid: an
    // arena and a cache jemalloc made, an alignment from a `Layout`.
    let ptr = unsafe {
        match (arena | align, zero) {
            (0, false) => ffi::malloc(layout.size()),
            (0, true) => ffi::calloc(1, layout.size()),
            (flags, false) => ffi::mallocx(layout.size(), flags),
            (flags, true) => ffi::mallocx(layout.size(), flags | ffi::MALLOCX_ZERO),
        }
    }
    .cast::<u8>();
    if !ptr.is_null() {
        s.count_alloc(owner, layout.size());
    }
    ptr
}

/// Frees a block that may lie in a region, to its own arena, charged to its owner.
///
/// # Safety
/// `GlobalAlloc::dealloc`'s contract.
#[inline(never)]
unsafe fn free_in_arena(s: &State, ptr: *mut u8, layout: Layout) {
    let (owner, flags) = owner_of(s, ptr);
    s.count_dealloc(owner, layout.size());
    // Only the cache: a block goes back to the arena it came from.
    let flags = (flags & !ARENA_MASK) | align_flags(layout.align(), layout.size());
    // SAFETY: the caller guarantees `ptr` came from this allocator with `layout`; the
    // cache, if any, is this thread's.
    unsafe { ffi::sdallocx(ptr.cast(), layout.size(), flags) };
}

/// Grows or shrinks a block that may lie in a region, in its own arena, charged to its
/// owner.
///
/// # Safety
/// `GlobalAlloc::realloc`'s contract.
#[inline(never)]
unsafe fn reallocate_in_arena(s: &State, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
    let (owner, arena) = owner_of(s, ptr);
    let flags = arena | align_flags(layout.align(), new_size);
    // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract (a block of this
    // allocator with `layout`, a non-zero `new_size`), which we pass on with the flags of
    // the block's arena.
    let new = unsafe {
        if flags == 0 {
            ffi::realloc(ptr.cast(), new_size)
        } else {
            ffi::rallocx(ptr.cast(), new_size, flags)
        }
    }
    .cast::<u8>();
    if !new.is_null() {
        s.count_realloc(owner, layout.size(), new_size);
    }
    new
}

// SAFETY: every method hands the caller's block and layout to jemalloc (`malloc`, `calloc`,
// `realloc` or `mallocx`, `rallocx`, `sdallocx`) with the alignment tikv-jemallocator would
// pass and, for explicit arenas, an arena and thread cache of this allocator's making, and
// returns jemalloc's result unchanged; the bookkeeping allocates nothing (the explicit
// arenas' reservation is an `mmap` of its own).
unsafe impl GlobalAlloc for CountingJemalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if BARE.load(Ordering::Relaxed) {
            // SAFETY: as the caller's contract says.
            return unsafe { Jemalloc.alloc(layout) };
        }
        allocate(layout, false)
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if BARE.load(Ordering::Relaxed) {
            // SAFETY: as the caller's contract says.
            return unsafe { Jemalloc.alloc_zeroed(layout) };
        }
        allocate(layout, true)
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if BARE.load(Ordering::Relaxed) {
            // SAFETY: as the caller's contract says; jemalloc frees a block of any arena.
            return unsafe { Jemalloc.dealloc(ptr, layout) };
        }
        let s = state();
        if !is_automatic(ptr) {
            // SAFETY: as the caller's contract says.
            return unsafe { free_in_arena(s, ptr, layout) };
        }
        // Counted first, so that the free is the last call (a jump).
        s.count_dealloc(AUTOMATIC, layout.size());
        // SAFETY: the caller guarantees `ptr` came from this allocator with `layout`, from
        // the automatic arenas.
        unsafe {
            ffi::sdallocx(
                ptr.cast(),
                layout.size(),
                align_flags(layout.align(), layout.size()),
            )
        };
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if BARE.load(Ordering::Relaxed) {
            // SAFETY: as the caller's contract says.
            return unsafe { Jemalloc.realloc(ptr, layout, new_size) };
        }
        let s = state();
        if !is_automatic(ptr) || align_flags(layout.align(), new_size) != 0 {
            // SAFETY: as the caller's contract says.
            return unsafe { reallocate_in_arena(s, ptr, layout, new_size) };
        }
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract for a block of the
        // automatic arenas at the default alignment: jemalloc's `realloc` keeps it there.
        let new = unsafe { ffi::realloc(ptr.cast(), new_size) }.cast::<u8>();
        if !new.is_null() {
            s.count_realloc(AUTOMATIC, layout.size(), new_size);
        }
        new
    }
}

/// When set, the allocator is plain jemalloc: nothing is counted or attributed. Only for
/// measuring what counting costs (`cargo bench --bench overhead`); counters read while it
/// is set mean nothing.
static BARE: AtomicBool = AtomicBool::new(false);

/// Turns counting off (`false`: plain jemalloc, for a baseline) or back on, process-wide.
pub fn set_counting(on: bool) {
    BARE.store(!on, Ordering::Relaxed);
}

/// The calling thread's counters now, all components together.
pub fn counters() -> AllocCounters {
    STATE.with(|s| {
        let mut total = AllocCounters::default();
        for c in &s.by_component {
            let c = c.read();
            total.allocs += c.allocs;
            total.deallocs += c.deallocs;
            total.reallocs += c.reallocs;
            total.alloc_bytes += c.alloc_bytes;
        }
        total.live_bytes = s.total_live.get().max(0) as u64;
        total.peak_live_bytes = s.total_peak.get().max(0) as u64;
        total
    })
}

/// The calling thread's counters of one component now.
pub fn component_counters(component: Component) -> AllocCounters {
    STATE.with(|s| s.of(component).read())
}

/// Returns the free blocks this thread's component caches hold to their arenas, so that
/// jemalloc's statistics count them as free and a purge can release their pages.
pub fn flush_caches() {
    STATE.with(|s| {
        for tcache in &s.tcaches {
            if let Some(mut id) = tcache.get() {
                // SAFETY: a NUL-terminated name; `newp` points to the `unsigned` id of a
                // cache this thread made, with its size; nothing is read back.
                unsafe {
                    ffi::mallctl(
                        c"tcache.flush".as_ptr(),
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                        (&raw mut id).cast(),
                        std::mem::size_of::<u32>(),
                    );
                }
            }
        }
    });
}

/// Starts a new peak window on the calling thread, for the total and every component: each
/// peak becomes its current live bytes.
pub fn reset_peak() {
    STATE.with(|s| {
        s.total_peak.set(s.total_live.get());
        for c in &s.by_component {
            c.reset_peak();
        }
    });
}

/// What takes a sample when one is due; see [`set_sample_hook`].
static SAMPLE_HOOK: std::sync::OnceLock<fn() -> u64> = std::sync::OnceLock::new();

/// Hands the allocator what to call when [`sample_after`]'s bytes have been allocated: a
/// function that takes a sample without allocating and returns the bytes until the next
/// one (`u64::MAX`: never). The timeline sets it; the allocator knows nothing above it.
/// The first hook set stays.
pub fn set_sample_hook(take_sample: fn() -> u64) {
    let _ = SAMPLE_HOOK.set(take_sample);
}

/// Asks for a sample once `bytes` more are allocated on the calling thread (`u64::MAX`:
/// never), through the hook of [`set_sample_hook`].
pub fn sample_after(bytes: u64) {
    STATE.with(|s| s.sample_in.set(bytes));
}

/// The component the calling thread is working for.
pub fn current() -> Component {
    STATE.with(|s| s.current.get())
}

/// Charges the calling thread's allocations to `component` until the guard drops.
#[must_use = "the component is current only while the guard lives"]
pub fn enter(component: Component) -> Entered {
    let previous = STATE.with(|s| s.current.replace(component));
    cpu::switched(previous, component);
    Entered { previous }
}

/// Restores the previous component when dropped; see [`enter`].
#[derive(Debug)]
pub struct Entered {
    previous: Component,
}

impl Drop for Entered {
    fn drop(&mut self) {
        let leaving = STATE.with(|s| s.current.replace(self.previous));
        cpu::switched(leaving, self.previous);
    }
}

/// CPU time the calling thread has spent working for `component` since it started, in
/// nanoseconds (advisory; see `cpu.rs`).
pub fn component_cpu_ns(component: Component) -> u64 {
    cpu::spent(component, current())
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
mod tests;
