//! Everything candor prints goes through [`Printer`]: data on stdout (aligned text or
//! versioned JSON lines), diagnostics on stderr, color only where the settings allow it,
//! and a closed stdout (`candor tests | head -1`) treated as the reader being done. The
//! workflows' events reach it through the two sinks here, [`JsonLines`] and [`Human`]
//! (a command's [`Render`] turns its events into text); [`sink`] picks one by the format.

use std::fmt::Write as _;
use std::io::{self, Write};

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::Serialize;

use super::settings::{OutputFormat, OutputSettings};

pub mod human;

use crate::events::{Event, EventSink};

/// The version of every JSON line's schema; see `docs/json-output.md` for the policy.
pub const JSON_SCHEMA_VERSION: u32 = crate::events::EVENTS_VERSION;

/// A color or weight for a piece of text, as a plain ANSI SGR sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// No styling.
    Plain,
    /// Headers and labels.
    Bold,
    /// Failures and errors.
    Red,
    /// Passes.
    Green,
    /// Warnings and flaky outcomes.
    Yellow,
    /// Hints.
    Cyan,
    /// Secondary detail.
    Dim,
}

impl Style {
    fn code(self) -> Option<&'static str> {
        match self {
            Style::Plain => None,
            Style::Bold => Some("1"),
            Style::Red => Some("1;31"),
            Style::Green => Some("32"),
            Style::Yellow => Some("1;33"),
            Style::Cyan => Some("1;36"),
            Style::Dim => Some("2"),
        }
    }

    /// `text` wrapped in this style's escape codes when `enabled`.
    pub fn paint(self, text: &str, enabled: bool) -> String {
        match self.code() {
            Some(code) if enabled => format!("\x1b[{code}m{text}\x1b[0m"),
            _ => text.to_owned(),
        }
    }
}

/// One step of a long command's progress, for a watcher that is not a terminal (the MCP
/// server's progress notifications).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// Steps done, when the command counts them.
    pub done: Option<u64>,
    /// Steps planned, when known.
    pub total: Option<u64>,
    /// What is happening.
    pub message: String,
}

/// Where progress goes instead of a terminal.
pub type ProgressSink = std::sync::Arc<dyn Fn(Progress) + Send + Sync>;

/// Writes data to stdout and diagnostics to stderr.
pub struct Printer {
    out: Box<dyn Write>,
    err: Box<dyn Write>,
    settings: OutputSettings,
    stdout_closed: bool,
    /// Long texts already printed whole, so a summarized terminal prints them once.
    shown: std::collections::HashSet<String>,
    /// Progress lines and bars go here, not to stderr, when set.
    progress_sink: Option<ProgressSink>,
}

impl Printer {
    /// A printer on the process's stdout and stderr.
    pub fn stdio(settings: OutputSettings) -> Printer {
        Printer::new(
            Box::new(io::BufWriter::new(io::stdout())),
            Box::new(io::stderr()),
            settings,
        )
    }

    /// A printer on any pair of writers.
    pub fn new(out: Box<dyn Write>, err: Box<dyn Write>, settings: OutputSettings) -> Printer {
        Printer {
            out,
            err,
            settings,
            stdout_closed: false,
            shown: std::collections::HashSet::new(),
            progress_sink: None,
        }
    }

    /// This printer with its progress lines and bars handed to `sink` instead of stderr.
    #[must_use]
    pub fn with_progress_sink(mut self, sink: ProgressSink) -> Printer {
        self.progress_sink = Some(sink);
        self
    }

    /// The settings this printer follows.
    pub fn settings(&self) -> &OutputSettings {
        &self.settings
    }

    /// Whether output is JSON lines.
    pub fn is_json(&self) -> bool {
        self.settings.format == OutputFormat::Json
    }

    /// Whether the reader of stdout has gone away; commands may stop producing data.
    pub fn stdout_closed(&self) -> bool {
        self.stdout_closed
    }

    /// Whether stdout text is colored.
    pub fn color_stdout(&self) -> bool {
        self.settings.color_stdout
    }

    /// One line of data on stdout.
    pub fn line(&mut self, text: &str) -> io::Result<()> {
        self.write_out(|out| writeln!(out, "{text}"))
    }

