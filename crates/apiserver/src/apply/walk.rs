//! What server-side apply does to objects along their schema, as structured-merge-diff's
//! `typed` package does it: the set of fields an object sets ([`field_set`]), a
//! configuration merged into the live object ([`merge`]), what changed between two
//! objects ([`compare`]) and an object without some of its fields ([`remove`]).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::schema::{ListKind, Shape};
use super::set::{FieldSet, path_string};

/// How strictly an object is read: an applied configuration may not name fields its
/// schema lacks or give a list element twice; a live object may (what a server stored).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    Config,
    Live,
}

/// The fields `value` sets: its scalars, atomic lists and maps, list elements, map keys
/// and empty or null fields, as members.
pub fn field_set(value: &Value, shape: Shape, reading: Reading) -> Result<FieldSet, String> {
    let mut set = FieldSet::default();
    fields_of(value, shape, reading, &mut Vec::new(), &mut set)?;
    Ok(set)
}

fn fields_of(
    value: &Value,
    shape: Shape,
    reading: Reading,
    path: &mut Vec<String>,
    set: &mut FieldSet,
) -> Result<(), String> {
    match shape.deduced(value) {
        Shape::Scalar
        | Shape::List {
            kind: ListKind::Atomic,
            ..
        }
        | Shape::Struct { atomic: true, .. }
        | Shape::Map { atomic: true, .. } => set.insert(path),
        list @ Shape::List { .. } => {
            let Some(items) = value.as_array() else {
                return Ok(());
            };
            let elements = elements(list, items, path)?;
            let counts = counted(&elements);
            if reading == Reading::Config
                && let Some(twice) = elements.iter().find(|e| counts[e.as_str()] > 1)
            {
                let key = path_string(std::slice::from_ref(twice));
                return Err(format!(
                    "{}: duplicate entries for key {key}",
                    path_string(path)
                ));
            }
            for (item, element) in items.iter().zip(&elements) {
                path.push(element.clone());
                if counts[element.as_str()] == 1 {
                    fields_of(item, list.items(), reading, path, set)?;
                }
                set.insert(path);
                path.pop();
            }
        }
        map => {
            let Some(fields) = value.as_object() else {
                return Ok(());
            };
            for (name, inner) in fields {
                path.push(format!("f:{name}"));
                let shape = match (map.field(name), reading) {
                    (Some(shape), _) => shape,
                    (None, Reading::Live) => Shape::Deduced,
                    (None, Reading::Config) => {
                        return Err(format!(
                            "{}: field not declared in schema",
                            path_string(path)
                        ));
                    }
                };
                fields_of(inner, shape, reading, path, set)?;
                let empty = inner.is_null() || inner.as_object().is_some_and(Map::is_empty);
                if empty || !map.declares(name) {
                    set.insert(path);
                }
                path.pop();
            }
        }
    }
    Ok(())
}

/// How many times each element occurs.
fn counted(elements: &[String]) -> BTreeMap<&str, usize> {
    let mut counts = BTreeMap::new();
    for element in elements {
        *counts.entry(element.as_str()).or_default() += 1;
    }
    counts
}

/// The path element of each item of a list that is a set or a map.
fn elements(list: Shape, items: &[Value], path: &[String]) -> Result<Vec<String>, String> {
    items.iter().map(|item| element(list, item, path)).collect()
}

/// The path element of `item` in `list`: its keys (`k:{"name":"app"}`, a key left out
/// taking its schema default) or its value (`v:"x"`).
fn element(list: Shape, item: &Value, path: &[String]) -> Result<String, String> {
    let Shape::List { kind, .. } = list else {
        unreachable!("elements are taken of lists")
    };
    match kind {
        ListKind::Map(keys) => {
            let item_shape = list.items();
            let mut key = Map::new();
            for name in keys.iter().filter_map(Value::as_str) {
                let value = item
                    .get(name)
                    .or_else(|| item_shape.key_default(name))
                    .ok_or_else(|| {
                        format!(
                            "{}: associative list with keys has an element that omits key field {name:?} (and doesn't have default value)",
                            path_string(path)
                        )
                    })?;
                key.insert(name.to_owned(), value.clone());
            }
            Ok(format!("k:{}", Value::Object(key)))
        }
        ListKind::Set | ListKind::Atomic => Ok(format!("v:{item}")),
    }
}

