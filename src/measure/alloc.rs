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
//! future and [`enter`] around a block of code. Each component allocates from jemalloc
//! arenas of its own, so a block's owner is the arena it came from: the apiserver and the
//! harness each have an explicit arena and thread cache (`MALLOCX_ARENA`,
//! `MALLOCX_TCACHE`) whose memory comes from a region of reserved address space of its
//! own (extent hooks, see [`HOOKS`]); the informer, which makes most allocations (92% of a
//! LIST's), takes jemalloc's automatic arenas and fast paths, exactly as it would without
//! this wrapper, and owns every block outside the regions. A block freed or
//! grown by another component is charged to its allocator and stays in its arena. The
//! components' figures therefore add up exactly to the totals, and each component's live
//! bytes are exactly the bytes of the blocks it allocated and still holds. Separate arenas
//! also keep the components' heaps apart, as they are in real processes: the apiserver's
//! garbage does not fragment the informer's pages.
//!
//! This is the crate's one `unsafe` module besides the jemalloc FFI call in
//! [`super::jemalloc`]: implementing [`GlobalAlloc`] is unsafe by definition. Every method
//! hands the caller's block and layout to jemalloc (`malloc`, `realloc`, `sdallocx` and
//! their flagged forms) with the alignment tikv-jemallocator would pass; the counters only
//! look at sizes and addresses and never touch the memory. The explicit arenas' extent
//! hooks reserve, protect and purge address space with `mmap`, `mprotect` and `madvise`.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::ffi::c_int;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicUsize, Ordering};
use std::task::{Context, Poll};

use serde::{Deserialize, Serialize};
use tikv_jemalloc_sys as ffi;
use tikv_jemallocator::Jemalloc;

/// jemalloc, counting every allocation, deallocation and reallocation of the calling
/// thread, by component, each component in an arena of its own.
///
/// Install it in the binary with `#[global_allocator]`. `alloc_zeroed` and `realloc` are
/// jemalloc's own (`MALLOCX_ZERO`, `rallocx`), not rebuilt from `alloc` + copy, so zeroed
/// pages and in-place growth behave exactly as under plain jemalloc.
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

/// Where the explicit arenas' memory lives: one reservation of virtual address space,
/// made on the first allocation, cut into a region per explicit component (in
/// [`EXPLICIT`] order). Each explicit arena is made with extent hooks ([`HOOKS`]) that
/// take its memory from its own region and nowhere else, so the owner of any block is a
/// subtraction and a shift away: a block inside a region is that region's component's,
/// any other block came from jemalloc's automatic arenas and is [`AUTOMATIC`]'s. The
/// reservation is `PROT_NONE` and `MAP_NORESERVE` (no memory, no commit charge); a
/// region's pages become readable and writable as its arena takes them.
///
/// Regions are 1 TiB where the system allows, else smaller ([`REGION_BITS`]; under
/// valgrind, which refuses the larger reservations, 4 GiB). An arena that fills its region
/// fails its allocation, as jemalloc does when the system has no memory left.
const REGION_BITS: [u32; 3] = [40, 36, 32];

/// The components with an explicit arena, in the order of their regions.
const EXPLICIT: [Component; 2] = [Component::Harness, Component::ApiServer];

/// The reservation: its first address (a page boundary) with the log2 of a region's size
/// in the low bits, in one word so that one load reads both; 0 until it is made, and for
/// good if the system refused it.
static RESERVED: AtomicUsize = AtomicUsize::new(0);
const SHIFT_MASK: usize = 63;

/// The reservation's first address and the log2 of a region's size, if it is made.
#[inline(always)]
fn reservation() -> Option<(usize, u32)> {
    let packed = RESERVED.load(Ordering::Relaxed);
    (packed != 0).then_some((packed & !SHIFT_MASK, (packed & SHIFT_MASK) as u32))
}

/// Per region: bytes its arena has taken so far (handed out from the region's start up).
static TAKEN: [AtomicUsize; EXPLICIT.len()] = [const { AtomicUsize::new(0) }; EXPLICIT.len()];

