//! Two reports side by side: the data model `diff` renders and `check` gates on.
//!
//! A [`Comparison`] pairs the base and head figures of every metric of every phase of
//! every variant, and says for each whether it moved beyond its [`Tolerances`]. Metrics
//! are a closed set ([`Metric`]); each knows whether it is exact (allocation counts, bytes,
//! requests: identical run to run on one build, so gated at 0% by default) or advisory
//! (RSS, resident, durations: never gated unless asked).

use std::collections::BTreeMap;
use std::str::FromStr;

use serde::Serialize;

use super::{PhaseReport, Report};
use scenario::ObjectSpec;
use scenario::metric::Metric;

impl PhaseReport {
    /// The phase's figure of `metric`, when the report has it.
    pub(crate) fn figure(&self, metric: Metric) -> Option<f64> {
        let m = &self.measurement;
        let r = &self.api_requests;
        let events = self.events.as_ref();
        let n = |v: u64| Some(v as f64);
        match metric {
            Metric::AllocCount => n(m.alloc_count),
            Metric::DeallocCount => n(m.dealloc_count),
            Metric::ReallocCount => n(m.realloc_count),
            Metric::AllocBytes => n(m.alloc_bytes.0),
            Metric::LiveBytes => n(m.live_bytes.0),
            Metric::PeakLiveBytes => n(m.peak_live_bytes.0),
            Metric::InformerAllocCount => m.components.map(|c| c.informer.alloc_count as f64),
            Metric::InformerAllocBytes => m.components.map(|c| c.informer.alloc_bytes.0 as f64),
            Metric::InformerLiveBytes => m.components.map(|c| c.informer.live_bytes.0 as f64),
            Metric::InformerPeakLiveBytes => {
                m.components.map(|c| c.informer.peak_live_bytes.0 as f64)
            }
            Metric::ApiServerAllocCount => m.components.map(|c| c.apiserver.alloc_count as f64),
            Metric::ApiServerAllocBytes => m.components.map(|c| c.apiserver.alloc_bytes.0 as f64),
            Metric::ApiServerLiveBytes => m.components.map(|c| c.apiserver.live_bytes.0 as f64),
            Metric::ApiServerPeakLiveBytes => {
                m.components.map(|c| c.apiserver.peak_live_bytes.0 as f64)
            }
            Metric::ApiServerCpuMs => m.components.and_then(|c| c.apiserver.cpu_ms),
            Metric::ListRequests => n(r.list),
            Metric::WatchRequests => n(r.watch),
            Metric::WatchEvents => n(r.watch_events),
            Metric::BytesServed => n(r.bytes),
            Metric::EventsAdd => events.map(|e| e.delivered.add as f64),
            Metric::EventsUpdate => events.map(|e| e.delivered.update as f64),
            Metric::EventsDelete => events.map(|e| e.delivered.delete as f64),
            Metric::EventsSync => events.map(|e| e.delivered.sync as f64),
            Metric::UidChangedUpdates => events.map(|e| e.uid_changed_updates as f64),
            Metric::QueuePeakBytes => {
                events.map(|e| e.informers.iter().map(|i| i.queue.peak_bytes as f64).sum())
            }
            Metric::HandlerPeakBufferBytes => events.map(|e| {
                e.informers
                    .iter()
                    .flat_map(|i| &i.handlers)
                    .map(|h| h.peak_buffer_bytes as f64)
                    .sum()
            }),
            Metric::ResidentBytes => m.jemalloc.map(|j| j.resident.0 as f64),
            Metric::RssBytes => m.rss_bytes.map(|b| b.0 as f64),
            Metric::RssPeakBytes => m.rss_peak_bytes.map(|b| b.0 as f64),
            Metric::DurationMs => Some(m.duration_ms),
            _ => self.subject_figure(metric),
        }
    }

