//! `informer-mem run`: load the scenario, plan every output before anything runs, run the
//! variants, print the table, write the outputs, and pick the exit code.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;

use super::consent::{launches_server, show_commands};
use super::launched::Launched;
use super::session::Session;
use super::{ChartOutput, RunConfig};
use crate::exit_codes;
use crate::progress::{Mode, Reporter};
use crate::runner;
use files::output::{self, Destination};
use report::export::{self, ExportFormat};
use report::shard::{self, Shard, ShardArg};
use report::{RefusedRequest, Report, ScenarioInfo, fit, render_table};
use scenario::{Scenario, Server, Sweep};

/// Runs a scenario; exit code 2 if a variant failed, 1 if a store did not match the server.
pub(super) fn run(config: &RunConfig) -> anyhow::Result<ExitCode> {
    let scenario = Scenario::load_with(&config.scenario, config.sweep.as_ref())?;
    if let Some(place) = config.shard {
        let of_jobs = (scenario.variants.len() * scenario.points().len()) as u64;
        if u64::from(place.index()) > of_jobs {
            return Err(no_job(place, of_jobs));
        }
    }
    show_commands(&scenario, config)?;
    if !config.quiet {
        let sample = scenario.objects.sample.as_ref().and_then(|s| s.note());
        // Against a real server a variant's namespace is refused, and `{namespace}` is
        // the run's own, where every object is.
        let namespaces = namespace_notes(&scenario)
            .into_iter()
            .filter(|_| config.cluster.is_none());
        for note in sample
            .into_iter()
            .chain(selector_notes(&scenario))
            .chain(namespaces)
        {
            files::say!("{note}");
        }
    }
    let outputs = Outputs::plan(config, &scenario)?;
    let launched = launches_server(&scenario, config)?
        .then(|| Launched::start(config.quiet))
        .transpose()?;
    let on_launched;
    let config = match &launched {
        Some(server) => {
            on_launched = RunConfig {
                cluster: Some(server.config()),
                ..config.clone()
            };
            &on_launched
        }
        None => config,
    };
    let (report, cleanup) = measure(config, &scenario, &outputs)?;
    if let Some(server) = &launched {
        server.stop();
    }
    outputs.write(&report, config.quiet)?;
    if !config.quiet {
        for note in heap_notes(&report)
            .into_iter()
            .chain(process_notes(&report))
            .chain(refusal_notes(&report))
            .chain(late_cache_notes(&report))
            .chain(observer_notes(&report))
        {
            files::say!("{note}");
        }
    }
    if let Some(e) = cleanup {
        return Err(e);
    }
    Ok(ExitCode::from(verdict(&report)))
}

/// A note for each label selector (a phase's `selector`, a variant's `label_selector`)
/// that selects none of the objects the scenario starts with: most likely a typo, which
/// would leave the phase changing nothing or the informer holding nothing, without a word.
/// Objects change labels only through updates, so the note says what it checked.
fn selector_notes(scenario: &Scenario) -> Vec<String> {
    let spec = &scenario.objects;
    let count = u32::try_from(spec.count).unwrap_or(u32::MAX);
    let selects_none = |selector: &k8s::LabelSelector| {
        !selector.is_empty()
            && !(0..count)
                .any(|index| selector.matches(&apiserver::generate::labels(spec, index, 1)))
    };
    let phases = scenario
        .phases
        .iter()
        .enumerate()
        .filter(|(_, phase)| selects_none(&phase.selector))
        .map(|(i, phase)| {
            format!(
                "note: phase[{i}].selector `{}` selects none of the {count} objects the \
                 scenario starts with: phase `{}` may change nothing",
                phase.selector, phase.name
            )
        });
    let variants = scenario
        .variants
        .iter()
        .enumerate()
        .filter(|(_, variant)| selects_none(&variant.scope.label_selector))
        .map(|(i, variant)| {
            format!(
                "note: variant[{i}].label_selector `{}` selects none of the {count} objects \
                 the scenario starts with: variant `{}` may hold nothing",
                variant.scope.label_selector, variant.name
            )
        });
    phases.chain(variants).collect()
}

