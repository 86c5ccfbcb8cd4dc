//! How close a run comes to the cost of decoding (`cargo bench --bench throughput`).
//!
//! An informer cannot take in pods faster than it decodes them, so decoding is the limit a
//! run is measured against. Side by side in one run, on the same pods (default shape, pages
//! of 500, the counting allocator in every mode):
//!
//! - decode only: the LIST pages of the built-in apiserver, fetched beforehand, decoded into
//!   `ObjectList<Pod>` as the informer's client does, every pod kept (as a store keeps
//!   them: the limit pays for the memory it fills too);
//! - list end to end: the list phase of a scenario (the built-in informer, per-item copy),
//!   server, HTTP and harness included;
//! - watch end to end: an update phase that modifies every pod once, one MODIFIED event per
//!   pod, from the write on the server to the informer's store.
//!
//! Each mode runs in a fresh process of this benchmark (none inherits another's heap), the
//! modes alternate, and each one's figure is its fastest round, the median beside it:
//! noise on a shared machine only adds time. Wall-clock figures: advisory, not gated.

use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::Instant;

use apiserver::ApiServer;
use informer_mem::runner::Message;
use informer_mem::runner::child::run;
use k8s_openapi::api::core::v1::Pod;
use kube::core::ObjectList;
use measure::CountingJemalloc;
use scenario::{ObjectSpec, Scenario};

mod common;

#[global_allocator]
static GLOBAL: CountingJemalloc = CountingJemalloc;

const MODE: &str = "INFORMER_MEM_THROUGHPUT_MODE";
/// Pods per run instead of the default.
const PODS: &str = "INFORMER_MEM_THROUGHPUT_PODS";
const DEFAULT_PODS: u64 = 20_000;
const PAGE: u64 = 500;
const ROUNDS: usize = 3;

fn main() -> ExitCode {
    let pods = std::env::var(PODS)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(DEFAULT_PODS);
    match std::env::var(MODE).as_deref() {
        Ok("decode") => decode_only(pods),
        Ok("scenario") => scenario(pods),
        _ => compare(pods),
    }
}

/// In a child: fetches every LIST page, then decodes them all, keeping every pod; prints
/// the decoding's milliseconds.
fn decode_only(pods: u64) -> ExitCode {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let pages = runtime.block_on(async {
        let server = ApiServer::new(ObjectSpec::pods(pods));
        let mut pages = Vec::new();
        let mut uri = format!("/api/v1/pods?limit={PAGE}");
        loop {
            let response = common::request(&server, "GET", &uri, "", String::new()).await;
            let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .expect("the body streams");
            let page: serde_json::Value = serde_json::from_slice(&body).expect("a list");
            let token = page["metadata"]["continue"].as_str().map(str::to_owned);
            pages.push(body);
            match token {
                Some(token) if !token.is_empty() => {
                    uri = format!("/api/v1/pods?limit={PAGE}&continue={token}");
                }
                _ => break pages,
            }
        }
    });
    let started = Instant::now();
    let mut kept: Vec<Pod> = Vec::with_capacity(pods as usize);
    for page in &pages {
        let list: ObjectList<Pod> = serde_json::from_slice(page).expect("a pod list");
        kept.extend(list.items);
    }
    let ms = started.elapsed().as_secs_f64() * 1e3;
    assert_eq!(kept.len() as u64, pods, "every pod decoded");
    println!("{ms}");
    ExitCode::SUCCESS
}

/// In a child: runs the list and update phases; prints each one's milliseconds.
fn scenario(pods: u64) -> ExitCode {
    let text = format!(
        r#"
name = "throughput"
[objects]
kind = "Pod"
count = {pods}
[[variant]]
name = "client-go (per-item copy)"
store = "per-item-copy"
page_size = {PAGE}
[[phase]]
kind = "list"
[[phase]]
kind = "update"
fraction = 1.0
"#
    );
    let scenario =
        Scenario::parse(Path::new("throughput.toml"), &text).expect("the scenario is valid");
    let mut durations = Vec::new();
    run(&scenario, 0, |message| {
        if let Message::Phase(phase) = message {
            durations.push(phase.measurement.duration_ms);
        }
        Ok(())
    })
    .expect("the phases run");
    let [list, update] = durations[..] else {
        panic!("two phases ran: {durations:?}");
    };
    println!("{list} {update}");
    ExitCode::SUCCESS
}

/// In the parent: alternates the modes and prints pods per second and the ratios.
fn compare(pods: u64) -> ExitCode {
    let exe = std::env::current_exe().expect("the benchmark locates itself");
    let child = |mode: &str| -> Vec<f64> {
        let output = Command::new(&exe)
            .env(MODE, mode)
            .env(PODS, pods.to_string())
            .output()
            .expect("the benchmark runs itself");
        assert!(output.status.success(), "{mode}: {output:?}");
        String::from_utf8_lossy(&output.stdout)
            .split_whitespace()
            .map(|f| f.parse().expect("milliseconds"))
            .collect()
    };
    // Per measure: milliseconds per round.
    let (mut decode, mut list, mut watch) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        decode.push(child("decode")[0]);
        let phases = child("scenario");
        list.push(phases[0]);
        watch.push(phases[1]);
    }
    let per_second = |ms: &mut Vec<f64>| {
        ms.sort_by(f64::total_cmp);
        let rate = |ms: f64| pods as f64 / ms * 1e3;
        (rate(ms[0]), rate(ms[ms.len() / 2]))
    };
    let limit = per_second(&mut decode);
    println!(
        "{pods} default pods, pages of {PAGE}, {ROUNDS} rounds, modes alternating; \
         fastest (median), advisory:"
    );
    println!("                              per second         of the limit");
    for (name, (fastest, median)) in [
        ("decode only (the limit)", limit),
        ("list, end to end", per_second(&mut list)),
        ("watch events, end to end", per_second(&mut watch)),
    ] {
        println!(
            "  {name:<26}{fastest:8.0} ({median:6.0})     {:5.2} ({:4.2})",
            fastest / limit.0,
            median / limit.1
        );
    }
    ExitCode::SUCCESS
}
