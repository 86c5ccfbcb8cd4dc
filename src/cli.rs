//! The command line. The only module that knows clap: it turns arguments into the plain
//! [`Command`] the library runs.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use crate::commands::{
    ChartOutput, CheckConfig, ClusterConfig, Command, CrosscheckConfig, DiffConfig, ExportConfig,
    MergeConfig, RunConfig, SizeConfig, SizeSource,
};
use apiserver::ServeConfig;
use files::output::Destination;
use report::compare::Tolerance;
use report::diff::DiffFormat;
use report::export::ExportFormat;
use report::shard::ShardArg;
use scenario::SweepArg;

/// Memory profiler for Kubernetes informers.
///
/// Runs a built-in apiserver and a built-in informer through the phases of a scenario, for
/// several informer variants side by side, each in its own process, and measures every
/// phase with exact allocation counts and jemalloc statistics.
#[derive(Debug, Parser)]
#[command(
    name = "informer-mem",
    version,
    about,
    long_about = None,
    after_help = "Exit codes: 0 ok; 1 a store did not match the server (run) or a regression \
                  beyond tolerance (check); 2 bad input or a runtime error.\n\
                  Progress goes to standard error, on a terminal only as progress bars \
                  (NO_COLOR turns their colour off)."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Subcommands,
}

