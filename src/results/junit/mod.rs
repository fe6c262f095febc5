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
mod source;
#[cfg(test)]
mod tests;

use std::io::BufRead;

use quick_xml::errors::{IllFormedError, SyntaxError};
use quick_xml::events::{BytesStart, Event};

use self::dialect::{FirstCase, Hints, Ids, Producer};
use self::markup::{AttributeSpan, CappedText, MarkupError, Seconds};
use self::source::{CountingReader, Mark, Relative};
use super::frames;
use super::model::{Execution, Failure, Outcome, cap_text};
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

/// Why an event could not be read, placed relative to the event's start: most events are
/// read without ever counting their line, which is only worked out for a refusal.
#[derive(Debug)]
enum Refusal {
    Syntax(Relative, String),
    NotResults(Relative, String),
    Placed(ParseError),
}

impl Refusal {
    fn placed(self, event: Mark) -> ParseError {
        match self {
            Refusal::Syntax(relative, message) => ParseError::Syntax {
                position: event.at(relative),
                message,
            },
            Refusal::NotResults(relative, message) => ParseError::NotResults {
                position: event.at(relative),
                message,
            },
            Refusal::Placed(error) => error,
        }
    }
}

impl From<ParseError> for Refusal {
    fn from(error: ParseError) -> Refusal {
        Refusal::Placed(error)
    }
}

/// What an open element is to the parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    Suites,
    Suite,
    Properties,
    /// A property, possibly with its value as text: dropped.
    Property,
    Case,
    /// An element whose text is kept, or an element nested in one (`<stackTrace>` in a
    /// `<flakyFailure>`), which adds to the same text.
    Capture {
        target: Target,
        nested: bool,
    },
    /// Anything else: read for well-formedness, otherwise dropped.
    Ignored,
}

/// Where captured text goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// The first `<failure>`/`<error>` of the case.
    Red,
    /// Every later `<failure>`/`<error>` of the case.
    ExtraRed,
    /// The first `<flaky…>`/`<rerun…>` of the case.
    Retry,
    /// Later retries: counted, text dropped.
    Discard,
    Skipped,
    Stdout,
    Stderr,
    /// A `<failure>`/`<error>` directly inside a `<testsuite>`.
    SuiteRed,
}

#[derive(Debug, Clone, Copy)]
struct Open {
    context: Context,
    tag: &'static str,
    /// Where a start tag that stays open began (`None` for `<empty/>` ones).
    at: Option<Mark>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Root {
    Before,
    Inside,
    After,
}

/// What a failure-like element's attributes say.
#[derive(Debug, Default)]
struct RedInfo {
    exception: Option<String>,
    message: Option<String>,
    file: Option<String>,
    line: Option<u32>,
}

/// What a testcase's `status`/`result` attributes say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Status {
    #[default]
    Unsaid,
    Skipped,
    Failed,
    Errored,
}

/// The test case being read. Reused from case to case so its buffers keep their capacity.
#[derive(Debug, Default)]
struct Case {
    /// The canonical id, built when the case opens (its attributes are at hand then).
    id: String,
    file: Option<String>,
    line: Option<u32>,
    seconds: Option<f64>,
    status: Status,
    status_text: String,
    /// The `status` value that made the case a skip (`disabled`, `notrun`).
    skip_status: Option<String>,
    red: Option<(Outcome, RedInfo)>,
    red_text: CappedText,
    extra_reds: u32,
    /// The later `<failure>`/`<error>` being read, and its `message`.
    extra_piece: CappedText,
    extra_message: Option<String>,
    /// The later failures, read so far.
    extra_text: CappedText,
    flaky: u32,
    reruns: u32,
    retry: Option<(Outcome, RedInfo)>,
    retry_text: CappedText,
    skipped: bool,
    skip_message: Option<String>,
    skip_text: CappedText,
    stdout: CappedText,
    stderr: CappedText,
}

impl Case {
    fn reset(&mut self) {
        self.id.clear();
        self.file = None;
        self.line = None;
        self.seconds = None;
        self.status = Status::Unsaid;
        self.status_text.clear();
        self.skip_status = None;
        self.red = None;
        self.red_text.clear();
        self.extra_reds = 0;
        self.extra_piece.clear();
        self.extra_message = None;
        self.extra_text.clear();
        self.flaky = 0;
        self.reruns = 0;
        self.retry = None;
        self.retry_text.clear();
        self.skipped = false;
        self.skip_message = None;
        self.skip_text.clear();
        self.stdout.clear();
        self.stderr.clear();
    }
}

/// Things tolerated on the way, counted so that the summary stays small however large
/// the file is.
#[derive(Debug, Default)]
struct Tolerated {
    unnamed: u64,
    unusable_time: u64,
    unusable_time_example: Option<String>,
    disabled_but_red: u64,
    several_reds: u64,
    suite_reds: u64,
    /// The root element's `tests` count, when it has one.
    declared_root: Option<u64>,
    /// The `tests` counts of the outermost `<testsuite>` elements, added up.
    declared_suites: Option<u64>,
    /// `<testsuite>` elements seen.
    suites: u64,
    /// The root element's name.
    root: &'static str,
}

