//! The runner: one child process per variant, results gathered into a [`Report`].
//!
//! Each variant runs in a re-exec of this binary ([`CHILD_COMMAND`]), so one variant's heap
//! history (fragmentation, retained pages, thread caches) never colours another's numbers,
//! and a variant that dies (out of memory, panic) is recorded without losing the others.
//! Variants run one after another by default: on two cores, a neighbour would disturb RSS
//! and timing. `--jobs N` runs up to N at once; exact figures do not depend on it, since
//! each child counts only its own allocations.

pub mod variant;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::report::{FORMAT_VERSION, Report, ScenarioInfo, Tool, VariantReport};
use crate::scenario::Scenario;
use variant::{Job, Message};

/// The hidden subcommand a child process runs.
pub const CHILD_COMMAND: &str = "__run-variant";

/// The environment variable jemalloc reads its settings from, in tikv-jemalloc-sys's
/// prefixed build.
pub const MALLOC_CONF: &str = "_RJEM_MALLOC_CONF";

/// How much of a failed child's stderr goes into its error.
const STDERR_TAIL_BYTES: usize = 2000;

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
    /// How many variants' processes may run at once (at least 1).
    pub jobs: usize,
}

/// What a worker thread tells the runner about variant `index`.
enum Event {
    Started(usize),
    Message(usize, Message),
    Finished(usize, VariantReport),
}

/// Runs every variant of `scenario` in a child process of `exe` and gathers the report.
///
/// With more than one job, variants run in parallel, and `progress` still sees them one
/// at a time, in order: the lowest unfinished variant live, the others' messages held
/// until it is their turn.
pub fn run_scenario(
    scenario: &Scenario,
    exe: &Path,
    limits: &Limits<'_>,
    mut progress: impl FnMut(Progress<'_>),
) -> Report {
    let total = scenario.variants.len();
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
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= total {
                        break;
                    }
                    let _ = events.send(Event::Started(index));
                    let report = run_child(exe, scenario, index, limits, &mut |m: &Message| {
                        let _ = events.send(Event::Message(index, m.clone()));
                    });
                    let _ = events.send(Event::Finished(index, report));
                }
            });
        }
        drop(events);
        // Events of variants after the one shown, until their turn.
        let mut held: Vec<Vec<Event>> = (0..total).map(|_| Vec::new()).collect();
        let mut shown = 0;
        let mut show =
            |event: Event, shown: &mut usize, variants: &mut [Option<VariantReport>]| match event {
                Event::Started(index) => {
                    let name = &scenario.variants[index].name;
                    progress(Progress::VariantStarted { index, total, name });
                }
                Event::Message(_, message) => progress(Progress::Message(&message)),
                Event::Finished(index, report) => {
                    variants[index] = Some(report);
                    *shown += 1;
                }
            };
        for event in received {
            let index = match &event {
                Event::Started(i) | Event::Message(i, _) | Event::Finished(i, _) => *i,
            };
            if index != shown {
                held[index].push(event);
                continue;
            }
            show(event, &mut shown, &mut variants);
            // When the variant shown finished, the next one's held events come out, and
            // so on while those finished too.
            while shown < total && !held[shown].is_empty() {
                let head = shown;
                for event in std::mem::take(&mut held[head]) {
                    show(event, &mut shown, &mut variants);
                }
                if shown == head {
                    break;
                }
            }
        }
    });
    Report {
        format_version: FORMAT_VERSION,
        tool: Tool::current(),
        scenario: ScenarioInfo::of(scenario),
        variants: variants
            .into_iter()
            .map(|v| v.expect("every variant's worker reports it"))
            .collect(),
    }
}

/// Where variant `index` named `name` writes its dhat profile, beside `report`:
/// `<report stem>.<index>-<name as a slug>.dhat-heap.json`.
pub fn dhat_file(report: &Path, index: usize, name: &str) -> PathBuf {
    let stem = report
        .file_stem()
        .map_or_else(|| "report".into(), |s| s.to_string_lossy());
    let mut slug = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug: String = slug.trim_matches('-').chars().take(64).collect();
    report.with_file_name(format!("{stem}.{index}-{slug}.dhat-heap.json"))
}

