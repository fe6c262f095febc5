//! Policy from the merge base everywhere (#14 item 7): `triage`, `rerun` and `test` judge
//! a red test by the merge base's candor.toml, fingerprints, tiers and ledger, on a real
//! pytest suite in a real git repository. A branch that adds a fingerprint pardoning its
//! own new failure gets no known-flake and no rerun; the work tree's differences are named
//! in warnings; `--policy worktree` is the explicit local override, which `rerun` refuses.

use crate::triage_support;

use std::fmt::Write as _;
use std::process::{Command, Stdio};

use triage_support::{MODE, Suite, TODAY, fingerprint, git, suite};

const TEST: &str = "tests/test_webhook.py::test_payment_webhook";

fn today() -> [(&'static str, &'static str); 1] {
    [("CANDOR_TODAY", TODAY)]
}

/// The fingerprint a change would add to pardon the webhook test's timeout.
fn pardon(id: &str) -> String {
    fingerprint(
        id,
        TEST,
        "TimeoutError",
        r"Timed out after \d+(\.\d+)?s waiting for webhook stub on port \d+",
        "tests/test_webhook.py:7",
        "pytest",
    )
}

/// The pytest suite on `main` with no fingerprint, the webhook test on probation; then a
/// branch `change` whose commit adds `FP-009` for the test's timeout and raises the rerun
/// budget. The red run (a timeout) is stored in the history.
fn branch_that_pardons_itself() -> Suite {
    let suite = suite("pytest");
    suite.tier(TEST, "probation");
    suite.git_with_change();
    suite.write(
        "candor.toml",
        &format!("[rerun]\nbudget_entries = 10\n\n{}", pardon("FP-009")),
    );
    git(&suite.repo, &["add", "-A"]);
    git(
        &suite.repo,
        &["commit", "--quiet", "-m", "pardon the timeout"],
    );
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
    let report = report.display().to_string();
    let ingested = suite.candor(&["ingest", &report], &today());
    assert_eq!(ingested.exit, 0, "{ingested:?}");
    suite
}

#[test]
fn a_fingerprint_the_change_adds_pardons_nothing_in_triage() {
    let suite = branch_that_pardons_itself();
    let ran = suite.candor(&["triage", "--format", "json"], &today());
    let verdict = &ran.lines_of("verdict")[0];
    assert_eq!(
        verdict["verdict"], "unverified",
        "the base has no fingerprint for it (#14 item 7): {ran:?}"
    );
    let policy = &ran.lines_of("policy")[0];
    assert_eq!(policy["source"], "base");
    assert_eq!(
        policy["commit"].as_str(),
        Some(git(&suite.repo, &["rev-parse", "main"]).as_str())
    );
    let differences: Vec<&str> = policy["differences"]
        .as_array()
        .expect("differences")
        .iter()
        .filter_map(|d| d.as_str())
        .collect();
    assert_eq!(
        differences,
        ["[rerun] budget_entries 3 → 10", "fingerprint FP-009 added"]
    );
    assert!(
        ran.stderr
            .contains("warning: the work tree's policy differs")
            && ran.stderr.contains("fingerprint FP-009 added"),
        "{ran:?}"
    );

    // For people: where the policy came from is said on stderr.
    let human = suite.candor(&["triage"], &today());
    assert!(
        human.stderr.contains("note: policy from the merge base"),
        "{human:?}"
    );
    assert!(human.stdout.starts_with("unverified  "), "{human:?}");

    // The explicit local override sees the branch's fingerprint, and says so.
    let local = suite.candor(
        &["triage", "--policy", "worktree", "--format", "json"],
        &today(),
    );
    assert_eq!(local.lines_of("verdict")[0]["verdict"], "known-flake");
    assert_eq!(local.lines_of("policy")[0]["source"], "worktree");
}

#[test]
fn rerun_refuses_a_fingerprint_the_change_adds_and_the_worktree_override() {
    let suite = branch_that_pardons_itself();
    let ledger = suite.repo.join(".flake-ledger.tsv");
    let ran = suite.candor(&["rerun", TEST, "--format", "json"], &today());
    assert_eq!(ran.exit, 1, "{ran:?}");
    let line = &ran.lines_of("rerun")[0];
    assert_eq!(line["status"], "refused");
    assert_eq!(line["verdict"], "unverified");
    assert!(!ledger.exists(), "no receipt for a rerun that never ran");

    // Naming the change's own commit as its base does not move the policy off the merge
    // base.
    let head = git(&suite.repo, &["rev-parse", "HEAD"]);
    let ran = suite.candor(
        &["rerun", TEST, "--change", &head, "--format", "json"],
        &today(),
    );
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert_eq!(ran.lines_of("rerun")[0]["status"], "refused");
    assert_eq!(ran.lines_of("policy")[0]["source"], "base");
    assert!(!ledger.exists());

    let ran = suite.candor(&["rerun", TEST, "--policy", "worktree"], &today());
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(ran.stderr.contains("refuses --policy worktree"), "{ran:?}");
    assert!(!ledger.exists());
}

