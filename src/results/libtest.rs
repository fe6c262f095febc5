//! libtest's JSON lines (`cargo test -- -Z unstable-options --format json`, nextest's
//! libtest-json output) into executions. Owns the event stream's rules; knows nothing of
//! files or storage.
//!
//! # Rules
//! - One JSON object per line. Lines that are not JSON (test output that escaped capture,
//!   `git init` messages) and JSON lines that are not libtest events (tracing's JSON logs:
//!   no string `type`) are skipped; several suites follow each other in one stream.
//! - Test ids are `ids::cargo(binary, name)`: nextest's `binary-id$test` becomes
//!   `binary-id::test`. Plain `cargo test` does not name the test binary: the caller's
//!   `ParseOptions::test_binary` (`candor ingest --binary`/`--crate`) prefixes every name
//!   that carries none except doc tests, and is refused (`ParseError::Ambiguous`) for a
//!   second suite with such tests; without it, one test path present in two binaries
//!   gets one id. nextest's retry suffix (`…$test#3`, the number
//!   of attempts) and stress marker (`binary-id@stress-4$test`) are not part of the id:
//!   the attempts are counted, and an `ok` after retries is a flaky pass (without a
//!   failure: libtest-json carries no output for the failed attempts).
//! - `ok` is a pass, `failed` a fail (its `stdout`/`stderr` is the failure text, read as a
//!   Rust panic; a `message` field is the message) or, with a `reason` (`time limit
//!   exceeded`: libtest's `--ensure-time`, nextest's timeout), an error, `ignored` a skip (its `message` is the
//!   reason), `allowed_fail` (pre-2021 `#[allow_fail]`) a skip whose reason says the test
//!   failed but was allowed to. A `bench` event is a pass whose duration is the median
//!   time per iteration. `exec_time` is a number, a string `"0.003s"` (older libtest) or
//!   absent; an old `duration` field is read the same way.
//! - `timeout` only says the test has run for over 60 s: it is still running, no outcome.
//!   `report`, discovery (`discovery`, `discovered`, `completed`) and unknown types or
//!   events are ignored.
//! - Results are matched to `started` events by name; only tests started and not yet
//!   finished are remembered, which libtest's parallelism bounds.
//! - A test started but never finished is an **error** with the message "no result: …":
//!   when a new suite starts before it finished (the previous test binary crashed or was
//!   killed), when its suite reports its summary without it, or when the stream ends
//!   (the run was killed or the file was cut short). A warning counts them.
//! - A line that looks like a libtest event (it mentions `"type"` and `"name"` or
//!   `"event"`) but is not valid JSON: old libtest on Windows wrote test names without
//!   escaping backslashes (`"name": "src\lib.rs - f (line 4)"`), so the name is
//!   re-escaped and the line read again; the same repair applies to a line that parsed
//!   but whose name came out with control characters (`src\bindings` read as a
//!   backspace). A line still broken after that is skipped with a warning; if it carried
//!   a result, its test ends as the "no result" error above, so nothing is lost silently.

use std::collections::HashMap;
use std::io::BufRead;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::frames::{Language, build_failure};
use super::ids;
use super::model::{Execution, Outcome, cap_text};
use super::{ParseError, ParseOptions, ParseSummary, Sink};

/// Why a started test has no result.
#[derive(Debug, Clone, Copy)]
enum Unfinished {
    /// A new suite (test binary) started first.
    BinaryStopped,
    /// Its suite's summary arrived first.
    SuiteEnded,
    /// The input ended first.
    StreamEnded,
}

impl Unfinished {
    fn message(self) -> &'static str {
        match self {
            Unfinished::BinaryStopped => {
                "no result: the test binary stopped before reporting this test (crashed or killed)"
            }
            Unfinished::SuiteEnded => {
                "no result: the suite reported its summary without a result for this test"
            }
            Unfinished::StreamEnded => {
                "no result before the stream ended (the run was killed or the file was cut short)"
            }
        }
    }
}

