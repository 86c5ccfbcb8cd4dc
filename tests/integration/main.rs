//! Drives the real `informer-mem` binary, one module per subject: runs, reports,
//! determinism, bad input, outputs, the gate, `serve`; checks the built-in apiserver
//! against kube-runtime (`conformance`) and against a real kube-apiserver (`crosscheck`),
//! the workspace's layout (`architecture`), and that the docs point at what exists
//! (`docs`).

mod architecture;
mod bad_scenarios;
mod conformance;
mod consistency;
mod crosscheck;
mod destinations;
mod determinism;
mod docs;
mod events;
mod external;
mod gate;
mod launched;
mod measurement;
mod outputs;
mod pipes;
mod reads;
mod real_server;
mod report_format;
mod retention;
mod run;
mod runner;
mod security;
mod serve;
mod server_side;
mod settle;
mod shards;
mod sizing;
mod subjects;
mod sweep;
mod util;
