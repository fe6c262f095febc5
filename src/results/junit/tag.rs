//! A start tag's attributes as the reader needs them: the few keys a test case is read by
//! (matched a word at a time), a failure's attributes, `status`, `line` and the vague
//! exception types that give way to what the text says.

use super::markup;
use super::markup::AttributeSpan;
use super::markup::CappedText;
use super::source::Relative;
use crate::results::ParseOptions;
use crate::results::frames;
use crate::results::model::Failure;
use crate::results::model::Outcome;
use crate::results::model::cap_text;

use super::refusal::{Refusal, syntax};
use super::state::{Context, Status, Target};

/// What a failure-like element's attributes say.
#[derive(Debug, Default)]
pub(super) struct RedInfo {
    pub(super) exception: Option<String>,
    pub(super) message: Option<String>,
    pub(super) file: Option<String>,
    pub(super) line: Option<u32>,
}

/// A start tag being read: its content as text, its attributes, and where it starts.
pub(super) struct Tag<'t> {
    pub(super) text: &'t str,
    pub(super) spans: &'t [AttributeSpan],
}

/// An attribute's raw (still escaped) value and where it starts in the tag.
#[derive(Debug, Clone, Copy)]
pub(super) struct Value<'t> {
    pub(super) raw: &'t str,
    pub(super) start: usize,
    /// Nothing to decode: the raw value is the value.
    pub(super) plain: bool,
}

impl<'t> Tag<'t> {
    pub(super) fn attributes(&self) -> impl Iterator<Item = (&'t [u8], Value<'t>)> + '_ {
        let text = self.text;
        self.spans.iter().map(move |span| {
            let key = text.as_bytes().get(span.key.clone()).unwrap_or_default();
            let raw = text.get(span.value.clone()).unwrap_or_default();
            (
                key,
                Value {
                    raw,
                    start: span.value.start,
                    plain: span.plain,
                },
            )
        })
    }

    pub(super) fn find(&self, wanted: &[u8]) -> Option<Value<'t>> {
        self.attributes()
            .find(|(key, _)| *key == wanted)
            .map(|(_, value)| value)
    }

    /// Decodes `value` into `out` (cleared first).
    pub(super) fn decode(&self, value: Value<'_>, out: &mut String) -> Result<(), Refusal> {
        out.clear();
        if value.plain {
            out.push_str(value.raw);
            return Ok(());
        }
        markup::decode_value(value.raw, out).map_err(|error| {
            syntax(
                Relative::within(1, self.text.as_bytes(), value.start + error.at),
                error.message,
            )
        })
    }

    /// The value as text: the raw value itself when there is nothing to decode, else
    /// decoded into `scratch`.
    pub(super) fn text_of<'a>(
        &'a self,
        value: Value<'a>,
        scratch: &'a mut String,
    ) -> Result<&'a str, Refusal> {
        if value.plain {
            return Ok(value.raw);
        }
        self.decode(value, scratch)?;
        Ok(scratch)
    }

    /// [`Tag::text_of`] for an attribute that may be missing (then empty).
    pub(super) fn text_or_empty<'a>(
        &'a self,
        value: Option<Value<'a>>,
        scratch: &'a mut String,
    ) -> Result<&'a str, Refusal> {
        match value {
            Some(value) => self.text_of(value, scratch),
            None => Ok(""),
        }
    }

    /// The decoded value, `None` when it is blank.
    pub(super) fn owned(&self, value: Value<'_>) -> Result<Option<String>, Refusal> {
        let mut out = String::new();
        self.decode(value, &mut out)?;
        Ok(Some(out).filter(|v| !v.trim().is_empty()))
    }
}

/// What a failure-like element's attributes say.
pub(super) fn red_info(tag: &Tag<'_>) -> Result<RedInfo, Refusal> {
    let mut info = RedInfo::default();
    for (key, value) in tag.attributes() {
        match key {
            b"line" => info.line = parse_line(value.raw),
            b"type" => info.exception = tag.owned(value)?.filter(|e| !is_placeholder_type(e)),
            // Attribute values are read whole; cut them like every kept text.
            b"message" => info.message = tag.owned(value)?.map(cap_text),
            b"file" => info.file = tag.owned(value)?,
            _ => {}
        }
    }
    Ok(info)
}

