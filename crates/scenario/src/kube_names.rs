//! What kube-apiserver calls its built-in resources beyond their kind: the plural where
//! kube's guess from the kind misses it, the short names kubectl accepts (`kubectl get
//! rs`) and the categories (`kubectl get all`). A sample of a built-in kind the generator
//! does not make (a ReplicaSet, a Service, Endpoints) is served under these names, as
//! kube-apiserver serves it. From kube-apiserver v1.37.2's discovery (`kubectl
//! api-resources -o wide` against servers/start.sh's server): every resource with a
//! short name or a category, and every plural the guess gets wrong.

/// One built-in resource's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KubeNames {
    pub group: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub short_names: &'static [&'static str],
    pub categories: &'static [&'static str],
}

const fn names(
    (group, kind, plural): (&'static str, &'static str, &'static str),
    short_names: &'static [&'static str],
    categories: &'static [&'static str],
) -> KubeNames {
    KubeNames {
        group,
        kind,
        plural,
        short_names,
        categories,
    }
}

const ALL: &[&str] = &["all"];
const API_EXTENSIONS: &[&str] = &["api-extensions"];

/// kube-apiserver v1.37.2's, by group.
const KNOWN: &[KubeNames] = &[
    names(("", "ComponentStatus", "componentstatuses"), &["cs"], &[]),
    names(("", "ConfigMap", "configmaps"), &["cm"], &[]),
    names(("", "Endpoints", "endpoints"), &["ep"], &[]),
    names(("", "Event", "events"), &["ev"], &[]),
    names(("", "LimitRange", "limitranges"), &["limits"], &[]),
    names(("", "Namespace", "namespaces"), &["ns"], &[]),
    names(("", "Node", "nodes"), &["no"], &[]),
    names(("", "PersistentVolume", "persistentvolumes"), &["pv"], &[]),
    names(
        ("", "PersistentVolumeClaim", "persistentvolumeclaims"),
        &["pvc"],
        &[],
    ),
    names(("", "Pod", "pods"), &["po"], ALL),
    names(
        ("", "ReplicationController", "replicationcontrollers"),
        &["rc"],
        ALL,
    ),
    names(("", "ResourceQuota", "resourcequotas"), &["quota"], &[]),
    names(("", "Service", "services"), &["svc"], ALL),
    names(("", "ServiceAccount", "serviceaccounts"), &["sa"], &[]),
    names(
        (
            "admissionregistration.k8s.io",
            "MutatingAdmissionPolicy",
            "mutatingadmissionpolicies",
        ),
        &[],
        API_EXTENSIONS,
    ),
    names(
        (
            "admissionregistration.k8s.io",
            "MutatingAdmissionPolicyBinding",
            "mutatingadmissionpolicybindings",
        ),
        &[],
        API_EXTENSIONS,
    ),
    names(
        (
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
        ),
        &[],
        API_EXTENSIONS,
    ),
    names(
        (
            "admissionregistration.k8s.io",
            "ValidatingAdmissionPolicy",
            "validatingadmissionpolicies",
        ),
        &[],
        API_EXTENSIONS,
    ),
    names(
        (
            "admissionregistration.k8s.io",
            "ValidatingAdmissionPolicyBinding",
            "validatingadmissionpolicybindings",
        ),
        &[],
        API_EXTENSIONS,
    ),
    names(
        (
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
        ),
        &[],
        API_EXTENSIONS,
    ),
    names(
        (
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            "customresourcedefinitions",
        ),
        &["crd", "crds"],
        API_EXTENSIONS,
    ),
    names(
        ("apiregistration.k8s.io", "APIService", "apiservices"),
        &[],
        API_EXTENSIONS,
    ),
    names(("apps", "DaemonSet", "daemonsets"), &["ds"], ALL),
    names(("apps", "Deployment", "deployments"), &["deploy"], ALL),
    names(("apps", "ReplicaSet", "replicasets"), &["rs"], ALL),
    names(("apps", "StatefulSet", "statefulsets"), &["sts"], ALL),
    names(
        (
            "autoscaling",
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
        ),
        &["hpa"],
        ALL,
    ),
    names(("batch", "CronJob", "cronjobs"), &["cj"], ALL),
    names(("batch", "Job", "jobs"), &[], ALL),
    names(
        (
            "certificates.k8s.io",
            "CertificateSigningRequest",
            "certificatesigningrequests",
        ),
        &["csr"],
        &[],
    ),
    names(("events.k8s.io", "Event", "events"), &["ev"], &[]),
    names(("networking.k8s.io", "Ingress", "ingresses"), &["ing"], &[]),
    names(
        ("networking.k8s.io", "IPAddress", "ipaddresses"),
        &["ip"],
        &[],
    ),
    names(
        ("networking.k8s.io", "NetworkPolicy", "networkpolicies"),
        &["netpol"],
        &[],
    ),
    names(
        ("policy", "PodDisruptionBudget", "poddisruptionbudgets"),
        &["pdb"],
        &[],
    ),
    names(
        ("scheduling.k8s.io", "PriorityClass", "priorityclasses"),
        &["pc"],
        &[],
    ),
    names(
        ("storage.k8s.io", "StorageClass", "storageclasses"),
        &["sc"],
        &[],
    ),
    names(
        (
            "storage.k8s.io",
            "VolumeAttributesClass",
            "volumeattributesclasses",
        ),
        &["vac"],
        &[],
    ),
];

/// The names kube-apiserver gives the built-in `kind` of `group` (any version: a kind
/// keeps its names across versions), where it has any beyond the guess from its kind.
pub fn known(group: &str, kind: &str) -> Option<&'static KubeNames> {
    KNOWN.iter().find(|k| k.group == group && k.kind == kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guess_plural;

    #[test]
    fn every_name_is_kube_apiservers_and_each_kind_is_listed_once() {
        for (i, known) in KNOWN.iter().enumerate() {
            assert_eq!(
                KNOWN[..i]
                    .iter()
                    .find(|k| (k.group, k.kind) == (known.group, known.kind)),
                None,
                "{known:?} twice"
            );
            // What makes it worth a row: a name beyond the guess.
            assert!(
                !known.short_names.is_empty()
                    || !known.categories.is_empty()
                    || known.plural != guess_plural(known.kind),
                "{known:?} adds nothing to the guess"
            );
        }
        assert_eq!(known("apps", "ReplicaSet").unwrap().short_names, ["rs"]);
        assert_eq!(known("", "Endpoints").unwrap().plural, "endpoints");
        assert_ne!(guess_plural("Endpoints"), "endpoints");
        assert_eq!(known("", "Service").unwrap().categories, ["all"]);
        assert_eq!(known("example.com", "Service"), None);
        assert_eq!(known("", "Widget"), None);
    }

    #[test]
    fn a_typed_kind_has_the_plural_kube_apiserver_serves_it_as() {
        for &(api_version, kind) in k8s::typed::KINDS {
            let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
            let (plural, _) = k8s::typed::names(api_version, kind).unwrap();
            let kube =
                known(group, kind).map_or_else(|| guess_plural(kind), |k| k.plural.to_owned());
            assert_eq!(plural, kube, "{kind} of {api_version}");
        }
    }
}
