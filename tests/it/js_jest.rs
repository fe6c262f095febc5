//! The jest adapter end to end on a real jest install (tests/fixtures/js/jest, its
//! package-lock.json committed, `npm ci` by `.ci/run`): the suite with its seed, one test
//! by id (hostile titles included), the report's ids, and `candor test`, `triage`,
//! `rerun`, `compare` and `gate` on a git repository of the fixture. Issue #20.
//!
//! The fixture's flaky test fails on its n-th run when a seeded draw says so
//! (`js_support::flaky_fails`), and its order-dependent pair passes only when the writer
//! runs first, so every outcome below is known before the run.

use crate::js_support;
use crate::runner_support;
use crate::triage_support;

use std::time::Duration;

use candor::results::Outcome;
use candor::runner::process::SystemExecutor;
use candor::runner::{Adapter, Context, RunOptions, RunnerConfig, RunnerKind, adapter};
use js_support::{borrowed, commit, counter, flaky_fails, flaky_vars, project};
use runner_support::{HOSTILE, argv_holds, logs, not_run, outcomes, pwned_files, ran_argvs};
use triage_support::{TODAY, fingerprint};

const FILE: &str = "__tests__/basic.test.js";
const ADDS: &str = "__tests__/basic.test.js::math > adds";
const SUBTRACTS: &str = "__tests__/basic.test.js::math > subtracts wrongly";
const SKIPPED: &str = "__tests__/basic.test.js::math > is skipped";
const FLAKY: &str = "__tests__/basic.test.js::flaky one in four";
const WRITER: &str = "__tests__/basic.test.js::order > writer sets state";
const READER: &str = "__tests__/basic.test.js::order > reader needs the writer first";
const HOSTILE_TITLE: &str = "__tests__/hostile.test.js::weird (a+b)* [x] | ^$ > quotes \"double\" 'single' `back` ünïcødé :: $HOME; rm -rf /";

/// The flaky test's seed in these tests: its runs go fail, pass, pass, fail, fail, …
const FLAKY_SEED: u32 = 4;

/// The adapter `[runner] kind = "jest"` builds, its command prefixed with the flaky
/// test's variables (`env` passes them; no shell).
fn jest_adapter(suite: &triage_support::Suite, context: &Context<'_>) -> Box<dyn Adapter> {
    let mut command = vec!["env".to_owned()];
    command.extend(
        flaky_vars(suite, FLAKY_SEED)
            .into_iter()
            .map(|(name, value)| format!("{name}={value}")),
    );
    command.push("node_modules/.bin/jest".to_owned());
    let config = RunnerConfig {
        kind: Some(RunnerKind::Jest),
        command: Some(command),
        ..RunnerConfig::default()
    };
    adapter(&config, context).expect("the jest adapter")
}

fn context<'a>(suite: &triage_support::Suite, executor: &'a SystemExecutor) -> Context<'a> {
    Context::new(&suite.repo, suite.temp.path().join("scratch"), executor)
        .with_timeout(Some(Duration::from_secs(300)), Duration::from_secs(2))
}

fn outcome_of(pairs: &[(String, Outcome)], id: &str) -> Option<Outcome> {
    pairs.iter().find(|(i, _)| i == id).map(|(_, o)| *o)
}

/// The report's ids in the order they ran.
fn ran_order(report: &candor::runner::RunReport) -> Vec<String> {
    let file = std::fs::File::open(&report.report).expect("the report");
    let (executions, _) = candor::results::parse_all(
        file,
        &candor::results::ParseOptions {
            repo_root: None,
            ..candor::results::ParseOptions::default()
        },
    )
    .expect("the report parses");
    executions.into_iter().map(|e| e.test_id).collect()
}

