//! The timeline: samples taken within a phase, so a report shows how memory moved between
//! the phase's start and end, not only the two ends and the peak.
//!
//! Samples are placed by the program's own work, never by wall time: every `every` bytes
//! allocated (counted by the allocator) or every `every` objects the apiserver sends (LIST
//! items and watch events). The same build therefore takes the same samples at the same
//! points, and each sample's exact figures repeat run to run. A sample reads the counting
//! allocator's live bytes by component (exact) and, beside them, jemalloc's resident bytes
//! and the process RSS (advisory).
//!
//! Sampling never allocates from the global allocator: a byte sample is taken from inside
//! the allocator (see [`super::alloc`]), so the samples sit in a buffer from [`System`],
//! the advisory figures are read with mallctl and a stack buffer, and the exact figures
//! of a phase are the same with the timeline on or off. When the buffer is full, every
//! other sample is dropped and the interval doubles: a phase of any length keeps at most
//! `max_samples`, evenly spread.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::alloc::{self, Component};
use units::Bytes;

/// What a scenario's `[timeline]` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineSpec {
    /// How far apart samples are.
    pub every: Every,
    /// Most samples kept per phase (even).
    pub max_samples: u64,
}

impl TimelineSpec {
    /// Samples kept per phase unless the scenario says otherwise.
    pub const DEFAULT_MAX_SAMPLES: u64 = 200;
    /// The most a scenario may ask for.
    pub const MOST_SAMPLES: u64 = 100_000;
}

/// The distance between two samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Every {
    /// Bytes allocated by the process (all components), as `alloc_bytes` counts them.
    AllocatedBytes(u64),
    /// Objects the built-in apiserver sends: LIST items and watch events.
    Events(u64),
}

impl FromStr for Every {
    type Err = String;

    /// `"4 MiB"`, `"512KiB"`, `"1000000 B"` or `"500 events"`.
    fn from_str(text: &str) -> Result<Every, String> {
        let trimmed = text.trim();
        let split = trimmed
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(trimmed.len());
        let (number, unit) = trimmed.split_at(split);
        let n: u64 = number
            .parse()
            .map_err(|_| format!("{text:?} does not start with a whole number"))?;
        let scale = match unit.trim() {
            "event" | "events" => {
                return match n {
                    0 => Err("the interval must be at least 1 event".to_owned()),
                    n => Ok(Every::Events(n)),
                };
            }
            "B" => 1,
            "KiB" => 1 << 10,
            "MiB" => 1 << 20,
            "GiB" => 1 << 30,
            other => {
                return Err(format!(
                    "unknown unit {other:?}: expected B, KiB, MiB, GiB or events"
                ));
            }
        };
        match n.checked_mul(scale) {
            Some(bytes) if bytes >= 1024 => Ok(Every::AllocatedBytes(bytes)),
            Some(_) => Err("the interval must be at least 1 KiB".to_owned()),
            None => Err(format!("{text:?} is too large")),
        }
    }
}

impl fmt::Display for Every {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Every::AllocatedBytes(n) => write!(f, "{} allocated", Bytes(*n)),
            Every::Events(n) => write!(f, "{n} events"),
        }
    }
}

/// One point of a phase's timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    /// Bytes allocated since the phase began, when the sample was taken (exact).
    pub alloc_bytes: Bytes,
    /// Objects the apiserver had sent since the phase began (exact).
    pub events: u64,
    /// Bytes live in the process (exact).
    pub live_bytes: Bytes,
    /// Bytes live by component (exact).
    pub components: LiveByComponent,
    /// jemalloc's resident bytes (advisory; absent where jemalloc is not the allocator).
    pub resident_bytes: Option<Bytes>,
    /// The process RSS (advisory).
    pub rss_bytes: Option<Bytes>,
}

/// Live bytes of each component at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveByComponent {
    /// The informer under test.
    pub informer: Bytes,
    /// The built-in apiserver.
    pub apiserver: Bytes,
    /// The runtime, the phase driver and the measurement.
    pub harness: Bytes,
}

/// The timeline of the phase in progress on this thread; [`Timeline::finish`] hands over
/// its samples. Only one is open at a time.
#[derive(Debug)]
#[must_use = "a timeline samples until it is finished"]
pub struct Timeline {
    _open: (),
}

