//! jemalloc's own statistics, read through `tikv-jemalloc-ctl`.
//!
//! jemalloc caches its statistics until the epoch advances, and a thread cache holds freed
//! blocks that jemalloc still counts as allocated, so [`read`] flushes the calling
//! thread's cache and advances the epoch first (jemalloc's `stats.*` are refreshed by
//! `epoch`).

use serde::{Deserialize, Serialize};
use tikv_jemalloc_ctl::{epoch, stats};

use units::Bytes;

/// jemalloc's view of the heap. `resident` follows `allocated` only after dirty pages decay
/// (10 s by default), so it lags after a mass delete: advisory, as is RSS.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JemallocStats {
    /// Bytes in blocks the application holds.
    pub allocated: Bytes,
    /// Bytes in active pages (allocated rounded up to pages).
    pub active: Bytes,
    /// Bytes in physically resident data pages, metadata included (advisory).
    pub resident: Bytes,
    /// Bytes in active extents mapped by the allocator.
    pub mapped: Bytes,
    /// Bytes kept as virtual memory, not returned to the OS.
    pub retained: Bytes,
}

/// Failure to read jemalloc's statistics (the allocator is not jemalloc, or a mallctl failed).
#[derive(Debug, thiserror::Error)]
#[error("failed to read jemalloc statistics: {0}")]
pub struct Error(tikv_jemalloc_ctl::Error);

impl From<tikv_jemalloc_ctl::Error> for Error {
    fn from(e: tikv_jemalloc_ctl::Error) -> Error {
        Error(e)
    }
}

/// Flushes the calling thread's cache, advances the epoch and reads the statistics.
pub fn read() -> Result<JemallocStats, Error> {
    flush_thread_cache();
    crate::alloc::flush_caches();
    epoch::advance()?;
    Ok(JemallocStats {
        allocated: Bytes(stats::allocated::read()? as u64),
        active: Bytes(stats::active::read()? as u64),
        resident: Bytes(stats::resident::read()? as u64),
        mapped: Bytes(stats::mapped::read()? as u64),
        retained: Bytes(stats::retained::read()? as u64),
    })
}

/// jemalloc's resident bytes now, without flushing any cache: cheap enough to read often,
/// and safe to read from inside the allocator (mallctl allocates nothing from Rust's global
/// allocator). `None` if the read fails.
pub fn resident_unflushed() -> Option<Bytes> {
    epoch::advance().ok()?;
    stats::resident::read().ok().map(|b| Bytes(b as u64))
}

/// How [`release`] gives pages back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// Purge what the arenas' decay settings say has decayed by now, as jemalloc's
    /// background threads would (`arena.<all>.decay`).
    Decayed,
    /// Purge every unused page (`arena.<all>.purge`).
    All,
}

/// Returns the thread's cached blocks to their arenas, then purges every arena's unused
/// pages as `how` says.
pub fn release(how: Release) {
    flush_thread_cache();
    crate::alloc::flush_caches();
    let name = match how {
        Release::Decayed => c"arena.4096.decay",
        Release::All => c"arena.4096.purge",
    };
    // `arena.<i>.decay` and `.purge` take and return nothing; 4096 is
    // `MALLCTL_ARENAS_ALL`. They fail only for an arena index that does not exist.
    //
    // SAFETY: as for `thread.tcache.flush` below.
    unsafe {
        tikv_jemalloc_sys::mallctl(
            name.as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        );
    }
}

/// Returns the calling thread's cached free blocks to their arenas.
fn flush_thread_cache() {
    // `thread.tcache.flush` takes and returns nothing, which tikv-jemalloc-ctl's typed
    // helpers cannot express; call mallctl directly. It fails only when the thread has no
    // cache, in which case there is nothing to flush, so the result is ignored.
    //
    // SAFETY: the name is a NUL-terminated mallctl name; old/new pointers are null with
    // lengths 0, which is how mallctl is called for a void operation.
    unsafe {
        tikv_jemalloc_sys::mallctl(
            c"thread.tcache.flush".as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        );
    }
}
