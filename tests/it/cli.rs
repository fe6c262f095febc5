//! The `candor` binary end to end: each test runs the real binary in its own temp dir with
//! its own history and an environment cleared of the host's (so CI=true on the host changes
//! nothing), and snapshots exit code, stdout and stderr with paths, shas and times redacted.

use crate::proptest_support::proptest_config;
use crate::triage_support;

use crate::corpus_support;

use corpus_support::corpus;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use candor::env_vars::EnvVars;
use proptest::prelude::*;
use triage_support::git;

/// A temp dir to run candor in, with its own history.
struct Sandbox {
    dir: tempfile::TempDir,
}

/// What one candor invocation did.
#[derive(Debug)]
struct Ran {
    exit: i32,
    stdout: String,
    stderr: String,
}

impl Sandbox {
    fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn db(&self) -> PathBuf {
        self.path().join("history.db")
    }

    /// Writes `content` to `name` under the sandbox and returns the relative name.
    fn write(&self, name: &str, content: &str) -> String {
        let path = self.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&path, content).expect("write");
        name.to_owned()
    }

    /// candor in the sandbox with the sandbox's history and a clean environment.
    fn candor(&self, args: &[&str]) -> Command {
        let mut command = self.bare_candor(args);
        command.env(EnvVars::CANDOR_DB, self.db());
        command
    }

    /// candor in the sandbox with a clean environment and no history chosen.
    fn bare_candor(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_candor"));
        command
            .args(args)
            .current_dir(self.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.path())
            .env("TZ", "UTC")
            .stdin(Stdio::null());
        command
    }

    fn run(&self, args: &[&str]) -> Ran {
        run(&mut self.candor(args))
    }

    fn run_with(&self, args: &[&str], vars: &[(&str, &str)]) -> Ran {
        let mut command = self.candor(args);
        command.envs(vars.iter().copied());
        run(&mut command)
    }

    /// Redacts what changes from run to run and snapshots `ran`.
    fn snapshot(&self, name: &str, ran: &Ran) {
        let mut filters: Vec<(String, &str)> = Vec::new();
        for path in [
            self.path().to_path_buf(),
            self.path().canonicalize().expect("temp dir exists"),
        ] {
            filters.push((regex_escape(&path.display().to_string()), "[TEMP]"));
        }
        filters.extend([
            (r"\b[0-9a-f]{64}\b".to_owned(), "[SIGNATURE]"),
            (r"\b[0-9a-f]{40}\b".to_owned(), "[SHA]"),
            (r"\bHEAD [0-9a-f]{12}\b".to_owned(), "HEAD [SHORT-SHA]"),
            (
                r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z".to_owned(),
                "[TIMESTAMP]",
            ),
            // Same width as the text it replaces, so redacted tables stay aligned.
            (
                r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}".to_owned(),
                "YYYY-MM-DD HH:MM",
            ),
        ]);
        let filters: Vec<(&str, &str)> = filters.iter().map(|(a, b)| (a.as_str(), *b)).collect();
        insta::with_settings!({ filters => filters }, {
            insta::assert_snapshot!(name, ran.render());
        });
    }
}

impl Ran {
    /// Exit code, stdout and stderr as one readable text for a snapshot.
    fn render(&self) -> String {
        format!(
            "exit: {}\n--- stdout\n{}--- stderr\n{}",
            self.exit, self.stdout, self.stderr
        )
    }
}

fn run(command: &mut Command) -> Ran {
    let output = command.output().expect("candor runs");
    Ran {
        exit: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(output.stderr).expect("utf-8 stderr"),
    }
}

fn regex_escape(text: &str) -> String {
    let mut escaped = String::new();
    for c in text.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

fn json_lines(stdout: &str) -> Vec<serde_json::Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is JSON"))
        .collect()
}

