//! The adapter of node's built-in test runner end to end (issue #20 item 2), on node itself
//! (tests/fixtures/js/node needs no package): the suite through candor's reporter, one
//! test by `--test-name-pattern` and its file (hostile titles included), runs that could not
//! run, the listing, and `candor test`, `triage`, `rerun`, `compare` and `gate` on a git
//! repository of the fixture (`js_support::Js`).

use candor::results::Outcome;
use candor::runner::process::SystemExecutor;
use candor::runner::{RunOptions, RunnerKind};

use crate::js_support::Js;
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
    NODE.the_suite_runs_in_definition_order(|report, _| {
        assert_eq!(report.exit_code(), 1, "{}", logs(report));
        assert!(
            report.invocations[0]
                .argv
                .iter()
                .any(|a| a.starts_with("--test-reporter=")),
            "{:?}",
            report.invocations[0].argv
        );
        assert!(!argv_holds(report, "--test-name-pattern"));
    });
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

/// #14 item 1: a node test deleted or hidden by the change is refused as removed.
#[test]
fn gate_refuses_a_deleted_node_test() {
    NODE.gate_refuses_a_deleted_test();
}

#[test]
fn a_node_run_stopped_by_the_clock_is_timed_out_not_an_error() {
    NODE.a_run_stopped_by_the_clock_is_timed_out_not_an_error();
}

/// #15 item 1: one process selects exactly the batch's tests, hostile titles included; a
/// pair the title pattern cannot tell apart refuses the batch.
#[test]
fn a_batch_selects_exactly_its_tests_in_one_node_process() {
    NODE.a_batch_selects_exactly_its_tests_in_one_process("x > same");
}

/// #15 items 1–2: the gate's rounds are a few node processes, and what a batch made red
/// is judged alone.
#[test]
fn gate_batches_the_node_rounds_and_judges_alone_what_a_batch_made_red() {
    NODE.gate_batches_the_rounds_and_judges_alone_what_a_batch_made_red();
}

/// #20 leftover (node's JUnit exception): node's junit reporter writes the failure's
/// `type` as the kind of failure (`testCodeFailure`) and what the test threw as the
/// text's `cause:`. Read from a real `node --test --test-reporter=junit` run, each
/// failure's exception is the thrown error's class, so a fingerprint matches it; a
/// failure that threw nothing (a time-out) keeps node's kind.
#[test]
fn node_s_junit_failures_name_the_thrown_exception_not_the_failure_kind() {
    let suite = NODE.project();
    suite.write(
        "test/throws.test.js",
        concat!(
            "const { it } = require('node:test');\n",
            "const assert = require('node:assert');\n",
            "it('asserts', () => { assert.strictEqual(1 + 1, 3); });\n",
            "it('types', () => { null.length; });\n",
            "it('ranges', () => { throw new RangeError('too far'); });\n",
            "it('times out', { timeout: 50 }, () => new Promise((r) => setTimeout(r, 500)));\n",
        ),
    );
    let xml = suite.temp.path().join("node.xml");
    let status = std::process::Command::new("node")
        .args([
            "--test",
            "--test-reporter=junit",
            &format!("--test-reporter-destination={}", xml.display()),
            "test/throws.test.js",
        ])
        .current_dir(&suite.repo)
        .status()
        .expect("node runs");
    assert_eq!(status.code(), Some(1));
    let text = std::fs::read_to_string(&xml).expect("the JUnit file");
    assert!(text.contains("testCodeFailure"), "{text}");
    let (executions, _) =
        candor::results::parse_all(text.as_bytes(), &candor::results::ParseOptions::default())
            .expect("it parses");
    let exception = |title: &str| {
        executions
            .iter()
            .find(|e| e.test_id.ends_with(title))
            .and_then(|e| e.failure.as_ref())
            .and_then(|f| f.exception.clone())
            .unwrap_or_else(|| panic!("{title}: {executions:#?}"))
    };
    assert_eq!(exception("asserts"), "AssertionError");
    assert_eq!(exception("types"), "TypeError");
    assert_eq!(exception("ranges"), "RangeError");
    assert_eq!(exception("times out"), "testTimeoutFailure");
}
