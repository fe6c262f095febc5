//! `candor ledger stats`: the workflow is [`crate::app::ledger`].

use super::ports;
use crate::cli::error::CliError;
use crate::cli::output::{Printer, human, sink};
use crate::cli::settings::Settings;

pub(super) fn run(settings: &Settings, printer: &mut Printer) -> Result<u8, CliError> {
    let mut sink = sink(printer, human::Ledger::default());
    let code = crate::app::ledger::run(&mut ports(settings, &mut sink));
    sink.finish()?;
    code
}
