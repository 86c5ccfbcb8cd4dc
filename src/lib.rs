//! informer-mem: a memory profiler for Kubernetes informers.
//!
//! The pipeline, one module per stage: [`scenario`] (TOML -> validated scenario) ->
//! [`runner`] (one child process per variant) -> in each child, [`apiserver`] and
//! [`informer`] driven through the phases under [`measure`] -> [`report`] (table, JSON).
//! [`cli`] is the only module that knows clap.

pub mod apiserver;
pub mod cli;
pub mod exit_codes;
pub mod informer;
pub mod k8s;
pub mod measure;
pub mod metric;
pub mod output;
pub mod progress;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod units;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};

use output::Destination;
use progress::{Mode, Reporter};
use report::compare::{Comparison, Tolerances};
use report::diff::{render_check, render_diff};
use report::export::{self, ExportFormat};
use report::{Report, render_table};
use scenario::Scenario;

// Unit tests measure with the same allocator the binary installs.
#[cfg(test)]
#[global_allocator]
static TEST_ALLOCATOR: measure::CountingJemalloc = measure::CountingJemalloc;

/// What to do; built from the command line by [`cli`].
#[derive(Debug)]
pub enum Command {
    /// Run a scenario.
    Run(RunConfig),
    /// Serve a scenario's objects over HTTP.
    Serve(apiserver::serve::ServeConfig),
    /// Compare two reports.
    Diff(DiffConfig),
    /// Gate a report against a baseline.
    Check(CheckConfig),
    /// Convert a report into another format.
    Export(ExportConfig),
    /// Run one variant as a child process of `run`.
    RunVariant,
}

/// Settings of `informer-mem diff`.
#[derive(Debug)]
pub struct DiffConfig {
    /// The report to compare against.
    pub base: PathBuf,
    /// The report to compare.
    pub head: PathBuf,
    /// How to print.
    pub format: report::diff::DiffFormat,
}

/// Settings of `informer-mem check`.
#[derive(Debug)]
pub struct CheckConfig {
    /// The report to check.
    pub head: PathBuf,
    /// The report it must not regress from.
    pub baseline: PathBuf,
    /// Tolerances beyond the defaults.
    pub tolerances: Vec<report::compare::Tolerance>,
}

/// Settings of `informer-mem run`.
#[derive(Debug)]
pub struct RunConfig {
    /// The scenario file.
    pub scenario: PathBuf,
    /// Where to write the JSON report; `None` for `reports/<scenario name>.json`.
    pub out: Option<PathBuf>,
    /// Where to draw the chart.
    pub chart: ChartOutput,
    /// More outputs, each in its format.
    pub exports: Vec<(ExportFormat, Destination)>,
    /// Show no progress.
    pub quiet: bool,
    /// How long a variant's process may run (real time) before it is killed.
    pub variant_timeout: std::time::Duration,
    /// How many variants' processes may run at once.
    pub jobs: usize,
}

/// Where `run` draws its chart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChartOutput {
    /// Beside the report, with the extension `.svg`.
    BesideReport,
    /// At this path (`-` is standard output).
    At(PathBuf),
    /// Nowhere.
    None,
}

/// Settings of `informer-mem export`.
#[derive(Debug)]
pub struct ExportConfig {
    /// The report to convert.
    pub report: PathBuf,
    /// Into what.
    pub format: ExportFormat,
    /// Where to write it.
    pub out: Destination,
}

/// Runs a command; the exit code follows [`exit_codes`]. Errors mean exit code 2.
pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::RunVariant => {
            runner::variant::main()?;
            Ok(ExitCode::from(exit_codes::OK))
        }
        Command::Run(config) => run_scenario(&config),
        Command::Serve(config) => {
            apiserver::serve::serve(&config)?;
            Ok(ExitCode::from(exit_codes::OK))
        }
        Command::Diff(config) => {
            let base = Report::read(&config.base)?;
            let head = Report::read(&config.head)?;
            let tolerances = Tolerances::for_report(&head, &[]);
            let comparison = Comparison::new(&base, &head, &tolerances)?;
            print!("{}", render_diff(&comparison, config.format));
            Ok(ExitCode::from(exit_codes::OK))
        }
        Command::Export(config) => {
            let report = Report::read(&config.report)?;
            let text = export::render(&report, config.format);
            config
                .out
                .write(config.format.describe(), text.as_bytes())?;
            Ok(ExitCode::from(exit_codes::OK))
        }
        Command::Check(config) => {
            let baseline = Report::read(&config.baseline)?;
            let head = Report::read(&config.head)?;
            let tolerances = Tolerances::for_report(&head, &config.tolerances);
            let comparison = Comparison::new(&baseline, &head, &tolerances)?;
            print!("{}", render_check(&comparison));
            Ok(ExitCode::from(if comparison.failed() {
                exit_codes::FAILED
            } else {
                exit_codes::OK
            }))
        }
    }
}

