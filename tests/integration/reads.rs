//! What an external variant's program reads, with the Python informer as the program
//! (tests/fixtures/subjects/informer.py): each phase's collections, a read the server
//! refuses failing the variant (or accepted by the scenario), the program's output kept,
//! a cache opened after the first phase, its readiness endpoint waited for.

use super::external::{run, scenario, stderr};
use super::util::phases;

#[test]
fn a_program_that_reads_resources_nobody_serves_fails_its_variant_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let (output, report) = run(
        dir.path(),
        &scenario("asks-widgets-and-gadgets", ""),
        &["--allow-commands"],
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let report = report.expect("the other variants' results are written");
    let model = &report["variants"][0];
    assert!(model["error"].is_null(), "{model}");
    assert_eq!(
        phases(model).len(),
        5,
        "the built-in variant ran every phase"
    );
    let error = report["variants"][1]["error"].as_str().unwrap();
    assert!(
        error.contains(
            "the server refused the program's reads of 2 resource(s) it caches: \
             gadgets (404 \"the server could not find the requested resource\"), \
             widgets.example.com (404 \"404 page not found\")"
        ),
        "{error}"
    );
    // Named at once, the read the gate held among them: a user accepts both in one go.
    assert!(
        error.contains("accept_refused = [\"gadgets\", \"widgets.example.com\"]"),
        "{error}"
    );
    // Its output is kept, for the user to see why, and named in the error.
    let kept = dir.path().join("report.1-python.output.log");
    assert!(
        error.ends_with(&format!(
            "; the program's output is kept at {}",
            kept.display()
        )),
        "{error}"
    );
    let said = std::fs::read_to_string(&kept).unwrap();
    assert!(said.contains("widgets: 404"), "{said}");
    assert_eq!(
        report["variants"][1]["subject"]["output"],
        "report.1-python.output.log"
    );
}

#[test]
fn a_refusal_the_scenario_accepts_is_in_the_report_with_the_caches_the_program_read() {
    let dir = tempfile::tempdir().unwrap();
    let accepted = "accept_refused = [\"widgets.example.com\"]";
    let (output, report) = run(
        dir.path(),
        &scenario("asks-widgets", accepted),
        &["--allow-commands", "--keep-output"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let program = &report.unwrap()["variants"][1];
    assert_eq!(program["subject"]["output"], "report.1-python.output.log");
    let kept = std::fs::read_to_string(dir.path().join("report.1-python.output.log")).unwrap();
    assert!(
        kept.contains("informer.py: widgets: 404, going on without them"),
        "{kept}"
    );
    let setup = &program["subject"]["setup"];
    assert_eq!(
        setup["refused"],
        serde_json::json!([{"method": "GET", "path": "/apis/example.com/v1/widgets",
            "status": 404, "message": "404 page not found", "count": 1}])
    );
    let widgets = &setup["collections"][0];
    assert_eq!(widgets["resource"], "widgets.example.com", "{setup}");
    assert_eq!(
        (&widgets["lists"], &widgets["refused"]),
        (&1.into(), &1.into())
    );
    assert!(
        stderr(&output).contains(
            "note: for variant `python`, the server refused 1 request(s): GET /apis/example.com/v1/widgets: 404 \"404 page not found\" (x1)"
        ),
        "{}",
        stderr(&output)
    );
    // The program's pods: opened by the list phase's LIST and WATCH (held until then),
    // watched again after the disconnect; at the relist, a watch from a compacted version
    // (410), a LIST and a watch from it; never opened anew.
    let reads: Vec<(String, u64, u64, bool)> = phases(program)
        .iter()
        .filter(|phase| phase.get("subject").unwrap()["collections"].is_array())
        .map(|phase| {
            let pods = phase["subject"]["collections"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["resource"] == "pods")
                .unwrap_or_else(|| panic!("{phase}"));
            let n = |key: &str| pods[key].as_u64().unwrap();
            (
                phase["name"].as_str().unwrap().to_owned(),
                n("lists"),
                n("watches"),
                pods["opened"].as_bool().unwrap(),
            )
        })
        .collect();
    let expected = [
        ("list", 1, 1, true),
        ("disconnect", 0, 1, false),
        ("relist", 1, 2, false),
    ]
    .map(|(name, lists, watches, opened)| (name.to_owned(), lists, watches, opened));
    assert_eq!(reads, expected);
}

#[test]
fn a_cache_opened_after_the_first_phase_is_named_with_its_phase() {
    let dir = tempfile::tempdir().unwrap();
    let (output, report) = run(
        dir.path(),
        &scenario("late-configmaps", ""),
        &["--allow-commands"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let report = report.unwrap();
    let update = &phases(&report["variants"][1])[1];
    let configmaps = &update["subject"]["collections"][0];
    assert_eq!(configmaps["resource"], "configmaps", "{update}");
    assert_eq!(configmaps["opened"], true);
    assert!(
        stderr(&output).contains(
            "note: variant `python` opened 1 cache(s) after its first phase: configmaps: list in phase `update`"
        ),
        "{}",
        stderr(&output)
    );
}

#[test]
fn every_phase_waits_for_the_programs_readiness_and_records_what_it_said() {
    let dir = tempfile::tempdir().unwrap();
    let ready = "ready = \"http://{listen}/readyz\"";
    let (output, report) = run(
        dir.path(),
        &scenario("normal", ready),
        &["--allow-commands"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let report = report.unwrap();
    let python = &report["variants"][1];
    for phase in phases(python) {
        assert_eq!(
            phase["subject"]["ready"], "[+]informer-sync ok\nreadyz check passed",
            "{phase}"
        );
    }
    // The model has no such endpoint.
    assert!(phases(&report["variants"][0])[0]["subject"].is_null());
}

#[test]
fn a_program_that_never_says_it_is_ready_fails_its_variant_with_its_last_answer() {
    let dir = tempfile::tempdir().unwrap();
    let text = scenario("never-ready", "ready = \"http://{listen}/readyz\"")
        .replace("timeout = \"20s\"", "timeout = \"3s\"");
    let (output, report) = run(dir.path(), &text, &["--allow-commands"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let report = report.expect("the model's results are written");
    assert!(report["variants"][0]["error"].is_null());
    let error = report["variants"][1]["error"].as_str().unwrap();
    assert!(
        error.contains("phase `list`")
            && error.contains("never said it was ready")
            && error.contains("503")
            && error.contains("[-]informer-sync failed"),
        "{error}"
    );
}