/// A note for each variant's `namespace` that holds none of the objects the scenario
/// starts with (most likely a typo), and for each external variant that passes
/// `{namespace}` to its program without a `namespace` of its own where the objects are
/// in several: a program that watches only there (`--namespace {namespace}`, an
/// operator's `WATCH_NAMESPACE`) would fail the store check against every namespace's
/// objects, with nothing saying why.
fn namespace_notes(scenario: &Scenario) -> Vec<String> {
    let spec = &scenario.objects;
    if !spec.namespaced() {
        return Vec::new();
    }
    let count = u32::try_from(spec.count).unwrap_or(u32::MAX);
    let namespaces: Vec<String> = (0..count.min(spec.namespaces))
        .map(|index| apiserver::generate::namespace(spec, index))
        .collect();
    let listed = match namespaces.len() {
        n if n <= 4 => namespaces.join(", "),
        n => format!("{}... ({n} namespaces)", namespaces[..3].join(", ")),
    };
    let variants = scenario.variants.iter().enumerate();
    let (namespaces, listed) = (&namespaces, &listed);
    let elsewhere = variants.clone().flat_map(|(i, variant)| {
        let empty = variant.scope.namespaces.iter();
        let empty = empty.filter(move |namespace| !namespaces.contains(namespace));
        empty.map(move |namespace| {
            format!(
                "note: variant[{i}].namespace `{namespace}` holds none of the {count} objects \
                 the scenario starts with (they are in {listed}): variant `{}`'s informer \
                 there may hold nothing",
                variant.name
            )
        })
    });
    let passes = |subject: &scenario::Subject| {
        let mut words = subject.command.iter().chain(subject.env.values());
        words.any(|word| word.contains("{namespace}"))
    };
    let first = namespaces.first().map_or("", String::as_str);
    let unscoped = variants
        .filter(|(_, variant)| {
            namespaces.len() > 1
                && variant.scope.namespaces.is_empty()
                && variant.subject.as_deref().is_some_and(passes)
        })
        .map(|(_, variant)| {
            format!(
                "note: variant `{}` passes {{namespace}} (`{first}`) to its program and has no \
                 `namespace`: its store is checked against the objects of all {} namespaces; \
                 if the program watches only `{first}`, set namespace = \"{first}\"",
                variant.name,
                namespaces.len(),
            )
        });
    elsewhere.chain(unscoped).collect()
}

/// A note for each external variant whose program the server refused requests of: a
/// kind or a subresource it needs and the server lacks (a controller's second informer,
/// a webhook's), which a user would otherwise see only as a program that does less than
/// in a cluster, or in its log.
fn refusal_notes(report: &Report) -> Vec<String> {
    report
        .variants
        .iter()
        .filter_map(|variant| {
            let subject = variant.subject.as_ref()?;
            let phases = variant.phases.iter().filter_map(|p| p.subject.as_deref());
            let mut refused: Vec<RefusedRequest> = Vec::new();
            for request in subject.setup.iter().chain(phases).flat_map(|f| &f.refused) {
                let same = |r: &&mut RefusedRequest| {
                    (&r.method, &r.path, r.status)
                        == (&request.method, &request.path, request.status)
                };
                match refused.iter_mut().find(same) {
                    Some(known) => known.count += request.count,
                    None => refused.push(request.clone()),
                }
            }
            let summary = RefusedRequest::summary(&refused);
            (!summary.is_empty()).then(|| {
                format!(
                    "note: for variant `{}`, {summary} (each phase's are in the report: \
                     `subject.refused`); a program that needs them may not run as it does \
                     in a cluster",
                    variant.name
                )
            })
        })
        .collect()
}

