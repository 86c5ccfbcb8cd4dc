//! A set of field paths, as a managedFields entry records what its manager owns
//! (`fieldsV1`): structured-merge-diff's `fieldpath.Set`.
//!
//! A path is a list of elements, each written as FieldsV1 writes it: `f:name` (a field),
//! `k:{"name":"app"}` (a list element by its keys), `v:"x"` (a set's value), `i:3` (an
//! index). A set holds the paths that are members, in a tree of their prefixes: a
//! prefix is not a member unless inserted (`".": {}` marks one in FieldsV1).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use super::schema::Shape;

/// A set of field paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSet {
    /// The elements under this node that are members themselves.
    members: BTreeSet<String>,
    /// The elements under this node that lead to members.
    children: BTreeMap<String, FieldSet>,
}

impl FieldSet {
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    /// Adds `path` as a member. An element already there is not copied again: a list of
    /// 90,000 containers is walked a field at a time.
    pub fn insert(&mut self, path: &[String]) {
        match path {
            [] => {}
            [last] => {
                if !self.members.contains(last) {
                    self.members.insert(last.clone());
                }
            }
            [first, rest @ ..] => match self.children.get_mut(first) {
                Some(child) => child.insert(rest),
                None => self.children.entry(first.clone()).or_default().insert(rest),
            },
        }
    }

    /// Whether `path` is a member.
    pub fn has(&self, path: &[String]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// The set under the element `element`: the members whose paths start with it, without it.
    pub fn under(&self, element: &str) -> Option<&FieldSet> {
        self.children.get(element)
    }

    /// Every member of either set.
    pub fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (element, child) in &other.children {
            let mine = out.children.entry(element.clone()).or_default();
            *mine = mine.union(child);
        }
        out
    }

    /// The members of this set that are not members of `other` (paths, not prefixes: a
    /// member of `other` leaves the members under it here).
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.difference(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .map(|(element, child)| match other.children.get(element) {
                Some(theirs) => (element.clone(), child.difference(theirs)),
                None => (element.clone(), child.clone()),
            })
            .filter(|(_, child)| !child.is_empty())
            .collect();
        FieldSet { members, children }
    }

    /// The members of both sets.
    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.intersection(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .filter_map(|(element, child)| {
                let both = child.intersection(other.children.get(element)?);
                (!both.is_empty()).then(|| (element.clone(), both))
            })
            .collect();
        FieldSet { members, children }
    }

