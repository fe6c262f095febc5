//! Exit codes, named once, and the rules that map outcomes to them: every command maps
//! its outcome to one of these.

use crate::triage::VerdictKind;

/// Success, or the verdict is positive (accepted, no regression).
pub const OK: u8 = 0;
/// The command worked and its verdict is negative (regression, rejected, budget exceeded).
pub const NEGATIVE: u8 = 1;
/// Usage, configuration or input error: nothing was decided and nothing half-written.
pub const USAGE_OR_INPUT: u8 = 2;
/// Added to a signal number for a child killed by that signal, as shells do.
pub const SIGNAL_BASE: u8 = 128;

/// The exit code one red test's verdict gives `candor test` and `candor triage` (the
/// command exits with the largest over its red tests).
///
/// Every red fails the command except the two candor can vouch for: `known-flake` (the
/// exact shape of a known flake, with a rerun left) and `not-evidence` (a quarantined
/// test's known shape). `unverified` is a red candor could not judge yet: "measure before
/// you reason" is not green, or a deterministic failure on a new repository, where every
/// test is on probation, would leave CI green. The match is exhaustive so that a new
/// verdict must choose.
pub fn of_red_verdict(kind: &VerdictKind) -> u8 {
    match kind {
        VerdictKind::KnownFlake { .. } | VerdictKind::NotEvidence { .. } => OK,
        VerdictKind::Regression
        | VerdictKind::Unverified
        | VerdictKind::BudgetExceeded { .. }
        | VerdictKind::Expired { .. } => NEGATIVE,
    }
}
