//! The report: a data model produced once per run; the stages write into it (the informer
//! its events, the apiserver its request counts, the runner its measurements), and every
//! output only reads it: the table and markdown ([`render_table`], [`render_markdown`]),
//! JSON, the chart ([`chart`]), the comparison that `diff` and `check` render
//! ([`compare`], [`diff`]) and the benchmark exports ([`export`]). Its JSON keys are a public interface,
//! versioned by [`FORMAT_VERSION`]: keys may be added within a version, never renamed or
//! removed.

pub mod chart;
pub mod compare;
pub mod diff;
pub mod export;
pub mod fit;
pub mod junit;
pub mod recommend;
pub mod shard;
pub mod size;
mod subject;
mod sweep_chart;
#[cfg(test)]
mod synthetic;
mod table;

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use subject::{
    CollectionReads, GoHeap, HeapPeakSource, ProcessShare, RefusedRequest, SubjectFigures,
    SubjectReport,
};
pub use table::{Shown, render_markdown, render_table, thousands};

use std::collections::{BTreeMap, HashMap};

use files::input::{MAX_REPORT_BYTES, read_limited};
use k8s::{Identity, TruthEntry};
use measure::dhat::Allocator;
use measure::timeline::{Sample, TimelineSpec};
use measure::{Components, Measurement};
use scenario::metric::Metric;
use scenario::{
    ApiServerSpec, ObjectSpec, Phase, PhaseKind, Scenario, Scope, ServerSide, Sweep, VariantConfig,
};
use units::Bytes;

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Requests served, by verb; the report's `api_requests`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestCounts {
    /// LIST requests, one per page.
    pub list: u64,
    /// WATCH requests.
    pub watch: u64,
    /// Events sent on watches (ADDED, MODIFIED, DELETED, BOOKMARK and ERROR lines).
    pub watch_events: u64,
    /// Of `watch_events`, the BOOKMARKs: the one that ends a watch-list's initial events,
    /// and the periodic ones a server sends about once a minute to a watch that allowed
    /// them (so a long phase reads more of them than a short one).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bookmarks: u64,
    /// Requests answered 410 Expired (a LIST's status, or a watch's ERROR event).
    pub expired: u64,
    /// Watches ended because their client read too slowly (see the apiserver's `dispatch`).
    pub watchers_terminated: u64,
    /// Watches that began with the state as ADDED events (`resourceVersion=0` or unset,
    /// or a watch-list) and whose client has read all of them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub initial_events_completed: u64,
    /// Response body bytes of LISTs and WATCHes.
    pub bytes: u64,
}

impl RequestCounts {
    /// The requests served since `earlier`.
    pub fn since(self, earlier: RequestCounts) -> RequestCounts {
        RequestCounts {
            list: self.list - earlier.list,
            watch: self.watch - earlier.watch,
            watch_events: self.watch_events - earlier.watch_events,
            bookmarks: self.bookmarks - earlier.bookmarks,
            expired: self.expired - earlier.expired,
            watchers_terminated: self.watchers_terminated - earlier.watchers_terminated,
            initial_events_completed: self.initial_events_completed
                - earlier.initial_events_completed,
            bytes: self.bytes - earlier.bytes,
        }
    }
}

/// Version of the report format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FormatVersion(pub u32);

/// The format this build writes.
pub const FORMAT_VERSION: FormatVersion = FormatVersion(1);

/// One run of one scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Report format version.
    pub format_version: FormatVersion,
    /// The tool that wrote the report.
    pub tool: Tool,
    /// The scenario that was run.
    pub scenario: ScenarioInfo,
    /// One entry per variant, in scenario order.
    pub variants: Vec<VariantReport>,
    /// The real server the variants ran against (`run --kubeconfig`); absent for the
    /// built-in apiserver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<RealServer>,
    /// A sweep's lines: each variant's live and peak bytes in each phase against the
    /// swept key (`scenario.sweep`), fitted through every point.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fits: Vec<fit::Fit>,
    /// The share of the run this report holds (`run --shard I/N`), which `merge` joins
    /// with the others; absent in a whole run's report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<shard::Shard>,
}

