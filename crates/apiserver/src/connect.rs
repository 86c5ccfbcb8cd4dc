//! Pods' connect subresources: `log`, `exec`, `attach` and `portforward`, what `kubectl
//! logs`, `exec`, `attach` and `port-forward` ask for. kube-apiserver answers them by
//! reaching the kubelet of the pod's node; the built-in server has no kubelet to reach,
//! and serves no Node beside its pods (a scenario holds one kind), so every pod here is on
//! a node the server does not have. It answers as kube-apiserver v1.37 answers for such a
//! pod, step by step (k8s.io/kubernetes pkg/registry/core/pod, `LogLocation`,
//! `streamLocation`, `PortForwardLocation`):
//!
//! 1. the query's options are read (400 for a number that does not parse) and a log's
//!    checked (422, `PodLogOptions "NAME" is invalid`);
//! 2. the pod is looked up (404);
//! 3. a log, an exec or an attach picks its container: the one named (400 if the pod has
//!    none of that name), else the pod's only one (400 naming them all if it has more);
//! 4. a pod on no node: its log is empty (204), an exec, attach or port-forward a 400
//!    (`pod NAME does not have a host assigned`);
//! 5. a pod on a node: 404, in kube-apiserver's words for a node it does not have
//!    (`pods "NODE" not found`, its node lookup naming the node as a pod).
//!
//! So a client sees what a cluster says of a pod whose node is gone, never a route this
//! server lacks. Served over TCP only, whatever the scenario's kind (where it is not Pod,
//! every pod is step 2's 404), as discovery lists them there.

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

use super::ApiServer;
use super::extract::ApiPath;
use super::status::{ApiError, method_not_allowed};
use super::write::Causes;
use scenario::ObjectKind;

/// The connect subresources, as `/api/v1` lists them over TCP (kube-apiserver's verbs:
/// `create` is the POST a SPDY upgrade sends, `get` the websocket's GET).
pub fn resources() -> Vec<Value> {
    let options = |name: &str, kind: &str, verbs: &[&str]| json!({"name": name, "singularName": "", "namespaced": true, "kind": kind, "verbs": verbs});
    vec![
        options("pods/attach", "PodAttachOptions", &["create", "get"]),
        options("pods/exec", "PodExecOptions", &["create", "get"]),
        options("pods/log", "Pod", &["get"]),
        options(
            "pods/portforward",
            "PodPortForwardOptions",
            &["create", "get"],
        ),
    ]
}

/// The routes: a log is read (GET); an exec, an attach and a port-forward are opened by a
/// websocket's GET or a SPDY upgrade's POST. Other methods are 405.
pub fn routes(server: ApiServer) -> Router {
    let path =
        |subresource: &str| format!("/api/v1/namespaces/{{namespace}}/pods/{{name}}/{subresource}");
    let stream = |connect: Connect| {
        let handler = move |server, path, query| opened(connect, server, path, query);
        get(handler).post(handler).fallback(method_not_allowed)
    };
    Router::new()
        .route(&path("log"), get(log).fallback(method_not_allowed))
        .route(&path("exec"), stream(Connect::Exec))
        .route(&path("attach"), stream(Connect::Attach))
        .route(&path("portforward"), stream(Connect::PortForward))
        .with_state(server)
}

/// A connect subresource that opens a stream to the kubelet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Connect {
    Exec,
    Attach,
    PortForward,
}

/// `GET .../pods/{name}/log`.
async fn log(
    State(server): State<ApiServer>,
    ApiPath((namespace, name)): ApiPath<(String, String)>,
    RawQuery(query): RawQuery,
) -> Response {
    let query = Params::new(query.as_deref());
    let answer = log_options(&query, &name)
        .and_then(|()| pod(&server, &namespace, &name))
        .and_then(|pod| container(&pod, &name, query.first("container")).map(|()| pod));
    match answer {
        // kube-apiserver's stream of a pod on no node is empty: 204, no body.
        Ok(pod) if node(&pod).is_empty() => StatusCode::NO_CONTENT.into_response(),
        Ok(pod) => no_node(node(&pod)).into_response(),
        Err(refused) => refused.into_response(),
    }
}

/// `GET` or `POST .../pods/{name}/exec`, `/attach`, `/portforward`.
async fn opened(
    connect: Connect,
    State(server): State<ApiServer>,
    ApiPath((namespace, name)): ApiPath<(String, String)>,
    RawQuery(query): RawQuery,
) -> Response {
    let query = Params::new(query.as_deref());
    let answer = ports(connect, &query)
        .and_then(|()| pod(&server, &namespace, &name))
        .and_then(|pod| match connect {
            Connect::PortForward => Ok(pod),
            Connect::Exec | Connect::Attach => {
                container(&pod, &name, query.first("container")).map(|()| pod)
            }
        });
    match answer {
        Ok(pod) if node(&pod).is_empty() => {
            ApiError::bad_request(format!("pod {name} does not have a host assigned"))
                .into_response()
        }
        Ok(pod) => no_node(node(&pod)).into_response(),
        Err(refused) => refused.into_response(),
    }
}

/// A query's parameters, decoded, in order.
struct Params(Vec<(String, String)>);

impl Params {
    fn new(query: Option<&str>) -> Params {
        let pairs = form_urlencoded::parse(query.unwrap_or_default().as_bytes());
        Params(pairs.into_owned().collect())
    }

    /// The first value of `key`, as Go's query conversion reads a single field.
    fn first(&self, key: &str) -> Option<&str> {
        self.all(key).next()
    }

