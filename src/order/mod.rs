//! Flakes that isolation cannot see: whether a test's outcome depends on the tests that
//! ran before it in the same process (a polluter that leaves state behind, a
//! state-setter a brittle test relies on), on the seed, or on running twice in one
//! process. `candor order` and `candor compare` call [`investigate`].
//!
//! | part | owns |
//! | --- | --- |
//! | [`bisect`] | delta debugging over a prefix (binary split, ddmin fallback); pure |
//! | [`driver`] | the stages, the verdict, the budget; pure, behind [`driver::Prober`] and [`driver::Clock`] |
//! | [`prefix`] | the order a results file recorded |
//! | [`state`] | the shared state a failure shows |
//! | [`explain`] | reproduction quoting, suggested fix, ticket |
//! | [`probe`] | probes as real runs through the runner adapter, one run record each (`crate::records`) |
//! | [`seeds`] | seeds derived from one base seed; a seeded shuffle |
//!
//! Nothing here decides what a red means for a change; the verdict says only whether
//! order, seed or repetition explains it.

pub mod bisect;
pub mod driver;
pub mod explain;
pub mod prefix;
pub mod probe;
pub mod seeds;
pub mod state;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

pub use driver::{
    Clock, Investigation, Observation, Plan, Probe, Purpose, RecordedOrder, Request, SystemClock,
    Verdict,
};
pub use state::SharedState;

use crate::classify::{Bucket, Classified};
use crate::results::ParseOptions;
use crate::runner::process::Executor;
use crate::runner::{self, Adapter, Arrangement, GivenOrder, RunOptions, RunnerError};

/// What a runner-backed investigation needs.
pub struct Setup<'a> {
    /// The runner.
    pub adapter: &'a dyn Adapter,
    /// Runs the children.
    pub executor: &'a dyn Executor,
    /// The repository root.
    pub repo_root: &'a Path,
    /// The investigation's directory (`.candor/runs/order-XXXXXX`): each probe's log and
    /// report in `probe/NNN/`, its run record in `records/`.
    pub dir: &'a Path,
    /// The longest one probe may run (`[runner] timeout_seconds`); the budget may cut it
    /// shorter.
    pub timeout: Duration,
    /// Time between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// What the result parsers need.
    pub parse: &'a ParseOptions,
    /// The commit, for the run records.
    pub commit: Option<&'a str>,
    /// `[lane] fixtures`, whose hash every probe's run record carries.
    pub fixtures: &'a Path,
}

/// An investigation with what its reader needs.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Finding {
    /// The stages, the probes and the verdict.
    #[serde(flatten)]
    pub investigation: Investigation,
    /// The shared state the failure shows.
    pub shared_state: Vec<SharedState>,
    /// The command that reproduces the verdict (culprits then the test; the failing seed;
    /// the repeated run), when there is one.
    pub reproduction: Option<Vec<String>>,
    /// What to change.
    pub suggested_fix: Option<String>,
    /// The quarantine ticket's title and body.
    pub ticket: Option<explain::Ticket>,
    /// Where the probes' logs and records are.
    pub dir: PathBuf,
}

/// The request for `test`: the recorded order (filtered to tests the runner still lists
/// and that share the test's process), or without one the runner's listing order; and
/// the tests of its file (module or package where the runner gives no file) to shuffle.
/// Returns how many recorded tests were dropped as no longer listed, too.
pub fn build_request(
    setup: &Setup<'_>,
    test: &str,
    recorded: Option<RecordedOrder>,
) -> Result<(Request, usize), RunnerError> {
    let adapter = setup.adapter;
    if matches!(adapter.order_support().given, GivenOrder::Unsupported(_)) {
        let request = Request {
            test: test.to_owned(),
            context: None,
            neighbours: Vec::new(),
        };
        return Ok((request, 0));
    }
    let context = runner::Context::new(setup.repo_root, setup.dir.join("list"), setup.executor)
        .with_timeout(Some(setup.timeout), setup.grace);
    let listed = adapter.list(&context)?;
    let scope = adapter.process_scope(test);
    // A go subtest is listed as its top-level test, which is no test before it.
    let own = adapter.selection_unit(test);
    let is_test = |id: &str| id == test || id == own;
    let shares_process =
        |id: &str| !is_test(id) && scope.is_some() && adapter.process_scope(id) == scope;
    let mut dropped = 0;
    let context = match recorded {
        Some(mut order) => {
            let before = std::mem::take(&mut order.before);
            for id in before {
                if shares_process(&id) && listed.iter().any(|l| l.id == id) {
                    order.before.push(id);
                } else {
                    dropped += 1;
                }
            }
            Some(order)
        }
        None => listed
            .iter()
            .position(|l| is_test(&l.id))
            .map(|at| RecordedOrder {
                source: format!("the {} listing order", adapter.kind()),
                before: listed[..at]
                    .iter()
                    .filter(|l| shares_process(&l.id))
                    .map(|l| l.id.clone())
                    .collect(),
                seed: None,
            }),
    };
    let file = listed
        .iter()
        .find(|l| is_test(&l.id))
        .and_then(|l| l.file.clone());
    let mut neighbours: Vec<String> = listed
        .iter()
        .filter(|l| match &file {
            Some(file) => l.file.as_ref() == Some(file),
            None => shares_process(&l.id),
        })
        .map(|l| l.id.clone())
        .filter(|id| id == test || shares_process(id))
        .collect();
    if !neighbours.iter().any(|id| id == test) {
        neighbours.push(test.to_owned());
    }
    let request = Request {
        test: test.to_owned(),
        context,
        neighbours,
    };
    Ok((request, dropped))
}

