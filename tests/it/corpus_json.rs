//! The libtest-JSON and `go test -json` files of the shared corpus (driven by its
//! MANIFEST.tsv): counts, snapshots, rejection of other JSON reports, and ids that agree
//! with cargo2junit's JUnit of the same runs.

use crate::corpus_support;

use corpus_support::corpus;
use std::collections::BTreeSet;
use std::path::Path;

use candor::results::{Execution, Format, Outcome, ParseError, ParseOptions, detect, parse_all};
use regex::Regex;

/// `(file, format)` for every manifest row.
fn manifest() -> Vec<(String, String)> {
    let path = corpus().join("MANIFEST.tsv");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let mut fields = line.split('\t');
            Some((fields.next()?.to_owned(), fields.next()?.to_owned()))
        })
        .collect()
}

fn rows(format: &str) -> Vec<String> {
    manifest()
        .into_iter()
        .filter(|(_, f)| f == format)
        .map(|(file, _)| file)
        .collect()
}

fn parse_file(file: &str) -> Result<(Vec<Execution>, candor::results::ParseSummary), ParseError> {
    let bytes = std::fs::read(corpus().join(file)).expect("corpus file is readable");
    parse_all(bytes.as_slice(), &ParseOptions::default())
}

/// Executions and red executions per file, counted by reading each file by hand (see the
/// comments): not taken from the parser.
const EXPECTED: &[(&str, usize, usize)] = &[
    // 405 parseable results + 89 doctest results whose names old libtest did not escape.
    (
        "libtest-json/cargo2junit__test_inputs__azfunc.jsonl",
        494,
        0,
    ),
    // 1526 ok, 2 failed, 4 ignored.
    (
        "libtest-json/cargo2junit__test_inputs__cargo_failure.jsonl",
        1532,
        2,
    ),
    // 2 ok, 1 failed, 1 ignored doctest.
    (
        "libtest-json/cargo2junit__test_inputs__doctests_edition2024.jsonl",
        4,
        1,
    ),
    ("libtest-json/cargo2junit__test_inputs__failed.jsonl", 2, 1),
    (
        "libtest-json/cargo2junit__test_inputs__failed_stderr.jsonl",
        2,
        1,
    ),
    (
        "libtest-json/cargo2junit__test_inputs__float_time.jsonl",
        1,
        0,
    ),
    ("libtest-json/cargo2junit__test_inputs__issue76.jsonl", 1, 0),
    (
        "libtest-json/cargo2junit__test_inputs__multi_suite_success.jsonl",
        13,
        0,
    ),
    (
        "libtest-json/cargo2junit__test_inputs__one_suite_no_tests.jsonl",
        0,
        0,
    ),
    ("libtest-json/cargo2junit__test_inputs__self.jsonl", 5, 0),
    (
        "libtest-json/cargo2junit__test_inputs__self_exec_time.jsonl",
        6,
        0,
    ),
    ("libtest-json/cargo2junit__test_inputs__success.jsonl", 1, 0),
    (
        "libtest-json/cargo2junit__test_inputs__timed_out_event.jsonl",
        1,
        0,
    ),
    (
        "libtest-json/cargo2junit__test_inputs__unknown_type.jsonl",
        1,
        0,
    ),
    // 6 top-level tests (3 fail, 1 skip) and 6 subtests of TestCases (2 fail); TestCases
    // fails because of them.
    ("go-test-json/dorny__golang-json.jsonl", 12, 6),
    ("go-test-json/gojunitreport__100-pass.gojson.jsonl", 1, 0),
    ("go-test-json/gojunitreport__101-fail.gojson.jsonl", 2, 1),
    // Compiler output only: one error for the package.
    ("go-test-json/gojunitreport__102-broken.gojson.jsonl", 1, 1),
    (
        "go-test-json/gojunitreport__103-subtests.gojson.jsonl",
        4,
        2,
    ),
    ("go-test-json/gojunitreport__104-race.gojson.jsonl", 1, 1),
    // Panic in init: no test ran, one error for the package.
    ("go-test-json/gojunitreport__105-panic.gojson.jsonl", 1, 1),
    // Two passing packages and one whose TestMain failed.
    (
        "go-test-json/gojunitreport__106-testmain.gojson.jsonl",
        3,
        1,
    ),
    ("go-test-json/gojunitreport__107-skip.gojson.jsonl", 2, 0),
    // TestOne passes, then TestMain panics: a package error.
    (
        "go-test-json/gojunitreport__108-paniclate.gojson.jsonl",
        2,
        1,
    ),
    // The benchmarks have no events of their own (their output is TestZ's).
    ("go-test-json/gojunitreport__109-bench.gojson.jsonl", 2, 0),
    // BenchmarkError and BenchmarkFatal fail, BenchmarkSkip skips.
    (
        "go-test-json/gojunitreport__110-benchfail.gojson.jsonl",
        3,
        2,
    ),
    ("go-test-json/gojunitreport__111-empty.gojson.jsonl", 0, 0),
    (
        "go-test-json/gojunitreport__112-parallel.gojson.jsonl",
        3,
        3,
    ),
    ("go-test-json/gojunitreport__113-race.gojson.jsonl", 2, 0),
];

