//! Delta debugging over the tests that ran before a test: the smallest set of them that,
//! run before it, flips its outcome. Pure: every run goes through the probe callback, and
//! the probe decides what "flipped" means (failed, for a victim; passed, for a brittle
//! test).
//!
//! # Method
//! Every probe keeps the prefix's relative order, and the prefix as a whole flips the test
//! (the caller knows: it is the order that flipped it) while the empty set does not (the
//! caller ran the test alone). If the flip needs all of its culprits and nothing that ran
//! before them can undo it (anything that could runs after them, and then the whole prefix
//! would not flip), then "the first `k` tests flip it" is monotone in `k`, and:
//!
//! 1. a binary search over `k` finds the shortest flipping prefix; its last test is a
//!    culprit (without it, that prefix does not flip);
//! 2. if that culprit alone flips the test, it is the answer; else the search repeats on
//!    the tests before it, with the culprits found so far always appended.
//!
//! One culprit costs `ceil(log2 n) + 1` probes (iFixFlakies, Shi et al., ESEC/FSE 2019,
//! found one polluter or state-setter enough for most order-dependent tests they
//! studied); `m` culprits about `m · (log2 n + 1)`, where Zeller and Hildebrandt's ddmin
//! ("Simplifying and Isolating Failure-Inducing Input", IEEE TSE 28(2), 2002) needs
//! several times more for two and up to O(n²) in general (benches/order.rs measures both
//! cases). The result is 1-minimal when the flip is monotone as above; when it is not
//! (a flaky probe), the result still flipped when probed, and the caller's verification
//! is what decides.
//!
//! Results are remembered by subset, so no subset is run twice.

use std::collections::HashMap;

/// What one probe showed about the test under investigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeOutcome {
    /// The test's outcome flipped (a victim failed, a brittle test passed).
    Flipped,
    /// The test behaved as it does alone.
    Unchanged,
    /// No answer: the test did not run (a collection error, a crash before it). Never
    /// taken as a flip.
    Unresolved,
}

/// The smallest flipping set found, in the prefix's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bisection<T> {
    /// The culprits: run before the test, they flip it.
    pub culprits: Vec<T>,
    /// Probes run.
    pub probes: u32,
}

/// The search stopped because a probe returned an error (a budget ran out, a runner
/// failed). What was learned so far is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interrupted<T, E> {
    /// What the probe returned.
    pub error: E,
    /// Probes that ran before it (the one that returned the error is not counted).
    pub probes: u32,
    /// The smallest set seen to flip so far (the whole prefix when nothing smaller was).
    pub smallest_flipping: Vec<T>,
}

/// Finds a smallest set of `prefix` that flips the test. `prefix` must flip as a whole;
/// the empty set must not. `probe` runs the given tests (in order) before the test in one
/// fresh process and says what happened.
pub fn bisect<T: Clone, E>(
    prefix: &[T],
    probe: impl FnMut(&[T]) -> Result<ProbeOutcome, E>,
) -> Result<Bisection<T>, Interrupted<T, E>> {
    let mut search = Search {
        prefix,
        probe,
        seen: HashMap::new(),
        probes: 0,
        smallest: (0..prefix.len()).collect(),
    };
    let found = search.run();
    let items = |indices: &[usize]| indices.iter().map(|&i| prefix[i].clone()).collect();
    match found {
        Ok(indices) => Ok(Bisection {
            culprits: items(&indices),
            probes: search.probes,
        }),
        Err(error) => Err(Interrupted {
            error,
            probes: search.probes,
            smallest_flipping: items(&search.smallest),
        }),
    }
}

struct Search<'p, T, P> {
    prefix: &'p [T],
    probe: P,
    /// Outcomes by subset (indices into the prefix, ascending).
    seen: HashMap<Vec<usize>, ProbeOutcome>,
    probes: u32,
    /// The smallest subset seen to flip.
    smallest: Vec<usize>,
}

