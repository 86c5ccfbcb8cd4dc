//! The runner's hold on its variants' processes: a watchdog for the stuck ones.

use serde_json::Value;

use crate::util::phases;

/// The processes whose parent is `pid` (from `/proc/*/stat`).
fn children_of(pid: u32) -> Vec<u32> {
    let mut children = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`: the comm may hold spaces, so split after it.
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        if after.split(' ').nth(1).and_then(|p| p.parse().ok()) == Some(pid) {
            children.push(child);
        }
    }
    children
}

#[test]
fn a_stopped_variant_is_killed_at_its_timeout_and_the_others_still_run() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("stuck.toml");
    std::fs::write(
        &scenario,
        "name = \"stuck\"\n[objects]\ncount = 1000\n\
         [[variant]]\nname = \"stopped\"\n[[variant]]\nname = \"free\"\n\
         [[phase]]\nkind = \"list\"\n[[phase]]\nkind = \"update\"\nfraction = 0.5\n",
    )
    .unwrap();
    let out = dir.path().join("stuck.json");
    let mut run = std::process::Command::new(assert_cmd::cargo::cargo_bin("informer-mem"))
        .arg("run")
        .arg(&scenario)
        .arg("--out")
        .arg(&out)
        .args(["--variant-timeout", "3s", "--quiet"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Stop the first variant's process as soon as it exists: SIGSTOP, as a debugger or a
    // frozen container would.
    let started = std::time::Instant::now();
    let first = loop {
        if let Some(&child) = children_of(run.id()).first() {
            break child;
        }
        assert!(
            started.elapsed().as_secs() < 20,
            "no variant process started"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let stopped = std::process::Command::new("kill")
        .args(["-STOP", &first.to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    // The run must end by itself: the timeout, then the second variant.
    let status = loop {
        if let Some(status) = run.try_wait().unwrap() {
            break status;
        }
        if started.elapsed().as_secs() > 120 {
            run.kill().unwrap();
            panic!("run did not end after its variant's timeout");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(2));
    let report: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let variants = report["variants"].as_array().unwrap();
    let error = variants[0]["error"].as_str().unwrap();
    assert!(
        error.contains("still running after 3s (--variant-timeout) and was killed"),
        "{error}"
    );
    assert!(variants[1]["error"].is_null(), "{}", variants[1]["error"]);
    assert_eq!(phases(&variants[1]).len(), 2);
}
