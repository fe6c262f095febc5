//! `candor lint summary FILE`: every sentence that claims a rerun ("passed on rerun",
//! "known flake", … as `[triage] summary_phrases` says) without quoting a ledger line that
//! records how a rerun ended, named with its line. The rule is `ledger::summary`'s.

use super::{AppError, Ports};
use crate::cli::settings::LintSummarySettings;
use crate::events::{Event, LintSummary, UnbackedClaim};
use crate::exit_codes;
use crate::ledger::Ledger;
use crate::ledger::summary::lint_summary;
use crate::policy::{Config, ConfigError};

/// One `unbacked-claim` event per claim, for people what to do, then `lint-summary`.
pub fn run(settings: &LintSummarySettings, ports: &mut Ports<'_>) -> Result<u8, AppError> {
    let repo_root = ports.root;
    let config = Config::load(repo_root)?;
    let ledger = Ledger::load(&repo_root.join(&config.rerun.ledger))?;
    let text = fs_err::read_to_string(&settings.file).map_err(|source| AppError::Read {
        path: settings.file.clone(),
        source,
    })?;
    let claims = lint_summary(&text, &ledger, &config.triage.summary_phrases).map_err(|error| {
        AppError::Config(ConfigError {
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
        ports.emit(Event::UnbackedClaim(UnbackedClaim {
            file: file.clone(),
            line: claim.line,
            phrase: claim.phrase.clone(),
            sentence: claim.sentence.clone(),
        }));
    }
    if claims.is_empty() {
        ports.tell(format!("{file}: every rerun claim quotes its ledger line"));
    } else {
        ports.tell(format!(
            "{} unbacked {}: quote the ledger line of the rerun, verbatim (tabs included), in the sentence that claims it, or take the claim out",
            claims.len(),
            if claims.len() == 1 { "claim" } else { "claims" }
        ));
    }
    ports.emit(Event::LintSummary(LintSummary {
        file,
        unbacked: claims.len(),
    }));
    Ok(if claims.is_empty() {
        exit_codes::OK
    } else {
        exit_codes::NEGATIVE
    })
}
