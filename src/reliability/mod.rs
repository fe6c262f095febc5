//! Reliability: every test's window from history run through the tier state machine,
//! merged with the previous `.ci/test-reliability.yaml` into the next one.
//!
//! The verdict of a tier is made in `stats::tiers::next_state`; this module only feeds it
//! and keeps the file's human fields.

pub mod file;

use jiff::Timestamp;
use jiff::civil::Date;
use jiff::tz::TimeZone;
use serde::Serialize;

use crate::stats::tiers::{Change, Tier, TierPolicy, TierState, next_state};
use crate::stats::window::{WindowEntry, WindowStats, summarize};
pub use file::{FileError, ReliabilityFile, TestEntry};

/// One test's evaluation, for people and machines reading the command's output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// Canonical test id.
    pub test: String,
    /// Tier before this evaluation (`None`: the file did not list it).
    pub previous_tier: Option<Tier>,
    /// Tier after.
    pub tier: Tier,
    /// What changed.
    pub change: Change,
    /// The window's statistics.
    #[serde(flatten)]
    pub stats: WindowStats,
    /// No run in the window.
    pub stale: bool,
}

/// The next file and a row per test.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Evaluation {
    /// What `--write` writes.
    pub file: ReliabilityFile,
    /// One row per test, sorted by id.
    pub rows: Vec<Row>,
}

/// The UTC calendar date of an instant, as the file shows dates.
pub fn utc_date(at: Timestamp) -> Date {
    at.to_zoned(TimeZone::UTC).date()
}

/// Merges the previous file with every test's window (`windows` sorted by test id, each
/// window oldest first, skips excluded) into the next file.
pub fn evaluate<E>(
    previous: &ReliabilityFile,
    windows: impl IntoIterator<Item = Result<(String, Vec<WindowEntry>), E>>,
    policy: &TierPolicy,
) -> Result<Evaluation, E> {
    let mut evaluation = Evaluation::default();
    let mut old = previous.tests.iter().peekable();
    for item in windows {
        let (id, window) = item?;
        // Tests only the file knows, sorted before this one, are stale.
        while let Some(entry) = old.next_if(|entry| entry.id < id) {
            evaluation.push_stale(entry);
        }
        let prior = old.next_if(|entry| entry.id == id);
        evaluation.push_evaluated(id, prior, &window, policy);
    }
    for entry in old {
        evaluation.push_stale(entry);
    }
    Ok(evaluation)
}

impl Evaluation {
    fn push_stale(&mut self, entry: &TestEntry) {
        // No run, no evidence: the tier stays where it was, and the entry stays listed.
        let mut next = entry.clone();
        next.runs = 0;
        next.failures = 0;
        next.pass_rate = None;
        next.wilson_95 = None;
        next.flips = 0;
        next.stale = true;
        self.rows.push(Row {
            test: entry.id.clone(),
            previous_tier: Some(entry.tier),
            tier: entry.tier,
            change: Change::Kept,
            stats: summarize(&[]),
            stale: true,
        });
        self.file.tests.push(next);
    }

    fn push_evaluated(
        &mut self,
        id: String,
        prior: Option<&TestEntry>,
        window: &[WindowEntry],
        policy: &TierPolicy,
    ) {
        let stats = summarize(window);
        let previous_state = prior.map(|entry| TierState {
            tier: entry.tier,
            since: entry.tier_since,
        });
        let decision = next_state(previous_state.as_ref(), window, policy);
        let mut next = prior
            .cloned()
            .unwrap_or_else(|| TestEntry::new(id.clone(), decision.state.tier));
        next.tier = decision.state.tier;
        next.tier_since = decision.state.since;
        next.runs = stats.runs;
        next.failures = stats.failures;
        next.pass_rate = stats.pass_rate;
        next.wilson_95 = stats.pass_interval;
        next.flips = stats.flips;
        next.stale = stats.runs == 0;
        next.last_run = stats.last_run.map(utc_date);
        // "First seen" is history, not the window: the earliest date ever written stays.
        let seen_now = stats.first_flaky.map(utc_date);
        next.first_flaky = match (next.first_flaky, seen_now) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.rows.push(Row {
            test: id,
            previous_tier: prior.map(|entry| entry.tier),
            tier: decision.state.tier,
            change: decision.change,
            stale: next.stale,
            stats,
        });
        self.file.tests.push(next);
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::path::Path;

    use super::*;
    use crate::results::Outcome;

    fn window(failures: &[bool]) -> Vec<WindowEntry> {
        failures
            .iter()
            .enumerate()
            .map(|(i, failed)| WindowEntry {
                outcome: if *failed {
                    Outcome::Fail
                } else {
                    Outcome::Pass
                },
                commit: Some(format!("c{i}")),
                started_at: Timestamp::from_second(1_780_000_000 + i as i64 * 3600).unwrap(),
            })
            .collect()
    }

    #[test]
    fn merges_stale_and_new_tests_in_id_order_keeping_human_fields() {
        let previous = ReliabilityFile::parse(
            "tests:\n  - id: b\n    tier: trusted\n    owner: team-b\n  - id: gone\n    tier: quarantined\n    ticket: T-1\n",
            Path::new("r.yaml"),
        )
        .unwrap();
        let windows: Vec<Result<_, Infallible>> = vec![
            Ok(("a".to_owned(), window(&[false; 30]))),
            Ok(("b".to_owned(), window(&[false; 30]))),
        ];
        let evaluation = evaluate(&previous, windows, &TierPolicy::default()).unwrap();
        let ids: Vec<_> = evaluation
            .file
            .tests
            .iter()
            .map(|t| t.id.as_str())
            .collect();
        assert_eq!(ids, ["a", "b", "gone"]);
        let gone = &evaluation.file.tests[2];
        assert!(gone.stale);
        assert_eq!(gone.tier, Tier::Quarantined);
        assert_eq!(
            gone.human["ticket"],
            serde_yaml_ng::Value::String("T-1".into())
        );
        assert_eq!(
            evaluation.file.tests[1].human["owner"],
            serde_yaml_ng::Value::String("team-b".into())
        );
        assert_eq!(evaluation.file.tests[0].tier, Tier::Probation);
    }
}
