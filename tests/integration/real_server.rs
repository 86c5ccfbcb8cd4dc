//! `run --kubeconfig`: scenarios against a real kube-apiserver. The refusals need no
//! server; the tests that do are ignored here, and `.ci/crosscheck` runs them against the
//! real server it starts (servers/kube-apiserver), `INFORMER_MEM_KUBECONFIG` naming its
//! kubeconfig. They list namespaces with kubectl, which CI installs.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{bin, interrupt_group};

pub fn kubeconfig() -> PathBuf {
    std::env::var_os("INFORMER_MEM_KUBECONFIG")
        .expect("INFORMER_MEM_KUBECONFIG names the real kube-apiserver's kubeconfig")
        .into()
}

/// A scenario of 200 pods with `phases` (TOML) after the list, in `dir`.
fn scenario(dir: &Path, phases: &str) -> PathBuf {
    let file = dir.join("real.toml");
    std::fs::write(
        &file,
        format!(
            r#"name = "real"
[objects]
kind = "Pod"
count = 200
seed = 3

[[variant]]
name = "shared array"
store = "shared-array"
page_size = 0

[[variant]]
name = "per-item copy"
store = "per-item-copy"

[[phase]]
kind = "list"
{phases}"#
        ),
    )
    .unwrap();
    file
}

/// The namespaces the line `running against ... (FIRST .. LAST), removed at the end`
/// names, with every one between.
fn namespaces_of(stderr: &str) -> Vec<String> {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("running against "))
        .unwrap_or_else(|| panic!("no `running against` line: {stderr}"));
    let inside = line.split_once('(').unwrap().1.split_once(')').unwrap().0;
    let (first, last) = inside.split_once(" .. ").unwrap();
    let (stem, from) = first.rsplit_once('-').unwrap();
    let to: usize = last.rsplit_once('-').unwrap().1.parse().unwrap();
    (from.parse::<usize>().unwrap()..=to)
        .map(|i| format!("{stem}-{i}"))
        .collect()
}

/// `run SCENARIO --kubeconfig KUBECONFIG --out REPORT --no-chart ARGS...`, finished.
pub fn run_against(
    scenario: &Path,
    kubeconfig: &Path,
    report: &Path,
    args: &[&str],
) -> std::process::Output {
    bin()
        .arg("run")
        .arg(scenario)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--out")
        .arg(report)
        .arg("--no-chart")
        .args(args)
        .output()
        .unwrap()
}

fn existing(kubeconfig: &Path, namespaces: &[String]) -> Vec<String> {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["get", "namespaces", "-o", "name"])
        .output()
        .expect("kubectl runs");
    assert!(out.status.success(), "{out:?}");
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    namespaces
        .iter()
        .filter(|n| listed.lines().any(|l| l == format!("namespace/{n}")))
        .cloned()
        .collect()
}

