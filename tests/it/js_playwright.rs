//! The Playwright Test adapter end to end on a real `@playwright/test` install
//! (tests/fixtures/js/playwright, its package-lock.json committed, `npm ci` by `.ci/run`):
//! non-browser tests in two projects, so every id carries its project. The suite with
//! retries off although the config asks for them, one test by id (hostile titles
//! included), runs that could not run (a bad option, a file that does not load, a missing
//! browser), the listing, an ordered run, a report with retries read as retries, and
//! `candor test`, `triage`, `rerun`, `compare` and `gate` on a git repository of the
//! fixture. Issue #20 (Playwright).
//!
//! The fixture's flaky test draws from a seeded sequence per project
//! (`js_support::flaky_fails`, one counter file per project), and its order-dependent pair
//! passes only when the writer runs first in the same worker, so every outcome below is
//! known before the run.

use crate::js_support;
use crate::runner_support;
use crate::triage_support;

use std::time::Duration;

use candor::results::{Outcome, ParseOptions, parse_all};
use candor::runner::process::SystemExecutor;
use candor::runner::{
    Adapter, Arrangement, Context, RunOptions, RunnerConfig, RunnerKind, adapter,
};
use js_support::{borrowed, commit, flaky_fails, project};
use runner_support::{HOSTILE, argv_holds, logs, not_run, outcomes, pwned_files, ran_argvs};
use triage_support::{Suite, TODAY, fingerprint};

const ADDS: &str = "[alpha] tests/basic.spec.js::math > adds";
const BETA_ADDS: &str = "[beta] tests/basic.spec.js::math > adds";
const SUBTRACTS: &str = "[alpha] tests/basic.spec.js::math > subtracts wrongly";
const SKIPPED: &str = "[alpha] tests/basic.spec.js::math > is skipped";
const FLAKY: &str = "[alpha] tests/basic.spec.js::flaky one in four";
const BETA_FLAKY: &str = "[beta] tests/basic.spec.js::flaky one in four";
const WRITER: &str = "[alpha] tests/basic.spec.js::order > writer sets state";
const READER: &str = "[alpha] tests/basic.spec.js::order > reader needs the writer first";
const HOSTILE_TITLE: &str = "[alpha] tests/hostile.spec.js::weird (a+b)* [x] | ^$ > quotes \"double\" 'single' `back` ünïcødé :: $HOME; rm -rf /";

/// The flaky test's seed: each project's runs go fail, pass, pass, fail, fail, …
const FLAKY_SEED: u32 = 4;

/// The fixture's seven tests in both projects.
fn every_id() -> Vec<String> {
    let mut ids = Vec::new();
    for project in ["alpha", "beta"] {
        for id in [
            ADDS,
            SUBTRACTS,
            SKIPPED,
            FLAKY,
            WRITER,
            READER,
            HOSTILE_TITLE,
        ] {
            ids.push(id.replacen("[alpha]", &format!("[{project}]"), 1));
        }
    }
    ids.sort();
    ids
}

/// The flaky test's variables: its seed, and the counter files' common prefix.
fn flaky_vars(suite: &Suite) -> Vec<(String, String)> {
    js_support::flaky_vars(suite, FLAKY_SEED)
}

/// The counter file of one project's flaky test.
fn counter(suite: &Suite, project: &str) -> std::path::PathBuf {
    let base = js_support::counter(suite);
    base.with_file_name(format!(
        "{}-{project}",
        base.file_name().unwrap_or_default().to_string_lossy()
    ))
}

