//! The sequential two-sample test behind `candor compare`: is a test's failure rate higher
//! on the branch than on the merge base? Runs arrive in pairs (base, branch); at planned
//! looks the design either stops or asks for more. Pure arithmetic, no I/O.
//!
//! Method (docs/compare.md has the worked reasoning and the measured operating
//! characteristics):
//! - **Statistic**: Fisher's exact test, one-sided (R. A. Fisher, *Statistical Methods for
//!   Research Workers*, 1925, §21.02), whose p-value is valid for the composite null "the
//!   branch's rate is not higher", whatever the common rate.
//! - **Boundaries**: a linear alpha-spending function (K. K. G. Lan & D. L. DeMets,
//!   "Discrete sequential boundaries for clinical trials", *Biometrika* 70(3), 1983) gives
//!   each look a share of alpha. Spending by a union bound alone is valid but, with a
//!   discrete conservative statistic, spends a small fraction of alpha; so every share is
//!   scaled by one factor chosen by computing the design's exact type I error (the chance
//!   that any look rejects, by dynamic programming over the joint binomial counts) on a
//!   grid of common rates and keeping the largest factor whose worst case stays at or
//!   below alpha. This is the exact-calibration approach to group-sequential designs for
//!   binomial data (C. Jennison & B. W. Turnbull, *Group Sequential Methods with
//!   Applications to Clinical Trials*, 2000, ch. 12).
//! - **Futility** (non-binding, so it cannot raise the type I error): stop when the upper
//!   one-sided 95% confidence bound of the rate difference, by Newcombe's hybrid score
//!   method (R. G. Newcombe, "Interval estimation for the difference between independent
//!   proportions", *Statistics in Medicine* 17, 1998, method 10), falls below the smallest
//!   increase the design is meant to catch.

use super::wilson::wilson;

/// z for a one-sided 95% bound (the 0.95 quantile of the standard normal).
pub const Z_ONE_SIDED_95: f64 = 1.644_853_626_951_472;

/// Runs and failures on one side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Runs that produced an outcome.
    pub runs: u32,
    /// Of those, the runs in which the test failed.
    pub failures: u32,
}

impl Tally {
    /// The observed failure rate; `None` before the first run.
    pub fn rate(self) -> Option<f64> {
        (self.runs > 0).then(|| f64::from(self.failures) / f64::from(self.runs))
    }

    /// Whether every run failed (and there was at least one).
    pub fn all_failed(self) -> bool {
        self.runs > 0 && self.failures == self.runs
    }
}

/// What a look decides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Boundary {
    /// Not a look, or a look that stops nothing: run another pair.
    Continue,
    /// The branch's rate is higher: the efficacy boundary was crossed.
    Efficacy {
        /// Fisher's one-sided p-value at this look (nominal, not adjusted for the looks).
        p_value: f64,
    },
    /// An increase of the size the design is for is already ruled out.
    Futility {
        /// Fisher's one-sided p-value at this look.
        p_value: f64,
    },
    /// The last look passed without crossing the efficacy boundary.
    Exhausted {
        /// Fisher's one-sided p-value at the last look.
        p_value: f64,
    },
}

/// A calibrated group-sequential design.
#[derive(Debug, Clone, PartialEq)]
pub struct Design {
    alpha: f64,
    min_increase: f64,
    looks: Vec<u32>,
    thresholds: Vec<f64>,
    calibration: f64,
}

/// Common failure rates on which the type I error is computed during calibration: every
/// hundredth from 0.01 to 0.99 (the error is 0 at 0 and 1, and a polynomial in between).
const CALIBRATION_GRID: usize = 99;

