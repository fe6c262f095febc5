//! Stack traces: frames parsed from failure text for Python, Rust, Go, Java/Kotlin and
//! JavaScript/TypeScript, the failing frame, and a failure's type and message when the
//! runner did not give them separately. Owns no I/O and knows no result format.
//!
//! # Frames
//! Frames are listed innermost first, whatever order the language prints:
//! - Python: CPython `File "x.py", line 10, in f` and pytest's report lines
//!   (`tests/test_x.py:10: AssertionError`, `tests/test_x.py:5: in helper`) are printed
//!   outermost first and are reversed. With chained exceptions ("During handling of the
//!   above exception…", "The above exception was the direct cause…") the last traceback
//!   printed is the one reported, so its frames come first, then the earlier ones.
//!   pytest's long report names no function on its location line; the nearest `def f(`
//!   above it in the same section is used.
//! - Rust: the panic location (`panicked at src/lib.rs:10:9:` and the pre-1.73
//!   `panicked at 'msg', src/lib.rs:10:9`) comes first, then the `RUST_BACKTRACE` frames
//!   in printed order (`N: crate::f` followed by `at ./src/x.rs:5:5`; symbol hashes are
//!   dropped; frames without an `at` line have no file and are left out).
//! - Go: goroutine and race-report stacks (`pkg.Func(...)` then `\t/path/file.go:123
//!   +0x1d`) in printed order, then the `file.go:20: message` lines of `t.Error`/`t.Log` in
//!   printed order, then compiler errors (`./main.go:4:6: message`). `t.Log` lines carry
//!   only the file's base name, and that is what the frame holds.
//! - Java/Kotlin: `at pkg.Class.method(File.java:42)`, the reported exception's frames
//!   first, then each `Caused by:` in printed order; `Suppressed:` blocks and `... N more`
//!   are skipped. The frame's file is the file name as printed (`File.java`): Java traces
//!   carry no directory. The function is `pkg.Class.method`.
//! - JavaScript/TypeScript: V8's `at fn (path/file.ts:1:2)`, `at path/file.js:1:2`,
//!   `at async fn (…)`, `file://` URLs (the scheme is dropped), and Vitest's
//!   `❯ path/file.ts:1:2`. Frames without a line (`at new Promise (<anonymous>)`) are
//!   left out.
//!
//! Every file path is cleaned the same way: `file://` is dropped, backslashes become
//! forward slashes, a leading `./` is dropped, and a path under `ParseOptions::repo_root`
//! is made relative to it. At most [`MAX_FRAMES`] frames are kept.
//!
//! # The failing frame
//! The innermost frame (first in the list) that has a line number and is the
//! repository's own:
//! - Java/Kotlin: the class is not in a JDK, language-runtime, test-framework, build-tool
//!   or common-library package (see [`JAVA_FOREIGN_PACKAGES`]).
//! - every other language: after cleaning, the path is relative, does not start with
//!   `../`, has no `site-packages`, `dist-packages`, `node_modules`, `vendor`,
//!   `third_party`, `.cargo`, `.rustup` or `pkg/mod` segment, and is not the runtime's:
//!   never `<frozen …>`/`<string>`/`<anonymous>`, `node:…` or Node's old `internal/…`
//!   files, `/rustc/…` or Rust's own `library/std/…`-style paths, Go's `_testmain.go`,
//!   `$GOROOT/…`, a `-trimpath` standard-library path (`runtime/…`, `testing/…`), a
//!   module-cache path (a segment with `@version`) or the bare `testing.go` of the
//!   testing package's own log lines.
//!   An absolute path counts only when it was under `repo_root` (it is then relative).
//!
//! # Exception and message
//! A runner-given exception type is kept unless it is vague (empty, containing spaces
//! such as cargo2junit's `cargo test`, or a placeholder such as `failure`); a vague or
//! missing one is replaced by what the text says: Python's final `path:10: SomeError`
//! line, `E   SomeError: msg` line or CPython's last `SomeError: msg`; Rust `panic` with
//! the panic message; Go `panic` (message without ` [recovered]`) or `fatal error`;
//! Java's first line `java.lang.IllegalStateException: msg`; JavaScript's
//! `TypeError: msg` or `AssertionError [ERR_ASSERTION]: msg`. A runner message of the
//! form `SomeError: msg` (pytest's `AssertionError: assert …`) is split into type and
//! message. Go failures from `t.Error` have no type; their message is the first
//! `file.go:N: msg` line's message. The message is always one trimmed line (at most
//! [`MAX_MESSAGE_CHARS`] characters); the full text stays in `Failure::text`.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::ParseOptions;
use super::model::{Failure, Frame, cap_text};

/// Frames kept per failure: enough for any real stack, bounded for a stack overflow.
pub const MAX_FRAMES: usize = 256;

/// A message longer than this (in characters) is cut, so that one giant assertion line
/// does not become the signature's whole input.
pub const MAX_MESSAGE_CHARS: usize = 500;

/// Package prefixes whose Java/Kotlin frames are never the repository's own: the JDK,
/// language runtimes, test frameworks and build tools, and the most common libraries
/// (Spring, Hibernate, Jackson, Netty, …). Java traces carry no paths, so this list is
/// the only way to tell; a repository whose own packages start with one of these gets
/// no failing frame from Java traces. Only named `org.apache.` projects are listed, so
/// that Apache projects' own code still counts.
pub const JAVA_FOREIGN_PACKAGES: &[&str] = &[
    "java.",
    "javax.",
    "jakarta.",
    "jdk.",
    "sun.",
    "com.sun.",
    "kotlin.",
    "kotlinx.",
    "scala.",
    "groovy.",
    "org.codehaus.groovy.",
    "org.junit.",
    "junit.",
    "org.opentest4j.",
    "org.testng.",
    "org.assertj.",
    "org.hamcrest.",
    "org.mockito.",
    "net.bytebuddy.",
    "org.spockframework.",
    "org.scalatest.",
    "io.kotest.",
    "org.apache.maven.",
    "org.apache.commons.",
    "org.apache.http.",
    "org.apache.hc.",
    "org.apache.logging.",
    "org.apache.catalina.",
    "org.apache.tomcat.",
    "org.gradle.",
    "org.springframework.",
    "org.hibernate.",
    "com.zaxxer.hikari.",
    "com.fasterxml.jackson.",
    "com.google.common.",
    "com.google.protobuf.",
    "io.netty.",
    "io.grpc.",
    "reactor.",
    "io.reactivex.",
    "okhttp3.",
    "org.slf4j.",
    "ch.qos.logback.",
    "org.testcontainers.",
    "org.awaitility.",
    "io.restassured.",
    "worker.org.gradle.",
    "org.eclipse.jdt.internal.junit",
    "com.intellij.",
    "androidx.test.",
    "android.",
    "dalvik.",
];

/// The language whose trace format to expect; `Unknown` tries every one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// CPython tracebacks and pytest's long/short report.
    Python,
    /// Panics (`panicked at file:line:col`) and `RUST_BACKTRACE` backtraces.
    Rust,
    /// `file.go:line` frames and goroutine traces.
    Go,
    /// `at pkg.Class.method(File.java:42)` (Kotlin alike).
    Java,
    /// V8/Node `at fn (file.ts:1:2)` frames.
    JavaScript,
    /// Try each.
    Unknown,
}

/// Builds a failure from what the runner gave: a type and message when it separated them,
/// and the full text. Missing parts are read from the text; see the module documentation
/// for the rules.
pub fn build_failure(
    exception: Option<String>,
    message: Option<String>,
    text: String,
    language: Language,
    options: &ParseOptions,
) -> Failure {
    let text = cap_text(text);
    let clean = strip_ansi(&text);
    let mut language = match language {
        Language::Unknown => guess_language(&clean),
        known => known,
    };
    // Python's frames and exception come from one pass over the text; other languages
    // read the text for the exception separately.
    let (mut raw_frames, mut reading) = match language {
        Language::Python => {
            let (mut frames, reading) = python_read(&clean);
            frames.truncate(MAX_FRAMES);
            (frames, Some(reading))
        }
        _ => (parse_frames(&clean, language), None),
    };
    if raw_frames.is_empty() {
        // The caller's language can be wrong (a JUnit file from an unexpected runner, a
        // Python test failing on a subprocess's Java trace): trust the text instead.
        let guessed = guess_language(&clean);
        if guessed != language && guessed != Language::Unknown {
            raw_frames = parse_frames(&clean, guessed);
            if !raw_frames.is_empty() {
                language = guessed;
                reading = None;
            }
        }
    }
    let root = options.repo_root.as_deref().map(clean_root);
    let mut failing_frame = None;
    let frames: Vec<Frame> = raw_frames
        .into_iter()
        .map(|frame| {
            let printed_relative = !is_absolute(&frame.file);
            let frame = relativize(frame, root.as_deref());
            if failing_frame.is_none() && is_repository_frame(&frame, language, printed_relative) {
                failing_frame = Some(frame.clone());
            }
            frame
        })
        .collect();
    let reading = reading.unwrap_or_else(|| read_text(&clean, language));
    let (exception, message) = resolve_exception(exception, message, &clean, language, reading);
    Failure {
        exception,
        message,
        text,
        frames,
        failing_frame,
    }
}

