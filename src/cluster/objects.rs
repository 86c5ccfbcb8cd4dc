//! An object of the built-in apiserver's making, as the run writes it to a real server.

use serde_json::Value;

use scenario::Scope;

/// The prefix a pod's `spec.nodeName` gets on a real server: no kubelet of a real cluster
/// runs a pod bound to a node of that name, so the run's pods are never started.
pub const NODE_PREFIX: &str = "informer-mem-absent-";

/// `object` as a client would create it in `namespace`: without the metadata a server sets
/// (uid, resourceVersion, creationTimestamp, generation), in the run's namespace, and for a
/// pod bound to a node no kubelet runs ([`NODE_PREFIX`]). Its labels, annotations and
/// `managedFields` stay: kube-apiserver keeps the managedFields a request gives and adds
/// the entry of the run's own write.
pub fn for_server(object: &Value, namespace: &str) -> Value {
    let mut copy = object.clone();
    if let Some(metadata) = copy.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in ["uid", "resourceVersion", "creationTimestamp", "generation"] {
            metadata.remove(field);
        }
        metadata.insert("namespace".to_owned(), Value::from(namespace));
    }
    if let Some(node) = copy.pointer_mut("/spec/nodeName")
        && let Some(name) = node.as_str()
    {
        *node = Value::from(format!("{NODE_PREFIX}{name}"));
    }
    copy
}

/// `scope` as it selects the run's objects on a real server, where a pod's node carries
/// [`NODE_PREFIX`] ([`for_server`]).
pub fn scope_on_server(scope: &Scope) -> Scope {
    Scope {
        // The run's objects are in its one namespace there; a variant of one of the
        // scenario's namespaces is refused before it runs.
        namespaces: Vec::new(),
        label_selector: scope.label_selector.clone(),
        field_selector: scope
            .field_selector
            .clone()
            .with_values("spec.nodeName", |node| format!("{NODE_PREFIX}{node}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn drops_what_the_server_sets_and_moves_the_object() {
        let pod = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "web-0", "namespace": "ns-3", "uid": "u", "resourceVersion": "7",
                "creationTimestamp": "2024-01-01T00:00:00Z", "generation": 1,
                "labels": {"app": "web"}, "managedFields": [{"manager": "kubectl"}],
            },
            "spec": {"nodeName": "node-1", "containers": []},
        });
        let copy = for_server(&pod, "informer-mem-run-x-0");
        assert_eq!(
            copy["metadata"],
            json!({
                "name": "web-0", "namespace": "informer-mem-run-x-0",
                "labels": {"app": "web"}, "managedFields": [{"manager": "kubectl"}],
            })
        );
        assert_eq!(copy["spec"]["nodeName"], "informer-mem-absent-node-1");
    }

    #[test]
    fn a_node_selector_selects_the_pods_as_the_server_holds_them() {
        let fields = k8s::FieldSelector::parse("spec.nodeName=node-1,status.phase!=x");
        let scope = Scope {
            label_selector: k8s::LabelSelector::parse("app=web").unwrap(),
            field_selector: fields.unwrap(),
            ..Scope::default()
        };
        let on_server = scope_on_server(&scope);
        assert_eq!(on_server.label_selector, scope.label_selector);
        assert_eq!(
            on_server.field_selector.to_string(),
            "spec.nodeName=informer-mem-absent-node-1,status.phase!=x"
        );
    }
}
