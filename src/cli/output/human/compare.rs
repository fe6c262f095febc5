//! `candor compare` and `candor repro` for people: the verdict, what the suite's order
//! showed, both sides' rates, the design's strength, the advice, the ticket.

use std::io;

use crate::app::short;
use crate::cli::output::{Printer, Render, terminal_safe};
use crate::compare::{self, CompareVerdict, SideSummary};
use crate::events::{CompareEvent, Event, ReproEvent};
use crate::runner::RunnerKind;

/// The renderer of `compare`.
#[derive(Debug, Default)]
pub struct Compare;

impl Render for Compare {
    fn render(&mut self, printer: &mut Printer, event: &Event) -> io::Result<()> {
        match event {
            Event::Compare(found) => print_human(printer, found),
            _ => Ok(()),
        }
    }
}

/// `candor repro`'s text, from its event and the runner that made the runs.
pub fn repro(printer: &mut Printer, found: &ReproEvent, runner: RunnerKind) -> io::Result<()> {
    printer.line(&terminal_safe(&found.receipt))?;
    let applies = if found.seed_applied {
        format!("the seed fixes: {}", found.seed_controls)
    } else {
        format!("the seed was not applied: {}", found.seed_controls)
    };
    printer.line(&format!("  {applies} ({runner})"))?;
    printer.info(&format!("records: {}", found.records.display()))
}

fn print_human(printer: &mut Printer, found: &CompareEvent) -> io::Result<()> {
    let CompareEvent {
        verdict,
        test,
        base,
        branch,
        order,
        advice,
        seed,
        ..
    } = found;
    let (verdict, seed) = (*verdict, *seed);
    let side_text = |name: &str, side: &SideSummary| {
        format!(
            "{name} {} failed {}/{}{}",
            side.commit.as_deref().map_or("?", |c| short(c, 12)),
            side.failures,
            side.runs,
            match (side.rate, side.interval) {
                (Some(rate), Some(i)) => format!(
                    " ({:.1}%, 95% {:.1}–{:.1}%)",
                    rate * 100.0,
                    i.low * 100.0,
                    i.high * 100.0
                ),
                _ => String::new(),
            }
        )
    };
    printer.line(&format!("{}: {}", verdict.as_str(), terminal_safe(test)))?;
    // What the suite's order showed leads: it can overturn what isolation suggests.
    if let Some(finding) = order.as_ref() {
        print_order(printer, finding)?;
    }
    printer.line(&format!("  {}", side_text("merge base", base)))?;
    printer.line(&format!("  {}", side_text("branch", branch)))?;
    let stopped = match found.stopped {
        compare::Stop::Efficacy => "stopped early: the evidence crossed the boundary",
        compare::Stop::Futility => "stopped early: a large increase is ruled out",
        compare::Stop::Exhausted => "every planned run made",
    };
    printer.line(&format!(
        "  one-sided p = {:.4} after {} runs ({stopped}); seed {seed} replays them with --seed {seed}",
        found.p_value, found.runs
    ))?;
    if let Some(protection) = found.protection {
        printer.line(&format!(
            "  the design behind this call catches a rise from {:.0}% to {:.0}% failures {:.0}% of the time",
            protection.from * 100.0,
            protection.to * 100.0,
            protection.power * 100.0
        ))?;
        match found.detectable_increase {
            Some(increase) => printer.line(&format!(
                "  as one fixed test, these runs would have caught an increase of {:.0} points or more with 80% power",
                increase * 100.0
            ))?,
            None => printer.line(
                "  as one fixed test, these runs are too few to catch any increase with 80% power",
            )?,
        }
    }
    if verdict == CompareVerdict::SameRate && branch.rate > base.rate {
        printer.line(
            "  the branch failed more often in these runs, though not enough to call it: more --runs would tell",
        )?;
    }
    printer.line(&terminal_safe(advice))?;
    if let Some(ticket) = &found.ticket {
        printer.line(&format!("ticket: {}", ticket.display()))?;
    }
    printer.info(&format!("records: {}", found.records.display()))?;
    Ok(())
}

fn print_order(printer: &mut Printer, finding: &crate::order::Finding) -> io::Result<()> {
    let verdict = &finding.investigation.verdict;
    let culprits = verdict.culprits();
    let named = if culprits.is_empty() {
        String::new()
    } else {
        format!(" ({})", culprits.join(", "))
    };
    printer.line(&terminal_safe(&format!(
        "  in its suite's order: {}{named}",
        verdict.as_str()
    )))?;
    for state in &finding.shared_state {
        printer.line(&format!(
            "    shared state: {}",
            terminal_safe(&state.to_string())
        ))?;
    }
    if let Some(fix) = &finding.suggested_fix {
        printer.line(&format!("    suggested fix: {}", terminal_safe(fix)))?;
    }
    if let Some(reproduction) = &finding.reproduction {
        printer.line(&format!(
            "    reproduce: {}",
            terminal_safe(&crate::order::explain::shell_words(reproduction))
        ))?;
    }
    Ok(())
}
