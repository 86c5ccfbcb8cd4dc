use super::*;

pub(crate) const MINIMAL: &str = r#"
name = "t"
[objects]
count = 10
[[variant]]
name = "a"
[[phase]]
kind = "list"
"#;

/// The minimal scenario with `settings` added to its variant.
fn with_variant_settings(settings: &str) -> Result<Scenario, ScenarioError> {
    Scenario::parse(
        Path::new("x.toml"),
        &MINIMAL.replace("name = \"a\"", &format!("name = \"a\"\n{settings}")),
    )
}

pub(crate) fn error_of(text: &str) -> String {
    Scenario::parse(Path::new("x.toml"), text)
        .unwrap_err()
        .to_string()
}

#[test]
fn minimal_scenario_gets_documented_defaults() {
    let s = Scenario::parse(Path::new("x.toml"), MINIMAL).unwrap();
    assert_eq!(s.objects.seed, 1);
    assert_eq!(s.objects.namespaces, 10);
    assert_eq!(s.objects.containers, 1);
    assert_eq!(s.objects.managed_fields, 2);
    assert!(!s.objects.last_applied);
    assert_eq!(s.objects.data_keys, None);
    let config = &s.variants[0].config;
    assert_eq!(config, &VariantConfig::defaults(Implementation::Builtin));
    assert_eq!(config.store, StoreMode::PerItemCopy);
    assert_eq!(config.page_size, 500);
    assert_eq!(config.list_rules, ListRules::ClientGo);
    assert_eq!(config.initial_sync, InitialSync::List);
    assert_eq!(config.relist, Relist::Buffered);
    assert_eq!(config.projection, Projection::Full);
    assert!(config.transform.is_empty() && config.transform_initial_events);
    assert_eq!(s.phases[0].name, "list");
}

#[test]
fn unknown_store_names_key_line_and_choices() {
    let text = MINIMAL.replace("name = \"a\"", "name = \"a\"\nstore = \"shared\"");
    let e = error_of(&text);
    assert!(
        e.starts_with("failed to load `x.toml`: at `variant[0].store` (line 7):"),
        "{e}"
    );
    assert!(
        e.contains("shared-array") && e.contains("per-item-copy"),
        "{e}"
    );
}

#[test]
fn unknown_key_is_rejected_with_its_path() {
    let e = error_of(&MINIMAL.replace("count = 10", "count = 10\ncolour = 3"));
    assert!(
        e.contains("at `objects.colour`") || e.contains("at `objects`"),
        "{e}"
    );
    assert!(e.contains("unknown field `colour`"), "{e}");
    assert!(e.contains("(line 5)"), "{e}");
}

#[test]
fn zero_and_negative_counts_are_rejected() {
    for bad in ["0", "-5"] {
        let e = error_of(&MINIMAL.replace("count = 10", &format!("count = {bad}")));
        assert!(e.contains("at `objects.count` (line 4)"), "{e}");
        assert!(e.contains("out of range"), "{e}");
    }
}

#[test]
fn fraction_outside_unit_interval_is_rejected() {
    for bad in ["0.0", "1.5", "-0.1"] {
        let text = format!("{MINIMAL}[[phase]]\nkind = \"delete\"\nfraction = {bad}\n");
        let e = error_of(&text);
        assert!(e.contains("at `phase[1].fraction` (line 11)"), "{e}");
    }
    let ok = format!("{MINIMAL}[[phase]]\nkind = \"delete\"\nfraction = 1.0\n");
    assert!(Scenario::parse(Path::new("x.toml"), &ok).is_ok());
}

#[test]
fn malformed_toml_names_the_line() {
    let e = error_of("name = \"t\"\n[objects\ncount = 1\n");
    assert!(e.starts_with("failed to load `x.toml`: line 2:"), "{e}");
}

#[test]
fn first_phase_must_be_list() {
    let text = MINIMAL.replace("kind = \"list\"", "kind = \"delete\"\ncount = 1");
    let e = error_of(&text);
    assert!(e.contains("at `phase[0].kind`"), "{e}");
    assert!(e.contains("hint:"), "{e}");
}

#[test]
fn mutating_phase_needs_exactly_one_amount() {
    let none = format!("{MINIMAL}[[phase]]\nkind = \"update\"\n");
    assert!(error_of(&none).contains("needs `fraction` or `count`"));
    let both = format!("{MINIMAL}[[phase]]\nkind = \"update\"\ncount = 1\nfraction = 0.5\n");
    assert!(error_of(&both).contains("not both"));
}

