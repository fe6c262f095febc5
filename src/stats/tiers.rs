//! The reliability tier state machine: how far a test's failure counts as evidence, moved
//! at most one step per evaluation from the previous state and the rolling window.
//!
//! The rule, with a worked example, is in `docs/reliability.md`. In short: over budget
//! (failures/runs > flake_budget on at least `min_runs` runs gathered since the last
//! change) drops one tier; a full window of runs since the last change inside the budget
//! climbs one tier; nothing is trusted on fewer than `min_runs` runs.

use std::fmt;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::window::WindowEntry;

/// How far a test's failure counts as evidence. Ordered: quarantined < probation < trusted.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Its failures are not evidence; its known failure shapes are pardoned, new ones are
    /// still regressions.
    Quarantined,
    /// Its failures must be measured (branch against merge base) before anyone reasons.
    Probation,
    /// Its failures are evidence: investigate, do not rerun.
    Trusted,
}

impl Tier {
    /// Every tier, lowest first.
    pub const ALL: [Tier; 3] = [Tier::Quarantined, Tier::Probation, Tier::Trusted];

    /// The stable spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Quarantined => "quarantined",
            Tier::Probation => "probation",
            Tier::Trusted => "trusted",
        }
    }

    /// Parses the stable spelling.
    pub fn from_str_opt(text: &str) -> Option<Tier> {
        Tier::ALL.into_iter().find(|t| t.as_str() == text)
    }

    /// One tier down, if there is one.
    pub fn lower(self) -> Option<Tier> {
        match self {
            Tier::Trusted => Some(Tier::Probation),
            Tier::Probation => Some(Tier::Quarantined),
            Tier::Quarantined => None,
        }
    }

    /// One tier up, if there is one.
    pub fn higher(self) -> Option<Tier> {
        match self {
            Tier::Quarantined => Some(Tier::Probation),
            Tier::Probation => Some(Tier::Trusted),
            Tier::Trusted => None,
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `[reliability]` policy the machine applies.
#[derive(Debug, Clone, PartialEq)]
pub struct TierPolicy {
    /// Runs in the rolling window.
    pub window_runs: usize,
    /// Largest failing share that is still inside the budget.
    pub flake_budget: f64,
    /// Whether a full window inside the budget climbs one tier.
    pub promote_after_window: bool,
    /// Where a test absent from the file starts.
    pub default_tier: Tier,
    /// Fewest runs on which a test may be dropped, or called trusted.
    pub min_runs: usize,
}

impl Default for TierPolicy {
    fn default() -> Self {
        TierPolicy {
            window_runs: 200,
            flake_budget: 0.02,
            promote_after_window: true,
            default_tier: Tier::Probation,
            min_runs: 20,
        }
    }
}

/// A test's tier and when it last changed (the newest run the change was based on).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TierState {
    /// The tier.
    pub tier: Tier,
    /// Runs at or before this instant were used by the last change and are not evidence
    /// for the next one. `None`: the tier was never changed by the machine.
    pub since: Option<Timestamp>,
}

/// What happened to a test's tier in one evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// Same tier as before.
    Kept,
    /// Over budget: one tier down.
    Dropped,
    /// A full window inside the budget: one tier up.
    Promoted,
    /// Placed at the default tier (or capped below trusted for lack of runs) because the
    /// file did not list it.
    Entered,
}

/// The machine's answer for one test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TierDecision {
    /// The state after this evaluation.
    pub state: TierState,
    /// What changed.
    pub change: Change,
}

