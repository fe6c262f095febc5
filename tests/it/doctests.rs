//! Rust doc tests under the cargo adapter (found in a trial, 2026-12-04: a crate whose only
//! check of `sub` was a doc test was green under `candor test` and accepted by the lane
//! after a change that broke `sub`, while `cargo test` failed): the suite's run runs each
//! library's doc tests, ids `PKG::doc::src/lib.rs - f (line N)`, and `[lib] doctest =
//! false` is no way around them.

use crate::gate_batch::{
    gate_report, gate_report_with, only_infrastructure_change, reason_kinds, strings,
};
use crate::gate_batch_rust_go::cargo_change_from;
use crate::triage_support::Ran;

/// The lane's policy: the whole suite once, then the touched tests.
const POLICY: &str = "[lane]\nmin_replays = 2\n\n[runner]\nkind = \"cargo\"\n";

/// `calc` at the base: `sub` checked by its doc test alone.
pub(crate) const CHECKED_BY_A_DOC_TEST: &str = "//! Arithmetic.\n\n/// Adds.\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n/// Subtracts.\n///\n/// ```\n/// assert_eq!(calc::sub(5, 3), 2);\n/// ```\npub fn sub(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(1, 1), 2);\n    }\n}\n";

/// The doc test's id, as rustdoc names it (the line of its opening fence) after the
/// package and `doc`.
pub(crate) const SUB_DOC_TEST: &str = "calc::doc::src/lib.rs - sub (line 10)";

/// `sub` broken; its doc test and everything else kept.
pub(crate) fn broken() -> String {
    CHECKED_BY_A_DOC_TEST.replace("    a - b\n", "    a + b\n")
}

/// `candor test` reports the doc test red under its id, and `candor compare` runs it by
/// that id on either side.
#[test]
fn candor_test_reports_a_failing_doc_test_red_under_its_own_id() {
    let broken = broken();
    let suite = cargo_change_from(
        "[runner]\nkind = \"cargo\"\n",
        &[("src/lib.rs", CHECKED_BY_A_DOC_TEST)],
        &[("src/lib.rs", &broken)],
    );
    let ran = suite.candor(&["test", "--format", "json"], &[]);
    assert_eq!(ran.exit, 1, "a red test: {ran:?}");
    let run = &ran.lines_of("test-run")[0];
    assert_eq!(run["red"], 1, "{ran:?}");
    // The unit test and the doc test.
    assert_eq!(run["tests"], 2, "{ran:?}");
    let red: Vec<serde_json::Value> = ran
        .lines_of("verdict")
        .iter()
        .map(|verdict| verdict["test"].clone())
        .collect();
    assert_eq!(red, [serde_json::json!(SUB_DOC_TEST)], "{ran:?}");
    let argvs = strings(&run["argv"].as_array().expect("argvs")[1]);
    assert!(
        argvs.windows(2).any(|w| w == ["--doc", "-p"]),
        "one `cargo test --doc -p calc@0.1.0` for the library: {argvs:?}"
    );

    compare_selects_the_doc_test_alone(&suite);
}

/// `candor compare` by the doc test's id selects it alone: red on the change, green at
/// the merge base.
pub(crate) fn compare_selects_the_doc_test_alone(suite: &crate::triage_support::Suite) {
    let ran = suite.candor(
        &[
            "compare",
            SUB_DOC_TEST,
            "--runs",
            "1",
            "--base",
            "main",
            "--format",
            "json",
        ],
        &[],
    );
    let compared = &ran.lines_of("compare")[0];
    assert_eq!(compared["test"], SUB_DOC_TEST, "{ran:?}");
    assert_eq!(compared["branch"]["failures"], 1, "{ran:?}");
    assert_eq!(compared["base"]["failures"], 0, "{ran:?}");
    assert_eq!(compared["base"]["runs"], 1, "{ran:?}");
}

/// The lane's report on a change that writes `files` over the base's `calc`.
fn lane(files: &[(&str, &str)]) -> (Ran, serde_json::Value) {
    let suite = cargo_change_from(POLICY, &[("src/lib.rs", CHECKED_BY_A_DOC_TEST)], files);
    gate_report(&suite)
}

#[test]
fn the_lane_refuses_a_change_only_a_doc_test_catches_and_accepts_a_clean_one() {
    refuses_a_doc_test_regression_and_accepts_a_clean_change(POLICY);
}

