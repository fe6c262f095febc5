//! Delta debugging over the tests that ran before a test: the smallest set of them that,
//! run before it, flips its outcome. Pure: every run goes through the probe callback, and
//! the probe decides what "flipped" means (failed, for a victim; passed, for a brittle
//! test).
//!
//! # Method
//! Usually one preceding test is the cause (Shi, Lam, Oei, Xie and Marinov, "iFixFlakies",
//! ESEC/FSE 2019, found one polluter or state-setter enough in most of the order-dependent
//! tests they studied), so the search first assumes one:
//!
//! 1. **Binary split.** The candidates flip (the caller knows: they are the order that
//!    flipped). Probe the first half; if it flips, keep it, else keep the second half
//!    *without probing it*: if one test is the cause, it is there. One probe per halving,
//!    `ceil(log2 n)` in all, plus one probe of the last test alone when the last halving
//!    was inferred rather than seen.
//! 2. **Fallback: ddmin.** When that last test does not flip alone, the assumption was
//!    wrong (two tests are needed together, or a later test cleans up after an earlier
//!    one), and Zeller and Hildebrandt's ddmin ("Simplifying and Isolating
//!    Failure-Inducing Input", IEEE TSE 28(2), 2002) runs on the whole prefix. It returns
//!    a 1-minimal set: removing any one of its tests no longer flips.
//!
//! Every probe keeps the prefix's relative order. Results are remembered by subset, so no
//! subset is run twice. The empty set is never probed: the caller has run the test alone.

use std::collections::HashMap;

/// What one probe showed about the test under investigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeOutcome {
    /// The test's outcome flipped (a victim failed, a brittle test passed).
    Flipped,
    /// The test behaved as it does alone.
    Unchanged,
    /// No answer: the test did not run (a collection error, a crash before it). ddmin's
    /// "unresolved"; never taken as a flip.
    Unresolved,
}

/// How the culprits were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// The binary split alone: one test was enough.
    BinarySplit,
    /// The binary split did not end on a test that flips alone; ddmin found the set.
    Ddmin,
}

