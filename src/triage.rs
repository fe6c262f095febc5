//! The verdict for one red test: from its tier, its failure against the fingerprints and
//! its rerun budget, one of six verdicts with one line of reason. Pure: everything it
//! needs comes in, nothing is read.
//!
//! Precedence, first rule that applies wins:
//!
//! | # | tier | failure vs fingerprints | budget | verdict |
//! | --- | --- | --- | --- | --- |
//! | 1 | quarantined | exact match, live fingerprint | any | not-evidence |
//! | 2 | any other | exact match, live fingerprint | spent | budget-exceeded |
//! | 3 | any other | exact match, live fingerprint | left | known-flake |
//! | 4 | any | exact match, expired fingerprint only | any | expired |
//! | 5 | trusted | no match | any | regression |
//! | 6 | quarantined | no match | any | regression |
//! | 7 | probation or unlisted | no match, and the history shows it passing at the merge base and failing on the change (one-sided Fisher p ≤ `[compare] alpha`) | any | regression |
//! | 8 | probation or unlisted | no match | any | unverified |
//!
//! Exit codes (`crate::exit_codes::of_red_verdict`): every verdict fails the command
//! except known-flake and not-evidence.
//!
//! Why this order:
//! - A quarantined test's exact known shape is not-evidence whatever the budget (1 before
//!   2). The budget limits reruns, and a quarantined failure is never rerun: a green
//!   would prove as little as the red did, so there is nothing to spend and nothing to
//!   refuse. It never blocks a change, and it is never a reason to touch production code.
//! - An expired fingerprint pardons nothing, in any tier (4 before 5 to 7 and, for a
//!   quarantined test, instead of 1): the shape is no longer known until a human renews
//!   `last_seen`. When a live fingerprint matches too, the live one governs (1 to 3): it
//!   is the renewed claim.
//! - A new shape in a quarantined test is a regression (6), not "more of the same".
//! - A test absent from the reliability file is treated as probation (7, 8), whatever
//!   `default_tier` says: nothing has been measured about it yet.
//! - The history's runs of the test are measurement already made (7): when its runs at
//!   the merge base passed and its runs on the change's own commits failed, so unevenly
//!   that a one-sided Fisher exact test rejects "the change did not raise the failure
//!   rate" at `[compare] alpha` (12 of 12 passing at the base and 4 of 4 failing on the
//!   change: p = 1/1820), the red is a likely regression. Only the merge base's runs
//!   count as the base: later default-branch commits are not what the change was built
//!   on. The history never lowers a verdict: a base that fails too is said in the reason
//!   (unverified, exit 1), never pardoned, since a history an agent wrote could show
//!   anything. Every verdict without a fingerprint says what the history holds.
//!
//! Budget spent means either the test has `budget_entries` reruns in the ledger within
//! `budget_days`, or this change has already run it `max_attempts_per_change` times.

use std::fmt;

use jiff::civil::Date;
use serde::{Deserialize, Serialize};

use crate::exit_codes;
use crate::ledger::BudgetState;
use crate::policy::{Fingerprint, FingerprintMatch, RerunConfig, RunConditions, find_match};
use crate::reliability::ReliabilityFile;
use crate::results::Failure;
use crate::stats::sequential::{Tally, fisher_one_sided};
use crate::stats::tiers::Tier;

/// The label a change gets when a known flake is out of reruns.
pub const BUDGET_EXCEEDED_LABEL: &str = "flake-budget-exceeded";

/// Everything the verdict depends on.
#[derive(Debug, Clone, Copy)]
pub struct TriageInput<'a> {
    /// Canonical test id of the red test.
    pub test_id: &'a str,
    /// Its tier in the reliability file; `None` when the file does not list it.
    pub tier: Option<Tier>,
    /// Its failure; `None` when the runner gave no details (nothing can match then).
    pub failure: Option<&'a Failure>,
    /// The run that produced it.
    pub run: &'a RunConditions,
    /// Every fingerprint, from the merge base's `candor.toml`.
    pub fingerprints: &'a [Fingerprint],
    /// The test's rerun budget use, from the ledger.
    pub budget: BudgetState,
    /// The rerun policy: budget limits and fingerprint expiry.
    pub rerun: &'a RerunConfig,
    /// Today's date, for expiry.
    pub today: Date,
    /// What the history holds about the test, when it was read.
    pub history: Option<&'a HistoryEvidence>,
    /// The level below which the history's evidence calls a regression (`[compare] alpha`).
    pub alpha: f64,
}

