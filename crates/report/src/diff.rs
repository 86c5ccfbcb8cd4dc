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

/// The comparison in `format`.
pub fn render_diff(comparison: &Comparison, format: DiffFormat) -> String {
    match format {
        DiffFormat::Table => render_table(comparison),
        DiffFormat::Markdown => render_markdown(comparison),
        DiffFormat::Json => {
            let mut json =
                serde_json::to_string_pretty(comparison).expect("a comparison serializes");
            json.push('\n');
            json
        }
    }
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

fn summary(comparison: &Comparison) -> String {
    let count = |v: Verdict| comparison.rows.iter().filter(|r| r.verdict == v).count();
    let lost = comparison.lost_consistency.len();
    let failed = comparison.failed_variants.len();
    format!(
        "{} regression(s), {} improvement(s), {} within tolerance, {} unchanged{}{}",
        count(Verdict::Regression),
        count(Verdict::Improvement),
        count(Verdict::Within),
        count(Verdict::Unchanged),
        if lost > 0 {
            format!(", {lost} phase(s) whose store stopped matching the server")
        } else {
            String::new()
        },
        if failed > 0 {
            format!(", {failed} variant(s) that failed in the head")
        } else {
            String::new()
        }
    )
}

fn render_table(comparison: &Comparison) -> String {
    let changed: Vec<&Row> = comparison.changed().collect();
    let mut out = format!("{}: {}\n", comparison.scenario, summary(comparison));
    if !changed.is_empty() {
        out.push_str(&format!("{}\n", rows_table(&changed, false)));
    }
    out.push_str(&lost_lines(comparison));
    out.push_str(&failed_lines(comparison));
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
fn value(metric: Metric, v: f64) -> String {
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

fn change(row: &Row) -> String {
    let sign = if row.delta > 0.0 { "+" } else { "-" };
    let delta = if is_time(row.metric) {
        format!("{sign}{:.1} ms", row.delta.abs())
    } else {
        format!("{sign}{}", thousands(row.delta.abs() as u64))
    };
    match row.percent {
        // A change too small for two decimals still shows that it is one.
        Some(p) if p != 0.0 && p.abs() < 0.005 => format!("{delta} ({sign}<0.01%)"),
        Some(p) => format!("{delta} ({p:+.2}%)"),
        None => format!("{delta} (new)"),
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

/// A pull-request comment: the marker, a summary line, the changed metrics, and every
/// metric inside `<details>`; never longer than [`MARKDOWN_LIMIT`] characters, saying
/// what it cut.
fn render_markdown(comparison: &Comparison) -> String {
    let mut head = format!(
        "{MARKDOWN_MARKER}\n### informer-mem: `{}`\n\n{}\n\n",
        cell(&comparison.scenario),
        summary(comparison)
    );
    for lost in &comparison.lost_consistency {
        head.push_str(&format!(
            "- :red_circle: `{}` / `{}`: the store no longer matches the server\n",
            cell(&lost.variant),
            cell(&lost.phase)
        ));
    }
    for failed in &comparison.failed_variants {
        head.push_str(&format!(
            "- :red_circle: `{}` failed in the head after {} of {} phases: {}\n",
            cell(&failed.variant),
            failed.head_phases,
            failed.base_phases,
            cell(failed.error.as_deref().unwrap_or("fewer phases, no error"))
        ));
    }
    let changed: Vec<&Row> = comparison.changed().collect();
    // Room for the closing lines and a note of what was cut.
    let budget = MARKDOWN_LIMIT - 400;
    let mut out = head;
    let mut cut = 0;
    if changed.is_empty() {
        out.push_str("No figure changed.\n");
    } else {
        out.push_str("#### Changed\n\n");
        out.push_str(MARKDOWN_HEADER);
        for row in &changed {
            let line = markdown_row(row);
            if out.len() + line.len() > budget {
                cut += 1;
            } else {
                out.push_str(&line);
            }
        }
    }
    let details_open = format!(
        "\n<details><summary>All {} figures</summary>\n\n{MARKDOWN_HEADER}",
        comparison.rows.len()
    );
    let details_close = "\n</details>\n";
    let mut full_cut = comparison.rows.len();
    if out.len() + details_open.len() + details_close.len() < budget {
        out.push_str(&details_open);
        full_cut = 0;
        for row in &comparison.rows {
            let line = markdown_row(row);
            if out.len() + line.len() + details_close.len() > budget {
                full_cut += 1;
            } else {
                out.push_str(&line);
            }
        }
        out.push_str(details_close);
    }
    if cut > 0 || full_cut > 0 {
        out.push_str(&format!(
            "\n_Cut to stay under GitHub's {MARKDOWN_LIMIT}-character limit: {cut} changed \
             row(s) and {full_cut} row(s) of the full table. `informer-mem diff --format json` \
             has them all._\n"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Tolerances;
    use crate::synthetic::report;

    #[test]
    fn markdown_of_six_variants_and_eight_phases_is_a_github_comment() {
        let base = report(6, 8, 0);
        let head = report(6, 8, 3);
        let comparison = Comparison::new(&base, &head, &Tolerances::default()).unwrap();
        let markdown = render_diff(&comparison, DiffFormat::Markdown);
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
        let markdown = render_diff(&comparison, DiffFormat::Markdown);
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

    #[test]
    fn reports_of_other_variants_cannot_be_compared() {
        let e = Comparison::new(&report(3, 2, 0), &report(2, 2, 0), &Tolerances::default())
            .unwrap_err();
        assert!(e.to_string().contains("variants"), "{e}");
    }
}
