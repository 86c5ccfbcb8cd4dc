//! A report in the formats other tools read: the report's own JSON, GitHub markdown,
//! github-action-benchmark's `customSmallerIsBetter` JSON, Bencher's metric format (BMF)
//! and the SVG chart.
//!
//! The benchmark formats carry the exact memory figures only (allocations, bytes
//! requested, live and peak bytes per variant and phase, for the process and for the
//! informer alone): they feed dashboards and threshold alerts, where advisory figures
//! (RSS, resident, durations) would raise false alarms. `check` gates every figure; the
//! report keeps them all.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{PhaseReport, Report, chart, table};
use scenario::metric::Metric;

/// What `--export-*` and `export --format` write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// The report itself, as `run --out` writes it.
    Json,
    /// The results table as GitHub markdown.
    Markdown,
    /// github-action-benchmark's `customSmallerIsBetter` input.
    GithubBenchmark,
    /// Bencher's metric format (BMF) JSON.
    Bencher,
    /// The chart (SVG).
    Svg,
}

impl ExportFormat {
    /// What the output is, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            ExportFormat::Json => "the JSON report",
            ExportFormat::Markdown => "the markdown table",
            ExportFormat::GithubBenchmark => "the github-action-benchmark JSON",
            ExportFormat::Bencher => "the Bencher BMF JSON",
            ExportFormat::Svg => "the chart",
        }
    }
}

/// The report in `format`.
pub fn render(report: &Report, format: ExportFormat) -> String {
    match format {
        ExportFormat::Json => report.to_json(),
        ExportFormat::Markdown => table::render_markdown(report),
        ExportFormat::GithubBenchmark => pretty(&github_benchmark(report)),
        ExportFormat::Bencher => pretty(&bencher(report)),
        // A sweep's chart has the swept key on its x axis, not the phases.
        ExportFormat::Svg => match &report.scenario.sweep {
            Some(sweep) => super::sweep_chart::render_svg(report, sweep),
            None => chart::render_svg(report),
        },
    }
}

fn pretty(value: &impl Serialize) -> String {
    let mut json = serde_json::to_string_pretty(value).expect("exports serialize");
    json.push('\n');
    json
}

/// An exported figure: its name in the benchmark formats, its unit, its value.
struct Figure {
    metric: &'static str,
    unit: &'static str,
    value: u64,
}

/// The metrics the benchmark formats carry: the process's exact memory figures, then the
/// informer's own.
const EXPORTED: [Metric; 8] = [
    Metric::AllocCount,
    Metric::AllocBytes,
    Metric::LiveBytes,
    Metric::PeakLiveBytes,
    Metric::InformerAllocCount,
    Metric::InformerAllocBytes,
    Metric::InformerLiveBytes,
    Metric::InformerPeakLiveBytes,
];

/// The exported figures a phase has (the informer's only in reports with components).
fn figures(phase: &PhaseReport) -> Vec<Figure> {
    EXPORTED
        .into_iter()
        .filter_map(|metric| {
            Some(Figure {
                metric: metric.as_str(),
                unit: match metric {
                    Metric::AllocCount | Metric::InformerAllocCount => "allocations",
                    _ => "bytes",
                },
                value: phase.figure(metric)? as u64,
            })
        })
        .collect()
}

/// Every completed phase of every variant with its benchmark name,
/// `scenario/variant/phase`.
fn benchmarks(report: &Report) -> impl Iterator<Item = (String, &PhaseReport)> {
    report.variants.iter().flat_map(move |v| {
        v.phases
            .iter()
            .map(move |p| (format!("{}/{}/{}", report.scenario.name, v.name, p.name), p))
    })
}

/// One entry of github-action-benchmark's custom tool input.
#[derive(Debug, Serialize)]
struct GithubEntry {
    name: String,
    unit: &'static str,
    value: u64,
    extra: String,
}

/// `customSmallerIsBetter`: `[{name, unit, value, extra}]`, one entry per figure, named
/// `scenario/variant/phase/metric`.
fn github_benchmark(report: &Report) -> Vec<GithubEntry> {
    benchmarks(report)
        .flat_map(|(name, phase)| {
            let extra = format!("{} objects in the store (exact)", phase.objects);
            figures(phase).into_iter().map(move |f| GithubEntry {
                name: format!("{name}/{}", f.metric),
                unit: f.unit,
                value: f.value,
                extra: extra.clone(),
            })
        })
        .collect()
}

/// One measure of a BMF benchmark.
#[derive(Debug, Serialize)]
struct BmfMetric {
    value: u64,
}

/// BMF: `{benchmark: {measure: {value}}}`, one benchmark per `scenario/variant/phase`,
/// measures in kebab case (Bencher creates them on first use).
fn bencher(report: &Report) -> BTreeMap<String, BTreeMap<String, BmfMetric>> {
    benchmarks(report)
        .map(|(name, phase)| {
            let measures = figures(phase)
                .into_iter()
                .map(|f| (f.metric.replace('_', "-"), BmfMetric { value: f.value }))
                .collect();
            (name, measures)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::synthetic::report;

    #[test]
    fn github_benchmark_has_one_entry_per_figure_named_by_its_path() {
        let r = report(2, 3, 0);
        let json: Value = serde_json::from_str(&render(&r, ExportFormat::GithubBenchmark)).unwrap();
        let entries = json.as_array().unwrap();
        assert_eq!(entries.len(), 2 * 3 * 4);
        let first = &entries[0];
        assert_eq!(
            first["name"],
            "synthetic/variant 0 | piped/phase-0/alloc_count"
        );
        assert_eq!(first["unit"], "allocations");
        assert_eq!(
            first["value"],
            r.variants[0].phases[0].measurement.alloc_count
        );
        let live = &entries[2];
        assert_eq!(
            live["name"],
            "synthetic/variant 0 | piped/phase-0/live_bytes"
        );
        assert_eq!(live["unit"], "bytes");
        assert_eq!(
            live["value"],
            r.variants[0].phases[0].measurement.live_bytes.0
        );
    }

    #[test]
    fn bencher_has_one_benchmark_per_phase_with_kebab_case_measures() {
        let r = report(2, 3, 0);
        let json: Value = serde_json::from_str(&render(&r, ExportFormat::Bencher)).unwrap();
        let benchmarks = json.as_object().unwrap();
        assert_eq!(benchmarks.len(), 2 * 3);
        let phase = &r.variants[1].phases[2].measurement;
        let b = &benchmarks["synthetic/variant 1 | piped/phase-2"];
        assert_eq!(b["alloc-count"]["value"], phase.alloc_count);
        assert_eq!(b["peak-live-bytes"]["value"], phase.peak_live_bytes.0);
        assert_eq!(b.as_object().unwrap().len(), 4);
    }

    #[test]
    fn markdown_rows_have_as_many_cells_as_the_header() {
        let r = report(3, 4, 0);
        let markdown = render(&r, ExportFormat::Markdown);
        let rows: Vec<&str> = markdown.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(rows.len(), 2 + 3 * 4, "header, separator, a row per phase");
        // Variant names hold a `|`, escaped; unescaped pipes delimit cells.
        let cells = |row: &str| row.replace("\\|", "").matches('|').count();
        for row in &rows {
            assert_eq!(cells(row), cells(rows[0]), "{row}");
        }
        assert!(markdown.contains("variant 0 \\| piped"));
        assert!(markdown.contains("- \\* resident"));
    }

    #[test]
    fn the_json_export_is_the_report() {
        let r = report(1, 2, 0);
        let back: Report = serde_json::from_str(&render(&r, ExportFormat::Json)).unwrap();
        assert_eq!(back, r);
    }
}