    /// One informational line on stdout, left out under `--quiet`.
    pub fn info(&mut self, text: &str) -> io::Result<()> {
        if self.settings.quiet {
            return Ok(());
        }
        self.line(text)
    }

    /// One JSON line `{"type": kind, "v": 1, ...body}` on stdout.
    pub fn json<T: Serialize>(&mut self, kind: &'static str, body: &T) -> io::Result<()> {
        #[derive(Serialize)]
        struct Line<'a, T> {
            #[serde(rename = "type")]
            kind: &'static str,
            v: u32,
            #[serde(flatten)]
            body: &'a T,
        }
        let line = Line {
            kind,
            v: JSON_SCHEMA_VERSION,
            body,
        };
        let text = serde_json::to_string(&line).map_err(io::Error::other)?;
        self.line(&text)
    }

    /// `error: message`, then a `Caused by:` line per source, then `hint:` when given.
    pub fn error(&mut self, error: &dyn std::error::Error, hint: Option<&str>) -> io::Result<()> {
        let mut causes = Vec::new();
        let mut source = error.source();
        while let Some(cause) = source {
            causes.push(cause.to_string());
            source = cause.source();
        }
        self.error_parts(&error.to_string(), &causes, hint)
    }

    /// [`Printer::error`] for an error already taken apart.
    pub fn error_parts(
        &mut self,
        message: &str,
        causes: &[String],
        hint: Option<&str>,
    ) -> io::Result<()> {
        // Messages quote test ids and file contents: shown, never obeyed, by the terminal.
        let shown = crate::quote::visible_lines;
        let color = self.settings.color_stderr;
        let mut text = format!("{} {}\n", Style::Red.paint("error:", color), shown(message));
        for cause in causes {
            let _ = writeln!(
                text,
                "{} {}",
                Style::Bold.paint("Caused by:", color),
                shown(cause)
            );
        }
        if let Some(hint) = hint {
            let _ = writeln!(
                text,
                "{} {}",
                Style::Cyan.paint("hint:", color),
                shown(hint)
            );
        }
        self.write_err(&text)
    }

    /// `warning: message` on stderr, shown even under `--quiet`.
    pub fn warning(&mut self, message: &str) -> io::Result<()> {
        let label = Style::Yellow.paint("warning:", self.settings.color_stderr);
        self.write_err(&format!("{label} {message}\n"))
    }

    /// `note: message` on stderr, for what the reader should know about how a result was
    /// reached (where the policy came from); left out under `--quiet`.
    pub fn note(&mut self, message: &str) -> io::Result<()> {
        if self.settings.quiet {
            return Ok(());
        }
        let label = Style::Cyan.paint("note:", self.settings.color_stderr);
        self.write_err(&format!("{label} {message}\n"))
    }

    /// A progress line on stderr, only for a person watching a terminal (not under
    /// `--quiet`, never into a pipe or a file).
    pub fn progress(&mut self, text: &str) -> io::Result<()> {
        if let Some(sink) = &self.progress_sink {
            sink(Progress {
                done: None,
                total: None,
                message: text.to_owned(),
            });
            return Ok(());
        }
        if !self.settings.progress {
            return Ok(());
        }
        let text = Style::Dim.paint(text, self.settings.color_stderr);
        self.write_err(&format!("{text}\n"))
    }

    /// A progress bar on stderr for `total` steps, drawn only where progress lines would be
    /// (a terminal, not under `--quiet`); hidden otherwise, so callers need not ask.
    pub fn progress_bar(&self, total: u64) -> indicatif::ProgressBar {
        if let Some(sink) = &self.progress_sink {
            let bar = indicatif::ProgressBar::with_draw_target(
                Some(total),
                indicatif::ProgressDrawTarget::term_like(Box::new(SinkTerm(sink.clone()))),
            );
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{pos}\u{1f}{len}\u{1f}{msg}")
            {
                bar.set_style(style);
            }
            return bar;
        }
        if !self.settings.progress {
            return indicatif::ProgressBar::hidden();
        }
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(total),
            indicatif::ProgressDrawTarget::stderr(),
        );
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({elapsed})")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar
    }

    /// A listing of `lines` on stdout; on a terminal (see [`OutputSettings::summarize`]) only
    /// the first [`SUMMARY_LINES`] and a count of the rest with `--full` to see them all.
    /// `what` names the items (`"touched tests"`).
    pub fn listing(&mut self, lines: &[String], what: &str) -> io::Result<()> {
        self.listing_of(lines, what, SUMMARY_LINES)
    }

    /// [`Printer::listing`] keeping `keep` lines on a terminal.
    pub fn listing_of(&mut self, lines: &[String], what: &str, keep: usize) -> io::Result<()> {
        // Cutting one line would take as much room as the line.
        let cut = self.settings.summarize && lines.len() > keep + 1;
        let shown = if cut { keep } else { lines.len() };
        for line in &lines[..shown] {
            self.line(line)?;
        }
        if cut {
            self.line(&summary_line(lines.len() - shown, lines.len(), what))?;
        }
        Ok(())
    }

    /// Whether a long text known by `key` is to be printed whole: always, except on a
    /// summarizing terminal where it was printed before (the demo's repeated tracebacks).
    pub fn first_showing(&mut self, key: &str) -> bool {
        !self.settings.summarize || self.shown.insert(key.to_owned())
    }

    /// Writes buffered stdout; a closed pipe is not an error.
    pub fn flush(&mut self) -> io::Result<()> {
        self.write_out(|out| out.flush())
    }

    fn write_out(
        &mut self,
        write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        if self.stdout_closed {
            return Ok(());
        }
        match write(&mut self.out) {
            Err(error) if error.kind() == io::ErrorKind::BrokenPipe => {
                self.stdout_closed = true;
                Ok(())
            }
            other => other,
        }
    }

    fn write_err(&mut self, text: &str) -> io::Result<()> {
        // Keep stdout and stderr in order when both go to the same terminal.
        self.flush()?;
        match self.err.write_all(text.as_bytes()) {
            Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            other => other,
        }
    }
}

