//! The verdict for a red test, through the public API: the precedence table row by row,
//! and the incident that made fingerprints exact.

use std::path::Path;

use candor::ledger::BudgetState;
use candor::policy::{Config, Fingerprint, RerunConfig, RunConditions};
use candor::results::{Failure, Frame};
use candor::stats::tiers::Tier;
use candor::triage::{TriageInput, Verdict, VerdictKind, verdict};
use jiff::civil::Date;

const POOL_TEST: &str = "services/pool/integration::TestPoolCheckoutUnderLoad";

/// The incident's fingerprint, as a team would write it in `candor.toml`.
const POLICY: &str = r#"
[rerun]
max_attempts_per_change = 2
budget_entries = 3
budget_days = 7
fingerprint_expiry_days = 60

[[fingerprint]]
id = "FP-014"
test = "services/pool/integration::TestPoolCheckoutUnderLoad"
exception = "TimeoutError"
message_regex = 'checkout deadline of \d+ms exceeded after \d+ attempts'
frame = "services/pool/integration/checkout_test.go:88"
conditions = { ci = true, min_workers = 4 }
last_seen = 2026-10-01
owner = "platform"
"#;

const TODAY: Date = Date::constant(2026, 10, 8);
const LONG_AFTER: Date = Date::constant(2027, 1, 1);

fn config() -> Config {
    Config::parse(POLICY, Path::new("candor.toml")).expect("the incident policy parses")
}

fn failure(exception: &str, line: u32) -> Failure {
    Failure {
        exception: Some(exception.to_owned()),
        message: "checkout deadline of 250ms exceeded after 3 attempts".to_owned(),
        text: String::new(),
        frames: Vec::new(),
        failing_frame: Some(Frame {
            file: "services/pool/integration/checkout_test.go".to_owned(),
            line: Some(line),
            function: Some("TestPoolCheckoutUnderLoad".to_owned()),
        }),
    }
}

fn exact() -> Failure {
    failure("TimeoutError", 88)
}

fn ci_run() -> RunConditions {
    RunConditions {
        ci: Some(true),
        workers: Some(8),
        runner: Some("go".to_owned()),
        os: Some("linux".to_owned()),
    }
}

struct Case<'a> {
    test_id: &'a str,
    tier: Option<Tier>,
    failure: Failure,
    budget: BudgetState,
    today: Date,
    fingerprints: &'a [Fingerprint],
    rerun: &'a RerunConfig,
}

fn judge(case: &Case<'_>) -> Verdict {
    verdict(&TriageInput {
        test_id: case.test_id,
        tier: case.tier,
        failure: Some(&case.failure),
        run: &ci_run(),
        fingerprints: case.fingerprints,
        budget: case.budget,
        rerun: case.rerun,
        today: case.today,
        history: None,
        alpha: 0.05,
    })
}

#[derive(Debug, Clone, Copy)]
enum Shape {
    /// A fingerprint for the test exists, and the failure misses it.
    NearMiss,
    /// No fingerprint names the test.
    Unfingerprinted,
    /// Every field matches a live fingerprint.
    Exact,
    /// Every field matches, but the fingerprint has expired.
    ExactExpired,
}

#[derive(Debug, Clone, Copy)]
enum Budget {
    Left,
    /// `budget_entries` reruns in the ledger within `budget_days`.
    LinesSpent,
    /// `max_attempts_per_change` runs in this change.
    AttemptsSpent,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Regression,
    Unverified,
    KnownFlake,
    BudgetExceeded,
    NotEvidence,
    Expired,
}

const T: Option<Tier> = Some(Tier::Trusted);
const P: Option<Tier> = Some(Tier::Probation);
const Q: Option<Tier> = Some(Tier::Quarantined);
const UNLISTED: Option<Tier> = None;

