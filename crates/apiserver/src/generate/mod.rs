//! Object bodies, generated on demand from (seed, index, generation, incarnation).
//!
//! The apiserver stores no bodies: a LIST page or a watch event writes the objects it sends
//! from their identities. Generation is a pure function of its inputs, so the same scenario
//! produces the same bytes on every run; a [`Generator`] writes them through a template per
//! class of objects ([`template`]), the builders in [`pod`] and [`data`] say what they are.
//!
//! The pods look like a Deployment's pods on a real cluster: owner reference to a
//! ReplicaSet, two default tolerations, the projected service-account volume, probes,
//! resources, five conditions, container statuses. `metadata.managedFields` are computed
//! from the pod's own fields the way the apiserver's field manager tracks them ([`fields`]),
//! so their size follows the shape knobs: with the defaults a pod serializes to about
//! 7.3 KB, just under 40% of it managedFields (kubernetes issue 118454 reports 30-40%,
//! 2-4 KB).

mod data;
mod deployment;
mod fields;
mod node;
mod pod;
mod sample;
mod template;
mod termination;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::OnceLock;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;
use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::Serialize;

pub use pod::pod;
pub use termination::stop as stop_pod;

use super::protobuf::{self, Filled, Skeleton};
use data::{ConfigMapValues, SecretValues, config_map_from, secret_from};
use deployment::{DeploymentValues, deployment_from};
use node::{NodeValues, node_from};
use pod::{PodValues, pod_from};
use sample::{SampleValues, copy_of};
use scenario::{ObjectKind, ObjectSpec};
use template::{Hole, Slots, Template, holes};
use termination::{Staged, grace_period};

/// Seconds since the Unix epoch of 2026-01-01T00:00:00Z: objects are "created" from there,
/// one second apart, so timestamps do not depend on the clock.
const EPOCH: i64 = 1_767_225_600;

/// Alphabet Kubernetes uses for generated name suffixes (no vowels, no look-alikes).
const SUFFIX_ALPHABET: &[u8; 27] = b"bcdfghjklmnpqrstvwxz2456789";
/// Length of a generated name suffix; 27^5 > [`scenario::MAX_OBJECTS`].
const SUFFIX_LEN: usize = 5;

const NAMESPACES: [&str; 10] = [
    "payments",
    "checkout",
    "search",
    "identity",
    "catalog",
    "ledger",
    "billing",
    "shipping",
    "inventory",
    "notify",
];
const APPS: [&str; 10] = [
    "api", "web", "worker", "cache", "gateway", "indexer", "ingest", "reporter", "auth", "sync",
];

/// What identifies one object on the server; everything else about it is generated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectId {
    /// Position in the server's object table; fixes name and namespace.
    pub index: u32,
    /// Bumped by delete+recreate: a new incarnation has a new UID.
    pub incarnation: u32,
    /// Bumped by every update; changes the pod's content.
    pub generation: u32,
    /// The object's resourceVersion.
    pub resource_version: u64,
    /// How far a graceful deletion has gone ([`Stage::Live`] for every object but a pod
    /// a `graceful` phase is deleting).
    pub stage: Stage,
}

impl ObjectId {
    /// Object `index` of incarnation `incarnation` at `generation` and `resource_version`,
    /// not being deleted.
    pub fn new(index: u32, incarnation: u32, generation: u32, resource_version: u64) -> ObjectId {
        ObjectId {
            index,
            incarnation,
            generation,
            resource_version,
            stage: Stage::Live,
        }
    }

    /// Its `metadata.generation`: the updates', and one more once a graceful deletion has
    /// begun (kube-apiserver's `rest.BeforeDelete` moves it on as it sets
    /// `deletionTimestamp`).
    pub fn metadata_generation(&self) -> i64 {
        i64::from(self.generation) + i64::from(self.stage != Stage::Live)
    }
}

