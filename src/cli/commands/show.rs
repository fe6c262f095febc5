//! `candor show TEST`: one test's executions, newest first, runs on branches reliability
//! does not count marked.

use crate::history::Location;
use std::path::Path;

use jiff::Timestamp;
use serde::Serialize;

use super::{Open, open_store};
use crate::cli::error::CliError;
use crate::cli::output::{
    Align, Cell, Column, Printer, Style, human_duration, human_time, render_table, short,
};
use crate::cli::settings::DefaultBranch;
use crate::cli::settings::ShowSettings;
use crate::exit_codes;
use crate::history::{HistoryStore, Source, StoredExecution};
use crate::policy::Config;
use crate::reliability::BranchSelection;
use crate::results::Outcome;

/// How many known ids an unknown-test error suggests.
const SUGGESTIONS: usize = 3;

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

/// `{"type":"execution"}`: see docs/json-output.md.
#[derive(Serialize)]
struct ExecutionLine<'a> {
    test_id: &'a str,
    run_id: i64,
    started_at: Timestamp,
    commit: Option<&'a str>,
    branch: Option<&'a str>,
    /// Whether reliability counts the run (its branch is one `[reliability] branches` or
    /// the default branch names).
    counted: bool,
    source: Source,
    /// The CI build the run came from; null for a run outside CI.
    ci: Option<crate::history::CiIdentity<'a>>,
    outcome: Outcome,
    duration: Option<f64>,
    attempts: u32,
    signature: Option<&'a str>,
    exception: Option<&'a str>,
    message: Option<&'a str>,
    skip_message: Option<&'a str>,
}

pub(super) fn run(
    settings: &ShowSettings,
    db: &Location,
    repo_root: &Path,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let config = Config::load(repo_root)?;
    let selection = DefaultBranch::selection(settings.default_branch.as_ref(), &config);
    let store = open_store(db, Open::Existing)?;
    // One more than asked, to know whether the listing stopped at the limit.
    let mut executions = store.executions(&settings.test_id, settings.limit.saturating_add(1))?;
    let stopped = executions.len() > settings.limit;
    executions.truncate(settings.limit);
    if executions.is_empty() {
        return Err(CliError::UnknownTest {
            id: settings.test_id.clone(),
            closest: closest_ids(&*store, &settings.test_id)?,
        });
    }
    if printer.is_json() {
        // The runs' CI identity: one lookup per run shown (at most `--limit`).
        let mut runs = std::collections::HashMap::new();
        for stored in &executions {
            if let std::collections::hash_map::Entry::Vacant(slot) = runs.entry(stored.run_id) {
                slot.insert(store.run(stored.run_id)?);
            }
        }
        for stored in &executions {
            let run = runs.get(&stored.run_id).and_then(Option::as_ref);
            printer.json("execution", &line(stored, run, &selection))?;
            if printer.stdout_closed() {
                break;
            }
        }
        return Ok(exit_codes::OK);
    }
    let rows: Vec<Vec<Cell>> = executions
        .iter()
        .map(|stored| row(stored, &selection))
        .collect();
    for text in render_table(&COLUMNS, &rows, printer.color_stdout()) {
        printer.line(&text)?;
        if printer.stdout_closed() {
            return Ok(exit_codes::OK);
        }
    }
    let others = executions
        .iter()
        .filter(|stored| !selection.counts(stored.branch.as_deref()))
        .count();
    if others > 0 {
        printer.info(&format!(
            "{others} of these {} from other branches (marked *): reliability does not count them; it counts {selection}",
            if others == 1 { "is" } else { "are" }
        ))?;
    }
    if stopped {
        printer.info(&format!(
            "stopped at the newest {}: the history holds more; `--limit {}` shows more",
            settings.limit,
            settings.limit.saturating_mul(2)
        ))?;
    }
    Ok(exit_codes::OK)
}