/// The adapter `[runner] kind = "playwright"` builds, its command prefixed with the flaky
/// test's variables (`env` passes them; no shell).
fn playwright_adapter(suite: &Suite, context: &Context<'_>, extra: &[&str]) -> Box<dyn Adapter> {
    let mut command = vec!["env".to_owned()];
    command.extend(
        flaky_vars(suite)
            .into_iter()
            .map(|(name, value)| format!("{name}={value}")),
    );
    command.extend(["node_modules/.bin/playwright".to_owned(), "test".to_owned()]);
    command.extend(extra.iter().map(|a| (*a).to_owned()));
    let config = RunnerConfig {
        kind: Some(RunnerKind::Playwright),
        command: Some(command),
        ..RunnerConfig::default()
    };
    adapter(&config, context).expect("the playwright adapter")
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
fn the_suite_runs_every_project_with_retries_off_and_its_own_report() {
    let suite = project("playwright");
    let executor = SystemExecutor;
    let context = context(&suite, &executor);
    let playwright = playwright_adapter(&suite, &context, &[]);
    assert!(flaky_fails(FLAKY_SEED, 0) && !flaky_fails(FLAKY_SEED, 1));
    let report = playwright
        .run_suite(&context, RunOptions { seed: Some(1) })
        .expect("the suite runs");
    assert_eq!(report.runner, RunnerKind::Playwright);
    assert_eq!(report.exit_code(), 1, "{}", logs(&report));
    assert!(argv_holds(&report, "--retries=0"));
    // No seed: Playwright has none to take.
    assert_eq!(report.seed, None);
    let pairs = outcomes(&report);
    let ids: Vec<&str> = pairs.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, every_id(), "{pairs:?}");
    for project in ["alpha", "beta"] {
        let id = |alpha: &str| alpha.replacen("[alpha]", &format!("[{project}]"), 1);
        assert_eq!(outcome_of(&pairs, &id(ADDS)), Some(Outcome::Pass));
        assert_eq!(outcome_of(&pairs, &id(SUBTRACTS)), Some(Outcome::Fail));
        assert_eq!(outcome_of(&pairs, &id(SKIPPED)), Some(Outcome::Skip));
        assert_eq!(outcome_of(&pairs, &id(WRITER)), Some(Outcome::Pass));
        assert_eq!(outcome_of(&pairs, &id(READER)), Some(Outcome::Pass));
        assert_eq!(outcome_of(&pairs, &id(HOSTILE_TITLE)), Some(Outcome::Pass));
        // The config's `retries: 2` would have made this red a flaky pass.
        assert_eq!(outcome_of(&pairs, &id(FLAKY)), Some(flaky_outcome(0)));
    }
    // Each attempt once: no retry ran.
    let file = std::fs::File::open(&report.report).expect("the report");
    let (executions, _) = parse_all(file, &ParseOptions::default()).expect("it parses");
    assert!(executions.iter().all(|e| e.attempts == 1), "{executions:?}");
    // The config's own JSON report and artifacts were not written in the repository.
    assert!(!suite.repo.join("user-report.json").exists());
    let artifacts = suite.repo.join("test-results");
    assert!(
        !artifacts.exists(),
        "{:?}\n{}",
        std::fs::read_dir(&artifacts).map(|d| d.flatten().map(|e| e.path()).collect::<Vec<_>>()),
        logs(&report)
    );
}

