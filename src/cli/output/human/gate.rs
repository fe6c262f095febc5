//! `candor gate` for people: accepted or rejected, what ran, the suite's red tests, each
//! touched test's replays, the findings, the reasons, the approvals, the report's path.

use std::io;

use crate::classify::Bucket;
use crate::cli::output::{Printer, Render, terminal_safe};
use crate::events::{Event, GateEvent};

/// The renderer.
#[derive(Debug, Default)]
pub struct Gate;

impl Render for Gate {
    fn render(&mut self, printer: &mut Printer, event: &Event) -> io::Result<()> {
        match event {
            Event::Gate(gate) => print(printer, gate),
            _ => Ok(()),
        }
    }
}

fn print(printer: &mut Printer, gate: &GateEvent) -> io::Result<()> {
    let (report, path) = (&gate.report, &gate.report_path);
    let short = |sha: &str| sha.get(..12).unwrap_or(sha).to_owned();
    printer.line(&format!(
        "gate: {} (merge lane, flake budget 0; {}..{}, policy from the base)",
        if report.pass { "accepted" } else { "rejected" },
        short(&report.base),
        short(&report.head)
    ))?;
    printer.line(&format!(
        "  ran: {}",
        terminal_safe(&report.replayed.summary)
    ))?;
    if let Some(batching) = &report.batching {
        printer.line(&format!(
            "  batched: {}",
            terminal_safe(&batching.summary())
        ))?;
        for dependent in &batching.order_dependent {
            printer.line(&format!(
                "  order-dependent: {} was {} in its batch (round {}, after {}) and green alone; judged by the replays alone; next: {}",
                terminal_safe(&dependent.test),
                dependent.batched.as_str(),
                dependent.round,
                terminal_safe(
                    &dependent
                        .batch_order
                        .iter()
                        .take_while(|t| **t != dependent.test)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                terminal_safe(&dependent.next)
            ))?;
        }
    }
    if let Some(suite) = &report.suite {
        let mut lines: Vec<String> = suite
            .failed
            .iter()
            .map(|test| format!("  suite: {} failed", terminal_safe(test)))
            .collect();
        lines.extend(suite.excused.iter().map(|test| {
            format!(
                "  suite: {} failed (frozen at the base: excused)",
                terminal_safe(test)
            )
        }));
        printer.listing(&lines, "red tests of the suite")?;
    }
    let touched_lines: Vec<String> = report
        .touched
        .iter()
        .map(|touched| {
            let runs: Vec<_> = report
                .runs
                .iter()
                .filter(|r| r.test == touched.test.id)
                .collect();
            let failed = runs.iter().filter(|r| r.outcome.is_red()).count();
            format!(
                "  touched: {}{}: {} of {} replays failed [{}]",
                terminal_safe(&touched.test.id),
                if touched.test.new { " (new)" } else { "" },
                failed,
                runs.len(),
                touched.bucket.map_or("not run", Bucket::as_str)
            )
        })
        .collect();
    printer.listing(&touched_lines, "touched tests")?;
    for finding in &report.findings {
        printer.line(&format!(
            "  {}:{}: {}: {}",
            terminal_safe(&finding.file),
            finding.line,
            finding.rule,
            terminal_safe(&finding.reason)
        ))?;
    }
    for reason in &report.reasons {
        printer.line(&format!(
            "  rejected: {}",
            terminal_safe(&reason.describe())
        ))?;
    }
    for approval in &report.approvals {
        printer.line(&format!(
            "  approved by {}: {}",
            terminal_safe(&approval.by),
            terminal_safe(&approval.approved.join(", "))
        ))?;
    }
    printer.info(&format!("report: {}", path.display()))
}