#[test]
fn uncommitted_policy_edits_on_main_are_warned_about_not_used() {
    // A repository with one branch: HEAD is its own merge base, so the committed policy
    // judges and an uncommitted fingerprint is only named.
    let suite = suite("pytest");
    suite.tier(TEST, "trusted");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    suite.write(".gitignore", ".candor/\n");
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", "the suite"]);
    suite.write("candor.toml", &pardon("FP-001"));
    suite.write("red.xml", RED_XML);
    let ran = suite.candor(&["triage", "red.xml", "--format", "json"], &today());
    assert_eq!(ran.lines_of("verdict")[0]["verdict"], "regression");
    assert_eq!(
        ran.lines_of("policy")[0]["differences"][0],
        "fingerprint FP-001 added"
    );
    assert_eq!(ran.exit, 1);
}

#[test]
fn no_merge_base_reads_head_and_rerun_refuses() {
    // A branch that shares no history with any default branch (there is none).
    let suite = suite("pytest");
    suite.tier(TEST, "probation");
    git(&suite.repo, &["init", "--quiet", "-b", "topic"]);
    suite.write(".gitignore", ".candor/\n");
    suite.write("candor.toml", &pardon("FP-001"));
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", "the suite"]);
    suite.write("red.xml", RED_XML);
    let ran = suite.candor(&["triage", "red.xml", "--format", "json"], &today());
    let policy = &ran.lines_of("policy")[0];
    assert_eq!(policy["source"], "head", "{ran:?}");
    assert!(
        policy["reason"]
            .as_str()
            .is_some_and(|r| r.contains("no merge base")),
        "{ran:?}"
    );
    let ingested = suite.candor(&["ingest", "red.xml"], &today());
    assert_eq!(ingested.exit, 0, "{ingested:?}");
    let ran = suite.candor(&["rerun", TEST], &today());
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(ran.stderr.contains("no merge base"), "{ran:?}");
    assert!(ran.stderr.contains("--change"), "{ran:?}");
}

#[test]
fn outside_git_the_work_tree_is_the_policy() {
    let suite = suite("pytest");
    suite.tier(TEST, "probation");
    suite.write("candor.toml", &pardon("FP-001"));
    suite.write("red.xml", RED_XML);
    let ran = suite.candor(&["triage", "red.xml", "--format", "json"], &today());
    assert_eq!(ran.lines_of("policy")[0]["source"], "worktree");
    assert_eq!(ran.lines_of("verdict")[0]["verdict"], "known-flake");
}

/// The webhook test's timeout as pytest's JUnit XML (xunit1) reports it.
const RED_XML: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="1" failures="1" errors="0" skipped="0">
<testcase classname="tests.test_webhook" name="test_payment_webhook" file="tests/test_webhook.py" line="4">
<failure message="TimeoutError: Timed out after 3.0s waiting for webhook stub on port 8080">def test_payment_webhook():
&gt;       raise TimeoutError("Timed out after 3.0s waiting for webhook stub on port 8080")
E       TimeoutError: Timed out after 3.0s waiting for webhook stub on port 8080

tests/test_webhook.py:7: TimeoutError</failure>
</testcase></testsuite></testsuites>
"#;

/// A reliability file committed for the first time differs from the merge base in every
/// test's tier: the differences are printed up to ten, then counted, and the `policy`
/// event holds every one (a trial on pypa/packaging printed 62,435 warnings).
#[test]
fn many_policy_differences_are_printed_up_to_ten_then_counted() {
    let suite = branch_that_pardons_itself();
    let mut file = String::from("tests:\n");
    for index in 0..25 {
        writeln!(
            file,
            "  - id: tests/test_more.py::test_{index}\n    tier: quarantined"
        )
        .expect("a String takes every write");
    }
    suite.write(".ci/test-reliability.yaml", &file);
    let ran = suite.candor(&["triage", "--format", "json"], &today());
    let differences = ran.lines_of("policy")[0]["differences"]
        .as_array()
        .expect("differences")
        .len();
    // 25 tiers listed, the webhook test's unlisted, the two of the branch's candor.toml.
    assert_eq!(differences, 28, "{ran:?}");
    let warned = ran
        .stderr
        .lines()
        .filter(|line| line.starts_with("warning: the work tree's policy differs"))
        .count();
    assert_eq!(warned, 10, "{ran:?}");
    assert!(
        ran.stderr
            .contains("warning: … and 18 more difference(s) from"),
        "{ran:?}"
    );
}