impl Design {
    /// A design with looks after every `look_every` runs per side up to `max_runs` per side,
    /// a false branch-worse rate of at most `alpha`, and futility for increases below
    /// `min_increase`. Out-of-range arguments are clamped: at least one run, alpha in
    /// (0, 0.5].
    pub fn new(alpha: f64, max_runs: u32, look_every: u32, min_increase: f64) -> Design {
        let alpha = if alpha.is_finite() {
            alpha.clamp(1e-6, 0.5)
        } else {
            0.05
        };
        let max_runs = max_runs.max(1);
        let look_every = look_every.clamp(1, max_runs);
        let mut looks: Vec<u32> = (look_every..max_runs)
            .step_by(look_every as usize)
            .collect();
        looks.push(max_runs);
        let spent = |n: u32| alpha * f64::from(n) / f64::from(max_runs);
        let shares: Vec<f64> = looks
            .iter()
            .scan(0.0, |before, n| {
                let share = spent(*n) - *before;
                *before = spent(*n);
                Some(share)
            })
            .collect();
        let tables: Vec<FisherTable> = looks.iter().map(|n| FisherTable::new(*n)).collect();
        let calibration = calibrate(alpha, &looks, &shares, &tables);
        Design {
            alpha,
            min_increase: if min_increase.is_finite() {
                min_increase.clamp(0.0, 1.0)
            } else {
                0.25
            },
            thresholds: shares.iter().map(|s| s * calibration).collect(),
            looks,
            calibration,
        }
    }

    /// The design's alpha.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The most runs per side.
    pub fn max_runs(&self) -> u32 {
        self.looks.last().copied().unwrap_or(1)
    }

    /// Runs per side at each look.
    pub fn looks(&self) -> &[u32] {
        &self.looks
    }

    /// The p-value at or below which each look rejects.
    pub fn thresholds(&self) -> &[f64] {
        &self.thresholds
    }

    /// The p-value threshold of the look at `runs` per side, or of the last look before
    /// it; the first look's when `runs` comes before every look.
    pub fn threshold_at(&self, runs: u32) -> f64 {
        let reached = self.looks.iter().take_while(|n| **n <= runs).count();
        self.thresholds[reached.saturating_sub(1)]
    }

    /// The factor the spending shares were scaled by (1 would be the plain union bound).
    pub fn calibration(&self) -> f64 {
        self.calibration
    }

    /// The smallest increase futility stopping protects.
    pub fn min_increase(&self) -> f64 {
        self.min_increase
    }

    /// The decision after a pair of runs. Only balanced tallies at a look can stop.
    pub fn judge(&self, base: Tally, branch: Tally) -> Boundary {
        if base.runs != branch.runs {
            return Boundary::Continue;
        }
        let Some(look) = self.looks.iter().position(|n| *n == base.runs) else {
            return Boundary::Continue;
        };
        let p_value = fisher_one_sided(base, branch);
        if p_value <= self.thresholds[look] {
            return Boundary::Efficacy { p_value };
        }
        if look + 1 == self.looks.len() {
            return Boundary::Exhausted { p_value };
        }
        if difference_upper_bound(base, branch, Z_ONE_SIDED_95) < self.min_increase {
            return Boundary::Futility { p_value };
        }
        Boundary::Continue
    }

    /// The exact chance that some look rejects when both sides fail at `rate`, ignoring
    /// futility (which only lowers it).
    pub fn type_one_error(&self, rate: f64) -> f64 {
        let tables: Vec<FisherTable> = self.looks.iter().map(|n| FisherTable::new(*n)).collect();
        rejection_chance(rate, rate, &self.looks, &self.thresholds, &tables)
    }

    /// The exact chance that some look rejects when the base fails at `base_rate` and the
    /// branch at `branch_rate`, ignoring futility (which lowers it).
    pub fn power(&self, base_rate: f64, branch_rate: f64) -> f64 {
        let tables: Vec<FisherTable> = self.looks.iter().map(|n| FisherTable::new(*n)).collect();
        rejection_chance(
            base_rate,
            branch_rate,
            &self.looks,
            &self.thresholds,
            &tables,
        )
    }
}

/// The largest factor on the spending shares whose worst-case type I error over the
/// calibration grid stays at or below alpha. Rejection regions grow with the factor, so
/// the error does too, and bisection finds the edge.
fn calibrate(alpha: f64, looks: &[u32], shares: &[f64], tables: &[FisherTable]) -> f64 {
    let worst = |factor: f64| {
        let thresholds: Vec<f64> = shares.iter().map(|s| s * factor).collect();
        (1..=CALIBRATION_GRID)
            .map(|i| i as f64 / (CALIBRATION_GRID + 1) as f64)
            .map(|rate| rejection_chance(rate, rate, looks, &thresholds, tables))
            .fold(0.0, f64::max)
    };
    let smallest_share = shares.iter().copied().fold(f64::INFINITY, f64::min);
    // The union bound makes 1 always valid; past `high` every threshold is at least 1.
    let (mut low, mut high) = (1.0, (1.0 / smallest_share).max(1.0));
    for _ in 0..30 {
        let middle = f64::midpoint(low, high);
        if worst(middle) <= alpha {
            low = middle;
        } else {
            high = middle;
        }
    }
    low
}

