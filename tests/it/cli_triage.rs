//! `candor triage` end to end on small hand-written result files: from the history's
//! latest run, the output for people and for programs, and every input error exiting 2.

use crate::triage_support;

use std::fmt::Write as _;

use triage_support::{Suite, TODAY, empty, fingerprint, git};

const FLAKY: &str = "tests/test_pay.py::test_webhook";
const BROKEN: &str = "tests/test_pay.py::test_refund";

/// A pytest JUnit file: each failing test times out at `tests/test_pay.py:LINE`, or raises
/// another exception when its line is 0.
fn junit(failing: &[(&str, u32)], passing: &[&str]) -> String {
    let mut cases = String::new();
    for (name, line) in failing {
        let (kind, message, at) = if *line == 0 {
            ("KeyError", "'currency'", 31)
        } else {
            (
                "TimeoutError",
                "Timed out after 2.0s waiting on port 50412",
                *line,
            )
        };
        let _ = write!(
            cases,
            r#"    <testcase classname="tests.test_pay" name="{name}" file="tests/test_pay.py" time="1.250">
      <failure message="{kind}: {message}">def {name}():
&gt;       wait()

tests/test_pay.py:{at}: {kind}</failure>
    </testcase>
"#
        );
    }
    for name in passing {
        let _ = writeln!(
            cases,
            r#"    <testcase classname="tests.test_pay" name="{name}" file="tests/test_pay.py" time="0.010"/>"#
        );
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<testsuites>\n  <testsuite name=\"pytest\" tests=\"{}\" failures=\"{}\">\n{cases}  </testsuite>\n</testsuites>\n",
        failing.len() + passing.len(),
        failing.len()
    )
}

fn policy(suite: &Suite) {
    suite.write(
        "candor.toml",
        &fingerprint(
            "FP-001",
            FLAKY,
            "TimeoutError",
            r"Timed out after \d+(\.\d+)?s waiting on port \d+",
            "tests/test_pay.py:14",
            "pytest",
        ),
    );
    suite.write(
        ".ci/test-reliability.yaml",
        &format!(
            "tests:\n  - id: {BROKEN}\n    tier: trusted\n  - id: {FLAKY}\n    tier: probation\n"
        ),
    );
}

fn today() -> [(&'static str, &'static str); 1] {
    [("CANDOR_TODAY", TODAY)]
}

