//! A runtime's own report of each garbage collection, read from the program's output: Go's
//! `GODEBUG=gctrace=1`, V8's `--trace-gc` (Node.js) and the JVM's unified GC log
//! (`-Xlog:gc`). The runtime writes one line per collection at no cost worth measuring,
//! so the heap's size at every collection is known, where a sampler sees only the moments
//! it asks.
//!
//! The formats:
//! - Go (runtime/mgc.go, `gcMarkTermination`): `gc 12 @3.456s 2%: 0.1+2.3+0.01 ms clock,
//!   ... ms cpu, 180->190->95 MB, 190 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)`:
//!   the heap when the cycle started, when marking ended, and what was marked live, in
//!   MiB (`>>20`, rounded down).
//! - V8: `[123:0x55d0]     1234 ms: Mark-Compact 120.5 (130.2) -> 80.1 (95.0) MB, ...`:
//!   the objects' size before and after, in MiB with one decimal (a `Scavenge` collects
//!   only the young generation, so only a `Mark-Compact`'s after is the live heap).
//! - The JVM: `[1.234s][info][gc] GC(7) Pause Full (System.gc()) 50M->20M(100M) 30.1ms`:
//!   the heap's occupancy before and after (a young pause's after still holds the old
//!   generation's garbage, so only a full collection's after is the live heap).

use serde::{Deserialize, Serialize};

use units::Bytes;

/// One collection, as the runtime reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GcCycle {
    /// When it started, in ms since the program started (the runtime's clock).
    pub at_ms: u64,
    /// The heap when it started.
    pub before_bytes: Bytes,
    /// The heap when it ended: for Go, when marking ended (what was allocated during the
    /// cycle included, none of it swept yet); for V8 and the JVM, after it.
    pub after_bytes: Bytes,
    /// What it found live, where the runtime says: Go's marked heap, V8's after a
    /// Mark-Compact, the JVM's after a full collection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_bytes: Option<Bytes>,
    /// Asked for by the program (Go: `runtime.GC()`, as pprof's `gc=1` does; the JVM:
    /// `System.gc()`), not by the heap's growth.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub forced: bool,
}

impl GcCycle {
    /// The most the heap held around this collection: before it, or after it where the
    /// program allocated during it (Go's concurrent marking).
    pub fn peak(&self) -> Bytes {
        self.before_bytes.max(self.after_bytes)
    }

    /// Reads one line of a program's output as a collection's report, in any of the three
    /// formats; `None` for any other line.
    pub fn parse(line: &str) -> Option<GcCycle> {
        go(line).or_else(|| v8(line)).or_else(|| jvm(line))
    }
}

const MIB: f64 = (1u64 << 20) as f64;

fn mib(value: &str) -> Option<Bytes> {
    let value: f64 = value.parse().ok()?;
    (value >= 0.0 && value.is_finite()).then(|| Bytes((value * MIB).round() as u64))
}

/// `gc 12 @3.456s 2%: ..., 180->190->95 MB, 190 MB goal, ...`
fn go(line: &str) -> Option<GcCycle> {
    line.match_indices("gc ")
        .find_map(|(at, _)| go_from(&line[at..]))
}

fn go_from(rest: &str) -> Option<GcCycle> {
    let mut words = rest.split(' ');
    let (_, number, at) = (words.next()?, words.next()?, words.next()?);
    number.parse::<u64>().ok()?;
    let seconds: f64 = at.strip_prefix('@')?.strip_suffix('s')?.parse().ok()?;
    let sizes = rest.split(", ").find_map(|part| part.strip_suffix(" MB"))?;
    let mut sizes = sizes.split("->");
    let (before, after, live) = (sizes.next()?, sizes.next()?, sizes.next()?);
    Some(GcCycle {
        at_ms: (seconds * 1000.0).round() as u64,
        before_bytes: mib(before)?,
        after_bytes: mib(after)?,
        live_bytes: Some(mib(live)?),
        forced: rest.trim_end().ends_with("(forced)"),
    })
}

/// `[pid:0xaddr]   1234 ms: Mark-Compact 120.5 (130.2) -> 80.1 (95.0) MB, ...`
fn v8(line: &str) -> Option<GcCycle> {
    let rest = line.strip_prefix('[')?.split_once("] ")?.1.trim_start();
    let (at, rest) = rest.split_once(" ms: ")?;
    let at_ms: f64 = at.trim().parse().ok()?;
    let (kind, rest) = rest.split_once(' ')?;
    // `Mark-Compact (reduce) ...`: a qualifier before the sizes.
    let rest = match rest.strip_prefix('(') {
        Some(qualified) => qualified.split_once(") ")?.1,
        None => rest,
    };
    let (sizes, _) = rest.split_once(" MB")?;
    let (before, after) = sizes.split_once(" -> ")?;
    let first = |s: &str| s.split(' ').next().and_then(mib);
    let after_bytes = first(after)?;
    Some(GcCycle {
        at_ms: at_ms.round() as u64,
        before_bytes: first(before)?,
        after_bytes,
        live_bytes: kind.starts_with("Mark-Compact").then_some(after_bytes),
        // `gc()` under `--expose-gc` is V8's "testing" collection.
        forced: rest.contains(" testing;"),
    })
}

