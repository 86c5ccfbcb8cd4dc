//! The settings of one informer variant: which implementation, how it lists, syncs,
//! relists, transforms and stores. Every setting is a closed set (an enum) or a number;
//! the informer reads them, the report echoes them whole.

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::error::{Problem, duration_ms, int_in};
use super::external::{self, Subject};
use super::objects::ObjectSpec;
use super::raw::{self, RawVariant};
pub use super::scope::Scope;
pub use super::server_side::ServerSide;
pub use super::transform::{LAST_APPLIED_ANNOTATION, Transform};

/// One informer configuration under test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Variant {
    /// Label in tables and reports.
    pub name: String,
    /// Every setting of the variant, defaults included; echoed into the report.
    pub config: VariantConfig,
    /// The program an external variant runs; `None` for the built-in informers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<Box<Subject>>,
    /// The apiserver's side of the variant's process.
    #[serde(default, skip_serializing_if = "ServerSide::is_default")]
    pub server: ServerSide,
    /// The objects the informer asks for (all, by default).
    #[serde(default, skip_serializing_if = "Scope::is_default")]
    pub scope: Scope,
}

/// The settings of an informer variant. A report written before a setting existed reads
/// with that setting's default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct VariantConfig {
    /// Which informer runs.
    pub implementation: Implementation,
    /// How the store holds the objects of a LIST.
    pub store: StoreMode,
    /// LIST page size (`limit`); 0 asks for everything in one response.
    pub page_size: u32,
    /// Which resourceVersion and page size each LIST asks for.
    pub list_rules: ListRules,
    /// How the informer gets the initial state: LIST, or a watch with initial events.
    pub initial_sync: InitialSync,
    /// How a relist (or the initial sync) replaces the store's content.
    pub relist: Relist,
    /// Whole objects, or metadata only.
    pub projection: Projection,
    /// What is cut from every object before it is stored, in order.
    pub transform: Vec<Transform>,
    /// Whether a watch-list's initial events are transformed as they arrive (true), or
    /// only when the temporary store is swapped in (false: client-go before k/k#131799,
    /// client-go#1415).
    pub transform_initial_events: bool,
    /// A deliberate bug, to show that the consistency oracle catches a wrong store.
    pub fault: Option<Fault>,
    /// jemalloc settings of the variant's process (`[variant.allocator]`); unset ones are
    /// jemalloc's defaults.
    pub allocator: AllocatorConfig,
    /// What stands between the reflector and the store: nothing (the reflector writes the
    /// store, as kube-runtime's does), or client-go's DeltaFIFO or RealFIFO, popped by the
    /// informer's process loop that updates the store and notifies the handlers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueKind>,
    /// Event handlers registered on each informer, each with its own unbounded buffer
    /// (client-go's processorListener).
    #[serde(skip_serializing_if = "is_zero")]
    pub handlers: u32,
    /// What handling one notification costs each handler, in virtual ms (one entry per
    /// handler; empty: free).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub handler_cost_ms: Vec<u64>,
    /// How many informers the controller creates for the resource.
    #[serde(skip_serializing_if = "is_one")]
    pub informers: u32,
    /// Whether those informers are one shared informer (one reflector, store and watch
    /// feeding every handler) or independent ones, each with its own.
    #[serde(skip_serializing_if = "is_false")]
    pub shared: bool,
    /// The handlers' resync period in ms (0: never; at most a day). A `resync` phase is
    /// the moment it elapses.
    #[serde(skip_serializing_if = "is_zero")]
    pub resync_period_ms: u32,
    /// An update whose old and new objects have different UIDs reaches the handlers as a
    /// delete, then an add (client-go hands it on as an update: keys are namespace/name).
    #[serde(skip_serializing_if = "is_false")]
    pub uid_aware: bool,
    /// What reading one watch event costs the informer, in virtual ms: a consumer slower
    /// than the cluster's event rate.
    #[serde(skip_serializing_if = "is_zero_u16")]
    pub watch_read_cost_ms: u16,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