/// Parses a libtest stream, handing each execution to `sink`.
pub fn parse<R: BufRead>(
    mut reader: R,
    options: &ParseOptions,
    sink: &mut Sink<'_>,
) -> Result<ParseSummary, ParseError> {
    let mut stream = Stream {
        options,
        summary: ParseSummary::default(),
        started: HashMap::new(),
        next_start: 0,
        repaired: LineTally::default(),
        broken: LineTally::default(),
        unfinished: 0,
        discovered: 0,
        events: 0,
        nextest: false,
        line: 0,
        suite: 0,
        bound_suite: None,
    };
    let mut buffer = Vec::new();
    let mut line_number = 0u64;
    loop {
        buffer.clear();
        if reader.read_until(b'\n', &mut buffer)? == 0 {
            break;
        }
        line_number += 1;
        stream.line = line_number;
        let line = String::from_utf8_lossy(&buffer);
        let line = line.trim();
        if !line.starts_with('{') {
            continue;
        }
        match read_line(line) {
            Reading::Event(event) => stream.handle(&event, sink)?,
            Reading::Repaired(event) => {
                stream.repaired.count(line_number);
                stream.handle(&event, sink)?;
            }
            Reading::Broken => stream.broken.count(line_number),
            Reading::NotAnEvent => {}
        }
    }
    stream.finish(sink)
}

#[derive(Debug, Default)]
struct LineTally {
    lines: u64,
    first: Option<u64>,
}

impl LineTally {
    fn count(&mut self, line: u64) {
        self.lines += 1;
        self.first.get_or_insert(line);
    }
}

struct Stream<'o> {
    options: &'o ParseOptions,
    summary: ParseSummary,
    /// Tests started and not finished, with the order they started in.
    started: HashMap<String, u64>,
    next_start: u64,
    repaired: LineTally,
    broken: LineTally,
    unfinished: u64,
    nextest: bool,
    /// The line being read.
    line: u64,
    /// How many suites (test binaries) have started.
    suite: u64,
    /// The suite whose tests took `options.test_binary`, once one did.
    bound_suite: Option<u64>,
    /// `discovered` events: a test listing (`--list --format json`), not a run.
    discovered: u64,
    /// Libtest events of any kind read.
    events: u64,
}

