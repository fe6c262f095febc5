//! Reading runners' result files into the result model: format detection by content,
//! the streaming parsers, stack-trace frames and failure signatures. No I/O beyond a reader.

pub mod frames;
pub mod gotest;
pub mod ids;
pub mod jestjson;
pub mod junit;
pub mod libtest;
pub mod model;
pub mod playwrightjson;
pub mod signature;

use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::sync::LazyLock;

use serde::Serialize;

pub use model::{Execution, Failure, Frame, Outcome};

/// How many bytes are looked at to decide the format. Large enough for a long XML
/// prologue or a few hundred non-JSON lines before the first event.
pub const SNIFF_BYTES: usize = 64 * 1024;

/// A result format candor reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// JUnit/xUnit XML in any of its dialects.
    Junit,
    /// libtest's JSON lines (`cargo test -- -Z unstable-options --format json`, nextest's
    /// libtest-json).
    LibtestJson,
    /// `go test -json`.
    GoTestJson,
    /// jest's JSON report (`--json`), which vitest's `json` reporter writes too.
    JestJson,
    /// Playwright Test's JSON report (`--reporter=json`).
    PlaywrightJson,
}

impl Format {
    /// The stable name shown to users and stored with each run.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Junit => "junit",
            Format::LibtestJson => "libtest-json",
            Format::GoTestJson => "go-test-json",
            Format::JestJson => "jest-json",
            Format::PlaywrightJson => "playwright-json",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What parsers need to know beyond the bytes.
#[derive(Debug, Clone, Default)]
pub struct ParseOptions {
    /// Absolute path of the repository root, used to make frame paths relative and to
    /// find the failing frame. `None`: only already-relative paths count as the repo's.
    pub repo_root: Option<String>,
    /// The test binary (nextest's binary id: `pkg`, `pkg::integration`, `pkg::bin/name`)
    /// that a libtest JSON stream's test names belong to, which libtest itself never
    /// says: its tests get `binary::module::test`, the id nextest and `candor test` give
    /// them. Names that carry their binary (`binary$test`, nextest's spelling) keep it.
    pub test_binary: Option<String>,
}

/// Where in the input a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// 1-based line and column (columns count bytes).
    LineColumn {
        /// 1-based line.
        line: u64,
        /// 1-based column, in bytes.
        column: u64,
    },
    /// A byte offset into the (decoded, UTF-8) input, resolved to a line and column by
    /// [`locate`] when the input can be read again.
    Offset(u64),
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Position::LineColumn { line, column } => write!(f, "{line}:{column}"),
            Position::Offset(offset) => write!(f, "byte {offset}"),
        }
    }
}

