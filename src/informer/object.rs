//! The kinds an informer can cache: Pod, ConfigMap and Secret, whole or as metadata only
//! (`PartialObjectMeta<K>`, what metadata informers decode). One trait says what the
//! informer needs of a kind, so every stage is generic over it.

use std::fmt::Debug;

use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use kube::Resource;
use kube::core::PartialObjectMeta;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::k8s::Identity;

/// A kind the informer caches.
pub trait Object:
    Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + Clone
    + DeserializeOwned
    + Serialize
    + Debug
    + Send
    + Sync
    + 'static
{
    /// Drops `status`, for kinds that have one.
    fn clear_status(&mut self) {}
}

impl Object for Pod {
    fn clear_status(&mut self) {
        self.status = None;
    }
}

impl Object for ConfigMap {}

impl Object for Secret {}

impl<K> Object for PartialObjectMeta<K> where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + Debug
        + Send
        + Sync
        + 'static
{
}

impl Identity {
    /// The identity of `obj`.
    pub fn of<K: Resource>(obj: &K) -> Identity {
        let meta = obj.meta();
        Identity {
            key: super::key::ObjectKey::of(obj).to_string(),
            resource_version: meta.resource_version.clone().unwrap_or_default(),
            uid: meta.uid.clone().unwrap_or_default(),
        }
    }
}

/// A ConfigMap `ns/<name>` with nothing else: what the informer's unit tests cache.
#[cfg(test)]
pub(super) fn test_config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: kube::api::ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("ns".to_owned()),
            ..Default::default()
        },
        ..Default::default()
    }
}