/// A note for each external variant whose program opened a cache after its first phase,
/// once it had synced: a collection no earlier phase read (controller-runtime starts an
/// informer on the first `client.Get` of a kind), whose memory that phase's figures hold.
fn late_cache_notes(report: &Report) -> Vec<String> {
    let late = |variant: &report::VariantReport| -> Vec<String> {
        let phases = variant.phases.iter().skip(1);
        let opened = phases.flat_map(|phase| {
            let collections = phase.subject.iter().flat_map(|f| &f.collections);
            collections
                .filter(|c| c.opened)
                .map(move |c| format!("{} in phase `{}`", c.describe(), phase.name))
        });
        opened.collect()
    };
    report
        .variants
        .iter()
        .filter_map(|variant| {
            let opened = late(variant);
            (!opened.is_empty()).then(|| {
                format!(
                    "note: variant `{}` opened {} cache(s) after its first phase: {} \
                     (`subject.collections` in the report; what it holds is in that phase's \
                     figures)",
                    variant.name,
                    opened.len(),
                    opened.join(", ")
                )
            })
        })
        .collect()
}

/// A note for each external variant with no heap reading in any phase: its `live`, `kept`
/// and `peak` are `-`, and without a word a user would not know why, or what gives them.
fn heap_notes(report: &Report) -> Vec<String> {
    report
        .variants
        .iter()
        .filter(|variant| {
            !variant.phases.is_empty()
                && variant.phases.iter().all(|phase| {
                    phase.subject.as_ref().is_some_and(|figures| {
                        figures.heap.is_none() && figures.reported_heap_bytes.is_none()
                    })
                })
        })
        .filter_map(|variant| {
            let subject = &variant.subject.as_ref()?.definition;
            let status = match &subject.status {
                Some(status) => format!(
                    "its status protocol serves no heap (`GET {status}/heap` answered 404; \
                     the Node.js subject serves it when node runs with --expose-gc)"
                ),
                None => "it has no `status`, whose `GET .../heap` a program in any language \
                         may serve (docs/subjects.md)"
                    .to_owned(),
            };
            Some(format!(
                "note: variant `{}` has no heap reading: it has no `pprof` (a Go program \
                 serving net/http/pprof), and {status}; its live and kept are `-` (and its peak, \
                 unless its runtime reports its collections: node --trace-gc, the JVM's \
                 -Xlog:gc), and resident* (its RSS, with the phase's high-water mark) is what \
                 is measured of its memory",
                variant.name
            ))
        })
        .collect()
}

/// The most of a program's CPU time in a phase that answering the run may take before a
/// note says so: past it, the run may have changed what it measured.
const OBSERVER_BUDGET_PERCENT: f64 = 5.0;

/// The least CPU time of a phase whose observer's share a note weighs: below it, the
/// share is a clock tick or two of 10 ms (a 30 ms update phase's one status read is 33%).
const OBSERVER_WEIGHED_CPU_MS: u64 = 1000;

/// A note for each external variant whose heap was sampled because its runtime reported
/// no collection (a Go program whose stderr went elsewhere, or with `gctrace=0`), and for
/// each whose answers to the run cost it more than [`OBSERVER_BUDGET_PERCENT`] of its CPU
/// time in a phase of [`OBSERVER_WEIGHED_CPU_MS`] or more: either makes its figures less than they could be, and only the report
/// would say so.
fn observer_notes(report: &Report) -> Vec<String> {
    let mut notes = Vec::new();
    for variant in &report.variants {
        let phases = || {
            variant
                .phases
                .iter()
                .filter_map(|p| Some((p, p.subject.as_ref()?)))
        };
        if phases().any(|(_, f)| f.heap_peak_from == Some(report::HeapPeakSource::Samples)) {
            notes.push(format!(
                "note: variant `{}`'s output carried no report of its collections (Go's \
                 GODEBUG=gctrace=1, which the run sets, goes to its stderr): its peak heap is \
                 the highest of heap profiles read every 200 ms, which miss what lies between \
                 them and cost it CPU time (`observer_cpu_ms`)",
                variant.name
            ));
        }
        let costliest = phases()
            .filter(|(_, f)| f.cpu_ms >= OBSERVER_WEIGHED_CPU_MS)
            .filter_map(|(phase, f)| Some((phase, f, f.observer_share()?)))
            .max_by(|a, b| a.2.total_cmp(&b.2));
        if let Some((phase, figures, share)) = costliest
            && share > OBSERVER_BUDGET_PERCENT
        {
            notes.push(format!(
                "note: answering the run's requests cost variant `{}` {share:.1}% of its CPU \
                 time in phase `{}` ({} of {} ms; `observer_cpu_ms`), more than the \
                 {OBSERVER_BUDGET_PERCENT}% the run aims at: its figures there may differ \
                 from an unobserved run's",
                variant.name,
                phase.name,
                figures.observer_cpu_ms.unwrap_or_default(),
                figures.cpu_ms,
            ));
        }
    }
    notes
}

