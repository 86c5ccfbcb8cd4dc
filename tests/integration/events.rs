//! The event machinery: its shipped scenarios at a smaller scale, each checked for what
//! its paragraph in docs/guide/scenarios.md claims.

use std::path::PathBuf;

use serde_json::Value;

use crate::util::{phase, repo_file, run_report};

/// The shipped scenario `name` with `count` objects, written into `dir`.
fn scaled(dir: &tempfile::TempDir, name: &str, count: i64) -> PathBuf {
    let path = repo_file(&format!("scenarios/{name}.toml"));
    let mut scenario: toml::Table = std::fs::read_to_string(path).unwrap().parse().unwrap();
    scenario["objects"]["count"] = toml::Value::Integer(count);
    let small = dir.path().join(format!("{name}.toml"));
    std::fs::write(&small, toml::to_string(&scenario).unwrap()).unwrap();
    small
}

fn variant<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("no variant {name:?}"))
}

fn delivered(phase: &Value, kind: &str) -> u64 {
    phase["events"]["delivered"][kind].as_u64().unwrap()
}

fn requests(phase: &Value, kind: &str) -> u64 {
    phase["api_requests"][kind].as_u64().unwrap()
}

/// Watches whose client read its whole initial state (the key is left out when 0).
fn states_read(phase: &Value) -> u64 {
    match &phase["api_requests"]["initial_events_completed"] {
        Value::Null => 0,
        n => n.as_u64().unwrap(),
    }
}

#[test]
fn a_resync_redelivers_every_object_to_every_handler_without_a_request() {
    let dir = tempfile::tempdir().unwrap();
    let report = run_report(&scaled(&dir, "resync", 300));
    for name in ["RealFIFO, resync 10h", "DeltaFIFO, resync 10h"] {
        let resync = phase(variant(&report, name), "resync");
        assert_eq!(requests(resync, "list"), 0, "{name}");
        assert_eq!(requests(resync, "watch"), 0, "{name}");
        assert_eq!(delivered(resync, "sync"), 300 * 3, "{name}");
        assert_eq!(delivered(resync, "update"), 0, "{name}");
        assert_eq!(resync["consistent"], true, "{name}");
        // One Sync delta per object waited in the queue at once.
        assert_eq!(resync["events"]["informers"][0]["queue"]["peak_len"], 300);
        for handler in resync["events"]["informers"][0]["handlers"]
            .as_array()
            .unwrap()
        {
            assert_eq!(handler["delivered"]["sync"], 300, "{name}");
        }
    }
    let off = phase(variant(&report, "RealFIFO, no resync"), "resync");
    assert_eq!(delivered(off, "sync"), 0);
    assert_eq!(
        off["alloc_count"], 0,
        "no resync period: the phase does nothing"
    );
}

#[test]
fn separate_informers_hold_a_store_and_a_watch_each_and_a_shared_one_holds_one() {
    let dir = tempfile::tempdir().unwrap();
    let report = run_report(&scaled(&dir, "shared-informers", 300));
    let separate = phase(variant(&report, "5 separate informers"), "list");
    let shared = phase(variant(&report, "1 shared informer, 5 handlers"), "list");
    let live = |p: &Value| p["components"]["informer"]["live_bytes"].as_u64().unwrap();
    assert!(
        live(separate) * 10 >= live(shared) * 45,
        "{} vs {}",
        live(separate),
        live(shared)
    );
    for kind in ["list", "watch"] {
        assert_eq!(
            requests(separate, kind),
            5 * requests(shared, kind),
            "{kind}"
        );
    }
    // Every handler got every object either way.
    assert_eq!(delivered(separate, "add"), 5 * 300);
    assert_eq!(delivered(shared, "add"), 5 * 300);
    assert_eq!(separate["events"]["informers"].as_array().unwrap().len(), 5);
    assert_eq!(shared["events"]["informers"].as_array().unwrap().len(), 1);
    // A relist hands every handler each unchanged object again, as a resync, though no
    // handler has a resync period (client-go's listeners are syncing until a resync
    // check finds them not due, and without a period nothing checks).
    for name in ["5 separate informers", "1 shared informer, 5 handlers"] {
        let relist = phase(variant(&report, name), "relist");
        assert_eq!(delivered(relist, "sync"), 5 * 300, "{name}");
        assert_eq!(delivered(relist, "update"), 0, "{name}");
    }
}

