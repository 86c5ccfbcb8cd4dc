//! Bad scenario files, one table: each is refused with exit code 2 and one error naming
//! the file, the key as written and the line, and nothing is written. The messages are
//! pinned in one snapshot, so a change to any of them shows in review.

use predicates::prelude::*;

use crate::util::bin;

/// A valid scenario that the cases below break one way each.
const BASE: &str = include_str!("../fixtures/minimal.toml");

/// `BASE` with `old` replaced by `new`.
fn with(old: &str, new: &str) -> String {
    assert!(BASE.contains(old), "{old:?}");
    BASE.replacen(old, new, 1)
}

/// `BASE` followed by `more`.
fn plus(more: &str) -> String {
    format!("{BASE}{more}")
}

fn cases() -> Vec<(&'static str, Vec<u8>)> {
    let text = |cases: Vec<(&'static str, String)>| {
        cases
            .into_iter()
            .map(|(label, text)| (label, text.into_bytes()))
            .collect::<Vec<_>>()
    };
    let mut cases = text(vec![
        ("count is a string", with("count = 10", "count = \"ten\"")),
        ("count is zero", with("count = 10", "count = 0")),
        ("count is negative", with("count = 10", "count = -5")),
        ("count is too large", with("count = 10", "count = 10000001")),
        ("count is missing", with("count = 10\n", "")),
        (
            "unknown kind",
            with("count = 10", "count = 10\nkind = \"Service\""),
        ),
        (
            "kind is a number",
            with("count = 10", "count = 10\nkind = 5"),
        ),
        ("unknown top-level key", format!("nmae = \"x\"\n{BASE}")),
        ("unknown server", format!("server = \"k3s\"\n{BASE}")),
        (
            "unknown key in objects",
            with("count = 10", "count = 10\ncolour = 1"),
        ),
        (
            "sample that is not there",
            with("count = 10", "count = 10\nsample = \"no-such-sample.json\""),
        ),
        (
            "ConfigMap data over 1 MiB",
            with(
                "count = 10",
                "count = 10\nkind = \"ConfigMap\"\ndata_keys = 3\ndata_bytes = 600000",
            ),
        ),
        (
            "last-applied annotation over 256 KiB",
            with(
                "count = 10",
                "count = 10\nkind = \"Secret\"\ndata_keys = 2\ndata_bytes = 200000\nlast_applied = true",
            ),
        ),
        (
            "sample beside a shape key",
            with(
                "count = 10",
                "count = 10\nsample = \"x.json\"\nmanaged_fields = 1",
            ),
        ),
        ("no name", with("name = \"t\"\n", "")),
        ("name with a slash", with("name = \"t\"", "name = \"a/b\"")),
        ("no objects table", with("[objects]\ncount = 10\n", "")),
        ("no variant", with("[[variant]]\nname = \"a\"\n", "")),
        ("duplicate variant", plus("[[variant]]\nname = \"a\"\n")),
        (
            "unknown store",
            with("name = \"a\"", "name = \"a\"\nstore = \"shared\""),
        ),
        (
            "page size is a string",
            with("name = \"a\"", "name = \"a\"\npage_size = \"big\""),
        ),
        (
            "unknown implementation",
            with("name = \"a\"", "name = \"a\"\nimplementation = \"go\""),
        ),
        (
            "transform of a field the kind lacks",
            with(
                "name = \"a\"",
                "name = \"a\"\ntransform = [\"bogus.field\"]",
            ),
        ),
        (
            "negative decay setting",
            with(
                "name = \"a\"",
                "name = \"a\"\n[variant.allocator]\ndirty_decay_ms = -2",
            ),
        ),
        ("no phase", with("[[phase]]\nkind = \"list\"\n", "")),
        (
            "first phase is not list",
            with("kind = \"list\"", "kind = \"update\"\ncount = 1"),
        ),
        ("list in second place", plus("[[phase]]\nkind = \"list\"\n")),
        ("unknown phase kind", plus("[[phase]]\nkind = \"lst\"\n")),
        (
            "update without an amount",
            plus("[[phase]]\nkind = \"update\"\n"),
        ),
        (
            "fraction above one",
            plus("[[phase]]\nkind = \"delete\"\nfraction = 1.5\n"),
        ),
        (
            "fraction is a string",
            plus("[[phase]]\nkind = \"delete\"\nfraction = \"half\"\n"),
        ),
        (
            "fraction and count",
            plus("[[phase]]\nkind = \"delete\"\nfraction = 0.5\ncount = 3\n"),
        ),
        (
            "bad selector",
            plus("[[phase]]\nkind = \"delete\"\nselector = \"app in (a\"\n"),
        ),
        (
            "selector on a relist",
            plus("[[phase]]\nkind = \"relist\"\nselector = \"app=web\"\n"),
        ),
        (
            "two phases named alike",
            plus(
                "[[phase]]\nkind = \"update\"\ncount = 1\n[[phase]]\nkind = \"update\"\ncount = 2\n",
            ),
        ),
        (
            "disconnect is a string",
            plus("[[phase]]\nkind = \"update\"\ncount = 1\ndisconnect = \"yes\"\n"),
        ),
        (
            "disconnect on a relist",
            plus("[[phase]]\nkind = \"relist\"\ndisconnect = true\n"),
        ),
        (
            "idle on an update",
            plus("[[phase]]\nkind = \"update\"\ncount = 1\nidle = \"1s\"\n"),
        ),
        (
            "decay is not a duration",
            plus("[[phase]]\nkind = \"settle\"\ndecay = \"soon\"\n"),
        ),
        (
            "calibrate without blocks",
            plus("[[phase]]\nkind = \"calibrate\"\nbytes = 100\n"),
        ),
        (
            "calibrate with fewer bytes than blocks",
            plus("[[phase]]\nkind = \"calibrate\"\nbytes = 5\nblocks = 10\n"),
        ),
        (
            "timeline in megabytes",
            plus("[timeline]\nevery = \"4 MB\"\n"),
        ),
        (
            "timeline of one sample",
            plus("[timeline]\nevery = \"1 MiB\"\nmax_samples = 1\n"),
        ),
        ("gate on an unknown metric", plus("[gate]\ncolour = 5\n")),
        ("negative gate", plus("[gate]\nlive_bytes = -1\n")),
        (
            "history of zero events",
            plus("[apiserver]\nhistory_events = 0\n"),
        ),
        ("unclosed string", with("name = \"t\"", "name = \"t")),
        (
            "duplicate key",
            with("count = 10", "count = 10\ncount = 11"),
        ),
        (
            "nested too deeply",
            plus(&format!("{}x = 1\n", "a.".repeat(10_000))),
        ),
        // Issue 23: the file's words, the key and the line for every refusal.
        (
            "objects is not a table",
            BASE.replace("[objects]\ncount = 10", "objects = 5"),
        ),
        (
            "objects is an array",
            BASE.replace("[objects]\ncount = 10", "objects = [10]"),
        ),
        (
            "allocator is an array, read by position",
            with("name = \"a\"", "name = \"a\"\nallocator = [0, 0, 1, true]"),
        ),
        (
            "a variant is an array",
            "name = \"t\"\nvariant = [[1, 2]]\n[objects]\ncount = 10\n[[phase]]\nkind = \"list\"\n"
                .to_owned(),
        ),
        (
            "handler_cost is a number",
            with(
                "name = \"a\"",
                "name = \"a\"\nhandlers = 1\nhandler_cost = 5",
            ),
        ),
        (
            "count is beyond any integer",
            with("count = 10", "count = 99999999999999999999"),
        ),
        (
            "a key set twice",
            with(
                "name = \"a\"",
                "name = \"a\"\nstore = \"shared-array\"\nstore = \"per-item-copy\"",
            ),
        ),
        (
            "a duration finer than a millisecond",
            with(
                "name = \"a\"",
                "name = \"a\"\nhandlers = 1\nresync_period = \"500us\"",
            ),
        ),
        (
            "a setting kube-runtime fixes",
            with(
                "name = \"a\"",
                "name = \"a\"\nimplementation = \"kube-runtime\"\nstore = \"shared-array\"",
            ),
        ),
    ]);
    cases.push(("not UTF-8", b"name = \"t\xff\"\n".to_vec()));
    cases
}