struct Recorder {
    /// Samples, in memory from [`System`]: `capacity` of them, `len` written.
    buffer: Cell<*mut Sample>,
    capacity: Cell<usize>,
    len: Cell<usize>,
    /// Distance between samples now (doubles each time the buffer fills).
    interval: Cell<u64>,
    /// Whether samples are placed by events (else by allocated bytes).
    by_events: Cell<bool>,
    /// The process's allocated bytes when the phase began.
    start_alloc_bytes: Cell<u64>,
    /// Objects sent since the phase began, and how many more until the next sample.
    events: Cell<u64>,
    events_left: Cell<u64>,
}

thread_local! {
    // `const` and without destructor, as the allocator's own state: read from inside it.
    static RECORDER: Recorder = const {
        Recorder {
            buffer: Cell::new(std::ptr::null_mut()),
            capacity: Cell::new(0),
            len: Cell::new(0),
            interval: Cell::new(0),
            by_events: Cell::new(false),
            start_alloc_bytes: Cell::new(0),
            events: Cell::new(0),
            events_left: Cell::new(u64::MAX),
        }
    };
}

impl Timeline {
    /// Starts sampling the calling thread's phase as `spec` says. Allocates only from
    /// [`System`], so opening the timeline changes no exact figure.
    pub fn start(spec: TimelineSpec) -> Timeline {
        let capacity = spec.max_samples.max(2) as usize;
        let layout = Layout::array::<Sample>(capacity).expect("at most 100,000 samples");
        // SAFETY: the layout's size is non-zero (at least two samples).
        let buffer = unsafe { System.alloc(layout) }.cast::<Sample>();
        if buffer.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        RECORDER.with(|r| {
            debug_assert!(r.buffer.get().is_null(), "one timeline at a time");
            r.buffer.set(buffer);
            r.capacity.set(capacity);
            r.len.set(0);
            r.events.set(0);
            r.start_alloc_bytes.set(alloc::counters().alloc_bytes);
            match spec.every {
                Every::AllocatedBytes(n) => {
                    r.by_events.set(false);
                    r.interval.set(n);
                    r.events_left.set(u64::MAX);
                    alloc::set_sample_hook(bytes_sample_due);
                    alloc::sample_after(n);
                }
                Every::Events(n) => {
                    r.by_events.set(true);
                    r.interval.set(n);
                    r.events_left.set(n);
                }
            }
        });
        Timeline { _open: () }
    }

    /// Stops sampling and returns the samples, oldest first. Call it after the phase's
    /// measurement is read: the returned `Vec` is the harness's.
    pub fn finish(self) -> Vec<Sample> {
        alloc::sample_after(u64::MAX);
        let (buffer, len, capacity) = RECORDER.with(|r| {
            r.events_left.set(u64::MAX);
            (
                r.buffer.replace(std::ptr::null_mut()),
                r.len.replace(0),
                r.capacity.replace(0),
            )
        });
        // SAFETY: `buffer` holds `len` samples written by `record`, and nothing else
        // points to it any more.
        let samples = unsafe { std::slice::from_raw_parts(buffer, len) }.to_vec();
        let layout = Layout::array::<Sample>(capacity).expect("as allocated");
        // SAFETY: allocated by `start` from `System` with this layout.
        unsafe { System.dealloc(buffer.cast(), layout) };
        samples
    }
}

/// Counts one object sent by the apiserver (a LIST item or a watch event), and samples if
/// the timeline is placed by events and one is due.
pub fn object_sent() {
    RECORDER.with(|r| {
        if r.buffer.get().is_null() {
            return;
        }
        r.events.set(r.events.get() + 1);
        if !r.by_events.get() {
            return;
        }
        let left = r.events_left.get() - 1;
        r.events_left.set(left);
        if left == 0 {
            let next = record(r);
            r.events_left.set(next);
        }
    });
}

/// Takes a byte-placed sample; the allocator calls it (its sample hook) when one is due.
/// Returns the bytes until the next one.
fn bytes_sample_due() -> u64 {
    RECORDER.with(|r| {
        if r.buffer.get().is_null() || r.by_events.get() {
            u64::MAX
        } else {
            record(r)
        }
    })
}

