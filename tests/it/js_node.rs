//! The adapter of node's built-in test runner end to end (issue #20 item 2), on node itself
//! (tests/fixtures/js/node needs no package): the suite through candor's reporter, one
//! test by `--test-name-pattern` and its file (hostile titles included), runs that could not
//! run, the listing, and `candor test`, `triage`, `rerun`, `compare` and `gate` on a git
//! repository of the fixture (`js_support::Js`).

use candor::results::Outcome;
use candor::runner::process::SystemExecutor;
use candor::runner::{RunOptions, RunnerKind};

use crate::js_support::{
    ADDS, FLAKY, Js, READER, SKIPPED, SUBTRACTS, WRITER, flaky_outcome, outcome_of,
};
use crate::runner_support::{argv_holds, logs, not_run, outcomes};

const NODE: Js = Js {
    kind: RunnerKind::Node,
    command: &["node", "--test"],
    tests: "test",
    prelude: "const { describe, it } = require('node:test');\n",
    flaky_failure: ("AssertionError", r"drew [0-9.]+, below [0-9/]+", 23),
};

#[test]
fn the_suite_runs_through_candor_s_reporter_into_file_and_describe_ids() {
    let suite = NODE.project();
    let executor = SystemExecutor;
    let context = Js::context(&suite, &executor);
    let node = NODE.adapter(&suite, &context);
    assert!(!node.order_support().shuffles);
    for run in 0..2 {
        let report = node
            .run_suite(&context, RunOptions { seed: Some(1) })
            .expect("the suite runs");
        assert_eq!(report.runner, RunnerKind::Node);
        assert_eq!(report.exit_code(), 1, "{}", logs(&report));
        assert!(
            report.invocations[0]
                .argv
                .iter()
                .any(|a| a.starts_with("--test-reporter=")),
            "{:?}",
            report.invocations[0].argv
        );
        assert!(!argv_holds(&report, "--test-name-pattern"));
        // No seed: node 20's runner has no shuffle.
        assert_eq!(report.seed, None);
        let pairs = outcomes(&report);
        assert_eq!(pairs.len(), 7, "{pairs:?}");
        for (titles, expected) in [
            (ADDS, Outcome::Pass),
            (SUBTRACTS, Outcome::Fail),
            (SKIPPED, Outcome::Skip),
            (WRITER, Outcome::Pass),
            // Definition order: the writer always runs first.
            (READER, Outcome::Pass),
            (FLAKY, flaky_outcome(run)),
        ] {
            assert_eq!(
                outcome_of(&pairs, &NODE.basic(titles)),
                Some(expected),
                "{titles}, run {run}"
            );
        }
        assert_eq!(outcome_of(&pairs, &NODE.hostile()), Some(Outcome::Pass));
    }
}

#[test]
fn one_node_test_runs_alone_by_its_name_and_file() {
    NODE.one_test_runs_alone_by_its_id();
}

#[test]
fn unknown_and_hostile_node_ids_could_not_run_and_never_reach_a_shell() {
    NODE.unknown_and_hostile_ids_could_not_run_and_never_reach_a_shell();
}

#[test]
fn the_node_listing_names_every_test_and_runs_none() {
    NODE.the_listing_names_every_test_and_runs_none();
}

/// Two tests of the same title in two describes of one file: node 20 matches the pattern
/// against each test's own name, so both run, and the report holds only the chosen one.
#[test]
fn a_same_titled_test_in_another_describe_is_not_the_chosen_one() {
    let suite = NODE.project();
    suite.write(
        "test/twins.test.js",
        "const { describe, it } = require('node:test');\ndescribe('left', () => {\n  it('same', () => {});\n});\ndescribe('right', () => {\n  it('same', () => { throw new Error('the right one'); });\n});\n",
    );
    let executor = SystemExecutor;
    let context = Js::context(&suite, &executor);
    let node = NODE.adapter(&suite, &context);
    for (id, expected) in [
        ("test/twins.test.js::left > same", Outcome::Pass),
        ("test/twins.test.js::right > same", Outcome::Fail),
    ] {
        let report = node
            .run_one(&context, id, RunOptions::default())
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(outcomes(&report), vec![(id.to_owned(), expected)]);
    }
}

/// Issue #20 item 2: a test file with a syntax error or a failing import is a file that
/// could not run, never a red test; a path that is no file names no test.
#[test]
fn a_broken_test_file_is_a_node_that_could_not_run() {
    let suite = NODE.project();
    let executor = SystemExecutor;
    let context = Js::context(&suite, &executor);
    let node = NODE.adapter(&suite, &context);
    suite.write("test/broken.test.js", "it('x', () => {\n");
    let ran = node.run_suite(&context, RunOptions::default());
    let error = not_run(&ran);
    assert!(
        error
            .why
            .starts_with("node --test could not run 1 test file(s)"),
        "{error}"
    );
    assert!(
        error
            .quoted
            .iter()
            .any(|l| l.contains("broken.test.js") && l.contains("SyntaxError")),
        "{error}"
    );
    std::fs::remove_file(suite.repo.join("test/broken.test.js")).expect("remove");
    suite.write("test/imports.test.js", "require('no-such-module');\n");
    let ran = node.run_suite(&context, RunOptions::default());
    let error = not_run(&ran);
    assert!(
        error
            .quoted
            .iter()
            .any(|l| l.contains("Cannot find module 'no-such-module'")),
        "{error}"
    );
    std::fs::remove_file(suite.repo.join("test/imports.test.js")).expect("remove");
    let ran = node.run_one(&context, "test/nope.test.js::x", RunOptions::default());
    let error = not_run(&ran);
    assert!(error.unknown_test, "{error}");
    assert!(
        error.quoted.iter().any(|l| l.starts_with("Could not find")),
        "{error}"
    );
}

#[test]
fn candor_test_triage_and_rerun_on_a_node_project() {
    NODE.candor_test_triage_and_rerun();
}

#[test]
fn compare_measures_the_flaky_node_test_on_both_sides() {
    NODE.compare_measures_the_flaky_test_on_both_sides(0);
}

#[test]
fn gate_replays_a_new_node_test_and_accepts_a_clean_change() {
    NODE.gate_replays_a_new_test_and_accepts_a_clean_change();
}

/// A run stopped by candor's clock has no report (candor's reporter writes it when the
/// run ends): it is returned as timed out, for its caller to judge, never an error
/// reading the missing report (#20, as for jest in `js_clock`).
#[test]
fn a_node_run_stopped_by_the_clock_is_timed_out_not_an_error() {
    let suite = NODE.project();
    suite.write(
        "test/hangs.test.js",
        "const { it } = require('node:test');\nit('hangs', function () {\n  if (this && this.timeout) this.timeout(0);\n  return new Promise(() => { setInterval(() => {}, 1000); });\n});\n",
    );
    let executor = SystemExecutor;
    let context = Js::context(&suite, &executor).with_timeout(
        Some(std::time::Duration::from_secs(3)),
        std::time::Duration::from_secs(1),
    );
    let runner = NODE.adapter(&suite, &context);
    let report = runner
        .run_one(&context, "test/hangs.test.js::hangs", RunOptions::default())
        .unwrap_or_else(|e| panic!("a timed-out run, not an error: {e}"));
    assert!(report.timed_out(), "{}", logs(&report));
}
