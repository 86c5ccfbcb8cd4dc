//! The informers under test, behind one handle the runner drives.
//!
//! Two implementations cache the same objects from the same apiserver:
//! - the built-in informer, modelled on client-go's `tools/cache`: the reflector
//!   (`reflector.rs`) turns LIST responses and WATCH events into [`Event`]s, and the writer
//!   (`writer.rs`) transforms each object and applies it to the store (`store.rs`)
//!   directly or through the queue and its handlers (`queue.rs`, `processor.rs`), a
//!   (re)list gathered in the relist buffer (`relist.rs`);
//! - kube-runtime's `watcher()` + `reflector()` as their users run them (`kube_runtime.rs`).
//!
//! Either is generic over the cached kind (`object.rs`: Pod, ConfigMap, Secret, or
//! their metadata-only forms); [`spawn`] picks the type from the scenario. The runner sees
//! an [`Informer`]: a [`Status`] to wait on and a view of the store for the consistency
//! oracle.

mod event;
mod key;
mod kube_runtime;
mod object;
mod processor;
mod queue;
mod reflector;
mod relist;
mod store;
mod transform;
mod writer;

pub use event::{Event, Status};
pub use reflector::{VERY_SHORT_WATCH, slow_reads};

use std::sync::{Arc, Mutex, PoisonError};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Node, Pod, Secret};
use kube::core::PartialObjectMeta;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use k8s::Identity;
use k8s::typed::{self, Typed, Visit};
use measure::Component;
use object::{Dynamic, Named, Object, Sampled};
use processor::{EventsView, Machinery};
use reflector::{Reflector, Rules, WatchEnd};
use report::EventsReport;
use scenario::{Implementation, ObjectKind, Projection, Scope, VariantConfig};
use store::Store;

/// A read of an informer's store, for the consistency oracle and the object count.
pub trait StoreView: Send + Sync {
    /// Objects in the store.
    fn len(&self) -> usize;

    /// Whether the store is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Key, resourceVersion and UID of every object, in no particular order.
    fn identities(&self) -> Vec<Identity>;
}

impl<K: Object> StoreView for Mutex<Store<K>> {
    fn len(&self) -> usize {
        self.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    fn identities(&self) -> Vec<Identity> {
        let store = self.lock().unwrap_or_else(PoisonError::into_inner);
        store.objects().map(object::identity).collect()
    }
}

/// Why an informer stopped.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The reflector stopped on an error.
    #[error("informer stopped")]
    Stopped(#[source] reflector::Error),
    /// The informer's task ended without an error (it was cancelled or panicked).
    #[error("informer task ended unexpectedly")]
    Gone,
}

/// The informers a variant runs, whichever implementation: one, or several independent
/// ones (`informers = N` not shared), each with its own reflector, watch and store, and
/// each of those one informer per namespace when it watches several.
pub struct Informer {
    /// Held inline: a variant with one informer allocates nothing for the list.
    first: Part,
    /// The rest, a replica's namespaces in a row.
    rest: Vec<Part>,
    /// Informers in one replica: one per namespace watched (at least one).
    per_replica: usize,
}

/// One running informer.
struct Part {
    status: watch::Receiver<Status>,
    store: Arc<dyn StoreView>,
    task: JoinHandle<Result<(), reflector::Error>>,
    /// Its queue and handlers, when it has them.
    events: Option<Arc<dyn EventsView>>,
    /// The process loop and handler tasks.
    helpers: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Informer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Informer")
            .field("status", &self.status())
            .field("informers", &self.count())
            .field("objects", &self.len())
            .finish_non_exhaustive()
    }
}

