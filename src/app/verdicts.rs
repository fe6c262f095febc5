//! What `triage`, `test` and `rerun` share: the policy a red test is judged under
//! (candor.toml, the reliability file, the ledger, the change and today), the conditions
//! of the run that produced it, and the events a verdict is told by. The verdict itself
//! is `crate::triage`'s.

use std::path::{Path, PathBuf};

use jiff::civil::Date;

use super::AppError as CliError;
use super::{Ports, short};
use crate::cli::settings::{DefaultBranch, PolicyChoice, Workspace};
use crate::events::{Event, PolicyEvent};
use crate::exit_codes;
use crate::git::Git;
use crate::history::{HistoryStore, NewRun};
use crate::ledger::Ledger;
use crate::policy::PolicySource;
use crate::policy::source::{differences, with_appended};
use crate::policy::{Config, RunConditions};
use crate::reliability::{BranchSelection, ReliabilityFile};
use crate::results::{Failure, Outcome};
use crate::stats::tiers::Tier;
use crate::triage::{HistoryEvidence, TriageInput, Verdict, VerdictKind, tier_of, verdict};

/// Differences between the work tree's policy and the one used that are printed one by
/// one; the rest are counted.
const POLICY_DIFFERENCES_SHOWN: usize = 10;
/// Everything a verdict depends on besides the red test itself.
pub struct Judge {
    /// `candor.toml`, from the policy source.
    pub config: Config,
    reliability: ReliabilityFile,
    /// The source's ledger: its lines always count, whatever the work tree's file says.
    base_ledger: Ledger,
    /// `base_ledger` with the work tree's appended lines: what budgets count.
    ledger: Ledger,
    change: Vec<String>,
    today: Date,
    /// Where the policy was read, and why there.
    pub source: ResolvedSource,
}

/// Where the policy was read, and why there (docs/configuration.md, "Where policy is
/// read").
#[derive(Debug, Clone)]
pub struct ResolvedSource {
    /// The source.
    pub source: PolicySource,
    /// `base`, `head` or `worktree`.
    pub kind: &'static str,
    /// Why this source, for people.
    pub reason: String,
    /// Where the work tree's policy departs from the source's (empty when the source is
    /// the work tree).
    pub differences: Vec<String>,
}

/// Which source `choice` means in this repository. `rerun` refuses the work tree, and a
/// repository whose HEAD has no merge base (nothing tells the change's commits from the
/// base's).
pub(crate) fn resolve_source(
    repo_root: &Path,
    workspace: &Workspace,
    choice: PolicyChoice,
    rerun: bool,
) -> Result<ResolvedSource, CliError> {
    let resolved = |source, kind, reason: String| ResolvedSource {
        source,
        kind,
        reason,
        differences: Vec::new(),
    };
    let root = repo_root.to_owned();
    if choice == PolicyChoice::WorkTree {
        if rerun {
            return Err(CliError::RerunWorktreePolicy);
        }
        return Ok(resolved(
            PolicySource::WorkTree { root },
            "worktree",
            "the work tree (--policy worktree), which the change may have edited".to_owned(),
        ));
    }
    // The merge base with the default branch, never a commit the caller names while there
    // is one: `rerun --change HEAD` would otherwise read the change's own policy.
    if let Some(base) = &workspace.merge_base {
        // Which branch the merge base was taken with, so that this and `candor tests`
        // ("counted … on main (the default branch: origin/main, …)") visibly name one base.
        let with = workspace
            .default_branch
            .as_ref()
            .map(|branch| format!(" with {}", branch.described()))
            .unwrap_or_default();
        let reason = format!(
            "the merge base {}{with} (candor.toml, fingerprints, tiers, freezes, the ledger's past lines)",
            short(base, 12)
        );
        return Ok(resolved(
            PolicySource::Commit {
                root,
                commit: base.clone(),
            },
            "base",
            reason,
        ));
    }
    // No default branch to take it with: `rerun --change ID` names the base itself.
    if let Some(base) = workspace.change.as_ref().ok().and_then(|c| c.base.clone()) {
        let reason = format!(
            "commit {} named by --change: there is no merge base with a default branch",
            short(&base, 12)
        );
        return Ok(resolved(
            PolicySource::Commit { root, commit: base },
            "base",
            reason,
        ));
    }
    match Git::new(repo_root).head_sha()? {
        Some(_) if rerun => Err(CliError::NoPolicyBase(
            "HEAD shares no history with the default branch, or there is no default branch (origin/HEAD, main, master)".to_owned(),
        )),
        Some(head) => {
            let reason = format!(
                "HEAD {}: there is no merge base with a default branch, so the change's own commits are part of this policy",
                short(&head, 12)
            );
            Ok(resolved(
                PolicySource::Commit { root, commit: head },
                "head",
                reason,
            ))
        }
        None => Ok(resolved(
            PolicySource::WorkTree { root },
            "worktree",
            "the work tree: this is not a git repository with a commit".to_owned(),
        )),
    }
}