fn is_zero_u16(n: &u16) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// jemalloc settings a variant's process starts with, as a deployed service would set them
/// in `MALLOC_CONF`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AllocatorConfig {
    /// How long freed dirty pages stay before they are purged, in ms (-1: never; 0: at once).
    pub dirty_decay_ms: Option<i64>,
    /// The same for muzzy pages (purged lazily with `MADV_FREE`).
    pub muzzy_decay_ms: Option<i64>,
    /// Automatic arenas: the informer's (the apiserver's and the harness's are explicit,
    /// beside them).
    pub narenas: Option<u32>,
    /// Background threads that purge decayed pages without waiting for allocator activity.
    pub background_thread: Option<bool>,
}

impl AllocatorConfig {
    /// The settings in jemalloc's `MALLOC_CONF` syntax; `None` when none is set.
    pub fn malloc_conf(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(ms) = self.dirty_decay_ms {
            parts.push(format!("dirty_decay_ms:{ms}"));
        }
        if let Some(ms) = self.muzzy_decay_ms {
            parts.push(format!("muzzy_decay_ms:{ms}"));
        }
        if let Some(n) = self.narenas {
            parts.push(format!("narenas:{n}"));
        }
        if let Some(on) = self.background_thread {
            parts.push(format!("background_thread:{on}"));
        }
        (!parts.is_empty()).then(|| parts.join(","))
    }
}

impl Default for VariantConfig {
    fn default() -> VariantConfig {
        VariantConfig::defaults(Implementation::Builtin)
    }
}

// The built-in informer's task holds a clone of the settings, and its allocation is part
// of every variant's exact figures: the settings must stay within 128 bytes (they were 88
// when the committed reports were made; up to 128 the task stays in the same size class,
// measured), so new ones are small integers and closed sets.
const _: () = assert!(std::mem::size_of::<VariantConfig>() <= 128);

impl VariantConfig {
    /// The defaults of `implementation`: what a variant gets for every key it leaves out.
    pub fn defaults(implementation: Implementation) -> VariantConfig {
        VariantConfig {
            implementation,
            store: StoreMode::PerItemCopy,
            // client-go's pager and kube-runtime's `watcher::Config` both default to 500.
            page_size: 500,
            list_rules: match implementation {
                Implementation::Builtin | Implementation::External => ListRules::ClientGo,
                Implementation::KubeRuntime => ListRules::KubeRuntime,
            },
            initial_sync: InitialSync::List,
            relist: Relist::Buffered,
            projection: Projection::Full,
            transform: Vec::new(),
            transform_initial_events: true,
            fault: None,
            allocator: AllocatorConfig::default(),
            queue: None,
            handlers: 0,
            handler_cost_ms: Vec::new(),
            informers: 1,
            shared: false,
            resync_period_ms: 0,
            uid_aware: false,
            watch_read_cost_ms: 0,
        }
    }

    /// Informers the process runs: one when they are shared, else one per informer.
    pub fn informer_processes(&self) -> u32 {
        if self.shared { 1 } else { self.informers }
    }

    /// Handlers registered on each running informer: a shared informer carries the
    /// handlers of every informer that shares it.
    pub fn handlers_per_informer(&self) -> u32 {
        if self.shared {
            self.handlers * self.informers
        } else {
            self.handlers
        }
    }

    /// What handler `i` of an informer pays per notification, in virtual ms.
    pub fn handler_cost(&self, i: usize) -> u64 {
        match self.handler_cost_ms.len() {
            0 => 0,
            n => self.handler_cost_ms[i % n],
        }
    }
}

/// Declares a closed set of scenario words: the enum, its serde names and `as_str`.
macro_rules! words {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $word:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $word)] $variant,)+
        }

        impl $name {
            /// The name as written in scenario files.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word,)+
                }
            }
        }
    };
}

words! {
    /// Which server a run's variants run against (the scenario's top-level `server`).
    #[derive(Default)]
    Server {
        /// The built-in apiserver, one in each variant's process: the server whose exact
        /// figures CI gates.
        #[default]
        BuiltIn = "built-in",
        /// servers/kube-apiserver (built by servers/build.sh), which the run starts for
        /// itself, fills through the API and stops when it ends.
        KubeApiserver = "kube-apiserver",
    }
}