    /// This set without the members of `other` and every path under them.
    pub fn recursive_difference(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.difference(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .filter(|(element, _)| !other.members.contains(*element))
            .map(|(element, child)| match other.children.get(element) {
                Some(theirs) => (element.clone(), child.recursive_difference(theirs)),
                None => (element.clone(), child.clone()),
            })
            .filter(|(_, child)| !child.is_empty())
            .collect();
        FieldSet { members, children }
    }

    /// This set with each field the schema declares on the way to a member made a member
    /// too (structured-merge-diff's `EnsureNamedFieldsAreMembers`): removing the set's
    /// items then removes such a field whole when nothing else keeps it.
    pub fn with_named_fields(&self, shape: Shape) -> FieldSet {
        let mut members = self.members.clone();
        let mut children = BTreeMap::new();
        for (element, child) in &self.children {
            let inner = match element.strip_prefix("f:") {
                Some(name) => {
                    if shape.declares(name) {
                        members.insert(element.clone());
                    }
                    shape.field(name).unwrap_or(Shape::Deduced)
                }
                None => shape.items(),
            };
            children.insert(element.clone(), child.with_named_fields(inner));
        }
        FieldSet { members, children }
    }

    /// Every member, as paths (conflicts name them one by one).
    pub fn paths(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        let elements: BTreeSet<&String> = self.members.iter().chain(self.children.keys()).collect();
        for element in elements {
            prefix.push(element.clone());
            if self.members.contains(element) {
                out.push(prefix.clone());
            }
            if let Some(child) = self.children.get(element) {
                child.collect(prefix, out);
            }
            prefix.pop();
        }
    }

    /// The set as FieldsV1 JSON.
    pub fn to_fields_v1(&self) -> Value {
        let mut out = Map::new();
        for member in &self.members {
            out.insert(member.clone(), json!({}));
        }
        for (element, child) in &self.children {
            let mut inner = child.to_fields_v1();
            if self.members.contains(element)
                && let Some(inner) = inner.as_object_mut()
            {
                inner.insert(".".to_owned(), json!({}));
            }
            out.insert(element.clone(), inner);
        }
        Value::Object(out)
    }

    /// The set a FieldsV1 JSON describes (anything but objects is ignored, as nothing here
    /// writes it).
    pub fn from_fields_v1(fields: &Value) -> FieldSet {
        let mut set = FieldSet::default();
        for (element, inner) in fields.as_object().into_iter().flatten() {
            if element == "." {
                continue;
            }
            let child = FieldSet::from_fields_v1(inner);
            let is_member = inner
                .as_object()
                .is_none_or(|map| map.is_empty() || map.contains_key("."));
            if is_member {
                set.members.insert(element.clone());
            }
            if !child.is_empty() {
                set.children.insert(element.clone(), child);
            }
        }
        set
    }
}

/// A path as kube-apiserver writes it in a conflict: `.spec.containers[name="app"].image`.
pub fn path_string(path: &[String]) -> String {
    let mut out = String::new();
    for element in path {
        if let Some(name) = element.strip_prefix("f:") {
            out.push('.');
            out.push_str(name);
        } else if let Some(keys) = element.strip_prefix("k:") {
            let keys: Map<String, Value> = serde_json::from_str(keys).unwrap_or_default();
            let keys: Vec<String> = keys.iter().map(|(k, v)| format!("{k}={v}")).collect();
            out.push_str(&format!("[{}]", keys.join(",")));
        } else if let Some(value) = element.strip_prefix("v:") {
            out.push_str(&format!("[={value}]"));
        } else if let Some(index) = element.strip_prefix("i:") {
            out.push_str(&format!("[{index}]"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(elements: &[&str]) -> Vec<String> {
        elements.iter().map(|e| (*e).to_owned()).collect()
    }

    #[test]
    fn fields_v1_reads_and_writes_members_and_their_dot_markers() {
        let fields = json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:image": {}}}}
        });
        let set = FieldSet::from_fields_v1(&fields);
        assert!(set.has(&path(&["f:metadata", "f:labels"])));
        assert!(set.has(&path(&["f:metadata", "f:labels", "f:app"])));
        assert!(!set.has(&path(&["f:metadata"])));
        assert!(!set.has(&path(&["f:spec", "f:containers"])));
        assert_eq!(set.to_fields_v1(), fields);
        assert_eq!(
            set.paths().last().map(|p| path_string(p)).as_deref(),
            Some(".spec.containers[name=\"app\"].image")
        );
    }

    #[test]
    fn differences_remove_members_or_whole_subtrees() {
        let mut a = FieldSet::default();
        a.insert(&path(&["f:spec", "f:replicas"]));
        a.insert(&path(&["f:spec", "f:template", "f:metadata"]));
        a.insert(&path(&["f:spec", "f:template"]));
        let mut b = FieldSet::default();
        b.insert(&path(&["f:spec", "f:template"]));
        let exact = a.difference(&b);
        assert!(exact.has(&path(&["f:spec", "f:template", "f:metadata"])));
        assert!(!exact.has(&path(&["f:spec", "f:template"])));
        let recursive = a.recursive_difference(&b);
        assert_eq!(recursive.paths(), vec![path(&["f:spec", "f:replicas"])]);
        assert_eq!(a.intersection(&b).paths(), b.paths());
        assert_eq!(a.union(&b), a);
    }
}
