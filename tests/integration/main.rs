//! Drives the real `informer-mem` binary: runs, reports, determinism, bad input; and
//! checks the built-in apiserver against kube-runtime (`conformance`).

mod bad_scenarios;
mod conformance;
mod events;
mod measurement;
mod outputs;
mod runner;
mod serve;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn bin() -> Command {
    Command::cargo_bin("informer-mem").expect("the binary is built")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn repo_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

/// Runs `scenario` with `--out` in a fresh folder and returns the parsed report.
fn run_report(scenario: &Path) -> Value {
    run_report_with(scenario, &[])
}

/// [`run_report`] with more arguments for `run`.
fn run_report_with(scenario: &Path, args: &[&str]) -> Value {
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

fn phases(variant: &Value) -> &Vec<Value> {
    variant["phases"].as_array().unwrap()
}

fn phase<'a>(variant: &'a Value, name: &str) -> &'a Value {
    phases(variant).iter().find(|p| p["name"] == name).unwrap()
}

#[test]
fn run_prints_a_table_and_writes_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("nested/small.json");
    bin()
        .arg("run")
        .arg(fixture("small.toml"))
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "shared array, client-go, pages of 7",
        ))
        .stdout(predicate::str::contains(
            "per-item copy, kube-runtime, pages of 7",
        ))
        .stdout(predicate::str::contains("resident*"));
    let report: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(report["format_version"], 1);
    assert_eq!(report["tool"]["name"], "informer-mem");
    assert_eq!(report["scenario"]["objects"]["count"], 500);
    for variant in report["variants"].as_array().unwrap() {
        assert!(variant["error"].is_null(), "{}", variant["error"]);
        assert_eq!(phases(variant).len(), 8);
    }
}

#[test]
fn store_matches_the_server_at_every_phase_end() {
    let report = run_report(&fixture("small.toml"));
    for variant in report["variants"].as_array().unwrap() {
        for p in phases(variant) {
            assert_eq!(
                p["objects"], p["server_objects"],
                "{} / {}",
                variant["name"], p["name"]
            );
        }
        assert_eq!(phase(variant, "list")["objects"], 500);
        assert_eq!(phase(variant, "delete")["objects"], 250);
        assert_eq!(phase(variant, "create")["objects"], 300);
        assert_eq!(phase(variant, "recreate")["objects"], 300);
        // A recreate is a DELETED then an ADDED for the same name.
        assert_eq!(
            phase(variant, "recreate")["api_requests"]["watch_events"],
            20
        );
        // The selected delete removes some pods (those of one app out of ten), one
        // DELETED event each.
        let before = phase(variant, "outage")["objects"].as_u64().unwrap();
        let selected = phase(variant, "delete app=web");
        let after = selected["objects"].as_u64().unwrap();
        assert!(after < before && after > before / 2, "{before} -> {after}");
        assert_eq!(selected["api_requests"]["watch_events"], before - after);
    }
}

#[test]
fn list_rules_decide_how_many_requests_a_list_takes() {
    let report = run_report(&fixture("small.toml"));
    let variants = report["variants"].as_array().unwrap();
    // client-go asks resourceVersion "0" first: the watch cache ignores `limit`.
    let client_go = &phase(&variants[0], "list")["api_requests"];
    assert_eq!(client_go["list"], 1);
    // kube-runtime asks a consistent read, paged.
    let kube_runtime = &phase(&variants[1], "list")["api_requests"];
    assert_eq!(kube_runtime["list"], 500u64.div_ceil(7));
    assert_eq!(kube_runtime["watch"], 1);
    assert_eq!(phase(&variants[1], "update")["api_requests"]["list"], 0);
    // A forced relist: one 410 on the re-watch, then client-go relists at its last
    // version, unpaged (one request), and kube-runtime pages again.
    let relisted = |v: &Value| phase(v, "relist")["objects"].as_u64().unwrap();
    let relist = &phase(&variants[0], "relist")["api_requests"];
    assert_eq!(relist["expired"], 1);
    assert_eq!(relist["list"], 1);
    let relist = &phase(&variants[1], "relist")["api_requests"];
    assert_eq!(relist["list"], relisted(&variants[1]).div_ceil(7));
    for v in variants {
        assert_eq!(
            phase(v, "relist")["objects"],
            phase(v, "recreate")["objects"]
        );
    }
}