/// A test's runs in one part of the history, and how many of them failed (a flaky-pass
/// is a failure: the test failed in that run before its retry passed).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct RunCount {
    /// Runs of the test (skips are not runs).
    pub runs: u32,
    /// Of those, the runs it failed in.
    pub failures: u32,
}

impl RunCount {
    /// Counts one more run.
    pub fn add(&mut self, failed: bool) {
        self.runs = self.runs.saturating_add(1);
        if failed {
            self.failures = self.failures.saturating_add(1);
        }
    }

    fn tally(self) -> Tally {
        Tally {
            runs: self.runs,
            failures: self.failures,
        }
    }
}

/// What the history holds about a red test, read at the edge and handed in.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HistoryEvidence {
    /// HEAD's merge base with the default branch, when known.
    pub merge_base: Option<String>,
    /// The test's runs at the merge base.
    pub at_merge_base: RunCount,
    /// The branch (or `[reliability] branches` patterns) counted as the default branch.
    pub default_branch: Option<String>,
    /// The test's runs on the default branch at commits other than the merge base.
    pub on_default_branch: RunCount,
    /// The test's runs at the change's own commits (after the merge base), this red
    /// included.
    pub on_change: RunCount,
    /// HEAD is the merge base (the default branch itself): there is no change to compare.
    pub head_is_merge_base: bool,
}

impl HistoryEvidence {
    /// The one-sided Fisher p-value for "the change raised the failure rate" from the
    /// merge base's runs and the change's, when both have runs and the change is not the
    /// merge base itself.
    pub fn p_value(&self) -> Option<f64> {
        (self.merge_base.is_some()
            && !self.head_is_merge_base
            && self.at_merge_base.runs > 0
            && self.on_change.runs > 0)
            .then(|| fisher_one_sided(self.at_merge_base.tally(), self.on_change.tally()))
    }

    /// One clause for a reason: `passed 12 of 12 runs at the merge base a1b2c3d; failed 4
    /// of 4 on this change`.
    pub fn describe(&self) -> String {
        let passed = |count: RunCount| {
            format!(
                "passed {} of {} run{}",
                count.runs - count.failures,
                count.runs,
                if count.runs == 1 { "" } else { "s" }
            )
        };
        let mut parts = Vec::new();
        let base = self
            .merge_base
            .as_deref()
            .map(|sha| sha.get(..7).unwrap_or(sha));
        if let Some(base) = base
            && self.at_merge_base.runs > 0
        {
            let which = if self.head_is_merge_base {
                "this commit, the merge base"
            } else {
                "the merge base"
            };
            parts.push(format!("{} at {which} {base}", passed(self.at_merge_base)));
        }
        if let Some(branch) = &self.default_branch
            && self.on_default_branch.runs > 0
        {
            parts.push(format!(
                "{} on {branch} at other commits",
                passed(self.on_default_branch)
            ));
        }
        if parts.is_empty() {
            let where_ = match (base, &self.default_branch) {
                (Some(base), Some(branch)) => format!(" at the merge base {base} or on {branch}"),
                (Some(base), None) => format!(" at the merge base {base}"),
                (None, Some(branch)) => format!(" on {branch}"),
                (None, None) => String::new(),
            };
            parts.push(format!("the history holds no run of it{where_}"));
        }
        if self.on_change.runs > 0 {
            parts.push(format!(
                "failed {} of {} on this change",
                self.on_change.failures, self.on_change.runs
            ));
        }
        parts.join("; ")
    }
}

/// What a red test means.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum VerdictKind {
    /// Real evidence: investigate, do not rerun.
    Regression,
    /// Measure before reasoning: `candor compare` on the branch and the merge base.
    Unverified,
    /// The exact shape of a known flake, budget left: one rerun, ledger line first.
    KnownFlake {
        /// The fingerprint's id.
        fingerprint: String,
    },
    /// The exact shape of a known flake, but its reruns are used up.
    BudgetExceeded {
        /// The fingerprint's id.
        fingerprint: String,
    },
    /// A quarantined test's known shape: says nothing either way.
    NotEvidence {
        /// The fingerprint's id.
        fingerprint: String,
    },
    /// Matches only an expired fingerprint: a regression until a human renews it.
    Expired {
        /// The fingerprint's id.
        fingerprint: String,
    },
}

