//! `candor triage` on what real runners wrote: for pytest, cargo test, cargo-nextest and
//! go test, a failure matching its fingerprint is known-flake, and the same test failing
//! with another exception, or at another frame, is a regression. Each suite is run through
//! candor's own adapter (retries and caches off) with the failure mode in the command
//! prefix's environment, then triaged by the binary.
//!
//! With pytest, the rest of the verdict table on real reports: a quarantined test's known
//! shape is not-evidence and a new shape in it is a regression; an expired fingerprint
//! gives expired; an unlisted test's new shape is unverified.

use crate::triage_support;

use std::path::PathBuf;
use std::time::Duration;

use candor::runner::process::SystemExecutor;
use candor::runner::{Context, RunOptions, RunnerConfig, RunnerKind, adapter};
use triage_support::{MODE, Suite, TODAY, fingerprint, suite};

/// The failure modes the fixtures know, and the verdict each gets for a trusted test.
const MODES: [(&str, &str); 3] = [
    ("flake", "known-flake"),
    ("frame", "regression"),
    ("exception", "regression"),
];

/// Runs the suite with `MODE=mode` through candor's adapter; returns the report.
fn run_suite(suite: &Suite, kind: RunnerKind, mode: &str) -> PathBuf {
    let mut command = vec!["env".to_owned(), format!("{MODE}={mode}")];
    command.extend(kind.default_command());
    let config = RunnerConfig {
        kind: Some(kind),
        command: Some(command),
        ..RunnerConfig::default()
    };
    let executor = SystemExecutor;
    let context = Context::new(&suite.repo, suite.temp.path().join(mode), &executor)
        .with_timeout(Some(Duration::from_secs(300)), Duration::from_secs(2));
    let runner = adapter(&config, &context).expect("the runner is usable");
    let report = runner
        .run_suite(&context, RunOptions { seed: Some(7) })
        .expect("the suite runs");
    assert_ne!(report.exit_code(), 0, "{mode}: the webhook test must fail");
    report.report
}

/// Triages each mode's report and checks its verdict and reason.
fn check_modes(suite: &Suite, kind: RunnerKind, test: &str, frame: &str) {
    suite.tier(test, "trusted");
    for (mode, expected) in MODES {
        let report = run_suite(suite, kind, mode);
        let report = report.display().to_string();
        let mut args = vec!["triage", "--format", "json", &report];
        if kind == RunnerKind::Cargo {
            // The adapter's libtest JSON names tests the way nextest's does, and reads as
            // nextest's: a file cannot say which cargo runner wrote it.
            args.extend(["--runner", "cargo"]);
        }
        let ran = suite.candor(&args, &[("CANDOR_TODAY", TODAY)]);
        let verdicts = ran.lines_of("verdict");
        assert_eq!(verdicts.len(), 1, "{kind} {mode}: {ran:?}");
        let verdict = &verdicts[0];
        assert_eq!(verdict["test"], test, "{kind} {mode}: {ran:?}");
        assert_eq!(verdict["verdict"], expected, "{kind} {mode}: {ran:?}");
        assert_eq!(verdict["tier"], "trusted");
        let reason = verdict["reason"].as_str().unwrap_or_default();
        match mode {
            "flake" => {
                assert_eq!(verdict["fingerprint"], "FP-001", "{ran:?}");
                assert_eq!(verdict["failure"]["failing_frame"], frame, "{ran:?}");
                assert_eq!(verdict["rerun_allowed"], true);
                assert_eq!(ran.exit, 0, "{kind} {mode}: {ran:?}");
            }
            "frame" => {
                assert!(
                    reason.contains(&format!("not at the fingerprint's {frame}")),
                    "{kind}: {reason}"
                );
                assert_eq!(ran.exit, 1, "{kind} {mode}: {ran:?}");
            }
            _ => {
                assert!(
                    reason.contains("is not the fingerprint's")
                        || reason.contains("has no exception type"),
                    "{kind}: {reason}"
                );
                assert_eq!(ran.exit, 1, "{kind} {mode}: {ran:?}");
            }
        }
        let summary = &ran.lines_of("triage-summary")[0];
        assert_eq!(summary["red"], 1);
    }
}

const PYTEST_TEST: &str = "tests/test_webhook.py::test_payment_webhook";

fn pytest_suite() -> Suite {
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
    suite
}

#[test]
fn pytest_known_flake_and_regressions() {
    let suite = pytest_suite();
    check_modes(
        &suite,
        RunnerKind::Pytest,
        PYTEST_TEST,
        "tests/test_webhook.py:7",
    );
}

const CARGO_TEST: &str = "triage-fixture::tests::payment_webhook";

/// The crate, with the timeout's fingerprint for `runner` (`cargo` or `nextest`: the
/// condition names the runner that reports it).
fn cargo_suite(runner: &str) -> Suite {
    let suite = suite("cargo");
    suite.write(
        "candor.toml",
        &fingerprint(
            "FP-001",
            CARGO_TEST,
            "panic",
            r"timed out after \d+ms waiting for webhook stub on port \d+",
            "src/lib.rs:9",
            runner,
        ),
    );
    suite
}

