//! Scenario files: what to generate, which informer variants to compare, which phases to
//! drive. Feeds the runner.
//!
//! Loading is two steps, as ripgrep does with its flags: serde reads the TOML into the
//! structs of `raw.rs` (unknown keys rejected), then `Scenario::from_raw` checks the rules
//! serde cannot express and produces the validated [`Scenario`] the rest of the crate sees.
//! Every rejection names the file, the key path and, where known, the line.

mod error;
mod external;
mod kind;
pub mod kube_names;
pub mod metric;
mod objects;
mod phase;
mod raw;
mod real_server;
mod sample;
mod sample_kind;
mod scope;
mod server_side;
mod storable;
mod sweep;
mod transform;
mod variant;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::metric::Metric;
pub use error::{Invalid, ScenarioError};
use error::{Problem, int_in, parse_raw};
pub use external::{PLACEHOLDERS, Placeholders, Subject};
use files::input::{MAX_SCENARIO_BYTES, read_limited};
use measure::timeline::{Every, TimelineSpec};

pub use kind::{ObjectKind, SampledKind, SampledKindDef, guess_plural, widgets};
pub use objects::SweepKey;
use objects::objects_from_raw;
pub use objects::{ApiServerSpec, DEFAULT_NODE_IMAGES, ObjectSpec};
use phase::phases_from_raw;
pub use phase::{Amount, Churn, Decay, Phase, PhaseAction, PhaseKind};
use raw::{RawScenario, RawTimeline};
pub use sample::{MAX_SAMPLE_BYTES, Sample, objects_in};
pub use sweep::{Sweep, SweepArg};
use variant::variant_from_raw;
pub use variant::{
    AllocatorConfig, Fault, Implementation, InitialSync, LAST_APPLIED_ANNOTATION, ListRules,
    Projection, QueueKind, Relist, Scope, Server, ServerSide, StoreMode, Transform, Variant,
    VariantConfig,
};

/// Largest object count a scenario may ask for. The built-in apiserver indexes objects with
/// `u32`; ten million is far beyond any cluster's limit and still fits in memory here.
pub const MAX_OBJECTS: u64 = 10_000_000;

/// A validated scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scenario {
    /// Short name; names the default report file, so it is a file-name-safe slug.
    pub name: String,
    /// Free text shown in reports.
    pub description: String,
    /// The file the scenario was loaded from, as given.
    pub file: PathBuf,
    /// What the apiserver serves.
    pub objects: ObjectSpec,
    /// How the apiserver behaves.
    pub apiserver: ApiServerSpec,
    /// Informer variants, each run in its own process.
    pub variants: Vec<Variant>,
    /// Phases, run in order by every variant.
    pub phases: Vec<Phase>,
    /// `check`'s tolerances for this scenario's reports, in percent, over the defaults
    /// (the `[gate]` table).
    #[serde(default)]
    pub gate: BTreeMap<Metric, f64>,
    /// Samples to take within each phase (the `[timeline]` table); none when absent.
    #[serde(default)]
    pub timeline: Option<TimelineSpec>,
    /// One key of `objects` to run at several values (the `[sweep]` table, or `run
    /// --sweep`); `objects` holds the key's plain value. None for a plain run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Sweep>,
    /// The server the variants run against unless the command line says (`server`).
    #[serde(default, skip_serializing_if = "Server::is_built_in")]
    pub server: Server,
}

impl Scenario {
    /// Reads and validates a scenario file.
    pub fn load(file: &Path) -> Result<Scenario, ScenarioError> {
        Scenario::load_with(file, None)
    }

