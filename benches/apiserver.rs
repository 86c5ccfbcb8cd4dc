//! Benchmarks of the built-in apiserver (`cargo bench --bench apiserver`):
//!
//! - memory per object at 1,000,000 objects, exact (counting allocator); the target is at
//!   most 100 bytes, and the run fails above it;
//! - LIST encoding throughput: one unpaged LIST of 20,000 pods, streamed and drained, in
//!   JSON and in protobuf;
//! - watch event throughput: 20,000 updates delivered to one watch, in JSON and in protobuf;
//! - written bodies: 10,000 merge patches of one pod with a history of 1,000 events; the
//!   server's bytes per written version must stay at most 1.5x the pod's JSON and its RSS
//!   growth after the first write under 20 MB, or the run fails (the first write's, once,
//!   is printed beside it).
//!
//! Throughputs are wall-clock figures of this machine: advisory, not gated.

use std::process::ExitCode;
use std::time::Instant;

use apiserver::ApiServer;
use k8s::LabelSelector;
use measure::{CountingJemalloc, alloc};
use scenario::{Amount, ObjectSpec};

mod common;

#[global_allocator]
static GLOBAL: CountingJemalloc = CountingJemalloc;

const TARGET_BYTES_PER_OBJECT: f64 = 100.0;

/// Patches in the written-bodies benchmark, and the history window they pass through.
const PATCHES: usize = 10_000;
const PATCH_HISTORY: usize = 1_000;
/// Most server bytes per written version, as a multiple of the object's JSON size.
const TARGET_VERSION_OVER_JSON: f64 = 1.5;
/// Most RSS growth over the patches.
const TARGET_PATCH_RSS_GROWTH: f64 = 20e6;

/// The media types a LIST and a watch are measured in: what kubectl, the Python and Node.js
/// clients and client-go before v0.35 ask for, and what newer client-go asks for.
const WIRES: [(&str, &str); 2] = [
    ("JSON", "application/json"),
    ("protobuf", "application/vnd.kubernetes.protobuf"),
];

async fn get(server: &ApiServer, uri: &str, accept: &str) -> usize {
    let headers = [("accept", accept)];
    let response = common::request_with(server, "GET", uri, &headers, String::new()).await;
    axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("the body streams")
        .len()
}

/// Sends `body` to `uri` with `method` and returns the response body.
async fn send(
    server: &ApiServer,
    method: &str,
    uri: &str,
    content_type: &str,
    body: String,
) -> Vec<u8> {
    let response = common::request(server, method, uri, content_type, body).await;
    assert!(
        response.status().is_success(),
        "{method} {uri}: {}",
        response.status()
    );
    axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("the body streams")
        .to_vec()
}

/// What 10,000 merge patches of one pod cost the server with a history of 1,000 events:
/// exact bytes per version kept, and RSS growth (advisory, but gated generously).
struct Patched {
    json_bytes: usize,
    bytes_per_version: f64,
    /// RSS growth of the first write, which builds the tables every write reads once
    /// (Kubernetes' messages and Go's field rules, for the zero values a write fills in).
    first_write_rss: f64,
    rss_growth: f64,
    seconds: f64,
}