const EMPTY_FILE: &str = "libtest-json/cargo2junit__test_inputs__compile_fail.jsonl";

#[test]
fn every_json_stream_in_the_manifest_has_an_expected_count() {
    if !corpus_support::present("every_json_stream_in_the_manifest_has_an_expected_count") {
        return;
    }
    let listed: BTreeSet<String> = rows("libtest-json")
        .into_iter()
        .chain(rows("go-test-json"))
        .filter(|file| file != EMPTY_FILE)
        .collect();
    let expected: BTreeSet<String> = EXPECTED.iter().map(|(f, _, _)| (*f).to_owned()).collect();
    assert_eq!(listed, expected);
}

#[test]
fn json_streams_parse_with_the_counts_read_by_hand() {
    if !corpus_support::present("json_streams_parse_with_the_counts_read_by_hand") {
        return;
    }
    for (file, total, red) in EXPECTED {
        let (executions, summary) =
            parse_file(file).unwrap_or_else(|e| panic!("{file}: {e} ({})", e.hint()));
        let expected_format = if file.starts_with("go-test-json/") {
            Format::GoTestJson
        } else {
            Format::LibtestJson
        };
        assert_eq!(summary.format, Some(expected_format), "{file}");
        assert_eq!(executions.len(), *total, "{file}: executions");
        let reds = executions.iter().filter(|e| e.outcome.is_red()).count();
        assert_eq!(reds, *red, "{file}: red executions");
        for execution in executions.iter().filter(|e| e.outcome.is_red()) {
            assert!(
                execution.failure.is_some(),
                "{file}: {} has no failure",
                execution.test_id
            );
        }
    }
}

#[test]
fn the_empty_libtest_file_is_an_error() {
    if !corpus_support::present("the_empty_libtest_file_is_an_error") {
        return;
    }
    let error = parse_file(EMPTY_FILE).expect_err("a 0-byte file holds no results");
    assert!(matches!(error, ParseError::NotResults { .. }), "{error}");
    assert!(error.to_string().contains("empty"), "{error}");
}

#[test]
fn other_json_reports_are_rejected_by_name() {
    if !corpus_support::present("other_json_reports_are_rejected_by_name") {
        return;
    }
    let names = [
        ("dart-json", "Dart/Flutter"),
        ("flutter", "Dart/Flutter"),
        ("mocha-json", "mocha"),
        ("rspec-json", "RSpec"),
        ("cucumber", "Cucumber"),
        ("bazel", "Bazel"),
        ("pytest__report", "pytest-reportlog"),
    ];
    let files: Vec<String> = rows("other")
        .into_iter()
        .filter(|file| Path::new(file).extension().is_some_and(|e| e == "json"))
        // Read since issue #20: `the_playwright_json_report_is_read_with_projects`.
        .filter(|file| !file.contains("playwright"))
        .collect();
    assert!(files.len() >= 10, "{files:?}");
    for file in files {
        let error = parse_file(&file).expect_err(&file);
        let ParseError::NotResults { message, .. } = &error else {
            panic!("{file}: expected NotResults, got {error:?}");
        };
        let (_, tool) = names
            .iter()
            .find(|(key, _)| file.contains(key))
            .unwrap_or_else(|| panic!("{file}: no expected tool in this test's table"));
        assert!(message.contains(tool), "{file}: {message}");
        assert!(message.contains("does not read yet"), "{file}: {message}");
    }
}

/// Issue #20 (Playwright): the corpus's Playwright JSON report, once rejected by name, is
/// read: one test per spec and project, files relative to the config's folder (the report
/// was written on another machine, so no repository root applies).
#[test]
fn the_playwright_json_report_is_read_with_projects() {
    if !corpus_support::present("the_playwright_json_report_is_read_with_projects") {
        return;
    }
    let file = "other/launchable__playwright__report.json";
    let (executions, summary) = parse_file(file).expect("the Playwright report parses");
    assert_eq!(summary.producer.as_deref(), Some("playwright"));
    let id = "[chromium] tests/demo-todo-app.spec.ts::New Todo > should allow me to add todo items";
    assert!(
        executions.iter().any(|e| e.test_id == id),
        "{:?}",
        executions
            .iter()
            .take(3)
            .map(|e| &e.test_id)
            .collect::<Vec<_>>()
    );
    for project in ["[chromium] ", "[firefox] ", "[webkit] "] {
        let count = executions
            .iter()
            .filter(|e| e.test_id.starts_with(project))
            .count();
        assert_eq!(count * 3, executions.len(), "{project}");
    }
}

