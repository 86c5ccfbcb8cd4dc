//! The kinds of objects a scenario serves: the five the generator makes, and any other
//! kind a sample brings ([`SampledKind`]: a custom resource, or a built-in kind the tool
//! has no model of), served as its sample gives it.

use std::sync::Mutex;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Resource kinds the built-in apiserver can serve.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ObjectKind {
    /// core/v1 Pod.
    #[default]
    Pod,
    /// core/v1 ConfigMap.
    ConfigMap,
    /// core/v1 Secret.
    Secret,
    /// core/v1 Node, cluster-scoped.
    Node,
    /// apps/v1 Deployment.
    Deployment,
    /// A kind only a sample gives (`objects.sample`): its objects are the sample's
    /// copies, served as JSON and read by dynamic informers.
    Sampled(&'static SampledKind),
}

impl ObjectKind {
    /// Every kind the generator makes, in discovery order.
    pub const ALL: [ObjectKind; 5] = [
        ObjectKind::Pod,
        ObjectKind::ConfigMap,
        ObjectKind::Secret,
        ObjectKind::Node,
        ObjectKind::Deployment,
    ];

    /// The kind's name (`Pod`).
    pub fn as_str(self) -> &'static str {
        match self {
            ObjectKind::Pod => "Pod",
            ObjectKind::ConfigMap => "ConfigMap",
            ObjectKind::Secret => "Secret",
            ObjectKind::Node => "Node",
            ObjectKind::Deployment => "Deployment",
            ObjectKind::Sampled(kind) => &kind.kind,
        }
    }

    /// The kind's API group: "" for the core group.
    pub fn group(self) -> &'static str {
        match self {
            ObjectKind::Deployment => "apps",
            ObjectKind::Pod | ObjectKind::ConfigMap | ObjectKind::Secret | ObjectKind::Node => "",
            ObjectKind::Sampled(kind) => &kind.group,
        }
    }

    /// The kind's version (`v1`).
    pub fn version(self) -> &'static str {
        match self {
            ObjectKind::Sampled(kind) => &kind.version,
            _ => "v1",
        }
    }

    /// The kind's `apiVersion` (`v1`, `apps/v1`).
    pub fn api_version(self) -> &'static str {
        match self {
            ObjectKind::Deployment => "apps/v1",
            ObjectKind::Pod | ObjectKind::ConfigMap | ObjectKind::Secret | ObjectKind::Node => "v1",
            ObjectKind::Sampled(kind) => &kind.api_version,
        }
    }

    /// Where the kind's resources are served: `/api/v1` or `/apis/{group}/{version}`.
    pub fn api_root(self) -> &'static str {
        match self {
            ObjectKind::Deployment => "/apis/apps/v1",
            ObjectKind::Pod | ObjectKind::ConfigMap | ObjectKind::Secret | ObjectKind::Node => {
                "/api/v1"
            }
            ObjectKind::Sampled(kind) => &kind.api_root,
        }
    }

    /// The kind as kube-apiserver names it in messages: `Pod`, `Deployment.apps`.
    pub fn qualified_kind(self) -> &'static str {
        match self {
            ObjectKind::Deployment => "Deployment.apps",
            ObjectKind::Sampled(kind) => &kind.qualified_kind,
            kind => kind.as_str(),
        }
    }

    /// The resource as kube-apiserver names it in messages: `pods`, `deployments.apps`.
    pub fn resource_name(self) -> &'static str {
        match self {
            ObjectKind::Deployment => "deployments.apps",
            ObjectKind::Sampled(kind) => &kind.resource_name,
            kind => kind.plural(),
        }
    }

    /// The path of the kind's collection in `namespace`, or across all namespaces
    /// (`/api/v1/pods`, `/apis/apps/v1/namespaces/web/deployments`).
    pub fn collection_path(self, namespace: Option<&str>) -> String {
        let (root, plural) = (self.api_root(), self.plural());
        match namespace {
            None => format!("{root}/{plural}"),
            Some(ns) => format!("{root}/namespaces/{ns}/{plural}"),
        }
    }

    /// Whether the apiserver keeps a `metadata.generation` for the kind, bumped by each
    /// change of its spec (a sampled kind: when its sample has one, as every custom
    /// resource has).
    pub fn has_generation(self) -> bool {
        match self {
            ObjectKind::Pod | ObjectKind::Deployment => true,
            ObjectKind::Sampled(kind) => kind.generation,
            _ => false,
        }
    }

    /// Whether the kind has a status subresource: its status is written there, and writes
    /// to the object leave it as it was. A sampled kind has one when its sample's objects
    /// have a `status`, as the CRDs of controllers that write one declare it (kubebuilder's
    /// `+kubebuilder:subresource:status`); its writes are whole otherwise.
    pub fn has_status(self) -> bool {
        match self {
            ObjectKind::Pod | ObjectKind::Node | ObjectKind::Deployment => true,
            ObjectKind::Sampled(kind) => kind.top_level.contains(&"status"),
            ObjectKind::ConfigMap | ObjectKind::Secret => false,
        }
    }

    /// Whether objects of the kind live in namespaces.
    pub fn namespaced(self) -> bool {
        match self {
            ObjectKind::Node => false,
            ObjectKind::Sampled(kind) => kind.namespaced,
            _ => true,
        }
    }

    /// Whether the generator makes objects of the kind (a sampled kind's come only from
    /// its sample).
    pub fn generated(self) -> bool {
        !matches!(self, ObjectKind::Sampled(_))
    }

    /// Whether informers may hold the kind typed: a built-in kind, the generator's or one
    /// a sample brings ([`k8s::typed`]); not a custom resource.
    pub fn held_typed(self) -> bool {
        k8s::typed::is_typed(self.api_version(), self.as_str())
    }

    /// The fields a `fieldSelector` can select objects of the kind by, and old names
    /// still taken for some, as kube-apiserver v1.37 converts field labels
    /// (pkg/apis/core/v1/conversion.go; ConfigMaps have only the defaults, as a custom
    /// resource without `selectableFields`).
    #[allow(
        clippy::type_complexity,
        reason = "two constant tables, read together by both callers"
    )]
    pub fn selectable_fields(
        self,
    ) -> (
        &'static [&'static str],
        &'static [(&'static str, &'static str)],
    ) {
        match self {
            ObjectKind::Pod => (
                &[
                    "metadata.name",
                    "metadata.namespace",
                    "spec.nodeName",
                    "spec.restartPolicy",
                    "spec.schedulerName",
                    "spec.serviceAccountName",
                    "spec.hostNetwork",
                    "status.phase",
                    "status.podIP",
                    "status.podIPs",
                    "status.nominatedNodeName",
                ],
                &[("spec.host", "spec.nodeName")],
            ),
            ObjectKind::Node => (&["metadata.name", "spec.unschedulable"], &[]),
            ObjectKind::Sampled(kind) if !kind.namespaced => (&["metadata.name"], &[]),
            ObjectKind::ConfigMap | ObjectKind::Deployment | ObjectKind::Sampled(_) => {
                (&["metadata.name", "metadata.namespace"], &[])
            }
            ObjectKind::Secret => (&["metadata.name", "metadata.namespace", "type"], &[]),
        }
    }

    /// The short names kube-apiserver gives the resource (`po`), where it is one of its
    /// built-in kinds; none for a custom resource.
    pub fn short_names(self) -> &'static [&'static str] {
        self.kube_names().map_or(&[], |k| k.short_names)
    }

    /// The categories kube-apiserver puts the resource in (`all`, which `kubectl get all`
    /// lists), where it is one of its built-in kinds.
    pub fn categories(self) -> &'static [&'static str] {
        self.kube_names().map_or(&[], |k| k.categories)
    }

    /// kube-apiserver's names of the resource, where it is one of its built-in kinds
    /// served under kube-apiserver's plural (not a sample served as `objects.resource`
    /// names otherwise).
    fn kube_names(self) -> Option<&'static super::kube_names::KubeNames> {
        super::kube_names::known(self.group(), self.as_str()).filter(|k| k.plural == self.plural())
    }

    /// The resource's plural name in URLs (`pods`).
    pub fn plural(self) -> &'static str {
        match self {
            ObjectKind::Pod => "pods",
            ObjectKind::ConfigMap => "configmaps",
            ObjectKind::Secret => "secrets",
            ObjectKind::Node => "nodes",
            ObjectKind::Deployment => "deployments",
            ObjectKind::Sampled(kind) => &kind.plural,
        }
    }

    /// The kind's top-level fields besides `apiVersion` and `kind`: where a transform's
    /// field path can start (a sampled kind's: those its sample's objects have).
    pub fn top_level_fields(self) -> &'static [&'static str] {
        match self {
            ObjectKind::Pod => &["metadata", "spec", "status"],
            ObjectKind::ConfigMap => &["metadata", "data", "binaryData", "immutable"],
            ObjectKind::Secret => &["metadata", "data", "stringData", "type", "immutable"],
            ObjectKind::Node | ObjectKind::Deployment => &["metadata", "spec", "status"],
            ObjectKind::Sampled(kind) => &kind.top_level,
        }
    }

    /// The kind a group serves under a plural resource name (`""` for the core group),
    /// on a server whose scenario serves `served`: a built-in kind, or the served kind
    /// when it is a sampled one of that group.
    pub fn served(served: ObjectKind, group: &str, plural: &str) -> Option<ObjectKind> {
        ObjectKind::in_group(served, group).find(|k| k.plural() == plural)
    }

    /// The kinds `group` serves on a server of `served` objects: the built-in ones of the
    /// group, and the served kind if it is a sampled one of the group.
    pub fn in_group(served: ObjectKind, group: &str) -> impl Iterator<Item = ObjectKind> + '_ {
        ObjectKind::ALL
            .into_iter()
            .chain(Some(served).filter(|k| !k.generated()))
            .filter(move |k| k.group() == group)
    }

    /// The built-in kind of `api_version` named `kind`, if the generator makes it.
    pub fn built_in(api_version: &str, kind: &str) -> Option<ObjectKind> {
        ObjectKind::ALL
            .into_iter()
            .find(|k| k.api_version() == api_version && k.as_str() == kind)
    }
}