    fn all<'a>(&'a self, key: &str) -> impl Iterator<Item = &'a str> {
        (self.0.iter())
            .filter(move |(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// `key` as Go's `strconv.ParseInt` reads it, its refusal in Go's words.
    fn integer(&self, key: &str) -> Result<Option<i64>, ApiError> {
        let Some(value) = self.first(key) else {
            return Ok(None);
        };
        value
            .parse()
            .map(Some)
            .map_err(|error: std::num::ParseIntError| {
                ApiError::bad_request(go_parse_error("ParseInt", value, &error))
            })
    }
}

/// A Go `strconv` error: `strconv.ParseInt: parsing "x": invalid syntax`.
fn go_parse_error(function: &str, value: &str, error: &std::num::ParseIntError) -> String {
    use std::num::IntErrorKind::{NegOverflow, PosOverflow};
    let why = match error.kind() {
        PosOverflow | NegOverflow => "value out of range",
        _ => "invalid syntax",
    };
    format!("strconv.{function}: parsing {value:?}: {why}")
}

/// A log's options read and checked, in the order kube-apiserver converts
/// (`PodLogOptions`' fields: sinceSeconds, sinceTime, tailLines, limitBytes) and then
/// validates them (`ValidatePodLogOptions`).
fn log_options(query: &Params, name: &str) -> Result<(), ApiError> {
    let since_seconds = query.integer("sinceSeconds")?;
    let since_time = query.first("sinceTime").filter(|t| !t.is_empty());
    if let Some(time) = since_time
        && time.parse::<k8s_openapi::jiff::Timestamp>().is_err()
    {
        // Go's time.Parse says where the layout stopped matching; this names the layout.
        return Err(ApiError::bad_request(format!(
            "parsing time {time:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse {time:?} as an RFC 3339 time"
        )));
    }
    let tail_lines = query.integer("tailLines")?;
    let limit_bytes = query.integer("limitBytes")?;
    let mut causes = Causes::default();
    if let Some(lines) = tail_lines.filter(|lines| *lines < 0) {
        causes.invalid(
            "tailLines",
            &json!(lines),
            "must be greater than or equal to 0",
        );
    }
    if let Some(bytes) = limit_bytes.filter(|bytes| *bytes < 1) {
        causes.invalid("limitBytes", &json!(bytes), "must be greater than 0");
    }
    match (since_seconds, since_time) {
        (Some(_), Some(_)) => causes.push(
            "FieldValueForbidden",
            "[]",
            "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified".to_owned(),
        ),
        (Some(seconds), None) if seconds < 1 => {
            causes.invalid("sinceSeconds", &json!(seconds), "must be greater than 0");
        }
        _ => {}
    }
    // Split streams are behind a feature gate kube-apiserver v1.37 leaves off.
    if query.first("stream").is_some() {
        let message = "Forbidden: may not be specified".to_owned();
        causes.push("FieldValueForbidden", "stream", message);
    }
    causes.into_result("PodLogOptions", name)
}

/// A port-forward's `ports` (each value a comma-separated list of 16-bit ports), as
/// kube-apiserver converts them; nothing for an exec or an attach.
fn ports(connect: Connect, query: &Params) -> Result<(), ApiError> {
    if connect != Connect::PortForward {
        return Ok(());
    }
    let listed = query.all("ports").flat_map(|ports| ports.split(','));
    for port in listed {
        if let Err(error) = port.parse::<u16>() {
            let why = go_parse_error("ParseUint", port, &error);
            return Err(ApiError::bad_request(format!(
                "cannot convert to []int32: {why}"
            )));
        }
    }
    Ok(())
}

/// The pod `namespace/name` as JSON, or 404.
fn pod(server: &ApiServer, namespace: &str, name: &str) -> Result<Value, ApiError> {
    let found = (server.spec().kind == ObjectKind::Pod)
        .then(|| server.get_named(namespace, name))
        .flatten();
    let Some(version) = found else {
        return Err(ApiError::not_found(ObjectKind::Pod, name));
    };
    let mut bytes = Vec::new();
    version.write(&mut bytes, server.generator());
    serde_json::from_slice(&bytes)
        .map_err(|error| ApiError::internal(format!("pod {name:?} does not read back: {error}")))
}

/// The pod's node (`""`: none).
fn node(pod: &Value) -> &str {
    pod["spec"]["nodeName"].as_str().unwrap_or_default()
}

/// Checks the container a request names, or that the pod has only one to pick
/// (`validateContainer`: every container named, init, regular and ephemeral).
fn container(pod: &Value, name: &str, asked: Option<&str>) -> Result<(), ApiError> {
    let names: Vec<&str> = ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .filter_map(|list| pod["spec"][list].as_array())
        .flatten()
        .filter_map(|container| container["name"].as_str())
        .collect();
    let regular = pod["spec"]["containers"].as_array().map_or(0, Vec::len);
    let refused = match asked.filter(|asked| !asked.is_empty()) {
        Some(asked) if names.contains(&asked) => return Ok(()),
        Some(asked) => format!("container {asked} is not valid for pod {name}"),
        None if regular == 1 => return Ok(()),
        None if regular == 0 => format!("a container name must be specified for pod {name}"),
        None => format!(
            "a container name must be specified for pod {name}, choose one of: [{}]",
            names.join(" ")
        ),
    };
    Err(ApiError::bad_request(refused))
}

/// kube-apiserver's answer where the pod's node has no Node object: its node lookup's
/// 404, which names the node as a pod.
fn no_node(node: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "NotFound",
        format!("pods {node:?} not found"),
    )
    .about(node, "pods")
}

#[cfg(test)]
mod tests;
