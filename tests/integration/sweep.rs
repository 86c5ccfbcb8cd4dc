//! Sweeps and sizing: `[sweep]` and `run --sweep` refuse bad values before anything runs,
//! each point is a plain run at its value, the report fits a line per variant and phase
//! that predicts a larger run, `check` and `diff` read sweep reports, and `size` predicts
//! from them.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{EXACT_FIGURES, bin, check, fixture, phases, run_report_with};

/// small.toml's variants at `count` objects with a sweep of `values` (none when empty),
/// in `dir`, in a file named for them. Its phases (list, update, relist) add objects only
/// to stores that had none removed: deletes followed by inserts can move the exact figures
/// of a std HashMap by a resize run to run (its hasher's seed decides where tombstones
/// fall), most at small counts.
fn scenario(dir: &Path, count: u64, values: &[u64]) -> PathBuf {
    let mut scenario: toml::Table = std::fs::read_to_string(fixture("small.toml"))
        .unwrap()
        .parse()
        .unwrap();
    scenario["objects"]["count"] = toml::Value::from(count as i64);
    let phases: toml::Table = "[[phase]]\nkind = \"list\"\n[[phase]]\nkind = \"update\"\nfraction = 0.2\n[[phase]]\nkind = \"relist\"\n"
        .parse()
        .unwrap();
    scenario.insert("phase".to_owned(), phases["phase"].clone());
    if !values.is_empty() {
        let mut sweep = toml::Table::new();
        sweep.insert(
            "count".to_owned(),
            values.iter().map(|&v| v as i64).collect::<Vec<_>>().into(),
        );
        scenario.insert("sweep".to_owned(), sweep.into());
    }
    let file = dir.join(format!("sweep-{count}-{}.toml", values.len()));
    std::fs::write(&file, toml::to_string(&scenario).unwrap()).unwrap();
    file
}

#[test]
fn a_bad_sweep_is_refused_before_anything_runs_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let file = scenario(dir.path(), 100, &[]);
    let cases: [(&str, &str); 6] = [
        (
            "count=-5",
            "`--sweep count`: -5 is out of range: expected 1 to 10000000",
        ),
        (
            "count=100,ten",
            "`--sweep count`: \"ten\" is not a whole number",
        ),
        (
            "seed=1,2",
            "`--sweep seed`: \"seed\" is not sweepable; expected one of count",
        ),
        ("count=100,100", "`--sweep count`: 100 is given twice"),
        ("data_keys=1,2", "`--sweep data_keys`: a Pod has no `data`"),
        ("count=0", "`--sweep count`: 0 is out of range"),
    ];
    for (sweep, expected) in cases {
        let out = dir.path().join("report.json");
        let output = bin()
            .arg("run")
            .arg(&file)
            .arg("--sweep")
            .arg(sweep)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{sweep}: {stderr}");
        assert!(stderr.contains(expected), "{sweep}: {stderr}");
        assert_eq!(
            stderr.lines().filter(|l| l.starts_with("error")).count(),
            1,
            "{stderr}"
        );
        assert!(!out.exists(), "{sweep}: nothing is written");
    }
    // In the file: the key and its line.
    let text = std::fs::read_to_string(&file).unwrap();
    for (sweep, expected) in [
        ("[sweep]\ncount = [100, -1]\n", "at `sweep.count` (line"),
        ("[sweep]\ncount = [100, \"x\"]\n", "sweep.count"),
        (
            "[sweep]\ncount = [100]\nlabels = [1, 2]\n",
            "at `sweep.labels` (line",
        ),
        (
            "[sweep]\nnamespaces = [1, 2]\n",
            "\"namespaces\" is not sweepable",
        ),
    ] {
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, format!("{text}\n{sweep}")).unwrap();
        let output = bin().arg("run").arg(&bad).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{sweep}: {stderr}");
        assert!(stderr.contains(expected), "{sweep}: {stderr}");
    }
}

#[test]
fn each_point_has_the_exact_figures_of_a_plain_run_at_its_value() {
    let dir = tempfile::tempdir().unwrap();
    let file = scenario(dir.path(), 300, &[]);
    let swept = run_report_with(&file, &["--sweep", "count=150,300"]);
    let plain = run_report_with(&file, &[]);
    let variants = swept["variants"].as_array().unwrap();
    let plain_variants = plain["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 2 * plain_variants.len());
    // The second point's variants, count=300, are the plain run's.
    for (point, plain) in variants[plain_variants.len()..].iter().zip(plain_variants) {
        assert_eq!(point["point"], 300);
        assert_eq!(
            point["name"].as_str().unwrap(),
            format!("{} @ count=300", plain["name"].as_str().unwrap())
        );
        for (a, b) in phases(point).iter().zip(phases(plain)) {
            for key in EXACT_FIGURES {
                assert_eq!(a[key], b[key], "{} / {} / {key}", point["name"], a["name"]);
                assert_eq!(
                    a["components"]["informer"][key], b["components"]["informer"][key],
                    "{} / {} / informer {key}",
                    point["name"], a["name"]
                );
            }
        }
    }
    assert_eq!(phases(&variants[0])[0]["objects"], 150);
}

/// The fit of `variant`'s `metric` in `phase`.
fn fit<'a>(report: &'a Value, variant: &str, phase: &str, metric: &str) -> &'a Value {
    report["fits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["variant"] == variant && f["phase"] == phase && f["metric"] == metric)
        .unwrap_or_else(|| panic!("no fit of {variant} / {phase} / {metric}"))
}

