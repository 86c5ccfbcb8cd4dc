//! `informer-mem crosscheck`: the built-in apiserver against a real kube-apiserver. The
//! tests that need one are ignored here; `.ci/crosscheck` starts the real server
//! (servers/kube-apiserver) and runs them with `INFORMER_MEM_KUBECONFIG` naming its
//! kubeconfig. They list namespaces with kubectl, which CI installs.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::util::{bin, interrupt_group};

fn kubeconfig() -> PathBuf {
    std::env::var_os("INFORMER_MEM_KUBECONFIG")
        .expect("INFORMER_MEM_KUBECONFIG names the real kube-apiserver's kubeconfig")
        .into()
}

/// The namespace a crosscheck's first line of standard error names.
fn made_namespace(line: &str) -> String {
    line.strip_prefix("made the namespace ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("not the namespace line: {line:?}"))
        .to_owned()
}

fn namespace_exists(kubeconfig: &PathBuf, namespace: &str) -> bool {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["get", "namespaces", "-o", "name"])
        .output()
        .expect("kubectl runs");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .any(|l| l == format!("namespace/{namespace}"))
}

#[test]
fn a_kubeconfig_that_cannot_be_read_is_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such.kubeconfig");
    let out = bin()
        .arg("crosscheck")
        .arg("--kubeconfig")
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no-such.kubeconfig"),
        "names the file: {stderr}"
    );
    assert!(out.stdout.is_empty(), "no table: {out:?}");
}

#[test]
#[ignore = "needs a real kube-apiserver; .ci/crosscheck starts one and runs this test"]
fn crosscheck_finds_no_unexplained_difference_and_leaves_no_namespace() {
    let kubeconfig = kubeconfig();
    let dir = tempfile::tempdir().unwrap();
    let answers = dir.path().join("answers.json");
    let out = bin()
        .arg("crosscheck")
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .arg("--out")
        .arg(&answers)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let namespace = made_namespace(stderr.lines().next().unwrap_or_default());
    assert!(
        !namespace_exists(&kubeconfig, &namespace),
        "{namespace} left behind"
    );
    let answers: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&answers).unwrap()).unwrap();
    let rows = answers["rows"].as_array().unwrap();
    assert!(rows.len() >= 60, "{} requests", rows.len());
    let sent = rows
        .iter()
        .filter(|r| r["real"]["status"].is_u64() && r["builtin"]["status"].is_u64())
        .count();
    assert!(sent >= 60, "{sent} requests answered by both servers");
}

#[test]
#[ignore = "needs a real kube-apiserver; .ci/crosscheck starts one and runs this test"]
fn crosscheck_deletes_its_namespace_after_ctrl_c() {
    use std::os::unix::process::CommandExt;
    let kubeconfig = kubeconfig();
    // In a process group of its own, as a shell runs a job; Ctrl-C signals the group.
    let mut check = Command::new(assert_cmd::cargo::cargo_bin("informer-mem"))
        .arg("crosscheck")
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(check.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let namespace = made_namespace(&line);
    assert!(namespace_exists(&kubeconfig, &namespace));
    let status = interrupt_group(&mut check);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    assert_eq!(status.code(), Some(2), "{rest}");
    assert!(rest.contains("interrupted"), "{rest}");
    assert!(
        !namespace_exists(&kubeconfig, &namespace),
        "{namespace} left behind"
    );
}
