//! `run --server kube-apiserver`: the run starts servers/kube-apiserver itself, fills it,
//! measures it and stops it, leaving nothing. The refusals need no server; the tests that
//! start one need target/servers/kube-apiserver (servers/build.sh), and `.ci/crosscheck`
//! runs them (their names start with `real_server_`).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{bin, interrupt_group};

/// A scenario of 1,000 pods through list, update and delete, in `dir`, with `top` (TOML
/// keys before `[objects]`).
fn scenario(dir: &Path, top: &str) -> PathBuf {
    let file = dir.join("launched.toml");
    std::fs::write(
        &file,
        format!(
            r#"name = "launched"
{top}
[objects]
kind = "Pod"
count = 1000
seed = 5

[[variant]]
name = "per-item copy"

[[phase]]
kind = "list"

[[phase]]
kind = "update"
fraction = 0.5

[[phase]]
kind = "delete"
fraction = 0.5
"#
        ),
    )
    .unwrap();
    file
}

/// The folder and the process id of the kube-apiserver the run said it started.
fn started(stderr: &str) -> (PathBuf, i32) {
    let folder = stderr
        .lines()
        .find_map(|l| l.strip_prefix("starting the real kube-apiserver for this run: "))
        .and_then(|l| l.split_once(" --dir "))
        .map(|(_, dir)| PathBuf::from(dir.trim()))
        .unwrap_or_else(|| panic!("no `starting` line: {stderr}"));
    let pid = stderr
        .split_once("(pid ")
        .and_then(|(_, rest)| rest.split_once(')'))
        .and_then(|(pid, _)| pid.parse().ok())
        .unwrap_or_else(|| panic!("no pid: {stderr}"));
    (folder, pid)
}

/// Whether process `pid` is still there (a zombie counts as gone: the run reaped it).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit_once(") ")
            .is_some_and(|(_, s)| s.starts_with('Z'))
    })
}

fn run_launched(scenario: &Path, report: &Path) -> (std::process::Output, String) {
    let out = bin()
        .arg("run")
        .arg(scenario)
        .arg("--server")
        .arg("kube-apiserver")
        .arg("--out")
        .arg(report)
        .arg("--no-chart")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stderr)
}

#[test]
#[ignore = "needs target/servers/kube-apiserver (servers/build.sh); .ci/crosscheck runs it"]
fn real_server_started_by_the_run_is_measured_checked_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = scenario(dir.path(), "");
    let mut reports = Vec::new();
    for i in 0..2 {
        let report = dir.path().join(format!("report-{i}.json"));
        let (out, stderr) = run_launched(&scenario, &report);
        assert!(out.status.success(), "{stderr}");
        let (folder, pid) = started(&stderr);
        assert!(!folder.exists(), "{} left behind", folder.display());
        assert!(!alive(pid), "kube-apiserver (pid {pid}) still runs");
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
        assert_eq!(json["server"]["started_by_run"], true, "{}", json["server"]);
        assert!(
            json["server"]["version"]
                .as_str()
                .unwrap()
                .starts_with("v1."),
            "{}",
            json["server"]
        );
        for phase in json["variants"][0]["phases"].as_array().unwrap() {
            assert_eq!(phase["consistent"], true, "{phase}");
            // The run measured the process it started from outside.
            let process = &phase["kube_apiserver"]["process"];
            assert!(process["rss_peak_bytes"].as_u64().unwrap() > 0, "{phase}");
        }
        reports.push(report);
    }
    let check = bin()
        .arg("check")
        .arg(&reports[1])
        .arg("--baseline")
        .arg(&reports[0])
        .output()
        .unwrap();
    assert!(check.status.success(), "{check:?}");
}

