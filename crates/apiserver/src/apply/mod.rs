//! Server-side apply (`PATCH` with `application/apply-patch+yaml`): a manager's
//! configuration merged into the live object along the kind's schema, with what each
//! manager owns tracked in `metadata.managedFields`, as kube-apiserver v1.37 does it
//! (structured-merge-diff's `merge.Updater.Apply`, under k8s.io/apiserver's field
//! manager).
//!
//! An apply makes the applier own exactly the fields its configuration sets. A field
//! another manager owns with a different value is a conflict (409, each field and
//! manager named) unless `force=true`, which takes it from them. A field the applier
//! set last time and leaves out now is removed from the object when no other manager
//! owns it. Fields whose values the apply changed, or removed, are taken from the other
//! managers that owned them. The shapes come from kube-apiserver's OpenAPI schemas
//! ([`schema`]); a custom resource's, which this server has no schema of, are deduced
//! from its values (maps merge by key, lists are replaced whole).

mod schema;
mod set;
mod walk;

use serde_json::{Value, json};

use k8s::names::{MAX_ANNOTATIONS_BYTES, annotations_size};
use scenario::{LAST_APPLIED_ANNOTATION, ObjectKind};
pub use schema::Shape;
use set::{FieldSet, path_string};
use walk::{Reading, compare, field_set, merge, remove};

/// Who writes: the manager (`fieldManager`), and the subresource it writes through
/// (`status`; `None`: the object's own path).
#[derive(Debug, Clone, Copy)]
pub struct Writer<'a> {
    pub manager: &'a str,
    pub subresource: Option<&'a str>,
}

/// What an apply made: the object (without managedFields) and its managedFields entries.
#[derive(Debug)]
pub struct Applied {
    pub object: Value,
    pub managed_fields: Vec<Value>,
}

/// Why an apply stored nothing.
#[derive(Debug, PartialEq, Eq)]
pub enum ApplyError {
    /// The configuration is not one of the kind (400).
    BadRequest(String),
    /// The configuration does not fit the kind's schema: a field it does not declare, a
    /// list element without its keys or given twice (kube-apiserver's 500, "failed to
    /// create typed patch object").
    Typed(String),
    /// Fields other managers own with other values (409): the message, and each
    /// conflict's manager and field.
    Conflict {
        message: String,
        causes: Vec<(String, String)>,
    },
}

/// The fields kube-apiserver never records as owned (k8s.io/apiserver's `stripMeta`).
const STRIPPED: [&[&str]; 12] = [
    &["f:apiVersion"],
    &["f:kind"],
    &["f:metadata"],
    &["f:metadata", "f:name"],
    &["f:metadata", "f:namespace"],
    &["f:metadata", "f:creationTimestamp"],
    &["f:metadata", "f:selfLink"],
    &["f:metadata", "f:uid"],
    &["f:metadata", "f:clusterName"],
    &["f:metadata", "f:generation"],
    MANAGED_FIELDS,
    &["f:metadata", "f:resourceVersion"],
];

/// `metadata.managedFields`, the record of ownership.
const MANAGED_FIELDS: &[&str] = &["f:metadata", "f:managedFields"];

/// The fields an endpoint resets, which nobody owns through it (a strategy's
/// `GetResetFields`): the status through the object's path (and its scale's) of a kind
/// with a status subresource, and the spec (with the deletion timestamp and owner
/// references) through the status's.
fn ignored(has_status: bool, subresource: Option<&str>) -> FieldSet {
    let paths: &[&[&str]] = match subresource {
        Some("status") => &[
            &["f:spec"],
            &["f:metadata", "f:deletionTimestamp"],
            &["f:metadata", "f:ownerReferences"],
        ],
        _ if has_status => &[&["f:status"]],
        _ => &[],
    };
    set_of(paths)
}

/// What an update's ownership reads of the type it writes: a scenario's kind, or a type
/// the server keeps beside it (a Lease, an Event: `apiserver::records`).
#[derive(Debug, Clone, Copy)]
pub struct Typed<'a> {
    /// The root of its schema.
    pub shape: Shape,
    /// The version its managedFields entries name (the version written through).
    pub api_version: &'a str,
    pub kind: &'a str,
    /// Whether it has a status subresource, whose fields its own path resets.
    pub has_status: bool,
    /// Whether Go has a type for it (a custom resource has none).
    pub go_type: bool,
}

