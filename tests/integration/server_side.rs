//! The apiserver's side of a variant (`watchers`, `share_encodings`): what each more
//! watcher costs the built-in server per event, with one encoding per event and with one
//! per watch, on a small scale.

use serde_json::Value;

use crate::util::run_report;

const FANOUT: &str = r#"
name = "fanout"
[objects]
count = 50
[[variant]]
name = "shared, 1"
watchers = 1
share_encodings = true
[[variant]]
name = "shared, 5"
watchers = 5
share_encodings = true
[[variant]]
name = "per watch, 1"
watchers = 1
[[variant]]
name = "per watch, 5"
watchers = 5
[[phase]]
kind = "list"
[[phase]]
kind = "update"
fraction = 1.0
[[phase]]
name = "update again"
kind = "update"
fraction = 1.0
"#;

/// The second update phase's (server bytes allocated, watch events sent, bytes sent): the
/// first also grows each connection's buffers to their working size, a cost per watcher
/// that a small scenario's few events would make look like a cost per event.
fn update_phase(report: &Value, variant: usize) -> (f64, f64, f64) {
    let phase = &report["variants"][variant]["phases"][2];
    assert_eq!(phase["name"], "update again");
    let n = |v: &Value| v.as_u64().unwrap() as f64;
    (
        n(&phase["components"]["apiserver"]["alloc_bytes"]),
        n(&phase["api_requests"]["watch_events"]),
        n(&phase["api_requests"]["bytes"]),
    )
}

#[test]
fn a_shared_encoding_costs_each_more_watcher_a_fraction_of_the_event_and_its_own_copy_the_event() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fanout.toml");
    std::fs::write(&file, FANOUT).unwrap();
    let report = run_report(&file);
    let updates = 50.0;
    let (_, events, sent) = update_phase(&report, 0);
    // The informer's watch and one plain watcher each got every update.
    assert_eq!(events, 2.0 * updates);
    let line = sent / events;
    // Bytes the server allocates per event for each watcher added (1 -> 5 watchers).
    let slope = |few: usize, many: usize| {
        let (a, _, _) = update_phase(&report, few);
        let (b, _, _) = update_phase(&report, many);
        (b - a) / updates / 4.0
    };
    let shared = slope(0, 1);
    let per_watch = slope(2, 3);
    assert!(
        shared < line / 10.0,
        "shared: {shared:.0} bytes per event per watcher, a line is {line:.0}"
    );
    assert!(
        per_watch >= line,
        "per watch: {per_watch:.0} bytes per event per watcher, a line is {line:.0}"
    );
    // The watchers are in the report, as the run was told.
    assert_eq!(report["variants"][1]["server"]["watchers"], 5);
    assert_eq!(report["variants"][1]["server"]["share_encodings"], true);
    assert!(
        report["variants"][3]["server"]
            .get("share_encodings")
            .is_none()
    );
}
