//! ConfigMaps and Secrets: what differs between two of them ([`ConfigMapValues`],
//! [`SecretValues`]) and the builders that put one together from it.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Map, Value, json};

use super::fields::{field_set, update_entry};
use super::template::{Base64, Seconds, holes};
use super::{LabelValues, ObjectId, hex, label_values, labels_from, rng, suffix, time, uid};
use scenario::{LAST_APPLIED_ANNOTATION, ObjectKind, ObjectSpec};

holes! {
    /// What differs between the metadata of two ConfigMaps or Secrets of one app and shape.
    struct MetaValues {
        labels: LabelValues,
        /// The name's last part, after `{app}-config-` or `{app}-secret-`.
        suffix: String,
        uid: String,
        resource_version: String,
        created: Seconds,
        /// One per annotation after the two Helm ones.
        annotation_hexes: Vec<String>,
    }
}

impl MetaValues {
    fn of(spec: &ObjectSpec, id: ObjectId) -> MetaValues {
        let mut rng = rng(
            spec.seed,
            &[0xc0ffee, u64::from(id.index), u64::from(id.generation)],
        );
        MetaValues {
            labels: label_values(spec, id.index, id.generation),
            suffix: suffix(id.index),
            uid: uid(spec, id.index, id.incarnation),
            resource_version: id.resource_version.to_string(),
            created: Seconds(i64::from(id.index)),
            annotation_hexes: (2..spec.annotations).map(|_| hex(&mut rng, 16)).collect(),
        }
    }
}

/// Metadata every kind but pods shares: identity, labels, annotations, and managedFields of
/// one `helm` manager owning what `owned` lists. With `spec.last_applied`, `applied` is
/// what `kubectl apply` recorded of the object's content.
fn metadata(
    spec: &ObjectSpec,
    app: &str,
    v: &MetaValues,
    owned: &[&str],
    applied: (&str, Value),
) -> ObjectMeta {
    let ns = &v.labels.ns;
    let mut extra = v.annotation_hexes.iter();
    let mut annotations: BTreeMap<String, String> = (0..spec.annotations)
        .map(|i| match i {
            0 => ("meta.helm.sh/release-name".to_owned(), app.to_owned()),
            1 => ("meta.helm.sh/release-namespace".to_owned(), ns.clone()),
            i => (
                format!("example.com/annotation-{i}"),
                extra.next().expect("a hex per extra annotation").clone(),
            ),
        })
        .collect();
    let labels = labels_from(spec, app, &v.labels);
    let name = match spec.kind {
        ObjectKind::Secret => format!("{app}-secret-{}", v.suffix),
        _ => format!("{app}-config-{}", v.suffix),
    };
    if spec.last_applied {
        let (kind, content) = applied;
        let mut recorded = json!({
            "apiVersion": "v1",
            "kind": kind,
            "metadata": {
                "annotations": {},
                "labels": &labels,
                "name": name,
                "namespace": ns,
            },
        });
        if let (Some(recorded), Value::Object(content)) = (recorded.as_object_mut(), content) {
            recorded.extend(content);
        }
        annotations.insert(LAST_APPLIED_ANNOTATION.to_owned(), recorded.to_string());
    }
    let mut meta = ObjectMeta {
        name: Some(name),
        namespace: Some(ns.clone()),
        uid: Some(v.uid.clone()),
        resource_version: Some(v.resource_version.clone()),
        creation_timestamp: Some(time(v.created.0)),
        labels: Some(labels),
        annotations: (!annotations.is_empty()).then_some(annotations),
        ..Default::default()
    };
    if spec.managed_fields > 0 {
        let value = serde_json::to_value(&meta).expect("metadata serializes");
        let mut fields = Map::new();
        let mut meta_fields = Map::new();
        for key in ["labels", "annotations"] {
            if let Some(v) = value.get(key) {
                meta_fields.insert(format!("f:{key}"), field_set(key, v));
            }
        }
        fields.insert("f:metadata".to_owned(), Value::Object(meta_fields));
        for key in owned {
            fields.insert(format!("f:{key}"), json!({}));
        }
        let owned = Value::Object(fields);
        meta.managed_fields = Some(vec![update_entry("helm", None, owned, v.created)]);
    }
    meta
}

holes! {
    /// What differs between two ConfigMaps of one app and shape.
    pub(super) struct ConfigMapValues {
        meta: MetaValues,
        index: String,
        generation: String,
    }
}

impl ConfigMapValues {
    pub(super) fn of(spec: &ObjectSpec, id: ObjectId) -> ConfigMapValues {
        ConfigMapValues {
            meta: MetaValues::of(spec, id),
            index: id.index.to_string(),
            generation: id.generation.to_string(),
        }
    }
}

