//! What a measured program needs as deployed: its memory split the way the Go runtime
//! holds it (what GOGC and GOMEMLIMIT act on), and from its phases a memory request, a
//! limit and a GOMEMLIMIT, each with the measurement it comes from.
//!
//! Every figure is the run's own (RSS from /proc, the runtime's MemStats after the phase's
//! forced collection), so they are as advisory as the program's other figures: one run,
//! on this machine, against this scenario's objects.

use super::{PhaseReport, Report, VariantReport};
use scenario::PhaseKind;
use units::Bytes;

/// The limit's margin over the highest RSS measured in any phase.
pub const LIMIT_MARGIN: f64 = 0.25;

/// GOMEMLIMIT's share of what the limit leaves the Go runtime: the rest absorbs the
/// runtime's overshoot of its soft limit and memory that grows outside it.
pub const GOMEMLIMIT_SHARE: f64 = 0.9;

/// The columns of the runtime-memory table, and whether each is right-aligned.
pub const COLUMNS: [(&str, bool); 10] = [
    ("variant", false),
    ("phase", false),
    ("resident", true),
    ("peak resident", true),
    ("runtime held", true),
    ("heap in use", true),
    ("live", true),
    ("next GC", true),
    ("idle kept", true),
    ("outside runtime", true),
];

/// What the runtime-memory table's columns mean.
pub const NOTE: &str = "Go runtime memory at each phase's end (advisory): resident is the RSS \
     as the phase ended, peak resident its high-water mark in the phase; then, after the \
     run's forced collections: runtime held is Sys - HeapReleased (what GOMEMLIMIT \
     limits), heap in use HeapInuse, live HeapAlloc, next GC the heap size at which the \
     next collection starts (live x (1 + GOGC/100), lower under GOMEMLIMIT), idle kept \
     HeapIdle - HeapReleased (free heap still resident), outside runtime the RSS read right \
     after them beyond runtime held (the binary's pages, C memory; 0 when the runtime holds \
     more than is resident)";

/// How the recommendations are made.
const RECOMMENDED: &str = "recommended (advisory): request is the largest RSS at the end of a \
     phase other than a relist (what the program settles at; relist phases count only when \
     there is nothing else), limit the highest RSS in any \
     phase plus 25%, GOMEMLIMIT 90% of what the limit leaves once the most resident outside \
     the runtime is set aside; figures of one run, for the scenario's objects";

/// A memory request, a limit and, for one Go process, a GOMEMLIMIT, with their reasons.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recommendation {
    /// The largest RSS at the end of a phase other than a relist, rounded up to a MiB.
    pub request: Bytes,
    /// The highest RSS in any phase plus [`LIMIT_MARGIN`], rounded up to a MiB.
    pub limit: Bytes,
    /// For a single Go process: [`GOMEMLIMIT_SHARE`] of the limit less what was resident
    /// outside the runtime, rounded down to a MiB.
    pub gomemlimit: Option<Bytes>,
    /// Where each figure comes from, in words.
    pub reasons: Vec<String>,
}

impl Recommendation {
    /// The recommendation for `variant`, or why there is none: a variant that failed, or a
    /// phase whose program did not sync or whose store did not match the server (its
    /// figures would not be the program's doing its job).
    pub fn of(variant: &VariantReport) -> Result<Recommendation, String> {
        let phases = measured(variant)?;
        let (steady, settled) = settled_rss(&phases);
        let (highest, at_peak) = max_by(&phases, |(_, s)| {
            s.rss_peak_bytes
                .map_or(s.rss_bytes, |peak| peak.max(s.rss_bytes))
        });
        let request = round_up(steady);
        let limit = limit_over(highest);
        let mut reasons = vec![
            format!(
                "request {}: the largest RSS at the end of a phase other than a \
                 relist ({settled})",
                quantity(request)
            ),
            format!(
                "limit {}: the highest RSS, {highest} in {at_peak}, plus {:.0}%",
                quantity(limit),
                LIMIT_MARGIN * 100.0
            ),
        ];
        let gomemlimit = gomemlimit(&phases, limit);
        match &gomemlimit {
            // As Go reads it: a whole number, no separators.
            Ok((value, reason)) => {
                reasons.push(format!("GOMEMLIMIT={}MiB: {reason}", value.0 >> 20))
            }
            Err(why) => reasons.push(format!("no GOMEMLIMIT: {why}")),
        }
        Ok(Recommendation {
            request,
            limit,
            gomemlimit: gomemlimit.ok().map(|(value, _)| value),
            reasons,
        })
    }
}

