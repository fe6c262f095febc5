//! `go test -json` (test2json) streams, with the compiler output `go test` prints around
//! them, into executions. Owns the event stream's rules; knows nothing of files or storage.
//!
//! # Rules
//! - Test ids are `ids::go(Package, Test)`; a subtest `Parent/child` is its own execution
//!   and its parent's too.
//! - `pass` and `bench` (a benchmark that logged but did not fail) are passes, `fail` a
//!   fail, `skip` a skip whose reason is the first `file.go:N: msg` line the test logged.
//!   `Elapsed` is the duration. `run`, `pause`, `cont`, `start` and `attr` carry no
//!   outcome; unknown actions are ignored.
//! - `output` accumulates per test (the first 48 KiB and the last 16 KiB are kept) and is
//!   the failure text of a failed test, read as Go: a panic gives `panic` and its message,
//!   a `t.Error` failure no type and its first `file.go:N: msg` line as message. A parent
//!   that failed only because a subtest did gets the message "subtest X failed".
//! - Only tests still running are remembered, with their output; a package's state is
//!   dropped when its own `pass`/`fail`/`skip` arrives.
//! - **Package-level failures.** When a package fails and none of its tests failed (a
//!   panic in `init` or `TestMain`, `TestMain` returning non-zero, a build or setup
//!   failure), the package itself gets an **error** execution whose id is the bare import
//!   path (`example.com/pkg`, no `::`): the string `go test` accepts to run exactly that
//!   package. Its failure text is the package's output (and the compiler output for a
//!   build failure, with type `build failed`). Its message is the panic's or compiler's
//!   when there is one, else the last two lines go printed for the package other than
//!   its `FAIL\tpkg\t0.01s` summary (`exit status 3`, or what `TestMain` printed last
//!   before it exited), so that the red says why. Passing packages get no execution.
//! - Tests that were `run` but got no `pass`/`fail`/`skip` when their package ended (a
//!   panic or `-timeout` killed the binary) are **errors**, with their own output followed
//!   by the package's as failure text; they replace the package-level error. Tests still
//!   running when the stream ends are errors "no result before the stream ended".
//! - Build failures outside JSON: `# pkg [pkg.test]` starts a block of compiler output
//!   and `FAIL\tpkg [build failed]` (or `[setup failed]`) ends it; that is an error
//!   execution for `pkg` with the block as failure text. Go ≥ 1.24 sends the same as
//!   `build-output` events (by `ImportPath`) and a package `fail` naming `FailedBuild`.
//!   A package is given at most one package-level error however many of these say so.
//! - Other non-JSON lines and JSON lines without an `Action` are skipped. A line that
//!   looks like an event (it mentions `"Action"`) but is not valid JSON is skipped with a
//!   warning; a result it carried shows up as the error of the test left running.
//! - Input with neither an event nor a build failure is not `go test -json` output.

use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::frames::{Language, MAX_MESSAGE_CHARS, build_failure};
use super::ids;
use super::model::{Execution, MAX_TEXT_BYTES, Outcome};
use super::{ParseError, ParseOptions, ParseSummary, Position, Sink};

const HEAD_BYTES: usize = MAX_TEXT_BYTES * 3 / 4;
const TAIL_BYTES: usize = MAX_TEXT_BYTES / 4;

/// What names one `go test -json` event: its action, package and test (none for a
/// package-level event). For readers that need no more of a stream: which packages and
/// tests a run reported (the merge lane's batches and its check of the tests it never
/// ran).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct EventName {
    /// `run`, `pass`, `fail`, `skip`, `output`, …
    #[serde(rename = "Action", default)]
    pub action: String,
    /// The package's import path.
    #[serde(rename = "Package", default)]
    pub package: String,
    /// The test (`TestX/sub` for a subtest).
    #[serde(rename = "Test", default)]
    pub test: Option<String>,
}

