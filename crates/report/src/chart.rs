//! The chart of a run: an SVG with one panel of live bytes (exact) and one of jemalloc's
//! resident bytes (advisory) over the phases, one series per variant, drawn with plotters.
//!
//! The x axis is the run's phases, each a unit wide, with its boundaries marked: a value at
//! a phase's end sits on its right boundary (a dot), the setup's on the left edge. The peak
//! within a phase is known, but not when it happened, so it is drawn as a thin bar across
//! the whole phase rather than as a point. When the scenario has a `[timeline]`, the line
//! also passes through the phase's samples, each placed across the phase by the share of
//! the phase's allocated bytes allocated when it was taken.

use std::ops::Range;

use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::prelude::*;

use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::table::thousands;
use super::{PhaseReport, Report, VariantReport};
use measure::timeline::Sample;

/// Pixel size of the chart.
const WIDTH: u32 = 1000;
const PANEL_HEIGHT: u32 = 380;
const TITLE_HEIGHT: u32 = 40;
/// Space left and right of the legend.
const LEGEND_MARGIN: usize = 100;
/// The legend, shared by both panels: this many variants to a row, each row this high.
const LEGEND_COLUMNS: usize = 3;
const LEGEND_ROW: u32 = 22;

/// Okabe and Ito's palette: told apart by colour-blind readers too. Beyond it, plotters'.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(240, 228, 66),
    RGBColor(0, 0, 0),
];

/// The colour of the `i`th variant's series.
pub fn series_color(i: usize) -> RGBColor {
    PALETTE.get(i).copied().unwrap_or_else(|| {
        let c = Palette99::pick(i).to_rgba();
        RGBColor(c.0, c.1, c.2)
    })
}

/// One variant's figures in one panel: `(x, bytes)` at phase ends, the line through them
/// and the timeline's samples, and peaks per phase (`(start of the phase, bytes)`).
struct Series {
    color: RGBColor,
    points: Points,
    line: Points,
    peaks: Points,
}

/// What one variant shows in one panel: its line (phase ends and samples, in order), the
/// phase ends alone, and the peaks.
struct Figures {
    line: Points,
    ends: Points,
    peaks: Points,
}

impl Figures {
    /// A variant's line from the figure at `start` (the setup's, if any), then for each
    /// phase its samples' figures and its end's; `of_sample` and `of_end` pick the figure.
    fn of(
        variant: &VariantReport,
        start: Option<f64>,
        of_sample: impl Fn(&Sample) -> Option<f64>,
        of_end: impl Fn(&PhaseReport) -> Option<f64>,
    ) -> (Points, Points) {
        let mut line: Points = start.map(|y| (0.0, y)).into_iter().collect();
        let mut ends = line.clone();
        for (p, phase) in variant.phases.iter().enumerate() {
            let allocated = phase.measurement.alloc_bytes.0.max(1) as f64;
            for sample in &phase.samples {
                if let Some(y) = of_sample(sample) {
                    let across = (sample.alloc_bytes.0 as f64 / allocated).min(1.0);
                    line.push((p as f64 + across, y));
                }
            }
            if let Some(y) = of_end(phase) {
                line.push(((p + 1) as f64, y));
                ends.push(((p + 1) as f64, y));
            }
        }
        (line, ends)
    }
}

/// `(x, bytes)` pairs.
type Points = Vec<(f64, f64)>;

/// What one panel shows.
struct Panel<'a> {
    title: &'a str,
    series: Vec<Series>,
}

/// A phase's live bytes at its end and its peak: the informer's own when the report splits
/// them by component, the process's otherwise; an external variant's program's heap after
/// its collections and its sampled peak.
fn live_and_peak(phase: &PhaseReport) -> (f64, f64) {
    if let Some(s) = &phase.subject {
        let live = s.live_heap().map_or(0.0, |b| b.0 as f64);
        let peak = s.heap_peak_bytes.map_or(live, |b| (b.0 as f64).max(live));
        return (live, peak);
    }
    let m = &phase.measurement;
    let (live, peak) = m.components.map_or((m.live_bytes, m.peak_live_bytes), |c| {
        (c.informer.live_bytes, c.informer.peak_live_bytes)
    });
    (live.0 as f64, peak.0 as f64)
}

