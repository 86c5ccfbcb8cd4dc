//! Every other resource kube-apiserver v1.37 serves, as the empty collection a cluster
//! with none of them holds: a Kubernetes component caches many kinds (kube-scheduler 19:
//! storage classes, CSI drivers, PodDisruptionBudgets, DRA's device classes...) and waits
//! until every cache has synced, so a kind the server answered 404 for would keep it from
//! ever doing its job. One mechanism for all of them, from kube-apiserver's own discovery
//! (proto/resources.tsv): a LIST answers no items at the server's resourceVersion; a
//! WATCH sends nothing (a watch-list first its bookmark that the initial events have
//! ended) and ends at its `timeoutSeconds`, as kube-apiserver's watch of an empty
//! collection does. Writes are not kept: a resource here has no store.
//!
//! Answered only where the network router ([`super::routes::network_router`]) found
//! nothing (404): a path any other route serves (the scenario's kind, the records) is
//! answered there, and the in-process router, whose size is in every report's exact
//! figures, has none of this.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};

use super::paths::CollectionPath;
use super::query::Query;
use scenario::ObjectKind;

/// `group\tversion\tresource\tkind\tscope` for each listable resource (see the file).
const RESOURCES: &str = include_str!("../proto/resources.tsv");

/// How long a watch without `timeoutSeconds` stays open: kube-apiserver's
/// `--min-request-timeout` default.
const DEFAULT_WATCH_SECONDS: u64 = 1800;

/// A resource kube-apiserver serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Resource<'a> {
    group: &'a str,
    version: &'a str,
    resource: &'a str,
    kind: &'a str,
    namespaced: bool,
}

/// Every row of kube-apiserver's table, in its order.
fn rows() -> impl Iterator<Item = Resource<'static>> {
    RESOURCES
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let mut fields = line.split('\t');
            let [group, version, resource, kind, scope] =
                [(); 5].map(|()| fields.next().unwrap_or_default());
            Resource {
                group,
                version,
                resource,
                kind,
                namespaced: scope == "namespaced",
            }
        })
}

/// The resource `path` names in kube-apiserver's table, if it names one there.
fn resource(path: &CollectionPath<'_>) -> Option<Resource<'static>> {
    rows().find(|r| (r.group, r.version, r.resource) == (path.group, path.version, path.resource))
}

/// The rows of kube-apiserver's table a server of `served` objects answers empty: not
/// its own kind's, under any group or version (a sample of core Events is not listed
/// again, empty, in events.k8s.io).
fn empty_for(served: ObjectKind) -> impl Iterator<Item = Resource<'static>> {
    rows().filter(move |r| r.kind != served.as_str())
}

/// The named groups of kube-apiserver's table, each with its version, as `/apis` lists
/// them: what discovery lists beside the server's own groups (which take their place).
pub(crate) fn groups(served: ObjectKind) -> Vec<Value> {
    let mut named: Vec<(&str, &str)> = Vec::new();
    for r in empty_for(served).filter(|r| !r.group.is_empty()) {
        if !named.iter().any(|(group, _)| *group == r.group) {
            named.push((r.group, r.version));
        }
    }
    named
        .into_iter()
        .map(|(group, version)| super::discovery::named_group(group, version))
        .collect()
}

/// The resources of `group` (`""`: the core group) in kube-apiserver's table, as a
/// discovery document lists them, read-only: listed and watched, empty, where nothing
/// else here serves them (a listing of the same name takes their place).
pub(crate) fn listed(served: ObjectKind, group: &str) -> Vec<Value> {
    empty_for(served)
        .filter(|r| r.group == group)
        .map(|r| {
            let mut listed = json!({
                "name": r.resource,
                "singularName": r.kind.to_lowercase(),
                "namespaced": r.namespaced,
                "kind": r.kind,
                "verbs": ["get", "list", "watch"],
            });
            // kubectl's names for it (`kubectl get pv`, `kubectl get all`).
            if let Some(names) = scenario::kube_names::known(r.group, r.kind) {
                if !names.short_names.is_empty() {
                    listed["shortNames"] = json!(names.short_names);
                }
                if !names.categories.is_empty() {
                    listed["categories"] = json!(names.categories);
                }
            }
            listed
        })
        .collect()
}

/// `/apis/{group}` and `/apis/{group}/{version}` of a group only kube-apiserver's table
/// has here (`storage.k8s.io`): its APIGroup and its resource list.
fn discovery(served: ObjectKind, path: &str) -> Option<Value> {
    let rest = path.strip_prefix("/apis/")?.trim_end_matches('/');
    let (group, version) = match rest.split_once('/') {
        Some((group, version)) => (group, Some(version)),
        None => (rest, None),
    };
    let row = empty_for(served).find(|r| r.group == group && !group.is_empty())?;
    match version {
        None => {
            let mut named = super::discovery::named_group(group, row.version);
            named["kind"] = json!("APIGroup");
            named["apiVersion"] = json!("v1");
            Some(named)
        }
        Some(version) if version == row.version => Some(json!({
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": format!("{group}/{version}"),
            "resources": listed(served, group),
        })),
        Some(_) => None,
    }
}

