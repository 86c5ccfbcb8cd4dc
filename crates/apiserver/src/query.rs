//! A collection request's query: ListOptions parsed and checked as kube-apiserver does,
//! the selection it covers (resource, namespace, selectors) and continue tokens.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};

use super::ApiServer;
use super::generate::{self, ObjectId};
use super::status::ApiError;
use super::version::{NamespacedName, Version, Written};
use k8s::{FieldSelector, LabelSelector};
use scenario::ObjectKind;
use scenario::{ObjectSpec, Scope};

/// Longest watch timeout honoured (a year); longer requests get this.
const MAX_WATCH_TIMEOUT_SECONDS: u64 = 365 * 24 * 3600;

#[derive(Debug, Clone)]
pub(super) struct Selection {
    pub(super) kind: ObjectKind,
    /// The server holds objects of this kind.
    holds: bool,
    namespace: Option<NamespaceFilter>,
    labels: LabelSelector,
    fields: FieldSelector,
}

/// A namespace by name and, when generated objects live there, by ordinal (objects are
/// spread round robin over the ordinals).
#[derive(Debug, Clone)]
struct NamespaceFilter {
    name: String,
    ordinal: Option<u32>,
}

impl Selection {
    /// Whether a label or field selector narrows the selection (kube-apiserver then
    /// leaves a page's `remainingItemCount` out: it would have to filter the rest).
    pub(super) fn filters(&self) -> bool {
        !self.labels.is_empty() || !self.fields.is_empty()
    }

    /// The selection of `kind` in `namespace` (all namespaces: `None`) that `q`'s
    /// selectors make; a field `kind` cannot be selected by is a 400 Bad Request.
    pub(super) fn new(
        server: &ApiServer,
        kind: ObjectKind,
        namespace: Option<&str>,
        q: &Query,
    ) -> Result<Selection, ApiError> {
        let (fields, aliases) = kind.selectable_fields();
        let fields = q
            .field_selector
            .clone()
            .for_fields(fields, aliases)
            .map_err(ApiError::bad_request)?;
        Ok(Selection {
            kind,
            holds: kind == server.spec().kind,
            namespace: namespace.map(|ns| NamespaceFilter {
                name: ns.to_owned(),
                ordinal: server.namespace_ordinal(ns),
            }),
            labels: q.label_selector.clone(),
            fields,
        })
    }

    /// What an informer with `scope`'s selectors asks for, in `namespace` or across all
    /// of them (its field selector was checked against the kind when the scenario was
    /// read).
    pub(super) fn scoped(server: &ApiServer, scope: &Scope, namespace: Option<&str>) -> Selection {
        let kind = server.spec().kind;
        Selection {
            kind,
            holds: true,
            namespace: namespace.map(|ns| NamespaceFilter {
                name: ns.to_owned(),
                ordinal: server.namespace_ordinal(ns),
            }),
            labels: scope.label_selector.clone(),
            fields: scope.field_selector.clone(),
        }
    }

    pub(super) fn matches(&self, spec: &ObjectSpec, version: &Version) -> bool {
        self.matches_parts(spec, &version.id, version.written.as_deref())
    }

    /// [`Selection::matches`] for a version not yet resolved into a [`Version`]: the
    /// filter of a LIST, which resolves only the objects it keeps.
    pub(super) fn matches_parts(
        &self,
        spec: &ObjectSpec,
        id: &ObjectId,
        written: Option<&Written>,
    ) -> bool {
        if !self.holds {
            return false;
        }
        match written {
            Some(w) => self.matches_written(w),
            None => self.matches_generated(spec, id),
        }
    }

    fn matches_written(&self, w: &Written) -> bool {
        let key = w.key();
        let fields = || {
            if self.fields.names_only() {
                return self.fields.matches(&key.name, &key.namespace);
            }
            let object = w.to_value(0);
            self.fields
                .matches_with(|field| written_field(self.kind, &object, field))
        };
        self.namespace
            .as_ref()
            .is_none_or(|ns| ns.name == key.namespace)
            && self.labels.matches(w.labels())
            && fields()
    }

    fn matches_generated(&self, spec: &ObjectSpec, id: &ObjectId) -> bool {
        if self
            .namespace
            .as_ref()
            .is_some_and(|ns| ns.ordinal != Some(id.index % spec.namespaces))
        {
            return false;
        }
        if !self.fields.is_empty() {
            // `metadata.name=X` (kubectl's wait after a delete) pins one index: rule the
            // rest out without building their names.
            if let Some(name) = self.fields.exact_name()
                && generate::index_of_name(name) != Some(id.index)
            {
                return false;
            }
            let matches = if self.fields.names_only() {
                let name = generate::name(spec, id.index);
                let namespace = generate::namespace(spec, id.index);
                self.fields.matches(&name, &namespace)
            } else {
                self.fields
                    .matches_with(|field| generate::selectable_field(spec, id, field))
            };
            if !matches {
                return false;
            }
        }
        self.labels.is_empty()
            || self
                .labels
                .matches(&generate::labels(spec, id.index, id.generation))
    }
}

