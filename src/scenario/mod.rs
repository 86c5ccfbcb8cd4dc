//! Scenario files: what to generate, which informer variants to compare, which phases to
//! drive. Feeds the runner.
//!
//! Loading is two steps, as ripgrep does with its flags: serde reads the TOML into the
//! structs of [`raw`] (unknown keys rejected), then [`Scenario::from_raw`] checks the rules
//! serde cannot express and produces the validated [`Scenario`] the rest of the crate sees.
//! Every rejection names the file, the key path and, where known, the line.

mod raw;
mod variant;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::apiserver::selector::LabelSelector;
use crate::measure::timeline::{Every, TimelineSpec};
use crate::report::compare::Metric;
use raw::{RawObjects, RawPhase, RawScenario, RawTimeline, RawVariant};
pub use variant::{
    AllocatorConfig, Fault, Implementation, InitialSync, LAST_APPLIED_ANNOTATION, ListRules,
    Projection, QueueKind, Relist, StoreMode, Transform, Variant, VariantConfig,
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
}

/// The objects the built-in apiserver generates, and their shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectSpec {
    /// Resource kind.
    pub kind: ObjectKind,
    /// Objects that exist when the first phase starts.
    pub count: u64,
    /// Seed of the generator: same seed, same objects, byte for byte.
    pub seed: u64,
    /// Namespaces the objects are spread over, round robin.
    pub namespaces: u32,
    /// Labels per object, beyond `app` and `pod-template-hash`.
    pub labels: u32,
    /// Annotations per object, beyond `kubectl.kubernetes.io/last-applied-configuration`.
    pub annotations: u32,
    /// Containers per pod.
    pub containers: u32,
    /// `metadata.managedFields` entries per object (0 = none).
    pub managed_fields: u32,
    /// Whether objects carry the `kubectl.kubernetes.io/last-applied-configuration` annotation.
    pub last_applied: bool,
    /// ConfigMap and Secret data entries: `None` for the default application config (a YAML
    /// file and two flat keys); `Some(n)` for a short per-object `config.yaml` and `n - 1`
    /// values of `data_bytes` bytes each (kube-runtime's benchmark shape is 2 and 128).
    #[serde(default)]
    pub data_keys: Option<u32>,
    /// Bytes of each value after the first when `data_keys` is set.
    #[serde(default = "default_data_bytes")]
    pub data_bytes: u32,
}

fn default_data_bytes() -> u32 {
    128
}

impl ObjectSpec {
    /// `count` pods of the default shape: what a scenario gets for every key it leaves out
    /// (a Deployment's pod with one container, about 7.3 KB of JSON).
    pub fn pods(count: u64) -> ObjectSpec {
        ObjectSpec {
            kind: ObjectKind::Pod,
            count,
            seed: 1,
            namespaces: 10,
            labels: 4,
            annotations: 2,
            containers: 1,
            managed_fields: 2,
            last_applied: false,
            data_keys: None,
            data_bytes: default_data_bytes(),
        }
    }
}

/// Settings of the built-in apiserver.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiServerSpec {
    /// Events of history kept for watches and consistent continuations (the watch cache's
    /// window); older resourceVersions get 410 Expired. `None` keeps every event.
    pub history_events: Option<u64>,
}

/// Resource kinds the built-in apiserver can serve.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ObjectKind {
    /// core/v1 Pod.
    #[default]
    Pod,
    /// core/v1 ConfigMap.
    ConfigMap,
    /// core/v1 Secret.
    Secret,
}

impl ObjectKind {
    /// Every kind, in discovery order.
    pub const ALL: [ObjectKind; 3] = [ObjectKind::Pod, ObjectKind::ConfigMap, ObjectKind::Secret];

    /// The kind's name (`Pod`).
    pub fn as_str(self) -> &'static str {
        match self {
            ObjectKind::Pod => "Pod",
            ObjectKind::ConfigMap => "ConfigMap",
            ObjectKind::Secret => "Secret",
        }
    }

    /// The resource's plural name in URLs (`pods`).
    pub fn plural(self) -> &'static str {
        match self {
            ObjectKind::Pod => "pods",
            ObjectKind::ConfigMap => "configmaps",
            ObjectKind::Secret => "secrets",
        }
    }

    /// The kind's top-level fields besides `apiVersion` and `kind`: where a transform's
    /// field path can start.
    pub fn top_level_fields(self) -> &'static [&'static str] {
        match self {
            ObjectKind::Pod => &["metadata", "spec", "status"],
            ObjectKind::ConfigMap => &["metadata", "data", "binaryData", "immutable"],
            ObjectKind::Secret => &["metadata", "data", "stringData", "type", "immutable"],
        }
    }

    /// The kind for a plural resource name.
    pub fn from_plural(plural: &str) -> Option<ObjectKind> {
        ObjectKind::ALL.into_iter().find(|k| k.plural() == plural)
    }
}

/// A step of the scenario; the informer has caught up with the server when it ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    /// Label in tables and reports (defaults to the kind).
    pub name: String,
    /// What the phase does.
    pub action: PhaseAction,
    /// Which objects an update, delete or recreate picks from: those whose labels match
    /// (the empty selector: all). The amount is of the matching objects.
    #[serde(default)]
    pub selector: LabelSelector,
    /// End every open watch before the phase's changes: the informer misses them and
    /// watches again from its last resourceVersion.
    #[serde(default)]
    pub disconnect: bool,
    /// Compact the server's history after the phase's changes: a watch resumed from an
    /// older resourceVersion gets 410 Expired and the informer must relist.
    #[serde(default)]
    pub compact: bool,
    /// Whether the store must match the server when the phase ends; `false` for a
    /// scenario that shows an inconsistency on purpose.
    pub expect_consistent: bool,
    /// Updates the server makes at a steady rate while the phase runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub churn: Option<Churn>,
}

/// A steady stream of updates in virtual time: a busy cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Churn {
    /// Updates per second.
    pub per_second: u32,
    /// For how long, in ms.
    pub for_ms: u64,
}

impl Churn {
    /// Updates due by `ms` into the churn.
    pub fn due_at(&self, ms: u64) -> u64 {
        u64::from(self.per_second) * ms.min(self.for_ms) / 1000
    }
}

/// Most updates per second a `churn` may ask for.
const MAX_CHURN_PER_SECOND: u64 = 100_000;

fn churn_from_raw(p: &RawPhase, i: usize) -> Result<Option<Churn>, Problem> {
    let key = |field: &str| format!("phase[{i}].{field}");
    let Some(rate) = &p.churn else {
        if let Some(v) = &p.churn_for {
            return Err(Problem::at(
                key("churn_for"),
                v.span(),
                "`churn_for` is how long the `churn` goes on; set `churn` too",
            ));
        }
        return Ok(None);
    };
    let text = rate.as_ref();
    let per_second = text
        .strip_suffix("/s")
        .and_then(|n| n.trim().replace('_', "").parse::<u64>().ok())
        .filter(|n| (1..=MAX_CHURN_PER_SECOND).contains(n))
        .ok_or_else(|| {
            Problem::at(
                key("churn"),
                rate.span(),
                format!("{text:?} is not a rate of 1/s to {MAX_CHURN_PER_SECOND}/s"),
            )
            .hint("write updates per second: `churn = \"500/s\"`")
        })?;
    let for_ms = match &p.churn_for {
        None => 60_000,
        Some(v) => duration_ms(v, &key("churn_for"))?,
    };
    Ok(Some(Churn {
        per_second: per_second as u32,
        for_ms,
    }))
}