/// Parses a `go test -json` stream, handing each execution to `sink`.
pub fn parse<R: BufRead>(
    mut reader: R,
    options: &ParseOptions,
    sink: &mut Sink<'_>,
) -> Result<ParseSummary, ParseError> {
    let mut stream = Stream {
        options,
        summary: ParseSummary {
            producer: Some("go test".to_owned()),
            ..ParseSummary::default()
        },
        packages: HashMap::new(),
        sections: Vec::new(),
        section_open: false,
        reported: HashSet::new(),
        saw_event: false,
        broken_lines: 0,
        first_broken: None,
        next_order: 0,
    };
    let mut buffer = Vec::new();
    let mut line_number = 0u64;
    loop {
        buffer.clear();
        if reader.read_until(b'\n', &mut buffer)? == 0 {
            break;
        }
        line_number += 1;
        let line = String::from_utf8_lossy(&buffer);
        let line = line.trim_end_matches(['\n', '\r']);
        if line.trim_start().starts_with('{') {
            match serde_json::from_str::<Value>(line.trim()) {
                Ok(event) if event.get("Action").is_some_and(Value::is_string) => {
                    stream.saw_event = true;
                    stream.handle(&event, sink)?;
                    continue;
                }
                Ok(_) => continue,
                Err(_) if line.contains("\"Action\"") => {
                    stream.broken_lines += 1;
                    stream.first_broken.get_or_insert(line_number);
                    continue;
                }
                Err(_) => {}
            }
        }
        stream.plain_line(line, sink)?;
    }
    stream.finish(sink)
}

/// Whether a non-JSON line is `go test`'s report of a package that failed to build
/// (`# pkg [pkg.test]` or `FAIL\tpkg [build failed]`).
pub fn is_build_failure_line(line: &[u8]) -> bool {
    std::str::from_utf8(line)
        .is_ok_and(|line| build_header(line).is_some() || failed_build(line).is_some())
}

/// `# pkg` or `# pkg [pkg.test]`: the package whose compiler output follows.
fn build_header(line: &str) -> Option<&str> {
    let rest = line.trim().strip_prefix("# ")?;
    let (package, variant) = match rest.split_once(' ') {
        Some((package, variant)) => (package, Some(variant)),
        None => (rest, None),
    };
    let variant_ok = variant
        .is_none_or(|v| v.starts_with('[') && v.ends_with(']') && !v.contains(char::is_whitespace));
    (!package.is_empty() && variant_ok).then_some(package)
}

/// `FAIL\tpkg [build failed]` or `FAIL\tpkg [setup failed]`: the package that could not
/// be built.
fn failed_build(line: &str) -> Option<&str> {
    let rest = line.trim().strip_prefix("FAIL\t")?;
    let package = rest
        .strip_suffix(" [build failed]")
        .or_else(|| rest.strip_suffix(" [setup failed]"))?
        .trim();
    (!package.is_empty() && !package.contains(char::is_whitespace)).then_some(package)
}

/// How many of a failed package's last output lines make its message.
const PACKAGE_MESSAGE_LINES: usize = 2;

/// The message of a package that failed outside any test with no panic and no build
/// failure: its last lines of output other than go's own summary lines
/// (`FAIL\tpkg\t0.01s`, `FAIL`, `PASS`, `ok …`), joined with ` | `, typically what
/// `TestMain` printed before it exited and `exit status N`. `test2json: ` (a batched
/// replay runs the test binary under test2json, which prefixes the exit status so) is
/// dropped so that both ways of running a package give the same message, and therefore
/// the same signature.
fn package_message(text: &str) -> String {
    let is_summary = |line: &str| {
        matches!(line, "FAIL" | "PASS")
            || line.starts_with("FAIL\t")
            || line.starts_with("ok  \t")
            || line.starts_with("[candor: ")
    };
    let mut lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .map(|line| line.strip_prefix("test2json: ").unwrap_or(line))
        .filter(|line| !line.is_empty() && !is_summary(line))
        .collect();
    let keep = lines.len().saturating_sub(PACKAGE_MESSAGE_LINES);
    lines.drain(..keep);
    let message = lines.join(" | ");
    if message.is_empty() {
        return "the package failed outside any test and printed nothing".to_owned();
    }
    let cut = message
        .char_indices()
        .nth(MAX_MESSAGE_CHARS)
        .map_or(message.len(), |(at, _)| at);
    message[..cut].to_owned()
}