    /// A figure of an external variant's program, when the phase has one.
    fn subject_figure(&self, metric: Metric) -> Option<f64> {
        let s = self.subject.as_ref()?;
        let heap = s.heap;
        match metric {
            Metric::SubjectHeapLiveBytes => s.live_heap().map(|b| b.0 as f64),
            Metric::SubjectHeapObjects => heap.map(|h| h.objects as f64),
            Metric::SubjectHeapPeakBytes => s.heap_peak_bytes.map(|b| b.0 as f64),
            Metric::SubjectAllocBytes => heap.map(|h| h.alloc_bytes.0 as f64),
            Metric::SubjectRssBytes => Some(s.rss_bytes.0 as f64),
            Metric::SubjectRssPeakBytes => s.rss_peak_bytes.map(|b| b.0 as f64),
            Metric::SubjectCpuMs => Some(s.cpu_ms as f64),
            _ => None,
        }
    }
}

/// The least tolerance, in percent, of a gated metric of a report made against a real
/// server.
pub const REAL_SERVER_TOLERANCE: f64 = 5.0;

/// How far each metric may move before `check` calls it a change, in percent of the base.
/// A metric without a tolerance is shown but never gated.
#[derive(Debug, Clone, PartialEq)]
pub struct Tolerances(BTreeMap<Metric, f64>);

impl Default for Tolerances {
    fn default() -> Tolerances {
        Tolerances(
            Metric::ALL
                .into_iter()
                .filter_map(|m| m.default_tolerance().map(|t| (m, t)))
                .collect(),
        )
    }
}

impl Tolerances {
    /// These tolerances with `overrides` applied; a later one wins.
    pub fn with(mut self, overrides: impl IntoIterator<Item = (Metric, f64)>) -> Tolerances {
        self.0.extend(overrides);
        self
    }

    /// The defaults for a report made against a real server (`run --kubeconfig`), whose
    /// exact figures vary run to run with how the server's bytes arrive: every gated
    /// metric at least [`REAL_SERVER_TOLERANCE`] percent, and neither a peak within a
    /// phase (they moved by more than half between runs of one build) nor reallocations
    /// (buffers grow with the sizes of the reads: 8% between two runs) gated.
    pub fn real_server() -> Tolerances {
        Tolerances(
            Metric::ALL
                .into_iter()
                .filter(|m| !m.is_peak() && *m != Metric::ReallocCount)
                .filter_map(|m| Some((m, m.default_tolerance()?.max(REAL_SERVER_TOLERANCE))))
                .collect(),
        )
    }

    /// What `check` and `diff` apply to `head`: the defaults (a real server's when the
    /// head was made against one), then the scenario's `[gate]` as the head report
    /// records it, then `--tolerance` options.
    pub fn for_report(head: &Report, options: &[Tolerance]) -> Tolerances {
        let defaults = if head.server.is_some() {
            Tolerances::real_server()
        } else {
            Tolerances::default()
        };
        defaults
            .with(head.scenario.gate.iter().map(|(&m, &p)| (m, p)))
            .with(options.iter().map(|t| (t.metric, t.percent)))
    }

    /// The tolerance of `metric`, if it is gated.
    pub fn of(&self, metric: Metric) -> Option<f64> {
        self.0.get(&metric).copied()
    }
}

/// One `--tolerance METRIC=PCT`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Which metric.
    pub metric: Metric,
    /// How far it may move, in percent of the base.
    pub percent: f64,
}

impl FromStr for Tolerance {
    type Err = String;

    fn from_str(s: &str) -> Result<Tolerance, String> {
        let (metric, percent) = s
            .split_once('=')
            .ok_or_else(|| format!("expected METRIC=PCT, such as live_bytes=2, not {s:?}"))?;
        let percent = percent.trim_end_matches('%');
        let percent: f64 = percent
            .parse()
            .ok()
            .filter(|p: &f64| p.is_finite() && *p >= 0.0)
            .ok_or_else(|| format!("tolerance {percent:?} is not a percentage of 0 or more"))?;
        Ok(Tolerance {
            metric: metric.parse()?,
            percent,
        })
    }
}

/// What a metric did between the reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Rose beyond its tolerance.
    Regression,
    /// Fell beyond its tolerance.
    Improvement,
    /// Moved, within its tolerance (or it is not gated).
    Within,
    /// The same figure.
    Unchanged,
}

