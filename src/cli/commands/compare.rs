//! `candor compare` and `candor repro`: settings in, the workflows of `app::compare` and
//! `app::repro` with the real ports, the result out as JSON or text.

use jiff::civil::Date;

use super::real_ports;
use crate::app::compare::Comparison;
use crate::app::{self, History, short};
use crate::cli::error::CliError;
use crate::cli::output::{Printer, terminal_safe};
use crate::cli::settings::{CompareSettings, ReproSettings};
use crate::compare::{self, CompareVerdict, ReproVerdict, SideSummary};
use crate::exit_codes;
use crate::history::Location;

/// `candor compare`.
pub(super) fn run(
    settings: &CompareSettings,
    db: &Location,
    repo_root: &std::path::Path,
    today: Date,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let mut history = History::at(db.clone());
    let found = real_ports(repo_root, printer, |ports| {
        app::compare::compare(settings, ports, &mut history, today)
    })?;
    if printer.is_json() {
        printer.json("compare", &found)?;
    } else {
        print_human(printer, &found)?;
    }
    Ok(if found.verdict.is_negative() {
        exit_codes::NEGATIVE
    } else {
        exit_codes::OK
    })
}

fn print_human(printer: &mut Printer, found: &Comparison) -> Result<(), CliError> {
    let Comparison {
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
            side.commit.as_deref().map_or("?", short),
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

fn print_order(printer: &mut Printer, finding: &crate::order::Finding) -> Result<(), CliError> {
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

/// `candor repro`.
pub(super) fn repro(
    settings: &ReproSettings,
    db: &Location,
    repo_root: &std::path::Path,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let mut history = History::at(db.clone());
    let found = real_ports(repo_root, printer, |ports| {
        app::repro::repro(settings, ports, &mut history)
    })?;
    if printer.is_json() {
        printer.json("repro", &found)?;
    } else {
        printer.line(&terminal_safe(&found.receipt))?;
        let applies = if found.seed_applied {
            format!("the seed fixes: {}", found.seed_controls)
        } else {
            format!("the seed was not applied: {}", found.seed_controls)
        };
        printer.line(&format!("  {} ({})", applies, found.runner))?;
        printer.info(&format!("records: {}", found.records.display()))?;
    }
    Ok(if found.verdict == ReproVerdict::Confirmed {
        exit_codes::OK
    } else {
        exit_codes::NEGATIVE
    })
}
