//! `candor ingest PATH...`: stores each result file all-or-nothing, reports each one, and
//! keeps going past a bad file so that one damaged file does not lose the others.

use std::path::Path;

use super::{AppError, Ports};
use crate::app::error::history_hint;
use crate::cli::settings::{CommitFrom, IngestSettings};
use crate::events::{self, ErrorEvent, Event, FileError, IngestEvent, IngestStatus, IngestSummary};
use crate::exit_codes;
use crate::history::HistoryStore;
use crate::ingest::{self, FileIngest, IngestError};
use crate::results::{Format, Position};

/// Stores every file `settings` names into `store`; one `ingest` event per file, then the
/// `summary`. Exit 2 when any file failed.
pub fn run(
    settings: &IngestSettings,
    store: &mut dyn HistoryStore,
    ports: &mut Ports<'_>,
) -> Result<u8, AppError> {
    let files = ingest::expand_inputs(&settings.inputs).map_err(AppError::Inputs)?;
    let mut summary = IngestSummary::default();
    for file in &files {
        let mut run = settings.run.clone();
        run.source_path = Some(file.display().to_string());
        let outcome = ingest::ingest_file(store, file, &run, &settings.parse);
        summary.files += 1;
        let line = match outcome {
            Ok(done) => stored(settings, file, &done, &mut summary, ports),
            Err(error) => {
                summary.failed += 1;
                summary.failed_files.push(file.display().to_string());
                failed(settings, file, &error, ports)
            }
        };
        ports.emit(Event::Ingest(line));
    }
    let failed = summary.failed > 0;
    ports.emit(Event::IngestSummary(summary));
    Ok(if failed {
        exit_codes::USAGE_OR_INPUT
    } else {
        exit_codes::OK
    })
}

fn commit_from(settings: &IngestSettings) -> Option<events::CommitFrom> {
    settings.commit_from.map(|from| match from {
        CommitFrom::Option => events::CommitFrom::Option,
        CommitFrom::Ci => events::CommitFrom::Ci,
        CommitFrom::Head => events::CommitFrom::Head,
    })
}

/// A stored file's line; its warnings are emitted first (stderr in every format: a
/// script reading the JSON gets them in the line, a person watching the job sees them).
fn stored(
    settings: &IngestSettings,
    file: &Path,
    done: &FileIngest,
    summary: &mut IngestSummary,
    ports: &mut Ports<'_>,
) -> IngestEvent {
    let report = &done.report;
    let mut warnings = done.summary.warnings.clone();
    warnings.extend(assumptions(settings, file, done));
    let status = if report.added {
        summary.stored += 1;
        summary.tests += report.tests;
        summary.red += report.red;
        IngestStatus::Stored
    } else {
        summary.already_stored += 1;
        IngestStatus::AlreadyStored
    };
    for warning in &warnings {
        ports.warning(format!("{}: {warning}", file.display()));
    }
    IngestEvent {
        file: file.display().to_string(),
        status,
        run_id: Some(report.run_id),
        tests: Some(report.tests),
        red: Some(report.red),
        format: done.summary.format.map(|f| f.as_str().to_owned()),
        producer: done.summary.producer.clone(),
        commit: settings.run.commit.clone(),
        commit_from: commit_from(settings),
        warnings,
        error: None,
    }
}

/// A failed file's line; its error is emitted first (stderr in every format, as
/// docs/json-output.md says of errors).
fn failed(
    settings: &IngestSettings,
    file: &Path,
    error: &IngestError,
    ports: &mut Ports<'_>,
) -> IngestEvent {
    let body = error_body(error);
    ports.emit(Event::Error(ErrorEvent {
        message: body.message.clone(),
        causes: body.causes.clone(),
        hint: body.hint.clone(),
    }));
    IngestEvent {
        file: file.display().to_string(),
        status: IngestStatus::Failed,
        run_id: None,
        tests: None,
        red: None,
        format: None,
        producer: None,
        commit: settings.run.commit.clone(),
        commit_from: commit_from(settings),
        warnings: Vec::new(),
        error: Some(body),
    }
}

/// An ingest error as `FILE[:LINE:COL]: what is wrong`, its causes, and a hint.
fn error_body(error: &IngestError) -> FileError {
    let (line, column) = match error.position() {
        Some(Position::LineColumn { line, column }) => (Some(line), Some(column)),
        _ => (None, None),
    };
    let hint = match error {
        IngestError::Store(store) => history_hint(store),
        _ => error.hint().map(str::to_owned),
    };
    let mut causes = Vec::new();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        causes.push(cause.to_string());
        source = cause.source();
    }
    FileError {
        message: error.to_string(),
        line,
        column,
        causes,
        hint,
    }
}

/// How much earlier than HEAD's commit a file must have been written to be warned about:
/// commit times are whole seconds and file times come from a coarse clock, so a file
/// written just after the commit can look a moment older.
const WRITTEN_BEFORE_SLACK: jiff::SignedDuration = jiff::SignedDuration::from_secs(2);

/// What the reader should know that candor assumed for this file: a commit taken from
/// HEAD for a file written before HEAD was committed, and libtest ids without their test
/// binary.
fn assumptions(settings: &IngestSettings, file: &Path, done: &FileIngest) -> Vec<String> {
    let mut said = Vec::new();
    if let (Some(CommitFrom::Head), Some(commit), Some(committed), Some(written)) = (
        settings.commit_from,
        settings.run.commit.as_deref(),
        settings.head_committed_at,
        done.written_at,
    ) && written < committed - WRITTEN_BEFORE_SLACK
    {
        said.push(format!(
            "written at {} (per {}), before HEAD {} was committed at {}: these are likely an earlier commit's results, stored as HEAD's; pass --commit SHA to store them for the commit they ran on",
            written.round(jiff::Unit::Second).unwrap_or(written),
            if done.written_at_from_content { "its own timestamp" } else { "its modification time" },
            short(commit),
            committed,
        ));
    }
    let unbound = done.summary.format == Some(Format::LibtestJson)
        && done.summary.producer.as_deref() == Some("libtest")
        && settings.parse.test_binary.is_none();
    if unbound {
        said.push(format!(
            "libtest JSON does not name its test binary, so {} ids are `module::test`, while `candor test` and nextest name the same tests `BINARY::module::test`: pass --crate NAME (a package's library unit tests) or --binary ID (docs/formats.md#test-ids)",
            file.display()
        ));
    }
    said
}

/// The first twelve characters of a sha.
pub(crate) fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}
