//! `informer-mem serve` as a hostile client meets it: raw requests over TCP that are
//! malformed, refused or never finished, and stop signals while they are open.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, ChildStderr, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::Message;
use tungstenite::protocol::frame::coding::CloseCode;

/// A running `informer-mem serve` of 50 pods in 3 namespaces (few, so that the debug
/// build's single thread is never busy long); killed when dropped.
struct Served {
    child: Child,
    addr: SocketAddr,
    stderr: std::io::Lines<BufReader<ChildStderr>>,
    /// Kept open: `serve` writes more lines after the first.
    _stdout: BufReader<std::process::ChildStdout>,
    _dir: tempfile::TempDir,
}

impl Served {
    fn start(flags: &[&str]) -> Served {
        let dir = tempfile::tempdir().unwrap();
        let scenario = dir.path().join("pods.toml");
        std::fs::write(
            &scenario,
            "name = \"pods\"\n[objects]\ncount = 50\nnamespaces = 3\n\
             [[variant]]\nname = \"v\"\n[[phase]]\nkind = \"list\"\n",
        )
        .unwrap();
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("informer-mem"))
            .arg("serve")
            .arg(&scenario)
            .arg("--kubeconfig")
            .arg(dir.path().join("kubeconfig"))
            .args(flags)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        stdout.read_line(&mut first).unwrap();
        let addr = first
            .trim()
            .strip_prefix("listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
            .parse()
            .unwrap();
        let stderr = BufReader::new(child.stderr.take().unwrap()).lines();
        Served {
            child,
            addr,
            stderr,
            _stdout: stdout,
            _dir: dir,
        }
    }

    fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(self.addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        stream
    }

    /// Sends `request` on a new connection and reads the response to its end.
    fn exchange(&self, request: &[u8]) -> Response {
        let mut stream = self.connect();
        stream.write_all(request).unwrap();
        Response::parse(&read_to_close(&mut stream))
    }

    fn signal(&self, name: &str) {
        let status = std::process::Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for the first stderr line containing `text`.
    fn wait_for_stderr(&mut self, text: &str) {
        for line in self.stderr.by_ref() {
            if line.unwrap().contains(text) {
                return;
            }
        }
        panic!("serve never said {text:?}");
    }

    /// The exit code and how long after `since` the process ended; `None` if it is still
    /// running at `limit`.
    fn exit_within(&mut self, since: Instant, limit: Duration) -> Option<(i32, Duration)> {
        while since.elapsed() < limit {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some((status.code().unwrap_or(-1), since.elapsed()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Everything the server sent until it closed the connection. A server that answers and
/// closes without reading the rest of a request resets the connection (RST) after its
/// response; what came before the reset is the answer.
fn read_to_close(stream: &mut TcpStream) -> Vec<u8> {
    let mut raw = Vec::new();
    match stream.read_to_end(&mut raw) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset && !raw.is_empty() => {}
        Err(e) => panic!("reading the response: {e}"),
    }
    raw
}

#[derive(Debug)]
struct Response {
    code: u16,
    content_type: String,
    body: Vec<u8>,
}

impl Response {
    fn parse(raw: &[u8]) -> Response {
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or_else(|| panic!("no header end in {:?}", String::from_utf8_lossy(raw)));
        let head = std::str::from_utf8(&raw[..split]).unwrap();
        let mut lines = head.split("\r\n");
        let code = lines.next().unwrap().split(' ').nth(1).unwrap();
        let mut content_type = String::new();
        let mut chunked = false;
        for line in lines {
            let (name, value) = line.split_once(':').unwrap();
            match name.to_ascii_lowercase().as_str() {
                "content-type" => content_type = value.trim().to_owned(),
                "transfer-encoding" => chunked = value.trim() == "chunked",
                _ => {}
            }
        }
        let mut body = raw[split + 4..].to_vec();
        if chunked {
            body = dechunk(&body);
        }
        Response {
            code: code.parse().unwrap(),
            content_type,
            body,
        }
    }
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let end = raw.windows(2).position(|w| w == b"\r\n").unwrap();
        let size = usize::from_str_radix(std::str::from_utf8(&raw[..end]).unwrap(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&raw[end + 2..end + 2 + size]);
        raw = &raw[end + 4 + size..];
    }
}

/// `METHOD target` with a body, as one HTTP/1.1 request that closes the connection.
fn request(method: &str, target: &str, content_type: &str, body: &str) -> Vec<u8> {
    let mut out = format!("{method} {target} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n");
    if !content_type.is_empty() {
        out.push_str(&format!("Content-Type: {content_type}\r\n"));
    }
    out.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    out.into_bytes()
}

fn pod(name: &str, extra: Value) -> String {
    let mut pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "web", "image": "nginx:1"}]},
    });
    json_patch::merge(&mut pod, &extra);
    pod.to_string()
}

