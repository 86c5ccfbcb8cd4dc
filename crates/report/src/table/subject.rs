//! The rows of an external variant (a program measured from outside) in the main table,
//! and what its columns mean there.

use super::{WIDTH, store_verdict, thousands};
use crate::{PhaseReport, SubjectFigures, SubjectReport, VariantReport};
use units::Bytes;

/// What the columns of an external variant's rows mean.
pub(super) const SUBJECT_NOTE: &str = "external variants (a program measured from outside): live is its Go \
     heap after a forced GC (HeapAlloc, or what the program reports after its own GC; - \
     without either), kept that heap's growth over its \
     setup as a share of the first phase's, peak the largest heap its runtime reported at \
     any collection in the phase (Go's gctrace, V8's --trace-gc, the JVM's -Xlog:gc; or, \
     where it reports none, the highest HeapAlloc of a sample every 200 ms) (~), allocs \
     the runtime's Mallocs in the phase (~), others its CPU time in the phase (with the \
     share of it answering the run's requests took, to 10 ms clock ticks: \
     observer_cpu_ms) and the collections its runtime reported; none of them repeat \
     exactly run to run; \
     resident* is the program's RSS at the phase's end (peak: its high-water mark within \
     the phase, the kernel's VmHWM reset at the phase's start; N processes: the sum over \
     the processes its command started)";

/// What `unchecked` in the store column means, when a row has it.
pub(super) const UNCHECKED_NOTE: &str = "store unchecked: the program serves no status, so its store was \
     not read (the phase ended once it was quiet)";

/// The rows of an external variant: its program's figures in the same columns.
pub(super) fn add_subject_rows(
    rows: &mut Vec<[String; WIDTH]>,
    variant: &VariantReport,
    subject: &SubjectReport,
) {
    let live = |p: &PhaseReport| p.subject.as_ref().and_then(|s| s.live_heap());
    let base = subject
        .setup
        .as_ref()
        .and_then(|s| s.live_heap())
        .map_or(0, |b| b.0);
    let first = variant.phases.first().and_then(live);
    for (i, phase) in variant.phases.iter().enumerate() {
        let Some(figures) = &phase.subject else {
            continue;
        };
        let heap = figures.heap;
        let kept = match (first, figures.live_heap()) {
            (Some(first), Some(now)) if i > 0 => format!(
                "{:.1}%",
                Bytes(now.0.saturating_sub(base)).ratio_of(Bytes(first.0.saturating_sub(base)))
                    * 100.0
            ),
            _ => String::new(),
        };
        let dash = || "-".to_owned();
        rows.push([
            if i == 0 {
                format!("{} (external)", variant.name)
            } else {
                String::new()
            },
            phase.name.clone(),
            if figures.store_checked {
                thousands(phase.objects)
            } else {
                dash()
            },
            figures.live_heap().map_or_else(dash, |b| b.to_string()),
            kept,
            figures
                .heap_peak_bytes
                .map_or_else(dash, |b| format!("~{b}")),
            match (figures.heap_peak_bytes, figures.live_heap()) {
                (Some(peak), Some(live)) => format!("{:.2}x", peak.ratio_of(live)),
                _ => dash(),
            },
            heap.map_or_else(dash, |h| format!("~{}", thousands(h.allocs))),
            subject_others(figures),
            figures.rss_shown(),
            if figures.store_checked {
                store_verdict(phase)
            } else {
                "unchecked".to_owned()
            },
        ]);
    }
    if variant.phases.is_empty() {
        let mut row: [String; WIDTH] = Default::default();
        row[0] = format!("{} (external)", variant.name);
        row[1] = "(failed)".to_owned();
        rows.push(row);
    }
}

/// An external row's `others`: the program's CPU time in the phase, the share of it that
/// answering the run took, and its collections.
fn subject_others(figures: &SubjectFigures) -> String {
    let mut shown = format!("{} ms CPU", thousands(figures.cpu_ms));
    if let Some(share) = figures.observer_share() {
        shown.push_str(&format!(" ({share:.1}% the run's)"));
    }
    match figures.gc_cycles.len() {
        0 => shown,
        n => format!("{shown}, {n} GCs"),
    }
}
