//! Discovery documents, enough for kubectl: `/version`, `/api`, `/api/v1`, `/apis`,
//! `/apis/apps`, `/apis/apps/v1`, and a minimal OpenAPI v3 document per group.
//!
//! kubectl reads OpenAPI before `apply` and `create` to learn whether the server validates
//! fields itself (the `fieldValidation` parameter of each kind's PATCH); without a document
//! it insists on validating client-side and gives up. The document here declares exactly
//! that and no schemas, so kubectl falls back to its compiled-in types for strategic merge.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use serde_json::{Value, json};

use super::ApiServer;
use super::group::{Apps, Core, Group, SampledGroup};
use scenario::ObjectKind;

/// Where a router serves, which decides what discovery lists: without the records (the
/// routes' tests), or over the network (`serve`, `run`'s loopback
/// server), where the server also keeps the records programs write beside the
/// scenario's objects (Leases, Events: `records::Network`).
pub trait Serving: Send + Sync + 'static {
    /// Named groups served beside those of a server of `kind` objects, in `/apis`'s
    /// order.
    fn groups(kind: ObjectKind) -> Vec<Value>;
    /// Resources of `group` beside `kind`'s, as the group's resource list lists them,
    /// where the scenario's routes serve the group (the core group, or `apps` for a
    /// scenario of Deployments).
    fn resources_beside(kind: ObjectKind, group: &str) -> Vec<Value>;
    /// The same, as the group's OpenAPI document describes them.
    fn described_beside(kind: ObjectKind, group: &str) -> Vec<Described>;
    /// The OpenAPI documents of the named groups beside `kind`'s, by root
    /// (`apis/coordination.k8s.io/v1`).
    fn documents(kind: ObjectKind) -> Vec<(&'static str, Value)>;
    /// Whether clients create, update and delete namespaces (and watch them).
    const WRITES_NAMESPACES: bool;
    /// The kinds of `group` a server of `kind` objects keeps as written beside them
    /// (`configmaps`, `secrets`; `deployments` beside a sample of another `apps` kind),
    /// where discovery lists every verb of a written kind.
    fn written_beside(kind: ObjectKind, group: &str) -> Vec<&'static str>;
}

/// Every verb of a kind clients write, as kube-apiserver lists them.
pub(super) const WRITTEN_VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// What a client may do with namespaces: read them, or, where it writes them, what
/// kube-apiserver lets it do.
fn namespace_verbs(writes: bool) -> &'static [&'static str] {
    match writes {
        true => &[
            "create", "delete", "get", "list", "patch", "update", "watch",
        ],
        false => &["get", "list"],
    }
}

/// Without the records: the scenario's objects, nothing else (the routes' tests).
#[cfg(test)]
#[derive(Debug)]
pub struct InProcess;

#[cfg(test)]
impl Serving for InProcess {
    fn groups(_: ObjectKind) -> Vec<Value> {
        Vec::new()
    }

    fn resources_beside(_: ObjectKind, _: &str) -> Vec<Value> {
        Vec::new()
    }

    fn described_beside(_: ObjectKind, _: &str) -> Vec<Described> {
        Vec::new()
    }

    fn documents(_: ObjectKind) -> Vec<(&'static str, Value)> {
        Vec::new()
    }

    const WRITES_NAMESPACES: bool = false;

    fn written_beside(_: ObjectKind, _: &str) -> Vec<&'static str> {
        Vec::new()
    }
}

/// `/version`: a server of the Kubernetes minor the generated objects follow.
pub async fn version() -> Json<Value> {
    Json(json!({
        "major": "1",
        "minor": "35",
        "gitVersion": concat!("v1.35.0+informer-mem-", env!("CARGO_PKG_VERSION")),
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "n/a",
        "compiler": "rustc",
        "platform": "linux/amd64",
    }))
}

/// `/api`: the core group's versions.
pub async fn api_versions(headers: HeaderMap) -> Json<Value> {
    let host = headers
        .get(axum::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    Json(json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}],
    }))
}