#[test]
fn every_bad_scenario_gets_one_clear_error_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let cases = cases();
    assert!(cases.len() >= 30);
    let mut messages = String::new();
    for (label, text) in &cases {
        std::fs::write(dir.path().join("bad.toml"), text).unwrap();
        let message = refusal(dir.path(), "bad.toml", label);
        messages.push_str(&format!("{label}:\n{message}\n"));
    }
    // Files that cannot be read at all.
    std::fs::create_dir(dir.path().join("folder.toml")).unwrap();
    for (label, file) in [
        ("a folder", "folder.toml"),
        ("no such file", "missing.toml"),
    ] {
        let message = refusal(dir.path(), file, label);
        messages.push_str(&format!("{label}:\n{message}\n"));
    }
    insta::assert_snapshot!(messages);
}

/// Runs `run FILE` in `dir` and returns its error, after checking that it is refused with
/// exit code 2, names the file, shows no serde internals and writes nothing.
fn refusal(dir: &std::path::Path, file: &str, label: &str) -> String {
    let output = bin()
        .current_dir(dir)
        .arg("run")
        .arg(file)
        .arg("--out")
        .arg("out/report.json")
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(2), "{label}: {stderr}");
    assert!(output.stdout.is_empty(), "{label}");
    assert!(stderr.starts_with("error: "), "{label}: {stderr}");
    assert_eq!(stderr.matches("error: ").count(), 1, "{label}: {stderr}");
    assert!(stderr.contains(&format!("`{file}`")), "{label}: {stderr}");
    assert!(!stderr.contains("$__"), "{label}: {stderr}");
    // Parser internals: Rust's type names are not the file's words.
    for internal in ["struct Raw", "enum Raw", "i128", "i64", "u64", "f64"] {
        assert!(
            !stderr.contains(internal),
            "{label}: {internal} in {stderr}"
        );
    }
    // Every refusal about one key names it and its line (a whole-file one names the file).
    if stderr.contains(" at `") {
        assert!(
            stderr.contains("(line "),
            "{label}: a key without its line: {stderr}"
        );
    }
    assert!(!dir.join("out").exists(), "{label}: something was written");
    stderr
}

