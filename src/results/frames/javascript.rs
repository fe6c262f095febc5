//! JavaScript and TypeScript frames: V8's `at …` lines, `file://` URLs and Vitest's `❯`.

use crate::results::model::Frame;
use regex::Regex;
use std::sync::LazyLock;

use super::message::TextReading;
use super::{frame, line_number, regex};

pub(super) static JS_FRAME: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?m)^\s*at (?:async )?(?:(.+?) \((.+)\)|(\S.*?))\s*$"));
pub(super) static VITEST_FRAME: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?m)^\s*❯\s+(?:(\S+)\s+)?(\S+?):(\d+)(?::\d+)?\s*$"));
static JS_LOCATION: LazyLock<Regex> = LazyLock::new(|| regex(r"^(.+?):(\d+)(?::\d+)?$"));
static JS_EXCEPTION_LINE: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^\s*([A-Za-z_$][\w$]*(?:Error|Exception)|Error)(?: \[[A-Z0-9_]+\])?(?::\s*(.*?))?\s*$")
});

pub(super) fn javascript_frames(text: &str) -> Vec<Frame> {
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

/// node's test runner wraps what a test threw: `Error [ERR_TEST_FAILURE]: message` with
/// a `failureType` (`testCodeFailure`), and what was thrown printed as its `cause:`.
/// The wrapper is printed bare, or in brackets when it has no stack (`[Error
/// [ERR_TEST_FAILURE]: …] {`).
static NODE_WRAPPER_LINE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^\s*\[?Error \[ERR_TEST_FAILURE\]"));
static NODE_CAUSE_LINE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"^\s*cause: ([A-Za-z_$][\w$]*(?:Error|Exception)|Error)(?: \[[^\]]+\])?(?::\s*(.*?))?\s*$",
    )
});

pub(super) fn javascript_exception(text: &str) -> TextReading {
    // node's junit reporter: the exception is the wrapper's cause, the wrapper's type only
    // the kind of failure. No thrown error (a time-out, a cancelled test): no exception
    // from the text, so the failure kind stays.
    if text.lines().any(|l| NODE_WRAPPER_LINE.is_match(l)) {
        let cause = text.lines().find_map(|l| NODE_CAUSE_LINE.captures(l));
        return cause.map_or_else(TextReading::default, |caps| TextReading {
            exception: Some(caps[1].to_owned()),
            message: Some(caps.get(2).map_or("", |m| m.as_str()).to_owned()),
        });
    }
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