    /// Reads and validates a scenario file, with `sweep` (from the command line) in
    /// place of its own `[sweep]`.
    pub fn load_with(file: &Path, sweep: Option<&SweepArg>) -> Result<Scenario, ScenarioError> {
        let bytes =
            read_limited(file, MAX_SCENARIO_BYTES).map_err(|source| ScenarioError::Read {
                file: file.to_owned(),
                source,
            })?;
        let text = std::str::from_utf8(&bytes).map_err(|e| {
            let at = e.valid_up_to();
            let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            ScenarioError::Invalid(Box::new(Invalid {
                file: file.to_owned(),
                key: None,
                line: Some(line),
                message: format!(
                    "not UTF-8: byte {at} (0x{:02x}) starts no character",
                    bytes[at]
                ),
                hint: Some("TOML files are UTF-8 text; save the file as UTF-8".to_owned()),
            }))
        })?;
        Scenario::parse_with(file, text, sweep)
    }

    /// Validates scenario text; `file` only names it in errors and the report.
    pub fn parse(file: &Path, text: &str) -> Result<Scenario, ScenarioError> {
        Scenario::parse_with(file, text, None)
    }

    fn parse_with(
        file: &Path,
        text: &str,
        sweep: Option<&SweepArg>,
    ) -> Result<Scenario, ScenarioError> {
        let raw = parse_raw(text).map_err(|e| e.into_error(file, text))?;
        Scenario::from_raw(file, raw, sweep).map_err(|e| e.into_error(file, text))
    }

    fn from_raw(
        file: &Path,
        raw: RawScenario,
        sweep: Option<&SweepArg>,
    ) -> Result<Scenario, Problem> {
        let name = raw.name.as_ref().clone();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            || name.starts_with('.')
        {
            return Err(Problem::at(
                "name",
                raw.name.span(),
                format!("invalid scenario name {name:?}"),
            )
            .hint(
                "use letters, digits, `-`, `_` and `.`: the name becomes the report's file name",
            ));
        }
        let objects = objects_from_raw(file, raw.objects)?;
        let sweep_arg = sweep;
        let sweep = sweep::sweep_from(raw.sweep.as_ref(), sweep_arg, &objects)?;
        if raw.variant.is_empty() {
            return Err(Problem::whole("no `[[variant]]`: nothing to measure")
                .hint("add at least one `[[variant]]` with a `name`"));
        }
        let mut names: HashMap<&str, std::ops::Range<usize>> = HashMap::new();
        for (i, v) in raw.variant.iter().enumerate() {
            if let Some(first) = names.insert(v.name.as_ref(), v.name.span()) {
                return Err(Problem::at(
                    format!("variant[{i}].name"),
                    v.name.span(),
                    format!("variant name {:?} is used twice", v.name.as_ref()),
                )
                .first_at(first)
                .hint("every variant needs a name of its own: it names its row and report entry"));
            }
        }
        let variants = raw
            .variant
            .into_iter()
            .enumerate()
            .map(|(i, v)| variant_from_raw(i, v, &objects))
            .collect::<Result<Vec<_>, _>>()?;
        refuse_env_sweep_without_programs(sweep.as_ref(), sweep_arg.is_some(), &variants)?;
        let phases = phases_from_raw(raw.phase)?;
        refuse_external_phases(&variants, &phases)?;
        refuse_graceful_deletes(objects.kind, &phases)?;
        let apiserver = ApiServerSpec {
            history_events: match &raw.apiserver.history_events {
                None => None,
                Some(v) => Some(int_in(v, "apiserver.history_events", 1, 1 << 40)?),
            },
        };
        let gate = gate_from_raw(&raw.gate)?;
        let timeline = raw.timeline.as_ref().map(timeline_from_raw).transpose()?;
        Ok(Scenario {
            name,
            description: raw.description,
            file: file.to_owned(),
            objects,
            apiserver,
            variants,
            phases,
            gate,
            timeline,
            sweep,
            server: raw.server.unwrap_or_default(),
        })
    }
}