/// Which region holds `ptr`, if any, given the reservation.
#[inline(always)]
fn region_of(ptr: *mut u8, (base, shift): (usize, u32)) -> Option<usize> {
    let region = (ptr as usize).wrapping_sub(base) >> shift;
    (region < EXPLICIT.len()).then_some(region)
}

/// The extent hooks of the explicit arenas, one set per region (an `alloc` hook tells its
/// region by which set it was called through). Memory is taken once and kept: `dalloc`
/// opts out, so jemalloc retains what it no longer uses and purges its pages instead,
/// whatever `retain` is set to, and no other mapping can ever land inside a region.
/// Pages are always committed (as jemalloc's default hooks have them on Linux, which
/// overcommits), splitting and merging always succeed (a region is one mapping), and
/// purging is `madvise`, as by default.
static HOOKS: [ffi::extent_hooks_t; EXPLICIT.len()] = [const {
    ffi::extent_hooks_t {
        alloc: Some(extent_alloc),
        dalloc: Some(extent_keep),
        destroy: None,
        commit: None,
        decommit: None,
        purge_lazy: Some(extent_purge::<{ libc::MADV_FREE }>),
        purge_forced: Some(extent_purge::<{ libc::MADV_DONTNEED }>),
        split: Some(extent_split),
        merge: Some(extent_merge),
    }
}; EXPLICIT.len()];

/// Takes `size` bytes at a multiple of `alignment` (at `new_addr` if not null) from the
/// region of the hooks it is called through, readable and writable, zeroed.
unsafe extern "C" fn extent_alloc(
    hooks: *mut ffi::extent_hooks_t,
    new_addr: *mut std::ffi::c_void,
    size: usize,
    alignment: usize,
    zero: *mut bool,
    commit: *mut bool,
    _arena: std::ffi::c_uint,
) -> *mut std::ffi::c_void {
    let region = (hooks as usize).wrapping_sub(HOOKS.as_ptr() as usize)
        / std::mem::size_of::<ffi::extent_hooks_t>();
    let (Some(taken), Some((base, shift))) = (TAKEN.get(region), reservation()) else {
        return std::ptr::null_mut();
    };
    let start_of_region = base + (region << shift);
    let end_of_region = start_of_region + (1 << shift);
    let mut used = taken.load(Ordering::Relaxed);
    let start = loop {
        let next = start_of_region + used;
        let start = if new_addr.is_null() {
            next.next_multiple_of(alignment.max(1))
        } else if new_addr as usize == next {
            next
        } else {
            // Only the end of what was taken can grow in place.
            return std::ptr::null_mut();
        };
        if start
            .checked_add(size)
            .is_none_or(|end| end > end_of_region)
        {
            return std::ptr::null_mut();
        }
        match taken.compare_exchange_weak(
            used,
            start + size - start_of_region,
            Ordering::AcqRel,
            Ordering::Relaxed,
        ) {
            Ok(_) => break start,
            Err(now) => used = now,
        }
    };
    // SAFETY: `start..start + size` lies inside the reservation, which this process mapped
    // and never unmaps, and was taken by this call alone.
    let status = unsafe {
        libc::mprotect(
            start as *mut libc::c_void,
            size,
            libc::PROT_READ | libc::PROT_WRITE,
        )
    };
    if status != 0 {
        return std::ptr::null_mut();
    }
    // SAFETY: jemalloc passes valid pointers to its two flags.
    unsafe {
        *zero = true;
        *commit = true;
    }
    start as *mut std::ffi::c_void
}

/// Opts out of unmapping: the extent stays mapped and jemalloc retains it.
unsafe extern "C" fn extent_keep(
    _hooks: *mut ffi::extent_hooks_t,
    _addr: *mut std::ffi::c_void,
    _size: usize,
    _committed: bool,
    _arena: std::ffi::c_uint,
) -> bool {
    true
}

