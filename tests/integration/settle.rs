//! A settle phase: freed pages go back to the OS, and allocator settings reach the
//! variant's process.

use serde_json::Value;

use crate::util::{phase, run_text};

const SETTLE: &str = include_str!("../fixtures/settle.toml");

#[test]
fn a_settle_phase_gives_freed_pages_back_and_allocator_settings_reach_the_child() {
    let (code, _, report) = run_text(SETTLE);
    assert_eq!(code, 0);
    let mib = |v: &Value| v.as_f64().unwrap() / f64::from(1 << 20);
    let variants = report["variants"].as_array().unwrap();
    assert_eq!(variants[1]["config"]["allocator"]["dirty_decay_ms"], 0);
    // About 90 MiB of pods are freed by the delete. Under the default 10 s decay jemalloc
    // keeps their pages resident until the settle phase purges them.
    let default = &variants[0];
    let settle = &phase(default, "settle")["settle"];
    let released = mib(&settle["before"]["resident"]) - mib(&settle["after"]["resident"]);
    assert!(released > 40.0, "the purge released {released:.1} MiB");
    assert!(phase(default, "settle")["consistent"] == true);
    // With dirty_decay_ms = 0 they go back as they are freed: the delete already ends low.
    let resident_after_delete = |v: &Value| mib(&phase(v, "delete")["jemalloc"]["resident"]);
    let (slow, eager) = (
        resident_after_delete(default),
        resident_after_delete(&variants[1]),
    );
    assert!(
        eager + 40.0 < slow,
        "decay 0: {eager:.1} MiB, default: {slow:.1} MiB"
    );
}
