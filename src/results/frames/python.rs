//! Python frames: CPython tracebacks (chained ones included) and pytest's report lines,
//! printed outermost first and read innermost first.

use crate::results::model::Frame;
use regex::Regex;
use std::sync::LazyLock;

use super::message::{TextReading, looks_like_type, strip_type_prefix, type_prefix};
use super::{Guarded, Language, frame, line_number, regex};

pub(super) static CPYTHON_FRAME: Guarded = Guarded::new(
    |text| {
        static FILE_QUOTE: LazyLock<memchr::memmem::Finder<'static>> =
            LazyLock::new(|| memchr::memmem::Finder::new("File \""));
        FILE_QUOTE.find(text.as_bytes()).is_some()
    },
    || regex(r#"(?m)^\s*File "([^"]+)", line (\d+)(?:, in (.+?))?\s*$"#),
);
/// pytest's location line; [`pytest_location`] reads single lines the same way, faster.
pub(super) static PYTEST_LOCATION: Guarded = Guarded::new(
    |text| text.contains(".py:"),
    || regex(r"(?m)^\s*((?:[A-Za-z]:[\\/])?[^:\s][^:]*?\.py):(\d+):(?:[ \t]+(.*?))?[ \t]*$"),
);
/// A `def` line; [`python_def`] reads lines the same way, faster. Not multi-line: `^` is
/// the start of the text.
pub(super) static PYTHON_DEF: Guarded = Guarded::new(
    |text| {
        let text = text.trim_start();
        text.starts_with("def") || text.starts_with("async")
    },
    || regex(r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\("),
);
pub(super) static PYTHON_EXCEPTION_LINE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)(?::\s*(.*?))?\s*$"));

/// What [`PYTEST_LOCATION`] captures on one line: `tests/test_x.py:10: AssertionError`.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct PytestLocation<'t> {
    pub(super) path: &'t str,
    pub(super) line: &'t str,
    /// After the second colon, spaces and tabs trimmed; `None` when nothing follows it.
    pub(super) trailer: Option<&'t str>,
}

/// Reads one line (no `\n`) exactly as [`PYTEST_LOCATION`] does, without the regex
/// engine: a long pytest report has several location lines per failure, read twice (for
/// frames and for the exception), and this was most of the time spent parsing a file.
#[expect(
    clippy::case_sensitive_file_extension_comparisons,
    reason = "the pattern it stands for reads `.py` case-sensitively"
)]
pub(super) fn pytest_location(line: &str) -> Option<PytestLocation<'_>> {
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
pub(super) fn python_def(line: &str) -> Option<&str> {
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
pub(super) fn pytest_e_line(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('E')?;
    rest.starts_with(char::is_whitespace).then(|| rest.trim())
}

pub(super) const PYTHON_CHAIN_SEPARATORS: [&str; 2] = [
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
];

/// `text.lines()`, each line ending found with `memchr`: Python failures are read line by
/// line twice, and on their many short lines std's search for the newline cost more than
/// everything else done with the line.
pub(super) fn lines(text: &str) -> impl Iterator<Item = &str> {
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

pub(super) fn python_frames(text: &str) -> Vec<Frame> {
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
pub(super) fn python_read(text: &str) -> (Vec<Frame>, TextReading) {
    // A CPython frame line holds `File "`: when the text has none, no line is tried.
    let cpython = CPYTHON_FRAME.may_match(text);
    let mut blocks: Vec<Vec<Frame>> = vec![Vec::new()];
    let mut last_def: Option<String> = None;
    // The location line closing pytest's report names the type: `x.py:10: ValueError`.
    let mut from_location: Option<&str> = None;
    let mut first_e_line: Option<&str> = None;
    let mut typed_e_line: Option<&str> = None;
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
                && let Some((kind, _)) = type_prefix(trailer, Language::Python)
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
                && let Some((kind, _)) = type_prefix(content, Language::Python)
            {
                typed_e_line = Some(kind);
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
        .or(typed_e_line)
        .map(str::to_owned)
        .or_else(|| cpython_final.as_ref().map(|(kind, _)| kind.clone()));
    let message = match first_e_line {
        Some(line) => Some(strip_type_prefix(line, exception.as_deref()).to_owned()),
        None => cpython_final.map(|(_, message)| message),
    };
    (frames, TextReading { exception, message })
}

pub(super) fn python_exception(text: &str) -> TextReading {
    python_read(text).1
}
