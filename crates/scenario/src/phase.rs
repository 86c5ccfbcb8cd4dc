//! `[[phase]]`: the steps every variant goes through, their kinds and parameters, and
//! their validation. A new phase kind is added here (its kind, action and checks), in
//! `raw.rs` if it takes new keys, and in the runner's phase driver.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::MAX_OBJECTS;
use super::error::{Problem, duration_ms, int_in};
use super::raw::RawPhase;
use k8s::LabelSelector;

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
    /// Delete pods as a cluster does (`delete` and `recreate` of Pods): each deleted pod
    /// goes through the MODIFIED events of a graceful deletion before its DELETED one
    /// (the controller's DELETE, the kubelet's terminal status, the kubelet's DELETE with
    /// no grace period), where a plain deletion sends only the DELETED.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub graceful: bool,
    /// Whether the store must match the server when the phase ends; `false` for a
    /// scenario that shows an inconsistency on purpose.
    pub expect_consistent: bool,
    /// Updates the server makes at a steady rate while the phase runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub churn: Option<Churn>,
}

impl Phase {
    /// Whether the phase cuts the informer's watches before its changes: a `disconnect`,
    /// or an action whose informer is away meanwhile (`disconnect`, `relist`).
    pub fn cuts_watches(&self) -> bool {
        self.disconnect
            || matches!(
                self.action,
                PhaseAction::Disconnect { .. } | PhaseAction::Relist
            )
    }
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
    /// Create `amount` new objects (a fraction is of the live objects, a count exact).
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
    /// A fraction in (0, 1] of the objects alive when the phase starts, rounded to nearest,
    /// and at least one when any is alive: a phase asked to change some objects changes
    /// some, at every scale of a sweep.
    Fraction(f64),
    /// An exact number, capped at the objects alive.
    Count(u64),
}

impl Amount {
    /// The number of objects this amount selects out of `alive`.
    pub fn of(self, alive: u64) -> u64 {
        match self {
            // 0 < f <= 1, so the product lies in [0, alive]; counts stay far below 2^53.
            Amount::Fraction(f) => (((alive as f64) * f).round() as u64).clamp(alive.min(1), alive),
            Amount::Count(n) => n.min(alive),
        }
    }

    /// The number of new objects a create of this amount makes beside `alive` live ones:
    /// a fraction is of them, a count is exact (a create fills an empty cluster too).
    pub fn created(self, alive: u64) -> u64 {
        match self {
            Amount::Fraction(_) => self.of(alive),
            Amount::Count(n) => n,
        }
    }
}

pub(super) fn phases_from_raw(raw: Vec<RawPhase>) -> Result<Vec<Phase>, Problem> {
    if raw.is_empty() {
        return Err(Problem::whole("no `[[phase]]`: nothing to run")
            .hint("start with `[[phase]]` `kind = \"list\"`, the informer's initial sync"));
    }
    let mut phases: Vec<Phase> = Vec::with_capacity(raw.len());
    let mut names: HashMap<String, std::ops::Range<usize>> = HashMap::with_capacity(raw.len());
    for (i, p) in raw.into_iter().enumerate() {
        let phase = phase_from_raw(i, p, &names)?;
        names.insert(phase.0.name.clone(), phase.1);
        phases.push(phase.0);
    }
    Ok(phases)
}

/// One phase, checked on its own and against the names of the phases before it; returns
/// it with where its name is written.
fn phase_from_raw(
    i: usize,
    p: RawPhase,
    names: &HashMap<String, std::ops::Range<usize>>,
) -> Result<(Phase, std::ops::Range<usize>), Problem> {
    let kind = *p.kind.as_ref();
    let key = |field: &str| format!("phase[{i}].{field}");
    check_order(i, &p)?;
    check_keys_of_kind(i, &p)?;
    let action = action_from_raw(i, &p)?;
    let selector = selector_from_raw(i, &p)?;
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
    let disconnect = flag_from_raw(i, kind, &p.disconnect, "disconnect")?;
    let compact = flag_from_raw(i, kind, &p.compact, "compact")?;
    let graceful = match &p.graceful {
        Some(v) if *v.as_ref() && !matches!(kind, PhaseKind::Delete | PhaseKind::Recreate) => {
            return Err(Problem::at(
                key("graceful"),
                v.span(),
                format!("{} phase takes no `graceful`", kind.a()),
            )
            .hint("`graceful` belongs to a `delete` or `recreate` phase of Pods"));
        }
        Some(v) => *v.as_ref(),
        None => false,
    };
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
    let phase = Phase {
        name,
        action,
        selector,
        disconnect,
        compact,
        graceful,
        expect_consistent: p.expect_consistent.unwrap_or(true),
        churn,
    };
    Ok((phase, name_span))
}