impl Typed<'_> {
    /// A scenario's kind.
    pub fn of(kind: ObjectKind) -> Typed<'static> {
        Typed {
            shape: Shape::of(kind),
            api_version: kind.api_version(),
            kind: kind.as_str(),
            has_status: kind.has_status(),
            go_type: crate::protobuf::serves(kind),
        }
    }

    /// Its empty object, with the fields Go writes at their zero (`{}` without a Go
    /// type): what a create is compared with.
    fn zero(&self) -> Value {
        match self.go_type {
            true => crate::protobuf::go_zero_object(self.api_version, self.kind)
                .unwrap_or_else(|_| json!({})),
            false => json!({}),
        }
    }
}

/// The set of `paths`.
fn set_of(paths: &[&[&str]]) -> FieldSet {
    let mut set = FieldSet::default();
    for path in paths {
        set.insert(&owned(path));
    }
    set
}

fn owned(path: &[&str]) -> Vec<String> {
    path.iter().map(|e| (*e).to_owned()).collect()
}

/// One managedFields entry, read (or the writer's, being made).
#[derive(Debug, Clone)]
struct Manager {
    entry: Value,
    set: FieldSet,
}

impl Manager {
    /// A new entry of `writer` for `operation` (`Apply`, `Update`) through `api_version`,
    /// owning `set`.
    fn new(api_version: &str, writer: Writer<'_>, operation: &str, set: FieldSet) -> Manager {
        let mut entry = json!({
            "manager": writer.manager,
            "operation": operation,
            "apiVersion": api_version,
            "fieldsType": "FieldsV1",
        });
        if let Some(subresource) = writer.subresource {
            entry["subresource"] = json!(subresource);
        }
        Manager { entry, set }
    }

    /// Who the entry is: its manager, operation, subresource and (for an update) API
    /// version, as kube-apiserver's manager identifier.
    fn identity(&self) -> (String, String, String, String) {
        let text = |field: &str| self.entry[field].as_str().unwrap_or_default().to_owned();
        let version = match self.entry["operation"] == "Apply" {
            true => String::new(),
            false => text("apiVersion"),
        };
        (
            text("manager"),
            text("operation"),
            text("subresource"),
            version,
        )
    }

    /// The manager as a conflict names it: `"kubectl-create" using v1`.
    fn named(&self) -> String {
        let mut name = format!("{:?}", self.entry["manager"].as_str().unwrap_or_default());
        if let Some(subresource) = self.entry["subresource"].as_str() {
            name.push_str(&format!(" with subresource {subresource:?}"));
        }
        if self.entry["operation"] == "Update" {
            let version = self.entry["apiVersion"].as_str().unwrap_or_default();
            name.push_str(&format!(" using {version}"));
        }
        name
    }
}

