//! Writes over HTTP, for `serve`: create (POST), replace (PUT), patch (PATCH) and
//! deletecollection, with kube-apiserver's checks and the fields the server owns.
//!
//! What a client sends is decoded into the k8s-openapi type, which rejects wrong field
//! types and drops unknown fields; `fieldValidation` says whether those are refused
//! (`Strict`, what kubectl sends), reported in `Warning` headers (`Warn`, the default) or
//! ignored, as in kube-apiserver.
//! The server then sets what clients cannot: UID, creationTimestamp, generation, the Pod's
//! status on create, and a managedFields entry for the writer (`fieldManager`, or the
//! User-Agent's product name). Pods, ConfigMaps and Secrets do not allow create-on-update,
//! so a PUT or PATCH of a missing object is a 404.

use axum::body::Body;
use axum::extract::{RawQuery, State};

use super::extract::{ApiBody, ApiPath};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::ApiServer;
use super::generate::{self, Generator};
use super::http::{
    ApiError, Query, Selection, json_response, namespace_not_found, object_not_found,
    object_response,
};
use super::patch::{self, PatchError, PatchType};
use super::written::{ObjectKey, Version};
use crate::scenario::ObjectKind;

/// Most bytes of annotation keys and values one object may carry (apimachinery's
/// `TotalAnnotationSizeLimitB`, 256 KiB).
const MAX_ANNOTATIONS_BYTES: usize = 256 * 1024;

/// Longest `fieldManager` kube-apiserver accepts.
const MAX_FIELD_MANAGER: usize = 128;