/// A real kube-apiserver's side of a phase, from its `/metrics` read before and after it
/// (the whole process: with servers/kube-apiserver, its embedded etcd too). Advisory: a
/// Go runtime's counters, and the server's own work meanwhile, are in them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KubeApiServerFigures {
    /// `go_memstats_alloc_bytes_total`'s growth.
    pub alloc_bytes: u64,
    /// `go_memstats_mallocs_total`'s growth.
    pub alloc_count: u64,
    /// `process_cpu_seconds_total`'s growth, in ms (10 ms steps).
    pub cpu_ms: u64,
    /// `go_memstats_heap_inuse_bytes` at the phase's end.
    pub heap_inuse_bytes: u64,
    /// Watch events the server sent in the phase, to the informer and to the plain
    /// `watchers`, as they read them (lines).
    pub events_sent: u64,
    /// Watch and LIST bytes they read.
    pub bytes_sent: u64,
    /// Its process's RSS at the phase's start, at its end, and the highest within it
    /// (the kernel's high-water mark, reset at the start), with `run --server-pid` for a
    /// server on this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<ServerProcess>,
    /// Its heap profile (`/debug/pprof/heap`) at the phase's end, a file beside the
    /// report, readable by `go tool pprof`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_profile: Option<String>,
}

/// A real server's process through a phase, read from `/proc` (advisory).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerProcess {
    /// RSS when the phase started.
    pub rss_start_bytes: Bytes,
    /// RSS when it ended.
    pub rss_bytes: Bytes,
    /// The highest RSS within it; absent where the kernel did not let the run reset the
    /// high-water mark.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_peak_bytes: Option<Bytes>,
}

/// A real server a report was made against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RealServer {
    /// Its URL, from the kubeconfig.
    pub url: String,
    /// Its `/version` `gitVersion`.
    pub version: String,
    /// Whether the run only read (`--read-only`): the informers watched every namespace.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
    /// Whether the run started it itself (`run --server kube-apiserver`): a new
    /// servers/kube-apiserver holding the run's objects alone.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub started_by_run: bool,
}

/// The tool that wrote a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tool {
    /// Always `informer-mem`.
    pub name: String,
    /// The crate version.
    pub version: String,
    /// The allocator that measured the exact figures: `counting-jemalloc` (absent), or
    /// `dhat` in the heap-profiling build, whose figures follow dhat's model.
    #[serde(default, skip_serializing_if = "Allocator::is_default")]
    pub allocator: Allocator,
}

impl Tool {
    /// This build.
    pub fn current() -> Tool {
        Tool {
            // The tool, not this crate; every crate of the workspace has its version.
            name: "informer-mem".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            allocator: if measure::dhat::build() {
                Allocator::Dhat
            } else {
                Allocator::CountingJemalloc
            },
        }
    }
}

/// The scenario, as far as a reader of the report needs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioInfo {
    /// The scenario's name.
    pub name: String,
    /// The scenario's description.
    pub description: String,
    /// The scenario file, as given on the command line.
    pub file: String,
    /// The objects served, every shape setting included.
    pub objects: ObjectSpec,
    /// The apiserver's settings.
    pub apiserver: ApiServerSpec,
    /// The scenario's `[gate]`: `check`'s tolerances in percent, over the defaults.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub gate: BTreeMap<Metric, f64>,
    /// The scenario's `[timeline]`: how the phases' `samples` were placed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<TimelineSpec>,
    /// The sweep the run made: the key of `objects` it varied and its values, one point
    /// each (`objects` holds the key's plain value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Sweep>,
}

impl ScenarioInfo {
    /// The report's view of `scenario`.
    pub fn of(scenario: &Scenario) -> ScenarioInfo {
        ScenarioInfo {
            name: scenario.name.clone(),
            description: scenario.description.clone(),
            file: scenario.file.display().to_string(),
            objects: scenario.objects.clone(),
            apiserver: scenario.apiserver.clone(),
            gate: scenario.gate.clone(),
            timeline: scenario.timeline,
            sweep: scenario.sweep.clone(),
        }
    }
}

/// One variant's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariantReport {
    /// The variant's name.
    pub name: String,
    /// Every setting of the variant, defaults included.
    pub config: VariantConfig,
    /// The apiserver's side of the variant's process: plain watchers, shared encodings.
    #[serde(default, skip_serializing_if = "ServerSide::is_default")]
    pub server: ServerSide,
    /// The objects its informer asked for: `label_selector`, `field_selector` (all,
    /// when absent).
    #[serde(default, skip_serializing_if = "Scope::is_default")]
    pub scope: Scope,
    /// Why the variant did not finish (its process crashed, or a phase failed); the phases
    /// it completed are still listed.
    pub error: Option<String>,
    /// What the process held before the first phase: the apiserver's compact state, the
    /// runtime and the harness. Every phase's `live_bytes` includes it.
    pub setup: Option<SetupReport>,
    /// Completed phases, in order.
    pub phases: Vec<PhaseReport>,
    /// An external variant's program; `None` for the built-in informers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<Box<SubjectReport>>,
    /// In a sweep, the swept key's value at this variant's point (its name ends with
    /// `@ key=value`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point: Option<u64>,
}