/// Every tier × shape × budget, with the verdict the precedence table in `src/triage.rs`
/// gives it.
#[rustfmt::skip]
const TABLE: [(Option<Tier>, Shape, Budget, Expect); 48] = {
    use Budget::{AttemptsSpent as Runs, Left, LinesSpent as Lines};
    use Expect::*;
    use Shape::{Exact as Ex, ExactExpired as Stale, NearMiss as Near, Unfingerprinted as NoFp};
    [
        // Rule 1: quarantined + exact live match: not evidence, whatever the budget.
        (Q, Ex, Left, NotEvidence), (Q, Ex, Lines, NotEvidence), (Q, Ex, Runs, NotEvidence),
        // Rules 2 and 3: exact live match elsewhere: the budget decides.
        (T, Ex, Left, KnownFlake), (T, Ex, Lines, BudgetExceeded), (T, Ex, Runs, BudgetExceeded),
        (P, Ex, Left, KnownFlake), (P, Ex, Lines, BudgetExceeded), (P, Ex, Runs, BudgetExceeded),
        (UNLISTED, Ex, Left, KnownFlake), (UNLISTED, Ex, Lines, BudgetExceeded), (UNLISTED, Ex, Runs, BudgetExceeded),
        // Rule 4: an expired fingerprint pardons nothing, in any tier.
        (Q, Stale, Left, Expired), (Q, Stale, Lines, Expired), (Q, Stale, Runs, Expired),
        (T, Stale, Left, Expired), (T, Stale, Lines, Expired), (T, Stale, Runs, Expired),
        (P, Stale, Left, Expired), (P, Stale, Lines, Expired), (P, Stale, Runs, Expired),
        (UNLISTED, Stale, Left, Expired), (UNLISTED, Stale, Lines, Expired), (UNLISTED, Stale, Runs, Expired),
        // Rule 5: trusted, no match.
        (T, Near, Left, Regression), (T, Near, Lines, Regression), (T, Near, Runs, Regression),
        (T, NoFp, Left, Regression), (T, NoFp, Lines, Regression), (T, NoFp, Runs, Regression),
        // Rule 6: quarantined, no match: a new shape.
        (Q, Near, Left, Regression), (Q, Near, Lines, Regression), (Q, Near, Runs, Regression),
        (Q, NoFp, Left, Regression), (Q, NoFp, Lines, Regression), (Q, NoFp, Runs, Regression),
        // Rule 8 (rule 7 needs history): probation or unlisted, no match: measure first.
        (P, Near, Left, Unverified), (P, Near, Lines, Unverified), (P, Near, Runs, Unverified),
        (P, NoFp, Left, Unverified), (P, NoFp, Lines, Unverified), (P, NoFp, Runs, Unverified),
        (UNLISTED, Near, Left, Unverified), (UNLISTED, Near, Lines, Unverified), (UNLISTED, Near, Runs, Unverified),
        (UNLISTED, NoFp, Left, Unverified), (UNLISTED, NoFp, Lines, Unverified), (UNLISTED, NoFp, Runs, Unverified),
    ]
};

fn kind_of(verdict: &Verdict) -> Expect {
    match verdict.kind {
        VerdictKind::Regression => Expect::Regression,
        VerdictKind::Unverified => Expect::Unverified,
        VerdictKind::KnownFlake { .. } => Expect::KnownFlake,
        VerdictKind::BudgetExceeded { .. } => Expect::BudgetExceeded,
        VerdictKind::NotEvidence { .. } => Expect::NotEvidence,
        VerdictKind::Expired { .. } => Expect::Expired,
    }
}

#[test]
fn every_row_of_the_precedence_table() {
    let config = config();
    let rerun = &config.rerun;
    let mut seen = std::collections::HashSet::new();
    for (tier, shape, budget, expected) in TABLE {
        assert!(
            seen.insert(format!("{tier:?} {shape:?} {budget:?}")),
            "row listed twice"
        );
        let (test_id, failure, today) = match shape {
            Shape::NearMiss => (POOL_TEST, failure("AttributeError", 88), TODAY),
            Shape::Unfingerprinted => ("services/pool::TestOther", exact(), TODAY),
            Shape::Exact => (POOL_TEST, exact(), TODAY),
            Shape::ExactExpired => (POOL_TEST, exact(), LONG_AFTER),
        };
        let budget = match budget {
            Budget::Left => BudgetState {
                entries_in_window: rerun.budget_entries as usize - 1,
                attempts_in_change: 1,
            },
            Budget::LinesSpent => BudgetState {
                entries_in_window: rerun.budget_entries as usize,
                attempts_in_change: 1,
            },
            Budget::AttemptsSpent => BudgetState {
                entries_in_window: 0,
                attempts_in_change: rerun.max_attempts_per_change,
            },
        };
        let verdict = judge(&Case {
            test_id,
            tier,
            failure,
            budget,
            today,
            fingerprints: &config.fingerprints,
            rerun,
        });
        let row = format!("{tier:?} {shape:?} {budget:?}");
        assert_eq!(kind_of(&verdict), expected, "{row}: {verdict}");
        // Issue 12 item 4: every red fails the command but the two candor vouches for.
        let negative = !matches!(expected, Expect::KnownFlake | Expect::NotEvidence);
        assert_eq!(verdict.is_negative(), negative, "{row}");
        assert_eq!(verdict.exit_code(), u8::from(negative), "{row}");
        assert_eq!(
            verdict.rerun_allowed(),
            expected == Expect::KnownFlake,
            "{row}"
        );
        assert_eq!(
            verdict.label(),
            (expected == Expect::BudgetExceeded).then_some("flake-budget-exceeded"),
            "{row}"
        );
        let names_fingerprint = matches!(
            expected,
            Expect::KnownFlake | Expect::BudgetExceeded | Expect::NotEvidence | Expect::Expired
        );
        assert_eq!(
            verdict.kind.fingerprint(),
            names_fingerprint.then_some("FP-014"),
            "{row}"
        );
        assert!(
            !verdict.reason.is_empty() && !verdict.reason.contains('\n'),
            "{row}: one line of reason"
        );
    }
    assert_eq!(seen.len(), 4 * 4 * 3, "every combination once");
}

