//! `candor ingest` says what it assumed (issue #12 item 7): the commit it stamped a file
//! with when none was given, a warning when the file was written before that commit was
//! made, and one run for one content whatever the file is called.

use crate::triage_support;

use std::time::{Duration, SystemTime};

use triage_support::{Suite, empty, git};

/// A JUnit file whose own timestamp, when it has one, is `timestamp`.
fn junit(timestamp: Option<&str>, test: &str) -> String {
    let stamp = timestamp.map_or(String::new(), |at| format!(" timestamp=\"{at}\""));
    format!(
        "<testsuites><testsuite name=\"s\"{stamp}><testcase classname=\"a.B\" name=\"{test}\"/></testsuite></testsuites>\n"
    )
}

/// A git repository with one commit, made now; returns its sha.
fn repository() -> (Suite, String) {
    let suite = empty();
    suite.write("README", "a repository\n");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", "one"]);
    let head = git(&suite.repo, &["rev-parse", "HEAD"]);
    (suite, head)
}

/// Writes `content` to `<temp>/name` with modification time `modified`; returns its path.
fn report(suite: &Suite, name: &str, content: &str, modified: SystemTime) -> String {
    let path = suite.temp.path().join(name);
    std::fs::write(&path, content).expect("the report");
    std::fs::File::options()
        .write(true)
        .open(&path)
        .and_then(|file| file.set_modified(modified))
        .expect("set the modification time");
    path.display().to_string()
}

fn hours_ago(hours: u64) -> SystemTime {
    SystemTime::now() - Duration::from_secs(hours * 3_600)
}

#[test]
fn a_commit_taken_from_head_is_said_and_an_older_file_is_warned_about() {
    let (suite, head) = repository();
    let old = report(&suite, "old.xml", &junit(None, "t1"), hours_ago(48));
    let ran = suite.candor(&["ingest", &old], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert!(
        ran.stdout.contains(&format!(
            "as run #1 for HEAD {} (no --commit given)",
            &head[..12]
        )),
        "{ran:?}"
    );
    assert!(
        ran.stderr
            .contains("(per its modification time), before HEAD")
            && ran.stderr.contains("pass --commit SHA"),
        "{ran:?}"
    );

    // JSON: the commit and where it came from, the warning among the file's warnings.
    let older = report(&suite, "older.xml", &junit(None, "t2"), hours_ago(72));
    let ran = suite.candor(&["ingest", &older, "--format", "json"], &[]);
    let line = &ran.lines_of("ingest")[0];
    assert_eq!(line["commit"], head.as_str(), "{ran:?}");
    assert_eq!(line["commit_from"], "head", "{ran:?}");
    assert!(
        line["warnings"].to_string().contains("before HEAD"),
        "{ran:?}"
    );

    // A file written after the commit: stamped, and nothing to warn about.
    let fresh = report(&suite, "fresh.xml", &junit(None, "t3"), SystemTime::now());
    let ran = suite.candor(&["ingest", &fresh, "--format", "json"], &[]);
    let line = &ran.lines_of("ingest")[0];
    assert_eq!(line["commit_from"], "head");
    assert_eq!(line["warnings"], serde_json::json!([]), "{ran:?}");

    // A commit given is the reader's own: not said, not second-guessed.
    let given = report(&suite, "given.xml", &junit(None, "t4"), hours_ago(48));
    let ran = suite.candor(&["ingest", &given, "--commit", &head], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert!(!ran.stdout.contains("for HEAD"), "{ran:?}");
    assert!(ran.stderr.is_empty(), "{ran:?}");
    let ran = suite.candor(
        &["ingest", &given, "--commit", &head, "--format", "json"],
        &[],
    );
    assert_eq!(ran.lines_of("ingest")[0]["commit_from"], "option");
}

/// The file's own timestamp counts when it states its zone; a zone-less local time
/// (pytest's older files, Surefire's) could be hours off and gives way to the file's
/// modification time.
#[test]
fn the_files_own_timestamp_counts_only_with_its_zone() {
    let (suite, _) = repository();
    let zoned = report(
        &suite,
        "zoned.xml",
        &junit(Some("2001-02-03T04:05:06+00:00"), "t1"),
        SystemTime::now(),
    );
    let ran = suite.candor(&["ingest", &zoned], &[]);
    assert!(
        ran.stderr
            .contains("written at 2001-02-03T04:05:06Z (per its own timestamp), before HEAD"),
        "{ran:?}"
    );
    let local = report(
        &suite,
        "local.xml",
        &junit(Some("2001-02-03T04:05:06"), "t2"),
        SystemTime::now(),
    );
    let ran = suite.candor(&["ingest", &local], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert!(ran.stderr.is_empty(), "{ran:?}");
}

/// The same bytes under two names are one run, in one command or in two; other bytes
/// are another run.
#[test]
fn the_same_content_under_two_names_is_one_run() {
    let (suite, _) = repository();
    let content = junit(None, "t1");
    let first = report(&suite, "first.xml", &content, SystemTime::now());
    let second = report(&suite, "renamed-copy.xml", &content, hours_ago(1));
    let ran = suite.candor(&["ingest", &first, &second, "--format", "json"], &[]);
    let lines = ran.lines_of("ingest");
    assert_eq!(lines[0]["status"], "stored", "{ran:?}");
    assert_eq!(lines[1]["status"], "already-stored", "{ran:?}");
    assert_eq!(lines[0]["run_id"], lines[1]["run_id"]);

    let third = report(&suite, "third.xml", &content, SystemTime::now());
    let ran = suite.candor(&["ingest", &third, "--format", "json"], &[]);
    assert_eq!(ran.lines_of("ingest")[0]["status"], "already-stored");

    let other = report(&suite, "other.xml", &junit(None, "t2"), SystemTime::now());
    let ran = suite.candor(&["ingest", &other, "--format", "json"], &[]);
    assert_eq!(ran.lines_of("ingest")[0]["status"], "stored", "{ran:?}");
    let listed = suite.candor(&["tests", "--format", "json"], &[]);
    let runs: Vec<u64> = listed
        .lines_of("test")
        .iter()
        .filter_map(|t| t["runs"].as_u64())
        .collect();
    assert_eq!(runs, [1, 1], "{listed:?}");
}

/// A `git` first on PATH that writes each of its command lines to `log`, then runs the
/// real one: what candor asked git, counted.
fn counting_git(suite: &Suite, log: &std::path::Path) -> String {
    use std::os::unix::fs::PermissionsExt as _;
    let folder = suite.temp.path().join("counting-git");
    std::fs::create_dir_all(&folder).expect("the wrapper's folder");
    let path = std::env::var("PATH").unwrap_or_default();
    let wrapper = folder.join("git");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nPATH='{path}' exec git \"$@\"\n",
            log.display()
        ),
    )
    .expect("the wrapper");
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755))
        .expect("make the wrapper executable");
    format!("{}:{path}", folder.display())
}

