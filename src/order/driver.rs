//! The investigation of one test: alone, repeated, in its recorded order, in shuffled
//! orders, then bisection and verification, inside a wall-clock budget. Decides the
//! verdict; runs nothing itself: every run is a [`Probe`] handed to a [`Prober`], and time
//! comes from a [`Clock`], so the whole decision is tested on simulated suites.
//!
//! # Stages
//! 1. **Alone**, `alone_runs` times with different seeds. All green or all red fixes the
//!    test's *baseline*. Mixed: where the seed reseeds the tests' randomness, each seed
//!    seen is run once more; if every seed repeats its outcome the test is
//!    **seed-dependent** (with a failing seed), else it is **flaky alone**. Either ends it.
//!    All red, where the runner can turn the reseeding off: the test alone without it,
//!    `unseeded_runs` times. Green every time, the seed is what fails it: more seeds, up
//!    to `seed_search` in all, until one passes; that seed and a failing one run again,
//!    and kept outcomes make it **seed-dependent** (a passing seed named when one was
//!    found; "passes without reseeding" either way). A seed that fails 37 times in 40
//!    looks like a red baseline to six seeds, and its rare green would otherwise read as
//!    an order flipping it.
//! 2. **Repeat** (green baseline, runner can repeat): the test twice in one process; a
//!    later repetition red, twice, is **repeat-dependent**.
//! 3. **Context**: the tests that ran before it in the recorded order, then the test, in
//!    one process, `context_runs` times: the rate in context against the rate alone.
//! 4. **Shuffles** (no flip yet): the test with the tests of its file or module, in
//!    `shuffles` seeded orders.
//! 5. **Bisection** of the first order that flipped the test (red for a green baseline,
//!    green for a red one), one fresh process per probe ([`super::bisect`]), then
//!    **verification**: culprits-then-test flips `verify_runs` times out of
//!    `verify_runs`, and the test alone (same seed) does not flip in as many runs.
//!
//! Precedence of the verdict: a verified polluter or state-setter; seed-dependent and
//! flaky-alone end the search early; repeat-dependent; a flip seen but not isolated;
//! the budget ran out; fails in every order; not reproduced.
//!
//! The budget is checked before each probe, and each probe gets what is left of it as
//! its time limit. Running out is part of the result, never an error.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::bisect::{self, ProbeOutcome};
use super::seeds::{nth_seed, shuffled};
use crate::results::{Failure, Outcome};
use crate::runner::{GivenOrder, OrderSupport};

/// What to investigate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The test's canonical id.
    pub test: String,
    /// The order its red (or green) came from, when known.
    pub context: Option<RecordedOrder>,
    /// The tests of its file or module, itself included, for shuffled orders.
    pub neighbours: Vec<String>,
}

/// The tests that ran before the test in one process, in order, and the run's seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordedOrder {
    /// Where the order comes from, for the reader (`results file x.xml`, `collection
    /// order`).
    pub source: String,
    /// The tests before it, in the order they ran.
    pub before: Vec<String>,
    /// The seed that run used, when known.
    pub seed: Option<u64>,
}

/// How much to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Runs alone (each with its own seed).
    pub alone_runs: u32,
    /// Runs in the recorded order.
    pub context_runs: u32,
    /// Shuffled orders tried when the recorded order does not flip the test.
    pub shuffles: u32,
    /// Runs of each side of the verification.
    pub verify_runs: u32,
    /// Repetitions in one process for the repeat check.
    pub repeat_count: u32,
    /// Runs alone without reseeding, for a test red with every seed.
    pub unseeded_runs: u32,
    /// Seeds tried alone in all (the first `alone_runs` included) to find a passing one
    /// for a test that passes without reseeding.
    pub seed_search: u32,
    /// Every seed is derived from this one ([`super::seeds::nth_seed`]); the first alone
    /// run uses it as is.
    pub base_seed: u64,
    /// Wall-clock limit of the whole investigation.
    pub budget: Duration,
}

impl Plan {
    /// The defaults `candor order` uses, with a base seed and a budget.
    pub fn new(base_seed: u64, budget: Duration) -> Plan {
        Plan {
            alone_runs: 6,
            context_runs: 2,
            shuffles: 4,
            verify_runs: 3,
            repeat_count: 2,
            unseeded_runs: 3,
            seed_search: 40,
            base_seed,
            budget,
        }
    }
}

/// Why a probe runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Purpose {
    /// The test alone.
    Alone,
    /// The test alone again, with a seed already seen.
    SeedCheck,
    /// The test alone without the runner's reseeding.
    Unseeded,
    /// The test alone with a further seed, looking for one it passes with.
    SeedSearch,
    /// The test repeated inside one process.
    Repeat,
    /// The recorded order.
    Context,
    /// A shuffled order.
    Shuffle,
    /// A shuffled order that flipped the test, run again as a given order before bisecting.
    Confirm,
    /// A bisection step.
    Bisect,
    /// Culprits then the test, to verify.
    VerifyPair,
    /// The test alone, to verify.
    VerifyAlone,
}

impl Purpose {
    /// The spelling in output and records.
    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::Alone => "alone",
            Purpose::SeedCheck => "seed-check",
            Purpose::Unseeded => "unseeded",
            Purpose::SeedSearch => "seed-search",
            Purpose::Repeat => "repeat",
            Purpose::Context => "context",
            Purpose::Shuffle => "shuffle",
            Purpose::Confirm => "confirm",
            Purpose::Bisect => "bisect",
            Purpose::VerifyPair => "verify-pair",
            Purpose::VerifyAlone => "verify-alone",
        }
    }
}

/// What one probe runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeKind {
    /// The test alone.
    Alone,
    /// These tests, then the test, in one process, arranged as given.
    Ordered(Vec<String>),
    /// These tests (the test among them) shuffled by the probe's seed, by the runner.
    Shuffled(Vec<String>),
    /// The test this many times in one process.
    Repeated(u32),
    /// The test alone with the runner's reseeding turned off.
    Unseeded,
}

/// One run the investigation asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// Its number in the investigation, from 1.
    pub number: u32,
    /// Why it runs.
    pub purpose: Purpose,
    /// What it runs.
    pub kind: ProbeKind,
    /// The seed, where the runner takes one.
    pub seed: u64,
    /// What is left of the budget: the probe's own time limit.
    pub time_limit: Duration,
}