/// Starts the informers `config` describes for the objects of `kind` that `scope`
/// selects, on the current runtime, across all namespaces or, with `namespaces`, one
/// informer in each (controller-runtime's `DefaultNamespaces`), as many times over as
/// independent informers are asked for.
pub fn spawn(
    client: kube::Client,
    kind: ObjectKind,
    config: &VariantConfig,
    namespaces: &[String],
    scope: &Scope,
) -> Informer {
    let per_replica = namespaces.len().max(1);
    let namespace = |i: usize| namespaces.get(i % per_replica).map(String::as_str);
    let parts = config.informer_processes() as usize * per_replica;
    // The first informer is started last, as it always has been: the order the tasks
    // start in is part of every report's exact figures.
    let rest: Vec<Part> = (1..parts)
        .map(|i| spawn_one(client.clone(), kind, config, namespace(i), scope).first)
        .collect();
    let mut informer = spawn_one(client, kind, config, namespace(0), scope);
    informer.rest = rest;
    informer.per_replica = per_replica;
    informer
}

fn spawn_one(
    client: kube::Client,
    kind: ObjectKind,
    config: &VariantConfig,
    ns: Option<&str>,
    scope: &Scope,
) -> Informer {
    let spawn = Spawn {
        client,
        config,
        at: (kind, ns),
        scope,
    };
    // A typed informer decodes the kind's own struct: one build of the informer for each
    // typed kind. Dynamic and metadata informers decode none, so a sampled kind's (a
    // custom resource's, or a Service's from a sample) share one build, named at run time
    // as client-go's dynamic informer is given its resource; the generator's five keep
    // their types' names.
    match (kind, config.projection) {
        (_, Projection::Full) => typed::visit(kind.api_version(), kind.as_str(), spawn)
            .expect("the scenario refuses a typed informer of a kind with no type"),
        (ObjectKind::Pod, projection) => spawn.projected::<Pod>(projection),
        (ObjectKind::ConfigMap, projection) => spawn.projected::<ConfigMap>(projection),
        (ObjectKind::Secret, projection) => spawn.projected::<Secret>(projection),
        (ObjectKind::Node, projection) => spawn.projected::<Node>(projection),
        (ObjectKind::Deployment, projection) => spawn.projected::<Deployment>(projection),
        (ObjectKind::Sampled(_), projection) => {
            Sampled::name(kind);
            spawn.projected::<Sampled>(projection)
        }
    }
}

/// One informer of a kind, as its projection holds it.
struct Spawn<'a> {
    client: kube::Client,
    config: &'a VariantConfig,
    at: (ObjectKind, Option<&'a str>),
    scope: &'a Scope,
}

impl Spawn<'_> {
    fn typed<K: Object>(self) -> Informer {
        spawn_typed::<K>(self.client, self.config, self.at, self.scope)
    }

    /// A metadata or dynamic informer of `K`'s objects.
    fn projected<K: Named>(self, projection: Projection) -> Informer {
        match projection {
            Projection::Metadata => self.typed::<PartialObjectMeta<K>>(),
            Projection::Dynamic => self.typed::<Dynamic<K>>(),
            Projection::Full => unreachable!("a typed informer is spawned by its type"),
        }
    }
}

/// A typed informer.
impl Visit for Spawn<'_> {
    type Output = Informer;

    fn visit<T: Typed>(self) -> Informer {
        self.typed::<T>()
    }
}

fn spawn_typed<K: Object>(
    client: kube::Client,
    config: &VariantConfig,
    (kind, namespace): (ObjectKind, Option<&str>),
    scope: &Scope,
) -> Informer {
    match config.implementation {
        Implementation::Builtin => spawn_builtin::<K>(client, config, (kind, namespace), scope),
        Implementation::KubeRuntime => kube_runtime::spawn::<K>(client, config, namespace, scope),
        Implementation::External => {
            unreachable!("an external variant's informer is its own program (runner::external)")
        }
    }
}

impl Informer {
    /// One informer without queue or handlers.
    fn single(
        status: watch::Receiver<Status>,
        store: Arc<dyn StoreView>,
        task: JoinHandle<Result<(), reflector::Error>>,
    ) -> Informer {
        Informer {
            first: Part {
                status,
                store,
                task,
                events: None,
                helpers: Vec::new(),
            },
            rest: Vec::new(),
            per_replica: 1,
        }
    }