/// Writes one sample (halving the buffer first when it is full) and returns the interval
/// to the next. Allocates nothing from the global allocator.
fn record(r: &Recorder) -> u64 {
    let buffer = r.buffer.get();
    let mut len = r.len.get();
    if len == r.capacity.get() {
        // Keep the odd-numbered samples (the last among them): the kept ones are twice
        // the interval apart, as the following ones will be.
        for i in 0..len / 2 {
            // SAFETY: `2i + 1 < len <= capacity`, all written.
            unsafe { buffer.add(i).write(buffer.add(2 * i + 1).read()) };
        }
        len /= 2;
        r.interval.set(r.interval.get().saturating_mul(2));
    }
    let total = alloc::counters();
    let live = |c| Bytes(alloc::component_counters(c).live_bytes);
    let sample = Sample {
        alloc_bytes: Bytes(total.alloc_bytes - r.start_alloc_bytes.get()),
        events: r.events.get(),
        live_bytes: Bytes(total.live_bytes),
        components: LiveByComponent {
            informer: live(Component::Informer),
            apiserver: live(Component::ApiServer),
            harness: live(Component::Harness),
        },
        resident_bytes: super::jemalloc::resident_unflushed(),
        rss_bytes: super::rss::current_without_allocating(),
    };
    // SAFETY: `len < capacity` now.
    unsafe { buffer.add(len).write(sample) };
    r.len.set(len + 1);
    r.interval.get()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_parse_in_bytes_or_events() {
        assert_eq!("4 MiB".parse(), Ok(Every::AllocatedBytes(4 << 20)));
        assert_eq!("512KiB".parse(), Ok(Every::AllocatedBytes(512 << 10)));
        assert_eq!("2048 B".parse(), Ok(Every::AllocatedBytes(2048)));
        assert_eq!("500 events".parse(), Ok(Every::Events(500)));
        assert!("1 event".parse::<Every>().is_ok());
        for bad in ["", "MiB", "4 MB", "-1 MiB", "0 events", "100 B", "1.5 MiB"] {
            assert!(bad.parse::<Every>().is_err(), "{bad:?}");
        }
        assert!(
            "99999999999 GiB"
                .parse::<Every>()
                .unwrap_err()
                .contains("too large")
        );
    }

    #[test]
    fn samples_follow_allocated_bytes_and_change_no_exact_figure() {
        let _informer = alloc::enter(Component::Informer);
        let before = alloc::counters();
        let timeline = Timeline::start(TimelineSpec {
            every: Every::AllocatedBytes(64 << 10),
            max_samples: 8,
        });
        let mut kept = Vec::new();
        for _ in 0..64 {
            kept.push(std::hint::black_box(vec![1u8; 16 << 10]));
        }
        let after = alloc::counters();
        let samples = timeline.finish();
        // 64 blocks of 16 KiB plus the Vec's growth: past 1 MiB, so 16+ samples were
        // due, halved to at most 8, each further along and holding more than the last.
        assert!((4..=8).contains(&samples.len()), "{samples:?}");
        assert!(
            samples
                .windows(2)
                .all(|w| w[0].alloc_bytes < w[1].alloc_bytes
                    && w[0].components.informer < w[1].components.informer)
        );
        let last = samples.last().unwrap();
        assert!(last.alloc_bytes.0 <= after.alloc_bytes - before.alloc_bytes);
        assert!(last.alloc_bytes.0 >= 512 << 10);
        // Sampling allocated nothing: only the 64 blocks and the Vec's growth counted.
        assert_eq!(after.allocs - before.allocs, 64 + 1);
        drop(kept);
    }

    #[test]
    fn samples_follow_events_when_asked() {
        let timeline = Timeline::start(TimelineSpec {
            every: Every::Events(10),
            max_samples: 100,
        });
        for _ in 0..35 {
            object_sent();
        }
        let samples = timeline.finish();
        assert_eq!(
            samples.iter().map(|s| s.events).collect::<Vec<_>>(),
            [10, 20, 30]
        );
        // Closed: no more counting.
        object_sent();
        assert_eq!(RECORDER.with(|r| r.events.get()), 35);
    }
}
