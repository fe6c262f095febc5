//! The bytes under the XML parser: picks the input's encoding (BOM, then the XML
//! declaration), transcodes anything that is not UTF-8, and counts lines as quick-xml and
//! the content reader consume so that every error can name a line and column.

use std::io::{self, BufRead, Read};

use encoding_rs::Encoding;
use encoding_rs_io::DecodeReaderBytesBuilder;

use crate::results::{ParseError, Position};

pub(super) const BUFFER_BYTES: usize = 64 * 1024;

/// How far the XML declaration may reach; longer prologues are not declarations.
const DECLARATION_BYTES: usize = 1024;

/// Where consumption stands: enough to turn any later byte into a line and a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Mark {
    offset: u64,
    line: u64,
    line_start: u64,
}

impl Mark {
    const START: Mark = Mark {
        offset: 0,
        line: 1,
        line_start: 0,
    };

    /// The 1-based line and byte column of this mark.
    pub(super) fn position(self) -> Position {
        Position::LineColumn {
            line: self.line,
            column: self.offset - self.line_start + 1,
        }
    }

    /// The position of `bytes[index]`, where `bytes` begins `skip` bytes (none of them a
    /// newline) after this mark. Used for errors inside an event quick-xml has buffered.
    pub(super) fn advance(self, skip: usize, bytes: &[u8], index: usize) -> Position {
        self.at(Relative::within(skip, bytes, index))
    }

    /// The position `relative` to this mark.
    pub(super) fn at(self, relative: Relative) -> Position {
        if relative.lines == 0 {
            Position::LineColumn {
                line: self.line,
                column: self.offset - self.line_start + 1 + relative.column,
            }
        } else {
            Position::LineColumn {
                line: self.line + relative.lines,
                column: relative.column,
            }
        }
    }

    /// Moves past `bytes`.
    fn count(&mut self, bytes: &[u8]) {
        // Searching backwards first settles the common cases cheaply: no line feed at all
        // (one pass), or the last one near the end and then one vectorized count.
        if let Some(last) = memchr::memrchr(b'\n', bytes) {
            self.line += memchr::memchr_iter(b'\n', &bytes[..=last]).count() as u64;
            self.line_start = self.offset + last as u64 + 1;
        }
        self.offset += bytes.len() as u64;
    }
}

/// A place relative to the start of the event being read, found without knowing where
/// that event is: so many lines further down, and the column there (on the event's own
/// line: so many bytes to the right).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Relative {
    lines: u64,
    column: u64,
}

impl Relative {
    /// The event's start itself.
    pub(super) const START: Relative = Relative {
        lines: 0,
        column: 0,
    };

    /// Where `bytes[index]` is, `bytes` beginning `skip` bytes (no newline among them)
    /// after the event's start.
    pub(super) fn within(skip: usize, bytes: &[u8], index: usize) -> Relative {
        let before = bytes.get(..index).unwrap_or(bytes);
        match memchr::memrchr(b'\n', before) {
            None => Relative {
                lines: 0,
                column: (skip + before.len()) as u64,
            },
            Some(last) => Relative {
                lines: memchr::memchr_iter(b'\n', before).count() as u64,
                column: (before.len() - last) as u64,
            },
        }
    }
}

/// A buffered reader that can say where each event starts.
///
/// Lines are counted lazily, in as few passes as possible: only when the parser asks for
/// the line of an event (a start tag that stays open, an error) and over the rest of a
/// buffer before it is refilled.
pub(super) struct CountingReader<R> {
    inner: R,
    buffer: Box<[u8]>,
    /// Consumed up to here.
    start: usize,
    /// Filled up to here.
    end: usize,
    /// Lines counted up to here; `counted_mark` is where that is.
    counted: usize,
    counted_mark: Mark,
    /// Offset where the current event starts, and that place once it has been counted.
    event_start: u64,
    event_mark: Option<Mark>,
    /// The last byte of the previous buffer, for an event that starts a buffer.
    last_of_previous: u8,
}

impl<R: Read> CountingReader<R> {
    #[cfg(test)]
    pub(super) fn new(inner: R) -> CountingReader<R> {
        CountingReader::with_capacity(inner, BUFFER_BYTES)
    }

    /// A reader with a buffer of `capacity` bytes; tests use tiny ones so that every
    /// construct gets cut at a buffer's end somewhere.
    pub(super) fn with_capacity(inner: R, capacity: usize) -> CountingReader<R> {
        CountingReader {
            inner,
            buffer: vec![0; capacity.max(1)].into_boxed_slice(),
            start: 0,
            end: 0,
            counted: 0,
            counted_mark: Mark::START,
            event_start: 0,
            event_mark: None,
            last_of_previous: 0,
        }
    }