/// The kind's name, as kube writes it (`Pod`, `Widget`).
impl std::fmt::Display for ObjectKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A kind the tool has no model of, defined by its sample: group, version, kind, the
/// plural name it is served under and its scope. Made once per definition and kept for
/// the process (a handful of bytes), so that [`ObjectKind`] stays `Copy` and its names
/// `&'static str` whatever kind a scenario brings.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SampledKind {
    group: String,
    version: String,
    kind: String,
    plural: String,
    namespaced: bool,
    generation: bool,
    top_level: Vec<&'static str>,
    api_version: String,
    api_root: String,
    qualified_kind: String,
    resource_name: String,
}

/// The definition a [`SampledKind`] is made from, and how reports write one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SampledKindDef {
    /// `apiVersion`: `group/version`, or `version` in the core group.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// The plural name it is served under.
    pub resource: String,
    /// Whether its objects live in namespaces.
    pub namespaced: bool,
    /// Whether its objects carry a `metadata.generation`.
    pub generation: bool,
    /// Its objects' top-level fields besides `apiVersion` and `kind`.
    pub fields: Vec<String>,
}

/// Every sampled kind made so far: one per definition.
static SAMPLED: Mutex<Vec<&'static SampledKind>> = Mutex::new(Vec::new());

impl SampledKindDef {
    /// The kind of this definition, made the first time it is asked for.
    pub fn kind(&self) -> ObjectKind {
        let (group, version) = match self.api_version.split_once('/') {
            Some((group, version)) => (group, version),
            None => ("", self.api_version.as_str()),
        };
        let (api_root, qualified_kind, resource_name) = match group {
            "" => (
                format!("/api/{version}"),
                self.kind.clone(),
                self.resource.clone(),
            ),
            _ => (
                format!("/apis/{group}/{version}"),
                format!("{}.{group}", self.kind),
                format!("{}.{group}", self.resource),
            ),
        };
        let mut made = SAMPLED.lock().unwrap_or_else(|e| e.into_inner());
        let found = made.iter().find(|k| {
            k.api_version == self.api_version
                && k.kind == self.kind
                && k.plural == self.resource
                && k.namespaced == self.namespaced
                && k.generation == self.generation
                && k.top_level.iter().eq(self.fields.iter())
        });
        if let Some(kind) = found {
            return ObjectKind::Sampled(kind);
        }
        let kind: &'static SampledKind = Box::leak(Box::new(SampledKind {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: self.kind.clone(),
            plural: self.resource.clone(),
            namespaced: self.namespaced,
            generation: self.generation,
            top_level: self
                .fields
                .iter()
                .map(|f| &*Box::leak(f.clone().into_boxed_str()))
                .collect(),
            api_version: self.api_version.clone(),
            api_root,
            qualified_kind,
            resource_name,
        }));
        made.push(kind);
        ObjectKind::Sampled(kind)
    }
}

