//! The figures a phase has, by name: what `check --tolerance`, a scenario's `[gate]` and
//! `diff` call them, whether each is exact run to run, and its default tolerance. At the
//! bottom of the crate, so the scenario (which names them) and the report (which reads
//! them) both reach it.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A figure of a phase that two reports can disagree on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Allocations during the phase.
    AllocCount,
    /// Deallocations during the phase.
    DeallocCount,
    /// Reallocations during the phase.
    ReallocCount,
    /// Bytes requested during the phase.
    AllocBytes,
    /// Bytes live at the phase's end.
    LiveBytes,
    /// Highest live bytes within the phase.
    PeakLiveBytes,
    /// Allocations the informer made during the phase.
    InformerAllocCount,
    /// Bytes the informer requested during the phase.
    InformerAllocBytes,
    /// Bytes of the informer's blocks live at the phase's end.
    InformerLiveBytes,
    /// Highest live bytes of the informer's blocks within the phase.
    InformerPeakLiveBytes,
    /// Allocations the built-in apiserver made during the phase.
    ApiServerAllocCount,
    /// Bytes the built-in apiserver requested during the phase.
    ApiServerAllocBytes,
    /// Bytes of the built-in apiserver's blocks live at the phase's end.
    ApiServerLiveBytes,
    /// Highest live bytes of the built-in apiserver's blocks within the phase.
    ApiServerPeakLiveBytes,
    /// CPU time the built-in apiserver used during the phase (advisory).
    ApiServerCpuMs,
    /// LIST requests.
    ListRequests,
    /// WATCH requests.
    WatchRequests,
    /// Watch events sent.
    WatchEvents,
    /// Response bytes served.
    BytesServed,
    /// `OnAdd` notifications handled, over every handler.
    EventsAdd,
    /// `OnUpdate` notifications with a new resourceVersion handled, over every handler.
    EventsUpdate,
    /// `OnDelete` notifications handled, over every handler.
    EventsDelete,
    /// Resync notifications handled, over every handler.
    EventsSync,
    /// Updates handed on whose old and new objects have different UIDs.
    UidChangedUpdates,
    /// The informers' queue high-water marks in bytes, summed.
    QueuePeakBytes,
    /// The handlers' buffer high-water marks in bytes, summed.
    HandlerPeakBufferBytes,
    /// jemalloc's resident bytes at the phase's end (advisory).
    ResidentBytes,
    /// Process RSS at the phase's end (advisory).
    RssBytes,
    /// Highest RSS within the phase (advisory).
    RssPeakBytes,
    /// Wall-clock duration (advisory).
    DurationMs,
    /// An external variant's Go heap after a forced GC at the phase's end (HeapAlloc).
    SubjectHeapLiveBytes,
    /// An external variant's live Go heap objects at the phase's end (HeapObjects).
    SubjectHeapObjects,
    /// The highest HeapAlloc sampled within the phase (advisory).
    SubjectHeapPeakBytes,
    /// Bytes the program allocated within the phase, the probes' share included (advisory).
    SubjectAllocBytes,
    /// The program's RSS at the phase's end (advisory).
    SubjectRssBytes,
    /// The program's highest RSS within the phase (advisory).
    SubjectRssPeakBytes,
    /// CPU time the program used within the phase (advisory).
    SubjectCpuMs,
}

impl Metric {
    /// Every metric, in the order tables show them.
    pub const ALL: [Metric; 37] = [
        Metric::AllocCount,
        Metric::DeallocCount,
        Metric::ReallocCount,
        Metric::AllocBytes,
        Metric::LiveBytes,
        Metric::PeakLiveBytes,
        Metric::InformerAllocCount,
        Metric::InformerAllocBytes,
        Metric::InformerLiveBytes,
        Metric::InformerPeakLiveBytes,
        Metric::ApiServerAllocCount,
        Metric::ApiServerAllocBytes,
        Metric::ApiServerLiveBytes,
        Metric::ApiServerPeakLiveBytes,
        Metric::ApiServerCpuMs,
        Metric::ListRequests,
        Metric::WatchRequests,
        Metric::WatchEvents,
        Metric::BytesServed,
        Metric::EventsAdd,
        Metric::EventsUpdate,
        Metric::EventsDelete,
        Metric::EventsSync,
        Metric::UidChangedUpdates,
        Metric::QueuePeakBytes,
        Metric::HandlerPeakBufferBytes,
        Metric::ResidentBytes,
        Metric::RssBytes,
        Metric::RssPeakBytes,
        Metric::DurationMs,
        Metric::SubjectHeapLiveBytes,
        Metric::SubjectHeapObjects,
        Metric::SubjectHeapPeakBytes,
        Metric::SubjectAllocBytes,
        Metric::SubjectRssBytes,
        Metric::SubjectRssPeakBytes,
        Metric::SubjectCpuMs,
    ];

