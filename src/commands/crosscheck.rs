//! `informer-mem crosscheck`: the differential check's table, JSON and exit code.

use std::process::ExitCode;

use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};

use super::CrosscheckConfig;
use crate::crosscheck::{self, Outcome, Progress, Verdict};
use crate::exit_codes;
use files::output;

/// Runs the check; exit code 1 when an answer differs unexplained.
pub(super) fn crosscheck(config: &CrosscheckConfig) -> anyhow::Result<ExitCode> {
    if let Some(out) = &config.out {
        out.prepare("the crosscheck's answers", &[&config.check.kubeconfig])?;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let outcome = runtime.block_on(crosscheck::check(
        &config.check,
        |progress| match progress {
            Progress::Made { namespace, server } => {
                files::say!("made the namespace {namespace} on {server}; it is deleted at the end");
            }
            Progress::Answered(row) if row.verdict == Verdict::Differs => {
                files::say!("{}: differs: {}", row.id, row.differences.join("; "));
            }
            Progress::Answered(_) => {}
        },
    ))?;
    output::print("the table", render(&outcome).as_bytes())?;
    if let Some(out) = &config.out {
        let json = serde_json::to_vec_pretty(&outcome)?;
        out.write("the crosscheck's answers", &json)?;
    }
    Ok(ExitCode::from(if outcome.failures() > 0 {
        exit_codes::FAILED
    } else {
        exit_codes::OK
    }))
}

fn render(outcome: &Outcome) -> String {
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(["request", "built-in", "kube-apiserver", "verdict"]);
    let mut notes = String::new();
    for row in &outcome.rows {
        let answer = |o: &Option<crosscheck::shape::Observed>| match o {
            Some(o) => format!("{} {}", o.status, o.body.describe()),
            None => "-".to_owned(),
        };
        let verdict = match &row.verdict {
            Verdict::Same => "same",
            Verdict::Known(_) => "known",
            Verdict::Differs => "DIFFERS",
            Verdict::KnownButSame => "same (listed as known)",
            Verdict::NotRun(_) => "not run",
        };
        table.add_row([
            format!("{} {}", row.method, row.id),
            answer(&row.builtin),
            answer(&row.real),
            verdict.to_owned(),
        ]);
        let why = match &row.verdict {
            Verdict::Same => continue,
            Verdict::Known(why) => format!("known: {why}"),
            Verdict::Differs => "not explained".to_owned(),
            Verdict::KnownButSame => {
                "the servers agree now: remove it from crosscheck/known.rs".to_owned()
            }
            Verdict::NotRun(why) => why.clone(),
        };
        notes.push_str(&format!("\n{} ({}): {why}\n", row.id, row.request));
        for difference in &row.differences {
            notes.push_str(&format!("  - {difference}\n"));
        }
    }
    let [same, known, differs, known_but_same, not_run] = outcome.counts();
    format!(
        "the built-in apiserver at {} vs the server at {}\n{table}\n{notes}\n{} requests: {same} same, {known} known \
         differences, {differs} unexplained, {known_but_same} listed as known but the same, \
         {not_run} not run\n",
        outcome.builtin,
        outcome.real,
        outcome.rows.len()
    )
}
