//! Sweeps in the report: every point's variants in one report, and a straight line fitted
//! through what each variant keeps at each point (least squares), so that a few small runs
//! say what a large cluster costs (`informer-mem size`).

use serde::{Deserialize, Serialize};

use super::{Report, VariantReport};
use scenario::Sweep;
use scenario::metric::Metric;
use units::Bytes;

/// `metric = fixed + per_unit × value` for one variant and phase, over a sweep's points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    /// The scenario's variant (without its point).
    pub variant: String,
    /// The phase.
    pub phase: String,
    /// What is fitted: the informer's own live bytes at the phase's end, or its peak
    /// within the phase (an external variant's: its Go heap after GC, or its RSS peak).
    pub metric: Metric,
    /// The line's value at 0: what the variant holds whatever the swept key.
    pub fixed: f64,
    /// What each more unit of the swept key adds (bytes per object for `count`).
    pub per_unit: f64,
    /// Points the line goes through.
    pub points: u32,
    /// Largest distance of a point from the line, in the metric's unit.
    pub max_residual: f64,
    /// The residuals' standard error, `sqrt(sum r² / (points - 2))`; 0 with 2 points.
    pub residual_se: f64,
    /// The points' mean value of the swept key.
    pub mean: f64,
    /// Their sum of squared distances from it (what the prediction band needs).
    pub spread: f64,
}

/// The metrics a sweep fits for a variant: what it keeps and its peak.
fn fitted_metrics(variant: &VariantReport) -> [Metric; 2] {
    if variant.subject.is_some() {
        [Metric::SubjectHeapLiveBytes, Metric::SubjectRssPeakBytes]
    } else {
        [Metric::InformerLiveBytes, Metric::InformerPeakLiveBytes]
    }
}

impl Fit {
    /// The least-squares line through `points` (value, metric); `None` with fewer than two
    /// distinct values.
    pub fn through(
        variant: &str,
        phase: &str,
        metric: Metric,
        points: &[(f64, f64)],
    ) -> Option<Fit> {
        let n = points.len() as f64;
        let mean = points.iter().map(|p| p.0).sum::<f64>() / n;
        let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
        let spread: f64 = points.iter().map(|p| (p.0 - mean).powi(2)).sum();
        if points.len() < 2 || spread == 0.0 {
            return None;
        }
        let per_unit = points
            .iter()
            .map(|p| (p.0 - mean) * (p.1 - mean_y))
            .sum::<f64>()
            / spread;
        let fixed = mean_y - per_unit * mean;
        let residuals = points.iter().map(|p| p.1 - (fixed + per_unit * p.0));
        let (squares, max) = residuals.fold((0.0, 0.0f64), |(s, m), r| (s + r * r, m.max(r.abs())));
        let residual_se = if points.len() > 2 {
            (squares / (n - 2.0)).sqrt()
        } else {
            0.0
        };
        Some(Fit {
            variant: variant.to_owned(),
            phase: phase.to_owned(),
            metric,
            fixed,
            per_unit,
            points: points.len() as u32,
            max_residual: max,
            residual_se,
            mean,
            spread,
        })
    }

    /// The line's value at `x`.
    pub fn predict(&self, x: f64) -> f64 {
        self.fixed + self.per_unit * x
    }

    /// Half the width of the 95% prediction interval at `x` (Student's t with
    /// `points - 2` degrees of freedom); `None` with two points, which leave no residual
    /// to judge the line by.
    pub fn band(&self, x: f64) -> Option<f64> {
        let freedom = self.points.checked_sub(2).filter(|&f| f > 0)?;
        let n = f64::from(self.points);
        let leverage = 1.0 + 1.0 / n + (x - self.mean).powi(2) / self.spread;
        Some(student_t_975(freedom) * self.residual_se * leverage.sqrt())
    }
}

/// Student's t distribution's 97.5th percentile.
fn student_t_975(freedom: u32) -> f64 {
    const TABLE: [f64; 10] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    ];
    match freedom {
        0 => f64::INFINITY,
        1..=10 => TABLE[freedom as usize - 1],
        11..=15 => 2.131,
        16..=20 => 2.086,
        21..=30 => 2.042,
        _ => 1.960,
    }
}

/// One report of a sweep: the points' reports (in the sweep's order) with each variant
/// named for its point (`name @ count=1000`) and its `point` set, and the fits of each
/// variant's live and peak bytes in each phase against the swept key.
pub fn merge(sweep: &Sweep, points: Vec<(u64, Report)>) -> Report {
    let mut fits = Vec::new();
    let Some(first) = points.first().map(|(_, r)| r.clone()) else {
        unreachable!("a sweep has at least one point")
    };
    for (i, variant) in first.variants.iter().enumerate() {
        for (j, phase) in variant.phases.iter().enumerate() {
            for metric in fitted_metrics(variant) {
                let measured: Vec<(f64, f64)> = points
                    .iter()
                    .filter_map(|(x, r)| {
                        let v = r.variants.get(i)?;
                        let p = v.phases.get(j).filter(|_| v.error.is_none())?;
                        Some((*x as f64, p.figure(metric)?))
                    })
                    .collect();
                // A point whose variant failed, or a figure it lacks, leaves the fit out:
                // a line through some of the points would read as one through all.
                if measured.len() == points.len()
                    && let Some(fit) = Fit::through(&variant.name, &phase.name, metric, &measured)
                {
                    fits.push(fit);
                }
            }
        }
    }
    let mut report = first;
    report.variants = points
        .into_iter()
        .flat_map(|(value, r)| {
            r.variants
                .into_iter()
                .map(move |v| at_point(sweep, value, v))
        })
        .collect();
    report.fits = fits;
    report
}

