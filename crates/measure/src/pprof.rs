//! A Go program's heap as net/http/pprof shows it: `/debug/pprof/heap?debug=1` is the heap
//! profile in text, followed by a `# runtime.MemStats` block (Go's runtime/pprof,
//! `writeHeapInternal`).
//!
//! The MemStats are exact counters of the Go runtime; with `gc=1` a collection runs first,
//! so `HeapAlloc` is the live heap. The profile's records are samples (one per 512 KiB
//! allocated by default), scaled here as pprof scales them: the top allocation sites are
//! estimates.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use units::Bytes;

/// The runtime.MemStats fields the report keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemStats {
    /// `HeapAlloc`: bytes of heap objects, live and not yet swept (live only after a GC).
    pub heap_alloc: Bytes,
    /// `HeapInuse`: bytes in in-use spans.
    pub heap_inuse: Bytes,
    /// `HeapObjects`: heap objects allocated and not yet freed.
    pub heap_objects: u64,
    /// `TotalAlloc`: bytes allocated since the program started.
    pub total_alloc: Bytes,
    /// `Mallocs`: heap objects allocated since the program started.
    pub mallocs: u64,
    /// `Frees`: heap objects freed since the program started.
    pub frees: u64,
    /// `NumGC`: completed collections.
    pub num_gc: u64,
    /// What the runtime holds besides the live heap, when the block has all of it (Go's
    /// own profiles do; a program imitating one may print only the fields above).
    pub runtime: Option<RuntimeMemory>,
}

/// How much memory the Go runtime holds from the OS and how it splits: the figures the
/// memory limit (`GOMEMLIMIT`) and the collector's target (`GOGC`) act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeMemory {
    /// `Sys`: bytes obtained from the OS, for the heap, stacks and the runtime's own data.
    pub sys: Bytes,
    /// `HeapIdle`: bytes in heap spans holding no object.
    pub heap_idle: Bytes,
    /// `HeapReleased`: idle bytes returned to the OS (not resident).
    pub heap_released: Bytes,
    /// `NextGC`: the heap size at which the next collection is due.
    pub next_gc: Bytes,
}

impl RuntimeMemory {
    /// `Sys - HeapReleased`: the memory the runtime keeps, which `GOMEMLIMIT` limits.
    pub fn held(&self) -> Bytes {
        Bytes(self.sys.0.saturating_sub(self.heap_released.0))
    }

    /// `HeapIdle - HeapReleased`: free heap the runtime keeps for the heap to grow into.
    pub fn idle_kept(&self) -> Bytes {
        Bytes(self.heap_idle.0.saturating_sub(self.heap_released.0))
    }
}

/// Where the live heap was allocated: one function, the first outside the Go runtime on
/// the allocating stacks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Site {
    /// The function, as `pkg.Func`.
    pub function: String,
    /// Its file and line on the heaviest stack.
    pub location: String,
    /// Live bytes allocated there (estimated from the samples).
    pub inuse_bytes: Bytes,
    /// Live objects allocated there (estimated from the samples).
    pub inuse_objects: u64,
}