#[test]
fn fraction_rounds_to_nearest_at_least_one_and_count_caps() {
    assert_eq!(Amount::Fraction(0.999).of(10_000), 9_990);
    assert_eq!(Amount::Fraction(1.0).of(7), 7);
    // A fraction of a few objects changes one, not none; of none, none.
    assert_eq!(Amount::Fraction(0.1).of(3), 1);
    assert_eq!(Amount::Fraction(0.001).of(1), 1);
    assert_eq!(Amount::Fraction(0.5).of(0), 0);
    assert_eq!(Amount::Count(50).of(7), 7);
}

#[test]
fn a_selector_picks_the_objects_of_a_phase() {
    let parse = |text: &str| Scenario::parse(Path::new("x.toml"), text);
    let s = parse(&format!(
        "{MINIMAL}[[phase]]\nkind = \"delete\"\nselector = \"app in (web,api)\"\n\
         [[phase]]\nkind = \"update\"\nname = \"canaries\"\nselector = \"!canary\"\ncount = 2\n"
    ))
    .unwrap();
    assert_eq!(s.phases[1].selector.to_string(), "app in (web,api)");
    assert_eq!(
        s.phases[1].action,
        PhaseAction::Delete {
            amount: Amount::Fraction(1.0)
        }
    );
    assert_eq!(
        s.phases[2].action,
        PhaseAction::Update {
            amount: Amount::Count(2)
        }
    );
    assert!(s.phases[0].selector.is_empty());
    let bad = parse(&format!(
        "{MINIMAL}[[phase]]\nkind = \"delete\"\nselector = \"app in web\"\n"
    ))
    .unwrap_err()
    .to_string();
    assert!(
        bad.contains("phase[1].selector") && bad.contains("invalid label selector"),
        "{bad}"
    );
    let misplaced = parse(&format!(
        "{MINIMAL}[[phase]]\nkind = \"create\"\ncount = 1\nselector = \"app=web\"\n"
    ))
    .unwrap_err()
    .to_string();
    assert!(
        misplaced.contains("a `create` phase takes no `selector`"),
        "{misplaced}"
    );
}

#[test]
fn create_and_recreate_phases_take_amounts_and_history_is_bounded() {
    let text = format!(
        "{MINIMAL}[apiserver]\nhistory_events = 500\n[[phase]]\nkind = \"create\"\ncount = 5\n[[phase]]\nkind = \"recreate\"\nfraction = 0.1\n"
    );
    let s = Scenario::parse(Path::new("x.toml"), &text).unwrap();
    assert_eq!(s.apiserver.history_events, Some(500));
    assert_eq!(
        s.phases[1].action,
        PhaseAction::Create {
            amount: Amount::Count(5)
        }
    );
    assert_eq!(s.phases[2].action.kind(), PhaseKind::Recreate);
    let bad = MINIMAL.replace("[objects]", "[apiserver]\nhistory_events = 0\n[objects]");
    assert!(error_of(&bad).contains("at `apiserver.history_events`"));
}

#[test]
fn a_create_count_is_exact_and_other_counts_stop_at_the_live_objects() {
    // A create of 3 after every object was deleted made none.
    assert_eq!(Amount::Count(3).created(0), 3);
    assert_eq!(Amount::Count(3).of(0), 0);
    assert_eq!(Amount::Count(5_000).created(1_000), 5_000);
    assert_eq!(Amount::Count(5_000).of(1_000), 1_000);
    assert_eq!(Amount::Fraction(0.5).created(1_000), 500);
    assert_eq!(Amount::Fraction(0.5).created(0), 0);
}

#[test]
fn outage_flags_apply_to_mutating_phases_only() {
    let text = format!(
        "{MINIMAL}[[phase]]\nkind = \"update\"\ncount = 3\ndisconnect = true\ncompact = true\n"
    );
    let s = Scenario::parse(Path::new("x.toml"), &text).unwrap();
    assert!(s.phases[1].disconnect && s.phases[1].compact);
    assert!(!s.phases[0].disconnect);
    let bad = MINIMAL.replace("kind = \"list\"", "kind = \"list\"\ncompact = true");
    assert!(error_of(&bad).contains("at `phase[0].compact`"));
}

