//! mocha on a real install (tests/fixtures/js/mocha, its package-lock.json committed, `npm
//! ci` by `.ci/run`).
//!
//! The adapter end to end (issue #20 item 1): the suite through candor's reporter, one test
//! by its full title (hostile titles included), retries off and a test's own retries read
//! as retries, runs that could not run, the listing, and `candor test`, `triage`, `rerun`,
//! `compare` and `gate` on a git repository of the fixture (`js_support::Js`).
//!
//! mocha's built-in xunit reporter (issue #20 item 5, `dialect/`): the suite path is in
//! `classname`, the title in `name`; two tests with the same title in different suites
//! (corpus B's `bibtexParser` / `latexParser` "should throw SyntaxError") are two tests,
//! each under its full title, the id mocha-junit-reporter gives them too.

use std::path::Path;
use std::process::Command;

use candor::results::{Outcome, ParseOptions, parse_all};
use candor::runner::process::SystemExecutor;
use candor::runner::{RunOptions, RunnerKind};

use crate::js_support::{Js, READER, WRITER, counter, flaky_outcome};
use crate::runner_support::{argv_holds, logs, not_run, outcomes};

const MOCHA: Js = Js {
    kind: RunnerKind::Mocha,
    command: &["node_modules/.bin/mocha"],
    tests: "test",
    prelude: "",
    flaky_failure: ("AssertionError", r"drew [0-9.]+, below [0-9/]+", 22),
};

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/js/mocha")
}

fn read(bytes: &[u8]) -> (Vec<(String, Outcome, u32)>, Option<String>) {
    let (executions, summary) =
        parse_all(bytes, &ParseOptions::default()).expect("the report parses");
    (
        executions
            .into_iter()
            .map(|e| (e.test_id, e.outcome, e.attempts))
            .collect(),
        summary.producer,
    )
}

fn expected() -> Vec<(String, Outcome, u32)> {
    [
        ("runs outside any suite", Outcome::Pass),
        ("bibtexParser should throw SyntaxError", Outcome::Pass),
        ("latexParser should throw SyntaxError", Outcome::Fail),
        ("latexParser nested is skipped", Outcome::Skip),
    ]
    .into_iter()
    .map(|(id, outcome)| (id.to_owned(), outcome, 1))
    .collect()
}

#[test]
fn the_committed_xunit_report_keeps_same_titled_tests_of_different_suites_apart() {
    let bytes = std::fs::read(fixture().join("reports/xunit.xml")).expect("the committed report");
    let (ids, producer) = read(&bytes);
    assert_eq!(producer.as_deref(), Some("mocha-xunit"));
    assert_eq!(ids, expected());
}

#[test]
fn the_real_mocha_writes_the_same_dialect() {
    let mocha = fixture().join("node_modules/.bin/mocha");
    assert!(
        mocha.exists(),
        "{} is not installed: run `npm ci` in {} (.ci/run does)",
        mocha.display(),
        fixture().display()
    );
    let temp = tempfile::tempdir().expect("a temp dir");
    let report = temp.path().join("xunit.xml");
    let output = Command::new(&mocha)
        .args(["--reporter", "xunit", "--reporter-option"])
        .arg(format!("output={}", report.display()))
        .arg("dialect/")
        .current_dir(fixture())
        .output()
        .expect("mocha runs");
    // One test fails: mocha exits with the number of failures.
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let (ids, producer) = read(&std::fs::read(&report).expect("mocha wrote its report"));
    assert_eq!(producer.as_deref(), Some("mocha-xunit"));
    assert_eq!(ids, expected());
}

#[test]
fn the_suite_runs_through_candor_s_reporter_in_definition_order_with_retries_off() {
    MOCHA.the_suite_runs_in_definition_order(|report, run| {
        // mocha exits with the number of failed tests.
        let red = 1 + u32::from(flaky_outcome(run) == Outcome::Fail);
        assert_eq!(
            report.exit_code(),
            i32::try_from(red).unwrap_or(0),
            "{}",
            logs(report)
        );
        assert!(argv_holds(report, "--retries") && argv_holds(report, "0"));
    });
}

/// Issue #20 item 1: `--retries 0` turns mocha's retries off, but a test's own
/// `this.retries(n)` still retries; every attempt is in candor's report, so a pass after
/// a failed attempt is a flaky pass with two attempts, never a plain pass.
#[test]
fn a_test_s_own_retries_are_read_as_retries_never_as_a_pass() {
    let suite = MOCHA.project();
    suite.write(
        "test/retried.test.js",
        "let attempt = 0;\ndescribe('retried', function () {\n  it('passes on its second attempt', function () {\n    this.retries(2);\n    attempt += 1;\n    if (attempt < 2) throw new Error(`attempt ${attempt} fails`);\n  });\n});\n",
    );
    let executor = SystemExecutor;
    let context = Js::context(&suite, &executor);
    let mocha = MOCHA.adapter(&suite, &context);
    let id = "test/retried.test.js::retried > passes on its second attempt";
    let report = mocha
        .run_one(&context, id, RunOptions::default())
        .expect("it runs");
    let (executions, _) = parse_all(
        std::fs::File::open(&report.report).expect("the report"),
        &ParseOptions::default(),
    )
    .expect("the report parses");
    assert_eq!(executions.len(), 1);
    assert_eq!(executions[0].test_id, id);
    assert_eq!(
        executions[0].outcome,
        Outcome::FlakyPass,
        "{}",
        logs(&report)
    );
    assert_eq!(executions[0].attempts, 2);
    let failure = executions[0]
        .failure
        .as_ref()
        .expect("the first attempt's failure");
    assert!(failure.message.contains("attempt 1 fails"), "{failure:?}");
}