impl Server {
    /// Whether this is the built-in apiserver (the default, left out of reports).
    pub fn is_built_in(&self) -> bool {
        *self == Server::BuiltIn
    }
}

words! {
    /// Which informer runs a variant.
    Implementation {
        /// This crate's informer, modelled on client-go's `tools/cache`.
        Builtin = "builtin",
        /// kube-runtime's `watcher()` + `reflector()`, the Rust peer, as its users run it.
        KubeRuntime = "kube-runtime",
        /// A program of its own, measured from outside (`command`; docs/subjects.md).
        External = "external",
    }
}

words! {
    /// How the store holds the objects it got from a LIST.
    StoreMode {
        /// client-go before v1.28: store entries point into the LIST's one backing array
        /// (`&list.Items[i]`), which stays alive while any entry refers to it
        /// (kubernetes issue 111370).
        SharedArray = "shared-array",
        /// client-go v1.28 and later (`ExtractListWithAlloc`, kubernetes PR 113362): every
        /// item is copied into an allocation of its own.
        PerItemCopy = "per-item-copy",
    }
}

words! {
    /// Which LIST requests an informer makes (client-go's reflector, kube-runtime's watcher).
    ListRules {
        /// client-go's reflector: the first LIST asks resourceVersion "0" (the watch cache
        /// answers it whole, ignoring `limit`); a relist asks the last synced version,
        /// unpaged; after a 410 on that LIST, "" paged by `page_size`. The pager joins all
        /// pages before the store sees them.
        ClientGo = "client-go",
        /// kube-runtime's `watcher::Config`: resourceVersion unset (a consistent read),
        /// `limit = page_size`; each page is handed on before the next is fetched.
        KubeRuntime = "kube-runtime",
    }
}

words! {
    /// How an informer gets the initial state.
    InitialSync {
        /// LIST, then WATCH from the list's resourceVersion.
        List = "list",
        /// One WATCH with `sendInitialEvents=true` (KEP-3157): the state as ADDED events
        /// into a temporary store until the `k8s.io/initial-events-end` bookmark, then the
        /// same watch goes on (client-go's watch-list client, kube-runtime's
        /// `streaming_lists()`).
        WatchList = "watch-list",
        /// The legacy way: a WATCH at resourceVersion "0" without `sendInitialEvents`. The
        /// server sends its cached state as ADDED events, then changes, with no marker
        /// where the state ends; the informer applies them as they come and, having no
        /// complete state to resume from, watches from "0" again whenever the watch ends.
        WatchRv0 = "watch-rv0",
    }
}

words! {
    /// How a (re)list replaces the store's content.
    Relist {
        /// The new state is built whole beside the old store, then swapped in
        /// (client-go's `Replace`, kube-runtime's reflector buffer).
        Buffered = "buffered",
        /// Each listed object replaces its entry in place and is marked seen; entries not
        /// seen by the end are swept.
        Incremental = "incremental",
    }
}

words! {
    /// What of each object the informer asks for.
    Projection {
        /// Whole objects.
        Full = "full",
        /// Metadata only (`as=PartialObjectMetadataList`): controller-runtime's metadata
        /// informers, kube-runtime's `metadata_watcher`.
        Metadata = "metadata",
        /// Whole objects held untyped: typed `metadata` beside a JSON tree of every other
        /// field (kube's `DynamicObject`; client-go's dynamic informer, whose
        /// `unstructured.Unstructured` is all maps).
        Dynamic = "dynamic",
    }
}

words! {
    /// client-go's queues between the reflector and the store (tools/cache `DeltaFIFO`,
    /// `RealFIFO`).
    QueueKind {
        /// Per-key delta lists: a key is queued once, with every delta since it was last
        /// popped (only two consecutive deletes are merged).
        DeltaFifo = "delta-fifo",
        /// Every notification in order, no per-key merging (client-go's default since
        /// v0.33, `InOrderInformers`).
        RealFifo = "real-fifo",
    }
}

