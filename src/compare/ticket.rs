//! The quarantine ticket `candor compare` writes on a same-rate verdict: Markdown a human
//! files as it is, with both sides' evidence and a fingerprint ready for candor.toml.
//! Rendering only; the command decides where it goes.

use std::fmt::Write as _;

use jiff::civil::Date;

use super::SideSummary;
use crate::results::{Failure, signature};
use crate::stats::tiers::Tier;

/// A side's first failure, as the runner printed it.
#[derive(Debug, Clone, PartialEq)]
pub struct FirstFailure {
    /// The run's seed.
    pub seed: Option<u64>,
    /// The failure.
    pub failure: Failure,
    /// The run's log.
    pub log: String,
}

/// Everything the ticket says.
#[derive(Debug, Clone, PartialEq)]
pub struct Ticket<'a> {
    /// The test.
    pub test: &'a str,
    /// When it was measured.
    pub today: Date,
    /// The merge base.
    pub base: &'a SideSummary,
    /// The branch.
    pub branch: &'a SideSummary,
    /// Fisher's one-sided p-value at the last look.
    pub p_value: f64,
    /// The smallest increase the runs, as one fixed test, would have caught with 80% power.
    pub detectable_increase: Option<f64>,
    /// What the sequential design behind the call protects at the base's rate.
    pub protection: super::Protection,
    /// The base's first failure.
    pub base_failure: Option<&'a FirstFailure>,
    /// The branch's first failure.
    pub branch_failure: Option<&'a FirstFailure>,
    /// Where the run records and logs are.
    pub records_dir: &'a str,
    /// The test's failures and runs in the history's latest window, when it has any.
    pub history: Option<(u64, u64)>,
    /// The test's tier in the reliability file.
    pub tier: Option<Tier>,
    /// The id the suggested fingerprint gets.
    pub fingerprint_id: &'a str,
}