static LOGGED_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^\s*[\w.\-]+\.go:\d+: (.*?)\s*$").expect("the log-line pattern is valid")
});

/// Text kept from a possibly endless output: its head and its tail.
#[derive(Debug, Default)]
struct Output {
    head: String,
    tail: String,
    dropped: usize,
}

impl Output {
    fn push(&mut self, text: &str) {
        let mut rest = text;
        if self.tail.is_empty() && self.dropped == 0 {
            let cut = floor_boundary(rest, HEAD_BYTES.saturating_sub(self.head.len()));
            let (head, after) = rest.split_at(cut);
            self.head.push_str(head);
            rest = after;
        }
        self.tail.push_str(rest);
        if self.tail.len() > 2 * TAIL_BYTES {
            self.trim_tail();
        }
    }

    fn trim_tail(&mut self) {
        let excess = self.tail.len().saturating_sub(TAIL_BYTES);
        let mut cut = excess;
        while cut < self.tail.len() && !self.tail.is_char_boundary(cut) {
            cut += 1;
        }
        self.tail.drain(..cut);
        self.dropped += cut;
    }

    fn is_empty(&self) -> bool {
        self.head.is_empty() && self.tail.is_empty()
    }

    fn text(&self) -> String {
        let mut tail = &self.tail[..];
        let mut dropped = self.dropped;
        if tail.len() > TAIL_BYTES {
            let cut = ceil_boundary(tail, tail.len() - TAIL_BYTES);
            dropped += cut;
            tail = &tail[cut..];
        }
        if dropped == 0 {
            format!("{}{tail}", self.head)
        } else {
            format!("{}\n[candor: {dropped} bytes not kept]\n{tail}", self.head)
        }
    }
}

fn floor_boundary(text: &str, at: usize) -> usize {
    let mut cut = at.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    cut
}

fn ceil_boundary(text: &str, at: usize) -> usize {
    let mut cut = at.min(text.len());
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    cut
}

#[derive(Debug, Default)]
struct TestState {
    output: Output,
    /// `run` was seen: the test owes a result.
    running: bool,
    order: u64,
    failed_subtest: Option<String>,
}

#[derive(Debug, Default)]
struct PackageState {
    output: Output,
    tests: HashMap<String, TestState>,
    any_test_failed: bool,
    build_failed: bool,
}

/// Compiler output for one import path, from plain lines or `build-output` events.
#[derive(Debug)]
struct BuildSection {
    import_path: String,
    output: Output,
}

/// At most this many build sections are kept; older ones are dropped first.
const MAX_SECTIONS: usize = 64;

struct Stream<'o> {
    options: &'o ParseOptions,
    summary: ParseSummary,
    packages: HashMap<String, PackageState>,
    sections: Vec<BuildSection>,
    section_open: bool,
    /// Packages already given a package-level error.
    reported: HashSet<String>,
    saw_event: bool,
    broken_lines: u64,
    first_broken: Option<u64>,
    next_order: u64,
}

