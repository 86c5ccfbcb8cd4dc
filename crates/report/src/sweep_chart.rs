//! The chart of a sweep: the swept key on the x axis, one panel for what each variant
//! keeps after the first phase and one for its peak within it; per variant its measured
//! points (dots) and the line the report fitted through them.

use plotters::prelude::*;

use super::Report;
use super::chart::{Area, legend_entry, series_color, unit_for};
use super::fit::Fit;
use scenario::Sweep;
use scenario::metric::Metric;

const WIDTH: u32 = 1000;
const PANEL_HEIGHT: u32 = 380;
const TITLE_HEIGHT: u32 = 40;
const LEGEND_ROW: u32 = 22;

/// One variant in one panel: its measured points and its fitted line, if any.
struct Line<'a> {
    name: &'a str,
    points: Vec<(f64, f64)>,
    fit: Option<&'a Fit>,
}

/// The sweep's chart as SVG text; `report` must have a sweep.
pub fn render_svg(report: &Report, sweep: &Sweep) -> String {
    let names: Vec<&str> =
        report
            .fits
            .iter()
            .map(|f| f.variant.as_str())
            .fold(Vec::new(), |mut names, n| {
                if !names.contains(&n) {
                    names.push(n);
                }
                names
            });
    let first_phase = report
        .variants
        .first()
        .and_then(|v| v.phases.first())
        .map_or("", |p| p.name.as_str());
    let panel = |live: bool| -> Vec<Line<'_>> {
        names
            .iter()
            .map(|&name| {
                let fit = report.fits.iter().find(|f| {
                    f.variant == name && f.phase == first_phase && is_live(f.metric) == live
                });
                let points = report
                    .variants
                    .iter()
                    .filter(|v| v.name.strip_suffix(&point_suffix(sweep, v.point)) == Some(name))
                    .filter_map(|v| {
                        let phase = v.phases.first()?;
                        let metric = fit.map(|f| f.metric)?;
                        Some((v.point? as f64, phase.figure(metric)?))
                    })
                    .collect();
                Line { name, points, fit }
            })
            .collect()
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, TITLE_HEIGHT + 2 * PANEL_HEIGHT))
            .into_drawing_area();
        let live = panel(true);
        let peak = panel(false);
        draw(&root, report, sweep, first_phase, [&live, &peak])
            .expect("drawing into a string does not fail");
        root.present().expect("drawing into a string does not fail");
    }
    svg.push('\n');
    svg
}

fn is_live(metric: Metric) -> bool {
    matches!(
        metric,
        Metric::InformerLiveBytes | Metric::SubjectHeapLiveBytes
    )
}

/// ` @ key=value`, what a point's variant names end with.
fn point_suffix(sweep: &Sweep, point: Option<u64>) -> String {
    point.map_or_else(String::new, |v| format!(" @ {}", sweep.point_label(v)))
}

fn draw(
    root: &Area<'_>,
    report: &Report,
    sweep: &Sweep,
    phase: &str,
    panels: [&[Line<'_>]; 2],
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    root.fill(&WHITE)?;
    let (title, rest) = root.split_vertically(TITLE_HEIGHT);
    let (legend, body) = rest.split_vertically(LEGEND_ROW);
    title.titled(
        &format!(
            "informer-mem: {} ({} objects, sweep over {})",
            report.scenario.name, report.scenario.objects.kind, sweep.key
        ),
        ("sans-serif", 20),
    )?;
    let lines = panels[0];
    let column = (WIDTH as usize - 200) / lines.len().max(1);
    for (i, line) in lines.iter().enumerate() {
        let at = ((100 + i * column) as i32, (LEGEND_ROW / 2) as i32);
        legend_entry(&legend, i, line.name, at)?;
    }
    let titles = [
        format!("the informer's live bytes after `{phase}` (dots: measured; lines: fitted)"),
        format!("its peak within `{phase}` (dots: measured; lines: fitted)"),
    ];
    let areas = body.split_evenly((2, 1));
    for ((area, lines), title) in areas.iter().zip(panels).zip(&titles) {
        draw_panel(area, sweep, title, lines)?;
    }
    Ok(())
}

fn draw_panel(
    area: &Area<'_>,
    sweep: &Sweep,
    title: &str,
    lines: &[Line<'_>],
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    let right = sweep.values.iter().copied().max().unwrap_or(1) as f64 * 1.05;
    let top = lines
        .iter()
        .flat_map(|l| &l.points)
        .map(|p| p.1)
        .fold(0.0, f64::max);
    let (unit, scale) = unit_for(top);
    let top = if top > 0.0 { top * 1.08 / scale } else { 1.0 };
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 15))
        .margin(12)
        .margin_right(24)
        .x_label_area_size(36)
        .y_label_area_size(90)
        .build_cartesian_2d(0.0..right, 0.0..top)?;
    chart
        .configure_mesh()
        .x_desc(sweep.key.as_str())
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.1} {unit}"))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()?;
    for (i, line) in lines.iter().enumerate() {
        let color = series_color(i);
        if let Some(fit) = line.fit {
            chart.draw_series(LineSeries::new(
                [0.0, right].map(|x| (x, (fit.predict(x) / scale).max(0.0))),
                color.mix(0.7).stroke_width(2),
            ))?;
        }
        chart.draw_series(
            line.points
                .iter()
                .map(|&(x, y)| Circle::new((x, y / scale), 4, color.filled())),
        )?;
    }
    Ok(())
}
