//! The built-in kube-apiserver: generator-backed objects served over real HTTP/1.1 with
//! kube-apiserver's LIST and WATCH semantics. Feeds the informer; the runner's phases
//! mutate it.
//!
//! - [`state`]: the compact object table, resourceVersions and event history (the truth);
//! - [`generate`]: object bodies built on demand from (seed, index, generation);
//! - [`http`]: the routes, query parameters, Status errors and streamed bodies;
//! - [`transport`]: a `kube::Client` talking to the router through in-memory pipes.

pub mod generate;
pub mod http;
pub mod state;
pub mod transport;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use crate::scenario::{Amount, ObjectSpec};
use state::State;

/// Requests served, by verb; the report's `api_requests`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestCounts {
    /// LIST requests, one per page.
    pub list: u64,
    /// WATCH requests.
    pub watch: u64,
}

impl RequestCounts {
    /// The requests served since `earlier`.
    pub fn since(self, earlier: RequestCounts) -> RequestCounts {
        RequestCounts {
            list: self.list - earlier.list,
            watch: self.watch - earlier.watch,
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
    requests: Mutex<RequestCounts>,
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
        ApiServer {
            shared: Arc::new(Shared {
                spec,
                namespaces,
                state: Mutex::new(state),
                head,
                requests: Mutex::new(RequestCounts::default()),
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

    fn mutate(&self, amount: Amount, seed: u64, apply: fn(&mut State, &[u32])) -> u64 {
        let rv = {
            let mut state = self.state();
            let picked = state.pick_alive(amount.of(state.alive()), seed);
            apply(&mut state, &picked);
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