#[derive(Debug, Subcommand)]
enum Subcommands {
    /// Run a scenario: print a table and write the JSON report.
    Run {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// Where to write the JSON report [default: runs/<scenario name>.json, never over a
        /// committed baseline: refreshing one is `--out reports/<scenario name>.json`].
        #[arg(long, value_name = "PATH")]
        out: Option<PathBuf>,
        /// Where to draw the chart (SVG) [default: beside the report, ending in .svg].
        #[arg(long, value_name = "PATH", conflicts_with = "no_chart")]
        chart: Option<PathBuf>,
        /// Draw no chart.
        #[arg(long)]
        no_chart: bool,
        #[command(flatten)]
        exports: Exports,
        /// Print no progress (the table and errors still print).
        #[arg(long, short)]
        quiet: bool,
        /// Kill a variant's process that runs longer than this (real time: `90s`, `30m`);
        /// it is recorded as failed and the other variants still run.
        #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = humantime::parse_duration)]
        variant_timeout: std::time::Duration,
        /// Run up to N variants' processes at once. Exact figures are the same for every N;
        /// RSS, resident bytes and durations are cleanest with 1, the default, since
        /// parallel variants compete for cores, memory bandwidth and page reclaim.
        #[arg(long, short, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
        jobs: u16,
        /// Run the programs the scenario's external variants name (`command`). They are
        /// shown before anything runs; without this flag a scenario that has any is
        /// refused.
        #[arg(long)]
        allow_commands: bool,
        /// Keep each external variant's program output (its stdout and stderr) beside the
        /// report, as `<report>.<N>-<variant>.output.log`. A variant that fails keeps it
        /// without this flag, its path in the error.
        #[arg(long)]
        keep_output: bool,
        /// Run every variant and phase at each value of one key of `[objects]` (`count`,
        /// or a shape knob: labels, annotations, containers, managed_fields, data_keys,
        /// data_bytes, images) or of the Go runtime in each external variant's environment
        /// (env.GOGC=50,100,200; env.GOMEMLIMIT=512MiB,1GiB), in place of the scenario's
        /// `[sweep]`; the report fits each variant's live and peak bytes against it.
        #[arg(long, value_name = "KEY=V1,V2,...")]
        sweep: Option<SweepArg>,
        /// Run shard I of N: every Nth of the run's jobs (each variant at each sweep
        /// point), from the Ith, for a CI matrix; `merge` joins the N shard reports into
        /// the whole run's. Run every shard with one build. The report goes to
        /// runs/<scenario>.shard-I-of-N.json unless --out says.
        #[arg(long, value_name = "I/N")]
        shard: Option<ShardArg>,
        #[command(flatten)]
        server: RealServerArgs,
    },
    /// Convert a report into another format: markdown, benchmark-tool JSON, a chart.
    Export {
        /// The report (JSON, as `run` writes it).
        report: PathBuf,
        /// The format to write.
        #[arg(long, value_enum)]
        format: ExportAs,
        /// Where to write it; `-` is standard output.
        #[arg(long, value_name = "PATH", default_value = "-")]
        out: PathBuf,
    },
    /// Serve a scenario's objects over HTTP, for kubectl or any informer.
    ///
    /// Prints `listening on http://ADDR` as the first line of stdout and writes a
    /// kubeconfig for the server. The first Ctrl-C or SIGTERM stops accepting, ends the
    /// watches and waits up to --shutdown-grace for requests in flight; a second one
    /// exits at once.
    Serve {
        /// The scenario file (TOML); only its objects are used.
        scenario: PathBuf,
        /// Address to listen on; loopback unless given.
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
        listen: SocketAddr,
        /// Where to write the kubeconfig [default: <scenario name>.kubeconfig in a folder of
        /// its own (0700) in the temporary directory, removed when serve stops].
        #[arg(long, value_name = "PATH")]
        kubeconfig: Option<PathBuf>,
        /// Events of history kept for watches and exact reads, overriding the scenario's
        /// `[apiserver] history_events` [default: the scenario's, else 102400, the upper
        /// bound of kube-apiserver's watch cache].
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        history_events: Option<u64>,
        /// How long a stop waits for requests in flight before closing every connection.
        #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = humantime::parse_duration)]
        shutdown_grace: std::time::Duration,
        /// How long a client may take to send a request's headers (kube-apiserver's
        /// ReadHeaderTimeout); slower connections are closed.
        #[arg(long, value_name = "DURATION", default_value = "32s", value_parser = humantime::parse_duration)]
        read_header_timeout: std::time::Duration,
        /// How long a client may take to send a request's body (kube-apiserver's
        /// --request-timeout); slower requests get 504 Timeout.
        #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = humantime::parse_duration)]
        request_timeout: std::time::Duration,
    },
    /// Compare two reports of one scenario, metric by metric.
    Diff(DiffArgs),
    /// Join the shard reports of one run (`run --shard I/N`, one file per shard) into
    /// the report the whole run writes: the same exact figures, a sweep's fits through
    /// every point.
    Merge(MergeArgs),
    /// Gate a report on a baseline: exit 1 if a figure rose beyond its tolerance.
    ///
    /// Allocation counts, bytes requested and API requests are exact (0%), live and peak
    /// bytes get 1%, RSS, resident bytes and durations are not gated unless asked.
    Check(CheckArgs),
    /// Predict what an informer needs for a cluster's object counts, from reports of
    /// sweeps over `count` (one report a kind of object; `run --sweep count=...`), or
    /// from scenarios with such a sweep, run first (nothing is written).
    ///
    /// Prints, per variant, the steady store, the initial sync's peak and a relist's
    /// peak, summed over the kinds, each with the 95% prediction band of its fit.
    Size(SizeArgs),
    /// Send the same requests to the built-in apiserver and to a real kube-apiserver and
    /// compare the answers (status codes, Status reasons, body shapes, watch events).
    ///
    /// Makes a namespace of its own on the real server for each round (copies of the
    /// built-in server's ConfigMaps, then Deployments, then Pods, go in it) and deletes it at the end,
    /// also on failure and Ctrl-C. Exit
    /// code 1 if an answer differs in a way the known differences do not explain.
    Crosscheck(CrosscheckArgs),
    /// Internal: run one variant of a job read from stdin (the runner starts this).
    #[command(name = "__run-variant", hide = true)]
    RunVariant,
}

/// `informer-mem diff`'s arguments.
#[derive(Debug, clap::Args)]
struct DiffArgs {
    /// The report to compare against (e.g. the main branch's).
    base: PathBuf,
    /// The report to compare (e.g. the pull request's).
    head: PathBuf,
    /// How to print: a terminal table of what changed, a pull-request comment, or JSON.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// In the terminal table, also list the advisory figures that moved (RSS,
    /// durations, a real program's figures), which are otherwise one line.
    #[arg(long, short)]
    verbose: bool,
}

