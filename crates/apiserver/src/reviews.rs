//! Who am I, and may I: the reviews `kubectl auth whoami` and `kubectl auth can-i` send,
//! and those a program sends before it starts (an operator that checks it may list and
//! watch its kinds, and stops when it may not). The built-in server authenticates no one
//! and authorizes every request, so it answers them as kube-apiserver's insecure port
//! did (removed in 1.20): every caller is `system:unsecured`, in `system:masters`, and
//! may do anything.
//!
//! Served over TCP only ([`super::routes::network_router`]), in JSON or protobuf (kubectl
//! and client-go v0.35 and later send them in protobuf), as kube-apiserver v1.37 answers
//! them: `SelfSubjectReview` (`authentication.k8s.io/v1`); `SelfSubjectAccessReview`,
//! `SubjectAccessReview`, `LocalSubjectAccessReview` (the request back, with the writer's
//! managedFields entry and `allowed: true`) and `SelfSubjectRulesReview` (one rule that
//! allows every verb on every resource, one on every path) in `authorization.k8s.io/v1`.
//! Nothing is kept: a review is answered, not stored. Not served: `TokenReview` (the
//! server has no tokens to check).

use axum::Router;
use axum::extract::RawQuery;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use serde_json::{Value, json};

use super::apply::{self, Shape, Typed};
use super::discovery::named_group;
use super::extract::{ApiBody, ApiPath};
use super::form::{Form, Wire};
use super::protobuf;
use super::status::{ApiError, method_not_allowed};
use super::write::{self, Causes, WriteOptions, body_wire, decode_as};

/// The user every request is served as.
const USER: &str = "system:unsecured";
/// Its groups: `system:masters` is bound to `cluster-admin` in every cluster.
const GROUPS: [&str; 2] = ["system:masters", "system:authenticated"];

/// A review the server answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Review {
    SelfSubject,
    LocalSubjectAccess,
    SelfSubjectAccess,
    SelfSubjectRules,
    SubjectAccess,
}

/// The groups of the reviews, as `/apis` lists them, in kube-apiserver's order.
pub const REVIEW_GROUPS: [&str; 2] = ["authentication.k8s.io", "authorization.k8s.io"];

impl Review {
    /// In each group's `APIResourceList` order (by name).
    pub const ALL: [Review; 5] = [
        Review::SelfSubject,
        Review::LocalSubjectAccess,
        Review::SelfSubjectAccess,
        Review::SelfSubjectRules,
        Review::SubjectAccess,
    ];

    pub fn group(self) -> &'static str {
        match self {
            Review::SelfSubject => REVIEW_GROUPS[0],
            _ => REVIEW_GROUPS[1],
        }
    }

    pub fn api_version(self) -> &'static str {
        match self {
            Review::SelfSubject => "authentication.k8s.io/v1",
            _ => "authorization.k8s.io/v1",
        }
    }

    pub fn kind(self) -> &'static str {
        match self {
            Review::SelfSubject => "SelfSubjectReview",
            Review::LocalSubjectAccess => "LocalSubjectAccessReview",
            Review::SelfSubjectAccess => "SelfSubjectAccessReview",
            Review::SelfSubjectRules => "SelfSubjectRulesReview",
            Review::SubjectAccess => "SubjectAccessReview",
        }
    }

    fn plural(self) -> String {
        format!("{}s", self.kind().to_lowercase())
    }

    fn namespaced(self) -> bool {
        self == Review::LocalSubjectAccess
    }

    /// The resource as its group's `APIResourceList` lists it.
    fn resource(self) -> Value {
        json!({
            "name": self.plural(), "singularName": self.kind().to_lowercase(),
            "namespaced": self.namespaced(), "kind": self.kind(), "verbs": ["create"],
        })
    }
}

/// The reviews' routes, their groups' discovery among them.
pub fn routes() -> Router {
    let mut router = Router::new();
    for review in Review::ALL {
        let root = format!("/apis/{}", review.api_version());
        let path = match review.namespaced() {
            true => format!("{root}/namespaces/{{namespace}}/{}", review.plural()),
            false => format!("{root}/{}", review.plural()),
        };
        let answer = match review.namespaced() {
            true => post(move |ApiPath(namespace), query, headers, body| {
                create(review, Some(namespace), query, headers, body)
            }),
            false => post(move |query, headers, body| create(review, None, query, headers, body)),
        };
        router = router.route(&path, answer.fallback(method_not_allowed));
    }
    for group in REVIEW_GROUPS {
        let resources: Vec<Value> = (Review::ALL.into_iter())
            .filter(|review| review.group() == group)
            .map(Review::resource)
            .collect();
        router = router
            .route(
                &format!("/apis/{group}"),
                get(move || async move {
                    let mut listed = named_group(group, "v1");
                    listed["kind"] = json!("APIGroup");
                    listed["apiVersion"] = json!("v1");
                    axum::Json(listed)
                })
                .fallback(method_not_allowed),
            )
            .route(
                &format!("/apis/{group}/v1"),
                get(move || async move {
                    axum::Json(json!({
                        "kind": "APIResourceList", "apiVersion": "v1",
                        "groupVersion": format!("{group}/v1"), "resources": resources,
                    }))
                })
                .fallback(method_not_allowed),
            );
    }
    router
}

