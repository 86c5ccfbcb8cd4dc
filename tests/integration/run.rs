//! `run` as a user runs it: the table, the report, the store checked against the server
//! at every phase, list rules, every kind and projection.

use predicates::prelude::*;
use serde_json::Value;

use crate::util::{bin, fixture, phase, phases, repo_file, run_report, run_text};

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
fn a_sampled_kind_is_cached_untyped_and_as_metadata_by_both_implementations() {
    // A custom resource in namespaces, and one of Kubernetes' own kinds at the cluster's
    // scope (a StorageClass: no type for it in the model either).
    for sample in [
        "scenarios/samples/certificate.yaml",
        "tests/fixtures/samples/storageclass.json",
    ] {
        let text = format!(
            r#"
name = "sampled-kinds"
[objects]
sample = "{}"
count = 90
[[variant]]
name = "built-in"
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
kind = "recreate"
count = 5
disconnect = true
compact = true
[[phase]]
kind = "delete"
count = 30
"#,
            repo_file(sample).display()
        );
        let (code, stdout, report) = run_text(&text);
        assert_eq!(code, 0, "{sample}: {stdout}");
        for v in report["variants"].as_array().unwrap() {
            assert!(
                v["error"].is_null(),
                "{sample} {}: {}",
                v["name"],
                v["error"]
            );
            for p in phases(v) {
                let at = format!("{sample} / {} / {}", v["name"], p["name"]);
                assert_eq!(p["objects"], p["server_objects"], "{at}");
                assert_eq!(p["consistent"], true, "{at}");
            }
            assert_eq!(phase(v, "list")["objects"], 90);
            assert_eq!(phase(v, "delete")["objects"], 60);
        }
    }
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