/// Why a file could not be read as results. Every variant says what to do next through
/// [`ParseError::hint`].
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// The input is not well formed (XML or JSON syntax, a forbidden character, truncation).
    #[error("{position}: {message}")]
    Syntax {
        /// Where it went wrong.
        position: Position,
        /// What is wrong, as a lowercase fragment.
        message: String,
    },
    /// Well formed, but not a results format candor reads (`<bogus>`, TRX, mocha JSON…).
    #[error("{position}: {message}")]
    NotResults {
        /// Where the deciding element or line is.
        position: Position,
        /// What it is instead, when that can be told.
        message: String,
    },
    /// Well formed, but the options cannot name its tests right: a `test_binary` given
    /// for a stream of several test binaries.
    #[error("{position}: {message}")]
    Ambiguous {
        /// Where the second binary starts.
        position: Position,
        /// What is ambiguous.
        message: String,
    },
    /// Reading the input failed.
    #[error("could not read the input")]
    Io(#[from] std::io::Error),
    /// The consumer of executions (the store) refused one.
    #[error("could not store an execution")]
    Sink(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl ParseError {
    /// A short instruction for the reader of the error.
    pub fn hint(&self) -> &'static str {
        match self {
            ParseError::Syntax { .. } => {
                "the file is damaged or cut short; regenerate it from the runner, nothing from it was stored"
            }
            ParseError::NotResults { .. } => {
                "candor reads JUnit XML, libtest JSON, `go test -json`, jest/vitest JSON and Playwright JSON; ask the runner for one of those"
            }
            ParseError::Ambiguous { .. } => {
                "give --binary or --crate only for libtest JSON, one test binary's results per file (docs/formats.md#test-ids); nothing from this file was stored"
            }
            ParseError::Io(_) => "check that the file exists and is readable",
            ParseError::Sink(_) => "see the cause below; nothing from this file was stored",
        }
    }

    /// The position, if the error has one.
    pub fn position(&self) -> Option<Position> {
        match self {
            ParseError::Syntax { position, .. }
            | ParseError::NotResults { position, .. }
            | ParseError::Ambiguous { position, .. } => Some(*position),
            _ => None,
        }
    }

    /// Replaces a byte-offset position by a line and column.
    #[must_use]
    pub fn with_position(mut self, resolved: Position) -> ParseError {
        if let ParseError::Syntax { position, .. }
        | ParseError::NotResults { position, .. }
        | ParseError::Ambiguous { position, .. } = &mut self
        {
            *position = resolved;
        }
        self
    }
}

/// Receives executions as a parser produces them, one at a time.
pub type Sink<'a> = dyn FnMut(Execution) -> Result<(), ParseError> + 'a;

/// What a parser saw besides executions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ParseSummary {
    /// The format that was read.
    pub format: Option<Format>,
    /// The producing tool, when the content says (`pytest`, `surefire`, `nextest`, …).
    pub producer: Option<String>,
    /// Executions handed to the sink (before any retry merging).
    pub executions: u64,
    /// Things that were tolerated and that a careful reader may want to know.
    pub warnings: Vec<String>,
}

/// Detects the format from the content and parses, handing each execution to `sink`.
///
/// Memory does not grow with the input beyond one test case: parsers keep only the
/// current case and the enclosing suites' names.
pub fn parse<R: Read>(
    reader: R,
    options: &ParseOptions,
    sink: &mut Sink<'_>,
) -> Result<ParseSummary, ParseError> {
    parse_buffered(BufReader::with_capacity(SNIFF_BYTES, reader), options, sink)
}

/// [`parse`] of a reader that buffers already (ingest's, which hashes what it reads):
/// a second buffer over it would copy every byte of the file once more. Its first
/// `fill_buf` must hold what [`detect`] needs, as a fresh buffer of [`SNIFF_BYTES`] does.
pub fn parse_buffered<R: BufRead>(
    mut reader: R,
    options: &ParseOptions,
    sink: &mut Sink<'_>,
) -> Result<ParseSummary, ParseError> {
    let format = sniff(&mut reader)?;
    if options.test_binary.is_some() && format != Format::LibtestJson {
        return Err(ParseError::Ambiguous {
            position: Position::LineColumn { line: 1, column: 1 },
            message: format!(
                "this is {format}, and a test binary is named only for libtest JSON, which does not name its own (nextest's JUnit and libtest-json do)"
            ),
        });
    }
    let mut summary = match format {
        Format::Junit => junit::parse(reader, options, sink)?,
        Format::LibtestJson => libtest::parse(reader, options, sink)?,
        Format::GoTestJson => gotest::parse(reader, options, sink)?,
        Format::JestJson => jestjson::parse(reader, options, sink)?,
        Format::PlaywrightJson => playwrightjson::parse(reader, options, sink)?,
    };
    summary.format = Some(format);
    Ok(summary)
}

/// Parses everything and merges repeated test cases as retries, keeping first-seen order.
/// For tests and small files; ingest streams into the store instead.
pub fn parse_all<R: Read>(
    reader: R,
    options: &ParseOptions,
) -> Result<(Vec<Execution>, ParseSummary), ParseError> {
    let mut merged: Vec<Execution> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let summary = parse(reader, options, &mut |execution: Execution| {
        if let Some(&at) = index.get(&execution.test_id) {
            merged[at].absorb_retry(execution);
        } else {
            index.insert(execution.test_id.clone(), merged.len());
            merged.push(execution);
        }
        Ok(())
    })?;
    Ok((merged, summary))
}

