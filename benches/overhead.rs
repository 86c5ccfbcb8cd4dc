//! What counting and attribution cost (`cargo bench --bench overhead`): the list phase of
//! scenarios/slice-retention.toml (10,000 pods, the per-item-copy variant), under the
//! counting allocator and under plain jemalloc, side by side in one run.
//!
//! Each measurement is a fresh process of this benchmark (so neither mode inherits the
//! other's heap), the modes alternate, and the figure per mode is its fastest round (noise
//! on a shared machine only adds time), with the median beside it, and then the median of
//! the rounds' own ratios (each round runs both modes back to back). Two clocks: the list
//! phase's wall time, and the CPU time of the whole run. Advisory, not gated. Where
//! valgrind is installed, each mode also runs once under cachegrind on 1,000 pods: its
//! instruction and cache-miss counts repeat run to run (to 0.1%), which wall time on a
//! shared machine does not.

use std::path::Path;
use std::process::{Command, ExitCode};

use informer_mem::runner::Message;
use informer_mem::runner::child::run;
use measure::{CountingJemalloc, alloc};
use scenario::Scenario;

#[global_allocator]
static GLOBAL: CountingJemalloc = CountingJemalloc;

const MODE: &str = "INFORMER_MEM_OVERHEAD_MODE";
/// Objects to list instead of the scenario's 10,000 (the instruction counts use fewer).
const OBJECTS: &str = "INFORMER_MEM_OVERHEAD_OBJECTS";
/// Pods listed under cachegrind, which runs about fifty times slower.
const CACHEGRIND_OBJECTS: u64 = 1000;
const ROUNDS: usize = 11;

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
    if let Some(count) = std::env::var(OBJECTS).ok().and_then(|n| n.parse().ok()) {
        scenario.objects.count = count;
    }
    let variant = scenario
        .variants
        .iter()
        .position(|v| v.name.contains("per-item"))
        .expect("slice-retention has a per-item-copy variant");
    alloc::set_counting(!bare);
    let mut duration = None;
    let cpu_before = cpu_ms();
    run(&scenario, variant, |message| {
        if let Message::Phase(phase) = message {
            duration = Some(phase.measurement.duration_ms);
        }
        Ok(())
    })
    .expect("the list phase runs");
    let cpu = cpu_ms() - cpu_before;
    alloc::set_counting(true);
    println!("{} {cpu}", duration.expect("the list phase completed"));
    ExitCode::SUCCESS
}

/// The process's CPU time so far (user and system, from `/proc/self/stat`), in ms.
fn cpu_ms() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("Linux has /proc");
    // The fields after the command's closing parenthesis; utime and stime are the 12th
    // and 13th of them, in clock ticks (100 per second on Linux).
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks * 10.0
}

