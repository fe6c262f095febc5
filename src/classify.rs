//! The red-bucket classifier: from a test's run records, which kind of red (or green) it
//! is and what a reader should spend on it next. Pure: records in, buckets out. `compare`,
//! the gate and `candor classify` all judge with [`classify`]; docs/classify.md has the
//! rules in the order they are tried.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use crate::records::{RunRecord, Side};

/// What a test's runs say.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Bucket {
    /// It fails every run, with one seed and one fixture state: the code breaks an
    /// invariant the test checks.
    InvariantMiss,
    /// The fixture files changed between runs: the red may be the data's, not the code's.
    FixtureDrift,
    /// Outcomes flip between runs, or the failure cites wall time, a temp path, a port or a
    /// connection: the test depends on something outside its input.
    Noise,
    /// A failing assertion compares a measured time against a bound: the machine's load
    /// decides it, whatever the code does.
    TimingSensitive,
    /// It failed in a run that recorded no seed: nothing can be said until it is pinned
    /// (or, where the runner takes no seed at all, by what the runs show).
    Unclassified,
    /// It passed every run, on a test the change did not add.
    StablePass,
    /// It passed every run, but only on tests the change itself added: proves little.
    UntrustedGreen,
    /// `candor order`: it passes alone and fails after a polluter (named in the reason).
    OrderDependentVictim,
    /// `candor order`: it fails alone and passes after a state-setter (named in the
    /// reason).
    OrderDependentBrittle,
    /// `candor order`: alone, its outcome follows the seed (a failing seed in the reason).
    SeedDependent,
    /// `candor order`: it fails when run twice in one process.
    RepeatDependent,
}

impl Bucket {
    /// The spelling in output and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Bucket::InvariantMiss => "invariant-miss",
            Bucket::FixtureDrift => "fixture-drift",
            Bucket::Noise => "noise",
            Bucket::TimingSensitive => "timing-sensitive",
            Bucket::Unclassified => "unclassified",
            Bucket::StablePass => "stable-pass",
            Bucket::UntrustedGreen => "untrusted-green",
            Bucket::OrderDependentVictim => "order-dependent-victim",
            Bucket::OrderDependentBrittle => "order-dependent-brittle",
            Bucket::SeedDependent => "seed-dependent",
            Bucket::RepeatDependent => "repeat-dependent",
        }
    }

    /// What to spend on a test in this bucket.
    pub fn spend(self) -> &'static str {
        match self {
            Bucket::InvariantMiss => "strengthen a property: the code breaks what the test checks",
            Bucket::FixtureDrift => "diff and lock the fixture, then rerun on the locked data",
            Bucket::Noise => "capture the input and fix the test's isolation",
            Bucket::TimingSensitive => {
                "not evidence about the code: the bound is on wall time, which the machine's load decides; measure with an injected or fake clock, or assert on the work done rather than how long it took"
            }
            Bucket::Unclassified => PIN_THE_SEED,
            Bucket::StablePass => "nothing",
            Bucket::UntrustedGreen => "do not count it: the change wrote the test that passes",
            Bucket::OrderDependentVictim => {
                "not the change's: make the polluter restore the state it changes, or the test set up its own"
            }
            Bucket::OrderDependentBrittle => {
                "not the change's: give the test the setup it now borrows from the state-setter"
            }
            Bucket::SeedDependent => {
                "not the change's: make the test hold for every seed; reproduce with the failing one"
            }
            Bucket::RepeatDependent => {
                "not the change's: reset the state the test's first run leaves behind"
            }
        }
    }

    /// Whether the bucket holds a red the reader must act on.
    pub fn is_red(self) -> bool {
        matches!(
            self,
            Bucket::InvariantMiss
                | Bucket::FixtureDrift
                | Bucket::Noise
                | Bucket::TimingSensitive
                | Bucket::Unclassified
                | Bucket::OrderDependentVictim
                | Bucket::OrderDependentBrittle
                | Bucket::SeedDependent
                | Bucket::RepeatDependent
        )
    }
}

/// What an unclassified test needs when some run could have been pinned.
const PIN_THE_SEED: &str = "pin the seed and rerun";

/// What an unclassified test needs when the runner takes no seed at all.
const NO_SEED_TO_PIN: &str = "no seed to pin (the runner takes none): reproduce it by hand under the conditions of these runs and read the failing assertion";