impl Judge {
    /// Reads candor.toml, the reliability file and the ledger from where `choice` says
    /// (the merge base by default), and notes where the work tree's policy differs.
    pub fn load(
        repo_root: &Path,
        workspace: &Workspace,
        choice: PolicyChoice,
        rerun: bool,
        today: Date,
    ) -> Result<Judge, CliError> {
        let mut source = resolve_source(repo_root, workspace, choice, rerun)?;
        let policy = source.source.load()?;
        let work_tree = PolicySource::WorkTree {
            root: repo_root.to_owned(),
        };
        let (base_ledger, ledger) = if source.source == work_tree {
            (Ledger::default(), policy.ledger.clone())
        } else {
            match work_tree.load() {
                Ok(work) => source.differences = differences(&policy, &work),
                Err(error) => source
                    .differences
                    .push(format!("the work tree's policy cannot be read: {error}")),
            }
            // Reruns append to the work tree's file at the source's `[rerun] ledger`.
            let appended = Ledger::load(&repo_root.join(&policy.config.rerun.ledger))?;
            let merged = with_appended(&policy.ledger, &appended);
            (policy.ledger, merged)
        };
        Ok(Judge {
            config: policy.config,
            reliability: policy.reliability,
            base_ledger,
            ledger,
            change: workspace.change_commits().to_vec(),
            today,
            source,
        })
    }

    /// Says where the policy was read (the `policy` event; a note for people) and warns
    /// about each way the work tree's policy differs from it.
    pub fn emit_source(&self, ports: &mut Ports<'_>) {
        let source = &self.source;
        let commit = match &source.source {
            PolicySource::Commit { commit, .. } => Some(commit.clone()),
            PolicySource::WorkTree { .. } => None,
        };
        ports.emit(Event::Policy(PolicyEvent {
            source: source.kind.to_owned(),
            commit,
            reason: source.reason.clone(),
            differences: source.differences.clone(),
        }));
        // A reliability file committed for the first time differs in every test's tier:
        // 62,435 warnings in one trial on pypa/packaging. The first few say what kind of
        // difference it is; the event holds every one.
        for difference in source.differences.iter().take(POLICY_DIFFERENCES_SHOWN) {
            ports.warning(format!(
                "the work tree's policy differs from {}'s and is not used (--policy worktree uses it): {}",
                source.source.describe(),
                crate::quote::visible(difference)
            ));
        }
        let more = source
            .differences
            .len()
            .saturating_sub(POLICY_DIFFERENCES_SHOWN);
        if more > 0 {
            ports.warning(format!(
                "… and {more} more difference(s) from {}'s policy (`--format json` lists every one in the `policy` event)",
                source.source.describe()
            ));
        }
    }

    /// The verdict for `red` with the ledger as read.
    pub fn judge(&self, red: Red) -> Judged {
        self.judged(&self.ledger, red, None)
    }

    /// The verdict for `red` with the ledger as read and what `history` holds about it.
    pub fn judge_with(&self, red: Red, history: &HistoryLookup<'_>) -> Result<Judged, CliError> {
        let evidence = history.evidence(&red)?;
        Ok(self.judged(&self.ledger, red, Some(evidence)))
    }