words! {
    /// A deliberate informer bug.
    Fault {
        /// DELETED events are ignored: the store keeps objects the server deleted.
        IgnoreDeletes = "ignore-deletes",
    }
}

/// Refuses an empty variant name, and one with a control character, which would reach
/// the terminal and the reports as it is.
fn refuse_bad_name(raw: &RawVariant, key: &str) -> Result<(), Problem> {
    let name = raw.name.as_ref();
    if name.trim().is_empty() {
        return Err(Problem::at(key, raw.name.span(), "variant name is empty"));
    }
    if name.chars().any(char::is_control) {
        return Err(Problem::at(
            key,
            raw.name.span(),
            format!(
                "variant name {name:?} holds a control character, which would reach the \
                 terminal and the reports as it is"
            ),
        ));
    }
    Ok(())
}

pub(super) fn variant_from_raw(
    i: usize,
    raw: RawVariant,
    objects: &ObjectSpec,
) -> Result<Variant, Problem> {
    let key = |field: &str| format!("variant[{i}].{field}");
    refuse_bad_name(&raw, &key("name"))?;
    let implementation = raw.implementation.unwrap_or(Implementation::Builtin);
    let mut config = VariantConfig::defaults(implementation);
    if implementation == Implementation::External {
        let subject = external::subject_from_raw(i, &raw)?;
        let scope = Scope::from_raw(&raw, objects.kind, &key)?;
        return Ok(Variant {
            name: raw.name.into_inner(),
            config,
            subject: Some(Box::new(subject)),
            server: ServerSide::default(),
            scope,
        });
    }
    external::refuse_on_builtin(i, &raw)?;
    if let Some(v) = &raw.page_size {
        config.page_size = int_in(v, &key("page_size"), 0, u64::from(u32::MAX))? as u32;
    }
    config.store = raw.store.unwrap_or(config.store);
    config.list_rules = raw.list_rules.unwrap_or(config.list_rules);
    config.initial_sync = raw.initial_sync.unwrap_or(config.initial_sync);
    config.relist = raw.relist.unwrap_or(config.relist);
    config.projection = raw.projection.unwrap_or(config.projection);
    if !objects.kind.held_typed() {
        let typed = raw.projection == Some(Projection::Full);
        super::sample_kind::untyped_only(typed, &key)?;
        config.projection = raw.projection.unwrap_or(Projection::Dynamic);
    }
    config.transform_initial_events = raw
        .transform_initial_events
        .unwrap_or(config.transform_initial_events);
    config.fault = raw.fault;
    event_machinery_from_raw(&raw, &mut config, &key)?;
    if let Some(a) = &raw.allocator {
        config.allocator = allocator_from_raw(i, a)?;
    }
    config.transform = transforms_from_raw(i, &raw, objects, config.projection)?;
    check_variant(&config, &raw).map_err(|(field, why, hint)| {
        let problem = Problem::key(key(field), why);
        match hint {
            Some(hint) => problem.hint(hint),
            None => problem,
        }
    })?;
    let server = ServerSide::from_raw(&raw, &key)?;
    let scope = Scope::from_raw(&raw, objects.kind, &key)?;
    let informers = u64::from(config.informer_processes()) * scope.namespaces.len() as u64;
    if informers > MAX_CONSUMERS {
        return Err(Problem::key(
            key("namespace"),
            format!(
                "{} namespaces with {} informers in each: {informers} informers, at most \
                 {MAX_CONSUMERS}",
                scope.namespaces.len(),
                config.informer_processes(),
            ),
        ));
    }
    Ok(Variant {
        name: raw.name.into_inner(),
        config,
        subject: None,
        server,
        scope,
    })
}

