//! `candor gate` end to end on real git repositories holding real pytest suites: each of
//! the lane's rejections, the clean change accepted, approvals, the report and the step
//! summary. Every test builds its own repository (base on `main`, the change on `change`).

use crate::triage_support;

use std::path::Path;

use triage_support::{Ran, Suite, empty, git};

const CART: &str = "def total(prices):\n    return sum(prices)\n";

const CART_TESTS: &str = r#"import json
from pathlib import Path

from app.cart import total

FIXTURES = Path(__file__).parent / "fixtures"


def test_total():
    prices = json.loads((FIXTURES / "prices.json").read_text())
    assert total(prices.values()) == 8


def test_empty():
    assert total([]) == 0
"#;

const POLICY: &str =
    "[lane]\nmin_replays = 3\nmax_wall_seconds = 120\npresets = [\"no-sleep-wait\"]\n";

const LEDGER: &str = "# date\tsha\ttest_id\tfp\tfirst_fail_sha256\tseed\tworkers\tattempts\toutcome\n2026-10-06\ta41f9c2\ttests/test_cart.py::test_total\tFP-001\t9e1cb07a\trs=118204\t4\t2\tpass\n";

/// The base on `main`: a cart, its tests, a locked price fixture, a policy with the
/// sleep preset on, a ledger; then a `change` branch checked out.
fn shop() -> Suite {
    shop_with(&[])
}

/// [`shop`] with `files` in its base commit too.
fn shop_with(files: &[(&str, &str)]) -> Suite {
    let suite = empty();
    for (path, text) in files {
        suite.write(path, text);
    }
    suite.write(
        "pyproject.toml",
        "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\npythonpath = [\".\"]\n",
    );
    suite.write("app/__init__.py", "");
    suite.write("app/cart.py", CART);
    suite.write("tests/test_cart.py", CART_TESTS);
    suite.write(
        "tests/fixtures/prices.json",
        "{\"apple\": 3, \"pear\": 5}\n",
    );
    suite.write("candor.toml", POLICY);
    suite.write(".flake-ledger.tsv", LEDGER);
    suite.write(".gitignore", ".candor/\n__pycache__/\nscore-report.json\n");
    let locked = suite.candor(&["lock", "fixtures"], &[]);
    assert_eq!(locked.exit, 0, "{locked:?}");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", "the shop"]);
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);
    suite
}

fn commit(suite: &Suite, message: &str) {
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", message]);
}

fn gate(suite: &Suite, extra: &[&str]) -> (Ran, serde_json::Value) {
    let mut args = vec!["gate", "--format", "json"];
    args.extend_from_slice(extra);
    let ran = suite.candor(&args, &[]);
    let report_text = std::fs::read_to_string(suite.repo.join("score-report.json"))
        .unwrap_or_else(|e| panic!("no report ({e}): {ran:?}"));
    let report: serde_json::Value = serde_json::from_str(&report_text).unwrap();
    (ran, report)
}