impl Stream<'_> {
    fn handle(&mut self, event: &Value, sink: &mut Sink<'_>) -> Result<(), ParseError> {
        let kind = event
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let action = event
            .get("event")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let name = event.get("name").and_then(Value::as_str);
        if event.get("nextest").is_some() || name.is_some_and(|n| n.contains('$')) {
            self.nextest = true;
        }
        self.events += 1;
        match (kind, action, name) {
            ("test", "discovered", _) => {
                self.discovered += 1;
                Ok(())
            }
            ("suite", "started", _) => {
                self.close_unfinished(Unfinished::BinaryStopped, sink)?;
                self.suite += 1;
                Ok(())
            }
            ("suite", "ok" | "failed", _) => self.close_unfinished(Unfinished::SuiteEnded, sink),
            ("test", "started", Some(name)) => {
                self.started.insert(name.to_owned(), self.next_start);
                self.next_start += 1;
                Ok(())
            }
            ("test", "ok", Some(name)) => {
                let mut execution = self.execution(name, Outcome::Pass, event)?;
                execution.stdout = text_field(event, "stdout").map(cap_text);
                self.emit(execution, sink)
            }
            ("test", "failed", Some(name)) => {
                // `reason` is libtest's `--ensure-time` and nextest's timeout: the test
                // did not get to an assertion in time.
                let reason = text_field(event, "reason");
                let outcome = if reason.is_some() {
                    Outcome::Error
                } else {
                    Outcome::Fail
                };
                let mut execution = self.execution(name, outcome, event)?;
                let text = [text_field(event, "stdout"), text_field(event, "stderr")]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join("\n");
                let message = text_field(event, "message").or(reason);
                let text = if text.is_empty() {
                    message.clone().unwrap_or_default()
                } else {
                    text
                };
                execution.failure = Some(Box::new(build_failure(
                    None,
                    message,
                    text,
                    Language::Rust,
                    self.options,
                )));
                self.emit(execution, sink)
            }
            ("test", "ignored", Some(name)) => {
                let mut execution = self.execution(name, Outcome::Skip, event)?;
                execution.skip_message =
                    text_field(event, "message").or_else(|| text_field(event, "reason"));
                self.emit(execution, sink)
            }
            ("test", "allowed_fail", Some(name)) => {
                let mut execution = self.execution(name, Outcome::Skip, event)?;
                execution.skip_message =
                    Some("failed, but #[allow_fail] let the failure pass".to_owned());
                self.emit(execution, sink)
            }
            ("bench", _, Some(name)) => {
                let mut execution = Execution::new(self.test_id(name)?, Outcome::Pass);
                execution.duration = event
                    .get("median")
                    .and_then(Value::as_f64)
                    .map(|nanos| nanos / 1e9)
                    .filter(|seconds| seconds.is_finite() && *seconds >= 0.0);
                self.started.remove(name);
                self.emit(execution, sink)
            }
            _ => Ok(()),
        }
    }

    fn execution(
        &mut self,
        name: &str,
        outcome: Outcome,
        event: &Value,
    ) -> Result<Execution, ParseError> {
        let (name, attempts) = split_retries(name);
        self.started.remove(name);
        let outcome = match outcome {
            // nextest names a test that needed retries `…$test#N`; passing on the last
            // of N > 1 attempts is a flaky pass.
            Outcome::Pass if attempts > 1 => Outcome::FlakyPass,
            other => other,
        };
        let mut execution = Execution::new(self.test_id(name)?, outcome);
        execution.attempts = attempts;
        execution.duration = event
            .get("exec_time")
            .or_else(|| event.get("duration"))
            .and_then(seconds);
        Ok(execution)
    }

    /// The id of the test `name`, in the binary the options name when the name does not
    /// carry one. Doc tests (`src/lib.rs - f (line 4)`) run in no test binary nextest
    /// knows and keep their names. One binary cannot be right for two suites: the second
    /// suite with tests that would take it is refused.
    fn test_id(&mut self, name: &str) -> Result<String, ParseError> {
        let binary = self
            .options
            .test_binary
            .as_deref()
            .filter(|_| !name.contains('$') && !is_doctest(name) && !name.trim().is_empty());
        if binary.is_some() {
            match self.bound_suite {
                None => self.bound_suite = Some(self.suite),
                Some(suite) if suite != self.suite => {
                    return Err(ParseError::Ambiguous {
                        position: crate::results::Position::LineColumn {
                            line: self.line,
                            column: 1,
                        },
                        message: format!(
                            "a second test binary's tests start here, and libtest JSON does not say which binary either is, so one --binary cannot name both (test `{name}`)"
                        ),
                    });
                }
                Some(_) => {}
            }
        }
        Ok(test_id(name, binary))
    }

    fn emit(&mut self, execution: Execution, sink: &mut Sink<'_>) -> Result<(), ParseError> {
        self.summary.executions += 1;
        sink(execution)
    }

    fn close_unfinished(&mut self, why: Unfinished, sink: &mut Sink<'_>) -> Result<(), ParseError> {
        if self.started.is_empty() {
            return Ok(());
        }
        let mut names: Vec<(String, u64)> = self.started.drain().collect();
        names.sort_by_key(|(_, order)| *order);
        for (name, _) in names {
            let mut execution = Execution::new(self.test_id(&name)?, Outcome::Error);
            execution.failure = Some(Box::new(build_failure(
                None,
                Some(why.message().to_owned()),
                why.message().to_owned(),
                Language::Rust,
                self.options,
            )));
            self.unfinished += 1;
            self.emit(execution, sink)?;
        }
        Ok(())
    }

    fn finish(mut self, sink: &mut Sink<'_>) -> Result<ParseSummary, ParseError> {
        self.close_unfinished(Unfinished::StreamEnded, sink)?;
        let mut summary = self.summary;
        summary.producer = Some(if self.nextest { "nextest" } else { "libtest" }.to_owned());
        if let (lines, Some(first)) = (self.repaired.lines, self.repaired.first) {
            summary.warnings.push(format!(
                "{lines} libtest events had test names with unescaped backslashes (old libtest on Windows); they were read with the backslashes kept (first at line {first})"
            ));
        }
        if let (lines, Some(first)) = (self.broken.lines, self.broken.first) {
            summary.warnings.push(format!(
                "{lines} lines looked like libtest events but are not valid JSON and were skipped (first at line {first})"
            ));
        }
        if self.unfinished > 0 {
            summary.warnings.push(format!(
                "{} tests started but reported no result; they are recorded as errors",
                self.unfinished
            ));
        }
        // An empty run is stored, but never silently: say what the file was instead.
        if summary.executions == 0 {
            summary.warnings.push(if self.discovered > 0 {
                format!(
                    "the file is a test listing (`--list`: {} tests discovered, none run), not results; it is stored as a run with no tests",
                    self.discovered
                )
            } else {
                format!(
                    "the file holds {} libtest events and no test result; it is stored as a run with no tests",
                    self.events
                )
            });
        }
        Ok(summary)
    }
}