/// `config` merged into `live`: what the configuration sets replaces what the live object
/// has, maps and structs merge field by field, sets and lists of maps element by element
/// (in structured-merge-diff's order: the configuration's elements in its order, each live
/// element it does not name kept after the element it followed).
pub fn merge(live: &Value, config: &Value, shape: Shape) -> Value {
    match (shape.deduced(config), live, config) {
        (
            map @ (Shape::Struct { atomic: false, .. } | Shape::Map { atomic: false, .. }),
            Value::Object(live_fields),
            Value::Object(config_fields),
        ) => {
            let mut out = live_fields.clone();
            for (name, value) in config_fields {
                let merged = match live_fields.get(name) {
                    Some(live) => merge(live, value, map.field(name).unwrap_or(Shape::Deduced)),
                    None => value.clone(),
                };
                out.insert(name.clone(), merged);
            }
            Value::Object(out)
        }
        (
            list @ Shape::List {
                kind: ListKind::Map(_) | ListKind::Set,
                ..
            },
            Value::Array(live_items),
            Value::Array(config_items),
        ) => match merge_lists(list, live_items, config_items) {
            Some(items) => Value::Array(items),
            None => config.clone(),
        },
        _ => config.clone(),
    }
}

/// Two lists of a set or map type merged element by element, as structured-merge-diff
/// orders them; `None` when an element has no key.
fn merge_lists(list: Shape, live: &[Value], config: &[Value]) -> Option<Vec<Value>> {
    let live_elements = elements(list, live, &[]).ok()?;
    let config_elements = elements(list, config, &[]).ok()?;
    let in_live: BTreeMap<&str, &Value> =
        live_elements.iter().map(String::as_str).zip(live).collect();
    let in_config: BTreeMap<&str, &Value> = config_elements
        .iter()
        .map(String::as_str)
        .zip(config)
        .collect();
    let mut shared = config_elements
        .iter()
        .filter(|e| in_live.contains_key(e.as_str()));
    let mut next_shared = shared.next();
    let mut merged_config = BTreeSet::new();
    let mut out = Vec::with_capacity(live.len().max(config.len()));
    let item = list.items();
    let (mut l, mut r) = (0, 0);
    while l < live.len() || r < config.len() {
        if l < live.len() && r < config.len() {
            let element = &live_elements[l];
            if *element == config_elements[r] {
                merged_config.insert(element.as_str());
                out.push(merge(
                    in_live[element.as_str()],
                    in_config[element.as_str()],
                    item,
                ));
                (l, r) = (l + 1, r + 1);
                next_shared = shared.next();
                continue;
            }
            if in_config.contains_key(element.as_str())
                && next_shared.is_some_and(|next| next != element)
            {
                // A shared element, but not the one due now.
                l += 1;
                continue;
            }
        }
        if l < live.len() {
            let element = live_elements[l].as_str();
            if !in_config.contains_key(element) {
                out.push(live[l].clone());
                l += 1;
                continue;
            } else if merged_config.contains(element) {
                l += 1;
            }
        }
        if r < config.len() {
            let element = config_elements[r].as_str();
            merged_config.insert(element);
            out.push(match in_live.get(element) {
                Some(live) => merge(live, in_config[element], item),
                None => in_config[element].clone(),
            });
            r += 1;
            if next_shared.is_some_and(|next| next == element) {
                next_shared = shared.next();
            }
        }
    }
    Some(out)
}

/// What changed from `old` to `new`: the fields added, modified and removed.
#[derive(Debug, Default)]
pub struct Comparison {
    pub added: FieldSet,
    pub modified: FieldSet,
    pub removed: FieldSet,
}

/// The fields `new` adds, changes and removes against `old`, as structured-merge-diff
/// compares them: a scalar or atomic field that differs is modified; a field or element
/// only one side has is added or removed with every field under it.
pub fn compare(old: &Value, new: &Value, shape: Shape) -> Comparison {
    let mut comparison = Comparison::default();
    compare_at(
        Some(old),
        Some(new),
        shape,
        &mut Vec::new(),
        &mut comparison,
    );
    comparison
}