/// `POST /api/v1/namespaces/{namespace}/{resource}`.
pub async fn create(
    State(server): State<ApiServer>,
    ApiPath((namespace, resource)): ApiPath<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> Response {
    respond(|| {
        check_json_body(&headers)?;
        if !server.has_namespace(&namespace) {
            return Ok(namespace_not_found(&namespace));
        }
        let mut write = Write::new(&server, &resource, &namespace, query.as_deref(), &headers)?;
        let (key, object) = write.received(decode(write.kind, &body)?, None)?;
        let kind = write.kind;
        let version = server.write(&key, write.options.dry_run, |current, uid| match current {
            Some(_) => Err(ApiError::new(
                StatusCode::CONFLICT,
                "AlreadyExists",
                format!("{} {:?} already exists", kind.plural(), key.name),
            )),
            None => Ok(finish(
                kind,
                object,
                None,
                uid,
                &write.options.field_manager,
            )),
        })?;
        Ok(write.respond(object_response(
            StatusCode::CREATED,
            server.generator(),
            &version,
        )))
    })
}

/// `PUT /api/v1/namespaces/{namespace}/{resource}/{name}`.
pub async fn replace(
    State(server): State<ApiServer>,
    ApiPath((namespace, resource, name)): ApiPath<(String, String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> Response {
    respond(|| {
        check_json_body(&headers)?;
        let mut write = Write::new(&server, &resource, &namespace, query.as_deref(), &headers)?;
        let (key, object) = write.received(decode(write.kind, &body)?, Some(&name))?;
        let response = write.update(&key, |_, _| Ok(object))?;
        Ok(write.respond(response))
    })
}

/// `PATCH /api/v1/namespaces/{namespace}/{resource}/{name}`.
pub async fn patch(
    State(server): State<ApiServer>,
    ApiPath((namespace, resource, name)): ApiPath<(String, String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> Response {
    respond(|| {
        let mut write = Write::new(&server, &resource, &namespace, query.as_deref(), &headers)?;
        let content_type = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let patch_type = match PatchType::from_content_type(content_type) {
            Some(PatchType::Apply) => {
                return Err(unsupported_media_type(
                    "server-side apply (application/apply-patch+yaml) is not supported by this server; use client-side apply",
                ));
            }
            Some(t) => t,
            None => {
                return Err(unsupported_media_type(
                    "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json",
                ));
            }
        };
        let key = ObjectKey {
            namespace: namespace.clone(),
            name: name.clone(),
        };
        let response = write.update(&key, |write, current| {
            let patched = patch::apply(patch_type, current, &body).map_err(|e| match e {
                PatchError::Malformed(m) => ApiError::bad_request(m),
                PatchError::DoesNotApply(m) => {
                    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "Invalid", m)
                }
            })?;
            Ok(write.received(patched, Some(&name))?.1)
        })?;
        Ok(write.respond(response))
    })
}

/// Runs a handler whose errors are `Status` responses.
fn respond(handler: impl FnOnce() -> Result<Response, ApiError>) -> Response {
    handler().unwrap_or_else(ApiError::into_response)
}

/// One create, replace or patch: the kind it writes, where, its options, and the warnings
/// for the response.
struct Write<'a> {
    server: &'a ApiServer,
    kind: ObjectKind,
    namespace: &'a str,
    options: WriteOptions,
    warnings: Vec<String>,
}

impl<'a> Write<'a> {
    fn new(
        server: &'a ApiServer,
        resource: &str,
        namespace: &'a str,
        query: Option<&str>,
        headers: &HeaderMap,
    ) -> Result<Write<'a>, ApiError> {
        Ok(Write {
            server,
            kind: writable(server, resource)?,
            namespace,
            options: WriteOptions::parse(query, headers)?,
            warnings: Vec::new(),
        })
    }

    /// The object a client sent (or a patch made), as the type has it, with its key
    /// settled against the URL and validated.
    fn received(
        &mut self,
        object: Value,
        url_name: Option<&str>,
    ) -> Result<(ObjectKey, Value), ApiError> {
        let validation = self.options.field_validation;
        let mut object = normalize(self.kind, object, validation, &mut self.warnings)?;
        let key = object_key(
            self.kind,
            self.namespace,
            &mut object,
            url_name,
            self.server,
        )?;
        validate(self.kind, &key, &object)?;
        Ok((key, object))
    }

    /// Replaces the live object `key` with what `new_body` makes of its current JSON.
    fn update(
        &mut self,
        key: &ObjectKey,
        new_body: impl FnOnce(&mut Self, &Value) -> Result<Value, ApiError>,
    ) -> Result<Response, ApiError> {
        let kind = self.kind;
        let generator = self.server.generator().clone();
        let server = self.server;
        let dry_run = self.options.dry_run;
        let version = server.write(key, dry_run, |current, _| -> Result<Value, ApiError> {
            let current = current
                .ok_or_else(|| ApiError::not_found(kind, &key.name))?
                .to_value(&generator);
            let object = new_body(self, &current)?;
            check_preconditions(kind, key, &object, &current)?;
            let manager = &self.options.field_manager;
            Ok(finish(kind, object, Some(&current), "", manager))
        })?;
        Ok(object_response(StatusCode::OK, &generator, &version))
    }

    /// `response` with one `Warning: 299` header per warning, as kube-apiserver sends them.
    fn respond(&self, mut response: Response) -> Response {
        for w in &self.warnings {
            let value = format!("299 - {w:?}");
            if let Ok(value) = header::HeaderValue::from_str(&value) {
                response.headers_mut().append(header::WARNING, value);
            }
        }
        response
    }
}

/// `DELETE /api/v1/namespaces/{namespace}/{resource}/{name}`. Deletion is immediate, as
/// with `--grace-period=0`; the answer is the object's last state. The options come as
/// query parameters or, as client-go sends them, as a DeleteOptions body.
pub async fn delete(
    State(server): State<ApiServer>,
    ApiPath((namespace, resource, name)): ApiPath<(String, String, String)>,
    RawQuery(query): RawQuery,
    ApiBody(body): ApiBody,
) -> Response {
    respond(|| {
        let Some(kind) = ObjectKind::from_plural(&resource) else {
            return Err(ApiError::unknown_resource());
        };
        let options = DeleteOptions::parse(query.as_deref(), &body)?;
        let generator = server.generator().clone();
        let deleted = if kind == generator.spec().kind {
            server.delete_named(&namespace, &name, options.dry_run, |current| {
                options.check(kind, &generator, current)
            })?
        } else {
            None
        };
        Ok(match deleted {
            Some(version) => object_response(StatusCode::OK, &generator, &version),
            None => object_not_found(kind, &name),
        })
    })
}

/// `DELETE /api/v1/namespaces/{namespace}/{resource}`: deletes what the selectors select
/// and answers with the list of what was deleted, as it was.
pub async fn delete_collection(
    State(server): State<ApiServer>,
    ApiPath((namespace, resource)): ApiPath<(String, String)>,
    RawQuery(query): RawQuery,
    ApiBody(body): ApiBody,
) -> Response {
    respond(|| {
        let kind = writable(&server, &resource)?;
        let dry_run = DeleteOptions::parse(query.as_deref(), &body)?.dry_run;
        let q = Query::parse(query.as_deref().unwrap_or_default())?;
        let selection = Selection::new(&server, kind, Some(&namespace), &q);
        let generator = server.generator().clone();
        let (rv, deleted) =
            server.delete_where(|v| selection.matches(generator.spec(), v), dry_run);
        let mut buf = format!(
            r#"{{"kind":"{}List","apiVersion":"v1","metadata":{{"resourceVersion":"{rv}"}},"items":["#,
            kind.as_str()
        )
        .into_bytes();
        for (i, version) in deleted.iter().enumerate() {
            if i > 0 {
                buf.push(b',');
            }
            version.write(&mut buf, &generator);
        }
        buf.extend_from_slice(b"]}");
        Ok(json_response(StatusCode::OK, Body::from(buf)))
    })
}

/// Query parameters of a write.
#[derive(Debug)]
struct WriteOptions {
    /// `dryRun=All`: check and answer, but store nothing.
    dry_run: bool,
    /// Who writes, for managedFields.
    field_manager: String,
    /// What to do with unknown fields.
    field_validation: FieldValidation,
}

impl WriteOptions {
    fn parse(query: Option<&str>, headers: &HeaderMap) -> Result<WriteOptions, ApiError> {
        let dry_run = dry_run(query)?;
        let mut field_manager = None;
        let mut field_validation = FieldValidation::Warn;
        for (key, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
            if key == "fieldValidation" {
                field_validation = match &*value {
                    "Ignore" => FieldValidation::Ignore,
                    "Warn" | "" => FieldValidation::Warn,
                    "Strict" => FieldValidation::Strict,
                    other => {
                        return Err(ApiError::bad_request(format!(
                            "fieldValidation parameter unsupported: {other:?}; expected Ignore, Warn or Strict"
                        )));
                    }
                };
            } else if key == "fieldManager" {
                if value.len() > MAX_FIELD_MANAGER {
                    return Err(invalid_options(
                        "fieldManager",
                        format!("Too long: may not be more than {MAX_FIELD_MANAGER} bytes"),
                    ));
                }
                field_manager = Some(value.into_owned());
            }
        }
        // kube-apiserver's default: the User-Agent up to its first '/' ("kubectl").
        let field_manager = field_manager.unwrap_or_else(|| {
            let agent = headers
                .get(header::USER_AGENT)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            let product = agent.split('/').next().unwrap_or_default();
            product.chars().take(MAX_FIELD_MANAGER).collect()
        });
        Ok(WriteOptions {
            dry_run,
            field_manager,
            field_validation,
        })
    }
}

/// DeleteOptions, from the body or the query.
#[derive(Debug, Default)]
struct DeleteOptions {
    dry_run: bool,
    /// `preconditions.uid`: delete only this incarnation.
    uid: Option<String>,
    /// `preconditions.resourceVersion`: delete only this version.
    resource_version: Option<String>,
}

impl DeleteOptions {
    fn parse(query: Option<&str>, body: &[u8]) -> Result<DeleteOptions, ApiError> {
        let mut options = DeleteOptions {
            dry_run: dry_run(query)?,
            ..DeleteOptions::default()
        };
        for (key, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
            if key == "propagationPolicy" {
                check_propagation_policy(&value)?;
            }
        }
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(options);
        }
        let given: k8s_openapi::apimachinery::pkg::apis::meta::v1::DeleteOptions =
            serde_json::from_slice(body).map_err(|e| {
                ApiError::bad_request(format!(
                    "DeleteOptions in version \"v1\" cannot be handled as a DeleteOptions: {e}"
                ))
            })?;
        for value in given.dry_run.iter().flatten() {
            check_dry_run(value)?;
            options.dry_run = true;
        }
        if let Some(policy) = &given.propagation_policy {
            check_propagation_policy(policy)?;
        }
        if let Some(p) = given.preconditions {
            options.uid = p.uid;
            options.resource_version = p.resource_version;
        }
        Ok(options)
    }

    /// Refuses the deletion when a precondition does not hold (HTTP 409).
    fn check(
        &self,
        kind: ObjectKind,
        generator: &Generator,
        current: &Version,
    ) -> Result<(), ApiError> {
        let value = current.to_value(generator);
        let field = |f: &str| value["metadata"][f].as_str().unwrap_or_default().to_owned();
        let name = field("name");
        let conflict = |what: &str, wanted: &str, actual: String| {
            ApiError::new(
                StatusCode::CONFLICT,
                "Conflict",
                format!(
                    "Operation cannot be fulfilled on {} {name:?}: Precondition failed: {what} in precondition: {wanted}, {what} in object meta: {actual}",
                    kind.plural()
                ),
            )
        };
        if let Some(uid) = &self.uid
            && *uid != field("uid")
        {
            return Err(conflict("UID", uid, field("uid")));
        }
        if let Some(rv) = &self.resource_version
            && *rv != field("resourceVersion")
        {
            return Err(conflict("ResourceVersion", rv, field("resourceVersion")));
        }
        Ok(())
    }
}

/// The `dryRun` parameter: only `All` (or nothing) is valid.
fn dry_run(query: Option<&str>) -> Result<bool, ApiError> {
    let mut dry_run = false;
    for (key, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        if key == "dryRun" {
            check_dry_run(&value)?;
            dry_run = true;
        }
    }
    Ok(dry_run)
}

fn check_dry_run(value: &str) -> Result<(), ApiError> {
    if value == "All" {
        Ok(())
    } else {
        Err(invalid_options(
            "dryRun",
            format!("Unsupported value: {value:?}: supported values: \"All\""),
        ))
    }
}

/// kube-apiserver's `ValidateDeleteOptions`: a propagation policy is one of three (this
/// server deletes at once whichever it is: it has no garbage collector).
fn check_propagation_policy(value: &str) -> Result<(), ApiError> {
    if matches!(value, "Foreground" | "Background" | "Orphan") {
        Ok(())
    } else {
        Err(invalid_options(
            "propagationPolicy",
            format!(
                "Unsupported value: {value:?}: supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
            ),
        ))
    }
}

fn invalid_options(field: &str, why: String) -> ApiError {
    ApiError::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        "Invalid",
        format!("options are invalid: {field}: {why}"),
    )
}

