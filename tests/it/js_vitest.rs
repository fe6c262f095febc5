//! The vitest adapter end to end on a real vitest install (tests/fixtures/js/vitest, its
//! package-lock.json committed, `npm ci` by `.ci/run`): the suite with its seed, one test
//! by id (hostile titles included), runs that could not run, the listing, and `candor
//! test`, `triage`, `rerun` and `compare` on a git repository of the fixture. Issue #20.

use crate::js_support;
use crate::runner_support;
use crate::triage_support;

use std::time::Duration;

use candor::results::Outcome;
use candor::runner::process::SystemExecutor;
use candor::runner::{Adapter, Context, RunOptions, RunnerConfig, RunnerKind, adapter};
use js_support::{borrowed, commit, counter, flaky_fails, flaky_vars, project};
use runner_support::{HOSTILE, argv_holds, logs, not_run, outcomes, pwned_files, ran_argvs};
use triage_support::{Suite, TODAY};

const ADDS: &str = "test/basic.test.js::math > adds";
const SUBTRACTS: &str = "test/basic.test.js::math > subtracts wrongly";
const SKIPPED: &str = "test/basic.test.js::math > is skipped";
const FLAKY: &str = "test/basic.test.js::flaky one in four";
const WRITER: &str = "test/basic.test.js::order > writer sets state";
const READER: &str = "test/basic.test.js::order > reader needs the writer first";
const HOSTILE_TITLE: &str = "test/hostile.test.js::weird (a+b)* [x] | ^$ > quotes \"double\" 'single' `back` ünïcødé :: $HOME; rm -rf /";

/// The flaky test's seed: its runs go fail, pass, pass, fail, fail, …
const FLAKY_SEED: u32 = 4;

fn vitest_adapter(suite: &Suite, context: &Context<'_>) -> Box<dyn Adapter> {
    let mut command = vec!["env".to_owned()];
    command.extend(
        flaky_vars(suite, FLAKY_SEED)
            .into_iter()
            .map(|(name, value)| format!("{name}={value}")),
    );
    command.extend(["node_modules/.bin/vitest".to_owned(), "run".to_owned()]);
    let config = RunnerConfig {
        kind: Some(RunnerKind::Vitest),
        command: Some(command),
        ..RunnerConfig::default()
    };
    adapter(&config, context).expect("the vitest adapter")
}

fn context<'a>(suite: &Suite, executor: &'a SystemExecutor) -> Context<'a> {
    Context::new(&suite.repo, suite.temp.path().join("scratch"), executor)
        .with_timeout(Some(Duration::from_secs(300)), Duration::from_secs(2))
}

fn outcome_of(pairs: &[(String, Outcome)], id: &str) -> Option<Outcome> {
    pairs.iter().find(|(i, _)| i == id).map(|(_, o)| *o)
}

fn flaky_outcome(n: u32) -> Outcome {
    if flaky_fails(FLAKY_SEED, n) {
        Outcome::Fail
    } else {
        Outcome::Pass
    }
}

#[test]
fn the_suite_runs_shuffled_by_its_seed_with_retries_off() {
    let suite = project("vitest");
    let executor = SystemExecutor;
    let context = context(&suite, &executor);
    let vitest = vitest_adapter(&suite, &context);
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
        let pairs = outcomes(&report);
        assert_eq!(pairs.len(), 7, "{pairs:?}");
        assert_eq!(outcome_of(&pairs, ADDS), Some(Outcome::Pass));
        assert_eq!(outcome_of(&pairs, SUBTRACTS), Some(Outcome::Fail));
        assert_eq!(outcome_of(&pairs, SKIPPED), Some(Outcome::Skip));
        assert_eq!(outcome_of(&pairs, WRITER), Some(Outcome::Pass));
        assert_eq!(outcome_of(&pairs, READER), Some(reader), "seed {seed}");
        assert_eq!(outcome_of(&pairs, HOSTILE_TITLE), Some(Outcome::Pass));
        assert_eq!(outcome_of(&pairs, FLAKY), Some(flaky_outcome(run)));
    }
}

