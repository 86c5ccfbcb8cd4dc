//! The heap-profiling build (`--features dhat-heap`): dhat's allocator in place of the
//! counting jemalloc, and its figures in place of the counters.
//!
//! Only the binary installs an allocator, so only the binary has the feature: it says so
//! once at startup ([`declare_installed`]), and this crate (and every crate above it) is
//! the same build either way. The dhat build recompiles the binary alone.
//!
//! dhat records a backtrace for every allocation, which the counting allocator cannot, and
//! writes a file for its viewer (dh_view.html) showing where each byte came from. It
//! wraps only the system allocator (`dhat::Alloc` has no inner allocator), so this is a build of its own:
//! jemalloc's statistics, arenas and components do not exist in it. Its counts follow
//! dhat's model, in which a reallocation frees a block and makes a new one: its
//! `alloc_count` is the counting allocator's allocations plus reallocations, and so is its
//! `dealloc_count` against the counting allocator's deallocations.

use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

/// Which allocator measured a report's exact figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Allocator {
    /// jemalloc behind the counting wrapper, with components (the normal build).
    #[default]
    CountingJemalloc,
    /// dhat's allocator (the `dhat-heap` build): no components, no jemalloc statistics,
    /// reallocations counted as a free and a new block, `peak_live_bytes` the run's peak.
    Dhat,
}

impl Allocator {
    /// Whether it is the normal build's.
    pub fn is_default(&self) -> bool {
        *self == Allocator::CountingJemalloc
    }
}

/// dhat's figures at one instant, in the counting allocator's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct DhatCounters {
    /// Blocks made since the profiler started (allocations and reallocations).
    pub blocks: u64,
    /// Bytes of those blocks.
    pub bytes: u64,
    /// Blocks live now.
    pub live_blocks: u64,
    /// Bytes live now.
    pub live_bytes: u64,
    /// The most bytes live at once since the profiler started.
    pub peak_bytes: u64,
}

mod profiler {
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::DhatCounters;

    static RUNNING: AtomicBool = AtomicBool::new(false);

    /// A running dhat profiler; dropping it writes the viewer file.
    #[derive(Debug)]
    pub struct Profile {
        profiler: Option<dhat::Profiler>,
        partial: PathBuf,
        file: PathBuf,
    }

    /// Starts profiling the whole process; the file is written when the profile drops.
    pub fn start(file: &Path) -> Profile {
        // dhat writes where it is told; the file moves into place whole once written.
        let mut partial = file.as_os_str().to_owned();
        partial.push(".partial");
        let partial = PathBuf::from(partial);
        if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = std::fs::create_dir_all(dir);
        }
        let profiler = dhat::Profiler::builder().file_name(&partial).build();
        RUNNING.store(true, Ordering::Relaxed);
        Profile {
            profiler: Some(profiler),
            partial,
            file: file.to_owned(),
        }
    }

    impl Drop for Profile {
        fn drop(&mut self) {
            RUNNING.store(false, Ordering::Relaxed);
            drop(self.profiler.take());
            if let Err(e) = std::fs::rename(&self.partial, &self.file) {
                files::say!(
                    "error: failed to write the dhat profile `{}`: {e}",
                    self.file.display()
                );
            }
        }
    }

    pub fn profiling() -> bool {
        RUNNING.load(Ordering::Relaxed)
    }

    pub fn counters() -> DhatCounters {
        let stats = dhat::HeapStats::get();
        DhatCounters {
            blocks: stats.total_blocks,
            bytes: stats.total_bytes,
            live_blocks: stats.curr_blocks as u64,
            live_bytes: stats.curr_bytes as u64,
            peak_bytes: stats.max_bytes as u64,
        }
    }
}

pub use profiler::{Profile, start};

use profiler::profiling;

/// dhat's figures now, if a profile is running.
pub(super) fn counters() -> Option<DhatCounters> {
    if profiling() {
        return Some(profiler::counters());
    }
    None
}

static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Says that dhat's allocator is this process's global allocator: the heap-profiling
/// build's `main` calls it first thing, before any figure is read.
pub fn declare_installed() {
    INSTALLED.store(true, Ordering::Relaxed);
}

/// Whether this is the heap-profiling build (dhat's allocator installed).
pub fn build() -> bool {
    INSTALLED.load(Ordering::Relaxed)
}
