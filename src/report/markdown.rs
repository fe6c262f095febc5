//! The pull-request comment (or job summary) in Markdown: one row per red test with its
//! verdict, tier, what the merge base showed and the next step, then each failure folded
//! in `<details>`. It stays under a character limit by folding the failures first and
//! then the rows, and says what it folded.

use std::fmt::Write as _;

use serde::Serialize;

/// GitHub's limit for one issue or pull-request comment, in characters.
pub const COMMENT_LIMIT: usize = 65_536;

/// GitHub's limit for one step's job summary, in bytes.
pub const STEP_SUMMARY_LIMIT: usize = 1024 * 1024;

/// One red test as the comment shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RedRow {
    /// Canonical id.
    pub test: String,
    /// The verdict's name (`regression`, `known-flake`, …).
    pub verdict: String,
    /// The fingerprint it matched, when it did.
    pub fingerprint: Option<String>,
    /// Its tier, when the reliability file lists it.
    pub tier: Option<String>,
    /// What the merge base's runs of the test showed, when the history has them.
    pub on_base: Option<String>,
    /// The test's failing share in the history, when it has runs.
    pub history_rate: Option<String>,
    /// The one-line reason.
    pub reason: String,
    /// What to do next.
    pub next: String,
    /// The failure as the runner printed it.
    pub failure: Option<String>,
}

/// The verdict in the words a reviewer reads first.
fn headline(row: &RedRow) -> String {
    match row.verdict.as_str() {
        "regression" => "**probably caused by this change**".to_owned(),
        "known-flake" => format!(
            "known flake {}{}",
            row.fingerprint.as_deref().unwrap_or(""),
            row.history_rate
                .as_deref()
                .map(|r| format!(", {r}"))
                .unwrap_or_default()
        ),
        "not-evidence" => "quarantined: not evidence".to_owned(),
        "unverified" => "**unverified: measure before you reason**".to_owned(),
        "budget-exceeded" => "**rerun budget spent**".to_owned(),
        "expired" => "**fingerprint expired: treat as a regression**".to_owned(),
        other => other.to_owned(),
    }
}

/// Markdown table cells must not break the row.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// A fence longer than any run of backticks in `text`.
fn fence(text: &str) -> String {
    let mut longest = 0;
    let mut current = 0;
    for c in text.chars() {
        if c == '`' {
            current += 1;
            longest = longest.max(current);
        } else {
            current = 0;
        }
    }
    "`".repeat(longest.max(2) + 1)
}

fn table_row(row: &RedRow) -> String {
    format!(
        "| `{}` | {} | {} | {} | {} |\n",
        cell(&row.test).replace('`', "'"),
        cell(&headline(row)),
        row.tier.as_deref().unwrap_or("unlisted"),
        cell(row.on_base.as_deref().unwrap_or("not in the history")),
        cell(&row.next)
    )
}

