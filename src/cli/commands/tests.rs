//! `candor tests`: one line per test in the history with its record.

use std::path::Path;

use jiff::Timestamp;
use serde::Serialize;

use super::{Open, open_store};
use crate::cli::error::CliError;
use crate::cli::output::{
    Align, Cell, Column, Printer, Style, human_rate, human_time, render_table,
};
use crate::cli::settings::TestsSettings;
use crate::exit_codes;
use crate::history::TestSummary;

/// The human table's columns. The test id comes last: ids are long and vary, and the
/// numbers line up best before them. A tier column goes first when tiers land.
const COLUMNS: [Column; 6] = [
    Column {
        header: "RUNS",
        align: Align::Right,
    },
    Column {
        header: "FAILS",
        align: Align::Right,
    },
    Column {
        header: "PASS RATE",
        align: Align::Right,
    },
    Column {
        header: "LAST FAILURE",
        align: Align::Left,
    },
    Column {
        header: "LAST SEEN",
        align: Align::Left,
    },
    Column {
        header: "TEST",
        align: Align::Left,
    },
];

/// `{"type":"test"}`: see docs/json-output.md.
#[derive(Serialize)]
struct TestLine<'a> {
    id: &'a str,
    runs: u64,
    failures: u64,
    skips: u64,
    pass_rate: Option<f64>,
    last_failure: Option<Timestamp>,
    last_seen: Timestamp,
}

pub(super) fn run(
    settings: &TestsSettings,
    db: &Path,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let store = open_store(db, Open::Existing)?;
    let tests = store.tests(settings.failing_only)?;
    if printer.is_json() {
        for test in &tests {
            printer.json("test", &line(test))?;
            if printer.stdout_closed() {
                break;
            }
        }
        return Ok(exit_codes::OK);
    }
    if tests.is_empty() {
        let what = if settings.failing_only {
            "no failing tests in the history"
        } else {
            "no tests in the history yet"
        };
        printer.info(what)?;
        return Ok(exit_codes::OK);
    }
    let rows: Vec<Vec<Cell>> = tests.iter().map(row).collect();
    for text in render_table(&COLUMNS, &rows, printer.color_stdout()) {
        printer.line(&text)?;
        if printer.stdout_closed() {
            break;
        }
    }
    Ok(exit_codes::OK)
}

fn line(test: &TestSummary) -> TestLine<'_> {
    TestLine {
        id: &test.test_id,
        runs: test.runs,
        failures: test.failures,
        skips: test.skips,
        pass_rate: test.pass_rate(),
        last_failure: test.last_failure,
        last_seen: test.last_seen,
    }
}

fn row(test: &TestSummary) -> Vec<Cell> {
    let failure_style = if test.failures > 0 {
        Style::Red
    } else {
        Style::Plain
    };
    vec![
        Cell::plain(test.runs.to_string()),
        Cell::styled(test.failures.to_string(), failure_style),
        Cell::styled(human_rate(test.pass_rate()), failure_style),
        Cell::plain(test.last_failure.map_or_else(|| "-".to_owned(), human_time)),
        Cell::plain(human_time(test.last_seen)),
        Cell::plain(&test.test_id),
    ]
}