/// In the parent: alternates the modes and prints each one's fastest and median rounds.
fn compare() -> ExitCode {
    let exe = std::env::current_exe().expect("the benchmark locates itself");
    // Per mode: (wall ms of the list phase, CPU ms of the whole run) per round.
    let mut times: [Vec<(f64, f64)>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..ROUNDS {
        for (i, mode) in ["bare", "counting"].into_iter().enumerate() {
            let output = Command::new(&exe)
                .env(MODE, mode)
                .output()
                .expect("the benchmark runs itself");
            assert!(output.status.success(), "{mode}: {output:?}");
            let text = String::from_utf8_lossy(&output.stdout);
            let mut figures = text.split_whitespace().map(|f| f.parse::<f64>());
            let (Some(Ok(wall)), Some(Ok(cpu))) = (figures.next(), figures.next()) else {
                panic!("the child prints two durations: {text:?}");
            };
            times[i].push((wall, cpu));
        }
    }
    // Noise on a shared machine only ever adds time, so the fastest round is the best
    // estimate of each mode's own cost; the median is printed beside it. The two modes of
    // a round run back to back, under about the same load, so the median of the rounds'
    // own ratios is printed too: it cancels load that lasts longer than a round.
    let stats = |mode: usize, pick: fn(&(f64, f64)) -> f64| {
        let mut v: Vec<f64> = times[mode].iter().map(pick).collect();
        v.sort_by(f64::total_cmp);
        (v[0], v[v.len() / 2])
    };
    let paired = |pick: fn(&(f64, f64)) -> f64| {
        let mut ratios: Vec<f64> = times[0]
            .iter()
            .zip(&times[1])
            .map(|(bare, counting)| (pick(counting) / pick(bare) - 1.0) * 100.0)
            .collect();
        ratios.sort_by(f64::total_cmp);
        ratios[ratios.len() / 2]
    };
    println!(
        "list phase of slice-retention (10,000 pods, per-item copy), {ROUNDS} rounds, modes \
         alternating; fastest (median), advisory:"
    );
    println!("                          wall, list phase ms      CPU, whole run ms");
    let bare = (stats(0, |t| t.0), stats(0, |t| t.1));
    let counting = (stats(1, |t| t.0), stats(1, |t| t.1));
    for (name, ((wall, wall_median), (cpu, cpu_median))) in [
        ("plain jemalloc", bare),
        ("counting + attribution", counting),
    ] {
        println!("  {name:<24}{wall:8.0} ({wall_median:6.0})      {cpu:8.0} ({cpu_median:6.0})");
    }
    let overhead = |a: f64, b: f64| (a / b - 1.0) * 100.0;
    println!(
        "  overhead                {:+7.1}% ({:+5.1}%)     {:+7.1}% ({:+5.1}%)",
        overhead(counting.0.0, bare.0.0),
        overhead(counting.0.1, bare.0.1),
        overhead(counting.1.0, bare.1.0),
        overhead(counting.1.1, bare.1.1),
    );
    println!(
        "  overhead, median of the rounds' own ratios  {:+5.1}%               {:+5.1}%",
        paired(|t| t.0),
        paired(|t| t.1),
    );
    instructions(&exe);
    ExitCode::SUCCESS
}

/// The same comparison in instructions and cache misses, which repeat run to run: each
/// mode once under valgrind's cachegrind (a simulated cache hierarchy), both at once.
fn instructions(exe: &std::path::Path) {
    if Command::new("valgrind").arg("--version").output().is_err() {
        println!("valgrind not found: instruction counts skipped");
        return;
    }
    let run = |mode: &'static str| {
        let exe = exe.to_owned();
        std::thread::spawn(move || {
            let output = Command::new("valgrind")
                .args(["--tool=cachegrind", "--cache-sim=yes"])
                .arg("--cachegrind-out-file=/dev/null")
                .arg(&exe)
                .env(MODE, mode)
                .env(OBJECTS, CACHEGRIND_OBJECTS.to_string())
                .output()
                .expect("valgrind runs");
            assert!(
                output.status.success(),
                "{mode} under cachegrind: {output:?}"
            );
            let log = String::from_utf8_lossy(&output.stderr).into_owned();
            // `==pid== I   refs:      1,012,399,437`, and the same for the misses.
            let figure = |label: &str| -> f64 {
                let line = log.lines().find(|l| l.contains(label)).expect(label);
                let value = line.split(':').nth(1).expect("a figure").trim();
                let digits: String = value
                    .split_whitespace()
                    .next()
                    .expect("a number")
                    .chars()
                    .filter(char::is_ascii_digit)
                    .collect();
                digits.parse().expect("a number")
            };
            [
                figure("I   refs"),
                figure("D1  misses"),
                figure("LL misses"),
            ]
        })
    };
    let (bare, counting) = (run("bare"), run("counting"));
    let (bare, counting) = (bare.join().unwrap(), counting.join().unwrap());
    println!(
        "the same at {CACHEGRIND_OBJECTS} pods, whole run, under cachegrind (repeat to 0.1%):"
    );
    println!("                          instructions    D1 misses    LL misses");
    for (name, f) in [
        ("plain jemalloc", bare),
        ("counting + attribution", counting),
    ] {
        println!("  {name:<24}{:13.0} {:12.0} {:12.0}", f[0], f[1], f[2]);
    }
    let overhead = |i: usize| (counting[i] / bare[i] - 1.0) * 100.0;
    println!(
        "  overhead                {:+12.1}% {:+11.1}% {:+11.1}%",
        overhead(0),
        overhead(1),
        overhead(2)
    );
}
