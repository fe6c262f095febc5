//! What `candor report` shows, computed from history, policy and ledger (pure): the
//! overview, the flakiest tests with their outcome strips, the tests × runs heatmap,
//! failure shapes, duration trends and the ledger. The renderers (`html`, `markdown`,
//! `annotations`) only lay this out; the edge (`cli::commands::report`) reads the inputs.
//!
//! "Flakiest" is one stated measure, [`flakiness`]: the share of consecutive runs in a
//! test's window whose outcome differs (a flip), with a flaky pass (failed, then passed
//! inside one run) counted as a flip of its own. A test that always fails is broken, not
//! flaky, and scores 0; one that alternates scores 1. Ties go to more failures, then to
//! the test id (docs/report.md).

pub mod annotations;
pub mod html;
pub mod markdown;

use std::collections::{BTreeMap, HashMap};

use jiff::Timestamp;
use serde::Serialize;

use crate::history::{RunRecord, Source, StoredExecution};
use crate::ledger::Ledger;
use crate::ledger::stats::{Flag, ledger_stats};
use crate::policy::{Fingerprint, RerunConfig, RunConditions};
use crate::reliability::Row;
use crate::results::Outcome;
use crate::stats::tiers::{Tier, TierPolicy, TierState, next_state};
use crate::stats::window::WindowEntry;

/// How many buckets a duration trend has at most.
pub const TREND_BUCKETS: usize = 10;

/// `--since`: an instant, or a number of days before today (resolved by the edge, which
/// knows today).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Since {
    /// From this instant on.
    At(Timestamp),
    /// From the start (UTC) of the day this many days before today.
    DaysAgo(i64),
}

impl Since {
    /// Reads `2026-11-01`, `2026-11-01T12:00:00Z` or `30d`.
    pub fn parse(text: &str) -> Result<Since, String> {
        let text = text.trim();
        if let Some(days) = text.strip_suffix('d')
            && let Ok(days) = days.parse::<i64>()
            && (0..=36_500).contains(&days)
        {
            return Ok(Since::DaysAgo(days));
        }
        if let Ok(at) = text.parse::<Timestamp>() {
            return Ok(Since::At(at));
        }
        if let Ok(date) = text.parse::<jiff::civil::Date>()
            && let Ok(at) = date.to_zoned(jiff::tz::TimeZone::UTC)
        {
            return Ok(Since::At(at.timestamp()));
        }
        Err(format!(
            "`{text}` is not a date (2026-11-01), an instant (2026-11-01T12:00:00Z) or a number of days (30d)"
        ))
    }

    /// The instant it names, given today.
    pub fn resolve(self, today: jiff::civil::Date) -> Timestamp {
        match self {
            Since::At(at) => at,
            Since::DaysAgo(days) => today
                .checked_sub(jiff::Span::new().days(days))
                .unwrap_or(jiff::civil::Date::MIN)
                .to_zoned(jiff::tz::TimeZone::UTC)
                .map_or(Timestamp::MIN, |z| z.timestamp()),
        }
    }
}

/// What the report covers, as the user filtered it; shown at the top so a reader knows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Scope {
    /// Only runs started at or after this instant (resolved from [`Since`]).
    pub since: Option<Timestamp>,
    /// Only runs of this branch (`--branch`).
    pub branch: Option<String>,
    /// Which branches' runs count when `--branch` is not given, in words (`main (the
    /// default branch, from origin/HEAD)`), as `candor reliability` counts them.
    pub counted: Option<String>,
    /// Only tests whose id matches this glob.
    pub tests: Option<String>,
    /// How many tests the detailed sections show.
    pub top: usize,
    /// How many of the newest runs the heatmap shows.
    pub heatmap_runs: usize,
}

/// Everything the builder reads; the edge fills it.
pub struct Inputs<'a> {
    /// The filter.
    pub scope: Scope,
    /// Runs inside the scope, newest first.
    pub runs: Vec<RunRecord>,
    /// Every test's evaluation inside the scope (tier and window statistics), by id.
    pub rows: Vec<Row>,
    /// Each test's windowed outcomes inside the scope, oldest first, keyed by id: the
    /// run id and outcome of every run in its window.
    pub windows: HashMap<String, Vec<(i64, Outcome)>>,
    /// The detailed tests' executions inside the scope, newest first.
    pub executions: HashMap<String, Vec<StoredExecution>>,
    /// Durations (seconds) of every red execution inside the scope.
    pub red_seconds: f64,
    /// Durations (seconds) of every execution of a `rerun` run inside the scope.
    pub rerun_seconds: f64,
    /// The rerun ledger.
    pub ledger: &'a Ledger,
    /// `[rerun]`.
    pub rerun: &'a RerunConfig,
    /// `[[fingerprint]]`.
    pub fingerprints: &'a [Fingerprint],
    /// `[reliability]`'s tier machine.
    pub policy: &'a TierPolicy,
    /// Owners from the reliability file, by test id.
    pub owners: HashMap<String, String>,
    /// Today, for the ledger's budget window and fingerprint expiry.
    pub today: jiff::civil::Date,
}