/// The steps of a pod's graceful deletion, each a MODIFIED event before the DELETED one,
/// as a cluster's informers see them: the controller's DELETE, the kubelet's status once
/// the containers have stopped, the kubelet's DELETE with no grace period.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// Not being deleted.
    #[default]
    Live,
    /// `deletionTimestamp` and `deletionGracePeriodSeconds` set by a DELETE with the pod's
    /// grace period; `metadata.generation` moved on.
    Deleting,
    /// The kubelet has stopped the containers and written the terminal status: phase
    /// `Succeeded`, containers terminated with exit code 0, not ready.
    Stopped,
    /// The kubelet's DELETE with `gracePeriodSeconds=0`: the grace period is 0 and the
    /// deletion timestamp the moment the containers stopped; the DELETED event follows.
    Released,
}

impl Stage {
    /// Every stage, in the order a deletion goes through them.
    pub const ALL: [Stage; 4] = [
        Stage::Live,
        Stage::Deleting,
        Stage::Stopped,
        Stage::Released,
    ];

    /// Its place in the order of a deletion: 0 for `Live`.
    pub fn step(self) -> usize {
        self as usize
    }

    /// The stage after this one (`Released` for `Released`).
    pub fn next(self) -> Stage {
        match self {
            Stage::Live => Stage::Deleting,
            Stage::Deleting => Stage::Stopped,
            Stage::Stopped | Stage::Released => Stage::Released,
        }
    }
}

/// Namespace of object `index`; empty for cluster-scoped objects.
pub fn namespace(spec: &ObjectSpec, index: u32) -> String {
    if !spec.namespaced() {
        return String::new();
    }
    let ns = index % spec.namespaces;
    let word = NAMESPACES[ns as usize % NAMESPACES.len()];
    match ns as usize / NAMESPACES.len() {
        0 => word.to_owned(),
        round => format!("{word}-{round}"),
    }
}

/// Name of object `index`: for a pod `{app}-{replicaset hash}-{suffix}`, for a node
/// `gke-prod-{app}-pool-{hash}-{suffix}`, for a ConfigMap
/// `{app}-config-{suffix}`, for a Secret `{app}-secret-{suffix}`. The suffix encodes the
/// index, so names are unique and [`index_of_name`] can invert them.
pub fn name(spec: &ObjectSpec, index: u32) -> String {
    if let Some(sample) = &spec.sample {
        return format!(
            "{}{}",
            sample.base_name(class_index(spec, index)),
            suffix(index)
        );
    }
    let app = app_of(spec, index);
    match spec.kind {
        ObjectKind::Pod => format!("{app}-{}-{}", template_hash(spec, index), suffix(index)),
        ObjectKind::ConfigMap => format!("{app}-config-{}", suffix(index)),
        ObjectKind::Secret => format!("{app}-secret-{}", suffix(index)),
        ObjectKind::Node => format!("{}-{}", node_pool(spec, index), suffix(index)),
        ObjectKind::Deployment => format!("{app}-{}", suffix(index)),
        ObjectKind::Sampled(_) => unreachable!("{SAMPLED_ONLY}"),
    }
}

/// Why the generator never builds a sampled kind's object: the scenario refuses such a
/// kind without a sample, and a sample's objects are copied before the kinds are matched.
const SAMPLED_ONLY: &str = "a sampled kind's objects are copies of its sample";