/// What a written object holds in `field`, read as kube-apiserver's selectable field sets
/// read it (pkg/registry/core/*/strategy.go): "" when unset, booleans as "true"/"false", a
/// pod's IP its first `podIPs` entry's.
pub(super) fn written_field<'a>(
    kind: ObjectKind,
    object: &'a serde_json::Value,
    field: &str,
) -> std::borrow::Cow<'a, str> {
    let text = |pointer: &str| {
        object
            .pointer(pointer)
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
    };
    let flag = |pointer: &str| {
        let on = object
            .pointer(pointer)
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        if on { "true" } else { "false" }
    };
    match (kind, field) {
        (ObjectKind::Pod, "spec.hostNetwork") => flag("/spec/hostNetwork").into(),
        (ObjectKind::Node, "spec.unschedulable") => flag("/spec/unschedulable").into(),
        (ObjectKind::Pod, "status.podIP") => match text("/status/podIPs/0/ip") {
            "" => text("/status/podIP").into(),
            ip => ip.into(),
        },
        // Accepted, but not in the pod's field set: it reads as "".
        (ObjectKind::Pod, "status.podIPs") => "".into(),
        (ObjectKind::Secret, "type") => text("/type").into(),
        (_, field) => text(&format!("/{}", field.replace('.', "/"))).into(),
    }
}

/// The query parameters this server understands.
#[derive(Debug, Default)]
pub(super) struct Query {
    pub(super) watch: bool,
    pub(super) limit: Option<usize>,
    pub(super) continue_token: Option<String>,
    pub(super) resource_version: Option<String>,
    pub(super) resource_version_match: Option<String>,
    pub(super) timeout: Option<Duration>,
    pub(super) allow_watch_bookmarks: bool,
    pub(super) send_initial_events: Option<bool>,
    pub(super) label_selector: LabelSelector,
    pub(super) field_selector: FieldSelector,
    /// `includeObject`: what a table's rows carry of their objects.
    pub(super) include_object: Option<Include>,
}

impl Query {
    /// Decodes the parameters; a value that does not decode is a 400 Bad Request.
    pub(super) fn parse(raw: &str) -> Result<Query, ApiError> {
        Query::decode(raw).map_err(ApiError::bad_request)
    }

    pub(super) fn decode(raw: &str) -> Result<Query, String> {
        let mut q = Query::default();
        for (key, value) in form_urlencoded::parse(raw.as_bytes()) {
            let value = value.into_owned();
            match &*key {
                "watch" => q.watch = parse_bool(&value),
                "limit" => {
                    let n: i64 = value.parse().map_err(|_| invalid(&key, &value))?;
                    // kube-apiserver treats limit <= 0 as no limit.
                    q.limit = usize::try_from(n).ok().filter(|&n| n > 0);
                }
                "continue" => q.continue_token = Some(value).filter(|v| !v.is_empty()),
                "resourceVersion" => q.resource_version = Some(value).filter(|v| !v.is_empty()),
                "resourceVersionMatch" => {
                    q.resource_version_match = Some(value).filter(|v| !v.is_empty());
                }
                "timeoutSeconds" => {
                    let secs: u64 = value.parse().map_err(|_| invalid(&key, &value))?;
                    // Capped so that a deadline computed from it cannot overflow.
                    q.timeout = Some(Duration::from_secs(secs.min(MAX_WATCH_TIMEOUT_SECONDS)));
                }
                "allowWatchBookmarks" => q.allow_watch_bookmarks = parse_bool(&value),
                "labelSelector" => q.label_selector = LabelSelector::parse(&value)?,
                "fieldSelector" => q.field_selector = FieldSelector::parse(&value)?,
                "sendInitialEvents" => q.send_initial_events = Some(parse_bool(&value)),
                "includeObject" => {
                    q.include_object = Some(Include::parse(&value).ok_or_else(|| {
                        format!("includeObject: {value:?}: must be None, Metadata or Object")
                    })?);
                }
                // kube-apiserver ignores parameters it does not know; so do we.
                _ => {}
            }
        }
        Ok(q)
    }
}