/// `/apis`: the named groups this server serves (`apps` when the scenario's kind is in
/// it, a sampled kind's own group; see [`Group::served_with`]), and those `S` serves
/// beside them, in kube-apiserver's order.
pub async fn api_groups<S: Serving>(State(server): State<ApiServer>) -> Json<Value> {
    let kind = server.spec().kind;
    let apps = Apps::served_with(kind).then(|| group_of::<Apps>(kind));
    let records = S::groups(kind);
    let sampled = SampledGroup::served_with(kind).then(|| group_of::<SampledGroup>(kind));
    let mut groups: Vec<Value> = Vec::new();
    // The first of a name: the server's own group before the empty one of
    // kube-apiserver's table.
    for group in apps.into_iter().chain(sampled).chain(records) {
        if !groups.iter().any(|g| g["name"] == group["name"]) {
            groups.push(group);
        }
    }
    // Stable: a group of Kubernetes' own (a sample of Jobs' `batch`) takes its place
    // among them, anyone else's (a custom resource's) comes after.
    groups.sort_by_key(|group| {
        let name = group["name"].as_str().unwrap_or_default();
        KUBE_GROUP_ORDER
            .iter()
            .position(|g| *g == name)
            .unwrap_or(KUBE_GROUP_ORDER.len())
    });
    Json(json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}))
}

/// The named groups of Kubernetes' own in the order kube-apiserver v1.37.2's `/apis`
/// lists them (its groups' priorities); custom resources' groups come after.
const KUBE_GROUP_ORDER: [&str; 21] = [
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "resource.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "storagemigration.k8s.io",
];

/// `/`: the paths the server answers, as kube-apiserver's index lists them (`{"paths":
/// [...]}`, sorted): the API's roots, each group and version `/apis` lists, the OpenAPI v3
/// index, `/version`, and the health probes with their checks.
pub async fn root_paths<S: Serving>(server: State<ApiServer>) -> Json<Value> {
    let Json(groups) = api_groups::<S>(server).await;
    let roots = [
        "/api",
        "/api/v1",
        "/apis",
        "/apis/",
        "/openapi/v3",
        "/version",
    ];
    let mut paths: Vec<String> = roots.map(String::from).to_vec();
    for group in groups["groups"].as_array().into_iter().flatten() {
        paths.extend(group["name"].as_str().map(|name| format!("/apis/{name}")));
        let versions = group["versions"].as_array().into_iter().flatten();
        paths.extend(
            versions.filter_map(|v| Some(format!("/apis/{}", v["groupVersion"].as_str()?))),
        );
    }
    paths.extend(super::health::paths());
    paths.sort();
    Json(json!({ "paths": paths }))
}

/// `/apis/{group}`: one named group.
pub async fn api_group<G: Group>(State(server): State<ApiServer>) -> Json<Value> {
    let mut group = group_of::<G>(server.spec().kind);
    group["kind"] = json!("APIGroup");
    group["apiVersion"] = json!("v1");
    Json(group)
}

fn group_of<G: Group>(served: ObjectKind) -> Value {
    named_group(G::name(served), G::version(served))
}

/// `resources` by name, as kube-apiserver lists them (a subresource after its resource),
/// each name once: the first given of a name stays (a resource served here before the
/// same resource of kube-apiserver's table, listed empty).
pub(super) fn by_name(resources: &mut Vec<Value>) {
    resources.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    resources.dedup_by(|later, earlier| later["name"] == earlier["name"]);
}

/// A named group of one version, as `/apis` lists it.
pub(super) fn named_group(name: &str, version: &str) -> Value {
    let version = json!({"groupVersion": format!("{name}/{version}"), "version": version});
    json!({"name": name, "versions": [version], "preferredVersion": version})
}

