//! `candor lint summary FILE`: every sentence that claims a rerun ("passed on rerun",
//! "known flake", … as `[triage] summary_phrases` says) without quoting a ledger line that
//! records how a rerun ended, named with its line. The rule is `ledger::summary`'s.

use std::path::Path;

use serde::Serialize;

use crate::cli::error::CliError;
use crate::cli::output::{Printer, terminal_safe};
use crate::cli::settings::LintSummarySettings;
use crate::exit_codes;
use crate::ledger::Ledger;
use crate::ledger::summary::lint_summary;
use crate::policy::{Config, ConfigError};

/// `{"type":"unbacked-claim"}`: see docs/json-output.md.
#[derive(Serialize)]
struct ClaimLine<'a> {
    file: String,
    line: usize,
    phrase: &'a str,
    sentence: &'a str,
}

/// `{"type":"lint-summary"}`.
#[derive(Serialize)]
struct SummaryLine {
    file: String,
    unbacked: usize,
}

pub(super) fn run(
    settings: &LintSummarySettings,
    repo_root: &Path,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let config = Config::load(repo_root)?;
    let ledger = Ledger::load(&repo_root.join(&config.rerun.ledger))?;
    let text = fs_err::read_to_string(&settings.file).map_err(|source| CliError::Read {
        path: settings.file.clone(),
        source,
    })?;
    let claims = lint_summary(&text, &ledger, &config.triage.summary_phrases).map_err(|error| {
        CliError::Config(ConfigError {
            path: config
                .path
                .clone()
                .unwrap_or_else(|| repo_root.join(crate::policy::config::CONFIG_FILE)),
            line: 1,
            column: 1,
            message: format!("`triage.summary_phrases` cannot be matched: {error}"),
        })
    })?;
    let file = settings.shown.clone();
    for claim in &claims {
        if printer.is_json() {
            printer.json(
                "unbacked-claim",
                &ClaimLine {
                    file: file.clone(),
                    line: claim.line,
                    phrase: &claim.phrase,
                    sentence: &claim.sentence,
                },
            )?;
        } else {
            let phrase = claim
                .phrase
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            printer.line(&format!(
                "{file}:{}: \"{}\" quotes no ledger line: {}",
                claim.line,
                terminal_safe(&phrase),
                terminal_safe(&claim.sentence)
            ))?;
        }
    }
    if printer.is_json() {
        printer.json(
            "lint-summary",
            &SummaryLine {
                file,
                unbacked: claims.len(),
            },
        )?;
    } else if claims.is_empty() {
        printer.info(&format!("{file}: every rerun claim quotes its ledger line"))?;
    } else {
        printer.info(&format!(
            "{} unbacked {}: quote the ledger line of the rerun, verbatim (tabs included), in the sentence that claims it, or take the claim out",
            claims.len(),
            if claims.len() == 1 { "claim" } else { "claims" }
        ))?;
    }
    Ok(if claims.is_empty() {
        exit_codes::OK
    } else {
        exit_codes::NEGATIVE
    })
}