/// `run` with `phases` against a kubeconfig that is not there, and `args`: refused (exit
/// 2) before it connects, and nothing written; what it said.
fn refused_before_connecting(phases: &str, args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let scenario = scenario(dir.path(), phases);
    let out = bin()
        .arg("run")
        .arg(&scenario)
        .arg("--kubeconfig")
        .arg(dir.path().join("no-such.kubeconfig"))
        .args(args)
        .arg("--out")
        .arg(dir.path().join("report.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !stderr.contains("no-such.kubeconfig"),
        "connected: {stderr}"
    );
    assert!(!dir.path().join("report.json").exists(), "nothing written");
    stderr
}

#[test]
fn read_only_refuses_a_writing_phase_before_connecting() {
    let stderr = refused_before_connecting(
        "[[phase]]\nkind = \"delete\"\nfraction = 0.5\n",
        &["--read-only"],
    );
    assert!(
        stderr.contains("phase `delete` (delete) writes to the server"),
        "{stderr}"
    );
}

#[test]
fn a_server_pid_that_is_no_process_is_refused_before_connecting() {
    let stderr = refused_before_connecting("", &["--server-pid", "4294967294"]);
    assert!(
        stderr.contains("--server-pid 4294967294: no such process"),
        "{stderr}"
    );
}

#[test]
fn a_churn_is_refused_against_a_real_server() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = scenario(
        dir.path(),
        "[[phase]]\nkind = \"update\"\ncount = 1\nchurn = \"10/s\"\nchurn_for = \"1s\"\n",
    );
    let out = bin()
        .arg("run")
        .arg(&scenario)
        .arg("--kubeconfig")
        .arg(dir.path().join("no-such.kubeconfig"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("has a churn"), "{stderr}");
}

#[test]
#[ignore = "needs a real kube-apiserver; .ci/crosscheck starts one and runs this test"]
fn real_server_run_matches_the_server_and_leaves_no_namespace() {
    let kubeconfig = kubeconfig();
    let dir = tempfile::tempdir().unwrap();
    let scenario = scenario(
        dir.path(),
        r#"
[[phase]]
name = "outage"
kind = "recreate"
count = 10
disconnect = true
compact = true

[[phase]]
kind = "relist"

[[phase]]
kind = "delete"
fraction = 0.99
"#,
    );
    let report = dir.path().join("report.json");
    let out = run_against(&scenario, &kubeconfig, &report, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let namespaces = namespaces_of(&stderr);
    assert_eq!(namespaces.len(), 2);
    assert_eq!(existing(&kubeconfig, &namespaces), Vec::<String>::new());
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert!(
        report["server"]["version"]
            .as_str()
            .unwrap()
            .starts_with('v')
    );
    for variant in report["variants"].as_array().unwrap() {
        let phases = variant["phases"].as_array().unwrap();
        assert_eq!(phases.len(), 4, "{variant}");
        for phase in phases {
            assert_eq!(phase["consistent"], true, "{phase}");
        }
        // The outage and the relist each got a 410 and listed again.
        for phase in &phases[1..3] {
            assert_eq!(phase["api_requests"]["expired"], 1, "{phase}");
            assert_eq!(phase["api_requests"]["list"], 1, "{phase}");
        }
    }
    let kept = |v: usize| {
        let phases = report["variants"][v]["phases"].as_array().unwrap();
        let informer = |p: usize| {
            phases[p]["components"]["informer"]["live_bytes"]
                .as_f64()
                .unwrap()
        };
        informer(3) / informer(0)
    };
    assert!(kept(0) > 0.9, "the shared array stays: {}", kept(0));
    assert!(kept(1) < 0.1, "per-item copies go: {}", kept(1));
}

#[test]
#[ignore = "needs a real kube-apiserver; .ci/crosscheck starts one and runs this test"]
fn real_server_graceful_deletes_are_three_updates_then_the_delete() {
    let kubeconfig = kubeconfig();
    let dir = tempfile::tempdir().unwrap();
    let scenario = scenario(
        dir.path(),
        "[[phase]]\nkind = \"delete\"\ncount = 10\ngraceful = true\n\n\
         [[phase]]\nkind = \"recreate\"\ncount = 5\ngraceful = true\n",
    );
    let report = dir.path().join("report.json");
    let out = run_against(&scenario, &kubeconfig, &report, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let namespaces = namespaces_of(&stderr);
    assert_eq!(existing(&kubeconfig, &namespaces), Vec::<String>::new());
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    for variant in report["variants"].as_array().unwrap() {
        let phases = variant["phases"].as_array().unwrap();
        // The run acts as the pods' kubelet: kube-apiserver's DELETE, the terminal
        // status and the DELETE with no grace are a MODIFIED event each, then DELETED;
        // a recreated pod is ADDED again and given its status (one more MODIFIED).
        for (phase, events, objects) in [(&phases[1], 40, 190), (&phases[2], 30, 190)] {
            assert_eq!(phase["graceful"], true, "{phase}");
            assert_eq!(phase["consistent"], true, "{phase}");
            assert_eq!(object_events(&phase["api_requests"]), events, "{phase}");
            assert_eq!(phase["objects"], objects, "{phase}");
        }
    }
}

#[test]
#[ignore = "needs a real kube-apiserver; .ci/crosscheck starts one and runs this test"]
fn real_server_failed_variant_leaves_no_namespace() {
    let kubeconfig = kubeconfig();
    let dir = tempfile::tempdir().unwrap();
    let scenario = scenario(dir.path(), "[[phase]]\nkind = \"settle\"\nidle = \"60s\"\n");
    let report = dir.path().join("report.json");
    let out = run_against(
        &scenario,
        &kubeconfig,
        &report,
        &["--variant-timeout", "5s"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("(--variant-timeout) and was killed"),
        "{table}"
    );
    let namespaces = namespaces_of(&stderr);
    assert_eq!(existing(&kubeconfig, &namespaces), Vec::<String>::new());
}

#[test]
#[ignore = "needs a real kube-apiserver; .ci/crosscheck starts one and runs this test"]
fn real_server_ctrl_c_leaves_no_namespace() {
    use std::os::unix::process::CommandExt;
    let kubeconfig = kubeconfig();
    let dir = tempfile::tempdir().unwrap();
    let scenario = scenario(
        dir.path(),
        "[[phase]]\nkind = \"settle\"\nidle = \"120s\"\n",
    );
    // In a process group of its own, as a shell runs a job; Ctrl-C signals the group.
    let mut run = Command::new(assert_cmd::cargo::cargo_bin("informer-mem"))
        .arg("run")
        .arg(&scenario)
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .arg("--out")
        .arg(dir.path().join("report.json"))
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(run.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let namespaces = namespaces_of(&line);
    // Once the first variant has its objects, it is in its long settle.
    let deadline = Instant::now() + Duration::from_secs(60);
    while existing(&kubeconfig, &namespaces).len() < namespaces.len() {
        assert!(Instant::now() < deadline, "the namespaces were never made");
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(3));
    let status = interrupt_group(&mut run);
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert_eq!(status.code(), Some(130), "{rest}");
    assert!(rest.contains("interrupted"), "{rest}");
    assert_eq!(existing(&kubeconfig, &namespaces), Vec::<String>::new());
    assert!(
        !dir.path().join("report.json").exists(),
        "an interrupted run writes no report"
    );
}

#[test]
#[ignore = "needs a real kube-apiserver; .ci/crosscheck starts one and runs this test"]
fn real_server_figures_and_plain_watchers() {
    let kubeconfig = kubeconfig();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("watchers.toml");
    std::fs::write(
        &file,
        r#"name = "real-watchers"
[objects]
kind = "ConfigMap"
count = 100

[[variant]]
name = "3 watchers"
watchers = 3
share_encodings = true

[[phase]]
kind = "list"

[[phase]]
kind = "update"
fraction = 1.0
"#,
    )
    .unwrap();
    let report = dir.path().join("report.json");
    let pid = std::env::var("INFORMER_MEM_SERVER_PID")
        .expect("INFORMER_MEM_SERVER_PID names the real kube-apiserver's process");
    let out = run_against(&file, &kubeconfig, &report, &["--server-pid", &pid]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    for phase in report["variants"][0]["phases"].as_array().unwrap() {
        let process = &phase["kube_apiserver"]["process"];
        let rss = |key: &str| process[key].as_u64().unwrap_or_else(|| panic!("{process}"));
        assert!(rss("rss_start_bytes") > 0, "{process}");
        assert!(
            rss("rss_peak_bytes") >= rss("rss_start_bytes").max(rss("rss_bytes")),
            "{process}"
        );
    }
    let update = &report["variants"][0]["phases"][1];
    let server = &update["kube_apiserver"];
    assert!(server["alloc_bytes"].as_u64().unwrap() > 0, "{server}");
    assert!(server["alloc_count"].as_u64().unwrap() > 0, "{server}");
    // 100 updates to the informer and to each of the 3 watchers (and bookmarks, if any).
    let sent = server["events_sent"].as_u64().unwrap();
    assert!((400..450).contains(&sent), "{sent} events sent");
    let profile = server["heap_profile"].as_str().unwrap();
    let bytes = std::fs::read(dir.path().join(profile)).unwrap();
    assert_eq!(&bytes[..2], &[0x1f, 0x8b], "a gzipped profile");
}

#[test]
#[ignore = "needs a real kube-apiserver and the shipped subjects; .ci/crosscheck runs it"]
fn real_server_external_subjects_through_the_proxy() {
    let kubeconfig = kubeconfig();
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("external.toml");
    // A pod of the cluster's own, outside the run's namespaces: v0.37 watches every
    // namespace, and the proxy narrows its LIST and WATCH to the variant's.
    let stray = &format!("informer-mem-test-stray-{}", std::process::id());
    kubectl(&kubeconfig, &["create", "namespace", stray], "");
    kubectl(
        &kubeconfig,
        &[
            "-n",
            stray,
            "run",
            "stray",
            "--image=registry.example/stray",
        ],
        "",
    );
    let subject = |name: &str, version: &str, namespace: &str| {
        format!(
            r#"[[variant]]
name = "{name}"
implementation = "external"
command = ["{root}/target/subjects/client-go-{version}", "--kubeconfig", "{{kubeconfig}}", "--listen", "{{listen}}", "--resource", "{{resource}}", "--namespace", "{namespace}"]
status = "http://{{listen}}/informer-mem/status"
pprof = "http://{{listen}}/debug/pprof"
"#
        )
    };
    std::fs::write(
        &file,
        format!(
            r#"name = "real-external"
[objects]
kind = "Pod"
count = 100

{}
{}
[[phase]]
kind = "list"

[[phase]]
kind = "update"
fraction = 0.5

[[phase]]
kind = "delete"
fraction = 0.5

[[phase]]
kind = "disconnect"
fraction = 0.1

[[phase]]
kind = "relist"
"#,
            subject("client-go v0.27", "v0.27", "{namespace}"),
            subject("client-go v0.37", "v0.37", "")
        ),
    )
    .unwrap();
    let report = dir.path().join("report.json");
    let out = run_against(&file, &kubeconfig, &report, &["--allow-commands"]);
    kubectl(&kubeconfig, &["-n", stray, "delete", "pod", "stray"], "");
    kubectl(
        &kubeconfig,
        &["delete", "namespace", stray, "--wait=false"],
        "",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let namespaces = namespaces_of(&stderr);
    assert_eq!(existing(&kubeconfig, &namespaces), Vec::<String>::new());
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    for variant in report["variants"].as_array().unwrap() {
        assert!(variant["error"].is_null(), "{}", variant["error"]);
        let phases = variant["phases"].as_array().unwrap();
        assert_eq!(phases.len(), 5, "{variant}");
        for phase in phases {
            assert_eq!(phase["consistent"], true, "{phase}");
            assert_eq!(phase["subject"]["store_checked"], true, "{phase}");
            assert!(phase["kube_apiserver"]["cpu_ms"].is_u64(), "{phase}");
        }
        let expired = phases[4]["api_requests"]["expired"].as_u64().unwrap();
        assert_eq!(expired, 1, "the relist's 410, answered by the proxy");
    }
    // v0.37 syncs by watch-list, in protobuf, gzipped: its 100 pods and the bookmark
    // that ends them were read through the proxy, and any periodic bookmark the server
    // sent (about once a minute: a slow phase under CI's load reads one).
    let list = &report["variants"][1]["phases"][0]["api_requests"];
    assert_eq!(object_events(list), 100, "{list}");
    assert!(
        list["bookmarks"].as_u64() >= Some(1),
        "no end bookmark: {list}"
    );
}

#[test]
#[ignore = "needs a real kube-apiserver and the shipped subjects; .ci/crosscheck runs it"]
fn real_server_read_only_program_relists_within_its_phase() {
    let kubeconfig = kubeconfig();
    let root = env!("CARGO_MANIFEST_DIR");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("read-only.toml");
    // Secrets: no other test writes any while this one reads them all. One to list.
    let kubectl = |args: &[&str]| {
        let out = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(args)
            .output()
            .expect("kubectl runs");
        assert!(out.status.success(), "kubectl {args:?}: {out:?}");
    };
    let namespace = "informer-mem-test-read-only";
    kubectl(&["create", "namespace", namespace]);
    kubectl(&[
        "-n",
        namespace,
        "create",
        "secret",
        "generic",
        "one",
        "--from-literal=a=b",
    ]);
    std::fs::write(
        &file,
        format!(
            r#"name = "real-read-only-external"
[objects]
kind = "Secret"
count = 10

[[variant]]
name = "client-go v0.37"
implementation = "external"
command = ["{root}/target/subjects/client-go-v0.37", "--kubeconfig", "{{kubeconfig}}", "--listen", "{{listen}}", "--resource", "{{resource}}", "--namespace", "{{namespace}}"]
status = "http://{{listen}}/informer-mem/status"
pprof = "http://{{listen}}/debug/pprof"

[[phase]]
kind = "list"

[[phase]]
kind = "relist"
"#
        ),
    )
    .unwrap();
    let report = dir.path().join("report.json");
    let out = run_against(
        &file,
        &kubeconfig,
        &report,
        &["--allow-commands", "--read-only"],
    );
    kubectl(&["delete", "namespace", namespace, "--wait=false"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let phases = report["variants"][0]["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2, "{report}");
    assert!(
        phases[0]["server_objects"].as_u64().unwrap() > 0,
        "{}",
        phases[0]
    );
    for phase in phases {
        assert_eq!(phase["consistent"], true, "{phase}");
    }
    let relist = &phases[1]["api_requests"];
    assert_eq!(
        relist["expired"], 1,
        "the 410 lands in its own phase: {relist}"
    );
}

#[test]
fn deployments_are_written_to_no_real_server() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("deployments.toml");
    std::fs::write(
        &file,
        "name = \"d\"\n[objects]\nkind = \"Deployment\"\ncount = 5\n[[variant]]\nname = \"a\"\n[[phase]]\nkind = \"list\"\n",
    )
    .unwrap();
    let out = bin()
        .arg("run")
        .arg(&file)
        .arg("--kubeconfig")
        .arg(dir.path().join("no-such.kubeconfig"))
        .arg("--out")
        .arg(dir.path().join("report.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("objects.kind = \"Deployment\"")
            && stderr.contains("start pods")
            && stderr.contains("--read-only"),
        "{stderr}"
    );
    assert!(!dir.path().join("report.json").exists(), "nothing written");
}

/// kubectl with `args` against the real server, `stdin` piped in; its output.
fn kubectl(kubeconfig: &Path, args: &[&str], stdin: &str) -> String {
    use std::io::Write;
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "kubectl {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[ignore = "needs a real kube-apiserver; .ci/crosscheck starts one and runs this test"]
fn real_server_read_only_measures_the_clusters_own_deployments() {
    let kubeconfig = kubeconfig();
    let namespace = "informer-mem-test-deployments";
    let manifests: String = (0..12)
        .map(|i| {
            format!(
                "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web-{i}, namespace: {namespace}}}\n\
                 spec:\n  replicas: 2\n  selector: {{matchLabels: {{app: web-{i}}}}}\n  template:\n    \
                 metadata: {{labels: {{app: web-{i}}}}}\n    spec: {{containers: [{{name: c, image: nginx}}]}}\n"
            )
        })
        .collect();
    kubectl(&kubeconfig, &["create", "namespace", namespace], "");
    kubectl(&kubeconfig, &["apply", "-f", "-"], &manifests);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("deployments.toml");
    std::fs::write(
        &file,
        "name = \"d\"\n[objects]\nkind = \"Deployment\"\ncount = 1\n\
         [[variant]]\nname = \"built-in\"\n\
         [[variant]]\nname = \"kube-runtime, metadata\"\nimplementation = \"kube-runtime\"\nprojection = \"metadata\"\n\
         [[phase]]\nkind = \"list\"\n[[phase]]\nkind = \"relist\"\n",
    )
    .unwrap();
    let report = dir.path().join("report.json");
    let out = run_against(&file, &kubeconfig, &report, &["--read-only"]);
    let listed = kubectl(&kubeconfig, &["get", "deployments", "-A", "-o", "name"], "");
    kubectl(
        &kubeconfig,
        &["delete", "namespace", namespace, "--wait=false"],
        "",
    );
    assert!(out.status.success(), "{out:?}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    for variant in report["variants"].as_array().unwrap() {
        for phase in variant["phases"].as_array().unwrap() {
            assert_eq!(phase["consistent"], true, "{variant}");
            assert_eq!(
                phase["objects"].as_u64(),
                Some(listed.lines().count() as u64),
                "every Deployment of the cluster: {listed}"
            );
        }
    }
}

/// `run --read-only` of `scenario` (TOML, its sample beside it as `sample.yaml` when
/// `sample` is given) against the real server: its output and report.
fn read_only_run(
    scenario: &str,
    sample: Option<&str>,
) -> (std::process::Output, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    if let Some(sample) = sample {
        std::fs::write(dir.path().join("sample.yaml"), sample).unwrap();
    }
    let file = dir.path().join("read-only.toml");
    std::fs::write(&file, scenario).unwrap();
    let report = dir.path().join("report.json");
    let out = run_against(&file, &kubeconfig(), &report, &["--read-only"]);
    let report = std::fs::read(&report)
        .map(|bytes| serde_json::from_slice(&bytes).unwrap())
        .unwrap_or(serde_json::Value::Null);
    (out, report)
}

/// Every phase of every variant in `report` consistent, with `objects` objects.
fn assert_consistent_with(report: &serde_json::Value, objects: usize) {
    for variant in report["variants"].as_array().unwrap() {
        for phase in variant["phases"].as_array().unwrap() {
            assert_eq!(phase["consistent"], true, "{variant}");
            assert_eq!(phase["objects"].as_u64(), Some(objects as u64), "{variant}");
        }
    }
}

#[test]
#[ignore = "needs a real kube-apiserver; .ci/crosscheck starts one and runs this test"]
fn real_server_read_only_measures_the_clusters_own_custom_resources_and_nodes() {
    let kubeconfig = kubeconfig();
    let namespace = "informer-mem-test-widgets";
    kubectl(
        &kubeconfig,
        &["apply", "-f", "-"],
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
         metadata: {name: widgets.informer-mem.test}\n\
         spec:\n  group: informer-mem.test\n  scope: Namespaced\n  \
         names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}\n  \
         versions:\n  - name: v1\n    served: true\n    storage: true\n    \
         schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}\n",
    );
    kubectl(
        &kubeconfig,
        &[
            "wait",
            "--for=condition=Established",
            "crd/widgets.informer-mem.test",
        ],
        "",
    );
    kubectl(&kubeconfig, &["create", "namespace", namespace], "");
    let widget = |i: usize| {
        format!(
            "apiVersion: informer-mem.test/v1\nkind: Widget\n\
             metadata: {{name: w-{i}, namespace: {namespace}}}\nspec: {{size: {i}}}\n"
        )
    };
    let widgets: String = (0..15).map(|i| format!("---\n{}", widget(i))).collect();
    kubectl(&kubeconfig, &["apply", "-f", "-"], &widgets);
    let nodes: String = (0..3)
        .map(|i| {
            format!(
                "---\napiVersion: v1\nkind: Node\nmetadata: {{name: informer-mem-test-node-{i}}}\n"
            )
        })
        .collect();
    kubectl(&kubeconfig, &["create", "-f", "-"], &nodes);
    let variants = "[[variant]]\nname = \"built-in\"\n\
                    [[variant]]\nname = \"metadata\"\nprojection = \"metadata\"\n\
                    [[phase]]\nkind = \"list\"\n[[phase]]\nkind = \"relist\"\n";
    let (widgets_run, widgets_report) = read_only_run(
        &format!("name = \"w\"\n[objects]\nsample = \"sample.yaml\"\ncount = 1\n{variants}"),
        Some(&widget(0)),
    );
    let missing = widget(0).replace("kind: Widget", "kind: Gadget");
    let (gadgets_run, _) = read_only_run(
        &format!("name = \"g\"\n[objects]\nsample = \"sample.yaml\"\ncount = 1\n{variants}"),
        Some(&missing),
    );
    let node_count = kubectl(&kubeconfig, &["get", "nodes", "-o", "name"], "")
        .lines()
        .count();
    let (nodes_run, nodes_report) = read_only_run(
        &format!("name = \"n\"\n[objects]\nkind = \"Node\"\ncount = 1\n{variants}"),
        None,
    );
    kubectl(&kubeconfig, &["delete", "-f", "-", "--wait=false"], &nodes);
    kubectl(
        &kubeconfig,
        &["delete", "namespace", namespace, "--wait=false"],
        "",
    );
    kubectl(
        &kubeconfig,
        &["delete", "crd", "widgets.informer-mem.test", "--wait=false"],
        "",
    );
    assert!(widgets_run.status.success(), "{widgets_run:?}");
    assert_consistent_with(&widgets_report, 15);
    assert!(nodes_run.status.success(), "{nodes_run:?}");
    assert_consistent_with(&nodes_report, node_count);
    assert_eq!(gadgets_run.status.code(), Some(2), "{gadgets_run:?}");
    let said = String::from_utf8_lossy(&gadgets_run.stderr);
    assert!(
        said.contains("objects.sample: the server serves no `gadgets` in informer-mem.test/v1")
            && said.contains("CustomResourceDefinition installed?"),
        "{said}"
    );
}

/// A phase's watch events other than bookmarks: a real server sends a watch that allowed
/// them one about every minute, so a phase slowed by CI's load reads more.
fn object_events(requests: &serde_json::Value) -> u64 {
    let bookmarks = requests["bookmarks"].as_u64().unwrap_or(0);
    requests["watch_events"].as_u64().unwrap() - bookmarks
}
