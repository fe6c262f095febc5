//! `candor rerun` on a real pytest suite in a real git repository: a known flake is rerun
//! once, its pending line written before the runner starts and its outcome line after; a
//! regression is never rerun; a spent budget (three reruns in the window, or the change's
//! attempts) refuses with `flake-budget-exceeded` and leaves the ledger byte for byte as
//! it was; two reruns started at once cannot both spend the last attempt.

use crate::triage_support;

use std::fmt::Write as _;

use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};
use triage_support::{MODE, Ran, Suite, TODAY, fingerprint, suite};

const TEST: &str = "tests/test_webhook.py::test_payment_webhook";
const LEDGER: &str = ".flake-ledger.tsv";

/// The pytest suite as a git repository on a branch, its webhook test trusted and its
/// timeout fingerprinted, with the red run of `mode` stored in the history.
fn red(mode: &str) -> (Suite, String) {
    let suite = suite("pytest");
    suite.write(
        "candor.toml",
        &fingerprint(
            "FP-001",
            TEST,
            "TimeoutError",
            r"Timed out after \d+(\.\d+)?s waiting for webhook stub on port \d+",
            "tests/test_webhook.py:7",
            "pytest",
        ),
    );
    suite.tier(TEST, "trusted");
    let (_, head) = suite.git_with_change();
    let report = suite.temp.path().join("red.xml");
    let pytest = Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-o"])
        .arg("junit_family=xunit1")
        .arg(format!("--junitxml={}", report.display()))
        .current_dir(&suite.repo)
        .env(MODE, mode)
        .stdout(Stdio::null())
        .status()
        .expect("pytest runs");
    assert_eq!(pytest.code(), Some(1), "the webhook test fails");
    let report = report.display().to_string();
    let ingested = suite.candor(&["ingest", &report, "--workers", "4"], &today());
    assert_eq!(ingested.exit, 0, "{ingested:?}");
    (suite, head)
}

fn today() -> [(&'static str, &'static str); 1] {
    [("CANDOR_TODAY", TODAY)]
}

fn ledger(suite: &Suite) -> Option<Vec<u8>> {
    std::fs::read(suite.repo.join(LEDGER)).ok()
}

fn rerun(suite: &Suite, vars: &[(&str, &str)]) -> Ran {
    let mut all = today().to_vec();
    all.extend(vars);
    suite.candor(&["rerun", TEST, "--format", "json"], &all)
}

