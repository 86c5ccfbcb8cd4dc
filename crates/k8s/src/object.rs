//! What the informer needs of every kind it caches ([`Object`]): the built-in kinds held
//! typed ([`Typed`]) and their metadata-only form (`PartialObjectMeta<K>`). Here, beside
//! [`Typed`], so that both blanket implementations live in the crate that owns the trait
//! they rest on; the informer's untyped forms implement it where they are defined.

use std::fmt::Debug;

use kube::Resource;
use kube::core::PartialObjectMeta;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::typed::{ApiScope, Kind, Typed};

/// A kind the informer caches.
pub trait Object: Kind {
    /// Drops `status`, for kinds that have one.
    fn clear_status(&mut self) {}

    /// Removes the field at `path`; a path that is not there changes nothing. A typed object goes through a JSON round
    /// trip, so any field of any kind can be cut; what stays is exactly the object without
    /// the field.
    fn cut_field(&mut self, path: &[String]) {
        cut_through_json(self, path);
    }
}

/// Removes the field at `path` from `obj` through a JSON round trip; an object that no
/// longer decodes without the field stays as it was.
pub fn cut_through_json<T: Serialize + DeserializeOwned>(obj: &mut T, path: &[String]) {
    let Ok(mut value) = serde_json::to_value(&*obj) else {
        return;
    };
    if remove_at(&mut value, path).is_none() {
        return;
    }
    if let Ok(cut) = serde_json::from_value::<T>(value) {
        *obj = cut;
    }
}

/// Removes the field at `path` under `value`, returning it; `None` if it is not there.
pub fn remove_at(value: &mut serde_json::Value, path: &[String]) -> Option<serde_json::Value> {
    let (last, parents) = path.split_last()?;
    let node = parents
        .iter()
        .try_fold(value, |node, name| node.get_mut(name.as_str()))?;
    node.as_object_mut()?.remove(last.as_str())
}

/// Every kind held typed: the generator's five and the built-in kinds a sample may bring.
impl<T: Typed> Object for T {
    fn clear_status(&mut self) {
        Typed::clear_status(self);
    }
}

/// What a metadata or dynamic informer needs of its kind: its names and scope, not its
/// fields.
pub trait Named:
    Resource<DynamicType = (), Scope: ApiScope> + Clone + Debug + Send + Sync + 'static
{
}

impl<K> Named for K where
    K: Resource<DynamicType = (), Scope: ApiScope> + Clone + Debug + Send + Sync + 'static
{
}

impl<K: Named> Object for PartialObjectMeta<K> {}
