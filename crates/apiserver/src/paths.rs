//! A request's path read as kube-apiserver's `RequestInfoFactory` reads one: which
//! collection of which resource it names, if it names one.

/// A path that names a collection: `/api/v1[/namespaces/NS]/RESOURCE` or
/// `/apis/GROUP/VERSION[/namespaces/NS]/RESOURCE`, the old `/watch/` prefix allowed after
/// the version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CollectionPath<'a> {
    /// `""` for the core group.
    pub group: &'a str,
    pub version: &'a str,
    pub namespace: Option<&'a str>,
    pub resource: &'a str,
    /// Under `/watch/`: a watch whatever the query says.
    pub legacy_watch: bool,
}

impl<'a> CollectionPath<'a> {
    /// The collection `path` names, if it names one (not one object, a subresource, or
    /// discovery).
    pub(crate) fn of(path: &'a str) -> Option<CollectionPath<'a>> {
        let mut segments = path.trim_start_matches('/').split('/');
        let (group, version) = match segments.next()? {
            "api" => ("", segments.next()?),
            "apis" => (segments.next()?, segments.next()?),
            _ => return None,
        };
        let mut rest: Vec<&str> = segments.collect();
        let legacy_watch = rest.first() == Some(&"watch");
        if legacy_watch {
            rest.remove(0);
        }
        let (namespace, resource) = match rest.as_slice() {
            [resource] => (None, *resource),
            ["namespaces", namespace, resource] if !namespace.is_empty() => {
                (Some(*namespace), *resource)
            }
            _ => return None,
        };
        (!resource.is_empty() && !version.is_empty()).then_some(CollectionPath {
            group,
            version,
            namespace,
            resource,
            legacy_watch,
        })
    }

    /// The resource as kubectl names it: `pods`, `deployments.apps`.
    pub(crate) fn resource_name(&self) -> String {
        match self.group {
            "" => self.resource.to_owned(),
            group => format!("{}.{group}", self.resource),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::CollectionPath;

    #[test]
    fn collections_are_told_from_objects_subresources_and_discovery() {
        let pods = CollectionPath::of("/api/v1/namespaces/ns/pods").unwrap();
        assert_eq!(
            (pods.group, pods.version, pods.namespace, pods.resource),
            ("", "v1", Some("ns"), "pods")
        );
        let classes = CollectionPath::of("/apis/storage.k8s.io/v1/storageclasses").unwrap();
        assert_eq!(classes.resource_name(), "storageclasses.storage.k8s.io");
        assert!(
            CollectionPath::of("/api/v1/watch/pods")
                .unwrap()
                .legacy_watch
        );
        for other in [
            "/api/v1/namespaces/ns",
            "/api/v1/namespaces/ns/pods/web-0",
            "/api/v1/nodes/node-1/status",
            "/api/v1",
            "/apis/apps",
            "/apis",
            "/version",
            "/api/v1/namespaces//pods",
        ] {
            assert_eq!(CollectionPath::of(other), None, "{other}");
        }
    }
}