/// The network router's answer, or, where it is 404 and the request reads a collection of
/// a resource kube-apiserver serves, that empty collection ([`answer`]).
pub(crate) async fn where_not_found(
    axum::extract::State(server): axum::extract::State<super::ApiServer>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let (method, uri) = (request.method().clone(), request.uri().clone());
    let response = next.run(request).await;
    if response.status() != StatusCode::NOT_FOUND {
        return response;
    }
    // The scenario's own kind under another group or version (a sample of core Events
    // asked for as events.k8s.io's): a cluster would list its objects there, not none.
    if resource_kind(uri.path()) == Some(server.spec().kind.as_str()) {
        return response;
    }
    if method == Method::GET
        && let Some(document) = discovery(server.spec().kind, uri.path())
    {
        return (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            document.to_string(),
        )
            .into_response();
    }
    let version = server.resource_version();
    let Some(empty) = answer(&method, uri.path(), uri.query(), version) else {
        return response;
    };
    // Only where the router served no such resource: a 404 of a resource it does serve
    // (an object, a namespace that is not there) stands. A 404 is a small body, whole.
    let (parts, body) = response.into_parts();
    let body = axum::body::to_bytes(body, NOT_FOUND_BYTES)
        .await
        .unwrap_or_default();
    if unserved(&body) {
        empty
    } else {
        Response::from_parts(parts, Body::from(body))
    }
}

/// The most of a 404's body read to tell what it says.
const NOT_FOUND_BYTES: usize = 64 << 10;

/// Whether a 404's `body` says the server has no such resource (kube-apiserver's words
/// for it, a Status naming no object, or Go's plain-text 404 of a group it lacks), not
/// that an object or a namespace is missing.
fn unserved(body: &[u8]) -> bool {
    if body.starts_with(b"404 page not found") {
        return true;
    }
    serde_json::from_slice::<serde_json::Value>(body).is_ok_and(|status| {
        status["message"] == "the server could not find the requested resource"
            && status["details"]["name"].as_str().is_none_or(str::is_empty)
    })
}

/// The kind of the resource `path` names in kube-apiserver's table, if it names one.
fn resource_kind(path: &str) -> Option<&'static str> {
    resource(&CollectionPath::of(path)?).map(|r| r.kind)
}

/// The answer to `method` `path`?`query` when it is a read of a collection of a resource
/// kube-apiserver serves and nothing else here does: empty, at resourceVersion `version`.
pub(crate) fn answer(
    method: &Method,
    path: &str,
    query: Option<&str>,
    version: u64,
) -> Option<Response> {
    let collection = CollectionPath::of(path)?;
    let resource = resource(&collection)?;
    // A cluster-scoped resource has no namespaced path: kube-apiserver's 404.
    if collection.namespace.is_some() && !resource.namespaced {
        return None;
    }
    if method != Method::GET {
        let message = format!(
            "the built-in server lists and watches {}, empty, and keeps no writes of them",
            collection.resource_name()
        );
        return Some(super::status::status(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            message,
        ));
    }
    let api_version = match collection.group {
        "" => collection.version.to_owned(),
        group => format!("{group}/{}", collection.version),
    };
    // Read as every other collection's query is: a value that does not decode is a 400.
    let query = match Query::parse(query.unwrap_or_default()) {
        Ok(query) => query,
        Err(e) => return Some(e.into_response()),
    };
    let response = if collection.legacy_watch || query.watch {
        watch(&api_version, resource.kind, version, &query)
    } else {
        let list = json!({
            "kind": format!("{}List", resource.kind),
            "apiVersion": api_version,
            "metadata": {"resourceVersion": version.to_string()},
            "items": [],
        });
        (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            list.to_string(),
        )
            .into_response()
    };
    Some(response)
}