/// The verdict with its one line of reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// Which verdict.
    #[serde(flatten)]
    pub kind: VerdictKind,
    /// Why, in one line, for the reader of the report.
    pub reason: String,
}

impl VerdictKind {
    /// The stable spelling.
    pub fn as_str(&self) -> &'static str {
        match self {
            VerdictKind::Regression => "regression",
            VerdictKind::Unverified => "unverified",
            VerdictKind::KnownFlake { .. } => "known-flake",
            VerdictKind::BudgetExceeded { .. } => "budget-exceeded",
            VerdictKind::NotEvidence { .. } => "not-evidence",
            VerdictKind::Expired { .. } => "expired",
        }
    }

    /// The fingerprint the verdict rests on, if any.
    pub fn fingerprint(&self) -> Option<&str> {
        match self {
            VerdictKind::Regression | VerdictKind::Unverified => None,
            VerdictKind::KnownFlake { fingerprint }
            | VerdictKind::BudgetExceeded { fingerprint }
            | VerdictKind::NotEvidence { fingerprint }
            | VerdictKind::Expired { fingerprint } => Some(fingerprint),
        }
    }
}

impl Verdict {
    /// Whether the verdict fails the command: every verdict but known-flake and
    /// not-evidence ([`exit_codes::of_red_verdict`]).
    pub fn is_negative(&self) -> bool {
        self.exit_code() != exit_codes::OK
    }

    /// The exit code this verdict alone would give.
    pub fn exit_code(&self) -> u8 {
        exit_codes::of_red_verdict(&self.kind)
    }

    /// Whether one rerun is allowed (after its ledger line is written).
    pub fn rerun_allowed(&self) -> bool {
        matches!(self.kind, VerdictKind::KnownFlake { .. })
    }

    /// The label the change should carry, if any.
    pub fn label(&self) -> Option<&'static str> {
        matches!(self.kind, VerdictKind::BudgetExceeded { .. }).then_some(BUDGET_EXCEEDED_LABEL)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind.fingerprint() {
            Some(id) => write!(f, "{} {id}: {}", self.kind.as_str(), self.reason),
            None => write!(f, "{}: {}", self.kind.as_str(), self.reason),
        }
    }
}

/// The test's tier in the reliability file; `None` when it is not listed.
pub fn tier_of(file: &ReliabilityFile, test_id: &str) -> Option<Tier> {
    file.tests
        .iter()
        .find(|entry| entry.id == test_id)
        .map(|entry| entry.tier)
}

/// Why the budget is spent, or `None` when a rerun is still allowed.
fn budget_spent(budget: BudgetState, rerun: &RerunConfig) -> Option<String> {
    let lines = budget.entries_in_window;
    if lines >= rerun.budget_entries as usize {
        return Some(format!(
            "{lines} reruns of this test in the ledger in the last {} days (budget {})",
            rerun.budget_days, rerun.budget_entries
        ));
    }
    let attempts = budget.attempts_in_change.max(1);
    if attempts >= rerun.max_attempts_per_change {
        return Some(format!(
            "this change has already run it {attempts} times (max_attempts_per_change {})",
            rerun.max_attempts_per_change
        ));
    }
    None
}

