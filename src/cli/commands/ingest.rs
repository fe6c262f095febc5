//! `candor ingest PATH...`: stores each result file all-or-nothing, reports each one, and
//! keeps going past a bad file so that one damaged file does not lose the others.

use crate::history::Location;
use std::path::Path;

use serde::Serialize;

use super::{Open, open_store};
use crate::cli::error::{CliError, history_hint};
use crate::cli::output::Printer;
use crate::cli::settings::{CommitFrom, IngestSettings};
use crate::exit_codes;
use crate::ingest::{self, FileIngest, IngestError};
use crate::results::{Format, Position};

/// `{"type":"ingest"}`: see docs/json-output.md.
#[derive(Serialize)]
struct IngestLine<'a> {
    file: String,
    status: Status,
    run_id: Option<i64>,
    tests: Option<u64>,
    red: Option<u64>,
    format: Option<&'a str>,
    producer: Option<&'a str>,
    /// The commit the run was stored for.
    commit: Option<&'a str>,
    /// Where that commit came from: `option` (`--commit`), `ci`, or `head` (assumed).
    commit_from: Option<CommitFrom>,
    ci: Option<crate::history::CiIdentity<'a>>,
    warnings: &'a [String],
    error: Option<ErrorBody>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
enum Status {
    Stored,
    AlreadyStored,
    Failed,
}

/// A failed file's error in JSON: the same text a person sees, split into parts.
#[derive(Clone, Serialize)]
struct ErrorBody {
    message: String,
    line: Option<u64>,
    column: Option<u64>,
    causes: Vec<String>,
    hint: Option<String>,
}

/// `{"type":"summary"}`: see docs/json-output.md.
#[derive(Serialize, Default)]
struct SummaryLine {
    files: u64,
    stored: u64,
    already_stored: u64,
    failed: u64,
    failed_files: Vec<String>,
    tests: u64,
    red: u64,
}

pub(super) fn run(
    settings: &IngestSettings,
    db: &Location,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let files = ingest::expand_inputs(&settings.inputs).map_err(CliError::Inputs)?;
    let mut store = open_store(db, Open::CreateIfMissing)?;
    let mut summary = SummaryLine::default();
    for file in &files {
        let mut run = settings.run.clone();
        run.source_path = Some(file.display().to_string());
        let outcome = ingest::ingest_file(&mut *store, file, &run, &settings.parse);
        summary.files += 1;
        match outcome {
            Ok(done) => report_success(printer, settings, file, &done, &mut summary)?,
            Err(error) => {
                summary.failed += 1;
                summary.failed_files.push(file.display().to_string());
                report_failure(printer, settings, file, &error)?;
            }
        }
    }
    if printer.is_json() {
        printer.json("summary", &summary)?;
    } else if summary.files > 1 || summary.failed > 0 {
        printer.info(&human_summary(&summary))?;
    }
    Ok(if summary.failed > 0 {
        exit_codes::USAGE_OR_INPUT
    } else {
        exit_codes::OK
    })
}

fn report_success(
    printer: &mut Printer,
    settings: &IngestSettings,
    file: &Path,
    done: &FileIngest,
    summary: &mut SummaryLine,
) -> Result<(), CliError> {
    let report = &done.report;
    let mut warnings = done.summary.warnings.clone();
    warnings.extend(assumptions(settings, file, done));
    let status = if report.added {
        summary.stored += 1;
        summary.tests += report.tests;
        summary.red += report.red;
        Status::Stored
    } else {
        summary.already_stored += 1;
        Status::AlreadyStored
    };
    if printer.is_json() {
        printer.json(
            "ingest",
            &IngestLine {
                file: file.display().to_string(),
                status,
                run_id: Some(report.run_id),
                tests: Some(report.tests),
                red: Some(report.red),
                format: done.summary.format.map(Format::as_str),
                producer: done.summary.producer.as_deref(),
                commit: settings.run.commit.as_deref(),
                commit_from: settings.commit_from,
                ci: settings.run.ci_identity(),
                warnings: &warnings,
                error: None,
            },
        )?;
    }
    // Warnings go to stderr in every format (docs/json-output.md): a script reading the
    // JSON gets them in the line, a person watching the job sees them.
    for warning in &warnings {
        printer.warning(&format!("{}: {warning}", file.display()))?;
    }
    if printer.is_json() {
        return Ok(());
    }
    // Only an assumed commit is said: a given one is the reader's own.
    let stamped = match (settings.commit_from, settings.run.commit.as_deref()) {
        (Some(CommitFrom::Head), Some(commit)) => {
            format!(" for HEAD {} (no --commit given)", short(commit))
        }
        _ => String::new(),
    };
    let text = if report.added {
        let format = done.summary.format.map(Format::as_str);
        // A generic JUnit file names no tool but `junit`; say it once.
        let producer = done
            .summary
            .producer
            .as_deref()
            .filter(|producer| Some(*producer) != format);
        let kind = match (format, producer) {
            (Some(format), Some(producer)) => format!(" [{format}, {producer}]"),
            (Some(only), None) | (None, Some(only)) => format!(" [{only}]"),
            (None, None) => String::new(),
        };
        format!(
            "stored {} ({} red) from {}{kind} as run #{}{stamped}",
            plural(report.tests, "test", "tests"),
            report.red,
            file.display(),
            report.run_id
        )
    } else {
        format!(
            "already stored: {} (run #{}){stamped}",
            file.display(),
            report.run_id
        )
    };
    printer.info(&text)?;
    Ok(())
}

fn report_failure(
    printer: &mut Printer,
    settings: &IngestSettings,
    file: &Path,
    error: &IngestError,
) -> Result<(), CliError> {
    let body = error_body(error);
    if printer.is_json() {
        printer.json(
            "ingest",
            &IngestLine {
                file: file.display().to_string(),
                status: Status::Failed,
                run_id: None,
                tests: None,
                red: None,
                format: None,
                producer: None,
                commit: settings.run.commit.as_deref(),
                commit_from: settings.commit_from,
                ci: settings.run.ci_identity(),
                warnings: &[],
                error: Some(body.clone()),
            },
        )?;
    }
    // On stderr in every format, as docs/json-output.md says of errors.
    printer.error_parts(&body.message, &body.causes, body.hint.as_deref())?;
    Ok(())
}

/// An ingest error as `FILE[:LINE:COL]: what is wrong`, its causes, and a hint.
fn error_body(error: &IngestError) -> ErrorBody {
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
    ErrorBody {
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
fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

fn human_summary(summary: &SummaryLine) -> String {
    let mut parts = vec![format!("{} stored", summary.stored)];
    if summary.already_stored > 0 {
        parts.push(format!("{} already stored", summary.already_stored));
    }
    if summary.failed > 0 {
        parts.push(format!(
            "{} failed ({})",
            summary.failed,
            summary.failed_files.join(", ")
        ));
    }
    format!(
        "{}: {}",
        plural(summary.files, "file", "files"),
        parts.join(", ")
    )
}

fn plural(count: u64, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}