/// Runs `run` on a scenario text written to `bad.toml` in a fresh working directory and
/// checks the failure: exit code 2, an error naming the file and `expected`, and nothing
/// written in the default folder (runs/).
fn rejects(text: &str, expected: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.toml"), text).unwrap();
    let assert = bin()
        .current_dir(dir.path())
        .args(["run", "bad.toml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("failed to load `bad.toml`"));
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    for e in expected {
        assert!(stderr.contains(e), "{stderr:?} lacks {e:?}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!dir.path().join("runs").exists(), "nothing may be written");
}

const VALID: &str = include_str!("../fixtures/valid.toml");

#[test]
fn missing_file_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    bin()
        .current_dir(dir.path())
        .args(["run", "nope.toml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("failed to read `nope.toml`"));
    assert!(!dir.path().join("runs").exists());
}

#[test]
fn malformed_toml_is_rejected_with_its_line() {
    rejects(&VALID.replace("[objects]", "[objects"), &["line 2"]);
}

#[test]
fn unknown_key_is_rejected() {
    rejects(
        &VALID.replace("count = 10", "count = 10\nsize = 3"),
        &["objects", "unknown field `size`"],
    );
}

#[test]
fn zero_count_is_rejected() {
    rejects(
        &VALID.replace("count = 10", "count = 0"),
        &["at `objects.count` (line 3)", "out of range"],
    );
}

#[test]
fn negative_count_is_rejected() {
    rejects(
        &VALID.replace("count = 10", "count = -3"),
        &["at `objects.count` (line 3)"],
    );
}

#[test]
fn fraction_outside_zero_one_is_rejected() {
    for bad in ["0", "0.0", "1.01", "-0.5"] {
        rejects(
            &VALID.replace("fraction = 0.5", &format!("fraction = {bad}")),
            &["at `phase[1].fraction` (line 11)", "outside (0, 1]"],
        );
    }
}

#[test]
fn unknown_store_mode_is_rejected_with_the_choices() {
    rejects(
        &VALID.replace("shared-array", "shared"),
        &[
            "at `variant[0].store` (line 6)",
            "shared-array",
            "per-item-copy",
        ],
    );
}