/// Frames found in `text`, innermost first, with paths cleaned but not yet made relative
/// to a repository root.
pub fn parse_frames(text: &str, language: Language) -> Vec<Frame> {
    let mut frames = match language {
        Language::Python => python_frames(text),
        Language::Rust => rust_frames(text),
        Language::Go => go_frames(text),
        Language::Java => java_frames(text),
        Language::JavaScript => javascript_frames(text),
        Language::Unknown => match guess_language(text) {
            Language::Unknown => Vec::new(),
            guessed => parse_frames(text, guessed),
        },
    };
    frames.truncate(MAX_FRAMES);
    frames
}

/// The language a trace is written in, judged by the markers each prints.
pub fn guess_language(text: &str) -> Language {
    if text.contains("panicked at ") || text.contains("stack backtrace:") {
        Language::Rust
    } else if text.contains("Traceback (most recent call last)")
        || CPYTHON_FRAME.is_match(text)
        || PYTEST_LOCATION.is_match(text)
    {
        Language::Python
    } else if text.contains("goroutine ") || GO_LOG_LINE.is_match(text) {
        Language::Go
    } else if JAVA_GUESS.is_match(text) {
        Language::Java
    } else if JS_GUESS.is_match(text) || VITEST_FRAME.is_match(text) {
        Language::JavaScript
    } else {
        Language::Unknown
    }
}

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("frame patterns are valid")
}

static JAVA_GUESS: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?m)^\s*at \S.*\((?:[\w$.-]+\.(?:java|kt|kts|scala|groovy):\d+|Native Method|Unknown Source)\)\s*$",
    )
});
static JS_GUESS: LazyLock<Regex> = LazyLock::new(|| regex(r"(?m)^\s*at .+:\d+:\d+\)?\s*$"));
static ANSI: LazyLock<Regex> = LazyLock::new(|| regex(r"\x1b\[[0-9;?]*[A-Za-z]"));

fn strip_ansi(text: &str) -> Cow<'_, str> {
    if text.contains('\x1b') {
        ANSI.replace_all(text, "")
    } else {
        Cow::Borrowed(text)
    }
}

/// A pattern behind a cheap test that every text it matches passes.
///
/// Traces are read line by line against several patterns, and most lines of a long
/// report (source, locals, separators) match none of them. The test leaves the regex
/// engine to the few lines that can match; the answer is still the pattern's own.
struct Guarded {
    may_match: fn(&str) -> bool,
    pattern: LazyLock<Regex>,
}

impl Guarded {
    const fn new(may_match: fn(&str) -> bool, build: fn() -> Regex) -> Guarded {
        Guarded {
            may_match,
            pattern: LazyLock::new(build),
        }
    }

    /// Whether `text` passes the cheap test (it may match; if not, it cannot).
    fn may_match(&self, text: &str) -> bool {
        (self.may_match)(text)
    }

    fn captures<'t>(&self, text: &'t str) -> Option<Captures<'t>> {
        if (self.may_match)(text) {
            self.pattern.captures(text)
        } else {
            None
        }
    }

    fn is_match(&self, text: &str) -> bool {
        (self.may_match)(text) && self.pattern.is_match(text)
    }
}

fn line_number(digits: &str) -> Option<u32> {
    digits.parse().ok()
}

fn frame(file: &str, line: Option<u32>, function: Option<&str>) -> Frame {
    Frame {
        file: clean_path(file),
        line,
        function: function
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(str::to_owned),
    }
}

// ---------------------------------------------------------------------------------------
// Python

static CPYTHON_FRAME: Guarded = Guarded::new(
    |text| {
        static FILE_QUOTE: LazyLock<memchr::memmem::Finder<'static>> =
            LazyLock::new(|| memchr::memmem::Finder::new("File \""));
        FILE_QUOTE.find(text.as_bytes()).is_some()
    },
    || regex(r#"(?m)^\s*File "([^"]+)", line (\d+)(?:, in (.+?))?\s*$"#),
);
/// pytest's location line; [`pytest_location`] reads single lines the same way, faster.
static PYTEST_LOCATION: Guarded = Guarded::new(
    |text| text.contains(".py:"),
    || regex(r"(?m)^\s*((?:[A-Za-z]:[\\/])?[^:\s][^:]*?\.py):(\d+):(?:[ \t]+(.*?))?[ \t]*$"),
);
/// A `def` line; [`python_def`] reads lines the same way, faster. Not multi-line: `^` is
/// the start of the text.
static PYTHON_DEF: Guarded = Guarded::new(
    |text| {
        let text = text.trim_start();
        text.starts_with("def") || text.starts_with("async")
    },
    || regex(r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\("),
);
static PYTHON_EXCEPTION_LINE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)(?::\s*(.*?))?\s*$"));

/// What [`PYTEST_LOCATION`] captures on one line: `tests/test_x.py:10: AssertionError`.
#[derive(Debug, PartialEq, Eq)]
struct PytestLocation<'t> {
    path: &'t str,
    line: &'t str,
    /// After the second colon, spaces and tabs trimmed; `None` when nothing follows it.
    trailer: Option<&'t str>,
}

/// Reads one line (no `\n`) exactly as [`PYTEST_LOCATION`] does, without the regex
/// engine: a long pytest report has several location lines per failure, read twice (for
/// frames and for the exception), and this was most of the time spent parsing a file.
#[expect(
    clippy::case_sensitive_file_extension_comparisons,
    reason = "the pattern it stands for reads `.py` case-sensitively"
)]
fn pytest_location(line: &str) -> Option<PytestLocation<'_>> {
    // Whitespace holds no colon, so a location's first colon ends its path or its drive:
    // most lines are turned away here without being read further.
    let bytes = line.as_bytes();
    let first_colon = memchr::memchr(b':', bytes)?;
    let before = bytes.get(..first_colon).unwrap_or_default();
    if !before.ends_with(b".py") && !before.last().is_some_and(u8::is_ascii_alphabetic) {
        return None;
    }
    let rest = line.trim_start();
    let drive = rest.as_bytes().get(..3).is_some_and(|head| {
        head[0].is_ascii_alphabetic() && head[1] == b':' && matches!(head[2], b'\\' | b'/')
    });
    // The path holds no colon past the drive, so the first colon after it ends the path.
    let body = if drive { rest.get(3..)? } else { rest };
    let colon = memchr::memchr(b':', body.as_bytes())?;
    let (body_path, after_path) = (body.get(..colon)?, body.get(colon + 1..)?);
    if body_path.len() <= ".py".len()
        || !body_path.ends_with(".py")
        || body_path.starts_with(char::is_whitespace)
    {
        return None;
    }
    let path = rest.get(..rest.len() - body.len() + body_path.len())?;
    let (digits, after_line) = after_path.split_once(':')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        if digits.is_ascii() {
            return None;
        }
        // `\d` takes any Unicode decimal digit: leave those lines to the pattern.
        let caps = PYTEST_LOCATION.captures(line)?;
        return Some(PytestLocation {
            path: caps.get(1)?.as_str(),
            line: caps.get(2)?.as_str(),
            trailer: caps.get(3).map(|m| m.as_str()),
        });
    }
    let trailer = match after_line.chars().next() {
        None => None,
        Some(' ' | '\t') => Some(after_line.trim_matches([' ', '\t'])),
        Some(_) => return None,
    };
    Some(PytestLocation {
        path,
        line: digits,
        trailer,
    })
}

