//! Every dialect candor claims (docs/formats.md) read from a small file in the repository
//! (`tests/data/dialects`, README there says how each was made), so that a clone without
//! the shared corpus still checks them all (issue #13 item 6). Each file is recognised as
//! its producer, and what is read of each test — id, outcome, attempts, exception,
//! message, failing frame, skip reason — is snapshotted.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use candor::results::{Execution, ParseOptions, parse_all};

/// (file, format, producer, executions after retries are merged).
const DIALECTS: &[(&str, &str, Option<&str>, usize)] = &[
    ("pytest.xml", "junit", Some("pytest"), 6),
    ("nextest.xml", "junit", Some("nextest"), 3),
    ("libtest.jsonl", "libtest-json", Some("libtest"), 4),
    ("go-test.jsonl", "go-test-json", Some("go test"), 5),
    ("surefire.xml", "junit", Some("surefire"), 4),
    ("cargo2junit.xml", "junit", Some("cargo2junit"), 3),
    ("go-junit-report.xml", "junit", Some("go-junit-report"), 3),
    ("gotestsum.xml", "junit", Some("gotestsum"), 3),
    ("jest-junit.xml", "junit", Some("jest-junit"), 3),
    ("vitest.xml", "junit", Some("vitest"), 3),
    ("playwright.xml", "junit", Some("playwright"), 3),
    ("mocha.xml", "junit", Some("mocha"), 2),
    ("mocha-xunit.xml", "junit", Some("mocha-xunit"), 3),
    ("node.xml", "junit", Some("node"), 3),
    ("phpunit.xml", "junit", Some("phpunit"), 3),
    ("googletest.xml", "junit", Some("googletest"), 3),
    ("catch2.xml", "junit", Some("catch2"), 3),
    ("rspec.xml", "junit", Some("rspec"), 3),
    ("ant.xml", "junit", Some("ant"), 3),
    ("testng.xml", "junit", Some("testng"), 3),
    ("junit.xml", "junit", Some("junit"), 3),
];

fn dialects_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/dialects")
}

/// What a reader of the history sees of each execution, one line each (plus the failure's
/// exception, message and failing frame, or the skip reason).
fn render(executions: &[Execution]) -> String {
    let mut out = String::new();
    for execution in executions {
        let _ = writeln!(
            out,
            "{} | {} | attempts {}",
            execution.test_id,
            execution.outcome.as_str(),
            execution.attempts
        );
        if let Some(failure) = &execution.failure {
            let _ = writeln!(
                out,
                "  exception: {}\n  message: {}\n  failing frame: {}",
                failure.exception.as_deref().unwrap_or("-"),
                failure.message,
                failure
                    .failing_frame
                    .as_ref()
                    .map_or_else(|| "-".to_owned(), candor::results::Frame::location),
            );
        }
        if let Some(reason) = &execution.skip_message {
            let _ = writeln!(out, "  skipped: {reason}");
        }
    }
    out
}

#[test]
fn every_claimed_dialect_has_a_fixture_read_as_its_producer() {
    let mut seen = Vec::new();
    for &(file, format, producer, count) in DIALECTS {
        let path = dialects_dir().join(file);
        let reader = std::fs::File::open(&path)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        let (executions, summary) = parse_all(reader, &ParseOptions::default())
            .unwrap_or_else(|error| panic!("{file}: {error}"));
        assert_eq!(
            summary.format.map(candor::results::Format::as_str),
            Some(format),
            "{file}"
        );
        assert_eq!(summary.producer.as_deref(), producer, "{file}");
        assert_eq!(executions.len(), count, "{file}:\n{}", render(&executions));
        assert!(
            executions.iter().any(|e| e.failure.is_some()),
            "{file}: each fixture holds a failure"
        );
        insta::assert_snapshot!(file, render(&executions));
        seen.push(file);
    }
    // No file in the folder goes unchecked, and no listed one is missing.
    let mut on_disk: Vec<String> = std::fs::read_dir(dialects_dir())
        .expect("the dialects folder")
        .map(|entry| {
            entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name != "README.md")
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = seen.iter().map(|&name| name.to_owned()).collect();
    listed.sort();
    assert_eq!(on_disk, listed);
}

/// ESLint's junit formatter names a case's class after its file: a `test.jsx` gives
/// `classname="test"`, as node's reporter writes on every case. It stays plain JUnit (the
/// shared corpus' `dorny__jest-junit-eslint.xml` was read as node's, its id mangled to
/// `test.jsx > test.jsx`, when node's dialect came in; #20).
#[test]
fn a_class_named_test_outside_node_s_suites_is_not_node_s_dialect() {
    let eslint = r#"<?xml version="1.0" encoding="utf-8"?>
<testsuites>
<testsuite package="org.eslint" time="0" tests="1" errors="0" name="test.jsx">
<testcase time="0" name="test.jsx" classname="test" />
</testsuite>
</testsuites>"#;
    let (executions, summary) =
        parse_all(eslint.as_bytes(), &ParseOptions::default()).expect("it parses");
    assert_eq!(summary.producer.as_deref(), Some("junit"), "{summary:?}");
    assert_eq!(executions[0].test_id, "test::test.jsx");
    // node's own suite, with its `disabled` count, is still node's.
    let node = eslint.replace("package=\"org.eslint\"", "disabled=\"0\" hostname=\"ci\"");
    let (_, summary) = parse_all(node.as_bytes(), &ParseOptions::default()).expect("it parses");
    assert_eq!(summary.producer.as_deref(), Some("node"), "{summary:?}");
}
