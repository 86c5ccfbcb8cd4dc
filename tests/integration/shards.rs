//! A run split across machines: `run --shard I/N` runs a share of the jobs, `merge`
//! joins the shard reports into the whole run's, exact figures and fits alike, and
//! refuses what does not make one run.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::determinism::assert_reports_match_exactly;
use super::util::{bin, fixture, repo_file};

/// Runs `scenario` (with `args`) whole and as shards 1/N to N/N in `dir`; the whole
/// report and the shards' files.
fn whole_and_shards(
    dir: &Path,
    scenario: &Path,
    args: &[&str],
    count: u32,
) -> (Value, Vec<PathBuf>) {
    let whole = dir.join("whole.json");
    let run = |out: &Path, more: &[&str]| {
        bin()
            .arg("run")
            .arg(scenario)
            .args(["--no-chart", "--quiet", "--out"])
            .arg(out)
            .args(args)
            .args(more)
            .assert()
            .success();
    };
    run(&whole, &[]);
    let shards: Vec<PathBuf> = (1..=count)
        .map(|i| {
            let out = dir.join(format!("shard-{i}.json"));
            run(&out, &["--shard", &format!("{i}/{count}")]);
            out
        })
        .collect();
    (read(&whole), shards)
}

fn read(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// `merge` of `shards` (in that order) to `out`: its exit code and stderr.
fn merge(shards: &[&Path], out: &Path) -> (i32, String) {
    let output = bin()
        .arg("merge")
        .args(shards)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output.status.code().unwrap(), stderr)
}

fn names(report: &Value) -> Vec<&str> {
    let variants = report["variants"].as_array().unwrap();
    variants
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect()
}

#[test]
fn shards_of_a_sweep_merge_into_the_whole_runs_figures_and_fits() {
    // scenarios/sizing.toml (three variants) at two small points: six jobs, two a shard.
    let dir = tempfile::tempdir().unwrap();
    let sizing = repo_file("scenarios/sizing.toml");
    let (whole, shards) = whole_and_shards(dir.path(), &sizing, &["--sweep", "count=200,400"], 3);
    // Each shard holds its share, dealt round-robin, and no fit.
    let first = read(&shards[0]);
    assert_eq!(
        names(&first),
        ["client-go LIST @ count=200", "client-go LIST @ count=400"]
    );
    assert_eq!(first["shard"]["jobs"], serde_json::json!([0, 3]));
    assert!(first.get("fits").is_none(), "{}", first["fits"]);
    // Merged in any order: the whole run's variants, exact figures and fits.
    let out = dir.path().join("merged.json");
    let (code, stderr) = merge(&[&shards[2], &shards[0], &shards[1]], &out);
    assert_eq!(code, 0, "{stderr}");
    let merged = read(&out);
    assert_eq!(names(&merged), names(&whole));
    assert_reports_match_exactly(&whole, &merged, "merged shards");
    assert!(!whole["fits"].as_array().unwrap().is_empty());
    assert_eq!(merged["fits"], whole["fits"]);
    assert_eq!(merged["scenario"], whole["scenario"]);
    assert!(merged.get("shard").is_none());
    // And the merged report gates on the whole one with nothing exact changed.
    let check = bin()
        .args(["check", "--baseline"])
        .arg(dir.path().join("whole.json"))
        .arg(&out)
        .output()
        .unwrap();
    assert!(check.status.success(), "{check:?}");
}

#[test]
fn shards_with_an_external_variant_merge_in_the_runs_order() {
    // Two built-in variants and a program (the Python informer) between them: one job
    // a shard.
    let dir = tempfile::tempdir().unwrap();
    let script = fixture("subjects/informer.py");
    let scenario = dir.path().join("external.toml");
    std::fs::write(
        &scenario,
        format!(
            r#"name = "external-shards"
[objects]
kind = "Pod"
count = 200

[[variant]]
name = "model"

[[variant]]
name = "python"
implementation = "external"
command = ["python3", "{}", "{{server}}", "{{resource}}", "{{listen}}", "plain"]
status = "http://{{listen}}/informer-mem/status"
quiet = "500ms"
timeout = "20s"

[[variant]]
name = "model again"

[[phase]]
kind = "list"

[[phase]]
kind = "update"
fraction = 0.5
"#,
            script.display()
        ),
    )
    .unwrap();
    let (whole, shards) = whole_and_shards(dir.path(), &scenario, &["--allow-commands"], 3);
    let out = dir.path().join("merged.json");
    let (code, stderr) = merge(&[&shards[1], &shards[2], &shards[0]], &out);
    assert_eq!(code, 0, "{stderr}");
    let merged = read(&out);
    assert_eq!(names(&merged), ["model", "python", "model again"]);
    assert!(
        merged["variants"][1]["error"].is_null(),
        "{}",
        merged["variants"][1]
    );
    // The program's own figures are advisory; the built-in variants' exact ones equal.
    let built_in = |r: &Value| {
        let mut r = r.clone();
        r["variants"].as_array_mut().unwrap().remove(1);
        r
    };
    assert_reports_match_exactly(&built_in(&whole), &built_in(&merged), "merged shards");
}

#[test]
fn merge_refuses_what_is_not_every_shard_of_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = fixture("tiny.toml");
    // Two variants: two shards of one job each.
    let (whole, shards) = whole_and_shards(dir.path(), &tiny, &[], 2);
    let whole_file = dir.path().join("whole.json");
    let out = dir.path().join("merged.json");
    let refused = |files: &[&Path], says: &str| {
        let (code, stderr) = merge(files, &out);
        assert_eq!(code, 2, "{files:?}: {stderr}");
        assert!(stderr.contains(says), "{files:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(!out.exists(), "{files:?}: nothing is written");
    };
    refused(&[&shards[0]], "shard 2/2 is missing");
    refused(&[&shards[0], &shards[0], &shards[1]], "are both shard 1");
    refused(&[&shards[0], &whole_file], "is not a shard");
    // A shard of another scenario, and one of another build.
    let mut other = read(&shards[1]);
    other["scenario"]["name"] = Value::from("other");
    let other_file = dir.path().join("other.json");
    std::fs::write(&other_file, other.to_string()).unwrap();
    refused(
        &[&shards[0], &other_file],
        "different runs: their scenarios differ",
    );
    let mut rebuilt = read(&shards[1]);
    rebuilt["shard"]["build"] = Value::from("0123");
    std::fs::write(&other_file, rebuilt.to_string()).unwrap();
    refused(&[&shards[0], &other_file], "their builds");
    // `check` and `diff` take whole runs.
    for command in ["check", "diff"] {
        let mut gate = bin();
        match command {
            "check" => gate.args(["check", "--baseline"]).arg(&whole_file),
            _ => gate.arg("diff").arg(&whole_file),
        };
        let output = gate.arg(&shards[0]).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{command}");
        let says = String::from_utf8_lossy(&output.stderr);
        assert!(
            says.contains("shard 1/2") && says.contains("merge"),
            "{says}"
        );
    }
    assert!(whole["shard"].is_null());
    // More shards than jobs: the run says so before running anything.
    let output = bin()
        .arg("run")
        .arg(&tiny)
        .args(["--no-chart", "--quiet", "--shard", "3/3", "--out"])
        .arg(dir.path().join("three.json"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let says = String::from_utf8_lossy(&output.stderr);
    assert!(says.contains("has no job"), "{says}");
    assert!(!dir.path().join("three.json").exists());
}
