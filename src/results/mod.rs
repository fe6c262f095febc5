//! Reading runners' result files into the result model: format detection by content,
//! the streaming parsers, stack-trace frames and failure signatures. No I/O beyond a reader.

pub mod frames;
pub mod gotest;
pub mod ids;
pub mod junit;
pub mod libtest;
pub mod model;
pub mod signature;

use std::fmt;
use std::io::{BufRead, BufReader, Read};

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
}

impl Format {
    /// The stable name shown to users and stored with each run.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Junit => "junit",
            Format::LibtestJson => "libtest-json",
            Format::GoTestJson => "go-test-json",
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
                "candor reads JUnit XML, libtest JSON and `go test -json`; ask the runner for one of those"
            }
            ParseError::Io(_) => "check that the file exists and is readable",
            ParseError::Sink(_) => "see the cause below; nothing from this file was stored",
        }
    }

    /// The position, if the error has one.
    pub fn position(&self) -> Option<Position> {
        match self {
            ParseError::Syntax { position, .. } | ParseError::NotResults { position, .. } => {
                Some(*position)
            }
            _ => None,
        }
    }

    /// Replaces a byte-offset position by a line and column.
    #[must_use]
    pub fn with_position(mut self, resolved: Position) -> ParseError {
        if let ParseError::Syntax { position, .. } | ParseError::NotResults { position, .. } =
            &mut self
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
    let mut reader = BufReader::with_capacity(SNIFF_BYTES, reader);
    let format = sniff(&mut reader)?;
    let mut summary = match format {
        Format::Junit => junit::parse(reader, options, sink)?,
        Format::LibtestJson => libtest::parse(reader, options, sink)?,
        Format::GoTestJson => gotest::parse(reader, options, sink)?,
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
    detect(head)
}

/// The content rules behind [`sniff`], on a prefix of the input.
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
    let mut saw_json_document = false;
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
                        message:
                            "this is a pytest-reportlog stream, which candor does not read yet"
                                .into(),
                    });
                }
            } else if number == 0 && (line == b"{" || line.len() > 1) {
                saw_json_document = true;
            }
        } else if line.starts_with(b"[") && number == 0 {
            saw_json_document = true;
        } else if gotest::is_build_failure_line(line) {
            return Ok(Format::GoTestJson);
        }
    }
    let message = if saw_json_document {
        "a JSON document, not a stream of libtest or `go test -json` events (mocha, rspec, Playwright, Dart and Cucumber JSON reports are not read yet)"
    } else {
        "neither XML nor a stream of libtest or `go test -json` events"
    };
    Err(ParseError::NotResults {
        position: at_start,
        message: message.into(),
    })
}

fn json_event_format(value: &serde_json::Value) -> Option<Format> {
    let object = value.as_object()?;
    if object.contains_key("Action")
        && (object.contains_key("Package") || object.contains_key("Time"))
    {
        return Some(Format::GoTestJson);
    }
    match object.get("type").and_then(serde_json::Value::as_str) {
        Some("suite" | "test" | "bench" | "report")
            if object.contains_key("event") || object.contains_key("total_time") =>
        {
            Some(Format::LibtestJson)
        }
        _ => None,
    }
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
