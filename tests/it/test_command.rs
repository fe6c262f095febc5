//! `candor test`, the front door, on real suites in real git repositories: it runs the
//! suite through the adapter, stores the run, triages every red test and exits by the
//! triage rule; with `candor rerun` it closes the loop.

use crate::triage_support;

use triage_support::{MODE, Suite, TODAY, fingerprint, suite};

const PYTEST_TEST: &str = "tests/test_webhook.py::test_payment_webhook";
const CARGO_TEST: &str = "triage-fixture::tests::payment_webhook";

fn pytest_repo() -> Suite {
    let suite = suite("pytest");
    suite.write(
        "candor.toml",
        &fingerprint(
            "FP-001",
            PYTEST_TEST,
            "TimeoutError",
            r"Timed out after \d+(\.\d+)?s waiting for webhook stub on port \d+",
            "tests/test_webhook.py:7",
            "pytest",
        ),
    );
    suite.tier(PYTEST_TEST, "trusted");
    suite.git_with_change();
    suite
}

fn vars(mode: Option<&'static str>) -> Vec<(&'static str, &'static str)> {
    let mut vars = vec![("CANDOR_TODAY", TODAY)];
    vars.extend(mode.map(|mode| (MODE, mode)));
    vars
}

#[test]
fn test_triage_and_rerun_close_the_loop() {
    let suite = pytest_repo();
    let ran = suite.candor(&["test", "--format", "json"], &vars(Some("flake")));
    assert_eq!(ran.exit, 0, "a known flake alone: {ran:?}");
    let run = &ran.lines_of("test-run")[0];
    assert_eq!(run["runner"], "pytest");
    assert_eq!((&run["tests"], &run["red"]), (&2.into(), &1.into()));
    assert_ne!(run["exit_code"], 0, "pytest itself failed");
    let verdict = &ran.lines_of("verdict")[0];
    assert_eq!(verdict["verdict"], "known-flake");
    assert_eq!(verdict["run_id"], run["run_id"]);

    let rerun = suite.candor(&["rerun", PYTEST_TEST, "--format", "json"], &vars(None));
    assert_eq!(rerun.exit, 0, "{rerun:?}");
    assert_eq!(rerun.lines_of("rerun")[0]["outcome"], "pass");

    // The change breaks the test in a new way: a regression, and never rerun.
    let ran = suite.candor(&["test"], &vars(Some("exception")));
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert!(
        ran.stdout
            .contains(&format!("regression  {PYTEST_TEST}  [trusted]")),
        "{ran:?}"
    );
    assert!(
        ran.stdout.contains("next:\n  regression: do not rerun"),
        "{ran:?}"
    );
    let rerun = suite.candor(&["rerun", PYTEST_TEST], &vars(None));
    assert_eq!(rerun.exit, 1, "{rerun:?}");
    assert!(
        rerun
            .stdout
            .contains("refused: a regression is never rerun")
    );

    // The history holds both suite runs and the rerun, each with its source.
    let shown = suite.candor(&["show", PYTEST_TEST, "--format", "json"], &[]);
    let sources: Vec<String> = shown
        .json()
        .iter()
        .map(|e| e["source"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(sources, ["local", "rerun", "local"], "{shown:?}");
    let ci = suite.candor(&["test", "--format", "json"], &[("CI", "true")]);
    assert_eq!(ci.exit, 0, "{ci:?}");
    let shown = suite.candor(&["show", PYTEST_TEST, "--format", "json"], &[]);
    assert_eq!(shown.json()[0]["source"], "ci");
}

#[test]
fn argv_after_the_double_dash_goes_to_the_runner() {
    let suite = pytest_repo();
    let ran = suite.candor(
        &["test", "--format", "json", "--", "-k", "refund"],
        &vars(Some("flake")),
    );
    assert_eq!(ran.exit, 0, "{ran:?}");
    let run = &ran.lines_of("test-run")[0];
    assert_eq!((&run["tests"], &run["red"]), (&1.into(), &0.into()));
    let argv: Vec<&str> = run["argv"][0]
        .as_array()
        .map(|a| a.iter().filter_map(|s| s.as_str()).collect())
        .unwrap_or_default();
    assert!(argv.windows(2).any(|w| w == ["-k", "refund"]), "{argv:?}");
    assert_eq!(ran.lines_of("triage-summary")[0]["red"], 0);
}

#[test]
fn a_runner_that_fails_without_a_red_test_is_not_green() {
    let suite = pytest_repo();
    let ran = suite.candor(&["test", "--", "-k", "no_such_test"], &vars(None));
    assert_eq!(ran.exit, 2, "pytest exits 5, nothing was judged: {ran:?}");
    // Issue #12 item 3: what pytest said, not only a log path.
    assert!(
        ran.stderr
            .contains("pytest could not run: pytest exited with code 5 (no tests ran); it said:"),
        "{ran:?}"
    );
    assert!(ran.stderr.contains("deselected"), "{ran:?}");
}

#[test]
fn a_broken_policy_stops_before_the_suite_runs() {
    let suite = pytest_repo();
    suite.write("candor.toml", "[runner]\nkind = \"karma\"\n");
    // Judged by the work tree's policy (the explicit override), the broken file stops it.
    let ran = suite.candor(&["test", "--policy", "worktree"], &vars(Some("flake")));
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(ran.stderr.contains("candor.toml:2:"), "{ran:?}");
    assert!(!suite.repo.join(".candor/runs").exists(), "nothing ran");
    // By default the merge base's policy judges; the broken work-tree file is named in a
    // warning (#14 item 7), not used.
    let ran = suite.candor(&["test"], &vars(Some("flake")));
    assert!(
        ran.stderr.contains("warning: the work tree's policy")
            && ran.stderr.contains("candor.toml:2:"),
        "{ran:?}"
    );
}

#[test]
fn cargo_runs_are_judged_under_the_adapter_that_ran_them() {
    let suite = suite("cargo");
    suite.write(
        "candor.toml",
        &(String::from("[runner]\nkind = \"cargo\"\n\n")
            + &fingerprint(
                "FP-001",
                CARGO_TEST,
                "panic",
                r"timed out after \d+ms waiting for webhook stub on port \d+",
                "src/lib.rs:9",
                "cargo",
            )),
    );
    suite.tier(CARGO_TEST, "trusted");
    suite.git_with_change();
    // The libtest JSON reads like nextest's; the run records the adapter that ran it.
    let ran = suite.candor(&["test", "--format", "json"], &vars(Some("flake")));
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(ran.lines_of("test-run")[0]["runner"], "cargo");
    assert_eq!(
        ran.lines_of("verdict")[0]["verdict"],
        "known-flake",
        "{ran:?}"
    );
    let ran = suite.candor(&["test", "--format", "json"], &vars(Some("frame")));
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert_eq!(ran.lines_of("verdict")[0]["verdict"], "regression");
}
