//! The kinds an informer can cache: every built-in kind held typed ([`Typed`]: the
//! generator's five, and a Service or a Job a sample brings), whole, as metadata only
//! (`PartialObjectMeta<K>`, what metadata informers decode) or untyped ([`Dynamic<K>`],
//! what dynamic informers decode), and a sampled kind's dynamic and metadata forms by the
//! names it is given at run time ([`Sampled`]). One trait
//! says what the informer needs of a kind, so every stage is generic over it.

use std::borrow::Cow;
use std::fmt::Debug;
use std::marker::PhantomData;
use std::sync::RwLock;

use k8s_openapi::NamespaceResourceScope;
use kube::Resource;
use kube::api::{DynamicObject, ObjectMeta};
use serde::{Deserialize, Serialize};

use k8s::Identity;
pub use k8s::object::{Named, Object};
use k8s::object::{cut_through_json, remove_at};
pub use k8s::typed::ApiScope;
use scenario::ObjectKind;

/// An object of kind `K` decoded without its type, as dynamic clients hold it: kube's
/// `DynamicObject`, typed `metadata` beside a JSON tree of every other field (client-go's
/// dynamic informer keeps `unstructured.Unstructured`, whose metadata is a map too). The
/// wire is `K`'s: same paths, same JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Dynamic<K> {
    object: DynamicObject,
    #[serde(skip)]
    kind: PhantomData<fn() -> K>,
}

impl<K: Resource<DynamicType = ()>> Resource for Dynamic<K> {
    type DynamicType = ();
    type Scope = K::Scope;

    fn kind(dt: &()) -> Cow<'_, str> {
        K::kind(dt)
    }

    fn group(dt: &()) -> Cow<'_, str> {
        K::group(dt)
    }

    fn version(dt: &()) -> Cow<'_, str> {
        K::version(dt)
    }

    fn plural(dt: &()) -> Cow<'_, str> {
        K::plural(dt)
    }

    fn meta(&self) -> &ObjectMeta {
        &self.object.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.object.metadata
    }
}

impl<K: Named> Object for Dynamic<K> {
    fn clear_status(&mut self) {
        if let Some(fields) = self.object.data.as_object_mut() {
            fields.remove("status");
        }
    }

    /// Cuts the field in place, as `unstructured.RemoveNestedField` does; a path into
    /// `metadata` (typed here) goes through the round trip.
    fn cut_field(&mut self, path: &[String]) {
        if path.first().is_some_and(|name| name == "metadata") {
            cut_through_json(self, path);
        } else {
            remove_at(&mut self.object.data, path);
        }
    }
}

/// A kind known only at run time: a sampled kind (a custom resource, or a built-in kind a
/// sample brings), whose dynamic and metadata informers hold `Dynamic<Sampled>` and
/// `PartialObjectMeta<Sampled>`, as client-go's dynamic informer is given its resource
/// rather than a type. No value of it exists: it only names the kind. The built-in
/// reflector asks the scenario's kind for its path; kube-runtime's reflector, which takes
/// a kind's names from its type, gets the sampled kind's ([`Sampled::name`]): a variant
/// runs in a process of its own, of one scenario and one kind.
#[derive(Debug, Clone)]
pub enum Sampled {}

/// The kind [`Sampled`] names, in this process.
static SAMPLED_KIND: RwLock<Option<ObjectKind>> = RwLock::new(None);

impl Sampled {
    /// Makes `kind` (a sampled kind) the kind [`Sampled`] names, for the informers started
    /// after.
    pub fn name(kind: ObjectKind) {
        *SAMPLED_KIND.write().unwrap_or_else(|e| e.into_inner()) = Some(kind);
    }

    /// A name of the sampled kind, as `of` reads it from the kind (`""` before any).
    fn named(of: fn(ObjectKind) -> &'static str) -> Cow<'static, str> {
        let kind = *SAMPLED_KIND.read().unwrap_or_else(|e| e.into_inner());
        Cow::Borrowed(kind.map_or("", of))
    }
}

impl Resource for Sampled {
    type DynamicType = ();
    // A cluster-scoped kind is listed at the same path as every namespace's objects.
    type Scope = NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        Sampled::named(ObjectKind::as_str)
    }

    fn group(_: &()) -> Cow<'_, str> {
        Sampled::named(ObjectKind::group)
    }

    fn version(_: &()) -> Cow<'_, str> {
        Sampled::named(ObjectKind::version)
    }

    fn plural(_: &()) -> Cow<'_, str> {
        Sampled::named(ObjectKind::plural)
    }

    fn meta(&self) -> &ObjectMeta {
        match *self {}
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        match *self {}
    }
}

/// The identity of `obj`, as the consistency oracle reads it.
pub fn identity<K: Resource>(obj: &K) -> Identity {
    let meta = obj.meta();
    Identity {
        key: super::key::ObjectKey::of(obj).to_string(),
        resource_version: meta.resource_version.clone().unwrap_or_default(),
        uid: meta.uid.clone().unwrap_or_default(),
    }
}

/// A ConfigMap `ns/<name>` with nothing else: what the informer's unit tests cache.
#[cfg(test)]
pub(super) fn test_config_map(name: &str) -> k8s_openapi::api::core::v1::ConfigMap {
    k8s_openapi::api::core::v1::ConfigMap {
        metadata: kube::api::ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("ns".to_owned()),
            ..Default::default()
        },
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apiserver::generate::{self, ObjectId};
    use scenario::ObjectSpec;

    use k8s_openapi::api::core::v1::Pod;

    fn dynamic_pod() -> (Pod, Dynamic<Pod>) {
        let id = ObjectId::new(5, 0, 1, 6);
        let pod = generate::pod(&ObjectSpec::pods(1000), id);
        let json = serde_json::to_vec(&pod).unwrap();
        (pod, serde_json::from_slice(&json).unwrap())
    }

    #[test]
    fn a_dynamic_object_is_its_kinds_json_with_typed_metadata() {
        let (pod, dynamic) = dynamic_pod();
        assert_eq!(dynamic.meta(), &pod.metadata);
        assert_eq!(
            Dynamic::<Pod>::url_path(&(), Some("ns")),
            Pod::url_path(&(), Some("ns"))
        );
        assert!(!Dynamic::<Pod>::metadata_api());
        // Every field survives the trip through the tree, byte for byte.
        let back: Pod = serde_json::from_value(serde_json::to_value(&dynamic).unwrap()).unwrap();
        assert_eq!(back, pod);
        assert!(dynamic.object.data["spec"]["containers"].is_array());
    }

    #[test]
    fn dynamic_fields_are_cut_in_place_and_metadata_through_its_type() {
        let (pod, mut dynamic) = dynamic_pod();
        dynamic.clear_status();
        assert!(dynamic.object.data.get("status").is_none());
        dynamic.cut_field(&["spec".into(), "volumes".into()]);
        assert!(dynamic.object.data["spec"].get("volumes").is_none());
        assert!(dynamic.object.data["spec"].get("containers").is_some());
        dynamic.cut_field(&["metadata".into(), "labels".into()]);
        assert!(dynamic.meta().labels.is_none());
        assert_eq!(dynamic.meta().annotations, pod.metadata.annotations);
        // A path that is not there changes nothing.
        let before = serde_json::to_value(&dynamic).unwrap();
        dynamic.cut_field(&["spec".into(), "nope".into(), "deeper".into()]);
        dynamic.cut_field(&["nope".into()]);
        assert_eq!(serde_json::to_value(&dynamic).unwrap(), before);
    }
}
