//! `candor gate` says what it checked (issue #12, item 6), end to end on real git
//! repositories holding real pytest suites: `[lane] replay = "all"` (the default) runs the
//! whole suite once besides the touched tests, so a source-only change that breaks tests is
//! rejected; `replay = "touched"` replays only touched tests and says "0 tests replayed"
//! plainly; a frozen test the change did not touch is excused in the suite's run; a suite
//! that runs nothing accepts nothing. Every test builds its own repository.

use crate::triage_support;

use triage_support::{Ran, Suite, empty, git};

const CART: &str = "def total(prices):\n    return sum(prices)\n";

const BROKEN_CART: &str = "def total(prices):\n    return sum(prices) + 1\n";

const CART_TESTS: &str = "from app.cart import total\n\n\ndef test_total():\n    assert total([3, 5]) == 8\n\n\ndef test_empty():\n    assert total([]) == 0\n";

/// A base on `main` (a cart, its two tests, `policy` as candor.toml when given), then a
/// `change` branch checked out.
fn shop(policy: Option<&str>) -> Suite {
    let suite = empty();
    suite.write(
        "pyproject.toml",
        "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\npythonpath = [\".\"]\n",
    );
    suite.write("app/__init__.py", "");
    suite.write("app/cart.py", CART);
    suite.write("tests/test_cart.py", CART_TESTS);
    if let Some(policy) = policy {
        suite.write("candor.toml", policy);
    }
    suite.write(".gitignore", ".candor/\n__pycache__/\nscore-report.json\n");
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

fn gate_json(suite: &Suite) -> (Ran, serde_json::Value) {
    let ran = suite.candor(&["gate", "--format", "json"], &[]);
    let text = std::fs::read_to_string(suite.repo.join("score-report.json"))
        .unwrap_or_else(|e| panic!("no report ({e}): {ran:?}"));
    (
        ran,
        serde_json::from_str(&text).expect("the report is JSON"),
    )
}

fn reason_kinds(report: &serde_json::Value) -> Vec<&str> {
    report["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .map(|r| r["kind"].as_str().expect("a kind"))
        .collect()
}

/// The human output with the run's varying parts (shas, seconds, scratch folders) fixed.
fn stable(ran: &Ran, suite: &Suite) -> String {
    let text = ran.redacted(suite);
    let shas = regex::Regex::new(r"\b[0-9a-f]{12}\.\.[0-9a-f]{12}\b").expect("a regex");
    let text = shas.replace_all(&text, "[BASE]..[HEAD]");
    let scratch = regex::Regex::new(r"gate-[A-Za-z0-9]{6}").expect("a regex");
    scratch.replace_all(&text, "gate-[X]").into_owned()
}

#[test]
fn a_source_only_change_that_breaks_tests_is_rejected_by_the_whole_suite_s_run() {
    // Issue #12 item 6: before, this change was `accepted` with nothing replayed and
    // nothing said. The default `replay = "all"` runs the whole suite once.
    let suite = shop(None);
    suite.write("app/cart.py", BROKEN_CART);
    commit(&suite, "an off-by-one in the cart");
    let (ran, report) = gate_json(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert_eq!(report["pass"], false);
    assert_eq!(reason_kinds(&report), ["suite-failed"], "{report:#}");
    assert_eq!(
        report["reasons"][0]["tests"],
        serde_json::json!([
            "tests/test_cart.py::test_empty",
            "tests/test_cart.py::test_total"
        ]),
        "{report:#}"
    );
    let replayed = &report["replayed"];
    assert_eq!(replayed["mode"], "all", "{report:#}");
    assert_eq!(replayed["suite_tests"], 2, "{report:#}");
    assert_eq!(replayed["touched_tests"], 0, "{report:#}");
    assert_eq!(replayed["replays"], 0, "{report:#}");
    assert_eq!(
        replayed["summary"],
        "the whole suite ran once (2 test(s), 2 red); 0 tests replayed: the change touched no test file"
    );
    assert_eq!(
        report["suite"]["failed"],
        serde_json::json!([
            "tests/test_cart.py::test_empty",
            "tests/test_cart.py::test_total"
        ])
    );
    // The JSON line carries the same.
    assert_eq!(ran.lines_of("gate")[0]["replayed"], *replayed);

    let human = suite.candor(&["gate"], &[]);
    insta::assert_snapshot!("source_only_change_rejected", stable(&human, &suite));
}

#[test]
fn with_replay_touched_a_source_only_change_replays_nothing_and_says_so() {
    // The base chose "touched": nothing runs, and the report says so rather than nothing.
    let suite = shop(Some("[lane]\nreplay = \"touched\"\n"));
    suite.write("app/cart.py", BROKEN_CART);
    commit(&suite, "an off-by-one in the cart");
    let (ran, report) = gate_json(&suite);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(report["replayed"]["mode"], "touched");
    assert!(report["suite"].is_null(), "{report:#}");
    assert!(report["replayed"]["suite_tests"].is_null(), "{report:#}");
    assert_eq!(
        report["replayed"]["summary"],
        "0 tests replayed: the change touched no test file (replay = \"touched\": the rest of the suite was not run)"
    );
    let human = suite.candor(&["gate"], &[]);
    assert!(
        human
            .stdout
            .contains("  ran: 0 tests replayed: the change touched no test file"),
        "{human:?}"
    );
}

#[test]
fn a_change_cannot_switch_its_own_lane_to_touched() {
    // The policy is the base's: a change that writes `replay = "touched"` is still judged
    // by the whole suite (and its policy edit is a human-owned change).
    let suite = shop(None);
    suite.write("candor.toml", "[lane]\nreplay = \"touched\"\n");
    suite.write("app/cart.py", BROKEN_CART);
    commit(&suite, "touched only, and an off-by-one");
    let (ran, report) = gate_json(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert_eq!(report["replayed"]["mode"], "all", "{report:#}");
    assert_eq!(
        reason_kinds(&report),
        ["human-owned-files-changed", "suite-failed"],
        "{report:#}"
    );
}

#[test]
fn replay_all_runs_the_suite_once_and_each_touched_test_min_replays_times() {
    let suite = shop(Some("[lane]\nreplay = \"all\"\nmin_replays = 2\n"));
    suite.write(
        "tests/test_cart.py",
        &format!("{CART_TESTS}\n\ndef test_single():\n    assert total([4]) == 4\n"),
    );
    commit(&suite, "test a single price");
    let (ran, report) = gate_json(&suite);
    assert_eq!(ran.exit, 0, "{ran:?}");
    let replayed = &report["replayed"];
    assert_eq!(replayed["suite_tests"], 3, "{report:#}");
    assert_eq!(replayed["touched_tests"], 3, "{report:#}");
    assert_eq!(replayed["replays"], 6, "{report:#}");
    assert_eq!(
        replayed["summary"],
        "the whole suite ran once (3 test(s), 0 red); 3 touched test(s) replayed 2 time(s) each (6 replays)"
    );
    assert_eq!(report["runs"].as_array().map(Vec::len), Some(6));
    // The suite's run is in the history beside the replays, as gate runs.
    let shown = suite.candor(
        &["show", "tests/test_cart.py::test_total", "--format", "json"],
        &[],
    );
    assert_eq!(shown.exit, 0, "{shown:?}");
    let runs = shown
        .json()
        .iter()
        .filter(|line| line["type"] == "run" || line["type"] == "execution")
        .count();
    assert_eq!(runs, 3, "the suite's run and two replays: {shown:?}");
}

#[test]
fn a_frozen_test_the_change_did_not_touch_is_excused_in_the_suite_s_run() {
    let policy = "[[freeze]]\ntest = \"tests/test_legacy.py::test_legacy\"\nowner = \"me\"\nexpires = 2099-01-01\nticket = \"X-1\"\n";
    let suite = shop(Some(policy));
    suite.write(
        "tests/test_legacy.py",
        "def test_legacy():\n    assert 1 + 1 == 3\n",
    );
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "--amend", "--no-edit"]);
    git(&suite.repo, &["branch", "--quiet", "-f", "main"]);
    suite.write(
        "app/cart.py",
        &format!("{CART}\n\ndef count(items):\n    return len(items)\n"),
    );
    commit(&suite, "count the items");
    let (ran, report) = gate_json(&suite);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(
        report["suite"]["excused"],
        serde_json::json!(["tests/test_legacy.py::test_legacy"]),
        "{report:#}"
    );
    assert_eq!(report["suite"]["failed"], serde_json::json!([]));
    let human = suite.candor(&["gate"], &[]);
    assert!(
        human.stdout.contains(
            "  suite: tests/test_legacy.py::test_legacy failed (frozen at the base: excused)"
        ),
        "{human:?}"
    );
}

#[test]
fn a_suite_that_runs_no_test_accepts_nothing() {
    let suite = shop(None);
    // The change deletes every test: the whole suite's run ran nothing.
    std::fs::remove_file(suite.repo.join("tests/test_cart.py")).expect("remove the tests");
    suite.write("tests/README.md", "tests go here\n");
    commit(&suite, "no more tests");
    let (ran, report) = gate_json(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}");
    // The lane's tampering rules (#14) also see the deleted tests and the new file under
    // tests/; what this test is about is that the empty suite rejects on its own count.
    let kinds = reason_kinds(&report);
    assert!(kinds.contains(&"suite-ran-nothing"), "{report:#}");
    assert!(kinds.contains(&"tests-removed"), "{report:#}");
    assert_eq!(report["replayed"]["suite_tests"], 0, "{report:#}");
}

#[test]
fn a_test_a_macro_call_wrote_before_the_change_is_not_new_in_a_real_cargo_crate() {
    // Issue #12 item 6: every macro-generated test was "new" (untrusted) because its file
    // has no `fn name(`; only the call the change adds makes a new one.
    let suite = empty();
    suite.write(
        "Cargo.toml",
        "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    );
    suite.write(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    );
    let cases = "macro_rules! check {\n    ($name:ident, $ok:expr) => {\n        #[test]\n        fn $name() {\n            assert!($ok);\n        }\n    };\n}\n\ncheck!(adds, calc::add(1, 2) == 3);\n";
    suite.write("tests/cases.rs", cases);
    suite.write(".gitignore", "target/\n.candor/\nscore-report.json\n");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", "a calculator"]);
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);
    suite.write(
        "tests/cases.rs",
        &format!("{cases}check!(adds_negatives, calc::add(-1, -2) == -3);\n"),
    );
    commit(&suite, "one more case");
    let (ran, report) = gate_json(&suite);
    assert_eq!(ran.exit, 0, "{ran:?}");
    let touched: Vec<(&str, bool)> = report["touched"]
        .as_array()
        .expect("touched")
        .iter()
        .map(|t| (t["id"].as_str().unwrap(), t["new"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        touched,
        [
            ("calc::cases::adds", false),
            ("calc::cases::adds_negatives", true)
        ],
        "{report:#}"
    );
    assert_eq!(report["replayed"]["suite_tests"], 2, "{report:#}");
}
