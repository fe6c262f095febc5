//! `candor tests`: one line per test in the history with its record, over the runs
//! reliability counts (the default branch's, or `[reliability] branches`), and a line
//! saying which.

use std::collections::HashMap;

use super::counted::CountedRuns;
use super::{AppError, Ports};
use crate::cli::settings::{TestsSettings, TierFilter};
use crate::events::{Event, TestEvent};
use crate::exit_codes;
use crate::history::{HistoryStore, TestSummary};
use crate::policy::Config;
use crate::reliability::ReliabilityFile;
use crate::stats::tiers::Tier;

/// The `counted` event, then one `test` event per test (sorted by id) until the reader
/// goes away; for people, which runs were counted. The history is opened with `open`
/// once the policy is read.
pub fn run(
    settings: &TestsSettings,
    open: impl FnOnce() -> Result<Box<dyn HistoryStore>, AppError>,
    ports: &mut Ports<'_>,
) -> Result<u8, AppError> {
    let config = Config::load(ports.root)?;
    let file = ReliabilityFile::load(&ports.root.join(&config.reliability.file))?;
    let tiers: HashMap<&str, Tier> = file.tests.iter().map(|t| (t.id.as_str(), t.tier)).collect();
    let store = open()?;
    let counted = CountedRuns::read(store.as_ref(), &config, settings.default_branch.as_ref())?;
    let mut tests = store.tests_in(settings.failing_only, counted.filter())?;
    let tier_of = |test: &TestSummary| tiers.get(test.test_id.as_str()).copied();
    if let Some(filter) = settings.tier {
        tests.retain(|test| match filter {
            TierFilter::Listed(tier) => tier_of(test) == Some(tier),
            TierFilter::Unlisted => tier_of(test).is_none(),
        });
    }
    ports.emit(Event::Counted(counted.event()));
    if tests.is_empty() {
        ports.tell(if settings.failing_only || settings.tier.is_some() {
            "no test in the history matches"
        } else {
            "no tests in the history yet"
        });
    }
    for test in &tests {
        ports.emit(Event::Test(TestEvent {
            id: test.test_id.clone(),
            tier: tier_of(test),
            runs: test.runs,
            failures: test.failures,
            skips: test.skips,
            pass_rate: test.pass_rate(),
            last_failure: test.last_failure,
            last_seen: test.last_seen,
        }));
        if ports.closed() {
            break;
        }
    }
    ports.tell(counted.human());
    Ok(exit_codes::OK)
}
