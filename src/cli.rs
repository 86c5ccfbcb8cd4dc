//! The command line. The only module that knows clap: it turns arguments into the plain
//! [`Command`] the library runs.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::apiserver::serve::ServeConfig;
use crate::{Command, RunConfig};

/// Memory profiler for Kubernetes informers.
///
/// Runs a built-in apiserver and a built-in informer through the phases of a scenario, for
/// several informer variants side by side, each in its own process, and measures every
/// phase with exact allocation counts and jemalloc statistics.
#[derive(Debug, Parser)]
#[command(name = "informer-mem", version, about, long_about = None)]
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
        /// Where to write the JSON report [default: reports/<scenario name>.json].
        #[arg(long, value_name = "PATH")]
        out: Option<PathBuf>,
    },
    /// Serve a scenario's objects over HTTP, for kubectl or any informer.
    ///
    /// Prints `listening on http://ADDR` as the first line of stdout and writes a
    /// kubeconfig for the server. Stops on Ctrl-C or SIGTERM.
    Serve {
        /// The scenario file (TOML); only its objects are used.
        scenario: PathBuf,
        /// Address to listen on; loopback unless given.
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
        listen: SocketAddr,
        /// Where to write the kubeconfig [default: informer-mem-<scenario name>.kubeconfig
        /// in the temporary directory].
        #[arg(long, value_name = "PATH")]
        kubeconfig: Option<PathBuf>,
    },
    /// Internal: run one variant of a job read from stdin (the runner starts this).
    #[command(name = "__run-variant", hide = true)]
    RunVariant,
}

impl Cli {
    /// The command these arguments ask for.
    pub fn into_command(self) -> Command {
        match self.command {
            Subcommands::Run { scenario, out } => Command::Run(RunConfig { scenario, out }),
            Subcommands::Serve {
                scenario,
                listen,
                kubeconfig,
            } => Command::Serve(ServeConfig {
                scenario,
                listen,
                kubeconfig,
            }),
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
    }
}
