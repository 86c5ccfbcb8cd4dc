//! Write throughput of the built-in apiserver with many watchers
//! (`cargo bench --bench watchers`): merge patches of one pod while N watches of all pods
//! stay open, each draining its stream. A write counts when every watcher has received
//! its event, so the figure is end-to-end delivery, as a client of `serve` sees it.
//!
//! Wall-clock figures of this machine: advisory. The run fails if 200 watchers bring the
//! rate under [`TARGET_WRITES_PER_SECOND`].

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use apiserver::ApiServer;
use futures::StreamExt;
use measure::CountingJemalloc;
use scenario::ObjectSpec;

mod common;

// The allocator `serve` runs on.
#[global_allocator]
static GLOBAL: CountingJemalloc = CountingJemalloc;

/// Writes per second that 200 watchers must still allow (`serve`'s target, with a wide
/// margin under what a 2-core machine measures).
const TARGET_WRITES_PER_SECOND: f64 = 400.0;
const WRITES: usize = 1_000;

/// A merge patch (or any body-less request) to `server`.
async fn request(
    server: &ApiServer,
    method: &str,
    uri: &str,
    body: String,
) -> axum::response::Response {
    common::request(server, method, uri, "application/merge-patch+json", body).await
}

/// Writes per second with `watchers` open watches; `shared`: one encoding per event for
/// all of them, as `serve` does.
async fn writes_per_second(watchers: usize, shared: bool) -> f64 {
    let server = ApiServer::new(ObjectSpec::pods(100));
    if shared {
        server.share_encodings(apiserver::SHARED_ENCODING_BYTES);
    }
    let uri = common::first_pod_uri(&server).await;
    let head = server.resource_version();
    // Every watcher counts the events it has read.
    let received = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..watchers {
        let response = request(
            &server,
            "GET",
            &format!("/api/v1/pods?watch=1&resourceVersion={head}&timeoutSeconds=600"),
            String::new(),
        )
        .await;
        let received = received.clone();
        tasks.push(tokio::spawn(async move {
            let mut body = response.into_body().into_data_stream();
            // Each frame is one event line; the bytes are not scanned, so that the
            // figure is the server's work, not this reader's.
            while let Some(Ok(_line)) = body.next().await {
                received.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    let started = Instant::now();
    for i in 0..WRITES {
        let patch = format!(r#"{{"metadata":{{"labels":{{"revision":"{i}"}}}}}}"#);
        let response = request(&server, "PATCH", &uri, patch).await;
        assert!(response.status().is_success(), "{}", response.status());
    }
    let expected = (WRITES * watchers) as u64;
    while received.load(Ordering::Relaxed) < expected {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let seconds = started.elapsed().as_secs_f64();
    server.disconnect_watchers();
    for task in tasks {
        let _ = task.await;
    }
    WRITES as f64 / seconds
}

fn main() -> ExitCode {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    println!("merge patches of one pod, each delivered to every watcher (advisory):");
    println!("  watchers   each encodes   one encoding shared (serve)");
    let mut with_200 = 0.0;
    for watchers in [0, 1, 20, 200] {
        let alone = runtime.block_on(writes_per_second(watchers, false));
        let shared = runtime.block_on(writes_per_second(watchers, true));
        println!("  {watchers:>8}   {alone:>8.0} w/s   {shared:>8.0} w/s");
        if watchers == 200 {
            with_200 = shared;
        }
    }
    if with_200 < TARGET_WRITES_PER_SECOND {
        eprintln!(
            "FAIL: {with_200:.0} writes/s with 200 watchers (target {TARGET_WRITES_PER_SECOND})"
        );
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