/// The verdict for one red test (the table in the module documentation).
pub fn verdict(input: &TriageInput<'_>) -> Verdict {
    let found = find_match(
        input.fingerprints,
        input.test_id,
        input.failure,
        input.run,
        input.today,
        input.rerun.fingerprint_expiry_days,
    );
    let verdict = |kind: VerdictKind, reason: String| Verdict { kind, reason };
    let no_fingerprint = matches!(found, FingerprintMatch::NoneForTest);
    let no_match = match found {
        FingerprintMatch::Exact {
            fingerprint,
            expired: false,
        } => {
            let id = fingerprint.id.clone();
            let shape = format!(
                "matches {id} exactly ({} at {})",
                fingerprint.exception, fingerprint.frame
            );
            if input.tier == Some(Tier::Quarantined) {
                return verdict(
                    VerdictKind::NotEvidence { fingerprint: id },
                    format!(
                        "quarantined, and {shape}: not evidence either way; do not rerun it, and never change production code to make it pass"
                    ),
                );
            }
            if let Some(why) = budget_spent(input.budget, input.rerun) {
                return verdict(
                    VerdictKind::BudgetExceeded { fingerprint: id },
                    format!(
                        "{shape}, but the rerun budget is spent: {why}; no rerun, label the change {BUDGET_EXCEEDED_LABEL}"
                    ),
                );
            }
            return verdict(
                VerdictKind::KnownFlake { fingerprint: id },
                format!(
                    "{shape}: one rerun allowed, and its ledger line comes first (run {} of {} for this change; {} of {} reruns in {} days)",
                    input.budget.attempts_in_change.max(1).saturating_add(1),
                    input.rerun.max_attempts_per_change,
                    input.budget.entries_in_window,
                    input.rerun.budget_entries,
                    input.rerun.budget_days
                ),
            );
        }
        FingerprintMatch::Exact {
            fingerprint,
            expired: true,
        } => {
            return verdict(
                VerdictKind::Expired {
                    fingerprint: fingerprint.id.clone(),
                },
                format!(
                    "matches {} exactly, but it was last seen {}, {} days ago (fingerprint_expiry_days {}): treat as a regression until a human renews it (owner {})",
                    fingerprint.id,
                    fingerprint.last_seen,
                    fingerprint.age_days(input.today),
                    input.rerun.fingerprint_expiry_days,
                    fingerprint.owner
                ),
            );
        }
        FingerprintMatch::NearMiss {
            fingerprint,
            mismatch,
        } => format!(
            "no fingerprint matches; the nearest, {}, has the {}, but {mismatch}",
            fingerprint.id,
            mismatch.matched()
        ),
        FingerprintMatch::NoneForTest => "no fingerprint names this test".to_owned(),
    };
    let history = input
        .history
        .map(|history| format!("; history: {}", history.describe()))
        .unwrap_or_default();
    match input.tier {
        Some(Tier::Trusted) => verdict(
            VerdictKind::Regression,
            format!(
                "trusted test, and {no_match}: real evidence; do not rerun, investigate and report the full failure{history}"
            ),
        ),
        // Without any fingerprint the shape is not known to be new: the quarantine names the
        // test, and only a fingerprint names a flake's shape (a known flake's shape, seen
        // many times on the default branch, read "new" to the agent told to fix it).
        Some(Tier::Quarantined) if no_fingerprint => verdict(
            VerdictKind::Regression,
            format!(
                "quarantined test, but {no_match}: a quarantine pardons only the failure shapes a fingerprint records; if this is the test's known flake, `candor compare` measures it and suggests the `[[fingerprint]]`{history}"
            ),
        ),
        Some(Tier::Quarantined) => verdict(
            VerdictKind::Regression,
            format!(
                "quarantined test, but {no_match}: a new failure shape inside a quarantined test{history}"
            ),
        ),
        Some(Tier::Probation) | None => {
            let tier = if input.tier.is_some() {
                "probation test"
            } else {
                "test not in the reliability file"
            };
            if let Some(history) = input.history
                && let Some(p) = history.p_value()
                && p <= input.alpha
            {
                return verdict(
                    VerdictKind::Regression,
                    format!(
                        "{tier}, and {no_match}; but it {} (one-sided Fisher p = {} <= alpha {}): a likely regression from this change; do not rerun, investigate and report the full failure",
                        history.describe(),
                        human_p(p),
                        input.alpha
                    ),
                );
            }
            verdict(
                VerdictKind::Unverified,
                format!(
                    "{tier}, and {no_match}: measure before you reason, run `candor compare` on the branch and the merge base{history}"
                ),
            )
        }
    }
}

/// `0.014`, or `5.5e-4` below a thousandth.
fn human_p(p: f64) -> String {
    if p >= 0.001 {
        format!("{p:.3}")
    } else {
        format!("{p:.1e}")
    }
}