impl<T: Clone, E, P: FnMut(&[T]) -> Result<ProbeOutcome, E>> Search<'_, T, P> {
    /// Invariant: `candidates` then `culprits` flips the test; `culprits` alone (or
    /// nothing, at first) does not.
    fn run(&mut self) -> Result<Vec<usize>, E> {
        let mut candidates: Vec<usize> = (0..self.prefix.len()).collect();
        let mut culprits: Vec<usize> = Vec::new();
        while !candidates.is_empty() {
            if !culprits.is_empty() && self.flips(&culprits)? {
                break;
            }
            // The shortest `candidates[..k]` that flips with the culprits: `k = len` does,
            // `k = 0` does not.
            let (mut low, mut high) = (0, candidates.len());
            while high - low > 1 {
                let middle = low + (high - low) / 2;
                let mut subset = candidates[..middle].to_vec();
                subset.extend_from_slice(&culprits);
                if self.flips(&subset)? {
                    high = middle;
                } else {
                    low = middle;
                }
            }
            culprits.insert(0, candidates[high - 1]);
            candidates.truncate(high - 1);
        }
        Ok(culprits)
    }

    fn flips(&mut self, subset: &[usize]) -> Result<bool, E> {
        if let Some(outcome) = self.seen.get(subset) {
            return Ok(*outcome == ProbeOutcome::Flipped);
        }
        let tests: Vec<T> = subset.iter().map(|&i| self.prefix[i].clone()).collect();
        let outcome = (self.probe)(&tests)?;
        self.probes += 1;
        self.seen.insert(subset.to_vec(), outcome);
        let flipped = outcome == ProbeOutcome::Flipped;
        if flipped && subset.len() < self.smallest.len() {
            self.smallest = subset.to_vec();
        }
        Ok(flipped)
    }
}

