//! API groups: the core group under `/api/v1`, `apps` under `/apis/apps/v1`, and the
//! group of a sampled kind of any other (`/apis/example.com/v1alpha1`). The same handlers
//! serve every group; a type parameter tells them which one a route is for, so that
//! `/api/v1/deployments` is as unknown here as on kube-apiserver. A group's name and root
//! are asked with the kind the server serves, as a sampled kind's group is known only
//! when its scenario is read.

use scenario::ObjectKind;

/// A group whose resources the routes serve.
pub trait Group: Send + Sync + 'static {
    /// The group's name on a server of `served` objects: `""` for the core group.
    fn name(served: ObjectKind) -> &'static str;
    /// The path its resources are served under.
    fn root(served: ObjectKind) -> &'static str;
    /// The version it serves (the only one).
    #[cfg(feature = "server")]
    fn version(served: ObjectKind) -> &'static str;
    /// Whether a server of `served` objects serves this group: the core group always,
    /// `apps` when the kind is in it, a sampled kind's own group when it is another.
    /// A group without the scenario's kind has none of its objects to serve (over TCP the
    /// records' groups are routed beside, `records::GROUPS`).
    fn served_with(served: ObjectKind) -> bool;

    /// The kind this group serves under a plural resource name, on a server of `served`
    /// objects.
    fn kind(served: ObjectKind, plural: &str) -> Option<ObjectKind> {
        ObjectKind::served(served, Self::name(served), plural)
    }
}

/// The core group (`v1`): pods, configmaps, secrets, nodes, namespaces.
#[derive(Debug)]
pub struct Core;

impl Group for Core {
    fn name(_: ObjectKind) -> &'static str {
        ""
    }

    fn root(_: ObjectKind) -> &'static str {
        "/api/v1"
    }

    #[cfg(feature = "server")]
    fn version(_: ObjectKind) -> &'static str {
        "v1"
    }

    fn served_with(_: ObjectKind) -> bool {
        true
    }
}

/// `apps/v1`: deployments.
#[derive(Debug)]
pub struct Apps;

impl Group for Apps {
    fn name(_: ObjectKind) -> &'static str {
        "apps"
    }

    fn root(_: ObjectKind) -> &'static str {
        "/apis/apps/v1"
    }

    #[cfg(feature = "server")]
    fn version(_: ObjectKind) -> &'static str {
        "v1"
    }

    fn served_with(served: ObjectKind) -> bool {
        served.group() == "apps"
    }
}

/// The group of a sampled kind in neither the core group nor `apps` (a custom
/// resource's): its name and root are the kind's.
#[derive(Debug)]
pub struct SampledGroup;

impl Group for SampledGroup {
    fn name(served: ObjectKind) -> &'static str {
        served.group()
    }

    fn root(served: ObjectKind) -> &'static str {
        served.api_root()
    }

    #[cfg(feature = "server")]
    fn version(served: ObjectKind) -> &'static str {
        served.version()
    }

    fn served_with(served: ObjectKind) -> bool {
        !matches!(served.group(), "" | "apps")
    }

    /// The served kind, under its plural: the group has no other.
    fn kind(served: ObjectKind, plural: &str) -> Option<ObjectKind> {
        Some(served).filter(|k| Self::served_with(*k) && k.plural() == plural)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scenario::widgets;

    #[test]
    fn every_kind_is_served_under_its_groups_root_and_only_there() {
        let widget = widgets().kind();
        for kind in ObjectKind::ALL.into_iter().chain([widget]) {
            let root = match kind.group() {
                "" => Core::root(kind),
                "apps" => Apps::root(kind),
                _ => SampledGroup::root(kind),
            };
            assert_eq!(kind.api_root(), root, "{kind:?}");
            assert_eq!(
                kind.api_version(),
                root.trim_start_matches("/api/")
                    .trim_start_matches("/apis/")
            );
            let served = |found: Option<ObjectKind>| found == Some(kind);
            assert_eq!(
                served(Core::kind(kind, kind.plural())),
                kind.group().is_empty()
            );
            assert_eq!(
                served(Apps::kind(kind, kind.plural())),
                kind.group() == "apps"
            );
            assert_eq!(
                served(SampledGroup::kind(kind, kind.plural())),
                kind == widget
            );
            assert!(Core::served_with(kind));
            assert_eq!(Apps::served_with(kind), kind.group() == "apps");
            assert_eq!(SampledGroup::served_with(kind), kind == widget);
        }
        // A server of widgets serves no widgets in the core group, nor pods in theirs.
        assert_eq!(Core::kind(widget, "widgets"), None);
        assert_eq!(SampledGroup::kind(widget, "pods"), None);
    }
}
