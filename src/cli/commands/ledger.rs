//! `candor ledger stats`: per test, its reruns, how many distinct first failures they
//! claimed, on which worker counts, and the flags that a real race may hide behind a
//! fingerprint. The statistics are `ledger::stats`'.

use std::path::Path;

use serde::Serialize;

use crate::cli::error::CliError;
use crate::cli::output::{Align, Cell, Column, Printer, Style, render_table};
use crate::exit_codes;
use crate::ledger::Ledger;
use crate::ledger::stats::{Flag, TestStats, WorkerCount, ledger_stats};
use crate::policy::Config;

const COLUMNS: [Column; 4] = [
    Column {
        header: "RERUNS",
        align: Align::Right,
    },
    Column {
        header: "FIRST FAILURES",
        align: Align::Right,
    },
    Column {
        header: "WORKERS",
        align: Align::Left,
    },
    Column {
        header: "TEST",
        align: Align::Left,
    },
];

/// `{"type":"ledger-stats"}`: see docs/json-output.md.
#[derive(Serialize)]
struct StatsLine<'a> {
    test: &'a str,
    entries: usize,
    distinct_first_failures: usize,
    workers: &'a [WorkerCount],
    flags: Vec<FlagLine<'a>>,
}

#[derive(Serialize)]
struct FlagLine<'a> {
    #[serde(flatten)]
    flag: &'a Flag,
    message: String,
}

pub(super) fn run(repo_root: &Path, printer: &mut Printer) -> Result<u8, CliError> {
    let config = Config::load(repo_root)?;
    let path = repo_root.join(&config.rerun.ledger);
    let ledger = Ledger::load(&path)?;
    let stats = ledger_stats(&ledger);
    if printer.is_json() {
        for test in &stats {
            printer.json(
                "ledger-stats",
                &StatsLine {
                    test: &test.test_id,
                    entries: test.entries,
                    distinct_first_failures: test.distinct_first_failures,
                    workers: &test.workers,
                    flags: test
                        .flags
                        .iter()
                        .map(|flag| FlagLine {
                            flag,
                            message: flag.to_string(),
                        })
                        .collect(),
                },
            )?;
            if printer.stdout_closed() {
                break;
            }
        }
        return Ok(exit_codes::OK);
    }
    if stats.is_empty() {
        printer.info(&format!("no reruns in {}", path.display()))?;
        return Ok(exit_codes::OK);
    }
    let rows: Vec<Vec<Cell>> = stats.iter().map(cells).collect();
    for text in render_table(&COLUMNS, &rows, printer.color_stdout()) {
        printer.line(&text)?;
    }
    let color = printer.color_stdout();
    for test in stats.iter().filter(|test| !test.flags.is_empty()) {
        for flag in &test.flags {
            printer.line(&format!(
                "{} {}: {flag}",
                Style::Yellow.paint("flag:", color),
                crate::cli::output::terminal_safe(&test.test_id)
            ))?;
        }
    }
    Ok(exit_codes::OK)
}

fn cells(test: &TestStats) -> Vec<Cell> {
    let workers: Vec<String> = test
        .workers
        .iter()
        .map(|count| {
            let workers = count
                .workers
                .map_or_else(|| "?".to_owned(), |w| w.to_string());
            format!("{workers}×{}", count.entries)
        })
        .collect();
    vec![
        Cell::plain(test.entries.to_string()),
        Cell::plain(test.distinct_first_failures.to_string()),
        Cell::plain(workers.join(" ")),
        Cell::plain(&test.test_id),
    ]
}
