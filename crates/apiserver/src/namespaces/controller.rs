//! The namespace controller (kube-controller-manager's, k8s.io/kubernetes
//! pkg/controller/namespace/deletion), run by the built-in server after every write
//! into a terminating namespace, the namespace's own DELETE first ([`after_writes`]).
//!
//! A pass ([`sync`]) deletes what is in the namespace as the controller's
//! deletecollection of each resource does (background propagation): the Pods first,
//! and nothing else while a Pod is left; then the rest. What has finalizers stays,
//! marked; in `serve` the kubelet ends deleted Pods at once, stand-alone nothing does
//! ([`crate::ApiServer::stand_alone`]). The namespace's status conditions
//! then say what the pass found, in the controller's words (`NamespaceContentRemaining`:
//! "Some resources are remaining: configmaps. has 1 resource instances";
//! `NamespaceFinalizersRemaining`: "... example.com/hold in 1 resource instances"), and
//! once nothing is left the `kubernetes` finalizer is taken out of its spec, which
//! deletes the namespace where no other finalizer holds it (its spec's, which a client
//! changes through `/finalize`, or its metadata's). Where the real controller retries
//! on a timer (8 seconds after content with finalizers), this one passes again after
//! the next write there: the one that lets the namespace go finishes it before its
//! answer.

use std::collections::BTreeMap;

use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use serde_json::{Value, json};

use super::{KUBERNETES, typed};
use crate::apply::{self, Writer};
use crate::records::Records;
use crate::write;
use scenario::ObjectKind;

/// Who writes the controller's changes to the namespace, as a cluster names it.
const MANAGER: &str = "kube-controller-manager";

