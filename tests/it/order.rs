//! `candor order` on real suites: the pytest project in tests/fixtures/order_pytest (a
//! polluter and its victim hidden among 50 other tests, a brittle test and its
//! state-setter, a seed-dependent test, a repeat-dependent test) and the go module in
//! tests/fixtures/order_go (a polluter and its victim sharing a package variable). Every
//! probe is a real pytest or go run. Seeds are fixed and printed in each command line.

use crate::triage_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use candor::order::prefix::is_repetition_of;
use candor::results::{ParseOptions, parse};
use candor::runner::process::SystemExecutor;
use candor::runner::{Adapter, Arrangement, Context, GoTest, Pytest, RunOptions};
use serde_json::Value;
use triage_support::{Ran, Suite, copy_dir, empty, git};

const VICTIM: &str = "tests/test_reports.py::test_report_uses_default_mode";
const POLLUTER: &str = "tests/test_config.py::test_strict_mode_can_be_enabled";
const BRITTLE: &str = "tests/test_cache.py::test_cache_dir_is_configured";
const STATE_SETTER: &str = "tests/test_bootstrap.py::test_bootstrap_sets_cache_dir";
const SEEDED: &str = "tests/test_sampling.py::test_sample_is_small";
const REPEATED: &str = "tests/test_registry.py::test_register_csv_plugin";
const GO_VICTIM: &str = "example.com/orderfixture::TestClientUsesDefaultRetries";
const GO_POLLUTER: &str = "example.com/orderfixture::TestRetriesCanBeRaised";

/// A fresh copy of `tests/fixtures/<name>`.
fn fixture(name: &str) -> Suite {
    let temp = tempfile::tempdir().expect("a temp dir");
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let repo = temp.path().join("repo");
    copy_dir(&source, &repo);
    Suite { temp, repo }
}