/// A run of a long settle on the kube-apiserver it starts, in a process group of its own
/// (as a shell runs a job, which Ctrl-C signals), once its variant runs: the run, its
/// stderr from there on, and the server's folder and process id.
fn long_run(
    dir: &Path,
) -> (
    std::process::Child,
    BufReader<std::process::ChildStderr>,
    (PathBuf, i32),
) {
    use std::os::unix::process::CommandExt;
    let scenario = dir.join("long.toml");
    std::fs::write(
        &scenario,
        "name = \"long\"\n[objects]\nkind = \"Pod\"\ncount = 50\n[[variant]]\nname = \"a\"\n\
         [[phase]]\nkind = \"list\"\n[[phase]]\nkind = \"settle\"\nidle = \"120s\"\n",
    )
    .unwrap();
    let mut run = Command::new(assert_cmd::cargo::cargo_bin("informer-mem"))
        .arg("run")
        .arg(&scenario)
        .args(["--server", "kube-apiserver", "--out"])
        .arg(dir.join("report.json"))
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(run.stderr.take().unwrap());
    let mut said = String::new();
    while !said.contains("running against") {
        assert!(
            stderr.read_line(&mut said).unwrap() > 0,
            "never ran: {said}"
        );
    }
    let server = started(&said);
    (run, stderr, server)
}

#[test]
#[ignore = "needs target/servers/kube-apiserver (servers/build.sh); .ci/crosscheck runs it"]
fn real_server_started_by_the_run_is_stopped_on_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let (mut run, mut stderr, (folder, pid)) = long_run(dir.path());
    std::thread::sleep(Duration::from_secs(5));
    let status = interrupt_group(&mut run);
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert_eq!(status.code(), Some(130), "{rest}");
    assert!(!folder.exists(), "{} left behind: {rest}", folder.display());
    assert!(!alive(pid), "kube-apiserver (pid {pid}) still runs: {rest}");
    assert!(!dir.path().join("report.json").exists());
}

#[test]
#[ignore = "needs target/servers/kube-apiserver (servers/build.sh); .ci/crosscheck runs it"]
fn real_server_started_by_the_run_goes_with_a_run_that_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let (mut run, _stderr, (folder, pid)) = long_run(dir.path());
    // No handler runs: the kernel's SIGTERM (PR_SET_PDEATHSIG) stops the server, which
    // removes its folder itself.
    run.kill().unwrap();
    run.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    while alive(pid) || folder.exists() {
        assert!(
            Instant::now() < deadline,
            "kube-apiserver (pid {pid}) alive: {}, {} left: {}",
            alive(pid),
            folder.display(),
            folder.exists()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn the_scenarios_server_key_starts_nothing_without_the_command_lines_consent() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = scenario(dir.path(), "server = \"kube-apiserver\"");
    let report = dir.path().join("report.json");
    let out = bin()
        .arg("run")
        .arg(&scenario)
        .arg("--out")
        .arg(&report)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("server = \"kube-apiserver\"")
            && stderr.contains("--allow-commands")
            && !stderr.contains("starting the real kube-apiserver"),
        "{stderr}"
    );
    assert!(!report.exists(), "nothing written");
    // The command line's choice wins: the built-in server, whose exact figures repeat.
    let out = bin()
        .arg("run")
        .arg(&scenario)
        .args(["--server", "built-in", "--no-chart", "--out"])
        .arg(&report)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert!(json.get("server").is_none(), "{}", json["server"]);
}

#[test]
fn a_server_that_is_not_built_is_named_with_the_command_that_builds_it() {
    // A copy of the program where no target/servers/ is beside it or below the directory
    // it runs in.
    let dir = tempfile::tempdir().unwrap();
    let bin_dir = dir.path().join("bin");
    std::fs::create_dir(&bin_dir).unwrap();
    let copy = bin_dir.join("informer-mem");
    std::fs::copy(assert_cmd::cargo::cargo_bin("informer-mem"), &copy).unwrap();
    let scenario = scenario(dir.path(), "");
    let out = Command::new(&copy)
        .current_dir(dir.path())
        .arg("run")
        .arg(&scenario)
        .args(["--server", "kube-apiserver", "--out", "report.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("not built") && stderr.contains("bash servers/build.sh"),
        "{stderr}"
    );
    assert!(!dir.path().join("report.json").exists(), "nothing written");
}

#[test]
fn server_and_kubeconfig_are_one_choice() {
    let out = bin()
        .args([
            "run",
            "x.toml",
            "--server",
            "kube-apiserver",
            "--kubeconfig",
            "k",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot be used with"), "{stderr}");
}
