//! Simulated comparisons for the statistics only, shared by tests/it/compare_simulation.rs
//! and `cargo bench --bench compare`: the real run loop (`compare::measure`) fed runs that
//! fail with each side's chosen probability, drawn from a seeded generator.

#![allow(dead_code, reason = "the test and the bench read different parts")]

use std::convert::Infallible;
use std::path::PathBuf;

use candor::compare::{self, CompareVerdict};
use candor::records::{RunRecord, SCHEMA, Side};
use candor::results::Outcome;
use candor::stats::sequential::Design;

/// SplitMix64 (Steele, Lea & Flood 2014): small, fast and good enough for Bernoulli draws.
pub struct Draws(pub u64);

impl Draws {
    /// A uniform draw in [0, 1).
    pub fn next_unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn record(side: Side, sequence: u32, failed: bool) -> RunRecord {
    RunRecord {
        schema: SCHEMA.to_owned(),
        test: "sim::test".to_owned(),
        side,
        sequence,
        commit: None,
        seed: Some(u64::from(sequence)),
        fixture_hash: None,
        outcome: if failed { Outcome::Fail } else { Outcome::Pass },
        found: true,
        signature: None,
        exception: None,
        message: None,
        failing_line: None,
        duration_seconds: None,
        wall_seconds: 0.0,
        argv: Vec::new(),
        workers: None,
        exit_status: i32::from(failed),
        timed_out: false,
        started_at: jiff::Timestamp::UNIX_EPOCH,
        log: PathBuf::new(),
        report: PathBuf::new(),
        new_test: false,
    }
}

/// What many simulated comparisons of one case gave.
pub struct Scenario {
    /// Share called branch-worse or deterministic-regression.
    pub branch_worse: f64,
    /// Share called deterministic-regression.
    pub deterministic: f64,
    /// Mean runs, both sides.
    pub mean_runs: f64,
}

/// `simulations` comparisons with the base failing at `base_rate` and the branch at
/// `branch_rate`.
pub fn simulate(
    design: &Design,
    base_rate: f64,
    branch_rate: f64,
    simulations: u32,
    draws: &mut Draws,
) -> Scenario {
    let (mut worse, mut deterministic, mut runs) = (0u32, 0u32, 0u64);
    for _ in 0..simulations {
        let measured = compare::measure(
            design,
            |side, sequence| {
                let rate = if side == Side::Base {
                    base_rate
                } else {
                    branch_rate
                };
                Ok::<_, Infallible>(record(side, sequence, draws.next_unit() < rate))
            },
            |_, _| {},
        )
        .unwrap_or_else(|never| match never {});
        runs += u64::from(measured.runs());
        match measured.verdict() {
            CompareVerdict::BranchWorse => worse += 1,
            CompareVerdict::DeterministicRegression => {
                worse += 1;
                deterministic += 1;
            }
            _ => {}
        }
    }
    let n = f64::from(simulations);
    Scenario {
        branch_worse: f64::from(worse) / n,
        deterministic: f64::from(deterministic) / n,
        mean_runs: runs as f64 / n,
    }
}
