//! `size --objects FILE` and `size --kubeconfig K`: a cluster's objects counted per kind
//! and sampled, each kind's sample measured in real client-go (the shipped subject, in a
//! sweep over `count` for each choice: whole objects, managedFields stripped, metadata
//! only, watch-list), and the lines drawn to the cluster's counts.
//!
//! Where Go is not installed (and client-go cannot be built), or with `--model`, the
//! sample is measured in the built-in model instead, and the output says so first.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::Value;

use super::{SizeConfig, SizeSource};
use crate::cluster::{Census, Cluster, Counted, DEFAULT_RESOURCES, Spread, census};
use crate::exit_codes;
use files::output;
use report::Report;
use report::size::{self, Choices};
use scenario::{MAX_OBJECTS, MAX_SAMPLE_BYTES, ObjectKind, objects_in};

/// Objects sampled of each kind: enough to hold a cluster's spread of sizes, few enough
/// that each copy is one of many.
const SAMPLE_OBJECTS: u64 = 100;

/// The largest `--objects` file read: `kubectl get pods -A -o json` of about 100,000
/// pods.
const MAX_OBJECTS_FILE: u64 = 1 << 30;

/// The client-go subject subjects/build.sh builds, under a target folder.
const SUBJECT: &str = "subjects/client-go-v0.37";

/// The choices each kind is measured with: a name and the subject's flags (besides its
/// kubeconfig, listen address and resource) or the model's keys.
const CHOICES: [(&str, &[&str], &str); 4] = [
    ("full", &["--watch-list=off"], ""),
    (
        "strip managedFields",
        &["--watch-list=off", "--transform=strip-managed-fields"],
        "transform = [\"managed-fields\"]",
    ),
    (
        "metadata only",
        &["--watch-list=off", "--metadata-only"],
        "projection = \"metadata\"",
    ),
    (
        "watch-list",
        &["--watch-list=on"],
        "initial_sync = \"watch-list\"",
    ),
];

/// Groups of built-in kinds client-go's informer factory has no informer for (their
/// typed clients live in kube-aggregator and apiextensions-apiserver).
const UNTYPED_GROUPS: [&str; 2] = ["apiregistration.k8s.io/", "apiextensions.k8s.io/"];

/// What measures each kind's sample.
#[derive(Debug)]
enum Engine {
    /// The client-go subject at this path.
    ClientGo(PathBuf),
    /// The built-in model, and why.
    Model(String),
}

/// `size --objects` or `size --kubeconfig`: count, sample, measure, predict.
pub(super) fn measured(config: &SizeConfig) -> anyhow::Result<ExitCode> {
    let points = checked_points(&config.points)?;
    // Before the cluster is read: a client-go that is not built is said at once.
    let engine = engine(config.model)?;
    let mut census = match &config.source {
        SizeSource::Objects(files) => from_files(files)?,
        SizeSource::Cluster {
            kubeconfig,
            resources,
        } => from_cluster(kubeconfig, resources)?,
        SizeSource::Reports(_) => unreachable!("sized from reports by compare::size"),
    };
    override_counts(&mut census, &config.counts)?;
    for refused in &census.refused {
        files::say!("not sized: {refused}");
    }
    let kinds: Vec<&Counted> = census.counted.iter().filter(|c| c.count > 0).collect();
    for empty in census.counted.iter().filter(|c| c.count == 0) {
        files::say!("no {} in the cluster: nothing to size", empty.resource);
    }
    if kinds.is_empty() {
        bail!("no objects to size: every kind asked for is empty or refused");
    }
    // A kind that cannot be measured (a sample the built-in server cannot copy, a program
    // that never synced) is named and the others go on; its figures are not given.
    let mut reports = Vec::new();
    let mut counts = BTreeMap::new();
    let mut unmeasured = 0;
    for counted in &kinds {
        let points = points_for(counted.count, &points);
        match measure_kind(counted, &points, &engine, config.out.as_deref()) {
            Ok((file, report)) => {
                counts.insert(report.scenario.objects.kind, counted.count);
                reports.push((file, report));
            }
            Err(e) => {
                unmeasured += 1;
                files::say!("not sized: {}: {e:#}", counted.resource);
            }
        }
    }
    if reports.is_empty() {
        bail!("no kind could be measured (each is named above)");
    }
    let choices = Choices::predict(&reports, &counts)?;
    let mut out = headline(&engine, &census);
    out.push_str(&size::render_choices(&choices));
    output::print("the prediction", out.as_bytes())?;
    // A resource named on the command line and refused, or a kind not measured, leaves
    // the total short of what was asked: exit 2, after the figures of the rest. A refused
    // one of the default set is named only (a user who may not list Secrets still gets
    // the others).
    let asked =
        matches!(&config.source, SizeSource::Cluster { resources, .. } if !resources.is_empty());
    Ok(ExitCode::from(
        if unmeasured > 0 || (asked && !census.refused.is_empty()) {
            exit_codes::ERROR
        } else {
            exit_codes::OK
        },
    ))
}

