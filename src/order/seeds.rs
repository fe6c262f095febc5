//! The investigation's seeds: derived from one base seed, so that the base seed printed
//! with a verdict reproduces every probe's seed, and a seeded shuffle for runners that
//! keep a given order but have no shuffle of their own.

/// Seeds stay below 2^32: pytest-randomly hands them to NumPy, which refuses larger ones,
/// and every runner accepts them.
const LIMIT: u64 = 1 << 32;

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
/// OOPSLA 2014): seeded, tiny, the same on every platform.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (`bound` > 0); the modulo bias is below 2^-40 for the
    /// bounds a test list has, and a shuffle needs no better.
    pub fn below(&mut self, bound: usize) -> usize {
        (self.next_u64() % bound.max(1) as u64) as usize
    }
}

/// The `index`-th seed of an investigation whose base seed is `base`: the base itself
/// first (so a failing run's seed given as the base is tried first), then derived ones.
pub fn nth_seed(base: u64, index: u64) -> u64 {
    if index == 0 {
        return base % LIMIT;
    }
    let mut generator = SplitMix64::new(base ^ index.wrapping_mul(0xA24B_AED4_963E_E407));
    generator.next_u64() % LIMIT
}

/// `items` in an order fixed by `seed` (Fisher–Yates).
pub fn shuffled<T: Clone>(items: &[T], seed: u64) -> Vec<T> {
    let mut out = items.to_vec();
    let mut generator = SplitMix64::new(seed);
    for last in (1..out.len()).rev() {
        let pick = generator.below(last + 1);
        out.swap(last, pick);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_stable_distinct_and_fit_numpy() {
        assert_eq!(nth_seed(42, 0), 42);
        assert_eq!(nth_seed(42, 3), nth_seed(42, 3));
        let seeds: Vec<u64> = (0..50).map(|i| nth_seed(7, i)).collect();
        let mut unique = seeds.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), seeds.len());
        assert!(seeds.iter().all(|s| *s < LIMIT));
        assert_eq!(nth_seed(u64::MAX, 0), u64::MAX % LIMIT);
    }

    #[test]
    fn a_shuffle_is_a_permutation_fixed_by_its_seed() {
        let items: Vec<u32> = (0..30).collect();
        let once = shuffled(&items, 9);
        assert_eq!(once, shuffled(&items, 9));
        assert_ne!(once, items);
        let mut sorted = once.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, items);
        assert!(shuffled::<u32>(&[], 1).is_empty());
    }
}