#[test]
fn graceful_deletes_are_for_delete_and_recreate_phases_of_pods() {
    let graceful =
        |kind: &str| format!("{MINIMAL}[[phase]]\nkind = \"{kind}\"\ncount = 3\ngraceful = true\n");
    for kind in ["delete", "recreate"] {
        let s = Scenario::parse(Path::new("x.toml"), &graceful(kind)).unwrap();
        assert!(s.phases[1].graceful && !s.phases[0].graceful);
    }
    let e = error_of(&graceful("update"));
    assert!(
        e.contains("at `phase[1].graceful`") && e.contains("hint:"),
        "{e}"
    );
    let e = error_of(&graceful("delete").replace("count = 10", "kind = \"ConfigMap\"\ncount = 10"));
    assert!(e.contains("at `phase[1].graceful`"), "{e}");
    assert!(e.contains("deletes a ConfigMap at once"), "{e}");
}

#[test]
fn variant_settings_are_read_and_checked_against_each_other() {
    let with = with_variant_settings;
    let s = with(
        "implementation = \"kube-runtime\"\ninitial_sync = \"watch-list\"\n\
         projection = \"metadata\"\ntransform = [\"managed-fields\", \"metadata.labels\"]",
    )
    .unwrap();
    let c = &s.variants[0].config;
    assert_eq!(c.implementation, Implementation::KubeRuntime);
    assert_eq!(c.list_rules, ListRules::KubeRuntime);
    assert_eq!(c.transform.len(), 2);
    let error = |settings: &str| with(settings).unwrap_err().to_string();
    let e = error("implementation = \"kube-runtime\"\nstore = \"shared-array\"");
    assert!(
        e.contains("at `variant[0].store`") && e.contains("hint:"),
        "{e}"
    );
    let e = error("transform_initial_events = false");
    assert!(
        e.contains("at `variant[0].transform_initial_events`"),
        "{e}"
    );
    let e = error("transform = [\"managed-fields\", \"metadata.name\"]");
    assert!(e.contains("at `variant[0].transform[1]` (line 7)"), "{e}");
    let e = error("projection = \"metadata\"\ntransform = [\"spec.volumes\"]");
    assert!(e.contains("only `metadata`"), "{e}");
    let dynamic =
        with("projection = \"dynamic\"\ntransform = [\"status\", \"spec.volumes\"]").unwrap();
    assert_eq!(dynamic.variants[0].config.projection, Projection::Dynamic);
    let e = error("projection = \"untyped\"");
    assert!(e.contains("`dynamic`"), "{e}");
    let e = error("transform = [\"managedfields\"]");
    assert!(e.contains("a Pod has no field `managedfields`"), "{e}");
    let e = error("relist = \"sometimes\"");
    assert!(e.contains("variant") && e.contains("incremental"), "{e}");
    let cm = MINIMAL.replace("count = 10", "count = 10\nkind = \"ConfigMap\"");
    let e = Scenario::parse(
        Path::new("x.toml"),
        &cm.replace("name = \"a\"", "name = \"a\"\ntransform = [\"status\"]"),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("a ConfigMap has no `status`"), "{e}");
    let data = cm.replace("name = \"a\"", "name = \"a\"\ntransform = [\"data\"]");
    let s = Scenario::parse(Path::new("x.toml"), &data).unwrap();
    assert_eq!(s.variants[0].config.transform[0].to_string(), "data");
}

