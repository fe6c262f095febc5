//! Go frames: goroutine and race-report stacks, `t.Error`/`t.Log` lines and compiler
//! errors.

use crate::results::model::Frame;
use regex::Regex;
use std::sync::LazyLock;

use super::message::TextReading;
use super::{frame, line_number, regex};

pub(super) static GO_STACK_LOCATION: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^\s+((?:[A-Za-z]:[\\/])?[^\s:]*\.go):(\d+)(?:\s+\+0x[0-9a-fA-F]+)?\s*$")
});
pub(super) static GO_LOG_LINE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?m)^\s*([\w.\-]+\.go):(\d+): (.*?)\s*$"));
static GO_COMPILER_ERROR: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^((?:[A-Za-z]:[\\/])?[^\s:]+\.go):(\d+)(?::\d+)?: (.*?)\s*$"));
static GO_PANIC: LazyLock<Regex> = LazyLock::new(|| regex(r"^panic: (.*?)\s*$"));
static GO_RECOVERED: LazyLock<Regex> = LazyLock::new(|| regex(r"\s*\[recovered[^\]]*\]$"));
static GO_FATAL: LazyLock<Regex> = LazyLock::new(|| regex(r"^fatal error: (.*?)\s*$"));
static GO_CALL_ARGS: LazyLock<Regex> = LazyLock::new(|| regex(r"\([^()]*\)$"));
static GO_CREATED_IN: LazyLock<Regex> = LazyLock::new(|| regex(r" in goroutine \d+$"));

pub(super) fn go_frames(text: &str) -> Vec<Frame> {
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

pub(super) fn go_exception(text: &str) -> TextReading {
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