impl Stream<'_> {
    fn handle(&mut self, event: &Value, sink: &mut Sink<'_>) -> Result<(), ParseError> {
        let field = |key: &str| event.get(key).and_then(Value::as_str);
        let action = field("Action").unwrap_or_default();
        let elapsed = event
            .get("Elapsed")
            .and_then(Value::as_f64)
            .filter(|s| s.is_finite() && *s >= 0.0);
        if matches!(action, "build-output" | "build-fail") {
            let import_path = field("ImportPath").unwrap_or_default();
            if let Some(output) = field("Output") {
                self.section(import_path).output.push(output);
            }
            return Ok(());
        }
        let package = field("Package").unwrap_or_default().to_owned();
        match field("Test").filter(|t| !t.is_empty()) {
            Some(test) => self.test_event(&package, test, action, event, elapsed, sink),
            None => self.package_event(&package, action, event, elapsed, sink),
        }
    }

    fn test_event(
        &mut self,
        package: &str,
        test: &str,
        action: &str,
        event: &Value,
        elapsed: Option<f64>,
        sink: &mut Sink<'_>,
    ) -> Result<(), ParseError> {
        let order = self.next_order;
        let state = self.packages.entry(package.to_owned()).or_default();
        match action {
            "run" => {
                let test_state = state.tests.entry(test.to_owned()).or_default();
                test_state.running = true;
                test_state.order = order;
                self.next_order += 1;
                Ok(())
            }
            "output" => {
                if let Some(output) = event.get("Output").and_then(Value::as_str) {
                    state
                        .tests
                        .entry(test.to_owned())
                        .or_default()
                        .output
                        .push(output);
                }
                Ok(())
            }
            "pass" | "bench" | "fail" | "skip" => {
                let finished = state.tests.remove(test).unwrap_or_default();
                let id = ids::go(package, test);
                let output = finished.output.text();
                let mut execution = match action {
                    "fail" => {
                        state.any_test_failed = true;
                        // Subtest names may hold `/` themselves, so the parent is the
                        // longest running test whose name is a `/`-prefix of this one.
                        let parent = state
                            .tests
                            .iter_mut()
                            .filter(|(name, _)| {
                                test.strip_prefix(name.as_str())
                                    .is_some_and(|rest| rest.starts_with('/'))
                            })
                            .max_by_key(|(name, _)| name.len());
                        if let Some((_, parent)) = parent {
                            parent.failed_subtest.get_or_insert_with(|| test.to_owned());
                        }
                        let mut execution = Execution::new(id, Outcome::Fail);
                        let mut failure =
                            build_failure(None, None, output, Language::Go, self.options);
                        if failure.message.is_empty()
                            && let Some(child) = finished.failed_subtest
                        {
                            failure.message = format!("subtest {child} failed");
                        }
                        execution.failure = Some(Box::new(failure));
                        execution
                    }
                    "skip" => {
                        let mut execution = Execution::new(id, Outcome::Skip);
                        execution.skip_message = LOGGED_LINE
                            .captures(&output)
                            .and_then(|caps| caps.get(1))
                            .map(|reason| reason.as_str().to_owned());
                        execution
                    }
                    _ => Execution::new(id, Outcome::Pass),
                };
                execution.duration = elapsed;
                self.emit(execution, sink)
            }
            _ => Ok(()),
        }
    }

    fn package_event(
        &mut self,
        package: &str,
        action: &str,
        event: &Value,
        elapsed: Option<f64>,
        sink: &mut Sink<'_>,
    ) -> Result<(), ParseError> {
        match action {
            "output" => {
                let state = self.packages.entry(package.to_owned()).or_default();
                if let Some(output) = event.get("Output").and_then(Value::as_str) {
                    if failed_build(output).is_some() {
                        state.build_failed = true;
                    }
                    state.output.push(output);
                }
                Ok(())
            }
            "start" => {
                self.packages.entry(package.to_owned()).or_default();
                Ok(())
            }
            "pass" | "skip" | "fail" => {
                let state = self.packages.remove(package).unwrap_or_default();
                let failed_build_path = event.get("FailedBuild").and_then(Value::as_str);
                let package_failed = action == "fail";
                self.close_package(
                    package,
                    state,
                    package_failed,
                    failed_build_path,
                    elapsed,
                    sink,
                )
            }
            _ => Ok(()),
        }
    }

    fn close_package(
        &mut self,
        package: &str,
        state: PackageState,
        package_failed: bool,
        failed_build_path: Option<&str>,
        elapsed: Option<f64>,
        sink: &mut Sink<'_>,
    ) -> Result<(), ParseError> {
        let package_text = state.output.text();
        let unfinished = self.close_unfinished(package, state.tests, &package_text, sink)?;
        if !package_failed || unfinished > 0 || state.any_test_failed {
            return Ok(());
        }
        let build_failed = state.build_failed || failed_build_path.is_some();
        let mut text = String::new();
        if build_failed {
            text = self.take_section(failed_build_path.unwrap_or(package));
        }
        text.push_str(&package_text);
        self.package_error(package, build_failed, text, elapsed, sink)
    }

    /// Emits an error for each test that was `run` and got no result; returns how many.
    fn close_unfinished(
        &mut self,
        package: &str,
        tests: HashMap<String, TestState>,
        package_text: &str,
        sink: &mut Sink<'_>,
    ) -> Result<u64, ParseError> {
        let mut running: Vec<(String, TestState)> = tests
            .into_iter()
            .filter(|(_, state)| state.running)
            .collect();
        running.sort_by_key(|(_, state)| state.order);
        let count = running.len() as u64;
        for (test, state) in running {
            let mut text = state.output.text();
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(package_text);
            let mut failure = build_failure(None, None, text, Language::Go, self.options);
            if failure.message.is_empty() || failure.message.starts_with("FAIL") {
                "no result before the package ended".clone_into(&mut failure.message);
            }
            let mut execution = Execution::new(ids::go(package, &test), Outcome::Error);
            execution.failure = Some(Box::new(failure));
            self.emit(execution, sink)?;
        }
        Ok(count)
    }

    fn package_error(
        &mut self,
        package: &str,
        build_failed: bool,
        text: String,
        elapsed: Option<f64>,
        sink: &mut Sink<'_>,
    ) -> Result<(), ParseError> {
        if !self.reported.insert(package.to_owned()) {
            return Ok(());
        }
        let exception = build_failed.then(|| "build failed".to_owned());
        let mut failure = build_failure(exception, None, text, Language::Go, self.options);
        if failure.exception.is_none() {
            // `TestMain` exiting non-zero, or a binary killed outside any test, prints no
            // panic: the generic first-line reading gave an empty message for a bare
            // `exit status 3` and a setup chatter line otherwise, while the reason is
            // what the package printed last.
            failure.message = package_message(&failure.text);
        }
        let id = if package.is_empty() {
            "(no package)"
        } else {
            package
        };
        let mut execution = Execution::new(id, Outcome::Error);
        execution.failure = Some(Box::new(failure));
        execution.duration = elapsed;
        self.emit(execution, sink)
    }

    fn plain_line(&mut self, line: &str, sink: &mut Sink<'_>) -> Result<(), ParseError> {
        if let Some(package) = build_header(line) {
            let package = package.to_owned();
            self.section(&package).output.push(&format!("{line}\n"));
            self.section_open = true;
        } else if let Some(package) = failed_build(line) {
            self.section_open = false;
            let package = package.to_owned();
            let mut text = self.take_section(&package);
            text.push_str(line);
            self.package_error(&package, true, text, None, sink)?;
        } else if self.section_open
            && let Some(section) = self.sections.last_mut()
        {
            section.output.push(line);
            section.output.push("\n");
        }
        Ok(())
    }

    /// The section for `import_path` (`pkg` or `pkg [pkg.test]`), created when missing and
    /// moved last, so that plain compiler lines append to it.
    fn section(&mut self, import_path: &str) -> &mut BuildSection {
        let section = match self
            .sections
            .iter()
            .position(|s| s.import_path == import_path)
        {
            Some(at) => self.sections.remove(at),
            None => BuildSection {
                import_path: import_path.to_owned(),
                output: Output::default(),
            },
        };
        if self.sections.len() >= MAX_SECTIONS {
            self.sections.remove(0);
        }
        self.sections.push(section);
        self.sections
            .last_mut()
            .expect("a section was pushed just above")
    }

    /// The compiler output for a package: its own sections (`pkg`, `pkg [pkg.test]`)
    /// removed and returned, or else every section kept (a dependency failed to build and
    /// each dependent package reports it).
    fn take_section(&mut self, import_path: &str) -> String {
        let package = import_path.split(' ').next().unwrap_or(import_path);
        let own = |section: &BuildSection| {
            section.import_path == import_path
                || section.import_path.split(' ').next() == Some(package)
        };
        let mut text = String::new();
        if self.sections.iter().any(own) {
            self.sections.retain(|section| {
                if own(section) {
                    text.push_str(&section.output.text());
                    false
                } else {
                    true
                }
            });
        } else {
            for section in &self.sections {
                text.push_str(&section.output.text());
            }
        }
        text
    }

    fn emit(&mut self, execution: Execution, sink: &mut Sink<'_>) -> Result<(), ParseError> {
        self.summary.executions += 1;
        sink(execution)
    }

    fn finish(mut self, sink: &mut Sink<'_>) -> Result<ParseSummary, ParseError> {
        if !self.saw_event && self.reported.is_empty() {
            return Err(ParseError::NotResults {
                position: Position::LineColumn { line: 1, column: 1 },
                message: "no `go test -json` event and no build failure report in the input".into(),
            });
        }
        let mut packages: Vec<(String, PackageState)> = self.packages.drain().collect();
        packages.sort_by(|a, b| a.0.cmp(&b.0));
        let mut unfinished = 0;
        for (package, state) in packages {
            let tests = state
                .tests
                .into_iter()
                .filter(|(_, test)| test.running)
                .map(|(name, mut test)| {
                    test.output
                        .push("\n[candor: no result before the stream ended]\n");
                    (name, test)
                })
                .collect();
            let note = if state.output.is_empty() {
                String::new()
            } else {
                state.output.text()
            };
            unfinished += self.close_unfinished(&package, tests, &note, sink)?;
        }
        if unfinished > 0 {
            self.summary.warnings.push(format!(
                "{unfinished} tests were still running when the stream ended; they are recorded as errors"
            ));
        }
        if let Some(first) = self.first_broken {
            self.summary.warnings.push(format!(
                "{} lines looked like `go test -json` events but are not valid JSON and were skipped (first at line {first})",
                self.broken_lines
            ));
        }
        Ok(self.summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Frame;
    use proptest::strategy::Strategy;
    use std::fmt::Write as _;

    fn run(input: &str) -> Result<(Vec<Execution>, ParseSummary), ParseError> {
        let mut executions = Vec::new();
        let summary = parse(
            input.as_bytes(),
            &ParseOptions::default(),
            &mut |execution| {
                executions.push(execution);
                Ok(())
            },
        )?;
        Ok((executions, summary))
    }

    fn event(action: &str, test: Option<&str>, output: Option<&str>) -> String {
        let mut value = serde_json::json!({"Action": action, "Package": "example.com/m"});
        if let Some(test) = test {
            value["Test"] = test.into();
        }
        if let Some(output) = output {
            value["Output"] = output.into();
        }
        format!("{value}\n")
    }

    #[test]
    fn build_failure_lines() {
        assert!(is_build_failure_line(
            b"# package/name/broken [package/name/broken.test]"
        ));
        assert!(is_build_failure_line(
            b"FAIL\tpackage/name/broken [build failed]"
        ));
        assert!(is_build_failure_line(b"FAIL\texample.com/x [setup failed]"));
        assert!(!is_build_failure_line(b"# A title with words"));
        assert!(!is_build_failure_line(b"FAIL\texample.com/x\t0.01s"));
    }

    #[test]
    fn timeout_panic_makes_running_test_an_error() {
        let input = [
            event("run", Some("TestSlow"), None),
            event("output", Some("TestSlow"), Some("=== RUN   TestSlow\n")),
            event("output", None, Some("panic: test timed out after 1s\n")),
            event(
                "output",
                None,
                Some("\trunning tests:\n\t\tTestSlow (1s)\n"),
            ),
            event("output", None, Some("FAIL\texample.com/m\t1.01s\n")),
            event("fail", None, None),
        ]
        .concat();
        let (executions, _) = run(&input).unwrap();
        assert_eq!(executions.len(), 1);
        assert_eq!(executions[0].test_id, "example.com/m::TestSlow");
        assert_eq!(executions[0].outcome, Outcome::Error);
        let failure = executions[0].failure.as_ref().unwrap();
        assert_eq!(failure.exception.as_deref(), Some("panic"));
        assert_eq!(failure.message, "test timed out after 1s");
    }

    #[test]
    fn go_1_24_build_events() {
        let input = concat!(
            r##"{"ImportPath":"example.com/m [example.com/m.test]","Action":"build-output","Output":"# example.com/m [example.com/m.test]\n"}"##,
            "\n",
            r#"{"ImportPath":"example.com/m [example.com/m.test]","Action":"build-output","Output":"./m_test.go:4:2: undefined: nope\n"}"#,
            "\n",
            r#"{"ImportPath":"example.com/m [example.com/m.test]","Action":"build-fail"}"#,
            "\n",
            r#"{"Time":"2025-01-01T00:00:00Z","Action":"start","Package":"example.com/m"}"#,
            "\n",
            r#"{"Time":"2025-01-01T00:00:00Z","Action":"output","Package":"example.com/m","Output":"FAIL\texample.com/m [build failed]\n"}"#,
            "\n",
            r#"{"Time":"2025-01-01T00:00:00Z","Action":"fail","Package":"example.com/m","Elapsed":0,"FailedBuild":"example.com/m [example.com/m.test]"}"#,
            "\n",
            "FAIL\texample.com/m [build failed]\n",
        );
        let (executions, _) = run(input).unwrap();
        assert_eq!(executions.len(), 1);
        assert_eq!(executions[0].test_id, "example.com/m");
        let failure = executions[0].failure.as_ref().unwrap();
        assert_eq!(failure.exception.as_deref(), Some("build failed"));
        assert_eq!(failure.message, "undefined: nope");
        assert_eq!(
            failure
                .failing_frame
                .as_ref()
                .map(Frame::location)
                .as_deref(),
            Some("m_test.go:4")
        );
    }

    #[test]
    fn truncated_stream_and_broken_lines() {
        let input = [
            event("run", Some("TestA"), None),
            event("run", Some("TestB"), None),
            event("pass", Some("TestB"), None),
            r#"{"Action":"pass","Package":"example.com/m","Test":"TestA""#.to_owned(),
        ]
        .concat();
        let (executions, summary) = run(&input).unwrap();
        assert_eq!(executions.len(), 2);
        assert_eq!(executions[1].test_id, "example.com/m::TestA");
        assert_eq!(executions[1].outcome, Outcome::Error);
        assert_eq!(summary.warnings.len(), 2, "{:?}", summary.warnings);
    }

    /// Streams captured from go 1.19: `go test -json` on a package whose `TestMain` is
    /// `os.Exit(3)`, the same binary run by `go tool test2json -t` (a batched replay), and a
    /// `TestMain` that prints why before it exits.
    const TEST_MAIN_EXIT: &str = concat!(
        r#"{"Time":"2026-12-04T18:31:32.565115502Z","Action":"output","Package":"example.com/g1/a","Output":"exit status 3\n"}"#,
        "\n",
        r#"{"Time":"2026-12-04T18:31:32.565161641Z","Action":"output","Package":"example.com/g1/a","Output":"FAIL\texample.com/g1/a\t0.011s\n"}"#,
        "\n",
        r#"{"Time":"2026-12-04T18:31:32.565165767Z","Action":"fail","Package":"example.com/g1/a","Elapsed":0.011}"#,
        "\n",
    );
    const TEST_MAIN_EXIT_TEST2JSON: &str = concat!(
        r#"{"Time":"2026-12-04T18:34:17.001709898Z","Action":"output","Package":"example.com/g1/a","Output":"test2json: exit status 3\n"}"#,
        "\n",
        r#"{"Time":"2026-12-04T18:34:17.00200015Z","Action":"fail","Package":"example.com/g1/a","Elapsed":0.003}"#,
        "\n",
    );
    const TEST_MAIN_SAYS_WHY: &str = concat!(
        r#"{"Time":"2026-12-04T18:34:43.914863882Z","Action":"output","Package":"example.com/g3/c","Output":"connecting to the database\n"}"#,
        "\n",
        r#"{"Time":"2026-12-04T18:34:43.9149765Z","Action":"output","Package":"example.com/g3/c","Output":"setup: cannot reach the database\n"}"#,
        "\n",
        r#"{"Time":"2026-12-04T18:34:43.915230949Z","Action":"output","Package":"example.com/g3/c","Output":"FAIL\texample.com/g3/c\t0.002s\n"}"#,
        "\n",
        r#"{"Time":"2026-12-04T18:34:43.91523856Z","Action":"fail","Package":"example.com/g3/c","Elapsed":0.002}"#,
        "\n",
    );

    #[test]
    fn a_package_failing_outside_any_test_says_what_go_printed() {
        let (executions, _) = run(TEST_MAIN_EXIT).unwrap();
        assert_eq!(executions.len(), 1);
        assert_eq!(executions[0].test_id, "example.com/g1/a");
        assert_eq!(executions[0].outcome, Outcome::Error);
        let failure = executions[0].failure.as_ref().unwrap();
        assert_eq!(failure.exception, None);
        assert_eq!(failure.message, "exit status 3");
        assert!(
            failure.text.contains("FAIL\texample.com/g1/a\t0.011s"),
            "the details keep go's whole output: {:?}",
            failure.text
        );

        // A batched replay runs the same binary under test2json: same message, so the
        // same signature.
        let (replayed, _) = run(TEST_MAIN_EXIT_TEST2JSON).unwrap();
        let replayed = replayed[0].failure.as_ref().unwrap();
        assert_eq!(replayed.message, "exit status 3");
        assert_eq!(replayed.signature(), failure.signature());

        let (executions, _) = run(TEST_MAIN_SAYS_WHY).unwrap();
        let failure = executions[0].failure.as_ref().unwrap();
        assert_eq!(
            failure.message,
            "connecting to the database | setup: cannot reach the database"
        );
    }

    #[test]
    fn a_package_message_is_its_last_lines_bounded() {
        let mut text = String::new();
        for i in 0..100 {
            writeln!(text, "setup line {i}").unwrap();
        }
        text.push_str(&"x".repeat(2 * MAX_MESSAGE_CHARS));
        text.push_str("\nexit status 1\nFAIL\texample.com/m\t0.01s\nFAIL\n");
        let message = package_message(&text);
        assert!(message.starts_with("xxx"), "{message}");
        assert_eq!(message.chars().count(), MAX_MESSAGE_CHARS);
        assert_eq!(
            package_message("line 98\nline 99\n[candor: 10 bytes not kept]\nexit status 2\n"),
            "line 99 | exit status 2"
        );
        assert_eq!(
            package_message("\nFAIL\texample.com/m\t0.01s\n"),
            "the package failed outside any test and printed nothing"
        );
    }

    #[test]
    fn text_without_events_is_not_go_test_output() {
        let error = run("# Title\nsome words\n").unwrap_err();
        assert!(matches!(error, ParseError::NotResults { .. }));
    }

    proptest::proptest! {
        #![proptest_config(crate::test_support::proptest_config(128))]

        #[test]
        fn any_mix_of_lines_parses_without_panicking(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    ("(run|output|pass|fail|skip|bench|pause|cont|start|attr|bogus)", proptest::option::of("Test[A-Z/]{0,6}"), "\\PC{0,20}")
                        .prop_map(|(action, test, out)| event(&action, test.as_deref(), Some(&out))),
                    "(pass|fail|skip)".prop_map(|action| event(&action, None, None)),
                    "\\PC{0,40}",
                    "# [a-z/]{1,10}( \\[[a-z.]{1,8}\\])?",
                    "FAIL\t[a-z/]{0,10} \\[(build|setup) failed\\]",
                    "\\{\"Action\"[ -~]{0,30}",
                ],
                0..30,
            )
        ) {
            let input = lines.join("\n");
            let mut count = 0u64;
            let result = parse(input.as_bytes(), &ParseOptions::default(), &mut |_| {
                count += 1;
                Ok(())
            });
            match result {
                Ok(summary) => proptest::prop_assert_eq!(summary.executions, count),
                Err(error) => {
                    let not_results = matches!(error, ParseError::NotResults { .. });
                    proptest::prop_assert!(not_results, "unexpected error {:?}", error);
                }
            }
        }
    }

    #[test]
    fn output_keeps_head_and_tail() {
        let mut output = Output::default();
        for i in 0..20_000 {
            output.push(&format!("line {i} é\n"));
        }
        let text = output.text();
        assert!(text.starts_with("line 0 é\n"));
        assert!(text.ends_with("line 19999 é\n"));
        assert!(text.contains("bytes not kept]"));
        assert!(text.len() <= MAX_TEXT_BYTES + 64);
    }
}