#[test]
fn triage_reads_the_latest_run_that_is_not_a_rerun() {
    let suite = empty();
    policy(&suite);
    suite.write(
        "old.xml",
        &junit(&[(BROKEN.rsplit("::").next().unwrap_or_default(), 0)], &[]),
    );
    suite.write(
        "new.xml",
        &junit(
            &[("test_webhook", 14), ("test_refund", 0)],
            &["test_charge"],
        ),
    );
    for (file, commit) in [("old.xml", "aaaaaaa"), ("new.xml", "bbbbbbb")] {
        let ingested = suite.candor(&["ingest", file, "--commit", commit], &today());
        assert_eq!(ingested.exit, 0, "{ingested:?}");
    }
    let ran = suite.candor(&["triage", "--format", "json"], &today());
    assert_eq!(ran.exit, 1, "a regression: {ran:?}");
    let verdicts = ran.lines_of("verdict");
    let shape: Vec<(&str, &str, i64)> = verdicts
        .iter()
        .map(|v| {
            (
                v["test"].as_str().unwrap_or_default(),
                v["verdict"].as_str().unwrap_or_default(),
                v["run_id"].as_i64().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [(BROKEN, "regression", 2), (FLAKY, "known-flake", 2)],
        "sorted by test id, from run 2: {ran:?}"
    );
    assert_eq!(verdicts[1]["fingerprint"], "FP-001");
    assert_eq!(verdicts[1]["tier"], "probation");
    assert_eq!(verdicts[0]["failure"]["exception"], "KeyError");
    assert_eq!(
        verdicts[0]["failure"]["failing_frame"],
        "tests/test_pay.py:31"
    );
    assert!(verdicts[0]["file"].is_null());
    let summary = &ran.lines_of("triage-summary")[0];
    assert_eq!(
        (
            &summary["red"],
            &summary["regression"],
            &summary["known_flake"]
        ),
        (&2.into(), &1.into(), &1.into())
    );

    let human = suite.candor(&["triage"], &today());
    insta::assert_snapshot!("triage_for_people", human.redacted(&suite));
}

#[test]
fn triage_of_files_reads_without_storing() {
    let suite = empty();
    policy(&suite);
    suite.write("only-flake.xml", &junit(&[("test_webhook", 14)], &[]));
    let ran = suite.candor(&["triage", "only-flake.xml"], &today());
    assert_eq!(ran.exit, 0, "a known flake alone is not negative: {ran:?}");
    assert!(
        ran.stdout
            .starts_with(&format!("known-flake FP-001  {FLAKY}  [probation]\n")),
        "{ran:?}"
    );
    assert!(
        !suite.temp.path().join("history.db").exists(),
        "triage of files stores nothing"
    );

    suite.write("green.xml", &junit(&[], &["test_webhook"]));
    let ran = suite.candor(&["triage", "green.xml", "--format", "json"], &today());
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(ran.lines_of("verdict").len(), 0);
    assert_eq!(ran.lines_of("triage-summary")[0]["red"], 0);
}

#[test]
fn conditions_of_files_come_from_flags_and_this_machine() {
    let suite = empty();
    policy(&suite);
    let config = std::fs::read_to_string(suite.repo.join("candor.toml")).unwrap_or_default();
    suite.write(
        "candor.toml",
        &config.replace(
            "conditions = { runner = \"pytest\" }",
            "conditions = { ci = true, min_workers = 4 }",
        ),
    );
    suite.write("flake.xml", &junit(&[("test_webhook", 14)], &[]));
    let verdict = |args: &[&str], vars: &[(&str, &str)]| {
        let mut all = vec!["triage", "flake.xml", "--format", "json"];
        all.extend(args);
        let mut vars = vars.to_vec();
        vars.extend(today());
        let ran = suite.candor(&all, &vars);
        let line = &ran.lines_of("verdict")[0];
        (
            line["verdict"].as_str().unwrap_or_default().to_owned(),
            line["reason"].as_str().unwrap_or_default().to_owned(),
        )
    };
    let (kind, reason) = verdict(&["--workers", "8"], &[]);
    assert_eq!(kind, "unverified");
    assert!(reason.contains("the run was not under CI"), "{reason}");
    let (kind, reason) = verdict(&[], &[("CI", "true")]);
    assert_eq!(kind, "unverified");
    assert!(
        reason.contains("does not record its worker count"),
        "{reason}"
    );
    let (kind, _) = verdict(&["--workers", "4"], &[("CI", "true")]);
    assert_eq!(kind, "known-flake");
}

#[test]
fn input_errors_exit_2() {
    let suite = empty();
    policy(&suite);
    let ran = suite.candor(&["triage", "missing.xml"], &today());
    assert_eq!(ran.exit, 2);
    assert!(ran.stderr.contains("could not read"), "{ran:?}");

    suite.write(
        "broken.xml",
        "<testsuites>\n  <testsuite>\n    <testcase name=",
    );
    let ran = suite.candor(&["triage", "broken.xml"], &today());
    assert_eq!(ran.exit, 2);
    assert!(ran.stderr.contains("broken.xml:3:"), "{ran:?}");
    assert!(ran.stdout.is_empty(), "nothing judged: {ran:?}");

    let ran = suite.candor(&["triage"], &today());
    assert_eq!(ran.exit, 2);
    assert!(ran.stderr.contains("no history at"), "{ran:?}");

    suite.write(
        "candor.toml",
        "[[fingerprint]]\nid = \"FP-9\"\ntest = \"t\"\nexception = \"E\"\nmessage_regex = '('\nframe = \"a.py:1\"\nconditions = {}\nlast_seen = 2026-10-01\nowner = \"o\"\n",
    );
    suite.write("flake.xml", &junit(&[("test_webhook", 14)], &[]));
    let ran = suite.candor(&["triage", "flake.xml"], &today());
    assert_eq!(ran.exit, 2);
    assert!(
        ran.stderr.contains("candor.toml:5:") && ran.stderr.contains("FP-9"),
        "{ran:?}"
    );

    policy(&suite);
    let ran = suite.candor(
        &["triage", "flake.xml"],
        &[("CANDOR_TODAY", "next tuesday")],
    );
    assert!(
        ran.stderr
            .contains("warning: CANDOR_TODAY is \"next tuesday\""),
        "{ran:?}"
    );
}

/// A trial found `triage` and `tests` describing different histories when a local `main`
/// held commits `origin/main` did not: the merge base was taken with one branch and the
/// default branch's runs counted on another. Both now take the default branch by one rule
/// (`origin/NAME` where origin has it: what CI sees) and name it, with and without
/// `origin/HEAD`; a run on the local commits origin lacks is the change's to both.
#[test]
fn triage_and_tests_name_one_base_when_local_main_is_ahead_of_origin() {
    let suite = empty();
    let origin = suite.temp.path().join("origin.git");
    git(
        suite.temp.path(),
        &[
            "init",
            "--quiet",
            "--bare",
            "-b",
            "main",
            &origin.to_string_lossy(),
        ],
    );
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    suite.write(".gitignore", ".candor/\n*.xml\n");
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", "on origin"]);
    let pushed = git(&suite.repo, &["rev-parse", "HEAD"]);
    git(
        &suite.repo,
        &["remote", "add", "origin", &origin.to_string_lossy()],
    );
    git(&suite.repo, &["push", "--quiet", "origin", "main"]);
    git(
        &suite.repo,
        &["commit", "--quiet", "--allow-empty", "-m", "local only"],
    );
    let ahead = git(&suite.repo, &["rev-parse", "HEAD"]);
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);
    git(
        &suite.repo,
        &["commit", "--quiet", "--allow-empty", "-m", "the change"],
    );
    suite.write("run.xml", &junit(&[("test_refund", 0)], &["test_charge"]));
    for args in [
        vec![
            "ingest",
            "run.xml",
            "--commit",
            ahead.as_str(),
            "--branch",
            "main",
        ],
        vec!["ingest", "run.xml"],
    ] {
        let ingested = suite.candor(&args, &today());
        assert_eq!(ingested.exit, 0, "{ingested:?}");
    }

    // Without origin/HEAD (a repository pushed to its remote, not cloned), then with it.
    for found_by in ["a local branch", "origin/HEAD"] {
        if found_by == "origin/HEAD" {
            git(&suite.repo, &["remote", "set-head", "origin", "main"]);
        }
        let base = format!("origin/main (the default branch, from {found_by})");
        let tests = suite.candor(&["tests"], &today());
        assert_eq!(tests.exit, 0, "{tests:?}");
        assert!(
            tests.stdout.contains(&format!(
                "counted 0 runs on main (the default branch: origin/main, from {found_by})"
            )) && tests.stdout.contains(
                "1 run on local commits of the default branch that origin lacks not counted"
            ),
            "{tests:?}"
        );
        let counted = &suite
            .candor(&["tests", "--format", "json"], &today())
            .lines_of("counted")[0];
        assert_eq!(counted["runs"], 0, "{counted}");

        let triage = suite.candor(&["triage", "--format", "json"], &today());
        assert_eq!(triage.exit, 1, "{triage:?}");
        let policy = &triage.lines_of("policy")[0];
        assert_eq!(policy["commit"].as_str(), Some(pushed.as_str()), "{policy}");
        assert!(
            policy["reason"]
                .as_str()
                .is_some_and(|reason| reason.contains(&format!("with {base}"))),
            "{policy}"
        );
        let verdict = &triage.lines_of("verdict")[0];
        assert!(
            verdict["reason"]
                .as_str()
                .is_some_and(|reason| reason.contains("no run of it at the merge base")
                    && reason.contains("failed 2 of 2 on this change")),
            "{verdict}"
        );
    }
}