/// A `tests="N"` attribute's count.
fn declared_count(raw: &str) -> Option<u64> {
    raw.trim().parse().ok()
}

impl Tolerated {
    fn unusable(&mut self, time: &str) {
        self.unusable_time += 1;
        if self.unusable_time_example.is_none() {
            self.unusable_time_example = Some(time.chars().take(40).collect());
        }
    }

    fn into_warnings(self, executions: u64) -> Vec<String> {
        let mut warnings = Vec::new();
        // A file whose cases are missing is stored for what it holds, but never silently:
        // the warning says what the file looked like.
        let declared = self.declared_root.or(self.declared_suites);
        let header = declared.map_or_else(String::new, |n| format!(", declaring tests=\"{n}\""));
        if executions == 0 {
            warnings.push(format!(
                "the file holds no test case (root <{}>, {} <testsuite> element(s){header}); it is stored as a run with no tests",
                self.root, self.suites
            ));
        } else if let Some(declared) = declared.filter(|n| executions.saturating_mul(10) < *n) {
            // Ten times: Surefire counts each rerun (`rerunFailingTestsCount`) in `tests`,
            // so a few declared per case held is normal; 939 for 1 is a cut file.
            warnings.push(format!(
                "the file's header declares tests=\"{declared}\" but it holds {executions} test case(s): it looks cut short or stripped of its cases; only the cases it holds are stored"
            ));
        }
        if self.unnamed > 0 {
            warnings.push(format!(
                "{} test case(s) have no name; their ids fall back to the classname or the suite name",
                self.unnamed
            ));
        }
        if self.unusable_time > 0 {
            warnings.push(format!(
                "{} test case(s) have an unusable time (negative, not a number or implausibly large, such as \"{}\"); their duration is unknown",
                self.unusable_time,
                self.unusable_time_example.unwrap_or_default()
            ));
        }
        if self.disabled_but_red > 0 {
            warnings.push(format!(
                "{} test case(s) are marked disabled but carry a <failure> or <error>; they count as red",
                self.disabled_but_red
            ));
        }
        if self.several_reds > 0 {
            warnings.push(format!(
                "{} test case(s) have several <failure>/<error> elements; the first is their failure, the others' text is appended to it",
                self.several_reds
            ));
        }
        if self.suite_reds > 0 {
            warnings.push(format!(
                "{} <failure>/<error> element(s) sit directly in a <testsuite> (a class that failed before its tests ran); each is reported as the test `<suite>::<init>`",
                self.suite_reds
            ));
        }
        warnings
    }
}

/// What is kept of an open `<testsuite>`.
#[derive(Debug, Default)]
struct Suite {
    name: String,
    /// `hostname`: Playwright writes the project (browser) there.
    host: String,
}

struct State<'o> {
    options: &'o ParseOptions,
    root: Root,
    stack: Vec<Open>,
    /// The enclosing `<testsuite>` elements, innermost last.
    suites: Vec<Suite>,
    hints: Hints,
    ids: Option<Ids>,
    producer: Option<Producer>,
    case: Case,
    suite_red: Option<(Outcome, RedInfo)>,
    suite_red_text: CappedText,
    attributes: Vec<AttributeSpan>,
    scratch: String,
    /// A reference cut by the end of the input buffer, gathered.
    reference: Vec<u8>,
    /// Decoded test case attributes, for the rare values that hold references.
    decoded_name: String,
    decoded_classname: String,
    decoded_file: String,
    tolerated: Tolerated,
    executions: u64,
    saw_anything: bool,
    /// Surefire's retry elements were seen: the traces are Java's even when nothing
    /// else named the writer (Marathon, Surefire files without their schema).
    saw_retry_elements: bool,
    /// Whether [`State::passing_case`] is tried (tests compare it with the general path).
    fast_cases: bool,
}

