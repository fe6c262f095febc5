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
//! | 7 | probation or unlisted | no match | any | unverified |
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
//! - A test absent from the reliability file is treated as probation (7), whatever
//!   `default_tier` says: nothing has been measured about it yet.
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
    /// Regression, expired and budget-exceeded fail the command (exit 1).
    pub fn is_negative(&self) -> bool {
        matches!(
            self.kind,
            VerdictKind::Regression
                | VerdictKind::Expired { .. }
                | VerdictKind::BudgetExceeded { .. }
        )
    }

    /// The exit code this verdict alone would give.
    pub fn exit_code(&self) -> u8 {
        if self.is_negative() {
            exit_codes::NEGATIVE
        } else {
            exit_codes::OK
        }
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
    match input.tier {
        Some(Tier::Trusted) => verdict(
            VerdictKind::Regression,
            format!(
                "trusted test, and {no_match}: real evidence; do not rerun, investigate and report the full failure"
            ),
        ),
        Some(Tier::Quarantined) => verdict(
            VerdictKind::Regression,
            format!(
                "quarantined test, but {no_match}: a new failure shape inside a quarantined test"
            ),
        ),
        Some(Tier::Probation) | None => {
            let tier = if input.tier.is_some() {
                "probation test"
            } else {
                "test not in the reliability file"
            };
            verdict(
                VerdictKind::Unverified,
                format!(
                    "{tier}, and {no_match}: measure before you reason, run `candor compare` on the branch and the merge base"
                ),
            )
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
        })
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