/// Failing share over the budget, on enough runs to say so.
fn over_budget(evidence: &[&WindowEntry<'_>], policy: &TierPolicy) -> bool {
    let runs = evidence.len();
    if runs == 0 || runs < policy.min_runs {
        return false;
    }
    let failures = evidence.iter().filter(|e| e.failed()).count();
    failures as f64 / runs as f64 > policy.flake_budget
}

/// Moves a test at most one step from `previous` (its entry in the existing file, `None`
/// when absent) given its window (oldest first, at most `window_runs` runs, skips excluded).
pub fn next_state(
    previous: Option<&TierState>,
    window: &[WindowEntry<'_>],
    policy: &TierPolicy,
) -> TierDecision {
    let runs: Vec<&WindowEntry<'_>> = window.iter().filter(|e| e.outcome.is_run()).collect();
    let newest = runs.iter().map(|e| e.started_at).max();

    let Some(previous) = previous else {
        // A newcomer is never trusted on thin evidence, whatever the default says.
        let tier = if policy.default_tier == Tier::Trusted && runs.len() < policy.min_runs.max(1) {
            Tier::Probation
        } else {
            policy.default_tier
        };
        return TierDecision {
            state: TierState { tier, since: None },
            change: Change::Entered,
        };
    };

    // Only runs after the last change are evidence for the next one: a second drop needs
    // failures gathered after the first, and a climb needs a whole window after it.
    let evidence: Vec<&WindowEntry<'_>> = runs
        .iter()
        .copied()
        .filter(|e| previous.since.is_none_or(|since| e.started_at > since))
        .collect();

    let moved = |tier: Tier, change: Change| TierDecision {
        state: TierState {
            tier,
            since: newest.or(previous.since),
        },
        change,
    };

    if over_budget(&evidence, policy) {
        if let Some(lower) = previous.tier.lower() {
            return moved(lower, Change::Dropped);
        }
    } else if policy.promote_after_window
        && evidence.len() >= policy.window_runs.max(policy.min_runs)
        && let Some(higher) = previous.tier.higher()
    {
        return moved(higher, Change::Promoted);
    }

    if previous.tier == Tier::Trusted && runs.len() < policy.min_runs {
        // A human may write `trusted` by hand; the machine does not keep that promise on
        // fewer than `min_runs` runs.
        return moved(Tier::Probation, Change::Dropped);
    }
    TierDecision {
        state: previous.clone(),
        change: Change::Kept,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Outcome;
    use proptest::prelude::*;

    fn run(second: i64, failed: bool) -> WindowEntry<'static> {
        WindowEntry {
            outcome: if failed { Outcome::Fail } else { Outcome::Pass },
            commit: None,
            started_at: Timestamp::from_second(1_700_000_000 + second).unwrap(),
        }
    }

    fn history(outcomes: &[bool]) -> Vec<WindowEntry<'static>> {
        outcomes
            .iter()
            .enumerate()
            .map(|(i, f)| run(i as i64, *f))
            .collect()
    }

    fn state(tier: Tier) -> TierState {
        TierState { tier, since: None }
    }

    #[test]
    fn absent_tests_enter_at_the_default_tier() {
        let decision = next_state(None, &history(&[false; 3]), &TierPolicy::default());
        assert_eq!(decision.state.tier, Tier::Probation);
        assert_eq!(decision.change, Change::Entered);
    }

    #[test]
    fn a_trusted_default_is_not_granted_on_few_runs() {
        let policy = TierPolicy {
            default_tier: Tier::Trusted,
            ..TierPolicy::default()
        };
        assert_eq!(
            next_state(None, &history(&[false; 3]), &policy).state.tier,
            Tier::Probation
        );
    }

    #[test]
    fn over_budget_drops_one_tier_only() {
        let mut outcomes = vec![false; 40];
        outcomes[3] = true;
        outcomes[20] = true;
        let decision = next_state(
            Some(&state(Tier::Trusted)),
            &history(&outcomes),
            &TierPolicy::default(),
        );
        assert_eq!(decision.state.tier, Tier::Probation);
        assert_eq!(decision.change, Change::Dropped);
        assert_eq!(
            decision.state.since,
            Some(Timestamp::from_second(1_700_000_039).unwrap())
        );
    }

    #[test]
    fn a_second_drop_needs_evidence_after_the_first() {
        let policy = TierPolicy::default();
        let window = history(&[true; 40]);
        let first = next_state(Some(&state(Tier::Trusted)), &window, &policy);
        assert_eq!(first.state.tier, Tier::Probation);
        // Same window again: no new runs since the drop, so no second drop.
        let second = next_state(Some(&first.state), &window, &policy);
        assert_eq!(second.state.tier, Tier::Probation);
        assert_eq!(second.change, Change::Kept);
        // 20 new failing runs after the drop: now it drops again.
        let mut newer = window.clone();
        newer.extend((40..60).map(|i| run(i, true)));
        let third = next_state(Some(&second.state), &newer, &policy);
        assert_eq!(third.state.tier, Tier::Quarantined);
    }

    #[test]
    fn promotion_needs_a_full_window_since_the_change() {
        let policy = TierPolicy::default();
        let since = Some(Timestamp::from_second(1_700_000_000 + 50).unwrap());
        let quarantined = TierState {
            tier: Tier::Quarantined,
            since,
        };
        let window = history(&[false; 200]);
        // Only 149 runs after the change: stays.
        assert_eq!(
            next_state(Some(&quarantined), &window, &policy).change,
            Change::Kept
        );
        // A whole window after it: one tier up, not two.
        let mut later = window.clone();
        later.extend((200..251).map(|i| run(i, false)));
        let later = &later[later.len() - 200..];
        let decision = next_state(Some(&quarantined), later, &policy);
        assert_eq!(decision.state.tier, Tier::Probation);
        assert_eq!(decision.change, Change::Promoted);
    }

    #[test]
    fn hand_written_trusted_on_few_runs_is_withdrawn() {
        let decision = next_state(
            Some(&state(Tier::Trusted)),
            &history(&[false; 5]),
            &TierPolicy::default(),
        );
        assert_eq!(decision.state.tier, Tier::Probation);
    }

    fn arbitrary_tier() -> impl Strategy<Value = Tier> {
        prop_oneof![
            Just(Tier::Quarantined),
            Just(Tier::Probation),
            Just(Tier::Trusted)
        ]
    }

    proptest! {
        #![proptest_config(crate::test_support::proptest_config(512))]

        #[test]
        fn more_failures_never_give_a_higher_tier(
            outcomes in prop::collection::vec(any::<bool>(), 0..260),
            extra in prop::collection::vec(any::<prop::sample::Index>(), 0..20),
            tier in arbitrary_tier(),
            since in prop::option::of(0i64..260),
        ) {
            let policy = TierPolicy::default();
            let previous = TierState { tier, since: since.map(|s| Timestamp::from_second(1_700_000_000 + s).unwrap()) };
            let mut worse = outcomes.clone();
            for index in &extra {
                if !worse.is_empty() {
                    let at = index.index(worse.len());
                    worse[at] = true;
                }
            }
            let take = |o: &[bool]| { let h = history(o); h[h.len().saturating_sub(policy.window_runs)..].to_vec() };
            let better_tier = next_state(Some(&previous), &take(&outcomes), &policy).state.tier;
            let worse_tier = next_state(Some(&previous), &take(&worse), &policy).state.tier;
            prop_assert!(worse_tier <= better_tier, "{:?} then {:?}", better_tier, worse_tier);
        }

        #[test]
        fn promotion_never_happens_before_a_full_window_inside_budget(
            outcomes in prop::collection::vec(prop::bool::weighted(0.02), 0..260),
            tier in arbitrary_tier(),
            since in prop::option::of(0i64..260),
        ) {
            let policy = TierPolicy::default();
            let since = since.map(|s| Timestamp::from_second(1_700_000_000 + s).unwrap());
            let previous = TierState { tier, since };
            let h = history(&outcomes);
            let window = &h[h.len().saturating_sub(policy.window_runs)..];
            let decision = next_state(Some(&previous), window, &policy);
            if decision.change == Change::Promoted {
                let evidence: Vec<_> = window.iter().filter(|e| since.is_none_or(|s| e.started_at > s)).collect();
                prop_assert!(evidence.len() >= policy.window_runs);
                let failures = evidence.iter().filter(|e| e.failed()).count();
                prop_assert!(failures as f64 / evidence.len() as f64 <= policy.flake_budget);
                prop_assert_eq!(Some(decision.state.tier), tier.higher());
            }
        }

        #[test]
        fn at_most_one_step_per_evaluation(
            outcomes in prop::collection::vec(any::<bool>(), 0..260),
            tier in arbitrary_tier(),
        ) {
            let policy = TierPolicy::default();
            let decision = next_state(Some(&state(tier)), &history(&outcomes), &policy);
            let distance = (decision.state.tier as i8 - tier as i8).abs();
            prop_assert!(distance <= 1);
        }
    }
}