/// What a probe showed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observation {
    /// The test's outcome (its first repetition's, for a repeated run); `None` when the
    /// report does not hold it.
    pub outcome: Option<Outcome>,
    /// The tests that ran before it in that process, in order.
    pub before: Vec<String>,
    /// Each repetition's outcome, in order, for a repeated run.
    pub repetitions: Vec<Outcome>,
    /// Its failure, when it failed.
    pub failure: Option<Failure>,
    /// Whether the run was stopped by its time limit.
    pub timed_out: bool,
    /// The command that ran, exactly.
    pub argv: Vec<String>,
    /// The run's log.
    pub log: Option<std::path::PathBuf>,
    /// The run record written for it.
    pub record: Option<std::path::PathBuf>,
}

/// Runs probes: the runner adapter in `candor order`, a simulated suite in tests.
pub trait Prober {
    /// Why a probe could not run at all (a test that fails is not an error).
    type Error;
    /// Runs one probe in a fresh process.
    fn run(&mut self, probe: &Probe) -> Result<Observation, Self::Error>;
}

/// Wall-clock time since the investigation started.
pub trait Clock {
    /// Time elapsed.
    fn elapsed(&self) -> Duration;
}

/// The real clock, started when created.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock(Instant);

impl SystemClock {
    /// A clock starting now.
    pub fn start() -> SystemClock {
        SystemClock(Instant::now())
    }
}

impl Clock for SystemClock {
    fn elapsed(&self) -> Duration {
        self.0.elapsed()
    }
}

/// The answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Verdict {
    /// Green alone, red after its polluters; verified.
    OrderDependentVictim {
        /// The preceding tests that flip it, in order (usually one).
        polluters: Vec<String>,
    },
    /// Red alone, green after its state-setters; verified.
    OrderDependentBrittle {
        /// The preceding tests that make it pass, in order (usually one).
        state_setters: Vec<String>,
    },
    /// Alone, its outcome follows the seed: the same seed always gives the same outcome.
    SeedDependent {
        /// A seed it fails with.
        failing_seed: u64,
        /// A seed it passes with; `None` when it passed only without reseeding and every
        /// seed tried failed it.
        passing_seed: Option<u64>,
    },
    /// Green alone, red when repeated inside one process.
    RepeatDependent {
        /// Repetitions per process.
        count: u32,
    },
    /// An order flipped it, but no minimal set was verified (see the bisection and the
    /// budget, or the runner's fixed order).
    OrderDependentUnisolated,
    /// Alone, with the same seed, it both passed and failed: not the order's doing.
    FlakyAlone,
    /// Red alone and in every order tried.
    FailsInEveryOrder,
    /// Green alone and in every order tried.
    NotReproduced,
    /// The budget ran out before anything was established.
    Inconclusive,
    /// It never ran alone: the id does not name a test the runner runs.
    NotRun,
}

impl Verdict {
    /// The stable spelling (the verdict's and the bucket's name).
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::OrderDependentVictim { .. } => "order-dependent-victim",
            Verdict::OrderDependentBrittle { .. } => "order-dependent-brittle",
            Verdict::SeedDependent { .. } => "seed-dependent",
            Verdict::RepeatDependent { .. } => "repeat-dependent",
            Verdict::OrderDependentUnisolated => "order-dependent-unisolated",
            Verdict::FlakyAlone => "flaky-alone",
            Verdict::FailsInEveryOrder => "fails-in-every-order",
            Verdict::NotReproduced => "not-reproduced",
            Verdict::Inconclusive => "inconclusive",
            Verdict::NotRun => "not-run",
        }
    }

    /// Whether the verdict explains a red by order, seed or repetition, verified: the
    /// red is the test's own defect, not evidence against the change under test.
    pub fn explains_red(&self) -> bool {
        matches!(
            self,
            Verdict::OrderDependentVictim { .. }
                | Verdict::OrderDependentBrittle { .. }
                | Verdict::SeedDependent { .. }
                | Verdict::RepeatDependent { .. }
        )
    }

    /// The polluters or state-setters, when the verdict names some.
    pub fn culprits(&self) -> &[String] {
        match self {
            Verdict::OrderDependentVictim { polluters } => polluters,
            Verdict::OrderDependentBrittle { state_setters } => state_setters,
            _ => &[],
        }
    }
}

/// Runs and red runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Tally {
    /// Runs in which the test ran.
    pub runs: u32,
    /// Of those, red ones.
    pub red: u32,
    /// Probes in which the test did not run.
    pub missing: u32,
}

impl Tally {
    fn add(&mut self, outcome: Option<Outcome>) {
        match outcome {
            Some(outcome) => {
                self.runs += 1;
                if outcome.is_red() {
                    self.red += 1;
                }
            }
            None => self.missing += 1,
        }
    }

    /// Red runs over runs, when there were runs.
    pub fn red_rate(&self) -> Option<f64> {
        (self.runs > 0).then(|| f64::from(self.red) / f64::from(self.runs))
    }
}

/// One seed's outcomes alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SeedOutcomes {
    /// The seed.
    pub seed: u64,
    /// Its outcomes, in order.
    pub outcomes: Vec<Outcome>,
}

/// The repeat check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct RepeatCheck {
    /// Repetitions per process.
    pub count: u32,
    /// Each probe's repetitions, in order.
    pub runs: Vec<Vec<Outcome>>,
    /// Every probe had its first repetition green and a later one red.
    pub dependent: bool,
}

/// The recorded order's runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ContextCheck {
    /// Where the order came from.
    pub source: String,
    /// Tests before the test.
    pub tests_before: usize,
    /// The seed used.
    pub seed: u64,
    /// Outcomes.
    pub tally: Tally,
}

/// One shuffled order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ShuffleRun {
    /// Its seed.
    pub seed: u64,
    /// The test's outcome.
    pub outcome: Option<Outcome>,
    /// Tests that ran before it.
    pub tests_before: usize,
}

/// The bisection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct BisectionReport {
    /// The order bisected came from: `context` or `shuffle`.
    pub from: Purpose,
    /// Its seed.
    pub seed: u64,
    /// Tests before the test in it.
    pub candidates: usize,
    /// Probes the search ran (verification not included).
    pub probes: u32,
    /// The culprits, or the smallest flipping set seen when interrupted.
    pub culprits: Vec<String>,
    /// The search was stopped by the budget before it finished.
    pub interrupted: bool,
    /// For a shuffled run's order: whether that order, given back to the runner as an
    /// order, flipped the test again. `false` means no search was possible (a runner
    /// such as go runs named tests in its own order, not the one given); `None` when
    /// the order came from the context run or the budget ran out first.
    pub replayed: Option<bool>,
}