fn unsupported_media_type(message: &str) -> ApiError {
    ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "UnsupportedMediaType",
        message.to_owned(),
    )
}

/// Refuses a create or replace body that is not JSON, as kube-apiserver's
/// `NegotiateInputSerializer` refuses a media type it has no decoder for (415). No
/// Content-Type means JSON there, the first type it serves, and here. kube-apiserver
/// also reads YAML, protobuf and CBOR; this server reads JSON only and says so.
fn check_json_body(headers: &HeaderMap) -> Result<(), ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap_or("(not text)"))
        .unwrap_or_default();
    let media = content_type.split(';').next().unwrap_or_default().trim();
    if media.is_empty() || media.eq_ignore_ascii_case("application/json") {
        Ok(())
    } else {
        Err(unsupported_media_type(&format!(
            "the body of the request was in an unknown format ({media}) - accepted media types include: application/json"
        )))
    }
}

/// The kind `resource` names, when this server holds it: the other kinds stay empty.
fn writable(server: &ApiServer, resource: &str) -> Result<ObjectKind, ApiError> {
    let Some(kind) = ObjectKind::from_plural(resource) else {
        return Err(ApiError::unknown_resource());
    };
    if kind != server.spec().kind {
        return Err(ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            format!(
                "this server holds {} (the scenario's objects.kind); {} are read-only and empty",
                server.spec().kind.plural(),
                kind.plural()
            ),
        ));
    }
    Ok(kind)
}

