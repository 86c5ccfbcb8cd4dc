//! The terminal table: variant x phase, in human units.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, ContentArrangement, Table};

mod subject;

use super::{PhaseReport, Report, VariantReport, fit, recommend};
use measure::dhat::Allocator;
use subject::{SUBJECT_NOTE, UNCHECKED_NOTE, add_subject_rows};
use units::Bytes;

/// How many columns the table has.
const WIDTH: usize = 11;

/// The columns, and whether each is right-aligned (numbers).
const COLUMNS: [(&str, bool); WIDTH] = [
    ("variant", false),
    ("phase", false),
    ("objects", true),
    ("live", true),
    ("kept", true),
    ("peak", true),
    ("peak/live", true),
    ("allocs", true),
    ("others", true),
    ("resident*", true),
    ("store", false),
];

/// What the columns mean, one note per line; the external variants' note when any.
fn all_notes(report: &Report) -> Vec<&'static str> {
    let mut notes = notes(report).to_vec();
    if report.variants.iter().any(|v| v.subject.is_some()) {
        notes.push(SUBJECT_NOTE);
    }
    let phases = || report.variants.iter().flat_map(|v| &v.phases);
    if phases().any(|p| !p.store_checked()) {
        notes.push(UNCHECKED_NOTE);
    }
    notes
}

/// What the columns mean, one note per line.
fn notes(report: &Report) -> [&'static str; 5] {
    let attributed = report
        .variants
        .iter()
        .flat_map(|v| &v.phases)
        .all(|p| p.measurement.components.is_some());
    [
        if report.tool.allocator == Allocator::Dhat {
            "live, peak, allocs: the whole process's, from dhat (heap-profiling build: a \
             reallocation counts as a new block, peak is the run's so far)"
        } else if attributed {
            "live, peak, allocs: the informer's own, exact (counting allocator, by component); \
             others: live bytes of the apiserver and the harness"
        } else {
            "live, peak, allocs: the whole process's, exact (a report from before attribution)"
        },
        "kept: live as a share of live after the first phase",
        "peak/live: the phase's peak over what is live at its end",
        "* resident: jemalloc's resident bytes for the whole process, advisory (pages decay \
         back to the OS over ~10 s)",
        "store: the informer's store against the server's objects (keys, resourceVersions, UIDs)",
    ]
}

/// The figures a built-in variant's row shows (and its progress line): the informer's own
/// when the report splits them by component, the whole process's otherwise.
#[derive(Debug, Clone, Copy)]
pub struct Shown {
    /// Live bytes at the phase's end.
    pub live: Bytes,
    /// The peak of live bytes within the phase.
    pub peak: Bytes,
    /// Allocations within the phase.
    pub allocs: u64,
    /// Everything else live in the process (apiserver and harness), when split.
    pub others: Option<Bytes>,
}

impl Shown {
    /// The figures of `phase`.
    pub fn of(phase: &PhaseReport) -> Shown {
        let m = &phase.measurement;
        match &m.components {
            Some(c) => Shown {
                live: c.informer.live_bytes,
                peak: c.informer.peak_live_bytes,
                allocs: c.informer.alloc_count,
                others: Some(Bytes(m.live_bytes.0 - c.informer.live_bytes.0)),
            },
            None => Shown {
                live: m.live_bytes,
                peak: m.peak_live_bytes,
                allocs: m.alloc_count,
                others: None,
            },
        }
    }
}

/// Renders the report as a terminal table followed by its notes.
pub fn render_table(report: &Report) -> String {
    let table = terminal_table(&COLUMNS, rows(report));
    let mut out = format!("{}: {}\n{table}\n", report.scenario.name, about(report));
    for note in all_notes(report) {
        out.push_str(note);
        out.push('\n');
    }
    push_terminal(&mut out, &EVENT_COLUMNS, event_rows(report), &EVENT_NOTES);
    push_terminal(
        &mut out,
        &SERVER_COLUMNS,
        server_rows(report),
        server_notes(report),
    );
    push_terminal(&mut out, &fit::COLUMNS, fit::rows(report), &fit::NOTES);
    push_terminal(
        &mut out,
        &recommend::COLUMNS,
        recommend::rows(report),
        &[recommend::NOTE],
    );
    for line in recommend::lines(report) {
        out.push_str(&line);
        out.push('\n');
    }
    for (name, error) in failures(report) {
        out.push_str(&format!("variant {name:?} failed: {error}\n"));
    }
    out
}