/// What object `id` holds in `field`, a field its kind is selectable by (`fieldSelector`);
/// "" for one it does not set. Updates leave these fields as they are; a pod's graceful
/// deletion ends its phase as `Succeeded`.
pub fn selectable_field(spec: &ObjectSpec, id: &ObjectId, field: &str) -> Cow<'static, str> {
    let index = id.index;
    match (spec.kind, field) {
        (ObjectKind::Pod, "status.phase") if id.stage >= Stage::Stopped => "Succeeded".into(),
        (_, "metadata.name") => name(spec, index).into(),
        (_, "metadata.namespace") => namespace(spec, index).into(),
        _ if let Some(sample) = &spec.sample => {
            sample.field(class_index(spec, index), field).into()
        }
        (ObjectKind::Pod, "spec.nodeName") => pod::node_name(index).into(),
        (ObjectKind::Pod, "spec.restartPolicy") => "Always".into(),
        (ObjectKind::Pod, "spec.schedulerName") => "default-scheduler".into(),
        (ObjectKind::Pod, "spec.serviceAccountName") => app_of(spec, index).into(),
        (ObjectKind::Pod, "spec.hostNetwork") | (ObjectKind::Node, "spec.unschedulable") => {
            "false".into()
        }
        (ObjectKind::Pod, "status.phase") => "Running".into(),
        (ObjectKind::Pod, "status.podIP") => pod::pod_ip(index).into(),
        (ObjectKind::Secret, "type") => "Opaque".into(),
        _ => "".into(),
    }
}

/// Writes the objects of one spec as JSON: through a template per app (made on first use,
/// see [`template`]), byte for byte what building each object would write.
#[derive(Debug)]
pub struct Generator {
    spec: ObjectSpec,
    /// Per class (an app, or a sample's object): the templates of its objects, whole and
    /// metadata only; `None` inside if a class has more holes than markers can number
    /// (then objects are built one by one). Empty when a sample's text could be taken for
    /// markers.
    templates: Vec<Templates>,
    /// The same for pods a graceful deletion has reached, per class and stage after
    /// [`Stage::Live`]; made on the first such pod.
    terminating: OnceLock<Vec<[Templates; Stage::ALL.len() - 1]>>,
}

/// A class's templates, by [`Form`].
type Templates = [OnceLock<Option<Template>>; 2];

/// Which JSON of an object to write.
#[derive(Debug, Clone, Copy)]
enum Form {
    Object = 0,
    Metadata = 1,
}

impl Generator {
    /// A generator of `spec`'s objects.
    pub fn new(spec: ObjectSpec) -> Generator {
        let classes = match &spec.sample {
            Some(sample) if !sample::templatable(sample) => 0,
            Some(sample) => sample.len(),
            None => APPS.len(),
        };
        Generator {
            spec,
            templates: (0..classes).map(|_| Default::default()).collect(),
            terminating: OnceLock::new(),
        }
    }

    /// The spec the objects follow.
    pub fn spec(&self) -> &ObjectSpec {
        &self.spec
    }

    /// Appends the JSON of object `id` to `buf`.
    pub fn write_object(&self, buf: &mut Vec<u8>, id: ObjectId) {
        self.write(buf, id, Form::Object);
    }

    /// Appends the JSON of object `id`'s `metadata` to `buf`: what a metadata-only client
    /// gets.
    pub fn write_metadata(&self, buf: &mut Vec<u8>, id: ObjectId) {
        self.write(buf, id, Form::Metadata);
    }

    /// Object `id` as its kind's protobuf message, through its class's template; `None`
    /// for a class whose message has no skeleton (its JSON is encoded instead).
    pub(crate) fn protobuf_object(&self, id: ObjectId) -> Option<ProtobufMessage<'_>> {
        self.protobuf(id, Form::Object)
    }

    /// Object `id`'s metadata as a `PartialObjectMetadata` message, as
    /// [`Generator::protobuf_object`].
    pub(crate) fn protobuf_metadata(&self, id: ObjectId) -> Option<ProtobufMessage<'_>> {
        self.protobuf(id, Form::Metadata)
    }

    fn write(&self, buf: &mut Vec<u8>, id: ObjectId, form: Form) {
        write_object(
            Out::Json(buf),
            &self.spec,
            id,
            form,
            self.template(id, form),
        );
    }

    fn protobuf(&self, id: ObjectId, form: Form) -> Option<ProtobufMessage<'_>> {
        let mut message = None;
        let out = Out::Protobuf(&mut message);
        write_object(out, &self.spec, id, form, self.template(id, form));
        message
    }

    fn template(&self, id: ObjectId, form: Form) -> Option<&OnceLock<Option<Template>>> {
        let class = class_index(&self.spec, id.index);
        let templates = match id.stage.step() {
            0 => self.templates.get(class)?,
            steps => {
                let terminating = self.terminating.get_or_init(|| {
                    (0..self.templates.len())
                        .map(|_| Default::default())
                        .collect()
                });
                &terminating.get(class)?[steps - 1]
            }
        };
        Some(&templates[form as usize])
    }
}

