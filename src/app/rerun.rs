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
        failure: stored.execution.failure.map(|failure| *failure),
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

#[cfg(test)]
mod tests {
    //! Issue #13 item 4: the rerun protocol in milliseconds, with the fake executor and a
    //! temp git repository (the policy is read from a commit), no pytest.

    use std::path::Path;
    use std::process::Command;
    use std::time::Duration;

    use super::*;
    use crate::app::FixedClock;
    use crate::cli::settings::{Change, PolicyChoice};
    use crate::events::Collected;
    use crate::history::{NewRun, SqliteStore};
    use crate::runner::fake::{FakeExecutor, FakeRun};

    const TEST: &str = "tests/test_webhook.py::test_payment_webhook";
    /// A pytest JUnit report of the webhook test failing with its fingerprinted timeout,
    /// as pytest wrote it for tests/fixtures/triage/pytest.
    const RED: &str = include_str!("rerun_red.xml");

    fn git(dir: &Path, args: &[&str]) -> String {
        let output = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git runs");
        assert!(output.status.success(), "git {args:?}: {output:?}");
        String::from_utf8(output.stdout)
            .expect("utf-8")
            .trim()
            .to_owned()
    }

    /// A repository whose committed candor.toml runs a fake `command` runner and
    /// fingerprints the timeout, its red run stored, and the settings of `rerun TEST`.
    struct Repo {
        dir: tempfile::TempDir,
        settings: RerunSettings,
    }

    impl Repo {
        fn new() -> Repo {
            let dir = tempfile::tempdir().expect("a temp dir");
            let root = dir.path();
            git(root, &["init", "-q", "-b", "main"]);
            std::fs::write(
                root.join("candor.toml"),
                format!(
                    "[runner]\nkind = \"command\"\ncommand = [\"fake-runner\", \"{{test}}\", \"{{report}}\"]\n\n[[fingerprint]]\nid = \"FP-001\"\ntest = \"{TEST}\"\nexception = \"TimeoutError\"\nmessage_regex = 'Timed out after \\d+(\\.\\d+)?s waiting for webhook stub on port \\d+'\nframe = \"tests/test_webhook.py:7\"\nconditions = {{ runner = \"pytest\" }}\nlast_seen = 2026-10-01\nowner = \"@payments-oncall\"\n"
                ),
            )
            .expect("write candor.toml");
            git(root, &["add", "candor.toml"]);
            git(root, &["commit", "-q", "-m", "policy"]);
            let head = git(root, &["rev-parse", "HEAD"]);
            let workspace = Workspace {
                ci: crate::ci_env::CiEnv::default(),
                commit: Some(head.clone()),
                branch: Some("main".into()),
                merge_base: Some(head.clone()),
                default_branch: None,
                change: Ok(Change {
                    base: Some(head.clone()),
                    commits: vec![head.clone()],
                }),
                parse: crate::results::ParseOptions {
                    repo_root: Some(root.display().to_string()),
                    ..crate::results::ParseOptions::default()
                },
            };
            let red = root.join("red.xml");
            std::fs::write(&red, RED).expect("write the report");
            let mut store = SqliteStore::open(root.join("history.db"), Duration::from_secs(5))
                .expect("a history");
            let run = NewRun {
                commit: Some(head),
                branch: Some("main".into()),
                merge_base: None,
                started_at: jiff::Timestamp::UNIX_EPOCH,
                source: Source::Local,
                ci_provider: None,
                job: None,
                ci_run: crate::history::CiRun::default(),
                workers: Some(4),
                seed: None,
                conditions: crate::history::Conditions::default(),
                format: None,
                producer: None,
                source_path: None,
            };
            crate::ingest::ingest_file(&mut store, &red, &run, &workspace.parse)
                .expect("the red run is stored");
            Repo {
                dir,
                settings: RerunSettings {
                    test_id: TEST.to_owned(),
                    policy: PolicyChoice::Base,
                    seed: None,
                    workspace,
                },
            }
        }

        fn root(&self) -> &Path {
            self.dir.path()
        }

        fn open(&self) -> Result<Box<dyn HistoryStore>, CliError> {
            Ok(Box::new(SqliteStore::open(
                self.root().join("history.db"),
                Duration::from_secs(5),
            )?))
        }

        fn ledger(&self) -> String {
            std::fs::read_to_string(self.root().join(".flake-ledger.tsv")).unwrap_or_default()
        }

        /// `candor rerun TEST` on 2026-10-07 with `executor`; `before` runs once the
        /// policy is read and before the claim (another candor at work).
        fn rerun(
            &self,
            executor: &FakeExecutor,
            before: impl FnOnce(&Path),
        ) -> (Result<u8, CliError>, Collected) {
            let clock = FixedClock {
                now: jiff::Timestamp::UNIX_EPOCH,
                today: jiff::civil::date(2026, 10, 7),
            };
            let mut events = Collected::default();
            let mut ports = Ports {
                root: self.root(),
                executor,
                clock: &clock,
                events: &mut events,
            };
            let code = run(
                &self.settings,
                || {
                    before(self.root());
                    self.open()
                },
                &mut ports,
            );
            (code, events)
        }
    }