/// A note for each external variant whose command ran as several processes (a launcher
/// beside the program it started): its process figures are their sum, which a user
/// reading the RSS as the program's alone would not know.
fn process_notes(report: &Report) -> Vec<String> {
    report
        .variants
        .iter()
        .filter_map(|variant| {
            let most = variant
                .phases
                .iter()
                .filter_map(|phase| phase.subject.as_ref())
                .map(|figures| &figures.processes)
                .max_by_key(|processes| processes.len())?;
            let mut commands: Vec<&str> = most.iter().map(|p| p.command.as_str()).collect();
            commands.sort_unstable();
            (commands.len() > 1).then(|| {
                format!(
                    "note: variant `{}` ran as {} processes ({}): its RSS, peak, threads and \
                     CPU time are their sum (each one's RSS is in the report); a launcher \
                     such as `go run`, `npm start` or a shell that does not `exec` counts \
                     too: start the built program itself to measure it alone",
                    variant.name,
                    commands.len(),
                    commands.join(", ")
                )
            })
        })
        .collect()
}

/// Runs `file`'s scenario, its sweep included, against the built-in apiserver and
/// returns the report without writing anything (`size SCENARIO.toml`).
pub(super) fn report_of(file: &Path, quiet: bool, own_program: bool) -> anyhow::Result<Report> {
    let scratch = tempfile::tempdir().context("failed to make a temporary folder")?;
    let config = RunConfig {
        scenario: file.to_owned(),
        out: Some(scratch.path().join("report.json")),
        chart: ChartOutput::None,
        exports: Vec::new(),
        quiet,
        variant_timeout: std::time::Duration::from_secs(3600),
        jobs: 1,
        allow_commands: own_program,
        keep_output: false,
        cluster: None,
        server: Some(Server::BuiltIn),
        sweep: None,
        shard: None,
    };
    let scenario = Scenario::load(file)?;
    if scenario.starts_programs() && !own_program {
        anyhow::bail!(
            "{} starts programs of its own (external variants): run its sweep with `run \
             --allow-commands` and give `size` the report",
            file.display()
        );
    }
    let outputs = Outputs::plan(&config, &scenario)?;
    Ok(measure(&config, &scenario, &outputs)?.0)
}

/// Runs every point of `scenario` and makes one report of them; with it, why a real
/// server's namespaces could not be removed, if they could not (what the variants
/// measured is written all the same).
fn measure(
    config: &RunConfig,
    scenario: &Scenario,
    outputs: &Outputs,
) -> anyhow::Result<(Report, Option<anyhow::Error>)> {
    let exe = std::env::current_exe().context("failed to locate this program to run variants")?;
    let points = scenario.points();
    let mut reports = Vec::with_capacity(points.len());
    let mut cleanup: Option<anyhow::Error> = None;
    for (i, point) in points.iter().enumerate() {
        let only = shard_variants(config, scenario, i);
        if only.is_empty() {
            // Another shard's point.
            reports.push(None);
            continue;
        }
        if let Some(sweep) = &scenario.sweep
            && !config.quiet
        {
            let value = sweep.values[i];
            files::say!(
                "point {}/{}: {}",
                i + 1,
                points.len(),
                sweep.point_label(value)
            );
        }
        let (report, left) = run_point(config, point, &exe, outputs, (i, &only))?;
        reports.push(Some(report));
        if let Some(e) = left {
            cleanup.get_or_insert(e);
        }
    }
    Ok((assembled(config, scenario, &exe, reports)?, cleanup))
}