fn details(row: &RedRow) -> Option<String> {
    let failure = row.failure.as_deref()?;
    let fence = fence(failure);
    Some(format!(
        "<details><summary><code>{}</code>: {}</summary>\n\n{}\n\n{fence}text\n{}\n{fence}\n\n</details>\n\n",
        html_escape(&row.test),
        html_escape(&row.verdict),
        cell(&row.reason),
        failure.trim_end()
    ))
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The comment, at most `limit` characters.
pub fn render(rows: &[RedRow], limit: usize) -> String {
    let mut head = String::from("### candor: red tests\n\n");
    if rows.is_empty() {
        head.push_str("No red test in this run.\n");
        return head;
    }
    let negative = rows
        .iter()
        .filter(|r| !matches!(r.verdict.as_str(), "known-flake" | "not-evidence"))
        .count();
    let _ = writeln!(
        head,
        "{} red {}: {} {} this change from merging.\n",
        rows.len(),
        if rows.len() == 1 { "test" } else { "tests" },
        negative,
        if negative == 1 { "keeps" } else { "keep" }
    );
    head.push_str(
        "| test | verdict | tier | on the merge base | next step |\n|---|---|---|---|---|\n",
    );

    let table: Vec<String> = rows.iter().map(table_row).collect();
    let bodies: Vec<Option<String>> = rows.iter().map(details).collect();
    let chars = |s: &str| s.chars().count();

    // Keep every row and as many failures as fit; then as many rows as fit.
    let mut kept_rows = rows.len();
    let mut kept_bodies = bodies.len();
    loop {
        let folded_bodies = count_some(&bodies[kept_bodies.min(kept_rows)..kept_rows]);
        let note = fold_note(rows.len() - kept_rows, folded_bodies);
        let total = chars(&head)
            + table[..kept_rows].iter().map(|s| chars(s)).sum::<usize>()
            + 1
            + bodies[..kept_bodies.min(kept_rows)]
                .iter()
                .flatten()
                .map(|s| chars(s))
                .sum::<usize>()
            + chars(&note);
        if total <= limit || kept_rows == 0 {
            let mut out = head;
            for row in &table[..kept_rows] {
                out.push_str(row);
            }
            out.push('\n');
            for body in bodies[..kept_bodies.min(kept_rows)].iter().flatten() {
                out.push_str(body);
            }
            out.push_str(&note);
            return out;
        }
        if kept_bodies > 0 {
            kept_bodies -= 1;
        } else {
            kept_rows -= 1;
        }
    }
}

fn count_some(items: &[Option<String>]) -> usize {
    items.iter().filter(|i| i.is_some()).count()
}

fn fold_note(folded_rows: usize, folded_failures: usize) -> String {
    match (folded_rows, folded_failures) {
        (0, 0) => String::new(),
        (0, failures) => format!(
            "_{failures} failure {} folded to stay under the size limit: `candor triage` prints {}._\n",
            if failures == 1 { "text" } else { "texts" },
            if failures == 1 { "it" } else { "them" }
        ),
        (rows, _) => format!(
            "_{rows} more red {} and the failure texts folded to stay under the size limit: `candor triage` lists every one._\n",
            if rows == 1 { "test" } else { "tests" }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(i: usize, verdict: &str, failure_len: usize) -> RedRow {
        RedRow {
            test: format!("tests/test_x.py::test_{i}"),
            verdict: verdict.to_owned(),
            fingerprint: (verdict == "known-flake").then(|| "FP-001".to_owned()),
            tier: Some("probation".to_owned()),
            on_base: None,
            history_rate: Some("12% of 50 runs".to_owned()),
            reason: "why | not".to_owned(),
            next: "do this".to_owned(),
            failure: Some("x".repeat(failure_len)),
        }
    }

    #[test]
    fn every_row_and_failure_when_it_fits() {
        let rows = vec![row(1, "regression", 10), row(2, "known-flake", 10)];
        let text = render(&rows, COMMENT_LIMIT);
        assert!(text.contains("2 red tests: 1 keeps this change from merging."));
        assert!(text.contains("**probably caused by this change**"));
        assert!(text.contains("known flake FP-001, 12% of 50 runs"));
        assert_eq!(text.matches("<details>").count(), 2);
        assert!(text.contains("why \\| not"), "{text}");
        assert!(!text.contains("folded"));
    }

    #[test]
    fn failures_fold_before_rows_and_the_fold_is_said() {
        let rows: Vec<RedRow> = (0..50).map(|i| row(i, "regression", 5_000)).collect();
        let text = render(&rows, COMMENT_LIMIT);
        assert!(text.chars().count() <= COMMENT_LIMIT);
        assert_eq!(
            text.matches("| `tests/test_x.py::test_").count(),
            50,
            "every row kept"
        );
        assert!(text.contains("failure texts folded"));
        let tiny = render(&rows, 2_000);
        assert!(tiny.chars().count() <= 2_000);
        assert!(
            tiny.contains("more red tests and the failure texts folded"),
            "{tiny}"
        );
    }

    #[test]
    fn a_failure_with_backticks_keeps_its_fence() {
        let mut r = row(1, "regression", 0);
        r.failure = Some("``` not the end".to_owned());
        let text = render(&[r], COMMENT_LIMIT);
        assert!(text.contains("````text\n``` not the end\n````"), "{text}");
    }
}