fn run_scenario(config: &RunConfig) -> anyhow::Result<ExitCode> {
    let scenario = Scenario::load(&config.scenario)?;
    let out = config
        .out
        .clone()
        .unwrap_or_else(|| Path::new("reports").join(format!("{}.json", scenario.name)));
    let mut outputs = vec![(ExportFormat::Json, Destination::File(out.clone()))];
    match &config.chart {
        ChartOutput::BesideReport => outputs.push((
            ExportFormat::Svg,
            Destination::File(out.with_extension("svg")),
        )),
        ChartOutput::At(path) => outputs.push((ExportFormat::Svg, path.clone().into())),
        ChartOutput::None => {}
    }
    outputs.extend(config.exports.iter().cloned());
    check_outputs(&outputs, &config.scenario)?;
    // The heap-profiling build: one dhat file per variant, beside the report.
    let dhat_files = measure::dhat::BUILD.then(|| {
        scenario
            .variants
            .iter()
            .enumerate()
            .map(|(i, v)| runner::dhat_file(&out, i, &v.name))
            .collect::<Vec<_>>()
    });
    for file in dhat_files.iter().flatten() {
        Destination::File(file.clone()).prepare("a dhat profile", &[&config.scenario])?;
    }
    let exe = std::env::current_exe().context("failed to locate this program to run variants")?;
    let mut progress = Reporter::new(
        Mode::detect(config.quiet),
        scenario.phases.iter().map(|p| p.name.clone()).collect(),
    );
    let limits = runner::Limits {
        variant_timeout: config.variant_timeout,
        dhat_files: dhat_files.as_deref(),
        jobs: config.jobs,
    };
    let report = runner::run_scenario(&scenario, &exe, &limits, |p| progress.show(p));
    progress.finish();
    // Standard output belongs to an export that asked for it; the table moves aside.
    let table = render_table(&report);
    if outputs.iter().any(|(_, d)| *d == Destination::Stdout) {
        eprint!("{table}");
    } else {
        print!("{table}");
    }
    if let Some(files) = &dhat_files
        && !config.quiet
    {
        for file in files.iter().filter(|f| f.exists()) {
            eprintln!("wrote a dhat profile to {}", file.display());
        }
    }
    for (format, destination) in &outputs {
        destination.write(
            format.describe(),
            export::render(&report, *format).as_bytes(),
        )?;
        if let Destination::File(path) = destination
            && !config.quiet
        {
            eprintln!("wrote {} to {}", format.describe(), path.display());
        }
    }
    let failed = report.variants.iter().any(|v| v.error.is_some());
    let inconsistent = report.unexpected_inconsistencies().count();
    if inconsistent > 0 {
        eprintln!(
            "error: {inconsistent} phase(s) ended with a store that does not match the server \
             (see the `store` column); set `expect_consistent = false` on a phase that shows \
             this on purpose"
        );
    }
    Ok(ExitCode::from(if failed {
        exit_codes::ERROR
    } else if inconsistent > 0 {
        exit_codes::FAILED
    } else {
        exit_codes::OK
    }))
}

/// Refuses, before anything runs, outputs that cannot be written, that would overwrite the
/// scenario, that share a file, or that share standard output.
fn check_outputs(outputs: &[(ExportFormat, Destination)], scenario: &Path) -> anyhow::Result<()> {
    for (i, (format, destination)) in outputs.iter().enumerate() {
        if let Some((other, _)) = outputs[..i].iter().find(|(_, d)| d == destination) {
            bail!(
                "{} and {} would both go to {destination}; give each its own path",
                other.describe(),
                format.describe()
            );
        }
    }
    for (format, destination) in outputs {
        destination.prepare(format.describe(), &[scenario])?;
    }
    Ok(())
}