/// The function a `def` line names, read as [`PYTHON_DEF`] reads it: pytest's long report
/// shows the source of every function on the way, so each failure has several.
fn python_def(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    if let Some(after) = rest.strip_prefix("async")
        && after.starts_with(char::is_whitespace)
    {
        rest = after.trim_start();
    }
    let rest = rest.strip_prefix("def")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let rest = rest.trim_start();
    let name_end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let (name, after) = rest.split_at(name_end);
    if after.starts_with(|c: char| !c.is_ascii()) {
        // `\w` and `\s` take non-ASCII letters and spaces: leave those to the pattern.
        return PYTHON_DEF
            .captures(line)
            .and_then(|caps| caps.get(1))
            .map(|m| m.as_str());
    }
    let named = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    (named && after.trim_start().starts_with('(')).then_some(name)
}

/// What follows pytest's `E` marker on one line (no `\n`), trimmed: the line read as
/// `^\s*E\s+(.*?)\s*$`.
fn pytest_e_line(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('E')?;
    rest.starts_with(char::is_whitespace).then(|| rest.trim())
}

const PYTHON_CHAIN_SEPARATORS: [&str; 2] = [
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
];

/// `text.lines()`, each line ending found with `memchr`: Python failures are read line by
/// line twice, and on their many short lines std's search for the newline cost more than
/// everything else done with the line.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let Some(end) = memchr::memchr(b'\n', rest.as_bytes()) else {
            return Some(std::mem::take(&mut rest));
        };
        let (line, after) = rest.split_at(end);
        rest = after.get(1..).unwrap_or_default();
        Some(line.strip_suffix('\r').unwrap_or(line))
    })
}

fn python_frames(text: &str) -> Vec<Frame> {
    python_read(text).0
}

/// The first byte of `line.trim_start()`, found without decoding when the line starts
/// with ASCII (as every line of a traceback does).
fn first_visible(line: &str) -> Option<u8> {
    // ASCII whitespace as `char::is_whitespace` has it (with the vertical tab).
    let first = line
        .bytes()
        .find(|&byte| !matches!(byte, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r'))?;
    if first.is_ascii() {
        Some(first)
    } else {
        line.trim_start().bytes().next()
    }
}

/// Whether `line` is one of the lines that chain two tracebacks.
fn is_chain_separator(line: &str) -> bool {
    // Both are longer than nearly every other line: most lines are settled by length.
    let shortest = PYTHON_CHAIN_SEPARATORS
        .iter()
        .map(|separator| separator.len())
        .min()
        .unwrap_or(0);
    line.len() >= shortest && PYTHON_CHAIN_SEPARATORS.contains(&line.trim())
}

/// A Python traceback read in one pass over its lines: the frames (innermost first) and
/// what the text says of the exception. A pytest report has about thirty lines per
/// failure; reading them twice, once for each, was most of the time spent on failures.
/// Each line goes through the frame rules and then, separately, the exception rules,
/// each in its own order; only the line's readings (location, CPython frame) are shared.
fn python_read(text: &str) -> (Vec<Frame>, TextReading) {
    // A CPython frame line holds `File "`: when the text has none, no line is tried.
    let cpython = CPYTHON_FRAME.may_match(text);
    let mut blocks: Vec<Vec<Frame>> = vec![Vec::new()];
    let mut last_def: Option<String> = None;
    // The location line closing pytest's report names the type: `x.py:10: ValueError`.
    let mut from_location: Option<String> = None;
    let mut first_e_line: Option<&str> = None;
    let mut typed_e_line: Option<(String, String)> = None;
    let mut cpython_final: Option<(String, String)> = None;
    let mut after_cpython_frame = false;
    for line in lines(text) {
        let cpython_frame = if cpython {
            CPYTHON_FRAME.captures(line)
        } else {
            None
        };
        let location = pytest_location(line);
        // Separators, `def` and `E` lines are told by their first visible character:
        // most lines are none of them, and are not read further for them.
        let first = first_visible(line);

        // Frames.
        if matches!(first, Some(b'D' | b'T')) && is_chain_separator(line) {
            blocks.push(Vec::new());
            last_def = None;
        } else if let Some(block) = blocks.last_mut() {
            if let Some(caps) = &cpython_frame {
                block.push(frame(
                    &caps[1],
                    line_number(&caps[2]),
                    caps.get(3).map(|m| m.as_str()),
                ));
            } else if let Some(location) = &location {
                let trailer = location.trailer.unwrap_or_default();
                let function = match trailer.strip_prefix("in ") {
                    Some(function) => Some(function.to_owned()),
                    None => last_def.take(),
                };
                block.push(frame(
                    location.path,
                    line_number(location.line),
                    function.as_deref(),
                ));
                last_def = None;
            } else if matches!(first, Some(b'a' | b'd'))
                && let Some(name) = python_def(line)
            {
                last_def = Some(name.to_owned());
            }
        }

        // The exception.
        if let Some(location) = &location {
            let trailer = location.trailer.unwrap_or_default();
            // An empty trailer (the location lines between frames) names no type.
            if !trailer.is_empty()
                && !trailer.starts_with("in ")
                && let Some((kind, _)) = split_type_prefix(trailer, Language::Python)
            {
                from_location = Some(kind);
            }
            continue;
        }
        if first == Some(b'E')
            && let Some(content) = pytest_e_line(line)
        {
            // `E = 5` is source code that happens to start with `E`, not pytest's marker.
            if content.starts_with('=') {
                continue;
            }
            if first_e_line.is_none() && !content.is_empty() {
                first_e_line = Some(content);
            }
            if typed_e_line.is_none()
                && let Some(split) = split_type_prefix(content, Language::Python)
            {
                typed_e_line = Some(split);
            }
            continue;
        }
        if cpython_frame.is_some() {
            after_cpython_frame = true;
            continue;
        }
        if after_cpython_frame
            && !line.starts_with(char::is_whitespace)
            && let Some(caps) = PYTHON_EXCEPTION_LINE.captures(line)
            && looks_like_type(&caps[1])
        {
            let message = caps.get(2).map_or("", |m| m.as_str()).to_owned();
            cpython_final = Some((caps[1].to_owned(), message));
            after_cpython_frame = false;
        }
    }
    let frames = blocks
        .into_iter()
        .rev()
        .flat_map(|block| block.into_iter().rev())
        .collect();
    let exception = from_location
        .or_else(|| typed_e_line.as_ref().map(|(kind, _)| kind.clone()))
        .or_else(|| cpython_final.as_ref().map(|(kind, _)| kind.clone()));
    let message = match first_e_line {
        Some(line) => Some(strip_type_prefix(line, exception.as_deref()).to_owned()),
        None => cpython_final.map(|(_, message)| message),
    };
    (frames, TextReading { exception, message })
}

fn python_exception(text: &str) -> TextReading {
    python_read(text).1
}

// ---------------------------------------------------------------------------------------
// Rust

static RUST_PANIC_NEW: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?m)panicked at ((?:[A-Za-z]:[\\/])?[^\s:']+?):(\d+):(\d+):[ \t]*\r?$")
});
static RUST_PANIC_OLD: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?s)panicked at '(.*?)', ((?:[A-Za-z]:[\\/])?[^\s:']+?):(\d+):(\d+)"));
static RUST_BACKTRACE_FRAME: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^\s*\d+:\s+(?:0x[0-9a-fA-F]+ - )?(.+?)\s*$"));
static RUST_BACKTRACE_AT: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^\s+at (.+?):(\d+)(?::\d+)?\s*$"));
static RUST_SYMBOL_HASH: LazyLock<Regex> = LazyLock::new(|| regex(r"::h[0-9a-f]{16}$"));

fn rust_frames(text: &str) -> Vec<Frame> {
    let mut frames = Vec::new();
    for caps in RUST_PANIC_OLD.captures_iter(text) {
        frames.push(frame(&caps[2], line_number(&caps[3]), None));
    }
    let mut function: Option<String> = None;
    let mut in_backtrace = false;
    for line in text.lines() {
        if let Some(caps) = RUST_PANIC_NEW.captures(line) {
            frames.push(frame(&caps[1], line_number(&caps[2]), None));
            continue;
        }
        if line.trim_start().starts_with("stack backtrace:") {
            in_backtrace = true;
            continue;
        }
        if !in_backtrace {
            continue;
        }
        if let Some(caps) = RUST_BACKTRACE_AT.captures(line) {
            frames.push(frame(&caps[1], line_number(&caps[2]), function.as_deref()));
        } else if let Some(caps) = RUST_BACKTRACE_FRAME.captures(line) {
            function = Some(RUST_SYMBOL_HASH.replace(&caps[1], "").into_owned());
        } else if !line.trim().is_empty() {
            in_backtrace = false;
        }
    }
    frames
}

fn rust_exception(text: &str) -> TextReading {
    let old = RUST_PANIC_OLD
        .captures(text)
        .and_then(|caps| Some((caps.get(0)?.start(), first_line(caps.get(1)?.as_str()))));
    // The new format puts the message on the line after the location.
    let new = RUST_PANIC_NEW.find(text).map(|found| {
        let message = text
            .get(found.end()..)
            .and_then(|rest| rest.lines().nth(1))
            .map(|line| line.trim().to_owned())
            .unwrap_or_default();
        (found.start(), message)
    });
    let panic = match (old, new) {
        (Some(old), Some(new)) => Some(if old.0 <= new.0 { old.1 } else { new.1 }),
        (Some((_, message)), None) | (None, Some((_, message))) => Some(message),
        (None, None) => None,
    };
    match panic {
        Some(message) => TextReading {
            exception: Some("panic".to_owned()),
            message: Some(message),
        },
        None => TextReading::default(),
    }
}

// ---------------------------------------------------------------------------------------
// Go

static GO_STACK_LOCATION: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^\s+((?:[A-Za-z]:[\\/])?[^\s:]*\.go):(\d+)(?:\s+\+0x[0-9a-fA-F]+)?\s*$")
});
static GO_LOG_LINE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?m)^\s*([\w.\-]+\.go):(\d+): (.*?)\s*$"));
static GO_COMPILER_ERROR: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^((?:[A-Za-z]:[\\/])?[^\s:]+\.go):(\d+)(?::\d+)?: (.*?)\s*$"));
static GO_PANIC: LazyLock<Regex> = LazyLock::new(|| regex(r"^panic: (.*?)\s*$"));
static GO_RECOVERED: LazyLock<Regex> = LazyLock::new(|| regex(r"\s*\[recovered[^\]]*\]$"));
static GO_FATAL: LazyLock<Regex> = LazyLock::new(|| regex(r"^fatal error: (.*?)\s*$"));
static GO_CALL_ARGS: LazyLock<Regex> = LazyLock::new(|| regex(r"\([^()]*\)$"));
static GO_CREATED_IN: LazyLock<Regex> = LazyLock::new(|| regex(r" in goroutine \d+$"));