/// A generated object's protobuf message, its values in its class's skeleton.
pub(crate) type ProtobufMessage<'t> = Filled<'t, Slots>;

/// Where an object goes.
enum Out<'b, 't> {
    /// Its JSON, appended.
    Json(&'b mut Vec<u8>),
    /// Its protobuf message, set when its class has a skeleton.
    Protobuf(&'b mut Option<ProtobufMessage<'t>>),
}

/// Writes object `id` of `spec` in `form` to `out`: through `template`, the object's
/// class's (made from this object if it is the class's first), or without one by building
/// the object field by field (JSON only).
fn write_object<'t>(
    out: Out<'_, 't>,
    spec: &ObjectSpec,
    id: ObjectId,
    form: Form,
    template: Option<&'t OnceLock<Option<Template>>>,
) {
    if id.stage != Stage::Live {
        write_terminating(out, spec, id, form, template);
        return;
    }
    if spec.sample.is_some() {
        write_copy(out, spec, id, form, template);
        return;
    }
    let app = app_of(spec, id.index);
    match spec.kind {
        ObjectKind::Pod => {
            let values = PodValues::of(spec, app, id);
            write_form(
                out,
                template,
                (spec.kind, form),
                values,
                |v| pod_from(spec, app, v),
                |p| p.metadata,
            );
        }
        ObjectKind::ConfigMap => {
            let values = ConfigMapValues::of(spec, id);
            write_form(
                out,
                template,
                (spec.kind, form),
                values,
                |v| config_map_from(spec, app, v),
                |c| c.metadata,
            );
        }
        ObjectKind::Secret => {
            let values = SecretValues::of(spec, id);
            write_form(
                out,
                template,
                (spec.kind, form),
                values,
                |v| secret_from(spec, app, v),
                |s| s.metadata,
            );
        }
        ObjectKind::Node => {
            let values = NodeValues::of(spec, id);
            write_form(
                out,
                template,
                (spec.kind, form),
                values,
                |v| node_from(spec, id.index, app, v),
                |n| n.metadata,
            );
        }
        ObjectKind::Deployment => {
            let values = DeploymentValues::of(spec, app, id);
            write_form(
                out,
                template,
                (spec.kind, form),
                values,
                |v| deployment_from(spec, app, v),
                |d| d.metadata,
            );
        }
        ObjectKind::Sampled(_) => unreachable!("{SAMPLED_ONLY}"),
    }
}

/// [`write_object`] for a copy of the scenario's sample (`objects.sample`).
fn write_copy<'t>(
    out: Out<'_, 't>,
    spec: &ObjectSpec,
    id: ObjectId,
    form: Form,
    template: Option<&'t OnceLock<Option<Template>>>,
) {
    let sample = spec
        .sample
        .as_ref()
        .expect("a scenario of copies has its sample");
    let class = class_index(spec, id.index);
    let (object, base) = (&sample.objects[class], sample.base_name(class));
    let values = SampleValues::of(spec, object, id);
    let build = |v: &SampleValues| copy_of(spec, object, &base, v);
    let metadata = |copy: serde_json::Value| {
        serde_json::from_value(copy["metadata"].clone()).expect("a sample's metadata reads")
    };
    write_form(out, template, (spec.kind, form), values, build, metadata);
}

