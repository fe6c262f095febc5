//! Java and Kotlin frames: `at pkg.Class.method(File.java:42)`, `Caused by:` in printed
//! order, and the packages that are never the repository's own.

use crate::results::model::Frame;
use regex::Regex;
use std::sync::LazyLock;

use super::message::{TextReading, looks_like_type};
use super::{line_number, regex};

pub(super) static JAVA_FRAME: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?m)^\s*at\s+(?:[^\s/()]*/+)?([^\s(/][^(]*[^\s(])\(([^()]*)\)\s*$"));
static JAVA_LOCATION: LazyLock<Regex> = LazyLock::new(|| regex(r"^(.+):(\d+)$"));
static JAVA_EXCEPTION_LINE: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^(?:Caused by:\s*)?([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)(?::\s*(.*?))?\s*$")
});

pub(super) fn java_frames(text: &str) -> Vec<Frame> {
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

pub(super) fn java_exception(text: &str) -> TextReading {
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