fn compare_at(
    old: Option<&Value>,
    new: Option<&Value>,
    shape: Shape,
    path: &mut Vec<String>,
    out: &mut Comparison,
) {
    let Some(either) = new.or(old) else {
        return;
    };
    let shape = shape.deduced(either);
    // Atomic values are compared whole, and so are two empty ones (keeping empty apart
    // from absent).
    let leaf = match shape {
        Shape::Scalar
        | Shape::List {
            kind: ListKind::Atomic,
            ..
        }
        | Shape::Struct { atomic: true, .. }
        | Shape::Map { atomic: true, .. } => true,
        _ => [old, new].iter().all(|v| v.is_none_or(is_empty)),
    };
    if leaf {
        match (old, new) {
            (None, _) => out.added.insert(path),
            (_, None) => out.removed.insert(path),
            (Some(a), Some(b)) if a != b => out.modified.insert(path),
            _ => {}
        }
        return;
    }
    match shape {
        Shape::List { .. } => compare_lists(old, new, shape, path, out),
        map => {
            let no_fields = Map::new();
            let old_fields = old.and_then(Value::as_object).unwrap_or(&no_fields);
            let new_fields = new.and_then(Value::as_object).unwrap_or(&no_fields);
            let names: BTreeSet<&String> = old_fields.keys().chain(new_fields.keys()).collect();
            for name in names {
                path.push(format!("f:{name}"));
                let inner = map.field(name).unwrap_or(Shape::Deduced);
                compare_at(old_fields.get(name), new_fields.get(name), inner, path, out);
                path.pop();
            }
        }
    }
    match (old, new) {
        (None, _) => out.added.insert(path),
        (_, None) => out.removed.insert(path),
        _ => {}
    }
}

/// [`compare_at`] of the elements of two lists of a set or map type: an element given
/// more than once on one side is compared whole.
fn compare_lists(
    old: Option<&Value>,
    new: Option<&Value>,
    list: Shape,
    path: &mut Vec<String>,
    out: &mut Comparison,
) {
    let old_items = old.and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let new_items = new.and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let (Ok(old_elements), Ok(new_elements)) = (
        elements(list, old_items, path),
        elements(list, new_items, path),
    ) else {
        return;
    };
    let old_by = grouped(&old_elements, old_items);
    let new_by = grouped(&new_elements, new_items);
    let all: BTreeSet<&str> = old_by.keys().chain(new_by.keys()).copied().collect();
    for element in all {
        let (before, after) = (
            old_by.get(element).map_or(&[][..], Vec::as_slice),
            new_by.get(element).map_or(&[][..], Vec::as_slice),
        );
        path.push(element.to_owned());
        match (before, after) {
            ([] | [_], [] | [_]) => compare_at(
                before.first().copied(),
                after.first().copied(),
                list.items(),
                path,
                out,
            ),
            ([_, _, ..], [_, _, ..]) if before != after => out.modified.insert(path),
            ([_, _, ..], [_, _, ..]) => {}
            ([_, _, ..], _) => out.removed.insert(path),
            (_, [_, _, ..]) => out.added.insert(path),
        }
        path.pop();
    }
}

/// Whether a value is null or an empty list or map (compared as a leaf, so that the
/// difference between empty and absent is kept).
fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        Value::Object(fields) => fields.is_empty(),
        _ => false,
    }
}

/// A list's items by their elements (an element given twice has both items).
fn grouped<'a>(elements: &'a [String], items: &'a [Value]) -> BTreeMap<&'a str, Vec<&'a Value>> {
    let mut by = BTreeMap::<&str, Vec<&Value>>::new();
    for (element, item) in elements.iter().zip(items) {
        by.entry(element.as_str()).or_default().push(item);
    }
    by
}

/// `value` without the members of `set` (a field, or a list element, with all under it);
/// `None` when nothing is left of it.
pub fn remove(value: &Value, set: &FieldSet, shape: Shape) -> Option<Value> {
    let shape = shape.deduced(value);
    match (shape, value) {
        (
            Shape::List {
                kind: ListKind::Map(_) | ListKind::Set,
                ..
            },
            Value::Array(items),
        ) if !items.is_empty() => {
            let elements = elements(shape, items, &[]).ok()?;
            let kept: Vec<Value> = items
                .iter()
                .zip(&elements)
                .filter(|(_, element)| !set.has(std::slice::from_ref(element)))
                .filter_map(|(item, element)| match set.under(element) {
                    Some(under) => remove(item, under, shape.items()),
                    None => Some(item.clone()),
                })
                .collect();
            (!kept.is_empty()).then_some(Value::Array(kept))
        }
        (
            Shape::Struct { atomic: false, .. } | Shape::Map { atomic: false, .. },
            Value::Object(fields),
        ) if !fields.is_empty() => {
            let mut kept = Map::new();
            for (name, inner) in fields {
                let element = format!("f:{name}");
                if set.has(std::slice::from_ref(&element)) {
                    continue;
                }
                let inner = match set.under(&element) {
                    Some(under) => {
                        remove(inner, under, shape.field(name).unwrap_or(Shape::Deduced))
                    }
                    None => Some(inner.clone()),
                };
                if let Some(inner) = inner {
                    kept.insert(name.clone(), inner);
                }
            }
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
        _ => Some(value.clone()),
    }
}
