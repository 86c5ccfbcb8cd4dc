//! Exact figures repeat: run to run, at every shipped scenario's shape, and whatever
//! `--jobs` is.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{EXACT_FIGURES, bin, fixture, phases, repo_file, run_report, run_report_with};

#[test]
fn allocation_counts_repeat_exactly_across_runs() {
    assert_runs_repeat_exactly(&fixture("small.toml"));
}

#[test]
fn every_kind_repeats_exactly() {
    // small.toml's variants and phases on each kind the scenarios can name.
    let dir = tempfile::tempdir().unwrap();
    for kind in ["ConfigMap", "Secret", "Node", "Deployment"] {
        let mut scenario: toml::Table = std::fs::read_to_string(fixture("small.toml"))
            .unwrap()
            .parse()
            .unwrap();
        let objects = scenario["objects"].as_table_mut().unwrap();
        objects.insert("kind".to_owned(), toml::Value::from(kind));
        objects.insert("count".to_owned(), toml::Value::Integer(200));
        if kind == "Node" {
            objects.remove("namespaces");
        }
        let path = dir.path().join(format!("{kind}.toml"));
        std::fs::write(&path, toml::to_string(&scenario).unwrap()).unwrap();
        assert_runs_repeat_exactly(&path);
    }
}

#[test]
fn creates_after_deletes_repeat_exactly_in_small_stores() {
    // small.toml's deletes, creates and recreates at 100 pods, three runs: with a randomly
    // seeded hasher, two runs in three moved a store's resize (and every exact figure
    // after it) between phases.
    let mut scenario: toml::Table = std::fs::read_to_string(fixture("small.toml"))
        .unwrap()
        .parse()
        .unwrap();
    scenario["objects"]["count"] = toml::Value::Integer(100);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hundred.toml");
    std::fs::write(&path, toml::to_string(&scenario).unwrap()).unwrap();
    let first = run_report(&path);
    for run in 2..=3 {
        assert_reports_match_exactly(&first, &run_report(&path), &format!("run {run}"));
    }
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
        // A sample is read beside its scenario: the copy names it where it is.
        if let Some(sample) = scenario["objects"].get_mut("sample") {
            let at = path.parent().unwrap().join(sample.as_str().unwrap());
            *sample = toml::Value::from(at.display().to_string());
        }
        // A sweep's points too, two small ones.
        if let Some(sweep) = scenario.get_mut("sweep").and_then(|s| s.as_table_mut()) {
            for (_, values) in sweep.iter_mut() {
                *values = toml::Value::from(vec![200, 400]);
            }
        }
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
pub(crate) fn assert_reports_match_exactly(a: &Value, b: &Value, label: &str) {
    let exact = EXACT_FIGURES;
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