#[test]
fn queues_handlers_informers_and_resyncs_are_read_and_checked() {
    let with = with_variant_settings;
    let s = with(
        "handlers = 2\nhandler_cost = [\"0ms\", \"5ms\"]\ninformers = 3\nshared = true\n\
         resync_period = \"10h\"\nuid_aware = true",
    )
    .unwrap();
    let c = &s.variants[0].config;
    // Handlers need a queue: client-go's default one.
    assert_eq!(c.queue, Some(QueueKind::RealFifo));
    assert_eq!(c.handler_cost_ms, vec![0, 5]);
    assert_eq!(c.resync_period_ms, 36_000_000);
    assert_eq!((c.informer_processes(), c.handlers_per_informer()), (1, 6));
    assert_eq!(c.handler_cost(3), 5);
    let c = &with("queue = \"delta-fifo\"\ninformers = 4")
        .unwrap()
        .variants[0]
        .config;
    assert_eq!((c.informer_processes(), c.handlers_per_informer()), (4, 0));
    let error = |settings: &str| with(settings).unwrap_err().to_string();
    for (settings, expected) in [
        (
            "handlers = 3\nhandler_cost = [\"1ms\", \"2ms\"]",
            "at `variant[0].handler_cost` (line 8): 2 costs for 3 handlers",
        ),
        ("handler_cost = \"1ms\"", "set `handlers` too"),
        ("handlers = 1\nhandler_cost = \"soon\"", "is not a duration"),
        ("resync_period = \"1h\"", "at `variant[0].resync_period`"),
        (
            "implementation = \"kube-runtime\"\nhandlers = 1",
            "at `variant[0].handlers`",
        ),
        (
            "handlers = 1\nrelist = \"incremental\"",
            "at `variant[0].relist`",
        ),
        ("uid_aware = true", "at `variant[0].uid_aware`"),
        ("informers = 0", "at `variant[0].informers`"),
        ("watch_read_cost = \"2m\"", "at most 60s"),
        ("queue = \"lifo\"", "delta-fifo"),
    ] {
        let e = error(settings);
        assert!(e.contains(expected), "{settings}: {e}");
    }
}

#[test]
fn resync_takes_no_amount_and_disconnect_needs_one() {
    let with = |phase: &str| {
        Scenario::parse(
            Path::new("x.toml"),
            &format!("{MINIMAL}\n[[phase]]\n{phase}\n"),
        )
    };
    let s = with("kind = \"disconnect\"\ncount = 3\ncompact = true").unwrap();
    assert_eq!(
        s.phases[1].action,
        PhaseAction::Disconnect {
            amount: Amount::Count(3)
        }
    );
    assert!(s.phases[1].compact);
    assert!(with("kind = \"disconnect\"").is_err());
    let e = with("kind = \"resync\"\ncount = 3")
        .unwrap_err()
        .to_string();
    assert!(e.contains("a `resync` phase takes no `count`"), "{e}");
    assert_eq!(
        with("kind = \"resync\"").unwrap().phases[1].action,
        PhaseAction::Resync
    );
}

#[test]
fn relist_phases_take_no_amount_and_consistency_is_expected_unless_said() {
    let text = format!(
        "{MINIMAL}[[phase]]\nkind = \"relist\"\n[[phase]]\nkind = \"delete\"\ncount = 1\nexpect_consistent = false\n"
    );
    let s = Scenario::parse(Path::new("x.toml"), &text).unwrap();
    assert_eq!(s.phases[1].action, PhaseAction::Relist);
    assert!(s.phases[1].expect_consistent);
    assert!(!s.phases[2].expect_consistent);
    let bad = format!("{MINIMAL}[[phase]]\nkind = \"relist\"\ncount = 3\n");
    assert!(error_of(&bad).contains("a `relist` phase takes no `count`"));
    let bad = format!("{MINIMAL}[[phase]]\nkind = \"relist\"\ncompact = true\n");
    assert!(error_of(&bad).contains("always disconnects and compacts"));
}

#[test]
fn the_gate_table_takes_metric_names_and_percentages() {
    let text = format!("{MINIMAL}[gate]\nlive_bytes = 2\nrss_bytes = 12.5\n");
    let scenario = Scenario::parse(Path::new("x.toml"), &text).unwrap();
    assert_eq!(
        scenario.gate.into_iter().collect::<Vec<_>>(),
        [(Metric::LiveBytes, 2.0), (Metric::RssBytes, 12.5)]
    );
    let e = error_of(&format!("{MINIMAL}[gate]\ncolour = 2\n"));
    assert!(e.contains("at `gate.colour` (line 10)"), "{e}");
    assert!(e.contains("alloc_count"), "{e}");
    let e = error_of(&format!("{MINIMAL}[gate]\nlive_bytes = -1\n"));
    assert!(e.contains("at `gate.live_bytes`"), "{e}");
    assert!(e.contains("0 or more"), "{e}");
    let e = error_of(&format!("{MINIMAL}[gate]\nlive_bytes = \"2%\"\n"));
    assert!(e.contains("gate.live_bytes"), "{e}");
}