/// One test's bucket and the facts behind it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Classified {
    /// The test.
    pub test: String,
    /// The side of a comparison the runs are from (`base` or `branch`), judged apart;
    /// absent for replays and probes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub side: Option<Side>,
    /// Its bucket.
    pub bucket: Bucket,
    /// What to spend on it.
    pub spend: &'static str,
    /// Why this bucket, in one sentence.
    pub reason: String,
    /// Runs seen.
    pub runs: u32,
    /// Of those, failures.
    pub failures: u32,
}

/// Failure messages that point outside the test's input: elapsed time, temporary paths,
/// ports, connections.
static NOISY_MESSAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)",
        r"timed? ?out|timeout|deadline|elapsed|took \d+(\.\d+)? ?(ms|s|sec)|",
        r"/tmp/|/var/folders/|\\temp\\|\btmp[a-z0-9_]{6,}|",
        r"\bport \d+|(localhost|127\.0\.0\.1|\[::1\]|0\.0\.0\.0):\d+|",
        r"connection (refused|reset|aborted|closed)|econnrefused|econnreset|broken pipe|",
        r"address already in use"
    ))
    .expect("the noise pattern is a valid regex")
});

/// A name that holds a measured time, in a failing assertion's source line.
static TIMED_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b\w*(elapsed|duration|latency|runtime|took|wall_?time|perf_counter|monotonic|",
        r"time\.time|timedelta|timing|seconds|secs|millis|nanos)\w*\b|\b\w+_(ms|us|ns|s)\b"
    ))
    .expect("the timed-name pattern is a valid regex")
});

/// A comparison against a bound: an ordering operator (not `->`, `>>` or `<<`), or
/// unittest's ordering assertions.
static BOUND: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(^|[^-<>=])(<=?|>=?)([^<>=]|$)|assert(Less|Greater)(Equal)?\b")
        .expect("the bound pattern is a valid regex")
});

/// Whether a failing assertion's source line compares a measured time against a bound
/// (`assert 0.09 < elapsed < 0.11`, `self.assertLess(duration, 2)`).
pub fn timing_assertion(line: &str) -> bool {
    TIMED_NAME.is_match(line) && BOUND.is_match(line)
}

/// Whether a failure message cites wall time, a temp path, a port or a connection.
pub fn noisy_message(text: &str) -> bool {
    NOISY_MESSAGE.is_match(text)
}

/// Buckets every test in the records, in test-id order. Skipped runs say nothing and are
/// left out; a test with only skips is not listed. Order probes are left out too: they
/// flip the test on purpose, and `candor order`'s verdict is their bucket
/// (`order::classified`).
pub fn classify(records: &[RunRecord]) -> Vec<Classified> {
    // A comparison's two sides are different code: each is judged on its own runs.
    let mut by_test: BTreeMap<(&str, Option<Side>), Vec<&RunRecord>> = BTreeMap::new();
    for record in records {
        if record.outcome != crate::results::Outcome::Skip && record.side != Side::Probe {
            let side = matches!(record.side, Side::Base | Side::Branch).then_some(record.side);
            by_test
                .entry((&record.test, side))
                .or_default()
                .push(record);
        }
    }
    by_test
        .into_iter()
        .map(|((test, side), runs)| classify_test(test, side, &runs))
        .collect()
}

/// The rules, tried in order (docs/classify.md).
fn classify_test(test: &str, side: Option<Side>, runs: &[&RunRecord]) -> Classified {
    let count = u32::try_from(runs.len()).unwrap_or(u32::MAX);
    let failures = u32::try_from(runs.iter().filter(|r| r.failed()).count()).unwrap_or(u32::MAX);
    let (bucket, reason) = bucket_of(runs, count, failures);
    let seedless = runs.iter().all(|r| r.seed.is_none());
    Classified {
        test: test.to_owned(),
        side,
        bucket,
        spend: if bucket == Bucket::Unclassified && seedless {
            NO_SEED_TO_PIN
        } else {
            bucket.spend()
        },
        reason,
        runs: count,
        failures,
    }
}