/// A stored run's conditions as a fingerprint's `conditions` see them. Here, where runs
/// meet fingerprints, so that neither `policy` nor `history` needs the other.
impl From<&crate::history::NewRun> for RunConditions {
    fn from(run: &crate::history::NewRun) -> Self {
        RunConditions {
            ci: Some(run.conditions.ci),
            workers: run.workers,
            runner: run.conditions.runner.clone(),
            os: run.conditions.os.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{FingerprintConditions, MessagePattern};
    use crate::results::Frame;

    const TEST: &str = "tests/pool/test_checkout.py::test_checkout_under_load";

    fn fingerprint() -> Fingerprint {
        Fingerprint {
            id: "FP-007".into(),
            test: TEST.into(),
            exception: "TimeoutError".into(),
            message: MessagePattern::new(r"checkout deadline of \d+ms exceeded").unwrap(),
            frame: "tests/pool/conftest.py:41".into(),
            conditions: FingerprintConditions::default(),
            last_seen: Date::constant(2026, 10, 1),
            owner: "platform".into(),
            line: 1,
        }
    }

    fn failure(exception: &str) -> Failure {
        Failure {
            exception: Some(exception.into()),
            message: "checkout deadline of 250ms exceeded".into(),
            text: String::new(),
            frames: vec![],
            failing_frame: Some(Frame {
                file: "tests/pool/conftest.py".into(),
                line: Some(41),
                function: None,
            }),
        }
    }

    fn judge(tier: Option<Tier>, failure: &Failure) -> Verdict {
        verdict(&TriageInput {
            test_id: TEST,
            tier,
            failure: Some(failure),
            run: &RunConditions::default(),
            fingerprints: &[fingerprint()],
            budget: BudgetState::FRESH,
            rerun: &RerunConfig::default(),
            today: Date::constant(2026, 10, 8),
            history: None,
            alpha: 0.05,
        })
    }

    fn with_history(tier: Option<Tier>, history: &HistoryEvidence) -> Verdict {
        verdict(&TriageInput {
            test_id: TEST,
            tier,
            failure: Some(&failure("KeyError")),
            run: &RunConditions::default(),
            fingerprints: &[fingerprint()],
            budget: BudgetState::FRESH,
            rerun: &RerunConfig::default(),
            today: Date::constant(2026, 10, 8),
            history: Some(history),
            alpha: 0.05,
        })
    }

    fn evidence(base: (u32, u32), change: (u32, u32)) -> HistoryEvidence {
        HistoryEvidence {
            merge_base: Some("a1b2c3d4e5f6".into()),
            at_merge_base: RunCount {
                runs: base.0,
                failures: base.1,
            },
            default_branch: Some("main".into()),
            on_default_branch: RunCount::default(),
            on_change: RunCount {
                runs: change.0,
                failures: change.1,
            },
            head_is_merge_base: false,
        }
    }

    /// Issue 12 item 4: passing 12 of 12 at the merge base and failing 4 of 4 on the
    /// change is a likely regression, and the reason says so.
    #[test]
    fn a_base_that_passed_and_a_change_that_fails_is_a_likely_regression() {
        let judged = with_history(None, &evidence((12, 0), (4, 4)));
        assert_eq!(judged.kind, VerdictKind::Regression, "{judged}");
        assert!(
            judged.reason.contains(
                "passed 12 of 12 runs at the merge base a1b2c3d; failed 4 of 4 on this change"
            ),
            "{}",
            judged.reason
        );
        assert_eq!(judged.exit_code(), exit_codes::NEGATIVE);
    }

    #[test]
    fn thin_or_shared_evidence_stays_unverified_and_still_fails_the_command() {
        // One pass against one failure: p = 0.5, nothing learned but the counts.
        let thin = with_history(Some(Tier::Probation), &evidence((1, 0), (1, 1)));
        assert_eq!(thin.kind, VerdictKind::Unverified);
        assert!(
            thin.reason.contains("passed 1 of 1 run at the merge base"),
            "{}",
            thin.reason
        );
        // Failing at the base too is said, and never lowers the verdict to green.
        let both = with_history(None, &evidence((4, 4), (4, 4)));
        assert_eq!(both.kind, VerdictKind::Unverified);
        assert!(
            both.reason.contains("passed 0 of 4 runs at the merge base"),
            "{}",
            both.reason
        );
        assert_eq!(both.exit_code(), exit_codes::NEGATIVE);
        // No merge base known: no comparison, whatever the counts.
        let mut unknown = evidence((12, 0), (4, 4));
        unknown.merge_base = None;
        assert_eq!(with_history(None, &unknown).kind, VerdictKind::Unverified);
        // An empty history says so.
        let empty = with_history(None, &evidence((0, 0), (1, 1)));
        assert!(
            empty
                .reason
                .contains("the history holds no run of it at the merge base a1b2c3d or on main"),
            "{}",
            empty.reason
        );
    }

    #[test]
    fn history_never_touches_a_fingerprinted_verdict() {
        let history = evidence((12, 0), (4, 4));
        let flake = verdict(&TriageInput {
            test_id: TEST,
            tier: Some(Tier::Quarantined),
            failure: Some(&failure("TimeoutError")),
            run: &RunConditions::default(),
            fingerprints: &[fingerprint()],
            budget: BudgetState::FRESH,
            rerun: &RerunConfig::default(),
            today: Date::constant(2026, 10, 8),
            history: Some(&history),
            alpha: 0.05,
        });
        assert_eq!(flake.kind.as_str(), "not-evidence");
    }

    /// A quarantined test's red with no fingerprint for the test is a regression, but its
    /// shape is not "new": nothing records any shape of it (helper trial, 2026-12-04: a
    /// flake quarantined after eight reds on main read "a new failure shape").
    #[test]
    fn a_quarantined_test_without_a_fingerprint_is_not_said_to_fail_in_a_new_shape() {
        let timeout = failure("TimeoutError");
        let run = RunConditions::default();
        let rerun = RerunConfig::default();
        let input = |fingerprints| TriageInput {
            test_id: TEST,
            tier: Some(Tier::Quarantined),
            failure: Some(&timeout),
            run: &run,
            fingerprints,
            budget: BudgetState::FRESH,
            rerun: &rerun,
            today: Date::constant(2026, 10, 8),
            history: None,
            alpha: 0.05,
        };
        let unprinted = verdict(&input(&[]));
        assert_eq!(unprinted.kind, VerdictKind::Regression);
        assert!(
            !unprinted.reason.contains("new failure shape"),
            "{}",
            unprinted.reason
        );
        assert!(
            unprinted
                .reason
                .contains("a quarantine pardons only the failure shapes a fingerprint records"),
            "{}",
            unprinted.reason
        );
        let attribute_error = failure("AttributeError");
        let fingerprints = [fingerprint()];
        let missed = verdict(&TriageInput {
            failure: Some(&attribute_error),
            ..input(&fingerprints)
        });
        assert!(
            missed
                .reason
                .contains("a new failure shape inside a quarantined test"),
            "{}",
            missed.reason
        );
    }

    #[test]
    fn reasons_name_the_fingerprint_and_the_field_that_missed() {
        let miss = judge(Some(Tier::Trusted), &failure("AttributeError"));
        assert_eq!(miss.kind, VerdictKind::Regression);
        assert!(
            miss.reason
                .contains("FP-007, has the same test, but AttributeError is not the fingerprint's TimeoutError"),
            "{}",
            miss.reason
        );
        let flake = judge(Some(Tier::Trusted), &failure("TimeoutError"));
        assert_eq!(
            flake.to_string().split(':').next(),
            Some("known-flake FP-007")
        );
        assert!(flake.reason.contains("run 2 of 2"), "{}", flake.reason);
        assert!(flake.rerun_allowed());
        assert!(!flake.is_negative());
    }

    #[test]
    fn serializes_with_kebab_case_names_and_round_trips() {
        let flake = judge(None, &failure("TimeoutError"));
        let json = serde_json::to_value(&flake).unwrap();
        assert_eq!(json["verdict"], "known-flake");
        assert_eq!(json["fingerprint"], "FP-007");
        let back: Verdict = serde_json::from_value(json).unwrap();
        assert_eq!(back, flake);
        let unverified = judge(None, &failure("KeyError"));
        let json = serde_json::to_value(&unverified).unwrap();
        assert_eq!(json["verdict"], "unverified");
        assert!(json.get("fingerprint").is_none());
    }

    #[test]
    fn tier_lookup_reads_the_reliability_file() {
        let file = ReliabilityFile::parse(
            &format!("tests:\n  - id: {TEST}\n    tier: quarantined\n"),
            std::path::Path::new("r.yaml"),
        )
        .unwrap();
        assert_eq!(tier_of(&file, TEST), Some(Tier::Quarantined));
        assert_eq!(tier_of(&file, "other"), None);
    }
}
