//! `candor tests` for people: a table of the tests (tier first, the id last), then which
//! runs were counted.

use std::io;

use crate::cli::output::{
    Align, Cell, Column, Printer, Render, Style, human_rate, human_time, render_table, text,
};
use crate::events::{Event, TestEvent};
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

/// The renderer: rows are kept until the table is whole.
#[derive(Debug, Default)]
pub struct Tests {
    rows: Vec<Vec<Cell>>,
}

impl Tests {
    fn flush(&mut self, printer: &mut Printer) -> io::Result<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let rows = std::mem::take(&mut self.rows);
        for line in render_table(&COLUMNS, &rows, printer.color_stdout()) {
            printer.line(&line)?;
            if printer.stdout_closed() {
                break;
            }
        }
        Ok(())
    }
}

impl Render for Tests {
    fn render(&mut self, printer: &mut Printer, event: &Event) -> io::Result<()> {
        match event {
            Event::Test(test) => {
                self.rows.push(row(test));
                Ok(())
            }
            Event::Text(line) => {
                self.flush(printer)?;
                text(printer, line)
            }
            _ => Ok(()),
        }
    }

    fn finish(&mut self, printer: &mut Printer) -> io::Result<()> {
        self.flush(printer)
    }
}

fn row(test: &TestEvent) -> Vec<Cell> {
    let failure_style = if test.failures > 0 {
        Style::Red
    } else {
        Style::Plain
    };
    vec![
        Cell::plain(test.tier.map_or("-", Tier::as_str)),
        Cell::plain(test.runs.to_string()),
        Cell::styled(test.failures.to_string(), failure_style),
        Cell::styled(human_rate(test.pass_rate), failure_style),
        Cell::plain(test.last_failure.map_or_else(|| "-".to_owned(), human_time)),
        Cell::plain(human_time(test.last_seen)),
        Cell::plain(&test.id),
    ]
}