fn go_frames(text: &str) -> Vec<Frame> {
    let mut stack = Vec::new();
    let mut logged = Vec::new();
    let mut compiler = Vec::new();
    let mut previous: Option<&str> = None;
    for line in text.lines() {
        if let Some(caps) = GO_STACK_LOCATION.captures(line) {
            let function = previous.map(go_function_name);
            stack.push(frame(&caps[1], line_number(&caps[2]), function.as_deref()));
            previous = None;
            continue;
        }
        if let Some(caps) = GO_LOG_LINE.captures(line) {
            logged.push(frame(&caps[1], line_number(&caps[2]), None));
        } else if let Some(caps) = GO_COMPILER_ERROR.captures(line) {
            compiler.push(frame(&caps[1], line_number(&caps[2]), None));
        }
        let trimmed = line.trim();
        previous = (!trimmed.is_empty()).then_some(trimmed);
    }
    stack.extend(logged);
    stack.extend(compiler);
    stack
}

fn go_function_name(line: &str) -> String {
    let line = line.strip_prefix("created by ").unwrap_or(line);
    let line = GO_CREATED_IN.replace(line, "");
    GO_CALL_ARGS.replace(&line, "").into_owned()
}

fn go_exception(text: &str) -> TextReading {
    let mut logged: Option<&str> = None;
    let mut compiled: Option<&str> = None;
    for line in text.lines() {
        if let Some(caps) = GO_PANIC.captures(line) {
            let message = GO_RECOVERED.replace(caps.get(1).map_or("", |m| m.as_str()), "");
            return TextReading {
                exception: Some("panic".to_owned()),
                message: Some(message.into_owned()),
            };
        }
        if let Some(caps) = GO_FATAL.captures(line) {
            return TextReading {
                exception: Some("fatal error".to_owned()),
                message: caps.get(1).map(|m| m.as_str().to_owned()),
            };
        }
        if logged.is_none()
            && let Some(caps) = GO_LOG_LINE.captures(line)
        {
            logged = caps.get(3).map(|m| m.as_str());
        } else if compiled.is_none()
            && let Some(caps) = GO_COMPILER_ERROR.captures(line)
        {
            compiled = caps.get(3).map(|m| m.as_str());
        }
    }
    TextReading {
        exception: None,
        message: logged.or(compiled).map(str::to_owned),
    }
}

// ---------------------------------------------------------------------------------------
// Java and Kotlin

static JAVA_FRAME: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?m)^\s*at\s+(?:[^\s/()]*/+)?([^\s(/][^(]*[^\s(])\(([^()]*)\)\s*$"));
static JAVA_LOCATION: LazyLock<Regex> = LazyLock::new(|| regex(r"^(.+):(\d+)$"));
static JAVA_EXCEPTION_LINE: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^(?:Caused by:\s*)?([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)(?::\s*(.*?))?\s*$")
});

fn java_frames(text: &str) -> Vec<Frame> {
    let mut frames = Vec::new();
    let mut in_suppressed = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("Suppressed:") {
            in_suppressed = true;
            continue;
        }
        if line.starts_with("Caused by:") {
            in_suppressed = false;
            continue;
        }
        if in_suppressed {
            continue;
        }
        if let Some(caps) = JAVA_FRAME.captures(line) {
            let location = &caps[2];
            let (file, line_no) = match JAVA_LOCATION.captures(location) {
                Some(loc) => (loc[1].to_owned(), line_number(&loc[2])),
                None => (location.to_owned(), None),
            };
            frames.push(Frame {
                file,
                line: line_no,
                function: Some(caps[1].trim().to_owned()),
            });
        }
    }
    frames
}

fn java_exception(text: &str) -> TextReading {
    let Some(first) = text.lines().map(str::trim).find(|l| !l.is_empty()) else {
        return TextReading::default();
    };
    match JAVA_EXCEPTION_LINE.captures(first) {
        Some(caps)
            if looks_like_type(&caps[1]) && (caps[1].contains('.') || caps.get(2).is_some()) =>
        {
            TextReading {
                exception: Some(caps[1].to_owned()),
                message: Some(caps.get(2).map_or("", |m| m.as_str()).to_owned()),
            }
        }
        _ => TextReading::default(),
    }
}

// ---------------------------------------------------------------------------------------
// JavaScript and TypeScript

static JS_FRAME: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?m)^\s*at (?:async )?(?:(.+?) \((.+)\)|(\S.*?))\s*$"));
static VITEST_FRAME: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?m)^\s*❯\s+(?:(\S+)\s+)?(\S+?):(\d+)(?::\d+)?\s*$"));
static JS_LOCATION: LazyLock<Regex> = LazyLock::new(|| regex(r"^(.+?):(\d+)(?::\d+)?$"));
static JS_EXCEPTION_LINE: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^\s*([A-Za-z_$][\w$]*(?:Error|Exception)|Error)(?: \[[A-Z0-9_]+\])?(?::\s*(.*?))?\s*$")
});

fn javascript_frames(text: &str) -> Vec<Frame> {
    let mut frames = Vec::new();
    for line in text.lines() {
        if let Some(caps) = JS_FRAME.captures(line) {
            let (function, location) = match (caps.get(1), caps.get(2), caps.get(3)) {
                (Some(function), Some(location), _) => (Some(function.as_str()), location.as_str()),
                (_, _, Some(location)) => (None, location.as_str()),
                _ => continue,
            };
            if let Some(loc) = JS_LOCATION.captures(location) {
                frames.push(frame(&loc[1], line_number(&loc[2]), function));
            }
        } else if let Some(caps) = VITEST_FRAME.captures(line) {
            frames.push(frame(
                &caps[2],
                line_number(&caps[3]),
                caps.get(1).map(|m| m.as_str()),
            ));
        }
    }
    frames
}