/// The closed set of phase kinds, as written in scenario files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PhaseKind {
    /// The informer's initial sync: LIST, then WATCH from the list's resourceVersion.
    List,
    /// Modify objects on the server; the informer sees MODIFIED events.
    Update,
    /// Delete objects on the server; the informer sees DELETED events.
    Delete,
    /// Create new objects on the server; the informer sees ADDED events.
    Create,
    /// Delete objects and create them again under the same name with a new UID.
    Recreate,
    /// Force a relist: the watch drops while other resources move the resourceVersion on,
    /// and the history is compacted; the re-watch gets 410 Expired. No object changes.
    Relist,
    /// Let the process settle and see what memory goes back to the OS: idle in virtual
    /// time, then wait in real time and apply jemalloc's decay, or purge. No object
    /// changes.
    Settle,
    /// Check the measurement: allocate exactly `bytes` in `blocks` blocks as the informer,
    /// then free them. No object changes.
    Calibrate,
    /// The handlers' resync period elapses: every object in the store is queued again as a
    /// Sync delta and re-delivered to the handlers. No API call, no object changes.
    Resync,
    /// Drop the watch, then delete and recreate objects under the same names (new UIDs)
    /// while the informer is away; with `compact`, the re-watch gets 410 and relists.
    Disconnect,
}

impl PhaseKind {
    /// Whether phases of this kind leave every object as it is (they take no amount,
    /// selector, disconnect or compact).
    pub fn changes_nothing(self) -> bool {
        matches!(
            self,
            PhaseKind::List
                | PhaseKind::Relist
                | PhaseKind::Settle
                | PhaseKind::Calibrate
                | PhaseKind::Resync
        )
    }

    /// "a `delete`", "an `update`": the kind with its article, for messages.
    pub fn a(self) -> String {
        let name = self.as_str();
        let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        format!("{article} `{name}`")
    }

    /// The kind's name as written in scenario files.
    pub fn as_str(self) -> &'static str {
        match self {
            PhaseKind::List => "list",
            PhaseKind::Update => "update",
            PhaseKind::Delete => "delete",
            PhaseKind::Create => "create",
            PhaseKind::Recreate => "recreate",
            PhaseKind::Relist => "relist",
            PhaseKind::Settle => "settle",
            PhaseKind::Calibrate => "calibrate",
            PhaseKind::Resync => "resync",
            PhaseKind::Disconnect => "disconnect",
        }
    }
}

/// A phase with its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum PhaseAction {
    /// Start the informer and wait for its initial sync.
    List,
    /// Update `amount` of the live objects (new generation, new resourceVersion).
    Update {
        /// How many objects.
        amount: Amount,
    },
    /// Delete `amount` of the live objects.
    Delete {
        /// How many objects.
        amount: Amount,
    },
    /// Create `amount` new objects (a fraction is of the live objects).
    Create {
        /// How many objects.
        amount: Amount,
    },
    /// Delete and recreate `amount` of the live objects (new UIDs, same names).
    Recreate {
        /// How many objects.
        amount: Amount,
    },
    /// Force a relist without changing any object.
    Relist,
    /// Idle, then let freed memory go back to the OS.
    Settle {
        /// Virtual time to idle first (timers fire: watch bookmarks, resyncs), in ms.
        idle_ms: u64,
        /// How freed pages are given back.
        decay: Decay,
    },
    /// Fire the handlers' resync timer.
    Resync,
    /// End every watch, then delete and recreate `amount` of the live objects.
    Disconnect {
        /// How many objects.
        amount: Amount,
    },
    /// Allocate `bytes` in `blocks` blocks as the informer, then free them all.
    Calibrate {
        /// Bytes in all, spread evenly over the blocks (the first ones take the remainder).
        bytes: u64,
        /// How many blocks.
        blocks: u64,
    },
}

/// How a `settle` phase gives freed pages back to the OS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decay {
    /// Wait this long in real time, then purge what jemalloc's decay settings say has
    /// decayed by then (as its background threads would).
    Wait {
        /// Real time to wait, in ms.
        ms: u64,
    },
    /// Purge every unused page at once, whatever the decay settings.
    Purge,
}

impl PhaseAction {
    /// The kind of this action.
    pub fn kind(&self) -> PhaseKind {
        match self {
            PhaseAction::List => PhaseKind::List,
            PhaseAction::Update { .. } => PhaseKind::Update,
            PhaseAction::Delete { .. } => PhaseKind::Delete,
            PhaseAction::Create { .. } => PhaseKind::Create,
            PhaseAction::Recreate { .. } => PhaseKind::Recreate,
            PhaseAction::Relist => PhaseKind::Relist,
            PhaseAction::Settle { .. } => PhaseKind::Settle,
            PhaseAction::Calibrate { .. } => PhaseKind::Calibrate,
            PhaseAction::Resync => PhaseKind::Resync,
            PhaseAction::Disconnect { .. } => PhaseKind::Disconnect,
        }
    }
}

/// How many objects a mutating phase touches.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Amount {
    /// A fraction in (0, 1] of the objects alive when the phase starts, rounded to nearest.
    Fraction(f64),
    /// An exact number, capped at the objects alive.
    Count(u64),
}

impl Amount {
    /// The number of objects this amount selects out of `alive`.
    pub fn of(self, alive: u64) -> u64 {
        match self {
            // 0 < f <= 1, so the product lies in [0, alive]; counts stay far below 2^53.
            Amount::Fraction(f) => ((alive as f64) * f).round() as u64,
            Amount::Count(n) => n.min(alive),
        }
    }
}

/// Why a scenario could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read. (What the OS said is the error's source, printed once
    /// after this message.)
    #[error("failed to read `{}`", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The file was read but is not a valid scenario.
    #[error("{0}")]
    Invalid(Box<Invalid>),
}