/// The ticket, in Markdown.
pub fn render(ticket: &Ticket<'_>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Quarantine ticket: `{}`", ticket.test);
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Measured by `candor compare` on {}: these runs give no evidence that the change \
         raised the test's failure rate over the merge base's, so the change is not shown to \
         be the cause. Do not write a fix in this change; quarantine the failure shape below \
         and hand the test to its owner.",
        ticket.today
    );
    if ticket.branch.rate > ticket.base.rate {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "Caution: the branch failed more often than the merge base in these runs, though \
             not enough to call it at this alpha. Rerun `{}` before filing this if the \
             difference matters.",
            crate::quote::shell_command(&[
                "candor",
                "compare",
                ticket.test,
                "--runs",
                &crate::policy::config::CompareConfig::MAX_RUNS.to_string(),
            ])
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| side | commit | runs | failures | rate (95% interval) |"
    );
    let _ = writeln!(out, "| --- | --- | --- | --- | --- |");
    for (name, side) in [("merge base", ticket.base), ("branch", ticket.branch)] {
        let _ = writeln!(
            out,
            "| {name} | `{}` | {} | {} | {} |",
            side.commit.as_deref().map_or("unknown", short),
            side.runs,
            side.failures,
            rate_text(side)
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "One-sided Fisher p-value, branch worse than base: {:.3}.",
        ticket.p_value
    );
    let _ = writeln!(
        out,
        "The sequential design behind this call catches a rise from {:.0}% to {:.0}% failures \
         {:.0}% of the time (computed exactly at the base's observed rate).",
        ticket.protection.from * 100.0,
        ticket.protection.to * 100.0,
        ticket.protection.power * 100.0
    );
    match ticket.detectable_increase {
        Some(increase) => {
            let _ = writeln!(
                out,
                "As one fixed test, these runs would have caught an increase of {:.0} percentage \
                 points or more with 80% power; a smaller one cannot be ruled out.",
                increase * 100.0
            );
        }
        None => {
            let _ = writeln!(
                out,
                "As one fixed test, these runs are too few to catch any increase with 80% power."
            );
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "## History");
    let _ = writeln!(out);
    match ticket.history {
        Some((failures, runs)) if runs > 0 => {
            let _ = writeln!(
                out,
                "- recorded history: {failures} failures in the latest {runs} runs ({:.1}%)",
                failures as f64 * 100.0 / runs as f64
            );
        }
        _ => {
            let _ = writeln!(out, "- recorded history: none");
        }
    }
    let _ = writeln!(
        out,
        "- tier: {}",
        ticket.tier.map_or("unlisted", Tier::as_str)
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "## Seeds");
    let _ = writeln!(out);
    for (name, side) in [("merge base", ticket.base), ("branch", ticket.branch)] {
        let _ = writeln!(out, "- {name}: {}", seeds_text(&side.seeds));
    }
    for (name, first) in [
        ("merge base", ticket.base_failure),
        ("branch", ticket.branch_failure),
    ] {
        let _ = writeln!(out);
        let _ = writeln!(out, "## First failure on the {name}");
        let _ = writeln!(out);
        let Some(first) = first else {
            let _ = writeln!(out, "No run failed on the {name}.");
            continue;
        };
        let _ = match first.seed {
            Some(seed) => writeln!(out, "Seed {seed}, log `{}`.", first.log),
            None => writeln!(out, "No seed (the runner took none), log `{}`.", first.log),
        };
        let _ = writeln!(out);
        let text = if first.failure.text.is_empty() {
            &first.failure.message
        } else {
            &first.failure.text
        };
        let fence = fence_for(text);
        let _ = writeln!(out, "{fence}text");
        let _ = writeln!(out, "{}", text.trim_end());
        let _ = writeln!(out, "{fence}");
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "## Suggested fingerprint");
    let _ = writeln!(out);
    let suggestion = ticket
        .branch_failure
        .or(ticket.base_failure)
        .map(|first| fingerprint_toml(ticket, &first.failure));
    match suggestion {
        Some(toml) => {
            let _ = writeln!(
                out,
                "Paste into candor.toml after review; set the owner. It matches this exact \
                 shape only: any other failure of the test stays a regression."
            );
            let _ = writeln!(out);
            let _ = writeln!(out, "```toml");
            let _ = write!(out, "{toml}");
            let _ = writeln!(out, "```");
        }
        None => {
            let _ = writeln!(out, "No failure to take a shape from.");
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "Run records and logs: `{}`", ticket.records_dir);
    out
}

/// A `[[fingerprint]]` for the failure: its exception, its normalized message as an
/// anchored regex with every normalized number widened to `\d+`, its failing frame.
pub fn fingerprint_toml(ticket: &Ticket<'_>, failure: &Failure) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "[[fingerprint]]");
    let _ = writeln!(out, "id = {}", toml_string(ticket.fingerprint_id));
    let _ = writeln!(out, "test = {}", toml_string(ticket.test));
    let _ = writeln!(
        out,
        "exception = {}",
        toml_string(failure.exception.as_deref().unwrap_or(""))
    );
    let _ = writeln!(
        out,
        "message_regex = {}",
        toml_string(&message_regex(&failure.message))
    );
    let frame = failure
        .failing_frame
        .as_ref()
        .map(crate::results::Frame::location)
        .unwrap_or_default();
    let _ = writeln!(out, "frame = {}", toml_string(&frame));
    let _ = writeln!(out, "conditions = {{}}");
    let _ = writeln!(out, "last_seen = {}", ticket.today);
    let _ = writeln!(out, "owner = \"@set-the-owner\"");
    out
}

/// The normalized message as a regex matching it whole: literal text escaped, each number
/// token `\d+`.
pub fn message_regex(message: &str) -> String {
    let normalized = signature::normalize(message);
    let mut pattern = String::from("^");
    let mut literal = String::new();
    let mut chars = normalized.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
            pattern.push_str(&regex::escape(&literal));
            literal.clear();
            pattern.push_str(r"\d+");
        } else {
            literal.push(c);
        }
    }
    pattern.push_str(&regex::escape(&literal));
    pattern.push('$');
    pattern
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

fn rate_text(side: &SideSummary) -> String {
    match (side.rate, side.interval) {
        (Some(rate), Some(interval)) => format!(
            "{:.1}% ({:.1}–{:.1}%)",
            rate * 100.0,
            interval.low * 100.0,
            interval.high * 100.0
        ),
        _ => "no runs".to_owned(),
    }
}

fn seeds_text(seeds: &[Option<u64>]) -> String {
    if seeds.is_empty() {
        return "no runs".to_owned();
    }
    // A run without a seed has nothing to print: "none" once per run reads as data.
    let used: Vec<String> = seeds.iter().flatten().map(ToString::to_string).collect();
    let unseeded = seeds.len() - used.len();
    match (used.is_empty(), unseeded) {
        (true, _) => format!(
            "no seed: the runner took none in these {} runs, so they cannot be pinned",
            seeds.len()
        ),
        (false, 0) => used.join(", "),
        (false, _) => format!("{} ({unseeded} runs without a seed)", used.join(", ")),
    }
}

/// A code fence longer than any run of backticks in the text.
fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat((longest + 1).max(3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_regexes_match_the_normalized_message_whole() {
        let message = "Timed out after 3.5s waiting for stub on port 51234 (id 0x7f3a)";
        let pattern = message_regex(message);
        let regex = regex::Regex::new(&pattern).unwrap();
        assert!(regex.is_match(&signature::normalize(message)), "{pattern}");
        assert!(regex.is_match(&signature::normalize(
            "Timed out after 12.25s waiting for stub on port 8080 (id 0xdeadbeef)"
        )));
        assert!(!regex.is_match(&signature::normalize("Timed out after 3s")));
        assert!(pattern.starts_with('^') && pattern.ends_with('$'));
    }

    /// Issue 16 item 3: a seed that was not used is not printed as "none" per run.
    #[test]
    fn seeds_a_runner_did_not_take_are_said_once() {
        assert_eq!(
            seeds_text(&[None, None, None, None]),
            "no seed: the runner took none in these 4 runs, so they cannot be pinned"
        );
        assert_eq!(seeds_text(&[Some(3), Some(9)]), "3, 9");
        assert_eq!(seeds_text(&[Some(3), None]), "3 (1 runs without a seed)");
        assert!(!seeds_text(&[None, None]).contains("none, none"));
    }

    #[test]
    fn fences_outgrow_backticks_in_the_text() {
        assert_eq!(fence_for("plain"), "```");
        assert_eq!(fence_for("a ```` b"), "`````");
    }
}
