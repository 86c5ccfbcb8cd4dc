//! `informer-mem run`: load the scenario, plan every output before anything runs, run the
//! variants, print the table, write the outputs, and pick the exit code.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;

use super::session::Session;
use super::{ChartOutput, RunConfig};
use crate::exit_codes;
use crate::measure;
use crate::output::{self, Destination};
use crate::progress::{Mode, Reporter};
use crate::report::export::{self, ExportFormat};
use crate::report::{Report, render_table};
use crate::runner;
use crate::scenario::Scenario;

/// Runs a scenario; exit code 2 if a variant failed, 1 if a store did not match the server.
pub(super) fn run(config: &RunConfig) -> anyhow::Result<ExitCode> {
    let scenario = Scenario::load(&config.scenario)?;
    show_commands(&scenario, config)?;
    let outputs = Outputs::plan(config, &scenario)?;
    let session = config
        .cluster
        .as_ref()
        .map(|cluster| Session::open(cluster, &scenario, config.quiet))
        .transpose()?;
    let exe = std::env::current_exe().context("failed to locate this program to run variants")?;
    let mut progress = Reporter::new(
        Mode::detect(config.quiet),
        scenario.phases.iter().map(|p| p.name.clone()).collect(),
    );
    let limits = runner::Limits {
        variant_timeout: config.variant_timeout,
        dhat_files: outputs.dhat_files.as_deref(),
        profiles: outputs.report_file(),
        jobs: config.jobs,
        cluster: session.as_ref().map(|s| s.jobs.as_slice()),
    };
    let mut report = runner::run_variants(&scenario, &exe, &limits, |p| progress.show(p));
    progress.finish();
    if let Some(session) = &session {
        session.stop_if_interrupted();
        report.server = Some(session.server.clone());
        session.close()?;
    }
    outputs.write(&report, config.quiet)?;
    Ok(ExitCode::from(verdict(&report)))
}

/// Shows every program the scenario's external variants start, with its placeholders, and
/// refuses to go on without `--allow-commands`.
fn show_commands(scenario: &Scenario, config: &RunConfig) -> anyhow::Result<()> {
    if !scenario.starts_programs() {
        return Ok(());
    }
    let mut shown = format!(
        "{} starts these programs, each against the built-in apiserver on loopback:\n",
        config.scenario.display()
    );
    for variant in &scenario.variants {
        if let Some(subject) = &variant.subject {
            shown.push_str(&format!("  {}: {}\n", variant.name, subject.shown()));
        }
    }
    eprint!("{shown}");
    if config.allow_commands {
        return Ok(());
    }
    anyhow::bail!(
        "{} starts programs (shown above); run it with --allow-commands to let it",
        config.scenario.display()
    )
}

/// Every file and stream a run writes, decided and checked before anything runs.
#[derive(Debug)]
struct Outputs {
    /// Each output with its format: the JSON report first, then the chart, then exports.
    exports: Vec<(ExportFormat, Destination)>,
    /// The heap-profiling build: one dhat file per variant, beside the report.
    dhat_files: Option<Vec<PathBuf>>,
}

impl Outputs {
    /// The outputs `config` asks for: the report (by default `reports/<scenario>.json`),
    /// its chart and the exports. Refuses, before anything runs, outputs that cannot be
    /// written, that would overwrite the scenario, that share a file, or that share
    /// standard output.
    fn plan(config: &RunConfig, scenario: &Scenario) -> anyhow::Result<Outputs> {
        let out = config
            .out
            .clone()
            .unwrap_or_else(|| Path::new("reports").join(format!("{}.json", scenario.name)));
        let mut exports = vec![(ExportFormat::Json, Destination::File(out.clone()))];
        match &config.chart {
            ChartOutput::BesideReport => exports.push((
                ExportFormat::Svg,
                Destination::File(out.with_extension("svg")),
            )),
            ChartOutput::At(path) => exports.push((ExportFormat::Svg, path.clone().into())),
            ChartOutput::None => {}
        }
        exports.extend(config.exports.iter().cloned());
        let dhat_files = measure::dhat::BUILD.then(|| {
            scenario
                .variants
                .iter()
                .enumerate()
                .map(|(i, v)| runner::dhat_file(&out, i, &v.name))
                .collect::<Vec<_>>()
        });
        let dhat_destinations: Vec<Destination> = dhat_files
            .iter()
            .flatten()
            .map(|file| Destination::File(file.clone()))
            .collect();
        let all: Vec<(&str, &Destination)> = exports
            .iter()
            .map(|(format, destination)| (format.describe(), destination))
            .chain(dhat_destinations.iter().map(|d| ("a dhat profile", d)))
            .collect();
        output::refuse_overlaps(&all, &[("the scenario", &config.scenario)])?;
        for (what, destination) in all {
            destination.prepare(what, &[&config.scenario])?;
        }
        Ok(Outputs {
            exports,
            dhat_files,
        })
    }

    /// The report's file, when it goes to one: external variants' heap profiles go
    /// beside it.
    fn report_file(&self) -> Option<&Path> {
        match &self.exports[0] {
            (ExportFormat::Json, Destination::File(path)) => Some(path),
            _ => None,
        }
    }

    /// Prints the table (to stderr when an export has standard output) and writes every
    /// output, saying where unless `quiet`. The files are written even when the table
    /// could not be (a full standard output); that error comes after them.
    fn write(&self, report: &Report, quiet: bool) -> anyhow::Result<()> {
        let table = render_table(report);
        let printed = if self.exports.iter().any(|(_, d)| *d == Destination::Stdout) {
            eprint!("{table}");
            Ok(())
        } else {
            output::print("the table", table.as_bytes())
        };
        if let Some(files) = &self.dhat_files
            && !quiet
        {
            for file in files.iter().filter(|f| f.exists()) {
                eprintln!("wrote a dhat profile to {}", file.display());
            }
        }
        for (format, destination) in &self.exports {
            destination.write(
                format.describe(),
                export::render(report, *format).as_bytes(),
            )?;
            if let Destination::File(path) = destination
                && !quiet
            {
                eprintln!("wrote {} to {}", format.describe(), path.display());
            }
        }
        Ok(printed?)
    }
}

/// The run's exit code: a failed variant is an error (2); a store that did not match the
/// server where the scenario expects it to is a failed run (1).
fn verdict(report: &Report) -> u8 {
    let failed = report.variants.iter().any(|v| v.error.is_some());
    let inconsistent = report.unexpected_inconsistencies().count();
    if inconsistent > 0 {
        eprintln!(
            "error: {inconsistent} phase(s) ended with a store that does not match the server \
             (see the `store` column); set `expect_consistent = false` on a phase that shows \
             this on purpose"
        );
    }
    if failed {
        exit_codes::ERROR
    } else if inconsistent > 0 {
        exit_codes::FAILED
    } else {
        exit_codes::OK
    }
}
