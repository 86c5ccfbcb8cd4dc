//! The built-in kube-apiserver: generator-backed objects served over real HTTP/1.1 with
//! kube-apiserver's LIST and WATCH semantics. Feeds the informer; the runner's phases
//! mutate it.
//!
//! - [`state`]: the compact object table, resourceVersions and event history (the truth);
//! - [`generate`]: object bodies built on demand from (seed, index, generation);
//! - [`http`]: the routes, query parameters, Status errors and streamed bodies;
//! - [`transport`]: a `kube::Client` talking to the router through in-memory pipes.

pub mod discovery;
pub mod dispatch;
pub mod generate;
pub mod http;
pub mod selector;
pub mod serve;
pub mod state;
pub mod transport;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use crate::scenario::{Amount, ObjectSpec};
use generate::Identity;
use state::State;

/// Requests served, by verb; the report's `api_requests`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestCounts {
    /// LIST requests, one per page.
    pub list: u64,
    /// WATCH requests.
    pub watch: u64,
    /// Events sent on watches (ADDED, MODIFIED, DELETED, BOOKMARK and ERROR lines).
    pub watch_events: u64,
    /// Requests answered 410 Expired (a LIST's status, or a watch's ERROR event).
    pub expired: u64,
    /// Watches ended because their client read too slowly (see [`dispatch`]).
    pub watchers_terminated: u64,
    /// Response body bytes of LISTs and WATCHes.
    pub bytes: u64,
}

impl RequestCounts {
    /// The requests served since `earlier`.
    pub fn since(self, earlier: RequestCounts) -> RequestCounts {
        RequestCounts {
            list: self.list - earlier.list,
            watch: self.watch - earlier.watch,
            watch_events: self.watch_events - earlier.watch_events,
            expired: self.expired - earlier.expired,
            watchers_terminated: self.watchers_terminated - earlier.watchers_terminated,
            bytes: self.bytes - earlier.bytes,
        }
    }
}

/// A handle to the server; clones share it.
#[derive(Debug, Clone)]
pub struct ApiServer {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    spec: ObjectSpec,
    /// Namespace name -> ordinal (objects are spread round robin over the ordinals).
    namespaces: HashMap<String, u32>,
    state: Mutex<State>,
    /// The newest resourceVersion, for watches waiting for events.
    head: watch::Sender<u64>,
    /// Bumped to end every open watch (as an apiserver restart or a load balancer would).
    disconnects: watch::Sender<u64>,
    requests: Mutex<RequestCounts>,
    dispatcher: dispatch::Dispatcher,
}

impl ApiServer {
    /// A server holding `spec.count` objects.
    pub fn new(spec: ObjectSpec) -> ApiServer {
        let count =
            u32::try_from(spec.count).expect("scenario validation caps the count below u32::MAX");
        let state = State::new(count);
        let namespaces = (0..spec.namespaces)
            .map(|i| (generate::namespace(&spec, i), i))
            .collect();
        let (head, _) = watch::channel(state.resource_version());
        let (disconnects, _) = watch::channel(0);
        ApiServer {
            shared: Arc::new(Shared {
                spec,
                namespaces,
                state: Mutex::new(state),
                head,
                disconnects,
                requests: Mutex::new(RequestCounts::default()),
                dispatcher: dispatch::Dispatcher::default(),
            }),
        }
    }

    /// The object spec the server generates from.
    pub fn spec(&self) -> &ObjectSpec {
        &self.shared.spec
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

    /// Deletes `amount` of the live objects, chosen from `seed`; returns how many.
    pub fn delete(&self, amount: Amount, seed: u64) -> u64 {
        self.mutate(amount, seed, State::delete)
    }

    /// Updates `amount` of the live objects, chosen from `seed`; returns how many.
    pub fn update(&self, amount: Amount, seed: u64) -> u64 {
        self.mutate(amount, seed, State::update)
    }

    /// Deletes `amount` of the live objects, chosen from `seed`, and creates each again
    /// under the same name with a new UID; returns how many.
    pub fn recreate(&self, amount: Amount, seed: u64) -> u64 {
        self.mutate(amount, seed, State::recreate)
    }

    /// Creates `count` new objects; returns how many.
    pub fn create(&self, count: u32) -> u64 {
        self.change(|state| {
            state.create(count);
        })
    }

    /// Deletes the live object `namespace/name`; returns its last state.
    pub fn delete_named(&self, namespace: &str, name: &str) -> Option<Identity> {
        let mut deleted = None;
        self.change(|state| {
            if let Some(id) = self.find(state, namespace, name) {
                deleted = Some(state.delete_one(id.index));
            }
        });
        deleted
    }

    /// The live object `namespace/name`.
    pub fn get_named(&self, namespace: &str, name: &str) -> Option<Identity> {
        self.find(&self.state(), namespace, name)
    }

    fn find(&self, state: &State, namespace: &str, name: &str) -> Option<Identity> {
        let index = generate::index_of_name(name)?;
        let id = state.get(index)?;
        let spec = &self.shared.spec;
        (generate::namespace(spec, index) == namespace && generate::name(spec, index) == name)
            .then_some(id)
    }

    /// Keeps at most `events` events of history (`None`: all); see
    /// [`crate::scenario::ApiServerSpec::history_events`].
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
        self.shared.disconnects.send_modify(|n| *n += 1);
    }

    /// Starts terminating watchers that read too slowly, as kube-apiserver's dispatcher does
    /// (see [`dispatch`]). Off unless started: in `run`, a phase's changes arrive all at once
    /// in virtual time, when no budget has accrued, which no real cluster does.
    pub fn terminate_slow_watchers(&self) {
        let shared = Arc::downgrade(&self.shared);
        let mut head = self.head_receiver();
        tokio::spawn(async move {
            while head.changed().await.is_ok() {
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

    fn disconnect_receiver(&self) -> watch::Receiver<u64> {
        self.shared.disconnects.subscribe()
    }

    fn mutate(&self, amount: Amount, seed: u64, apply: fn(&mut State, &[u32])) -> u64 {
        let mut changed = 0;
        self.change(|state| {
            let picked = state.pick_alive(amount.of(state.alive()), seed);
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
    fn head_receiver(&self) -> watch::Receiver<u64> {
        self.shared.head.subscribe()
    }

    /// Ordinal of a namespace name; `None` for a namespace that holds no objects.
    fn namespace_ordinal(&self, name: &str) -> Option<u32> {
        self.shared.namespaces.get(name).copied()
    }
}
