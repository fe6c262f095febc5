//! Branch against merge base: the interleaved run loop of `candor compare` and the place
//! where its verdict is made ([`verdict`]), plus the check behind `candor repro`
//! ([`repro_verdict`]). Runs come from a callback, so this module never starts a process:
//! the command supplies real runs, the statistics tests supply simulated ones.

pub mod ticket;

use serde::Serialize;

use crate::records::{RunRecord, Side};
use crate::stats::sequential::{Boundary, Design, Tally};
use crate::stats::wilson::{Interval, Z_95, wilson};

/// What a comparison concludes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CompareVerdict {
    /// The branch failed every run and the base passed every run, and the runs are
    /// enough to call it.
    DeterministicRegression,
    /// The branch fails more often than the base (one-sided test at alpha).
    BranchWorse,
    /// No evidence the change raised the rate: not the change's doing.
    SameRate,
    /// Broken on the base too: both sides failed every run.
    FailsBoth,
    /// No failure reproduced on either side.
    PassesBoth,
}

impl CompareVerdict {
    /// The spelling in output.
    pub fn as_str(self) -> &'static str {
        match self {
            CompareVerdict::DeterministicRegression => "deterministic-regression",
            CompareVerdict::BranchWorse => "branch-worse",
            CompareVerdict::SameRate => "same-rate",
            CompareVerdict::FailsBoth => "fails-both",
            CompareVerdict::PassesBoth => "passes-both",
        }
    }

    /// Whether the change is to blame: exit 1.
    pub fn is_negative(self) -> bool {
        matches!(
            self,
            CompareVerdict::DeterministicRegression | CompareVerdict::BranchWorse
        )
    }

    /// What the reader does next, in one sentence.
    pub fn advice(self) -> &'static str {
        match self {
            CompareVerdict::DeterministicRegression => {
                "the change breaks this test every time: fix the change, not the test"
            }
            CompareVerdict::BranchWorse => {
                "the change raised the failure rate: look for the race or dependency it added"
            }
            CompareVerdict::SameRate => {
                "no evidence this change raised the failure rate: file the ticket, do not write a fix here"
            }
            CompareVerdict::FailsBoth => {
                "broken on the merge base too: not this change; report it against the base"
            }
            CompareVerdict::PassesBoth => {
                "no failure reproduced in isolation: pin the seed of the red run and rerun it in its suite (candor order); write nothing yet"
            }
        }
    }
}

/// Why the run loop stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stop {
    /// The efficacy boundary was crossed.
    Efficacy,
    /// An increase of the size the design is for was ruled out early.
    Futility,
    /// Every planned run was made.
    Exhausted,
}

/// The verdict from both sides' tallies and why the loop stopped. This is where a
/// comparison's verdict is made.
pub fn verdict(base: Tally, branch: Tally, stop: Stop) -> CompareVerdict {
    if stop == Stop::Efficacy {
        return if base.failures == 0 && branch.all_failed() {
            CompareVerdict::DeterministicRegression
        } else {
            CompareVerdict::BranchWorse
        };
    }
    if base.failures == 0 && branch.failures == 0 {
        CompareVerdict::PassesBoth
    } else if base.all_failed() && branch.all_failed() {
        CompareVerdict::FailsBoth
    } else {
        CompareVerdict::SameRate
    }
}

/// What the run loop measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// The base's runs and failures.
    pub base: Tally,
    /// The branch's runs and failures.
    pub branch: Tally,
    /// Why it stopped.
    pub stop: Stop,
    /// Fisher's one-sided p-value at the last look.
    pub p_value: f64,
    /// Every run, in the order made.
    pub records: Vec<RunRecord>,
}

impl Measurement {
    /// The verdict.
    pub fn verdict(&self) -> CompareVerdict {
        verdict(self.base, self.branch, self.stop)
    }

    /// Total runs made.
    pub fn runs(&self) -> u32 {
        self.base.runs + self.branch.runs
    }
}

/// Runs pairs (base, then branch) until the design stops: interleaved so that drift of
/// the machine (load, caches, the clock) hits both sides alike. `run` makes one run of the
/// given side with the given sequence number (from 1); `after_pair` sees the tallies after
/// each pair, for progress.
pub fn measure<E>(
    design: &Design,
    mut run: impl FnMut(Side, u32) -> Result<RunRecord, E>,
    mut after_pair: impl FnMut(Tally, Tally),
) -> Result<Measurement, E> {
    let mut base = Tally::default();
    let mut branch = Tally::default();
    let mut records = Vec::new();
    let mut sequence = 0;
    loop {
        for (side, tally) in [(Side::Base, &mut base), (Side::Branch, &mut branch)] {
            sequence += 1;
            let record = run(side, sequence)?;
            tally.runs += 1;
            if record.failed() {
                tally.failures += 1;
            }
            records.push(record);
        }
        after_pair(base, branch);
        let (stop, p_value) = match design.judge(base, branch) {
            Boundary::Continue => continue,
            Boundary::Efficacy { p_value } => (Stop::Efficacy, p_value),
            Boundary::Futility { p_value } => (Stop::Futility, p_value),
            Boundary::Exhausted { p_value } => (Stop::Exhausted, p_value),
        };
        return Ok(Measurement {
            base,
            branch,
            stop,
            p_value,
            records,
        });
    }
}