#[test]
fn one_mocha_test_runs_alone_by_its_full_title() {
    MOCHA.one_test_runs_alone_by_its_id();
}

#[test]
fn unknown_and_hostile_mocha_ids_could_not_run_and_never_reach_a_shell() {
    MOCHA.unknown_and_hostile_ids_could_not_run_and_never_reach_a_shell();
}

#[test]
fn the_mocha_listing_names_every_test_and_runs_none() {
    MOCHA.the_listing_names_every_test_and_runs_none();
}

/// Issue #20 item 1: a test file with a syntax error, one whose import fails, and no test
/// file at all are a runner that could not run, in mocha's own words.
#[test]
fn a_broken_test_file_and_no_test_file_are_a_mocha_that_could_not_run() {
    let suite = MOCHA.project();
    let executor = SystemExecutor;
    let context = Js::context(&suite, &executor);
    let mocha = MOCHA.adapter(&suite, &context);
    suite.write("test/broken.test.js", "it('x', () => {\n");
    let ran = mocha.run_suite(&context, RunOptions::default());
    let error = not_run(&ran);
    assert!(error.why.contains("before running any test"), "{error}");
    assert!(
        error.quoted.iter().any(|l| l.contains("SyntaxError")),
        "{error}"
    );
    std::fs::remove_file(suite.repo.join("test/broken.test.js")).expect("remove");
    suite.write("test/imports.test.js", "require('no-such-module');\n");
    let ran = mocha.run_suite(&context, RunOptions::default());
    let error = not_run(&ran);
    assert!(
        error
            .quoted
            .iter()
            .any(|l| l.contains("Cannot find module 'no-such-module'")),
        "{error}"
    );
    std::fs::remove_dir_all(suite.repo.join("test")).expect("remove the tests");
    let ran = mocha.run_suite(&context, RunOptions::default());
    let error = not_run(&ran);
    assert!(
        error
            .quoted
            .iter()
            .any(|l| l.contains("No test files found")),
        "{error}"
    );
    assert!(!counter(&suite).exists());
}

/// mocha runs every file in one process: chosen tests of two files run together, file by
/// file in definition order, and the reader passes after its writer.
#[test]
fn an_ordered_mocha_run_holds_tests_of_several_files_in_definition_order() {
    let suite = MOCHA.project();
    let executor = SystemExecutor;
    let context = Js::context(&suite, &executor);
    let mocha = MOCHA.adapter(&suite, &context);
    let ids = [MOCHA.basic(READER), MOCHA.basic(WRITER), MOCHA.hostile()];
    assert_eq!(mocha.process_scope(&ids[0]), mocha.process_scope(&ids[2]));
    let report = mocha
        .run_ordered(
            &context,
            &ids,
            candor::runner::Arrangement::AsGiven,
            RunOptions::default(),
        )
        .expect("it runs");
    assert_eq!(
        outcomes(&report),
        crate::runner_support::expected(&[
            (&MOCHA.basic(WRITER), Outcome::Pass),
            (&MOCHA.basic(READER), Outcome::Pass),
            (&MOCHA.hostile(), Outcome::Pass),
        ])
    );
    assert!(
        mocha
            .run_ordered(
                &context,
                &ids,
                candor::runner::Arrangement::Shuffled(3),
                RunOptions::default()
            )
            .is_err()
    );
}

#[test]
fn candor_test_triage_and_rerun_on_a_mocha_project() {
    MOCHA.candor_test_triage_and_rerun();
}

#[test]
fn compare_measures_the_flaky_mocha_test_on_both_sides() {
    MOCHA.compare_measures_the_flaky_test_on_both_sides(0);
}

#[test]
fn gate_replays_a_new_mocha_test_and_accepts_a_clean_change() {
    MOCHA.gate_replays_a_new_test_and_accepts_a_clean_change();
}

/// #14 item 1: a mocha test deleted or hidden by the change is refused as removed.
#[test]
fn gate_refuses_a_deleted_mocha_test() {
    MOCHA.gate_refuses_a_deleted_test();
}

#[test]
fn a_mocha_run_stopped_by_the_clock_is_timed_out_not_an_error() {
    MOCHA.a_run_stopped_by_the_clock_is_timed_out_not_an_error();
}

/// #15 item 1: one process selects exactly the batch's tests, hostile titles included; a
/// pair the title pattern cannot tell apart refuses the batch.
#[test]
fn a_batch_selects_exactly_its_tests_in_one_mocha_process() {
    MOCHA.a_batch_selects_exactly_its_tests_in_one_process("a b > c");
}

/// #15 items 1–2: the gate's rounds are a few mocha processes, and what a batch made red
/// is judged alone.
#[test]
fn gate_batches_the_mocha_rounds_and_judges_alone_what_a_batch_made_red() {
    MOCHA.gate_batches_the_rounds_and_judges_alone_what_a_batch_made_red();
}
