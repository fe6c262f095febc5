//! Flake fingerprints: the exact shape of a known flake and the pure match of one failure
//! against it, field by field, saying which field missed.
//!
//! A failure matches a fingerprint only if every field holds, in this order (the order in
//! which a near miss is reported): the same test id; the same exception type; the
//! fingerprint's `message_regex` matching the *whole* normalized message; the failing
//! frame exactly `file:line`; and every condition holding for the run that produced it.
//! A condition the run does not record does not hold: a fingerprint is a claim that a
//! failure is harmless, and a claim is only granted on evidence, so "unknown" counts
//! against it rather than for it.

use std::fmt;

use jiff::civil::Date;
use regex::Regex;

use crate::results::{Failure, Frame};

/// A known flake's exact shape, from a `[[fingerprint]]` table in `candor.toml`.
#[derive(Debug, Clone, PartialEq)]
pub struct Fingerprint {
    /// Its name in reasons and ledger lines (`FP-001`); unique, no whitespace.
    pub id: String,
    /// The canonical test id it belongs to.
    pub test: String,
    /// The exception type, exactly as the failure reports it.
    pub exception: String,
    /// Must match the whole normalized message.
    pub message: MessagePattern,
    /// The failing frame, exactly `file:line`.
    pub frame: String,
    /// What the run must have been like.
    pub conditions: FingerprintConditions,
    /// When a human last confirmed the shape; it expires `fingerprint_expiry_days` later.
    pub last_seen: Date,
    /// Who answers for it.
    pub owner: String,
    /// 1-based line of its `[[fingerprint]]` header, for messages.
    pub line: usize,
}

/// A fingerprint's `message_regex`, compiled anchored at both ends.
#[derive(Debug, Clone)]
pub struct MessagePattern {
    source: String,
    anchored: Regex,
}

impl MessagePattern {
    /// Compiles `source` as `^(?:source)$`, so that it must match the whole message: an
    /// unanchored pattern would let `Timed out` pardon `Timed out; then the pool leaked`.
    pub fn new(source: &str) -> Result<MessagePattern, regex::Error> {
        let anchored = Regex::new(&format!("^(?:{source})$"))?;
        Ok(MessagePattern {
            source: source.to_owned(),
            anchored,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether the pattern matches all of `text`.
    pub fn matches_whole(&self, text: &str) -> bool {
        self.anchored.is_match(text)
    }
}

impl PartialEq for MessagePattern {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

/// `conditions = { ci, min_workers, max_workers, runner, os }`; an absent key is no
/// condition, so `conditions = {}` matches any run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FingerprintConditions {
    /// The run must (or must not) have been under CI.
    pub ci: Option<bool>,
    /// The run used at least this many workers.
    pub min_workers: Option<u32>,
    /// The run used at most this many workers.
    pub max_workers: Option<u32>,
    /// The runner, exactly (`pytest`, `cargo`, `nextest`, `go`, …).
    pub runner: Option<String>,
    /// The operating system, exactly (`linux`, `macos`, `windows`).
    pub os: Option<String>,
}

/// What is known about the run that produced a failure; `None` means not recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunConditions {
    /// Whether it ran under CI.
    pub ci: Option<bool>,
    /// Worker (parallelism) count.
    pub workers: Option<u32>,
    /// The runner.
    pub runner: Option<String>,
    /// The operating system.
    pub os: Option<String>,
}

/// The first field of a fingerprint that a failure of the same test does not meet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mismatch {
    /// Another test: not a near miss at all.
    Test {
        /// The fingerprint's test.
        expected: String,
    },
    /// Another exception type, or none.
    Exception {
        /// The fingerprint's type.
        expected: String,
        /// The failure's type.
        found: Option<String>,
    },
    /// The normalized message is not wholly matched by the pattern.
    Message {
        /// The fingerprint's `message_regex`.
        pattern: String,
        /// The failure's normalized message.
        found: String,
    },
    /// Another failing frame, or none.
    Frame {
        /// The fingerprint's `file:line`.
        expected: String,
        /// The failure's failing frame as `file:line`.
        found: Option<String>,
    },
    /// A condition does not hold for the run.
    Condition(ConditionMismatch),
}

/// A fingerprint condition the run did not meet, or did not record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConditionMismatch {
    /// `ci`.
    Ci {
        /// Required value.
        expected: bool,
        /// The run's.
        found: Option<bool>,
    },
    /// `min_workers`.
    MinWorkers {
        /// The bound.
        min: u32,
        /// The run's worker count.
        found: Option<u32>,
    },
    /// `max_workers`.
    MaxWorkers {
        /// The bound.
        max: u32,
        /// The run's worker count.
        found: Option<u32>,
    },
    /// `runner`.
    Runner {
        /// Required runner.
        expected: String,
        /// The run's.
        found: Option<String>,
    },
    /// `os`.
    Os {
        /// Required OS.
        expected: String,
        /// The run's.
        found: Option<String>,
    },
}

