//! What kube-apiserver does of a write of a ConfigMap or a Secret beside what every
//! object gets: a Secret's `stringData` merged into its `data` and its type defaulted
//! (`Convert_v1_Secret_To_core_Secret`, `SetDefaults_Secret`), and both kinds validated
//! as `ValidateConfigMap`, `ValidateSecret` and their updates validate them. The same
//! for a scenario of them ([`super::defaults`], [`super::validate`]) and for those a
//! program writes beside a scenario of another kind (the records': a Python operator's
//! `ConfigMapLock`, `kubectl create secret`, a controller's rendered configuration).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

use crate::version::NamespacedName;
use crate::write::{self, Causes};
use k8s::bytes::{self, CorruptInput};
use k8s::names::{MAX_DATA_BYTES, config_key_errors};

/// Why a field may not change once an object is immutable.
const IMMUTABLE: &str = "Forbidden: field is immutable when `immutable` is set";

/// `value`, a `kind`, with the base64 of its bytes fields (a Secret's `data`, a
/// ConfigMap's `binaryData`) as kube-apiserver reads it and writes it back
/// ([`k8s::bytes`]): `None` where that changes nothing (no allocation); `Err`
/// Go's words for the first value that is not base64.
pub(crate) fn bytes_as_go(kind: &str, value: &Value) -> Result<Option<Value>, CorruptInput> {
    let field = match kind {
        "Secret" => "data",
        "ConfigMap" => "binaryData",
        _ => return Ok(None),
    };
    let mut rewritten: Option<Value> = None;
    for (key, text) in entries(&value[field]) {
        let Some(text) = text.as_str() else { continue };
        if let Some(canonical) = bytes::canonical(text)? {
            let object = rewritten.get_or_insert_with(|| value.clone());
            object[field][key] = json!(canonical);
        }
    }
    Ok(rewritten)
}

/// A Secret as kube-apiserver keeps what was written: each `stringData` entry in `data`
/// (base64, as `data` is in JSON), over an entry of the same key, and no `stringData`;
/// no type is `Opaque`.
pub(crate) fn secret_written(mut secret: Value) -> Value {
    let Some(fields) = secret.as_object_mut() else {
        return secret;
    };
    if let Some(Value::Object(strings)) = fields.remove("stringData")
        && !strings.is_empty()
    {
        let data = fields
            .entry("data")
            .or_insert_with(|| Value::Object(Map::new()));
        if !data.is_object() {
            *data = Value::Object(Map::new());
        }
        let data = data.as_object_mut().expect("data was made an object");
        for (key, value) in strings {
            let text = value.as_str().unwrap_or_default();
            data.insert(key, json!(STANDARD.encode(text)));
        }
    }
    if fields
        .get("type")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        fields.insert("type".to_owned(), json!("Opaque"));
    }
    secret
}

/// `ValidateConfigMap` of `object`, the record `key`, and with `current`
/// `ValidateConfigMapUpdate`'s immutability first.
pub(crate) fn config_map(
    key: &NamespacedName,
    object: &Value,
    current: Option<&Value>,
    causes: &mut Causes,
) {
    if let Some(current) = current {
        immutable(object, current, &["data", "binaryData"], causes);
    }
    write::metadata(key, &object["metadata"], causes);
    let binary = object["binaryData"].as_object();
    let mut size = 0;
    for (key, value) in entries(&object["data"]) {
        keys("data", key, causes);
        if binary.is_some_and(|binary| binary.contains_key(key)) {
            let field = format!("data[{key}]");
            causes.invalid(
                &field,
                &json!(key),
                "duplicate of key present in binaryData",
            );
        }
        size += value.as_str().map_or(0, str::len);
    }
    for (key, value) in entries(&object["binaryData"]) {
        keys("binaryData", key, causes);
        size += decoded_len(value);
    }
    if size > MAX_DATA_BYTES {
        // The whole object is at fault: kube-apiserver's path `""` prints as `[]`.
        causes.push("FieldValueTooLong", "[]", too_long());
    }
}