#[test]
fn the_suite_runs_shuffled_by_its_seed_into_file_and_describe_ids() {
    let suite = project("jest");
    let executor = SystemExecutor;
    let context = context(&suite, &executor);
    let jest = jest_adapter(&suite, &context);
    for (run, seed) in [(0, 1_u64), (1, 3), (2, 5)] {
        let report = jest
            .run_suite(&context, RunOptions { seed: Some(seed) })
            .expect("the suite runs");
        assert_eq!(report.runner, RunnerKind::Jest);
        assert_eq!(report.exit_code(), 1, "a test fails:\n{}", logs(&report));
        assert!(argv_holds(&report, "--randomize"));
        assert!(argv_holds(&report, &format!("--seed={seed}")));
        assert_eq!(report.seed.as_ref().map(|s| s.value), Some(seed));
        let pairs = outcomes(&report);
        assert_eq!(pairs.len(), 7, "{pairs:?}");
        assert_eq!(outcome_of(&pairs, ADDS), Some(Outcome::Pass));
        assert_eq!(outcome_of(&pairs, SUBTRACTS), Some(Outcome::Fail));
        assert_eq!(outcome_of(&pairs, SKIPPED), Some(Outcome::Skip));
        assert_eq!(outcome_of(&pairs, WRITER), Some(Outcome::Pass));
        assert_eq!(outcome_of(&pairs, HOSTILE_TITLE), Some(Outcome::Pass));
        let flaky = if flaky_fails(FLAKY_SEED, run) {
            Outcome::Fail
        } else {
            Outcome::Pass
        };
        assert_eq!(outcome_of(&pairs, FLAKY), Some(flaky), "run {run}");
        // The seed decides the order, and the order decides the reader.
        let order = ran_order(&report);
        let writer_first =
            order.iter().position(|id| id == WRITER) < order.iter().position(|id| id == READER);
        let reader = if writer_first {
            Outcome::Pass
        } else {
            Outcome::Fail
        };
        assert_eq!(
            outcome_of(&pairs, READER),
            Some(reader),
            "seed {seed}: {order:?}"
        );
    }
    // The same seed, the same order.
    let again = jest
        .run_suite(&context, RunOptions { seed: Some(3) })
        .expect("the suite runs");
    let before = jest
        .run_suite(&context, RunOptions { seed: Some(3) })
        .expect("the suite runs");
    assert_eq!(ran_order(&again), ran_order(&before));
}

#[test]
fn one_test_runs_alone_by_its_id_and_the_report_holds_it_only() {
    let suite = project("jest");
    let executor = SystemExecutor;
    let context = context(&suite, &executor);
    let jest = jest_adapter(&suite, &context);
    for (id, expected) in [
        (ADDS, Outcome::Pass),
        (SUBTRACTS, Outcome::Fail),
        (SKIPPED, Outcome::Skip),
        // Alone, the reader has no writer before it.
        (READER, Outcome::Fail),
        (HOSTILE_TITLE, Outcome::Pass),
    ] {
        let report = jest
            .run_one(&context, id, RunOptions { seed: Some(9) })
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(
            outcomes(&report),
            vec![(id.to_owned(), expected)],
            "{id}:\n{}",
            logs(&report)
        );
        assert!(argv_holds(&report, "--runTestsByPath"));
        assert!(argv_holds(
            &report,
            id.split_once("::").map_or("", |(f, _)| f)
        ));
    }
    // The flaky test's runs follow its seeded sequence.
    for n in 0..4 {
        let report = jest
            .run_one(&context, FLAKY, RunOptions { seed: Some(9) })
            .expect("it runs");
        let expected = if flaky_fails(FLAKY_SEED, n) {
            Outcome::Fail
        } else {
            Outcome::Pass
        };
        assert_eq!(
            outcomes(&report),
            vec![(FLAKY.to_owned(), expected)],
            "run {n}"
        );
    }
}

#[test]
fn ids_that_name_no_test_are_a_runner_that_could_not_run_and_never_reach_a_shell() {
    let suite = project("jest");
    let executor = SystemExecutor;
    let context = context(&suite, &executor);
    let jest = jest_adapter(&suite, &context);
    // A title no test has: jest ran the file, and the id was not in it.
    let missing = jest.run_one(
        &context,
        &format!("{FILE}::math > nope"),
        RunOptions::default(),
    );
    assert!(not_run(&missing).unknown_test, "{missing:?}");
    // A file that does not exist.
    let missing = jest.run_one(&context, "__tests__/nope.test.js::x", RunOptions::default());
    let error = not_run(&missing);
    assert!(error.unknown_test, "{error}");
    assert!(error.to_string().contains("ENOENT"), "{error}");
    let plain = ran_argvs(&jest.run_one(&context, ADDS, RunOptions::default()));
    for hostile in HOSTILE {
        // In a title: one escaped, anchored pattern; jest runs the file and no such test.
        let id = format!("{FILE}::{hostile}");
        let ran = jest.run_one(&context, &id, RunOptions::default());
        assert!(not_run(&ran).unknown_test, "{id:?}: {ran:?}");
        let argvs = ran_argvs(&ran);
        assert_eq!(argvs.len(), 1);
        assert_eq!(
            argvs[0].len(),
            plain[0].len(),
            "one argument: {:?}",
            argvs[0]
        );
        assert!(
            argvs[0]
                .iter()
                .any(|a| a.starts_with("--testNamePattern=^") && a.ends_with('$')),
            "{:?}",
            argvs[0]
        );
        // In the file: one path after `--`, which does not exist.
        let id = format!("{hostile}::x");
        let ran = jest.run_one(&context, &id, RunOptions::default());
        let argvs = ran_argvs(&ran);
        assert_eq!(
            argvs[0].last().map(String::as_str),
            Some(hostile),
            "{argvs:?}"
        );
        assert!(not_run(&ran).unknown_test, "{id:?}: {ran:?}");
    }
    assert!(pwned_files(suite.temp.path()).is_empty());
}

