//! `size --objects` and `size --kubeconfig`: a cluster's objects counted, sampled and
//! measured per kind and choice; the reports kept predict the same again; a cluster is
//! only read; a refused resource is named; bad input is one error.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use super::util::{bin, fixture, repo_file};

/// A kubectl List of `pods` copies of the shipped CoreDNS pod (with its managedFields)
/// and `configmaps` ConfigMaps.
fn mixed_list(dir: &Path, pods: usize, configmaps: usize) -> PathBuf {
    let coredns = repo_file("scenarios/samples/coredns-pod.json");
    let pod: Value = serde_json::from_slice(&std::fs::read(coredns).unwrap()).unwrap();
    assert!(pod["metadata"]["managedFields"].is_array(), "{pod}");
    let mut items: Vec<Value> = (0..pods)
        .map(|i| {
            let mut p = pod.clone();
            p["metadata"]["name"] = json!(format!("pod-{i}"));
            p
        })
        .collect();
    items.extend((0..configmaps).map(|i| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": format!("cm-{i}"), "namespace": "default"},
               "data": {"key": "x".repeat(100 + i)}})
    }));
    let file = dir.join("objects.json");
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
    std::fs::write(&file, serde_json::to_vec(&list).unwrap()).unwrap();
    file
}

/// The steady store of `choice` in the row of `objects` in a choices table.
fn steady(table: &str, objects: &str, choice: usize) -> String {
    let row = table
        .lines()
        .find(|l| l.contains(objects) && l.contains("steady store"))
        .unwrap_or_else(|| panic!("no row of {objects}: {table}"));
    let cells: Vec<&str> = row.split(['│', '┆']).map(str::trim).collect();
    cells[3 + choice].to_owned()
}

#[test]
fn size_objects_measures_each_kind_of_a_list_and_its_reports_predict_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let objects = mixed_list(dir.path(), 30, 12);
    let kept = dir.path().join("kept");
    let output = bin()
        .arg("size")
        .arg("--objects")
        .arg(&objects)
        .args(["--model", "--points", "20,40,80", "--count", "pods=5000"])
        .arg("--out")
        .arg(&kept)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(
        table.starts_with("measured in the built-in model, not client-go (--model)"),
        "{table}"
    );
    assert!(
        table.contains("counted: 5,000 pods (30 sampled), 12 configmaps (12 sampled)"),
        "{table}"
    );
    for header in ["full", "strip managedFields", "metadata only", "watch-list"] {
        assert!(table.contains(header), "{table}");
    }
    // Each kind's rows and the total's; stripping managedFields saves on pods.
    for objects in ["5,000 Pod", "12 ConfigMap", "total"] {
        assert!(!steady(&table, objects, 0).is_empty(), "{table}");
    }
    assert!(
        table.contains("strip managedFields: the steady store saves"),
        "{table}"
    );
    // The kept reports are sweeps `size` predicts the same from.
    let again = bin()
        .arg("size")
        .arg(kept.join("pods.json"))
        .arg(kept.join("configmaps.json"))
        .args(["--count", "Pod=5000", "--count", "ConfigMap=12"])
        .output()
        .unwrap();
    assert!(again.status.success(), "{again:?}");
    let predicted = String::from_utf8_lossy(&again.stdout);
    let total = steady(&table, "total", 0);
    let row = predicted
        .lines()
        .find(|l| l.contains("│ full"))
        .unwrap_or_else(|| panic!("{predicted}"));
    assert!(row.contains(&total), "{total} not in {row}");
}

