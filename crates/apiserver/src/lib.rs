//! The built-in kube-apiserver: generator-backed objects served with kube-apiserver's
//! LIST and WATCH semantics. Feeds the informer; the runner's phases mutate it.
//!
//! Two parts. The core, what `run` measures, builds without features:
//! - `state.rs`: the compact object table, resourceVersions and event history (the truth);
//! - `generate/`: object bodies built on demand from (seed, index, generation);
//! - `version.rs`: what is served of an object;
//! - `collections.rs`, `query.rs`, `list.rs`, `watch.rs`, `status.rs`, `form.rs`: LIST and
//!   WATCH of the scenario's kind, ListOptions and continue tokens, streamed bodies,
//!   Status errors;
//! - `protobuf/`: Kubernetes' protobuf wire, written from the JSON kept here;
//! - [`transport`]: a `kube::Client` talking to the core's routes through in-memory pipes.
//!
//! The network server, the `server` feature (the binary's): `routes.rs` (every path
//! `serve` answers), `write/`, `patch.rs` and `apply/` (POST, PUT, PATCH, DELETE,
//! server-side apply), `records/`, `namespaces.rs`, `discovery.rs`, `table.rs` and
//! `printers/` (kubectl's tables), protobuf bodies read, the probes, evictions, connect,
//! WebSocket; `serve()` on a TCP port, `serve_loopback()` for a run's external variants.
//! The in-memory transport never routes to it, so it moves no figure of `run`.

#[cfg(feature = "server")]
mod apply;
mod collections;
#[cfg(feature = "server")]
mod connect;
#[cfg(feature = "server")]
mod discovery;
mod dispatch;
#[cfg(feature = "server")]
mod empty;
mod encodings;
#[cfg(feature = "server")]
mod eviction;
mod extract;
mod form;
pub mod generate;
mod group;
#[cfg(feature = "server")]
mod health;
mod list;
#[cfg(feature = "server")]
mod loopback;
#[cfg(feature = "server")]
mod namespaces;
#[cfg(feature = "server")]
mod patch;
#[cfg(feature = "server")]
mod paths;
#[cfg(feature = "server")]
mod printers;
pub mod protobuf;
mod query;
#[cfg(feature = "server")]
mod records;
#[cfg(feature = "server")]
mod reviews;
#[cfg(feature = "server")]
mod routes;
#[cfg(feature = "server")]
mod serve;
mod signal;
mod state;
mod status;
#[cfg(feature = "server")]
mod table;
pub mod transport;
mod version;
mod watch;
#[cfg(feature = "server")]
mod websocket;

#[cfg(feature = "server")]
pub use extract::MAX_REQUEST_BODY_BYTES;
#[cfg(feature = "server")]
pub use loopback::{Endpoint, Gate, RefusedResource, Secret, serve_gated, serve_loopback};
#[cfg(feature = "server")]
pub use routes::network_router;

/// The namespace of the first object of `spec`: a kubeconfig's default namespace.
pub fn namespace_of(spec: &ObjectSpec) -> String {
    generate::namespace(spec, 0)
}
#[cfg(feature = "server")]
pub use serve::{
    SHARED_ENCODING_BYTES, ServeConfig, serve, write_kubeconfig, write_private_kubeconfig,
};
#[cfg(feature = "server")]
mod write;

use measure::FixedState;
#[cfg(feature = "server")]
use std::collections::BTreeMap;
use std::collections::HashMap;
#[cfg(feature = "server")]
use std::sync::atomic::AtomicU64;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use generate::{Generator, ObjectId};
use k8s::{LabelSelector, TruthEntry, store_key};
use measure::Component;
use report::RequestCounts;
use scenario::{Amount, ObjectSpec, Scope};
use state::State;
use version::{NamespacedName, Version, Written};

/// The namespaces kube-apiserver makes when it starts (its system namespaces
/// controller): where programs take their Leases (`kube-system`) and write their Events
/// when their objects live elsewhere.
#[cfg(feature = "server")]
const SYSTEM_NAMESPACES: [&str; 4] = ["default", "kube-node-lease", "kube-public", "kube-system"];

/// A handle to the server; clones share it.
#[derive(Debug, Clone)]
pub struct ApiServer {
    shared: Arc<Shared>,
}