fn incident(failure: Failure, today: Date) -> Verdict {
    let config = config();
    judge(&Case {
        test_id: POOL_TEST,
        tier: Some(Tier::Quarantined),
        failure,
        budget: BudgetState::FRESH,
        today,
        fingerprints: &config.fingerprints,
        rerun: &config.rerun,
    })
}

/// The incident: the pool test was quarantined for a known TimeoutError, so a new
/// AttributeError in it was waved through as "known flaky". It was a real regression.
#[test]
fn incident_a_new_exception_in_a_quarantined_test_is_a_regression() {
    let verdict = incident(failure("AttributeError", 88), TODAY);
    assert_eq!(verdict.kind, VerdictKind::Regression);
    assert!(verdict.is_negative());
    assert!(
        verdict
            .reason
            .contains("same test, but AttributeError is not the fingerprint's TimeoutError"),
        "{}",
        verdict.reason
    );
    assert!(
        verdict.reason.contains("new failure shape"),
        "{}",
        verdict.reason
    );
}

#[test]
fn incident_the_same_exception_at_another_frame_is_a_regression() {
    let verdict = incident(failure("TimeoutError", 131), TODAY);
    assert_eq!(verdict.kind, VerdictKind::Regression);
    assert!(
        verdict.reason.contains(
            "it failed at services/pool/integration/checkout_test.go:131, not at the fingerprint's services/pool/integration/checkout_test.go:88"
        ),
        "{}",
        verdict.reason
    );
}

/// In the quarantined test itself the exact shape is pardoned (not-evidence, no rerun);
/// the same shape in a test still under probation is a known flake with one rerun.
#[test]
fn incident_the_exact_shape_is_the_known_flake() {
    let quarantined = incident(exact(), TODAY);
    assert_eq!(
        quarantined.kind,
        VerdictKind::NotEvidence {
            fingerprint: "FP-014".to_owned()
        }
    );
    assert!(!quarantined.is_negative());
    assert!(!quarantined.rerun_allowed());
    let config = config();
    let probation = judge(&Case {
        test_id: POOL_TEST,
        tier: Some(Tier::Probation),
        failure: exact(),
        budget: BudgetState::FRESH,
        today: TODAY,
        fingerprints: &config.fingerprints,
        rerun: &config.rerun,
    });
    assert_eq!(
        probation.kind,
        VerdictKind::KnownFlake {
            fingerprint: "FP-014".to_owned()
        }
    );
    assert!(probation.rerun_allowed());
    let json = serde_json::to_string(&probation).expect("serializes");
    assert!(
        json.starts_with(r#"{"verdict":"known-flake","fingerprint":"FP-014","reason":"#),
        "{json}"
    );
}

#[test]
fn incident_an_expired_fingerprint_pardons_nothing() {
    // last_seen 2026-10-01 + 60 days: still live on 2026-11-30, expired on 2026-12-01.
    let last_day = incident(exact(), Date::constant(2026, 11, 30));
    assert!(matches!(last_day.kind, VerdictKind::NotEvidence { .. }));
    let verdict = incident(exact(), Date::constant(2026, 12, 1));
    assert_eq!(
        verdict.kind,
        VerdictKind::Expired {
            fingerprint: "FP-014".to_owned()
        }
    );
    assert!(verdict.is_negative());
    assert!(verdict.reason.contains("61 days ago"), "{}", verdict.reason);
    assert!(
        verdict.reason.contains("owner platform"),
        "{}",
        verdict.reason
    );
}

#[test]
fn an_unrecorded_worker_count_does_not_satisfy_min_workers() {
    let config = config();
    let run = RunConditions {
        workers: None,
        ..ci_run()
    };
    let verdict = verdict(&TriageInput {
        test_id: POOL_TEST,
        tier: Some(Tier::Trusted),
        failure: Some(&exact()),
        run: &run,
        fingerprints: &config.fingerprints,
        budget: BudgetState::FRESH,
        rerun: &config.rerun,
        today: TODAY,
        history: None,
        alpha: 0.05,
    });
    assert_eq!(verdict.kind, VerdictKind::Regression);
    assert!(
        verdict.reason.contains("does not record its worker count"),
        "{}",
        verdict.reason
    );
}

#[test]
fn a_red_without_failure_details_matches_nothing() {
    let config = config();
    let verdict = verdict(&TriageInput {
        test_id: POOL_TEST,
        tier: None,
        failure: None,
        run: &ci_run(),
        fingerprints: &config.fingerprints,
        budget: BudgetState::FRESH,
        rerun: &config.rerun,
        today: TODAY,
        history: None,
        alpha: 0.05,
    });
    assert_eq!(verdict.kind, VerdictKind::Unverified);
    assert!(
        verdict.reason.contains("has no exception type"),
        "{}",
        verdict.reason
    );
}
