//! Paths stay inside (#14 item 8), in real git repositories: every configured path is
//! relative and without `..` (a configuration error naming the key and candor.toml's
//! line), and no write follows a committed symlink out of the repository: the
//! reliability file through `.ci`, ledger lines through `.flake-ledger.tsv`, tickets
//! through their folder, the history and runs through `.candor`, a lock, the score
//! report. Each refusal exits 2 and leaves the place outside untouched. Two `candor
//! compare` processes at once on one repository each get their own base worktree and the
//! right verdict.

#![cfg(unix)]

use crate::triage_support;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Command, Stdio};

use triage_support::{MODE, Ran, Suite, TODAY, empty, fingerprint, git, suite};

const WEBHOOK: &str = "tests/test_webhook.py::test_payment_webhook";

fn today() -> [(&'static str, &'static str); 1] {
    [("CANDOR_TODAY", TODAY)]
}

/// A folder outside the repository, and what it holds (to show nothing was written).
struct Outside(tempfile::TempDir);

impl Outside {
    fn new() -> Outside {
        Outside(tempfile::tempdir().expect("a temp dir"))
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    fn listing(&self) -> Vec<(String, Vec<u8>)> {
        let mut files = Vec::new();
        collect(self.path(), self.path(), &mut files);
        files.sort();
        files
    }
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).expect("read the folder") {
        let path = entry.expect("an entry").path();
        let name = path.strip_prefix(root).unwrap().display().to_string();
        if path.is_dir() {
            files.push((format!("{name}/"), Vec::new()));
            collect(root, &path, files);
        } else {
            files.push((name, std::fs::read(&path).unwrap_or_default()));
        }
    }
}

/// Commits everything on `main`, then branches `change` with one more commit.
fn commit_with_change(suite: &Suite) {
    suite.git_with_change();
}

/// A red webhook timeout stored in the history (outside the repository).
fn store_red(suite: &Suite) {
    let report = suite.temp.path().join("red.xml");
    let pytest = Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-o"])
        .arg("junit_family=xunit1")
        .arg(format!("--junitxml={}", report.display()))
        .current_dir(&suite.repo)
        .env(MODE, "flake")
        .stdout(Stdio::null())
        .status()
        .expect("pytest runs");
    assert_eq!(pytest.code(), Some(1), "the webhook test fails");
    let ingested = suite.candor(
        &["ingest", &report.display().to_string(), "--workers", "4"],
        &today(),
    );
    assert_eq!(ingested.exit, 0, "{ingested:?}");
}

fn pardon() -> String {
    fingerprint(
        "FP-001",
        WEBHOOK,
        "TimeoutError",
        r"Timed out after \d+(\.\d+)?s waiting for webhook stub on port \d+",
        "tests/test_webhook.py:7",
        "pytest",
    )
}

fn refused_through(ran: &Ran, link: &str) {
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(
        ran.stderr.contains("leads out of the repository")
            && ran.stderr.contains(&format!("{link} is a symlink to")),
        "{ran:?}"
    );
    assert!(
        ran.stderr
            .contains("hint: candor writes only inside the repository"),
        "{ran:?}"
    );
}

#[test]
fn the_reliability_file_is_not_written_through_a_committed_ci_symlink() {
    let outside = Outside::new();
    let suite = suite("pytest");
    symlink(outside.path(), suite.repo.join(".ci")).unwrap();
    commit_with_change(&suite);
    store_red(&suite);
    let ran = suite.candor(&["reliability", "--write"], &today());
    refused_through(&ran, ".ci");
    assert_eq!(outside.listing(), []);
}