#[test]
fn settle_phases_take_durations_and_variants_allocator_settings() {
    let text = format!(
        "{MINIMAL}[[phase]]\nkind = \"settle\"\nidle = \"2m\"\ndecay = \"500ms\"\n\
         [[phase]]\nkind = \"settle\"\nname = \"purge\"\ndecay = \"purge\"\n"
    );
    let scenario = Scenario::parse(Path::new("x.toml"), &text).unwrap();
    assert_eq!(
        scenario.phases[1].action,
        PhaseAction::Settle {
            idle_ms: 120_000,
            decay: Decay::Wait { ms: 500 }
        }
    );
    assert_eq!(
        scenario.phases[2].action,
        PhaseAction::Settle {
            idle_ms: 0,
            decay: Decay::Purge
        }
    );
    let e = error_of(&format!(
        "{MINIMAL}[[phase]]\nkind = \"settle\"\ndecay = \"soon\"\n"
    ));
    assert!(
        e.contains("at `phase[1].decay`") && e.contains("not a duration"),
        "{e}"
    );
    let e = error_of(&format!(
        "{MINIMAL}[[phase]]\nkind = \"update\"\ncount = 1\nidle = \"1s\"\n"
    ));
    assert!(e.contains("an `update` phase takes no `idle`"), "{e}");
    let e = error_of(&format!(
        "{MINIMAL}[[phase]]\nkind = \"settle\"\ncount = 1\n"
    ));
    assert!(e.contains("takes no `count`"), "{e}");

    let allocator = "[[variant]]\nname = \"b\"\n[variant.allocator]\n";
    let text =
        format!("{MINIMAL}{allocator}dirty_decay_ms = 0\nnarenas = 2\nbackground_thread = true\n");
    let scenario = Scenario::parse(Path::new("x.toml"), &text).unwrap();
    let config = &scenario.variants[1].config.allocator;
    assert_eq!(
        config.malloc_conf().as_deref(),
        Some("dirty_decay_ms:0,narenas:2,background_thread:true")
    );
    assert_eq!(scenario.variants[0].config.allocator.malloc_conf(), None);
    let e = error_of(&format!("{MINIMAL}{allocator}dirty_decay_ms = -2\n"));
    assert!(
        e.contains("at `variant[1].allocator.dirty_decay_ms`"),
        "{e}"
    );
    let e = error_of(&format!("{MINIMAL}{allocator}lg_page = 16\n"));
    assert!(e.contains("lg_page"), "{e}");
}

#[test]
fn duplicate_variant_names_are_rejected() {
    let text = format!("{MINIMAL}[[variant]]\nname = \"a\"\n");
    assert!(error_of(&text).contains("at `variant[1].name`"));
}

/// Found by the scenario fuzz target: a value that quotes Rust's names for the parser's
/// types is refused for what it is, and the message quotes it back as written.
#[test]
fn a_value_quoting_rust_type_names_is_quoted_back_not_taken_for_a_parser_message() {
    let text = include_str!("../../../tests/fixtures/fuzz/scenario-quotes-rust-names.toml");
    let error = Scenario::parse(Path::new("fuzz.toml"), text)
        .unwrap_err()
        .to_string();
    assert!(error.contains("at `name`"), "{error}");
    assert!(error.contains("invalid scenario name"), "{error}");
    assert!(
        error.contains("enum RawCost"),
        "quoted back as written: {error}"
    );
}

#[test]
fn watchers_and_shared_encodings_are_the_server_side_of_a_variant() {
    let s = with_variant_settings("watchers = 100\nshare_encodings = true").unwrap();
    let side = s.variants[0].server;
    assert_eq!((side.watchers, side.share_encodings), (100, true));
    // Not the informer's: its settings are untouched.
    assert_eq!(
        s.variants[0].config,
        VariantConfig::defaults(Implementation::Builtin)
    );
    let plain = Scenario::parse(Path::new("x.toml"), MINIMAL).unwrap();
    assert!(plain.variants[0].server.is_default());

    let e = with_variant_settings("watchers = 1001")
        .unwrap_err()
        .to_string();
    assert!(e.contains("at `variant[0].watchers`"), "{e}");
    let e = with_variant_settings("watchers = -1")
        .unwrap_err()
        .to_string();
    assert!(e.contains("at `variant[0].watchers`"), "{e}");
    let e = with_variant_settings("share_encodings = \"yes\"")
        .unwrap_err()
        .to_string();
    assert!(e.contains("share_encodings"), "{e}");
    // An external variant's program is served by a server set up as `serve` is.
    let e =
        with_variant_settings("implementation = \"external\"\ncommand = [\"true\"]\nwatchers = 2")
            .unwrap_err()
            .to_string();
    assert!(e.contains("watchers"), "{e}");
}