impl From<DiffArgs> for DiffConfig {
    fn from(args: DiffArgs) -> DiffConfig {
        DiffConfig {
            base: args.base,
            head: args.head,
            format: args.format.into(),
            verbose: args.verbose,
        }
    }
}

/// `informer-mem check`'s arguments.
#[derive(Debug, clap::Args)]
struct CheckArgs {
    /// The report to check.
    head: PathBuf,
    /// The report it must not regress from.
    #[arg(long, value_name = "REPORT")]
    baseline: PathBuf,
    /// How far a metric may rise, in percent of the baseline (repeatable), e.g.
    /// `--tolerance live_bytes=2 --tolerance rss_bytes=10`.
    #[arg(long = "tolerance", value_name = "METRIC=PCT", value_parser = parse_tolerance)]
    tolerances: Vec<Tolerance>,
    /// Also write the verdict as JUnit XML to this file (`-` is standard output), for
    /// CI systems to show: each gated figure a test case, failed on a regression.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
}

impl From<CheckArgs> for CheckConfig {
    fn from(args: CheckArgs) -> CheckConfig {
        CheckConfig {
            head: args.head,
            baseline: args.baseline,
            tolerances: args.tolerances,
            junit: args.junit.map(Destination::from),
        }
    }
}

/// `informer-mem merge`'s arguments.
#[derive(Debug, clap::Args)]
struct MergeArgs {
    /// The shard reports, every shard of the run once, in any order.
    #[arg(required = true)]
    shards: Vec<PathBuf>,
    /// Where to write the merged report (`-` is standard output) [default:
    /// runs/<scenario>.json].
    #[arg(long, value_name = "PATH")]
    out: Option<PathBuf>,
}

impl From<MergeArgs> for MergeConfig {
    fn from(args: MergeArgs) -> MergeConfig {
        MergeConfig {
            shards: args.shards,
            out: args.out.map(Destination::from),
        }
    }
}

/// `informer-mem size`'s arguments.
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("source").required(true).args(["reports", "objects", "kubeconfig"]))]
struct SizeArgs {
    /// Reports (JSON) or scenarios (`.toml`) of sweeps over `count`, one per kind of
    /// object.
    reports: Vec<PathBuf>,
    /// How many objects of a kind the cluster has (repeatable), e.g.
    /// `--count Pod=50000 --count ConfigMap=3000`; with `--objects` or `--kubeconfig`,
    /// in place of the count read there.
    #[arg(long = "count", value_name = "KIND=N", value_parser = parse_count)]
    counts: Vec<(String, u64)>,
    /// Objects as `kubectl get ... -o json` (or `-o yaml`) writes them (repeatable; one
    /// List may hold several kinds): each kind counted and sampled, and the sample
    /// measured in real client-go.
    #[arg(long = "objects", value_name = "FILE", conflicts_with_all = ["reports", "kubeconfig"])]
    objects: Vec<PathBuf>,
    /// A cluster to count and sample, read-only (GET, LIST): its current context.
    #[arg(long, value_name = "PATH", conflicts_with = "reports")]
    kubeconfig: Option<PathBuf>,
    /// With --kubeconfig, the resources to count (comma-separated; a group after a dot:
    /// `deployments.apps`); the kinds controllers most often cache when left out.
    #[arg(
        long = "resource",
        value_name = "NAMES",
        value_delimiter = ',',
        requires = "kubeconfig"
    )]
    resources: Vec<String>,
    /// With --objects or --kubeconfig, the counts each kind's sample is measured at (a
    /// sweep: two or more), whose lines are drawn to the cluster's count.
    #[arg(
        long,
        value_name = "N,N,...",
        value_delimiter = ',',
        default_value = "1000,2000,4000"
    )]
    points: Vec<u64>,
    /// With --objects or --kubeconfig, measure the built-in model (k8s-openapi's bytes)
    /// instead of real client-go, as `size` does where Go is not installed.
    #[arg(long)]
    model: bool,
    /// With --objects or --kubeconfig, keep each kind's sweep report in this folder
    /// (`size` can predict from them again without measuring).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

