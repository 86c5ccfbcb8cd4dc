//! What a report says of an external variant's program, measured from outside: the
//! kernel's view of the process and, for a Go program serving net/http/pprof, its heap.
//! None of it is an exact count: the Go runtime's counters are exact for one run, but a
//! program on a real clock does not repeat its allocations run to run.

use serde::{Deserialize, Serialize};

use super::EventCounts;
use measure::gclog::GcCycle;
use measure::outside::{GroupReading, ProcessReading};
use measure::pprof::{MemStats, RuntimeMemory, Site};
use scenario::Subject;
use units::Bytes;

/// An external variant's program, as it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubjectReport {
    /// The program, its settings as the scenario gave them (placeholders unfilled).
    pub definition: Subject,
    /// What the program said it is, through the status protocol (`implementation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<String>,
    /// The program once it had connected, before it got any object: what every phase's
    /// figures include.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<SubjectFigures>,
    /// The program's output (stdout and stderr), kept (`run --keep-output`, or a failed
    /// variant): relative to the report's folder when beside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
}

/// A program's figures at the end of a phase (or of its setup). The process figures are
/// its process group's: summed over every process in it where the command started
/// others (`processes`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SubjectFigures {
    /// Its RSS at the end (advisory).
    pub rss_bytes: Bytes,
    /// Its highest RSS within the phase (advisory; the kernel's high-water mark, reset at
    /// the phase's start; with several processes the sum of theirs, an upper bound).
    /// `None` where the kernel refused the reset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_peak_bytes: Option<Bytes>,
    /// Its threads at the end.
    pub threads: u64,
    /// CPU time it used within the phase, user and system, in ms (advisory), its exited
    /// children's included: from the phase's start until the program had caught up (in
    /// reports written before `reading_cpu_ms`, the run's reading after it too).
    pub cpu_ms: u64,
    /// Each process of its group at the end, where there was more than one: the command
    /// started others (`go run`, `npm start`, a shell that does not `exec`), and the
    /// figures above are their sum. Empty for a program that is one process.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<ProcessShare>,
    /// CPU time the run's own process (the built-in server, and the probes reading the
    /// program) used within the phase, in ms (advisory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_cpu_ms: Option<u64>,
    /// The Go heap after a forced collection at the end; `None` without pprof.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap: Option<GoHeap>,
    /// The live heap the program reported after a collection of its own, through the
    /// status protocol (`{status}/heap`: runtimes without pprof, such as Node.js with
    /// `--expose-gc`); `None` when it serves none, or when `heap` is there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_heap_bytes: Option<Bytes>,
    /// The most the heap held within the phase (advisory): with `heap_peak_from` =
    /// `gc-log`, the largest heap any collection's report gave (to the MiB for Go), the
    /// run's forced collections at the end included; with `samples`, the highest
    /// `HeapAlloc` among the samples (HeapAlloc counts garbage not yet swept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_peak_bytes: Option<Bytes>,
    /// Where `heap_peak_bytes` comes from. Absent in reports written before it, whose
    /// peaks are the samples'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_peak_from: Option<HeapPeakSource>,
    /// Every collection the program's runtime reported within the phase (or its setup),
    /// oldest first: the heap before and after each and, where the runtime says, what it
    /// found live. Empty when its output carries no such report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gc_cycles: Vec<GcCycle>,
    /// Heap samples taken within the phase: a heap profile every 200 ms, only where the
    /// runtime does not report its collections (`heap_peak_from` = `samples`).
    #[serde(default)]
    pub samples: u64,
    /// CPU time the program spent answering the run's requests within the phase (its
    /// status, store listing, heap profiles and samples), in ms: part of `cpu_ms`
    /// (advisory; clock ticks, and what the program did meanwhile counts too, so an upper
    /// bound). `sampling_cpu_ms` in reports written before it, which counted the samples
    /// only.
    #[serde(
        default,
        alias = "sampling_cpu_ms",
        skip_serializing_if = "Option::is_none"
    )]
    pub observer_cpu_ms: Option<u64>,
    /// CPU time the program spent answering the run's reading once the phase was over,
    /// in ms: the forced collections and heap profiles of the heap figures (advisory).
    /// Not part of `cpu_ms`, which ends when the program had caught up; absent in the
    /// setup, whose reading is part of it, and in reports written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reading_cpu_ms: Option<u64>,
    /// The sites holding the most live heap at the end (estimated from the profile's
    /// samples), heaviest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top_sites: Vec<Site>,
    /// The heap profile saved at the end, readable by `go tool pprof`, relative to the
    /// report's folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Notifications its handlers reported handling in the phase (status protocol).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handled: Option<EventCounts>,
    /// Whether its store was read through the status protocol and checked against the
    /// server (the phase's consistency); without it, the phase ended on a quiet process and
    /// the store is unchecked.
    pub store_checked: bool,
    /// The program's requests the server refused within the phase (or its setup): what
    /// it asks for that the server lacks. Absent when there were none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<RefusedRequest>,
    /// The collections the program read within the phase (or its setup), one entry per
    /// resource, namespace and selectors: the caches it opened and kept up, and when.
    /// Absent in reports written before it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub collections: Vec<CollectionReads>,
    /// What the program's readiness endpoint (`ready`) answered when it first said 200
    /// within the phase: its checks, as `/readyz?verbose` lists them (at most 4 KiB).
    /// Absent without `ready`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<String>,
}