#[test]
fn a_test_file_that_does_not_parse_is_a_runner_that_could_not_run() {
    let suite = project("jest");
    suite.write("__tests__/broken.test.js", "test('x', () => {\n");
    let executor = SystemExecutor;
    let context = context(&suite, &executor);
    let jest = jest_adapter(&suite, &context);
    let ran = jest.run_suite(&context, RunOptions { seed: Some(1) });
    let error = not_run(&ran);
    assert!(
        error.why.starts_with("jest could not run 1 test file(s)"),
        "{error}"
    );
    assert!(
        error.quoted.iter().any(|l| l.contains("broken.test.js")),
        "{error}"
    );
}

#[test]
fn the_listing_names_every_test_under_the_ids_run_one_takes() {
    let suite = project("jest");
    let executor = SystemExecutor;
    let context = context(&suite, &executor);
    let jest = jest_adapter(&suite, &context);
    let mut ids: Vec<String> = jest
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
    // Listing runs no test: the flaky test's counter was never touched.
    assert!(!counter(&suite).exists());
}

#[test]
fn an_ordered_run_is_definition_order_or_the_seed_s_shuffle() {
    let suite = project("jest");
    let executor = SystemExecutor;
    let context = context(&suite, &executor);
    let jest = jest_adapter(&suite, &context);
    let ids = [READER.to_owned(), WRITER.to_owned()];
    let report = jest
        .run_ordered(
            &context,
            &ids,
            candor::runner::Arrangement::AsGiven,
            RunOptions::default(),
        )
        .expect("it runs");
    assert_eq!(ran_order(&report), [WRITER, READER]);
    assert_eq!(
        outcomes(&report),
        runner_support::expected(&[(WRITER, Outcome::Pass), (READER, Outcome::Pass)])
    );
    // Seed 5 runs the reader first (as the suite run with seed 5 shows).
    let report = jest
        .run_ordered(
            &context,
            &ids,
            candor::runner::Arrangement::Shuffled(5),
            RunOptions::default(),
        )
        .expect("it runs");
    assert_eq!(ran_order(&report), [READER, WRITER]);
    assert_eq!(
        jest.ordered_command(
            &ids,
            candor::runner::Arrangement::Shuffled(5),
            RunOptions::default()
        )
        .expect("a command")
        .iter()
        .filter(|a| a.starts_with("--seed="))
        .collect::<Vec<_>>(),
        ["--seed=5"]
    );
    let other_file = [READER.to_owned(), HOSTILE_TITLE.to_owned()];
    assert!(
        jest.run_ordered(
            &context,
            &other_file,
            candor::runner::Arrangement::AsGiven,
            RunOptions::default()
        )
        .is_err()
    );
}

fn vars(suite: &triage_support::Suite) -> Vec<(String, String)> {
    let mut vars = flaky_vars(suite, FLAKY_SEED);
    vars.push(("CANDOR_TODAY".to_owned(), TODAY.to_owned()));
    vars
}

