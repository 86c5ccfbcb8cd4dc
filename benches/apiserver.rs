//! Benchmarks of the built-in apiserver (`cargo bench --bench apiserver`):
//!
//! - memory per object at 1,000,000 objects, exact (counting allocator); the target is at
//!   most 100 bytes, and the run fails above it;
//! - LIST encoding throughput: one unpaged LIST of 20,000 pods, streamed and drained;
//! - watch event throughput: 20,000 updates delivered to one watch.
//!
//! Throughputs are wall-clock figures of this machine: advisory, not gated.

use std::process::ExitCode;
use std::time::Instant;

use axum::body::Body;
use informer_mem::apiserver::selector::LabelSelector;
use informer_mem::apiserver::{ApiServer, http::router};
use informer_mem::measure::{CountingJemalloc, alloc};
use informer_mem::scenario::{Amount, ObjectSpec};
use tower::ServiceExt;

#[global_allocator]
static GLOBAL: CountingJemalloc = CountingJemalloc;

const TARGET_BYTES_PER_OBJECT: f64 = 100.0;

async fn get(server: &ApiServer, uri: &str) -> usize {
    let request = axum::http::Request::builder()
        .uri(uri)
        .body(Body::empty())
        .expect("a valid request");
    let response = router(server.clone())
        .oneshot(request)
        .await
        .expect("infallible");
    axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("the body streams")
        .len()
}

/// Prints a throughput figure, labelled advisory.
fn print_rate(title: &str, unit: &str, count: f64, bytes: usize, seconds: f64) {
    let mib = bytes as f64 / 1048576.0;
    println!("{title} (advisory):");
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

    let (objects, list_bytes, list_seconds) = runtime.block_on(async {
        let server = ApiServer::new(ObjectSpec::pods(20_000));
        let started = Instant::now();
        let bytes = get(&server, "/api/v1/pods").await;
        (20_000.0, bytes, started.elapsed().as_secs_f64())
    });
    print_rate(
        "LIST encoding, 20,000 pods in one response",
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
        let bytes = get(
            &server,
            &format!("/api/v1/pods?watch=1&resourceVersion={head}&timeoutSeconds=60"),
        )
        .await;
        (20_000.0, bytes, started.elapsed().as_secs_f64())
    });
    print_rate(
        "watch events, 20,000 MODIFIED on one watch",
        "events",
        events,
        watch_bytes,
        watch_seconds,
    );

    if at_rest > TARGET_BYTES_PER_OBJECT {
        eprintln!(
            "FAIL: {at_rest:.1} bytes per object exceeds the {TARGET_BYTES_PER_OBJECT} byte target"
        );
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