/// Appends a terminal table and its notes, one a line, when it has rows.
fn push_terminal<const N: usize>(
    out: &mut String,
    columns: &[(&str, bool); N],
    rows: Vec<[String; N]>,
    notes: &[&str],
) {
    if rows.is_empty() {
        return;
    }
    out.push_str(&format!("{}\n", terminal_table(columns, rows)));
    for note in notes {
        out.push_str(note);
        out.push('\n');
    }
}

/// Appends a markdown table and its notes as a list, when it has rows.
fn push_markdown<const N: usize>(
    out: &mut String,
    columns: &[(&str, bool); N],
    rows: Vec<[String; N]>,
    notes: &[&str],
) {
    if rows.is_empty() {
        return;
    }
    out.push('\n');
    out.push_str(&markdown_table(columns, rows));
    out.push('\n');
    for note in notes {
        out.push_str(&format!("- {note}\n"));
    }
}

/// Renders the report as GitHub markdown: a heading, the table and its notes.
pub fn render_markdown(report: &Report) -> String {
    let mut out = format!(
        "### informer-mem: `{}`\n\n{}\n\n",
        markdown_cell(&report.scenario.name),
        markdown_cell(&about(report))
    );
    out.push_str(&markdown_table(&COLUMNS, rows(report)));
    out.push('\n');
    for note in all_notes(report) {
        // A leading `*` would start emphasis.
        out.push_str(&format!("- {}\n", note.replace('*', "\\*")));
    }
    push_markdown(&mut out, &EVENT_COLUMNS, event_rows(report), &EVENT_NOTES);
    push_markdown(
        &mut out,
        &SERVER_COLUMNS,
        server_rows(report),
        server_notes(report),
    );
    push_markdown(&mut out, &fit::COLUMNS, fit::rows(report), &fit::NOTES);
    push_markdown(
        &mut out,
        &recommend::COLUMNS,
        recommend::rows(report),
        &[recommend::NOTE],
    );
    for line in recommend::lines(report) {
        out.push_str(&format!("- {}\n", markdown_cell(&line)));
    }
    for (name, error) in failures(report) {
        out.push_str(&format!(
            "- :x: variant `{}` failed: {}\n",
            markdown_cell(name),
            markdown_cell(error)
        ));
    }
    out
}