    /// How to read the history's evidence about a red test in `workspace`.
    pub fn history<'s>(
        &self,
        store: &'s dyn HistoryStore,
        workspace: &Workspace,
    ) -> HistoryLookup<'s> {
        let merge_base = workspace.merge_base.clone();
        let change = self
            .change
            .iter()
            .filter(|commit| merge_base.as_deref() != Some(commit.as_str()))
            .cloned()
            .collect();
        HistoryLookup {
            store,
            merge_base,
            change,
            selection: DefaultBranch::selection(workspace.default_branch.as_ref(), &self.config),
            limit: self.config.reliability.tiers.window_runs,
        }
    }

    /// The verdict for `red` against the work tree's ledger as read under its lock, with
    /// the source's lines added back.
    pub fn judge_fresh(&self, work_ledger: &Ledger, red: Red) -> Judged {
        self.judged(&with_appended(&self.base_ledger, work_ledger), red, None)
    }

    fn judged(&self, ledger: &Ledger, red: Red, history: Option<HistoryEvidence>) -> Judged {
        let tier = tier_of(&self.reliability, &red.test_id);
        let budget = ledger.budget(&red.test_id, self.today, &self.change, &self.config.rerun);
        let verdict = verdict(&TriageInput {
            test_id: &red.test_id,
            tier,
            failure: red.failure.as_ref(),
            run: &red.conditions,
            fingerprints: &self.config.fingerprints,
            budget,
            rerun: &self.config.rerun,
            today: self.today,
            history: history.as_ref(),
            alpha: self.config.compare.alpha,
        });
        Judged {
            red,
            tier,
            verdict,
            history,
        }
    }
}

/// Where a red test's history is read: its runs at the merge base, on the change's own
/// commits and on the default branch, among its last `[reliability] window_runs`
/// executions.
pub struct HistoryLookup<'s> {
    store: &'s dyn HistoryStore,
    merge_base: Option<String>,
    /// The change's commits after the merge base.
    change: Vec<String>,
    selection: BranchSelection,
    limit: usize,
}

impl HistoryLookup<'_> {
    /// What the history holds about `red`. A red read from a result file counts as one
    /// failing run on the change when the history holds none (the file may be stored
    /// too: it is not counted twice).
    pub fn evidence(&self, red: &Red) -> Result<HistoryEvidence, CliError> {
        let default_branch =
            (!self.selection.is_every_branch()).then(|| self.selection.patterns().join(", "));
        let mut evidence = HistoryEvidence {
            merge_base: self.merge_base.clone(),
            default_branch,
            head_is_merge_base: self.merge_base.is_some() && self.change.is_empty(),
            ..HistoryEvidence::default()
        };
        let same = |stored: &str, full: &str| {
            stored == full || (stored.len() >= 7 && full.starts_with(stored))
        };
        for stored in self.store.executions(&red.test_id, self.limit)? {
            let outcome = stored.execution.outcome;
            if outcome == Outcome::Skip {
                continue;
            }
            let failed = outcome.failed_at_least_once();
            let commit = stored.commit.as_deref();
            if let (Some(commit), Some(base)) = (commit, self.merge_base.as_deref())
                && same(commit, base)
            {
                evidence.at_merge_base.add(failed);
            } else if let Some(commit) = commit
                && self.change.iter().any(|full| same(commit, full))
            {
                evidence.on_change.add(failed);
            } else if !self.selection.is_every_branch()
                && self.selection.counts_run(stored.branch.as_deref(), commit)
            {
                evidence.on_default_branch.add(failed);
            }
        }
        if matches!(red.origin, Origin::File(_))
            && !evidence.head_is_merge_base
            && evidence.on_change.failures == 0
        {
            evidence.on_change.add(true);
        }
        Ok(evidence)
    }
}

/// A red test to judge.
#[derive(Debug, Clone)]
pub struct Red {
    /// Canonical id.
    pub test_id: String,
    /// Fail or error.
    pub outcome: Outcome,
    /// What the runner said, when it did.
    pub failure: Option<Failure>,
    /// The run it went red in.
    pub conditions: RunConditions,
    /// Where it was read.
    pub origin: Origin,
}

