//! The report's JSON keys stay stable, and older reports still read.

use predicates::prelude::*;
use serde_json::Value;

use crate::util::{bin, check, edited_report, fixture, run_report};

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

#[test]
fn a_bad_report_is_refused_naming_the_key_and_the_line_and_an_endless_one_at_its_limit() {
    let (_dir, bad) = edited_report(|r| {
        r["variants"][1]["phases"][0]["alloc_count"] = "many".into();
    });
    let output = bin()
        .arg("check")
        .arg(&bad)
        .arg("--baseline")
        .arg(&bad)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("at `variants[1].phases[0]") && stderr.contains("(line 1)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("\"many\", expected a whole number"),
        "{stderr}"
    );
    let output = bin()
        .args(["export", "/dev/zero", "--format", "markdown", "--out", "-"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("larger than 256.0 MiB"), "{stderr}");
}