#[test]
fn size_objects_refuses_bad_input_with_one_error() {
    let dir = tempfile::tempdir().unwrap();
    let kindless = dir.path().join("kindless.json");
    std::fs::write(
        &kindless,
        r#"{"items": [{"metadata": {"name": "a"}}], "kind": "List"}"#,
    )
    .unwrap();
    let objects = mixed_list(dir.path(), 3, 0);
    for (args, expected) in [
        (
            vec!["--objects".to_owned(), kindless.display().to_string()],
            "object 0 has no apiVersion and kind".to_owned(),
        ),
        (
            vec![
                "--objects".to_owned(),
                objects.display().to_string(),
                "--points".to_owned(),
                "50".to_owned(),
            ],
            "--points: give two or more counts".to_owned(),
        ),
        (
            vec![
                "--objects".to_owned(),
                objects.display().to_string(),
                "--count".to_owned(),
                "Secret=5".to_owned(),
            ],
            "--count Secret=5: no Secret was read; the kinds read are Pod".to_owned(),
        ),
    ] {
        let output = bin()
            .arg("size")
            .args(&args)
            .arg("--model")
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        let said = String::from_utf8_lossy(&output.stderr);
        assert!(said.contains(&expected), "{expected:?} not in {said}");
        assert!(output.stdout.is_empty(), "{output:?}");
    }
}

#[test]
fn size_without_go_or_client_go_says_it_measured_the_model() {
    // The binary alone in a folder, with no Go on the PATH: no client-go to run or build.
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("informer-mem");
    std::fs::copy(env!("CARGO_BIN_EXE_informer-mem"), &exe).unwrap();
    let objects = mixed_list(dir.path(), 4, 0);
    let output = Command::new(&exe)
        .current_dir(dir.path())
        .env("PATH", dir.path())
        .args(["size", "--points", "10,20", "--objects"])
        .arg(&objects)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let table = String::from_utf8_lossy(&output.stdout);
    let first = table.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("measured in the built-in model, not client-go (Go is not installed")
            && first.contains("3.1 to 3.6 times"),
        "{first}"
    );
}

/// A server that answers discovery and pages of pods, refuses configmaps (403), and
/// writes every request's method and path to `log`.
const READ_ONLY_SERVER: &str = r#"
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import urlparse, parse_qs
log = open(sys.argv[1], "a")
pod = json.load(open(sys.argv[2]))["items"][0]
PODS = 1200
class H(BaseHTTPRequestHandler):
    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def handle_one(self):
        log.write(self.command + " " + self.path + "\n"); log.flush()
        url = urlparse(self.path)
        q = parse_qs(url.query)
        if self.command != "GET":
            return self.answer(405, {"kind": "Status", "message": "read-only"})
        if url.path == "/version":
            return self.answer(200, {"gitVersion": "v1.37.0-fixture"})
        if url.path == "/api/v1":
            return self.answer(200, {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
                {"name": "pods", "kind": "Pod", "namespaced": True, "verbs": ["get", "list", "watch"]},
                {"name": "configmaps", "kind": "ConfigMap", "namespaced": True, "verbs": ["get", "list", "watch"]}]})
        if url.path == "/api/v1/configmaps":
            return self.answer(403, {"kind": "Status", "message": "configmaps is forbidden"})
        if url.path == "/api/v1/pods":
            start = int(q.get("continue", ["0"])[0])
            limit = int(q.get("limit", ["500"])[0])
            items = []
            for i in range(start, min(start + limit, PODS)):
                p = {k: v for k, v in pod.items() if k not in ("apiVersion", "kind")}
                p = json.loads(json.dumps(p))
                p["metadata"]["name"] = "pod-%d" % i
                items.append(p)
            meta = {"resourceVersion": "7"}
            if start + limit < PODS:
                meta["continue"] = str(start + limit)
                meta["remainingItemCount"] = PODS - start - limit
            return self.answer(200, {"kind": "PodList", "apiVersion": "v1", "metadata": meta, "items": items})
        return self.answer(404, {"kind": "Status", "message": "not found"})
    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_one
    def log_message(self, *args): pass
server = HTTPServer(("127.0.0.1", 0), H)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;

