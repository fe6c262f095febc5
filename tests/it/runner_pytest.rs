//! The pytest adapter on a real pytest project (tests/fixtures/runner/pytest).

use crate::runner_support;

use candor::results::Outcome;
use candor::runner::process::SystemExecutor;
use candor::runner::{
    Adapter, Context, ListedTest, Pytest, RunOptions, RunnerConfig, RunnerError, RunnerKind,
    SeedSupport,
};
use runner_support::{
    HOSTILE, TIMEOUT, argv_holds, expected, fixture, logs, not_run, outcomes, pwned_files,
    ran_argvs,
};

fn context<'a>(fixture: &runner_support::Fixture, executor: &'a SystemExecutor) -> Context<'a> {
    Context::new(&fixture.repo, &fixture.scratch, executor)
        .with_timeout(TIMEOUT, std::time::Duration::from_secs(2))
}

#[test]
fn the_suite_runs_with_cache_and_retries_off_and_a_recorded_seed() {
    let fixture = fixture("pytest");
    let executor = SystemExecutor;
    let context = context(&fixture, &executor);
    let adapter = Pytest::probe(None, &context).expect("pytest answers -VV");
    let report = adapter
        .run_suite(&context, RunOptions { seed: Some(4242) })
        .expect("the suite runs");

    assert_eq!(report.runner, RunnerKind::Pytest);
    assert_eq!(report.exit_code(), 1, "one test fails:\n{}", logs(&report));
    assert_eq!(report.workers, Some(1));
    let argv = &report.invocations[0].argv;
    for pair in [
        ["-p", "no:cacheprovider"],
        ["-p", "no:rerunfailures"],
        ["-o", "junit_family=xunit1"],
    ] {
        assert!(
            argv.windows(2).any(|w| w == pair),
            "{pair:?} missing from {argv:?}"
        );
    }
    assert!(
        !fixture.repo.join(".pytest_cache").exists(),
        "the cache provider ran"
    );
    if adapter.has_randomly() {
        let seed = report.seed.as_ref().expect("pytest-randomly takes a seed");
        assert_eq!(seed.value, 4242);
        assert!(argv_holds(&report, "--randomly-seed=4242"));
        assert!(
            logs(&report).contains("randomly-seed=4242"),
            "{}",
            logs(&report)
        );
        assert!(matches!(adapter.seed_support(), SeedSupport::Controls(_)));
    } else {
        assert_eq!(report.seed, None);
    }

    let junit = std::fs::read_to_string(&report.report).expect("pytest wrote JUnit");
    assert!(
        junit.contains(r#"file="tests/test_sample.py""#),
        "xunit1 carries file:\n{junit}"
    );
    assert!(
        junit.contains(r#"name="test_fails""#) && junit.contains("<failure"),
        "{junit}"
    );
}

#[test]
fn the_suite_report_parses_into_node_ids() {
    let fixture = fixture("pytest");
    let executor = SystemExecutor;
    let context = context(&fixture, &executor);
    let adapter = Pytest::probe(None, &context).expect("pytest answers -VV");
    let report = adapter
        .run_suite(&context, RunOptions::default())
        .expect("the suite runs");
    assert_eq!(
        outcomes(&report),
        expected(&[
            ("tests/test_sample.py::test_passes", Outcome::Pass),
            ("tests/test_sample.py::test_fails", Outcome::Fail),
            (
                "tests/test_sample.py::TestGroup::test_in_class",
                Outcome::Pass
            ),
        ])
    );
}

#[test]
fn one_test_runs_alone_by_its_node_id() {
    let fixture = fixture("pytest");
    let executor = SystemExecutor;
    let context = context(&fixture, &executor);
    let adapter = Pytest::probe(None, &context).expect("pytest answers -VV");
    let id = "tests/test_sample.py::TestGroup::test_in_class";
    let report = adapter
        .run_one(&context, id, RunOptions::default())
        .expect("it runs");
    assert_eq!(report.exit_code(), 0, "{}", logs(&report));
    let argv = &report.invocations[0].argv;
    assert_eq!(&argv[argv.len() - 2..], ["--", id]);
    let junit = std::fs::read_to_string(&report.report).expect("pytest wrote JUnit");
    assert_eq!(junit.matches("<testcase").count(), 1, "{junit}");
    assert!(
        junit.contains(r#"classname="tests.test_sample.TestGroup" name="test_in_class""#),
        "{junit}"
    );
}

#[test]
fn hostile_ids_reach_pytest_as_one_literal_argument() {
    let fixture = fixture("pytest");
    let executor = SystemExecutor;
    let context = context(&fixture, &executor);
    let adapter = Pytest::probe(None, &context).expect("pytest answers -VV");
    // pytest reads `-p NAME` anywhere on its command line, even after `--`, and imports
    // NAME: ids that look like options are refused before anything runs.
    for id in ["-p evil_plugin", "-pevil_plugin", "--help"] {
        let refused = adapter.run_one(&context, id, RunOptions::default());
        assert!(
            matches!(refused, Err(RunnerError::NotATestId { .. })),
            "{id:?}: {refused:?}"
        );
    }
    for id in HOSTILE {
        let ran = adapter.run_one(&context, id, RunOptions::default());
        assert!(
            ran_argvs(&ran)
                .iter()
                .any(|argv| argv.iter().any(|a| a == id)),
            "{id:?} is not one argument"
        );
        // pytest's usage error (exit 4): the id is a path that does not exist, which is a
        // runner that could not run, quoting pytest, and an unknown test (issue #12 item 3).
        let not_run = not_run(&ran);
        assert!(not_run.why.contains("code 4"), "{id:?}: {not_run}");
        assert!(not_run.unknown_test, "{id:?}: {not_run}");
        assert!(
            not_run.quoted.iter().any(|line| line.contains("not found")),
            "{id:?}: {not_run}"
        );
    }
    assert_eq!(
        pwned_files(fixture.temp.path()),
        Vec::<std::path::PathBuf>::new()
    );
}

#[test]
fn listing_gives_node_ids_and_files() {
    let fixture = fixture("pytest");
    let executor = SystemExecutor;
    let context = context(&fixture, &executor);
    let adapter = Pytest::probe(None, &context).expect("pytest answers -VV");
    let mut tests = adapter.list(&context).expect("pytest collects");
    tests.sort();
    let file = Some("tests/test_sample.py".to_owned());
    assert_eq!(
        tests,
        vec![
            ListedTest {
                id: "tests/test_sample.py::TestGroup::test_in_class".into(),
                file: file.clone()
            },
            ListedTest {
                id: "tests/test_sample.py::test_fails".into(),
                file: file.clone()
            },
            ListedTest {
                id: "tests/test_sample.py::test_passes".into(),
                file
            },
        ]
    );
}

#[test]
fn a_pytest_project_is_detected() {
    let fixture = fixture("pytest");
    let executor = SystemExecutor;
    let context = context(&fixture, &executor);
    let adapter = candor::runner::adapter(&RunnerConfig::default(), &context).expect("detected");
    assert_eq!(adapter.kind(), RunnerKind::Pytest);
}
