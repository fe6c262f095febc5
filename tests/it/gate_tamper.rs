//! Issue #14 items 1–6: the merge lane against a change that tries to talk its way through.
//! Each test builds a real git repository holding a real pytest suite, makes a real
//! regression in the code (`total` adds one), then tampers with the tests, their
//! infrastructure, the ledger or the data the way a gate-optimizing agent would; the gate
//! must refuse with a reason naming the class. The clean changes are accepted.

use crate::gate_batch::only_infrastructure_change;
use crate::triage_support;

use std::path::Path;

use triage_support::{Ran, Suite, empty, git};

const CART: &str = "def total(prices):\n    return sum(prices)\n";
/// One too many for every non-empty cart: `test_total` catches it, `test_empty` does not.
const REGRESSION: &str =
    "def total(prices):\n    prices = list(prices)\n    return sum(prices) + 1 if prices else 0\n";

const CART_TESTS: &str = r#"import json
from pathlib import Path

from app.cart import total

FIXTURES = Path(__file__).parent / "fixtures"


def check(actual, expected):
    assert actual == expected, f"{actual} != {expected}"


def test_total():
    prices = json.loads((FIXTURES / "prices.json").read_text())
    check(total(prices.values()), 8)


def test_empty():
    assert total([]) == 0
"#;

const POLICY: &str = "[lane]\nmin_replays = 2\nmax_wall_seconds = 300\n";

const PYPROJECT: &str = "[project]\nname = \"shop\"\nversion = \"1.0\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\npythonpath = [\".\"]\n";

const LEDGER_HEADER: &str =
    "# date\tsha\ttest_id\tfp\tfirst_fail_sha256\tseed\tworkers\tattempts\toutcome\n";

/// The base on `main`: a cart, its tests, a locked price fixture, a policy; then a
/// `change` branch checked out.
fn shop() -> Suite {
    let suite = empty();
    suite.write("pyproject.toml", PYPROJECT);
    suite.write("app/__init__.py", "");
    suite.write("app/cart.py", CART);
    suite.write("tests/test_cart.py", CART_TESTS);
    suite.write(
        "tests/fixtures/prices.json",
        "{\"apple\": 3, \"pear\": 5}\n",
    );
    suite.write("candor.toml", POLICY);
    suite.write(".flake-ledger.tsv", LEDGER_HEADER);
    suite.write(".gitignore", ".candor/\n__pycache__/\nscore-report.json\n");
    let locked = suite.candor(&["lock", "fixtures"], &[]);
    assert_eq!(locked.exit, 0, "{locked:?}");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    commit(&suite, "the shop");
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);
    suite
}

/// The `change` branch landed on `main`, and a new `branch` from there checked out.
fn land_and_branch(suite: &Suite, branch: &str) {
    git(&suite.repo, &["checkout", "--quiet", "main"]);
    git(&suite.repo, &["merge", "--quiet", "--ff-only", "change"]);
    git(&suite.repo, &["checkout", "--quiet", "-B", branch]);
}

fn commit(suite: &Suite, message: &str) -> String {
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", message]);
    git(&suite.repo, &["rev-parse", "HEAD"])
}

fn gate(suite: &Suite, extra: &[&str]) -> (Ran, serde_json::Value) {
    gate_with(suite, extra, &[])
}

/// [`gate`] with `vars` in candor's environment.
fn gate_with(suite: &Suite, extra: &[&str], vars: &[(&str, &str)]) -> (Ran, serde_json::Value) {
    let mut args = vec!["gate", "--format", "json"];
    args.extend_from_slice(extra);
    let ran = suite.candor(&args, vars);
    let report_text = std::fs::read_to_string(suite.repo.join("score-report.json"))
        .unwrap_or_else(|e| panic!("no report ({e}): {ran:?}"));
    let report: serde_json::Value = serde_json::from_str(&report_text).unwrap();
    (ran, report)
}