#[test]
fn nodes_are_cluster_scoped_with_images_and_nothing_of_other_kinds() {
    let objects = |extra: &str| {
        MINIMAL.replace(
            "count = 10",
            &format!("count = 10\nkind = \"Node\"\n{extra}"),
        )
    };
    let s = Scenario::parse(Path::new("x.toml"), &objects("")).unwrap();
    assert_eq!(s.objects.kind, ObjectKind::Node);
    assert_eq!(
        (s.objects.namespaces, s.objects.images),
        (1, Some(DEFAULT_NODE_IMAGES))
    );
    assert!(!s.objects.namespaced());
    assert!(
        s.real_server_refusal(false, false)
            .unwrap()
            .contains("cluster-scoped")
    );
    // Read only, the run makes no Node: it reads the cluster's own.
    assert_eq!(s.real_server_refusal(true, false), None);
    let e = error_of(&objects("namespaces = 3"));
    assert!(
        e.contains("at `objects.namespaces`") && e.contains("cluster-scoped"),
        "{e}"
    );
    let e = error_of(&objects("data_keys = 2"));
    assert!(e.contains("a Node has no `data`"), "{e}");
    let e = error_of(&objects("images = 1001"));
    assert!(e.contains("at `objects.images`"), "{e}");
    assert_eq!(
        Scenario::parse(Path::new("x.toml"), &objects("images = 7"))
            .unwrap()
            .objects
            .images,
        Some(7)
    );
    let e = error_of(&MINIMAL.replace("count = 10", "count = 10\nimages = 3"));
    assert!(e.contains("a Pod reports no images"), "{e}");
    let pods = Scenario::parse(Path::new("x.toml"), MINIMAL).unwrap();
    assert_eq!(pods.objects.images, None);
    // A pod's spec serializes as before: no `images` key in its reports.
    assert!(
        serde_json::to_value(&pods.objects)
            .unwrap()
            .get("images")
            .is_none()
    );
}

#[test]
fn selectors_are_the_scope_of_a_variant_and_fields_are_the_kinds() {
    let s = with_variant_settings(
        "label_selector = \"app in (web,api)\"\nfield_selector = \"spec.host=n1,status.phase!=Failed\"",
    )
    .unwrap();
    let scope = &s.variants[0].scope;
    assert_eq!(scope.label_selector.to_string(), "app in (web,api)");
    // The old `spec.host` is read as kube-apiserver reads it.
    assert_eq!(
        scope.field_selector.to_string(),
        "spec.nodeName=n1,status.phase!=Failed"
    );
    assert_eq!(
        scope.query(),
        "labelSelector=app+in+%28web%2Capi%29&fieldSelector=spec.nodeName%3Dn1%2Cstatus.phase%21%3DFailed"
    );
    assert!(
        Scenario::parse(Path::new("x.toml"), MINIMAL)
            .unwrap()
            .variants[0]
            .scope
            .is_default()
    );
    let e = with_variant_settings("field_selector = \"spec.containers=x\"")
        .unwrap_err()
        .to_string();
    assert!(e.contains("at `variant[0].field_selector`"), "{e}");
    assert!(
        e.contains("field label not supported: spec.containers"),
        "{e}"
    );
    // A ConfigMap has no node.
    let configmaps = MINIMAL.replace("count = 10", "kind = \"ConfigMap\"\ncount = 10");
    let e = error_of(&configmaps.replace(
        "name = \"a\"",
        "name = \"a\"\nfield_selector = \"spec.nodeName=n1\"",
    ));
    assert!(
        e.contains("field label not supported: spec.nodeName"),
        "{e}"
    );
    let e = with_variant_settings("label_selector = \"app in web\"")
        .unwrap_err()
        .to_string();
    assert!(e.contains("at `variant[0].label_selector`"), "{e}");
    // An external variant's program is told its scope through placeholders.
    let s = with_variant_settings(
        "implementation = \"external\"\ncommand = [\"x\", \"-l={label_selector}\"]\nlabel_selector = \"app=web\"",
    )
    .unwrap();
    assert_eq!(s.variants[0].scope.label_selector.to_string(), "app=web");
    let values = Placeholders {
        kubeconfig: String::new(),
        server: String::new(),
        token: String::new(),
        namespace: String::new(),
        resource: String::new(),
        api_version: String::new(),
        listen: String::new(),
        port: String::new(),
        label_selector: "app=web".to_owned(),
        field_selector: String::new(),
    };
    let subject = s.variants[0].subject.as_ref().unwrap();
    assert_eq!(subject.argv(&values), ["x", "-l=app=web"]);
    // ... and one that is never told would hold every object, failing the store check.
    let e = with_variant_settings(
        "implementation = \"external\"\ncommand = [\"x\", \"-l={label_selector}\"]\nfield_selector = \"metadata.name=a\"",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("at `variant[0].field_selector`"), "{e}");
    assert!(e.contains("{field_selector}"), "{e}");
    let s = with_variant_settings(
        "implementation = \"external\"\ncommand = [\"x\"]\nenv = { SELECTOR = \"{label_selector}\" }\nlabel_selector = \"app=web\"",
    );
    assert!(s.is_ok(), "{s:?}");
}

