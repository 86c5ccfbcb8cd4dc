//! External variants, with a small Python informer as the program
//! (tests/fixtures/subjects/informer.py): the opt-in, the status protocol's wait and store
//! check, a program without it, programs that fail, and no process left behind.

use std::path::Path;
use std::process::Output;

use serde_json::Value;
use units::Bytes;

use super::util::{bin, fixture, phases};

/// A scenario of 300 pods through the phases a program takes, with one built-in variant
/// and one running the Python informer in `mode`.
pub(super) fn scenario(mode: &str, extra: &str) -> String {
    let script = fixture("subjects/informer.py");
    format!(
        r#"name = "external-{mode}"
[objects]
kind = "Pod"
count = 300

[[variant]]
name = "model"

[[variant]]
name = "python"
implementation = "external"
command = ["python3", "{}", "{{server}}", "{{resource}}", "{{listen}}", "{mode}"]
status = "http://{{listen}}/informer-mem/status"
quiet = "500ms"
timeout = "20s"
{extra}

[[phase]]
kind = "list"

[[phase]]
kind = "update"
fraction = 0.5

[[phase]]
kind = "delete"
fraction = 0.9

[[phase]]
kind = "disconnect"
fraction = 0.5

[[phase]]
kind = "relist"
"#,
        script.display()
    )
}

/// Runs `text` with `args`; the output and the report, if one was written.
pub(super) fn run(dir: &Path, text: &str, args: &[&str]) -> (Output, Option<Value>) {
    let file = dir.join("scenario.toml");
    std::fs::write(&file, text).unwrap();
    let out = dir.join("report.json");
    let output = bin()
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .arg("--no-chart")
        .args(args)
        .output()
        .unwrap();
    let report = std::fs::read(&out)
        .ok()
        .map(|b| serde_json::from_slice(&b).unwrap());
    (output, report)
}

pub(super) fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.contains(marker) {
                found.push(cmdline);
            }
        }
    }
    found
}

#[test]
fn a_scenario_that_starts_programs_shows_them_and_needs_the_opt_in() {
    let dir = tempfile::tempdir().unwrap();
    let (output, report) = run(dir.path(), &scenario("normal", ""), &[]);
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(err.contains("python: python3 "), "{err}");
    assert!(
        err.contains("{listen} normal"),
        "the command as written: {err}"
    );
    assert!(err.contains("--allow-commands"), "{err}");
    assert!(report.is_none(), "nothing written");
}