/// `[variant.allocator]`: jemalloc's settings for the variant's process.
fn allocator_from_raw(i: usize, a: &raw::RawAllocator) -> Result<AllocatorConfig, Problem> {
    let key = |field: &str| format!("variant[{i}].allocator.{field}");
    let decay = |v: &Option<Spanned<i64>>, field: &str| -> Result<Option<i64>, Problem> {
        match v {
            None => Ok(None),
            Some(v) if (-1..=86_400_000).contains(v.as_ref()) => Ok(Some(*v.as_ref())),
            Some(v) => Err(Problem::at(
                key(field),
                v.span(),
                format!(
                    "{} is out of range: expected -1 (never) to 86400000 ms",
                    v.as_ref()
                ),
            )),
        }
    };
    Ok(AllocatorConfig {
        dirty_decay_ms: decay(&a.dirty_decay_ms, "dirty_decay_ms")?,
        muzzy_decay_ms: decay(&a.muzzy_decay_ms, "muzzy_decay_ms")?,
        narenas: match &a.narenas {
            None => None,
            Some(v) => Some(int_in(v, &key("narenas"), 1, 1024)? as u32),
        },
        background_thread: a.background_thread,
    })
}

/// `transform`: each parsed, and refused where the objects have no such field.
fn transforms_from_raw(
    i: usize,
    raw: &RawVariant,
    objects: &ObjectSpec,
    projection: Projection,
) -> Result<Vec<Transform>, Problem> {
    let mut transforms = Vec::new();
    for (j, t) in raw.transform.iter().enumerate() {
        let key = || format!("variant[{i}].transform[{j}]");
        let transform: Transform = t
            .as_ref()
            .parse()
            .map_err(|why: String| Problem::at(key(), t.span(), why))?;
        if let Some(why) = transform.misfit(objects.kind, projection == Projection::Metadata) {
            return Err(Problem::at(key(), t.span(), why));
        }
        transforms.push(transform);
    }
    Ok(transforms)
}

/// Most informers or handlers a variant may run.
const MAX_CONSUMERS: u64 = 1000;

/// The queue, handlers, informers and resync settings of a variant.
fn event_machinery_from_raw(
    raw: &RawVariant,
    config: &mut VariantConfig,
    key: &impl Fn(&str) -> String,
) -> Result<(), Problem> {
    if let Some(v) = &raw.informers {
        config.informers = int_in(v, &key("informers"), 1, MAX_CONSUMERS)? as u32;
    }
    config.shared = raw.shared.unwrap_or(false);
    if let Some(v) = &raw.handlers {
        config.handlers = int_in(v, &key("handlers"), 0, MAX_CONSUMERS)? as u32;
    }
    if let Some(v) = &raw.handler_cost {
        let costs: Vec<&str> = match v.as_ref() {
            raw::RawCost::Each(one) => vec![one.as_str()],
            raw::RawCost::PerHandler(each) => each.iter().map(String::as_str).collect(),
        };
        if config.handlers == 0 {
            return Err(Problem::at(
                key("handler_cost"),
                v.span(),
                "`handler_cost` is what each handler pays per notification; set `handlers` too",
            ));
        }
        if costs.len() != 1 && costs.len() != config.handlers as usize {
            return Err(Problem::at(
                key("handler_cost"),
                v.span(),
                format!(
                    "{} costs for {} handlers: give one cost for all, or one per handler",
                    costs.len(),
                    config.handlers
                ),
            ));
        }
        config.handler_cost_ms = costs
            .into_iter()
            .map(|c| duration_ms(&Spanned::new(v.span(), c.to_owned()), &key("handler_cost")))
            .collect::<Result<_, _>>()?;
    }
    if let Some(v) = &raw.resync_period {
        // At most a day, so it fits.
        config.resync_period_ms = duration_ms(v, &key("resync_period"))? as u32;
        if config.handlers == 0 && config.resync_period_ms > 0 {
            return Err(Problem::at(
                key("resync_period"),
                v.span(),
                "a resync re-delivers objects to handlers; with `handlers = 0` there is none to \
                 resync for (client-go's informer skips it)",
            ));
        }
    }
    config.uid_aware = raw.uid_aware.unwrap_or(false);
    if let Some(v) = &raw.watch_read_cost {
        let ms = duration_ms(v, &key("watch_read_cost"))?;
        config.watch_read_cost_ms = u16::try_from(ms)
            .ok()
            .filter(|ms| *ms <= 60_000)
            .ok_or_else(|| {
                Problem::at(
                    key("watch_read_cost"),
                    v.span(),
                    format!("{ms} ms per event is out of range: at most 60s"),
                )
            })?;
    }
    // Handlers are fed through a queue; client-go's default one since v0.33 is RealFIFO.
    config.queue = match raw.queue {
        Some(q) => Some(q),
        None if config.handlers > 0 => Some(QueueKind::RealFifo),
        None => None,
    };
    Ok(())
}