    fn consumed_offset(&self) -> u64 {
        self.counted_mark.offset + self.start.saturating_sub(self.counted) as u64
    }

    fn count_to(&mut self, index: usize) {
        // Events only move forward, so the count never needs to go back.
        if let Some(bytes) = self.buffer.get(self.counted..index) {
            self.counted_mark.count(bytes);
            self.counted = index;
        }
    }

    /// Notes that the next event starts here.
    pub(super) fn begin_event(&mut self) {
        let mut offset = self.consumed_offset();
        let last_consumed = match self.start.checked_sub(1) {
            Some(index) => self.buffer.get(index).copied().unwrap_or_default(),
            None => self.last_of_previous,
        };
        if last_consumed == b'<' {
            // Only a text event ends by consuming `<`: the markup after it starts there.
            offset = offset.saturating_sub(1);
        }
        self.event_start = offset;
        self.event_mark = None;
    }

    /// Where the current event starts.
    pub(super) fn event_mark(&mut self) -> Mark {
        if let Some(mark) = self.event_mark {
            return mark;
        }
        let ahead = self.event_start.saturating_sub(self.counted_mark.offset);
        let index = self.counted.saturating_add(ahead as usize).min(self.end);
        self.count_to(index);
        self.event_mark = Some(self.counted_mark);
        self.counted_mark
    }

    /// The bytes filled and not yet consumed, as [`BufRead::fill_buf`] last left them;
    /// borrowing the reader only to read, so that [`CountingReader::mark_at`] can be
    /// asked about them.
    pub(super) fn available(&self) -> &[u8] {
        self.buffer.get(self.start..self.end).unwrap_or_default()
    }

    /// Where `available()[index]` is. Counts from the last counted place without
    /// moving it: used for errors and other rare places, never per byte.
    pub(super) fn mark_at(&self, index: usize) -> Mark {
        let mut mark = self.counted_mark;
        let at = self.start.saturating_add(index).min(self.end);
        debug_assert!(
            self.counted <= at,
            "marks are only asked for ahead of the count"
        );
        if let Some(bytes) = self.buffer.get(self.counted..at) {
            mark.count(bytes);
        }
        mark
    }

    /// Consumes a UTF-8 byte-order mark, so that it counts in line 1's columns (quick-xml
    /// would drop it unseen inside its first event).
    pub(super) fn skip_utf8_bom(&mut self) -> io::Result<()> {
        if self.fill_buf()?.starts_with(b"\xEF\xBB\xBF") {
            self.consume(3);
        }
        Ok(())
    }
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let amount = available.len().min(out.len());
        out[..amount].copy_from_slice(&available[..amount]);
        self.consume(amount);
        Ok(amount)
    }
}

impl<R: Read> BufRead for CountingReader<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.start == self.end {
            let buffer_end =
                self.counted_mark.offset + (self.end - self.counted.min(self.end)) as u64;
            if self.event_mark.is_none() && self.event_start < buffer_end {
                // The event began in this buffer: place it before the buffer goes.
                self.event_mark();
            }
            self.count_to(self.end);
            if let Some(&last) = self.end.checked_sub(1).and_then(|i| self.buffer.get(i)) {
                self.last_of_previous = last;
            }
            self.end = self.inner.read(&mut self.buffer)?;
            self.start = 0;
            self.counted = 0;
        }
        Ok(self.buffer.get(self.start..self.end).unwrap_or_default())
    }

    fn consume(&mut self, amount: usize) {
        self.start = self.start.saturating_add(amount).min(self.end);
    }
}

/// Turns the raw input into UTF-8: passes UTF-8 through untouched (BOM included, so that
/// columns on line 1 count the file's own bytes) and transcodes UTF-16 (by its BOM) and
/// the 8-bit encodings an XML declaration names (`ISO-8859-1`, `windows-1252`, …).
///
/// Positions in transcoded input are lines and columns of the decoded UTF-8 text: lines
/// match the file, columns count UTF-8 bytes.
pub(super) fn decode<'a, R: BufRead + 'a>(mut reader: R) -> Result<Box<dyn Read + 'a>, ParseError> {
    let head = reader.fill_buf()?;
    let encoding = if head.starts_with(&[0xFF, 0xFE]) {
        Some(encoding_rs::UTF_16LE)
    } else if head.starts_with(&[0xFE, 0xFF]) {
        Some(encoding_rs::UTF_16BE)
    } else if head.starts_with(b"\xEF\xBB\xBF") {
        None
    } else {
        declared_encoding(head)?.filter(|e| {
            // A declaration readable as ASCII cannot be UTF-16 whatever it says.
            !matches!(e.name(), "UTF-8" | "UTF-16LE" | "UTF-16BE")
        })
    };
    Ok(match encoding {
        None => Box::new(reader),
        Some(encoding) => Box::new(
            DecodeReaderBytesBuilder::new()
                .encoding(Some(encoding))
                .strip_bom(true)
                .build(reader),
        ),
    })
}