    fn junit(outcome: &str) -> String {
        let body = if outcome == "pass" {
            String::new()
        } else {
            "<failure message=\"boom\">boom</failure>".to_owned()
        };
        format!(
            "<?xml version=\"1.0\"?><testsuite name=\"pytest\" tests=\"1\"><testcase classname=\"tests.test_webhook\" name=\"test_payment_webhook\" file=\"tests/test_webhook.py\" time=\"0.1\">{body}</testcase></testsuite>"
        )
    }

    #[test]
    fn a_known_flake_is_rerun_with_its_pending_line_then_its_outcome_line() {
        let repo = Repo::new();
        let executor = FakeExecutor::new([FakeRun::exits(0).with_report(junit("pass"))]);
        let (code, events) = repo.rerun(&executor, |_| {});
        assert_eq!(code.expect("the rerun runs"), exit_codes::OK);
        let Some(Event::Rerun(rerun)) = events.of_kind("rerun").first().copied() else {
            panic!("one rerun event: {:?}", events.lines());
        };
        assert_eq!(rerun.status, RerunStatus::Ran);
        assert_eq!(rerun.verdict, "known-flake");
        assert_eq!(rerun.outcome, Some(Outcome::Pass));
        // The red run at HEAD was the change's first attempt.
        assert_eq!(rerun.attempt, Some(2));
        // The claim was written before the run, the outcome after; both are in the file.
        let ledger = repo.ledger();
        let lines: Vec<&str> = ledger.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(lines.len(), 2, "{ledger}");
        assert!(
            lines[0].ends_with("\tpending") && lines[1].ends_with("\tpass"),
            "{ledger}"
        );
        assert_eq!(rerun.ledger, lines);
        // One runner process, for this test only.
        let ran = executor.invocations();
        assert_eq!(ran.len(), 1);
        assert!(ran[0].argv.iter().any(|a| a == TEST), "{:?}", ran[0].argv);
        // The claim is said before the run, the receipt after.
        let kinds: Vec<&str> = events.events.iter().map(Event::kind).collect();
        let claimed = events
            .events
            .iter()
            .position(|e| matches!(e, Event::Text(t) if t.message.starts_with("claimed: ")));
        let progress = kinds.iter().position(|k| *k == "progress");
        assert!(claimed < progress && claimed.is_some(), "{kinds:?}");
    }

    /// Issue #13 item 4: a budget spent between the first judgement and the claim (by a
    /// rerun another candor made meanwhile) is refused under the ledger's lock, and the
    /// ledger keeps only that other rerun's line.
    #[test]
    fn a_budget_spent_before_the_lock_is_refused_under_it_with_the_ledger_unchanged() {
        let repo = Repo::new();
        let head = repo.settings.workspace.commit.clone().expect("a head");
        let executor = FakeExecutor::new([]);
        let other = |root: &Path| {
            // Two attempts of this change already: max_attempts_per_change is 2.
            let line = format!(
                "{}\n2026-10-07\t{head}\t{TEST}\tFP-001\t{}\t-\t4\t2\tpass\n",
                crate::ledger::HEADER,
                "a".repeat(64)
            );
            std::fs::write(root.join(".flake-ledger.tsv"), line).expect("write the ledger");
        };
        let (code, events) = repo.rerun(&executor, other);
        assert_eq!(code.expect("a refusal is a result"), exit_codes::NEGATIVE);
        let Some(Event::Rerun(rerun)) = events.of_kind("rerun").first().copied() else {
            panic!("one rerun event: {:?}", events.lines());
        };
        assert_eq!(rerun.status, RerunStatus::Refused);
        assert_eq!(rerun.verdict, "budget-exceeded");
        assert_eq!(rerun.label.as_deref(), Some(BUDGET_EXCEEDED_LABEL));
        assert!(rerun.ledger.is_empty() && rerun.outcome.is_none());
        assert_eq!(
            repo.ledger().lines().count(),
            2,
            "the header and the other rerun's line"
        );
        assert!(executor.invocations().is_empty(), "nothing ran");
        let refused = events
            .events
            .iter()
            .any(|e| matches!(e, Event::Text(t) if t.message == "refused: the rerun budget is spent; the ledger is unchanged"));
        assert!(refused, "{:?}", events.lines());
    }

    #[test]
    fn a_failing_rerun_records_its_outcome_and_exits_1() {
        let repo = Repo::new();
        let executor = FakeExecutor::new([FakeRun::exits(1).with_report(junit("fail"))]);
        let (code, events) = repo.rerun(&executor, |_| {});
        assert_eq!(code.expect("the rerun runs"), exit_codes::NEGATIVE);
        let ledger = repo.ledger();
        assert!(
            ledger.lines().last().is_some_and(|l| l.ends_with("\tfail")),
            "{ledger}"
        );
        assert_eq!(events.of_kind("rerun").len(), 1);
    }
}
