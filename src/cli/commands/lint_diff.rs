//! `candor lint diff [--base REF] [--head REF]`: the lane's diff rules on the lines the
//! change adds, with the policy (bans, presets, oracle) of the base. The rules are
//! `gate::rules`' and `gate::oracle`'s; this prints them.

use std::path::Path;

use serde::Serialize;

use crate::cli::error::CliError;
use crate::cli::output::{Printer, Style, terminal_safe};
use crate::cli::settings::LintDiffSettings;
use crate::exit_codes;
use crate::gate::{self, rules::Finding};
use crate::git::Git;

/// `{"type":"lint-diff"}`: see docs/json-output.md.
#[derive(Serialize)]
struct SummaryLine<'a> {
    base: &'a str,
    head: &'a str,
    files: usize,
    findings: usize,
}

pub(super) fn run(
    settings: &LintDiffSettings,
    repo_root: &Path,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let head = settings.head.clone().map_err(CliError::NoChange)?;
    let base = settings.base.clone().map_err(CliError::NoChange)?;
    let git = Git::new(repo_root);
    let policy = gate::base_policy(&git, &base)?;
    let diff = gate::read_change(&git, &base, &head)?;
    let findings = gate::lint(&git, &base, &diff, &policy)?;
    for finding in &findings {
        print_finding(printer, finding)?;
    }
    let short = |sha: &str| sha.get(..12).unwrap_or(sha).to_owned();
    if printer.is_json() {
        printer.json(
            "lint-diff",
            &SummaryLine {
                base: &base,
                head: &head,
                files: diff.files.len(),
                findings: findings.len(),
            },
        )?;
    } else if findings.is_empty() {
        printer.info(&format!(
            "no findings in {} changed {} ({}..{}, policy from {}:candor.toml)",
            diff.files.len(),
            if diff.files.len() == 1 {
                "file"
            } else {
                "files"
            },
            short(&base),
            short(&head),
            short(&base)
        ))?;
    } else {
        printer.info(&format!(
            "{} {} in {}..{} (policy from {}:candor.toml): the merge lane refuses these lines",
            findings.len(),
            if findings.len() == 1 {
                "finding"
            } else {
                "findings"
            },
            short(&base),
            short(&head),
            short(&base)
        ))?;
    }
    Ok(if findings.is_empty() {
        exit_codes::OK
    } else {
        exit_codes::NEGATIVE
    })
}

/// One finding: `{"type":"finding",…}`, or `file:line: rule: reason` and the line.
pub(super) fn print_finding(printer: &mut Printer, finding: &Finding) -> Result<(), CliError> {
    if printer.is_json() {
        printer.json("finding", finding)?;
        return Ok(());
    }
    let color = printer.color_stdout();
    let mut reason = terminal_safe(&finding.reason);
    if let Some(source) = &finding.source {
        reason = format!("{reason} (from {})", terminal_safe(source));
    }
    printer.line(&format!(
        "{}:{}: {}: {reason}",
        terminal_safe(&finding.file),
        finding.line,
        Style::Red.paint(&finding.rule, color),
    ))?;
    if !finding.text.is_empty() {
        printer.line(&format!(
            "    {}",
            Style::Dim.paint(&terminal_safe(&finding.text), color)
        ))?;
    }
    Ok(())
}
