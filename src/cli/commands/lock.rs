//! `candor lock fixtures|cassettes [--check]`: the workflow is [`crate::app::lock`].

use super::ports;
use crate::cli::error::CliError;
use crate::cli::output::{Printer, human, sink};
use crate::cli::settings::{LockSettings, Settings};

pub(super) fn run(
    lock: LockSettings,
    settings: &Settings,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let mut sink = sink(printer, human::Lock);
    let code = crate::app::lock::run(lock, &mut ports(settings, &mut sink));
    sink.finish()?;
    code
}