fn bucket_of(runs: &[&RunRecord], count: u32, failures: u32) -> (Bucket, String) {
    if failures == 0 {
        return if runs.iter().all(|r| r.new_test) {
            (
                Bucket::UntrustedGreen,
                format!("passed {count} of {count} runs, but the change added this test"),
            )
        } else {
            (
                Bucket::StablePass,
                format!("passed {count} of {count} runs"),
            )
        };
    }
    let mut fixture_hashes: Vec<&Option<String>> = runs.iter().map(|r| &r.fixture_hash).collect();
    fixture_hashes.sort_unstable();
    fixture_hashes.dedup();
    if fixture_hashes.len() > 1 {
        return (
            Bucket::FixtureDrift,
            format!(
                "the fixture hash took {} values across {count} runs",
                fixture_hashes.len()
            ),
        );
    }
    if let Some(line) = runs
        .iter()
        .filter(|r| r.failed())
        .filter_map(|r| r.failing_line.as_deref())
        .find(|line| timing_assertion(line))
    {
        return (
            Bucket::TimingSensitive,
            format!(
                "failed {failures} of {count} runs on an assertion that compares a measured time against a bound: `{}`",
                first_line(line)
            ),
        );
    }
    if failures < count {
        return (
            Bucket::Noise,
            format!("outcomes flip: {failures} of {count} runs failed"),
        );
    }
    if let Some(message) = runs
        .iter()
        .filter_map(|r| r.message.as_deref())
        .find(|m| noisy_message(m))
    {
        return (
            Bucket::Noise,
            format!(
                "the failure cites time, a path, a port or a connection: {}",
                first_line(message)
            ),
        );
    }
    if runs.iter().all(|r| r.seed.is_none()) {
        // Nothing to pin: say what the runs do show.
        let assertion = runs
            .iter()
            .find_map(|r| r.failing_line.as_deref().or(r.message.as_deref()))
            .map_or_else(
                || "the runner reported no failure text".to_owned(),
                |text| format!("the failing assertion: `{}`", first_line(text)),
            );
        return (
            Bucket::Unclassified,
            format!(
                "failed {failures} of {count} runs; the runner took no seed in any of them, so pinning one is impossible; known: {assertion}"
            ),
        );
    }
    if runs.iter().any(|r| r.seed.is_none()) {
        return (
            Bucket::Unclassified,
            format!("failed {failures} of {count} runs, but not every run recorded its seed"),
        );
    }
    let mut seeds: Vec<Option<u64>> = runs.iter().map(|r| r.seed).collect();
    seeds.sort_unstable();
    seeds.dedup();
    let seeds = if seeds.len() == 1 {
        "one seed".to_owned()
    } else {
        format!("{} seeds", seeds.len())
    };
    (
        Bucket::InvariantMiss,
        format!("failed {count} of {count} runs with {seeds} and one fixture state"),
    )
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// The exit code `candor classify` ends with: 2 when any test is unclassified (it needs a
/// pinned seed before anyone reasons about it), 1 when any other red bucket is present,
/// 0 when every test is green.
pub fn exit_code(classified: &[Classified]) -> u8 {
    // Unclassified for want of a seed the runner does not take is a red to act on, not a
    // missing input: rerunning with a seed is impossible.
    if classified
        .iter()
        .any(|c| c.bucket == Bucket::Unclassified && c.spend == PIN_THE_SEED)
    {
        crate::exit_codes::USAGE_OR_INPUT
    } else if classified.iter().any(|c| c.bucket.is_red()) {
        crate::exit_codes::NEGATIVE
    } else {
        crate::exit_codes::OK
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::SCHEMA;
    use crate::results::Outcome;
    use jiff::Timestamp;
    use std::path::PathBuf;

    fn run(outcome: Outcome) -> RunRecord {
        RunRecord {
            schema: SCHEMA.to_owned(),
            test: "t".to_owned(),
            side: Side::Branch,
            sequence: 1,
            commit: None,
            seed: Some(1),
            fixture_hash: Some("f".to_owned()),
            outcome,
            found: true,
            signature: None,
            exception: None,
            message: (outcome != Outcome::Pass).then(|| "assert 1 == 2".to_owned()),
            failing_line: None,
            duration_seconds: None,
            wall_seconds: 0.1,
            argv: Vec::new(),
            workers: None,
            exit_status: 0,
            timed_out: false,
            started_at: Timestamp::UNIX_EPOCH,
            log: PathBuf::new(),
            report: PathBuf::new(),
            new_test: false,
        }
    }

    fn bucket(records: &[RunRecord]) -> Bucket {
        let classified = classify(records);
        assert_eq!(classified.len(), 1, "{classified:?}");
        classified[0].bucket
    }

    #[test]
    fn every_bucket_has_its_case() {
        let fail = run(Outcome::Fail);
        let pass = run(Outcome::Pass);
        assert_eq!(bucket(&[fail.clone(), fail.clone()]), Bucket::InvariantMiss);
        assert_eq!(bucket(&[pass.clone(), pass.clone()]), Bucket::StablePass);
        assert_eq!(bucket(&[fail.clone(), pass.clone()]), Bucket::Noise);
        let drifted = RunRecord {
            fixture_hash: Some("g".to_owned()),
            ..fail.clone()
        };
        assert_eq!(bucket(&[fail.clone(), drifted]), Bucket::FixtureDrift);
        let unseeded = RunRecord {
            seed: None,
            ..fail.clone()
        };
        assert_eq!(bucket(&[fail.clone(), unseeded]), Bucket::Unclassified);
        let timeout = RunRecord {
            message: Some("Timed out after 30s waiting for 127.0.0.1:8080".to_owned()),
            ..fail.clone()
        };
        assert_eq!(bucket(&[timeout.clone(), timeout]), Bucket::Noise);
        let new = RunRecord {
            new_test: true,
            ..pass.clone()
        };
        assert_eq!(bucket(&[new.clone(), new]), Bucket::UntrustedGreen);
    }

    /// Issue 16 item 5: `assert 0.09 < elapsed < 0.11` failing on a loaded machine, on a
    /// runner that takes no seed.
    #[test]
    fn a_timing_assertion_is_timing_sensitive_and_a_seedless_runner_is_not_told_to_pin() {
        let timing = RunRecord {
            seed: None,
            message: Some("assert 0.2034 < 0.11".to_owned()),
            failing_line: Some("assert 0.09 < elapsed < 0.11".to_owned()),
            ..run(Outcome::Fail)
        };
        let classified = classify(&[timing.clone(), timing]);
        assert_eq!(classified[0].bucket, Bucket::TimingSensitive);
        assert!(
            classified[0]
                .reason
                .contains("`assert 0.09 < elapsed < 0.11`")
        );
        assert_eq!(exit_code(&classified), crate::exit_codes::NEGATIVE);
        let opaque = RunRecord {
            seed: None,
            message: Some("assert 3 == 4".to_owned()),
            failing_line: Some("assert total(cart) == 4".to_owned()),
            ..run(Outcome::Fail)
        };
        let classified = classify(&[opaque.clone(), opaque]);
        assert_eq!(classified[0].bucket, Bucket::Unclassified);
        assert!(
            !classified[0].spend.contains("pin the seed"),
            "{classified:?}"
        );
        assert!(
            classified[0].reason.contains("pinning one is impossible")
                && classified[0].reason.contains("`assert total(cart) == 4`"),
            "{classified:?}"
        );
        assert_eq!(exit_code(&classified), crate::exit_codes::NEGATIVE);
        for timed in [
            "assert elapsed < 0.5",
            "self.assertLess(duration, 2.0)",
            "assert time.monotonic() - start >= 0.1",
            "assert took_ms <= 100",
        ] {
            assert!(timing_assertion(timed), "{timed}");
        }
        for plain in [
            "assert result == expected",
            "assert len(items) < 3",
            "def elapsed() -> float:",
            "assert elapsed == 3",
        ] {
            assert!(!timing_assertion(plain), "{plain}");
        }
    }

    #[test]
    fn skips_say_nothing_and_tests_are_kept_apart() {
        let skip = run(Outcome::Skip);
        assert!(classify(&[skip]).is_empty());
        let other = RunRecord {
            test: "u".to_owned(),
            ..run(Outcome::Fail)
        };
        let classified = classify(&[run(Outcome::Pass), other]);
        let buckets: Vec<_> = classified
            .iter()
            .map(|c| (c.test.as_str(), c.bucket))
            .collect();
        assert_eq!(
            buckets,
            [("t", Bucket::StablePass), ("u", Bucket::InvariantMiss)]
        );
        assert_eq!(exit_code(&classified), crate::exit_codes::NEGATIVE);
    }

    #[test]
    fn noisy_messages_are_recognised_and_plain_ones_are_not() {
        for noisy in [
            "TimeoutError: deadline exceeded",
            "FileNotFoundError: /tmp/pytest-of-root/x",
            "ConnectionRefusedError: [Errno 111] Connection refused",
            "could not bind port 8080",
            "OSError: Address already in use",
        ] {
            assert!(noisy_message(noisy), "{noisy}");
        }
        for plain in [
            "assert 3 == 4",
            "KeyError: 'total'",
            "expected 200, got 404",
        ] {
            assert!(!noisy_message(plain), "{plain}");
        }
    }
}