impl Mismatch {
    /// How far the failure got through the fields before this one missed: the larger,
    /// the nearer the miss.
    pub fn depth(&self) -> u8 {
        match self {
            Mismatch::Test { .. } => 0,
            Mismatch::Exception { .. } => 1,
            Mismatch::Message { .. } => 2,
            Mismatch::Frame { .. } => 3,
            Mismatch::Condition(_) => 4,
        }
    }

    /// The fields that did match, as the start of a reason ("same test, but …").
    pub fn matched(&self) -> &'static str {
        match self {
            Mismatch::Test { .. } => "another test",
            Mismatch::Exception { .. } => "same test",
            Mismatch::Message { .. } => "same test and exception",
            Mismatch::Frame { .. } => "same test, exception and message",
            Mismatch::Condition(_) => "same failure shape",
        }
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::Test { expected } => write!(f, "the fingerprint is for {expected}"),
            Mismatch::Exception {
                expected,
                found: Some(found),
            } => write!(f, "{found} is not the fingerprint's {expected}"),
            Mismatch::Exception {
                expected,
                found: None,
            } => write!(
                f,
                "the failure has no exception type, the fingerprint's is {expected}"
            ),
            Mismatch::Message { pattern, found } => write!(
                f,
                "the normalized message {found:?} is not wholly matched by the fingerprint's message_regex {pattern:?}"
            ),
            Mismatch::Frame {
                expected,
                found: Some(found),
            } => write!(
                f,
                "it failed at {found}, not at the fingerprint's {expected}"
            ),
            Mismatch::Frame {
                expected,
                found: None,
            } => write!(
                f,
                "the failure has no failing frame inside the repository, the fingerprint's is {expected}"
            ),
            Mismatch::Condition(condition) => condition.fmt(f),
        }
    }
}

impl fmt::Display for ConditionMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unrecorded = |f: &mut fmt::Formatter<'_>, what: &str, needs: String| {
            write!(
                f,
                "the run does not record its {what}, and the fingerprint needs {needs}"
            )
        };
        match self {
            ConditionMismatch::Ci {
                expected,
                found: None,
            } => unrecorded(f, "CI status", format!("ci = {expected}")),
            ConditionMismatch::Ci { expected, .. } => {
                let was = if *expected {
                    "not under CI"
                } else {
                    "under CI"
                };
                write!(
                    f,
                    "the run was {was}, and the fingerprint needs ci = {expected}"
                )
            }
            ConditionMismatch::MinWorkers { min, found: None } => {
                unrecorded(f, "worker count", format!("min_workers = {min}"))
            }
            ConditionMismatch::MinWorkers {
                min,
                found: Some(found),
            } => write!(
                f,
                "the run used {found} workers, fewer than the fingerprint's min_workers = {min}"
            ),
            ConditionMismatch::MaxWorkers { max, found: None } => {
                unrecorded(f, "worker count", format!("max_workers = {max}"))
            }
            ConditionMismatch::MaxWorkers {
                max,
                found: Some(found),
            } => write!(
                f,
                "the run used {found} workers, more than the fingerprint's max_workers = {max}"
            ),
            ConditionMismatch::Runner {
                expected,
                found: None,
            } => unrecorded(f, "runner", format!("runner = {expected:?}")),
            ConditionMismatch::Runner {
                expected,
                found: Some(found),
            } => write!(
                f,
                "the run's runner is {found:?}, not the fingerprint's {expected:?}"
            ),
            ConditionMismatch::Os {
                expected,
                found: None,
            } => unrecorded(f, "operating system", format!("os = {expected:?}")),
            ConditionMismatch::Os {
                expected,
                found: Some(found),
            } => write!(
                f,
                "the run's OS is {found:?}, not the fingerprint's {expected:?}"
            ),
        }
    }
}