/// [`write_object`] for a pod a graceful deletion has reached: built as JSON and changed
/// as its stage says ([`termination`]).
fn write_terminating<'t>(
    out: Out<'_, 't>,
    spec: &ObjectSpec,
    id: ObjectId,
    form: Form,
    template: Option<&'t OnceLock<Option<Template>>>,
) {
    debug_assert_eq!(
        spec.kind,
        ObjectKind::Pod,
        "only pods are deleted gracefully"
    );
    let metadata = |pod: serde_json::Value| {
        serde_json::from_value(pod["metadata"].clone()).expect("a pod's metadata reads")
    };
    if let Some(sample) = &spec.sample {
        let class = class_index(spec, id.index);
        let (object, base) = (&sample.objects[class], sample.base_name(class));
        let values = Staged::of(SampleValues::of(spec, object, id), id, grace_period(object));
        let build = |v: &Staged<SampleValues>| {
            let mut copy = copy_of(spec, object, &base, &v.values);
            v.terminate(&mut copy, id.stage);
            copy
        };
        write_form(out, template, (spec.kind, form), values, build, metadata);
        return;
    }
    let app = app_of(spec, id.index);
    let values = Staged::of(PodValues::of(spec, app, id), id, pod::GRACE_SECONDS);
    let build = |v: &Staged<PodValues>| {
        let mut pod =
            serde_json::to_value(pod_from(spec, app, &v.values)).expect("a pod serializes");
        v.terminate(&mut pod, id.stage);
        pod
    };
    write_form(out, template, (spec.kind, form), values, build, metadata);
}

/// [`write_with`] the object `build` makes, or its `metadata`.
fn write_form<'t, V: Hole, T: Serialize>(
    out: Out<'_, 't>,
    template: Option<&'t OnceLock<Option<Template>>>,
    (kind, form): (ObjectKind, Form),
    values: V,
    build: impl Fn(&V) -> T,
    metadata: impl Fn(T) -> ObjectMeta,
) {
    match form {
        Form::Object => write_with(out, template, (kind, form), values, build),
        Form::Metadata => write_with(out, template, (kind, form), values, |v| metadata(build(v))),
    }
}

/// Writes the object with `values` through its class's template, made from `build` if
/// this is the class's first object; or, without a template (none given, or the class
/// has none), through `build`.
fn write_with<'t, V: Hole, T: Serialize>(
    out: Out<'_, 't>,
    template: Option<&'t OnceLock<Option<Template>>>,
    (kind, form): (ObjectKind, Form),
    values: V,
    build: impl Fn(&V) -> T,
) {
    let template = template.and_then(|template| {
        template
            .get_or_init(|| Template::new(&values, |marked| to_json(&build(marked))))
            .as_ref()
    });
    match (out, template) {
        (Out::Json(buf), Some(template)) => template.write(buf, values),
        (Out::Json(buf), None) => serde_json::to_writer(buf, &build(&values))
            .expect("writing a generated object to a Vec cannot fail"),
        (Out::Protobuf(message), Some(template)) => {
            *message = template.protobuf(values, |values| {
                let (json, markers) = template::marked(values, |marked| to_json(&build(marked)))?;
                skeleton(kind, form, &json, &markers)
            });
        }
        (Out::Protobuf(_), None) => {}
    }
}

/// The protobuf skeleton of a class whose JSON (with markers) is `json`: the kind's
/// message, or a `PartialObjectMetadata` around the `ObjectMeta`. `None` if the message
/// cannot keep the markers whole (no generated class today: a property test holds every
/// shape to having one).
fn skeleton(
    kind: ObjectKind,
    form: Form,
    json: &[u8],
    markers: &impl protobuf::Markers,
) -> Option<Skeleton> {
    let made = match form {
        Form::Object => Skeleton::new(kind.api_version(), kind.as_str(), json, markers),
        Form::Metadata => {
            Skeleton::new("meta.k8s.io/v1", "ObjectMeta", json, markers).and_then(|m| m.within(1))
        }
    };
    made.ok()
}

fn to_json(object: &impl Serialize) -> Vec<u8> {
    serde_json::to_vec(object).expect("a generated object serializes")
}