/// Issue #20 (Playwright) item 1: a report Playwright wrote with its retries on (the
/// config's `retries: 2`, as in CI) has every attempt read as an attempt: the flaky test
/// is a flaky pass of two attempts, the failing one a failure of three.
#[test]
fn a_report_with_retries_is_read_as_retries() {
    let suite = project("playwright");
    let mut command = std::process::Command::new(suite.repo.join("node_modules/.bin/playwright"));
    command
        .arg("test")
        .current_dir(&suite.repo)
        .envs(flaky_vars(&suite))
        .env_remove("PLAYWRIGHT_JSON_OUTPUT_FILE")
        .env_remove("PLAYWRIGHT_JSON_OUTPUT_NAME");
    let output = command.output().expect("playwright runs");
    let written = suite.repo.join("user-report.json");
    assert!(
        written.is_file(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let options = ParseOptions {
        repo_root: Some(suite.repo.to_string_lossy().into_owned()),
        ..ParseOptions::default()
    };
    let (executions, summary) =
        parse_all(std::fs::File::open(&written).expect("the report"), &options)
            .expect("the report parses");
    assert_eq!(summary.producer.as_deref(), Some("playwright"));
    let find = |id: &str| {
        executions
            .iter()
            .find(|e| e.test_id == id)
            .unwrap_or_else(|| panic!("{id} in {executions:?}"))
    };
    for id in [FLAKY, BETA_FLAKY] {
        let flaky = find(id);
        assert_eq!((flaky.outcome, flaky.attempts), (Outcome::FlakyPass, 2));
        assert!(
            flaky.failure.is_some(),
            "the first attempt's failure is kept"
        );
    }
    let subtracts = find(SUBTRACTS);
    assert_eq!((subtracts.outcome, subtracts.attempts), (Outcome::Fail, 3));
    assert_eq!(find(ADDS).outcome, Outcome::Pass);

    // `candor ingest` stores it the same way: the flaky test is no plain pass.
    let vars = [("CANDOR_TODAY", TODAY)];
    let ingested = suite.candor(
        &["ingest", "--format", "json", &written.to_string_lossy()],
        &vars,
    );
    assert_eq!(ingested.exit, 0, "{ingested:?}");
    let shown = suite.candor(&["show", FLAKY, "--format", "json"], &vars);
    let executions = shown.lines_of("execution");
    assert_eq!(executions.len(), 1, "{shown:?}");
    assert_eq!(
        (&executions[0]["outcome"], &executions[0]["attempts"]),
        (&Outcome::FlakyPass.as_str().into(), &2.into()),
        "{shown:?}"
    );
}

#[test]
fn one_test_runs_alone_by_its_id_in_its_project() {
    let suite = project("playwright");
    let executor = SystemExecutor;
    let context = context(&suite, &executor);
    let playwright = playwright_adapter(&suite, &context, &[]);
    for (id, expected) in [
        (ADDS, Outcome::Pass),
        (BETA_ADDS, Outcome::Pass),
        (SUBTRACTS, Outcome::Fail),
        (SKIPPED, Outcome::Skip),
        // Alone, the reader has no writer before it.
        (READER, Outcome::Fail),
        (HOSTILE_TITLE, Outcome::Pass),
    ] {
        let report = playwright
            .run_one(&context, id, RunOptions { seed: Some(9) })
            .unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(
            outcomes(&report),
            vec![(id.to_owned(), expected)],
            "{id}:\n{}",
            logs(&report)
        );
        assert!(argv_holds(&report, "--retries=0"));
    }
    // The flaky test's runs follow its project's seeded sequence.
    for n in 0..2 {
        let report = playwright
            .run_one(&context, FLAKY, RunOptions::default())
            .expect("it runs");
        assert_eq!(
            outcomes(&report),
            vec![(FLAKY.to_owned(), flaky_outcome(n))],
            "run {n}"
        );
    }
    assert!(!counter(&suite, "beta").exists(), "only alpha's ran");
}

#[test]
fn ids_that_name_no_test_could_not_run_and_never_reach_a_shell() {
    let suite = project("playwright");
    let executor = SystemExecutor;
    let context = context(&suite, &executor);
    let playwright = playwright_adapter(&suite, &context, &[]);
    let missing = playwright.run_one(
        &context,
        "[alpha] tests/basic.spec.js::math > nope",
        RunOptions::default(),
    );
    assert!(not_run(&missing).unknown_test, "{missing:?}");
    // A project that does not exist: Playwright's own error, before any test.
    let missing = playwright.run_one(
        &context,
        "[gamma] tests/basic.spec.js::math > adds",
        RunOptions::default(),
    );
    assert!(missing.is_err(), "{missing:?}");
    // Case matters: Playwright's `--grep` would ignore it without the slashes.
    let missing = playwright.run_one(
        &context,
        "[alpha] tests/basic.spec.js::MATH > ADDS",
        RunOptions::default(),
    );
    assert!(not_run(&missing).unknown_test, "{missing:?}");
    let plain = ran_argvs(&playwright.run_one(&context, ADDS, RunOptions::default()));
    for hostile in HOSTILE {
        let id = format!("[alpha] tests/basic.spec.js::{hostile}");
        let ran = playwright.run_one(&context, &id, RunOptions::default());
        assert!(not_run(&ran).unknown_test, "{id:?}: {ran:?}");
        let argvs = ran_argvs(&ran);
        assert_eq!(argvs[0].len(), plain[0].len(), "{:?}", argvs[0]);
        let id = format!("[alpha] {hostile}::x");
        let ran = playwright.run_one(&context, &id, RunOptions::default());
        assert!(not_run(&ran).unknown_test, "{id:?}: {ran:?}");
    }
    assert!(pwned_files(suite.temp.path()).is_empty());
}

#[test]
fn a_bad_option_a_broken_file_and_a_missing_browser_could_not_run() {
    let suite = project("playwright");
    let executor = SystemExecutor;
    let context = context(&suite, &executor);
    let bad = playwright_adapter(&suite, &context, &["--no-such-option"]);
    let ran = bad.run_suite(&context, RunOptions::default());
    let error = not_run(&ran);
    assert!(error.why.contains("wrote no report"), "{error}");
    assert!(
        error.quoted.iter().any(|l| l.contains("unknown option")),
        "{error}"
    );

    // A browser project on a machine whose browsers are not downloaded.
    suite.write(
        "tests/page.spec.js",
        "const { test, expect } = require('@playwright/test');\ntest('opens a page', async ({ page }) => {\n  await page.setContent('<h1>hi</h1>');\n  await expect(page.locator('h1')).toHaveText('hi');\n});\n",
    );
    let browsers = suite.temp.path().join("no-browsers");
    std::fs::create_dir_all(&browsers).expect("an empty browsers folder");
    let prefix = format!("PLAYWRIGHT_BROWSERS_PATH={}", browsers.display());
    let config = RunnerConfig {
        kind: Some(RunnerKind::Playwright),
        command: Some(
            [
                "env",
                prefix.as_str(),
                "node_modules/.bin/playwright",
                "test",
                "--project=alpha",
            ]
            .map(str::to_owned)
            .to_vec(),
        ),
        ..RunnerConfig::default()
    };
    let without = adapter(&config, &context).expect("the adapter");
    let ran = without.run_one(
        &context,
        "[alpha] tests/page.spec.js::opens a page",
        RunOptions::default(),
    );
    let error = not_run(&ran);
    assert!(error.why.contains("npx playwright install"), "{error}");
    assert!(error.why.contains("/usr/bin/chromium"), "{error}");

    // A test file that does not load stops the whole run.
    suite.write("tests/broken.spec.js", "test('x', () => {\n");
    let playwright = playwright_adapter(&suite, &context, &[]);
    let ran = playwright.run_suite(&context, RunOptions::default());
    let error = not_run(&ran);
    assert!(
        error.why.contains("reported errors outside any test"),
        "{error}"
    );
    assert!(
        error.quoted.iter().any(|l| l.contains("broken.spec.js")),
        "{error}"
    );
}

/// The optional Chromium-backed check: Debian's chromium through `executablePath`.
#[test]
fn a_chromium_project_runs_with_debian_s_chromium_where_it_is_installed() {
    let chromium = std::path::Path::new("/usr/bin/chromium");
    if !chromium.exists() {
        eprintln!("skipped: the Chromium-backed Playwright project needs /usr/bin/chromium");
        return;
    }
    let suite = project("playwright");
    suite.write(
        "playwright.config.js",
        "const { defineConfig } = require('@playwright/test');\nmodule.exports = defineConfig({\n  testDir: './tests',\n  projects: [{ name: 'chromium', use: { browserName: 'chromium', launchOptions: { executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] } } }],\n});\n",
    );
    suite.write(
        "tests/page.spec.js",
        "const { test, expect } = require('@playwright/test');\ntest('opens a page', async ({ page }) => {\n  await page.setContent('<h1>hi</h1>');\n  await expect(page.locator('h1')).toHaveText('hi');\n});\n",
    );
    let executor = SystemExecutor;
    let context = context(&suite, &executor);
    let playwright = playwright_adapter(&suite, &context, &[]);
    let id = "[chromium] tests/page.spec.js::opens a page";
    let report = playwright
        .run_one(&context, id, RunOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        outcomes(&report),
        vec![(id.to_owned(), Outcome::Pass)],
        "{}",
        logs(&report)
    );
}

#[test]
fn the_listing_names_every_test_under_the_ids_run_one_takes() {
    let suite = project("playwright");
    let executor = SystemExecutor;
    let context = context(&suite, &executor);
    let playwright = playwright_adapter(&suite, &context, &[]);
    let mut ids: Vec<String> = playwright
        .list(&context)
        .expect("it lists")
        .into_iter()
        .map(|t| t.id)
        .collect();
    ids.sort();
    assert_eq!(ids, every_id());
    // Listing runs no test: no counter was touched.
    assert!(!counter(&suite, "alpha").exists());
}

#[test]
fn an_ordered_run_is_definition_order_in_one_worker_and_never_shuffled() {
    let suite = project("playwright");
    let executor = SystemExecutor;
    let context = context(&suite, &executor);
    let playwright = playwright_adapter(&suite, &context, &[]);
    let ids = [READER.to_owned(), WRITER.to_owned()];
    let report = playwright
        .run_ordered(&context, &ids, Arrangement::AsGiven, RunOptions::default())
        .expect("it runs");
    assert!(argv_holds(&report, "--workers=1"));
    assert_eq!(
        outcomes(&report),
        runner_support::expected(&[(WRITER, Outcome::Pass), (READER, Outcome::Pass)])
    );
    assert!(
        playwright
            .run_ordered(
                &context,
                &ids,
                Arrangement::Shuffled(5),
                RunOptions::default()
            )
            .is_err()
    );
    let other_project = [READER.to_owned(), BETA_ADDS.to_owned()];
    assert!(
        playwright
            .run_ordered(
                &context,
                &other_project,
                Arrangement::AsGiven,
                RunOptions::default()
            )
            .is_err()
    );
    assert!(!playwright.order_support().shuffles);
}

fn vars(suite: &Suite) -> Vec<(String, String)> {
    let mut vars = flaky_vars(suite);
    vars.push(("CANDOR_TODAY".to_owned(), TODAY.to_owned()));
    vars
}

#[test]
fn candor_test_triage_and_rerun_on_a_playwright_project() {
    let suite = project("playwright");
    triage_support::git(&suite.repo, &["checkout", "--quiet", "main"]);
    suite.write(
        "candor.toml",
        &fingerprint(
            "FP-001",
            FLAKY,
            "Error",
            r"expect\(received\)\.toBeGreaterThanOrEqual\(expected\)",
            "tests/basic.spec.js:19",
            "playwright",
        ),
    );
    // Quoted: YAML reads `[alpha] …` as a list.
    suite.write(
        ".ci/test-reliability.yaml",
        &format!("tests:\n  - id: \"{FLAKY}\"\n    tier: trusted\n"),
    );
    commit(&suite, "policy");
    triage_support::git(&suite.repo, &["checkout", "--quiet", "-B", "change"]);
    let vars = vars(&suite);
    let ran = suite.candor(&["test", "--format", "json"], &borrowed(&vars));
    let run = &ran.lines_of("test-run")[0];
    assert_eq!(run["runner"], "playwright", "{ran:?}");
    // Both projects' failing test and first flaky run are red.
    assert_eq!(
        (&run["red"], &run["tests"]),
        (&4.into(), &14.into()),
        "{ran:?}"
    );
    let verdict_of = |lines: &[serde_json::Value], id: &str| {
        lines
            .iter()
            .find(|v| v["test"] == id)
            .map(|v| v["verdict"].as_str().unwrap_or_default().to_owned())
    };
    let verdicts = ran.lines_of("verdict");
    assert_eq!(
        verdict_of(&verdicts, FLAKY).as_deref(),
        Some("known-flake"),
        "{ran:?}"
    );
    assert_eq!(ran.exit, 1, "a red that is no known flake: {ran:?}");

    let report = run["report"].as_str().expect("the report path").to_owned();
    let triaged = suite.candor(&["triage", "--format", "json", &report], &borrowed(&vars));
    assert_eq!(
        verdict_of(&triaged.lines_of("verdict"), FLAKY).as_deref(),
        Some("known-flake"),
        "{triaged:?}"
    );

    // Its rerun is alpha's second run: a pass.
    let rerun = suite.candor(&["rerun", FLAKY, "--format", "json"], &borrowed(&vars));
    assert_eq!(rerun.exit, 0, "{rerun:?}");
    assert_eq!(rerun.lines_of("rerun")[0]["outcome"], "pass", "{rerun:?}");
}

#[test]
fn compare_measures_the_flaky_test_on_both_sides() {
    let suite = project("playwright");
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
    // Each run of either side drew the next number of alpha's seeded sequence.
    let expected = (0..u32::try_from(runs * 2).unwrap_or(0))
        .filter(|n| flaky_fails(FLAKY_SEED, *n))
        .count() as u64;
    let failures = line["base"]["failures"].as_u64().unwrap_or(0)
        + line["branch"]["failures"].as_u64().unwrap_or(0);
    assert_eq!(failures, expected, "{line:#}");
    assert!(!counter(&suite, "beta").exists(), "only alpha's ran");
}

#[test]
fn gate_replays_a_new_playwright_test_in_each_project_and_accepts_a_clean_change() {
    let suite = project("playwright");
    for file in ["tests/basic.spec.js", "tests/hostile.spec.js"] {
        std::fs::remove_file(suite.repo.join(file)).expect("remove a fixture test");
    }
    let head = "const { test, expect } = require('@playwright/test');\n";
    suite.write(
        "tests/cart.spec.js",
        &format!("{head}test('totals', () => {{ expect(1 + 2).toBe(3); }});\n"),
    );
    suite.write(
        "candor.toml",
        "[lane]\nmin_replays = 3\nmax_wall_seconds = 600\n",
    );
    triage_support::git(&suite.repo, &["checkout", "--quiet", "main"]);
    commit(&suite, "a clean suite");
    triage_support::git(&suite.repo, &["checkout", "--quiet", "-B", "change"]);
    suite.write(
        "tests/cart.spec.js",
        &format!(
            "{head}test('totals', () => {{ expect(1 + 2).toBe(3); }});\n\ntest.describe('cart', () => {{\n  test('is empty', () => {{ expect([].length).toBe(0); }});\n}});\n"
        ),
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
    for id in [
        "[alpha] tests/cart.spec.js::cart > is empty",
        "[beta] tests/cart.spec.js::cart > is empty",
    ] {
        assert!(touched.contains(&id), "{id}: {line:#}");
    }
}

/// As jest's (`js_clock`): Playwright writes its JSON report when it ends, so a replay the
/// lane's clock stopped has none; the gate rejects the change as out of time rather than
/// failing to open the report (#20, #15's lane budget). The new test passes in the suite
/// (its neighbour runs first in the same worker) and never ends alone, so the suite run
/// ends and a replay is what the clock stops.
#[test]
fn a_playwright_replay_stopped_by_the_lane_s_clock_is_out_of_time_not_an_error() {
    let suite = project("playwright");
    for file in ["tests/basic.spec.js", "tests/hostile.spec.js"] {
        std::fs::remove_file(suite.repo.join(file)).expect("remove a fixture test");
    }
    let head = "const { test, expect } = require('@playwright/test');\nlet ready = false;\n";
    let totals = "test('totals', () => { ready = true; expect(1 + 2).toBe(3); });\n";
    suite.write("tests/cart.spec.js", &format!("{head}{totals}"));
    suite.write(
        "playwright.config.js",
        "module.exports = { testDir: './tests', projects: [{ name: 'alpha' }] };\n",
    );
    suite.write(
        "candor.toml",
        "[lane]\nmin_replays = 3\nmax_wall_seconds = 60\n",
    );
    triage_support::git(&suite.repo, &["checkout", "--quiet", "main"]);
    commit(&suite, "a clean suite");
    triage_support::git(&suite.repo, &["checkout", "--quiet", "-B", "change"]);
    // Alone, the new test waits for ever (Playwright's own limit raised far above the
    // lane's 60 s).
    suite.write(
        "tests/cart.spec.js",
        &format!(
            "{head}{totals}\ntest('waits for the cart', async () => {{\n  test.setTimeout(600000);\n  if (!ready) await new Promise(() => {{}});\n}});\n"
        ),
    );
    commit(&suite, "a test that never ends alone");
    let ran = suite.candor(&["gate", "--format", "json"], &[]);
    assert_eq!(ran.exit, 1, "rejected, not an error: {ran:?}");
    let line = &ran.lines_of("gate")[0];
    assert_eq!(line["pass"], false, "{line:#}");
    let killed = logs_under(&suite.repo.join(".candor/runs"))
        .iter()
        .any(|log| log.contains("--grep=") && log.contains("timed out"));
    assert!(
        killed,
        "no replay was stopped by the lane's clock: {line:#}"
    );
}

/// The text of every runner log under `folder`.
fn logs_under(folder: &std::path::Path) -> Vec<String> {
    let mut logs = Vec::new();
    for entry in std::fs::read_dir(folder).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            logs.extend(logs_under(&path));
        } else if path.extension().is_some_and(|e| e == "log") {
            logs.push(std::fs::read_to_string(&path).unwrap_or_default());
        }
    }
    logs
}

/// `candor init` writes `[runner] kind = "playwright"` for the fixture.
#[test]
fn init_detects_the_playwright_project() {
    let suite = project("playwright");
    let ran = suite.candor(&["init"], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    let written = std::fs::read_to_string(suite.repo.join("candor.toml")).expect("candor.toml");
    assert!(written.contains("\nkind = \"playwright\"\n"), "{written}");
}

/// #15 item 1: one Playwright process (one worker) runs a batch of both projects' tests,
/// the hostile title among them, and the report holds exactly those, the reader after
/// its writer (definition order); the flaky test never ran. A batch whose projects and
/// titles also select a test outside it in one of its tests' project and file (Playwright
/// runs every named project over every named file) is refused: the lane replays its tests
/// alone, never a wrong selection.
#[test]
fn a_batch_of_both_projects_runs_in_one_process_and_an_inexact_one_is_refused() {
    let suite = project("playwright");
    let executor = SystemExecutor;
    let context = context(&suite, &executor);
    let playwright = playwright_adapter(&suite, &context, &[]);
    let beta = |id: &str| id.replacen("[alpha]", "[beta]", 1);
    let ids = [
        HOSTILE_TITLE.to_owned(),
        beta(HOSTILE_TITLE),
        ADDS.to_owned(),
        BETA_ADDS.to_owned(),
        WRITER.to_owned(),
        beta(WRITER),
        READER.to_owned(),
        beta(READER),
    ];
    let report = playwright
        .run_batch(&context, &ids, RunOptions { seed: Some(9) })
        .unwrap_or_else(|e| panic!("the batch runs: {e}"));
    assert_eq!(report.invocations.len(), 1);
    let mut expected: Vec<(String, Outcome)> =
        ids.iter().map(|id| (id.clone(), Outcome::Pass)).collect();
    expected.sort();
    assert_eq!(outcomes(&report), expected, "{}", logs(&report));
    assert!(!counter(&suite, "alpha").exists() && !counter(&suite, "beta").exists());
    let inexact = [ADDS.to_owned(), SUBTRACTS.to_owned(), BETA_ADDS.to_owned()];
    let ran = playwright.run_batch(&context, &inexact, RunOptions::default());
    let refused = not_run(&ran);
    assert!(refused.why.contains("also ran"), "{refused}");
    assert!(
        refused
            .why
            .contains("[beta] tests/basic.spec.js::math > subtracts wrongly"),
        "{refused}"
    );
}
