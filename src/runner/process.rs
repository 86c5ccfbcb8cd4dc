//! The parent's side of one variant: start its process, send it the job, read its
//! messages into the variant's report within the deadline, and say why it did not finish
//! when it did not.
//!
//! An external variant's scratch folder (its program's kubeconfig and log) is made here,
//! private (0700), and removed here once the process is waited for, however it ended:
//! the parent outlives a variant killed at its timeout, by the kernel's OOM killer, or
//! by a signal. On SIGINT or SIGTERM the run ends every variant ([`end_variants`]), each
//! of which stops its program's process group, and leaves nothing behind; a variant
//! whose parent dies without that is sent SIGTERM by the kernel (`PR_SET_PDEATHSIG`).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::message::{Job, Message};
use super::{CHILD_COMMAND, Limits, MALLOC_CONF};
use report::{SubjectReport, VariantReport};
use scenario::Scenario;

/// How much of a failed child's stderr goes into its error.
const STDERR_TAIL_BYTES: usize = 2000;

/// How long [`end_variants`] waits for the variants to end on SIGTERM (each gives its
/// program 2 s) before it kills what is left.
const END_GRACE: Duration = Duration::from_secs(5);

/// The variants' processes running now, and whether the run is stopping.
static RUNNING: Mutex<Running> = Mutex::new(Running {
    variants: Vec::new(),
    stopping: false,
});

struct Running {
    /// Each running variant's process, and its scratch folder if it has one.
    variants: Vec<(u32, Option<PathBuf>)>,
    /// Set by [`stop_variants`]: no variant starts after it.
    stopping: bool,
}

fn running() -> std::sync::MutexGuard<'static, Running> {
    RUNNING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Whether [`stop_variants`] was called: no variant starts any more.
pub fn stopping() -> bool {
    running().stopping
}