/// `[1.234s][info][gc] GC(7) Pause Full (System.gc()) 50M->20M(100M) 30.1ms`
fn jvm(line: &str) -> Option<GcCycle> {
    let seconds: f64 = line.strip_prefix('[')?.split_once("s]")?.0.parse().ok()?;
    let rest = &line[line.find("] GC(")? + 2..];
    let sizes = rest
        .split(' ')
        .find(|w| w.contains("->") && w.ends_with(')'))?;
    let (before, rest) = sizes.split_once("->")?;
    let (after, _) = rest.split_once('(')?;
    let after_bytes = jvm_size(after)?;
    Some(GcCycle {
        at_ms: (seconds * 1000.0).round() as u64,
        before_bytes: jvm_size(before)?,
        after_bytes,
        live_bytes: line.contains(" Pause Full ").then_some(after_bytes),
        forced: line.contains("(System.gc())"),
    })
}

/// `50M`, `512K`, `2G`: the JVM's sizes.
fn jvm_size(size: &str) -> Option<Bytes> {
    let unit = match size.chars().last()? {
        'B' => 1,
        'K' => 1 << 10,
        'M' => 1 << 20,
        'G' => 1 << 30,
        _ => return None,
    };
    let value: u64 = size[..size.len() - 1].parse().ok()?;
    Some(Bytes(value.checked_mul(unit)?))
}

/// Which runtime's report a program's output carries, for the environment that turns it
/// on: what a run adds to a program's environment so that its runtime reports every
/// collection (`existing` is what the environment has for that name already).
pub fn enabling_env(name: &str, existing: Option<&str>) -> Option<String> {
    let (setting, separator) = match name {
        "GODEBUG" => ("gctrace=1", ","),
        "JAVA_TOOL_OPTIONS" => ("-Xlog:gc:stderr", " "),
        _ => return None,
    };
    match existing.map(str::trim).filter(|e| !e.is_empty()) {
        None => Some(setting.to_owned()),
        // The program's own choice stands (`gctrace=0`, another `-Xlog:gc`).
        Some(e) if e.contains(setting.split('=').next().unwrap_or(setting)) => None,
        Some(e) if name == "JAVA_TOOL_OPTIONS" && e.contains("-Xlog:gc") => None,
        Some(e) => Some(format!("{e}{separator}{setting}")),
    }
}

/// The environment variables [`enabling_env`] knows.
pub const ENABLING_VARIABLES: [&str; 2] = ["GODEBUG", "JAVA_TOOL_OPTIONS"];

/// A program's output file read as it grows: each call returns the collections reported
/// since the last one. Only whole lines are read; a line longer than [`LONGEST_LINE`] is
/// skipped (no runtime's report is).
#[derive(Debug, Default)]
pub struct GcLog {
    offset: u64,
    partial: Vec<u8>,
    /// Whether any collection has been read.
    seen: bool,
}

/// The longest line kept across reads.
pub const LONGEST_LINE: usize = 4096;

impl GcLog {
    /// Reads `path` from where the last call stopped; an unreadable file reads as nothing
    /// new.
    pub fn read_new(&mut self, path: &std::path::Path) -> Vec<GcCycle> {
        use std::io::{Read, Seek, SeekFrom};
        let mut cycles = Vec::new();
        let Ok(mut file) = std::fs::File::open(path) else {
            return cycles;
        };
        if file.seek(SeekFrom::Start(self.offset)).is_err() {
            return cycles;
        }
        let mut chunk = vec![0; 64 << 10];
        loop {
            let n = match file.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            self.offset += n as u64;
            let mut rest = &chunk[..n];
            while let Some(end) = rest.iter().position(|&b| b == b'\n') {
                self.partial.extend_from_slice(&rest[..end]);
                if self.partial.len() <= LONGEST_LINE
                    && let Some(cycle) = GcCycle::parse(&String::from_utf8_lossy(&self.partial))
                {
                    cycles.push(cycle);
                }
                self.partial.clear();
                rest = &rest[end + 1..];
            }
            let room = (LONGEST_LINE + 1).saturating_sub(self.partial.len());
            self.partial
                .extend_from_slice(&rest[..rest.len().min(room)]);
        }
        self.seen |= !cycles.is_empty();
        cycles
    }

