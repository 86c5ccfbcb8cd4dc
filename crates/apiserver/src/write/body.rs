//! A write's body: its media type, and the JSON decoded into the kind's type, with the
//! fields the type does not have dropped, reported or refused (`fieldValidation`).

use axum::http::{HeaderMap, StatusCode, header};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Node, Pod, Secret};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::protobuf;
use crate::status::ApiError;
use scenario::ObjectKind;

pub(crate) fn unsupported_media_type(message: &str) -> ApiError {
    ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "UnsupportedMediaType",
        message.to_owned(),
    )
}

/// The media type of a create's or replace's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyWire {
    /// `application/json`, or no Content-Type (the first type kube-apiserver serves).
    Json,
    /// `application/yaml`: kube-apiserver's YAML serializer turns it into JSON first
    /// (`sigs.k8s.io/yaml`), and so does this server.
    Yaml,
    /// Kubernetes' protobuf (kubectl's `create configmap`, `create secret`, `create
    /// deployment`, and client-go programs set to protobuf).
    Protobuf,
}

/// The wire of a create's or replace's body. Any other media type is refused as
/// kube-apiserver's `NegotiateInputSerializer` refuses one it has no decoder for (415).
/// kube-apiserver also reads CBOR; this server says it reads JSON, YAML and protobuf.
pub(crate) fn body_wire(headers: &HeaderMap) -> Result<BodyWire, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap_or("(not text)"))
        .unwrap_or_default();
    let media = content_type.split(';').next().unwrap_or_default().trim();
    if media.is_empty() || media.eq_ignore_ascii_case("application/json") {
        Ok(BodyWire::Json)
    } else if media.eq_ignore_ascii_case(YAML) {
        Ok(BodyWire::Yaml)
    } else if media.eq_ignore_ascii_case(protobuf::MEDIA_TYPE) {
        Ok(BodyWire::Protobuf)
    } else {
        Err(unsupported_media_type(&format!(
            "the body of the request was in an unknown format ({media}) - accepted media types include: application/json, {YAML}, {}",
            protobuf::MEDIA_TYPE
        )))
    }
}

const YAML: &str = "application/yaml";