/// A rejected scenario: where and why.
#[derive(Debug)]
pub struct Invalid {
    /// The file.
    pub file: PathBuf,
    /// Key path such as `variant[1].store`, when the error is about one key.
    pub key: Option<String>,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "failed to load `{}`: ", self.file.display())?;
        match (&self.key, self.line) {
            (Some(key), Some(line)) => write!(f, "at `{key}` (line {line}): ")?,
            (Some(key), None) => write!(f, "at `{key}`: ")?,
            (None, Some(line)) => write!(f, "line {line}: ")?,
            (None, None) => {}
        }
        f.write_str(&self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

impl Scenario {
    /// Reads and validates a scenario file.
    pub fn load(file: &Path) -> Result<Scenario, ScenarioError> {
        let bytes = std::fs::read(file).map_err(|source| ScenarioError::Read {
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
        Scenario::parse(file, text)
    }

    /// Validates scenario text; `file` only names it in errors and the report.
    pub fn parse(file: &Path, text: &str) -> Result<Scenario, ScenarioError> {
        let raw = parse_raw(text).map_err(|e| e.into_error(file, text))?;
        Scenario::from_raw(file, raw).map_err(|e| e.into_error(file, text))
    }

    fn from_raw(file: &Path, raw: RawScenario) -> Result<Scenario, Problem> {
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
        let objects = objects_from_raw(raw.objects)?;
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
        let phases = phases_from_raw(raw.phase)?;
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
        })
    }
}

fn parse_raw(text: &str) -> Result<RawScenario, Problem> {
    let deserializer = toml::Deserializer::parse(text).map_err(|e| Problem {
        key: None,
        span: e.span().or_else(|| too_deep_at(text, e.message())),
        message: in_toml_words(e.message()),
        hint: hint_for(e.message()),
        first: None,
    })?;
    serde_path_to_error::deserialize(deserializer).map_err(|e| {
        let key = key_as_written(e.path());
        let inner = e.into_inner();
        Problem {
            key: (!key.is_empty()).then_some(key),
            span: inner.span(),
            message: in_toml_words(inner.message()),
            hint: hint_for(inner.message()),
            first: None,
        }
    })
}

/// A TOML or serde message in the words of the file, not of Rust's types.
fn in_toml_words(message: &str) -> String {
    message
        .trim_end()
        .replace("expected i64", "expected an integer")
        .replace("expected u64", "expected a whole number")
        .replace("expected f64", "expected a number")
        .replace("expected a boolean", "expected true or false")
        .replace("wanted string or table", "expected a string")
}

/// Where a file the parser found nested too deeply goes too deep: the parser says no
/// place, so this finds the first line at which a prefix of the file fails the same way
/// (a binary search: a few parses, linear each).
fn too_deep_at(text: &str, message: &str) -> Option<std::ops::Range<usize>> {
    if !message.contains("recursion limit") {
        return None;
    }
    let ends: Vec<usize> = text
        .match_indices('\n')
        .map(|(i, _)| i + 1)
        .chain(std::iter::once(text.len()))
        .collect();
    let too_deep = |lines: usize| {
        toml::Deserializer::parse(&text[..ends[lines - 1]])
            .is_err_and(|e| e.message().contains("recursion limit"))
    };
    // The smallest number of lines that is already too deep.
    let (mut low, mut high) = (1, ends.len());
    while low < high {
        let mid = low + (high - low) / 2;
        if too_deep(mid) {
            high = mid
        } else {
            low = mid + 1
        }
    }
    let start = if low >= 2 { ends[low - 2] } else { 0 };
    Some(start..ends[low - 1])
}

fn hint_for(message: &str) -> Option<String> {
    message
        .contains("recursion limit")
        .then(|| "tables or dotted keys are nested too deeply".to_owned())
}

/// The key path as the TOML file spells it: `phase[1].fraction`. Serde's own segments
/// (`toml::Spanned`'s private field) are left out.
fn key_as_written(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut key = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => key.push_str(&format!("[{index}]")),
            Segment::Map { key: name } | Segment::Enum { variant: name } => {
                if name.starts_with("$__") {
                    continue;
                }
                if !key.is_empty() {
                    key.push('.');
                }
                key.push_str(name);
            }
            Segment::Unknown => {}
        }
    }
    key
}

fn objects_from_raw(raw: RawObjects) -> Result<ObjectSpec, Problem> {
    let count = int_in(&raw.count, "objects.count", 1, MAX_OBJECTS)?;
    let defaults = ObjectSpec::pods(count);
    let opt = |v: &Option<Spanned<i64>>, key: &str, default: u32, min: u64, max: u64| match v {
        None => Ok(default),
        Some(v) => int_in(v, key, min, max).map(|n| n as u32),
    };
    Ok(ObjectSpec {
        kind: raw.kind,
        count,
        seed: raw.seed.unwrap_or(defaults.seed),
        namespaces: opt(
            &raw.namespaces,
            "objects.namespaces",
            defaults.namespaces,
            1,
            10_000,
        )?,
        labels: opt(&raw.labels, "objects.labels", defaults.labels, 0, 64)?,
        annotations: opt(
            &raw.annotations,
            "objects.annotations",
            defaults.annotations,
            0,
            64,
        )?,
        containers: opt(
            &raw.containers,
            "objects.containers",
            defaults.containers,
            1,
            16,
        )?,
        managed_fields: opt(
            &raw.managed_fields,
            "objects.managed_fields",
            defaults.managed_fields,
            0,
            8,
        )?,
        last_applied: raw.last_applied.unwrap_or(defaults.last_applied),
        data_keys: match &raw.data_keys {
            None => None,
            Some(v) if raw.kind == ObjectKind::Pod => {
                return Err(Problem::at(
                    "objects.data_keys",
                    v.span(),
                    "a Pod has no `data`: `data_keys` shapes ConfigMaps and Secrets",
                ));
            }
            Some(v) => Some(int_in(v, "objects.data_keys", 1, 64)? as u32),
        },
        data_bytes: match &raw.data_bytes {
            None => defaults.data_bytes,
            Some(v) if raw.data_keys.is_none() => {
                return Err(Problem::at(
                    "objects.data_bytes",
                    v.span(),
                    "`data_bytes` sizes the values `data_keys` adds; set `data_keys` too",
                ));
            }
            Some(v) => int_in(v, "objects.data_bytes", 0, 1 << 20)? as u32,
        },
    })
}

fn variant_from_raw(i: usize, raw: RawVariant, objects: &ObjectSpec) -> Result<Variant, Problem> {
    let key = |field: &str| format!("variant[{i}].{field}");
    if raw.name.as_ref().trim().is_empty() {
        return Err(Problem::at(
            key("name"),
            raw.name.span(),
            "variant name is empty",
        ));
    }
    let implementation = raw.implementation.unwrap_or(Implementation::Builtin);
    let mut config = VariantConfig::defaults(implementation);
    if let Some(v) = &raw.page_size {
        config.page_size = int_in(v, &key("page_size"), 0, u64::from(u32::MAX))? as u32;
    }
    config.store = raw.store.unwrap_or(config.store);
    config.list_rules = raw.list_rules.unwrap_or(config.list_rules);
    config.initial_sync = raw.initial_sync.unwrap_or(config.initial_sync);
    config.relist = raw.relist.unwrap_or(config.relist);
    config.projection = raw.projection.unwrap_or(config.projection);
    config.transform_initial_events = raw
        .transform_initial_events
        .unwrap_or(config.transform_initial_events);
    config.fault = raw.fault;
    event_machinery_from_raw(&raw, &mut config, &key)?;
    if let Some(a) = &raw.allocator {
        let decay = |v: &Option<Spanned<i64>>, field: &str| -> Result<Option<i64>, Problem> {
            match v {
                None => Ok(None),
                Some(v) if (-1..=86_400_000).contains(v.as_ref()) => Ok(Some(*v.as_ref())),
                Some(v) => Err(Problem::at(
                    key(&format!("allocator.{field}")),
                    v.span(),
                    format!(
                        "{} is out of range: expected -1 (never) to 86400000 ms",
                        v.as_ref()
                    ),
                )),
            }
        };
        config.allocator = AllocatorConfig {
            dirty_decay_ms: decay(&a.dirty_decay_ms, "dirty_decay_ms")?,
            muzzy_decay_ms: decay(&a.muzzy_decay_ms, "muzzy_decay_ms")?,
            narenas: match &a.narenas {
                None => None,
                Some(v) => Some(int_in(v, &key("allocator.narenas"), 1, 1024)? as u32),
            },
            background_thread: a.background_thread,
        };
    }
    for (j, t) in raw.transform.iter().enumerate() {
        let transform: Transform = t.as_ref().parse().map_err(|why: String| {
            Problem::at(format!("variant[{i}].transform[{j}]"), t.span(), why)
        })?;
        let misfit = match &transform {
            Transform::Status if objects.kind != ObjectKind::Pod => {
                Some(format!("a {} has no `status`", objects.kind.as_str()))
            }
            Transform::Status if config.projection == Projection::Metadata => {
                Some("a metadata-only informer receives no `status`".to_owned())
            }
            Transform::Field(path) if !objects.kind.top_level_fields().contains(&&*path[0]) => {
                Some(format!(
                    "a {} has no field `{}`; its fields are {}",
                    objects.kind.as_str(),
                    path[0],
                    objects.kind.top_level_fields().join(", ")
                ))
            }
            Transform::Field(path)
                if config.projection == Projection::Metadata && path[0] != "metadata" =>
            {
                Some(format!(
                    "a metadata-only informer receives only `metadata`, not `{}`",
                    path[0]
                ))
            }
            _ => None,
        };
        if let Some(why) = misfit {
            return Err(Problem::at(
                format!("variant[{i}].transform[{j}]"),
                t.span(),
                why,
            ));
        }
        config.transform.push(transform);
    }
    check_variant(&config, &raw).map_err(|(field, why, hint)| {
        let problem = Problem::key(key(field), why);
        match hint {
            Some(hint) => problem.hint(hint),
            None => problem,
        }
    })?;
    Ok(Variant {
        name: raw.name.into_inner(),
        config,
    })
}