/// A progress bar's "terminal" that hands each drawn state (`pos`, `len` and `msg`,
/// split by U+001F: indicatif expands tabs) to a sink.
struct SinkTerm(ProgressSink);

impl std::fmt::Debug for SinkTerm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SinkTerm")
    }
}

impl SinkTerm {
    fn report(&self, line: &str) {
        let mut fields = line.splitn(3, '\u{1f}');
        let (Some(done), Some(total)) = (fields.next(), fields.next()) else {
            return;
        };
        let (Ok(done), Ok(total)) = (done.trim().parse(), total.trim().parse()) else {
            return;
        };
        (self.0)(Progress {
            done: Some(done),
            total: Some(total),
            message: fields.next().unwrap_or("").trim_end().to_owned(),
        });
    }
}

impl indicatif::TermLike for SinkTerm {
    fn width(&self) -> u16 {
        // Wide enough that indicatif never cuts the line it hands over.
        u16::MAX
    }
    fn move_cursor_up(&self, _: usize) -> io::Result<()> {
        Ok(())
    }
    fn move_cursor_down(&self, _: usize) -> io::Result<()> {
        Ok(())
    }
    fn move_cursor_right(&self, _: usize) -> io::Result<()> {
        Ok(())
    }
    fn move_cursor_left(&self, _: usize) -> io::Result<()> {
        Ok(())
    }
    fn write_line(&self, line: &str) -> io::Result<()> {
        self.report(line);
        Ok(())
    }
    fn write_str(&self, text: &str) -> io::Result<()> {
        self.report(text);
        Ok(())
    }
    fn clear_line(&self) -> io::Result<()> {
        Ok(())
    }
    fn flush(&self) -> io::Result<()> {
        Ok(())
    }
}

/// Diagnostics, written alike in both formats: `warning:`, `note:` and `error:` text on
/// stderr, progress lines and bars only for a person at a terminal.
#[derive(Default)]
struct Diagnostics {
    bar: Option<indicatif::ProgressBar>,
}