/// One series per variant, in the variant's colour, from its figures.
fn each_variant(report: &Report, series: impl Fn(&VariantReport) -> Figures) -> Vec<Series> {
    report
        .variants
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let figures = series(v);
            Series {
                color: series_color(i),
                points: figures.ends,
                line: figures.line,
                peaks: figures.peaks,
            }
        })
        .collect()
}

/// A variant's live bytes (the informer's when `attributed`): the line through the
/// samples and phase ends, and each phase's peak.
fn live_figures(v: &VariantReport, attributed: bool) -> Figures {
    let start = v.setup.map(|s| {
        let live = s.components.map_or(s.live_bytes, |c| c.informer.live_bytes);
        live.0 as f64
    });
    let (line, ends) = Figures::of(
        v,
        start,
        |s| {
            let live = if attributed {
                s.components.informer
            } else {
                s.live_bytes
            };
            Some(live.0 as f64)
        },
        |phase| Some(live_and_peak(phase).0),
    );
    let peaks = v
        .phases
        .iter()
        .enumerate()
        .map(|(p, phase)| (p as f64, live_and_peak(phase).1))
        .collect();
    Figures { line, ends, peaks }
}

/// Renders the report's chart as SVG text (a sweep's is `sweep_chart`'s).
pub fn render_svg(report: &Report) -> String {
    let attributed = report
        .variants
        .iter()
        .flat_map(|v| &v.phases)
        .all(|p| p.measurement.components.is_some());
    let phases: Vec<&str> = report
        .variants
        .iter()
        .map(|v| v.phases.iter().map(|p| p.name.as_str()).collect::<Vec<_>>())
        .max_by_key(Vec::len)
        .unwrap_or_default();
    let sampled = report
        .variants
        .iter()
        .flat_map(|v| &v.phases)
        .any(|p| !p.samples.is_empty());
    let when = if sampled {
        "at each phase's end (dots) and at its samples"
    } else {
        "at each phase's end"
    };
    let live_title = if attributed {
        format!("the informer's live bytes {when} (exact); thin bars: its peak within the phase")
    } else {
        format!("live bytes {when} (exact); thin bars: the peak within the phase")
    };
    let external = report.variants.iter().any(|v| v.subject.is_some());
    let (live_title, resident_title) = if external {
        (
            format!(
                "{live_title}; external variants: the program's heap after GC and its sampled peak"
            ),
            format!(
                "jemalloc resident bytes {when} (advisory); external variants: the program's RSS"
            ),
        )
    } else {
        (
            live_title,
            format!("jemalloc resident bytes {when} (advisory)"),
        )
    };
    let live = Panel {
        title: &live_title,
        series: each_variant(report, |v| live_figures(v, attributed)),
    };
    let resident = Panel {
        title: &resident_title,
        series: each_variant(report, |v| {
            let (line, ends) = Figures::of(
                v,
                None,
                |s| s.resident_bytes.map(|r| r.0 as f64),
                |phase| match &phase.subject {
                    Some(s) => Some(s.rss_bytes.0 as f64),
                    None => Some(phase.measurement.jemalloc?.resident.0 as f64),
                },
            );
            Figures {
                line,
                ends,
                peaks: Vec::new(),
            }
        }),
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, TITLE_HEIGHT + 2 * PANEL_HEIGHT))
            .into_drawing_area();
        draw(&root, report, &phases, [&live, &resident])
            .expect("drawing into a string does not fail");
        root.present().expect("drawing into a string does not fail");
    }
    svg.push('\n');
    svg
}

pub(super) type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

fn draw(
    root: &Area<'_>,
    report: &Report,
    phases: &[&str],
    panels: [&Panel<'_>; 2],
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    root.fill(&WHITE)?;
    let (title, rest) = root.split_vertically(TITLE_HEIGHT);
    let rows = report.variants.len().div_ceil(LEGEND_COLUMNS) as u32;
    let (legend, body) = rest.split_vertically(LEGEND_ROW * rows);
    let objects = &report.scenario.objects;
    title.titled(
        &format!(
            "informer-mem: {} ({} {} objects)",
            report.scenario.name,
            thousands(objects.count),
            objects.kind
        ),
        ("sans-serif", 20),
    )?;
    let column_width = (WIDTH as usize - 2 * LEGEND_MARGIN) / LEGEND_COLUMNS;
    for (i, variant) in report.variants.iter().enumerate() {
        let x = (LEGEND_MARGIN + (i % LEGEND_COLUMNS) * column_width) as i32;
        let y = ((i / LEGEND_COLUMNS) as u32 * LEGEND_ROW + LEGEND_ROW / 2) as i32;
        legend_entry(&legend, i, &variant.name, (x, y))?;
    }
    let areas = body.split_evenly((2, 1));
    for (area, panel) in areas.iter().zip(panels) {
        draw_panel(area, phases, panel)?;
    }
    Ok(())
}

/// Series `i`'s entry in a legend at `at`: a short line in its colour, then its name.
pub(super) fn legend_entry(
    legend: &Area<'_>,
    i: usize,
    name: &str,
    (x, y): (i32, i32),
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    legend.draw(&PathElement::new(
        [(x, y), (x + 24, y)],
        series_color(i).stroke_width(3),
    ))?;
    legend.draw(&Text::new(
        name.to_owned(),
        (x + 32, y),
        ("sans-serif", 14)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center)),
    ))
}

