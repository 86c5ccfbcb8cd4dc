//! The built-in kinds held typed, as k8s-openapi's structs: the generator's five and every
//! other kind a sample may bring that kube-apiserver serves by default at a stable version
//! (a Service, an EndpointSlice, a Job...), as client-go's typed informers
//! (`SharedInformerFactory`) and kube-rs's `Api<K>` hold them. A kind is found by its
//! `apiVersion` and `kind` ([`visit`]) and handed to a [`Visit`] as a type, so that the
//! scenario (does a sample decode as it?) and the informer (an informer of it) read one
//! list.

use std::fmt::Debug;

use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use kube::Api;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Where a kind's objects live, so generic code can address them.
pub trait ApiScope: Sized {
    /// Whether objects of this scope live in namespaces.
    const NAMESPACED: bool;

    /// The API of `K` in `namespace`, or across all namespaces.
    fn api<K: kube::Resource<DynamicType = (), Scope = Self>>(
        client: kube::Client,
        namespace: Option<&str>,
    ) -> Api<K>;
}

impl ApiScope for NamespaceResourceScope {
    const NAMESPACED: bool = true;

    fn api<K: kube::Resource<DynamicType = (), Scope = Self>>(
        client: kube::Client,
        namespace: Option<&str>,
    ) -> Api<K> {
        match namespace {
            Some(namespace) => Api::namespaced(client, namespace),
            None => Api::all(client),
        }
    }
}

impl ApiScope for ClusterResourceScope {
    const NAMESPACED: bool = false;

    /// Every object: a cluster-scoped kind has no namespace to narrow to.
    fn api<K: kube::Resource<DynamicType = (), Scope = Self>>(
        client: kube::Client,
        _namespace: Option<&str>,
    ) -> Api<K> {
        Api::all(client)
    }
}

/// What every kind an informer holds is: a resource of a known scope, decoded and
/// encoded by serde, sent between tasks.
pub trait Kind:
    kube::Resource<DynamicType = (), Scope: ApiScope>
    + Clone
    + DeserializeOwned
    + Serialize
    + Debug
    + Send
    + Sync
    + 'static
{
}

impl<T> Kind for T where
    T: kube::Resource<DynamicType = (), Scope: ApiScope>
        + Clone
        + DeserializeOwned
        + Serialize
        + Debug
        + Send
        + Sync
        + 'static
{
}

/// A built-in kind held as its k8s-openapi struct.
pub trait Typed: Kind {
    /// Drops `status`, for kinds that have one; a kind without changes nothing.
    fn clear_status(&mut self);
}

/// What to do with the type of a kind [`visit`] found.
pub trait Visit {
    /// What it gives.
    type Output;

    /// Does it with `T`.
    fn visit<T: Typed>(self) -> Self::Output;
}

/// The kinds held typed: a kind with a `status` in the first list, one without in the
/// second.
macro_rules! typed_kinds {
    (status: [$($with:ty),* $(,)?], no_status: [$($without:ty),* $(,)?] $(,)?) => {
        $(impl Typed for $with {
            fn clear_status(&mut self) {
                self.status = None;
            }
        })*
        $(impl Typed for $without {
            fn clear_status(&mut self) {}
        })*

        /// Every typed kind's `apiVersion` and `kind`.
        pub const KINDS: &[(&str, &str)] = {
            use k8s_openapi::Resource as _;
            &[$((<$with>::API_VERSION, <$with>::KIND),)* $((<$without>::API_VERSION, <$without>::KIND),)*]
        };

        /// What `visit` gives for the typed kind of `api_version` named `kind`; `None` for
        /// a kind held untyped (a custom resource, a version in alpha or beta).
        pub fn visit<V: Visit>(api_version: &str, kind: &str, visit: V) -> Option<V::Output> {
            use k8s_openapi::Resource as _;
            $(if <$with>::API_VERSION == api_version && <$with>::KIND == kind {
                return Some(visit.visit::<$with>());
            })*
            $(if <$without>::API_VERSION == api_version && <$without>::KIND == kind {
                return Some(visit.visit::<$without>());
            })*
            None
        }
    };
}

