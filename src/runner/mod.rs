//! The runner: one child process per variant, results gathered into a [`Report`].
//!
//! Each variant runs in a re-exec of this binary ([`CHILD_COMMAND`]), so one variant's heap
//! history (fragmentation, retained pages, thread caches) never colours another's numbers,
//! and a variant that dies (out of memory, panic) is recorded without losing the others.
//! Variants run one after another by default: on two cores, a neighbour would disturb RSS
//! and timing. `--jobs N` runs up to N at once; exact figures do not depend on it, since
//! each child counts only its own allocations.

pub mod child;
mod cluster;
mod external;
mod interrupt;
mod message;
mod phase;
mod process;
mod watchers;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

pub use interrupt::{end_on_signal, stop_if_interrupted};
pub use message::{ClusterJob, Message};
pub use process::end_variants;
use process::run_child;
use report::{FORMAT_VERSION, Report, ScenarioInfo, Tool, VariantReport};
use scenario::Scenario;

/// Has the kernel send `signal` to the process `command` starts when the thread that
/// starts it ends (the run's, which waits for it): a child outlives no parent that died
/// without ending it. One that finds its parent already gone exits at once.
pub(crate) fn die_with_parent(command: &mut std::process::Command, signal: libc::c_int) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec only async-signal-safe calls: getpid before, prctl
    // and getppid in the child.
    unsafe {
        let parent = libc::getpid();
        command.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, signal);
            // The parent died between fork and prctl: nobody would stop us.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// The hidden subcommand a child process runs.
pub const CHILD_COMMAND: &str = "__run-variant";

/// The environment variable jemalloc reads its settings from, in tikv-jemalloc-sys's
/// prefixed build.
pub const MALLOC_CONF: &str = "_RJEM_MALLOC_CONF";

/// What the runner reports while it works.
#[derive(Debug)]
pub enum Progress<'a> {
    /// A variant's process is starting.
    VariantStarted {
        /// Position, from 0.
        index: usize,
        /// Of how many.
        total: usize,
        /// The variant's name.
        name: &'a str,
    },
    /// A message from the variant's process.
    Message(&'a Message),
}

/// How the variants' processes run.
#[derive(Debug, Clone, Copy)]
pub struct Limits<'a> {
    /// Real time a variant's process may take before it is killed.
    pub variant_timeout: Duration,
    /// In the heap-profiling build: variant `i` writes its dhat profile to the `i`th file.
    pub dhat_files: Option<&'a [PathBuf]>,
    /// The report's file: external variants save their heap profiles beside it.
    pub profiles: Option<&'a Path>,
    /// Whether each external variant's program output is kept beside the report (a
    /// failed variant's always is).
    pub keep_output: bool,
    /// How many variants' processes may run at once (at least 1).
    pub jobs: usize,
    /// Against a real server: variant `i` runs with the `i`th job.
    pub cluster: Option<&'a [ClusterJob]>,
    /// The variants to run, by index, in order (`run --shard`); `None`: every one.
    pub only: Option<&'a [usize]>,
}

/// What a worker thread tells the runner about the variant at a position of those it
/// runs.
enum Event {
    Started(usize),
    Message(usize, Message),
    Finished(usize, Box<VariantReport>),
}