/// The verification of the culprits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Verification {
    /// Culprits then the test.
    pub pair: Tally,
    /// The test alone, with the same seed.
    pub alone: Tally,
    /// Both sides held every run.
    pub holds: bool,
}

/// The budget and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct BudgetReport {
    /// The limit, in seconds.
    pub limit_seconds: f64,
    /// Time spent, in seconds.
    pub spent_seconds: f64,
    /// The stage that was cut short when the budget ran out.
    pub exhausted_during: Option<Purpose>,
}

/// One probe, as the investigation saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ProbeLog {
    /// Its number.
    pub number: u32,
    /// Why it ran.
    pub purpose: Purpose,
    /// Its seed.
    pub seed: u64,
    /// Tests run in the process besides the test (0 alone).
    pub other_tests: usize,
    /// The test's outcome.
    pub outcome: Option<Outcome>,
    /// Whether its time limit stopped it.
    pub timed_out: bool,
    /// Its log.
    pub log: Option<std::path::PathBuf>,
    /// Its run record.
    pub record: Option<std::path::PathBuf>,
    /// Exactly what ran (in the record too; left out of JSON output, where the ids of a
    /// long order would drown everything else).
    #[serde(skip)]
    pub argv: Vec<String>,
}

/// Everything the investigation found.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Investigation {
    /// The test.
    pub test: String,
    /// The answer.
    pub verdict: Verdict,
    /// The base seed every seed derives from.
    pub base_seed: u64,
    /// The test alone.
    pub alone: Tally,
    /// The test alone, by seed.
    pub alone_by_seed: Vec<SeedOutcomes>,
    /// Its outcome alone when that was the same every run.
    pub baseline: Option<Outcome>,
    /// The test alone without reseeding, when that ran (a red baseline and a runner that
    /// can turn its reseeding off).
    pub unseeded: Option<Tally>,
    /// The repeat check, when it ran.
    pub repeat: Option<RepeatCheck>,
    /// The recorded order, when there was one and it ran.
    pub context: Option<ContextCheck>,
    /// Shuffled orders.
    pub shuffles: Vec<ShuffleRun>,
    /// The bisection, when an order flipped the test.
    pub bisection: Option<BisectionReport>,
    /// The verification, when the bisection finished.
    pub verification: Option<Verification>,
    /// The seed the reproduction uses (the flipping order's).
    pub reproduction_seed: Option<u64>,
    /// The failure that shows the shared state: the test's in the verified pair (a
    /// victim) or alone (a brittle test), or a red seed's.
    #[serde(skip)]
    pub telling_failure: Option<Failure>,
    /// The budget.
    pub budget: BudgetReport,
    /// Every probe, in order.
    pub probes: Vec<ProbeLog>,
}

/// Runs the investigation. Errors are the prober's (a runner that cannot start); a red
/// test, a timeout and a spent budget are results.
pub fn drive<P: Prober>(
    request: &Request,
    plan: &Plan,
    support: &OrderSupport,
    prober: &mut P,
    clock: &dyn Clock,
) -> Result<Investigation, P::Error> {
    let mut driver = Driver {
        request,
        plan,
        support,
        prober,
        clock,
        seed_index: 0,
        found: Investigation {
            test: request.test.clone(),
            verdict: Verdict::Inconclusive,
            base_seed: plan.base_seed,
            alone: Tally::default(),
            alone_by_seed: Vec::new(),
            baseline: None,
            unseeded: None,
            repeat: None,
            context: None,
            shuffles: Vec::new(),
            bisection: None,
            verification: None,
            reproduction_seed: None,
            telling_failure: None,
            budget: BudgetReport {
                limit_seconds: plan.budget.as_secs_f64(),
                spent_seconds: 0.0,
                exhausted_during: None,
            },
            probes: Vec::new(),
        },
    };
    let verdict = driver.stages()?;
    let mut found = driver.found;
    found.verdict = verdict;
    found.budget.spent_seconds = clock.elapsed().as_secs_f64();
    Ok(found)
}

/// A probe that did not run because the budget is spent.
struct Spent;

/// Why the bisection's probe callback stopped.
enum Stop<E> {
    Budget,
    Runner(E),
}

struct Driver<'a, P: Prober> {
    request: &'a Request,
    plan: &'a Plan,
    support: &'a OrderSupport,
    prober: &'a mut P,
    clock: &'a dyn Clock,
    seed_index: u64,
    found: Investigation,
}

/// An order in which the test flipped.
struct Flip {
    from: Purpose,
    before: Vec<String>,
    seed: u64,
}