/// `candor order` with JSON output; its one `order` line.
fn order(suite: &Suite, args: &[&str]) -> (Ran, Value) {
    let mut all = vec!["order", "--format", "json"];
    all.extend(args);
    let ran = suite.candor(&all, &[]);
    let line = ran
        .lines_of("order")
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no order line: {ran:?}"));
    (ran, line)
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Runs an argv from candor's output in the repository, as a person pasting it would.
fn run_in(repo: &Path, argv: &[String]) -> (i32, String) {
    let (program, arguments) = argv.split_first().expect("a program");
    let output = Command::new(program)
        .args(arguments)
        .current_dir(repo)
        .env_remove("PYTEST_ADDOPTS")
        .output()
        .expect("the reproduction runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code().unwrap_or(-1), text)
}

fn probes_of(line: &Value) -> Vec<Value> {
    line["probes"].as_array().cloned().unwrap_or_default()
}

#[test]
fn a_polluter_hidden_among_fifty_tests_is_found_and_the_pair_verified() {
    let suite = fixture("order_pytest");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    suite.write(".gitignore", ".candor/\n__pycache__/\n");
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", "the suite"]);
    let head = git(&suite.repo, &["rev-parse", "HEAD"]);

    let (ran, line) = order(&suite, &[VICTIM, "--seed", "1234"]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(line["verdict"]["kind"], "order-dependent-victim", "{line}");
    assert_eq!(strings(&line["verdict"]["polluters"]), vec![POLLUTER]);
    assert_eq!(line["alone"]["red"], 0);
    assert_eq!(line["context"]["tests_before"], 54, "{line}");
    assert_eq!(line["context"]["tally"]["red"], 2);
    assert_eq!(line["bisection"]["candidates"], 54);
    let bisection_probes = line["bisection"]["probes"].as_u64().unwrap_or(u64::MAX);
    assert!(bisection_probes <= 7, "ceil(log2 54) + 1 at most: {line}");
    assert_eq!(line["verification"]["holds"], true);
    assert_eq!(line["verification"]["pair"]["red"], 3);
    assert_eq!(line["verification"]["alone"]["red"], 0);
    assert_eq!(
        line["shared_state"],
        serde_json::json!([{"kind": "attribute", "name": "settings.MODE"}])
    );
    assert!(
        line["suggested_fix"]
            .as_str()
            .is_some_and(|fix| fix.contains(POLLUTER) && fix.contains("settings.MODE")),
        "{line}"
    );
    assert!(
        line["ticket"]["title"]
            .as_str()
            .is_some_and(|title| title.contains(POLLUTER))
    );

    // The reproduction is two tests, and pasted it fails as candor says.
    let reproduction = strings(&line["reproduction"]);
    assert_eq!(reproduction[reproduction.len() - 2..], [POLLUTER, VICTIM]);
    let command = line["reproduction_command"].as_str().unwrap_or_default();
    assert!(
        command.ends_with(&format!("-- {POLLUTER} {VICTIM}")),
        "{command}"
    );
    let (code, output) = run_in(&suite.repo, &reproduction);
    assert_eq!(code, 1, "{output}");
    assert!(output.contains("1 failed, 1 passed"), "{output}");
    let alone: Vec<String> = reproduction
        .iter()
        .filter(|arg| arg.as_str() != POLLUTER)
        .cloned()
        .collect();
    let (code, output) = run_in(&suite.repo, &alone);
    assert_eq!(code, 0, "{output}");

    // Every probe is a run with a log and a run record (candor.run-record.v1) naming the
    // commit and the seed.
    let probes = probes_of(&line);
    assert!(probes.len() >= 15, "{line}");
    for probe in &probes {
        let record_path = PathBuf::from(probe["record"].as_str().expect("a record"));
        let record: Value = serde_json::from_str(
            &std::fs::read_to_string(&record_path).expect("the record exists"),
        )
        .expect("the record is JSON");
        assert_eq!(record["schema"], "candor.run-record.v1");
        assert_eq!(record["test"], VICTIM);
        assert_eq!(record["side"], "probe");
        assert_eq!(record["sequence"], probe["number"]);
        assert_eq!(record["commit"].as_str(), Some(head.as_str()));
        assert_eq!(record["seed"], probe["seed"], "{record}");
        assert!(record["argv"].as_array().is_some_and(|a| !a.is_empty()));
        assert!(Path::new(record["log"].as_str().unwrap_or_default()).is_file());
        if probe["purpose"] != "repeat" {
            assert_eq!(record["outcome"], probe["outcome"]);
        }
    }
    let finding = PathBuf::from(line["dir"].as_str().expect("a dir")).join("order.json");
    assert!(finding.is_file(), "the finding is kept with the records");
    assert_eq!(line["classified"]["bucket"], "order-dependent-victim");
    assert!(
        line["classified"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains(POLLUTER))
    );

    // `candor classify` on the probes' records leaves them out: they flip on purpose.
    let records = PathBuf::from(line["dir"].as_str().expect("a dir")).join("records");
    let classify = suite.candor(
        &[
            "classify",
            "--format",
            "json",
            &records.display().to_string(),
        ],
        &[],
    );
    assert!(classify.lines_of("classify").is_empty(), "{classify:?}");
}

#[test]
fn a_brittle_test_and_its_state_setter() {
    let suite = fixture("order_pytest");
    let (ran, line) = order(&suite, &[BRITTLE, "--seed", "1234"]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(line["verdict"]["kind"], "order-dependent-brittle", "{line}");
    assert_eq!(
        strings(&line["verdict"]["state_setters"]),
        vec![STATE_SETTER]
    );
    assert_eq!(line["alone"]["red"], line["alone"]["runs"]);
    assert_eq!(line["verification"]["pair"]["red"], 0);
    assert_eq!(line["verification"]["alone"]["red"], 3);
    assert_eq!(
        line["shared_state"],
        serde_json::json!([{"kind": "env-var", "name": "APP_CACHE_DIR"}])
    );
    let reproduction = strings(&line["reproduction"]);
    assert_eq!(
        reproduction[reproduction.len() - 2..],
        [STATE_SETTER, BRITTLE]
    );
    let (code, output) = run_in(&suite.repo, &reproduction);
    assert_eq!(code, 0, "the state-setter makes it pass: {output}");
}

#[test]
fn a_seed_dependent_test_is_reported_with_a_failing_seed() {
    let suite = fixture("order_pytest");
    // With pytest-randomly 5, seed 1234 makes `random.random()` in this test ≥ 0.5; the
    // seeds derived from it include passing ones.
    let (ran, line) = order(&suite, &[SEEDED, "--seed", "1234"]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(line["verdict"]["kind"], "seed-dependent", "{line}");
    let failing = line["verdict"]["failing_seed"].as_u64().expect("a seed");
    let passing = line["verdict"]["passing_seed"].as_u64().expect("a seed");
    // The same seed always gives the same outcome: every seed seen twice kept it.
    for entry in line["alone_by_seed"].as_array().expect("seeds") {
        let outcomes = strings(&entry["outcomes"]);
        assert!(outcomes.windows(2).all(|w| w[0] == w[1]), "{entry}");
    }
    assert!(
        probes_of(&line)
            .iter()
            .any(|p| p["purpose"] == "seed-check")
    );
    let reproduction = strings(&line["reproduction"]);
    assert!(reproduction.contains(&format!("--randomly-seed={failing}")));
    let (code, output) = run_in(&suite.repo, &reproduction);
    assert_eq!(code, 1, "it fails with {failing}: {output}");
    let with_passing: Vec<String> = reproduction
        .iter()
        .map(|arg| {
            if arg.starts_with("--randomly-seed=") {
                format!("--randomly-seed={passing}")
            } else {
                arg.clone()
            }
        })
        .collect();
    let (code, output) = run_in(&suite.repo, &with_passing);
    assert_eq!(code, 0, "it passes with {passing}: {output}");
}

#[test]
fn a_test_that_fails_only_when_repeated_in_one_process() {
    let suite = fixture("order_pytest");
    let (ran, line) = order(&suite, &[REPEATED, "--seed", "1234"]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(line["verdict"]["kind"], "repeat-dependent", "{line}");
    assert_eq!(line["alone"]["red"], 0);
    assert_eq!(line["repeat"]["dependent"], true);
    assert_eq!(
        line["repeat"]["runs"],
        serde_json::json!([["pass", "fail"], ["pass", "fail"]])
    );
    let reproduction = strings(&line["reproduction"]);
    assert!(
        reproduction.contains(&"--count=2".to_owned()),
        "{reproduction:?}"
    );
    assert!(!reproduction.iter().any(|a| a.starts_with("--junitxml")));
    let (code, output) = run_in(&suite.repo, &reproduction);
    assert_eq!(code, 1, "{output}");
    assert!(output.contains("1 failed, 1 passed"), "{output}");
}

#[test]
fn the_order_of_a_shuffled_run_comes_from_its_results_file() {
    let suite = fixture("order_pytest");
    // pytest-randomly's seed 2 runs the polluter before the victim (and 21 other tests).
    let junit = suite.temp.path().join("shuffled.xml");
    let (code, output) = run_in(
        &suite.repo,
        &[
            "python3".into(),
            "-m".into(),
            "pytest".into(),
            "-p".into(),
            "no:cacheprovider".into(),
            "-p".into(),
            "randomly".into(),
            "--randomly-seed=2".into(),
            format!("--junitxml={}", junit.display()),
        ],
    );
    assert_eq!(code, 1, "{output}");
    let from = junit.display().to_string();
    let (ran, line) = order(&suite, &[VICTIM, "--from", &from, "--seed", "2"]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(strings(&line["verdict"]["polluters"]), vec![POLLUTER]);
    assert!(
        line["context"]["source"]
            .as_str()
            .is_some_and(|s| s.contains("shuffled.xml"))
    );
    assert_eq!(line["context"]["tests_before"], 23, "{line}");
    assert_eq!(line["recorded_dropped"], 0);

    // A file without the test is an input error.
    let other = suite.temp.path().join("other.xml");
    std::fs::write(
        &other,
        r#"<testsuite><testcase classname="tests.test_x" name="test_y" file="tests/test_x.py"/></testsuite>"#,
    )
    .expect("write");
    let ran = suite.candor(
        &["order", VICTIM, "--from", &other.display().to_string()],
        &[],
    );
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(ran.stderr.contains("is not in"), "{ran:?}");
}

#[test]
fn a_test_the_runner_does_not_run_is_an_input_error() {
    let suite = fixture("order_pytest");
    let ran = suite.candor(
        &[
            "order",
            "tests/test_reports.py::test_missing",
            "--seed",
            "1",
        ],
        &[],
    );
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(ran.stderr.contains("did not run"), "{ran:?}");
    // Issue #12 item 3: with pytest's own line.
    assert!(
        ran.stderr.contains("| ERROR: not found: ")
            && ran.stderr.contains("tests/test_reports.py::test_missing"),
        "{ran:?}"
    );
}

#[test]
fn running_out_of_budget_is_reported() {
    let suite = fixture("order_pytest");
    let (ran, line) = order(&suite, &[VICTIM, "--seed", "1234", "--budget-seconds", "1"]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert!(!line["budget"]["exhausted_during"].is_null(), "{line}");
    assert_eq!(line["budget"]["limit_seconds"], 1.0);
    assert_ne!(line["verdict"]["kind"], "order-dependent-victim");

    let human = suite.candor(
        &["order", VICTIM, "--seed", "1234", "--budget-seconds", "1"],
        &[],
    );
    assert_eq!(human.exit, 1, "{human:?}");
    assert!(human.stdout.contains("budget: spent"), "{human:?}");
}

#[test]
fn a_go_polluter_and_its_victim() {
    let suite = fixture("order_go");
    let (ran, line) = order(&suite, &[GO_VICTIM, "--seed", "99"]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(line["runner"], "go");
    assert_eq!(line["verdict"]["kind"], "order-dependent-victim", "{line}");
    assert_eq!(strings(&line["verdict"]["polluters"]), vec![GO_POLLUTER]);
    assert_eq!(line["context"]["tests_before"], 11, "{line}");
    assert_eq!(line["verification"]["holds"], true);
    assert_eq!(line["repeat"]["dependent"], false);
    let command = line["reproduction_command"].as_str().unwrap_or_default();
    assert!(
        command.ends_with(
            "-shuffle=off -run '^(TestRetriesCanBeRaised|TestClientUsesDefaultRetries)$' example.com/orderfixture"
        ),
        "{command}"
    );
    let (code, output) = run_in(&suite.repo, &strings(&line["reproduction"]));
    assert_eq!(code, 1, "{output}");
    assert!(
        output.contains("Retries = 5, want the default 3"),
        "{output}"
    );
}

/// A go package whose tests run subtests before its victim (source order): `TestTable`
/// (three subtests), the polluter `TestRaises`, `TestOther` (two subtests), the victim
/// `TestVictim`, then `TestZ`, whose subtest `victim` is a victim too, after its sibling
/// `first`.
const GO_SUBTESTS: &str = r#"package subtests

import "testing"

var Retries = 3

func TestTable(t *testing.T) {
	for _, name := range []string{"one", "two", "three"} {
		t.Run(name, func(t *testing.T) {})
	}
}

func TestRaises(t *testing.T) { Retries = 5 }

func TestOther(t *testing.T) {
	t.Run("x", func(t *testing.T) {})
	t.Run("y", func(t *testing.T) {})
}

func TestVictim(t *testing.T) {
	if Retries != 3 {
		t.Fatalf("Retries = %d, want 3", Retries)
	}
}

func TestZ(t *testing.T) {
	t.Run("first", func(t *testing.T) {})
	t.Run("victim", func(t *testing.T) {
		if Retries != 3 {
			t.Fatalf("Retries = %d, want 3", Retries)
		}
	})
}
"#;

/// A trial found go's subtests counted as tests of their own in "N tests before it":
/// the count and the bisection's candidates are the top-level tests that ran before, the
/// units `go test -run` can select, and no subtest is a candidate apart from its parent.
#[test]
fn go_subtests_are_part_of_their_parent_in_the_tests_before_it() {
    let suite = empty();
    suite.write("go.mod", "module example.com/subtests\n\ngo 1.19\n");
    suite.write("subtests_test.go", GO_SUBTESTS);
    let stream = suite.temp.path().join("run.json");
    let output = Command::new("go")
        .args(["test", "-json", "-count=1", "./..."])
        .current_dir(&suite.repo)
        .output()
        .expect("go test runs");
    std::fs::write(&stream, &output.stdout).expect("write the stream");
    let from = stream.display().to_string();
    let subtests_ran = ran_ids(&stream)
        .iter()
        .filter(|id| {
            id.split_once("::")
                .is_some_and(|(_, test)| test.contains('/'))
        })
        .count();
    assert_eq!(subtests_ran, 7, "the recorded run holds the subtests");

    let top_levels_before = [
        "example.com/subtests::TestTable",
        "example.com/subtests::TestRaises",
        "example.com/subtests::TestOther",
    ];
    // go runs a subtest named in an ordered run through its whole parent, so a bisection
    // over subtests ran the same command for different "prefixes": every bisection probe
    // must run a command of its own.
    let no_subtest_probed = |line: &Value| {
        let mut commands: Vec<Value> = Vec::new();
        for probe in probes_of(line) {
            if probe["purpose"] != "bisect" {
                continue;
            }
            let record = probe["record"].as_str().expect("a probe's record");
            let record: Value =
                serde_json::from_str(&std::fs::read_to_string(record).expect("the record"))
                    .expect("a JSON record");
            assert!(
                !commands.contains(&record["argv"]),
                "two bisection probes ran one command: {}",
                record["argv"]
            );
            commands.push(record["argv"].clone());
        }
        assert!(!commands.is_empty(), "the bisection probed: {line}");
    };
    let victim = "example.com/subtests::TestVictim";
    let (ran, line) = order(&suite, &[victim, "--from", &from, "--seed", "7"]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(line["verdict"]["kind"], "order-dependent-victim", "{line}");
    assert_eq!(
        strings(&line["verdict"]["polluters"]),
        vec!["example.com/subtests::TestRaises"]
    );
    assert_eq!(line["context"]["tests_before"], 3, "{line}");
    assert_eq!(line["recorded_dropped"], 0, "{line}");
    assert_eq!(line["bisection"]["candidates"], 3, "{line}");
    no_subtest_probed(&line);

    // A subtest under investigation: its sibling `first` runs inside its own parent, so
    // neither is a test before it; the top-level tests before `TestZ` are.
    let subtest = "example.com/subtests::TestZ/victim";
    let (ran, line) = order(&suite, &[subtest, "--from", &from, "--seed", "7"]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(
        strings(&line["verdict"]["polluters"]),
        vec!["example.com/subtests::TestRaises"]
    );
    assert_eq!(line["context"]["tests_before"], 4, "{line}");
    assert_eq!(line["recorded_dropped"], 0, "{line}");
    let mut expected: Vec<&str> = top_levels_before.to_vec();
    expected.push(victim);
    assert_eq!(line["bisection"]["candidates"], expected.len(), "{line}");
    no_subtest_probed(&line);
}

/// The ids of a report, in file order, repeats kept.
fn ran_ids(report: &Path) -> Vec<String> {
    let file = std::fs::File::open(report).expect("the report");
    let mut ids = Vec::new();
    parse(file, &ParseOptions::default(), &mut |execution| {
        ids.push(execution.test_id);
        Ok(())
    })
    .expect("the report parses");
    ids
}

#[test]
fn pytest_runs_node_ids_in_the_order_given_and_shuffles_by_seed() {
    let suite = fixture("order_pytest");
    let scratch = suite.temp.path().join("scratch");
    let executor = SystemExecutor;
    let context = Context::new(&suite.repo, &scratch, &executor);
    let pytest = Pytest::probe(None, &context).expect("pytest answers");
    assert!(pytest.has_randomly() && pytest.has_repeat());
    let given: Vec<String> = [
        VICTIM,
        SEEDED,
        POLLUTER,
        "tests/test_accounts.py::test_accounts_03",
        STATE_SETTER,
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let report = pytest
        .run_ordered(
            &context,
            &given,
            Arrangement::AsGiven,
            RunOptions { seed: Some(5) },
        )
        .expect("it runs");
    assert_eq!(ran_ids(&report.report), given, "pytest kept the order");
    assert!(
        report.invocations[0]
            .argv
            .contains(&"--randomly-dont-reorganize".to_owned())
    );

    let shuffled = |seed| {
        let report = pytest
            .run_ordered(
                &context,
                &given,
                Arrangement::Shuffled(seed),
                RunOptions::default(),
            )
            .expect("it runs");
        ran_ids(&report.report)
    };
    let once = shuffled(8);
    assert_eq!(once, shuffled(8), "a seed fixes the order");
    let mut sorted = once.clone();
    sorted.sort();
    let mut expected = given.clone();
    expected.sort();
    assert_eq!(sorted, expected);

    let repeated = pytest
        .run_repeated(&context, REPEATED, 3, RunOptions { seed: Some(1) })
        .expect("it runs");
    let ids = ran_ids(&repeated.report);
    assert_eq!(ids.len(), 3);
    assert!(
        ids.iter().all(|id| is_repetition_of(id, REPEATED)),
        "{ids:?}"
    );
}

#[test]
fn go_runs_chosen_tests_in_source_order() {
    let suite = fixture("order_go");
    let scratch = suite.temp.path().join("scratch");
    let executor = SystemExecutor;
    let context = Context::new(&suite.repo, &scratch, &executor);
    let go = GoTest::new(None);
    // Named victim first: go still runs them in source order.
    let given = vec![GO_VICTIM.to_owned(), GO_POLLUTER.to_owned()];
    let report = go
        .run_ordered(
            &context,
            &given,
            Arrangement::AsGiven,
            RunOptions::default(),
        )
        .expect("it runs");
    assert_eq!(ran_ids(&report.report), vec![GO_POLLUTER, GO_VICTIM]);
    assert!(
        report.invocations[0]
            .argv
            .contains(&"-shuffle=off".to_owned())
    );

    let repeated = go
        .run_repeated(&context, GO_POLLUTER, 2, RunOptions { seed: Some(3) })
        .expect("it runs");
    assert_eq!(ran_ids(&repeated.report), vec![GO_POLLUTER, GO_POLLUTER]);
    assert!(
        go.run_ordered(
            &context,
            &[
                "example.com/orderfixture::TestA".to_owned(),
                "other/pkg::TestB".to_owned()
            ],
            Arrangement::AsGiven,
            RunOptions::default()
        )
        .is_err(),
        "one process, one package"
    );
}

/// Issue 16 item 1: a module-level `random.seed` under pytest-randomly. Without the
/// plugin's reseeding the test draws the value the module's seed fixes and passes; with
/// it, 37 of 40 seeds fail it. Base seed 5's first six derived seeds all fail, so only
/// the run without reseeding (`-p no:randomly`) can tell the seed is the cause.
#[test]
fn a_test_failing_under_almost_every_seed_but_passing_unseeded_is_seed_dependent() {
    let suite = triage_support::empty();
    suite.write("pytest.ini", "[pytest]\ntestpaths = tests\n");
    suite.write(
        "tests/test_draw.py",
        "import random\n\n# Fixed values only while nothing reseeds `random` before the test.\nrandom.seed(31)\n\n\ndef test_draw_is_small():\n    assert random.random() < 0.075\n",
    );
    suite.write(".gitignore", ".candor/\n__pycache__/\n");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", "a seeded module"]);
    let test = "tests/test_draw.py::test_draw_is_small";
    let (ran, line) = order(&suite, &[test, "--seed", "5"]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(line["verdict"]["kind"], "seed-dependent", "{line}");
    assert_eq!(
        line["unseeded"],
        serde_json::json!({"runs": 3, "red": 0, "missing": 0})
    );
    let failing = line["verdict"]["failing_seed"]
        .as_u64()
        .expect("a failing seed");
    let passing = line["verdict"]["passing_seed"]
        .as_u64()
        .expect("a passing seed");
    let unseeded: Vec<Value> = probes_of(&line)
        .into_iter()
        .filter(|p| p["purpose"] == "unseeded")
        .collect();
    assert_eq!(unseeded.len(), 3, "{line}");
    let reproduction = strings(&line["reproduction"]);
    let (code, output) = run_in(&suite.repo, &reproduction);
    assert_eq!(code, 1, "it fails with {failing}: {output}");
    let with_passing: Vec<String> = reproduction
        .iter()
        .map(|arg| {
            if arg.starts_with("--randomly-seed=") {
                format!("--randomly-seed={passing}")
            } else {
                arg.clone()
            }
        })
        .collect();
    let (code, output) = run_in(&suite.repo, &with_passing);
    assert_eq!(code, 0, "it passes with {passing}: {output}");
    let human = suite.candor(&["order", test, "--seed", "5"], &[]);
    assert!(
        human
            .stdout
            .contains("alone without reseeding (-p no:randomly): red 0 of 3"),
        "{human:?}"
    );
    assert!(
        human
            .stdout
            .contains("passes without reseeding (3 of 3 runs); fails with 8 of 9 seeds tried"),
        "{human:?}"
    );
}
