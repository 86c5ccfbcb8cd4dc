//! What a real kube-apiserver says of its own work: the Go runtime's cumulative counters and
//! its CPU time from `/metrics` (Prometheus text), read before and after each phase, and
//! its heap profile from `/debug/pprof/heap`.

use report::KubeApiServerFigures;

/// The cumulative counters of one `/metrics` read.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counters {
    /// `go_memstats_alloc_bytes_total`: bytes allocated since the process started.
    pub alloc_bytes: f64,
    /// `go_memstats_mallocs_total`: heap objects allocated since then.
    pub mallocs: f64,
    /// `process_cpu_seconds_total`.
    pub cpu_seconds: f64,
    /// `go_memstats_heap_inuse_bytes`: the heap's spans in use now.
    pub heap_inuse_bytes: f64,
}

impl Counters {
    /// The counters in a `/metrics` page; `None` when one is missing.
    pub fn parse(text: &str) -> Option<Counters> {
        let value = |name: &str| {
            text.lines().filter(|l| !l.starts_with('#')).find_map(|l| {
                let (metric, value) = l.split_once(' ')?;
                (metric == name).then(|| value.trim().parse::<f64>().ok())?
            })
        };
        Some(Counters {
            alloc_bytes: value("go_memstats_alloc_bytes_total")?,
            mallocs: value("go_memstats_mallocs_total")?,
            cpu_seconds: value("process_cpu_seconds_total")?,
            heap_inuse_bytes: value("go_memstats_heap_inuse_bytes")?,
        })
    }

    /// What the server did between `before` and these counters.
    pub fn since(&self, before: &Counters) -> KubeApiServerFigures {
        let delta = |now: f64, then: f64| (now - then).max(0.0).round() as u64;
        KubeApiServerFigures {
            alloc_bytes: delta(self.alloc_bytes, before.alloc_bytes),
            alloc_count: delta(self.mallocs, before.mallocs),
            cpu_ms: delta(self.cpu_seconds * 1000.0, before.cpu_seconds * 1000.0),
            heap_inuse_bytes: self.heap_inuse_bytes.round() as u64,
            events_sent: 0,
            bytes_sent: 0,
            process: None,
            heap_profile: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "# HELP go_memstats_alloc_bytes_total Total number of bytes allocated.
# TYPE go_memstats_alloc_bytes_total counter
go_memstats_alloc_bytes_total 1.2345678e+09
go_memstats_mallocs_total 2.5e+07
go_memstats_heap_inuse_bytes 8.8e+07
process_cpu_seconds_total 12.34
apiserver_request_total{code=\"200\"} 5
";

    #[test]
    fn reads_the_counters_and_their_growth() {
        let before = Counters::parse(PAGE).unwrap();
        assert_eq!(before.alloc_bytes, 1_234_567_800.0);
        let after = Counters {
            alloc_bytes: before.alloc_bytes + 1000.0,
            mallocs: before.mallocs + 10.0,
            cpu_seconds: before.cpu_seconds + 0.25,
            heap_inuse_bytes: 9e7,
        };
        let figures = after.since(&before);
        assert_eq!(
            (figures.alloc_bytes, figures.alloc_count, figures.cpu_ms),
            (1000, 10, 250)
        );
        assert_eq!(figures.heap_inuse_bytes, 90_000_000);
    }

    #[test]
    fn a_page_without_them_is_none() {
        assert_eq!(Counters::parse("apiserver_request_total 5\n"), None);
    }
}
