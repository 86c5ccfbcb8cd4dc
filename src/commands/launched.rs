//! `run --server kube-apiserver`: the real kube-apiserver the run starts for itself
//! (servers/kube-apiserver, built by servers/build.sh: kube-apiserver with an embedded etcd
//! and the namespace controller), in a private folder of its own, and stops when it ends.
//!
//! The run then goes on as `run --kubeconfig` would, with the launcher's kubeconfig and its
//! process measured from outside (`--server-pid`). Stopping it sends SIGTERM (its graceful
//! shutdown), waits, and removes the folder: etcd's data, the certificates, the log. A run
//! that dies without stopping it takes it along (`PR_SET_PDEATHSIG`), and the launcher then
//! removes its folder itself (`--remove-dir-on-exit`).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::ClusterConfig;

/// Where servers/build.sh puts the launcher, under the checkout's target folder.
const BUILT_UNDER: &str = "servers/kube-apiserver";

/// How long kube-apiserver may take to answer `/readyz` (its launcher gives up after 120 s
/// itself; this is the run's bound on the whole start).
const READY_TIMEOUT: Duration = Duration::from_secs(150);

/// How long its graceful shutdown may take before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(60);

/// How often the start and the stop look.
const TICK: Duration = Duration::from_millis(100);

/// A kube-apiserver the run started; stopped (and its folder removed) by [`stop`] or when
/// dropped.
///
/// [`stop`]: Launched::stop
#[derive(Debug)]
pub struct Launched {
    /// The launcher's process, until it is stopped.
    child: Mutex<Option<Child>>,
    /// Its folder (kubeconfig, certificates, etcd's data, log), until it is stopped.
    folder: Mutex<Option<tempfile::TempDir>>,
    /// The kubeconfig it writes once ready.
    kubeconfig: PathBuf,
    /// Its process id.
    pid: u32,
}

impl Launched {
    /// Finds the launcher, shows what it starts, starts it and waits until it is ready (its
    /// kubeconfig written; said unless `quiet`). An error names the command and the log's
    /// last lines.
    pub fn start(quiet: bool) -> anyhow::Result<Arc<Launched>> {
        let program = launcher()?;
        let folder = tempfile::Builder::new()
            .prefix("informer-mem-kube-apiserver-")
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir()
            .context("failed to make kube-apiserver's folder")?;
        let output = folder.path().join("launcher.out");
        let log = std::fs::File::create(&output)
            .with_context(|| format!("failed to create {}", output.display()))?;
        let mut command = Command::new(&program);
        command
            .arg("--dir")
            .arg(folder.path())
            // It removes the folder itself once stopped: after a run that died too.
            .arg("--remove-dir-on-exit")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            // A Ctrl-C at the terminal reaches the run, which stops the server itself once
            // the variants have ended (and removed their namespaces).
            .process_group(0);
        crate::runner::die_with_parent(&mut command, libc::SIGTERM);
        // Shown even with --quiet, as every program a run starts is.
        files::say!(
            "starting the real kube-apiserver for this run: {} --dir {}",
            program.display(),
            folder.path().display()
        );
        let child = command
            .spawn()
            .with_context(|| format!("failed to start {}", program.display()))?;
        let pid = child.id();
        let launched = Arc::new(Launched {
            child: Mutex::new(Some(child)),
            kubeconfig: folder.path().join("kubeconfig"),
            pid,
            folder: Mutex::new(Some(folder)),
        });
        let started = Instant::now();
        launched.wait_ready(&program)?;
        if !quiet {
            files::say!(
                "kube-apiserver ready after {:.1} s (pid {pid}); it is stopped and its folder \
                 removed when the run ends",
                started.elapsed().as_secs_f64()
            );
        }
        Ok(launched)
    }

    /// What the run is given: the server's kubeconfig and its process, measured from
    /// outside; the server itself, to stop on a signal.
    pub fn config(self: &Arc<Launched>) -> ClusterConfig {
        ClusterConfig {
            kubeconfig: self.kubeconfig.clone(),
            read_only: false,
            server_pid: Some(self.pid),
            launched: Some(Arc::clone(self)),
        }
    }