fn run_child(
    exe: &Path,
    scenario: &Scenario,
    index: usize,
    limits: &Limits<'_>,
    progress: &mut impl FnMut(&Message),
) -> VariantReport {
    let variant = &scenario.variants[index];
    let mut report = VariantReport {
        name: variant.name.clone(),
        config: variant.config.clone(),
        error: None,
        setup: None,
        phases: Vec::new(),
    };
    if let Err(e) = drive_child(exe, scenario, index, limits, &mut report, progress) {
        report.error = Some(e);
    }
    report
}

/// Runs the child and fills `report` from its messages; `Err` says why it did not finish.
fn drive_child(
    exe: &Path,
    scenario: &Scenario,
    index: usize,
    limits: &Limits<'_>,
    report: &mut VariantReport,
    progress: &mut impl FnMut(&Message),
) -> Result<(), String> {
    let deadline = Instant::now() + limits.variant_timeout;
    let mut command = Command::new(exe);
    // The variant's jemalloc settings, read by jemalloc as the child starts (the prefixed
    // build's name for `MALLOC_CONF`); they replace any the environment sets.
    if let Some(conf) = scenario.variants[index].config.allocator.malloc_conf() {
        command.env(MALLOC_CONF, conf);
    }
    let mut child = command
        .arg(CHILD_COMMAND)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("failed to start `{}`: {e}", exe.display()))?;
    let job = Job {
        scenario: scenario.clone(),
        variant: index,
        dhat_file: limits.dhat_files.map(|files| files[index].clone()),
    };
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let written = serde_json::to_writer(&mut stdin, &job)
        .map_err(std::io::Error::from)
        .and_then(|()| stdin.flush());
    drop(stdin);
    // Drain stderr on a thread so a chatty child cannot block on a full pipe.
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    // Messages are read on a thread, so that this one can keep the deadline.
    let stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
    let (lines, messages) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in stdout.lines() {
            let Ok(line) = line else { break };
            let message = serde_json::from_str::<Message>(&line)
                .map_err(|e| format!("unreadable output from the variant's process: {e}"));
            let unreadable = message.is_err();
            if lines.send(message).is_err() || unreadable {
                break;
            }
        }
    });
    let mut failure = None;
    let mut timed_out = false;
    loop {
        let message =
            match messages.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(Ok(message)) => message,
                Ok(Err(unreadable)) => {
                    failure = Some(unreadable);
                    break;
                }
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    // Stopped, stuck or just slow: it gets no more time. Its stdout closes
                    // as it dies, which ends the reader.
                    let _ = child.kill();
                    timed_out = true;
                    break;
                }
            };
        progress(&message);
        match message {
            Message::Setup(setup) => report.setup = Some(setup),
            Message::Phase(phase) => report.phases.push(*phase),
            Message::Failed(error) => failure = Some(error),
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("failed to wait for the variant's process: {e}"))?;
    let _ = reader.join();
    let stderr = stderr.join().unwrap_or_default();
    if timed_out {
        return Err(format!(
            "the variant's process was still running after {} (--variant-timeout) and was \
             killed; the phases it completed are kept",
            humantime::format_duration(limits.variant_timeout)
        ));
    }
    if !status.success() {
        return Err(describe_exit(status, &stderr));
    }
    if let Err(e) = written {
        return Err(format!(
            "failed to send the job to the variant's process: {e}"
        ));
    }
    match failure {
        Some(error) => Err(error),
        None if report.phases.len() < scenario.phases.len() => {
            Err("the variant's process ended before its last phase".to_owned())
        }
        None => Ok(()),
    }
}

fn describe_exit(status: ExitStatus, stderr: &str) -> String {
    use std::os::unix::process::ExitStatusExt;
    let how = match (status.code(), status.signal()) {
        (_, Some(9)) => "was killed (SIGKILL; out of memory?)".to_owned(),
        (_, Some(signal)) => format!("died of signal {signal}"),
        (Some(code), None) => format!("exited with code {code}"),
        (None, None) => "ended abnormally".to_owned(),
    };
    let tail = stderr.trim();
    let mut start = tail.len().saturating_sub(STDERR_TAIL_BYTES);
    while !tail.is_char_boundary(start) {
        start += 1;
    }
    let tail = &tail[start..];
    if tail.is_empty() {
        format!("the variant's process {how}")
    } else {
        format!("the variant's process {how}: {tail}")
    }
}