impl From<SizeArgs> for SizeConfig {
    fn from(args: SizeArgs) -> SizeConfig {
        let source = match (args.kubeconfig, args.objects.is_empty()) {
            (Some(kubeconfig), _) => SizeSource::Cluster {
                kubeconfig,
                resources: args.resources,
            },
            (None, false) => SizeSource::Objects(args.objects),
            (None, true) => SizeSource::Reports(args.reports),
        };
        SizeConfig {
            source,
            counts: args.counts,
            points: args.points,
            model: args.model,
            out: args.out,
        }
    }
}

/// `informer-mem crosscheck`'s arguments.
#[derive(Debug, clap::Args)]
struct CrosscheckArgs {
    /// The real server's kubeconfig (its current context is used).
    #[arg(long, value_name = "PATH")]
    kubeconfig: PathBuf,
    /// The real server's etcd client URL (servers/kube-apiserver writes it to
    /// DIR/etcd-url), for the requests that need a compaction; without it they are not
    /// run.
    #[arg(long, value_name = "URL")]
    etcd: Option<String>,
    /// Also write every request's answers and verdict as JSON here.
    #[arg(long, value_name = "PATH")]
    out: Option<PathBuf>,
}

impl From<CrosscheckArgs> for CrosscheckConfig {
    fn from(args: CrosscheckArgs) -> CrosscheckConfig {
        CrosscheckConfig {
            check: crate::crosscheck::Config {
                kubeconfig: args.kubeconfig,
                etcd: args.etcd,
            },
            out: args.out.map(Destination::from),
        }
    }
}

/// `run --export-*`: extra outputs of a run; `-` is standard output (then the table goes
/// to standard error).
#[derive(Debug, clap::Args)]
struct Exports {
    /// Also write the JSON report here (e.g. `-` to pipe it).
    #[arg(long, value_name = "PATH")]
    export_json: Option<PathBuf>,
    /// Write the results table as GitHub markdown.
    #[arg(long, value_name = "PATH")]
    export_markdown: Option<PathBuf>,
    /// Write github-action-benchmark's `customSmallerIsBetter` JSON.
    #[arg(long, value_name = "PATH")]
    export_github_benchmark: Option<PathBuf>,
    /// Write Bencher's metric format (BMF) JSON.
    #[arg(long, value_name = "PATH")]
    export_bencher: Option<PathBuf>,
}

impl Exports {
    fn into_list(self) -> Vec<(ExportFormat, Destination)> {
        [
            (ExportFormat::Json, self.export_json),
            (ExportFormat::Markdown, self.export_markdown),
            (ExportFormat::GithubBenchmark, self.export_github_benchmark),
            (ExportFormat::Bencher, self.export_bencher),
        ]
        .into_iter()
        .filter_map(|(format, path)| Some((format, Destination::from(path?))))
        .collect()
    }
}

/// `export --format`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum ExportAs {
    /// The report's JSON, as `run` writes it.
    Json,
    /// The results table as GitHub markdown.
    Markdown,
    /// github-action-benchmark's `customSmallerIsBetter` JSON.
    GithubBenchmark,
    /// Bencher's metric format (BMF) JSON.
    Bencher,
    /// The chart (SVG).
    Svg,
}

impl From<ExportAs> for ExportFormat {
    fn from(format: ExportAs) -> ExportFormat {
        match format {
            ExportAs::Json => ExportFormat::Json,
            ExportAs::Markdown => ExportFormat::Markdown,
            ExportAs::GithubBenchmark => ExportFormat::GithubBenchmark,
            ExportAs::Bencher => ExportFormat::Bencher,
            ExportAs::Svg => ExportFormat::Svg,
        }
    }
}

/// `diff --format`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Table,
    Markdown,
    Json,
}

impl From<Format> for DiffFormat {
    fn from(format: Format) -> DiffFormat {
        match format {
            Format::Table => DiffFormat::Table,
            Format::Markdown => DiffFormat::Markdown,
            Format::Json => DiffFormat::Json,
        }
    }
}

