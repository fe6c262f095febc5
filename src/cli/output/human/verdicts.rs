//! Verdicts for people (`triage`, `test`, `rerun`): a heading line per red test, the
//! reason, the whole failure of what cannot be vouched for, the count of each verdict and
//! what to do about each; where the policy was read, as a note.

use std::io;

use crate::cli::output::{Printer, Render, Style, short, terminal_safe, text};
use crate::events::{Event, FailureEvent, TriageSummary, VerdictEvent};
use crate::stats::tiers::Tier;

/// The renderer. `next_steps`: end with what to do about each verdict present.
#[derive(Debug, Default)]
pub struct Verdicts {
    next_steps: bool,
    /// Each verdict's name and test, for the next steps.
    seen: Vec<(String, String)>,
}

impl Verdicts {
    /// Verdicts ending with the next steps (`triage`, `test`).
    pub fn with_next_steps() -> Verdicts {
        Verdicts {
            next_steps: true,
            seen: Vec::new(),
        }
    }

    /// Verdicts alone (`rerun`).
    pub fn alone() -> Verdicts {
        Verdicts::default()
    }
}

impl Render for Verdicts {
    fn render(&mut self, printer: &mut Printer, event: &Event) -> io::Result<()> {
        match event {
            Event::Policy(policy) => printer.note(&format!("policy from {}", policy.reason)),
            Event::Verdict(verdict) => {
                self.seen
                    .push((verdict.verdict.clone(), verdict.test.clone()));
                print_verdict(printer, verdict)
            }
            Event::TriageSummary(summary) => printer.info(&human_summary(summary)),
            Event::TestRun(run) => printer.info(&test_run(run)),
            Event::Text(line) => text(printer, line),
            _ => Ok(()),
        }
    }

    fn finish(&mut self, printer: &mut Printer) -> io::Result<()> {
        if self.next_steps {
            print_next_steps(printer, &self.seen)?;
        }
        Ok(())
    }
}

/// `ran the suite with pytest (seed 7, 2 workers): 12 tests, 1 red; stored as run #3, logs
/// in DIR`.
fn test_run(run: &crate::events::TestRunEvent) -> String {
    let mut details = Vec::new();
    if let Some(seed) = run.seed_value {
        details.push(format!("seed {seed}"));
    }
    if let Some(workers) = run.workers {
        details.push(plural(u64::from(workers), "worker"));
    }
    let details = if details.is_empty() {
        String::new()
    } else {
        format!(" ({})", details.join(", "))
    };
    let scratch_dir = run
        .logs
        .first()
        .and_then(|log| log.parent())
        .map_or_else(std::path::PathBuf::new, std::path::Path::to_path_buf);
    format!(
        "ran the suite with {}{details}: {}, {} red; stored as run #{}, logs in {}",
        run.runner,
        plural(run.tests, "test"),
        run.red,
        run.run_id,
        scratch_dir.display()
    )
}

