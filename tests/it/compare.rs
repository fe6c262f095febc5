//! `candor compare`, `repro` and `classify` end to end: real git repositories, real pytest
//! runs, the merge base measured in a worktree of each run's own. The flaky test's
//! randomness comes from the seed candor hands pytest-randomly, and every comparison is
//! given `--seed`, so each of these tests replays the same runs every time.

use crate::triage_support;

use std::path::Path;

use triage_support::{Suite, empty, git};

const TEST: &str = "tests/test_checkout.py::test_checkout";

/// A pytest project whose checkout test fails whenever the seed pytest-randomly was given
/// is a multiple of 7 — about 1 run in 7, whatever the code does — and which also checks
/// `app.cart.total`.
fn flaky_project() -> Suite {
    let suite = empty();
    suite.write(
        "pyproject.toml",
        "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\npythonpath = [\".\"]\n",
    );
    suite.write("app/__init__.py", "");
    suite.write(
        "app/cart.py",
        "def total(prices):\n    return sum(prices)\n",
    );
    suite.write(
        "tests/test_checkout.py",
        r#"from app.cart import total


def test_checkout(request):
    seed = request.config.getoption("randomly_seed")
    # The stand-in for a race on a shared runner: it loses about 1 run in 7.
    assert seed % 7 != 0, f"checkout lost the race (seed {seed})"
    assert total([1, 2, 3]) == 6
"#,
    );
    suite.write(".gitignore", ".candor/\n__pycache__/\n");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", "the shop"]);
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);
    suite
}

fn commit_all(repo: &Path, message: &str) {
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "--quiet", "-m", message]);
}

fn compare_json(suite: &Suite, extra: &[&str]) -> (i32, serde_json::Value) {
    let mut args = vec!["compare", TEST, "--format", "json"];
    args.extend_from_slice(extra);
    let ran = suite.candor(&args, &[]);
    let lines = ran.lines_of("compare");
    assert_eq!(lines.len(), 1, "{ran:?}");
    (ran.exit, lines[0].clone())
}