/// Decides the format by looking at the first [`SNIFF_BYTES`] without consuming them.
pub fn sniff<R: BufRead>(reader: &mut R) -> Result<Format, ParseError> {
    let head = reader.fill_buf()?;
    // A reader whose buffer holds more (ingest's chunks) is judged on the same prefix.
    detect(&head[..head.len().min(SNIFF_BYTES)])
}

/// The content rules behind [`sniff`], on a prefix of the input.
///
/// XML (or a UTF-16 byte-order mark) is JUnit; the first line that is a libtest or
/// `go test -json` event decides between those two, wherever it is in the prefix, since
/// both streams may start with plain output; a `go test` build-failure line (`# pkg`,
/// `FAIL\tpkg [build failed]`) before any event means `go test`. Anything else is not
/// results, and the error names the JSON report it recognises (mocha, RSpec, Playwright,
/// Cucumber, Dart/Flutter, Bazel BEP, pytest-reportlog, Jest) where it can tell.
pub fn detect(head: &[u8]) -> Result<Format, ParseError> {
    let at_start = Position::LineColumn { line: 1, column: 1 };
    // UTF-16 byte-order marks: only XML is written that way in practice.
    if head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]) {
        return Ok(Format::Junit);
    }
    let text = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let Some(first) = text.iter().position(|b| !b.is_ascii_whitespace()) else {
        return Err(ParseError::NotResults {
            position: at_start,
            message: "the file is empty: no test results in it".into(),
        });
    };
    if text[first] == b'<' {
        return Ok(Format::Junit);
    }
    for (number, line) in text.split(|b| *b == b'\n').enumerate() {
        let line = line.trim_ascii();
        if line.starts_with(b"{") {
            if let Ok(value) = serde_json::from_slice::<serde_json::Value>(line) {
                if let Some(format) = json_event_format(&value) {
                    return Ok(format);
                }
                if value.get("$report_type").is_some() {
                    return Err(ParseError::NotResults {
                        position: Position::LineColumn {
                            line: number as u64 + 1,
                            column: 1,
                        },
                        message: not_read_yet(PYTEST_REPORTLOG),
                    });
                }
            }
        } else if gotest::is_build_failure_line(line) {
            return Ok(Format::GoTestJson);
        }
    }
    let (position, message) = match describe_json_report(&text[first..]) {
        Some(JEST_JSON) => return Ok(Format::JestJson),
        Some(PLAYWRIGHT_JSON) => return Ok(Format::PlaywrightJson),
        Some(what) => (at_start, not_read_yet(what)),
        None if matches!(text[first], b'{' | b'[') => describe_json(text, head.len()),
        None if is_libtest_listing(text) => (
            at_start,
            "a libtest test listing (`cargo test -- --list`): test names, no results".into(),
        ),
        None => (
            at_start,
            "neither XML nor a stream of libtest or `go test -json` events".into(),
        ),
    };
    Err(ParseError::NotResults { position, message })
}

/// What JSON that is no event stream is: a whole document, several JSON values (lines),
/// or malformed JSON, with where it breaks. `read` is how much of the file the prefix
/// holds: a prefix as long as [`SNIFF_BYTES`] may be cut mid-document.
fn describe_json(text: &[u8], read: usize) -> (Position, String) {
    let at_start = Position::LineColumn { line: 1, column: 1 };
    let mut values = serde_json::Deserializer::from_slice(text).into_iter::<serde_json::Value>();
    let mut count = 0u64;
    let error = loop {
        match values.next() {
            None => break None,
            Some(Ok(_)) => count += 1,
            Some(Err(error)) => break Some(error),
        }
    };
    match (error, count) {
        (None, 1) => (
            at_start,
            "a JSON document, not a stream of libtest or `go test -json` events".into(),
        ),
        (None, n) => (
            at_start,
            format!("{n} JSON values, none of them a libtest or `go test -json` event"),
        ),
        (Some(error), _) if error.is_eof() && read >= SNIFF_BYTES => (
            at_start,
            "a JSON document (read in part), not a stream of libtest or `go test -json` events"
                .into(),
        ),
        (Some(error), _) => {
            // serde_json says column 0 at the very end of a line; columns here start at 1.
            let position = Position::LineColumn {
                line: error.line() as u64,
                column: (error.column() as u64).max(1),
            };
            let what = if error.is_eof() {
                "malformed JSON: the file ends before the JSON value does (cut short?)".to_owned()
            } else {
                let detail = error.to_string();
                let detail = detail
                    .split(" at line ")
                    .next()
                    .unwrap_or(&detail)
                    .to_owned();
                format!("malformed JSON ({detail}), so neither a report nor an event stream")
            };
            (position, what)
        }
    }
}