/// Runs every variant of `scenario` (those `limits.only` names, when it names some) in a
/// child process of `exe` and gathers the report.
///
/// With more than one job, variants run in parallel, and `progress` still sees them one
/// at a time, in order: the lowest unfinished variant live, the others' messages held
/// until it is their turn.
pub fn run_variants(
    scenario: &Scenario,
    exe: &Path,
    limits: &Limits<'_>,
    mut progress: impl FnMut(Progress<'_>),
) -> Report {
    let every: Vec<usize> = (0..scenario.variants.len()).collect();
    let chosen = limits.only.unwrap_or(&every);
    let total = chosen.len();
    let jobs = limits.jobs.clamp(1, total.max(1));
    let (events, received) = mpsc::channel();
    let next = AtomicUsize::new(0);
    let mut variants: Vec<Option<VariantReport>> = (0..total).map(|_| None).collect();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let events = events.clone();
            let next = &next;
            scope.spawn(move || {
                loop {
                    let position = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&index) = chosen.get(position) else {
                        break;
                    };
                    // An interrupted run starts no more variants: none to announce.
                    if !process::stopping() {
                        let _ = events.send(Event::Started(position));
                    }
                    let report = run_child(exe, scenario, index, limits, &mut |m: &Message| {
                        let _ = events.send(Event::Message(position, m.clone()));
                    });
                    let _ = events.send(Event::Finished(position, Box::new(report)));
                }
            });
        }
        drop(events);
        relay(received, total, |event| match event {
            Event::Started(position) => {
                let name = &scenario.variants[chosen[position]].name;
                progress(Progress::VariantStarted {
                    index: position,
                    total,
                    name,
                });
            }
            Event::Message(_, message) => progress(Progress::Message(&message)),
            Event::Finished(position, report) => variants[position] = Some(*report),
        });
    });
    Report {
        format_version: FORMAT_VERSION,
        tool: Tool::current(),
        scenario: ScenarioInfo::of(scenario),
        variants: variants
            .into_iter()
            .map(|v| v.expect("every variant's worker reports it"))
            .collect(),
        server: None,
        fits: Vec::new(),
        shard: None,
    }
}

/// Passes the workers' events to `show` in the order of the variants' positions: the
/// lowest unfinished variant's as they come, the others' held until it is their turn.
fn relay(received: mpsc::Receiver<Event>, total: usize, mut show: impl FnMut(Event)) {
    let mut held: Vec<Vec<Event>> = (0..total).map(|_| Vec::new()).collect();
    let mut shown = 0;
    let mut pass = |event: Event, shown: &mut usize| {
        if matches!(event, Event::Finished(..)) {
            *shown += 1;
        }
        show(event);
    };
    for event in received {
        let position = match &event {
            Event::Started(i) | Event::Message(i, _) | Event::Finished(i, _) => *i,
        };
        if position != shown {
            held[position].push(event);
            continue;
        }
        pass(event, &mut shown);
        // When the variant shown finished, the next one's held events come out, and so
        // on while those finished too.
        while shown < total && !held[shown].is_empty() {
            let head = shown;
            for event in std::mem::take(&mut held[head]) {
                pass(event, &mut shown);
            }
            if shown == head {
                break;
            }
        }
    }
}

/// Where variant `index` named `name` writes its dhat profile, beside `report`:
/// `<report stem>.<index>-<name as a slug>.dhat-heap.json`.
pub fn dhat_file(report: &Path, index: usize, name: &str) -> PathBuf {
    beside(report, index, name, ".dhat-heap.json")
}

/// `<prefix>.<index>-<phase as a slug>.heap.pb.gz`.
pub fn profile_file(prefix: &Path, index: usize, phase: &str) -> PathBuf {
    let name = format!(
        "{}.{index}-{}.heap.pb.gz",
        prefix
            .file_name()
            .map_or_else(|| "report".into(), |n| n.to_string_lossy()),
        slug(phase)
    );
    prefix.with_file_name(name)
}

/// `<report stem>.<index>-<name as a slug><suffix>`, in the report's folder.
fn beside(report: &Path, index: usize, name: &str, suffix: &str) -> PathBuf {
    let stem = report
        .file_stem()
        .map_or_else(|| "report".into(), |s| s.to_string_lossy());
    report.with_file_name(format!("{stem}.{index}-{}{suffix}", slug(name)))
}

/// `name` in lower-case letters, digits and single dashes, at most 64 characters.
fn slug(name: &str) -> String {
    let mut slug = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    slug.trim_matches('-').chars().take(64).collect()
}
