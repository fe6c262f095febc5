//! A go package's test binary ended before its tests, or a package taken out of `go test
//! ./...`, in the merge lane: real go modules in real git repositories, a regression in
//! `b` that b's untouched `TestBase` catches, and beside it a change that makes every
//! test of `b` silently vanish (`go test -json` reports the package as passing with no
//! test event): an `os.Exit(0)` in an `init()` of the code under test while `CI` is set,
//! a `TestMain` that never calls `m.Run` or narrows `-test.run`, a `go.mod` that makes
//! `b` a module of its own. Each is refused as `tests-vanished`, naming the tests and the
//! likely cause; a test behind a build tag the lane does not set, which the merge base
//! does not run either, is not.

use crate::gate_batch::{gate_report, gate_report_with, strings};
use crate::gate_batch_rust_go::go_change_under;
use crate::gate_tamper_runners::{REGRESSED, kinds};
use crate::triage_support::Suite;

/// The whole suite runs (`replay = "all"`, the default), two runner processes at once.
const POLICY_ALL: &str = "[lane]\njobs = 2\n";

/// b's untouched test at the base, which the regression fails.
const B_TEST: &str = "example.com/shop/b::TestBase";

/// The cause said when b's test binary ended before any test ran.
const ENDED: &str = "example.com/shop/b: its test binary ended with status 0 before any test ran";

fn go_change_all(files: &[(&str, &str)]) -> Suite {
    go_change_under(POLICY_ALL, &[], files)
}

/// The `tests-vanished` reason's tests and cause.
fn vanished(report: &serde_json::Value) -> (Vec<String>, String) {
    let reason = report["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .find(|r| r["kind"] == "tests-vanished")
        .unwrap_or_else(|| panic!("no tests-vanished: {report:#}"));
    (
        strings(&reason["tests"]),
        reason["cause"].as_str().expect("a cause").to_owned(),
    )
}

/// The lane on a change writing `files` (with `vars` set for candor) rejects it for
/// `expected` (the reasons' kinds, in order): the report.
fn refused_for(
    files: &[(&str, &str)],
    vars: &[(&str, &str)],
    expected: &[&str],
) -> serde_json::Value {
    let suite = go_change_all(files);
    let (ran, report) = gate_report_with(&suite, vars);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    assert_eq!(kinds(&report), expected, "{report:#}");
    report
}

/// As [`refused_for`], and `tests-vanished` names b's test alone with a cause that
/// starts with `cause`.
fn b_test_vanished(
    files: &[(&str, &str)],
    vars: &[(&str, &str)],
    expected: &[&str],
    cause: &str,
) -> serde_json::Value {
    let report = refused_for(files, vars, expected);
    let (tests, said) = vanished(&report);
    assert_eq!(tests, [B_TEST], "{report:#}");
    assert!(said.starts_with(cause), "{cause}\n{said}");
    report
}

#[test]
fn a_go_package_whose_test_binary_ends_in_ci_before_its_tests_is_refused() {
    // The regression alone: the whole suite's run fails b's untouched test.
    let suite = go_change_all(&[("b/b.go", REGRESSED)]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    assert_eq!(strings(&report["suite"]["failed"]), [B_TEST], "{report:#}");

    // Beside it, b's code ends its test binary when `CI` is set, as a CI service sets
    // it: go printed `ok` for b with no test, the suite's run was green, and the lane
    // accepted the regression (reproduced with go 1.19 before this rule).
    let ending = "package b\n\nimport \"os\"\n\nfunc init() {\n\tif os.Getenv(\"CI\") != \"\" {\n\t\tos.Exit(0)\n\t}\n}\n\nfunc Twice(x int) int { return 2*x + 1 }\n";
    let report = b_test_vanished(
        &[("b/b.go", ending)],
        &[("CI", "true")],
        &["tests-vanished"],
        ENDED,
    );
    assert!(strings(&report["suite"]["failed"]).is_empty(), "{report:#}");
}

#[test]
fn a_go_test_main_that_never_runs_the_tests_or_narrows_them_makes_them_vanish() {
    let main_test = |body: &str| {
        format!(
            "package b\n\nimport (\n\t\"flag\"\n\t\"os\"\n\t\"testing\"\n)\n\nvar _ = flag.Set\n\nfunc TestMain(m *testing.M) {{\n{body}}}\n"
        )
    };
    // A new test file whose `TestMain` never calls `m.Run`: test infrastructure (an
    // approval could let it through), and the tests it silences are named besides.
    let never = main_test("\tos.Exit(0)\n");
    b_test_vanished(
        &[("b/b.go", REGRESSED), ("b/zz_main_test.go", &never)],
        &[],
        &["test-infrastructure-changed", "tests-vanished"],
        ENDED,
    );
    // One that runs only another test: `-test.list` still lists `TestBase` (go lists
    // inside `m.Run`, before the pattern applies), the run never reports it.
    let narrows = main_test("\tflag.Set(\"test.run\", \"TestNone\")\n\tos.Exit(m.Run())\n");
    b_test_vanished(
        &[("b/b.go", REGRESSED), ("b/zz_main_test.go", &narrows)],
        &[],
        &["test-infrastructure-changed", "tests-vanished"],
        "example.com/shop/b: listed at the head but not run",
    );
}

#[test]
fn a_go_package_made_a_module_of_its_own_makes_its_tests_vanish() {
    // `b/go.mod` takes b out of the root module: `go test ./...` no longer builds it.
    b_test_vanished(
        &[
            ("b/b.go", REGRESSED),
            ("b/go.mod", "module example.com/elsewhere\n\ngo 1.19\n"),
        ],
        &[],
        &["tests-vanished"],
        "example.com/shop/b: `go test ./...` at the head built no package",
    );
}

#[test]
fn go_tests_the_merge_base_does_not_run_either_or_the_change_removed_are_not_vanished() {
    // A test behind a tag the lane does not set (it would fail if it ran) is run at
    // neither end: a clean change is accepted.
    let tagged = (
        "b/integration_test.go",
        "//go:build integration\n\npackage b\n\nimport \"testing\"\n\nfunc TestAgainstDB(t *testing.T) { t.Fatal(\"no database\") }\n",
    );
    let suite = go_change_under(
        POLICY_ALL,
        &[tagged],
        &[(
            "a/a.go",
            "package a\n\n// Add adds.\nfunc Add(x, y int) int { return x + y }\n",
        )],
    );
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    assert_eq!(report["reasons"], serde_json::json!([]), "{report:#}");

    // A build constraint the change gives b's test file is the base's version's to
    // judge (removed), not said twice.
    let ignored = "//go:build ignore\n\npackage b\n\nimport \"testing\"\n\nfunc TestBase(t *testing.T) {\n\tif Twice(2) != 4 {\n\t\tt.Fatal(\"twice\")\n\t}\n}\n";
    let report = refused_for(
        &[("b/b.go", REGRESSED), ("b/b_test.go", ignored)],
        &[],
        &["tests-removed"],
    );
    assert_eq!(
        strings(&report["base_judgement"]["removed"]),
        [B_TEST],
        "{report:#}"
    );
}
