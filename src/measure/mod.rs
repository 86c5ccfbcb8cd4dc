//! Measurement: what a phase cost in allocations and bytes. Feeds the runner's per-phase
//! reports.
//!
//! Exact figures come from the counting allocator ([`alloc`]); jemalloc's statistics and the
//! process RSS are read beside them and are advisory. Reading jemalloc and `/proc` allocates,
//! so a [`PhaseMeter`] reads the counters first at the end of a phase and last at the start:
//! the measurement's own work falls between two windows and is in neither.

pub mod alloc;
pub mod jemalloc;
pub mod rss;

use std::time::Instant;

use serde::{Deserialize, Serialize};

pub use alloc::{AllocCounters, CountingJemalloc};
pub use jemalloc::JemallocStats;

use crate::units::Bytes;

/// What one phase cost, under the report's key names (it is flattened into each phase of
/// the report). Counts and `alloc_bytes` are the phase's deltas; live bytes, jemalloc and
/// RSS are as of the phase's end; the peaks are the highest points within it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Allocations during the phase (exact).
    pub alloc_count: u64,
    /// Deallocations during the phase (exact).
    pub dealloc_count: u64,
    /// Reallocations during the phase (exact).
    pub realloc_count: u64,
    /// Bytes requested during the phase (exact).
    pub alloc_bytes: Bytes,
    /// Bytes live at the phase's end (exact).
    pub live_bytes: Bytes,
    /// Highest live bytes within the phase (exact).
    pub peak_live_bytes: Bytes,
    /// jemalloc's statistics at the phase's end (advisory: caches and page decay).
    pub jemalloc: Option<JemallocStats>,
    /// Process RSS at the phase's end (advisory).
    pub rss_bytes: Option<Bytes>,
    /// Highest RSS within the phase (advisory; absent where the kernel does not allow
    /// resetting the high-water mark).
    pub rss_peak_bytes: Option<Bytes>,
    /// Wall-clock duration in milliseconds (advisory).
    pub duration_ms: f64,
}

/// Measures one phase: [`PhaseMeter::start`] before it, [`PhaseMeter::finish`] after.
#[derive(Debug)]
pub struct PhaseMeter {
    start: AllocCounters,
    started: Instant,
    rss_peak_reset: bool,
}

impl PhaseMeter {
    /// Opens the window: resets the RSS and live-bytes peaks, then reads the counters.
    pub fn start() -> PhaseMeter {
        let rss_peak_reset = rss::reset_peak();
        alloc::reset_peak();
        PhaseMeter {
            start: alloc::counters(),
            started: Instant::now(),
            rss_peak_reset,
        }
    }

    /// Closes the window: reads the counters, then jemalloc and RSS.
    pub fn finish(self) -> Measurement {
        let end = alloc::counters();
        let duration = self.started.elapsed();
        let jemalloc = jemalloc::read().ok();
        let rss = rss::read();
        Measurement {
            alloc_count: end.allocs - self.start.allocs,
            dealloc_count: end.deallocs - self.start.deallocs,
            realloc_count: end.reallocs - self.start.reallocs,
            alloc_bytes: Bytes(end.alloc_bytes - self.start.alloc_bytes),
            live_bytes: Bytes(end.live_bytes),
            peak_live_bytes: Bytes(end.peak_live_bytes),
            jemalloc,
            rss_bytes: rss.map(|r| r.current),
            rss_peak_bytes: rss.filter(|_| self.rss_peak_reset).map(|r| r.peak),
            duration_ms: (duration.as_secs_f64() * 1e6).round() / 1e3,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meter_reports_the_phase_delta_and_its_peak() {
        let meter = PhaseMeter::start();
        let kept = std::hint::black_box(vec![7u8; 100_000]);
        drop(std::hint::black_box(vec![7u8; 1_000_000]));
        let m = meter.finish();
        assert_eq!(m.alloc_count, 2);
        assert_eq!(m.dealloc_count, 1);
        assert_eq!(m.alloc_bytes, Bytes(1_100_000));
        assert!(m.peak_live_bytes.0 >= m.live_bytes.0 + 1_000_000);
        assert!(m.jemalloc.is_some_and(|j| j.allocated.0 >= 100_000));
        drop(kept);
    }
}
