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
//! - **Futility** (non-binding, so it cannot raise the type I error): stop when the runs
//!   are better explained by "both sides fail at the same rate" than by any pair of rates
//!   an increase of the design's size apart, by a generalized likelihood ratio below
//!   e^-2 (T. L. Lai, "Nearly optimal sequential tests of composite hypotheses", *Annals
//!   of Statistics* 16(2), 1988, whose GLR boundaries give this stopping rule). The size
//!   is measured on the arcsine scale, Cohen's h = 2·asin(√p) (J. Cohen, *Statistical
//!   Power Analysis for the Behavioral Sciences*, 2nd ed., 1988, §6.2), the scale on which
//!   a binomial rate's noise is the same whatever the rate: `min_increase` is the rise
//!   from a test that never fails (0 → 0.25 is h = 1.05), and from a flaky base the same
//!   h is a larger rise (1/7 → 0.62), because telling a rise from noise there takes more
//!   runs. A rise of `min_increase` from 0 is still caught with at least 80% power.
//! - **Operating characteristics** are computed exactly (the same dynamic programming,
//!   with futility), and the information bound of A. Wald, *Sequential Analysis* (1947),
//!   ch. 4, says how few runs any valid test could average, for comparison.

use std::f64::consts::PI;

/// Futility stops when the best "increase" explanation of the runs is less likely than
/// the best "same rate" one by this factor's logarithm: e^-2, about 1 in 7.4. Chosen by
/// exact computation (docs/compare.md): from a base that never fails it stops a
/// comparison whose runs all passed after 8 pairs (0.75^8 = 0.10 of a 0 → 0.25 rise
/// would look like that), which keeps that rise's power above 0.8.
pub const FUTILITY_LOG_RATIO: f64 = 2.0;

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
    min_effect: f64,
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
        let min_increase = if min_increase.is_finite() {
            min_increase.clamp(0.0, 1.0)
        } else {
            0.25
        };
        Design {
            alpha,
            min_increase,
            min_effect: arcsine(min_increase),
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

    /// The smallest rise from a rate of 0 that futility stopping protects.
    pub fn min_increase(&self) -> f64 {
        self.min_increase
    }

    /// The rise from `base_rate` that futility protects: the same arcsine distance as
    /// `min_increase` from 0, so larger from a flaky base.
    pub fn protected_rate(&self, base_rate: f64) -> f64 {
        from_arcsine((arcsine(base_rate.clamp(0.0, 1.0)) + self.min_effect).min(PI))
    }

    /// Whether the runs rule out a rise of the design's size (see the module's method).
    pub fn futile(&self, base: Tally, branch: Tally) -> bool {
        evidence_for_increase(base, branch, self.min_effect) < -FUTILITY_LOG_RATIO
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
        if self.futile(base, branch) {
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

    /// The design's exact behaviour when the base fails at `base_rate` and the branch at
    /// `branch_rate`, futility included: how often it calls the branch worse, and how
    /// many runs (both sides) it makes on average.
    pub fn operating(&self, base_rate: f64, branch_rate: f64) -> Operating {
        let mut runs_before = 0;
        let mut mass = vec![1.0];
        let (mut branch_worse, mut expected_runs) = (0.0, 0.0);
        for (look, (runs, threshold)) in self.looks.iter().zip(&self.thresholds).enumerate() {
            mass = grow(
                &mass,
                runs_before as usize,
                (runs - runs_before) as usize,
                base_rate,
                branch_rate,
            );
            let table = FisherTable::new(*runs);
            let last = look + 1 == self.looks.len();
            let width = *runs as usize + 1;
            for (index, probability) in mass.iter_mut().enumerate() {
                if *probability == 0.0 {
                    continue;
                }
                let (base, branch) = (index / width, index % width);
                let rejects = table.p_values[index] <= *threshold;
                let stops = rejects
                    || last
                    || self.futile(
                        Tally {
                            runs: *runs,
                            failures: base as u32,
                        },
                        Tally {
                            runs: *runs,
                            failures: branch as u32,
                        },
                    );
                if stops {
                    if rejects {
                        branch_worse += *probability;
                    }
                    expected_runs += *probability * f64::from(2 * runs);
                    *probability = 0.0;
                }
            }
            runs_before = *runs;
        }
        Operating {
            branch_worse: branch_worse.min(1.0),
            expected_runs,
        }
    }
}

/// What a design does at given rates, computed exactly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Operating {
    /// The chance it calls the branch worse (power, or the type I error at equal rates).
    pub branch_worse: f64,
    /// The mean number of runs, both sides together.
    pub expected_runs: f64,
}

/// The fewest runs (both sides, on average) with which any test that keeps its false
/// branch-worse rate at or below `alpha` at every common rate could call a rise from
/// `base_rate` to `branch_rate` with `power`, whatever its stopping rule: Wald's
/// information bound (Sequential Analysis, 1947, §4.2; Hoeffding 1960 for composite
/// hypotheses). A pair of runs carries KL(alternative ‖ common rate) of evidence on
/// average, and telling outcomes that occur with chances `power` and `alpha` apart needs
/// the binary KL between them; the common rate is the one closest to the alternative.
pub fn expected_runs_lower_bound(base_rate: f64, branch_rate: f64, alpha: f64, power: f64) -> f64 {
    if branch_rate <= base_rate {
        // No rise: only a test that calls "worse" as often at equal rates could.
        return f64::INFINITY;
    }
    let needed = binary_divergence(power, alpha);
    let per_pair =
        |common: f64| binary_divergence(base_rate, common) + binary_divergence(branch_rate, common);
    let closest = golden_minimum(per_pair, 1e-9, 1.0 - 1e-9);
    2.0 * needed / per_pair(closest)
}

/// KL(Bernoulli(p) ‖ Bernoulli(q)) in nats.
fn binary_divergence(p: f64, q: f64) -> f64 {
    let term = |a: f64, b: f64| if a == 0.0 { 0.0 } else { a * (a / b).ln() };
    term(p, q) + term(1.0 - p, 1.0 - q)
}

/// The minimum of a function with one minimum on [low, high], by golden-section search.
fn golden_minimum(f: impl Fn(f64) -> f64, mut low: f64, mut high: f64) -> f64 {
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..60 {
        let left = high - ratio * (high - low);
        let right = low + ratio * (high - low);
        if f(left) <= f(right) {
            high = right;
        } else {
            low = left;
        }
    }
    f64::midpoint(low, high)
}

/// Cohen's h scale: 2·asin(√p), from 0 to π.
fn arcsine(rate: f64) -> f64 {
    2.0 * rate.sqrt().asin()
}

/// The rate at a point of the arcsine scale.
fn from_arcsine(h: f64) -> f64 {
    (h / 2.0).sin().powi(2)
}

/// ln of the likelihood of a side's tally at `rate` (0·ln 0 taken as 0).
fn log_likelihood(tally: Tally, rate: f64) -> f64 {
    let failures = if tally.failures == 0 {
        0.0
    } else {
        f64::from(tally.failures) * rate.ln()
    };
    let passes = if tally.failures >= tally.runs {
        0.0
    } else {
        f64::from(tally.runs - tally.failures) * (1.0 - rate).ln()
    };
    failures + passes
}

/// The generalized log-likelihood ratio of "the branch's rate is at least `min_effect`
/// above the base's on the arcsine scale" against "both sides fail at one rate": the
/// best explanation of each kind, compared. Negative when the runs favour the same rate.
pub fn evidence_for_increase(base: Tally, branch: Tally, min_effect: f64) -> f64 {
    let (Some(base_rate), Some(branch_rate)) = (base.rate(), branch.rate()) else {
        return 0.0;
    };
    let pooled = f64::from(base.failures + branch.failures) / f64::from(base.runs + branch.runs);
    let same = log_likelihood(base, pooled) + log_likelihood(branch, pooled);
    if arcsine(branch_rate) - arcsine(base_rate) >= min_effect {
        // The runs' own rates are an increase that large: nothing favours the same rate.
        return log_likelihood(base, base_rate) + log_likelihood(branch, branch_rate) - same;
    }
    // Otherwise the best increase sits on the edge: each side's likelihood rises toward
    // its own rate, and moving toward it narrows the gap. Along the edge the
    // log-likelihood is 2a·ln sin(h/2) + 2(n−a)·ln cos(h/2) for each side, concave in h,
    // so the sum has one maximum and a golden-section search finds it.
    let room = (PI - min_effect).max(0.0);
    let along = |h: f64| {
        log_likelihood(base, from_arcsine(h)) + log_likelihood(branch, from_arcsine(h + min_effect))
    };
    let peak = golden_minimum(|h| -along(h), 0.0, room);
    let best = along(peak).max(along(0.0)).max(along(room));
    best - same
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

/// The chance that one plain one-sided Fisher test at `alpha` after `runs` per side calls
/// the branch worse when the sides fail at these rates: the fixed protocol as it is
/// usually run, and the yardstick the sequential design is measured against.
pub fn fixed_power(runs: u32, alpha: f64, base_rate: f64, branch_rate: f64) -> f64 {
    fixed_power_with(&FisherTable::new(runs), runs, alpha, base_rate, branch_rate)
}

fn fixed_power_with(
    table: &FisherTable,
    runs: u32,
    alpha: f64,
    base_rate: f64,
    branch_rate: f64,
) -> f64 {
    let width = runs as usize + 1;
    let base = binomial_pmf(runs as usize, base_rate.clamp(0.0, 1.0));
    let branch = binomial_pmf(runs as usize, branch_rate.clamp(0.0, 1.0));
    let mut total = 0.0;
    for (base_failures, base_chance) in base.iter().enumerate() {
        for (branch_failures, branch_chance) in branch.iter().enumerate() {
            if table.p_values[base_failures * width + branch_failures] <= alpha {
                total += base_chance * branch_chance;
            }
        }
    }
    total
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
    (1..=100)
        .map(|step| f64::from(step) / 100.0)
        .take_while(|increase| base_rate + increase <= 1.0 + 1e-9)
        .find(|increase| {
            let branch_rate = (base_rate + increase).min(1.0);
            fixed_power_with(&table, runs, alpha, base_rate, branch_rate) >= power
        })
}

/// The fewest runs per side (up to `max_runs`) with which one one-sided Fisher test at
/// `alpha` would show a drop from `base_rate` to `branch_rate` with at least `power`: the
/// rise test with the sides' roles swapped, its power computed exactly over both
/// binomials (as [`fixed_power`]). `None` when no drop, or when `max_runs` are too few.
/// Power is not quite monotone in the runs for a discrete test, so the answer is the
/// first run count, searched by doubling and then bisection, at which it holds.
pub fn runs_to_show_drop(
    base_rate: f64,
    branch_rate: f64,
    alpha: f64,
    power: f64,
    max_runs: u32,
) -> Option<u32> {
    if branch_rate >= base_rate || max_runs == 0 {
        return None;
    }
    let holds = |runs: u32| fixed_power(runs, alpha, branch_rate, base_rate) >= power;
    let mut high = 1;
    while !holds(high) {
        if high >= max_runs {
            return None;
        }
        high = (high * 2).min(max_runs);
    }
    let mut low = high / 2;
    // `low` fails (or is 0), `high` holds.
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        if holds(middle) {
            high = middle;
        } else {
            low = middle;
        }
    }
    Some(high)
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

    /// Issue 16 item 3: the runs a fix branch needs to show its drop.
    #[test]
    fn runs_to_show_a_drop_are_the_rise_test_with_the_sides_swapped() {
        // 4 of 14 on the base, none on the branch.
        let rate = 4.0 / 14.0;
        let runs = runs_to_show_drop(rate, 0.0, 0.05, 0.8, 200).expect("a run count");
        assert!(fixed_power(runs, 0.05, 0.0, rate) >= 0.8);
        assert!(fixed_power(runs - 1, 0.05, 0.0, rate) < 0.8);
        assert!((15..=40).contains(&runs), "{runs}");
        assert_eq!(runs_to_show_drop(0.1, 0.1, 0.05, 0.8, 200), None);
        assert_eq!(runs_to_show_drop(0.1, 0.2, 0.05, 0.8, 200), None);
        // A drop of 1 point cannot be shown in 50 runs.
        assert_eq!(runs_to_show_drop(0.11, 0.10, 0.05, 0.8, 50), None);
    }

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

    /// The default design of candor.toml's `[compare]`.
    fn default_design() -> Design {
        Design::new(0.05, 30, 2, 0.25)
    }

    #[test]
    fn the_default_design_calls_a_deterministic_regression_after_four_runs_per_side() {
        let design = default_design();
        assert_eq!(design.looks().first(), Some(&2));
        assert_eq!(design.looks().last(), Some(&30));
        assert!(design.calibration() > 1.0, "{}", design.calibration());
        // 0 of 2 against 2 of 2 is p = 1/6: too little for any look's share of alpha.
        assert_eq!(design.judge(tally(2, 0), tally(2, 2)), Boundary::Continue);
        assert!(matches!(
            design.judge(tally(4, 0), tally(4, 4)),
            Boundary::Efficacy { .. }
        ));
        // Between looks nothing stops, whatever the counts.
        assert_eq!(design.judge(tally(5, 0), tally(5, 5)), Boundary::Continue);
        assert_eq!(design.judge(tally(4, 0), tally(3, 3)), Boundary::Continue);
    }

    #[test]
    fn the_default_design_meets_its_targets_exactly() {
        let design = default_design();
        // The false branch-worse rate, futility included, and at most half of 20 + 20 runs
        // on average when both sides fail alike.
        for rate in [0.0, 1.0 / 7.0, 0.3] {
            let same = design.operating(rate, rate);
            assert!(same.branch_worse <= 0.05, "rate {rate}: {same:?}");
            assert!(same.expected_runs <= 20.0, "rate {rate}: {same:?}");
        }
        let rise = design.operating(0.0, 0.25);
        assert!(rise.branch_worse >= 0.8, "{rise:?}");
        let deterministic = design.operating(0.0, 1.0);
        assert!(
            (deterministic.branch_worse - 1.0).abs() < 1e-12,
            "{deterministic:?}"
        );
        assert!(deterministic.expected_runs <= 10.0, "{deterministic:?}");
        let bug = design.operating(1.0 / 7.0, 0.75);
        assert!(
            bug.branch_worse >= 0.95 && bug.expected_runs <= 20.0,
            "{bug:?}"
        );
    }

    #[test]
    fn no_design_beats_the_information_bound() {
        // 0 -> 0.25 at 80% power: any valid test needs about 20 runs on average.
        let bound = expected_runs_lower_bound(0.0, 0.25, 0.05, 0.8);
        assert!((19.5..20.5).contains(&bound), "{bound}");
        let design = default_design();
        for (base, branch) in [(0.0, 0.25), (0.0, 1.0), (1.0 / 7.0, 0.75), (0.1, 0.5)] {
            let operating = design.operating(base, branch);
            let bound = expected_runs_lower_bound(base, branch, 0.05, operating.branch_worse);
            assert!(
                operating.expected_runs >= bound,
                "{base} -> {branch}: {operating:?} below the bound {bound}"
            );
        }
        // Telling equal rates apart is impossible.
        assert!(expected_runs_lower_bound(0.2, 0.2, 0.05, 0.8).is_infinite());
    }

    #[test]
    fn the_default_design_is_as_powerful_as_the_plain_fixed_protocol() {
        let design = default_design();
        for base in [0.0, 0.02, 0.05, 0.1, 1.0 / 7.0, 0.2, 0.3, 0.5, 0.7] {
            for increase in [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5] {
                let branch = base + increase;
                if branch > 1.0 {
                    continue;
                }
                let sequential = design.operating(base, branch).branch_worse;
                let fixed = fixed_power(20, 0.05, base, branch);
                assert!(
                    sequential >= fixed - 0.005,
                    "{base} -> {branch}: sequential {sequential:.4} < fixed {fixed:.4}"
                );
            }
        }
    }

    #[test]
    fn futility_protects_the_same_arcsine_distance_from_every_base() {
        let design = default_design();
        assert!((design.protected_rate(0.0) - 0.25).abs() < 1e-12);
        let flaky = design.protected_rate(1.0 / 7.0);
        assert!((0.6..0.65).contains(&flaky), "{flaky}");
        assert!((design.protected_rate(0.9) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn the_exact_type_one_error_stays_within_alpha() {
        let design = default_design();
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
        let design = default_design();
        // Nothing failed in 8 + 8: 0.75^8 = 0.10 of a rise to 0.25 would look like this.
        assert!(matches!(
            design.judge(tally(8, 0), tally(8, 0)),
            Boundary::Futility { .. }
        ));
        // ...but 6 + 6 is too few.
        assert_eq!(design.judge(tally(6, 0), tally(6, 0)), Boundary::Continue);
        // One failure in 4 on the branch: too early to rule anything out.
        assert_eq!(design.judge(tally(4, 0), tally(4, 1)), Boundary::Continue);
        // A flaky test failing alike on both sides is let go sooner than a rise from 0
        // could be ruled out, because futility protects a larger rise from a flaky base.
        assert!(matches!(
            design.judge(tally(10, 2), tally(10, 2)),
            Boundary::Futility { .. }
        ));
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
        fn evidence_for_an_increase_grows_with_the_branchs_failures(
            runs in 1u32..31,
            base in 0u32..31,
            branch in 0u32..30,
        ) {
            let base = tally(runs, base.min(runs));
            let branch = branch.min(runs.saturating_sub(1));
            let effect = arcsine(0.25);
            let fewer = evidence_for_increase(base, tally(runs, branch), effect);
            let more = evidence_for_increase(base, tally(runs, branch + 1), effect);
            prop_assert!(fewer.is_finite() && more.is_finite());
            prop_assert!(more >= fewer - 1e-9, "{more} < {fewer}");
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
