//! The terminal table: variant x phase, in human units.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, ContentArrangement, Table};

use super::{PhaseReport, Report, VariantReport};

/// Renders the report as a table followed by its notes.
pub fn render_table(report: &Report) -> String {
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header([
            "variant",
            "phase",
            "objects",
            "live",
            "kept",
            "peak",
            "peak/live",
            "allocs",
            "resident*",
            "store",
        ]);
    for variant in &report.variants {
        add_rows(&mut table, variant);
    }
    for column in 2..9 {
        if let Some(c) = table.column_mut(column) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let objects = &report.scenario.objects;
    let mut out = format!(
        "{}: {} {:?} objects, seed {} ({})\n{table}\n",
        report.scenario.name,
        thousands(objects.count),
        objects.kind,
        objects.seed,
        report.scenario.file,
    );
    out.push_str(
        "live, peak, allocs: exact (counting allocator); kept: live as a share of live after the first phase\n\
         peak/live: the phase's peak over what is live at its end\n\
         * resident: jemalloc's resident bytes, advisory (pages decay back to the OS over ~10 s)\n\
         store: the informer's store against the server's objects (keys, resourceVersions, UIDs)\n",
    );
    for variant in report.variants.iter().filter(|v| v.error.is_some()) {
        let error = variant.error.as_deref().unwrap_or_default();
        out.push_str(&format!("variant {:?} failed: {error}\n", variant.name));
    }
    out
}

fn add_rows(table: &mut Table, variant: &VariantReport) {
    let first_live = variant.phases.first().map(|p| p.measurement.live_bytes);
    for (i, phase) in variant.phases.iter().enumerate() {
        let m = &phase.measurement;
        let kept = match first_live {
            Some(first) if i > 0 => format!("{:.1}%", m.live_bytes.ratio_of(first) * 100.0),
            _ => String::new(),
        };
        table.add_row([
            if i == 0 {
                variant.name.clone()
            } else {
                String::new()
            },
            phase.name.clone(),
            thousands(phase.objects),
            m.live_bytes.to_string(),
            kept,
            m.peak_live_bytes.to_string(),
            format!("{:.2}x", phase.peak_over_live),
            thousands(m.alloc_count),
            m.jemalloc
                .map_or_else(|| "-".to_owned(), |j| j.resident.to_string()),
            store_verdict(phase),
        ]);
    }
    if variant.phases.is_empty() {
        table.add_row([
            variant.name.as_str(),
            "(failed)",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
        ]);
    }
}

/// `ok`, or what differs: `3 missing, 1 stale` (`(expected)` when the scenario says so).
fn store_verdict(phase: &PhaseReport) -> String {
    let c = &phase.consistency;
    if c.consistent {
        return "ok".to_owned();
    }
    let parts: Vec<String> = [
        ("missing", c.missing),
        ("extra", c.extra),
        ("stale", c.stale),
    ]
    .into_iter()
    .filter(|&(_, n)| n > 0)
    .map(|(what, n)| format!("{} {what}", thousands(n)))
    .collect();
    let expected = if phase.expect_consistent {
        ""
    } else {
        " (expected)"
    };
    format!("{}{expected}", parts.join(", "))
}

/// `1234567` as `1,234,567`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(578_023), "578,023");
        assert_eq!(thousands(12_345_678), "12,345,678");
    }
}
