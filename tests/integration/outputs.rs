//! What `run` writes besides its report (chart, exports), where its progress goes, and
//! `export`; and that every output is checked before anything runs.

use std::path::{Path, PathBuf};
use std::process::Output;

use predicates::prelude::*;
use serde_json::Value;

use units::Bytes;

use crate::util::{bin, fixture};

/// Two variants, three phases, 60 pods: a run of a fraction of a second.
const TINY: &str = include_str!("../fixtures/tiny.toml");

/// A folder holding `tiny.toml`.
fn tiny() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("tiny.toml");
    std::fs::write(&scenario, TINY).unwrap();
    (dir, scenario)
}

fn run(dir: &Path, args: &[&str]) -> Output {
    bin()
        .current_dir(dir)
        .arg("run")
        .args(args)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Without `--out` a run writes to a folder of its own, never over a committed baseline
/// in reports/: the README's main command leaves a clone's `git status` clean.
#[test]
fn a_run_without_out_writes_its_report_and_chart_to_runs() {
    let (dir, _) = tiny();
    std::fs::create_dir(dir.path().join("reports")).unwrap();
    let output = run(dir.path(), &["tiny.toml", "--quiet"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let report = json(&dir.path().join("runs/tiny.json"));
    assert_eq!(report["scenario"]["name"], "tiny");
    assert!(dir.path().join("runs/tiny.svg").is_file());
    let baselines = std::fs::read_dir(dir.path().join("reports"))
        .unwrap()
        .count();
    assert_eq!(baselines, 0, "nothing is written to reports/");
}

#[test]
fn a_run_writes_its_chart_beside_the_report_and_every_export_asked_for() {
    let (dir, _) = tiny();
    let output = run(
        dir.path(),
        &[
            "tiny.toml",
            "--out",
            "out/r.json",
            "--export-markdown",
            "-",
            "--export-github-benchmark",
            "gh.json",
            "--export-bencher",
            "bmf.json",
            "--export-json",
            "copy.json",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    // Standard output is the markdown; the table went to standard error.
    let stdout = text(&output.stdout);
    assert!(stdout.starts_with("### informer-mem: `tiny`"), "{stdout}");
    assert!(stdout.contains("| kube-runtime | list |"), "{stdout}");
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("┌"),
        "the table is on standard error: {stderr}"
    );

    let report = json(&dir.path().join("out/r.json"));
    assert_eq!(json(&dir.path().join("copy.json")), report);
    let gh = json(&dir.path().join("gh.json"));
    assert_eq!(
        gh.as_array().unwrap().len(),
        2 * 3 * 8,
        "process and informer figures"
    );
    let delete = &report["variants"][1]["phases"][2];
    let entry = gh
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "tiny/kube-runtime/delete/live_bytes")
        .expect("an entry per variant, phase and metric");
    assert_eq!(entry["value"], delete["live_bytes"]);
    let bmf = json(&dir.path().join("bmf.json"));
    assert_eq!(
        bmf["tiny/kube-runtime/delete"]["alloc-count"]["value"],
        delete["alloc_count"]
    );

    // The chart: well-formed SVG naming both variants.
    let svg = std::fs::read_to_string(dir.path().join("out/r.svg")).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    for name in ["client-go", "kube-runtime"] {
        assert!(
            doc.descendants()
                .any(|n| n.has_tag_name("text") && n.text().map(str::trim) == Some(name)),
            "the chart's legend names {name}"
        );
    }
}

#[test]
fn export_converts_a_report_as_run_would_have_written_it() {
    let (dir, _) = tiny();
    let output = run(
        dir.path(),
        &[
            "tiny.toml",
            "--out",
            "r.json",
            "--export-bencher",
            "bmf.json",
            "-q",
        ],
    );
    assert_eq!(output.status.code(), Some(0));
    bin()
        .current_dir(dir.path())
        .args([
            "export",
            "r.json",
            "--format",
            "bencher",
            "--out",
            "again.json",
        ])
        .assert()
        .code(0);
    assert_eq!(
        std::fs::read(dir.path().join("again.json")).unwrap(),
        std::fs::read(dir.path().join("bmf.json")).unwrap()
    );
    let svg = bin()
        .current_dir(dir.path())
        .args(["export", "r.json", "--format", "svg"])
        .output()
        .unwrap();
    assert_eq!(svg.stdout, std::fs::read(dir.path().join("r.svg")).unwrap());
    bin()
        .args(["export", "no-such.json", "--format", "markdown"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no-such.json"));
}

#[test]
fn progress_is_lines_when_piped_and_nothing_when_quiet() {
    let (dir, _) = tiny();
    let loud = run(dir.path(), &["tiny.toml", "--out", "r.json", "--no-chart"]);
    let stderr = text(&loud.stderr);
    assert!(stderr.contains("[2/2] kube-runtime"), "{stderr}");
    assert!(stderr.contains("update"), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "no escape codes off a terminal");
    assert!(!dir.path().join("r.svg").exists(), "--no-chart");
    let quiet = run(dir.path(), &["tiny.toml", "--out", "r.json", "--quiet"]);
    assert_eq!(quiet.status.code(), Some(0));
    assert_eq!(text(&quiet.stderr), "", "--quiet");
    assert!(
        text(&quiet.stdout).contains("kube-runtime"),
        "the table still prints"
    );
}

/// `run` on a pseudo-terminal (util-linux `script`), with `NO_COLOR` set or not.
fn run_on_a_terminal(dir: &Path, no_color: bool) -> String {
    let exe = assert_cmd::cargo::cargo_bin("informer-mem");
    let command = format!("{} run tiny.toml --out r.json --no-chart", exe.display());
    let mut script = std::process::Command::new("script");
    script
        .current_dir(dir)
        .args(["-qec", &command, "/dev/null"])
        .env_remove("NO_COLOR")
        .env("TERM", "xterm-256color");
    if no_color {
        script.env("NO_COLOR", "1");
    }
    let output = script.output().expect("util-linux `script` runs");
    assert!(output.status.success(), "{}", text(&output.stderr));
    text(&output.stdout)
}

#[test]
fn a_terminal_gets_progress_bars_coloured_unless_no_color() {
    let (dir, _) = tiny();
    let coloured = run_on_a_terminal(dir.path(), false);
    assert!(coloured.contains("3/3 phases"), "{coloured}");
    assert!(
        coloured.contains("\u{1b}[36m"),
        "the bar is cyan: {coloured:?}"
    );
    let plain = run_on_a_terminal(dir.path(), true);
    assert!(plain.contains("3/3 phases"), "{plain}");
    assert!(!plain.contains("\u{1b}[36m"), "NO_COLOR: {plain:?}");
}

#[test]
fn outputs_are_checked_before_anything_runs() {
    let (dir, scenario) = tiny();
    let before = std::fs::read(&scenario).unwrap();
    let refused = |args: &[&str], expected: &str| {
        let output = run(dir.path(), args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = text(&output.stderr);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("[1/2]"), "{args:?} ran: {stderr}");
    };
    refused(&["tiny.toml", "--out", "tiny.toml"], "that is the input");
    refused(
        &[
            "tiny.toml",
            "--out",
            "r.json",
            "--export-bencher",
            "tiny.toml",
        ],
        "that is the input",
    );
    refused(
        &["tiny.toml", "--out", "tiny.toml/r.json"],
        "is a file, not a folder",
    );
    refused(
        &[
            "tiny.toml",
            "--export-markdown",
            "-",
            "--export-bencher",
            "-",
        ],
        "would both go to standard output",
    );
    refused(
        &["tiny.toml", "--out", "r.json", "--chart", "r.json"],
        "would both go to `r.json`",
    );
    let long = "x".repeat(300);
    refused(
        &["tiny.toml", "--out", &long],
        "cannot write the JSON report",
    );
    assert_eq!(std::fs::read(&scenario).unwrap(), before);
    let entries = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(entries, 1, "nothing but the scenario was written");
}

#[test]
fn report_into_a_directory_is_refused_before_running() {
    let dir = tempfile::tempdir().unwrap();
    bin()
        .arg("run")
        .arg(fixture("small.toml"))
        .arg("--out")
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is a directory"));
}

#[test]
fn progress_lines_show_the_informers_own_figures_as_the_table_does() {
    // Each phase's line reads the same live and peak as the table's row: the informer's
    // own bytes, not the whole process's (the server's store and the harness are others).
    let (dir, _) = tiny();
    let output = run(dir.path(), &["tiny.toml", "--out", "r.json", "--no-chart"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let progress = text(&output.stderr);
    let report = json(&dir.path().join("r.json"));
    for variant in report["variants"].as_array().unwrap() {
        for phase in variant["phases"].as_array().unwrap() {
            let informer = &phase["components"]["informer"];
            let bytes = |v: &Value| Bytes(v.as_u64().unwrap()).to_string();
            let (live, peak) = (
                bytes(&informer["live_bytes"]),
                bytes(&informer["peak_live_bytes"]),
            );
            assert_ne!(
                informer["live_bytes"], phase["live_bytes"],
                "the process holds more than the informer"
            );
            let name = phase["name"].as_str().unwrap();
            let line = progress
                .lines()
                .find(|l| {
                    l.trim_start().starts_with(name)
                        && l.contains(&format!("live {live:>10}  peak {peak:>10}"))
                })
                .unwrap_or_else(|| {
                    panic!("no line for {name}: live {live}, peak {peak}:\n{progress}")
                });
            assert!(line.contains(" objects "), "{line}");
        }
    }
}

#[test]
fn a_selector_that_selects_no_object_is_noted_before_the_run() {
    let (dir, scenario) = tiny();
    let typo = TINY.replace(
        "kind = \"update\"\n",
        "kind = \"update\"\nselector = \"app=wbe\"\n",
    ) + "[[variant]]\nname = \"web only\"\nlabel_selector = \"app in (wbe)\"\n";
    std::fs::write(&scenario, typo).unwrap();
    let output = run(dir.path(), &["tiny.toml", "--out", "r.json"]);
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(
            "note: phase[1].selector `app=wbe` selects none of the 60 objects the scenario \
             starts with: phase `update` may change nothing"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("note: variant[2].label_selector `app in (wbe)` selects none"),
        "{stderr}"
    );
    // A selector that picks some objects gets no note.
    let fine = TINY.replace(
        "kind = \"update\"\n",
        "kind = \"update\"\nselector = \"app\"\n",
    );
    std::fs::write(&scenario, fine).unwrap();
    let output = run(dir.path(), &["tiny.toml", "--out", "r.json"]);
    assert!(!text(&output.stderr).contains("selects none"));
}
