//! informer-mem: a memory profiler for Kubernetes informers. This package is the binary:
//! the command line and what it runs, on the workspace's crates below it.
//!
//! The commands ([`commands`]: `run`, `serve`, `diff`, `check`, `export`, `size`,
//! `crosscheck`) sit between the command line ([`cli`], the only module that knows clap)
//! and the stages: `scenario` (TOML -> validated scenario) -> [`runner`] (one child process
//! per variant) -> in each child, the built-in `apiserver` and the `informer`s under test
//! driven through the phases under `measure` -> `report` (the data model; table, JSON,
//! chart, diff, gate, exports). Beside the runner: [`cluster`] (a real kube-apiserver,
//! `run --kubeconfig`) and [`crosscheck`] (the built-in apiserver against a real one).
//!
//! docs/architecture.md draws the whole layout: the crates, the layers inside this one,
//! and the files to touch to add a phase kind or a variant setting;
//! `tests/integration/architecture.rs` holds the code to it.

pub mod cli;
pub mod cluster;
pub mod commands;
pub mod crosscheck;
pub mod exit_codes;
pub mod progress;
pub mod runner;

// Unit tests measure with the same allocator the binary installs.
#[cfg(test)]
#[global_allocator]
static TEST_ALLOCATOR: measure::CountingJemalloc = measure::CountingJemalloc;