/// What a DELETE (or the update that empties a deleted object's finalizers) does to the
/// live object: kube-apiserver's graceful deletion and finalizers.
#[derive(Debug)]
pub enum Removal {
    /// Nothing: its deletion is already under way, or the body would not change.
    Keep,
    /// Stores this body (its deletionTimestamp set): the object stays, for its finalizers
    /// or its grace period.
    Store(serde_json::Value),
    /// Stores this body, then deletes it (a Pod deleted with no grace period: an update
    /// event, then a delete).
    StoreThenDelete(serde_json::Value),
    /// Deletes it as it is.
    Delete,
}

/// What [`ApiServer::delete_named`] did.
#[derive(Debug)]
pub struct Removed {
    /// The object after: its last state, with the deletion's resourceVersion, when gone.
    pub version: Version,
    /// Whether it no longer exists.
    pub gone: bool,
}

#[derive(Debug)]
struct Shared {
    generator: Arc<Generator>,
    /// Namespace name -> ordinal (objects are spread round robin over the ordinals).
    namespaces: HashMap<String, u32, FixedState>,
    state: Mutex<State>,
    /// The newest resourceVersion, for watches waiting for events.
    head: signal::Signal,
    /// Bumped to end every open watch (as an apiserver restart or a load balancer would).
    disconnects: signal::Signal,
    requests: Mutex<RequestCounts>,
    dispatcher: dispatch::Dispatcher,
    /// Names drawn for `generateName` so far.
    #[cfg(feature = "server")]
    generated_names: AtomicU64,
    /// Encoded watch events shared by watchers; `None` (each encodes its own) unless
    /// [`ApiServer::share_encodings`] was called.
    encodings: Mutex<Option<encodings::SharedEncodings>>,
    /// Records a LIST or a watch's initial scan looks at before it yields; `u32::MAX` (one
    /// go) unless [`ApiServer::yield_during_scans`] was called.
    scan_chunk: AtomicU32,
    /// Whether the deletions a DELETE leaves pending are finished as a cluster's kubelet
    /// and garbage collector finish them; on unless [`ApiServer::stand_alone`] was called.
    finishes_deletions: AtomicBool,
    /// The namespaces as clients left them (over TCP), by name: those they created
    /// ([`namespaces::create`]), and the server's own they changed
    /// ([`namespaces::replace`], [`namespaces::patch`]).
    #[cfg(feature = "server")]
    written_namespaces: Mutex<BTreeMap<String, serde_json::Value>>,
}

impl ApiServer {
    /// A server holding `spec.count` objects.
    pub fn new(spec: ObjectSpec) -> ApiServer {
        let count =
            u32::try_from(spec.count).expect("scenario validation caps the count below u32::MAX");
        let generator = Arc::new(Generator::new(spec));
        let keys = Arc::clone(&generator);
        let state = State::new(
            count,
            Box::new(move |index| NamespacedName {
                namespace: generate::namespace(keys.spec(), index),
                name: generate::name(keys.spec(), index),
            }),
        );
        let spec = generator.spec();
        // Cluster-scoped objects live in no namespace.
        let namespaces = (0..spec.namespaces)
            .filter(|_| spec.namespaced())
            .map(|i| (generate::namespace(spec, i), i))
            .collect();
        let head = signal::Signal::new(state.resource_version());
        let disconnects = signal::Signal::new(0);
        ApiServer {
            shared: Arc::new(Shared {
                generator,
                namespaces,
                state: Mutex::new(state),
                head,
                disconnects,
                requests: Mutex::new(RequestCounts::default()),
                dispatcher: dispatch::Dispatcher::default(),
                #[cfg(feature = "server")]
                generated_names: AtomicU64::new(0),
                encodings: Mutex::new(None),
                scan_chunk: AtomicU32::new(u32::MAX),
                finishes_deletions: AtomicBool::new(true),
                #[cfg(feature = "server")]
                written_namespaces: Mutex::new(BTreeMap::new()),
            }),
        }
    }

    /// Serves as kube-apiserver alone does, with no cluster around it: no kubelet ends a
    /// Pod's graceful deletion, no garbage collector removes the `orphan` and
    /// `foregroundDeletion` finalizers (crosscheck's real server has neither). Without
    /// this, the server finishes them at once after the DELETE, as those would.
    pub fn stand_alone(&self) {
        self.shared
            .finishes_deletions
            .store(false, Ordering::Relaxed);
    }