/// `/api/v1`, `/apis/{group}/v1`: the resources of a group this server serves, and those
/// `S` serves beside them (the records, over TCP). Only the scenario's kind can be
/// written, and its status and scale subresources where it has them; the other kinds the
/// generator makes are listed read-only, and empty, unless `S` keeps them; namespaces
/// can be read, and over TCP written.
pub async fn group_resources<G: Group, S: Serving>(State(server): State<ApiServer>) -> Json<Value> {
    let served = server.spec().kind;
    let name = G::name(served);
    let namespaces = json!({
        "name": "namespaces", "singularName": "namespace", "namespaced": false,
        "kind": "Namespace", "verbs": namespace_verbs(S::WRITES_NAMESPACES), "shortNames": ["ns"],
    });
    let written = S::written_beside(served, name);
    let kinds = ObjectKind::in_group(served, name).flat_map(|kind| {
        // kube-apiserver's for a built-in kind, sampled too (`kubectl get rs`, `kubectl
        // get all`).
        let (short, categories) = (kind.short_names(), kind.categories());
        let writes = kind == served || written.contains(&kind.plural());
        let mut resource = json!({
            "name": kind.plural(),
            "singularName": kind.as_str().to_lowercase(),
            "namespaced": kind.namespaced(),
            "kind": kind.as_str(),
            "verbs": if writes {
                json!(WRITTEN_VERBS)
            } else {
                json!(["get", "list", "watch"])
            },
            "shortNames": short,
        });
        if !categories.is_empty() {
            resource["categories"] = json!(categories);
        }
        // Its status subresource, where it can be written (`kubectl get
        // --subresource=status` finds it here).
        let status = (kind == served && kind.has_status()).then(|| {
            json!({
                "name": format!("{}/status", kind.plural()), "singularName": "",
                "namespaced": kind.namespaced(), "kind": kind.as_str(),
                "verbs": ["get", "patch", "update"],
            })
        });
        std::iter::once(resource).chain(status)
    });
    // A Deployment's scale subresource, where Deployments can be written (kubectl scale
    // finds its kind here).
    let scale =
        (name == ObjectKind::Deployment.group() && served == ObjectKind::Deployment).then(|| {
            json!({
                "name": "deployments/scale", "singularName": "", "namespaced": true,
                "group": "autoscaling", "version": "v1", "kind": "Scale",
                "verbs": ["get", "patch", "update"],
            })
        });
    // Where clients write namespaces, their subresources too (the stuck namespace's
    // `kubectl replace --raw .../finalize`).
    let namespace_subresources = S::WRITES_NAMESPACES.then(|| {
        let finalize = json!({
            "name": "namespaces/finalize", "singularName": "", "namespaced": false,
            "kind": "Namespace", "verbs": ["update"],
        });
        let status = json!({
            "name": "namespaces/status", "singularName": "", "namespaced": false,
            "kind": "Namespace", "verbs": ["get", "patch", "update"],
        });
        [finalize, status]
    });
    let mut resources: Vec<Value> = if name.is_empty() {
        let namespaces =
            std::iter::once(namespaces).chain(namespace_subresources.into_iter().flatten());
        namespaces.chain(kinds).collect()
    } else {
        kinds.chain(scale).collect()
    };
    resources.extend(S::resources_beside(served, name));
    by_name(&mut resources);
    // kube-apiserver writes no apiVersion for the core group's list.
    Json(match name {
        "" => json!({"kind": "APIResourceList", "groupVersion": "v1", "resources": resources}),
        group => json!({
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": format!("{group}/{}", G::version(served)),
            "resources": resources,
        }),
    })
}

/// `/openapi/v3`: where each group's document is, with a hash of it (kubectl caches
/// a document by server and hash; the documents differ by kind).
pub async fn openapi_v3_paths<S: Serving>(State(server): State<ApiServer>) -> Json<Value> {
    let kind = server.spec().kind;
    let mut documents = vec![("api/v1", group_document::<Core, S>(kind))];
    if Apps::served_with(kind) {
        documents.push(("apis/apps/v1", group_document::<Apps, S>(kind)));
    }
    documents.extend(S::documents(kind));
    if SampledGroup::served_with(kind) {
        let root = kind.api_root().trim_start_matches('/');
        documents.push((root, group_document::<SampledGroup, S>(kind)));
    }
    let paths: serde_json::Map<String, Value> = documents
        .into_iter()
        .map(|(root, document)| {
            let mut hasher = std::hash::DefaultHasher::new();
            std::hash::Hash::hash(&document.to_string(), &mut hasher);
            let hash = std::hash::Hasher::finish(&hasher);
            let url = format!("/openapi/v3/{root}?hash={hash:016X}");
            (root.to_owned(), json!({"serverRelativeURL": url}))
        })
        .collect();
    Json(json!({ "paths": paths }))
}

