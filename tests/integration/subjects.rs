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

/// Runs `fixture` and checks each program against the model variant that syncs as it does,
/// phase by phase: the notifications, the requests, a consistent store. Returns the
/// report.
fn run_beside_the_model(fixture_name: &str, pairs: &[(&str, &str)]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.json");
    bin()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("run")
        .arg(fixture(fixture_name))
        .args(["--allow-commands", "--no-chart", "--out"])
        .arg(&out)
        .assert()
        .success();
    let report: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    for &(ours, theirs) in pairs {
        for (p, q) in phases(variant(&report, ours))
            .iter()
            .zip(phases(variant(&report, theirs)))
        {
            let at = format!("{theirs} in {}", q["name"]);
            assert_eq!(told(p), told(q), "{at}");
            assert_eq!(asked(p), asked(q), "{at}");
            assert_eq!(q["consistent"], true, "{at}");
        }
    }
    report
}

/// Runs `fixture` and returns its report, checking that the server refused none of the
/// programs' requests (a Lease, an Event, an operator's children).
fn run_unrefused(fixture_name: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.json");
    let run = bin()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("run")
        .arg(fixture(fixture_name))
        .args(["--allow-commands", "--no-chart", "--out"])
        .arg(&out)
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
    assert!(!stderr.contains("the server refused"), "{stderr}");
    serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap()
}

fn variant<'a>(report: &'a Value, name: &str) -> &'a Value {
    let variants = report["variants"].as_array().unwrap();
    variants.iter().find(|v| v["name"] == name).unwrap()
}

#[test]
#[ignore = "needs the shipped subjects; .ci/run builds them (subjects/build.sh) and runs this test"]
fn the_models_handlers_are_told_what_real_client_gos_are() {
    let report = run_beside_the_model(
        "subjects/handlers.toml",
        &[
            ("model", "model, DeltaFIFO"),
            ("model", "client-go v0.27"),
            ("model, watch-list", "client-go v0.37"),
        ],
    );
    // A relist tells each handler every object again, none of them changed.
    let relist = phases(variant(&report, "model")).last().unwrap();
    assert_eq!(relist["kind"], "relist");
    assert_eq!(
        told(relist),
        [0, 0, 0, 2 * relist["objects"].as_u64().unwrap()]
    );
}

#[test]
#[ignore = "needs the shipped subjects; .ci/run builds them (subjects/build.sh) and runs this test"]
fn the_models_resync_timer_fires_when_real_client_gos_does() {
    let report = run_beside_the_model(
        "subjects/resync.toml",
        &[
            ("model", "client-go v0.27"),
            ("model, watch-list", "client-go v0.37"),
        ],
    );
    // Each settle phase lasts one firing of the timer: every pod to both handlers.
    let settles: Vec<_> = phases(variant(&report, "model"))
        .iter()
        .filter(|p| p["kind"] == "settle")
        .map(told)
        .collect();
    assert_eq!(settles, [[0, 0, 0, 600]; 2]);
}

#[test]
#[ignore = "needs the shipped subjects; .ci/run builds them (subjects/build.sh) and runs this test"]
fn a_components_pprof_is_read_over_https_with_its_token() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.json");
    let run = bin()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("run")
        .arg(fixture("subjects/secure-pprof.toml"))
        .args(["--allow-commands", "--no-chart", "--out"])
        .arg(&out)
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
    let report: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let secure = variant(&report, "with the token");
    assert!(secure["error"].is_null(), "{stderr}");
    for phase in phases(secure) {
        let heap = &phase["subject"]["heap"];
        let live = heap["live_bytes"].as_u64().unwrap();
        assert!(live > 0, "{phase}");
        assert_eq!(phase["consistent"], true, "{phase}");
        // The runtime's memory after the forced collections: the next one is due above
        // the live heap, and the runtime holds at least the heap in use.
        let runtime = &heap["runtime"];
        let field = |name: &str| runtime[name].as_u64().unwrap();
        assert!(field("next_gc") > live, "{runtime}");
        assert!(
            field("sys") >= heap["inuse_bytes"].as_u64().unwrap(),
            "{runtime}"
        );
        assert!(field("heap_idle") >= field("heap_released"), "{runtime}");
    }
    // What to set for it, from those figures; the variant that failed gets none.
    let stdout = String::from_utf8_lossy(&run.get_output().stdout);
    assert!(
        stdout.contains("recommended for with the token: request ")
            && stdout.contains("; GOMEMLIMIT="),
        "{stdout}"
    );
    assert!(
        stdout.contains("nothing recommended for without it: the variant failed"),
        "{stdout}"
    );
    let refused = variant(&report, "without it")["error"].as_str().unwrap();
    assert!(refused.contains("401 Unauthorized"), "{refused}");
    assert!(refused.contains("`pprof_token`"), "{refused}");
    assert!(refused.contains("https://127.0.0.1:"), "{refused}");
}