#[test]
fn size_kubeconfig_only_reads_and_names_what_the_server_refused() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("requests.log");
    let script = dir.path().join("server.py");
    std::fs::write(&script, READ_ONLY_SERVER).unwrap();
    let mut server = Command::new("python3")
        .arg(&script)
        .arg(&log)
        .arg(fixture("sampled-pods.json"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut port = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut port)
        .unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: \
             http://127.0.0.1:{}\ncontexts:\n- name: c\n  context:\n    cluster: c\n    \
             user: u\ncurrent-context: c\nusers:\n- name: u\n  user: {{}}\n",
            port.trim()
        ),
    )
    .unwrap();
    let output = bin()
        .arg("size")
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args(["--resource", "pods,configmaps,widgets.example.com"])
        .args(["--model", "--points", "20,40"])
        .output()
        .unwrap();
    server.kill().unwrap();
    server.wait().unwrap();
    // The figures of what could be read, then exit 2 for what was asked and refused.
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(
        table.contains("counted: 1,200 pods (100 sampled)"),
        "{table}"
    );
    assert!(table.contains("1,200 Pod"), "{table}");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains(
            "not sized: configmaps: LIST /api/v1/configmaps: 403 (configmaps is forbidden)"
        ),
        "{said}"
    );
    assert!(
        said.contains("not sized: widgets.example.com: the server serves no group example.com"),
        "{said}"
    );
    let requests = std::fs::read_to_string(&log).unwrap();
    assert!(
        requests.lines().any(|l| l.starts_with("GET /api/v1/pods")),
        "{requests}"
    );
    let writes: Vec<&str> = requests
        .lines()
        .filter(|l| !l.starts_with("GET "))
        .collect();
    assert!(writes.is_empty(), "size wrote: {writes:?}");
}

#[test]
fn size_kubeconfig_that_cannot_be_read_or_reached_is_one_error() {
    let dir = tempfile::tempdir().unwrap();
    let garbled = dir.path().join("garbled");
    std::fs::write(&garbled, "clusters: [").unwrap();
    // Port 1 on loopback: nothing listens there.
    let unreachable = dir.path().join("unreachable");
    std::fs::write(
        &unreachable,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: \
         http://127.0.0.1:1\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n\
         current-context: c\nusers:\n- name: u\n  user: {}\n",
    )
    .unwrap();
    for (kubeconfig, expected) in [
        (dir.path().join("missing"), "reading the kubeconfig"),
        (garbled, "failed to parse kubeconfig"),
        (unreachable, "GET /version on http://127.0.0.1:1/"),
    ] {
        let output = bin()
            .arg("size")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .arg("--model")
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        let said = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            said.lines().filter(|l| l.starts_with("error:")).count(),
            1,
            "{said}"
        );
        assert!(said.contains(expected), "{expected:?} not in {said}");
        assert!(output.stdout.is_empty(), "{output:?}");
    }
}

#[test]
fn size_names_a_kind_it_cannot_measure_and_sizes_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let objects = mixed_list(dir.path(), 5, 0);
    // The built-in server serves Namespaces itself: a sample of them cannot be copied.
    let namespaces = dir.path().join("namespaces.json");
    std::fs::write(
        &namespaces,
        r#"{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}"#,
    )
    .unwrap();
    let output = bin()
        .arg("size")
        .arg("--objects")
        .arg(&objects)
        .arg("--objects")
        .arg(&namespaces)
        .args(["--model", "--points", "10,20"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("not sized: namespaces: "), "{said}");
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(!steady(&table, "5 Pod", 0).is_empty(), "{table}");
    assert!(!table.contains("Namespace ┆"), "{table}");

    // A built-in kind is named as kube-apiserver names it, not by kube's guess.
    let endpoints = dir.path().join("endpoints.json");
    std::fs::write(
        &endpoints,
        r#"{"apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": "web", "namespace": "default"},
            "subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]}"#,
    )
    .unwrap();
    let output = bin()
        .args(["size", "--objects"])
        .arg(&endpoints)
        .args(["--model", "--points", "10,20"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(
        table.contains("counted: 1 endpoints (1 sampled)"),
        "{table}"
    );
}