#[test]
fn allocation_counts_repeat_exactly_across_runs() {
    assert_runs_repeat_exactly(&fixture("small.toml"));
}

#[test]
fn every_shipped_scenario_repeats_exactly_at_a_small_scale() {
    // The shipped scenarios' variants and phases, on 400 objects so that two runs of each
    // stay quick; phase counts above that are capped at the objects alive.
    let dir = tempfile::tempdir().unwrap();
    let mut shipped: Vec<PathBuf> = std::fs::read_dir(repo_file("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    shipped.sort();
    assert!(shipped.len() >= 6, "{shipped:?}");
    for path in shipped {
        let mut scenario: toml::Table = std::fs::read_to_string(&path).unwrap().parse().unwrap();
        scenario["objects"]["count"] = toml::Value::Integer(400);
        // A settle phase's real-time wait measures the machine, not the code: skip it.
        if let Some(phases) = scenario.get_mut("phase").and_then(|p| p.as_array_mut()) {
            for phase in phases
                .iter_mut()
                .filter(|p| p["kind"].as_str() == Some("settle"))
            {
                phase["decay"] = toml::Value::from("purge");
            }
        }
        let small = dir.path().join(path.file_name().unwrap());
        std::fs::write(&small, toml::to_string(&scenario).unwrap()).unwrap();
        assert_runs_repeat_exactly(&small);
    }
}

#[test]
fn exact_figures_do_not_depend_on_how_many_variants_run_at_once() {
    // small.toml's variants twice over: four variants, so that three jobs leave one waiting.
    let mut scenario: toml::Table = std::fs::read_to_string(fixture("small.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let variants = scenario["variant"].as_array_mut().unwrap();
    let copies: Vec<toml::Value> = variants
        .iter()
        .map(|v| {
            let mut v = v.clone();
            let name = format!("{} again", v["name"].as_str().unwrap());
            v["name"] = toml::Value::from(name);
            v
        })
        .collect();
    variants.extend(copies);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("four.toml");
    std::fs::write(&path, toml::to_string(&scenario).unwrap()).unwrap();
    let one = run_report_with(&path, &["--jobs", "1"]);
    for jobs in ["2", "3"] {
        let parallel = run_report_with(&path, &["--jobs", jobs]);
        let names = |r: &Value| -> Vec<Value> {
            r["variants"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v["name"].clone())
                .collect()
        };
        assert_eq!(
            names(&one),
            names(&parallel),
            "--jobs {jobs}: variant order"
        );
        assert_reports_match_exactly(&one, &parallel, &format!("--jobs {jobs}"));
    }
    // Progress still shows one variant after another, each with its phases.
    let output = bin()
        .arg("run")
        .arg(&path)
        .args(["--jobs", "3", "--out"])
        .arg(dir.path().join("r.json"))
        .output()
        .unwrap();
    let progress = String::from_utf8(output.stderr).unwrap();
    let headers: Vec<&str> = progress
        .lines()
        .filter(|l| l.starts_with('['))
        .map(|l| &l[..5])
        .collect();
    assert_eq!(headers, ["[1/4]", "[2/4]", "[3/4]", "[4/4]"], "{progress}");
}

/// Runs `scenario` twice and checks that every exact figure of every phase repeats and
/// that every phase ends consistent.
fn assert_runs_repeat_exactly(scenario: &Path) {
    let a = run_report(scenario);
    let b = run_report(scenario);
    assert_reports_match_exactly(&a, &b, &scenario.display().to_string());
}

/// Checks that every exact figure of every phase, components included, is the same in
/// `a` and `b`, and that every phase the scenario expects to end consistent does.
fn assert_reports_match_exactly(a: &Value, b: &Value, label: &str) {
    let exact = [
        "alloc_count",
        "dealloc_count",
        "realloc_count",
        "alloc_bytes",
        "live_bytes",
        "peak_live_bytes",
    ];
    let (variants_a, variants_b) = (
        a["variants"].as_array().unwrap(),
        b["variants"].as_array().unwrap(),
    );
    assert_eq!(variants_a.len(), variants_b.len(), "{label}");
    for (va, vb) in variants_a.iter().zip(variants_b) {
        assert!(va["error"].is_null(), "{label}: {}", va["error"]);
        assert_eq!(
            phases(va).len(),
            phases(vb).len(),
            "{label} / {}",
            va["name"]
        );
        for (pa, pb) in phases(va).iter().zip(phases(vb)) {
            let at = format!("{label} / {} / {}", va["name"], pa["name"]);
            for key in exact {
                assert_eq!(pa[key], pb[key], "{at} / {key}");
                for component in ["informer", "apiserver", "harness"] {
                    let (ca, cb) = (&pa["components"][component], &pb["components"][component]);
                    assert!(ca[key].is_u64(), "{at} / {component} / {key}");
                    assert_eq!(ca[key], cb[key], "{at} / {component} / {key}");
                }
            }
            assert_eq!(pa["consistent"], pb["consistent"], "{at}");
            if pa["expect_consistent"] == true {
                assert_eq!(pa["consistent"], true, "{at}");
            }
        }
        // A phase may allocate nothing (a resync without a period), a variant not.
        let allocs = |v: &Value| -> u64 {
            phases(v)
                .iter()
                .map(|p| p["alloc_count"].as_u64().unwrap())
                .sum()
        };
        assert!(allocs(va) > 0, "{label} / {}", va["name"]);
    }
}

#[test]
fn shared_array_keeps_the_list_alive_after_deletes_and_copies_do_not() {
    // The acceptance scenario itself: 10,000 pods, 99.9% deleted.
    let report = run_report(&repo_file("scenarios/slice-retention.toml"));
    let kept = |variant: &Value| {
        let after_list = phase(variant, "list")["live_bytes"].as_f64().unwrap();
        let after_delete = phase(variant, "delete")["live_bytes"].as_f64().unwrap();
        after_delete / after_list
    };
    let variants = report["variants"].as_array().unwrap();
    assert_eq!(variants[0]["config"]["store"], "shared-array");
    assert_eq!(variants[1]["config"]["store"], "per-item-copy");
    assert!(
        kept(&variants[0]) >= 0.90,
        "shared array kept {:.3}",
        kept(&variants[0])
    );
    assert!(
        kept(&variants[1]) <= 0.05,
        "per-item copy kept {:.3}",
        kept(&variants[1])
    );
    for v in variants {
        assert_eq!(phase(v, "list")["objects"], 10_000);
        assert_eq!(phase(v, "delete")["objects"], 10);
        assert_components_add_up(v);
        // Attribution: after the list, the informer holds nearly everything and the
        // apiserver its compact state only.
        let list = phase(v, "list");
        let c = &list["components"];
        let share =
            c["informer"]["live_bytes"].as_f64().unwrap() / list["live_bytes"].as_f64().unwrap();
        assert!(share >= 0.95, "{}: informer holds {share:.3}", v["name"]);
        let per_object = c["apiserver"]["live_bytes"].as_u64().unwrap() / 10_000;
        assert!(
            per_object <= 100,
            "{}: apiserver {per_object} B/object",
            v["name"]
        );
    }
}

/// Every exact figure of every phase (and setup) of `variant` is the sum of its
/// components' figures; peaks are each at most the total peak.
fn assert_components_add_up(variant: &Value) {
    let records = std::iter::once(&variant["setup"]).chain(phases(variant));
    for record in records {
        let c = &record["components"];
        let parts = ["informer", "apiserver", "harness"];
        let keys: &[&str] = if record.get("dealloc_count").is_some() {
            &[
                "alloc_count",
                "dealloc_count",
                "realloc_count",
                "alloc_bytes",
                "live_bytes",
            ]
        } else {
            &["alloc_count", "live_bytes"]
        };
        for key in keys {
            let sum: u64 = parts.iter().map(|p| c[p][key].as_u64().unwrap()).sum();
            assert_eq!(
                sum,
                record[key].as_u64().unwrap(),
                "{} {key}",
                record["name"]
            );
        }
        for p in parts {
            if let Some(total) = record["peak_live_bytes"].as_u64() {
                assert!(c[p]["peak_live_bytes"].as_u64().unwrap() <= total);
            }
        }
    }
}

#[test]
fn report_keys_are_stable() {
    let mut report = run_report(&fixture("small.toml"));
    // The scenario path depends on the checkout; the measured values on the machine (and
    // the harness's live bytes on the environment the process started with).
    report["scenario"]["file"] = Value::from("[file]");
    for variant in report["variants"].as_array_mut().unwrap() {
        let variant = variant.as_object_mut().unwrap();
        let mut records: Vec<&mut Value> = Vec::new();
        for (key, value) in variant.iter_mut() {
            match key.as_str() {
                "setup" => records.push(value),
                "phases" => records.extend(value.as_array_mut().unwrap()),
                _ => {}
            }
        }
        for record in records {
            for (_, component) in record["components"].as_object_mut().unwrap() {
                for (_, value) in component.as_object_mut().unwrap() {
                    *value = Value::from("[measured]");
                }
            }
        }
    }
    insta::assert_json_snapshot!(report, {
        ".variants[].setup.alloc_count" => "[measured]",
        ".variants[].setup.live_bytes" => "[measured]",
        ".variants[].setup.rss_bytes" => "[measured]",
        ".variants[].phases[].alloc_count" => "[measured]",
        ".variants[].phases[].dealloc_count" => "[measured]",
        ".variants[].phases[].realloc_count" => "[measured]",
        ".variants[].phases[].alloc_bytes" => "[measured]",
        ".variants[].phases[].live_bytes" => "[measured]",
        ".variants[].phases[].peak_live_bytes" => "[measured]",
        ".variants[].phases[].jemalloc.allocated" => "[measured]",
        ".variants[].phases[].jemalloc.active" => "[measured]",
        ".variants[].phases[].jemalloc.resident" => "[measured]",
        ".variants[].phases[].jemalloc.mapped" => "[measured]",
        ".variants[].phases[].jemalloc.retained" => "[measured]",
        ".variants[].phases[].rss_bytes" => "[measured]",
        ".variants[].phases[].rss_peak_bytes" => "[measured]",
        ".variants[].phases[].duration_ms" => "[measured]",
        ".variants[].phases[].peak_over_live" => "[measured]",
        ".tool.version" => "[version]",
    });
}

/// Runs `run` on a scenario text written to `bad.toml` in a fresh working directory and
/// checks the failure: exit code 2, an error naming the file and `expected`, and nothing
/// written under reports/.
fn rejects(text: &str, expected: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.toml"), text).unwrap();
    let assert = bin()
        .current_dir(dir.path())
        .args(["run", "bad.toml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("failed to load `bad.toml`"));
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    for e in expected {
        assert!(stderr.contains(e), "{stderr:?} lacks {e:?}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        !dir.path().join("reports").exists(),
        "nothing may be written"
    );
}

const VALID: &str = r#"name = "t"
[objects]
count = 10
[[variant]]
name = "a"
store = "shared-array"
[[phase]]
kind = "list"
[[phase]]
kind = "delete"
fraction = 0.5
"#;

#[test]
fn missing_file_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    bin()
        .current_dir(dir.path())
        .args(["run", "nope.toml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("failed to read `nope.toml`"));
    assert!(!dir.path().join("reports").exists());
}

#[test]
fn malformed_toml_is_rejected_with_its_line() {
    rejects(&VALID.replace("[objects]", "[objects"), &["line 2"]);
}

#[test]
fn unknown_key_is_rejected() {
    rejects(
        &VALID.replace("count = 10", "count = 10\nsize = 3"),
        &["objects", "unknown field `size`"],
    );
}

#[test]
fn zero_count_is_rejected() {
    rejects(
        &VALID.replace("count = 10", "count = 0"),
        &["at `objects.count` (line 3)", "out of range"],
    );
}

#[test]
fn negative_count_is_rejected() {
    rejects(
        &VALID.replace("count = 10", "count = -3"),
        &["at `objects.count` (line 3)"],
    );
}

#[test]
fn fraction_outside_zero_one_is_rejected() {
    for bad in ["0", "0.0", "1.01", "-0.5"] {
        rejects(
            &VALID.replace("fraction = 0.5", &format!("fraction = {bad}")),
            &["at `phase[1].fraction` (line 11)", "outside (0, 1]"],
        );
    }
}

#[test]
fn unknown_store_mode_is_rejected_with_the_choices() {
    rejects(
        &VALID.replace("shared-array", "shared"),
        &[
            "at `variant[0].store` (line 6)",
            "shared-array",
            "per-item-copy",
        ],
    );
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

/// Runs `run` on a scenario text in a fresh folder; returns the exit code, stdout and the
/// report.
fn run_text(text: &str) -> (i32, String, Value) {
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

const DROPS_DELETES: &str = r#"
name = "oracle"
[objects]
count = 200
[[variant]]
name = "correct"
[[variant]]
name = "drops deletes"
fault = "ignore-deletes"
[[phase]]
kind = "list"
[[phase]]
kind = "delete"
count = 30
[[phase]]
kind = "update"
count = 10
"#;

#[test]
fn a_store_that_misses_deletes_is_caught_and_fails_the_run() {
    let (code, stdout, report) = run_text(DROPS_DELETES);
    assert_eq!(code, 1, "{stdout}");
    let variants = report["variants"].as_array().unwrap();
    for p in phases(&variants[0]) {
        assert_eq!(p["consistent"], true, "{}", p["name"]);
    }
    let wrong = phase(&variants[1], "delete");
    assert_eq!(wrong["consistent"], false);
    assert_eq!(wrong["extra"], 30);
    assert_eq!(wrong["missing"], 0);
    assert_eq!(wrong["stale"], 0);
    assert_eq!(wrong["objects"], 200);
    assert_eq!(wrong["server_objects"], 170);
    assert!(stdout.contains("30 extra"), "{stdout}");
}

#[test]
fn an_expected_inconsistency_is_shown_but_passes() {
    let text = DROPS_DELETES.replace(
        "kind = \"delete\"\ncount = 30",
        "kind = \"delete\"\ncount = 30\nexpect_consistent = false",
    );
    let text = text.replace(
        "kind = \"update\"\ncount = 10",
        "kind = \"create\"\ncount = 5",
    );
    let (code, stdout, report) = run_text(&text);
    // The create phase is expected to be consistent and is not (30 extra remain).
    assert_eq!(code, 1, "{stdout}");
    let text = text.replace(
        "kind = \"create\"\ncount = 5",
        "kind = \"create\"\ncount = 5\nexpect_consistent = false",
    );
    let (code, stdout, _) = run_text(&text);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("30 extra (expected)"), "{stdout}");
    assert_eq!(
        report["variants"][1]["phases"][1]["expect_consistent"],
        false
    );
}

#[test]
fn every_kind_is_cached_whole_and_as_metadata_by_both_implementations() {
    for kind in ["ConfigMap", "Secret"] {
        let text = format!(
            r#"
name = "kinds"
[objects]
kind = "{kind}"
count = 120
namespaces = 4
[[variant]]
name = "client-go"
page_size = 25
[[variant]]
name = "watch-list, metadata, stripped"
initial_sync = "watch-list"
projection = "metadata"
transform = ["managed-fields"]
[[variant]]
name = "kube-runtime"
implementation = "kube-runtime"
page_size = 25
[[variant]]
name = "kube-runtime, watch-list, metadata"
implementation = "kube-runtime"
initial_sync = "watch-list"
projection = "metadata"
[[phase]]
kind = "list"
[[phase]]
kind = "update"
fraction = 0.5
[[phase]]
kind = "delete"
count = 20
[[phase]]
kind = "relist"
[[phase]]
kind = "recreate"
count = 5
disconnect = true
compact = true
"#
        );
        let (code, stdout, report) = run_text(&text);
        assert_eq!(code, 0, "{kind}: {stdout}");
        for v in report["variants"].as_array().unwrap() {
            assert!(v["error"].is_null(), "{kind} {}: {}", v["name"], v["error"]);
            assert_eq!(phases(v).len(), 5);
            for p in phases(v) {
                let at = format!("{kind} / {} / {}", v["name"], p["name"]);
                assert_eq!(p["objects"], p["server_objects"], "{at}");
                assert_eq!(p["consistent"], true, "{at}");
            }
            assert_eq!(phase(v, "list")["objects"], 120);
        }
        // Metadata-only objects are smaller than whole ones.
        let live = |i: usize| {
            report["variants"][i]["phases"][0]["live_bytes"]
                .as_u64()
                .unwrap()
        };
        assert!(live(1) < live(0), "{kind}: {} vs {}", live(1), live(0));
    }
}

const SETTLE: &str = r#"
name = "settle-test"
[objects]
count = 2000
[[variant]]
name = "default decay"
[[variant]]
name = "dirty_decay_ms = 0"
[variant.allocator]
dirty_decay_ms = 0
muzzy_decay_ms = 0
[[phase]]
kind = "list"
[[phase]]
kind = "delete"
fraction = 0.9
[[phase]]
kind = "settle"
idle = "10s"
decay = "purge"
"#;

#[test]
fn a_settle_phase_gives_freed_pages_back_and_allocator_settings_reach_the_child() {
    let (code, _, report) = run_text(SETTLE);
    assert_eq!(code, 0);
    let mib = |v: &Value| v.as_f64().unwrap() / f64::from(1 << 20);
    let variants = report["variants"].as_array().unwrap();
    assert_eq!(variants[1]["config"]["allocator"]["dirty_decay_ms"], 0);
    // About 90 MiB of pods are freed by the delete. Under the default 10 s decay jemalloc
    // keeps their pages resident until the settle phase purges them.
    let default = &variants[0];
    let settle = &phase(default, "settle")["settle"];
    let released = mib(&settle["before"]["resident"]) - mib(&settle["after"]["resident"]);
    assert!(released > 40.0, "the purge released {released:.1} MiB");
    assert!(phase(default, "settle")["consistent"] == true);
    // With dirty_decay_ms = 0 they go back as they are freed: the delete already ends low.
    let resident_after_delete = |v: &Value| mib(&phase(v, "delete")["jemalloc"]["resident"]);
    let (slow, eager) = (
        resident_after_delete(default),
        resident_after_delete(&variants[1]),
    );
    assert!(
        eager + 40.0 < slow,
        "decay 0: {eager:.1} MiB, default: {slow:.1} MiB"
    );
}

/// A copy of a committed report, changed by `edit`, in a fresh folder.
fn edited_report(edit: impl FnOnce(&mut Value)) -> (tempfile::TempDir, PathBuf) {
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
fn check(head: impl AsRef<Path>, baseline: impl AsRef<Path>) -> Command {
    let mut command = bin();
    command
        .arg("check")
        .arg(head.as_ref())
        .arg("--baseline")
        .arg(baseline.as_ref());
    command
}

#[test]
fn check_passes_a_report_against_itself() {
    let baseline = repo_file("reports/kube-parity.json");
    check(&baseline, &baseline)
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with("ok: "));
}

#[test]
fn check_fails_on_one_more_allocation_and_names_where() {
    let (_dir, head) = edited_report(|r| {
        let count = &mut r["variants"][2]["phases"][1]["alloc_count"];
        *count = Value::from(count.as_u64().unwrap() + 1);
    });
    check(&head, repo_file("reports/kube-parity.json"))
        .assert()
        .code(1)
        .stdout(predicate::str::contains("FAILED: 1 regression(s)"))
        .stdout(predicate::str::contains("kube-runtime"))
        .stdout(predicate::str::contains("update"))
        .stdout(predicate::str::contains("alloc_count"));
    // A tolerance lets it through.
    check(&head, repo_file("reports/kube-parity.json"))
        .args(["--tolerance", "alloc_count=0.1"])
        .assert()
        .code(0);
}

#[test]
fn the_scenarios_gate_sets_tolerances_and_the_command_line_overrides_it() {
    // The head report carries its scenario's `[gate]`, as `run` writes it.
    let (_dir, head) = edited_report(|r| {
        let count = &mut r["variants"][0]["phases"][0]["alloc_count"];
        *count = Value::from(count.as_u64().unwrap() * 102 / 100);
        r["scenario"]["gate"] = serde_json::json!({ "alloc_count": 5 });
    });
    let baseline = repo_file("reports/kube-parity.json");
    check(&head, &baseline).assert().code(0);
    check(&head, &baseline)
        .args(["--tolerance", "alloc_count=1"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("alloc_count"));
}

#[test]
fn check_refuses_another_format_version_and_another_scenario() {
    let (_dir, head) = edited_report(|r| r["format_version"] = Value::from(2));
    check(&head, repo_file("reports/kube-parity.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "format_version 2 is not one this build reads",
        ))
        .stderr(predicate::str::contains("head.json"));
    check(
        repo_file("reports/watch-list.json"),
        repo_file("reports/kube-parity.json"),
    )
    .assert()
    .code(2)
    .stderr(predicate::str::contains("cannot be compared"));
}

#[test]
fn diff_prints_what_changed_in_every_format() {
    let (_dir, head) = edited_report(|r| {
        let live = &mut r["variants"][0]["phases"][0]["live_bytes"];
        *live = Value::from(live.as_u64().unwrap() * 2);
    });
    let base = repo_file("reports/kube-parity.json");
    let out = |format: &str| {
        let output = bin()
            .arg("diff")
            .arg(&base)
            .arg(&head)
            .args(["--format", format])
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "diff reports, it does not gate"
        );
        String::from_utf8(output.stdout).unwrap()
    };
    assert!(out("table").contains("+100.00%"));
    assert!(out("markdown").contains(":red_circle: regression"));
    let json: Value = serde_json::from_str(&out("json")).unwrap();
    let regressions: Vec<&Value> = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["verdict"] == "regression")
        .collect();
    assert_eq!(regressions.len(), 1);
    assert_eq!(regressions[0]["metric"], "live_bytes");
}

#[test]
fn a_format_1_report_from_before_later_keys_still_reads() {
    // Written by an earlier build: no oracle, no variant settings beyond `store` and
    // `page_size`, no `peak_over_live`. Keys added within format 1 read with defaults.
    let old = fixture("report-v1-before-oracle.json");
    check(&old, &old)
        .assert()
        .code(0)
        .stdout(predicate::str::starts_with("ok: "));
}
