//! The scenario file as written: serde structs that mirror the TOML one to one.
//!
//! Nothing here is trusted. Unknown keys are rejected by serde (`deny_unknown_fields`);
//! values that need cross-field rules keep their [`Spanned`] position so that
//! [`super::Scenario::from_raw`] can point at the line when it rejects them.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use super::{
    Fault, Implementation, InitialSync, ListRules, PhaseKind, Projection, QueueKind, Relist,
    Server, StoreMode,
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScenario {
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: String,
    pub objects: RawObjects,
    #[serde(default)]
    pub apiserver: RawApiServer,
    #[serde(default)]
    pub variant: Vec<RawVariant>,
    #[serde(default)]
    pub phase: Vec<RawPhase>,
    #[serde(default)]
    pub gate: BTreeMap<String, Spanned<f64>>,
    pub timeline: Option<RawTimeline>,
    pub sweep: Option<BTreeMap<String, Spanned<Vec<Spanned<i64>>>>>,
    pub server: Option<Server>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTimeline {
    pub every: Spanned<String>,
    pub max_samples: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawObjects {
    pub kind: Option<Spanned<String>>,
    pub count: Spanned<i64>,
    #[serde(default)]
    pub seed: Option<u64>,
    pub namespaces: Option<Spanned<i64>>,
    pub labels: Option<Spanned<i64>>,
    pub annotations: Option<Spanned<i64>>,
    pub containers: Option<Spanned<i64>>,
    pub managed_fields: Option<Spanned<i64>>,
    pub last_applied: Option<bool>,
    pub data_keys: Option<Spanned<i64>>,
    pub data_bytes: Option<Spanned<i64>>,
    pub images: Option<Spanned<i64>>,
    pub sample: Option<Spanned<String>>,
    pub resource: Option<Spanned<String>>,
    pub namespaced: Option<Spanned<bool>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawApiServer {
    pub history_events: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawVariant {
    pub name: Spanned<String>,
    pub implementation: Option<Implementation>,
    pub store: Option<StoreMode>,
    pub page_size: Option<Spanned<i64>>,
    pub list_rules: Option<ListRules>,
    pub initial_sync: Option<InitialSync>,
    pub relist: Option<Relist>,
    pub projection: Option<Projection>,
    #[serde(default)]
    pub transform: Vec<Spanned<String>>,
    pub transform_initial_events: Option<bool>,
    pub fault: Option<Fault>,
    pub allocator: Option<RawAllocator>,
    pub queue: Option<QueueKind>,
    pub handlers: Option<Spanned<i64>>,
    pub handler_cost: Option<Spanned<RawCost>>,
    pub informers: Option<Spanned<i64>>,
    pub shared: Option<bool>,
    pub resync_period: Option<Spanned<String>>,
    pub uid_aware: Option<bool>,
    pub watch_read_cost: Option<Spanned<String>>,
    pub namespace: Option<Spanned<RawNamespace>>,
    pub label_selector: Option<Spanned<String>>,
    pub field_selector: Option<Spanned<String>>,
    pub watchers: Option<Spanned<i64>>,
    pub share_encodings: Option<bool>,
    // An external variant's program (`implementation = "external"`).
    pub command: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub status: Option<Spanned<String>>,
    pub pprof: Option<Spanned<String>>,
    pub quiet: Option<Spanned<String>>,
    pub timeout: Option<Spanned<String>>,
    pub pprof_token: Option<Spanned<String>>,
    pub ready: Option<Spanned<String>>,
    pub accept_refused: Option<Spanned<Vec<String>>>,
}

/// `namespace`: one namespace, or several (one informer in each).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum RawNamespace {
    One(String),
    Several(Vec<String>),
}

/// `handler_cost`: one duration for every handler, or one per handler.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum RawCost {
    Each(String),
    PerHandler(Vec<String>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAllocator {
    pub dirty_decay_ms: Option<Spanned<i64>>,
    pub muzzy_decay_ms: Option<Spanned<i64>>,
    pub narenas: Option<Spanned<i64>>,
    pub background_thread: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPhase {
    pub kind: Spanned<PhaseKind>,
    pub name: Option<Spanned<String>>,
    pub fraction: Option<Spanned<f64>>,
    pub count: Option<Spanned<i64>>,
    pub selector: Option<Spanned<String>>,
    pub disconnect: Option<Spanned<bool>>,
    pub compact: Option<Spanned<bool>>,
    pub graceful: Option<Spanned<bool>>,
    pub expect_consistent: Option<bool>,
    pub idle: Option<Spanned<String>>,
    pub decay: Option<Spanned<String>>,
    pub bytes: Option<Spanned<i64>>,
    pub blocks: Option<Spanned<i64>>,
    pub churn: Option<Spanned<String>>,
    pub churn_for: Option<Spanned<String>>,
}
