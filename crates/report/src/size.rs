//! `informer-mem size`: what a cluster's counts of objects cost each variant, predicted
//! from the lines a sweep over `count` fitted (`fit`): the steady store after the initial
//! sync, the initial sync's peak and a relist's peak, over the kinds of objects
//! asked for, each with its 95% prediction band.

use std::collections::BTreeMap;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, ContentArrangement, Table};

use super::fit::Fit;
use super::{Report, recommend};
use scenario::metric::Metric;
use scenario::{ObjectKind, PhaseKind, SweepKey};
use units::Bytes;

/// Why a prediction cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum SizeError {
    /// A report has no sweep over `count`.
    #[error(
        "`{file}` has no sweep over `count` to predict from\n  hint: run its scenario with \
         `--sweep count=1000,2000,5000,10000` (or a `[sweep]` table) first"
    )]
    NoCountSweep {
        /// The report.
        file: String,
    },
    /// Two reports measure the same kind.
    #[error("`{file}` measures {kind} objects, as an earlier report does: one report a kind")]
    KindTwice {
        /// The second report.
        file: String,
        /// Its kind.
        kind: ObjectKind,
    },
    /// A report's kind has no `--count`, or a `--count` no report.
    #[error("{0}")]
    Counts(String),
    /// No variant is in every report.
    #[error("no variant is in every report (variants are matched by name)")]
    NoCommonVariant,
}

/// One predicted figure: the line's value and the band's half-width (none when a fit had
/// only two points).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Predicted {
    /// Bytes.
    pub bytes: f64,
    /// Half the 95% prediction interval, in bytes.
    pub band: Option<f64>,
}

impl Predicted {
    fn plus(self, other: Predicted) -> Predicted {
        Predicted {
            bytes: self.bytes + other.bytes,
            // Independent fits: their errors add in quadrature.
            band: self
                .band
                .zip(other.band)
                .map(|(a, b)| (a * a + b * b).sqrt()),
        }
    }
}

/// A variant's predicted figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    /// The variant's name.
    pub variant: String,
    /// Whether it is an external variant: its figures are its program's heap after GC
    /// and its process's RSS high-water marks, not the informer's own exact bytes.
    pub external: bool,
    /// The informer's live bytes once synced (after the first phase).
    pub steady: Predicted,
    /// Its peak within the initial sync (the first phase).
    pub initial_peak: Predicted,
    /// Its peak within the first `relist` phase, when the scenario has one.
    pub relist_peak: Option<Predicted>,
    /// An external program's memory request (the RSS it settles at, as `run` recommends
    /// it), from a line through the request at each point of the sweep.
    pub request: Option<Predicted>,
    /// An external Go program's RSS outside its runtime: the most measured at any point
    /// and phase of the sweeps; `None` unless every one was read, from one process.
    pub outside_runtime: Option<Bytes>,
}

/// The kinds `--count` names (`given`: each name and its count), matched by the kind's
/// name or its resource's, in any case: the kinds the reports measure (a custom
/// resource's from its sample, `Widget` or `widgets`) and the built-in ones. A later
/// count of a kind replaces an earlier one.
pub fn counted_kinds(
    reports: &[(String, Report)],
    given: &[(String, u64)],
) -> Result<BTreeMap<ObjectKind, u64>, SizeError> {
    let measured = reports
        .iter()
        .map(|(_, report)| report.scenario.objects.kind);
    let mut known: Vec<ObjectKind> = ObjectKind::ALL.into_iter().chain(measured).collect();
    known.sort();
    known.dedup();
    given
        .iter()
        .map(|(name, n)| {
            let kind = known
                .iter()
                .find(|k| {
                    name.eq_ignore_ascii_case(k.as_str()) || name.eq_ignore_ascii_case(k.plural())
                })
                .ok_or_else(|| {
                    let names: Vec<&str> = known.iter().map(|k| k.as_str()).collect();
                    SizeError::Counts(format!(
                        "--count {name}={n}: unknown kind {name:?}; expected one of {}",
                        names.join(", ")
                    ))
                })?;
            Ok((*kind, *n))
        })
        .collect()
}

