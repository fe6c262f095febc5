//! `candor tests` for people: a table of the tests (tier first, the id last), then which
//! runs were counted.

use crate::cli::output::{Cell, Column, Style, Table, human_rate, human_time};
use crate::events::{Event, TestEvent};
use crate::stats::tiers::Tier;

/// The human table's columns. The tier comes first and the test id last: ids are long and
/// vary, and the numbers line up best before them.
const COLUMNS: [Column; 7] = [
    Column::left("TIER"),
    Column::right("RUNS"),
    Column::right("FAILS"),
    Column::right("PASS RATE"),
    Column::left("LAST FAILURE"),
    Column::left("LAST SEEN"),
    Column::left("TEST"),
];

/// The renderer: a row per test.
pub fn tests() -> Table {
    Table::new(&COLUMNS, |event| match event {
        Event::Test(test) => Some(row(test)),
        _ => None,
    })
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