#[test]
fn candor_test_triage_and_rerun_on_a_jest_project() {
    let suite = project("jest");
    // The policy is the merge base's: it goes on `main`.
    triage_support::git(&suite.repo, &["checkout", "--quiet", "main"]);
    // The flaky test's failure is a known flake.
    suite.write(
        "candor.toml",
        &fingerprint(
            "FP-001",
            FLAKY,
            "Error",
            r"expect\(received\)\.toBeGreaterThanOrEqual\(expected\)",
            "__tests__/basic.test.js:18",
            "jest",
        ),
    );
    suite.tier(FLAKY, "trusted");
    commit(&suite, "policy");
    triage_support::git(&suite.repo, &["checkout", "--quiet", "-B", "change"]);
    let vars = vars(&suite);
    let ran = suite.candor(
        &["test", "--seed", "1", "--format", "json"],
        &borrowed(&vars),
    );
    let run = &ran.lines_of("test-run")[0];
    assert_eq!(run["runner"], "jest", "{ran:?}");
    // Seed 1 keeps the writer before the reader; the flaky test's first run fails.
    assert_eq!(
        (&run["red"], &run["tests"]),
        (&2.into(), &7.into()),
        "{ran:?}"
    );
    let verdicts: Vec<(String, String)> = ran
        .lines_of("verdict")
        .iter()
        .map(|v| {
            (
                v["test"].as_str().unwrap_or_default().to_owned(),
                v["verdict"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert!(
        verdicts.contains(&(FLAKY.to_owned(), "known-flake".to_owned())),
        "{ran:?}"
    );
    assert_eq!(ran.exit, 1, "a red that is no known flake: {ran:?}");

    // The stored report triages the same way from the file.
    let report = run["report"].as_str().expect("the report path").to_owned();
    let triaged = suite.candor(&["triage", "--format", "json", &report], &borrowed(&vars));
    let verdict = triaged
        .lines_of("verdict")
        .into_iter()
        .find(|v| v["test"] == FLAKY)
        .unwrap_or_else(|| panic!("{triaged:?}"));
    assert_eq!(verdict["verdict"], "known-flake", "{triaged:?}");

    // Its rerun is its second run: a pass.
    let rerun = suite.candor(&["rerun", FLAKY, "--format", "json"], &borrowed(&vars));
    assert_eq!(rerun.exit, 0, "{rerun:?}");
    assert_eq!(rerun.lines_of("rerun")[0]["outcome"], "pass", "{rerun:?}");
}

#[test]
fn compare_measures_the_flaky_test_on_both_sides() {
    let suite = project("jest");
    suite.write("helper.js", "module.exports = { unused: true };\n");
    commit(&suite, "an unrelated change");
    let vars = vars(&suite);
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
    // Each run of either side drew the next number of the one seeded sequence.
    let expected = (0..u32::try_from(runs * 2).unwrap_or(0))
        .filter(|n| flaky_fails(FLAKY_SEED, *n))
        .count() as u64;
    let failures = line["base"]["failures"].as_u64().unwrap_or(0)
        + line["branch"]["failures"].as_u64().unwrap_or(0);
    assert_eq!(failures, expected, "{line:#}");
    // Every run of both sides recorded the jest seed it passed.
    let seeds = line["branch"]["seeds"].as_array().map_or(0, Vec::len) as u64;
    assert_eq!(seeds, runs, "{line:#}");
}

#[test]
fn gate_replays_a_new_jest_test_and_accepts_a_clean_change() {
    let suite = project("jest");
    // A suite with no red test: the gate runs the whole suite too.
    for file in ["__tests__/basic.test.js", "__tests__/hostile.test.js"] {
        std::fs::remove_file(suite.repo.join(file)).expect("remove a fixture test");
    }
    suite.write(
        "__tests__/cart.test.js",
        "test('totals', () => { expect(1 + 2).toBe(3); });\n",
    );
    suite.write(
        "candor.toml",
        "[lane]\nmin_replays = 3\nmax_wall_seconds = 300\n",
    );
    triage_support::git(&suite.repo, &["checkout", "--quiet", "main"]);
    commit(&suite, "a clean suite");
    triage_support::git(&suite.repo, &["checkout", "--quiet", "-B", "change"]);
    suite.write(
        "__tests__/cart.test.js",
        "test('totals', () => { expect(1 + 2).toBe(3); });\n\ndescribe('cart', () => {\n  test('is empty', () => { expect([].length).toBe(0); });\n});\n",
    );
    commit(&suite, "test the empty cart");
    let ran = suite.candor(&["gate", "--format", "json"], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    let line = &ran.lines_of("gate")[0];
    assert_eq!(line["pass"], true, "{line:#}");
    let touched: Vec<&str> = line["touched"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["id"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        touched.contains(&"__tests__/cart.test.js::cart > is empty"),
        "{line:#}"
    );
}
