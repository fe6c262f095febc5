//! `candor ledger stats`: per test, how often it was rerun, how varied its first failures
//! were and on which worker counts, and the two signs of a real race hiding behind a
//! fingerprint.
//!
//! The thresholds, and why:
//! - **Same first failure.** A test with at least [`MIN_ENTRIES`] lines whose every line
//!   has the same `first_fail_sha256`. That hash covers the failure text as printed (not
//!   normalized), timings and ports included; a random flake does not print the same
//!   text three times, a deterministic failure does.
//! - **Worker cluster.** A test with at least [`MIN_ENTRIES`] lines that record a worker
//!   count, at least [`CLUSTER_SHARE`] of them at one count `w`, while fewer than
//!   [`BASELINE_SHARE`] of the other tests' lines (that record a count) are at `w`.
//!   Failures that follow a parallelism level the rest of the ledger seldom runs at point
//!   to shared state (a port, a fixture, a database) rather than chance. Without other
//!   tests' lines there is no baseline and nothing is flagged: a CI that always runs 4
//!   workers would otherwise flag every test.
//!
//! Shares are compared in whole numbers (`a * den >= num * b`), never in floating point.
//!
//! "Lines" here are reruns ([`Ledger::reruns`]): the pending line `candor rerun` writes
//! first and the outcome line it writes after count once.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Serialize;

use super::Ledger;

/// Fewest lines on which a test is flagged.
pub const MIN_ENTRIES: usize = 3;

/// Share of a test's lines at one worker count that makes a cluster: 4/5 (80%).
pub const CLUSTER_SHARE: (usize, usize) = (4, 5);

/// The other tests' share at that count must stay below this for the cluster to stand
/// out: 1/2 (50%).
pub const BASELINE_SHARE: (usize, usize) = (1, 2);

/// One test's ledger statistics.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestStats {
    /// Canonical test id.
    pub test_id: String,
    /// Its reruns (a pending line and its outcome line are one).
    pub entries: usize,
    /// Distinct `first_fail_sha256` values among them.
    pub distinct_first_failures: usize,
    /// Lines per worker count, ascending, unrecorded (`null`) last.
    pub workers: Vec<WorkerCount>,
    /// Signs of a real race.
    pub flags: Vec<Flag>,
}

/// Lines at one worker count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct WorkerCount {
    /// The count; `None` for lines that did not record one.
    pub workers: Option<u32>,
    /// Lines.
    pub entries: usize,
}

/// A sign that a fingerprint hides a real defect.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "flag", rename_all = "kebab-case")]
pub enum Flag {
    /// Every line has the same first failure.
    SameFirstFailure {
        /// The hash they share.
        first_fail_sha256: String,
        /// Lines.
        entries: usize,
    },
    /// Most lines ran at one worker count the other tests' lines seldom show.
    WorkerCluster {
        /// The count.
        workers: u32,
        /// The test's lines at that count.
        entries: usize,
        /// The test's lines that record a count.
        of: usize,
        /// Share of the other tests' lines (that record a count) at that count.
        elsewhere_share: f64,
    },
}

impl fmt::Display for Flag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Flag::SameFirstFailure {
                first_fail_sha256,
                entries,
            } => write!(
                f,
                "all {entries} reruns have the same first failure ({}…): a deterministic failure, not a flake",
                first_fail_sha256.get(..12).unwrap_or(first_fail_sha256)
            ),
            Flag::WorkerCluster {
                workers,
                entries,
                of,
                elsewhere_share,
            } => write!(
                f,
                "{entries} of its {of} reruns claimed failures with {workers} workers, against {:.0}% of other tests' reruns: look for a race on shared state",
                elsewhere_share * 100.0
            ),
        }
    }
}

/// `a / b >= num / den`, in whole numbers.
fn at_least(a: usize, b: usize, (num, den): (usize, usize)) -> bool {
    a.saturating_mul(den) >= num.saturating_mul(b)
}

/// Statistics for every test in the ledger, sorted by test id.
pub fn ledger_stats(ledger: &Ledger) -> Vec<TestStats> {
    let mut by_test: BTreeMap<&str, Vec<&super::LedgerEntry>> = BTreeMap::new();
    let mut all_workers: BTreeMap<u32, usize> = BTreeMap::new();
    for entry in ledger.reruns().iter().map(super::Rerun::entry) {
        by_test.entry(&entry.test_id).or_default().push(entry);
        if let Some(workers) = entry.workers {
            *all_workers.entry(workers).or_default() += 1;
        }
    }
    let all_known: usize = all_workers.values().sum();
    by_test
        .into_iter()
        .map(|(test_id, entries)| {
            let hashes: BTreeSet<&str> = entries
                .iter()
                .map(|e| e.first_fail_sha256.as_str())
                .collect();
            let mut known: BTreeMap<u32, usize> = BTreeMap::new();
            let mut unknown = 0;
            for entry in &entries {
                match entry.workers {
                    Some(workers) => *known.entry(workers).or_default() += 1,
                    None => unknown += 1,
                }
            }
            let mut flags = Vec::new();
            if entries.len() >= MIN_ENTRIES
                && let [only] = hashes.iter().collect::<Vec<_>>().as_slice()
            {
                flags.push(Flag::SameFirstFailure {
                    first_fail_sha256: (**only).to_owned(),
                    entries: entries.len(),
                });
            }
            if let Some(flag) = worker_cluster(&known, &all_workers, all_known) {
                flags.push(flag);
            }
            let mut workers: Vec<WorkerCount> = known
                .iter()
                .map(|(w, n)| WorkerCount {
                    workers: Some(*w),
                    entries: *n,
                })
                .collect();
            if unknown > 0 {
                workers.push(WorkerCount {
                    workers: None,
                    entries: unknown,
                });
            }
            TestStats {
                test_id: test_id.to_owned(),
                entries: entries.len(),
                distinct_first_failures: hashes.len(),
                workers,
                flags,
            }
        })
        .collect()
}