/// The ConfigMap of app `app` with values `v`: an application's configuration, a YAML file
/// and a few flat keys; or, with `spec.data_keys`, the shape [`shaped_data`] makes.
pub(super) fn config_map_from(spec: &ObjectSpec, app: &str, v: &ConfigMapValues) -> ConfigMap {
    let data: BTreeMap<String, String> = match spec.data_keys {
        Some(keys) => {
            let config = format!(
                "setting: value-{}\ncount: {}\nrevision: {}",
                v.index, v.index, v.generation
            );
            shaped_data(keys, config, filler(spec)).collect()
        }
        None => application_config(app, &v.meta.labels.ns, &v.generation),
    };
    let applied = ("ConfigMap", json!({ "data": &data }));
    ConfigMap {
        metadata: metadata(spec, app, &v.meta, &["data"], applied),
        data: Some(data),
        ..Default::default()
    }
}

/// The default ConfigMap data: an application's YAML file and two flat keys.
fn application_config(app: &str, ns: &str, generation: &str) -> BTreeMap<String, String> {
    let yaml = format!(
        "server:\n  port: 8080\n  shutdownGracePeriod: 25s\nlogging:\n  level: info\n  format: json\n\
         upstream:\n  url: http://{app}.{ns}.svc.cluster.local:8080\n  timeout: 5s\n  retries: 3\n\
         features:\n  revision: {generation}\n"
    );
    [
        ("application.yaml", yaml),
        ("LOG_LEVEL", "info".to_owned()),
        ("REVISION", generation.to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// `keys` data entries in the shape of kube-runtime's memory benchmark: the per-object
/// `config`, then `keys - 1` values `filler` (`spec.data_bytes` bytes).
fn shaped_data<T: Clone>(keys: u32, config: T, filler: T) -> impl Iterator<Item = (String, T)> {
    std::iter::once(("config.yaml".to_owned(), config)).chain((1..keys).map(move |k| {
        let key = if k == 1 {
            "extra".to_owned()
        } else {
            format!("extra-{k}")
        };
        (key, filler.clone())
    }))
}

/// The value after `config.yaml` of shaped data.
fn filler(spec: &ObjectSpec) -> String {
    "x".repeat(spec.data_bytes as usize)
}

holes! {
    /// What differs between two Secrets of one app and shape.
    pub(super) struct SecretValues {
        meta: MetaValues,
        /// The credentials, or with `spec.data_keys` the per-object `config.yaml`.
        data: Vec<Base64>,
    }
}

/// The keys of a default Secret's credentials and their lengths in hex digits.
const CREDENTIALS: [(&str, usize); 3] = [("username", 12), ("password", 32), ("api-key", 64)];

impl SecretValues {
    pub(super) fn of(spec: &ObjectSpec, id: ObjectId) -> SecretValues {
        let data = match spec.data_keys {
            Some(_) => vec![Base64(
                format!(
                    "setting: value-{}\ncount: {}\nrevision: {}",
                    id.index, id.index, id.generation
                )
                .into_bytes(),
            )],
            None => {
                let mut rng = rng(
                    spec.seed,
                    &[0x5ec, u64::from(id.index), u64::from(id.generation)],
                );
                CREDENTIALS
                    .iter()
                    .map(|(_, len)| Base64(hex(&mut rng, *len).into_bytes()))
                    .collect()
            }
        };
        SecretValues {
            meta: MetaValues::of(spec, id),
            data,
        }
    }
}

/// The Secret of app `app` with values `v`: an application's credentials, base64 on the
/// wire as Secrets are; or, with `spec.data_keys`, the shape [`shaped_data`] makes.
pub(super) fn secret_from(spec: &ObjectSpec, app: &str, v: &SecretValues) -> Secret {
    let data: BTreeMap<String, ByteString> = match spec.data_keys {
        Some(keys) => {
            let config = ByteString(v.data[0].0.clone());
            shaped_data(keys, config, ByteString(filler(spec).into_bytes())).collect()
        }
        None => CREDENTIALS
            .iter()
            .zip(&v.data)
            .map(|((key, _), value)| ((*key).to_owned(), ByteString(value.0.clone())))
            .collect(),
    };
    let applied = ("Secret", json!({ "data": &data, "type": "Opaque" }));
    Secret {
        metadata: metadata(spec, app, &v.meta, &["data", "type"], applied),
        data: Some(data),
        type_: Some("Opaque".to_owned()),
        ..Default::default()
    }
}