/// The controller's condition types, in the order it first writes them.
const CONDITIONS: [(&str, &str, &str); 5] = [
    (
        "NamespaceDeletionDiscoveryFailure",
        "ResourcesDiscovered",
        "All resources successfully discovered",
    ),
    (
        "NamespaceDeletionGroupVersionParsingFailure",
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed",
    ),
    (
        "NamespaceDeletionContentFailure",
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    (
        CONTENT_REMAINING,
        "ContentRemoved",
        "All content successfully removed",
    ),
    (
        FINALIZERS_REMAINING,
        "ContentHasNoFinalizers",
        "All content-preserving finalizers finished",
    ),
];

const CONTENT_REMAINING: &str = "NamespaceContentRemaining";
const FINALIZERS_REMAINING: &str = "NamespaceFinalizersRemaining";

/// After a write (any method but a read) into a namespace (`/api/v1/namespaces/{ns}...`,
/// `/apis/{group}/{version}/namespaces/{ns}...`) that is terminating once it is made: a
/// pass of the controller, before the answer goes back.
pub(crate) async fn after_writes(
    State(records): State<Records>,
    request: Request,
    next: Next,
) -> Response {
    let read = matches!(*request.method(), Method::GET | Method::HEAD);
    let namespace = (!read)
        .then(|| written_namespace(request.uri().path()))
        .flatten()
        .map(str::to_owned);
    let response = next.run(request).await;
    if let Some(namespace) = namespace
        && records.server().is_terminating(&namespace)
    {
        sync(&records, &namespace);
    }
    response
}

/// The namespace an API path is in, or names (`/api/v1/namespaces/{ns}`).
fn written_namespace(path: &str) -> Option<&str> {
    let mut segments = path.split('/').skip(1);
    let skip = match segments.next()? {
        "api" => 1,
        "apis" => 2,
        _ => return None,
    };
    let mut segments = segments.skip(skip);
    (segments.next()? == "namespaces")
        .then(|| segments.next())
        .flatten()
        .filter(|ns| !ns.is_empty())
}

/// One pass of the controller over namespace `name`, when its deletion waits for its
/// `kubernetes` finalizer.
pub(crate) fn sync(records: &Records, name: &str) {
    let Some(namespace) = records.server().namespace_object(name) else {
        return;
    };
    let waits = (namespace["spec"]["finalizers"].as_array())
        .is_some_and(|f| f.iter().any(|f| f == KUBERNETES));
    if namespace["metadata"]["deletionTimestamp"].is_null() || !waits {
        return;
    }
    let left = delete_content(records, name);
    // Each write fails only where the namespace is already gone: nothing left to do.
    let noted = records.update_namespace(name, false, |live| Ok(with_conditions(live, &left)));
    if noted.is_ok() && left.is_empty() {
        records
            .update_namespace(name, false, |live| Ok(finalized(live)))
            .ok();
    }
}

/// What a pass left in the namespace: instances by resource (`configmaps.`,
/// `deployments.apps`) and by finalizer; `pods_first` when Pods were left, and so
/// nothing else deleted yet.
#[derive(Debug, Default)]
struct Left {
    resources: BTreeMap<String, usize>,
    finalizers: BTreeMap<String, usize>,
    pods_first: bool,
}

impl Left {
    fn count(&mut self, (plural, group): (&str, &str), finalizers: &Value) {
        *self
            .resources
            .entry(format!("{plural}.{group}"))
            .or_default() += 1;
        for finalizer in finalizers.as_array().into_iter().flatten() {
            if let Some(finalizer) = finalizer.as_str() {
                *self.finalizers.entry(finalizer.to_owned()).or_default() += 1;
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.resources.is_empty()
    }
}

/// Deletes what is in namespace `name`: the scenario's objects, Pods before anything
/// else, then the records.
fn delete_content(records: &Records, name: &str) -> Left {
    let server = records.server();
    let kind = server.spec().kind;
    let mut left = Left::default();
    for finalizers in write::empty_namespace(server, name) {
        left.count((kind.plural(), kind.group()), &finalizers);
    }
    if kind == ObjectKind::Pod && !left.is_empty() {
        left.pods_first = true;
        return left;
    }
    for (api, finalizers) in records.delete_namespace_content(name) {
        left.count((api.plural(), api.group()), &finalizers);
    }
    left
}

/// Namespace `live` with the conditions a pass that `left` this writes
/// (`namespaceConditionUpdater`): each of the controller's types set, a type already
/// there changed in place (its transition time moved only when its status changes),
/// and its managedFields entry. While Pods are left the controller writes the types'
/// "all done" forms, as it does.
fn with_conditions(live: &Value, left: &Left) -> Value {
    let now = write::now();
    let mut conditions: Vec<Value> = (live["status"]["conditions"].as_array())
        .cloned()
        .unwrap_or_default();
    for (kind, reason, message) in CONDITIONS {
        let (status, reason, message) = match remaining(kind, left) {
            Some((reason, message)) => ("True", reason, message),
            None => ("False", reason, message.to_owned()),
        };
        let condition = json!({
            "type": kind, "status": status, "lastTransitionTime": now,
            "reason": reason, "message": message,
        });
        match conditions.iter_mut().find(|c| c["type"] == kind) {
            None => conditions.push(condition),
            Some(old) if old["status"] != status => *old = condition,
            Some(old) => {
                old["reason"] = json!(reason);
                old["message"] = json!(message);
            }
        }
    }
    if live["status"]["conditions"].as_array() == Some(&conditions) {
        return live.clone();
    }
    let mut object = live.clone();
    object["status"]["conditions"] = Value::Array(conditions);
    written(live, object, "status")
}

/// The reason and message of condition `kind` where it holds ("True") after a pass that
/// `left` this; `None` where it does not.
fn remaining(kind: &str, left: &Left) -> Option<(&'static str, String)> {
    if left.pods_first {
        return None;
    }
    let each = |counts: &BTreeMap<String, usize>, form: &dyn Fn(&str, usize) -> String| {
        let each: Vec<String> = counts.iter().map(|(k, n)| form(k, *n)).collect();
        each.join(", ")
    };
    match kind {
        CONTENT_REMAINING if !left.resources.is_empty() => Some((
            "SomeResourcesRemain",
            format!(
                "Some resources are remaining: {}",
                each(&left.resources, &|r, n| format!(
                    "{r} has {n} resource instances"
                ))
            ),
        )),
        FINALIZERS_REMAINING if !left.finalizers.is_empty() => Some((
            "SomeFinalizersRemain",
            format!(
                "Some content in the namespace has finalizers remaining: {}",
                each(&left.finalizers, &|f, n| format!(
                    "{f} in {n} resource instances"
                ))
            ),
        )),
        _ => None,
    }
}

/// Namespace `live` as the controller finalizes it (`/finalize`): its spec's finalizers
/// but `kubernetes`, sorted.
fn finalized(live: &Value) -> Value {
    let mut finalizers: Vec<Value> = (live["spec"]["finalizers"].as_array().into_iter())
        .flatten()
        .filter(|f| *f != KUBERNETES)
        .cloned()
        .collect();
    finalizers.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
    finalizers.dedup();
    let mut object = live.clone();
    object["spec"] = match finalizers.is_empty() {
        true => json!({}),
        false => json!({"finalizers": finalizers}),
    };
    written(live, object, "finalize")
}

/// `object`, the controller's write of `live` through `subresource`, with its
/// managedFields entry.
fn written(live: &Value, mut object: Value, subresource: &str) -> Value {
    let writer = Writer {
        manager: MANAGER,
        subresource: Some(subresource),
    };
    let entries = apply::update_of(&typed(), Some(live), &object, writer, &write::now());
    object["metadata"]["managedFields"] = Value::Array(entries);
    object
}

#[cfg(test)]
mod tests {
    use super::written_namespace;

    #[test]
    fn a_write_is_in_the_namespace_its_path_names() {
        let cases = [
            ("/api/v1/namespaces/a/configmaps", Some("a")),
            ("/api/v1/namespaces/a", Some("a")),
            ("/apis/apps/v1/namespaces/b/deployments/x/scale", Some("b")),
            ("/apis/apps/v1/deployments", None),
            ("/api/v1/namespaces", None),
            ("/api/v1/namespaces/", None),
            ("/version", None),
        ];
        for (path, namespace) in cases {
            assert_eq!(written_namespace(path), namespace, "{path}");
        }
    }
}