/// The phases that measured `variant`'s program, or why its figures are not those of a
/// program doing its job: the variant failed, or in a phase the program did not sync or
/// its store did not match the server.
fn measured(variant: &VariantReport) -> Result<Vec<Measured<'_>>, String> {
    if let Some(error) = &variant.error {
        return Err(format!("the variant failed ({error})"));
    }
    let phases: Vec<Measured<'_>> = variant
        .phases
        .iter()
        .filter_map(|p| Some((p, p.subject.as_deref()?)))
        .collect();
    if phases.is_empty() {
        return Err("no phase measured the program".to_owned());
    }
    if let Some((phase, _)) = phases.iter().find(|(p, _)| !did_its_job(p)) {
        return Err(format!(
            "in phase {} the program did not sync a store matching the server",
            phase.name
        ));
    }
    Ok(phases)
}

/// The RSS `variant`'s program settles at, what a memory request is: the largest at the
/// end of a phase other than a relist (the relists' only when it has nothing else); why
/// there is none as [`Recommendation::of`] says it.
pub fn request_rss(variant: &VariantReport) -> Result<Bytes, String> {
    measured(variant).map(|phases| settled_rss(&phases).0)
}

/// The largest RSS at the end of a phase other than a relist, and that phase. A relist's
/// transient stays resident until the runtime returns it to the OS, minutes later: the
/// request is what the program settles at between relists.
fn settled_rss<'a>(phases: &[Measured<'a>]) -> (Bytes, &'a str) {
    let settled: Vec<Measured<'a>> = phases
        .iter()
        .copied()
        .filter(|(p, _)| p.kind != PhaseKind::Relist)
        .collect();
    let settled = if settled.is_empty() { phases } else { &settled };
    max_by(settled, |(_, s)| s.rss_bytes)
}

/// Whether the phase's figures are those of a program doing its job: it synced, and its
/// store (where the run could read it) matched the server's objects.
fn did_its_job(phase: &PhaseReport) -> bool {
    phase.informer_synced && (!phase.store_checked() || phase.consistency.consistent)
}

type Measured<'a> = (&'a PhaseReport, &'a crate::SubjectFigures);