/// One metric of one phase of one variant, in both reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The variant's name.
    pub variant: String,
    /// The phase's name.
    pub phase: String,
    /// The metric.
    pub metric: Metric,
    /// Its value in the base report.
    pub base: f64,
    /// Its value in the head report.
    pub head: f64,
    /// `head - base`.
    pub delta: f64,
    /// The change in percent of the base (`None` when the base is 0 and the head is not).
    pub percent: Option<f64>,
    /// The tolerance applied, in percent; `None` when the metric is not gated.
    pub tolerance: Option<f64>,
    /// Whether the figure repeats exactly run to run on one build: an exact metric of a
    /// built-in variant on the built-in server. An external variant's run figures (the
    /// built-in server's allocations while it serves the program, its requests) follow
    /// the program's timing, and a run against a real server reads the server's bytes as
    /// they arrive, so those are advisory whatever the metric.
    pub exact: bool,
    /// What it did.
    pub verdict: Verdict,
}

/// A phase whose store matched the server in the base report and not in the head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LostConsistency {
    /// The variant's name.
    pub variant: String,
    /// The phase's name.
    pub phase: String,
}

/// A variant that failed in the head report and not in the base, or completed fewer of its
/// phases there: always a regression, whatever its figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailedVariant {
    /// The variant's name.
    pub variant: String,
    /// Why it failed, as the head report says; `None` when it has no error but fewer
    /// phases.
    pub error: Option<String>,
    /// Phases the base report has for it.
    pub base_phases: usize,
    /// Phases the head report has for it.
    pub head_phases: usize,
}

/// The head's variants that failed where the base's did not, or stopped earlier. The two
/// reports must have the same variants, and each head variant's phases must be the first of
/// its base phases (a failed variant stops early); else they are not comparable.
fn failed_variants(base: &Report, head: &Report) -> Result<Vec<FailedVariant>, Incomparable> {
    let names = |r: &Report| {
        r.variants
            .iter()
            .map(|v| v.name.clone())
            .collect::<Vec<_>>()
    };
    if names(base) != names(head) {
        return Err(Incomparable(
            "the variants differ (a variant was added, removed or renamed)".to_owned(),
        ));
    }
    let mut failed = Vec::new();
    for (vb, vh) in base.variants.iter().zip(&head.variants) {
        let (pb, ph) = (vb.phases.len(), vh.phases.len());
        let same_start = vb
            .phases
            .iter()
            .zip(&vh.phases)
            .all(|(b, h)| b.name == h.name);
        if ph > pb || !same_start {
            return Err(Incomparable(format!(
                "variant {:?} ran other phases in the two reports",
                vb.name
            )));
        }
        let new_error = vh.error.is_some() && vb.error.is_none();
        if new_error || ph < pb {
            failed.push(FailedVariant {
                variant: vh.name.clone(),
                error: vh.error.clone(),
                base_phases: pb,
                head_phases: ph,
            });
        }
    }
    Ok(failed)
}

/// Two reports of the same scenario, metric by metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The scenario both reports ran.
    pub scenario: String,
    /// Every metric both reports have, in variant, phase and metric order.
    pub rows: Vec<Row>,
    /// Phases whose store became inconsistent: always a regression.
    pub lost_consistency: Vec<LostConsistency>,
    /// Variants that failed in the head and not in the base, or completed fewer phases:
    /// always a regression.
    pub failed_variants: Vec<FailedVariant>,
}

/// Why two reports cannot be compared.
#[derive(Debug, thiserror::Error)]
#[error("the reports cannot be compared: {0}")]
pub struct Incomparable(String);

/// Whether two reports' `[objects]` serve the same objects: a sample read from another
/// file (moved, or written as YAML instead of JSON) with the same objects is the same.
fn same_objects(base: &ObjectSpec, head: &ObjectSpec) -> bool {
    base == head || without_file(base) == without_file(head)
}

/// `spec` without the name of its sample's file.
fn without_file(spec: &ObjectSpec) -> ObjectSpec {
    let mut spec = spec.clone();
    if let Some(sample) = &mut spec.sample {
        sample.file.clear();
    }
    spec
}