/// `variant` as a sweep's report has it at the point where the swept key is `value`:
/// named for the point (`name @ count=1000`), its `point` set.
pub fn at_point(sweep: &Sweep, value: u64, mut variant: VariantReport) -> VariantReport {
    variant.name = format!("{} @ {}", variant.name, sweep.point_label(value));
    variant.point = Some(value);
    variant
}

/// `variant` as [`at_point`] had it before: its own name, no point.
pub fn off_point(sweep: &Sweep, value: u64, mut variant: VariantReport) -> VariantReport {
    let suffix = format!(" @ {}", sweep.point_label(value));
    if let Some(name) = variant.name.strip_suffix(&suffix) {
        variant.name = name.to_owned();
    }
    variant.point = None;
    variant
}

/// The fit table's columns, and whether each is right-aligned.
pub(super) const COLUMNS: [(&str, bool); 7] = [
    ("variant", false),
    ("phase", false),
    ("figure", false),
    ("fixed", true),
    ("per unit", true),
    ("points", true),
    ("largest residual", true),
];

/// What the fit table's columns mean.
pub(super) const NOTES: [&str; 1] = [
    "a sweep's lines, least squares through every point: figure = fixed + per unit x the \
     swept key (per unit: per object for `count`); live and peak are the informer's own \
     live bytes at the phase's end and its peak within it (an external variant's Go heap \
     after GC and its RSS peak); largest residual: the farthest point from the line, and \
     its share of the line's value at the largest point. `informer-mem size` predicts from these lines",
];

/// Rows of the fit table: every fitted line of a sweep.
pub(super) fn rows(report: &Report) -> Vec<[String; 7]> {
    let Some(sweep) = &report.scenario.sweep else {
        return Vec::new();
    };
    let mut rows: Vec<[String; 7]> = Vec::new();
    for fit in &report.fits {
        let largest = sweep.values.iter().copied().max().unwrap_or(0) as f64;
        let share = fit.max_residual / fit.predict(largest).abs().max(1.0);
        rows.push([
            fit.variant.clone(),
            fit.phase.clone(),
            match fit.metric {
                Metric::InformerLiveBytes | Metric::SubjectHeapLiveBytes => "live".to_owned(),
                _ => "peak".to_owned(),
            },
            signed_bytes(fit.fixed),
            signed_bytes(fit.per_unit),
            fit.points.to_string(),
            format!("{} ({:.3}%)", signed_bytes(fit.max_residual), share * 100.0),
        ]);
    }
    // The variant's name once, on its first row.
    for i in (1..rows.len()).rev() {
        if rows[i][0] == rows[i - 1][0] {
            rows[i][0].clear();
        }
    }
    rows
}

/// `bytes` (fractional, maybe negative) in binary units.
fn signed_bytes(bytes: f64) -> String {
    let magnitude = Bytes(bytes.abs().round() as u64);
    if bytes < 0.0 {
        format!("-{magnitude}")
    } else {
        magnitude.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_through_points_on_a_line_has_no_residual() {
        let points = [
            (1000.0, 1_050_000.0),
            (2000.0, 2_050_000.0),
            (5000.0, 5_050_000.0),
        ];
        let fit = Fit::through("v", "list", Metric::InformerLiveBytes, &points).unwrap();
        assert!((fit.per_unit - 1000.0).abs() < 1e-9, "{fit:?}");
        assert!((fit.fixed - 50_000.0).abs() < 1e-6, "{fit:?}");
        assert!(fit.max_residual < 1e-6);
        // Only rounding is left of the residuals.
        assert!(fit.band(100_000.0).unwrap() < 1e-3);
        assert!((fit.predict(100_000.0) - 100_050_000.0).abs() < 1e-3);
    }

    #[test]
    fn the_band_widens_away_from_the_points() {
        let points = [(1.0, 10.0), (2.0, 21.0), (3.0, 29.0), (4.0, 41.0)];
        let fit = Fit::through("v", "list", Metric::InformerLiveBytes, &points).unwrap();
        assert!(fit.max_residual > 0.0);
        let near = fit.band(2.5).unwrap();
        let far = fit.band(40.0).unwrap();
        assert!(near > 0.0 && far > 5.0 * near, "{near} {far}");
    }

    #[test]
    fn two_points_fit_without_a_band_and_one_value_does_not_fit() {
        let fit = Fit::through(
            "v",
            "p",
            Metric::InformerLiveBytes,
            &[(1.0, 2.0), (3.0, 6.0)],
        )
        .unwrap();
        assert_eq!(fit.band(10.0), None);
        assert!(
            Fit::through(
                "v",
                "p",
                Metric::InformerLiveBytes,
                &[(1.0, 2.0), (1.0, 3.0)]
            )
            .is_none()
        );
    }
}