/// The process before the first phase.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SetupReport {
    /// Allocations made to set up (exact).
    pub alloc_count: u64,
    /// Bytes live when the first phase starts (exact).
    pub live_bytes: Bytes,
    /// Process RSS then (advisory).
    pub rss_bytes: Option<Bytes>,
    /// The exact figures by component (absent from reports written before attribution).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub components: Option<Components>,
}

impl SetupReport {
    /// The report of a setup measurement.
    pub fn new(m: &Measurement) -> SetupReport {
        SetupReport {
            alloc_count: m.alloc_count,
            live_bytes: m.live_bytes,
            rss_bytes: m.rss_bytes,
            components: m.components,
        }
    }
}

/// One phase of one variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseReport {
    /// The phase's name.
    pub name: String,
    /// The phase's kind.
    pub kind: PhaseKind,
    /// Whether its pods were deleted gracefully (`graceful`): MODIFIED events before each
    /// DELETED one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub graceful: bool,
    /// Objects in the informer's store at the phase's end.
    pub objects: u64,
    /// Objects on the server at the phase's end.
    pub server_objects: u64,
    /// What the phase cost; its fields appear at this level of the JSON.
    #[serde(flatten)]
    pub measurement: Measurement,
    /// Requests the apiserver served during the phase.
    pub api_requests: RequestCounts,
    /// The store against the server's truth at the phase's end; its fields appear at this
    /// level of the JSON. (Keys added within format 1 read with defaults from reports
    /// written before them.)
    #[serde(flatten, default)]
    pub consistency: Consistency,
    /// Whether the scenario expects the store to match the server at the phase's end.
    #[serde(default = "expected")]
    pub expect_consistent: bool,
    /// `peak_live_bytes / live_bytes`: how far above what it keeps the process rose
    /// within the phase (exact; 0 when nothing is live).
    #[serde(default)]
    pub peak_over_live: f64,
    /// For a `settle` phase: what the process held before and after (advisory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<SettleReport>,
    /// The phase's timeline, oldest first, when the scenario has a `[timeline]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<Sample>,
    /// What the queues and handlers did, for a variant that has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<EventsReport>,
    /// Whether the informer had its whole initial state when the phase ended: false only
    /// when it could not get it while a `churn` went on (the phase then ends with the
    /// churn instead of waiting).
    #[serde(default = "expected", skip_serializing_if = "is_true")]
    pub informer_synced: bool,
    /// An external variant's program, measured from outside; its store is the one the
    /// consistency fields judge, when the program serves the status protocol.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<Box<SubjectFigures>>,
    /// A real kube-apiserver's own figures for the phase (`run --kubeconfig`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_apiserver: Option<KubeApiServerFigures>,
}

fn is_true(b: &bool) -> bool {
    *b
}

/// Notifications by type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventCounts {
    /// `OnAdd`.
    pub add: u64,
    /// `OnUpdate` with a new resourceVersion.
    pub update: u64,
    /// `OnDelete`.
    pub delete: u64,
    /// `OnUpdate` with the same resourceVersion: a resync.
    pub sync: u64,
}

impl EventCounts {
    /// Every notification.
    pub fn total(&self) -> u64 {
        self.add + self.update + self.delete + self.sync
    }

    fn plus(self, other: EventCounts) -> EventCounts {
        EventCounts {
            add: self.add + other.add,
            update: self.update + other.update,
            delete: self.delete + other.delete,
            sync: self.sync + other.sync,
        }
    }
}

/// A phase's events, over every informer of the variant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventsReport {
    /// Notifications handled in the phase, by every handler together.
    pub delivered: EventCounts,
    /// Updates handed to handlers whose old and new objects have different UIDs: a
    /// delete and recreate the informer took for a change.
    pub uid_changed_updates: u64,
    /// Each running informer (one when shared).
    pub informers: Vec<InformerEventsReport>,
}

