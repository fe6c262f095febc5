//! `candor rerun TEST`: one rerun of a known flake, receipt first.
//!
//! The test's latest red execution in the history is judged as `candor triage` would; only
//! a known-flake is rerun. Then, under the ledger's lock, the verdict is taken again
//! against the ledger as it is at that moment and the claim (outcome `pending`) is
//! appended: no line, no rerun, and two reruns started at once cannot both spend the last
//! of a budget. The test runs alone through the runner's adapter, its report is stored as
//! a `rerun` run, and a second line records the outcome. Nothing is edited in place: a
//! candor stopped halfway leaves its pending line, which still counts.

use std::path::PathBuf;

use sha2::{Digest, Sha256};

use super::running::{scratch, store_report};
use super::verdicts::{Judge, Judged, Origin, Red, run_conditions, verdict_event};
use super::{AppError as CliError, Ports};
use crate::cli::settings::{RerunSettings, Workspace};
use crate::events::{Event, RerunEvent, RerunStatus};
use crate::exit_codes;
use crate::history::{HistoryStore, RunRecord, Source};
use crate::ledger::{self, LedgerEntry, LedgerError, LedgerOutcome};
use crate::results::{Failure, Outcome, parse_all};
use crate::runner::{self, RunOptions, RunReport, SeedSupport};
use crate::triage::{BUDGET_EXCEEDED_LABEL, VerdictKind};

/// How many of the test's latest executions are searched for its latest red one.
const SEARCHED_EXECUTIONS: usize = 200;

/// Why no claim was appended: the verdict under the lock, or the ledger itself.
enum Claim {
    Refused(Box<Judged>),
    Ledger(LedgerError),
}

impl From<LedgerError> for Claim {
    fn from(error: LedgerError) -> Self {
        Claim::Ledger(error)
    }
}

/// Reruns `settings.test_id` once if its verdict allows, with its claim in the ledger
/// first; exit 0 when the rerun passed, 1 when it did not or was refused. The history is
/// opened with `open` once the policy is read.
pub fn run(
    settings: &RerunSettings,
    open: impl FnOnce() -> Result<Box<dyn HistoryStore>, CliError>,
    ports: &mut Ports<'_>,
) -> Result<u8, CliError> {
    let repo_root = ports.root;
    let today = ports.clock.today();
    let workspace = &settings.workspace;
    let change = workspace
        .change
        .as_ref()
        .map_err(|why| CliError::BadChange(why.clone()))?;
    let head = workspace.commit.clone().ok_or(CliError::NoCommit)?;
    let judge = Judge::load(repo_root, workspace, settings.policy, true, today)?;
    // The claim is written to the ledger the source names; it must stay in the repository.
    let ledger_path = crate::confine::check_write(repo_root, &judge.config.rerun.ledger)?;
    let mut store = open()?;
    let (red, failing_run) = latest_red(&*store, &settings.test_id)?;
    judge.emit_source(ports);

    let judged = judge.judge(red.clone());
    if !judged.verdict.rerun_allowed() {
        return Ok(refuse(ports, &judged));
    }

    // The runner is chosen and probed before the claim, so that a runner that cannot run
    // costs no budget.
    let runner_config = &judge.config.runner;
    let context = runner::Context::new(repo_root, scratch(repo_root, "rerun")?, ports.executor)
        .with_timeout(Some(runner_config.timeout), runner_config.grace);
    let adapter = runner::adapter(&judge.config.runner, &context)?;
    let seed = match adapter.seed_support() {
        SeedSupport::Controls(_) => Some(settings.seed.unwrap_or_else(crate::runner::pick_seed)),
        SeedSupport::None(_) => None,
    };
    let failure = red.failure.as_ref();
    let claim = LedgerEntry {
        date: today,
        sha: head,
        test_id: red.test_id.clone(),
        fingerprint: judged
            .verdict
            .kind
            .fingerprint()
            .unwrap_or_default()
            .to_owned(),
        first_fail_sha256: failure.map(first_fail_sha256).unwrap_or_default(),
        seed: seed.map(|s| s.to_string()),
        workers: failing_run.run.workers,
        attempts: 1,
        outcome: LedgerOutcome::Pending,
    };
    let claimed = ledger::append_after(&ledger_path, |ledger| {
        let fresh = judge.judge_fresh(ledger, red.clone());
        if !fresh.verdict.rerun_allowed() {
            return Err(Claim::Refused(Box::new(fresh)));
        }
        let attempts = ledger
            .attempts_in_change(&red.test_id, &change.commits)
            .saturating_add(1);
        Ok(vec![LedgerEntry {
            attempts,
            ..claim.clone()
        }])
    });
    let pending = match claimed {
        Ok(mut appended) => appended.pop().unwrap_or(claim),
        Err(Claim::Refused(fresh)) => return Ok(refuse(ports, &fresh)),
        Err(Claim::Ledger(error)) => return Err(error.into()),
    };
    ports.emit(Event::Verdict(verdict_event(&judged)));
    let pending_line = pending.to_line().unwrap_or_default();
    ports.say(format!("claimed: {pending_line}"));

    ports.progress(format!(
        "rerunning {} with {}{}…",
        crate::quote::visible(&red.test_id),
        adapter.kind(),
        seed.map(|s| format!(", seed {s}")).unwrap_or_default()
    ));
    let ran = adapter.run_one(&context, &red.test_id, RunOptions { seed });
    let outcome = match &ran {
        Ok(report) => outcome_of(report, &red.test_id, workspace),
        // The claim stands; its outcome is that the test could not run.
        Err(_) => Outcome::Error,
    };
    let finished = LedgerEntry {
        outcome: LedgerOutcome::Finished(outcome),
        ..pending.clone()
    };
    ledger::append(&ledger_path, std::slice::from_ref(&finished))?;
    let finished_line = finished.to_line().unwrap_or_default();
    let report = match ran {
        Ok(report) => report,
        Err(error) => {
            ports.say(format!("receipt: {finished_line}"));
            return Err(error.into());
        }
    };
    let stored = store_report(&mut *store, workspace, &report, Source::Rerun);
    let logs: Vec<PathBuf> = report.invocations.iter().map(|i| i.log.clone()).collect();
    ports.emit(Event::Rerun(RerunEvent {
        test: red.test_id.clone(),
        status: RerunStatus::Ran,
        verdict: judged.verdict.kind.as_str().to_owned(),
        fingerprint: judged.verdict.kind.fingerprint().map(str::to_owned),
        label: None,
        attempt: Some(pending.attempts),
        seed: pending.seed.clone(),
        outcome: Some(outcome),
        run_id: stored.as_ref().ok().map(|s| s.report.run_id),
        ledger: vec![pending_line, finished_line.clone()],
        logs: logs.clone(),
    }));
    let seed = pending
        .seed
        .as_deref()
        .map(|s| format!(", seed {s}"))
        .unwrap_or_default();
    ports.say(format!(
        "ran: {} with {} (attempt {} of {} for this change{seed}): {outcome}",
        crate::quote::visible(&red.test_id),
        report.runner,
        pending.attempts,
        judge.config.rerun.max_attempts_per_change,
    ));
    ports.say(format!("receipt: {finished_line}"));
    if let Some(log) = logs.first() {
        ports.tell(format!("log: {}", log.display()));
    }
    // The receipt is written; a report the history cannot take is reported, not hidden.
    stored?;
    Ok(if outcome == Outcome::Pass {
        exit_codes::OK
    } else {
        exit_codes::NEGATIVE
    })
}

