//! External variants: an informer in a program of its own (client-go in Go, the Node.js
//! client, a user's controller), started by the run against the built-in apiserver on
//! loopback and measured from outside (docs/subjects.md).
//!
//! A scenario that has one starts a program, so `run` shows its command and runs it only
//! when told to (`--allow-commands`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::error::{Problem, duration_ms};
use super::phase::{Phase, PhaseAction};
use super::raw::RawVariant;

/// The placeholders a command, its environment and the endpoints may use, each replaced
/// by the run before the subject starts.
pub const PLACEHOLDERS: [(&str, &str); 6] = [
    (
        "{kubeconfig}",
        "the path of a kubeconfig for the run's server",
    ),
    ("{server}", "the server's URL, http://127.0.0.1:PORT"),
    (
        "{namespace}",
        "the variant's namespace (several: comma-joined), else the first the objects are in",
    ),
    ("{resource}", "the resource's plural name, such as pods"),
    (
        "{api_version}",
        "the resource's group and version, such as v1, apps/v1 or example.com/v1alpha1",
    ),
    (
        "{listen}",
        "a free loopback address, 127.0.0.1:PORT, for the subject's endpoints",
    ),
];

/// How long a subject may take to sync, or to catch up in a phase, unless the scenario
/// says otherwise.
const DEFAULT_TIMEOUT_MS: u64 = 120_000;

/// How long a subject without the status protocol must be quiet before a phase ends,
/// unless the scenario says otherwise.
const DEFAULT_QUIET_MS: u64 = 2_000;

/// An informer in a program of its own, and how to read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subject {
    /// The program and its arguments, placeholders not yet replaced.
    pub command: Vec<String>,
    /// Environment variables set for it, over the run's own.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The URL of its status endpoint (the status protocol), if it serves one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The URL of its net/http/pprof handlers (`.../debug/pprof`), if it serves them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pprof: Option<String>,
    /// Without a status endpoint: how long the process must be quiet, once the server has
    /// sent everything, for a phase to end.
    pub quiet_ms: u64,
    /// How long it may take to connect, to sync, or to catch up in a phase.
    pub timeout_ms: u64,
}

impl Subject {
    /// The command with `values` in place of the placeholders.
    pub fn argv(&self, values: &Placeholders) -> Vec<String> {
        self.command.iter().map(|a| values.fill(a)).collect()
    }

    /// The command as one line, for a person to read before it runs.
    pub fn shown(&self) -> String {
        let mut line = String::new();
        for (name, value) in &self.env {
            line.push_str(&format!("{name}={} ", shell_word(value)));
        }
        let words: Vec<String> = self.command.iter().map(|w| shell_word(w)).collect();
        line.push_str(&words.join(" "));
        line
    }
}

/// A word as a POSIX shell would need it quoted.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@{}%".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// What the placeholders stand for in one run of a subject.
#[derive(Debug, Clone)]
pub struct Placeholders {
    /// `{kubeconfig}`.
    pub kubeconfig: String,
    /// `{server}`.
    pub server: String,
    /// `{namespace}`: the variant's `namespace`, several joined by commas (an operator's
    /// `WATCH_NAMESPACE`); without one, the namespace of the first object (against a real
    /// server, the run's).
    pub namespace: String,
    /// `{resource}`.
    pub resource: String,
    /// `{api_version}`.
    pub api_version: String,
    /// `{listen}`.
    pub listen: String,
    /// `{label_selector}`: the variant's `label_selector` ("" without).
    pub label_selector: String,
    /// `{field_selector}`: the variant's `field_selector` as the server holds the objects
    /// ("" without).
    pub field_selector: String,
}

impl Placeholders {
    /// `text` with every placeholder replaced.
    pub fn fill(&self, text: &str) -> String {
        text.replace("{kubeconfig}", &self.kubeconfig)
            .replace("{server}", &self.server)
            .replace("{namespace}", &self.namespace)
            .replace("{resource}", &self.resource)
            .replace("{api_version}", &self.api_version)
            .replace("{listen}", &self.listen)
            .replace("{label_selector}", &self.label_selector)
            .replace("{field_selector}", &self.field_selector)
    }
}

/// The first setting given of the built-in informers, which an external variant does not
/// take: its program takes its own in `command`.
fn builtin_only_key(raw: &RawVariant) -> Option<&'static str> {
    first_given([
        ("store", raw.store.is_some()),
        ("page_size", raw.page_size.is_some()),
        ("list_rules", raw.list_rules.is_some()),
        ("initial_sync", raw.initial_sync.is_some()),
        ("relist", raw.relist.is_some()),
        ("projection", raw.projection.is_some()),
        ("transform", !raw.transform.is_empty()),
        (
            "transform_initial_events",
            raw.transform_initial_events.is_some(),
        ),
        ("fault", raw.fault.is_some()),
        ("allocator", raw.allocator.is_some()),
        ("queue", raw.queue.is_some()),
        ("handlers", raw.handlers.is_some()),
        ("handler_cost", raw.handler_cost.is_some()),
        ("informers", raw.informers.is_some()),
        ("shared", raw.shared.is_some()),
        ("resync_period", raw.resync_period.is_some()),
        ("uid_aware", raw.uid_aware.is_some()),
        ("watch_read_cost", raw.watch_read_cost.is_some()),
        ("watchers", raw.watchers.is_some()),
        ("share_encodings", raw.share_encodings.is_some()),
    ])
}

