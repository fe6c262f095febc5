//! JUnit/xUnit XML in all its dialects, read as a stream: one `Execution` per test case
//! handed to the sink as soon as its `</testcase>` is read, so memory holds one test case
//! and the names of the enclosing suites, never the file.
//!
//! What is kept and what is not:
//! - Per-test texts (failure text, `system-out`, `system-err`) are capped at
//!   [`MAX_TEXT_BYTES`](crate::results::model::MAX_TEXT_BYTES) while reading.
//! - Suite-level `system-out`/`system-err` and properties are dropped unread: they belong
//!   to no test, and keeping them would make memory grow with the file.
//! - A `<!DOCTYPE>` is refused outright, so no entity is ever defined, expanded or fetched;
//!   only XML's five predefined entities and character references are read.
//!
//! Every refusal carries `Position::LineColumn` of the offending construct (the `<` of a
//! bad tag, the byte of a forbidden character or raw `<`, the `&` of an unknown entity):
//! 1-based, columns in bytes of the file for UTF-8 input (a BOM counts), of the decoded
//! text for UTF-16 and 8-bit encodings. Lines are counted lazily (see `source`), so
//! reading a well-formed file costs almost nothing for them.

mod content;
mod dialect;
mod markup;
mod refusal;
mod source;
mod state;
mod tag;
#[cfg(test)]
mod tests;

use std::io::BufRead;

use quick_xml::events::Event;

use self::refusal::xml_error;
use self::source::CountingReader;
use self::state::State;
use super::{ParseError, ParseOptions, ParseSummary, Sink};

/// quick-xml holds a whole event (a CDATA section, say) in one buffer; after an event
/// this large the buffer is given back rather than kept at its high-water mark.
const KEPT_BUFFER_BYTES: usize = 1024 * 1024;

/// Parses a JUnit stream, handing each execution to `sink`.
pub fn parse<R: BufRead>(
    reader: R,
    options: &ParseOptions,
    sink: &mut Sink<'_>,
) -> Result<ParseSummary, ParseError> {
    read(reader, options, sink, Reading::default())
}

/// How [`read`] reads: what production uses, and what tests vary to compare.
#[derive(Debug, Clone, Copy)]
struct Reading {
    /// Text between tags (and simple passing test cases, with `fast_cases`) read by
    /// [`content`] rather than as quick-xml's events.
    own_text: bool,
    /// Simple passing test cases read by [`State::simple_case`] rather than by the
    /// general path.
    fast_cases: bool,
    /// The input buffer's size; tests make it tiny, so that every construct is cut by a
    /// buffer's end somewhere.
    buffer_bytes: usize,
}

impl Default for Reading {
    fn default() -> Reading {
        Reading {
            own_text: true,
            fast_cases: true,
            buffer_bytes: source::BUFFER_BYTES,
        }
    }
}

fn read<R: BufRead>(
    reader: R,
    options: &ParseOptions,
    sink: &mut Sink<'_>,
    reading: Reading,
) -> Result<ParseSummary, ParseError> {
    let input = source::decode(reader)?;
    let mut counting = CountingReader::with_capacity(input, reading.buffer_bytes);
    counting.skip_utf8_bom()?;
    let mut xml = quick_xml::Reader::from_reader(counting);
    let mut buffer = Vec::with_capacity(8 * 1024);
    let mut state = State::new(options);
    state.fast_cases = reading.fast_cases;
    // quick-xml reads the first event itself (it drops a second byte-order mark there),
    // and text after one of its text events: only after any other event is it between
    // tags with nothing read of what follows.
    let mut between_tags = false;
    loop {
        if between_tags && reading.own_text {
            state.content(xml.get_mut())?;
            while reading.fast_cases && state.simple_case_here(xml.get_mut(), sink)? {
                state.content(xml.get_mut())?;
            }
        }
        xml.get_mut().begin_event();
        let event = xml.read_event_into(&mut buffer);
        let input = xml.get_mut();
        between_tags = !matches!(event, Ok(Event::Text(_)));
        let handled = match event {
            Ok(Event::Eof) => break,
            Ok(event) => state.handle(event, input, sink),
            Err(error) => Err(xml_error(&error)),
        };
        handled.map_err(|refusal| refusal.placed(input.event_mark()))?;
        if buffer.capacity() > KEPT_BUFFER_BYTES {
            buffer = Vec::with_capacity(8 * 1024);
        } else {
            buffer.clear();
        }
    }
    state.finish(xml.get_mut().event_mark())
}
