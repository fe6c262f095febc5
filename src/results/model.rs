//! The result model: what every parser produces and every other module consumes.
//!
//! Nothing here reads files or knows a runner's format; parsers in the sibling modules
//! build these values, `history` stores them, `stats` and `policy` judge them.

use std::fmt;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::signature;

/// Captured output and failure text longer than this is cut (with a marker) so that one
/// test case's memory stays bounded however large the file is.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;

/// One test's outcome in one run.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Passed on its only attempt.
    Pass,
    /// An assertion failed (JUnit `<failure>`, libtest `failed`, go `fail`).
    Fail,
    /// The test could not run to an assertion: an unexpected exception, a build failure,
    /// a timeout (JUnit `<error>`).
    Error,
    /// Not run: skipped, ignored, disabled.
    Skip,
    /// Failed, then passed inside the same run's own retries.
    FlakyPass,
}

impl Outcome {
    /// Every outcome, in the order used for display and storage codes.
    pub const ALL: [Outcome; 5] = [
        Outcome::Pass,
        Outcome::Fail,
        Outcome::Error,
        Outcome::Skip,
        Outcome::FlakyPass,
    ];

    /// The stable spelling used in JSON, the database and human output.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Error => "error",
            Outcome::Skip => "skip",
            Outcome::FlakyPass => "flaky-pass",
        }
    }

    /// Parses the stable spelling back.
    pub fn from_str_opt(text: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.as_str() == text)
    }

    /// A red outcome: the run ended with this test failing.
    pub fn is_red(self) -> bool {
        matches!(self, Outcome::Fail | Outcome::Error)
    }

    /// Whether this outcome counts as a run of the test (skips do not).
    pub fn is_run(self) -> bool {
        !matches!(self, Outcome::Skip)
    }

    /// Whether the test failed at least once in this run, even if a retry passed.
    pub fn failed_at_least_once(self) -> bool {
        matches!(self, Outcome::Fail | Outcome::Error | Outcome::FlakyPass)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One stack frame as the runner printed it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Frame {
    /// Source file as printed, made relative to the repository root when it was under it.
    pub file: String,
    /// Line number, when the runner printed one.
    pub line: Option<u32>,
    /// Function, method or test name, when the runner printed one.
    pub function: Option<String>,
}

impl Frame {
    /// `file:line`, the form fingerprints match exactly.
    pub fn location(&self) -> String {
        match self.line {
            Some(line) => format!("{}:{line}", self.file),
            None => self.file.clone(),
        }
    }
}

impl fmt::Display for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.location())?;
        if let Some(function) = &self.function {
            write!(f, ":{function}")?;
        }
        Ok(())
    }
}

/// Why a test went red: the first failure of the run for that test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// Exception or error type (`AssertionError`, `java.lang.IllegalStateException`,
    /// `panic`, `TimeoutError`); `None` when the runner gave none and none could be read.
    pub exception: Option<String>,
    /// The one-line message (the first meaningful line when the runner gave none).
    pub message: String,
    /// The full failure text (stack trace and details), cut at [`MAX_TEXT_BYTES`].
    pub text: String,
    /// Frames parsed from the text, innermost first, whatever order the language prints.
    pub frames: Vec<Frame>,
    /// The innermost frame inside the repository: where the failure is the repo's own.
    pub failing_frame: Option<Frame>,
}

impl Failure {
    /// sha256 (hex) of the normalized (exception, message, failing frame); see
    /// [`signature::signature`] for the exact recipe.
    pub fn signature(&self) -> String {
        signature::signature(
            self.exception.as_deref(),
            &self.message,
            self.failing_frame.as_ref(),
        )
    }

    /// The message after normalization: what fingerprints' `message_regex` must match.
    pub fn normalized_message(&self) -> String {
        signature::normalize(&self.message)
    }
}

