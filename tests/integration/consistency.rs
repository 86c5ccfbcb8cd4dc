//! The consistency oracle: a store that does not match the server fails the run, unless
//! the scenario expects it.

use serde_json::json;

use crate::util::{phase, phases, run_text};

const DROPS_DELETES: &str = include_str!("../fixtures/drops-deletes.toml");

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

/// A kind of a named group (apps/v1 Deployments) goes through every phase with every kind
/// of informer, and each phase's store matches the server.
#[test]
fn deployments_stay_consistent_through_every_phase_and_informer() {
    let (code, stdout, report) = run_text(
        r#"name = "deployments"
[objects]
kind = "Deployment"
count = 300
containers = 2
last_applied = true

[[variant]]
name = "typed"
[[variant]]
name = "typed, strip status"
transform = ["managed-fields", "status"]
[[variant]]
name = "metadata watch-list"
projection = "metadata"
initial_sync = "watch-list"
[[variant]]
name = "kube-runtime dynamic"
implementation = "kube-runtime"
projection = "dynamic"
[[variant]]
name = "queue, handlers"
handlers = 2
field_selector = "metadata.namespace=payments"

[[phase]]
kind = "list"
[[phase]]
kind = "update"
fraction = 0.5
[[phase]]
kind = "recreate"
count = 10
[[phase]]
kind = "disconnect"
count = 5
compact = true
[[phase]]
kind = "delete"
fraction = 0.9
"#,
    );
    assert_eq!(code, 0, "{stdout}");
    assert_eq!(report["scenario"]["objects"]["kind"], "Deployment");
    let variants = report["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 5);
    for variant in variants {
        for p in phases(variant) {
            assert_eq!(p["consistent"], true, "{} {}", variant["name"], p["name"]);
        }
    }
    let selected = phase(&variants[4], "list");
    assert_eq!(selected["objects"], 30, "one namespace of ten");
    let informer = |v: &serde_json::Value| {
        phase(v, "list")["components"]["informer"]["live_bytes"]
            .as_u64()
            .unwrap()
    };
    let (whole, stripped) = (informer(&variants[0]), informer(&variants[1]));
    assert!(stripped < whole, "{stripped} < {whole}");
}

/// Copies of a sample (tests/fixtures/sampled-pods.json, two pods of their own shapes) go
/// through every phase with every kind of informer, selectors read the sample's fields,
/// and each phase's store matches the server.
#[test]
fn copies_of_a_sample_stay_consistent_through_every_phase_and_informer() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.json");
    let output = crate::util::bin()
        .arg("run")
        .arg(crate::util::fixture("sampled.toml"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("copies of the 2 objects in sampled-pods.json"),
        "{stdout}"
    );
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let sample = &report["scenario"]["objects"]["sample"];
    assert_eq!(sample["objects"].as_array().unwrap().len(), 2);
    let variants = report["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 5);
    for variant in variants {
        for p in phases(variant) {
            assert_eq!(p["consistent"], true, "{} {}", variant["name"], p["name"]);
        }
    }
    // The second sample's copies (every other round of ten namespaces) run on its node.
    assert_eq!(phase(&variants[4], "list")["objects"], 150);
    let informer = |v: &serde_json::Value| {
        phase(v, "list")["components"]["informer"]["live_bytes"]
            .as_u64()
            .unwrap()
    };
    let (whole, stripped) = (informer(&variants[0]), informer(&variants[1]));
    assert!(stripped < whole, "{stripped} < {whole}");
}

/// An informer of one namespace (client-go's `WithNamespace`, kube-runtime's
/// `Api::namespaced`) lists and watches there only, through every phase, and its store is
/// checked against the objects of that namespace.
#[test]
fn an_informer_of_one_namespace_holds_and_is_checked_against_that_namespace_only() {
    let (code, stdout, report) = run_text(
        r#"name = "one-namespace"
[objects]
kind = "ConfigMap"
count = 300
namespaces = 3

[[variant]]
name = "every namespace"
[[variant]]
name = "checkout"
namespace = "checkout"
[[variant]]
name = "checkout, metadata watch-list"
namespace = "checkout"
projection = "metadata"
initial_sync = "watch-list"
[[variant]]
name = "checkout, kube-runtime"
namespace = "checkout"
implementation = "kube-runtime"
[[variant]]
name = "checkout and payments, two informers each"
namespace = ["checkout", "payments"]
informers = 2
queue = "delta-fifo"
handlers = 1
[[variant]]
name = "checkout and payments, kube-runtime"
namespace = ["checkout", "payments"]
implementation = "kube-runtime"

[[phase]]
kind = "list"
[[phase]]
kind = "update"
fraction = 0.5
[[phase]]
kind = "recreate"
count = 30
[[phase]]
kind = "disconnect"
count = 20
compact = true
[[phase]]
kind = "delete"
fraction = 0.9
"#,
    );
    assert_eq!(code, 0, "{stdout}");
    let variants = report["variants"].as_array().unwrap();
    for variant in variants {
        for p in phases(variant) {
            assert_eq!(p["consistent"], true, "{} {}", variant["name"], p["name"]);
        }
    }
    assert_eq!(variants[1]["scope"]["namespaces"], json!(["checkout"]));
    assert!(variants[0]["scope"].is_null(), "no scope: as before");
    assert_eq!(phase(&variants[0], "list")["objects"], 300);
    for variant in &variants[4..] {
        // An informer in each of two namespaces: together two thirds of the objects.
        assert_eq!(
            variant["scope"]["namespaces"],
            json!(["checkout", "payments"])
        );
        assert_eq!(
            phase(variant, "list")["objects"],
            200,
            "{}",
            variant["name"]
        );
        // Each watches its own namespace: as many LISTs and WATCHes as informers.
        let requests = &phase(variant, "list")["api_requests"];
        let informers = if variant["name"].as_str().unwrap().contains("two") {
            4
        } else {
            2
        };
        assert_eq!(
            requests["list"], informers,
            "{}: {requests}",
            variant["name"]
        );
    }
    for variant in &variants[1..4] {
        let list = phase(variant, "list");
        // An informer of every namespace would hold 300, and fail the store check.
        assert_eq!(
            list["objects"], 100,
            "{}: one namespace of three",
            variant["name"]
        );
    }
    let live = |v: &serde_json::Value| {
        phase(v, "list")["components"]["informer"]["live_bytes"]
            .as_u64()
            .unwrap()
    };
    let (all, one) = (live(&variants[0]), live(&variants[1]));
    assert!(one * 2 < all, "a third of the objects: {one} of {all}");
}

/// A slow reader (`watch_read_cost`) is asleep on its cost while the next events wait in
/// its connection, so the process is quiet before it has read them: each phase waits for
/// it all the same, and its store matches the server. Before, a phase ended after the
/// first events of the watch (a create of 30 objects: 29 missing, then 2 stale). A create
/// after every object is gone makes the objects it says.
#[test]
fn a_slow_reader_is_waited_for_and_a_create_makes_its_count() {
    let (code, stdout, report) = run_text(
        r#"name = "slow-reader"
[objects]
count = 20
namespaces = 2

[[variant]]
name = "reads an event in 5 ms"
watch_read_cost = "5ms"

[[variant]]
name = "watch at 0, 20 ms an event"
initial_sync = "watch-rv0"
watch_read_cost = "20ms"

[[phase]]
kind = "list"

[[phase]]
kind = "update"
fraction = 1.0

[[phase]]
kind = "delete"
fraction = 1.0

[[phase]]
kind = "create"
count = 30

[[phase]]
kind = "disconnect"
count = 10
"#,
    );
    assert_eq!(code, 0, "{stdout}");
    for variant in report["variants"].as_array().unwrap() {
        for p in phases(variant) {
            assert_eq!(p["consistent"], true, "{}: {}", variant["name"], p["name"]);
        }
        assert_eq!(phase(variant, "create")["objects"], 30);
        assert_eq!(phase(variant, "create")["server_objects"], 30);
    }
}
