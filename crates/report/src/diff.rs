//! Renders a [`Comparison`]: `diff` as a terminal table, GitHub markdown or JSON, and
//! `check`'s verdict. Only reads the comparison.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, ContentArrangement, Table};

use super::compare::{Comparison, Row, Verdict};
use super::table::{markdown_cell as cell, thousands};
use scenario::metric::Metric;
use units::Bytes;

/// GitHub refuses comments longer than this many characters.
pub const MARKDOWN_LIMIT: usize = 65_536;
/// The hidden line that lets a CI job find and update its own comment.
pub const MARKDOWN_MARKER: &str = "<!-- informer-mem-diff -->";

/// How `diff` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffFormat {
    /// A table of what changed, for a terminal.
    Table,
    /// A pull-request comment.
    Markdown,
    /// The comparison as JSON.
    Json,
}

/// The comparison in `format`. The table lists the advisory figures that moved only when
/// `verbose` (a pull-request comment folds them; JSON has every row).
pub fn render_diff(comparison: &Comparison, format: DiffFormat, verbose: bool) -> String {
    match format {
        DiffFormat::Table => render_table(comparison, verbose),
        DiffFormat::Markdown => render_markdown(comparison),
        DiffFormat::Json => {
            let mut json =
                serde_json::to_string_pretty(comparison).expect("a comparison serializes");
            json.push('\n');
            json
        }
    }
}

/// The rows that moved, as a reviewer reads them: what regressed, then the other exact
/// figures that moved (each one is news: exact figures repeat run to run on one build),
/// then the advisory ones (RSS, durations, a real program's figures), which move on
/// every run.
struct Sections<'c> {
    regressions: Vec<&'c Row>,
    exact: Vec<&'c Row>,
    advisory: Vec<&'c Row>,
}

