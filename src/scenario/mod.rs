//! Scenario files: what to generate, which informer variants to compare, which phases to
//! drive. Feeds the runner.
//!
//! Loading is two steps, as ripgrep does with its flags: serde reads the TOML into the
//! structs of [`raw`] (unknown keys rejected), then [`Scenario::from_raw`] checks the rules
//! serde cannot express and produces the validated [`Scenario`] the rest of the crate sees.
//! Every rejection names the file, the key path and, where known, the line.

mod raw;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::apiserver::selector::LabelSelector;
use raw::{RawObjects, RawPhase, RawScenario, RawVariant};

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

    /// The kind for a plural resource name.
    pub fn from_plural(plural: &str) -> Option<ObjectKind> {
        ObjectKind::ALL.into_iter().find(|k| k.plural() == plural)
    }
}

/// One informer configuration under test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Variant {
    /// Label in tables and reports.
    pub name: String,
    /// Every setting of the variant, defaults included; echoed into the report.
    pub config: VariantConfig,
}

/// The settings of an informer variant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VariantConfig {
    /// How the store holds the objects of a LIST.
    pub store: StoreMode,
    /// LIST page size (`limit`); 0 lists everything in one response.
    pub page_size: u32,
}

/// How the store holds the objects it got from a LIST.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StoreMode {
    /// client-go before v1.28: store entries point into the LIST's one backing array
    /// (`&list.Items[i]`), which stays alive while any entry refers to it
    /// (kubernetes issue 111370).
    SharedArray,
    /// client-go v1.28 and later (`ExtractListWithAlloc`, kubernetes PR 113362): every item
    /// is copied into an allocation of its own.
    #[default]
    PerItemCopy,
}

impl StoreMode {
    /// The mode's name as written in scenario files.
    pub fn as_str(self) -> &'static str {
        match self {
            StoreMode::SharedArray => "shared-array",
            StoreMode::PerItemCopy => "per-item-copy",
        }
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
}

impl PhaseKind {
    /// The kind's name as written in scenario files.
    pub fn as_str(self) -> &'static str {
        match self {
            PhaseKind::List => "list",
            PhaseKind::Update => "update",
            PhaseKind::Delete => "delete",
            PhaseKind::Create => "create",
            PhaseKind::Recreate => "recreate",
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
    /// The file could not be read.
    #[error("failed to read `{}`: {source}", file.display())]
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
        let text = std::fs::read_to_string(file).map_err(|source| ScenarioError::Read {
            file: file.to_owned(),
            source,
        })?;
        Scenario::parse(file, &text)
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
        let variants = raw
            .variant
            .into_iter()
            .enumerate()
            .map(|(i, v)| variant_from_raw(i, v))
            .collect::<Result<Vec<_>, _>>()?;
        for (i, v) in variants.iter().enumerate() {
            if variants[..i].iter().any(|w| w.name == v.name) {
                return Err(Problem::key(
                    format!("variant[{i}].name"),
                    format!("variant name {:?} is used twice", v.name),
                ));
            }
        }
        let phases = phases_from_raw(raw.phase)?;
        let apiserver = ApiServerSpec {
            history_events: match &raw.apiserver.history_events {
                None => None,
                Some(v) => Some(int_in(v, "apiserver.history_events", 1, 1 << 40)?),
            },
        };
        Ok(Scenario {
            name,
            description: raw.description,
            file: file.to_owned(),
            objects,
            apiserver,
            variants,
            phases,
        })
    }
}

fn parse_raw(text: &str) -> Result<RawScenario, Problem> {
    let deserializer = toml::Deserializer::parse(text).map_err(|e| Problem {
        key: None,
        span: e.span(),
        message: e.message().trim_end().to_owned(),
        hint: None,
    })?;
    serde_path_to_error::deserialize(deserializer).map_err(|e| {
        let key = e.path().to_string();
        let inner = e.into_inner();
        Problem {
            key: (key != ".").then_some(key),
            span: inner.span(),
            message: inner.message().trim_end().to_owned(),
            hint: None,
        }
    })
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
    })
}

