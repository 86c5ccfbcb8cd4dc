//! What each kind of destination does (the README's table of output cases, row by row):
//! a regular file is replaced whole, a symbolic link's target is written and the link
//! stays, a device, a FIFO or `/dev/stdout` is written in place and never renamed over,
//! `-` is standard output; one file under two spellings, or an output onto an input, is
//! refused before anything is written, naming both.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::util::{bin, fixture, repo_file};

/// `export` of a committed report as markdown to `out`, from `dir`.
fn export_to(dir: &Path, out: &str) -> Output {
    bin()
        .current_dir(dir)
        .arg("export")
        .arg(repo_file("reports/slice-retention.json"))
        .args(["--format", "markdown", "--out", out])
        .output()
        .unwrap()
}

/// What `export` writes, for comparison.
fn expected_markdown() -> Vec<u8> {
    let output = export_to(Path::new("."), "-");
    assert_eq!(output.status.code(), Some(0));
    output.stdout
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn shell(dir: &Path, command: &str) {
    let status = std::process::Command::new("sh")
        .current_dir(dir)
        .args(["-c", command])
        .status()
        .unwrap();
    assert!(status.success(), "{command}");
}

#[test]
fn regular_files_are_replaced_whole_and_links_keep_pointing_at_them() {
    let dir = tempfile::tempdir().unwrap();
    let expected = expected_markdown();
    // New, then existing.
    for _ in 0..2 {
        let output = export_to(dir.path(), "new.md");
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert_eq!(std::fs::read(dir.path().join("new.md")).unwrap(), expected);
    }
    // A link to an existing file, and a dangling link: the target is written, the link
    // stays a link.
    std::fs::write(dir.path().join("target.md"), "old").unwrap();
    shell(
        dir.path(),
        "ln -s target.md link.md && mkdir sub && ln -s ../later.md sub/dangling.md",
    );
    for (link, target) in [("link.md", "target.md"), ("sub/dangling.md", "later.md")] {
        let output = export_to(dir.path(), link);
        assert_eq!(output.status.code(), Some(0), "{link}: {}", stderr(&output));
        let meta = std::fs::symlink_metadata(dir.path().join(link)).unwrap();
        assert!(meta.file_type().is_symlink(), "{link} is still a link");
        assert_eq!(
            std::fs::read(dir.path().join(target)).unwrap(),
            expected,
            "{target}"
        );
    }
}

#[test]
fn devices_fifos_and_standard_output_are_written_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let expected = expected_markdown();
    // A character device of the test's own (as root); /dev/null otherwise.
    let device: PathBuf = if std::process::Command::new("mknod")
        .arg(dir.path().join("null"))
        .args(["c", "1", "3"])
        .status()
        .is_ok_and(|s| s.success())
    {
        dir.path().join("null")
    } else {
        PathBuf::from("/dev/null")
    };
    let output = export_to(dir.path(), device.to_str().unwrap());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let meta = std::fs::metadata(&device).unwrap();
    assert!(
        meta.file_type().is_char_device(),
        "{} is still a device",
        device.display()
    );
    // A FIFO: a reader gets every byte; the FIFO stays a FIFO.
    shell(dir.path(), "mkfifo pipe");
    let fifo = dir.path().join("pipe");
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let output = export_to(dir.path(), "pipe");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(reader.join().unwrap(), expected);
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    // `-` and /dev/stdout: the process's standard output; /dev/stdout stays a link.
    for stdout in ["-", "/dev/stdout"] {
        let output = export_to(dir.path(), stdout);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{stdout}: {}",
            stderr(&output)
        );
        assert_eq!(output.stdout, expected, "{stdout}");
    }
    let meta = std::fs::symlink_metadata("/dev/stdout").unwrap();
    assert!(meta.file_type().is_symlink(), "/dev/stdout is still a link");
}

#[test]
fn one_file_under_two_spellings_is_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("tiny.toml"), dir.path().join("tiny.toml")).unwrap();
    shell(dir.path(), "ln -s . same");
    for (out, other) in [("./r.json", "r.json"), ("same/r.json", "r.json")] {
        let output = bin()
            .current_dir(dir.path())
            .args([
                "run",
                "tiny.toml",
                "--no-chart",
                "--out",
                out,
                "--export-json",
                other,
            ])
            .output()
            .unwrap();
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{out} {other}: {err}");
        assert!(err.contains("would both go to"), "{err}");
        assert!(
            err.contains(out) && err.contains(other),
            "both named: {err}"
        );
        assert!(!dir.path().join("r.json").exists(), "nothing written");
    }
}

#[test]
fn an_output_onto_an_input_is_refused_and_the_input_kept() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    std::fs::copy(repo_file("reports/slice-retention.json"), &report).unwrap();
    let before = std::fs::read(&report).unwrap();
    shell(dir.path(), "ln -s report.json alias.json");
    for out in ["report.json", "./report.json", "alias.json"] {
        let output = bin()
            .current_dir(dir.path())
            .args([
                "export",
                "report.json",
                "--format",
                "markdown",
                "--out",
                out,
            ])
            .output()
            .unwrap();
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{out}: {err}");
        assert!(err.contains("that is the input"), "{out}: {err}");
        assert_eq!(std::fs::read(&report).unwrap(), before, "{out}");
    }
    // serve's kubeconfig onto its own scenario.
    let scenario = dir.path().join("serve.toml");
    std::fs::copy(fixture("serve-pods.toml"), &scenario).unwrap();
    let before = std::fs::read(&scenario).unwrap();
    let output = bin()
        .current_dir(dir.path())
        .args([
            "serve",
            "serve.toml",
            "--listen",
            "127.0.0.1:0",
            "--kubeconfig",
            "./serve.toml",
        ])
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("that is the input"), "{err}");
    assert_eq!(std::fs::read(&scenario).unwrap(), before);
    // A run's report, or its chart, onto the scenario's sample, named from another folder.
    std::fs::copy(fixture("sampled.toml"), dir.path().join("sampled.toml")).unwrap();
    std::fs::copy(
        fixture("sampled-pods.json"),
        dir.path().join("sampled-pods.json"),
    )
    .unwrap();
    let sample = std::fs::read(dir.path().join("sampled-pods.json")).unwrap();
    let folder = dir.path().file_name().unwrap().to_str().unwrap();
    for (flag, out) in [
        ("--out", format!("{folder}/sampled-pods.json")),
        (
            "--chart",
            format!("./{folder}/../{folder}/sampled-pods.json"),
        ),
    ] {
        let output = bin()
            .current_dir(dir.path().parent().unwrap())
            .args(["run", &format!("{folder}/sampled.toml"), flag, &out])
            .output()
            .unwrap();
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{flag}: {err}");
        assert!(err.contains("the scenario's sample"), "{flag}: {err}");
        assert_eq!(
            std::fs::read(dir.path().join("sampled-pods.json")).unwrap(),
            sample
        );
    }
}