/// Predicts each variant present in every report at `counts` objects of each report's
/// kind. `reports` are (file, report) pairs.
pub fn predict(
    reports: &[(String, Report)],
    counts: &BTreeMap<ObjectKind, u64>,
) -> Result<Vec<Prediction>, SizeError> {
    let mut kinds = BTreeMap::new();
    for (file, report) in reports {
        if report.scenario.sweep.as_ref().map(|s| s.key) != Some(SweepKey::Count) {
            return Err(SizeError::NoCountSweep { file: file.clone() });
        }
        let kind = report.scenario.objects.kind;
        if kinds.insert(kind, file).is_some() {
            return Err(SizeError::KindTwice {
                file: file.clone(),
                kind,
            });
        }
        if !counts.contains_key(&kind) {
            return Err(SizeError::Counts(format!(
                "`{file}` measures {kind} objects: give their count with --count {kind}=N"
            )));
        }
    }
    if let Some(kind) = counts.keys().find(|k| !kinds.contains_key(k)) {
        return Err(SizeError::Counts(format!(
            "--count {kind}: no report measures {kind} objects"
        )));
    }
    let (_, first) = &reports[0];
    let mut names: Vec<&str> = Vec::new();
    for fit in &first.fits {
        if !names.contains(&fit.variant.as_str()) {
            names.push(&fit.variant);
        }
    }
    let predictions: Vec<Prediction> = names
        .into_iter()
        .filter_map(|name| {
            let parts = reports
                .iter()
                .map(|(_, r)| {
                    let at = variant_prediction(r, name, counts[&r.scenario.objects.kind])?;
                    Some((at, variant_prediction(r, name, 0)?))
                })
                .collect::<Option<Vec<_>>>()?;
            Some(if parts.iter().any(|(at, _)| at.external) {
                one_process(parts)
            } else {
                parts.into_iter().map(|(at, _)| at).reduce(sum)?
            })
        })
        .collect();
    if predictions.is_empty() {
        return Err(SizeError::NoCommonVariant);
    }
    Ok(predictions)
}

fn sum(a: Prediction, b: Prediction) -> Prediction {
    Prediction {
        variant: a.variant,
        external: a.external || b.external,
        steady: a.steady.plus(b.steady),
        initial_peak: a.initial_peak.plus(b.initial_peak),
        relist_peak: a.relist_peak.zip(b.relist_peak).map(|(a, b)| a.plus(b)),
        request: a.request.zip(b.request).map(|(a, b)| a.plus(b)),
        // One process whatever the kinds: what is outside its runtime is counted once.
        outside_runtime: a
            .outside_runtime
            .zip(b.outside_runtime)
            .map(|(a, b)| a.max(b)),
    }
}

/// How [`one_process`] sums a program's kinds, in the words of the notes under a table.
const ONE_PROCESS: &str = "its runtime counted once (the largest line's value at no object) \
    beside what each kind's line adds, the initial syncs at once, one relist at a time \
    beside the other kinds' stores";

/// One program caching every kind: `parts` are each kind's prediction at its count and
/// at none. Its runtime and libraries are there once, so a figure is the largest fixed
/// part (a line's value at no object) and what each kind's line adds to its own; its
/// informers list at once when it starts, so the initial sync's peaks add up the same
/// way; its informers relist one at a time, so a relist's peak is the highest of one
/// kind's relist peak with the others' stores held beside it.
fn one_process(parts: Vec<(Prediction, Prediction)>) -> Prediction {
    fn over(
        parts: &[(Prediction, Prediction)],
        figure: impl Fn(&Prediction) -> Option<Predicted>,
    ) -> Option<Predicted> {
        let mut fixed = f64::MIN;
        let mut grown = Predicted {
            bytes: 0.0,
            band: Some(0.0),
        };
        for (at, none) in parts {
            let (at, none) = (figure(at)?, figure(none)?);
            fixed = fixed.max(none.bytes);
            grown = grown.plus(Predicted {
                bytes: at.bytes - none.bytes,
                band: at.band,
            });
        }
        Some(Predicted {
            bytes: fixed + grown.bytes,
            band: grown.band,
        })
    }
    let held = |(at, none): &(Prediction, Prediction)| at.steady.bytes - none.steady.bytes;
    let stores: f64 = parts.iter().map(held).sum();
    let relist_peak = parts
        .iter()
        .map(|part| {
            let relist = part.0.relist_peak?;
            Some(Predicted {
                bytes: relist.bytes + stores - held(part),
                band: relist.band,
            })
        })
        .collect::<Option<Vec<Predicted>>>()
        .and_then(|peaks| peaks.into_iter().max_by(|a, b| a.bytes.total_cmp(&b.bytes)));
    let first = &parts[0].0;
    Prediction {
        variant: first.variant.clone(),
        external: true,
        steady: over(&parts, |p| Some(p.steady)).expect("every part has a steady store"),
        initial_peak: over(&parts, |p| Some(p.initial_peak)).expect("every part has a peak"),
        relist_peak,
        request: over(&parts, |p| p.request),
        outside_runtime: parts
            .iter()
            .map(|(at, _)| at.outside_runtime)
            .collect::<Option<Vec<Bytes>>>()
            .and_then(|all| all.into_iter().max()),
    }
}