/// `cargo test -- --list`: lines `path::name: test` (or `: bench`), then a count line.
fn is_libtest_listing(text: &[u8]) -> bool {
    let text = String::from_utf8_lossy(text);
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let listed = |line: &str| {
        line.strip_suffix(": test")
            .or_else(|| line.strip_suffix(": bench"))
            .is_some_and(|name| !name.is_empty() && !name.contains(char::is_whitespace))
    };
    lines.next().is_some_and(listed)
}

const JEST_JSON: &str = "a Jest/Vitest JSON report (`--json`)";

const PLAYWRIGHT_JSON: &str = "a Playwright JSON report (`--reporter=json`)";

const PYTEST_REPORTLOG: &str = "a pytest-reportlog stream (`pytest --report-log`)";

fn not_read_yet(what: &str) -> String {
    format!("{what}, which candor does not read yet")
}

/// Object keys as they appear in JSON text: `"key":`.
static JSON_KEY: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r#""([^"\\]{1,64})"\s*:"#).expect("the JSON key pattern is valid")
});

/// Names the JSON report a prefix belongs to, judged by the keys each tool writes early.
/// Works on a prefix, so a document cut short by [`SNIFF_BYTES`] is still recognised.
fn describe_json_report(head: &[u8]) -> Option<&'static str> {
    let text = String::from_utf8_lossy(head);
    let keys: std::collections::HashSet<&str> = JSON_KEY
        .captures_iter(&text)
        .filter_map(|caps| caps.get(1).map(|m| m.as_str()))
        .collect();
    let has = |key: &str| keys.contains(key);
    let starts_array = text.trim_start().starts_with('[');
    if has("$report_type") {
        Some(PYTEST_REPORTLOG)
    } else if has("protocolVersion") || (has("testID") && has("suiteID")) {
        Some("a Dart/Flutter test JSON event stream (`dart test --reporter json`)")
    } else if has("numTotalTests") && has("testResults") {
        Some(JEST_JSON)
    } else if has("config") && (has("configFile") || has("rootDir")) {
        Some(PLAYWRIGHT_JSON)
    } else if has("stats") && has("passes") && has("pending") {
        Some("a mocha JSON report (`--reporter json`)")
    } else if has("examples") && (has("summary_line") || has("full_description")) {
        Some("an RSpec JSON report (`--format json`)")
    } else if starts_array && has("keyword") && has("elements") {
        Some("a Cucumber JSON report (`--format json`)")
    } else if has("id") && (has("buildMetadata") || has("children") || has("testResult")) {
        Some("a Bazel Build Event Protocol JSON stream (`--build_event_json_file`)")
    } else if has("collectors") && has("exitcode") {
        Some("a pytest-json-report report (`--json-report`)")
    } else {
        None
    }
}

/// The format a single JSON line is an event of, if any: `go test -json` events carry an
/// `Action` (with `Package`, `Time` or, for go ≥ 1.24 build output, `ImportPath`);
/// libtest events a `type` of suite/test/bench/report with an `event`, a report's
/// `total_time` or a bench's `median`.
fn json_event_format(value: &serde_json::Value) -> Option<Format> {
    let object = value.as_object()?;
    if object
        .get("Action")
        .is_some_and(serde_json::Value::is_string)
        && (object.contains_key("Package")
            || object.contains_key("Time")
            || object.contains_key("ImportPath"))
    {
        return Some(Format::GoTestJson);
    }
    match object.get("type").and_then(serde_json::Value::as_str) {
        Some("suite" | "test" | "bench" | "report")
            if object.contains_key("event")
                || object.contains_key("total_time")
                || object.contains_key("median") =>
        {
            Some(Format::LibtestJson)
        }
        _ => None,
    }
}