/// Where [`State::simple_case`] keeps each attribute it reads.
pub(super) mod slot {
    pub(in crate::results::junit) const NAME: usize = 0;
    pub(in crate::results::junit) const CLASSNAME: usize = 1;
    pub(in crate::results::junit) const FILE: usize = 2;
    pub(in crate::results::junit) const TIME: usize = 3;
    pub(in crate::results::junit) const LINE: usize = 4;
}

/// The attribute at `content[at..]` when it is one space, then one of the keys a test
/// case is read by, then `="`: its slot in [`State::simple_case`] and the key's length.
/// The key and what follows it are compared as one word: this is read for every
/// attribute of every passing test case.
pub(super) fn known_attribute(content: &[u8], at: usize) -> Option<(usize, usize)> {
    const fn word(bytes: &[u8]) -> u64 {
        let mut word = 0;
        let mut index = bytes.len();
        while index > 0 {
            index -= 1;
            word = (word << 8) | bytes[index] as u64;
        }
        word
    }
    const SIX: u64 = 0xFFFF_FFFF_FFFF;
    if content.get(at) != Some(&b' ') {
        return None;
    }
    let head = content.get(at + 1..at + 9)?;
    let head = u64::from_le_bytes(head.try_into().ok()?);
    match head & SIX {
        key if key == word(b"name=\"") => Some((slot::NAME, 4)),
        key if key == word(b"file=\"") => Some((slot::FILE, 4)),
        key if key == word(b"time=\"") => Some((slot::TIME, 4)),
        key if key == word(b"line=\"") => Some((slot::LINE, 4)),
        _ if head == word(b"classnam") && content.get(at + 9..at + 12) == Some(b"e=\"") => {
            Some((slot::CLASSNAME, 9))
        }
        _ => None,
    }
}

pub(super) fn capture(target: Target) -> Context {
    Context::Capture {
        target,
        nested: false,
    }
}

pub(super) fn red_kind(name: &[u8]) -> (Outcome, &'static str) {
    if name == b"failure" {
        (Outcome::Fail, "failure")
    } else {
        (Outcome::Error, "error")
    }
}

pub(super) fn status_of(status: &str) -> Status {
    match status.trim().to_ascii_lowercase().as_str() {
        "disabled" | "notrun" | "skipped" | "skip" | "ignored" => Status::Skipped,
        "failed" | "failure" | "fail" => Status::Failed,
        "errored" | "error" => Status::Errored,
        _ => Status::Unsaid,
    }
}

/// `type` values that name the element rather than an exception (nextest's
/// `test failure`, cargo2junit's `cargo test`, gtest's empty type, .NET's `failure`).
fn is_placeholder_type(exception: &str) -> bool {
    let exception = exception.trim();
    [
        "failure",
        "error",
        "failed",
        "test failure",
        "test error",
        "test failed",
        "cargo test",
        "rerun exception",
    ]
    .iter()
    .any(|placeholder| exception.eq_ignore_ascii_case(placeholder))
}

pub(super) fn build_failure(
    info: RedInfo,
    text: &mut CappedText,
    language: frames::Language,
    options: &ParseOptions,
) -> Failure {
    frames::build_failure(
        info.exception,
        info.message,
        text.take().unwrap_or_default(),
        language,
        options,
    )
}

pub(super) fn parse_line(raw: &str) -> Option<u32> {
    // The usual `123` without trimming and the general integer parser: nine digits
    // cannot overflow.
    let digits = raw.as_bytes();
    if (1..=9).contains(&digits.len()) && digits.iter().all(u8::is_ascii_digit) {
        return Some(
            digits
                .iter()
                .fold(0, |line, &digit| line * 10 + u32::from(digit - b'0')),
        );
    }
    raw.trim().parse().ok()
}