/// Variant `name`'s prediction from `report`'s fits at `count` objects.
fn variant_prediction(report: &Report, name: &str, count: u64) -> Option<Prediction> {
    let x = count as f64;
    let phases = &report.variants.first()?.phases;
    let fit = |phase: &str, live: bool| -> Option<Predicted> {
        let f: &Fit = report.fits.iter().find(|f| {
            f.variant == name
                && f.phase == phase
                && matches!(
                    f.metric,
                    Metric::InformerLiveBytes | Metric::SubjectHeapLiveBytes
                ) == live
        })?;
        Some(Predicted {
            bytes: f.predict(x),
            band: f.band(x),
        })
    };
    let first = &phases.first()?.name;
    let relist = phases
        .iter()
        .find(|p| p.kind == PhaseKind::Relist)
        .map(|p| &p.name);
    Some(Prediction {
        variant: name.to_owned(),
        external: report
            .fits
            .iter()
            .any(|f| f.variant == name && f.metric.is_subject()),
        steady: fit(first, true)?,
        initial_peak: fit(first, false)?,
        relist_peak: relist.and_then(|r| fit(r, false)),
        outside_runtime: outside_runtime(report, name),
        request: request_line(report, name, x),
    })
}

/// Whether `variant` is variant `name` of the scenario (at a point of its sweep or not).
fn is_variant(variant: &crate::VariantReport, name: &str) -> bool {
    variant
        .name
        .strip_prefix(name)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(" @ "))
}

/// The memory request `run` recommends for variant `name`'s program at each point of
/// `report`'s sweep, as a line at `x`; `None` unless every point has one.
fn request_line(report: &Report, name: &str, x: f64) -> Option<Predicted> {
    let points = report
        .variants
        .iter()
        .filter(|v| is_variant(v, name))
        .map(|v| Some((v.point? as f64, recommend::request_rss(v).ok()?.0 as f64)))
        .collect::<Option<Vec<(f64, f64)>>>()?;
    let fit = Fit::through(name, "request", Metric::SubjectRssBytes, &points)?;
    Some(Predicted {
        bytes: fit.predict(x),
        band: fit.band(x),
    })
}

/// The most RSS outside the Go runtime that variant `name`'s program had at any point and
/// phase of `report`; `None` unless every one was read from a single process.
fn outside_runtime(report: &Report, name: &str) -> Option<Bytes> {
    let phases = report
        .variants
        .iter()
        .filter(|v| is_variant(v, name))
        .flat_map(|v| &v.phases);
    phases
        .map(|p| {
            let figures = p.subject.as_deref()?;
            (figures.processes.len() <= 1)
                .then(|| recommend::outside_runtime(figures))
                .flatten()
        })
        .collect::<Option<Vec<Bytes>>>()?
        .into_iter()
        .max()
}