impl Diagnostics {
    fn write(&mut self, printer: &mut Printer, event: &Event) -> io::Result<()> {
        match event {
            Event::Warning(w) => {
                self.end_bar();
                printer.warning(&w.message)
            }
            Event::Note(n) => {
                self.end_bar();
                printer.note(&n.message)
            }
            Event::Error(e) => {
                self.end_bar();
                printer.error_parts(&e.message, &e.causes, e.hint.as_deref())
            }
            Event::Progress(p) => match p.step {
                None => {
                    self.end_bar();
                    printer.progress(&p.message)
                }
                Some(step) => {
                    let bar = self
                        .bar
                        .get_or_insert_with(|| printer.progress_bar(step.total));
                    bar.set_length(step.total);
                    bar.set_position(step.done);
                    bar.set_message(p.message.clone());
                    if step.done >= step.total {
                        self.end_bar();
                    }
                    Ok(())
                }
            },
            _ => {
                // Data after counted work: the bar is done.
                self.end_bar();
                Ok(())
            }
        }
    }

    fn end_bar(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// The first write error a sink met; later events are dropped, and the command learns of
/// it from `finish`.
fn keep_first(slot: &mut Option<io::Error>, result: io::Result<()>) {
    if let Err(error) = result {
        slot.get_or_insert(error);
    }
}

/// `--format json`: each data event as one line on stdout, diagnostics as text on stderr.
pub struct JsonLines<'p> {
    printer: &'p mut Printer,
    diagnostics: Diagnostics,
    failed: Option<io::Error>,
}

impl<'p> JsonLines<'p> {
    /// A sink writing through `printer`.
    pub fn new(printer: &'p mut Printer) -> JsonLines<'p> {
        JsonLines {
            printer,
            diagnostics: Diagnostics::default(),
            failed: None,
        }
    }

    /// Ends the output; the first write error, if any.
    pub fn finish(mut self) -> io::Result<()> {
        self.diagnostics.end_bar();
        self.failed.map_or(Ok(()), Err)
    }
}

impl EventSink for JsonLines<'_> {
    fn emit(&mut self, event: &Event) {
        if self.failed.is_some() {
            return;
        }
        let mut result = self.diagnostics.write(self.printer, event);
        if result.is_ok() && event.is_json_line() {
            result = self.printer.line(&event.to_line());
        }
        keep_first(&mut self.failed, result);
    }

    fn closed(&self) -> bool {
        self.printer.stdout_closed()
    }
}

/// How a command's data events read for people. A renderer may hold events back (a table
/// is aligned over all its rows) and write them in [`Render::finish`]; it gets the
/// [`Event::Text`] lines too, in order, and writes them with [`text`].
pub trait Render {
    /// Writes (or keeps) one data event or text line.
    fn render(&mut self, printer: &mut Printer, event: &Event) -> io::Result<()>;

    /// Writes what was kept; called once, after the workflow returned.
    fn finish(&mut self, _printer: &mut Printer) -> io::Result<()> {
        Ok(())
    }
}

/// An [`Event::Text`] line on stdout: a detail is left out under `--quiet`.
pub fn text(printer: &mut Printer, text: &crate::events::Text) -> io::Result<()> {
    if text.detail {
        printer.info(&text.message)
    } else {
        printer.line(&text.message)
    }
}

/// A command whose people's output is its [`Event::Text`] lines alone.
#[derive(Debug, Default, Clone, Copy)]
pub struct TextOnly;

impl Render for TextOnly {
    fn render(&mut self, printer: &mut Printer, event: &Event) -> io::Result<()> {
        match event {
            Event::Text(line) => text(printer, line),
            _ => Ok(()),
        }
    }
}

/// The human format: today's text and colors through a command's [`Render`], diagnostics
/// on stderr, progress bars on long work only on a terminal.
pub struct Human<'p, R> {
    printer: &'p mut Printer,
    render: R,
    diagnostics: Diagnostics,
    failed: Option<io::Error>,
}