/// The variants of point `point` this run runs: every one, or those of its shard's jobs
/// (job `point * variants + variant`).
fn shard_variants(config: &RunConfig, scenario: &Scenario, point: usize) -> Vec<usize> {
    let every = scenario.variants.len();
    (0..every)
        .filter(|v| (config.shard).is_none_or(|shard| shard.takes((point * every + v) as u64)))
        .collect()
}

/// The run's report of its points' reports (`None`: a point another shard runs): a plain
/// run's one point, a sweep's points with their fits, or a shard's share.
fn assembled(
    config: &RunConfig,
    scenario: &Scenario,
    exe: &Path,
    reports: Vec<Option<Report>>,
) -> anyhow::Result<Report> {
    if let Some(place) = config.shard {
        let every = scenario.variants.len() as u64;
        let of_jobs = every * reports.len() as u64;
        let shard = Shard {
            index: place.index(),
            count: place.count(),
            build: build_of(exe)?,
            of_jobs,
            jobs: (0..of_jobs).filter(|job| place.takes(*job)).collect(),
        };
        let report = shard::shard_report(reports, shard, scenario.sweep.as_ref());
        let mut report = report.ok_or_else(|| no_job(place, of_jobs))?;
        report.scenario = ScenarioInfo::of(scenario);
        return Ok(report);
    }
    let mut reports: Vec<Report> = reports.into_iter().flatten().collect();
    Ok(match &scenario.sweep {
        Some(sweep) => {
            let mut merged = fit::merge(sweep, sweep.values.iter().copied().zip(reports).collect());
            merged.scenario = ScenarioInfo::of(scenario);
            merged
        }
        None => reports.pop().expect("a plain run has one point"),
    })
}

/// Why shard `place` of a run of `of_jobs` jobs runs nothing.
fn no_job(place: ShardArg, of_jobs: u64) -> anyhow::Error {
    anyhow::anyhow!(
        "--shard {place}: shard {} has no job: the run has {of_jobs} (variants times sweep \
         points); give at most {of_jobs} shards",
        place.index()
    )
}

/// The build of the executable `exe`: its SHA-1, which shards of one run share.
fn build_of(exe: &Path) -> anyhow::Result<String> {
    use sha1::{Digest, Sha1};
    let mut file = std::fs::File::open(exe)
        .with_context(|| format!("failed to read this program ({})", exe.display()))?;
    let mut hasher = Sha1::new();
    std::io::copy(&mut file, &mut hasher)
        .with_context(|| format!("failed to read this program ({})", exe.display()))?;
    Ok(format!("{:x}", hasher.finalize()))
}

