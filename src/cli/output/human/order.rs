//! `candor order` for people: each stage's tallies, the verdict and what it names, the
//! shared state, the reproduction, the fix, the budget.

use std::io;
use std::path::{Path, PathBuf};

use crate::app::order::OrderFound;
use crate::cli::output::{Printer, Style, terminal_safe};
use crate::order::Verdict;
use crate::order::driver::{Investigation, Purpose, Tally};
use crate::results::Outcome;

fn tally(tally: Tally) -> String {
    let missing = if tally.missing > 0 {
        format!(" ({} did not run it)", tally.missing)
    } else {
        String::new()
    };
    format!("red {} of {}{missing}", tally.red, tally.runs)
}

/// `candor order`'s text, from the workflow's finding.
pub fn order(printer: &mut Printer, report: &OrderFound) -> io::Result<()> {
    let finding = &report.event.finding;
    let found: &Investigation = &finding.investigation;
    let color = printer.color_stdout();
    printer.line(&format!(
        "order {} ({}, base seed {})",
        terminal_safe(&found.test),
        report.event.runner,
        found.base_seed
    ))?;
    printer.line(&format!("  alone: {}", tally(found.alone)))?;
    if let Some(unseeded) = found.unseeded {
        let how = report.unseeded_how;
        printer.line(&format!(
            "  alone without reseeding{how}: {}",
            tally(unseeded)
        ))?;
    }
    if let Some(repeat) = &found.repeat {
        let red = repeat
            .runs
            .iter()
            .filter(|run| run.iter().skip(1).any(|o| o.is_red()))
            .count();
        printer.line(&format!(
            "  repeated {} times in one process: a later repetition red in {red} of {}",
            repeat.count,
            repeat.runs.len()
        ))?;
    }
    if let Some(context) = &found.context {
        printer.line(&format!(
            "  in context: {} ({} tests before it, {}, seed {})",
            tally(context.tally),
            context.tests_before,
            terminal_safe(&context.source),
            context.seed
        ))?;
        if report.event.recorded_dropped > 0 {
            printer.line(&format!(
                "    {} tests of the recorded order left out: not listed by the runner any more, or run in another process",
                report.event.recorded_dropped
            ))?;
        }
    }
    if !found.shuffles.is_empty() {
        let mut runs = Tally::default();
        for shuffle in &found.shuffles {
            runs.runs += u32::from(shuffle.outcome.is_some());
            runs.red += u32::from(shuffle.outcome.is_some_and(Outcome::is_red));
        }
        let seeds: Vec<String> = found.shuffles.iter().map(|s| s.seed.to_string()).collect();
        printer.line(&format!(
            "  shuffled with its file's tests: {} (seeds {})",
            tally(runs),
            seeds.join(", ")
        ))?;
    }
    if let Some(bisection) = found
        .bisection
        .as_ref()
        .filter(|bisection| bisection.replayed == Some(false))
    {
        printer.line(&format!(
            "  bisection: not possible: the {} run's order ({} tests before it, seed {}), given back to the runner as an order, did not flip the test",
            bisection.from.as_str(),
            bisection.candidates,
            bisection.seed
        ))?;
    } else if let Some(bisection) = &found.bisection {
        printer.line(&format!(
            "  bisection: {} probes over {} tests before it{} (order from the {} run, seed {})",
            bisection.probes,
            bisection.candidates,
            if bisection.interrupted {
                ", stopped"
            } else {
                ""
            },
            bisection.from.as_str(),
            bisection.seed
        ))?;
    }
    if let Some(verification) = &found.verification {
        printer.line(&format!(
            "  verification: culprits then the test {}; the test alone {}{}",
            tally(verification.pair),
            tally(verification.alone),
            if verification.holds {
                ""
            } else {
                " — it does not hold"
            }
        ))?;
    }

    let verdict = &found.verdict;
    let style = if verdict.explains_red() {
        Style::Bold
    } else {
        Style::Red
    };
    printer.line(&format!(
        "verdict: {}",
        style.paint(verdict.as_str(), color)
    ))?;
    match verdict {
        Verdict::OrderDependentVictim { polluters } => {
            for polluter in polluters {
                printer.line(&format!("  polluter: {}", terminal_safe(polluter)))?;
            }
        }
        Verdict::OrderDependentBrittle { state_setters } => {
            for setter in state_setters {
                printer.line(&format!("  state-setter: {}", terminal_safe(setter)))?;
            }
        }
        Verdict::SeedDependent { .. } => {
            if let Some(words) = crate::order::explain::seed_words(found) {
                printer.line(&format!("  {words}"))?;
            }
        }
        Verdict::OrderDependentUnisolated => {
            if let Some(bisection) = found.bisection.as_ref().filter(|b| b.interrupted) {
                printer.line(&format!(
                    "  smallest flipping set observed: {} tests",
                    bisection.culprits.len()
                ))?;
            } else if let Some(why) = report.fixed_order {
                printer.line(&format!("  {why}"))?;
            }
        }
        _ => {}
    }
    for state in &finding.shared_state {
        printer.line(&format!(
            "  shared state: {}",
            terminal_safe(&state.to_string())
        ))?;
    }
    if let Some(command) = &report.event.reproduction_command {
        printer.line(&format!("  reproduce: {}", terminal_safe(command)))?;
    }
    if let Some(fix) = &finding.suggested_fix {
        printer.line(&format!("  suggested fix: {}", terminal_safe(fix)))?;
    }
    let budget = &found.budget;
    if let Some(stage) = budget.exhausted_during {
        printer.line(&format!(
            "budget: spent after {:.0}s of {:.0}s, during the {} stage; the verdict is what was established by then (raise --budget-seconds)",
            budget.spent_seconds,
            budget.limit_seconds,
            stage_name(stage)
        ))?;
    }
    printer.info(&format!(
        "probes: {} in {:.1}s of a {:.0}s budget; logs and run records in {}",
        found.probes.len(),
        budget.spent_seconds,
        budget.limit_seconds,
        display_dir(&finding.dir)
    ))
}

fn stage_name(purpose: Purpose) -> &'static str {
    match purpose {
        Purpose::Alone | Purpose::SeedCheck | Purpose::Unseeded | Purpose::SeedSearch => "alone",
        Purpose::Repeat => "repeat",
        Purpose::Context => "context",
        Purpose::Shuffle | Purpose::Confirm => "shuffle",
        Purpose::Bisect => "bisection",
        Purpose::VerifyPair | Purpose::VerifyAlone => "verification",
    }
}

fn display_dir(dir: &Path) -> String {
    terminal_safe(&PathBuf::from(dir).display().to_string())
}