fn parse_tolerance(text: &str) -> Result<Tolerance, String> {
    text.parse()
}

/// `size --count KIND=N`: a kind's name as given (`size` matches it against the kinds it
/// knows and its reports measure) and the count.
fn parse_count(text: &str) -> Result<(String, u64), String> {
    let (kind, n) = text
        .split_once('=')
        .filter(|(kind, _)| !kind.trim().is_empty())
        .ok_or_else(|| format!("{text:?}: expected KIND=N, for example Pod=50000"))?;
    let n = n
        .trim()
        .parse::<u64>()
        .map_err(|_| format!("{n:?} is not a count of objects (a whole number, 0 or more)"))?;
    Ok((kind.trim().to_owned(), n))
}

/// `run --server`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum ServerArg {
    // No doc comments here: clap would print every option of `run` in its long layout.
    BuiltIn,
    KubeApiserver,
}

impl From<ServerArg> for scenario::Server {
    fn from(server: ServerArg) -> scenario::Server {
        match server {
            ServerArg::BuiltIn => scenario::Server::BuiltIn,
            ServerArg::KubeApiserver => scenario::Server::KubeApiserver,
        }
    }
}

/// `run`'s options for a real server.
#[derive(Debug, clap::Args)]
struct RealServerArgs {
    /// The server to run against, over the scenario's `server` key: `built-in` (the
    /// default), or `kube-apiserver`: the run starts the real kube-apiserver that
    /// `bash servers/build.sh` builds (target/servers/kube-apiserver), fills it through
    /// the API, measures its process too, and stops it when it ends, leaving nothing.
    #[arg(long, value_name = "SERVER", conflicts_with = "kubeconfig")]
    server: Option<ServerArg>,
    /// Run against the real server this kubeconfig's current context names instead of
    /// the built-in apiserver: each variant gets a namespace of its own, filled with
    /// the scenario's objects and removed when the variant ends (and at the run's end,
    /// also on failure and Ctrl-C); phases write through the API.
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// With --kubeconfig: write nothing. The informers list and watch the objects
    /// already there, in every namespace; a phase that writes is refused before
    /// anything connects.
    #[arg(long, requires = "kubeconfig")]
    read_only: bool,
    /// With --kubeconfig: the server's process id, for a server on this machine
    /// (`source servers/start.sh` sets KUBE_APISERVER_PID). Each phase then also reads
    /// its RSS and its high-water mark within the phase from /proc: the server's peak.
    #[arg(long, value_name = "PID", requires = "kubeconfig")]
    server_pid: Option<u32>,
}

impl RealServerArgs {
    /// The real server to run against (`--kubeconfig`), if any, and the `--server` asked
    /// for.
    fn into_config(self) -> (Option<ClusterConfig>, Option<scenario::Server>) {
        let RealServerArgs {
            server,
            kubeconfig,
            read_only,
            server_pid,
        } = self;
        let cluster = kubeconfig.map(|kubeconfig| ClusterConfig {
            kubeconfig,
            read_only,
            server_pid,
            launched: None,
        });
        (cluster, server.map(Into::into))
    }
}