/// The report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The filter it was built with.
    pub scope: Scope,
    /// The numbers at the top.
    pub overview: Overview,
    /// The flakiest tests, most flaky first, at most `scope.top`.
    pub flakiest: Vec<FlakyTest>,
    /// The heatmap's runs, oldest first (columns).
    pub heatmap_runs: Vec<HeatmapRun>,
    /// The ledger, per test.
    pub ledger: Vec<LedgerRow>,
}

/// The overview.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Overview {
    /// Runs in scope.
    pub runs: usize,
    /// Runs with at least one red test.
    pub red_runs: usize,
    /// Tests in scope.
    pub tests: usize,
    /// Tests whose window confirms flakiness (a flaky pass, or one commit both green and red).
    pub confirmed_flaky: usize,
    /// Tests per tier in the committed reliability file.
    pub trusted: usize,
    /// Tests per tier in the committed reliability file.
    pub probation: usize,
    /// Tests per tier in the committed reliability file.
    pub quarantined: usize,
    /// Tests the reliability file does not list.
    pub unlisted: usize,
    /// Tests whose tier the next `candor reliability --write` would change.
    pub tier_changes: usize,
    /// Reruns in the ledger.
    pub reruns: usize,
    /// Seconds spent in red executions.
    pub seconds_lost_to_failures: f64,
    /// Seconds spent in rerun runs.
    pub seconds_lost_to_reruns: f64,
    /// The newest run's start: the report is "as of" it (never the clock, so the same
    /// history gives the same report).
    pub as_of: Option<Timestamp>,
}

/// One of the flakiest tests.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlakyTest {
    /// Canonical id.
    pub test: String,
    /// [`flakiness`] of its window.
    pub flakiness: f64,
    /// Runs in its window.
    pub runs: u64,
    /// Failed runs in its window.
    pub failures: u64,
    /// Passing share.
    pub pass_rate: Option<f64>,
    /// Wilson 95% band of the pass rate.
    pub wilson_95: Option<(f64, f64)>,
    /// Its tier in the committed reliability file (`None`: not listed), as agents read it.
    pub tier: Option<Tier>,
    /// Its tier after this evaluation: what the next `candor reliability --write` gives.
    pub next_tier: Tier,
    /// Owner from the reliability file.
    pub owner: Option<String>,
    /// Fingerprint ids naming the test.
    pub fingerprints: Vec<String>,
    /// Its window, oldest first: the outcome strip.
    pub strip: Vec<StripMark>,
    /// Its tier replayed run by run from the default tier with today's policy: where it
    /// changed, oldest first.
    pub tier_history: Vec<TierStep>,
    /// Failure shapes, most frequent first.
    pub shapes: Vec<Shape>,
    /// Duration p50/p95 over time, oldest bucket first.
    pub durations: Vec<DurationBucket>,
    /// Its outcome in each heatmap run (same order as `Report::heatmap_runs`); `None`
    /// where it did not run.
    pub heatmap: Vec<Option<Outcome>>,
}

/// One run in a strip.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StripMark {
    /// The run.
    pub run_id: i64,
    /// Its outcome.
    pub outcome: Outcome,
}

/// A tier change in a replayed tier history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TierStep {
    /// The run after which it changed.
    pub run_id: i64,
    /// When that run started.
    pub at: Timestamp,
    /// The tier from then on.
    pub tier: Tier,
}

/// One failure shape of a test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Shape {
    /// Signature (None when the failure had none).
    pub signature: Option<String>,
    /// `Exception: first line of message`.
    pub summary: String,
    /// Failing frame `file:line`.
    pub frame: Option<String>,
    /// How many red executions had it.
    pub count: usize,
    /// First and last seen.
    pub first_seen: Timestamp,
    /// Last seen.
    pub last_seen: Timestamp,
    /// The fingerprint that matches it exactly, or `None`: "no fingerprint".
    pub fingerprint: Option<String>,
}

