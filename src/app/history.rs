//! `candor history copy` and `candor history prune`: moving a history between stores
//! (run by run, skipping runs the target holds, so a copy is idempotent and resumes) and
//! retention by whole monthly partitions on PostgreSQL.

use std::collections::HashSet;

use jiff::{Span, Timestamp};

use super::{AppError, Ports};
use crate::cli::commands::{Open, open_store};
use crate::events::{Event, HistoryCopyEvent, HistoryPruneEvent};
use crate::exit_codes;
use crate::history::{Location, PgStore, RunContent};

/// Copies every run of `from` that `to` lacks, oldest first, with a progress step per run;
/// then `history-copy`.
pub fn copy(from: &Location, to: &Location, ports: &mut Ports<'_>) -> Result<u8, AppError> {
    let source = open_store(from, Open::Existing)?;
    let mut target = open_store(to, Open::CreateIfMissing)?;
    let held: HashSet<String> = target
        .runs(usize::MAX)?
        .into_iter()
        .map(|run| run.content_key)
        .collect();
    // Oldest first, so that an interrupted copy leaves the target a prefix of the
    // source's history and run ids keep the source's order.
    let mut runs = source.runs(usize::MAX)?;
    runs.reverse();
    let total = runs.len() as u64;
    let (mut copied_runs, mut copied_executions, mut skipped_runs) = (0, 0, 0);
    for (done, run) in (1..).zip(&runs) {
        ports.step("copying runs", done, total);
        if held.contains(&run.content_key) {
            skipped_runs += 1;
            continue;
        }
        let executions = source.run_executions(run.id)?;
        let mut session = target.begin_ingest(&run.run)?;
        for stored in executions {
            session.add_with_signature(stored.execution, stored.signature)?;
        }
        let report = session.commit(&RunContent {
            content_key: run.content_key.clone(),
            format: run.run.format.clone(),
            producer: run.run.producer.clone(),
        })?;
        if report.added {
            copied_runs += 1;
            copied_executions += report.tests;
        } else {
            skipped_runs += 1;
        }
    }
    let count = |runs: &[crate::history::RunRecord]| {
        (
            runs.len() as u64,
            runs.iter().map(|run| run.executions).sum::<u64>(),
        )
    };
    let (from_runs, from_executions) = count(&runs);
    let (to_runs, to_executions) = count(&target.runs(usize::MAX)?);
    ports.say(format!(
        "copied {copied_runs} runs ({copied_executions} executions) from {from} to {to}; {skipped_runs} were there already",
    ));
    ports.say(format!(
        "{from}: {from_runs} runs, {from_executions} executions; {to}: {to_runs} runs, {to_executions} executions"
    ));
    ports.emit(Event::HistoryCopy(HistoryCopyEvent {
        copied_runs,
        copied_executions,
        skipped_runs,
        from_runs,
        from_executions,
        to_runs,
        to_executions,
    }));
    Ok(exit_codes::OK)
}

/// How far back `age` reaches from `now`, as a timestamp.
fn cutoff(age: &str, now: Timestamp) -> Result<Timestamp, AppError> {
    let bad = |reason: String| AppError::BadAge {
        given: age.to_owned(),
        reason,
    };
    let span: Span = age
        .trim()
        .parse()
        .map_err(|e: jiff::Error| bad(e.to_string()))?;
    if !span.is_positive() {
        return Err(bad("not a positive age".into()));
    }
    let zoned = now.to_zoned(jiff::tz::TimeZone::UTC);
    zoned
        .checked_sub(span)
        .map(|z| z.timestamp())
        .map_err(|e| bad(e.to_string()))
}

/// Drops the monthly partitions that ended before `older_than` ago; then `history-prune`.
pub fn prune(
    db: &Location,
    older_than: &str,
    now: Timestamp,
    ports: &mut Ports<'_>,
) -> Result<u8, AppError> {
    let cutoff = cutoff(older_than, now)?;
    let Location::Postgres(text) = db else {
        return Err(AppError::PruneNeedsPostgres { path: db.shown() });
    };
    let store = PgStore::open(&Location::pg_target(text)?)?;
    let (dropped, removed_runs) = store.prune(cutoff)?;
    if dropped.is_empty() {
        ports.say(format!("nothing to drop: no month ended before {cutoff}"));
    } else {
        ports.say(format!(
            "dropped {} monthly partitions ({}) and {removed_runs} runs that started before them ended",
            dropped.len(),
            dropped.join(", ")
        ));
    }
    ports.emit(Event::HistoryPrune(HistoryPruneEvent {
        cutoff,
        dropped_partitions: dropped,
        removed_runs,
    }));
    Ok(exit_codes::OK)
}