impl<P: Prober> Driver<'_, P> {
    fn stages(&mut self) -> Result<Verdict, P::Error> {
        // 1. Alone.
        let mut by_seed: Vec<SeedOutcomes> = Vec::new();
        for _ in 0..self.plan.alone_runs {
            let seed = self.next_seed();
            let Ok(observed) = self.probe(Purpose::Alone, ProbeKind::Alone, seed)? else {
                return Ok(self.out_of_budget());
            };
            self.found.alone.add(observed.outcome);
            if observed.outcome.is_some_and(Outcome::is_red) && self.found.telling_failure.is_none()
            {
                self.found.telling_failure.clone_from(&observed.failure);
            }
            if let Some(outcome) = observed.outcome {
                by_seed.push(SeedOutcomes {
                    seed,
                    outcomes: vec![outcome],
                });
            }
        }
        self.found.alone_by_seed.clone_from(&by_seed);
        let alone = self.found.alone;
        if alone.runs == 0 {
            return Ok(Verdict::NotRun);
        }
        let baseline_red = if alone.red == alone.runs {
            true
        } else if alone.red == 0 {
            false
        } else {
            return self.seed_check(by_seed);
        };
        self.found.baseline = Some(if baseline_red {
            Outcome::Fail
        } else {
            Outcome::Pass
        });
        if !baseline_red {
            // A green test's failure text comes from the flipped runs.
            self.found.telling_failure = None;
        }

        // 1b. Red with every seed: without reseeding, and more seeds.
        if baseline_red && self.support.unseeded {
            match self.unseeded_check(by_seed)? {
                Ok(Some(verdict)) => return Ok(verdict),
                Ok(None) => {}
                Err(Spent) => return Ok(self.out_of_budget()),
            }
        }

        // 2. Repeat.
        if self.support.repeats && !baseline_red {
            match self.repeat_check()? {
                Ok(()) => {}
                Err(Spent) => return Ok(self.out_of_budget()),
            }
        }

        // 3. Context and 4. shuffles.
        let flip = match self.find_flip(baseline_red)? {
            Ok(flip) => flip,
            Err(Spent) => return Ok(self.out_of_budget()),
        };
        let Some(flip) = flip else {
            return Ok(self.without_flip(baseline_red));
        };
        if flip.before.is_empty() {
            // It flipped with nothing before it: the order cannot be what flips it.
            return Ok(Verdict::FlakyAlone);
        }

        // 5. Bisection and verification.
        self.found.reproduction_seed = Some(flip.seed);
        self.bisect_and_verify(&flip, baseline_red)
    }

    fn out_of_budget(&self) -> Verdict {
        if self.found.repeat.as_ref().is_some_and(|r| r.dependent) {
            return Verdict::RepeatDependent {
                count: self.plan.repeat_count,
            };
        }
        if self.found.bisection.is_some() {
            return Verdict::OrderDependentUnisolated;
        }
        Verdict::Inconclusive
    }

    fn without_flip(&self, baseline_red: bool) -> Verdict {
        if self.found.repeat.as_ref().is_some_and(|r| r.dependent) {
            Verdict::RepeatDependent {
                count: self.plan.repeat_count,
            }
        } else if baseline_red {
            Verdict::FailsInEveryOrder
        } else {
            Verdict::NotReproduced
        }
    }

    /// Mixed outcomes alone: does each seed keep its outcome?
    fn seed_check(&mut self, mut by_seed: Vec<SeedOutcomes>) -> Result<Verdict, P::Error> {
        if !self.support.seed_reseeds_tests {
            return Ok(Verdict::FlakyAlone);
        }
        // Two red and two green seeds are enough to see whether seeds keep outcomes.
        let mut checked_red = 0;
        let mut checked_green = 0;
        for entry in &mut by_seed {
            let Some(first) = entry.outcomes.first().copied() else {
                continue;
            };
            let counter = if first.is_red() {
                &mut checked_red
            } else {
                &mut checked_green
            };
            if *counter >= 2 {
                continue;
            }
            *counter += 1;
            let Ok(observed) = self.probe(Purpose::SeedCheck, ProbeKind::Alone, entry.seed)? else {
                self.found.alone_by_seed = by_seed;
                return Ok(self.out_of_budget());
            };
            self.found.alone.add(observed.outcome);
            entry.outcomes.extend(observed.outcome);
        }
        let consistent = by_seed.iter().all(|entry| {
            entry
                .outcomes
                .windows(2)
                .all(|pair| pair[0].is_red() == pair[1].is_red())
        });
        let first_with = |red: bool| {
            by_seed
                .iter()
                .find(|entry| entry.outcomes.first().is_some_and(|o| o.is_red() == red))
                .map(|entry| entry.seed)
        };
        let verdict = match (consistent, first_with(true), first_with(false)) {
            (true, Some(failing_seed), Some(passing_seed)) => {
                self.found.reproduction_seed = Some(failing_seed);
                Verdict::SeedDependent {
                    failing_seed,
                    passing_seed: Some(passing_seed),
                }
            }
            _ => Verdict::FlakyAlone,
        };
        self.found.alone_by_seed = by_seed;
        Ok(verdict)
    }

    /// A red baseline: does the test pass without reseeding? Then the seed fails it: look
    /// for a seed it passes with, and check both seeds keep their outcomes. `None` when
    /// it fails without reseeding too (the seed is not the cause; the search goes on).
    fn unseeded_check(
        &mut self,
        mut by_seed: Vec<SeedOutcomes>,
    ) -> Result<Result<Option<Verdict>, Spent>, P::Error> {
        let mut unseeded = Tally::default();
        for _ in 0..self.plan.unseeded_runs {
            // The seed is recorded for the probe's log only: nothing reseeds.
            let seed = nth_seed(self.plan.base_seed, 0);
            let Ok(observed) = self.probe(Purpose::Unseeded, ProbeKind::Unseeded, seed)? else {
                self.found.unseeded = Some(unseeded);
                return Ok(Err(Spent));
            };
            unseeded.add(observed.outcome);
            if observed.outcome.is_some_and(Outcome::is_red) {
                break;
            }
        }
        self.found.unseeded = Some(unseeded);
        if unseeded.runs < self.plan.unseeded_runs.max(1) || unseeded.red > 0 {
            return Ok(Ok(None));
        }
        let Some(failing_seed) = by_seed.first().map(|entry| entry.seed) else {
            return Ok(Ok(None));
        };
        // More seeds until one passes.
        let mut passing_seed = None;
        while by_seed.len() < self.plan.seed_search as usize {
            let seed = self.next_seed();
            let Ok(observed) = self.probe(Purpose::SeedSearch, ProbeKind::Alone, seed)? else {
                self.found.alone_by_seed.clone_from(&by_seed);
                return Ok(Err(Spent));
            };
            self.found.alone.add(observed.outcome);
            let Some(outcome) = observed.outcome else {
                continue;
            };
            by_seed.push(SeedOutcomes {
                seed,
                outcomes: vec![outcome],
            });
            if !outcome.is_red() {
                passing_seed = Some(seed);
                break;
            }
        }
        // Each seed named runs once more: a seed-dependent test keeps its outcome.
        let mut consistent = true;
        for seed in std::iter::once(failing_seed).chain(passing_seed) {
            let Ok(observed) = self.probe(Purpose::SeedCheck, ProbeKind::Alone, seed)? else {
                self.found.alone_by_seed.clone_from(&by_seed);
                return Ok(Err(Spent));
            };
            self.found.alone.add(observed.outcome);
            if let Some(entry) = by_seed.iter_mut().find(|entry| entry.seed == seed) {
                entry.outcomes.extend(observed.outcome);
                consistent &= entry
                    .outcomes
                    .windows(2)
                    .all(|pair| pair[0].is_red() == pair[1].is_red());
            }
        }
        self.found.alone_by_seed = by_seed;
        if !consistent {
            return Ok(Ok(Some(Verdict::FlakyAlone)));
        }
        self.found.reproduction_seed = Some(failing_seed);
        Ok(Ok(Some(Verdict::SeedDependent {
            failing_seed,
            passing_seed,
        })))
    }

    /// Runs the test repeated in one process; dependent when twice a later repetition is
    /// red after a green first one.
    fn repeat_check(&mut self) -> Result<Result<(), Spent>, P::Error> {
        let count = self.plan.repeat_count.max(2);
        let mut check = RepeatCheck {
            count,
            runs: Vec::new(),
            dependent: false,
        };
        let shows = |repetitions: &[Outcome]| {
            repetitions.first().is_some_and(|o| !o.is_red())
                && repetitions.iter().skip(1).any(|o| o.is_red())
        };
        let seed = nth_seed(self.plan.base_seed, 0);
        for _ in 0..2 {
            let Ok(observed) = self.probe(Purpose::Repeat, ProbeKind::Repeated(count), seed)?
            else {
                self.found.repeat = Some(check);
                return Ok(Err(Spent));
            };
            let dependent = shows(&observed.repetitions);
            if dependent && self.found.telling_failure.is_none() {
                self.found.telling_failure = observed.failure;
            }
            check.runs.push(observed.repetitions);
            if !dependent {
                break;
            }
        }
        check.dependent = check.runs.len() == 2 && check.runs.iter().all(|r| shows(r));
        if check.dependent {
            self.found.reproduction_seed = Some(seed);
        } else {
            self.found.telling_failure = None;
        }
        self.found.repeat = Some(check);
        Ok(Ok(()))
    }

    /// The recorded order, then shuffled orders, until one flips the test.
    fn find_flip(&mut self, baseline_red: bool) -> Result<Result<Option<Flip>, Spent>, P::Error> {
        let flipped =
            |outcome: Option<Outcome>| outcome.is_some_and(|o| o.is_red() != baseline_red);
        let ordered = !matches!(self.support.given, GivenOrder::Unsupported(_));
        let mut flip = None;

        if let Some(context) = self
            .request
            .context
            .as_ref()
            .filter(|c| ordered && !c.before.is_empty())
        {
            let seed = context
                .seed
                .unwrap_or_else(|| nth_seed(self.plan.base_seed, 0));
            let mut check = ContextCheck {
                source: context.source.clone(),
                tests_before: context.before.len(),
                seed,
                tally: Tally::default(),
            };
            for _ in 0..self.plan.context_runs {
                let kind = ProbeKind::Ordered(context.before.clone());
                let Ok(observed) = self.probe(Purpose::Context, kind, seed)? else {
                    self.found.context = Some(check);
                    return Ok(Err(Spent));
                };
                check.tally.add(observed.outcome);
                if flipped(observed.outcome) && flip.is_none() {
                    flip = Some(Flip {
                        from: Purpose::Context,
                        before: observed.before,
                        seed,
                    });
                }
            }
            self.found.context = Some(check);
        }
        if flip.is_some() {
            return Ok(Ok(flip));
        }

        let neighbours = &self.request.neighbours;
        let own_shuffle = self.support.given == GivenOrder::Kept && !self.support.shuffles;
        if neighbours.len() < 2 || !(self.support.shuffles || own_shuffle) {
            return Ok(Ok(None));
        }
        for _ in 0..self.plan.shuffles {
            let seed = self.next_seed();
            let kind = if own_shuffle {
                // The runner keeps a given order: candor shuffles, and the tests after
                // the test cannot matter to it.
                let order = shuffled(neighbours, seed);
                let at = order
                    .iter()
                    .position(|t| *t == self.request.test)
                    .unwrap_or(order.len());
                ProbeKind::Ordered(order[..at].to_vec())
            } else {
                ProbeKind::Shuffled(neighbours.clone())
            };
            let Ok(observed) = self.probe(Purpose::Shuffle, kind, seed)? else {
                return Ok(Err(Spent));
            };
            self.found.shuffles.push(ShuffleRun {
                seed,
                outcome: observed.outcome,
                tests_before: observed.before.len(),
            });
            if flipped(observed.outcome) && flip.is_none() {
                flip = Some(Flip {
                    from: Purpose::Shuffle,
                    before: observed.before,
                    seed,
                });
            }
        }
        Ok(Ok(flip))
    }

    fn bisect_and_verify(&mut self, flip: &Flip, baseline_red: bool) -> Result<Verdict, P::Error> {
        let flipped = |outcome: Option<Outcome>| match outcome {
            None => ProbeOutcome::Unresolved,
            Some(o) if o.is_red() != baseline_red => ProbeOutcome::Flipped,
            Some(_) => ProbeOutcome::Unchanged,
        };
        let mut report = BisectionReport {
            from: flip.from,
            seed: flip.seed,
            candidates: flip.before.len(),
            probes: 0,
            culprits: flip.before.clone(),
            interrupted: false,
            replayed: None,
        };
        if flip.from == Purpose::Shuffle {
            // A shuffled run's order, given back as an order: the bisection needs it to flip.
            let kind = ProbeKind::Ordered(flip.before.clone());
            let Ok(observed) = self.probe(Purpose::Confirm, kind, flip.seed)? else {
                self.found.bisection = Some(report);
                return Ok(self.out_of_budget());
            };
            let replayed = flipped(observed.outcome) == ProbeOutcome::Flipped;
            report.replayed = Some(replayed);
            if !replayed {
                self.found.bisection = Some(report);
                return Ok(Verdict::OrderDependentUnisolated);
            }
        }

        let seed = flip.seed;
        let searched = bisect::bisect(&flip.before, |subset: &[String]| {
            match self.probe(Purpose::Bisect, ProbeKind::Ordered(subset.to_vec()), seed) {
                Ok(Ok(observed)) => Ok(flipped(observed.outcome)),
                Ok(Err(Spent)) => Err(Stop::Budget),
                Err(error) => Err(Stop::Runner(error)),
            }
        });
        let culprits = match searched {
            Ok(found) => {
                report.probes = found.probes;
                report.culprits.clone_from(&found.culprits);
                self.found.bisection = Some(report);
                found.culprits
            }
            Err(stopped) => {
                report.probes = stopped.probes;
                report.culprits = stopped.smallest_flipping;
                report.interrupted = true;
                self.found.bisection = Some(report);
                return match stopped.error {
                    Stop::Budget => Ok(self.out_of_budget()),
                    Stop::Runner(error) => Err(error),
                };
            }
        };

        let mut verification = Verification {
            pair: Tally::default(),
            alone: Tally::default(),
            holds: false,
        };
        let mut holds = true;
        for _ in 0..self.plan.verify_runs {
            let kind = ProbeKind::Ordered(culprits.clone());
            let Ok(observed) = self.probe(Purpose::VerifyPair, kind, seed)? else {
                self.found.verification = Some(verification);
                return Ok(self.out_of_budget());
            };
            verification.pair.add(observed.outcome);
            holds &= flipped(observed.outcome) == ProbeOutcome::Flipped;
            if !baseline_red
                && observed.outcome.is_some_and(Outcome::is_red)
                && self.found.telling_failure.is_none()
            {
                self.found.telling_failure = observed.failure;
            }
        }
        for _ in 0..self.plan.verify_runs {
            let Ok(observed) = self.probe(Purpose::VerifyAlone, ProbeKind::Alone, seed)? else {
                self.found.verification = Some(verification);
                return Ok(self.out_of_budget());
            };
            verification.alone.add(observed.outcome);
            holds &= flipped(observed.outcome) == ProbeOutcome::Unchanged;
            if baseline_red
                && observed.outcome.is_some_and(Outcome::is_red)
                && self.found.telling_failure.is_none()
            {
                self.found.telling_failure = observed.failure;
            }
        }
        verification.holds = holds;
        self.found.verification = Some(verification);
        Ok(match (holds, baseline_red) {
            (true, false) => Verdict::OrderDependentVictim {
                polluters: culprits,
            },
            (true, true) => Verdict::OrderDependentBrittle {
                state_setters: culprits,
            },
            (false, _) => Verdict::OrderDependentUnisolated,
        })
    }

    fn next_seed(&mut self) -> u64 {
        let seed = nth_seed(self.plan.base_seed, self.seed_index);
        self.seed_index += 1;
        seed
    }

    /// Runs one probe unless the budget is spent, and logs it.
    fn probe(
        &mut self,
        purpose: Purpose,
        kind: ProbeKind,
        seed: u64,
    ) -> Result<Result<Observation, Spent>, P::Error> {
        let elapsed = self.clock.elapsed();
        if elapsed >= self.plan.budget {
            self.found.budget.exhausted_during.get_or_insert(purpose);
            return Ok(Err(Spent));
        }
        let other_tests = match &kind {
            ProbeKind::Alone | ProbeKind::Repeated(_) | ProbeKind::Unseeded => 0,
            ProbeKind::Ordered(before) => before.len(),
            ProbeKind::Shuffled(all) => all.len().saturating_sub(1),
        };
        let probe = Probe {
            number: u32::try_from(self.found.probes.len())
                .unwrap_or(u32::MAX)
                .saturating_add(1),
            purpose,
            kind,
            seed,
            time_limit: self.plan.budget.saturating_sub(elapsed),
        };
        let observed = self.prober.run(&probe)?;
        self.found.probes.push(ProbeLog {
            number: probe.number,
            purpose,
            seed,
            other_tests,
            outcome: observed.outcome,
            timed_out: observed.timed_out,
            log: observed.log.clone(),
            record: observed.record.clone(),
            argv: observed.argv.clone(),
        });
        if observed.timed_out && self.clock.elapsed() >= self.plan.budget {
            // Stopped by what was left of the budget: its outcome says nothing.
            self.found.budget.exhausted_during.get_or_insert(purpose);
            return Ok(Err(Spent));
        }
        Ok(Ok(observed))
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::convert::Infallible;

    use super::*;

    const VICTIM: &str = "t::victim";

    /// Time that moves only when a probe runs.
    struct FakeClock(Cell<Duration>);

    impl Clock for FakeClock {
        fn elapsed(&self) -> Duration {
            self.0.get()
        }
    }

    /// The test's outcome from the tests before it, the seed and the repetition.
    type OutcomeRule = dyn Fn(&[String], u64, u32) -> Outcome;

    /// A simulated suite: the test's outcome is a function of what ran before it in its
    /// process, the seed and the repetition.
    struct Suite<'c> {
        clock: &'c FakeClock,
        cost: Duration,
        outcome: Box<OutcomeRule>,
        probes: Vec<Probe>,
        /// Runs a given order in name order instead, as go runs named tests in source order.
        sorts_given: bool,
    }

    impl Prober for Suite<'_> {
        type Error = Infallible;

        fn run(&mut self, probe: &Probe) -> Result<Observation, Infallible> {
            self.clock.0.set(self.clock.0.get() + self.cost);
            self.probes.push(probe.clone());
            let (before, repetitions) = match &probe.kind {
                ProbeKind::Alone | ProbeKind::Unseeded => (Vec::new(), 1),
                ProbeKind::Ordered(before) if self.sorts_given => {
                    let mut sorted = before.clone();
                    sorted.sort();
                    (sorted, 1)
                }
                ProbeKind::Ordered(before) => (before.clone(), 1),
                ProbeKind::Shuffled(all) => {
                    let order = shuffled(all, probe.seed);
                    let at = order
                        .iter()
                        .position(|t| t == VICTIM)
                        .unwrap_or(order.len());
                    (order[..at].to_vec(), 1)
                }
                ProbeKind::Repeated(count) => (Vec::new(), *count),
            };
            let seed = if probe.kind == ProbeKind::Unseeded {
                UNSEEDED
            } else {
                probe.seed
            };
            let outcomes: Vec<Outcome> = (0..repetitions)
                .map(|repetition| (self.outcome)(&before, seed, repetition))
                .collect();
            let failure = outcomes.iter().any(|o| o.is_red()).then(|| Failure {
                exception: Some("AssertionError".into()),
                message: "assert settings.MODE == 'default'".into(),
                text: ">       assert settings.MODE == \"default\"".into(),
                frames: Vec::new(),
                failing_frame: None,
            });
            Ok(Observation {
                outcome: outcomes.first().copied(),
                before,
                repetitions: outcomes,
                failure,
                ..Observation::default()
            })
        }
    }

    /// The seed a simulated suite sees when the runner's reseeding is off.
    const UNSEEDED: u64 = u64::MAX;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("t::test_{i:03}")).collect()
    }

    fn request(context: Option<Vec<String>>, neighbours: Vec<String>) -> Request {
        Request {
            test: VICTIM.to_owned(),
            context: context.map(|before| RecordedOrder {
                source: "a results file".into(),
                before,
                seed: Some(4242),
            }),
            neighbours,
        }
    }

    const PYTEST_LIKE: OrderSupport = OrderSupport {
        given: GivenOrder::Kept,
        shuffles: true,
        repeats: true,
        seed_reseeds_tests: true,
        unseeded: true,
    };

    fn investigate_with(
        request: &Request,
        support: &OrderSupport,
        budget: Duration,
        outcome: impl Fn(&[String], u64, u32) -> Outcome + 'static,
    ) -> (Investigation, Vec<Probe>) {
        let clock = FakeClock(Cell::new(Duration::ZERO));
        let mut suite = Suite {
            clock: &clock,
            cost: Duration::from_secs(1),
            outcome: Box::new(outcome),
            probes: Vec::new(),
            sorts_given: matches!(support.given, GivenOrder::Fixed(_)),
        };
        let plan = Plan::new(17, budget);
        let found = drive(request, &plan, support, &mut suite, &clock)
            .unwrap_or_else(|never| match never {});
        (found, suite.probes)
    }

    fn red_if(red: bool) -> Outcome {
        if red { Outcome::Fail } else { Outcome::Pass }
    }

    #[test]
    fn a_polluter_among_fifty_is_found_and_verified() {
        let before = names(50);
        let polluter = before[17].clone();
        let (found, probes) = investigate_with(
            &request(Some(before), Vec::new()),
            &PYTEST_LIKE,
            Duration::from_secs(600),
            move |ran, _, _| red_if(ran.contains(&polluter)),
        );
        assert_eq!(
            found.verdict,
            Verdict::OrderDependentVictim {
                polluters: vec!["t::test_017".into()]
            }
        );
        let bisection = found.bisection.as_ref().expect("bisected");
        assert_eq!(bisection.candidates, 50);
        assert!(bisection.probes <= 7, "{bisection:?}");
        assert_eq!(bisection.seed, 4242, "the recorded seed is kept");
        let verification = found.verification.as_ref().expect("verified");
        assert_eq!(verification.pair.red, 3);
        assert_eq!(verification.alone.red, 0);
        assert_eq!(found.context.as_ref().map(|c| c.tally.red), Some(2));
        assert_eq!(found.reproduction_seed, Some(4242));
        assert!(found.telling_failure.is_some());
        assert_eq!(found.probes.len(), probes.len());
        assert!(found.budget.exhausted_during.is_none());
        assert!(found.verdict.explains_red());
    }

    #[test]
    fn a_brittle_test_and_its_state_setter() {
        let before = names(30);
        let setter = before[4].clone();
        let (found, _) = investigate_with(
            &request(Some(before), Vec::new()),
            &PYTEST_LIKE,
            Duration::from_secs(600),
            move |ran, _, _| red_if(!ran.contains(&setter)),
        );
        assert_eq!(
            found.verdict,
            Verdict::OrderDependentBrittle {
                state_setters: vec!["t::test_004".into()]
            }
        );
        assert_eq!(found.baseline, Some(Outcome::Fail));
        assert!(
            found.repeat.is_none(),
            "a red test is not checked for repeats"
        );
    }

    #[test]
    fn outcomes_that_follow_the_seed() {
        let (found, probes) = investigate_with(
            &request(None, Vec::new()),
            &PYTEST_LIKE,
            Duration::from_secs(600),
            |_, seed, _| red_if(seed % 3 == 0),
        );
        let Verdict::SeedDependent {
            failing_seed,
            passing_seed,
        } = found.verdict
        else {
            panic!("seed-dependent: {:?}", found.verdict);
        };
        assert_eq!(failing_seed % 3, 0);
        assert_ne!(passing_seed.expect("a passing seed") % 3, 0);
        assert!(probes.iter().any(|p| p.purpose == Purpose::SeedCheck));
        assert_eq!(found.reproduction_seed, Some(failing_seed));
    }

    /// Issue 16 item 1: red under every seed of the alone stage, green without reseeding.
    #[test]
    fn a_test_red_with_almost_every_seed_but_green_unseeded_is_seed_dependent() {
        // Green without reseeding and with one seed in 23 (a 4% pass rate, as a module-level
        // `random.seed` under pytest-randomly); seeds from base 17.
        let passes = |seed: u64| seed == UNSEEDED || seed.is_multiple_of(23);
        let (found, probes) = investigate_with(
            &request(Some(names(5)), names(5)),
            &PYTEST_LIKE,
            Duration::from_secs(600),
            move |_, seed, _| red_if(!passes(seed)),
        );
        let Verdict::SeedDependent {
            failing_seed,
            passing_seed,
        } = found.verdict
        else {
            panic!("seed-dependent: {:?} after {probes:?}", found.verdict);
        };
        assert!(!passes(failing_seed));
        let unseeded = found.unseeded.expect("the unseeded runs");
        assert_eq!((unseeded.runs, unseeded.red), (3, 0));
        let tried = found.alone_by_seed.len();
        assert!(tried <= 40, "{tried}");
        match passing_seed {
            Some(seed) => assert!(passes(seed)),
            None => assert_eq!(tried, 40),
        }
        // Neither the order nor a shuffle is tried: the seed explains it.
        assert!(probes.iter().all(|p| !matches!(
            p.purpose,
            Purpose::Context | Purpose::Shuffle | Purpose::Bisect
        )));
        let words = super::super::explain::seed_words(&found).expect("seed words");
        assert!(
            words.starts_with("passes without reseeding (3 of 3 runs); fails with "),
            "{words}"
        );
    }

    /// Issue 16 item 1: red without reseeding too, the seed is not the cause; the search
    /// goes on to the orders.
    #[test]
    fn a_test_red_without_reseeding_too_goes_on_to_the_orders() {
        let (found, probes) = investigate_with(
            &request(Some(names(5)), names(5)),
            &PYTEST_LIKE,
            Duration::from_secs(600),
            |_, _, _| Outcome::Fail,
        );
        assert_eq!(found.verdict, Verdict::FailsInEveryOrder);
        assert_eq!(found.unseeded.map(|t| t.red), Some(1));
        assert!(probes.iter().any(|p| p.purpose == Purpose::Context));
        assert!(!probes.iter().any(|p| p.purpose == Purpose::SeedSearch));
    }

    #[test]
    fn mixed_outcomes_without_a_reseeding_runner_are_flaky_alone() {
        let go_like = OrderSupport {
            given: GivenOrder::Fixed("source order"),
            shuffles: true,
            repeats: true,
            seed_reseeds_tests: false,
            unseeded: false,
        };
        let (found, _) = investigate_with(
            &request(None, Vec::new()),
            &go_like,
            Duration::from_secs(600),
            |_, seed, _| red_if(seed % 2 == 0),
        );
        assert_eq!(found.verdict, Verdict::FlakyAlone);
    }

    #[test]
    fn a_seed_that_does_not_keep_its_outcome_is_flaky_alone() {
        let flips = Cell::new(0u32);
        let flips = std::rc::Rc::new(flips);
        let counter = flips.clone();
        let (found, _) = investigate_with(
            &request(None, Vec::new()),
            &PYTEST_LIKE,
            Duration::from_secs(600),
            move |_, _, _| {
                counter.set(counter.get() + 1);
                red_if(counter.get().is_multiple_of(3))
            },
        );
        assert_eq!(found.verdict, Verdict::FlakyAlone);
        assert!(flips.get() > 6);
    }

    #[test]
    fn a_second_run_in_one_process_fails() {
        let (found, _) = investigate_with(
            &request(Some(names(5)), Vec::new()),
            &PYTEST_LIKE,
            Duration::from_secs(600),
            |_, _, repetition| red_if(repetition > 0),
        );
        assert_eq!(found.verdict, Verdict::RepeatDependent { count: 2 });
        let repeat = found.repeat.as_ref().expect("checked");
        assert_eq!(repeat.runs.len(), 2);
        assert!(repeat.dependent);
    }

    #[test]
    fn a_shuffle_finds_the_order_the_context_did_not_show() {
        let mut neighbours = names(12);
        neighbours.push(VICTIM.to_owned());
        let polluter = neighbours[9].clone();
        let (found, probes) = investigate_with(
            // The recorded order ran the polluter after the test.
            &request(Some(names(3)), neighbours),
            &PYTEST_LIKE,
            Duration::from_secs(600),
            move |ran, _, _| red_if(ran.contains(&polluter)),
        );
        assert_eq!(
            found.verdict,
            Verdict::OrderDependentVictim {
                polluters: vec!["t::test_009".into()]
            }
        );
        assert_eq!(found.context.as_ref().map(|c| c.tally.red), Some(0));
        assert!(
            found
                .shuffles
                .iter()
                .any(|s| s.outcome == Some(Outcome::Fail))
        );
        assert!(probes.iter().any(|p| p.purpose == Purpose::Confirm));
        assert_eq!(
            found.bisection.as_ref().map(|b| b.from),
            Some(Purpose::Shuffle)
        );
    }

    #[test]
    fn a_shuffle_a_fixed_order_runner_cannot_replay_says_no_search_was_possible() {
        // go: named tests run in source order, so the shuffle's order given back is not
        // the order that flipped the test. The test is red only when a later-named test
        // ran before it.
        let go_like = OrderSupport {
            given: GivenOrder::Fixed("go runs named tests in source order"),
            ..PYTEST_LIKE
        };
        let mut neighbours = names(12);
        neighbours.push(VICTIM.to_owned());
        let (found, probes) = investigate_with(
            &request(None, neighbours),
            &go_like,
            Duration::from_secs(600),
            |ran, _, _| red_if(ran.windows(2).any(|pair| pair[0] > pair[1])),
        );
        assert_eq!(found.verdict, Verdict::OrderDependentUnisolated);
        let bisection = found.bisection.as_ref().expect("a shuffle flipped it");
        assert_eq!(bisection.replayed, Some(false));
        assert_eq!(bisection.probes, 0);
        assert!(!probes.iter().any(|p| p.purpose == Purpose::Bisect));
    }

    #[test]
    fn a_runner_that_keeps_order_but_cannot_shuffle_gets_candors_shuffle() {
        let kept_only = OrderSupport {
            shuffles: false,
            ..PYTEST_LIKE
        };
        let mut neighbours = names(12);
        neighbours.push(VICTIM.to_owned());
        let polluter = neighbours[2].clone();
        let (found, probes) = investigate_with(
            &request(None, neighbours),
            &kept_only,
            Duration::from_secs(600),
            move |ran, _, _| red_if(ran.contains(&polluter)),
        );
        assert!(
            probes
                .iter()
                .filter(|p| p.purpose == Purpose::Shuffle)
                .all(|p| matches!(p.kind, ProbeKind::Ordered(_)))
        );
        assert_eq!(
            found.verdict,
            Verdict::OrderDependentVictim {
                polluters: vec!["t::test_002".into()]
            }
        );
    }

    #[test]
    fn green_everywhere_and_red_everywhere() {
        let mut neighbours = names(4);
        neighbours.push(VICTIM.to_owned());
        let (found, _) = investigate_with(
            &request(Some(names(4)), neighbours.clone()),
            &PYTEST_LIKE,
            Duration::from_secs(600),
            |_, _, _| Outcome::Pass,
        );
        assert_eq!(found.verdict, Verdict::NotReproduced);
        assert_eq!(found.shuffles.len(), 4);
        assert!(!found.verdict.explains_red());
        let (found, _) = investigate_with(
            &request(Some(names(4)), neighbours),
            &PYTEST_LIKE,
            Duration::from_secs(600),
            |_, _, _| Outcome::Error,
        );
        assert_eq!(found.verdict, Verdict::FailsInEveryOrder);
    }

    #[test]
    fn the_budget_stops_the_search_and_says_where() {
        let before = names(200);
        let polluter = before[150].clone();
        // Alone (6), repeat (1), context (2), then three bisection probes.
        let (found, probes) = investigate_with(
            &request(Some(before), Vec::new()),
            &PYTEST_LIKE,
            Duration::from_secs(12),
            move |ran, _, _| red_if(ran.contains(&polluter)),
        );
        assert_eq!(probes.len(), 12);
        assert_eq!(found.budget.exhausted_during, Some(Purpose::Bisect));
        assert_eq!(found.verdict, Verdict::OrderDependentUnisolated);
        let bisection = found.bisection.as_ref().expect("started");
        assert!(bisection.interrupted);
        // The first 100 and the first 150 do not flip, the first 175 do: the smallest
        // flipping set seen.
        assert_eq!(bisection.culprits, names(200)[..175].to_vec());
        assert!(probes.iter().all(|p| p.time_limit > Duration::ZERO));
        assert!(!found.verdict.explains_red());
    }

    #[test]
    fn a_budget_spent_before_anything_is_inconclusive() {
        let (found, probes) = investigate_with(
            &request(None, Vec::new()),
            &PYTEST_LIKE,
            Duration::from_secs(3),
            |_, _, _| Outcome::Pass,
        );
        assert_eq!(probes.len(), 3);
        assert_eq!(found.verdict, Verdict::Inconclusive);
        assert_eq!(found.budget.exhausted_during, Some(Purpose::Alone));
    }

    #[test]
    fn a_test_that_never_runs() {
        struct Nothing;
        impl Prober for Nothing {
            type Error = Infallible;
            fn run(&mut self, _: &Probe) -> Result<Observation, Infallible> {
                Ok(Observation::default())
            }
        }
        let clock = FakeClock(Cell::new(Duration::ZERO));
        let plan = Plan::new(1, Duration::from_secs(60));
        let found = drive(
            &request(None, Vec::new()),
            &plan,
            &PYTEST_LIKE,
            &mut Nothing,
            &clock,
        )
        .unwrap_or_else(|never| match never {});
        assert_eq!(found.verdict, Verdict::NotRun);
    }
}
