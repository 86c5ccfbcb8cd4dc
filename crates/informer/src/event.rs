//! What flows through an informer: the reflector's [`Event`]s, in lifecycle order, and the
//! [`Status`] it publishes after every (re)list.

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