    fn parts(&self) -> impl Iterator<Item = &Part> {
        std::iter::once(&self.first).chain(&self.rest)
    }

    /// The first replica's informers: one per namespace, together the store a controller
    /// reads.
    fn first_replica(&self) -> impl Iterator<Item = &Part> {
        self.parts().take(self.per_replica)
    }

    /// How many informers run (each with its own watch).
    pub fn count(&self) -> usize {
        1 + self.rest.len()
    }

    /// The informers' status now: synced when all are, failed when any is.
    pub fn status(&self) -> Status {
        // Read on every caught-up tick, inside the measured window: allocates nothing.
        let all = || self.parts().map(|p| *p.status.borrow());
        Status {
            synced: all().all(|s| s.synced),
            lists: all().map(|s| s.lists).min().unwrap_or(0),
            failed: all().any(|s| s.failed),
        }
    }

    /// Objects in the (first replica's) stores now.
    pub fn len(&self) -> usize {
        self.first_replica().map(|p| p.store.len()).sum()
    }

    /// Whether the (first replica's) stores are empty now.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Key, resourceVersion and UID of every object in the (first replica's) stores now.
    pub fn identities(&self) -> Vec<Identity> {
        match self.per_replica {
            1 => self.first.store.identities(),
            _ => self
                .first_replica()
                .flat_map(|p| p.store.identities())
                .collect(),
        }
    }

    /// The identities of every replica's stores, each replica's namespaces together.
    pub fn identities_each(&self) -> Vec<Vec<Identity>> {
        if self.per_replica == 1 {
            return self.parts().map(|p| p.store.identities()).collect();
        }
        let replica = |start| self.parts().skip(start).take(self.per_replica);
        (0..self.count())
            .step_by(self.per_replica)
            .map(|start| replica(start).flat_map(|p| p.store.identities()).collect())
            .collect()
    }

    /// Nothing waits in any queue or handler buffer, and no handler is busy.
    pub fn quiet(&self) -> bool {
        self.events().all(|e| e.quiet())
    }

    /// Notifications handled so far by every handler.
    pub fn handled(&self) -> u64 {
        self.events().map(|e| e.handled()).sum()
    }

    /// Fires every informer's resync timer.
    pub fn resync(&self) {
        self.events().for_each(|e| e.resync());
    }

    /// Starts a phase's event figures.
    pub fn begin_phase(&self) {
        self.events().for_each(|e| e.begin_phase());
    }

    /// The phase's event figures; `None` when no informer has a queue.
    pub fn events_report(&self) -> Option<EventsReport> {
        let informers: Vec<_> = self.events().map(|e| e.report()).collect();
        (!informers.is_empty()).then(|| EventsReport::of(informers))
    }

    fn events(&self) -> impl Iterator<Item = &Arc<dyn EventsView>> {
        self.parts().filter_map(|p| p.events.as_ref())
    }

    /// Why an informer stopped; call once [`Status::failed`] is set.
    pub async fn failure(&mut self) -> Error {
        let part = std::iter::once(&mut self.first)
            .chain(&mut self.rest)
            .find(|p| p.status.borrow().failed);
        let Some(part) = part else {
            return Error::Gone;
        };
        match (&mut part.task).await {
            Ok(Err(e)) => Error::Stopped(e),
            _ => Error::Gone,
        }
    }

    /// Stops the informers.
    pub fn abort(&self) {
        for part in self.parts() {
            part.task.abort();
            part.helpers.iter().for_each(JoinHandle::abort);
        }
    }
}