impl<'o> State<'o> {
    fn new(options: &'o ParseOptions) -> State<'o> {
        State {
            options,
            root: Root::Before,
            stack: Vec::new(),
            suites: Vec::new(),
            hints: Hints::default(),
            ids: None,
            producer: None,
            case: Case::default(),
            suite_red: None,
            suite_red_text: CappedText::default(),
            attributes: Vec::new(),
            scratch: String::new(),
            reference: Vec::new(),
            decoded_name: String::new(),
            decoded_classname: String::new(),
            decoded_file: String::new(),
            tolerated: Tolerated::default(),
            executions: 0,
            saw_anything: false,
            saw_retry_elements: false,
            fast_cases: true,
        }
    }

    fn handle<R: std::io::Read>(
        &mut self,
        event: Event<'_>,
        input: &mut CountingReader<R>,
        sink: &mut Sink<'_>,
    ) -> Result<(), Refusal> {
        self.saw_anything = true;
        match event {
            Event::Start(element) => self.start(&element, Some(input.event_mark())),
            Event::Empty(element) => {
                if self.fast_cases && self.passing_case(&element, sink)? {
                    return Ok(());
                }
                self.start(&element, None)?;
                self.end(sink)
            }
            Event::End(_) => self.end(sink),
            Event::Text(text) => self.text(&text, 0),
            Event::CData(text) => self.text(&text, b"<![CDATA[".len()),
            Event::GeneralRef(reference) => {
                let character = markup::resolve_reference(&reference)
                    .map_err(|message| Refusal::Syntax(Relative::START, message))?;
                if self.root != Root::Inside {
                    return Err(outside_root());
                }
                if let Some(text) = self.capture() {
                    text.push_char(character);
                }
                Ok(())
            }
            Event::DocType(_) => Err(syntax(Relative::START, REFUSED_DOCTYPE)),
            Event::Comment(comment) => {
                refuse_forbidden(&comment, b"<!--".len())?;
                if self.root == Root::Before {
                    self.hints.comment(&comment);
                }
                Ok(())
            }
            Event::PI(instruction) => refuse_forbidden(&instruction, b"<?".len()),
            Event::Decl(_) | Event::Eof => Ok(()),
        }
    }

    /// The hot path. In large files nearly every case is a bare `<testcase …/>` that
    /// passed; reading those without the general machinery (case buffers, the element
    /// stack) keeps parsing within a small factor of a bare XML scan. Anything unusual (a
    /// `status`, a value to decode, the first case of the file) returns `false` for the
    /// general path, which produces the same execution.
    fn passing_case(
        &mut self,
        element: &BytesStart<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<bool, Refusal> {
        self.simple_case(element, element.name().as_ref().len(), sink)
    }

    /// [`State::passing_case`] on the content of an empty element's tag (between `<`
    /// and `/>`) whose name is `name_len` bytes long.
    fn simple_case(
        &mut self,
        content: &[u8],
        name_len: usize,
        sink: &mut Sink<'_>,
    ) -> Result<bool, Refusal> {
        use slot::{CLASSNAME, FILE, LINE, NAME, TIME};
        let in_suite = matches!(
            self.stack.last(),
            Some(Open {
                context: Context::Suite | Context::Suites,
                ..
            })
        );
        if content.get(..name_len) != Some(b"testcase") || !in_suite {
            return Ok(false);
        }
        if !markup::plain_tag(content) {
            return Ok(false);
        }
        let Some(ids) = self.ids.as_mut() else {
            return Ok(false);
        };
        // The attributes read here, by slot; a repeat of one sends the case to the
        // general path, which refuses it. Other keys are compared with each other.
        let mut known: [Option<std::ops::Range<usize>>; 5] = Default::default();
        self.attributes.clear();
        let mut at = name_len;
        loop {
            if let Some((slot, key_length)) = known_attribute(content, at) {
                // ` key="`, read as the general step below would read it.
                let value_start = at + 1 + key_length + 2;
                let rest = content.get(value_start..).unwrap_or_default();
                let Some(length) = markup::closing_quote(rest, b'"') else {
                    return Ok(false);
                };
                if known[slot]
                    .replace(value_start..value_start + length)
                    .is_some()
                {
                    return Ok(false);
                }
                at = value_start + length + 1;
                continue;
            }
            let (key, value) = match markup::next_simple_attribute(content, &mut at) {
                markup::SimpleStep::End => break,
                markup::SimpleStep::Unusual => return Ok(false),
                markup::SimpleStep::Attribute { key, value } => (key, value),
            };
            let slot = match content.get(key.clone()).unwrap_or_default() {
                b"name" => NAME,
                b"classname" => CLASSNAME,
                b"file" => FILE,
                b"time" => TIME,
                b"line" => LINE,
                b"status" | b"result" => return Ok(false),
                _ => {
                    if markup::is_duplicate(content, &self.attributes, key.clone()) {
                        return Ok(false);
                    }
                    self.attributes.push(markup::AttributeSpan {
                        key,
                        value,
                        plain: true,
                    });
                    continue;
                }
            };
            if known[slot].replace(value).is_some() {
                return Ok(false);
            }
        }
        // One check of the whole tag, as the general path makes.
        let Ok(tag) = std::str::from_utf8(content) else {
            return Ok(false);
        };
        let text = |slot: usize| {
            known[slot]
                .clone()
                .and_then(|range| tag.get(range))
                .unwrap_or_default()
        };
        let (case_name, classname, file) = (text(NAME), text(CLASSNAME), text(FILE));
        let time = known[TIME].is_some().then(|| text(TIME).as_bytes());
        let line = parse_line(text(LINE));
        let (suite, host) = self
            .suites
            .last()
            .map_or(("", ""), |suite| (suite.name.as_str(), suite.host.as_str()));
        let (id, unnamed) = ids.id(classname, case_name, file, suite, host);
        if unnamed {
            self.tolerated.unnamed += 1;
        }
        let mut execution = Execution::new(id, Outcome::Pass);
        match time.map_or(Seconds::Missing, markup::parse_seconds_bytes) {
            Seconds::Known(seconds) => execution.duration = Some(seconds),
            Seconds::Missing => {}
            Seconds::Unusable => self
                .tolerated
                .unusable(&String::from_utf8_lossy(time.unwrap_or_default())),
        }
        if !dialect::is_blank(file) {
            execution.file = Some(file.to_owned());
        }
        execution.line = line;
        sink(execution)?;
        self.executions += 1;
        Ok(true)
    }

    fn emit(&mut self, execution: Execution, sink: &mut Sink<'_>) -> Result<(), Refusal> {
        sink(execution)?;
        self.executions += 1;
        Ok(())
    }

    /// Reads the text up to the next tag, where the current element's text goes.
    fn content<R: std::io::Read>(
        &mut self,
        input: &mut CountingReader<R>,
    ) -> Result<(), ParseError> {
        let mut reference = std::mem::take(&mut self.reference);
        let destination = if self.root == Root::Inside {
            match self.capture() {
                Some(text) => content::Destination::Kept(text),
                None => content::Destination::Dropped,
            }
        } else {
            content::Destination::Outside
        };
        let read = content::read(input, destination, &mut reference);
        self.reference = reference;
        self.saw_anything |= read?;
        Ok(())
    }

    /// Reads the `<testcase …/>` that starts the unread input, without quick-xml, when
    /// [`State::simple_case`] takes it; returns whether it did. Anything else, and a tag
    /// the buffer's end cuts, is left for quick-xml to read as an event.
    ///
    /// The tag ends at its first `>`: `simple_case` takes only tags whose every value is
    /// closed before that `>` and holds no quote of its own kind, so no quote is open
    /// there and it is the `>` quick-xml would end the tag at.
    fn simple_case_here<R: std::io::Read>(
        &mut self,
        input: &mut CountingReader<R>,
        sink: &mut Sink<'_>,
    ) -> Result<bool, ParseError> {
        const OPEN: &[u8] = b"<testcase ";
        let available = input.available();
        if !available.starts_with(OPEN) {
            return Ok(false);
        }
        let Some(end) = memchr::memchr(b'>', available) else {
            return Ok(false);
        };
        let Some(content) = available
            .get(1..end)
            .and_then(|content| content.strip_suffix(b"/"))
        else {
            return Ok(false);
        };
        match self.simple_case(content, b"testcase".len(), sink) {
            Ok(true) => {
                input.consume(end + 1);
                Ok(true)
            }
            Ok(false) => Ok(false),
            Err(refusal) => Err(refusal.placed(input.mark_at(0))),
        }
    }

    /// The buffer the current element's text goes to, if it is kept.
    fn capture(&mut self) -> Option<&mut CappedText> {
        let Context::Capture { target, .. } = self.stack.last()?.context else {
            return None;
        };
        let case = &mut self.case;
        match target {
            Target::Red => Some(&mut case.red_text),
            Target::ExtraRed => Some(&mut case.extra_piece),
            Target::Retry => Some(&mut case.retry_text),
            Target::Skipped => Some(&mut case.skip_text),
            Target::Stdout => Some(&mut case.stdout),
            Target::Stderr => Some(&mut case.stderr),
            Target::SuiteRed => Some(&mut self.suite_red_text),
            Target::Discard => None,
        }
    }

    fn text(&mut self, raw: &[u8], skip: usize) -> Result<(), Refusal> {
        refuse_forbidden(raw, skip)?;
        if self.root != Root::Inside {
            if raw.iter().all(u8::is_ascii_whitespace) && skip == 0 {
                return Ok(());
            }
            return Err(outside_root());
        }
        if let Some(text) = self.capture() {
            if skip > 0 && text.is_blank() {
                // Whitespace before a CDATA section is the file's indentation, not text.
                text.clear();
            }
            text.push_raw(raw)
                .map_err(|error| markup_error(&error, skip, raw))?;
        }
        Ok(())
    }

    fn start(&mut self, element: &BytesStart<'_>, at: Option<Mark>) -> Result<(), Refusal> {
        let name = element.name();
        let name = name.as_ref();
        let content: &[u8] = element;
        let mut spans = std::mem::take(&mut self.attributes);
        let result = self.start_with(name, content, &mut spans, at);
        self.attributes = spans;
        result
    }

    fn start_with(
        &mut self,
        name: &[u8],
        content: &[u8],
        spans: &mut Vec<AttributeSpan>,
        at: Option<Mark>,
    ) -> Result<(), Refusal> {
        let needs_decoding = markup::scan_attributes(content, name.len(), spans)
            .map_err(|error| markup_error(&error, 1, content))?;
        let text = markup::tag_text(content).map_err(|error| markup_error(&error, 1, content))?;
        let tag = Tag { text, spans };
        if needs_decoding {
            // References in every value must resolve, kept or not.
            for (_, value) in tag.attributes() {
                tag.decode(value, &mut self.scratch)?;
            }
        }
        let parent = match self.root {
            Root::Before => None,
            Root::Inside => self.stack.last().map(|open| open.context),
            Root::After => {
                return Err(syntax(
                    Relative::START,
                    "a second root element: the file looks like several reports run together",
                ));
            }
        };
        let (opened, tag_name) = match parent {
            None => {
                self.root = Root::Inside;
                match name {
                    b"testsuites" => {
                        self.tolerated.root = "testsuites";
                        self.root_attributes(&tag);
                        (Context::Suites, "testsuites")
                    }
                    b"testsuite" => {
                        self.tolerated.root = "testsuite";
                        self.hints.root_suite = true;
                        self.root_attributes(&tag);
                        self.open_suite(&tag)?;
                        (Context::Suite, "testsuite")
                    }
                    other => {
                        return Err(Refusal::NotResults(
                            Relative::START,
                            dialect::foreign_root(other),
                        ));
                    }
                }
            }
            Some(Context::Suites | Context::Suite) => match name {
                b"testsuite" => {
                    self.open_suite(&tag)?;
                    (Context::Suite, "testsuite")
                }
                b"testcase" => {
                    self.open_case(&tag)?;
                    (Context::Case, "testcase")
                }
                b"properties" => (Context::Properties, "properties"),
                b"failure" | b"error" if parent == Some(Context::Suite) => {
                    let (kind, element) = red_kind(name);
                    if self.suite_red.is_none() {
                        let info = red_info(&tag)?;
                        self.suite_red = Some((kind, info));
                        self.suite_red_text.clear();
                        (capture(Target::SuiteRed), element)
                    } else {
                        (capture(Target::Discard), element)
                    }
                }
                _ => (Context::Ignored, "element"),
            },
            Some(Context::Properties) if name == b"property" => {
                if self.producer.is_none() {
                    self.property(&tag)?;
                }
                (Context::Property, "property")
            }
            Some(Context::Case) => self.case_child(name, &tag)?,
            Some(Context::Capture { target, .. }) => match name {
                b"system-out" | b"system-err" => (Context::Ignored, "element"),
                _ => {
                    // Whitespace before a child (`<stackTrace>`) is indentation.
                    if let Some(text) = self.capture().filter(|text| text.is_blank()) {
                        text.clear();
                    }
                    (
                        Context::Capture {
                            target,
                            nested: true,
                        },
                        "element",
                    )
                }
            },
            Some(Context::Properties | Context::Property | Context::Ignored) => {
                (Context::Ignored, "element")
            }
        };
        self.stack.push(Open {
            context: opened,
            tag: tag_name,
            at,
        });
        Ok(())
    }

    fn case_child(
        &mut self,
        name: &[u8],
        tag: &Tag<'_>,
    ) -> Result<(Context, &'static str), Refusal> {
        Ok(match name {
            b"failure" | b"error" => {
                let (kind, element) = red_kind(name);
                if self.case.red.is_none() {
                    let info = red_info(tag)?;
                    self.case.red = Some((kind, info));
                    (capture(Target::Red), element)
                } else {
                    // Several failures in one case (gtest writes one per failed
                    // assertion): the first is the failure; each later one's text (its
                    // message when it has none) is appended to the failure's text after
                    // the failure is built, so the signature and failing frame stay the
                    // first one's.
                    self.case.extra_reds += 1;
                    self.case.extra_message = red_info(tag)?.message;
                    self.case.extra_piece.clear();
                    (capture(Target::ExtraRed), element)
                }
            }
            b"flakyFailure" | b"flakyError" | b"rerunFailure" | b"rerunError" => {
                let (kind, element) = match name {
                    b"flakyFailure" => (Outcome::FlakyPass, "flakyFailure"),
                    b"flakyError" => (Outcome::FlakyPass, "flakyError"),
                    b"rerunFailure" => (Outcome::Fail, "rerunFailure"),
                    _ => (Outcome::Error, "rerunError"),
                };
                self.saw_retry_elements = true;
                if kind == Outcome::FlakyPass {
                    self.case.flaky = self.case.flaky.saturating_add(1);
                } else {
                    self.case.reruns = self.case.reruns.saturating_add(1);
                }
                if self.case.retry.is_none() {
                    let info = red_info(tag)?;
                    self.case.retry = Some((kind, info));
                    (capture(Target::Retry), element)
                } else {
                    (capture(Target::Discard), element)
                }
            }
            b"skipped" => {
                self.case.skipped = true;
                if self.case.skip_message.is_none() {
                    self.case.skip_message = tag
                        .find(b"message")
                        .map(|value| tag.owned(value))
                        .transpose()?
                        .flatten()
                        .map(cap_text);
                }
                (capture(Target::Skipped), "skipped")
            }
            b"system-out" => (capture(Target::Stdout), "system-out"),
            b"system-err" => (capture(Target::Stderr), "system-err"),
            _ => (Context::Ignored, "element"),
        })
    }

    fn end(&mut self, sink: &mut Sink<'_>) -> Result<(), Refusal> {
        let Some(open) = self.stack.pop() else {
            // quick-xml refuses unmatched end tags; nothing to do for an empty stack.
            return Ok(());
        };
        if self.stack.is_empty() {
            self.root = Root::After;
        }
        match open.context {
            Context::Suite => {
                self.suites.pop();
            }
            Context::Case => {
                self.finish_case(sink)?;
            }
            Context::Capture {
                target: Target::SuiteRed,
                nested: false,
            } => {
                if let Some(execution) = self.finish_suite_red() {
                    self.emit(execution, sink)?;
                }
            }
            Context::Capture {
                target: Target::ExtraRed,
                nested: false,
            } => {
                let case = &mut self.case;
                let piece = case
                    .extra_piece
                    .take()
                    .or_else(|| case.extra_message.take());
                if let Some(piece) = piece {
                    case.extra_text.push_str("\n\n");
                    case.extra_text.push_str(&piece);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn root_attributes(&mut self, tag: &Tag<'_>) {
        let mut id = None;
        let mut name = None;
        for (key, value) in tag.attributes() {
            match key {
                b"tests" => self.tolerated.declared_root = declared_count(value.raw),
                b"id" => id = Some(value.raw.is_empty()),
                b"name" => {
                    name = Some(value.raw.is_empty());
                    self.hints.root_name = Some(value.raw.to_owned());
                }
                _ => {}
            }
        }
        self.hints.root_anonymous = id == Some(true) && name == Some(true);
    }

    fn open_suite(&mut self, tag: &Tag<'_>) -> Result<(), Refusal> {
        let mut suite = Suite::default();
        let outermost = self.suites.is_empty();
        self.tolerated.suites += 1;
        for (key, value) in tag.attributes() {
            if key == b"tests" && outermost {
                if let Some(count) = declared_count(value.raw) {
                    *self.tolerated.declared_suites.get_or_insert(0) += count;
                }
                continue;
            }
            let slot = match key {
                b"name" => &mut suite.name,
                b"hostname" => &mut suite.host,
                b"xsi:noNamespaceSchemaLocation" if self.producer.is_none() => &mut self.scratch,
                _ => continue,
            };
            tag.decode(value, slot)?;
            if self.producer.is_none() {
                self.hints.suite_attribute(key, slot);
            }
        }
        self.suites.push(suite);
        Ok(())
    }

    fn property(&mut self, tag: &Tag<'_>) -> Result<(), Refusal> {
        let mut name = String::new();
        let mut value = String::new();
        if let Some(raw) = tag.find(b"name") {
            tag.decode(raw, &mut name)?;
        }
        if let Some(raw) = tag.find(b"value") {
            tag.decode(raw, &mut value)?;
        }
        self.hints.property(&name, &value);
        Ok(())
    }

    fn open_case(&mut self, tag: &Tag<'_>) -> Result<(), Refusal> {
        self.case.reset();
        let mut name = None;
        let mut classname = None;
        let mut file = None;
        let mut has_result = false;
        for (key, value) in tag.attributes() {
            let case = &mut self.case;
            match key {
                b"name" => name = Some(value),
                b"classname" => classname = Some(value),
                b"file" => file = Some(value),
                b"line" => case.line = parse_line(value.raw),
                b"time" => {
                    let time = tag.text_of(value, &mut self.scratch)?;
                    match markup::parse_seconds(time) {
                        Seconds::Known(seconds) => case.seconds = Some(seconds),
                        Seconds::Missing => {}
                        Seconds::Unusable => self.tolerated.unusable(time),
                    }
                }
                b"status" => {
                    tag.decode(value, &mut case.status_text)?;
                    let status = status_of(&case.status_text);
                    if status != Status::Unsaid {
                        case.status = status;
                    }
                    if status == Status::Skipped {
                        case.skip_status = Some(case.status_text.trim().to_owned());
                    }
                }
                b"result" => {
                    has_result = true;
                    if matches!(
                        tag.text_of(value, &mut self.scratch)?.trim(),
                        "skipped" | "suppressed"
                    ) {
                        case.status = Status::Skipped;
                    }
                }
                _ => {}
            }
        }
        let name = tag.text_or_empty(name, &mut self.decoded_name)?;
        let classname = tag.text_or_empty(classname, &mut self.decoded_classname)?;
        let file = tag.text_or_empty(file, &mut self.decoded_file)?;
        let (suite, host) = self
            .suites
            .last()
            .map_or(("", ""), |suite| (suite.name.as_str(), suite.host.as_str()));
        let (hints, producer, options) = (&self.hints, &mut self.producer, self.options);
        let status = self.case.status_text.trim();
        let ids = self.ids.get_or_insert_with(|| {
            let first = FirstCase {
                classname,
                name,
                file,
                status,
                has_result,
                suite,
            };
            let decided = dialect::decide(hints, first);
            *producer = Some(decided);
            Ids::new(decided, options.repo_root.clone())
        });
        let (id, unnamed) = ids.id(classname, name, file, suite, host);
        if unnamed {
            self.tolerated.unnamed += 1;
        }
        self.case.id = id;
        if !file.trim().is_empty() {
            self.case.file = Some(file.to_owned());
        }
        Ok(())
    }

    fn settle_producer(&mut self, producer: Producer) {
        self.producer = Some(producer);
        self.ids = Some(Ids::new(producer, self.options.repo_root.clone()));
    }

    fn language(&self) -> frames::Language {
        match self.producer {
            Some(Producer::Junit) | None if self.saw_retry_elements => frames::Language::Java,
            Some(producer) => producer.language(),
            None => frames::Language::Unknown,
        }
    }

    /// Builds the case's execution and hands it over, in one place so that the large
    /// value is written once rather than copied through return slots.
    fn finish_case(&mut self, sink: &mut Sink<'_>) -> Result<(), Refusal> {
        let language = self.language();
        let options = self.options;
        let case = &mut self.case;
        let red = case.red.take();
        let status_red = match case.status {
            Status::Failed => Some(Outcome::Fail),
            Status::Errored => Some(Outcome::Error),
            Status::Unsaid | Status::Skipped => None,
        };
        let mut execution = Execution::new(std::mem::take(&mut case.id), Outcome::Pass);
        execution.attempts = 1u32.saturating_add(case.flaky).saturating_add(case.reruns);
        execution.duration = case.seconds;
        let mut red_file = None;
        let mut red_line = None;
        if let Some((kind, info)) = red {
            // A disabled test that still carries a failure is counted red: a failure the
            // runner wrote down is stronger evidence than a label, and hiding a red is
            // worse than showing one.
            if case.status == Status::Skipped {
                self.tolerated.disabled_but_red += 1;
            }
            if case.extra_reds > 0 {
                self.tolerated.several_reds += 1;
            }
            execution.outcome = kind;
            red_file.clone_from(&info.file);
            red_line = info.line;
            let mut failure = build_failure(info, &mut case.red_text, language, options);
            if let Some(extra) = case.extra_text.take() {
                let mut text = std::mem::take(&mut failure.text);
                text.push_str("\n\n");
                text.push_str(&extra);
                failure.text = cap_text(text);
            }
            execution.failure = Some(failure);
        } else if let Some(kind) = status_red {
            execution.outcome = kind;
            execution.failure = Some(build_failure(
                RedInfo::default(),
                &mut case.red_text,
                language,
                options,
            ));
        } else if let Some((kind, info)) = case.retry.take() {
            // flaky… alone: passed after failing; rerun… alone (no final <failure>,
            // which Surefire always writes): failed on every attempt.
            execution.outcome = if case.flaky > 0 {
                Outcome::FlakyPass
            } else {
                kind
            };
            execution.failure = Some(build_failure(info, &mut case.retry_text, language, options));
        } else if case.skipped || case.status == Status::Skipped {
            execution.outcome = Outcome::Skip;
            execution.skip_message = case
                .skip_message
                .take()
                .or_else(|| case.skip_text.take())
                .or_else(|| case.skip_status.take());
        }
        execution.file = case.file.take().or(red_file);
        execution.line = case.line.or(red_line);
        execution.stdout = case.stdout.take();
        execution.stderr = case.stderr.take();
        sink(execution)?;
        self.executions += 1;
        Ok(())
    }

    fn finish_suite_red(&mut self) -> Option<Execution> {
        let (kind, info) = self.suite_red.take()?;
        let suite = self
            .suites
            .last()
            .map(|suite| suite.name.clone())
            .unwrap_or_default();
        if self.producer.is_none() {
            let first = FirstCase {
                classname: &suite,
                name: "<init>",
                file: "",
                status: "",
                has_result: false,
                suite: &suite,
            };
            let producer = dialect::decide(&self.hints, first);
            self.settle_producer(producer);
        }
        self.tolerated.suite_reds += 1;
        let test_id = if suite.trim().is_empty() {
            "<init>".to_owned()
        } else {
            format!("{}::<init>", suite.trim())
        };
        let mut execution = Execution::new(test_id, kind);
        execution.file.clone_from(&info.file);
        execution.line = info.line;
        let language = self.language();
        let failure = build_failure(info, &mut self.suite_red_text, language, self.options);
        execution.failure = Some(failure);
        Some(execution)
    }

    fn finish(self, end: Mark) -> Result<ParseSummary, ParseError> {
        if let Some(open) = self.stack.last() {
            let opened = open
                .at
                .map(|at| format!(" (opened at {})", at.position()))
                .unwrap_or_default();
            return Err(ParseError::Syntax {
                position: end.position(),
                message: format!(
                    "the file ends inside <{}>{opened}: it was cut short",
                    open.tag
                ),
            });
        }
        if self.root == Root::Before {
            if !self.saw_anything {
                return Err(ParseError::NotResults {
                    position: end.position(),
                    message: "the file is empty: no test results in it".into(),
                });
            }
            return Err(ParseError::Syntax {
                position: end.position(),
                message: "no root element: the file holds no XML element".into(),
            });
        }
        Ok(ParseSummary {
            format: None,
            producer: self.producer.map(|p| p.as_str().to_owned()),
            executions: self.executions,
            warnings: self.tolerated.into_warnings(self.executions),
        })
    }
}

/// A start tag being read: its content as text, its attributes, and where it starts.
struct Tag<'t> {
    text: &'t str,
    spans: &'t [AttributeSpan],
}

/// An attribute's raw (still escaped) value and where it starts in the tag.
#[derive(Debug, Clone, Copy)]
struct Value<'t> {
    raw: &'t str,
    start: usize,
    /// Nothing to decode: the raw value is the value.
    plain: bool,
}

impl<'t> Tag<'t> {
    fn attributes(&self) -> impl Iterator<Item = (&'t [u8], Value<'t>)> + '_ {
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

    fn find(&self, wanted: &[u8]) -> Option<Value<'t>> {
        self.attributes()
            .find(|(key, _)| *key == wanted)
            .map(|(_, value)| value)
    }

    /// Decodes `value` into `out` (cleared first).
    fn decode(&self, value: Value<'_>, out: &mut String) -> Result<(), Refusal> {
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
    fn text_of<'a>(
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
    fn text_or_empty<'a>(
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
    fn owned(&self, value: Value<'_>) -> Result<Option<String>, Refusal> {
        let mut out = String::new();
        self.decode(value, &mut out)?;
        Ok(Some(out).filter(|v| !v.trim().is_empty()))
    }
}

/// What a failure-like element's attributes say.
fn red_info(tag: &Tag<'_>) -> Result<RedInfo, Refusal> {
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
mod slot {
    pub(super) const NAME: usize = 0;
    pub(super) const CLASSNAME: usize = 1;
    pub(super) const FILE: usize = 2;
    pub(super) const TIME: usize = 3;
    pub(super) const LINE: usize = 4;
}

/// The attribute at `content[at..]` when it is one space, then one of the keys a test
/// case is read by, then `="`: its slot in [`State::simple_case`] and the key's length.
/// The key and what follows it are compared as one word: this is read for every
/// attribute of every passing test case.
fn known_attribute(content: &[u8], at: usize) -> Option<(usize, usize)> {
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

fn capture(target: Target) -> Context {
    Context::Capture {
        target,
        nested: false,
    }
}

fn red_kind(name: &[u8]) -> (Outcome, &'static str) {
    if name == b"failure" {
        (Outcome::Fail, "failure")
    } else {
        (Outcome::Error, "error")
    }
}

fn status_of(status: &str) -> Status {
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

fn build_failure(
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

fn parse_line(raw: &str) -> Option<u32> {
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

const REFUSED_DOCTYPE: &str =
    "a <!DOCTYPE> declaration: candor refuses DTDs so that no entity is ever expanded or fetched";

fn syntax(relative: Relative, message: impl Into<String>) -> Refusal {
    Refusal::Syntax(relative, message.into())
}

fn markup_error(error: &MarkupError, skip: usize, bytes: &[u8]) -> Refusal {
    syntax(
        Relative::within(skip, bytes, error.at),
        error.message.clone(),
    )
}

/// Refuses the first character XML forbids in an event's `bytes`, which start `skip`
/// bytes after the event does.
fn refuse_forbidden(bytes: &[u8], skip: usize) -> Result<(), Refusal> {
    match markup::first_forbidden(bytes) {
        Some(at) => Err(syntax(
            Relative::within(skip, bytes, at),
            markup::forbidden_message(bytes[at]),
        )),
        None => Ok(()),
    }
}

fn outside_root() -> Refusal {
    syntax(Relative::START, content::OUTSIDE_ROOT)
}

fn xml_error(error: &quick_xml::Error) -> Refusal {
    let message = match error {
        quick_xml::Error::Io(io) => {
            return Refusal::Placed(ParseError::Io(std::io::Error::new(
                io.kind(),
                io.to_string(),
            )));
        }
        quick_xml::Error::Syntax(syntax) => match syntax {
            SyntaxError::UnclosedCData => {
                "a CDATA section that never ends (no `]]>`): the file was cut short".into()
            }
            SyntaxError::UnclosedComment => "a comment that never ends (no `-->`)".into(),
            SyntaxError::UnclosedDoctype => REFUSED_DOCTYPE.into(),
            SyntaxError::UnclosedPIOrXmlDecl => {
                "a processing instruction or XML declaration that never ends (no `?>`)".into()
            }
            SyntaxError::UnclosedTag => {
                "a tag that never ends (no `>`): the file was cut short".into()
            }
            SyntaxError::InvalidBangMarkup => "unknown markup after `<!`".into(),
        },
        quick_xml::Error::IllFormed(ill) => match ill {
            IllFormedError::MismatchedEndTag { expected, found } => {
                format!("the closing tag </{found}> does not match the open <{expected}>")
            }
            IllFormedError::UnmatchedEndTag(tag) => {
                format!("the closing tag </{tag}> closes nothing")
            }
            IllFormedError::MissingEndTag(tag) => {
                format!("the file ends inside <{tag}>: it was cut short")
            }
            IllFormedError::UnclosedReference => content::UNCLOSED_REFERENCE.into(),
            IllFormedError::MissingDoctypeName => REFUSED_DOCTYPE.into(),
            IllFormedError::MissingDeclVersion(_) => "the XML declaration has no version".into(),
            IllFormedError::DoubleHyphenInComment => "`--` inside a comment".into(),
        },
        other => format!("malformed XML: {other}"),
    };
    syntax(Relative::START, message)
}
