//! Shared helpers for candor's own unit tests: seeded property tests.

use proptest::test_runner::{Config, RngSeed};

/// The environment variable that overrides the property-test seed.
pub const SEED_VAR: &str = "CANDOR_PROPTEST_SEED";

/// Default seed, so every run of the suite explores the same inputs.
pub const DEFAULT_SEED: u64 = 0x00CA_4D0A;

/// A proptest configuration with a fixed, printed seed: every random input is seeded and
/// the seed shows in the captured output of a failing test (set `CANDOR_PROPTEST_SEED` to
/// explore others).
pub fn proptest_config(cases: u32) -> Config {
    let seed = std::env::var(SEED_VAR)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SEED);
    eprintln!("proptest seed {seed} (override with {SEED_VAR})");
    Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        ..Config::default()
    }
}
