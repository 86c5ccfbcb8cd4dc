//! Refusals as kube-apiserver writes them: `Status` bodies with its codes and reasons.

use axum::body::Body;

#[cfg(feature = "server")]
use axum::http::HeaderValue;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::state::Expired;
#[cfg(feature = "server")]
use scenario::ObjectKind;

/// 404 for a namespace that does not exist.
#[cfg(feature = "server")]
pub(super) fn namespace_not_found(namespace: &str) -> Response {
    ApiError::no_namespace(namespace).into_response()
}

/// 404 for an object of `kind` named `name` that does not exist.
#[cfg(feature = "server")]
pub(super) fn object_not_found(kind: ObjectKind, name: &str) -> Response {
    ApiError::not_found(kind, name).into_response()
}

pub(super) async fn method_not_allowed() -> Response {
    status(
        StatusCode::METHOD_NOT_ALLOWED,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
    )
}

/// A request the server refuses: a `Status` with kube-apiserver's code and reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ApiError {
    pub(super) code: StatusCode,
    pub(super) reason: &'static str,
    pub(super) message: String,
    /// The Status's `details`: which object (name, resource) the error is about; a
    /// resource of a named group as `{resource}.{group}` (`deployments.apps`).
    details: Option<(String, &'static str)>,
    /// The Status's `details.causes`: each field at fault (reason, message, field).
    causes: Vec<(&'static str, String, String)>,
}

impl ApiError {
    /// A refusal with this code, reason and message.
    pub(super) fn new(
        code: StatusCode,
        reason: &'static str,
        message: impl Into<String>,
    ) -> ApiError {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
            causes: Vec::new(),
        }
    }

    /// Adds the fields at fault, as kube-apiserver's `details.causes`.
    #[cfg(feature = "server")]
    pub(super) fn with_causes(mut self, causes: Vec<(&'static str, String, String)>) -> ApiError {
        self.causes = causes;
        self
    }

    /// Names the object the error is about, as kube-apiserver's `details`.
    #[cfg(feature = "server")]
    pub(super) fn about(mut self, name: &str, resource: &'static str) -> ApiError {
        self.details = Some((name.to_owned(), resource));
        self
    }

    /// A path naming no resource this server knows (404).
    pub(super) fn unknown_resource() -> ApiError {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    /// No object `name` of `kind` (404).
    #[cfg(feature = "server")]
    pub(super) fn not_found(kind: ObjectKind, name: &str) -> ApiError {
        ApiError::no_such(kind.resource_name(), name)
    }

    /// No object `name` of `resource` (404).
    #[cfg(feature = "server")]
    pub(super) fn no_such(resource: &'static str, name: &str) -> ApiError {
        let message = format!("{resource} {name:?} not found");
        ApiError::new(StatusCode::NOT_FOUND, "NotFound", message).about(name, resource)
    }

    /// A create of `name` where an object of `resource` of that name is (409).
    #[cfg(feature = "server")]
    pub(super) fn already_exists(resource: &'static str, name: &str) -> ApiError {
        let message = format!("{resource} {name:?} already exists");
        ApiError::new(StatusCode::CONFLICT, "AlreadyExists", message).about(name, resource)
    }

    /// 404 for a namespace that does not exist.
    #[cfg(feature = "server")]
    pub(super) fn no_namespace(namespace: &str) -> ApiError {
        let message = format!("namespaces {namespace:?} not found");
        ApiError::new(StatusCode::NOT_FOUND, "NotFound", message).about(namespace, "namespaces")
    }

    /// 403 for a create of `resource` `name` into `namespace` while it is being deleted
    /// (`NamespaceLifecycle`'s words, with its `NamespaceTerminating` cause).
    #[cfg(feature = "server")]
    pub(super) fn namespace_terminating(
        resource: &'static str,
        name: &str,
        namespace: &str,
    ) -> ApiError {
        let message = format!(
            "{resource} {name:?} is forbidden: unable to create new content in namespace \
             {namespace} because it is being terminated"
        );
        let cause = (
            "NamespaceTerminating",
            format!("namespace {namespace} is being terminated"),
            "metadata.namespace".to_owned(),
        );
        ApiError::new(StatusCode::FORBIDDEN, "Forbidden", message)
            .about(name, resource)
            .with_causes(vec![cause])
    }

    pub(super) fn bad_request(message: String) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "BadRequest", message)
    }

    /// kube-apiserver's 500 without a reason, its answer where a Go parse error reaches
    /// the client unwrapped (a watch's or an update's resourceVersion that is not a
    /// number).
    pub(super) fn internal(message: String) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "", message)
    }

    /// 406 for an `Accept` header naming nothing this server writes (it writes JSON and
    /// protobuf, whole objects or their metadata, and tables in JSON; not YAML or CBOR).
    pub(super) fn not_acceptable() -> ApiError {
        ApiError::new(
            StatusCode::NOT_ACCEPTABLE,
            "NotAcceptable",
            "406: Not Acceptable\n\nAvailable representations: application/json, application/vnd.kubernetes.protobuf, application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch",
        )
    }

    /// A patch whose result is not a valid object: kube-apiserver answers 422 with the
    /// patch as the field at fault, where a create or replace with the same body gets 400.
    #[cfg(feature = "server")]
    pub(super) fn invalid_patch_result(self) -> ApiError {
        if self.code != StatusCode::BAD_REQUEST {
            return self;
        }
        let cause = format!("Invalid value: the patched object: {}", self.message);
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Invalid",
            format!(" \"\" is invalid: patch: {cause}"),
        )
        .with_causes(vec![("FieldValueInvalid", cause, "patch".to_owned())])
    }

    /// kube-apiserver's answer to invalid ListOptions: 422 with the field at fault.
    pub(super) fn invalid_list_options(field: &str, why: String) -> ApiError {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Invalid",
            format!("ListOptions.meta.k8s.io \"\" is invalid: {field}: Forbidden: {why}"),
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = status_body(self.code.as_u16(), self.reason, &self.message);
        if let Some((name, kind)) = self.details {
            body["details"] = match kind.split_once('.') {
                None => json!({"name": name, "kind": kind}),
                Some((kind, group)) => json!({"name": name, "group": group, "kind": kind}),
            };
            if name.is_empty() {
                // Left out, as Go's `omitempty` leaves it (a PatchOptions refusal).
                body["details"].as_object_mut().map(|d| d.remove("name"));
            }
        }
        if !self.causes.is_empty() {
            let causes: Vec<_> = self
                .causes
                .iter()
                .map(|(reason, message, field)| {
                    json!({"reason": reason, "message": message, "field": field})
                })
                .collect();
            body["details"]["causes"] = json!(causes);
        }
        json_response(self.code, Body::from(body.to_string()))
    }
}

