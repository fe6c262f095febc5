//! Receipts must be real: a rerun ledger line the change appends claims that `candor
//! rerun` ran a test at a commit and how it ended. The lane checks each claim against the
//! history — a stored `rerun` run of that test at that commit (with that outcome, once it
//! ended) — and lists every line it cannot match as unverified, which rejects without a
//! human's approval: a change could otherwise write its own alibi. Pure: the ledger texts
//! and the stored reruns come in.

use serde::Serialize;

use crate::history::{Source, StoredExecution};
use crate::ledger::{LedgerEntry, LedgerOutcome};

/// One appended ledger line and whether the history backs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Receipt {
    /// 1-based line in the head's ledger.
    pub line: usize,
    /// The line's text.
    pub text: String,
    /// A stored rerun matches it.
    pub verified: bool,
    /// Why not, when it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// The lines the head's ledger adds after the base's (the lane refuses any other edit
/// elsewhere), with their 1-based line numbers; comments and blank lines left out.
pub fn appended<'a>(base: &str, head: &'a str) -> Vec<(usize, &'a str)> {
    let kept = base.lines().count();
    head.lines()
        .enumerate()
        .skip(kept)
        .filter(|(_, line)| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|(index, line)| (index + 1, line))
        .collect()
}

/// Whether two spellings of a commit name the same one: equal, or one a prefix (of at
/// least 7 digits) of the other.
fn same_commit(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    short.len() >= 7 && long.starts_with(short)
}

/// Checks one appended line against the test's stored executions (`stored`, any source).
pub fn verify(line: usize, text: &str, stored: &[StoredExecution]) -> Receipt {
    let receipt = |problem: Option<String>| Receipt {
        line,
        text: text.to_owned(),
        verified: problem.is_none(),
        problem,
    };
    let entry = match LedgerEntry::parse_line(text) {
        Ok(entry) => entry,
        Err(error) => return receipt(Some(format!("not a ledger line: {error}"))),
    };
    let reruns: Vec<&StoredExecution> = stored
        .iter()
        .filter(|s| s.source == Source::Rerun && s.execution.test_id == entry.test_id)
        .filter(|s| {
            s.commit
                .as_deref()
                .is_some_and(|c| same_commit(c, &entry.sha))
        })
        .collect();
    if reruns.is_empty() {
        return receipt(Some(format!(
            "no `candor rerun` of {} at {} in the history",
            entry.test_id, entry.sha
        )));
    }
    match entry.outcome {
        LedgerOutcome::Pending => receipt(None),
        LedgerOutcome::Finished(outcome) => {
            if reruns.iter().any(|s| s.execution.outcome == outcome) {
                receipt(None)
            } else {
                receipt(Some(format!(
                    "the history's rerun of {} at {} did not end {}",
                    entry.test_id,
                    entry.sha,
                    outcome.as_str()
                )))
            }
        }
    }
}

/// The test id of a ledger line, to ask the history about it.
pub fn test_of(text: &str) -> Option<String> {
    LedgerEntry::parse_line(text).ok().map(|e| e.test_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Execution, Outcome};

    fn stored(source: Source, commit: &str, outcome: Outcome) -> StoredExecution {
        let mut execution = Execution::new("tests/test_cart.py::test_total", outcome);
        execution.outcome = outcome;
        StoredExecution {
            run_id: 1,
            started_at: jiff::Timestamp::UNIX_EPOCH,
            commit: Some(commit.to_owned()),
            branch: None,
            source,
            execution,
            signature: None,
        }
    }

    const LINE: &str = "2026-10-06\tabcdef1234\ttests/test_cart.py::test_total\tFP-001\t9e1c9e1c9e1c9e1c9e1c9e1c9e1c9e1c9e1c9e1c9e1c9e1c9e1c9e1c9e1c9e1c\trs=118204\t4\t2\tpass";

    #[test]
    fn a_receipt_needs_a_stored_rerun_of_the_test_at_the_commit_with_its_outcome() {
        let good = [stored(Source::Rerun, "abcdef1234567890", Outcome::Pass)];
        let receipt = verify(3, LINE, &good);
        assert!(receipt.verified, "{receipt:?}");
        let ci_only = [stored(Source::Ci, "abcdef1234567890", Outcome::Pass)];
        assert!(!verify(3, LINE, &ci_only).verified);
        let other_commit = [stored(Source::Rerun, "0123456789", Outcome::Pass)];
        assert!(!verify(3, LINE, &other_commit).verified);
        let failed = [stored(Source::Rerun, "abcdef1234567890", Outcome::Fail)];
        let receipt = verify(3, LINE, &failed);
        assert!(!receipt.verified);
        assert!(receipt.problem.unwrap().contains("did not end pass"));
        assert_eq!(
            appended("# h\na\n", "# h\na\nb\n\nc\n"),
            [(3, "b"), (5, "c")]
        );
    }
}
