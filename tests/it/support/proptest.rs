//! The property tests' configuration, once for every module of the test binary: a fixed
//! seed, printed, that `CANDOR_PROPTEST_SEED` overrides (as
//! `candor::test_support::proptest_config` does for the unit tests), and no failure files.

use candor::env_vars::EnvVars;
use proptest::test_runner::{Config, RngSeed};

/// `cases` cases under the fixed, printed seed.
pub fn proptest_config(cases: u32) -> Config {
    let seed = std::env::var(EnvVars::CANDOR_PROPTEST_SEED)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x00CA_4D0A);
    eprintln!(
        "proptest seed {seed} (override with {})",
        EnvVars::CANDOR_PROPTEST_SEED
    );
    Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        ..Config::default()
    }
}
