//! Deployments (apps/v1): what differs between two of them ([`DeploymentValues`]) and the
//! builder that puts one together, as a cluster shows a rolled-out Deployment: its pod
//! template (the pods' containers, without what admission adds to a pod), a rolling-update
//! strategy, a status with every replica available, and managedFields of the tool that
//! applied it and of the deployment controller.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentCondition, DeploymentSpec, DeploymentStatus, DeploymentStrategy,
    RollingUpdateDeployment,
};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, ManagedFieldsEntry, ObjectMeta,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::{Map, Value, json};

use super::fields::{field_set, push_later_managers, root_field_set, versioned_update_entry};
use super::pod::{
    Image, config_mount, config_volume, container_name, container_with, image_digest,
};
use super::template::{Int, Seconds, holes};
use super::{LabelValues, ObjectId, hex, label_values, labels_from, rng, suffix, time, uid};
use scenario::{LAST_APPLIED_ANNOTATION, ObjectSpec};

/// Replicas every Deployment asks for, and has.
const REPLICAS: i32 = 3;

/// The annotation the deployment controller keeps the rollout's revision in.
const REVISION_ANNOTATION: &str = "deployment.kubernetes.io/revision";

holes! {
    /// What differs between two Deployments of one app and shape.
    pub(super) struct DeploymentValues {
        labels: LabelValues,
        /// The name's last part, after `{app}-`.
        suffix: String,
        uid: String,
        resource_version: String,
        generation: Int,
        /// The rollout's revision: the generation, as text.
        revision: String,
        restarted_at: String,
        config_checksum: String,
        /// One per annotation after the revision and the two Helm ones.
        extra_annotations: Vec<String>,
        /// Per container: its image's digest.
        image_digests: Vec<String>,
        created: Seconds,
        /// When the first rollout left enough replicas available.
        available_at: Seconds,
        /// When the rollout of this generation completed.
        rolled_out: Seconds,
        /// When each manager after the deployment controller wrote.
        managers_at: Vec<Seconds>,
    }
}

impl DeploymentValues {
    pub(super) fn of(spec: &ObjectSpec, app: &str, id: ObjectId) -> DeploymentValues {
        let labels = label_values(spec, id.index, id.generation);
        let mut rng = rng(
            spec.seed,
            &[0xde9, u64::from(id.index), u64::from(id.incarnation)],
        );
        let config_checksum = hex(&mut rng, 64);
        let extra_annotations = (3..spec.annotations).map(|_| hex(&mut rng, 16)).collect();
        let image_digests = (0..spec.containers as usize)
            .map(|c| image_digest(&labels.ns, &container_name(app, c), &labels.version))
            .collect();
        let created = i64::from(id.index);
        DeploymentValues {
            suffix: suffix(id.index),
            uid: uid(spec, id.index, id.incarnation),
            resource_version: id.resource_version.to_string(),
            generation: Int(i64::from(id.generation)),
            revision: id.generation.to_string(),
            restarted_at: format!("2026-01-01T00:00:{:02}Z", id.generation % 60),
            config_checksum,
            extra_annotations,
            image_digests,
            created: Seconds(created),
            available_at: Seconds(created + 20),
            rolled_out: Seconds(created + 40 + i64::from(id.generation)),
            managers_at: (0..spec.managed_fields.saturating_sub(2) as i64)
                .map(|i| Seconds(created + 60 + i))
                .collect(),
            labels,
        }
    }

    fn name(&self, app: &str) -> String {
        format!("{app}-{}", self.suffix)
    }
}

/// The Deployment of app `app` with values `v`, managedFields included when the spec has
/// them.
pub(super) fn deployment_from(spec: &ObjectSpec, app: &str, v: &DeploymentValues) -> Deployment {
    let mut deployment = Deployment {
        metadata: metadata(spec, app, v),
        spec: Some(deployment_spec(spec, app, v)),
        status: Some(status(app, v)),
    };
    if spec.last_applied {
        let applied = last_applied_configuration(&deployment);
        deployment
            .metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .insert(LAST_APPLIED_ANNOTATION.to_owned(), applied);
    }
    if spec.managed_fields > 0 {
        let value = serde_json::to_value(&deployment).expect("a generated Deployment serializes");
        deployment.metadata.managed_fields = Some(managed_fields(spec, &value, v));
    }
    deployment
}

fn metadata(spec: &ObjectSpec, app: &str, v: &DeploymentValues) -> ObjectMeta {
    let ns = &v.labels.ns;
    let mut extra = v.extra_annotations.iter();
    let annotations: BTreeMap<String, String> = (0..spec.annotations)
        .map(|i| match i {
            0 => (REVISION_ANNOTATION.to_owned(), v.revision.clone()),
            1 => ("meta.helm.sh/release-name".to_owned(), app.to_owned()),
            2 => ("meta.helm.sh/release-namespace".to_owned(), ns.clone()),
            i => (
                format!("example.com/annotation-{i}"),
                extra.next().expect("a hex per extra annotation").clone(),
            ),
        })
        .collect();
    ObjectMeta {
        name: Some(v.name(app)),
        namespace: Some(ns.clone()),
        uid: Some(v.uid.clone()),
        resource_version: Some(v.resource_version.clone()),
        generation: Some(v.generation.0),
        creation_timestamp: Some(time(v.created.0)),
        labels: Some(labels_from(spec, app, &v.labels)),
        annotations: (!annotations.is_empty()).then_some(annotations),
        ..Default::default()
    }
}