/// Appends the JSON of object `id` of `spec` to `buf`, building it field by field: the
/// slow path the templates stand for, for tests to hold them to.
#[cfg(test)]
fn write_built(buf: &mut Vec<u8>, spec: &ObjectSpec, id: ObjectId, form: Form) {
    write_object(Out::Json(buf), spec, id, form, None);
}

/// The index a name generated by [`name`] encodes; `None` for any other name.
pub fn index_of_name(name: &str) -> Option<u32> {
    let (_, suffix) = name.rsplit_once('-')?;
    if suffix.len() != SUFFIX_LEN {
        return None;
    }
    suffix.bytes().try_fold(0u32, |acc, b| {
        let digit = SUFFIX_ALPHABET.iter().position(|&c| c == b)? as u32;
        acc.checked_mul(SUFFIX_ALPHABET.len() as u32)?
            .checked_add(digit)
    })
}

/// The `n`th suffix drawn for a `generateName`: five characters of the apiserver's
/// alphabet, as `names.SimpleNameGenerator` makes them.
pub fn random_suffix(spec: &ObjectSpec, n: u64) -> String {
    let mut rng = rng(spec.seed, &[0x9e4, n]);
    (0..SUFFIX_LEN)
        .map(|_| SUFFIX_ALPHABET[(rng.next_u32() as usize) % SUFFIX_ALPHABET.len()] as char)
        .collect()
}

fn suffix(index: u32) -> String {
    let mut digits = [0u8; SUFFIX_LEN];
    let mut rest = index;
    for d in digits.iter_mut().rev() {
        *d = SUFFIX_ALPHABET[(rest % SUFFIX_ALPHABET.len() as u32) as usize];
        rest /= SUFFIX_ALPHABET.len() as u32;
    }
    String::from_utf8_lossy(&digits).into_owned()
}

/// Which of [`APPS`] object `index` belongs to: the class its template is made for.
fn app_index(spec: &ObjectSpec, index: u32) -> usize {
    (index / spec.namespaces) as usize % APPS.len()
}

/// The class object `index` belongs to: its app's, or, for copies of a sample, the index
/// of the sample's object it copies (each namespace's round goes through them in turn).
fn class_index(spec: &ObjectSpec, index: u32) -> usize {
    match &spec.sample {
        Some(sample) => (index / spec.namespaces) as usize % sample.len(),
        None => app_index(spec, index),
    }
}

fn app_of(spec: &ObjectSpec, index: u32) -> &'static str {
    APPS[app_index(spec, index)]
}

fn template_hash(spec: &ObjectSpec, index: u32) -> String {
    let ns = u64::from(index % spec.namespaces);
    let app = u64::from((index / spec.namespaces) % APPS.len() as u32);
    let mut rng = rng(spec.seed, &[0x7e3a, ns, app]);
    (0..10)
        .map(|_| SUFFIX_ALPHABET[(rng.next_u32() % 27) as usize] as char)
        .collect()
}

/// The node pool of node `index`, one per class: `gke-prod-{app}-pool-{hash}`.
fn node_pool(spec: &ObjectSpec, index: u32) -> String {
    let app = app_index(spec, index);
    let mut rng = rng(spec.seed, &[0x9001, app as u64]);
    let hash: String = (0..8)
        .map(|_| SUFFIX_ALPHABET[(rng.next_u32() % 27) as usize] as char)
        .collect();
    format!("gke-prod-{}-pool-{hash}", APPS[app])
}

