//! Reliability: every test's window from history run through the tier state machine,
//! merged with the previous `.ci/test-reliability.yaml` into the next one.
//!
//! The verdict of a tier is made in `stats::tiers::next_state`; this module only feeds it
//! and keeps the file's human fields.

pub mod branches;
pub mod file;
mod layout;

use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::path::Path;

use jiff::Timestamp;
use jiff::civil::Date;
use jiff::tz::TimeZone;
use serde::Serialize;

use crate::history::{HistoryError, HistoryStore};
use crate::stats::tiers::{Change, Tier, TierPolicy, TierState, next_state};
use crate::stats::window::{WindowEntry, WindowStats, summarize};
pub use branches::{BranchPattern, BranchSelection, Counted, DefaultOrigin};
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

/// Merges the previous file with every test's window, one test at a time in id order, so
/// memory holds one window and the output rows, never the whole history.
pub struct Evaluator<'p> {
    previous: std::iter::Peekable<std::slice::Iter<'p, TestEntry>>,
    policy: &'p TierPolicy,
    evaluation: Evaluation,
}

impl<'p> Evaluator<'p> {
    /// Starts from the previous file (sorted by id, as parsed).
    pub fn new(previous: &'p ReliabilityFile, policy: &'p TierPolicy) -> Evaluator<'p> {
        Evaluator {
            previous: previous.tests.iter().peekable(),
            policy,
            evaluation: Evaluation::default(),
        }
    }

    /// Evaluates the next test; ids must come in ascending order. `window` is oldest first.
    pub fn visit(&mut self, id: String, window: &[WindowEntry<'_>]) {
        // Tests only the file knows, sorted before this one, are stale.
        while let Some(entry) = self.previous.next_if(|entry| entry.id < id) {
            self.evaluation.push_stale(entry);
        }
        let prior = self.previous.next_if(|entry| entry.id == id);
        self.evaluation
            .push_evaluated(id, prior, window, self.policy);
    }

    /// Lists the remaining stale tests and returns the result.
    pub fn finish(mut self) -> Evaluation {
        for entry in self.previous {
            self.evaluation.push_stale(entry);
        }
        self.evaluation
    }
}

/// [`Evaluator`] over an iterator of `(test id, window)` sorted by id.
pub fn evaluate<'w, E>(
    previous: &ReliabilityFile,
    windows: impl IntoIterator<Item = Result<(String, Vec<WindowEntry<'w>>), E>>,
    policy: &TierPolicy,
) -> Result<Evaluation, E> {
    let mut evaluator = Evaluator::new(previous, policy);
    for item in windows {
        let (id, window) = item?;
        evaluator.visit(id, &window);
    }
    Ok(evaluator.finish())
}

/// Evaluates every test in `store` against the previous file, counting every run.
pub fn evaluate_history(
    store: &dyn HistoryStore,
    previous: &ReliabilityFile,
    policy: &TierPolicy,
) -> Result<Evaluation, HistoryError> {
    evaluate_history_in(store, previous, policy, None)
}

/// [`evaluate_history`] counting only the runs whose ids are in `runs` (`None`: every
/// run), as [`BranchSelection::split`] gives them.
#[expect(
    clippy::implicit_hasher,
    reason = "the store's trait takes the std set, as `BranchSelection::split` makes it"
)]
pub fn evaluate_history_in(
    store: &dyn HistoryStore,
    previous: &ReliabilityFile,
    policy: &TierPolicy,
    runs: Option<&HashSet<i64>>,
) -> Result<Evaluation, HistoryError> {
    // Commits are per run and runs are few next to executions: read them once and let
    // every window borrow them.
    let commits: HashMap<i64, Option<String>> = store
        .runs(usize::MAX)?
        .into_iter()
        .map(|run| (run.id, run.run.commit))
        .collect();
    let mut evaluator = Evaluator::new(previous, policy);
    let mut window: Vec<WindowEntry<'_>> = Vec::with_capacity(policy.window_runs);
    store.windows_in(policy.window_runs, runs, &mut |test| {
        window.clear();
        // The store gives newest first; the machine reads oldest first.
        window.extend(test.entries.iter().rev().map(|entry| WindowEntry {
            outcome: entry.outcome,
            commit: commits.get(&entry.run_id).and_then(Option::as_deref),
            started_at: entry.started_at,
        }));
        evaluator.visit(test.test_id, &window);
    })?;
    Ok(evaluator.finish())
}

/// Writes `text` to `path` atomically: a temporary file in the same folder, flushed, then
/// renamed over the old one. A failure leaves the old file as it was.
pub fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    fs_err::create_dir_all(folder)?;
    let mut temporary = tempfile::NamedTempFile::new_in(folder)?;
    temporary.write_all(text.as_bytes())?;
    temporary.as_file().sync_all()?;
    temporary.persist(path).map_err(|error| error.error)?;
    Ok(())
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

    fn window(failures: &[bool]) -> Vec<WindowEntry<'static>> {
        failures
            .iter()
            .enumerate()
            .map(|(i, failed)| WindowEntry {
                outcome: if *failed {
                    Outcome::Fail
                } else {
                    Outcome::Pass
                },
                commit: Some(["c0", "c1", "c2"][i % 3]),
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