/// Runs one point of the scenario (the whole of a plain run): every variant, against the
/// built-in apiserver or the real server, whose namespaces it makes and removes; with the
/// report, why the namespaces could not be removed, if they could not.
fn run_point(
    config: &RunConfig,
    scenario: &Scenario,
    exe: &Path,
    outputs: &Outputs,
    (point, only): (usize, &[usize]),
) -> anyhow::Result<(Report, Option<anyhow::Error>)> {
    let session = config
        .cluster
        .as_ref()
        .map(|cluster| Session::open(cluster, scenario, config.quiet))
        .transpose()?;
    if session.is_none() {
        runner::end_on_signal().context("failed to take the stop signals")?;
    }
    let mut progress = Reporter::new(
        Mode::detect(config.quiet),
        scenario.phases.iter().map(|p| p.name.clone()).collect(),
    );
    let variants = scenario.variants.len();
    let profiles = outputs.profiles(point);
    let limits = runner::Limits {
        variant_timeout: config.variant_timeout,
        dhat_files: outputs
            .dhat_files
            .as_deref()
            .map(|files| &files[point * variants..(point + 1) * variants]),
        profiles: profiles.as_deref(),
        keep_output: config.keep_output,
        jobs: config.jobs,
        cluster: session.as_ref().map(|s| s.jobs.as_slice()),
        only: Some(only),
    };
    let mut report = runner::run_variants(scenario, exe, &limits, |p| progress.show(p));
    // A signal's handler ends the run: no report of the variants it stopped.
    runner::stop_if_interrupted();
    progress.finish();
    let mut left = None;
    if let Some(session) = &session {
        session.stop_if_interrupted();
        report.server = Some(session.server.clone());
        left = session.close().err();
    }
    Ok((report, left))
}

/// Where a run writes its report and chart unless `--out` says: a folder of its own, so
/// that a run never overwrites the committed baselines in reports/ (refreshing one is an
/// explicit `--out reports/NAME.json`). The repository ignores it.
pub const DEFAULT_FOLDER: &str = "runs";

/// Every file and stream a run writes, decided and checked before anything runs.
#[derive(Debug)]
struct Outputs {
    /// Each output with its format: the JSON report first, then the chart, then exports.
    exports: Vec<(ExportFormat, Destination)>,
    /// The heap-profiling build: one dhat file per variant (of each point), beside the
    /// report.
    dhat_files: Option<Vec<PathBuf>>,
    /// The run's sweep: each point's files get a name of their own.
    sweep: Option<Sweep>,
}

