//! The commands: `run`, `merge`, `serve`, `diff`, `check`, `export` and `crosscheck`, each a plain config struct
//! that [`crate::cli`] builds from the command line, and [`run`] that carries one out and
//! picks the exit code ([`crate::exit_codes`]). The layer between the command line and
//! the stages: only this module and `cli` decide what is printed and written.

mod compare;
mod consent;
mod crosscheck;
mod launched;
mod merge;
mod run;
mod session;
mod sizing;

use std::path::PathBuf;
use std::process::ExitCode;

use crate::exit_codes;
use files::output::Destination;
use report::export::ExportFormat;

/// What to do; built from the command line by [`crate::cli`].
#[derive(Debug)]
pub enum Command {
    /// Run a scenario.
    Run(RunConfig),
    /// Serve a scenario's objects over HTTP.
    Serve(apiserver::ServeConfig),
    /// Compare two reports.
    Diff(DiffConfig),
    /// Join a run's shard reports.
    Merge(MergeConfig),
    /// Gate a report against a baseline.
    Check(CheckConfig),
    /// Convert a report into another format.
    Export(ExportConfig),
    /// Predict a cluster's informer memory from sweep reports.
    Size(SizeConfig),
    /// Compare the built-in apiserver with a real one, request by request.
    Crosscheck(CrosscheckConfig),
    /// Run one variant as a child process of `run`.
    RunVariant,
}

/// Settings of `informer-mem crosscheck`.
#[derive(Debug)]
pub struct CrosscheckConfig {
    /// The servers.
    pub check: crate::crosscheck::Config,
    /// Where to write the outcome as JSON.
    pub out: Option<Destination>,
}

/// Settings of `informer-mem merge`.
#[derive(Debug)]
pub struct MergeConfig {
    /// The shard reports.
    pub shards: Vec<PathBuf>,
    /// Where to write the merged report; `None` for `runs/<scenario name>.json`.
    pub out: Option<Destination>,
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
    /// Whether the terminal table lists the advisory figures that moved.
    pub verbose: bool,
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
    /// Where to write the verdict as JUnit XML.
    pub junit: Option<Destination>,
}

/// Settings of `informer-mem size`.
#[derive(Debug)]
pub struct SizeConfig {
    /// What is sized.
    pub source: SizeSource,
    /// Counts given on the command line: each kind's name as given (`Pod`, `pods`,
    /// `Widget`) and its count; they replace the counts read.
    pub counts: Vec<(String, u64)>,
    /// The counts a sample is measured at (`--objects`, `--kubeconfig`).
    pub points: Vec<u64>,
    /// Measure the built-in model, not client-go.
    pub model: bool,
    /// Where each kind's sweep report is kept.
    pub out: Option<PathBuf>,
}

/// What `size` predicts from.
#[derive(Debug, Clone)]
pub enum SizeSource {
    /// Reports (or scenarios) of sweeps over `count`, one per kind.
    Reports(Vec<PathBuf>),
    /// Objects `kubectl get -o json` wrote.
    Objects(Vec<PathBuf>),
    /// A cluster, read-only.
    Cluster {
        /// Its kubeconfig.
        kubeconfig: PathBuf,
        /// The resources to count; the default set when empty.
        resources: Vec<String>,
    },
}

/// Settings of `informer-mem run`.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The scenario file.
    pub scenario: PathBuf,
    /// Where to write the JSON report; `None` for `runs/<scenario name>.json`
    /// ([`run::DEFAULT_FOLDER`]).
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
    /// Whether the scenario's external variants may start their programs.
    pub allow_commands: bool,
    /// Whether each external variant's program output is kept beside the report (a failed
    /// variant's always is).
    pub keep_output: bool,
    /// The real server to run against instead of the built-in apiserver (`--kubeconfig`).
    pub cluster: Option<ClusterConfig>,
    /// `--server`: the server to run against, over the scenario's `server`; with
    /// `kube-apiserver` the run starts servers/kube-apiserver itself.
    pub server: Option<scenario::Server>,
    /// A sweep in place of the scenario's own `[sweep]`.
    pub sweep: Option<scenario::SweepArg>,
    /// The share of the run's jobs to run (`--shard I/N`); `None`: all of them.
    pub shard: Option<report::shard::ShardArg>,
}

/// `run --kubeconfig`: the real server a run talks to.
#[derive(Debug, Clone)]
pub struct ClusterConfig {
    /// The kubeconfig naming it (its current context).
    pub kubeconfig: PathBuf,
    /// Write nothing; refuse phases that write.
    pub read_only: bool,
    /// The server's process, when it runs on this machine: measured from outside too.
    pub server_pid: Option<u32>,
    /// The server, when the run started it (`--server kube-apiserver`): stopped when the
    /// run ends or is interrupted.
    pub launched: Option<std::sync::Arc<launched::Launched>>,
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
            crate::runner::child::main()?;
            Ok(ExitCode::from(exit_codes::OK))
        }
        Command::Run(config) => run::run(&config),
        Command::Serve(config) => {
            apiserver::serve(&config)?;
            Ok(ExitCode::from(exit_codes::OK))
        }
        Command::Diff(config) => compare::diff(&config),
        Command::Merge(config) => merge::merge(&config),
        Command::Size(config) => compare::size(&config),
        Command::Check(config) => compare::check(&config),
        Command::Export(config) => compare::export(&config),
        Command::Crosscheck(config) => crosscheck::crosscheck(&config),
    }
}
