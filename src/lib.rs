//! informer-mem: a memory profiler for Kubernetes informers.
//!
//! The commands ([`commands`]: `run`, `serve`, `diff`, `check`, `export`) sit between the
//! command line ([`cli`], the only module that knows clap) and the stages:
//! [`scenario`] (TOML -> validated scenario) -> [`runner`] (one child process per variant)
//! -> in each child, the built-in [`apiserver`] and the [`informer`]s under test driven
//! through the phases under [`measure`] -> [`report`] (the data model; table, JSON, chart,
//! diff, gate, exports). Below them: [`k8s`] (selectors, object identities), [`metric`]
//! (the gate's metric names), [`units`], [`output`] and [`exit_codes`].
//!
//! docs/architecture.md draws the whole layout, the layers imports follow, and the files
//! to touch to add a phase kind or a variant setting; `tests/integration/architecture.rs`
//! holds the code to it.

pub mod apiserver;
pub mod cli;
pub mod cluster;
pub mod commands;
pub mod crosscheck;
pub mod exit_codes;
pub mod informer;
pub mod input;
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