/// The first key (in key order) at which `base` and `head` differ, under `path`, with
/// both values when they are short: `` `scenario.objects.count` is 1000 in the base, 2000
/// in the head ``.
fn first_difference(
    base: &serde_json::Value,
    head: &serde_json::Value,
    path: String,
) -> Option<String> {
    use serde_json::Value;
    if base == head {
        return None;
    }
    if let (Value::Object(b), Value::Object(h)) = (base, head) {
        let keys: std::collections::BTreeSet<&String> = b.keys().chain(h.keys()).collect();
        return keys.into_iter().find_map(|key| {
            let (b, h) = (b.get(key), h.get(key));
            let (b, h) = (b.unwrap_or(&Value::Null), h.unwrap_or(&Value::Null));
            first_difference(b, h, format!("{path}.{key}"))
        });
    }
    if let (Value::Array(b), Value::Array(h)) = (base, head)
        && b.len() == h.len()
    {
        return b
            .iter()
            .zip(h)
            .enumerate()
            .find_map(|(i, (b, h))| first_difference(b, h, format!("{path}[{i}]")));
    }
    let (b, h) = (base.to_string(), head.to_string());
    Some(if b.len() + h.len() <= 120 {
        format!("`{path}` is {b} in the base, {h} in the head")
    } else {
        format!("`{path}` differs")
    })
}

impl Comparison {
    /// Compares `head` with `base`. Both must have run the same scenario on the same objects,
    /// with the same variants and phases in the same order.
    pub fn new(
        base: &Report,
        head: &Report,
        tolerances: &Tolerances,
    ) -> Result<Comparison, Incomparable> {
        if base.tool.allocator != head.tool.allocator {
            return Err(Incomparable(format!(
                "the base was measured by {:?}, the head by {:?}: their figures count \
                 different things (see `tool.allocator`)",
                base.tool.allocator, head.tool.allocator
            )));
        }
        let (b, h) = (&base.scenario, &head.scenario);
        if b.name != h.name {
            return Err(Incomparable(format!(
                "the base ran scenario {:?}, the head {:?}",
                b.name, h.name
            )));
        }
        if !same_objects(&b.objects, &h.objects) || b.apiserver != h.apiserver || b.sweep != h.sweep
        {
            let served = |info: &super::ScenarioInfo| {
                serde_json::json!({
                    "objects": without_file(&info.objects),
                    "apiserver": info.apiserver,
                    "sweep": info.sweep,
                })
            };
            let key = first_difference(&served(b), &served(h), "scenario".to_owned());
            return Err(Incomparable(format!(
                "scenario {:?} serves other objects in the two reports: {}",
                b.name,
                key.unwrap_or_else(|| "`scenario.objects` differs".to_owned())
            )));
        }
        let failed_variants = failed_variants(base, head)?;
        let mut rows = Vec::new();
        let mut lost_consistency = Vec::new();
        // Against a real server (`run --kubeconfig`) no figure repeats to the unit: the
        // server's bytes arrive in other reads, its objects carry other resourceVersions.
        let repeatable = base.server.is_none() && head.server.is_none();
        for (vb, vh) in base.variants.iter().zip(&head.variants) {
            for (pb, ph) in vb.phases.iter().zip(&vh.phases) {
                if pb.consistency.consistent && !ph.consistency.consistent {
                    lost_consistency.push(LostConsistency {
                        variant: vb.name.clone(),
                        phase: pb.name.clone(),
                    });
                }
                for metric in Metric::ALL {
                    let (Some(base), Some(head)) = (pb.figure(metric), ph.figure(metric)) else {
                        continue;
                    };
                    // An external variant's run serves a program on a real clock: the
                    // run's own figures follow the program's timing, and only the
                    // program's are gated.
                    let gated = vh.subject.is_none() || metric.is_subject();
                    let tolerance = tolerances.of(metric).filter(|_| gated);
                    let exact = repeatable && vh.subject.is_none() && metric.is_exact();
                    rows.push(row(
                        &vb.name, &pb.name, metric, base, head, tolerance, exact,
                    ));
                }
            }
        }
        Ok(Comparison {
            scenario: b.name.clone(),
            rows,
            lost_consistency,
            failed_variants,
        })
    }