/// `POST /apis/{group}/v1/{plural}` (and a local review's in its namespace): the answer,
/// 201 Created, as kube-apiserver gives it.
async fn create(
    review: Review,
    namespace: Option<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> Response {
    write::respond(|| {
        let options = WriteOptions::parse(query.as_deref(), &headers)?;
        let wire = Form::accepted(&headers, None).map_or(Wire::Json, |(_, wire)| wire);
        let object = decode_as(
            review.api_version(),
            review.kind(),
            &body,
            body_wire(&headers)?,
        )?;
        let answer = answered(review, object, namespace.as_deref(), &options.field_manager)?;
        let answer =
            protobuf::with_go_zeros(answer).map_err(|e| ApiError::internal(e.to_string()))?;
        Ok(wire.respond(StatusCode::CREATED, answer.to_string().into_bytes()))
    })
}

/// The answer to `object`, a review of `review`'s kind sent to `namespace` (a local
/// review's) by `manager`.
fn answered(
    review: Review,
    mut object: Value,
    namespace: Option<&str>,
    manager: &str,
) -> Result<Value, ApiError> {
    let (api_version, kind) = (review.api_version(), review.kind());
    match review {
        // A new object, as kube-apiserver makes one: the request's fields are not read.
        Review::SelfSubject => {
            return Ok(json!({
                "kind": kind, "apiVersion": api_version,
                "metadata": {"creationTimestamp": write::now()},
                "status": {"userInfo": {"username": USER, "groups": GROUPS}},
            }));
        }
        Review::SelfSubjectRules => {
            return Ok(json!({
                "kind": kind, "apiVersion": api_version, "metadata": {}, "spec": {},
                "status": {
                    "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                    "incomplete": false,
                },
            }));
        }
        Review::SelfSubjectAccess | Review::SubjectAccess | Review::LocalSubjectAccess => {
            validate(review, &object, namespace)?;
        }
    }
    // The request back, with its writer's managedFields entry and the answer.
    let typed = Typed {
        shape: Shape::named(&format!("io.k8s.api.authorization.v1.{kind}")),
        api_version,
        kind,
        has_status: false,
        go_type: true,
    };
    let writer = apply::Writer {
        manager,
        subresource: None,
    };
    if let Some(fields) = object.as_object_mut() {
        fields.remove("status");
    }
    let entries = apply::update_of(&typed, None, &object, writer, &write::now());
    object["metadata"]["managedFields"] = Value::Array(entries);
    if let Some(namespace) = namespace {
        object["metadata"]["namespace"] = json!(namespace);
    }
    object["status"] = json!({"allowed": true});
    Ok(object)
}

/// kube-apiserver's validation of an access review: what it asks about is either a
/// resource or a path; one about another subject names a user or a group; a local one
/// asks about its own namespace.
fn validate(review: Review, object: &Value, namespace: Option<&str>) -> Result<(), ApiError> {
    let spec = &object["spec"];
    let mut causes = Causes::default();
    let (resource, path) = (&spec["resourceAttributes"], &spec["nonResourceAttributes"]);
    if resource.is_null() == path.is_null() {
        let why = "exactly one of nonResourceAttributes or resourceAttributes must be specified";
        // Go prints the path's attributes as its struct's JSON: field names capitalized.
        let printed = match path.as_object() {
            Some(fields) => fields
                .iter()
                .map(|(name, value)| (capitalized(name), value.clone()))
                .collect(),
            None => Value::Null,
        };
        causes.invalid("spec", &printed, why);
    }
    let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
    let groups = spec["groups"].as_array().is_some_and(|g| !g.is_empty());
    if review != Review::SelfSubjectAccess && text(&spec["user"]).is_empty() && !groups {
        let why = "at least one of user or group must be specified";
        causes.invalid("spec.user", &json!(""), why);
    }
    if let Some(namespace) = namespace
        && !resource.is_null()
        && text(&resource["namespace"]) != namespace
    {
        let asked = json!(text(&resource["namespace"]));
        let why = "must match metadata.namespace";
        causes.invalid("spec.resourceAttributes.namespace", &asked, why);
    }
    // kube-apiserver names no kind: the object it validates has lost it in decoding.
    causes.into_result(".authorization.k8s.io", "")
}

fn capitalized(name: &str) -> String {
    let mut chars = name.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