fn plural(count: u64, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// `3 red tests: 1 regression, 2 known-flake`.
fn human_summary(summary: &TriageSummary) -> String {
    if summary.red == 0 {
        return "no red tests".to_owned();
    }
    let parts: Vec<String> = [
        (summary.regression, "regression"),
        (summary.expired, "expired"),
        (summary.budget_exceeded, "budget-exceeded"),
        (summary.unverified, "unverified"),
        (summary.known_flake, "known-flake"),
        (summary.not_evidence, "not-evidence"),
    ]
    .iter()
    .filter(|(count, _)| *count > 0)
    .map(|(count, name)| format!("{count} {name}"))
    .collect();
    let tests = if summary.red == 1 { "test" } else { "tests" };
    format!("{} red {tests}: {}", summary.red, parts.join(", "))
}

fn style(verdict: &str) -> Style {
    match verdict {
        "regression" | "expired" | "budget-exceeded" => Style::Red,
        "unverified" | "known-flake" => Style::Yellow,
        _ => Style::Dim,
    }
}

/// A heading line, the reason, and for a regression, an unverified red or an expired
/// fingerprint the whole failure.
fn print_verdict(printer: &mut Printer, verdict: &VerdictEvent) -> io::Result<()> {
    let color = printer.color_stdout();
    let name = match &verdict.fingerprint {
        Some(id) => format!("{} {id}", verdict.verdict),
        None => verdict.verdict.clone(),
    };
    let tier = verdict.tier.map_or("unlisted", Tier::as_str);
    printer.line(&format!(
        "{}  {}  [{tier}]",
        style(&verdict.verdict).paint(&name, color),
        terminal_safe(&verdict.test)
    ))?;
    printer.line(&format!("  why: {}", terminal_safe(&verdict.reason)))?;
    if let Some(label) = &verdict.label {
        printer.line(&format!("  label: {label}"))?;
    }
    // Whatever cannot be vouched for is shown in full: the reader must see what failed to
    // measure it or fix it.
    let full = matches!(
        verdict.verdict.as_str(),
        "regression" | "expired" | "unverified"
    );
    match (full, &verdict.failure, &verdict.signature) {
        (true, Some(failure), Some(signature)) => print_failure(printer, failure, signature),
        (true, _, _) => printer.line("  failure: the runner gave no details"),
        _ => Ok(()),
    }
}

/// Lines of a failure's text a terminal shows (the rest is counted; `--full` shows all).
const FAILURE_LINES: usize = 24;

fn print_failure(printer: &mut Printer, failure: &FailureEvent, signature: &str) -> io::Result<()> {
    let head = match &failure.exception {
        Some(exception) => format!("{exception}: {}", failure.message),
        None => failure.message.clone(),
    };
    printer.line(&format!("  failure: {}", terminal_safe(&head)))?;
    let at = failure
        .failing_frame_shown
        .clone()
        .unwrap_or_else(|| "no frame inside the repository".to_owned());
    printer.line(&format!("  at: {}", terminal_safe(&at)))?;
    printer.line(&format!("  signature: {}", short(signature, 16)))?;
    if !printer.first_showing(&format!("{signature}\n{}", failure.text)) {
        return printer.line("  | (the same failure text as above; --full prints it every time)");
    }
    let lines: Vec<String> = failure
        .text
        .lines()
        .map(|line| {
            format!("  | {}", crate::quote::visible_text_line(line))
                .trim_end()
                .to_owned()
        })
        .collect();
    printer.listing_of(&lines, "lines of the failure text", FAILURE_LINES)
}

/// What to do about each verdict present, one line each.
fn print_next_steps(printer: &mut Printer, seen: &[(String, String)]) -> io::Result<()> {
    if seen.is_empty() {
        return Ok(());
    }
    let first = |wanted: &str| {
        seen.iter()
            .find(|(verdict, _)| verdict == wanted)
            .map(|(_, test)| test.as_str())
    };
    // Agents paste advice into a shell: every command is quoted (#14 item 9).
    let command = |words: &[&str]| crate::quote::shell_command(words);
    let mut steps = Vec::new();
    if let Some(test) = first("regression") {
        steps.push(format!(
            "regression: do not rerun; read the failure above and fix the code (`{}` lists its history)",
            command(&["candor", "show", test])
        ));
    }
    if first("expired").is_some() {
        steps.push(
            "expired: treat as a regression; the fingerprint's owner renews `last_seen` in candor.toml only after confirming the shape".to_owned(),
        );
    }
    if first("budget-exceeded").is_some() {
        steps.push(format!(
            "budget-exceeded: no more reruns; label the change {} and fix the flake",
            crate::triage::BUDGET_EXCEEDED_LABEL
        ));
    }
    if let Some(test) = first("unverified") {
        steps.push(format!(
            "unverified: measure before you reason: `{}` compares its failure rate on the branch and on the merge base",
            command(&["candor", "compare", test])
        ));
    }
    if let Some(test) = first("known-flake") {
        steps.push(format!(
            "known-flake: `{}` reruns it once, after writing its ledger line",
            command(&["candor", "rerun", test])
        ));
    }
    if first("not-evidence").is_some() {
        steps.push(
            "not-evidence: a quarantined test's known shape; never change production code to make it pass"
                .to_owned(),
        );
    }
    printer.info("next:")?;
    for step in steps {
        printer.info(&format!("  {step}"))?;
    }
    Ok(())
}
