//! Exception and message: what the failure text says about the type and message when the
//! runner did not say it, or said it vaguely.

use super::go::{GO_STACK_LOCATION, go_exception};
use super::java::{JAVA_FRAME, java_exception};
use super::javascript::{JS_FRAME, VITEST_FRAME, javascript_exception};
use super::python::{CPYTHON_FRAME, pytest_location, python_exception};
use super::rust::{RUST_BACKTRACE_AT, RUST_BACKTRACE_FRAME, rust_exception};
use super::{Language, MAX_MESSAGE_CHARS};

/// What the failure text says about the type and message.
#[derive(Debug, Default)]
pub(super) struct TextReading {
    pub(super) exception: Option<String>,
    pub(super) message: Option<String>,
}

pub(super) fn read_text(text: &str, language: Language) -> TextReading {
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

/// The kinds of failure node's test runner writes as a JUnit failure's `type`
/// (`failureType`): not the exception, which its text holds (`cause:`).
const NODE_FAILURE_KINDS: &[&str] = &[
    "testCodeFailure",
    "hookFailed",
    "subtestsFailed",
    "cancelledByParent",
    "testTimeoutFailure",
    "uncaughtException",
    "unhandledRejection",
    "parentAlreadyFinished",
    "callbackAndPromisePresent",
    "multipleCallbackInvocations",
    "testAborted",
];

fn is_vague_type(kind: &str) -> bool {
    kind.is_empty()
        || kind.contains(char::is_whitespace)
        || PLACEHOLDER_TYPES.contains(&kind)
        || NODE_FAILURE_KINDS.contains(&kind)
}

pub(super) fn resolve_exception(
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
pub(super) fn split_type_prefix(text: &str, language: Language) -> Option<(String, String)> {
    type_prefix(text, language).map(|(kind, rest)| (kind.to_owned(), rest.to_owned()))
}

/// [`split_type_prefix`] borrowing its parts: a pytest traceback tries it on several lines
/// and keeps one type, so the copies were made and dropped for every other line.
pub(super) fn type_prefix(text: &str, language: Language) -> Option<(&str, &str)> {
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
    Some((head, rest))
}

pub(super) fn strip_type_prefix<'a>(message: &'a str, kind: Option<&str>) -> &'a str {
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
pub(super) fn looks_like_type(candidate: &str) -> bool {
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

pub(super) fn first_line(text: &str) -> String {
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
