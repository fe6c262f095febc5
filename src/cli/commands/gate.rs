//! `candor gate`: settings in, `app::gate` with the real ports (it writes the report and
//! the step summary), the lane's verdict out as JSON or text.

use std::path::Path;

use jiff::civil::Date;

use super::real_ports;
use crate::app::History;
use crate::classify::Bucket;
use crate::cli::error::CliError;
use crate::cli::output::{Printer, terminal_safe};
use crate::cli::settings::GateSettings;
use crate::exit_codes;
use crate::gate::lane::ScoreReport;
use crate::history::Location;

pub(super) fn run(
    settings: &GateSettings,
    db: &Location,
    repo_root: &Path,
    today: Date,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let mut history = History::at(db.clone());
    let lane = real_ports(repo_root, printer, |ports| {
        crate::app::gate::gate(settings, ports, &mut history, today)
    })?;
    print(printer, &lane.score_report(), &lane.report_path)?;
    Ok(if lane.verdict.pass {
        exit_codes::OK
    } else {
        exit_codes::NEGATIVE
    })
}

fn print(printer: &mut Printer, report: &ScoreReport<'_>, path: &Path) -> Result<(), CliError> {
    if printer.is_json() {
        #[derive(serde::Serialize)]
        struct GateLine<'a> {
            #[serde(flatten)]
            report: &'a ScoreReport<'a>,
            report_path: &'a Path,
        }
        printer.json(
            "gate",
            &GateLine {
                report,
                report_path: path,
            },
        )?;
        return Ok(());
    }
    let short = |sha: &str| sha.get(..12).unwrap_or(sha).to_owned();
    printer.line(&format!(
        "gate: {} (merge lane, flake budget 0; {}..{}, policy from the base)",
        if report.pass { "accepted" } else { "rejected" },
        short(report.base),
        short(report.head)
    ))?;
    printer.line(&format!(
        "  ran: {}",
        terminal_safe(&report.replayed.summary)
    ))?;
    if let Some(suite) = report.suite {
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
    for finding in report.findings {
        printer.line(&format!(
            "  {}:{}: {}: {}",
            terminal_safe(&finding.file),
            finding.line,
            finding.rule,
            terminal_safe(&finding.reason)
        ))?;
    }
    for reason in report.reasons {
        printer.line(&format!(
            "  rejected: {}",
            terminal_safe(&reason.describe())
        ))?;
    }
    for approval in report.approvals {
        printer.line(&format!(
            "  approved by {}: {}",
            terminal_safe(&approval.by),
            terminal_safe(&approval.approved.join(", "))
        ))?;
    }
    printer.info(&format!("report: {}", path.display()))?;
    Ok(())
}