/// `/openapi/v3/api/v1`, `/openapi/v3/apis/{group}/v1`: the PATCH of the kinds written
/// here, in their group's document, with the `fieldValidation` parameter that tells
/// kubectl the server validates fields, and the schemas of the group's kinds as
/// kube-apiserver v1.37 serves them, for `kubectl explain`; with the paths of the
/// resources `S` serves beside the scenario's kinds.
pub async fn openapi_v3_group<G: Group, S: Serving>(
    State(server): State<ApiServer>,
) -> Json<Value> {
    Json(group_document::<G, S>(server.spec().kind))
}

/// The OpenAPI v3 schemas of the core group's kinds, as [`schemas`] describes them.
pub(super) const CORE_SCHEMAS: &str = include_str!("../proto/openapi/api__v1.json");
/// The OpenAPI v3 schemas of the apps group's kinds, as [`schemas`] describes them.
pub(super) const APPS_SCHEMAS: &str = include_str!("../proto/openapi/apis__apps__v1.json");
/// The OpenAPI v3 schema of Leases (`coordination.k8s.io/v1`), as [`schemas`] describes
/// them: served beside the scenario's kind ([`super::records`]).
pub(super) const COORDINATION_SCHEMAS: &str =
    include_str!("../proto/openapi/apis__coordination.k8s.io__v1.json");
/// The OpenAPI v3 schema of Events in `events.k8s.io/v1` (the core group's document has
/// them in `v1`), as [`schemas`] describes them.
pub(super) const EVENTS_SCHEMAS: &str =
    include_str!("../proto/openapi/apis__events.k8s.io__v1.json");

/// The OpenAPI v3 schemas of the kinds the built-in apiserver serves in a group, and of
/// every schema they refer to, from kube-apiserver v1.37.2's documents
/// (servers/kube-apiserver/openapischemas prints them; CI checks they are its output).
/// Parsed when a document is asked for, so that a server holds none of them between.
/// A sampled kind's group has those of its version's kinds where they are Kubernetes' own
/// ([`other_group_schemas`]: a Job's); a custom resource's none: the tool knows its
/// objects, not its schema.
fn schemas(group: &str, version: &str) -> Value {
    let text = match group {
        "" => CORE_SCHEMAS,
        "apps" => APPS_SCHEMAS,
        "coordination.k8s.io" => COORDINATION_SCHEMAS,
        "events.k8s.io" => EVENTS_SCHEMAS,
        _ => return other_group_schemas(group, version),
    };
    serde_json::from_str(text).expect("the committed schemas are JSON (a unit test reads them)")
}

/// The schemas of the kinds of `group` at `version` among Kubernetes' other group
/// versions (proto/openapi/other-groups.json), and of every schema they refer to, as
/// kube-apiserver's document of the group has them.
fn other_group_schemas(group: &str, version: &str) -> Value {
    if k8s::names::api_package(group).is_none() {
        // A custom resource's group: none of them, and 700 KB not parsed for nothing.
        return json!({});
    }
    let all: serde_json::Map<String, Value> =
        serde_json::from_str(include_str!("../proto/openapi/other-groups.json"))
            .expect("the committed schemas are JSON (a unit test reads them)");
    let own = |schema: &Value| {
        let kinds = schema["x-kubernetes-group-version-kind"].as_array();
        (kinds.into_iter().flatten()).any(|gvk| gvk["group"] == group && gvk["version"] == version)
    };
    let mut pending: Vec<&String> = all.iter().filter(|(_, s)| own(s)).map(|(n, _)| n).collect();
    let mut kept = serde_json::Map::new();
    while let Some(name) = pending.pop() {
        let Some(schema) = all.get(name).filter(|_| !kept.contains_key(name)) else {
            continue;
        };
        let text = schema.to_string();
        for reference in text.split("\"#/components/schemas/").skip(1) {
            let target = reference.split('"').next().unwrap_or_default();
            pending.extend(all.get_key_value(target).map(|(n, _)| n));
        }
        kept.insert(name.clone(), schema.clone());
    }
    Value::Object(kept)
}