#[test]
fn one_test_runs_alone_by_its_id_and_unknown_ids_could_not_run() {
    let suite = project("vitest");
    let executor = SystemExecutor;
    let context = context(&suite, &executor);
    let vitest = vitest_adapter(&suite, &context);
    for (id, expected) in [
        (ADDS, Outcome::Pass),
        (SUBTRACTS, Outcome::Fail),
        (READER, Outcome::Fail),
        (HOSTILE_TITLE, Outcome::Pass),
    ] {
        let report = vitest
            .run_one(&context, id, RunOptions { seed: Some(9) })
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(
            outcomes(&report),
            vec![(id.to_owned(), expected)],
            "{id}:\n{}",
            logs(&report)
        );
    }
    let missing = vitest.run_one(
        &context,
        "test/basic.test.js::math > nope",
        RunOptions::default(),
    );
    assert!(not_run(&missing).unknown_test, "{missing:?}");
    for hostile in HOSTILE {
        let ran = vitest.run_one(&context, &format!("{hostile}::x"), RunOptions::default());
        let argvs = ran_argvs(&ran);
        assert_eq!(
            argvs[0].last().map(String::as_str),
            Some(hostile),
            "{argvs:?}"
        );
        assert!(not_run(&ran).unknown_test, "{ran:?}");
        let ran = vitest.run_one(
            &context,
            &format!("test/basic.test.js::{hostile}"),
            RunOptions::default(),
        );
        assert!(not_run(&ran).unknown_test, "{ran:?}");
    }
    // A file named like an option is refused before vitest starts.
    assert!(
        vitest
            .run_one(&context, "--reporter=x::y", RunOptions::default())
            .is_err()
    );
    assert!(pwned_files(suite.temp.path()).is_empty());
}

#[test]
fn a_bad_option_and_a_broken_file_are_a_runner_that_could_not_run() {
    let suite = project("vitest");
    let executor = SystemExecutor;
    let context = context(&suite, &executor);
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
    let vitest = vitest_adapter(&suite, &context);
    let ran = vitest.run_suite(&context, RunOptions { seed: Some(1) });
    let error = not_run(&ran);
    assert!(
        error.why.contains("could not run 1 test file(s)"),
        "{error}"
    );
}

#[test]
fn the_listing_runs_no_test() {
    let suite = project("vitest");
    let executor = SystemExecutor;
    let context = context(&suite, &executor);
    let vitest = vitest_adapter(&suite, &context);
    let mut ids: Vec<String> = vitest
        .list(&context)
        .expect("it lists")
        .into_iter()
        .map(|t| t.id)
        .collect();
    ids.sort();
    let mut expected = vec![
        ADDS,
        SUBTRACTS,
        SKIPPED,
        FLAKY,
        WRITER,
        READER,
        HOSTILE_TITLE,
    ];
    expected.sort_unstable();
    assert_eq!(ids, expected);
    assert!(!counter(&suite).exists());
}

#[test]
fn candor_test_rerun_and_compare_on_a_vitest_project() {
    let suite = project("vitest");
    suite.write("helper.js", "export const unused = true;\n");
    commit(&suite, "an unrelated change");
    let mut vars = flaky_vars(&suite, FLAKY_SEED);
    vars.push(("CANDOR_TODAY".to_owned(), TODAY.to_owned()));
    let ran = suite.candor(
        &["test", "--seed", "1", "--format", "json"],
        &borrowed(&vars),
    );
    let run = &ran.lines_of("test-run")[0];
    assert_eq!(run["runner"], "vitest", "{ran:?}");
    // Seed 1 keeps the reader green; the flaky test's first run fails.
    assert_eq!(
        (&run["red"], &run["tests"]),
        (&2.into(), &7.into()),
        "{ran:?}"
    );
    assert_eq!(ran.exit, 1, "{ran:?}");
    let report = run["report"].as_str().expect("a report").to_owned();
    let triaged = suite.candor(&["triage", "--format", "json", &report], &borrowed(&vars));
    let red: Vec<String> = triaged
        .lines_of("verdict")
        .iter()
        .filter_map(|v| v["test"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(red.len(), 2, "{triaged:?}");
    assert!(
        red.contains(&FLAKY.to_owned()) && red.contains(&SUBTRACTS.to_owned()),
        "{triaged:?}"
    );

    // An unverified red is not rerun; compare measures it instead, each run of either
    // side drawing the next number of the seeded sequence.
    let ran = suite.candor(
        &["compare", FLAKY, "--seed", "2", "--format", "json"],
        &borrowed(&vars),
    );
    let lines = ran.lines_of("compare");
    assert_eq!(lines.len(), 1, "{ran:?}");
    let line = &lines[0];
    let runs = line["base"]["runs"].as_u64().unwrap_or(0);
    assert!(runs > 0, "{line:#}");
    assert_eq!(line["branch"]["runs"], runs, "{line:#}");
    // The suite run drew the first number; the comparison's runs the next 2 × runs.
    let expected = (1..=u32::try_from(runs * 2).unwrap_or(0))
        .filter(|n| flaky_fails(FLAKY_SEED, *n))
        .count() as u64;
    let failures = line["base"]["failures"].as_u64().unwrap_or(0)
        + line["branch"]["failures"].as_u64().unwrap_or(0);
    assert_eq!(failures, expected, "{line:#}");
}
