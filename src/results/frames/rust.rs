//! Rust frames: the panic location (old and new message forms) and `RUST_BACKTRACE`
//! frames.

use crate::results::model::Frame;
use regex::Regex;
use std::sync::LazyLock;

use super::message::{TextReading, first_line};
use super::{frame, line_number, regex};

static RUST_PANIC_NEW: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?m)panicked at ((?:[A-Za-z]:[\\/])?[^\s:']+?):(\d+):(\d+):[ \t]*\r?$")
});
static RUST_PANIC_OLD: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?s)panicked at '(.*?)', ((?:[A-Za-z]:[\\/])?[^\s:']+?):(\d+):(\d+)"));
pub(super) static RUST_BACKTRACE_FRAME: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^\s*\d+:\s+(?:0x[0-9a-fA-F]+ - )?(.+?)\s*$"));
pub(super) static RUST_BACKTRACE_AT: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^\s+at (.+?):(\d+)(?::\d+)?\s*$"));
static RUST_SYMBOL_HASH: LazyLock<Regex> = LazyLock::new(|| regex(r"::h[0-9a-f]{16}$"));

pub(super) fn rust_frames(text: &str) -> Vec<Frame> {
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

pub(super) fn rust_exception(text: &str) -> TextReading {
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