/// The request body as JSON of a `kind` in v1 (`apiVersion` and `kind` filled in when
/// missing).
fn decode(kind: ObjectKind, body: &[u8]) -> Result<Value, ApiError> {
    let cannot = |why: String| {
        ApiError::bad_request(format!(
            "{k} in version \"v1\" cannot be handled as a {k}: {why}",
            k = kind.as_str()
        ))
    };
    let mut value: Value = serde_json::from_slice(body).map_err(|e| cannot(e.to_string()))?;
    let Some(map) = value.as_object_mut() else {
        return Err(cannot("the body is not a JSON object".to_owned()));
    };
    for (field, expected) in [("apiVersion", "v1"), ("kind", kind.as_str())] {
        match map.get(field).and_then(Value::as_str) {
            None | Some("") => {
                map.insert(field.to_owned(), json!(expected));
            }
            Some(given) if given != expected => {
                return Err(ApiError::bad_request(format!(
                    "the {field} of the provided object ({given}) does not match this endpoint's ({expected})"
                )));
            }
            Some(_) => {}
        }
    }
    Ok(value)
}

/// `value` through the k8s-openapi type: field types checked, unknown fields dropped, and
/// reported as `validation` says (kube-apiserver's `fieldValidation`).
fn normalize(
    kind: ObjectKind,
    value: Value,
    validation: FieldValidation,
    warnings: &mut Vec<String>,
) -> Result<Value, ApiError> {
    fn through<T: DeserializeOwned + Serialize>(value: &Value) -> serde_json::Result<Value> {
        serde_json::to_value(T::deserialize(value)?)
    }
    let typed = match kind {
        ObjectKind::Pod => through::<Pod>(&value),
        ObjectKind::ConfigMap => through::<ConfigMap>(&value),
        ObjectKind::Secret => through::<Secret>(&value),
    };
    let typed = typed.map_err(|e| {
        ApiError::bad_request(format!(
            "{k} in version \"v1\" cannot be handled as a {k}: {e}",
            k = kind.as_str()
        ))
    })?;
    let mut unknown = Vec::new();
    unknown_fields(&value, &typed, "", &mut unknown);
    let unknown = unknown.into_iter().map(|f| format!("unknown field {f:?}"));
    match validation {
        FieldValidation::Ignore => {}
        FieldValidation::Warn => warnings.extend(unknown),
        FieldValidation::Strict => {
            let unknown: Vec<String> = unknown.collect();
            if !unknown.is_empty() {
                return Err(ApiError::bad_request(format!(
                    "strict decoding error: {}",
                    unknown.join(", ")
                )));
            }
        }
    }
    Ok(typed)
}