/// The largest of `figure` over the phases, with the phase it was measured in.
fn max_by<'a>(
    phases: &[Measured<'a>],
    figure: impl Fn(&Measured<'a>) -> Bytes,
) -> (Bytes, &'a str) {
    phases
        .iter()
        .map(|m| (figure(m), m.0.name.as_str()))
        .max_by_key(|(bytes, _)| *bytes)
        .expect("at least one phase")
}

/// GOMEMLIMIT under `limit`, with its reason; why there is none for a program that is not
/// one Go process with its runtime's figures in every phase.
fn gomemlimit(phases: &[Measured<'_>], limit: Bytes) -> Result<(Bytes, String), String> {
    if phases.iter().any(|(_, s)| s.processes.len() > 1) {
        return Err("its RSS is the sum of several processes, each with its own limit".into());
    }
    let mut outside = (Bytes(0), "");
    for (phase, figures) in phases {
        let beyond = outside_runtime(figures).ok_or(
            "the program's runtime memory was not read (not a Go program with pprof, or a \
             report from before 2026-12-07)",
        )?;
        if beyond > outside.0 {
            outside = (beyond, phase.name.as_str());
        }
    }
    let live = phases
        .iter()
        .filter_map(|(_, s)| s.heap.map(|h| h.live_bytes))
        .max()
        .unwrap_or(Bytes(0));
    let outside_text = match outside {
        (Bytes(0), _) => "nothing was resident outside the runtime".to_owned(),
        (bytes, phase) => format!("{bytes} was resident outside the runtime (in {phase})"),
    };
    gomemlimit_under(limit, (outside.0, &outside_text), live)
}

/// A limit for a program whose RSS peaked at `peak`: [`LIMIT_MARGIN`] over it, rounded up
/// to a MiB.
pub fn limit_over(peak: Bytes) -> Bytes {
    round_up(Bytes((peak.0 as f64 * (1.0 + LIMIT_MARGIN)) as u64))
}

/// GOMEMLIMIT under `limit` for a Go program with `outside` resident outside its runtime
/// (the bytes, and how they were measured, in words) and at most `live` of live heap:
/// [`GOMEMLIMIT_SHARE`] of what is left, rounded down to a MiB, with its reason; none
/// when that is not above the live heap (the collector would run without end).
pub fn gomemlimit_under(
    limit: Bytes,
    (outside, measured): (Bytes, &str),
    live: Bytes,
) -> Result<(Bytes, String), String> {
    let room = limit.0.saturating_sub(outside.0);
    let value = Bytes(((room as f64 * GOMEMLIMIT_SHARE) as u64) & !((1 << 20) - 1));
    if value <= live {
        return Err(format!(
            "the limit leaves the Go runtime {} after {outside} outside it, not above the \
             live heap ({live})",
            Bytes(room),
        ));
    }
    Ok((
        value,
        format!(
            "{:.0}% of the limit once {measured}; {:.1}x the largest live heap ({live})",
            GOMEMLIMIT_SHARE * 100.0,
            value.ratio_of(live)
        ),
    ))
}

/// The RSS beyond what the Go runtime holds, both read after the phase's collections;
/// `None` without them (a report from before 2026-12-07).
pub fn outside_runtime(figures: &crate::SubjectFigures) -> Option<Bytes> {
    let heap = figures.heap?;
    Some(Bytes(
        heap.rss_bytes?.0.saturating_sub(heap.runtime?.held().0),
    ))
}

/// Whole MiB as a Kubernetes quantity (`512Mi`), what a pod's `resources` take.
pub fn quantity(bytes: Bytes) -> String {
    format!("{}Mi", bytes.0 >> 20)
}

/// `bytes` rounded up to a whole MiB.
pub fn round_up(bytes: Bytes) -> Bytes {
    Bytes(bytes.0.div_ceil(1 << 20) << 20)
}

/// The runtime-memory rows: one per phase of an external variant whose Go runtime's
/// memory was read.
pub fn rows(report: &Report) -> Vec<[String; 10]> {
    let mut rows = Vec::new();
    for variant in &report.variants {
        let mut first = true;
        for phase in &variant.phases {
            let Some(figures) = phase.subject.as_deref() else {
                continue;
            };
            let Some(heap) = figures.heap else { continue };
            let Some(runtime) = heap.runtime else {
                continue;
            };
            let held = runtime.held();
            rows.push([
                if std::mem::take(&mut first) {
                    variant.name.clone()
                } else {
                    String::new()
                },
                phase.name.clone(),
                figures.rss_bytes.to_string(),
                figures
                    .rss_peak_bytes
                    .map_or_else(|| "-".to_owned(), |b| b.to_string()),
                held.to_string(),
                heap.inuse_bytes.to_string(),
                heap.live_bytes.to_string(),
                runtime.next_gc.to_string(),
                runtime.idle_kept().to_string(),
                outside_runtime(figures).map_or_else(|| "-".to_owned(), |b| b.to_string()),
            ]);
        }
    }
    rows
}

/// A line per external variant with what to set (or why nothing can be recommended from
/// this run), after one saying how; none without an external variant.
pub fn lines(report: &Report) -> Vec<String> {
    let mut notes = vec![RECOMMENDED.to_owned()];
    for variant in report.variants.iter().filter(|v| v.subject.is_some()) {
        notes.push(match Recommendation::of(variant) {
            Ok(r) => format!("recommended for {}: {}", variant.name, r.reasons.join("; ")),
            Err(why) => format!("nothing recommended for {}: {why}", variant.name),
        });
    }
    if notes.len() == 1 {
        notes.clear();
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SubjectFigures;
    use measure::pprof::RuntimeMemory;

    const MIB: u64 = 1 << 20;

    /// A Go program's phase: RSS at its end and its peak, live heap, and the runtime's
    /// `Sys` (none released).
    fn phase(name: &str, rss: u64, peak: u64, live: u64, sys: u64) -> PhaseReport {
        let mut phase = crate::synthetic::report(1, 1, 0).variants[0].phases[0].clone();
        phase.name = name.to_owned();
        let mut figures = SubjectFigures {
            rss_bytes: Bytes(rss * MIB),
            rss_peak_bytes: Some(Bytes(peak * MIB)),
            ..SubjectFigures::default()
        };
        figures.heap = Some(crate::GoHeap {
            live_bytes: Bytes(live * MIB),
            inuse_bytes: Bytes(live * MIB),
            objects: 0,
            alloc_bytes: Bytes(0),
            allocs: 0,
            frees: 0,
            gcs: 1,
            rss_bytes: Some(Bytes(rss * MIB)),
            runtime: Some(RuntimeMemory {
                sys: Bytes(sys * MIB),
                heap_idle: Bytes(0),
                heap_released: Bytes(0),
                next_gc: Bytes(2 * live * MIB),
            }),
        });
        phase.subject = Some(Box::new(figures));
        phase
    }

    /// An external variant of `phases`.
    fn variant(phases: Vec<PhaseReport>) -> VariantReport {
        let mut variant = crate::synthetic::report(1, 0, 0).variants.remove(0);
        variant.name = "client-go".to_owned();
        let subject = serde_json::json!({"definition": {"command": ["client-go"], "quiet_ms": 2000, "timeout_ms": 60000}});
        variant.subject = Some(Box::new(serde_json::from_value(subject).unwrap()));
        variant.phases = phases;
        variant
    }

    #[test]
    fn request_limit_and_gomemlimit_come_from_the_phases_figures() {
        let mut relist = phase("relist", 120, 200, 61, 110);
        relist.kind = PhaseKind::Relist;
        let v = variant(vec![phase("list", 100, 150, 60, 90), relist]);
        let r = Recommendation::of(&v).unwrap();
        // The relist's 120 MiB at its end is a transient: the request is the list's.
        assert_eq!(r.request, Bytes(100 * MIB));
        assert_eq!(r.limit, Bytes(250 * MIB));
        // 10 MiB resident outside the runtime in both phases: 90% of 240 MiB.
        assert_eq!(r.gomemlimit, Some(Bytes(216 * MIB)));
        let text = r.reasons.join("; ");
        assert!(
            text.contains("limit 250Mi: the highest RSS, 200.0 MiB in relist, plus 25%"),
            "{text}"
        );
        assert!(text.contains("GOMEMLIMIT=216MiB"), "{text}");
        assert!(text.contains("10.0 MiB was resident outside"), "{text}");
    }

    #[test]
    fn a_phase_that_did_not_sync_or_match_gives_no_recommendation() {
        let mut unsynced = phase("relist", 120, 200, 61, 110);
        unsynced.informer_synced = false;
        let v = variant(vec![phase("list", 100, 150, 60, 90), unsynced]);
        let why = Recommendation::of(&v).unwrap_err();
        assert!(why.contains("phase relist"), "{why}");
        let mut wrong = phase("list", 100, 150, 60, 90);
        wrong.subject.as_mut().unwrap().store_checked = true;
        wrong.consistency.consistent = false;
        assert!(Recommendation::of(&variant(vec![wrong])).is_err());
    }

    #[test]
    fn no_gomemlimit_without_the_runtimes_figures_or_for_several_processes() {
        let mut bare = phase("list", 100, 150, 60, 90);
        bare.subject
            .as_mut()
            .unwrap()
            .heap
            .as_mut()
            .unwrap()
            .runtime = None;
        let r = Recommendation::of(&variant(vec![bare])).unwrap();
        assert_eq!((r.request, r.gomemlimit), (Bytes(100 * MIB), None));
        assert!(r.reasons[2].starts_with("no GOMEMLIMIT"), "{:?}", r.reasons);
        let mut two = phase("list", 100, 150, 60, 90);
        let processes = &mut two.subject.as_mut().unwrap().processes;
        let process = |command: &str| crate::ProcessShare {
            command: command.to_owned(),
            rss_bytes: Bytes(50 * MIB),
        };
        processes.extend([process("controller"), process("sidecar")]);
        assert_eq!(
            Recommendation::of(&variant(vec![two])).unwrap().gomemlimit,
            None
        );
    }

    #[test]
    fn a_limit_that_leaves_no_room_above_the_live_heap_sets_no_gomemlimit() {
        // 180 MiB resident outside the runtime leaves 120 MiB of a 300 MiB limit.
        let v = variant(vec![phase("list", 230, 240, 150, 50)]);
        let r = Recommendation::of(&v).unwrap();
        assert_eq!(r.gomemlimit, None);
        assert!(
            r.reasons[2].contains("not above the live heap"),
            "{:?}",
            r.reasons
        );
    }

    #[test]
    fn rows_are_the_phases_with_the_runtimes_figures() {
        let mut report = crate::synthetic::report(0, 0, 0);
        report.variants = vec![variant(vec![phase("list", 100, 150, 60, 90)])];
        let rows = rows(&report);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0][4], "90.0 MiB");
        assert_eq!(rows[0][9], "10.0 MiB");
        let lines = lines(&report);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[1].starts_with("recommended for client-go: request 100Mi"));
        report.variants[0].subject = None;
        assert_eq!(super::lines(&report), Vec::<String>::new());
    }
}