impl SampledKind {
    /// The definition this kind was made from.
    pub fn def(&self) -> SampledKindDef {
        SampledKindDef {
            api_version: self.api_version.clone(),
            kind: self.kind.clone(),
            resource: self.plural.clone(),
            namespaced: self.namespaced,
            generation: self.generation,
            fields: self.top_level.iter().map(|f| (*f).to_owned()).collect(),
        }
    }
}

/// The plural name kube guesses for a kind (apimachinery's `UnsafeGuessKindToResource`):
/// `Widget` → `widgets`, `Policy` → `policies`, `Ingress` → `ingresses`.
pub fn guess_plural(kind: &str) -> String {
    let lower = kind.to_lowercase();
    if lower.ends_with('s') {
        format!("{lower}es")
    } else if let Some(stem) = lower.strip_suffix('y') {
        format!("{stem}ies")
    } else {
        format!("{lower}s")
    }
}

/// A kind as a report writes it: a built-in kind by its name (`"Pod"`), a sampled kind
/// by its definition.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Written {
    Name(String),
    Sampled(SampledKindDef),
}

impl Serialize for ObjectKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ObjectKind::Sampled(kind) => Written::Sampled(kind.def()).serialize(serializer),
            kind => serializer.serialize_str(kind.as_str()),
        }
    }
}