#[test]
fn an_unknown_placeholder_or_a_nul_is_refused_naming_its_key() {
    let external = |rest: &str| {
        with_variant_settings(&format!("implementation = \"external\"\n{rest}"))
            .unwrap_err()
            .to_string()
    };
    let e = external("command = [\"x\", \"--kubeconfig={kubeconifg}\"]");
    assert!(e.contains("at `variant[0].command[1]`"), "{e}");
    assert!(e.contains("{kubeconifg} is not a placeholder"), "{e}");
    assert!(e.contains("{kubeconfig}, {server}, {token}"), "{e}");
    let e = external("command = [\"x\"]\nenv = { TOKEN = \"{tokne}\" }");
    assert!(e.contains("at `variant[0].env.TOKEN`"), "{e}");
    let e = external("command = [\"x\"]\nstatus = \"http://{lisen}/status\"");
    assert!(e.contains("at `variant[0].status`"), "{e}");
    let e = external("command = [\"x\", \"a\\u0000b\"]");
    assert!(e.contains("at `variant[0].command[1]`"), "{e}");
    assert!(e.contains("NUL"), "{e}");
    let e = external("command = [\"x\"]\nenv = { \"A\\u0000\" = \"1\" }");
    assert!(e.contains("at `variant[0].env`"), "{e}");
    // Braces that are no placeholder pass: JSON, a Go template.
    let s = with_variant_settings(
        "implementation = \"external\"\ncommand = [\"x\", '{\"a\": 1}', \"{{.Name}}\", \"{Upper}\"]",
    );
    assert!(s.is_ok(), "{s:?}");
}

#[test]
fn a_component_takes_a_port_https_pprof_and_refusals_it_accepts_by_resource() {
    let s = with_variant_settings(
        "implementation = \"external\"\ncommand = [\"x\", \"--secure-port={port}\"]\npprof = \"https://{listen}/debug/pprof\"\npprof_token = \"{token}\"\naccept_refused = [\"persistentvolumes\", \"poddisruptionbudgets.policy\"]",
    )
    .unwrap();
    let subject = s.variants[0].subject.as_ref().unwrap();
    assert_eq!(
        subject.accept_refused,
        ["persistentvolumes", "poddisruptionbudgets.policy"]
    );
    assert_eq!(
        subject.pprof.as_deref(),
        Some("https://{listen}/debug/pprof")
    );
    assert_eq!(subject.pprof_token.as_deref(), Some("{token}"));
    let external = |rest: &str| {
        with_variant_settings(&format!(
            "implementation = \"external\"\ncommand = [\"x\"]\n{rest}"
        ))
        .unwrap_err()
        .to_string()
    };
    let e = external("accept_refused = [\"Pods\"]");
    assert!(e.contains("at `variant[0].accept_refused`"), "{e}");
    assert!(e.contains("\"Pods\" is not a resource's name"), "{e}");
    let e = external("pprof = \"ftp://{listen}/debug/pprof\"");
    assert!(e.contains("not an http:// or https:// URL"), "{e}");
    let e = external("pprof_token = \"{tokn}\"");
    assert!(e.contains("at `variant[0].pprof_token`"), "{e}");
    let e = with_variant_settings("accept_refused = [\"pods\"]")
        .unwrap_err()
        .to_string();
    assert!(e.contains("setting of an external variant"), "{e}");
}