/// The first key given that only an external variant takes.
fn external_only_key(raw: &RawVariant) -> Option<&'static str> {
    first_given([
        ("command", raw.command.is_some()),
        ("env", !raw.env.is_empty()),
        ("status", raw.status.is_some()),
        ("pprof", raw.pprof.is_some()),
        ("quiet", raw.quiet.is_some()),
        ("timeout", raw.timeout.is_some()),
    ])
}

/// The first key of `keys` that the file gives.
fn first_given<const N: usize>(keys: [(&'static str, bool); N]) -> Option<&'static str> {
    keys.into_iter()
        .find_map(|(key, given)| given.then_some(key))
}

/// Refuses the external keys on a built-in variant.
pub(super) fn refuse_on_builtin(i: usize, raw: &RawVariant) -> Result<(), Problem> {
    match external_only_key(raw) {
        None => Ok(()),
        Some(key) => Err(Problem::key(
            format!("variant[{i}].{key}"),
            format!("`{key}` is a setting of an external variant"),
        )
        .hint("add `implementation = \"external\"` to run a program of your own")),
    }
}

/// The subject of external variant `i`.
pub(super) fn subject_from_raw(i: usize, raw: &RawVariant) -> Result<Subject, Problem> {
    let key = |field: &str| format!("variant[{i}].{field}");
    if let Some(field) = builtin_only_key(raw) {
        return Err(Problem::key(
            key(field),
            format!("`{field}` is a setting of the built-in informers"),
        )
        .hint("an external variant's program takes its settings in `command`"));
    }
    let Some(command) = &raw.command else {
        return Err(Problem::key(
            key("command"),
            "an external variant needs a `command`",
        )
        .hint("the program and its arguments, such as [\"./my-controller\", \"--kubeconfig\", \"{kubeconfig}\"]"));
    };
    if command.as_ref().first().is_none_or(|p| p.trim().is_empty()) {
        return Err(Problem::at(
            key("command"),
            command.span(),
            "the command is empty: its first word is the program to run",
        ));
    }
    for name in raw.env.keys() {
        if name.is_empty() || name.contains('=') || name.contains('\0') {
            return Err(Problem::key(
                key("env"),
                format!("{name:?} is not an environment variable's name"),
            ));
        }
    }
    let span = |v: &Option<Spanned<String>>| v.as_ref().map(Spanned::span);
    for (field, given) in [
        ("namespace", raw.namespace.as_ref().map(Spanned::span)),
        ("label_selector", span(&raw.label_selector)),
        ("field_selector", span(&raw.field_selector)),
    ] {
        let placeholder = format!("{{{field}}}");
        let passed = command.as_ref().iter().any(|w| w.contains(&placeholder))
            || raw.env.values().any(|v| v.contains(&placeholder));
        if let Some(at) = given.filter(|_| !passed) {
            return Err(Problem::at(
                key(field),
                at,
                format!(
                    "the run checks the program's store against the objects `{field}` \
                     selects, but neither `command` nor `env` passes it to the program"
                ),
            )
            .hint(format!(
                "add {placeholder} to the program's arguments, such as \"--{}={placeholder}\"",
                field.replace('_', "-")
            )));
        }
    }
    let url = |v: &Option<Spanned<String>>, field: &str| -> Result<Option<String>, Problem> {
        let Some(v) = v else { return Ok(None) };
        if !v.as_ref().starts_with("http://") {
            return Err(Problem::at(
                key(field),
                v.span(),
                format!("{:?} is not an http:// URL", v.as_ref()),
            )
            .hint("such as \"http://{listen}/informer-mem/status\""));
        }
        Ok(Some(v.as_ref().trim_end_matches('/').to_owned()))
    };
    let ms = |v: &Option<Spanned<String>>, field: &str, default: u64| match v {
        None => Ok(default),
        Some(v) => duration_ms(v, &key(field)),
    };
    Ok(Subject {
        command: command.as_ref().clone(),
        env: raw.env.clone(),
        status: url(&raw.status, "status")?,
        pprof: url(&raw.pprof, "pprof")?,
        quiet_ms: ms(&raw.quiet, "quiet", DEFAULT_QUIET_MS)?,
        timeout_ms: ms(&raw.timeout, "timeout", DEFAULT_TIMEOUT_MS)?,
    })
}

/// Why a program on a real clock cannot take `phase`, if it cannot.
pub fn refusal(phase: &Phase) -> Option<&'static str> {
    if phase.churn.is_some() {
        return Some(
            "a churn's rate is kept in virtual time, which only the built-in informers share \
             with the server",
        );
    }
    match phase.action {
        PhaseAction::Resync => Some(
            "a resync is the informer's own timer: give the program its resync period in \
             `command`, and measure it with a `settle` phase that lasts a period",
        ),
        PhaseAction::Calibrate { .. } => {
            Some("a calibration allocates inside the run's own process, not the program's")
        }
        _ => None,
    }
}
