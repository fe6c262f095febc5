//! mocha's built-in xunit reporter, as the real tool writes it (tests/fixtures/js/mocha,
//! its package-lock.json committed, `npm ci` by `.ci/run`). Issue #20 item 5: the suite
//! path is in `classname`, the title in `name`; two tests with the same title in different
//! suites (corpus B's `bibtexParser` / `latexParser` "should throw SyntaxError") are two
//! tests, each under its full title, the id mocha-junit-reporter gives them too.

use std::path::Path;
use std::process::Command;

use candor::results::{Outcome, ParseOptions, parse_all};

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/js/mocha")
}

fn read(bytes: &[u8]) -> (Vec<(String, Outcome, u32)>, Option<String>) {
    let (executions, summary) =
        parse_all(bytes, &ParseOptions::default()).expect("the report parses");
    (
        executions
            .into_iter()
            .map(|e| (e.test_id, e.outcome, e.attempts))
            .collect(),
        summary.producer,
    )
}

fn expected() -> Vec<(String, Outcome, u32)> {
    [
        ("runs outside any suite", Outcome::Pass),
        ("bibtexParser should throw SyntaxError", Outcome::Pass),
        ("latexParser should throw SyntaxError", Outcome::Fail),
        ("latexParser nested is skipped", Outcome::Skip),
    ]
    .into_iter()
    .map(|(id, outcome)| (id.to_owned(), outcome, 1))
    .collect()
}

#[test]
fn the_committed_xunit_report_keeps_same_titled_tests_of_different_suites_apart() {
    let bytes = std::fs::read(fixture().join("reports/xunit.xml")).expect("the committed report");
    let (ids, producer) = read(&bytes);
    assert_eq!(producer.as_deref(), Some("mocha-xunit"));
    assert_eq!(ids, expected());
}

#[test]
fn the_real_mocha_writes_the_same_dialect() {
    let mocha = fixture().join("node_modules/.bin/mocha");
    assert!(
        mocha.exists(),
        "{} is not installed: run `npm ci` in {} (.ci/run does)",
        mocha.display(),
        fixture().display()
    );
    let temp = tempfile::tempdir().expect("a temp dir");
    let report = temp.path().join("xunit.xml");
    let output = Command::new(&mocha)
        .args(["--reporter", "xunit", "--reporter-option"])
        .arg(format!("output={}", report.display()))
        .arg("test/")
        .current_dir(fixture())
        .output()
        .expect("mocha runs");
    // One test fails: mocha exits with the number of failures.
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let (ids, producer) = read(&std::fs::read(&report).expect("mocha wrote its report"));
    assert_eq!(producer.as_deref(), Some("mocha-xunit"));
    assert_eq!(ids, expected());
}