/// Most informers or handlers a variant may run.
const MAX_CONSUMERS: u64 = 1000;

/// The queue, handlers, informers and resync settings of a variant.
fn event_machinery_from_raw(
    raw: &RawVariant,
    config: &mut VariantConfig,
    key: &impl Fn(&str) -> String,
) -> Result<(), Problem> {
    if let Some(v) = &raw.informers {
        config.informers = int_in(v, &key("informers"), 1, MAX_CONSUMERS)? as u32;
    }
    config.shared = raw.shared.unwrap_or(false);
    if let Some(v) = &raw.handlers {
        config.handlers = int_in(v, &key("handlers"), 0, MAX_CONSUMERS)? as u32;
    }
    if let Some(v) = &raw.handler_cost {
        let costs: Vec<&str> = match v.as_ref() {
            raw::RawCost::Each(one) => vec![one.as_str()],
            raw::RawCost::PerHandler(each) => each.iter().map(String::as_str).collect(),
        };
        if config.handlers == 0 {
            return Err(Problem::at(
                key("handler_cost"),
                v.span(),
                "`handler_cost` is what each handler pays per notification; set `handlers` too",
            ));
        }
        if costs.len() != 1 && costs.len() != config.handlers as usize {
            return Err(Problem::at(
                key("handler_cost"),
                v.span(),
                format!(
                    "{} costs for {} handlers: give one cost for all, or one per handler",
                    costs.len(),
                    config.handlers
                ),
            ));
        }
        config.handler_cost_ms = costs
            .into_iter()
            .map(|c| duration_ms(&Spanned::new(v.span(), c.to_owned()), &key("handler_cost")))
            .collect::<Result<_, _>>()?;
    }
    if let Some(v) = &raw.resync_period {
        // At most a day, so it fits.
        config.resync_period_ms = duration_ms(v, &key("resync_period"))? as u32;
        if config.handlers == 0 && config.resync_period_ms > 0 {
            return Err(Problem::at(
                key("resync_period"),
                v.span(),
                "a resync re-delivers objects to handlers; with `handlers = 0` there is none to \
                 resync for (client-go's informer skips it)",
            ));
        }
    }
    config.uid_aware = raw.uid_aware.unwrap_or(false);
    if let Some(v) = &raw.watch_read_cost {
        let ms = duration_ms(v, &key("watch_read_cost"))?;
        config.watch_read_cost_ms = u16::try_from(ms)
            .ok()
            .filter(|ms| *ms <= 60_000)
            .ok_or_else(|| {
                Problem::at(
                    key("watch_read_cost"),
                    v.span(),
                    format!("{ms} ms per event is out of range: at most 60s"),
                )
            })?;
    }
    // Handlers are fed through a queue; client-go's default one since v0.33 is RealFIFO.
    config.queue = match raw.queue {
        Some(q) => Some(q),
        None if config.handlers > 0 => Some(QueueKind::RealFifo),
        None => None,
    };
    Ok(())
}

/// Combinations of settings that do not exist in the informer they name: (the key at
/// fault, why, a hint).
fn check_variant(
    config: &VariantConfig,
    raw: &RawVariant,
) -> Result<(), (&'static str, String, Option<&'static str>)> {
    if config.implementation == Implementation::KubeRuntime {
        let fixed = [
            (
                "store",
                raw.store.is_some_and(|s| s != StoreMode::PerItemCopy),
                "kube-runtime's store holds every object in an `Arc` of its own (per-item-copy)",
            ),
            (
                "list_rules",
                raw.list_rules.is_some_and(|r| r != ListRules::KubeRuntime),
                "kube-runtime lists by its own rules (list_rules = \"kube-runtime\")",
            ),
            (
                "relist",
                raw.relist.is_some_and(|r| r != Relist::Buffered),
                "kube-runtime's reflector buffers a relist and swaps it in (relist = \"buffered\")",
            ),
            (
                "transform_initial_events",
                raw.transform_initial_events == Some(false),
                "kube-runtime's `.modify()` sees every event, initial ones included",
            ),
            (
                "fault",
                raw.fault.is_some(),
                "faults are injected into the built-in informer only",
            ),
            (
                "queue",
                raw.queue.is_some(),
                "kube-runtime's reflector writes its store directly; queues are client-go's",
            ),
            (
                "handlers",
                raw.handlers.is_some(),
                "kube-runtime has no handler registry; its stream has one consumer",
            ),
            (
                "shared",
                raw.shared.is_some(),
                "kube-runtime has no shared informer (its informers are independent)",
            ),
            (
                "uid_aware",
                raw.uid_aware.is_some(),
                "uid_aware changes how client-go's process loop hands updates to handlers",
            ),
            (
                "watch_read_cost",
                raw.watch_read_cost.is_some(),
                "the reading cost is paid in the built-in reflector",
            ),
            (
                "initial_sync",
                raw.initial_sync == Some(InitialSync::WatchRv0),
                "kube-runtime's watcher syncs by LIST or watch-list, never by a bare watch at \
                 resourceVersion 0",
            ),
        ];
        if let Some((field, _, why)) = fixed.into_iter().find(|(_, set, _)| *set) {
            return Err((
                field,
                format!("`{field}` cannot be set for implementation = \"kube-runtime\": {why}"),
                Some("use implementation = \"builtin\" to vary it"),
            ));
        }
    }
    if config.queue.is_some() && raw.relist == Some(Relist::Incremental) {
        return Err((
            "relist",
            "`relist = \"incremental\"` cannot be set with a queue: a relist reaches the store \
             through the queue, one key at a time, as Replaced deltas and tombstones"
                .to_owned(),
            Some("leave `relist` out when `queue` or `handlers` is set"),
        ));
    }
    if config.uid_aware && config.queue.is_none() {
        return Err((
            "uid_aware",
            "`uid_aware` decides what handlers receive; set `handlers` (or `queue`)".to_owned(),
            None,
        ));
    }
    if !config.transform_initial_events
        && (config.initial_sync != InitialSync::WatchList || config.relist != Relist::Buffered)
    {
        return Err((
            "transform_initial_events",
            "`transform_initial_events = false` needs initial_sync = \"watch-list\" and \
             relist = \"buffered\": only a watch-list's temporary store skipped the transform"
                .to_owned(),
            None,
        ));
    }
    Ok(())
}