/// `list` comes first, and only first.
fn check_order(i: usize, p: &RawPhase) -> Result<(), Problem> {
    let kind = *p.kind.as_ref();
    if (i == 0) == (kind == PhaseKind::List) {
        return Ok(());
    }
    let message = if i == 0 {
        format!("the first phase is `{}`, not `list`", kind.as_str())
    } else {
        "`list` can only be the first phase".to_owned()
    };
    Err(
        Problem::at(format!("phase[{i}].kind"), p.kind.span(), message)
            .hint("the first phase is the informer's initial sync, `kind = \"list\"`"),
    )
}

/// Refuses the keys that belong to other kinds of phase.
fn check_keys_of_kind(i: usize, p: &RawPhase) -> Result<(), Problem> {
    let kind = *p.kind.as_ref();
    let key = |field: &str| format!("phase[{i}].{field}");
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
    let owned = [
        (
            PhaseKind::Settle,
            "`idle` and `decay` belong to a `settle` phase",
        ),
        (
            PhaseKind::Calibrate,
            "`bytes` and `blocks` belong to a `calibrate` phase",
        ),
    ];
    let fields = [
        [
            ("idle", p.idle.as_ref().map(Spanned::span)),
            ("decay", p.decay.as_ref().map(Spanned::span)),
        ],
        [
            ("bytes", p.bytes.as_ref().map(Spanned::span)),
            ("blocks", p.blocks.as_ref().map(Spanned::span)),
        ],
    ];
    for ((owner, hint), fields) in owned.into_iter().zip(fields) {
        for (field, span) in fields {
            if let Some(span) = span
                && kind != owner
            {
                return Err(Problem::at(
                    key(field),
                    span,
                    format!("{} phase takes no `{field}`", kind.a()),
                )
                .hint(hint));
            }
        }
    }
    Ok(())
}

/// What the phase does, with its parameters.
fn action_from_raw(i: usize, p: &RawPhase) -> Result<PhaseAction, Problem> {
    let key = |field: &str| format!("phase[{i}].{field}");
    Ok(match *p.kind.as_ref() {
        PhaseKind::List => PhaseAction::List,
        PhaseKind::Relist => PhaseAction::Relist,
        PhaseKind::Resync => PhaseAction::Resync,
        PhaseKind::Disconnect => PhaseAction::Disconnect {
            amount: amount_from_raw(p, i)?,
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
        PhaseKind::Calibrate => calibrate_from_raw(p, i)?,
        PhaseKind::Update => PhaseAction::Update {
            amount: amount_from_raw(p, i)?,
        },
        PhaseKind::Delete => PhaseAction::Delete {
            amount: amount_from_raw(p, i)?,
        },
        PhaseKind::Create => PhaseAction::Create {
            amount: amount_from_raw(p, i)?,
        },
        PhaseKind::Recreate => PhaseAction::Recreate {
            amount: amount_from_raw(p, i)?,
        },
    })
}

/// `disconnect` or `compact`: only phases that change objects take them.
fn flag_from_raw(
    i: usize,
    kind: PhaseKind,
    value: &Option<Spanned<bool>>,
    field: &str,
) -> Result<bool, Problem> {
    match value {
        Some(v) if kind.changes_nothing() && *v.as_ref() => Err(Problem::at(
            format!("phase[{i}].{field}"),
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
}

/// Which objects the phase picks from: only updates, deletes and recreates take one.
fn selector_from_raw(i: usize, p: &RawPhase) -> Result<LabelSelector, Problem> {
    let kind = *p.kind.as_ref();
    let key = || format!("phase[{i}].selector");
    match &p.selector {
        None => Ok(LabelSelector::default()),
        Some(s)
            if !matches!(
                kind,
                PhaseKind::Update | PhaseKind::Delete | PhaseKind::Recreate | PhaseKind::Disconnect
            ) =>
        {
            Err(Problem::at(
                key(),
                s.span(),
                format!("{} phase takes no `selector`", kind.a()),
            )
            .hint("`selector` picks the objects of an update, delete or recreate phase"))
        }
        Some(s) => LabelSelector::parse(s.as_ref()).map_err(|why| {
            Problem::at(key(), s.span(), format!("invalid label selector: {why}"))
                .hint("write it as for kubectl -l: `app=web`, `tier in (a,b)`, `!canary`")
        }),
    }
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

pub(super) fn amount_from_raw(p: &RawPhase, i: usize) -> Result<Amount, Problem> {
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
