//! `candor show TEST` for people: a table of the executions, newest first, a run on a
//! branch reliability does not count marked `*` and dimmed.

use std::io;

use crate::cli::output::{
    Align, Cell, Column, Printer, Render, Style, human_duration, human_time, render_table, short,
    text,
};
use crate::events::{Event, ExecutionEvent};
use crate::results::Outcome;

const COLUMNS: [Column; 9] = [
    Column {
        header: "WHEN",
        align: Align::Left,
    },
    Column {
        header: "COMMIT",
        align: Align::Left,
    },
    Column {
        header: "BRANCH",
        align: Align::Left,
    },
    Column {
        header: "SOURCE",
        align: Align::Left,
    },
    Column {
        header: "OUTCOME",
        align: Align::Left,
    },
    Column {
        header: "DURATION",
        align: Align::Right,
    },
    Column {
        header: "ATTEMPTS",
        align: Align::Right,
    },
    Column {
        header: "SIGNATURE",
        align: Align::Left,
    },
    Column {
        header: "MESSAGE",
        align: Align::Left,
    },
];

/// The renderer: rows are kept until the table is whole.
#[derive(Debug, Default)]
pub struct Show {
    rows: Vec<Vec<Cell>>,
}

impl Show {
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

impl Render for Show {
    fn render(&mut self, printer: &mut Printer, event: &Event) -> io::Result<()> {
        match event {
            Event::Execution(execution) => {
                self.rows.push(row(execution));
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