/// The encoding an ASCII-compatible `<?xml … encoding="…"?>` at the very start names.
fn declared_encoding(head: &[u8]) -> Result<Option<&'static Encoding>, ParseError> {
    if !head.starts_with(b"<?xml") {
        return Ok(None);
    }
    let window = &head[..head.len().min(DECLARATION_BYTES)];
    let Some(end) = find(window, b"?>") else {
        return Ok(None);
    };
    let declaration = &window[..end];
    let Some(key) = find(declaration, b"encoding") else {
        return Ok(None);
    };
    let rest = &declaration[key + b"encoding".len()..];
    let rest = rest.trim_ascii_start();
    let Some(rest) = rest.strip_prefix(b"=") else {
        return Ok(None);
    };
    let value_at = declaration.len() - rest.trim_ascii_start().len();
    let rest = rest.trim_ascii_start();
    let Some((&quote, rest)) = rest
        .split_first()
        .filter(|(q, _)| matches!(q, b'"' | b'\''))
    else {
        return Ok(None);
    };
    let Some(label_end) = rest.iter().position(|&b| b == quote) else {
        return Ok(None);
    };
    let label = &rest[..label_end];
    match Encoding::for_label(label) {
        Some(encoding) => Ok(Some(encoding)),
        None => Err(ParseError::Syntax {
            position: Mark::START.advance(0, declaration, value_at + 1),
            message: format!(
                "the XML declaration names the encoding \"{}\", which candor does not know",
                String::from_utf8_lossy(label)
            ),
        }),
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn consume_all(input: &[u8], step: usize) -> CountingReader<&[u8]> {
        // Marks are taken between steps, as the parser takes one per event.
        let mut reader = CountingReader::new(input);
        loop {
            let available = reader.fill_buf().map_or(0, <[u8]>::len);
            if available == 0 {
                break;
            }
            reader.consume(available.min(step));
            reader.begin_event();
            reader.event_mark();
        }
        reader
    }

    #[test]
    fn counts_lines_and_columns_whatever_the_consumption_steps() {
        for step in [1, 2, 7, 4096] {
            let mut reader = consume_all(b"ab\ncd\n\nefg", step);
            assert_eq!(
                reader.event_mark().position(),
                Position::LineColumn { line: 4, column: 4 },
                "step {step}"
            );
        }
    }

    #[test]
    fn an_event_that_spans_buffers_keeps_its_start() {
        let mut input = b"<a>\n<![CDATA[".to_vec();
        input.extend(std::iter::repeat_n(b'x', 3 * BUFFER_BYTES));
        input.extend(b"\n]]></a>");
        let mut reader = CountingReader::new(&input[..]);
        reader.fill_buf().unwrap();
        reader.consume(4);
        reader.begin_event();
        loop {
            let available = reader.fill_buf().map_or(0, <[u8]>::len);
            if available == 0 {
                break;
            }
            reader.consume(available);
        }
        assert_eq!(
            reader.event_mark().position(),
            Position::LineColumn { line: 2, column: 1 }
        );
        reader.begin_event();
        assert_eq!(
            reader.event_mark().position(),
            Position::LineColumn { line: 3, column: 8 }
        );
    }

    #[test]
    fn advance_counts_newlines_inside_an_event() {
        let mark = Mark::START;
        assert_eq!(
            mark.advance(1, b"a\nbc", 3),
            Position::LineColumn { line: 2, column: 2 }
        );
        assert_eq!(
            mark.advance(1, b"abc", 2),
            Position::LineColumn { line: 1, column: 4 }
        );
    }

    #[test]
    fn reads_the_declared_encoding() {
        let head = b"<?xml version=\"1.0\" encoding='ISO-8859-1'?><a/>";
        let encoding = declared_encoding(head).unwrap().unwrap();
        assert_eq!(encoding.name(), "windows-1252");
        assert!(declared_encoding(b"<a/>").unwrap().is_none());
    }

    #[test]
    fn an_unknown_declared_encoding_is_refused_at_its_label() {
        let error = declared_encoding(b"<?xml version=\"1.0\" encoding=\"klingon\"?>").unwrap_err();
        assert_eq!(
            error.position(),
            Some(Position::LineColumn {
                line: 1,
                column: 31
            })
        );
    }
}
