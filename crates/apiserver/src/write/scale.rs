//! The scale subresource of Deployments (`{root}/namespaces/{namespace}/deployments/{name}/scale`),
//! as `kubectl scale` and HorizontalPodAutoscalers use it: an autoscaling/v1 `Scale` made
//! from the Deployment (its replicas wanted and had, its selector as text), written back
//! by a PUT of a Scale or a PATCH of one. A write changes the Deployment's
//! `spec.replicas` (its generation moves on, watchers see it MODIFIED) and gives the writer
//! a managedFields entry for the subresource owning `spec.replicas`, which no other entry
//! owns any more, as kube-apiserver's field manager does.
//!
//! Scales are JSON whatever `Accept` asks (client-go reads the answer by its
//! Content-Type); their bodies JSON too.

use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};

use super::body::unsupported_media_type;
use super::options::WriteOptions;
use super::pipeline::{self, Finds, Live};
use super::{Endpoint, now};
use super::{Stop, patch_failed, patch_type, respond, scoped, writable};
use crate::ApiServer;
use crate::apply;
use crate::extract::{ApiBody, ApiPath};
use crate::group::Group;
use crate::patch::{self, PatchType};
use crate::printers::selector_text;
use crate::status::{ApiError, json_response};
use crate::version::NamespacedName;
use scenario::ObjectKind;

/// The schema of an autoscaling/v1 Scale, which a strategic merge patch of one reads.
pub(crate) const SCHEMA: &str = "io.k8s.api.autoscaling.v1.Scale";

/// The path's object, when its kind has a scale subresource here.
type Target = (ObjectKind, NamespacedName);

/// `GET .../{resource}/{name}/scale`.
pub async fn get<G: Group>(
    State(server): State<ApiServer>,
    ApiPath((namespace, resource, name)): ApiPath<(String, String, String)>,
) -> Response {
    respond(|| {
        let (kind, key) = target::<G>(&server, namespace, &resource, name)?;
        let version = server
            .get_named(&key.namespace, &key.name)
            .ok_or_else(|| ApiError::not_found(kind, &key.name))?;
        Ok(scale_response(&version.to_value(server.generator())))
    })
}

/// `PUT .../{resource}/{name}/scale`: a whole Scale.
pub async fn replace<G: Group>(
    State(server): State<ApiServer>,
    ApiPath((namespace, resource, name)): ApiPath<(String, String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> Response {
    respond(|| {
        let target = target::<G>(&server, namespace, &resource, name)?;
        let given = decoded(&headers, &body)?;
        let options = WriteOptions::parse(query.as_deref(), &headers)?;
        write(&server, &target, &options, |_| Ok(given))
    })
}

/// The Scale a PUT sends: JSON only (415 for another body), decoded (400 for what is not
/// JSON), as kube-apiserver reads it.
pub(crate) fn decoded(headers: &HeaderMap, body: &[u8]) -> Result<Value, ApiError> {
    let media = content_type(headers);
    if !(media.is_empty() || media.eq_ignore_ascii_case("application/json")) {
        return Err(unsupported_media_type(&format!(
            "the body of the request was in an unknown format ({media}) - accepted media types include: application/json"
        )));
    }
    serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "Scale in version \"v1\" cannot be handled as a Scale: {e}"
        ))
    })
}