#[test]
fn cargo_test_known_flake_and_regressions() {
    check_modes(
        &cargo_suite("cargo"),
        RunnerKind::Cargo,
        CARGO_TEST,
        "src/lib.rs:9",
    );
}

#[test]
fn nextest_known_flake_and_regressions() {
    check_modes(
        &cargo_suite("nextest"),
        RunnerKind::Nextest,
        CARGO_TEST,
        "src/lib.rs:9",
    );
}

const GO_TEST: &str = "example.com/triage::TestPaymentWebhook";

#[test]
fn go_test_known_flake_and_regressions() {
    let suite = suite("go");
    suite.write(
        "candor.toml",
        &fingerprint(
            "FP-001",
            GO_TEST,
            "panic",
            r"timed out after \d+ms waiting for webhook stub on port \d+",
            "webhook_test.go:12",
            "go",
        ),
    );
    check_modes(&suite, RunnerKind::Go, GO_TEST, "webhook_test.go:12");
}

/// The verdict of `report` with the test at `tier` ("unlisted" leaves it out).
fn verdict_of(suite: &Suite, report: &str, tier: &str, today: &str) -> (String, i32, String) {
    if tier == "unlisted" {
        suite.write(".ci/test-reliability.yaml", "tests: []\n");
    } else {
        suite.tier(PYTEST_TEST, tier);
    }
    let ran = suite.candor(
        &["triage", "--format", "json", report],
        &[("CANDOR_TODAY", today)],
    );
    let verdicts = ran.lines_of("verdict");
    assert_eq!(verdicts.len(), 1, "{ran:?}");
    (
        verdicts[0]["verdict"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        ran.exit,
        verdicts[0]["reason"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

#[test]
fn quarantine_expiry_and_unlisted_tests_on_real_pytest_reports() {
    let suite = pytest_suite();
    let flake = run_suite(&suite, RunnerKind::Pytest, "flake");
    let flake = flake.display().to_string();
    let other = run_suite(&suite, RunnerKind::Pytest, "exception");
    let other = other.display().to_string();

    let (verdict, exit, _) = verdict_of(&suite, &flake, "quarantined", TODAY);
    assert_eq!((verdict.as_str(), exit), ("not-evidence", 0));
    // The incident: a quarantine keyed by name let an AttributeError through.
    let (verdict, exit, reason) = verdict_of(&suite, &other, "quarantined", TODAY);
    assert_eq!((verdict.as_str(), exit), ("regression", 1), "{reason}");
    assert!(
        reason.contains("AttributeError is not the fingerprint's TimeoutError"),
        "{reason}"
    );
    assert!(reason.contains("a new failure shape inside a quarantined test"));

    // last_seen is 2026-10-01: 60 days later it still holds, 61 days later it expired.
    let (verdict, _, _) = verdict_of(&suite, &flake, "trusted", "2026-11-30");
    assert_eq!(verdict, "known-flake");
    let (verdict, exit, reason) = verdict_of(&suite, &flake, "trusted", "2026-12-01");
    assert_eq!((verdict.as_str(), exit), ("expired", 1), "{reason}");
    assert!(reason.contains("61 days ago"), "{reason}");
    let (verdict, exit, _) = verdict_of(&suite, &flake, "quarantined", "2026-12-01");
    assert_eq!((verdict.as_str(), exit), ("expired", 1));

    // Issue 12 item 4: an unverified red is not green.
    let (verdict, exit, _) = verdict_of(&suite, &other, "unlisted", TODAY);
    assert_eq!((verdict.as_str(), exit), ("unverified", 1));
    let (verdict, exit, _) = verdict_of(&suite, &other, "probation", TODAY);
    assert_eq!((verdict.as_str(), exit), ("unverified", 1));
}

#[test]
fn a_regression_is_printed_with_its_whole_failure() {
    let suite = pytest_suite();
    suite.tier(PYTEST_TEST, "trusted");
    let report = run_suite(&suite, RunnerKind::Pytest, "exception");
    let ran = suite.candor(
        &["triage", &report.display().to_string()],
        &[("CANDOR_TODAY", TODAY)],
    );
    assert_eq!(ran.exit, 1, "{ran:?}");
    let out = &ran.stdout;
    assert!(
        out.starts_with(&format!(
            "regression  {PYTEST_TEST}  [trusted]\n  why: trusted test"
        )),
        "{out}"
    );
    assert!(
        out.contains("  failure: AttributeError: 'NoneType' object has no attribute 'port'\n"),
        "{out}"
    );
    assert!(
        out.contains("  at: tests/test_webhook.py:11:wait_for_stub\n"),
        "{out}"
    );
    // The runner's own text, every line of it.
    assert!(
        out.contains("  | ") && out.contains("raise AttributeError"),
        "{out}"
    );
    assert!(out.contains("1 red test: 1 regression\n"), "{out}");
    assert!(out.contains("next:\n  regression: do not rerun"), "{out}");
}
