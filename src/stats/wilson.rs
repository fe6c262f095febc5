//! The Wilson score interval for a binomial proportion.
//!
//! Source: E. B. Wilson, "Probable inference, the law of succession, and statistical
//! inference", JASA 22(158), 1927; recommended over the Wald interval for small counts and
//! proportions near 0 or 1 by Brown, Cai & DasGupta, "Interval Estimation for a Binomial
//! Proportion", Statistical Science 16(2), 2001.

use serde::{Deserialize, Serialize};

/// z for a two-sided 95% interval (the 0.975 quantile of the standard normal).
pub const Z_95: f64 = 1.959_963_984_540_054;

/// A closed interval of proportions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Interval {
    /// Lower bound, in [0, 1].
    pub low: f64,
    /// Upper bound, in [0, 1].
    pub high: f64,
}

/// Wilson score interval for `successes` out of `trials` at the given `z`; `None` when
/// there are no trials (nothing is known).
pub fn wilson(successes: u64, trials: u64, z: f64) -> Option<Interval> {
    if trials == 0 {
        return None;
    }
    let n = trials as f64;
    let p = successes.min(trials) as f64 / n;
    let z2 = z * z;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half_width = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    Some(Interval {
        low: (centre - half_width).max(0.0),
        high: (centre + half_width).min(1.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn matches_published_values() {
        // Brown, Cai & DasGupta (2001), and any statistics package: 0 of 10 → [0, 0.2775].
        let i = wilson(0, 10, Z_95).unwrap();
        assert!(i.low.abs() < 1e-12);
        assert!((i.high - 0.277_53).abs() < 1e-4, "{i:?}");
        // 171 of 200 (a test failing 29 runs in 200): centre (p + z²/2n)/(1 + z²/n) = 0.8483,
        // half width 0.0488, by hand from Wilson's formula → [0.7995, 0.8971].
        let i = wilson(171, 200, Z_95).unwrap();
        assert!((i.low - 0.7995).abs() < 1e-4, "{i:?}");
        assert!((i.high - 0.8971).abs() < 1e-4, "{i:?}");
    }

    #[test]
    fn no_trials_no_interval() {
        assert_eq!(wilson(0, 0, Z_95), None);
    }

    proptest! {
        #![proptest_config(crate::test_support::proptest_config(256))]

        #[test]
        fn interval_contains_the_point_estimate(trials in 1u64..5000, share in 0.0f64..=1.0) {
            let successes = (trials as f64 * share).round() as u64;
            let i = wilson(successes, trials, Z_95).unwrap();
            let p = successes as f64 / trials as f64;
            prop_assert!(0.0 <= i.low && i.low <= p + 1e-12 && p <= i.high + 1e-12 && i.high <= 1.0);
        }
    }
}