impl EventsReport {
    /// The totals of `informers`.
    pub fn of(informers: Vec<InformerEventsReport>) -> EventsReport {
        let handlers = informers.iter().flat_map(|i| &i.handlers);
        EventsReport {
            delivered: handlers.fold(EventCounts::default(), |sum, h| sum.plus(h.delivered)),
            uid_changed_updates: informers.iter().map(|i| i.uid_changed_updates).sum(),
            informers,
        }
    }
}

/// One informer's queue and handlers in a phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InformerEventsReport {
    /// The queue between its reflector and its store.
    pub queue: QueueReport,
    /// When the informer reported synced, in virtual ms after it started; `None` while not.
    pub synced_at_ms: Option<u64>,
    /// Updates with different UIDs handed on in the phase.
    pub uid_changed_updates: u64,
    /// Each handler, in registration order.
    pub handlers: Vec<HandlerReport>,
}

/// A queue's high-water marks in a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueReport {
    /// DeltaFIFO or RealFIFO.
    pub kind: scenario::QueueKind,
    /// Most entries waiting at once: keys (DeltaFIFO) or deltas (RealFIFO).
    pub peak_len: u64,
    /// Most heap its containers held at once (keys, delta lists, tables; computed from
    /// their capacities). The objects are shared with the store and counted there.
    pub peak_bytes: u64,
}

/// One handler in a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandlerReport {
    /// Notifications it handled in the phase.
    pub delivered: EventCounts,
    /// Most notifications waiting in its buffer at once.
    pub peak_buffered: u64,
    /// Most bytes its buffer held at once (capacity times the notification's size; the
    /// objects are shared with the store).
    pub peak_buffer_bytes: u64,
    /// When its `HasSynced` turned true, in virtual ms after the informer started; `None`
    /// while not.
    pub synced_at_ms: Option<u64>,
    /// What it pays per notification, in virtual ms.
    pub cost_ms: u64,
}

/// What a `settle` phase gave back to the OS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettleReport {
    /// When the phase started.
    pub before: Holding,
    /// When it ended.
    pub after: Holding,
}

/// What the process holds from the OS at one moment (advisory: the kernel's and jemalloc's
/// view, not the program's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holding {
    /// jemalloc's resident bytes: pages it has touched and not given back.
    pub resident: Option<Bytes>,
    /// jemalloc's retained bytes: virtual memory kept for reuse, not resident.
    pub retained: Option<Bytes>,
    /// The process's RSS.
    pub rss: Option<Bytes>,
}

impl Holding {
    /// What a measurement read at its end.
    pub fn of(m: &Measurement) -> Holding {
        Holding {
            resident: m.jemalloc.map(|j| j.resident),
            retained: m.jemalloc.map(|j| j.retained),
            rss: m.rss_bytes,
        }
    }
}

fn expected() -> bool {
    true
}

/// The consistency oracle's verdict on one store: its keys, resourceVersions and UIDs
/// against the server's live objects.
///
/// A report written before the oracle existed reads as not `consistent`: nothing was
/// checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Consistency {
    /// The store holds exactly the server's objects, each at the server's version.
    pub consistent: bool,
    /// Objects on the server that the store lacks.
    pub missing: u64,
    /// Keys in the store that no live object on the server has.
    pub extra: u64,
    /// Keys in both whose resourceVersion or UID differ.
    pub stale: u64,
}

impl Consistency {
    /// Two stores together: consistent when both are; their differences added up.
    pub fn and(self, other: Consistency) -> Consistency {
        Consistency {
            consistent: self.consistent && other.consistent,
            missing: self.missing + other.missing,
            extra: self.extra + other.extra,
            stale: self.stale + other.stale,
        }
    }

    /// Compares a store's identities with the server's truth.
    pub fn check(truth: &[TruthEntry], store: &[Identity]) -> Consistency {
        let server: HashMap<&str, &TruthEntry> =
            truth.iter().map(|t| (t.key.as_str(), t)).collect();
        let mut seen = 0u64;
        let mut extra = 0;
        let mut stale = 0;
        for entry in store {
            match server.get(entry.key.as_str()) {
                None => extra += 1,
                Some(t) => {
                    seen += 1;
                    if t.uid != entry.uid
                        || t.resource_version.to_string() != entry.resource_version
                    {
                        stale += 1;
                    }
                }
            }
        }
        let missing = server.len() as u64 - seen;
        Consistency {
            consistent: missing == 0 && extra == 0 && stale == 0,
            missing,
            extra,
            stale,
        }
    }
}

impl PhaseReport {
    /// Whether the oracle read the informer's store: always for the built-in informers,
    /// for an external variant's program only through the status protocol.
    pub fn store_checked(&self) -> bool {
        self.subject.as_ref().is_none_or(|s| s.store_checked)
    }