fn deployment_spec(spec: &ObjectSpec, app: &str, v: &DeploymentValues) -> DeploymentSpec {
    let mut pod_labels = labels_from(spec, app, &v.labels);
    // The controller adds the template's hash to each ReplicaSet's pods, not the template.
    pod_labels.remove("pod-template-hash");
    let containers: Vec<Container> = (0..spec.containers as usize)
        .map(|c| {
            let image = Image {
                ns: &v.labels.ns,
                version: &v.labels.version,
                digest: &v.image_digests[c],
            };
            container_with(app, c, image, vec![config_mount()])
        })
        .collect();
    let percent = |p: &str| Some(IntOrString::String(p.to_owned()));
    DeploymentSpec {
        replicas: Some(REPLICAS),
        revision_history_limit: Some(10),
        progress_deadline_seconds: Some(600),
        selector: LabelSelector {
            match_labels: Some(BTreeMap::from([("app".to_owned(), app.to_owned())])),
            ..Default::default()
        },
        strategy: Some(DeploymentStrategy {
            type_: Some("RollingUpdate".to_owned()),
            rolling_update: Some(RollingUpdateDeployment {
                max_surge: percent("25%"),
                max_unavailable: percent("25%"),
            }),
        }),
        template: PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some(pod_labels),
                annotations: Some(BTreeMap::from([
                    ("checksum/config".to_owned(), v.config_checksum.clone()),
                    (
                        "kubectl.kubernetes.io/restartedAt".to_owned(),
                        v.restarted_at.clone(),
                    ),
                ])),
                ..Default::default()
            }),
            spec: Some(PodSpec {
                containers,
                dns_policy: Some("ClusterFirst".to_owned()),
                restart_policy: Some("Always".to_owned()),
                scheduler_name: Some("default-scheduler".to_owned()),
                security_context: Some(Default::default()),
                service_account: Some(app.to_owned()),
                service_account_name: Some(app.to_owned()),
                termination_grace_period_seconds: Some(30),
                volumes: Some(vec![config_volume(app)]),
                ..Default::default()
            }),
        },
        ..Default::default()
    }
}

/// Every replica of the newest ReplicaSet available, as the deployment controller reports
/// a finished rollout.
fn status(app: &str, v: &DeploymentValues) -> DeploymentStatus {
    let replica_set = format!("{}-{}", v.name(app), v.labels.hash);
    let condition =
        |type_: &str, reason: &str, message: String, since: Seconds| DeploymentCondition {
            type_: type_.to_owned(),
            status: "True".to_owned(),
            reason: Some(reason.to_owned()),
            message: Some(message),
            last_update_time: Some(time(v.rolled_out.0)),
            last_transition_time: Some(time(since.0)),
        };
    DeploymentStatus {
        observed_generation: Some(v.generation.0),
        replicas: Some(REPLICAS),
        updated_replicas: Some(REPLICAS),
        ready_replicas: Some(REPLICAS),
        available_replicas: Some(REPLICAS),
        conditions: Some(vec![
            condition(
                "Available",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.".to_owned(),
                v.available_at,
            ),
            condition(
                "Progressing",
                "NewReplicaSetAvailable",
                format!("ReplicaSet \"{replica_set}\" has successfully progressed."),
                v.created,
            ),
        ]),
        ..Default::default()
    }
}

/// What `kubectl apply` would have recorded: identity, labels and the spec.
fn last_applied_configuration(deployment: &Deployment) -> String {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "annotations": {},
            "labels": deployment.metadata.labels,
            "name": deployment.metadata.name,
            "namespace": deployment.metadata.namespace,
        },
        "spec": deployment.spec,
    })
    .to_string()
}

/// The tool that applied the Deployment owns its labels, annotations and spec; the
/// deployment controller its status and the revision annotation (through the status
/// subresource); managers after them, the annotations.
fn managed_fields(
    spec: &ObjectSpec,
    deployment: &Value,
    v: &DeploymentValues,
) -> Vec<ManagedFieldsEntry> {
    let meta = &deployment["metadata"];
    let entry = |manager, subresource, fields, at| {
        versioned_update_entry("apps/v1", manager, subresource, fields, at)
    };
    let mut applied_meta = Map::new();
    applied_meta.insert("f:labels".to_owned(), field_set("labels", &meta["labels"]));
    let mut annotations = meta.get("annotations").cloned().unwrap_or(Value::Null);
    if let Some(map) = annotations.as_object_mut() {
        map.remove(REVISION_ANNOTATION);
        if !map.is_empty() {
            applied_meta.insert(
                "f:annotations".to_owned(),
                field_set("annotations", &annotations),
            );
        }
    }
    let applied = json!({
        "f:metadata": Value::Object(applied_meta),
        "f:spec": root_field_set("spec", &deployment["spec"]),
    });
    let mut out = vec![entry("helm", None, applied, v.created)];
    if spec.managed_fields > 1 {
        let mut controller = Map::new();
        if meta["annotations"].get(REVISION_ANNOTATION).is_some() {
            controller.insert(
                "f:metadata".to_owned(),
                json!({"f:annotations": {".": {}, format!("f:{REVISION_ANNOTATION}"): {}}}),
            );
        }
        controller.insert(
            "f:status".to_owned(),
            root_field_set("status", &deployment["status"]),
        );
        out.push(entry(
            "kube-controller-manager",
            Some("status"),
            Value::Object(controller),
            v.rolled_out,
        ));
    }
    push_later_managers(&mut out, "apps/v1", meta, &v.managers_at);
    out
}
