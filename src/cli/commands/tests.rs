//! `candor tests`: one line per test in the history with its record, over the runs
//! reliability counts (the default branch's, or `[reliability] branches`), and a line
//! saying which.

use crate::history::Location;
use std::collections::HashMap;
use std::path::Path;

use jiff::Timestamp;
use serde::Serialize;

use super::counted::CountedRuns;
use super::{Open, open_store};
use crate::cli::error::CliError;
use crate::cli::output::{
    Align, Cell, Column, Printer, Style, human_rate, human_time, render_table,
};
use crate::cli::settings::{TestsSettings, TierFilter};
use crate::exit_codes;
use crate::history::TestSummary;
use crate::policy::Config;
use crate::reliability::ReliabilityFile;
use crate::stats::tiers::Tier;

/// The human table's columns. The tier comes first and the test id last: ids are long and
/// vary, and the numbers line up best before them.
const COLUMNS: [Column; 7] = [
    Column {
        header: "TIER",
        align: Align::Left,
    },
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
    /// `null` when the reliability file does not list the test.
    tier: Option<Tier>,
    runs: u64,
    failures: u64,
    skips: u64,
    pass_rate: Option<f64>,
    last_failure: Option<Timestamp>,
    last_seen: Timestamp,
}

pub(super) fn run(
    settings: &TestsSettings,
    db: &Location,
    repo_root: &Path,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let config = Config::load(repo_root)?;
    let file = ReliabilityFile::load(&repo_root.join(&config.reliability.file))?;
    let tiers: HashMap<&str, Tier> = file.tests.iter().map(|t| (t.id.as_str(), t.tier)).collect();
    let store = open_store(db, Open::Existing)?;
    let counted = CountedRuns::read(store.as_ref(), &config, settings.default_branch.as_ref())?;
    let mut tests = store.tests_in(settings.failing_only, counted.filter())?;
    let tier_of = |test: &TestSummary| tiers.get(test.test_id.as_str()).copied();
    if let Some(filter) = settings.tier {
        tests.retain(|test| match filter {
            TierFilter::Listed(tier) => tier_of(test) == Some(tier),
            TierFilter::Unlisted => tier_of(test).is_none(),
        });
    }
    if printer.is_json() {
        printer.json("counted", &counted.event())?;
        for test in &tests {
            printer.json("test", &line(test, tier_of(test)))?;
            if printer.stdout_closed() {
                break;
            }
        }
        return Ok(exit_codes::OK);
    }
    if tests.is_empty() {
        let what = if settings.failing_only || settings.tier.is_some() {
            "no test in the history matches"
        } else {
            "no tests in the history yet"
        };
        printer.info(what)?;
        printer.info(&counted.human())?;
        return Ok(exit_codes::OK);
    }
    let rows: Vec<Vec<Cell>> = tests.iter().map(|test| row(test, tier_of(test))).collect();
    for text in render_table(&COLUMNS, &rows, printer.color_stdout()) {
        printer.line(&text)?;
        if printer.stdout_closed() {
            break;
        }
    }
    printer.info(&counted.human())?;
    Ok(exit_codes::OK)
}

fn line(test: &TestSummary, tier: Option<Tier>) -> TestLine<'_> {
    TestLine {
        id: &test.test_id,
        tier,
        runs: test.runs,
        failures: test.failures,
        skips: test.skips,
        pass_rate: test.pass_rate(),
        last_failure: test.last_failure,
        last_seen: test.last_seen,
    }
}

fn row(test: &TestSummary, tier: Option<Tier>) -> Vec<Cell> {
    let failure_style = if test.failures > 0 {
        Style::Red
    } else {
        Style::Plain
    };
    vec![
        Cell::plain(tier.map_or("-", Tier::as_str)),
        Cell::plain(test.runs.to_string()),
        Cell::styled(test.failures.to_string(), failure_style),
        Cell::styled(human_rate(test.pass_rate()), failure_style),
        Cell::plain(test.last_failure.map_or_else(|| "-".to_owned(), human_time)),
        Cell::plain(human_time(test.last_seen)),
        Cell::plain(&test.test_id),
    ]
}
