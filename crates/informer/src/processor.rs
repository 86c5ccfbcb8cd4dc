//! client-go's event machinery behind the reflector: the queue, the informer's process
//! loop that pops it into the store, and the shared processor that hands every change to
//! each registered handler through an unbounded buffer of its own (`processorListener`).
//!
//! Three kinds of task run per informer, on the variant's one thread:
//! - the reflector (in [`super`]) adds deltas through [`Machinery::handle`];
//! - the process loop pops them, updates the store and notifies every handler
//!   (`sharedIndexInformer.HandleDeltas`);
//! - one task per handler takes notifications from its buffer and pays the handler's cost
//!   in virtual time for each.
//!
//! Synced, as client-go means it (tools/cache `HasSynced`): the informer has synced when the
//! items of its first `Replace` have all been popped; a handler when, besides, it has
//! handled every notification of those items.

use std::collections::VecDeque;
use std::mem::size_of;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::{Notify, watch};
use tokio::time::Instant;

use super::key::ObjectKey;
use super::object::Object;
use super::queue::{DeltaType, Queue};
use super::relist::{RelistBuffer, Relisted};
use super::store::{Store, Stored};
use super::writer::{self, Rules, Target};
use super::{Event, Status};
use measure::Component;
use report::{EventCounts, HandlerReport, InformerEventsReport, QueueReport};
use scenario::{QueueKind, VariantConfig};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a handler is told (`OnAdd`, `OnUpdate`, `OnDelete`; a resync's is an update whose
/// old and new resourceVersions are equal).
#[derive(Debug)]
struct Notification<K> {
    kind: Kind,
    /// The object before the change (updates only).
    _old: Option<Stored<K>>,
    /// The object after the change, or its last state for a delete.
    _new: Stored<K>,
    /// Part of the items of the first `Replace` (client-go's `isInInitialList`).
    initial: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Add,
    Update,
    Delete,
    Sync,
}

/// One handler: its buffer and what it has received.
#[derive(Debug)]
struct Listener<K> {
    buffer: Mutex<VecDeque<Notification<K>>>,
    wake: Notify,
    cost: Duration,
    /// Notifications buffered or being handled.
    in_flight: AtomicU64,
    /// Notifications of the first `Replace` not yet handled (client-go's `syncTracker`).
    initial_pending: AtomicU64,
    synced_at: Mutex<Option<Duration>>,
    /// Handled since the phase began.
    delivered: Mutex<EventCounts>,
    peak_buffered: AtomicU64,
    peak_buffer_bytes: AtomicU64,
}

impl<K> Listener<K> {
    fn new(cost: Duration) -> Listener<K> {
        Listener {
            buffer: Mutex::new(VecDeque::new()),
            wake: Notify::new(),
            cost,
            in_flight: AtomicU64::new(0),
            initial_pending: AtomicU64::new(0),
            synced_at: Mutex::new(None),
            delivered: Mutex::new(EventCounts::default()),
            peak_buffered: AtomicU64::new(0),
            peak_buffer_bytes: AtomicU64::new(0),
        }
    }

    fn add(&self, notification: Notification<K>) {
        if notification.initial {
            self.initial_pending.fetch_add(1, Ordering::Relaxed);
        }
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        let mut buffer = lock(&self.buffer);
        buffer.push_back(notification);
        self.peak_buffered
            .fetch_max(buffer.len() as u64, Ordering::Relaxed);
        let bytes = (buffer.capacity() * size_of::<Notification<K>>()) as u64;
        self.peak_buffer_bytes.fetch_max(bytes, Ordering::Relaxed);
        drop(buffer);
        self.wake.notify_one();
    }
}

/// One informer's queue, process loop and handlers.
#[derive(Debug)]
pub struct Machinery<K> {
    config: VariantConfig,
    queue: Mutex<Queue<K>>,
    /// What the reflector has gathered of a (re)list.
    buffer: Mutex<RelistBuffer<K, K>>,
    store: Arc<Mutex<Store<K>>>,
    /// Wakes the process loop.
    queued: Notify,
    listeners: Vec<Arc<Listener<K>>>,
    status: watch::Sender<Status>,
    started: Instant,
    synced: AtomicBool,
    synced_at: Mutex<Option<Duration>>,
    uid_changed_updates: AtomicU64,
    peak_queue_len: AtomicU64,
    peak_queue_bytes: AtomicU64,
}

impl<K: Object> Machinery<K> {
    /// The machinery of one informer with `handlers` handlers, writing `store`.
    pub fn new(
        config: &VariantConfig,
        kind: QueueKind,
        handlers: u32,
        store: Arc<Mutex<Store<K>>>,
        status: watch::Sender<Status>,
    ) -> Arc<Machinery<K>> {
        let listeners = (0..handlers as usize)
            .map(|i| Arc::new(Listener::new(Duration::from_millis(config.handler_cost(i)))))
            .collect();
        Arc::new(Machinery {
            config: config.clone(),
            queue: Mutex::new(Queue::new(kind)),
            buffer: Mutex::new(RelistBuffer::default()),
            store,
            queued: Notify::new(),
            listeners,
            status,
            started: Instant::now(),
            synced: AtomicBool::new(false),
            synced_at: Mutex::new(None),
            uid_changed_updates: AtomicU64::new(0),
            peak_queue_len: AtomicU64::new(0),
            peak_queue_bytes: AtomicU64::new(0),
        })
    }

    /// Starts the process loop, one task per handler and the resync timer (when there is a
    /// period and a handler to resync for), as the informer's.
    pub fn start(self: &Arc<Self>) -> Vec<tokio::task::JoinHandle<()>> {
        let mut tasks = vec![Component::Informer.spawn(Arc::clone(self).process_loop())];
        for listener in &self.listeners {
            let (machinery, listener) = (Arc::clone(self), Arc::clone(listener));
            tasks.push(Component::Informer.spawn(machinery.run_listener(listener)));
        }
        if self.resyncs() {
            let period = Duration::from_millis(self.config.resync_period_ms.into());
            tasks.push(Component::Informer.spawn(Arc::clone(self).resync_timer(period)));
        }
        tasks
    }

    /// The reflector's resync timer (`startResync`), on the virtual clock: it starts when a
    /// (re)list completes, and fires one period later and one period after each time it
    /// fired, until the next (re)list starts it over. So time that passes in a phase (a
    /// `settle` phase's idle, a churn) resyncs as it would in client-go. A `resync` phase
    /// fires it at once and leaves its schedule alone. (client-go stops the timer while it
    /// relists; here it runs on until the relist completes, which takes no virtual time
    /// worth a period.)
    async fn resync_timer(self: Arc<Self>, period: Duration) {
        let mut status = self.status.subscribe();
        let mut lists = 0;
        loop {
            // The sender lives in `self`: `wait_for` cannot fail while this task runs.
            let Ok(listed) = status.wait_for(|s| s.lists > lists).await.map(|s| s.lists) else {
                return;
            };
            lists = listed;
            let timer = tokio::time::sleep(period);
            tokio::pin!(timer);
            loop {
                tokio::select! {
                    () = &mut timer => {
                        self.resync();
                        timer.as_mut().reset(Instant::now() + period);
                    }
                    // Listed again: the timer starts over.
                    _ = async { status.wait_for(|s| s.lists > lists).await.is_ok() } => break,
                }
            }
        }
    }

    /// Takes one reflector event into the queue (the reflector's store is the queue).
    pub fn handle(&self, event: Event<K>) {
        let mut queue = lock(&self.queue);
        let intake = &mut Intake {
            machinery: self,
            queue: &mut queue,
        };
        if writer::apply(Rules::of(&self.config), intake, event) {
            self.status.send_modify(|s| s.lists += 1);
        }
        self.note_queue(&queue);
        drop(queue);
        self.queued.notify_one();
    }

    fn note_queue(&self, queue: &Queue<K>) {
        self.peak_queue_len
            .fetch_max(queue.len() as u64, Ordering::Relaxed);
        self.peak_queue_bytes
            .fetch_max(queue.heap_bytes(), Ordering::Relaxed);
    }

    /// Whether the informer has a resync timer: a period, and a handler to resync for.
    fn resyncs(&self) -> bool {
        self.config.resync_period_ms > 0 && !self.listeners.is_empty()
    }

    /// The resync timer fired: every object in the store is queued as a Sync delta, for
    /// handlers that asked for resyncs. No API call.
    pub fn resync(&self) {
        if !self.resyncs() {
            return;
        }
        let mut queue = lock(&self.queue);
        queue.resync(&lock(&self.store));
        self.note_queue(&queue);
        drop(queue);
        self.queued.notify_one();
    }

    /// Pops the queue into the store and the handlers, for ever.
    async fn process_loop(self: Arc<Self>) {
        loop {
            let popped = lock(&self.queue).pop();
            let Some((popped, initial)) = popped else {
                // A first `Replace` of no items (a selector or namespace that holds
                // nothing yet) has synced with nothing to pop.
                self.note_synced();
                self.queued.notified().await;
                continue;
            };
            let (key, deltas) = popped.into_parts();
            for delta in deltas {
                self.process(&key, delta.kind, delta.object, initial);
            }
            self.note_synced();
        }
    }

    /// Marks the informer synced, and every handler with nothing of the first `Replace`
    /// left to handle, once the queue says so (client-go's `HasSynced` asks the queue
    /// whenever it is called, so an empty first list syncs at once).
    fn note_synced(&self) {
        if !self.synced.load(Ordering::Relaxed) && lock(&self.queue).has_synced() {
            self.synced.store(true, Ordering::Relaxed);
            *lock(&self.synced_at) = Some(self.started.elapsed());
            self.status.send_modify(|s| s.synced = true);
            for listener in &self.listeners {
                self.check_synced(listener);
            }
        }
    }

    /// One delta: the store first, then the handlers (`processDeltas`).
    fn process(&self, key: &ObjectKey, kind: DeltaType, object: Stored<K>, initial: bool) {
        let mut store = lock(&self.store);
        match kind {
            DeltaType::Deleted | DeltaType::DeletedFinalStateUnknown => {
                store.remove(key);
                drop(store);
                self.distribute(Kind::Delete, None, object, initial);
            }
            DeltaType::Updated | DeltaType::Replaced | DeltaType::Sync => {
                let old = store.insert(key.clone(), object.clone());
                drop(store);
                match old {
                    None => self.distribute(Kind::Add, None, object, initial),
                    Some(old) if old.meta().uid != object.meta().uid => {
                        if self.config.uid_aware {
                            self.distribute(Kind::Delete, None, old, initial);
                            self.distribute(Kind::Add, None, object, initial);
                        } else {
                            if !self.listeners.is_empty() {
                                self.uid_changed_updates.fetch_add(1, Ordering::Relaxed);
                            }
                            self.distribute(Kind::Update, Some(old), object, initial);
                        }
                    }
                    Some(old) if old.meta().resource_version == object.meta().resource_version => {
                        // client-go treats it as a resync (a relisted object that did not
                        // change): only handlers due for one see it. A handler is due from
                        // its registration until a resync check finds it is not, and with
                        // one period per informer every check finds it due; without a
                        // period nothing checks. So every handler sees it.
                        self.distribute(Kind::Sync, Some(old), object, initial);
                    }
                    Some(old) => self.distribute(Kind::Update, Some(old), object, initial),
                }
            }
        }
    }

    fn distribute(&self, kind: Kind, old: Option<Stored<K>>, new: Stored<K>, initial: bool) {
        for listener in &self.listeners {
            listener.add(Notification {
                kind,
                _old: old.clone(),
                _new: new.clone(),
                initial,
            });
        }
    }

    /// A handler: takes its notifications in order, paying its cost for each.
    async fn run_listener(self: Arc<Self>, listener: Arc<Listener<K>>) {
        loop {
            let next = lock(&listener.buffer).pop_front();
            let Some(notification) = next else {
                listener.wake.notified().await;
                continue;
            };
            if !listener.cost.is_zero() {
                tokio::time::sleep(listener.cost).await;
            }
            {
                let mut delivered = lock(&listener.delivered);
                let count = match notification.kind {
                    Kind::Add => &mut delivered.add,
                    Kind::Update => &mut delivered.update,
                    Kind::Delete => &mut delivered.delete,
                    Kind::Sync => &mut delivered.sync,
                };
                *count += 1;
            }
            let initial = notification.initial;
            drop(notification);
            listener.in_flight.fetch_sub(1, Ordering::Relaxed);
            if initial {
                listener.initial_pending.fetch_sub(1, Ordering::Relaxed);
                self.check_synced(&listener);
            }
        }
    }

    /// A handler has synced once the informer has and it has handled every initial item.
    fn check_synced(&self, listener: &Listener<K>) {
        if self.synced.load(Ordering::Relaxed)
            && listener.initial_pending.load(Ordering::Relaxed) == 0
        {
            let mut at = lock(&listener.synced_at);
            if at.is_none() {
                *at = Some(self.started.elapsed());
            }
        }
    }
}

/// The queue as the target of event application: a (re)list is gathered in the relist
/// buffer and `Replace`d into the queue whole; watch events are queued as deltas.
struct Intake<'a, K> {
    machinery: &'a Machinery<K>,
    queue: &'a mut Queue<K>,
}

