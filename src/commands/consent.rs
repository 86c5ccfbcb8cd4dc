//! What a run starts besides its own processes (the programs of external variants, the
//! real kube-apiserver), shown before it starts and started only with the command line's
//! consent: a scenario file is data people review.

use scenario::{Scenario, Server};

use super::RunConfig;

/// Whether the run starts servers/kube-apiserver for itself: `--server kube-apiserver`, or
/// the scenario's `server = "kube-apiserver"` with `--allow-commands` (a scenario file
/// starts no program without the command line's consent). `--kubeconfig` and `--server
/// built-in` override the scenario's key.
pub(super) fn launches_server(scenario: &Scenario, config: &RunConfig) -> anyhow::Result<bool> {
    if config.cluster.is_some() {
        return Ok(false);
    }
    match config.server.unwrap_or(scenario.server) {
        Server::BuiltIn => Ok(false),
        Server::KubeApiserver if config.server.is_some() || config.allow_commands => Ok(true),
        Server::KubeApiserver => anyhow::bail!(
            "{}: server = \"kube-apiserver\" starts the real kube-apiserver \
             (target/servers/kube-apiserver, built by servers/build.sh); run it with \
             --server kube-apiserver or --allow-commands to let it, or with --server built-in \
             to run on the built-in apiserver",
            config.scenario.display()
        ),
    }
}

/// Shows every program the scenario's external variants start, with its placeholders, and
/// refuses to go on without `--allow-commands`.
pub(super) fn show_commands(scenario: &Scenario, config: &RunConfig) -> anyhow::Result<()> {
    if !scenario.starts_programs() {
        return Ok(());
    }
    let against = match &config.cluster {
        None if launches_server(scenario, config).unwrap_or(true) => {
            "the real kube-apiserver the run starts, through the run's proxy on loopback".to_owned()
        }
        None => "the built-in apiserver on loopback".to_owned(),
        Some(cluster) => format!(
            "the server {} names, through the run's proxy on loopback",
            cluster.kubeconfig.display()
        ),
    };
    let mut shown = format!(
        "{} starts these programs, each against {against}:\n",
        config.scenario.display()
    );
    for variant in &scenario.variants {
        if let Some(subject) = &variant.subject {
            shown.push_str(&format!("  {}: {}\n", variant.name, subject.shown()));
        }
    }
    shown.push_str(
        "each with GODEBUG=gctrace=1 and JAVA_TOOL_OPTIONS=-Xlog:gc:stderr added to its \
         environment (to what is set there, unless that sets them itself), so that a Go or \
         Java runtime reports each collection on its output\n",
    );
    files::say_text!("{shown}");
    if config.allow_commands {
        return Ok(());
    }
    anyhow::bail!(
        "{} starts programs (shown above); run it with --allow-commands to let it",
        config.scenario.display()
    )
}