#[test]
#[ignore = "needs the shipped subjects; .ci/run builds them (subjects/build.sh) and runs this test"]
fn an_unmodified_kube_scheduler_syncs_its_19_caches_on_the_built_in_server_and_says_so() {
    // Not run_unrefused: the scheduler posts Events of a kind the server keeps, but its
    // reads are what must not be refused, and any refused read would fail the variant.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.json");
    bin()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("run")
        .arg("scenarios/real/kube-scheduler.toml")
        .args(["--allow-commands", "--no-chart", "--out"])
        .arg(&out)
        .assert()
        .success();
    let report: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let scheduler = &report["variants"][0];
    let setup = &scheduler["subject"]["setup"];
    let mut cached: Vec<&str> = std::iter::once(setup)
        .chain(phases(scheduler).iter().map(|p| &p["subject"]))
        .flat_map(|figures| figures["collections"].as_array().into_iter().flatten())
        .filter(|c| c["refused"].as_u64().unwrap_or(0) == 0)
        .map(|c| c["resource"].as_str().unwrap())
        .collect();
    cached.sort_unstable();
    cached.dedup();
    assert_eq!(cached.len(), 19, "{cached:?}");
    for kind in [
        "pods",
        "nodes",
        "storageclasses.storage.k8s.io",
        "poddisruptionbudgets.policy",
    ] {
        assert!(cached.contains(&kind), "{kind}: {cached:?}");
    }
    // Its heap, read over https:// from its secure port, in every phase, and its own
    // word that its informers' handlers synced, which each phase waited for.
    for phase in phases(scheduler) {
        let live = phase["subject"]["heap"]["live_bytes"].as_u64().unwrap();
        assert!(live > 1 << 20, "{phase}");
        let ready = phase["subject"]["ready"].as_str().unwrap();
        assert!(
            ready.contains("[+]sched-handler-sync ok") && ready.ends_with("readyz check passed"),
            "{ready}"
        );
    }
}

#[test]
#[ignore = "needs the shipped subjects; .ci/run builds them (subjects/build.sh) and runs this test"]
fn a_controller_that_elects_a_leader_and_records_events_runs_as_deployed() {
    let report = run_unrefused("subjects/controller.toml");
    let program = variant(&report, "controller-runtime, leader election, events");
    assert!(
        program["subject"]["setup"].get("refused").is_none(),
        "{program}"
    );
    let model = phases(variant(&report, "model"));
    for (phase, theirs) in phases(program).iter().zip(model) {
        let at = &phase["name"];
        assert_eq!(phase["consistent"], true, "{at}");
        assert_eq!(phase["objects"], theirs["objects"], "{at}");
        // The Lease renewed and each reconcile's Event written, none of them refused.
        assert!(phase["subject"].get("refused").is_none(), "{at}: {phase}");
    }
    assert_eq!(told(&phases(program)[0])[0], 300, "each pod reconciled");
}

#[test]
#[ignore = "needs the shipped subjects; .ci/run builds them (subjects/build.sh) and runs this test"]
fn a_controller_of_two_namespaces_holds_theirs() {
    let report = run_beside_the_model(
        "subjects/namespaces.toml",
        &[("model", "controller-runtime")],
    );
    let program = variant(&report, "controller-runtime");
    assert_eq!(
        program["scope"]["namespaces"],
        serde_json::json!(["checkout", "payments"])
    );
    let list = &phases(program)[0];
    // Two of the three namespaces' pods, through a watch-list in each.
    assert_eq!(list["objects"], 200, "{list}");
    assert_eq!(asked(list), [0, 2, 2], "{list}");
}

#[test]
#[ignore = "needs the shipped subjects; .ci/run builds them (subjects/build.sh) and runs this test"]
fn an_operator_that_owns_services_and_deployments_caches_them() {
    let report = run_unrefused("subjects/operator.toml");
    let heap_after_list = |name: &str| {
        let program = variant(&report, name);
        for phase in phases(program) {
            // Every child written, client-go's protobuf creates and updates of Services
            // and Deployments among them, none refused.
            assert_eq!(phase["consistent"], true, "{name}");
            assert!(phase["subject"].get("refused").is_none(), "{name}: {phase}");
        }
        phases(program)[0]["subject"]["heap"]["live_bytes"]
            .as_u64()
            .unwrap()
    };
    let (alone, owning) = (
        heap_after_list("owns nothing"),
        heap_after_list("owns Services and Deployments"),
    );
    // Each child is cached: at least half of the 7.6 KB a Service and a Deployment hold
    // in real-operator, for each of the 400 ConfigMaps.
    assert!(
        owning > alone + 400 * 3_800,
        "owning {owning} bytes of heap, owning nothing {alone}"
    );
}
