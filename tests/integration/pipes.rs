//! Standard output that goes away or fills up: a closed pipe (`| head`) ends a command
//! quietly with the exit code it would have had; a full device (`> /dev/full`) is an error
//! (exit 2) with a message; nothing panics (exit 101). Every subcommand that writes to
//! standard output is tried both ways.

use std::process::{Command, Output, Stdio};

use crate::util::{edited_report, fixture, repo_file};

/// Where standard output goes.
#[derive(Debug, Clone, Copy)]
enum Stdout {
    /// A pipe whose reading end is already closed: every write fails with EPIPE.
    ClosedPipe,
    /// `/dev/full`: every write fails with ENOSPC.
    Full,
}

fn run(args: &[&str], stdout: Stdout) -> Output {
    let target: Stdio = match stdout {
        Stdout::ClosedPipe => {
            let (reader, writer) = std::io::pipe().unwrap();
            drop(reader);
            writer.into()
        }
        Stdout::Full => std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
            .into(),
    };
    Command::new(assert_cmd::cargo::cargo_bin("informer-mem"))
        .args(args)
        .stdout(target)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Every subcommand that prints, with the exit code it has when its output is read.
fn commands(dir: &std::path::Path) -> Vec<(Vec<String>, i32)> {
    let report = repo_file("reports/kube-parity.json").display().to_string();
    let (_keep, changed) = edited_report(|r| {
        r["variants"][0]["phases"][0]["alloc_count"] = (1u64 << 40).into();
    });
    let changed_copy = dir.join("changed.json");
    std::fs::copy(&changed, &changed_copy).unwrap();
    let changed = changed_copy.display().to_string();
    let scenario = fixture("tiny.toml").display().to_string();
    let out = dir.join("r.json").display().to_string();
    let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        (s(&["diff", &report, &changed]), 0),
        (s(&["diff", &report, &changed, "--format", "markdown"]), 0),
        (s(&["check", &report, "--baseline", &report]), 0),
        (s(&["check", &changed, "--baseline", &report]), 1),
        (
            s(&["export", &report, "--format", "markdown", "--out", "-"]),
            0,
        ),
        (
            s(&["run", &scenario, "--quiet", "--no-chart", "--out", &out]),
            0,
        ),
    ]
}

#[test]
fn a_closed_pipe_ends_every_command_quietly_with_its_own_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    for (args, code) in commands(dir.path()) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = run(&args, Stdout::ClosedPipe);
        assert_eq!(
            output.status.code(),
            Some(code),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            !stderr(&output).contains("panicked"),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    // The run's report is written even though its table could not be.
    assert!(dir.path().join("r.json").exists());
}

#[test]
fn a_full_stdout_is_an_error_that_names_what_could_not_be_written() {
    let dir = tempfile::tempdir().unwrap();
    for (args, _) in commands(dir.path()) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = run(&args, Stdout::Full);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            err.contains("cannot write") && err.contains("No space left on device"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn serve_with_its_stdout_closed_still_serves_and_stops_cleanly() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("informer-mem"))
        .arg("serve")
        .arg(fixture("serve-pods.toml"))
        .args(["--listen", "127.0.0.1:0", "--kubeconfig"])
        .arg(dir.path().join("kubeconfig"))
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let serving = stderr.next().unwrap().unwrap();
    assert!(serving.starts_with("serving "), "{serving}");
    assert!(dir.path().join("kubeconfig").exists());
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    let rest: Vec<String> = stderr.map_while(Result::ok).collect();
    assert_eq!(status.code(), Some(0), "{rest:?}");
    assert!(!rest.iter().any(|l| l.contains("panicked")), "{rest:?}");
}

/// Standard error gone too (`run ... 2>&1 | head -1`): the progress and the table are
/// lost, not the run; its report is written and it ends with its own exit code.
#[test]
fn a_closed_stderr_loses_the_progress_not_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(assert_cmd::cargo::cargo_bin("informer-mem"))
        .arg("run")
        .arg(fixture("tiny.toml"))
        .arg("--out")
        .arg(&report)
        .arg("--no-chart")
        .stdout(Stdio::null())
        .stderr(writer)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert!(!report["variants"].as_array().unwrap().is_empty());
}