impl<'p, R: Render> Human<'p, R> {
    /// A sink writing through `printer` with `render`.
    pub fn new(printer: &'p mut Printer, render: R) -> Human<'p, R> {
        Human {
            printer,
            render,
            diagnostics: Diagnostics::default(),
            failed: None,
        }
    }

    /// Writes what the renderer kept; the first write error, if any.
    pub fn finish(mut self) -> io::Result<()> {
        self.diagnostics.end_bar();
        if self.failed.is_none() {
            let result = self.render.finish(self.printer);
            keep_first(&mut self.failed, result);
        }
        self.failed.map_or(Ok(()), Err)
    }
}

impl<R: Render> EventSink for Human<'_, R> {
    fn emit(&mut self, event: &Event) {
        if self.failed.is_some() {
            return;
        }
        let mut result = self.diagnostics.write(self.printer, event);
        if result.is_ok() && !event.is_diagnostic() {
            result = self.render.render(self.printer, event);
        }
        keep_first(&mut self.failed, result);
    }

    fn closed(&self) -> bool {
        self.printer.stdout_closed()
    }
}

/// The sink the output settings ask for.
pub enum Sink<'p, R> {
    /// `--format json`.
    Json(JsonLines<'p>),
    /// `--format human`.
    Human(Human<'p, R>),
}

/// [`JsonLines`] or [`Human`] with `render`, as the printer's format says.
pub fn sink<R: Render>(printer: &mut Printer, render: R) -> Sink<'_, R> {
    if printer.is_json() {
        Sink::Json(JsonLines::new(printer))
    } else {
        Sink::Human(Human::new(printer, render))
    }
}

impl<R: Render> Sink<'_, R> {
    /// Ends the output; the first write error, if any.
    pub fn finish(self) -> io::Result<()> {
        match self {
            Sink::Json(sink) => sink.finish(),
            Sink::Human(sink) => sink.finish(),
        }
    }
}

impl<R: Render> EventSink for Sink<'_, R> {
    fn emit(&mut self, event: &Event) {
        match self {
            Sink::Json(sink) => sink.emit(event),
            Sink::Human(sink) => sink.emit(event),
        }
    }

    fn closed(&self) -> bool {
        match self {
            Sink::Json(sink) => sink.closed(),
            Sink::Human(sink) => sink.closed(),
        }
    }
}

/// Lines a long listing keeps on a terminal.
pub const SUMMARY_LINES: usize = 10;

/// The line that ends a listing cut short on a terminal.
pub fn summary_line(hidden: usize, total: usize, what: &str) -> String {
    format!("  … {hidden} more of {total} {what} (--full lists them all)")
}

/// How a column lines up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text.
    Left,
    /// Numbers.
    Right,
}

/// A column: its header and alignment.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// Header text.
    pub header: &'static str,
    /// Alignment.
    pub align: Align,
}

impl Column {
    /// A text column.
    pub const fn left(header: &'static str) -> Column {
        Column {
            header,
            align: Align::Left,
        }
    }

    /// A number column.
    pub const fn right(header: &'static str) -> Column {
        Column {
            header,
            align: Align::Right,
        }
    }
}

/// The [`Render`] of a command whose output for people is one table: a row for each data
/// event `row` turns into one, aligned over all the rows, so written when the rows are
/// whole (a text line writes the rows before it first).
#[derive(Debug)]
pub struct Table {
    columns: &'static [Column],
    row: fn(&Event) -> Option<Vec<Cell>>,
    rows: Vec<Vec<Cell>>,
}

impl Table {
    /// A table under `columns` whose rows `row` makes.
    pub fn new(columns: &'static [Column], row: fn(&Event) -> Option<Vec<Cell>>) -> Table {
        Table {
            columns,
            row,
            rows: Vec::new(),
        }
    }

    fn flush(&mut self, printer: &mut Printer) -> io::Result<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let rows = std::mem::take(&mut self.rows);
        for line in render_table(self.columns, &rows, printer.color_stdout()) {
            printer.line(&line)?;
            if printer.stdout_closed() {
                break;
            }
        }
        Ok(())
    }
}

impl Render for Table {
    fn render(&mut self, printer: &mut Printer, event: &Event) -> io::Result<()> {
        if let Event::Text(line) = event {
            self.flush(printer)?;
            return text(printer, line);
        }
        if let Some(row) = (self.row)(event) {
            self.rows.push(row);
        }
        Ok(())
    }

    fn finish(&mut self, printer: &mut Printer) -> io::Result<()> {
        self.flush(printer)
    }
}