/// Durations of one stretch of a test's runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DurationBucket {
    /// Start of the stretch.
    pub from: Timestamp,
    /// Executions with a duration in it.
    pub samples: usize,
    /// Median, seconds.
    pub p50: f64,
    /// 95th percentile (nearest rank), seconds.
    pub p95: f64,
}

/// A heatmap column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeatmapRun {
    /// The run.
    pub run_id: i64,
    /// When it started.
    pub started_at: Timestamp,
    /// Its commit, short.
    pub commit: Option<String>,
}

/// One test's reruns against its budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LedgerRow {
    /// Canonical id.
    pub test: String,
    /// All its reruns in the ledger.
    pub reruns: usize,
    /// Reruns inside the budget window.
    pub in_window: usize,
    /// The budget (`budget_entries` in `budget_days`).
    pub budget: u32,
    /// The signs of a real race, as `candor ledger stats` words them.
    pub flags: Vec<String>,
}

/// The share of consecutive runs whose outcome differs, flaky passes counting as flips of
/// their own; 0 for fewer than two runs without a flaky pass.
pub fn flakiness(window: &[Outcome]) -> f64 {
    let runs: Vec<Outcome> = window.iter().copied().filter(|o| o.is_run()).collect();
    let flips = runs
        .windows(2)
        .filter(|pair| pair[0].failed_at_least_once() != pair[1].failed_at_least_once())
        .count();
    let flaky_passes = runs.iter().filter(|o| **o == Outcome::FlakyPass).count();
    let chances = runs.len().saturating_sub(1) + flaky_passes;
    if chances == 0 {
        return 0.0;
    }
    (flips + flaky_passes) as f64 / chances as f64
}

/// Builds the report.
pub fn build(inputs: &Inputs<'_>) -> Report {
    let runs_by_id: HashMap<i64, &RunRecord> = inputs.runs.iter().map(|r| (r.id, r)).collect();
    let mut overview = Overview {
        runs: inputs.runs.len(),
        red_runs: inputs.runs.iter().filter(|r| r.red > 0).count(),
        tests: inputs.rows.len(),
        reruns: inputs.ledger.reruns().len(),
        seconds_lost_to_failures: inputs.red_seconds,
        seconds_lost_to_reruns: inputs.rerun_seconds,
        as_of: inputs.runs.iter().map(|r| r.run.started_at).max(),
        ..Overview::default()
    };
    for row in &inputs.rows {
        match row.previous_tier {
            Some(Tier::Trusted) => overview.trusted += 1,
            Some(Tier::Probation) => overview.probation += 1,
            Some(Tier::Quarantined) => overview.quarantined += 1,
            None => overview.unlisted += 1,
        }
        if row.stats.first_flaky.is_some() {
            overview.confirmed_flaky += 1;
        }
        if row.previous_tier.is_some() && row.previous_tier != Some(row.tier) {
            overview.tier_changes += 1;
        }
    }

    let mut heatmap_runs: Vec<HeatmapRun> = inputs
        .runs
        .iter()
        .take(inputs.scope.heatmap_runs)
        .map(|r| HeatmapRun {
            run_id: r.id,
            started_at: r.run.started_at,
            commit: r.run.commit.as_ref().map(|c| c.chars().take(7).collect()),
        })
        .collect();
    heatmap_runs.reverse();

    let flakiest = ranked(&inputs.rows, &inputs.windows)
        .into_iter()
        .take(inputs.scope.top)
        .map(|(row, score)| flaky_test(inputs, row, score, &heatmap_runs, &runs_by_id))
        .collect();

    Report {
        scope: inputs.scope.clone(),
        overview,
        flakiest,
        heatmap_runs,
        ledger: ledger_rows(inputs),
    }
}

/// Tests with at least one failure in their window, most flaky first (see the module
/// doc for the measure and the ties).
fn ranked<'r>(
    rows: &'r [Row],
    windows: &HashMap<String, Vec<(i64, Outcome)>>,
) -> Vec<(&'r Row, f64)> {
    let mut ranked: Vec<(&Row, f64)> = rows
        .iter()
        .filter(|row| row.stats.failures > 0)
        .map(|row| {
            let window: Vec<Outcome> = windows
                .get(&row.test)
                .map(|w| w.iter().map(|(_, o)| *o).collect())
                .unwrap_or_default();
            (row, flakiness(&window))
        })
        .collect();
    ranked.sort_by(|(a, sa), (b, sb)| {
        sb.total_cmp(sa)
            .then(b.stats.failures.cmp(&a.stats.failures))
            .then(a.test.cmp(&b.test))
    });
    ranked
}