fn javascript_exception(text: &str) -> TextReading {
    for line in text.lines() {
        if JS_FRAME.is_match(line) || VITEST_FRAME.is_match(line) {
            break;
        }
        if let Some(caps) = JS_EXCEPTION_LINE.captures(line) {
            return TextReading {
                exception: Some(caps[1].to_owned()),
                message: Some(caps.get(2).map_or("", |m| m.as_str()).to_owned()),
            };
        }
    }
    TextReading::default()
}

// ---------------------------------------------------------------------------------------
// Paths and the failing frame

const FOREIGN_SEGMENTS: &[&str] = &[
    "site-packages",
    "dist-packages",
    "node_modules",
    "vendor",
    "third_party",
    ".cargo",
    ".rustup",
];

const RUST_STD_PREFIXES: &[&str] = &[
    "library/std/",
    "library/core/",
    "library/alloc/",
    "library/test/",
    "library/panic_unwind/",
    "src/libstd/",
    "src/libcore/",
    "src/liballoc/",
    "src/libtest/",
];

const NODE_INTERNAL_PREFIXES: &[&str] = &[
    "internal/process/",
    "internal/modules/",
    "internal/main/",
    "internal/timers",
    "internal/util",
    "internal/async_hooks",
    "internal/streams/",
    "internal/bootstrap/",
];

/// Top-level standard-library directories as `go test -trimpath` prints them.
const GO_STD_ROOTS: &[&str] = &[
    "runtime", "testing", "reflect", "sync", "internal", "os", "net", "syscall", "fmt", "io",
    "encoding", "context", "time", "crypto", "errors", "strings", "bytes", "strconv", "sort",
    "log",
];

fn clean_path(path: &str) -> String {
    let path = path.trim();
    let mut cleaned = match path.strip_prefix("file://") {
        // `file:///C:/x` names a Windows drive; `file:///home/x` an absolute Unix path.
        Some(rest) if rest.as_bytes().get(2) == Some(&b':') => {
            rest.get(1..).unwrap_or(rest).replace("%20", " ")
        }
        Some(rest) => rest.replace("%20", " "),
        None => path.to_owned(),
    };
    if cleaned.contains('\\') {
        cleaned = cleaned.replace('\\', "/");
    }
    while let Some(rest) = cleaned.strip_prefix("./") {
        cleaned = rest.to_owned();
    }
    cleaned
}

fn clean_root(root: &str) -> String {
    clean_path(root).trim_end_matches('/').to_owned()
}

fn is_absolute(path: &str) -> bool {
    let bytes = path.as_bytes();
    path.starts_with('/')
        || (bytes.len() > 2
            && bytes[0].is_ascii_alphabetic()
            && bytes[1] == b':'
            && bytes[2] == b'/')
}

fn relativize(mut frame: Frame, root: Option<&str>) -> Frame {
    let Some(root) = root.filter(|r| !r.is_empty()) else {
        return frame;
    };
    let prefix_len = root.len();
    let under_root = frame.file.len() > prefix_len + 1
        && frame.file.is_char_boundary(prefix_len)
        && frame.file.as_bytes().get(prefix_len) == Some(&b'/')
        && frame.file.get(..prefix_len).is_some_and(|head| {
            head == root || (has_drive(root) && head.eq_ignore_ascii_case(root))
        });
    if under_root && let Some(rest) = frame.file.get(prefix_len + 1..) {
        frame.file = rest.to_owned();
    }
    frame
}

fn has_drive(path: &str) -> bool {
    path.as_bytes().get(1) == Some(&b':')
}

/// Whether `frame` (already cleaned and made relative) is the repository's own code.
/// `printed_relative`: the runner printed a relative path (rather than an absolute one
/// under the repository root), which is how `-trimpath` Go and old Rust print the
/// standard library.
fn is_repository_frame(frame: &Frame, language: Language, printed_relative: bool) -> bool {
    if frame.line.is_none() {
        return false;
    }
    if language == Language::Java {
        return frame.function.as_deref().is_some_and(|function| {
            !JAVA_FOREIGN_PACKAGES
                .iter()
                .any(|package| function.starts_with(package))
        });
    }
    let file = frame.file.as_str();
    if file.is_empty()
        || is_absolute(file)
        || file.starts_with("../")
        || file.starts_with('<')
        || file.starts_with("node:")
        || file.starts_with("$GOROOT")
        || file.contains("://")
    {
        return false;
    }
    let segments: Vec<&str> = file.split('/').collect();
    if segments
        .iter()
        .any(|segment| FOREIGN_SEGMENTS.contains(segment))
        || segments.windows(2).any(|pair| pair == ["pkg", "mod"])
    {
        return false;
    }
    match language {
        Language::Rust => {
            !(printed_relative && RUST_STD_PREFIXES.iter().any(|p| file.starts_with(p)))
        }
        Language::JavaScript => {
            !(printed_relative && NODE_INTERNAL_PREFIXES.iter().any(|p| file.starts_with(p)))
        }
        Language::Go => {
            let trimpath_std = printed_relative
                && segments.len() > 1
                && segments.first().is_some_and(|s| GO_STD_ROOTS.contains(s));
            let module_cache = segments.iter().any(|s| s.contains('@'));
            // `testing.go` alone is the testing package logging about a test ("race
            // detected during execution of test"), printed like a `t.Error` line.
            let testing_package = printed_relative && file == "testing.go";
            segments.last() != Some(&"_testmain.go")
                && !trimpath_std
                && !module_cache
                && !testing_package
        }
        _ => true,
    }
}

// ---------------------------------------------------------------------------------------
// Exception and message

/// What the failure text says about the type and message.
#[derive(Debug, Default)]
struct TextReading {
    exception: Option<String>,
    message: Option<String>,
}

fn read_text(text: &str, language: Language) -> TextReading {
    match language {
        Language::Python => python_exception(text),
        Language::Rust => rust_exception(text),
        Language::Go => go_exception(text),
        Language::Java => java_exception(text),
        Language::JavaScript => javascript_exception(text),
        Language::Unknown => TextReading::default(),
    }
}

const PLACEHOLDER_TYPES: &[&str] = &[
    "failure",
    "failed",
    "fail",
    "error",
    "exception",
    "assertion",
];

fn is_vague_type(kind: &str) -> bool {
    kind.is_empty() || kind.contains(char::is_whitespace) || PLACEHOLDER_TYPES.contains(&kind)
}

fn resolve_exception(
    exception: Option<String>,
    message: Option<String>,
    text: &str,
    language: Language,
    reading: TextReading,
) -> (Option<String>, String) {
    let given_type = exception
        .map(|e| e.trim().to_owned())
        .filter(|e| !e.is_empty());
    let given_message = message.map(|m| first_line(&m)).filter(|m| !m.is_empty());
    let fallback = || first_meaningful_line(text, language);

    if let Some(kind) = given_type.as_ref().filter(|kind| !is_vague_type(kind)) {
        let message = given_message
            .map(|m| strip_type_prefix(&m, Some(kind)).to_owned())
            .or(reading.message)
            .unwrap_or_else(fallback);
        return (Some(kind.clone()), one_line(&message));
    }
    if let Some(kind) = reading.exception {
        let message = match (&given_type, given_message) {
            // A vague type makes the runner's message suspect too (cargo2junit writes
            // `failed tests::x`); the text's own message is the better one.
            (None, Some(given)) => strip_type_prefix(&given, Some(&kind)).to_owned(),
            _ => reading.message.unwrap_or_else(fallback),
        };
        return (Some(kind), one_line(&message));
    }
    if let Some((kind, rest)) = given_message
        .as_deref()
        .and_then(|m| split_type_prefix(m, language))
    {
        return (Some(kind), one_line(&rest));
    }
    let message = given_message.or(reading.message).unwrap_or_else(fallback);
    (given_type, one_line(&message))
}

