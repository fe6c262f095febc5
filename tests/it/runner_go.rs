//! The go test adapter on a real Go module (tests/fixtures/runner/go).

use crate::runner_support;

use candor::results::Outcome;
use candor::runner::process::SystemExecutor;
use candor::runner::{Adapter, Context, GoTest, RunOptions, RunnerConfig, RunnerKind};
use runner_support::{
    HOSTILE, TIMEOUT, argv_holds, expected, fixture, logs, not_run, outcomes, pwned_files,
    ran_argvs,
};

fn context<'a>(fixture: &runner_support::Fixture, executor: &'a SystemExecutor) -> Context<'a> {
    Context::new(&fixture.repo, &fixture.scratch, executor)
        .with_timeout(TIMEOUT, std::time::Duration::from_secs(2))
}

#[test]
fn the_suite_runs_uncached_shuffled_and_parses_into_package_ids() {
    let fixture = fixture("go");
    let executor = SystemExecutor;
    let context = context(&fixture, &executor);
    let report = GoTest::new(None)
        .run_suite(&context, RunOptions { seed: Some(77) })
        .expect("the suite runs");

    assert_eq!(report.runner, RunnerKind::Go);
    assert_eq!(report.exit_code(), 1, "one test fails:\n{}", logs(&report));
    assert!(argv_holds(&report, "-count=1"));
    assert!(argv_holds(&report, "-shuffle=77"));
    assert_eq!(report.seed.as_ref().map(|s| s.value), Some(77));
    assert!(report.workers.is_some_and(|n| n >= 1));
    let stream = std::fs::read_to_string(&report.report).expect("stdout captured");
    assert!(
        stream.contains("-test.shuffle 77"),
        "go confirms the seed:\n{stream}"
    );
    assert_eq!(
        outcomes(&report),
        expected(&[
            ("example.com/fixture::TestPasses", Outcome::Pass),
            ("example.com/fixture::TestFails", Outcome::Fail),
            ("example.com/fixture::TestTable", Outcome::Pass),
            ("example.com/fixture::TestTable/small", Outcome::Pass),
            ("example.com/fixture::TestTable/large_case", Outcome::Pass),
            ("example.com/fixture/sub::TestInSub", Outcome::Pass),
        ])
    );
}

#[test]
fn one_subtest_runs_alone() {
    let fixture = fixture("go");
    let executor = SystemExecutor;
    let context = context(&fixture, &executor);
    let report = GoTest::new(None)
        .run_one(
            &context,
            "example.com/fixture::TestTable/large_case",
            RunOptions::default(),
        )
        .expect("it runs");
    assert_eq!(report.exit_code(), 0, "{}", logs(&report));
    assert!(argv_holds(&report, "^TestTable$/^large_case$"));
    assert!(argv_holds(&report, "example.com/fixture"));
    assert_eq!(
        outcomes(&report),
        expected(&[
            ("example.com/fixture::TestTable", Outcome::Pass),
            ("example.com/fixture::TestTable/large_case", Outcome::Pass),
        ])
    );
}

#[test]
fn one_failing_test_runs_alone() {
    let fixture = fixture("go");
    let executor = SystemExecutor;
    let context = context(&fixture, &executor);
    let report = GoTest::new(None)
        .run_one(
            &context,
            "example.com/fixture::TestFails",
            RunOptions::default(),
        )
        .expect("it runs");
    assert_eq!(report.exit_code(), 1);
    assert_eq!(
        outcomes(&report),
        expected(&[("example.com/fixture::TestFails", Outcome::Fail)])
    );
}