/// What to set for an external variant's program at the predicted counts: a limit over
/// the higher predicted RSS peak (the top of its band) and a GOMEMLIMIT under it, with
/// their reasons.
fn to_set(p: &Prediction) -> String {
    let line = |q: Predicted| Bytes(q.bytes.max(0.0).round() as u64);
    let (peak, at) = match p.relist_peak {
        Some(relist) if relist.bytes > p.initial_peak.bytes => (relist, "relist"),
        _ => (p.initial_peak, "initial sync"),
    };
    let band = match peak.band {
        Some(band) => format!(", ± {} at 95%", Bytes(band.round() as u64)),
        None => String::new(),
    };
    let (peak, steady) = (line(peak), line(p.steady));
    let limit = recommend::limit_over(peak);
    let mut reasons = vec![format!(
        "limit {}: the higher predicted RSS peak, {peak} ({at}{band}), plus {:.0}%",
        recommend::quantity(limit),
        recommend::LIMIT_MARGIN * 100.0
    )];
    reasons.push(match p.outside_runtime {
        None => "no GOMEMLIMIT: the sweep did not read the Go runtime's memory of one process \
                 at every point"
            .to_owned(),
        Some(outside) => {
            let measured =
                format!("{outside} was resident outside the runtime (the most at any point)");
            match recommend::gomemlimit_under(limit, (outside, &measured), steady) {
                Ok((value, why)) => format!("GOMEMLIMIT={}MiB: {why}", value.0 >> 20),
                Err(why) => format!("no GOMEMLIMIT: {why}"),
            }
        }
    });
    reasons.insert(
        0,
        match p.request {
            Some(request) => format!(
                "request {}: the line through the request at each point of the sweep (the \
                 largest RSS at the end of a phase other than a relist){}",
                recommend::quantity(recommend::round_up(line(request))),
                request.band.map_or(String::new(), |b| format!(
                    ", ± {} at 95%",
                    Bytes(b.round() as u64)
                ))
            ),
            None => "no request: a point of the sweep has none (a program that did not sync, \
                     or the points are not the program's)"
                .to_owned(),
        },
    );
    format!(
        "to set for {} (advisory): {}",
        p.variant,
        reasons.join("; ")
    )
}