fn phases_from_raw(raw: Vec<RawPhase>) -> Result<Vec<Phase>, Problem> {
    if raw.is_empty() {
        return Err(Problem::whole("no `[[phase]]`: nothing to run")
            .hint("start with `[[phase]]` `kind = \"list\"`, the informer's initial sync"));
    }
    let mut phases: Vec<Phase> = Vec::with_capacity(raw.len());
    let mut names: HashMap<String, std::ops::Range<usize>> = HashMap::with_capacity(raw.len());
    for (i, p) in raw.into_iter().enumerate() {
        let kind = *p.kind.as_ref();
        let key = |field: &str| format!("phase[{i}].{field}");
        if (i == 0) != (kind == PhaseKind::List) {
            let message = if i == 0 {
                format!("the first phase is `{}`, not `list`", kind.as_str())
            } else {
                "`list` can only be the first phase".to_owned()
            };
            return Err(Problem::at(key("kind"), p.kind.span(), message)
                .hint("the first phase is the informer's initial sync, `kind = \"list\"`"));
        }
        // `list`, `relist`, `settle` and `calibrate` take no amount: they change no object.
        if kind.changes_nothing()
            && let Some((field, span)) = p
                .fraction
                .as_ref()
                .map(|f| ("fraction", f.span()))
                .or(p.count.as_ref().map(|c| ("count", c.span())))
        {
            return Err(Problem::at(
                key(field),
                span,
                format!("{} phase takes no `{field}`", kind.a()),
            ));
        }
        for (field, value) in [("idle", &p.idle), ("decay", &p.decay)] {
            if let Some(v) = value
                && kind != PhaseKind::Settle
            {
                return Err(Problem::at(
                    key(field),
                    v.span(),
                    format!("{} phase takes no `{field}`", kind.a()),
                )
                .hint("`idle` and `decay` belong to a `settle` phase"));
            }
        }
        for (field, value) in [("bytes", &p.bytes), ("blocks", &p.blocks)] {
            if let Some(v) = value
                && kind != PhaseKind::Calibrate
            {
                return Err(Problem::at(
                    key(field),
                    v.span(),
                    format!("{} phase takes no `{field}`", kind.a()),
                )
                .hint("`bytes` and `blocks` belong to a `calibrate` phase"));
            }
        }
        let action = match kind {
            PhaseKind::List => PhaseAction::List,
            PhaseKind::Relist => PhaseAction::Relist,
            PhaseKind::Resync => PhaseAction::Resync,
            PhaseKind::Disconnect => PhaseAction::Disconnect {
                amount: amount_from_raw(&p, i)?,
            },
            PhaseKind::Settle => PhaseAction::Settle {
                idle_ms: match &p.idle {
                    None => 0,
                    Some(v) => duration_ms(v, &key("idle"))?,
                },
                decay: match &p.decay {
                    None => Decay::Wait { ms: 0 },
                    Some(v) if v.as_ref() == "purge" => Decay::Purge,
                    Some(v) => Decay::Wait {
                        ms: duration_ms(v, &key("decay"))?,
                    },
                },
            },
            PhaseKind::Calibrate => calibrate_from_raw(&p, i)?,
            PhaseKind::Update => PhaseAction::Update {
                amount: amount_from_raw(&p, i)?,
            },
            PhaseKind::Delete => PhaseAction::Delete {
                amount: amount_from_raw(&p, i)?,
            },
            PhaseKind::Create => PhaseAction::Create {
                amount: amount_from_raw(&p, i)?,
            },
            PhaseKind::Recreate => PhaseAction::Recreate {
                amount: amount_from_raw(&p, i)?,
            },
        };
        let flag = |f: &Option<Spanned<bool>>, field: &str| -> Result<bool, Problem> {
            match f {
                Some(v) if kind.changes_nothing() && *v.as_ref() => Err(Problem::at(
                    key(field),
                    v.span(),
                    format!(
                        "{} phase takes no `{field}`{}",
                        kind.a(),
                        if kind == PhaseKind::Relist {
                            ": it always disconnects and compacts"
                        } else {
                            ""
                        }
                    ),
                )),
                Some(v) => Ok(*v.as_ref()),
                None => Ok(false),
            }
        };
        let selector = match &p.selector {
            None => LabelSelector::default(),
            Some(s)
                if !matches!(
                    kind,
                    PhaseKind::Update
                        | PhaseKind::Delete
                        | PhaseKind::Recreate
                        | PhaseKind::Disconnect
                ) =>
            {
                return Err(Problem::at(
                    key("selector"),
                    s.span(),
                    format!("{} phase takes no `selector`", kind.a()),
                )
                .hint("`selector` picks the objects of an update, delete or recreate phase"));
            }
            Some(s) => LabelSelector::parse(s.as_ref()).map_err(|why| {
                Problem::at(
                    key("selector"),
                    s.span(),
                    format!("invalid label selector: {why}"),
                )
                .hint("write it as for kubectl -l: `app=web`, `tier in (a,b)`, `!canary`")
            })?,
        };
        let churn = churn_from_raw(&p, i)?;
        if let (Some(_), Some(v)) = (churn, &p.churn)
            && matches!(kind, PhaseKind::Settle | PhaseKind::Calibrate)
        {
            return Err(Problem::at(
                key("churn"),
                v.span(),
                format!("{} phase takes no `churn`", kind.a()),
            ));
        }
        let disconnect = flag(&p.disconnect, "disconnect")?;
        let compact = flag(&p.compact, "compact")?;
        // A phase without a name is named by its kind, written where the kind is.
        let name_span = p.name.as_ref().map_or_else(|| p.kind.span(), Spanned::span);
        let name = match p.name {
            Some(name) if name.as_ref().trim().is_empty() => {
                return Err(Problem::at(key("name"), name.span(), "phase name is empty"));
            }
            Some(name) => name.into_inner(),
            None => kind.as_str().to_owned(),
        };
        if let Some(first) = names.get(&name) {
            return Err(Problem::at(
                key("name"),
                name_span,
                format!("phase name {name:?} is used twice"),
            )
            .first_at(first.clone())
            .hint("give one of the phases a `name` of its own"));
        }
        names.insert(name.clone(), name_span);
        phases.push(Phase {
            name,
            action,
            selector,
            disconnect,
            compact,
            expect_consistent: p.expect_consistent.unwrap_or(true),
            churn,
        });
    }
    Ok(phases)
}

/// Largest allocation a `calibrate` phase may make in all: 16 GiB.
const MAX_CALIBRATE_BYTES: u64 = 1 << 34;
/// Most blocks a `calibrate` phase may allocate.
const MAX_CALIBRATE_BLOCKS: u64 = 10_000_000;