/// nextest's retry suffix: `crate::bin$test#3` is the third attempt of `crate::bin$test`.
fn split_retries(name: &str) -> (&str, u32) {
    if let Some((base, count)) = name.rsplit_once('#')
        && base.contains('$')
        && let Ok(attempts) = count.parse::<u32>()
    {
        return (base, attempts.max(1));
    }
    (name, 1)
}

/// nextest's stress-run marker: `crate::bin@stress-4$test` is an iteration of
/// `crate::bin$test`.
static STRESS_MARKER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"@stress-\d+\$").expect("the stress pattern is valid"));

/// The id given to a test whose event names nothing, as the JUnit parser does: an empty
/// id would select every test (found by fuzzing:
/// `tests/data/fuzz-regressions/libtest-started-with-empty-name.jsonl`).
const UNNAMED: &str = "(unnamed)";

fn test_id(name: &str, binary: Option<&str>) -> String {
    if name.trim().is_empty() {
        return UNNAMED.to_owned();
    }
    ids::cargo(binary, &STRESS_MARKER.replace(name, "$"))
}

/// A doc test's name: `src/lib.rs - module::f (line 4)`, or an id that ends with one.
pub fn is_doctest(name: &str) -> bool {
    name.ends_with(')') && name.contains(" - ") && name.contains(" (line ")
}

fn text_field(event: &Value, key: &str) -> Option<String> {
    event
        .get(key)
        .and_then(Value::as_str)
        .filter(|text| !text.trim().is_empty())
        .map(str::to_owned)
}

/// `0.003`, `"0.003s"` or `"0.003"` as seconds; `None` when negative or unreadable.
fn seconds(value: &Value) -> Option<f64> {
    let seconds = match value {
        Value::Number(number) => number.as_f64(),
        Value::String(text) => text.trim().trim_end_matches('s').trim().parse().ok(),
        _ => None,
    }?;
    (seconds.is_finite() && seconds >= 0.0).then_some(seconds)
}

enum Reading {
    Event(Value),
    Repaired(Value),
    Broken,
    NotAnEvent,
}

fn read_line(line: &str) -> Reading {
    match serde_json::from_str::<Value>(line) {
        Ok(value) if is_event(&value) => {
            let garbled = value
                .get("name")
                .and_then(Value::as_str)
                .is_some_and(|name| name.contains(char::is_control));
            if garbled && let Some(repaired) = repair_name(line) {
                Reading::Repaired(repaired)
            } else {
                Reading::Event(value)
            }
        }
        Err(_) if looks_like_event(line) => {
            repair_name(line).map_or(Reading::Broken, Reading::Repaired)
        }
        Ok(_) | Err(_) => Reading::NotAnEvent,
    }
}

fn is_event(value: &Value) -> bool {
    value.get("type").is_some_and(Value::is_string)
}

fn looks_like_event(line: &str) -> bool {
    line.contains("\"type\"") && (line.contains("\"event\"") || line.contains("\"name\""))
}

/// The raw name between `"name": "` and the quote that closes it, which is followed by
/// the next field or the end of the object.
static RAW_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^(.*?"name"\s*:\s*)"(.*?)"(\s*(?:,\s*"[a-z_]+"\s*:.*|\}\s*))$"#)
        .expect("the raw-name pattern is valid")
});

