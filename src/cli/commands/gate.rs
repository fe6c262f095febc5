//! `candor gate`: settings in, `app::gate` with the real ports (it writes the report and
//! the step summary), the lane's exit code out.

use super::ports;
use crate::app::History;
use crate::cli::error::CliError;
use crate::cli::output::{Printer, human, sink};
use crate::cli::settings::{GateSettings, Settings};
use crate::exit_codes;
use crate::git::Git;

pub(super) fn run(
    gate: &GateSettings,
    settings: &Settings,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let mut history = History::at(settings.db.clone());
    let git = Git::new(&settings.repo_root);
    let mut sink = sink(printer, human::Gate);
    let lane = crate::app::gate::gate(gate, &mut ports(settings, &mut sink), &git, &mut history);
    sink.finish()?;
    Ok(if lane?.verdict.pass {
        exit_codes::OK
    } else {
        exit_codes::NEGATIVE
    })
}