    /// The metric's name on the command line and in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::AllocCount => "alloc_count",
            Metric::DeallocCount => "dealloc_count",
            Metric::ReallocCount => "realloc_count",
            Metric::AllocBytes => "alloc_bytes",
            Metric::LiveBytes => "live_bytes",
            Metric::PeakLiveBytes => "peak_live_bytes",
            Metric::InformerAllocCount => "informer_alloc_count",
            Metric::InformerAllocBytes => "informer_alloc_bytes",
            Metric::InformerLiveBytes => "informer_live_bytes",
            Metric::InformerPeakLiveBytes => "informer_peak_live_bytes",
            Metric::ApiServerAllocCount => "apiserver_alloc_count",
            Metric::ApiServerAllocBytes => "apiserver_alloc_bytes",
            Metric::ApiServerLiveBytes => "apiserver_live_bytes",
            Metric::ApiServerPeakLiveBytes => "apiserver_peak_live_bytes",
            Metric::ApiServerCpuMs => "apiserver_cpu_ms",
            Metric::ListRequests => "list_requests",
            Metric::WatchRequests => "watch_requests",
            Metric::WatchEvents => "watch_events",
            Metric::BytesServed => "bytes_served",
            Metric::EventsAdd => "events_add",
            Metric::EventsUpdate => "events_update",
            Metric::EventsDelete => "events_delete",
            Metric::EventsSync => "events_sync",
            Metric::UidChangedUpdates => "uid_changed_updates",
            Metric::QueuePeakBytes => "queue_peak_bytes",
            Metric::HandlerPeakBufferBytes => "handler_peak_buffer_bytes",
            Metric::ResidentBytes => "resident_bytes",
            Metric::RssBytes => "rss_bytes",
            Metric::RssPeakBytes => "rss_peak_bytes",
            Metric::DurationMs => "duration_ms",
            Metric::SubjectHeapLiveBytes => "subject_heap_live_bytes",
            Metric::SubjectHeapObjects => "subject_heap_objects",
            Metric::SubjectHeapPeakBytes => "subject_heap_peak_bytes",
            Metric::SubjectAllocBytes => "subject_alloc_bytes",
            Metric::SubjectRssBytes => "subject_rss_bytes",
            Metric::SubjectRssPeakBytes => "subject_rss_peak_bytes",
            Metric::SubjectCpuMs => "subject_cpu_ms",
        }
    }

    /// Whether the figure repeats exactly run to run on one build.
    pub fn is_exact(self) -> bool {
        !self.is_subject()
            && !matches!(
                self,
                Metric::ResidentBytes
                    | Metric::ApiServerCpuMs
                    | Metric::RssBytes
                    | Metric::RssPeakBytes
                    | Metric::DurationMs
            )
    }

    /// Whether the figure is a high-water mark within the phase.
    pub fn is_peak(self) -> bool {
        matches!(
            self,
            Metric::PeakLiveBytes
                | Metric::InformerPeakLiveBytes
                | Metric::ApiServerPeakLiveBytes
                | Metric::QueuePeakBytes
                | Metric::HandlerPeakBufferBytes
                | Metric::SubjectHeapPeakBytes
                | Metric::RssPeakBytes
                | Metric::SubjectRssPeakBytes
        )
    }

    /// Whether the figure is an amount of memory, in bytes (the rest are counts and
    /// milliseconds).
    pub fn is_bytes(self) -> bool {
        matches!(
            self,
            Metric::AllocBytes
                | Metric::LiveBytes
                | Metric::PeakLiveBytes
                | Metric::InformerAllocBytes
                | Metric::InformerLiveBytes
                | Metric::InformerPeakLiveBytes
                | Metric::ApiServerAllocBytes
                | Metric::ApiServerLiveBytes
                | Metric::ApiServerPeakLiveBytes
                | Metric::BytesServed
                | Metric::QueuePeakBytes
                | Metric::HandlerPeakBufferBytes
                | Metric::ResidentBytes
                | Metric::RssBytes
                | Metric::RssPeakBytes
                | Metric::SubjectHeapLiveBytes
                | Metric::SubjectHeapPeakBytes
                | Metric::SubjectAllocBytes
                | Metric::SubjectRssBytes
                | Metric::SubjectRssPeakBytes
        )
    }

    /// Whether the figure is an external variant's program's, measured from outside.
    pub fn is_subject(self) -> bool {
        matches!(
            self,
            Metric::SubjectHeapLiveBytes
                | Metric::SubjectHeapObjects
                | Metric::SubjectHeapPeakBytes
                | Metric::SubjectAllocBytes
                | Metric::SubjectRssBytes
                | Metric::SubjectRssPeakBytes
                | Metric::SubjectCpuMs
        )
    }

    /// The tolerance `check` applies unless told otherwise, in percent: counts and bytes
    /// requested are exact (0%), live and peak bytes of the heap 1% (a new dependency's
    /// static data moves them a little), advisory figures are not gated. The queues' and
    /// buffers' peaks are computed from their containers' capacities, exact (0%). A
    /// program's live heap after a forced GC, and its live objects, 5%: a Go program on a
    /// real clock does not allocate the same run to run, but what it keeps is steady.
    pub fn default_tolerance(self) -> Option<f64> {
        match self {
            Metric::SubjectHeapLiveBytes | Metric::SubjectHeapObjects => Some(5.0),
            Metric::LiveBytes
            | Metric::PeakLiveBytes
            | Metric::InformerLiveBytes
            | Metric::InformerPeakLiveBytes
            | Metric::ApiServerLiveBytes
            | Metric::ApiServerPeakLiveBytes => Some(1.0),
            m if m.is_exact() => Some(0.0),
            _ => None,
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Metric {
    type Err = String;

    fn from_str(s: &str) -> Result<Metric, String> {
        Metric::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Metric::ALL.iter().map(|m| m.as_str()).collect();
                format!("unknown metric {s:?}; expected one of {}", names.join(", "))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metrics_in_bytes_are_the_ones_named_so() {
        for metric in Metric::ALL {
            assert_eq!(
                metric.is_bytes(),
                metric.as_str().split('_').any(|word| word == "bytes"),
                "{metric}"
            );
        }
    }
}