/// A pytest JUnit file: `failing` fails with a timeout, the others pass.
fn pytest_junit(failing: &[&str], passing: &[&str]) -> String {
    let mut cases = String::new();
    for name in failing {
        let _ = write!(
            cases,
            r#"    <testcase classname="tests.test_pay" name="{name}" file="tests/test_pay.py" time="1.250">
      <failure message="TimeoutError: Timed out after 2.0s waiting on port 50412">def {name}():
&gt;       wait()

tests/test_pay.py:14: TimeoutError</failure>
    </testcase>
"#
        );
    }
    for name in passing {
        let _ = writeln!(
            cases,
            "    <testcase classname=\"tests.test_pay\" name=\"{name}\" file=\"tests/test_pay.py\" time=\"0.010\"/>"
        );
    }
    format!(
        r#"<?xml version="1.0" encoding="utf-8"?>
<testsuites>
  <testsuite name="pytest" tests="{}" failures="{}">
{cases}  </testsuite>
</testsuites>
"#,
        failing.len() + passing.len(),
        failing.len()
    )
}

const COMMIT_1: &str = "1111111111111111111111111111111111111111";
const COMMIT_2: &str = "2222222222222222222222222222222222222222";

#[test]
fn help_names_the_commands() {
    let sandbox = Sandbox::new();
    let ran = run(&mut sandbox.bare_candor(&["--help"]));
    sandbox.snapshot("help", &ran);
}

#[test]
fn usage_errors_exit_2() {
    let sandbox = Sandbox::new();
    let run_bare = |args: &[&str]| run(&mut sandbox.bare_candor(args));
    sandbox.snapshot("usage_no_paths", &run_bare(&["ingest"]));
    sandbox.snapshot("usage_unknown_command", &run_bare(&["frobnicate"]));
    sandbox.snapshot(
        "usage_bad_commit",
        &run_bare(&["ingest", "x.xml", "--commit", "HEAD~1"]),
    );
    sandbox.snapshot(
        "usage_bad_format",
        &run_bare(&["tests", "--format", "yaml"]),
    );
}

#[test]
fn reading_a_missing_history_says_how_to_start() {
    let sandbox = Sandbox::new();
    let ran = sandbox.run(&["tests"]);
    sandbox.snapshot("tests_no_history", &ran);
    assert!(!sandbox.db().exists(), "reading must not create a history");
}

#[test]
fn ingest_tests_and_show_for_people() {
    let sandbox = Sandbox::new();
    let first = sandbox.write(
        "reports/run-1.xml",
        &pytest_junit(&["test_refund"], &["test_charge", "test_void"]),
    );
    let second = sandbox.write(
        "reports/run-2.xml",
        &pytest_junit(&["test_void"], &["test_refund", "test_charge"]),
    );
    let ingest_first = sandbox.run(&[
        "ingest", &first, "--commit", COMMIT_1, "--branch", "main", "--source", "ci",
    ]);
    sandbox.snapshot("human_ingest_first", &ingest_first);
    let ingest_second = sandbox.run(&[
        "ingest", &second, "--commit", COMMIT_2, "--branch", "main", "--source", "local",
    ]);
    sandbox.snapshot("human_ingest_second", &ingest_second);
    sandbox.snapshot("human_tests", &sandbox.run(&["tests"]));
    sandbox.snapshot("human_tests_failing", &sandbox.run(&["tests", "--failing"]));
    sandbox.snapshot(
        "human_show",
        &sandbox.run(&["show", "tests/test_pay.py::test_refund"]),
    );
}

#[test]
fn ingest_tests_and_show_as_json_lines() {
    let sandbox = Sandbox::new();
    let first = sandbox.write(
        "run-1.xml",
        &pytest_junit(&["test_refund"], &["test_charge"]),
    );
    let ingest = sandbox.run(&[
        "--format",
        "json",
        "ingest",
        &first,
        "--commit",
        COMMIT_1,
        "--branch",
        "main",
        "--job",
        "unit",
        "--workers",
        "4",
        "--seed",
        "rs=118204",
    ]);
    sandbox.snapshot("json_ingest", &ingest);
    let lines = json_lines(&ingest.stdout);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["type"], "ingest");
    assert_eq!(lines[0]["status"], "stored");
    assert_eq!(lines[1]["type"], "summary");

    let tests = sandbox.run(&["tests", "--format", "json"]);
    sandbox.snapshot("json_tests", &tests);
    let show = sandbox.run(&["show", "tests/test_pay.py::test_refund", "--format", "json"]);
    sandbox.snapshot("json_show", &show);
    for line in json_lines(&tests.stdout)
        .iter()
        .chain(&json_lines(&show.stdout))
    {
        assert_eq!(line["v"], 1, "{line}");
    }
    assert_eq!(json_lines(&show.stdout)[0]["commit"], COMMIT_1);
}

