//! `candor compare` and `candor repro`: settings in, `app::compare` and `app::repro` with
//! the real ports, the verdict's exit code out.

use super::ports;
use crate::app::History;
use crate::cli::error::CliError;
use crate::cli::output::{Printer, human, sink};
use crate::cli::settings::{CompareSettings, ReproSettings, Settings};
use crate::compare::ReproVerdict;
use crate::exit_codes;
use crate::git::Git;

/// `candor compare`.
pub(super) fn run(
    compare: &CompareSettings,
    settings: &Settings,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let mut history = History::at(settings.db.clone());
    let git = Git::new(&settings.repo_root);
    let mut sink = sink(printer, human::Compare);
    let found =
        crate::app::compare::compare(compare, &mut ports(settings, &mut sink), &git, &mut history);
    sink.finish()?;
    Ok(if found?.verdict.is_negative() {
        exit_codes::NEGATIVE
    } else {
        exit_codes::OK
    })
}

/// `candor repro`.
pub(super) fn repro(
    repro: &ReproSettings,
    settings: &Settings,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let mut history = History::at(settings.db.clone());
    let git = Git::new(&settings.repo_root);
    let mut sink = sink(printer, human::Later);
    let found =
        crate::app::repro::repro(repro, &mut ports(settings, &mut sink), &git, &mut history);
    sink.finish()?;
    let (found, runner) = found?;
    if !printer.is_json() {
        human::repro(printer, &found, runner)?;
    }
    Ok(if found.verdict == ReproVerdict::Confirmed {
        exit_codes::OK
    } else {
        exit_codes::NEGATIVE
    })
}