#[test]
fn hostile_ids_reach_go_as_one_literal_argument() {
    let fixture = fixture("go");
    let executor = SystemExecutor;
    let context = context(&fixture, &executor);
    let adapter = GoTest::new(None);
    for hostile in HOSTILE {
        // In the test name: one escaped, anchored -run pattern; go finds no such test.
        let id = format!("example.com/fixture::{hostile}");
        let report = adapter
            .run_one(&context, &id, RunOptions::default())
            .expect("it runs");
        let pattern = format!("^{}$", regex::escape(hostile));
        assert!(
            argv_holds(&report, &pattern),
            "{id:?}: {:?}",
            report.invocations[0].argv
        );
        let stream = std::fs::read_to_string(&report.report).expect("stdout captured");
        assert!(stream.contains("no tests to run"), "{id:?}:\n{stream}");
        assert!(outcomes(&report).is_empty());

        // In the package: one argument, which go refuses as an import path.
        let id = format!("{hostile}::TestPasses");
        let ran = adapter.run_one(&context, &id, RunOptions::default());
        let argvs = ran_argvs(&ran);
        assert!(
            argvs.iter().any(|argv| argv.iter().any(|a| a == hostile)),
            "{id:?}: {argvs:?}"
        );
        // go could not load the package: a runner that could not run (issue #12 item 3).
        let not_run = not_run(&ran);
        assert!(!not_run.quoted.is_empty(), "{id:?}: {not_run}");
    }
    assert_eq!(
        pwned_files(fixture.temp.path()),
        Vec::<std::path::PathBuf>::new()
    );
}

#[test]
fn listing_gives_top_level_tests_of_every_package() {
    let fixture = fixture("go");
    let executor = SystemExecutor;
    let context = context(&fixture, &executor);
    let mut ids: Vec<String> = GoTest::new(None)
        .list(&context)
        .expect("go lists")
        .into_iter()
        .map(|t| t.id)
        .collect();
    ids.sort();
    assert_eq!(
        ids,
        vec![
            "example.com/fixture/sub::TestInSub",
            "example.com/fixture::TestFails",
            "example.com/fixture::TestPasses",
            "example.com/fixture::TestTable",
        ]
    );
}

#[test]
fn a_go_module_is_detected() {
    let fixture = fixture("go");
    let executor = SystemExecutor;
    let context = context(&fixture, &executor);
    let adapter = candor::runner::adapter(&RunnerConfig::default(), &context).expect("detected");
    assert_eq!(adapter.kind(), RunnerKind::Go);
}

/// A package that fails outside any test (`TestMain` exiting non-zero, with and without
/// saying why first) is one error execution for the package whose message is what go
/// printed for it: a trial found the message empty, so neither a user nor the triage saw
/// why the package was red.
#[test]
fn a_package_failing_outside_any_test_carries_what_go_printed() {
    let temp = tempfile::tempdir().expect("a temp dir");
    let repo = temp.path().join("repo");
    let scratch = temp.path().join("scratch");
    for dir in [repo.join("silent"), repo.join("says"), scratch.clone()] {
        std::fs::create_dir_all(dir).expect("a folder");
    }
    let write = |path: &str, text: &str| std::fs::write(repo.join(path), text).expect("write");
    write("go.mod", "module example.com/pkgfail\n\ngo 1.19\n");
    write(
        "silent/silent_test.go",
        "package silent\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\n\
         func TestMain(m *testing.M) { os.Exit(3) }\n\nfunc TestNeverRuns(t *testing.T) {}\n",
    );
    write(
        "says/says_test.go",
        "package says\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"testing\"\n)\n\n\
         func TestMain(m *testing.M) {\n\tfmt.Println(\"connecting to the database\")\n\
         \tfmt.Println(\"setup: cannot reach the database\")\n\tos.Exit(1)\n}\n\n\
         func TestNeverRuns(t *testing.T) {}\n",
    );
    let executor = SystemExecutor;
    let context = Context::new(&repo, &scratch, &executor)
        .with_timeout(TIMEOUT, std::time::Duration::from_secs(2));
    let report = GoTest::new(None)
        .run_suite(&context, RunOptions { seed: Some(5) })
        .expect("the suite runs");
    assert_eq!(report.exit_code(), 1, "{}", logs(&report));

    let file = std::fs::File::open(&report.report).expect("the report");
    let (executions, _) =
        candor::results::parse_all(file, &candor::results::ParseOptions::default())
            .expect("the report parses");
    let mut messages: Vec<(String, Outcome, String)> = executions
        .into_iter()
        .map(|e| {
            let message = e.failure.map(|f| f.message).unwrap_or_default();
            (e.test_id, e.outcome, message)
        })
        .collect();
    messages.sort();
    assert_eq!(
        messages,
        vec![
            (
                "example.com/pkgfail/says".to_owned(),
                Outcome::Error,
                "connecting to the database | setup: cannot reach the database".to_owned()
            ),
            (
                "example.com/pkgfail/silent".to_owned(),
                Outcome::Error,
                "exit status 3".to_owned()
            ),
        ]
    );
}