/// One test's outcome in one run, with what the runner said about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Execution {
    /// Canonical test id (see `docs/formats.md`): the string the runner accepts to select
    /// this one test.
    pub test_id: String,
    /// The outcome after the run's own retries.
    pub outcome: Outcome,
    /// Wall time in seconds for the final attempt; `None` when the runner gave none or an
    /// unusable one (negative, placeholder).
    pub duration: Option<f64>,
    /// Attempts inside this run (1 unless the runner retried).
    pub attempts: u32,
    /// The first failure of the run for this test: set for fail, error and flaky-pass.
    /// Boxed: most executions have none, and each is moved several times between the
    /// parser and the store, which the failure's 150 bytes inline would make twice as
    /// long.
    pub failure: Option<Box<Failure>>,
    /// Why the test was skipped, when it was and the runner said.
    pub skip_message: Option<String>,
    /// Source file of the test as the runner reported it, if it did.
    pub file: Option<String>,
    /// Source line of the test as the runner reported it, if it did.
    pub line: Option<u32>,
    /// Captured standard output of the test, cut at [`MAX_TEXT_BYTES`].
    pub stdout: Option<String>,
    /// Captured standard error of the test, cut at [`MAX_TEXT_BYTES`].
    pub stderr: Option<String>,
}

impl Execution {
    /// A bare execution with the given id and outcome and nothing else known.
    pub fn new(test_id: impl Into<String>, outcome: Outcome) -> Execution {
        Execution {
            test_id: test_id.into(),
            outcome,
            duration: None,
            attempts: 1,
            failure: None,
            skip_message: None,
            file: None,
            line: None,
            stdout: None,
            stderr: None,
        }
    }

    /// The signature of this execution's failure, if it has one.
    pub fn signature(&self) -> Option<String> {
        self.failure.as_deref().map(Failure::signature)
    }

    /// Folds a later attempt of the same test in the same run into this one.
    ///
    /// Runners that retry by repeating the test case (pytest-rerunfailures, several
    /// JUnit writers) report each attempt separately; the run's outcome for the test is
    /// the last attempt's, except that a red followed by a green is a flaky pass. The
    /// failure kept is the first one seen, because that is the one that made the run
    /// retry.
    pub fn absorb_retry(&mut self, later: Execution) {
        let attempts = self.attempts.saturating_add(later.attempts);
        let failed_before = self.outcome.failed_at_least_once();
        let outcome = match later.outcome {
            Outcome::Pass if failed_before => Outcome::FlakyPass,
            Outcome::Skip if self.outcome != Outcome::Skip => self.outcome,
            other => other,
        };
        if self.failure.is_none() {
            self.failure = later.failure;
        }
        self.outcome = outcome;
        self.attempts = attempts;
        if later.duration.is_some() {
            self.duration = later.duration;
        }
        self.skip_message = self.skip_message.take().or(later.skip_message);
        self.file = self.file.take().or(later.file);
        self.line = self.line.or(later.line);
        self.stdout = self.stdout.take().or(later.stdout);
        self.stderr = self.stderr.take().or(later.stderr);
    }
}

/// Cuts `text` to at most [`MAX_TEXT_BYTES`] on a character boundary, saying so at the end.
pub fn cap_text(mut text: String) -> String {
    if text.len() <= MAX_TEXT_BYTES {
        return text;
    }
    let mut cut = MAX_TEXT_BYTES;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let dropped = text.len() - cut;
    text.truncate(cut);
    let _ = write!(text, "\n[candor: {dropped} more bytes not kept]");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn red_then_green_is_flaky_pass_keeping_first_failure() {
        let mut first = Execution::new("t", Outcome::Fail);
        first.failure = Some(Box::new(Failure {
            exception: Some("TimeoutError".into()),
            message: "first".into(),
            text: String::new(),
            frames: vec![],
            failing_frame: None,
        }));
        first.absorb_retry(Execution::new("t", Outcome::Pass));
        assert_eq!(first.outcome, Outcome::FlakyPass);
        assert_eq!(first.attempts, 2);
        assert_eq!(first.failure.unwrap().message, "first");
    }

    #[test]
    fn green_then_red_stays_red() {
        let mut first = Execution::new("t", Outcome::Pass);
        first.absorb_retry(Execution::new("t", Outcome::Error));
        assert_eq!(first.outcome, Outcome::Error);
    }

    #[test]
    fn cap_text_cuts_on_char_boundary() {
        let text = "é".repeat(MAX_TEXT_BYTES);
        let capped = cap_text(text);
        assert!(capped.contains("more bytes not kept"));
        assert!(capped.len() < MAX_TEXT_BYTES + 64);
    }
}
