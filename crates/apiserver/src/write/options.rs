//! A write's query parameters: `dryRun`, `fieldManager`, `fieldValidation`, an apply's
//! `force`, and a delete's options, checked as kube-apiserver checks them.

use axum::http::{HeaderMap, StatusCode, header};
use serde_json::Value;

use super::body::FieldValidation;
use crate::generate::Generator;
use crate::status::ApiError;
use crate::version::Version;
use scenario::ObjectKind;

/// Longest `fieldManager` kube-apiserver accepts.
const MAX_FIELD_MANAGER: usize = 128;

/// Query parameters of a write.
#[derive(Debug)]
pub(crate) struct WriteOptions {
    /// `dryRun=All`: check and answer, but store nothing.
    pub(crate) dry_run: bool,
    /// Who writes, for managedFields.
    pub(crate) field_manager: String,
    /// Whether `fieldManager` was given (an apply must name its manager).
    pub(super) field_manager_given: bool,
    /// `force`: an apply takes the fields it conflicts on (only an apply may say it).
    pub(crate) force: Option<bool>,
    /// What to do with unknown fields.
    pub(crate) field_validation: FieldValidation,
}

impl WriteOptions {
    /// Who writes, for an update's or an apply's managedFields: the request's field
    /// manager, through the object's own path.
    pub(crate) fn writer(&self) -> crate::apply::Writer<'_> {
        self.writer_through(super::Endpoint::Object)
    }

    /// Who writes, through `endpoint`: its entries name the status subresource when it
    /// is the status's.
    pub(crate) fn writer_through(&self, endpoint: super::Endpoint) -> crate::apply::Writer<'_> {
        crate::apply::Writer {
            manager: &self.field_manager,
            subresource: endpoint.subresource(),
        }
    }

    pub(crate) fn parse(
        query: Option<&str>,
        headers: &HeaderMap,
    ) -> Result<WriteOptions, ApiError> {
        let dry_run = dry_run(query)?;
        let mut field_manager = None;
        let mut field_validation = FieldValidation::Warn;
        let mut force = None;
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
            } else if key == "force" {
                force = Some(parse_bool(&value)?);
            }
        }
        let field_manager_given = field_manager.as_ref().is_some_and(|m| !m.is_empty());
        // kube-apiserver's default: the User-Agent up to its first '/' ("kubectl"), and
        // "unknown" for a request without one.
        let field_manager = field_manager.unwrap_or_else(|| {
            let agent = headers
                .get(header::USER_AGENT)
                .and_then(|v| v.to_str().ok())
                .filter(|agent| !agent.is_empty())
                .unwrap_or("unknown");
            let product = agent.split('/').next().unwrap_or_default();
            product.chars().take(MAX_FIELD_MANAGER).collect()
        });
        Ok(WriteOptions {
            dry_run,
            field_manager,
            field_manager_given,
            force,
            field_validation,
        })
    }
}

/// DeleteOptions, from the body or, when there is none, the query (kube-apiserver reads
/// one or the other, never both).
#[derive(Debug, Default)]
pub(crate) struct DeleteOptions {
    pub(crate) dry_run: bool,
    /// `preconditions.uid`: delete only this incarnation.
    pub(super) uid: Option<String>,
    /// `preconditions.resourceVersion`: delete only this version.
    pub(super) resource_version: Option<String>,
    /// `gracePeriodSeconds`: how long a Pod has to end (`None`: its spec's).
    pub(super) grace_period: Option<i64>,
    /// `propagationPolicy`: `Orphan`, `Background` or `Foreground`.
    pub(super) propagation: Option<String>,
    /// `orphanDependents` (deprecated for `propagationPolicy`).
    pub(super) orphan_dependents: Option<bool>,
}

impl DeleteOptions {
    /// The code of the answer to a DELETE that leaves the object in place: 202 when
    /// `orphanDependents=false` asked for a cascade, else 200 (kube-apiserver answers
    /// 202 for no other pending deletion, not to break clients).
    pub(crate) fn pending_code(&self) -> StatusCode {
        match self.orphan_dependents {
            Some(false) => StatusCode::ACCEPTED,
            _ => StatusCode::OK,
        }
    }

    /// What the namespace controller deletes a namespace's content with: background
    /// propagation, nothing else.
    pub(crate) fn background() -> DeleteOptions {
        DeleteOptions {
            propagation: Some("Background".to_owned()),
            ..DeleteOptions::default()
        }
    }