/// Starts the built-in informer.
fn spawn_builtin<K: Object>(
    client: kube::Client,
    config: &VariantConfig,
    (kind, namespace): (ObjectKind, Option<&str>),
    scope: &Scope,
) -> Informer {
    let (tx, status) = watch::channel(Status::default());
    let store = Arc::new(Mutex::new(Store::<K>::new(config.store, config.relist)));
    let reflector = Reflector::new(
        client,
        Rules {
            list_rules: config.list_rules,
            initial_sync: config.initial_sync,
            page_size: config.page_size,
            read_cost_ms: config.watch_read_cost_ms,
        },
        (kind, namespace),
        scope,
    );
    let Some(kind) = config.queue else {
        let task =
            Component::Informer.spawn(run(reflector, Arc::clone(&store), config.clone(), tx));
        return Informer::single(status, store, task);
    };
    let machinery = Machinery::new(
        config,
        kind,
        config.handlers_per_informer(),
        Arc::clone(&store),
        tx.clone(),
    );
    let helpers = machinery.start();
    let task = Component::Informer.spawn(run_queued(reflector, Arc::clone(&machinery), tx));
    Informer {
        first: Part {
            status,
            store,
            task,
            events: Some(machinery),
            helpers,
        },
        rest: Vec::new(),
        per_replica: 1,
    }
}

/// The reflector's loop: sync, then watch; sync again on 410 Expired; watch again when a
/// watch ends. Written once for both sinks, as a macro rather than a function so that the
/// direct path's task future keeps its size: its allocation is part of every variant's
/// exact figures.
macro_rules! list_and_watch {
    ($reflector:expr, $sink:expr) => {
        async {
            loop {
                let mut resumed = $reflector.sync($sink).await?;
                loop {
                    let end = match resumed.take() {
                        Some(stream) => $reflector.resume(stream, $sink).await?,
                        None => $reflector.watch($sink).await?,
                    };
                    if end == WatchEnd::Expired {
                        break;
                    }
                }
            }
        }
    };
}

/// The informer without a queue: the reflector writes the store. The task owns the
/// variant's settings and event application reads only its [`writer::Rules`] of them.
/// Owning just those rules would make the task 128 bytes smaller, which every variant
/// without a queue would show in its exact `alloc_bytes` (measured); the committed
/// reports were made with the whole settings.
async fn run<K: Object>(
    mut reflector: Reflector<K>,
    store: Arc<Mutex<Store<K>>>,
    config: VariantConfig,
    status: watch::Sender<Status>,
) -> Result<(), reflector::Error> {
    let mut sink = |event: Event<K>| handle(&store, &config, &status, event);
    let result = list_and_watch!(reflector, &mut sink).await;
    status.send_modify(|s| s.failed = true);
    result
}

/// The informer with a queue: the reflector feeds the machinery.
async fn run_queued<K: Object>(
    mut reflector: Reflector<K>,
    machinery: Arc<Machinery<K>>,
    status: watch::Sender<Status>,
) -> Result<(), reflector::Error> {
    let mut sink = |event: Event<K>| machinery.handle(event);
    let result = list_and_watch!(reflector, &mut sink).await;
    status.send_modify(|s| s.failed = true);
    result
}

