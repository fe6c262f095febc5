//! The cargo test and cargo-nextest adapters on a real crate (tests/fixtures/runner/cargo):
//! a library with a passing and a failing unit test and an integration test. Each test
//! builds it into a target directory inside its own temp dir.

use crate::runner_support;

use candor::results::Outcome;
use candor::runner::process::SystemExecutor;
use candor::runner::{
    Adapter, CargoTest, Context, ListedTest, Nextest, RunOptions, RunnerError, RunnerKind,
    SeedSupport,
};
use runner_support::{
    Fixture, HOSTILE, TIMEOUT, argv_holds, expected, fixture, logs, not_run, outcomes, pwned_files,
    ran_argvs,
};

/// A copy of the crate whose build goes to `<temp>/target`.
fn crate_fixture() -> Fixture {
    let fixture = fixture("cargo");
    let config = fixture.repo.join(".cargo");
    std::fs::create_dir_all(&config).expect(".cargo");
    let target = toml::Value::String(fixture.temp.path().join("target").display().to_string());
    std::fs::write(
        config.join("config.toml"),
        format!("[build]\ntarget-dir = {target}\n"),
    )
    .expect("config.toml");
    fixture
}

fn context<'a>(fixture: &Fixture, executor: &'a SystemExecutor) -> Context<'a> {
    Context::new(&fixture.repo, &fixture.scratch, executor)
        .with_timeout(TIMEOUT, std::time::Duration::from_secs(2))
}

const ALL: [(&str, Outcome); 3] = [
    ("runner-fixture::tests::passes", Outcome::Pass),
    ("runner-fixture::tests::fails", Outcome::Fail),
    ("runner-fixture::api::adds_from_outside", Outcome::Pass),
];