impl<'de> Deserialize<'de> for ObjectKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Written::deserialize(deserializer)? {
            Written::Sampled(def) => Ok(def.kind()),
            Written::Name(name) => ObjectKind::ALL
                .into_iter()
                .find(|k| k.as_str() == name)
                .ok_or_else(|| {
                    let kinds: Vec<&str> = ObjectKind::ALL.iter().map(|k| k.as_str()).collect();
                    serde::de::Error::custom(format!(
                        "unknown kind `{name}`: the generator makes {}; any other kind comes \
                         from `objects.sample`",
                        kinds.join(", ")
                    ))
                }),
        }
    }
}

/// The definition of a namespaced `Widget` of `example.com/v1alpha1`: the custom resource
/// the tests of this crate and of the crates above it serve and cache.
#[doc(hidden)]
pub fn widgets() -> SampledKindDef {
    SampledKindDef {
        api_version: "example.com/v1alpha1".into(),
        kind: "Widget".into(),
        resource: "widgets".into(),
        namespaced: true,
        generation: true,
        fields: vec!["metadata".into(), "spec".into()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sampled_kind_is_made_once_per_definition_and_named_as_kube_names_it() {
        let kind = widgets().kind();
        assert_eq!(kind, widgets().kind());
        let ObjectKind::Sampled(made) = kind else {
            panic!("{kind:?} is not sampled")
        };
        assert!(std::ptr::eq(
            made,
            match widgets().kind() {
                ObjectKind::Sampled(again) => again,
                other => panic!("{other:?}"),
            }
        ));
        assert_eq!(kind.api_root(), "/apis/example.com/v1alpha1");
        assert_eq!(kind.qualified_kind(), "Widget.example.com");
        assert_eq!(kind.resource_name(), "widgets.example.com");
        assert_eq!(
            kind.collection_path(Some("web")),
            "/apis/example.com/v1alpha1/namespaces/web/widgets"
        );
        assert_eq!(kind.top_level_fields(), ["metadata", "spec"]);
        let cluster = SampledKindDef {
            namespaced: false,
            ..widgets()
        };
        assert_ne!(cluster.kind(), kind);
        let core = SampledKindDef {
            api_version: "v1".into(),
            kind: "Service".into(),
            resource: "services".into(),
            ..widgets()
        }
        .kind();
        assert_eq!(
            (core.group(), core.api_root(), core.qualified_kind()),
            ("", "/api/v1", "Service")
        );
        assert_eq!(core.collection_path(None), "/api/v1/services");
    }

    #[test]
    fn kinds_are_written_and_read_back_built_in_by_name_sampled_by_definition() {
        for kind in ObjectKind::ALL.into_iter().chain([widgets().kind()]) {
            let written = serde_json::to_value(kind).unwrap();
            assert_eq!(
                written.is_string(),
                kind.generated(),
                "{kind:?} is written {written}"
            );
            assert_eq!(serde_json::from_value::<ObjectKind>(written).unwrap(), kind);
        }
        let unknown = serde_json::from_value::<ObjectKind>("Widget".into()).unwrap_err();
        assert!(unknown.to_string().contains("objects.sample"), "{unknown}");
    }

    #[test]
    fn plurals_are_guessed_as_kube_guesses_them() {
        for (kind, plural) in [
            ("Widget", "widgets"),
            ("NetworkPolicy", "networkpolicies"),
            ("Ingress", "ingresses"),
            ("EndpointSlice", "endpointslices"),
        ] {
            assert_eq!(guess_plural(kind), plural);
        }
    }
}