/// Combinations of settings that do not exist in the informer they name: (the key at
/// fault, why, a hint).
fn check_variant(
    config: &VariantConfig,
    raw: &RawVariant,
) -> Result<(), (&'static str, String, Option<&'static str>)> {
    if config.implementation == Implementation::KubeRuntime
        && let Some((field, why)) = fixed_by_kube_runtime(raw)
    {
        return Err((
            field,
            format!("`{field}` cannot be set for implementation = \"kube-runtime\": {why}"),
            Some("use implementation = \"builtin\" to vary it"),
        ));
    }
    if config.queue.is_some() && raw.relist == Some(Relist::Incremental) {
        return Err((
            "relist",
            "`relist = \"incremental\"` cannot be set with a queue: a relist reaches the store \
             through the queue, one key at a time, as Replaced deltas and tombstones"
                .to_owned(),
            Some("leave `relist` out when `queue` or `handlers` is set"),
        ));
    }
    if config.uid_aware && config.queue.is_none() {
        return Err((
            "uid_aware",
            "`uid_aware` decides what handlers receive; set `handlers` (or `queue`)".to_owned(),
            None,
        ));
    }
    if !config.transform_initial_events
        && (config.initial_sync != InitialSync::WatchList || config.relist != Relist::Buffered)
    {
        return Err((
            "transform_initial_events",
            "`transform_initial_events = false` needs initial_sync = \"watch-list\" and \
             relist = \"buffered\": only a watch-list's temporary store skipped the transform"
                .to_owned(),
            None,
        ));
    }
    Ok(())
}

/// The first setting `raw` sets that kube-runtime fixes, with why it is fixed.
fn fixed_by_kube_runtime(raw: &RawVariant) -> Option<(&'static str, &'static str)> {
    let fixed = [
        (
            "store",
            raw.store.is_some_and(|s| s != StoreMode::PerItemCopy),
            "kube-runtime's store holds every object in an `Arc` of its own (per-item-copy)",
        ),
        (
            "list_rules",
            raw.list_rules.is_some_and(|r| r != ListRules::KubeRuntime),
            "kube-runtime lists by its own rules (list_rules = \"kube-runtime\")",
        ),
        (
            "relist",
            raw.relist.is_some_and(|r| r != Relist::Buffered),
            "kube-runtime's reflector buffers a relist and swaps it in (relist = \"buffered\")",
        ),
        (
            "transform_initial_events",
            raw.transform_initial_events == Some(false),
            "kube-runtime's `.modify()` sees every event, initial ones included",
        ),
        (
            "fault",
            raw.fault.is_some(),
            "faults are injected into the built-in informer only",
        ),
        (
            "queue",
            raw.queue.is_some(),
            "kube-runtime's reflector writes its store directly; queues are client-go's",
        ),
        (
            "handlers",
            raw.handlers.is_some(),
            "kube-runtime has no handler registry; its stream has one consumer",
        ),
        (
            "shared",
            raw.shared.is_some(),
            "kube-runtime has no shared informer (its informers are independent)",
        ),
        (
            "uid_aware",
            raw.uid_aware.is_some(),
            "uid_aware changes how client-go's process loop hands updates to handlers",
        ),
        (
            "watch_read_cost",
            raw.watch_read_cost.is_some(),
            "the reading cost is paid in the built-in reflector",
        ),
        (
            "initial_sync",
            raw.initial_sync == Some(InitialSync::WatchRv0),
            "kube-runtime's watcher syncs by LIST or watch-list, never by a bare watch at \
             resourceVersion 0",
        ),
    ];
    fixed
        .into_iter()
        .find(|(_, set, _)| *set)
        .map(|(field, _, why)| (field, why))
}