fn line<'a>(
    stored: &'a StoredExecution,
    run: Option<&'a crate::history::RunRecord>,
    selection: &BranchSelection,
) -> ExecutionLine<'a> {
    let execution = &stored.execution;
    let failure = execution.failure.as_ref();
    ExecutionLine {
        test_id: &execution.test_id,
        run_id: stored.run_id,
        started_at: stored.started_at,
        commit: stored.commit.as_deref(),
        branch: stored.branch.as_deref(),
        counted: selection.counts(stored.branch.as_deref()),
        source: stored.source,
        ci: run.and_then(|run| run.run.ci_identity()),
        outcome: execution.outcome,
        duration: execution.duration,
        attempts: execution.attempts,
        signature: stored.signature.as_deref(),
        exception: failure.and_then(|f| f.exception.as_deref()),
        message: failure.map(|f| f.message.as_str()),
        skip_message: execution.skip_message.as_deref(),
    }
}

fn row(stored: &StoredExecution, selection: &BranchSelection) -> Vec<Cell> {
    let execution = &stored.execution;
    let outcome_style = match execution.outcome {
        Outcome::Pass => Style::Green,
        Outcome::Fail | Outcome::Error => Style::Red,
        Outcome::FlakyPass => Style::Yellow,
        Outcome::Skip => Style::Dim,
    };
    let message = match &execution.failure {
        Some(failure) => match &failure.exception {
            Some(exception) => format!("{exception}: {}", first_line(&failure.message)),
            None => first_line(&failure.message).to_owned(),
        },
        None => execution
            .skip_message
            .as_deref()
            .map_or_else(String::new, |m| first_line(m).to_owned()),
    };
    vec![
        Cell::plain(human_time(stored.started_at)),
        Cell::plain(stored.commit.as_deref().map_or("-", |c| short(c, 7))),
        branch_cell(stored.branch.as_deref(), selection),
        Cell::plain(stored.source.as_str()),
        Cell::styled(execution.outcome.as_str(), outcome_style),
        Cell::plain(
            execution
                .duration
                .map_or_else(|| "-".to_owned(), human_duration),
        ),
        Cell::plain(execution.attempts.to_string()),
        Cell::plain(stored.signature.as_deref().map_or("-", |s| short(s, 12))),
        Cell::plain(message),
    ]
}

/// The run's branch, `-` when unknown, marked `*` and dimmed when reliability does not
/// count it.
fn branch_cell(branch: Option<&str>, selection: &BranchSelection) -> Cell {
    let name = branch.unwrap_or("-");
    if selection.counts(branch) {
        Cell::plain(name)
    } else {
        Cell::styled(format!("{name}*"), Style::Dim)
    }
}

fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// Known ids that look like `wanted`: those containing it (a test's bare name, a
/// different case), then those within a few edits of it (a typo).
fn closest_ids(store: &dyn HistoryStore, wanted: &str) -> Result<Vec<String>, CliError> {
    let wanted = wanted.to_lowercase();
    // A typo or two, a swapped pair: more would suggest ids that merely share a prefix.
    let budget = (wanted.chars().count() / 8).clamp(2, 4);
    let mut scored: Vec<((u8, usize), String)> = store
        .tests(false)?
        .into_iter()
        .filter_map(|test| {
            let id = test.test_id.to_lowercase();
            let rank = if id.contains(&wanted) {
                (0, id.len().saturating_sub(wanted.len()))
            } else {
                (1, edit_distance_within(&wanted, &id, budget)?)
            };
            Some((rank, test.test_id))
        })
        .collect();
    scored.sort();
    Ok(scored
        .into_iter()
        .take(SUGGESTIONS)
        .map(|(_, id)| id)
        .collect())
}

/// Levenshtein distance between `a` and `b` when it is at most `budget`, in characters.
/// Gives up as soon as every path costs more, so a long list of unrelated ids is cheap.
fn edit_distance_within(a: &str, b: &str, budget: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > budget {
        return None;
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        if current.iter().min().is_some_and(|&best| best > budget) {
            return None;
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous.last().copied().filter(|&d| d <= budget)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_characters_and_respects_the_budget() {
        assert_eq!(edit_distance_within("kitten", "sitting", 3), Some(3));
        assert_eq!(edit_distance_within("kitten", "sitting", 2), None);
        assert_eq!(edit_distance_within("é", "e", 1), Some(1));
        assert_eq!(edit_distance_within("", "", 0), Some(0));
        assert_eq!(edit_distance_within("abc", "abcdefgh", 2), None);
    }

    #[test]
    fn first_line_skips_blank_lines() {
        assert_eq!(first_line("\n  boom  \nmore"), "boom");
        assert_eq!(first_line(""), "");
    }
}