/// Why a heap profile could not be read.
#[derive(Debug, thiserror::Error)]
#[error("not a Go heap profile with runtime.MemStats: {0}")]
pub struct Unreadable(&'static str);

/// Reads the `# runtime.MemStats` block of a `debug=1` heap profile.
pub fn mem_stats(text: &str) -> Result<MemStats, Unreadable> {
    let mut fields: HashMap<&str, u64> = HashMap::new();
    let block = text
        .split_once("# runtime.MemStats")
        .ok_or(Unreadable("no `# runtime.MemStats` block"))?
        .1;
    for line in block.lines() {
        let Some((name, value)) = line.trim_start_matches('#').split_once('=') else {
            continue;
        };
        if let Ok(value) = value.trim().parse() {
            fields.insert(name.trim(), value);
        }
    }
    let get = |name: &'static str| fields.get(name).copied().ok_or(Unreadable(name));
    let runtime = || {
        Some(RuntimeMemory {
            sys: Bytes(*fields.get("Sys")?),
            heap_idle: Bytes(*fields.get("HeapIdle")?),
            heap_released: Bytes(*fields.get("HeapReleased")?),
            next_gc: Bytes(*fields.get("NextGC")?),
        })
    };
    Ok(MemStats {
        heap_alloc: Bytes(get("HeapAlloc")?),
        heap_inuse: Bytes(get("HeapInuse")?),
        heap_objects: get("HeapObjects")?,
        total_alloc: Bytes(get("TotalAlloc")?),
        mallocs: get("Mallocs")?,
        frees: get("Frees")?,
        num_gc: get("NumGC")?,
        runtime: runtime(),
    })
}

/// The `n` sites holding the most live bytes, heaviest first.
pub fn top_sites(text: &str, n: usize) -> Vec<Site> {
    // `heap profile: ... @ heap/2*MemProfileRate`.
    let rate = text
        .lines()
        .next()
        .and_then(|l| l.rsplit_once("heap/"))
        .and_then(|(_, r)| r.trim().parse::<f64>().ok())
        .map_or(512.0 * 1024.0, |two_rates| two_rates / 2.0);
    let mut sites: HashMap<String, Site> = HashMap::new();
    let mut lines = text.lines().skip(1).peekable();
    while let Some(line) = lines.next() {
        let Some((objects, bytes)) = record_inuse(line) else {
            continue;
        };
        let mut frames = Vec::new();
        while let Some(frame) = lines.peek().and_then(|l| l.strip_prefix("#\t")) {
            frames.push(frame);
            lines.next();
        }
        if objects == 0 {
            continue;
        }
        let Some((function, location)) = frames.iter().find_map(|f| app_frame(f)) else {
            continue;
        };
        let (objects, bytes) = scale(objects, bytes, rate);
        let site = sites.entry(function.to_owned()).or_insert_with(|| Site {
            function: function.to_owned(),
            location: location.to_owned(),
            inuse_bytes: Bytes(0),
            inuse_objects: 0,
        });
        site.inuse_bytes.0 += bytes;
        site.inuse_objects += objects;
    }
    let mut sites: Vec<Site> = sites.into_values().collect();
    sites.sort_by(|a, b| {
        b.inuse_bytes
            .cmp(&a.inuse_bytes)
            .then(a.function.cmp(&b.function))
    });
    sites.truncate(n);
    sites
}

/// A record's header `inuse_objects: inuse_bytes [alloc_objects: alloc_bytes] @ ...`.
fn record_inuse(line: &str) -> Option<(u64, u64)> {
    let (head, _) = line.split_once(" [")?;
    let (objects, bytes) = head.split_once(':')?;
    Some((objects.trim().parse().ok()?, bytes.trim().parse().ok()?))
}

/// A frame `0xADDR\tpkg.Func+0xOFF\tfile:line`, unless it is the runtime's own.
fn app_frame(frame: &str) -> Option<(&str, &str)> {
    let mut parts = frame.split('\t');
    let _address = parts.next()?;
    let function = parts.next()?;
    let function = function.split_once("+0x").map_or(function, |(f, _)| f);
    let location = parts.next().unwrap_or("").trim();
    let runtime = function.starts_with("runtime.") || function.starts_with("internal/");
    (!runtime).then_some((function, location))
}

/// Undoes the sampling: a block of average size `s` is sampled with probability
/// `1 - exp(-s / rate)` (runtime/pprof's scaleHeapSample).
fn scale(objects: u64, bytes: u64, rate: f64) -> (u64, u64) {
    if rate <= 1.0 {
        return (objects, bytes);
    }
    let average = bytes as f64 / objects as f64;
    let factor = 1.0 / (1.0 - (-average / rate).exp());
    (
        (objects as f64 * factor).round() as u64,
        (bytes as f64 * factor).round() as u64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROFILE: &str = "heap profile: 3: 1572864 [9: 4718592] @ heap/1048576
2: 1048576 [5: 2621440] @ 0x1 0x2 0x3
#\t0x4a1b2c\truntime.mallocgc+0x2c\t/go/src/runtime/malloc.go:1000
#\t0x4a1b3c\tencoding/json.(*decodeState).literalStore+0x10\t/go/src/encoding/json/decode.go:12
#\t0x4a1b4c\tmain.load+0x1\t/src/main.go:7

1: 524288 [4: 2097152] @ 0x4
#\t0x4a1b5c\tk8s.io/api/core/v1.(*Pod).Unmarshal+0x9\t/k8s/api/core/v1/generated.pb.go:55

0: 0 [1: 64] @ 0x5
#\t0x4a1b6c\tmain.gone+0x1\t/src/main.go:9


# runtime.MemStats
# Alloc = 1600000
# TotalAlloc = 9000000
# Sys = 20000000
# Mallocs = 5000
# Frees = 4000
# HeapAlloc = 1600000
# HeapSys = 8000000
# HeapIdle = 6000000
# HeapInuse = 2000000
# HeapReleased = 5000000
# HeapObjects = 1000
# Stack = 393216 / 393216
# NextGC = 3200000
# NumGC = 7
# DebugGC = false
";

    #[test]
    fn reads_the_mem_stats_block() {
        let m = mem_stats(PROFILE).unwrap();
        assert_eq!(m.heap_alloc, Bytes(1_600_000));
        assert_eq!(m.heap_inuse, Bytes(2_000_000));
        assert_eq!(
            (m.heap_objects, m.mallocs, m.frees, m.num_gc),
            (1000, 5000, 4000, 7)
        );
        assert_eq!(m.total_alloc, Bytes(9_000_000));
        let runtime = m.runtime.unwrap();
        assert_eq!(runtime.next_gc, Bytes(3_200_000));
        assert_eq!(runtime.held(), Bytes(15_000_000));
        assert_eq!(runtime.idle_kept(), Bytes(1_000_000));
        let imitation = PROFILE.replace("# NextGC = 3200000\n", "");
        assert_eq!(mem_stats(&imitation).unwrap().runtime, None);
        assert!(mem_stats("heap profile: 0: 0 [0: 0] @ heap/1048576\n").is_err());
        let missing = PROFILE.replace("# HeapInuse = 2000000\n", "");
        assert_eq!(
            mem_stats(&missing).unwrap_err().to_string(),
            "not a Go heap profile with runtime.MemStats: HeapInuse"
        );
    }

    #[test]
    fn sites_are_the_first_frames_outside_the_runtime_scaled_and_sorted() {
        let sites = top_sites(PROFILE, 10);
        let names: Vec<&str> = sites.iter().map(|s| s.function.as_str()).collect();
        assert_eq!(
            names,
            [
                "encoding/json.(*decodeState).literalStore",
                "k8s.io/api/core/v1.(*Pod).Unmarshal"
            ]
        );
        assert_eq!(sites[0].location, "/go/src/encoding/json/decode.go:12");
        // 512 KiB blocks at a 512 KiB rate: each sample stands for 1 / (1 - e^-1) blocks.
        let factor = 1.0 / (1.0 - (-1.0f64).exp());
        assert_eq!(
            sites[0].inuse_bytes.0,
            (1_048_576.0 * factor).round() as u64
        );
        assert_eq!(sites[1].inuse_objects, factor.round() as u64);
        assert_eq!(top_sites(PROFILE, 1).len(), 1);
    }
}