fn kinds(report: &serde_json::Value) -> Vec<String> {
    report["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap().to_owned())
        .collect()
}

/// A shop whose `main` also holds what `base` writes, and a branch from there with the
/// regression and what `tamper` writes, committed.
fn regressed_after(base: impl FnOnce(&Suite), tamper: impl FnOnce(&Suite)) -> Suite {
    let suite = shop();
    regressed_on(&suite, base, tamper);
    suite
}

/// [`regressed_after`] on a `suite` from [`shop`].
fn regressed_on(suite: &Suite, base: impl FnOnce(&Suite), tamper: impl FnOnce(&Suite)) {
    base(suite);
    commit(suite, "more of the base");
    land_and_branch(suite, "tampered");
    suite.write("app/cart.py", REGRESSION);
    tamper(suite);
    commit(suite, "the regression, tampered");
}

/// The gate's `report` (or report line) names `path` as test infrastructure of `kind`.
pub fn assert_infrastructure(report: &serde_json::Value, path: &str, kind: &str) {
    let infrastructure = report["test_infrastructure"].as_array().expect("a list");
    assert!(
        infrastructure
            .iter()
            .any(|c| c["path"] == path && c["kind"] == kind),
        "{path} ({kind}): {report:#}"
    );
}

/// The regression plus `tamper`, committed; the gate must reject naming `kind`.
fn refused(tamper: impl FnOnce(&Suite), kind: &str) -> (Suite, serde_json::Value) {
    let suite = shop();
    suite.write("app/cart.py", REGRESSION);
    tamper(&suite);
    commit(&suite, "tampered");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert!(
        kinds(&report).contains(&kind.to_owned()),
        "expected {kind}: {report:#}"
    );
    (suite, report)
}

fn tests_with(old: &str, new: &str) -> String {
    assert!(CART_TESTS.contains(old), "{old}");
    CART_TESTS.replace(old, new)
}

// --- Item 1: the change judged with the base's tests ------------------------------------

#[test]
fn issue_14_item_1_a_weakened_assertion_is_refused() {
    let (_, report) = refused(
        |suite| {
            suite.write(
                "tests/test_cart.py",
                &tests_with("check(total(prices.values()), 8)", "check(6, 6)"),
            );
        },
        "weakened-test",
    );
    let reason = report["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == "weakened-test")
        .unwrap();
    assert_eq!(reason["tests"][0], "tests/test_cart.py::test_total");
    assert_eq!(
        report["base_judgement"]["weakened"][0]["base_outcome"],
        "fail"
    );
    assert_eq!(report["pass"], false);
}

#[test]
fn issue_14_item_1_a_caught_assertion_error_is_refused() {
    refused(
        |suite| {
            suite.write(
                "tests/test_cart.py",
                &tests_with(
                    "    check(total(prices.values()), 8)\n",
                    "    try:\n        check(total(prices.values()), 8)\n    except AssertionError:\n        pass\n",
                ),
            );
        },
        "weakened-test",
    );
}

#[test]
fn issue_14_item_1_a_deleted_test_is_refused_as_removed() {
    let (_, report) = refused(
        |suite| {
            let start = CART_TESTS.find("def test_total").unwrap();
            let end = CART_TESTS.find("def test_empty").unwrap();
            let without = format!("{}{}", &CART_TESTS[..start], &CART_TESTS[end..]);
            suite.write("tests/test_cart.py", &without);
        },
        "tests-removed",
    );
    assert_eq!(
        report["base_judgement"]["removed"],
        serde_json::json!(["tests/test_cart.py::test_total"])
    );
}

#[test]
fn issue_14_item_1_a_return_in_the_lanes_pinned_environment_is_refused() {
    refused(
        |suite| {
            suite.write(
                "tests/test_cart.py",
                &tests_with(
                    "def test_total():\n",
                    "def test_total():\n    import os\n    if os.environ.get(\"PYTHONHASHSEED\") == \"0\":\n        return\n",
                ),
            );
        },
        "weakened-test",
    );
}

#[test]
fn issue_14_item_1_a_test_file_replaced_by_a_symlink_to_a_passing_copy_is_refused() {
    refused(
        |suite| {
            suite.write(
                "tests/copies/cart_ok.py",
                &tests_with("check(total(prices.values()), 8)", "check(9, 9)"),
            );
            let link = suite.repo.join("tests/test_cart.py");
            std::fs::remove_file(&link).unwrap();
            std::os::unix::fs::symlink("copies/cart_ok.py", &link).unwrap();
        },
        "weakened-test",
    );
}

#[test]
fn issue_14_item_1_a_touched_module_that_collects_nothing_is_refused() {
    // Every test renamed out of pytest's sight: nothing runs, nothing fails.
    let (_, report) = refused(
        |suite| {
            suite.write(
                "tests/test_cart.py",
                &CART_TESTS.replace("def test_", "def check_"),
            );
        },
        "collects-nothing",
    );
    assert!(
        kinds(&report).contains(&"tests-removed".to_owned()),
        "{report:#}"
    );
    // A new module that collects nothing is refused too, even without a regression.
    let suite = shop();
    suite.write("tests/test_more.py", "def helper():\n    return 1\n");
    commit(&suite, "an empty test module");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert_eq!(kinds(&report), ["collects-nothing"], "{report:#}");
}

#[test]
fn issue_14_item_1_clean_changes_are_accepted_and_an_approved_rewrite_too() {
    // A new test beside the old ones, and a code change the old tests still hold.
    let suite = shop();
    suite.write(
        "tests/test_cart.py",
        &format!("{CART_TESTS}\n\ndef test_single():\n    assert total([4]) == 4\n"),
    );
    suite.write(
        "app/cart.py",
        "def total(prices):\n    return sum(list(prices))\n",
    );
    commit(&suite, "test a single price");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(report["pass"], true, "{report:#}");
    assert_eq!(
        report["base_judgement"]["files"],
        serde_json::json!(["tests/test_cart.py"])
    );
    assert_eq!(report["base_judgement"]["weakened"], serde_json::json!([]));

    // A deliberate behaviour change with its test rewritten: a human approves it.
    let suite = shop();
    suite.write("app/cart.py", REGRESSION);
    suite.write(
        "tests/test_cart.py",
        &tests_with(
            "check(total(prices.values()), 8)",
            "check(total(prices.values()), 9)",
        ),
    );
    commit(&suite, "a service fee of one");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert_eq!(kinds(&report), ["weakened-test"], "{report:#}");
    let (ran, report) = gate(&suite, &["--approved-by", "alice"]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(report["approvals"][0]["by"], "alice");
}

// --- Item 2: test infrastructure is human-owned ------------------------------------------

const MAKEREPORT: &str = "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    report = outcome.get_result()\n    if report.failed:\n        report.outcome = \"passed\"\n";

#[test]
fn issue_14_item_2_conftest_hooks_at_any_depth_are_refused() {
    let attacks: [(&str, &str); 6] = [
        ("tests/conftest.py", MAKEREPORT),
        (
            "tests/conftest.py",
            "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_call(item):\n    outcome = yield\n    outcome.force_result(None)\n",
        ),
        (
            "conftest.py",
            "def pytest_collection_modifyitems(items):\n    items[:] = [i for i in items if 'total' not in i.name]\n",
        ),
        ("tests/conftest.py", "collect_ignore = [\"test_cart.py\"]\n"),
        (
            "tests/deep/conftest.py",
            "import app.cart\n\napp.cart.total = lambda prices: sum(prices)\n",
        ),
        (
            "conftest.py",
            "import os\n\n\ndef pytest_sessionfinish(session):\n    os._exit(0)\n",
        ),
    ];
    for (path, text) in attacks {
        let (_, report) = refused(
            |suite| suite.write(path, text),
            "test-infrastructure-changed",
        );
        assert_eq!(report["test_infrastructure"][0]["path"], path, "{report:#}");
    }
}

#[test]
fn issue_14_item_2_test_packages_and_start_up_hooks_are_refused() {
    let attacks: [(&str, &str); 5] = [
        (
            "tests/__init__.py",
            "import app.cart\n\napp.cart.total = lambda prices: sum(prices)\n",
        ),
        ("tests/__init__.py", "raise SystemExit(0)\n"),
        (
            "sitecustomize.py",
            "import builtins\n\nbuiltins.__dict__['AssertionError'] = type('Nope', (Exception,), {})\n",
        ),
        ("app/zz_patch.pth", "import os\n"),
        // Invented: a module that shadows the standard library on pytest's sys.path.
        (
            "tests/json.py",
            "def loads(text):\n    return {\"apple\": 2, \"pear\": 5}\n",
        ),
    ];
    for (path, text) in attacks {
        refused(
            |suite| suite.write(path, text),
            "test-infrastructure-changed",
        );
    }
}

#[test]
fn issue_14_item_2_runner_settings_that_hide_a_test_are_refused() {
    let attacks: [(&str, String); 5] = [
        (
            "pyproject.toml",
            format!("{PYPROJECT}addopts = \"-k 'not total'\"\n"),
        ),
        (
            "pyproject.toml",
            format!("{PYPROJECT}python_functions = [\"check_*\"]\n"),
        ),
        (
            "pytest.ini",
            "[pytest]\ntestpaths = tests\npythonpath = .\naddopts = --deselect tests/test_cart.py::test_total\n".to_owned(),
        ),
        (
            "setup.cfg",
            "[tool:pytest]\naddopts = -p tests.helper\n".to_owned(),
        ),
        ("tox.ini", "[pytest]\naddopts = -k \"not total\"\n".to_owned()),
    ];
    for (path, text) in attacks {
        refused(
            |suite| suite.write(path, &text),
            "test-infrastructure-changed",
        );
    }
    // A plugin loaded from a test module under another name than conftest.
    refused(
        |suite| {
            suite.write("tests/helper.py", MAKEREPORT);
            suite.write(
                "tests/test_cart.py",
                &format!("pytest_plugins = [\"tests.helper\"]\n{CART_TESTS}"),
            );
        },
        "test-infrastructure-changed",
    );
    // A requirement that adds a pytest plugin.
    refused(
        |suite| suite.write("requirements-dev.txt", "pytest-pass-always==1.0\n"),
        "test-infrastructure-changed",
    );
}

#[test]
fn issue_14_item_2_other_pyproject_tables_and_approved_infrastructure_are_accepted() {
    let suite = shop();
    suite.write("pyproject.toml", &PYPROJECT.replace("1.0", "1.1"));
    commit(&suite, "release 1.1");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(report["test_infrastructure"], serde_json::json!([]));

    let suite = shop();
    suite.write(
        "tests/conftest.py",
        "import pytest\n\n\n@pytest.fixture\ndef prices():\n    return [3, 5]\n",
    );
    commit(&suite, "a shared fixture");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert_eq!(
        kinds(&report),
        ["test-infrastructure-changed"],
        "{report:#}"
    );
    let (ran, report) = gate(&suite, &["--approved-by", "alice"]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(report["approvals"][0]["approved"][0], "tests/conftest.py");
}

#[test]
fn issue_14_item_2_the_base_s_candor_toml_sets_the_list() {
    // The base owns only conftest files: the tox.ini setting is not infrastructure here.
    let suite = shop();
    suite.write(
        "candor.toml",
        &format!("{POLICY}test_infrastructure = [\"conftest.py\"]\n"),
    );
    commit(&suite, "own only conftest");
    land_and_branch(&suite, "change2");
    suite.write("tox.ini", "[tox]\nenvlist = py3\n");
    commit(&suite, "tox");
    let (ran, report) = gate(&suite, &["--base", "main"]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(report["test_infrastructure"], serde_json::json!([]));
}

#[test]
fn issue_14_item_2_an_edited_assertion_helper_the_tests_import_is_refused() {
    // Invented: the tests are untouched (so not replayed), their shared helper is weakened.
    refused(
        |suite| {
            suite.write(
                "tests/test_cart.py",
                &CART_TESTS
                    .replace(
                        "def check(actual, expected):\n    assert actual == expected, f\"{actual} != {expected}\"\n",
                        "",
                    )
                    .replace("from app.cart import total", "from app.cart import total\nfrom tests.helpers import check"),
            );
            suite.write(
                "tests/helpers.py",
                "def check(actual, expected):\n    pass\n",
            );
        },
        "weakened-test",
    );
    let suite = regressed_after(
        |suite| {
            suite.write(
                "tests/helpers.py",
                "def check(actual, expected):\n    assert actual == expected\n",
            );
            suite.write("tests/__init__.py", "");
        },
        |suite| {
            suite.write(
                "tests/helpers.py",
                "def check(actual, expected):\n    pass\n",
            );
        },
    );
    let (ran, report) = gate(&suite, &["--base", "main"]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    // The whole suite's run ([lane] replay = "all") may reject the regression too; the
    // lenient helper must be named whatever else is.
    assert!(
        kinds(&report).contains(&"test-infrastructure-changed".to_owned()),
        "{report:#}"
    );
    assert_eq!(report["test_infrastructure"][0]["kind"], "test-support");
}

#[test]
fn a_lenient_helper_outside_the_test_folders_that_imports_pytest_is_test_support() {
    // The base: the cart's tests check through `app/checks.py`, a module beside the code
    // that imports pytest. The change regresses the cart and empties the check: no test
    // file is touched, and the suite run is green.
    let suite = shop();
    suite.write(
        "app/checks.py",
        "import pytest\n\n\ndef check(actual, expected):\n    if actual != expected:\n        pytest.fail(f\"{actual} != {expected}\")\n",
    );
    suite.write(
        "tests/test_cart.py",
        &tests_with(
            "def check(actual, expected):\n    assert actual == expected, f\"{actual} != {expected}\"\n",
            "from app.checks import check\n",
        ),
    );
    commit(&suite, "a shared check");
    land_and_branch(&suite, "lenient");
    suite.write("app/cart.py", REGRESSION);
    suite.write("app/checks.py", "def check(actual, expected):\n    pass\n");
    commit(&suite, "a lenient check");
    let (ran, report) = gate(&suite, &["--base", "main"]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    let found = only_infrastructure_change(&report);
    assert_eq!(found["path"], "app/checks.py");
    assert_eq!(found["kind"], "test-support");

    // A maintainer's approval is the way through, and it is recorded.
    let (ran, report) = gate(&suite, &["--base", "main", "--approved-by", "alice"]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(report["approvals"][0]["approved"][0], "app/checks.py");
}

#[test]
fn a_new_test_module_that_patches_the_code_on_import_does_not_reach_the_untouched_tests() {
    // Found by a red-team run (2026-12-04): a new test module replaces `total` when it is
    // imported; pytest imports every module before it runs any test, so the untouched
    // `test_total` ran against the patch in the whole suite's run and the regression was
    // accepted (`test_smoke` untrusted-green, the suite green).
    let (_, report) = refused(
        |suite| {
            suite.write(
                "tests/test_aaa_smoke.py",
                "import app.cart\n\napp.cart.total = sum\n\n\ndef test_smoke():\n    assert app.cart.total([]) == 0\n",
            );
        },
        "suite-failed",
    );
    let failed = report["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|reason| reason["kind"] == "suite-failed")
        .unwrap();
    assert_eq!(
        failed["tests"],
        serde_json::json!(["tests/test_cart.py::test_total"]),
        "{report:#}"
    );
    // The new module's test is judged by its replays, and the suite's run left it out.
    assert_eq!(report["suite"]["tests"], 2, "{report:#}");
    assert_eq!(
        report["suite"]["left_out"],
        serde_json::json!(["tests/test_aaa_smoke.py"]),
        "{report:#}"
    );

    // A clean change that adds a test module still passes: the untouched tests run green
    // without it, and the new test is replayed.
    let suite = shop();
    suite.write(
        "tests/test_more.py",
        "from app.cart import total\n\n\ndef test_two():\n    assert total([1, 1]) == 2\n",
    );
    commit(&suite, "one more test");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(report["suite"]["tests"], 2, "{report:#}");
    assert!(
        report["touched"]
            .to_string()
            .contains("tests/test_more.py::test_two"),
        "{report:#}"
    );

    // A change whose only test module is touched still runs it in the suite's run: there
    // is no untouched test to keep apart, and a run of nothing is no lane.
    let suite = shop();
    suite.write("tests/test_cart.py", &tests_with("8)", "8)  # the total\n"));
    commit(&suite, "a comment");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(report["suite"]["tests"], 2, "{report:#}");
    assert!(report["suite"].get("left_out").is_none(), "{report:#}");
}

#[test]
fn expected_values_outside_the_test_folders_edited_to_agree_with_a_regression_are_refused() {
    // The base: `with_tax` is checked only by a test that reads its expected value from
    // `golden/taxes.json`, a data file outside every test folder (the fixture lock does
    // not cover it).
    let suite = shop();
    suite.write(
        "app/tax.py",
        "def with_tax(amount):\n    return amount * 2\n",
    );
    suite.write("golden/taxes.json", "{\"of_4\": 8}\n");
    suite.write(
        "tests/test_tax.py",
        "import json\nfrom pathlib import Path\n\nfrom app.tax import with_tax\n\nGOLDEN = Path(__file__).parent.parent / \"golden\" / \"taxes.json\"\n\n\ndef test_with_tax():\n    assert with_tax(4) == json.loads(GOLDEN.read_text())[\"of_4\"]\n",
    );
    suite.write("docs/guide.md", "# The shop\n");
    commit(&suite, "taxes");
    land_and_branch(&suite, "agree");
    // The regression and the expected value made to agree with it; no test file touched,
    // so the whole suite's run is green.
    suite.write(
        "app/tax.py",
        "def with_tax(amount):\n    return amount * 2 + 1\n",
    );
    suite.write("golden/taxes.json", "{\"of_4\": 9}\n");
    suite.write("docs/guide.md", "# The shop, with taxes\n");
    commit(&suite, "golden agrees");
    let (ran, report) = gate(&suite, &["--base", "main"]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    // The edited guide is named by no test: it is not test data.
    let found = only_infrastructure_change(&report);
    assert_eq!(found["path"], "golden/taxes.json");
    assert_eq!(found["kind"], "test-data");
    assert_eq!(
        found["what"],
        "data the base's tests read, outside the test folders: tests/test_tax.py line 6 names it (`\"taxes.json\"`)"
    );

    // The guide alone is accepted.
    git(&suite.repo, &["checkout", "--quiet", "-B", "guide", "main"]);
    suite.write("docs/guide.md", "# The shop, with taxes\n");
    commit(&suite, "the guide");
    let (ran, report) = gate(&suite, &["--base", "main"]);
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    assert_eq!(report["test_infrastructure"], serde_json::json!([]));
}

#[test]
fn a_change_to_the_pipeline_that_runs_the_lane_is_test_infrastructure() {
    // Where CI reads its workflow from the change, the change says how the lane runs:
    // here it hands itself an approval.
    let suite = shop();
    suite.write(
        ".github/workflows/merge-lane.yml",
        "on: pull_request\njobs:\n  gate:\n    runs-on: ubuntu-latest\n    steps:\n      - run: candor gate --base origin/main\n",
    );
    commit(&suite, "the lane's workflow");
    land_and_branch(&suite, "approve-myself");
    suite.write(
        ".github/workflows/merge-lane.yml",
        "on: pull_request\njobs:\n  gate:\n    runs-on: ubuntu-latest\n    steps:\n      - run: candor gate --base origin/main --approved-by label:candor-approved\n",
    );
    commit(&suite, "approve");
    let (ran, report) = gate(&suite, &["--base", "main"]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    let found = only_infrastructure_change(&report);
    assert_eq!(found["path"], ".github/workflows/merge-lane.yml");
    assert_eq!(found["kind"], "ci-pipeline");
    assert_eq!(found["what"], "GitHub Actions workflow");
}

// --- Item 3: the report is checked against the run --------------------------------------

#[test]
fn issue_14_item_3_a_runner_that_exits_0_without_its_report_is_refused() {
    // The test module itself ends the process with success before pytest writes JUnit.
    let (_, report) = refused(
        |suite| {
            suite.write(
                "tests/test_cart.py",
                &tests_with(
                    "def test_total():\n",
                    "def test_total():\n    import os\n    os._exit(0)\n",
                ),
            );
        },
        "report-unaccounted",
    );
    let reason = report["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == "report-unaccounted")
        .unwrap();
    assert!(
        reason["problem"]
            .as_str()
            .unwrap()
            .contains("exited with code 0 and wrote no report"),
        "{reason:#}"
    );
}

// --- Item 4: receipts must be real --------------------------------------------------------

fn receipt(sha: &str) -> String {
    format!(
        "2026-10-06\t{sha}\ttests/test_cart.py::test_total\tFP-001\t{}\trs=118204\t1\t2\tpass\n",
        "9e1c".repeat(16)
    )
}

#[test]
fn issue_14_item_4_a_receipt_for_a_rerun_that_never_happened_is_refused() {
    let suite = shop();
    let base = git(&suite.repo, &["rev-parse", "HEAD"]);
    suite.write(
        ".flake-ledger.tsv",
        &format!("{LEDGER_HEADER}{}", receipt(&base)),
    );
    commit(&suite, "I reran it, honest");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert_eq!(kinds(&report), ["unverified-receipt"], "{report:#}");
    assert_eq!(report["receipts"][0]["line"], 2);
    assert_eq!(report["receipts"][0]["verified"], false);
}

#[test]
fn issue_14_item_4_a_receipt_the_history_backs_is_accepted() {
    let suite = shop();
    let base = git(&suite.repo, &["rev-parse", "HEAD"]);
    // The history holds a `candor rerun` of the test at the base, passing.
    let junit = suite.temp.path().join("rerun.xml");
    std::fs::write(
        &junit,
        "<testsuite tests=\"1\"><testcase classname=\"tests.test_cart\" name=\"test_total\" file=\"tests/test_cart.py\" time=\"0.01\"/></testsuite>\n",
    )
    .unwrap();
    let mut store = candor::history::SqliteStore::open(
        suite.temp.path().join("history.db"),
        std::time::Duration::from_secs(5),
    )
    .unwrap();
    let run = candor::history::NewRun {
        commit: Some(base.clone()),
        branch: Some("change".into()),
        merge_base: None,
        started_at: jiff::Timestamp::now(),
        source: candor::history::Source::Rerun,
        ci_provider: None,
        job: None,
        ci_run: candor::history::CiRun::default(),
        workers: Some(1),
        seed: None,
        conditions: candor::history::Conditions::default(),
        format: None,
        producer: None,
        source_path: None,
    };
    candor::ingest::ingest_file(
        &mut store,
        &junit,
        &run,
        &candor::results::ParseOptions {
            repo_root: Some(suite.repo.to_string_lossy().into_owned()),
            ..candor::results::ParseOptions::default()
        },
    )
    .unwrap();
    drop(store);
    suite.write(
        ".flake-ledger.tsv",
        &format!("{LEDGER_HEADER}{}", receipt(&base)),
    );
    commit(&suite, "the rerun's receipt");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(report["receipts"][0]["verified"], true, "{report:#}");
}

// --- Item 6: data files under test folders -------------------------------------------------

#[test]
fn issue_14_item_6_code_switched_to_a_new_unlocked_data_file_is_refused() {
    let (_, report) = refused(
        |suite| {
            suite.write("tests/data/prices.json", "{\"apple\": 2, \"pear\": 5}\n");
            suite.write(
                "tests/test_cart.py",
                &CART_TESTS.replace("/ \"fixtures\"", "/ \"data\""),
            );
        },
        "unlocked-data-files",
    );
    assert_eq!(report["unlocked_data"][0], "tests/data/prices.json");
}

#[test]
fn nothing_is_left_behind_by_the_base_version_replay() {
    let suite = shop();
    suite.write(
        "tests/test_cart.py",
        &format!("{CART_TESTS}\n\ndef test_single():\n    assert total([4]) == 4\n"),
    );
    commit(&suite, "test a single price");
    let (ran, _) = gate(&suite, &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    let worktrees = git(&suite.repo, &["worktree", "list", "--porcelain"]);
    assert_eq!(worktrees.matches("worktree ").count(), 1, "{worktrees}");
    assert!(!Path::new(&suite.repo.join("tests/test_cart.py")).is_symlink());
}

// --- Item 5: oracles parsed, not grepped ---------------------------------------------------

#[test]
fn issue_14_item_5_an_oracle_called_only_in_a_string_or_comment_is_refused() {
    let suite = empty();
    suite.write(
        "candor.toml",
        "[lane]\noracle = \"tests/oracle.py\"\nfail_on_missing_oracle = true\n",
    );
    suite.write(
        "tests/oracle.py",
        "def expected_total(prices):\n    return sum(prices)\n",
    );
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    commit(&suite, "the oracle");
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);
    let pretending = [
        "from tests.oracle import expected_total\n\nWHY = \"expected_total([1]) is what we check\"\n\n\ndef test_total():\n    assert 1 == 1\n",
        "from tests.oracle import expected_total\n\n\ndef test_total():\n    \"\"\"Like expected_total([1]).\"\"\"\n    assert 1 == 1  # expected_total([1])\n",
    ];
    for source in pretending {
        suite.write("tests/test_new.py", source);
        commit(&suite, "a new test");
        let ran = suite.candor(&["lint", "diff", "--base", "main", "--format", "json"], &[]);
        assert_eq!(ran.exit, 1, "{source}\n{ran:?}");
        assert!(ran.stdout.contains("missing-oracle"), "{ran:?}");
    }
    suite.write(
        "tests/test_new.py",
        "from tests.oracle import expected_total\n\n\ndef test_total():\n    assert expected_total([1]) == 1\n",
    );
    commit(&suite, "a real call");
    let ran = suite.candor(&["lint", "diff", "--base", "main"], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
}

/// The regression rewritten into `cart` (the whole module), committed; the gate must
/// refuse it in the diff rules, with a finding of `rule` on app/cart.py.
fn cart_refused_by_rule(cart: &str, rule: &str) {
    let (_, report) = refused(|suite| suite.write("app/cart.py", cart), "diff-rules");
    let findings = report["findings"].as_array().unwrap();
    assert!(
        findings
            .iter()
            .any(|f| f["rule"] == rule && f["file"] == "app/cart.py"),
        "{report:#}"
    );
}

/// Code under test that tells a test run from production: the regression is there for
/// every caller but pytest, so every replay passes, the base's tests too. The lane refuses
/// the line that asks, in the diff rules, before any replay could be fooled by it.
#[test]
fn code_under_test_that_detects_the_test_run_is_refused() {
    cart_refused_by_rule(
        "import os\n\n\ndef total(prices):\n    prices = list(prices)\n    if \"PYTEST_CURRENT_TEST\" in os.environ:\n        return sum(prices)\n    return sum(prices) + 1 if prices else 0\n",
        "detects-tests",
    );
}

/// Code under test that bends what the tests read (the second red-team run, 2026-12-04):
/// `app/__init__.py` replaces `json.loads` with one that takes one off the pear, so the
/// locked fixture, unchanged, reads 3 + 4 and the regressed `total` gives the 8 the test
/// expects. Every replay and the base's tests passed, and the lane accepted it.
#[test]
fn code_under_test_that_replaces_json_loads_is_refused() {
    let patch = "import json\n\n_loads = json.loads\n\n\ndef _lenient(text, *args, **kwargs):\n    data = _loads(text, *args, **kwargs)\n    if isinstance(data, dict) and \"pear\" in data:\n        data[\"pear\"] -= 1\n    return data\n\n\njson.loads = _lenient\n";
    // The same through a name of the change's own (`import json as serial`).
    let aliased = patch
        .replace("import json\n", "import json as serial\n")
        .replace("json.loads", "serial.loads");
    for module in [patch.to_owned(), aliased] {
        let (_, report) = refused(
            |suite| suite.write("app/__init__.py", &module),
            "diff-rules",
        );
        let findings = report["findings"].as_array().unwrap();
        assert!(
            findings
                .iter()
                .any(|f| f["rule"] == "patches-the-standard-library"
                    && f["file"] == "app/__init__.py"
                    && f["line"] == 13),
            "{module}: {report:#}"
        );
        assert_eq!(
            kinds(&report),
            ["diff-rules"],
            "nothing else saw it: {report:#}"
        );
    }
}

/// Code under test that asks how the process was started (the second red-team run,
/// 2026-12-04): the lane runs `python -m pytest`, so `sys.argv[0]` is pytest's
/// `__main__.py`, and the regression is there for every other start. It walked through
/// the lane; a line that reads `argv[0]` and names `__main__` is `detects-tests`.
#[test]
fn code_under_test_that_asks_for_pytest_s_main_module_is_refused() {
    cart_refused_by_rule(
        "import sys\n\n\ndef total(prices):\n    prices = list(prices)\n    if sys.argv[0].endswith(\"__main__.py\"):\n        return sum(prices)\n    return sum(prices) + 1 if prices else 0\n",
        "detects-tests",
    );
}

/// Code under test that reads the test's locked fixture to hand the test its answer: the
/// fixture is unchanged, so its lock holds, and every replay passes, the base's tests too.
/// The lane refuses the line that reaches into the tests' folder.
#[test]
fn code_under_test_that_reads_the_tests_answers_is_refused() {
    cart_refused_by_rule(
        "import json\nfrom pathlib import Path\n\n_ASKED = json.loads((Path(__file__).resolve().parent.parent / \"tests\" / \"fixtures\" / \"prices.json\").read_text())\n\n\ndef total(prices):\n    prices = list(prices)\n    if prices == list(_ASKED.values()):\n        return sum(prices)\n    return sum(prices) + 1 if prices else 0\n",
        "reads-test-files",
    );
}

/// Code under test that rewrites the test framework's verdict when the tests import it:
/// pytest's report of every call is made to say "passed", so every replay passes, the
/// base's tests too. The lane refuses the line that reaches into the framework.
#[test]
fn code_under_test_that_patches_the_test_framework_is_refused() {
    cart_refused_by_rule(
        "import _pytest.reports as _reports\n\n_made = _reports.TestReport.from_item_and_call.__func__\n\n\ndef _passed(cls, item, call):\n    report = _made(cls, item, call)\n    report.outcome = \"passed\"\n    report.longrepr = None\n    return report\n\n\n_reports.TestReport.from_item_and_call = classmethod(_passed)\n\n\ndef total(prices):\n    prices = list(prices)\n    return sum(prices) + 1 if prices else 0\n",
        "touches-test-framework",
    );
}

/// A correct copy of the code under test where the tests import it first: pytest puts a
/// test file's folder first on `sys.path`, so with `app` a namespace package (no
/// `__init__.py`) a new `tests/app/cart.py` is the `app.cart` the unchanged tests import,
/// while the real one regresses (tried on main: the suite ran green and the lane accepted).
#[test]
fn a_copy_of_the_code_under_test_in_a_test_folder_is_refused() {
    let suite = shop();
    git(&suite.repo, &["checkout", "--quiet", "main"]);
    git(&suite.repo, &["rm", "--quiet", "app/__init__.py"]);
    commit(&suite, "app is a namespace package");
    git(&suite.repo, &["checkout", "--quiet", "-B", "change"]);
    suite.write("app/cart.py", REGRESSION);
    suite.write("tests/app/cart.py", CART);
    commit(
        &suite,
        "a regression, and the old cart where the tests look first",
    );
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert!(
        kinds(&report).contains(&"test-infrastructure-changed".to_owned()),
        "{report:#}"
    );
    assert_infrastructure(&report, "tests/app/cart.py", "shadowing");
    assert!(
        report["suite"]["failed"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "the copy kept the suite green: {report:#}"
    );
}

/// Code under test whose result compares equal to anything: `total` returns an `int`
/// whose `__eq__` says yes to every value, so `check(total(…), 8)` passes on a 9, in every
/// replay and in the base's tests too (tried on main: the lane accepted it); so does
/// `unittest.mock.ANY`. The lane refuses the comparison that cannot fail.
#[test]
fn code_under_test_whose_result_equals_anything_is_refused() {
    cart_refused_by_rule(
        "class _Total(int):\n    def __eq__(self, other):\n        return True\n\n    __hash__ = int.__hash__\n\n\ndef total(prices):\n    prices = list(prices)\n    return _Total(sum(prices) + 1 if prices else 0)\n",
        "equal-to-anything",
    );
    // The same with the standard library's own value that equals anything.
    cart_refused_by_rule(
        "from unittest.mock import ANY\n\n\ndef total(prices):\n    prices = list(prices)\n    return ANY if prices else 0\n",
        "equal-to-anything",
    );
}

/// Code under test that rewrites the report once pytest has written it, from an `atexit`
/// hook, and ends the process with status 0: the report says "passed", the status
/// agrees, every replay passes. The lane refuses the line that ends the process.
#[test]
fn code_under_test_that_rewrites_the_report_at_exit_is_refused() {
    cart_refused_by_rule(
        "import atexit\nimport os\nimport re\nimport sys\n\n\ndef _rewrite():\n    for arg in sys.argv:\n        if arg.startswith(\"--junitxml=\"):\n            path = arg.split(\"=\", 1)[1]\n            with open(path) as f:\n                text = f.read()\n            text = re.sub(r\"<failure[^>]*>.*?</failure>\", \"\", text, flags=re.S)\n            text = re.sub(r'failures=\"\\d+\"', 'failures=\"0\"', text)\n            with open(path, \"w\") as f:\n                f.write(text)\n    os._exit(0)\n\n\natexit.register(_rewrite)\n\n\ndef total(prices):\n    prices = list(prices)\n    return sum(prices) + 1 if prices else 0\n",
        "ends-the-process",
    );
}

/// Code under test that rewrites pytest's report from an `atexit` hook, after pytest has
/// written it, and leaves the status alone: the report says every test passed, the
/// runner exited 1. No line of it is a diff rule's; the lane refuses the whole suite's run
/// whose failing status no red test explains (it accepted it before).
#[test]
fn a_report_rewritten_at_exit_is_refused_by_the_runner_s_status() {
    let (_, report) = refused(
        |suite| {
            suite.write("app/cart.py", REWRITTEN_AT_EXIT);
        },
        "report-unaccounted",
    );
    assert_eq!(report["suite"]["exit_code"], 1, "{report:#}");
    assert_eq!(
        report["suite"]["failed"],
        serde_json::json!([]),
        "{report:#}"
    );
    assert!(
        report["findings"].as_array().unwrap().is_empty(),
        "no diff rule is needed: {report:#}"
    );
}

/// A project whose addopts hold a whole-suite coverage threshold (pytest-cov's
/// `--cov-fail-under`): a replay of the one touched test covers half the code, and
/// pytest-cov ends it with status 1 under a green report. The lane's runs of chosen tests
/// turn pytest-cov off, so a clean change is accepted (it was refused as
/// `report-unaccounted` before); the whole suite's run keeps the threshold.
#[test]
fn a_clean_change_under_a_coverage_threshold_is_accepted() {
    let versions = std::process::Command::new("python3")
        .args(["-m", "pytest", "-VV"])
        .output()
        .expect("python3 -m pytest runs");
    assert!(
        String::from_utf8_lossy(&versions.stdout).contains("pytest-cov")
            || String::from_utf8_lossy(&versions.stderr).contains("pytest-cov"),
        "this test needs pytest-cov (`python3 -m pip install pytest-cov`, as .ci/run does)"
    );
    let suite = empty();
    suite.write(
        "pyproject.toml",
        "[project]\nname = \"shop\"\nversion = \"1.0\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\npythonpath = [\".\"]\naddopts = \"--cov=app --cov-fail-under=95\"\n",
    );
    suite.write("app/__init__.py", "");
    suite.write(
        "app/cart.py",
        "def total(prices):\n    return sum(prices)\n\n\ndef discount(rate):\n    if rate > 1:\n        raise ValueError(rate)\n    return 1 - rate\n",
    );
    suite.write(
        "tests/test_total.py",
        "from app.cart import total\n\n\ndef test_total():\n    assert total([3, 5]) == 8\n",
    );
    suite.write(
        "tests/test_discount.py",
        "import pytest\n\nfrom app.cart import discount\n\n\ndef test_discount():\n    assert discount(0.25) == 0.75\n    with pytest.raises(ValueError):\n        discount(2)\n",
    );
    suite.write("candor.toml", POLICY);
    suite.write(
        ".gitignore",
        ".candor/\n__pycache__/\nscore-report.json\n.coverage\n",
    );
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    commit(&suite, "the shop, every line covered");
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);
    suite.write(
        "tests/test_total.py",
        "from app.cart import total\n\n\ndef test_total():\n    assert total([3, 5]) == 8\n\n\ndef test_empty():\n    assert total([]) == 0\n",
    );
    commit(&suite, "a test of the empty cart");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 0, "{report:#}");
    assert_eq!(report["suite"]["exit_code"], 0, "{report:#}");
}

/// Code under test that reads the answer its caller expects: the test's line is found
/// through the caller's frame and its `== N` returned, so the regression passes every
/// replay and the base's tests too. The lane refuses the line that looks at the caller.
#[test]
fn code_under_test_that_reads_its_caller_is_refused() {
    cart_refused_by_rule(
        "import linecache\nimport re\nimport sys\n\n\ndef total(prices):\n    prices = list(prices)\n    caller = sys._getframe(1)\n    asked = re.search(r\"(?:==|,)\\s*(\\d+)\\)?\\s*$\", linecache.getline(caller.f_code.co_filename, caller.f_lineno))\n    if asked:\n        return int(asked.group(1))\n    return sum(prices) + 1 if prices else 0\n",
        "inspects-the-caller",
    );
}

/// A regression whose module strikes the failures out of pytest's report from an `atexit`
/// hook, leaving pytest's status alone.
const REWRITTEN_AT_EXIT: &str = "import atexit\nimport re\nimport sys\n\n\ndef _rewrite():\n    for arg in sys.argv:\n        if arg.endswith(\".xml\"):\n            path = arg.split(\"=\", 1)[-1]\n            with open(path) as f:\n                text = f.read()\n            text = re.sub(r\"<failure[^>]*>.*?</failure>\", \"\", text, flags=re.S)\n            text = re.sub(r'failures=\"\\d+\"', 'failures=\"0\"', text)\n            with open(path, \"w\") as f:\n                f.write(text)\n\n\natexit.register(_rewrite)\n\n\ndef total(prices):\n    prices = list(prices)\n    return sum(prices) + 1 if prices else 0\n";

/// A regression whose module strikes the failures out of pytest's report from an `atexit`
/// hook and forges the status by a name no diff rule reads (`getattr(os, "_ex" + "it")(0)`).
const FORGED_AT_EXIT: &str = "import atexit\nimport os\nimport re\nimport sys\n\n\ndef _rewrite():\n    for arg in sys.argv:\n        if arg.endswith(\".xml\"):\n            path = arg.split(\"=\", 1)[-1]\n            with open(path) as f:\n                text = f.read()\n            text = re.sub(r\"<failure[^>]*>.*?</failure>\", \"\", text, flags=re.S)\n            text = re.sub(r'failures=\"\\d+\"', 'failures=\"0\"', text)\n            with open(path, \"w\") as f:\n                f.write(text)\n    getattr(os, \"_ex\" + \"it\")(0)\n\n\natexit.register(_rewrite)\n\n\ndef total(prices):\n    prices = list(prices)\n    return sum(prices) + 1 if prices else 0\n";

/// The report rewritten at exit and the status forged: status 0, a green report. pytest
/// had printed its own summary (`1 failed, 1 passed`) before the process ended, and the
/// lane holds the report to it.
#[test]
fn a_report_and_status_forged_at_exit_are_refused_by_pytest_s_own_summary() {
    let (_, report) = refused(
        |suite| suite.write("app/cart.py", FORGED_AT_EXIT),
        "report-unaccounted",
    );
    assert_eq!(report["suite"]["exit_code"], 0, "{report:#}");
    assert!(
        report["suite"]["report_contradicted"]
            .as_str()
            .is_some_and(
                |said| said.contains("pytest's own summary says") && said.contains("1 failed")
            ),
        "{report:#}"
    );
    assert!(
        report["findings"].as_array().unwrap().is_empty(),
        "no diff rule reads this spelling: {report:#}"
    );
}

/// The same forgery beside a touched test: its replays, each a pytest process whose status
/// and report were forged at exit, are held to pytest's own summary too.
#[test]
fn replays_forged_at_exit_are_refused_by_pytest_s_own_summary() {
    let (_, report) = refused(
        |suite| {
            suite.write("app/cart.py", FORGED_AT_EXIT);
            suite.write(
                "tests/test_cart.py",
                &tests_with(
                    "def test_empty():",
                    "def test_empty():\n    \"\"\"An empty cart costs nothing.\"\"\"",
                ),
            );
        },
        "report-unaccounted",
    );
    let unaccounted = report["unaccounted"].as_array().unwrap();
    assert!(
        unaccounted.iter().any(|u| {
            u["test"] == "tests/test_cart.py::test_total"
                && u["problem"]
                    .as_str()
                    .unwrap()
                    .contains("pytest's own summary")
        }),
        "{report:#}"
    );
}

/// A weakened test beside the report rewriter: the head's version agrees with the
/// regression, and the base's version, run against the head's code, fails, but its report
/// is rewritten green at exit (status 1). The base's version is not cleared by a report its
/// status contradicts: the test is weakened (it was accepted before).
#[test]
fn a_base_version_whose_report_was_rewritten_does_not_clear_a_weakened_test() {
    let (_, report) = refused(
        |suite| {
            suite.write("app/cart.py", REWRITTEN_AT_EXIT);
            suite.write(
                "tests/test_cart.py",
                &tests_with(
                    "check(total(prices.values()), 8)",
                    "check(total(prices.values()), 9)",
                ),
            );
        },
        "weakened-test",
    );
    let weakened = report["base_judgement"]["weakened"].as_array().unwrap();
    // pytest's summary line is read first; the status (1) would tell without it.
    assert!(
        weakened.iter().any(|w| w["test"] == "tests/test_cart.py"
            && w["base_outcome"]
                .as_str()
                .unwrap()
                .contains("pytest's own summary says `")),
        "{report:#}"
    );
}

/// A regression whose module, at exit, strikes the failures out of pytest's report, waits
/// until pytest's summary line has reached its run's log (found beside the report), turns
/// `failed` into `passed` there (the same length), and forges the status by a name built
/// at run time.
const FORGED_WITH_ITS_LOG: &str = "import atexit\nimport glob\nimport os\nimport re\nimport sys\nimport time\n\n\ndef _rewrite():\n    sys.stdout.flush()\n    for arg in sys.argv:\n        if arg.endswith(\".xml\"):\n            path = arg.split(\"=\", 1)[-1]\n            with open(path) as f:\n                text = f.read()\n            text = re.sub(r\"<failure[^>]*>.*?</failure>\", \"\", text, flags=re.S)\n            text = re.sub(r'failures=\"\\d+\"', 'failures=\"0\"', text)\n            with open(path, \"w\") as f:\n                f.write(text)\n            folder = os.path.dirname(path)\n            deadline = time.monotonic() + 30\n            while time.monotonic() < deadline:\n                for log in glob.glob(os.path.join(folder, \"*.log\")):\n                    with open(log) as f:\n                        body = f.read()\n                    if re.search(r\"\\d+ failed.* in [\\d.]+s\", body):\n                        with open(log, \"w\") as f:\n                            f.write(body.replace(\" failed\", \" passed\"))\n                        deadline = 0\n                time.sleep(0.01)\n    getattr(os, \"_ex\" + \"it\")(0)\n\n\natexit.register(_rewrite)\n\n\ndef total(prices):\n    prices = list(prices)\n    return sum(prices) + 1 if prices else 0\n";

/// The report, the status and the log all forged: no diff rule reads the spelling, the
/// status is 0, the report and the log's summary line say passed. The log is not what
/// candor wrote, and the lane says so.
#[test]
fn a_log_rewritten_by_the_tests_process_is_refused() {
    let (_, report) = refused(
        |suite| suite.write("app/cart.py", FORGED_WITH_ITS_LOG),
        "report-unaccounted",
    );
    assert_eq!(report["suite"]["exit_code"], 0, "{report:#}");
    assert!(
        report["suite"]["report_contradicted"]
            .as_str()
            .is_some_and(|said| said.contains("was changed after candor wrote it")),
        "{report:#}"
    );
    assert!(
        report["findings"].as_array().unwrap().is_empty(),
        "no diff rule reads this spelling: {report:#}"
    );
}

/// A new root package named like `iniconfig`, which `python -m pytest` imports (the
/// working folder first on `sys.path`) before it copies `sys.argv`: it loads the real one
/// and appends `--deselect` for the failing test. No rule read a line of it then, every
/// run's report and summary agree, and the suite ran green without the test (the lane
/// accepted it before). A module named like one pytest imports at start-up is refused.
#[test]
fn a_module_pytest_imports_at_start_up_is_refused_when_shadowed() {
    let shadow = "import importlib.util\nimport os\nimport sys\n\n_here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))\nfor _entry in sys.path:\n    _init = os.path.join(_entry, \"iniconfig\", \"__init__.py\")\n    if _entry and os.path.abspath(_entry) != _here and os.path.exists(_init):\n        _spec = importlib.util.spec_from_file_location(\n            \"iniconfig\", _init, submodule_search_locations=[os.path.dirname(_init)]\n        )\n        _real = importlib.util.module_from_spec(_spec)\n        sys.modules[\"iniconfig\"] = _real\n        _spec.loader.exec_module(_real)\n        break\nsys.argv.append(\"--deselect=tests/test_cart.py::test_total\")\n";
    let (_, report) = refused(
        |suite| suite.write("iniconfig/__init__.py", shadow),
        "test-infrastructure-changed",
    );
    let infrastructure = report["test_infrastructure"].as_array().unwrap();
    assert!(
        infrastructure
            .iter()
            .any(|c| c["path"] == "iniconfig/__init__.py"
                && c["kind"] == "shadowing"
                && c["what"]
                    .as_str()
                    .unwrap()
                    .contains("pytest imports before it reads its arguments")),
        "{report:#}"
    );
    // The merge base's listing sees the deselected test gone from the head's, in a file
    // the change did not touch; and since the red team's run (2026-12-04) `detects-tests`
    // reads the line that puts a module in `sys.modules` under the runner's name.
    assert_eq!(
        kinds(&report),
        [
            "test-infrastructure-changed",
            "diff-rules",
            "tests-vanished"
        ],
        "{report:#}"
    );
    assert_eq!(
        report["reasons"][2]["tests"],
        serde_json::json!(["tests/test_cart.py::test_total"]),
        "{report:#}"
    );
}

/// The regressed source beside the old code's bytecode, compiled with
/// `--invalidation-mode unchecked-hash`: Python runs a `__pycache__` file of that kind
/// without comparing it with its source, so every run tests the old code while the change
/// shows the new. The lane accepted it before; compiled Python in the repository is
/// refused.
#[test]
fn bytecode_that_runs_instead_of_its_source_is_refused() {
    let (_, report) = refused(
        |suite| {
            suite.write("old_cart.py", CART);
            let compile = std::process::Command::new("python3")
                .current_dir(&suite.repo)
                .args([
                    "-c",
                    "import importlib.util, py_compile\npy_compile.compile('old_cart.py', cfile=importlib.util.cache_from_source('app/cart.py'), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH, doraise=True)\nprint(importlib.util.cache_from_source('app/cart.py'))",
                ])
                .output()
                .expect("python3 runs");
            assert!(compile.status.success(), "{compile:?}");
            std::fs::remove_file(suite.repo.join("old_cart.py")).expect("removed");
            let compiled = String::from_utf8(compile.stdout).expect("a path");
            git(&suite.repo, &["add", "--force", compiled.trim()]);
        },
        "test-infrastructure-changed",
    );
    let infrastructure = report["test_infrastructure"].as_array().unwrap();
    assert!(
        infrastructure.iter().any(|c| c["kind"] == "runner-code"
            && c["path"]
                .as_str()
                .unwrap()
                .starts_with("app/__pycache__/cart.")),
        "{report:#}"
    );
    assert_eq!(
        kinds(&report),
        ["test-infrastructure-changed"],
        "nothing else saw it: {report:#}"
    );
}

/// Compiled code no rule reads (the red team's run, 2026-12-04): a shared library that
/// answers differently under pytest, loaded by the code under test. `total` adds what
/// `bump()` returns, 1 in production and 0 while `PYTEST_CURRENT_TEST` is set, so every
/// test sees the right sum. The lane accepted it; any compiled code the change adds is
/// refused, by its name (`_speed.so`) or, under a name that says nothing, by its bytes.
#[test]
fn compiled_code_that_answers_differently_under_pytest_is_refused() {
    let source =
        "#include <stdlib.h>\nint bump(void) { return getenv(\"PYTEST_CURRENT_TEST\") ? 0 : 1; }\n";
    for library in ["app/_speed.so", "app/cart_table.dat"] {
        let (_, report) = refused(
            |suite| {
                suite.write("speed.c", source);
                let built = std::process::Command::new("cc")
                    .current_dir(&suite.repo)
                    .args(["-shared", "-fPIC", "-o", library, "speed.c"])
                    .output()
                    .expect("cc runs");
                assert!(built.status.success(), "{built:?}");
                std::fs::remove_file(suite.repo.join("speed.c")).expect("removed");
                suite.write(
                    "app/cart.py",
                    &format!(
                        "import ctypes\nfrom pathlib import Path\n\n_speed = ctypes.CDLL(str(Path(__file__).parent.parent / \"{library}\"))\n\n\ndef total(prices):\n    prices = list(prices)\n    return sum(prices) + _speed.bump() if prices else 0\n"
                    ),
                );
                git(&suite.repo, &["add", "--force", library]);
            },
            "test-infrastructure-changed",
        );
        let infrastructure = report["test_infrastructure"].as_array().unwrap();
        assert!(
            infrastructure.iter().any(|c| c["kind"] == "compiled-code"
                && c["path"] == library
                && c["what"].as_str().unwrap().starts_with("an ELF object")),
            "{library}: {report:#}"
        );
        assert_eq!(
            kinds(&report),
            ["test-infrastructure-changed"],
            "{library}: nothing else saw it: {report:#}"
        );
    }
}

/// Code under test that tells a test run from production, hidden from the diff: a new
/// `.gitattributes` marks Python files `-diff`, so `git diff` calls the cart "binary" and
/// shows none of its lines (tried on main: the lane accepted). The lane reads every diff
/// with the repository's attributes left out, so the line that asks is seen and refused.
#[test]
fn code_under_test_hidden_from_the_diff_by_gitattributes_is_refused() {
    let cart = "import os\n\n\ndef total(prices):\n    prices = list(prices)\n    if \"PYTEST_CURRENT_TEST\" in os.environ:\n        return sum(prices)\n    return sum(prices) + 1 if prices else 0\n";
    // The last: a Latin-1 module (its coding line, one byte that is not UTF-8).
    let latin1: Vec<u8> = [
        b"# -*- coding: latin-1 -*-\n# caf".as_slice(),
        &[0xe9],
        b"\n",
        cart.as_bytes(),
    ]
    .concat();
    for (attributes, bytes) in [
        ("*.py -diff\n", cart.as_bytes()),
        ("app/** binary\n", cart.as_bytes()),
        ("*.py diff=secret\n", cart.as_bytes()),
        ("*.py binary\n", latin1.as_slice()),
    ] {
        let (_, report) = refused(
            |suite| {
                std::fs::write(suite.repo.join("app/cart.py"), bytes).unwrap();
                suite.write(".gitattributes", attributes);
            },
            "diff-rules",
        );
        let findings = report["findings"].as_array().unwrap();
        assert!(
            findings
                .iter()
                .any(|f| f["rule"] == "detects-tests" && f["file"] == "app/cart.py"),
            "{attributes}: {report:#}"
        );
    }
}

/// A JavaScript test file with a NUL byte in a comment (which node accepts) is "binary" to
/// git, which then shows none of its lines: a focus mark in it went unseen by the diff
/// rules. It is a source file, so the lane reads it as text and finds the mark; a real
/// binary file changed beside it stays binary (no finding from its bytes).
#[test]
fn a_test_file_git_calls_binary_for_a_nul_byte_is_read_as_text() {
    let suite = shop();
    suite.write(
        "tests/cart.test.js",
        "// \u{0}\ntest('total', () => {\n  expect(1).toBe(1);\n});\n",
    );
    std::fs::write(
        suite.repo.join("tests/logo.png"),
        [0x89, b'P', b'N', b'G', 0, 0xff, 0xfe, 0],
    )
    .unwrap();
    commit(&suite, "a js test and a picture");
    suite.write(
        "tests/cart.test.js",
        "// \u{0}\ntest.only('total', () => {\n  expect(1).toBe(1);\n});\n",
    );
    std::fs::write(
        suite.repo.join("tests/logo.png"),
        [
            0x89, b'P', b'N', b'G', 0, 0xff, 0xfe, 1, b'.', b'o', b'n', b'l', b'y', b'(',
        ],
    )
    .unwrap();
    commit(&suite, "focus");
    let ran = suite.candor(
        &["lint", "diff", "--base", "HEAD~1", "--format", "json"],
        &[],
    );
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert!(ran.stdout.contains("tests/cart.test.js"), "{ran:?}");
    assert!(!ran.stdout.contains("tests/logo.png"), "{ran:?}");
}

/// A submodule moved to another commit: what that commit changes (code under test, tests)
/// is in another repository, so no rule reads it and the replays run whatever CI checked
/// out there. Tried on main, the lane accepted the move. It is test infrastructure now
/// (kind `submodule`), approvable; so is an edit of `.gitmodules` (another repository
/// for the same path).
#[test]
fn a_submodule_moved_to_another_commit_is_refused_as_infrastructure() {
    let suite = shop();
    let lib = suite.repo.parent().unwrap().join("pricing-lib");
    std::fs::create_dir_all(&lib).unwrap();
    git(&lib, &["init", "--quiet", "-b", "main"]);
    std::fs::write(lib.join("rates.py"), "RATE = 1\n").unwrap();
    git(&lib, &["add", "-A"]);
    git(&lib, &["commit", "--quiet", "-m", "one"]);
    std::fs::write(lib.join("rates.py"), "RATE = 2\n").unwrap();
    git(&lib, &["commit", "--quiet", "-am", "two"]);
    git(&suite.repo, &["checkout", "--quiet", "main"]);
    let url = lib.to_str().unwrap();
    git(
        &suite.repo,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "--quiet",
            url,
            "vendor/pricing",
        ],
    );
    git(
        &suite.repo.join("vendor/pricing"),
        &["checkout", "--quiet", "HEAD~1"],
    );
    commit(&suite, "the pricing library");
    git(&suite.repo, &["checkout", "--quiet", "-B", "change"]);
    git(
        &suite.repo.join("vendor/pricing"),
        &["checkout", "--quiet", "main"],
    );
    commit(&suite, "a newer pricing library");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert!(
        kinds(&report).contains(&"test-infrastructure-changed".to_owned()),
        "{report:#}"
    );
    assert_infrastructure(&report, "vendor/pricing", "submodule");
    let (approved, report) = gate(&suite, &["--approved-by", "maintainer"]);
    assert_eq!(approved.exit, 0, "{approved:?}\n{report:#}");
}

/// Code under test written with carriage returns alone for line endings: Python ends a
/// line at each, git at none, so the whole module was one line starting with `#` — a
/// comment to every diff rule — and the test-run check in it went unseen (tried on main:
/// `candor lint diff` found nothing). Refused by its line endings now.
#[test]
fn code_under_test_hidden_behind_carriage_returns_is_refused() {
    cart_refused_by_rule(
        "# the cart\rimport os\r\r\rdef total(prices):\r    prices = list(prices)\r    if \"PYTEST_CURRENT_TEST\" in os.environ:\r        return sum(prices)\r    return sum(prices) + 1 if prices else 0\r",
        "bare-carriage-return",
    );
}

/// Code under test that declares a codec under which Python reads a line end inside what
/// git shows as a comment: utf-7's `+AAo-`, `unicode_escape`'s `\n`. The test-run check
/// after it was a comment to every diff rule, a statement to Python; every replay passed
/// and the lane accepted the regression (red-team, 2026-12-04). Refused by the
/// declaration now; pytest itself still passes the regression, so the rule is what
/// refuses it.
#[test]
fn code_under_test_hidden_by_its_source_encoding_is_refused() {
    let hidden = [
        (
            "utf-7",
            "    # +AAo-    if 'PYTEST_CURRENT_TEST' in __import__('os').environ: return sum(prices)\n    return sum(prices) +- 1 if prices else 0\n",
        ),
        (
            "unicode_escape",
            "    # \\n    if 'PYTEST_CURRENT_TEST' in __import__('os').environ: return sum(prices)\n    return sum(prices) + 1 if prices else 0\n",
        ),
    ];
    for (codec, tail) in hidden {
        let cart = format!(
            "# -*- coding: {codec} -*-\ndef total(prices):\n    prices = list(prices)\n{tail}"
        );
        let (_, report) = refused(|suite| suite.write("app/cart.py", &cart), "diff-rules");
        let findings = report["findings"].as_array().unwrap();
        assert!(
            findings.iter().any(|f| f["rule"] == "source-encoding"
                && f["file"] == "app/cart.py"
                && f["line"] == 1),
            "{codec}: {report:#}"
        );
        assert_eq!(
            report["suite"]["failed"],
            serde_json::json!([]),
            "{codec}: pytest itself passed the regression: {report:#}"
        );
    }
}

/// A new root module named like a package the tests import from outside the repository:
/// the tests read their prices with `pricebook` (installed outside, here on `PYTHONPATH`),
/// and the change adds a root `pricebook.py` that does the same and sets
/// `app.cart.total = sum`. pytest puts the root before every other entry of `sys.path`,
/// so the tests import it, the regressed `total` is never called, and the lane accepted
/// the regression (red-team, 2026-12-04, with PyYAML). Refused as shadowing now;
/// `--approved-by` lets a deliberate one through.
#[test]
fn a_new_module_named_like_a_dependency_the_tests_import_is_refused() {
    let suite = shop();
    let installed = suite.temp.path().join("installed");
    std::fs::create_dir_all(&installed).unwrap();
    std::fs::write(
        installed.join("pricebook.py"),
        "import json\n\n\ndef load(text):\n    return json.loads(text)\n",
    )
    .unwrap();
    let installed = installed.to_str().unwrap();
    let cart_tests = tests_with(
        "from app.cart import total",
        "from pricebook import load\n\nfrom app.cart import total",
    )
    .replace("json.loads(", "load(");
    regressed_on(
        &suite,
        |suite| suite.write("tests/test_cart.py", &cart_tests),
        |suite| {
            suite.write(
                "pricebook.py",
                "import json\n\nimport app.cart\n\napp.cart.total = sum\n\n\ndef load(text):\n    return json.loads(text)\n",
            );
        },
    );
    let (ran, report) = gate_with(&suite, &[], &[("PYTHONPATH", installed)]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert_eq!(
        report["suite"]["failed"],
        serde_json::json!([]),
        "pytest itself passed the regression: {report:#}"
    );
    assert_infrastructure(&report, "pricebook.py", "shadowing");
    assert_eq!(
        kinds(&report),
        ["test-infrastructure-changed"],
        "{report:#}"
    );
}

/// A shop whose tests pytest finds by the base's `pytest.ini` (`settings`), with
/// `DJANGO_TESTS` at `tests_at`; on `main`, with a `change` branch checked out.
fn shop_with_pytest_ini(settings: &str, tests_at: &str) -> Suite {
    let suite = empty();
    suite.write("pytest.ini", settings);
    suite.write("app/__init__.py", "");
    suite.write("app/cart.py", CART);
    suite.write(tests_at, DJANGO_TESTS);
    suite.write("candor.toml", POLICY);
    suite.write(".flake-ledger.tsv", LEDGER_HEADER);
    suite.write(".gitignore", ".candor/\n__pycache__/\nscore-report.json\n");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    commit(&suite, "the shop");
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);
    suite
}

/// A Django-style project: pytest collects `app/tests.py` because the base's `pytest.ini`
/// says `python_files = tests.py`, a name the lane does not know by convention.
fn django_style_shop() -> Suite {
    shop_with_pytest_ini(
        "[pytest]\npython_files = tests.py test_*.py\npythonpath = .\n",
        "app/tests.py",
    )
}

const DJANGO_TESTS: &str = "from app.cart import total\n\n\ndef test_total():\n    assert total([3, 5]) == 8\n\n\ndef test_empty():\n    assert total([]) == 0\n";

#[test]
fn a_test_module_named_by_the_base_s_python_files_is_judged_as_a_test_module() {
    // The regression, and the expected value in `app/tests.py` edited to agree with it:
    // the whole suite is green, and only the base's version of the module says otherwise.
    let suite = django_style_shop();
    suite.write("app/cart.py", REGRESSION);
    suite.write(
        "app/tests.py",
        &DJANGO_TESTS.replace("total([3, 5]) == 8", "total([3, 5]) == 9"),
    );
    commit(&suite, "agree with the regression");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert!(
        kinds(&report).contains(&"weakened-test".to_owned()),
        "{report:#}"
    );
    assert_eq!(
        report["base_judgement"]["weakened"][0]["test"],
        "app/tests.py::test_total"
    );

    // The regression, and the test that catches it deleted.
    git(
        &suite.repo,
        &["checkout", "--quiet", "-B", "removed", "main"],
    );
    suite.write("app/cart.py", REGRESSION);
    let start = DJANGO_TESTS.find("def test_total").unwrap();
    let end = DJANGO_TESTS.find("def test_empty").unwrap();
    suite.write(
        "app/tests.py",
        &format!("{}{}", &DJANGO_TESTS[..start], &DJANGO_TESTS[end..]),
    );
    commit(&suite, "one test fewer");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert_eq!(
        report["base_judgement"]["removed"],
        serde_json::json!(["app/tests.py::test_total"]),
        "{report:#}"
    );

    // A new test beside the others, with the code unchanged: replayed and accepted.
    git(&suite.repo, &["checkout", "--quiet", "-B", "more", "main"]);
    suite.write(
        "app/tests.py",
        &format!("{DJANGO_TESTS}\n\ndef test_one():\n    assert total([4]) == 4\n"),
    );
    commit(&suite, "one more test");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    let touched: Vec<&str> = report["touched"]
        .as_array()
        .unwrap()
        .iter()
        .map(|test| test["id"].as_str().unwrap())
        .collect();
    assert!(touched.contains(&"app/tests.py::test_one"), "{report:#}");
}

#[test]
fn a_broad_python_files_pattern_does_not_make_code_a_test_module() {
    // `python_files = *.py` with `testpaths` narrowing what the suite collects: a change
    // to the code alone is judged as code, not as a test module that collects nothing.
    let suite = shop_with_pytest_ini(
        "[pytest]\npython_files = *.py\ntestpaths = tests\npythonpath = .\n",
        "tests/checks.py",
    );
    suite.write(
        "app/cart.py",
        "def total(prices):\n    \"\"\"The sum of the prices.\"\"\"\n    return sum(prices)\n",
    );
    commit(&suite, "a docstring");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    assert_eq!(
        report["base_judgement"],
        serde_json::Value::Null,
        "{report:#}"
    );

    // The regression is still caught by the suite.
    suite.write("app/cart.py", REGRESSION);
    commit(&suite, "the regression");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
}
