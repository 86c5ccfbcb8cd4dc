//! The explicit components' arenas and this thread's caches for them: made on the first
//! allocation, and the `mallocx` flags that send a component's blocks to its arena.

use std::ffi::c_int;
use std::sync::atomic::{AtomicU8, AtomicU32, Ordering};

use tikv_jemalloc_sys as ffi;

use super::component::Component;
use super::regions::{EXPLICIT, HOOKS, REGION_BITS, RESERVED};

/// The explicit components' arenas, made on the first allocation: `arena index + 1` per
/// component, 0 while not made (and always for [`AUTOMATIC`]), `u32::MAX` if refused.
static ARENAS: [AtomicU32; 3] = [const { AtomicU32::new(0) }; 3];
static ARENAS_STATE: AtomicU8 = AtomicU8::new(0);

/// The arena of `component`, if it has one.
pub(super) fn arena(component: Component) -> Option<u32> {
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
pub(super) fn mallctl_read_u32(name: &std::ffi::CStr) -> Option<u32> {
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

/// The bits of `mallocx` flags that name an arena.
pub(super) const ARENA_MASK: c_int = !((1 << 20) - 1);

/// jemalloc's alignment flag for `layout` when the default alignment does not do
/// (tikv-jemallocator's rule).
pub(super) fn align_flags(align: usize, size: usize) -> c_int {
    if align <= MIN_ALIGN && align <= size {
        0
    } else {
        ffi::MALLOCX_ALIGN(align)
    }
}

/// `_Alignof(max_align_t)` on the 64-bit targets this runs on.
pub(super) const MIN_ALIGN: usize = 16;
