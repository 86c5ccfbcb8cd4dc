//! The built-in informer: reflector -> store, driven by a `kube::Client` against the
//! built-in apiserver. The runner starts it in the `list` phase and waits on its
//! [`Status`] to know when it has caught up with the server.
//!
//! Data flows one way: the [`reflector`] turns LIST responses and WATCH events into
//! [`Event`]s, and the [`store`] applies them. Later stages (a DeltaFIFO queue, handlers)
//! sit between the two on the same event type.

pub mod reflector;
pub mod store;

use k8s_openapi::api::core::v1::Pod;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::scenario::VariantConfig;
use reflector::{Reflector, WatchEnd};
use store::Store;

/// What the reflector tells the store, in the order of an informer's life.
#[derive(Debug)]
pub enum Event<K> {
    /// A complete LIST, all pages joined: the store's whole new content. First event of
    /// every (re)list.
    Replace {
        /// Every item of the LIST.
        items: Vec<K>,
    },
    /// ADDED or MODIFIED from the watch: the object's new state.
    Apply(K),
    /// DELETED from the watch: the object's last state.
    Delete(K),
    /// BOOKMARK from the watch: only the resourceVersion moved.
    Bookmark {
        /// The new resourceVersion.
        resource_version: String,
    },
}

/// Where the informer is; published after every event. Holds no heap data, so publishing
/// it costs no allocation in the measured process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Status {
    /// The last resourceVersion the informer has seen (LIST, event or bookmark), as a number
    /// (the built-in apiserver's versions are numbers; 0 until the first LIST).
    pub resource_version: u64,
    /// The first LIST is in the store.
    pub synced: bool,
    /// A watch is open.
    pub watching: bool,
    /// Objects in the store.
    pub objects: usize,
    /// LISTs completed (each joins all its pages).
    pub lists: u64,
    /// The informer stopped on an error.
    pub failed: bool,
}

/// A running informer.
#[derive(Debug)]
pub struct Informer {
    status: watch::Receiver<Status>,
    task: JoinHandle<Result<(), reflector::Error>>,
}

/// Why waiting on the informer failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The reflector stopped on an error.
    #[error("informer stopped")]
    Stopped(#[source] reflector::Error),
    /// The informer's task ended without an error (it was cancelled or panicked).
    #[error("informer task ended unexpectedly")]
    Gone,
}

impl Informer {
    /// Starts an informer on the current runtime.
    pub fn spawn(client: kube::Client, config: &VariantConfig) -> Informer {
        let (tx, status) = watch::channel(Status::default());
        let reflector = Reflector::new(client, config.page_size);
        let store = Store::new(config.store);
        let task = tokio::spawn(run(reflector, store, tx));
        Informer { status, task }
    }

    /// Waits until `ready` holds for the informer's status, and returns that status.
    pub async fn wait_until(&mut self, ready: impl Fn(&Status) -> bool) -> Result<Status, Error> {
        let outcome = self.status.wait_for(|s| s.failed || ready(s)).await;
        match outcome {
            Ok(status) if !status.failed => return Ok(status.clone()),
            _ => {}
        }
        // Failed or gone: the task's result says why.
        match (&mut self.task).await {
            Ok(Err(e)) => Err(Error::Stopped(e)),
            _ => Err(Error::Gone),
        }
    }

    /// Stops the informer.
    pub fn abort(&self) {
        self.task.abort();
    }
}

fn parse_rv(rv: &str) -> u64 {
    rv.parse().unwrap_or(0)
}

/// List, then watch; relist on 410 Expired; watch again when a watch ends.
async fn run(
    reflector: Reflector,
    mut store: Store<Pod>,
    status: watch::Sender<Status>,
) -> Result<(), reflector::Error> {
    let result = list_and_watch(&reflector, &mut store, &status).await;
    if result.is_err() {
        status.send_modify(|s| s.failed = true);
    }
    result
}

async fn list_and_watch(
    reflector: &Reflector,
    store: &mut Store<Pod>,
    status: &watch::Sender<Status>,
) -> Result<(), reflector::Error> {
    loop {
        let (items, mut rv) = reflector.list().await?;
        apply(store, Event::Replace { items });
        status.send_modify(|s| {
            s.resource_version = parse_rv(&rv);
            s.objects = store.len();
            s.synced = true;
            s.lists += 1;
        });
        loop {
            let end = reflector
                .watch(
                    &rv.clone(),
                    || status.send_modify(|s| s.watching = true),
                    |event| {
                        if let Some(new_rv) = event_rv(&event) {
                            // Reuses the buffer: no allocation per event for bookkeeping.
                            rv.clear();
                            rv.push_str(new_rv);
                        }
                        apply(store, event);
                        status.send_modify(|s| {
                            s.resource_version = parse_rv(&rv);
                            s.objects = store.len();
                        });
                    },
                )
                .await?;
            status.send_modify(|s| s.watching = false);
            match end {
                WatchEnd::Closed => continue,
                WatchEnd::Expired => break,
            }
        }
    }
}

/// The resourceVersion an event moves the informer to.
fn event_rv(event: &Event<Pod>) -> Option<&str> {
    match event {
        Event::Replace { .. } => None,
        Event::Apply(obj) | Event::Delete(obj) => obj.metadata.resource_version.as_deref(),
        Event::Bookmark { resource_version } => Some(resource_version),
    }
}

fn apply(store: &mut Store<Pod>, event: Event<Pod>) {
    match event {
        Event::Replace { items } => store.replace(items),
        Event::Apply(obj) => store.apply(obj),
        Event::Delete(obj) => store.delete(&obj),
        Event::Bookmark { .. } => {}
    }
}