impl<K: Object> Target<K> for Intake<'_, K> {
    fn init(&mut self) {
        lock(&self.machinery.buffer).clear();
    }

    fn init_page(&mut self, items: Vec<K>) {
        lock(&self.machinery.buffer).page(items);
    }

    fn init_apply(&mut self, obj: K) {
        let key = ObjectKey::of(&obj);
        lock(&self.machinery.buffer).stream(key, obj);
    }

    fn init_delete(&mut self, obj: K) {
        lock(&self.machinery.buffer).forget(&obj);
    }

    fn init_done(&mut self, mut deferred: impl FnMut(&mut K)) {
        let machinery = self.machinery;
        let items = match lock(&machinery.buffer).take() {
            Some(Relisted::Listed(items)) => Stored::listed(machinery.config.store, items),
            Some(Relisted::Streamed(temporary)) => temporary
                .into_iter()
                .map(|(key, mut obj)| {
                    deferred(&mut obj);
                    (key, Stored::Owned(Arc::new(obj)))
                })
                .collect(),
            None => Vec::new(),
        };
        self.queue.replace(items, &lock(&machinery.store));
    }

    fn apply(&mut self, obj: K) {
        let key = ObjectKey::of(&obj);
        self.queue
            .add(DeltaType::Updated, key, Stored::Owned(Arc::new(obj)));
    }

    fn delete(&mut self, obj: K) {
        let key = ObjectKey::of(&obj);
        self.queue
            .add(DeltaType::Deleted, key, Stored::Owned(Arc::new(obj)));
    }
}

