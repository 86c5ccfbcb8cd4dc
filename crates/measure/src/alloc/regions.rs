//! Reserved address space for the explicit arenas, and the jemalloc extent hooks that take
//! each explicit arena's memory from its own region: a block's owner is then a
//! subtraction and a shift away.

use std::ffi::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};

use tikv_jemalloc_sys as ffi;

use super::component::Component;

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
pub(super) const REGION_BITS: [u32; 3] = [40, 36, 32];

/// The components with an explicit arena, in the order of their regions.
pub(super) const EXPLICIT: [Component; 2] = [Component::Harness, Component::ApiServer];

/// The reservation: its first address (a page boundary) with the log2 of a region's size
/// in the low bits, in one word so that one load reads both; 0 until it is made, and for
/// good if the system refused it.
pub(super) static RESERVED: AtomicUsize = AtomicUsize::new(0);
const SHIFT_MASK: usize = 63;

/// The reservation's first address and the log2 of a region's size, if it is made.
#[inline(always)]
pub(super) fn reservation() -> Option<(usize, u32)> {
    let packed = RESERVED.load(Ordering::Relaxed);
    (packed != 0).then_some((packed & !SHIFT_MASK, (packed & SHIFT_MASK) as u32))
}

/// Per region: bytes its arena has taken so far (handed out from the region's start up).
static TAKEN: [AtomicUsize; EXPLICIT.len()] = [const { AtomicUsize::new(0) }; EXPLICIT.len()];

/// Which region holds `ptr`, if any, given the reservation.
#[inline(always)]
pub(super) fn region_of(ptr: *mut u8, (base, shift): (usize, u32)) -> Option<usize> {
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
pub(super) static HOOKS: [ffi::extent_hooks_t; EXPLICIT.len()] = [const {
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