/// 410 Expired for a LIST at a resourceVersion the history no longer holds, in
/// kube-apiserver's words (a continued list says the continue token is too old).
pub(super) fn expired_response(expired: Expired, continuing: bool) -> Response {
    let message = if continuing {
        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results.".to_owned()
    } else {
        expired.to_string()
    };
    status(StatusCode::GONE, "Expired", message)
}

/// A failure `Status`; an empty `reason` is left out, as kube-apiserver leaves it out of
/// its 500s.
pub(super) fn status_body(code: u16, reason: &str, message: &str) -> serde_json::Value {
    let mut body = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    });
    if reason.is_empty() {
        body.as_object_mut()
            .expect("a Status is an object")
            .remove("reason");
    }
    body
}

/// A kube-apiserver `Status` error response.
pub fn status(code: StatusCode, reason: &str, message: impl AsRef<str>) -> Response {
    let body = status_body(code.as_u16(), reason, message.as_ref()).to_string();
    json_response(code, Body::from(body))
}

pub(super) fn json_response(code: StatusCode, body: Body) -> Response {
    (code, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// Go's mux's 404, which kube-apiserver sends for a path outside the groups it serves (and
/// a health check it does not have): text, not a `Status`.
#[cfg(feature = "server")]
pub(super) fn page_not_found() -> Response {
    nosniff(text(
        StatusCode::NOT_FOUND,
        "404 page not found\n".to_owned(),
    ))
}

/// `response` with `X-Content-Type-Options: nosniff`, as Go's probe handler and its mux's
/// 404 send (a single health check's answer does not).
#[cfg(feature = "server")]
pub(super) fn nosniff(mut response: Response) -> Response {
    response.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// A `text/plain` answer, as Go's handlers write one.
#[cfg(feature = "server")]
pub(super) fn text(code: StatusCode, body: String) -> Response {
    (
        code,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}