/// A program's reads of one collection within a phase: a resource in a namespace (or all
/// of them), with the selectors it asked for, as an informer's LIST and WATCH ask.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollectionReads {
    /// The resource as kubectl names it: `pods`, `deployments.apps`,
    /// `widgets.example.com`.
    pub resource: String,
    /// The namespace asked for; absent for every namespace (or a cluster-scoped resource).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The label selector asked for, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
    /// The field selector asked for, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_selector: Option<String>,
    /// LISTs begun (a page that continues one is part of it).
    pub lists: u64,
    /// WATCHes, watch-lists among them.
    pub watches: u64,
    /// WATCHes that asked for the state as events first (`sendInitialEvents=true`): a
    /// watch-list, which takes the place of a LIST.
    pub watch_lists: u64,
    /// Of all of them, those the server answered with an error other than 410 Expired
    /// (which asks a client to list again).
    #[serde(default, skip_serializing_if = "crate::is_zero")]
    pub refused: u64,
    /// When the first of them came, in ms from the phase's start (the setup's: the
    /// program's start).
    pub first_at_ms: u64,
    /// Whether no earlier phase (nor the setup) read it: a cache the program opened here.
    pub opened: bool,
}

impl CollectionReads {
    /// What it is in a few words: `pods in default (labels app=web): watch-list`.
    pub fn describe(&self) -> String {
        let mut said = self.resource.clone();
        if let Some(namespace) = &self.namespace {
            said.push_str(&format!(" in {namespace}"));
        }
        let selectors: Vec<String> = [
            ("labels", &self.label_selector),
            ("fields", &self.field_selector),
        ]
        .into_iter()
        .filter_map(|(what, s)| Some(format!("{what} {}", s.as_ref()?)))
        .collect();
        if !selectors.is_empty() {
            said.push_str(&format!(" ({})", selectors.join(", ")));
        }
        let how = match (self.lists, self.watch_lists) {
            (0, 0) => "watch",
            (_, 0) => "list",
            (0, _) => "watch-list",
            _ => "list and watch-list",
        };
        format!("{said}: {how}")
    }
}

/// Where a phase's peak heap comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HeapPeakSource {
    /// The runtime's report of every collection (Go's gctrace, V8's `--trace-gc`, the
    /// JVM's `-Xlog:gc`), read from the program's output.
    GcLog,
    /// Heap profiles read every 200 ms: the program's output carried no collection's
    /// report (its stderr went elsewhere, or the setting was refused).
    Samples,
}

/// One process of a program's group, at a phase's end.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessShare {
    /// Its command's name as the kernel keeps it (15 bytes at most).
    pub command: String,
    /// Its RSS (advisory).
    pub rss_bytes: Bytes,
}

/// Requests of a program that the server answered with a 4xx or 5xx, by method, path and
/// status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusedRequest {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The answer's status code.
    pub status: u16,
    /// The first answer's message (its `Status`'s, or its text).
    pub message: String,
    /// How many times the server refused it.
    pub count: u64,
}

/// The most refusals a summary names (the first ones by method and path).
const NAMED_REFUSALS: usize = 8;

impl RefusedRequest {
    /// `refused` in words, for a message (`""` when empty): `the server refused 12
    /// request(s): POST /apis/example.com/v1/namespaces/default/widgets: 404 "the server
    /// could not find the requested resource" (x12)`.
    pub fn summary(refused: &[RefusedRequest]) -> String {
        if refused.is_empty() {
            return String::new();
        }
        let total: u64 = refused.iter().map(|r| r.count).sum();
        let mut named: Vec<String> = refused
            .iter()
            .take(NAMED_REFUSALS)
            .map(|r| {
                format!(
                    "{} {}: {} {:?} (x{})",
                    r.method, r.path, r.status, r.message, r.count
                )
            })
            .collect();
        if refused.len() > NAMED_REFUSALS {
            named.push(format!("and {} more", refused.len() - NAMED_REFUSALS));
        }
        format!(
            "the server refused {total} request(s): {}",
            named.join(", ")
        )
    }
}