impl Query {
    /// Checks the combinations kube-apiserver's `ValidateListOptions` forbids; a violation
    /// is a 422 Invalid, as there.
    pub(super) fn validated(self) -> Result<Query, ApiError> {
        let forbid = |field: &str, why: String| Err(ApiError::invalid_list_options(field, why));
        let rvm = self.resource_version_match.as_deref();
        if self.watch {
            if self.send_initial_events.is_some() && rvm != Some("NotOlderThan") {
                return forbid(
                    "resourceVersionMatch",
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
                        .to_owned(),
                );
            }
            if let Some(m) = rvm {
                if self.send_initial_events.is_none() {
                    return forbid(
                        "resourceVersionMatch",
                        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided".to_owned(),
                    );
                }
                if m != "NotOlderThan" {
                    return forbid(
                        "resourceVersionMatch",
                        format!("Unsupported value: {m:?}: supported values: \"NotOlderThan\""),
                    );
                }
            }
            return Ok(self);
        }
        if self.send_initial_events.is_some() {
            return forbid(
                "sendInitialEvents",
                "sendInitialEvents is forbidden for list".to_owned(),
            );
        }
        if let Some(m) = rvm {
            if self.resource_version.is_none() {
                return forbid(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden unless resourceVersion is provided"
                        .to_owned(),
                );
            }
            if self.continue_token.is_some() {
                return forbid(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided".to_owned(),
                );
            }
            if m != "Exact" && m != "NotOlderThan" {
                return forbid(
                    "resourceVersionMatch",
                    format!(
                        "Unsupported value: {m:?}: supported values: \"Exact\", \"NotOlderThan\", \"\""
                    ),
                );
            }
            if m == "Exact" && self.resource_version.as_deref() == Some("0") {
                return forbid(
                    "resourceVersionMatch",
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""
                        .to_owned(),
                );
            }
        }
        Ok(self)
    }
}

fn invalid(key: &str, value: &str) -> String {
    format!("invalid value {value:?} for query parameter {key}")
}

/// A boolean query parameter as kube-apiserver reads it (apimachinery's
/// `Convert_Slice_string_To_bool`): "0" and "false" in any case are false, and anything
/// else, the empty string and "yes" included, is true. Never an error.
pub(super) fn parse_bool(value: &str) -> bool {
    !(value == "0" || value.eq_ignore_ascii_case("false"))
}

pub(super) fn parse_rv(value: &str) -> Result<u64, String> {
    value
        .parse()
        .map_err(|_| format!("invalid resource version {value:?}"))
}

/// A continue token shaped like kube-apiserver's: base64 of
/// `{"v":"meta.k8s.io/v1","rv":N,"start":"<namespace>/<name>\u0000"}` (the name alone for a
/// cluster-scoped object).
#[derive(Debug, Serialize, Deserialize)]
struct ContinueToken {
    v: String,
    rv: u64,
    start: String,
}

const TOKEN_VERSION: &str = "meta.k8s.io/v1";

pub(super) fn encode_continue(spec: &ObjectSpec, rv: u64, last: &Version) -> String {
    let start_of = |namespace: &str, name: &str| match namespace {
        "" => format!("{name}\u{0}"),
        _ => format!("{namespace}/{name}\u{0}"),
    };
    let start = match &last.written {
        Some(w) => start_of(&w.key().namespace, &w.key().name),
        None => start_of(
            &generate::namespace(spec, last.id.index),
            &generate::name(spec, last.id.index),
        ),
    };
    let token = ContinueToken {
        v: TOKEN_VERSION.to_owned(),
        rv,
        start,
    };
    BASE64.encode(serde_json::to_vec(&token).expect("a token serializes"))
}

/// The token's resourceVersion and the key of the last object listed.
pub(super) fn decode_continue(token: &str) -> Result<(u64, NamespacedName), String> {
    let invalid = || {
        "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)".to_owned()
    };
    let bytes = BASE64.decode(token).map_err(|_| invalid())?;
    let token: ContinueToken = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
    if token.v != TOKEN_VERSION || token.rv == 0 {
        return Err(invalid());
    }
    let key = token.start.strip_suffix('\u{0}').ok_or_else(invalid)?;
    // A cluster-scoped object's key is its name alone.
    let (namespace, name) = key.split_once('/').unwrap_or(("", key));
    if name.is_empty() {
        return Err(invalid());
    }
    let key = NamespacedName {
        namespace: namespace.to_owned(),
        name: name.to_owned(),
    };
    Ok((token.rv, key))
}

/// What each row of a table carries of its object (`includeObject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Include {
    /// No object: `"object": null`.
    None,
    /// The object's `PartialObjectMetadata` (the default).
    Metadata,
    /// The whole object.
    Object,
}

impl Include {
    /// The `includeObject` query parameter's value; `None` when it names no choice.
    pub(super) fn parse(value: &str) -> Option<Include> {
        match value {
            "None" => Some(Include::None),
            "Metadata" => Some(Include::Metadata),
            "Object" => Some(Include::Object),
            _ => None,
        }
    }
}
