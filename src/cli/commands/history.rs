//! `candor history copy` and `candor history prune`: moving a history between stores
//! (run by run, skipping runs the target holds, so a copy is idempotent and resumes) and
//! retention by whole monthly partitions on PostgreSQL.

use std::collections::HashSet;

use jiff::{Span, Timestamp};
use serde::Serialize;

use super::{Open, open_store};
use crate::cli::error::CliError;
use crate::cli::output::Printer;
use crate::exit_codes;
use crate::history::{Location, PgStore, RunContent};

/// `{"type":"history-copy"}`: see docs/json-output.md.
#[derive(Serialize)]
struct CopyLine {
    copied_runs: u64,
    copied_executions: u64,
    skipped_runs: u64,
    from_runs: u64,
    from_executions: u64,
    to_runs: u64,
    to_executions: u64,
}

/// `{"type":"history-prune"}`: see docs/json-output.md.
#[derive(Serialize)]
struct PruneLine<'a> {
    cutoff: Timestamp,
    dropped_partitions: &'a [String],
    removed_runs: u64,
}

pub(super) fn copy(from: &Location, to: &Location, printer: &mut Printer) -> Result<u8, CliError> {
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
    let bar = printer.progress_bar(runs.len() as u64);
    bar.set_message("copying runs");
    let (mut copied_runs, mut copied_executions, mut skipped_runs) = (0, 0, 0);
    for run in &runs {
        bar.inc(1);
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
    bar.finish_and_clear();
    let count = |runs: &[crate::history::RunRecord]| {
        (
            runs.len() as u64,
            runs.iter().map(|run| run.executions).sum::<u64>(),
        )
    };
    let (from_runs, from_executions) = count(&runs);
    let (to_runs, to_executions) = count(&target.runs(usize::MAX)?);
    let line = CopyLine {
        copied_runs,
        copied_executions,
        skipped_runs,
        from_runs,
        from_executions,
        to_runs,
        to_executions,
    };
    if printer.is_json() {
        printer.json("history-copy", &line)?;
    } else {
        printer.line(&format!(
            "copied {copied_runs} runs ({copied_executions} executions) from {from} to {to}; {skipped_runs} were there already",
        ))?;
        printer.line(&format!(
            "{from}: {from_runs} runs, {from_executions} executions; {to}: {to_runs} runs, {to_executions} executions"
        ))?;
    }
    Ok(exit_codes::OK)
}

/// How far back `age` reaches from `now`, as a timestamp.
fn cutoff(age: &str, now: Timestamp) -> Result<Timestamp, CliError> {
    let bad = |reason: String| CliError::BadAge {
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

pub(super) fn prune(
    db: &Location,
    older_than: &str,
    now: Timestamp,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let cutoff = cutoff(older_than, now)?;
    let Location::Postgres(text) = db else {
        return Err(CliError::PruneNeedsPostgres { path: db.shown() });
    };
    let store = PgStore::open(&Location::pg_target(text)?)?;
    let (dropped, removed_runs) = store.prune(cutoff)?;
    if printer.is_json() {
        printer.json(
            "history-prune",
            &PruneLine {
                cutoff,
                dropped_partitions: &dropped,
                removed_runs,
            },
        )?;
    } else if dropped.is_empty() {
        printer.line(&format!("nothing to drop: no month ended before {cutoff}"))?;
    } else {
        printer.line(&format!(
            "dropped {} monthly partitions ({}) and {removed_runs} runs that started before them ended",
            dropped.len(),
            dropped.join(", ")
        ))?;
    }
    Ok(exit_codes::OK)
}
