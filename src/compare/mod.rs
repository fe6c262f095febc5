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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CompareVerdict {
    /// The branch failed every run and the base passed every run, and the runs are
    /// enough to call it.
    DeterministicRegression,
    /// The branch fails more often than the base (one-sided test at alpha).
    BranchWorse,
    /// No evidence the change raised the rate: not the change's doing.
    SameRate,
    /// The branch failed less often than the base, short of a branch-worse call:
    /// consistent with a fix. No ticket: there is nothing to quarantine on the branch.
    FewerFailures,
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
            CompareVerdict::FewerFailures => "fewer-failures",
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
            CompareVerdict::FewerFailures => {
                "fewer failures on the branch: consistent with a fix; no ticket to file"
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
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
    } else if fails_less(branch, base) {
        CompareVerdict::FewerFailures
    } else {
        CompareVerdict::SameRate
    }
}

/// Whether `a`'s failure rate is below `b`'s (cross-multiplied: no rounding).
fn fails_less(a: Tally, b: Tally) -> bool {
    u64::from(a.failures) * u64::from(b.runs) < u64::from(b.failures) * u64::from(a.runs)
}

/// What a fewer-failures comparison shows about the drop, and what more runs would.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Drop {
    /// The base's observed failure rate.
    pub from: f64,
    /// The branch's.
    pub to: f64,
    /// Fisher's one-sided p-value for "the branch fails less" on the runs made.
    pub p_value: f64,
    /// Runs per side a one-sided Fisher test at alpha needs to show this drop with 80%
    /// power (`stats::sequential::runs_to_show_drop`); `None` beyond [`DROP_SEARCH_RUNS`].
    pub runs_per_side: Option<u32>,
    /// Of those, the runs not yet made, both sides together.
    pub more_runs: Option<u32>,
}

/// The most runs per side the drop's power search considers.
pub const DROP_SEARCH_RUNS: u32 = 400;

impl Drop {
    /// The drop from `base` to `branch`, at `alpha`; `None` unless the branch fails less.
    pub fn of(base: Tally, branch: Tally, alpha: f64) -> Option<Drop> {
        if !fails_less(branch, base) {
            return None;
        }
        let from = base.rate()?;
        let to = branch.rate()?;
        let runs_per_side =
            crate::stats::sequential::runs_to_show_drop(from, to, alpha, 0.8, DROP_SEARCH_RUNS);
        let made = base.runs.min(branch.runs);
        Some(Drop {
            from,
            to,
            p_value: crate::stats::sequential::fisher_one_sided(branch, base),
            runs_per_side,
            more_runs: runs_per_side.map(|n| 2 * n.saturating_sub(made)),
        })
    }

    /// The sentence: the drop shown, or how many more runs would show it.
    pub fn sentence(&self, alpha: f64) -> String {
        let drop = format!(
            "a drop from {:.0}% to {:.0}% failures",
            self.from * 100.0,
            self.to * 100.0
        );
        let method = format!(
            "one-sided Fisher exact test at alpha {alpha}, power computed exactly over both binomials"
        );
        if self.p_value <= alpha {
            return format!(
                "fewer failures on the branch: consistent with a fix; these runs show {drop} (one-sided p = {:.4}, Fisher exact)",
                self.p_value
            );
        }
        match (self.more_runs, self.runs_per_side) {
            (Some(more), Some(per_side)) => format!(
                "fewer failures on the branch: consistent with a fix; {} more runs ({per_side} per side in all) would show {drop} with 80% power ({method})",
                more.max(2)
            ),
            _ => format!(
                "fewer failures on the branch: consistent with a fix; {drop} is too small to show with 80% power in {DROP_SEARCH_RUNS} runs per side ({method})"
            ),
        }
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
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
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
        // A branch that fixes a test the base breaks is not the change's fault: it fails
        // less (issue 16 item 3).
        assert_eq!(
            verdict(tally(30, 30), tally(30, 0), Stop::Exhausted),
            FewerFailures
        );
        assert_eq!(
            verdict(tally(14, 4), tally(14, 0), Stop::Futility),
            FewerFailures
        );
        assert_eq!(
            verdict(tally(14, 2), tally(14, 2), Stop::Futility),
            SameRate
        );
        assert!(BranchWorse.is_negative() && !SameRate.is_negative());
    }

    /// Issue 16 item 3: the base 1/4, 2/4, 1/6 red, the branch never.
    #[test]
    fn a_drop_says_how_many_more_runs_would_show_it() {
        for (base, rate) in [(tally(4, 1), 25), (tally(4, 2), 50), (tally(6, 1), 17)] {
            let branch = tally(base.runs, 0);
            let drop = Drop::of(base, branch, 0.05).expect("a drop");
            let per_side = drop.runs_per_side.expect("a run count");
            assert!(per_side > base.runs, "{drop:?}");
            assert_eq!(drop.more_runs, Some(2 * (per_side - base.runs)));
            let sentence = drop.sentence(0.05);
            assert!(
                sentence.starts_with(&format!(
                    "fewer failures on the branch: consistent with a fix; {} more runs ({per_side} per side in all) would show a drop from {rate}% to 0% failures with 80% power",
                    2 * (per_side - base.runs)
                )),
                "{sentence}"
            );
        }
        // Shown already: 30 of 30 against none.
        let shown = Drop::of(tally(30, 30), tally(30, 0), 0.05).expect("a drop");
        assert!(
            shown
                .sentence(0.05)
                .contains("these runs show a drop from 100% to 0%")
        );
        assert_eq!(Drop::of(tally(14, 0), tally(14, 4), 0.05), None);
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