/// Asks every variant's process running now to stop (SIGTERM), and starts no other: a
/// run interrupted against a real server stops them before it removes their namespaces.
pub fn stop_variants() {
    let mut running = running();
    running.stopping = true;
    for (pid, _) in &running.variants {
        let Ok(pid) = libc::pid_t::try_from(*pid) else {
            continue;
        };
        // SAFETY: kill has no memory preconditions; the process is a child this run
        // started and has not waited for yet, so its ID is still its own.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
}

/// Ends the run's variants for good, as a signal to the run asks: stops them
/// ([`stop_variants`]), waits up to [`END_GRACE`] for them to stop their programs and
/// exit, kills any left, and removes their scratch folders.
pub fn end_variants() {
    stop_variants();
    let scratch: Vec<PathBuf> = running()
        .variants
        .iter()
        .filter_map(|(_, scratch)| scratch.clone())
        .collect();
    let deadline = Instant::now() + END_GRACE;
    while !running().variants.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for (pid, _) in &running().variants {
        if let Ok(pid) = libc::pid_t::try_from(*pid) {
            // SAFETY: as in `stop_variants`.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    for folder in scratch {
        let _ = std::fs::remove_dir_all(folder);
    }
}

/// Runs variant `index` in a child process of `exe`; a variant that fails is recorded with
/// its error and the phases it completed.
pub(super) fn run_child(
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
        server: variant.server,
        scope: variant.scope.clone(),
        error: None,
        setup: None,
        phases: Vec::new(),
        subject: variant.subject.as_ref().map(|definition| {
            Box::new(SubjectReport {
                definition: (**definition).clone(),
                implementation: None,
                setup: None,
                output: None,
            })
        }),
        point: None,
    };
    // Removed when this returns, after the process is waited for and its program's
    // output kept where asked.
    let scratch = match scratch_for(scenario, index) {
        Ok(scratch) => scratch,
        Err(e) => {
            report.error = Some(e);
            return report;
        }
    };
    let scratch = scratch.as_ref().map(|dir| dir.path());
    let result = drive_child(
        exe,
        scenario,
        index,
        (limits, scratch),
        &mut report,
        progress,
    );
    let kept = scratch
        .filter(|_| limits.keep_output || result.is_err())
        .map(|dir| keep_output(dir, limits.profiles, index, &variant.name));
    let said = match kept {
        Some(Ok(kept)) => {
            let said = format!("; the program's output is kept at {}", kept.display());
            if let Some(subject) = report.subject.as_mut() {
                let name = kept.file_name().filter(|_| limits.profiles.is_some());
                subject.output = Some(match name {
                    Some(name) => name.to_string_lossy().into_owned(),
                    None => kept.display().to_string(),
                });
            }
            said
        }
        Some(Err(e)) => format!("; the program's output could not be kept: {e}"),
        None => String::new(),
    };
    if let Err(e) = result {
        report.error = Some(format!("{e}{said}"));
    }
    report
}

/// Keeps the program's output from the scratch folder `scratch`: beside `report` as
/// `<report stem>.<index>-<variant>.output.log`, or without a report file in a new file
/// of the temporary folder. Its path.
fn keep_output(
    scratch: &Path,
    report: Option<&Path>,
    index: usize,
    variant: &str,
) -> Result<PathBuf, String> {
    let log = scratch.join(super::external::OUTPUT_FILE);
    let output = std::fs::read(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let kept = match report {
        Some(report) => super::beside(report, index, variant, ".output.log"),
        None => {
            let file = tempfile::Builder::new()
                .prefix("informer-mem-")
                .suffix(".output.log")
                .tempfile()
                .map_err(|e| format!("a temporary file: {e}"))?;
            let (_, path) = file.keep().map_err(|e| e.to_string())?;
            path
        }
    };
    files::output::write_unfollowed(&kept, &output)
        .map_err(|e| format!("{}: {e}", kept.display()))?;
    Ok(kept)
}

/// How reading a child's messages ended.
#[derive(Debug, Default)]
struct Reading {
    /// Why the child failed, as it said or as its output showed.
    failure: Option<String>,
    /// The deadline passed and the child was killed.
    timed_out: bool,
}

/// Runs the child and fills `report` from its messages; `Err` says why it did not finish.
fn drive_child(
    exe: &Path,
    scenario: &Scenario,
    index: usize,
    (limits, scratch): (&Limits<'_>, Option<&Path>),
    report: &mut VariantReport,
    progress: &mut impl FnMut(&Message),
) -> Result<(), String> {
    let deadline = Instant::now() + limits.variant_timeout;
    let scratch_path = scratch.map(Path::to_owned);
    let mut child = {
        // Held while it starts: a stop either comes before (and it does not start) or
        // finds it in the list.
        let mut running = running();
        if running.stopping {
            return Err("the run was interrupted before this variant started".to_owned());
        }
        let child = spawn(exe, scenario, index)?;
        running.variants.push((child.id(), scratch_path.clone()));
        child
    };
    let job = Job {
        scenario: scenario.clone(),
        variant: index,
        dhat_file: limits.dhat_files.map(|files| files[index].clone()),
        // A program with pprof, and a real server, have heap profiles to save.
        profiles: limits
            .profiles
            .filter(|_| {
                limits.cluster.is_some()
                    || scenario.variants[index]
                        .subject
                        .as_ref()
                        .is_some_and(|s| s.pprof.is_some())
            })
            .map(|report| super::beside(report, index, &scenario.variants[index].name, "")),
        cluster: limits.cluster.map(|jobs| jobs[index].clone()),
        scratch: scratch_path,
    };
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let written = serde_json::to_writer(&mut stdin, &job)
        .map_err(std::io::Error::from)
        .and_then(|()| stdin.flush());
    drop(stdin);
    let stderr = drain_stderr(&mut child);
    let (reader, messages) = read_messages(&mut child);
    let reading = receive(&mut child, &messages, deadline, report, progress);
    // Out of the registry before it is waited for, so its ID is never signalled once
    // the kernel may reuse it; its output has ended, so it is ending anyway.
    running().variants.retain(|(pid, _)| *pid != child.id());
    let status = child
        .wait()
        .map_err(|e| format!("failed to wait for the variant's process: {e}"))?;
    let _ = reader.join();
    let stderr = stderr.join().unwrap_or_default();
    if reading.timed_out {
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
    match reading.failure {
        Some(error) => Err(error),
        None if report.phases.len() < scenario.phases.len() => {
            Err("the variant's process ended before its last phase".to_owned())
        }
        None => Ok(()),
    }
}

/// An external variant's scratch folder: private (0700), a new random name.
fn scratch_for(scenario: &Scenario, index: usize) -> Result<Option<tempfile::TempDir>, String> {
    if scenario.variants[index].subject.is_none() {
        return Ok(None);
    }
    tempfile::Builder::new()
        .prefix("informer-mem-variant-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir()
        .map(Some)
        .map_err(|e| format!("failed to make the variant's scratch folder: {e}"))
}

/// Starts variant `index`'s process, its pipes open.
fn spawn(exe: &Path, scenario: &Scenario, index: usize) -> Result<Child, String> {
    let mut command = Command::new(exe);
    // The variant's jemalloc settings, read by jemalloc as the child starts (the prefixed
    // build's name for `MALLOC_CONF`); they replace any the environment sets.
    if let Some(conf) = scenario.variants[index].config.allocator.malloc_conf() {
        command.env(MALLOC_CONF, conf);
    }
    // A variant outlives no run: if the run's process dies without ending it (SIGKILL),
    // the kernel asks it to stop, and it stops its program as on any SIGTERM.
    super::die_with_parent(&mut command, libc::SIGTERM);
    command
        .arg(CHILD_COMMAND)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("failed to start `{}`: {e}", exe.display()))
}

/// Reads stderr to its end on a thread, so a chatty child cannot block on a full pipe.
fn drain_stderr(child: &mut Child) -> JoinHandle<String> {
    let mut stderr = child.stderr.take().expect("stderr is piped");
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    })
}

/// The child's messages, or why a line could not be read.
type Messages = Receiver<Result<Message, String>>;

/// Reads the child's messages on a thread, so that the caller can keep the deadline.
fn read_messages(child: &mut Child) -> (JoinHandle<()>, Messages) {
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
    (reader, messages)
}

/// Takes the child's messages into `report` until it stops talking or the deadline
/// passes (then it is killed).
fn receive(
    child: &mut Child,
    messages: &Messages,
    deadline: Instant,
    report: &mut VariantReport,
    progress: &mut impl FnMut(&Message),
) -> Reading {
    let mut reading = Reading::default();
    loop {
        let message =
            match messages.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(Ok(message)) => message,
                Ok(Err(unreadable)) => {
                    reading.failure = Some(unreadable);
                    break;
                }
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    // Stopped, stuck or just slow: it gets no more time. Its stdout closes
                    // as it dies, which ends the reader.
                    let _ = child.kill();
                    reading.timed_out = true;
                    break;
                }
            };
        progress(&message);
        match message {
            Message::Setup(setup) => report.setup = Some(*setup),
            Message::Subject {
                implementation,
                setup,
            } => {
                if let Some(subject) = report.subject.as_mut() {
                    subject.implementation = implementation;
                    subject.setup = Some(*setup);
                }
            }
            Message::Phase(phase) => report.phases.push(*phase),
            Message::Failed(error) => reading.failure = Some(error),
        }
    }
    reading
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