use k8s_openapi::api::{
    admissionregistration::v1 as admission, apps::v1 as apps, autoscaling, batch::v1 as batch,
    certificates::v1 as certificates, coordination::v1 as coordination, core::v1 as core,
    discovery::v1 as discovery, events::v1 as events, flowcontrol::v1 as flowcontrol,
    networking::v1 as networking, node::v1 as node, policy::v1 as policy, rbac::v1 as rbac,
    resource::v1 as resource, scheduling::v1 as scheduling, storage::v1 as storage,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1 as apiregistration;

typed_kinds! {
    status: [
        core::Pod, core::Node, core::Namespace, core::Service, core::PersistentVolume,
        core::PersistentVolumeClaim, core::ReplicationController, core::ResourceQuota,
        apps::Deployment, apps::ReplicaSet, apps::StatefulSet, apps::DaemonSet,
        batch::Job, batch::CronJob,
        autoscaling::v1::HorizontalPodAutoscaler, autoscaling::v2::HorizontalPodAutoscaler,
        networking::Ingress, networking::ServiceCIDR,
        policy::PodDisruptionBudget,
        certificates::CertificateSigningRequest,
        admission::ValidatingAdmissionPolicy,
        flowcontrol::FlowSchema, flowcontrol::PriorityLevelConfiguration,
        resource::ResourceClaim,
        storage::VolumeAttachment,
        apiextensions::CustomResourceDefinition,
        apiregistration::APIService,
    ],
    no_status: [
        core::ConfigMap, core::Secret, core::Endpoints, core::Event, core::LimitRange,
        core::PodTemplate, core::ServiceAccount,
        apps::ControllerRevision,
        coordination::Lease,
        discovery::EndpointSlice,
        events::Event,
        networking::IngressClass, networking::IPAddress, networking::NetworkPolicy,
        node::RuntimeClass,
        rbac::Role, rbac::RoleBinding, rbac::ClusterRole, rbac::ClusterRoleBinding,
        resource::DeviceClass, resource::ResourceClaimTemplate, resource::ResourceSlice,
        scheduling::PriorityClass,
        storage::CSIDriver, storage::CSINode, storage::CSIStorageCapacity,
        storage::StorageClass, storage::VolumeAttributesClass,
        admission::MutatingWebhookConfiguration, admission::ValidatingWebhookConfiguration,
        admission::ValidatingAdmissionPolicyBinding,
    ],
}

/// Whether the kind of `api_version` named `kind` is held typed. Allocates nothing: an
/// informer asks it as it starts, within the figures of its first phase.
pub fn is_typed(api_version: &str, kind: &str) -> bool {
    struct Found;
    impl Visit for Found {
        type Output = ();
        fn visit<T: Typed>(self) {}
    }
    visit(api_version, kind, Found).is_some()
}

/// The plural the typed kind of `api_version` named `kind` is served under, and whether
/// it lives in namespaces: kube-apiserver's, as its type says them.
pub fn names(api_version: &str, kind: &str) -> Option<(String, bool)> {
    struct Names;
    impl Visit for Names {
        type Output = (String, bool);
        fn visit<T: Typed>(self) -> (String, bool) {
            (
                T::plural(&()).into_owned(),
                <T::Scope as ApiScope>::NAMESPACED,
            )
        }
    }
    visit(api_version, kind, Names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_is_found_by_its_api_version_and_kind() {
        assert_eq!(
            names("discovery.k8s.io/v1", "EndpointSlice"),
            Some(("endpointslices".to_owned(), true))
        );
        assert_eq!(
            names("autoscaling/v1", "HorizontalPodAutoscaler"),
            Some(("horizontalpodautoscalers".to_owned(), true))
        );
        assert_eq!(
            names("storage.k8s.io/v1", "StorageClass"),
            Some(("storageclasses".to_owned(), false))
        );
        assert_eq!(names("v1", "Endpoints").unwrap().0, "endpoints");
        // Held untyped: a custom resource, a beta version, a kind of another version.
        assert!(!is_typed("cert-manager.io/v1", "Certificate"));
        assert!(!is_typed("batch/v1beta1", "CronJob"));
        assert!(!is_typed("apps/v1", "Pod"));
        assert!(is_typed("v1", "Pod"));
    }

    #[test]
    fn clearing_status_leaves_the_rest() {
        let mut job: batch::Job = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "j"}, "spec": {"template": {}}, "status": {"active": 1}
        }))
        .unwrap();
        job.clear_status();
        assert!(job.status.is_none());
        assert!(job.spec.is_some());
    }
}
