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

mod go;
mod java;
mod javascript;
mod message;
mod paths;
mod python;
mod rust;
#[cfg(test)]
mod tests;

use go::{GO_LOG_LINE, go_frames};
use java::java_frames;
use javascript::{VITEST_FRAME, javascript_frames};
use message::{read_text, resolve_exception};
use paths::{clean_path, clean_root, is_absolute, is_repository_frame, relativize};
use python::{CPYTHON_FRAME, PYTEST_LOCATION, python_frames, python_read};
use rust::rust_frames;

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
