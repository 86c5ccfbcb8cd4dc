//! What the test modules share: the binary, fixtures, and reading reports.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

/// A phase's exact figures: they repeat to the unit on every run of one build.
pub const EXACT_FIGURES: [&str; 6] = [
    "alloc_count",
    "dealloc_count",
    "realloc_count",
    "alloc_bytes",
    "live_bytes",
    "peak_live_bytes",
];

pub fn bin() -> Command {
    Command::cargo_bin("informer-mem").expect("the binary is built")
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

pub fn repo_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

/// Runs `scenario` with `--out` in a fresh folder and returns the parsed report.
pub fn run_report(scenario: &Path) -> Value {
    run_report_with(scenario, &[])
}

/// [`run_report`] with more arguments for `run`.
pub fn run_report_with(scenario: &Path, args: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.json");
    bin()
        .arg("run")
        .arg(scenario)
        .arg("--out")
        .arg(&out)
        .args(args)
        .assert()
        .success();
    serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap()
}

pub fn phases(variant: &Value) -> &Vec<Value> {
    variant["phases"].as_array().unwrap()
}

pub fn phase<'a>(variant: &'a Value, name: &str) -> &'a Value {
    phases(variant).iter().find(|p| p["name"] == name).unwrap()
}

/// Runs `run` on a scenario text in a fresh folder; returns the exit code, stdout and the
/// report.
pub fn run_text(text: &str) -> (i32, String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("scenario.toml");
    std::fs::write(&scenario, text).unwrap();
    let out = dir.path().join("report.json");
    let output = bin()
        .arg("run")
        .arg(&scenario)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let report = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
        report,
    )
}

/// A copy of a committed report, changed by `edit`, in a fresh folder.
pub fn edited_report(edit: impl FnOnce(&mut Value)) -> (tempfile::TempDir, PathBuf) {
    let mut report: Value =
        serde_json::from_slice(&std::fs::read(repo_file("reports/kube-parity.json")).unwrap())
            .unwrap();
    edit(&mut report);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("head.json");
    std::fs::write(&path, serde_json::to_vec(&report).unwrap()).unwrap();
    (dir, path)
}

/// `informer-mem check HEAD --baseline BASELINE`, ready for more arguments.
pub fn check(head: impl AsRef<Path>, baseline: impl AsRef<Path>) -> Command {
    let mut command = bin();
    command
        .arg("check")
        .arg(head.as_ref())
        .arg("--baseline")
        .arg(baseline.as_ref());
    command
}

/// Sends Ctrl-C (SIGINT) to `child`'s process group, as a terminal does to a job, and
/// waits for it to exit (at most 150 s); its exit status.
pub fn interrupt_group(child: &mut std::process::Child) -> std::process::ExitStatus {
    // SAFETY: kill has no memory preconditions; the group is the child's own.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(150);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still running after Ctrl-C"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