fn worker_cluster(
    test: &BTreeMap<u32, usize>,
    all: &BTreeMap<u32, usize>,
    all_known: usize,
) -> Option<Flag> {
    let of: usize = test.values().sum();
    if of < MIN_ENTRIES {
        return None;
    }
    // The first of the most frequent counts; ties cannot reach 80% anyway.
    let (&workers, &entries) = test
        .iter()
        .max_by_key(|(w, n)| (**n, std::cmp::Reverse(**w)))?;
    if !at_least(entries, of, CLUSTER_SHARE) {
        return None;
    }
    let elsewhere = all_known.saturating_sub(of);
    if elsewhere == 0 {
        return None;
    }
    let elsewhere_at = all
        .get(&workers)
        .copied()
        .unwrap_or(0)
        .saturating_sub(entries);
    if at_least(elsewhere_at, elsewhere, BASELINE_SHARE) {
        return None;
    }
    Some(Flag::WorkerCluster {
        workers,
        entries,
        of,
        elsewhere_share: elsewhere_at as f64 / elsewhere as f64,
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::{HEADER, LedgerEntry};
    use super::*;

    fn line(test: &str, hash: char, workers: Option<u32>) -> String {
        LedgerEntry {
            test_id: test.into(),
            first_fail_sha256: hash.to_string().repeat(64),
            workers,
            ..super::super::tests::entry()
        }
        .to_line()
        .unwrap()
    }

    fn ledger(lines: &[String]) -> Ledger {
        let text: String = std::iter::once(HEADER.to_owned())
            .chain(lines.iter().cloned())
            .map(|l| l + "\n")
            .collect();
        Ledger::parse(&text, Path::new("l")).unwrap()
    }

    #[test]
    fn the_same_first_failure_three_times_is_flagged_twice_is_not() {
        let twice = ledger(&[line("t", 'a', Some(4)), line("t", 'a', Some(4))]);
        assert!(ledger_stats(&twice)[0].flags.is_empty());
        let thrice = ledger(&[
            line("t", 'a', Some(4)),
            line("t", 'a', Some(2)),
            line("t", 'a', None),
        ]);
        let stats = &ledger_stats(&thrice)[0];
        assert_eq!(stats.distinct_first_failures, 1);
        assert!(matches!(
            stats.flags.as_slice(),
            [Flag::SameFirstFailure { entries: 3, .. }]
        ));
        assert_eq!(
            stats.workers,
            [
                WorkerCount {
                    workers: Some(2),
                    entries: 1
                },
                WorkerCount {
                    workers: Some(4),
                    entries: 1
                },
                WorkerCount {
                    workers: None,
                    entries: 1
                },
            ]
        );
        let varied = ledger(&[
            line("t", 'a', Some(4)),
            line("t", 'b', Some(2)),
            line("t", 'a', None),
        ]);
        assert!(ledger_stats(&varied)[0].flags.is_empty());
    }

    #[test]
    fn a_cluster_must_stand_out_from_the_other_tests() {
        let mut lines = vec![
            line("racy", 'a', Some(8)),
            line("racy", 'b', Some(8)),
            line("racy", 'c', Some(8)),
            line("racy", 'd', Some(8)),
            line("racy", 'e', Some(2)),
        ];
        // No other test: no baseline, no flag.
        assert!(ledger_stats(&ledger(&lines))[0].flags.is_empty());
        lines.extend([
            line("calm", 'f', Some(2)),
            line("calm", '0', Some(2)),
            line("calm", '1', Some(8)),
        ]);
        let stats = ledger_stats(&ledger(&lines));
        let racy = stats.iter().find(|s| s.test_id == "racy").unwrap();
        assert_eq!(
            racy.flags,
            [Flag::WorkerCluster {
                workers: 8,
                entries: 4,
                of: 5,
                elsewhere_share: 1.0 / 3.0
            }]
        );
        assert!(racy.flags[0].to_string().contains("4 of its 5"));
        // When the others run at 8 workers as much, nothing stands out.
        lines.push(line("calm", '2', Some(8)));
        let stats = ledger_stats(&ledger(&lines));
        assert!(stats.iter().all(|s| s.flags.is_empty()), "{stats:?}");
    }
}
