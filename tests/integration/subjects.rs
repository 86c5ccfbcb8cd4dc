//! The model against the real informers it models, with the shipped programs that
//! `subjects/build.sh` builds (ignored otherwise: .ci/run builds them and runs these).

use serde_json::Value;

use super::util::{bin, fixture, phases};

/// The notifications a phase handed the handlers, every handler together: the model's
/// from its processor, a program's from its status.
fn told(phase: &Value) -> [u64; 4] {
    let counts = match &phase["subject"]["handled"] {
        Value::Null => &phase["events"]["delivered"],
        handled => handled,
    };
    ["add", "update", "delete", "sync"].map(|kind| counts[kind].as_u64().unwrap())
}

/// The LISTs and WATCHes a phase made, and the watches that read a whole state.
fn asked(phase: &Value) -> [u64; 3] {
    let requests = &phase["api_requests"];
    ["list", "watch", "initial_events_completed"].map(|kind| requests[kind].as_u64().unwrap_or(0))
}

#[test]
#[ignore = "needs the shipped subjects; .ci/run builds them (subjects/build.sh) and runs this test"]
fn the_models_handlers_are_told_what_real_client_gos_are() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.json");
    bin()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("run")
        .arg(fixture("subjects/handlers.toml"))
        .args(["--allow-commands", "--no-chart", "--out"])
        .arg(&out)
        .assert()
        .success();
    let report: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let variant = |name: &str| {
        let variants = report["variants"].as_array().unwrap();
        variants.iter().find(|v| v["name"] == name).unwrap()
    };
    let model = variant("model");
    // Each program beside the model variant that syncs as it does.
    for (ours, theirs) in [
        ("model", "model, DeltaFIFO"),
        ("model", "client-go v0.27"),
        ("model, watch-list", "client-go v0.37"),
    ] {
        for (p, q) in phases(variant(ours)).iter().zip(phases(variant(theirs))) {
            let at = format!("{theirs} in {}", q["name"]);
            assert_eq!(told(p), told(q), "{at}");
            assert_eq!(asked(p), asked(q), "{at}");
            assert_eq!(q["consistent"], true, "{at}");
        }
    }
    // A relist tells each handler every object again, none of them changed.
    let relist = phases(model).last().unwrap();
    assert_eq!(relist["kind"], "relist");
    assert_eq!(
        told(relist),
        [0, 0, 0, 2 * relist["objects"].as_u64().unwrap()]
    );
}