/// The request body as JSON of `kind` in `api_version` (`coordination.k8s.io/v1`,
/// `Lease`; `apiVersion` and `kind` filled in when missing): any type this server reads.
/// A YAML body is read as the JSON it stands for; a key given twice in one mapping keeps
/// its last value, as kube-apiserver keeps it but under `Strict` ([`duplicate_fields`]
/// finds them).
pub(crate) fn decode_as(
    api_version: &str,
    kind: &str,
    body: &[u8],
    wire: BodyWire,
) -> Result<Value, ApiError> {
    let version = api_version.rsplit('/').next().unwrap_or(api_version);
    let cannot = |why: String| {
        ApiError::bad_request(format!(
            "{kind} in version {version:?} cannot be handled as a {kind}: {why}"
        ))
    };
    let mut value: Value = match wire {
        BodyWire::Json => serde_json::from_slice(body).map_err(|e| cannot(e.to_string()))?,
        BodyWire::Yaml => {
            serde_yaml_ng::from_slice(body).map_err(|e| cannot(format!("yaml: {e}")))?
        }
        BodyWire::Protobuf => protobuf::decode_document(body).map_err(|e| cannot(e.to_string()))?,
    };
    let Some(map) = value.as_object_mut() else {
        return Err(cannot("the body is not a JSON object".to_owned()));
    };
    for (field, expected) in [("apiVersion", api_version), ("kind", kind)] {
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

/// `value`, a `kind` in `v1`, through k8s-openapi's type `T`, as kube-apiserver decodes
/// a record's or a namespace's body into its Go type: field types checked, the fields `T`
/// does not have dropped, the fields Go writes at their zero filled in. A value that does
/// not fit is kube-apiserver's 400.
pub(crate) fn through<T: DeserializeOwned + Serialize>(
    kind: &str,
    value: &Value,
) -> Result<Value, ApiError> {
    let refused = |e: &dyn std::fmt::Display| {
        ApiError::bad_request(format!(
            "{kind} in version \"v1\" cannot be handled as a {kind}: {e}"
        ))
    };
    let bytes = super::data::bytes_as_go(kind, value).map_err(|e| refused(&e))?;
    let value = bytes.as_ref().unwrap_or(value);
    let typed = (T::deserialize(value).and_then(serde_json::to_value)).map_err(|e| refused(&e))?;
    protobuf::with_go_zeros(typed).map_err(|e| ApiError::internal(e.to_string()))
}

/// `value` through the k8s-openapi type: field types checked, unknown fields dropped, and
/// reported as `validation` says (kube-apiserver's `fieldValidation`); then defaulted as
/// kube-apiserver defaults it, and the fields Go writes at their zero filled in, as Go's
/// JSON of the same object has them.
pub(super) fn normalize(
    kind: ObjectKind,
    value: Value,
    validation: FieldValidation,
    warnings: &mut Vec<String>,
) -> Result<Value, ApiError> {
    fn through<T: DeserializeOwned + Serialize>(value: &Value) -> serde_json::Result<Value> {
        serde_json::to_value(T::deserialize(value)?)
    }
    let refused = |e: &dyn std::fmt::Display| {
        ApiError::bad_request(format!(
            "{k} in version {v:?} cannot be handled as a {k}: {e}",
            k = kind.as_str(),
            v = kind.version(),
        ))
    };
    let bytes = match kind {
        ObjectKind::Secret | ObjectKind::ConfigMap => {
            super::data::bytes_as_go(kind.as_str(), &value)
        }
        _ => Ok(None),
    };
    let value = bytes.map_err(|e| refused(&e))?.unwrap_or(value);
    let typed = match kind {
        ObjectKind::Pod => through::<Pod>(&value),
        ObjectKind::ConfigMap => through::<ConfigMap>(&value),
        ObjectKind::Secret => through::<Secret>(&value),
        ObjectKind::Node => through::<Node>(&value),
        ObjectKind::Deployment => through::<Deployment>(&value),
        // No schema: every field is kept, as a custom resource that preserves unknown
        // fields keeps them.
        ObjectKind::Sampled(_) => Ok(value.clone()),
    };
    let mut typed = typed.map_err(|e| refused(&e))?;
    unknown_fields(&value, &typed, validation, warnings)?;
    if kind == ObjectKind::Deployment {
        typed = without_unset_selector(&value, typed);
    }
    // kube-apiserver's defaults, then what Go's JSON writes at its zero and the client
    // left out, as kube-apiserver answers with them (for every kind with a Go type: the
    // generated kinds, a sample of one of Kubernetes' own; a custom resource's object is
    // kept as it was sent).
    super::defaults::apply(kind, &mut typed);
    if !protobuf::serves(kind) {
        return Ok(typed);
    }
    protobuf::with_go_zeros(typed).map_err(|e| ApiError::internal(e.to_string()))
}

/// `typed`, a workload through its k8s-openapi type, without the selector the type gave
/// it where `written` had none: Go's is a pointer, nil until a client sets it, so a
/// missing one is "Required", not an empty selector.
pub(crate) fn without_unset_selector(written: &Value, mut typed: Value) -> Value {
    if written["spec"]["selector"].is_null()
        && let Some(spec) = typed["spec"].as_object_mut()
    {
        spec.remove("selector");
    }
    typed
}

/// The fields `given` has and `typed` (its typed round trip) lost, reported as
/// `validation` says: dropped, warned of in `warnings`, or refused (400).
pub(crate) fn unknown_fields(
    given: &Value,
    typed: &Value,
    validation: FieldValidation,
    warnings: &mut Vec<String>,
) -> Result<(), ApiError> {
    let mut unknown = Vec::new();
    lost_fields(given, typed, "", &mut unknown);
    let unknown = unknown.into_iter().map(|f| format!("unknown field {f:?}"));
    reported(unknown.collect(), validation, warnings)
}

/// Keys a JSON or YAML `body` sets twice in one object, reported as `validation` says
/// (kube-apiserver's strict decoding refuses them, its default warns; a protobuf body
/// has none).
pub(crate) fn duplicated_fields(
    body: &[u8],
    wire: BodyWire,
    validation: FieldValidation,
    warnings: &mut Vec<String>,
) -> Result<(), ApiError> {
    if wire == BodyWire::Protobuf {
        return Ok(());
    }
    let duplicates = duplicate_fields(body, wire)
        .into_iter()
        .map(|path| format!("duplicate field {:?}", path.trim_start_matches('.')));
    reported(duplicates.collect(), validation, warnings)
}

/// What a body has that the type does not take, dealt with as `validation` says:
/// nothing, a warning each, or a 400 naming them all.
fn reported(
    found: Vec<String>,
    validation: FieldValidation,
    warnings: &mut Vec<String>,
) -> Result<(), ApiError> {
    match validation {
        FieldValidation::Ignore => Ok(()),
        FieldValidation::Warn => {
            warnings.extend(found);
            Ok(())
        }
        FieldValidation::Strict if found.is_empty() => Ok(()),
        FieldValidation::Strict => Err(ApiError::bad_request(format!(
            "strict decoding error: {}",
            found.join(", ")
        ))),
    }
}

/// Paths of the fields `given` has and `kept` (its typed round trip) lost.
fn lost_fields(given: &Value, kept: &Value, path: &str, out: &mut Vec<String>) {
    match (given, kept) {
        (Value::Object(given), Value::Object(kept)) => {
            for (key, value) in given {
                let field = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match kept.get(key) {
                    Some(k) => lost_fields(value, k, &field, out),
                    // A null is an absent optional field, not an unknown one.
                    None if value.is_null() => {}
                    None => out.push(field),
                }
            }
        }
        (Value::Array(given), Value::Array(kept)) => {
            for (i, (g, k)) in given.iter().zip(kept).enumerate() {
                lost_fields(g, k, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// What to do with fields the type does not have (the `fieldValidation` parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FieldValidation {
    /// Drop them silently.
    Ignore,
    /// Drop them and say so in `Warning` headers (kube-apiserver's default).
    Warn,
    /// Refuse the request (400).
    Strict,
}

/// The paths of keys a JSON or YAML body sets twice in one object (`.metadata.name`),
/// first occurrence order. serde_json and serde_yaml_ng keep the last silently;
/// kube-apiserver's strict decoding refuses them and its default warns.
pub(super) fn duplicate_fields(body: &[u8], wire: BodyWire) -> Vec<String> {
    let mut found = Vec::new();
    let seed = Duplicates {
        path: String::new(),
        found: &mut found,
    };
    // A body that does not parse is refused by `decode`, with kube-apiserver's words.
    let _ = match wire {
        BodyWire::Yaml => serde::de::DeserializeSeed::deserialize(
            seed,
            serde_yaml_ng::Deserializer::from_slice(body),
        )
        .map_err(drop),
        BodyWire::Json | BodyWire::Protobuf => {
            let mut json = serde_json::Deserializer::from_slice(body);
            serde::de::DeserializeSeed::deserialize(seed, &mut json).map_err(drop)
        }
    };
    found
}

/// Walks a JSON value, noting every key set twice in one object.
struct Duplicates<'a> {
    path: String,
    found: &'a mut Vec<String>,
}

impl<'de> serde::de::DeserializeSeed<'de> for Duplicates<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Duplicates<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JSON or YAML")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = format!("{}.{key}", self.path);
            if !seen.insert(key) {
                self.found.push(path.clone());
            }
            map.next_value_seed(Duplicates {
                path,
                found: self.found,
            })?;
        }
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        while seq
            .next_element_seed(Duplicates {
                path: format!("{}[{i}]", self.path),
                found: self.found,
            })?
            .is_some()
        {
            i += 1;
        }
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}