    pub(crate) fn parse(query: Option<&str>, body: &[u8]) -> Result<DeleteOptions, ApiError> {
        let options = if body.iter().all(u8::is_ascii_whitespace) {
            DeleteOptions::from_query(query)?
        } else {
            DeleteOptions::from_body(body)?
        };
        if let Some(policy) = &options.propagation {
            check_propagation_policy(policy)?;
            if options.orphan_dependents.is_some() {
                return Err(invalid_options(
                    "propagationPolicy",
                    format!(
                        "Invalid value: {policy:?}: orphanDependents and deletionPropagation cannot be both set"
                    ),
                ));
            }
        }
        Ok(options)
    }

    fn from_query(query: Option<&str>) -> Result<DeleteOptions, ApiError> {
        let mut options = DeleteOptions {
            dry_run: dry_run(query)?,
            ..DeleteOptions::default()
        };
        for (key, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
            // Typed parameters of the wrong type: 400 before anything is deleted, in Go's
            // words, as kube-apiserver's query decoding answers.
            match &*key {
                "propagationPolicy" => options.propagation = Some(value.into_owned()),
                "gracePeriodSeconds" => {
                    options.grace_period = Some(value.parse::<i64>().map_err(|_| {
                        ApiError::bad_request(format!(
                            "strconv.ParseInt: parsing {value:?}: invalid syntax"
                        ))
                    })?);
                }
                "orphanDependents" => options.orphan_dependents = Some(parse_bool(&value)?),
                _ => {}
            }
        }
        Ok(options)
    }

    fn from_body(body: &[u8]) -> Result<DeleteOptions, ApiError> {
        let given: k8s_openapi::apimachinery::pkg::apis::meta::v1::DeleteOptions =
            serde_json::from_slice(body).map_err(|e| {
                ApiError::bad_request(format!(
                    "DeleteOptions in version \"v1\" cannot be handled as a DeleteOptions: {e}"
                ))
            })?;
        let mut options = DeleteOptions {
            grace_period: given.grace_period_seconds,
            propagation: given.propagation_policy,
            orphan_dependents: given.orphan_dependents,
            ..DeleteOptions::default()
        };
        for value in given.dry_run.iter().flatten() {
            check_dry_run(value)?;
            options.dry_run = true;
        }
        if let Some(p) = given.preconditions {
            options.uid = p.uid;
            options.resource_version = p.resource_version;
        }
        Ok(options)
    }

    /// Refuses the deletion when a precondition does not hold (HTTP 409).
    pub(super) fn check(
        &self,
        kind: ObjectKind,
        generator: &Generator,
        current: &Version,
    ) -> Result<(), ApiError> {
        self.check_object(kind.plural(), &current.to_value(generator))
    }

    /// [`DeleteOptions::check`] of the object `value`, of the resource named `resource` in
    /// messages.
    pub(crate) fn check_object(&self, resource: &str, value: &Value) -> Result<(), ApiError> {
        let field = |f: &str| value["metadata"][f].as_str().unwrap_or_default().to_owned();
        let name = field("name");
        let conflict = |what: &str, wanted: &str, actual: String| {
            ApiError::new(
                StatusCode::CONFLICT,
                "Conflict",
                format!(
                    "Operation cannot be fulfilled on {resource} {name:?}: Precondition failed: {what} in precondition: {wanted}, {what} in object meta: {actual}"
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

/// A boolean query parameter, as Go's `strconv.ParseBool` reads it.
fn parse_bool(value: &str) -> Result<bool, ApiError> {
    match value {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(false),
        _ => Err(ApiError::bad_request(format!(
            "strconv.ParseBool: parsing {value:?}: invalid syntax"
        ))),
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

/// kube-apiserver's `ValidateDeleteOptions`: a propagation policy is one of three.
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

/// kube-apiserver's `ValidatePatchOptions`: an apply names its manager; only an apply
/// may force.
pub(crate) fn check_patch_options(options: &WriteOptions, apply: bool) -> Result<(), ApiError> {
    let (field, reason, why) = match (apply, options.field_manager_given, options.force) {
        (true, false, _) => (
            "fieldManager",
            "FieldValueRequired",
            "Required value: is required for apply patch",
        ),
        (false, _, Some(_)) => (
            "force",
            "FieldValueForbidden",
            "Forbidden: may not be specified for non-apply patch",
        ),
        _ => return Ok(()),
    };
    let message = format!("PatchOptions.meta.k8s.io \"\" is invalid: {field}: {why}");
    Err(
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "Invalid", message)
            .about("", "PatchOptions.meta.k8s.io")
            .with_causes(vec![(reason, why.to_owned(), field.to_owned())]),
    )
}

fn invalid_options(field: &str, why: String) -> ApiError {
    ApiError::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        "Invalid",
        format!("options are invalid: {field}: {why}"),
    )
}
