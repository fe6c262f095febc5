//! `candor freeze check`: the workflow is [`crate::app::freeze`].

use super::ports;
use crate::cli::error::CliError;
use crate::cli::output::{Printer, human, sink};
use crate::cli::settings::Settings;

pub(super) fn run(settings: &Settings, printer: &mut Printer) -> Result<u8, CliError> {
    let mut sink = sink(printer, human::Freeze);
    let code = crate::app::freeze::run(&mut ports(settings, &mut sink));
    sink.finish()?;
    code
}
