//! `check` and `diff`: a report against a baseline, tolerances from the scenario and the
//! command line, refusals of reports that cannot be compared.

use predicates::prelude::*;
use serde_json::Value;

use crate::util::{bin, check, edited_report, repo_file};

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
fn check_fails_when_a_variant_crashed_in_the_head_and_diff_says_so() {
    let baseline = repo_file("reports/kube-parity.json");
    // A variant that died after its first phase, and one that reports an error although
    // every phase is there.
    let (_dir, head) = edited_report(|r| {
        let first = &mut r["variants"][0];
        first["error"] = "the variant's process was killed (SIGKILL; out of memory?)".into();
        first["phases"].as_array_mut().unwrap().truncate(1);
        r["variants"][1]["error"] = "phase `update`: informer failed".into();
    });
    let output = check(&head, &baseline).assert().code(1);
    let stdout = String::from_utf8(output.get_output().stdout.clone()).unwrap();
    assert!(stdout.contains("FAILED"), "{stdout}");
    assert!(stdout.contains("failed in the head after 1 of"), "{stdout}");
    assert!(stdout.contains("SIGKILL"), "{stdout}");
    assert!(stdout.contains("informer failed"), "{stdout}");
    // diff shows it too, in every format, and still exits 0.
    for format in ["table", "markdown", "json"] {
        let output = bin()
            .arg("diff")
            .arg(&baseline)
            .arg(&head)
            .args(["--format", format])
            .assert()
            .success();
        let stdout = String::from_utf8(output.get_output().stdout.clone()).unwrap();
        assert!(stdout.contains("SIGKILL"), "{format}: {stdout}");
    }
    // A variant that failed in the base too is no new failure.
    let (_base_dir, failing_base) = edited_report(|r| {
        r["variants"][1]["error"] = "phase `update`: informer failed".into();
    });
    let (_head_dir, same_head) = edited_report(|r| {
        r["variants"][1]["error"] = "phase `update`: informer failed".into();
    });
    check(&same_head, &failing_base).assert().success();
}

#[test]
fn check_writes_each_gated_figure_as_a_junit_case_failed_on_a_regression() {
    let baseline = repo_file("reports/kube-parity.json");
    let (dir, head) = edited_report(|r| {
        let count = &mut r["variants"][2]["phases"][1]["alloc_count"];
        *count = Value::from(count.as_u64().unwrap() + 1);
    });
    let xml = dir.path().join("junit.xml");
    check(&head, &baseline)
        .arg("--junit")
        .arg(&xml)
        .assert()
        .code(1);
    let text = std::fs::read_to_string(&xml).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    let failed: Vec<&str> = (cases.iter())
        .filter(|c| c.children().any(|n| n.has_tag_name("failure")))
        .map(|c| c.attribute("name").unwrap())
        .collect();
    assert_eq!(failed, ["kube-runtime / update / alloc_count"], "{text}");
    // Every gated figure is a case (allocation counts among them), the advisory ones not.
    let names: Vec<&str> = cases.iter().map(|c| c.attribute("name").unwrap()).collect();
    assert!(
        names.contains(&"kube-runtime / list / alloc_count"),
        "{names:?}"
    );
    assert!(
        names.iter().all(|n| !n.ends_with("/ rss_bytes")),
        "{names:?}"
    );
    let suites = doc.root_element();
    assert_eq!(suites.attribute("failures"), Some("1"));
    assert_eq!(
        suites.attribute("tests"),
        Some(cases.len().to_string().as_str())
    );
    // Passing, every case passes; the XML on standard output leaves the verdict on stderr.
    let output = check(&baseline, &baseline)
        .args(["--junit", "-"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    let doc = roxmltree::Document::parse(&stdout).unwrap();
    assert_eq!(doc.root_element().attribute("failures"), Some("0"));
    assert!(String::from_utf8_lossy(&output.stderr).starts_with("ok: "));
}
