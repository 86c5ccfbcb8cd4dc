//! What counting and attribution cost (`cargo bench --bench overhead`): the list phase of
//! scenarios/slice-retention.toml (10,000 pods, the per-item-copy variant), under the
//! counting allocator and under plain jemalloc, side by side in one run.
//!
//! Each measurement is a fresh process of this benchmark (so neither mode inherits the
//! other's heap), the modes alternate, and the figure per mode is the median of its
//! rounds. The phase's duration is wall-clock time: advisory, not gated.

use std::path::Path;
use std::process::{Command, ExitCode};

use informer_mem::measure::{CountingJemalloc, alloc};
use informer_mem::runner::variant::{Message, run};
use informer_mem::scenario::Scenario;

#[global_allocator]
static GLOBAL: CountingJemalloc = CountingJemalloc;

const MODE: &str = "INFORMER_MEM_OVERHEAD_MODE";
const ROUNDS: usize = 3;

fn main() -> ExitCode {
    match std::env::var(MODE) {
        Ok(mode) => measure(mode == "bare"),
        Err(_) => compare(),
    }
}

/// In a child: runs the list phase once and prints its duration in milliseconds.
fn measure(bare: bool) -> ExitCode {
    let mut scenario = Scenario::load(Path::new("scenarios/slice-retention.toml"))
        .expect("the shipped scenario loads");
    scenario.phases.truncate(1);
    let variant = scenario
        .variants
        .iter()
        .position(|v| v.name.contains("per-item"))
        .expect("slice-retention has a per-item-copy variant");
    alloc::set_counting(!bare);
    let mut duration = None;
    run(&scenario, variant, |message| {
        if let Message::Phase(phase) = message {
            duration = Some(phase.measurement.duration_ms);
        }
        Ok(())
    })
    .expect("the list phase runs");
    alloc::set_counting(true);
    println!("{}", duration.expect("the list phase completed"));
    ExitCode::SUCCESS
}

/// In the parent: alternates the modes and prints the medians and their ratio.
fn compare() -> ExitCode {
    let exe = std::env::current_exe().expect("the benchmark locates itself");
    let mut times = [Vec::new(), Vec::new()];
    for _ in 0..ROUNDS {
        for (i, mode) in ["bare", "counting"].into_iter().enumerate() {
            let output = Command::new(&exe)
                .env(MODE, mode)
                .output()
                .expect("the benchmark runs itself");
            assert!(output.status.success(), "{mode}: {output:?}");
            let ms: f64 = String::from_utf8_lossy(&output.stdout)
                .trim()
                .parse()
                .expect("the child prints a duration");
            times[i].push(ms);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let bare = median(&mut times[0]);
    let counting = median(&mut times[1]);
    println!(
        "list phase of slice-retention (10,000 pods, per-item copy), median of {ROUNDS} \
         (wall clock, advisory):"
    );
    println!("  plain jemalloc                     {bare:8.0} ms");
    println!("  counting + attribution             {counting:8.0} ms");
    println!(
        "  overhead                           {:+7.1}%",
        (counting / bare - 1.0) * 100.0
    );
    ExitCode::SUCCESS
}
