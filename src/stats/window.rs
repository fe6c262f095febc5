//! A test's rolling window: its last runs (skips excluded), summarized into the counts the
//! reliability file shows.

use std::collections::HashMap;

use jiff::Timestamp;
use serde::Serialize;

use super::wilson::{Interval, Z_95, wilson};
use crate::results::Outcome;

/// One run of a test inside the window. The commit is borrowed: a window is built for one
/// test at a time from runs the caller holds once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowEntry<'a> {
    /// Outcome of the run (never `Skip`: skips are not runs).
    pub outcome: Outcome,
    /// Commit the run tested, when known.
    pub commit: Option<&'a str>,
    /// When the run started; windows are ordered by it.
    pub started_at: Timestamp,
}

impl WindowEntry<'_> {
    /// Whether the run counts against the flake budget: it failed at least once, even if a
    /// retry inside the run passed.
    pub fn failed(&self) -> bool {
        self.outcome.failed_at_least_once()
    }
}

/// What the window says about a test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WindowStats {
    /// Runs in the window.
    pub runs: u64,
    /// Of those, runs that failed at least once.
    pub failures: u64,
    /// Passing share, `None` without runs.
    pub pass_rate: Option<f64>,
    /// Wilson 95% interval of the pass rate.
    pub pass_interval: Option<Interval>,
    /// Changes between passing and failing, in run order.
    pub flips: u64,
    /// When flakiness was first confirmed inside the window: a flaky pass (failed, then
    /// passed within one run), or one commit seen both passing and failing (dated when its
    /// second outcome arrived).
    pub first_flaky: Option<Timestamp>,
    /// The newest run.
    pub last_run: Option<Timestamp>,
}

/// Summarizes `entries`, oldest first. Skips, if any slipped in, are ignored.
pub fn summarize(entries: &[WindowEntry<'_>]) -> WindowStats {
    let runs: Vec<&WindowEntry<'_>> = entries.iter().filter(|e| e.outcome.is_run()).collect();
    let failures = runs.iter().filter(|e| e.failed()).count() as u64;
    let total = runs.len() as u64;
    let flips = runs
        .windows(2)
        .filter(|pair| pair[0].failed() != pair[1].failed())
        .count() as u64;

    let mut first_flaky: Option<Timestamp> = None;
    let mut seen_by_commit: HashMap<&str, (bool, bool)> = HashMap::new();
    for entry in &runs {
        let mut confirmed = entry.outcome == Outcome::FlakyPass;
        if let Some(commit) = entry.commit {
            let seen = seen_by_commit.entry(commit).or_default();
            let was_mixed = seen.0 && seen.1;
            if entry.failed() {
                seen.1 = true;
            } else {
                seen.0 = true;
            }
            confirmed |= !was_mixed && seen.0 && seen.1;
        }
        if confirmed {
            first_flaky = Some(first_flaky.map_or(entry.started_at, |t| t.min(entry.started_at)));
        }
    }

    WindowStats {
        runs: total,
        failures,
        pass_rate: (total > 0).then(|| (total - failures) as f64 / total as f64),
        pass_interval: wilson(total - failures, total, Z_95),
        flips,
        first_flaky,
        last_run: runs.iter().map(|e| e.started_at).max(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(outcome: Outcome, commit: &str, second: i64) -> WindowEntry<'_> {
        WindowEntry {
            outcome,
            commit: Some(commit),
            started_at: Timestamp::from_second(1_700_000_000 + second).unwrap(),
        }
    }

    #[test]
    fn counts_flips_and_confirms_flakiness_on_one_commit() {
        let entries = [
            entry(Outcome::Pass, "a", 0),
            entry(Outcome::Fail, "b", 10),
            entry(Outcome::Skip, "b", 15),
            entry(Outcome::Pass, "b", 20),
            entry(Outcome::Pass, "c", 30),
        ];
        let stats = summarize(&entries);
        assert_eq!(stats.runs, 4);
        assert_eq!(stats.failures, 1);
        assert_eq!(stats.flips, 2);
        assert_eq!(
            stats.first_flaky,
            Some(Timestamp::from_second(1_700_000_020).unwrap())
        );
        assert_eq!(stats.pass_rate, Some(0.75));
    }

    #[test]
    fn a_flaky_pass_is_a_failure_and_confirmed_flakiness() {
        let stats = summarize(&[entry(Outcome::FlakyPass, "a", 5)]);
        assert_eq!(stats.failures, 1);
        assert_eq!(
            stats.first_flaky,
            Some(Timestamp::from_second(1_700_000_005).unwrap())
        );
    }

    #[test]
    fn failing_on_every_commit_is_not_confirmed_flaky() {
        let stats = summarize(&[entry(Outcome::Fail, "a", 0), entry(Outcome::Pass, "b", 1)]);
        assert_eq!(stats.first_flaky, None);
    }
}
