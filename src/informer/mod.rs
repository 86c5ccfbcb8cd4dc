//! The informers under test, behind one handle the runner drives.
//!
//! Two implementations cache the same objects from the same apiserver:
//! - the built-in informer, modelled on client-go's `tools/cache`: the [`reflector`] turns
//!   LIST responses and WATCH events into [`Event`]s, a [`transform`] trims each object,
//!   and the [`store`] applies them;
//! - [`kube_runtime`], kube-runtime's `watcher()` + `reflector()` as their users run them.
//!
//! Either is generic over the cached kind ([`object::Object`]: Pod, ConfigMap, Secret, or
//! their metadata-only forms); [`spawn`] picks the type from the scenario. The runner sees
//! an [`Informer`]: a [`Status`] to wait on and a view of the store for the consistency
//! oracle.

pub mod kube_runtime;
pub mod object;
pub mod reflector;
pub mod store;
pub mod transform;

use std::sync::{Arc, Mutex, PoisonError};

use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use kube::core::PartialObjectMeta;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::measure::Component;
use crate::scenario::{Fault, Implementation, ObjectKind, Projection, VariantConfig};
use object::{Identity, Object};
use reflector::{Reflector, Rules, WatchEnd};
use store::Store;

/// What the reflector tells the store, in the order of an informer's life (kube-runtime's
/// `watcher::Event` words).
#[derive(Debug)]
pub enum Event<K> {
    /// A (re)list starts: the state that follows replaces the store's content.
    Init,
    /// Items of a LIST: one page (kube-runtime) or every page joined (client-go's pager).
    InitPage(Vec<K>),
    /// An initial ADDED event of a watch-list.
    InitApply(K),
    /// A DELETED event before a watch-list's initial events are complete.
    InitDelete(K),
    /// The state is complete: the store now holds exactly what the server had.
    InitDone,
    /// ADDED or MODIFIED from the watch: the object's new state.
    Apply(K),
    /// DELETED from the watch: the object's last state.
    Delete(K),
}

/// Where an informer is; published after every (re)list. Holds no heap data, so publishing
/// it costs no allocation in the measured process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Status {
    /// The first (re)list is complete.
    pub synced: bool,
    /// (Re)lists completed.
    pub lists: u64,
    /// The informer stopped on an error.
    pub failed: bool,
}

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
        store.objects().map(Identity::of).collect()
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

/// A running informer, whichever implementation.
pub struct Informer {
    status: watch::Receiver<Status>,
    store: Arc<dyn StoreView>,
    task: JoinHandle<Result<(), reflector::Error>>,
}

impl std::fmt::Debug for Informer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Informer")
            .field("status", &*self.status.borrow())
            .field("objects", &self.store.len())
            .finish_non_exhaustive()
    }
}

/// Starts the informer `config` describes for objects of `kind`, on the current runtime.
pub fn spawn(client: kube::Client, kind: ObjectKind, config: &VariantConfig) -> Informer {
    match (kind, config.projection) {
        (ObjectKind::Pod, Projection::Full) => spawn_typed::<Pod>(client, config),
        (ObjectKind::ConfigMap, Projection::Full) => spawn_typed::<ConfigMap>(client, config),
        (ObjectKind::Secret, Projection::Full) => spawn_typed::<Secret>(client, config),
        (ObjectKind::Pod, Projection::Metadata) => {
            spawn_typed::<PartialObjectMeta<Pod>>(client, config)
        }
        (ObjectKind::ConfigMap, Projection::Metadata) => {
            spawn_typed::<PartialObjectMeta<ConfigMap>>(client, config)
        }
        (ObjectKind::Secret, Projection::Metadata) => {
            spawn_typed::<PartialObjectMeta<Secret>>(client, config)
        }
    }
}

fn spawn_typed<K: Object>(client: kube::Client, config: &VariantConfig) -> Informer {
    match config.implementation {
        Implementation::Builtin => spawn_builtin::<K>(client, config),
        Implementation::KubeRuntime => kube_runtime::spawn::<K>(client, config),
    }
}

impl Informer {
    /// The informer's status now.
    pub fn status(&self) -> Status {
        *self.status.borrow()
    }

    /// Objects in the store now.
    pub fn len(&self) -> usize {
        self.store.len()
    }

    /// Whether the store is empty now.
    pub fn is_empty(&self) -> bool {
        self.store.is_empty()
    }

    /// Key, resourceVersion and UID of every object in the store now.
    pub fn identities(&self) -> Vec<Identity> {
        self.store.identities()
    }

