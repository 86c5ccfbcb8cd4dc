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
pub mod measure;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod units;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};

use report::compare::{Comparison, Tolerances};
use report::diff::{render_check, render_diff};
use report::{Report, render_table};
use runner::Progress;
use runner::variant::Message;
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
    if out.is_dir() {
        bail!(
            "failed to use `{}` as the report: it is a directory",
            out.display()
        );
    }
    let exe = std::env::current_exe().context("failed to locate this program to run variants")?;
    let report = runner::run_scenario(&scenario, &exe, print_progress);
    print!("{}", render_table(&report));
    report.write_json(&out)?;
    eprintln!("report written to {}", out.display());
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

fn print_progress(progress: Progress<'_>) {
    match progress {
        Progress::VariantStarted { index, total, name } => {
            eprintln!("[{}/{total}] {name}", index + 1);
        }
        Progress::Message(Message::Setup(_)) => {}
        Progress::Message(Message::Phase(p)) => eprintln!(
            "      {:<12} {:>10} objects  live {:>10}  peak {:>10}  ({:.0} ms)",
            p.name,
            p.objects,
            p.measurement.live_bytes.to_string(),
            p.measurement.peak_live_bytes.to_string(),
            p.measurement.duration_ms
        ),
        Progress::Message(Message::Failed(e)) => eprintln!("      failed: {e}"),
    }
}