/// The ids of the `top` flakiest tests, in order: what the edge fetches executions for.
#[expect(
    clippy::implicit_hasher,
    reason = "the edge builds this map with the default hasher"
)]
pub fn flakiest_ids(
    rows: &[Row],
    windows: &HashMap<String, Vec<(i64, Outcome)>>,
    top: usize,
) -> Vec<String> {
    ranked(rows, windows)
        .into_iter()
        .take(top)
        .map(|(row, _)| row.test.clone())
        .collect()
}

fn flaky_test(
    inputs: &Inputs<'_>,
    row: &Row,
    flakiness: f64,
    heatmap_runs: &[HeatmapRun],
    runs_by_id: &HashMap<i64, &RunRecord>,
) -> FlakyTest {
    let window = inputs.windows.get(&row.test).cloned().unwrap_or_default();
    let by_run: HashMap<i64, Outcome> = inputs
        .executions
        .get(&row.test)
        .into_iter()
        .flatten()
        .map(|e| (e.run_id, e.execution.outcome))
        .collect();
    let executions: &[StoredExecution] =
        inputs.executions.get(&row.test).map_or(&[], Vec::as_slice);
    FlakyTest {
        test: row.test.clone(),
        flakiness,
        runs: row.stats.runs,
        failures: row.stats.failures,
        pass_rate: row.stats.pass_rate,
        wilson_95: row.stats.pass_interval.map(|i| (i.low, i.high)),
        tier: row.previous_tier,
        next_tier: row.tier,
        owner: inputs.owners.get(&row.test).cloned(),
        fingerprints: inputs
            .fingerprints
            .iter()
            .filter(|fp| fp.test == row.test)
            .map(|fp| fp.id.clone())
            .collect(),
        strip: window
            .iter()
            .map(|(run_id, outcome)| StripMark {
                run_id: *run_id,
                outcome: *outcome,
            })
            .collect(),
        tier_history: tier_history(&window, runs_by_id, inputs.policy),
        shapes: shapes(&row.test, executions, inputs, runs_by_id),
        durations: duration_trend(executions),
        heatmap: heatmap_runs
            .iter()
            .map(|run| by_run.get(&run.run_id).copied().filter(|o| o.is_run()))
            .collect(),
    }
}

/// Replays the tier machine after every run of the window, from the default tier.
fn tier_history(
    window: &[(i64, Outcome)],
    runs_by_id: &HashMap<i64, &RunRecord>,
    policy: &TierPolicy,
) -> Vec<TierStep> {
    let entries: Vec<WindowEntry<'_>> = window
        .iter()
        .filter_map(|(run_id, outcome)| {
            let run = runs_by_id.get(run_id)?;
            Some(WindowEntry {
                outcome: *outcome,
                commit: run.run.commit.as_deref(),
                started_at: run.run.started_at,
            })
        })
        .collect();
    let mut state = TierState {
        tier: policy.default_tier,
        since: None,
    };
    let mut steps = Vec::new();
    for end in 1..=entries.len() {
        let decision = next_state(Some(&state), &entries[..end], policy);
        if decision.state.tier != state.tier {
            steps.push(TierStep {
                run_id: window[end - 1].0,
                at: entries[end - 1].started_at,
                tier: decision.state.tier,
            });
        }
        state = decision.state;
    }
    steps
}