/// What the runner reads of an informer's machinery.
pub trait EventsView: Send + Sync {
    /// Nothing is queued, buffered or being handled.
    fn quiet(&self) -> bool;
    /// Notifications handled so far, by every handler: a stalled phase stops moving it.
    fn handled(&self) -> u64;
    /// Fires the resync timer.
    fn resync(&self);
    /// Starts a phase's figures: counts and peaks from zero.
    fn begin_phase(&self);
    /// The phase's figures.
    fn report(&self) -> InformerEventsReport;
}

fn ms(d: Option<Duration>) -> Option<u64> {
    d.map(|d| d.as_millis() as u64)
}

impl<K: Object> EventsView for Machinery<K> {
    fn quiet(&self) -> bool {
        lock(&self.queue).is_empty()
            && self
                .listeners
                .iter()
                .all(|l| l.in_flight.load(Ordering::Relaxed) == 0)
    }

    fn handled(&self) -> u64 {
        self.listeners
            .iter()
            .map(|l| lock(&l.delivered).total())
            .sum()
    }

    fn resync(&self) {
        Machinery::resync(self);
    }

    fn begin_phase(&self) {
        let queue = lock(&self.queue);
        self.peak_queue_len
            .store(queue.len() as u64, Ordering::Relaxed);
        self.peak_queue_bytes
            .store(queue.heap_bytes(), Ordering::Relaxed);
        for l in &self.listeners {
            *lock(&l.delivered) = EventCounts::default();
            let buffer = lock(&l.buffer);
            l.peak_buffered
                .store(buffer.len() as u64, Ordering::Relaxed);
            l.peak_buffer_bytes.store(
                (buffer.capacity() * size_of::<Notification<K>>()) as u64,
                Ordering::Relaxed,
            );
        }
        self.uid_changed_updates.store(0, Ordering::Relaxed);
    }

    fn report(&self) -> InformerEventsReport {
        let queue = lock(&self.queue);
        InformerEventsReport {
            queue: QueueReport {
                kind: queue.kind(),
                peak_len: self.peak_queue_len.load(Ordering::Relaxed),
                peak_bytes: self.peak_queue_bytes.load(Ordering::Relaxed),
            },
            synced_at_ms: ms(*lock(&self.synced_at)),
            uid_changed_updates: self.uid_changed_updates.load(Ordering::Relaxed),
            handlers: self
                .listeners
                .iter()
                .map(|l| HandlerReport {
                    delivered: *lock(&l.delivered),
                    peak_buffered: l.peak_buffered.load(Ordering::Relaxed),
                    peak_buffer_bytes: l.peak_buffer_bytes.load(Ordering::Relaxed),
                    synced_at_ms: ms(*lock(&l.synced_at)),
                    cost_ms: l.cost.as_millis() as u64,
                })
                .collect(),
        }
    }
}
