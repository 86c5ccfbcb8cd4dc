//! The object checks kube-apiserver's validation makes before a write is stored: its
//! namespace and name against the URL's, names, annotations and containers, preconditions.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::apiserver::ApiServer;
use crate::apiserver::status::ApiError;
use crate::apiserver::version::NamespacedName;
use crate::scenario::ObjectKind;

/// Most bytes of annotation keys and values one object may carry (apimachinery's
/// `TotalAnnotationSizeLimitB`, 256 KiB).
const MAX_ANNOTATIONS_BYTES: usize = 256 * 1024;

/// Settles the object's namespace and name against the URL's: fills a missing namespace,
/// refuses a different one, and for a create draws a name from `generateName`.
pub(super) fn object_key(
    kind: ObjectKind,
    namespace: &str,
    object: &mut Value,
    url_name: Option<&str>,
    server: &ApiServer,
) -> Result<NamespacedName, ApiError> {
    let meta = object
        .get_mut("metadata")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| invalid_object(kind, "", "metadata"))?;
    match meta.get("namespace").and_then(Value::as_str) {
        None | Some("") => {
            meta.insert("namespace".to_owned(), json!(namespace));
        }
        Some(ns) if ns != namespace => {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request".to_owned(),
            ));
        }
        Some(_) => {}
    }
    let mut name = meta
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if name.is_empty()
        && url_name.is_none()
        && let Some(prefix) = meta.get("generateName").and_then(Value::as_str)
        && !prefix.is_empty()
    {
        name = format!("{prefix}{}", server.random_suffix());
        meta.insert("name".to_owned(), json!(name));
    }
    if let Some(url_name) = url_name
        && name != url_name
    {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({url_name})"
        )));
    }
    if name.is_empty() {
        return Err(invalid_object(
            kind,
            "",
            "metadata.name: Required value: name or generateName is required",
        ));
    }
    Ok(NamespacedName {
        namespace: namespace.to_owned(),
        name,
    })
}

/// A 422 Invalid naming the object and what is wrong with it.
fn invalid_object(kind: ObjectKind, name: &str, what: &str) -> ApiError {
    ApiError::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        "Invalid",
        format!("{} {name:?} is invalid: {what}", kind.as_str()),
    )
}

/// The checks kube-apiserver's validation makes that a client is likely to trip over:
/// the name is a DNS subdomain and a Pod has containers, each with an image.
pub(super) fn object(
    kind: ObjectKind,
    key: &NamespacedName,
    object: &Value,
) -> Result<(), ApiError> {
    if !is_dns_subdomain(&key.name) {
        return Err(invalid_object(
            kind,
            &key.name,
            &format!(
                "metadata.name: Invalid value: {:?}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
                key.name
            ),
        ));
    }
    // apimachinery's ValidateAnnotationsSize: keys and values together.
    let annotations = object["metadata"]["annotations"].as_object();
    let size: usize = annotations
        .into_iter()
        .flatten()
        .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
        .sum();
    if size > MAX_ANNOTATIONS_BYTES {
        return Err(invalid_object(
            kind,
            &key.name,
            &format!(
                "metadata.annotations: Too long: may not be more than {MAX_ANNOTATIONS_BYTES} bytes"
            ),
        ));
    }
    if kind == ObjectKind::Pod {
        let containers = object["spec"]["containers"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        if containers.is_empty() {
            return Err(invalid_object(
                kind,
                &key.name,
                "spec.containers: Required value",
            ));
        }
        for (i, c) in containers.iter().enumerate() {
            for field in ["name", "image"] {
                if c[field].as_str().unwrap_or_default().is_empty() {
                    return Err(invalid_object(
                        kind,
                        &key.name,
                        &format!("spec.containers[{i}].{field}: Required value"),
                    ));
                }
            }
        }
    }
    Ok(())
}

pub(super) fn is_dns_subdomain(name: &str) -> bool {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    name.len() <= 253
        && name.starts_with(ok)
        && name.ends_with(ok)
        && name.chars().all(|c| ok(c) || c == '-' || c == '.')
}

/// Refuses an update written against another version or another object (HTTP 409).
pub(super) fn check_preconditions(
    kind: ObjectKind,
    key: &NamespacedName,
    object: &Value,
    current: &Value,
) -> Result<(), ApiError> {
    let conflict = |message: String| ApiError::new(StatusCode::CONFLICT, "Conflict", message);
    let field = |v: &Value, f: &str| v["metadata"][f].as_str().unwrap_or_default().to_owned();
    let rv = field(object, "resourceVersion");
    if !rv.is_empty() && rv != field(current, "resourceVersion") {
        return Err(conflict(format!(
            "Operation cannot be fulfilled on {} {:?}: the object has been modified; please apply your changes to the latest version and try again",
            kind.plural(),
            key.name
        )));
    }
    let uid = field(object, "uid");
    let current_uid = field(current, "uid");
    if !uid.is_empty() && uid != current_uid {
        return Err(conflict(format!(
            "Precondition failed: UID in precondition: {current_uid}, UID in object meta: {uid}"
        )));
    }
    Ok(())
}
