//! The server's truth: a compact object table, the resourceVersion counter and the event
//! history that watches read from.
//!
//! Per object only identity and version data is kept ([`Record`], 24 bytes, and 4 for its
//! place in key order); bodies are generated when a LIST page or a watch event is sent.
//! Every mutation takes the next resourceVersion and appends a compact [`HistoryEvent`],
//! which is what lets a LIST continuation see the state as of its resourceVersion (as
//! etcd's MVCC does) and a WATCH replay the events after its resourceVersion (as the
//! watch cache does).
//!
//! Objects written over HTTP (`serve`: POST, PUT, PATCH) cannot be generated, so their
//! versions keep their bodies ([`Written`]), keyed by the resourceVersion that wrote them.
//! A body lives while a version that the history can still show needs it.
//!
//! A LIST and a watch's initial events go through the objects in key order, as etcd
//! keeps them ([`keys`]); updates and deletes pick from them in table order.

use measure::FixedState;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::generate::{ObjectId, Stage};
use super::version::{NamespacedName, Version, Written};
pub use keys::GeneratedKeys;
use keys::Keys;

mod keys;

/// One object's identity and version data; the index is its position in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Record {
    resource_version: u64,
    generation: u32,
    incarnation: u32,
    alive: bool,
    stage: Stage,
}

/// What a watch event says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// The object was created.
    Added,
    /// The object was updated.
    Modified,
    /// The object was deleted; the event carries its last state.
    Deleted,
}

impl EventKind {
    /// The event's `type` on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Added => "ADDED",
            EventKind::Modified => "MODIFIED",
            EventKind::Deleted => "DELETED",
        }
    }
}

/// One entry of the event history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryEvent {
    /// What happened.
    pub kind: EventKind,
    /// The object as the event shows it (for DELETED: its last state, with the deletion's
    /// resourceVersion, as kube-apiserver sends it).
    pub object: ObjectId,
    /// The object's resourceVersion before the event (0 for ADDED).
    pub previous_resource_version: u64,
    /// How far its graceful deletion had gone before the event: a MODIFIED event that
    /// moves it on changes its stage and not its generation.
    pub previous_stage: Stage,
}

impl HistoryEvent {
    /// The version the event replaced (for DELETED: the object's last state at its
    /// version before); `None` for ADDED.
    pub fn before(&self) -> Option<ObjectId> {
        let object = ObjectId {
            resource_version: self.previous_resource_version,
            stage: self.previous_stage,
            ..self.object
        };
        match self.kind {
            EventKind::Added => None,
            EventKind::Modified if self.previous_stage == self.object.stage => Some(ObjectId {
                generation: self.object.generation - 1,
                ..object
            }),
            EventKind::Modified | EventKind::Deleted => Some(object),
        }
    }
}

/// What a mutation does to a live object.
#[derive(Debug)]
enum Change {
    /// A new generation: generated, or the body written over HTTP.
    Update(Option<Arc<Written>>),
    /// The next step of its graceful deletion.
    Advance,
    /// Gone; a DELETED event carries its last state.
    Delete,
}

/// The request's resourceVersion is older than the history the server keeps (HTTP 410).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("too old resource version: {requested} ({oldest})")]
pub struct Expired {
    /// What the client asked for.
    pub requested: u64,
    /// The oldest resourceVersion the server can still serve.
    pub oldest: u64,
}

/// Where a scan starts, in key order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start<'a> {
    /// At the first key.
    First,
    /// After this key, whether or not an object has it: a continue token's.
    AfterKey(&'a NamespacedName),
    /// After the key of object `index`: where an earlier scan stopped, which writes made
    /// since then cannot move.
    After(u32),
}

/// One page of a LIST, as identities; the caller generates the bodies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// Objects in the page, in key order.
    pub items: Vec<ObjectId>,
    /// The resourceVersion the page is consistent with.
    pub resource_version: u64,
    /// Whether more objects follow the page's last (a continue token is due).
    pub more: bool,
}

/// What a scan with a budget found: a page, and where to go on if the budget ran out
/// first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    /// The objects found, as [`State::list_where`] would have them so far.
    pub page: Page,
    /// The index of the last record the scan looked at, when records are left to look at
    /// and the page is not full: go on with [`Start::After`] it.
    pub resume: Option<u32>,
}

/// The object table and its history.
#[derive(Debug)]
pub struct State {
    records: Vec<Record>,
    alive: u64,
    resource_version: u64,
    /// Events in resourceVersion order, all with resourceVersion > `history_start`.
    history: VecDeque<HistoryEvent>,
    /// Most events kept; older ones are dropped (the watch cache's window).
    history_limit: Option<usize>,
    /// Every state at or after this resourceVersion can be reconstructed.
    history_start: u64,
    /// Bodies of versions written over HTTP, by resourceVersion, with the object's index.
    /// A DELETED event of such an object keeps its last body under the deletion's version.
    bodies: BTreeMap<u64, (u32, Arc<Written>)>,
    /// Every index's key, and the indices in key order.
    keys: Keys,
}