/// One cell's text and style.
#[derive(Debug, Clone)]
pub struct Cell {
    text: String,
    style: Style,
}

impl Cell {
    /// An unstyled cell; control characters are made visible.
    pub fn plain(text: impl AsRef<str>) -> Cell {
        Cell::styled(text, Style::Plain)
    }

    /// A styled cell; control characters are made visible.
    pub fn styled(text: impl AsRef<str>, style: Style) -> Cell {
        Cell {
            text: terminal_safe(text.as_ref()),
            style,
        }
    }
}

/// Renders rows under a header with columns aligned; the last column is not padded so lines
/// carry no trailing spaces.
pub fn render_table(columns: &[Column], rows: &[Vec<Cell>], color: bool) -> Vec<String> {
    let mut widths: Vec<usize> = columns.iter().map(|c| c.header.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.text.chars().count());
        }
    }
    let header: Vec<Cell> = columns
        .iter()
        .map(|c| Cell::styled(c.header, Style::Bold))
        .collect();
    std::iter::once(&header)
        .chain(rows)
        .map(|row| {
            let mut line = String::new();
            let last = row.len().min(columns.len()).saturating_sub(1);
            for (index, ((cell, column), width)) in row.iter().zip(columns).zip(&widths).enumerate()
            {
                if index > 0 {
                    line.push_str("  ");
                }
                let padding = width.saturating_sub(cell.text.chars().count());
                let painted = cell.style.paint(&cell.text, color);
                match column.align {
                    Align::Right => {
                        line.push_str(&" ".repeat(padding));
                        line.push_str(&painted);
                    }
                    Align::Left if index == last => line.push_str(&painted),
                    Align::Left => {
                        line.push_str(&painted);
                        line.push_str(&" ".repeat(padding));
                    }
                }
            }
            // An empty last cell would leave the separator behind.
            line.truncate(line.trim_end_matches(' ').len());
            line
        })
        .collect()
}

/// Text from result files may hold escape sequences, newlines or invisible format
/// characters (a bidi override makes a name read differently than it is); on a terminal
/// each control character becomes U+FFFD and each format character `\u{XXXX}`
/// ([`crate::quote::visible`]).
pub fn terminal_safe(text: &str) -> String {
    crate::quote::visible(text)
}

/// A timestamp for people: local time to the minute.
pub fn human_time(timestamp: Timestamp) -> String {
    timestamp
        .to_zoned(TimeZone::system())
        .strftime("%Y-%m-%d %H:%M")
        .to_string()
}

/// A duration for people: `850ms`, `1.25s`, `2m05s`.
pub fn human_duration(seconds: f64) -> String {
    if !seconds.is_finite() || seconds < 0.0 {
        return "-".to_owned();
    }
    if seconds < 1.0 {
        format!("{:.0}ms", seconds * 1000.0)
    } else if seconds < 60.0 {
        format!("{seconds:.2}s")
    } else {
        let whole = seconds.round() as u64;
        format!("{}m{:02}s", whole / 60, whole % 60)
    }
}

/// A share as a percentage with one decimal, `-` when there is none.
pub fn human_rate(rate: Option<f64>) -> String {
    rate.map_or_else(|| "-".to_owned(), |r| format!("{:.1}%", r * 100.0))
}

