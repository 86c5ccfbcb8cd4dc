//! Measurement: what a phase cost in allocations and bytes. Feeds the runner's per-phase
//! reports.
//!
//! Exact figures come from the counting allocator ([`alloc`]); jemalloc's statistics and the
//! process RSS are read beside them and are advisory. Reading jemalloc and `/proc` allocates,
//! so a [`PhaseMeter`] reads the counters first at the end of a phase and last at the start:
//! the measurement's own work falls between two windows and is in neither.

pub mod alloc;
pub mod attributed;
pub mod dhat;
pub mod gclog;
pub mod jemalloc;
pub mod outside;
pub mod pprof;
pub mod rss;
pub mod timeline;

use std::time::Instant;

use serde::{Deserialize, Serialize};

pub use alloc::{AllocCounters, Component, CountingJemalloc};

/// The hasher of the maps whose growth a run measures (the informer's store, queue and
/// relist buffer, the built-in apiserver's tables): std's SipHash with fixed keys.
/// `RandomState` seeds every map at random, and where a map's deleted slots fall, and so
/// whether an insert after deletes rehashes in place or grows the table, depends on the
/// seed: a phase that creates objects after deleting some moved its exact figures by one
/// resize run to run (seen at 100 pods). With fixed keys every run hashes alike.
pub type FixedState = std::hash::BuildHasherDefault<std::collections::hash_map::DefaultHasher>;
pub use jemalloc::JemallocStats;

use units::Bytes;

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
    /// The same exact figures by component; they add up to the totals above. (Absent from
    /// reports written before attribution.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub components: Option<Components>,
}

/// A phase's exact figures split by the component each block is charged to (the one that
/// allocated it; see [`alloc`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Components {
    /// The informer under test, its HTTP client included.
    pub informer: ComponentMeasurement,
    /// The built-in apiserver.
    pub apiserver: ComponentMeasurement,
    /// The runtime, the phase driver and the measurement.
    pub harness: ComponentMeasurement,
}

impl Components {
    /// The figures of `component`.
    pub fn of(&self, component: Component) -> &ComponentMeasurement {
        match component {
            Component::Informer => &self.informer,
            Component::ApiServer => &self.apiserver,
            Component::Harness => &self.harness,
        }
    }

    fn of_mut(&mut self, component: Component) -> &mut ComponentMeasurement {
        match component {
            Component::Informer => &mut self.informer,
            Component::ApiServer => &mut self.apiserver,
            Component::Harness => &mut self.harness,
        }
    }
}

/// One component's share of a phase: as [`Measurement`]'s exact figures, for the blocks
/// charged to it, and the CPU time the thread spent working for it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ComponentMeasurement {
    /// Allocations it made during the phase.
    pub alloc_count: u64,
    /// Its blocks freed during the phase, by whoever freed them.
    pub dealloc_count: u64,
    /// Reallocations of its blocks during the phase.
    pub realloc_count: u64,
    /// Bytes it requested during the phase.
    pub alloc_bytes: Bytes,
    /// Bytes of its blocks live at the phase's end.
    pub live_bytes: Bytes,
    /// Highest live bytes of its blocks within the phase.
    pub peak_live_bytes: Bytes,
    /// CPU time the thread spent working for it during the phase, in milliseconds
    /// (advisory: the thread's CPU clock, read at each change of component; absent from
    /// reports written before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ms: Option<f64>,
}

impl ComponentMeasurement {
    fn between(start: &ComponentReading, end: &ComponentReading) -> ComponentMeasurement {
        let (start_counts, end_counts) = (&start.counters, &end.counters);
        ComponentMeasurement {
            alloc_count: end_counts.allocs - start_counts.allocs,
            dealloc_count: end_counts.deallocs - start_counts.deallocs,
            realloc_count: end_counts.reallocs - start_counts.reallocs,
            alloc_bytes: Bytes(end_counts.alloc_bytes - start_counts.alloc_bytes),
            live_bytes: Bytes(end_counts.live_bytes),
            peak_live_bytes: Bytes(end_counts.peak_live_bytes),
            cpu_ms: Some(millis(end.cpu_ns - start.cpu_ns)),
        }
    }
}

/// One component's counters and CPU clock at one instant.
#[derive(Debug, Clone, Copy)]
struct ComponentReading {
    counters: AllocCounters,
    cpu_ns: u64,
}

impl ComponentReading {
    fn all() -> [ComponentReading; 3] {
        Component::ALL.map(|component| ComponentReading {
            counters: alloc::component_counters(component),
            cpu_ns: alloc::component_cpu_ns(component),
        })
    }
}

/// `ns` in milliseconds, to the microsecond.
fn millis(ns: u64) -> f64 {
    (ns as f64 / 1e3).round() / 1e3
}