fn group_document<G: Group, S: Serving>(kind: ObjectKind) -> Value {
    let (name, version) = (G::name(kind), G::version(kind));
    let mut resources = described(kind, name);
    let written = S::written_beside(kind, name);
    for resource in &mut resources {
        if resource.kind == "Namespace" {
            resource.written = S::WRITES_NAMESPACES;
        } else if written.contains(&resource.plural) {
            resource.written = true;
        }
    }
    resources.extend(S::described_beside(kind, name));
    document(name, version, G::root(kind), &resources)
}

/// A resource an OpenAPI document describes: its kind, plural and scope, and whether it
/// is written here (its PATCH, with the `fieldValidation` parameter kubectl looks for).
#[derive(Debug, Clone, Copy)]
pub(super) struct Described {
    pub(super) kind: &'static str,
    pub(super) plural: &'static str,
    pub(super) namespaced: bool,
    pub(super) written: bool,
}

/// The resources of group `group` a server of `served` objects serves: its kinds there,
/// and namespaces in the core group.
pub(super) fn described(served: ObjectKind, group: &str) -> Vec<Described> {
    let kinds = ObjectKind::in_group(served, group).map(|k| Described {
        kind: k.as_str(),
        plural: k.plural(),
        namespaced: k.namespaced(),
        written: k == served,
    });
    let namespaces = group.is_empty().then_some(Described {
        kind: "Namespace",
        plural: "namespaces",
        namespaced: false,
        written: false,
    });
    kinds.chain(namespaces).collect()
}

/// The OpenAPI v3 document of group `name` at `version`, served under `root`, for
/// `resources`: each resource's LIST, the PATCH of those written here, and the schemas of
/// the group's kinds.
pub(super) fn document(name: &str, version: &str, root: &str, resources: &[Described]) -> Value {
    let mut paths = serde_json::Map::new();
    // The group as kube's operation IDs spell it: `Core`, `Apps`, `ExampleCom`.
    let group: String = match name {
        "" => "Core".into(),
        name => name
            .split(['.', '-'])
            .map(|word| {
                let mut chars = word.chars();
                chars.next().map_or_else(String::new, |first| {
                    first.to_uppercase().chain(chars).collect()
                })
            })
            .collect(),
    };
    let api = format!("{group}{}", {
        let mut chars = version.chars();
        chars.next().map_or_else(String::new, |first| {
            first.to_uppercase().chain(chars).collect::<String>()
        })
    });
    let gvk = |kind: &str| json!({"group": name, "version": version, "kind": kind});
    // Each kind the group lists, by its LIST: `kubectl explain` finds a resource's kind
    // in its path's operations, then its schema by that kind.
    for resource in resources {
        let (path, scope) = match resource.namespaced {
            true => (
                format!("{root}/namespaces/{{namespace}}/{}", resource.plural),
                "Namespaced",
            ),
            false => (format!("{root}/{}", resource.plural), ""),
        };
        paths.insert(
            path,
            json!({
                "get": {
                    "operationId": format!("list{api}{scope}{}", resource.kind),
                    "x-kubernetes-action": "list",
                    "x-kubernetes-group-version-kind": gvk(resource.kind),
                },
            }),
        );
    }
    let parameter = |name: &str| json!({"name": name, "in": "query", "schema": {"type": "string"}});
    for resource in resources.iter().filter(|r| r.written) {
        let (path, scope) = if resource.namespaced {
            (
                format!(
                    "{root}/namespaces/{{namespace}}/{}/{{name}}",
                    resource.plural
                ),
                "Namespaced",
            )
        } else {
            (format!("{root}/{}/{{name}}", resource.plural), "")
        };
        paths.insert(
            path,
            json!({
                "patch": {
                    "operationId": format!("patch{api}{scope}{}", resource.kind),
                    "parameters": [parameter("dryRun"), parameter("fieldManager"), parameter("fieldValidation")],
                    "x-kubernetes-action": "patch",
                    "x-kubernetes-group-version-kind": gvk(resource.kind),
                },
            }),
        );
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.35.0"},
        "components": {"schemas": schemas(name, version)},
        "paths": paths,
    })
}