#[test]
fn the_same_file_twice_is_stored_once() {
    let sandbox = Sandbox::new();
    let file = sandbox.write("r.xml", &pytest_junit(&[], &["test_a"]));
    let args = [
        "ingest",
        file.as_str(),
        "--commit",
        COMMIT_1,
        "--branch",
        "main",
    ];
    assert_eq!(sandbox.run(&args).exit, 0);
    let again = sandbox.run(&args);
    sandbox.snapshot("ingest_again", &again);
    let tests = json_lines(&sandbox.run(&["tests", "--format", "json"]).stdout);
    assert_eq!(tests[0]["runs"], 1);
}

#[test]
fn a_bad_file_is_reported_and_the_others_still_ingest() {
    let sandbox = Sandbox::new();
    let good = sandbox.write("a-good.xml", &pytest_junit(&[], &["test_a"]));
    let truncated = pytest_junit(&["test_b"], &[]);
    let bad = sandbox.write("b-bad.xml", &truncated[..truncated.len() / 2]);
    let not_results = sandbox.write("c-mocha.json", "{\"stats\": {\"tests\": 1}}\n");
    let also_good = sandbox.write("d-good.xml", &pytest_junit(&["test_c"], &[]));
    let ran = sandbox.run(&[
        "ingest",
        &good,
        &bad,
        &not_results,
        &also_good,
        "--commit",
        COMMIT_1,
    ]);
    sandbox.snapshot("ingest_bad_files", &ran);
    assert_eq!(ran.exit, 2);
    let json = sandbox.run(&[
        "ingest", &good, &bad, "--commit", COMMIT_2, "--format", "json",
    ]);
    sandbox.snapshot("ingest_bad_files_json", &json);
    let stored = json_lines(&sandbox.run(&["tests", "--format", "json"]).stdout);
    let ids: Vec<&str> = stored.iter().filter_map(|t| t["id"].as_str()).collect();
    assert_eq!(
        ids,
        ["tests/test_pay.py::test_a", "tests/test_pay.py::test_c"]
    );
}

#[test]
fn a_missing_input_is_an_error() {
    let sandbox = Sandbox::new();
    let ran = sandbox.run(&["ingest", "nowhere.xml"]);
    sandbox.snapshot("ingest_missing_input", &ran);
    assert_eq!(ran.exit, 2);
}

#[test]
fn quiet_keeps_errors_only() {
    let sandbox = Sandbox::new();
    let good = sandbox.write("good.xml", &pytest_junit(&[], &["test_a"]));
    let ran = sandbox.run(&["-q", "ingest", &good]);
    assert_eq!(
        (ran.exit, ran.stdout.as_str(), ran.stderr.as_str()),
        (0, "", "")
    );
}

#[test]
fn an_unknown_test_names_the_closest_ids() {
    let sandbox = Sandbox::new();
    let file = sandbox.write(
        "r.xml",
        &pytest_junit(&[], &["test_refund", "test_refund_partial", "test_charge"]),
    );
    assert_eq!(sandbox.run(&["ingest", &file]).exit, 0);
    sandbox.snapshot(
        "show_unknown_bare_name",
        &sandbox.run(&["show", "test_refund"]),
    );
    sandbox.snapshot(
        "show_unknown_typo",
        &sandbox.run(&["show", "tests/test_pay.py::test_chrage"]),
    );
    sandbox.snapshot("show_unknown_nothing_close", &sandbox.run(&["show", "zzz"]));
}

