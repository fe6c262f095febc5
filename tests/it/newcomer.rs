//! A newcomer's path (issue #12, item 8), end to end with the real binary: `candor init`
//! keeps `.candor/` out of commits and points at help that exists; `candor clean` and the
//! `[runs]` retention rule remove old run folders and nothing outside `.candor/runs`;
//! `show` says when it stopped at its limit; listings are whole when not on a terminal.

use crate::triage_support;

use std::path::Path;
use std::time::{Duration, SystemTime};

use triage_support::{Suite, empty, git};

const DAY: u64 = 24 * 60 * 60;

/// A run folder `name` under `.candor/runs`, holding a log, last written `days` ago.
fn run_folder(suite: &Suite, name: &str, days: u64) {
    let dir = suite.repo.join(".candor/runs").join(name);
    std::fs::create_dir_all(&dir).expect("the run folder");
    std::fs::write(dir.join("001-pytest.log"), "a log\n").expect("a log");
    age(&dir, days);
}

fn age(path: &Path, days: u64) {
    let when = SystemTime::now() - Duration::from_secs(days * DAY);
    std::fs::File::open(path)
        .expect("open for its time")
        .set_modified(when)
        .expect("set its time");
}

fn runs(suite: &Suite) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(suite.repo.join(".candor/runs"))
        .expect("the runs folder")
        .map(|entry| entry.expect("an entry").file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn init_adds_candor_to_gitignore_once_and_keeps_the_rest() {
    let suite = empty();
    // No trailing newline: the addition must not glue itself to the last line.
    suite.write(".gitignore", "target/\n*.log");
    let ran = suite.candor(&["init"], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(
        std::fs::read_to_string(suite.repo.join(".gitignore")).unwrap(),
        "target/\n*.log\n.candor/\n"
    );
    assert!(
        ran.stdout.contains("added .candor/ to .gitignore"),
        "{ran:?}"
    );
    // The pointer is to help that exists wherever candor is installed, not to a path of
    // candor's own repository alone.
    assert!(ran.stdout.contains("`candor help`"), "{ran:?}");
    assert!(!ran.stdout.contains("see docs/"), "{ran:?}");
    let toml = std::fs::read_to_string(suite.repo.join("candor.toml")).unwrap();
    assert!(!toml.contains("# Reference: docs/"), "{toml}");

    let again = suite.candor(&["init", "--force", "--format", "json"], &[]);
    assert_eq!(again.exit, 0, "{again:?}");
    assert_eq!(again.lines_of("init")[0]["gitignore"], "present");
    assert_eq!(
        std::fs::read_to_string(suite.repo.join(".gitignore")).unwrap(),
        "target/\n*.log\n.candor/\n",
        "idempotent"
    );
}

#[test]
fn init_counts_only_a_line_that_ignores_the_whole_folder() {
    let suite = empty();
    suite.write(".gitignore", "/.candor\n");
    let ran = suite.candor(&["init", "--format", "json"], &[]);
    assert_eq!(ran.lines_of("init")[0]["gitignore"], "present", "{ran:?}");
    let suite = empty();
    // Ignoring the logs alone leaves the history to be committed.
    suite.write(".gitignore", ".candor/runs/\n# .candor/\n");
    let ran = suite.candor(&["init", "--format", "json"], &[]);
    assert_eq!(ran.lines_of("init")[0]["gitignore"], "added", "{ran:?}");
    assert_eq!(
        std::fs::read_to_string(suite.repo.join(".gitignore")).unwrap(),
        ".candor/runs/\n# .candor/\n.candor/\n"
    );
}

#[test]
fn clean_removes_what_the_retention_rule_lets_go_and_dry_run_nothing() {
    let suite = empty();
    suite.write("candor.toml", "[runs]\nkeep_last = 2\nkeep_days = 14\n");
    run_folder(&suite, "test-old001", 40);
    run_folder(&suite, "gate-old002", 30);
    run_folder(&suite, "test-old003", 20);
    run_folder(&suite, "test-new004", 3);
    run_folder(&suite, "rerun-new05", 1);
    suite.write(".candor/history.db.keep", "not a run folder\n");

    let dry = suite.candor(&["clean", "--dry-run"], &[]);
    assert_eq!(dry.exit, 0, "{dry:?}");
    assert_eq!(runs(&suite).len(), 5, "a dry run removes nothing");
    for name in ["gate-old002", "test-old001", "test-old003"] {
        assert!(
            dry.stdout
                .contains(&format!("would remove .candor/runs/{name}")),
            "{dry:?}"
        );
    }
    assert!(
        dry.stdout.contains("would remove 3 run folder(s)") && dry.stdout.contains("kept 2"),
        "{dry:?}"
    );

    let ran = suite.candor(&["clean", "--format", "json"], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    let line = &ran.lines_of("clean")[0];
    assert_eq!(line["dry_run"], false);
    assert_eq!(line["kept"], 2);
    assert_eq!(line["removed"].as_array().map(Vec::len), Some(3), "{line}");
    assert_eq!(runs(&suite), ["rerun-new05", "test-new004"]);
    assert!(suite.repo.join(".candor/history.db.keep").exists());

    let all = suite.candor(&["clean", "--all"], &[]);
    assert_eq!(all.exit, 0, "{all:?}");
    assert!(runs(&suite).is_empty());
}

#[test]
fn clean_never_removes_through_a_symlink() {
    let suite = empty();
    let outside = suite.temp.path().join("outside");
    std::fs::create_dir_all(outside.join("keep-me")).unwrap();
    std::fs::write(outside.join("keep-me/data"), "precious\n").unwrap();
    // A symlinked entry inside runs is not a run folder.
    std::fs::create_dir_all(suite.repo.join(".candor/runs")).unwrap();
    std::os::unix::fs::symlink(&outside, suite.repo.join(".candor/runs/test-link01")).unwrap();
    let ran = suite.candor(&["clean", "--all"], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert!(outside.join("keep-me/data").exists());
    assert!(
        suite
            .repo
            .join(".candor/runs/test-link01")
            .symlink_metadata()
            .is_ok()
    );

    // `.candor/runs` itself a symlink: refused, exit 2, nothing removed.
    std::fs::remove_dir_all(suite.repo.join(".candor")).unwrap();
    std::fs::create_dir_all(suite.repo.join(".candor")).unwrap();
    std::os::unix::fs::symlink(&outside, suite.repo.join(".candor/runs")).unwrap();
    let ran = suite.candor(&["clean", "--all"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(
        ran.stderr.contains(".candor/runs is a symlink") && ran.stderr.contains("hint:"),
        "{ran:?}"
    );
    assert!(outside.join("keep-me/data").exists());
}

#[test]
fn a_command_that_makes_a_run_folder_applies_the_retention_rule() {
    let suite = empty();
    suite.write("candor.toml", "[runs]\nkeep_last = 1\nkeep_days = 7\n");
    suite.write(
        "pyproject.toml",
        "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
    );
    suite.write("tests/test_a.py", "def test_a():\n    assert True\n");
    suite.write(".gitignore", ".candor/\n__pycache__/\n");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", "a suite"]);
    run_folder(&suite, "test-old001", 30);
    run_folder(&suite, "test-old002", 20);
    let ran = suite.candor(&["test"], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    let left = runs(&suite);
    // The newer old one is the newest kept before the new one was made.
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left.contains(&"test-old002".to_owned()), "{left:?}");
    assert!(!left.contains(&"test-old001".to_owned()), "{left:?}");
}

#[test]
fn show_says_when_it_stopped_at_its_limit() {
    let suite = empty();
    let mut files = Vec::new();
    for n in 1..=21 {
        let name = format!("r{n:02}.xml");
        suite.write(
            &name,
            &format!(
                "<testsuite name=\"s\" tests=\"1\"><testcase classname=\"tests.test_a\" name=\"test_a\" file=\"tests/test_a.py\" time=\"0.{n:02}\"/></testsuite>\n"
            ),
        );
        files.push(name);
    }
    let mut args = vec!["ingest"];
    args.extend(files.iter().map(String::as_str));
    let ingested = suite.candor(&args, &[]);
    assert_eq!(ingested.exit, 0, "{ingested:?}");
    let shown = suite.candor(&["show", "tests/test_a.py::test_a"], &[]);
    assert_eq!(shown.exit, 0, "{shown:?}");
    assert_eq!(shown.stdout.lines().count(), 1 + 20 + 1, "{shown:?}");
    assert!(
        shown.stdout.ends_with(
            "stopped at the newest 20: the history holds more; `--limit 40` shows more\n"
        ),
        "{shown:?}"
    );
    let all = suite.candor(&["show", "tests/test_a.py::test_a", "--limit", "21"], &[]);
    assert!(!all.stdout.contains("stopped at"), "{all:?}");
    assert_eq!(all.stdout.lines().count(), 1 + 21);
    // JSON lines are the executions and nothing else.
    let json = suite.candor(
        &["show", "tests/test_a.py::test_a", "--format", "json"],
        &[],
    );
    assert_eq!(json.lines_of("execution").len(), 20);
    assert_eq!(json.json().len(), 20);
}

#[test]
fn listings_are_whole_when_stdout_is_not_a_terminal() {
    let suite = empty();
    let mut cases = String::new();
    for n in 0..30 {
        use std::fmt::Write as _;
        let _ = write!(
            cases,
            "<testcase classname=\"tests.test_a\" name=\"test_{n:02}\" file=\"tests/test_a.py\" time=\"0.1\"/>"
        );
    }
    suite.write(
        "r.xml",
        &format!("<testsuite name=\"s\" tests=\"30\">{cases}</testsuite>\n"),
    );
    assert_eq!(suite.candor(&["ingest", "r.xml"], &[]).exit, 0);
    let ran = suite.candor(&["reliability"], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    let rows = ran
        .stdout
        .lines()
        .filter(|line| line.contains("tests/test_a.py::test_"))
        .count();
    assert_eq!(rows, 30, "{ran:?}");
    assert!(!ran.stdout.contains("--full lists them all"), "{ran:?}");
}
