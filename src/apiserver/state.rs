//! The server's truth: a compact object table, the resourceVersion counter and the event
//! history that watches read from.
//!
//! Per object only identity and version data is kept ([`Record`], 24 bytes); bodies are
//! generated when a LIST page or a watch event is sent. Every mutation takes the next
//! resourceVersion and appends a compact [`HistoryEvent`], which is what lets a LIST
//! continuation see the state as of its resourceVersion (as etcd's MVCC does) and a WATCH
//! replay the events after its resourceVersion (as the watch cache does).
//!
//! Objects written over HTTP (`serve`: POST, PUT, PATCH) cannot be generated, so their
//! versions keep their bodies ([`Written`]), keyed by the resourceVersion that wrote them.
//! A body lives while a version that the history can still show needs it.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::generate::Identity;
use super::written::{ObjectKey, Version, Written};

/// One object's identity and version data; the index is its position in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Record {
    resource_version: u64,
    generation: u32,
    incarnation: u32,
    alive: bool,
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
    pub object: Identity,
    /// The object's resourceVersion before the event (0 for ADDED).
    pub previous_resource_version: u64,
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

/// One page of a LIST, as identities; the caller generates the bodies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// Objects in the page, in table order.
    pub items: Vec<Identity>,
    /// The resourceVersion the page is consistent with.
    pub resource_version: u64,
    /// Index to continue from, when more objects follow.
    pub next: Option<u32>,
}

/// What a scan with a budget found: a page, and where to go on if the budget ran out
/// first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    /// The objects found, as [`State::list_where`] would have them so far.
    pub page: Page,
    /// The index the scan stopped before, when records are left to look at and the page
    /// is not full.
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
    /// Objects whose names came over HTTP, not from the generator. An index keeps its name
    /// for good, as a generated one does, so a create after a delete reuses it.
    http_names: HashMap<ObjectKey, u32>,
    http_indices: HashSet<u32>,
}