#[test]
fn configured_paths_with_dots_or_absolute_are_configuration_errors() {
    let outside = Outside::new();
    let absolute = outside.path().join("x").display().to_string();
    for (section, key, command) in [
        ("reliability", "file", vec!["reliability", "--write"]),
        ("rerun", "ledger", vec!["rerun", WEBHOOK]),
        ("compare", "tickets", vec!["triage"]),
    ] {
        for bad in ["../escaped", absolute.as_str()] {
            let suite = suite("pytest");
            suite.write(
                "candor.toml",
                &format!("# policy\n[{section}]\n{key} = \"{bad}\"\n"),
            );
            commit_with_change(&suite);
            store_red(&suite);
            let ran = suite.candor(&command, &today());
            assert_eq!(ran.exit, 2, "{section}.{key} = {bad}: {ran:?}");
            assert!(
                ran.stderr.contains("candor.toml:3:")
                    && ran.stderr.contains(&format!("`{section}.{key}`")),
                "{section}.{key} = {bad}: {ran:?}"
            );
            assert!(!suite.temp.path().join("escaped").exists());
        }
    }
    assert_eq!(outside.listing(), []);
}

#[test]
fn ledger_lines_are_not_appended_through_a_committed_ledger_symlink() {
    let outside = Outside::new();
    std::fs::write(outside.path().join("ledger.tsv"), "").unwrap();
    let suite = suite("pytest");
    suite.write("candor.toml", &pardon());
    symlink(
        outside.path().join("ledger.tsv"),
        suite.repo.join(".flake-ledger.tsv"),
    )
    .unwrap();
    commit_with_change(&suite);
    store_red(&suite);
    // Committed, the symlink is refused where the merge base's ledger is read.
    let ran = suite.candor(&["rerun", WEBHOOK], &today());
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(
        ran.stderr.contains(".flake-ledger.tsv is a symlink"),
        "{ran:?}"
    );
    assert_eq!(outside.listing(), [("ledger.tsv".to_owned(), Vec::new())]);
}

#[test]
fn ledger_lines_are_not_appended_through_a_work_tree_symlink_even_to_nowhere() {
    for target in ["ledger.tsv", "not-yet.tsv"] {
        let outside = Outside::new();
        if target == "ledger.tsv" {
            std::fs::write(outside.path().join(target), "").unwrap();
        }
        let before = outside.listing();
        let suite = suite("pytest");
        suite.write("candor.toml", &pardon());
        commit_with_change(&suite);
        store_red(&suite);
        symlink(
            outside.path().join(target),
            suite.repo.join(".flake-ledger.tsv"),
        )
        .unwrap();
        let ran = suite.candor(&["rerun", WEBHOOK], &today());
        refused_through(&ran, ".flake-ledger.tsv");
        assert_eq!(outside.listing(), before, "{target}");
    }
}

/// A tiny pytest project on `main` with a branch `change`, for `compare`.
fn compare_project() -> Suite {
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
        "from app.cart import total\n\n\ndef test_checkout():\n    assert total([1, 2, 3]) == 6\n",
    );
    suite.write(".gitignore", ".candor/\n__pycache__/\n");
    suite
}

const CHECKOUT: &str = "tests/test_checkout.py::test_checkout";

#[test]
fn tickets_are_not_written_through_a_committed_folder_symlink() {
    let outside = Outside::new();
    let suite = compare_project();
    suite.write("candor.toml", "[compare]\ntickets = \"tickets\"\n");
    symlink(outside.path(), suite.repo.join("tickets")).unwrap();
    commit_with_change(&suite);
    let ran = suite.candor(&["compare", CHECKOUT, "--seed", "1"], &[]);
    refused_through(&ran, "tickets");
    assert_eq!(outside.listing(), []);
    assert!(
        !suite.repo.join(".candor/worktrees").exists(),
        "refused before the base was checked out"
    );
}

/// candor with the history at its default place, `.candor/history.db`.
fn candor_default_db(suite: &Suite, args: &[&str]) -> Ran {
    let output = Command::new(env!("CARGO_BIN_EXE_candor"))
        .args(args)
        .current_dir(&suite.repo)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", suite.temp.path())
        .env("CANDOR_TODAY", TODAY)
        .stdin(Stdio::null())
        .output()
        .expect("candor runs");
    Ran {
        exit: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).expect("utf-8"),
        stderr: String::from_utf8(output.stderr).expect("utf-8"),
    }
}