/// A deterministic generator for the given inputs.
fn rng(seed: u64, parts: &[u64]) -> Pcg64Mcg {
    // FNV-1a over the inputs: cheap, stable across versions, and enough to decorrelate
    // neighbouring indices for a PCG seed.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
    for p in parts {
        for b in p.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    Pcg64Mcg::seed_from_u64(h)
}

/// A lowercase hex digit, one draw of `rng`.
fn hex_digit(rng: &mut Pcg64Mcg) -> char {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    char::from(HEX[(rng.next_u32() % 16) as usize])
}

fn hex(rng: &mut Pcg64Mcg, len: usize) -> String {
    let mut text = String::with_capacity(len);
    text.extend((0..len).map(|_| hex_digit(rng)));
    text
}

/// The UID of an object's incarnation, shaped like a random (v4) UUID: 32 hex draws in
/// groups of 8-4-4-4-12, the 13th and 17th replaced by the version (`4`) and the variant
/// (`a`).
pub fn uid(spec: &ObjectSpec, index: u32, incarnation: u32) -> String {
    let mut rng = rng(
        spec.seed,
        &[0x01d, u64::from(index), u64::from(incarnation)],
    );
    let mut uid = String::with_capacity(36);
    for i in 0..32 {
        let digit = hex_digit(&mut rng);
        if matches!(i, 8 | 12 | 16 | 20) {
            uid.push('-');
        }
        uid.push(match i {
            12 => '4',
            16 => 'a',
            _ => digit,
        });
    }
    uid
}

/// The generator's epoch as a `Time` serializes: when the server's own objects (its
/// namespaces) were made.
pub fn epoch_time() -> serde_json::Value {
    serde_json::to_value(time(0)).expect("a time serializes")
}

fn time(seconds: i64) -> Time {
    Time(Timestamp::from_second(EPOCH + seconds).expect("scenario timestamps are in range"))
}

holes! {
    /// What differs between the labels of two objects of one app: all but `app`.
    struct LabelValues {
        hash: String,
        ns: String,
        version: String,
        tier: String,
        zone: String,
    }
}

fn label_values(spec: &ObjectSpec, index: u32, generation: u32) -> LabelValues {
    let node = index % 97;
    LabelValues {
        hash: template_hash(spec, index),
        ns: namespace(spec, index),
        version: format!("1.{generation}"),
        tier: if index.is_multiple_of(3) {
            "frontend"
        } else {
            "backend"
        }
        .to_owned(),
        zone: format!("eu-west-1{}", ['a', 'b', 'c'][node as usize % 3]),
    }
}

/// The labels of an `app` object with values `v`: `app`, `pod-template-hash`, then
/// `spec.labels` more.
fn labels_from(spec: &ObjectSpec, app: &str, v: &LabelValues) -> BTreeMap<String, String> {
    let extra = [
        ("app.kubernetes.io/name", app),
        ("app.kubernetes.io/part-of", &v.ns),
        ("app.kubernetes.io/version", &v.version),
        ("team", &v.ns),
        ("tier", &v.tier),
        ("environment", "production"),
        ("topology.kubernetes.io/zone", &v.zone),
    ];
    let mut labels = BTreeMap::from([
        ("app".to_owned(), app.to_owned()),
        ("pod-template-hash".to_owned(), v.hash.clone()),
    ]);
    for i in 0..spec.labels as usize {
        let (k, v) = match extra.get(i) {
            Some((k, v)) => ((*k).to_owned(), (*v).to_owned()),
            None => (format!("example.com/label-{i}"), format!("value-{i}")),
        };
        labels.insert(k, v);
    }
    labels
}

/// The labels of object `index` at `generation`: `app`, `pod-template-hash`, then
/// `spec.labels` more. Label selectors are matched against these without generating the
/// whole object.
pub fn labels(spec: &ObjectSpec, index: u32, generation: u32) -> BTreeMap<String, String> {
    if let Some(sample) = &spec.sample {
        return sample.labels(class_index(spec, index));
    }
    labels_from(
        spec,
        app_of(spec, index),
        &label_values(spec, index, generation),
    )
}

/// The default object shape of a scenario, 1,000 pods, for tests.
#[cfg(test)]
pub(crate) fn test_spec() -> ObjectSpec {
    ObjectSpec::pods(1000)
}

#[cfg(test)]
mod tests;