impl Outputs {
    /// The outputs `config` asks for: the report (by default `runs/<scenario>.json`, a
    /// shard's `runs/<scenario>.shard-I-of-N.json`), its chart (none for a shard unless
    /// `--chart` says where) and the exports. Refuses, before anything runs, outputs that cannot be
    /// written, that would overwrite the scenario, that share a file, or that share
    /// standard output.
    fn plan(config: &RunConfig, scenario: &Scenario) -> anyhow::Result<Outputs> {
        let out = config.out.clone().unwrap_or_else(|| {
            let whole = Path::new(DEFAULT_FOLDER).join(format!("{}.json", scenario.name));
            config
                .shard
                .map_or_else(|| whole.clone(), |place| shard::shard_file(&whole, place))
        });
        // A path the run chose itself is never written through a link someone planted.
        if config.out.is_none() {
            output::refuse_links("the report", &out)?;
            if matches!(config.chart, ChartOutput::BesideReport) {
                output::refuse_links("the chart", &out.with_extension("svg"))?;
            }
        }
        let mut exports = vec![(ExportFormat::Json, Destination::File(out.clone()))];
        match &config.chart {
            // A shard's share is drawn once merged (`export --format svg`).
            ChartOutput::BesideReport if config.shard.is_some() => {}
            ChartOutput::BesideReport => exports.push((
                ExportFormat::Svg,
                Destination::File(out.with_extension("svg")),
            )),
            ChartOutput::At(path) => exports.push((ExportFormat::Svg, path.clone().into())),
            ChartOutput::None => {}
        }
        exports.extend(config.exports.iter().cloned());
        let dhat_files = measure::dhat::build().then(|| {
            let points = scenario.sweep.as_ref().map_or(1, |s| s.values.len());
            let mut files = Vec::new();
            for point in 0..points {
                let report = point_file(&out, scenario.sweep.as_ref(), point);
                for (i, v) in scenario.variants.iter().enumerate() {
                    files.push(runner::dhat_file(&report, i, &v.name));
                }
            }
            files
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
        // The sample's file is an input too: a report written over it would lose the
        // objects the next run copies.
        let sample = (scenario.objects.sample.as_ref()).map(|sample| {
            let folder = config.scenario.parent().unwrap_or(Path::new(""));
            folder.join(&sample.file)
        });
        let mut inputs = vec![("the scenario", config.scenario.as_path())];
        inputs.extend(
            sample
                .as_deref()
                .map(|file| ("the scenario's sample", file)),
        );
        output::refuse_overlaps(&all, &inputs)?;
        let paths: Vec<&Path> = inputs.iter().map(|(_, path)| *path).collect();
        for (what, destination) in all {
            destination.prepare(what, &paths)?;
        }
        Ok(Outputs {
            exports,
            dhat_files,
            sweep: scenario.sweep.clone(),
        })
    }

    /// Where point `point`'s heap profiles (external variants', a real server's) go:
    /// beside the report's file, when it goes to one.
    fn profiles(&self, point: usize) -> Option<PathBuf> {
        match &self.exports[0] {
            (ExportFormat::Json, Destination::File(path)) => {
                Some(point_file(path, self.sweep.as_ref(), point))
            }
            _ => None,
        }
    }

    /// Prints the table (to stderr when an export has standard output) and writes every
    /// output, saying where unless `quiet`. The files are written even when the table
    /// could not be (a full standard output); that error comes after them.
    fn write(&self, report: &Report, quiet: bool) -> anyhow::Result<()> {
        let table = render_table(report);
        let printed = if self.exports.iter().any(|(_, d)| *d == Destination::Stdout) {
            files::say_text!("{table}");
            Ok(())
        } else {
            output::print("the table", table.as_bytes())
        };
        if let Some(files) = &self.dhat_files
            && !quiet
        {
            for file in files.iter().filter(|f| f.exists()) {
                files::say!("wrote a dhat profile to {}", file.display());
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
                files::say!("wrote {} to {}", format.describe(), path.display());
            }
        }
        Ok(printed?)
    }
}

/// Where point `point` of `sweep` puts the files that go beside the report (heap
/// profiles, dhat profiles): beside `<stem>.<key>-<value>.json`; beside `report` itself
/// in a plain run.
fn point_file(report: &Path, sweep: Option<&Sweep>, point: usize) -> PathBuf {
    let Some(sweep) = sweep else {
        return report.to_owned();
    };
    let stem = report
        .file_stem()
        .map_or_else(|| "report".into(), |s| s.to_string_lossy());
    report.with_file_name(format!("{stem}.{}-{}.json", sweep.key, sweep.values[point]))
}

/// The run's exit code: a failed variant is an error (2); a store that did not match the
/// server where the scenario expects it to is a failed run (1).
fn verdict(report: &Report) -> u8 {
    let failed = report.variants.iter().any(|v| v.error.is_some());
    let inconsistent = report.unexpected_inconsistencies().count();
    if inconsistent > 0 {
        files::say!(
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::namespace_notes;
    use scenario::Scenario;

    #[test]
    fn each_namespace_that_holds_none_of_the_objects_is_noted() {
        let text = r#"name = "notes"
[objects]
kind = "ConfigMap"
count = 30
namespaces = 3
[[variant]]
name = "all"
[[variant]]
name = "two"
namespace = ["checkout", "nowhere"]
[[variant]]
name = "one"
namespace = "elsewhere"
[[phase]]
kind = "list"
"#;
        let scenario = Scenario::parse(Path::new("notes.toml"), text).unwrap();
        let notes = namespace_notes(&scenario);
        assert_eq!(notes.len(), 2, "{notes:#?}");
        assert!(
            notes[0].starts_with("note: variant[1].namespace `nowhere` holds none of the 30")
                && notes[0].contains("variant `two`'s informer there may hold nothing"),
            "{notes:#?}"
        );
        assert!(
            notes[1].starts_with("note: variant[2].namespace `elsewhere`"),
            "{notes:#?}"
        );
    }
}