/// `SomeError: message` (or a bare `SomeError`) split into its parts when the head looks
/// like an exception type.
fn split_type_prefix(text: &str, language: Language) -> Option<(String, String)> {
    let text = text.trim();
    let (head, rest) = match text.split_once(':') {
        Some((head, rest)) => (head, rest.trim()),
        None => (text, ""),
    };
    let head = head.trim();
    let head = match language {
        Language::JavaScript | Language::Unknown => head
            .split_once(" [")
            .filter(|(_, code)| code.ends_with(']'))
            .map_or(head, |(name, _)| name),
        _ => head,
    };
    if !looks_like_type(head) {
        return None;
    }
    // A bare word is only a type when it reads like one (`Failed`, `AssertionError`).
    if rest.is_empty()
        && !text.contains(':')
        && !head.contains('.')
        && !head.ends_with("Error")
        && !head.ends_with("Exception")
        && !head.ends_with("Exit")
        && !head.ends_with("Interrupt")
        && head != "Failed"
    {
        return None;
    }
    Some((head.to_owned(), rest.to_owned()))
}

fn strip_type_prefix<'a>(message: &'a str, kind: Option<&str>) -> &'a str {
    let Some(kind) = kind else {
        return message;
    };
    let message = message.trim();
    match message.strip_prefix(kind) {
        Some(rest) => {
            let rest = rest.trim_start();
            let rest = match rest.strip_prefix('[') {
                Some(coded) => coded
                    .split_once(']')
                    .map_or(rest, |(_, after)| after.trim_start()),
                None => rest,
            };
            match rest.strip_prefix(':') {
                Some(after) => after.trim(),
                None if rest.is_empty() => "",
                None => message,
            }
        }
        None => message,
    }
}

/// A dotted identifier whose last part starts with an uppercase letter:
/// `ValueError`, `java.lang.IllegalStateException`, `requests.exceptions.Timeout`.
fn looks_like_type(candidate: &str) -> bool {
    if candidate.is_empty() || candidate.len() > 200 {
        return false;
    }
    let valid = candidate.split('.').all(|part| {
        let mut chars = part.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
    });
    valid
        && candidate
            .rsplit('.')
            .next()
            .and_then(|last| last.chars().next())
            .is_some_and(|c| c.is_ascii_uppercase())
}

fn first_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or_default()
        .to_owned()
}

