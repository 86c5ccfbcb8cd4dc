//! The differential check's requests ([`requests.toml`](requests.toml), compiled in) and
//! their placeholders.

use std::collections::BTreeMap;

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde::Deserialize;

use scenario::ObjectKind;

/// The requests, in the order they are sent.
pub const REQUESTS: &str = include_str!("requests.toml");

/// One entry of `requests.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// Unique; known differences are keyed by it.
    pub id: String,
    #[serde(default = "get")]
    pub method: String,
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub query: Option<String>,
    #[serde(default)]
    pub accept: Option<String>,
    #[serde(default)]
    pub content_type: Option<String>,
    #[serde(default)]
    pub body: Option<String>,
    /// Read the response as a stream of watch events.
    #[serde(default)]
    pub watch: bool,
    /// Variable name -> which field of the response's metadata it takes.
    #[serde(default)]
    pub capture: BTreeMap<String, Capture>,
    /// Sent only where the check can compact.
    #[serde(default)]
    pub needs_compaction: bool,
    /// Not a request: something done to both servers.
    #[serde(default)]
    pub step: Option<Step>,
    /// Sent again until its answer is so, for what a server's controllers do after a
    /// write (the namespace controller's conditions, a namespace gone).
    #[serde(default)]
    pub until: Option<Until>,
}

/// What a request sent [`Request::until`] waits for: each condition given holds.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Until {
    /// The answer's status code.
    #[serde(default)]
    pub status: Option<u16>,
    /// A field the body has (a JSON pointer: `/status/conditions`).
    #[serde(default)]
    pub present: Option<String>,
    /// A field the body does not have (`/spec/finalizers/1`).
    #[serde(default)]
    pub absent: Option<String>,
}

impl Until {
    /// Whether an answer of `status` with `body` (JSON, where it is) is what it waits for.
    pub fn met(&self, status: u16, body: Option<&serde_json::Value>) -> bool {
        let has = |pointer: &str| body.and_then(|b| b.pointer(pointer)).is_some();
        self.status.is_none_or(|wanted| wanted == status)
            && self.present.as_deref().is_none_or(has)
            && self.absent.as_deref().is_none_or(|pointer| !has(pointer))
    }
}

fn get() -> String {
    "GET".to_owned()
}

/// A field of a response's metadata kept for later requests.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Capture {
    /// `metadata.resourceVersion`.
    Rv,
    /// `metadata.continue`.
    Continue,
    /// `metadata.uid`.
    Uid,
}

impl Capture {
    /// The metadata field's name.
    pub fn field(self) -> &'static str {
        match self {
            Capture::Rv => "resourceVersion",
            Capture::Continue => "continue",
            Capture::Uid => "uid",
        }
    }
}

/// What a step does to both servers.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// Compact the history to the newest resourceVersion.
    Compact,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    request: Vec<Request>,
}

/// The requests of the Deployments' round ([`deployments.toml`](deployments.toml)), sent
/// after [`REQUESTS`] to servers holding Deployments.
pub const DEPLOYMENT_REQUESTS: &str = include_str!("deployments.toml");

/// The requests of the Pods' round ([`pods.toml`](pods.toml)), sent last to servers
/// holding Pods.
pub const POD_REQUESTS: &str = include_str!("pods.toml");

/// The compiled-in requests of the ConfigMaps' round.
pub fn requests() -> Vec<Request> {
    parse(REQUESTS)
}

/// Each round of the check: the kind both servers hold, and the requests sent to them.
pub fn rounds() -> Vec<(ObjectKind, Vec<Request>)> {
    vec![
        (ObjectKind::ConfigMap, requests()),
        (ObjectKind::Deployment, parse(DEPLOYMENT_REQUESTS)),
        (ObjectKind::Pod, parse(POD_REQUESTS)),
    ]
}

fn parse(text: &str) -> Vec<Request> {
    let file: File = toml::from_str(text).expect("the requests parse (a unit test checks)");
    file.request
}

/// A request with its placeholders filled in for one server.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub method: http::Method,
    /// Path and query.
    pub uri: String,
    pub accept: Option<String>,
    pub content_type: Option<String>,
    pub body: Option<String>,
}

impl Resolved {
    /// A request of `method` at `uri`, with no body and no media types of its own.
    pub fn bare(method: http::Method, uri: impl Into<String>) -> Resolved {
        Resolved {
            method,
            uri: uri.into(),
            accept: None,
            content_type: None,
            body: None,
        }
    }
}

/// Placeholders' values on one server.
pub type Variables = BTreeMap<String, String>;