/// One pod's namespace and name, and the list's resourceVersion, which any write moves.
fn sample(served: &Served) -> (String, String, String) {
    let list = served.exchange(&request("GET", "/api/v1/pods?limit=1", "", ""));
    let list: Value = serde_json::from_slice(&list.body).unwrap();
    let item = &list["items"][0]["metadata"];
    (
        item["namespace"].as_str().unwrap().to_owned(),
        item["name"].as_str().unwrap().to_owned(),
        list["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_owned(),
    )
}

#[test]
fn every_bad_request_gets_kube_apiservers_status_and_changes_nothing() {
    let served = Served::start(&[]);
    let (ns, name, rv_before) = sample(&served);
    let pods = format!("/api/v1/namespaces/{ns}/pods");
    let item = format!("{pods}/{name}");
    let json = "application/json";
    let smp = "application/strategic-merge-patch+json";
    let mut table: Vec<(Vec<u8>, u16, &str)> = vec![
        // Reads: paths, resources, parameters.
        (request("GET", "/api/v1/widgets", "", ""), 404, "NotFound"),
        (request("GET", "/api/nothing/here", "", ""), 404, "NotFound"),
        (request("GET", &format!("{pods}/no-such-pod"), "", ""), 404, "NotFound"),
        (request("GET", "/api/v1/namespaces/nowhere", "", ""), 404, "NotFound"),
        (request("GET", "/api/v1/namespaces/%FF/pods", "", ""), 400, "BadRequest"),
        (request("GET", "/api/v1/namespaces/../pods", "", ""), 400, "BadRequest"),
        (request("GET", &format!("{pods}/."), "", ""), 400, "BadRequest"),
        (request("GET", &format!("{pods}/a%2Fb"), "", ""), 400, "BadRequest"),
        (request("GET", "/api/v1/pods?limit=ten", "", ""), 400, "BadRequest"),
        (request("GET", "/api/v1/pods?timeoutSeconds=-1", "", ""), 400, "BadRequest"),
        (request("GET", "/api/v1/pods?resourceVersion=abc&limit=5", "", ""), 400, "BadRequest"),
        // kube-apiserver's bare 500, without a reason (crosscheck's watch-rv-not-a-number).
        (request("GET", "/api/v1/pods?watch=yes&resourceVersion=x", "", ""), 500, ""),
        (request("GET", "/api/v1/pods?labelSelector=app%20in%20web", "", ""), 400, "BadRequest"),
        (request("GET", "/api/v1/pods?fieldSelector=spec.containers%3Dx", "", ""), 400, "BadRequest"),
        (request("GET", "/api/v1/pods?continue=garbage", "", ""), 400, "BadRequest"),
        (request("GET", "/api/v1/pods?resourceVersion=0&resourceVersionMatch=Exact", "", ""), 422, "Invalid"),
        (request("GET", "/api/v1/pods?resourceVersionMatch=NotOlderThan", "", ""), 422, "Invalid"),
        (request("GET", "/api/v1/pods?watch=1&sendInitialEvents=true", "", ""), 422, "Invalid"),
        // Methods no route takes.
        (request("PUT", "/api/v1/pods", json, "{}"), 405, "MethodNotAllowed"),
        (request("DELETE", "/version", "", ""), 405, "MethodNotAllowed"),
        (request("POST", "/api", json, "{}"), 405, "MethodNotAllowed"),
        (request("PATCH", "/api/v1", json, "{}"), 405, "MethodNotAllowed"),
        // Creates.
        (request("POST", &pods, "text/plain", &pod("plain", json!({}))), 415, "UnsupportedMediaType"),
        (request("POST", &pods, "application/xml", "<Pod/>"), 415, "UnsupportedMediaType"),
        (request("POST", &pods, json, "{not json"), 400, "BadRequest"),
        (request("POST", &pods, json, &pod("x", json!({"kind": "Secret"}))), 400, "BadRequest"),
        (request("POST", &pods, json, &pod("x", json!({"spec": {"containers": 3}}))), 400, "BadRequest"),
        (request("POST", &pods, json, &pod("Web_1", json!({}))), 422, "Invalid"),
        (request("POST", &pods, json, &pod("x", json!({"spec": {"containers": []}}))), 422, "Invalid"),
        (
            request("POST", &pods, json, &pod("x", json!({"metadata": {"annotations": {"a": "x".repeat(300_000)}}}))),
            422,
            "Invalid",
        ),
        (request("POST", &format!("{pods}?dryRun=Some"), json, &pod("x", json!({}))), 422, "Invalid"),
        (request("POST", "/api/v1/namespaces/nowhere/pods", json, &pod("x", json!({}))), 404, "NotFound"),
        (request("POST", &pods, json, &pod(&name, json!({}))), 409, "AlreadyExists"),
        (
            format!(
                "POST {pods} HTTP/1.1\r\nHost: test\r\nConnection: close\r\nContent-Type: {json}\r\n\
                 Transfer-Encoding: chunked\r\n\r\nZZ\r\n{{}}\r\n0\r\n\r\n"
            )
            .into_bytes(),
            400,
            "BadRequest",
        ),
        // Replaces.
        (
            request("PUT", &item, json, &pod(&name, json!({"metadata": {"resourceVersion": "123456789"}}))),
            409,
            "Conflict",
        ),
        (request("PUT", &item, json, &pod("other", json!({}))), 400, "BadRequest"),
        (request("PUT", &format!("{pods}/gone"), json, &pod("gone", json!({}))), 404, "NotFound"),
        (request("PUT", &item, "text/plain", &pod(&name, json!({}))), 415, "UnsupportedMediaType"),
        // Patches.
        (request("PATCH", &item, json, "{}"), 415, "UnsupportedMediaType"),
        // An apply names its field manager.
        (request("PATCH", &item, "application/apply-patch+yaml", "{}"), 422, "Invalid"),
        (request("PATCH", &item, smp, "[1]"), 400, "BadRequest"),
        (
            request("PATCH", &item, "application/json-patch+json", r#"[{"op":"remove","path":"/x"}]"#),
            422,
            "Invalid",
        ),
        (request("PATCH", &item, smp, r#"{"metadata":{"labels":{"$patch":"explode"}}}"#), 400, "BadRequest"),
        (request("PATCH", &item, smp, r#"{"spec":{"$retainKeys":5}}"#), 400, "BadRequest"),
        (request("PATCH", &item, smp, r#"{"spec":{"containers":[{"image":"nameless:1"}]}}"#), 400, "BadRequest"),
        (request("PATCH", &item, smp, r#"{"metadata":{"name":"renamed"}}"#), 400, "BadRequest"),
        (request("PATCH", &item, smp, r#"{"metadata":{"uid":"other"}}"#), 409, "Conflict"),
        (
            request("PATCH", &item, smp, &json!({"metadata": {"annotations": {"a": "x".repeat(270_000)}}}).to_string()),
            422,
            "Invalid",
        ),
        // Deletes.
        (request("DELETE", &format!("{pods}/no-such-pod"), "", ""), 404, "NotFound"),
        (request("DELETE", &format!("{item}?propagationPolicy=Bogus"), "", ""), 422, "Invalid"),
        (
            request("DELETE", &item, json, r#"{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Bogus"}"#),
            422,
            "Invalid",
        ),
        (request("DELETE", &format!("{pods}?propagationPolicy=Never"), "", ""), 422, "Invalid"),
        (request("DELETE", &item, json, r#"{"preconditions":{"uid":"other"}}"#), 409, "Conflict"),
        (request("DELETE", &item, json, "[]"), 400, "BadRequest"),
    ];
    assert!(table.len() >= 40, "{} cases", table.len());
    for (raw, code, reason) in table.drain(..) {
        let first = String::from_utf8_lossy(&raw[..raw.len().min(100)])
            .lines()
            .next()
            .unwrap()
            .to_owned();
        let response = served.exchange(&raw);
        assert_eq!(response.content_type, "application/json", "{first}");
        let status: Value = serde_json::from_slice(&response.body)
            .unwrap_or_else(|e| panic!("{first}: not JSON ({e}): {response:?}"));
        assert_eq!(
            (response.code, status["reason"].as_str().unwrap_or_default()),
            (code, reason),
            "{first}: {status}"
        );
        assert_eq!(status["kind"], "Status", "{first}");
        assert_eq!(status["status"], "Failure", "{first}");
        assert_eq!(status["code"], code, "{first}");
        let message = status["message"].as_str().unwrap();
        assert!(
            !message.is_empty() && !message.contains("$__"),
            "{first}: {message}"
        );
    }
    // Outside the groups it serves, kube-apiserver's answer is Go's, not a Status.
    let outside = served.exchange(&request("GET", "/nothing/here", "", ""));
    assert_eq!(
        (
            outside.code,
            outside.content_type.as_str(),
            &outside.body[..]
        ),
        (
            404,
            "text/plain; charset=utf-8",
            &b"404 page not found\n"[..]
        )
    );
    let (_, _, rv_after) = sample(&served);
    assert_eq!(rv_before, rv_after, "a refused request wrote something");
}

/// A request whose headers never end, a watch (over HTTP and over WebSocket) and an unread
/// LIST hold their connections; SIGTERM still ends `serve` with 0 within the grace period plus a second.
#[test]
fn sigterm_ends_serve_within_the_grace_period_whatever_the_clients_do() {
    let mut served = Served::start(&["--shutdown-grace", "2s"]);
    let mut half_sent = served.connect();
    half_sent
        .write_all(b"GET /api/v1/pods HTTP/1.1\r\nHost: test\r\n")
        .unwrap();
    let mut short_body = served.connect();
    short_body
        .write_all(b"POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: test\r\nContent-Length: 100\r\n\r\n{")
        .unwrap();
    let mut watch = served.connect();
    watch
        .write_all(b"GET /api/v1/pods?watch=1 HTTP/1.1\r\nHost: test\r\n\r\n")
        .unwrap();
    let mut unread = served.connect();
    unread
        .write_all(b"GET /api/v1/pods HTTP/1.1\r\nHost: test\r\n\r\n")
        .unwrap();
    let mut websocket = served.connect();
    websocket
        .write_all(
            b"GET /api/v1/pods?watch=1 HTTP/1.1\r\nHost: test\r\nConnection: Upgrade\r\n\
              Upgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
              Sec-WebSocket-Version: 13\r\nOrigin: http://localhost\r\n\r\n",
        )
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let sent = Instant::now();
    served.signal("TERM");
    let (code, after) = served
        .exit_within(sent, Duration::from_secs(3))
        .expect("serve still running 3 s after SIGTERM with a 2 s grace period");
    assert_eq!(code, 0, "exited after {after:?}");
}

#[test]
fn a_second_signal_exits_at_once() {
    let mut served = Served::start(&["--shutdown-grace", "60s"]);
    let mut half_sent = served.connect();
    half_sent
        .write_all(b"GET /api/v1/pods HTTP/1.1\r\nHost: test\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    served.signal("INT");
    served.wait_for_stderr("waiting up to 1m");
    let sent = Instant::now();
    served.signal("INT");
    let (code, _) = served
        .exit_within(sent, Duration::from_secs(2))
        .expect("a second signal ends serve");
    assert_eq!(code, 128 + 2);
}

#[test]
fn stalled_headers_are_dropped_and_stalled_bodies_time_out() {
    let served = Served::start(&["--read-header-timeout", "1s", "--request-timeout", "1s"]);
    // Headers never finished: the connection is closed after the header timeout.
    let mut half_sent = served.connect();
    half_sent
        .write_all(b"GET /api/v1/pods HTTP/1.1\r\nHost: test\r\n")
        .unwrap();
    let started = Instant::now();
    let mut rest = Vec::new();
    if let Err(e) = half_sent.read_to_end(&mut rest) {
        // A timeout of our own read means the server never closed the connection.
        assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    // A body shorter than its Content-Length: 504 Timeout when the request timeout ends.
    let mut short = served.connect();
    short
        .write_all(b"POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
        .unwrap();
    let response = Response::parse(&read_to_close(&mut short));
    let status: Value = serde_json::from_slice(&response.body).unwrap();
    assert_eq!((response.code, &status["reason"]), (504, &json!("Timeout")));
    // And the server still answers.
    let version = served.exchange(&request("GET", "/version", "", ""));
    assert_eq!(version.code, 200);
}

/// What hyper would refuse with an empty body is a `Status` here: a request line over
/// the `http` crate's 64 KiB URI limit (414), a head over 1 MiB (431); a head under 1 MiB
/// with a URI under the limit is served.
#[test]
fn a_request_line_or_head_too_long_gets_a_status_and_large_heads_are_served() {
    let served = Served::start(&[]);
    let long_query = format!("/api/v1/pods?labelSelector={}", "a".repeat(70_000));
    let response = served.exchange(&request("GET", &long_query, "", ""));
    assert_eq!(response.code, 414);
    assert_eq!(response.content_type, "application/json");
    let status: Value = serde_json::from_slice(&response.body).unwrap();
    assert_eq!(
        (status["kind"].as_str(), status["code"].as_u64()),
        (Some("Status"), Some(414))
    );
    // 600 KiB of headers (hyper's default stops at about 400 KiB): served.
    let mut big = request("GET", "/version", "", "");
    let filler = format!("X-Filler: {}\r\n", "f".repeat(600 * 1024));
    let at = big.windows(2).position(|w| w == b"\r\n").unwrap() + 2;
    big.splice(at..at, filler.into_bytes());
    assert_eq!(served.exchange(&big).code, 200);
    // Over 1 MiB of headers: 431 with a Status; the client may still be writing.
    let mut huge = served.connect();
    let head = format!(
        "GET /version HTTP/1.1\r\nHost: test\r\nX-Filler: {}\r\n\r\n",
        "f".repeat(1_200_000)
    );
    let mut writer = huge.try_clone().unwrap();
    let sending = std::thread::spawn(move || {
        let _ = writer.write_all(head.as_bytes());
    });
    let response = Response::parse(&read_to_close(&mut huge));
    let _ = sending.join();
    assert_eq!(response.code, 431);
    let status: Value = serde_json::from_slice(&response.body).unwrap();
    assert_eq!(status["kind"], "Status");
    // And the server still answers.
    assert_eq!(
        served.exchange(&request("GET", "/version", "", "")).code,
        200
    );
}

/// A watch asked over WebSocket, as fabric8's informers and Headlamp ask one: a
/// handshake with an Origin, then `path`'s events as the messages until the close.
fn websocket_watch(served: &Served, path: &str, accept: &str) -> (Vec<Message>, CloseCode) {
    use tungstenite::client::IntoClientRequest;
    let mut request = format!("ws://{}{path}", served.addr)
        .into_client_request()
        .unwrap();
    let headers = request.headers_mut();
    headers.insert("origin", "http://localhost".parse().unwrap());
    headers.insert("accept", accept.parse().unwrap());
    let (mut socket, response) = tungstenite::client(request, served.connect()).unwrap();
    assert_eq!(response.status(), 101);
    let mut messages = Vec::new();
    loop {
        match socket.read().unwrap() {
            Message::Close(frame) => return (messages, frame.unwrap().code),
            message => messages.push(message),
        }
    }
}

/// The same watch over HTTP: its body, every event in it.
fn http_watch(served: &Served, path: &str, accept: &str) -> Vec<u8> {
    let mut stream = served.connect();
    let head = format!(
        "GET {path} HTTP/1.1\r\nHost: test\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    Response::parse(&read_to_close(&mut stream)).body
}

/// kube-apiserver's WebSocket watch (its `WatchServer.HandleWS`): each JSON event a text
/// message, line and newline, each protobuf event a binary message without its length,
/// and a normal close when the watch's time is up.
#[test]
fn a_watch_over_websocket_is_the_http_watchs_events_one_message_each() {
    let served = Served::start(&[]);
    let path = "/api/v1/pods?watch=1&timeoutSeconds=1";
    let json = "application/json";
    let (messages, close) = websocket_watch(&served, path, json);
    assert_eq!(close, CloseCode::Normal);
    let body = http_watch(&served, path, json);
    let lines: Vec<&[u8]> = body.split_inclusive(|&b| b == b'\n').collect();
    assert!(lines.len() > 10, "{} events", lines.len());
    assert_eq!(payloads(&messages, true), lines);

    let protobuf = "application/vnd.kubernetes.protobuf";
    let (messages, close) = websocket_watch(&served, path, protobuf);
    assert_eq!(close, CloseCode::Normal);
    let body = http_watch(&served, path, protobuf);
    let mut frames = Vec::new();
    let mut rest = body.as_slice();
    while let Some((length, after)) = rest.split_first_chunk::<4>() {
        let (frame, next) = after.split_at(u32::from_be_bytes(*length) as usize);
        frames.push(frame);
        rest = next;
    }
    assert_eq!(payloads(&messages, false), frames);
    assert_eq!(frames.len(), lines.len());
}

/// Each message's payload, every message a text one (`text`) or every one binary.
fn payloads<'a>(messages: &'a [Message], text: bool) -> Vec<&'a [u8]> {
    let payload = |m: &'a Message| match m {
        Message::Text(t) if text => t.as_bytes(),
        Message::Binary(b) if !text => b.as_ref(),
        other => panic!(
            "expected only {} messages: {other:?}",
            ["binary", "text"][usize::from(text)]
        ),
    };
    messages.iter().map(payload).collect()
}

/// The handshakes golang.org/x/net/websocket refuses, refused as there (checked against
/// kube-apiserver v1.37.2): no Origin 403, a wrong version 400 naming the one it speaks,
/// two subprotocols 400; a watch that is itself invalid gets its Status over HTTP first.
#[test]
fn websocket_handshakes_kube_apiserver_refuses_are_refused() {
    let served = Served::start(&[]);
    let ask = |extra: &str, target: &str| {
        let head = format!(
            "GET {target} HTTP/1.1\r\nHost: test\r\nConnection: Upgrade, close\r\nUpgrade: websocket\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n{extra}\r\n"
        );
        served.exchange(head.as_bytes())
    };
    let watch = "/api/v1/pods?watch=1";
    let origin = "Origin: http://localhost\r\nSec-WebSocket-Version: 13\r\n";
    let refused = ask("Sec-WebSocket-Version: 13\r\n", watch);
    assert_eq!((refused.code, refused.body.as_slice()), (403, &b""[..]));
    let refused = ask(
        "Origin: http://localhost\r\nSec-WebSocket-Version: 12\r\n",
        watch,
    );
    assert_eq!(refused.code, 400);
    assert_eq!(refused.body, b"missing or bad WebSocket Version");
    let two = format!("{origin}Sec-WebSocket-Protocol: a, b\r\n");
    assert_eq!(ask(&two, watch).code, 400);
    let invalid = ask(origin, "/api/v1/pods?watch=1&resourceVersion=x");
    assert_eq!(invalid.code, 500);
    assert_eq!(invalid.content_type, "application/json");
}