pub use crate::app::short;

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A writer the test reads back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().expect("not poisoned").extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn printer(summarize: bool) -> (Printer, Shared) {
        let out = Shared::default();
        let printer = Printer::new(
            Box::new(out.clone()),
            Box::new(io::sink()),
            OutputSettings {
                format: OutputFormat::Human,
                color_stdout: false,
                color_stderr: false,
                quiet: false,
                progress: false,
                summarize,
            },
        );
        (printer, out)
    }

    fn text(out: &Shared) -> String {
        String::from_utf8(out.0.lock().expect("not poisoned").clone()).expect("utf-8")
    }

    /// Issue #12 item 8: long listings are cut on a terminal, whole elsewhere.
    #[test]
    fn a_long_listing_is_cut_on_a_terminal_with_a_count_and_whole_otherwise() {
        let lines: Vec<String> = (1..=25).map(|n| format!("  t{n}")).collect();
        let (mut terminal, out) = printer(true);
        terminal.listing(&lines, "touched tests").unwrap();
        terminal.flush().unwrap();
        let printed = text(&out);
        assert_eq!(printed.lines().count(), SUMMARY_LINES + 1, "{printed}");
        assert!(printed.starts_with("  t1\n"), "{printed}");
        assert!(
            printed.ends_with("  … 15 more of 25 touched tests (--full lists them all)\n"),
            "{printed}"
        );
        let (mut pipe, out) = printer(false);
        pipe.listing(&lines, "touched tests").unwrap();
        pipe.flush().unwrap();
        assert_eq!(text(&out).lines().count(), 25);
        // One line over is printed, not replaced by a line saying so.
        let (mut terminal, out) = printer(true);
        terminal.listing(&lines[..=SUMMARY_LINES], "tests").unwrap();
        terminal.flush().unwrap();
        assert_eq!(text(&out).lines().count(), SUMMARY_LINES + 1);
        assert!(!text(&out).contains("more of"));
    }

    /// Issue #18 item 2: progress lines and bars reach an MCP client as counted steps.
    #[test]
    fn progress_goes_to_the_sink_counted_and_never_to_stderr() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink_seen = Arc::clone(&seen);
        let err = Shared::default();
        let mut printer = Printer::new(
            Box::new(io::sink()),
            Box::new(err.clone()),
            OutputSettings {
                format: OutputFormat::Json,
                color_stdout: false,
                color_stderr: false,
                quiet: false,
                progress: false,
                summarize: false,
            },
        )
        .with_progress_sink(Arc::new(move |p| {
            sink_seen.lock().expect("not poisoned").push(p);
        }));
        printer.progress("starting").unwrap();
        let bar = printer.progress_bar(4);
        bar.inc(1);
        bar.set_message("base 0/1 red");
        bar.inc(1);
        bar.finish_and_clear();
        let seen = seen.lock().expect("not poisoned").clone();
        assert_eq!(seen[0].message, "starting");
        assert_eq!(seen[0].done, None);
        assert!(
            seen.iter()
                .any(|p| p.done == Some(2) && p.total == Some(4) && p.message == "base 0/1 red"),
            "{seen:?}"
        );
        assert!(text(&err).is_empty(), "{}", text(&err));
    }

    #[test]
    fn a_long_text_is_shown_once_on_a_terminal_and_every_time_otherwise() {
        let (mut terminal, _) = printer(true);
        assert!(terminal.first_showing("sig"));
        assert!(!terminal.first_showing("sig"));
        assert!(terminal.first_showing("other"));
        let (mut pipe, _) = printer(false);
        assert!(pipe.first_showing("sig") && pipe.first_showing("sig"));
    }

    #[test]
    fn table_aligns_by_characters_and_leaves_no_trailing_space() {
        let columns = [
            Column {
                header: "N",
                align: Align::Right,
            },
            Column {
                header: "TEST",
                align: Align::Left,
            },
        ];
        let rows = vec![
            vec![Cell::plain("12"), Cell::plain("é::a")],
            vec![Cell::plain("3"), Cell::plain("b")],
            vec![Cell::plain("4"), Cell::plain("")],
        ];
        assert_eq!(
            render_table(&columns, &rows, false),
            vec![" N  TEST", "12  é::a", " 3  b", " 4"]
        );
    }

    #[test]
    fn control_characters_are_neutralised() {
        assert_eq!(terminal_safe("a\x1b[31mb\nc"), "a\u{FFFD}[31mb\u{FFFD}c");
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(human_duration(0.0123), "12ms");
        assert_eq!(human_duration(1.234), "1.23s");
        assert_eq!(human_duration(125.0), "2m05s");
        assert_eq!(human_duration(f64::NAN), "-");
        assert_eq!(human_duration(-1.0), "-");
    }

    #[test]
    fn short_never_splits_a_character() {
        assert_eq!(short("abcdef", 3), "abc");
        assert_eq!(short("ab", 7), "ab");
        assert_eq!(short("ééé", 2), "éé");
    }
}