/// No rerun: the verdict says why (a budget-exceeded verdict also gives its label, first
/// for people); the ledger is unchanged. Exit 1.
fn refuse(ports: &mut Ports<'_>, judged: &Judged) -> u8 {
    let verdict = &judged.verdict;
    if matches!(verdict.kind, VerdictKind::BudgetExceeded { .. }) {
        ports.say(BUDGET_EXCEEDED_LABEL);
    }
    ports.emit(Event::Verdict(verdict_event(judged)));
    ports.emit(Event::Rerun(RerunEvent {
        test: judged.red.test_id.clone(),
        status: RerunStatus::Refused,
        verdict: verdict.kind.as_str().to_owned(),
        fingerprint: verdict.kind.fingerprint().map(str::to_owned),
        label: verdict.label().map(str::to_owned),
        attempt: None,
        seed: None,
        outcome: None,
        run_id: None,
        ledger: Vec::new(),
        logs: Vec::new(),
    }));
    let why = match verdict.kind {
        VerdictKind::Regression => "a regression is never rerun",
        VerdictKind::BudgetExceeded { .. } => "the rerun budget is spent",
        VerdictKind::Expired { .. } => "an expired fingerprint pardons nothing",
        VerdictKind::NotEvidence { .. } => {
            "a quarantined test's known shape says nothing either way; rerunning it proves nothing"
        }
        VerdictKind::Unverified => "only a known flake is rerun; measure this one instead",
        VerdictKind::KnownFlake { .. } => "the verdict changed while the ledger was locked",
    };
    ports.say(format!("refused: {why}; the ledger is unchanged"));
    exit_codes::NEGATIVE
}

/// The test's latest red execution among its last [`SEARCHED_EXECUTIONS`], and its run.
fn latest_red(store: &dyn HistoryStore, test_id: &str) -> Result<(Red, RunRecord), CliError> {
    let not_found = || CliError::NoRedExecution {
        id: test_id.to_owned(),
    };
    let stored = store
        .executions(test_id, SEARCHED_EXECUTIONS)?
        .into_iter()
        .find(|stored| stored.execution.outcome.is_red())
        .ok_or_else(not_found)?;
    let run = store.run(stored.run_id)?.ok_or_else(not_found)?;
    let red = Red {
        test_id: stored.execution.test_id,
        outcome: stored.execution.outcome,
        failure: stored.execution.failure,
        conditions: run_conditions(&run.run),
        origin: Origin::Run(run.id),
    };
    Ok((red, run))
}

/// The ledger's `first_fail_sha256`: sha256 of the failure's full text as the runner
/// printed it (its message when the runner printed no text).
fn first_fail_sha256(failure: &Failure) -> String {
    let text = if failure.text.is_empty() {
        &failure.message
    } else {
        &failure.text
    };
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// The test's outcome in the report; `error` when the report does not hold it (the runner
/// failed before running it: its log says why).
fn outcome_of(report: &RunReport, test_id: &str, workspace: &Workspace) -> Outcome {
    let Ok(file) = fs_err::File::open(&report.report) else {
        return Outcome::Error;
    };
    parse_all(file, &workspace.parse)
        .ok()
        .and_then(|(executions, _)| {
            executions
                .into_iter()
                .find(|execution| execution.test_id == test_id)
        })
        .map_or(Outcome::Error, |execution| execution.outcome)
}