/// The lane under `policy`'s runner: a change that breaks `sub`, which only its doc test
/// checks, is refused with that doc test red; a new function with a doc test of its own,
/// `sub` kept, passes with the unit test and both doc tests run.
pub(crate) fn refuses_a_doc_test_regression_and_accepts_a_clean_change(policy: &str) {
    let lane = |files: &[(&str, &str)]| {
        let suite = cargo_change_from(policy, &[("src/lib.rs", CHECKED_BY_A_DOC_TEST)], files);
        gate_report(&suite)
    };
    let (ran, report) = lane(&[("src/lib.rs", &broken())]);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    assert_eq!(
        strings(&report["suite"]["failed"]),
        [SUB_DOC_TEST],
        "{report:#}"
    );

    let clean = CHECKED_BY_A_DOC_TEST.replace(
        "#[cfg(test)]",
        "/// Multiplies.\n///\n/// ```\n/// assert_eq!(calc::mul(2, 3), 6);\n/// ```\npub fn mul(a: i32, b: i32) -> i32 {\n    a * b\n}\n\n#[cfg(test)]",
    );
    let (ran, report) = lane(&[("src/lib.rs", &clean)]);
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    assert_eq!(
        report["suite"]["tests"], 3,
        "the unit test and two doc tests ran: {report:#}"
    );
}

/// `[lib] doctest = false` beside the regression: cargo runs no doc test, the suite is
/// green, and only the manifest's change says why the lane must refuse.
#[test]
fn a_manifest_that_turns_the_doc_tests_off_is_refused() {
    let manifest = "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[lib]\ndoctest = false\n\n[dependencies]\n";
    let (ran, report) = lane(&[("src/lib.rs", &broken()), ("Cargo.toml", manifest)]);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    assert_eq!(only_infrastructure_change(&report)["path"], "Cargo.toml");
    assert_eq!(
        report["suite"]["failed"],
        serde_json::json!([]),
        "{report:#}"
    );
}

/// rustdoc's flags in the lane's environment (a CI variable, a shell's) cannot skip a
/// doc test: the lane removes them as it removes the other runners' option variables.
#[test]
fn rustdoc_flags_in_the_environment_do_not_skip_a_doc_test_in_the_lane() {
    let suite = cargo_change_from(
        POLICY,
        &[("src/lib.rs", CHECKED_BY_A_DOC_TEST)],
        &[("src/lib.rs", &broken())],
    );
    for variable in [
        "RUSTDOCFLAGS",
        "CARGO_BUILD_RUSTDOCFLAGS",
        "CARGO_ENCODED_RUSTDOCFLAGS",
    ] {
        let flags = if variable == "CARGO_ENCODED_RUSTDOCFLAGS" {
            "--test-args\x1f--skip=sub"
        } else {
            "--test-args --skip=sub"
        };
        let (ran, report) = gate_report_with(&suite, &[(variable, flags)]);
        assert_eq!(ran.exit, 1, "{variable}: {ran:?}\n{report:#}");
        assert_eq!(
            strings(&report["suite"]["failed"]),
            [SUB_DOC_TEST],
            "{variable}: {report:#}"
        );
    }
}

/// A doc test the change stops running is a removed test (`tests-removed`), found by its
/// item since its line shifts with edits: `sub` broken and its example fenced `ignore`
/// is refused, naming the doc test; the example only moved down, still passing, is not.
#[test]
fn the_lane_refuses_a_doc_test_the_change_stops_running_and_accepts_a_moved_one() {
    let ignored = broken().replace(
        "/// ```\n/// assert_eq!(calc::sub",
        "/// ```ignore\n/// assert_eq!(calc::sub",
    );
    let (ran, report) = lane(&[("src/lib.rs", &ignored)]);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    // The suite is green: rustdoc reports the ignored example as ignored.
    assert_eq!(
        report["suite"]["failed"],
        serde_json::json!([]),
        "{report:#}"
    );
    assert_eq!(reason_kinds(&report), ["tests-removed"], "{report:#}");
    let removed = strings(&report["base_judgement"]["removed"]);
    assert_eq!(removed.len(), 1, "{report:#}");
    assert!(
        removed[0].starts_with("the doc test `src/lib.rs - sub (line 10)`")
            && removed[0].contains("check `sub` in a #[test]"),
        "{removed:?}"
    );

    // Moved down three lines (its id now says line 13), `sub` kept: accepted.
    let moved = CHECKED_BY_A_DOC_TEST.replace(
        "/// Subtracts.\n",
        "/// Subtracts.\n///\n/// The second from the first.\n///\n",
    );
    let (ran, report) = lane(&[("src/lib.rs", &moved)]);
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    assert_eq!(report["suite"]["tests"], 2, "{report:#}");
    assert_eq!(
        report["base_judgement"]["removed"],
        serde_json::json!([]),
        "{report:#}"
    );
}