/// The Go heap after `runtime.GC()`, from runtime.MemStats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoHeap {
    /// `HeapAlloc` after the collection: the live heap.
    pub live_bytes: Bytes,
    /// `HeapInuse`: bytes in spans holding objects.
    pub inuse_bytes: Bytes,
    /// `HeapObjects`: live objects.
    pub objects: u64,
    /// Bytes allocated within the phase (`TotalAlloc`'s growth).
    pub alloc_bytes: Bytes,
    /// Objects allocated within the phase (`Mallocs`' growth).
    pub allocs: u64,
    /// Objects freed within the phase (`Frees`' growth).
    pub frees: u64,
    /// Collections within the phase, the forced one included.
    pub gcs: u64,
    /// What the runtime held from the OS after that collection and how it splits
    /// (`Sys`, `HeapIdle`, `HeapReleased`, `NextGC`); absent in reports from before
    /// 2026-12-07 and for a program whose profile lacks them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<RuntimeMemory>,
    /// The program's RSS read right after those MemStats: the resident memory `runtime`
    /// splits (the phase's `rss_bytes` is read before the collections, and the runtime
    /// returns freed memory to the OS soon after them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_bytes: Option<Bytes>,
}

impl GoHeap {
    /// The heap at `now`, with the phase's growth since `before`.
    pub fn since(now: &MemStats, before: &MemStats) -> GoHeap {
        GoHeap {
            live_bytes: now.heap_alloc,
            inuse_bytes: now.heap_inuse,
            objects: now.heap_objects,
            alloc_bytes: Bytes(now.total_alloc.0.saturating_sub(before.total_alloc.0)),
            allocs: now.mallocs.saturating_sub(before.mallocs),
            frees: now.frees.saturating_sub(before.frees),
            gcs: now.num_gc.saturating_sub(before.num_gc),
            runtime: now.runtime,
            rss_bytes: None,
        }
    }
}

impl SubjectFigures {
    /// The share of the program's CPU time within the phase that answering the run cost
    /// it, in percent; `None` before it was measured or when the program used none.
    pub fn observer_share(&self) -> Option<f64> {
        let observer = self.observer_cpu_ms?;
        (self.cpu_ms > 0).then(|| observer as f64 * 100.0 / self.cpu_ms as f64)
    }

    /// The largest heap among `gc_cycles`.
    pub fn gc_peak(&self) -> Option<Bytes> {
        self.gc_cycles.iter().map(GcCycle::peak).max()
    }

    /// The live heap after a collection: the Go heap's, or the one the program reported.
    pub fn live_heap(&self) -> Option<Bytes> {
        self.heap.map(|h| h.live_bytes).or(self.reported_heap_bytes)
    }

    /// Its RSS as the table and the progress lines show it: at the end, and the high-water
    /// mark within the phase when the kernel gave one (the only peak of a program without
    /// a heap reading), with how many processes they are the sum of when more than one.
    pub fn rss_shown(&self) -> String {
        let processes = match self.processes.len() {
            0 | 1 => None,
            n => Some(format!("{n} processes")),
        };
        match (self.rss_peak_bytes, processes) {
            (Some(peak), None) => format!("{} (peak {peak})", self.rss_bytes),
            (Some(peak), Some(n)) => format!("{} (peak {peak}, {n})", self.rss_bytes),
            (None, Some(n)) => format!("{} ({n})", self.rss_bytes),
            (None, None) => self.rss_bytes.to_string(),
        }
    }

    /// The process part of the figures: `end` read at the phase's end, `start` at its start.
    pub fn process(end: &GroupReading, start: &ProcessReading, peak_reset: bool) -> Self {
        let total = &end.total;
        let processes = match end.members.len() {
            0 | 1 => Vec::new(),
            _ => end
                .members
                .iter()
                .map(|m| ProcessShare {
                    command: m.command.clone(),
                    rss_bytes: m.rss,
                })
                .collect(),
        };
        SubjectFigures {
            rss_bytes: total.rss,
            rss_peak_bytes: peak_reset.then(|| total.peak_since(start)),
            threads: total.threads,
            cpu_ms: total.cpu_ms.saturating_sub(start.cpu_ms),
            processes,
            ..SubjectFigures::default()
        }
    }
}
