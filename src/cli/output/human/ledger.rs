//! `candor ledger stats` for people: a table of the tests' reruns, then a line per flag.

use std::io;

use crate::cli::output::{Align, Cell, Column, Printer, Render, Style, render_table, text};
use crate::events::{Event, LedgerStatsEvent};

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

/// The renderer: the tests are kept until the table is whole.
#[derive(Debug, Default)]
pub struct Ledger {
    tests: Vec<LedgerStatsEvent>,
}

impl Render for Ledger {
    fn render(&mut self, printer: &mut Printer, event: &Event) -> io::Result<()> {
        match event {
            Event::LedgerStats(test) => {
                self.tests.push(test.clone());
                Ok(())
            }
            Event::Text(line) => text(printer, line),
            _ => Ok(()),
        }
    }

    fn finish(&mut self, printer: &mut Printer) -> io::Result<()> {
        if self.tests.is_empty() {
            return Ok(());
        }
        let rows: Vec<Vec<Cell>> = self.tests.iter().map(cells).collect();
        for text in render_table(&COLUMNS, &rows, printer.color_stdout()) {
            printer.line(&text)?;
        }
        let color = printer.color_stdout();
        for test in &self.tests {
            for flag in &test.flags {
                printer.line(&format!(
                    "{} {}: {}",
                    Style::Yellow.paint("flag:", color),
                    crate::cli::output::terminal_safe(&test.test),
                    flag.message
                ))?;
            }
        }
        Ok(())
    }
}

fn cells(test: &LedgerStatsEvent) -> Vec<Cell> {
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
        Cell::plain(&test.test),
    ]
}
