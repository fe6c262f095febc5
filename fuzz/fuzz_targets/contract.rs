//! What every fuzz target checks besides "no panic": the result model's promises about an
//! execution that a parser handed over, on an input it accepted.

use candor::results::{Execution, ParseError, ParseOptions, ParseSummary};

/// Options with a repository root, so that frame paths go through relativization.
pub fn options() -> ParseOptions {
    ParseOptions {
        repo_root: Some("/home/runner/work/app/app".to_string()),
        ..ParseOptions::default()
    }
}

/// Collects what the sink saw without keeping the executions.
#[derive(Default)]
pub struct Seen {
    executions: u64,
    broken: Vec<String>,
}

impl Seen {
    /// The sink: records each execution's broken promises.
    pub fn take(&mut self, execution: &Execution) {
        self.executions += 1;
        if let Some(problem) = broken_promise(execution) {
            self.broken.push(problem);
        }
    }

    /// Asserts the promises once the parse has returned.
    pub fn assert_kept(&self, result: &Result<ParseSummary, ParseError>) {
        let Ok(summary) = result else {
            return;
        };
        assert!(
            self.broken.is_empty(),
            "a successful parse handed over executions that break the model: {:?}",
            self.broken
        );
        assert_eq!(
            summary.executions, self.executions,
            "ParseSummary::executions must count the executions handed to the sink"
        );
    }
}

/// The first promise `execution` breaks, if any.
pub fn broken_promise(execution: &Execution) -> Option<String> {
    if execution.test_id.is_empty() {
        return Some("empty test id".to_string());
    }
    if execution.attempts == 0 {
        return Some(format!("{}: zero attempts", execution.test_id));
    }
    if let Some(duration) = execution.duration
        && !(duration.is_finite() && duration >= 0.0)
    {
        return Some(format!("{}: duration {duration}", execution.test_id));
    }
    None
}