/// The predictions as a terminal table, with what the figures are.
pub fn render(predictions: &[Prediction], counts: &BTreeMap<ObjectKind, u64>) -> String {
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header([
            "variant",
            "steady store",
            "initial sync peak",
            "relist peak",
        ]);
    for p in predictions {
        table.add_row([
            if p.external {
                format!("{} (external)", p.variant)
            } else {
                p.variant.clone()
            },
            shown(p.steady),
            shown(p.initial_peak),
            p.relist_peak.map_or("-".to_owned(), shown),
        ]);
    }
    for i in 1..4 {
        if let Some(c) = table.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let cluster: Vec<String> = counts
        .iter()
        .map(|(kind, n)| format!("{} {kind}", super::table::thousands(*n)))
        .collect();
    let mut out = format!(
        "predicted for {}:\n{table}\nthe informer's own bytes, from the lines each report's \
         sweep fitted (summed over the kinds; a program's as below); ± the 95% prediction \
         band of the fit, which \
         widens the farther the count is from the measured points (none from a fit of two \
         points); a relist's peak when the scenario has a `relist` phase\n",
        cluster.join(" and ")
    );
    if predictions.iter().any(|p| p.external) {
        out.push_str(&format!(
            "(external): a program measured from outside: its steady store is its heap after \
             a forced GC, its peaks its process's RSS high-water marks; of several kinds, one \
             process caching them all: {ONE_PROCESS}\n"
        ));
    }
    for p in predictions.iter().filter(|p| p.external) {
        out.push_str(&to_set(p));
        out.push('\n');
    }
    out
}

/// Each choice's prediction (the variants a sweep measured: whole objects, a transform,
/// metadata only, watch-list), per kind and summed over the kinds: `size --objects`'s
/// and `size --kubeconfig`'s table.
#[derive(Debug, Clone, PartialEq)]
pub struct Choices {
    /// Each kind with its count and every choice's prediction at it.
    pub kinds: Vec<(ObjectKind, u64, Vec<Prediction>)>,
    /// Every choice's prediction for all the kinds together.
    pub total: Vec<Prediction>,
}

impl Choices {
    /// Each report's kind predicted alone at its count, and the kinds together.
    pub fn predict(
        reports: &[(String, Report)],
        counts: &BTreeMap<ObjectKind, u64>,
    ) -> Result<Choices, SizeError> {
        let total = predict(reports, counts)?;
        let kinds = reports
            .iter()
            .map(|pair| {
                let kind = pair.1.scenario.objects.kind;
                let count = BTreeMap::from([(kind, counts[&kind])]);
                Ok((
                    kind,
                    count[&kind],
                    predict(std::slice::from_ref(pair), &count)?,
                ))
            })
            .collect::<Result<_, SizeError>>()?;
        Ok(Choices { kinds, total })
    }
}

/// A figure of a prediction.
type Figure = fn(&Prediction) -> Option<Predicted>;

/// The figures of a choices table's rows, with their names.
const FIGURES: [(&str, Figure); 3] = [
    ("steady store", |p| Some(p.steady)),
    ("initial sync peak", |p| Some(p.initial_peak)),
    ("relist peak", |p| p.relist_peak),
];

/// The choices as columns, each kind's three figures and the total's as rows; what each
/// choice saves against the first; what to set for each program's choice.
pub fn render_choices(choices: &Choices) -> String {
    let names: Vec<&str> = choices.total.iter().map(|p| p.variant.as_str()).collect();
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(
            ["objects", "figure"]
                .into_iter()
                .chain(names.iter().copied()),
        );
    let several = choices.kinds.len() > 1;
    let total = several.then(|| ("total".to_owned(), choices.total.as_slice()));
    let rows = choices
        .kinds
        .iter()
        .map(|(kind, n, p)| {
            (
                format!("{} {kind}", super::table::thousands(*n)),
                p.as_slice(),
            )
        })
        .chain(total);
    for (label, predictions) in rows {
        for (i, (figure, of)) in FIGURES.into_iter().enumerate() {
            let first = if i == 0 { label.clone() } else { String::new() };
            let cells = predictions
                .iter()
                .map(|p| of(p).map_or("-".to_owned(), shown));
            table.add_row([first, figure.to_owned()].into_iter().chain(cells));
        }
    }
    for i in 2..2 + names.len() {
        if let Some(c) = table.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let external = choices.total.iter().any(|p| p.external);
    let mut out = format!(
        "{table}\nfrom the lines each kind's sweep fitted, drawn to the counts above; ± the 95% \
         prediction band{}\n",
        if external {
            format!(
                "; the steady store is the program's heap after a forced GC, the peaks its \
                 process's RSS high-water marks; the total is one process caching every kind: \
                 {ONE_PROCESS}"
            )
        } else {
            "; the model's own bytes".to_owned()
        }
    );
    if let Some((first, rest)) = choices.total.split_first() {
        for p in rest {
            let saved = first.steady.bytes - p.steady.bytes;
            let share = (saved / first.steady.bytes.max(1.0) * 100.0).abs();
            let line = |b: f64| Bytes(b.abs().round() as u64);
            out.push_str(&format!(
                "{}: the steady store {} {} ({share:.1}%) against {}\n",
                p.variant,
                if saved >= 0.0 { "saves" } else { "costs" },
                line(saved),
                first.variant
            ));
        }
    }
    for p in choices.total.iter().filter(|p| p.external) {
        out.push_str(&to_set(p));
        out.push('\n');
    }
    out
}

fn shown(p: Predicted) -> String {
    let bytes = Bytes(p.bytes.max(0.0).round() as u64);
    match p.band {
        Some(band) => format!("{bytes} ± {}", Bytes(band.round() as u64)),
        None => bytes.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic;
    use scenario::Sweep;

    /// A sweep report of `kind` whose one variant's lines are `fixed + per_unit x count`,
    /// live and peak alike, through three exact points.
    fn swept(kind: ObjectKind, fixed: f64, per_unit: f64) -> Report {
        let mut report = synthetic::report(1, 1, 0);
        report.scenario.objects.kind = kind;
        report.scenario.sweep = Some(Sweep {
            key: SweepKey::Count,
            values: vec![10, 20, 40],
        });
        let points: Vec<(f64, f64)> = [10.0, 20.0, 40.0]
            .map(|x| (x, fixed + per_unit * x))
            .to_vec();
        let name = report.variants[0].name.clone();
        report.fits = [Metric::InformerLiveBytes, Metric::InformerPeakLiveBytes]
            .map(|m| Fit::through(&name, "phase-0", m, &points).unwrap())
            .to_vec();
        report
    }

    #[test]
    fn kinds_add_up_per_variant() {
        let reports = vec![
            ("pods.json".to_owned(), swept(ObjectKind::Pod, 1000.0, 50.0)),
            (
                "configmaps.json".to_owned(),
                swept(ObjectKind::ConfigMap, 500.0, 4.0),
            ),
        ];
        let counts = BTreeMap::from([(ObjectKind::Pod, 100), (ObjectKind::ConfigMap, 1000)]);
        let predictions = predict(&reports, &counts).unwrap();
        assert_eq!(predictions.len(), 1);
        let steady = predictions[0].steady;
        assert!(
            (steady.bytes - (1000.0 + 5000.0 + 500.0 + 4000.0)).abs() < 1e-6,
            "{steady:?}"
        );
        assert!(
            steady.band.unwrap() < 1e-3,
            "exact points leave no band: {steady:?}"
        );
        // The synthetic report has no relist phase.
        assert_eq!(predictions[0].relist_peak, None);
        let text = render(&predictions, &counts);
        assert!(
            text.starts_with("predicted for 100 Pod and 1,000 ConfigMap:"),
            "{text}"
        );
    }

    #[test]
    fn a_programs_prediction_says_it_is_measured_from_outside() {
        let mut report = swept(ObjectKind::Pod, 1000.0, 50.0);
        let counts = BTreeMap::from([(ObjectKind::Pod, 100)]);
        let reports = vec![("built-in.json".to_owned(), report.clone())];
        let built_in = predict(&reports, &counts).unwrap();
        assert!(!built_in[0].external);
        assert!(!render(&built_in, &counts).contains("(external)"));
        // An external variant's lines are its program's heap after GC and its RSS peak.
        for fit in &mut report.fits {
            fit.metric = match fit.metric {
                Metric::InformerLiveBytes => Metric::SubjectHeapLiveBytes,
                _ => Metric::SubjectRssPeakBytes,
            };
        }
        let reports = vec![("program.json".to_owned(), report)];
        let program = predict(&reports, &counts).unwrap();
        assert!(program[0].external);
        assert_eq!(program[0].steady, built_in[0].steady);
        let text = render(&program, &counts);
        assert!(text.contains(" (external) "), "{text}");
        assert!(text.contains("RSS high-water marks"), "{text}");
        // Peaks of 6,000 bytes: a limit of 1 MiB, and no GOMEMLIMIT without the
        // runtime's figures.
        assert!(
            text.contains("limit 1Mi: the higher predicted RSS peak"),
            "{text}"
        );
        assert!(
            text.contains("no GOMEMLIMIT: the sweep did not read"),
            "{text}"
        );
    }

    #[test]
    fn a_go_programs_gomemlimit_sets_aside_the_most_rss_outside_its_runtime() {
        const MIB: f64 = 1_048_576.0;
        // 100 MiB + 1 MiB a pod, live and peak alike: 200 MiB at 100 pods.
        let mut report = swept(ObjectKind::Pod, 100.0 * MIB, MIB);
        for fit in &mut report.fits {
            fit.metric = match fit.metric {
                Metric::InformerLiveBytes => Metric::SubjectHeapLiveBytes,
                _ => Metric::SubjectRssPeakBytes,
            };
        }
        // A phase whose program holds `rss` MiB, `outside` MiB of it outside its runtime.
        let figures = |rss: u64, outside: u64| {
            let runtime = measure::pprof::RuntimeMemory {
                sys: Bytes((rss - outside) << 20),
                heap_idle: Bytes(0),
                heap_released: Bytes(0),
                next_gc: Bytes(0),
            };
            let heap: crate::GoHeap = serde_json::from_value(serde_json::json!({
                "live_bytes": 0, "inuse_bytes": 0, "objects": 0, "alloc_bytes": 0,
                "allocs": 0, "frees": 0, "gcs": 0,
                "runtime": runtime, "rss_bytes": rss << 20,
            }))
            .unwrap();
            Box::new(crate::SubjectFigures {
                rss_bytes: Bytes(rss << 20),
                heap: Some(heap),
                ..Default::default()
            })
        };
        // The sweep's points at 10 and 40 pods: the request is 100 MiB + 1 MiB a pod.
        let variant = report.variants[0].clone();
        report.variants = [(10, 5), (40, 20)]
            .map(|(count, outside)| {
                let mut v = variant.clone();
                v.name = format!("{} @ count={count}", variant.name);
                v.point = Some(count);
                for phase in &mut v.phases {
                    phase.subject = Some(figures(100 + count, outside));
                }
                v
            })
            .to_vec();
        let counts = BTreeMap::from([(ObjectKind::Pod, 100)]);
        let program = predict(&[("program.json".to_owned(), report)], &counts).unwrap();
        assert_eq!(program[0].outside_runtime, Some(Bytes(20 << 20)));
        let text = render(&program, &counts);
        // A 250 MiB limit over the 200 MiB peak; 90% of it less the 20 MiB outside.
        assert!(text.contains("request 200Mi: the line"), "{text}");
        assert!(text.contains("limit 250Mi"), "{text}");
        assert!(text.contains("GOMEMLIMIT=207MiB"), "{text}");
    }

    /// [`swept`] with its lines as an external program's, a relist phase's peak line
    /// `relist_extra` above the store's.
    fn program(kind: ObjectKind, fixed: f64, per_unit: f64, relist_extra: f64) -> Report {
        let mut report = swept(kind, fixed, per_unit);
        let mut relist = report.variants[0].phases[0].clone();
        relist.name = "relist".to_owned();
        relist.kind = PhaseKind::Relist;
        report.variants[0].phases.push(relist);
        let name = report.variants[0].name.clone();
        let points: Vec<(f64, f64)> = [10.0, 20.0, 40.0]
            .map(|x| (x, fixed + relist_extra + per_unit * x))
            .to_vec();
        report
            .fits
            .push(Fit::through(&name, "relist", Metric::SubjectRssPeakBytes, &points).unwrap());
        for fit in &mut report.fits {
            fit.metric = match fit.metric {
                Metric::InformerLiveBytes => Metric::SubjectHeapLiveBytes,
                _ => Metric::SubjectRssPeakBytes,
            };
        }
        report
    }

    #[test]
    fn one_program_of_several_kinds_holds_its_runtime_once_and_relists_one_at_a_time() {
        // A runtime of 1,000 bytes: 50 a pod, 4 a ConfigMap; a pods' relist peaks 600
        // above its store, a ConfigMaps' 100 above.
        let reports = vec![
            (
                "pods.json".to_owned(),
                program(ObjectKind::Pod, 1000.0, 50.0, 600.0),
            ),
            (
                "configmaps.json".to_owned(),
                program(ObjectKind::ConfigMap, 1000.0, 4.0, 100.0),
            ),
        ];
        let counts = BTreeMap::from([(ObjectKind::Pod, 100), (ObjectKind::ConfigMap, 1000)]);
        let total = &predict(&reports, &counts).unwrap()[0];
        assert!(total.external);
        let near = |p: Predicted, bytes: f64| (p.bytes - bytes).abs() < 1e-6;
        // The runtime once, and each kind's growth: 1,000 + 5,000 + 4,000.
        assert!(near(total.steady, 10_000.0), "{total:?}");
        assert!(near(total.initial_peak, 10_000.0), "{total:?}");
        // The pods' relist (1,000 + 600 + 5,000) beside the ConfigMaps' store (4,000).
        assert!(near(total.relist_peak.unwrap(), 10_600.0), "{total:?}");
        // Each kind alone keeps its own runtime.
        let choices = Choices::predict(&reports, &counts).unwrap();
        assert!(near(choices.kinds[1].2[0].steady, 5_000.0), "{choices:?}");
    }

    #[test]
    fn a_kind_without_a_count_or_a_count_without_a_report_is_refused() {
        let reports = vec![("pods.json".to_owned(), swept(ObjectKind::Pod, 0.0, 1.0))];
        let none = BTreeMap::from([(ObjectKind::Secret, 1)]);
        let e = predict(&reports, &none).unwrap_err().to_string();
        assert!(e.contains("give their count with --count Pod=N"), "{e}");
        let both = BTreeMap::from([(ObjectKind::Pod, 1), (ObjectKind::Secret, 1)]);
        let e = predict(&reports, &both).unwrap_err().to_string();
        assert!(
            e.contains("--count Secret: no report measures Secret"),
            "{e}"
        );
    }
}