impl Request {
    /// The request as sent to a server whose placeholders are `vars`; `Err` names a
    /// placeholder without a value (an earlier capture that found nothing).
    pub fn resolve(&self, vars: &Variables) -> Result<Resolved, String> {
        let path = fill(&self.path, vars, false)?;
        let uri = match &self.query {
            Some(query) => format!("{path}?{}", fill(query, vars, true)?),
            None => path,
        };
        Ok(Resolved {
            method: self
                .method
                .parse()
                .map_err(|_| format!("method {:?} is not an HTTP method", self.method))?,
            uri,
            accept: self.accept.clone(),
            content_type: self.content_type.clone(),
            body: self
                .body
                .as_deref()
                .map(|b| fill(b, vars, false))
                .transpose()?,
        })
    }
}

/// `text` with every `{name}` replaced by its value (percent-encoded in a query).
fn fill(text: &str, vars: &Variables, encode: bool) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        // JSON bodies have braces of their own: only `{identifier}` is a placeholder.
        let Some(close) = rest[open..].find('}').map(|c| open + c) else {
            break;
        };
        let name = &rest[open + 1..close];
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            out.push_str(&rest[..=open]);
            rest = &rest[open + 1..];
            continue;
        }
        let value = vars
            .get(name)
            .ok_or_else(|| format!("{{{name}}} has no value"))?;
        out.push_str(&rest[..open]);
        if encode {
            out.extend(utf8_percent_encode(value, NON_ALPHANUMERIC));
        } else {
            out.push_str(value);
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn requests_parse_with_unique_ids_and_enough_of_them() {
        let all: Vec<Request> = rounds().into_iter().flat_map(|(_, r)| r).collect();
        let ids: HashSet<_> = all.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids.len(), all.len(), "ids are unique across the rounds");
        let requests = requests();
        let sent = requests.iter().filter(|r| r.step.is_none()).count();
        assert!(
            sent >= 60,
            "{sent} requests; the issue asks for at least 60"
        );
    }

    #[test]
    fn every_placeholder_is_defined_before_it_is_used() {
        let mut vars: Variables = ["ns", "other_ns", "name0", "name1", "name2", "app0"]
            .into_iter()
            .map(|k| (k.to_owned(), "x".to_owned()))
            .collect();
        for request in rounds().into_iter().flat_map(|(_, r)| r) {
            if let Err(e) = request.resolve(&vars) {
                panic!("request {}: {e}", request.id);
            }
            for name in request.capture.keys() {
                vars.insert(name.clone(), "x".to_owned());
            }
        }
    }

    #[test]
    fn placeholders_are_filled_and_encoded_in_queries_only() {
        let vars: Variables = [("ns".to_owned(), "a b".to_owned())].into();
        let request = Request {
            id: "t".into(),
            method: "POST".into(),
            path: "/api/v1/namespaces/{ns}/configmaps".into(),
            query: Some("fieldSelector=metadata.namespace%3D{ns}".into()),
            accept: None,
            content_type: None,
            body: Some(r#"{"metadata":{"namespace":"{ns}"}}"#.into()),
            watch: false,
            capture: BTreeMap::new(),
            needs_compaction: false,
            step: None,
            until: None,
        };
        let resolved = request.resolve(&vars).unwrap();
        assert_eq!(
            resolved.uri,
            "/api/v1/namespaces/a b/configmaps?fieldSelector=metadata.namespace%3Da%20b"
        );
        assert_eq!(
            resolved.body.as_deref(),
            Some(r#"{"metadata":{"namespace":"a b"}}"#)
        );
        let missing = Request {
            path: "/{nope}".into(),
            ..request
        };
        assert_eq!(missing.resolve(&vars).unwrap_err(), "{nope} has no value");
    }

    #[test]
    fn a_request_is_sent_again_until_each_condition_given_holds() {
        let body = serde_json::json!({"status": {"conditions": []}, "spec": {"finalizers": ["a"]}});
        let until = |text: &str| -> Until { toml::from_str(text).unwrap() };
        let waiting = until(
            r#"present = "/status/conditions"
absent = "/spec/finalizers/1""#,
        );
        assert!(waiting.met(200, Some(&body)));
        assert!(!until(r#"absent = "/spec/finalizers/0""#).met(200, Some(&body)));
        assert!(!until(r#"present = "/status/phase""#).met(200, Some(&body)));
        assert!(!waiting.met(200, None), "no body has no field");
        assert!(until("status = 404").met(404, None));
        assert!(!until("status = 404").met(200, Some(&body)));
        assert!(
            toml::from_str::<Until>("stauts = 404").is_err(),
            "a misspelt key is refused"
        );
    }
}
