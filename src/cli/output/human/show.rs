//! `candor show TEST` for people: a table of the executions, newest first, a run on a
//! branch reliability does not count marked `*` and dimmed.

use crate::cli::output::{Cell, Column, Style, Table, human_duration, human_time, short};
use crate::events::{Event, ExecutionEvent};
use crate::results::Outcome;

const COLUMNS: [Column; 9] = [
    Column::left("WHEN"),
    Column::left("COMMIT"),
    Column::left("BRANCH"),
    Column::left("SOURCE"),
    Column::left("OUTCOME"),
    Column::right("DURATION"),
    Column::right("ATTEMPTS"),
    Column::left("SIGNATURE"),
    Column::left("MESSAGE"),
];

/// The renderer: a row per execution.
pub fn show() -> Table {
    Table::new(&COLUMNS, |event| match event {
        Event::Execution(execution) => Some(row(execution)),
        _ => None,
    })
}

fn row(execution: &ExecutionEvent) -> Vec<Cell> {
    let outcome_style = match execution.outcome {
        Outcome::Pass => Style::Green,
        Outcome::Fail | Outcome::Error => Style::Red,
        Outcome::FlakyPass => Style::Yellow,
        Outcome::Skip => Style::Dim,
    };
    let message = match &execution.message {
        Some(message) => match &execution.exception {
            Some(exception) => format!("{exception}: {}", first_line(message)),
            None => first_line(message).to_owned(),
        },
        None => execution
            .skip_message
            .as_deref()
            .map_or_else(String::new, |m| first_line(m).to_owned()),
    };
    let branch = execution.branch.as_deref().unwrap_or("-");
    let branch = if execution.counted {
        Cell::plain(branch)
    } else {
        Cell::styled(format!("{branch}*"), Style::Dim)
    };
    vec![
        Cell::plain(human_time(execution.started_at)),
        Cell::plain(execution.commit.as_deref().map_or("-", |c| short(c, 7))),
        branch,
        Cell::plain(execution.source.as_str()),
        Cell::styled(execution.outcome.as_str(), outcome_style),
        Cell::plain(
            execution
                .duration
                .map_or_else(|| "-".to_owned(), human_duration),
        ),
        Cell::plain(execution.attempts.to_string()),
        Cell::plain(execution.signature.as_deref().map_or("-", |s| short(s, 12))),
        Cell::plain(message),
    ]
}

fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::first_line;

    #[test]
    fn first_line_skips_blank_lines() {
        assert_eq!(first_line("\n  boom  \nmore"), "boom");
        assert_eq!(first_line(""), "");
    }
}