    /// Waits for the kubeconfig the launcher writes once `/readyz` answers 200.
    fn wait_ready(&self, program: &Path) -> anyhow::Result<()> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if self.kubeconfig.exists() {
                return Ok(());
            }
            let exited = {
                let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
                match child.as_mut().map(Child::try_wait) {
                    Some(Ok(Some(status))) => Some(status.to_string()),
                    Some(Err(e)) => Some(e.to_string()),
                    _ => None,
                }
            };
            let why = match exited {
                Some(status) => format!("exited before it was ready ({status})"),
                None if Instant::now() >= deadline => {
                    format!("was not ready after {} s", READY_TIMEOUT.as_secs())
                }
                None => {
                    std::thread::sleep(TICK);
                    continue;
                }
            };
            let tail = self.log_tail();
            self.stop();
            bail!(
                "kube-apiserver ({} --dir ...) {why}; the last lines of its log:\n{tail}",
                program.display()
            );
        }
    }

    /// The last lines of the launcher's output and of kube-apiserver's log.
    fn log_tail(&self) -> String {
        let folder = self.folder.lock().unwrap_or_else(|e| e.into_inner());
        let Some(folder) = folder.as_ref() else {
            return String::new();
        };
        ["launcher.out", "kube-apiserver.log"]
            .iter()
            .filter_map(|name| std::fs::read_to_string(folder.path().join(name)).ok())
            .flat_map(|text| {
                let lines: Vec<String> = text.lines().map(str::to_owned).collect();
                let from = lines.len().saturating_sub(15);
                lines.into_iter().skip(from)
            })
            .map(|line| format!("  {line}\n"))
            .collect()
    }

    /// Stops the server (SIGTERM, then SIGKILL after [`STOP_TIMEOUT`]) and removes its
    /// folder. Once: a second call does nothing.
    pub fn stop(&self) {
        if let Some(mut child) = self.child.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let pid = child.id() as libc::pid_t;
            // SAFETY: kill(2) on the process this run started and has not yet reaped.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
            let deadline = Instant::now() + STOP_TIMEOUT;
            while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(TICK);
            }
            if matches!(child.try_wait(), Ok(None)) {
                files::say!(
                    "kube-apiserver did not stop within {} s of SIGTERM: killing it",
                    STOP_TIMEOUT.as_secs()
                );
                let _ = child.kill();
                let _ = child.wait();
            }
        }
        // A clean stop has removed it already (`--remove-dir-on-exit`).
        if let Some(folder) = self.folder.lock().unwrap_or_else(|e| e.into_inner()).take()
            && let Err(e) = folder.close()
            && e.kind() != std::io::ErrorKind::NotFound
        {
            files::say!("error: failed to remove kube-apiserver's folder: {e}");
        }
    }
}

impl Drop for Launched {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The launcher servers/build.sh built ([`built`]).
fn launcher() -> anyhow::Result<PathBuf> {
    built(BUILT_UNDER).map_err(|looked| {
        anyhow::anyhow!(
            "--server kube-apiserver: the real kube-apiserver is not built (looked for {}); \
             build it with `bash servers/build.sh` in informer-mem's checkout (about six \
             minutes the first time)",
            looked.join(" and ")
        )
    })
}

/// A program a build script of the checkout built, `under` its target folder
/// (`servers/kube-apiserver`): beside this executable's target folder
/// (`target/release/informer-mem` → `target/servers/kube-apiserver`), or under the
/// current directory's; where it is not, the places looked at.
pub(super) fn built(under: &str) -> Result<PathBuf, Vec<String>> {
    let mut candidates = Vec::new();
    if let Ok(exe) = std::env::current_exe()
        && let Some(target) = exe.parent().and_then(Path::parent)
    {
        candidates.push(target.join(under));
    }
    if let Ok(here) = std::env::current_dir() {
        candidates.push(here.join("target").join(under));
    }
    candidates.dedup();
    match candidates.iter().find(|c| c.is_file()) {
        Some(found) => Ok(found.clone()),
        None => Err(candidates.iter().map(|c| c.display().to_string()).collect()),
    }
}
