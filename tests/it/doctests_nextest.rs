//! Rust doc tests under the nextest adapter (found on dtolnay/itoa, 2026-12-05: `candor
//! test` picks nextest when it is installed, nextest cannot run doc tests, and the
//! crate's doc tests silently did not run): the suite's run adds each library's `cargo
//! test --doc`, under the ids the cargo adapter gives, and a doc test's id selects it.

use crate::doctests::{CHECKED_BY_A_DOC_TEST, SUB_DOC_TEST, broken};
use crate::gate_batch::strings;
use crate::gate_batch_rust_go::cargo_change_from;

/// The lane's policy under nextest: the whole suite once, then the touched tests.
const POLICY: &str = "[lane]\nmin_replays = 2\n\n[runner]\nkind = \"nextest\"\n";

/// `candor test` with nextest: one `cargo nextest run`, then `cargo test --doc` for the
/// library; the broken example is red under the cargo adapter's id, and `candor compare`
/// runs that doc test alone on either side (green at the merge base).
#[test]
fn candor_test_under_nextest_runs_the_doc_tests_too() {
    let suite = cargo_change_from(
        "[runner]\nkind = \"nextest\"\n",
        &[("src/lib.rs", CHECKED_BY_A_DOC_TEST)],
        &[("src/lib.rs", &broken())],
    );
    let ran = suite.candor(&["test", "--format", "json"], &[]);
    assert_eq!(ran.exit, 1, "a red test: {ran:?}");
    let run = &ran.lines_of("test-run")[0];
    assert_eq!(run["red"], 1, "{ran:?}");
    // The unit test (nextest) and the doc test (cargo test --doc).
    assert_eq!(run["tests"], 2, "{ran:?}");
    let red: Vec<serde_json::Value> = ran
        .lines_of("verdict")
        .iter()
        .map(|verdict| verdict["test"].clone())
        .collect();
    assert_eq!(red, [serde_json::json!(SUB_DOC_TEST)], "{ran:?}");
    let argvs = run["argv"].as_array().expect("argvs");
    assert_eq!(argvs.len(), 2, "{ran:?}");
    assert!(
        strings(&argvs[0])
            .windows(2)
            .any(|w| w == ["nextest", "run"]),
        "{argvs:?}"
    );
    assert!(
        strings(&argvs[1]).windows(2).any(|w| w == ["--doc", "-p"]),
        "one `cargo test --doc -p calc@0.1.0` for the library: {argvs:?}"
    );

    crate::doctests::compare_selects_the_doc_test_alone(&suite);
}

/// The lane under nextest: the whole suite's run judges the doc test, so a change that
/// breaks the function only the doc test checks is refused, and a clean one (a new
/// function with a doc test of its own) passes with both doc tests run.
#[test]
fn the_lane_under_nextest_refuses_a_change_only_a_doc_test_catches() {
    crate::doctests::refuses_a_doc_test_regression_and_accepts_a_clean_change(POLICY);
}

/// A crate whose only tests are doc tests: nextest finds no test (exit 4 by default,
/// `no tests to run`), which is no failure when the doc tests run after it.
#[test]
fn a_crate_with_doc_tests_alone_runs_under_nextest() {
    let only_docs = "//! Arithmetic.\n\n/// Subtracts.\n///\n/// ```\n/// assert_eq!(calc::sub(5, 3), 2);\n/// ```\npub fn sub(a: i32, b: i32) -> i32 {\n    a - b\n}\n";
    let suite = cargo_change_from(
        "[runner]\nkind = \"nextest\"\n",
        &[("src/lib.rs", only_docs)],
        &[(
            "src/lib.rs",
            &only_docs.replace("    a - b\n", "    a + b\n"),
        )],
    );
    let ran = suite.candor(&["test", "--format", "json"], &[]);
    assert_eq!(ran.exit, 1, "a red test: {ran:?}");
    let run = &ran.lines_of("test-run")[0];
    assert_eq!(run["tests"], 1, "{ran:?}");
    let red: Vec<serde_json::Value> = ran
        .lines_of("verdict")
        .iter()
        .map(|verdict| verdict["test"].clone())
        .collect();
    assert_eq!(
        red,
        [serde_json::json!("calc::doc::src/lib.rs - sub (line 5)")],
        "{ran:?}"
    );
}
