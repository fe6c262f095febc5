//! `candor reliability` for people: the tiers as a table (on a terminal the rows with
//! something to say first, cut to a screenful), then which runs counted and the totals.

use std::io;

use crate::cli::output::{
    Align, Cell, Column, Printer, Render, Style, human_rate, render_table, text,
};
use crate::events::{Event, ReliabilityEvent};
use crate::stats::tiers::{Change, Tier};

const COLUMNS: [Column; 8] = [
    Column {
        header: "TIER",
        align: Align::Left,
    },
    Column {
        header: "CHANGE",
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
        header: "WILSON 95%",
        align: Align::Left,
    },
    Column {
        header: "FLIPS",
        align: Align::Right,
    },
    Column {
        header: "TEST",
        align: Align::Left,
    },
];

/// The renderer: rows are kept until the table is whole, which the first text line after
/// them says; a run that failed prints no table.
#[derive(Debug, Default)]
pub struct Reliability {
    rows: Vec<ReliabilityEvent>,
    printed: bool,
}

impl Reliability {
    fn flush(&mut self, printer: &mut Printer) -> io::Result<()> {
        if std::mem::replace(&mut self.printed, true) {
            return Ok(());
        }
        let mut shown = std::mem::take(&mut self.rows);
        // On a terminal, the rows with something to say first (a changed or untrusted
        // tier, stale evidence), cut to a screenful with a count; whole anywhere else.
        if printer.settings().summarize {
            shown.sort_by_key(|row| {
                matches!(row.change, Change::Kept) && row.tier == Tier::Trusted && !row.stale
            });
        }
        let rows: Vec<Vec<Cell>> = shown.iter().map(cells).collect();
        let table = render_table(&COLUMNS, &rows, printer.color_stdout());
        let (header, body) = table
            .split_first()
            .map_or((None, &[][..]), |(h, b)| (Some(h), b));
        if let Some(header) = header {
            printer.line(header)?;
        }
        printer.listing(body, "tests (changed and untrusted first)")
    }
}

impl Render for Reliability {
    fn render(&mut self, printer: &mut Printer, event: &Event) -> io::Result<()> {
        match event {
            Event::Reliability(row) => {
                self.rows.push(row.clone());
                Ok(())
            }
            Event::Text(line) => {
                self.flush(printer)?;
                text(printer, line)
            }
            _ => Ok(()),
        }
    }
}

fn tier_style(tier: Tier) -> Style {
    match tier {
        Tier::Trusted => Style::Plain,
        Tier::Probation => Style::Yellow,
        Tier::Quarantined => Style::Red,
    }
}

fn cells(row: &ReliabilityEvent) -> Vec<Cell> {
    let change = match row.change {
        Change::Kept if row.stale => "stale",
        Change::Kept => "-",
        Change::Dropped => "dropped",
        Change::Promoted => "promoted",
        Change::Entered => "new",
    };
    let interval = row.wilson_95.map_or_else(
        || "-".to_owned(),
        |i| format!("{:.1}%–{:.1}%", i.low * 100.0, i.high * 100.0),
    );
    vec![
        Cell::styled(row.tier.as_str(), tier_style(row.tier)),
        Cell::plain(change),
        Cell::plain(row.runs.to_string()),
        Cell::plain(row.failures.to_string()),
        Cell::plain(human_rate(row.pass_rate)),
        Cell::plain(interval),
        Cell::plain(row.flips.to_string()),
        Cell::plain(&row.test),
    ]
}