/// Re-escapes an unescaped test name and reads the line again.
fn repair_name(line: &str) -> Option<Value> {
    let caps = RAW_NAME.captures(line)?;
    let escaped = serde_json::to_string(caps.get(2)?.as_str()).ok()?;
    let rebuilt = format!(
        "{}{escaped}{}",
        caps.get(1)?.as_str(),
        caps.get(3)?.as_str()
    );
    let value: Value = serde_json::from_str(&rebuilt).ok()?;
    is_event(&value).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids_in(stream: &str, binary: Option<&str>) -> Result<Vec<String>, ParseError> {
        let options = ParseOptions {
            test_binary: binary.map(str::to_owned),
            ..ParseOptions::default()
        };
        let (executions, _) = crate::results::parse_all(stream.as_bytes(), &options)?;
        Ok(executions.into_iter().map(|e| e.test_id).collect())
    }

    /// Issue #12 item 1: `cargo test`'s JSON names no binary; given one, its tests get
    /// the ids nextest gives them.
    #[test]
    fn a_named_binary_prefixes_its_tests_but_not_doc_tests_or_named_ones() {
        let stream = [
            r#"{ "type": "suite", "event": "started", "test_count": 2 }"#,
            r#"{ "type": "test", "event": "ok", "name": "tests::adds" }"#,
            r#"{ "type": "test", "event": "ok", "name": "other$tests::x" }"#,
            r#"{ "type": "suite", "event": "ok", "passed": 2 }"#,
            r#"{ "type": "suite", "event": "started", "test_count": 0 }"#,
            r#"{ "type": "suite", "event": "ok", "passed": 0 }"#,
            r#"{ "type": "suite", "event": "started", "test_count": 1 }"#,
            r#"{ "type": "test", "event": "ok", "name": "src/lib.rs - add (line 3)" }"#,
            r#"{ "type": "suite", "event": "ok", "passed": 1 }"#,
        ]
        .join("\n");
        assert_eq!(
            ids_in(&stream, Some("my-crate")).unwrap(),
            [
                "my-crate::tests::adds",
                "other::tests::x",
                "src/lib.rs - add (line 3)"
            ]
        );
        assert_eq!(
            ids_in(&stream, None).unwrap(),
            [
                "tests::adds",
                "other::tests::x",
                "src/lib.rs - add (line 3)"
            ]
        );
    }

    #[test]
    fn one_binary_is_refused_for_two_suites_of_tests() {
        let stream = [
            r#"{ "type": "suite", "event": "started", "test_count": 1 }"#,
            r#"{ "type": "test", "event": "ok", "name": "tests::adds" }"#,
            r#"{ "type": "suite", "event": "ok", "passed": 1 }"#,
            r#"{ "type": "suite", "event": "started", "test_count": 1 }"#,
            r#"{ "type": "test", "event": "started", "name": "integration_works" }"#,
            r#"{ "type": "test", "event": "ok", "name": "integration_works" }"#,
        ]
        .join("\n");
        let error = ids_in(&stream, Some("my-crate")).unwrap_err();
        assert!(matches!(error, ParseError::Ambiguous { .. }), "{error:?}");
        assert_eq!(
            error.position(),
            Some(crate::results::Position::LineColumn { line: 6, column: 1 })
        );
        assert!(ids_in(&stream, None).is_ok());
        // JUnit names its own classes: a binary for it is refused, not ignored.
        let junit = "<testsuite><testcase classname=\"a\" name=\"b\"/></testsuite>";
        assert!(matches!(
            ids_in(junit, Some("my-crate")),
            Err(ParseError::Ambiguous { .. })
        ));
    }
    use crate::results::Frame;
    use proptest::strategy::Strategy;

    fn run(input: &str) -> (Vec<Execution>, ParseSummary) {
        let mut executions = Vec::new();
        let summary = parse(
            input.as_bytes(),
            &ParseOptions::default(),
            &mut |execution| {
                executions.push(execution);
                Ok(())
            },
        )
        .expect("libtest input parses");
        (executions, summary)
    }

    #[test]
    fn unescaped_windows_names_are_repaired() {
        let input = concat!(
            r#"{ "type": "suite", "event": "started", "test_count": 2 }"#,
            "\n",
            r#"{ "type": "test", "event": "started", "name": "src\lib.rs - func (line 47)" }"#,
            "\n",
            r#"{ "type": "test", "name": "src\lib.rs - func (line 47)", "event": "ignored" }"#,
            "\n",
            r#"{ "type": "test", "name": "src\bindings\blob.rs - bindings::blob::Blob (line 39)", "event": "ok" }"#,
            "\n",
        );
        let (executions, summary) = run(input);
        let ids: Vec<&str> = executions.iter().map(|e| e.test_id.as_str()).collect();
        assert_eq!(
            ids,
            [
                r"src\lib.rs - func (line 47)",
                r"src\bindings\blob.rs - bindings::blob::Blob (line 39)"
            ]
        );
        assert_eq!(executions[0].outcome, Outcome::Skip);
        assert!(
            summary.warnings[0].starts_with("3 libtest events"),
            "{:?}",
            summary.warnings
        );
    }

    #[test]
    fn started_tests_without_result_become_errors() {
        let input = concat!(
            r#"{ "type": "suite", "event": "started", "test_count": 2 }"#,
            "\n",
            r#"{ "type": "test", "event": "started", "name": "a::crashes" }"#,
            "\n",
            r#"{ "type": "test", "event": "started", "name": "a::ok" }"#,
            "\n",
            r#"{ "type": "test", "name": "a::ok", "event": "ok", "exec_time": "0.5s" }"#,
            "\n",
            r#"{ "type": "suite", "event": "started", "test_count": 1 }"#,
            "\n",
            r#"{ "type": "test", "event": "started", "name": "b::cut" }"#,
            "\n",
            r#"{ "type": "test", "name": "b::cut", "event": "fai"#,
        );
        let (executions, summary) = run(input);
        assert_eq!(executions.len(), 3);
        assert_eq!(executions[0].duration, Some(0.5));
        assert_eq!(executions[1].test_id, "a::crashes");
        assert_eq!(executions[1].outcome, Outcome::Error);
        let message = |i: usize| executions[i].failure.as_ref().map(|f| f.message.clone());
        assert!(message(1).unwrap().contains("test binary stopped"));
        assert_eq!(executions[2].test_id, "b::cut");
        assert!(message(2).unwrap().contains("stream ended"));
        assert_eq!(summary.warnings.len(), 2, "{:?}", summary.warnings);
    }

    #[test]
    fn nextest_names_benches_and_unknown_events() {
        let input = concat!(
            r#"{"type":"suite","event":"started","test_count":2,"nextest":{"crate":"fixture-project"}}"#,
            "\n",
            r#"{"type":"test","event":"started","name":"fixture-project::basic$test_cwd"}"#,
            "\n",
            r#"{"type":"test","event":"timeout","name":"fixture-project::basic$test_cwd"}"#,
            "\n",
            r#"{"type":"test","event":"failed","name":"fixture-project::basic$test_cwd","exec_time":0.25,"stdout":"thread 'test_cwd' panicked at tests/basic.rs:19:5:\nassertion failed\n"}"#,
            "\n",
            r#"{"type":"bench","name":"bench_x","median":2000000,"deviation":3}"#,
            "\n",
            r#"{"type":"test","event":"discovered","name":"x"}"#,
            "\n",
            r#"{"type":"report","total_time":1.0}"#,
            "\n",
            r#"{"timestamp":"2023-04-02T17:20:52Z","level":"INFO","fields":{"message":"hi"}}"#,
            "\n",
        );
        let (executions, summary) = run(input);
        assert_eq!(summary.producer.as_deref(), Some("nextest"));
        assert_eq!(executions.len(), 2);
        assert_eq!(executions[0].test_id, "fixture-project::basic::test_cwd");
        let failure = executions[0].failure.as_ref().unwrap();
        assert_eq!(failure.exception.as_deref(), Some("panic"));
        assert_eq!(failure.message, "assertion failed");
        assert_eq!(
            failure
                .failing_frame
                .as_ref()
                .map(Frame::location)
                .as_deref(),
            Some("tests/basic.rs:19")
        );
        assert_eq!(executions[1].outcome, Outcome::Pass);
        assert_eq!(executions[1].duration, Some(0.002));
        assert!(summary.warnings.is_empty());
    }

    #[test]
    fn nextest_retries_stress_runs_and_timeouts() {
        let input = concat!(
            r#"{"type":"suite","event":"started","test_count":3}"#,
            "\n",
            r#"{"type":"test","event":"started","name":"app::it$flaky"}"#,
            "\n",
            r#"{"type":"test","event":"ok","name":"app::it$flaky#3","exec_time":0.1}"#,
            "\n",
            r#"{"type":"test","event":"started","name":"app::it@stress-2$slow"}"#,
            "\n",
            r#"{"type":"test","event":"failed","name":"app::it@stress-2$slow","exec_time":60.0,"reason":"time limit exceeded"}"#,
            "\n",
            r#"{"type":"suite","event":"failed","passed":1,"failed":1,"ignored":0,"measured":0,"filtered_out":0,"exec_time":60.1}"#,
            "\n",
        );
        let (executions, summary) = run(input);
        assert!(summary.warnings.is_empty(), "{:?}", summary.warnings);
        assert_eq!(executions.len(), 2);
        assert_eq!(executions[0].test_id, "app::it::flaky");
        assert_eq!(executions[0].outcome, Outcome::FlakyPass);
        assert_eq!(executions[0].attempts, 3);
        assert_eq!(executions[1].test_id, "app::it::slow");
        assert_eq!(executions[1].outcome, Outcome::Error);
        assert_eq!(
            executions[1].failure.as_ref().map(|f| f.message.as_str()),
            Some("time limit exceeded")
        );
    }

    proptest::proptest! {
        #![proptest_config(crate::test_support::proptest_config(128))]

        #[test]
        fn any_mix_of_lines_parses_without_panicking(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    "[a-z:$#@\\\\-]{0,12}".prop_map(|n| format!(r#"{{ "type": "test", "event": "started", "name": "{n}" }}"#)),
                    ("[a-z:$#\\\\]{0,12}", "(ok|failed|ignored|timeout|allowed_fail|bogus)", "\\PC{0,20}")
                        .prop_map(|(n, e, out)| format!(r#"{{ "type": "test", "name": "{n}", "event": "{e}", "stdout": "{out}", "exec_time": "1s" }}"#)),
                    "(started|ok|failed)".prop_map(|e| format!(r#"{{ "type": "suite", "event": "{e}" }}"#)),
                    "\\PC{0,40}",
                    "\\{[ -~]{0,40}",
                ],
                0..30,
            )
        ) {
            let input = lines.join("\n");
            let mut count = 0u64;
            let summary = parse(input.as_bytes(), &ParseOptions::default(), &mut |_| {
                count += 1;
                Ok(())
            });
            let summary = summary.expect("libtest parsing never fails on text");
            proptest::prop_assert_eq!(summary.executions, count);
        }
    }

    #[test]
    fn exec_time_forms() {
        assert_eq!(seconds(&serde_json::json!(0.25)), Some(0.25));
        assert_eq!(seconds(&serde_json::json!("0.003s")), Some(0.003));
        assert_eq!(seconds(&serde_json::json!(-1)), None);
        assert_eq!(seconds(&serde_json::json!("soon")), None);
    }
}

#[cfg(test)]
mod fuzz_regressions {
    use crate::results::{ParseOptions, parse_all};

    /// Found by the `detect_parse` fuzz target: an empty `name` gave an empty test id.
    #[test]
    fn a_test_with_an_empty_name_gets_a_placeholder_id() {
        let input =
            include_str!("../../tests/data/fuzz-regressions/libtest-started-with-empty-name.jsonl");
        let (executions, _) = parse_all(input.as_bytes(), &ParseOptions::default()).unwrap();
        assert!(!executions.is_empty());
        assert!(
            executions.iter().all(|e| e.test_id == "(unnamed)"),
            "{executions:?}"
        );
    }
}
