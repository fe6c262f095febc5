//! `candor ingest PATH...`: stores each result file all-or-nothing, reports each one, and
//! keeps going past a bad file so that one damaged file does not lose the others.

use crate::history::Location;
use std::path::Path;

use serde::Serialize;

use super::{Open, open_store};
use crate::cli::error::{CliError, history_hint};
use crate::cli::output::Printer;
use crate::cli::settings::IngestSettings;
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
#[derive(Serialize)]
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
            Ok(done) => report_success(printer, file, &done, &mut summary)?,
            Err(error) => {
                summary.failed += 1;
                summary.failed_files.push(file.display().to_string());
                report_failure(printer, file, &error)?;
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
    file: &Path,
    done: &FileIngest,
    summary: &mut SummaryLine,
) -> Result<(), CliError> {
    let report = &done.report;
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
                warnings: &done.summary.warnings,
                error: None,
            },
        )?;
        return Ok(());
    }
    for warning in &done.summary.warnings {
        printer.warning(&format!("{}: {warning}", file.display()))?;
    }
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
            "stored {} ({} red) from {}{kind} as run #{}",
            plural(report.tests, "test", "tests"),
            report.red,
            file.display(),
            report.run_id
        )
    } else {
        format!(
            "already stored: {} (run #{})",
            file.display(),
            report.run_id
        )
    };
    printer.info(&text)?;
    Ok(())
}

fn report_failure(printer: &mut Printer, file: &Path, error: &IngestError) -> Result<(), CliError> {
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
                warnings: &[],
                error: Some(body),
            },
        )?;
        return Ok(());
    }
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