/// Investigates one test with real runs, each through the runner adapter and recorded;
/// `on_probe` hears of each probe as it ends (progress lines).
pub fn investigate(
    setup: &Setup<'_>,
    request: &Request,
    plan: &Plan,
    clock: &dyn Clock,
    on_probe: &mut dyn FnMut(&Probe, &Observation),
) -> Result<Finding, RunnerError> {
    let mut prober = Watched {
        inner: probe::RunnerProber {
            adapter: setup.adapter,
            executor: setup.executor,
            repo_root: setup.repo_root.to_owned(),
            dir: setup.dir.to_owned(),
            timeout: setup.timeout,
            grace: setup.grace,
            parse: setup.parse.clone(),
            test: request.test.clone(),
            commit: setup.commit.map(str::to_owned),
            fixture_hash: crate::records::fixture_hash(setup.repo_root, setup.fixtures)
                .ok()
                .flatten(),
        },
        on_probe,
    };
    let support = setup.adapter.order_support();
    let investigation = driver::drive(request, plan, &support, &mut prober, clock)?;
    let shared_state = investigation
        .telling_failure
        .as_ref()
        .map(state::shared_state)
        .unwrap_or_default();
    let reproduction = reproduction(setup.adapter, &investigation);
    let suggested_fix = explain::suggested_fix(&investigation, &shared_state);
    let pasted = reproduction.as_deref().map(explain::shell_words);
    let ticket = explain::ticket(&investigation, &shared_state, pasted.as_deref());
    let finding = Finding {
        investigation,
        shared_state,
        reproduction,
        suggested_fix,
        ticket,
        dir: setup.dir.to_owned(),
    };
    write_finding(&finding, &setup.dir.join(FINDING_FILE))?;
    Ok(finding)
}

/// The file in the investigation's directory that holds the whole finding as JSON.
pub const FINDING_FILE: &str = "order.json";

/// Writes the finding whole or not at all.
fn write_finding(finding: &Finding, path: &Path) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    fs_err::create_dir_all(dir)?;
    let mut text = serde_json::to_string_pretty(finding).map_err(std::io::Error::other)?;
    text.push('\n');
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut file, text.as_bytes())?;
    file.persist(path).map_err(|error| error.error)?;
    Ok(())
}

/// The classifier's bucket for a finding (`classify::Bucket`), with the polluter,
/// state-setter or failing seed in its reason; `None` when the verdict explains nothing.
pub fn classified(finding: &Finding) -> Option<Classified> {
    let investigation = &finding.investigation;
    let runs = u32::try_from(investigation.probes.len()).unwrap_or(u32::MAX);
    let failures = u32::try_from(
        investigation
            .probes
            .iter()
            .filter(|p| p.outcome.is_some_and(crate::results::Outcome::is_red))
            .count(),
    )
    .unwrap_or(u32::MAX);
    let states = if finding.shared_state.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = finding
            .shared_state
            .iter()
            .map(ToString::to_string)
            .collect();
        format!("; shared state: {}", names.join(", "))
    };
    let (bucket, reason) = match &investigation.verdict {
        Verdict::OrderDependentVictim { polluters } => (
            Bucket::OrderDependentVictim,
            format!(
                "passes alone, fails after {}{states}",
                polluters.join(" and ")
            ),
        ),
        Verdict::OrderDependentBrittle { state_setters } => (
            Bucket::OrderDependentBrittle,
            format!(
                "fails alone, passes after {}{states}",
                state_setters.join(" and ")
            ),
        ),
        Verdict::SeedDependent { .. } => (
            Bucket::SeedDependent,
            explain::seed_words(investigation).unwrap_or_default(),
        ),
        Verdict::RepeatDependent { count } => (
            Bucket::RepeatDependent,
            format!("passes alone, fails when run {count} times in one process{states}"),
        ),
        _ => return None,
    };
    Some(Classified {
        test: investigation.test.clone(),
        side: None,
        bucket,
        spend: bucket.spend(),
        reason,
        runs,
        failures,
    })
}

/// The command that shows the verdict: the culprits then the test in one process, the
/// test alone with its failing seed, or the repeated run that failed.
fn reproduction(adapter: &dyn Adapter, investigation: &Investigation) -> Option<Vec<String>> {
    let test = investigation.test.clone();
    let ordered = |tests: Vec<String>, seed: Option<u64>| {
        adapter
            .ordered_command(&tests, Arrangement::AsGiven, RunOptions { seed })
            .ok()
    };
    match &investigation.verdict {
        Verdict::OrderDependentVictim {
            polluters: culprits,
        }
        | Verdict::OrderDependentBrittle {
            state_setters: culprits,
        } => {
            let mut tests = culprits.clone();
            tests.push(test);
            ordered(tests, investigation.reproduction_seed)
        }
        Verdict::SeedDependent { failing_seed, .. } => ordered(vec![test], Some(*failing_seed)),
        Verdict::RepeatDependent { count } => adapter
            .repeated_command(
                &test,
                *count,
                RunOptions {
                    seed: investigation.reproduction_seed,
                },
            )
            .ok(),
        _ => None,
    }
}

/// A prober that reports each probe as it ends.
struct Watched<'a, 'b> {
    inner: probe::RunnerProber<'a>,
    on_probe: &'b mut dyn FnMut(&Probe, &Observation),
}

impl driver::Prober for Watched<'_, '_> {
    type Error = RunnerError;

    fn run(&mut self, probe: &Probe) -> Result<Observation, RunnerError> {
        let observed = self.inner.run(probe)?;
        (self.on_probe)(probe, &observed);
        Ok(observed)
    }
}
