//! The headline behaviour: a store that points into the LIST's array keeps it alive after
//! deletes; per-item copies do not; the components add up to the totals.

use serde_json::Value;

use crate::util::{phase, phases, repo_file, run_report};

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