/// What a linear search costs for the same answer: each preceding test probed alone with
/// the test, nearest first, until one flips. The baseline the benchmark compares against.
pub fn linear_search<T: Clone, E>(
    prefix: &[T],
    mut probe: impl FnMut(&[T]) -> Result<ProbeOutcome, E>,
) -> Result<(Option<T>, u32), E> {
    let mut probes = 0;
    for test in prefix.iter().rev() {
        probes += 1;
        if probe(std::slice::from_ref(test))? == ProbeOutcome::Flipped {
            return Ok((Some(test.clone()), probes));
        }
    }
    Ok((None, probes))
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use proptest::prelude::*;

    use super::*;

    /// A suite where the test flips when every test of `needed` ran before it.
    fn world(needed: &[usize]) -> impl Fn(&[usize]) -> ProbeOutcome + use<> {
        let needed = needed.to_vec();
        move |ran: &[usize]| {
            if needed.iter().all(|n| ran.contains(n)) {
                ProbeOutcome::Flipped
            } else {
                ProbeOutcome::Unchanged
            }
        }
    }

    fn run(n: usize, needed: &[usize]) -> Bisection<usize> {
        let prefix: Vec<usize> = (0..n).collect();
        let world = world(needed);
        bisect(&prefix, |ran: &[usize]| Ok::<_, Infallible>(world(ran)))
            .unwrap_or_else(|never| match never.error {})
    }

    #[test]
    fn one_polluter_is_found_at_every_position_in_log2_n_plus_one_probes() {
        for n in [2usize, 3, 7, 50, 200] {
            let bound = (n as f64).log2().ceil() as u32 + 1;
            for at in 0..n {
                let found = run(n, &[at]);
                assert_eq!(found.culprits, vec![at], "n={n} at={at}");
                assert!(found.probes <= bound, "n={n} at={at}: {}", found.probes);
            }
        }
    }

    #[test]
    fn a_single_candidate_needs_no_probe() {
        let found = run(1, &[0]);
        assert_eq!((found.culprits, found.probes), (vec![0], 0));
    }

    #[test]
    fn two_polluters_needed_together_cost_two_searches() {
        let found = run(200, &[3, 131]);
        assert_eq!(found.culprits, vec![3, 131]);
        assert!(found.probes <= 2 * (8 + 1), "{}", found.probes);
    }

    #[test]
    fn of_two_polluters_either_of_which_suffices_one_is_named() {
        let prefix: Vec<usize> = (0..40).collect();
        let found = bisect(&prefix, |ran: &[usize]| {
            Ok::<_, Infallible>(if ran.contains(&9) || ran.contains(&30) {
                ProbeOutcome::Flipped
            } else {
                ProbeOutcome::Unchanged
            })
        })
        .unwrap_or_else(|never| match never.error {});
        assert_eq!(found.culprits, vec![9]);
    }

    #[test]
    fn no_subset_is_probed_twice() {
        let prefix: Vec<usize> = (0..64).collect();
        let world = world(&[10, 50]);
        let mut asked: Vec<Vec<usize>> = Vec::new();
        let found = bisect(&prefix, |ran: &[usize]| {
            asked.push(ran.to_vec());
            Ok::<_, Infallible>(world(ran))
        })
        .unwrap_or_else(|never| match never.error {});
        let mut unique = asked.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), asked.len());
        assert_eq!(found.probes as usize, asked.len());
        assert!(asked.iter().all(|subset| !subset.is_empty()));
    }

    #[test]
    fn an_error_stops_the_search_and_keeps_the_smallest_flipping_set() {
        let prefix: Vec<usize> = (0..16).collect();
        let world = world(&[2]);
        let mut left = 2;
        let stopped = bisect(&prefix, |ran: &[usize]| {
            if left == 0 {
                return Err("budget");
            }
            left -= 1;
            Ok(world(ran))
        });
        let Err(stopped) = stopped else {
            panic!("the third probe fails");
        };
        assert_eq!(stopped.error, "budget");
        assert_eq!(stopped.probes, 2);
        // The first 8 flipped, then the first 4.
        assert_eq!(stopped.smallest_flipping, vec![0, 1, 2, 3]);
    }

    #[test]
    fn unresolved_probes_are_not_flips() {
        let prefix: Vec<usize> = (0..8).collect();
        let found = bisect(&prefix, |ran: &[usize]| {
            Ok::<_, Infallible>(if ran.contains(&6) {
                ProbeOutcome::Flipped
            } else {
                ProbeOutcome::Unresolved
            })
        })
        .unwrap_or_else(|never| match never.error {});
        assert_eq!(found.culprits, vec![6]);
    }

    #[test]
    fn linear_search_probes_from_the_nearest() {
        let prefix: Vec<usize> = (0..10).collect();
        let world = world(&[7]);
        let found = linear_search(&prefix, |ran: &[usize]| Ok::<_, Infallible>(world(ran)));
        assert_eq!(found.ok(), Some((Some(7), 3)));
    }

    proptest! {
        #![proptest_config(crate::test_support::proptest_config(200))]

        /// Whatever tests are needed together, the answer flips, keeps the prefix's order,
        /// and is 1-minimal.
        #[test]
        fn the_answer_flips_and_is_one_minimal(
            n in 1usize..40,
            needed in proptest::collection::btree_set(0usize..40, 1..4),
        ) {
            let needed: Vec<usize> = needed.into_iter().filter(|&x| x < n).collect();
            prop_assume!(!needed.is_empty());
            let world = world(&needed);
            let found = run(n, &needed);
            prop_assert_eq!(world(&found.culprits), ProbeOutcome::Flipped);
            prop_assert!(found.culprits.windows(2).all(|w| w[0] < w[1]));
            for drop in 0..found.culprits.len() {
                let mut smaller = found.culprits.clone();
                smaller.remove(drop);
                prop_assert_eq!(world(&smaller), ProbeOutcome::Unchanged);
            }
            prop_assert_eq!(found.culprits, needed);
        }
    }
}