#[test]
fn outside_a_work_tree_git_is_asked_once() {
    let suite = empty();
    let log = suite.temp.path().join("git.log");
    let path = counting_git(&suite, &log);
    let file = report(&suite, "r.xml", &junit(None, "t1"), SystemTime::now());
    let ran = suite.candor(&["ingest", &file, "--format", "json"], &[("PATH", &path)]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    let line = &ran.lines_of("ingest")[0];
    assert!(line["commit"].is_null(), "{ran:?}");
    let asked = std::fs::read_to_string(&log).expect("git was asked");
    assert_eq!(asked, "rev-parse --show-toplevel\n", "{ran:?}");

    // In a repository the same ingest asks its questions (HEAD, the branch, …).
    let (repo_suite, head) = repository();
    let repo_log = repo_suite.temp.path().join("git.log");
    let repo_path = counting_git(&repo_suite, &repo_log);
    let file = report(&repo_suite, "r.xml", &junit(None, "t1"), SystemTime::now());
    let ran = repo_suite.candor(
        &["ingest", &file, "--format", "json"],
        &[("PATH", &repo_path)],
    );
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(
        ran.lines_of("ingest")[0]["commit"],
        head.as_str(),
        "{ran:?}"
    );
    let asked = std::fs::read_to_string(&repo_log).expect("git was asked");
    assert!(asked.lines().count() > 1, "{asked}");
    assert!(
        asked.contains("symbolic-ref --quiet --short HEAD"),
        "{asked}"
    );
}

/// An abbreviated `--commit` is stored as the full sha git resolves it to, so the same
/// file given the short and the full sha is one run; a short sha git does not know is
/// stored as given, with a warning that says what that costs.
#[test]
fn an_abbreviated_commit_is_stored_as_its_full_sha() {
    let (suite, head) = repository();
    let file = report(&suite, "r.xml", &junit(None, "t1"), SystemTime::now());
    let short = &head[..9];
    let ran = suite.candor(
        &["ingest", &file, "--commit", short, "--format", "json"],
        &[],
    );
    assert_eq!(ran.exit, 0, "{ran:?}");
    let line = &ran.lines_of("ingest")[0];
    assert_eq!(line["commit"], head.as_str(), "{ran:?}");
    assert_eq!(line["warnings"], serde_json::json!([]), "{ran:?}");

    let ran = suite.candor(&["ingest", &file, "--commit", &head], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert!(ran.stdout.contains("already stored"), "{ran:?}");

    // A branch named like a sha prefix is not that commit: git would answer with the
    // branch's commit, which the given digits do not begin.
    let first = git(&suite.repo, &["rev-parse", "HEAD"]);
    suite.write("more", "a second commit\n");
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", "two"]);
    let decoy = if first.starts_with("abcd") {
        "dcba1234"
    } else {
        "abcd1234"
    };
    git(&suite.repo, &["branch", decoy, &first]);
    let third = report(&suite, "third.xml", &junit(None, "t3"), SystemTime::now());
    let ran = suite.candor(
        &["ingest", &third, "--commit", decoy, "--format", "json"],
        &[],
    );
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(ran.lines_of("ingest")[0]["commit"], decoy, "{ran:?}");
    assert!(ran.stderr.contains("to no single commit"), "{ran:?}");

    let unknown = if short.starts_with('f') {
        "0000000"
    } else {
        "fffffff"
    };
    let other = report(&suite, "other.xml", &junit(None, "t2"), SystemTime::now());
    let ran = suite.candor(
        &["ingest", &other, "--commit", unknown, "--format", "json"],
        &[],
    );
    assert_eq!(ran.exit, 0, "{ran:?}");
    let line = &ran.lines_of("ingest")[0];
    assert_eq!(line["commit"], unknown, "{ran:?}");
    assert!(
        ran.stderr.contains(&format!(
            "git resolves --commit {unknown} to no single commit"
        )),
        "{ran:?}"
    );
}