    /// The report of `phase` from its measurement and the informer's and server's counts.
    pub fn new(
        phase: &Phase,
        measurement: Measurement,
        objects: u64,
        server_objects: u64,
        api_requests: RequestCounts,
        consistency: Consistency,
    ) -> PhaseReport {
        let peak_over_live = measurement.peak_live_bytes.ratio_of(measurement.live_bytes);
        PhaseReport {
            name: phase.name.clone(),
            kind: phase.action.kind(),
            graceful: phase.graceful,
            objects,
            server_objects,
            measurement,
            api_requests,
            consistency,
            expect_consistent: phase.expect_consistent,
            peak_over_live: (peak_over_live * 1000.0).round() / 1000.0,
            settle: None,
            samples: Vec::new(),
            events: None,
            informer_synced: true,
            subject: None,
            kube_apiserver: None,
        }
    }
}

/// Failure to write or read a report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading the file failed.
    #[error("failed to read report `{}`", path.display())]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The file is not a report this build can read.
    #[error("failed to read report `{}`: {why}", path.display())]
    Invalid {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// Writing the file failed.
    #[error("failed to write report `{}`", path.display())]
    Write {
        /// The file.
        path: std::path::PathBuf,
        /// What failed.
        source: std::io::Error,
    },
}

impl Report {
    /// Reads a report written by `run`. A report of another format version is refused
    /// before anything else is read from it, since its keys may mean other things.
    pub fn read(path: &Path) -> Result<Report, Error> {
        let text = read_limited(path, MAX_REPORT_BYTES).map_err(|source| Error::Read {
            path: path.to_owned(),
            source,
        })?;
        let invalid = |why: String| Error::Invalid {
            path: path.to_owned(),
            why,
        };
        let value: serde_json::Value =
            serde_json::from_slice(&text).map_err(|e| invalid(format!("not JSON: {e}")))?;
        match value
            .get("format_version")
            .and_then(serde_json::Value::as_u64)
        {
            Some(v) if v == u64::from(FORMAT_VERSION.0) => {}
            Some(v) => {
                return Err(invalid(format!(
                    "format_version {v} is not one this build reads ({}); use the \
                     informer-mem that wrote it, or run the scenario again",
                    FORMAT_VERSION.0
                )));
            }
            None => {
                return Err(invalid(
                    "no `format_version`: not an informer-mem report".to_owned(),
                ));
            }
        }
        // Read again from the text, for the key path and the line of whatever is wrong.
        let mut json = serde_json::Deserializer::from_slice(&text);
        serde_path_to_error::deserialize(&mut json).map_err(|e| {
            let key = e.path().to_string();
            let inner = e.into_inner();
            let message = inner.to_string();
            // serde_json ends its message with the place; the key and line go first here.
            let message = message
                .rsplit_once(" at line ")
                .map_or(message.as_str(), |(m, _)| m)
                .replace("expected u64", "expected a whole number")
                .replace("expected i64", "expected an integer")
                .replace("expected f64", "expected a number");
            invalid(format!(
                "at `{key}` (line {}): not a valid report: {message}",
                inner.line()
            ))
        })
    }

    /// Phases whose store did not match the server although the scenario expected it to:
    /// (variant, phase).
    pub fn unexpected_inconsistencies(
        &self,
    ) -> impl Iterator<Item = (&VariantReport, &PhaseReport)> {
        self.variants.iter().flat_map(|v| {
            v.phases
                .iter()
                .filter(|p| !p.consistency.consistent && p.expect_consistent && p.store_checked())
                .map(move |p| (v, p))
        })
    }

    /// The report as pretty JSON, as `run` writes it.
    pub fn to_json(&self) -> String {
        let mut json = serde_json::to_string_pretty(self).expect("a report serializes");
        json.push('\n');
        json
    }

    /// Writes the report as pretty JSON to `path`, creating its folder. The file appears
    /// whole or not at all: it is written beside its destination and renamed into place.
    pub fn write_json(&self, path: &Path) -> Result<(), Error> {
        files::output::write_file(path, self.to_json().as_bytes()).map_err(|source| Error::Write {
            path: path.to_owned(),
            source,
        })
    }
}

// Unit tests measure with the same allocator the binary installs.
#[cfg(test)]
#[global_allocator]
static TEST_ALLOCATOR: measure::CountingJemalloc = measure::CountingJemalloc;
