//! `informer-mem merge`: the shard reports of one run (`run --shard I/N`) joined into
//! the report the whole run writes ([`report::shard::merge`]), its table printed.

use std::path::Path;
use std::process::ExitCode;

use super::MergeConfig;
use super::run::DEFAULT_FOLDER;
use crate::exit_codes;
use files::output::{self, Destination};
use report::{Report, render_table};

/// Reads every shard, refuses what does not make one run, and writes the merged report
/// (by default where the whole run writes its own: `runs/<scenario>.json`).
pub(super) fn merge(config: &MergeConfig) -> anyhow::Result<ExitCode> {
    let mut shards = Vec::with_capacity(config.shards.len());
    for path in &config.shards {
        shards.push((path.clone(), Report::read(path)?));
    }
    let report = report::shard::merge(shards)?;
    let out = config.out.clone().unwrap_or_else(|| {
        let file = format!("{}.json", report.scenario.name);
        Destination::File(Path::new(DEFAULT_FOLDER).join(file))
    });
    let what = "the merged report";
    if let (None, Destination::File(path)) = (&config.out, &out) {
        output::refuse_links(what, path)?;
    }
    let inputs: Vec<(&str, &Path)> = (config.shards.iter())
        .map(|shard| ("a shard", shard.as_path()))
        .collect();
    output::refuse_overlaps(&[(what, &out)], &inputs)?;
    let paths: Vec<&Path> = config.shards.iter().map(|p| p.as_path()).collect();
    out.prepare(what, &paths)?;
    out.write(what, report.to_json().as_bytes())?;
    if let Destination::File(path) = &out {
        output::print("the table", render_table(&report).as_bytes())?;
        files::say!("wrote {what} to {}", path.display());
    }
    Ok(ExitCode::from(exit_codes::OK))
}