#[test]
fn an_unrelated_fix_of_a_one_in_seven_flake_is_same_rate_with_a_ticket() {
    let suite = flaky_project();
    // The "fix": unrelated code, the kind of change a lucky green would have confirmed.
    suite.write(
        "app/cart.py",
        "def total(prices):\n    \"\"\"Sum of the prices.\"\"\"\n    return sum(prices, 0)\n",
    );
    commit_all(&suite.repo, "fix the checkout race");

    let (exit, line) = compare_json(&suite, &["--seed", "11"]);
    assert_eq!(line["verdict"], "same-rate", "{line:#}");
    assert_eq!(exit, 0, "{line:#}");
    let base_failures = line["base"]["failures"].as_u64().unwrap();
    let branch_failures = line["branch"]["failures"].as_u64().unwrap();
    assert!(base_failures + branch_failures > 0, "{line:#}");
    assert_eq!(line["base"]["runs"], line["branch"]["runs"], "{line:#}");
    // Every run recorded its own seed, and those seeds decided the outcomes.
    let seeds = line["branch"]["seeds"].as_array().unwrap();
    assert_eq!(seeds.len() as u64, line["branch"]["runs"].as_u64().unwrap());
    let red_seeds = seeds
        .iter()
        .filter(|s| s.as_u64().unwrap() % 7 == 0)
        .count() as u64;
    assert_eq!(red_seeds, branch_failures, "{line:#}");

    let ticket = suite
        .repo
        .join(line["ticket"].as_str().expect("a ticket path"));
    let text = std::fs::read_to_string(&ticket).unwrap();
    assert!(
        text.contains(&format!("# Quarantine ticket: `{TEST}`")),
        "{text}"
    );
    assert!(text.contains("[[fingerprint]]"), "{text}");
    assert!(text.contains("checkout lost the race"), "{text}");
    assert!(
        text.contains("frame = \"tests/test_checkout.py:7\""),
        "{text}"
    );
    // The base's worktree was this run's own and is gone (#14 item 8: one per run, so
    // two comparisons at once cannot reset each other's); the user's tree is untouched.
    let worktrees = suite.repo.join(".candor/worktrees");
    assert_eq!(
        std::fs::read_dir(&worktrees).map_or(0, Iterator::count),
        0,
        "no worktree left in {}",
        worktrees.display()
    );
    assert_eq!(git(&suite.repo, &["worktree", "list"]).lines().count(), 1);
    assert_eq!(git(&suite.repo, &["status", "--porcelain"]), "");

    // The records classify, each side on its own runs: the flake's outcomes flip on both.
    let records = line["records"].as_str().unwrap();
    let ran = suite.candor(&["classify", records, "--format", "json"], &[]);
    let buckets: Vec<(String, String)> = ran
        .lines_of("classify")
        .iter()
        .map(|b| {
            (
                b["side"].as_str().unwrap().to_owned(),
                b["bucket"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        buckets,
        [
            ("base".to_owned(), "noise".to_owned()),
            ("branch".to_owned(), "noise".to_owned())
        ],
        "{ran:?}"
    );
    assert_eq!(ran.exit, 1, "{ran:?}");

    // The runs are in the history as compare runs of both commits.
    let ran = suite.candor(&["show", TEST, "--format", "json"], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert!(ran.stdout.contains("\"compare\""), "{}", ran.stdout);
}

#[test]
fn a_real_bug_failing_three_runs_in_four_is_the_branch_s_fault() {
    let suite = flaky_project();
    suite.write(
        "app/cart.py",
        "import random\n\n\ndef total(prices):\n    # The bug: a rounding shortcut taken 3 times in 4.\n    if random.random() < 0.75:\n        return sum(prices) + 1\n    return sum(prices)\n",
    );
    commit_all(&suite.repo, "faster totals");
    let (exit, line) = compare_json(&suite, &["--seed", "5"]);
    let verdict = line["verdict"].as_str().unwrap();
    assert!(
        verdict == "branch-worse" || verdict == "deterministic-regression",
        "{line:#}"
    );
    assert_eq!(exit, 1, "{line:#}");
    assert!(line["ticket"].is_null(), "{line:#}");
    // Sequential stopping: far fewer than the 30 + 30 planned runs.
    assert!(line["runs"].as_u64().unwrap() <= 30, "{line:#}");
}

#[test]
fn a_deterministic_regression_is_called_in_eight_runs() {
    let suite = flaky_project();
    suite.write("app/cart.py", "def total(prices):\n    return 0\n");
    // The flake would muddy the call; this branch also makes the seed check pass always.
    suite.write(
        "tests/test_checkout.py",
        "from app.cart import total\n\n\ndef test_checkout():\n    assert total([1, 2, 3]) == 6\n",
    );
    commit_all(&suite.repo, "break totals");
    // The base still has the 1-in-7 flake; under seed 2 none of the base's first five
    // run seeds is a multiple of 7, so the base passes until the call. 0 of 4 against 4
    // of 4 crosses the second look's boundary (docs/compare.md).
    let (exit, line) = compare_json(&suite, &["--seed", "2"]);
    assert_eq!(exit, 1, "{line:#}");
    assert_eq!(line["verdict"], "deterministic-regression", "{line:#}");
    assert_eq!(line["base"]["failures"], 0, "{line:#}");
    assert_eq!(line["runs"], 8, "{line:#}");
}

#[test]
fn repro_confirms_a_pinned_seed_and_names_the_side_that_breaks_a_claim() {
    let suite = flaky_project();
    // The branch removes the seed-dependent race.
    suite.write(
        "tests/test_checkout.py",
        "from app.cart import total\n\n\ndef test_checkout():\n    assert total([1, 2, 3]) == 6\n",
    );
    commit_all(&suite.repo, "remove the race");
    let ran = suite.candor(&["repro", TEST, "--seed", "14", "--runs", "2"], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert!(ran.stdout.starts_with("repro confirmed: "), "{ran:?}");
    assert!(ran.stdout.contains("with seed 14"), "{ran:?}");
    assert!(ran.stdout.contains("the seed fixes"), "{ran:?}");

    // Seed 15 is not a multiple of 7: the base passes, the claim breaks there.
    let ran = suite.candor(
        &[
            "repro", TEST, "--seed", "15", "--runs", "2", "--format", "json",
        ],
        &[],
    );
    assert_eq!(ran.exit, 1, "{ran:?}");
    let line = &ran.lines_of("repro")[0];
    assert_eq!(line["verdict"], "base-did-not-fail", "{line:#}");
}

#[test]
fn a_test_the_base_does_not_have_is_an_input_error_and_the_worktree_goes() {
    let suite = flaky_project();
    suite.write("tests/test_new.py", "def test_new():\n    assert True\n");
    commit_all(&suite.repo, "a new test");
    let ran = suite.candor(
        &["compare", "tests/test_new.py::test_new", "--seed", "1"],
        &[],
    );
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(
        ran.stderr
            .contains("the runner ran no test `tests/test_new.py::test_new` on the base"),
        "{ran:?}"
    );
    assert!(!suite.repo.join(".candor/worktrees/base").exists());
    assert_eq!(git(&suite.repo, &["worktree", "list"]).lines().count(), 1);
}

#[test]
fn classify_refuses_what_is_not_a_record() {
    let suite = empty();
    suite.write("junk.record.json", "{\"schema\": \"something else\"}\n");
    let ran = suite.candor(&["classify", "junk.record.json"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(
        ran.stderr.contains("junk.record.json:1: not a run record"),
        "{ran:?}"
    );
}

#[test]
fn a_red_that_isolation_cannot_reproduce_is_rerun_in_its_suite_s_order() {
    const VICTIM: &str = "tests/test_reports.py::test_report_uses_default_mode";
    const POLLUTER: &str = "tests/test_config.py::test_strict_mode_can_be_enabled";
    let suite = empty();
    triage_support::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/order_pytest"),
        &suite.repo,
    );
    suite.write(".gitignore", ".candor/\n__pycache__/\nsuite.xml\n");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    commit_all(&suite.repo, "the suite");
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);
    git(
        &suite.repo,
        &["commit", "--quiet", "--allow-empty", "-m", "a change"],
    );
    // The suite run in collection order, where the polluter runs before the victim.
    let pytest = std::process::Command::new("python3")
        .args([
            "-m",
            "pytest",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            "-q",
        ])
        .arg("--junitxml=suite.xml")
        .current_dir(&suite.repo)
        .env_remove("PYTEST_ADDOPTS")
        .output()
        .expect("pytest runs");
    assert_eq!(pytest.status.code(), Some(1), "{pytest:?}");
    let ingested = suite.candor(&["ingest", "suite.xml"], &[]);
    assert_eq!(ingested.exit, 0, "{ingested:?}");

    let ran = suite.candor(&["compare", VICTIM, "--seed", "2", "--format", "json"], &[]);
    let line = &ran.lines_of("compare")[0];
    assert_eq!(line["verdict"], "passes-both", "{line:#}");
    assert_eq!(ran.exit, 0, "{line:#}");
    let order = &line["order"];
    assert_eq!(
        order["verdict"]["kind"], "order-dependent-victim",
        "{order:#}"
    );
    assert_eq!(order["verdict"]["polluters"][0], POLLUTER, "{order:#}");
}

/// Issue 16 item 2: a brittle test fails alone on both sides but passes in its suite at
/// the very same commit, because its state-setter runs before it. The history holds that
/// green suite run; compare checks the suite order before advising and leads with the
/// brittle finding, and never tells the reader to report it against the base.
#[test]
fn a_test_failing_alone_on_both_sides_but_green_in_its_suite_is_checked_in_its_order() {
    const BRITTLE: &str = "tests/test_cache.py::test_cache_dir_is_configured";
    const STATE_SETTER: &str = "tests/test_bootstrap.py::test_bootstrap_sets_cache_dir";
    let suite = empty();
    triage_support::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/order_pytest"),
        &suite.repo,
    );
    suite.write(".gitignore", ".candor/\n__pycache__/\nsuite.xml\n");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    commit_all(&suite.repo, "the suite");
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);
    git(
        &suite.repo,
        &["commit", "--quiet", "--allow-empty", "-m", "a change"],
    );
    // The suite in collection order: the state-setter runs first, the brittle test passes.
    let pytest = std::process::Command::new("python3")
        .args([
            "-m",
            "pytest",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            "-q",
        ])
        .arg("--junitxml=suite.xml")
        .arg(format!(
            "--deselect={}",
            "tests/test_reports.py::test_report_uses_default_mode"
        ))
        .current_dir(&suite.repo)
        .env_remove("PYTEST_ADDOPTS")
        .output()
        .expect("pytest runs");
    let ingested = suite.candor(&["ingest", "suite.xml"], &[]);
    assert_eq!(ingested.exit, 0, "{ingested:?} {pytest:?}");
    let shown = suite.candor(&["show", BRITTLE, "--format", "json"], &[]);
    assert!(
        shown.stdout.contains("\"pass\""),
        "green in its suite: {shown:?}"
    );

    let ran = suite.candor(
        &["compare", BRITTLE, "--seed", "3", "--format", "json"],
        &[],
    );
    let line = &ran.lines_of("compare")[0];
    assert_eq!(line["verdict"], "fails-both", "{line:#}");
    assert_eq!(line["suite_history"]["green"], 1, "{line:#}");
    assert_eq!(
        line["order"]["verdict"]["kind"], "order-dependent-brittle",
        "{line:#}"
    );
    assert_eq!(line["order"]["verdict"]["state_setters"][0], STATE_SETTER);
    let advice = line["advice"].as_str().unwrap();
    assert!(!advice.contains("report it against the base"), "{advice}");
    assert!(
        advice.starts_with(
            "fails alone on both sides, but its suite's order explains it: order-dependent-brittle"
        ),
        "{advice}"
    );
    // No rise above 100% exists: the protection line has no meaning (item 4).
    assert!(line["protection"].is_null(), "{line:#}");

    // Human output: the order finding comes right under the verdict, before the advice.
    let human = suite.candor(&["compare", BRITTLE, "--seed", "3"], &[]);
    let lines: Vec<&str> = human.stdout.lines().collect();
    assert!(lines[0].starts_with("fails-both: "), "{human:?}");
    assert!(
        lines[1].starts_with("  in its suite's order: order-dependent-brittle"),
        "{human:?}"
    );
    assert!(
        !human.stdout.contains("report it against the base"),
        "{human:?}"
    );
    assert!(
        !human.stdout.contains("catches a rise from 100%"),
        "{human:?}"
    );
}

/// A pytest project whose test fails when pytest-randomly's seed is a multiple of 8, as
/// an unseeded 1-in-8 flake does, and a branch that removes the flake.
fn fixed_flake_project() -> Suite {
    let suite = empty();
    suite.write("pytest.ini", "[pytest]\ntestpaths = tests\n");
    suite.write(
        "tests/test_upload.py",
        "def test_upload(request):\n    seed = request.config.getoption(\"randomly_seed\")\n    assert seed % 8 != 0, f\"upload raced the cleanup (seed {seed})\"\n",
    );
    suite.write(".gitignore", ".candor/\n__pycache__/\n");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    commit_all(&suite.repo, "uploads");
    git(&suite.repo, &["checkout", "--quiet", "-b", "fix"]);
    suite.write(
        "tests/test_upload.py",
        "def test_upload(request):\n    assert True\n",
    );
    commit_all(&suite.repo, "remove the race");
    suite
}

/// Issue 16 item 3: a fix branch is told it fails less, with the runs that would show
/// the drop, and no quarantine ticket is written.
#[test]
fn a_fix_branch_is_fewer_failures_with_no_ticket() {
    let suite = fixed_flake_project();
    let test = "tests/test_upload.py::test_upload";
    // Seed 6: the base's first run seed is a multiple of 8, so the base fails at once.
    let ran = suite.candor(&["compare", test, "--seed", "6", "--format", "json"], &[]);
    let line = &ran.lines_of("compare")[0];
    assert_eq!(line["verdict"], "fewer-failures", "{line:#}");
    assert_eq!(ran.exit, 0, "{line:#}");
    assert!(line["base"]["failures"].as_u64().unwrap() > 0, "{line:#}");
    assert_eq!(line["branch"]["failures"], 0, "{line:#}");
    assert!(line["ticket"].is_null(), "{line:#}");
    assert!(!suite.repo.join(".candor/tickets").exists());
    let per_side = line["drop"]["runs_per_side"]
        .as_u64()
        .expect("runs per side");
    let more = line["drop"]["more_runs"].as_u64().expect("more runs");
    let made = line["base"]["runs"].as_u64().unwrap();
    assert_eq!(more, 2 * (per_side - made), "{line:#}");
    let advice = line["advice"].as_str().unwrap();
    assert!(
        advice.starts_with(&format!(
            "fewer failures on the branch: consistent with a fix; {more} more runs ({per_side} per side in all) would show a drop from "
        )),
        "{advice}"
    );
    assert!(
        advice.contains("with 80% power (one-sided Fisher exact test"),
        "{advice}"
    );
    assert!(line["protection"].is_null(), "{line:#}");
}

/// Issue 16 items 4, 5 and 6: a timing assertion made to fail every run by a tiny
/// bound, on a pytest without a seed (pytest-randomly turned off in the runner's
/// command): compare does not send it to the base, classify calls it timing-sensitive,
/// says nothing of pinning a seed, and labels each side.
#[test]
fn a_timing_assertion_failing_on_both_sides_is_timing_sensitive_not_the_base_s() {
    let suite = empty();
    suite.write("pytest.ini", "[pytest]\ntestpaths = tests\n");
    suite.write(
        "candor.toml",
        "[runner]\nkind = \"pytest\"\ncommand = [\"python3\", \"-m\", \"pytest\", \"-p\", \"no:randomly\"]\n",
    );
    suite.write(
        "tests/test_timing.py",
        "import time\n\n\ndef test_sleep_is_quick():\n    start = time.monotonic()\n    time.sleep(0.01)\n    elapsed = time.monotonic() - start\n    assert 0.0 < elapsed < 1e-9\n",
    );
    suite.write(".gitignore", ".candor/\n__pycache__/\n");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    commit_all(&suite.repo, "timing");
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);
    git(
        &suite.repo,
        &["commit", "--quiet", "--allow-empty", "-m", "a change"],
    );
    let test = "tests/test_timing.py::test_sleep_is_quick";
    let ran = suite.candor(&["compare", test, "--seed", "1", "--format", "json"], &[]);
    let line = &ran.lines_of("compare")[0];
    assert_eq!(line["verdict"], "fails-both", "{line:#}");
    assert!(
        line["base"]["seeds"]
            .as_array()
            .unwrap()
            .iter()
            .all(serde_json::Value::is_null)
    );
    let advice = line["advice"].as_str().unwrap();
    assert!(
        advice.starts_with("timing-sensitive on both sides"),
        "{advice}"
    );
    assert!(advice.contains("pinning is impossible"), "{advice}");
    assert!(!advice.contains("report it against the base;"), "{advice}");
    assert!(line["protection"].is_null(), "{line:#}");
    let human = suite.candor(&["compare", test, "--seed", "1"], &[]);
    assert!(!human.stdout.contains("catches a rise"), "{human:?}");

    let records = line["records"].as_str().unwrap();
    let classified = suite.candor(&["classify", records, "--format", "json"], &[]);
    let buckets = classified.lines_of("classify");
    assert_eq!(buckets.len(), 2, "{classified:?}");
    for bucket in &buckets {
        assert_eq!(bucket["bucket"], "timing-sensitive", "{bucket:#}");
        assert!(
            bucket["reason"]
                .as_str()
                .unwrap()
                .contains("`assert 0.0 < elapsed < 1e-9`"),
            "{bucket:#}"
        );
    }
    assert_eq!(classified.exit, 1, "{classified:?}");
    let human = suite.candor(&["classify", records], &[]);
    assert!(!human.stdout.contains("pin the seed"), "{human:?}");
    assert!(
        human
            .stdout
            .contains(&format!("timing-sensitive: {test} (merge base: "))
            && human
                .stdout
                .contains(&format!("timing-sensitive: {test} (branch: ")),
        "{human:?}"
    );
}