/// The chance that some look's Fisher p-value falls at or below its threshold, with the
/// two sides' failures binomial at the given rates: dynamic programming over the joint
/// counts, removing the mass that has already stopped.
fn rejection_chance(
    base_rate: f64,
    branch_rate: f64,
    looks: &[u32],
    thresholds: &[f64],
    tables: &[FisherTable],
) -> f64 {
    let mut runs_before = 0;
    let mut mass = vec![1.0];
    let mut rejected = 0.0;
    for ((runs, threshold), table) in looks.iter().zip(thresholds).zip(tables) {
        let added = runs - runs_before;
        mass = grow(
            &mass,
            runs_before as usize,
            added as usize,
            base_rate,
            branch_rate,
        );
        let width = *runs as usize + 1;
        for (index, probability) in mass.iter_mut().enumerate() {
            if table.p_values[index] <= *threshold {
                rejected += *probability;
                *probability = 0.0;
            }
        }
        debug_assert_eq!(mass.len(), width * width);
        runs_before = *runs;
    }
    rejected.min(1.0)
}

/// Adds `added` runs to each side of a joint distribution over (base failures, branch
/// failures), stored row-major with `before + 1` columns. The two sides are independent,
/// so the convolution is done one axis at a time.
fn grow(mass: &[f64], before: usize, added: usize, base_rate: f64, branch_rate: f64) -> Vec<f64> {
    let old_width = before + 1;
    let width = before + added + 1;
    let base_steps = binomial_pmf(added, base_rate);
    let branch_steps = binomial_pmf(added, branch_rate);
    // Base axis first: `width` rows of the old `old_width` columns.
    let mut rows = vec![0.0; width * old_width];
    for base in 0..old_width {
        for branch in 0..old_width {
            let probability = mass[base * old_width + branch];
            if probability == 0.0 {
                continue;
            }
            for (step, chance) in base_steps.iter().enumerate() {
                rows[(base + step) * old_width + branch] += probability * chance;
            }
        }
    }
    // Then the branch axis.
    let mut grown = vec![0.0; width * width];
    for base in 0..width {
        for branch in 0..old_width {
            let probability = rows[base * old_width + branch];
            if probability == 0.0 {
                continue;
            }
            for (step, chance) in branch_steps.iter().enumerate() {
                grown[base * width + branch + step] += probability * chance;
            }
        }
    }
    grown
}

/// P(X = k) for X ~ Binomial(n, p), k = 0..=n.
fn binomial_pmf(n: usize, p: f64) -> Vec<f64> {
    let ln = LnFactorials::up_to(n);
    (0..=n)
        .map(|k| {
            let ways = ln.choose(n, k);
            let failures = if k == 0 { 0.0 } else { k as f64 * p.ln() };
            let passes = if k == n {
                0.0
            } else {
                (n - k) as f64 * (1.0 - p).ln()
            };
            (ways + failures + passes).exp()
        })
        .collect()
}

/// Fisher p-values of every balanced table with `runs` per side, indexed
/// `base_failures * (runs + 1) + branch_failures`.
#[derive(Debug, Clone)]
struct FisherTable {
    p_values: Vec<f64>,
}

impl FisherTable {
    fn new(runs: u32) -> FisherTable {
        let mut p_values = Vec::with_capacity((runs as usize + 1).pow(2));
        for base in 0..=runs {
            for branch in 0..=runs {
                p_values.push(fisher_one_sided(
                    Tally {
                        runs,
                        failures: base,
                    },
                    Tally {
                        runs,
                        failures: branch,
                    },
                ));
            }
        }
        FisherTable { p_values }
    }
}