impl Cli {
    /// The command these arguments ask for.
    pub fn into_command(self) -> Command {
        match self.command {
            Subcommands::Run {
                scenario,
                out,
                chart,
                no_chart,
                exports,
                quiet,
                variant_timeout,
                jobs,
                allow_commands,
                keep_output,
                sweep,
                shard,
                server,
            } => {
                let (cluster, server) = server.into_config();
                Command::Run(RunConfig {
                    scenario,
                    out,
                    chart: if no_chart {
                        ChartOutput::None
                    } else {
                        chart.map_or(ChartOutput::BesideReport, ChartOutput::At)
                    },
                    exports: exports.into_list(),
                    quiet,
                    variant_timeout,
                    jobs: usize::from(jobs),
                    allow_commands,
                    keep_output,
                    cluster,
                    server,
                    sweep,
                    shard,
                })
            }
            Subcommands::Export {
                report,
                format,
                out,
            } => Command::Export(ExportConfig {
                report,
                format: format.into(),
                out: Destination::from(out),
            }),
            Subcommands::Serve {
                scenario,
                listen,
                kubeconfig,
                history_events,
                shutdown_grace,
                read_header_timeout,
                request_timeout,
            } => Command::Serve(ServeConfig {
                scenario,
                listen,
                kubeconfig,
                history_events,
                shutdown_grace,
                read_header_timeout,
                request_timeout,
            }),
            Subcommands::Diff(args) => Command::Diff(args.into()),
            Subcommands::Merge(args) => Command::Merge(args.into()),
            Subcommands::Check(args) => Command::Check(args.into()),
            Subcommands::Size(args) => Command::Size(args.into()),
            Subcommands::Crosscheck(args) => Command::Crosscheck(args.into()),
            Subcommands::RunVariant => Command::RunVariant,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_subcommand_matches_the_runner() {
        let cli = Cli::try_parse_from(["informer-mem", crate::runner::CHILD_COMMAND]).unwrap();
        assert!(matches!(cli.into_command(), Command::RunVariant));
    }

    #[test]
    fn serve_binds_loopback_unless_told_otherwise() {
        let cli = Cli::try_parse_from(["informer-mem", "serve", "s.toml"]).unwrap();
        let Command::Serve(config) = cli.into_command() else {
            panic!("expected serve");
        };
        assert!(config.listen.ip().is_loopback());
        assert_eq!(config.listen.port(), 0);
        assert_eq!(config.shutdown_grace.as_secs(), 5);
        assert_eq!(config.read_header_timeout.as_secs(), 32);
        assert_eq!(config.request_timeout.as_secs(), 60);
        assert_eq!(config.history_events, None);
    }

    #[test]
    fn serve_takes_a_history_window_of_at_least_one_event() {
        let parse = |n: &str| {
            Cli::try_parse_from(["informer-mem", "serve", "s.toml", "--history-events", n])
        };
        let Command::Serve(config) = parse("1000").unwrap().into_command() else {
            panic!("expected serve");
        };
        assert_eq!(config.history_events, Some(1000));
        assert!(parse("0").is_err());
    }

    #[test]
    fn run_takes_a_scenario_and_an_optional_out() {
        let cli =
            Cli::try_parse_from(["informer-mem", "run", "s.toml", "--out", "r.json"]).unwrap();
        let Command::Run(config) = cli.into_command() else {
            panic!("expected run");
        };
        assert_eq!(config.scenario, PathBuf::from("s.toml"));
        assert_eq!(config.out, Some(PathBuf::from("r.json")));
        assert_eq!(config.chart, ChartOutput::BesideReport);
        assert!(config.exports.is_empty());
        assert!(!config.quiet);
        assert_eq!(config.variant_timeout.as_secs(), 3600);
        let cli = Cli::try_parse_from(["informer-mem", "run", "s", "--variant-timeout", "90s"]);
        let Command::Run(config) = cli.unwrap().into_command() else {
            panic!("expected run");
        };
        assert_eq!(config.variant_timeout.as_secs(), 90);
        assert!(
            Cli::try_parse_from(["informer-mem", "run", "s", "--variant-timeout", "soon"]).is_err()
        );
    }

    #[test]
    fn run_takes_exports_and_a_dash_for_standard_output() {
        let cli = Cli::try_parse_from([
            "informer-mem",
            "run",
            "s.toml",
            "--export-markdown",
            "-",
            "--export-bencher",
            "b.json",
            "--no-chart",
            "-q",
        ])
        .unwrap();
        let Command::Run(config) = cli.into_command() else {
            panic!("expected run");
        };
        assert_eq!(
            config.exports,
            [
                (ExportFormat::Markdown, Destination::Stdout),
                (
                    ExportFormat::Bencher,
                    Destination::File(PathBuf::from("b.json"))
                ),
            ]
        );
        assert_eq!(config.chart, ChartOutput::None);
        assert!(config.quiet);
        assert!(
            Cli::try_parse_from(["informer-mem", "run", "s", "--chart", "c.svg", "--no-chart"])
                .is_err()
        );
    }
}
