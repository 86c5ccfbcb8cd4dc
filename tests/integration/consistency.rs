//! The consistency oracle: a store that does not match the server fails the run, unless
//! the scenario expects it.

use crate::util::{phase, phases, run_text};

const DROPS_DELETES: &str = include_str!("../fixtures/drops-deletes.toml");

#[test]
fn a_store_that_misses_deletes_is_caught_and_fails_the_run() {
    let (code, stdout, report) = run_text(DROPS_DELETES);
    assert_eq!(code, 1, "{stdout}");
    let variants = report["variants"].as_array().unwrap();
    for p in phases(&variants[0]) {
        assert_eq!(p["consistent"], true, "{}", p["name"]);
    }
    let wrong = phase(&variants[1], "delete");
    assert_eq!(wrong["consistent"], false);
    assert_eq!(wrong["extra"], 30);
    assert_eq!(wrong["missing"], 0);
    assert_eq!(wrong["stale"], 0);
    assert_eq!(wrong["objects"], 200);
    assert_eq!(wrong["server_objects"], 170);
    assert!(stdout.contains("30 extra"), "{stdout}");
}

#[test]
fn an_expected_inconsistency_is_shown_but_passes() {
    let text = DROPS_DELETES.replace(
        "kind = \"delete\"\ncount = 30",
        "kind = \"delete\"\ncount = 30\nexpect_consistent = false",
    );
    let text = text.replace(
        "kind = \"update\"\ncount = 10",
        "kind = \"create\"\ncount = 5",
    );
    let (code, stdout, report) = run_text(&text);
    // The create phase is expected to be consistent and is not (30 extra remain).
    assert_eq!(code, 1, "{stdout}");
    let text = text.replace(
        "kind = \"create\"\ncount = 5",
        "kind = \"create\"\ncount = 5\nexpect_consistent = false",
    );
    let (code, stdout, _) = run_text(&text);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("30 extra (expected)"), "{stdout}");
    assert_eq!(
        report["variants"][1]["phases"][1]["expect_consistent"],
        false
    );
}