    /// Rows that rose beyond their tolerance.
    pub fn regressions(&self) -> impl Iterator<Item = &Row> {
        self.rows
            .iter()
            .filter(|r| r.verdict == Verdict::Regression)
    }

    /// Rows that fell beyond their tolerance.
    pub fn improvements(&self) -> impl Iterator<Item = &Row> {
        self.rows
            .iter()
            .filter(|r| r.verdict == Verdict::Improvement)
    }

    /// Rows whose figure moved at all.
    pub fn changed(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.verdict != Verdict::Unchanged)
    }

    /// Whether `check` fails: a regression, or a store that stopped matching the server.
    pub fn failed(&self) -> bool {
        self.regressions().next().is_some()
            || !self.lost_consistency.is_empty()
            || !self.failed_variants.is_empty()
    }
}

fn row(
    variant: &str,
    phase: &str,
    metric: Metric,
    base: f64,
    head: f64,
    tolerance: Option<f64>,
    exact: bool,
) -> Row {
    let delta = head - base;
    let percent = if base != 0.0 {
        Some(delta / base * 100.0)
    } else if delta == 0.0 {
        Some(0.0)
    } else {
        None
    };
    let verdict = if delta == 0.0 {
        Verdict::Unchanged
    } else {
        match (tolerance, percent) {
            (None, _) => Verdict::Within,
            (Some(t), Some(p)) if p.abs() <= t => Verdict::Within,
            _ if delta > 0.0 => Verdict::Regression,
            _ => Verdict::Improvement,
        }
    };
    Row {
        variant: variant.to_owned(),
        phase: phase.to_owned(),
        metric,
        base,
        head,
        delta,
        percent,
        tolerance,
        exact,
        verdict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_from_another_file_with_the_same_objects_compares() {
        let sampled = |file: &str, name: &str| {
            let mut report = crate::synthetic::report(1, 1, 0);
            report.scenario.objects.sample = Some(scenario::Sample {
                file: file.to_owned(),
                objects: vec![serde_json::json!({"metadata": {"name": name}})],
            });
            report
        };
        let base = sampled("samples/pod.json", "a");
        let tolerances = Tolerances::for_report(&base, &[]);
        assert!(Comparison::new(&base, &sampled("samples/pod.yaml", "a"), &tolerances).is_ok());
        // Other objects are named by the objects' key, whatever their files.
        let other = Comparison::new(&base, &sampled("samples/pod.yaml", "b"), &tolerances);
        let why = other.unwrap_err().to_string();
        assert!(
            why.contains(
                "serves other objects in the two reports: \
             `scenario.objects.sample.objects[0].metadata.name` is \"a\" in the base, \"b\" in the head"
            ),
            "{why}"
        );
        let mut more = base.clone();
        more.scenario.objects.count += 1;
        let why = Comparison::new(&base, &more, &tolerances)
            .unwrap_err()
            .to_string();
        let count = base.scenario.objects.count;
        assert!(
            why.contains(&format!(
                "`scenario.objects.count` is {count} in the base, {} in the head",
                count + 1
            )),
            "{why}"
        );
    }

    #[test]
    fn a_real_servers_report_gets_wider_tolerances_and_no_peaks() {
        let mut head = crate::synthetic::report(1, 1, 0);
        assert_eq!(
            Tolerances::for_report(&head, &[]).of(Metric::AllocCount),
            Some(0.0)
        );
        head.server = Some(crate::RealServer {
            url: "https://127.0.0.1:6443/".to_owned(),
            version: "v1.37.2".to_owned(),
            read_only: false,
            started_by_run: false,
        });
        let tolerances = Tolerances::for_report(&head, &[]);
        assert_eq!(
            tolerances.of(Metric::AllocCount),
            Some(REAL_SERVER_TOLERANCE)
        );
        assert_eq!(
            tolerances.of(Metric::InformerLiveBytes),
            Some(REAL_SERVER_TOLERANCE)
        );
        assert_eq!(tolerances.of(Metric::SubjectHeapLiveBytes), Some(5.0));
        assert_eq!(tolerances.of(Metric::InformerPeakLiveBytes), None);
        assert_eq!(tolerances.of(Metric::ReallocCount), None);

        // Its figures do not repeat to the unit, so a diff counts none of them as exact.
        let base = head.clone();
        head.variants[0].phases[0].measurement.alloc_count += 1;
        let comparison = Comparison::new(&base, &head, &tolerances).unwrap();
        let moved = comparison.changed().next().unwrap();
        assert_eq!((moved.metric, moved.exact), (Metric::AllocCount, false));
        assert!(comparison.rows.iter().all(|r| !r.exact));
    }

    #[test]
    fn tolerances_parse_and_override_the_defaults() {
        let t: Tolerance = "live_bytes=2.5".parse().unwrap();
        assert_eq!(t.metric, Metric::LiveBytes);
        assert_eq!(t.percent, 2.5);
        assert_eq!("rss_bytes=10%".parse::<Tolerance>().unwrap().percent, 10.0);
        assert!("live_bytes".parse::<Tolerance>().is_err());
        assert!("live_bytes=-1".parse::<Tolerance>().is_err());
        assert!(
            "colour=1"
                .parse::<Tolerance>()
                .unwrap_err()
                .contains("alloc_count")
        );
        let tolerances = Tolerances::default().with([(t.metric, t.percent)]);
        assert_eq!(tolerances.of(Metric::LiveBytes), Some(2.5));
        assert_eq!(tolerances.of(Metric::AllocCount), Some(0.0));
        assert_eq!(tolerances.of(Metric::RssBytes), None);
    }

    #[test]
    fn events_are_compared_and_gated_like_counts() {
        let base = Report::read(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../reports/resync.json"
        )))
        .unwrap();
        let same = Comparison::new(&base, &base, &Tolerances::default()).unwrap();
        assert!(same.rows.iter().any(|r| r.metric == Metric::EventsSync));
        assert!(same.changed().next().is_none());
        // One resync notification more and a smaller queue peak, in the last phase.
        let mut head = base.clone();
        let phase = head.variants[0].phases.last_mut().unwrap();
        let events = phase.events.as_mut().expect("resync's phases have events");
        events.delivered.sync += 1;
        events.informers[0].queue.peak_bytes -= 8;
        let (variant, phase) = (base.variants[0].name.clone(), phase.name.clone());
        let c = Comparison::new(&base, &head, &Tolerances::default()).unwrap();
        let moved: Vec<_> = c
            .changed()
            .map(|r| (r.variant.as_str(), r.phase.as_str(), r.metric, r.verdict))
            .collect();
        assert_eq!(
            moved,
            [
                (
                    variant.as_str(),
                    phase.as_str(),
                    Metric::EventsSync,
                    Verdict::Regression
                ),
                (
                    variant.as_str(),
                    phase.as_str(),
                    Metric::QueuePeakBytes,
                    Verdict::Improvement
                ),
            ]
        );
        assert!(c.failed());
    }

    #[test]
    fn a_rise_beyond_tolerance_is_a_regression_and_a_fall_an_improvement() {
        let t = Tolerances::default();
        let row = |v, p, m: Metric, b, h, t: &Tolerances| row(v, p, m, b, h, t.of(m), m.is_exact());
        let r = row("v", "p", Metric::AllocCount, 100.0, 101.0, &t);
        assert_eq!(r.verdict, Verdict::Regression);
        assert_eq!(r.percent, Some(1.0));
        let r = row("v", "p", Metric::AllocCount, 100.0, 99.0, &t);
        assert_eq!(r.verdict, Verdict::Improvement);
        let r = row("v", "p", Metric::LiveBytes, 1000.0, 1005.0, &t);
        assert_eq!(r.verdict, Verdict::Within);
        let r = row("v", "p", Metric::RssBytes, 1000.0, 9000.0, &t);
        assert_eq!(r.verdict, Verdict::Within, "advisory figures are not gated");
        let r = row("v", "p", Metric::ListRequests, 0.0, 1.0, &t);
        assert_eq!((r.percent, r.verdict), (None, Verdict::Regression));
    }
}