/// Fisher's exact test, one-sided: the chance, given both sides' runs and the total of
/// failures, that the branch would hold at least as many of them as it does.
pub fn fisher_one_sided(base: Tally, branch: Tally) -> f64 {
    let base_failures = base.failures.min(base.runs) as usize;
    let branch_failures = branch.failures.min(branch.runs) as usize;
    let (base_runs, branch_runs) = (base.runs as usize, branch.runs as usize);
    let total_runs = base_runs + branch_runs;
    let total_failures = base_failures + branch_failures;
    if total_runs == 0 {
        return 1.0;
    }
    let ln = LnFactorials::up_to(total_runs);
    let denominator = ln.choose(total_runs, total_failures);
    let most = total_failures.min(branch_runs);
    let p: f64 = (branch_failures..=most)
        .filter(|x| total_failures - x <= base_runs)
        .map(|x| {
            (ln.choose(branch_runs, x) + ln.choose(base_runs, total_failures - x) - denominator)
                .exp()
        })
        .sum();
    p.min(1.0)
}

/// Newcombe's hybrid score upper bound for (branch rate − base rate) at `z`; 1 when a
/// side has no runs.
pub fn difference_upper_bound(base: Tally, branch: Tally, z: f64) -> f64 {
    let (Some(base_rate), Some(branch_rate)) = (base.rate(), branch.rate()) else {
        return 1.0;
    };
    let (Some(base_interval), Some(branch_interval)) = (
        wilson(u64::from(base.failures), u64::from(base.runs), z),
        wilson(u64::from(branch.failures), u64::from(branch.runs), z),
    ) else {
        return 1.0;
    };
    let branch_room = branch_interval.high - branch_rate;
    let base_room = base_rate - base_interval.low;
    branch_rate - base_rate + branch_room.hypot(base_room)
}

/// The smallest increase over `base_rate` that a one-sided Fisher test at `alpha` with
/// `runs` per side would catch with at least `power`; `None` when no increase would.
/// Searched in steps of 0.01 (what a reader can act on).
pub fn detectable_increase(base_rate: f64, runs: u32, alpha: f64, power: f64) -> Option<f64> {
    if runs == 0 {
        return None;
    }
    let base_rate = base_rate.clamp(0.0, 1.0);
    let table = FisherTable::new(runs);
    let width = runs as usize + 1;
    let chance = |branch_rate: f64| {
        let base = binomial_pmf(runs as usize, base_rate);
        let branch = binomial_pmf(runs as usize, branch_rate);
        let mut total = 0.0;
        for (base_failures, base_chance) in base.iter().enumerate() {
            for (branch_failures, branch_chance) in branch.iter().enumerate() {
                if table.p_values[base_failures * width + branch_failures] <= alpha {
                    total += base_chance * branch_chance;
                }
            }
        }
        total
    };
    (1..=100)
        .map(|step| f64::from(step) / 100.0)
        .take_while(|increase| base_rate + increase <= 1.0 + 1e-9)
        .find(|increase| chance((base_rate + increase).min(1.0)) >= power)
}

/// ln(k!) for k up to a bound.
struct LnFactorials(Vec<f64>);

impl LnFactorials {
    fn up_to(n: usize) -> LnFactorials {
        let mut table = Vec::with_capacity(n + 1);
        let mut sum = 0.0;
        table.push(0.0);
        for k in 1..=n {
            sum += (k as f64).ln();
            table.push(sum);
        }
        LnFactorials(table)
    }

