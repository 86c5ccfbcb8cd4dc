//! Kubernetes vocabulary that the built-in server, the informers, the scenario and the
//! report all speak: label and field selectors, and the identity of an object (its
//! `namespace/name` key, resourceVersion and UID). It sits low in the crate so that none of
//! them has to import another for it. Beside it, how Go reads and writes what the API
//! holds: names ([`names`]) and bytes ([`bytes`]).

pub mod bytes;
pub mod cron;
mod identity;
pub mod names;
pub mod object;
mod selector;
pub mod typed;

pub use identity::{Identity, TruthEntry, store_key};
pub use selector::{FieldSelector, LabelSelector};

// Unit tests measure with the same allocator the binary installs.
#[cfg(test)]
#[global_allocator]
static TEST_ALLOCATOR: measure::CountingJemalloc = measure::CountingJemalloc;