    /// Whether deletions left pending are finished (see [`ApiServer::stand_alone`]).
    pub fn finishes_deletions(&self) -> bool {
        self.shared.finishes_deletions.load(Ordering::Relaxed)
    }

    /// The object spec the server generates from.
    pub fn spec(&self) -> &ObjectSpec {
        self.shared.generator.spec()
    }

    /// Ordinal of a namespace name; `None` for a namespace that holds no objects.
    pub(crate) fn namespace_ordinal(&self, name: &str) -> Option<u32> {
        self.shared.namespaces.get(name).copied()
    }

    /// What writes the server's objects.
    pub fn generator(&self) -> &Arc<Generator> {
        &self.shared.generator
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves the table consistent (every mutation is
        // applied whole before the next starts), so a poisoned lock is still usable.
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The newest resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.state().resource_version()
    }

    /// Objects that exist now.
    pub fn alive(&self) -> u64 {
        self.state().alive()
    }

    /// Requests served so far.
    pub fn requests(&self) -> RequestCounts {
        *self
            .shared
            .requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    fn count_request(&self, f: impl FnOnce(&mut RequestCounts)) {
        f(&mut self
            .shared
            .requests
            .lock()
            .unwrap_or_else(|e| e.into_inner()));
    }

    /// Deletes `amount` of the live objects `selector` selects, chosen from `seed`;
    /// returns how many.
    pub fn delete(&self, amount: Amount, selector: &LabelSelector, seed: u64) -> u64 {
        self.mutate(amount, selector, seed, State::delete)
    }

    /// Updates `amount` of the live objects `selector` selects, chosen from `seed`;
    /// returns how many.
    pub fn update(&self, amount: Amount, selector: &LabelSelector, seed: u64) -> u64 {
        self.mutate(amount, selector, seed, State::update)
    }

    /// Deletes `amount` of the live objects `selector` selects, chosen from `seed`, and
    /// creates each again under the same name with a new UID; returns how many.
    pub fn recreate(&self, amount: Amount, selector: &LabelSelector, seed: u64) -> u64 {
        self.mutate(amount, selector, seed, State::recreate)
    }

    /// [`ApiServer::delete`] for pods, as a cluster deletes them: each goes through the
    /// MODIFIED events of a graceful deletion ([`generate::Stage`]), every pod a step
    /// before the next, then the DELETED events.
    pub fn delete_gracefully(&self, amount: Amount, selector: &LabelSelector, seed: u64) -> u64 {
        self.mutate(amount, selector, seed, |state, picked| {
            state.delete_gracefully(picked, false);
        })
    }

    /// [`ApiServer::recreate`] after a graceful deletion ([`ApiServer::delete_gracefully`]):
    /// a StatefulSet's pod, deleted and made again under its name.
    pub fn recreate_gracefully(&self, amount: Amount, selector: &LabelSelector, seed: u64) -> u64 {
        self.mutate(amount, selector, seed, |state, picked| {
            state.delete_gracefully(picked, true);
        })
    }

    /// Moves the resourceVersion on by one write to another resource: no event of this
    /// resource, but a watch resumed from before it can be compacted away.
    pub fn advance_elsewhere(&self) {
        self.change(State::advance_elsewhere);
    }

    /// The furthest resourceVersion an open watch has handed to its client, counting only
    /// watches past their initial events; `None` when no watch is open. A client has seen
    /// every change up to it once it has read what it was sent.
    pub fn watch_position(&self) -> Option<u64> {
        self.shared.dispatcher.position()
    }

    /// How many open watches past their initial events have handed their client
    /// everything up to `rv`: the caught-up check of several informers.
    pub fn watches_at(&self, rv: u64) -> usize {
        self.shared.dispatcher.following_at(rv)
    }

    /// Every live object as the server knows it: key, resourceVersion and UID. What the
    /// consistency oracle holds an informer's store against.
    pub fn truth(&self) -> Vec<TruthEntry> {
        self.truth_where(|_, _| true)
    }

    /// [`ApiServer::truth`] of the objects `scope` selects: what an informer asking for
    /// them must hold (informers in several namespaces, together).
    pub fn truth_of(&self, scope: &Scope) -> Vec<TruthEntry> {
        if scope.is_default() {
            return self.truth();
        }
        let spec = self.shared.generator.spec();
        let selections: Vec<query::Selection> = match scope.namespaces.as_slice() {
            [] => vec![query::Selection::scoped(self, scope, None)],
            namespaces => (namespaces.iter())
                .map(|ns| query::Selection::scoped(self, scope, Some(ns)))
                .collect(),
        };
        self.truth_where(|id, written| {
            (selections.iter()).any(|selection| selection.matches_parts(spec, id, written))
        })
    }

    fn truth_where(&self, keep: impl Fn(&ObjectId, Option<&Written>) -> bool) -> Vec<TruthEntry> {
        let spec = self.shared.generator.spec();
        let state = self.state();
        state
            .alive_identities()
            .filter(|id| keep(id, state.written(id).map(|w| &**w)))
            .map(|id| match state.written(&id) {
                Some(w) => TruthEntry {
                    key: store_key(&w.key().namespace, &w.key().name),
                    resource_version: id.resource_version,
                    uid: w.uid().to_owned(),
                },
                None => TruthEntry {
                    key: store_key(
                        &generate::namespace(spec, id.index),
                        &generate::name(spec, id.index),
                    ),
                    resource_version: id.resource_version,
                    uid: generate::uid(spec, id.index, id.incarnation),
                },
            })
            .collect()
    }

    /// Creates `count` new objects; returns how many.
    pub fn create(&self, count: u32) -> u64 {
        self.change(|state| {
            state.create(count);
        })
    }

    /// Removes the live object `namespace/name` as `decide` says from its current
    /// version (see [`Removal`]): returns the object's version after (its last state, with
    /// the deletion's resourceVersion, when it is gone), or `None` when there is no such
    /// object. With `dry_run`, only says what would be done.
    pub fn delete_named<E>(
        &self,
        namespace: &str,
        name: &str,
        dry_run: bool,
        decide: impl FnOnce(&Version) -> Result<Removal, E>,
    ) -> Result<Option<Removed>, E> {
        let mut removed = Ok(None);
        self.change(|state| {
            let Some(current) = self.find(state, namespace, name) else {
                return;
            };
            removed = decide(&current).map(|r| Some(Self::remove(state, current, r, dry_run)));
        });
        removed
    }

    /// Removes every live object `selected` accepts, each as `decide` says; returns the
    /// resourceVersion they were listed at and them as they were. With `dry_run`, only
    /// says what would be removed.
    pub fn delete_where(
        &self,
        selected: impl Fn(&Version) -> bool,
        dry_run: bool,
        decide: impl Fn(&Version) -> Removal,
    ) -> (u64, Vec<Version>) {
        let mut listed = (0, Vec::new());
        self.change(|state| {
            let rv = state.resource_version();
            let page = state
                .list_where(state::Start::First, None, rv, |id| {
                    selected(&state.version(*id))
                })
                .expect("the newest version is never expired");
            let versions: Vec<Version> =
                page.items.into_iter().map(|id| state.version(id)).collect();
            for v in &versions {
                Self::remove(state, v.clone(), decide(v), dry_run);
            }
            listed = (rv, versions);
        });
        listed
    }

    /// The live objects `selected` accepts, at the newest resourceVersion.
    #[cfg(feature = "server")]
    pub(crate) fn live_where(&self, selected: impl Fn(&Version) -> bool) -> Vec<Version> {
        let state = self.state();
        let rv = state.resource_version();
        let page = state
            .list_where(state::Start::First, None, rv, |id| {
                selected(&state.version(*id))
            })
            .expect("the newest version is never expired");
        page.items.into_iter().map(|id| state.version(id)).collect()
    }

    /// Carries out `removal` of `current`.
    fn remove(state: &mut State, current: Version, removal: Removal, dry_run: bool) -> Removed {
        let index = current.id.index;
        let (body, gone) = match removal {
            Removal::Keep => {
                return Removed {
                    version: current,
                    gone: false,
                };
            }
            Removal::Delete => (None, true),
            Removal::Store(body) => (Some(body), false),
            Removal::StoreThenDelete(body) => (Some(body), true),
        };
        let body = body.map(Written::new);
        if dry_run {
            let version = match body {
                Some(body) => Version {
                    id: current.id,
                    written: Some(Arc::new(body)),
                },
                None => current,
            };
            return Removed { version, gone };
        }
        let mut id = match body {
            Some(body) => state.write(Some(index), body),
            None => current.id,
        };
        if gone {
            id = state.delete_one(index);
        }
        Removed {
            version: state.version(id),
            gone,
        }
    }

    /// The live object `namespace/name`.
    pub fn get_named(&self, namespace: &str, name: &str) -> Option<Version> {
        self.find(&self.state(), namespace, name)
    }

    fn find(&self, state: &State, namespace: &str, name: &str) -> Option<Version> {
        let index = self.index_of(state, namespace, name)?;
        state.get(index).map(|id| state.version(id))
    }

    /// A suffix for a `generateName` create: five characters from the apiserver's
    /// alphabet, drawn deterministically from the seed.
    #[cfg(feature = "server")]
    fn random_suffix(&self) -> String {
        let n = self.shared.generated_names.fetch_add(1, Ordering::Relaxed);
        generate::random_suffix(self.shared.generator.spec(), n)
    }

    /// The index of object `namespace/name`, live or deleted, if it ever existed.
    fn index_of(&self, state: &State, namespace: &str, name: &str) -> Option<u32> {
        let key = NamespacedName {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        };
        if let Some(index) = state.http_index(&key) {
            return Some(index);
        }
        let index = generate::index_of_name(name)?;
        let spec = self.shared.generator.spec();
        (index < state.next_index()
            && !state.is_http_named(index)
            && generate::namespace(spec, index) == namespace
            && generate::name(spec, index) == name)
            .then_some(index)
    }

    /// Writes object `key` with a body from a client: `body` gets the live version, if
    /// any, and the UID a new object would get, and returns what to store or refuses.
    /// Returns the version written; with `dry_run` nothing is stored and the version keeps
    /// the live one's resourceVersion (0 for a create).
    pub fn write<E>(
        &self,
        key: &NamespacedName,
        dry_run: bool,
        body: impl FnOnce(Option<&Version>, &str) -> Result<serde_json::Value, E>,
    ) -> Result<Version, E> {
        let mut state = self.state();
        let index = self.index_of(&state, &key.namespace, &key.name);
        let current = index.and_then(|i| state.get(i)).map(|id| state.version(id));
        let (new_index, incarnation) = match index {
            Some(i) => (i, state.incarnation(i) + 1),
            None => (state.next_index(), 0),
        };
        let new_uid = generate::uid(self.shared.generator.spec(), new_index, incarnation);
        let written = Written::new(body(current.as_ref(), &new_uid)?);
        if dry_run {
            let id = current
                .map(|c| c.id)
                .unwrap_or(ObjectId::new(new_index, incarnation, 1, 0));
            return Ok(Version {
                id,
                written: Some(Arc::new(written)),
            });
        }
        let id = state.write(index, written);
        let version = state.version(id);
        let rv = state.resource_version();
        drop(state);
        self.shared.head.send_replace(rv);
        Ok(version)
    }

    /// Keeps at most `events` events of history (`None`: all); see
    /// [`scenario::ApiServerSpec::history_events`].
    pub fn set_history_limit(&self, events: Option<u64>) {
        let limit = events.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        self.state().set_history_limit(limit);
    }

    /// Forgets the event history up to now (etcd compaction): watches and exact LISTs at
    /// older resourceVersions get 410 Expired.
    pub fn compact(&self) {
        self.state().compact();
    }

    /// Ends every open watch cleanly; clients reconnect from their last resourceVersion.
    pub fn disconnect_watchers(&self) {
        self.shared.disconnects.increment();
    }

    /// Encodes each watch event once for every watcher that sends it (KEP-1152), keeping
    /// the lines of the newest events up to `max_bytes`. Off unless turned on; `serve`
    /// turns it on.
    pub fn share_encodings(&self, max_bytes: usize) {
        *self.encodings() = Some(encodings::SharedEncodings::new(max_bytes));
    }

    /// Scans of the table (a LIST, a watch's initial events) look at `chunk` records at a
    /// time and yield between chunks, so that one request scanning millions of objects
    /// leaves a one-thread server answering others. Off unless turned on (a scan is one
    /// step, and `run`'s interleaving of tasks stays what it was); `serve` turns it on.
    pub fn yield_during_scans(&self, chunk: u32) {
        self.shared
            .scan_chunk
            .store(chunk.max(1), Ordering::Relaxed);
    }

    /// Records a scan looks at before it yields.
    pub(crate) fn scan_chunk(&self) -> u32 {
        self.shared.scan_chunk.load(Ordering::Relaxed)
    }

    /// The line `key` names: shared if another watcher encoded it already, else from
    /// `encode` (and then shared, when sharing is on).
    pub(crate) fn shared_line(
        &self,
        key: (u64, state::EventKind, form::Form, form::Wire),
        encode: impl FnOnce() -> bytes::Bytes,
    ) -> bytes::Bytes {
        if let Some(line) = self.encodings().as_ref().and_then(|e| e.get(&key)) {
            return line;
        }
        // Encoded without the lock: other watchers go on meanwhile.
        let line = encode();
        if let Some(shared) = self.encodings().as_mut() {
            shared.insert(key, line.clone());
        }
        line
    }

    fn encodings(&self) -> std::sync::MutexGuard<'_, Option<encodings::SharedEncodings>> {
        self.shared
            .encodings
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts terminating watchers that read too slowly, as kube-apiserver's dispatcher does
    /// (see `dispatch.rs`). Off unless started: in `run`, a phase's changes arrive all at once
    /// in virtual time, when no budget has accrued, which no real cluster does.
    pub fn terminate_slow_watchers(&self) {
        let shared = Arc::downgrade(&self.shared);
        let mut head = self.head_receiver();
        Component::ApiServer.spawn(async move {
            loop {
                head.changed().await;
                let Some(shared) = shared.upgrade() else {
                    return;
                };
                let server = ApiServer { shared };
                let terminated = server
                    .shared
                    .dispatcher
                    .dispatch(|rv| server.state().events_after(rv))
                    .await;
                if terminated > 0 {
                    server.count_request(|r| r.watchers_terminated += terminated);
                }
            }
        });
    }

    fn dispatcher(&self) -> &dispatch::Dispatcher {
        &self.shared.dispatcher
    }

    fn disconnect_receiver(&self) -> signal::Subscription {
        self.shared.disconnects.subscribe()
    }

    fn mutate(
        &self,
        amount: Amount,
        selector: &LabelSelector,
        seed: u64,
        apply: fn(&mut State, &[u32]),
    ) -> u64 {
        let spec = self.shared.generator.spec();
        let mut changed = 0;
        self.change(|state| {
            let candidates = state.alive_where(|id| {
                selector.is_empty()
                    || selector.matches(&generate::labels(spec, id.index, id.generation))
            });
            let count = amount.of(candidates.len() as u64);
            let picked = State::pick(candidates, count, seed);
            apply(state, &picked);
            changed = picked.len() as u64;
        });
        changed
    }

    /// Applies `f` to the state, then wakes the watches; returns the events it made.
    fn change(&self, f: impl FnOnce(&mut State)) -> u64 {
        let rv = {
            let mut state = self.state();
            f(&mut state);
            state.resource_version()
        };
        let before = self.shared.head.send_replace(rv);
        rv - before
    }

    /// A receiver of the newest resourceVersion, for watches waiting on new events.
    fn head_receiver(&self) -> signal::Subscription {
        self.shared.head.subscribe()
    }

    /// How many objects of `selection` there were at `rv` after object `last` in key
    /// order: a page's `remainingItemCount`.
    fn count_after(
        &self,
        selection: &query::Selection,
        last: u32,
        rv: u64,
    ) -> Result<u64, state::Expired> {
        let spec = self.spec();
        let state = self.state();
        let scan = state.scan_where(state::Start::After(last), None, rv, u32::MAX, |id| {
            selection.matches_parts(spec, id, state.written(id).map(|w| &**w))
        })?;
        Ok(scan.page.items.len() as u64)
    }
}

// Unit tests measure with the same allocator the binary installs.
#[cfg(test)]
#[global_allocator]
static TEST_ALLOCATOR: measure::CountingJemalloc = measure::CountingJemalloc;
