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
/// by the run before the subject starts; any other `{name}` is refused at load.
pub const PLACEHOLDERS: [(&str, &str); 10] = [
    (
        "{kubeconfig}",
        "the path of a kubeconfig for the run's server, with the run's token",
    ),
    (
        "{server}",
        "the server's URL, http://127.0.0.1:PORT/SECRET (the run's secret is its base path)",
    ),
    (
        "{token}",
        "the run's secret, for a bearer token to the server's bare address",
    ),
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
    (
        "{port}",
        "the port of {listen} alone, for a program that takes a port (--secure-port={port})",
    ),
    (
        "{label_selector}",
        "the variant's label_selector (\"\" without)",
    ),
    (
        "{field_selector}",
        "the variant's field_selector (\"\" without)",
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
    /// A bearer token sent with every request to `pprof` and `ready` (placeholders not
    /// yet replaced): a component's secure port asks for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pprof_token: Option<String>,
    /// The URL of its readiness endpoint (a component's `/readyz?verbose`), if it serves
    /// one: every phase waits until it answers 200, and a program that never does within
    /// `timeout` fails its variant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<String>,
    /// Resources (as kubectl names them: `persistentvolumes`,
    /// `poddisruptionbudgets.policy`; `*` for any) whose LIST or WATCH the server may
    /// refuse without failing the variant: the scenario knows the program cannot fill
    /// those caches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accept_refused: Vec<String>,
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

/// A word as a POSIX shell would need it quoted; one with a control character (a carriage
/// return or an escape code, which would redraw the line on a terminal) in `$'...'` with
/// each escaped, so the screen shows exactly what runs.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@{}%".contains(c));
    if plain {
        word.to_owned()
    } else if word.chars().any(hidden) {
        let mut quoted = "$'".to_owned();
        for c in word.chars() {
            match c {
                '\\' => quoted.push_str("\\\\"),
                '\'' => quoted.push_str("\\'"),
                '\n' => quoted.push_str("\\n"),
                '\r' => quoted.push_str("\\r"),
                '\t' => quoted.push_str("\\t"),
                c if hidden(c) => quoted.push_str(&format!("\\u{:04x}", u32::from(c))),
                c => quoted.push(c),
            }
        }
        quoted.push('\'');
        quoted
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Whether `c` does not show as itself on a terminal: a control character, or one that
/// reorders or hides the text around it (bidirectional overrides, zero-width marks).
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// What the placeholders stand for in one run of a subject.
#[derive(Debug, Clone)]
pub struct Placeholders {
    /// `{kubeconfig}`.
    pub kubeconfig: String,
    /// `{server}`.
    pub server: String,
    /// `{token}`: the run's secret, which the server asks of every request.
    pub token: String,
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
    /// `{port}`: `listen`'s port.
    pub port: String,
    /// `{label_selector}`: the variant's `label_selector` ("" without).
    pub label_selector: String,
    /// `{field_selector}`: the variant's `field_selector` as the server holds the objects
    /// ("" without).
    pub field_selector: String,
}

impl Placeholders {
    /// `text` with every placeholder replaced, in one pass: a value is never read again
    /// for placeholders of its own (a scratch path holding `{resource}` stays as it is).
    pub fn fill(&self, text: &str) -> String {
        let mut filled = String::with_capacity(text.len());
        let mut rest = text;
        while let Some((before, name, after)) = next_placeholder(rest) {
            filled.push_str(before);
            match self.value(name) {
                Some(value) => filled.push_str(value),
                None => filled.push_str(&rest[before.len()..rest.len() - after.len()]),
            }
            rest = after;
        }
        filled.push_str(rest);
        filled
    }

    fn value(&self, name: &str) -> Option<&str> {
        Some(match name {
            "kubeconfig" => &self.kubeconfig,
            "server" => &self.server,
            "token" => &self.token,
            "namespace" => &self.namespace,
            "resource" => &self.resource,
            "api_version" => &self.api_version,
            "listen" => &self.listen,
            "port" => &self.port,
            "label_selector" => &self.label_selector,
            "field_selector" => &self.field_selector,
            _ => return None,
        })
    }
}

/// The first `{name}` in `text` (a name of lowercase letters and `_`, as the
/// placeholders'): the text before it, the name, the text after it. Other braces (a JSON
/// argument, a Go template's `{{.x}}`) are not placeholders.
fn next_placeholder(text: &str) -> Option<(&str, &str, &str)> {
    let mut from = 0;
    while let Some(open) = text[from..].find('{').map(|at| from + at) {
        let name_len = text[open + 1..]
            .bytes()
            .take_while(|b| b.is_ascii_lowercase() || *b == b'_')
            .count();
        let close = open + 1 + name_len;
        if name_len > 0 && text[close..].starts_with('}') {
            return Some((&text[..open], &text[open + 1..close], &text[close + 1..]));
        }
        from = open + 1;
    }
    None
}

/// Why `text`, given at `key`, cannot be passed to a program, if it cannot: a NUL (which
/// no argument, variable or URL can hold, and which would cut it short unseen), or a
/// placeholder the run does not know (a typo would reach the program as it is).
fn unpassable(text: &str) -> Option<String> {
    if text.contains('\0') {
        return Some("it holds a NUL character, which no argument or variable can".to_owned());
    }
    let mut rest = text;
    while let Some((_, name, after)) = next_placeholder(rest) {
        let known = PLACEHOLDERS.iter().any(|(p, _)| p[1..p.len() - 1] == *name);
        if !known {
            return Some(format!("{{{name}}} is not a placeholder"));
        }
        rest = after;
    }
    None
}

/// The first of the subject's texts that cannot be passed to its program, named by key.
fn refuse_unpassable(i: usize, raw: &RawVariant, command: &[String]) -> Result<(), Problem> {
    for name in raw.env.keys() {
        if name.is_empty() || name.contains('=') || name.chars().any(hidden) {
            return Err(Problem::key(
                format!("variant[{i}].env"),
                format!("{name:?} is not an environment variable's name"),
            ));
        }
    }
    let words = command
        .iter()
        .enumerate()
        .map(|(n, word)| (format!("variant[{i}].command[{n}]"), word.as_str()));
    let env = raw.env.iter().flat_map(|(name, value)| {
        [
            (format!("variant[{i}].env"), name.as_str()),
            (format!("variant[{i}].env.{name}"), value.as_str()),
        ]
    });
    let urls = [
        ("status", &raw.status),
        ("pprof", &raw.pprof),
        ("pprof_token", &raw.pprof_token),
        ("ready", &raw.ready),
    ]
    .into_iter()
    .filter_map(|(field, url)| {
        Some((
            format!("variant[{i}].{field}"),
            url.as_ref()?.as_ref().as_str(),
        ))
    });
    for (key, text) in words.chain(env).chain(urls) {
        if let Some(why) = unpassable(text) {
            let known: Vec<&str> = PLACEHOLDERS.iter().map(|(p, _)| *p).collect();
            return Err(
                Problem::key(key, why).hint(format!("the placeholders are {}", known.join(", ")))
            );
        }
    }
    Ok(())
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
        ("pprof_token", raw.pprof_token.is_some()),
        ("ready", raw.ready.is_some()),
        ("accept_refused", raw.accept_refused.is_some()),
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
    refuse_unpassable(i, raw, command.as_ref())?;
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
        if !["http://", "https://"]
            .iter()
            .any(|s| v.as_ref().starts_with(s))
        {
            return Err(Problem::at(
                key(field),
                v.span(),
                format!("{:?} is not an http:// or https:// URL", v.as_ref()),
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
        pprof_token: raw.pprof_token.as_ref().map(|t| t.as_ref().clone()),
        ready: url(&raw.ready, "ready")?,
        accept_refused: accepted_refusals(&raw.accept_refused, &key("accept_refused"))?,
    })
}

/// `accept_refused`: resources as kubectl names them (`pods`, `deployments.apps`), or `*`.
fn accepted_refusals(
    given: &Option<Spanned<Vec<String>>>,
    key: &str,
) -> Result<Vec<String>, Problem> {
    let Some(given) = given else {
        return Ok(Vec::new());
    };
    let named = |name: &str| {
        name == "*"
            || (!name.is_empty()
                && name
                    .split('.')
                    .all(|part| !part.is_empty() && part.bytes().all(resource_byte)))
    };
    match given.as_ref().iter().find(|name| !named(name)) {
        Some(wrong) => Err(Problem::at(
            key,
            given.span(),
            format!("{wrong:?} is not a resource's name"),
        )
        .hint("a resource as kubectl names it, such as \"persistentvolumes\" or \"poddisruptionbudgets.policy\", or \"*\" for any")),
        None => Ok(given.as_ref().clone()),
    }
}

fn resource_byte(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'
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