/// When the run started, if the head of the file says: the first `timestamp` attribute of
/// a JUnit file (its outermost suite), or the `Time` of the first `go test -json` event.
/// libtest JSON carries no time. A time without a zone is read as UTC, which is what
/// JUnit writers that omit the zone mean in CI (and the hour matters only for ordering).
pub fn started_at_hint(head: &[u8]) -> Option<jiff::Timestamp> {
    started_at_stamp(head).map(|(at, _)| at)
}

/// [`started_at_hint`], and whether the file's timestamp stated its time zone (pytest,
/// Surefire and most JUnit writers write local time without one, read as UTC).
pub fn started_at_stamp(head: &[u8]) -> Option<(jiff::Timestamp, bool)> {
    // Byte classes (`(?-u)`): every ingest compiles these, and with Unicode's classes and
    // word boundaries they took 1.7 ms of a small file's 17 (0.2 ms without); what they
    // capture is checked as UTF-8 below.
    static JUNIT: LazyLock<regex::bytes::Regex> = LazyLock::new(|| {
        regex::bytes::Regex::new(
            r#"(?-u)<testsuites?\b[^>]*?\btimestamp\s*=\s*["']([^"']{10,40})["']"#,
        )
        .expect("the timestamp pattern is valid")
    });
    static GO: LazyLock<regex::bytes::Regex> = LazyLock::new(|| {
        regex::bytes::Regex::new(r#"(?-u)(?m)^\{"Time":"([^"]{10,40})""#)
            .expect("the Time pattern is valid")
    });
    let text = JUNIT.captures(head).or_else(|| GO.captures(head))?;
    let text = std::str::from_utf8(text.get(1)?.as_bytes()).ok()?.trim();
    let at = parse_time(text).filter(|at| *at >= EARLIEST_START)?;
    let zoned = text.parse::<jiff::Timestamp>().is_ok()
        || text.ends_with(" UTC")
        || jiff::fmt::rfc2822::parse(text).is_ok();
    Some((at, zoned))
}

/// Times before this are placeholders, not starts: Go's zero time
/// (`0001-01-01T00:00:00Z`, what a writer prints for a time it never set) and the Unix
/// epoch. The run's start is then the ingest time, as for a file without one.
const EARLIEST_START: jiff::Timestamp = jiff::Timestamp::constant(86_400, 0);

fn parse_time(text: &str) -> Option<jiff::Timestamp> {
    if let Ok(at) = text.parse::<jiff::Timestamp>() {
        return Some(at);
    }
    // RFC 1123 / RFC 2822 (`Sat, 03 Dec 2022 23:10:07 GMT`), as .NET and some Java writers
    // spell it.
    if let Ok(zoned) = jiff::fmt::rfc2822::parse(text) {
        return Some(zoned.timestamp());
    }
    // `2021-03-07T10:36:56 UTC` (TestNG) and `2023-05-15T 08:22:02Z`.
    let cleaned = text.trim_end_matches(" UTC").replace("T ", "T");
    if let Ok(at) = cleaned.parse::<jiff::Timestamp>() {
        return Some(at);
    }
    let civil = cleaned
        .trim_end_matches('Z')
        .parse::<jiff::civil::DateTime>()
        .ok()?;
    civil
        .to_zoned(jiff::tz::TimeZone::UTC)
        .ok()
        .map(|zoned| zoned.timestamp())
}

/// Resolves a byte offset to a 1-based line and column by reading `reader` again.
pub fn locate<R: Read>(reader: R, offset: u64) -> std::io::Result<Position> {
    let mut line = 1;
    let mut line_start = 0u64;
    let mut seen = 0u64;
    let mut reader = BufReader::new(reader);
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() || seen >= offset {
            break;
        }
        let take = chunk.len().min((offset - seen) as usize);
        for (i, byte) in chunk[..take].iter().enumerate() {
            if *byte == b'\n' {
                line += 1;
                line_start = seen + i as u64 + 1;
            }
        }
        seen += take as u64;
        reader.consume(take);
    }
    Ok(Position::LineColumn {
        line,
        column: offset.saturating_sub(line_start) + 1,
    })
}