#[test]
fn a_known_flake_is_rerun_once_with_its_receipt_first() {
    let (suite, head) = red("flake");
    let ran = rerun(&suite, &[]);
    assert_eq!(ran.exit, 0, "the rerun passes: {ran:?}");
    let line = &ran.lines_of("rerun")[0];
    assert_eq!(line["status"], "ran");
    assert_eq!(line["verdict"], "known-flake");
    assert_eq!(line["outcome"], "pass");
    assert_eq!(line["attempt"], 2);

    // The red's failure text, hashed as printed.
    let shown = suite.candor(&["triage", "--format", "json"], &today());
    let text = shown.lines_of("verdict")[0]["failure"]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let first_fail = hex::encode(Sha256::digest(text.as_bytes()));

    let written = String::from_utf8(ledger(&suite).expect("a ledger")).expect("utf-8");
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(lines.len(), 3, "header, pending, outcome:\n{written}");
    let seed = line["seed"].as_str().map_or("-".to_owned(), str::to_owned);
    let claim = format!("{TODAY}\t{head}\t{TEST}\tFP-001\t{first_fail}\t{seed}\t4\t2");
    assert_eq!(lines[1], format!("{claim}\tpending"));
    assert_eq!(lines[2], format!("{claim}\tpass"));
    assert_eq!(line["ledger"], serde_json::json!([lines[1], lines[2]]));

    // The rerun is in the history as a rerun, and triage still reads the suite's run.
    let shown = suite.candor(&["show", TEST, "--format", "json"], &[]);
    let sources: Vec<String> = shown
        .json()
        .iter()
        .map(|e| e["source"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(sources, ["rerun", "local"], "newest first: {shown:?}");

    // Red is run 1, the rerun run 2: a third run in this change is refused.
    let before = ledger(&suite);
    let again = rerun(&suite, &[]);
    assert_eq!(again.exit, 1, "{again:?}");
    let verdict = &again.lines_of("verdict")[0];
    assert_eq!(verdict["verdict"], "budget-exceeded");
    assert_eq!(verdict["label"], "flake-budget-exceeded");
    assert!(
        verdict["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("this change has already run it 2 times (max_attempts_per_change 2)"),
        "{again:?}"
    );
    assert_eq!(again.lines_of("rerun")[0]["status"], "refused");
    assert_eq!(ledger(&suite), before, "the ledger is unchanged");
}

#[test]
fn three_reruns_in_the_window_refuse_the_next_with_the_ledger_unchanged() {
    let (suite, _) = red("flake");
    // Three earlier reruns of other changes, inside the seven days.
    let mut text = String::from(
        "# date\tsha\ttest_id\tfp\tfirst_fail_sha256\tseed\tworkers\tattempts\toutcome\n",
    );
    for (day, sha, hash) in [
        ("2026-10-01", "1111111", 'a'),
        ("2026-10-03", "2222222", 'b'),
        ("2026-10-06", "3333333", 'c'),
    ] {
        let hash = hash.to_string().repeat(64);
        let _ = writeln!(text, "{day}\t{sha}\t{TEST}\tFP-001\t{hash}\t-\t4\t2\tpass");
    }
    suite.write(LEDGER, &text);
    let human = suite.candor(&["rerun", TEST], &today());
    assert_eq!(human.exit, 1, "{human:?}");
    assert!(
        human
            .stdout
            .starts_with("flake-budget-exceeded\nbudget-exceeded FP-001"),
        "{human:?}"
    );
    assert!(
        human
            .stdout
            .contains("3 reruns of this test in the ledger in the last 7 days (budget 3)"),
        "{human:?}"
    );
    assert!(
        human
            .stdout
            .contains("refused: the rerun budget is spent; the ledger is unchanged")
    );
    assert_eq!(ledger(&suite), Some(text.clone().into_bytes()));

    // A week after the first of them, it has left the window: one rerun is allowed.
    let later = suite.candor(
        &["rerun", TEST, "--format", "json"],
        &[("CANDOR_TODAY", "2026-10-08")],
    );
    assert_eq!(later.lines_of("rerun")[0]["status"], "ran", "{later:?}");
}

#[test]
fn a_regression_is_never_rerun() {
    let (suite, _) = red("exception");
    let ran = rerun(&suite, &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert_eq!(ran.lines_of("verdict")[0]["verdict"], "regression");
    assert_eq!(ran.lines_of("rerun")[0]["status"], "refused");
    assert_eq!(ledger(&suite), None, "no ledger was created");
    let human = suite.candor(&["rerun", TEST], &today());
    assert!(
        human
            .stdout
            .contains("refused: a regression is never rerun"),
        "{human:?}"
    );
    assert!(!suite.repo.join(".candor/runs").exists(), "nothing ran");
}

#[test]
fn a_rerun_that_fails_again_records_its_failure() {
    let (suite, _) = red("flake");
    let ran = rerun(&suite, &[(MODE, "flake")]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    let line = &ran.lines_of("rerun")[0];
    assert_eq!(
        (&line["status"], &line["outcome"]),
        (&"ran".into(), &"fail".into())
    );
    let written = String::from_utf8(ledger(&suite).expect("a ledger")).expect("utf-8");
    assert!(
        written.ends_with("\tfail\n"),
        "the outcome line is last:\n{written}"
    );
    assert_eq!(
        suite
            .candor(&["ledger", "stats", "--format", "json"], &[])
            .lines_of("ledger-stats")
            .first()
            .map(|s| s["entries"].clone()),
        Some(1.into()),
        "two lines, one rerun"
    );
}

#[test]
fn two_reruns_at_once_cannot_both_spend_the_last_attempt() {
    let (suite, _) = red("flake");
    let spawn = || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_candor"));
        command
            .args(["rerun", TEST, "--format", "json"])
            .current_dir(&suite.repo)
            .env("CANDOR_DB", suite.temp.path().join("history.db"))
            .env("CANDOR_TODAY", TODAY)
            .env_remove(MODE)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command.spawn().expect("candor starts")
    };
    let (first, second) = (spawn(), spawn());
    let mut statuses = Vec::new();
    for child in [first, second] {
        let output = child.wait_with_output().expect("candor ends");
        let stdout = String::from_utf8(output.stdout).expect("utf-8");
        let rerun = stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|l| l["type"] == "rerun")
            .unwrap_or_else(|| panic!("a rerun line: {stdout}"));
        statuses.push(rerun["status"].as_str().unwrap_or_default().to_owned());
    }
    statuses.sort();
    assert_eq!(statuses, ["ran", "refused"]);
    let written = String::from_utf8(ledger(&suite).expect("a ledger")).expect("utf-8");
    assert_eq!(
        written.lines().count(),
        3,
        "one rerun, two lines:\n{written}"
    );
}

#[test]
fn a_rerun_needs_a_red_test_and_a_known_change() {
    let (suite, _) = red("flake");
    let ran = suite.candor(&["rerun", "tests/test_webhook.py::test_refund"], &today());
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(ran.stderr.contains("no red execution of"), "{ran:?}");
    let ran = suite.candor(&["rerun", TEST, "--change", "abcdef12"], &today());
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(
        ran.stderr.contains("--change abcdef12 names no commit"),
        "{ran:?}"
    );
    assert_eq!(ledger(&suite), None);
}