impl<'c> Sections<'c> {
    fn of(comparison: &'c Comparison) -> Sections<'c> {
        let mut sections = Sections {
            regressions: Vec::new(),
            exact: Vec::new(),
            advisory: Vec::new(),
        };
        for row in comparison.changed() {
            match (row.verdict, row.exact) {
                (Verdict::Regression, _) => sections.regressions.push(row),
                (_, true) => sections.exact.push(row),
                (_, false) => sections.advisory.push(row),
            }
        }
        sections
    }

    /// The verdict in a few words, first thing a reviewer reads.
    fn headline(&self, comparison: &Comparison) -> String {
        let mut parts = Vec::new();
        if !self.regressions.is_empty() {
            parts.push(plural(self.regressions.len(), "regression", "regressions"));
        }
        if !comparison.lost_consistency.is_empty() {
            parts.push(plural(
                comparison.lost_consistency.len(),
                "store that stopped matching the server",
                "stores that stopped matching the server",
            ));
        }
        if !comparison.failed_variants.is_empty() {
            parts.push(plural(
                comparison.failed_variants.len(),
                "variant that failed",
                "variants that failed",
            ));
        }
        let exact = self.exact.len();
        match (parts.is_empty(), exact) {
            (true, 0) => "no exact figure changed".to_owned(),
            (true, _) => format!(
                "{} changed, none beyond tolerance",
                plural(exact, "exact figure", "exact figures")
            ),
            (false, 0) => parts.join(", "),
            (false, _) => format!(
                "{}; {} changed",
                parts.join(", "),
                plural(exact, "other exact figure", "other exact figures")
            ),
        }
    }

    /// How many advisory figures moved and the largest move, or `None` when none did.
    fn advisory_line(&self) -> Option<String> {
        let largest = self.advisory.iter().max_by(|a, b| {
            let size = |r: &Row| r.percent.map_or(f64::INFINITY, f64::abs);
            size(a).total_cmp(&size(b))
        })?;
        Some(format!(
            "{} moved (measured on a real clock or from outside a program: they vary run to \
             run), by at most {} ({}, {} / {})",
            plural(self.advisory.len(), "advisory figure", "advisory figures"),
            percent(largest),
            largest.metric,
            largest.variant,
            largest.phase
        ))
    }
}

/// `n` and the noun in its number: `1 regression`, `2 regressions`.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `check`'s verdict: what failed (or that nothing did), then improvements beyond
/// tolerance, which mean the baseline should be refreshed.
pub fn render_check(comparison: &Comparison) -> String {
    let mut out = String::new();
    let regressions: Vec<&Row> = comparison.regressions().collect();
    let improvements: Vec<&Row> = comparison.improvements().collect();
    if comparison.failed() {
        out.push_str(&format!(
            "FAILED: {} regression(s) beyond tolerance in scenario {:?}\n",
            regressions.len()
                + comparison.lost_consistency.len()
                + comparison.failed_variants.len(),
            comparison.scenario
        ));
        if !regressions.is_empty() {
            out.push_str(&format!("{}\n", rows_table(&regressions, true)));
        }
        out.push_str(&lost_lines(comparison));
        out.push_str(&failed_lines(comparison));
    } else {
        out.push_str(&format!(
            "ok: {} figures of scenario {:?} within tolerance\n",
            comparison.rows.len(),
            comparison.scenario
        ));
    }
    if !improvements.is_empty() {
        out.push_str(&format!(
            "improved beyond tolerance ({}): refresh the baseline to keep them\n{}\n",
            improvements.len(),
            rows_table(&improvements, true)
        ));
    }
    out
}

/// Every row counted by verdict: the line under the headline.
fn counts(comparison: &Comparison) -> String {
    let count = |v: Verdict| comparison.rows.iter().filter(|r| r.verdict == v).count();
    let identical = comparison
        .rows
        .iter()
        .filter(|r| r.verdict == Verdict::Unchanged && r.exact)
        .count();
    format!(
        "{} figures: {} beyond tolerance ({} up, {} down), {} within it, {} unchanged \
         ({identical} of them exact)",
        comparison.rows.len(),
        count(Verdict::Regression) + count(Verdict::Improvement),
        count(Verdict::Regression),
        count(Verdict::Improvement),
        count(Verdict::Within),
        count(Verdict::Unchanged),
    )
}

fn render_table(comparison: &Comparison, verbose: bool) -> String {
    let sections = Sections::of(comparison);
    let mut out = format!(
        "{}: {}\n{}\n",
        comparison.scenario,
        sections.headline(comparison),
        counts(comparison)
    );
    out.push_str(&lost_lines(comparison));
    out.push_str(&failed_lines(comparison));
    if !sections.regressions.is_empty() {
        out.push_str(&format!(
            "regressions:\n{}\n",
            rows_table(&sections.regressions, false)
        ));
    }
    if !sections.exact.is_empty() {
        out.push_str(&format!(
            "exact changes:\n{}\n",
            rows_table(&sections.exact, false)
        ));
    }
    if let Some(line) = sections.advisory_line() {
        if verbose {
            out.push_str(&format!(
                "{line}:\n{}\n",
                rows_table(&sections.advisory, false)
            ));
        } else {
            out.push_str(&format!("{line}; --verbose lists them\n"));
        }
    }
    out
}

/// One line per variant that failed in the head and not in the base, or stopped earlier.
fn failed_lines(comparison: &Comparison) -> String {
    comparison
        .failed_variants
        .iter()
        .map(|failed| {
            let why = failed
                .error
                .as_deref()
                .unwrap_or("it has no error, but fewer phases");
            format!(
                "variant {:?} failed in the head after {} of {} phases: {why}\n",
                failed.variant, failed.head_phases, failed.base_phases
            )
        })
        .collect()
}

/// One line per phase whose store stopped matching the server.
fn lost_lines(comparison: &Comparison) -> String {
    comparison
        .lost_consistency
        .iter()
        .map(|lost| {
            format!(
                "variant {:?}, phase {:?}: the store no longer matches the server\n",
                lost.variant, lost.phase
            )
        })
        .collect()
}

fn rows_table(rows: &[&Row], gated_only: bool) -> Table {
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(["variant", "phase", "metric", "base", "head", "change", ""]);
    for row in rows {
        if gated_only && row.tolerance.is_none() {
            continue;
        }
        table.add_row([
            row.variant.clone(),
            row.phase.clone(),
            row.metric.to_string(),
            value(row.metric, row.base),
            value(row.metric, row.head),
            change(row),
            mark(row.verdict).to_owned(),
        ]);
    }
    for column in 3..6 {
        if let Some(c) = table.column_mut(column) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

fn mark(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Regression => "▲ regression",
        Verdict::Improvement => "▼ improvement",
        Verdict::Within | Verdict::Unchanged => "",
    }
}

/// A value as people read it: counts with separators, bytes in binary units as well,
/// times in milliseconds to a tenth (the server's CPU time is measured finer than a
/// millisecond: 6.8 ms, not 6).
pub(crate) fn value(metric: Metric, v: f64) -> String {
    match metric {
        m if is_time(m) => format!("{v:.1} ms"),
        m if m.is_bytes() => format!("{} ({})", Bytes(v as u64), thousands(v as u64)),
        _ => thousands(v as u64),
    }
}

/// Whether the metric is a time in milliseconds.
fn is_time(metric: Metric) -> bool {
    matches!(
        metric,
        Metric::DurationMs | Metric::ApiServerCpuMs | Metric::SubjectCpuMs
    )
}

/// A change as people read it: bytes in binary units, times in tenths of a millisecond,
/// counts with separators, and the share of the base; never `-0` or `+0.00%` for a
/// change too small to show (`<1 B`, `<0.1 ms`, `<0.01%`).
fn change(row: &Row) -> String {
    if row.delta == 0.0 {
        return "0".to_owned();
    }
    let sign = if row.delta > 0.0 { "+" } else { "-" };
    let size = row.delta.abs();
    let delta = if is_time(row.metric) {
        match size {
            s if s < 0.05 => "<0.1 ms".to_owned(),
            s => format!("{s:.1} ms"),
        }
    } else if size < 0.5 {
        if row.metric.is_bytes() { "<1 B" } else { "<1" }.to_owned()
    } else if row.metric.is_bytes() {
        Bytes(size.round() as u64).to_string()
    } else {
        thousands(size.round() as u64)
    };
    format!("{sign}{delta} ({})", percent(row))
}

/// The change as a share of the base, signed: `+2.09%`, `-<0.01%`, or `new` from zero.
fn percent(row: &Row) -> String {
    let sign = if row.delta > 0.0 { "+" } else { "-" };
    match row.percent {
        None => "new".to_owned(),
        Some(p) if p.abs() < 0.005 => format!("{sign}<0.01%"),
        Some(p) => format!("{sign}{:.2}%", p.abs()),
    }
}

fn markdown_row(row: &Row) -> String {
    format!(
        "| {} | {} | `{}` | {} | {} | {} | {} |\n",
        cell(&row.variant),
        cell(&row.phase),
        row.metric,
        value(row.metric, row.base),
        value(row.metric, row.head),
        change(row),
        match row.verdict {
            Verdict::Regression => ":red_circle: regression",
            Verdict::Improvement => ":green_circle: improvement",
            Verdict::Within if row.tolerance.is_none() => "advisory",
            Verdict::Within => "within tolerance",
            Verdict::Unchanged => "",
        }
    )
}

const MARKDOWN_HEADER: &str =
    "| variant | phase | metric | base | head | change | |\n|---|---|---|---|---|---|---|\n";

/// A pull-request comment: the marker, the verdict in its heading, the regressions and
/// the other exact changes as tables, one line for the advisory figures that moved, then
/// those and every figure folded in `<details>`; never longer than [`MARKDOWN_LIMIT`]
/// characters, saying what it cut.
fn render_markdown(comparison: &Comparison) -> String {
    let sections = Sections::of(comparison);
    let icon = if comparison.failed() {
        ":red_circle: "
    } else {
        ""
    };
    let mut out = format!(
        "{MARKDOWN_MARKER}\n### informer-mem `{}`: {icon}{}\n\n{}\n\n",
        cell(&comparison.scenario),
        sections.headline(comparison),
        counts(comparison)
    );
    for lost in &comparison.lost_consistency {
        out.push_str(&format!(
            "- :red_circle: `{}` / `{}`: the store no longer matches the server\n",
            cell(&lost.variant),
            cell(&lost.phase)
        ));
    }
    for failed in &comparison.failed_variants {
        out.push_str(&format!(
            "- :red_circle: `{}` failed in the head after {} of {} phases: {}\n",
            cell(&failed.variant),
            failed.head_phases,
            failed.base_phases,
            cell(failed.error.as_deref().unwrap_or("fewer phases, no error"))
        ));
    }
    // Room for the closing lines and a note of what was cut.
    let mut budget = Budget {
        left: MARKDOWN_LIMIT - 400,
        cut: 0,
    };
    for (title, rows) in [
        ("Regressions", &sections.regressions),
        ("Exact changes", &sections.exact),
    ] {
        if !rows.is_empty() {
            out.push_str(&format!("\n#### {title}\n\n{MARKDOWN_HEADER}"));
            budget.rows(&mut out, rows);
        }
    }
    if let Some(line) = sections.advisory_line() {
        out.push_str(&format!("\n{line}.\n"));
        budget.folded(&mut out, "Advisory figures that moved", &sections.advisory);
    }
    let all: Vec<&Row> = comparison.rows.iter().collect();
    budget.folded(&mut out, &format!("All {} figures", all.len()), &all);
    if budget.cut > 0 {
        out.push_str(&format!(
            "\n_Cut to stay under GitHub's {MARKDOWN_LIMIT}-character limit: {} row(s). \
             `informer-mem diff --format json` has them all._\n",
            budget.cut
        ));
    }
    out
}

/// What a comment may still hold, and the rows cut for want of room.
struct Budget {
    left: usize,
    cut: usize,
}

impl Budget {
    /// Appends each row that fits, counting the others as cut.
    fn rows(&mut self, out: &mut String, rows: &[&Row]) {
        for row in rows {
            let line = markdown_row(row);
            if out.len() + line.len() > self.left {
                self.cut += 1;
            } else {
                out.push_str(&line);
            }
        }
    }

    /// Appends `rows` folded under `summary`, as many as fit; none when even the fold's
    /// frame does not.
    fn folded(&mut self, out: &mut String, summary: &str, rows: &[&Row]) {
        let open = format!("\n<details><summary>{summary}</summary>\n\n{MARKDOWN_HEADER}");
        let close = "\n</details>\n";
        if out.len() + open.len() + close.len() >= self.left {
            self.cut += rows.len();
            return;
        }
        out.push_str(&open);
        self.left -= close.len();
        self.rows(out, rows);
        self.left += close.len();
        out.push_str(close);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Report;
    use crate::compare::Tolerances;
    use crate::synthetic::report;

    #[test]
    fn markdown_of_six_variants_and_eight_phases_is_a_github_comment() {
        let base = report(6, 8, 0);
        let head = report(6, 8, 3);
        let comparison = Comparison::new(&base, &head, &Tolerances::default()).unwrap();
        let markdown = render_diff(&comparison, DiffFormat::Markdown, false);
        assert!(markdown.starts_with(MARKDOWN_MARKER));
        assert!(markdown.len() <= MARKDOWN_LIMIT);
        // Every table line has the header's seven cells: escaped pipes do not split cells.
        for line in markdown.lines().filter(|l| l.starts_with('|')) {
            let cells = line.replace("\\|", "").matches('|').count();
            assert_eq!(cells, 8, "{line}");
        }
        insta::assert_snapshot!(markdown);
    }

    #[test]
    fn markdown_stays_under_the_limit_and_says_what_it_cut() {
        let base = report(40, 60, 0);
        let head = report(40, 60, 7);
        let comparison = Comparison::new(&base, &head, &Tolerances::default()).unwrap();
        let markdown = render_diff(&comparison, DiffFormat::Markdown, false);
        assert!(markdown.len() <= MARKDOWN_LIMIT, "{}", markdown.len());
        assert!(markdown.contains("Cut to stay under GitHub's 65536-character limit"));
        assert!(markdown.contains(":red_circle: regression"));
    }

    #[test]
    fn check_names_what_regressed_and_what_improved() {
        let base = report(3, 2, 0);
        let head = report(3, 2, 5);
        let comparison = Comparison::new(&base, &head, &Tolerances::default()).unwrap();
        assert!(comparison.failed());
        let text = render_check(&comparison);
        assert!(text.starts_with("FAILED: 2 regression(s)"), "{text}");
        assert!(
            text.contains("variant 1 | piped") && text.contains("alloc_count"),
            "{text}"
        );
        // Variant 2's live bytes fell by 20 KiB of ~64 MB: within the 1% default, so it
        // is not an improvement to report; RSS rose but is not gated.
        assert!(!text.contains("improved beyond tolerance"), "{text}");
        let same = Comparison::new(&base, &base, &Tolerances::default()).unwrap();
        assert!(!same.failed());
        assert!(render_check(&same).starts_with("ok: "));
    }

    #[test]
    fn times_keep_their_tenths_of_a_millisecond() {
        // The server's CPU time 6.831 ms was shown as 6, and a change to 12.767 as +5.
        assert_eq!(value(Metric::ApiServerCpuMs, 6.831), "6.8 ms");
        assert_eq!(value(Metric::SubjectCpuMs, 1_234.0), "1234.0 ms");
        assert_eq!(value(Metric::AllocCount, 1_234.0), "1,234");
    }

    /// `base` with every phase's RSS and duration moved, as a rerun of one build moves them.
    fn rerun(base: &Report) -> Report {
        let mut head = base.clone();
        for (v, variant) in head.variants.iter_mut().enumerate() {
            for phase in &mut variant.phases {
                let m = &mut phase.measurement;
                m.rss_bytes = m.rss_bytes.map(|b| Bytes(b.0 + 4096 * (v as u64 + 1)));
                m.duration_ms += 0.75;
            }
        }
        head
    }

    #[test]
    fn a_rerun_that_moved_only_advisory_figures_says_so_first_and_folds_them() {
        let base = report(3, 2, 0);
        let comparison = Comparison::new(&base, &rerun(&base), &Tolerances::default()).unwrap();
        let markdown = render_diff(&comparison, DiffFormat::Markdown, false);
        let heading = markdown.lines().nth(1).unwrap();
        assert!(heading.ends_with(": no exact figure changed"), "{heading}");
        assert!(markdown.contains("12 advisory figures moved"), "{markdown}");
        let folded = markdown.find("<details>").unwrap();
        let first_advisory = markdown.find("| advisory |").unwrap();
        assert!(first_advisory > folded, "{markdown}");
        assert!(!markdown.contains("#### "), "{markdown}");

        let table = render_diff(&comparison, DiffFormat::Table, false);
        let first = table.lines().next().unwrap();
        assert_eq!(first, "synthetic: no exact figure changed");
        assert!(table.contains("--verbose lists them"), "{table}");
        assert!(!table.contains("rss_bytes  "), "{table}");
        let verbose = render_diff(&comparison, DiffFormat::Table, true);
        assert!(verbose.contains("rss_bytes"), "{verbose}");
        assert!(verbose.contains("duration_ms"), "{verbose}");
    }

    /// A program's variant: the built-in server's allocations while it serves the
    /// program follow the program's timing, so a rerun moves them, and they are advisory.
    #[test]
    fn an_external_variants_run_figures_are_advisory_in_a_diff() {
        let definition =
            serde_json::json!({"command": ["./controller"], "quiet_ms": 2000, "timeout_ms": 1000});
        let subject: crate::SubjectReport =
            serde_json::from_value(serde_json::json!({ "definition": definition })).unwrap();
        let mut base = report(2, 2, 0);
        base.variants[1].subject = Some(Box::new(subject));
        let mut head = rerun(&base);
        head.variants[1].phases[0].measurement.alloc_count += 12_345;
        let comparison = Comparison::new(&base, &head, &Tolerances::default()).unwrap();
        let moved = comparison
            .changed()
            .find(|r| r.metric == Metric::AllocCount)
            .unwrap();
        assert!(!moved.exact, "{moved:?}");
        let table = render_diff(&comparison, DiffFormat::Table, false);
        assert_eq!(
            table.lines().next().unwrap(),
            "synthetic: no exact figure changed"
        );
        assert!(!comparison.failed());

        // The same move in a built-in variant is exact news.
        let mut head = rerun(&base);
        head.variants[0].phases[0].measurement.alloc_count += 1;
        let comparison = Comparison::new(&base, &head, &Tolerances::default()).unwrap();
        let table = render_diff(&comparison, DiffFormat::Table, false);
        assert_eq!(table.lines().next().unwrap(), "synthetic: 1 regression");
    }

    #[test]
    fn regressions_lead_then_the_other_exact_changes_then_the_advisory_line() {
        let base = report(3, 2, 0);
        let head = rerun(&report(3, 2, 5));
        let comparison = Comparison::new(&base, &head, &Tolerances::default()).unwrap();
        let markdown = render_diff(&comparison, DiffFormat::Markdown, false);
        let heading = markdown.lines().nth(1).unwrap();
        assert!(
            heading.ends_with(": :red_circle: 2 regressions; 2 other exact figures changed"),
            "{heading}"
        );
        let at = |text: &str| markdown.find(text).unwrap_or_else(|| panic!("{text}"));
        assert!(
            at("#### Regressions") < at("#### Exact changes"),
            "{markdown}"
        );
        assert!(
            at("#### Exact changes") < at("advisory figures moved"),
            "{markdown}"
        );
        let table = render_diff(&comparison, DiffFormat::Table, false);
        assert!(
            table.find("regressions:") < table.find("exact changes:"),
            "{table}"
        );
    }

    fn row(metric: Metric, base: f64, head: f64) -> Row {
        Row {
            variant: "v".to_owned(),
            phase: "list".to_owned(),
            metric,
            base,
            head,
            delta: head - base,
            percent: (base != 0.0).then(|| (head - base) / base * 100.0),
            tolerance: None,
            exact: metric.is_exact(),
            verdict: Verdict::Within,
        }
    }

    #[test]
    fn changes_read_in_their_units_and_never_as_minus_zero() {
        let cases = [
            (
                row(Metric::ApiServerLiveBytes, 526_444.0, 515_439.0),
                "-10.7 KiB (-2.09%)",
            ),
            (row(Metric::LiveBytes, 1_000.0, 1_200.0), "+200 B (+20.00%)"),
            (row(Metric::DurationMs, 12.51, 12.49), "-<0.1 ms (-0.16%)"),
            (
                row(Metric::ApiServerCpuMs, 40_000.0, 40_000.02),
                "+<0.1 ms (+<0.01%)",
            ),
            (
                row(Metric::AllocCount, 1_000_000.0, 999_999.7),
                "-<1 (-<0.01%)",
            ),
            (row(Metric::AllocCount, 0.0, 12.0), "+12 (new)"),
            (row(Metric::AllocCount, 7.0, 7.0), "0"),
        ];
        for (row, shown) in cases {
            assert_eq!(change(&row), shown, "{:?}", row.metric);
        }
    }

    #[test]
    fn reports_of_other_variants_cannot_be_compared() {
        let e = Comparison::new(&report(3, 2, 0), &report(2, 2, 0), &Tolerances::default())
            .unwrap_err();
        assert!(e.to_string().contains("variants"), "{e}");
    }
}