#[cfg(test)]
mod started_at_tests {
    use super::started_at_hint;

    #[test]
    fn reads_the_first_suite_timestamp_in_its_usual_spellings() {
        let at = |head: &str| started_at_hint(head.as_bytes()).map(|t| t.to_string());
        assert_eq!(
            at(
                r#"<testsuites><testsuite name="pytest" timestamp="2026-10-06T09:14:02.118402" hostname="x">"#
            ),
            Some("2026-10-06T09:14:02.118402Z".into())
        );
        assert_eq!(
            at(r"<testsuite timestamp='2021-03-07T10:36:56 UTC'>"),
            Some("2021-03-07T10:36:56Z".into())
        );
        assert_eq!(
            at(r#"<testsuite timestamp="2024-01-09T07:50:12.664+09:00">"#),
            Some("2024-01-08T22:50:12.664Z".into())
        );
        assert_eq!(
            at(r#"{"Time":"2019-10-09T00:00:00.284172551+00:00","Action":"run"}"#),
            Some("2019-10-09T00:00:00.284172551Z".into())
        );
        assert_eq!(at(r#"<testsuite timestamp="<<computed>>">"#), None);
        // Issue 16 item 9: RFC 1123, and Go's zero time is no start.
        assert_eq!(
            at(r#"<testsuite name="x" timestamp="Sat, 03 Dec 2022 23:10:07 GMT">"#),
            Some("2022-12-03T23:10:07Z".into())
        );
        assert_eq!(
            at(r#"<testsuite timestamp="Tue, 1 Nov 2022 08:00:00 +0100">"#),
            Some("2022-11-01T07:00:00Z".into())
        );
        assert_eq!(at(r#"<testsuite timestamp="0001-01-01T00:00:00Z">"#), None);
        assert_eq!(
            at(r#"{"Time":"0001-01-01T00:00:00Z","Action":"run"}"#),
            None
        );
        assert_eq!(at(r#"<testsuite timestamp="1970-01-01T00:00:00">"#), None);
        assert_eq!(at(r#"{ "type": "suite", "event": "started" }"#), None);
    }

    /// The patterns read bytes: a non-ASCII name before the attribute is passed over as
    /// before, and a value that is not UTF-8 is no start rather than a panic.
    #[test]
    fn reads_bytes_around_the_timestamp_and_refuses_a_value_that_is_not_utf8() {
        assert_eq!(
            started_at_hint(
                "<testsuite name=\"café ✓\" timestamp=\"2026-10-06T09:14:02\">".as_bytes()
            )
            .map(|t| t.to_string()),
            Some("2026-10-06T09:14:02Z".into())
        );
        assert_eq!(
            started_at_hint(b"<testsuite name=\"\xff\" timestamp=\"2026-10-06T09:14:02\">")
                .map(|t| t.to_string()),
            Some("2026-10-06T09:14:02Z".into())
        );
        assert_eq!(
            started_at_hint(b"<testsuite timestamp=\"2026-10-06T09:14:\xff\xfe\">"),
            None
        );
        // A word that only starts with `testsuite` is not a suite.
        assert_eq!(
            started_at_hint(b"<testsuitex timestamp=\"2026-10-06T09:14:02\">"),
            None
        );
    }
}

/// Issue 16 item 9: files that hold fewer results than they look like are stored with a
/// warning that says what they looked like.
#[cfg(test)]
mod fidelity_tests {
    use super::{ParseOptions, parse_all};

    fn warnings(text: &str) -> Vec<String> {
        parse_all(text.as_bytes(), &ParseOptions::default())
            .expect("it parses")
            .1
            .warnings
    }

    #[test]
    fn a_header_declaring_far_more_tests_than_the_file_holds_is_warned_of() {
        let cut = r#"<testsuites tests="939" failures="3"><testsuite name="a" tests="939"><testcase classname="a" name="t"/></testsuite></testsuites>"#;
        assert_eq!(
            warnings(cut),
            [
                "the file's header declares tests=\"939\" but it holds 1 test case(s): it looks cut short or stripped of its cases; only the cases it holds are stored"
            ]
        );
        let suites_only = r#"<testsuites><testsuite name="a" tests="500"><testcase classname="a" name="t"/></testsuite><testsuite name="b" tests="439"/></testsuites>"#;
        // Surefire counts reruns in `tests`: three declared for one flaky case is no cut.
        let reruns = r#"<testsuite tests="3"><testcase classname="a" name="t"><flakyFailure message="x"/><flakyFailure message="y"/></testcase></testsuite>"#;
        assert!(warnings(reruns).is_empty(), "{:?}", warnings(reruns));
        assert!(warnings(suites_only)[0].contains("declares tests=\"939\""));
        let empty = r#"<testsuite name="pytest" tests="0" errors="0"></testsuite>"#;
        assert_eq!(
            warnings(empty),
            [
                "the file holds no test case (root <testsuite>, 1 <testsuite> element(s), declaring tests=\"0\"); it is stored as a run with no tests"
            ]
        );
        // A file that holds what it declares, or about it, is not warned of.
        let whole = r#"<testsuite tests="2"><testcase classname="a" name="t"/><testcase classname="a" name="u"/></testsuite>"#;
        assert!(warnings(whole).is_empty());
    }

    #[test]
    fn malformed_json_and_plain_listings_are_described_as_what_they_are() {
        let message = |text: &str| match super::detect(text.as_bytes()) {
            Err(super::ParseError::NotResults { position, message }) => {
                format!("{position}: {message}")
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(
            message("{\"a\": 1,\n \"b\": }\n"),
            "2:7: malformed JSON (expected value), so neither a report nor an event stream"
        );
        assert!(
            message("{\"a\": [1, 2").starts_with("1:11: malformed JSON: the file ends before"),
            "{}",
            message("{\"a\": [1, 2")
        );
        assert_eq!(
            message("{\"a\": 1}"),
            "1:1: a JSON document, not a stream of libtest or `go test -json` events"
        );
        assert_eq!(
            message("{\"a\": 1}\n{\"b\": 2}\n"),
            "1:1: 2 JSON values, none of them a libtest or `go test -json` event"
        );
        assert_eq!(
            message("tests::a: test\ntests::b: test\n\n2 tests, 0 benchmarks\n"),
            "1:1: a libtest test listing (`cargo test -- --list`): test names, no results"
        );
    }

    /// Issue #20: a jest or vitest JSON report (`--json`) is read, not refused, and its
    /// paths are made relative to the repository root.
    #[test]
    fn a_jest_json_report_is_read_through_detection() {
        let report = r#"{"numFailedTestSuites":0,"numTotalTests":1,"testResults":[{"name":"/ci/repo/src/a.test.ts","status":"passed","message":"","assertionResults":[{"ancestorTitles":["cart"],"title":"totals","status":"passed","invocations":1}]}]}"#;
        assert_eq!(
            super::detect(report.as_bytes()).ok(),
            Some(super::Format::JestJson)
        );
        let options = ParseOptions {
            repo_root: Some("/ci/repo".to_owned()),
            ..ParseOptions::default()
        };
        let (executions, summary) = parse_all(report.as_bytes(), &options).expect("it parses");
        assert_eq!(summary.format, Some(super::Format::JestJson));
        assert_eq!(summary.producer.as_deref(), Some("jest"));
        assert_eq!(executions[0].test_id, "src/a.test.ts::cart > totals");
    }

    #[test]
    fn a_libtest_listing_is_named_for_what_it_is() {
        let listing = concat!(
            "{ \"type\": \"suite\", \"event\": \"discovery\" }\n",
            "{ \"type\": \"test\", \"event\": \"discovered\", \"name\": \"tests::a\", \"ignore\": false }\n",
            "{ \"type\": \"test\", \"event\": \"discovered\", \"name\": \"tests::b\", \"ignore\": false }\n",
            "{ \"type\": \"suite\", \"event\": \"completed\", \"tests\": 2, \"benchmarks\": 0, \"total\": 2, \"ignored\": 0 }\n",
        );
        assert_eq!(
            warnings(listing),
            [
                "the file is a test listing (`--list`: 2 tests discovered, none run), not results; it is stored as a run with no tests"
            ]
        );
    }
}
