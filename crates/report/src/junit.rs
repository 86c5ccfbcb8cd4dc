//! `check --junit FILE`: the gate as JUnit XML, which CI systems show natively. Each gated
//! figure is a test case (`variant / phase / metric`, its class the scenario), failed
//! when it rose beyond its tolerance; a store that stopped matching the server and a
//! variant that failed or stopped early are failed cases too. Figures no tolerance gates
//! (RSS, durations, unless asked) are not cases: they cannot fail.

use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};

use crate::compare::{Comparison, Row, Verdict};
use crate::diff::value;

/// The comparison as a JUnit report: one suite, the scenario's.
pub fn render_junit(comparison: &Comparison) -> String {
    let scenario = &comparison.scenario;
    let mut suite = TestSuite::new(format!("informer-mem check: {scenario}"));
    for row in comparison.rows.iter().filter(|r| r.tolerance.is_some()) {
        suite.add_test_case(figure_case(scenario, row));
    }
    for lost in &comparison.lost_consistency {
        let name = format!("{} / {} / store", lost.variant, lost.phase);
        let message = "the store stopped matching the server's objects at the phase's end";
        suite.add_test_case(failed(scenario, name, message.to_owned()));
    }
    for variant in &comparison.failed_variants {
        let name = format!("{} / run", variant.variant);
        let message = match &variant.error {
            Some(error) => format!("the variant failed: {error}"),
            None => format!(
                "the variant completed {} of its {} phases",
                variant.head_phases, variant.base_phases
            ),
        };
        suite.add_test_case(failed(scenario, name, message));
    }
    let mut report = quick_junit::Report::new("informer-mem check");
    report.add_test_suite(suite);
    report
        .to_string()
        .expect("a report of plain strings serializes")
}

/// One gated figure's case: failed on a regression, with the move and the tolerance.
fn figure_case(scenario: &str, row: &Row) -> TestCase {
    let name = format!("{} / {} / {}", row.variant, row.phase, row.metric.as_str());
    let (base, head) = (value(row.metric, row.base), value(row.metric, row.head));
    let tolerance = row.tolerance.unwrap_or_default();
    if row.verdict == Verdict::Regression {
        let percent = row
            .percent
            .map_or(String::new(), |p| format!(" ({p:+.2}%)"));
        let message =
            format!("rose from {base} to {head}{percent}, beyond its tolerance of {tolerance}%");
        return failed(scenario, name, message);
    }
    let mut case = TestCase::new(name, TestCaseStatus::success());
    case.set_classname(scenario);
    case.set_system_out(format!("{base} -> {head} (tolerance {tolerance}%)"));
    case
}

/// A failed case of `scenario` named `name`.
fn failed(scenario: &str, name: String, message: String) -> TestCase {
    let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
    status.set_message(message).set_type("regression");
    let mut case = TestCase::new(name, status);
    case.set_classname(scenario);
    case
}