#[test]
fn commit_and_branch_default_from_git_and_the_history_lives_at_the_repo_root() {
    let sandbox = Sandbox::new();
    let repo = sandbox.path();
    git(repo, &["init", "--quiet", "-b", "main"]);
    git(repo, &["commit", "--quiet", "--allow-empty", "-m", "base"]);
    let base = git(repo, &["rev-parse", "HEAD"]);
    git(repo, &["checkout", "--quiet", "-b", "feature/pay"]);
    git(repo, &["commit", "--quiet", "--allow-empty", "-m", "tip"]);
    let head = git(repo, &["rev-parse", "HEAD"]);
    sandbox.write("sub/dir/r.xml", &pytest_junit(&[], &["test_a"]));
    // A hook would run candor with GIT_DIR pointing at another repository.
    let elsewhere = tempfile::tempdir().expect("temp dir");
    git(elsewhere.path(), &["init", "--quiet", "-b", "other"]);

    let mut command = sandbox.bare_candor(&["ingest", "r.xml"]);
    command
        .current_dir(repo.join("sub/dir"))
        .env("GIT_DIR", elsewhere.path().join(".git"));
    let ran = run(&mut command);
    sandbox.snapshot("ingest_in_git_repo", &ran);
    assert!(repo.join(".candor/history.db").is_file());

    let mut show = sandbox.bare_candor(&["show", "tests/test_pay.py::test_a", "--format", "json"]);
    show.current_dir(repo.join("sub"));
    let lines = json_lines(&run(&mut show).stdout);
    assert_eq!(lines[0]["commit"], head.as_str());
    assert_eq!(lines[0]["branch"], "feature/pay");
    assert_eq!(lines[0]["source"], "local");

    // The checked-out branch is recorded for HEAD (even abbreviated, which is stored as
    // the full sha), not for another commit given explicitly.
    for commit in [&head[..10], base.as_str()] {
        let name = format!("r-{commit}.xml");
        sandbox.write(&name, &pytest_junit(&[], &["test_b"]));
        let mut command = sandbox.bare_candor(&["ingest", &name, "--commit", commit]);
        assert_eq!(run(&mut command).exit, 0);
    }
    let mut show = sandbox.bare_candor(&["show", "tests/test_pay.py::test_b", "--format", "json"]);
    let lines = json_lines(&run(&mut show).stdout);
    let recorded: Vec<(&str, &str)> = lines
        .iter()
        .map(|l| {
            (
                l["commit"].as_str().unwrap_or(""),
                l["branch"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert!(
        recorded.contains(&(head.as_str(), "feature/pay")),
        "{recorded:?}"
    );
    assert!(recorded.contains(&(base.as_str(), "")), "{recorded:?}");
}

#[test]
fn ci_variables_win_over_git_and_make_the_source_ci() {
    let sandbox = Sandbox::new();
    let repo = sandbox.path();
    git(repo, &["init", "--quiet", "-b", "main"]);
    git(repo, &["commit", "--quiet", "--allow-empty", "-m", "base"]);
    let file = sandbox.write("r.xml", &pytest_junit(&[], &["test_a"]));
    let ran = sandbox.run_with(
        &["ingest", &file],
        &[
            ("GITLAB_CI", "true"),
            ("CI", "true"),
            ("CI_COMMIT_SHA", COMMIT_2),
            ("CI_COMMIT_BRANCH", "release"),
            ("CI_JOB_NAME", "pytest 1/3"),
        ],
    );
    assert_eq!(ran.exit, 0, "{ran:?}");
    let show = sandbox.run(&["show", "tests/test_pay.py::test_a", "--format", "json"]);
    let line = &json_lines(&show.stdout)[0];
    assert_eq!(line["commit"], COMMIT_2);
    assert_eq!(line["branch"], "release");
    assert_eq!(line["source"], "ci");

    let generic = sandbox.write("r2.xml", &pytest_junit(&[], &["test_b"]));
    assert_eq!(
        sandbox.run_with(&["ingest", &generic], &[("CI", "1")]).exit,
        0
    );
    let show = sandbox.run(&["show", "tests/test_pay.py::test_b", "--format", "json"]);
    assert_eq!(json_lines(&show.stdout)[0]["source"], "ci");
}

#[test]
fn a_closed_stdout_is_success() {
    let sandbox = Sandbox::new();
    let names: Vec<String> = (0..5000)
        .map(|i| format!("test_case_number_{i:05}"))
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let file = sandbox.write("big.xml", &pytest_junit(&[], &names));
    assert_eq!(sandbox.run(&["ingest", &file]).exit, 0);

    for format in ["human", "json"] {
        let mut child = sandbox
            .candor(&["tests", "--format", format])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("candor starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut first = String::new();
        BufReader::new(stdout)
            .read_line(&mut first)
            .expect("one line");
        assert!(!first.is_empty());
        // The reader goes away, as `head -1` does, with most of the output unwritten.
        let output = child.wait_with_output().expect("candor ends");
        assert_eq!(output.status.code(), Some(0), "{format}: {output:?}");
        assert_eq!(String::from_utf8_lossy(&output.stderr), "", "{format}");
    }
}

#[test]
fn color_follows_the_flag_and_no_color() {
    let sandbox = Sandbox::new();
    let file = sandbox.write("r.xml", &pytest_junit(&["test_b"], &["test_a"]));
    assert_eq!(sandbox.run(&["ingest", &file]).exit, 0);
    let always = sandbox.run(&["tests", "--color", "always"]);
    assert!(always.stdout.contains("\x1b["), "{always:?}");
    let never = sandbox.run(&["tests", "--color", "never"]);
    assert!(!never.stdout.contains('\x1b'), "{never:?}");
    // Not a terminal, so auto is plain even without NO_COLOR.
    let auto = sandbox.run(&["tests"]);
    assert!(!auto.stdout.contains('\x1b'), "{auto:?}");
    let json = sandbox.run(&["tests", "--color", "always", "--format", "json"]);
    assert!(!json.stdout.contains('\x1b'), "{json:?}");
}

#[test]
fn terminal_escapes_in_result_files_are_not_passed_to_people() {
    let sandbox = Sandbox::new();
    let hostile = pytest_junit(&["test_x"], &[]).replace(
        "Timed out after 2.0s",
        "Timed out &#x1b;[2J&#x1b;]0;pwned&#x07; after",
    );
    let file = sandbox.write("r.xml", &hostile);
    assert_eq!(sandbox.run(&["ingest", &file]).exit, 0);
    let show = sandbox.run(&["show", "tests/test_pay.py::test_x"]);
    assert_eq!(show.exit, 0, "{show:?}");
    assert!(!show.stdout.contains('\x1b'), "{show:?}");
    assert!(!show.stdout.contains('\x07'), "{show:?}");
}

#[test]
fn corpus_files_ingest_and_list() {
    if !corpus_support::present("corpus_files_ingest_and_list") {
        return;
    }
    let corpus = corpus();
    let sandbox = Sandbox::new();
    let mut names = Vec::new();
    for relative in [
        "junit/dorny__python-xunit-pytest.xml",
        "go-test-json/gojunitreport__101-fail.gojson.jsonl",
    ] {
        let source = corpus.join(relative);
        let text = std::fs::read_to_string(&source)
            .unwrap_or_else(|e| panic!("corpus file {}: {e}", source.display()));
        names.push(sandbox.write(relative, &text));
    }
    let mut args = vec!["ingest", "--commit", COMMIT_1];
    args.extend(names.iter().map(String::as_str));
    sandbox.snapshot("corpus_ingest", &sandbox.run(&args));
    sandbox.snapshot(
        "corpus_tests_failing",
        &sandbox.run(&["tests", "--failing"]),
    );
    sandbox.snapshot(
        "corpus_show",
        &sandbox.run(&["show", "tests/test_lib.py::test_always_fail"]),
    );

    // Again as JSON for another commit: every file stored anew, none empty.
    args[2] = COMMIT_2;
    args.insert(0, "--format=json");
    let ran = sandbox.run(&args);
    assert_eq!(ran.exit, 0, "{ran:?}");
    let lines = json_lines(&ran.stdout);
    assert_eq!(lines.len(), names.len() + 1);
    for line in &lines[..names.len()] {
        assert_eq!(line["status"], "stored", "{line}");
        assert!(line["tests"].as_u64().is_some_and(|n| n > 0), "{line}");
    }
}

proptest! {
    #![proptest_config(proptest_config(24))]

    /// Whatever the bytes, ingest answers with 0 or 2 and an explanation, never a panic
    /// (which exits 101).
    #[test]
    fn ingest_never_panics_on_arbitrary_bytes(
        bytes in prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..256),
            "<testsuite>(<testcase name=\"[a-z]{1,4}\"( time=\"-?[0-9.e]{0,6}\")?>){0,3}".prop_map(String::into_bytes),
            "\\{\"type\":\"(test|suite)\",\"event\":\"[a-z]{0,6}\"(,\"name\":\"[a-z:$]{0,8}\")?\\}\n{0,2}".prop_map(String::into_bytes),
        ]
    ) {
        let sandbox = Sandbox::new();
        let path = sandbox.path().join("input");
        std::fs::File::create(&path)
            .and_then(|mut f| f.write_all(&bytes))
            .expect("write input");
        let ran = sandbox.run(&["ingest", "input"]);
        prop_assert!(ran.exit == 0 || ran.exit == 2, "{ran:?}");
        if ran.exit == 2 {
            prop_assert!(ran.stderr.starts_with("error: "), "{ran:?}");
        }
    }
}

/// A pytest JUnit report with one passing and one failing test, stamped at `hour`.
fn two_test_report(hour: u32, second_fails: bool) -> String {
    let failure = if second_fails {
        r#"<failure message="AssertionError: boom">tests/test_a.py:3: AssertionError</failure>"#
    } else {
        ""
    };
    format!(
        r#"<testsuites><testsuite name="pytest" timestamp="2026-10-01T{hour:02}:00:00">
<testcase classname="tests.test_a" name="test_steady" time="0.1"/>
<testcase classname="tests.test_a" name="test_shaky" time="0.1">{failure}</testcase>
</testsuite></testsuites>"#
    )
}

#[test]
fn reliability_writes_tiers_and_tests_filters_by_them() {
    let sandbox = Sandbox::new();
    for hour in 0..22 {
        let name = sandbox.write(
            &format!("r{hour}.xml"),
            &two_test_report(hour, hour % 3 == 0),
        );
        assert_eq!(sandbox.run(&["ingest", &name]).exit, 0);
    }
    // First evaluation: everyone enters at the default tier; nothing written without --write.
    let dry = sandbox.run(&["reliability"]);
    sandbox.snapshot("reliability_dry_run", &dry);
    assert!(!sandbox.path().join(".ci/test-reliability.yaml").exists());

    assert_eq!(sandbox.run(&["reliability", "--write"]).exit, 0);
    // Second evaluation: the shaky test has 22 runs, a third of them red: quarantined.
    let second = sandbox.run(&["--format", "json", "reliability", "--write"]);
    assert_eq!(second.exit, 0, "{}", second.stderr);
    assert!(second.stdout.contains(r#""test":"tests/test_a.py::test_shaky","tier":"quarantined","previous_tier":"probation","change":"dropped""#), "{}", second.stdout);
    let file = std::fs::read_to_string(sandbox.path().join(".ci/test-reliability.yaml")).unwrap();
    sandbox.snapshot(
        "reliability_file",
        &Ran {
            exit: 0,
            stdout: file.clone(),
            stderr: String::new(),
        },
    );

    let quarantined = sandbox.run(&["tests", "--tier", "quarantined"]);
    assert_eq!(quarantined.exit, 0);
    assert!(
        quarantined.stdout.contains("test_shaky") && !quarantined.stdout.contains("test_steady"),
        "{}",
        quarantined.stdout
    );
    let unlisted = sandbox.run(&["tests", "--tier", "unlisted"]);
    assert!(
        unlisted.stdout.contains("no test in the history matches"),
        "{}",
        unlisted.stdout
    );

    // A human edits the owner; the next write keeps it and the bytes are otherwise stable.
    let edited = file.replace(
        "  - id: tests/test_a.py::test_shaky\n    tier: quarantined\n",
        "  - id: tests/test_a.py::test_shaky\n    tier: quarantined\n    owner: '@platform'\n",
    );
    std::fs::write(sandbox.path().join(".ci/test-reliability.yaml"), &edited).unwrap();
    assert_eq!(sandbox.run(&["reliability", "--write"]).exit, 0);
    let again = std::fs::read_to_string(sandbox.path().join(".ci/test-reliability.yaml")).unwrap();
    assert!(again.contains("    owner: '@platform'\n"), "{again}");
    assert_eq!(sandbox.run(&["reliability", "--write"]).exit, 0);
    assert_eq!(
        std::fs::read_to_string(sandbox.path().join(".ci/test-reliability.yaml")).unwrap(),
        again
    );
}

#[test]
fn broken_policy_or_reliability_files_exit_2_and_stay_untouched() {
    let sandbox = Sandbox::new();
    let name = sandbox.write("r.xml", &two_test_report(1, false));
    assert_eq!(sandbox.run(&["ingest", &name]).exit, 0);

    let broken = "tests:\n  - id: tests/test_a.py::test_steady\n    tier: gold\n";
    sandbox.write(".ci/test-reliability.yaml", broken);
    let ran = sandbox.run(&["reliability", "--write"]);
    sandbox.snapshot("reliability_unknown_tier", &ran);
    assert_eq!(ran.exit, 2);
    assert_eq!(
        std::fs::read_to_string(sandbox.path().join(".ci/test-reliability.yaml")).unwrap(),
        broken
    );

    let negative =
        "tests:\n  - id: tests/test_a.py::test_steady\n    tier: trusted\n    runs: -4\n";
    sandbox.write(".ci/test-reliability.yaml", negative);
    let ran = sandbox.run(&["reliability", "--write"]);
    assert_eq!(ran.exit, 2);
    assert!(
        ran.stderr.contains("test-reliability.yaml:4:"),
        "{}",
        ran.stderr
    );

    std::fs::remove_file(sandbox.path().join(".ci/test-reliability.yaml")).unwrap();
    sandbox.write(
        "candor.toml",
        "[reliability]\nwindow_runs = 100\nflake_budget = 1.5\n",
    );
    let ran = sandbox.run(&["reliability", "--write"]);
    sandbox.snapshot("reliability_budget_out_of_range", &ran);
    assert_eq!(ran.exit, 2);
    assert!(!sandbox.path().join(".ci/test-reliability.yaml").exists());

    sandbox.write(
        "candor.toml",
        "[reliability]\nwindow_runs = 100\n\n[reliabilty]\n",
    );
    let ran = sandbox.run(&["tests"]);
    assert_eq!(ran.exit, 2);
    assert!(
        ran.stderr.contains("candor.toml:4:") && ran.stderr.contains("reliabilty"),
        "{}",
        ran.stderr
    );
}

#[test]
fn init_writes_the_default_once() {
    let sandbox = Sandbox::new();
    let ran = sandbox.run(&["init"]);
    assert_eq!(ran.exit, 0, "{}", ran.stderr);
    let written = std::fs::read_to_string(sandbox.path().join("candor.toml")).unwrap();
    assert_eq!(written, candor::policy::config::DEFAULT_CONFIG);
    let printed = sandbox.run(&["init", "--print"]);
    assert_eq!(printed.stdout, written);
    std::fs::write(sandbox.path().join("candor.toml"), "# mine\n").unwrap();
    let again = sandbox.run(&["init"]);
    sandbox.snapshot("init_refuses_to_overwrite", &again);
    assert_eq!(again.exit, 2);
    assert_eq!(
        std::fs::read_to_string(sandbox.path().join("candor.toml")).unwrap(),
        "# mine\n"
    );
    assert_eq!(sandbox.run(&["init", "--force"]).exit, 0);
    assert_eq!(
        std::fs::read_to_string(sandbox.path().join("candor.toml")).unwrap(),
        written
    );
}
