//! `candor ledger stats`: per test, its reruns, how many distinct first failures they
//! claimed, on which worker counts, and the flags that a real race may hide behind a
//! fingerprint. The statistics are `ledger::stats`'.

use super::{AppError, Ports};
use crate::events::{Event, FlagEvent, LedgerStatsEvent};
use crate::exit_codes;
use crate::ledger::Ledger;
use crate::ledger::stats::ledger_stats;
use crate::policy::Config;

/// One `ledger-stats` event per test until the reader goes away; for people, a line when
/// the ledger holds no rerun.
pub fn run(ports: &mut Ports<'_>) -> Result<u8, AppError> {
    let config = Config::load(ports.root)?;
    let path = ports.root.join(&config.rerun.ledger);
    let ledger = Ledger::load(&path)?;
    let stats = ledger_stats(&ledger);
    if stats.is_empty() {
        ports.tell(format!("no reruns in {}", path.display()));
    }
    for test in stats {
        ports.emit(Event::LedgerStats(LedgerStatsEvent {
            test: test.test_id,
            entries: test.entries,
            distinct_first_failures: test.distinct_first_failures,
            workers: test.workers,
            flags: test
                .flags
                .into_iter()
                .map(|flag| FlagEvent {
                    message: flag.to_string(),
                    flag,
                })
                .collect(),
        }));
        if ports.closed() {
            break;
        }
    }
    Ok(exit_codes::OK)
}