    /// Whether a collection has been reported since the log was first read.
    pub fn seen(&self) -> bool {
        self.seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_gctrace_lines_are_read_to_the_mib() {
        let line = "gc 12 @3.456s 2%: 0.10+2.3+0.014 ms clock, 0.20+0.5/1.1/0+0.028 ms cpu, \
                    180->190->95 MB, 190 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)";
        let cycle = GcCycle::parse(line).unwrap();
        assert_eq!(
            cycle,
            GcCycle {
                at_ms: 3456,
                before_bytes: Bytes(180 << 20),
                after_bytes: Bytes(190 << 20),
                live_bytes: Some(Bytes(95 << 20)),
                forced: true,
            }
        );
        assert_eq!(cycle.peak(), Bytes(190 << 20));
        // A log line printed into the middle of the runtime's still reads, from `gc `.
        let mixed = format!("I1207 klog says hello {line}");
        assert_eq!(GcCycle::parse(&mixed), Some(cycle));
        let unforced = line.trim_end_matches(" (forced)");
        assert!(!GcCycle::parse(unforced).unwrap().forced);
    }

    #[test]
    fn v8_trace_gc_lines_give_the_live_heap_only_after_a_mark_compact() {
        let scavenge = "[4242:0x5f1c2a0]       35 ms: Scavenge 4.4 (5.0) -> 4.0 (6.0) MB, \
                        0.66 / 0.00 ms  (average mu = 1.000, current mu = 1.000) allocation failure; ";
        let cycle = GcCycle::parse(scavenge).unwrap();
        assert_eq!(cycle.at_ms, 35);
        assert_eq!(cycle.before_bytes, Bytes((4.4 * MIB).round() as u64));
        assert_eq!(cycle.live_bytes, None);
        let full = "[4242:0x5f1c2a0]     1234 ms: Mark-Compact (reduce) 120.5 (130.2) -> 80.1 \
                    (95.0) MB, 12.3 / 0.0 ms  (average mu = 0.9) finalize incremental marking";
        let cycle = GcCycle::parse(full).unwrap();
        assert_eq!(cycle.live_bytes, Some(Bytes((80.1 * MIB).round() as u64)));
        assert_eq!(cycle.peak(), Bytes((120.5 * MIB).round() as u64));
    }

    #[test]
    fn jvm_unified_gc_log_lines_give_the_live_heap_only_after_a_full_collection() {
        let young = "[0.456s][info][gc] GC(3) Pause Young (Normal) (G1 Evacuation Pause) \
                     24M->3M(256M) 2.345ms";
        let cycle = GcCycle::parse(young).unwrap();
        assert_eq!((cycle.at_ms, cycle.before_bytes), (456, Bytes(24 << 20)));
        assert_eq!((cycle.live_bytes, cycle.forced), (None, false));
        let full = "[12.5s][info][gc] GC(9) Pause Full (System.gc()) 50M->20M(100M) 30.1ms";
        let cycle = GcCycle::parse(full).unwrap();
        assert_eq!(cycle.live_bytes, Some(Bytes(20 << 20)));
        assert!(cycle.forced);
        // A concurrent cycle's line has no sizes.
        let concurrent = "[1.0s][info][gc] GC(4) Concurrent Mark Cycle 12.345ms";
        assert_eq!(GcCycle::parse(concurrent), None);
    }

    #[test]
    fn other_lines_are_not_collections() {
        for line in [
            "",
            "client-go-informer: serving pprof and status on 127.0.0.1:1234",
            "gc 12 is not a trace",
            "[0.011s][info][gc] Using G1",
            "Picked up JAVA_TOOL_OPTIONS: -Xlog:gc:stderr",
            "gc 1 @0.1s 0%: 0 ms clock, 0 ms cpu, x->1->1 MB, 4 MB goal",
        ] {
            assert_eq!(GcCycle::parse(line), None, "{line:?}");
        }
    }

    #[test]
    fn the_environment_turns_reports_on_without_overriding_the_programs_choice() {
        assert_eq!(enabling_env("GODEBUG", None).as_deref(), Some("gctrace=1"));
        assert_eq!(
            enabling_env("GODEBUG", Some("http2client=0")).as_deref(),
            Some("http2client=0,gctrace=1")
        );
        assert_eq!(enabling_env("GODEBUG", Some("gctrace=0")), None);
        assert_eq!(
            enabling_env("JAVA_TOOL_OPTIONS", Some("-Xmx1g")).as_deref(),
            Some("-Xmx1g -Xlog:gc:stderr")
        );
        assert_eq!(
            enabling_env("JAVA_TOOL_OPTIONS", Some("-Xlog:gc*:file=x")),
            None
        );
        assert_eq!(enabling_env("PATH", None), None);
    }

    #[test]
    fn a_growing_log_is_read_once_line_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("program.log");
        let line = "gc 1 @0.500s 1%: 0+1+0 ms clock, 0+0/0/0+0 ms cpu, 4->5->2 MB, 8 MB goal, \
                    0 MB stacks, 0 MB globals, 2 P\n";
        let (head, tail) = line.split_at(40);
        std::fs::write(&path, format!("starting\n{head}")).unwrap();
        let mut log = GcLog::default();
        assert!(log.read_new(&path).is_empty());
        assert!(!log.seen());
        // The rest of the line, and a line too long to be a report.
        let long = "x".repeat(LONGEST_LINE * 3);
        std::fs::write(&path, format!("starting\n{head}{tail}{long}\n{line}")).unwrap();
        let cycles = log.read_new(&path);
        assert_eq!(cycles.len(), 2);
        assert_eq!(cycles[0].after_bytes, Bytes(5 << 20));
        assert!(log.seen());
        assert!(log.read_new(&path).is_empty());
    }
}