/// Purges `length` bytes at `offset` into the extent at `addr` with `madvise(ADVICE)`
/// (`MADV_FREE` for a lazy purge, `MADV_DONTNEED` for a forced one, as jemalloc's own
/// hooks on Linux); false when done (jemalloc's convention).
unsafe extern "C" fn extent_purge<const ADVICE: c_int>(
    _hooks: *mut ffi::extent_hooks_t,
    addr: *mut std::ffi::c_void,
    _size: usize,
    offset: usize,
    length: usize,
    _arena: std::ffi::c_uint,
) -> bool {
    // SAFETY: jemalloc names pages of an extent it holds, in a region this process mapped;
    // both advices only drop their contents.
    unsafe { libc::madvise(addr.cast::<u8>().add(offset).cast(), length, ADVICE) != 0 }
}

unsafe extern "C" fn extent_split(
    _hooks: *mut ffi::extent_hooks_t,
    _addr: *mut std::ffi::c_void,
    _size: usize,
    _size_a: usize,
    _size_b: usize,
    _committed: bool,
    _arena: std::ffi::c_uint,
) -> bool {
    false
}

unsafe extern "C" fn extent_merge(
    _hooks: *mut ffi::extent_hooks_t,
    _addr_a: *mut std::ffi::c_void,
    _size_a: usize,
    _addr_b: *mut std::ffi::c_void,
    _size_b: usize,
    _committed: bool,
    _arena: std::ffi::c_uint,
) -> bool {
    false
}

/// The explicit components' arenas, made on the first allocation: `arena index + 1` per
/// component, 0 while not made (and always for [`AUTOMATIC`]), `u32::MAX` if refused.
static ARENAS: [AtomicU32; 3] = [const { AtomicU32::new(0) }; 3];
static ARENAS_STATE: AtomicU8 = AtomicU8::new(0);

/// The arena of `component`, if it has one.
fn arena(component: Component) -> Option<u32> {
    if ARENAS_STATE.load(Ordering::Acquire) != 2 {
        make_arenas();
    }
    match ARENAS[component as usize].load(Ordering::Acquire) {
        0 | u32::MAX => None,
        n => Some(n - 1),
    }
}

fn make_arenas() {
    // 0: not made; 1: being made; 2: made (or refused).
    if ARENAS_STATE
        .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
    {
        let reserved = REGION_BITS.into_iter().find_map(|shift| {
            // SAFETY: a fresh anonymous mapping at an address of the kernel's choosing; it
            // touches no existing memory.
            let base = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    EXPLICIT.len() << shift,
                    libc::PROT_NONE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            (base != libc::MAP_FAILED).then_some(base as usize | shift as usize)
        });
        // All or none: with one explicit arena missing, its blocks could not be told from
        // the informer's, so then no component has one and nothing is attributed.
        let made = reserved
            .map(|packed| {
                RESERVED.store(packed, Ordering::Release);
                HOOKS.each_ref().map(create_arena)
            })
            .filter(|made| made.iter().all(Option::is_some));
        if made.is_none() {
            RESERVED.store(0, Ordering::Release);
        }
        for (i, component) in EXPLICIT.into_iter().enumerate() {
            let index = made.map_or(u32::MAX, |made| made[i].map_or(u32::MAX, |n| n + 1));
            ARENAS[component as usize].store(index, Ordering::Release);
        }
        ARENAS_STATE.store(2, Ordering::Release);
    } else {
        while ARENAS_STATE.load(Ordering::Acquire) != 2 {
            std::hint::spin_loop();
        }
    }
}