#[test]
fn the_fitted_lines_predict_a_larger_run_and_check_and_diff_read_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = scenario(dir.path(), 800, &[100, 200, 400]);
    let swept_file = dir.path().join("swept.json");
    bin()
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(&swept_file)
        .assert()
        .success();
    let swept: Value = serde_json::from_slice(&std::fs::read(&swept_file).unwrap()).unwrap();
    assert_eq!(
        swept["scenario"]["sweep"]["values"],
        serde_json::json!([100, 200, 400])
    );
    // The same scenario without its sweep, at 800 objects.
    let plain = run_report_with(&scenario(dir.path(), 800, &[]), &[]);
    for variant in plain["variants"].as_array().unwrap() {
        let base = variant["name"].as_str().unwrap();
        let list = &phases(variant)[0];
        for (metric, key) in [
            ("informer_live_bytes", "live_bytes"),
            ("informer_peak_live_bytes", "peak_live_bytes"),
        ] {
            let f = fit(&swept, base, "list", metric);
            assert_eq!(f["points"], 3);
            let predicted = f["fixed"].as_f64().unwrap() + 800.0 * f["per_unit"].as_f64().unwrap();
            let measured = list["components"]["informer"][key].as_f64().unwrap();
            let off = (predicted - measured).abs() / measured;
            assert!(
                off < 0.03,
                "{base} {metric}: {predicted} against {measured}"
            );
        }
    }
    // `check` gates every point's figures; a plain report is not a sweep's to compare.
    check(&swept_file, &swept_file).assert().success();
    let plain_file = dir.path().join("plain.json");
    std::fs::write(&plain_file, serde_json::to_vec(&plain).unwrap()).unwrap();
    let output = bin()
        .arg("diff")
        .arg(&swept_file)
        .arg(&plain_file)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("scenario.sweep"),
        "{output:?}"
    );
    // `size` predicts from the sweep, and refuses what it cannot predict from.
    let size = bin()
        .arg("size")
        .arg(&swept_file)
        .args(["--count", "pods=800"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&size.stdout);
    assert!(size.status.success(), "{size:?}");
    assert!(table.contains("predicted for 800 Pod"), "{table}");
    assert!(
        table.contains("shared array, client-go, pages of 7"),
        "{table}"
    );
    assert!(table.contains(" ± "), "{table}");
    for (args, expected) in [
        (
            vec!["--count", "ConfigMap=10"],
            "measures Pod objects: give their count",
        ),
        (
            vec!["--count", "Pod=10", "--count", "Secret=5"],
            "--count Secret: no report measures Secret objects",
        ),
    ] {
        let refused = bin()
            .arg("size")
            .arg(&swept_file)
            .args(args)
            .output()
            .unwrap();
        assert_eq!(refused.status.code(), Some(2));
        assert!(
            String::from_utf8_lossy(&refused.stderr).contains(expected),
            "{refused:?}"
        );
    }
    // A scenario is run first, and predicts the same.
    let from_scenario = bin()
        .arg("size")
        .arg(&file)
        .args(["--count", "pods=800"])
        .output()
        .unwrap();
    assert!(from_scenario.status.success(), "{from_scenario:?}");
    assert_eq!(String::from_utf8_lossy(&from_scenario.stdout), table);
    let refused = bin()
        .arg("size")
        .arg(&plain_file)
        .args(["--count", "Pod=10"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("has no sweep over `count`"),
        "{refused:?}"
    );
}

#[test]
fn size_counts_a_custom_resource_by_the_name_its_sample_gives() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("widget.yaml"),
        "apiVersion: example.com/v1\nkind: Widget\n\
         metadata: {name: w, namespace: default, generation: 1}\nspec: {size: 3, parts: [a, b]}\n",
    )
    .unwrap();
    let file = dir.path().join("widgets.toml");
    std::fs::write(
        &file,
        "name = \"widgets\"\n[objects]\nsample = \"widget.yaml\"\ncount = 20\n\
         [sweep]\ncount = [20, 40, 80]\n[[variant]]\nname = \"dynamic\"\n\
         [[phase]]\nkind = \"list\"\n",
    )
    .unwrap();
    let size = |count: &str| {
        bin()
            .arg("size")
            .arg(&file)
            .args(["--count", count])
            .output()
            .unwrap()
    };
    for name in ["Widget", "widgets"] {
        let predicted = size(&format!("{name}=5000"));
        assert!(predicted.status.success(), "{predicted:?}");
        let table = String::from_utf8_lossy(&predicted.stdout);
        assert!(
            table.contains("predicted for 5,000 Widget") && table.contains("dynamic"),
            "{table}"
        );
    }
    let refused = size("Gadget=5");
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("unknown kind \"Gadget\"") && said.contains("Widget"),
        "{said}"
    );
}
