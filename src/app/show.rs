//! `candor show TEST`: one test's executions, newest first, runs on branches reliability
//! does not count marked.

use super::{AppError, Ports};
use crate::cli::settings::{DefaultBranch, ShowSettings};
use crate::events::{Event, ExecutionEvent};
use crate::exit_codes;
use crate::history::{HistoryStore, StoredExecution};
use crate::policy::Config;
use crate::reliability::BranchSelection;

/// How many known ids an unknown-test error suggests.
const SUGGESTIONS: usize = 3;

/// One `execution` event per execution, newest first, until the reader goes away; for
/// people, which rows reliability does not count and whether the listing stopped at the
/// limit. An unknown test is an error naming the closest ids. The history is opened with
/// `open` once the policy is read.
pub fn run(
    settings: &ShowSettings,
    open: impl FnOnce() -> Result<Box<dyn HistoryStore>, AppError>,
    ports: &mut Ports<'_>,
) -> Result<u8, AppError> {
    let config = Config::load(ports.root)?;
    let selection = DefaultBranch::selection(settings.default_branch.as_ref(), &config);
    let store = open()?;
    // One more than asked, to know whether the listing stopped at the limit.
    let mut executions = store.executions(&settings.test_id, settings.limit.saturating_add(1))?;
    let stopped = executions.len() > settings.limit;
    executions.truncate(settings.limit);
    if executions.is_empty() {
        return Err(AppError::UnknownTest {
            id: settings.test_id.clone(),
            closest: closest_ids(&*store, &settings.test_id)?,
        });
    }
    // The runs' CI identity: one lookup per run shown (at most `--limit`).
    let mut runs = std::collections::HashMap::new();
    for stored in &executions {
        if let std::collections::hash_map::Entry::Vacant(slot) = runs.entry(stored.run_id) {
            slot.insert(store.run(stored.run_id)?);
        }
    }
    for stored in &executions {
        let run = runs.get(&stored.run_id).and_then(Option::as_ref);
        ports.emit(Event::Execution(event(stored, run, &selection)));
        if ports.closed() {
            return Ok(exit_codes::OK);
        }
    }
    let others = executions
        .iter()
        .filter(|stored| !selection.counts_run(stored.branch.as_deref(), stored.commit.as_deref()))
        .count();
    if others > 0 {
        ports.tell(format!(
            "{others} of these {} from other branches (marked *): reliability does not count them; it counts {selection}",
            if others == 1 { "is" } else { "are" }
        ));
    }
    if stopped {
        ports.tell(format!(
            "stopped at the newest {}: the history holds more; `--limit {}` shows more",
            settings.limit,
            settings.limit.saturating_mul(2)
        ));
    }
    Ok(exit_codes::OK)
}

fn event(
    stored: &StoredExecution,
    run: Option<&crate::history::RunRecord>,
    selection: &BranchSelection,
) -> ExecutionEvent {
    let execution = &stored.execution;
    let failure = execution.failure.as_ref();
    ExecutionEvent {
        test_id: execution.test_id.clone(),
        run_id: stored.run_id,
        started_at: stored.started_at,
        commit: stored.commit.clone(),
        branch: stored.branch.clone(),
        counted: selection.counts_run(stored.branch.as_deref(), stored.commit.as_deref()),
        source: stored.source,
        ci: run.and_then(|run| run.run.ci_identity()),
        outcome: execution.outcome,
        duration: execution.duration,
        attempts: execution.attempts,
        signature: stored.signature.clone(),
        exception: failure.and_then(|f| f.exception.clone()),
        message: failure.map(|f| f.message.clone()),
        skip_message: execution.skip_message.clone(),
    }
}

/// Known ids that look like `wanted`: those containing it (a test's bare name, a
/// different case), then those within a few edits of it (a typo).
fn closest_ids(store: &dyn HistoryStore, wanted: &str) -> Result<Vec<String>, AppError> {
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
}
