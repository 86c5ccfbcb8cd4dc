//! An external variant's program as a process: started in a process group of its own,
//! measured as that group (what it starts in turn included), its output kept in a file
//! for errors, and always ended with its variant: when dropped (success, failure, the
//! run's Ctrl-C) its whole group is stopped, and if the run's process dies first, the
//! kernel kills it (`PR_SET_PDEATHSIG`).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use measure::outside::{Group, GroupReading};

/// How long a stopped program may take to exit after SIGTERM before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// How much of the program's output goes into an error: its last lines, at most this
/// many bytes of them.
const OUTPUT_TAIL_BYTES: usize = 2000;
const OUTPUT_TAIL_LINES: usize = 10;
/// How much of the end of its output is read for that.
const OUTPUT_READ_BYTES: u64 = 4 * OUTPUT_TAIL_BYTES as u64;

/// A running program.
#[derive(Debug)]
pub(super) struct Program {
    child: Child,
    /// The process group it was started in, read as the program.
    group: Arc<Group>,
    output: std::path::PathBuf,
}

impl Program {
    /// Starts `argv` with `env` over the run's environment, its output to `output`.
    pub(super) fn start(
        argv: &[String],
        env: &[(String, String)],
        output: &Path,
    ) -> Result<Program, String> {
        // A new file only this user may read, in the variant's private folder: a program's
        // output may hold what it was given (a token, in a debug log).
        let log = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(output)
            .map_err(|e| format!("failed to create `{}`: {e}", output.display()))?;
        let log2 = log
            .try_clone()
            .map_err(|e| format!("failed to share `{}`: {e}", output.display()))?;
        let mut command = Command::new(&argv[0]);
        command
            .args(&argv[1..])
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .process_group(0);
        super::super::die_with_parent(&mut command, libc::SIGKILL);
        let child = command.spawn().map_err(|e| {
            let mut why = format!("failed to start `{}`: {e}", argv[0]);
            if e.kind() == std::io::ErrorKind::NotFound && argv[0].contains('/') {
                let here = std::env::current_dir().unwrap_or_default();
                why.push_str(&format!(
                    " (a relative path in `command` is taken from the directory `run` \
                     started in, {}; the shipped programs are built by \
                     `bash subjects/build.sh`)",
                    here.display()
                ));
            }
            why
        })?;
        Ok(Program {
            group: Arc::new(Group::new(child.id())),
            child,
            output: output.to_owned(),
        })
    }

    /// Its process group now: its own process and every one it started that is still in
    /// the group, found anew when `fresh` ([`Group`]); `None` when its own is gone.
    pub(super) fn read(&self, fresh: bool) -> Option<GroupReading> {
        self.group.read(fresh)
    }

    /// Its process group, for a reader of its own (the heap sampler).
    pub(super) fn group(&self) -> Arc<Group> {
        Arc::clone(&self.group)
    }

    /// Resets the RSS high-water mark of each of its processes; whether the kernel let it.
    pub(super) fn reset_peak(&self) -> bool {
        self.group.reset_peak()
    }

    /// How it ended, if it has.
    pub(super) fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Why it is gone, with the end of what it printed.
    pub(super) fn describe_exit(&self, status: ExitStatus) -> String {
        let how = match (status.code(), status.signal()) {
            (Some(code), _) => format!("exited with code {code}"),
            (None, Some(signal)) => format!("died of signal {signal}"),
            (None, None) => "ended".to_owned(),
        };
        format!("the program {how}{}", self.output_tail())
    }

    /// The end of its output, as `: ...`, or nothing when it printed nothing. Only the
    /// end is read, however much it printed.
    pub(super) fn output_tail(&self) -> String {
        let mut bytes = Vec::new();
        if let Ok(mut file) = File::open(&self.output) {
            let length = file.metadata().map_or(0, |m| m.len());
            let from = length.saturating_sub(OUTPUT_READ_BYTES);
            if file.seek(SeekFrom::Start(from)).is_ok() {
                let _ = file.take(OUTPUT_READ_BYTES).read_to_end(&mut bytes);
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim();
        let lines_start = text
            .rmatch_indices('\n')
            .nth(OUTPUT_TAIL_LINES - 1)
            .map_or(0, |(at, _)| at + 1);
        let mut start = lines_start.max(text.len().saturating_sub(OUTPUT_TAIL_BYTES));
        while !text.is_char_boundary(start) {
            start += 1;
        }
        if text.is_empty() {
            String::new()
        } else {
            format!("; its output ends:\n{}", &text[start..])
        }
    }

    /// Stops its whole group: SIGTERM, then SIGKILL after a grace period.
    fn stop(&mut self) {
        let group = -(self.child.id() as i32);
        if self.exited().is_none() {
            // SAFETY: kill has no memory preconditions; the group is the program's own.
            unsafe { libc::kill(group, libc::SIGTERM) };
            let deadline = Instant::now() + STOP_GRACE;
            while self.exited().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        // What the program started may outlive it: the group goes whatever happened.
        // SAFETY: as above.
        unsafe { libc::kill(group, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        self.stop();
    }
}