/// `ValidateSecret` of `object` (as [`secret_written`] keeps it), the record `key`, and
/// with `current` `ValidateSecretUpdate`'s first: its type and, once immutable, its data
/// fixed.
pub(crate) fn secret(
    key: &NamespacedName,
    object: &Value,
    current: Option<&Value>,
    causes: &mut Causes,
) {
    if let Some(current) = current
        && object["type"] != current["type"]
    {
        causes.invalid("type", &object["type"], "field is immutable");
    }
    if let Some(current) = current {
        immutable(object, current, &["data"], causes);
    }
    write::metadata(key, &object["metadata"], causes);
    let data = &object["data"];
    let mut size = 0;
    for (key, value) in entries(data) {
        keys("data", key, causes);
        size += decoded_len(value);
    }
    if size > MAX_DATA_BYTES {
        causes.push("FieldValueTooLong", "data", too_long());
    }
    typed_secret(object, causes);
}

/// What a Secret's type requires of it (`ValidateSecret`'s switch on the type).
fn typed_secret(object: &Value, causes: &mut Causes) {
    let data = &object["data"];
    let has = |key: &str| data.get(key).is_some();
    let required = |causes: &mut Causes, key: &str| causes.required(&format!("data[{key}]"));
    match object["type"].as_str().unwrap_or_default() {
        "kubernetes.io/service-account-token" => {
            let annotation = "kubernetes.io/service-account.name";
            let named = &object["metadata"]["annotations"][annotation];
            if named.as_str().is_none_or(str::is_empty) {
                causes.required(&format!("metadata.annotations[{annotation}]"));
            }
        }
        kind @ ("kubernetes.io/dockercfg" | "kubernetes.io/dockerconfigjson") => {
            let key = match kind {
                "kubernetes.io/dockercfg" => ".dockercfg",
                _ => ".dockerconfigjson",
            };
            if !has(key) {
                return required(causes, key);
            }
            if let Some(why) = not_a_json_object(&decoded(&data[key])) {
                let redacted = json!("<secret contents redacted>");
                causes.invalid(&format!("data[{key}]"), &redacted, &why);
            }
        }
        "kubernetes.io/basic-auth" if !has("username") && !has("password") => {
            required(causes, "username");
            required(causes, "password");
        }
        "kubernetes.io/ssh-auth" if decoded(&data["ssh-privatekey"]).is_empty() => {
            required(causes, "ssh-privatekey");
        }
        "kubernetes.io/tls" => {
            for key in ["tls.crt", "tls.key"].into_iter().filter(|key| !has(key)) {
                required(causes, key);
            }
        }
        _ => {}
    }
}

/// Once `current` is immutable: `immutable` may not be unset, nor any of `fields` change.
fn immutable(object: &Value, current: &Value, fields: &[&str], causes: &mut Causes) {
    if current["immutable"] != json!(true) {
        return;
    }
    if object["immutable"] != json!(true) {
        causes.push("FieldValueForbidden", "immutable", IMMUTABLE.to_owned());
    }
    for field in fields
        .iter()
        .filter(|field| object[**field] != current[**field])
    {
        causes.push("FieldValueForbidden", field, IMMUTABLE.to_owned());
    }
}

/// The entries of a map field (none when it is unset).
fn entries(map: &Value) -> impl Iterator<Item = (&String, &Value)> {
    map.as_object().into_iter().flatten()
}

/// Each reason `key` of `field` is not a data key.
fn keys(field: &str, key: &str, causes: &mut Causes) {
    for why in config_key_errors(key) {
        causes.invalid(&format!("{field}[{key}]"), &json!(key), why);
    }
}

fn too_long() -> String {
    format!("Too long: may not be more than {MAX_DATA_BYTES} bytes")
}

/// The bytes a base64 value (`data`, `binaryData` in JSON) stands for; none where it is
/// not base64 (a write's body was read through the type, which checked it).
fn decoded(value: &Value) -> Vec<u8> {
    let text = value.as_str().unwrap_or_default();
    STANDARD.decode(text).unwrap_or_default()
}

fn decoded_len(value: &Value) -> usize {
    decoded(value).len()
}

/// Why `bytes` do not read as a JSON object, in the words of Go's `json.Unmarshal` into
/// a map where they are another JSON value; a parser's own words for what is not JSON.
fn not_a_json_object(bytes: &[u8]) -> Option<String> {
    let what = match serde_json::from_slice::<Value>(bytes) {
        Err(e) => return Some(e.to_string()),
        Ok(Value::Object(_) | Value::Null) => return None,
        Ok(Value::Array(_)) => "array",
        Ok(Value::String(_)) => "string",
        Ok(Value::Number(_)) => "number",
        Ok(Value::Bool(_)) => "bool",
    };
    Some(format!(
        "json: cannot unmarshal {what} into Go value of type map[string]interface {{}}"
    ))
}