impl State {
    /// `count` objects, created at resourceVersions 1..=count before history starts.
    pub fn new(count: u32) -> State {
        let records = (0..count)
            .map(|i| Record {
                resource_version: u64::from(i) + 1,
                generation: 1,
                incarnation: 0,
                alive: true,
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
            http_names: HashMap::new(),
            http_indices: HashSet::new(),
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
    pub fn version(&self, id: Identity) -> Version {
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

    fn identity(index: u32, r: &Record) -> Identity {
        Identity {
            index,
            incarnation: r.incarnation,
            generation: r.generation,
            resource_version: r.resource_version,
        }
    }

    /// The live generated objects `selected` accepts, in table order. Objects named over
    /// HTTP are left out: the generator cannot make their next version.
    pub fn alive_where(&self, selected: impl Fn(&Identity) -> bool) -> Vec<u32> {
        (0u32..)
            .zip(&self.records)
            .filter(|&(i, r)| {
                r.alive && !self.http_indices.contains(&i) && selected(&State::identity(i, r))
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

    /// Applies one mutation to a live object, records its event and returns the object as
    /// the event shows it. `body` is the new version's body when it was written over HTTP;
    /// a deletion keeps the last body, for the DELETED event.
    fn mutate(&mut self, index: u32, kind: EventKind, body: Option<Arc<Written>>) -> Identity {
        self.resource_version += 1;
        let rv = self.resource_version;
        let r = &mut self.records[index as usize];
        debug_assert!(r.alive, "mutating a deleted object");
        let previous = r.resource_version;
        r.resource_version = rv;
        let body = match kind {
            EventKind::Modified => {
                r.generation += 1;
                body
            }
            EventKind::Deleted => {
                r.alive = false;
                self.alive -= 1;
                self.bodies.get(&previous).map(|(_, w)| Arc::clone(w))
            }
            EventKind::Added => unreachable!("creation goes through `add`"),
        };
        let object = State::identity(index, r);
        if let Some(body) = body {
            self.bodies.insert(rv, (index, body));
        }
        self.record(HistoryEvent {
            kind,
            object,
            previous_resource_version: previous,
        });
        object
    }

    /// Deletes one live object; returns its last state, with the deletion's version.
    pub fn delete_one(&mut self, index: u32) -> Identity {
        self.mutate(index, EventKind::Deleted, None)
    }

    /// The body of version `id`, when it was written over HTTP; `None` for a generated one.
    pub fn written(&self, id: &Identity) -> Option<&Arc<Written>> {
        self.bodies
            .get(&id.resource_version)
            .filter(|(index, _)| *index == id.index)
            .map(|(_, w)| w)
    }

    /// The index of an object named over HTTP (live or not).
    pub fn http_index(&self, key: &ObjectKey) -> Option<u32> {
        self.http_names.get(key).copied()
    }

    /// Whether `index` is an object named over HTTP.
    pub fn is_http_named(&self, index: u32) -> bool {
        self.http_indices.contains(&index)
    }

    /// Stores a body written over HTTP as the next version of object `index`: an update
    /// when it is live, a new incarnation (new UID) when it was deleted, or a new object
    /// named over HTTP when `index` is `None`. Returns the version written.
    pub fn write(&mut self, index: Option<u32>, body: Written) -> Identity {
        let body = Arc::new(body);
        match index {
            Some(i) if self.get(i).is_some() => self.mutate(i, EventKind::Modified, Some(body)),
            Some(i) => self.add(i, Some(body)),
            None => {
                let i = self.records.len() as u32;
                self.http_names.insert(body.key().clone(), i);
                self.http_indices.insert(i);
                self.add(i, Some(body))
            }
        }
    }

    /// The live object at `index`, if any.
    pub fn get(&self, index: u32) -> Option<Identity> {
        let r = self.records.get(index as usize)?;
        r.alive.then(|| State::identity(index, r))
    }

    /// Brings object `index` (new, or deleted before) into existence as a new
    /// incarnation: new UID, generation 1, next resourceVersion.
    fn add(&mut self, index: u32, body: Option<Arc<Written>>) -> Identity {
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
                }
            }
            None => Record {
                resource_version: rv,
                generation: 1,
                incarnation: 0,
                alive: true,
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
        });
        object
    }

    /// Creates `count` new objects at the end of the table; returns their indices.
    pub fn create(&mut self, count: u32) -> std::ops::Range<u32> {
        let first = self.records.len() as u32;
        for index in first..first + count {
            self.add(index, None);
        }
        first..first + count
    }

    /// Deletes the given live objects and creates each again under the same name with a new
    /// UID: the delete+recreate that namespace/name keys cannot tell from an update.
    pub fn recreate(&mut self, indices: &[u32]) {
        for &i in indices {
            self.mutate(i, EventKind::Deleted, None);
            self.add(i, None);
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
    pub fn alive_identities(&self) -> impl Iterator<Item = Identity> + '_ {
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
                self.mutate(i, EventKind::Deleted, None);
            }
        }
    }

    /// Updates the given objects (new generation), one resourceVersion each; those not
    /// live are left alone.
    pub fn update(&mut self, indices: &[u32]) {
        for &i in indices {
            if self.get(i).is_some() {
                self.mutate(i, EventKind::Modified, None);
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

    /// Up to `limit` objects (all if `None`) as of `rv` for which `filter` holds, starting at
    /// index `from`.
    pub fn list_where(
        &self,
        from: u32,
        limit: Option<usize>,
        rv: u64,
        filter: impl Fn(&Identity) -> bool,
    ) -> Result<Page, Expired> {
        self.scan_where(from, limit, rv, u32::MAX, filter)
            .map(|scan| scan.page)
    }

    /// [`State::list_where`], looking at no more than `budget` records: the scan stops
    /// early when the budget runs out, and says where to go on from.
    pub fn scan_where(
        &self,
        from: u32,
        limit: Option<usize>,
        rv: u64,
        budget: u32,
        filter: impl Fn(&Identity) -> bool,
    ) -> Result<Scan, Expired> {
        self.check_not_expired(rv)?;
        let rv = rv.min(self.resource_version);
        // Objects changed after `rv` are rolled back through the history: the first event
        // after `rv` for an index tells what the object was at `rv`.
        let mut before: HashMap<u32, Option<Identity>> = HashMap::new();
        let first_after = self
            .history
            .partition_point(|e| e.object.resource_version <= rv);
        for e in self.history.range(first_after..) {
            before.entry(e.object.index).or_insert(match e.kind {
                EventKind::Added => None,
                EventKind::Modified => Some(Identity {
                    generation: e.object.generation - 1,
                    resource_version: e.previous_resource_version,
                    ..e.object
                }),
                EventKind::Deleted => Some(Identity {
                    resource_version: e.previous_resource_version,
                    ..e.object
                }),
            });
        }
        let at_rv = |i: u32| -> Option<Identity> {
            let r = &self.records[i as usize];
            if r.resource_version <= rv {
                r.alive.then(|| State::identity(i, r))
            } else {
                before.get(&i).copied().flatten()
            }
        };
        let limit = limit.unwrap_or(usize::MAX);
        let end = self.records.len() as u32;
        let stop = from.saturating_add(budget).min(end);
        let mut items = Vec::new();
        let mut next = None;
        for i in from..stop {
            if let Some(id) = at_rv(i).filter(|id| filter(id)) {
                if items.len() == limit {
                    next = Some(i);
                    break;
                }
                items.push(id);
            }
        }
        let resume = (next.is_none() && stop < end).then_some(stop);
        Ok(Scan {
            page: Page {
                items,
                resource_version: rv,
                next,
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
mod tests {
    use super::*;

    #[test]
    fn list_at_an_older_version_sees_objects_since_deleted_or_updated() {
        let mut s = State::new(10);
        let rv = s.resource_version();
        s.delete(&[2, 5]);
        s.update(&[3]);
        let old = s.list_where(0, None, rv, |_| true).unwrap();
        assert_eq!(old.items.len(), 10);
        assert_eq!(old.items[3].generation, 1);
        assert_eq!(old.items[3].resource_version, 4);
        let now = s
            .list_where(0, None, s.resource_version(), |_| true)
            .unwrap();
        assert_eq!(now.items.len(), 8);
        assert_eq!(
            now.items.iter().find(|i| i.index == 3).unwrap().generation,
            2
        );
    }

    #[test]
    fn updates_and_deletes_of_objects_not_live_change_nothing() {
        let mut s = State::new(4);
        s.delete(&[1]);
        let (rv, alive, history) = (s.resource_version(), s.alive, s.history.len());
        s.delete(&[1, 9]);
        s.update(&[1, 9]);
        assert_eq!(
            (s.resource_version(), s.alive, s.history.len()),
            (rv, alive, history)
        );
        assert_eq!(s.get(1), None);
        let now = s.list_where(0, None, rv, |_| true).unwrap();
        assert_eq!(now.items.len(), 3);
    }

    #[test]
    fn paging_continues_where_the_last_page_ended() {
        let mut s = State::new(10);
        s.delete(&[1]);
        let rv = s.resource_version();
        let first = s.list_where(0, Some(4), rv, |_| true).unwrap();
        assert_eq!(
            first.items.iter().map(|i| i.index).collect::<Vec<_>>(),
            [0, 2, 3, 4]
        );
        assert_eq!(first.next, Some(5));
        let last = s.list_where(5, Some(5), rv, |_| true).unwrap();
        assert_eq!(last.items.len(), 5);
        assert_eq!(last.next, None);
    }

    #[test]
    fn a_scan_in_chunks_with_writes_between_finds_what_one_scan_at_its_version_finds() {
        let mut s = State::new(50);
        s.delete(&[3, 30]);
        let rv = s.resource_version();
        let even = |id: &Identity| id.index.is_multiple_of(2);
        let whole = s.list_where(0, Some(20), rv, even).unwrap();
        let mut items = Vec::new();
        let mut from = 0;
        let page = loop {
            let scan = s
                .scan_where(from, Some(20 - items.len()), rv, 7, even)
                .unwrap();
            items.extend(scan.page.items.iter().copied());
            let Some(resume) = scan.resume else {
                break scan.page;
            };
            assert_eq!(resume, from + 7, "a chunk looks at its budget of records");
            from = resume;
            // Meanwhile the table moves on: updates, deletes, recreates and creates ahead
            // of the scan and behind it (of live objects, as the server makes them).
            let live = |s: &State, i: u32| s.get(i).map(|_| i);
            let behind = from.saturating_sub(4);
            let updated: Vec<u32> = [from + 2, behind]
                .into_iter()
                .filter_map(|i| live(&s, i))
                .collect();
            s.update(&updated);
            if let Some(i) = live(&s, from + 4) {
                s.delete(&[i]);
            }
            if let Some(i) = live(&s, from + 6) {
                s.recreate(&[i]);
            }
            s.create(1);
        };
        assert_eq!(items, whole.items);
        assert_eq!((page.resource_version, page.next), (rv, whole.next));
    }

    #[test]
    fn versions_before_history_are_expired() {
        let s = State::new(10);
        assert_eq!(
            s.list_where(0, None, 3, |_| true),
            Err(Expired {
                requested: 3,
                oldest: 10
            })
        );
        assert!(s.event_after(3).is_err());
    }

    #[test]
    fn deleted_event_carries_last_state_with_deletion_version() {
        let mut s = State::new(3);
        s.update(&[1]);
        s.delete(&[1]);
        let e = s.event_after(4).unwrap().unwrap();
        assert_eq!(e.kind, EventKind::Deleted);
        assert_eq!(e.object.generation, 2);
        assert_eq!(e.object.resource_version, 5);
        assert_eq!(e.previous_resource_version, 4);
        assert_eq!(s.event_after(5).unwrap(), None);
    }

    #[test]
    fn recreate_keeps_the_name_and_changes_the_uid_incarnation() {
        let mut s = State::new(3);
        s.recreate(&[1]);
        let now = s.get(1).unwrap();
        assert_eq!(now.incarnation, 1);
        assert_eq!(now.generation, 1);
        assert_eq!(s.alive(), 3);
        let deleted = s.event_after(3).unwrap().unwrap();
        assert_eq!(deleted.kind, EventKind::Deleted);
        assert_eq!(deleted.object.incarnation, 0);
        let added = s.event_after(4).unwrap().unwrap();
        assert_eq!(added.kind, EventKind::Added);
        // At the version between the two events the object did not exist.
        let between = s.list_where(0, None, 4, |_| true).unwrap();
        assert_eq!(between.items.len(), 2);
    }

    #[test]
    fn created_objects_append_and_compaction_expires_older_versions() {
        let mut s = State::new(2);
        assert_eq!(s.create(3), 2..5);
        assert_eq!(s.alive(), 5);
        assert_eq!(s.list_where(0, None, 2, |_| true).unwrap().items.len(), 2);
        s.compact();
        assert!(s.list_where(0, None, 4, |_| true).is_err());
        assert!(s.event_after(4).is_err());
        assert_eq!(s.event_after(5).unwrap(), None);
    }

    #[test]
    fn bounded_history_expires_versions_older_than_its_window() {
        let mut s = State::new(10);
        s.set_history_limit(Some(3));
        s.update(&[0, 1, 2, 3, 4]);
        // Events at 11..=15; the window keeps 13, 14, 15.
        assert!(s.event_after(11).is_err());
        assert_eq!(
            s.event_after(12).unwrap().unwrap().object.resource_version,
            13
        );
        assert_eq!(s.events_after(12), 3);
    }

    fn body(name: &str) -> Written {
        Written::new(serde_json::json!({"metadata": {"name": name, "namespace": "default"}}))
    }

    #[test]
    fn written_bodies_live_as_long_as_a_version_that_shows_them() {
        let mut s = State::new(2);
        let created = s.write(None, body("web"));
        assert_eq!(created.index, 2);
        assert!(s.is_http_named(2));
        let updated = s.write(Some(2), body("web"));
        let deleted = s.delete_one(2);
        // The history still shows every version, so every body is kept; the DELETED
        // event carries the last one.
        assert!(s.written(&created).is_some());
        assert!(s.written(&updated).is_some());
        assert_eq!(
            s.written(&deleted).map(Arc::as_ptr),
            s.written(&updated).map(Arc::as_ptr)
        );
        // A create under the same name reuses the index as a new incarnation.
        let again = s.write(s.http_index(&body("web").key().clone()), body("web"));
        assert_eq!((again.index, again.incarnation), (2, 1));
        // Phases pick generated objects only.
        assert_eq!(s.alive_where(|_| true), [0, 1]);
        s.compact();
        assert!(s.written(&created).is_none() && s.written(&deleted).is_none());
        assert!(
            s.written(&again).is_some(),
            "the live version keeps its body"
        );
        s.set_history_limit(Some(1));
        let next = s.write(Some(2), body("web"));
        s.update(&[0]);
        assert!(
            s.written(&again).is_none(),
            "trimmed with the event that replaced it"
        );
        assert!(s.written(&next).is_some());
    }

    #[test]
    fn picks_are_deterministic_and_distinct() {
        let s = State::new(1000);
        let a = State::pick(s.alive_where(|_| true), 999, 7);
        assert_eq!(a, State::pick(s.alive_where(|_| true), 999, 7));
        let mut sorted = a.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 999);
    }

    /// A step of the model-based test below.
    #[derive(Debug, Clone)]
    enum Op {
        /// POST of a new name.
        WriteNew,
        /// PUT or PATCH of the `n`th live object (or a create over a deleted name).
        Write(usize),
        Delete(usize),
        /// Scenario phases, which pick generated objects only.
        Update(usize),
        Recreate(usize),
        Create(u32),
        Compact,
        HistoryLimit(usize),
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            2 => Just(Op::WriteNew),
            3 => any::<usize>().prop_map(Op::Write),
            2 => any::<usize>().prop_map(Op::Delete),
            2 => any::<usize>().prop_map(Op::Update),
            1 => any::<usize>().prop_map(Op::Recreate),
            1 => (1u32..3).prop_map(Op::Create),
            1 => Just(Op::Compact),
            1 => (1usize..8).prop_map(Op::HistoryLimit),
        ]
    }

    proptest::proptest! {
        /// Whatever mix of HTTP writes, phase mutations, compaction and history limits:
        /// a LIST at every version the server still serves shows exactly the objects
        /// alive then, each with the written body it had then (none is dropped while the
        /// history can show it; objects named over HTTP always have one).
        #[test]
        fn every_servable_version_lists_what_was_alive_with_its_bodies(
            ops in proptest::collection::vec(op(), 1..60),
        ) {
            let mut s = State::new(4);
            // Each version's objects, and whether each had a written body then.
            let mut seen: Vec<(u64, Vec<(Identity, bool)>)> = Vec::new();
            let mut names = 0;
            let with_bodies = |s: &State, items: Vec<Identity>| -> Vec<(Identity, bool)> {
                items.into_iter().map(|id| (id, s.written(&id).is_some())).collect()
            };
            let snapshot = |s: &State| {
                with_bodies(s, s.list_where(0, None, s.resource_version(), |_| true).unwrap().items)
            };
            seen.push((s.resource_version(), snapshot(&s)));
            for op in ops {
                let live: Vec<u32> = (0..s.next_index()).filter(|&i| s.get(i).is_some()).collect();
                let generated = s.alive_where(|_| true);
                match op {
                    Op::WriteNew => {
                        names += 1;
                        s.write(None, body(&format!("w{names}")));
                    }
                    Op::Write(n) if !live.is_empty() => {
                        s.write(Some(live[n % live.len()]), body("any"));
                    }
                    Op::Delete(n) if !live.is_empty() => {
                        s.delete_one(live[n % live.len()]);
                    }
                    Op::Update(n) if !generated.is_empty() => s.update(&[generated[n % generated.len()]]),
                    Op::Recreate(n) if !generated.is_empty() => {
                        s.recreate(&[generated[n % generated.len()]]);
                    }
                    Op::Create(n) => {
                        s.create(n);
                    }
                    Op::Compact => s.compact(),
                    Op::HistoryLimit(n) => s.set_history_limit(Some(n)),
                    _ => {}
                }
                seen.push((s.resource_version(), snapshot(&s)));
            }
            for (_, objects) in &seen {
                for (id, has_body) in objects {
                    proptest::prop_assert!(*has_body || !s.is_http_named(id.index));
                }
            }
            for (rv, objects) in &seen {
                match s.list_where(0, None, *rv, |_| true) {
                    Ok(page) => {
                        proptest::prop_assert_eq!(&with_bodies(&s, page.items), objects, "at {}", rv);
                    }
                    Err(expired) => proptest::prop_assert!(*rv < expired.oldest),
                }
            }
        }
    }
}