/// Makes an arena whose memory comes through `hooks`; its index.
fn create_arena(hooks: &'static ffi::extent_hooks_t) -> Option<u32> {
    let mut hooks = (hooks as *const ffi::extent_hooks_t).cast_mut();
    let mut index: u32 = 0;
    let mut len = std::mem::size_of::<u32>();
    // SAFETY: a NUL-terminated name; `index` and `len` are valid for writes and `len` is
    // `index`'s size; `newp` points to a pointer to hooks that live for the process, as
    // `arenas.create` requires (jemalloc only reads through it).
    let status = unsafe {
        ffi::mallctl(
            c"arenas.create".as_ptr(),
            (&raw mut index).cast(),
            &raw mut len,
            (&raw mut hooks).cast(),
            std::mem::size_of::<*mut ffi::extent_hooks_t>(),
        )
    };
    (status == 0 && len == std::mem::size_of::<u32>()).then_some(index)
}

/// Reads an `unsigned` mallctl that creates something (`tcache.create`).
fn mallctl_read_u32(name: &std::ffi::CStr) -> Option<u32> {
    let mut value: u32 = 0;
    let mut len = std::mem::size_of::<u32>();
    // SAFETY: `name` is NUL-terminated; `value` and `len` are valid for writes and `len`
    // is `value`'s size, as both mallctls require; nothing is written (`newp` is null).
    let status = unsafe {
        ffi::mallctl(
            name.as_ptr(),
            (&raw mut value).cast(),
            &raw mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    (status == 0 && len == std::mem::size_of::<u32>()).then_some(value)
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

/// The bits of `mallocx` flags that name an arena.
const ARENA_MASK: c_int = !((1 << 20) - 1);

/// jemalloc's alignment flag for `layout` when the default alignment does not do
/// (tikv-jemallocator's rule).
fn align_flags(align: usize, size: usize) -> c_int {
    if align <= MIN_ALIGN && align <= size {
        0
    } else {
        ffi::MALLOCX_ALIGN(align)
    }
}

/// `_Alignof(max_align_t)` on the 64-bit targets this runs on.
const MIN_ALIGN: usize = 16;

struct State {
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
    /// Bytes to allocate before the timeline's next sample ([`super::timeline`]);
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
        let next = super::timeline::bytes_sample_due();
        self.sample_in.set(next);
    }
}

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
            c.peak.set(c.live.get());
        }
    });
}

/// Asks for a timeline sample once `bytes` more are allocated on the calling thread
/// (`u64::MAX`: never); see [`super::timeline`].
pub(super) fn sample_after(bytes: u64) {
    STATE.with(|s| s.sample_in.set(bytes));
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
    fn an_explicit_arena_keeps_its_large_and_aligned_blocks_in_its_region() {
        let apiserver = || component_counters(Component::ApiServer);
        let before = apiserver();
        let (mut large, aligned) = {
            let _apiserver = enter(Component::ApiServer);
            let large = std::hint::black_box(Vec::<u8>::with_capacity(8 << 20));
            let layout = Layout::from_size_align(4096, 4096).unwrap();
            // SAFETY: a non-zero size; freed below with the same layout.
            let aligned = unsafe { std::alloc::alloc(layout) };
            assert!(!aligned.is_null());
            (large, (aligned, layout))
        };
        let region = |ptr| {
            reservation()
                .and_then(|r| region_of(ptr, r))
                .map(|r| EXPLICIT[r])
        };
        assert_eq!(region(large.as_mut_ptr()), Some(Component::ApiServer));
        assert_eq!(region(aligned.0), Some(Component::ApiServer));
        assert!(!is_automatic(large.as_mut_ptr()));
        // The harness grows the large block past its extent and frees both.
        large.reserve_exact(64 << 20);
        assert_eq!(region(large.as_mut_ptr()), Some(Component::ApiServer));
        let held = apiserver().live_bytes - before.live_bytes;
        assert_eq!(held, (64 << 20) + 4096);
        drop(large);
        // SAFETY: allocated above with this layout.
        unsafe { std::alloc::dealloc(aligned.0, aligned.1) };
        assert_eq!(apiserver().live_bytes, before.live_bytes);
        // The informer's blocks are outside every region.
        let mut informer = {
            let _informer = enter(Component::Informer);
            std::hint::black_box(vec![0u8; 100])
        };
        assert!(is_automatic(informer.as_mut_ptr()));
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
}
