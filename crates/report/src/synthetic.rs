//! A synthetic report for unit tests of what reads reports.

use super::RequestCounts;
use crate::{Consistency, FORMAT_VERSION, PhaseReport, Report, ScenarioInfo, Tool, VariantReport};
use measure::Measurement;
use scenario::{ApiServerSpec, Implementation, ObjectSpec, PhaseKind, VariantConfig};
use units::Bytes;

/// A report of `variants` x `phases` with figures that follow from the positions,
/// plus `bump` to every alloc_count of variant 1.
pub(crate) fn report(variants: usize, phases: usize, bump: u64) -> Report {
    let variant = |v: usize| VariantReport {
        name: format!("variant {v} | piped"),
        config: VariantConfig::defaults(Implementation::Builtin),
        server: Default::default(),
        scope: Default::default(),
        error: None,
        setup: None,
        subject: None,
        point: None,
        phases: (0..phases)
            .map(|p| {
                let base = (v as u64 + 1) * 1_000_000 + p as u64 * 1_000;
                PhaseReport {
                    name: format!("phase-{p}"),
                    kind: if p == 0 {
                        PhaseKind::List
                    } else {
                        PhaseKind::Update
                    },
                    graceful: false,
                    objects: 100,
                    server_objects: 100,
                    measurement: Measurement {
                        alloc_count: base + if v == 1 { bump } else { 0 },
                        dealloc_count: base / 2,
                        realloc_count: 10,
                        alloc_bytes: Bytes(base * 64),
                        live_bytes: Bytes(base * 32 - if v == 2 { bump * 4096 } else { 0 }),
                        peak_live_bytes: Bytes(base * 40),
                        jemalloc: None,
                        rss_bytes: Some(Bytes(base * 50 + bump * 999)),
                        rss_peak_bytes: None,
                        duration_ms: 12.5,
                        components: None,
                    },
                    api_requests: RequestCounts {
                        list: 1,
                        ..RequestCounts::default()
                    },
                    consistency: Consistency {
                        consistent: true,
                        ..Consistency::default()
                    },
                    expect_consistent: true,
                    peak_over_live: 1.25,
                    settle: None,
                    samples: Vec::new(),
                    events: None,
                    informer_synced: true,
                    subject: None,
                    kube_apiserver: None,
                }
            })
            .collect(),
    };
    Report {
        format_version: FORMAT_VERSION,
        tool: Tool {
            name: "informer-mem".to_owned(),
            version: "test".to_owned(),
            allocator: Default::default(),
        },
        scenario: ScenarioInfo {
            name: "synthetic".to_owned(),
            description: String::new(),
            file: "synthetic.toml".to_owned(),
            objects: ObjectSpec::pods(100),
            apiserver: ApiServerSpec::default(),
            gate: Default::default(),
            timeline: None,
            sweep: None,
        },
        variants: (0..variants).map(variant).collect(),
        server: None,
        fits: Vec::new(),
        shard: None,
    }
}