    /// ln C(n, k), for k ≤ n ≤ the bound.
    fn choose(&self, n: usize, k: usize) -> f64 {
        self.0[n] - self.0[k] - self.0[n - k]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn tally(runs: u32, failures: u32) -> Tally {
        Tally { runs, failures }
    }

    #[test]
    fn fisher_matches_hand_computed_tables() {
        // 0 of 5 against 5 of 5: the one arrangement in C(10, 5) = 252.
        let p = fisher_one_sided(tally(5, 0), tally(5, 5));
        assert!((p - 1.0 / 252.0).abs() < 1e-12, "{p}");
        // 0 of 20 against 4 of 20: C(20,4)/C(40,4) = 4845/91390.
        let p = fisher_one_sided(tally(20, 0), tally(20, 4));
        assert!((p - 4845.0 / 91_390.0).abs() < 1e-12, "{p}");
        // The branch no worse than the base: nothing to see.
        assert!((fisher_one_sided(tally(10, 3), tally(10, 0)) - 1.0).abs() < 1e-12);
        // Lady tasting tea (Fisher 1935): 3 of 4 right, p = 17/70.
        let p = fisher_one_sided(tally(4, 1), tally(4, 3));
        assert!((p - 17.0 / 70.0).abs() < 1e-12, "{p}");
    }

    #[test]
    fn the_default_design_calls_a_deterministic_regression_at_the_first_look() {
        let design = Design::new(0.05, 30, 5, 0.25);
        assert_eq!(design.looks(), &[5, 10, 15, 20, 25, 30]);
        assert!(design.calibration() > 1.0, "{}", design.calibration());
        assert!(matches!(
            design.judge(tally(5, 0), tally(5, 5)),
            Boundary::Efficacy { .. }
        ));
        // Between looks nothing stops, whatever the counts.
        assert_eq!(design.judge(tally(4, 0), tally(4, 4)), Boundary::Continue);
        assert_eq!(design.judge(tally(5, 0), tally(4, 4)), Boundary::Continue);
    }

    #[test]
    fn the_exact_type_one_error_stays_within_alpha() {
        let design = Design::new(0.05, 30, 5, 0.25);
        for rate in [0.0, 1.0 / 7.0, 0.3, 0.5, 0.9, 0.995, 1.0] {
            let error = design.type_one_error(rate);
            assert!(error <= 0.05 + 1e-9, "rate {rate}: {error}");
        }
        // And the calibration is not idle: it spends most of alpha somewhere.
        let worst = (1..100)
            .map(|i| design.type_one_error(f64::from(i) / 100.0))
            .fold(0.0, f64::max);
        assert!(worst > 0.03, "{worst}");
    }

    #[test]
    fn futility_stops_when_no_big_increase_is_left() {
        let design = Design::new(0.05, 30, 5, 0.25);
        // Nothing failed in 10 + 10: an increase of 0.25 would almost surely have shown.
        assert!(matches!(
            design.judge(tally(10, 0), tally(10, 0)),
            Boundary::Futility { .. }
        ));
        // One failure in 5 on the branch: too early to rule anything out.
        assert_eq!(design.judge(tally(5, 0), tally(5, 1)), Boundary::Continue);
        // The last look always stops.
        assert!(matches!(
            design.judge(tally(30, 4), tally(30, 6)),
            Boundary::Exhausted { .. } | Boundary::Efficacy { .. }
        ));
    }

    #[test]
    fn detectable_increase_shrinks_with_runs() {
        let few = detectable_increase(0.0, 10, 0.05, 0.8).unwrap();
        let many = detectable_increase(0.0, 30, 0.05, 0.8).unwrap();
        assert!(many < few, "{many} !< {few}");
        assert!(detectable_increase(0.0, 1, 0.05, 0.8).is_none());
    }

    proptest! {
        #![proptest_config(crate::test_support::proptest_config(256))]

        #[test]
        fn fisher_is_a_probability_and_monotone_in_the_branch(
            runs in 1u32..40,
            base in 0u32..40,
            branch in 0u32..40,
        ) {
            let base = base.min(runs);
            let branch = branch.min(runs);
            let p = fisher_one_sided(tally(runs, base), tally(runs, branch));
            prop_assert!((0.0..=1.0).contains(&p));
            if branch < runs {
                let worse = fisher_one_sided(tally(runs, base), tally(runs, branch + 1));
                prop_assert!(worse <= p + 1e-12);
            }
        }

        #[test]
        fn odd_designs_never_panic(
            alpha in -1.0f64..2.0,
            max_runs in 0u32..12,
            every in 0u32..12,
            increase in -1.0f64..2.0,
        ) {
            let design = Design::new(alpha, max_runs, every, increase);
            prop_assert!(design.alpha() > 0.0 && design.alpha() <= 0.5);
            prop_assert_eq!(design.looks().last().copied(), Some(design.max_runs()));
        }
    }
}