/// `--count KIND=N` in place of the count read: the kind matched by its name or its
/// resource's, in any case.
fn override_counts(census: &mut Census, given: &[(String, u64)]) -> anyhow::Result<()> {
    for (name, n) in given {
        let Some(counted) = census
            .counted
            .iter_mut()
            .find(|c| name.eq_ignore_ascii_case(&c.kind) || name.eq_ignore_ascii_case(&c.resource))
        else {
            let read: Vec<&str> = census.counted.iter().map(|c| c.kind.as_str()).collect();
            bail!(
                "--count {name}={n}: no {name} was read; the kinds read are {}",
                read.join(", ")
            );
        };
        counted.count = *n;
    }
    Ok(())
}

/// `--points`, each a count a scenario may have, two or more of them.
fn checked_points(points: &[u64]) -> anyhow::Result<Vec<u64>> {
    let mut sorted = points.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() < 2 {
        bail!(
            "--points: give two or more counts to draw a line through (the default is 1000,2000,4000)"
        );
    }
    if let Some(bad) = sorted.iter().find(|&&p| p == 0 || p > MAX_OBJECTS) {
        bail!("--points: {bad} is not a count between 1 and {MAX_OBJECTS}");
    }
    Ok(sorted)
}

/// The counts a kind of `count` objects is measured at: `points`, or, for a kind with
/// fewer objects than the smallest, its own count, twice it and four times it, so that
/// its line is not drawn far below where it was measured.
fn points_for(count: u64, points: &[u64]) -> Vec<u64> {
    if points.first().is_some_and(|&least| count >= least) {
        return points.to_vec();
    }
    let count = count.max(1);
    vec![count, count * 2, count * 4]
}

/// The first lines: what measured the figures, what was read.
fn headline(engine: &Engine, census: &Census) -> String {
    let mut out = String::new();
    match engine {
        Engine::ClientGo(path) => writeln!(
            out,
            "measured in real client-go v0.37 ({}): its heap after a forced GC and its \
             process's RSS (advisory)",
            path.display()
        ),
        Engine::Model(why) => writeln!(
            out,
            "measured in the built-in model, not client-go ({why}): these are k8s-openapi's \
             bytes, 3.1 to 3.6 times what client-go holds for the same pods (README \"Real \
             informers\"); build client-go with `bash subjects/build.sh` for its own bytes"
        ),
    }
    .expect("writing to a String");
    let read: Vec<String> = census
        .counted
        .iter()
        .map(|c| {
            format!(
                "{} {} ({} sampled)",
                report::thousands(c.count),
                c.resource,
                c.sample.len()
            )
        })
        .collect();
    writeln!(out, "counted: {}", read.join(", ")).expect("writing to a String");
    out
}