#[test]
fn a_recreate_behind_a_compaction_reaches_handlers_as_an_update_unless_uid_aware() {
    let dir = tempfile::tempdir().unwrap();
    let report = run_report(&scaled(&dir, "uid-reuse", 400));
    let plain = variant(&report, "namespace/name keys");
    let aware = variant(&report, "uid_aware");
    // History kept: the re-watch replays the DELETED and ADDED events.
    for v in [plain, aware] {
        let kept = phase(v, "recreate, history kept");
        assert_eq!(delivered(kept, "delete"), 100);
        assert_eq!(delivered(kept, "add"), 100);
        assert_eq!(delivered(kept, "update"), 0);
        assert_eq!(requests(kept, "list"), 0);
    }
    // Compacted: a relist, where the same keys now hold new UIDs.
    let compacted = phase(plain, "recreate, compacted");
    assert_eq!(requests(compacted, "list"), 1);
    assert_eq!(delivered(compacted, "update"), 100);
    // The relist's unchanged objects reach the handler as resyncs, as in client-go.
    assert_eq!(delivered(compacted, "sync"), 300);
    assert_eq!(compacted["events"]["uid_changed_updates"], 100);
    assert_eq!(delivered(compacted, "delete"), 0);
    let compacted = phase(aware, "recreate, compacted");
    assert_eq!(delivered(compacted, "delete"), 100);
    assert_eq!(delivered(compacted, "add"), 100);
    assert_eq!(delivered(compacted, "update"), 0);
    assert_eq!(delivered(compacted, "sync"), 300);
    assert_eq!(compacted["events"]["uid_changed_updates"], 0);
    for v in [plain, aware] {
        for p in v["phases"].as_array().unwrap() {
            assert_eq!(p["consistent"], true, "{}", p["name"]);
        }
    }
}

#[test]
fn a_slow_handler_reports_synced_only_after_it_has_handled_the_initial_objects() {
    let dir = tempfile::tempdir().unwrap();
    let report = run_report(&scaled(&dir, "hassynced", 200));
    for name in ["fast + slow handler", "fast + slow handler, DeltaFIFO"] {
        let list = phase(variant(&report, name), "list");
        let informer = &list["events"]["informers"][0];
        let synced = informer["synced_at_ms"].as_u64().unwrap();
        let fast = informer["handlers"][0]["synced_at_ms"].as_u64().unwrap();
        let slow = informer["handlers"][1]["synced_at_ms"].as_u64().unwrap();
        assert_eq!(informer["handlers"][1]["cost_ms"], 10);
        // The informer is synced when the items are popped; the slow handler only when
        // it has spent 10 ms on each of the 200.
        assert!(synced < slow, "{name}: {synced} vs {slow}");
        assert_eq!(fast, synced, "{name}");
        assert_eq!(slow, synced + 200 * 10, "{name}");
        assert_eq!(informer["handlers"][1]["peak_buffered"], 200, "{name}");
    }
}

#[test]
fn a_slow_rv0_watch_is_cut_off_again_and_again_while_a_watch_list_gets_its_state() {
    let dir = tempfile::tempdir().unwrap();
    let path = scaled(&dir, "watch-rv0-slow-consumer", 500);
    let mut scenario: toml::Table = std::fs::read_to_string(&path).unwrap().parse().unwrap();
    scenario["phase"][0]["churn_for"] = toml::Value::from("10s");
    std::fs::write(&path, toml::to_string(&scenario).unwrap()).unwrap();
    let report = run_report(&path);
    let rv0 = phase(variant(&report, "watch at resourceVersion 0"), "list");
    assert!(requests(rv0, "watchers_terminated") >= 1, "{rv0}");
    assert_eq!(states_read(rv0), 0, "{rv0}");
    assert_eq!(rv0["informer_synced"], false);
    assert_eq!(rv0["consistent"], false);
    // Every termination cost it a new watch from resourceVersion 0.
    assert_eq!(
        requests(rv0, "watch"),
        requests(rv0, "watchers_terminated") + 1
    );
    let list = phase(variant(&report, "watch-list"), "list");
    assert_eq!(states_read(list), 1, "{list}");
    assert!(requests(list, "watchers_terminated") >= 1, "{list}");
    assert!(
        list.get("informer_synced").is_none(),
        "synced: the key is left out"
    );
    assert_eq!(list["consistent"], true);
    assert_eq!(list["objects"], 500);
}
