//! `candor clean`: the workflow is [`crate::app::clean`].

use super::ports;
use crate::cli::error::CliError;
use crate::cli::output::{Printer, human, sink};
use crate::cli::settings::{CleanSettings, Settings};

pub(super) fn run(
    clean: CleanSettings,
    settings: &Settings,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let mut sink = sink(printer, human::Clean);
    let code = crate::app::clean::run(clean, &mut ports(settings, &mut sink));
    sink.finish()?;
    code
}
