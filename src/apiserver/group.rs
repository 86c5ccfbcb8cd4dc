//! API groups: the core group under `/api/v1` and named groups under `/apis/{group}/v1`.
//! The same handlers serve every group; a type parameter tells them which one a route is
//! for, so that `/api/v1/deployments` is as unknown here as on kube-apiserver.

use crate::scenario::ObjectKind;

/// A group whose resources the routes serve.
pub trait Group: Send + Sync + 'static {
    /// The group's name: `""` for the core group.
    const NAME: &'static str;
    /// The path its resources are served under.
    const ROOT: &'static str;

    /// The kind this group serves under a plural resource name.
    fn kind(plural: &str) -> Option<ObjectKind> {
        ObjectKind::served(Self::NAME, plural)
    }

    /// Whether a server of `kind`'s objects serves this group: the core group always, a
    /// named group when the kind is in it. Serving every group would put their routes
    /// (about 15 KB) in every scenario's apiserver figures, for kinds the scenario never
    /// writes.
    fn served_with(kind: ObjectKind) -> bool {
        Self::NAME.is_empty() || kind.group() == Self::NAME
    }
}

/// The core group (`v1`): pods, configmaps, secrets, nodes, namespaces.
#[derive(Debug)]
pub struct Core;

impl Group for Core {
    const NAME: &'static str = "";
    const ROOT: &'static str = "/api/v1";
}

/// `apps/v1`: deployments.
#[derive(Debug)]
pub struct Apps;

impl Group for Apps {
    const NAME: &'static str = "apps";
    const ROOT: &'static str = "/apis/apps/v1";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_served_under_its_groups_root_and_only_there() {
        for kind in ObjectKind::ALL {
            let root = match kind.group() {
                "" => Core::ROOT,
                "apps" => Apps::ROOT,
                other => panic!("{kind:?} is in a group no route serves: {other}"),
            };
            assert_eq!(kind.api_root(), root, "{kind:?}");
            assert_eq!(
                kind.api_version(),
                root.trim_start_matches("/api/")
                    .trim_start_matches("/apis/")
            );
            assert_eq!(Core::kind(kind.plural()).is_some(), kind.group().is_empty());
            assert_eq!(Apps::kind(kind.plural()).is_some(), kind.group() == "apps");
            assert!(Core::served_with(kind));
            assert_eq!(Apps::served_with(kind), kind.group() == "apps");
        }
    }
}
