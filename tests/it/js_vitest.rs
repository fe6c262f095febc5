//! The vitest adapter end to end on a real vitest install (tests/fixtures/js/vitest, its
//! package-lock.json committed, `npm ci` by `.ci/run`): the suite with its seed, one test
//! by id (hostile titles included), runs that could not run, the listing, and `candor
//! test`, `triage`, `rerun`, `compare` and `gate` on a git repository of the fixture.
//! Issue #20. The flows every JavaScript runner goes through are `js_support::Js`'s; this
//! file holds vitest's own.

use candor::results::Outcome;
use candor::runner::process::SystemExecutor;
use candor::runner::{RunOptions, RunnerConfig, RunnerKind, adapter};

use crate::js_support::Js;
use crate::runner_support::{argv_holds, logs, not_run};

const VITEST: Js = Js {
    kind: RunnerKind::Vitest,
    command: &["node_modules/.bin/vitest", "run"],
    tests: "test",
    prelude: "import { describe, it } from 'vitest';\n",
    flaky_failure: (
        "AssertionError",
        r"expected [0-9.]+ to be greater than or equal to [0-9.]+",
        19,
    ),
};

#[test]
fn the_suite_runs_shuffled_by_its_seed_with_retries_off() {
    let suite = VITEST.project();
    let executor = SystemExecutor;
    let context = Js::context(&suite, &executor);
    let vitest = VITEST.adapter(&suite, &context);
    // Seed 1 runs the writer before the reader, seed 3 after it.
    for (run, seed, reader) in [(0, 1_u64, Outcome::Pass), (1, 3, Outcome::Fail)] {
        let report = vitest
            .run_suite(&context, RunOptions { seed: Some(seed) })
            .expect("the suite runs");
        assert_eq!(report.runner, RunnerKind::Vitest);
        assert_eq!(report.exit_code(), 1, "{}", logs(&report));
        assert!(argv_holds(&report, "--retry=0"));
        assert!(argv_holds(&report, "--sequence.shuffle"));
        assert!(argv_holds(&report, &format!("--sequence.seed={seed}")));
        assert_eq!(report.seed.as_ref().map(|s| s.value), Some(seed));
        VITEST.assert_fixture_outcomes(&report, reader, run, &format!("seed {seed}"));
    }
}

#[test]
fn one_test_runs_alone_by_its_id() {
    VITEST.one_test_runs_alone_by_its_id();
}

#[test]
fn unknown_and_hostile_ids_could_not_run_and_never_reach_a_shell() {
    VITEST.unknown_and_hostile_ids_could_not_run_and_never_reach_a_shell();
    // vitest's own: a file named like an option is refused before vitest starts.
    let suite = VITEST.project();
    let executor = SystemExecutor;
    let context = Js::context(&suite, &executor);
    let vitest = VITEST.adapter(&suite, &context);
    assert!(
        vitest
            .run_one(&context, "--reporter=x::y", RunOptions::default())
            .is_err()
    );
}

#[test]
fn a_bad_option_and_a_broken_file_are_a_runner_that_could_not_run() {
    let suite = VITEST.project();
    let executor = SystemExecutor;
    let context = Js::context(&suite, &executor);
    let config = RunnerConfig {
        kind: Some(RunnerKind::Vitest),
        command: Some(
            ["node_modules/.bin/vitest", "run", "--no-such-option"]
                .map(str::to_owned)
                .to_vec(),
        ),
        ..RunnerConfig::default()
    };
    let bad = adapter(&config, &context).expect("the adapter");
    let ran = bad.run_suite(&context, RunOptions { seed: Some(1) });
    let error = not_run(&ran);
    assert!(error.why.contains("wrote no report"), "{error}");
    // vitest's own words: `CACError: Unknown option \`--suchOption\``.
    assert!(
        error
            .quoted
            .iter()
            .any(|l| l.starts_with("CACError: Unknown option")),
        "{error}"
    );
    suite.write("test/broken.test.js", "test('x', () => {\n");
    let vitest = VITEST.adapter(&suite, &context);
    let ran = vitest.run_suite(&context, RunOptions { seed: Some(1) });
    let error = not_run(&ran);
    assert!(
        error.why.contains("could not run 1 test file(s)"),
        "{error}"
    );
}

#[test]
fn the_listing_runs_no_test() {
    VITEST.the_listing_names_every_test_and_runs_none();
}

#[test]
fn candor_test_triage_and_rerun_on_a_vitest_project() {
    VITEST.candor_test_triage_and_rerun();
}

#[test]
fn compare_measures_the_flaky_vitest_test_on_both_sides() {
    VITEST.compare_measures_the_flaky_test_on_both_sides(0);
}

#[test]
fn gate_replays_a_new_vitest_test_and_accepts_a_clean_change() {
    VITEST.gate_replays_a_new_test_and_accepts_a_clean_change();
}

/// #14 item 1: a vitest test deleted or hidden by the change is refused as removed.
#[test]
fn gate_refuses_a_deleted_vitest_test() {
    VITEST.gate_refuses_a_deleted_test();
}

/// #15 item 1: one process selects exactly the batch's tests, hostile titles included; a
/// pair the title pattern cannot tell apart refuses the batch.
#[test]
fn a_batch_selects_exactly_its_tests_in_one_vitest_process() {
    VITEST.a_batch_selects_exactly_its_tests_in_one_process("a b > c");
}

/// #15 items 1–2: the gate's rounds are a few vitest processes, and what a batch made red
/// is judged alone.
#[test]
fn gate_batches_the_vitest_rounds_and_judges_alone_what_a_batch_made_red() {
    VITEST.gate_batches_the_rounds_and_judges_alone_what_a_batch_made_red();
}