/// Where a red test was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A result file, not stored.
    File(PathBuf),
    /// A run in the history.
    Run(i64),
}

/// A red test and its verdict.
#[derive(Debug, Clone)]
pub struct Judged {
    /// The test.
    pub red: Red,
    /// Its tier; `None` when the reliability file does not list it.
    pub tier: Option<Tier>,
    /// The verdict.
    pub verdict: Verdict,
    /// What the history held about the test, when it was read.
    pub history: Option<HistoryEvidence>,
}

/// The conditions fingerprints see for a stored run. A run stored by `candor ingest`
/// names no runner; the tool that wrote its file stands in for it.
pub fn run_conditions(run: &NewRun) -> RunConditions {
    let mut conditions = RunConditions::from(run);
    if conditions.runner.is_none() {
        conditions.runner = run.producer.as_deref().map(runner_name);
    }
    conditions
}

/// The `runner` condition's spelling for the tool that wrote a result file: candor's own
/// runner names where one fits (`pytest`, `cargo`, `nextest`, `go`), else the tool's name.
pub fn runner_name(producer: &str) -> String {
    match producer {
        "libtest" | "cargo2junit" => "cargo",
        "go test" | "go-junit-report" | "gotestsum" => "go",
        other => other,
    }
    .to_owned()
}

/// The largest of the verdicts' exit codes ([`exit_codes::of_red_verdict`]): 1 when any
/// red is not a known-flake or not-evidence, else 0.
pub fn exit_code(judged: &[Judged]) -> u8 {
    judged
        .iter()
        .map(|j| j.verdict.exit_code())
        .max()
        .unwrap_or(exit_codes::OK)
}

/// The `verdict` event of one judged red test.
pub fn verdict_event(judged: &Judged) -> crate::events::VerdictEvent {
    let red = &judged.red;
    let verdict = &judged.verdict;
    let failure = red.failure.as_ref();
    let (file, run_id) = match &red.origin {
        Origin::File(path) => (Some(path.display().to_string()), None),
        Origin::Run(id) => (None, Some(*id)),
    };
    crate::events::VerdictEvent {
        test: red.test_id.clone(),
        verdict: verdict.kind.as_str().to_owned(),
        tier: judged.tier,
        fingerprint: verdict.kind.fingerprint().map(str::to_owned),
        signature: failure.map(Failure::signature),
        reason: verdict.reason.clone(),
        outcome: red.outcome,
        file,
        run_id,
        rerun_allowed: verdict.rerun_allowed(),
        label: verdict.label().map(str::to_owned),
        failure: failure.map(|f| crate::events::FailureEvent {
            exception: f.exception.clone(),
            message: f.message.clone(),
            failing_frame: f
                .failing_frame
                .as_ref()
                .map(crate::results::Frame::location),
            text: f.text.clone(),
            failing_frame_shown: f.failing_frame.as_ref().map(ToString::to_string),
        }),
        history: judged
            .history
            .as_ref()
            .map(|evidence| crate::events::HistoryEvent {
                evidence: evidence.clone(),
                p_value: evidence.p_value(),
            }),
    }
}

/// The `triage-summary` event: the count of each verdict.
pub fn summary(judged: &[Judged]) -> crate::events::TriageSummary {
    let mut summary = crate::events::TriageSummary {
        red: judged.len(),
        ..crate::events::TriageSummary::default()
    };
    for j in judged {
        let count = match j.verdict.kind {
            VerdictKind::Regression => &mut summary.regression,
            VerdictKind::Unverified => &mut summary.unverified,
            VerdictKind::KnownFlake { .. } => &mut summary.known_flake,
            VerdictKind::BudgetExceeded { .. } => &mut summary.budget_exceeded,
            VerdictKind::NotEvidence { .. } => &mut summary.not_evidence,
            VerdictKind::Expired { .. } => &mut summary.expired,
        };
        *count += 1;
    }
    summary
}

/// Every verdict, then the summary.
pub fn emit_verdicts(ports: &mut Ports<'_>, judged: &[Judged]) {
    for one in judged {
        ports.emit(Event::Verdict(verdict_event(one)));
    }
    ports.emit(Event::TriageSummary(summary(judged)));
}