    /// Why the informer stopped; call once [`Status::failed`] is set.
    pub async fn failure(&mut self) -> Error {
        match (&mut self.task).await {
            Ok(Err(e)) => Error::Stopped(e),
            _ => Error::Gone,
        }
    }

    /// Stops the informer.
    pub fn abort(&self) {
        self.task.abort();
    }
}

/// Starts the built-in informer.
fn spawn_builtin<K: Object>(client: kube::Client, config: &VariantConfig) -> Informer {
    let (tx, status) = watch::channel(Status::default());
    let store = Arc::new(Mutex::new(Store::<K>::new(config.store, config.relist)));
    let reflector = Reflector::new(
        client,
        Rules {
            list_rules: config.list_rules,
            initial_sync: config.initial_sync,
            page_size: config.page_size,
        },
    );
    let task = Component::Informer.spawn(run(reflector, Arc::clone(&store), config.clone(), tx));
    Informer {
        status,
        store,
        task,
    }
}

/// Sync, then watch; sync again on 410 Expired; watch again when a watch ends.
async fn run<K: Object>(
    mut reflector: Reflector<K>,
    store: Arc<Mutex<Store<K>>>,
    config: VariantConfig,
    status: watch::Sender<Status>,
) -> Result<(), reflector::Error> {
    let mut sink = |event: Event<K>| handle(&store, &config, &status, event);
    let result = async {
        loop {
            let mut resumed = reflector.sync(&mut sink).await?;
            loop {
                let end = match resumed.take() {
                    Some(stream) => reflector.resume(stream, &mut sink).await?,
                    None => reflector.watch(&mut sink).await?,
                };
                if end == WatchEnd::Expired {
                    break;
                }
            }
        }
    }
    .await;
    status.send_modify(|s| s.failed = true);
    result
}

/// Applies one event to the store: transform first (once per object), then the store.
fn handle<K: Object>(
    store: &Mutex<Store<K>>,
    config: &VariantConfig,
    status: &watch::Sender<Status>,
    event: Event<K>,
) {
    let transforms = &config.transform[..];
    let trim = |mut obj: K| {
        transform::apply(transforms, &mut obj);
        obj
    };
    let mut store = store.lock().unwrap_or_else(PoisonError::into_inner);
    match event {
        Event::Init => store.init(),
        Event::InitPage(mut items) => {
            for item in &mut items {
                transform::apply(transforms, item);
            }
            store.init_page(items);
        }
        Event::InitApply(obj) if config.transform_initial_events => store.init_apply(trim(obj)),
        // client-go#1415: the watch-list's temporary store skipped the transform; the
        // objects were transformed only when they were replaced into the informer.
        Event::InitApply(obj) => store.init_apply(obj),
        Event::InitDelete(obj) => store.init_delete(&obj),
        Event::InitDone => {
            if config.transform_initial_events {
                store.init_done(|_| {});
            } else {
                store.init_done(|obj| transform::apply(transforms, obj));
            }
            status.send_modify(|s| {
                s.synced = true;
                s.lists += 1;
            });
        }
        Event::Apply(obj) => store.apply(trim(obj)),
        Event::Delete(_) if config.fault == Some(Fault::IgnoreDeletes) => {}
        Event::Delete(obj) => store.delete(&obj),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::{ApiServer, transport};
    use crate::scenario::{Implementation, InitialSync, ObjectSpec};

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
        let mut truth: Vec<(String, String, String)> = server
            .truth()
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
            server.update(
                crate::scenario::Amount::Fraction(1.0),
                &Default::default(),
                1,
            );
            let client = transport::client(&server);
            let mut config = VariantConfig::defaults(implementation);
            config.initial_sync = InitialSync::WatchList;
            let informer = spawn(client, ObjectKind::Pod, &config);
            // Let some initial events through, then end every watch mid-stream.
            for _ in 0..10 {
                tokio::task::yield_now().await;
            }
            assert!(!informer.status().synced, "{implementation:?}");
            server.disconnect_watchers();
            server.delete(crate::scenario::Amount::Count(10), &Default::default(), 7);
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
    async fn every_list_rule_and_relist_strategy_follows_the_server() {
        use crate::scenario::{ListRules, Relist, StoreMode};
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
                    let informer = spawn(client, ObjectKind::Pod, &config);
                    caught_up(&server, &informer).await;
                    let at = format!("{list_rules:?} {relist:?} {store:?}");
                    assert!(store_matches_server(&server, &informer), "{at}");
                    // Deletions while the watch is down, then a forced relist.
                    server.disconnect_watchers();
                    server.delete(crate::scenario::Amount::Count(40), &Default::default(), 3);
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
}