#[test]
fn the_history_runs_and_worktrees_do_not_follow_a_committed_candor_symlink() {
    let outside = Outside::new();
    let suite = compare_project();
    // `.candor` is usually ignored; a change can still commit it as a symlink.
    suite.write(".gitignore", "__pycache__/\n");
    symlink(outside.path(), suite.repo.join(".candor")).unwrap();
    commit_with_change(&suite);
    suite.write("red.xml", RED_XML);
    for args in [
        vec!["ingest", "red.xml"],
        vec!["test"],
        vec!["compare", CHECKOUT, "--seed", "1"],
        vec!["tests"],
    ] {
        let ran = candor_default_db(&suite, &args);
        refused_through(&ran, ".candor");
    }
    assert_eq!(outside.listing(), []);
}

#[test]
fn a_lock_is_not_written_through_a_committed_symlink() {
    let outside = Outside::new();
    std::fs::write(outside.path().join("lock.json"), "{}").unwrap();
    let suite = compare_project();
    suite.write("tests/fixtures/a.json", "{}\n");
    symlink(
        outside.path().join("lock.json"),
        suite.repo.join("tests/fixtures.lock.json"),
    )
    .unwrap();
    commit_with_change(&suite);
    let ran = suite.candor(&["lock", "fixtures"], &[]);
    refused_through(&ran, "tests/fixtures.lock.json");
    assert_eq!(
        outside.listing(),
        [("lock.json".to_owned(), b"{}".to_vec())]
    );
}

#[test]
fn the_score_report_is_not_written_through_a_committed_symlink() {
    let outside = Outside::new();
    let suite = compare_project();
    symlink(
        outside.path().join("score.json"),
        suite.repo.join("score-report.json"),
    )
    .unwrap();
    commit_with_change(&suite);
    let ran = suite.candor(&["gate"], &[]);
    refused_through(&ran, "score-report.json");
    assert_eq!(outside.listing(), []);
}

#[test]
fn two_compares_at_once_each_get_their_own_base_and_the_right_verdict() {
    let suite = compare_project();
    commit_with_change(&suite);
    suite.write("app/cart.py", "def total(prices):\n    return 0\n");
    git(&suite.repo, &["commit", "--quiet", "-am", "break totals"]);
    let start = || {
        Command::new(env!("CARGO_BIN_EXE_candor"))
            .args(["compare", CHECKOUT, "--seed", "3", "--format", "json"])
            .current_dir(&suite.repo)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", suite.temp.path())
            .env("CANDOR_DB", suite.temp.path().join("history.db"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("candor starts")
    };
    // Both are running before either has finished checking out its base.
    let (first, second) = (start(), start());
    for child in [first, second] {
        let output = child.wait_with_output().expect("candor ends");
        let stdout = String::from_utf8(output.stdout).expect("utf-8");
        let stderr = String::from_utf8(output.stderr).expect("utf-8");
        assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
        let line: serde_json::Value = stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|l| l["type"] == "compare")
            .unwrap_or_else(|| panic!("no compare line: {stdout}\n{stderr}"));
        assert_eq!(line["verdict"], "deterministic-regression", "{line:#}");
        assert_eq!(line["base"]["failures"], 0, "{line:#}");
    }
    let left: Vec<_> = std::fs::read_dir(suite.repo.join(".candor/worktrees"))
        .map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "each run removes its worktree: {left:?}");
    assert_eq!(git(&suite.repo, &["worktree", "list"]).lines().count(), 1);
}

/// One red result of the checkout test, for commands that need a results file.
const RED_XML: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="1" failures="1" errors="0" skipped="0">
<testcase classname="tests.test_checkout" name="test_checkout" file="tests/test_checkout.py" line="4">
<failure message="AssertionError: boom">tests/test_checkout.py:5: AssertionError</failure>
</testcase></testsuite></testsuites>
"#;