/// What the design behind a call protects at the base rate the runs saw: a rise from
/// `from` to `to` (or beyond) is called branch-worse with chance `power`, computed exactly
/// (`Design::operating`). A same-rate call is as strong as this, whatever the runs it
/// happened to take.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Protection {
    /// The base's observed failure rate.
    pub from: f64,
    /// The rise futility was designed to protect from there.
    pub to: f64,
    /// The chance the design calls that rise branch-worse.
    pub power: f64,
}

impl Protection {
    /// The protection of `design` at the base's observed rate.
    pub fn of(design: &Design, base: Tally) -> Protection {
        let from = base.rate().unwrap_or(0.0);
        let to = design.protected_rate(from);
        Protection {
            from,
            to,
            power: design.operating(from, to).branch_worse,
        }
    }
}

/// One side's figures for output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SideSummary {
    /// The commit.
    pub commit: Option<String>,
    /// Runs made.
    pub runs: u32,
    /// Failures among them.
    pub failures: u32,
    /// The failure rate.
    pub rate: Option<f64>,
    /// Its 95% Wilson interval.
    pub interval: Option<Interval>,
    /// The seeds used, in run order.
    pub seeds: Vec<Option<u64>>,
}

impl SideSummary {
    /// The summary of one side's records.
    pub fn of(records: &[RunRecord], side: Side, tally: Tally) -> SideSummary {
        let mine: Vec<&RunRecord> = records.iter().filter(|r| r.side == side).collect();
        SideSummary {
            commit: mine.first().and_then(|r| r.commit.clone()),
            runs: tally.runs,
            failures: tally.failures,
            rate: tally.rate(),
            interval: wilson(u64::from(tally.failures), u64::from(tally.runs), Z_95),
            seeds: mine.iter().map(|r| r.seed).collect(),
        }
    }
}

/// What `candor repro` concludes about a claimed deterministic reproduction: with the
/// seed, the base fails every run and the branch passes every run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReproVerdict {
    /// Both halves of the claim held in every run.
    Confirmed,
    /// The base passed at least once: the seed does not reproduce the failure there.
    BaseDidNotFail,
    /// The branch failed at least once: the fix does not hold under the seed.
    BranchFailed,
    /// Neither half held.
    Neither,
}

impl ReproVerdict {
    /// The spelling in output.
    pub fn as_str(self) -> &'static str {
        match self {
            ReproVerdict::Confirmed => "confirmed",
            ReproVerdict::BaseDidNotFail => "base-did-not-fail",
            ReproVerdict::BranchFailed => "branch-failed",
            ReproVerdict::Neither => "neither",
        }
    }
}

/// The repro verdict from both sides' tallies.
pub fn repro_verdict(base: Tally, branch: Tally) -> ReproVerdict {
    let base_held = base.all_failed();
    let branch_held = branch.runs > 0 && branch.failures == 0;
    match (base_held, branch_held) {
        (true, true) => ReproVerdict::Confirmed,
        (false, true) => ReproVerdict::BaseDidNotFail,
        (true, false) => ReproVerdict::BranchFailed,
        (false, false) => ReproVerdict::Neither,
    }
}

/// The i-th run's seed from a base seed: SplitMix64 (Steele, Lea & Flood, "Fast splittable
/// pseudorandom number generators", OOPSLA 2014), cut below 2^32 because pytest-randomly
/// hands the seed to NumPy, which refuses larger ones. Distinct runs get distinct,
/// reproducible seeds.
pub fn run_seed(base_seed: u64, sequence: u32) -> u64 {
    let mut z = base_seed.wrapping_add(u64::from(sequence).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) % (1 << 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(runs: u32, failures: u32) -> Tally {
        Tally { runs, failures }
    }

    #[test]
    fn verdicts_follow_the_table() {
        use CompareVerdict::*;
        assert_eq!(
            verdict(tally(5, 0), tally(5, 5), Stop::Efficacy),
            DeterministicRegression
        );
        assert_eq!(
            verdict(tally(15, 1), tally(15, 9), Stop::Efficacy),
            BranchWorse
        );
        assert_eq!(
            verdict(tally(10, 0), tally(10, 0), Stop::Futility),
            PassesBoth
        );
        assert_eq!(
            verdict(tally(10, 10), tally(10, 10), Stop::Futility),
            FailsBoth
        );
        assert_eq!(
            verdict(tally(15, 2), tally(15, 3), Stop::Futility),
            SameRate
        );
        // A branch that fixes a test the base breaks is not the change's fault.
        assert_eq!(
            verdict(tally(30, 30), tally(30, 0), Stop::Exhausted),
            SameRate
        );
        assert!(BranchWorse.is_negative() && !SameRate.is_negative());
    }

    #[test]
    fn repro_names_the_side_that_broke_the_claim() {
        assert_eq!(
            repro_verdict(tally(5, 5), tally(5, 0)),
            ReproVerdict::Confirmed
        );
        assert_eq!(
            repro_verdict(tally(5, 4), tally(5, 0)),
            ReproVerdict::BaseDidNotFail
        );
        assert_eq!(
            repro_verdict(tally(5, 5), tally(5, 1)),
            ReproVerdict::BranchFailed
        );
        assert_eq!(
            repro_verdict(tally(5, 0), tally(5, 5)),
            ReproVerdict::Neither
        );
    }

    #[test]
    fn run_seeds_are_reproducible_distinct_and_small() {
        let seeds: Vec<u64> = (1..=1000).map(|i| run_seed(42, i)).collect();
        assert_eq!(
            seeds,
            (1..=1000).map(|i| run_seed(42, i)).collect::<Vec<_>>()
        );
        let mut unique = seeds.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), seeds.len());
        assert!(seeds.iter().all(|s| *s < 1 << 32));
    }
}