impl State {
    /// `count` objects, created at resourceVersions 1..=count before history starts,
    /// their keys `generated` names (as every object's the table creates, not written
    /// over HTTP).
    pub fn new(count: u32, generated: GeneratedKeys) -> State {
        let records = (0..count)
            .map(|i| Record {
                resource_version: u64::from(i) + 1,
                generation: 1,
                incarnation: 0,
                alive: true,
                stage: Stage::Live,
            })
            .collect();
        State {
            records,
            alive: u64::from(count),
            resource_version: u64::from(count),
            history: VecDeque::new(),
            history_limit: None,
            history_start: u64::from(count),
            bodies: BTreeMap::new(),
            keys: Keys::new(count, generated),
        }
    }

    /// The index the next new object gets (deleted objects keep theirs).
    pub fn next_index(&self) -> u32 {
        self.records.len() as u32
    }

    /// The incarnation of object `index`, live or deleted.
    pub fn incarnation(&self, index: u32) -> u32 {
        self.records[index as usize].incarnation
    }

    /// Version `id` as sent: its written body, if it has one.
    pub fn version(&self, id: ObjectId) -> Version {
        Version {
            id,
            written: self.written(&id).cloned(),
        }
    }

    /// The newest resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.resource_version
    }

    /// Objects that exist now.
    pub fn alive(&self) -> u64 {
        self.alive
    }

    fn identity(index: u32, r: &Record) -> ObjectId {
        ObjectId {
            stage: r.stage,
            ..ObjectId::new(index, r.incarnation, r.generation, r.resource_version)
        }
    }

    /// The live generated objects `selected` accepts, in table order. Objects named over
    /// HTTP are left out: the generator cannot make their next version.
    pub fn alive_where(&self, selected: impl Fn(&ObjectId) -> bool) -> Vec<u32> {
        (0u32..)
            .zip(&self.records)
            .filter(|&(i, r)| {
                r.alive && !self.keys.is_http_named(i) && selected(&State::identity(i, r))
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// Picks `count` of `candidates`, deterministically from `seed`, in a shuffled order.
    pub fn pick(mut alive: Vec<u32>, count: u64, seed: u64) -> Vec<u32> {
        let count = (count as usize).min(alive.len());
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        // Partial Fisher-Yates: the first `count` slots become a uniform sample.
        for i in 0..count {
            let j = i + (rng.next_u64() % (alive.len() - i) as u64) as usize;
            alive.swap(i, j);
        }
        alive.truncate(count);
        alive
    }

    /// Applies one change to a live object, records its event and returns the object as
    /// the event shows it. A deletion keeps the last body written over HTTP, for the
    /// DELETED event.
    fn mutate(&mut self, index: u32, change: Change) -> ObjectId {
        self.resource_version += 1;
        let rv = self.resource_version;
        let r = &mut self.records[index as usize];
        debug_assert!(r.alive, "mutating a deleted object");
        let (previous, previous_stage) = (r.resource_version, r.stage);
        r.resource_version = rv;
        let (kind, body) = match change {
            Change::Update(body) => {
                r.generation += 1;
                (EventKind::Modified, body)
            }
            Change::Advance => {
                r.stage = r.stage.next();
                (EventKind::Modified, None)
            }
            Change::Delete => {
                r.alive = false;
                self.alive -= 1;
                let last = self.bodies.get(&previous).map(|(_, w)| Arc::clone(w));
                (EventKind::Deleted, last)
            }
        };
        let object = State::identity(index, r);
        if let Some(body) = body {
            self.bodies.insert(rv, (index, body));
        }
        self.record(HistoryEvent {
            kind,
            object,
            previous_resource_version: previous,
            previous_stage,
        });
        object
    }

    /// Deletes one live object; returns its last state, with the deletion's version.
    pub fn delete_one(&mut self, index: u32) -> ObjectId {
        self.mutate(index, Change::Delete)
    }

    /// The body of version `id`, when it was written over HTTP; `None` for a generated one.
    pub fn written(&self, id: &ObjectId) -> Option<&Arc<Written>> {
        self.bodies
            .get(&id.resource_version)
            .filter(|(index, _)| *index == id.index)
            .map(|(_, w)| w)
    }

    /// The index of an object named over HTTP (live or not).
    pub fn http_index(&self, key: &NamespacedName) -> Option<u32> {
        self.keys.http_index(key)
    }

    /// Whether `index` is an object named over HTTP.
    pub fn is_http_named(&self, index: u32) -> bool {
        self.keys.is_http_named(index)
    }

    /// Stores a body written over HTTP as the next version of object `index`: an update
    /// when it is live, a new incarnation (new UID) when it was deleted, or a new object
    /// named over HTTP when `index` is `None`. Returns the version written.
    pub fn write(&mut self, index: Option<u32>, body: Written) -> ObjectId {
        let body = Arc::new(body);
        match index {
            Some(i) if self.get(i).is_some() => self.mutate(i, Change::Update(Some(body))),
            Some(i) => self.add(i, Some(body)),
            None => {
                let i = self.records.len() as u32;
                self.keys.add_http(i, body.key().clone());
                self.add(i, Some(body))
            }
        }
    }

    /// The live object at `index`, if any.
    pub fn get(&self, index: u32) -> Option<ObjectId> {
        let r = self.records.get(index as usize)?;
        r.alive.then(|| State::identity(index, r))
    }

    /// Brings object `index` (new, or deleted before) into existence as a new
    /// incarnation: new UID, generation 1, next resourceVersion.
    fn add(&mut self, index: u32, body: Option<Arc<Written>>) -> ObjectId {
        self.resource_version += 1;
        let rv = self.resource_version;
        let record = match self.records.get(index as usize) {
            Some(old) => {
                debug_assert!(!old.alive, "adding a live object");
                Record {
                    resource_version: rv,
                    generation: 1,
                    incarnation: old.incarnation + 1,
                    alive: true,
                    stage: Stage::Live,
                }
            }
            None => Record {
                resource_version: rv,
                generation: 1,
                incarnation: 0,
                alive: true,
                stage: Stage::Live,
            },
        };
        if index as usize == self.records.len() {
            self.records.push(record);
        } else {
            self.records[index as usize] = record;
        }
        self.alive += 1;
        if let Some(body) = body {
            self.bodies.insert(rv, (index, body));
        }
        let object = State::identity(index, &record);
        self.record(HistoryEvent {
            kind: EventKind::Added,
            object,
            previous_resource_version: 0,
            previous_stage: Stage::Live,
        });
        object
    }

    /// Creates `count` new objects at the end of the table; returns their indices.
    pub fn create(&mut self, count: u32) -> std::ops::Range<u32> {
        let first = self.records.len() as u32;
        for index in first..first + count {
            self.add(index, None);
        }
        self.keys.add_generated(first..first + count);
        first..first + count
    }

    /// Deletes the given live objects and creates each again under the same name with a new
    /// UID: the delete+recreate that namespace/name keys cannot tell from an update.
    pub fn recreate(&mut self, indices: &[u32]) {
        for &i in indices {
            self.mutate(i, Change::Delete);
            self.add(i, None);
        }
    }

    /// Takes the given live objects through the steps of a graceful deletion, each step
    /// for all of them before the next (a MODIFIED event each, see [`Stage`]), and then
    /// deletes them; those not live are left alone. With `recreate`, each is created again
    /// under the same name with a new UID once deleted.
    pub fn delete_gracefully(&mut self, indices: &[u32], recreate: bool) {
        let live: Vec<u32> = indices
            .iter()
            .copied()
            .filter(|&i| self.get(i).is_some())
            .collect();
        // From `Live` to `Released`, one step at a time.
        for _ in Stage::Live.step()..Stage::Released.step() {
            for &i in &live {
                self.mutate(i, Change::Advance);
            }
        }
        for &i in &live {
            self.mutate(i, Change::Delete);
            if recreate {
                self.add(i, None);
            }
        }
    }

    /// Keeps at most `limit` events of history (`None`: all).
    pub fn set_history_limit(&mut self, limit: Option<usize>) {
        self.history_limit = limit;
        self.trim_history();
    }

    fn record(&mut self, event: HistoryEvent) {
        self.history.push_back(event);
        self.trim_history();
    }

    /// Drops the oldest events beyond the limit; versions before the oldest kept event
    /// then answer 410 Expired.
    fn trim_history(&mut self) {
        let limit = self.history_limit.unwrap_or(usize::MAX);
        while self.history.len() > limit {
            if let Some(dropped) = self.history.pop_front() {
                self.history_start = dropped.object.resource_version;
                // The version the event replaced can no longer be shown, nor can the
                // last state a DELETED event carried.
                self.bodies.remove(&dropped.previous_resource_version);
                if dropped.kind == EventKind::Deleted {
                    self.bodies.remove(&dropped.object.resource_version);
                }
            }
        }
    }

    /// Forgets all history up to now, as etcd compaction does: a LIST or WATCH at an older
    /// resourceVersion gets 410 Expired from here on.
    pub fn compact(&mut self) {
        self.history.clear();
        self.history_start = self.resource_version;
        let records = &self.records;
        self.bodies.retain(|&rv, (index, _)| {
            let r = &records[*index as usize];
            r.alive && r.resource_version == rv
        });
    }

    /// Moves the resourceVersion on without an event of this resource: a write to another
    /// resource, which shares the same etcd revision counter.
    pub fn advance_elsewhere(&mut self) {
        self.resource_version += 1;
    }

    /// Every live object, in table order.
    pub fn alive_identities(&self) -> impl Iterator<Item = ObjectId> + '_ {
        (0u32..)
            .zip(&self.records)
            .filter(|(_, r)| r.alive)
            .map(|(i, r)| State::identity(i, r))
    }

    /// Deletes the given objects, one resourceVersion each; those not live (already
    /// deleted, or never made) are left alone, as a delete of a missing object changes
    /// nothing.
    pub fn delete(&mut self, indices: &[u32]) {
        for &i in indices {
            if self.get(i).is_some() {
                self.mutate(i, Change::Delete);
            }
        }
    }

    /// Updates the given objects (new generation), one resourceVersion each; those not
    /// live are left alone.
    pub fn update(&mut self, indices: &[u32]) {
        for &i in indices {
            if self.get(i).is_some() {
                self.mutate(i, Change::Update(None));
            }
        }
    }

    /// Fails when `rv` is older than what the history can reconstruct.
    pub fn check_not_expired(&self, rv: u64) -> Result<(), Expired> {
        if rv < self.history_start {
            Err(Expired {
                requested: rv,
                oldest: self.history_start,
            })
        } else {
            Ok(())
        }
    }

    /// Up to `limit` objects (all if `None`) as of `rv` for which `filter` holds, in key
    /// order from `start`.
    pub fn list_where(
        &self,
        start: Start<'_>,
        limit: Option<usize>,
        rv: u64,
        filter: impl Fn(&ObjectId) -> bool,
    ) -> Result<Page, Expired> {
        self.scan_where(start, limit, rv, u32::MAX, filter)
            .map(|scan| scan.page)
    }

    /// [`State::list_where`], looking at no more than `budget` records: the scan stops
    /// early when the budget runs out, and says where to go on from.
    pub fn scan_where(
        &self,
        start: Start<'_>,
        limit: Option<usize>,
        rv: u64,
        budget: u32,
        filter: impl Fn(&ObjectId) -> bool,
    ) -> Result<Scan, Expired> {
        self.check_not_expired(rv)?;
        let rv = rv.min(self.resource_version);
        // Objects changed after `rv` are rolled back through the history: the first event
        // after `rv` for an index tells what the object was at `rv`.
        let mut before: HashMap<u32, Option<ObjectId>, FixedState> = HashMap::default();
        let first_after = self
            .history
            .partition_point(|e| e.object.resource_version <= rv);
        for e in self.history.range(first_after..) {
            before.entry(e.object.index).or_insert(e.before());
        }
        let at_rv = |i: u32| -> Option<ObjectId> {
            let r = &self.records[i as usize];
            if r.resource_version <= rv {
                r.alive.then(|| State::identity(i, r))
            } else {
                before.get(&i).copied().flatten()
            }
        };
        let limit = limit.unwrap_or(usize::MAX);
        let ordered = self.keys.ordered();
        let first = match start {
            Start::First => 0,
            Start::AfterKey(key) => self.keys.position_after(key),
            Start::After(index) => self.keys.position_after(&self.keys.of(index)),
        };
        // At least one record, so that a scan always moves on.
        let stop = first
            .saturating_add(budget.max(1) as usize)
            .min(ordered.len());
        let mut items = Vec::new();
        let mut more = false;
        for &i in &ordered[first..stop] {
            if let Some(id) = at_rv(i).filter(|id| filter(id)) {
                if items.len() == limit {
                    more = true;
                    break;
                }
                items.push(id);
            }
        }
        let resume = (!more && stop < ordered.len()).then(|| ordered[stop - 1]);
        Ok(Scan {
            page: Page {
                items,
                resource_version: rv,
                more,
            },
            resume,
        })
    }

    /// How many events of the history come after `rv`.
    pub fn events_after(&self, rv: u64) -> u64 {
        let i = self
            .history
            .partition_point(|e| e.object.resource_version <= rv);
        (self.history.len() - i) as u64
    }

    /// The first event after `rv`, if any.
    pub fn event_after(&self, rv: u64) -> Result<Option<HistoryEvent>, Expired> {
        self.check_not_expired(rv)?;
        let i = self
            .history
            .partition_point(|e| e.object.resource_version <= rv);
        Ok(self.history.get(i).copied())
    }
}

#[cfg(test)]
mod tests;