fn calibrate_from_raw(p: &RawPhase, i: usize) -> Result<PhaseAction, Problem> {
    let key = |field: &str| format!("phase[{i}].{field}");
    let (Some(bytes), Some(blocks)) = (&p.bytes, &p.blocks) else {
        return Err(Problem::at(
            key("kind"),
            p.kind.span(),
            "a `calibrate` phase needs `bytes` and `blocks`",
        )
        .hint("e.g. `bytes = 1048576` and `blocks = 1000`"));
    };
    let blocks = int_in(blocks, &key("blocks"), 1, MAX_CALIBRATE_BLOCKS)?;
    let bytes_value = int_in(bytes, &key("bytes"), 1, MAX_CALIBRATE_BYTES)?;
    if bytes_value < blocks {
        return Err(Problem::at(
            key("bytes"),
            bytes.span(),
            format!("{bytes_value} bytes cannot fill {blocks} blocks"),
        )
        .hint("every block takes at least one byte"));
    }
    Ok(PhaseAction::Calibrate {
        bytes: bytes_value,
        blocks,
    })
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

fn amount_from_raw(p: &RawPhase, i: usize) -> Result<Amount, Problem> {
    match (&p.fraction, &p.count) {
        (Some(f), None) => {
            let v = *f.as_ref();
            if v > 0.0 && v <= 1.0 {
                Ok(Amount::Fraction(v))
            } else {
                Err(Problem::at(
                    format!("phase[{i}].fraction"),
                    f.span(),
                    format!("fraction {v} is outside (0, 1]"),
                ))
            }
        }
        (None, Some(c)) => {
            int_in(c, &format!("phase[{i}].count"), 1, MAX_OBJECTS).map(Amount::Count)
        }
        (Some(_), Some(c)) => Err(Problem::at(
            format!("phase[{i}].count"),
            c.span(),
            "give either `fraction` or `count`, not both",
        )),
        // A selector alone picks every object it matches.
        (None, None) if p.selector.is_some() => Ok(Amount::Fraction(1.0)),
        (None, None) => Err(Problem::at(
            format!("phase[{i}].kind"),
            p.kind.span(),
            format!("{} phase needs `fraction` or `count`", p.kind.as_ref().a()),
        )
        .hint("e.g. `fraction = 0.5` for half of the live objects, or `count = 100`")),
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

/// A duration as written (`"12s"`, `"500ms"`, `"2m"`), in milliseconds, at most a day.
fn duration_ms(v: &Spanned<String>, key: &str) -> Result<u64, Problem> {
    const DAY_MS: u64 = 24 * 3600 * 1000;
    let text = v.as_ref();
    match humantime::parse_duration(text) {
        Ok(d) if d.as_millis() <= u128::from(DAY_MS) => Ok(d.as_millis() as u64),
        Ok(_) => Err(Problem::at(
            key,
            v.span(),
            format!("{text:?} is longer than a day"),
        )),
        Err(e) => Err(
            Problem::at(key, v.span(), format!("{text:?} is not a duration: {e}"))
                .hint("write a number and a unit: `500ms`, `12s`, `2m`"),
        ),
    }
}

fn int_in(v: &Spanned<i64>, key: &str, min: u64, max: u64) -> Result<u64, Problem> {
    let n = *v.as_ref();
    match u64::try_from(n) {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(Problem::at(
            key,
            v.span(),
            format!("{n} is out of range: expected {min} to {max}"),
        )),
    }
}

/// A rejection before the file name and text are attached.
#[derive(Debug)]
struct Problem {
    key: Option<String>,
    span: Option<std::ops::Range<usize>>,
    message: String,
    hint: Option<String>,
    /// Where the value this one repeats was first written (duplicate names).
    first: Option<std::ops::Range<usize>>,
}

impl Problem {
    fn at(
        key: impl Into<String>,
        span: std::ops::Range<usize>,
        message: impl Into<String>,
    ) -> Self {
        Problem {
            key: Some(key.into()),
            span: Some(span),
            message: message.into(),
            hint: None,
            first: None,
        }
    }

    fn key(key: impl Into<String>, message: impl Into<String>) -> Self {
        Problem {
            key: Some(key.into()),
            span: None,
            message: message.into(),
            hint: None,
            first: None,
        }
    }

    fn whole(message: impl Into<String>) -> Self {
        Problem {
            key: None,
            span: None,
            message: message.into(),
            hint: None,
            first: None,
        }
    }

    fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Says where the repeated value was first written.
    fn first_at(mut self, span: std::ops::Range<usize>) -> Self {
        self.first = Some(span);
        self
    }

    fn into_error(self, file: &Path, text: &str) -> ScenarioError {
        let line_of = |span: std::ops::Range<usize>| {
            let start = span.start.min(text.len());
            text.as_bytes()[..start]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1
        };
        let mut message = self.message;
        if let Some(first) = self.first {
            message.push_str(&format!(" (first on line {})", line_of(first)));
        }
        ScenarioError::Invalid(Box::new(Invalid {
            file: file.to_owned(),
            key: self.key,
            line: self.span.map(line_of),
            message,
            hint: self.hint,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
name = "t"
[objects]
count = 10
[[variant]]
name = "a"
[[phase]]
kind = "list"
"#;

    /// The minimal scenario with `settings` added to its variant.
    fn with_variant_settings(settings: &str) -> Result<Scenario, ScenarioError> {
        Scenario::parse(
            Path::new("x.toml"),
            &MINIMAL.replace("name = \"a\"", &format!("name = \"a\"\n{settings}")),
        )
    }

    fn error_of(text: &str) -> String {
        Scenario::parse(Path::new("x.toml"), text)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn minimal_scenario_gets_documented_defaults() {
        let s = Scenario::parse(Path::new("x.toml"), MINIMAL).unwrap();
        assert_eq!(s.objects.seed, 1);
        assert_eq!(s.objects.namespaces, 10);
        assert_eq!(s.objects.containers, 1);
        assert_eq!(s.objects.managed_fields, 2);
        assert!(!s.objects.last_applied);
        assert_eq!(s.objects.data_keys, None);
        let config = &s.variants[0].config;
        assert_eq!(config, &VariantConfig::defaults(Implementation::Builtin));
        assert_eq!(config.store, StoreMode::PerItemCopy);
        assert_eq!(config.page_size, 500);
        assert_eq!(config.list_rules, ListRules::ClientGo);
        assert_eq!(config.initial_sync, InitialSync::List);
        assert_eq!(config.relist, Relist::Buffered);
        assert_eq!(config.projection, Projection::Full);
        assert!(config.transform.is_empty() && config.transform_initial_events);
        assert_eq!(s.phases[0].name, "list");
    }

    #[test]
    fn unknown_store_names_key_line_and_choices() {
        let text = MINIMAL.replace("name = \"a\"", "name = \"a\"\nstore = \"shared\"");
        let e = error_of(&text);
        assert!(
            e.starts_with("failed to load `x.toml`: at `variant[0].store` (line 7):"),
            "{e}"
        );
        assert!(
            e.contains("shared-array") && e.contains("per-item-copy"),
            "{e}"
        );
    }

    #[test]
    fn unknown_key_is_rejected_with_its_path() {
        let e = error_of(&MINIMAL.replace("count = 10", "count = 10\ncolour = 3"));
        assert!(
            e.contains("at `objects.colour`") || e.contains("at `objects`"),
            "{e}"
        );
        assert!(e.contains("unknown field `colour`"), "{e}");
        assert!(e.contains("(line 5)"), "{e}");
    }

    #[test]
    fn zero_and_negative_counts_are_rejected() {
        for bad in ["0", "-5"] {
            let e = error_of(&MINIMAL.replace("count = 10", &format!("count = {bad}")));
            assert!(e.contains("at `objects.count` (line 4)"), "{e}");
            assert!(e.contains("out of range"), "{e}");
        }
    }

    #[test]
    fn fraction_outside_unit_interval_is_rejected() {
        for bad in ["0.0", "1.5", "-0.1"] {
            let text = format!("{MINIMAL}[[phase]]\nkind = \"delete\"\nfraction = {bad}\n");
            let e = error_of(&text);
            assert!(e.contains("at `phase[1].fraction` (line 11)"), "{e}");
        }
        let ok = format!("{MINIMAL}[[phase]]\nkind = \"delete\"\nfraction = 1.0\n");
        assert!(Scenario::parse(Path::new("x.toml"), &ok).is_ok());
    }

    #[test]
    fn malformed_toml_names_the_line() {
        let e = error_of("name = \"t\"\n[objects\ncount = 1\n");
        assert!(e.starts_with("failed to load `x.toml`: line 2:"), "{e}");
    }

    #[test]
    fn first_phase_must_be_list() {
        let text = MINIMAL.replace("kind = \"list\"", "kind = \"delete\"\ncount = 1");
        let e = error_of(&text);
        assert!(e.contains("at `phase[0].kind`"), "{e}");
        assert!(e.contains("hint:"), "{e}");
    }

    #[test]
    fn mutating_phase_needs_exactly_one_amount() {
        let none = format!("{MINIMAL}[[phase]]\nkind = \"update\"\n");
        assert!(error_of(&none).contains("needs `fraction` or `count`"));
        let both = format!("{MINIMAL}[[phase]]\nkind = \"update\"\ncount = 1\nfraction = 0.5\n");
        assert!(error_of(&both).contains("not both"));
    }

    #[test]
    fn fraction_rounds_to_nearest_and_count_caps() {
        assert_eq!(Amount::Fraction(0.999).of(10_000), 9_990);
        assert_eq!(Amount::Fraction(1.0).of(7), 7);
        assert_eq!(Amount::Count(50).of(7), 7);
    }

    #[test]
    fn a_selector_picks_the_objects_of_a_phase() {
        let parse = |text: &str| Scenario::parse(Path::new("x.toml"), text);
        let s = parse(&format!(
            "{MINIMAL}[[phase]]\nkind = \"delete\"\nselector = \"app in (web,api)\"\n\
             [[phase]]\nkind = \"update\"\nname = \"canaries\"\nselector = \"!canary\"\ncount = 2\n"
        ))
        .unwrap();
        assert_eq!(s.phases[1].selector.to_string(), "app in (web,api)");
        assert_eq!(
            s.phases[1].action,
            PhaseAction::Delete {
                amount: Amount::Fraction(1.0)
            }
        );
        assert_eq!(
            s.phases[2].action,
            PhaseAction::Update {
                amount: Amount::Count(2)
            }
        );
        assert!(s.phases[0].selector.is_empty());
        let bad = parse(&format!(
            "{MINIMAL}[[phase]]\nkind = \"delete\"\nselector = \"app in web\"\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(
            bad.contains("phase[1].selector") && bad.contains("invalid label selector"),
            "{bad}"
        );
        let misplaced = parse(&format!(
            "{MINIMAL}[[phase]]\nkind = \"create\"\ncount = 1\nselector = \"app=web\"\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(
            misplaced.contains("a `create` phase takes no `selector`"),
            "{misplaced}"
        );
    }

    #[test]
    fn create_and_recreate_phases_take_amounts_and_history_is_bounded() {
        let text = format!(
            "{MINIMAL}[apiserver]\nhistory_events = 500\n[[phase]]\nkind = \"create\"\ncount = 5\n[[phase]]\nkind = \"recreate\"\nfraction = 0.1\n"
        );
        let s = Scenario::parse(Path::new("x.toml"), &text).unwrap();
        assert_eq!(s.apiserver.history_events, Some(500));
        assert_eq!(
            s.phases[1].action,
            PhaseAction::Create {
                amount: Amount::Count(5)
            }
        );
        assert_eq!(s.phases[2].action.kind(), PhaseKind::Recreate);
        let bad = MINIMAL.replace("[objects]", "[apiserver]\nhistory_events = 0\n[objects]");
        assert!(error_of(&bad).contains("at `apiserver.history_events`"));
    }

    #[test]
    fn outage_flags_apply_to_mutating_phases_only() {
        let text = format!(
            "{MINIMAL}[[phase]]\nkind = \"update\"\ncount = 3\ndisconnect = true\ncompact = true\n"
        );
        let s = Scenario::parse(Path::new("x.toml"), &text).unwrap();
        assert!(s.phases[1].disconnect && s.phases[1].compact);
        assert!(!s.phases[0].disconnect);
        let bad = MINIMAL.replace("kind = \"list\"", "kind = \"list\"\ncompact = true");
        assert!(error_of(&bad).contains("at `phase[0].compact`"));
    }

    #[test]
    fn variant_settings_are_read_and_checked_against_each_other() {
        let with = with_variant_settings;
        let s = with(
            "implementation = \"kube-runtime\"\ninitial_sync = \"watch-list\"\n\
             projection = \"metadata\"\ntransform = [\"managed-fields\", \"metadata.labels\"]",
        )
        .unwrap();
        let c = &s.variants[0].config;
        assert_eq!(c.implementation, Implementation::KubeRuntime);
        assert_eq!(c.list_rules, ListRules::KubeRuntime);
        assert_eq!(c.transform.len(), 2);
        let error = |settings: &str| with(settings).unwrap_err().to_string();
        let e = error("implementation = \"kube-runtime\"\nstore = \"shared-array\"");
        assert!(
            e.contains("at `variant[0].store`") && e.contains("hint:"),
            "{e}"
        );
        let e = error("transform_initial_events = false");
        assert!(
            e.contains("at `variant[0].transform_initial_events`"),
            "{e}"
        );
        let e = error("transform = [\"managed-fields\", \"metadata.name\"]");
        assert!(e.contains("at `variant[0].transform[1]` (line 7)"), "{e}");
        let e = error("projection = \"metadata\"\ntransform = [\"spec.volumes\"]");
        assert!(e.contains("only `metadata`"), "{e}");
        let e = error("transform = [\"managedfields\"]");
        assert!(e.contains("a Pod has no field `managedfields`"), "{e}");
        let e = error("relist = \"sometimes\"");
        assert!(e.contains("variant") && e.contains("incremental"), "{e}");
        let cm = MINIMAL.replace("count = 10", "count = 10\nkind = \"ConfigMap\"");
        let e = Scenario::parse(
            Path::new("x.toml"),
            &cm.replace("name = \"a\"", "name = \"a\"\ntransform = [\"status\"]"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("a ConfigMap has no `status`"), "{e}");
        let data = cm.replace("name = \"a\"", "name = \"a\"\ntransform = [\"data\"]");
        let s = Scenario::parse(Path::new("x.toml"), &data).unwrap();
        assert_eq!(s.variants[0].config.transform[0].to_string(), "data");
    }

    #[test]
    fn queues_handlers_informers_and_resyncs_are_read_and_checked() {
        let with = with_variant_settings;
        let s = with(
            "handlers = 2\nhandler_cost = [\"0ms\", \"5ms\"]\ninformers = 3\nshared = true\n\
             resync_period = \"10h\"\nuid_aware = true",
        )
        .unwrap();
        let c = &s.variants[0].config;
        // Handlers need a queue: client-go's default one.
        assert_eq!(c.queue, Some(QueueKind::RealFifo));
        assert_eq!(c.handler_cost_ms, vec![0, 5]);
        assert_eq!(c.resync_period_ms, 36_000_000);
        assert_eq!((c.informer_processes(), c.handlers_per_informer()), (1, 6));
        assert_eq!(c.handler_cost(3), 5);
        let c = &with("queue = \"delta-fifo\"\ninformers = 4")
            .unwrap()
            .variants[0]
            .config;
        assert_eq!((c.informer_processes(), c.handlers_per_informer()), (4, 0));
        let error = |settings: &str| with(settings).unwrap_err().to_string();
        for (settings, expected) in [
            (
                "handlers = 3\nhandler_cost = [\"1ms\", \"2ms\"]",
                "at `variant[0].handler_cost` (line 8): 2 costs for 3 handlers",
            ),
            ("handler_cost = \"1ms\"", "set `handlers` too"),
            ("handlers = 1\nhandler_cost = \"soon\"", "is not a duration"),
            ("resync_period = \"1h\"", "at `variant[0].resync_period`"),
            (
                "implementation = \"kube-runtime\"\nhandlers = 1",
                "at `variant[0].handlers`",
            ),
            (
                "handlers = 1\nrelist = \"incremental\"",
                "at `variant[0].relist`",
            ),
            ("uid_aware = true", "at `variant[0].uid_aware`"),
            ("informers = 0", "at `variant[0].informers`"),
            ("watch_read_cost = \"2m\"", "at most 60s"),
            ("queue = \"lifo\"", "delta-fifo"),
        ] {
            let e = error(settings);
            assert!(e.contains(expected), "{settings}: {e}");
        }
    }

    #[test]
    fn resync_takes_no_amount_and_disconnect_needs_one() {
        let with = |phase: &str| {
            Scenario::parse(
                Path::new("x.toml"),
                &format!("{MINIMAL}\n[[phase]]\n{phase}\n"),
            )
        };
        let s = with("kind = \"disconnect\"\ncount = 3\ncompact = true").unwrap();
        assert_eq!(
            s.phases[1].action,
            PhaseAction::Disconnect {
                amount: Amount::Count(3)
            }
        );
        assert!(s.phases[1].compact);
        assert!(with("kind = \"disconnect\"").is_err());
        let e = with("kind = \"resync\"\ncount = 3")
            .unwrap_err()
            .to_string();
        assert!(e.contains("a `resync` phase takes no `count`"), "{e}");
        assert_eq!(
            with("kind = \"resync\"").unwrap().phases[1].action,
            PhaseAction::Resync
        );
    }

    #[test]
    fn relist_phases_take_no_amount_and_consistency_is_expected_unless_said() {
        let text = format!(
            "{MINIMAL}[[phase]]\nkind = \"relist\"\n[[phase]]\nkind = \"delete\"\ncount = 1\nexpect_consistent = false\n"
        );
        let s = Scenario::parse(Path::new("x.toml"), &text).unwrap();
        assert_eq!(s.phases[1].action, PhaseAction::Relist);
        assert!(s.phases[1].expect_consistent);
        assert!(!s.phases[2].expect_consistent);
        let bad = format!("{MINIMAL}[[phase]]\nkind = \"relist\"\ncount = 3\n");
        assert!(error_of(&bad).contains("a `relist` phase takes no `count`"));
        let bad = format!("{MINIMAL}[[phase]]\nkind = \"relist\"\ncompact = true\n");
        assert!(error_of(&bad).contains("always disconnects and compacts"));
    }

    #[test]
    fn the_gate_table_takes_metric_names_and_percentages() {
        let text = format!("{MINIMAL}[gate]\nlive_bytes = 2\nrss_bytes = 12.5\n");
        let scenario = Scenario::parse(Path::new("x.toml"), &text).unwrap();
        assert_eq!(
            scenario.gate.into_iter().collect::<Vec<_>>(),
            [(Metric::LiveBytes, 2.0), (Metric::RssBytes, 12.5)]
        );
        let e = error_of(&format!("{MINIMAL}[gate]\ncolour = 2\n"));
        assert!(e.contains("at `gate.colour` (line 10)"), "{e}");
        assert!(e.contains("alloc_count"), "{e}");
        let e = error_of(&format!("{MINIMAL}[gate]\nlive_bytes = -1\n"));
        assert!(e.contains("at `gate.live_bytes`"), "{e}");
        assert!(e.contains("0 or more"), "{e}");
        let e = error_of(&format!("{MINIMAL}[gate]\nlive_bytes = \"2%\"\n"));
        assert!(e.contains("gate.live_bytes"), "{e}");
    }

    #[test]
    fn settle_phases_take_durations_and_variants_allocator_settings() {
        let text = format!(
            "{MINIMAL}[[phase]]\nkind = \"settle\"\nidle = \"2m\"\ndecay = \"500ms\"\n\
             [[phase]]\nkind = \"settle\"\nname = \"purge\"\ndecay = \"purge\"\n"
        );
        let scenario = Scenario::parse(Path::new("x.toml"), &text).unwrap();
        assert_eq!(
            scenario.phases[1].action,
            PhaseAction::Settle {
                idle_ms: 120_000,
                decay: Decay::Wait { ms: 500 }
            }
        );
        assert_eq!(
            scenario.phases[2].action,
            PhaseAction::Settle {
                idle_ms: 0,
                decay: Decay::Purge
            }
        );
        let e = error_of(&format!(
            "{MINIMAL}[[phase]]\nkind = \"settle\"\ndecay = \"soon\"\n"
        ));
        assert!(
            e.contains("at `phase[1].decay`") && e.contains("not a duration"),
            "{e}"
        );
        let e = error_of(&format!(
            "{MINIMAL}[[phase]]\nkind = \"update\"\ncount = 1\nidle = \"1s\"\n"
        ));
        assert!(e.contains("an `update` phase takes no `idle`"), "{e}");
        let e = error_of(&format!(
            "{MINIMAL}[[phase]]\nkind = \"settle\"\ncount = 1\n"
        ));
        assert!(e.contains("takes no `count`"), "{e}");

        let allocator = "[[variant]]\nname = \"b\"\n[variant.allocator]\n";
        let text = format!(
            "{MINIMAL}{allocator}dirty_decay_ms = 0\nnarenas = 2\nbackground_thread = true\n"
        );
        let scenario = Scenario::parse(Path::new("x.toml"), &text).unwrap();
        let config = &scenario.variants[1].config.allocator;
        assert_eq!(
            config.malloc_conf().as_deref(),
            Some("dirty_decay_ms:0,narenas:2,background_thread:true")
        );
        assert_eq!(scenario.variants[0].config.allocator.malloc_conf(), None);
        let e = error_of(&format!("{MINIMAL}{allocator}dirty_decay_ms = -2\n"));
        assert!(
            e.contains("at `variant[1].allocator.dirty_decay_ms`"),
            "{e}"
        );
        let e = error_of(&format!("{MINIMAL}{allocator}lg_page = 16\n"));
        assert!(e.contains("lg_page"), "{e}");
    }

    #[test]
    fn duplicate_variant_names_are_rejected() {
        let text = format!("{MINIMAL}[[variant]]\nname = \"a\"\n");
        assert!(error_of(&text).contains("at `variant[1].name`"));
    }
}