/// A snapshot-friendly view: a plain pass is one line, anything else in full.
fn snapshot_view(executions: &[Execution]) -> Vec<serde_json::Value> {
    executions
        .iter()
        .map(|execution| {
            let plain = execution.outcome == Outcome::Pass
                && execution.stdout.is_none()
                && execution.failure.is_none();
            if plain {
                serde_json::Value::String(format!("pass {}", execution.test_id))
            } else {
                serde_json::to_value(execution).expect("executions serialize")
            }
        })
        .collect()
}

#[test]
fn snapshots_of_every_json_stream() {
    if !corpus_support::present("snapshots_of_every_json_stream") {
        return;
    }
    for (file, _, _) in EXPECTED {
        let (executions, summary) = parse_file(file).expect("parses");
        let name = Path::new(file)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(file)
            .trim_end_matches(".jsonl")
            .to_owned();
        let view = serde_json::json!({
            "summary": summary,
            "executions": snapshot_view(&executions),
        });
        // A missing duration stays visible as null; a present one is redacted.
        insta::assert_yaml_snapshot!(name, view, {
            ".executions[].duration" => insta::dynamic_redaction(|value, _| {
                if value.as_f64().is_some() { "[duration]".into() } else { value }
            }),
        });
    }
}

/// cargo2junit splits a libtest name at its last `::` into (classname, name); candor's
/// generic JUnit id joins them back, so both formats of one run must give the same ids.
/// The JUnit parser is not used here (it belongs to another module); a small regex reads
/// the testcases.
#[test]
fn libtest_ids_match_cargo2junit_junit_ids_of_the_same_run() {
    if !corpus_support::present("libtest_ids_match_cargo2junit_junit_ids_of_the_same_run") {
        return;
    }
    let testcase = Regex::new(r"<testcase\s([^>]*)>").unwrap();
    let attribute = Regex::new(r#"(\w+)="([^"]*)""#).unwrap();
    let junit_files: BTreeSet<String> = rows("junit").into_iter().collect();
    let mut pairs = 0;
    for json_file in rows("libtest-json") {
        let Some(run) = json_file
            .strip_prefix("libtest-json/cargo2junit__test_inputs__")
            .and_then(|rest| rest.strip_suffix(".jsonl"))
        else {
            continue;
        };
        let xml_file = format!("junit/cargo2junit__expected_outputs__{run}.xml");
        if !junit_files.contains(&xml_file) {
            continue;
        }
        pairs += 1;
        let (executions, _) = parse_file(&json_file).expect("parses");
        let ours: BTreeSet<String> = executions.into_iter().map(|e| e.test_id).collect();
        let xml = String::from_utf8_lossy(&std::fs::read(corpus().join(&xml_file)).unwrap())
            // cargo2junit read `src\bindings` in an unescaped name as a JSON `\b`
            // escape and wrote a backspace (a tab for `\table.rs`); undo that to compare
            // the names libtest meant.
            .replace('\u{8}', "\\b")
            .replace('\u{c}', "\\f")
            .replace('\t', "\\t");
        let theirs: BTreeSet<String> = testcase
            .captures_iter(&xml)
            .map(|caps| {
                let mut classname = None;
                let mut name = String::new();
                for attr in attribute.captures_iter(&caps[1]) {
                    let value = unescape_xml(&attr[2]);
                    match &attr[1] {
                        "classname" => classname = Some(value),
                        "name" => name = value,
                        _ => {}
                    }
                }
                candor::results::ids::junit_generic(classname.as_deref(), &name)
            })
            .collect();
        assert_eq!(ours, theirs, "{json_file} vs {xml_file}");
    }
    assert!(pairs >= 5, "only {pairs} pairs found");
}

fn unescape_xml(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

#[test]
fn detection_reads_past_leading_noise() {
    let cases: &[(&str, Option<Format>)] = &[
        (
            "running 2 tests\n{\"timestamp\":\"x\",\"level\":\"INFO\"}\n{ \"type\": \"suite\", \"event\": \"started\", \"test_count\": 2 }\n",
            Some(Format::LibtestJson),
        ),
        (
            "# example.com/m [example.com/m.test]\n./m.go:3:1: syntax error\n{\"Action\":\"start\",\"Package\":\"example.com/m\"}\n",
            Some(Format::GoTestJson),
        ),
        (
            "{\"ImportPath\":\"example.com/m [example.com/m.test]\",\"Action\":\"build-output\",\"Output\":\"x\\n\"}\n",
            Some(Format::GoTestJson),
        ),
        (
            "{\"type\":\"bench\",\"name\":\"b\",\"median\":10,\"deviation\":1}\n",
            Some(Format::LibtestJson),
        ),
        ("# Release notes\nsome words\n", None),
        ("{\"a\": 1}\n", None),
    ];
    for (input, expected) in cases {
        match (detect(input.as_bytes()), expected) {
            (Ok(format), Some(expected)) => assert_eq!(format, *expected, "{input}"),
            (Err(ParseError::NotResults { .. }), None) => {}
            (other, _) => panic!("{input}: unexpected {other:?}"),
        }
    }
}