/// `PATCH .../{resource}/{name}/scale`: a JSON, merge or strategic merge patch of the
/// Scale (not an apply).
pub async fn patch<G: Group>(
    State(server): State<ApiServer>,
    ApiPath((namespace, resource, name)): ApiPath<(String, String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> Response {
    respond(|| {
        let target = target::<G>(&server, namespace, &resource, name)?;
        let patch_type = patch_type(&headers)?;
        if patch_type == PatchType::Apply {
            // kube-apiserver maps a Scale's managedFields onto its Deployment's; not here.
            return Err(unsupported_media_type(
                "server-side apply of a Scale is not supported by this server; apply the Deployment's spec.replicas instead",
            ));
        }
        let options = WriteOptions::parse(query.as_deref(), &headers)?;
        super::options::check_patch_options(&options, false)?;
        write(&server, &target, &options, |current| {
            patch::apply(patch_type, current, &body, apply::Shape::named(SCHEMA))
                .map_err(patch_failed)
        })
    })
}

/// The kind and object a scale path names: 404 for a kind without the subresource, as
/// kube-apiserver answers `pods/x/scale`.
fn target<G: Group>(
    server: &ApiServer,
    namespace: String,
    resource: &str,
    name: String,
) -> Result<Target, ApiError> {
    let kind = G::kind(server.spec().kind, resource).filter(|k| *k == ObjectKind::Deployment);
    let kind = scoped(writable(server, kind)?, &namespace)?;
    Ok((kind, NamespacedName { namespace, name }))
}

fn content_type(headers: &HeaderMap) -> &str {
    let value = headers.get(header::CONTENT_TYPE);
    let value = value.and_then(|v| v.to_str().ok()).unwrap_or_default();
    value.split(';').next().unwrap_or_default().trim()
}

/// Writes the Scale `new_scale` makes of the current one back to its Deployment through
/// the write pipeline, as a write of the Deployment by the scale subresource, and answers
/// with the Scale of what was stored.
fn write(
    server: &ApiServer,
    (kind, key): &Target,
    options: &WriteOptions,
    new_scale: impl FnOnce(&Value) -> Result<Value, ApiError>,
) -> Result<Response, ApiError> {
    let generator = server.generator().clone();
    let writer = apply::Writer {
        manager: &options.field_manager,
        subresource: Some("scale"),
    };
    let target = pipeline::Target {
        server,
        key,
        finds: Finds::Live,
        endpoint: Endpoint::Object,
        writer,
    };
    let written = server.write(key, options.dry_run, |current, uid| {
        let version = current.cloned();
        let current = current.map(|c| c.to_value(&generator));
        let found = current.as_ref().map(Live::same);
        let change = pipeline::written(kind, target, (found, uid), |live| {
            let live = live.ok_or_else(|| ApiError::not_found(*kind, &key.name))?;
            let scale = new_scale(&scale_of(live))?;
            let mut object = live.clone();
            object["spec"]["replicas"] = json!(replicas_of(&scale, &key.name)?);
            // The Scale's preconditions are the Deployment's: its resourceVersion and UID.
            for field in ["resourceVersion", "uid"] {
                object["metadata"][field] = scale["metadata"][field].clone();
            }
            // The scale subresource owns `spec.replicas`, taken from whoever owned it.
            let entries = apply::update(*kind, Some(live), &object, writer, &now());
            Ok((object, Some(entries)))
        })?;
        Stop::unless_stored(change, version)
    });
    let version = match written {
        Ok(version) | Err(Stop::Unchanged(version)) => version,
        Err(Stop::Refused(error)) => return Err(error),
        // A scale keeps the finalizers, so it empties none.
        Err(Stop::Emptied(object)) => return Ok(scale_response(&object)),
    };
    Ok(scale_response(&version.to_value(&generator)))
}

/// The replicas a Scale asks for, checked as kube-apiserver's `ValidateScale` does.
pub(crate) fn replicas_of(scale: &Value, name: &str) -> Result<i64, ApiError> {
    let given = scale["metadata"]["name"].as_str().unwrap_or(name);
    if given != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({given}) does not match the name on the URL ({name})"
        )));
    }
    let replicas = &scale["spec"]["replicas"];
    let invalid = |why: &str| {
        let cause = format!("Invalid value: {replicas}: {why}");
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Invalid",
            format!("Scale.autoscaling {name:?} is invalid: spec.replicas: {cause}"),
        )
        .about(name, "Scale.autoscaling")
        .with_causes(vec![(
            "FieldValueInvalid",
            cause.clone(),
            "spec.replicas".to_owned(),
        )])
    };
    match replicas {
        // A Scale's replicas are omitted at zero.
        Value::Null => Ok(0),
        Value::Number(n) => match n.as_i64().filter(|n| i32::try_from(*n).is_ok()) {
            Some(n) if n < 0 => Err(invalid("must be greater than or equal to 0")),
            Some(n) => Ok(n),
            None => Err(invalid("must be a 32-bit integer")),
        },
        _ => Err(ApiError::bad_request(format!(
            "Scale in version \"v1\" cannot be handled as a Scale: spec.replicas: expected an integer, found {replicas}"
        ))),
    }
}

/// The autoscaling/v1 Scale of `deployment`, as kube-apiserver's `scaleFromDeployment`
/// makes it.
pub(crate) fn scale_of(deployment: &Value) -> Value {
    let meta = &deployment["metadata"];
    let mut metadata = serde_json::Map::new();
    for field in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if !meta[field].is_null() {
            metadata.insert(field.to_owned(), meta[field].clone());
        }
    }
    let mut spec = json!({});
    let replicas = deployment["spec"]["replicas"].as_i64().unwrap_or(1);
    if replicas != 0 {
        spec["replicas"] = json!(replicas);
    }
    let mut status = json!({"replicas": deployment["status"]["replicas"].as_i64().unwrap_or(0)});
    let selector = selector_text(&deployment["spec"]["selector"]);
    if !selector.is_empty() {
        status["selector"] = json!(selector);
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": spec,
        "status": status,
    })
}

fn scale_response(deployment: &Value) -> Response {
    let body = scale_of(deployment).to_string();
    json_response(StatusCode::OK, Body::from(body))
}