/// The smallest flipping set found, in the prefix's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bisection<T> {
    /// The culprits: run before the test, they flip it, and (1-minimality) no proper
    /// subset obtained by removing one of them does.
    pub culprits: Vec<T>,
    /// Probes run.
    pub probes: u32,
    /// How they were found.
    pub method: Method,
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
        Ok((indices, method)) => Ok(Bisection {
            culprits: items(&indices),
            probes: search.probes,
            method,
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
    fn run(&mut self) -> Result<(Vec<usize>, Method), E> {
        let all: Vec<usize> = (0..self.prefix.len()).collect();
        if all.len() <= 1 {
            return Ok((all, Method::BinarySplit));
        }
        let leaf = self.binary_split(all.clone())?;
        if let Some(leaf) = leaf {
            return Ok((leaf, Method::BinarySplit));
        }
        Ok((self.ddmin(all)?, Method::Ddmin))
    }

    /// Halves the candidates down to one, assuming one culprit; `None` when the last one
    /// does not flip on its own.
    fn binary_split(&mut self, mut candidates: Vec<usize>) -> Result<Option<Vec<usize>>, E> {
        let mut last_seen_flipping = true;
        while candidates.len() > 1 {
            let second = candidates.split_off(candidates.len() / 2);
            if self.flips(&candidates)? {
                last_seen_flipping = true;
            } else {
                candidates = second;
                last_seen_flipping = false;
            }
        }
        if last_seen_flipping || self.flips(&candidates)? {
            Ok(Some(candidates))
        } else {
            Ok(None)
        }
    }

    /// ddmin: split into `n` parts; keep a part that flips, else a complement that flips,
    /// else split finer; stop when every part is one test and nothing smaller flips.
    fn ddmin(&mut self, mut current: Vec<usize>) -> Result<Vec<usize>, E> {
        let mut granularity = 2usize;
        while current.len() >= 2 {
            let parts = split(&current, granularity);
            let mut reduced = false;
            for part in &parts {
                if self.flips(part)? {
                    current.clone_from(part);
                    granularity = 2;
                    reduced = true;
                    break;
                }
            }
            // With two parts each complement is the other part, already probed.
            if !reduced && parts.len() > 2 {
                for skip in 0..parts.len() {
                    let complement: Vec<usize> = parts
                        .iter()
                        .enumerate()
                        .filter(|(at, _)| *at != skip)
                        .flat_map(|(_, part)| part.iter().copied())
                        .collect();
                    if self.flips(&complement)? {
                        current = complement;
                        granularity = (granularity - 1).max(2);
                        reduced = true;
                        break;
                    }
                }
            }
            if !reduced {
                if granularity >= current.len() {
                    break;
                }
                granularity = (granularity * 2).min(current.len());
            }
        }
        Ok(current)
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

/// `items` cut into `parts` contiguous, nearly equal pieces (the first ones one longer).
fn split(items: &[usize], parts: usize) -> Vec<Vec<usize>> {
    let parts = parts.clamp(1, items.len().max(1));
    let base = items.len() / parts;
    let extra = items.len() % parts;
    let mut pieces = Vec::with_capacity(parts);
    let mut start = 0;
    for at in 0..parts {
        let len = base + usize::from(at < extra);
        pieces.push(items[start..start + len].to_vec());
        start += len;
    }
    pieces
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

    /// A suite where the test flips when every test of `needed` ran before it and no
    /// test of `cleaners` ran after the last of them.
    fn world(needed: &[usize], cleaners: &[usize]) -> impl Fn(&[usize]) -> ProbeOutcome + use<> {
        let needed = needed.to_vec();
        let cleaners = cleaners.to_vec();
        move |ran: &[usize]| {
            let Some(last) = needed
                .iter()
                .map(|n| ran.iter().position(|r| r == n))
                .collect::<Option<Vec<_>>>()
                .and_then(|at| at.into_iter().max())
            else {
                return ProbeOutcome::Unchanged;
            };
            let cleaned = ran[last..].iter().any(|r| cleaners.contains(r));
            if cleaned {
                ProbeOutcome::Unchanged
            } else {
                ProbeOutcome::Flipped
            }
        }
    }

    fn run(n: usize, needed: &[usize], cleaners: &[usize]) -> Bisection<usize> {
        let prefix: Vec<usize> = (0..n).collect();
        let world = world(needed, cleaners);
        bisect(&prefix, |ran: &[usize]| Ok::<_, Infallible>(world(ran)))
            .unwrap_or_else(|never| match never.error {})
    }

    #[test]
    fn one_polluter_is_found_by_the_binary_split_at_every_position() {
        for n in [2usize, 3, 7, 50, 200] {
            let bound = (n as f64).log2().ceil() as u32 + 1;
            for at in 0..n {
                let found = run(n, &[at], &[]);
                assert_eq!(found.culprits, vec![at], "n={n} at={at}");
                assert_eq!(found.method, Method::BinarySplit);
                assert!(found.probes <= bound, "n={n} at={at}: {}", found.probes);
            }
        }
    }

    #[test]
    fn a_single_candidate_needs_no_probe() {
        let found = run(1, &[0], &[]);
        assert_eq!((found.culprits, found.probes), (vec![0], 0));
    }

    #[test]
    fn two_polluters_needed_together_fall_back_to_ddmin() {
        let found = run(40, &[3, 31], &[]);
        assert_eq!(found.culprits, vec![3, 31]);
        assert_eq!(found.method, Method::Ddmin);
    }

    #[test]
    fn a_cleaner_after_the_polluter_is_left_out() {
        // 5 pollutes, 6 cleans: only 5 alone (or 5 with tests other than 6) flips.
        let found = run(20, &[5], &[6]);
        assert_eq!(found.culprits, vec![5]);
    }

    #[test]
    fn no_subset_is_probed_twice() {
        let prefix: Vec<usize> = (0..64).collect();
        let world = world(&[10, 50], &[]);
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
        let world = world(&[2], &[]);
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
        // 0..8 flipped, then 0..4 flipped.
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
        let world = world(&[7], &[]);
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
            let world = world(&needed, &[]);
            let found = run(n, &needed, &[]);
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