fn reason_kinds(report: &serde_json::Value) -> Vec<String> {
    report["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_clean_change_is_accepted_with_its_touched_tests_replayed() {
    let suite = shop();
    suite.write(
        "tests/test_cart.py",
        &format!("{CART_TESTS}\n\ndef test_single():\n    assert total([4]) == 4\n"),
    );
    commit(&suite, "test a single price");
    let summary = suite.temp.path().join("summary.md");
    let ran = suite.candor(
        &["gate", "--format", "json"],
        &[("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())],
    );
    assert_eq!(ran.exit, 0, "{ran:?}");
    let line = &ran.lines_of("gate")[0];
    assert_eq!(line["pass"], true, "{line:#}");
    assert_eq!(line["schema"], "candor.score-report.v1");
    assert_eq!(line["flake_budget"], 0);
    assert_eq!(line["deterministic"], true);
    let touched: Vec<(String, bool, String)> = line["touched"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap().to_owned(),
                t["new"].as_bool().unwrap(),
                t["bucket"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        touched,
        [
            (
                "tests/test_cart.py::test_empty".to_owned(),
                false,
                "stable-pass".to_owned()
            ),
            (
                "tests/test_cart.py::test_single".to_owned(),
                true,
                "untrusted-green".to_owned()
            ),
            (
                "tests/test_cart.py::test_total".to_owned(),
                false,
                "stable-pass".to_owned()
            ),
        ]
    );
    // Three replays each, one pinned seed for all of them.
    let runs = line["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 9, "{line:#}");
    let seeds: std::collections::BTreeSet<_> = runs.iter().map(|r| r["seed"].as_u64()).collect();
    assert_eq!(seeds.len(), 1, "{line:#}");
    assert!(seeds.iter().all(Option::is_some));
    let markdown = std::fs::read_to_string(&summary).unwrap();
    assert!(
        markdown.starts_with("### candor gate: accepted"),
        "{markdown}"
    );
}

/// The lane's seed comes from the merge base, not from the head: an agent that amends its
/// commit (a new sha, the same code) until seeded randomness or a shuffled order happens
/// to pass gets the same seed every time.
#[test]
fn amending_the_head_does_not_change_the_lane_s_seed() {
    let suite = shop();
    suite.write(
        "tests/test_cart.py",
        &format!("{CART_TESTS}\n\ndef test_single():\n    assert total([4]) == 4\n"),
    );
    commit(&suite, "test a single price");
    let (first, report) = gate(&suite, &[]);
    assert_eq!(first.exit, 0, "{first:?}");
    let seed = report["seed"].as_u64().expect("a pinned seed");
    let head = report["head"].as_str().expect("a head").to_owned();
    for message in ["test a single price (again)", "retry with another sha"] {
        git(
            &suite.repo,
            &["commit", "--quiet", "--amend", "-m", message],
        );
        let (ran, report) = gate(&suite, &[]);
        assert_eq!(ran.exit, 0, "{ran:?}");
        assert_ne!(report["head"].as_str(), Some(head.as_str()), "a new head");
        assert_eq!(report["seed"].as_u64(), Some(seed), "{report:#}");
        let seeds: std::collections::BTreeSet<_> = report["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .map(|r| r["seed"].as_u64())
            .collect();
        assert_eq!(seeds, [Some(seed)].into(), "{report:#}");
    }
}

#[test]
fn a_flaky_mark_on_a_touched_test_is_rejected() {
    let suite = shop();
    suite.write(
        "tests/test_cart.py",
        &CART_TESTS
            .replace(
                "def test_total",
                "@pytest.mark.flaky(reruns=3)\ndef test_total",
            )
            .replace("import json", "import json\n\nimport pytest"),
    );
    commit(&suite, "retry the total");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert!(
        reason_kinds(&report).contains(&"diff-rules".to_owned()),
        "{report:#}"
    );
    let finding = &report["findings"][0];
    assert_eq!(finding["file"], "tests/test_cart.py");
    assert_eq!(finding["rule"], "forbidden-mark");
    assert_eq!(finding["line"], 11, "{finding:#}");
}

#[test]
fn a_new_test_that_passes_two_replays_of_three_is_rejected_as_noise() {
    let suite = shop();
    // State outside the test's input: a counter file that survives between processes.
    suite.write(
        "tests/test_counter.py",
        r#"from pathlib import Path

COUNTER = Path(__file__).parent.parent / ".candor" / "counter"


def test_counts():
    COUNTER.parent.mkdir(exist_ok=True)
    seen = int(COUNTER.read_text()) if COUNTER.exists() else 0
    COUNTER.write_text(str(seen + 1))
    assert seen != 1, "the second run in a row sees leftover state"
"#,
    );
    commit(&suite, "count things");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    let failed = &report["reasons"][0];
    assert_eq!(failed["kind"], "replay-failed", "{report:#}");
    assert_eq!(failed["test"], "tests/test_counter.py::test_counts");
    assert_eq!(failed["bucket"], "noise");
    assert_eq!(failed["failures"], 1);
    assert_eq!(failed["replays"], 3);
    assert_eq!(report["deterministic"], false);
}

#[test]
fn a_fixture_edited_without_its_lock_is_rejected_as_fixture_drift() {
    let suite = shop();
    suite.write(
        "tests/fixtures/prices.json",
        "{\"apple\": 4, \"pear\": 4}\n",
    );
    commit(&suite, "new prices");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert_eq!(reason_kinds(&report), ["fixture-drift"], "{report:#}");
    assert_eq!(
        report["fixture_drift"][0]["path"],
        "tests/fixtures/prices.json"
    );
}

#[test]
fn a_freeze_for_the_change_s_own_test_is_flagged_and_the_base_policy_used() {
    let suite = shop();
    suite.write(
        "candor.toml",
        &format!(
            "{POLICY}\n[[freeze]]\ntest = \"tests/test_counter.py::test_counts\"\nowner = \"me\"\nexpires = 2099-01-01\nticket = \"X-1\"\n"
        ),
    );
    suite.write(
        "tests/test_counter.py",
        "def test_counts():\n    assert 1 + 1 == 3\n",
    );
    commit(&suite, "freeze my broken test");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    let kinds = reason_kinds(&report);
    assert_eq!(
        kinds,
        ["human-owned-files-changed", "replay-failed"],
        "{report:#}"
    );
    assert_eq!(report["human_owned"][0]["path"], "candor.toml");
    // The freeze is not the base's, so nothing is frozen, and the test was replayed.
    assert_eq!(report["freezes_in_force"], serde_json::json!([]));
    assert_eq!(report["reasons"][1]["bucket"], "invariant-miss");

    // An approval covers the policy change, never the red replay.
    let (ran, report) = gate(&suite, &["--approved-by", "alice"]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert_eq!(reason_kinds(&report), ["replay-failed"], "{report:#}");
    assert_eq!(report["approvals"][0]["by"], "alice");
    assert_eq!(report["approvals"][0]["approved"][0], "candor.toml");
}

#[test]
fn a_deleted_ledger_line_is_rejected_and_an_approved_one_accepted() {
    let suite = shop();
    let header = LEDGER.lines().next().unwrap();
    suite.write(".flake-ledger.tsv", &format!("{header}\n"));
    commit(&suite, "clean the ledger");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert_eq!(
        reason_kinds(&report),
        ["human-owned-files-changed"],
        "{report:#}"
    );
    assert_eq!(report["human_owned"][0]["path"], ".flake-ledger.tsv");
    assert_eq!(
        report["human_owned"][0]["ledger_line"]["line"], 2,
        "{report:#}"
    );
    let (ran, report) = gate(&suite, &["--approved-by", "alice"]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(report["pass"], true);
}

#[test]
fn a_sleep_in_a_test_is_rejected_when_the_base_turns_the_preset_on() {
    let suite = shop();
    suite.write(
        "tests/test_cart.py",
        &CART_TESTS
            .replace("import json", "import json\nimport time")
            .replace(
                "def test_empty():\n",
                "def test_empty():\n    time.sleep(0.01)\n",
            ),
    );
    commit(&suite, "wait for the cart");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert_eq!(reason_kinds(&report), ["diff-rules"], "{report:#}");
    assert_eq!(report["findings"][0]["rule"], "no-sleep-wait");
}

#[test]
fn outside_a_change_the_gate_is_a_usage_error() {
    let suite = empty();
    let ran = suite.candor(&["gate"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(!Path::new(&suite.repo.join("score-report.json")).exists());
}

/// A trial ran the lane in the middle of a rebase stopped on a conflict: it only warned
/// that tracked files differ, and its verdict described a commit the rebase was
/// replaying. The gate, compare and repro refuse (exit 2, naming the rebase and the way
/// out) before anything is run or written; after `git rebase --abort` the gate runs.
#[test]
fn the_gate_refuses_a_repository_in_the_middle_of_a_rebase() {
    // The conflict is in notes, not code: the tests still run, so before the refusal the
    // lane ran to a verdict on the half-rebased tree.
    let suite = shop_with(&[("NOTES.md", "notes\n")]);
    suite.write(
        "tests/test_cart.py",
        &format!("{CART_TESTS}\n\ndef test_single():\n    assert total([4]) == 4\n"),
    );
    suite.write("NOTES.md", "notes on the change\n");
    commit(&suite, "test a single price");
    git(&suite.repo, &["checkout", "--quiet", "main"]);
    suite.write("NOTES.md", "notes on main\n");
    commit(&suite, "notes on main");
    git(&suite.repo, &["checkout", "--quiet", "change"]);
    let rebase = std::process::Command::new("git")
        .args(["rebase", "--quiet", "main"])
        .current_dir(&suite.repo)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .env("GIT_EDITOR", "true")
        .output()
        .expect("git runs");
    assert!(!rebase.status.success(), "the rebase stops on the conflict");

    let history = suite.temp.path().join("history.db");
    let runs = suite.repo.join(".candor/runs");
    let written = || {
        let runs: Vec<_> = std::fs::read_dir(&runs)
            .map(|dir| dir.filter_map(Result::ok).map(|e| e.file_name()).collect())
            .unwrap_or_default();
        (
            suite.repo.join("score-report.json").exists(),
            history.exists(),
            runs,
        )
    };
    for command in [
        vec!["gate"],
        vec!["gate", "--format", "json"],
        vec!["compare", "tests/test_cart.py::test_total"],
        vec!["repro", "tests/test_cart.py::test_total", "--seed", "1"],
    ] {
        let ran = suite.candor(&command, &[]);
        assert_eq!(ran.exit, 2, "{command:?}: {ran:?}");
        assert!(
            ran.stderr.contains("in the middle of a rebase")
                && ran
                    .stderr
                    .contains("`git rebase --continue` or `git rebase --abort`"),
            "{command:?}: {ran:?}"
        );
        assert_eq!(
            written(),
            (false, false, Vec::new()),
            "{command:?}: {ran:?}"
        );
    }

    git(&suite.repo, &["rebase", "--abort"]);
    let ran = suite.candor(&["gate"], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert!(
        written().0,
        "the gate wrote its report once the rebase was aborted"
    );
}

#[test]
fn uncommitted_changes_to_tracked_files_are_warned_about() {
    let suite = shop();
    suite.write(
        "tests/test_cart.py",
        &format!("{CART_TESTS}\n\ndef test_single():\n    assert total([4]) == 4\n"),
    );
    commit(&suite, "test a single price");
    suite.write(
        "app/cart.py",
        "def total(prices):\n    return sum(prices) + 0\n",
    );
    let ran = suite.candor(&["gate"], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert!(
        ran.stderr
            .contains("warning: tracked files differ from HEAD"),
        "{ran:?}"
    );
}

/// The red team's way past the warning (2026-12-04): the regression committed, then
/// `git update-index --skip-worktree app/cart.py` and the old `total` written back, so
/// the replays ran the old code while the lane judged HEAD. `git diff` lists no such
/// file; the lane asks git which files it was told not to look at, and warns.
#[test]
fn a_file_git_was_told_not_to_look_at_is_warned_about() {
    for flag in ["--skip-worktree", "--assume-unchanged"] {
        let suite = shop();
        suite.write(
            "app/cart.py",
            "def total(prices):\n    prices = list(prices)\n    return sum(prices) + 1 if prices else 0\n",
        );
        commit(&suite, "regressed");
        git(&suite.repo, &["update-index", flag, "app/cart.py"]);
        suite.write(
            "app/cart.py",
            "def total(prices):\n    return sum(prices)\n",
        );
        let ran = suite.candor(&["gate"], &[]);
        assert!(
            ran.stderr
                .contains("warning: tracked files differ from HEAD"),
            "{flag}: {ran:?}"
        );
    }
}

#[test]
fn a_touched_test_that_skips_itself_in_every_replay_is_rejected() {
    let suite = shop();
    // No skip mark the diff rules know: the test skips itself at run time.
    suite.write(
        "tests/test_quiet.py",
        "import os\n\nimport pytest\n\n\ndef test_quiet():\n    if os.environ.get(\"PYTHONHASHSEED\") == \"0\":\n        getattr(pytest, \"sk\" + \"ip\")(\"not in the lane\")\n    assert False\n",
    );
    commit(&suite, "a quiet test");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert_eq!(reason_kinds(&report), ["replay-skipped"], "{report:#}");
    assert_eq!(
        report["reasons"][0]["test"],
        "tests/test_quiet.py::test_quiet"
    );
    assert!(report["touched"][0]["bucket"].is_null(), "{report:#}");
}

/// A test that needs a module this machine does not have, and one that needs the shop's
/// own `app.fast`: both run at the merge base only as far as their imports allow.
const OPTIONAL_TESTS: &str = r#"import pytest

from app.cart import total


def test_accelerated():
    accelerator = pytest.importorskip("candor_absent_accelerator")
    assert accelerator.total([1]) == total([1])


def test_fast():
    fast = pytest.importorskip("app.fast")
    assert fast.total([1, 2]) == 3
"#;

const FAST: &str = "def total(prices):\n    return sum(prices)\n";

#[test]
fn a_touched_test_the_merge_base_skips_the_same_way_is_reported_not_refused() {
    // The skip is the machine's (no such module at either end), not the change's.
    let suite = shop_with(&[
        ("tests/test_optional.py", OPTIONAL_TESTS),
        ("app/fast.py", FAST),
    ]);
    suite.write(
        "tests/test_optional.py",
        &OPTIONAL_TESTS.replace(
            "accelerator.total([1]) == total([1])",
            "accelerator.total([1, 2]) == total([1, 2])",
        ),
    );
    commit(&suite, "check two prices");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(report["pass"], true, "{report:#}");
    let skipped = &report["skipped_as_at_base"];
    assert_eq!(
        skipped[0]["test"], "tests/test_optional.py::test_accelerated",
        "{report:#}"
    );
    assert!(
        skipped[0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("candor_absent_accelerator")),
        "{report:#}"
    );
    assert_eq!(skipped.as_array().map(Vec::len), Some(1), "{report:#}");
}

/// `with_tax`'s test, skipped when the shop's taxes are off.
const TAX_TESTS: &str = "import pytest\n\nfrom app import features\nfrom app.tax import with_tax\n\n\n@pytest.mark.skipif(not features.ENABLED, reason=\"taxes are off\")\ndef test_with_tax():\n    assert with_tax(4) == 8\n";

/// The shop with taxes on, `with_tax`'s test, and the optional tests (one of which skips
/// on this machine whatever the change).
fn taxed_shop() -> Suite {
    shop_with(&[
        ("app/features.py", "ENABLED = True\n"),
        (
            "app/tax.py",
            "def with_tax(amount):\n    return amount * 2\n",
        ),
        ("tests/test_tax.py", TAX_TESTS),
        ("tests/test_optional.py", OPTIONAL_TESTS),
        ("app/fast.py", FAST),
    ])
}

#[test]
fn an_untouched_test_the_change_makes_skip_is_refused() {
    // The change regresses `with_tax` and turns the flag its untouched test's `skipif`
    // reads: the whole suite's run is green, the test skipped. `test_accelerated` skips
    // at both ends (no such module on this machine): not the change's.
    let suite = taxed_shop();
    suite.write(
        "app/tax.py",
        "def with_tax(amount):\n    return amount * 2 + 1\n",
    );
    suite.write("app/features.py", "ENABLED = False\n");
    commit(&suite, "taxes off");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert_eq!(reason_kinds(&report), ["suite-skipped"], "{report:#}");
    assert_eq!(
        report["reasons"][0]["test"],
        "tests/test_tax.py::test_with_tax"
    );
    assert_eq!(
        report["reasons"][0]["merge_base"],
        "the merge base runs it (pass): the change made it skip",
        "{report:#}"
    );
    assert_eq!(
        report["suite"]["failed"],
        serde_json::json!([]),
        "{report:#}"
    );

    // The same suite, a change that leaves the flag alone: the machine's own skip is
    // not refused.
    let suite = taxed_shop();
    suite.write(
        "app/tax.py",
        "def with_tax(amount):\n    return amount + amount\n",
    );
    commit(&suite, "taxes by addition");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    assert_eq!(report["pass"], true, "{report:#}");
}

/// `with_tax` checked once per rate the code holds.
const RATE_TESTS: &str = "import pytest\n\nfrom app.tax import RATES, with_tax\n\nEXPECTED = {\"standard\": 8, \"reduced\": 4}\n\n\n@pytest.mark.parametrize(\"rate\", sorted(RATES))\ndef test_with_tax(rate):\n    assert with_tax(4, rate) == EXPECTED[rate]\n";

#[test]
fn a_test_case_the_change_s_code_no_longer_generates_is_refused() {
    // The change regresses the reduced rate and takes it out of `RATES`, which the
    // untouched test's `parametrize` reads: its case for it is no longer collected, and
    // the whole suite's run is green.
    let rates = "RATES = {\"standard\": 2, \"reduced\": 1}\n\n\ndef with_tax(amount, rate):\n    return amount * RATES[rate]\n";
    let suite = shop_with(&[("app/tax.py", rates), ("tests/test_rates.py", RATE_TESTS)]);
    suite.write(
        "app/tax.py",
        "RATES = {\"standard\": 2}\n\n\ndef with_tax(amount, rate):\n    return amount * RATES.get(rate, 2) + (rate == \"reduced\")\n",
    );
    commit(&suite, "one rate");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert_eq!(reason_kinds(&report), ["tests-vanished"], "{report:#}");
    assert_eq!(
        report["reasons"][0]["tests"],
        serde_json::json!(["tests/test_rates.py::test_with_tax[reduced]"]),
        "{report:#}"
    );
    assert_eq!(
        report["suite"]["failed"],
        serde_json::json!([]),
        "{report:#}"
    );
    // A human who meant it lets it through, and the approval says what.
    let (ran, report) = gate(&suite, &["--approved-by", "alice"]);
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    assert_eq!(
        report["approvals"][0]["approved"],
        serde_json::json!(["tests/test_rates.py::test_with_tax[reduced]"]),
        "{report:#}"
    );

    // The rates kept, the code reworded: every case is still generated.
    let suite = shop_with(&[("app/tax.py", rates), ("tests/test_rates.py", RATE_TESTS)]);
    suite.write("app/tax.py", &format!("\"\"\"Taxes.\"\"\"\n\n{rates}"));
    commit(&suite, "a docstring");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
}

#[test]
fn a_skip_the_change_causes_is_refused_though_the_base_s_test_skips_with_it() {
    // The change deletes what the test imports: at the head the test skips, and so does
    // the base's version of it against the head's code. Only the merge base's own
    // checkout runs it.
    let suite = shop_with(&[
        ("tests/test_optional.py", OPTIONAL_TESTS),
        ("app/fast.py", FAST),
    ]);
    git(&suite.repo, &["rm", "--quiet", "app/fast.py"]);
    suite.write(
        "tests/test_optional.py",
        &OPTIONAL_TESTS.replace("fast.total([1, 2]) == 3", "fast.total([2, 2]) == 4"),
    );
    commit(&suite, "drop the fast path");
    let (ran, report) = gate(&suite, &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert_eq!(reason_kinds(&report), ["replay-skipped"], "{report:#}");
    assert_eq!(
        report["reasons"][0]["test"],
        "tests/test_optional.py::test_fast"
    );
    assert_eq!(
        report["reasons"][0]["merge_base"],
        "the merge base runs it (pass): the change made it skip",
        "{report:#}"
    );
    let excused: Vec<&str> = report["skipped_as_at_base"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["test"].as_str())
        .collect();
    assert!(
        !excused.contains(&"tests/test_optional.py::test_fast"),
        "{report:#}"
    );
}
