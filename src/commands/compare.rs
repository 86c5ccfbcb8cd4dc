//! The commands that read reports: `diff` (two reports side by side), `check` (a report
//! gated on a baseline), `size` (a cluster's memory predicted from sweeps) and `export` (a
//! report in another format).

use std::path::Path;
use std::process::ExitCode;

use super::{CheckConfig, DiffConfig, ExportConfig, SizeConfig, SizeSource};
use crate::exit_codes;
use files::output::{self, Destination};
use report::compare::{Comparison, Tolerances};
use report::diff::{render_check, render_diff};
use report::export;
use report::junit::render_junit;
use report::{self, Report};

/// A whole run's report: a shard's (`run --shard`) is refused, as it holds a share of
/// the variants.
fn whole(path: &Path) -> anyhow::Result<Report> {
    let report = Report::read(path)?;
    if let Some(shard) = &report.shard {
        anyhow::bail!(
            "`{}` is shard {}/{} of a run: merge the shards first (`informer-mem merge`)",
            path.display(),
            shard.index,
            shard.count
        );
    }
    Ok(report)
}

/// `informer-mem diff`: prints the comparison; never fails on what it finds.
pub(super) fn diff(config: &DiffConfig) -> anyhow::Result<ExitCode> {
    let base = whole(&config.base)?;
    let head = whole(&config.head)?;
    let tolerances = Tolerances::for_report(&head, &[]);
    let comparison = Comparison::new(&base, &head, &tolerances)?;
    output::print(
        "the comparison",
        render_diff(&comparison, config.format, config.verbose).as_bytes(),
    )?;
    Ok(ExitCode::from(exit_codes::OK))
}

/// `informer-mem check`: exit code 1 when a figure moved beyond its tolerance.
pub(super) fn check(config: &CheckConfig) -> anyhow::Result<ExitCode> {
    let junit = "the JUnit verdict";
    if let Some(out) = &config.junit {
        let inputs = [
            ("the report", config.head.as_path()),
            ("the baseline", config.baseline.as_path()),
        ];
        output::refuse_overlaps(&[(junit, out)], &inputs)?;
        out.prepare(junit, &[&config.head, &config.baseline])?;
    }
    let baseline = whole(&config.baseline)?;
    let head = whole(&config.head)?;
    let tolerances = Tolerances::for_report(&head, &config.tolerances);
    let comparison = Comparison::new(&baseline, &head, &tolerances)?;
    if let Some(out) = &config.junit {
        out.write(junit, render_junit(&comparison).as_bytes())?;
    }
    let verdict = render_check(&comparison);
    match &config.junit {
        // The XML has standard output: the verdict goes to stderr.
        Some(Destination::Stdout) => files::say_text!("{verdict}"),
        _ => output::print("the verdict", verdict.as_bytes())?,
    }
    Ok(ExitCode::from(if comparison.failed() {
        exit_codes::FAILED
    } else {
        exit_codes::OK
    }))
}

/// `informer-mem size`: each variant's predicted memory for the counts asked for.
pub(super) fn size(config: &SizeConfig) -> anyhow::Result<ExitCode> {
    let SizeSource::Reports(files) = &config.source else {
        return super::sizing::measured(config);
    };
    if config.counts.is_empty() {
        anyhow::bail!(
            "size: give the cluster's count of each kind the reports measure, with --count \
             KIND=N (or size a cluster's objects with --objects FILE or --kubeconfig PATH)"
        );
    }
    // A scenario is run first (its sweep at small counts), a report read.
    let reports = files
        .iter()
        .map(|file| {
            let report = if file.extension().is_some_and(|e| e == "toml") {
                super::run::report_of(file, false, false)?
            } else {
                whole(file)?
            };
            Ok((file.display().to_string(), report))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let counts = report::size::counted_kinds(&reports, &config.counts)?;
    let predictions = report::size::predict(&reports, &counts)?;
    output::print(
        "the prediction",
        report::size::render(&predictions, &counts).as_bytes(),
    )?;
    Ok(ExitCode::from(exit_codes::OK))
}

/// `informer-mem export`: the report rendered in the format asked for.
pub(super) fn export(config: &ExportConfig) -> anyhow::Result<ExitCode> {
    let what = config.format.describe();
    output::refuse_overlaps(&[(what, &config.out)], &[("the report", &config.report)])?;
    config.out.prepare(what, &[&config.report])?;
    let report = Report::read(&config.report)?;
    let text = export::render(&report, config.format);
    config
        .out
        .write(config.format.describe(), text.as_bytes())?;
    Ok(ExitCode::from(exit_codes::OK))
}