impl FingerprintConditions {
    /// The first condition the run does not meet or does not record.
    pub fn check(&self, run: &RunConditions) -> Result<(), ConditionMismatch> {
        if let Some(expected) = self.ci
            && run.ci != Some(expected)
        {
            return Err(ConditionMismatch::Ci {
                expected,
                found: run.ci,
            });
        }
        if let Some(min) = self.min_workers
            && run.workers.is_none_or(|workers| workers < min)
        {
            return Err(ConditionMismatch::MinWorkers {
                min,
                found: run.workers,
            });
        }
        if let Some(max) = self.max_workers
            && run.workers.is_none_or(|workers| workers > max)
        {
            return Err(ConditionMismatch::MaxWorkers {
                max,
                found: run.workers,
            });
        }
        if let Some(expected) = &self.runner
            && run.runner.as_ref() != Some(expected)
        {
            return Err(ConditionMismatch::Runner {
                expected: expected.clone(),
                found: run.runner.clone(),
            });
        }
        if let Some(expected) = &self.os
            && run.os.as_ref() != Some(expected)
        {
            return Err(ConditionMismatch::Os {
                expected: expected.clone(),
                found: run.os.clone(),
            });
        }
        Ok(())
    }
}

impl Fingerprint {
    /// Whether `failure` of `test_id`, in a run like `run`, is exactly this shape; else the
    /// first field (in the module's order) that is not. A red test with no failure details
    /// cannot show its shape, so it misses at the exception.
    pub fn check(
        &self,
        test_id: &str,
        failure: Option<&Failure>,
        run: &RunConditions,
    ) -> Result<(), Mismatch> {
        if test_id != self.test {
            return Err(Mismatch::Test {
                expected: self.test.clone(),
            });
        }
        let Some(failure) = failure else {
            return Err(Mismatch::Exception {
                expected: self.exception.clone(),
                found: None,
            });
        };
        if failure.exception.as_deref() != Some(self.exception.as_str()) {
            return Err(Mismatch::Exception {
                expected: self.exception.clone(),
                found: failure.exception.clone(),
            });
        }
        let message = failure.normalized_message();
        if !self.message.matches_whole(&message) {
            return Err(Mismatch::Message {
                pattern: self.message.as_str().to_owned(),
                found: message,
            });
        }
        let frame = failure.failing_frame.as_ref().map(Frame::location);
        if frame.as_deref() != Some(self.frame.as_str()) {
            return Err(Mismatch::Frame {
                expected: self.frame.clone(),
                found: frame,
            });
        }
        self.conditions.check(run).map_err(Mismatch::Condition)
    }

    /// Whole days from `last_seen` to `today` (negative when `last_seen` is later).
    pub fn age_days(&self, today: Date) -> i64 {
        today
            .since(self.last_seen)
            .map_or(0, |span| i64::from(span.get_days()))
    }

    /// Expired: `last_seen` is more than `expiry_days` days before `today`. On the last
    /// day itself it still holds.
    pub fn is_expired(&self, today: Date, expiry_days: u32) -> bool {
        self.age_days(today) > i64::from(expiry_days)
    }
}

/// How a failure stands against every fingerprint.
#[derive(Debug, Clone, PartialEq)]
pub enum FingerprintMatch<'a> {
    /// Every field matches a fingerprint. When several do, a live one is preferred to an
    /// expired one (a renewed fingerprint supersedes a stale one), then the first in the
    /// file.
    Exact {
        /// The fingerprint.
        fingerprint: &'a Fingerprint,
        /// Whether it has expired.
        expired: bool,
    },
    /// Fingerprints exist for the test, and this one got furthest before a field missed.
    NearMiss {
        /// The nearest fingerprint (the first in the file among equally near ones).
        fingerprint: &'a Fingerprint,
        /// Its first field that missed.
        mismatch: Mismatch,
    },
    /// No fingerprint names this test.
    NoneForTest,
}