fn one_line(text: &str) -> String {
    let line = first_line(text);
    // No more bytes than the limit in characters: nothing to cut, no need to count.
    if line.len() <= MAX_MESSAGE_CHARS {
        return line;
    }
    match line.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// The first line a reader would call the message: not a frame, not a runner's framing.
fn first_meaningful_line(text: &str, language: Language) -> String {
    const NOISE_PREFIXES: &[&str] = &[
        "Traceback (most recent call last)",
        "stack backtrace:",
        "note: ",
        "=== RUN",
        "=== PAUSE",
        "=== CONT",
        "=== NAME",
        "--- FAIL",
        "--- PASS",
        "--- SKIP",
        "goroutine ",
        "exit status ",
        "FAIL\t",
        "ok  \t",
    ];
    const NOISE_LINES: &[&str] = &["FAIL", "PASS", "stderr:", "stdout:"];
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .filter(|line| !NOISE_PREFIXES.iter().any(|p| line.starts_with(p)))
        .filter(|line| !NOISE_LINES.contains(line))
        .find(|line| !is_frame_line(line, language))
        .unwrap_or_default()
        .to_owned()
}

fn is_frame_line(line: &str, language: Language) -> bool {
    match language {
        Language::Python => CPYTHON_FRAME.is_match(line) || pytest_location(line).is_some(),
        Language::Go => GO_STACK_LOCATION.is_match(line),
        Language::Java => JAVA_FRAME.is_match(line) || line.starts_with("..."),
        Language::JavaScript => JS_FRAME.is_match(line) || VITEST_FRAME.is_match(line),
        Language::Rust => RUST_BACKTRACE_AT.is_match(line) || RUST_BACKTRACE_FRAME.is_match(line),
        Language::Unknown => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn options(root: Option<&str>) -> ParseOptions {
        ParseOptions {
            repo_root: root.map(str::to_owned),
            ..ParseOptions::default()
        }
    }

    fn failing(failure: &Failure) -> Option<String> {
        failure.failing_frame.as_ref().map(Frame::location)
    }

    #[test]
    fn pytest_long_report_with_junit_message() {
        let text = "def test_which_fails():\n        event = { 'attr': 'test'}\n>       assert event['attr'] == 'xyz'\nE       AssertionError: assert 'test' == 'xyz'\nE         - xyz\nE         + test\n\npython/test_sample.py:10: AssertionError";
        let failure = build_failure(
            None,
            Some("AssertionError: assert 'test' == 'xyz'\n  - xyz\n  + test".into()),
            text.into(),
            Language::Python,
            &options(None),
        );
        assert_eq!(failure.exception.as_deref(), Some("AssertionError"));
        assert_eq!(failure.message, "assert 'test' == 'xyz'");
        assert_eq!(
            failing(&failure).as_deref(),
            Some("python/test_sample.py:10")
        );
        assert_eq!(
            failure.frames[0].function.as_deref(),
            Some("test_which_fails")
        );
    }

    #[test]
    fn pytest_message_without_type_gets_type_from_location_line() {
        let text = "def test_always_fail():\n        > assert False\n        E assert False\n\n        tests/test_lib.py:25: AssertionError\n      ";
        let failure = build_failure(
            None,
            Some("assert False".into()),
            text.into(),
            Language::Python,
            &options(None),
        );
        assert_eq!(failure.exception.as_deref(), Some("AssertionError"));
        assert_eq!(failure.message, "assert False");
        assert_eq!(failing(&failure).as_deref(), Some("tests/test_lib.py:25"));
    }

    #[test]
    fn cpython_traceback_is_reversed_and_relativized() {
        let text = "Traceback (most recent call last):\n  File \"/repo/tests/test_x.py\", line 10, in test_f\n    foo()\n  File \"/repo/src/x.py\", line 5, in foo\n    raise ValueError(\"bad 42\")\n  File \"/usr/lib/python3.12/json/__init__.py\", line 346, in loads\n    return _default_decoder.decode(s)\nValueError: bad 42\n";
        let failure = build_failure(
            None,
            None,
            text.into(),
            Language::Python,
            &options(Some("/repo/")),
        );
        assert_eq!(failure.exception.as_deref(), Some("ValueError"));
        assert_eq!(failure.message, "bad 42");
        assert_eq!(failure.frames.len(), 3);
        assert_eq!(
            failure.frames[0].file,
            "/usr/lib/python3.12/json/__init__.py"
        );
        assert_eq!(failing(&failure).as_deref(), Some("src/x.py:5"));
        assert_eq!(failure.frames[2].location(), "tests/test_x.py:10");
    }

    #[test]
    fn rust_old_and_new_panics() {
        let old = "thread 'tests::fails' panicked at 'assertion failed: `(left == right)`\n  left: `4`,\n right: `3`', src/lib.rs:10:9\nnote: Run with `RUST_BACKTRACE=1` for a backtrace.\n";
        let failure = build_failure(None, None, old.into(), Language::Rust, &options(None));
        assert_eq!(failure.exception.as_deref(), Some("panic"));
        assert_eq!(failure.message, "assertion failed: `(left == right)`");
        assert_eq!(failing(&failure).as_deref(), Some("src/lib.rs:10"));

        let new = "thread 'basic::t' panicked at tests/basic.rs:19:5:\nassertion `left == right` failed\n  left: 1\n right: 2\n";
        let failure = build_failure(None, None, new.into(), Language::Rust, &options(None));
        assert_eq!(failure.message, "assertion `left == right` failed");
        assert_eq!(failing(&failure).as_deref(), Some("tests/basic.rs:19"));
    }

    #[test]
    fn vague_runner_type_yields_to_the_panic() {
        let text = "thread 'tests::fails' panicked at 'boom', src\\lib.rs:3:1\n";
        let failure = build_failure(
            Some("cargo test".into()),
            Some("failed tests::fails".into()),
            text.into(),
            Language::Rust,
            &options(None),
        );
        assert_eq!(failure.exception.as_deref(), Some("panic"));
        assert_eq!(failure.message, "boom");
        assert_eq!(failing(&failure).as_deref(), Some("src/lib.rs:3"));
    }

    #[test]
    fn go_log_lines_give_message_without_type() {
        let text = "=== RUN   TestOne\n    main_test.go:6: Error message\n    main_test.go:7: Longer\n        error\n--- FAIL: TestOne (0.00s)\n";
        let failure = build_failure(None, None, text.into(), Language::Go, &options(None));
        assert_eq!(failure.exception, None);
        assert_eq!(failure.message, "Error message");
        assert_eq!(failing(&failure).as_deref(), Some("main_test.go:6"));
    }

    #[test]
    fn go_panic_skips_goroot_and_testmain() {
        let text = "panic: boom [recovered]\n\tpanic: boom\n\ngoroutine 7 [running]:\ntesting.tRunner.func1.2({0x5f8a40, 0x6c9f70})\n\t/usr/local/go/src/testing/testing.go:1545 +0x238\nexample.com/m.TestPanic(0x0?)\n\t/home/u/m/m_test.go:8 +0x1d\nmain.main()\n\t_testmain.go:47 +0x2e4\n";
        let failure = build_failure(
            None,
            None,
            text.into(),
            Language::Go,
            &options(Some("/home/u/m")),
        );
        assert_eq!(failure.exception.as_deref(), Some("panic"));
        assert_eq!(failure.message, "boom");
        assert_eq!(failing(&failure).as_deref(), Some("m_test.go:8"));
        assert_eq!(
            failure.frames[1].function.as_deref(),
            Some("example.com/m.TestPanic")
        );
    }

    #[test]
    fn java_caused_by_and_foreign_packages() {
        let text = "java.lang.AssertionError: unexpected type\n\tat org.junit.Assert.fail(Assert.java:89)\n\tat action.calc.CalcUtilsTest.test error handling(CalcUtilsTest.kt:27)\n\tat java.base/jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\nCaused by: java.lang.IllegalArgumentException: Amount\n\tat action.calc.CalcUtilsTest.scale(CalcUtilsTest.kt:31)\n\t... 12 more\n";
        let failure = build_failure(None, None, text.into(), Language::Java, &options(None));
        assert_eq!(
            failure.exception.as_deref(),
            Some("java.lang.AssertionError")
        );
        assert_eq!(failure.message, "unexpected type");
        assert_eq!(failing(&failure).as_deref(), Some("CalcUtilsTest.kt:27"));
        assert_eq!(failure.frames.len(), 4);
        assert_eq!(failure.frames[2].line, None);
    }

    #[test]
    fn javascript_jest_and_node_assert() {
        let text = "Error: expect(received).toBeTruthy()\n\nReceived: false\n    at Object.<anonymous> (C:\\work\\app\\__tests__\\main.test.js:10:21)\n    at Object.asyncJestTest (C:\\work\\app\\node_modules\\jest-jasmine2\\build\\jasmineAsyncInstall.js:106:37)\n    at new Promise (<anonymous>)\n    at processTicksAndRejections (internal/process/task_queues.js:97:5)";
        let failure = build_failure(
            None,
            None,
            text.into(),
            Language::JavaScript,
            &options(Some("C:\\work\\app")),
        );
        assert_eq!(failure.exception.as_deref(), Some("Error"));
        assert_eq!(failure.message, "expect(received).toBeTruthy()");
        assert_eq!(
            failing(&failure).as_deref(),
            Some("__tests__/main.test.js:10")
        );
        assert_eq!(failure.frames.len(), 3);

        let node = "AssertionError [ERR_ASSERTION]: 1 == 2\n    at async run (file:///home/u/app/test/a.test.mjs:4:3)\n    at node:internal/test_runner/test:1:1";
        let failure = build_failure(
            None,
            None,
            node.into(),
            Language::JavaScript,
            &options(Some("/home/u/app")),
        );
        assert_eq!(failure.exception.as_deref(), Some("AssertionError"));
        assert_eq!(failure.message, "1 == 2");
        assert_eq!(failing(&failure).as_deref(), Some("test/a.test.mjs:4"));
    }

    #[test]
    fn unknown_language_is_guessed() {
        let text = "java.lang.IllegalStateException: nope\n\tat com.acme.Foo.bar(Foo.java:42)\n";
        let failure = build_failure(None, None, text.into(), Language::Unknown, &options(None));
        assert_eq!(
            failure.exception.as_deref(),
            Some("java.lang.IllegalStateException")
        );
        assert_eq!(failing(&failure).as_deref(), Some("Foo.java:42"));
    }

    #[test]
    fn a_wrong_language_falls_back_to_the_guessed_one() {
        let text = "java.lang.IllegalStateException: nope\n\tat com.acme.Foo.bar(Foo.java:42)\n";
        let failure = build_failure(None, None, text.into(), Language::Python, &options(None));
        assert_eq!(failure.frames.len(), 1);
        assert_eq!(failing(&failure).as_deref(), Some("Foo.java:42"));
    }

    #[test]
    fn messages_are_one_capped_line() {
        let long = "x".repeat(MAX_MESSAGE_CHARS * 2);
        let failure = build_failure(
            Some("Boom".into()),
            Some(format!("\n  {long}\nsecond")),
            String::new(),
            Language::Unknown,
            &options(None),
        );
        assert_eq!(failure.message.chars().count(), MAX_MESSAGE_CHARS + 1);
        assert!(!failure.message.contains('\n'));
    }

    /// The Python reading as it was before [`python_read`] merged its two passes: the
    /// oracle the merged pass is compared with.
    fn two_pass_frames(text: &str) -> Vec<Frame> {
        let mut blocks: Vec<Vec<Frame>> = vec![Vec::new()];
        let mut last_def: Option<String> = None;
        for line in lines(text) {
            let trimmed = line.trim();
            if PYTHON_CHAIN_SEPARATORS.contains(&trimmed) {
                blocks.push(Vec::new());
                last_def = None;
                continue;
            }
            let Some(block) = blocks.last_mut() else {
                continue;
            };
            if let Some(caps) = CPYTHON_FRAME.captures(line) {
                block.push(frame(
                    &caps[1],
                    line_number(&caps[2]),
                    caps.get(3).map(|m| m.as_str()),
                ));
            } else if let Some(location) = pytest_location(line) {
                let trailer = location.trailer.unwrap_or_default();
                let function = match trailer.strip_prefix("in ") {
                    Some(function) => Some(function.to_owned()),
                    None => last_def.take(),
                };
                block.push(frame(
                    location.path,
                    line_number(location.line),
                    function.as_deref(),
                ));
                last_def = None;
            } else if let Some(name) = python_def(line) {
                last_def = Some(name.to_owned());
            }
        }
        blocks
            .into_iter()
            .rev()
            .flat_map(|block| block.into_iter().rev())
            .collect()
    }

    fn two_pass_exception(text: &str) -> TextReading {
        // The location line closing pytest's report names the type: `x.py:10: ValueError`.
        let mut from_location: Option<String> = None;
        let mut first_e_line: Option<&str> = None;
        let mut typed_e_line: Option<(String, String)> = None;
        let mut cpython_final: Option<(String, String)> = None;
        let mut after_cpython_frame = false;
        for line in lines(text) {
            if let Some(location) = pytest_location(line) {
                let trailer = location.trailer.unwrap_or_default();
                if !trailer.starts_with("in ")
                    && let Some((kind, _)) = split_type_prefix(trailer, Language::Python)
                {
                    from_location = Some(kind);
                }
                continue;
            }
            if let Some(content) = pytest_e_line(line) {
                // `E = 5` is source code that happens to start with `E`, not pytest's marker.
                if content.starts_with('=') {
                    continue;
                }
                if first_e_line.is_none() && !content.is_empty() {
                    first_e_line = Some(content);
                }
                if typed_e_line.is_none()
                    && let Some(split) = split_type_prefix(content, Language::Python)
                {
                    typed_e_line = Some(split);
                }
                continue;
            }
            if CPYTHON_FRAME.is_match(line) {
                after_cpython_frame = true;
                continue;
            }
            if after_cpython_frame
                && !line.starts_with(char::is_whitespace)
                && let Some(caps) = PYTHON_EXCEPTION_LINE.captures(line)
                && looks_like_type(&caps[1])
            {
                let message = caps.get(2).map_or("", |m| m.as_str()).to_owned();
                cpython_final = Some((caps[1].to_owned(), message));
                after_cpython_frame = false;
            }
        }
        let exception = from_location
            .or_else(|| typed_e_line.as_ref().map(|(kind, _)| kind.clone()))
            .or_else(|| cpython_final.as_ref().map(|(kind, _)| kind.clone()));
        let message = match first_e_line {
            Some(line) => Some(strip_type_prefix(line, exception.as_deref()).to_owned()),
            None => cpython_final.map(|(_, message)| message),
        };
        TextReading { exception, message }
    }

    /// Lines of Python tracebacks (pytest's long and short reports, CPython's, chained
    /// ones) and lines that come close to them.
    fn python_line() -> impl Strategy<Value = String> {
        prop_oneof![
            proptest::sample::select(vec![
                "tests/test_a.py:10: in test_x",
                "src/app/client.py:117: ",
                "src/app/client.py:117: ValueError",
                "tests/test_a.py:3: AssertionError: assert 1 == 2",
                "x.py:1:",
                "C:\\w\\t.py:4: in f",
                "  File \"/usr/lib/python3.12/a.py\", line 3, in f",
                "  File \"tests/t.py\", line 9",
                "File \"x.py:1: y\", line 2",
                "    def test_x(self, client):",
                "    async def helper():",
                "def é(x):",
                "\u{a0}def f(x):",
                "\u{3000}E   AssertionError: x",
                "\u{85}During handling of the above exception, another exception occurred:",
                "\u{b}E  x",
                "\t\u{c}async  def g (",
                "E   AssertionError: assert 1 == 2",
                "E       assert 1",
                "E        +  where 503 = <Response [503]>.status_code",
                "E = 5",
                "E",
                "ValueError: bad value",
                "pkg.errors.Boom",
                "Traceback (most recent call last):",
                "During handling of the above exception, another exception occurred:",
                "  The above exception was the direct cause of the following exception:  ",
                "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _",
                ">       result = client.post(\"/api\")",
                "",
                "    ",
            ])
            .prop_map(str::to_owned),
            "[a-zA-Z_ .:/=>E]{0,24}",
        ]
    }

    proptest! {
        #![proptest_config(crate::test_support::proptest_config(384))]

        #[test]
        fn python_is_read_in_one_pass_as_it_was_in_two(
            lines in proptest::collection::vec(python_line(), 0..40),
            crlf in any::<bool>(),
        ) {
            let text = lines.join(if crlf { "\r\n" } else { "\n" });
            let (frames, reading) = python_read(&text);
            let oracle = two_pass_exception(&text);
            prop_assert_eq!(frames, two_pass_frames(&text));
            prop_assert_eq!(reading.exception, oracle.exception);
            prop_assert_eq!(reading.message, oracle.message);
        }

        #[test]
        fn build_failure_never_panics(
            pieces in proptest::collection::vec(
                prop_oneof![
                    Just("  File \"".to_owned()),
                    Just("\", line ".to_owned()),
                    Just("panicked at '".to_owned()),
                    Just("', ".to_owned()),
                    Just(".rs:".to_owned()),
                    Just(".py:".to_owned()),
                    Just(".go:".to_owned()),
                    Just("\tat ".to_owned()),
                    Just("(".to_owned()),
                    Just(")".to_owned()),
                    Just(":".to_owned()),
                    Just("\n".to_owned()),
                    Just("E   ".to_owned()),
                    Just("file:///".to_owned()),
                    Just("C:\\".to_owned()),
                    Just("❯ ".to_owned()),
                    Just("stack backtrace:\n".to_owned()),
                    Just("panic: ".to_owned()),
                    Just("Caused by: ".to_owned()),
                    "[0-9]{1,12}",
                    "\\PC{0,12}",
                ],
                0..40,
            ),
            root in proptest::option::of("\\PC{0,8}"),
            language in prop_oneof![
                Just(Language::Python),
                Just(Language::Rust),
                Just(Language::Go),
                Just(Language::Java),
                Just(Language::JavaScript),
                Just(Language::Unknown),
            ],
            given in proptest::option::of("\\PC{0,20}"),
        ) {
            let text: String = pieces.concat();
            let failure = build_failure(given.clone(), given, text.clone(), language, &options(root.as_deref()));
            prop_assert!(!failure.message.contains('\n'));
            prop_assert!(failure.frames.len() <= MAX_FRAMES);
            if let Some(frame) = &failure.failing_frame {
                prop_assert!(failure.frames.contains(frame));
            }
            let _ = parse_frames(&text, language);
        }

        #[test]
        fn lines_are_std_lines(text in "[a\r\n\u{e9}]{0,12}") {
            prop_assert_eq!(lines(&text).collect::<Vec<_>>(), text.lines().collect::<Vec<_>>());
        }

        #[test]
        fn pytest_lines_read_by_hand_as_their_patterns_read_them(
            // Lines shaped like location and `E` lines, each part drawn from its likely
            // and unlikely spellings, so that many come close to matching.
            (indent, drive, path, extension, digits, trailer) in (
                prop_oneof![Just(""), Just(" "), Just("\t  "), Just("\u{a0}")],
                prop_oneof![Just(""), Just("C:\\"), Just("c:/"), Just("C:"), Just(" ")],
                "[a-zA-Z/_. :]{0,6}",
                prop_oneof![Just(".py"), Just(".pyx"), Just("py"), Just(".py.py")],
                prop_oneof!["[0-9]{1,3}", "", "\u{663}", "1a"],
                prop_oneof![
                    Just(""), Just(" "), Just("\t"), Just(" in f "), Just("x"),
                    Just(" \u{a0}"), Just(" a\r"), Just("\t \tE"), Just(": x"),
                ],
            ),
            e_line in "[ \t\u{a0}]{0,2}E[ \t\u{a0}=x]{0,3}[^\n]{0,4}",
            def_line in "[ \t\u{a0}]{0,2}(async[ \u{a0}]{0,2})?(def|de)[ \t\u{a0}]{0,2}[a-zA-Z_0-9é]{0,4}[ \u{a0}(]{0,2}[^\n]{0,3}",
            noise in "[^\n]{0,12}",
        ) {
            let location = format!("{indent}{drive}{path}{extension}:{digits}:{trailer}");
            let e_pattern = Regex::new(r"^\s*E\s+(.*?)\s*$").unwrap();
            for line in [&location, &e_line, &def_line, &noise] {
                let expected = PYTEST_LOCATION.pattern.captures(line).map(|caps| PytestLocation {
                    path: caps.get(1).map_or("", |m| m.as_str()),
                    line: caps.get(2).map_or("", |m| m.as_str()),
                    trailer: caps.get(3).map(|m| m.as_str()),
                });
                prop_assert_eq!(pytest_location(line), expected, "{:?}", line);
                let expected = e_pattern
                    .captures(line)
                    .map(|caps| caps.get(1).map_or("", |m| m.as_str()));
                prop_assert_eq!(pytest_e_line(line), expected, "{:?}", line);
                let expected = PYTHON_DEF
                    .pattern
                    .captures(line)
                    .map(|caps| caps.get(1).map_or("", |m| m.as_str()));
                prop_assert_eq!(python_def(line), expected, "{:?}", line);
            }
        }
    }

    #[test]
    fn pytest_location_lines_by_hand() {
        let read = |line| pytest_location(line).map(|l| (l.path, l.line, l.trailer));
        assert_eq!(
            read("tests/test_x.py:10: AssertionError"),
            Some(("tests/test_x.py", "10", Some("AssertionError")))
        );
        assert_eq!(
            read("  C:\\src\\x.py:5:"),
            Some(("C:\\src\\x.py", "5", None))
        );
        assert_eq!(read("x.py:7: \t"), Some(("x.py", "7", Some(""))));
        assert_eq!(read("x.py:\u{663}:"), Some(("x.py", "\u{663}", None)));
        assert_eq!(read(".py:1:"), None);
        assert_eq!(read("x.py:1:x"), None);
        assert_eq!(read("a:b.py:1:"), None);
        assert_eq!(python_def("    async  def _send(self):"), Some("_send"));
        assert_eq!(python_def("def f (x)"), Some("f"));
        assert_eq!(python_def("def fé()"), Some("fé"));
        assert_eq!(python_def("def é()"), None);
        assert_eq!(python_def("asyncdef f():"), None);
        assert_eq!(python_def("def 1f():"), None);
        assert_eq!(python_def("define(x)"), None);
    }
}
