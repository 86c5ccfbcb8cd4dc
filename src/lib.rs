//! informer-mem: a memory profiler for Kubernetes informers.
//!
//! The pipeline, one module per stage: [`scenario`] (TOML -> validated scenario) ->
//! [`runner`] (one child process per variant) -> in each child, [`apiserver`] and
//! [`informer`] driven through the phases under [`measure`] -> [`report`] (table, JSON).
//! [`cli`] is the only module that knows clap.

pub mod apiserver;
pub mod cli;
pub mod commands;
pub mod exit_codes;
pub mod informer;
pub mod k8s;
pub mod measure;
pub mod metric;
pub mod output;
pub mod progress;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod units;

// Unit tests measure with the same allocator the binary installs.
#[cfg(test)]
#[global_allocator]
static TEST_ALLOCATOR: measure::CountingJemalloc = measure::CountingJemalloc;
