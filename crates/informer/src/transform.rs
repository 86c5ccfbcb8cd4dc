//! Transforms: what is cut from each object before the store keeps it (client-go's
//! `SetTransform`, v0.24; controller-runtime's `TransformStripManagedFields`;
//! kube-runtime's `.modify()`). Applied once per object, in the variant's order.
//!
//! Named transforms work on the typed object directly and free what they cut at once.
//! A field path (`spec.volumes`) is cut through a JSON round trip of a typed object, so it
//! works for any field of any kind; the round trip's allocations are the informer's and
//! show in `alloc_count`, but what stays in the store is exactly the object without the
//! field. A dynamic object's fields are a JSON tree already: the path is cut in place.

use super::object::Object;
use scenario::{LAST_APPLIED_ANNOTATION, Transform};

/// Applies `transforms` to `obj`, in order.
pub fn apply<K: Object>(transforms: &[Transform], obj: &mut K) {
    for transform in transforms {
        match transform {
            Transform::ManagedFields => obj.meta_mut().managed_fields = None,
            Transform::LastApplied => {
                if let Some(annotations) = obj.meta_mut().annotations.as_mut() {
                    annotations.remove(LAST_APPLIED_ANNOTATION);
                }
            }
            Transform::Annotations(prefix) => {
                if let Some(annotations) = obj.meta_mut().annotations.as_mut() {
                    annotations.retain(|key, _| !key.starts_with(prefix.as_str()));
                }
            }
            Transform::Status => obj.clear_status(),
            Transform::Field(path) => obj.cut_field(path),
        }
    }
}

/// Whether `transforms` would cut something from objects that have `value`'s shape; for
/// tests and checks.
#[cfg(test)]
fn has_field(value: &serde_json::Value, path: &[&str]) -> bool {
    path.iter()
        .try_fold(value, |node, name| node.get(*name))
        .is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use apiserver::generate::{self, ObjectId};
    use scenario::ObjectSpec;

    use k8s_openapi::api::core::v1::Pod;

    fn pod() -> Pod {
        let id = ObjectId::new(3, 0, 1, 4);
        generate::pod(&ObjectSpec::pods(1000), id)
    }

    #[test]
    fn managed_fields_and_last_applied_are_cut_and_nothing_else() {
        let mut spec = ObjectSpec::pods(1000);
        spec.last_applied = true;
        let id = ObjectId::new(1, 0, 1, 2);
        let original = generate::pod(&spec, id);
        assert!(original.metadata.managed_fields.is_some());
        let mut p = original.clone();
        apply(&[Transform::ManagedFields, Transform::LastApplied], &mut p);
        assert!(p.metadata.managed_fields.is_none());
        let annotations = p.metadata.annotations.as_ref().unwrap();
        assert!(!annotations.contains_key(LAST_APPLIED_ANNOTATION));
        assert_eq!(
            annotations.len() + 1,
            original.metadata.annotations.as_ref().unwrap().len()
        );
        assert_eq!(p.spec, original.spec);
        assert_eq!(p.metadata.labels, original.metadata.labels);
    }

    #[test]
    fn a_field_path_cuts_that_field_of_any_kind() {
        let mut p = pod();
        assert!(has_field(
            &serde_json::to_value(&p).unwrap(),
            &["spec", "volumes"]
        ));
        apply(
            &[Transform::Field(vec!["spec".into(), "volumes".into()])],
            &mut p,
        );
        let value = serde_json::to_value(&p).unwrap();
        assert!(!has_field(&value, &["spec", "volumes"]));
        assert!(has_field(&value, &["spec", "containers"]));
        // A path that is not there leaves the object as it was.
        let before = p.clone();
        apply(
            &[Transform::Field(vec!["spec".into(), "nope".into()])],
            &mut p,
        );
        apply(
            &[Transform::Field(vec!["nope".into(), "volumes".into()])],
            &mut p,
        );
        assert_eq!(p, before);
    }

    #[test]
    fn annotation_prefixes_and_status_are_cut() {
        let mut p = pod();
        let keys: Vec<String> = p
            .metadata
            .annotations
            .clone()
            .unwrap()
            .into_keys()
            .collect();
        let prefix = keys[0].split('/').next().unwrap().to_owned();
        apply(
            &[Transform::Annotations(prefix.clone()), Transform::Status],
            &mut p,
        );
        assert!(p.status.is_none());
        assert!(
            p.metadata
                .annotations
                .unwrap_or_default()
                .keys()
                .all(|k| !k.starts_with(&prefix))
        );
    }
}