#[test]
fn cargo_runs_each_target_with_libtest_json_and_a_shuffle_seed() {
    let fixture = crate_fixture();
    let executor = SystemExecutor;
    let context = context(&fixture, &executor);
    let adapter = CargoTest::new(None).expect("default prefix");
    let report = adapter
        .run_suite(&context, RunOptions { seed: Some(31337) })
        .expect("the suite runs");

    assert_eq!(report.runner, RunnerKind::Cargo);
    assert_eq!(
        report.exit_code(),
        101,
        "one test fails:\n{}",
        logs(&report)
    );
    // One cargo invocation per test target, so each binary's tests get its id.
    assert_eq!(report.invocations.len(), 2);
    assert!(argv_holds(&report, "--lib") && argv_holds(&report, "api"));
    assert!(argv_holds(&report, "--shuffle-seed") && argv_holds(&report, "31337"));
    assert_eq!(report.seed.as_ref().map(|s| s.value), Some(31337));
    assert!(matches!(adapter.seed_support(), SeedSupport::Controls(_)));
    let stream = std::fs::read_to_string(&report.report).expect("libtest JSON");
    assert!(
        stream.contains(r#""shuffle_seed": 31337"#),
        "libtest confirms the seed:\n{stream}"
    );
    // RUSTC_BOOTSTRAP goes to the test binaries through the host's target runner, never
    // to cargo itself (which would rebuild crates whose build scripts watch it).
    let not_in_argv = report.invocations[0]
        .argv
        .iter()
        .all(|a| !a.contains("RUSTC_BOOTSTRAP"));
    assert!(not_in_argv, "RUSTC_BOOTSTRAP must not be an argument");
    let log = logs(&report);
    assert!(
        log.lines()
            .any(|l| l.starts_with("# env set: CARGO_TARGET_")
                && l.ends_with("_RUNNER=env RUSTC_BOOTSTRAP=1")),
        "{log}"
    );
    assert!(!log.contains("\n# env set: RUSTC_BOOTSTRAP"), "{log}");
    assert_eq!(outcomes(&report), expected(&ALL));
}

#[test]
fn cargo_runs_one_test_by_its_id() {
    let fixture = crate_fixture();
    let executor = SystemExecutor;
    let context = context(&fixture, &executor);
    let adapter = CargoTest::new(None).expect("default prefix");
    let report = adapter
        .run_one(
            &context,
            "runner-fixture::tests::fails",
            RunOptions::default(),
        )
        .expect("it runs");
    assert_eq!(report.exit_code(), 101, "{}", logs(&report));
    let argv = &report.invocations[0].argv;
    assert_eq!(&argv[argv.len() - 3..], ["--exact", "--", "tests::fails"]);
    assert_eq!(
        outcomes(&report),
        expected(&[("runner-fixture::tests::fails", Outcome::Fail)])
    );

    let report = adapter
        .run_one(
            &context,
            "runner-fixture::api::adds_from_outside",
            RunOptions::default(),
        )
        .expect("it runs");
    assert_eq!(report.exit_code(), 0, "{}", logs(&report));
    assert_eq!(
        outcomes(&report),
        expected(&[("runner-fixture::api::adds_from_outside", Outcome::Pass)])
    );
}

/// For every hostile id: refused outside a test binary; inside one, it reaches the runner
/// as one literal argument, `not_found` checks how the runner said so, and nothing was
/// executed by a shell.
fn assert_hostile_ids_stay_literal(
    fixture: &Fixture,
    adapter: &dyn Adapter,
    not_found: impl Fn(&str, &Result<candor::runner::RunReport, RunnerError>),
) {
    let executor = SystemExecutor;
    let context = context(fixture, &executor);
    for hostile in HOSTILE {
        // Outside every test binary: refused before anything runs.
        let refused = adapter.run_one(&context, hostile, RunOptions::default());
        assert!(
            matches!(refused, Err(RunnerError::NotATestId { .. })),
            "{hostile:?}: {refused:?}"
        );

        let id = format!("runner-fixture::{hostile}");
        let ran = adapter.run_one(&context, &id, RunOptions::default());
        let argvs = ran_argvs(&ran);
        assert!(
            argvs.iter().any(|argv| argv.iter().any(|a| a == hostile)),
            "{id:?}: {argvs:?}"
        );
        not_found(&id, &ran);
    }
    assert_eq!(
        pwned_files(fixture.temp.path()),
        Vec::<std::path::PathBuf>::new()
    );
}

#[test]
fn hostile_ids_reach_cargo_as_one_literal_argument() {
    let adapter = CargoTest::new(None).expect("default prefix");
    assert_hostile_ids_stay_literal(&crate_fixture(), &adapter, |id, ran| {
        let report = ran
            .as_ref()
            .expect("libtest ran and filtered everything out");
        assert_eq!(report.exit_code(), 0, "{id:?}:\n{}", logs(report));
        // libtest's way of saying "not found": everything filtered out, nothing run.
        let stream = std::fs::read_to_string(&report.report).expect("libtest JSON");
        assert!(stream.contains(r#""filtered_out": 2"#), "{id:?}:\n{stream}");
        assert!(outcomes(report).is_empty());
    });
}

#[test]
fn cargo_lists_tests_under_binary_ids() {
    let fixture = crate_fixture();
    let executor = SystemExecutor;
    let context = context(&fixture, &executor);
    let mut tests = CargoTest::new(None)
        .expect("default prefix")
        .list(&context)
        .expect("lists");
    tests.sort();
    assert_eq!(tests, listed());
}

fn listed() -> Vec<ListedTest> {
    vec![
        ListedTest {
            id: "runner-fixture::api::adds_from_outside".into(),
            file: Some("tests/api.rs".into()),
        },
        ListedTest {
            id: "runner-fixture::tests::fails".into(),
            file: None,
        },
        ListedTest {
            id: "runner-fixture::tests::passes".into(),
            file: None,
        },
    ]
}

#[test]
fn nextest_runs_the_suite_without_retries_into_junit_in_scratch() {
    let fixture = crate_fixture();
    let executor = SystemExecutor;
    let context = context(&fixture, &executor);
    let adapter = Nextest::new(None).expect("default prefix");
    let report = adapter
        .run_suite(&context, RunOptions::default())
        .expect("the suite runs");

    assert_eq!(report.runner, RunnerKind::Nextest);
    assert_eq!(
        report.exit_code(),
        100,
        "one test fails:\n{}",
        logs(&report)
    );
    assert_eq!(report.seed, None);
    assert!(matches!(adapter.seed_support(), SeedSupport::None(_)));
    let argv = &report.invocations[0].argv;
    assert!(argv.windows(2).any(|w| w == ["--retries", "0"]), "{argv:?}");
    assert!(
        report.report.starts_with(&fixture.scratch),
        "{}",
        report.report.display()
    );
    assert!(
        !fixture.repo.join("target").exists(),
        "nextest wrote into the repository"
    );
    let junit = std::fs::read_to_string(&report.report).expect("nextest wrote JUnit");
    assert!(
        junit.contains(r#"name="tests::fails" classname="runner-fixture""#),
        "{junit}"
    );
    assert!(
        junit.contains(r#"name="adds_from_outside" classname="runner-fixture::api""#),
        "{junit}"
    );
}

#[test]
fn nextest_report_parses_into_the_same_ids_as_cargo() {
    let fixture = crate_fixture();
    let executor = SystemExecutor;
    let context = context(&fixture, &executor);
    let report = Nextest::new(None)
        .expect("default prefix")
        .run_suite(&context, RunOptions::default())
        .expect("the suite runs");
    assert_eq!(outcomes(&report), expected(&ALL));
}

#[test]
fn nextest_runs_one_test_by_its_id() {
    let fixture = crate_fixture();
    let executor = SystemExecutor;
    let context = context(&fixture, &executor);
    let report = Nextest::new(None)
        .expect("default prefix")
        .run_one(
            &context,
            "runner-fixture::tests::passes",
            RunOptions::default(),
        )
        .expect("it runs");
    assert_eq!(report.exit_code(), 0, "{}", logs(&report));
    let argv = &report.invocations[0].argv;
    assert_eq!(
        &argv[argv.len() - 6..],
        [
            "-p",
            "runner-fixture@0.1.0",
            "--lib",
            "--",
            "--exact",
            "tests::passes"
        ]
    );
    let junit = std::fs::read_to_string(&report.report).expect("nextest wrote JUnit");
    assert_eq!(junit.matches("<testcase").count(), 1, "{junit}");
}

#[test]
fn hostile_ids_reach_nextest_as_one_literal_argument() {
    let adapter = Nextest::new(None).expect("default prefix");
    assert_hostile_ids_stay_literal(&crate_fixture(), &adapter, |id, ran| {
        // nextest's exit code for "no tests to run": for one test, an unknown id, which
        // is a runner that could not run, quoting nextest (issue #12 item 3).
        let not_run = not_run(ran);
        assert!(not_run.why.contains("code 4"), "{id:?}: {not_run}");
        assert!(not_run.unknown_test, "{id:?}: {not_run}");
        assert!(
            not_run.quoted.iter().any(|l| l.contains("no tests to run")),
            "{id:?}: {not_run}"
        );
    });
}

#[test]
fn nextest_lists_the_same_ids_as_cargo() {
    let fixture = crate_fixture();
    let executor = SystemExecutor;
    let context = context(&fixture, &executor);
    let mut tests = Nextest::new(None)
        .expect("default prefix")
        .list(&context)
        .expect("lists");
    tests.sort();
    assert_eq!(tests, listed());
}

#[test]
fn a_cargo_project_is_detected_as_nextest_when_nextest_works() {
    let fixture = crate_fixture();
    let executor = SystemExecutor;
    let context = context(&fixture, &executor);
    let nextest_works = std::process::Command::new("cargo")
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    let adapter = candor::runner::adapter(&candor::runner::RunnerConfig::default(), &context)
        .expect("detected");
    let expected = if nextest_works {
        RunnerKind::Nextest
    } else {
        RunnerKind::Cargo
    };
    assert_eq!(adapter.kind(), expected);
}
