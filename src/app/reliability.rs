//! `candor reliability`: every test's tier from its window, as events, and with `--write`
//! written to the reliability file. The tier itself is decided in `stats::tiers`.

use std::path::PathBuf;

use super::counted::CountedRuns;
use super::{AppError, Ports};
use crate::cli::settings::ReliabilitySettings;
use crate::events::{Event, ReliabilityEvent, ReliabilitySummary};
use crate::exit_codes;
use crate::history::HistoryStore;
use crate::policy::Config;
use crate::reliability::{ReliabilityFile, Row, evaluate_history_in, utc_date, write_atomic};
use crate::stats::tiers::{Change, Tier};

/// One `reliability` event per test until the reader goes away, then for people which
/// runs were counted, the tiers in all and what was written, then `reliability-summary`.
/// The history is opened with `open` once the policy and the old file are read.
pub fn run(
    settings: &ReliabilitySettings,
    open: impl FnOnce() -> Result<Box<dyn HistoryStore>, AppError>,
    ports: &mut Ports<'_>,
) -> Result<u8, AppError> {
    let config = Config::load(ports.root)?;
    let policy = &config.reliability.tiers;
    let target: PathBuf = match &settings.write {
        Some(Some(path)) => path.clone(),
        _ => ports.root.join(&config.reliability.file),
    };
    if settings.write.is_some() {
        // A path given on the command line outside the repository is the user's choice;
        // anything under it, the configured file included, must stay inside.
        crate::confine::check_write_if_under(ports.root, &target)?;
    }
    let previous = ReliabilityFile::load(&target)?;
    let store = open()?;
    let counted = CountedRuns::read(store.as_ref(), &config, settings.default_branch.as_ref())?;
    let evaluation = evaluate_history_in(store.as_ref(), &previous, policy, counted.filter())?;
    let written = if settings.write.is_some() {
        write_atomic(&target, &evaluation.file.render(policy)).map_err(|source| {
            AppError::Write {
                path: target.clone(),
                source,
            }
        })?;
        Some(target.clone())
    } else {
        None
    };

    let count = |tier: Tier| evaluation.rows.iter().filter(|r| r.tier == tier).count();
    let summary = ReliabilitySummary {
        tests: evaluation.rows.len(),
        trusted: count(Tier::Trusted),
        probation: count(Tier::Probation),
        quarantined: count(Tier::Quarantined),
        changed: evaluation
            .rows
            .iter()
            .filter(|r| !matches!(r.change, Change::Kept))
            .count(),
        stale: evaluation.rows.iter().filter(|r| r.stale).count(),
        written,
        counted: counted.event(),
    };
    for row in &evaluation.rows {
        ports.emit(Event::Reliability(event(row)));
        if ports.closed() {
            return Ok(exit_codes::OK);
        }
    }
    ports.tell(counted.human());
    ports.tell(format!(
        "{} tests: {} trusted, {} probation, {} quarantined ({} changed, {} stale)",
        summary.tests,
        summary.trusted,
        summary.probation,
        summary.quarantined,
        summary.changed,
        summary.stale
    ));
    ports.tell(match &summary.written {
        Some(path) => format!("wrote {}", path.display()),
        None => format!("nothing written; `--write` writes {}", target.display()),
    });
    ports.emit(Event::ReliabilitySummary(summary));
    Ok(exit_codes::OK)
}

fn event(row: &Row) -> ReliabilityEvent {
    ReliabilityEvent {
        test: row.test.clone(),
        tier: row.tier,
        previous_tier: row.previous_tier,
        change: row.change,
        runs: row.stats.runs,
        failures: row.stats.failures,
        pass_rate: row.stats.pass_rate,
        wilson_95: row.stats.pass_interval,
        flips: row.stats.flips,
        first_flaky: row.stats.first_flaky.map(utc_date),
        stale: row.stale,
    }
}
