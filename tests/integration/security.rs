//! What a run opens belongs to the run alone: its loopback server answers another local
//! user 401, its program's kubeconfig is private, its scratch folder goes with it, and
//! `serve`'s default kubeconfig is never at a path another user could plant a link at.
//! The proxy to a real server is tried here too (`real_server_*`, which .ci/crosscheck runs).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::util::{bin, fixture};

/// Whether this test runs as root, and so can try as `nobody` (CI runs as root).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A program that first lets the intruder (tests/fixtures/subjects/intruder.py) try the
/// run's endpoint, at its address without the secret path, as `nobody` (as this user when not root; the system's Python, which
/// `nobody` can run), its lines to `out`, then
/// becomes the command after its first three arguments: `wrapper SERVER KUBECONFIG OUT
/// COMMAND...`. With `insider`, the program itself (as this user, with the run's token)
/// then asks to impersonate someone, its line after the intruder's.
pub fn intruder_wrapper(dir: &Path, insider: bool) -> PathBuf {
    let wrapper = dir.join("wrapper.sh");
    let drop = if is_root() {
        "setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3"
    } else {
        "python3"
    };
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nserver=${{1%/*}} kubeconfig=$2 out=$3\nshift 3\n\
             {drop} {script} \"$server\" \"$kubeconfig\" > \"$out\" 2>&1\n{insider}exec \"$@\"\n",
            script = fixture("subjects/intruder.py").display(),
            insider = if insider {
                format!(
                    "python3 {} \"$server\" \"$kubeconfig\" --insider >> \"$out\" 2>&1\n",
                    fixture("subjects/intruder.py").display()
                )
            } else {
                String::new()
            },
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    wrapper
}

/// Asserts that every try the intruder printed to `out` was answered 401 and, as another
/// user, that it could not read the kubeconfig.
pub fn assert_intruder_refused(out: &Path) {
    assert_intruder_refused_in(&std::fs::read_to_string(out).unwrap());
}

/// [`assert_intruder_refused`] of what the intruder printed, `text`.
pub fn assert_intruder_refused_in(text: &str) {
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 9, "{text}");
    for line in &lines[..8] {
        assert!(line.ends_with(" 401"), "not refused 401: {line}\n{text}");
    }
    if is_root() {
        assert_eq!(lines[8], "kubeconfig PermissionError", "{text}");
    }
}

/// A scenario of `kind` in `dir` whose one variant is the Python informer wrapped by the
/// intruder ([`intruder_wrapper`], with the insider when `insider`), through `phases`
/// (TOML); the scenario's file and where the intruder's lines go.
fn intruded_scenario(dir: &Path, kind: &str, insider: bool, phases: &str) -> (PathBuf, PathBuf) {
    let wrapper = intruder_wrapper(dir, insider);
    let out = dir.join("intruder.out");
    let file = dir.join("intruded.toml");
    std::fs::write(
        &file,
        format!(
            r#"name = "intruded"
[objects]
kind = "{kind}"
count = 50

[[variant]]
name = "python"
implementation = "external"
command = ["{}", "{{server}}", "{{kubeconfig}}", "{}", "python3", "{}", "{{server}}", "{{resource}}", "{{listen}}"]
env = {{ INFORMER_MEM_TOKEN = "{{token}}" }}
status = "http://{{listen}}/informer-mem/status"
quiet = "500ms"
timeout = "30s"

[[phase]]
kind = "list"
{phases}"#,
            wrapper.display(),
            out.display(),
            fixture("subjects/informer.py").display()
        ),
    )
    .unwrap();
    (file, out)
}

#[test]
fn another_user_gets_401_from_the_runs_server_and_cannot_read_its_kubeconfig() {
    let dir = tempfile::tempdir().unwrap();
    let phases = "\n[[phase]]\nkind = \"delete\"\nfraction = 0.5\n";
    let (scenario, out) = intruded_scenario(dir.path(), "Pod", false, phases);
    let report = dir.path().join("report.json");
    let output = bin()
        .arg("run")
        .arg(&scenario)
        .arg("--out")
        .arg(&report)
        .arg("--no-chart")
        .arg("--allow-commands")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_intruder_refused(&out);
    // The program itself, with the token, was served, and the intruder's refusals are
    // not listed as the program's.
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let variant = &report["variants"][0];
    assert!(variant["error"].is_null(), "{variant}");
    for phase in variant["phases"].as_array().unwrap() {
        assert_eq!(phase["consistent"], true, "{phase}");
    }
    assert!(!report.to_string().contains("\"refused\""), "{report}");
}

#[test]
fn a_program_that_drops_the_secret_from_the_servers_url_is_told_why_it_got_nowhere() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("scenario.toml");
    std::fs::write(
        &scenario,
        format!(
            r#"name = "no-token"
[objects]
kind = "Pod"
count = 10

[[variant]]
name = "python"
implementation = "external"
command = ["sh", "-c", 'exec python3 "$1" "${{0%/*}}" "$2" "$3"', "{{server}}", "{}", "{{resource}}", "{{listen}}"]
status = "http://{{listen}}/informer-mem/status"
timeout = "5s"

[[phase]]
kind = "list"
"#,
            fixture("subjects/informer.py").display()
        ),
    )
    .unwrap();
    let output = bin()
        .arg("run")
        .arg(&scenario)
        .arg("--out")
        .arg(dir.path().join("report.json"))
        .arg("--no-chart")
        .arg("--allow-commands")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("without the run's secret were refused 401"),
        "{stderr}"
    );
}

#[test]
fn serves_default_kubeconfig_is_private_and_removed_and_no_planted_link_is_followed() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("planted.toml");
    std::fs::write(
        &scenario,
        "name = \"planted-link-test\"\n[objects]\ncount = 5\n\
         [[variant]]\nname = \"v\"\n[[phase]]\nkind = \"list\"\n",
    )
    .unwrap();
    // Where serve used to write it: a link there, to a file it must not touch.
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "mine").unwrap();
    let old = std::env::temp_dir().join("informer-mem-planted-link-test.kubeconfig");
    let _ = std::fs::remove_file(&old);
    std::os::unix::fs::symlink(&victim, &old).unwrap();
    let mut serve = std::process::Command::new(assert_cmd::cargo::cargo_bin("informer-mem"))
        .arg("serve")
        .arg(&scenario)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(serve.stdout.take().unwrap());
    let mut lines = String::new();
    for _ in 0..2 {
        std::io::BufRead::read_line(&mut stdout, &mut lines).unwrap();
    }
    let written = lines
        .lines()
        .find_map(|l| l.strip_prefix("kubeconfig written to "))
        .unwrap_or_else(|| panic!("no kubeconfig line: {lines}"));
    let kubeconfig = PathBuf::from(written.trim_end_matches(" (removed when serve stops)"));
    let folder = kubeconfig.parent().unwrap().to_owned();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&folder), 0o700, "{}", folder.display());
    assert_eq!(mode(&kubeconfig), 0o600, "{}", kubeconfig.display());
    assert_ne!(kubeconfig, old);
    // SAFETY: kill has no memory preconditions; the process is this test's child.
    unsafe { libc::kill(serve.id() as i32, libc::SIGTERM) };
    assert!(serve.wait().unwrap().success());
    assert!(
        !folder.exists(),
        "{} left after serve stopped",
        folder.display()
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine");
    std::fs::remove_file(&old).unwrap();
}

#[test]
fn a_link_planted_where_run_writes_by_default_is_refused_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    std::os::unix::fs::symlink(&elsewhere, work.join("runs")).unwrap();
    std::fs::write(
        work.join("s.toml"),
        "name = \"planted\"\n[objects]\ncount = 5\n[[variant]]\nname = \"v\"\n\
         [[phase]]\nkind = \"list\"\n",
    )
    .unwrap();
    let output = bin()
        .current_dir(&work)
        .args(["run", "s.toml", "--quiet"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("`runs` is a symbolic link"), "{stderr}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    // Named by the user, the same link is theirs to write through.
    let output = bin()
        .current_dir(&work)
        .args(["run", "s.toml", "--quiet", "--out", "runs/planted.json"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(elsewhere.join("planted.json").exists());
}

/// A run of the Python informer with a settle phase that holds it for a minute, in a
/// process group of its own as a shell runs a job; the marker its program's command line
/// carries.
fn start_long_run(dir: &Path) -> (std::process::Child, String) {
    use std::os::unix::process::CommandExt;
    let copy = dir.join("signalled-informer-copy.py");
    std::fs::copy(fixture("subjects/informer.py"), &copy).unwrap();
    let scenario = dir.join("scenario.toml");
    std::fs::write(
        &scenario,
        format!(
            r#"name = "signalled"
[objects]
count = 50

[[variant]]
name = "model"

[[variant]]
name = "python"
implementation = "external"
command = ["python3", "{}", "{{server}}", "{{resource}}", "{{listen}}"]
env = {{ SCRATCH_KUBECONFIG = "{{kubeconfig}}" }}
status = "http://{{listen}}/informer-mem/status"
quiet = "500ms"

[[phase]]
kind = "list"

[[phase]]
kind = "settle"
idle = "60s"
"#,
            copy.display()
        ),
    )
    .unwrap();
    let run = std::process::Command::new(assert_cmd::cargo::cargo_bin("informer-mem"))
        .arg("run")
        .arg(&scenario)
        .arg("--out")
        .arg(dir.join("report.json"))
        .arg("--allow-commands")
        .process_group(0)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    (run, copy.display().to_string())
}

/// Waits until the run's program is up; its pid.
fn wait_for_program(marker: &str) -> u32 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if let Some(pid) = pids_with(marker).first() {
            std::thread::sleep(std::time::Duration::from_millis(500));
            return *pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the program never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The processes whose command line holds `marker`, by pid.
fn pids_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline"))
            && String::from_utf8_lossy(&cmdline).contains(marker)
        {
            found.push(pid);
        }
    }
    found
}

/// The scratch folder of the program `pid`: where the kubeconfig it was given is.
fn scratch_of(pid: u32) -> PathBuf {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let kubeconfig = environ
        .split(|b| *b == 0)
        .find_map(|v| v.strip_prefix(b"SCRATCH_KUBECONFIG="))
        .expect("the program has SCRATCH_KUBECONFIG");
    let kubeconfig = PathBuf::from(String::from_utf8_lossy(kubeconfig).into_owned());
    kubeconfig.parent().unwrap().to_owned()
}

/// The processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`; comm may hold spaces, never a `)` at its end.
        let after = stat.rsplit_once(") ").map(|(_, rest)| rest).unwrap_or("");
        let parent = after.split_whitespace().nth(1);
        if parent == Some(&pid.to_string()) {
            found.extend(entry.file_name().to_string_lossy().parse::<u32>());
        }
    }
    found
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit_once(") ")
            .is_some_and(|(_, r)| r.starts_with('Z'))
    })
}

#[test]
fn sigterm_to_the_run_alone_ends_its_variants_and_programs_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (mut run, marker) = start_long_run(dir.path());
    let program = wait_for_program(&marker);
    let scratch = scratch_of(program);
    assert!(scratch.join("kubeconfig").exists());
    let variants = children_of(run.id());
    assert!(!variants.is_empty(), "no variant process");
    // To the run's process only, as `kill` or a supervisor sends it: not its group.
    // SAFETY: kill has no memory preconditions; the process is this test's child.
    unsafe { libc::kill(run.id() as i32, libc::SIGTERM) };
    let status = run.wait().unwrap();
    assert_eq!(status.code(), Some(143), "{status:?}");
    assert!(!alive(program), "the program outlived the run");
    for variant in variants {
        assert!(!alive(variant), "variant {variant} outlived the run");
    }
    assert!(!scratch.exists(), "{} left", scratch.display());
    assert!(
        !dir.path().join("report.json").exists(),
        "a report of a stopped run"
    );
}

#[test]
fn ctrl_c_to_the_runs_group_exits_130_and_leaves_no_scratch() {
    let dir = tempfile::tempdir().unwrap();
    let (mut run, marker) = start_long_run(dir.path());
    let program = wait_for_program(&marker);
    let scratch = scratch_of(program);
    let status = super::util::interrupt_group(&mut run);
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert!(!alive(program), "the program outlived the run");
    assert!(!scratch.exists(), "{} left", scratch.display());
}

/// A run of the Python informer through the proxy, wrapped by the intruder
/// ([`intruded_scenario`], the insider too), with `args`: its output and what the
/// intruder and the insider printed.
fn intruded_run(kind: &str, args: &[&str]) -> (std::process::Output, String) {
    let dir = tempfile::tempdir().unwrap();
    let (file, out) = intruded_scenario(dir.path(), kind, true, "");
    let report = dir.path().join("report.json");
    let output =
        super::real_server::run_against(&file, &super::real_server::kubeconfig(), &report, args);
    let said = std::fs::read_to_string(&out).unwrap_or_default();
    (output, said)
}

#[test]
#[ignore = "needs a real kube-apiserver; .ci/crosscheck starts one and runs this test"]
fn real_server_proxy_lends_the_users_credentials_to_the_program_alone() {
    let (output, said) = intruded_run("Pod", &["--allow-commands"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_intruder_refused_in(&said);
    // The program itself, with the run's token, acts as the user: never as whom it asks
    // to impersonate.
    let impersonated = said
        .lines()
        .find_map(|l| l.strip_prefix("impersonated "))
        .unwrap_or_else(|| panic!("the insider said nothing: {said}"));
    assert!(
        !impersonated.is_empty()
            && impersonated != "intruder-impersonated"
            && impersonated.parse::<u16>().is_err(),
        "{said}"
    );
}

#[test]
#[ignore = "needs a real kube-apiserver; .ci/crosscheck starts one and runs this test"]
fn real_server_read_only_proxy_refuses_the_programs_writes() {
    let (output, said) = intruded_run("ConfigMap", &["--allow-commands", "--read-only"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_intruder_refused_in(&said);
    // Even the program's own POST (a review that writes nothing) is refused under
    // --read-only, by the proxy: the server never sees it.
    assert!(
        said.lines().any(|l| l == "impersonated 403"),
        "{said}\n{stderr}"
    );
}