async fn patch_one_pod() -> Patched {
    let server = ApiServer::new(ObjectSpec::pods(1_000));
    server.set_history_limit(Some(PATCH_HISTORY as u64));
    let uri = common::first_pod_uri(&server).await;
    let merge = "application/merge-patch+json";
    let patch = |i: usize| format!(r#"{{"metadata":{{"labels":{{"revision":"{i}"}}}}}}"#);
    let rss = || measure::rss::read().map_or(0.0, |r| r.current.0 as f64);
    let rss_before_first = rss();
    // The same label as the first patch below: the first write changes nothing but the
    // tables it builds.
    send(&server, "PATCH", &uri, merge, patch(0)).await;
    let rss_before = rss();
    let started = Instant::now();
    // The first patches fill the history window; after them the live bytes must stay put.
    for i in 0..PATCH_HISTORY {
        send(&server, "PATCH", &uri, merge, patch(i)).await;
    }
    let live_before = alloc::counters().live_bytes;
    for i in PATCH_HISTORY..PATCHES {
        send(&server, "PATCH", &uri, merge, patch(i)).await;
    }
    let seconds = started.elapsed().as_secs_f64();
    let rss_growth = rss() - rss_before;
    let steady = alloc::counters().live_bytes as i64 - live_before as i64;
    let json_bytes = send(&server, "GET", &uri, "", String::new()).await.len();
    // The window holds PATCH_HISTORY versions, each with its own body; measure what they
    // hold by dropping them: a compaction forgets the history and its bodies.
    let with_window = alloc::counters().live_bytes;
    server.compact();
    let window = with_window as f64 - alloc::counters().live_bytes as f64;
    drop(server);
    assert!(
        steady.unsigned_abs() < 1 << 20,
        "live bytes moved by {steady} in the steady state"
    );
    Patched {
        json_bytes,
        bytes_per_version: window / PATCH_HISTORY as f64,
        first_write_rss: rss_before - rss_before_first,
        rss_growth,
        seconds,
    }
}

/// Prints a throughput figure, labelled advisory.
fn print_rate(title: &str, unit: &str, count: f64, bytes: usize, seconds: f64) {
    let mib = bytes as f64 / 1048576.0;
    println!("{title} (advisory):");
    if bytes == 0 {
        println!("  {:>10.0} {unit}/s  ({seconds:.2} s)", count / seconds);
        return;
    }
    println!(
        "  {:>10.0} {unit}/s  {:>7.1} MiB/s  ({seconds:.2} s, {mib:.1} MiB)",
        count / seconds,
        mib / seconds
    );
}

fn main() -> ExitCode {
    // `cargo bench` passes `--bench`; this harness takes no options.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime");

    // First, while the process's RSS is not yet inflated by the larger sections below.
    let patched = runtime.block_on(patch_one_pod());

    let before = alloc::counters().live_bytes;
    let server = ApiServer::new(ObjectSpec::pods(1_000_000));
    let at_rest = (alloc::counters().live_bytes - before) as f64 / 1e6;
    server.delete(Amount::Count(100_000), &LabelSelector::default(), 1);
    server.update(Amount::Count(100_000), &LabelSelector::default(), 2);
    let with_history = (alloc::counters().live_bytes - before) as f64 / 1e6;
    drop(server);
    println!("server memory per object, 1,000,000 objects (exact):");
    println!("  at rest:                               {at_rest:>8.1} B");
    println!("  after 200,000 events in the history:   {with_history:>8.1} B");

    for (wire, accept) in WIRES {
        let (objects, list_bytes, list_seconds) = runtime.block_on(async {
            let server = ApiServer::new(ObjectSpec::pods(20_000));
            let started = Instant::now();
            let bytes = get(&server, "/api/v1/pods", accept).await;
            (20_000.0, bytes, started.elapsed().as_secs_f64())
        });
        print_rate(
            &format!("LIST encoding, 20,000 pods in one response, {wire}"),
            "objects",
            objects,
            list_bytes,
            list_seconds,
        );

        let (events, watch_bytes, watch_seconds) = runtime.block_on(async {
            let server = ApiServer::new(ObjectSpec::pods(20_000));
            let head = server.resource_version();
            server.update(Amount::Count(20_000), &LabelSelector::default(), 3);
            let started = Instant::now();
            // The stream ends at its timeout, which paused time reaches once it is drained.
            let uri = format!("/api/v1/pods?watch=1&resourceVersion={head}&timeoutSeconds=60");
            let bytes = get(&server, &uri, accept).await;
            (20_000.0, bytes, started.elapsed().as_secs_f64())
        });
        print_rate(
            &format!("watch events, 20,000 MODIFIED on one watch, {wire}"),
            "events",
            events,
            watch_bytes,
            watch_seconds,
        );
    }

    let over_json = patched.bytes_per_version / patched.json_bytes as f64;
    println!(
        "written bodies, {PATCHES} merge patches of one pod, history of {PATCH_HISTORY} events:"
    );
    println!(
        "  server bytes per written version (exact): {:>8.0} B  ({over_json:.2}x the pod's {} B of JSON)",
        patched.bytes_per_version, patched.json_bytes
    );
    println!(
        "  RSS growth of the first write, once (advisory):  {:>8.1} MB",
        patched.first_write_rss / 1e6
    );
    println!(
        "  RSS growth over the {PATCHES} patches after it (advisory): {:>8.1} MB",
        patched.rss_growth / 1e6
    );
    print_rate(
        "merge patches of one pod",
        "patches",
        PATCHES as f64,
        0,
        patched.seconds,
    );

    let mut failed = false;
    if over_json > TARGET_VERSION_OVER_JSON {
        eprintln!(
            "FAIL: a written version costs {over_json:.2}x its JSON (target {TARGET_VERSION_OVER_JSON}x)"
        );
        failed = true;
    }
    if patched.rss_growth >= TARGET_PATCH_RSS_GROWTH {
        eprintln!(
            "FAIL: RSS grew {:.1} MB over the patches (target < {:.0} MB)",
            patched.rss_growth / 1e6,
            TARGET_PATCH_RSS_GROWTH / 1e6
        );
        failed = true;
    }
    if failed {
        return ExitCode::FAILURE;
    }
    if at_rest > TARGET_BYTES_PER_OBJECT {
        eprintln!(
            "FAIL: {at_rest:.1} bytes per object exceeds the {TARGET_BYTES_PER_OBJECT} byte target"
        );
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