/// Paths of the fields `given` has and `kept` (its typed round trip) lost.
fn unknown_fields(given: &Value, kept: &Value, path: &str, out: &mut Vec<String>) {
    match (given, kept) {
        (Value::Object(given), Value::Object(kept)) => {
            for (key, value) in given {
                let field = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match kept.get(key) {
                    Some(k) => unknown_fields(value, k, &field, out),
                    // A null is an absent optional field, not an unknown one.
                    None if value.is_null() => {}
                    None => out.push(field),
                }
            }
        }
        (Value::Array(given), Value::Array(kept)) => {
            for (i, (g, k)) in given.iter().zip(kept).enumerate() {
                unknown_fields(g, k, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// What to do with fields the type does not have (the `fieldValidation` parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FieldValidation {
    /// Drop them silently.
    Ignore,
    /// Drop them and say so in `Warning` headers (kube-apiserver's default).
    Warn,
    /// Refuse the request (400).
    Strict,
}

/// Settles the object's namespace and name against the URL's: fills a missing namespace,
/// refuses a different one, and for a create draws a name from `generateName`.
fn object_key(
    kind: ObjectKind,
    namespace: &str,
    object: &mut Value,
    url_name: Option<&str>,
    server: &ApiServer,
) -> Result<ObjectKey, ApiError> {
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
    Ok(ObjectKey {
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
fn validate(kind: ObjectKind, key: &ObjectKey, object: &Value) -> Result<(), ApiError> {
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

fn is_dns_subdomain(name: &str) -> bool {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    name.len() <= 253
        && name.starts_with(ok)
        && name.ends_with(ok)
        && name.chars().all(|c| ok(c) || c == '-' || c == '.')
}

/// Refuses an update written against another version or another object (HTTP 409).
fn check_preconditions(
    kind: ObjectKind,
    key: &ObjectKey,
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

/// Sets what the server owns: identity and timestamps, generation, a new Pod's status,
/// and the writer's managedFields entry. `current` is the live object for an update;
/// `uid` is the new object's UID for a create.
fn finish(
    kind: ObjectKind,
    mut object: Value,
    current: Option<&Value>,
    uid: &str,
    manager: &str,
) -> Value {
    let now = serde_json::to_value(Time(
        Timestamp::from_second(Timestamp::now().as_second()).expect("now is a valid time"),
    ))
    .expect("a time serializes");
    let owned = generate::owned_fields(&object);
    let meta = object["metadata"]
        .as_object_mut()
        .expect("object_key checked the metadata");
    for server_owned in [
        "resourceVersion",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
    ] {
        meta.remove(server_owned);
    }
    let entry = json!({
        "manager": manager,
        "operation": "Update",
        "apiVersion": "v1",
        "time": now,
        "fieldsType": "FieldsV1",
        "fieldsV1": owned,
    });
    match current {
        None => {
            meta.insert("uid".to_owned(), json!(uid));
            meta.insert("creationTimestamp".to_owned(), now);
            meta.insert("managedFields".to_owned(), json!([entry]));
            if kind == ObjectKind::Pod {
                meta.insert("generation".to_owned(), json!(1));
            }
        }
        Some(current) => {
            let was = &current["metadata"];
            for kept in ["uid", "creationTimestamp"] {
                meta.insert(kept.to_owned(), was[kept].clone());
            }
            // Other managers keep their entries; this one's is replaced.
            let mut managed: Vec<Value> = was["managedFields"]
                .as_array()
                .map(|entries| {
                    entries
                        .iter()
                        .filter(|e| {
                            e["manager"] != manager
                                || e["operation"] != "Update"
                                || e.get("subresource").is_some_and(|s| !s.is_null())
                        })
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            managed.push(entry);
            meta.insert("managedFields".to_owned(), Value::Array(managed));
            if kind == ObjectKind::Pod {
                // The spec changing is what bumps a Pod's generation.
                let generation = was["generation"].as_i64().unwrap_or(1);
                let changed = object["spec"] != current["spec"];
                object["metadata"]["generation"] = json!(generation + i64::from(changed));
            }
        }
    }
    if kind == ObjectKind::Pod {
        // Status belongs to the status subresource: a create starts it as the apiserver
        // does, an update keeps it.
        object["status"] = match current {
            None => json!({"phase": "Pending", "qosClass": qos_class(&object["spec"])}),
            Some(current) => current["status"].clone(),
        };
    }
    object
}

/// The Pod's QoS class, as the apiserver sets it on create: Guaranteed when every
/// container limits CPU and memory with requests equal to limits, BestEffort when none
/// asks for anything, Burstable otherwise.
fn qos_class(spec: &Value) -> &'static str {
    let containers = spec["containers"].as_array().map(Vec::as_slice);
    let containers = containers.unwrap_or_default();
    let resources = |c: &Value, which: &str, r: &str| c["resources"][which][r].clone();
    let none = containers.iter().all(|c| {
        ["requests", "limits"]
            .iter()
            .all(|w| c["resources"][*w].as_object().is_none_or(|m| m.is_empty()))
    });
    if none {
        return "BestEffort";
    }
    let guaranteed = containers.iter().all(|c| {
        ["cpu", "memory"].iter().all(|r| {
            let limit = resources(c, "limits", r);
            let request = resources(c, "requests", r);
            !limit.is_null() && (request.is_null() || request == limit)
        })
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::selector::LabelSelector;
    use crate::scenario::Amount;

    use crate::apiserver::http::request as send;

    const JSON: &str = "application/json";
    const PODS: &str = "/api/v1/namespaces/default/pods";
    /// A patch that adds the label `x=y`, in both merge patch flavours.
    const LABEL_X: &str = r#"{"metadata":{"labels":{"x":"y"}}}"#;

    fn web(extra: Value) -> String {
        let mut pod = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "app:1"}]},
        });
        json_patch::merge(&mut pod, &extra);
        pod.to_string()
    }

    fn server() -> ApiServer {
        ApiServer::new(crate::apiserver::generate::test_spec())
    }

    #[tokio::test]
    async fn create_sets_what_the_server_owns_and_a_second_create_conflicts() {
        let server = server();
        let rv = server.resource_version();
        let (code, pod) = send(&server, "POST", PODS, JSON, &web(json!({}))).await;
        assert_eq!(code, StatusCode::CREATED);
        let meta = &pod["metadata"];
        assert_eq!(meta["namespace"], "default");
        assert_eq!(meta["resourceVersion"], (rv + 1).to_string());
        assert_eq!(meta["generation"], 1);
        assert_eq!(meta["uid"].as_str().unwrap().len(), 36);
        assert_eq!(meta["managedFields"][0]["manager"], "kubectl");
        assert!(meta["managedFields"][0]["fieldsV1"]["f:spec"]["f:containers"].is_object());
        assert_eq!(pod["status"]["phase"], "Pending");
        assert_eq!(pod["status"]["qosClass"], "BestEffort");
        let (code, again) = send(&server, "POST", PODS, JSON, &web(json!({}))).await;
        assert_eq!(
            (code, &again["reason"]),
            (StatusCode::CONFLICT, &json!("AlreadyExists"))
        );
        let (code, got) = send(&server, "GET", &format!("{PODS}/web"), JSON, "").await;
        assert_eq!((code, got), (StatusCode::OK, pod));
    }

    #[tokio::test]
    async fn generate_name_draws_a_suffix() {
        let server = server();
        let body = json!({"metadata": {"generateName": "job-"},
                          "spec": {"containers": [{"name": "c", "image": "i"}]}});
        let (code, pod) = send(&server, "POST", PODS, JSON, &body.to_string()).await;
        assert_eq!(code, StatusCode::CREATED);
        let name = pod["metadata"]["name"].as_str().unwrap();
        assert!(name.starts_with("job-") && name.len() == 9, "{name}");
    }

    #[tokio::test]
    async fn patches_bump_the_generation_only_when_the_spec_changes() {
        let server = server();
        send(&server, "POST", PODS, JSON, &web(json!({}))).await;
        let uri = format!("{PODS}/web?fieldManager=tests");
        let smp = "application/strategic-merge-patch+json";
        let (code, labelled) = send(&server, "PATCH", &uri, smp, LABEL_X).await;
        assert_eq!(code, StatusCode::OK);
        assert_eq!(labelled["metadata"]["generation"], 1);
        assert_eq!(
            labelled["metadata"]["labels"],
            json!({"app": "web", "x": "y"})
        );
        let managers: Vec<&Value> = labelled["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| &e["manager"])
            .collect();
        assert_eq!(managers, [&json!("kubectl"), &json!("tests")]);
        let image = r#"{"spec":{"containers":[{"name":"app","image":"app:2"}]}}"#;
        let (_, updated) = send(&server, "PATCH", &uri, smp, image).await;
        assert_eq!(updated["metadata"]["generation"], 2);
        assert_eq!(updated["metadata"]["uid"], labelled["metadata"]["uid"]);
        assert_eq!(updated["status"], labelled["status"]);
    }

    #[tokio::test]
    async fn patching_a_generated_pod_keeps_its_identity() {
        let server = server();
        let (_, list) = send(&server, "GET", "/api/v1/pods?limit=1", JSON, "").await;
        let pod = &list["items"][0];
        let uri = format!(
            "/api/v1/namespaces/{}/pods/{}",
            pod["metadata"]["namespace"].as_str().unwrap(),
            pod["metadata"]["name"].as_str().unwrap()
        );
        let merge = "application/merge-patch+json";
        let (code, patched) = send(&server, "PATCH", &uri, merge, LABEL_X).await;
        assert_eq!(code, StatusCode::OK);
        assert_eq!(patched["metadata"]["uid"], pod["metadata"]["uid"]);
        assert_eq!(patched["spec"], pod["spec"]);
        let (_, selected) =
            send(&server, "GET", "/api/v1/pods?labelSelector=x%3Dy", JSON, "").await;
        assert_eq!(selected["items"].as_array().unwrap().len(), 1);
    }

    #[tokio::test]
    async fn dry_run_answers_but_stores_nothing() {
        let server = server();
        let rv = server.resource_version();
        let (code, _) = send(
            &server,
            "POST",
            &format!("{PODS}?dryRun=All"),
            JSON,
            &web(json!({})),
        )
        .await;
        assert_eq!(code, StatusCode::CREATED);
        let (code, _) = send(&server, "GET", &format!("{PODS}/web"), JSON, "").await;
        assert_eq!(code, StatusCode::NOT_FOUND);
        send(&server, "POST", PODS, JSON, &web(json!({}))).await;
        let options = r#"{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"]}"#;
        let (code, _) = send(&server, "DELETE", &format!("{PODS}/web"), JSON, options).await;
        assert_eq!(code, StatusCode::OK);
        let (code, _) = send(&server, "GET", &format!("{PODS}/web"), JSON, "").await;
        assert_eq!(code, StatusCode::OK);
        assert_eq!(
            server.resource_version(),
            rv + 1,
            "only the real create took a version"
        );
    }

    #[tokio::test]
    async fn delete_collection_deletes_what_the_selector_selects() {
        let server = server();
        let ns = "/api/v1/namespaces/payments/pods";
        let (_, before) = send(&server, "GET", ns, JSON, "").await;
        let before = before["items"].as_array().unwrap().len();
        let selector = "app%20in%20(api,web)";
        let (_, matching) = send(
            &server,
            "GET",
            &format!("{ns}?labelSelector={selector}"),
            JSON,
            "",
        )
        .await;
        let matching = matching["items"].as_array().unwrap().len();
        assert!(matching > 0 && matching < before);
        let (code, deleted) = send(
            &server,
            "DELETE",
            &format!("{ns}?labelSelector={selector}"),
            JSON,
            "",
        )
        .await;
        assert_eq!(code, StatusCode::OK);
        assert_eq!(deleted["kind"], "PodList");
        assert_eq!(deleted["items"].as_array().unwrap().len(), matching);
        let (_, after) = send(&server, "GET", ns, JSON, "").await;
        assert_eq!(after["items"].as_array().unwrap().len(), before - matching);
    }

    #[tokio::test]
    async fn bad_writes_get_kube_apiserver_status_codes_and_reasons() {
        let server = server();
        send(&server, "POST", PODS, JSON, &web(json!({}))).await;
        let (_, current) = send(&server, "GET", &format!("{PODS}/web"), JSON, "").await;
        let stale = web(json!({"metadata": {"resourceVersion": "1"}}));
        let item = format!("{PODS}/web");
        let smp = "application/strategic-merge-patch+json";
        let table: &[(&str, &str, &str, String, u16, &str)] = &[
            (
                "POST",
                PODS,
                JSON,
                "{not json".to_owned(),
                400,
                "BadRequest",
            ),
            (
                "POST",
                PODS,
                JSON,
                web(json!({"kind": "Secret"})),
                400,
                "BadRequest",
            ),
            (
                "POST",
                PODS,
                JSON,
                web(json!({"spec": {"containers": 3}})),
                400,
                "BadRequest",
            ),
            (
                "POST",
                PODS,
                JSON,
                web(json!({"metadata": {"name": null}})),
                422,
                "Invalid",
            ),
            (
                "POST",
                PODS,
                JSON,
                web(json!({"metadata": {"name": "Web_1"}})),
                422,
                "Invalid",
            ),
            (
                "POST",
                PODS,
                JSON,
                web(json!({"spec": {"containers": []}})),
                422,
                "Invalid",
            ),
            (
                "POST",
                PODS,
                JSON,
                web(json!({"metadata": {"namespace": "payments"}})),
                400,
                "BadRequest",
            ),
            (
                "POST",
                &format!("{PODS}?fieldValidation=Strict"),
                JSON,
                web(json!({"spec": {"nope": 1}})),
                400,
                "BadRequest",
            ),
            (
                "POST",
                &format!("{PODS}?dryRun=Some"),
                JSON,
                web(json!({})),
                422,
                "Invalid",
            ),
            (
                "POST",
                "/api/v1/namespaces/nowhere/pods",
                JSON,
                web(json!({})),
                404,
                "NotFound",
            ),
            (
                "POST",
                "/api/v1/namespaces/default/configmaps",
                JSON,
                "{}".to_owned(),
                405,
                "MethodNotAllowed",
            ),
            (
                "POST",
                "/api/v1/namespaces/default/widgets",
                JSON,
                "{}".to_owned(),
                404,
                "NotFound",
            ),
            ("PUT", &item, JSON, stale, 409, "Conflict"),
            (
                "PUT",
                &format!("{PODS}/other"),
                JSON,
                web(json!({})),
                400,
                "BadRequest",
            ),
            (
                "PUT",
                &format!("{PODS}/gone"),
                JSON,
                web(json!({"metadata": {"name": "gone"}})),
                404,
                "NotFound",
            ),
            (
                "PATCH",
                &item,
                JSON,
                "{}".to_owned(),
                415,
                "UnsupportedMediaType",
            ),
            (
                "PATCH",
                &item,
                "application/apply-patch+yaml",
                "{}".to_owned(),
                415,
                "UnsupportedMediaType",
            ),
            ("PATCH", &item, smp, "[1]".to_owned(), 400, "BadRequest"),
            (
                "PATCH",
                &item,
                "application/json-patch+json",
                r#"[{"op":"remove","path":"/x"}]"#.to_owned(),
                422,
                "Invalid",
            ),
            (
                "PATCH",
                &item,
                smp,
                r#"{"metadata":{"name":"renamed"}}"#.to_owned(),
                400,
                "BadRequest",
            ),
            (
                "PATCH",
                &item,
                smp,
                r#"{"metadata":{"uid":"other"}}"#.to_owned(),
                409,
                "Conflict",
            ),
            (
                "DELETE",
                &item,
                JSON,
                r#"{"preconditions":{"uid":"other"}}"#.to_owned(),
                409,
                "Conflict",
            ),
            ("DELETE", &item, JSON, "[]".to_owned(), 400, "BadRequest"),
            // NegotiateInputSerializer: a media type with no decoder.
            (
                "POST",
                PODS,
                "text/plain",
                web(json!({"metadata": {"name": "plain"}})),
                415,
                "UnsupportedMediaType",
            ),
            ("PUT", &item, "text/plain", web(json!({})), 415, "UnsupportedMediaType"),
            // ValidateAnnotationsSize: 256 KiB of keys and values in all.
            (
                "POST",
                PODS,
                JSON,
                web(json!({"metadata": {"name": "big", "annotations": {"a": "x".repeat(256 * 1024)}}})),
                422,
                "Invalid",
            ),
            (
                "PATCH",
                &item,
                smp,
                json!({"metadata": {"annotations": {"a": "x".repeat(150_000), "b": "y".repeat(150_000)}}}).to_string(),
                422,
                "Invalid",
            ),
            // strategicpatch's directive errors.
            (
                "PATCH",
                &item,
                smp,
                r#"{"metadata":{"labels":{"$patch":"explode"}}}"#.to_owned(),
                400,
                "BadRequest",
            ),
            (
                "PATCH",
                &item,
                smp,
                r#"{"spec":{"$retainKeys":5,"containers":[]}}"#.to_owned(),
                400,
                "BadRequest",
            ),
            (
                "PATCH",
                &item,
                smp,
                r#"{"spec":{"$retainKeys":["containers"],"restartPolicy":"Never"}}"#.to_owned(),
                422,
                "Invalid",
            ),
            (
                "PATCH",
                &item,
                smp,
                r#"{"spec":{"containers":[{"image":"nameless:1"}]}}"#.to_owned(),
                400,
                "BadRequest",
            ),
            (
                "PATCH",
                &item,
                smp,
                r#"{"spec":{"containers":[{"name":"web","$patch":"merge"}]}}"#.to_owned(),
                400,
                "BadRequest",
            ),
            (
                "PATCH",
                &item,
                smp,
                r#"{"spec":{"$setElementOrder/containers":{"name":"web"}}}"#.to_owned(),
                400,
                "BadRequest",
            ),
            (
                "PATCH",
                &item,
                smp,
                r#"{"metadata":{"$deleteFromPrimitiveList/finalizers":"a"}}"#.to_owned(),
                400,
                "BadRequest",
            ),
        ];
        for (method, uri, content_type, body, code, reason) in table {
            let (got, status) = send(&server, method, uri, content_type, body).await;
            assert_eq!(
                (got.as_u16(), status["reason"].as_str().unwrap_or_default()),
                (*code, *reason),
                "{method} {uri} {body}: {status}"
            );
        }
        let (_, after) = send(&server, "GET", &item, JSON, "").await;
        assert_eq!(after, current, "no refused write changed the object");
    }

    #[tokio::test]
    async fn phases_can_pick_a_label_selected_set() {
        let server = server();
        let selector = LabelSelector::parse("app=web").unwrap();
        let (_, web) = send(
            &server,
            "GET",
            "/api/v1/pods?labelSelector=app%3Dweb",
            JSON,
            "",
        )
        .await;
        let web = web["items"].as_array().unwrap().len() as u64;
        assert_eq!(server.delete(Amount::Fraction(1.0), &selector, 1), web);
        let (_, left) = send(
            &server,
            "GET",
            "/api/v1/pods?labelSelector=app%3Dweb",
            JSON,
            "",
        )
        .await;
        assert_eq!(left["items"].as_array().unwrap().len(), 0);
        assert_eq!(server.alive(), 1000 - web);
    }

    #[test]
    fn qos_follows_requests_and_limits() {
        let spec = |resources: Value| json!({"containers": [{"resources": resources}]});
        assert_eq!(qos_class(&spec(json!({}))), "BestEffort");
        assert_eq!(
            qos_class(&spec(json!({"limits": {"cpu": "1", "memory": "1Gi"}}))),
            "Guaranteed"
        );
        assert_eq!(
            qos_class(&spec(json!({"requests": {"cpu": "1"}}))),
            "Burstable"
        );
    }

    #[test]
    fn names_must_be_dns_subdomains() {
        assert!(is_dns_subdomain("web-1.a"));
        assert!(!is_dns_subdomain("Web"));
        assert!(!is_dns_subdomain("-web"));
        assert!(!is_dns_subdomain(""));
    }

    /// Random JSON built from the words patches use, directives included.
    fn patch_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let words = proptest::sample::select(vec![
            "metadata",
            "labels",
            "annotations",
            "name",
            "namespace",
            "uid",
            "resourceVersion",
            "finalizers",
            "spec",
            "containers",
            "image",
            "ports",
            "containerPort",
            "status",
            "$patch",
            "$retainKeys",
            "$setElementOrder/containers",
            "$deleteFromPrimitiveList/finalizers",
            "replace",
            "delete",
            "app",
            "x",
        ]);
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i32>().prop_map(Value::from),
            words.clone().prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map(words.clone(), inner, 0..4).prop_map(|m| {
                    Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                }),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Whatever the patch, the server answers with a status it means: never a panic,
        /// never a 500; and a refused patch changes nothing.
        #[test]
        fn random_patches_never_panic(
            patch in patch_value(),
            content_type in proptest::sample::select(vec![
                "application/strategic-merge-patch+json",
                "application/merge-patch+json",
                "application/json-patch+json",
            ]),
        ) {
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let (code, before, after) = runtime.block_on(async {
                let server = server();
                send(&server, "POST", PODS, JSON, &web(json!({"metadata": {"finalizers": ["a"]}}))).await;
                let item = format!("{PODS}/web");
                let (_, before) = send(&server, "GET", &item, JSON, "").await;
                let (code, _) = send(&server, "PATCH", &item, content_type, &patch.to_string()).await;
                let (_, after) = send(&server, "GET", &item, JSON, "").await;
                (code, before, after)
            });
            proptest::prop_assert!(code != StatusCode::INTERNAL_SERVER_ERROR);
            if !code.is_success() {
                proptest::prop_assert_eq!(before, after);
            }
        }
    }
}