/// Matches one failure against every fingerprint.
pub fn find_match<'a>(
    fingerprints: &'a [Fingerprint],
    test_id: &str,
    failure: Option<&Failure>,
    run: &RunConditions,
    today: Date,
    expiry_days: u32,
) -> FingerprintMatch<'a> {
    let mut expired_exact = None;
    let mut nearest: Option<(&Fingerprint, Mismatch)> = None;
    for fingerprint in fingerprints.iter().filter(|fp| fp.test == test_id) {
        match fingerprint.check(test_id, failure, run) {
            Ok(()) if !fingerprint.is_expired(today, expiry_days) => {
                return FingerprintMatch::Exact {
                    fingerprint,
                    expired: false,
                };
            }
            Ok(()) => {
                expired_exact.get_or_insert(fingerprint);
            }
            Err(mismatch) => {
                if nearest
                    .as_ref()
                    .is_none_or(|(_, best)| mismatch.depth() > best.depth())
                {
                    nearest = Some((fingerprint, mismatch));
                }
            }
        }
    }
    if let Some(fingerprint) = expired_exact {
        return FingerprintMatch::Exact {
            fingerprint,
            expired: true,
        };
    }
    match nearest {
        Some((fingerprint, mismatch)) => FingerprintMatch::NearMiss {
            fingerprint,
            mismatch,
        },
        None => FingerprintMatch::NoneForTest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fingerprint() -> Fingerprint {
        Fingerprint {
            id: "FP-001".into(),
            test: "tests/payments/test_webhook.py::test_payment_webhook".into(),
            exception: "TimeoutError".into(),
            message: MessagePattern::new(
                r"Timed out after \d+(\.\d+)?s waiting for webhook stub on port \d+",
            )
            .unwrap(),
            frame: "tests/payments/conftest.py:88".into(),
            conditions: FingerprintConditions {
                ci: Some(true),
                min_workers: Some(4),
                ..FingerprintConditions::default()
            },
            last_seen: Date::constant(2026, 10, 7),
            owner: "@payments-oncall".into(),
            line: 1,
        }
    }

    fn failure(exception: &str, message: &str, frame: (&str, u32)) -> Failure {
        Failure {
            exception: Some(exception.into()),
            message: message.into(),
            text: String::new(),
            frames: vec![],
            failing_frame: Some(Frame {
                file: frame.0.into(),
                line: Some(frame.1),
                function: None,
            }),
        }
    }

    fn ci_run(workers: u32) -> RunConditions {
        RunConditions {
            ci: Some(true),
            workers: Some(workers),
            runner: Some("pytest".into()),
            os: Some("linux".into()),
        }
    }

    const TEST: &str = "tests/payments/test_webhook.py::test_payment_webhook";
    const MESSAGE: &str = "Timed out after 30.5s waiting for webhook stub on port 41234";
    const FRAME: (&str, u32) = ("tests/payments/conftest.py", 88);

    #[test]
    fn the_exact_shape_matches() {
        let fp = fingerprint();
        let failure = failure("TimeoutError", MESSAGE, FRAME);
        assert_eq!(fp.check(TEST, Some(&failure), &ci_run(4)), Ok(()));
    }

    #[test]
    fn each_field_reports_its_own_miss() {
        let fp = fingerprint();
        let run = ci_run(4);
        let other_exception = failure("AttributeError", MESSAGE, FRAME);
        let miss = fp.check(TEST, Some(&other_exception), &run).unwrap_err();
        assert_eq!(
            format!("{}, but {miss}", miss.matched()),
            "same test, but AttributeError is not the fingerprint's TimeoutError"
        );
        let other_frame = failure("TimeoutError", MESSAGE, ("tests/payments/conftest.py", 91));
        let miss = fp.check(TEST, Some(&other_frame), &run).unwrap_err();
        assert!(matches!(miss, Mismatch::Frame { .. }), "{miss:?}");
        assert!(miss.to_string().contains("conftest.py:91"), "{miss}");
        let other_message = failure("TimeoutError", "Connection refused", FRAME);
        assert!(matches!(
            fp.check(TEST, Some(&other_message), &run),
            Err(Mismatch::Message { .. })
        ));
        assert!(matches!(
            fp.check("tests/other.py::t", Some(&other_message), &run),
            Err(Mismatch::Test { .. })
        ));
    }

    #[test]
    fn the_pattern_must_match_the_whole_normalized_message() {
        let fp = fingerprint();
        let run = ci_run(4);
        let longer = failure(
            "TimeoutError",
            "Timed out after 30.5s waiting for webhook stub on port 41234; pool leaked",
            FRAME,
        );
        assert!(matches!(
            fp.check(TEST, Some(&longer), &run),
            Err(Mismatch::Message { .. })
        ));
        let prefixed = failure("TimeoutError", &format!("retry: {MESSAGE}"), FRAME);
        assert!(fp.check(TEST, Some(&prefixed), &run).is_err());
        // An alternation is anchored as a whole, not only its first branch.
        let either = MessagePattern::new("a|b").unwrap();
        assert!(either.matches_whole("b"));
        assert!(!either.matches_whole("ab"));
        assert!(!either.matches_whole("bc"));
    }

    #[test]
    fn unrecorded_conditions_do_not_hold() {
        let fp = fingerprint();
        let shape = failure("TimeoutError", MESSAGE, FRAME);
        let unknown_workers = RunConditions {
            workers: None,
            ..ci_run(4)
        };
        let miss = fp.check(TEST, Some(&shape), &unknown_workers).unwrap_err();
        assert_eq!(
            miss,
            Mismatch::Condition(ConditionMismatch::MinWorkers {
                min: 4,
                found: None
            })
        );
        assert!(miss.to_string().contains("does not record"), "{miss}");
        let local = RunConditions {
            ci: Some(false),
            ..ci_run(8)
        };
        assert!(matches!(
            fp.check(TEST, Some(&shape), &local),
            Err(Mismatch::Condition(ConditionMismatch::Ci { .. }))
        ));
        let few = fp.check(TEST, Some(&shape), &ci_run(2)).unwrap_err();
        assert!(few.to_string().contains("used 2 workers"), "{few}");
    }

    #[test]
    fn every_condition_is_checked() {
        let conditions = FingerprintConditions {
            ci: None,
            min_workers: Some(2),
            max_workers: Some(4),
            runner: Some("pytest".into()),
            os: Some("linux".into()),
        };
        assert_eq!(conditions.check(&ci_run(3)), Ok(()));
        assert!(matches!(
            conditions.check(&ci_run(5)),
            Err(ConditionMismatch::MaxWorkers { max: 4, .. })
        ));
        let go = RunConditions {
            runner: Some("go".into()),
            ..ci_run(3)
        };
        assert!(matches!(
            conditions.check(&go),
            Err(ConditionMismatch::Runner { .. })
        ));
        let mac = RunConditions {
            os: Some("macos".into()),
            ..ci_run(3)
        };
        assert!(matches!(
            conditions.check(&mac),
            Err(ConditionMismatch::Os { .. })
        ));
        assert_eq!(
            FingerprintConditions::default().check(&RunConditions::default()),
            Ok(())
        );
    }

    #[test]
    fn a_failure_without_details_misses_at_the_exception() {
        let fp = fingerprint();
        assert!(matches!(
            fp.check(TEST, None, &ci_run(4)),
            Err(Mismatch::Exception { found: None, .. })
        ));
    }

    #[test]
    fn expiry_counts_whole_days_after_last_seen() {
        let fp = fingerprint();
        assert!(!fp.is_expired(Date::constant(2026, 12, 6), 60));
        assert!(fp.is_expired(Date::constant(2026, 12, 7), 60));
        assert!(!fp.is_expired(Date::constant(2026, 1, 1), 60));
    }

    #[test]
    fn a_live_exact_match_wins_over_an_expired_one_and_the_nearest_miss_is_reported() {
        let mut stale = fingerprint();
        stale.id = "FP-000".into();
        stale.last_seen = Date::constant(2025, 1, 1);
        let mut other_frame = fingerprint();
        other_frame.id = "FP-002".into();
        other_frame.frame = "tests/payments/conftest.py:12".into();
        let live = fingerprint();
        let today = Date::constant(2026, 10, 8);
        let shape = failure("TimeoutError", MESSAGE, FRAME);
        let all = [stale.clone(), other_frame.clone(), live];
        let found = find_match(&all, TEST, Some(&shape), &ci_run(4), today, 60);
        assert!(
            matches!(found, FingerprintMatch::Exact { fingerprint, expired: false } if fingerprint.id == "FP-001")
        );
        let only_stale = [stale, other_frame.clone()];
        let found = find_match(&only_stale, TEST, Some(&shape), &ci_run(4), today, 60);
        assert!(
            matches!(found, FingerprintMatch::Exact { fingerprint, expired: true } if fingerprint.id == "FP-000")
        );
        let wrong_exception = failure("AttributeError", MESSAGE, FRAME);
        let mut exception_only = fingerprint();
        exception_only.id = "FP-003".into();
        exception_only.exception = "AttributeError".into();
        exception_only.frame = "elsewhere.py:1".into();
        let candidates = [fingerprint(), exception_only];
        let found = find_match(
            &candidates,
            TEST,
            Some(&wrong_exception),
            &ci_run(4),
            today,
            60,
        );
        assert!(
            matches!(&found, FingerprintMatch::NearMiss { fingerprint, mismatch: Mismatch::Frame { .. } } if fingerprint.id == "FP-003"),
            "{found:?}"
        );
        assert_eq!(
            find_match(&candidates, "t::other", Some(&shape), &ci_run(4), today, 60),
            FingerprintMatch::NoneForTest
        );
    }
}