#[test]
fn a_program_with_the_status_protocol_is_waited_for_and_its_store_checked() {
    let dir = tempfile::tempdir().unwrap();
    let (output, report) = run(dir.path(), &scenario("normal", ""), &["--allow-commands"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report = report.unwrap();
    let python = &report["variants"][1];
    assert_eq!(python["subject"]["implementation"], "informer.py");
    assert!(python["subject"]["setup"]["rss_bytes"].as_u64().unwrap() > 0);
    let expected = [300, 300, 30, 30, 30];
    for (phase, objects) in phases(python).iter().zip(expected) {
        assert_eq!(phase["objects"], objects, "{}", phase["name"]);
        assert_eq!(phase["server_objects"], objects);
        assert_eq!(phase["consistent"], true, "{}", phase["name"]);
        let subject = &phase["subject"];
        assert_eq!(subject["store_checked"], true);
        assert!(subject["rss_bytes"].as_u64().unwrap() > 0);
        assert!(subject["threads"].as_u64().unwrap() >= 2);
        assert!(subject.get("heap").is_none(), "no pprof, no Go heap");
    }
    // The heap the program reports after its own collection (`{status}/heap`): Python's
    // traced memory falls when nine in ten objects are deleted.
    let reported = |phase: usize| {
        phases(python)[phase]["subject"]["reported_heap_bytes"]
            .as_u64()
            .unwrap()
    };
    assert!(
        reported(2) < reported(1),
        "{} vs {}",
        reported(2),
        reported(1)
    );
    // The relist after the compaction is the program's own LIST.
    let relist = &phases(python)[4];
    assert_eq!(relist["api_requests"]["list"], 1);
    assert_eq!(relist["api_requests"]["expired"], 1);
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(table.contains("python (external)"), "{table}");
    // A program without a Go heap has its RSS high-water mark as its peak: the table shows
    // the report's, beside the RSS at the end.
    let list = &phases(python)[0]["subject"];
    let shown = format!(
        "{} (peak {})",
        Bytes(list["rss_bytes"].as_u64().unwrap()),
        Bytes(list["rss_peak_bytes"].as_u64().unwrap())
    );
    assert!(table.contains(&shown), "{shown} in {table}");
    assert!(
        !table.contains("store unchecked"),
        "every store was read: {table}"
    );
    assert!(
        !stderr(&output).contains("has no heap reading"),
        "the program reports its heap: {}",
        stderr(&output)
    );
}

#[test]
fn a_program_of_one_namespace_is_checked_against_that_namespace() {
    let dir = tempfile::tempdir().unwrap();
    // The Python informer lists and watches `{server}/api/v1/{resource}`: given
    // `namespaces/NS/pods`, one namespace's pods, as client-go's `WithNamespace` asks.
    let text = scenario("normal", "namespace = \"checkout\"")
        .replace("\"{resource}\"", "\"namespaces/{namespace}/{resource}\"")
        .replace(
            "name = \"model\"",
            "name = \"model\"\nnamespace = \"checkout\"",
        );
    let (output, report) = run(dir.path(), &text, &["--allow-commands"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report = report.unwrap();
    let variants = report["variants"].as_array().unwrap();
    for variant in variants {
        assert_eq!(
            variant["scope"]["namespaces"],
            serde_json::json!(["checkout"])
        );
        for phase in phases(variant) {
            assert_eq!(phase["consistent"], true, "{}", phase["name"]);
        }
    }
    // 300 pods in ten namespaces: 30 in `checkout`, fewer after nine in ten are deleted;
    // the program's store checked against those, as the model's.
    let (model, python) = (phases(&variants[0]), phases(&variants[1]));
    assert_eq!(python[0]["server_objects"], 30);
    assert!(python[2]["server_objects"].as_u64().unwrap() < 30);
    for (built_in, program) in model.iter().zip(python) {
        assert_eq!(program["server_objects"], built_in["server_objects"]);
        assert_eq!(program["subject"]["store_checked"], true);
    }
    // Without `namespace`, its store is checked against every namespace's pods and fails,
    // and a note says why before the run.
    let unscoped = text.replace("namespace = \"checkout\"", "");
    let (output, _) = run(dir.path(), &unscoped, &["--allow-commands"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let note = "note: variant `python` passes {namespace} (`payments`) to its program and has \
                no `namespace`";
    assert!(stderr(&output).contains(note), "{}", stderr(&output));
}

#[test]
fn a_phase_that_cuts_watches_cuts_them_once_they_have_lived_as_an_outage_does() {
    // The relist comes right after the list: cut at once, the watch would be a "very
    // short watch" to the program (as to client-go), which lists again without watching
    // again. Cut once it has lived, it is watched again, gets 410 and relists, as the
    // model does.
    let dir = tempfile::tempdir().unwrap();
    let (head, _) = scenario("normal", "")
        .split_once("[[phase]]\nkind = \"update\"")
        .map(|(head, tail)| (head.to_owned(), tail.to_owned()))
        .unwrap();
    let text = format!("{head}[[phase]]\nkind = \"relist\"\n");
    let (output, report) = run(dir.path(), &text, &["--allow-commands"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report = report.unwrap();
    let requests = |variant: usize| {
        let relist = &phases(&report["variants"][variant])[1];
        assert_eq!(relist["name"], "relist");
        assert_eq!(relist["consistent"], true);
        let r = &relist["api_requests"];
        (r["list"].clone(), r["watch"].clone(), r["expired"].clone())
    };
    assert_eq!(requests(1), (1.into(), 2.into(), 1.into()));
    assert_eq!(requests(0), requests(1), "the model and the program alike");
}

#[test]
fn without_the_status_protocol_the_store_is_unchecked_and_the_run_passes() {
    let dir = tempfile::tempdir().unwrap();
    let text =
        scenario("no-status", "").replace("status = \"http://{listen}/informer-mem/status\"\n", "");
    let (output, report) = run(dir.path(), &text, &["--allow-commands"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report = report.unwrap();
    for phase in phases(&report["variants"][1]) {
        assert_eq!(phase["subject"]["store_checked"], false);
        assert_eq!(
            phase["consistent"], false,
            "nothing checked, nothing claimed"
        );
    }
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(table.contains("┆ unchecked"), "{table}");
    assert!(
        table.contains("store unchecked: the program serves no status"),
        "{table}"
    );
    // Nor a heap: the run says so, and what would give one.
    assert!(
        stderr(&output).contains("note: variant `python` has no heap reading: it has no `pprof`"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_program_started_by_a_launcher_is_measured_with_it() {
    let dir = tempfile::tempdir().unwrap();
    // A shell that does not `exec` the informer (`; true` after it), as `go run` or
    // `npm start` stay beside the program they start.
    let script = fixture("subjects/informer.py");
    let text = scenario("normal", "").replace(
        &format!(
            "command = [\"python3\", \"{}\", \"{{server}}\", \"{{resource}}\", \"{{listen}}\", \"normal\"]",
            script.display()
        ),
        &format!(
            "command = [\"sh\", \"-c\", \"python3 {} {{server}} {{resource}} {{listen}} normal; true\"]",
            script.display()
        ),
    );
    assert!(text.contains("\"sh\", \"-c\""), "{text}");
    let (output, report) = run(dir.path(), &text, &["--allow-commands"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report = report.unwrap();
    for phase in phases(&report["variants"][1]) {
        let subject = &phase["subject"];
        let processes = subject["processes"].as_array().unwrap();
        let mut commands: Vec<&str> = processes
            .iter()
            .map(|p| p["command"].as_str().unwrap())
            .collect();
        commands.sort_unstable();
        assert_eq!(commands, ["python3", "sh"], "{}", phase["name"]);
        let each: u64 = processes
            .iter()
            .map(|p| p["rss_bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(subject["rss_bytes"].as_u64().unwrap(), each, "their sum");
        assert_eq!(phase["consistent"], true, "{}", phase["name"]);
    }
    // The built-in variant is one process: no list of them.
    assert!(phases(&report["variants"][0])[0].get("subject").is_none());
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(table.contains(", 2 processes)"), "{table}");
    let err = stderr(&output);
    assert!(
        err.contains("note: variant `python` ran as 2 processes (python3, sh)"),
        "{err}"
    );
}

#[test]
fn a_program_that_takes_a_lease_and_records_events_runs_as_in_a_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let (output, report) = run(dir.path(), &scenario("records", ""), &["--allow-commands"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report = report.unwrap();
    let program = &report["variants"][1];
    assert!(
        program["subject"]["setup"].get("refused").is_none(),
        "{program}"
    );
    for phase in phases(program) {
        assert_eq!(phase["consistent"], true);
        assert!(phase["subject"].get("refused").is_none(), "{phase}");
    }
    assert!(
        !stderr(&output).contains("the server refused"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_program_whose_heap_reads_cost_it_cpu_is_still_found_quiet() {
    // Each sample costs the program 40 ms of CPU, five a second: without the sampler's cost
    // taken out, a 500 ms quiet window (10 ms allowed) would never come and every phase
    // would run into its timeout.
    let dir = tempfile::tempdir().unwrap();
    let text = scenario("costly-pprof", "pprof = \"http://{listen}/debug/pprof\"")
        .replace("status = \"http://{listen}/informer-mem/status\"\n", "");
    let (output, report) = run(dir.path(), &text, &["--allow-commands"]);
    assert!(output.status.success(), "{}", stderr(&output));
    for phase in phases(&report.unwrap()["variants"][1]) {
        let subject = &phase["subject"];
        let (sampling, cpu) = (&subject["observer_cpu_ms"], &subject["cpu_ms"]);
        assert!(subject["samples"].as_u64().unwrap() > 0, "{phase}");
        // It reports no collection: the peak is the samples'.
        assert_eq!(subject["heap_peak_from"], "samples", "{phase}");
        assert!(sampling.as_u64().unwrap() > 0, "{phase}");
        assert!(sampling.as_u64() <= cpu.as_u64(), "{phase}");
    }
    assert!(
        stderr(&output)
            .contains("note: variant `python`'s output carried no report of its collections"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn the_peak_heap_is_every_collections_even_between_two_samples() {
    // The program reports a 720 MiB heap at a collection after each LIST, and heap
    // profiles of a few KiB: a sampler would never see the peak.
    let dir = tempfile::tempdir().unwrap();
    let text = scenario("gctrace", "pprof = \"http://{listen}/debug/pprof\"");
    let (output, report) = run(dir.path(), &text, &["--allow-commands"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report = report.unwrap();
    let variant = &report["variants"][1];
    let setup = &variant["subject"]["setup"];
    assert!(setup["gc_cycles"].as_array().unwrap().len() >= 2, "{setup}");
    let mut relisted = 0;
    for phase in phases(variant) {
        let subject = &phase["subject"];
        assert_eq!(subject["heap_peak_from"], "gc-log", "{phase}");
        assert_eq!(subject["samples"], 0, "no heap sampled: {phase}");
        let cycles = subject["gc_cycles"].as_array().unwrap();
        // The run's two forced collections at the phase's end, at least.
        let forced = cycles.iter().filter(|c| c["forced"] == true).count();
        assert!(forced >= 2, "{phase}");
        let largest = cycles
            .iter()
            .flat_map(|c| [&c["before_bytes"], &c["after_bytes"]])
            .map(|b| b.as_u64().unwrap())
            .max()
            .unwrap();
        let peak = subject["heap_peak_bytes"].as_u64().unwrap();
        assert!(peak >= largest, "{phase}");
        if cycles.iter().any(|c| c["after_bytes"] == 720u64 << 20) {
            relisted += 1;
            assert_eq!(peak, 720 << 20, "{phase}");
            let live = subject["heap"]["live_bytes"].as_u64().unwrap();
            assert!(live < 720 << 20, "the peak is not the live heap: {phase}");
        }
        assert!(subject["observer_cpu_ms"].as_u64() <= subject["cpu_ms"].as_u64());
    }
    // The LIST, and the relists after a disconnect and a 410.
    assert!(relisted >= 2, "{report}");
    assert!(!stderr(&output).contains("carried no report of its collections"));
}

#[test]
fn a_sweep_of_a_go_setting_runs_each_program_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let (output, report) = run(
        dir.path(),
        &scenario("normal", ""),
        &["--allow-commands", "--sweep", "env.GOMEMLIMIT=64MiB,1GiB"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let report = report.unwrap();
    let programs: Vec<(&str, &str)> = report["variants"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["subject"].is_object())
        .map(|v| {
            let name = v["name"].as_str().unwrap();
            (name, v["subject"]["implementation"].as_str().unwrap())
        })
        .collect();
    assert_eq!(
        programs,
        [
            (
                "python @ env.GOMEMLIMIT=64MiB",
                "informer.py GOMEMLIMIT=64MiB"
            ),
            (
                "python @ env.GOMEMLIMIT=1GiB",
                "informer.py GOMEMLIMIT=1GiB"
            ),
        ]
    );
    assert_eq!(report["scenario"]["sweep"]["key"], "env.GOMEMLIMIT");
}

#[test]
fn a_program_that_never_goes_quiet_fails_after_its_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let text = scenario("busy", "")
        .replace("status = \"http://{listen}/informer-mem/status\"\n", "")
        .replace("timeout = \"20s\"", "timeout = \"3s\"");
    let (output, report) = run(dir.path(), &text, &["--allow-commands"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("the program did not go quiet within 3s (`timeout`)"),
        "{}",
        stderr(&output)
    );
    let report = report.unwrap();
    assert_eq!(phases(&report["variants"][0]).len(), 5, "the model's kept");
    assert!(processes_with("busy").is_empty(), "the program is gone");
}

#[test]
fn a_program_that_exits_at_start_fails_its_variant_and_the_others_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (output, report) = run(dir.path(), &scenario("exit", ""), &["--allow-commands"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let report = report.unwrap();
    assert_eq!(phases(&report["variants"][0]).len(), 5, "the model ran");
    let error = report["variants"][1]["error"].as_str().unwrap();
    assert!(error.contains("exited with code 3"), "{error}");
    assert!(
        error.contains("exiting at start, as asked"),
        "its output: {error}"
    );
}

#[test]
fn a_program_that_is_not_there_fails_its_variant_saying_where_it_was_looked_for() {
    let dir = tempfile::tempdir().unwrap();
    let text = scenario("normal", "").replace(
        "command = [\"python3\"",
        "command = [\"bin/not-built-yet\", \"python3\"",
    );
    let (output, report) = run(dir.path(), &text, &["--allow-commands"]);
    assert_eq!(output.status.code(), Some(2));
    let report = report.unwrap();
    assert_eq!(phases(&report["variants"][0]).len(), 5, "the model ran");
    let error = report["variants"][1]["error"].as_str().unwrap();
    assert!(
        error.contains("failed to start `bin/not-built-yet`"),
        "{error}"
    );
    assert!(error.contains("the directory `run` started in"), "{error}");
}

#[test]
fn a_program_that_never_syncs_fails_after_its_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let text = scenario("never-sync", "").replace("timeout = \"20s\"", "timeout = \"2s\"");
    let (output, report) = run(dir.path(), &text, &["--allow-commands"]);
    assert_eq!(output.status.code(), Some(2));
    let error = report.unwrap()["variants"][1]["error"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(error.contains("phase `list`"), "{error}");
    assert!(error.contains("did not catch up within 2s"), "{error}");
    assert!(error.contains("synced false"), "{error}");
}

#[test]
fn a_program_that_never_connects_fails_and_is_not_left_behind() {
    let dir = tempfile::tempdir().unwrap();
    // A marker no other process has: the sleep's argument.
    let marker = "31536017";
    let text = format!(
        r#"name = "never-connects"
[objects]
count = 10

[[variant]]
name = "sleeper"
implementation = "external"
command = ["sh", "-c", "sleep {marker}; true"]
timeout = "1s"

[[phase]]
kind = "list"
"#
    );
    let (output, report) = run(dir.path(), &text, &["--allow-commands"]);
    assert_eq!(output.status.code(), Some(2));
    let error = report.unwrap()["variants"][0]["error"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(error.contains("asked for no pods within 1s"), "{error}");
    // The shell and the sleep it started: the whole group was stopped.
    assert_eq!(processes_with(marker), Vec::<String>::new());
}

#[test]
fn phases_a_program_cannot_take_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let text = scenario("normal", "").replace(
        "[[phase]]\nkind = \"relist\"",
        "[[phase]]\nkind = \"resync\"",
    );
    let (output, report) = run(dir.path(), &text, &["--allow-commands"]);
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(err.contains("phase[4]"), "{err}");
    assert!(
        err.contains("cannot run with external variant \"python\""),
        "{err}"
    );
    assert!(err.contains("resync period"), "{err}");
    assert!(report.is_none());
    // A built-in variant's settings are refused on an external one, by key.
    let text = scenario("normal", "store = \"shared-array\"");
    let (output, _) = run(dir.path(), &text, &["--allow-commands"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("variant[1].store"),
        "{}",
        stderr(&output)
    );
}

/// The scenario of [`scenario`] with the Python informer copied to `dir` under a name of
/// its own, so that its processes can be told from any other test's.
fn scenario_with_own_copy(dir: &Path, mode: &str, settle: &str) -> (String, String) {
    let copy = dir.join("own-informer-copy.py");
    std::fs::copy(fixture("subjects/informer.py"), &copy).unwrap();
    let text = scenario(mode, "")
        .replace(
            &fixture("subjects/informer.py").display().to_string(),
            &copy.display().to_string(),
        )
        .replace(
            "[[phase]]\nkind = \"relist\"",
            &format!(
                "[[phase]]\nkind = \"relist\"\n\n[[phase]]\nkind = \"settle\"\nidle = \"{settle}\""
            ),
        );
    (text, copy.display().to_string())
}

#[test]
fn the_program_is_gone_after_a_run_that_succeeded() {
    let dir = tempfile::tempdir().unwrap();
    let (text, marker) = scenario_with_own_copy(dir.path(), "normal", "10ms");
    let (output, _) = run(dir.path(), &text, &["--allow-commands"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(processes_with(&marker), Vec::<String>::new());
}

#[test]
fn ctrl_c_ends_the_program_with_the_run() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let (text, marker) = scenario_with_own_copy(dir.path(), "normal", "60s");
    let file = dir.path().join("scenario.toml");
    std::fs::write(&file, text).unwrap();
    // In a process group of its own, as a shell runs a job; Ctrl-C signals the group.
    let mut run = std::process::Command::new(assert_cmd::cargo::cargo_bin("informer-mem"))
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(dir.path().join("report.json"))
        .arg("--allow-commands")
        .process_group(0)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Until the program has started (the settle phase holds the run for a minute).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while processes_with(&marker).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the program never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let group = run.id() as i32;
    // SAFETY: kill has no memory preconditions; the group is the run's own.
    unsafe { libc::kill(-group, libc::SIGINT) };
    let status = run.wait().unwrap();
    assert!(!status.success());
    // The program's group is stopped as the run's child exits; give it its grace period.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !processes_with(&marker).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(processes_with(&marker), Vec::<String>::new());
}

/// The error of the Python informer's variant when run in `mode` with `extra` settings
/// and a timeout of 3 s.
fn program_error(mode: &str, extra: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let text = scenario(mode, extra).replace("timeout = \"20s\"", "timeout = \"3s\"");
    let (output, report) = run(dir.path(), &text, &["--allow-commands"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let report = report.expect("a report of the variants");
    assert!(report["variants"][0]["error"].is_null(), "the model ran");
    report["variants"][1]["error"]
        .as_str()
        .expect("the program's variant failed")
        .to_owned()
}

#[test]
fn an_endless_status_or_pprof_answer_ends_its_variant_with_a_clear_error() {
    let error = program_error("endless-status", "");
    assert!(
        error.contains("/informer-mem/status: the answer is larger than 1.0 MiB"),
        "{error}"
    );
    let error = program_error("endless-pprof", "pprof = \"http://{listen}/debug/pprof\"");
    assert!(
        error.contains("/debug/pprof/heap") && error.contains("larger than 40.0 MiB"),
        "{error}"
    );
}

#[test]
fn a_status_endpoint_that_never_answers_fails_at_the_subjects_timeout() {
    // Not the 60 s a heap profile may take: the subject's 3 s.
    let error = program_error("silent-status", "");
    assert!(
        error.contains("no answer within the subject's `timeout`"),
        "{error}"
    );
}