/// A terminal table of `rows` under `columns` (name, right-aligned).
fn terminal_table<const N: usize>(columns: &[(&str, bool); N], rows: Vec<[String; N]>) -> Table {
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(columns.map(|(name, _)| name));
    for row in rows {
        table.add_row(row);
    }
    for (i, (_, right)) in columns.iter().enumerate() {
        if let (true, Some(c)) = (right, table.column_mut(i)) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

/// A GitHub markdown table of `rows` under `columns` (name, right-aligned).
fn markdown_table<const N: usize>(columns: &[(&str, bool); N], rows: Vec<[String; N]>) -> String {
    let line = |cells: &mut dyn Iterator<Item = String>| {
        let cells: Vec<String> = cells.collect();
        format!("| {} |\n", cells.join(" | "))
    };
    let mut out = line(&mut columns.iter().map(|(name, _)| (*name).to_owned()));
    out.push_str(&line(
        &mut columns
            .iter()
            .map(|(_, right)| if *right { "---:" } else { "---" }.to_owned()),
    ));
    for row in rows {
        out.push_str(&line(&mut row.iter().map(|c| markdown_cell(c))));
    }
    out
}

/// A markdown table cell: pipes and backticks escaped, no line breaks, and no HTML (a
/// name from a scenario file is text, never markup in a pull request's comment).
pub(crate) fn markdown_cell(text: &str) -> String {
    text.replace('|', "\\|")
        .replace('`', "\\`")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace(|c: char| c.is_control(), " ")
}

/// `10,000 Pod objects, seed 1 (scenarios/x.toml)`.
fn about(report: &Report) -> String {
    let objects = &report.scenario.objects;
    let mut about = match &report.scenario.sweep {
        Some(sweep) => format!(
            "{} objects at {} = {}, seed {} ({})",
            objects.kind,
            sweep.key,
            sweep
                .values
                .iter()
                .map(|v| thousands(*v))
                .collect::<Vec<_>>()
                .join(", "),
            objects.seed,
            report.scenario.file,
        ),
        None => format!(
            "{} {} objects, seed {} ({})",
            thousands(objects.count),
            objects.kind,
            objects.seed,
            report.scenario.file,
        ),
    };
    if let Some(sample) = &objects.sample {
        about = format!(
            "{about}; copies of the {} object{} in {}",
            sample.len(),
            if sample.len() == 1 { "" } else { "s" },
            sample.file
        );
    }
    if let Some(server) = &report.server {
        about = if server.read_only {
            format!(
                "the {} objects already on kube-apiserver {} at {}, read only ({})",
                objects.kind, server.version, server.url, report.scenario.file
            )
        } else if server.started_by_run {
            format!(
                "{about}, on kube-apiserver {} which the run started (servers/kube-apiserver); \
                 exact figures vary run to run against a real server",
                server.version
            )
        } else {
            format!(
                "{about}, on kube-apiserver {} at {}; exact figures vary run to run against \
                 a real server",
                server.version, server.url
            )
        };
    }
    about
}

fn failures(report: &Report) -> impl Iterator<Item = (&str, &str)> {
    report
        .variants
        .iter()
        .filter_map(|v| Some((v.name.as_str(), v.error.as_deref()?)))
}

fn rows(report: &Report) -> Vec<[String; WIDTH]> {
    let mut rows = Vec::new();
    for variant in &report.variants {
        add_rows(&mut rows, variant);
    }
    rows
}

fn add_rows(rows: &mut Vec<[String; WIDTH]>, variant: &VariantReport) {
    if let Some(subject) = &variant.subject {
        return add_subject_rows(rows, variant, subject);
    }
    let first_live = variant.phases.first().map(|p| Shown::of(p).live);
    for (i, phase) in variant.phases.iter().enumerate() {
        let shown = Shown::of(phase);
        let kept = match first_live {
            Some(first) if i > 0 => format!("{:.1}%", shown.live.ratio_of(first) * 100.0),
            _ => String::new(),
        };
        rows.push([
            if i == 0 {
                variant.name.clone()
            } else {
                String::new()
            },
            phase.name.clone(),
            thousands(phase.objects),
            shown.live.to_string(),
            kept,
            shown.peak.to_string(),
            format!("{:.2}x", shown.peak.ratio_of(shown.live)),
            thousands(shown.allocs),
            shown
                .others
                .map_or_else(|| "-".to_owned(), |b| b.to_string()),
            phase
                .measurement
                .jemalloc
                .map_or_else(|| "-".to_owned(), |j| j.resident.to_string()),
            store_verdict(phase),
        ]);
    }
    if variant.phases.is_empty() {
        let mut row: [String; WIDTH] = Default::default();
        row[0] = variant.name.clone();
        row[1] = "(failed)".to_owned();
        rows.push(row);
    }
}

/// The columns of the events table (variants with queues and handlers).
const EVENT_COLUMNS: [(&str, bool); 11] = [
    ("variant", false),
    ("phase", false),
    ("LIST/WATCH", true),
    ("terminated", true),
    ("states read", true),
    ("add", true),
    ("update", true),
    ("delete", true),
    ("sync", true),
    ("queue peak", true),
    ("synced at (informer; handlers)", false),
];

const EVENT_NOTES: [&str; 4] = [
    "terminated: watches the apiserver ended for reading too slowly; states read: watches \
     whose client read every initial ADDED event (a watch at resourceVersion 0 or a \
     watch-list); (not synced): the informer had no complete state when the churn ended",
    "add, update, delete, sync: notifications handled in the phase, every handler together; \
     (uid N): updates whose old and new UIDs differ",
    "queue peak: most entries waiting, and the heap of the queue's own containers (objects \
     are the store's)",
    "synced at: virtual time after the informer started at which it, and each handler, \
     reported HasSynced (earliest-latest over several informers or more than four \
     handlers); - while not",
];

/// The server table's columns, and whether each is right-aligned.
const SERVER_COLUMNS: [(&str, bool); 10] = [
    ("variant", false),
    ("phase", false),
    ("watches", true),
    ("events sent", true),
    ("bytes sent", true),
    ("server allocs", true),
    ("server allocated", true),
    ("per event sent", true),
    ("server CPU ~", true),
    ("server peak", true),
];

/// What the server table's columns mean.
const SERVER_NOTES: [&str; 2] = [
    "the built-in apiserver's side, exact: watches open (the informers' and the plain \
     `watchers`), watch events and response bytes it sent, its allocations, the bytes it \
     allocated and their share per event sent (- in a phase that served a LIST), its peak \
     live bytes; server CPU ~ (advisory): the CPU time the process's one thread spent \
     working for the server (its CPU clock read at each change between informer, server and \
     harness), and per event sent",
    "shared: one encoding per event for every watch (KEP-1152, `share_encodings`); \
     per watch: each watch's copy encoded on its own",
];

/// What the server table's columns mean for a real kube-apiserver's figures.
const KUBE_APISERVER_NOTES: [&str; 2] = [
    "kube-apiserver's side, advisory: watches open (the informers' and the plain \
     `watchers`), watch events and response bytes the informer read (the watchers read as \
     many), the growth of its go_memstats_mallocs_total and go_memstats_alloc_bytes_total \
     over the phase (the whole process: servers/kube-apiserver holds etcd too), their share \
     per event the informer read (- in a phase that served a LIST), the growth of its \
     process_cpu_seconds_total (10 ms steps); server peak: with --server-pid, its process's \
     RSS high-water mark within the phase and how far it rose above the phase's start, \
     else its heap in use (go_memstats_heap_inuse_bytes) at the phase's end",
    "shared: kube-apiserver encodes each event once for every watch (KEP-1152)",
];

fn server_notes(report: &Report) -> &'static [&'static str] {
    if report.server.is_some() {
        &KUBE_APISERVER_NOTES
    } else {
        &SERVER_NOTES
    }
}

/// A phase's server figures for the server table: allocations, bytes allocated, and the
/// last column (the built-in server's peak, or a real server's heap in use).
struct ServerFigures {
    sent: u64,
    bytes: u64,
    allocs: u64,
    allocated: u64,
    cpu_ms: Option<f64>,
    last: String,
}

fn server_figures(real: bool, phase: &PhaseReport) -> Option<ServerFigures> {
    if real {
        let k = phase.kube_apiserver.as_ref()?;
        Some(ServerFigures {
            sent: k.events_sent,
            bytes: k.bytes_sent,
            allocs: k.alloc_count,
            allocated: k.alloc_bytes,
            cpu_ms: Some(k.cpu_ms as f64),
            last: match k
                .process
                .and_then(|p| Some((p.rss_start_bytes, p.rss_peak_bytes?)))
            {
                Some((start, peak)) => {
                    format!("{peak} RSS (+{})", Bytes(peak.0.saturating_sub(start.0)))
                }
                None => format!("{} heap", Bytes(k.heap_inuse_bytes)),
            },
        })
    } else {
        let server = phase.measurement.components?.apiserver;
        Some(ServerFigures {
            sent: phase.api_requests.watch_events,
            bytes: phase.api_requests.bytes,
            allocs: server.alloc_count,
            allocated: server.alloc_bytes.0,
            cpu_ms: server.cpu_ms,
            last: server.peak_live_bytes.to_string(),
        })
    }
}

/// Rows of the server table: every phase of every variant, when a variant sets the
/// server's side (`watchers`, `share_encodings`) or the report has a real server's
/// figures.
fn server_rows(report: &Report) -> Vec<[String; 10]> {
    let real = report.server.is_some();
    let any = report.variants.iter().any(|v| {
        if real {
            v.phases.iter().any(|p| p.kube_apiserver.is_some())
        } else {
            !v.server.is_default()
        }
    });
    if !any {
        return Vec::new();
    }
    let mut rows = Vec::new();
    for variant in &report.variants {
        let watches = variant.config.informer_processes() + variant.server.watchers;
        let encoding = if real || variant.server.share_encodings {
            "shared"
        } else {
            "per watch"
        };
        for (i, phase) in variant.phases.iter().enumerate() {
            let Some(figures) = server_figures(real, phase) else {
                continue;
            };
            let sent = figures.sent;
            // A phase that served a LIST spent most of its allocations on it.
            let per_event = (sent > 0 && phase.api_requests.list == 0).then_some(sent);
            let cpu = match (figures.cpu_ms, per_event) {
                (None, _) => "-".to_owned(),
                (Some(ms), None) => format!("{ms:.1} ms"),
                (Some(ms), Some(n)) => format!("{ms:.1} ms ({:.2} µs)", ms * 1e3 / n as f64),
            };
            rows.push([
                if i == 0 {
                    variant.name.clone()
                } else {
                    String::new()
                },
                phase.name.clone(),
                format!("{watches} ({encoding})"),
                thousands(sent),
                Bytes(figures.bytes).to_string(),
                thousands(figures.allocs),
                Bytes(figures.allocated).to_string(),
                per_event.map_or("-".to_owned(), |n| Bytes(figures.allocated / n).to_string()),
                cpu,
                figures.last,
            ]);
        }
    }
    rows
}

/// Rows of the events table: one per phase of every variant that has a queue, or of every
/// variant when the apiserver terminated a watch or an informer was left without its state.
fn event_rows(report: &Report) -> Vec<[String; 11]> {
    let watches = report
        .variants
        .iter()
        .flat_map(|v| &v.phases)
        .any(|p| p.api_requests.watchers_terminated > 0 || !p.informer_synced);
    let mut rows = Vec::new();
    for variant in &report.variants {
        let mut first = true;
        for phase in &variant.phases {
            let handled = phase.subject.as_ref().and_then(|s| s.handled);
            if phase.events.is_none() && handled.is_none() && !watches {
                continue;
            }
            let requests = &phase.api_requests;
            let mut row: [String; 11] = Default::default();
            row[..5].clone_from_slice(&[
                if std::mem::take(&mut first) {
                    variant.name.clone()
                } else {
                    String::new()
                },
                if phase.informer_synced {
                    phase.name.clone()
                } else {
                    format!("{} (not synced)", phase.name)
                },
                format!("{}/{}", thousands(requests.list), thousands(requests.watch)),
                thousands(requests.watchers_terminated),
                thousands(requests.initial_events_completed),
            ]);
            match &phase.events {
                Some(events) => {
                    let d = &events.delivered;
                    let queue_len: u64 = events.informers.iter().map(|i| i.queue.peak_len).sum();
                    let queue_bytes: u64 =
                        events.informers.iter().map(|i| i.queue.peak_bytes).sum();
                    let update = if events.uid_changed_updates > 0 {
                        format!(
                            "{} (uid {})",
                            thousands(d.update),
                            thousands(events.uid_changed_updates)
                        )
                    } else {
                        thousands(d.update)
                    };
                    row[5..].clone_from_slice(&[
                        thousands(d.add),
                        update,
                        thousands(d.delete),
                        thousands(d.sync),
                        format!("{} ({})", thousands(queue_len), Bytes(queue_bytes)),
                        synced_at(&events.informers),
                    ]);
                }
                // A program that reports what its handlers did (status protocol).
                None => match phase.subject.as_ref().and_then(|s| s.handled) {
                    Some(d) => row[5..].clone_from_slice(&[
                        thousands(d.add),
                        thousands(d.update),
                        thousands(d.delete),
                        thousands(d.sync),
                        "-".to_owned(),
                        "-".to_owned(),
                    ]),
                    // No queue: nothing to count notifications by.
                    None => row[5..].fill_with(|| "-".to_owned()),
                },
            }
            rows.push(row);
        }
    }
    rows
}

/// `0 ms; 0 ms, 20,000 ms`: the informer, then each handler. Several informers, or more
/// handlers than [`HANDLERS_LISTED`], are shown as ranges, so that the column stays
/// narrow with a thousand handlers: `0 ms; 0-20,000 ms (25 handlers)`.
fn synced_at(informers: &[super::InformerEventsReport]) -> String {
    let at =
        |ms: Option<u64>| ms.map_or_else(|| "-".to_owned(), |ms| format!("{} ms", thousands(ms)));
    // One time when all agree, else the earliest and the latest; `-` while any has not.
    let range = |times: Vec<Option<u64>>| -> String {
        let known: Option<Vec<u64>> = times.into_iter().collect();
        match known.as_deref() {
            None | Some([]) => "-".to_owned(),
            Some(times) => {
                let (low, high) = (times.iter().min(), times.iter().max());
                match (low, high) {
                    (Some(&low), Some(&high)) if low == high => at(Some(low)),
                    (Some(&low), Some(&high)) => {
                        format!("{}-{} ms", thousands(low), thousands(high))
                    }
                    _ => "-".to_owned(),
                }
            }
        }
    };
    let informer_times = range(informers.iter().map(|i| i.synced_at_ms).collect());
    match informers {
        _ if informers.iter().all(|i| i.handlers.is_empty()) => {
            format!("{informer_times}; no handlers")
        }
        [one] if one.handlers.len() <= HANDLERS_LISTED => {
            let handlers: Vec<String> = one.handlers.iter().map(|h| at(h.synced_at_ms)).collect();
            format!("{informer_times}; {}", handlers.join(", "))
        }
        _ => {
            let handler_times: Vec<_> = informers
                .iter()
                .flat_map(|i| &i.handlers)
                .map(|h| h.synced_at_ms)
                .collect();
            let count = thousands(handler_times.len() as u64);
            format!(
                "{informer_times}; {} ({count} handlers)",
                range(handler_times)
            )
        }
    }
}

/// The most handlers of one informer the events table names one by one.
const HANDLERS_LISTED: usize = 4;

/// `ok`, or what differs: `3 missing, 1 stale` (`(expected)` when the scenario says so).
fn store_verdict(phase: &PhaseReport) -> String {
    let c = &phase.consistency;
    if c.consistent {
        return "ok".to_owned();
    }
    let parts: Vec<String> = [
        ("missing", c.missing),
        ("extra", c.extra),
        ("stale", c.stale),
    ]
    .into_iter()
    .filter(|&(_, n)| n > 0)
    .map(|(what, n)| format!("{} {what}", thousands(n)))
    .collect();
    let expected = if phase.expect_consistent {
        ""
    } else {
        " (expected)"
    };
    format!("{}{expected}", parts.join(", "))
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(578_023), "578,023");
        assert_eq!(thousands(12_345_678), "12,345,678");
    }

    #[test]
    fn synced_at_names_a_few_handlers_and_ranges_over_many() {
        use crate::{HandlerReport, InformerEventsReport, QueueReport};
        let handler = |synced_at_ms| HandlerReport {
            delivered: Default::default(),
            peak_buffered: 0,
            peak_buffer_bytes: 0,
            synced_at_ms,
            cost_ms: 0,
        };
        let informer = |synced_at_ms, handlers: &[Option<u64>]| InformerEventsReport {
            queue: QueueReport {
                kind: scenario::QueueKind::RealFifo,
                peak_len: 0,
                peak_bytes: 0,
            },
            synced_at_ms,
            uid_changed_updates: 0,
            handlers: handlers.iter().copied().map(handler).collect(),
        };
        let few = [informer(Some(0), &[Some(0), Some(20_000)])];
        assert_eq!(synced_at(&few), "0 ms; 0 ms, 20,000 ms");
        let many = [informer(Some(0), &[Some(5); 1000])];
        assert_eq!(synced_at(&many), "0 ms; 5 ms (1,000 handlers)");
        let several = [informer(Some(0), &[Some(0)]), informer(Some(3), &[None])];
        assert_eq!(synced_at(&several), "0-3 ms; - (2 handlers)");
        assert_eq!(synced_at(&[informer(None, &[])]), "-; no handlers");
    }
}