/// `config` applied to `live` (`None`: the object does not exist, and the apply creates
/// it) by `applier`, at `now`; `force` takes the fields it conflicts on.
///
/// kubectl's own apply (manager `kubectl`) moves an object from client-side apply as
/// kube-apiserver moves it: a conflict on a field whose value is still what the
/// last-applied annotation says is no conflict, and the annotation, where there is one,
/// is rewritten to the configuration just applied.
pub fn apply(
    typed: &Typed<'_>,
    live: Option<&Value>,
    config: &Value,
    (applier, force): (Writer<'_>, bool),
    now: &Value,
) -> Result<Applied, ApplyError> {
    let kubectl = applier.manager == KUBECTL;
    let result = match applied(typed, live, config, (applier, force), now) {
        Err(Refusal::Conflicts(conflicts)) if kubectl => {
            let allowed = live.and_then(|live| agreed_with_last_applied(typed, live));
            let left: Vec<_> = conflicts
                .into_iter()
                .filter(|(_, path)| !allowed.as_ref().is_some_and(|a| a.has(path)))
                .collect();
            match left.is_empty() {
                true => applied(typed, live, config, (applier, true), now),
                false => Err(Refusal::Conflicts(left)),
            }
        }
        other => other,
    };
    let mut applied = result.map_err(|refusal| match refusal {
        Refusal::Invalid(error) => error,
        Refusal::Conflicts(conflicts) => conflict(conflicts),
    })?;
    if kubectl {
        sync_last_applied(&mut applied.object, config);
    }
    Ok(applied)
}

/// The manager `kubectl apply --server-side` applies as, whose apply keeps the
/// client-side apply annotation in step.
const KUBECTL: &str = "kubectl";

/// Why [`applied`] stored nothing: the configuration, or conflicts (each manager and the
/// path it owns).
enum Refusal {
    Invalid(ApplyError),
    Conflicts(Vec<(Manager, Vec<String>)>),
}

impl From<ApplyError> for Refusal {
    fn from(error: ApplyError) -> Refusal {
        Refusal::Invalid(error)
    }
}

/// [`apply`] as structured-merge-diff's `Updater.Apply` does it.
fn applied(
    typed: &Typed<'_>,
    live: Option<&Value>,
    config: &Value,
    (applier, force): (Writer<'_>, bool),
    now: &Value,
) -> Result<Applied, Refusal> {
    check_config(typed, config)?;
    let shape = typed.shape;
    let config_set = field_set(config, shape, Reading::Config).map_err(ApplyError::Typed)?;
    let mut managers = live.map_or_else(Vec::new, read_managers);
    let live = live.map_or_else(|| json!({}), without_managed_fields);
    let ignored = ignored(typed.has_status, applier.subresource);

    let set = config_set.recursive_difference(&ignored);
    let mut applied = Manager::new(typed.api_version, applier, "Apply", set);
    let identity = applied.identity();
    let last = match managers.iter().position(|m| m.identity() == identity) {
        Some(at) => {
            // The entry keeps its time unless this apply changes the object.
            if let Some(time) = managers[at].entry.get("time") {
                applied.entry["time"] = time.clone();
            }
            Some(std::mem::replace(&mut managers[at], applied).set)
        }
        None => {
            managers.push(applied);
            None
        }
    };
    let merged = merge(&live, config, shape);
    let merged = match last {
        Some(last) if !last.is_empty() => pruned(merged, &managers, &last, shape),
        _ => merged,
    };

    // What the apply changed is taken from the managers that owned it; a field another
    // manager owns that the apply set to another value is theirs unless forced.
    let (set_now, removed) = changes(&live, &merged, shape, &ignored);
    let mut conflicts = Vec::new();
    for manager in managers.iter_mut().filter(|m| m.identity() != identity) {
        let lost = manager.set.intersection(&set_now);
        if !lost.is_empty() {
            conflicts.extend(lost.paths().into_iter().map(|p| (manager.clone(), p)));
            manager.set = manager.set.difference(&lost);
        }
        manager.set = manager.set.difference(&removed);
    }
    if !conflicts.is_empty() && !force {
        return Err(Refusal::Conflicts(conflicts));
    }

    // The applier's entry is dated when the apply changed the object (a manager that
    // applies what is there already gets an entry without a time, as there).
    let changed = merged != live;
    let managed_fields = entries(managers, |m| changed && m.identity() == identity, now);
    Ok(Applied {
        object: merged,
        managed_fields,
    })
}

/// The managedFields of an update (a create, replace or patch that is not an apply) by
/// `updater` from `live` (`None`: a create) to `new`: the updater's entry owns what it
/// changed and what it owned before and did not remove; the other managers lose what it
/// changed or removed. Nothing changed, nothing moves. The entries are the live
/// object's, or those `new` carries when it was written to the object's path with
/// entries of its own, as kube-apiserver takes them; an object without entries gets
/// none from an update.
pub fn update(
    kind: ObjectKind,
    live: Option<&Value>,
    new: &Value,
    updater: Writer<'_>,
    now: &Value,
) -> Vec<Value> {
    update_of(&Typed::of(kind), live, new, updater, now)
}

/// [`update`] of an object of the type `typed` describes.
pub fn update_of(
    typed: &Typed<'_>,
    live: Option<&Value>,
    new: &Value,
    updater: Writer<'_>,
    now: &Value,
) -> Vec<Value> {
    let shape = typed.shape;
    // The entries a write to the object's path sends are taken as they are (kubectl's
    // move from client-side to server-side apply rewrites them so; `[{}]` empties them);
    // else the live object's are kept.
    let sent = new["metadata"]["managedFields"]
        .as_array()
        .filter(|entries| !entries.is_empty() && updater.subresource.is_none());
    let mut managers = match (sent, live) {
        (Some(entries), _) if entries.len() == 1 && entries[0] == json!({}) => Vec::new(),
        (Some(_), _) => read_managers(new),
        (None, Some(live)) => read_managers(live),
        (None, None) => Vec::new(),
    };
    if live.is_some() && managers.is_empty() {
        // An object nobody has been tracked on stays untracked by updates
        // (kube-apiserver's `skipNonAppliedManager`).
        return Vec::new();
    }
    // A create compares with the kind's empty object as Go writes it, whose structs are
    // there already (`spec: {}`): they are not "added".
    let zero;
    let before = match live {
        Some(live) => live,
        None => {
            zero = typed.zero();
            &zero
        }
    };
    // The entries themselves are no field anyone owns.
    let ignored = ignored(typed.has_status, updater.subresource).union(&set_of(&[MANAGED_FIELDS]));
    let (set_now, removed) = changes(before, new, shape, &ignored);
    if set_now.is_empty() && removed.is_empty() {
        return entries(managers, |_| false, now);
    }
    let mine = Manager::new(typed.api_version, updater, "Update", FieldSet::default());
    let identity = mine.identity();
    let at = match managers.iter().position(|m| m.identity() == identity) {
        Some(at) => at,
        None => {
            managers.push(mine);
            managers.len() - 1
        }
    };
    for (i, manager) in managers.iter_mut().enumerate() {
        manager.set = match i == at {
            true => manager.set.difference(&removed).union(&set_now),
            false => manager.set.difference(&set_now).difference(&removed),
        };
    }
    entries(managers, |m| m.identity() == identity, now)
}

/// What a write from `before` to `after` set (added or modified) and removed, but for the
/// fields its endpoint resets (`ignored`).
fn changes(
    before: &Value,
    after: &Value,
    shape: Shape,
    ignored: &FieldSet,
) -> (FieldSet, FieldSet) {
    let changed = compare(before, after, shape);
    let set = changed.added.union(&changed.modified);
    (
        set.recursive_difference(ignored),
        changed.removed.recursive_difference(ignored),
    )
}

/// The managers as managedFields entries, in kube-apiserver's order, without the fields
/// nobody owns there and without managers left owning nothing; those `dated` get `now`.
fn entries(managers: Vec<Manager>, dated: impl Fn(&Manager) -> bool, now: &Value) -> Vec<Value> {
    let stripped = set_of(&STRIPPED);
    let mut entries: Vec<Value> = managers
        .into_iter()
        .filter_map(|manager| {
            let set = manager.set.difference(&stripped);
            let dated = dated(&manager);
            let mut entry = manager.entry;
            if dated {
                entry["time"] = now.clone();
            }
            entry["fieldsV1"] = set.to_fields_v1();
            (!set.is_empty()).then_some(entry)
        })
        .collect();
    sort_entries(&mut entries);
    entries
}

/// The fields of the live object's last-applied configuration whose values the object
/// still has (kube-apiserver's `lastAppliedManager`): kubectl may take them from their
/// client-side apply managers without a conflict. `None` without a readable annotation
/// of the kind's version.
fn agreed_with_last_applied(typed: &Typed<'_>, live: &Value) -> Option<FieldSet> {
    let text = live["metadata"]["annotations"][LAST_APPLIED_ANNOTATION].as_str()?;
    let last: Value = serde_json::from_str(text).ok()?;
    if last["apiVersion"] != typed.api_version {
        return None;
    }
    let shape = typed.shape;
    let set = field_set(&last, shape, Reading::Config).ok()?;
    // The live object's managedFields differ as an added field, which `set` lacks.
    let differs = compare(&last, live, shape);
    Some(
        set.difference(&differs.modified)
            .difference(&differs.added)
            .difference(&differs.removed),
    )
}

/// The last-applied annotation, where the object has one, rewritten to `config` (without
/// the annotation) as Go's JSON encoder writes it: keys sorted, `<`, `>` and `&` escaped,
/// a newline at the end; dropped when it would take the annotations past their limit
/// (kube-apiserver's `lastAppliedUpdater`).
fn sync_last_applied(object: &mut Value, config: &Value) {
    let Some(annotations) = object["metadata"]["annotations"].as_object_mut() else {
        return;
    };
    if annotations
        .get(LAST_APPLIED_ANNOTATION)
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return;
    }
    let mut last = config.clone();
    if let Some(theirs) = last
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        theirs.remove(LAST_APPLIED_ANNOTATION);
    }
    let mut text = String::new();
    for c in last.to_string().chars() {
        match c {
            '<' => text.push_str("\\u003c"),
            '>' => text.push_str("\\u003e"),
            '&' => text.push_str("\\u0026"),
            '\u{2028}' => text.push_str("\\u2028"),
            '\u{2029}' => text.push_str("\\u2029"),
            c => text.push(c),
        }
    }
    text.push('\n');
    annotations.insert(LAST_APPLIED_ANNOTATION.to_owned(), Value::String(text));
    let size = annotations_size(
        annotations
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or_default())),
    );
    if size > MAX_ANNOTATIONS_BYTES {
        annotations.remove(LAST_APPLIED_ANNOTATION);
    }
}

