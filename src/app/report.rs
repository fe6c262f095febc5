//! What `candor report` computes from the history, policy and ledger: the HTML report's
//! inputs, the Markdown comment's rows and the annotations (`crate::report` renders them).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use jiff::civil::Date;

use crate::cli::error::CliError;
use crate::events::{Event, EventSink, Progress, Step};
use crate::history::{HistoryStore, RunRecord, Source, StoredExecution};
use crate::ledger::Ledger;
use crate::policy::Config;
use crate::reliability::{Evaluator, ReliabilityFile};
use crate::report::{self as model, Inputs, Scope};
use crate::results::Outcome;
use crate::stats::window::WindowEntry;

/// The HTML report of the runs in `scope` (and in `counted`, when given: the runs
/// reliability counts), with the reliability file and ledger of the work tree at
/// `repo_root`.
pub fn html_report<S: std::hash::BuildHasher>(
    store: &dyn HistoryStore,
    config: &Config,
    repo_root: &Path,
    (scope, counted): (Scope, Option<&HashSet<i64, S>>),
    today: Date,
    events: &mut dyn EventSink,
) -> Result<String, CliError> {
    let policy = &config.reliability.tiers;
    let previous = ReliabilityFile::load(&repo_root.join(&config.reliability.file))?;
    let ledger = Ledger::load(&repo_root.join(&config.rerun.ledger))?;
    let pattern = match &scope.tests {
        Some(glob) => Some(glob::Pattern::new(glob).map_err(|error| {
            CliError::BadChange(format!("--tests `{glob}` is not a glob: {error}"))
        })?),
        None => None,
    };

    let mut step = |done: u64, message: &str| {
        events.emit(&Event::Progress(Progress {
            message: message.to_owned(),
            step: Some(Step { done, total: 4 }),
        }));
    };
    step(0, "runs");
    let runs: Vec<RunRecord> = store
        .runs(usize::MAX)?
        .into_iter()
        .filter(|run| model::in_scope(&scope, run))
        .filter(|run| counted.is_none_or(|runs| runs.contains(&run.id)))
        .collect();
    let by_id: HashMap<i64, &RunRecord> = runs.iter().map(|run| (run.id, run)).collect();
    step(1, "windows");
    let mut evaluator = Evaluator::new(&previous, policy);
    let mut windows: HashMap<String, Vec<(i64, Outcome)>> = HashMap::new();
    let mut entries: Vec<WindowEntry<'_>> = Vec::with_capacity(policy.window_runs);
    let mut seen: Vec<String> = Vec::new();
    store.windows(policy.window_runs, &mut |test| {
        if pattern.as_ref().is_some_and(|p| !p.matches(&test.test_id)) {
            return;
        }
        // The store gives newest first; the machine and the strip read oldest first.
        let kept: Vec<(i64, Outcome)> = test
            .entries
            .iter()
            .rev()
            .filter(|entry| by_id.contains_key(&entry.run_id))
            .map(|entry| (entry.run_id, entry.outcome))
            .collect();
        if kept.is_empty() {
            return;
        }
        entries.clear();
        entries.extend(kept.iter().map(|(run_id, outcome)| {
            let run = by_id[run_id];
            WindowEntry {
                outcome: *outcome,
                commit: run.run.commit.as_deref(),
                started_at: run.run.started_at,
            }
        }));
        evaluator.visit(test.test_id.clone(), &entries);
        if kept
            .iter()
            .any(|(_, outcome)| outcome.failed_at_least_once())
        {
            windows.insert(test.test_id.clone(), kept);
        }
        seen.push(test.test_id);
    })?;
    let seen: HashSet<String> = seen.into_iter().collect();
    let mut rows = evaluator.finish().rows;
    // Stale rows are the reliability file's tests with no run in scope: not in the report.
    rows.retain(|row| seen.contains(&row.test));
    step(2, "failures");
    let mut red_seconds = 0.0;
    for run in &runs {
        if run.red == 0 {
            continue;
        }
        red_seconds += store.red_seconds(run.id)?;
    }
    let mut rerun_seconds = 0.0;
    let rerun_tests: HashSet<&str> = ledger
        .reruns()
        .iter()
        .map(|r| r.entry().test_id.as_str())
        .collect();
    for test in rerun_tests {
        for stored in store.executions(test, usize::MAX)? {
            if stored.source == Source::Rerun && by_id.contains_key(&stored.run_id) {
                rerun_seconds += stored.execution.duration.unwrap_or(0.0);
            }
        }
    }
    step(3, "tests");
    let top = model::flakiest_ids(&rows, &windows, scope.top);
    let mut executions: HashMap<String, Vec<StoredExecution>> = HashMap::new();
    for id in top {
        let mut stored = store.executions(&id, policy.window_runs.max(1) * 4)?;
        stored.retain(|e| by_id.contains_key(&e.run_id));
        executions.insert(id, stored);
    }
    step(4, "");

    let owners = previous
        .tests
        .iter()
        .filter_map(|entry| {
            let owner = entry.human.get("owner")?;
            let owner = owner.as_str()?.to_owned();
            Some((entry.id.clone(), owner))
        })
        .collect();
    let report = model::build(&Inputs {
        scope,
        runs: runs.clone(),
        rows,
        windows,
        executions,
        red_seconds,
        rerun_seconds,
        ledger: &ledger,
        rerun: &config.rerun,
        fingerprints: &config.fingerprints,
        policy,
        owners,
        today,
    });
    Ok(model::html::render(&report))
}