fn variant_from_raw(i: usize, raw: RawVariant) -> Result<Variant, Problem> {
    if raw.name.as_ref().trim().is_empty() {
        return Err(Problem::at(
            format!("variant[{i}].name"),
            raw.name.span(),
            "variant name is empty",
        ));
    }
    let page_size = match &raw.page_size {
        None => 0,
        Some(v) => int_in(
            v,
            &format!("variant[{i}].page_size"),
            0,
            u64::from(u32::MAX),
        )? as u32,
    };
    Ok(Variant {
        name: raw.name.into_inner(),
        config: VariantConfig {
            store: raw.store,
            page_size,
        },
    })
}

fn phases_from_raw(raw: Vec<RawPhase>) -> Result<Vec<Phase>, Problem> {
    if raw.is_empty() {
        return Err(Problem::whole("no `[[phase]]`: nothing to run")
            .hint("start with `[[phase]]` `kind = \"list\"`, the informer's initial sync"));
    }
    let mut phases: Vec<Phase> = Vec::with_capacity(raw.len());
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
        let action = match kind {
            PhaseKind::List => {
                if let Some(extra) = p
                    .fraction
                    .as_ref()
                    .map(|f| ("fraction", f.span()))
                    .or(p.count.as_ref().map(|c| ("count", c.span())))
                {
                    return Err(Problem::at(
                        key(extra.0),
                        extra.1,
                        format!("a `list` phase takes no `{}`", extra.0),
                    ));
                }
                PhaseAction::List
            }
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
                Some(v) if kind == PhaseKind::List && *v.as_ref() => Err(Problem::at(
                    key(field),
                    v.span(),
                    format!("a `list` phase takes no `{field}`"),
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
                    PhaseKind::Update | PhaseKind::Delete | PhaseKind::Recreate
                ) =>
            {
                return Err(Problem::at(
                    key("selector"),
                    s.span(),
                    format!("a `{}` phase takes no `selector`", kind.as_str()),
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
        let disconnect = flag(&p.disconnect, "disconnect")?;
        let compact = flag(&p.compact, "compact")?;
        let name = match p.name {
            Some(name) if name.as_ref().trim().is_empty() => {
                return Err(Problem::at(key("name"), name.span(), "phase name is empty"));
            }
            Some(name) => name.into_inner(),
            None => kind.as_str().to_owned(),
        };
        if phases.iter().any(|q| q.name == name) {
            return Err(
                Problem::key(key("name"), format!("phase name {name:?} is used twice"))
                    .hint("give one of the phases a `name` of its own"),
            );
        }
        phases.push(Phase {
            name,
            action,
            selector,
            disconnect,
            compact,
        });
    }
    Ok(phases)
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
            format!(
                "a `{}` phase needs `fraction` or `count`",
                p.kind.as_ref().as_str()
            ),
        )
        .hint("e.g. `fraction = 0.5` for half of the live objects, or `count = 100`")),
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
        }
    }

    fn key(key: impl Into<String>, message: impl Into<String>) -> Self {
        Problem {
            key: Some(key.into()),
            span: None,
            message: message.into(),
            hint: None,
        }
    }

    fn whole(message: impl Into<String>) -> Self {
        Problem {
            key: None,
            span: None,
            message: message.into(),
            hint: None,
        }
    }

    fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    fn into_error(self, file: &Path, text: &str) -> ScenarioError {
        let line = self.span.map(|span| {
            let start = span.start.min(text.len());
            text.as_bytes()[..start]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1
        });
        ScenarioError::Invalid(Box::new(Invalid {
            file: file.to_owned(),
            key: self.key,
            line,
            message: self.message,
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
        assert_eq!(s.variants[0].config.store, StoreMode::PerItemCopy);
        assert_eq!(s.variants[0].config.page_size, 0);
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
    fn duplicate_variant_names_are_rejected() {
        let text = format!("{MINIMAL}[[variant]]\nname = \"a\"\n");
        assert!(error_of(&text).contains("at `variant[1].name`"));
    }
}