/// A watch of an empty collection: a watch-list's bookmark, then nothing until its time
/// is up.
fn watch(api_version: &str, kind: &str, version: u64, query: &Query) -> Response {
    let bookmark = (query.send_initial_events == Some(true)).then(|| {
        let event = json!({
            "type": "BOOKMARK",
            "object": {
                "kind": kind,
                "apiVersion": api_version,
                "metadata": {
                    "resourceVersion": version.to_string(),
                    "annotations": {"k8s.io/initial-events-end": "true"},
                },
            },
        });
        Ok::<_, std::convert::Infallible>(bytes::Bytes::from(format!("{event}\n")))
    });
    let open = query
        .timeout
        .unwrap_or(Duration::from_secs(DEFAULT_WATCH_SECONDS));
    let events = futures::stream::iter(bookmark).chain(futures::stream::once(async move {
        tokio::time::sleep(open).await;
        Ok(bytes::Bytes::new())
    }));
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        Body::from_stream(events),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body_of(response: Response) -> serde_json::Value {
        let body = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    #[tokio::test]
    async fn a_resource_kube_apiserver_serves_lists_empty_at_the_servers_version() {
        let get = Method::GET;
        let classes = answer(&get, "/apis/storage.k8s.io/v1/storageclasses", None, 42).unwrap();
        assert_eq!(classes.status(), StatusCode::OK);
        let list = body_of(classes).await;
        assert_eq!(list["kind"], "StorageClassList");
        assert_eq!(list["apiVersion"], "storage.k8s.io/v1");
        assert_eq!(list["metadata"]["resourceVersion"], "42");
        assert_eq!(list["items"], json!([]));
        let budgets = "/apis/policy/v1/namespaces/ns/poddisruptionbudgets";
        assert_eq!(
            body_of(answer(&get, budgets, Some("limit=500"), 7).unwrap()).await["kind"],
            "PodDisruptionBudgetList"
        );
        let volumes = answer(&get, "/api/v1/persistentvolumes", None, 1).unwrap();
        assert_eq!(body_of(volumes).await["apiVersion"], "v1");
        // Not kube-apiserver's: another version, a cluster-scoped kind in a namespace, a
        // group it lacks, one object.
        for other in [
            "/apis/policy/v1beta1/poddisruptionbudgets",
            "/apis/storage.k8s.io/v1/namespaces/ns/storageclasses",
            "/apis/example.com/v1/widgets",
            "/apis/storage.k8s.io/v1/storageclasses/standard",
        ] {
            assert!(answer(&get, other, None, 1).is_none(), "{other}");
        }
        let written = answer(
            &Method::POST,
            "/api/v1/namespaces/ns/persistentvolumeclaims",
            None,
            1,
        );
        assert_eq!(written.unwrap().status(), StatusCode::METHOD_NOT_ALLOWED);
    }

    #[test]
    fn kube_apiserver_s_other_groups_are_discovered_read_only_but_the_served_kind_s() {
        let names = |groups: Vec<Value>| -> Vec<String> {
            groups
                .iter()
                .map(|g| g["name"].as_str().unwrap().to_owned())
                .collect()
        };
        let beside_pods = names(groups(ObjectKind::Pod));
        assert!(
            beside_pods.contains(&"storage.k8s.io".to_owned()),
            "{beside_pods:?}"
        );
        let volumes = listed(ObjectKind::Pod, "");
        let pv = volumes
            .iter()
            .find(|r| r["name"] == "persistentvolumes")
            .unwrap();
        assert_eq!(pv["namespaced"], false);
        assert_eq!(pv["shortNames"], json!(["pv"]));
        assert_eq!(pv["verbs"], json!(["get", "list", "watch"]));
        let group = discovery(ObjectKind::Pod, "/apis/storage.k8s.io").unwrap();
        assert_eq!(group["kind"], "APIGroup");
        assert_eq!(
            group["preferredVersion"]["groupVersion"],
            "storage.k8s.io/v1"
        );
        let list = discovery(ObjectKind::Pod, "/apis/storage.k8s.io/v1").unwrap();
        let classes = list["resources"].as_array().unwrap();
        assert!(
            classes.iter().any(|r| r["name"] == "storageclasses"),
            "{list}"
        );
        assert!(discovery(ObjectKind::Pod, "/apis/storage.k8s.io/v1beta1").is_none());
        assert!(discovery(ObjectKind::Pod, "/apis/example.com/v1").is_none());
        // A server of core Events does not list events.k8s.io's, empty, beside them.
        let core_events = scenario::SampledKindDef {
            api_version: "v1".to_owned(),
            kind: "Event".to_owned(),
            resource: "events".to_owned(),
            namespaced: true,
            generation: false,
            fields: Vec::new(),
        };
        let beside_events = names(groups(core_events.kind()));
        assert!(!beside_events.contains(&"events.k8s.io".to_owned()));
        assert!(beside_pods.contains(&"events.k8s.io".to_owned()));
    }

    #[tokio::test]
    async fn a_watch_list_of_one_gets_its_bookmark_and_a_watch_ends_at_its_timeout() {
        let query = "watch=true&sendInitialEvents=true&allowWatchBookmarks=true&timeoutSeconds=0";
        let path = "/apis/resource.k8s.io/v1/deviceclasses";
        let watched = answer(&Method::GET, path, Some(query), 9).unwrap();
        let body = axum::body::to_bytes(watched.into_body(), 1 << 20)
            .await
            .unwrap();
        let event: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(event["type"], "BOOKMARK");
        assert_eq!(event["object"]["kind"], "DeviceClass");
        let meta = &event["object"]["metadata"];
        assert_eq!(meta["resourceVersion"], "9");
        assert_eq!(meta["annotations"]["k8s.io/initial-events-end"], "true");
        let plain = answer(&Method::GET, path, Some("watch=1&timeoutSeconds=0"), 9).unwrap();
        let body = axum::body::to_bytes(plain.into_body(), 1 << 20)
            .await
            .unwrap();
        assert!(body.is_empty(), "nothing happens in an empty collection");
    }
}