/// What kube-apiserver refuses of a configuration before it reads it along the schema.
fn check_config(typed: &Typed<'_>, config: &Value) -> Result<(), ApplyError> {
    let bad = |m: String| Err(ApplyError::BadRequest(m));
    if !config.is_object() {
        return bad("the apply configuration is not an object".to_owned());
    }
    let version = config["apiVersion"].as_str().unwrap_or_default();
    if version != typed.api_version {
        return bad(format!(
            "Incorrect version specified in apply patch. Specified patch version: {version}, expected: {}",
            typed.api_version
        ));
    }
    match config["kind"].as_str() {
        None | Some("") => bad(format!("Object 'Kind' is missing in '{config}'")),
        Some(given) if given != typed.kind => bad(format!(
            "the kind of the apply configuration ({given}) does not match this endpoint's ({})",
            typed.kind
        )),
        Some(_) if !config["metadata"]["managedFields"].is_null() => {
            bad("metadata.managedFields must be nil".to_owned())
        }
        Some(_) => Ok(()),
    }
}

/// The object's managedFields entries, each with the set it owns.
fn read_managers(live: &Value) -> Vec<Manager> {
    let entries = live["metadata"]["managedFields"].as_array();
    entries
        .into_iter()
        .flatten()
        .map(|entry| Manager {
            set: FieldSet::from_fields_v1(&entry["fieldsV1"]),
            entry: entry.clone(),
        })
        .collect()
}

