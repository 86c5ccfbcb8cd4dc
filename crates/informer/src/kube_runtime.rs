//! The peer implementation: kube-runtime's `watcher()` + `reflector()`, as a kube-rs
//! controller runs them, on the same client and phases as the built-in informer and held
//! to the same oracle.
//!
//! Settings map onto `watcher::Config`: `page_size` (0 for unpaged), `initial_sync =
//! "watch-list"` as `streaming_lists()`; `transform` runs in `.modify()` before the
//! reflector; `projection = "metadata"` is `Api<PartialObjectMeta<K>>`, which kube turns
//! into metadata-only requests (the successor of `metadata_watcher`). kube-runtime's own
//! rules fix the rest: resourceVersion unset on every LIST, one page handed on at a time,
//! and a relist buffered beside the store and swapped in at `InitDone`.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::{self, store};
use kube::runtime::watcher::{self, watcher};
use tokio::sync::watch;

use super::object::{ApiScope, Object};
use super::{Informer, Status, StoreView, transform};
use k8s::Identity;
use measure::Component;
use scenario::{InitialSync, Scope, VariantConfig};

/// How long the consumer pauses after the watcher reports an error, before polling it
/// again (the watcher itself recovers: a 410 restarts it with a fresh list). A fixed
/// pause on the virtual clock stands in for `default_backoff()`, whose jitter would make
/// runs differ.
const ERROR_PAUSE: Duration = Duration::from_secs(1);

/// kube-runtime's reader half of the store.
struct Reader<K: Object>(reflector::Store<K>);

impl<K: Object> StoreView for Reader<K> {
    fn len(&self) -> usize {
        self.0.state().len()
    }

    fn identities(&self) -> Vec<Identity> {
        self.0
            .state()
            .iter()
            .map(|obj| super::object::identity(&**obj))
            .collect()
    }
}

/// Starts kube-runtime's watcher and reflector for the objects of `K` that `scope`
/// selects.
pub fn spawn<K: Object>(
    client: kube::Client,
    config: &VariantConfig,
    namespace: Option<&str>,
    scope: &Scope,
) -> Informer {
    let api: Api<K> = <K::Scope as ApiScope>::api(client, namespace);
    let selector = |text: String| Some(text).filter(|t| !t.is_empty());
    let mut watcher_config = watcher::Config {
        page_size: (config.page_size > 0).then_some(config.page_size),
        label_selector: selector(scope.label_selector.to_string()),
        field_selector: selector(scope.field_selector.to_string()),
        ..watcher::Config::default()
    };
    if config.initial_sync == InitialSync::WatchList {
        watcher_config = watcher_config.streaming_lists();
    }
    let (reader, writer) = store::<K>();
    let transforms = config.transform.clone();
    let events =
        watcher(api, watcher_config).modify(move |obj: &mut K| transform::apply(&transforms, obj));
    let events = reflector::reflector(writer, events);
    let (tx, status) = watch::channel(Status::default());
    let task = Component::Informer.spawn(async move {
        let mut events = std::pin::pin!(events);
        while let Some(event) = events.next().await {
            match event {
                Ok(watcher::Event::InitDone) => tx.send_modify(|s| {
                    s.synced = true;
                    s.lists += 1;
                }),
                Ok(_) => {}
                Err(_) => tokio::time::sleep(ERROR_PAUSE).await,
            }
        }
        Ok(())
    });
    Informer::single(status, Arc::new(Reader(reader)), task)
}
