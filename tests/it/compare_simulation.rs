//! Monte Carlo check of `candor compare`'s sequential design through its real run loop
//! (`compare::measure`), with the runs faked: each simulated run fails with the side's
//! chosen probability, drawn from a seeded generator. Statistics only — the real runner
//! path is tested in tests/it/compare.rs. The seed is printed; set CANDOR_PROPTEST_SEED to
//! replay another one.

use crate::simulate;

use candor::env_vars::EnvVars;
use candor::policy::config::CompareConfig;
use candor::stats::sequential::Design;
use simulate::{Draws, Scenario};

/// Simulated comparisons per scenario: the standard error of a rate near 0.05 is then
/// about 0.0034.
const SIMULATIONS: u32 = 4_000;

fn seed() -> u64 {
    let seed = std::env::var(EnvVars::CANDOR_PROPTEST_SEED)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x00CA_4D0A);
    eprintln!(
        "simulation seed {seed} (override with {})",
        EnvVars::CANDOR_PROPTEST_SEED
    );
    seed
}

fn run_case(design: &Design, base_rate: f64, branch_rate: f64, draws: &mut Draws) -> Scenario {
    simulate::simulate(design, base_rate, branch_rate, SIMULATIONS, draws)
}

/// The default design of candor.toml's `[compare]`.
fn default_design() -> Design {
    let defaults = CompareConfig::default();
    Design::new(
        defaults.alpha,
        defaults.runs,
        defaults.look_every,
        defaults.min_increase,
    )
}

/// Three standard errors of a simulated share near `share`.
fn simulation_error(share: f64) -> f64 {
    3.0 * (share * (1.0 - share) / f64::from(SIMULATIONS)).sqrt()
}

#[test]
fn the_false_branch_worse_rate_stays_within_alpha_at_every_base_rate() {
    let design = default_design();
    let mut draws = Draws(seed());
    let alpha = design.alpha();
    let allowance = simulation_error(alpha);
    for rate in [0.0, 1.0 / 7.0, 0.3] {
        let scenario = run_case(&design, rate, rate, &mut draws);
        eprintln!(
            "same rate {rate:.3}: false branch-worse {:.4}, mean runs {:.1}",
            scenario.branch_worse, scenario.mean_runs
        );
        assert!(
            scenario.branch_worse <= alpha + allowance,
            "rate {rate}: false branch-worse rate {} > {alpha} + {allowance:.4}",
            scenario.branch_worse
        );
        // And the exact figures, which the simulation only estimates: the simulation
        // agrees with them, and half of 20 + 20 runs is enough on average.
        let exact = design.operating(rate, rate);
        assert!(design.type_one_error(rate) <= alpha + 1e-9);
        assert!(
            (scenario.branch_worse - exact.branch_worse).abs()
                <= simulation_error(exact.branch_worse).max(1e-9),
            "rate {rate}: simulated {} against exact {}",
            scenario.branch_worse,
            exact.branch_worse
        );
        // A run count's spread is under 15 here, so its mean over 4,000 comparisons is
        // within 1 of the exact figure by more than four standard errors.
        assert!(
            (scenario.mean_runs - exact.expected_runs).abs() <= 1.0,
            "rate {rate}: simulated mean runs {} against exact {}",
            scenario.mean_runs,
            exact.expected_runs
        );
        assert!(exact.expected_runs <= 20.0, "rate {rate}: {exact:?}");
    }
}

#[test]
fn a_rise_from_zero_to_a_quarter_is_caught_with_80_percent_power() {
    let design = default_design();
    let mut draws = Draws(seed() ^ 1);
    let scenario = run_case(&design, 0.0, 0.25, &mut draws);
    eprintln!(
        "0 -> 0.25: power {:.4}, mean runs {:.1}",
        scenario.branch_worse, scenario.mean_runs
    );
    assert!(
        scenario.branch_worse >= 0.8,
        "power {}",
        scenario.branch_worse
    );
    assert!(scenario.mean_runs <= f64::from(design.max_runs() * 2));
}

#[test]
fn a_deterministic_regression_is_called_in_at_most_ten_runs_on_average() {
    let design = default_design();
    let mut draws = Draws(seed() ^ 2);
    let scenario = run_case(&design, 0.0, 1.0, &mut draws);
    eprintln!("0 -> 1: mean runs {:.1}", scenario.mean_runs);
    assert!((scenario.deterministic - 1.0).abs() < f64::EPSILON);
    assert!(
        scenario.mean_runs <= 10.0,
        "mean runs {}",
        scenario.mean_runs
    );
}

#[test]
fn a_bug_failing_three_runs_in_four_is_called_in_fewer_runs_than_twenty_plus_twenty() {
    let design = default_design();
    let mut draws = Draws(seed() ^ 3);
    let scenario = run_case(&design, 1.0 / 7.0, 0.75, &mut draws);
    eprintln!(
        "1/7 -> 3/4: power {:.4}, mean runs {:.1}",
        scenario.branch_worse, scenario.mean_runs
    );
    assert!(
        scenario.branch_worse >= 0.95,
        "power {}",
        scenario.branch_worse
    );
    assert!(
        scenario.mean_runs <= 20.0,
        "mean runs {}",
        scenario.mean_runs
    );
}