fn without_managed_fields(object: &Value) -> Value {
    let mut object = object.clone();
    if let Some(meta) = object["metadata"].as_object_mut() {
        meta.remove("managedFields");
    }
    object
}

/// `merged` without what the applier set last time (`last`), left out now, and nobody
/// owns: structured-merge-diff's `prune`.
fn pruned(merged: Value, managers: &[Manager], last: &FieldSet, shape: Shape) -> Value {
    let Ok(present) = field_set(&merged, shape, Reading::Live) else {
        return merged;
    };
    let owned = managers
        .iter()
        .fold(FieldSet::default(), |all, m| all.union(&m.set));
    let gone = present
        .with_named_fields(shape)
        .difference(&owned.with_named_fields(shape))
        .intersection(&last.with_named_fields(shape));
    remove(&merged, &gone, shape).unwrap_or_else(|| json!({}))
}

/// The 409 kube-apiserver answers for conflicts, in its words.
fn conflict(conflicts: Vec<(Manager, Vec<String>)>) -> ApplyError {
    let causes: Vec<(String, String)> = conflicts
        .iter()
        .map(|(m, path)| (format!("conflict with {}", m.named()), path_string(path)))
        .collect();
    let message = match conflicts.as_slice() {
        [(manager, path)] => format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            manager.named(),
            path_string(path)
        ),
        _ => {
            let mut by_manager: Vec<(String, Vec<String>)> = Vec::new();
            for (manager, path) in &conflicts {
                let name = manager.named();
                match by_manager.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, paths)) => paths.push(path_string(path)),
                    None => by_manager.push((name, vec![path_string(path)])),
                }
            }
            by_manager.sort();
            let lines: Vec<String> = by_manager
                .iter()
                .flat_map(|(name, paths)| {
                    std::iter::once(format!("conflicts with {name}:"))
                        .chain(paths.iter().map(|p| format!("- {p}")))
                })
                .collect();
            format!(
                "Apply failed with {} conflicts: {}",
                conflicts.len(),
                lines.join("\n")
            )
        }
    };
    ApplyError::Conflict { message, causes }
}

/// managedFields in kube-apiserver's order: appliers before updaters, then by time,
/// manager, API version and subresource.
pub fn sort_entries(entries: &mut [Value]) {
    let text = |e: &Value, f: &str| e[f].as_str().unwrap_or_default().to_owned();
    entries.sort_by_key(|e| {
        (
            text(e, "operation"),
            text(e, "time"),
            text(e, "manager"),
            text(e, "apiVersion"),
            text(e, "subresource"),
        )
    });
}

#[cfg(test)]
mod tests;