/// Measures one phase: [`PhaseMeter::start`] before it, [`PhaseMeter::finish`] after.
#[derive(Debug)]
pub struct PhaseMeter {
    /// dhat's figures at the start, in the heap-profiling build.
    dhat: Option<dhat::DhatCounters>,
    start: AllocCounters,
    start_by_component: [ComponentReading; 3],
    started: Instant,
    rss_peak_reset: bool,
}

impl PhaseMeter {
    /// Opens the window: resets the RSS and live-bytes peaks, then reads the counters.
    pub fn start() -> PhaseMeter {
        let rss_peak_reset = rss::reset_peak();
        alloc::reset_peak();
        let start_by_component = ComponentReading::all();
        PhaseMeter {
            dhat: dhat::counters(),
            start_by_component,
            start: alloc::counters(),
            started: Instant::now(),
            rss_peak_reset,
        }
    }

    /// Closes the window: reads the counters, then jemalloc and RSS.
    pub fn finish(self) -> Measurement {
        if let Some(start) = self.dhat {
            return self.finish_dhat(start);
        }
        let end = alloc::counters();
        let end_by_component = ComponentReading::all();
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
            components: Some(self.components(&end_by_component)),
        }
    }

    /// The heap-profiling build's measurement: dhat's figures in the counting allocator's
    /// terms (see [`dhat`]); no components, no jemalloc statistics.
    fn finish_dhat(self, start: dhat::DhatCounters) -> Measurement {
        let end = dhat::counters().expect("the profile runs until the process ends");
        let duration = self.started.elapsed();
        let rss = rss::read();
        let blocks = end.blocks - start.blocks;
        // A block made and not freed raised the live count; every other one was freed
        // (a reallocation frees one block and makes another).
        let freed = blocks as i64 - (end.live_blocks as i64 - start.live_blocks as i64);
        Measurement {
            alloc_count: blocks,
            dealloc_count: freed.max(0) as u64,
            realloc_count: 0,
            alloc_bytes: Bytes(end.bytes - start.bytes),
            live_bytes: Bytes(end.live_bytes),
            peak_live_bytes: Bytes(end.peak_bytes),
            jemalloc: None,
            rss_bytes: rss.map(|r| r.current),
            rss_peak_bytes: rss.filter(|_| self.rss_peak_reset).map(|r| r.peak),
            duration_ms: (duration.as_secs_f64() * 1e6).round() / 1e3,
            components: None,
        }
    }

    fn components(&self, end: &[ComponentReading; 3]) -> Components {
        let mut components = Components::default();
        for (i, component) in Component::ALL.into_iter().enumerate() {
            *components.of_mut(component) =
                ComponentMeasurement::between(&self.start_by_component[i], &end[i]);
        }
        components
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

    #[test]
    fn the_meter_splits_a_phase_by_component() {
        let meter = PhaseMeter::start();
        let kept = {
            let _informer = alloc::enter(Component::Informer);
            std::hint::black_box(vec![7u8; 100_000])
        };
        {
            let _apiserver = alloc::enter(Component::ApiServer);
            drop(std::hint::black_box(vec![7u8; 1_000]));
        }
        drop(std::hint::black_box(vec![7u8; 10]));
        let m = meter.finish();
        let c = m.components.unwrap();
        assert_eq!(c.informer.alloc_count, 1);
        assert_eq!(c.informer.alloc_bytes, Bytes(100_000));
        assert_eq!((c.apiserver.alloc_count, c.apiserver.dealloc_count), (1, 1));
        assert_eq!(
            c.apiserver.peak_live_bytes.0 - c.apiserver.live_bytes.0,
            1_000
        );
        assert_eq!(c.harness.alloc_count, 1);
        assert_eq!(
            c.informer.alloc_count + c.apiserver.alloc_count + c.harness.alloc_count,
            m.alloc_count
        );
        drop(kept);
    }

    #[test]
    fn cpu_time_goes_to_the_component_that_spent_it() {
        let meter = PhaseMeter::start();
        let spin =
            |rounds: u64| (0..rounds).fold(0u64, |h, i| std::hint::black_box(h ^ i).rotate_left(5));
        {
            let _apiserver = alloc::enter(Component::ApiServer);
            std::hint::black_box(spin(50_000_000));
        }
        {
            let _informer = alloc::enter(Component::Informer);
            std::hint::black_box(spin(1_000));
        }
        let c = meter.finish().components.unwrap();
        let (apiserver, informer) = (c.apiserver.cpu_ms.unwrap(), c.informer.cpu_ms.unwrap());
        assert!(apiserver > 1.0, "apiserver {apiserver} ms");
        assert!(
            apiserver > 20.0 * informer,
            "apiserver {apiserver} ms, informer {informer} ms"
        );
    }
}

// Unit tests measure with the same allocator the binary installs.
#[cfg(test)]
#[global_allocator]
static TEST_ALLOCATOR: CountingJemalloc = CountingJemalloc;
