//! The reader's state machine: the open elements, the test case being read, what was
//! tolerated, and what each XML event does to them.

use std::io::BufRead;

use super::content;
use super::dialect;
use super::dialect::FirstCase;
use super::dialect::Hints;
use super::dialect::Ids;
use super::dialect::Producer;
use super::markup;
use super::markup::AttributeSpan;
use super::markup::CappedText;
use super::markup::Seconds;
use super::source::CountingReader;
use super::source::Mark;
use super::source::Relative;
use crate::results::ParseError;
use crate::results::ParseOptions;
use crate::results::ParseSummary;
use crate::results::Sink;
use crate::results::frames;
use crate::results::model::Execution;
use crate::results::model::Outcome;
use crate::results::model::cap_text;
use quick_xml::events::BytesStart;
use quick_xml::events::Event;

use super::refusal::{
    REFUSED_DOCTYPE, Refusal, markup_error, outside_root, refuse_forbidden, syntax,
};
use super::tag::{
    RedInfo, Tag, build_failure, capture, known_attribute, parse_line, red_info, red_kind,
    status_of,
};

/// What an open element is to the parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Context {
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
pub(super) enum Target {
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

/// What a testcase's `status`/`result` attributes say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Status {
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

/// Every enclosing suite's name, outermost first, joined as a JavaScript id's titles.
fn suite_path(suites: &[Suite]) -> String {
    suites
        .iter()
        .map(|suite| suite.name.as_str())
        .collect::<Vec<_>>()
        .join(crate::results::ids::JS_SEPARATOR)
}

/// What is kept of an open `<testsuite>`.
#[derive(Debug, Default)]
struct Suite {
    name: String,
    /// `hostname`: Playwright writes the project (browser) there.
    host: String,
}

pub(super) struct State<'o> {
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
    pub(super) fast_cases: bool,
}

impl<'o> State<'o> {
    pub(super) fn new(options: &'o ParseOptions) -> State<'o> {
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

    pub(super) fn handle<R: std::io::Read>(
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
        use super::tag::slot::{CLASSNAME, FILE, LINE, NAME, TIME};
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
        // One check of the whole tag, as the general path makes (SIMD: every passing
        // case's tag goes through here, 30 MB of the benchmark's 53).
        let Ok(tag) = simdutf8::basic::from_utf8(content) else {
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
        let path;
        let suite = if ids.wants_suite_path() {
            path = suite_path(&self.suites);
            path.as_str()
        } else {
            suite
        };
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
    pub(super) fn content<R: std::io::Read>(
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
    pub(super) fn simple_case_here<R: std::io::Read>(
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
            if key == b"disabled" && self.producer.is_none() {
                self.hints.suite_with_disabled = true;
            }
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
        if self.producer.is_none() {
            self.hints.suite_opened = true;
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
        let path;
        let suite = if ids.wants_suite_path() {
            path = suite_path(&self.suites);
            path.as_str()
        } else {
            suite
        };
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
            execution.failure = Some(Box::new(failure));
        } else if let Some(kind) = status_red {
            execution.outcome = kind;
            execution.failure = Some(Box::new(build_failure(
                RedInfo::default(),
                &mut case.red_text,
                language,
                options,
            )));
        } else if let Some((kind, info)) = case.retry.take() {
            // flaky… alone: passed after failing; rerun… alone (no final <failure>,
            // which Surefire always writes): failed on every attempt.
            execution.outcome = if case.flaky > 0 {
                Outcome::FlakyPass
            } else {
                kind
            };
            execution.failure = Some(Box::new(build_failure(
                info,
                &mut case.retry_text,
                language,
                options,
            )));
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
        execution.failure = Some(Box::new(failure));
        Some(execution)
    }

    pub(super) fn finish(self, end: Mark) -> Result<ParseSummary, ParseError> {
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