#[test]
fn placeholders_are_filled_once_and_a_value_is_never_read_again() {
    let values = Placeholders {
        kubeconfig: "/tmp/{resource}/kubeconfig".to_owned(),
        server: "http://127.0.0.1:1".to_owned(),
        token: "t0k3n".to_owned(),
        namespace: "{server}".to_owned(),
        resource: "pods".to_owned(),
        api_version: "v1".to_owned(),
        listen: "127.0.0.1:2".to_owned(),
        port: "2".to_owned(),
        label_selector: String::new(),
        field_selector: String::new(),
    };
    assert_eq!(
        values.fill("--kubeconfig={kubeconfig} -n {namespace} {token}{{x}} {other}"),
        "--kubeconfig=/tmp/{resource}/kubeconfig -n {server} t0k3n{{x}} {other}"
    );
}

#[test]
fn the_approval_screen_shows_control_characters_escaped() {
    let s = with_variant_settings(
        "implementation = \"external\"\ncommand = [\"./ok\", \"harmless\\r./evil\", \"\\u001b[2K\", \"a\\u202eb\", \"it's\"]",
    )
    .unwrap();
    let shown = s.variants[0].subject.as_ref().unwrap().shown();
    assert_eq!(
        shown,
        "./ok $'harmless\\r./evil' $'\\u001b[2K' $'a\\u202eb' 'it'\\''s'"
    );
    assert!(!shown.chars().any(char::is_control), "{shown:?}");
    let e = error_of(&MINIMAL.replace("name = \"a\"", "name = \"a\\rb\""));
    assert!(e.contains("control character"), "{e}");
}

#[test]
fn a_namespace_is_the_scope_of_a_variant_of_a_namespaced_kind() {
    let s = with_variant_settings("namespace = \"checkout\"").unwrap();
    let scope = &s.variants[0].scope;
    assert_eq!(scope.namespaces, ["checkout"]);
    assert!(!scope.is_default());
    // Not a selector: the namespace is the path's, not the query's.
    assert_eq!(scope.query(), "");
    let e = with_variant_settings("namespace = \"Check_Out\"")
        .unwrap_err()
        .to_string();
    assert!(e.contains("at `variant[0].namespace`"), "{e}");
    assert!(e.contains("RFC 1123 label"), "{e}");
    let nodes = MINIMAL.replace("count = 10", "kind = \"Node\"\ncount = 10");
    let e = error_of(&nodes.replace("name = \"a\"", "name = \"a\"\nnamespace = \"checkout\""));
    assert!(e.contains("a Node is cluster-scoped"), "{e}");
    // An external variant's program is told it through `{namespace}`, or refused.
    let e = with_variant_settings(
        "implementation = \"external\"\ncommand = [\"x\"]\nnamespace = \"checkout\"",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("at `variant[0].namespace`") && e.contains("{namespace}"),
        "{e}"
    );
    let s = with_variant_settings(
        "implementation = \"external\"\ncommand = [\"x\", \"-n={namespace}\"]\nnamespace = \"checkout\"",
    )
    .unwrap();
    assert_eq!(s.variants[0].scope.namespaces, ["checkout"]);
    // A run against a real server keeps every object in one namespace of its own.
    let why = s.real_server_refusal(false, false).unwrap();
    assert!(why.contains("watches namespace \"checkout\""), "{why}");
}

#[test]
fn a_list_of_namespaces_is_an_informer_in_each() {
    let s = with_variant_settings("namespace = [\"checkout\", \"payments\"]").unwrap();
    assert_eq!(s.variants[0].scope.namespaces, ["checkout", "payments"]);
    let e = |setting: &str| with_variant_settings(setting).unwrap_err().to_string();
    let twice = e("namespace = [\"checkout\", \"checkout\"]");
    assert!(twice.contains("at `variant[0].namespace`"), "{twice}");
    assert!(twice.contains("\"checkout\" is listed twice"), "{twice}");
    let empty = e("namespace = []");
    assert!(empty.contains("the list of namespaces is empty"), "{empty}");
    let wrong = e("namespace = [\"checkout\", \"Pay_ments\"]");
    assert!(
        wrong.contains("\"Pay_ments\" is not a namespace's name"),
        "{wrong}"
    );
    let many: Vec<String> = (0..501).map(|i| format!("\"ns-{i}\"")).collect();
    let many = e(&format!("informers = 2\nnamespace = [{}]", many.join(", ")));
    assert!(many.contains("1002 informers, at most 1000"), "{many}");
    let number = e("namespace = 3");
    assert!(
        number.contains("expected a namespace's name or a list of them"),
        "{number}"
    );
}