/// The unit a y axis up to `top` bytes counts in, so that ticks fall on round numbers of
/// it, and its size.
pub(super) fn unit_for(top: f64) -> (&'static str, f64) {
    let (unit, size) = [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
        .into_iter()
        .find(|&(_, size)| top >= size as f64)
        .unwrap_or(("B", 1));
    (unit, size as f64)
}

fn draw_panel(
    area: &Area<'_>,
    phases: &[&str],
    panel: &Panel<'_>,
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    let n = phases.len().max(1) as f64;
    let top = panel
        .series
        .iter()
        .flat_map(|s| s.line.iter().chain(&s.peaks))
        .map(|&(_, y)| y)
        .fold(0.0, f64::max);
    let (unit, scale) = unit_for(top);
    let top = if top > 0.0 { top * 1.08 / scale } else { 1.0 };
    let mut chart = ChartBuilder::on(area)
        .caption(panel.title, ("sans-serif", 15))
        .margin(12)
        .margin_right(24)
        .x_label_area_size(30)
        .y_label_area_size(90)
        .build_cartesian_2d(PhaseAxis(n), 0.0..top)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_label_formatter(&|x| {
            phases
                .get(x.floor() as usize)
                .map_or_else(String::new, |name| (*name).to_owned())
        })
        .y_label_formatter(&|y| format!("{} {unit}", round_label(*y)))
        .y_labels(8)
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()?;
    // Phase boundaries.
    let boundary = RGBColor(170, 170, 170).stroke_width(1);
    for i in 0..=phases.len() {
        let x = i as f64;
        chart.draw_series(LineSeries::new([(x, 0.0), (x, top)], boundary))?;
    }
    for series in &panel.series {
        let color = series.color;
        chart.draw_series(LineSeries::new(
            series.line.iter().map(|&(x, y)| (x, y / scale)),
            color.stroke_width(2),
        ))?;
        chart.draw_series(
            series
                .points
                .iter()
                .map(|&(x, y)| Circle::new((x, y / scale), 3, color.filled())),
        )?;
        for &(x, peak) in &series.peaks {
            chart.draw_series(LineSeries::new(
                [(x + 0.05, peak / scale), (x + 0.95, peak / scale)],
                color.mix(0.55).stroke_width(1),
            ))?;
        }
    }
    Ok(())
}

/// `0.6000000000000001` as `0.6`: two decimals at most, no trailing zeros.
fn round_label(y: f64) -> String {
    let text = format!("{y:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// The x axis: phases side by side, each one unit wide; labels at their middles.
struct PhaseAxis(f64);

impl Ranged for PhaseAxis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = f64::from(limit.1 - limit.0);
        limit.0 + (value / self.0 * span).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, _hint: Hint) -> Vec<f64> {
        (0..self.0 as usize).map(|i| i as f64 + 0.5).collect()
    }

    fn range(&self) -> Range<f64> {
        0.0..self.0
    }
}

impl ValueFormatter<f64> for PhaseAxis {
    fn format(value: &f64) -> String {
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::report;
    use measure::JemallocStats;
    use units::Bytes;

    /// Every `<polyline>`: stroke colour, opacity, number of points.
    fn polylines(doc: &roxmltree::Document<'_>) -> Vec<(String, String, usize)> {
        doc.descendants()
            .filter(|n| n.has_tag_name("polyline"))
            .map(|n| {
                (
                    n.attribute("stroke").unwrap_or_default().to_owned(),
                    n.attribute("opacity").unwrap_or_default().to_owned(),
                    n.attribute("points")
                        .unwrap_or_default()
                        .split_whitespace()
                        .count(),
                )
            })
            .collect()
    }

    fn text(node: &roxmltree::Node<'_, '_>) -> String {
        node.text().unwrap_or_default().trim().to_owned()
    }

    #[test]
    fn each_panel_has_one_series_per_variant_with_a_point_per_phase() {
        let mut r = report(3, 5, 0);
        // The last variant has no jemalloc figures (a dhat build, say): no resident series.
        for variant in &mut r.variants[..2] {
            for (i, phase) in variant.phases.iter_mut().enumerate() {
                phase.measurement.jemalloc = Some(JemallocStats {
                    allocated: Bytes(1 << 20),
                    active: Bytes(1 << 20),
                    resident: Bytes((i as u64 + 2) << 20),
                    mapped: Bytes(8 << 20),
                    retained: Bytes(0),
                });
            }
        }
        let svg = render_svg(&r);
        let doc = roxmltree::Document::parse(&svg).expect("the chart is well-formed SVG");
        let lines = polylines(&doc);
        for (i, variant) in r.variants.iter().enumerate() {
            let RGBColor(red, green, blue) = series_color(i);
            let hex = format!("#{red:02X}{green:02X}{blue:02X}");
            let series = |points: usize| {
                lines
                    .iter()
                    .filter(|(stroke, opacity, n)| *stroke == hex && opacity == "1" && *n == points)
                    .count()
            };
            let panels_with_resident = if i < 2 { 2 } else { 1 };
            assert_eq!(
                series(5),
                panels_with_resident,
                "{hex}: a line of 5 phase ends"
            );
            // A peak bar per phase in the live panel.
            let peaks = lines
                .iter()
                .filter(|(stroke, opacity, n)| *stroke == hex && opacity != "1" && *n == 2)
                .count();
            assert_eq!(peaks, 5, "{hex}: one peak bar per phase");
            assert_eq!(series(2), 1, "{hex}: one legend entry");
            let named = doc
                .descendants()
                .filter(|n| n.has_tag_name("text") && text(n) == variant.name)
                .count();
            assert_eq!(named, 1, "the legend names {:?}", variant.name);
        }
        for phase in &r.variants[0].phases {
            assert!(
                doc.descendants()
                    .any(|n| n.has_tag_name("text") && text(&n) == phase.name),
                "the x axis names phase {:?}",
                phase.name
            );
        }
    }

    #[test]
    fn a_timeline_adds_its_samples_to_the_line_between_the_phase_ends() {
        use measure::timeline::{LiveByComponent, Sample};
        let mut r = report(1, 3, 0);
        let phase = &mut r.variants[0].phases[1];
        let allocated = phase.measurement.alloc_bytes.0;
        phase.samples = (1..=4)
            .map(|k| Sample {
                alloc_bytes: Bytes(allocated * k / 5),
                events: 0,
                live_bytes: Bytes(k << 20),
                components: LiveByComponent::default(),
                resident_bytes: None,
                rss_bytes: None,
            })
            .collect();
        let svg = render_svg(&r);
        assert!(svg.contains("at its samples"), "the title says so");
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let RGBColor(red, green, blue) = series_color(0);
        let hex = format!("#{red:02X}{green:02X}{blue:02X}");
        let lines: Vec<usize> = polylines(&doc)
            .into_iter()
            .filter(|(stroke, opacity, _)| *stroke == hex && opacity == "1")
            .map(|(_, _, n)| n)
            .collect();
        // The live line: 3 phase ends and 4 samples; the legend's stroke.
        assert!(lines.contains(&7), "{lines:?}");
        // Dots only at the phase ends.
        let dots = doc
            .descendants()
            .filter(|n| n.has_tag_name("circle") && n.attribute("fill") == Some(&hex))
            .count();
        assert_eq!(dots, 3);
    }

    #[test]
    fn axis_labels_are_short() {
        assert_eq!(round_label(0.6000000000000001), "0.6");
        assert_eq!(round_label(200.0), "200");
        assert_eq!(round_label(0.25), "0.25");
    }

    #[test]
    fn the_same_report_draws_the_same_chart() {
        let r = report(2, 3, 0);
        assert_eq!(render_svg(&r), render_svg(&r));
    }
}