/// Refuses, before anything runs, a phase that an external variant's program cannot take,
/// A sweep of a Go runtime setting (`env.GOGC`) sets it in the external variants'
/// programs: refused, naming the key (`--sweep KEY` when `on_command_line`), where there
/// is none.
fn refuse_env_sweep_without_programs(
    sweep: Option<&Sweep>,
    on_command_line: bool,
    variants: &[Variant],
) -> Result<(), Problem> {
    let Some(swept) = sweep.filter(|s| s.key.env().is_some()) else {
        return Ok(());
    };
    if variants.iter().any(|v| v.subject.is_some()) {
        return Ok(());
    }
    let at = match on_command_line {
        true => format!("--sweep {}", swept.key),
        false => format!("sweep.\"{}\"", swept.key),
    };
    Err(Problem::key(
        at,
        "it sets the environment of external variants' programs; this scenario has none",
    )
    .hint(
        "sweep a key of `[objects]`, or add a `[[variant]]` with `implementation = \"external\"`",
    ))
}

/// naming the phase and why.
fn refuse_external_phases(variants: &[Variant], phases: &[Phase]) -> Result<(), Problem> {
    let Some(variant) = variants.iter().find(|v| v.subject.is_some()) else {
        return Ok(());
    };
    for (j, phase) in phases.iter().enumerate() {
        if let Some(why) = external::refusal(phase) {
            return Err(Problem::key(
                format!("phase[{j}]"),
                format!(
                    "phase `{}` cannot run with external variant {:?}: {why}",
                    phase.name, variant.name
                ),
            ));
        }
    }
    Ok(())
}

/// Refuses a `graceful` phase of objects that kube-apiserver deletes at once: only pods
/// are deleted gracefully.
fn refuse_graceful_deletes(kind: ObjectKind, phases: &[Phase]) -> Result<(), Problem> {
    match phases.iter().position(|p| p.graceful) {
        Some(j) if kind != ObjectKind::Pod => Err(Problem::key(
            format!("phase[{j}].graceful"),
            format!(
                "only pods are deleted gracefully; kube-apiserver deletes a {} at once, with \
                 one DELETED event",
                kind.as_str()
            ),
        )),
        _ => Ok(()),
    }
}

impl Scenario {
    /// Whether any variant runs a program of its own.
    pub fn starts_programs(&self) -> bool {
        self.variants.iter().any(|v| v.subject.is_some())
    }
}

/// The `[gate]` table: `METRIC = PCT`, as `check --tolerance METRIC=PCT` takes them.
fn gate_from_raw(raw: &BTreeMap<String, Spanned<f64>>) -> Result<BTreeMap<Metric, f64>, Problem> {
    raw.iter()
        .map(|(name, percent)| {
            let key = format!("gate.{name}");
            let metric: Metric = name
                .parse()
                .map_err(|e: String| Problem::at(&key, percent.span(), e))?;
            let value = *percent.as_ref();
            if !(value.is_finite() && value >= 0.0) {
                return Err(Problem::at(
                    &key,
                    percent.span(),
                    format!("{value} is not a percentage of 0 or more"),
                ));
            }
            Ok((metric, value))
        })
        .collect()
}

fn timeline_from_raw(raw: &RawTimeline) -> Result<TimelineSpec, Problem> {
    let every = raw.every.as_ref().parse::<Every>().map_err(|why| {
        Problem::at("timeline.every", raw.every.span(), why).hint(
            "`every = \"4 MiB\"` (bytes allocated) or `every = \"500 events\"` (objects sent)",
        )
    })?;
    let max_samples = match &raw.max_samples {
        None => TimelineSpec::DEFAULT_MAX_SAMPLES,
        Some(v) => int_in(v, "timeline.max_samples", 2, TimelineSpec::MOST_SAMPLES)?,
    };
    Ok(TimelineSpec {
        every,
        // Even, so that halving keeps the newest sample (see `measure::timeline`).
        max_samples: max_samples & !1,
    })
}

#[cfg(test)]
mod tests;

// Unit tests measure with the same allocator the binary installs.
#[cfg(test)]
#[global_allocator]
static TEST_ALLOCATOR: measure::CountingJemalloc = measure::CountingJemalloc;