/// Applies one event to the store (through the writer: transform first, once per object).
fn handle<K: Object>(
    store: &Mutex<Store<K>>,
    config: &VariantConfig,
    status: &watch::Sender<Status>,
    event: Event<K>,
) {
    let mut store = store.lock().unwrap_or_else(PoisonError::into_inner);
    if writer::apply(writer::Rules::of(config), &mut *store, event) {
        status.send_modify(|s| {
            s.synced = true;
            s.lists += 1;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apiserver::{ApiServer, transport};
    use scenario::{Implementation, InitialSync, ObjectSpec};

    /// Waits on the paused clock until the informer has synced and a watch has been sent
    /// everything, as the runner does.
    async fn caught_up(server: &ApiServer, informer: &Informer) {
        let target = server.resource_version();
        for _ in 0..10_000 {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            if informer.status().synced && server.watch_position().is_some_and(|p| p >= target) {
                return;
            }
        }
        panic!("the informer did not catch up");
    }

    fn store_matches_server(server: &ApiServer, informer: &Informer) -> bool {
        store_matches(server.truth(), informer)
    }

    /// Whether the informer's store holds exactly `truth`.
    fn store_matches(truth: Vec<k8s::TruthEntry>, informer: &Informer) -> bool {
        let mut truth: Vec<(String, String, String)> = truth
            .into_iter()
            .map(|t| (t.key, t.resource_version.to_string(), t.uid))
            .collect();
        let mut store: Vec<(String, String, String)> = informer
            .identities()
            .into_iter()
            .map(|i| (i.key, i.resource_version, i.uid))
            .collect();
        truth.sort();
        store.sort();
        truth == store
    }

    #[tokio::test(start_paused = true)]
    async fn a_watch_list_cut_short_starts_over_and_ends_with_the_servers_state() {
        for implementation in [Implementation::Builtin, Implementation::KubeRuntime] {
            let server = ApiServer::new(ObjectSpec::pods(1000));
            // Every object's version lies inside the history, so a watch resumed from
            // any of them would be answered, not expired: only a fresh sync is right.
            server.update(scenario::Amount::Fraction(1.0), &Default::default(), 1);
            let client = transport::client(&server);
            let mut config = VariantConfig::defaults(implementation);
            config.initial_sync = InitialSync::WatchList;
            let informer = spawn(client, ObjectKind::Pod, &config, &[], &Scope::default());
            // Let some initial events through, then end every watch mid-stream.
            for _ in 0..10 {
                tokio::task::yield_now().await;
            }
            assert!(!informer.status().synced, "{implementation:?}");
            server.disconnect_watchers();
            server.delete(scenario::Amount::Count(10), &Default::default(), 7);
            caught_up(&server, &informer).await;
            assert_eq!(informer.len(), 990, "{implementation:?}");
            assert!(
                store_matches_server(&server, &informer),
                "{implementation:?}"
            );
            assert!(server.requests().watch >= 2, "{implementation:?}");
            informer.abort();
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_graceful_delete_is_three_updates_then_the_delete_unless_the_pod_leaves_the_selection()
     {
        let running = Scope {
            field_selector: k8s::FieldSelector::parse("status.phase=Running").unwrap(),
            ..Scope::default()
        };
        // Every pod: the controller's DELETE, the kubelet's status, its DELETE, then
        // DELETED; an informer of running pods sees it leave at the kubelet's status.
        for (scope, events) in [(Scope::default(), 40), (running, 20)] {
            for implementation in [Implementation::Builtin, Implementation::KubeRuntime] {
                let server = ApiServer::new(ObjectSpec::pods(100));
                let config = VariantConfig::defaults(implementation);
                let client = transport::client(&server);
                let informer = spawn(client, ObjectKind::Pod, &config, &[], &scope);
                caught_up(&server, &informer).await;
                let amount = scenario::Amount::Count(10);
                assert_eq!(server.delete_gracefully(amount, &Default::default(), 5), 10);
                caught_up(&server, &informer).await;
                let at = format!("{implementation:?} {scope:?}");
                assert_eq!(informer.len(), 90, "{at}");
                assert_eq!(server.requests().watch_events, events, "{at}");
                assert!(store_matches(server.truth_of(&scope), &informer), "{at}");
                informer.abort();
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn client_go_lists_again_after_a_very_short_watch_and_watches_again_after_a_long_one() {
        use scenario::{Amount, ListRules};
        // (list rules, how long the watch lives before it is cut, LISTs and WATCHes after)
        let cases = [
            (ListRules::ClientGo, 0, 2, 2),
            (ListRules::ClientGo, 2, 1, 2),
            (ListRules::KubeRuntime, 0, 1, 2),
        ];
        for (list_rules, lives_s, lists, watches) in cases {
            let server = ApiServer::new(ObjectSpec::pods(50));
            let client = transport::client(&server);
            let mut config = VariantConfig::defaults(Implementation::Builtin);
            config.list_rules = list_rules;
            let informer = spawn(client, ObjectKind::Pod, &config, &[], &Scope::default());
            caught_up(&server, &informer).await;
            tokio::time::sleep(std::time::Duration::from_secs(lives_s)).await;
            // The watch ends cleanly with no event on it, and a pod changes meanwhile.
            server.disconnect_watchers();
            server.update(Amount::Count(1), &Default::default(), 5);
            caught_up(&server, &informer).await;
            let at = format!("{list_rules:?}, cut after {lives_s} s");
            assert!(store_matches_server(&server, &informer), "{at}");
            let requests = server.requests();
            assert_eq!((requests.list, requests.watch), (lists, watches), "{at}");
            assert_eq!(requests.expired, 0, "{at}");
            informer.abort();
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_selective_informer_holds_what_it_selects_and_catches_up_past_what_it_skips() {
        for implementation in [Implementation::Builtin, Implementation::KubeRuntime] {
            let server = ApiServer::new(ObjectSpec::pods(300));
            let client = transport::client(&server);
            let config = VariantConfig::defaults(implementation);
            let node = "ip-10-0-0-10.eu-west-1.compute.internal";
            let scope = Scope {
                field_selector: k8s::FieldSelector::parse(&format!("spec.nodeName={node}"))
                    .unwrap(),
                ..Scope::default()
            };
            let informer = spawn(client, ObjectKind::Pod, &config, &[], &scope);
            caught_up(&server, &informer).await;
            // Pods 0, 97, 194 and 291 run on the first of 97 nodes.
            assert_eq!(informer.len(), 4, "{implementation:?}");
            let started = tokio::time::Instant::now();
            server.update(scenario::Amount::Fraction(1.0), &Default::default(), 3);
            caught_up(&server, &informer).await;
            // Caught up as soon as the four updates are read, not at the next bookmark.
            assert!(
                started.elapsed() < std::time::Duration::from_secs(1),
                "{implementation:?}"
            );
            assert_eq!(server.requests().watch_events, 4, "{implementation:?}");
            let truth = server.truth_of(&scope);
            assert_eq!(truth.len(), 4, "{implementation:?}");
            assert!(store_matches(truth, &informer), "{implementation:?}");
            informer.abort();
        }
    }

    #[tokio::test(start_paused = true)]
    async fn an_informer_whose_first_list_holds_nothing_syncs_with_its_handlers_at_once() {
        use scenario::QueueKind;
        let nothing = Scope {
            label_selector: k8s::LabelSelector::parse("app=nothing").unwrap(),
            ..Scope::default()
        };
        for queue in [QueueKind::DeltaFifo, QueueKind::RealFifo] {
            for handlers in [0, 2] {
                let server = ApiServer::new(ObjectSpec::pods(30));
                let mut config = VariantConfig::defaults(Implementation::Builtin);
                config.queue = Some(queue);
                config.handlers = handlers;
                let client = transport::client(&server);
                let informer = spawn(client, ObjectKind::Pod, &config, &[], &nothing);
                caught_up(&server, &informer).await;
                let at = format!("{queue:?}, {handlers} handlers");
                assert_eq!(informer.len(), 0, "{at}");
                let events = &informer.events_report().unwrap().informers[0];
                assert_eq!(events.synced_at_ms, Some(0), "{at}");
                let synced: Vec<_> = events.handlers.iter().map(|h| h.synced_at_ms).collect();
                assert_eq!(synced, vec![Some(0); handlers as usize], "{at}");
                informer.abort();
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn every_list_rule_and_relist_strategy_follows_the_server() {
        use scenario::{ListRules, Relist, StoreMode};
        for list_rules in [ListRules::ClientGo, ListRules::KubeRuntime] {
            for relist in [Relist::Buffered, Relist::Incremental] {
                for store in [StoreMode::SharedArray, StoreMode::PerItemCopy] {
                    let server = ApiServer::new(ObjectSpec::pods(120));
                    let client = transport::client(&server);
                    let mut config = VariantConfig::defaults(Implementation::Builtin);
                    config.list_rules = list_rules;
                    config.relist = relist;
                    config.store = store;
                    config.page_size = 25;
                    let informer = spawn(client, ObjectKind::Pod, &config, &[], &Scope::default());
                    caught_up(&server, &informer).await;
                    let at = format!("{list_rules:?} {relist:?} {store:?}");
                    assert!(store_matches_server(&server, &informer), "{at}");
                    // Deletions while the watch is down, then a forced relist.
                    server.disconnect_watchers();
                    server.delete(scenario::Amount::Count(40), &Default::default(), 3);
                    server.compact();
                    caught_up(&server, &informer).await;
                    assert_eq!(informer.len(), 80, "{at}");
                    assert!(store_matches_server(&server, &informer), "{at}");
                    assert_eq!(informer.status().lists, 2, "{at}");
                    informer.abort();
                }
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_resync_timer_fires_a_period_after_each_list_and_after_each_resync() {
        use std::time::Duration;
        use tokio::time::{Instant, sleep_until};
        let server = ApiServer::new(ObjectSpec::pods(50));
        let mut config = VariantConfig::defaults(Implementation::Builtin);
        config.queue = Some(scenario::QueueKind::RealFifo);
        config.handlers = 2;
        config.resync_period_ms = 30_000;
        let client = transport::client(&server);
        let informer = spawn(client, ObjectKind::Pod, &config, &[], &Scope::default());
        caught_up(&server, &informer).await;
        let listed = Instant::now();
        let at = |s: u64| sleep_until(listed + Duration::from_secs(s));
        // Resync notifications since the last look, every handler together.
        let resyncs = || {
            let sync = informer.events_report().unwrap().delivered.sync;
            informer.begin_phase();
            sync
        };
        resyncs();
        at(29).await;
        assert_eq!(resyncs(), 0, "before the period");
        at(31).await;
        assert_eq!(resyncs(), 100, "50 pods, two handlers");
        // The next one is a period after that one, unless a relist starts the timer over.
        at(45).await;
        server.disconnect_watchers();
        server.delete(scenario::Amount::Count(1), &Default::default(), 3);
        server.compact();
        caught_up(&server, &informer).await;
        assert_eq!(informer.status().lists, 2);
        resyncs();
        at(62).await;
        assert_eq!(resyncs(), 0, "the relist at 45 s moved the timer to 75 s");
        at(76).await;
        assert_eq!(resyncs(), 98);
        informer.abort();
    }

    #[tokio::test(start_paused = true)]
    async fn dynamic_informers_follow_the_server_as_typed_ones_do() {
        for implementation in [Implementation::Builtin, Implementation::KubeRuntime] {
            for kind in ObjectKind::ALL {
                let mut spec = ObjectSpec::pods(60);
                spec.kind = kind;
                let server = ApiServer::new(spec);
                let mut config = VariantConfig::defaults(implementation);
                config.projection = Projection::Dynamic;
                let informer = spawn(
                    transport::client(&server),
                    kind,
                    &config,
                    &[],
                    &Scope::default(),
                );
                caught_up(&server, &informer).await;
                server.update(scenario::Amount::Count(10), &Default::default(), 2);
                server.delete(scenario::Amount::Count(5), &Default::default(), 3);
                caught_up(&server, &informer).await;
                let at = format!("{implementation:?} {kind:?}");
                assert_eq!(informer.len(), 55, "{at}");
                assert!(store_matches_server(&server, &informer), "{at}");
                informer.abort();
            }
        }
    }
}

// Unit tests measure with the same allocator the binary installs.
#[cfg(test)]
#[global_allocator]
static TEST_ALLOCATOR: measure::CountingJemalloc = measure::CountingJemalloc;