/// The client-go subject if it is built; else an error naming the build where Go is
/// installed, and the model where it is not (or with `--model`).
fn engine(model: bool) -> anyhow::Result<Engine> {
    if model {
        return Ok(Engine::Model("--model".to_owned()));
    }
    let looked = match super::launched::built(SUBJECT) {
        Ok(found) => return Ok(Engine::ClientGo(found)),
        Err(looked) => looked,
    };
    let go = std::process::Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !go {
        return Ok(Engine::Model(
            "Go is not installed on this machine, and client-go is not built".to_owned(),
        ));
    }
    bail!(
        "size measures a sample in real client-go, which is not built (looked for {}): build \
         it with `bash subjects/build.sh` in informer-mem's checkout, or pass --model for the \
         built-in model's figures",
        looked.join(" and ")
    )
}

/// The kinds of the objects in `files`, each counted and sampled.
fn from_files(files: &[PathBuf]) -> anyhow::Result<Census> {
    let mut groups: Vec<((String, String), Vec<Value>)> = Vec::new();
    for file in files {
        let bytes = files::input::read_limited(file, units::Bytes(MAX_OBJECTS_FILE))
            .with_context(|| format!("failed to read `{}`", file.display()))?;
        let objects =
            objects_in(&file.display().to_string(), &bytes).map_err(anyhow::Error::msg)?;
        for (i, object) in objects.into_iter().enumerate() {
            let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_owned);
            let (Some(api_version), Some(kind)) = (text("apiVersion"), text("kind")) else {
                bail!(
                    "`{}`: object {i} has no apiVersion and kind; write the file with \
                     `kubectl get ... -o json`, which gives every object both",
                    file.display()
                );
            };
            let key = (api_version, kind);
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, objects)) => objects.push(object),
                None => groups.push((key, vec![object])),
            }
        }
    }
    if groups.is_empty() {
        bail!(
            "{}: no objects",
            files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let counted = groups
        .into_iter()
        .map(|((api_version, kind), objects)| {
            let count = objects.len() as u64;
            // A built-in kind's names are kube-apiserver's (`endpoints`, not a guess); a
            // custom resource's plural is guessed, as kube guesses it, and its scope read.
            let (resource, namespaced) =
                k8s::typed::names(&api_version, &kind).unwrap_or_else(|| {
                    let namespaced = objects.iter().any(|o| {
                        o.pointer("/metadata/namespace")
                            .and_then(Value::as_str)
                            .is_some()
                    });
                    (scenario::guess_plural(&kind), namespaced)
                });
            let mut spread = Spread::new(count, SAMPLE_OBJECTS, sample_budget());
            objects.into_iter().for_each(|o| spread.offer(o));
            Counted {
                api_version,
                kind,
                resource,
                namespaced,
                count,
                sample: spread.finish(),
            }
        })
        .collect();
    Ok(Census {
        counted,
        refused: Vec::new(),
    })
}

/// The resources of the cluster `kubeconfig` names, counted and sampled, read-only.
fn from_cluster(kubeconfig: &Path, resources: &[String]) -> anyhow::Result<Census> {
    let resources: Vec<String> = if resources.is_empty() {
        DEFAULT_RESOURCES.map(str::to_owned).to_vec()
    } else {
        resources.to_vec()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("failed to start an async runtime")?;
    runtime.block_on(async {
        let cluster = Cluster::connect(kubeconfig).await?;
        cluster
            .version()
            .await
            .with_context(|| format!("the server of {}", kubeconfig.display()))?;
        census(&cluster, &resources, SAMPLE_OBJECTS, sample_budget()).await
    })
}

/// A sample's bytes: what a scenario's sample may hold, less room for its file's layout.
fn sample_budget() -> usize {
    (MAX_SAMPLE_BYTES.0 as usize) * 7 / 8
}

/// One kind's sample measured at `points` for every choice: the sweep's report, and
/// the name `size` gives it.
fn measure_kind(
    counted: &Counted,
    points: &[u64],
    engine: &Engine,
    out: Option<&Path>,
) -> anyhow::Result<(String, Report)> {
    let scratch = tempfile::tempdir().context("failed to make a temporary folder")?;
    let sample = scratch.path().join("sample.json");
    std::fs::write(&sample, serde_json::to_vec(&counted.sample)?)
        .with_context(|| format!("failed to write {}", sample.display()))?;
    let file = scratch.path().join("scenario.toml");
    std::fs::write(&file, scenario_text(counted, points, engine))
        .with_context(|| format!("failed to write {}", file.display()))?;
    let shown: Vec<String> = points.iter().map(|p| report::thousands(*p)).collect();
    files::say!(
        "measuring {}: {} sampled objects copied {} times, {} choices{}",
        counted.resource,
        counted.sample.len(),
        shown.join(", "),
        CHOICES.len(),
        match engine {
            Engine::ClientGo(path) => format!(", each a run of {}", path.display()),
            Engine::Model(_) => " in the model".to_owned(),
        }
    );
    let report = super::run::report_of(&file, true, true)
        .with_context(|| format!("measuring the sample of {}", counted.resource))?;
    let failed: Vec<String> = report
        .variants
        .iter()
        .filter_map(|v| Some(format!("{}: {}", v.name, v.error.as_deref()?)))
        .collect();
    if !failed.is_empty() {
        bail!(
            "measuring the sample of {}: {} of its runs failed, so no figure of it is given:\n  {}",
            counted.resource,
            failed.len(),
            failed.join("\n  ")
        );
    }
    let name = format!("{}.json", counted.resource);
    if let Some(dir) = out {
        let path = dir.join(&name);
        output::Destination::File(path.clone()).write(
            "a kind's sweep report",
            &serde_json::to_vec_pretty(&report)?,
        )?;
    }
    Ok((name, report))
}

/// The sweep scenario of one kind's sample, for `engine`.
fn scenario_text(counted: &Counted, points: &[u64], engine: &Engine) -> String {
    let mut out = String::new();
    let top = points.last().expect("two points or more");
    let quoted: Vec<String> = points.iter().map(u64::to_string).collect();
    let built_in = ObjectKind::built_in(&counted.api_version, &counted.kind).is_some();
    // client-go's informer factory holds the kinds of k8s.io/api typed; the aggregator's
    // and apiextensions' have clientsets of their own, so the subject reads them dynamic.
    let typed = k8s::typed::is_typed(&counted.api_version, &counted.kind)
        && !UNTYPED_GROUPS
            .iter()
            .any(|g| counted.api_version.starts_with(g));
    let _ = writeln!(
        out,
        "name = \"size-{}\"\ndescription = \"what {} objects like the sample cost\"\n\n\
         [objects]\ncount = {top}\nsample = \"sample.json\"",
        counted.resource, counted.kind
    );
    if built_in {
        let _ = writeln!(out, "kind = \"{}\"", counted.kind);
    } else {
        let _ = writeln!(
            out,
            "resource = \"{}\"\nnamespaced = {}",
            counted.resource, counted.namespaced
        );
    }
    let _ = writeln!(out, "\n[sweep]\ncount = [{}]", quoted.join(", "));
    for (name, flags, keys) in CHOICES {
        let _ = writeln!(out, "\n[[variant]]\nname = \"{name}\"");
        match engine {
            Engine::Model(_) => {
                let _ = writeln!(out, "{keys}");
            }
            Engine::ClientGo(path) => {
                let mut command: Vec<String> = [
                    path.display().to_string().as_str(),
                    "--kubeconfig",
                    "{kubeconfig}",
                    "--listen",
                    "{listen}",
                    "--resource",
                    "{resource}",
                    "--api-version",
                    "{api_version}",
                ]
                .map(str::to_owned)
                .to_vec();
                command.extend(flags.iter().map(|f| (*f).to_owned()));
                if !typed && !flags.contains(&"--metadata-only") {
                    command.push("--dynamic".to_owned());
                }
                let _ = writeln!(
                    out,
                    "implementation = \"external\"\ncommand = {}\nstatus = \
                     \"http://{{listen}}/informer-mem/status\"\npprof = \
                     \"http://{{listen}}/debug/pprof\"",
                    serde_json::to_string(&command).expect("strings")
                );
            }
        }
    }
    out.push_str("\n[[phase]]\nkind = \"list\"\n\n[[phase]]\nkind = \"relist\"\n");
    out
}