fn shapes(
    test: &str,
    executions: &[StoredExecution],
    inputs: &Inputs<'_>,
    runs_by_id: &HashMap<i64, &RunRecord>,
) -> Vec<Shape> {
    let mut by_signature: BTreeMap<Option<String>, Shape> = BTreeMap::new();
    for stored in executions.iter().rev() {
        let Some(failure) = stored.execution.failure.as_ref() else {
            continue;
        };
        if !stored.execution.outcome.failed_at_least_once() {
            continue;
        }
        let shape = by_signature
            .entry(stored.signature.clone())
            .or_insert_with(|| {
                let conditions = runs_by_id
                    .get(&stored.run_id)
                    .map_or_else(RunConditions::default, |run| RunConditions::from(&run.run));
                let fingerprint = inputs
                    .fingerprints
                    .iter()
                    .find(|fp| fp.check(test, Some(failure), &conditions).is_ok())
                    .map(|fp| fp.id.clone());
                Shape {
                    signature: stored.signature.clone(),
                    summary: match &failure.exception {
                        Some(exception) => format!("{exception}: {}", first_line(&failure.message)),
                        None => first_line(&failure.message).to_owned(),
                    },
                    frame: failure
                        .failing_frame
                        .as_ref()
                        .map(crate::results::Frame::location),
                    count: 0,
                    first_seen: stored.started_at,
                    last_seen: stored.started_at,
                    fingerprint,
                }
            });
        shape.count += 1;
        shape.first_seen = shape.first_seen.min(stored.started_at);
        shape.last_seen = shape.last_seen.max(stored.started_at);
    }
    let mut shapes: Vec<Shape> = by_signature.into_values().collect();
    shapes.sort_by(|a, b| b.count.cmp(&a.count).then(a.signature.cmp(&b.signature)));
    shapes
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// p50 and p95 (nearest rank) over up to [`TREND_BUCKETS`] equal stretches of runs.
fn duration_trend(executions: &[StoredExecution]) -> Vec<DurationBucket> {
    let timed: Vec<(Timestamp, f64)> = executions
        .iter()
        .rev()
        .filter(|e| e.execution.outcome.is_run())
        .filter_map(|e| e.execution.duration.map(|d| (e.started_at, d)))
        .collect();
    if timed.is_empty() {
        return Vec::new();
    }
    let size = timed.len().div_ceil(TREND_BUCKETS);
    timed
        .chunks(size)
        .map(|chunk| {
            let mut seconds: Vec<f64> = chunk.iter().map(|(_, d)| *d).collect();
            seconds.sort_by(f64::total_cmp);
            DurationBucket {
                from: chunk[0].0,
                samples: seconds.len(),
                p50: nearest_rank(&seconds, 50),
                p95: nearest_rank(&seconds, 95),
            }
        })
        .collect()
}

/// The nearest-rank percentile of sorted values (Hyndman & Fan 1996, definition 1).
pub fn nearest_rank(sorted: &[f64], percent: usize) -> f64 {
    let rank = (percent * sorted.len()).div_ceil(100).max(1);
    sorted[rank - 1]
}

fn ledger_rows(inputs: &Inputs<'_>) -> Vec<LedgerRow> {
    let flags: HashMap<String, Vec<Flag>> = ledger_stats(inputs.ledger)
        .into_iter()
        .map(|stats| (stats.test_id, stats.flags))
        .collect();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for rerun in inputs.ledger.reruns() {
        *counts.entry(rerun.entry().test_id.as_str()).or_default() += 1;
    }
    counts
        .into_iter()
        .map(|(test, reruns)| LedgerRow {
            test: test.to_owned(),
            reruns,
            in_window: inputs
                .ledger
                .entries_within(test, inputs.today, inputs.rerun.budget_days),
            budget: inputs.rerun.budget_entries,
            flags: flags
                .get(test)
                .map(|f| f.iter().map(ToString::to_string).collect())
                .unwrap_or_default(),
        })
        .collect()
}

/// Whether a run is inside the scope.
pub fn in_scope(scope: &Scope, run: &RunRecord) -> bool {
    scope.since.is_none_or(|since| run.run.started_at >= since)
        && scope
            .branch
            .as_ref()
            .is_none_or(|branch| run.run.branch.as_deref() == Some(branch.as_str()))
}

/// Whether a run was a rerun.
pub fn is_rerun(run: &RunRecord) -> bool {
    run.run.source == Source::Rerun
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flakiness_is_zero_for_a_broken_test_and_one_for_an_alternating_one() {
        use Outcome::{Fail, Pass};
        assert!((flakiness(&[Fail, Fail, Fail]) - 0.0).abs() < f64::EPSILON);
        assert!((flakiness(&[Pass, Fail, Pass, Fail]) - 1.0).abs() < f64::EPSILON);
        assert!((flakiness(&[Pass, Pass, Pass, Fail]) - 1.0 / 3.0).abs() < 1e-12);
        assert!((flakiness(&[]) - 0.0).abs() < f64::EPSILON);
    }

    #[test]
    fn a_flaky_pass_counts_as_a_flip_of_its_own() {
        use Outcome::{FlakyPass, Pass};
        // Two pairs with no change, one flaky pass: 1 flip of 3 chances... the flaky pass
        // itself counts as failed-at-least-once, so Pass → FlakyPass is a flip too.
        let score = flakiness(&[Pass, FlakyPass, Pass]);
        assert!((score - 3.0 / 3.0).abs() < 1e-12, "{score}");
        assert!((flakiness(&[FlakyPass]) - 1.0).abs() < f64::EPSILON);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let values: Vec<f64> = (1..=20).map(f64::from).collect();
        assert!((nearest_rank(&values, 50) - 10.0).abs() < f64::EPSILON);
        assert!((nearest_rank(&values, 95) - 19.0).abs() < f64::EPSILON);
        assert!((nearest_rank(&[3.0], 95) - 3.0).abs() < f64::EPSILON);
    }
}
